//! Dependence graphs as pictures: laid-out nodes as rounded boxes with their labels, edges as
//! routed polylines with arrowheads, coloured by the filter profile or by the difference to
//! another snapshot (IGV). World units are the layout's (about one point per unit at zoom 1).

use egui::{Align2, Pos2};
use memscape_graph::diff::Change;
use memscape_graph::layout::{Layout, NodeBox};
use memscape_render::shapes::{Geometry, Shape, ShapesView};

use super::model::LaidOut;
use crate::label::Label;
use crate::picture::Picture;

pub const BACKGROUND: [u8; 4] = [22, 24, 30, 255];
const NODE: [u8; 4] = [52, 58, 72, 255];
const NODE_BORDER: [u8; 4] = [120, 130, 150, 255];
const EDGE: [u8; 4] = [150, 156, 170, 200];

/// What a node or edge looks like beyond its geometry.
pub fn change_color(change: Change) -> Option<[u8; 4]> {
    match change {
        Change::Unchanged => None,
        Change::Added => Some([70, 170, 90, 255]),
        Change::Removed => Some([200, 70, 70, 255]),
        Change::Changed => Some([220, 180, 60, 255]),
    }
}

/// Nodes marked by the user: hovered, selected (properties panel), search matches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Marks {
    pub hovered: Option<usize>,
    pub selected: Option<usize>,
    /// Sorted node indices.
    pub matches: Vec<usize>,
}

const MATCH_BORDER: [u8; 4] = [250, 200, 60, 255];
const CLUSTER_FILL: [u8; 4] = [255, 255, 255, 10];
const CLUSTER_BORDER: [u8; 4] = [110, 120, 140, 200];

/// A node as drawn: its box in world units, colours and shown text (everything styles, marks
/// and differences decide), so that two drawings can be blended ([`between`]).
#[derive(Debug, Clone, PartialEq)]
pub struct DrawNode {
    pub id: String,
    pub rect: NodeBox,
    pub fill: [u8; 4],
    pub border: [u8; 4],
    pub border_px: f32,
    pub text: String,
    pub text_color: egui::Color32,
}

/// An edge as drawn: its route in world units (a cut edge's two stubs are points 0–1 and 2–3).
#[derive(Debug, Clone, PartialEq)]
pub struct DrawEdge {
    /// (source id, target id, source slot, target slot, occurrence among equal ones).
    pub key: (String, String, u32, u32, usize),
    pub points: Vec<[f64; 2]>,
    pub color: [u8; 4],
    pub width_px: f32,
    pub stubs: bool,
}

/// A block box with its title.
#[derive(Debug, Clone, PartialEq)]
pub struct DrawCluster {
    pub rect: NodeBox,
    pub title: String,
    pub opacity: f32,
}

/// A laid-out graph resolved into what is drawn, in world units.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Drawing {
    pub clusters: Vec<DrawCluster>,
    pub edges: Vec<DrawEdge>,
    pub nodes: Vec<DrawNode>,
    /// Extent of the layout (for fitting).
    pub size: [f64; 2],
}

