//! Graphviz DOT parser: the whole language as described in Graphviz's "The DOT Language".
//!
//! ```text
//! graph     : [ strict ] (graph | digraph) [ ID ] '{' stmt_list '}'
//! stmt_list : [ stmt [ ';' ] stmt_list ]
//! stmt      : node_stmt | edge_stmt | attr_stmt | ID '=' ID | subgraph
//! attr_stmt : (graph | node | edge) attr_list
//! attr_list : '[' [ a_list ] ']' [ attr_list ]
//! a_list    : ID '=' ID [ (';' | ',') ] [ a_list ]
//! edge_stmt : (node_id | subgraph) edgeRHS [ attr_list ]
//! edgeRHS   : edgeop (node_id | subgraph) [ edgeRHS ]
//! node_stmt : node_id [ attr_list ]
//! node_id   : ID [ port ]
//! port      : ':' ID [ ':' compass_pt ] | ':' compass_pt
//! subgraph  : [ subgraph [ ID ] ] '{' stmt_list '}'
//! ```
//!
//! Lexical rules: keywords are case-insensitive; an ID is an alphanumeric/underscore/high-byte
//! string not starting with a digit, a numeral, a double-quoted string (`\"` is the only escape,
//! `\` before a newline continues the line, `"a" + "b"` concatenates), or an HTML string `<…>`
//! with balanced angle brackets. `//` and `/* */` comments and lines starting with `#` are
//! ignored. A file may hold several graphs.
//!
//! Semantics: `node`/`edge` defaults apply to nodes and edges created after them in the same
//! (sub)graph and its subgraphs; a subgraph as an edge end stands for all its nodes; `strict`
//! merges multi-edges; subgraphs named `cluster…` become [`Block`]s. The label becomes the
//! property `text` (what is shown): record labels (`shape=record`, as LLVM writes CFGs) are
//! parsed into their fields (`{ } | <port>` with `\{ \} \| \< \> \l \r \n` escapes), escString
//! `\N \G \E \T \H \L` are substituted, HTML labels lose their tags.
//!
//! Errors carry line and column; recoverable problems (`--` in a digraph, non-UTF-8 text, an
//! unbalanced record label, an ambiguous label key) are counted warnings.

use std::collections::{HashMap, HashSet};

use memscape_io::{Location, Warnings};

use crate::model::{Block, Document, Graph, Group, Properties};
use crate::{GraphError, Imported};

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

#[derive(Debug, Clone, PartialEq)]
enum TokenKind {
    /// A plain identifier or numeral (keywords are plain ids).
    Plain(String),
    Quoted(String),
    Html(String),
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    Semi,
    Comma,
    Equals,
    Colon,
    /// `->`
    Arrow,
    /// `--`
    Line,
}

#[derive(Debug, Clone)]
struct Token {
    kind: TokenKind,
    line: u64,
    column: u64,
}

struct Lexer<'a> {
    src: &'a [u8],
    pos: usize,
    line: u64,
    line_start: usize,
    file: &'a str,
    warnings: &'a mut Warnings,
    /// A `+` was read after a quoted string: the next quoted string is appended to it.
    concatenating: bool,
}

fn is_id_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_id_char(b: u8) -> bool {
    is_id_start(b) || b.is_ascii_digit()
}

