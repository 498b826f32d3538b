//! Paths of samples through a synthetic two-node machine: remote accesses through the root,
//! missing levels, unknown cpus.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memscape_samples::{
    AttrKind, Bitset, Column, ColumnData, Mapping, MemLevel, NONE, SampleFormat, Samples,
};
use memscape_topology::{RawObject, ResourceKind, SourceFormat, Topology};

/// NUMA 0 = {0, 1}, NUMA 1 = {2, 3}, one L2 per PU, no L3, no L1.
fn topology() -> Topology {
    let mut raw = vec![
        RawObject {
            kind: ResourceKind::Numa,
            os_index: Some(0),
            size_bytes: None,
            pus: vec![0, 1],
        },
        RawObject {
            kind: ResourceKind::Numa,
            os_index: Some(1),
            size_bytes: None,
            pus: vec![2, 3],
        },
    ];
    for p in 0..4 {
        raw.push(RawObject {
            kind: ResourceKind::L2,
            os_index: None,
            size_bytes: None,
            pus: vec![p],
        });
        raw.push(RawObject {
            kind: ResourceKind::Pu,
            os_index: Some(p),
            size_bytes: None,
            pus: vec![p],
        });
    }
    Topology::from_raw(raw, None, "two-node", SourceFormat::RunningMachine, 0).unwrap()
}

fn samples(rows: &[(u32, MemLevel, u64)]) -> Samples {
    let n = rows.len();
    Samples {
        format: SampleFormat::MemaxesCsv,
        latency: rows.iter().map(|r| r.2).collect(),
        cpu: rows.iter().map(|r| r.0).collect(),
        level: rows.iter().map(|r| r.1).collect(),
        data_node: vec![NONE; n],
        symbol: vec![NONE; n],
        symbols: vec![],
        source_line: vec![NONE; n],
        source_lines: vec![],
        columns: vec![Column {
            name: "latency".into(),
            kind: AttrKind::Quantitative,
            data: ColumnData::U64(rows.iter().map(|r| r.2).collect()),
            unknown: Bitset::new(n),
        }],
        warnings: Default::default(),
        file: "synthetic".into(),
        row_line: Vec::new(),
    }
}

#[test]
fn remote_ram_goes_through_the_machine_to_the_other_node() {
    let t = topology();
    let s = samples(&[
        (1, MemLevel::RemoteRam, 300),
        (1, MemLevel::L1, 5),
        (1, MemLevel::L3, 40),
        (2, MemLevel::LocalRam, 200),
        (7, MemLevel::L2, 10),
        (NONE, MemLevel::L2, 10),
        (3, MemLevel::Unknown, 99),
    ]);
    let m = Mapping::new(&s, &t);
    assert_eq!(m.warnings.count("cpu_not_in_topology"), 2);
    let kinds = |i: usize| -> Vec<(ResourceKind, Option<u32>)> {
        let r = &m.routes[m.route_of[i] as usize];
        r.nodes
            .iter()
            .map(|&n| {
                let node = t.node(n).unwrap();
                (node.kind, node.os_index)
            })
            .collect()
    };
    use ResourceKind::*;
    assert_eq!(
        kinds(0),
        vec![
            (Pu, Some(1)),
            (L2, None),
            (Numa, Some(0)),
            (Machine, Some(0)),
            (Numa, Some(1))
        ]
    );
    // No L1 on this machine: an L1 hit stops at the nearest enclosing resource, the L2.
    assert_eq!(kinds(1), vec![(Pu, Some(1)), (L2, None)]);
    // No L3: an L3 hit stops at the NUMA node.
    assert_eq!(kinds(2), vec![(Pu, Some(1)), (L2, None), (Numa, Some(0))]);
    assert_eq!(kinds(3), vec![(Pu, Some(2)), (L2, None), (Numa, Some(1))]);
    assert_eq!(kinds(6), vec![(Pu, Some(3))]);
    assert_eq!(m.route_of[4], NONE);

    let agg = m.aggregate(&s, None);
    let numa1 = t
        .nodes_of_kind(Numa)
        .find(|n| n.os_index == Some(1))
        .unwrap()
        .id as usize;
    // NUMA 1: the remote access (300) and the local one from cpu 2 (200).
    assert_eq!((agg.samples[numa1], agg.cycles[numa1]), (2, 500));
    assert_eq!((agg.samples[0], agg.cycles[0]), (1, 300));
    // Transfers: the machine → NUMA 1 link (named by NUMA 1) carries the remote access only.
    assert_eq!(agg.transfers[numa1], 1);
    // A selection recomputes: only the remote sample.
    let sel = Bitset::from_fn(s.len(), |i| i == 0);
    let agg = m.aggregate(&s, Some(&sel));
    assert_eq!(agg.samples[numa1], 1);
    assert_eq!(agg.samples.iter().filter(|&&c| c > 0).count(), 5);
}

/// An L3 shared by two NUMA nodes (hwloc v1 nests the nodes inside it): an L3 hit ends at the
/// L3 above the node, local RAM at the cpu's own node, unknown levels stay on the PU and are
/// counted as such.
#[test]
fn numa_nodes_below_a_shared_l3() {
    let mut raw = vec![RawObject {
        kind: ResourceKind::L3,
        os_index: None,
        size_bytes: None,
        pus: vec![0, 1, 2, 3],
    }];
    for node in 0..2u32 {
        raw.push(RawObject {
            kind: ResourceKind::Numa,
            os_index: Some(node),
            size_bytes: None,
            pus: vec![2 * node, 2 * node + 1],
        });
    }
    for p in 0..4 {
        raw.push(RawObject {
            kind: ResourceKind::Pu,
            os_index: Some(p),
            size_bytes: None,
            pus: vec![p],
        });
    }
    let t = Topology::from_raw(raw, None, "shared-l3", SourceFormat::HwlocXmlV1, 0).unwrap();
    let kind = |id: u32| t.node(id).unwrap().kind;
    let s = samples(&[
        (2, MemLevel::L3, 40),
        (2, MemLevel::LocalRam, 200),
        (2, MemLevel::Unknown, 7),
    ]);
    let m = Mapping::new(&s, &t);
    let route = |i: usize| &m.routes[m.route_of[i] as usize];
    let l3 = route(0);
    assert_eq!(
        l3.nodes.iter().map(|&n| kind(n)).collect::<Vec<_>>(),
        [ResourceKind::Pu, ResourceKind::Numa, ResourceKind::L3]
    );
    let ram = route(1);
    let node = *ram.nodes.last().unwrap();
    assert_eq!(kind(node), ResourceKind::Numa);
    assert_eq!(t.node(node).unwrap().os_index, Some(1));
    let unknown = route(2);
    assert!(unknown.level_unknown && unknown.nodes.len() == 1);
    let agg = m.aggregate(&s, None);
    let pu = t.pu(2).unwrap() as usize;
    assert_eq!((agg.samples[pu], agg.level_unknown[pu]), (3, 1));
}