/// Resolves `laid` drawn with `layout` (its own, or a moved copy) and the user's marks.
/// Difference colours override the profile's.
pub fn drawing(laid: &LaidOut, layout: &Layout, marks: &Marks) -> Drawing {
    let view_graph = &laid.view_graph;
    let clusters: Vec<DrawCluster> = laid
        .clusters
        .iter()
        .map(|(b, title)| DrawCluster {
            rect: NodeBox {
                x: b.x,
                y: b.y,
                w: b.w,
                h: b.h,
            },
            title: title.clone(),
            opacity: 1.0,
        })
        .collect();
    let mut occurrence: std::collections::HashMap<(usize, usize, u32, u32), usize> =
        std::collections::HashMap::new();
    let mut edges = Vec::with_capacity(layout.edges.len());
    for (i, route) in layout.edges.iter().enumerate() {
        let style = view_graph.edges.get(i);
        let mut color = laid
            .edge_colors
            .get(i)
            .copied()
            .flatten()
            .or_else(|| style.and_then(|s| s.color))
            .unwrap_or(EDGE);
        // Edges of semi-transparent nodes (neighbours of the shown set) fade with them.
        let faded = |v: usize| view_graph.nodes.get(v).is_some_and(|s| s.hidden);
        if style.is_some_and(|s| s.hidden) || faded(route.from) || faded(route.to) {
            color[3] = 50;
        }
        let (fi, ti) = view_graph
            .graph
            .edges
            .get(i)
            .map_or((0, 0), |e| (e.from_index, e.to_index));
        let seen = occurrence
            .entry((route.from, route.to, fi, ti))
            .or_insert(0);
        let id = |v: usize| {
            view_graph
                .graph
                .nodes
                .get(v)
                .map(|n| n.id.clone())
                .unwrap_or_default()
        };
        edges.push(DrawEdge {
            key: (id(route.from), id(route.to), fi, ti, *seen),
            points: route.points.clone(),
            color,
            width_px: if route.cut { 0.8 } else { 1.3 },
            // A cut edge is two stubs, not one line; self-loops are whole.
            stubs: route.cut && route.from != route.to && route.points.len() == 4,
        });
        *seen += 1;
    }
    let mut nodes = Vec::with_capacity(layout.nodes.len());
    for (i, node) in layout.nodes.iter().enumerate() {
        let Some(n) = view_graph.graph.nodes.get(i) else {
            continue;
        };
        let style = view_graph.nodes.get(i);
        let mut fill = laid
            .node_colors
            .get(i)
            .copied()
            .flatten()
            .or_else(|| style.and_then(|s| s.color))
            .unwrap_or(NODE);
        let mut text_color = crate::picture::text_on(fill);
        if style.is_some_and(|s| s.hidden) {
            fill[3] = 70;
            text_color = text_color.gamma_multiply(0.45);
        }
        let (border, border_px) = if marks.hovered == Some(i) || marks.selected == Some(i) {
            ([255, 255, 255, 255], 2.0)
        } else if marks.matches.binary_search(&i).is_ok() {
            (MATCH_BORDER, 2.5)
        } else {
            (NODE_BORDER, 1.0)
        };
        nodes.push(DrawNode {
            id: n.id.clone(),
            rect: *node,
            fill,
            border,
            border_px,
            text: n.label().to_owned(),
            text_color,
        });
    }
    Drawing {
        clusters,
        edges,
        nodes,
        size: [layout.width, layout.height],
    }
}

/// Shapes of a drawing in world units (draw with the view's `ShapesView`): block boxes under
/// edges under nodes.
pub fn drawing_shapes(d: &Drawing) -> Vec<Shape> {
    let mut out: Vec<Shape> = d
        .clusters
        .iter()
        .map(|c| {
            let r = c.rect;
            Shape::new(
                Geometry::Rect {
                    min: [r.x as f32, r.y as f32],
                    max: [(r.x + r.w) as f32, (r.y + r.h) as f32],
                    corner_px: 6.0,
                },
                fade(CLUSTER_FILL, c.opacity),
            )
            .with_border(fade(CLUSTER_BORDER, c.opacity), 1.0)
        })
        .collect();
    out.extend(edge_and_node_shapes(d));
    out
}

fn edge_and_node_shapes(d: &Drawing) -> Vec<Shape> {
    let mut out = Vec::new();
    for e in &d.edges {
        let (color, width) = (e.color, e.width_px);
        for (k, pair) in e.points.windows(2).enumerate() {
            if e.stubs && k == 1 {
                continue;
            }
            out.push(Shape::new(
                Geometry::Segment {
                    a: [pair[0][0] as f32, pair[0][1] as f32],
                    b: [pair[1][0] as f32, pair[1][1] as f32],
                    width_px: width,
                },
                color,
            ));
        }
        // Arrowhead: a chevron along the last segment, in world units so that it scales with
        // the boxes (cut edges get one on the target stub).
        if let [.., a, b] = e.points.as_slice() {
            let (dx, dy) = ((b[0] - a[0]) as f32, (b[1] - a[1]) as f32);
            let len = (dx * dx + dy * dy).sqrt();
            if len > 1e-3 {
                let (ux, uy) = (dx / len, dy / len);
                let tip = [b[0] as f32, b[1] as f32];
                let (back, side) = (7.0_f32.min(len), 3.5_f32);
                for sign in [-1.0_f32, 1.0] {
                    out.push(Shape::new(
                        Geometry::Segment {
                            a: [
                                tip[0] - ux * back - uy * side * sign,
                                tip[1] - uy * back + ux * side * sign,
                            ],
                            b: tip,
                            width_px: width + 0.2,
                        },
                        color,
                    ));
                }
            }
        }
    }
    for n in &d.nodes {
        let r = n.rect;
        out.push(
            Shape::new(
                Geometry::Rect {
                    min: [r.x as f32, r.y as f32],
                    max: [(r.x + r.w) as f32, (r.y + r.h) as f32],
                    corner_px: 4.0,
                },
                n.fill,
            )
            .with_border(n.border, n.border_px),
        );
    }
    out
}

