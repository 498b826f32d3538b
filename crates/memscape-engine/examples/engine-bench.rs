//! The engine against the native crates on one machine, one path per process (so that
//! `/usr/bin/time -v` gives each its own peak RSS), on datasets it writes once:
//!
//! ```text
//! engine-bench write-trace EVENTS DIR     # memscape-heap's synthetic trace, 16 time windows
//!                                         # (streamed: memory does not grow with EVENTS)
//! engine-bench write-samples COPIES DIR   # the LULESH samples COPIES times over (shifted in time)
//! engine-bench native DIR                 # read the dataset (memscape-parquet), then the crates
//! engine-bench engine DIR [SPEC] [--phases heap,bins,lod,map,map-level]
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
//! `phase seconds`; the last `total`. `map-level` is the map's level alone (what bounds the map's
//! memory at 1 B events: BENCHMARKS.md, wave 31). With `RUST_LOG` set (e.g.
//! `memscape_engine=debug`), the engine's stages are logged to stderr.
use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
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

/// What the command line takes, printed with every argument error.
const USAGE: &str = "usage: engine-bench write-trace EVENTS DIR
       engine-bench write-samples COPIES DIR
       engine-bench native DIR
       engine-bench engine DIR [SPEC] [--phases LIST]
  EVENTS, COPIES: whole numbers; DIR: a memscape Parquet dataset (written by write-*);
  SPEC: embedded, ballista://HOST:PORT or standalone[:N];
  LIST: a comma-separated list of heap, bins, lod, map, map-level (a trace's measurements
        to run; map-level: the map's level alone)";

type BenchResult<T> = Result<T, Box<dyn Error>>;

/// Which of a trace's measurements `engine` runs (each alone gives its own peak RSS).
#[derive(Debug, PartialEq)]
struct Phases {
    heap: bool,
    bins: bool,
    lod: bool,
    map: bool,
    /// The map's level alone, without its size classes and file.
    map_level: bool,
}

/// The phases `--phases` names, in the order they run.
const PHASE_NAMES: [&str; 5] = ["heap", "bins", "lod", "map", "map-level"];

impl Phases {
    fn all() -> Self {
        Self {
            heap: true,
            bins: true,
            lod: true,
            map: true,
            map_level: false,
        }
    }

    /// `heap,bins,lod,map,map-level` or any non-empty part of it; an empty or unknown name is an error
    /// that says what is expected.
    fn parse(list: &str) -> Result<Self, String> {
        let names: Vec<&str> = list.split(',').map(str::trim).collect();
        if let Some(bad) = names.iter().find(|name| !PHASE_NAMES.contains(*name)) {
            return Err(format!(
                "--phases {list:?}: unknown phase {bad:?}; expected a comma-separated list of \
                 heap, bins, lod, map, map-level"
            ));
        }
        Ok(Self {
            heap: names.contains(&"heap"),
            bins: names.contains(&"bins"),
            lod: names.contains(&"lod"),
            map: names.contains(&"map"),
            map_level: names.contains(&"map-level"),
        })
    }
}

/// A parsed command line: what to run, or why the arguments say nothing runnable.
#[derive(Debug, PartialEq)]
enum Command {
    WriteTrace {
        events: u64,
        dir: PathBuf,
    },
    WriteSamples {
        copies: u64,
        dir: PathBuf,
    },
    Native {
        dir: PathBuf,
    },
    Engine {
        dir: PathBuf,
        spec: EngineSpec,
        phases: Phases,
    },
}

impl Command {
    fn parse(args: &[String]) -> Result<Self, String> {
        let Some((command, rest)) = args.split_first() else {
            return Err(String::from("no command given"));
        };
        let count = |name: &str, text: &str| -> Result<u64, String> {
            text.parse()
                .map_err(|e| format!("{name} {text:?}: expected a whole number ({e})"))
        };
        match (command.as_str(), rest) {
            ("write-trace", [events, dir]) => Ok(Command::WriteTrace {
                events: count("EVENTS", events)?,
                dir: PathBuf::from(dir),
            }),
            ("write-samples", [copies, dir]) => Ok(Command::WriteSamples {
                copies: count("COPIES", copies)?,
                dir: PathBuf::from(dir),
            }),
            ("native", [dir]) => Ok(Command::Native {
                dir: PathBuf::from(dir),
            }),
            ("engine", [dir, options @ ..]) => {
                let mut spec = None;
                let mut phases = None;
                let mut options = options.iter();
                while let Some(option) = options.next() {
                    if option == "--phases" {
                        let list = options
                            .next()
                            .ok_or("--phases: expected a list after it (heap,bins,lod,map)")?;
                        if phases.replace(Phases::parse(list)?).is_some() {
                            return Err(String::from("--phases given twice"));
                        }
                    } else if option.starts_with("--") {
                        return Err(format!("unknown option {option:?}"));
                    } else if spec
                        .replace(EngineSpec::parse(option).map_err(|e| e.to_string())?)
                        .is_some()
                    {
                        return Err(format!("{option:?}: SPEC given twice"));
                    }
                }
                Ok(Command::Engine {
                    dir: PathBuf::from(dir),
                    spec: spec.unwrap_or(EngineSpec::Embedded),
                    phases: phases.unwrap_or_else(Phases::all),
                })
            }
            ("write-trace" | "write-samples" | "native" | "engine", _) => Err(format!(
                "{command}: wrong number of arguments ({} given)",
                rest.len()
            )),
            _ => Err(format!("unknown command {command:?}")),
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

fn main() -> ExitCode {
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .init();
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let command = match Command::parse(&args) {
        Ok(command) => command,
        Err(why) => {
            eprintln!("engine-bench: {why}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let start = Instant::now();
    let ran = match &command {
        Command::WriteTrace { events, dir } => write_trace(*events, dir),
        Command::WriteSamples { copies, dir } => write_samples(*copies, dir),
        Command::Native { dir } => native(dir),
        Command::Engine { dir, spec, phases } => engine(dir, spec, phases),
    };
    match ran {
        Ok(()) => {
            println!("total {:.2}", start.elapsed().as_secs_f64());
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("engine-bench: {why}");
            ExitCode::FAILURE
        }
    }
}

/// memscape-heap's synthetic trace, streamed: the trace is never whole in memory (1 B events
/// would be ≈ 43 GB).
fn write_trace(events: u64, dir: &Path) -> BenchResult<()> {
    let options = memscape_parquet::trace::TraceWriteOptions {
        host: String::from("bench"),
        windows: 16,
    };
    let written = memscape_parquet::trace_stream::write_synthetic_trace(events, dir, &options)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    println!(
        "blocks {} events {} files {} held at most {} block rows {} event rows",
        written.summary.rows,
        written.summary.events,
        written.summary.files,
        written.most_held.0,
        written.most_held.1
    );
    Ok(())
}

/// The LULESH MemAxes samples repeated `copies` times, each copy's `time` shifted past the
/// last and its rows numbered after the last's: the first copy written by memscape-parquet (one
/// time window), each further one as its own window, streaming (one copy in memory at a time,
/// so that 100 M samples fit on disk without holding them).
fn write_samples(copies: u64, dir: &Path) -> BenchResult<()> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::UInt64Type;
    use arrow_array::{ArrayRef, RecordBatch, UInt64Array};
    let lulesh = lulesh_dir().join("samples.out");
    let samples = memscape_samples::load_samples(&lulesh, Default::default())
        .map_err(|e| format!("{}: {e}", lulesh.display()))?;
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
    let options = memscape_parquet::samples::SamplesWriteOptions {
        host: String::from("bench"),
        windows: 1,
    };
    memscape_parquet::write_samples(&samples, dir, &options)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    drop(samples);
    let mut batches: Vec<RecordBatch> = Vec::new();
    for file in memscape_parquet::partition_files(dir, "samples", Some("bench"))? {
        batches.extend(memscape_parquet::schema::read_file(&file.path)?);
    }
    let Some(schema) = batches.first().map(RecordBatch::schema) else {
        return Err(format!("{}: the first copy wrote no samples", dir.display()).into());
    };
    // Copies 1.. in files of 64 copies each (one time window per file).
    use datafusion::parquet::arrow::ArrowWriter;
    use datafusion::parquet::basic::{Compression, ZstdLevel};
    use datafusion::parquet::file::properties::WriterProperties;
    const PER_FILE: u64 = 64;
    // The columns that change from copy to copy, shifted by `by`.
    let shift = |batch: &RecordBatch, name: &str, by: u64| -> BenchResult<ArrayRef> {
        let column = batch
            .column_by_name(name)
            .ok_or_else(|| format!("the samples have no {name:?} column"))?
            .as_primitive_opt::<UInt64Type>()
            .ok_or_else(|| format!("the samples' {name:?} column is not u64"))?;
        Ok(std::sync::Arc::new(
            column
                .iter()
                .map(|v| v.map(|x| x + by))
                .collect::<UInt64Array>(),
        ))
    };
    let mut c = 1;
    while c < copies {
        let path = memscape_parquet::partition_dir(dir, "samples", "bench", None, Some(c))
            .join("part-0.parquet");
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .build();
        let mut writer =
            ArrowWriter::try_new(std::fs::File::create(&path)?, schema.clone(), Some(props))?;
        for copy in c..(c + PER_FILE).min(copies) {
            for batch in &batches {
                let schema = batch.schema();
                let mut columns: Vec<ArrayRef> = Vec::with_capacity(batch.num_columns());
                for (field, column) in schema.fields().iter().zip(batch.columns()) {
                    columns.push(match field.name().as_str() {
                        "ms_row" => shift(batch, "ms_row", copy * n)?,
                        "time" => shift(batch, "time", copy * span)?,
                        _ => column.clone(),
                    });
                }
                writer.write(&RecordBatch::try_new(schema.clone(), columns)?)?;
            }
        }
        writer.close()?;
        c += PER_FILE;
    }
    // The manifest counts every copy's rows (memscape-parquet writes it for the first).
    let path = dir.join(memscape_parquet::MANIFEST);
    let mut manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(&path)?)?;
    manifest["hosts"]["bench"]["rows"] = serde_json::json!(n * copies);
    std::fs::write(&path, serde_json::to_vec_pretty(&manifest)?)?;
    println!("samples {}", n * copies);
    Ok(())
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
fn native_lod(trace: memscape_trace::Trace) -> BenchResult<usize> {
    use memscape_lod::sidecar::{Coloring, build_columns};
    use memscape_lod::trace_source::TraceFile;
    let file = TraceFile::from_trace(trace);
    let cols = file.columns();
    let source = memscape_lod::SourceId {
        events: file.trace.meta.events,
        blocks: cols.len() as u64,
        ..Default::default()
    };
    let dir = tempfile::tempdir()?;
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
    )?;
    let index = memscape_lod::LodIndex::open(&out)?;
    Ok(index.levels.iter().map(|l| l.cells.len()).sum())
}

fn kind(dir: &Path) -> BenchResult<DatasetKind> {
    memscape_parquet::dataset_kind(dir).ok_or_else(|| {
        format!(
            "{}: expected a memscape Parquet dataset (a directory with its manifest)",
            dir.display()
        )
        .into()
    })
}

fn selections() -> BenchResult<[Vec<RangeSpec>; 2]> {
    Ok([vec![], vec![RangeSpec::parse("latency=50..")?]])
}

fn native(dir: &Path) -> BenchResult<()> {
    let mut t = Instant::now();
    match kind(dir)? {
        DatasetKind::Trace => {
            let trace = memscape_parquet::read_trace(dir, None)?;
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
            let cells = native_lod(trace)?;
            phase("lod", &mut t);
            println!(
                "check {} {} {} {cells}",
                series.iter().map(|p| p.1).max().unwrap_or(0),
                sizes.bytes.first().copied().unwrap_or(0),
                windows.len()
            );
        }
        DatasetKind::Samples => {
            let samples = memscape_parquet::read_samples(dir, None)?;
            phase("read", &mut t);
            let topology = Topology::from_file(&lulesh_dir().join("hardware.xml"))?;
            let mapping = Mapping::new(&samples, &topology);
            phase("map", &mut t);
            let mut check = 0u64;
            for select in selections()? {
                let bits = select_all_ranges(&samples, &select)?;
                let sel = (!select.is_empty()).then_some(&bits);
                for name in samples.column_names() {
                    let h = histogram(&samples, name, 32, sel)?;
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
                )?;
                check += w.len() as u64;
            }
            phase("queries", &mut t);
            println!("check {check}");
        }
    }
    Ok(())
}

/// `MEMSCAPE_ENGINE_MEMORY` (MiB) in bytes, as the GUI reads it: the embedded engine's plans
/// then sort and aggregate within it, spilling past it (unset: unbounded, `Engine::embedded`).
fn memory_limit() -> BenchResult<Option<usize>> {
    match std::env::var("MEMSCAPE_ENGINE_MEMORY") {
        Ok(v) => {
            let mib: usize = v
                .trim()
                .parse()
                .map_err(|e| format!("MEMSCAPE_ENGINE_MEMORY={v:?}: not a number of MiB: {e}"))?;
            Ok(Some(mib << 20))
        }
        Err(_) => Ok(None),
    }
}

fn engine(dir: &Path, spec: &EngineSpec, phases: &Phases) -> BenchResult<()> {
    let mut t = Instant::now();
    // The manifest first: a directory that is not a dataset is said so before DataFusion starts.
    kind(dir)?;
    let engine = match (spec, memory_limit()?) {
        (EngineSpec::Embedded, Some(bytes)) => Engine::embedded_bounded(0, bytes)?,
        _ => Engine::connect(spec)?,
    };
    let ds = engine.open(dir)?;
    phase("open", &mut t);
    match ds.manifest.kind {
        DatasetKind::Trace => {
            let events = engine.event_count(&ds, None)?;
            // Each check printed as "-" when its phase did not run.
            let mut checks = vec![String::from("-"); 6];
            if phases.heap {
                let points: Vec<u64> = (1..=POINTS as u64)
                    .map(|i| events * i / POINTS as u64)
                    .collect();
                let series = engine.heap_series(&ds, None, &points)?;
                let peak = series.iter().max_by_key(|p| p.1).map_or(events, |p| p.0);
                let sites = engine.live_by_site(&ds, None, peak)?;
                checks[0] = series.iter().map(|p| p.1).max().unwrap_or(0).to_string();
                checks[1] = sites.iter().map(|s| s.bytes).sum::<u64>().to_string();
                phase("heap", &mut t);
            }
            if phases.bins {
                let windows = engine.bin_windows(
                    &ds,
                    None,
                    &BinKey::SizePow2,
                    TimeAxis::EventIndex,
                    0,
                    events,
                    POINTS,
                )?;
                checks[2] = windows.len().to_string();
                phase("bins", &mut t);
            }
            if phases.lod {
                let plan = engine.lod_plan(&ds, None, &lod_params())?;
                let mut cells = 0;
                for level in &plan.levels {
                    cells += engine.lod_level(&ds, None, &plan, level)?.cells.len();
                }
                checks[3] = cells.to_string();
                phase("lod", &mut t);
            }
            if phases.map || phases.map_level {
                // What `memscape render DATASET/ --view alloc` computes for a whole 1280×720
                // view: the default layout, the one level the view is drawn from, the size
                // classes (`map`; `map-level`: the level alone).
                let plan = engine.lod_plan(&ds, None, &memscape_lod::BuildParams::default())?;
                let view =
                    memscape_lod::LodView::fit(0, plan.extent_t, 0, plan.axis.extent, 1280, 720);
                let level = memscape_engine::lod_index::lod_level_for(&plan, view.pixel_size());
                // `Engine::lod_index`'s work in its steps, each timed: the level's tiles, then
                // the size classes (every block large at some level of the plan, streamed by
                // start into their classes' spill file), then the file.
                let mut tiles = Vec::new();
                if let Some(spec) = level.and_then(|k| plan.levels.get(k)) {
                    tiles.push((*spec, engine.lod_level(&ds, None, &plan, spec)?));
                }
                phase("map-level", &mut t);
                let ranges = memscape_engine::lod::level_ranges(&plan, engine.level_range_blocks());
                checks[4] = format!(
                    "{:?} ({} cells, {ranges} ranges of events)",
                    level.map(|k| (plan.levels[k].log_tau, plan.levels[k].log_sig)),
                    tiles.first().map_or(0, |t| t.1.cells.len()),
                );
                if phases.map {
                    let scratch = tempfile::tempdir()?;
                    let mut classes =
                        memscape_engine::lod_index::SpilledClasses::new_in(scratch.path())?;
                    engine.lod_classes_spilled(&ds, None, &plan, &mut classes)?;
                    let copied = classes.blocks();
                    phase("map-classes", &mut t);
                    let meta = memscape_engine::lod_index::write_index_spilled(
                        &plan,
                        &tiles,
                        classes,
                        memscape_lod::SourceId::default(),
                        &scratch.path().join("map.lod"),
                    )?;
                    checks[5] = format!("{} ({copied} blocks copied)", meta.classes.len());
                    phase("map-write", &mut t);
                }
            }
            println!(
                "check {} {} {} {} map-level {} classes {}",
                checks[0], checks[1], checks[2], checks[3], checks[4], checks[5]
            );
        }
        DatasetKind::Samples => {
            let topology = Topology::from_file(&lulesh_dir().join("hardware.xml"))?;
            let meta =
                memscape_parquet::samples::samples_meta(&ds.dir, &ds.manifest, &ds.host(None)?)?;
            let mut check = 0u64;
            for select in selections()? {
                for a in &meta.attributes {
                    let h = engine.histogram(&ds, None, &a.name, 32, &select)?;
                    check += h.bins.iter().map(|b| b.selected).sum::<u64>();
                }
                for key in [OffenderKey::SourceLine, OffenderKey::Symbol] {
                    check += engine.top_offenders(&ds, None, key, &select, 20)?.len() as u64;
                }
                check += engine
                    .resource_totals(&ds, None, &topology, &select)?
                    .samples[0];
                let w = engine.window_scores(
                    &ds,
                    None,
                    &topology,
                    "time",
                    32,
                    Metric::Latency,
                    ResourceKind::L1,
                    &select,
                )?;
                check += w.len() as u64;
            }
            phase("queries", &mut t);
            println!("check {check}");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Run with `cargo test --profile engine-bench -p memscape-engine --no-default-features
    //! --example engine-bench` (examples' tests are not in `cargo test`).
    use super::*;

    fn parse(args: &[&str]) -> Result<Command, String> {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        Command::parse(&args)
    }

    #[test]
    fn every_command_parses_with_its_arguments() {
        assert_eq!(
            parse(&["write-trace", "1000", "/d"]),
            Ok(Command::WriteTrace {
                events: 1000,
                dir: PathBuf::from("/d")
            })
        );
        assert_eq!(
            parse(&["write-samples", "3", "/d"]),
            Ok(Command::WriteSamples {
                copies: 3,
                dir: PathBuf::from("/d")
            })
        );
        assert_eq!(
            parse(&["native", "/d"]),
            Ok(Command::Native {
                dir: PathBuf::from("/d")
            })
        );
        assert_eq!(
            parse(&["engine", "/d"]),
            Ok(Command::Engine {
                dir: PathBuf::from("/d"),
                spec: EngineSpec::Embedded,
                phases: Phases::all()
            })
        );
        assert_eq!(
            parse(&["engine", "/d", "--phases", "map,heap", "standalone:2"]),
            Ok(Command::Engine {
                dir: PathBuf::from("/d"),
                spec: EngineSpec::Standalone {
                    executors: 2,
                    slots: 1
                },
                phases: Phases {
                    heap: true,
                    bins: false,
                    lod: false,
                    map: true,
                    map_level: false
                }
            })
        );
    }

    /// Every malformed command line is an error that names what is wrong, never a panic.
    #[test]
    fn bad_arguments_say_what_is_expected() {
        let cases: &[(&[&str], &str)] = &[
            (&[], "no command"),
            (&["draw"], "unknown command \"draw\""),
            (&["write-trace"], "wrong number of arguments (0 given)"),
            (
                &["write-trace", "10"],
                "wrong number of arguments (1 given)",
            ),
            (
                &["write-trace", "ten", "/d"],
                "EVENTS \"ten\": expected a whole number",
            ),
            (&["write-trace", "-1", "/d"], "EVENTS \"-1\""),
            (&["write-samples", "2.5", "/d"], "COPIES \"2.5\""),
            (
                &["write-samples", "2", "/d", "x"],
                "wrong number of arguments (3 given)",
            ),
            (&["native"], "wrong number of arguments (0 given)"),
            (
                &["native", "/d", "/e"],
                "wrong number of arguments (2 given)",
            ),
            (&["engine"], "wrong number of arguments (0 given)"),
            (&["engine", "/d", "--phases"], "--phases: expected a list"),
            (&["engine", "/d", "--phases", ""], "unknown phase \"\""),
            (&["engine", "/d", "--phases", "heap,"], "unknown phase \"\""),
            (
                &["engine", "/d", "--phases", "heap,tiles"],
                "unknown phase \"tiles\"",
            ),
            (
                &["engine", "/d", "--phases", "heap", "--phases", "map"],
                "--phases given twice",
            ),
            (
                &["engine", "/d", "--phase", "heap"],
                "unknown option \"--phase\"",
            ),
            (
                &["engine", "/d", "yarn://x"],
                "expected embedded, ballista://HOST:PORT",
            ),
            (&["engine", "/d", "standalone:x"], "expected standalone:N"),
            (
                &["engine", "/d", "embedded", "standalone:2"],
                "SPEC given twice",
            ),
        ];
        for (args, expected) in cases {
            match parse(args) {
                Err(why) => assert!(
                    why.contains(expected),
                    "{args:?}: {why:?} lacks {expected:?}"
                ),
                Ok(command) => panic!("{args:?} parsed as {command:?}"),
            }
        }
    }

    #[test]
    fn a_directory_without_a_manifest_is_said_not_to_be_a_dataset() {
        let empty = tempfile::tempdir().unwrap();
        let why = kind(empty.path()).unwrap_err().to_string();
        assert!(why.contains("expected a memscape Parquet dataset"), "{why}");
    }
}
