//! Parallel histograms (one vertical histogram per attribute side by side), the single-attribute
//! histogram, the window-score strips and cluster markers along an axis, the cluster glyph (a
//! small radial topology) and the selection panel, as pictures: the GUI and `memscape render`
//! draw the same ones.
//!
//! Every histogram is drawn in an *axis frame*: positions `along` the attribute's axis (0 at
//! the lowest value or first category) and `across` it (bars on the positive side, the strip
//! and the cluster markers on the negative side). The parallel view's axes point up with bars
//! to the right; the single histogram's axis points right with bars going up.

use egui::{Align2, Color32, Pos2, Rect, Vec2};
use memscape_render::color::blue_red_srgb8 as ramp;
use memscape_render::shapes::{Geometry, Shape};
use memscape_samples::linked::short;
use memscape_samples::metrics::WindowScore;
use memscape_samples::{AttrKind, AxisBrush, AxisIndex, Brush, SelectionSummary};
use memscape_topology::Topology;

use super::topology_draw::{Measure, NodeValues, radial};
use crate::label::{self as labels, Label};
use crate::picture::{Picture, si};

pub const BACKGROUND: [u8; 4] = [18, 20, 26, 255];
/// Bars of the whole data.
pub const WHOLE: [u8; 4] = [86, 92, 108, 255];
/// Bars of the selected subset, drawn over the whole.
pub const SELECTED: [u8; 4] = [243, 168, 58, 255];
const AXIS: [u8; 4] = [176, 180, 192, 255];
const BRUSH_FILL: [u8; 4] = [255, 255, 255, 34];
const BRUSH_BORDER: [u8; 4] = [255, 255, 255, 190];
const NO_SCORE: [u8; 4] = [44, 47, 56, 255];
const TEXT: Color32 = Color32::from_rgb(226, 228, 234);
/// Text over the bright selected bars.
const INK: Color32 = Color32::from_rgb(24, 22, 20);
const DIM: Color32 = Color32::from_rgb(150, 154, 166);

/// Bar lengths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Scale {
    #[default]
    Linear,
    /// ln(1 + count): small bins stay visible beside a dominant one.
    Log,
}

impl Scale {
    fn of(self, count: u64) -> f32 {
        match self {
            Scale::Linear => count as f32,
            Scale::Log => (count as f32).ln_1p(),
        }
    }
}

/// One cluster of a tree cut, as a marker.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterMark {
    /// Attribute values of its first and last sample.
    pub range: [f64; 2],
    pub samples: u64,
    pub metric: f64,
}

/// What one axis shows.
pub struct AxisInput<'a> {
    /// Index of the axis in the dataset's `LinkedIndex`.
    pub index: usize,
    pub axis: &'a AxisIndex,
    /// Selected samples per bin; None when everything is selected (no overlay).
    pub selected: Option<&'a [u64]>,
    pub brush: Option<&'a AxisBrush>,
    /// Window scores (the coloured strip).
    pub strip: Option<&'a [WindowScore]>,
    pub markers: Option<&'a [ClusterMark]>,
    pub hovered_marker: Option<usize>,
}

/// Where an axis landed, for hit testing (brushing) in the GUI.
#[derive(Debug, Clone)]
pub struct AxisGeom {
    pub axis: usize,
    /// The axis' whole column (parallel) or plot (single), for picking the axis.
    pub area: Rect,
    origin: Pos2,
    along: Vec2,
    across: Vec2,
    pub length: f32,
    kind: AttrKind,
    lo: f64,
    hi: f64,
    bins: usize,
    /// Bins drawn in reverse (the parallel view's qualitative axes list their first value at
    /// the top, in reading order).
    flip: bool,
}

impl AxisGeom {
    fn pt(&self, a: f32, c: f32) -> Pos2 {
        self.origin + self.along * a + self.across * c
    }

    fn rect(&self, a0: f32, a1: f32, c0: f32, c1: f32) -> Rect {
        Rect::from_two_pos(self.pt(a0, c0), self.pt(a1, c1))
    }

    /// Position of `p` along the axis, clamped to it.
    pub fn along_of(&self, p: Pos2) -> f32 {
        (p - self.origin).dot(self.along).clamp(0.0, self.length)
    }

    /// Position along the axis of a value (quantitative axes).
    pub fn along_of_value(&self, v: f64) -> f32 {
        if self.hi > self.lo {
            (((v - self.lo) / (self.hi - self.lo)) as f32 * self.length).clamp(0.0, self.length)
        } else {
            0.0
        }
    }

    fn value_at(&self, along: f32) -> f64 {
        self.lo + (self.hi - self.lo) * f64::from(along / self.length.max(1e-6))
    }