/// Shapes of a laid-out graph in world units (draw with the view's `ShapesView`): block boxes
/// under edges under nodes. Difference colours override the profile's.
pub fn shapes(laid: &LaidOut, layout: &Layout, marks: &Marks) -> Vec<Shape> {
    drawing_shapes(&drawing(laid, layout, marks))
}

/// Node labels in screen points for `view` (world → points), for nodes inside `visible` (in
/// points); none when the zoom makes text smaller than 6 points.
pub fn labels(
    laid: &LaidOut,
    layout: &Layout,
    view: &ShapesView,
    visible: egui::Rect,
) -> Vec<Label> {
    drawing_labels(&drawing(laid, layout, &Marks::default()), view, visible)
}

/// Smallest font size of a node title drawn when the full text is too small to read.
const TITLE_MIN_SIZE: f32 = 8.0;

/// When the nodes' text is too small to read (zoomed out): each node's first line alone (an
/// LLVM block's name, an IGV node's name), at a readable size where it fits in its box,
/// shortened with an ellipsis where it does not.
fn title_labels(d: &Drawing, view: &ShapesView, visible: egui::Rect) -> Vec<Label> {
    // Proportional glyphs average about 0.55 em.
    const EM_PER_CHAR: f32 = 0.55;
    let mut out = Vec::new();
    for n in &d.nodes {
        let node = n.rect;
        let p = view.to_pixels([node.x as f32, node.y as f32]);
        let q = view.to_pixels([(node.x + node.w) as f32, (node.y + node.h) as f32]);
        let r = egui::Rect::from_min_max(Pos2::new(p[0], p[1]), Pos2::new(q[0], q[1]));
        let size = (r.height() * 0.6).min(11.0);
        if !visible.intersects(r) || n.text_color.a() == 0 || size < TITLE_MIN_SIZE {
            continue;
        }
        let Some(first) = n.text.lines().map(str::trim).find(|l| !l.is_empty()) else {
            continue;
        };
        let first = first.trim_end_matches(':');
        let fits = ((r.width() - 4.0) / (size * EM_PER_CHAR)).floor() as usize;
        if fits < 3 {
            continue;
        }
        let text = if first.chars().count() <= fits {
            first.to_owned()
        } else {
            let mut t: String = first.chars().take(fits.saturating_sub(1)).collect();
            t.push('…');
            t
        };
        out.push(Label::new(
            r.center(),
            text,
            size,
            n.text_color,
            Align2::CENTER_CENTER,
        ));
    }
    out
}

/// The labels of a drawing (block titles, node text) in screen points for `view`.
pub fn drawing_labels(d: &Drawing, view: &ShapesView, visible: egui::Rect) -> Vec<Label> {
    let zoom = view.scale[0];
    let size = 11.0 * zoom;
    if size < 5.0 {
        return title_labels(d, view, visible);
    }
    let mut out = Vec::new();
    for c in &d.clusters {
        let b = c.rect;
        let p = view.to_pixels([
            (b.x + memscape_graph::layout::CLUSTER_PAD) as f32,
            (b.y + 3.0) as f32,
        ]);
        if visible.contains(Pos2::new(p[0], p[1])) && !c.title.is_empty() && c.opacity > 0.0 {
            out.push(Label::new(
                Pos2::new(p[0], p[1]),
                c.title.clone(),
                (10.0 * zoom).min(14.0),
                egui::Color32::from_gray(170).gamma_multiply(c.opacity),
                Align2::LEFT_TOP,
            ));
        }
    }
    for n in &d.nodes {
        let node = n.rect;
        let p = view.to_pixels([node.x as f32, node.y as f32]);
        let q = view.to_pixels([(node.x + node.w) as f32, (node.y + node.h) as f32]);
        let r = egui::Rect::from_min_max(Pos2::new(p[0], p[1]), Pos2::new(q[0], q[1]));
        if !visible.intersects(r) || n.text_color.a() == 0 {
            continue;
        }
        let text: String = n
            .text
            .lines()
            .take(((r.height() / (size * 1.3)).floor() as usize).max(1))
            .collect::<Vec<_>>()
            .join("\n");
        out.push(Label::new(
            r.center(),
            text,
            size.min(16.0),
            n.text_color,
            Align2::CENTER_CENTER,
        ));
    }
    out
}

