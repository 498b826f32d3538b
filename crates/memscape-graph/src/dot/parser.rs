//! The DOT parser: statements, attribute defaults, subgraphs and clusters, edges (see the
//! grammar in [`super`]).

use std::collections::HashMap;

use memscape_io::{Location, Warnings};

use super::lexer::{Token, TokenKind};
use crate::GraphError;
use crate::model::{Block, Graph, Properties};

/// Deepest subgraph nesting accepted (deeper input is an error instead of a stack overflow).
const MAX_NESTING: usize = 200;
/// Most edges one graph may have (subgraph-to-subgraph edges multiply): about 400 MB of edges,
/// so that a small file cannot ask for more than 1 GB in one allocation.
const MAX_EDGES: u64 = 4_000_000;

/// Most bytes of attributes that defaults and edge statements may copy onto nodes and edges
/// (`node [label=…]` is copied onto every node declared after it, an edge statement's
/// attributes onto each of its edges): a small file cannot ask for gigabytes of copies.
const MAX_PROPERTY_BYTES: u64 = 256 << 20;

fn property_bytes(p: &Properties) -> u64 {
    p.iter().map(|(k, v)| (k.len() + v.len()) as u64).sum()
}

/// One (sub)graph scope: defaults inherited from the enclosing scope.
#[derive(Clone)]
pub(super) struct Scope {
    node_defaults: Properties,
    edge_defaults: Properties,
    /// Innermost enclosing cluster (index into the graph's blocks).
    cluster: Option<usize>,
}

pub(super) enum Endpoint {
    Node { index: usize, port: Option<String> },
    Subgraph(Vec<usize>),
}

pub(super) struct Parser<'a> {
    pub(super) tokens: &'a [Token],
    pub(super) pos: usize,
    pub(super) file: &'a str,
    pub(super) warnings: &'a mut Warnings,
    pub(super) graph: Graph,
    pub(super) directed: bool,
    pub(super) strict: bool,
    pub(super) strict_edges: HashMap<(usize, usize), usize>,
    pub(super) depth: usize,
    pub(super) anonymous_subgraphs: usize,
    /// Attribute bytes copied onto nodes and edges so far (see [`MAX_PROPERTY_BYTES`]).
    pub(super) copied_bytes: u64,
}

