//! Where the allocation map looks and how its cells lie: conversions between the time axes and
//! event counts, the camera (a window over the time × address plane shared by every bin) with
//! its zoom, pan and animation, the grid of bin cells, and the selection bits of a highlight.

use memscape_render::alloc_map::SelectionBits;

use super::bins::BinnedScene;
use super::scene::TimeAxis;
pub use crate::picture::MapWindow;

/// Events applied at time `t` of `axis` (for the wall axis: up to the last allocation at or
/// before `t`).
pub fn events_at(trace: &memscape_trace::Trace, axis: TimeAxis, t: u64) -> u64 {
    match axis {
        TimeAxis::Events => t.min(trace.meta.events),
        TimeAxis::Wall => {
            let b = &trace.blocks;
            let i = b.alloc_time_ns.partition_point(|&a| a <= t);
            if i == 0 {
                0
            } else {
                b.alloc_event.get(i - 1).map_or(0, |e| e + 1)
            }
        }
    }
}

/// The inverse of [`events_at`]: where `events` lies on `axis`.
pub fn axis_time_of_events(trace: &memscape_trace::Trace, axis: TimeAxis, events: u64) -> u64 {
    match axis {
        TimeAxis::Events => events,
        TimeAxis::Wall => {
            let b = &trace.blocks;
            let i = b.alloc_event.partition_point(|&e| e < events);
            b.alloc_time_ns
                .get(i.min(b.alloc_time_ns.len().saturating_sub(1)))
                .copied()
                .unwrap_or(0)
        }
    }
}

/// The part of the plane on screen (see [`MapWindow`]): what the pane zooms, pans and animates.
pub type Camera = MapWindow;

/// Smallest spans: a hundredth of a time unit, and 1e-12 of an axis (a byte of a 1 TiB axis).
const MIN_T_SPAN: f64 = 1e-2;
const MIN_Y_SPAN: f64 = 1e-12;

impl MapWindow {
    /// The whole trace over every used byte.
    pub fn fit(t_extent: u64) -> Self {
        Self {
            t0: 0.0,
            t_span: t_extent.max(1) as f64,
            y0: 0.0,
            y_span: 1.0,
        }
    }

    /// Time and fraction at a point `(u, v)` of a cell, `u` from its left and `v` from its
    /// bottom, both in [0, 1].
    pub fn at(&self, u: f64, v: f64) -> (f64, f64) {
        (self.t0 + u * self.t_span, self.y0 + v * self.y_span)
    }

    /// Zooms by `factor` (< 1: in) about the cell point `(u, v)`, time and/or addresses.
    pub fn zoom(&mut self, factor_t: f64, factor_y: f64, u: f64, v: f64) {
        let (t, y) = self.at(u, v);
        self.t_span = (self.t_span * factor_t).max(MIN_T_SPAN);
        self.y_span = (self.y_span * factor_y).max(MIN_Y_SPAN);
        self.t0 = t - u * self.t_span;
        self.y0 = y - v * self.y_span;
    }

    /// Moves by fractions of the view (positive: later times, higher addresses).
    pub fn pan(&mut self, du: f64, dv: f64) {
        self.t0 += du * self.t_span;
        self.y0 += dv * self.y_span;
    }

    /// One step of an animated transition towards `target`: spans move geometrically (a zoom
    /// looks uniform), origins linearly, by `k` in (0, 1] of the way. Returns true when close
    /// enough to snap.
    pub fn approach(&mut self, target: &Camera, k: f64) -> bool {
        let k = k.clamp(0.0, 1.0);
        let geo = |a: f64, b: f64| (a.ln() + (b.ln() - a.ln()) * k).exp();
        // Interpolate the centres so that a pure zoom stays centred where it is going.
        let c = |o: f64, s: f64| o + 0.5 * s;
        let (tc, yc) = (c(self.t0, self.t_span), c(self.y0, self.y_span));
        let (ttc, tyc) = (c(target.t0, target.t_span), c(target.y0, target.y_span));
        self.t_span = geo(self.t_span, target.t_span);
        self.y_span = geo(self.y_span, target.y_span);
        let tc = tc + (ttc - tc) * k;
        let yc = yc + (tyc - yc) * k;
        self.t0 = tc - 0.5 * self.t_span;
        self.y0 = yc - 0.5 * self.y_span;
        let close = (self.t0 - target.t0).abs() < 0.25e-3 * target.t_span
            && (self.y0 - target.y0).abs() < 0.25e-3 * target.y_span
            && (self.t_span / target.t_span - 1.0).abs() < 1e-3
            && (self.y_span / target.y_span - 1.0).abs() < 1e-3;
        if close {
            *self = *target;
        }
        close
    }

