//! The graph model shared by both importers, the filters, the layout and the difference.
//!
//! A [`Document`] is a tree of [`Group`]s (IGV groups, one per compiled method, possibly nested);
//! each group holds a sequence of [`Graph`]s, the snapshots of that method. Nodes are identified
//! by a string id that stays the same across the snapshots of one document, so a node can be
//! followed from one snapshot to the next and two snapshots can be compared.

use std::collections::HashMap;

/// Ordered `name → value` string properties. Names are unique: setting an existing name replaces
/// its value in place (IGV and DOT both let a later assignment override an earlier one).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(transparent)]
pub struct Properties(Vec<(String, String)>);

impl Properties {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn set(&mut self, name: impl Into<String>, value: impl Into<String>) {
        let name = name.into();
        let value = value.into();
        if let Some(slot) = self.0.iter_mut().find(|(n, _)| *n == name) {
            slot.1 = value;
        } else {
            self.0.push((name, value));
        }
    }

    pub fn remove(&mut self, name: &str) -> Option<String> {
        let at = self.0.iter().position(|(n, _)| n == name)?;
        Some(self.0.remove(at).1)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Same names with the same values, in any order.
    pub fn same_as(&self, other: &Properties) -> bool {
        self.len() == other.len() && self.iter().all(|(n, v)| other.get(n) == Some(v))
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for Properties {
    fn from_iter<T: IntoIterator<Item = (K, V)>>(iter: T) -> Self {
        let mut props = Properties::new();
        for (k, v) in iter {
            props.set(k, v);
        }
        props
    }
}

/// A node: its stable id and its properties.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Node {
    /// Stable across the snapshots of a document (IGV's `node id`, DOT's node id, or for DOT files
    /// whose ids are addresses, a key derived from the label: see [`crate::dot`]).
    pub id: String,
    pub properties: Properties,
}

/// Property keeping a node's id as written in its input when memscape matches it by another key
/// (DOT graphs whose ids are addresses: see [`crate::dot`]).
pub const INPUT_ID: &str = "dot_id";

impl Node {
    /// The node's id as written in its input (a DOT id such as `Node0xb676930`, an IGV or BGV
    /// node id), which [`Node::id`] differs from when nodes are matched by label.
    pub fn input_id(&self) -> &str {
        self.properties.get(INPUT_ID).unwrap_or(&self.id)
    }

    /// The text to show for the node: `text`, then `label`, then `name`, then the id.
    pub fn label(&self) -> &str {
        self.properties
            .get("text")
            .or_else(|| self.properties.get("label"))
            .or_else(|| self.properties.get("name"))
            .unwrap_or(&self.id)
    }
}

/// A directed edge between two nodes of the same graph (indices into [`Graph::nodes`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Edge {
    pub from: usize,
    pub to: usize,
    /// Output slot of the source (IGV `fromIndex`), 0 when absent.
    pub from_index: u32,
    /// Input slot of the target (IGV `toIndex`, or the legacy `index`), 0 when absent.
    pub to_index: u32,
    pub label: String,
    /// IGV's `type` (e.g. "control", "memory"); for DOT the `type` attribute when present.
    pub kind: String,
    /// Remaining attributes (DOT edge attributes; IGV edges have none beyond the fields above).
    pub properties: Properties,
}

/// A basic block of a control-flow graph (IGV `controlFlow › block`, or a DOT `cluster*`
/// subgraph).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Block {
    pub name: String,
    /// Shown title (a DOT cluster's `label`; empty for IGV blocks).
    pub label: String,
    /// Indices into [`Graph::nodes`].
    pub nodes: Vec<usize>,
    /// Names of successor blocks.
    pub successors: Vec<String>,
    /// Enclosing block (DOT clusters nest), index into [`Graph::blocks`].
    pub parent: Option<usize>,
}

/// One snapshot: nodes, edges, blocks.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Graph {
    pub name: String,
    pub properties: Properties,
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    pub blocks: Vec<Block>,
    #[serde(skip)]
    index: HashMap<String, usize>,
}

impl PartialEq for Graph {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.properties == other.properties
            && self.nodes == other.nodes
            && self.edges == other.edges
            && self.blocks == other.blocks
    }
}

