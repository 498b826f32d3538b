//! Graal BGV import: every graph of the shared Graal dumps against Shopify/seafoam's reading
//! (node, input-edge, successor-edge and block counts), IGV's naming rules on a real graph, the
//! Graal filter profiles, layout and differences on BGV snapshots, and hand-encoded streams of
//! protocol versions 6.1, 7.0 and 8.0 (truncated, corrupt, with unknown pool references).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;

use memscape_graph::bgv::{SUBGRAPHS_OF, SUCCESSOR_KIND, load_bgv, parse_bgv};
use memscape_graph::filter::{Profile, apply_profile};
use memscape_graph::{Document, Graph, Group};

/// `(dump_id, nodes, input edges, successor edges, blocks)` of a graph.
type Counts = (i64, usize, usize, usize, usize);

fn counts(graph: &Graph) -> Counts {
    let successors = graph
        .edges
        .iter()
        .filter(|e| e.kind == SUCCESSOR_KIND)
        .count();
    (
        graph.properties.get("dump_id").unwrap().parse().unwrap(),
        graph.nodes.len(),
        graph.edges.len() - successors,
        successors,
        graph.blocks.len(),
    )
}

/// Every graph of the stream (not those nested in node properties, which seafoam skips).
fn stream_graphs(document: &Document) -> Vec<&Graph> {
    fn walk<'a>(group: &'a Group, out: &mut Vec<&'a Graph>) {
        if group.properties.get(SUBGRAPHS_OF).is_some() {
            return;
        }
        out.extend(&group.graphs);
        for g in &group.groups {
            walk(g, out);
        }
    }
    let mut out = Vec::new();
    for g in &document.groups {
        walk(g, &mut out);
    }
    out
}

fn seafoam_counts() -> BTreeMap<String, Vec<Counts>> {
    let text = std::fs::read_to_string(common::test_data("bgv-seafoam-counts.txt")).unwrap();
    let mut out: BTreeMap<String, Vec<Counts>> = BTreeMap::new();
    let mut file = String::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        if let Some(name) = line.strip_prefix("= ") {
            file = name.to_owned();
            continue;
        }
        let v: Vec<i64> = line.split(' ').map(|x| x.parse().unwrap()).collect();
        out.entry(file.clone()).or_default().push((
            v[0],
            v[1] as usize,
            v[2] as usize,
            v[3] as usize,
            v[4] as usize,
        ));
    }
    out
}

#[test]
fn every_graph_of_the_shared_dumps_has_seafoams_counts() {
    let expected = seafoam_counts();
    assert_eq!(expected.len(), 6, "six dumps in the fixture");
    let mut graphs = 0;
    for (file, want) in &expected {
        let imported = load_bgv(&common::shared_data(&format!("bgv/{file}"))).unwrap();
        assert!(
            imported.warnings.is_empty(),
            "{file}: {}",
            imported.warnings
        );
        let mut got: Vec<Counts> = stream_graphs(&imported.document)
            .into_iter()
            .map(counts)
            .collect();
        let mut want = want.clone();
        // Nested groups (a Truffle call tree, an AST) come after their parent's graphs in
        // the document; seafoam lists the stream in order. Compare as multisets.
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want, "{file}");
        graphs += got.len();
    }
    assert_eq!(graphs, 1219);
}

#[test]
fn a_truffle_call_tree_keeps_the_graph_nested_in_its_node() {
    let imported = load_bgv(&common::shared_data(
        "bgv/graalvm-gftc-java22-24.0.0_fib-js.bgv.gz",
    ))
    .unwrap();
    let all = imported.document.snapshots();
    let nested: Vec<&&Graph> = all.iter().filter(|g| g.name.contains("› node")).collect();
    assert_eq!(nested.len(), 1);
    // The call tree's root node carries the partially evaluated IR: the same graph as the
    // group's "After PE Tier" snapshot.
    let pe = all.iter().find(|g| g.name == "After PE Tier").unwrap();
    let (_, n, i, s, b) = counts(pe);
    let nested_counts = {
        let g = nested[0];
        let successors = g.edges.iter().filter(|e| e.kind == SUCCESSOR_KIND).count();
        (
            g.nodes.len(),
            g.edges.len() - successors,
            successors,
            g.blocks.len(),
        )
    };
    assert_eq!(nested_counts, (n, i, s, b));
}

