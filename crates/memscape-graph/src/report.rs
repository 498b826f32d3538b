//! The report of `memscape layout GRAPH… [--snapshot N] [--json]`.

use std::time::Instant;

use crate::layout::{LayoutOptions, PreviousPositions, Progress, layout_graph};
use crate::model::Graph;

/// A node's box: top-left corner `x, y` and size `w, h`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct NodePosition {
    /// The node's id in the input (DOT id, IGV or BGV node id), to join the layout back to it.
    pub id: String,
    /// The text shown for the node.
    pub label: String,
    /// The key memscape matches the node by across snapshots, when it is not `id` (DOT graphs
    /// whose ids are addresses are matched by label).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

/// An edge's route as a polyline (`cut`: two stubs, points 0–1 and 2–3); `from` and `to` are
/// input ids like [`NodePosition::id`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct EdgeRouteReport {
    pub from: String,
    pub to: String,
    pub points: Vec<[f64; 2]>,
    pub reversed: bool,
    pub cut: bool,
}

/// The JSON of `memscape layout`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LayoutReport {
    pub graph: String,
    pub nodes: Vec<NodePosition>,
    pub edges: Vec<EdgeRouteReport>,
    /// Pairwise crossings of edge segments between adjacent layers.
    pub crossings: u64,
    pub layers: usize,
    pub layout_ms: f64,
}

/// Lays out `graph` and reports it; `previous` (the previous snapshot's layout) keeps the order of
/// unchanged nodes when `options.stable`.
pub fn layout_report(
    graph: &Graph,
    options: &LayoutOptions,
    previous: Option<&PreviousPositions>,
    progress: &mut dyn FnMut(Progress),
) -> LayoutReport {
    let start = Instant::now();
    let layout = layout_graph(graph, options, previous, progress);
    let layout_ms = start.elapsed().as_secs_f64() * 1e3;
    LayoutReport {
        graph: graph.name.clone(),
        nodes: graph
            .nodes
            .iter()
            .zip(&layout.nodes)
            .map(|(n, b)| NodePosition {
                id: n.input_id().to_owned(),
                label: n.label().to_owned(),
                key: (n.input_id() != n.id).then(|| n.id.clone()),
                x: b.x,
                y: b.y,
                w: b.w,
                h: b.h,
            })
            .collect(),
        edges: layout
            .edges
            .iter()
            .map(|r| EdgeRouteReport {
                from: graph.nodes[r.from].input_id().to_owned(),
                to: graph.nodes[r.to].input_id().to_owned(),
                points: r.points.clone(),
                reversed: r.reversed,
                cut: r.cut,
            })
            .collect(),
        crossings: layout.crossings,
        layers: layout.layers,
        layout_ms,
    }
}
