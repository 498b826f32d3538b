//! The graph view's input: one snapshot of an imported document, filtered by a profile and
//! optionally compared with another snapshot, laid out.

use memscape_graph::diff::difference_graph;
use memscape_graph::filter::{Profile, ViewGraph, apply_profile};
use memscape_graph::layout::{Layout, LayoutOptions, layout_graph};

/// A laid-out snapshot with the colours of its differences (if any).
pub struct LaidOut {
    pub view_graph: ViewGraph,
    pub layout: Layout,
    pub node_colors: Vec<Option<[u8; 4]>>,
    pub edge_colors: Vec<Option<[u8; 4]>>,
    pub title: String,
}

/// Builds snapshot `snapshot` of `doc`, filtered by the shipped or given `profile` (None: no
/// filter), differences against `diff_from` coloured.
pub fn lay_out(
    doc: &memscape_graph::model::Document,
    snapshot: usize,
    profile: Option<&Profile>,
    diff_from: Option<usize>,
) -> anyhow::Result<LaidOut> {
    lay_out_near(doc, snapshot, profile, diff_from, None)
}

/// [`lay_out`], keeping nodes present in `previous` near their places there (IGV's stable
/// layout while stepping through snapshots).
pub fn lay_out_near(
    doc: &memscape_graph::model::Document,
    snapshot: usize,
    profile: Option<&Profile>,
    diff_from: Option<usize>,
    previous: Option<&memscape_graph::layout::PreviousPositions>,
) -> anyhow::Result<LaidOut> {
    let snapshots = doc.snapshots();
    let count = snapshots.len();
    let graph = snapshots.get(snapshot).copied().ok_or_else(|| {
        anyhow::anyhow!("snapshot {snapshot}: the input has {count} graph(s), numbered from 0")
    })?;
    let (graph, node_changes, edge_changes, title) = match diff_from {
        Some(from) => {
            let base = snapshots.get(from).copied().ok_or_else(|| {
                anyhow::anyhow!("--diff-from {from}: the input has {count} graph(s)")
            })?;
            let d = difference_graph(base, graph, false);
            let title = d.graph.name.clone();
            (d.graph, d.node_changes, d.edge_changes, title)
        }
        None => (graph.clone(), Vec::new(), Vec::new(), graph.name.clone()),
    };
    let view_graph = match profile {
        Some(p) => apply_profile(&graph, p)?,
        None => apply_profile(
            &graph,
            &Profile {
                name: "none".into(),
                description: String::new(),
                rules: Vec::new(),
            },
        )?,
    };
    // Differences are per input node; the filtered view keeps a map back to them.
    let node_colors = view_graph
        .source_node
        .iter()
        .map(|&s| {
            node_changes
                .get(s)
                .copied()
                .and_then(super::draw::change_color)
        })
        .collect();
    let edge_colors: Vec<Option<[u8; 4]>> = if edge_changes.len() == view_graph.graph.edges.len() {
        edge_changes
            .iter()
            .map(|&c| super::draw::change_color(c))
            .collect()
    } else {
        vec![None; view_graph.graph.edges.len()]
    };
    let layout = layout_graph(
        &view_graph.graph,
        &LayoutOptions::default(),
        previous,
        &mut |_| {},
    );
    Ok(LaidOut {
        view_graph,
        layout,
        node_colors,
        edge_colors,
        title,
    })
}
