//! The graph view's input: one snapshot of an imported document, filtered by a profile,
//! optionally compared with another snapshot, cut down to a set of shown nodes or to the
//! changes, laid out (with the graph's blocks as boxes when asked).

use std::collections::BTreeSet;

use memscape_graph::diff::{Change, difference_graph};
use memscape_graph::filter::{Profile, ViewGraph, apply_profile};
use memscape_graph::layout::{ClusterBox, Layout, LayoutOptions, layout_clustered, layout_graph};
use memscape_graph::navigate::{self, Visibility};

/// What of a snapshot is shown and how, beyond the profile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShowOptions {
    /// Compare with this snapshot (added / removed / changed coloured).
    pub diff_from: Option<usize>,
    /// With a difference: only changed nodes (and the ends of changed edges, semi-transparent).
    pub changes_only: bool,
    /// Lay out the blocks (CFG basic blocks, DOT clusters) as boxes around their nodes.
    pub blocks: bool,
    /// IGV's set S: these node ids fully shown, their neighbours semi-transparent, nothing
    /// else. None: every node.
    pub focus: Option<BTreeSet<String>>,
}

/// A laid-out snapshot with the colours of its differences (if any).
pub struct LaidOut {
    pub view_graph: ViewGraph,
    pub layout: Layout,
    pub node_colors: Vec<Option<[u8; 4]>>,
    pub edge_colors: Vec<Option<[u8; 4]>>,
    /// Block boxes (with `ShowOptions::blocks`) and their titles.
    pub clusters: Vec<(ClusterBox, String)>,
    pub title: String,
    /// Nodes of the snapshot before the cut to the focus set or the changes.
    pub total_nodes: usize,
}

/// Builds snapshot `snapshot` of `doc`, filtered by the shipped or given `profile` (None: no
/// filter), differences against `diff_from` coloured.
pub fn lay_out(
    doc: &memscape_graph::model::Document,
    snapshot: usize,
    profile: Option<&Profile>,
    show: &ShowOptions,
) -> crate::error::Result<LaidOut> {
    lay_out_near(doc, snapshot, profile, show, None)
}

/// [`lay_out`], keeping nodes present in `previous` near their places there (IGV's stable
/// layout while stepping through snapshots; not with blocks as boxes).
pub fn lay_out_near(
    doc: &memscape_graph::model::Document,
    snapshot: usize,
    profile: Option<&Profile>,
    show: &ShowOptions,
    previous: Option<&memscape_graph::layout::PreviousPositions>,
) -> crate::error::Result<LaidOut> {
    let snapshots = doc.snapshots();
    let count = snapshots.len();
    let graph = snapshots.get(snapshot).copied().ok_or_else(|| {
        crate::error::ViewError::msg(format!(
            "snapshot {snapshot}: the input has {count} graph(s), numbered from 0"
        ))
    })?;
    let (graph, node_changes, edge_changes, title) = match show.diff_from {
        Some(from) => {
            let base = snapshots.get(from).copied().ok_or_else(|| {
                crate::error::ViewError::msg(format!(
                    "difference from snapshot {from}: the input has {count} graph(s)"
                ))
            })?;
            let d = difference_graph(base, graph, false);
            let title = d.graph.name.clone();
            (d.graph, d.node_changes, d.edge_changes, title)
        }
        None => (graph.clone(), Vec::new(), Vec::new(), graph.name.clone()),
    };
    let none = Profile {
        name: "none".into(),
        description: String::new(),
        rules: Vec::new(),
    };
    let mut view_graph = apply_profile(&graph, profile.unwrap_or(&none))?;
    let total_nodes = view_graph.graph.nodes.len();
    // Differences are per input node; the filtered view keeps a map back to them.
    let node_change = |view: &ViewGraph, i: usize| {
        view.source_node
            .get(i)
            .and_then(|&s| node_changes.get(s).copied())
            .unwrap_or(Change::Unchanged)
    };
    let mut node_colors: Vec<Option<[u8; 4]>> = (0..view_graph.graph.nodes.len())
        .map(|i| super::draw::change_color(node_change(&view_graph, i)))
        .collect();
    let edges_match = edge_changes.len() == view_graph.graph.edges.len();
    let mut edge_colors: Vec<Option<[u8; 4]>> = if edges_match {
        edge_changes
            .iter()
            .map(|&c| super::draw::change_color(c))
            .collect()
    } else {
        vec![None; view_graph.graph.edges.len()]
    };
    let mut cut_to = |view_graph: &mut ViewGraph, keep: &[bool], dim: &[bool]| {
        let (cut, kept_edges) = navigate::restrict(view_graph, keep);
        let kept_nodes: Vec<usize> = (0..keep.len()).filter(|&i| keep[i]).collect();
        node_colors = kept_nodes
            .iter()
            .map(|&i| node_colors.get(i).copied().flatten())
            .collect();
        edge_colors = kept_edges
            .iter()
            .map(|&i| edge_colors.get(i).copied().flatten())
            .collect();
        *view_graph = cut;
        for (new, &old) in kept_nodes.iter().enumerate() {
            if dim.get(old).copied().unwrap_or(false)
                && let Some(style) = view_graph.nodes.get_mut(new)
            {
                style.hidden = true;
            }
        }
    };
    if show.changes_only && show.diff_from.is_some() {
        let n = view_graph.graph.nodes.len();
        let changed: Vec<bool> = (0..n)
            .map(|i| node_change(&view_graph, i) != Change::Unchanged)
            .collect();
        let mut keep = changed.clone();
        if edges_match {
            for (e, c) in view_graph.graph.edges.iter().zip(&edge_changes) {
                if *c != Change::Unchanged {
                    keep[e.from] = true;
                    keep[e.to] = true;
                }
            }
        }
        let dim: Vec<bool> = (0..n).map(|i| keep[i] && !changed[i]).collect();
        cut_to(&mut view_graph, &keep, &dim);
    }
    if let Some(focus) = &show.focus {
        let shown = focus.iter().cloned().collect();
        let vis = navigate::neighbourhood(&view_graph.graph, &shown);
        let keep: Vec<bool> = vis.iter().map(|v| *v != Visibility::Hidden).collect();
        let dim: Vec<bool> = vis.iter().map(|v| *v == Visibility::Neighbor).collect();
        cut_to(&mut view_graph, &keep, &dim);
    }
    let options = LayoutOptions::default();
    let (layout, clusters) = if show.blocks {
        let sizes: Vec<(f64, f64)> = view_graph
            .graph
            .nodes
            .iter()
            .map(|n| memscape_graph::layout::node_size(n.label(), &options))
            .collect();
        let (layout, boxes) = layout_clustered(&view_graph.graph, &sizes, &options, &mut |_| {});
        let clusters = boxes
            .into_iter()
            .map(|b| {
                let title = view_graph
                    .graph
                    .blocks
                    .get(b.block)
                    .map(|blk| {
                        if blk.label.is_empty() {
                            blk.name.clone()
                        } else {
                            blk.label.clone()
                        }
                    })
                    .unwrap_or_default();
                (b, title)
            })
            .collect();
        (layout, clusters)
    } else {
        (
            layout_graph(&view_graph.graph, &options, previous, &mut |_| {}),
            Vec::new(),
        )
    };
    Ok(LaidOut {
        view_graph,
        layout,
        node_colors,
        edge_colors,
        clusters,
        title,
        total_nodes,
    })
}
