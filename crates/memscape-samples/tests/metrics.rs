//! Issue 9's metrics and clustering against direct computations, planted phases, and LULESH.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memscape_samples::metrics::{
    ClusterParams, Metric, cluster_report, cluster_tree, imbalance_score, latency_score,
    subset_score, window_scores,
};
use memscape_samples::{
    AttrKind, Bitset, Column, ColumnData, ImportOptions, Mapping, MemLevel, NONE, SampleFormat,
    Samples, load_samples,
};
use memscape_topology::{RawObject, ResourceKind, SourceFormat, Topology, shared_data_dir};

/// 2 NUMA nodes × 2 L2 × 2 PUs = 8 PUs (cpu i on NUMA i / 4, L2 i / 2).
fn small_topology() -> Topology {
    let mut raw = Vec::new();
    for n in 0..2u32 {
        raw.push(RawObject {
            kind: ResourceKind::Numa,
            os_index: Some(n),
            size_bytes: Some(1 << 30),
            pus: (4 * n..4 * n + 4).collect(),
        });
    }
    for c in 0..4u32 {
        raw.push(RawObject {
            kind: ResourceKind::L2,
            os_index: None,
            size_bytes: Some(1 << 18),
            pus: vec![2 * c, 2 * c + 1],
        });
    }
    for p in 0..8u32 {
        raw.push(RawObject {
            kind: ResourceKind::Pu,
            os_index: Some(p),
            size_bytes: None,
            pus: vec![p],
        });
    }
    Topology::from_raw(raw, None, "synthetic", SourceFormat::RunningMachine, 0).unwrap()
}

/// Samples from (time, cpu, latency, level).
fn synthetic(rows: &[(u64, u32, u64, MemLevel)]) -> Samples {
    let n = rows.len();
    Samples {
        format: SampleFormat::MemaxesCsv,
        latency: rows.iter().map(|r| r.2).collect(),
        cpu: rows.iter().map(|r| r.1).collect(),
        level: rows.iter().map(|r| r.3).collect(),
        data_node: vec![NONE; n],
        symbol: vec![NONE; n],
        symbols: Vec::new(),
        source_line: vec![NONE; n],
        source_lines: Vec::new(),
        columns: vec![Column {
            name: "time".into(),
            kind: AttrKind::Quantitative,
            data: ColumnData::U64(rows.iter().map(|r| r.0).collect()),
            unknown: Bitset::new(n),
        }],
        warnings: Default::default(),
        file: "synthetic".into(),
        row_line: Vec::new(),
    }
}

/// Deterministic pseudo-random numbers (xorshift), so tests need no RNG crate.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Direct per-PU counts and cycles of a subset.
fn direct_pu(samples: &Samples, subset: &[usize]) -> Vec<(u64, u64)> {
    let mut v = vec![(0u64, 0u64); 8];
    for &i in subset {
        v[samples.cpu[i] as usize].0 += 1;
        v[samples.cpu[i] as usize].1 += samples.latency[i];
    }
    v
}

#[test]
fn subset_scores_equal_direct_computation() {
    let topo = small_topology();
    let mut rng = Rng(0x9E3779B97F4A7C15);
    let levels = [MemLevel::L1, MemLevel::L2, MemLevel::LocalRam];
    let rows: Vec<_> = (0..5000u64)
        .map(|t| {
            let cpu = (rng.next() % 8) as u32;
            let lat = 10 + rng.next() % 500;
            (t, cpu, lat, levels[(rng.next() % 3) as usize])
        })
        .collect();
    let s = synthetic(&rows);
    let mapping = Mapping::new(&s, &topo);
    let subset = Bitset::from_fn(s.len(), |i| i % 3 != 0 && s.latency[i] > 100);
    let idx: Vec<usize> = subset.iter().collect();
    let pu = direct_pu(&s, &idx);
    // PU level: direct formula
    let direct_l = {
        let used: Vec<f64> = pu
            .iter()
            .filter(|p| p.0 > 0)
            .map(|p| p.1 as f64 / p.0 as f64)
            .collect();
        used.iter().sum::<f64>() / used.len() as f64
    };
    let got_l = subset_score(
        &s,
        &topo,
        &mapping,
        Metric::Latency,
        ResourceKind::Pu,
        Some(&subset),
    )
    .unwrap()
    .unwrap();
    assert!((got_l - direct_l).abs() < 1e-9);
    let counts: Vec<f64> = pu.iter().map(|p| p.0 as f64).collect();
    let mu = counts.iter().sum::<f64>() / 8.0;
    let sigma = (counts.iter().map(|c| (c - mu).powi(2)).sum::<f64>() / 8.0).sqrt();
    let direct_i = counts.iter().map(|c| (c - mu).abs()).fold(0.0, f64::max) / sigma;
    let got_i = subset_score(
        &s,
        &topo,
        &mapping,
        Metric::Imbalance,
        ResourceKind::Pu,
        Some(&subset),
    )
    .unwrap()
    .unwrap();
    assert!((got_i - direct_i).abs() < 1e-9);
    // NUMA level: only samples served by local RAM reach it.
    let mut numa = [(0u64, 0u64); 2];
    for &i in &idx {
        if s.level[i] == MemLevel::LocalRam {
            numa[(s.cpu[i] / 4) as usize].0 += 1;
            numa[(s.cpu[i] / 4) as usize].1 += s.latency[i];
        }
    }
    let got = subset_score(
        &s,
        &topo,
        &mapping,
        Metric::Latency,
        ResourceKind::Numa,
        Some(&subset),
    )
    .unwrap();
    assert_eq!(got, latency_score(&numa));
    let got = subset_score(
        &s,
        &topo,
        &mapping,
        Metric::Imbalance,
        ResourceKind::Numa,
        Some(&subset),
    )
    .unwrap();
    assert_eq!(got, imbalance_score(&numa));
    // No L3 in this topology → a clear error.
    assert!(subset_score(&s, &topo, &mapping, Metric::Latency, ResourceKind::L3, None).is_err());
}