fn example_if_after_parsing() -> Graph {
    let imported = load_bgv(&common::shared_data(
        "bgv/graalvm-gftc-java22-24.0.0_java_exampleIf.bgv.gz",
    ))
    .unwrap();
    let group = &imported.document.groups[0];
    assert_eq!(
        group.name(),
        "359:JavaExamples.exampleIf(boolean, int, int)"
    );
    group
        .graphs
        .iter()
        .find(|g| g.name == "After parsing")
        .unwrap()
        .clone()
}

#[test]
fn nodes_and_edges_follow_igv() {
    let g = example_if_after_parsing();
    assert_eq!(g.nodes.len(), 20);
    let node = |id: &str| g.node(id).unwrap();
    let edge = |from: &str, to: &str| {
        let (f, t) = (g.node_index(from).unwrap(), g.node_index(to).unwrap());
        g.edges.iter().find(|e| e.from == f && e.to == t).unwrap()
    };
    // Names from the classes' templates, `class` the Java class.
    assert_eq!(node("0").label(), "Start");
    assert_eq!(
        node("9").properties.get("class"),
        Some("jdk.graal.compiler.nodes.IfNode")
    );
    assert_eq!(node("6").label(), "==");
    assert_eq!(node("1").label(), "P(0)");
    // `Phi({i#values}, {p#valueDescription})`: the ids in the slot `values`.
    assert_eq!(node("18").label(), "Phi(2, 3, i32)");
    // `@{p#code/s}:{p#bci}`: the method at its short length.
    assert_eq!(node("4").label(), "@JavaExamples.exampleIf:0");
    assert_eq!(node("4").properties.get("category"), Some("state"));
    assert_eq!(node("7").properties.get("hasPredecessor"), Some("true"));
    assert_eq!(node("15").properties.get("shortName"), Some("E"));
    // Successor edges: node → successor, slot numbers from 0.
    let t = edge("9", "8");
    assert_eq!(
        (t.kind.as_str(), t.label.as_str()),
        ("Successor", "trueSuccessor")
    );
    let f = edge("9", "7");
    assert_eq!((f.label.as_str(), f.from_index), ("falseSuccessor", 1));
    // Input edges: input → user, slot after the predecessor, list slots indexed.
    let cond = edge("6", "9");
    assert_eq!((cond.kind.as_str(), cond.to_index), ("Condition", 1));
    assert_eq!(edge("3", "4").label, "values[2]");
    assert_eq!(edge("4", "0").kind, "State");
    // Blocks by id, with their successors; each node in its block.
    assert_eq!(g.blocks.len(), 4);
    assert_eq!(g.blocks[0].successors, ["1", "2"]);
    assert_eq!(node("20").properties.get("block"), Some("3"));
}

#[test]
fn graal_profiles_remove_states_split_constants_and_colour_by_category() {
    let g = example_if_after_parsing();
    let view = apply_profile(&g, &Profile::shipped("graal").unwrap()).unwrap();
    let ids: Vec<&str> = view.graph.nodes.iter().map(|n| n.id.as_str()).collect();
    for state in ["4", "11", "14", "19"] {
        assert!(!ids.contains(&state), "frame state {state} removed");
    }
    // The constant 5 (used by `==` only) is split into it.
    assert!(!ids.contains(&"5"));
    let eq = view.graph.node_index("6").unwrap();
    assert_eq!(view.nodes[eq].split, ["5"]);
    assert!(
        view.graph.nodes[eq].label().starts_with("==\ny: C(0)"),
        "{}",
        view.graph.nodes[eq].label()
    );
    // The parameters lose only their state uses: they stay.
    assert!(ids.contains(&"1") && ids.contains(&"2") && ids.contains(&"3"));
    let if_node = view.graph.node_index("9").unwrap();
    assert_eq!(view.nodes[if_node].color, Some([0xf0, 0x3b, 0x20, 255]));
    let successor = view
        .graph
        .edges
        .iter()
        .position(|e| e.kind == "Successor")
        .unwrap();
    assert_eq!(view.edges[successor].color, Some([0xf0, 0x3b, 0x20, 255]));

    let cfg = apply_profile(&g, &Profile::shipped("graal-cfg").unwrap()).unwrap();
    assert!(cfg.graph.edges.iter().all(|e| e.kind == "Successor"));
    assert!(
        cfg.graph
            .nodes
            .iter()
            .all(|n| !matches!(n.properties.get("category"), Some("floating" | "state")))
    );
    // Start → If → two branches → merge → return: the fixed nodes of the CFG.
    assert_eq!(cfg.graph.nodes.len(), 10, "{:?}", cfg.graph.nodes);
}

