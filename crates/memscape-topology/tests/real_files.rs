//! Topologies from the real files in `../shared/data`, checked against independent oracles:
//! libhwloc itself (through hwlocality) on the same XML, `lstopo` (Debian package `hwloc`) for
//! the v1 export and the running machine, and plain text counts for MemAxes' hardware.xml.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;

use memscape_topology::{ResourceKind, SourceFormat, Topology, live, shared_data_dir};

const HWLOC_FILES: [&str; 4] = [
    "16amd64-4distances.xml",
    "192em64t-12gr2n8c2t.xml",
    "24em64t-2n6c2t-pci.xml",
    "this-ci-machine.xml",
];

fn data(rel: &str) -> PathBuf {
    shared_data_dir().join(rel)
}

/// Order-independent description of a tree: per node its kind, PU set, size, OS index (PUs and
/// NUMA nodes) and the kind and PU set of its parent.
type CanonNode = (
    ResourceKind,
    Vec<u32>,
    Option<u64>,
    Option<u32>,
    Option<(ResourceKind, Vec<u32>)>,
);

fn canonical(t: &Topology) -> Vec<CanonNode> {
    let mut v: Vec<_> = t
        .nodes()
        .iter()
        .filter(|n| n.kind != ResourceKind::Machine)
        .map(|n| {
            let parent = n
                .parent
                .and_then(|p| t.node(p))
                .map(|p| (p.kind, p.pus.clone()));
            let os = matches!(n.kind, ResourceKind::Pu | ResourceKind::Numa)
                .then_some(n.os_index)
                .flatten();
            (n.kind, n.pus.clone(), n.size_bytes, os, parent)
        })
        .collect();
    v.sort();
    v
}

fn tool(name: &str) -> Command {
    let found = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {name}"))
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        found,
        "`{name}` not found: install the Debian package `hwloc` (apt-get install -y hwloc)"
    );
    Command::new(name)
}

/// libhwloc 2.9 refuses `version="3.0"`; the element grammar it needs is the same, so the
/// oracle reads the file with the version relabelled.
fn as_v2_text(path: &PathBuf) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .replace("<topology version=\"3.0\">", "<topology version=\"2.0\">")
}

#[test]
fn hwloc_xml_files_match_libhwloc() {
    for name in HWLOC_FILES {
        let path = data(&format!("hwloc/{name}"));
        let ours = Topology::from_file(&path).unwrap();
        let oracle = live::from_libhwloc_xml(&as_v2_text(&path), name).unwrap();
        assert_eq!(
            canonical(&ours),
            canonical(&oracle),
            "{name}: our XML reader and libhwloc disagree"
        );
        let pus = ours.nodes_of_kind(ResourceKind::Pu).count();
        assert!(pus > 0, "{name}");
        assert!(matches!(
            ours.format(),
            SourceFormat::HwlocXmlV2 | SourceFormat::HwlocXmlV3
        ));
    }
}

