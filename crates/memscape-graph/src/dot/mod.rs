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

mod labels;
mod lexer;
mod parser;

use std::collections::HashMap;

use memscape_io::Warnings;

pub use labels::{RecordField, expand_escapes, is_address_id, label_key, record_fields};
use labels::{finish_labels, match_by_label};
use lexer::Lexer;
use parser::Parser;

use crate::model::{Document, Graph, Group, Properties};
use crate::{GraphError, Imported};

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
