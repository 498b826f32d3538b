//! What BGV's constant pool and property values hold, and the text IGV shows for them (Java's
//! number formats, `{p#name/s|m|l}` lengths); graph bodies as read.

use std::rc::Rc;

/// A node class: the Java class, the name template and the input and successor slots.
#[derive(Debug)]
pub(super) struct NodeClass {
    /// Fully qualified (`jdk.graal.compiler.nodes.IfNode`); simple name in protocol versions < 3.
    pub class_name: String,
    pub template: String,
    pub inputs: Vec<Port>,
    pub successors: Vec<Port>,
}

impl NodeClass {
    /// IGV's short form: the simple class name without a `Node` suffix (but `StartNode`,
    /// `EndNode` keep it).
    pub fn short_name(&self) -> &str {
        let simple = simple_name(&self.class_name);
        match simple.strip_suffix("Node") {
            Some(stem) if simple != "StartNode" && simple != "EndNode" => stem,
            _ => simple,
        }
    }
}

/// An input or successor slot of a node class.
#[derive(Debug)]
pub(super) struct Port {
    /// A list slot (`NodeInputList`): a count precedes its node ids.
    pub list: bool,
    pub name: String,
    /// The input type (`Value`, `Memory`, `State`, `Guard`, …); empty for successors.
    pub kind: String,
}

/// The part after the last `.` of a qualified name.
pub(super) fn simple_name(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

/// How long a pool object's text is, as IGV's `{p#name/l|m|s}` templates choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Length {
    Short,
    Medium,
    Long,
}

/// An entry of the constant pool.
#[derive(Debug)]
pub(super) enum PoolObject {
    Str(String),
    Enum {
        class: String,
        value: String,
    },
    Class {
        name: String,
        /// The value names of an enum class.
        values: Option<Vec<String>>,
    },
    Method {
        class: String,
        name: String,
        args: Vec<String>,
    },
    NodeClass(Rc<NodeClass>),
    Field {
        class: String,
        name: String,
    },
    Signature {
        args: Vec<String>,
        ret: String,
    },
    SourcePosition {
        method: String,
        bci: i32,
        /// `uri:line` of each stratum (language) that has one.
        places: Vec<String>,
        caller: Option<Rc<PoolObject>>,
    },
    Node {
        id: i32,
    },
}

impl PoolObject {
    /// The text IGV shows for this object at a length (`Long` is its `toString`).
    pub fn text(&self, length: Length) -> String {
        match self {
            PoolObject::Str(s) => s.clone(),
            PoolObject::Enum { class, value } => match length {
                Length::Short => value.clone(),
                _ => format!("{}.{value}", simple_name(class)),
            },
            PoolObject::Class { name, .. } => match length {
                Length::Short => simple_name(name).to_owned(),
                _ => name.clone(),
            },
            PoolObject::Method { class, name, args } => match length {
                Length::Short => format!("{}.{name}", simple_name(class)),
                Length::Medium => format!("{class}.{name}"),
                Length::Long => format!("{class}.{name}({})", args.join(", ")),
            },
            PoolObject::NodeClass(class) => match length {
                Length::Short => class.short_name().to_owned(),
                _ => class.class_name.clone(),
            },
            PoolObject::Field { class, name } => match length {
                Length::Short => format!("{}.{name}", simple_name(class)),
                _ => format!("{class}.{name}"),
            },
            PoolObject::Signature { args, ret } => format!("({}){ret}", args.join(", ")),
            PoolObject::SourcePosition {
                method,
                bci,
                places,
                caller,
            } => {
                // The frame and at most three callers: inlining chains run dozens deep, and
                // every node of a graph carries one.
                let frame = |method: &str, bci: i32, places: &[String]| {
                    if places.is_empty() {
                        format!("{method} @{bci}")
                    } else {
                        format!("{method} @{bci} [{}]", places.join(", "))
                    }
                };
                let mut text = frame(method, *bci, places);
                let mut next = caller.clone();
                let mut shown = 0;
                while let Some(c) = next {
                    let PoolObject::SourcePosition {
                        method,
                        bci,
                        places,
                        caller,
                    } = &*c
                    else {
                        break;
                    };
                    if shown == 3 {
                        let mut more = 1;
                        let mut rest = caller.clone();
                        while let Some(r) = rest {
                            more += 1;
                            rest = match &*r {
                                PoolObject::SourcePosition { caller, .. } => caller.clone(),
                                _ => None,
                            };
                        }
                        text.push_str(&format!(" ← … {more} more"));
                        break;
                    }
                    text.push_str(" ← ");
                    text.push_str(&frame(method, *bci, places));
                    shown += 1;
                    next = caller.clone();
                }
                text
            }
            PoolObject::Node { id } => id.to_string(),
        }
    }
}

