//! Waste and external fragmentation over time under each bin (the `curves` panel): the
//! curves of `memscape_trace::pools` (the same numbers `info --json` reports as `pools` and
//! `bin_curves`) for the shown binning, drawn in a strip under each bin on the map's time
//! axis. Fragmentation is a filled area (0 at the strip's bottom, 1 at its top); waste, as a
//! share of the bin's live bytes, is a line on the same scale.

use memscape_render::shapes::{Geometry, Shape};
use memscape_trace::Trace;
use memscape_trace::pools::GroupCurves;

use super::bins::{BinBy, BinnedScene};
use super::camera::Camera;
use super::scene::TimeAxis;
use crate::label::Label;
use crate::picture::Picture;

/// Points per curve (more than a strip is wide on most screens).
pub const CURVE_SAMPLES: usize = 512;
/// External fragmentation's fill and outline.
pub const FRAGMENTATION_COLOR: [u8; 4] = [0xf5, 0x9e, 0x3b, 255];
/// Waste's line.
pub const WASTE_COLOR: [u8; 4] = [0xc0, 0x7c, 0xf0, 255];

/// The curves of each bin of `binned` (in its order). Sweeps the events once; run it off the
/// UI thread.
pub fn bin_curves(trace: &Trace, binned: &BinnedScene) -> Vec<GroupCurves> {
    use memscape_trace::bins::{Bin, Bins, SizeClasses};
    let n = binned.bins.len();
    let block_bin = if binned.by == BinBy::None {
        vec![0; trace.blocks.len()]
    } else {
        binned.block_bin.to_vec()
    };
    let by = match binned.by {
        BinBy::Pool => memscape_trace::bins::BinBy::Pool,
        BinBy::Process => memscape_trace::bins::BinBy::Process,
        BinBy::Thread => memscape_trace::bins::BinBy::Thread,
        BinBy::Size => memscape_trace::bins::BinBy::SizeClass(SizeClasses::PowerOfTwo),
        BinBy::None | BinBy::Region => memscape_trace::bins::BinBy::Region {
            gap_threshold: memscape_trace::regions::DEFAULT_GAP_THRESHOLD,
        },
    };
    let bins = Bins {
        by,
        bins: binned
            .bins
            .iter()
            .map(|b| Bin {
                label: b.label.clone(),
                blocks: 0,
                bytes_allocated: 0,
                peak_bytes: b.peak_bytes,
                extent_start: 0,
                extent_end: 0,
            })
            .collect(),
        block_bin,
    };
    debug_assert_eq!(bins.bins.len(), n);
    memscape_trace::pools::bin_curves(trace, &bins, CURVE_SAMPLES)
}

fn segment(a: egui::Pos2, b: egui::Pos2, color: [u8; 4], width: f32) -> Shape {
    Shape::new(
        Geometry::Segment {
            a: [a.x, a.y],
            b: [b.x, b.y],
            width_px: width,
        },
        color,
    )
}

fn rect(min: egui::Pos2, max: egui::Pos2, fill: [u8; 4]) -> Shape {
    Shape::new(
        Geometry::Rect {
            min: [min.x, min.y],
            max: [max.x, max.y],
            corner_px: 0.0,
        },
        fill,
    )
}