impl Lexer<'_> {
    fn column(&self) -> u64 {
        (self.pos - self.line_start) as u64 + 1
    }

    fn error(&self, line: u64, column: u64, message: impl Into<String>) -> GraphError {
        GraphError::Syntax {
            file: self.file.to_owned(),
            line,
            column,
            message: message.into(),
        }
    }

    fn peek(&self, ahead: usize) -> Option<u8> {
        self.src.get(self.pos + ahead).copied()
    }

    fn bump(&mut self) -> Option<u8> {
        let b = self.peek(0)?;
        self.pos += 1;
        if b == b'\n' {
            self.line += 1;
            self.line_start = self.pos;
        }
        Some(b)
    }

    fn text(&mut self, bytes: &[u8], line: u64) -> String {
        match std::str::from_utf8(bytes) {
            Ok(s) => s.to_owned(),
            Err(_) => {
                self.warnings.add(
                    "non_utf8",
                    "text is not UTF-8 (replaced with U+FFFD)",
                    Location::line(self.file, line),
                );
                String::from_utf8_lossy(bytes).into_owned()
            }
        }
    }

    /// Skips blanks and comments; true when at the start of a line (for `#` lines).
    fn skip_trivia(&mut self) -> Result<(), GraphError> {
        loop {
            let Some(b) = self.peek(0) else {
                return Ok(());
            };
            if b.is_ascii_whitespace() {
                self.bump();
            } else if b == b'/' && self.peek(1) == Some(b'/') {
                while let Some(c) = self.peek(0) {
                    if c == b'\n' {
                        break;
                    }
                    self.bump();
                }
            } else if b == b'/' && self.peek(1) == Some(b'*') {
                let (line, column) = (self.line, self.column());
                self.bump();
                self.bump();
                loop {
                    match self.bump() {
                        None => return Err(self.error(line, column, "unterminated /* comment")),
                        Some(b'*') if self.peek(0) == Some(b'/') => {
                            self.bump();
                            break;
                        }
                        Some(_) => {}
                    }
                }
            } else if b == b'#'
                && self.src[self.line_start..self.pos]
                    .iter()
                    .all(|c| c.is_ascii_whitespace())
            {
                while let Some(c) = self.peek(0) {
                    if c == b'\n' {
                        break;
                    }
                    self.bump();
                }
            } else {
                return Ok(());
            }
        }
    }

    fn quoted(&mut self) -> Result<String, GraphError> {
        let (line, column) = (self.line, self.column());
        self.bump(); // opening quote
        let mut bytes = Vec::new();
        loop {
            match self.bump() {
                None => return Err(self.error(line, column, "unterminated quoted string")),
                Some(b'"') => break,
                Some(b'\\') => match self.peek(0) {
                    Some(b'"') => {
                        self.bump();
                        bytes.push(b'"');
                    }
                    // Line continuation: backslash-newline disappears.
                    Some(b'\n') => {
                        self.bump();
                    }
                    Some(b'\r') if self.peek(1) == Some(b'\n') => {
                        self.bump();
                        self.bump();
                    }
                    // Every other escape is kept for the label interpretation (\l, \n, \N, …).
                    _ => bytes.push(b'\\'),
                },
                Some(b) => bytes.push(b),
            }
        }
        Ok(self.text(&bytes, line))
    }

    fn html(&mut self) -> Result<String, GraphError> {
        let (line, column) = (self.line, self.column());
        self.bump();
        let start = self.pos;
        let mut depth = 1usize;
        loop {
            match self.bump() {
                None => return Err(self.error(line, column, "unterminated HTML string (<…>)")),
                Some(b'<') => depth += 1,
                Some(b'>') => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                Some(_) => {}
            }
        }
        let end = self.pos - 1;
        let src = self.src;
        Ok(self.text(&src[start..end], line))
    }

    fn tokens(mut self) -> Result<Vec<Token>, GraphError> {
        let mut out: Vec<Token> = Vec::new();
        loop {
            self.skip_trivia()?;
            let Some(b) = self.peek(0) else {
                return Ok(out);
            };
            let (line, column) = (self.line, self.column());
            let kind = match b {
                b'{' => TokenKind::LBrace,
                b'}' => TokenKind::RBrace,
                b'[' => TokenKind::LBracket,
                b']' => TokenKind::RBracket,
                b';' => TokenKind::Semi,
                b',' => TokenKind::Comma,
                b'=' => TokenKind::Equals,
                b':' => TokenKind::Colon,
                b'-' if self.peek(1) == Some(b'>') => {
                    self.bump();
                    TokenKind::Arrow
                }
                b'-' if self.peek(1) == Some(b'-') => {
                    self.bump();
                    TokenKind::Line
                }
                b'"' => {
                    let s = self.quoted()?;
                    // `"a" + "b"` concatenation.
                    if let Some(Token {
                        kind: TokenKind::Quoted(prev),
                        ..
                    }) = out.last_mut()
                        && self.concatenating
                    {
                        prev.push_str(&s);
                        self.concatenating = false;
                        continue;
                    }
                    out.push(Token {
                        kind: TokenKind::Quoted(s),
                        line,
                        column,
                    });
                    continue;
                }
                b'+' if matches!(
                    out.last(),
                    Some(Token {
                        kind: TokenKind::Quoted(_),
                        ..
                    })
                ) =>
                {
                    self.bump();
                    self.concatenating = true;
                    continue;
                }
                b'<' => {
                    let s = self.html()?;
                    out.push(Token {
                        kind: TokenKind::Html(s),
                        line,
                        column,
                    });
                    continue;
                }
                b if is_id_start(b) => {
                    let start = self.pos;
                    while self.peek(0).is_some_and(is_id_char) {
                        self.bump();
                    }
                    let src = self.src;
                    let s = self.text(&src[start..self.pos], line);
                    out.push(Token {
                        kind: TokenKind::Plain(s),
                        line,
                        column,
                    });
                    continue;
                }
                b'-' | b'.' | b'0'..=b'9' => {
                    let start = self.pos;
                    if b == b'-' {
                        self.bump();
                    }
                    let mut digits = 0;
                    let mut dot = false;
                    while let Some(c) = self.peek(0) {
                        if c.is_ascii_digit() {
                            digits += 1;
                        } else if c == b'.' && !dot {
                            dot = true;
                        } else {
                            break;
                        }
                        self.bump();
                    }
                    if digits == 0 {
                        return Err(self.error(line, column, "expected a number after '-' or '.'"));
                    }
                    let src = self.src;
                    let s = self.text(&src[start..self.pos], line);
                    out.push(Token {
                        kind: TokenKind::Plain(s),
                        line,
                        column,
                    });
                    continue;
                }
                other => {
                    return Err(self.error(
                        line,
                        column,
                        format!(
                            "unexpected character {:?}: expected an ID, a punctuation mark of DOT or an edge operator",
                            other as char
                        ),
                    ));
                }
            };
            if self.concatenating {
                return Err(self.error(line, column, "expected a quoted string after '+'"));
            }
            self.bump();
            out.push(Token { kind, line, column });
        }
    }
}

