//! valgrind massif output (`massif.out.<pid>`), format version as written by valgrind 3.x.
//!
//! ```text
//! desc: <massif arguments>
//! cmd: <command line>
//! time_unit: i | ms | B
//! #-----------
//! snapshot=<n>
//! #-----------
//! time=<t>
//! mem_heap_B=<bytes>
//! mem_heap_extra_B=<bytes>
//! mem_stacks_B=<bytes>
//! heap_tree=empty | detailed | peak
//! <tree lines, only after detailed or peak>
//! ```
//!
//! A tree line is `<depth spaces>n<children>: <bytes> <label>` where the label is one of
//! `(heap allocation functions) malloc/new/new[], --alloc-fns, etc.` (the root),
//! `0x<addr>: <function> (<file>:<line>)`, `0x<addr>: <function> (in <object>)`,
//! `0x<addr>: <function>` and `in <N> place(s), [all] below massif's threshold (<pct>)`.
//! Every malformed line is a counted warning with its line number; the rest is loaded.

use std::path::Path;

use memscape_io::{InputError, Location, Warnings, numbered_lines};

/// Warning kinds (keys of [`MassifFile::warnings`]).
pub mod warn {
    pub const MALFORMED_LINE: &str = "malformed_line";
    pub const BAD_NUMBER: &str = "bad_number";
    pub const TREE_DEPTH: &str = "tree_depth";
    pub const CHILD_COUNT: &str = "child_count";
    pub const SNAPSHOT_NUMBER: &str = "snapshot_number";
    pub const MISSING_FIELD: &str = "missing_field";
    pub const NON_UTF8: &str = "non_utf8";
}

/// Why a massif file could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum MassifError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(
        "{at}: not a valgrind massif file: expected a header starting with `desc:` followed by `snapshot=` records; found {found}"
    )]
    NotMassif { at: Location, found: String },
}

/// Which tree a snapshot carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TreeKind {
    Empty,
    Detailed,
    Peak,
}

/// What a tree node stands for.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MassifLabel {
    /// `(heap allocation functions) malloc/new/new[], --alloc-fns, etc.`
    Root { text: String },
    /// `0x<addr>: <function> (<file>:<line>)` or `(in <object>)` or no location.
    Site {
        address: u64,
        function: String,
        file: Option<String>,
        line: Option<u32>,
        object: Option<String>,
    },
    /// `in N places, all below massif's threshold (01.00%)`.
    BelowThreshold { places: u64 },
    /// Anything else massif may print as a label (kept verbatim).
    Other { text: String },
}

impl MassifLabel {
    /// The name shown for this node: function with file:line or object, without the address
    /// (the address is part of the identity, see [`MassifLabel::identity`]).
    pub fn display_name(&self) -> String {
        match self {
            MassifLabel::Root { .. } => String::from("(heap allocation functions)"),
            MassifLabel::Site {
                address,
                function,
                file,
                line,
                object,
            } if function == "???" => match object {
                // Unsymbolized: the address is all that tells two such sites apart.
                Some(object) => format!("{address:#x} (in {object})"),
                None => format!("{address:#x}"),
            },
            MassifLabel::Site {
                function,
                file,
                line,
                object,
                ..
            } => match (file, line, object) {
                (Some(file), Some(line), _) => format!("{function} ({file}:{line})"),
                (_, _, Some(object)) => format!("{function} (in {object})"),
                _ => function.clone(),
            },
            MassifLabel::BelowThreshold { .. } => String::from("below massif's threshold"),
            MassifLabel::Other { text } => text.clone(),
        }
    }

    /// What identifies this node among its siblings across snapshots: massif keys its tree by
    /// instruction address, and the below-threshold line changes its text with its place count.
    pub fn identity(&self) -> String {
        match self {
            MassifLabel::Site { address, .. } => format!("{address:#x}: {}", self.display_name()),
            _ => self.display_name(),
        }
    }
}

/// One node of a snapshot's tree. Nodes are stored in preorder; `parent` of the root is itself.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MassifNode {
    pub parent: u32,
    pub depth: u32,
    pub bytes: u64,
    /// The `n<children>` count as written (checked against the lines that follow).
    pub declared_children: u64,
    pub label: MassifLabel,
    /// 1-based line in the file.
    pub line: u64,
}

