#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;

use memscape_graph::{GraphError, igv};

/// Independent count of `<p name=` inside `<nodes>…</nodes>` (the example has one graph).
fn node_property_count(xml: &str) -> usize {
    let start = xml.find("<nodes>").unwrap();
    let end = xml.find("</nodes>").unwrap();
    xml[start..end].matches("<p name=").count()
}

#[test]
fn example_xml_loads_with_all_properties() {
    let path = common::shared_data("igv/example.xml");
    let imported = igv::load_igv(&path).unwrap();
    assert!(imported.warnings.is_empty(), "{}", imported.warnings);
    let doc = &imported.document;
    assert_eq!(doc.groups.len(), 1);
    let group = &doc.groups[0];
    assert!(group.difference);
    assert_eq!(group.name(), "example graphs");
    assert_eq!(group.properties.get("type"), Some(""));
    let snapshots = doc.snapshots();
    assert_eq!(snapshots.len(), 1);
    let g = snapshots[0];
    assert_eq!(g.name, "graph");
    assert_eq!(g.nodes.len(), 56);
    assert_eq!(g.edges.len(), 121);
    let xml = std::fs::read_to_string(&path).unwrap();
    let stored: usize = g.nodes.iter().map(|n| n.properties.len()).sum();
    assert_eq!(stored, node_property_count(&xml));
    let root = g.node("0").unwrap();
    assert_eq!(root.properties.get("name"), Some("Root"));
    assert_eq!(root.properties.get("category"), Some("other"));
    assert_eq!(root.properties.get("dump_spec"), Some(""));
    let call = g.node("67").unwrap();
    assert!(
        call.properties
            .get("dump_spec")
            .unwrap()
            .starts_with("# Static uncommon_trap(reason='loop_limit_check'")
    );
    // `<edge toIndex="10" to="67" from="10"/>`
    let e = g
        .edges
        .iter()
        .find(|e| g.nodes[e.to].id == "67" && e.to_index == 10)
        .unwrap();
    assert_eq!(g.nodes[e.from].id, "10");
    // Self-loop of the Root region.
    assert!(
        g.edges
            .iter()
            .any(|e| e.from == e.to && g.nodes[e.from].id == "0")
    );
}

#[test]
fn difference_groups_rebuild_each_snapshot() {
    let imported = igv::load_igv(&common::test_data("igv_difference.xml")).unwrap();
    let doc = &imported.document;
    assert_eq!(doc.properties.get("origin"), Some("crafted for memscape"));
    let group = &doc.groups[0];
    assert_eq!(group.name(), "Foo::bar");
    let method = group.method.as_ref().unwrap();
    assert_eq!(
        (method.name.as_str(), method.short_name.as_str(), method.bci),
        ("Foo::bar", "bar", Some(0))
    );
    assert_eq!(method.bytecodes.as_deref(), Some("0 iload_0\n1 ireturn"));
    assert_eq!(method.inlined[0].short_name, "baz");
    assert_eq!(method.inlined[0].inlined[0].bci, Some(2));

    let snaps = doc.snapshots();
    assert_eq!(snaps.len(), 4);
    let (g1, g2, g3, nested) = (snaps[0], snaps[1], snaps[2], snaps[3]);
    assert_eq!(g1.nodes.len(), 5);
    assert_eq!(g1.edges.len(), 5);
    assert_eq!(
        g1.node("4").unwrap().properties.get("dump_spec"),
        Some("a < b && c")
    );
    assert_eq!(g1.blocks.len(), 2);
    assert_eq!(g1.blocks[0].successors, vec!["B1"]);
    assert_eq!(g1.blocks[1].nodes.len(), 3);

    // g2: node 4 removed with its edges, node 6 added, node 2 changed.
    assert_eq!(g2.name, "After Optimizations");
    let mut ids: Vec<&str> = g2.nodes.iter().map(|n| n.id.as_str()).collect();
    ids.sort_unstable();
    assert_eq!(ids, vec!["1", "2", "3", "5", "6"]);
    assert_eq!(g2.edges.len(), 3);
    assert_eq!(g2.node("2").unwrap().properties.get("type"), Some("int"));
    // Blocks follow the removal (node 4 left B1).
    assert_eq!(g2.blocks[1].nodes.len(), 2);

    // g3: empty nodes element keeps everything; one edge swapped.
    assert_eq!(g3.nodes.len(), 5);
    let pairs: Vec<(&str, &str)> = g3
        .edges
        .iter()
        .map(|e| (g3.nodes[e.from].id.as_str(), g3.nodes[e.to].id.as_str()))
        .collect();
    assert!(pairs.contains(&("1", "5")));
    assert!(!pairs.contains(&("3", "5")));

    // The nested group is not a difference group: it starts from nothing, and its edge to an
    // unknown node is a counted warning.
    assert_eq!(group.groups[0].name(), "Foo::inner");
    assert_eq!(nested.nodes.len(), 1);
    assert_eq!(nested.edges.len(), 0);
    assert_eq!(imported.warnings.count("edge_unknown_node"), 1);
    assert_eq!(imported.warnings.kinds()[0].first[0].line, Some(69));
}

