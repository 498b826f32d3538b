//! The engine's aggregations equal the native crates' on real data: the LULESH samples
//! (memscape-samples: resource totals, histograms of every attribute under a selection, top
//! offenders, window scores) and recorded traces split into Parquet partitions by host, process
//! and time window (memscape-heap: heap-size series, live heap per call site at time points).
//! The same plans run distributed on Ballista's standalone mode (loopback) give the same.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use memscape_engine::{Dataset, Engine, EngineSpec};
use memscape_heap::{GroupKey, Sizes, TraceHeap};
use memscape_parquet::samples::SamplesWriteOptions;
use memscape_parquet::trace::TraceWriteOptions;
use memscape_samples::metrics::window_scores;
use memscape_samples::{
    Bitset, Mapping, Metric, OffenderKey, RangeSpec, Samples, histogram, select_all_ranges,
    top_offenders,
};
use memscape_topology::{ResourceKind, Topology};
use memscape_trace::Trace;

fn repo() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    dir.canonicalize().unwrap_or(dir)
}

fn lulesh() -> (Samples, Topology) {
    let dir = repo().join("../shared/data/memaxes/lulesh");
    let samples =
        memscape_samples::load_samples(&dir.join("samples.out"), Default::default()).unwrap();
    let topology = Topology::from_file(&dir.join("hardware.xml")).unwrap();
    (samples, topology)
}

fn samples_dataset(samples: &Samples, dir: &Path) {
    let options = SamplesWriteOptions {
        host: String::from("rank0"),
        windows: 7,
    };
    memscape_parquet::write_samples(samples, dir, &options).unwrap();
}

fn selections() -> Vec<Vec<RangeSpec>> {
    vec![
        vec![],
        vec![RangeSpec::parse("latency=50..").unwrap()],
        vec![
            RangeSpec::parse("xidx=..10").unwrap(),
            RangeSpec::parse("cpu=2..9").unwrap(),
        ],
    ]
}

fn check_samples(engine: &Engine, ds: &Dataset, samples: &Samples, topology: &Topology) {
    let mapping = Mapping::new(samples, topology);
    for select in selections() {
        let bits: Bitset = select_all_ranges(samples, &select).unwrap();
        let label = format!("{select:?}");
        let sel = (!select.is_empty()).then_some(&bits);
        // Per-resource totals on the topology.
        let native = mapping.aggregate(samples, sel);
        let engine_agg = engine.resource_totals(ds, None, topology, &select).unwrap();
        assert_eq!(engine_agg, native, "resource totals {label}");
        assert!(native.samples.iter().any(|&s| s > 0));
        // Histograms of every attribute.
        for name in samples.column_names() {
            let native = histogram(samples, name, 24, Some(&bits)).unwrap();
            let got = engine.histogram(ds, None, name, 24, &select).unwrap();
            assert_eq!(got.unknown, native.unknown, "{name} {label}");
            assert_eq!(got.bins.len(), native.bins.len(), "{name} {label}");
            for (g, n) in got.bins.iter().zip(&native.bins) {
                assert_eq!(
                    (g.count, g.selected),
                    (n.count, n.selected),
                    "{name} {label}"
                );
                assert_eq!(g.label, n.label, "{name} {label}");
                assert_eq!((g.lo, g.hi), (n.lo, n.hi), "{name} {label}");
            }
        }
        // Top offenders by line and by symbol.
        for key in [OffenderKey::SourceLine, OffenderKey::Symbol] {
            let native = top_offenders(samples, key, sel, 15);
            let got = engine.top_offenders(ds, None, key, &select, 15).unwrap();
            assert_eq!(got, native, "{key:?} {label}");
        }
        // Window scores along two attributes, both metrics, two levels.
        for (attr, kind) in [("time", ResourceKind::L1), ("xidx", ResourceKind::Pu)] {
            for metric in [Metric::Latency, Metric::Imbalance] {
                let native =
                    window_scores(samples, topology, &mapping, attr, 12, metric, kind, sel)
                        .unwrap();
                let got = engine
                    .window_scores(ds, None, topology, attr, 12, metric, kind, &select)
                    .unwrap();
                assert_eq!(got, native, "{attr} {metric:?} {kind} {label}");
            }
        }
    }
}

