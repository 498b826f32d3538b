//! The difference view's pictures, composed once for the GUI's difference pane and
//! `memscape render --compare A B`.

use std::f32::consts::FRAC_PI_2;

use egui::{Align2, Color32, Rect, pos2, vec2};
use memscape_heap::diff::{DiffNode, DiffReport, HeapRef, Status};
use memscape_heap::layout::LayoutNode;
use memscape_heap::report::{HeapTreeOptions, TimeSelect};
use memscape_heap::{HeapNode, IcicleRect, Layout, Metric, SunburstSegment};
use memscape_render::color::blue_red_srgb8;
use memscape_render::shapes::{Geometry, Shape};

use super::settings::{DiffChart, DiffSettings};
use crate::alloc_map::AllocMapSettings;
use crate::alloc_map::colors::SharedClasses;
use crate::dataset::{Dataset, DatasetContent};
use crate::error::Result;
use crate::heap_tree::HeapTreeSettings;
use crate::heap_tree::draw::{self, BACKGROUND, NodePaint, short_name};
use crate::label::{self as labels, Label};
use crate::picture::Picture;
use crate::ramp::{self, ColorRamp, Scale, Unit};

const TEXT: Color32 = Color32::from_rgb(235, 236, 240);
const DIM: Color32 = Color32::from_rgb(170, 172, 180);
/// Header (run names and totals) and legend heights, in points.
const HEADER: f32 = 40.0;
const LEGEND: f32 = 46.0;
/// Children below this fraction of the root (larger side) are drawn merged.
const MERGE_BELOW: f64 = 0.002;
/// Fill alpha of what is gone (it has no bytes in B).
const GONE_ALPHA: u8 = 110;
/// Outline of what is new.
const NEW_OUTLINE: [u8; 4] = [255, 255, 255, 255];

/// `memscape_heap`'s options for the heap settings (each run at its own time point).
pub fn options_of(heap: &HeapTreeSettings) -> HeapTreeOptions {
    let mut options = HeapTreeOptions {
        select: match (heap.at, heap.snapshot, heap.peak) {
            (Some(t), _, _) => TimeSelect::At(t),
            (_, Some(n), _) => TimeSelect::Snapshot(n),
            (_, _, true) => TimeSelect::Peak,
            _ => TimeSelect::Default,
        },
        group: heap.group.0.clone(),
        measure: heap.measure.clone(),
        ..HeapTreeOptions::default()
    };
    options.prune.metric = heap.metric.0;
    options
}

/// The heap input of a dataset, or why it has none.
pub fn heap_ref(dataset: &Dataset) -> Result<HeapRef<'_>> {
    Ok(match &dataset.content {
        DatasetContent::AllocTrace(t) => HeapRef::Trace(&t.trace),
        DatasetContent::Massif(m) => HeapRef::Massif(m),
        DatasetContent::HeapProfile(p) => HeapRef::Profile(p),
        _ => crate::bail!(
            "{}: a comparison needs allocation traces, massif files or heap profiles",
            dataset.name
        ),
    })
}

/// The comparison of two datasets' heap trees.
pub fn report(a: &Dataset, b: &Dataset, heap: &HeapTreeSettings) -> Result<DiffReport> {
    let mut report = memscape_heap::diff::diff(heap_ref(a)?, heap_ref(b)?, &options_of(heap))
        .map_err(|e| crate::error::ViewError::msg(e.to_string()))?;
    report.a.source.clone_from(&a.name);
    report.b.source.clone_from(&b.name);
    Ok(report)
}

/// The picture of `settings` comparing `a` with `b`, at `size` points.
pub fn compose(
    a: &Dataset,
    b: &Dataset,
    settings: &DiffSettings,
    size: egui::Vec2,
) -> Result<Picture> {
    if settings.chart == DiffChart::Maps {
        return Ok(maps(a, b, &settings.map, size)?.into_picture(size));
    }
    let report = report(a, b, &settings.heap)?;
    Ok(tree_picture(
        &report,
        settings.chart,
        settings.heap.depth,
        size,
    ))
}