#[test]
fn malformed_xml_is_an_error_with_line_and_column() {
    let text = b"<graphDocument>\n<group>\n<graph name='x'>\n<nodes>\n</group>\n";
    match igv::parse_igv(text, "bad.xml") {
        Err(GraphError::Syntax { file, line, .. }) => {
            assert_eq!(file, "bad.xml");
            assert_eq!(line, 5);
        }
        other => panic!("expected a syntax error, got {other:?}"),
    }
    let truncated = b"<graphDocument>\n<group>\n<graph>";
    let err = igv::parse_igv(truncated, "cut.xml")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("cut.xml") && err.contains("not closed"),
        "{err}"
    );
    let wrong_root = b"<html><body/></html>";
    let err = igv::parse_igv(wrong_root, "page.html")
        .unwrap_err()
        .to_string();
    assert!(err.contains("expected <graphDocument>"), "{err}");
}

#[test]
fn recoverable_problems_are_counted() {
    let text = br#"<graphDocument><group><graph>
<nodes><node id="1"/><node id="1"/><node/><frobnicate/></nodes>
<edges><edge from="1"/><edge from="1" to="1" toIndex="x"/></edges>
</graph></group></graphDocument>"#;
    let imported = igv::parse_igv(text, "w.xml").unwrap();
    let w = &imported.warnings;
    assert_eq!(w.count("duplicate_node"), 1);
    assert_eq!(w.count("node_without_id"), 1);
    assert_eq!(w.count("unknown_element"), 1);
    assert_eq!(w.count("edge_without_endpoint"), 1);
    assert_eq!(w.count("bad_edge_index"), 1);
    assert_eq!(imported.document.snapshots()[0].edges.len(), 1);
}

#[test]
fn compressed_input_loads_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let raw = std::fs::read(common::shared_data("igv/example.xml")).unwrap();
    let z = dir.path().join("example.xml.zst");
    std::fs::write(&z, zstd_encode(&raw)).unwrap();
    let a = igv::load_igv(&common::shared_data("igv/example.xml")).unwrap();
    let b = memscape_graph::load_graphs(&[z.as_path()]).unwrap();
    assert_eq!(a.document, b.document);
}

fn zstd_encode(bytes: &[u8]) -> Vec<u8> {
    // A valid zstd frame made of raw (stored) blocks, built by hand (RFC 8878 §3.1.1).
    let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd];
    // Frame header: single segment, 4-byte content size.
    frame.push(0b1010_0000);
    frame.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    for (i, chunk) in bytes.chunks(100_000).enumerate() {
        let last = (i + 1) * 100_000 >= bytes.len();
        let header = ((chunk.len() as u32) << 3) | u32::from(last);
        frame.extend_from_slice(&header.to_le_bytes()[..3]);
        frame.extend_from_slice(chunk);
    }
    frame
}

#[test]
fn absurd_nesting_is_an_error_not_a_stack_overflow() {
    let text = format!(
        "<graphDocument>{}{}</graphDocument>",
        "<group>".repeat(100_000),
        "</group>".repeat(100_000)
    );
    let err = igv::parse_igv(text.as_bytes(), "deep.xml")
        .unwrap_err()
        .to_string();
    assert!(err.contains("nested deeper"), "{err}");
}