/// `color` with its alpha multiplied by `opacity` (0 to 1).
fn fade(mut color: [u8; 4], opacity: f32) -> [u8; 4] {
    color[3] = (f32::from(color[3]) * opacity.clamp(0.0, 1.0)).round() as u8;
    color
}

fn lerp_f64(a: f64, b: f64, u: f64) -> f64 {
    a + (b - a) * u
}

fn lerp_rgba(a: [u8; 4], b: [u8; 4], u: f32) -> [u8; 4] {
    std::array::from_fn(|k| {
        (f32::from(a[k]) + (f32::from(b[k]) - f32::from(a[k])) * u).round() as u8
    })
}

fn lerp_box(a: NodeBox, b: NodeBox, u: f64) -> NodeBox {
    NodeBox {
        x: lerp_f64(a.x, b.x, u),
        y: lerp_f64(a.y, b.y, u),
        w: lerp_f64(a.w, b.w, u),
        h: lerp_f64(a.h, b.h, u),
    }
}

fn lerp_text_color(a: egui::Color32, b: egui::Color32, u: f32) -> egui::Color32 {
    let (a, b) = (a.to_srgba_unmultiplied(), b.to_srgba_unmultiplied());
    let c = lerp_rgba(a, b, u);
    egui::Color32::from_rgba_unmultiplied(c[0], c[1], c[2], c[3])
}

/// Cumulative arc length of a polyline, normalized to [0, 1] (all 0 for a point).
fn arc_params(points: &[[f64; 2]]) -> Vec<f64> {
    let mut acc = vec![0.0; points.len()];
    for k in 1..points.len() {
        let (a, b) = (points[k - 1], points[k]);
        acc[k] = acc[k - 1] + ((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2)).sqrt();
    }
    let total = acc.last().copied().unwrap_or(0.0);
    if total > 0.0 {
        for v in &mut acc {
            *v /= total;
        }
    }
    acc
}

/// The point at normalized arc length `t` of a polyline with parameters `params`.
fn point_at(points: &[[f64; 2]], params: &[f64], t: f64) -> [f64; 2] {
    let k = params.partition_point(|&p| p < t);
    if k == 0 {
        return points[0];
    }
    if k >= points.len() {
        return points[points.len() - 1];
    }
    let (p0, p1) = (params[k - 1], params[k]);
    let f = if p1 > p0 { (t - p0) / (p1 - p0) } else { 0.0 };
    [
        lerp_f64(points[k - 1][0], points[k][0], f),
        lerp_f64(points[k - 1][1], points[k][1], f),
    ]
}

/// The route `u` of the way from `a` to `b`: pointwise when both have as many points, else
/// both resampled at the union of their vertices' arc-length positions (so each end is its
/// polyline exactly, with extra points on its segments).
pub fn lerp_route(a: &[[f64; 2]], b: &[[f64; 2]], u: f64) -> Vec<[f64; 2]> {
    if a.is_empty() || b.is_empty() {
        return if u < 0.5 { a.to_vec() } else { b.to_vec() };
    }
    if a.len() == b.len() {
        return a
            .iter()
            .zip(b)
            .map(|(p, q)| [lerp_f64(p[0], q[0], u), lerp_f64(p[1], q[1], u)])
            .collect();
    }
    let (pa, pb) = (arc_params(a), arc_params(b));
    let mut ts: Vec<f64> = pa.iter().chain(&pb).copied().collect();
    ts.sort_by(f64::total_cmp);
    ts.dedup_by(|x, y| (*x - *y).abs() < 1e-9);
    ts.iter()
        .map(|&t| {
            let (p, q) = (point_at(a, &pa, t), point_at(b, &pb, t));
            [lerp_f64(p[0], q[0], u), lerp_f64(p[1], q[1], u)]
        })
        .collect()
}