/// A node as drawn: the diff node's values, children cut at the depth and the small ones
/// merged.
struct Shown {
    name: String,
    a: u64,
    b: u64,
    status: Status,
    children: Vec<Shown>,
}

impl Shown {
    fn of(node: &DiffNode, metric: Metric, depth: usize, min: u64) -> Shown {
        let mut children = Vec::new();
        let (mut other_a, mut other_b) = (0u64, 0u64);
        if depth > 0 {
            for c in &node.children {
                if c.larger(metric) >= min {
                    children.push(Shown::of(c, metric, depth - 1, min));
                } else {
                    other_a = other_a.saturating_add(c.value_a(metric));
                    other_b = other_b.saturating_add(c.value_b(metric));
                }
            }
        }
        if other_a | other_b != 0 {
            children.push(Shown {
                name: memscape_heap::view::OTHER.to_owned(),
                a: other_a,
                b: other_b,
                status: Status::of(other_a, other_b),
                children: Vec::new(),
            });
        }
        Shown {
            name: node.name.clone(),
            a: node.value_a(metric),
            b: node.value_b(metric),
            status: node.status,
            children,
        }
    }

    fn change(&self) -> f64 {
        self.b as f64 - self.a as f64
    }

    /// Preorder, as the layout flattens.
    fn flatten<'s>(&'s self, out: &mut Vec<&'s Shown>) {
        out.push(self);
        for c in &self.children {
            c.flatten(out);
        }
    }

    /// The tree the layout sizes: by `side` (A, B, or the larger of the two), never smaller
    /// than its children together. `group` is the preorder index (the paint looks it up).
    fn sized(&self, side: Side, next: &mut u32) -> HeapNode {
        let group = *next;
        *next += 1;
        let children: Vec<HeapNode> = self.children.iter().map(|c| c.sized(side, next)).collect();
        let own = match side {
            Side::A => self.a,
            Side::B => self.b,
            Side::Larger => self.a.max(self.b),
        };
        let sum = children.iter().fold(0u64, |s, c| s.saturating_add(c.bytes));
        let value = own.max(sum);
        HeapNode {
            name: self.name.clone(),
            bytes: value,
            objects: value,
            children,
            group: Some(group),
            merged_from: None,
        }
    }
}

#[derive(Clone, Copy)]
enum Side {
    A,
    B,
    Larger,
}

/// A signed quantity in the metric's unit (`+4 KiB`, `-12 objects`).
fn signed(v: f64, metric: Metric) -> String {
    let sign = if v > 0.0 {
        "+"
    } else if v < 0.0 {
        "-"
    } else {
        "±"
    };
    match metric {
        Metric::Bytes => format!("{sign}{}", ramp::bytes(v.abs())),
        Metric::Objects => format!("{sign}{} obj", ramp::short(v.abs())),
    }
}

/// The diverging ramp of the changes shown: symmetric about 0, shrinking blue, growing red.
fn change_ramp(flat: &[&Shown], metric: Metric) -> ColorRamp {
    let largest = flat
        .iter()
        .skip(1)
        .map(|n| n.change().abs())
        .fold(0.0f64, f64::max)
        .max(1.0);
    let unit = match metric {
        Metric::Bytes => Unit::Bytes,
        Metric::Objects => Unit::Count("objects"),
    };
    ColorRamp::new(-largest, largest, Scale::Linear, unit)
}

fn fill_of(node: &Shown, depth: u32, ramp: &ColorRamp) -> [u8; 4] {
    if depth == 0 {
        return [58, 62, 74, 255];
    }
    let mut c = blue_red_srgb8(ramp.position(node.change()));
    if node.status == Status::Gone {
        c[3] = GONE_ALPHA;
    }
    c
}

