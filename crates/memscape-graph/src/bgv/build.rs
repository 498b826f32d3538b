//! From graph bodies as read to the model, the way IGV builds its graphs from a BGV stream: node
//! properties `idx`, `hasPredecessor`, the node's own properties (IGV's reserved names prefixed
//! `!data.`), `name` from the class's name template, `class`; successor edges of kind
//! `Successor`, input edges of their input type; blocks named by their id.

use std::collections::HashMap;

use memscape_io::{Location, Warnings};

use super::pool::{Length, RawGraph, RawNode, Value, simple_name};
use crate::model::{Block, Graph, Properties};

/// Property names IGV reserves for itself; a node property of the same name is kept as
/// `!data.NAME`.
const RESERVED: [&str; 6] = ["hasPredecessor", "name", "class", "id", "idx", "block"];

/// The kind of a control-flow (successor) edge, as IGV names it.
pub const SUCCESSOR_KIND: &str = "Successor";

/// A graph built from a body, with the graphs nested in its node properties (each named after
/// its node and property), in reading order.
pub(super) struct Built {
    pub graph: Graph,
    pub nested: Vec<Graph>,
}

/// Where warnings about one graph point: the offset of its body in the stream.
pub(super) struct Context<'a> {
    pub warnings: &'a mut Warnings,
    pub at: Location,
}

/// An input or successor edge as read, before its ends are resolved.
struct SlotEdge {
    /// The node whose slot it is.
    node: usize,
    /// The node id in the slot.
    other: i32,
    label: String,
    kind: String,
    /// Input edges: the target's input slot; successor edges: the source's output slot.
    slot: u32,
}

pub(super) fn build_graph(raw: &RawGraph, name: String, cx: &mut Context<'_>) -> Built {
    let mut graph = Graph::new(name);
    let mut nested = Vec::new();
    for (key, value) in &raw.properties {
        match value {
            Value::Graph(body) => {
                let sub = build_graph(body, format!("{} › {key}", graph.name), cx);
                nested.push(sub.graph);
                nested.extend(sub.nested);
            }
            _ => graph.properties.set(key.clone(), value.text(Length::Long)),
        }
    }

    // Nodes first (edges may point forward), then their slot edges.
    let mut index: HashMap<i32, usize> = HashMap::with_capacity(raw.nodes.len());
    let mut successors = Vec::new();
    let mut inputs = Vec::new();
    for node in &raw.nodes {
        let (at, existed) = graph.upsert_node(&node.id.to_string(), Properties::new());
        if existed {
            cx.warnings.add(
                "duplicate_node",
                format!(
                    "graph {:?}: node {} appears twice; the later one is kept",
                    graph.name, node.id
                ),
                cx.at.clone(),
            );
        }
        index.insert(node.id, at);
        slot_edges(node, at, &mut inputs, &mut successors);
    }
    let has_successor: Vec<bool> = {
        let mut has = vec![false; graph.nodes.len()];
        for e in &successors {
            has[e.node] = true;
        }
        has
    };

    // Properties and names need the edges (`{i#name}` lists the nodes in a slot).
    for node in &raw.nodes {
        let at = index[&node.id];
        let mut props = node_properties(node, &graph.name, &mut nested, cx);
        let name = node_name(node, &inputs, &successors, at);
        props.set("name", name);
        props.set("class", node.class.class_name.clone());
        match simple_name(&node.class.class_name) {
            "BeginNode" => props.set("shortName", "B"),
            "EndNode" => props.set("shortName", "E"),
            _ => {}
        }
        graph.nodes[at].properties = props;
    }

    // IGV's order: every successor edge, then every input edge.
    for e in successors.iter().chain(&inputs) {
        let Some(&other) = index.get(&e.other) else {
            cx.warnings.add(
                "edge_unknown_node",
                format!(
                    "graph {:?}: node {} has {} edge {} to node {}, which is not in the graph",
                    graph.name, graph.nodes[e.node].id, e.kind, e.label, e.other
                ),
                cx.at.clone(),
            );
            continue;
        };
        let successor = e.kind == SUCCESSOR_KIND;
        let (from, to) = if successor {
            (e.node, other)
        } else {
            (other, e.node)
        };
        let edge = graph.add_edge(from, to);
        edge.label = e.label.clone();
        edge.kind = e.kind.clone();
        if successor {
            edge.from_index = e.slot;
        } else {
            edge.to_index = e.slot;
            // IGV draws the data output of a node that also has successors on its second port.
            edge.from_index = u32::from(has_successor[other]);
        }
    }

    graph.blocks = blocks(raw, &index, &mut graph, cx);
    Built { graph, nested }
}

/// The node's input and successor edges, numbered per node as IGV does: input slots after the
/// predecessor, successor slots from 0, counting only filled slots.
fn slot_edges(
    node: &RawNode,
    at: usize,
    inputs: &mut Vec<SlotEdge>,
    successors: &mut Vec<SlotEdge>,
) {
    let mut slot = u32::from(node.has_predecessor);
    for (port, ids) in node.class.inputs.iter().zip(&node.inputs) {
        for (j, &other) in ids.iter().enumerate() {
            if other < 0 {
                continue;
            }
            inputs.push(SlotEdge {
                node: at,
                other,
                label: slot_label(&port.name, port.list, j),
                kind: port.kind.clone(),
                slot,
            });
            slot += 1;
        }
    }
    let mut slot = 0;
    for (port, ids) in node.class.successors.iter().zip(&node.successors) {
        for (j, &other) in ids.iter().enumerate() {
            if other < 0 {
                continue;
            }
            successors.push(SlotEdge {
                node: at,
                other,
                label: slot_label(&port.name, port.list, j),
                kind: SUCCESSOR_KIND.to_owned(),
                slot,
            });
            slot += 1;
        }
    }
}