/// The drawing `u` (0 to 1, already eased) of the way from `a` to `b`: nodes present in both
/// (by id) glide from their old box to the new one, their colours blend; nodes only in `a` fade
/// out where they were, nodes only in `b` fade in where they will be. Edges match by their ends'
/// ids, slots and occurrence; matched routes morph ([`lerp_route`]), the rest fade. Block boxes
/// with the same title move, others fade.
pub fn between(a: &Drawing, b: &Drawing, u: f32) -> Drawing {
    use std::collections::HashMap;
    let u = u.clamp(0.0, 1.0);
    if u <= 0.0 {
        return a.clone();
    }
    if u >= 1.0 {
        return b.clone();
    }
    let uf = f64::from(u);
    let fade_node = |n: &DrawNode, opacity: f32| DrawNode {
        fill: fade(n.fill, opacity),
        border: fade(n.border, opacity),
        text_color: n.text_color.gamma_multiply(opacity),
        ..n.clone()
    };
    let fade_edge = |e: &DrawEdge, opacity: f32| DrawEdge {
        color: fade(e.color, opacity),
        ..e.clone()
    };
    // Nodes.
    let old: HashMap<&str, &DrawNode> = a.nodes.iter().map(|n| (n.id.as_str(), n)).collect();
    let new: HashMap<&str, &DrawNode> = b.nodes.iter().map(|n| (n.id.as_str(), n)).collect();
    let mut nodes: Vec<DrawNode> = a
        .nodes
        .iter()
        .filter(|n| !new.contains_key(n.id.as_str()))
        .map(|n| fade_node(n, 1.0 - u))
        .collect();
    for n in &b.nodes {
        nodes.push(match old.get(n.id.as_str()) {
            Some(o) => DrawNode {
                id: n.id.clone(),
                rect: lerp_box(o.rect, n.rect, uf),
                fill: lerp_rgba(o.fill, n.fill, u),
                border: lerp_rgba(o.border, n.border, u),
                border_px: o.border_px + (n.border_px - o.border_px) * u,
                text: if u < 0.5 {
                    o.text.clone()
                } else {
                    n.text.clone()
                },
                text_color: lerp_text_color(o.text_color, n.text_color, u),
            },
            None => fade_node(n, u),
        });
    }
    // Edges.
    let old_edges: HashMap<&(String, String, u32, u32, usize), &DrawEdge> =
        a.edges.iter().map(|e| (&e.key, e)).collect();
    let new_keys: std::collections::HashSet<&(String, String, u32, u32, usize)> =
        b.edges.iter().map(|e| &e.key).collect();
    let mut edges: Vec<DrawEdge> = a
        .edges
        .iter()
        .filter(|e| !new_keys.contains(&e.key))
        .map(|e| fade_edge(e, 1.0 - u))
        .collect();
    for e in &b.edges {
        match old_edges.get(&e.key) {
            Some(o) if o.stubs == e.stubs => edges.push(DrawEdge {
                key: e.key.clone(),
                points: lerp_route(&o.points, &e.points, uf),
                color: lerp_rgba(o.color, e.color, u),
                width_px: o.width_px + (e.width_px - o.width_px) * u,
                stubs: e.stubs,
            }),
            Some(o) => {
                // Cut on one side only: the two drawings cross-fade.
                edges.push(fade_edge(o, 1.0 - u));
                edges.push(fade_edge(e, u));
            }
            None => edges.push(fade_edge(e, u)),
        }
    }
    // Block boxes.
    let mut clusters = Vec::new();
    let mut used = vec![false; b.clusters.len()];
    for c in &a.clusters {
        let partner = b
            .clusters
            .iter()
            .enumerate()
            .find(|(j, d)| !used[*j] && d.title == c.title);
        match partner {
            Some((j, d)) => {
                used[j] = true;
                clusters.push(DrawCluster {
                    rect: lerp_box(c.rect, d.rect, uf),
                    title: d.title.clone(),
                    opacity: c.opacity + (d.opacity - c.opacity) * u,
                });
            }
            None => clusters.push(DrawCluster {
                opacity: c.opacity * (1.0 - u),
                ..c.clone()
            }),
        }
    }
    for (j, d) in b.clusters.iter().enumerate() {
        if !used[j] {
            clusters.push(DrawCluster {
                opacity: d.opacity * u,
                ..d.clone()
            });
        }
    }
    Drawing {
        clusters,
        edges,
        nodes,
        size: [
            lerp_f64(a.size[0], b.size[0], uf),
            lerp_f64(a.size[1], b.size[1], uf),
        ],
    }
}

