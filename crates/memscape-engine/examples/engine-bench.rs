//! The engine against the native crates on one machine, one path per process (so that
//! `/usr/bin/time -v` gives each its own peak RSS), on datasets it writes once:
//!
//! ```text
//! engine-bench write-trace EVENTS DIR     # memscape-heap's synthetic trace, 16 time windows
//!                                         # (streamed: memory does not grow with EVENTS)
//! engine-bench write-samples COPIES DIR   # the LULESH samples COPIES times over (shifted in time)
//! engine-bench native DIR                 # read the dataset (memscape-parquet), then the crates
//! engine-bench engine DIR [SPEC] [--phases heap,bins,lod,map]
//!                                         # the same aggregations on DataFusion (or SPEC:
//!                                         # ballista://HOST:PORT, standalone:N); a trace's
//!                                         # measurements all, or those listed
//! ```
//!
//! Traces: the heap-size series at 100 points, the live heap per call site at the peak, the
//! power-of-two size classes over 100 windows, and the level-of-detail tiles of the square line
//! of levels (anisotropy 0: memscape-lod's builder with `lines = [0]` natively, every level of
//! that line on the engine). Samples: histograms of every attribute (32
//! bins), top source lines and symbols, resource totals and 32 latency window scores along
//! `time` on the LULESH machine, with no selection and with `latency=50..`. Each line printed is
//! `phase seconds`; the last `total`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Instant;

use memscape_engine::bins::BinKey;
use memscape_engine::{Engine, EngineSpec};
use memscape_heap::{GroupKey, TraceHeap};
use memscape_parquet::DatasetKind;
use memscape_samples::metrics::window_scores;
use memscape_samples::{
    Mapping, Metric, OffenderKey, RangeSpec, histogram, select_all_ranges, top_offenders,
};
use memscape_topology::{ResourceKind, Topology};
use memscape_trace::bins::{BinBy, Bins, SizeClasses};
use memscape_trace::metrics::{BinMetrics, TimeAxis};

const POINTS: usize = 100;

/// Which of a trace's measurements `engine` runs (each alone gives its own peak RSS).
struct Phases {
    heap: bool,
    bins: bool,
    lod: bool,
    map: bool,
}

impl Phases {
    fn all() -> Self {
        Self::parse("heap,bins,lod,map")
    }

    fn parse(list: &str) -> Self {
        let names: Vec<&str> = list.split(',').collect();
        for name in &names {
            assert!(
                ["heap", "bins", "lod", "map"].contains(name),
                "unknown phase {name:?}"
            );
        }
        Self {
            heap: names.contains(&"heap"),
            bins: names.contains(&"bins"),
            lod: names.contains(&"lod"),
            map: names.contains(&"map"),
        }
    }
}

fn lulesh_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/memaxes/lulesh")
}

fn phase(name: &str, since: &mut Instant) {
    println!("{name} {:.2}", since.elapsed().as_secs_f64());
    *since = Instant::now();
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let start = Instant::now();
    match args.first().map(String::as_str) {
        Some("write-trace") => {
            let events: u64 = args[1].parse().expect("EVENTS");
            let options = memscape_parquet::trace::TraceWriteOptions {
                host: String::from("bench"),
                windows: 16,
            };
            // Streamed: the trace is never whole in memory (1 B events would be ≈ 43 GB).
            let written = memscape_parquet::trace_stream::write_synthetic_trace(
                events,
                Path::new(&args[2]),
                &options,
            )
            .unwrap();
            println!(
                "blocks {} events {} files {} held at most {} block rows {} event rows",
                written.summary.rows,
                written.summary.events,
                written.summary.files,
                written.most_held.0,
                written.most_held.1
            );
        }
        Some("write-samples") => write_samples(args[1].parse().expect("COPIES"), &args[2]),
        Some("native") => native(Path::new(&args[1])),
        Some("engine") => {
            // engine DIR [SPEC] [--phases heap,bins,lod,map]
            let mut spec = EngineSpec::Embedded;
            let mut phases = Phases::all();
            let mut rest = args[2..].iter();
            while let Some(arg) = rest.next() {
                if arg == "--phases" {
                    phases = Phases::parse(rest.next().expect("--phases LIST"));
                } else {
                    spec = EngineSpec::parse(arg).unwrap();
                }
            }
            engine(Path::new(&args[1]), &spec, &phases);
        }
        _ => {
            eprintln!("usage: see the comment at the top of examples/engine-bench.rs");
            std::process::exit(2);
        }
    }
    println!("total {:.2}", start.elapsed().as_secs_f64());
}