impl Graph {
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            ..Self::default()
        }
    }

    /// Index of the node with this id.
    pub fn node_index(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    pub fn node(&self, id: &str) -> Option<&Node> {
        self.node_index(id).map(|i| &self.nodes[i])
    }

    /// Adds a node, or replaces the properties of the node with the same id; returns its index
    /// and whether it already existed.
    pub fn upsert_node(&mut self, id: &str, properties: Properties) -> (usize, bool) {
        if let Some(&i) = self.index.get(id) {
            self.nodes[i].properties = properties;
            (i, true)
        } else {
            let i = self.nodes.len();
            self.nodes.push(Node {
                id: id.to_owned(),
                properties,
            });
            self.index.insert(id.to_owned(), i);
            (i, false)
        }
    }

    /// Adds a node with this id if there is none; returns its index.
    pub fn ensure_node(&mut self, id: &str) -> usize {
        match self.index.get(id) {
            Some(&i) => i,
            None => self.upsert_node(id, Properties::new()).0,
        }
    }

    pub fn add_edge(&mut self, from: usize, to: usize) -> &mut Edge {
        self.edges.push(Edge {
            from,
            to,
            from_index: 0,
            to_index: 0,
            label: String::new(),
            kind: String::new(),
            properties: Properties::new(),
        });
        let last = self.edges.len() - 1;
        &mut self.edges[last]
    }

    /// Removes the nodes for which `keep` is false, with their edges, and renumbers the rest;
    /// block memberships follow.
    pub fn retain_nodes(&mut self, mut keep: impl FnMut(usize, &Node) -> bool) {
        let mut new_index = vec![usize::MAX; self.nodes.len()];
        let mut kept = Vec::with_capacity(self.nodes.len());
        for (i, node) in std::mem::take(&mut self.nodes).into_iter().enumerate() {
            if keep(i, &node) {
                new_index[i] = kept.len();
                kept.push(node);
            }
        }
        self.nodes = kept;
        self.edges.retain_mut(|e| {
            let (f, t) = (new_index[e.from], new_index[e.to]);
            e.from = f;
            e.to = t;
            f != usize::MAX && t != usize::MAX
        });
        for block in &mut self.blocks {
            block.nodes.retain_mut(|n| {
                *n = new_index[*n];
                *n != usize::MAX
            });
        }
        self.rebuild_index();
    }

    /// Rebuilds the id → index map after the node list was edited directly.
    pub fn rebuild_index(&mut self) {
        self.index = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.id.clone(), i))
            .collect();
    }

    /// Changes the id of node `index` (used by the DOT importer when it matches nodes by label).
    pub fn rename_node(&mut self, index: usize, id: String) {
        if let Some(node) = self.nodes.get_mut(index) {
            self.index.remove(&node.id);
            node.id = id.clone();
            self.index.insert(id, index);
        }
    }
}

/// A compiled method (IGV `method`): name, short name, bytecode index, bytecodes listing, and the
/// methods inlined into it.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Method {
    pub name: String,
    pub short_name: String,
    pub bci: Option<i64>,
    pub bytecodes: Option<String>,
    pub inlined: Vec<Method>,
    pub properties: Properties,
}

/// A group of snapshots (IGV `group`), with nested groups.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Group {
    pub properties: Properties,
    pub method: Option<Method>,
    /// True when the group was stored as differences (`difference="true"`); the graphs here are
    /// already rebuilt in full.
    pub difference: bool,
    pub graphs: Vec<Graph>,
    pub groups: Vec<Group>,
}

impl Group {
    pub fn name(&self) -> &str {
        self.properties.get("name").unwrap_or("")
    }
}

/// A whole input: document properties and groups. A DOT input becomes one group whose graphs
/// are the DOT graphs in file order.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Document {
    pub properties: Properties,
    pub groups: Vec<Group>,
}

impl Document {
    /// Every graph of the document in document order (depth first: a group's graphs, then its
    /// nested groups). `--snapshot N` indexes this list.
    pub fn snapshots(&self) -> Vec<&Graph> {
        fn walk<'a>(group: &'a Group, out: &mut Vec<&'a Graph>) {
            out.extend(group.graphs.iter());
            for g in &group.groups {
                walk(g, out);
            }
        }
        let mut out = Vec::new();
        for g in &self.groups {
            walk(g, &mut out);
        }
        out
    }
}
