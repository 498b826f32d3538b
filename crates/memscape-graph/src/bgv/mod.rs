//! Graal's Binary Graph format (BGV, "BIGV"): what GraalVM and the Truffle languages write with
//! `-Dgraal.Dump` / `-Djdk.graal.Dump` and what IGV and Seafoam read. Protocol versions 1 to 8
//! (GraalVM writes 6.1 before 20.1, 7.0 since, 8.0 in the newest builds); gzip is undone by
//! memscape-io before this reader sees the bytes.
//!
//! ```text
//! file      = "BIGV" major:u8 minor:u8 item*          (a new header may start a new stream)
//! item      = 0x00 group-begin | 0x01 graph | 0x02 group-end | 0x03 document-properties (v7+)
//! group     = name:pool short-name:pool method:pool bci:i32 properties
//! graph     = id:i32 format:string args:(count:i32 value*) body     (v1–2: title:pool body)
//! body      = properties nodes:(count:i32 node*) blocks:(count:i32 block*)
//! node      = id:i32 class:pool has-predecessor:u8 properties slots(inputs) slots(successors)
//! slots     = per slot of the class: id:i32 (direct) | count:u16 id:i32* (list); -1 = empty
//! block     = id:i32 nodes:(count:i32 id:i32*) successors:(count:i32 id:i32*)
//! properties= count:u16 (v8: 0xffff count:i32) (key:pool value)*
//! value     = 0x00 pool | 0x01 i32 | 0x02 i64 | 0x03 f64 | 0x04 f32 | 0x05 true | 0x06 false
//!           | 0x07 (0x01 ints | 0x03 doubles | 0x00 pools) | 0x08 body (a nested graph)
//! pool      = 0x05 null | 0x00 id:u16 entry | tag:u8 id:u16 (a reference)
//! entry     = 0x01 string | 0x02 enum(class:pool ordinal:i32) | 0x03 class(name kind values?)
//!           | 0x04 method(class name signature modifiers:i32 bytecodes) | 0x06 node class
//!           (class:pool template:string input-slots successor-slots) | 0x07 field | 0x08 signature
//!           | 0x09 source position | 0x0a node(id:i32 class:pool)
//! string    = length:i32 (-1: null) UTF-8 bytes
//! ```
//!
//! Everything is big-endian. The model follows IGV: a BGV group is a [`Group`] (nested groups
//! nest), its graphs the snapshots in order; graphs outside any group go to a group named after
//! the file. Nodes are named by their id (stable across the phases of one compilation), with
//! properties `idx`, `hasPredecessor`, the node's own (IGV's reserved names prefixed `!data.`),
//! `name` (the class's name template filled in), `class` (the Java class) and `block`. Input
//! edges run from the input to the user, with the input type as kind (`Value`, `Memory`,
//! `State`, `Guard`, `Anchor`, …) and the slot as label (`x`, `values[2]`); successor edges run
//! from the node to its successor with kind `Successor`. Graphs nested in node properties become
//! graphs of a group `subgraphs` (property `subgraphs_of`: the graph's name) inside the group of
//! their graph.
//!
//! Errors name the byte offset in the decompressed stream. A stream that breaks off (a dump cut
//! short) or holds a byte this reader does not understand after some graphs keeps those graphs,
//! with an `unread_rest` warning saying where and why; counted warnings:
//! `unknown_version`, `unknown_pool_reference`, `bad_enum_ordinal`, `non_utf8`,
//! `duplicate_node`, `edge_unknown_node`, `block_unknown_node`, `unbalanced_group`,
//! `unclosed_group`, `unread_rest`.

mod build;
mod pool;
mod read;

pub use build::SUCCESSOR_KIND;

use memscape_io::{Location, Warnings};

use crate::model::{Document, Group, Method, Properties};
use crate::{GraphError, Imported};
use pool::{Length, Value};
use read::{ReadError, Reader};

const BEGIN_GROUP: u8 = 0x00;
const BEGIN_GRAPH: u8 = 0x01;
const CLOSE_GROUP: u8 = 0x02;
const BEGIN_DOCUMENT: u8 = 0x03;

/// Property of the group that holds the graphs nested in a graph's node properties: the name of
/// that graph.
pub const SUBGRAPHS_OF: &str = "subgraphs_of";

/// The newest protocol version this reader knows (GraalVM's `GraphProtocol` writes 8.0).
pub const NEWEST_VERSION: (u8, u8) = (8, 0);

/// Whether decompressed content is a BGV stream.
pub fn is_bgv(content: &[u8]) -> bool {
    content.starts_with(b"BIGV")
}