    /// The window showing `[t0, t1) × [a0, a1)` (collapsed bytes of an `extent`-byte axis).
    pub fn of_ranges(t0: u64, t1: u64, a0: u64, a1: u64, extent: u64) -> Self {
        let e = extent.max(1) as f64;
        Self {
            t0: t0 as f64,
            t_span: (t1.saturating_sub(t0)).max(1) as f64,
            y0: a0 as f64 / e,
            y_span: (a1.saturating_sub(a0)).max(1) as f64 / e,
        }
    }
}

/// How bin cells are arranged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum BinLayout {
    /// Side by side in a grid, each bin's own address axis scaled to the cell's full height:
    /// cells align along the address axis and relative occupancy compares. Process bins: cells
    /// sized by heap peak, each over its own process's life.
    #[default]
    Address,
    /// Stacked in one column sharing the time axis: activity at one time compares, and cushion
    /// cursors run through every bin.
    Time,
}

/// Gap between cells in points.
pub const CELL_GAP: f32 = 4.0;

/// The cells of `n` bins inside `area` (x right, y down, any unit).
pub fn cell_rects(area: egui::Rect, n: usize, layout: BinLayout) -> Vec<egui::Rect> {
    let n = n.max(1);
    let (cols, rows) = match layout {
        _ if n == 1 => (1, 1),
        BinLayout::Time => (1, n),
        BinLayout::Address => {
            // Columns at least ~90 points wide; rows as needed.
            let max_cols = ((area.width() / 90.0).floor() as usize).max(1);
            let rows = n.div_ceil(max_cols);
            // As many cells in each row as the rows allow (balanced rows).
            let cols = n.div_ceil(rows);
            (cols, rows)
        }
    };
    let w = ((area.width() - CELL_GAP * (cols - 1) as f32) / cols as f32).max(1.0);
    let h = ((area.height() - CELL_GAP * (rows - 1) as f32) / rows as f32).max(1.0);
    (0..n)
        .map(|k| {
            let (c, r) = (k % cols, k / cols);
            egui::Rect::from_min_size(
                egui::pos2(
                    area.left() + c as f32 * (w + CELL_GAP),
                    area.top() + r as f32 * (h + CELL_GAP),
                ),
                egui::vec2(w, h),
            )
        })
        .collect()
}

/// The cells of bins of the given weights inside `area`, each of an area proportional to its
/// weight (a squarified treemap, Bruls et al. 2000: rows of cells kept near square), in the
/// weights' order, which should be the largest first. The process grid: one large compiler or
/// interpreter among dozens of shell and shim processes gets most of the pane. Weights are
/// floored at a quarter of an equal share (every cell stays findable); a gap of [`CELL_GAP`]
/// between cells.
pub fn weighted_cell_rects(area: egui::Rect, weights: &[f64]) -> Vec<egui::Rect> {
    let n = weights.len();
    if n <= 1 {
        return vec![area; n.max(1)];
    }
    let clean: Vec<f64> = weights
        .iter()
        .map(|&w| if w.is_finite() && w > 0.0 { w } else { 0.0 })
        .collect();
    let total: f64 = clean.iter().sum();
    let floor = if total > 0.0 {
        0.25 * total / n as f64
    } else {
        1.0
    };
    let w: Vec<f64> = clean.iter().map(|&x| x.max(floor)).collect();
    let sum: f64 = w.iter().sum();
    let scale = f64::from(area.width()) * f64::from(area.height()) / sum;
    let areas: Vec<f64> = w.iter().map(|&x| x * scale).collect();
    // The rectangle still free, as (x, y, width, height) in f64.
    let mut free = (
        f64::from(area.left()),
        f64::from(area.top()),
        f64::from(area.width()),
        f64::from(area.height()),
    );
    let mut out = vec![egui::Rect::NOTHING; n];
    // The worst aspect ratio of a row of cells of `row_sum` total along a side of `side`.
    let worst = |row_sum: f64, min: f64, max: f64, side: f64| {
        let s2 = side * side;
        let r2 = row_sum * row_sum;
        (s2 * max / r2).max(r2 / (s2 * min))
    };
    let mut start = 0;
    while start < n {
        let side = free.2.min(free.3).max(1e-9);
        // Grow the row while its worst aspect ratio improves.
        let (mut end, mut row_sum) = (start + 1, areas[start]);
        let (mut min, mut max) = (areas[start], areas[start]);
        while end < n {
            let a = areas[end];
            let next = worst(row_sum + a, min.min(a), max.max(a), side);
            if next > worst(row_sum, min, max, side) {
                break;
            }
            row_sum += a;
            min = min.min(a);
            max = max.max(a);
            end += 1;
        }
        // The last row takes all that is left (no sliver lost to rounding).
        let rest: f64 = areas[start..end].iter().sum::<f64>().max(1e-9);
        if free.2 >= free.3 {
            // A column at the left, cells stacked top to bottom.
            let width = if end == n { free.2 } else { row_sum / free.3 };
            let mut y = free.1;
            for k in start..end {
                let h = free.3 * areas[k] / rest;
                out[k] = rect_with_gap(free.0, y, width, h);
                y += h;
            }
            free = (free.0 + width, free.1, free.2 - width, free.3);
        } else {
            // A row at the top, cells left to right.
            let height = if end == n { free.3 } else { row_sum / free.2 };
            let mut x = free.0;
            for k in start..end {
                let wk = free.2 * areas[k] / rest;
                out[k] = rect_with_gap(x, free.1, wk, height);
                x += wk;
            }
            free = (free.0, free.1 + height, free.2, free.3 - height);
        }
        start = end;
    }
    out
}

