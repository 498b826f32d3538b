//! MemAxes' radial topology (root in the centre, processing units outside; colour = samples or
//! cycles scaled per depth; parent–child links as lines whose width follows the transfers, per
//! depth) and the top-offender bar charts, as pictures.

use std::f32::consts::{FRAC_PI_2, TAU};

use egui::{Align2, Color32, Pos2, Rect};
use memscape_render::color::blue_red_srgb8 as ramp;
use memscape_render::shapes::{Geometry, Shape};
use memscape_samples::Offender;
use memscape_topology::{ResourceKind, Topology};

use crate::label::{self as labels, Label};
use crate::picture::{Picture, text_on};

pub const BACKGROUND: [u8; 4] = [18, 20, 26, 255];
const TEXT: Color32 = Color32::from_rgb(228, 230, 236);
const EMPTY: [u8; 4] = [64, 68, 80, 255];
/// Where in its ring (0 inner edge, 1 outer) a resource's links meet; labels take the rest.
const LINK_AT: f32 = 0.3;

/// What colours the resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Measure {
    Samples,
    #[default]
    Cycles,
}

impl Measure {
    pub fn name(self) -> &'static str {
        match self {
            Measure::Samples => "samples",
            Measure::Cycles => "cycles",
        }
    }
}

/// Per-node values of one aggregation (indexed by node id); empty for a bare topology.
pub struct NodeValues<'a> {
    pub samples: &'a [u64],
    pub cycles: &'a [u64],
    pub transfers: &'a [u64],
    /// Samples whose data source names no level (counted on their PU only).
    pub level_unknown: &'a [u64],
}

/// Short name of a resource for labels.
pub fn resource_name(topology: &Topology, id: u32) -> String {
    let Some(n) = topology.node(id) else {
        return String::new();
    };
    let kind = match n.kind {
        ResourceKind::Machine => "machine",
        ResourceKind::Numa => "NUMA",
        ResourceKind::L3 => "L3",
        ResourceKind::L2 => "L2",
        ResourceKind::L1 => "L1",
        ResourceKind::Core => "core",
        ResourceKind::Pu => "PU",
    };
    match n.os_index {
        Some(i) => format!("{kind} {i}"),
        None => kind.to_owned(),
    }
}

/// Angular span [a0, a1) of every node: each PU an equal share, a node the span of its PUs in
/// tree order. Returns spans indexed by node id.
fn spans(topology: &Topology) -> Vec<(f32, f32)> {
    let nodes = topology.nodes();
    let mut span = vec![(0.0f32, 0.0f32); nodes.len()];
    let leaves = nodes
        .iter()
        .filter(|n| n.children.is_empty())
        .count()
        .max(1);
    let step = TAU / leaves as f32;
    let mut next = 0.0f32;
    // Depth-first in child order, so that siblings are contiguous.
    fn walk(topology: &Topology, id: u32, step: f32, next: &mut f32, span: &mut [(f32, f32)]) {
        let Some(n) = topology.node(id) else {
            return;
        };
        let start = *next;
        if n.children.is_empty() {
            *next += step;
        }
        for &c in &n.children {
            walk(topology, c, step, next, span);
        }
        if let Some(s) = span.get_mut(id as usize) {
            *s = (start, *next);
        }
    }
    walk(topology, topology.root().id, step, &mut next, &mut span);
    span
}

/// Height of one row of the per-level colour legend.
const LEGEND_ROW: f32 = crate::ramp::HEIGHT + 6.0;
/// Width of one column of it (the level's name, then its ramp).
const LEGEND_COLUMN: f32 = 250.0;
const LEGEND_NAME: f32 = 44.0;
/// The legend's first row: how many samples have no level (then none is drawn on a level).
const NOTE_ROW: f32 = 16.0;

