//! Which bins the stacked occupancy bar shows. Every bin's band gets at least half of
//! [`STACKED_PER_BIN`](super::layout::STACKED_PER_BIN) points, so the whole stack is
//! `bins × STACKED_PER_BIN` points tall; where the pane has less room (a quarter of its
//! height), the bar shows a slice of the stack, starting at the `stacked_from` setting's bin,
//! and the user scrolls through the rest (the mouse wheel over the bar in the GUI,
//! `--stacked-from` in `memscape render`, whose picture says which bins it shows).

use memscape_render::alloc_map::BarPart;
use memscape_render::alloc_map::occupancy::{BAR_UNITS, BarBand};

/// The part of the stack the bar shows and where each shown band lies.
#[derive(Debug, Clone, PartialEq)]
pub struct StackedWindow {
    /// What the bar layer draws (the whole stack when it fits).
    pub part: BarPart,
    /// The first bin shown (at the top) and one past the last (partly) shown.
    pub bins: std::ops::Range<usize>,
    /// Bins in the stack.
    pub total: usize,
    /// The largest first bin that moves the bar (from it on, the stack's bottom is at the
    /// bar's bottom).
    pub last_first: usize,
    /// Each shown bin with its band's top and bottom in points from the bar's top (clipped to
    /// the bar).
    pub bands: Vec<(usize, f32, f32)>,
}

impl StackedWindow {
    /// Whether some bins are not shown (the bar scrolls).
    pub fn scrolls(&self) -> bool {
        self.bins.len() < self.total
    }

    /// Which bins are shown, as the picture says it: "bins 3–12 of 40".
    pub fn caption(&self) -> String {
        format!(
            "bins {}–{} of {}",
            self.bins.start + 1,
            self.bins.end,
            self.total
        )
    }
}

/// The window of the stack of `bands` (bin 0 at the top) shown in a bar `height` points tall
/// when the whole stack is `full_height` points tall, from bin `first` (clamped so that the
/// bar is full).
pub fn stacked_window(
    bands: &[BarBand],
    first: usize,
    height: f32,
    full_height: f32,
) -> StackedWindow {
    let total = bands.len();
    let units_per_point = BAR_UNITS as f64 / f64::from(full_height.max(1.0));
    let point = |units: u64| ((BAR_UNITS - units.min(BAR_UNITS)) as f64 / units_per_point) as f32;
    if total == 0 || height >= full_height - 0.5 {
        return StackedWindow {
            part: BarPart::Stack,
            bins: 0..total,
            total,
            last_first: 0,
            bands: bands
                .iter()
                .enumerate()
                .map(|(k, b)| {
                    let scale = height / full_height.max(1.0);
                    (k, point(b.hi) * scale, point(b.lo) * scale)
                })
                .collect(),
        };
    }
    let visible = (f64::from(height) * units_per_point).round() as u64;
    // The window from bin `first` starts at its top, or ends at the stack's bottom where
    // that would leave the bar part empty: from the first bin whose top is that low on, every
    // window is the bottom one.
    let last_first = bands
        .iter()
        .position(|b| b.hi <= visible)
        .unwrap_or(total - 1);
    let first = first.min(last_first);
    let hi = bands[first].hi.max(visible);
    let lo = hi - visible;
    let shown: Vec<usize> = (0..total)
        .filter(|&k| bands[k].lo < hi && bands[k].hi > lo)
        .collect();
    let top = point(hi);
    StackedWindow {
        part: BarPart::Slice(lo, hi),
        bins: shown.first().map_or(first, |&k| k)..shown.last().map_or(first, |&k| k + 1),
        total,
        last_first,
        bands: shown
            .iter()
            .map(|&k| {
                let b = &bands[k];
                (
                    k,
                    (point(b.hi) - top).max(0.0),
                    (point(b.lo) - top).min(height),
                )
            })
            .collect(),
    }
}

/// Smallest band (points) that gets its bin's name beside it.
const LABEL_MIN_BAND: f32 = 9.5;
/// Width of the scroll track right of a scrolling bar (in the free bars' column).
pub const TRACK_WIDTH: f32 = 5.0;