/// Reads and imports a BGV file (plain or gzip, as Graal writes `.bgv` and `.bgv.gz`).
pub fn load_bgv(path: &std::path::Path) -> Result<Imported, GraphError> {
    let bytes = memscape_io::read_input(path)?;
    parse_bgv(&bytes, &path.display().to_string())
}

/// Imports a decompressed BGV stream; `file` names it in errors and warnings.
pub fn parse_bgv(content: &[u8], file: &str) -> Result<Imported, GraphError> {
    if !is_bgv(content) {
        let start: String = String::from_utf8_lossy(&content[..content.len().min(8)]).into();
        return Err(GraphError::Binary {
            at: Location::offset(file, 0),
            message: format!(
                "not a Graal BGV file: expected the magic bytes \"BIGV\", found {start:?}"
            ),
        });
    }
    let mut warnings = Warnings::new();
    let mut stream = Stream {
        reader: Reader::new(content, file, &mut warnings),
        file,
        document: Document::default(),
        open: Vec::new(),
        root_group: None,
        graphs: 0,
    };
    if let Err(e) = stream.run() {
        if stream.graphs == 0 {
            return Err(GraphError::Binary {
                at: Location::offset(file, e.offset as u64),
                message: e.message,
            });
        }
        let left = content.len().saturating_sub(e.offset);
        let why = if e.eof {
            "the stream ends inside an item (a dump cut short?)"
        } else {
            "a byte this reader does not understand"
        };
        stream.reader.warnings.add(
            "unread_rest",
            format!(
                "{}; {why}: the last {left} bytes were not read, the {} graphs before were",
                e.message, stream.graphs
            ),
            Location::offset(file, e.offset as u64),
        );
    }
    let document = stream.finish();
    Ok(Imported { document, warnings })
}

/// The reading of one file: the reader, the document so far, the groups open.
struct Stream<'a, 'w> {
    reader: Reader<'a, 'w>,
    file: &'a str,
    document: Document,
    open: Vec<Group>,
    /// Index in `document.groups` of the group that holds graphs written outside any group.
    root_group: Option<usize>,
    graphs: usize,
}

impl Stream<'_, '_> {
    fn run(&mut self) -> Result<(), ReadError> {
        loop {
            if self.reader.cur.at_end() {
                return Ok(());
            }
            if self.reader.cur.starts_with(b"BIGV") {
                self.header()?;
                continue;
            }
            let token_at = self.reader.cur.pos;
            match self.reader.cur.u8("item tag")? {
                BEGIN_GROUP => self.begin_group()?,
                BEGIN_GRAPH => self.graph()?,
                CLOSE_GROUP => self.close_group(),
                BEGIN_DOCUMENT => {
                    let props = self.reader.properties("document properties")?;
                    for (key, value) in props {
                        self.document.properties.set(key, value.text(Length::Long));
                    }
                }
                other => {
                    return Err(ReadError {
                        offset: token_at,
                        message: format!(
                            "unknown item tag 0x{other:02x} (expected group 0x00, graph 0x01, end of group 0x02 or document 0x03)"
                        ),
                        eof: false,
                    });
                }
            }
        }
    }

    /// `BIGV major minor`: a (new) stream with an empty constant pool.
    fn header(&mut self) -> Result<(), ReadError> {
        self.reader.cur.take(4, "the header")?;
        let major = self.reader.cur.u8("the major version")?;
        let minor = self.reader.cur.u8("the minor version")?;
        if major == 0 || (major, minor) > NEWEST_VERSION {
            self.reader.warn(
                "unknown_version",
                format!(
                    "BGV version {major}.{minor}: this reader knows versions 1.0 to {}.{}; read as the nearest it knows",
                    NEWEST_VERSION.0, NEWEST_VERSION.1
                ),
            );
        }
        self.reader.major = major.max(1);
        self.reader.minor = minor;
        self.reader.reset_pool();
        Ok(())
    }

    fn begin_group(&mut self) -> Result<(), ReadError> {
        let name = self.reader.pool_text("group name")?;
        let short_name = self.reader.pool_text("group short name")?;
        let method = self.reader.pool_object("group method")?;
        let bci = self.reader.cur.i32("group bci")?;
        let props = self.reader.properties("group properties")?;
        let mut properties = Properties::new();
        properties.set("name", name.clone());
        if !short_name.is_empty() && short_name != name {
            properties.set("short_name", short_name.clone());
        }
        for (key, value) in &props {
            properties.set(key.clone(), value.text(Length::Long));
        }
        let method = method.map(|m| Method {
            name: m.text(Length::Long),
            short_name,
            bci: (bci >= 0).then_some(i64::from(bci)),
            ..Method::default()
        });
        self.open.push(Group {
            properties,
            method,
            ..Group::default()
        });
        Ok(())
    }

