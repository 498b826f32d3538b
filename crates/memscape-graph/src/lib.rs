//! Compiler dependence graphs for memscape (the CPU half of the Ideal Graph Visualizer view).
//!
//! * [`igv`]: streaming importer for IGV's XML (groups, methods, difference-encoded snapshots).
//! * [`bgv`]: Graal's binary graph dumps (BGV, protocol versions 1–8), as IGV reads them.
//! * [`dot`]: Graphviz DOT parser (the whole grammar), several files as a snapshot sequence.
//! * [`filter`]: ordered property rules in TOML profiles, applied into a [`filter::ViewGraph`].
//! * [`layout`]: fast layered (Sugiyama) layout with progress and snapshot stability.
//! * [`crossings`]: crossing counter for any layered drawing, including `dot -Tplain` output.
//! * [`diff`]: added / removed / changed nodes and edges between two graphs.
//! * [`report`]: the serializable `memscape layout` report.

pub mod bgv;
pub mod crossings;
pub mod diff;
pub mod dot;
pub mod filter;
pub mod igv;
pub mod layout;
pub mod model;
pub mod navigate;
pub mod report;

pub use model::{Block, Document, Edge, Graph, Group, Method, Node, Properties};

use std::path::Path;

/// Everything that makes an input unusable as a whole. Recoverable problems are counted in
/// [`memscape_io::Warnings`] instead.
#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    #[error(transparent)]
    Input(#[from] memscape_io::InputError),
    /// Malformed text: the file, the 1-based line and column, and what was expected.
    #[error("{file}:{line}:{column}: {message}")]
    Syntax {
        file: String,
        line: u64,
        column: u64,
        message: String,
    },
    #[error("{file}: {message}")]
    Invalid { file: String, message: String },
    /// Malformed binary input: the file and byte offset, and what was expected there.
    #[error("{at}: {message}")]
    Binary {
        at: memscape_io::Location,
        message: String,
    },
    #[error("filter profile {profile}: {message}")]
    Profile { profile: String, message: String },
    /// A node search that is not a valid `[property=]regex`.
    #[error("search {query:?}: {message}")]
    Search { query: String, message: String },
}

/// An imported document with the recoverable problems met on the way.
#[derive(Debug, Clone, Default)]
pub struct Imported {
    pub document: Document,
    pub warnings: memscape_io::Warnings,
}

/// The format of a graph input, sniffed from its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphFormat {
    Igv,
    Dot,
    Bgv,
}

/// Sniffs the format: BGV starts with the bytes `BIGV`; otherwise from the first non-blank
/// bytes: XML starts with `<`, DOT with a keyword or a comment.
pub fn sniff_format(content: &[u8]) -> GraphFormat {
    if bgv::is_bgv(content) {
        return GraphFormat::Bgv;
    }
    let start = content
        .iter()
        .position(|b| !b.is_ascii_whitespace() && *b != 0xEF && *b != 0xBB && *b != 0xBF)
        .unwrap_or(content.len());
    if content[start..].starts_with(b"<") {
        GraphFormat::Igv
    } else {
        GraphFormat::Dot
    }
}

/// Loads graph files (IGV XML, Graal BGV or DOT, compressed or not) as one document. Several DOT
/// files form one snapshot sequence (see [`dot::parse_dot_sequence`]); IGV and BGV files each
/// add their groups.
pub fn load_graphs(paths: &[&Path]) -> Result<Imported, GraphError> {
    let mut contents = Vec::with_capacity(paths.len());
    for path in paths {
        contents.push((path.display().to_string(), memscape_io::read_input(path)?));
    }
    import_contents(contents)
}

/// [`load_graphs`] on contents already in memory: `(name for messages, decompressed bytes)`.
pub fn import_contents(contents: Vec<(String, Vec<u8>)>) -> Result<Imported, GraphError> {
    let mut out = Imported::default();
    let mut dot_inputs: Vec<(String, Vec<u8>)> = Vec::new();
    for (name, bytes) in contents {
        match sniff_format(&bytes) {
            format @ (GraphFormat::Igv | GraphFormat::Bgv) => {
                let imported = if format == GraphFormat::Bgv {
                    bgv::parse_bgv(&bytes, &name)?
                } else {
                    igv::parse_igv(&bytes, &name)?
                };
                out.document.groups.extend(imported.document.groups);
                if out.document.properties.is_empty() {
                    out.document.properties = imported.document.properties;
                }
                out.warnings.merge(imported.warnings);
            }
            GraphFormat::Dot => dot_inputs.push((name, bytes)),
        }
    }
    if !dot_inputs.is_empty() {
        let refs: Vec<(&str, &[u8])> = dot_inputs
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_slice()))
            .collect();
        let imported = dot::parse_dot_sequence(&refs)?;
        out.document.groups.extend(imported.document.groups);
        out.warnings.merge(imported.warnings);
    }
    Ok(out)
}

/// 1-based line and column of a byte offset (column counted in bytes).
pub(crate) fn line_column(content: &[u8], offset: usize) -> (u64, u64) {
    let offset = offset.min(content.len());
    let before = &content[..offset];
    let line = before.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    (line, (offset - line_start) as u64 + 1)
}

/// Turns byte offsets into line numbers for offsets that only grow, in linear total time.
pub(crate) struct LineTracker<'a> {
    content: &'a [u8],
    offset: usize,
    line: u64,
}

impl<'a> LineTracker<'a> {
    pub(crate) fn new(content: &'a [u8]) -> Self {
        Self {
            content,
            offset: 0,
            line: 1,
        }
    }

    pub(crate) fn line_at(&mut self, offset: usize) -> u64 {
        let offset = offset.min(self.content.len());
        if offset < self.offset {
            self.offset = 0;
            self.line = 1;
        }
        self.line += self.content[self.offset..offset]
            .iter()
            .filter(|&&b| b == b'\n')
            .count() as u64;
        self.offset = offset;
        self.line
    }
}