/// Where the radial of `topology` drawn inside `rect` lies, and its per-level colour legend
/// (with `values`, when `rect` has room: beside the disc in wide rectangles, under it
/// otherwise), so that the legend never covers a sector. Hit testing uses the first.
pub fn radial_areas(topology: &Topology, with_values: bool, rect: Rect) -> (Rect, Option<Rect>) {
    let levels = topology.nodes().iter().map(|n| n.depth).max().unwrap_or(0) as usize;
    if !with_values || levels == 0 || rect.width().min(rect.height()) < 300.0 {
        return (rect, None);
    }
    if rect.width() >= rect.height() + LEGEND_COLUMN {
        let height = levels as f32 * LEGEND_ROW + NOTE_ROW;
        let legend = Rect::from_min_size(
            Pos2::new(rect.right() - LEGEND_COLUMN, rect.bottom() - height),
            egui::vec2(LEGEND_COLUMN, height),
        );
        let disc = Rect::from_min_max(rect.min, Pos2::new(legend.left() - 8.0, rect.bottom()));
        return (disc, Some(legend));
    }
    let columns = ((rect.width() / LEGEND_COLUMN).floor() as usize).clamp(1, levels);
    let height = levels.div_ceil(columns) as f32 * LEGEND_ROW + NOTE_ROW;
    let legend = Rect::from_min_max(Pos2::new(rect.left(), rect.bottom() - height), rect.max);
    let disc = Rect::from_min_max(rect.min, Pos2::new(rect.right(), legend.top() - 6.0));
    (disc, Some(legend))
}

/// The per-level legend: each level below the root (`NUMA`, `L3`, …, `PU`) with the ramp of
/// its own range of the measure, ticks in the measure's unit.
fn level_legend(
    pic: &mut Picture,
    topology: &Topology,
    measure: Measure,
    ranges: &[(u64, u64)],
    level_unknown: u64,
    rect: Rect,
) {
    if level_unknown > 0 {
        pic.labels.push(Label::new(
            rect.left_top(),
            format!(
                "level unknown: {level_unknown} samples (their data source names no level; \
                 counted on their PU only)"
            ),
            10.5,
            Color32::from_rgb(243, 168, 58),
            Align2::LEFT_TOP,
        ));
    }
    let rect = Rect::from_min_max(rect.min + egui::vec2(0.0, NOTE_ROW), rect.max);
    use crate::ramp::{ColorRamp, Scale, Unit};
    let nodes = topology.nodes();
    let columns = ((rect.width() / LEGEND_COLUMN).floor() as usize).max(1);
    let column_w = rect.width() / columns as f32;
    let unit = match measure {
        Measure::Samples => Unit::Count("samples"),
        Measure::Cycles => Unit::Count("cyc"),
    };
    for (k, &(lo, hi)) in ranges.iter().enumerate().skip(1) {
        let Some(first) = nodes.iter().find(|n| n.depth as usize == k) else {
            continue;
        };
        let name = resource_name(topology, first.id);
        let kind = name.split(' ').next().unwrap_or(&name).to_owned();
        let (row, column) = ((k - 1) / columns, (k - 1) % columns);
        let cell = Rect::from_min_size(
            Pos2::new(
                rect.left() + column as f32 * column_w,
                rect.top() + row as f32 * LEGEND_ROW,
            ),
            egui::vec2(column_w - 10.0, LEGEND_ROW),
        );
        pic.labels.push(Label::new(
            Pos2::new(cell.left(), cell.top() + 4.5),
            kind,
            10.5,
            TEXT,
            Align2::LEFT_CENTER,
        ));
        let ramp_rect =
            Rect::from_min_max(Pos2::new(cell.left() + LEGEND_NAME, cell.top()), cell.max);
        if hi == 0 || lo > hi {
            pic.labels.push(Label::new(
                ramp_rect.left_top(),
                format!("no {}", measure.name()),
                10.0,
                Color32::from_gray(150),
                Align2::LEFT_TOP,
            ));
            continue;
        }
        ColorRamp::new(lo as f64, hi as f64, Scale::Linear, unit).draw(
            pic,
            ramp_rect,
            Color32::from_gray(200),
        );
    }
}

