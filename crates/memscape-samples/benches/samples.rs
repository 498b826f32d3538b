//! Mapping, metrics and clustering on 1,000,000 synthetic samples drawn from the LULESH
//! distribution (rows of `../shared/data/memaxes/lulesh/samples.out` resampled with
//! replacement, time re-stamped increasing), on LULESH's hardware.xml.
//!
//! `CARGO_TARGET_DIR=/work/targets/memscape-samples cargo bench -p memscape-samples --bench samples`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use memscape_samples::metrics::{ClusterParams, Metric, cluster_tree, subset_score, window_scores};
use memscape_samples::{
    AttrKind, AxisBrush, Bitset, Brush, Column, ColumnData, ImportOptions, LinkedIndex, Mapping,
    OffenderKey, Picked, RangeSpec, Samples, SelectionSpec, load_samples, recompute,
    select_offender, select_range,
};
use memscape_topology::{ResourceKind, Topology, shared_data_dir};

const N: usize = 1_000_000;

fn synthetic() -> (Samples, Topology) {
    let dir = shared_data_dir().join("memaxes/lulesh");
    let base = load_samples(&dir.join("samples.out"), ImportOptions::default())
        .unwrap_or_else(|e| panic!("LULESH samples: {e}"));
    let topology = Topology::from_file(&dir.join("hardware.xml"))
        .unwrap_or_else(|e| panic!("LULESH hardware: {e}"));
    let mut state = 0x2545F4914F6CDD1Du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let picks: Vec<usize> = (0..N)
        .map(|_| (next() % base.len() as u64) as usize)
        .collect();
    let mut t = 0u64;
    let time: Vec<u64> = (0..N)
        .map(|_| {
            t += 1 + next() % 100;
            t
        })
        .collect();
    // The same time stamps in random order, so clustering pays for a real sort.
    let mut shuffled = time.clone();
    for i in (1..N).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        shuffled.swap(i, j);
    }
    let take = |c: &Column| -> Column {
        let data = match &c.data {
            ColumnData::U64(v) => ColumnData::U64(picks.iter().map(|&p| v[p]).collect()),
            ColumnData::F64(v) => ColumnData::F64(picks.iter().map(|&p| v[p]).collect()),
            ColumnData::Category { codes, labels } => ColumnData::Category {
                codes: picks.iter().map(|&p| codes[p]).collect(),
                labels: labels.clone(),
            },
        };
        Column {
            name: c.name.clone(),
            kind: c.kind,
            data,
            unknown: Bitset::from_fn(N, |i| c.unknown.get(picks[i])),
        }
    };
    let mut columns: Vec<Column> = base
        .columns
        .iter()
        .filter(|c| c.name != "time")
        .map(take)
        .collect();
    columns.push(Column {
        name: "time".into(),
        kind: AttrKind::Quantitative,
        data: ColumnData::U64(time),
        unknown: Bitset::new(N),
    });
    columns.push(Column {
        name: "time_shuffled".into(),
        kind: AttrKind::Quantitative,
        data: ColumnData::U64(shuffled),
        unknown: Bitset::new(N),
    });
    let samples = Samples {
        format: base.format,
        latency: picks.iter().map(|&p| base.latency[p]).collect(),
        cpu: picks.iter().map(|&p| base.cpu[p]).collect(),
        level: picks.iter().map(|&p| base.level[p]).collect(),
        data_node: picks.iter().map(|&p| base.data_node[p]).collect(),
        symbol: picks.iter().map(|&p| base.symbol[p]).collect(),
        symbols: base.symbols.clone(),
        source_line: picks.iter().map(|&p| base.source_line[p]).collect(),
        source_lines: base.source_lines.clone(),
        columns,
        warnings: Default::default(),
        file: "synthetic".into(),
        row_line: Vec::new(),
    };
    (samples, topology)
}

