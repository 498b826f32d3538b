//! The byte level of BGV: a bounds-checked big-endian cursor, the constant pool, property values
//! and graph bodies as read (before they become the model, in [`super::build`]).
//!
//! Nothing is allocated from a count in the file before the bytes that count promises are known
//! to be there, so a corrupt count fails with an offset instead of exhausting memory.

use std::rc::Rc;

use memscape_io::{Location, Warnings};

use super::pool::{
    Length, NodeClass, PoolObject, Port, RawBlock, RawGraph, RawNode, RawProperties, Value,
};

/// Pool entry and reference tags.
pub(super) const POOL_NEW: u8 = 0x00;
const POOL_STRING: u8 = 0x01;
const POOL_ENUM: u8 = 0x02;
const POOL_CLASS: u8 = 0x03;
const POOL_METHOD: u8 = 0x04;
const POOL_NULL: u8 = 0x05;
const POOL_NODE_CLASS: u8 = 0x06;
const POOL_FIELD: u8 = 0x07;
const POOL_SIGNATURE: u8 = 0x08;
const POOL_NODE_SOURCE_POSITION: u8 = 0x09;
const POOL_NODE: u8 = 0x0a;

/// Property value tags.
const PROPERTY_POOL: u8 = 0x00;
const PROPERTY_INT: u8 = 0x01;
const PROPERTY_LONG: u8 = 0x02;
const PROPERTY_DOUBLE: u8 = 0x03;
const PROPERTY_FLOAT: u8 = 0x04;
const PROPERTY_TRUE: u8 = 0x05;
const PROPERTY_FALSE: u8 = 0x06;
const PROPERTY_ARRAY: u8 = 0x07;
const PROPERTY_SUBGRAPH: u8 = 0x08;

const KLASS: u8 = 0x00;
const ENUM_KLASS: u8 = 0x01;

/// Deepest nesting of subgraphs inside node properties and of pool entries inside pool entries.
const MAX_DEPTH: usize = 64;

/// Why reading stopped: the offset, what was expected, and whether the data simply ended.
#[derive(Debug, Clone)]
pub(super) struct ReadError {
    pub offset: usize,
    pub message: String,
    /// The input ended inside an item (a truncated dump), rather than holding a wrong byte.
    pub eof: bool,
}

pub(super) type Read<T> = Result<T, ReadError>;

/// A big-endian cursor over the decompressed stream.
pub(super) struct Cursor<'a> {
    data: &'a [u8],
    pub pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0 }
    }

    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.data.len()
    }

    pub fn starts_with(&self, bytes: &[u8]) -> bool {
        self.data[self.pos..].starts_with(bytes)
    }

    pub fn error(&self, message: impl Into<String>) -> ReadError {
        ReadError {
            offset: self.pos,
            message: message.into(),
            eof: false,
        }
    }

    pub fn take(&mut self, n: usize, what: &str) -> Read<&'a [u8]> {
        if self.remaining() < n {
            return Err(ReadError {
                offset: self.pos,
                message: format!(
                    "the input ends inside {what} ({n} bytes needed, {} left)",
                    self.remaining()
                ),
                eof: true,
            });
        }
        let bytes = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(bytes)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Read<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    pub fn u8(&mut self, what: &str) -> Read<u8> {
        Ok(self.array::<1>(what)?[0])
    }

    pub fn u16(&mut self, what: &str) -> Read<u16> {
        Ok(u16::from_be_bytes(self.array(what)?))
    }

    pub fn i32(&mut self, what: &str) -> Read<i32> {
        Ok(i32::from_be_bytes(self.array(what)?))
    }

    pub fn i64(&mut self, what: &str) -> Read<i64> {
        Ok(i64::from_be_bytes(self.array(what)?))
    }

    pub fn f32(&mut self, what: &str) -> Read<f32> {
        Ok(f32::from_be_bytes(self.array(what)?))
    }

    pub fn f64(&mut self, what: &str) -> Read<f64> {
        Ok(f64::from_be_bytes(self.array(what)?))
    }

    /// A count of items of at least `item_size` bytes each: negative counts and counts the rest
    /// of the input cannot hold are errors.
    pub fn count(&mut self, what: &str, item_size: usize) -> Read<usize> {
        let at = self.pos;
        let n = self.i32(what)?;
        self.check_count(at, n, what, item_size)
    }

    pub fn check_count(&self, at: usize, n: i32, what: &str, item_size: usize) -> Read<usize> {
        if n < 0 {
            return Err(ReadError {
                offset: at,
                message: format!("{what}: negative count {n}"),
                eof: false,
            });
        }
        let n = n as usize;
        if n.saturating_mul(item_size) > self.remaining() {
            return Err(ReadError {
                offset: at,
                message: format!(
                    "{what}: {n} items of at least {item_size} bytes do not fit in the {} bytes left",
                    self.remaining()
                ),
                eof: true,
            });
        }
        Ok(n)
    }
}