/// One chart of the difference picture: its layout and where it is drawn.
enum ChartLayout {
    Sunburst(Rect, Layout<SunburstSegment>),
    Icicle(Rect, Layout<IcicleRect>),
}

impl ChartLayout {
    /// The layout node drawn at `pos`.
    fn node_at(&self, pos: egui::Pos2) -> Option<(&[LayoutNode], u32)> {
        match self {
            ChartLayout::Sunburst(r, l) => {
                draw::sunburst_node_at(l, *r, pos).map(|n| (&l.nodes[..], n))
            }
            ChartLayout::Icicle(r, l) => {
                draw::icicle_node_at(l, *r, pos).map(|n| (&l.nodes[..], n))
            }
        }
    }
}

/// The tree of `report` as shown (cut at `depth`, small children merged) and its charts: one
/// sunburst or icicle sized by the larger side, or A's and B's sunbursts side by side.
fn charts(
    report: &DiffReport,
    chart: DiffChart,
    depth: usize,
    size: egui::Vec2,
) -> (Shown, Vec<(Side, ChartLayout)>) {
    let metric = report.metric;
    let root_size = report.tree.larger(metric);
    let min = ((root_size as f64) * MERGE_BELOW).ceil() as u64;
    let shown = Shown::of(&report.tree, metric, depth.max(1), min.max(1));
    let area = Rect::from_min_max(pos2(4.0, HEADER), pos2(size.x - 4.0, size.y - LEGEND));
    // Rings for the levels there are (a one-level grouping needs no room for a second).
    let levels = depth.max(1).min(height(&shown).max(1));
    let difference = |side| {
        let mut tree = shown.sized(side, &mut 0);
        tree.name = String::from("B − A");
        tree
    };
    let layouts = match chart {
        DiffChart::Icicle => vec![(
            Side::Larger,
            ChartLayout::Icicle(
                area,
                memscape_heap::icicle(&difference(Side::Larger), Metric::Bytes, levels),
            ),
        )],
        DiffChart::SideBySide => {
            let half = area.width() / 2.0;
            [Side::A, Side::B]
                .into_iter()
                .enumerate()
                .map(|(k, side)| {
                    let cell = Rect::from_min_size(
                        pos2(area.min.x + k as f32 * half, area.min.y),
                        vec2(half, area.height() - 20.0),
                    );
                    let (tag, run) = match side {
                        Side::A => ("A", &report.a),
                        _ => ("B", &report.b),
                    };
                    let mut tree = shown.sized(side, &mut 0);
                    tree.name = format!("{tag} · {}", run.source);
                    let layout = memscape_heap::sunburst(&tree, Metric::Bytes, levels);
                    (side, ChartLayout::Sunburst(cell.shrink(6.0), layout))
                })
                .collect()
        }
        _ => vec![(
            Side::Larger,
            ChartLayout::Sunburst(
                area,
                memscape_heap::sunburst(&difference(Side::Larger), Metric::Bytes, levels),
            ),
        )],
    };
    (shown, layouts)
}

