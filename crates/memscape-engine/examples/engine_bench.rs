//! Benchmark driver for BENCHMARKS.md: the engine (embedded DataFusion, Ballista standalone)
//! against the native path on synthetic allocation traces and replicated LULESH samples. Each
//! measurement runs in its own process so that its peak RSS (VmHWM) is its own.
//!
//! ```text
//! engine_bench gen-trace EVENTS DIR        # DIR/trace.msc and DIR/parquet (16 windows)
//! engine_bench native-trace DIR            # load .msc, heap-size series (100 points), heap at the peak, size-class bins over 256 windows
//! engine_bench engine-trace DIR [SPEC]     # the same on the engine (SPEC: embedded, standalone:N)
//! engine_bench gen-samples N DIR           # LULESH samples replicated to N rows, DIR/parquet
//! engine_bench native-samples DIR          # read the Parquet natively; resources, histograms, offenders, windows
//! engine_bench engine-samples DIR [SPEC]
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Instant;

use memscape_engine::bins::BinKey;
use memscape_engine::{Engine, EngineSpec};
use memscape_heap::{GroupKey, TraceHeap};
use memscape_samples::{ColumnData, Metric, OffenderKey, Samples};
use memscape_topology::{ResourceKind, Topology};
use memscape_trace::bins::{BinBy, Bins, SizeClasses};
use memscape_trace::metrics::{BinMetrics, TimeAxis};
use memscape_trace::{Frame, TraceBuilder, TraceFormat};

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn report(what: &str, start: Instant) {
    println!(
        "{what}: {:.2} s, peak RSS {:.0} MiB",
        start.elapsed().as_secs_f64(),
        peak_rss_mib()
    );
}

/// xorshift64*: deterministic and fast.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn gen_trace(events: u64, dir: &Path) {
    let start = Instant::now();
    let mut b = TraceBuilder::with_event_times("synthetic");
    let threads: Vec<u32> = (0..8).map(|t| b.thread(&format!("worker-{t}"))).collect();
    let function = b.strings.intern("main");
    let mut sites = Vec::new();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for s in 0..2000u64 {
        let mut node = 0;
        for depth in 0..(3 + s % 4) {
            let name = b
                .strings
                .intern(&format!("f{}_{}", depth, (s * 7 + depth) % 300));
            node = b.call_tree.child(
                node,
                Frame {
                    ip: 0x40_0000 + (s * 64 + depth) * 16,
                    function: if depth == 0 { function } else { name },
                    ..Frame::default()
                },
            );
        }
        sites.push(node);
    }
    // Live blocks (address, size) and freed addresses by size class for reuse.
    let mut live: Vec<(u64, u64)> = Vec::new();
    let mut free_lists: Vec<Vec<u64>> = vec![Vec::new(); 40];
    let mut bump = 0x1000_0000u64;
    let mut time = 0u64;
    for e in 0..events {
        time += 1 + rng.below(200);
        let grow = live.len() < 1000 || rng.below(100) < 52;
        if grow {
            let class = (rng.below(12) + 4) as usize;
            let size = (1u64 << class) - rng.below(1 << (class - 1));
            let address = free_lists[class].pop().unwrap_or_else(|| {
                let a = bump;
                bump += 1 << class;
                a
            });
            let site = sites[(rng.below(2000) * rng.below(2000) / 2000) as usize];
            let thread = threads[rng.below(8) as usize];
            b.alloc(e, time, address, size, 0, thread, site);
            live.push((address, size));
        } else {
            // Mostly young blocks die (a stack-like tail), some old ones.
            let n = live.len() as u64;
            let i = if rng.below(4) > 0 {
                n - 1 - rng.below(n.min(64))
            } else {
                rng.below(n)
            };
            let (address, size) = live.swap_remove(i as usize);
            b.free(e, time, address);
            let class = (64 - (size - 1).leading_zeros()) as usize;
            free_lists[class.min(39)].push(address);
        }
    }
    let trace = b.finish(TraceFormat::Csv, true);
    report(
        &format!(
            "generate {} events ({} blocks)",
            trace.meta.events,
            trace.blocks.len()
        ),
        start,
    );
    std::fs::create_dir_all(dir).unwrap();
    let t = Instant::now();
    memscape_trace::write_msc(&trace, &dir.join("trace.msc")).unwrap();
    report("write .msc", t);
    let t = Instant::now();
    let options = memscape_parquet::trace::TraceWriteOptions {
        host: String::from("local"),
        windows: 16,
    };
    let _ = std::fs::remove_dir_all(dir.join("parquet"));
    memscape_parquet::write_trace(&trace, &dir.join("parquet"), &options).unwrap();
    report("write Parquet", t);
}