/// The reading state: cursor, protocol version and constant pool.
pub(super) struct Reader<'a, 'w> {
    pub cur: Cursor<'a>,
    pub major: u8,
    pub minor: u8,
    pool: Vec<Option<Rc<PoolObject>>>,
    file: &'a str,
    pub warnings: &'w mut Warnings,
    depth: usize,
}

impl<'a, 'w> Reader<'a, 'w> {
    pub fn new(data: &'a [u8], file: &'a str, warnings: &'w mut Warnings) -> Self {
        Self {
            cur: Cursor::new(data),
            major: 0,
            minor: 0,
            pool: Vec::new(),
            file,
            warnings,
            depth: 0,
        }
    }

    pub fn warn(&mut self, kind: &'static str, message: impl Into<String>) {
        let at = Location::offset(self.file, self.cur.pos as u64);
        self.warnings.add(kind, message, at);
    }

    /// A new stream (a `BIGV` header) starts with an empty pool.
    pub fn reset_pool(&mut self) {
        self.pool.clear();
    }

    /// A length-prefixed UTF-8 string (length -1: null).
    pub fn string(&mut self, what: &str) -> Read<Option<String>> {
        let at = self.cur.pos;
        let len = self.cur.i32(what)?;
        if len == -1 {
            return Ok(None);
        }
        let len = self.cur.check_count(at, len, what, 1)?;
        let bytes = self.cur.take(len, what)?;
        Ok(Some(match std::str::from_utf8(bytes) {
            Ok(s) => s.to_owned(),
            Err(_) => {
                self.warn(
                    "non_utf8",
                    format!("{what} is not UTF-8 (invalid bytes replaced)"),
                );
                String::from_utf8_lossy(bytes).into_owned()
            }
        }))
    }

    pub fn string_or_empty(&mut self, what: &str) -> Read<String> {
        Ok(self.string(what)?.unwrap_or_default())
    }

    /// A pool reference or a new pool entry; `None` for null and for references to entries
    /// never defined (counted as `unknown_pool_reference`).
    pub fn pool_object(&mut self, what: &str) -> Read<Option<Rc<PoolObject>>> {
        let tag_at = self.cur.pos;
        match self.cur.u8(what)? {
            POOL_NULL => Ok(None),
            POOL_NEW => {
                // Entries nest (a method's class, an enum's class, a caller's position).
                self.enter("pool entries")?;
                let entry = self.pool_entry(what)?;
                self.depth -= 1;
                Ok(Some(entry))
            }
            POOL_STRING
            | POOL_ENUM
            | POOL_CLASS
            | POOL_METHOD
            | POOL_NODE_CLASS
            | POOL_FIELD
            | POOL_SIGNATURE
            | POOL_NODE_SOURCE_POSITION
            | POOL_NODE => {
                let id = self.cur.u16(what)?;
                match self.pool.get(usize::from(id)).cloned().flatten() {
                    Some(object) => Ok(Some(object)),
                    None => {
                        self.warn(
                            "unknown_pool_reference",
                            format!("{what} refers to pool entry {id}, which was never defined"),
                        );
                        Ok(None)
                    }
                }
            }
            tag => Err(ReadError {
                offset: tag_at,
                message: format!("{what}: unknown pool tag 0x{tag:02x} (expected 0x00–0x0a)"),
                eof: false,
            }),
        }
    }