/// The difference charts of `report` (see [`charts`]): coloured by the change, new outlined,
/// gone faded; a header with both runs and a legend with the ramp.
pub fn tree_picture(
    report: &DiffReport,
    chart: DiffChart,
    depth: usize,
    size: egui::Vec2,
) -> Picture {
    let metric = report.metric;
    let (shown, layouts) = charts(report, chart, depth, size);
    let mut flat = Vec::new();
    shown.flatten(&mut flat);
    let ramp = change_ramp(&flat, metric);
    let mut pic = Picture::new(size, BACKGROUND);
    header(&mut pic, report, size);
    let fill = |nodes: &[LayoutNode], i: usize| {
        let node = nodes.get(i);
        let shown = node.and_then(|n| flat.get(n.group? as usize));
        match (node, shown) {
            (Some(n), Some(s)) => fill_of(s, n.depth, &ramp),
            _ => [128, 128, 128, 255],
        }
    };
    // Side by side, each centre says its run's total; elsewhere values are changes.
    let value = |n: &LayoutNode| match n.group.and_then(|g| flat.get(g as usize)) {
        Some(_) if n.depth == 0 && chart == DiffChart::SideBySide => match metric {
            Metric::Bytes => draw::human_bytes(n.bytes),
            Metric::Objects => format!("{} obj", ramp::short(n.bytes as f64)),
        },
        Some(s) => signed(s.change(), metric),
        None => String::new(),
    };
    let paint = NodePaint {
        fill: Box::new(fill),
        value: Box::new(value),
    };
    for (side, layout) in &layouts {
        match layout {
            ChartLayout::Icicle(area, layout) => {
                pic.extend(draw::icicle(layout, None, 1.0, *area, &paint, None));
                for s in &layout.shapes {
                    if is_new(&flat, &layout.nodes, s.node) && s.y1 > s.y0 {
                        let (w, h) = (area.width(), area.height());
                        pic.shapes.push(outline(Geometry::Rect {
                            min: [area.min.x + s.x0 as f32 * w, area.min.y + s.y0 as f32 * h],
                            max: [area.min.x + s.x1 as f32 * w, area.min.y + s.y1 as f32 * h],
                            corner_px: 0.0,
                        }));
                    }
                }
            }
            ChartLayout::Sunburst(rect, layout) => {
                pic.extend(draw::sunburst(layout, None, 1.0, *rect, &paint, None));
                new_outlines(&mut pic, &flat, layout, *rect);
                let (tag, run, total) = match side {
                    Side::A => ("A", &report.a, report.totals.bytes_a),
                    Side::B => ("B", &report.b, report.totals.bytes_b),
                    Side::Larger => continue,
                };
                let cell = rect.expand(6.0);
                pic.labels.push(Label::new(
                    pos2(cell.center().x, cell.bottom() + 10.0),
                    labels::fit(
                        &format!("{tag} · {} · {}", run.source, draw::human_bytes(total)),
                        12.0,
                        cell.width() - 12.0,
                    )
                    .unwrap_or_default(),
                    12.0,
                    TEXT,
                    Align2::CENTER_CENTER,
                ));
            }
        }
    }
    legend(&mut pic, &ramp, metric, size);
    pic
}

/// What the difference chart shows at a point: a group with its value in each run.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffHover {
    pub name: String,
    pub a: u64,
    pub b: u64,
    pub status: Status,
    pub metric: Metric,
    /// The run whose chart it is (side by side), else None (both).
    pub run: Option<&'static str>,
}

impl DiffHover {
    /// The tooltip: the name, A → B, the change (and by how much of A), the status.
    pub fn text(&self) -> String {
        let value = |v: u64| match self.metric {
            Metric::Bytes => draw::human_bytes(v),
            Metric::Objects => format!("{} objects", ramp::short(v as f64)),
        };
        let change = self.b as f64 - self.a as f64;
        let relative = if self.a > 0 {
            format!(" ({:+.1} %)", 100.0 * change / self.a as f64)
        } else {
            String::new()
        };
        let run = self
            .run
            .map_or(String::new(), |r| format!("{r}'s chart · "));
        format!(
            "{}\nA {}  →  B {}\n{run}{}{relative} · {}",
            self.name,
            value(self.a),
            value(self.b),
            signed(change, self.metric),
            self.status.name(),
        )
    }
}

/// The group the difference chart of `report` (as [`tree_picture`] draws it at `size`) shows
/// at `pos` (points in the picture), if any.
pub fn hover(
    report: &DiffReport,
    chart: DiffChart,
    depth: usize,
    size: egui::Vec2,
    pos: egui::Pos2,
) -> Option<DiffHover> {
    let (shown, layouts) = charts(report, chart, depth, size);
    let mut flat = Vec::new();
    shown.flatten(&mut flat);
    layouts.iter().find_map(|(side, layout)| {
        let (nodes, n) = layout.node_at(pos)?;
        let node = nodes.get(n as usize)?;
        let s = flat.get(node.group? as usize)?;
        Some(DiffHover {
            name: if node.depth == 0 {
                node.name.clone()
            } else {
                s.name.clone()
            },
            a: s.a,
            b: s.b,
            status: s.status,
            metric: report.metric,
            run: match side {
                Side::A => Some("A"),
                Side::B => Some("B"),
                Side::Larger => None,
            },
        })
    })
}