/// A snapshot's allocation tree (node 0 is the root).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct MassifTree {
    pub nodes: Vec<MassifNode>,
}

impl MassifTree {
    pub fn root_bytes(&self) -> Option<u64> {
        self.nodes.first().map(|n| n.bytes)
    }

    /// Children of `node`, in file order.
    pub fn children(&self, node: u32) -> impl Iterator<Item = u32> + '_ {
        self.nodes
            .iter()
            .enumerate()
            .skip(node as usize + 1)
            .filter(move |(_, n)| n.parent == node)
            .map(|(i, _)| i as u32)
    }
}

/// One `snapshot=N` record.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Snapshot {
    /// The `N` of `snapshot=N`.
    pub number: u64,
    pub time: u64,
    pub mem_heap_b: u64,
    pub mem_heap_extra_b: u64,
    pub mem_stacks_b: u64,
    pub heap_tree: TreeKind,
    /// Present for `detailed` and `peak` snapshots.
    pub tree: Option<MassifTree>,
    /// 1-based line of `snapshot=N`.
    pub line: u64,
}

impl Snapshot {
    /// Useful heap + allocator overhead + stacks: ms_print's `total(B)` column.
    pub fn total_b(&self) -> u64 {
        self.mem_heap_b
            .saturating_add(self.mem_heap_extra_b)
            .saturating_add(self.mem_stacks_b)
    }
}

/// A parsed massif file.
#[derive(Debug, Clone, serde::Serialize)]
pub struct MassifFile {
    pub source: String,
    pub desc: String,
    pub cmd: String,
    /// `i` (instructions), `ms` or `B` (bytes allocated/freed).
    pub time_unit: String,
    pub snapshots: Vec<Snapshot>,
    pub warnings: Warnings,
}

impl MassifFile {
    /// Index (into `snapshots`) of the snapshot massif marked `heap_tree=peak`.
    pub fn marked_peak(&self) -> Option<usize> {
        self.snapshots
            .iter()
            .position(|s| s.heap_tree == TreeKind::Peak)
    }

    /// The marked peak, or else the snapshot with the most useful + extra heap (massif's own
    /// peak criterion), the first one on ties.
    pub fn peak_snapshot(&self) -> Option<usize> {
        self.marked_peak().or_else(|| {
            let mut best: Option<(usize, u64)> = None;
            for (i, s) in self.snapshots.iter().enumerate() {
                let heap = s.mem_heap_b.saturating_add(s.mem_heap_extra_b);
                if best.is_none_or(|(_, b)| heap > b) {
                    best = Some((i, heap));
                }
            }
            best.map(|(i, _)| i)
        })
    }

    /// Indices of snapshots carrying a tree (`detailed` or `peak`).
    pub fn detailed(&self) -> Vec<usize> {
        self.snapshots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.tree.is_some())
            .map(|(i, _)| i)
            .collect()
    }

    /// `(time, mem_heap_B)` of every snapshot, trees or not: the heap-size time series.
    pub fn heap_series(&self) -> Vec<(u64, u64)> {
        self.snapshots
            .iter()
            .map(|s| (s.time, s.mem_heap_b))
            .collect()
    }
}

/// One point of the heap-size curve of a massif file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CurvePoint {
    pub snapshot: u64,
    pub time: u64,
    pub heap_bytes: u64,
    pub heap_extra_bytes: u64,
    pub stacks_bytes: u64,
}

/// What a massif file without a heap tree worth drawing still tells: its size curve. massif
/// writes no tree when run with `--detailed-freq` above the snapshot count, and some tools
/// write only the totals (massif-visualizer's `massif.out.huge`); a program that never
/// touches the heap, profiled with `--stacks=yes`, has trees that are all one empty root.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HeapCurveReport {
    pub source: String,
    /// Whether some snapshot has a tree (then an empty one: `no_heap_bytes`); the field
    /// tells JSON readers why there is no `tree`.
    pub has_tree: bool,
    /// True when no snapshot has a heap byte and the curve to read is the stacks'
    /// (`mem_stacks_B`, recorded by `valgrind --stacks=yes`).
    pub no_heap_bytes: bool,
    pub message: String,
    pub time_unit: String,
    pub snapshots: Vec<CurvePoint>,
    /// The snapshot with the most useful + extra heap; with `no_heap_bytes`, the one with
    /// the most stack bytes.
    pub peak: Option<CurvePoint>,
}