    /// The text of a pool object that names something (a string, a class); empty for null.
    pub fn pool_text(&mut self, what: &str) -> Read<String> {
        Ok(self
            .pool_object(what)?
            .map_or_else(String::new, |p| p.text(Length::Long)))
    }

    fn pool_entry(&mut self, what: &str) -> Read<Rc<PoolObject>> {
        let id = self.cur.u16(what)?;
        let type_at = self.cur.pos;
        let kind = self.cur.u8(what)?;
        let object = match kind {
            POOL_STRING => PoolObject::Str(self.string_or_empty("pool string")?),
            POOL_ENUM => {
                let class = self.pool_object("enum class")?;
                let ordinal = self.cur.i32("enum ordinal")?;
                let value = match class.as_deref() {
                    Some(PoolObject::Class {
                        name,
                        values: Some(values),
                    }) => match usize::try_from(ordinal).ok().and_then(|i| values.get(i)) {
                        Some(value) => Some((name.clone(), value.clone())),
                        None => {
                            self.warn(
                                "bad_enum_ordinal",
                                format!(
                                    "enum {name} has {} values; ordinal {ordinal} was used",
                                    values.len()
                                ),
                            );
                            None
                        }
                    },
                    _ => {
                        self.warn(
                            "bad_enum_ordinal",
                            format!("enum value {ordinal} whose class is not an enum"),
                        );
                        None
                    }
                };
                let (class, value) = value.unwrap_or_else(|| (String::new(), ordinal.to_string()));
                PoolObject::Enum { class, value }
            }
            POOL_CLASS => {
                let name = self.string_or_empty("class name")?;
                match self.cur.u8("class kind")? {
                    KLASS => PoolObject::Class { name, values: None },
                    ENUM_KLASS => {
                        let n = self.cur.count("enum values", 1)?;
                        let mut values = Vec::with_capacity(n);
                        for _ in 0..n {
                            values.push(self.pool_text("enum value name")?);
                        }
                        PoolObject::Class {
                            name,
                            values: Some(values),
                        }
                    }
                    other => {
                        return Err(self.cur.error(format!(
                            "class {name}: unknown class kind 0x{other:02x} (expected 0 or 1)"
                        )));
                    }
                }
            }
            POOL_METHOD => {
                let class = self.pool_text("method class")?;
                let name = self.pool_text("method name")?;
                let signature = self.pool_object("method signature")?;
                let _modifiers = self.cur.i32("method modifiers")?;
                let at = self.cur.pos;
                let len = self.cur.i32("method bytecodes")?;
                if len != -1 {
                    let len = self.cur.check_count(at, len, "method bytecodes", 1)?;
                    self.cur.take(len, "method bytecodes")?;
                }
                let args = match signature.as_deref() {
                    Some(PoolObject::Signature { args, .. }) => args.clone(),
                    _ => Vec::new(),
                };
                PoolObject::Method { class, name, args }
            }
            POOL_NODE_CLASS => {
                let class_name = if self.major < 3 {
                    self.string_or_empty("node class name")?
                } else {
                    self.pool_text("node class")?
                };
                let template = self.string_or_empty("node name template")?;
                let inputs = self.ports(true)?;
                let successors = self.ports(false)?;
                PoolObject::NodeClass(Rc::new(NodeClass {
                    class_name,
                    template,
                    inputs,
                    successors,
                }))
            }
            POOL_FIELD => {
                let class = self.pool_text("field class")?;
                let name = self.pool_text("field name")?;
                let _type = self.pool_text("field type")?;
                let _modifiers = self.cur.i32("field modifiers")?;
                PoolObject::Field { class, name }
            }
            POOL_SIGNATURE => {
                let n = usize::from(self.cur.u16("signature arguments")?);
                let mut args = Vec::with_capacity(n.min(self.cur.remaining()));
                for _ in 0..n {
                    args.push(self.pool_text("signature argument")?);
                }
                let ret = self.pool_text("signature return type")?;
                PoolObject::Signature { args, ret }
            }
            POOL_NODE_SOURCE_POSITION => self.source_position()?,
            POOL_NODE => {
                let id = self.cur.i32("pool node id")?;
                let _class = self.pool_object("pool node class")?;
                PoolObject::Node { id }
            }
            other => {
                return Err(ReadError {
                    offset: type_at,
                    message: format!(
                        "{what}: unknown pool entry type 0x{other:02x} (expected 0x01–0x0a)"
                    ),
                    eof: false,
                });
            }
        };
        let object = Rc::new(object);
        let slot = usize::from(id);
        if self.pool.len() <= slot {
            self.pool.resize(slot + 1, None);
        }
        self.pool[slot] = Some(object.clone());
        Ok(object)
    }

