#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;

use std::collections::BTreeMap;

use memscape_graph::crossings::parse_dot_plain;
use memscape_graph::dot::{parse_dot, parse_dot_sequence, record_fields};
use memscape_graph::{Graph, GraphError};
use memscape_io::Warnings;

fn parse_one(text: &str) -> (Graph, Warnings) {
    let mut w = Warnings::new();
    let mut graphs = parse_dot(text.as_bytes(), "t.dot", &mut w).unwrap();
    assert_eq!(graphs.len(), 1);
    (graphs.remove(0), w)
}

fn edge_list(g: &Graph) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = g
        .edges
        .iter()
        .map(|e| (g.nodes[e.from].id.clone(), g.nodes[e.to].id.clone()))
        .collect();
    v.sort();
    v
}

fn theirs_name(n: &str) -> String {
    n.strip_prefix('<')
        .and_then(|n| n.strip_suffix('>'))
        .unwrap_or(n)
        .to_owned()
}

/// Graphviz itself as the oracle: same node names and the same multiset of edges.
fn assert_same_as_graphviz(text: &str) {
    let (g, _) = parse_one(text);
    let plain = parse_dot_plain(&common::dot_plain(text.as_bytes())).unwrap();
    let mut ours: Vec<String> = g.nodes.iter().map(|n| n.id.clone()).collect();
    ours.sort();
    // -Tplain writes HTML ids inside their angle brackets.
    let mut theirs: Vec<String> = plain
        .names
        .iter()
        .map(
            |n| match n.strip_prefix('<').and_then(|n| n.strip_suffix('>')) {
                Some(inner) => inner.to_owned(),
                None => n.clone(),
            },
        )
        .collect();
    theirs.sort();
    assert_eq!(ours, theirs, "nodes differ for:\n{text}");
    let mut their_edges: Vec<(String, String)> = plain
        .edges
        .iter()
        .map(|e| {
            (
                theirs_name(&plain.names[e.from]),
                theirs_name(&plain.names[e.to]),
            )
        })
        .collect();
    their_edges.sort();
    let directed = g.properties.get("directed") == Some("true");
    let mut our_edges = edge_list(&g);
    if !directed {
        // Graphviz may print an undirected edge either way round.
        let norm = |v: &mut Vec<(String, String)>| {
            for (a, b) in v.iter_mut() {
                if a > b {
                    std::mem::swap(a, b);
                }
            }
            v.sort();
        };
        norm(&mut our_edges);
        norm(&mut their_edges);
    }
    assert_eq!(our_edges, their_edges, "edges differ for:\n{text}");
}

const CONFORMANCE: &[&str] = &[
    // Basic digraph, statement separators optional, edge chain, attributes.
    "digraph G { a -> b -> c; b -> d [color=red] e }",
    // Undirected, strict merges multi-edges (also reversed ones).
    "strict graph { a -- b; b -- a; a -- b [weight=2]; c }",
    "strict digraph { a -> b; a -> b; b -> a }",
    // Keywords are case-insensitive; quoted, numeral and HTML ids; escaped quotes.
    "DiGraph \"my graph\" { \"node one\" -> -3.5; \"say \\\"hi\\\"\" -> <<b>bold</b>>; .5 -> n_2 }",
    // Subgraphs as edge ends, anonymous subgraphs, nested clusters, ports and compass points.
    "digraph { {a b} -> {c d}; subgraph cluster_x { e; subgraph cluster_y { f -> g } } e:p1:n -> f:s; h:sw -> e }",
    // Defaults and attribute statements, graph attributes as ID = ID, attr lists with ; and ,.
    "digraph { node [shape=box]; edge [color=blue]; rankdir=LR; a [label=\"A\", color=red; style=filled][width=2]; a -> b }",
    // Comments of all three kinds and a line continuation inside a string.
    "// leading\n# preprocessor line\ndigraph { /* block\ncomment */ a -> b // tail\n \"long\\\nname\" -> a }",
    // String concatenation.
    "digraph { \"ab\" + \"cd\" -> x }",
    // Record labels as LLVM writes them.
    "digraph \"CFG\" { Node0x1 [shape=record,label=\"{entry:\\l  %1 = icmp\\l  br i1 %1, label %2, label %3\\l|{<s0>T|<s1>F}}\"]; Node0x1:s0 -> Node0x2; Node0x1:s1 -> Node0x3; Node0x2 [shape=record,label=\"{%2:\\l  ret\\l}\"]; Node0x3 [shape=record,label=\"{%3:\\l  ret\\l}\"] }",
];

#[test]
fn conformance_files_match_graphviz() {
    for text in CONFORMANCE {
        assert_same_as_graphviz(text);
    }
}

