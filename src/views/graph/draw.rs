//! Dependence graphs as pictures: laid-out nodes as rounded boxes with their labels, edges as
//! routed polylines with arrowheads, coloured by the filter profile or by the difference to
//! another snapshot (IGV). World units are the layout's (about one point per unit at zoom 1).

use egui::{Align2, Pos2};
use memscape_graph::diff::Change;
use memscape_graph::filter::ViewGraph;
use memscape_graph::layout::Layout;
use memscape_render::shapes::{Geometry, Shape, ShapesView};

use super::model::LaidOut;
use crate::views::labels::Label;
use crate::views::picture::Picture;

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

/// Shapes of a laid-out graph in world units (draw with the view's `ShapesView`): block boxes
/// under edges under nodes. Difference colours override the profile's.
pub fn shapes(laid: &LaidOut, layout: &Layout, marks: &Marks) -> Vec<Shape> {
    let mut out: Vec<Shape> = laid
        .clusters
        .iter()
        .map(|(b, _)| {
            Shape::new(
                Geometry::Rect {
                    min: [b.x as f32, b.y as f32],
                    max: [(b.x + b.w) as f32, (b.y + b.h) as f32],
                    corner_px: 6.0,
                },
                CLUSTER_FILL,
            )
            .with_border(CLUSTER_BORDER, 1.0)
        })
        .collect();
    out.extend(graph_shapes(
        &laid.view_graph,
        layout,
        &laid.node_colors,
        &laid.edge_colors,
        marks,
    ));
    out
}