/// The radial topology inside `rect` (with `values`, its per-level colour legend where there
/// is room, see [`radial_areas`]). `values` None: structure only.
/// A ring segment of the radial picture (angles in screen radians, 0 = 3 o'clock).
struct Segment {
    center: Pos2,
    a0: f32,
    a1: f32,
    r0: f32,
    r1: f32,
}

impl Segment {
    /// Where `name` goes in the part of the segment outside `link_at` (0 inner edge, 1 outer):
    /// along the arc near the outer edge when it is wide, else along the radius; `beside`
    /// moves an arc label off the middle, where a single child's link runs. Returns the
    /// position, the text (cut to fit) and the rotation; None when not 3 characters fit.
    fn label(
        &self,
        name: &str,
        size: f32,
        link_at: f32,
        beside: bool,
    ) -> Option<(Pos2, String, f32)> {
        let mid_a = 0.5 * (self.a0 + self.a1);
        let depth = self.r1 - self.r0;
        let outer = (1.0 - link_at) * depth;
        let arc_at = |r: f32| (self.a1 - self.a0) * r;
        let along = |a: f32, r: f32| self.center + egui::vec2(a.cos(), a.sin()) * r;
        // Arc labels sit near the outer edge when links cross the rest, else in the middle.
        let r_arc = if link_at > 0.0 {
            self.r1 - 0.5 * size - 3.0
        } else {
            0.5 * (self.r0 + self.r1)
        };
        if arc_at(r_arc) >= outer {
            let width = labels::approx_width(name, size);
            let half = 0.5 * arc_at(r_arc) - 8.0;
            let (a, room) = if beside && width + 4.0 <= half {
                (mid_a + (0.5 * width + 6.0) / r_arc, half)
            } else {
                (mid_a, arc_at(r_arc) - 4.0)
            };
            let text = labels::fit(name, size, room)?;
            return Some((along(a, r_arc), text, a + FRAC_PI_2));
        }
        let r = self.r1 - 0.5 * outer;
        if arc_at(r) < size + 2.0 {
            return None;
        }
        let text = labels::fit(name, size, outer - 4.0)?;
        Some((along(mid_a, r), text, mid_a))
    }
}

