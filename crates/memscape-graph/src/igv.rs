//! Streaming importer for the Ideal Graph Visualizer's XML (what HotSpot's C2 and Graal write
//! with `-XX:PrintIdealGraphLevel`).
//!
//! Elements understood (anything else is skipped with a counted `unknown_element` warning):
//!
//! ```text
//! graphDocument › properties › p name=…          document properties
//!               › group [difference="true"]      (nested groups allowed)
//!                   › properties › p
//!                   › method name= shortName= bci=
//!                       › properties › p
//!                       › bytecodes               (text or CDATA)
//!                       › inlined › method …      (recursive)
//!                   › graph [name=]
//!                       › properties › p
//!                       › nodes › node id= › properties › p
//!                               › removeNode id=
//!                       › edges › edge from= to= [index=|toIndex=] [fromIndex=] [label=] [type=]
//!                               › removeEdge (same attributes)
//!                       › controlFlow › block name= › successors › successor name=
//!                                                   › nodes › node id=
//!                   › group …
//! ```
//!
//! In a `difference="true"` group every graph starts as a copy of the previous graph of that
//! group, then `removeNode`/`removeEdge` delete, and `node`/`edge` add or (for nodes) replace.
//! Property text is trimmed (IGV writes the value on its own line). The reader never builds a DOM:
//! memory is the resulting model plus one element's text.

use std::collections::HashSet;

use memscape_io::{Location, Warnings};
use quick_xml::events::{BytesStart, Event};

use crate::model::{Block, Document, Graph, Group, Method, Properties};
use crate::{GraphError, Imported, LineTracker, line_column};

/// Reads and imports an IGV XML file (plain, gzip or zstd).
pub fn load_igv(path: &std::path::Path) -> Result<Imported, GraphError> {
    let bytes = memscape_io::read_input(path)?;
    parse_igv(&bytes, &path.display().to_string())
}

/// Deepest nesting of groups plus inlined methods accepted.
const MAX_NESTING: usize = 256;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    Document,
    Group,
    Properties,
    P,
    Method,
    Bytecodes,
    Inlined,
    Graph,
    Nodes,
    Node,
    RemoveNode,
    Edges,
    Edge,
    RemoveEdge,
    ControlFlow,
    Block,
    Successors,
    Successor,
    BlockNodes,
    BlockNode,
    /// An element we do not know; its whole subtree is skipped.
    Unknown,
}

/// An edge as written, resolved against the node ids when its graph ends.
struct PendingEdge {
    from: String,
    to: String,
    from_index: u32,
    to_index: u32,
    label: String,
    kind: String,
    line: u64,
}

/// The graph being read.
struct GraphBuild {
    graph: Graph,
    /// Ids declared by `node` elements of this very graph (duplicates are warned about).
    declared: HashSet<String>,
    removed_nodes: HashSet<String>,
    removed_edges: Vec<PendingEdge>,
    added_edges: Vec<PendingEdge>,
    /// Whether this graph has its own `controlFlow` blocks (otherwise a difference graph keeps
    /// the previous graph's blocks).
    own_blocks: Vec<(Block, Vec<String>)>,
    /// Current node being read (`nodes › node`): id and properties.
    node: Option<(String, Properties)>,
    block: Option<(Block, Vec<String>)>,
}

struct Parser<'a> {
    file: &'a str,
    content: &'a [u8],
    lines: LineTracker<'a>,
    warnings: Warnings,
    document: Document,
    groups: Vec<Group>,
    methods: Vec<Method>,
    graph: Option<GraphBuild>,
    stack: Vec<Tag>,
    /// `p` being read: name and accumulated text.
    property: Option<(String, String)>,
    bytecodes: Option<String>,
}