    fn bin_span(&self, b: usize) -> (f32, f32) {
        let step = self.length / self.bins.max(1) as f32;
        let slot = if self.flip {
            self.bins.saturating_sub(1).saturating_sub(b)
        } else {
            b
        };
        (slot as f32 * step, (slot + 1) as f32 * step)
    }

    fn bin_at(&self, along: f32) -> usize {
        let last = self.bins.saturating_sub(1);
        let slot = ((along / self.length.max(1e-6) * self.bins as f32) as usize).min(last);
        if self.flip { last - slot } else { slot }
    }

    /// The brush a drag from `a0` to `a1` (positions along the axis) makes: the value range on
    /// a quantitative axis, the bins touched on a qualitative one.
    pub fn brush_between(&self, a0: f32, a1: f32) -> Brush {
        let (a0, a1) = (a0.min(a1), a0.max(a1));
        match self.kind {
            AttrKind::Quantitative => Brush::Range {
                lo: self.value_at(a0),
                hi: self.value_at(a1),
            },
            AttrKind::Qualitative => {
                let (b0, b1) = (self.bin_at(a0), self.bin_at(a1));
                Brush::Bins((b0.min(b1)..=b0.max(b1)).map(|b| b as u32).collect())
            }
        }
    }

    /// What lies at `p` (tooltip text): the bin and its counts.
    pub fn describe_at(&self, p: Pos2, axis: &AxisIndex, selected: Option<&[u64]>) -> String {
        let b = match self.kind {
            AttrKind::Quantitative => {
                let v = self.value_at(self.along_of(p));
                axis.bins
                    .iter()
                    .position(|bin| v < bin.hi)
                    .unwrap_or(axis.bins.len().saturating_sub(1))
            }
            AttrKind::Qualitative => self.bin_at(self.along_of(p)),
        };
        let Some(bin) = axis.bins.get(b) else {
            return axis.attribute.clone();
        };
        let what = match (&bin.label, self.kind) {
            (Some(l), AttrKind::Qualitative) => l.clone(),
            _ => format!("[{}, {})", short(bin.lo), short(bin.hi)),
        };
        let sel = selected
            .and_then(|s| s.get(b))
            .map(|s| format!(" · {s} selected"))
            .unwrap_or_default();
        format!("{} {what}: {} samples{sel}", axis.attribute, bin.count)
    }
}

/// A drawn cluster marker (for hover and click).
#[derive(Debug, Clone, Copy)]
pub struct MarkerGeom {
    pub axis: usize,
    pub cluster: usize,
    pub center: Pos2,
    pub radius: f32,
}

#[derive(Default)]
pub struct Drawn {
    pub picture: Picture,
    pub axes: Vec<AxisGeom>,
    pub markers: Vec<MarkerGeom>,
}

impl Drawn {
    /// The marker under `p`, if any (the nearest within its radius + 3 px).
    pub fn marker_at(&self, p: Pos2) -> Option<MarkerGeom> {
        self.markers
            .iter()
            .filter(|m| (m.center - p).length() <= m.radius + 3.0)
            .min_by(|a, b| (a.center - p).length().total_cmp(&(b.center - p).length()))
            .copied()
    }

    /// The axis whose area holds `p`.
    pub fn axis_at(&self, p: Pos2) -> Option<&AxisGeom> {
        self.axes.iter().find(|g| g.area.contains(p))
    }
}

fn rect_shape(r: Rect, fill: [u8; 4]) -> Shape {
    Shape::new(
        Geometry::Rect {
            min: [r.min.x, r.min.y],
            max: [r.max.x, r.max.y],
            corner_px: 0.0,
        },
        fill,
    )
}

/// Colour of `v` within `[lo, hi]` on the blue–red ramp.
fn ramp_in(v: f64, lo: f64, hi: f64) -> [u8; 4] {
    if hi > lo {
        ramp(((v - lo) / (hi - lo)) as f32)
    } else {
        ramp(0.5)
    }
}

/// Layout of one axis frame.
struct Frame {
    origin: Pos2,
    along: Vec2,
    across: Vec2,
    length: f32,
    /// Room for the bars (across, positive side).
    room: f32,
    /// Qualitative bins in reverse order (first value at the far end).
    flip_qualitative: bool,
}

const STRIP: (f32, f32) = (-13.0, -4.0);
const MARKER_AT: f32 = -24.0;

/// Bins merged so that each drawn bar is at least 2 px thick.
fn groups(bins: usize, length: f32) -> usize {
    let max_bars = (length / 2.0).floor().max(1.0) as usize;
    bins.div_ceil(max_bars).max(1)
}