pub fn radial(
    topology: &Topology,
    values: Option<&NodeValues<'_>>,
    measure: Measure,
    rect: Rect,
    highlight: Option<u32>,
) -> Picture {
    let mut pic = Picture::default();
    let (rect, legend) = radial_areas(topology, values.is_some(), rect);
    let nodes = topology.nodes();
    let depth = nodes.iter().map(|n| n.depth).max().unwrap_or(0) as f32;
    let center = rect.center();
    let radius = 0.5 * rect.width().min(rect.height()) - 6.0;
    let ring = radius / (depth + 1.0);
    let span = spans(topology);
    let value = |id: usize| -> Option<u64> {
        let v = values?;
        match measure {
            Measure::Samples => v.samples.get(id).copied(),
            Measure::Cycles => v.cycles.get(id).copied(),
        }
    };
    // Per-depth ranges of the measure and of the transfers.
    let levels = depth as usize + 1;
    let mut lo = vec![u64::MAX; levels];
    let mut hi = vec![0u64; levels];
    let mut t_hi = vec![0u64; levels];
    for n in nodes {
        let d = n.depth as usize;
        if let Some(v) = value(n.id as usize) {
            lo[d] = lo[d].min(v);
            hi[d] = hi[d].max(v);
        }
        if let Some(t) = values.and_then(|v| v.transfers.get(n.id as usize)) {
            t_hi[d] = t_hi[d].max(*t);
        }
    }
    if let Some(legend) = legend {
        let ranges: Vec<(u64, u64)> = lo.iter().copied().zip(hi.iter().copied()).collect();
        let unknown = values.map_or(0, |v| v.level_unknown.iter().sum());
        level_legend(&mut pic, topology, measure, &ranges, unknown, legend);
    }
    let geometry = |id: usize| {
        let n = &nodes[id];
        let (a0, a1) = span[id];
        let r0 = if n.depth == 0 {
            0.0
        } else {
            n.depth as f32 * ring
        };
        (a0, a1, r0, (n.depth as f32 + 1.0) * ring - 1.5)
    };
    // Each resource's fill, kept for its label's contrast.
    let mut fills = vec![EMPTY; nodes.len()];
    for n in nodes {
        let id = n.id as usize;
        let (a0, a1, r0, r1) = geometry(id);
        let d = n.depth as usize;
        // Resources with nothing (no selected sample) stay grey, apart from the ramp's low end.
        let fill = match value(id) {
            Some(v) if v > 0 && hi[d] > 0 => {
                let x = if hi[d] > lo[d] {
                    (v - lo[d]) as f32 / (hi[d] - lo[d]) as f32
                } else {
                    1.0
                };
                ramp(x)
            }
            _ => EMPTY,
        };
        if let Some(slot) = fills.get_mut(id) {
            *slot = fill;
        }
        let border = if highlight == Some(n.id) {
            ([255, 255, 255, 255], 2.0)
        } else {
            (BACKGROUND, 1.0)
        };
        pic.shapes.push(
            Shape::new(
                Geometry::Sector {
                    center: [center.x, center.y],
                    r0,
                    r1,
                    a0: a0 - FRAC_PI_2,
                    a1: a1 - FRAC_PI_2,
                },
                fill,
            )
            .with_border(border.0, border.1),
        );
    }
    // Links: parent centre to child centre, width ∝ transfers per depth.
    if let Some(v) = values {
        for n in nodes {
            let Some(parent) = n.parent else {
                continue;
            };
            let t = v.transfers.get(n.id as usize).copied().unwrap_or(0);
            let max = t_hi[n.depth as usize];
            if t == 0 || max == 0 {
                continue;
            }
            // A link joins its ends in the inner part of their rings, so that it does not
            // cross the labels, which sit in the outer part.
            let joint = |id: usize| {
                let (a0, a1, r0, r1) = geometry(id);
                let a = 0.5 * (a0 + a1) - FRAC_PI_2;
                let r = r0 + LINK_AT * (r1 - r0);
                [center.x + a.cos() * r, center.y + a.sin() * r]
            };
            pic.shapes.push(Shape::new(
                Geometry::Segment {
                    a: joint(parent as usize),
                    b: joint(n.id as usize),
                    width_px: 1.0 + 7.0 * t as f32 / max as f32,
                },
                [240, 240, 245, 110],
            ));
        }
    }
    // Labels where they fit (tangential for wide segments, radial for narrow ones), in the
    // outer part of their ring, clear of the links' joints, dark or light on their fill.
    let mut labelled = vec![0usize; levels];
    let mut has_children = vec![false; nodes.len()];
    for n in nodes {
        if let Some(slot) = n.parent.and_then(|p| has_children.get_mut(p as usize)) {
            *slot = true;
        }
    }
    // Without values there are no links: labels take their whole segment.
    let link_at = if values.is_some() { LINK_AT } else { 0.0 };
    for n in nodes {
        let id = n.id as usize;
        let (a0, a1, r0, r1) = geometry(id);
        let name = resource_name(topology, n.id);
        let size = 10.0;
        let segment = Segment {
            center,
            a0: a0 - FRAC_PI_2,
            a1: a1 - FRAC_PI_2,
            r0,
            r1,
        };
        let placed = if n.depth == 0 {
            // Above the centre when the links start there.
            let pos = center - egui::vec2(0.0, if link_at > 0.0 { 0.5 * r1 } else { 0.0 });
            labels::fit(&name, size, 2.0 * r1).map(|text| (pos, text, 0.0))
        } else {
            // In the outer part, clear of the links; the whole segment when only that holds
            // the whole name (a number cut off would say nothing).
            let beside = link_at > 0.0 && has_children[id];
            segment
                .label(&name, size, link_at, beside)
                .filter(|(_, text, _)| *text == name || link_at == 0.0)
                .or_else(|| segment.label(&name, size, 0.0, false))
        };
        let Some((pos, text, angle)) = placed else {
            continue;
        };
        let mut angle = angle.rem_euclid(TAU);
        if angle > FRAC_PI_2 && angle < 3.0 * FRAC_PI_2 {
            angle -= std::f32::consts::PI;
        }
        // Dark text on light fills; the picture's own light text elsewhere.
        let color = Some(text_on(fills.get(id).copied().unwrap_or(EMPTY)))
            .filter(|c| c.r() < 128)
            .unwrap_or(TEXT);
        pic.labels
            .push(Label::new(pos, text, size, color, Align2::CENTER_CENTER).rotated(angle));
        labelled[n.depth as usize] += 1;
    }
    // Rings too crowded for any label (hundreds of PUs) get one caption at the top: what the
    // ring is and how many.
    for (d, &count) in labelled.iter().enumerate().skip(1) {
        let members: Vec<&memscape_topology::Node> =
            nodes.iter().filter(|n| n.depth as usize == d).collect();
        let Some(first) = members.first() else {
            continue;
        };
        if count > 0 {
            continue;
        }
        let name = resource_name(topology, first.id);
        let kind = name.split(' ').next().unwrap_or(&name);
        let text = format!("{kind} × {}", members.len());
        let r = (d as f32 + 0.5) * ring - 0.75;
        pic.labels.push(Label::new(
            center - egui::vec2(0.0, r),
            text,
            10.0,
            TEXT,
            Align2::CENTER_CENTER,
        ));
    }
    pic
}