fn graph_shapes(
    view_graph: &ViewGraph,
    layout: &Layout,
    node_colors: &[Option<[u8; 4]>],
    edge_colors: &[Option<[u8; 4]>],
    marks: &Marks,
) -> Vec<Shape> {
    let mut out = Vec::new();
    for (i, route) in layout.edges.iter().enumerate() {
        let style = view_graph.edges.get(i);
        let mut color = edge_colors
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
        let width = if route.cut { 0.8 } else { 1.3 };
        // A cut edge is two stubs (points 0-1 and 2-3), not one line; self-loops are whole.
        let stubs = route.cut && route.from != route.to && route.points.len() == 4;
        for (k, pair) in route.points.windows(2).enumerate() {
            if stubs && k == 1 {
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
        if let [.., a, b] = route.points.as_slice() {
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
    for (i, node) in layout.nodes.iter().enumerate() {
        let style = view_graph.nodes.get(i);
        let mut fill = node_colors
            .get(i)
            .copied()
            .flatten()
            .or_else(|| style.and_then(|s| s.color))
            .unwrap_or(NODE);
        if style.is_some_and(|s| s.hidden) {
            fill[3] = 70;
        }
        let (border, width) = if marks.hovered == Some(i) || marks.selected == Some(i) {
            ([255, 255, 255, 255], 2.0)
        } else if marks.matches.binary_search(&i).is_ok() {
            (MATCH_BORDER, 2.5)
        } else {
            (NODE_BORDER, 1.0)
        };
        out.push(
            Shape::new(
                Geometry::Rect {
                    min: [node.x as f32, node.y as f32],
                    max: [(node.x + node.w) as f32, (node.y + node.h) as f32],
                    corner_px: 4.0,
                },
                fill,
            )
            .with_border(border, width),
        );
    }
    out
}

/// Node labels in screen points for `view` (world → points), for nodes inside `visible` (in
/// points); none when the zoom makes text smaller than 6 points.
pub fn labels(
    laid: &LaidOut,
    layout: &Layout,
    view: &ShapesView,
    visible: egui::Rect,
) -> Vec<Label> {
    let (view_graph, node_colors, clusters) = (&laid.view_graph, &laid.node_colors, &laid.clusters);
    let zoom = view.scale[0];
    let size = 11.0 * zoom;
    if size < 5.0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (b, title) in clusters {
        let p = view.to_pixels([
            (b.x + memscape_graph::layout::CLUSTER_PAD) as f32,
            (b.y + 3.0) as f32,
        ]);
        if visible.contains(Pos2::new(p[0], p[1])) && !title.is_empty() {
            out.push(Label::new(
                Pos2::new(p[0], p[1]),
                title.clone(),
                (10.0 * zoom).min(14.0),
                egui::Color32::from_gray(170),
                Align2::LEFT_TOP,
            ));
        }
    }
    for (i, node) in layout.nodes.iter().enumerate() {
        let p = view.to_pixels([node.x as f32, node.y as f32]);
        let q = view.to_pixels([(node.x + node.w) as f32, (node.y + node.h) as f32]);
        let r = egui::Rect::from_min_max(Pos2::new(p[0], p[1]), Pos2::new(q[0], q[1]));
        if !visible.intersects(r) {
            continue;
        }
        let Some(n) = view_graph.graph.nodes.get(i) else {
            continue;
        };
        let fill = node_colors
            .get(i)
            .copied()
            .flatten()
            .or_else(|| view_graph.nodes.get(i).and_then(|s| s.color))
            .unwrap_or(NODE);
        let text: String = n
            .label()
            .lines()
            .take(((r.height() / (size * 1.3)).floor() as usize).max(1))
            .collect::<Vec<_>>()
            .join("\n");
        let mut color = crate::views::picture::text_on(fill);
        if view_graph.nodes.get(i).is_some_and(|s| s.hidden) {
            color = color.gamma_multiply(0.45);
        }
        out.push(Label::new(
            r.center(),
            text,
            size.min(16.0),
            color,
            Align2::CENTER_CENTER,
        ));
    }
    out
}

/// The whole graph fitted into a `width`×`height` area.
pub fn fit_view(layout: &Layout, width: f32, height: f32, margin: f32) -> ShapesView {
    ShapesView::fit(
        [0.0, 0.0],
        [layout.width.max(1.0) as f32, layout.height.max(1.0) as f32],
        width,
        height,
        margin,
        true,
    )
}

/// The graph seen through `view` in a `width`×`height` picture (headless): shapes with the
/// transform baked in, so that the picture is in points like every other.
pub fn picture(
    laid: &LaidOut,
    marks: &Marks,
    view: &ShapesView,
    width: f32,
    height: f32,
) -> Picture {
    let shapes = shapes(laid, &laid.layout, marks)
        .into_iter()
        .map(|s| transform(s, view))
        .collect();
    let labels = labels(
        laid,
        &laid.layout,
        view,
        egui::Rect::from_min_size(Pos2::ZERO, egui::vec2(width, height)),
    );
    Picture { shapes, labels }
}

/// The satellite (overview) inset: the whole graph in `area` (points), without labels, and a
/// red frame around what `main` (the main view, `main_size` points large) shows.
pub fn satellite(
    laid: &LaidOut,
    main: &ShapesView,
    main_size: [f32; 2],
    area: egui::Rect,
) -> Picture {
    let mut picture = satellite_base(laid, area);
    if let Some(frame) = satellite_frame(laid, main, main_size, area) {
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

/// The inset's view: the whole layout fitted into `area`.
pub fn satellite_view(laid: &LaidOut, area: egui::Rect) -> ShapesView {
    let fit = fit_view(&laid.layout, area.width(), area.height(), 6.0);
    ShapesView {
        offset: [fit.offset[0] + area.min.x, fit.offset[1] + area.min.y],
        ..fit
    }
}

/// The inset's background and graph (changes only with the layout).
pub fn satellite_base(laid: &LaidOut, area: egui::Rect) -> Picture {
    let view = satellite_view(laid, area);
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
        graph_shapes(
            &laid.view_graph,
            &laid.layout,
            &laid.node_colors,
            &laid.edge_colors,
            &Marks::default(),
        )
        .into_iter()
        .map(|s| transform(s, &view)),
    );
    Picture {
        shapes,
        labels: Vec::new(),
    }
}

/// Where the main view's visible world rectangle lies in the inset (clamped to it).
pub fn satellite_frame(
    laid: &LaidOut,
    main: &ShapesView,
    main_size: [f32; 2],
    area: egui::Rect,
) -> Option<egui::Rect> {
    let view = satellite_view(laid, area);
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

/// The layout of `to` with every node moved `t` of the way from its box in `from` (matched by
/// node id; new nodes grow from their centre) and edges drawn straight between the moving
/// boxes until the move ends.
pub fn interpolated_layout(
    from: &super::model::LaidOut,
    to: &super::model::LaidOut,
    t: f32,
) -> Layout {
    use std::collections::HashMap;
    let t = f64::from(crate::views::picture::ease(t));
    let old: HashMap<&str, &memscape_graph::layout::NodeBox> = from
        .view_graph
        .graph
        .nodes
        .iter()
        .zip(&from.layout.nodes)
        .map(|(n, b)| (n.id.as_str(), b))
        .collect();
    let mut layout = to.layout.clone();
    for (node, b) in to
        .view_graph
        .graph
        .nodes
        .iter()
        .zip(layout.nodes.iter_mut())
    {
        let target = *b;
        let start = match old.get(node.id.as_str()) {
            Some(o) => **o,
            None => {
                let c = target.center();
                memscape_graph::layout::NodeBox {
                    x: c[0],
                    y: c[1],
                    w: 0.0,
                    h: 0.0,
                }
            }
        };
        let lerp = |a: f64, b: f64| a + (b - a) * t;
        b.x = lerp(start.x, target.x);
        b.y = lerp(start.y, target.y);
        b.w = lerp(start.w, target.w);
        b.h = lerp(start.h, target.h);
    }
    for e in &mut layout.edges {
        if let (Some(a), Some(b)) = (layout.nodes.get(e.from), layout.nodes.get(e.to)) {
            let (a, b) = (a.center(), b.center());
            e.points = vec![a, b];
        }
    }
    layout
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_glide_from_old_boxes_to_new_ones() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("crates/memscape-graph/tests/data/igv_difference.xml");
        let doc = memscape_graph::load_graphs(&[path.as_path()])
            .unwrap()
            .document;
        let show = super::super::model::ShowOptions::default();
        let a = super::super::model::lay_out(&doc, 0, None, &show).unwrap();
        let previous =
            memscape_graph::layout::PreviousPositions::from_layout(&a.view_graph.graph, &a.layout);
        let b = super::super::model::lay_out_near(&doc, 1, None, &show, Some(&previous)).unwrap();
        let start = interpolated_layout(&a, &b, 0.0);
        let end = interpolated_layout(&a, &b, 1.0);
        let mut shared = 0;
        for (i, n) in b.view_graph.graph.nodes.iter().enumerate() {
            assert_eq!(end.nodes[i], b.layout.nodes[i], "t = 1 is the new layout");
            if let Some(j) = a.view_graph.graph.nodes.iter().position(|m| m.id == n.id) {
                assert_eq!(
                    start.nodes[i], a.layout.nodes[j],
                    "t = 0: {} where it was",
                    n.id
                );
                shared += 1;
            } else {
                assert_eq!(start.nodes[i].w, 0.0, "a new node grows from nothing");
            }
        }
        assert!(shared >= 3);
    }
}