    fn close_group(&mut self) {
        match self.open.pop() {
            Some(group) => self.place_group(group),
            None => self
                .reader
                .warn("unbalanced_group", "end of a group that was never begun"),
        }
    }

    fn place_group(&mut self, group: Group) {
        match self.open.last_mut() {
            Some(parent) => parent.groups.push(group),
            None => self.document.groups.push(group),
        }
    }

    fn graph(&mut self) -> Result<(), ReadError> {
        let at = Location::offset(self.file, self.reader.cur.pos as u64);
        let (id, name) = if self.reader.major < 3 {
            (None, self.reader.pool_text("graph title")?)
        } else {
            let id = self.reader.cur.i32("graph id")?;
            let format = self.reader.string_or_empty("graph title format")?;
            let n = self.reader.cur.count("graph title arguments", 1)?;
            let mut args = Vec::with_capacity(n);
            for _ in 0..n {
                args.push(self.reader.value("graph title argument")?);
            }
            (Some(id), format_title(&format, &args))
        };
        let body = self.reader.graph_body()?;
        let mut cx = build::Context {
            warnings: &mut *self.reader.warnings,
            at,
        };
        let mut built = build::build_graph(&body, name, &mut cx);
        if let Some(id) = id {
            built.graph.properties.set("dump_id", id.to_string());
        }
        self.graphs += 1;
        let group = match self.open.last_mut() {
            Some(group) => group,
            None => {
                let index = *self.root_group.get_or_insert_with(|| {
                    self.document.groups.push(Group {
                        properties: [("name", self.file)].into_iter().collect(),
                        ..Group::default()
                    });
                    self.document.groups.len() - 1
                });
                &mut self.document.groups[index]
            }
        };
        group.graphs.push(built.graph);
        if !built.nested.is_empty() {
            let of = group
                .graphs
                .last()
                .map_or_else(String::new, |g| g.name.clone());
            group.groups.push(Group {
                properties: [("name", "subgraphs".to_owned()), (SUBGRAPHS_OF, of)]
                    .into_iter()
                    .collect(),
                graphs: built.nested,
                ..Group::default()
            });
        }
        Ok(())
    }

    /// Closes the groups a cut-short stream left open (their graphs are kept).
    fn finish(mut self) -> Document {
        if !self.open.is_empty() {
            let open = self.open.len();
            self.reader.warn(
                "unclosed_group",
                format!("{open} group(s) still open at the end of the stream; closed there"),
            );
        }
        while let Some(group) = self.open.pop() {
            self.place_group(group);
        }
        self.document
    }
}

/// A graph title: `%s` (and `%d`, `%x`) replaced by the arguments in order, `%%` by `%`.
fn format_title(format: &str, args: &[Value]) -> String {
    let mut out = String::with_capacity(format.len());
    let mut args = args.iter();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some('%') => {
                chars.next();
                out.push('%');
            }
            Some('s' | 'd' | 'x') => {
                chars.next();
                match args.next() {
                    Some(arg) => out.push_str(&arg.text(Length::Long)),
                    None => out.push_str("%s"),
                }
            }
            _ => out.push('%'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_take_their_arguments_in_order() {
        let args = [Value::Int(3), Value::Bool(true)];
        assert_eq!(format_title("a %s b %d %% c", &args), "a 3 b true % c");
        assert_eq!(format_title("%s %s", &args[..1]), "3 %s");
    }

    #[test]
    fn java_number_formats() {
        assert_eq!(pool::java_double(1.0), "1.0");
        assert_eq!(pool::java_double(0.5), "0.5");
        assert_eq!(pool::java_double(1e10), "1.0E10");
        assert_eq!(pool::java_double(f64::NAN), "NaN");
    }

    #[test]
    fn templates_fill_properties_and_keep_the_rest() {
        let filled =
            build::fill_template("C({p#rawvalue}) {p#stamp/s} {x} {i#values}", |i, n, l| {
                format!("<{i} {n} {l:?}>")
            });
        assert_eq!(
            filled,
            "C(<false rawvalue Long>) <false stamp Short> {x} <true values Long>"
        );
    }

    #[test]
    fn not_bgv_is_an_error_at_offset_zero() {
        let e = parse_bgv(b"<graphDocument>", "x.xml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("x.xml@0") && e.contains("BIGV"), "{e}");
    }
}