    /// The slots of a node class: a list flag, a name and (inputs only) an input type.
    fn ports(&mut self, inputs: bool) -> Read<Vec<Port>> {
        let what = if inputs {
            "input slots"
        } else {
            "successor slots"
        };
        let n = usize::from(self.cur.u16(what)?);
        let mut ports = Vec::with_capacity(n.min(self.cur.remaining()));
        for _ in 0..n {
            let list = self.cur.u8(what)? != 0;
            let name = self.pool_text("slot name")?;
            let kind = if inputs {
                self.pool_object("input type")?
                    .map_or_else(String::new, |p| p.text(Length::Short))
            } else {
                String::new()
            };
            ports.push(Port { list, name, kind });
        }
        Ok(ports)
    }

    fn source_position(&mut self) -> Read<PoolObject> {
        let method = self
            .pool_object("source position method")?
            .map_or_else(String::new, |p| p.text(Length::Medium));
        let bci = self.cur.i32("source position bci")?;
        let mut places = Vec::new();
        if self.major >= 6 {
            // One stratum per language, until a null URI.
            while let Some(uri) = self.pool_object("source position URI")? {
                let _language = self.string("source position language")?;
                let line = self.cur.i32("source position line")?;
                let _start = self.cur.i32("source position start")?;
                let _end = self.cur.i32("source position end")?;
                places.push(format!("{}:{line}", uri.text(Length::Long)));
            }
        } else if let Some(file) = self.pool_object("source position file")? {
            let line = self.cur.i32("source position line")?;
            places.push(format!("{}:{line}", file.text(Length::Long)));
        }
        let caller = self.pool_object("source position caller")?;
        Ok(PoolObject::SourcePosition {
            method,
            bci,
            places,
            caller,
        })
    }

    fn enter(&mut self, what: &str) -> Read<()> {
        if self.depth >= MAX_DEPTH {
            return Err(self
                .cur
                .error(format!("{what} nested deeper than {MAX_DEPTH} levels")));
        }
        self.depth += 1;
        Ok(())
    }

    /// A property value (also a graph title's argument in protocol versions ≥ 3).
    pub fn value(&mut self, what: &str) -> Read<Value> {
        let tag_at = self.cur.pos;
        Ok(match self.cur.u8(what)? {
            PROPERTY_POOL => self.pool_object(what)?.map_or(Value::Null, Value::Pool),
            PROPERTY_INT => Value::Int(self.cur.i32(what)?),
            PROPERTY_LONG => Value::Long(self.cur.i64(what)?),
            PROPERTY_DOUBLE => Value::Double(self.cur.f64(what)?),
            PROPERTY_FLOAT => Value::Float(self.cur.f32(what)?),
            PROPERTY_TRUE => Value::Bool(true),
            PROPERTY_FALSE => Value::Bool(false),
            PROPERTY_ARRAY => {
                let kind_at = self.cur.pos;
                match self.cur.u8(what)? {
                    PROPERTY_INT => {
                        let n = self.cur.count(what, 4)?;
                        let mut v = Vec::with_capacity(n);
                        for _ in 0..n {
                            v.push(self.cur.i32(what)?);
                        }
                        Value::Ints(v)
                    }
                    PROPERTY_DOUBLE => {
                        let n = self.cur.count(what, 8)?;
                        let mut v = Vec::with_capacity(n);
                        for _ in 0..n {
                            v.push(self.cur.f64(what)?);
                        }
                        Value::Doubles(v)
                    }
                    PROPERTY_POOL => {
                        let n = self.cur.count(what, 1)?;
                        let mut v = Vec::with_capacity(n);
                        for _ in 0..n {
                            v.push(self.pool_object(what)?);
                        }
                        Value::Objects(v)
                    }
                    other => {
                        return Err(ReadError {
                            offset: kind_at,
                            message: format!(
                                "{what}: unknown array element type 0x{other:02x} (expected int 0x01, double 0x03 or pool 0x00)"
                            ),
                            eof: false,
                        });
                    }
                }
            }
            PROPERTY_SUBGRAPH => {
                self.enter("subgraphs")?;
                let graph = self.graph_body()?;
                self.depth -= 1;
                Value::Graph(Box::new(graph))
            }
            other => {
                return Err(ReadError {
                    offset: tag_at,
                    message: format!(
                        "{what}: unknown property type 0x{other:02x} (expected 0x00–0x08)"
                    ),
                    eof: false,
                });
            }
        })
    }