fn height(node: &Shown) -> usize {
    node.children
        .iter()
        .map(|c| height(c) + 1)
        .max()
        .unwrap_or(0)
}

fn is_new(flat: &[&Shown], nodes: &[LayoutNode], index: u32) -> bool {
    nodes
        .get(index as usize)
        .and_then(|n| flat.get(n.group? as usize))
        .is_some_and(|s| s.status == Status::New)
}

fn outline(geometry: Geometry) -> Shape {
    Shape::new(geometry, [0, 0, 0, 0]).with_border(NEW_OUTLINE, 2.0)
}

/// White outlines over the segments of what is new (same geometry as the sunburst's).
fn new_outlines(
    pic: &mut Picture,
    flat: &[&Shown],
    layout: &memscape_heap::Layout<memscape_heap::SunburstSegment>,
    rect: Rect,
) {
    let center = rect.center();
    let radius = 0.5 * rect.width().min(rect.height()) - 4.0;
    for s in &layout.shapes {
        if s.end_angle - s.start_angle > 1e-6 && is_new(flat, &layout.nodes, s.node) {
            pic.shapes.push(outline(Geometry::Sector {
                center: [center.x, center.y],
                r0: s.inner_radius as f32 * radius,
                r1: s.outer_radius as f32 * radius,
                a0: s.start_angle as f32 - FRAC_PI_2,
                a1: s.end_angle as f32 - FRAC_PI_2,
            }));
        }
    }
}

/// Both runs with their time points and totals, and the change.
fn header(pic: &mut Picture, report: &DiffReport, size: egui::Vec2) {
    let t = &report.totals;
    let side = |tag: &str, run: &memscape_heap::diff::DiffSide, bytes: u64| {
        format!(
            "{tag}  {} · {} at {} {}",
            run.source,
            draw::human_bytes(bytes),
            run.time,
            run.time_unit
        )
    };
    let width = size.x / 2.0 - 16.0;
    for (k, text) in [
        side("A", &report.a, t.bytes_a),
        side("B", &report.b, t.bytes_b),
    ]
    .iter()
    .enumerate()
    {
        pic.labels.push(Label::new(
            pos2(8.0 + k as f32 * size.x / 2.0, 12.0),
            labels::fit(text, 12.0, width).unwrap_or_default(),
            12.0,
            TEXT,
            Align2::LEFT_CENTER,
        ));
    }
    pic.labels.push(Label::new(
        pos2(8.0, 29.0),
        format!(
            "B − A: {} · {} grown, {} shrunk, {} new, {} gone",
            signed(t.bytes_change as f64, Metric::Bytes),
            t.grown,
            t.shrunk,
            t.new,
            t.gone
        ),
        11.0,
        DIM,
        Align2::LEFT_CENTER,
    ));
}