/// One (sub)graph scope: defaults inherited from the enclosing scope.
#[derive(Clone)]
struct Scope {
    node_defaults: Properties,
    edge_defaults: Properties,
    /// Innermost enclosing cluster (index into the graph's blocks).
    cluster: Option<usize>,
}

enum Endpoint {
    Node { index: usize, port: Option<String> },
    Subgraph(Vec<usize>),
}

struct Parser<'a> {
    tokens: &'a [Token],
    pos: usize,
    file: &'a str,
    warnings: &'a mut Warnings,
    graph: Graph,
    directed: bool,
    strict: bool,
    strict_edges: HashMap<(usize, usize), usize>,
    depth: usize,
    anonymous_subgraphs: usize,
    /// Attribute bytes copied onto nodes and edges so far (see [`MAX_PROPERTY_BYTES`]).
    copied_bytes: u64,
}

fn keyword(token: &Token, word: &str) -> bool {
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

    fn graph(&mut self) -> Result<(), GraphError> {
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

/// Parses every graph of one DOT text. `file` names the input in errors and warnings.
pub fn parse_dot(
    content: &[u8],
    file: &str,
    warnings: &mut Warnings,
) -> Result<Vec<Graph>, GraphError> {
    let lexer = Lexer {
        src: content,
        pos: 0,
        line: 1,
        line_start: 0,
        file,
        warnings,
        concatenating: false,
    };
    let tokens = lexer.tokens()?;
    let mut graphs = Vec::new();
    let mut pos = 0;
    while pos < tokens.len() {
        let mut parser = Parser {
            tokens: &tokens,
            pos,
            file,
            warnings,
            graph: Graph::default(),
            directed: true,
            strict: false,
            strict_edges: HashMap::new(),
            depth: 0,
            anonymous_subgraphs: 0,
            copied_bytes: 0,
        };
        parser.graph()?;
        pos = parser.pos;
        let mut graph = parser.graph;
        finish_labels(&mut graph, warnings, file);
        graphs.push(graph);
    }
    if graphs.is_empty() {
        return Err(GraphError::Syntax {
            file: file.to_owned(),
            line: 1,
            column: 1,
            message: "expected 'graph' or 'digraph' (the file holds no graph)".to_owned(),
        });
    }
    Ok(graphs)
}

/// Computes each node's shown text (`text` property) from its label and shape.
fn finish_labels(graph: &mut Graph, warnings: &mut Warnings, file: &str) {
    let graph_name = graph.name.clone();
    for node in &mut graph.nodes {
        let shape = node.properties.get("shape").unwrap_or("");
        let label = node.properties.get("label").unwrap_or("\\N").to_owned();
        let is_record =
            shape.eq_ignore_ascii_case("record") || shape.eq_ignore_ascii_case("Mrecord");
        let text = if is_record && !label.starts_with('<') {
            match record_fields(&label) {
                Some(fields) => fields
                    .iter()
                    .map(|f| {
                        expand_escapes(&f.text, &node.id, &graph_name)
                            .trim_end_matches('\n')
                            .to_owned()
                    })
                    .filter(|t| !t.is_empty())
                    .collect::<Vec<_>>()
                    .join("\n"),
                None => {
                    warnings.add(
                        "bad_record_label",
                        "record label with unbalanced braces (shown as plain text)",
                        Location {
                            file: file.to_owned(),
                            line: None,
                            offset: None,
                        },
                    );
                    expand_escapes(&label, &node.id, &graph_name)
                }
            }
        } else if node.properties.get("label").is_some() && is_html_label(&label) {
            strip_tags(&label)
        } else {
            expand_escapes(&label, &node.id, &graph_name)
        };
        node.properties
            .set("text", text.trim_end_matches('\n').to_owned());
    }
}

fn is_html_label(label: &str) -> bool {
    label.contains("</") || label.contains("/>")
}

fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in html.chars() {
        match c {
            '<' => inside = true,
            '>' => inside = false,
            c if !inside => out.push(c),
            _ => {}
        }
    }
    out.trim().to_owned()
}

/// Interprets an escString: `\n \l \r` end a line, `\N` the node name, `\G` the graph name,
/// `\\` a backslash; unknown escapes keep the character.
pub fn expand_escapes(s: &str, node: &str, graph: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n' | 'l' | 'r') => out.push('\n'),
            Some('N') => out.push_str(node),
            Some('G') => out.push_str(graph),
            Some('E' | 'T' | 'H' | 'L') => {}
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// One field of a record label: its port and its text (escapes still to expand).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordField {
    pub port: Option<String>,
    pub text: String,
}

/// Parses a record label (`{ a | <p> b | { c | d } }`) into its leaf fields in reading order;
/// `None` when braces do not balance. `\{ \} \| \< \>` are literal characters; `\l \n \r` stay
/// escaped for [`expand_escapes`].
pub fn record_fields(label: &str) -> Option<Vec<RecordField>> {
    let mut fields = Vec::new();
    let mut current = String::new();
    let mut port: Option<String> = None;
    let mut in_port = false;
    let mut depth = 0i64;
    let mut chars = label.chars().peekable();
    let flush = |current: &mut String, port: &mut Option<String>, fields: &mut Vec<RecordField>| {
        let text = current.trim().to_owned();
        if !text.is_empty() || port.is_some() {
            fields.push(RecordField {
                port: port.take().map(|p| p.trim().to_owned()),
                text,
            });
        }
        current.clear();
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.peek().copied() {
                Some(n @ ('{' | '}' | '|' | '<' | '>' | ' ')) => {
                    chars.next();
                    if in_port {
                        port.get_or_insert_with(String::new).push(n);
                    } else {
                        current.push(n);
                    }
                }
                Some(n) => {
                    chars.next();
                    current.push('\\');
                    current.push(n);
                }
                None => current.push('\\'),
            },
            '{' => {
                depth += 1;
                flush(&mut current, &mut port, &mut fields);
            }
            '}' => {
                depth -= 1;
                if depth < 0 {
                    return None;
                }
                flush(&mut current, &mut port, &mut fields);
            }
            '|' => flush(&mut current, &mut port, &mut fields),
            '<' if !in_port => {
                in_port = true;
                port = Some(String::new());
            }
            '>' if in_port => in_port = false,
            c if in_port => port.get_or_insert_with(String::new).push(c),
            c => current.push(c),
        }
    }
    if depth != 0 || in_port {
        return None;
    }
    flush(&mut current, &mut port, &mut fields);
    Some(fields)
}

