//! Hostile XML against the topology readers: entity expansion (billion laughs), deep
//! nesting and absurd numbers must fail or load quickly, never expand or recurse.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use memscape_topology::{Topology, hwloc_xml, memaxes_xml};

const QUICK: Duration = Duration::from_secs(5);

/// Ten levels of ten-fold entities: 10^9 "lol"s if expanded.
fn billion_laughs(root: &str) -> String {
    let mut dtd = String::from("<!ENTITY lol0 \"lol\">\n");
    for i in 1..10 {
        let refs = format!("&lol{};", i - 1).repeat(10);
        dtd.push_str(&format!("<!ENTITY lol{i} \"{refs}\">\n"));
    }
    format!(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE {root} [\n{dtd}]>\n<{root} version=\"2.0\"><object type=\"Machine\" os_index=\"0\" name=\"&lol9;\"><object type=\"PU\" os_index=\"0\" cpuset=\"0x1\"/></object></{root}>\n"
    )
}

#[test]
fn entities_are_never_expanded() {
    let text = billion_laughs("topology");
    let start = Instant::now();
    // Loads (the attribute is not one we read) or refuses the entity; either way at once and
    // without expanding it.
    if let Ok(t) = hwloc_xml::parse(text.as_bytes(), "laughs.xml") {
        // machine, the NUMA node added for a file without one, the PU
        assert_eq!(t.nodes().len(), 3);
    }
    let hw = billion_laughs("Hardware");
    let _ = memaxes_xml::parse(hw.as_bytes(), "laughs-hardware.xml");
    assert!(start.elapsed() < QUICK, "{:?}", start.elapsed());
}

#[test]
fn deep_nesting_is_read_without_recursion() {
    // 100,000 nested groups (about 3 MB) around one PU: flattened, in linear time.
    let depth = 100_000;
    let mut text = String::from(
        "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n<object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\">\n",
    );
    text.push_str(&"<object type=\"Group\">".repeat(depth));
    text.push_str("<object type=\"PU\" os_index=\"0\" cpuset=\"0x1\"/>");
    text.push_str(&"</object>".repeat(depth));
    text.push_str("</object></topology>\n");
    let start = Instant::now();
    let t = hwloc_xml::parse(text.as_bytes(), "deep.xml").unwrap();
    assert_eq!(t.groups_flattened(), depth as u32);
    assert!(t.pu(0).is_some());
    assert!(start.elapsed() < QUICK, "{:?}", start.elapsed());
    // Unclosed: an error naming the end of the file, not a stack overflow.
    let cut = &text[..text.len() / 2];
    let err = hwloc_xml::parse(cut.as_bytes(), "cut.xml")
        .unwrap_err()
        .to_string();
    assert!(err.contains("cut.xml"), "{err}");
}

#[test]
fn absurd_numbers_are_refused_or_bounded() {
    // A cpuset of 2^20 + 1 words (about 4 MB of text) is above the bitmap cap.
    let words = vec!["0x0"; (1 << 20) + 1].join(",");
    let text = format!(
        "<topology version=\"2.0\"><object type=\"Machine\" cpuset=\"{words}\"><object type=\"PU\" os_index=\"0\" cpuset=\"0x1\"/></object></topology>"
    );
    let err = hwloc_xml::parse(text.as_bytes(), "wide.xml")
        .unwrap_err()
        .to_string();
    assert!(err.contains("wide.xml") && err.contains("cpuset"), "{err}");
    // The largest OS index is one PU, not four billion.
    let text = "<topology version=\"2.0\"><object type=\"Machine\"><object type=\"PU\" os_index=\"4294967295\"/></object></topology>";
    let t = Topology::from_bytes(text.as_bytes(), "big-index.xml").unwrap();
    assert_eq!(t.nodes().len(), 3);
}