impl MassifFile {
    /// The curve to show instead of a heap tree, when there is no tree
    /// ([`Self::curve_without_tree`]) or no heap byte in any snapshot
    /// ([`Self::curve_of_stacks_only`]); `None` when the file has a heap tree to draw.
    pub fn curve_instead_of_tree(&self) -> Option<HeapCurveReport> {
        self.curve_without_tree()
            .or_else(|| self.curve_of_stacks_only())
    }

    fn curve_points(&self) -> Vec<CurvePoint> {
        self.snapshots
            .iter()
            .map(|s| CurvePoint {
                snapshot: s.number,
                time: s.time,
                heap_bytes: s.mem_heap_b,
                heap_extra_bytes: s.mem_heap_extra_b,
                stacks_bytes: s.mem_stacks_b,
            })
            .collect()
    }

    /// The stack-size curve and a sentence saying the profile measured stacks only, for files
    /// where no snapshot has a heap byte but some has stack bytes (`valgrind --stacks=yes` on a
    /// program that never calls malloc): their trees are one empty root that would draw as an
    /// empty picture. `None` otherwise.
    pub fn curve_of_stacks_only(&self) -> Option<HeapCurveReport> {
        let heap_bytes = |s: &Snapshot| s.mem_heap_b.saturating_add(s.mem_heap_extra_b);
        if self.snapshots.iter().any(|s| heap_bytes(s) > 0) {
            return None;
        }
        let points = self.curve_points();
        // The first snapshot with the most stack bytes.
        let peak = points
            .iter()
            .fold(None::<&CurvePoint>, |best, p| match best {
                Some(b) if b.stacks_bytes >= p.stacks_bytes => Some(b),
                _ => Some(p),
            })
            .filter(|p| p.stacks_bytes > 0)?
            .clone();
        Some(HeapCurveReport {
            source: self.source.clone(),
            has_tree: !self.detailed().is_empty(),
            no_heap_bytes: true,
            message: format!(
                "this profile has no heap bytes: all {} snapshots have mem_heap_B=0; it measured stacks (valgrind --stacks=yes), which peak at {} B in snapshot {}; showing the stack-size curve",
                self.snapshots.len(),
                peak.stacks_bytes,
                peak.snapshot
            ),
            time_unit: self.time_unit.clone(),
            snapshots: points,
            peak: Some(peak),
        })
    }

    /// The heap-size curve and a sentence saying why there is no tree, for files whose
    /// snapshots carry none (`None` when some snapshot has a tree).
    pub fn curve_without_tree(&self) -> Option<HeapCurveReport> {
        if !self.detailed().is_empty() {
            return None;
        }
        let points = self.curve_points();
        let peak = self.peak_snapshot().and_then(|i| points.get(i).cloned());
        Some(HeapCurveReport {
            source: self.source.clone(),
            has_tree: false,
            no_heap_bytes: false,
            message: format!(
                "no snapshot has a heap tree (all {} snapshots are heap_tree=empty: massif ran with --detailed-freq above the snapshot count, or the file was cut to its totals); showing the heap-size curve only",
                self.snapshots.len()
            ),
            time_unit: self.time_unit.clone(),
            snapshots: points,
            peak,
        })
    }
}

/// True when `bytes` look like a massif file (used to choose the importer by content).
pub fn sniff(bytes: &[u8]) -> bool {
    let start = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    start.starts_with(b"desc:")
}

/// Reads a massif file (plain, gzip or zstd).
pub fn read_massif(path: &Path) -> Result<MassifFile, MassifError> {
    let bytes = memscape_io::read_input(path)?;
    parse_massif(&path.display().to_string(), &bytes)
}

enum State {
    Header,
    Snapshot,
    Tree,
}

struct Parser<'a> {
    source: &'a str,
    file: MassifFile,
    /// Open tree nodes (ids into the current snapshot's tree), innermost last.
    stack: Vec<u32>,
    /// Actual children counted per node of the current tree.
    child_counts: Vec<u64>,
    seen_fields: u8,
}