/// True when a DOT node id is a pointer value (LLVM writes `Node0x55d1c2a3b4c0`).
pub fn is_address_id(id: &str) -> bool {
    let hex = id.strip_prefix("Node").unwrap_or(id);
    hex.strip_prefix("0x")
        .is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The key a node is matched by across snapshots when its id is an address: the first line of its
/// shown text without a trailing ':' (LLVM's block name, or the function of a call graph node).
pub fn label_key(text: &str) -> String {
    let first = text.lines().next().unwrap_or("").trim();
    first.strip_suffix(':').unwrap_or(first).trim().to_owned()
}

/// Replaces address ids by label keys (keeping the address as property `dot_id`), so that the
/// same block in two LLVM dumps gets the same id.
fn match_by_label(graph: &mut Graph, warnings: &mut Warnings, file: &str) {
    if graph.nodes.is_empty() || !graph.nodes.iter().all(|n| is_address_id(&n.id)) {
        return;
    }
    let mut used: HashSet<String> = HashSet::new();
    let mut renames = Vec::with_capacity(graph.nodes.len());
    for node in &graph.nodes {
        let base = label_key(node.label());
        let base = if base.is_empty() {
            node.id.clone()
        } else {
            base
        };
        let mut key = base.clone();
        let mut k = 1;
        while used.contains(&key) {
            k += 1;
            key = format!("{base}#{k}");
        }
        if k > 1 {
            warnings.add(
                "label_collision",
                "two nodes with address ids share a label; the later one is matched as label#N",
                Location {
                    file: file.to_owned(),
                    line: None,
                    offset: None,
                },
            );
        }
        used.insert(key.clone());
        renames.push(key);
    }
    for (i, key) in renames.into_iter().enumerate() {
        let old = graph.nodes[i].id.clone();
        graph.nodes[i].properties.set("dot_id", old);
        graph.rename_node(i, key);
    }
}

/// Parses several DOT files (each with one or more graphs) into one snapshot sequence: a single
/// group whose graphs are in the order given. Nodes keep their DOT ids, except in graphs whose ids
/// are all addresses, where they are matched by label (see [`label_key`]).
pub fn parse_dot_sequence(files: &[(&str, &[u8])]) -> Result<Imported, GraphError> {
    let mut warnings = Warnings::new();
    let mut group = Group::default();
    for (file, content) in files {
        let graphs = parse_dot(content, file, &mut warnings)?;
        for mut graph in graphs {
            match_by_label(&mut graph, &mut warnings, file);
            if graph.name.is_empty() {
                graph.name = (*file).to_owned();
            }
            graph.properties.set("file", *file);
            group.graphs.push(graph);
        }
    }
    if let Some((first, _)) = files.first() {
        group.properties.set("name", *first);
    }
    Ok(Imported {
        document: Document {
            properties: Properties::new(),
            groups: vec![group],
        },
        warnings,
    })
}

/// Reads DOT files (plain, gzip or zstd) into one snapshot sequence.
pub fn load_dot(paths: &[&std::path::Path]) -> Result<Imported, GraphError> {
    let mut contents = Vec::new();
    for p in paths {
        contents.push((p.display().to_string(), memscape_io::read_input(p)?));
    }
    let refs: Vec<(&str, &[u8])> = contents
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    parse_dot_sequence(&refs)
}