#[test]
fn window_scores_equal_direct_computation() {
    let topo = small_topology();
    let mut rng = Rng(42);
    let rows: Vec<_> = (0..2000u64)
        .map(|t| {
            (
                t * 3,
                (rng.next() % 8) as u32,
                20 + rng.next() % 100,
                MemLevel::L1,
            )
        })
        .collect();
    let s = synthetic(&rows);
    let mapping = Mapping::new(&s, &topo);
    let w = window_scores(
        &s,
        &topo,
        &mapping,
        "time",
        7,
        Metric::Imbalance,
        ResourceKind::Pu,
        None,
    )
    .unwrap();
    assert_eq!(w.len(), 7);
    let (lo, hi) = (0.0, (1999 * 3) as f64);
    let width = (hi - lo) / 7.0;
    for (k, win) in w.iter().enumerate() {
        let idx: Vec<usize> = (0..s.len())
            .filter(|&i| {
                let b = (((i as f64 * 3.0) - lo) / width) as usize;
                b.min(6) == k
            })
            .collect();
        assert_eq!(win.samples, idx.len() as u64);
        assert_eq!(win.metric, imbalance_score(&direct_pu(&s, &idx)));
    }
}

/// Three time phases with different PU imbalance: one hot PU (I = √7 ≈ 2.65), two other PUs
/// evenly hot (I = √3 ≈ 1.73), three PUs evenly hot (I = 5/√15 ≈ 1.29). The shapes are chosen so
/// that a window mixing 25 % of the next phase still scores nearer its own phase and one with
/// 75 % nearer the next (checked by hand), which is what makes a boundary identifiable. (An evenly spread phase
/// makes a poor plant: I = max|s − μ|/σ is scale-free, so counts that differ by one sample
/// already score √3.)
fn planted() -> (Samples, Vec<usize>) {
    let mut rows = Vec::new();
    let mut rng = Rng(7);
    let phase_len = [12_000usize, 8_000, 10_000];
    let mut t = 0u64;
    for (phase, &len) in phase_len.iter().enumerate() {
        for j in 0..len {
            let cpu = match phase {
                0 => 0,
                1 => 6 + (j % 2) as u32,
                _ => (j % 3) as u32,
            };
            rows.push((t, cpu, 20 + rng.next() % 50, MemLevel::L1));
            t += 1 + rng.next() % 3;
        }
    }
    let bounds = vec![phase_len[0], phase_len[0] + phase_len[1]];
    (synthetic(&rows), bounds)
}