/// Imports IGV XML from memory; `file` names the input in errors and warnings.
pub fn parse_igv(content: &[u8], file: &str) -> Result<Imported, GraphError> {
    let mut reader = quick_xml::Reader::from_reader(content);
    reader.config_mut().trim_text(false);
    let mut parser = Parser {
        file,
        content,
        lines: LineTracker::new(content),
        warnings: Warnings::new(),
        document: Document::default(),
        groups: Vec::new(),
        methods: Vec::new(),
        graph: None,
        stack: Vec::new(),
        property: None,
        bytecodes: None,
    };
    let mut buf = Vec::new();
    let mut seen_root = false;
    loop {
        buf.clear();
        let event = match reader.read_event_into(&mut buf) {
            Ok(e) => e,
            Err(e) => {
                let (line, column) = line_column(content, reader.error_position() as usize);
                return Err(GraphError::Syntax {
                    file: file.to_owned(),
                    line,
                    column,
                    message: format!("malformed XML: {e}"),
                });
            }
        };
        let at = reader.buffer_position() as usize;
        match event {
            Event::Start(start) => {
                if parser.stack.is_empty() {
                    parser.check_root(&start, seen_root, at)?;
                    seen_root = true;
                }
                parser.start(&start, at)?;
            }
            Event::Empty(start) => {
                if parser.stack.is_empty() {
                    parser.check_root(&start, seen_root, at)?;
                    seen_root = true;
                }
                parser.start(&start, at)?;
                parser.end(at);
            }
            Event::End(_) => parser.end(at),
            Event::Text(text) => {
                let decoded = text
                    .decode()
                    .map_err(|e| parser.syntax(at, e.to_string()))?;
                parser.text(&decoded);
            }
            Event::CData(data) => {
                let decoded = data
                    .decode()
                    .map_err(|e| parser.syntax(at, e.to_string()))?;
                parser.text(&decoded);
            }
            Event::GeneralRef(reference) => {
                let resolved = match reference.resolve_char_ref() {
                    Ok(Some(c)) => Some(c.to_string()),
                    _ => reference.decode().ok().and_then(|name| {
                        quick_xml::escape::resolve_predefined_entity(&name).map(str::to_owned)
                    }),
                };
                match resolved {
                    Some(text) => parser.text(&text),
                    None => parser.warn(
                        "unknown_entity",
                        "unknown XML entity reference (left out)",
                        at,
                    ),
                }
            }
            Event::Eof => break,
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
        }
    }
    if let Some(open) = parser.stack.last() {
        return Err(parser.syntax(
            content.len(),
            format!("unexpected end of file: element {open:?} is not closed"),
        ));
    }
    if !seen_root {
        return Err(parser.syntax(0, "expected a <graphDocument> element".to_owned()));
    }
    Ok(Imported {
        document: parser.document,
        warnings: parser.warnings,
    })
}

fn attribute(start: &BytesStart<'_>, name: &str) -> Option<String> {
    start
        .attributes()
        .with_checks(false)
        .flatten()
        .find(|a| a.key.as_ref() == name.as_bytes())
        .and_then(|a| {
            a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .ok()
                .map(|v| v.into_owned())
        })
}