#[test]
fn grammar_details() {
    let (g, w) = parse_one(CONFORMANCE[3]);
    assert!(w.is_empty());
    assert_eq!(g.name, "my graph");
    assert!(g.node("say \"hi\"").is_some());
    assert!(g.node("<b>bold</b>").is_some());

    let (g, _) = parse_one(CONFORMANCE[4]);
    assert_eq!(g.blocks.len(), 2);
    assert_eq!(g.blocks[0].name, "cluster_x");
    assert_eq!(g.blocks[1].parent, Some(0));
    let f = g.node_index("f").unwrap();
    assert!(g.blocks[1].nodes.contains(&f));
    let e = g.edges.iter().find(|e| g.nodes[e.from].id == "e").unwrap();
    assert_eq!(e.properties.get("tailport"), Some("p1:n"));
    assert_eq!(e.properties.get("headport"), Some("s"));
    assert_eq!(e.from_index, 1);

    let (g, _) = parse_one(CONFORMANCE[5]);
    let a = g.node("a").unwrap();
    assert_eq!(a.properties.get("shape"), Some("box"));
    assert_eq!(a.properties.get("label"), Some("A"));
    assert_eq!(a.properties.get("width"), Some("2"));
    assert_eq!(g.properties.get("rankdir"), Some("LR"));
    assert_eq!(g.edges[0].properties.get("color"), Some("blue"));

    let (g, _) = parse_one(CONFORMANCE[6]);
    assert!(g.node("longname").is_some());
    let (g, _) = parse_one(CONFORMANCE[7]);
    assert!(g.node("abcd").is_some());

    // Defaults apply only to nodes created after them, and subgraph defaults stay inside.
    let (g, _) = parse_one("digraph { a; node [color=red]; b; { node [shape=box]; c } d; a -> e }");
    assert_eq!(g.node("a").unwrap().properties.get("color"), None);
    assert_eq!(g.node("b").unwrap().properties.get("color"), Some("red"));
    assert_eq!(g.node("c").unwrap().properties.get("shape"), Some("box"));
    assert_eq!(g.node("c").unwrap().properties.get("color"), Some("red"));
    assert_eq!(g.node("d").unwrap().properties.get("shape"), None);
    assert_eq!(g.node("e").unwrap().properties.get("color"), Some("red"));

    // Several graphs in one file.
    let mut w = Warnings::new();
    let graphs = parse_dot(b"digraph a { x } graph b { y -- z }", "two.dot", &mut w).unwrap();
    assert_eq!(graphs.len(), 2);
    assert_eq!(graphs[1].properties.get("directed"), Some("false"));
}

#[test]
fn llvm_record_label_text() {
    let fields = record_fields("{entry:\\l  %1 = icmp\\l|{<s0>T|<s1>F}}").unwrap();
    assert_eq!(fields.len(), 3);
    assert_eq!(fields[1].port.as_deref(), Some("s0"));
    assert_eq!(fields[2].text, "F");
    assert!(record_fields("{a|b").is_none());
    let fields = record_fields("a \\{ \\| b").unwrap();
    assert_eq!(fields[0].text, "a { | b");
    let mut w = Warnings::new();
    let g = parse_dot(CONFORMANCE[8].as_bytes(), "cfg.dot", &mut w).unwrap();
    let n = g[0].node("Node0x1").unwrap();
    assert_eq!(
        n.properties.get("text"),
        Some("entry:\n  %1 = icmp\n  br i1 %1, label %2, label %3\nT\nF")
    );
    let g = parse_dot(b"digraph G { a [label=\"\\N in \\G\"] }", "esc.dot", &mut w).unwrap();
    assert_eq!(g[0].nodes[0].properties.get("text"), Some("a in G"));
}

#[test]
fn errors_name_line_and_column() {
    let cases: &[(&str, u64, u64, &str)] = &[
        (
            "digraph {\n  a -> \"b\n}",
            2,
            8,
            "unterminated quoted string",
        ),
        ("digraph {\n  a -> ;\n}", 2, 8, "expected a node ID"),
        ("digraph {\n a -> b\n", 2, 7, "'}'"),
        (
            "graph { a -- b } junk",
            1,
            18,
            "expected 'graph' or 'digraph'",
        ),
        (
            "digraph { a /* never closed\n",
            1,
            13,
            "unterminated /* comment",
        ),
        ("digraph { a [color=] }", 1, 20, "attribute value"),
        ("digraph { a @ b }", 1, 13, "unexpected character"),
        ("", 1, 1, "no graph"),
    ];
    for (text, line, column, what) in cases {
        let mut w = Warnings::new();
        match parse_dot(text.as_bytes(), "bad.dot", &mut w) {
            Err(GraphError::Syntax {
                file,
                line: l,
                column: c,
                message,
            }) => {
                assert_eq!(file, "bad.dot");
                assert_eq!((l, c), (*line, *column), "{text:?}: {message}");
                assert!(message.contains(what), "{text:?}: {message}");
            }
            other => panic!("{text:?}: expected a syntax error, got {other:?}"),
        }
    }
}