/// The most a fitted graph is enlarged: its node boxes are laid out around their labels, which
/// keep their size in points; past this a graph of a node or two (a Graal dump's first
/// snapshot, "Before phase …", is `Start` alone) filled the pane with one box that read as a
/// panel, not a node.
pub const FIT_SCALE_MAX: f32 = 2.0;

/// The whole graph fitted into a `width`×`height` area, enlarged at most [`FIT_SCALE_MAX`]
/// times, centred.
pub fn fit_view(layout: &Layout, width: f32, height: f32, margin: f32) -> ShapesView {
    let fit = fit_size([layout.width, layout.height], width, height, margin);
    let scale = fit.scale[0].min(fit.scale[1]);
    if scale <= FIT_SCALE_MAX {
        return fit;
    }
    let used = [
        layout.width.max(1.0) as f32 * FIT_SCALE_MAX,
        layout.height.max(1.0) as f32 * FIT_SCALE_MAX,
    ];
    ShapesView {
        scale: [FIT_SCALE_MAX, FIT_SCALE_MAX],
        offset: [0.5 * (width - used[0]), 0.5 * (height - used[1])],
    }
}

/// A drawing of extent `size` fitted into a `width`×`height` area.
pub fn fit_size(size: [f64; 2], width: f32, height: f32, margin: f32) -> ShapesView {
    ShapesView::fit(
        [0.0, 0.0],
        [size[0].max(1.0) as f32, size[1].max(1.0) as f32],
        width,
        height,
        margin,
        true,
    )
}

/// The drawing seen through `view` in a `width`×`height` picture (headless): shapes with the
/// transform baked in, so that the picture is in points like every other; labels without
/// marks, as in the GUI.
pub fn drawing_picture(d: &Drawing, view: &ShapesView, width: f32, height: f32) -> Picture {
    let shapes = drawing_shapes(d)
        .into_iter()
        .map(|s| transform(s, view))
        .collect();
    let labels = drawing_labels(
        d,
        view,
        egui::Rect::from_min_size(Pos2::ZERO, egui::vec2(width, height)),
    );
    Picture {
        shapes,
        labels,
        ..Picture::default()
    }
}

/// The satellite (overview) inset: the whole drawing in `area` (points), without labels,
/// and a red frame around what `main` (the main view, `main_size` points large) shows.
pub fn drawing_satellite(
    d: &Drawing,
    main: &ShapesView,
    main_size: [f32; 2],
    area: egui::Rect,
) -> Picture {
    let mut picture = satellite_drawing_base(d, area);
    if let Some(frame) = satellite_frame_of(d.size, main, main_size, area) {
        picture.shapes.push(
            Shape::new(
                Geometry::Rect {
                    min: [frame.min.x, frame.min.y],
                    max: [frame.max.x, frame.max.y],
                    corner_px: 0.0,
                },
                SATELLITE_FRAME_FILL,
            )
            .with_border(SATELLITE_FRAME, 1.5),
        );
    }
    picture
}

pub const SATELLITE_FRAME: [u8; 4] = [235, 70, 70, 255];
pub const SATELLITE_FRAME_FILL: [u8; 4] = [230, 60, 60, 28];

/// The inset's view: a drawing of extent `size` fitted into `area`.
pub fn satellite_view(size: [f64; 2], area: egui::Rect) -> ShapesView {
    let fit = fit_size(size, area.width(), area.height(), 6.0);
    ShapesView {
        offset: [fit.offset[0] + area.min.x, fit.offset[1] + area.min.y],
        ..fit
    }
}

/// The inset's background and graph (changes only with the layout).
pub fn satellite_base(laid: &LaidOut, area: egui::Rect) -> Picture {
    satellite_drawing_base(&drawing(laid, &laid.layout, &Marks::default()), area)
}