fn native_trace(dir: &Path) {
    let start = Instant::now();
    let trace = memscape_trace::load(&dir.join("trace.msc")).unwrap();
    let mut heap = TraceHeap::new(&trace, &[GroupKey::Path]);
    let points = heap.even_points(100);
    let series = heap.heap_series(&points);
    let peak = heap.peak_point();
    let sizes = heap.sizes_at(peak);
    // Size-class bins over 256 windows of the event axis.
    let bins = Bins::new(&trace, BinBy::SizeClass(SizeClasses::PowerOfTwo));
    let metrics = BinMetrics::compute(&trace, &bins);
    let events = trace.event_order().len() as u64;
    let occupied: u64 = (0..bins.bins.len())
        .map(|i| {
            metrics
                .sample(i, TimeAxis::EventIndex, 0, events, 256)
                .occupancy[128]
        })
        .sum();
    report(
        &format!(
            "native: {} blocks, series max {} B, peak {} B, bins {} B at the middle",
            trace.blocks.len(),
            series.iter().map(|p| p.1).max().unwrap_or(0),
            sizes.bytes[0],
            occupied
        ),
        start,
    );
}

fn engine_trace(dir: &Path, spec: &str) {
    let start = Instant::now();
    let engine = Engine::connect(&EngineSpec::parse(spec).unwrap()).unwrap();
    let ds = engine.open(&dir.join("parquet")).unwrap();
    let events = engine.event_count(&ds, None).unwrap();
    let points: Vec<u64> = (1..=100u64).map(|i| events * i / 100).collect();
    let series = engine.heap_series(&ds, None, &points).unwrap();
    let meta = &ds.manifest.hosts["local"].meta;
    let peak = meta["peak_event"].as_u64().unwrap_or(0) + 1;
    let sites = engine.live_by_site(&ds, None, peak).unwrap();
    let bins = engine
        .bin_windows(
            &ds,
            None,
            &BinKey::SizePow2,
            TimeAxis::EventIndex,
            0,
            events,
            256,
        )
        .unwrap();
    report(
        &format!(
            "engine {spec}: series max {} B, peak {} B in {} sites, bins {} B at the middle",
            series.iter().map(|p| p.1).max().unwrap_or(0),
            sites.iter().map(|s| s.bytes).sum::<u64>(),
            sites.len(),
            bins.iter().map(|b| b.occupancy[128]).sum::<u64>()
        ),
        start,
    );
}

fn lulesh_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/memaxes/lulesh")
}

fn gen_samples(rows: usize, dir: &Path) {
    let start = Instant::now();
    let base =
        memscape_samples::load_samples(&lulesh_dir().join("samples.out"), Default::default())
            .unwrap();
    let copies = rows.div_ceil(base.len());
    let n = base.len();
    let rep = |i: usize| i % n;
    let mut s: Samples = base.clone();
    let total = copies * n;
    s.latency = (0..total).map(|i| base.latency[rep(i)]).collect();
    s.cpu = (0..total).map(|i| base.cpu[rep(i)]).collect();
    s.level = (0..total).map(|i| base.level[rep(i)]).collect();
    s.data_node = (0..total).map(|i| base.data_node[rep(i)]).collect();
    s.symbol = (0..total).map(|i| base.symbol[rep(i)]).collect();
    s.source_line = (0..total).map(|i| base.source_line[rep(i)]).collect();
    s.row_line = (0..total as u64).collect();
    for c in &mut s.columns {
        let time_shift = c.name == "time";
        let span = match &c.data {
            ColumnData::U64(v) => {
                v.iter().max().copied().unwrap_or(0) - v.iter().min().copied().unwrap_or(0) + 1
            }
            _ => 0,
        };
        let mut unknown = memscape_samples::Bitset::new(total);
        for i in 0..total {
            if c.unknown.get(rep(i)) {
                unknown.set(i);
            }
        }
        c.data = match &c.data {
            ColumnData::U64(v) => ColumnData::U64(
                (0..total)
                    .map(|i| v[rep(i)] + if time_shift { span * (i / n) as u64 } else { 0 })
                    .collect(),
            ),
            ColumnData::F64(v) => ColumnData::F64((0..total).map(|i| v[rep(i)]).collect()),
            ColumnData::Category { codes, labels } => ColumnData::Category {
                codes: (0..total).map(|i| codes[rep(i)]).collect(),
                labels: labels.clone(),
            },
        };
        c.unknown = unknown;
    }
    report(&format!("replicate LULESH to {total} samples"), start);
    let t = Instant::now();
    let _ = std::fs::remove_dir_all(dir.join("parquet"));
    let options = memscape_parquet::samples::SamplesWriteOptions {
        host: String::from("local"),
        windows: 16,
    };
    memscape_parquet::write_samples(&s, &dir.join("parquet"), &options).unwrap();
    report("write Parquet", t);
}