#[test]
fn planted_phases_come_out_as_three_clusters() {
    let topo = small_topology();
    let (s, bounds) = planted();
    let mapping = Mapping::new(&s, &topo);
    let (w, step) = (1000usize, 250usize);
    let tree = cluster_tree(
        &s,
        &topo,
        &mapping,
        ClusterParams {
            attribute: "time".into(),
            metric: Metric::Imbalance,
            kind: ResourceKind::Pu,
            window: w,
            step,
        },
        None,
    )
    .unwrap();
    assert_eq!(tree.nodes.len(), 2 * tree.leaves - 1, "a full binary tree");
    let cut = tree.cut(3);
    assert_eq!(cut.len(), 3);

    // Each cluster's metric is recomputed from its samples: check against direct computation.
    for c in &cut {
        let idx: Vec<usize> = tree.order[c.positions[0] as usize..c.positions[1] as usize]
            .iter()
            .map(|&i| i as usize)
            .collect();
        assert_eq!(Some(c.metric), imbalance_score(&direct_pu(&s, &idx)));
    }
    // Boundaries: the first cluster ends and the next begins around each planted boundary;
    // the split point (midpoint of the overlap) must be within one window step of it.
    for (k, &b) in bounds.iter().enumerate() {
        let end = cut[k].positions[1] as usize;
        let start = cut[k + 1].positions[0] as usize;
        let split = (end + start) / 2;
        assert!(
            split.abs_diff(b) <= step,
            "boundary {k}: planted at {b}, clusters split at {split} (end {end}, next start {start})"
        );
    }
    // Pure phases score their planted imbalance.
    // Pure phases score (nearly: a cluster keeps a straddling window) their planted imbalance.
    let planted_scores = [7f64.sqrt(), 3f64.sqrt(), 5.0 / 15f64.sqrt()];
    for (c, want) in cut.iter().zip(planted_scores) {
        assert!(
            (c.metric - want).abs() < 0.02,
            "cluster {:?}: {} vs {want}",
            c.windows,
            c.metric
        );
    }
    let report = cluster_report(&tree, 3);
    assert_eq!(report.clusters.len(), 3);
    assert_eq!(report.windows.len(), tree.leaves);
    let json = serde_json::to_value(&report).unwrap();
    let mut keys: Vec<String> = json["clusters"][0]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    keys.sort();
    assert_eq!(keys, ["metric", "range", "samples"]);
}

#[test]
fn clustering_is_neighbor_constrained_and_covers_every_sample() {
    let topo = small_topology();
    let (s, _) = planted();
    let mapping = Mapping::new(&s, &topo);
    let tree = cluster_tree(
        &s,
        &topo,
        &mapping,
        ClusterParams {
            attribute: "time".into(),
            metric: Metric::Latency,
            kind: ResourceKind::L2,
            window: 700,
            step: 300,
        },
        None,
    )
    .unwrap();
    // Every internal node merges two adjacent runs of windows.
    for node in &tree.nodes[tree.leaves..] {
        let [a, b] = node.children.unwrap();
        let (a, b) = (&tree.nodes[a as usize], &tree.nodes[b as usize]);
        assert_eq!(a.windows[1] + 1, b.windows[0]);
        assert_eq!(node.windows, [a.windows[0], b.windows[1]]);
    }
    let root = tree.nodes.last().unwrap();
    assert_eq!(root.positions, [0, s.len() as u32]);
    for k in 1..=tree.leaves.min(20) {
        let cut = tree.cut(k);
        assert_eq!(cut.len(), k);
        assert_eq!(cut[0].positions[0], 0);
        assert_eq!(cut.last().unwrap().positions[1], s.len() as u32);
    }
    assert!(
        cluster_tree(
            &s,
            &topo,
            &mapping,
            ClusterParams {
                attribute: "time".into(),
                metric: Metric::Latency,
                kind: ResourceKind::L2,
                window: 10,
                step: 20,
            },
            None
        )
        .is_err()
    );
}

#[test]
fn lulesh_clusters_along_zidx_and_time() {
    let dir = shared_data_dir().join("memaxes/lulesh");
    let s = load_samples(&dir.join("samples.out"), ImportOptions::default()).unwrap();
    let topo = Topology::from_file(&dir.join("hardware.xml")).unwrap();
    let mapping = Mapping::new(&s, &topo);
    for (attribute, kind) in [("zidx", ResourceKind::Pu), ("time", ResourceKind::L2)] {
        let tree = cluster_tree(
            &s,
            &topo,
            &mapping,
            ClusterParams {
                attribute: attribute.into(),
                metric: Metric::Imbalance,
                kind,
                window: 1000,
                step: 250,
            },
            None,
        )
        .unwrap();
        let cut = tree.cut(4);
        assert_eq!(cut.len(), 4);
        for c in &cut {
            let idx: Vec<usize> = tree.order[c.positions[0] as usize..c.positions[1] as usize]
                .iter()
                .map(|&i| i as usize)
                .collect();
            // positions are in attribute order; the selection wants sample indices
            let mut sorted = idx.clone();
            sorted.sort_unstable();
            let subset = Bitset::from_fn(s.len(), |i| sorted.binary_search(&i).is_ok());
            let direct =
                subset_score(&s, &topo, &mapping, Metric::Imbalance, kind, Some(&subset)).unwrap();
            assert_eq!(Some(c.metric), direct.or(Some(0.0)), "{attribute}");
        }
    }
}