/// The diverging ramp with its ticks, and the key of the new and gone marks.
fn legend(pic: &mut Picture, ramp: &ColorRamp, metric: Metric, size: egui::Vec2) {
    let top = size.y - LEGEND + 6.0;
    let what = match metric {
        Metric::Bytes => "change in bytes (B − A)",
        Metric::Objects => "change in objects (B − A)",
    };
    pic.labels.push(Label::new(
        pos2(8.0, top + 5.0),
        what,
        11.0,
        DIM,
        Align2::LEFT_CENTER,
    ));
    let width = (size.x * 0.45).clamp(120.0, 420.0);
    ramp.draw(
        pic,
        Rect::from_min_size(pos2(8.0, top + 14.0), vec2(width, ramp::HEIGHT)),
        DIM,
    );
    let x = 8.0 + width + 24.0;
    let swatch = |pic: &mut Picture, x: f32, fill: [u8; 4], border: Option<[u8; 4]>, text: &str| {
        let mut s = Shape::new(
            Geometry::Rect {
                min: [x, top + 14.0],
                max: [x + 16.0, top + 26.0],
                corner_px: 0.0,
            },
            fill,
        );
        if let Some(b) = border {
            s = s.with_border(b, 2.0);
        }
        pic.shapes.push(s);
        pic.labels.push(Label::new(
            pos2(x + 22.0, top + 20.0),
            text,
            11.0,
            DIM,
            Align2::LEFT_CENTER,
        ));
    };
    let red = blue_red_srgb8(0.9);
    let blue = blue_red_srgb8(0.1);
    swatch(pic, x, red, Some(NEW_OUTLINE), "new (outlined)");
    swatch(
        pic,
        x + 120.0,
        [blue[0], blue[1], blue[2], GONE_ALPHA],
        None,
        "gone (faded)",
    );
}

/// The two allocation maps one above the other: each composed alone at its share of the size
/// (each map spans its own run, so the shared axis is the fraction of the run), with the frame
/// around them (run names, the normalized time axis).
pub struct StackedMaps {
    /// A's and B's pictures and where they lie.
    pub cells: Vec<(Rect, Picture)>,
    /// Names and the shared axis, over everything.
    pub frame: Picture,
    /// Each run's map and time axis, for hovering.
    pub runs: Vec<MapRun>,
}

/// One run's map in the stacked maps: where its time axis runs and how long the run is.
#[derive(Debug, Clone, PartialEq)]
pub struct MapRun {
    pub tag: &'static str,
    pub name: String,
    /// The map in the picture (points).
    pub plot: Rect,
    /// The run's length on the maps' time axis, and its unit.
    pub extent: u64,
    pub unit: &'static str,
}

impl MapRun {
    /// The tooltip over the maps at `pos` (points in the picture): the run and the time there,
    /// as a fraction of the run and in its unit.
    pub fn hover_text(runs: &[MapRun], pos: egui::Pos2) -> Option<String> {
        let run = runs.iter().find(|r| r.plot.contains(pos))?;
        let fraction = f64::from((pos.x - run.plot.left()) / run.plot.width().max(1.0));
        Some(format!(
            "{}  {}\n{:.1} % of the run · {} {}",
            run.tag,
            run.name,
            100.0 * fraction,
            ramp::short(fraction * run.extent as f64),
            run.unit
        ))
    }
}

impl StackedMaps {
    /// One picture: the cells moved into place (B's layer slots kept apart from A's).
    pub fn into_picture(self, size: egui::Vec2) -> Picture {
        let mut pic = Picture::new(size, crate::alloc_map::compose::BACKGROUND);
        for (k, (rect, mut cell)) in self.cells.into_iter().enumerate() {
            cell.translate(rect.min.to_vec2(), if k == 0 { 0 } else { 1 << 30 });
            pic.extend(cell);
        }
        pic.extend(self.frame);
        pic
    }
}

/// Height of each map's caption and of the shared axis, in points.
const CAPTION: f32 = 20.0;
const AXIS: f32 = 36.0;