/// The stacked bar's decorations: each shown bin's name beside its band (in `labels`, left of
/// the bar, never over it), thin separators between the bands, and when the bar scrolls a
/// track with a thumb right of the bar (in `track`) and which bins are shown under the names.
pub fn decorate_stacked(
    p: &mut crate::picture::Picture,
    bar: egui::Rect,
    labels: Option<egui::Rect>,
    track: Option<egui::Rect>,
    window: &StackedWindow,
    names: &[String],
) {
    use crate::label::{Label, fit};
    use memscape_render::shapes::{Geometry, Shape};
    let text = egui::Color32::from_gray(205);
    let rect = |r: egui::Rect, fill: [u8; 4]| {
        Shape::new(
            Geometry::Rect {
                min: [r.left(), r.top()],
                max: [r.right(), r.bottom()],
                corner_px: 0.0,
            },
            fill,
        )
    };
    for &(k, top, bottom) in &window.bands {
        if top > 0.5 {
            let y = bar.top() + top;
            p.shapes.push(rect(
                egui::Rect::from_min_max(
                    egui::pos2(bar.left(), y - 0.5),
                    egui::pos2(bar.right(), y + 0.5),
                ),
                [0, 0, 0, 200],
            ));
        }
        let Some(area) = labels else { continue };
        if bottom - top < LABEL_MIN_BAND {
            continue;
        }
        let Some(name) = names.get(k).and_then(|n| fit(n, 9.5, area.width() - 2.0)) else {
            continue;
        };
        p.labels.push(Label::new(
            egui::pos2(area.right(), bar.top() + 0.5 * (top + bottom)),
            name,
            9.5,
            text,
            egui::Align2::RIGHT_CENTER,
        ));
    }
    if !window.scrolls() {
        return;
    }
    // The track: the whole stack; the thumb: the shown part.
    if let Some(track) = track {
        p.shapes.push(rect(track, [60, 60, 66, 255]));
    }
    if let (Some(track), BarPart::Slice(lo, hi)) = (track, &window.part) {
        let (lo, hi) = (*lo, *hi);
        let frac = |u: u64| (BAR_UNITS - u) as f32 / BAR_UNITS as f32;
        let thumb = egui::Rect::from_min_max(
            egui::pos2(track.left(), track.top() + frac(hi) * track.height()),
            egui::pos2(track.right(), track.top() + frac(lo) * track.height()),
        );
        p.shapes.push(rect(thumb, [200, 200, 210, 255]));
    }
    if let Some(area) = labels {
        p.labels.push(Label::new(
            egui::pos2(area.right(), area.bottom()),
            window.caption(),
            9.5,
            egui::Color32::from_rgb(250, 220, 120),
            egui::Align2::RIGHT_BOTTOM,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memscape_render::alloc_map::OccupancySteps;
    use memscape_render::alloc_map::occupancy::BarBlocks;

    fn bands(n: usize) -> Vec<BarBand> {
        // One big bin among small ones, weighted as `BinnedScene::bar_blocks` does.
        let steps: Vec<OccupancySteps> = (0..n)
            .map(|k| OccupancySteps {
                start: 0,
                end: 10,
                capacity: if k == 3 { 1000 } else { 10 },
                ..Default::default()
            })
            .collect();
        let total: f64 = steps.iter().map(|s| s.capacity as f64).sum();
        let weights: Vec<f64> = steps
            .iter()
            .map(|s| 0.5 * s.capacity as f64 / total + 0.5 / n as f64)
            .collect();
        BarBlocks::build(&steps, &weights).bands
    }

    #[test]
    fn a_stack_that_fits_is_drawn_whole() {
        let b = bands(5);
        let w = stacked_window(&b, 3, 60.0, 60.0);
        assert_eq!(w.part, BarPart::Stack);
        assert_eq!(w.bins, 0..5);
        assert!(!w.scrolls());
        assert!((w.bands[0].1).abs() < 1e-3 && (w.bands[4].2 - 60.0).abs() < 1e-3);
    }

    #[test]
    fn a_tall_stack_scrolls_through_every_bin_at_its_full_height() {
        let n = 40;
        let b = bands(n);
        let per_bin = super::super::layout::STACKED_PER_BIN;
        let (height, full) = (150.0, per_bin * n as f32);
        let mut seen = vec![false; n];
        let mut first = 0;
        loop {
            let w = stacked_window(&b, first, height, full);
            assert!(w.scrolls());
            assert!(w.bins.start <= first.min(w.last_first));
            for &(k, top, bottom) in &w.bands {
                assert!((0.0..=height).contains(&top) && bottom <= height && bottom > top);
                // Each band at its height in the whole stack: at least half the minimum, which
                // its name needs beside it.
                let whole = (b[k].hi - b[k].lo) as f32 * full / BAR_UNITS as f32;
                assert!(whole >= 0.5 * per_bin - 1e-3, "bin {k}: {whole}");
                assert!(whole >= LABEL_MIN_BAND, "bin {k}: too thin for its name");
                if top > 0.0 && bottom < height {
                    assert!((bottom - top - whole).abs() < 0.01, "bin {k}");
                }
                seen[k] = true;
            }
            // The shown bands fill the bar.
            assert!(w.bands[0].1 <= 1e-3);
            assert!((w.bands.last().unwrap().2 - height).abs() < 1e-3);
            if first >= w.last_first {
                assert_eq!(w.bins.end, n, "the last window reaches the bottom");
                break;
            }
            first += 1;
        }
        assert!(seen.iter().all(|s| *s), "every bin can be scrolled to");
        assert_eq!(stacked_window(&b, 999, height, full).bins.end, n);
        assert_eq!(
            stacked_window(&b, 0, height, full).caption(),
            format!(
                "bins 1–{} of 40",
                stacked_window(&b, 0, height, full).bins.end
            )
        );
    }
}