fn satellite_drawing_base(d: &Drawing, area: egui::Rect) -> Picture {
    let view = satellite_view(d.size, area);
    // The overview shows no marks (hover, selection, matches): plain borders.
    let unmarked = Drawing {
        nodes: d
            .nodes
            .iter()
            .map(|n| DrawNode {
                border: [NODE_BORDER[0], NODE_BORDER[1], NODE_BORDER[2], n.border[3]],
                border_px: 1.0,
                ..n.clone()
            })
            .collect(),
        ..d.clone()
    };
    let d = &unmarked;
    let mut shapes = vec![
        Shape::new(
            Geometry::Rect {
                min: [area.min.x, area.min.y],
                max: [area.max.x, area.max.y],
                corner_px: 4.0,
            },
            [14, 16, 20, 235],
        )
        .with_border([90, 96, 110, 255], 1.0),
    ];
    shapes.extend(
        edge_and_node_shapes(d)
            .into_iter()
            .map(|s| transform(s, &view)),
    );
    Picture {
        shapes,
        ..Picture::default()
    }
}

/// Where the main view's visible world rectangle lies in the inset (clamped to it).
pub fn satellite_frame(
    laid: &LaidOut,
    main: &ShapesView,
    main_size: [f32; 2],
    area: egui::Rect,
) -> Option<egui::Rect> {
    satellite_frame_of(
        [laid.layout.width, laid.layout.height],
        main,
        main_size,
        area,
    )
}

fn satellite_frame_of(
    size: [f64; 2],
    main: &ShapesView,
    main_size: [f32; 2],
    area: egui::Rect,
) -> Option<egui::Rect> {
    let view = satellite_view(size, area);
    let p = view.to_pixels(main.to_world([0.0, 0.0]));
    let q = view.to_pixels(main.to_world(main_size));
    let r = egui::Rect::from_min_max(Pos2::new(p[0], p[1]), Pos2::new(q[0], q[1])).intersect(area);
    (r.width() > 0.0 && r.height() > 0.0).then_some(r)
}