const FIELD_TIME: u8 = 1;
const FIELD_HEAP: u8 = 2;
const FIELD_EXTRA: u8 = 4;
const FIELD_STACKS: u8 = 8;
const FIELD_TREE: u8 = 16;
const ALL_FIELDS: u8 = 31;

impl Parser<'_> {
    fn warn(&mut self, kind: &'static str, message: &str, line: u64) {
        tracing::debug!("{}:{line}: {message}", self.source);
        self.file
            .warnings
            .add(kind, message, Location::line(self.source, line));
    }

    fn number(&mut self, text: &str, line: u64) -> u64 {
        match text.trim().parse::<u64>() {
            Ok(v) => v,
            Err(_) => {
                self.warn(
                    warn::BAD_NUMBER,
                    "expected a decimal integer below 2^64 (taken as 0)",
                    line,
                );
                0
            }
        }
    }

    fn close_tree(&mut self) {
        let Some(snapshot) = self.file.snapshots.last() else {
            return;
        };
        let Some(tree) = &snapshot.tree else {
            return;
        };
        let mismatched: Vec<u64> = tree
            .nodes
            .iter()
            .zip(&self.child_counts)
            .filter(|(n, count)| n.declared_children != **count)
            .map(|(n, _)| n.line)
            .collect();
        for line in mismatched {
            self.warn(
                warn::CHILD_COUNT,
                "tree node with a different number of child lines than its n<children> says",
                line,
            );
        }
        self.stack.clear();
        self.child_counts.clear();
    }

    fn close_snapshot(&mut self) {
        self.close_tree();
        if let Some(last) = self.file.snapshots.last()
            && self.seen_fields != ALL_FIELDS
        {
            let line = last.line;
            self.warn(
                warn::MISSING_FIELD,
                "snapshot without one of time=, mem_heap_B=, mem_heap_extra_B=, mem_stacks_B=, heap_tree= (taken as 0 / empty)",
                line,
            );
        }
        self.seen_fields = 0;
    }

    fn tree_line(&mut self, text: &str, line: u64) {
        let depth = text.len() - text.trim_start_matches(' ').len();
        let Some((declared, bytes, label)) = parse_tree_line(&text[depth..]) else {
            self.warn(
                warn::MALFORMED_LINE,
                "expected a tree line `n<children>: <bytes> <label>`",
                line,
            );
            return;
        };
        let (declared, bytes) = match (declared, bytes) {
            (Some(d), Some(b)) => (d, b),
            _ => {
                self.warn(
                    warn::BAD_NUMBER,
                    "tree line with a child count or byte count that is not a decimal integer below 2^64 (line skipped)",
                    line,
                );
                return;
            }
        };
        let Some(snapshot) = self.file.snapshots.last_mut() else {
            return;
        };
        let tree = snapshot.tree.get_or_insert_with(MassifTree::default);
        // Close the nodes this line is not inside of.
        while let Some(&top) = self.stack.last() {
            if (tree.nodes[top as usize].depth as usize) < depth {
                break;
            }
            self.stack.pop();
        }
        let parent = match self.stack.last() {
            Some(&p) => {
                if tree.nodes[p as usize].depth as usize + 1 != depth {
                    self.file.warnings.add(
                        warn::TREE_DEPTH,
                        "tree line indented more than one level below its parent (attached to the nearest shallower node)",
                        Location::line(self.source, line),
                    );
                }
                p
            }
            None if tree.nodes.is_empty() => {
                if depth != 0 {
                    self.file.warnings.add(
                        warn::TREE_DEPTH,
                        "first tree line of a snapshot is indented (taken as the root)",
                        Location::line(self.source, line),
                    );
                }
                0
            }
            None => {
                self.file.warnings.add(
                    warn::TREE_DEPTH,
                    "a second root line in one snapshot's tree (skipped)",
                    Location::line(self.source, line),
                );
                return;
            }
        };
        let Ok(id) = u32::try_from(tree.nodes.len()) else {
            return;
        };
        if id != 0 {
            self.child_counts[parent as usize] += 1;
        }
        let depth = if id == 0 {
            0
        } else {
            tree.nodes[parent as usize].depth + 1
        };
        tree.nodes.push(MassifNode {
            parent,
            depth,
            bytes,
            declared_children: declared,
            label,
            line,
        });
        self.child_counts.push(0);
        self.stack.push(id);
    }

    fn line(&mut self, state: State, text: &str, line: u64) -> State {
        if text.starts_with("#-") {
            if matches!(state, State::Tree) {
                self.close_tree();
                return State::Snapshot;
            }
            return state;
        }
        if let Some(n) = text.strip_prefix("snapshot=") {
            self.close_snapshot();
            let number = self.number(n, line);
            if number != self.file.snapshots.len() as u64 {
                self.warn(
                    warn::SNAPSHOT_NUMBER,
                    "snapshot number out of sequence (expected one more than the previous)",
                    line,
                );
            }
            self.file.snapshots.push(Snapshot {
                number,
                time: 0,
                mem_heap_b: 0,
                mem_heap_extra_b: 0,
                mem_stacks_b: 0,
                heap_tree: TreeKind::Empty,
                tree: None,
                line,
            });
            return State::Snapshot;
        }
        match state {
            State::Header => {
                if let Some(v) = text.strip_prefix("desc:") {
                    self.file.desc = v.trim().to_owned();
                } else if let Some(v) = text.strip_prefix("cmd:") {
                    self.file.cmd = v.trim().to_owned();
                } else if let Some(v) = text.strip_prefix("time_unit:") {
                    self.file.time_unit = v.trim().to_owned();
                } else if !text.trim().is_empty() {
                    self.warn(
                        warn::MALFORMED_LINE,
                        "expected a header line `desc:`, `cmd:` or `time_unit:`",
                        line,
                    );
                }
                State::Header
            }
            State::Tree => {
                if text.trim_start().starts_with('n') {
                    self.tree_line(text, line);
                    State::Tree
                } else {
                    self.close_tree();
                    self.line(State::Snapshot, text, line)
                }
            }
            State::Snapshot => {
                let Some((key, value)) = text.split_once('=') else {
                    if !text.trim().is_empty() {
                        self.warn(
                            warn::MALFORMED_LINE,
                            "expected `key=value` inside a snapshot",
                            line,
                        );
                    }
                    return State::Snapshot;
                };
                let field = match key {
                    "time" => FIELD_TIME,
                    "mem_heap_B" => FIELD_HEAP,
                    "mem_heap_extra_B" => FIELD_EXTRA,
                    "mem_stacks_B" => FIELD_STACKS,
                    "heap_tree" => FIELD_TREE,
                    _ => {
                        self.warn(
                            warn::MALFORMED_LINE,
                            "unknown snapshot field (expected time, mem_heap_B, mem_heap_extra_B, mem_stacks_B or heap_tree)",
                            line,
                        );
                        return State::Snapshot;
                    }
                };
                self.seen_fields |= field;
                if field == FIELD_TREE {
                    let kind = match value.trim() {
                        "empty" => TreeKind::Empty,
                        "detailed" => TreeKind::Detailed,
                        "peak" => TreeKind::Peak,
                        _ => {
                            self.warn(
                                warn::MALFORMED_LINE,
                                "expected heap_tree=empty, detailed or peak (taken as empty)",
                                line,
                            );
                            TreeKind::Empty
                        }
                    };
                    if let Some(s) = self.file.snapshots.last_mut() {
                        s.heap_tree = kind;
                    }
                    return if kind == TreeKind::Empty {
                        State::Snapshot
                    } else {
                        State::Tree
                    };
                }
                let v = self.number(value, line);
                if let Some(s) = self.file.snapshots.last_mut() {
                    match field {
                        FIELD_TIME => s.time = v,
                        FIELD_HEAP => s.mem_heap_b = v,
                        FIELD_EXTRA => s.mem_heap_extra_b = v,
                        _ => s.mem_stacks_b = v,
                    }
                }
                State::Snapshot
            }
        }
    }
}