/// The LULESH MemAxes samples repeated `copies` times, each copy's `time` shifted past the
/// last and its rows numbered after the last's: the first copy written by memscape-parquet (one
/// time window), each further one as its own window, streaming (one copy in memory at a time,
/// so that 100 M samples fit on disk without holding them).
fn write_samples(copies: u64, dir: &str) {
    use arrow_array::cast::AsArray;
    use arrow_array::types::UInt64Type;
    use arrow_array::{ArrayRef, RecordBatch, UInt64Array};
    let samples =
        memscape_samples::load_samples(&lulesh_dir().join("samples.out"), Default::default())
            .unwrap();
    let n = samples.len() as u64;
    let span = samples
        .column("time")
        .and_then(|c| {
            (0..samples.len())
                .filter_map(|i| c.value(i))
                .reduce(f64::max)
        })
        .unwrap_or(0.0) as u64
        + 1;
    let dir = Path::new(dir);
    let options = memscape_parquet::samples::SamplesWriteOptions {
        host: String::from("bench"),
        windows: 1,
    };
    memscape_parquet::write_samples(&samples, dir, &options).unwrap();
    drop(samples);
    let first = memscape_parquet::partition_files(dir, "samples", Some("bench")).unwrap();
    let batches: Vec<RecordBatch> = first
        .iter()
        .flat_map(|f| memscape_parquet::schema::read_file(&f.path).unwrap())
        .collect();
    // Copies 1.. in files of 64 copies each (one time window per file).
    use datafusion::parquet::arrow::ArrowWriter;
    use datafusion::parquet::basic::{Compression, ZstdLevel};
    use datafusion::parquet::file::properties::WriterProperties;
    const PER_FILE: u64 = 64;
    let mut c = 1;
    while c < copies {
        let path = memscape_parquet::partition_dir(dir, "samples", "bench", None, Some(c))
            .join("part-0.parquet");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .build();
        let mut writer = ArrowWriter::try_new(
            std::fs::File::create(&path).unwrap(),
            batches[0].schema(),
            Some(props),
        )
        .unwrap();
        for copy in c..(c + PER_FILE).min(copies) {
            for batch in &batches {
                let shift = |name: &str, by: u64| -> ArrayRef {
                    let a = batch
                        .column_by_name(name)
                        .unwrap()
                        .as_primitive::<UInt64Type>();
                    std::sync::Arc::new(
                        a.iter().map(|v| v.map(|x| x + by)).collect::<UInt64Array>(),
                    )
                };
                let schema = batch.schema();
                let columns: Vec<ArrayRef> = schema
                    .fields()
                    .iter()
                    .zip(batch.columns())
                    .map(|(f, col)| match f.name().as_str() {
                        "ms_row" => shift("ms_row", copy * n),
                        "time" => shift("time", copy * span),
                        _ => col.clone(),
                    })
                    .collect();
                writer
                    .write(&RecordBatch::try_new(schema.clone(), columns).unwrap())
                    .unwrap();
            }
        }
        writer.close().unwrap();
        c += PER_FILE;
    }
    // The manifest counts every copy's rows (memscape-parquet writes it for the first).
    let path = dir.join(memscape_parquet::MANIFEST);
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    manifest["hosts"]["bench"]["rows"] = serde_json::json!(n * copies);
    std::fs::write(&path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
    println!("samples {}", n * copies);
}

/// One line of levels (anisotropy 0), the default cell budget.
fn lod_params() -> memscape_lod::BuildParams {
    memscape_lod::BuildParams {
        lines: vec![0],
        ..Default::default()
    }
}

/// memscape-lod's builder over the trace's blocks (thread colouring), into a scratch file;
/// returns the cells of its levels.
fn native_lod(trace: memscape_trace::Trace) -> usize {
    use memscape_lod::sidecar::{Coloring, build_columns};
    use memscape_lod::trace_source::TraceFile;
    let file = TraceFile::from_trace(trace);
    let cols = file.columns();
    let source = memscape_lod::SourceId {
        events: file.trace.meta.events,
        blocks: cols.len() as u64,
        ..Default::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bench.lod");
    let color =
        |thread: u32, _: u32, _: u64, _: u64| (memscape_lod::source::palette_color(thread), 0.0f32);
    build_columns(
        &cols,
        source,
        &out,
        Coloring {
            name: "thread",
            color: &color,
        },
        &lod_params(),
        &mut |_, _| {},
        &std::sync::atomic::AtomicBool::new(false),
    )
    .unwrap();
    let index = memscape_lod::LodIndex::open(&out).unwrap();
    index.levels.iter().map(|l| l.cells.len()).sum()
}

fn kind(dir: &Path) -> DatasetKind {
    memscape_parquet::dataset_kind(dir).expect("a memscape Parquet dataset")
}

fn selections() -> [Vec<RangeSpec>; 2] {
    [vec![], vec![RangeSpec::parse("latency=50..").unwrap()]]
}

fn native(dir: &Path) {
    let mut t = Instant::now();
    match kind(dir) {
        DatasetKind::Trace => {
            let trace = memscape_parquet::read_trace(dir, None).unwrap();
            phase("read", &mut t);
            let mut heap = TraceHeap::new(&trace, &[GroupKey::Path]);
            let points = heap.even_points(POINTS);
            let series = heap.heap_series(&points);
            let peak = heap.peak_point();
            let sizes = heap.sizes_at(peak);
            phase("heap", &mut t);
            let bins = Bins::new(&trace, BinBy::SizeClass(SizeClasses::PowerOfTwo));
            let metrics = BinMetrics::compute(&trace, &bins);
            let events = trace.event_order().len() as u64;
            let windows: Vec<_> = (0..bins.bins.len())
                .map(|b| metrics.sample(b, TimeAxis::EventIndex, 0, events, POINTS))
                .collect();
            phase("bins", &mut t);
            let cells = native_lod(trace);
            phase("lod", &mut t);
            println!(
                "check {} {} {} {cells}",
                series.iter().map(|p| p.1).max().unwrap_or(0),
                sizes.bytes.first().copied().unwrap_or(0),
                windows.len()
            );
        }
        DatasetKind::Samples => {
            let samples = memscape_parquet::read_samples(dir, None).unwrap();
            phase("read", &mut t);
            let topology = Topology::from_file(&lulesh_dir().join("hardware.xml")).unwrap();
            let mapping = Mapping::new(&samples, &topology);
            phase("map", &mut t);
            let mut check = 0u64;
            for select in selections() {
                let bits = select_all_ranges(&samples, &select).unwrap();
                let sel = (!select.is_empty()).then_some(&bits);
                for name in samples.column_names() {
                    let h = histogram(&samples, name, 32, sel).unwrap();
                    check += h.bins.iter().map(|b| b.selected).sum::<u64>();
                }
                for key in [OffenderKey::SourceLine, OffenderKey::Symbol] {
                    check += top_offenders(&samples, key, sel, 20).len() as u64;
                }
                check += mapping.aggregate(&samples, sel).samples[0];
                let w = window_scores(
                    &samples,
                    &topology,
                    &mapping,
                    "time",
                    32,
                    Metric::Latency,
                    ResourceKind::L1,
                    sel,
                )
                .unwrap();
                check += w.len() as u64;
            }
            phase("queries", &mut t);
            println!("check {check}");
        }
    }
}

fn engine(dir: &Path, spec: &EngineSpec, phases: &Phases) {
    let mut t = Instant::now();
    let engine = Engine::connect(spec).unwrap();
    let ds = engine.open(dir).unwrap();
    phase("open", &mut t);
    match ds.manifest.kind {
        DatasetKind::Trace => {
            let events = engine.event_count(&ds, None).unwrap();
            // Each check printed as "-" when its phase did not run.
            let mut checks = vec![String::from("-"); 6];
            if phases.heap {
                let points: Vec<u64> = (1..=POINTS as u64)
                    .map(|i| events * i / POINTS as u64)
                    .collect();
                let series = engine.heap_series(&ds, None, &points).unwrap();
                let peak = series.iter().max_by_key(|p| p.1).map_or(events, |p| p.0);
                let sites = engine.live_by_site(&ds, None, peak).unwrap();
                checks[0] = series.iter().map(|p| p.1).max().unwrap_or(0).to_string();
                checks[1] = sites.iter().map(|s| s.bytes).sum::<u64>().to_string();
                phase("heap", &mut t);
            }
            if phases.bins {
                let windows = engine
                    .bin_windows(
                        &ds,
                        None,
                        &BinKey::SizePow2,
                        TimeAxis::EventIndex,
                        0,
                        events,
                        POINTS,
                    )
                    .unwrap();
                checks[2] = windows.len().to_string();
                phase("bins", &mut t);
            }
            if phases.lod {
                let plan = engine.lod_plan(&ds, None, &lod_params()).unwrap();
                let mut cells = 0;
                for level in &plan.levels {
                    cells += engine
                        .lod_level(&ds, None, &plan, level)
                        .unwrap()
                        .cells
                        .len();
                }
                checks[3] = cells.to_string();
                phase("lod", &mut t);
            }
            if phases.map {
                // What `memscape render DATASET/ --view alloc` computes for a whole 1280×720
                // view: the default layout, the one level the view is drawn from, the size
                // classes.
                let plan = engine
                    .lod_plan(&ds, None, &memscape_lod::BuildParams::default())
                    .unwrap();
                let view =
                    memscape_lod::LodView::fit(0, plan.extent_t, 0, plan.axis.extent, 1280, 720);
                let level = memscape_engine::lod_index::lod_level_for(&plan, view.pixel_size());
                let which: Vec<usize> = level.into_iter().collect();
                let scratch = tempfile::tempdir().unwrap();
                let meta = engine
                    .lod_index(
                        &ds,
                        None,
                        &plan,
                        Some(which.as_slice()),
                        memscape_lod::SourceId::default(),
                        &scratch.path().join("map.lod"),
                    )
                    .unwrap();
                checks[4] = format!(
                    "{:?}",
                    level.map(|k| (plan.levels[k].log_tau, plan.levels[k].log_sig))
                );
                checks[5] = meta.classes.len().to_string();
                phase("map", &mut t);
            }
            println!(
                "check {} {} {} {} map-level {} classes {}",
                checks[0], checks[1], checks[2], checks[3], checks[4], checks[5]
            );
        }
        DatasetKind::Samples => {
            let topology = Topology::from_file(&lulesh_dir().join("hardware.xml")).unwrap();
            let meta = memscape_parquet::samples::samples_meta(
                &ds.dir,
                &ds.manifest,
                &ds.host(None).unwrap(),
            )
            .unwrap();
            let mut check = 0u64;
            for select in selections() {
                for a in &meta.attributes {
                    let h = engine.histogram(&ds, None, &a.name, 32, &select).unwrap();
                    check += h.bins.iter().map(|b| b.selected).sum::<u64>();
                }
                for key in [OffenderKey::SourceLine, OffenderKey::Symbol] {
                    check += engine
                        .top_offenders(&ds, None, key, &select, 20)
                        .unwrap()
                        .len() as u64;
                }
                check += engine
                    .resource_totals(&ds, None, &topology, &select)
                    .unwrap()
                    .samples[0];
                let w = engine
                    .window_scores(
                        &ds,
                        None,
                        &topology,
                        "time",
                        32,
                        Metric::Latency,
                        ResourceKind::L1,
                        &select,
                    )
                    .unwrap();
                check += w.len() as u64;
            }
            phase("queries", &mut t);
            println!("check {check}");
        }
    }
}