#[test]
fn bgv_snapshots_lay_out_and_differ_like_any_graph() {
    let imported = memscape_graph::load_graphs(&[&common::shared_data(
        "bgv/graalvm-gftc-java22-24.0.0_fib-js.bgv.gz",
    )])
    .unwrap();
    let snapshots = imported.document.snapshots();
    for g in &snapshots {
        let report = memscape_graph::report::layout_report(
            g,
            &memscape_graph::layout::LayoutOptions::default(),
            None,
            &mut |_| {},
        );
        assert_eq!(report.nodes.len(), g.nodes.len());
        assert!(
            report
                .nodes
                .iter()
                .all(|n| n.x.is_finite() && n.y.is_finite())
        );
    }
    // High tier → mid tier: nodes keep their ids, so the difference is about the changes.
    let high = snapshots
        .iter()
        .find(|g| g.name == "After high tier")
        .unwrap();
    let mid = snapshots
        .iter()
        .find(|g| g.name == "After mid tier")
        .unwrap();
    let d = memscape_graph::diff::diff(high, mid);
    assert!(!d.added_nodes.is_empty() && !d.removed_nodes.is_empty());
    let kept = high.nodes.len() - d.removed_nodes.len();
    assert_eq!(kept + d.added_nodes.len(), mid.nodes.len());
}

/// A BGV stream written by hand, as Graal's `GraphProtocol` writes it.
#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    fn u16(&mut self, v: u16) -> &mut Self {
        self.0.extend(v.to_be_bytes());
        self
    }
    fn i32(&mut self, v: i32) -> &mut Self {
        self.0.extend(v.to_be_bytes());
        self
    }
    fn f64(&mut self, v: f64) -> &mut Self {
        self.0.extend(v.to_be_bytes());
        self
    }
    fn string(&mut self, s: &str) -> &mut Self {
        self.i32(s.len() as i32);
        self.0.extend(s.as_bytes());
        self
    }
    /// A new pool string.
    fn new_string(&mut self, id: u16, s: &str) -> &mut Self {
        self.u8(0).u16(id).u8(1).string(s)
    }
    /// A new pool class (`enum_values`: an enum class with those values, new strings from
    /// `id + 1`).
    fn new_class(&mut self, id: u16, name: &str, enum_values: &[&str]) -> &mut Self {
        self.u8(0).u16(id).u8(3).string(name);
        if enum_values.is_empty() {
            self.u8(0)
        } else {
            self.u8(1).i32(enum_values.len() as i32);
            for (i, v) in enum_values.iter().enumerate() {
                self.new_string(id + 1 + i as u16, v);
            }
            self
        }
    }
    fn reference(&mut self, tag: u8, id: u16) -> &mut Self {
        self.u8(tag).u16(id)
    }
    fn props(&mut self, major: u8, count: usize) -> &mut Self {
        if major >= 8 && count >= 0xffff {
            self.u16(0xffff).i32(count as i32)
        } else {
            self.u16(count as u16)
        }
    }
}