/// Draws `curves` into `strip` for the camera's time window on `axis`.
pub fn draw(
    p: &mut Picture,
    strip: egui::Rect,
    curves: &GroupCurves,
    cam: &Camera,
    axis: TimeAxis,
) {
    p.shapes.push(rect(strip.min, strip.max, [18, 18, 21, 255]));
    let x_of = |s: &memscape_trace::pools::GroupSample| {
        let t = match axis {
            TimeAxis::Events => s.event as f64,
            TimeAxis::Wall => s.time_ns as f64,
        };
        strip.left() + ((t - cam.t0) / cam.t_span.max(1e-9)) as f32 * strip.width()
    };
    let y_of = |v: f64| strip.bottom() - v.clamp(0.0, 1.0) as f32 * (strip.height() - 1.0);
    let fill = {
        let [r, g, b, _] = FRAGMENTATION_COLOR;
        [r, g, b, 110]
    };
    let samples = &curves.samples;
    // Each sample holds until the next one (step curves), clipped to the strip.
    let mut waste_prev: Option<egui::Pos2> = None;
    for (i, s) in samples.iter().enumerate() {
        let x0 = x_of(s).max(strip.left());
        let x1 = samples
            .get(i + 1)
            .map_or(strip.right(), x_of)
            .min(strip.right());
        if x1 <= strip.left() || x0 >= strip.right() {
            waste_prev = None;
            continue;
        }
        let y = y_of(s.fragmentation);
        if x1 > x0 && s.fragmentation > 0.0 {
            p.shapes.push(rect(
                egui::pos2(x0, y),
                egui::pos2(x1, strip.bottom()),
                fill,
            ));
            p.shapes.push(segment(
                egui::pos2(x0, y),
                egui::pos2(x1, y),
                FRAGMENTATION_COLOR,
                1.2,
            ));
        }
        let share = if s.live_bytes == 0 {
            0.0
        } else {
            s.waste_bytes as f64 / s.live_bytes as f64
        };
        let w = egui::pos2(x0, y_of(share));
        if let Some(prev) = waste_prev {
            p.shapes
                .push(segment(prev, egui::pos2(x0, prev.y), WASTE_COLOR, 1.2));
            p.shapes
                .push(segment(egui::pos2(x0, prev.y), w, WASTE_COLOR, 1.2));
        }
        waste_prev = Some(w);
        if i + 1 == samples.len() {
            p.shapes
                .push(segment(w, egui::pos2(x1, w.y), WASTE_COLOR, 1.2));
        }
    }
    if strip.height() >= 11.0 && strip.width() >= 160.0 {
        let text = format!(
            "frag. ≤ {:.0}% · waste ≤ {}",
            curves.peak_fragmentation * 100.0,
            super::decorate::bytes(curves.peak_waste_bytes)
        );
        let mut shadow = Label::new(
            egui::pos2(strip.right() - 3.0, strip.top() + 1.0),
            text,
            9.0,
            egui::Color32::from_white_alpha(210),
            egui::Align2::RIGHT_TOP,
        );
        let label = shadow.clone();
        shadow.pos += egui::vec2(1.0, 1.0);
        shadow.color = egui::Color32::from_black_alpha(220);
        p.labels.push(shadow);
        p.labels.push(label);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memscape_trace::pools::GroupSample;

    fn sample(event: u64, fragmentation: f64) -> GroupSample {
        GroupSample {
            event,
            time_ns: event * 10,
            live_blocks: 1,
            live_bytes: 100,
            occupancy: 0.5,
            waste_bytes: 10,
            free_bytes: 100,
            largest_free_gap: 50,
            fragmentation,
        }
    }

    /// A fragmentation of one half fills the strip to its middle over the sample's interval.
    #[test]
    fn fragmentation_fills_the_strip_to_its_value() {
        let curves = GroupCurves {
            span: (0, 200),
            blocks: 1,
            peak_live_bytes: 100,
            peak_occupancy: 0.5,
            peak_waste_bytes: 10,
            peak_fragmentation: 0.5,
            samples: vec![sample(0, 0.0), sample(50, 0.5), sample(75, 0.0)],
        };
        let strip = egui::Rect::from_min_size(egui::pos2(0.0, 100.0), egui::vec2(100.0, 21.0));
        let cam = Camera::fit(100);
        let mut p = Picture::new(egui::vec2(100.0, 121.0), [0, 0, 0, 255]);
        draw(&mut p, strip, &curves, &cam, TimeAxis::Events);
        let filled: Vec<[f32; 4]> = p
            .shapes
            .iter()
            .filter_map(|s| match s.geometry {
                Geometry::Rect { min, max, .. } if s.fill[3] == 110 => {
                    Some([min[0], min[1], max[0], max[1]])
                }
                _ => None,
            })
            .collect();
        assert_eq!(filled.len(), 1, "{filled:?}");
        let [x0, y0, x1, y1] = filled[0];
        assert!(
            (x0 - 50.0).abs() < 0.6 && (x1 - 75.0).abs() < 0.6,
            "{filled:?}"
        );
        assert!(
            (y0 - 111.0).abs() < 0.6 && (y1 - 121.0).abs() < 1e-3,
            "{filled:?}"
        );
    }
}