/// A property value (or a graph title argument).
#[derive(Debug)]
pub(super) enum Value {
    Null,
    Int(i32),
    Long(i64),
    Float(f32),
    Double(f64),
    Bool(bool),
    Pool(Rc<PoolObject>),
    Ints(Vec<i32>),
    Doubles(Vec<f64>),
    Objects(Vec<Option<Rc<PoolObject>>>),
    /// A graph nested in a property (IGV shows it as a node's subgraph).
    Graph(Box<RawGraph>),
}

impl Value {
    /// The property text: IGV's `toString` of the value (Java's number formats).
    pub fn text(&self, length: Length) -> String {
        match self {
            Value::Null => "null".to_owned(),
            Value::Int(v) => v.to_string(),
            Value::Long(v) => v.to_string(),
            Value::Float(v) => java_double(f64::from(*v)),
            Value::Double(v) => java_double(*v),
            Value::Bool(v) => v.to_string(),
            Value::Pool(p) => p.text(length),
            Value::Ints(v) => list(v.iter().map(i32::to_string)),
            Value::Doubles(v) => list(v.iter().map(|d| java_double(*d))),
            Value::Objects(v) => list(v.iter().map(|o| match o {
                Some(p) => p.text(length),
                None => "null".to_owned(),
            })),
            Value::Graph(g) => format!("graph ({} nodes)", g.nodes.len()),
        }
    }
}

fn list(items: impl Iterator<Item = String>) -> String {
    format!("[{}]", items.collect::<Vec<_>>().join(", "))
}

/// Java's `Double.toString`: `1.0`, `0.5`, `1.0E10`, `NaN`, `Infinity`.
pub(super) fn java_double(v: f64) -> String {
    if v.is_nan() {
        return "NaN".to_owned();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    let magnitude = v.abs();
    if magnitude == 0.0 || (1e-3..1e7).contains(&magnitude) {
        let text = format!("{v}");
        if text.contains('.') {
            text
        } else {
            format!("{text}.0")
        }
    } else {
        let text = format!("{v:e}");
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        let mantissa = if mantissa.contains('.') {
            mantissa.to_owned()
        } else {
            format!("{mantissa}.0")
        };
        format!("{mantissa}E{exponent}")
    }
}

/// Properties as written: key and value in order.
pub(super) type RawProperties = Vec<(String, Value)>;

/// A node as written: the node ids in each input and successor slot (-1: empty).
#[derive(Debug)]
pub(super) struct RawNode {
    pub id: i32,
    pub class: Rc<NodeClass>,
    pub has_predecessor: bool,
    pub properties: RawProperties,
    /// One list per input port of the class (a direct port has one entry).
    pub inputs: Vec<Vec<i32>>,
    pub successors: Vec<Vec<i32>>,
}

#[derive(Debug)]
pub(super) struct RawBlock {
    pub id: i32,
    pub nodes: Vec<i32>,
    pub successors: Vec<i32>,
}

/// A graph body: properties, nodes, blocks.
#[derive(Debug, Default)]
pub(super) struct RawGraph {
    pub properties: RawProperties,
    pub nodes: Vec<RawNode>,
    pub blocks: Vec<RawBlock>,
}
