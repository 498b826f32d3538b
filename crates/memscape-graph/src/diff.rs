//! Difference between two graphs: nodes matched by id, edges by their ends and slots.
//!
//! A node is *changed* when its properties differ (any name or value, order ignored). An edge is
//! identified by `(from id, to id, fromIndex, toIndex, type, label)` plus its occurrence number
//! among identical keys (parallel edges); it is *changed* when its other attributes differ.

use std::collections::HashMap;

use crate::model::{Edge, Graph};

/// How an element differs between the two graphs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    Unchanged,
    Added,
    Removed,
    Changed,
}

/// The identity of an edge across graphs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct EdgeKey {
    pub from: String,
    pub to: String,
    pub from_index: u32,
    pub to_index: u32,
    pub kind: String,
    pub label: String,
    /// 0 for the first edge with this key, 1 for the second parallel one, …
    pub occurrence: u32,
}

/// The difference from graph A to graph B (the `--diff A..B` of `memscape render`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct GraphDiff {
    pub added_nodes: Vec<String>,
    pub removed_nodes: Vec<String>,
    pub changed_nodes: Vec<String>,
    pub added_edges: Vec<EdgeKey>,
    pub removed_edges: Vec<EdgeKey>,
    pub changed_edges: Vec<EdgeKey>,
}

impl GraphDiff {
    pub fn is_empty(&self) -> bool {
        self.added_nodes.is_empty()
            && self.removed_nodes.is_empty()
            && self.changed_nodes.is_empty()
            && self.added_edges.is_empty()
            && self.removed_edges.is_empty()
            && self.changed_edges.is_empty()
    }
}

/// Keys of all edges of a graph, in edge order.
pub fn edge_keys(graph: &Graph) -> Vec<EdgeKey> {
    let mut seen: HashMap<(usize, usize, u32, u32, &str, &str), u32> = HashMap::new();
    graph
        .edges
        .iter()
        .map(|e| {
            let n = seen
                .entry((e.from, e.to, e.from_index, e.to_index, &e.kind, &e.label))
                .or_insert(0);
            let key = EdgeKey {
                from: graph.nodes[e.from].id.clone(),
                to: graph.nodes[e.to].id.clone(),
                from_index: e.from_index,
                to_index: e.to_index,
                kind: e.kind.clone(),
                label: e.label.clone(),
                occurrence: *n,
            };
            *n += 1;
            key
        })
        .collect()
}

/// Compares two graphs.
pub fn diff(a: &Graph, b: &Graph) -> GraphDiff {
    let mut out = GraphDiff::default();
    for node in &b.nodes {
        match a.node(&node.id) {
            None => out.added_nodes.push(node.id.clone()),
            Some(old) if !old.properties.same_as(&node.properties) => {
                out.changed_nodes.push(node.id.clone());
            }
            Some(_) => {}
        }
    }
    for node in &a.nodes {
        if b.node_index(&node.id).is_none() {
            out.removed_nodes.push(node.id.clone());
        }
    }
    let keys_a = edge_keys(a);
    let keys_b = edge_keys(b);
    let index_a: HashMap<&EdgeKey, &Edge> = keys_a.iter().zip(&a.edges).collect();
    let index_b: HashMap<&EdgeKey, &Edge> = keys_b.iter().zip(&b.edges).collect();
    for (key, edge) in keys_b.iter().zip(&b.edges) {
        match index_a.get(key) {
            None => out.added_edges.push(key.clone()),
            Some(old) if !old.properties.same_as(&edge.properties) => {
                out.changed_edges.push(key.clone());
            }
            Some(_) => {}
        }
    }
    for key in &keys_a {
        if !index_b.contains_key(key) {
            out.removed_edges.push(key.clone());
        }
    }
    out
}

/// A graph holding everything of A and B (B's version where both have it), with the change of
/// each node and edge: what the difference view draws.
#[derive(Debug, Clone)]
pub struct DifferenceGraph {
    pub graph: Graph,
    pub node_changes: Vec<Change>,
    pub edge_changes: Vec<Change>,
}

/// Builds the union of `a` and `b` colored by [`Change`]; `only_changes` keeps only what
/// differs (and the ends of changed edges).
pub fn difference_graph(a: &Graph, b: &Graph, only_changes: bool) -> DifferenceGraph {
    let d = diff(a, b);
    let mut graph = b.clone();
    graph.name = format!("{} → {}", a.name, b.name);
    let mut node_changes = vec![Change::Unchanged; graph.nodes.len()];
    for id in &d.added_nodes {
        if let Some(i) = graph.node_index(id) {
            node_changes[i] = Change::Added;
        }
    }
    for id in &d.changed_nodes {
        if let Some(i) = graph.node_index(id) {
            node_changes[i] = Change::Changed;
        }
    }
    for id in &d.removed_nodes {
        if let Some(node) = a.node(id) {
            graph.upsert_node(id, node.properties.clone());
            node_changes.push(Change::Removed);
        }
    }
    let mut edge_changes = vec![Change::Unchanged; graph.edges.len()];
    let keys_b = edge_keys(b);
    let added: std::collections::HashSet<&EdgeKey> = d.added_edges.iter().collect();
    let changed: std::collections::HashSet<&EdgeKey> = d.changed_edges.iter().collect();
    for (i, key) in keys_b.iter().enumerate() {
        if added.contains(key) {
            edge_changes[i] = Change::Added;
        } else if changed.contains(key) {
            edge_changes[i] = Change::Changed;
        }
    }
    let removed: std::collections::HashSet<&EdgeKey> = d.removed_edges.iter().collect();
    for (key, edge) in edge_keys(a).iter().zip(&a.edges) {
        if !removed.contains(key) {
            continue;
        }
        let (Some(f), Some(t)) = (graph.node_index(&key.from), graph.node_index(&key.to)) else {
            continue;
        };
        let mut copy = edge.clone();
        copy.from = f;
        copy.to = t;
        graph.edges.push(copy);
        edge_changes.push(Change::Removed);
    }
    if only_changes {
        let mut keep_node: Vec<bool> = node_changes
            .iter()
            .map(|c| *c != Change::Unchanged)
            .collect();
        for (e, c) in graph.edges.iter().zip(&edge_changes) {
            if *c != Change::Unchanged {
                keep_node[e.from] = true;
                keep_node[e.to] = true;
            }
        }
        let mut changes = edge_changes.iter();
        graph
            .edges
            .retain(|_| changes.next().is_some_and(|c| *c != Change::Unchanged));
        edge_changes.retain(|c| *c != Change::Unchanged);
        let mut kept = keep_node.iter();
        node_changes.retain(|_| kept.next().copied().unwrap_or(false));
        graph.retain_nodes(|i, _| keep_node[i]);
    }
    DifferenceGraph {
        graph,
        node_changes,
        edge_changes,
    }
}