fn draw_axis(
    pic: &mut Picture,
    f: &Frame,
    input: &AxisInput<'_>,
    scale: Scale,
) -> (AxisGeom, Vec<MarkerGeom>) {
    let axis = input.axis;
    let (lo, hi) = axis.value_range().unwrap_or((0.0, 1.0));
    let geom = AxisGeom {
        axis: input.index,
        area: Rect::NOTHING,
        origin: f.origin,
        along: f.along,
        across: f.across,
        length: f.length,
        kind: axis.kind,
        lo,
        hi,
        bins: axis.bins.len(),
        flip: f.flip_qualitative && axis.kind == AttrKind::Qualitative,
    };
    // Bars: bins merged into groups of `g` when they would be thinner than 2 px.
    let g = groups(axis.bins.len(), f.length);
    let n_groups = axis.bins.len().div_ceil(g);
    let sum = |v: &mut dyn Iterator<Item = u64>| v.sum::<u64>();
    let whole: Vec<u64> = (0..n_groups)
        .map(|k| {
            sum(&mut axis.bins[k * g..((k + 1) * g).min(axis.bins.len())]
                .iter()
                .map(|b| b.count))
        })
        .collect();
    let selected: Option<Vec<u64>> = input.selected.map(|s| {
        (0..n_groups)
            .map(|k| {
                sum(&mut s[(k * g).min(s.len())..((k + 1) * g).min(s.len())]
                    .iter()
                    .copied())
            })
            .collect()
    });
    let max = whole.iter().copied().max().unwrap_or(0).max(1);
    let len = |c: u64| {
        if c == 0 {
            0.0
        } else {
            (f.room * scale.of(c) / scale.of(max)).max(1.0)
        }
    };
    let group_span = |k: usize| {
        let first = geom.bin_span(k * g);
        let last = geom.bin_span(((k + 1) * g).min(axis.bins.len()) - 1);
        (first.0.min(last.0), first.1.max(last.1))
    };
    // The brushed part of the axis, under the bars.
    if let Some(brush) = input.brush {
        let spans: Vec<(f32, f32)> = match &brush.brush {
            Brush::Range { lo: b0, hi: b1 } => {
                vec![(
                    geom.along_of_value(*b0),
                    geom.along_of_value(*b1).max(geom.along_of_value(*b0) + 1.0),
                )]
            }
            Brush::Bins(_) => {
                // Contiguous runs of covered groups.
                let mut spans: Vec<(f32, f32)> = (0..n_groups)
                    .filter(|&k| {
                        (k * g..((k + 1) * g).min(axis.bins.len()))
                            .any(|b| brush.covers_bin(axis, b))
                    })
                    .map(group_span)
                    .collect();
                spans.sort_by(|a, b| a.0.total_cmp(&b.0));
                let mut out: Vec<(f32, f32)> = Vec::new();
                for (a0, a1) in spans {
                    match out.last_mut() {
                        Some(last) if a0 - last.1 < 0.01 => last.1 = last.1.max(a1),
                        _ => out.push((a0, a1)),
                    }
                }
                out
            }
        };
        for (a0, a1) in spans {
            let r = geom.rect(a0, a1, -3.0, f.room + 3.0);
            pic.shapes.push(
                Shape::new(
                    Geometry::Rect {
                        min: [r.min.x, r.min.y],
                        max: [r.max.x, r.max.y],
                        corner_px: 2.0,
                    },
                    BRUSH_FILL,
                )
                .with_border(BRUSH_BORDER, 1.0),
            );
        }
    }
    for (k, &count) in whole.iter().enumerate().take(n_groups) {
        let (a0, a1) = group_span(k);
        let gap = if a1 - a0 > 5.0 { 1.0 } else { 0.0 };
        let w = len(count);
        if w > 0.0 {
            pic.shapes.push(rect_shape(
                geom.rect(a0 + gap, a1 - gap, 1.5, 1.5 + w),
                WHOLE,
            ));
        }
        if let Some(s) = &selected {
            let w = len(s.get(k).copied().unwrap_or(0));
            if w > 0.0 {
                pic.shapes.push(rect_shape(
                    geom.rect(a0 + gap, a1 - gap, 1.5, 1.5 + w),
                    SELECTED,
                ));
            }
        }
    }
    // The axis line.
    let (a, b) = (geom.pt(0.0, 0.0), geom.pt(f.length, 0.0));
    pic.shapes.push(Shape::new(
        Geometry::Segment {
            a: [a.x, a.y],
            b: [b.x, b.y],
            width_px: 1.5,
        },
        AXIS,
    ));
    // The window-score strip.
    if let Some(strip) = input.strip {
        let defined = strip.iter().filter_map(|w| w.metric);
        let (s_lo, s_hi) = defined.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
        let n = strip.len();
        for (k, w) in strip.iter().enumerate() {
            let (a0, a1) = match axis.kind {
                AttrKind::Quantitative => (
                    geom.along_of_value(w.range[0]),
                    geom.along_of_value(w.range[1]),
                ),
                // One window per value, in the bins' places.
                AttrKind::Qualitative if n == axis.bins.len() => geom.bin_span(k),
                AttrKind::Qualitative => {
                    let step = f.length / n.max(1) as f32;
                    (k as f32 * step, (k + 1) as f32 * step)
                }
            };
            let fill = match w.metric {
                Some(v) if w.samples > 0 => ramp_in(v, s_lo, s_hi),
                _ => NO_SCORE,
            };
            pic.shapes.push(rect_shape(
                geom.rect(a0, a1.max(a0 + 0.5), STRIP.0, STRIP.1),
                fill,
            ));
        }
    }
    // Cluster markers: a bracket over the cluster's range and a disc at its middle.
    let mut markers = Vec::new();
    if let (Some(marks), AttrKind::Quantitative) = (input.markers, axis.kind) {
        let (m_lo, m_hi) = marks
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), m| {
                (a.min(m.metric), b.max(m.metric))
            });
        for (k, m) in marks.iter().enumerate() {
            let fill = ramp_in(m.metric, m_lo, m_hi);
            let (a0, a1) = (
                geom.along_of_value(m.range[0]),
                geom.along_of_value(m.range[1]),
            );
            let (p0, p1) = (geom.pt(a0, MARKER_AT), geom.pt(a1, MARKER_AT));
            pic.shapes.push(Shape::new(
                Geometry::Segment {
                    a: [p0.x, p0.y],
                    b: [p1.x, p1.y],
                    width_px: 2.0,
                },
                [fill[0], fill[1], fill[2], 150],
            ));
            let hovered = input.hovered_marker == Some(k);
            let center = geom.pt(0.5 * (a0 + a1), MARKER_AT);
            let radius = if hovered { 7.5 } else { 5.5 };
            pic.shapes.push(
                Shape::new(
                    Geometry::Disc {
                        center: [center.x, center.y],
                        radius,
                    },
                    fill,
                )
                .with_border(
                    if hovered {
                        [255, 255, 255, 255]
                    } else {
                        BACKGROUND
                    },
                    if hovered { 2.0 } else { 1.5 },
                ),
            );
            markers.push(MarkerGeom {
                axis: input.index,
                cluster: k,
                center,
                radius,
            });
        }
    }
    (geom, markers)
}