/// Where row `i` of an offender chart of `n` rows inside `rect` lies (None: it does not fit).
pub fn offender_row(i: usize, n: usize, rect: Rect) -> Option<Rect> {
    let bottom = rect.bottom() - OFFENDER_LEGEND;
    let row_h = ((bottom - rect.top() - 24.0) / n.max(1) as f32).clamp(10.0, 22.0);
    let y = rect.top() + 22.0 + i as f32 * row_h;
    (i < n && y + row_h <= bottom).then(|| {
        Rect::from_min_max(
            Pos2::new(rect.left(), y),
            Pos2::new(rect.right(), y + row_h),
        )
    })
}

/// Bars of the selected part of each offender (drawn over the whole).
const SELECTED: [u8; 4] = [243, 168, 58, 255];
const WHOLE: [u8; 4] = [86, 92, 108, 255];

/// Room under an offender chart's rows for [`offender_legend`]: a caption line and a ramp.
const OFFENDER_LEGEND: f32 = 16.0 + crate::ramp::HEIGHT + 6.0;
/// The widest the legend's ramp gets.
const OFFENDER_RAMP_WIDTH: f32 = 260.0;

/// What an offender chart's colours mean, under its last row: without a selection, each bar's
/// colour is its total latency on the blue → red ramp from 0 to the top bar's (the ramp with
/// its ticks in cycles); with one, grey is the whole and orange the selected samples' part.
pub fn offender_legend(rows: &[Offender], selected: bool, rect: Rect) -> Picture {
    let mut pic = Picture::default();
    let shown = (0..rows.len())
        .map_while(|i| offender_row(i, rows.len(), rect))
        .last();
    let Some(last) = shown else {
        return pic;
    };
    let top = last.bottom() + 6.0;
    let left = rect.left() + 4.0;
    let caption = Color32::from_gray(170);
    if selected {
        let mut x = left;
        for (fill, text) in [
            (WHOLE, "whole (all samples)"),
            (SELECTED, "selected samples' part"),
        ] {
            pic.shapes.push(Shape::new(
                Geometry::Rect {
                    min: [x, top + 3.0],
                    max: [x + 12.0, top + 11.0],
                    corner_px: 2.0,
                },
                fill,
            ));
            pic.labels.push(Label::new(
                Pos2::new(x + 16.0, top + 7.0),
                text,
                10.0,
                caption,
                Align2::LEFT_CENTER,
            ));
            x += 16.0 + labels::approx_width(text, 10.0) + 18.0;
        }
        return pic;
    }
    pic.labels.push(Label::new(
        Pos2::new(left, top + 7.0),
        "bar colour: total latency",
        10.0,
        caption,
        Align2::LEFT_CENTER,
    ));
    let max = rows.iter().map(|r| r.cycles).max().unwrap_or(1).max(1);
    let ramp = crate::ramp::ColorRamp::new(
        0.0,
        max as f64,
        crate::ramp::Scale::Linear,
        crate::ramp::Unit::Count("cyc"),
    );
    let width = (rect.width() - 8.0).min(OFFENDER_RAMP_WIDTH);
    ramp.draw(
        &mut pic,
        Rect::from_min_size(
            Pos2::new(left, top + 16.0),
            egui::vec2(width, crate::ramp::HEIGHT),
        ),
        caption,
    );
    pic
}