#[test]
fn recoverable_problems_are_warnings() {
    let mut w = Warnings::new();
    let g = parse_dot(
        "digraph { a -- b; c [label=\"{x|y\" shape=record] }".as_bytes(),
        "w.dot",
        &mut w,
    )
    .unwrap();
    assert_eq!(g[0].edges.len(), 1);
    assert_eq!(w.count("edge_op_mismatch"), 1);
    assert_eq!(w.count("bad_record_label"), 1);
    let mut w = Warnings::new();
    parse_dot(b"digraph { \"\xff\" -> b }", "w.dot", &mut w).unwrap();
    assert_eq!(w.count("non_utf8"), 1);
}

#[test]
fn edge_explosion_is_an_error() {
    let side: Vec<String> = (0..5000).map(|i| format!("n{i}")).collect();
    let text = format!(
        "digraph {{ {{ {} }} -> {{ {} }} }}",
        side.join(" "),
        side.join(" ")
    );
    let mut w = Warnings::new();
    let err = parse_dot(text.as_bytes(), "big.dot", &mut w)
        .unwrap_err()
        .to_string();
    assert!(err.contains("exceed"), "{err}");
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let text = format!("digraph {{ {} a {} }}", "{".repeat(5000), "}".repeat(5000));
    let mut w = Warnings::new();
    let err = parse_dot(text.as_bytes(), "deep.dot", &mut w)
        .unwrap_err()
        .to_string();
    assert!(err.contains("nested deeper"), "{err}");
}

#[test]
fn real_llvm_cfgs_parse_like_graphviz_and_match_across_snapshots() {
    let dir0 = tempfile::tempdir().unwrap();
    let dir1 = tempfile::tempdir().unwrap();
    let o0 = common::llvm_cfgs(common::SAMPLE_C, "-O0", dir0.path());
    let o1 = common::llvm_cfgs(common::SAMPLE_C, "-O1", dir1.path());
    assert!(o0.len() >= 3, "opt wrote {} CFGs", o0.len());
    for (func, bytes) in o0.iter().chain(&o1) {
        let text = String::from_utf8(bytes.clone()).unwrap();
        let mut w = Warnings::new();
        let g = &parse_dot(bytes, func, &mut w).unwrap()[0];
        assert!(w.is_empty(), "{func}: {w}");
        let plain = parse_dot_plain(&common::dot_plain(text.as_bytes())).unwrap();
        assert_eq!(g.nodes.len(), plain.nodes.len(), "{func}");
        assert_eq!(g.edges.len(), plain.edges.len(), "{func}");
        for n in &g.nodes {
            assert!(
                n.properties.get("text").unwrap().contains(':'),
                "{func}: {:?}",
                n.properties
            );
        }
    }
    // The same function at -O0 and -O1 as a two-snapshot sequence: address ids are replaced by
    // block names, so the entry block is the same node in both.
    let classify0 = o0.iter().find(|(f, _)| f == "classify").unwrap();
    let classify1 = o1.iter().find(|(f, _)| f == "classify").unwrap();
    let imported =
        parse_dot_sequence(&[("O0.dot", &classify0.1), ("O1.dot", &classify1.1)]).unwrap();
    let snaps = imported.document.snapshots();
    assert_eq!(snaps.len(), 2);
    for g in &snaps {
        let entry = g.node("entry").expect("entry block matched by label");
        assert!(
            entry
                .properties
                .get("dot_id")
                .unwrap()
                .starts_with("Node0x")
        );
    }
    let d = memscape_graph::diff::diff(snaps[0], snaps[1]);
    assert!(!d.is_empty());
    assert!(!d.removed_nodes.contains(&"entry".to_owned()));
}

#[test]
fn llvm_callgraph_parses() {
    let dir = tempfile::tempdir().unwrap();
    let _ = common::llvm_cfgs(common::SAMPLE_C, "-O0", dir.path());
    let status = std::process::Command::new("opt")
        .args([
            "-enable-new-pm=0",
            "-dot-callgraph",
            "-disable-output",
            "input.ll",
        ])
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    let bytes = std::fs::read(dir.path().join("input.ll.callgraph.dot")).unwrap();
    let imported = parse_dot_sequence(&[("callgraph.dot", &bytes)]).unwrap();
    let g = imported.document.snapshots()[0];
    let names: BTreeMap<&str, usize> = g
        .nodes
        .iter()
        .map(|n| (n.id.as_str(), n.properties.len()))
        .collect();
    assert!(
        names.contains_key("main") && names.contains_key("classify"),
        "{names:?}"
    );
    let main = g.node_index("main").unwrap();
    assert!(
        g.edges
            .iter()
            .any(|e| e.from == main && g.nodes[e.to].id == "collatz")
    );
}