/// An axis value that fits a column: below 10,000 as written ([`short`]: `1284`, `0.25`),
/// larger in three significant digits with an SI prefix ([`crate::ramp::short`]: `261k`,
/// `3.62P`), as a 16-digit time stamp in full was cut by its neighbour (hover tells the exact
/// value).
fn axis_value(v: f64) -> String {
    if v.is_finite() && v.abs() >= 1e4 {
        crate::ramp::short(v)
    } else {
        short(v)
    }
}

/// Tick labels of a quantitative axis at `count + 1` evenly spaced values, in
/// [`axis_value`]'s compact form: integers on integer axes; on a narrow range far from zero
/// (time stamps) the first value and the others as offsets from it ("+135G").
pub fn ticks(lo: f64, hi: f64, count: usize) -> Vec<(String, f32)> {
    let integral = lo.fract() == 0.0 && hi.fract() == 0.0;
    let narrow = lo != 0.0 && (hi - lo) < 1e-3 * lo.abs().max(hi.abs());
    (0..=count)
        .map(|k| {
            let t = k as f32 / count.max(1) as f32;
            let mut v = lo + (hi - lo) * f64::from(t);
            if integral {
                v = v.round();
            }
            let text = if narrow && k > 0 {
                format!("+{}", axis_value(v - lo))
            } else {
                axis_value(v)
            };
            (text, t)
        })
        .collect()
}