#[test]
fn lulesh_samples_on_embedded_datafusion_equal_memscape_samples() {
    let (samples, topology) = lulesh();
    let dir = tempfile::tempdir().unwrap();
    samples_dataset(&samples, dir.path());
    let engine = Engine::embedded(2).unwrap();
    let ds = engine.open(dir.path()).unwrap();
    check_samples(&engine, &ds, &samples, &topology);
    // A category attribute cannot bound a range: a clear error, not a wrong answer.
    let err = engine
        .histogram(
            &ds,
            None,
            "latency",
            4,
            &[RangeSpec::parse("variable=1..2").unwrap()],
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("numeric attributes"), "{err}");
    let err = engine
        .histogram(&ds, None, "nonesuch", 4, &[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("nonesuch"), "{err}");
}

/// The LULESH samples re-encoded as a Mitos CSV (no Mitos recording is among the shared data):
/// Mitos' columns, each sample's level as the `perf_mem_data_src` Mitos writes, and every 11th
/// sample with `data_src` 2 (a load, no level bits: level unknown, as Mitos' own example runs
/// record), so the importer, the level decoding and the level-unknown route all take part.
fn mitos_from(samples: &Samples) -> Samples {
    use memscape_samples::{MemLevel, NONE};
    use std::fmt::Write as _;
    let value = |name: &str, i: usize| {
        samples
            .column(name)
            .and_then(|c| c.value(i))
            .map_or_else(|| String::from("??"), |v| format!("{}", v as u64))
    };
    let mut text = String::from(
        "source,line,instruction,bytes,ip,variable,buffer_size,dims,xidx,yidx,zidx,pid,tid,time,addr,cpu,latency,data_src\n",
    );
    for i in 0..samples.len() {
        const HIT: u64 = 0x2;
        let lvl = match samples.level[i] {
            MemLevel::L1 => HIT | 0x8,
            MemLevel::Lfb => HIT | 0x10,
            MemLevel::L2 => HIT | 0x20,
            MemLevel::L3 => HIT | 0x40,
            MemLevel::L3Miss => 0x4 | 0x40,
            MemLevel::LocalRam => HIT | 0x80,
            MemLevel::RemoteRam => HIT | 0x100,
            MemLevel::RemoteCache => HIT | 0x400,
            _ => 0,
        };
        let data_src = if i % 11 == 0 { 2 } else { 0x2 | (lvl << 5) };
        let (file, line) = match samples.source_line[i] {
            NONE => ("??", "0"),
            c => samples.source_lines[c as usize]
                .rsplit_once(':')
                .unwrap_or(("??", "0")),
        };
        let variable = match samples.symbol[i] {
            NONE => "??",
            c => &samples.symbols[c as usize],
        };
        let cpu = match samples.cpu[i] {
            NONE => String::from("??"),
            c => c.to_string(),
        };
        writeln!(
            text,
            "{file},{line},mov,8,{ip},{variable},64,3,{x},{y},{z},4242,{tid},{time},{addr},{cpu},{lat},{data_src}",
            ip = 4_198_400 + (i % 97) * 4,
            x = value("xidx", i),
            y = value("yidx", i),
            z = value("zidx", i),
            tid = 4242 + samples.cpu[i] % 8,
            time = value("time", i),
            addr = 140_000 + (i as u64 % 4096) * 8,
            lat = samples.latency[i],
        )
        .unwrap();
    }
    let mitos =
        memscape_samples::parse_samples(text.as_bytes(), "lulesh-as-mitos.csv", Default::default())
            .unwrap();
    assert_eq!(mitos.format, memscape_samples::SampleFormat::MitosCsv);
    assert_eq!(mitos.len(), samples.len());
    assert!(mitos.level.contains(&MemLevel::Unknown));
    mitos
}

#[test]
fn mitos_samples_on_embedded_datafusion_equal_memscape_samples() {
    let (lulesh, topology) = lulesh();
    let samples = mitos_from(&lulesh);
    let dir = tempfile::tempdir().unwrap();
    samples_dataset(&samples, dir.path());
    let engine = Engine::embedded(2).unwrap();
    let ds = engine.open(dir.path()).unwrap();
    check_samples(&engine, &ds, &samples, &topology);
}

fn trace_dataset(trace: &Trace, dir: &Path, host: &str) {
    let options = TraceWriteOptions {
        host: host.to_owned(),
        windows: 9,
    };
    memscape_parquet::write_trace(trace, dir, &options).unwrap();
}

/// Engine totals per raw site → the native heap tree's sizes (a site's blocks share a leaf).
fn sizes_from_sites(
    heap: &TraceHeap,
    trace: &Trace,
    totals: &[memscape_engine::trace::SiteTotal],
) -> Sizes {
    let mut leaf_of_site = std::collections::HashMap::new();
    for i in 0..trace.blocks.len() {
        leaf_of_site
            .entry(trace.blocks.site[i])
            .or_insert_with(|| heap.block_group(i).unwrap());
    }
    let mut sizes = Sizes::zeros(heap.trie().len());
    for t in totals {
        let leaf = leaf_of_site[&t.site] as usize;
        sizes.bytes[leaf] += t.bytes;
        sizes.objects[leaf] += t.blocks;
    }
    sizes.accumulate(heap.trie());
    sizes
}

fn check_trace(engine: &Engine, ds: &Dataset, host: &str, trace: &Trace, label: &str) {
    let mut heap = TraceHeap::new(trace, &[GroupKey::Path]);
    let mut points = heap.even_points(37);
    points.push(heap.peak_point());
    points.push(0);
    let native = heap.heap_series(&points);
    let got = engine.heap_series(ds, Some(host), &points).unwrap();
    assert_eq!(got, native, "{label}: heap series");
    assert!(native.iter().any(|p| p.1 > 0), "{label}");
    for &p in [heap.peak_point(), points[5], points[20], heap.events()].iter() {
        let totals = engine.live_by_site(ds, Some(host), p).unwrap();
        let got = sizes_from_sites(&heap, trace, &totals);
        let native = heap.sizes_at(p);
        assert_eq!(
            got.bytes, native.bytes,
            "{label}: bytes per heap-tree node at {p}"
        );
        assert_eq!(
            got.objects, native.objects,
            "{label}: blocks per node at {p}"
        );
    }
}

/// Every bin's occupancy, live blocks, events and waste over windows, both time axes, three
/// ways of binning, against `BinMetrics::sample`.
fn check_bins(engine: &Engine, ds: &Dataset, host: &str, trace: &Trace, label: &str) {
    use memscape_engine::bins::BinKey;
    use memscape_trace::bins::{BinBy, Bins, SizeClasses};
    use memscape_trace::metrics::{BinMetrics, TimeAxis};
    let b = &trace.blocks;
    let events = trace.event_order().len() as u64;
    let end_ns = b.free_time_ns.iter().chain(&b.alloc_time_ns).max().unwrap() + 1;
    let bounds = vec![64, 1024, 65536];
    for (key, by) in [
        (BinKey::Thread, BinBy::Thread),
        (BinKey::SizePow2, BinBy::SizeClass(SizeClasses::PowerOfTwo)),
        (
            BinKey::SizeBoundaries(bounds.clone()),
            BinBy::SizeClass(SizeClasses::Boundaries(bounds.clone())),
        ),
    ] {
        let bins = Bins::new(trace, by);
        let metrics = BinMetrics::compute(trace, &bins);
        for (axis, t0, t1) in [
            (TimeAxis::EventIndex, 0, events),
            (TimeAxis::EventIndex, events / 3, events / 2),
            (TimeAxis::WallNs, 0, end_ns),
        ] {
            let got = engine
                .bin_windows(ds, Some(host), &key, axis, t0, t1, 23)
                .unwrap();
            let what = format!("{label}: {key:?} {axis:?} {t0}..{t1}");
            if key == BinKey::SizePow2 {
                assert_eq!(got.len(), bins.bins.len(), "{what}");
            }
            assert!(got.len() > 1 || bins.bins.len() == 1, "{what}");
            let mut seen = vec![false; bins.bins.len()];
            for (i, w) in got.iter().enumerate() {
                let bin = if key == BinKey::SizePow2 {
                    i
                } else {
                    w.key as usize
                };
                seen[bin] = true;
                let n = metrics.sample(bin, axis, t0, t1, 23);
                assert_eq!(w.start, n.start, "{what} bin {bin}");
                assert_eq!(w.occupancy, n.occupancy, "{what} bin {bin}");
                assert_eq!(w.live_blocks, n.live_blocks, "{what} bin {bin}");
                assert_eq!(w.events, n.events, "{what} bin {bin}");
                assert_eq!(w.waste, n.waste, "{what} bin {bin}");
            }
            // Bins the engine does not return have no blocks.
            for (bin, _) in seen.iter().enumerate().filter(|(_, s)| !**s) {
                assert_eq!(bins.bins[bin].blocks, 0, "{what} bin {bin}");
            }
            assert!(
                got.iter().any(|w| w.occupancy.iter().any(|&o| o > 0)),
                "{what}"
            );
        }
    }
}

fn traces() -> Vec<(Trace, &'static str)> {
    vec![
        (
            memscape_trace::load(&repo().join("assets/demo/kvstore.msc")).unwrap(),
            "kvstore",
        ),
        (
            memscape_trace::load(&repo().join("../shared/data/heaptrack/sqlite_1M.raw.zst"))
                .unwrap(),
            "sqlite",
        ),
        // A pool allocator recorded by memscape: pools, waste and size classes.
        (
            memscape_trace::load(&repo().join("assets/demo/pools.msc")).unwrap(),
            "pools",
        ),
        // heaptrack's processed format from another program: no addresses, deep C++ stacks.
        (
            memscape_trace::load(&repo().join("../shared/data/heaptrack/heaptrack.david.18594.gz"))
                .unwrap(),
            "david",
        ),
    ]
}

/// The recorded traces as hosts of one dataset (each query reads its own host's
/// partitions), opened on embedded DataFusion; the directory lives as long as the result.
fn host_dataset() -> (
    tempfile::TempDir,
    Vec<(Trace, &'static str)>,
    Engine,
    Dataset,
) {
    let dir = tempfile::tempdir().unwrap();
    let traces = traces();
    for (trace, host) in &traces {
        trace_dataset(trace, dir.path(), host);
    }
    let engine = Engine::embedded(2).unwrap();
    let ds = engine.open(dir.path()).unwrap();
    (dir, traces, engine, ds)
}

#[test]
fn recorded_traces_on_embedded_datafusion_equal_memscape_heap() {
    let (_dir, traces, engine, ds) = host_dataset();
    for (trace, host) in &traces {
        check_trace(&engine, &ds, host, trace, host);
        check_bins(&engine, &ds, host, trace, host);
    }
    assert!(
        engine.heap_series(&ds, None, &[1]).is_err(),
        "several hosts: one must be named"
    );
}

#[cfg(feature = "ballista")]
#[test]
fn ballista_standalone_gives_the_same_answers() {
    let (samples, topology) = lulesh();
    let sdir = tempfile::tempdir().unwrap();
    samples_dataset(&samples, sdir.path());
    let tdir = tempfile::tempdir().unwrap();
    let (trace, host) = traces().swap_remove(0);
    trace_dataset(&trace, tdir.path(), host);

    let engine = Engine::connect(&EngineSpec::Standalone {
        executors: 2,
        slots: 1,
    })
    .unwrap();
    let ds = engine.open(sdir.path()).unwrap();
    let mapping = Mapping::new(&samples, &topology);
    let select = vec![RangeSpec::parse("latency=50..").unwrap()];
    let bits = select_all_ranges(&samples, &select).unwrap();
    assert_eq!(
        engine
            .resource_totals(&ds, None, &topology, &select)
            .unwrap(),
        mapping.aggregate(&samples, Some(&bits))
    );
    let native = histogram(&samples, "time", 16, Some(&bits)).unwrap();
    assert_eq!(
        engine.histogram(&ds, None, "time", 16, &select).unwrap(),
        native
    );
    let native = window_scores(
        &samples,
        &topology,
        &mapping,
        "time",
        8,
        Metric::Imbalance,
        ResourceKind::L1,
        Some(&bits),
    )
    .unwrap();
    let got = engine
        .window_scores(
            &ds,
            None,
            &topology,
            "time",
            8,
            Metric::Imbalance,
            ResourceKind::L1,
            &select,
        )
        .unwrap();
    assert_eq!(got, native);

    let ds = engine.open(tdir.path()).unwrap();
    let mut heap = TraceHeap::new(&trace, &[GroupKey::Path]);
    let points = heap.even_points(20);
    assert_eq!(
        engine.heap_series(&ds, None, &points).unwrap(),
        heap.heap_series(&points)
    );
    let p = heap.peak_point();
    let totals = engine.live_by_site(&ds, None, p).unwrap();
    assert_eq!(
        sizes_from_sites(&heap, &trace, &totals).bytes,
        heap.sizes_at(p).bytes
    );
}

/// A Ballista context runs nothing locally: with no scheduler listening, the query fails (and
/// says where it tried), so the standalone test's answers did come from the executors.
#[cfg(feature = "ballista")]
#[test]
fn ballista_without_a_scheduler_fails() {
    let (samples, _) = lulesh();
    let dir = tempfile::tempdir().unwrap();
    samples_dataset(&samples, dir.path());
    // Port 1 on loopback: nothing listens there.
    let spec = EngineSpec::parse("ballista://127.0.0.1:1").unwrap();
    let failed = match Engine::connect(&spec) {
        Err(e) => e.to_string(),
        Ok(engine) => match engine.open(dir.path()) {
            Err(e) => e.to_string(),
            Ok(ds) => engine
                .top_offenders(&ds, None, OffenderKey::Symbol, &[], 5)
                .map(|o| format!("answered {o:?}"))
                .unwrap_or_else(|e| format!("error: {e}")),
        },
    };
    assert!(!failed.starts_with("answered"), "{failed}");
}

#[test]
fn engine_specs_parse() {
    assert_eq!(EngineSpec::parse("embedded").unwrap(), EngineSpec::Embedded);
    assert_eq!(
        EngineSpec::parse("ballista://127.0.0.1:50050").unwrap(),
        EngineSpec::Ballista("ballista://127.0.0.1:50050".into())
    );
    assert_eq!(
        EngineSpec::parse("standalone:4").unwrap(),
        EngineSpec::Standalone {
            executors: 4,
            slots: 1
        }
    );
    assert!(EngineSpec::parse("spark://x").is_err());
}

/// The heap views' model from the engine equals the native one on recorded traces in several
/// partitions: the engine's sums equal `native_input`'s, and the timeline built from them
/// equals `trace_timeline_with`'s (trie, order, points, curve, suspects, suppressions, sizes at
/// every point), for the default grouping and a thread → path one.
fn check_timeline(engine: &Engine, ds: &Dataset, host: &str, trace: &Trace) {
    use memscape_heap::grouped::native_input;
    use memscape_heap::{HeapOptions, Metric, SizesSource, Suppressions};
    let options = HeapOptions {
        suppressions: Suppressions::builtin(),
        ..Default::default()
    };
    let skeleton = memscape_parquet::trace::read_trace_skeleton(&ds.dir, Some(host)).unwrap();
    for keys in [vec![GroupKey::Site], vec![GroupKey::Thread, GroupKey::Path]] {
        let what = format!("{host} {keys:?}");
        let got = engine
            .grouped_input(ds, host, &skeleton, &keys, 40)
            .unwrap();
        let mut native = native_input(trace, &keys, 40);
        native.never_freed.sort_by_key(|t| t.group);
        assert_eq!(got.groups, native.groups, "{what}: groups");
        assert_eq!(got.series, native.series, "{what}: curve");
        assert_eq!(got.points, native.points, "{what}: points");
        assert_eq!(got.never_freed, native.never_freed, "{what}");
        assert_eq!(got.site_bytes, native.site_bytes, "{what}");
        assert_eq!(got.peak_events, native.peak_events, "{what}");

        let (timeline, mut sizes) = engine
            .heap_timeline(ds, Some(host), &keys, Metric::Bytes, 40, &options)
            .unwrap();
        let (want, mut want_sizes) =
            memscape_heap::trace_timeline_with(trace, &keys, Metric::Bytes, 40, &options);
        assert_eq!(timeline.trie.len(), want.trie.len(), "{what}");
        for n in 0..want.trie.len() as u32 {
            assert_eq!(timeline.trie.name(n), want.trie.name(n), "{what}: node {n}");
            assert_eq!(timeline.trie.parent(n), want.trie.parent(n), "{what}: {n}");
        }
        assert_eq!(timeline.order, want.order, "{what}: order");
        assert_eq!(timeline.points, want.points, "{what}: points");
        assert_eq!(timeline.series, want.series, "{what}: curve");
        assert_eq!(timeline.suppressed, want.suppressed, "{what}: suppressed");
        assert_eq!(timeline.peak_point, want.peak_point, "{what}");
        let suspects = |t: &memscape_heap::HeapTimeline| -> Vec<(String, u64)> {
            t.suspects
                .iter()
                .map(|s| (s.name.clone(), s.end_bytes))
                .collect()
        };
        assert_eq!(suspects(&timeline), suspects(&want), "{what}: suspects");
        for p in 0..want.points.len() {
            assert_eq!(
                sizes.sizes_at_point(p),
                want_sizes.sizes_at_point(p),
                "{what}: sizes at point {p}"
            );
        }
        assert!(want.points.iter().any(|p| p.total_bytes > 0), "{what}");
        assert!(want.trie.len() > 3, "{what}");
    }
}

#[test]
fn heap_timeline_from_the_engine_equals_the_native_one() {
    let (_dir, traces, engine, ds) = host_dataset();
    for (trace, host) in &traces {
        check_timeline(&engine, &ds, host, trace);
    }
}

/// The selections the GUI's samples panes build — a brush on a qualitative axis (values of
/// `cpu`), ranges, offender bars picked alone, or'd (shift) and and'ed (ctrl) — stated to the
/// engine as a `Selection` give every linked view's numbers of `memscape_samples::recompute`:
/// per-resource totals, each axis' marked bins, the top offenders and the selection panel.
#[test]
fn gui_selections_on_the_engine_equal_the_linked_recompute() {
    use memscape_engine::samples::Selection;
    use memscape_samples::metrics::cluster_tree;
    use memscape_samples::{
        AxisBrush, Brush, ClusterParams, LinkedIndex, Picked, SelectionSpec, recompute,
    };
    let (samples, topology) = lulesh();
    let dir = tempfile::tempdir().unwrap();
    samples_dataset(&samples, dir.path());
    let engine = Engine::embedded(2).unwrap();
    let ds = engine.open(dir.path()).unwrap();
    let mapping = Mapping::new(&samples, &topology);
    let index = LinkedIndex::new(&samples, 32);
    let cpu = index.axis("cpu").unwrap();
    let lat = index.axis("latency").unwrap();
    let line = |k: usize| samples.source_lines[k].clone();
    let symbol = |k: usize| samples.symbols[k].clone();
    let pick = |key, name: String| Picked::offender(&samples, key, &name, name.clone());
    let mut specs: Vec<SelectionSpec> = Vec::new();
    let mut spec = SelectionSpec::default();
    spec.set_brush(AxisBrush {
        axis: cpu,
        brush: Brush::Bins(vec![0, 2, 3]),
    });
    spec.set_brush(AxisBrush {
        axis: lat,
        brush: Brush::Range {
            lo: 20.0,
            hi: 400.0,
        },
    });
    specs.push(spec);
    let alone = pick(OffenderKey::SourceLine, line(1));
    specs.push(SelectionSpec {
        brushes: Vec::new(),
        picked: Some(alone.clone()),
    });
    let or = alone.or(&pick(OffenderKey::Symbol, symbol(0)), String::from("or"));
    let mut spec = SelectionSpec {
        brushes: Vec::new(),
        picked: Some(or.clone()),
    };
    spec.set_brush(AxisBrush {
        axis: lat,
        brush: Brush::Range { lo: 0.0, hi: 90.0 },
    });
    specs.push(spec);
    // And'ed with the symbol of a sample on that line: not empty.
    let on_line = (0..samples.len())
        .find(|&i| {
            samples.source_line[i] == 1 && (samples.symbol[i] as usize) < samples.symbols.len()
        })
        .unwrap();
    let and = or.and(
        &pick(
            OffenderKey::Symbol,
            symbol(samples.symbol[on_line] as usize),
        ),
        String::from("and"),
    );
    specs.push(SelectionSpec {
        brushes: Vec::new(),
        picked: Some(and),
    });
    // A cluster marker clicked (its span stated), shift-clicked with an offender bar, and
    // under a brush.
    let params = ClusterParams {
        attribute: String::from("time"),
        metric: Metric::Imbalance,
        kind: ResourceKind::L2,
        window: 1000,
        step: 250,
    };
    let tree = cluster_tree(&samples, &topology, &mapping, params, None).unwrap();
    let cut = tree.cut(6);
    let cluster =
        |k: usize| Picked::cluster(&samples, &tree, cut[k], format!("cluster {k}")).unwrap();
    specs.push(SelectionSpec {
        brushes: Vec::new(),
        picked: Some(cluster(2)),
    });
    let mut spec = SelectionSpec {
        brushes: Vec::new(),
        picked: Some(cluster(0).or(&pick(OffenderKey::SourceLine, line(1)), String::from("or"))),
    };
    spec.set_brush(AxisBrush {
        axis: lat,
        brush: Brush::Range { lo: 0.0, hi: 90.0 },
    });
    specs.push(spec);
    for spec in &specs {
        let native = recompute(&samples, &mapping, &index, spec, 20);
        assert!(
            native.summary.samples > 0 && !native.everything,
            "{spec:?} selects something"
        );
        // The spec as the GUI states it to the engine (`app/engine_samples_query.rs`).
        let mut selection = Selection::default();
        for brush in &spec.brushes {
            let axis = &index.axes[brush.axis];
            match &brush.brush {
                Brush::Range { lo, hi } => selection.ranges.push(RangeSpec {
                    attribute: axis.attribute.clone(),
                    lo: Some(*lo),
                    hi: Some(*hi),
                }),
                Brush::Bins(bins) => selection.values.push((
                    axis.attribute.clone(),
                    bins.iter()
                        .map(|&b| axis.bins[b as usize].label.clone().unwrap())
                        .collect(),
                )),
            }
        }
        selection.picked = spec.picked.as_ref().map(|p| p.terms.clone().unwrap());
        let label = format!("{spec:?}");
        assert_eq!(
            engine
                .resource_totals_where(&ds, None, &topology, &selection)
                .unwrap(),
            native.aggregate,
            "{label}"
        );
        assert_eq!(
            engine.selection_summary(&ds, None, &selection).unwrap(),
            native.summary,
            "{label}"
        );
        for (a, axis) in index.axes.iter().enumerate() {
            let h = engine
                .histogram_where(&ds, None, &axis.attribute, 32, &selection)
                .unwrap();
            let marked: Vec<u64> = h.bins.iter().map(|b| b.selected).collect();
            assert_eq!(
                marked, native.selected_bins[a],
                "{label}: {}",
                axis.attribute
            );
        }
        assert_eq!(
            engine
                .top_offenders_where(&ds, None, OffenderKey::SourceLine, &selection, 20)
                .unwrap(),
            native.top_lines,
            "{label}"
        );
        assert_eq!(
            engine
                .top_offenders_where(&ds, None, OffenderKey::Symbol, &selection, 20)
                .unwrap(),
            native.top_symbols,
            "{label}"
        );
    }
}

/// The cluster trees the GUI and `render DATASET/` draw from the engine equal memscape-samples'
/// own on the LULESH samples and on them as a Mitos CSV: every node (windows, positions, value
/// ranges, first and last rows, scores, merge distances) along attributes with few and many
/// ties, windows on and off each other's grid, an aligned last window; each cluster's glyph
/// (per-resource totals from the engine's segment totals) and the samples its span picks.
#[test]
fn cluster_trees_from_the_engine_equal_memscape_samples() {
    use memscape_samples::ClusterParams;
    use memscape_samples::clustering::select_span;
    use memscape_samples::metrics::cluster_tree;
    let (lulesh, topology) = lulesh();
    let mitos = mitos_from(&lulesh);
    for (samples, what) in [(&lulesh, "LULESH"), (&mitos, "Mitos")] {
        let dir = tempfile::tempdir().unwrap();
        samples_dataset(samples, dir.path());
        let engine = Engine::embedded(2).unwrap();
        let ds = engine.open(dir.path()).unwrap();
        let mapping = Mapping::new(samples, &topology);
        for (attribute, metric, kind, window, step) in [
            ("time", Metric::Imbalance, ResourceKind::L2, 1000, 250),
            ("latency", Metric::Latency, ResourceKind::L1, 500, 500),
            ("xidx", Metric::Imbalance, ResourceKind::Pu, 300, 70),
            ("time", Metric::Latency, ResourceKind::L3, 64, 48),
        ] {
            let params = ClusterParams {
                attribute: attribute.to_owned(),
                metric,
                kind,
                window,
                step,
            };
            let label = format!("{what} {params:?}");
            let native = cluster_tree(samples, &topology, &mapping, params.clone(), None).unwrap();
            let got = engine.cluster_tree(&ds, None, &topology, params).unwrap();
            assert!(native.leaves > 10, "{label}: {} windows", native.leaves);
            assert_eq!(got.leaves, native.leaves, "{label}");
            assert_eq!(got.nodes, native.nodes, "{label}");
            for clusters in [1, 7] {
                for node in native.cut(clusters) {
                    let range = node.positions[0] as usize..node.positions[1] as usize;
                    let want = mapping.aggregate_order(samples, &native.order, range);
                    assert_eq!(got.aggregate(node, &topology), Some(want), "{label}: glyph");
                    let picked = select_span(samples, &got.span(node)).unwrap();
                    assert_eq!(
                        picked,
                        native.selection(node, samples.len()),
                        "{label}: pick"
                    );
                }
            }
        }
        // Bad parameters and text attributes are errors, not trees.
        let bad = ClusterParams {
            attribute: String::from("time"),
            metric: Metric::Latency,
            kind: ResourceKind::L2,
            window: 10,
            step: 20,
        };
        assert!(engine.cluster_tree(&ds, None, &topology, bad).is_err());
    }
}

/// Past the engine's budget of (segment, route key) totals (lowered to 100 here; 4 Mi by
/// default, crossed at 25 M samples in windows of 1000) the cluster tree is the same, node for
/// node, but keeps no totals (`keyed` None); each cluster's glyph is then a query of its span
/// (`Engine::cluster_aggregate`), equal to the samples' sum — and, under the budget, to the
/// tree's own totals — on the LULESH samples and on them as a Mitos CSV.
#[test]
fn cluster_glyphs_past_the_keyed_budget_are_queries_equal_to_the_samples() {
    use memscape_samples::ClusterParams;
    use memscape_samples::metrics::cluster_tree;
    let (lulesh, topology) = lulesh();
    let mitos = mitos_from(&lulesh);
    for (samples, what) in [(&lulesh, "LULESH"), (&mitos, "Mitos")] {
        let dir = tempfile::tempdir().unwrap();
        samples_dataset(samples, dir.path());
        let within = Engine::embedded(2).unwrap();
        let past = Engine::embedded(2).unwrap().with_keyed_entries_max(100);
        assert_eq!(past.keyed_entries_max(), 100);
        let (ds_within, ds_past) = (
            within.open(dir.path()).unwrap(),
            past.open(dir.path()).unwrap(),
        );
        let mapping = Mapping::new(samples, &topology);
        let params = ClusterParams {
            attribute: String::from("time"),
            metric: Metric::Imbalance,
            kind: ResourceKind::L2,
            window: 1000,
            step: 250,
        };
        let label = format!("{what} {params:?}");
        let native = cluster_tree(samples, &topology, &mapping, params.clone(), None).unwrap();
        let kept = within
            .cluster_tree(&ds_within, None, &topology, params.clone())
            .unwrap();
        let got = past
            .cluster_tree(&ds_past, None, &topology, params)
            .unwrap();
        assert!(kept.keyed.is_some(), "{label}: under the budget");
        assert!(got.keyed.is_none(), "{label}: past a budget of 100");
        assert_eq!(got.nodes, native.nodes, "{label}");
        for clusters in [1, 6] {
            for node in native.cut(clusters) {
                let range = node.positions[0] as usize..node.positions[1] as usize;
                let want = mapping.aggregate_order(samples, &native.order, range);
                assert!(want.samples.iter().any(|&n| n > 0), "{label}: empty");
                assert_eq!(got.aggregate(node, &topology), None, "{label}");
                let queried = past
                    .cluster_aggregate(&ds_past, None, &topology, &got.span(node))
                    .unwrap();
                assert_eq!(queried, want, "{label}: queried glyph");
                assert_eq!(kept.aggregate(node, &topology), Some(queried), "{label}");
            }
        }
    }
}