/// Splits `n<children>: <bytes> <label>` (without indentation). `None` when the shape is wrong;
/// numbers that do not parse come back as `None` inside.
fn parse_tree_line(text: &str) -> Option<(Option<u64>, Option<u64>, MassifLabel)> {
    let rest = text.strip_prefix('n')?;
    let (children, rest) = rest.split_once(": ")?;
    let rest = rest.trim_start();
    let (bytes, label) = rest.split_once(' ').unwrap_or((rest, ""));
    Some((
        children.parse().ok(),
        bytes.parse().ok(),
        parse_label(label.trim()),
    ))
}

fn parse_label(text: &str) -> MassifLabel {
    if text.starts_with("(heap allocation functions)") {
        return MassifLabel::Root {
            text: text.to_owned(),
        };
    }
    if let Some(rest) = text.strip_prefix("in ")
        && text.contains("below massif's threshold")
    {
        let places = rest
            .split(' ')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        return MassifLabel::BelowThreshold { places };
    }
    if let Some(hex) = text.strip_prefix("0x")
        && let Some((addr, rest)) = hex.split_once(':')
        && let Ok(address) = u64::from_str_radix(addr, 16)
    {
        let rest = rest.trim();
        let (function, file, line, object) = split_location(rest);
        return MassifLabel::Site {
            address,
            function,
            file,
            line,
            object,
        };
    }
    MassifLabel::Other {
        text: text.to_owned(),
    }
}