/// The parallel histograms of `inputs` (in drawing order) inside `rect`.
pub fn parallel(inputs: &[AxisInput<'_>], rect: Rect, scale: Scale) -> Drawn {
    let mut drawn = Drawn::default();
    if inputs.is_empty() {
        drawn.picture.labels.push(Label::new(
            rect.center(),
            "no attribute shown",
            13.0,
            DIM,
            Align2::CENTER_CENTER,
        ));
        return drawn;
    }
    let col_w = rect.width() / inputs.len() as f32;
    // Titles too long for their column take turns on two rows, each then as wide as two
    // columns, rather than being cut.
    let staggered = inputs
        .iter()
        .any(|i| labels::approx_width(&i.axis.attribute, 12.0) > col_w - 8.0);
    // Title rows at 2 and 17, the subtitle under them, the axis' top value above the bars.
    let (header, subtitle_y) = if staggered {
        (58.0, 32.0)
    } else {
        (40.0, 20.0)
    };
    let top = rect.top() + header;
    let bottom = rect.bottom() - 20.0;
    for (k, input) in inputs.iter().enumerate() {
        let col = Rect::from_min_max(
            Pos2::new(rect.left() + k as f32 * col_w, rect.top()),
            Pos2::new(rect.left() + (k + 1) as f32 * col_w, rect.bottom()),
        );
        let axis_x = col.left() + 32.0;
        let frame = Frame {
            origin: Pos2::new(axis_x, bottom),
            along: Vec2::new(0.0, -1.0),
            across: Vec2::new(1.0, 0.0),
            length: (bottom - top).max(10.0),
            room: (col.right() - axis_x - 8.0).max(6.0),
            flip_qualitative: true,
        };
        let (mut geom, markers) = draw_axis(&mut drawn.picture, &frame, input, scale);
        geom.area = col;
        let axis = input.axis;
        let pic = &mut drawn.picture;
        let (title_y, title_room) = match (staggered, k % 2) {
            (false, _) => (rect.top() + 4.0, col_w - 8.0),
            (true, row) => (
                rect.top() + 2.0 + 15.0 * row as f32,
                // The last column's title has no neighbour on the other row to its right.
                if k + 1 == inputs.len() {
                    rect.right() - col.left() - 8.0
                } else {
                    2.0 * col_w - 8.0
                },
            ),
        };
        if let Some(t) = labels::fit(&axis.attribute, 12.0, title_room) {
            pic.labels.push(Label::new(
                Pos2::new(col.left() + 6.0, title_y),
                t,
                12.0,
                TEXT,
                Align2::LEFT_TOP,
            ));
        }
        let (kind, unit) = match axis.kind {
            AttrKind::Quantitative => ("binned", "bins"),
            AttrKind::Qualitative => ("by value", "values"),
        };
        let n = axis.bins.len();
        // The longest form that fits whole.
        let forms = [
            format!("{kind} · {n} bins"),
            format!("{n} {unit}"),
            n.to_string(),
        ];
        if let Some(t) = forms
            .iter()
            .find(|f| labels::approx_width(f, 9.5) <= col_w - 8.0)
        {
            pic.labels.push(Label::new(
                Pos2::new(col.left() + 6.0, rect.top() + subtitle_y),
                t.clone(),
                9.5,
                DIM,
                Align2::LEFT_TOP,
            ));
        }
        match axis.kind {
            AttrKind::Quantitative => {
                if let Some((lo, hi)) = axis.value_range() {
                    // The ends only: middle ticks would sit on the bars (hover tells values).
                    for (text, t) in ticks(lo, hi, 1) {
                        let y = bottom - t * frame.length;
                        let align = if t == 0.0 {
                            Align2::LEFT_TOP
                        } else if t == 1.0 {
                            Align2::LEFT_BOTTOM
                        } else {
                            Align2::LEFT_CENTER
                        };
                        let y = if t == 0.0 {
                            y + 2.0
                        } else if t == 1.0 {
                            y - 2.0
                        } else {
                            y
                        };
                        if let Some(text) = labels::fit(&text, 9.0, frame.room) {
                            pic.labels.push(Label::new(
                                Pos2::new(axis_x + 4.0, y),
                                text,
                                9.0,
                                DIM,
                                align,
                            ));
                        }
                    }
                }
            }
            AttrKind::Qualitative => {
                let step = frame.length / axis.bins.len().max(1) as f32;
                // Length of bin b's bar (whole, or selected) as drawn, at most one bin per group
                // here since labels need 10 px per bin.
                let max = axis.bins.iter().map(|b| b.count).max().unwrap_or(0).max(1);
                let bar_len = |b: usize, selected: bool| -> f32 {
                    let c = if selected {
                        input.selected.and_then(|s| s.get(b)).copied().unwrap_or(0)
                    } else {
                        axis.bins.get(b).map_or(0, |x| x.count)
                    };
                    frame.room * scale.of(c) / scale.of(max)
                };
                if step >= 10.0 {
                    for (b, bin) in axis.bins.iter().enumerate() {
                        let (a0, a1) = geom.bin_span(b);
                        let y = bottom - 0.5 * (a0 + a1);
                        let text = bin.label.clone().unwrap_or_else(|| short(bin.lo));
                        if let Some(t) = labels::fit(&text, 9.0, frame.room - 4.0) {
                            // Dark text where the bright selected bar lies under its start.
                            let color = if bar_len(b, true) > 12.0 { INK } else { TEXT };
                            pic.labels.push(Label::new(
                                Pos2::new(axis_x + 4.0, y),
                                t,
                                9.0,
                                color,
                                Align2::LEFT_CENTER,
                            ));
                        }
                    }
                }
            }
        }
        drawn.axes.push(geom);
        drawn.markers.extend(markers);
    }
    drawn
}

/// The single-attribute histogram of `input` inside `rect` (bins along x, counts up).
pub fn single(input: &AxisInput<'_>, rect: Rect, scale: Scale) -> Drawn {
    let mut drawn = Drawn::default();
    let left = rect.left() + 56.0;
    let right = rect.right() - 16.0;
    let base_y = rect.bottom() - 58.0;
    let frame = Frame {
        origin: Pos2::new(left, base_y),
        along: Vec2::new(1.0, 0.0),
        across: Vec2::new(0.0, -1.0),
        length: (right - left).max(10.0),
        room: (base_y - rect.top() - 30.0).max(10.0),
        flip_qualitative: false,
    };
    let (mut geom, markers) = draw_axis(&mut drawn.picture, &frame, input, scale);
    geom.area = Rect::from_min_max(
        Pos2::new(left - 6.0, rect.top() + 24.0),
        Pos2::new(right + 6.0, rect.bottom()),
    );
    let axis = input.axis;
    let pic = &mut drawn.picture;
    let kind = match axis.kind {
        AttrKind::Quantitative => "binned",
        AttrKind::Qualitative => "by value",
    };
    pic.labels.push(Label::new(
        Pos2::new(rect.left() + 8.0, rect.top() + 4.0),
        format!(
            "{} ({kind}, {} bins{})",
            axis.attribute,
            axis.bins.len(),
            if axis.unknown > 0 {
                format!(", {} unknown", axis.unknown)
            } else {
                String::new()
            }
        ),
        13.0,
        TEXT,
        Align2::LEFT_TOP,
    ));
    // Count axis: the tallest bar's count.
    let max = axis.bins.iter().map(|b| b.count).max().unwrap_or(0);
    pic.labels.push(Label::new(
        Pos2::new(left - 6.0, base_y - frame.room),
        si(max),
        9.5,
        DIM,
        Align2::RIGHT_CENTER,
    ));
    pic.labels.push(Label::new(
        Pos2::new(left - 6.0, base_y - 2.0),
        "0",
        9.5,
        DIM,
        Align2::RIGHT_BOTTOM,
    ));
    let tick_y = base_y + 34.0;
    match axis.kind {
        AttrKind::Quantitative => {
            if let Some((lo, hi)) = axis.value_range() {
                // As many ticks as fit without overlapping (the first may be a long full value).
                let fits = |count: usize| {
                    let spacing = frame.length / count as f32;
                    let t = ticks(lo, hi, count);
                    // The first label extends right of its tick, the last left, others both.
                    let extent = |k: usize| -> (f32, f32) {
                        let w = 1.2 * labels::approx_width(&t[k].0, 9.5);
                        match k {
                            0 => (w, 0.0),
                            k if k == count => (0.0, w),
                            _ => (0.5 * w, 0.5 * w),
                        }
                    };
                    (0..count).all(|k| extent(k).0 + extent(k + 1).1 + 12.0 < spacing)
                };
                let count = (2..=10).rev().find(|&c| fits(c)).unwrap_or(1);
                for (text, t) in ticks(lo, hi, count) {
                    let x = left + t * frame.length;
                    let align = if t == 0.0 {
                        Align2::LEFT_TOP
                    } else if t == 1.0 {
                        Align2::RIGHT_TOP
                    } else {
                        Align2::CENTER_TOP
                    };
                    pic.labels
                        .push(Label::new(Pos2::new(x, tick_y), text, 9.5, DIM, align));
                }
            }
        }
        AttrKind::Qualitative => {
            let step = frame.length / axis.bins.len().max(1) as f32;
            for (b, bin) in axis.bins.iter().enumerate() {
                let text = bin.label.clone().unwrap_or_else(|| short(bin.lo));
                if let Some(t) = labels::fit(&text, 9.0, step - 2.0) {
                    let x = left + (b as f32 + 0.5) * step;
                    pic.labels.push(Label::new(
                        Pos2::new(x, tick_y),
                        t,
                        9.0,
                        DIM,
                        Align2::CENTER_TOP,
                    ));
                }
            }
        }
    }
    drawn.axes.push(geom);
    drawn.markers.extend(markers);
    drawn
}

/// A cluster's radial-topology glyph in a framed box near `anchor`, kept inside `bounds`, under
/// a title of up to two lines.
pub fn glyph(
    topology: &Topology,
    values: &NodeValues<'_>,
    title: &str,
    anchor: Pos2,
    bounds: Rect,
) -> Picture {
    let size = 170.0f32
        .min(bounds.height() - 40.0)
        .min(bounds.width() - 8.0)
        .max(60.0);
    let width = (size + 60.0).min(bounds.width() - 8.0);
    let height = size + 34.0;
    let mut min = anchor + Vec2::new(14.0, -height * 0.5);
    if min.x + width > bounds.right() - 4.0 {
        min.x = anchor.x - 14.0 - width;
    }
    min.x = min.x.clamp(
        bounds.left() + 4.0,
        (bounds.right() - 4.0 - width).max(bounds.left() + 4.0),
    );
    min.y = min.y.clamp(
        bounds.top() + 4.0,
        (bounds.bottom() - 4.0 - height).max(bounds.top() + 4.0),
    );
    let frame = Rect::from_min_size(min, Vec2::new(width, height));
    let mut pic = Picture::default();
    pic.shapes.push(
        Shape::new(
            Geometry::Rect {
                min: [frame.min.x, frame.min.y],
                max: [frame.max.x, frame.max.y],
                corner_px: 6.0,
            },
            [30, 33, 42, 245],
        )
        .with_border([220, 222, 230, 255], 1.0),
    );
    let inner = Rect::from_center_size(
        Pos2::new(frame.center().x, frame.top() + 30.0 + 0.5 * size),
        Vec2::splat(size - 8.0),
    );
    let radial = radial(topology, Some(values), Measure::Cycles, inner, None);
    pic.shapes.extend(radial.shapes);
    for (k, line) in title.lines().take(2).enumerate() {
        if let Some(t) = labels::fit(line, 9.5, width - 10.0) {
            pic.labels.push(Label::new(
                frame.min + Vec2::new(6.0, 3.0 + 13.0 * k as f32),
                t,
                9.5,
                if k == 0 { TEXT } else { DIM },
                Align2::LEFT_TOP,
            ));
        }
    }
    pic
}

/// The selection panel's lines: what is selected, count and share, total and mean latency.
pub fn panel_lines(summary: &SelectionSummary, description: &str) -> [String; 3] {
    [
        format!("selection: {description}"),
        format!(
            "{} samples · {:.1} % of all",
            summary.samples,
            summary.share * 100.0
        ),
        format!(
            "total latency {} cycles · mean {}",
            si(summary.cycles),
            summary
                .mean_latency
                .map_or_else(|| "—".to_owned(), |m| format!("{m:.1} cycles"))
        ),
    ]
}

/// The selection panel as labels at `at` (headless pictures; the GUI uses widgets).
pub fn panel(summary: &SelectionSummary, description: &str, at: Pos2) -> Picture {
    let mut pic = Picture::default();
    for (k, line) in panel_lines(summary, description).into_iter().enumerate() {
        pic.labels.push(Label::new(
            at + Vec2::new(0.0, 16.0 * k as f32),
            line,
            if k == 0 { 12.0 } else { 11.5 },
            if k == 0 { TEXT } else { DIM },
            Align2::LEFT_TOP,
        ));
    }
    pic
}

#[cfg(test)]
mod tests {
    use super::*;
    use memscape_samples::LinkedIndex;

    fn lulesh_index() -> LinkedIndex {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/data/memaxes/lulesh/samples.out");
        let samples =
            memscape_samples::load_samples(&path, memscape_samples::ImportOptions::default())
                .expect("LULESH samples");
        LinkedIndex::new(&samples, 32)
    }

    fn input<'a>(index: &'a LinkedIndex, name: &str) -> AxisInput<'a> {
        let a = index.axis(name).expect("axis");
        AxisInput {
            index: a,
            axis: &index.axes[a],
            selected: None,
            brush: None,
            strip: None,
            markers: None,
            hovered_marker: None,
        }
    }

    #[test]
    fn drags_on_axes_become_brushes_in_the_axis_units() {
        let index = lulesh_index();
        let rect = Rect::from_min_size(Pos2::ZERO, Vec2::new(400.0, 600.0));
        let drawn = parallel(
            &[input(&index, "latency"), input(&index, "cpu")],
            rect,
            Scale::Linear,
        );
        assert_eq!(drawn.axes.len(), 2);
        let lat = &drawn.axes[0];
        let (lo, hi) = index.axes[lat.axis].value_range().expect("range");
        // The whole axis is the whole range; up is larger values.
        match lat.brush_between(0.0, lat.length) {
            Brush::Range { lo: a, hi: b } => {
                assert!((a - lo).abs() < 1e-9 && (b - hi).abs() < 1e-6, "{a} {b}");
            }
            other => panic!("{other:?}"),
        }
        let bottom = lat.area.bottom() - 20.0;
        let mid = Pos2::new(lat.area.center().x, bottom - 0.5 * lat.length);
        assert!((lat.along_of(mid) - 0.5 * lat.length).abs() < 0.5);
        assert!(drawn.axis_at(mid).is_some_and(|g| g.axis == lat.axis));
        // The qualitative axis lists its first value at the top: a drag over the top quarter
        // takes the first values.
        let cpu = &drawn.axes[1];
        let bins = index.axes[cpu.axis].bins.len();
        match cpu.brush_between(cpu.length, 0.76 * cpu.length) {
            Brush::Bins(set) => {
                assert_eq!(set[0], 0);
                assert!(
                    set.len() >= bins / 4 && set.len() <= bins / 4 + 2,
                    "{set:?}"
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(drawn.axis_at(Pos2::new(-5.0, 10.0)).is_none());
    }

    #[test]
    fn selected_bars_are_drawn_over_the_whole_and_markers_can_be_hit() {
        let index = lulesh_index();
        let a = index.axis("zidx").expect("zidx");
        let selected: Vec<u64> = index.axes[a].bins.iter().map(|b| b.count / 2).collect();
        let marks = [
            ClusterMark {
                range: [0.0, 10.0],
                samples: 10,
                metric: 1.0,
            },
            ClusterMark {
                range: [20.0, 31.0],
                samples: 10,
                metric: 3.0,
            },
        ];
        let strip = vec![
            WindowScore {
                range: [0.0, 15.5],
                samples: 5,
                metric: Some(0.5),
            },
            WindowScore {
                range: [15.5, 31.0],
                samples: 0,
                metric: None,
            },
        ];
        let mut i = input(&index, "zidx");
        i.selected = Some(&selected);
        i.markers = Some(&marks);
        i.strip = Some(&strip);
        let rect = Rect::from_min_size(Pos2::ZERO, Vec2::new(800.0, 400.0));
        let drawn = single(&i, rect, Scale::Linear);
        let fills: Vec<[u8; 4]> = drawn.picture.shapes.iter().map(|s| s.fill).collect();
        let whole = fills.iter().filter(|f| **f == WHOLE).count();
        let sel = fills.iter().filter(|f| **f == SELECTED).count();
        assert!(whole > 0 && sel > 0 && sel <= whole);
        // Every selected bar comes after (over) the whole bar of its bin.
        let first_sel = fills.iter().position(|f| *f == SELECTED).expect("selected");
        let first_whole = fills.iter().position(|f| *f == WHOLE).expect("whole");
        assert!(first_whole < first_sel);
        // The window without samples is grey, the other on the ramp.
        assert!(fills.contains(&NO_SCORE));
        assert_eq!(drawn.markers.len(), 2);
        let m = drawn.markers[1];
        assert_eq!(drawn.marker_at(m.center).map(|x| x.cluster), Some(1));
        assert!(drawn.marker_at(m.center + Vec2::new(30.0, 0.0)).is_none());
        // Markers sit at the middle of their cluster's range along the axis.
        let g = &drawn.axes[0];
        let x_mid = g.along_of_value(25.5);
        assert!((m.center.x - (g.area.left() + 6.0 + x_mid)).abs() < 1.0);
    }

    #[test]
    fn ticks_of_time_stamps_are_offsets() {
        // LULESH's time column: the ends were cut ("361725062…", "+13497349…").
        let t = ticks(3_617_250_629_717_268.0, 3_617_385_603_213_442.0, 2);
        assert_eq!(
            t.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(),
            ["3.62P", "+67.5G", "+135G"]
        );
        let t = ticks(0.0, 31.0, 2);
        assert_eq!(
            t.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(),
            ["0", "16", "31"]
        );
        // Short values stay exact; long ones get a prefix and fit a column (~60 points).
        let t = ticks(0.0, 260_908.0, 1);
        assert_eq!(
            t.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(),
            ["0", "261k"]
        );
        assert_eq!(ticks(0.5, 9999.0, 1)[1].0, "9999");
        for (text, _) in ticks(-3.0e18, 1.0e18, 4) {
            assert!(labels::approx_width(&text, 9.5) < 40.0, "{text}");
        }
    }
}