#[test]
fn hwloc_v1_exports_match_v2() {
    let dir = std::env::temp_dir().join(format!("memscape-topo-v1-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in HWLOC_FILES {
        let path = data(&format!("hwloc/{name}"));
        let v2 = dir.join(format!("v2-{name}"));
        std::fs::write(&v2, as_v2_text(&path)).unwrap();
        let v1 = dir.join(format!("v1-{name}"));
        let status = tool("lstopo-no-graphics")
            .arg("--input")
            .arg(&v2)
            .args(["--export-xml-flags", "v1", "-f", "--of", "xml"])
            .arg(&v1)
            .output()
            .unwrap();
        assert!(
            status.status.success(),
            "lstopo failed on {name}: {status:?}"
        );
        let from_v1 = Topology::from_file(&v1).unwrap();
        assert_eq!(from_v1.format(), SourceFormat::HwlocXmlV1, "{name}");
        let from_v2 = Topology::from_file(&path).unwrap();
        assert_eq!(
            canonical(&from_v1),
            canonical(&from_v2),
            "{name}: v1 export and original disagree"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn object_counts_match_hwloc_calc() {
    let dir = std::env::temp_dir().join(format!("memscape-topo-calc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in HWLOC_FILES {
        let path = data(&format!("hwloc/{name}"));
        let v2 = dir.join(name);
        std::fs::write(&v2, as_v2_text(&path)).unwrap();
        let ours = Topology::from_file(&path).unwrap();
        for (kind, hwloc_type) in [
            (ResourceKind::Pu, "pu"),
            (ResourceKind::Core, "core"),
            (ResourceKind::Numa, "numa"),
            (ResourceKind::L3, "l3"),
            (ResourceKind::L2, "l2"),
            (ResourceKind::L1, "l1d"),
        ] {
            let out = tool("hwloc-calc")
                .arg("--input")
                .arg(&v2)
                .args(["--number-of", hwloc_type, "all"])
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            let expected: usize = text.trim().parse().unwrap_or(0);
            assert_eq!(
                ours.nodes_of_kind(kind).count(),
                expected,
                "{name}: number of {kind} (hwloc-calc said {text:?})"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn groups_are_flattened_numa_nodes_hang_off_the_machine() {
    let path = data("hwloc/192em64t-12gr2n8c2t.xml");
    let text = std::fs::read_to_string(&path).unwrap();
    let groups_in_file = text.matches("type=\"Group\"").count() as u32;
    let t = Topology::from_file(&path).unwrap();
    assert_eq!(t.groups_flattened(), groups_in_file);
    assert!(groups_in_file > 0);
    let numa: Vec<_> = t.nodes_of_kind(ResourceKind::Numa).collect();
    assert!(numa.iter().all(|n| n.parent == Some(0) && n.depth == 1));
    // Every PU is under exactly one NUMA node and an L3 inside it.
    for pu in t.nodes_of_kind(ResourceKind::Pu) {
        let n = t.ancestor_of_kind(pu.id, ResourceKind::Numa).unwrap();
        let l3 = t.ancestor_of_kind(pu.id, ResourceKind::L3).unwrap();
        assert!(t.node(l3).unwrap().depth > t.node(n).unwrap().depth);
    }
    let tree = memscape_topology::render_tree(&t);
    assert!(tree.contains("groups flattened"));
    assert_eq!(
        tree.matches("PU P#").count(),
        t.nodes_of_kind(ResourceKind::Pu).count()
    );
}

#[test]
fn running_machine_matches_lstopo_export() {
    let t = Topology::from_running_machine().unwrap();
    let dir = std::env::temp_dir().join(format!("memscape-topo-live-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let xml = dir.join("live.xml");
    let out = tool("lstopo-no-graphics")
        .args(["-f", "--of", "xml"])
        .arg(&xml)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let exported = Topology::from_file(&xml).unwrap();
    assert_eq!(canonical(&t), canonical(&exported));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn memaxes_lulesh_hardware_matches_text_counts() {
    let path = data("memaxes/lulesh/hardware.xml");
    let text = std::fs::read_to_string(&path).unwrap();
    let t = Topology::from_file(&path).unwrap();
    assert_eq!(t.format(), SourceFormat::MemaxesHardwareXml);
    assert_eq!(
        t.nodes_of_kind(ResourceKind::Pu).count(),
        text.matches("<CPU ").count()
    );
    assert_eq!(
        t.nodes_of_kind(ResourceKind::Numa).count(),
        text.matches("<NUMA ").count()
    );
    for (kind, tag) in [
        (ResourceKind::L3, "<Cache id=\"3\""),
        (ResourceKind::L2, "<Cache id=\"2\""),
        (ResourceKind::L1, "<Cache id=\"1\""),
    ] {
        assert_eq!(t.nodes_of_kind(kind).count(), text.matches(tag).count());
    }
    assert_eq!(t.nodes_of_kind(ResourceKind::Core).count(), 0);
    // Each CPU belongs to the NUMA section of the text it appears in.
    for (section_index, section) in text.split("<NUMA ").skip(1).enumerate() {
        let numa_id: u32 = section
            .split('"')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap();
        for cpu in section.split("<CPU id=\"").skip(1) {
            let os: u32 = cpu.split('"').next().unwrap().parse().unwrap();
            let pu = t.pu(os).unwrap();
            let numa = t.ancestor_of_kind(pu, ResourceKind::Numa).unwrap();
            assert_eq!(
                t.node(numa).unwrap().os_index,
                Some(numa_id),
                "cpu {os} in section {section_index}"
            );
        }
    }
    let report = serde_json::to_value(memscape_topology::topology_report(&t)).unwrap();
    assert_eq!(report["nodes"].as_array().unwrap().len(), t.nodes().len());
    assert_eq!(report["nodes"][0]["kind"], "machine");
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn inputs() -> Vec<Vec<u8>> {
        vec![
            std::fs::read(data("memaxes/lulesh/hardware.xml")).unwrap(),
            std::fs::read(data("hwloc/this-ci-machine.xml")).unwrap(),
            std::fs::read(data("hwloc/24em64t-2n6c2t-pci.xml")).unwrap(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]
        /// Mutated real files: the parsers return a tree or an error, never panic or hang.
        #[test]
        fn mutated_real_files_never_panic(
            which in 0usize..3,
            edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..12),
            cut in any::<prop::sample::Index>(),
            truncate in any::<bool>(),
        ) {
            let mut bytes = inputs()[which].clone();
            for (at, byte, op) in edits {
                if bytes.is_empty() { break; }
                let i = at.index(bytes.len());
                match op {
                    0 => bytes[i] = byte,
                    1 => { bytes.remove(i); }
                    _ => bytes.insert(i, byte),
                }
            }
            if truncate && !bytes.is_empty() {
                let n = cut.index(bytes.len());
                bytes.truncate(n);
            }
            if let Ok(t) = Topology::from_bytes(&bytes, "fuzz.xml") {
                prop_assert!(t.nodes_of_kind(ResourceKind::Pu).count() > 0);
                let _ = memscape_topology::render_tree(&t);
            }
        }
    }
}

/// hwloc v1 files nest NUMA nodes inside the objects that hold them; with an L3 shared by two
/// NUMA nodes (each under a group, as `lstopo` exports this synthetic machine in the v1
/// format) the nodes used to become childless children of the machine and the L3 took every
/// core. Each NUMA node must keep the cores it serves, under that L3, as libhwloc says.
#[test]
fn hwloc_v1_numa_nodes_under_an_l3_keep_their_cores() {
    let out = Command::new("lstopo")
        .args([
            "--input",
            "pack:1 l3:1 group:2 [numa] core:2 pu:1",
            "--of",
            "xml",
            "--export-xml-flags",
            "v1",
            "-",
        ])
        .output()
        .expect("lstopo (Debian package hwloc)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    // The shape under test: no version attribute (v1), NUMA nodes inside the L3 `Cache`.
    assert!(!text.contains("<topology version"), "{text}");
    let cache = text.find("type=\"Cache\"").unwrap();
    assert!(text[cache..].contains("type=\"NUMANode\""));
    let t = Topology::from_bytes(text.as_bytes(), "v1-numa-under-l3.xml").unwrap();
    assert_eq!(t.format(), SourceFormat::HwlocXmlV1);
    let numa: Vec<_> = t.nodes_of_kind(ResourceKind::Numa).collect();
    assert_eq!(numa.len(), 2);
    for (i, node) in numa.iter().enumerate() {
        let first = 2 * i as u32;
        assert_eq!(node.pus, vec![first, first + 1], "NUMA node {i}");
        assert_eq!(node.children.len(), 2, "NUMA node {i} holds its two cores");
        let parent = t.node(node.parent.unwrap()).unwrap();
        assert_eq!(
            parent.kind,
            ResourceKind::L3,
            "memory child of the L3 that held it"
        );
        for pu in [first, first + 1] {
            let pu = t.pu(pu).unwrap();
            assert_eq!(t.ancestor_of_kind(pu, ResourceKind::Numa), Some(node.id));
        }
    }
}