fn bench(c: &mut Criterion) {
    let (samples, topology) = synthetic();
    let mapping = Mapping::new(&samples, &topology);
    let half = select_range(
        &samples,
        &RangeSpec::parse("latency=..40").unwrap_or_else(|e| panic!("{e}")),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // The MemAxes CSV importer on LULESH's samples.out repeated 20 times (313,540 rows).
    {
        let path = shared_data_dir().join("memaxes/lulesh/samples.out");
        let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let (header, rows) =
            text.split_at(text.iter().position(|&b| b == b'\n').map_or(0, |i| i + 1));
        let mut csv = header.to_vec();
        for _ in 0..20 {
            csv.extend_from_slice(rows);
        }
        let mut g = c.benchmark_group("import");
        g.sample_size(10);
        g.bench_function("memaxes_csv_313k_rows", |b| {
            b.iter(|| {
                black_box(
                    memscape_samples::parse_samples(&csv, "samples.out", ImportOptions::default())
                        .unwrap_or_else(|e| panic!("{e}")),
                )
            })
        });
        g.finish();
    }
    let mut g = c.benchmark_group("samples_1M");
    g.sample_size(10);
    g.bench_function("map", |b| {
        b.iter(|| black_box(Mapping::new(&samples, &topology)))
    });
    g.bench_function("aggregate_all", |b| {
        b.iter(|| black_box(mapping.aggregate(&samples, None)))
    });
    g.bench_function("aggregate_selection", |b| {
        b.iter(|| black_box(mapping.aggregate(&samples, Some(&half))))
    });
    g.bench_function("select_range_and_intersect", |b| {
        b.iter(|| {
            let s = select_range(
                &samples,
                &RangeSpec {
                    attribute: "zidx".into(),
                    lo: Some(3.0),
                    hi: Some(20.0),
                },
            )
            .unwrap_or_else(|e| panic!("{e}"));
            black_box(s.intersection(&half))
        })
    });
    g.bench_function("imbalance_pu_selection", |b| {
        b.iter(|| {
            black_box(subset_score(
                &samples,
                &topology,
                &mapping,
                Metric::Imbalance,
                ResourceKind::Pu,
                Some(&half),
            ))
        })
    });
    g.bench_function("window_scores_100_time_l2", |b| {
        b.iter(|| {
            black_box(window_scores(
                &samples,
                &topology,
                &mapping,
                "time",
                100,
                Metric::Imbalance,
                ResourceKind::L2,
                None,
            ))
        })
    });
    g.bench_function("cluster_time_w1000_d250_l2_imbalance", |b| {
        b.iter(|| {
            black_box(cluster_tree(
                &samples,
                &topology,
                &mapping,
                ClusterParams {
                    attribute: "time".into(),
                    metric: Metric::Imbalance,
                    kind: ResourceKind::L2,
                    window: 1000,
                    step: 250,
                },
                None,
            ))
        })
    });
    g.bench_function("cluster_shuffled_time_w1000_d250_l2_imbalance", |b| {
        b.iter(|| {
            black_box(cluster_tree(
                &samples,
                &topology,
                &mapping,
                ClusterParams {
                    attribute: "time_shuffled".into(),
                    metric: Metric::Imbalance,
                    kind: ResourceKind::L2,
                    window: 1000,
                    step: 250,
                },
                None,
            ))
        })
    });
    g.bench_function("cluster_time_w1000_d250_pu_latency", |b| {
        b.iter(|| {
            black_box(cluster_tree(
                &samples,
                &topology,
                &mapping,
                ClusterParams {
                    attribute: "time".into(),
                    metric: Metric::Latency,
                    kind: ResourceKind::Pu,
                    window: 1000,
                    step: 250,
                },
                None,
            ))
        })
    });
    // The linked selection (issue 8: every view updates within one frame for 1 M samples):
    // brushes → bitset → topology aggregate, every histogram's overlay, offenders, panel.
    let index = LinkedIndex::new(&samples, 32);
    g.bench_function("linked_index_build", |b| {
        b.iter(|| black_box(LinkedIndex::new(&samples, 32)))
    });
    let lat = index.axis("latency").unwrap_or(0);
    let z = index.axis("zidx").unwrap_or(0);
    let mut brushed = SelectionSpec::default();
    brushed.set_brush(AxisBrush {
        axis: lat,
        brush: Brush::Range { lo: 0.0, hi: 40.0 },
    });
    g.bench_function("linked_recompute_one_brush", |b| {
        b.iter(|| black_box(recompute(&samples, &mapping, &index, &brushed, 20)))
    });
    let mut two = brushed.clone();
    two.set_brush(AxisBrush {
        axis: z,
        brush: Brush::Range { lo: 3.0, hi: 20.0 },
    });
    g.bench_function("linked_recompute_two_brushes", |b| {
        b.iter(|| black_box(recompute(&samples, &mapping, &index, &two, 20)))
    });
    let picked = SelectionSpec {
        brushes: Vec::new(),
        picked: Some(Picked {
            label: "m_x".into(),
            samples: std::sync::Arc::new(select_offender(&samples, OffenderKey::Symbol, "m_x")),
            terms: None,
        }),
    };
    g.bench_function("linked_recompute_offender_click", |b| {
        b.iter(|| black_box(recompute(&samples, &mapping, &index, &picked, 20)))
    });
    g.bench_function("linked_recompute_everything", |b| {
        b.iter(|| {
            black_box(recompute(
                &samples,
                &mapping,
                &index,
                &SelectionSpec::default(),
                20,
            ))
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