/// One bar chart of offenders (total latency, descending) inside `rect`. With `selected`
/// (cycles and samples of the selection per row), each bar shows the whole in grey and the
/// selected part on top of it.
pub fn offenders(
    title: &str,
    rows: &[Offender],
    selected: Option<&[(u64, u64)]>,
    rect: Rect,
) -> Picture {
    let mut pic = Picture::default();
    pic.labels.push(Label::new(
        rect.left_top() + egui::vec2(4.0, 2.0),
        title,
        12.0,
        TEXT,
        Align2::LEFT_TOP,
    ));
    let max = rows.iter().map(|r| r.cycles).max().unwrap_or(1).max(1) as f32;
    let name_w = (rect.width() * 0.42).min(320.0);
    let si = crate::picture::si;
    let value_of = |i: usize, r: &Offender| match selected.and_then(|s| s.get(i)).copied() {
        None => format!("{} cyc · {} smp", si(r.cycles), si(r.samples)),
        Some((s, c)) => format!("{} of {} cyc · {} smp", si(c), si(r.cycles), si(s)),
    };
    // Room right of the bars for the widest value text, so that none runs off the pane.
    let value_room = rows
        .iter()
        .enumerate()
        .map(|(i, r)| labels::approx_width(&value_of(i, r), 10.0))
        .fold(60.0f32, f32::max)
        + 10.0;
    for (i, r) in rows.iter().enumerate() {
        let Some(row) = offender_row(i, rows.len(), rect) else {
            break;
        };
        let (y, row_h) = (row.top(), row.height());
        let x0 = rect.left() + name_w + 8.0;
        let full = (rect.right() - x0 - value_room).max(10.0);
        let w = full * r.cycles as f32 / max;
        let bar = |w: f32, fill: [u8; 4]| {
            Shape::new(
                Geometry::Rect {
                    min: [x0, y + 2.0],
                    max: [x0 + w.max(1.0), y + row_h - 2.0],
                    corner_px: 2.0,
                },
                fill,
            )
        };
        let sel = selected.and_then(|s| s.get(i)).copied();
        match sel {
            None => pic.shapes.push(bar(w, ramp(r.cycles as f32 / max))),
            Some((_, c)) => {
                pic.shapes.push(bar(w, WHOLE));
                if c > 0 {
                    pic.shapes.push(bar(full * c as f32 / max, SELECTED));
                }
            }
        }
        if let Some(text) = labels::fit(&r.name, 10.5, name_w - 6.0) {
            pic.labels.push(Label::new(
                Pos2::new(rect.left() + name_w, y + 0.5 * row_h),
                text,
                10.5,
                TEXT,
                Align2::RIGHT_CENTER,
            ));
        }
        let value = value_of(i, r);
        pic.labels.push(Label::new(
            Pos2::new(x0 + w + 6.0, y + 0.5 * row_h),
            value,
            10.0,
            Color32::from_gray(170),
            Align2::LEFT_CENTER,
        ));
    }
    pic
}