fn slot_label(name: &str, list: bool, index: usize) -> String {
    if list {
        format!("{name}[{index}]")
    } else {
        name.to_owned()
    }
}

fn node_properties(
    node: &RawNode,
    graph_name: &str,
    nested: &mut Vec<Graph>,
    cx: &mut Context<'_>,
) -> Properties {
    let mut props = Properties::new();
    props.set("idx", node.id.to_string());
    if node.has_predecessor {
        props.set("hasPredecessor", "true");
    }
    for (key, value) in &node.properties {
        if let Value::Graph(body) = value {
            let sub = build_graph(body, format!("{graph_name} › node {} {key}", node.id), cx);
            nested.push(sub.graph);
            nested.extend(sub.nested);
            continue;
        }
        let text = value.text(Length::Long);
        if RESERVED.contains(&key.as_str()) {
            props.set(format!("!data.{key}"), text);
        } else {
            props.set(key.clone(), text);
        }
    }
    props
}

/// The node's name: its class's template filled in (IGV's rules), or the short class name.
fn node_name(node: &RawNode, inputs: &[SlotEdge], successors: &[SlotEdge], at: usize) -> String {
    let template = &node.class.template;
    if template.is_empty() {
        return node.class.short_name().to_owned();
    }
    fill_template(template, |input, name, length| {
        if input {
            let ids: Vec<String> = inputs
                .iter()
                .chain(successors)
                .filter(|e| e.node == at && label_is_slot(&e.label, name))
                .map(|e| e.other.to_string())
                .collect();
            return ids.join(", ");
        }
        node.properties
            .iter()
            .find(|(k, _)| k == name)
            .map_or_else(|| "?".to_owned(), |(_, v)| v.text(length))
    })
}

/// Replaces `{p#property}`, `{p#property/l|m|s}` (long, medium, short) and `{i#slot}` in a
/// name template by `fill(is_input, name, length)`; anything else is kept as written.
pub(super) fn fill_template(
    template: &str,
    mut fill: impl FnMut(bool, &str, Length) -> String,
) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match parse_placeholder(after) {
            Some((input, name, length, used)) => {
                out.push_str(&fill(input, name, length));
                rest = &after[used..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `p#name/s}` → (false, "name", Short, bytes used including the `}`).
fn parse_placeholder(text: &str) -> Option<(bool, &str, Length, usize)> {
    let input = match text.get(..2)? {
        "p#" => false,
        "i#" => true,
        _ => return None,
    };
    let body = &text[2..];
    let name_len = body
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '$' || c == '_'))
        .unwrap_or(body.len());
    if name_len == 0 {
        return None;
    }
    let name = &body[..name_len];
    let tail = &body[name_len..];
    let (length, used) = match tail.as_bytes() {
        [b'}', ..] => (Length::Long, 1),
        [b'/', b'l', b'}', ..] => (Length::Long, 3),
        [b'/', b'm', b'}', ..] => (Length::Medium, 3),
        [b'/', b's', b'}', ..] => (Length::Short, 3),
        _ => return None,
    };
    Some((input, name, length, 2 + name_len + used))
}

/// Whether an edge label (`values[2]`, `x`) belongs to the slot `name`.
fn label_is_slot(label: &str, name: &str) -> bool {
    label
        .strip_prefix(name)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('['))
}

fn block_name(id: i32) -> String {
    if id >= 0 {
        id.to_string()
    } else {
        "noBlock".to_owned()
    }
}

/// Blocks named by id; a node listed in several blocks stays in the first (as in IGV) and gets
/// its block's name as property `block`.
fn blocks(
    raw: &RawGraph,
    index: &HashMap<i32, usize>,
    graph: &mut Graph,
    cx: &mut Context<'_>,
) -> Vec<Block> {
    let mut placed = vec![false; graph.nodes.len()];
    let mut out = Vec::with_capacity(raw.blocks.len());
    for block in &raw.blocks {
        let name = block_name(block.id);
        let mut nodes = Vec::with_capacity(block.nodes.len());
        for &id in block.nodes.iter().filter(|&&id| id >= 0) {
            match index.get(&id) {
                Some(&n) if !placed[n] => {
                    placed[n] = true;
                    graph.nodes[n].properties.set("block", name.clone());
                    nodes.push(n);
                }
                Some(_) => {}
                None => cx.warnings.add(
                    "block_unknown_node",
                    format!(
                        "graph {:?}: block {name} lists node {id}, which is not in the graph",
                        graph.name
                    ),
                    cx.at.clone(),
                ),
            }
        }
        out.push(Block {
            name,
            label: String::new(),
            nodes,
            successors: block.successors.iter().map(|&s| block_name(s)).collect(),
            parent: None,
        });
    }
    out
}