/// A's and B's allocation maps one above the other on a shared normalized time axis.
pub fn maps(
    a: &Dataset,
    b: &Dataset,
    settings: &AllocMapSettings,
    size: egui::Vec2,
) -> Result<StackedMaps> {
    let cell_h = ((size.y - AXIS) / 2.0 - CAPTION).max(40.0);
    let mut cells = Vec::new();
    let mut frame = Picture::default();
    let mut plot_x: Option<(f32, f32)> = None;
    let mut runs = Vec::new();
    // One colour per thread, process or bin name in both maps.
    let names = [a, b]
        .into_iter()
        .map(|d| crate::alloc_map::compose::category_names(d, settings))
        .collect::<Result<Option<Vec<_>>>>()?;
    let shared = names.map(|n| SharedClasses::new(&n));
    for (k, (tag, dataset)) in [("A", a), ("B", b)].into_iter().enumerate() {
        let top = k as f32 * (cell_h + CAPTION);
        let picture = crate::alloc_map::compose::compose_with(
            dataset,
            settings,
            vec2(size.x, cell_h),
            shared.as_ref(),
        )?;
        // The first map layer's horizontal extent: where the time axis runs.
        if plot_x.is_none() {
            plot_x = picture.layers.iter().find_map(|l| match l {
                crate::picture::Layer::Map(m) => Some((m.rect.left(), m.rect.right())),
                _ => None,
            });
        }
        let plot = picture.layers.iter().find_map(|l| match l {
            crate::picture::Layer::Map(m) => Some(m.rect.translate(vec2(0.0, top + CAPTION))),
            _ => None,
        });
        let (trace, scene) = crate::alloc_map::compose::trace_of(dataset)?;
        let extent = scene.time_extent(settings.time);
        let unit = if trace.trace.meta.has_wall_time
            && settings.time == crate::alloc_map::scene::TimeAxis::Wall
        {
            "ns"
        } else {
            "events"
        };
        frame.labels.push(Label::new(
            pos2(8.0, top + CAPTION / 2.0),
            labels::fit(
                &format!(
                    "{tag}  {} · {} {unit} long",
                    dataset.name,
                    ramp::short(extent as f64)
                ),
                12.0,
                size.x - 16.0,
            )
            .unwrap_or_default(),
            12.0,
            TEXT,
            Align2::LEFT_CENTER,
        ));
        if let Some(plot) = plot {
            runs.push(MapRun {
                tag,
                name: dataset.name.clone(),
                plot,
                extent,
                unit,
            });
        }
        cells.push((
            Rect::from_min_size(pos2(0.0, top + CAPTION), vec2(size.x, cell_h)),
            picture,
        ));
    }
    // The shared axis: fractions of each run.
    let (x0, x1) = plot_x.unwrap_or((0.0, size.x));
    let y = size.y - AXIS + 4.0;
    frame.shapes.push(Shape::new(
        Geometry::Segment {
            a: [x0, y],
            b: [x1, y],
            width_px: 1.0,
        },
        [200, 200, 205, 255],
    ));
    for k in 0..=4 {
        let x = x0 + (x1 - x0) * k as f32 / 4.0;
        frame.shapes.push(Shape::new(
            Geometry::Segment {
                a: [x, y],
                b: [x, y + 4.0],
                width_px: 1.0,
            },
            [200, 200, 205, 255],
        ));
        let align = match k {
            0 => Align2::LEFT_TOP,
            4 => Align2::RIGHT_TOP,
            _ => Align2::CENTER_TOP,
        };
        frame.labels.push(Label::new(
            pos2(x, y + 6.0),
            format!("{}%", k * 25),
            10.0,
            DIM,
            align,
        ));
    }
    frame.labels.push(Label::new(
        pos2(0.5 * (x0 + x1), y + 19.0),
        "time, as a fraction of each run's length",
        10.0,
        DIM,
        Align2::CENTER_TOP,
    ));
    Ok(StackedMaps { cells, frame, runs })
}

/// Whether two datasets can be compared, and if not why.
pub fn accepts(a: &Dataset, b: &Dataset) -> std::result::Result<(), String> {
    for d in [a, b] {
        if let Err(e) = crate::heap_tree::model::accepts(d) {
            return Err(format!("{}: {e}", d.name));
        }
    }
    Ok(())
}

/// Short name of a node for lists (the function without parameters).
pub fn short(name: &str) -> &str {
    short_name(name)
}