const ATTRS: [&str; 4] = ["latency", "time", "variable", "xidx"];

fn native_samples(dir: &Path) {
    let start = Instant::now();
    let topology = Topology::from_file(&lulesh_dir().join("hardware.xml")).unwrap();
    let samples = memscape_parquet::read_samples(&dir.join("parquet"), None).unwrap();
    report(&format!("native: read {} samples", samples.len()), start);
    let t = Instant::now();
    let mapping = memscape_samples::Mapping::new(&samples, &topology);
    let agg = mapping.aggregate(&samples, None);
    for a in ATTRS {
        memscape_samples::histogram(&samples, a, 32, None).unwrap();
    }
    let top = memscape_samples::top_offenders(&samples, OffenderKey::SourceLine, None, 20);
    let w = memscape_samples::metrics::window_scores(
        &samples,
        &topology,
        &mapping,
        "time",
        16,
        Metric::Latency,
        ResourceKind::L1,
        None,
    )
    .unwrap();
    report(
        &format!(
            "native: aggregations (root {} samples, top {:?}, {} windows)",
            agg.samples[0],
            top.first().map(|o| o.cycles),
            w.len()
        ),
        t,
    );
    report("native: total", start);
}

fn engine_samples(dir: &Path, spec: &str) {
    let start = Instant::now();
    let topology = Topology::from_file(&lulesh_dir().join("hardware.xml")).unwrap();
    let engine = Engine::connect(&EngineSpec::parse(spec).unwrap()).unwrap();
    let ds = engine.open(&dir.join("parquet")).unwrap();
    let agg = engine.resource_totals(&ds, None, &topology, &[]).unwrap();
    for a in ATTRS {
        engine.histogram(&ds, None, a, 32, &[]).unwrap();
    }
    let top = engine
        .top_offenders(&ds, None, OffenderKey::SourceLine, &[], 20)
        .unwrap();
    let w = engine
        .window_scores(
            &ds,
            None,
            &topology,
            "time",
            16,
            Metric::Latency,
            ResourceKind::L1,
            &[],
        )
        .unwrap();
    report(
        &format!(
            "engine {spec}: aggregations (root {} samples, top {:?}, {} windows)",
            agg.samples[0],
            top.first().map(|o| o.cycles),
            w.len()
        ),
        start,
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize| args.get(i).cloned().unwrap_or_default();
    let spec = if arg(3).is_empty() {
        String::from("embedded")
    } else {
        arg(3)
    };
    match arg(1).as_str() {
        "gen-trace" => gen_trace(arg(2).parse().unwrap(), Path::new(&arg(3))),
        "native-trace" => native_trace(Path::new(&arg(2))),
        "engine-trace" => engine_trace(Path::new(&arg(2)), &spec),
        "gen-samples" => gen_samples(arg(2).parse().unwrap(), Path::new(&arg(3))),
        "native-samples" => native_samples(Path::new(&arg(2))),
        "engine-samples" => engine_samples(Path::new(&arg(2)), &spec),
        _ => eprintln!("usage: see the module docs"),
    }
}