type SiteParts = (String, Option<String>, Option<u32>, Option<String>);

/// `function (file:line)` / `function (in object)` / `function`. The function itself may
/// contain parentheses (C++ signatures), so the location is the last balanced `( … )` group.
fn split_location(text: &str) -> SiteParts {
    let plain = || (text.to_owned(), None, None, None);
    let Some(body) = text.strip_suffix(')') else {
        return plain();
    };
    let mut depth = 0usize;
    let mut open = None;
    for (i, c) in body.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' if depth == 0 => {
                open = Some(i);
                break;
            }
            '(' => depth -= 1,
            _ => {}
        }
    }
    let Some(open) = open else {
        return plain();
    };
    let function = body[..open].trim_end();
    let inner = &body[open + 1..];
    if function.is_empty() {
        return plain();
    }
    if let Some(object) = inner.strip_prefix("in ") {
        return (function.to_owned(), None, None, Some(object.to_owned()));
    }
    if let Some((file, line)) = inner.rsplit_once(':')
        && let Ok(line) = line.parse::<u32>()
    {
        return (function.to_owned(), Some(file.to_owned()), Some(line), None);
    }
    plain()
}

/// Parses massif output held in memory (already decompressed). `source` names the input in
/// warnings and errors.
pub fn parse_massif(source: &str, bytes: &[u8]) -> Result<MassifFile, MassifError> {
    if !sniff(bytes) {
        let found = memscape_io::quote_start(bytes);
        return Err(MassifError::NotMassif {
            at: Location::line(source, 1),
            found,
        });
    }
    let mut parser = Parser {
        source,
        file: MassifFile {
            source: source.to_owned(),
            desc: String::new(),
            cmd: String::new(),
            time_unit: String::new(),
            snapshots: Vec::new(),
            warnings: Warnings::new(),
        },
        stack: Vec::new(),
        child_counts: Vec::new(),
        seen_fields: 0,
    };
    let mut state = State::Header;
    for (number, raw) in numbered_lines(bytes) {
        let raw = if number == 1 {
            raw.strip_prefix(b"\xef\xbb\xbf").unwrap_or(raw)
        } else {
            raw
        };
        let text = match std::str::from_utf8(raw) {
            Ok(t) => std::borrow::Cow::Borrowed(t),
            Err(_) => {
                parser.warn(
                    warn::NON_UTF8,
                    "bytes that are not UTF-8 (replaced by U+FFFD)",
                    number,
                );
                String::from_utf8_lossy(raw)
            }
        };
        state = parser.line(state, &text, number);
    }
    parser.close_snapshot();
    if parser.file.snapshots.is_empty() {
        return Err(MassifError::NotMassif {
            at: Location::line(source, 1),
            found: String::from("a header without any `snapshot=` record"),
        });
    }
    Ok(parser.file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_of_every_shape() {
        let site = parse_label("0x4C2B3AF: malloc (vg_replace_malloc.c:299)");
        assert_eq!(
            site,
            MassifLabel::Site {
                address: 0x4C2B3AF,
                function: "malloc".into(),
                file: Some("vg_replace_malloc.c".into()),
                line: Some(299),
                object: None
            }
        );
        let obj = parse_label(
            "0x5FEBF71: KConfig::KConfig(QString const&, QFlags<KConfig::OpenFlag>, char const*) (in /usr/lib/libkdecore.so.5.3.0)",
        );
        assert_eq!(
            obj.display_name(),
            "KConfig::KConfig(QString const&, QFlags<KConfig::OpenFlag>, char const*) (in /usr/lib/libkdecore.so.5.3.0)"
        );
        assert!(matches!(
            obj,
            MassifLabel::Site {
                object: Some(_),
                ..
            }
        ));
        assert_eq!(
            parse_label("in 803 places, all below massif's threshold (01.00%)"),
            MassifLabel::BelowThreshold { places: 803 }
        );
        assert_eq!(
            parse_label("in 1 place, below massif's threshold (01.00%)"),
            MassifLabel::BelowThreshold { places: 1 }
        );
        assert!(matches!(
            parse_label("(heap allocation functions) malloc/new/new[], --alloc-fns, etc."),
            MassifLabel::Root { .. }
        ));
        let bare = parse_label("0x504DABB: (below main)");
        assert_eq!(bare.display_name(), "(below main)");
    }

    #[test]
    fn very_large_values_and_bad_lines_are_counted() {
        let text = "desc: x\ncmd: y\ntime_unit: B\n#-----------\nsnapshot=0\n#-----------\ntime=18446744073709551615\nmem_heap_B=18446744073709551615\nmem_heap_extra_B=99999999999999999999\nmem_stacks_B=0\nheap_tree=detailed\nn2: 18446744073709551615 (heap allocation functions) malloc/new/new[], --alloc-fns, etc.\n n0: 18446744073709551614 0x1: f (a.c:1)\n n0: 1 in 2 places, all below massif's threshold (01.00%)\ngarbage here\n#-----------\nsnapshot=5\n";
        let file = parse_massif("t", text.as_bytes()).unwrap();
        assert_eq!(file.snapshots.len(), 2);
        assert_eq!(file.snapshots[0].mem_heap_b, u64::MAX);
        assert_eq!(file.snapshots[0].time, u64::MAX);
        assert_eq!(
            file.snapshots[0].tree.as_ref().unwrap().root_bytes(),
            Some(u64::MAX)
        );
        assert_eq!(file.warnings.count(warn::BAD_NUMBER), 1);
        assert_eq!(file.warnings.count(warn::MALFORMED_LINE), 1);
        assert_eq!(file.warnings.count(warn::SNAPSHOT_NUMBER), 1);
        assert_eq!(file.warnings.count(warn::MISSING_FIELD), 1);
        let malformed = &file
            .warnings
            .kinds()
            .iter()
            .find(|k| k.kind == warn::MALFORMED_LINE)
            .unwrap()
            .first[0];
        assert_eq!(malformed.line, Some(15));
    }

    #[test]
    fn child_counts_and_depth_are_checked() {
        let text = "desc: x\ncmd: y\ntime_unit: i\nsnapshot=0\ntime=1\nmem_heap_B=10\nmem_heap_extra_B=0\nmem_stacks_B=0\nheap_tree=detailed\nn3: 10 (heap allocation functions) x\n n1: 10 0x1: f (a.c:1)\n   n0: 10 0x2: g (a.c:2)\n";
        let file = parse_massif("t", text.as_bytes()).unwrap();
        let tree = file.snapshots[0].tree.as_ref().unwrap();
        assert_eq!(tree.nodes.len(), 3);
        assert_eq!(tree.nodes[2].parent, 1);
        assert_eq!(tree.nodes[2].depth, 2);
        assert_eq!(file.warnings.count(warn::TREE_DEPTH), 1);
        assert_eq!(file.warnings.count(warn::CHILD_COUNT), 1);
    }

    #[test]
    fn not_massif_is_an_error_naming_the_file() {
        let err = parse_massif("f.txt", b"hello\n").unwrap_err();
        assert!(err.to_string().contains("f.txt:1"), "{err}");
        assert!(parse_massif("g", b"desc: x\ncmd: y\n").is_err());
    }
}
