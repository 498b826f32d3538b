//! What a DOT node shows: record fields, escString escapes, HTML labels; and matching the
//! nodes of address-named graphs (LLVM's `Node0x…`) by their label.

use std::collections::HashSet;

use memscape_io::{Location, Warnings};

use crate::model::Graph;

/// Computes each node's shown text (`text` property) from its label and shape.
pub(super) fn finish_labels(graph: &mut Graph, warnings: &mut Warnings, file: &str) {
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

pub(super) fn is_html_label(label: &str) -> bool {
    label.contains("</") || label.contains("/>")
}

pub(super) fn strip_tags(html: &str) -> String {
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
pub(super) fn match_by_label(graph: &mut Graph, warnings: &mut Warnings, file: &str) {
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
        graph.nodes[i].properties.set(crate::model::INPUT_ID, old);
        graph.rename_node(i, key);
    }
}