/// Graph `graph N` of three nodes: Start →(next) Add, Constant →(x, ys[0]) Add; one block.
fn write_graph(w: &mut Writer, major: u8, id: i32, first: bool) {
    w.u8(0x01).i32(id).string("graph %s").i32(1);
    w.u8(0x01).i32(id); // argument: PROPERTY_INT
    w.props(major, 0);
    w.i32(3);
    // Node 0: StartNode, one direct successor slot "next".
    w.i32(0);
    if first {
        w.u8(0).u16(10).u8(6);
        w.new_class(11, "org.graalvm.compiler.nodes.StartNode", &[]);
        w.string("").u16(0).u16(1).u8(0).new_string(12, "next");
    } else {
        w.reference(6, 10);
    }
    w.u8(0).props(major, 0).i32(1);
    // Node 1: AddNode `+{p#value}` with inputs x (direct) and ys (list) of type Value.
    w.i32(1);
    if first {
        w.u8(0).u16(20).u8(6);
        w.new_class(21, "x.nodes.AddNode", &[]);
        w.string("+{p#x}").u16(2);
        w.u8(0).new_string(22, "x");
        w.u8(0).u16(23).u8(2); // new enum value
        w.new_class(
            24,
            "org.graalvm.compiler.nodeinfo.InputType",
            &["Value", "State"],
        );
        w.i32(0);
        w.u8(1).new_string(27, "ys").reference(2, 23);
        w.u16(0);
    } else {
        w.reference(6, 20);
    }
    w.u8(1).props(major, 1);
    w.reference(1, 22).u8(0x03).f64(2.0); // property x = 2.0 (key reuses the string "x")
    w.i32(2).u16(2).i32(2).i32(-1);
    // Node 2: ConstantNode `C({p#x})`, no slots.
    w.i32(2);
    if first {
        w.u8(0).u16(30).u8(6);
        w.new_class(31, "x.nodes.ConstantNode", &[]);
        w.string("C({p#x})").u16(0).u16(0);
    } else {
        w.reference(6, 30);
    }
    w.u8(0).props(major, 1).reference(1, 22).u8(0x01).i32(5);
    // One block holding the three nodes.
    w.i32(1).i32(0).i32(3).i32(0).i32(1).i32(2).i32(0);
}

fn stream(major: u8, minor: u8, graphs: i32) -> Vec<u8> {
    let mut w = Writer::default();
    w.0.extend(b"BIGV");
    w.u8(major).u8(minor);
    if major >= 7 {
        w.u8(0x03)
            .props(major, 1)
            .new_string(40, "vm")
            .u8(0x01)
            .i32(7);
    }
    w.u8(0x00)
        .new_string(41, "group A")
        .reference(1, 41)
        .u8(5)
        .i32(-1);
    w.props(major, 0);
    for id in 0..graphs {
        write_graph(&mut w, major, id, id == 0);
    }
    w.u8(0x02);
    w.0
}

#[test]
fn hand_written_streams_of_versions_6_7_and_8_read_alike() {
    for (major, minor) in [(6, 1), (7, 0), (8, 0)] {
        let imported = parse_bgv(&stream(major, minor, 2), "hand.bgv").unwrap();
        assert!(imported.warnings.is_empty(), "{}", imported.warnings);
        let doc = &imported.document;
        assert_eq!(doc.properties.get("vm"), (major >= 7).then_some("7"));
        assert_eq!(doc.groups.len(), 1);
        let g = &doc.groups[0].graphs[1];
        assert_eq!(g.name, "graph 1");
        let labels: Vec<&str> = g.nodes.iter().map(|n| n.label()).collect();
        assert_eq!(labels, ["StartNode", "+2.0", "C(5)"], "v{major}");
        let edges: Vec<(usize, usize, &str, &str, u32)> = g
            .edges
            .iter()
            .map(|e| (e.from, e.to, e.kind.as_str(), e.label.as_str(), e.to_index))
            .collect();
        assert_eq!(
            edges,
            [
                (0, 1, "Successor", "next", 0),
                (2, 1, "Value", "x", 1),
                (2, 1, "Value", "ys[0]", 2),
            ]
        );
        assert_eq!(g.blocks[0].nodes, [0, 1, 2]);
    }
}

