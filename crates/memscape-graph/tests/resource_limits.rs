//! Hostile graph files: a few kilobytes asking for tens of millions of edges, entity
//! expansion and deep nesting in IGV XML, deep subgraph nesting in DOT.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use memscape_graph::import_contents;

fn import(
    name: &str,
    text: String,
) -> Result<memscape_graph::Imported, memscape_graph::GraphError> {
    import_contents(vec![(name.to_owned(), text.into_bytes())])
}

#[test]
fn an_edge_product_over_the_cap_is_refused_before_it_is_built() {
    // {3,000 nodes} -> {3,000 nodes}: 9 million edges from a 40 KB file.
    let side = |p: &str| {
        (0..3000)
            .map(|i| format!("{p}{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let text = format!("digraph g {{ {{{}}} -> {{{}}} }}\n", side("a"), side("b"));
    assert!(text.len() < 64 * 1024);
    let start = Instant::now();
    let err = import("product.dot", text).unwrap_err().to_string();
    assert!(
        err.contains("product.dot:1:") && err.contains("4000000 edges"),
        "{err}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn deep_dot_nesting_is_an_error_not_a_stack_overflow() {
    let text = format!(
        "digraph g {{ {} a {} }}\n",
        "{".repeat(100_000),
        "}".repeat(100_000)
    );
    let err = import("deep.dot", text).unwrap_err().to_string();
    assert!(
        err.contains("deep.dot:1:") && err.contains("nested deeper"),
        "{err}"
    );
}

#[test]
fn igv_entities_are_not_expanded_and_nesting_is_linear() {
    let mut dtd = String::from("<!ENTITY lol0 \"lol\">");
    for i in 1..10 {
        dtd.push_str(&format!(
            "<!ENTITY lol{i} \"{}\">",
            format!("&lol{};", i - 1).repeat(10)
        ));
    }
    let text = format!(
        "<?xml version=\"1.0\"?><!DOCTYPE graphDocument [{dtd}]><graphDocument><group><properties><p name=\"name\">&lol9;</p></properties><graph name=\"g\"><nodes><node id=\"1\"><properties><p name=\"name\">&lol9;</p></properties></node></nodes><edges/></graph></group></graphDocument>"
    );
    let start = Instant::now();
    // Loads with the entity left unexpanded, or refuses it; at once either way.
    if let Ok(imported) = import("laughs.xml", text) {
        let g = imported.document.snapshots()[0];
        assert!(
            g.nodes
                .iter()
                .all(|n| n.properties.iter().all(|(_, v)| v.len() < 1000))
        );
    }
    let deep = format!(
        "<graphDocument>{}{}</graphDocument>",
        "<group>".repeat(50_000),
        "</group>".repeat(50_000)
    );
    let _ = import("deep.xml", deep);
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn copied_attributes_have_a_budget() {
    // A 100 KB default label copied onto 3,000 edges would be 300 MB from a 120 KB file.
    let text = format!(
        "digraph g {{ edge [label=\"{}\"]; {} }}\n",
        "x".repeat(100_000),
        "a -> b; ".repeat(3000)
    );
    let start = Instant::now();
    let err = import("copies.dot", text).unwrap_err().to_string();
    assert!(
        err.contains("copies.dot:1:") && err.contains("256 MiB"),
        "{err}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
}