    /// A property list: a 16-bit count (version 8: 0xffff then a 32-bit count), then key and
    /// value pairs.
    pub fn properties(&mut self, what: &str) -> Read<RawProperties> {
        let at = self.cur.pos;
        let mut n = usize::from(self.cur.u16(what)?);
        if n == usize::from(u16::MAX) && self.major > 7 {
            n = self.cur.count(what, 2)?;
        } else {
            self.cur.check_count(at, n as i32, what, 2)?;
        }
        let mut props = Vec::with_capacity(n);
        for _ in 0..n {
            let key = self.pool_text("property name")?;
            let value = self.value(&format!("property {key}"))?;
            props.push((key, value));
        }
        Ok(props)
    }

    /// A graph body after its title: properties, nodes with their edges, blocks.
    pub fn graph_body(&mut self) -> Read<RawGraph> {
        let properties = self.properties("graph properties")?;
        // id, class reference, predecessor flag, property count: at least 4+3+1+2 bytes.
        let n = self.cur.count("node count", 10)?;
        let mut nodes = Vec::with_capacity(n);
        for _ in 0..n {
            nodes.push(self.node()?);
        }
        let n = self.cur.count("block count", 12)?;
        let mut blocks = Vec::with_capacity(n);
        for _ in 0..n {
            let id = self.cur.i32("block id")?;
            let count = self.cur.count("block nodes", 4)?;
            let mut members = Vec::with_capacity(count);
            for _ in 0..count {
                members.push(self.cur.i32("block node")?);
            }
            let count = self.cur.count("block successors", 4)?;
            let mut successors = Vec::with_capacity(count);
            for _ in 0..count {
                successors.push(self.cur.i32("block successor")?);
            }
            blocks.push(RawBlock {
                id,
                nodes: members,
                successors,
            });
        }
        Ok(RawGraph {
            properties,
            nodes,
            blocks,
        })
    }

    fn node(&mut self) -> Read<RawNode> {
        let id = self.cur.i32("node id")?;
        let class_at = self.cur.pos;
        let class = match self.pool_object("node class")?.as_deref() {
            Some(PoolObject::NodeClass(class)) => class.clone(),
            // Without its class the node's edge slots cannot be read: nothing after it can be.
            other => {
                return Err(ReadError {
                    offset: class_at,
                    message: format!(
                        "node {id}: expected a node class, found {}",
                        other.map_or_else(|| "nothing".to_owned(), |o| format!("{o:?}"))
                    ),
                    eof: false,
                });
            }
        };
        let has_predecessor = self.cur.u8("node predecessor flag")? != 0;
        let properties = self.properties("node properties")?;
        let inputs = self.slots(&class.inputs, "node inputs")?;
        let successors = self.slots(&class.successors, "node successors")?;
        Ok(RawNode {
            id,
            class,
            has_predecessor,
            properties,
            inputs,
            successors,
        })
    }

    fn slots(&mut self, ports: &[Port], what: &str) -> Read<Vec<Vec<i32>>> {
        let mut out = Vec::with_capacity(ports.len());
        for port in ports {
            let n = if port.list {
                usize::from(self.cur.u16(what)?)
            } else {
                1
            };
            let at = self.cur.pos;
            self.cur.check_count(at, n as i32, what, 4)?;
            let mut ids = Vec::with_capacity(n);
            for _ in 0..n {
                ids.push(self.cur.i32(what)?);
            }
            out.push(ids);
        }
        Ok(out)
    }
}