/// A shape with `view` applied to its world coordinates (pixel-sized parts stay as they are).
pub fn transform(mut s: Shape, view: &ShapesView) -> Shape {
    let t = |p: [f32; 2]| view.to_pixels(p);
    s.geometry = match s.geometry {
        Geometry::Rect {
            min,
            max,
            corner_px,
        } => Geometry::Rect {
            min: t(min),
            max: t(max),
            corner_px,
        },
        Geometry::PixelRect {
            center,
            size_px,
            corner_px,
        } => Geometry::PixelRect {
            center: t(center),
            size_px,
            corner_px,
        },
        Geometry::Disc { center, radius } => Geometry::Disc {
            center: t(center),
            radius: radius * view.scale[0],
        },
        Geometry::PixelDisc { center, radius_px } => Geometry::PixelDisc {
            center: t(center),
            radius_px,
        },
        Geometry::Sector {
            center,
            r0,
            r1,
            a0,
            a1,
        } => Geometry::Sector {
            center: t(center),
            r0: r0 * view.scale[0],
            r1: r1 * view.scale[0],
            a0,
            a1,
        },
        Geometry::Segment { a, b, width_px } => Geometry::Segment {
            a: t(a),
            b: t(b),
            width_px,
        },
    };
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn laid_pair() -> (LaidOut, LaidOut) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../memscape-graph/tests/data/igv_difference.xml");
        let doc = memscape_graph::load_graphs(&[path.as_path()])
            .unwrap()
            .document;
        let show = super::super::model::ShowOptions::default();
        let a = super::super::model::lay_out(&doc, 0, None, &show).unwrap();
        let b = super::super::model::lay_out(&doc, 1, None, &show).unwrap();
        (a, b)
    }

    #[test]
    fn a_graph_of_one_node_is_not_blown_up_to_the_pane() {
        let (a, _) = laid_pair();
        let big = fit_view(&a.layout, 240.0, 200.0, 12.0);
        let whole = fit_size([a.layout.width, a.layout.height], 240.0, 200.0, 12.0);
        assert_eq!((big.scale, big.offset), (whole.scale, whole.offset));
        // A Graal dump's first snapshot: `Start` alone, a box of about 60 × 20.
        let mut one = a.layout.clone();
        (one.width, one.height) = (60.0, 20.0);
        let view = fit_view(&one, 1280.0, 778.0, 12.0);
        assert_eq!(view.scale, [FIT_SCALE_MAX; 2]);
        assert_eq!(view.to_pixels([30.0, 10.0]), [640.0, 389.0], "centred");
    }

    #[test]
    fn zoomed_out_nodes_keep_a_readable_title() {
        let demo = crate::demo::by_name("demo:cfg").unwrap();
        let dataset = crate::dataset::load(&demo.source(), &|_, _| {}).unwrap();
        let crate::dataset::DatasetContent::Graphs(g) = &dataset.content else {
            panic!("the CFG demo is a graph file");
        };
        let show = super::super::model::ShowOptions::default();
        let laid = super::super::model::lay_out(&g.document, 0, None, &show).unwrap();
        let d = drawing(&laid, &laid.layout, &Marks::default());
        // Fit into 640 × 480: the blocks' instructions would be under 5 px.
        let view = fit_size([laid.layout.width, laid.layout.height], 640.0, 480.0, 8.0);
        assert!(11.0 * view.scale[0] < 5.0, "zoomed out ({})", view.scale[0]);
        let visible = egui::Rect::from_min_size(Pos2::ZERO, egui::vec2(640.0, 480.0));
        let labels = drawing_labels(&d, &view, visible);
        let texts: Vec<&str> = labels.iter().map(|l| l.text.as_str()).collect();
        assert!(
            texts.contains(&"entry") && texts.contains(&"for.cond"),
            "{texts:?}"
        );
        for l in &labels {
            assert!(l.size >= TITLE_MIN_SIZE, "{} at {}", l.text, l.size);
            assert!(!l.text.contains('\n'), "one line: {:?}", l.text);
        }
    }

    #[test]
    fn snapshots_glide_shared_nodes_and_fade_the_others() {
        let (a, b) = laid_pair();
        let (da, db) = (
            drawing(&a, &a.layout, &Marks::default()),
            drawing(&b, &b.layout, &Marks::default()),
        );
        assert_eq!(between(&da, &db, 0.0), da, "u = 0 is the old drawing");
        assert_eq!(between(&da, &db, 1.0), db, "u = 1 is the new drawing");
        let mid = between(&da, &db, 0.5);
        let find = |d: &Drawing, id: &str| d.nodes.iter().find(|n| n.id == id).cloned();
        let (mut glided, mut faded_in, mut faded_out) = (0, 0, 0);
        for n in &mid.nodes {
            match (find(&da, &n.id), find(&db, &n.id)) {
                (Some(o), Some(e)) => {
                    // Halfway between the two boxes, fully opaque.
                    assert!((n.rect.x - (o.rect.x + e.rect.x) / 2.0).abs() < 1e-9);
                    assert!((n.rect.y - (o.rect.y + e.rect.y) / 2.0).abs() < 1e-9);
                    assert_eq!(n.fill[3], e.fill[3]);
                    glided += 1;
                }
                (None, Some(e)) => {
                    assert_eq!(n.rect, e.rect, "a new node fades in where it will be");
                    assert!(n.fill[3] < e.fill[3] && n.fill[3] > 0);
                    faded_in += 1;
                }
                (Some(o), None) => {
                    assert_eq!(n.rect, o.rect, "a removed node fades out where it was");
                    assert!(n.fill[3] < o.fill[3] && n.fill[3] > 0);
                    faded_out += 1;
                }
                (None, None) => panic!("{} from nowhere", n.id),
            }
        }
        assert!(
            glided >= 3 && faded_in >= 1 && faded_out >= 1,
            "{glided} {faded_in} {faded_out}"
        );
        // Every edge of either drawing is there halfway (matched ones once).
        let shared = db
            .edges
            .iter()
            .filter(|e| da.edges.iter().any(|o| o.key == e.key))
            .count();
        assert_eq!(mid.edges.len(), da.edges.len() + db.edges.len() - shared);
    }

    #[test]
    fn routes_morph_from_one_polyline_to_the_other() {
        let a = vec![[0.0, 0.0], [0.0, 10.0]];
        let b = vec![[0.0, 0.0], [10.0, 5.0], [0.0, 10.0]];
        let start = lerp_route(&a, &b, 0.0);
        let end = lerp_route(&a, &b, 1.0);
        assert_eq!(end, b, "the end is the target polyline exactly");
        assert!(
            start.iter().all(|p| p[0].abs() < 1e-9),
            "the start lies on the source"
        );
        assert_eq!(start.first(), a.first());
        assert_eq!(start.last(), a.last());
        let mid = lerp_route(&a, &b, 0.5);
        assert!((mid[1][0] - 5.0).abs() < 1e-9, "{mid:?}");
        assert_eq!(lerp_route(&a, &a, 0.3), a);
    }
}