/// The cell `(x, y, w, h)` less half a [`CELL_GAP`] on each side (at least 1 point).
fn rect_with_gap(x: f64, y: f64, w: f64, h: f64) -> egui::Rect {
    let g = f64::from(CELL_GAP) / 2.0;
    let (w2, h2) = ((w - 2.0 * g).max(1.0), (h - 2.0 * g).max(1.0));
    egui::Rect::from_min_size(
        egui::pos2((x + g) as f32, (y + g) as f32),
        egui::vec2(w2 as f32, h2 as f32),
    )
}

/// The upload positions of a highlight (sorted trace block indices) as selection bits.
pub fn selection_bits(binned: &BinnedScene, highlight: &[u32]) -> SelectionBits {
    SelectionBits::from_indices(
        binned.blocks.len(),
        highlight
            .iter()
            .filter_map(|&i| binned.position_of(i as usize)),
    )
}

/// A tick step of 1, 2 or 5 times a power of ten near `raw`.
pub fn nice_step(raw: f64) -> f64 {
    let raw = raw.max(1e-9);
    let p = 10f64.powf(raw.log10().floor());
    let m = raw / p;
    p * if m < 1.5 {
        1.0
    } else if m < 3.5 {
        2.0
    } else if m < 7.5 {
        5.0
    } else {
        10.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_data::demo;

    #[test]
    fn wall_time_and_events_convert_both_ways() {
        let d = demo();
        let t = d.alloc_trace().unwrap();
        let b = &t.trace.blocks;
        for i in [0usize, 10, b.len() / 2, b.len() - 1] {
            let wall = b.alloc_time_ns[i];
            let events = events_at(&t.trace, TimeAxis::Wall, wall);
            // Right after this block's allocation (or a later one at the same nanosecond).
            assert!(events > b.alloc_event[i], "block {i}");
            let back = axis_time_of_events(&t.trace, TimeAxis::Wall, events);
            assert!(back >= wall, "block {i}: {back} < {wall}");
            assert_eq!(events_at(&t.trace, TimeAxis::Events, 123), 123);
        }
    }

    #[test]
    fn highlight_bits_follow_the_bin_order() {
        let d = demo();
        let t = d.alloc_trace().unwrap();
        let scene = t.scene.as_ref().unwrap();
        let binned = super::super::bins::BinnedScene::build(
            &t.trace,
            scene,
            super::super::bins::BinBy::Size,
        );
        let chosen = [3u32, 7, 11, 500];
        let bits = selection_bits(&binned, &chosen);
        let mut set = 0;
        for p in 0..binned.blocks.len() {
            let i = binned.block_at(p).unwrap() as u32;
            assert_eq!(bits.get(p), chosen.contains(&i), "position {p} (block {i})");
            set += usize::from(bits.get(p));
        }
        assert_eq!(set, chosen.len());
    }

    #[test]
    fn camera_zoom_keeps_the_point_under_the_cursor() {
        let mut c = Camera::fit(1000);
        let before = c.at(0.25, 0.75);
        c.zoom(0.5, 0.1, 0.25, 0.75);
        let after = c.at(0.25, 0.75);
        assert!((before.0 - after.0).abs() < 1e-9 && (before.1 - after.1).abs() < 1e-12);
        assert!((c.t_span - 500.0).abs() < 1e-9 && (c.y_span - 0.1).abs() < 1e-12);
        // The view maps the window's corners onto the cell's.
        let v = c.view(4096, [200.0, 100.0]);
        assert!((f64::from(v.pixels_per_time) * c.t_span - 200.0).abs() < 1e-3);
        assert!((f64::from(v.pixels_per_byte) * c.y_span * 4096.0 - 100.0).abs() < 1e-3);
    }

    #[test]
    fn animation_converges_and_snaps() {
        let mut c = Camera::fit(1_000_000);
        let target = Camera::of_ranges(400_000, 400_100, 10, 20, 1 << 20);
        let mut steps = 0;
        while !c.approach(&target, 0.25) {
            steps += 1;
            assert!(steps < 200, "no convergence: {c:?}");
            assert!(c.t_span >= target.t_span * 0.999 && c.y_span >= target.y_span * 0.999);
        }
        assert_eq!(c, target);
        assert!(steps > 5, "a transition takes several frames ({steps})");
    }

    #[test]
    fn weighted_cells_tile_the_area_by_weight_without_overlap() {
        let area = egui::Rect::from_min_size(egui::pos2(10.0, 20.0), egui::vec2(900.0, 500.0));
        // One compiler among many shell processes; equal weights; one weight only.
        let mut shells = vec![1000.0];
        shells.extend(std::iter::repeat_n(1.0, 60));
        for weights in [shells, vec![3.0, 2.0, 1.0], vec![5.0; 7], vec![0.0, 0.0]] {
            let cells = weighted_cell_rects(area, &weights);
            assert_eq!(cells.len(), weights.len());
            for (i, a) in cells.iter().enumerate() {
                assert!(area.contains_rect(*a), "{weights:?}: {a:?}");
                assert!(a.width() >= 1.0 && a.height() >= 1.0);
                for b in &cells[..i] {
                    assert!(a.intersect(*b).area() <= 0.0, "{weights:?}: overlap");
                }
            }
            // Areas (with the gaps added back) proportional to the floored weights.
            let g = CELL_GAP;
            let with_gap = |r: &egui::Rect| (r.width() + g) * (r.height() + g);
            let total: f32 = cells.iter().map(with_gap).sum();
            assert!((total - area.area()).abs() < 1.0, "{weights:?}: {total}");
            let sum: f64 = weights.iter().sum();
            let floor = if sum > 0.0 {
                0.25 * sum / weights.len() as f64
            } else {
                1.0
            };
            let w: Vec<f64> = weights.iter().map(|&x| x.max(floor)).collect();
            let wsum: f64 = w.iter().sum();
            for (r, &x) in cells.iter().zip(&w) {
                let want = x / wsum * f64::from(area.area());
                let got = f64::from(with_gap(r));
                assert!(
                    (got - want).abs() <= 1e-3 * want + 1.0,
                    "{weights:?}: {got} vs {want}"
                );
            }
        }
        // The largest first gets the largest cell, near square.
        let cells = weighted_cell_rects(area, &[8.0, 1.0, 1.0]);
        let big = cells[0];
        assert!(big.area() > 0.7 * area.area());
        assert!(big.width() / big.height() < 2.5 && big.height() / big.width() < 2.5);
    }

    #[test]
    fn cells_tile_the_area_without_overlap() {
        let area = egui::Rect::from_min_size(egui::pos2(10.0, 20.0), egui::vec2(800.0, 600.0));
        for layout in [BinLayout::Address, BinLayout::Time] {
            for n in [1usize, 2, 5, 13, 40] {
                let cells = cell_rects(area, n, layout);
                assert_eq!(cells.len(), n);
                for (i, a) in cells.iter().enumerate() {
                    assert!(area.expand(0.01).contains_rect(*a), "{layout:?} {n}: {a:?}");
                    for b in &cells[..i] {
                        assert!(a.intersect(*b).area() <= 0.0, "{layout:?} {n} overlap");
                    }
                }
                if layout == BinLayout::Time {
                    assert!(cells.iter().all(|c| c.width() == area.width()));
                } else {
                    let h = cells[0].height();
                    assert!(cells.iter().all(|c| (c.height() - h).abs() < 1e-3));
                }
            }
        }
    }
}