#[test]
fn version_8_reads_long_property_lists() {
    let mut w = Writer::default();
    w.0.extend(b"BIGV");
    w.u8(8).u8(0);
    w.u8(0x03).props(8, 0x1_0000);
    w.new_string(0, "k0").u8(0x05);
    for i in 1..0x1_0000 {
        w.reference(1, 0).u8(if i % 2 == 0 { 0x05 } else { 0x06 });
    }
    w.u8(0x00)
        .new_string(1, "g")
        .u8(5)
        .u8(5)
        .i32(-1)
        .props(8, 0);
    write_graph(&mut w, 8, 0, true);
    w.u8(0x02);
    let imported = parse_bgv(&w.0, "long.bgv").unwrap();
    assert!(imported.warnings.is_empty(), "{}", imported.warnings);
    // One key, set 65,536 times: the last value wins.
    assert_eq!(imported.document.properties.get("k0"), Some("false"));
    assert_eq!(imported.document.snapshots().len(), 1);
}

#[test]
fn a_stream_cut_short_keeps_its_complete_graphs() {
    let full = stream(7, 0, 3);
    let one = stream(7, 0, 1);
    // Cut inside the second graph: the first is kept, the rest reported with its offset.
    let cut = &full[..one.len() + 20];
    let imported = parse_bgv(cut, "cut.bgv").unwrap();
    assert_eq!(imported.document.snapshots().len(), 1);
    assert_eq!(imported.warnings.count("unread_rest"), 1);
    assert_eq!(imported.warnings.count("unclosed_group"), 1);
    let text = imported.warnings.to_string();
    assert!(
        text.contains("cut.bgv@") && text.contains("ends inside"),
        "{text}"
    );
    // Cut inside the first graph: nothing to keep, an error naming the offset.
    let e = parse_bgv(&full[..60], "cut.bgv").unwrap_err().to_string();
    assert!(e.starts_with("cut.bgv@"), "{e}");
}

#[test]
fn unknown_versions_pool_references_and_tags_are_reported() {
    let mut newer = stream(7, 0, 1);
    newer[4] = 9;
    let imported = parse_bgv(&newer, "v9.bgv").unwrap();
    assert_eq!(imported.warnings.count("unknown_version"), 1);
    assert_eq!(imported.document.snapshots().len(), 1);

    // A reference to a pool entry never defined (the group's short name): a warning, not an
    // error.
    let mut w = Writer::default();
    w.0.extend(b"BIGV");
    w.u8(7).u8(0);
    w.u8(0x00)
        .new_string(0, "g")
        .reference(1, 999)
        .u8(5)
        .i32(-1)
        .props(7, 0);
    write_graph(&mut w, 7, 0, true);
    let imported = parse_bgv(&w.0, "ref.bgv").unwrap();
    assert_eq!(imported.warnings.count("unknown_pool_reference"), 1);

    // An unknown item tag after a graph: kept graph, `unread_rest`.
    let mut bytes = stream(7, 0, 1);
    bytes.push(0x7f);
    let imported = parse_bgv(&bytes, "tag.bgv").unwrap();
    assert_eq!(imported.warnings.count("unread_rest"), 1);
    assert!(
        imported
            .warnings
            .to_string()
            .contains("unknown item tag 0x7f")
    );
}

#[test]
fn huge_counts_fail_without_allocating() {
    let mut bytes = stream(7, 0, 1);
    // The first graph's node count (after its title and empty property list) → i32::MAX.
    let at = bytes
        .windows(12)
        .position(|w| w == b"\x00\x00\x00\x08graph %s")
        .unwrap()
        + 12
        + 4 // argument count
        + 5 // argument
        + 2; // property count
    bytes[at..at + 4].copy_from_slice(&i32::MAX.to_be_bytes());
    let e = parse_bgv(&bytes, "big.bgv").unwrap_err().to_string();
    assert!(e.contains("node count") && e.contains("do not fit"), "{e}");
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Any prefix and any corrupted byte: an error or a document, never a panic.
        #[test]
        fn cut_or_corrupt_streams_never_panic(cut in 0usize..2000, at in 0usize..2000, byte: u8) {
            let mut bytes = stream(7, 0, 2);
            let len = bytes.len();
            bytes[at % len] = byte;
            bytes.truncate(cut.min(len));
            let _ = parse_bgv(&bytes, "fuzz.bgv");
        }
    }
}