pub(super) fn keyword(token: &Token, word: &str) -> bool {
    matches!(&token.kind, TokenKind::Plain(s) if s.eq_ignore_ascii_case(word))
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn peek_kind(&self) -> Option<&TokenKind> {
        self.peek().map(|t| &t.kind)
    }

    fn error_here(&self, message: impl Into<String>) -> GraphError {
        let (line, column) = match self.peek().or_else(|| self.tokens.last()) {
            Some(t) => (t.line, t.column),
            None => (1, 1),
        };
        let at_end = self.peek().is_none();
        let mut message = message.into();
        if at_end {
            message.push_str(" (found the end of the file)");
        }
        GraphError::Syntax {
            file: self.file.to_owned(),
            line,
            column,
            message,
        }
    }

    fn expect(&mut self, kind: TokenKind, what: &str) -> Result<(), GraphError> {
        if self.peek_kind() == Some(&kind) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error_here(format!("expected {what}")))
        }
    }

    fn id(&mut self, what: &str) -> Result<String, GraphError> {
        match self.peek_kind() {
            Some(TokenKind::Plain(s) | TokenKind::Quoted(s) | TokenKind::Html(s)) => {
                let s = s.clone();
                self.pos += 1;
                Ok(s)
            }
            _ => Err(self.error_here(format!("expected {what}"))),
        }
    }

    fn is_id(&self) -> bool {
        matches!(
            self.peek_kind(),
            Some(TokenKind::Plain(_) | TokenKind::Quoted(_) | TokenKind::Html(_))
        )
    }

    pub(super) fn graph(&mut self) -> Result<(), GraphError> {
        if self.peek().is_some_and(|t| keyword(t, "strict")) {
            self.strict = true;
            self.pos += 1;
        }
        match self.peek() {
            Some(t) if keyword(t, "digraph") => self.directed = true,
            Some(t) if keyword(t, "graph") => self.directed = false,
            _ => return Err(self.error_here("expected 'graph' or 'digraph'")),
        }
        self.pos += 1;
        if self.is_id() {
            self.graph.name = self.id("a graph name")?;
        }
        self.graph
            .properties
            .set("directed", if self.directed { "true" } else { "false" });
        self.expect(TokenKind::LBrace, "'{' to open the graph body")?;
        let mut scope = Scope {
            node_defaults: Properties::new(),
            edge_defaults: Properties::new(),
            cluster: None,
        };
        let mut members = Vec::new();
        self.stmt_list(&mut scope, &mut members, true)?;
        self.expect(TokenKind::RBrace, "'}' to close the graph body")?;
        Ok(())
    }

    fn stmt_list(
        &mut self,
        scope: &mut Scope,
        members: &mut Vec<usize>,
        top: bool,
    ) -> Result<(), GraphError> {
        loop {
            match self.peek_kind() {
                None | Some(TokenKind::RBrace) => return Ok(()),
                Some(TokenKind::Semi) => {
                    self.pos += 1;
                }
                _ => self.stmt(scope, members, top)?,
            }
        }
    }

    fn attr_list(&mut self, out: &mut Vec<(String, String)>) -> Result<(), GraphError> {
        while self.peek_kind() == Some(&TokenKind::LBracket) {
            self.pos += 1;
            loop {
                match self.peek_kind() {
                    Some(TokenKind::RBracket) => {
                        self.pos += 1;
                        break;
                    }
                    Some(TokenKind::Comma | TokenKind::Semi) => self.pos += 1,
                    _ => {
                        let name = self.id("an attribute name or ']'")?;
                        // `[name]` alone means name=true in Graphviz.
                        if self.peek_kind() == Some(&TokenKind::Equals) {
                            self.pos += 1;
                            let value = self.id("an attribute value after '='")?;
                            out.push((name, value));
                        } else {
                            out.push((name, "true".to_owned()));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn stmt(
        &mut self,
        scope: &mut Scope,
        members: &mut Vec<usize>,
        top: bool,
    ) -> Result<(), GraphError> {
        let Some(token) = self.peek().cloned() else {
            return Ok(());
        };
        // attr_stmt
        for (word, which) in [("graph", 0), ("node", 1), ("edge", 2)] {
            if keyword(&token, word)
                && self
                    .tokens
                    .get(self.pos + 1)
                    .is_some_and(|t| t.kind == TokenKind::LBracket)
            {
                self.pos += 1;
                let mut attrs = Vec::new();
                self.attr_list(&mut attrs)?;
                for (k, v) in attrs {
                    match which {
                        0 => self.graph_attr(scope, top, k, v),
                        1 => scope.node_defaults.set(k, v),
                        _ => scope.edge_defaults.set(k, v),
                    }
                }
                return Ok(());
            }
        }
        // ID '=' ID
        if self.is_id()
            && !keyword(&token, "subgraph")
            && self
                .tokens
                .get(self.pos + 1)
                .is_some_and(|t| t.kind == TokenKind::Equals)
        {
            let k = self.id("an attribute name")?;
            self.pos += 1;
            let v = self.id("an attribute value after '='")?;
            self.graph_attr(scope, top, k, v);
            return Ok(());
        }
        let first = self.endpoint(scope, members)?;
        if matches!(self.peek_kind(), Some(TokenKind::Arrow | TokenKind::Line)) {
            let mut chain = vec![first];
            while let Some(op) = self.peek().cloned() {
                let directed_op = match op.kind {
                    TokenKind::Arrow => true,
                    TokenKind::Line => false,
                    _ => break,
                };
                if directed_op != self.directed {
                    self.warnings.add(
                        "edge_op_mismatch",
                        "edge operator does not match the graph kind ('->' needs digraph, '--' graph); kept",
                        Location::line(self.file, op.line),
                    );
                }
                self.pos += 1;
                chain.push(self.endpoint(scope, members)?);
            }
            let mut attrs = Vec::new();
            self.attr_list(&mut attrs)?;
            // Subgraph ends multiply: `{a b c} -> {d e f}` is nine edges. Bound the product so a
            // few bytes cannot ask for billions of edges.
            let size = |e: &Endpoint| match e {
                Endpoint::Node { .. } => 1u64,
                Endpoint::Subgraph(nodes) => nodes.len() as u64,
            };
            let created: u64 = chain
                .windows(2)
                .map(|p| size(&p[0]).saturating_mul(size(&p[1])))
                .fold(0u64, u64::saturating_add);
            if self.graph.edges.len() as u64 + created > MAX_EDGES {
                return Err(self.error_here(format!(
                    "this edge statement would make the graph exceed {MAX_EDGES} edges"
                )));
            }
            for pair in chain.windows(2) {
                self.connect(scope, &pair[0], &pair[1], &attrs)?;
            }
        } else {
            match first {
                Endpoint::Node { index, .. } => {
                    let mut attrs = Vec::new();
                    self.attr_list(&mut attrs)?;
                    let node = &mut self.graph.nodes[index];
                    for (k, v) in attrs {
                        node.properties.set(k, v);
                    }
                }
                Endpoint::Subgraph(_) => {}
            }
        }
        Ok(())
    }

    fn graph_attr(&mut self, scope: &mut Scope, top: bool, k: String, v: String) {
        if top {
            self.graph.properties.set(k, v);
        } else if let Some(c) = scope.cluster {
            // Of a cluster's attributes only the label matters to the model.
            if k == "label"
                && let Some(block) = self.graph.blocks.get_mut(c)
            {
                block.label = v;
            }
        }
    }

    fn endpoint(
        &mut self,
        scope: &Scope,
        members: &mut Vec<usize>,
    ) -> Result<Endpoint, GraphError> {
        let subgraph_start = match self.peek() {
            Some(t) if keyword(t, "subgraph") => true,
            Some(t) => t.kind == TokenKind::LBrace,
            None => false,
        };
        if subgraph_start {
            let nodes = self.subgraph(scope)?;
            members.extend_from_slice(&nodes);
            return Ok(Endpoint::Subgraph(nodes));
        }
        let name = self.id("a node ID, 'subgraph', '{' or an attribute statement")?;
        let mut port = None;
        if self.peek_kind() == Some(&TokenKind::Colon) {
            self.pos += 1;
            let p = self.id("a port name after ':'")?;
            let mut full = p;
            if self.peek_kind() == Some(&TokenKind::Colon) {
                self.pos += 1;
                let compass = self.id("a compass point after ':'")?;
                full = format!("{full}:{compass}");
            }
            port = Some(full);
        }
        let index = self.node(scope, &name)?;
        members.push(index);
        Ok(Endpoint::Node { index, port })
    }

    /// Counts `bytes` of copied attributes against [`MAX_PROPERTY_BYTES`].
    fn charge(&mut self, bytes: u64) -> Result<(), GraphError> {
        self.copied_bytes = self.copied_bytes.saturating_add(bytes);
        if self.copied_bytes > MAX_PROPERTY_BYTES {
            return Err(self.error_here(format!(
                "the attributes copied onto nodes and edges would exceed {} MiB (defaults such as `node [label=…]` are copied onto every node, an edge statement's attributes onto each of its edges)",
                MAX_PROPERTY_BYTES >> 20
            )));
        }
        Ok(())
    }

    fn node(&mut self, scope: &Scope, name: &str) -> Result<usize, GraphError> {
        let index = match self.graph.node_index(name) {
            Some(i) => i,
            None => {
                self.charge(property_bytes(&scope.node_defaults) + name.len() as u64)?;
                self.graph.upsert_node(name, scope.node_defaults.clone()).0
            }
        };
        if let Some(c) = scope.cluster
            && let Some(block) = self.graph.blocks.get_mut(c)
            && !block.nodes.contains(&index)
        {
            block.nodes.push(index);
        }
        Ok(index)
    }

    fn subgraph(&mut self, outer: &Scope) -> Result<Vec<usize>, GraphError> {
        let mut name = None;
        if self.peek().is_some_and(|t| keyword(t, "subgraph")) {
            self.pos += 1;
            if self.is_id() {
                name = Some(self.id("a subgraph name")?);
            }
        }
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(
                self.error_here(format!("subgraphs nested deeper than {MAX_NESTING} levels"))
            );
        }
        let mut scope = outer.clone();
        let name = name.unwrap_or_else(|| {
            self.anonymous_subgraphs += 1;
            format!("%{}", self.anonymous_subgraphs)
        });
        if name.starts_with("cluster") {
            self.graph.blocks.push(Block {
                name: name.clone(),
                parent: outer.cluster,
                ..Block::default()
            });
            scope.cluster = Some(self.graph.blocks.len() - 1);
        }
        self.expect(TokenKind::LBrace, "'{' to open the subgraph")?;
        let mut members = Vec::new();
        self.stmt_list(&mut scope, &mut members, false)?;
        self.expect(TokenKind::RBrace, "'}' to close the subgraph")?;
        self.depth -= 1;
        Ok(members)
    }

    fn connect(
        &mut self,
        scope: &Scope,
        a: &Endpoint,
        b: &Endpoint,
        attrs: &[(String, String)],
    ) -> Result<(), GraphError> {
        let ends = |e: &Endpoint| -> Vec<(usize, Option<String>)> {
            match e {
                Endpoint::Node { index, port } => vec![(*index, port.clone())],
                Endpoint::Subgraph(nodes) => nodes.iter().map(|&n| (n, None)).collect(),
            }
        };
        let (tails, heads) = (ends(a), ends(b));
        let per_edge = property_bytes(&scope.edge_defaults)
            + attrs
                .iter()
                .map(|(k, v)| (k.len() + v.len()) as u64)
                .sum::<u64>()
            + 32;
        self.charge(per_edge.saturating_mul(tails.len() as u64 * heads.len() as u64))?;
        for (from, tail_port) in tails {
            for (to, head_port) in heads.iter().cloned() {
                let mut props = scope.edge_defaults.clone();
                if let Some(p) = &tail_port {
                    props.set("tailport", p.clone());
                }
                if let Some(p) = &head_port {
                    props.set("headport", p.clone());
                }
                for (k, v) in attrs {
                    props.set(k.clone(), v.clone());
                }
                if self.strict {
                    let key = if self.directed || from <= to {
                        (from, to)
                    } else {
                        (to, from)
                    };
                    if let Some(&existing) = self.strict_edges.get(&key) {
                        let edge = &mut self.graph.edges[existing];
                        for (k, v) in props.iter() {
                            edge.properties.set(k, v);
                        }
                        continue;
                    }
                    self.strict_edges.insert(key, self.graph.edges.len());
                }
                let port_index = |p: Option<&str>| -> u32 {
                    p.and_then(|p| p.split(':').next())
                        .and_then(|p| {
                            p.trim_start_matches(|c: char| c.is_ascii_alphabetic())
                                .parse()
                                .ok()
                        })
                        .unwrap_or(0)
                };
                let from_index = port_index(props.get("tailport"));
                let to_index = port_index(props.get("headport"));
                let label = props.get("label").unwrap_or("").to_owned();
                let kind = props.get("type").unwrap_or("").to_owned();
                let edge = self.graph.add_edge(from, to);
                edge.from_index = from_index;
                edge.to_index = to_index;
                edge.label = label;
                edge.kind = kind;
                edge.properties = props;
            }
        }
        Ok(())
    }
}