impl Parser<'_> {
    fn syntax(&self, offset: usize, message: String) -> GraphError {
        let (line, column) = line_column(self.content, offset);
        GraphError::Syntax {
            file: self.file.to_owned(),
            line,
            column,
            message,
        }
    }

    fn warn(&mut self, kind: &'static str, message: &str, offset: usize) {
        let line = self.lines.line_at(offset);
        self.warnings
            .add(kind, message, Location::line(self.file, line));
    }

    fn check_root(&self, start: &BytesStart<'_>, seen: bool, at: usize) -> Result<(), GraphError> {
        if seen {
            return Err(self.syntax(at, "a second root element after </graphDocument>".into()));
        }
        if start.name().as_ref() != b"graphDocument" {
            return Err(self.syntax(
                at,
                format!(
                    "expected <graphDocument> as the root element, found <{}>",
                    String::from_utf8_lossy(start.name().as_ref())
                ),
            ));
        }
        Ok(())
    }

    fn parent(&self) -> Option<Tag> {
        self.stack.last().copied()
    }

    fn start(&mut self, start: &BytesStart<'_>, at: usize) -> Result<(), GraphError> {
        // Groups and inlined methods nest in the model, and nested values are dropped and walked
        // recursively: bound the depth so a crafted file cannot overflow the stack.
        if self.groups.len() + self.methods.len() > MAX_NESTING {
            return Err(self.syntax(
                at,
                format!("groups or inlined methods nested deeper than {MAX_NESTING} levels"),
            ));
        }
        let name = start.name();
        let parent = self.parent();
        let tag = match (parent, name.as_ref()) {
            (Some(Tag::Unknown), _) => Tag::Unknown,
            (None, b"graphDocument") => Tag::Document,
            (Some(Tag::Document | Tag::Group), b"group") => {
                let mut group = Group {
                    difference: attribute(start, "difference").as_deref() == Some("true"),
                    ..Group::default()
                };
                if let Some(n) = attribute(start, "name") {
                    group.properties.set("name", n);
                }
                self.groups.push(group);
                Tag::Group
            }
            (
                Some(Tag::Document | Tag::Group | Tag::Method | Tag::Graph | Tag::Node | Tag::Edge),
                b"properties",
            ) => Tag::Properties,
            (Some(Tag::Properties), b"p") => {
                let Some(name) = attribute(start, "name") else {
                    self.warn("property_without_name", "<p> without a name attribute", at);
                    self.stack.push(Tag::Unknown);
                    return Ok(());
                };
                self.property = Some((name, String::new()));
                Tag::P
            }
            (Some(Tag::Group | Tag::Inlined), b"method") => {
                let bci = attribute(start, "bci").and_then(|b| b.trim().parse::<i64>().ok());
                self.methods.push(Method {
                    name: attribute(start, "name").unwrap_or_default(),
                    short_name: attribute(start, "shortName").unwrap_or_default(),
                    bci,
                    ..Method::default()
                });
                Tag::Method
            }
            (Some(Tag::Method), b"bytecodes") => {
                self.bytecodes = Some(String::new());
                Tag::Bytecodes
            }
            (Some(Tag::Method), b"inlined") => Tag::Inlined,
            (Some(Tag::Group), b"graph") => {
                self.start_graph(attribute(start, "name"));
                Tag::Graph
            }
            (Some(Tag::Graph), b"nodes") => Tag::Nodes,
            (Some(Tag::Nodes), b"node") => {
                match attribute(start, "id") {
                    Some(id) => {
                        if let Some(build) = self.graph.as_mut() {
                            build.node = Some((id, Properties::new()));
                        }
                    }
                    None => {
                        self.warn("node_without_id", "<node> without an id attribute", at);
                        self.stack.push(Tag::Unknown);
                        return Ok(());
                    }
                }
                Tag::Node
            }
            (Some(Tag::Nodes), b"removeNode") => {
                match attribute(start, "id") {
                    Some(id) => {
                        if let Some(build) = self.graph.as_mut() {
                            build.declared.remove(&id);
                            build.removed_nodes.insert(id);
                        }
                    }
                    None => self.warn("node_without_id", "<removeNode> without an id", at),
                }
                Tag::RemoveNode
            }
            (Some(Tag::Graph), b"edges") => Tag::Edges,
            (Some(Tag::Edges), b"edge" | b"removeEdge") => {
                let is_remove = name.as_ref() == b"removeEdge";
                if let Some(edge) = self.read_edge(start, at)
                    && let Some(build) = self.graph.as_mut()
                {
                    if is_remove {
                        build.removed_edges.push(edge);
                    } else {
                        build.added_edges.push(edge);
                    }
                }
                if is_remove {
                    Tag::RemoveEdge
                } else {
                    Tag::Edge
                }
            }
            (Some(Tag::Graph), b"controlFlow") => Tag::ControlFlow,
            (Some(Tag::ControlFlow), b"block") => {
                let name = attribute(start, "name").unwrap_or_default();
                if let Some(build) = self.graph.as_mut() {
                    build.block = Some((
                        Block {
                            name,
                            ..Block::default()
                        },
                        Vec::new(),
                    ));
                }
                Tag::Block
            }
            (Some(Tag::Block), b"successors") => Tag::Successors,
            (Some(Tag::Successors), b"successor") => {
                if let (Some(name), Some(build)) = (attribute(start, "name"), self.graph.as_mut())
                    && let Some((block, _)) = build.block.as_mut()
                {
                    block.successors.push(name);
                }
                Tag::Successor
            }
            (Some(Tag::Block), b"nodes") => Tag::BlockNodes,
            (Some(Tag::BlockNodes), b"node") => {
                if let (Some(id), Some(build)) = (attribute(start, "id"), self.graph.as_mut())
                    && let Some((_, ids)) = build.block.as_mut()
                {
                    ids.push(id);
                }
                Tag::BlockNode
            }
            (_, other) => {
                let _ = other;
                self.warn(
                    "unknown_element",
                    "element not part of the IGV format at this place (skipped)",
                    at,
                );
                Tag::Unknown
            }
        };
        self.stack.push(tag);
        Ok(())
    }

    fn read_edge(&mut self, start: &BytesStart<'_>, at: usize) -> Option<PendingEdge> {
        let (Some(from), Some(to)) = (attribute(start, "from"), attribute(start, "to")) else {
            self.warn(
                "edge_without_endpoint",
                "<edge> without a from or to attribute (skipped)",
                at,
            );
            return None;
        };
        let index = |name: &str, this: &mut Self| -> u32 {
            match attribute(start, name) {
                None => 0,
                Some(v) => v.trim().parse::<u32>().unwrap_or_else(|_| {
                    this.warn(
                        "bad_edge_index",
                        "edge index is not a non-negative integer (0 used)",
                        at,
                    );
                    0
                }),
            }
        };
        // `index` is the old name of `toIndex`.
        let to_index = if attribute(start, "toIndex").is_some() {
            index("toIndex", self)
        } else {
            index("index", self)
        };
        let from_index = index("fromIndex", self);
        let line = self.lines.line_at(at);
        Some(PendingEdge {
            from,
            to,
            from_index,
            to_index,
            label: attribute(start, "label").unwrap_or_default(),
            kind: attribute(start, "type").unwrap_or_default(),
            line,
        })
    }

    fn start_graph(&mut self, name: Option<String>) {
        let group = self.groups.last();
        let previous = group.filter(|g| g.difference).and_then(|g| g.graphs.last());
        let mut graph = match previous {
            Some(prev) => {
                let mut g = prev.clone();
                g.properties = Properties::new();
                g
            }
            None => Graph::default(),
        };
        graph.name = name.clone().unwrap_or_default();
        if let Some(n) = name {
            graph.properties.set("name", n);
        }
        self.graph = Some(GraphBuild {
            graph,
            declared: HashSet::new(),
            removed_nodes: HashSet::new(),
            removed_edges: Vec::new(),
            added_edges: Vec::new(),
            own_blocks: Vec::new(),
            node: None,
            block: None,
        });
    }

    fn text(&mut self, text: &str) {
        match self.parent() {
            Some(Tag::P) => {
                if let Some((_, value)) = self.property.as_mut() {
                    value.push_str(text);
                }
            }
            Some(Tag::Bytecodes) => {
                if let Some(b) = self.bytecodes.as_mut() {
                    b.push_str(text);
                }
            }
            _ => {}
        }
    }

    fn end(&mut self, at: usize) {
        let Some(tag) = self.stack.pop() else {
            return;
        };
        let parent = self.parent();
        match tag {
            Tag::P => {
                if let Some((name, value)) = self.property.take() {
                    self.store_property(name, value.trim().to_owned());
                }
            }
            Tag::Bytecodes => {
                if let (Some(text), Some(method)) = (self.bytecodes.take(), self.methods.last_mut())
                {
                    method.bytecodes = Some(text.trim_matches('\n').to_owned());
                }
            }
            Tag::Method => {
                if let Some(method) = self.methods.pop() {
                    match parent {
                        Some(Tag::Inlined) => {
                            if let Some(outer) = self.methods.last_mut() {
                                outer.inlined.push(method);
                            }
                        }
                        _ => {
                            if let Some(group) = self.groups.last_mut() {
                                group.method = Some(method);
                            }
                        }
                    }
                }
            }
            Tag::Node => self.end_node(at),
            Tag::Block => {
                if let Some(build) = self.graph.as_mut()
                    && let Some(block) = build.block.take()
                {
                    build.own_blocks.push(block);
                }
            }
            Tag::Graph => self.end_graph(at),
            Tag::Group => {
                if let Some(group) = self.groups.pop() {
                    match self.groups.last_mut() {
                        Some(outer) => outer.groups.push(group),
                        None => self.document.groups.push(group),
                    }
                }
            }
            _ => {}
        }
    }

    fn store_property(&mut self, name: String, value: String) {
        // The owner is the element around `properties`.
        let owner = self.stack.len().checked_sub(2).map(|i| self.stack[i]);
        match owner {
            Some(Tag::Document) => self.document.properties.set(name, value),
            Some(Tag::Group) => {
                if let Some(g) = self.groups.last_mut() {
                    g.properties.set(name, value);
                }
            }
            Some(Tag::Method) => {
                if let Some(m) = self.methods.last_mut() {
                    m.properties.set(name, value);
                }
            }
            Some(Tag::Graph) => {
                if let Some(build) = self.graph.as_mut() {
                    if name == "name" {
                        build.graph.name.clone_from(&value);
                    }
                    build.graph.properties.set(name, value);
                }
            }
            Some(Tag::Node) => {
                if let Some((_, props)) = self.graph.as_mut().and_then(|b| b.node.as_mut()) {
                    props.set(name, value);
                }
            }
            _ => {}
        }
    }

    fn end_node(&mut self, at: usize) {
        let Some(build) = self.graph.as_mut() else {
            return;
        };
        let Some((id, props)) = build.node.take() else {
            return;
        };
        let duplicate = !build.declared.insert(id.clone());
        build.removed_nodes.remove(&id);
        build.graph.upsert_node(&id, props);
        if duplicate {
            self.warn(
                "duplicate_node",
                "node id declared twice in one graph (the later one kept)",
                at,
            );
        }
    }

    fn end_graph(&mut self, at: usize) {
        let Some(build) = self.graph.take() else {
            return;
        };
        let GraphBuild {
            mut graph,
            removed_nodes,
            removed_edges,
            added_edges,
            own_blocks,
            ..
        } = build;
        if !removed_nodes.is_empty() {
            graph.retain_nodes(|_, n| !removed_nodes.contains(&n.id));
        }
        for removal in removed_edges {
            let (Some(f), Some(t)) = (
                graph.node_index(&removal.from),
                graph.node_index(&removal.to),
            ) else {
                // Edges of removed nodes went with them; IGV writes their removeEdge anyway.
                if !removed_nodes.contains(&removal.from) && !removed_nodes.contains(&removal.to) {
                    self.warnings.add(
                        "remove_unknown_edge",
                        "removeEdge of an edge that is not in the previous graph",
                        Location::line(self.file, removal.line),
                    );
                }
                continue;
            };
            let found = graph.edges.iter().position(|e| {
                e.from == f
                    && e.to == t
                    && e.from_index == removal.from_index
                    && e.to_index == removal.to_index
            });
            match found {
                Some(i) => {
                    graph.edges.remove(i);
                }
                None => self.warnings.add(
                    "remove_unknown_edge",
                    "removeEdge of an edge that is not in the previous graph",
                    Location::line(self.file, removal.line),
                ),
            }
        }
        for edge in added_edges {
            let (Some(f), Some(t)) = (graph.node_index(&edge.from), graph.node_index(&edge.to))
            else {
                self.warnings.add(
                    "edge_unknown_node",
                    "edge to or from a node id that is not in the graph (skipped)",
                    Location::line(self.file, edge.line),
                );
                continue;
            };
            let new = graph.add_edge(f, t);
            new.from_index = edge.from_index;
            new.to_index = edge.to_index;
            new.label = edge.label;
            new.kind = edge.kind;
        }
        if !own_blocks.is_empty() {
            graph.blocks.clear();
            for (mut block, ids) in own_blocks {
                for id in ids {
                    match graph.node_index(&id) {
                        Some(i) => block.nodes.push(i),
                        None => {
                            let line = self.lines.line_at(at);
                            self.warnings.add(
                                "block_unknown_node",
                                "block lists a node id that is not in the graph",
                                Location::line(self.file, line),
                            );
                        }
                    }
                }
                graph.blocks.push(block);
            }
        }
        if let Some(group) = self.groups.last_mut() {
            group.graphs.push(graph);
        }
    }
}
