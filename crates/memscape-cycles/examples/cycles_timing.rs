//! Timing driver for the peer benchmarks in `benches/cycles/` (the `memscape` CLI wires the
//! same functions; this keeps the comparison free of the GUI build).
//!
//! ```text
//! cycles_timing persistence FILE [MAX_DIM] [MODULUS]
//! cycles_timing levenshtein TRACE A..B WINDOW OUT      # writes a lower distance matrix
//! cycles_timing rips TRACE A..B [--threshold T] [--runs K]   # Levenshtein (w = 10) + H0/H1
//! cycles_timing mds TRACE A..B                          # classical MDS of the windows
//! cycles_timing cycles TRACE A..B [--window W] [--top N] [--threshold T]
//!                                 [--binary B --function F] [--detail full|LANDMARKS]
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Instant;

use memscape_cycles::levenshtein::{make_windows, window_distances};
use memscape_cycles::records::{SymbolMode, parse_record_range, record_symbols, select_records};
use memscape_cycles::symbolize::LoadBase;
use memscape_cycles::{CyclesOptions, Detail, MatrixFormat, RecordFilter, RipsOptions, read_trace};

fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|k| args.get(k + 1))
        .map(String::as_str)
}

/// CPU seconds of this process so far (user + system, from /proc; 0 elsewhere): on a shared
/// machine it moves much less with the load of other processes than wall time.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let ticks = |k: usize| {
        fields
            .get(k)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // Fields 14 and 15 of stat (utime, stime), counted after the command name; 100 ticks/s.
    (ticks(11) + ticks(12)) / 100.0
}

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("persistence") => {
            let path = Path::new(&args[2]);
            let max_dim = args.get(3).map_or(1, |s| s.parse().unwrap());
            let modulus = args.get(4).map_or(2, |s| s.parse().unwrap());
            let t0 = Instant::now();
            let matrix = memscape_cycles::read_matrix(path, MatrixFormat::LowerDistance).unwrap();
            let t1 = Instant::now();
            let result = memscape_cycles::rips_persistence(
                &matrix,
                &RipsOptions {
                    max_dim,
                    modulus,
                    ..RipsOptions::default()
                },
            )
            .unwrap();
            let t2 = Instant::now();
            let counts: Vec<usize> = result.barcode.dims.iter().map(Vec::len).collect();
            println!(
                "read {:.6} compute {:.6} bars {:?}",
                (t1 - t0).as_secs_f64(),
                (t2 - t1).as_secs_f64(),
                counts
            );
        }
        Some("levenshtein") => {
            let trace = read_trace(Path::new(&args[2]), None).unwrap();
            let filter = RecordFilter {
                record_range: Some(parse_record_range(&args[3]).unwrap()),
                ..RecordFilter::default()
            };
            let records = select_records(&trace, None, LoadBase::Detect, &filter).unwrap();
            let (symbols, alphabet) = record_symbols(&records, SymbolMode::Address).unwrap();
            let windows = make_windows(&symbols, args[4].parse().unwrap()).unwrap();
            let dist = window_distances(&windows, alphabet).unwrap();
            let text: Vec<String> = dist.entries().iter().map(u8::to_string).collect();
            std::fs::write(&args[5], text.join(",")).unwrap();
        }
        Some("rips") => {
            // Levenshtein matrix of a record range, then the H1 persistence of it (with
            // cocycles, as `cycles` runs it) `RUNS` times; the fastest run is reported, which
            // filters out the load of other processes on a shared machine.
            let trace = read_trace(Path::new(&args[2]), None).unwrap();
            let filter = RecordFilter {
                record_range: Some(parse_record_range(&args[3]).unwrap()),
                ..RecordFilter::default()
            };
            let records = select_records(&trace, None, LoadBase::Detect, &filter).unwrap();
            let (symbols, alphabet) = record_symbols(&records, SymbolMode::Address).unwrap();
            let windows = make_windows(&symbols, 10).unwrap();
            let t0 = Instant::now();
            let dist = window_distances(&windows, alphabet).unwrap();
            let levenshtein = t0.elapsed().as_secs_f64();
            let runs: usize = flag(&args, "--runs").map_or(3, |s| s.parse().unwrap());
            let mut best = f64::INFINITY;
            let mut best_cpu = f64::INFINITY;
            let mut bars = 0;
            for _ in 0..runs {
                let t = Instant::now();
                let cpu = cpu_seconds();
                let result = memscape_cycles::rips_persistence(
                    &dist,
                    &RipsOptions {
                        threshold: flag(&args, "--threshold").map(|s| s.parse().unwrap()),
                        cocycles: true,
                        ..RipsOptions::default()
                    },
                )
                .unwrap();
                best = best.min(t.elapsed().as_secs_f64());
                best_cpu = best_cpu.min(cpu_seconds() - cpu);
                bars = result.barcode.dims[1].len();
            }
            println!(
                "unique windows {} levenshtein {levenshtein:.3} s rips (best of {runs}) {best:.3} s, cpu {best_cpu:.2} s, h1_bars {bars}",
                windows.unique_count()
            );
        }
        Some("mds") => {
            // Classical MDS of the unique windows (w = 10) of a record range.
            let trace = read_trace(Path::new(&args[2]), None).unwrap();
            let filter = RecordFilter {
                record_range: Some(parse_record_range(&args[3]).unwrap()),
                ..RecordFilter::default()
            };
            let records = select_records(&trace, None, LoadBase::Detect, &filter).unwrap();
            let (symbols, alphabet) = record_symbols(&records, SymbolMode::Address).unwrap();
            let windows = make_windows(&symbols, 10).unwrap();
            let dist = window_distances(&windows, alphabet).unwrap();
            let t = Instant::now();
            let points = memscape_cycles::classical_mds(&dist, 2).unwrap();
            println!(
                "unique windows {} classical MDS {:.3} s (first point {:?})",
                points.len(),
                t.elapsed().as_secs_f64(),
                points[0]
            );
        }
        Some("cycles") => {
            let t0 = Instant::now();
            let options = CyclesOptions {
                filter: RecordFilter {
                    record_range: Some(parse_record_range(&args[3]).unwrap()),
                    functions: flag(&args, "--function")
                        .map(|f| vec![f.to_owned()])
                        .unwrap_or_default(),
                    ..RecordFilter::default()
                },
                binary: flag(&args, "--binary").map(Into::into),
                window: flag(&args, "--window").map_or(10, |s| s.parse().unwrap()),
                top: flag(&args, "--top").map_or(3, |s| s.parse().unwrap()),
                threshold: flag(&args, "--threshold").map(|s| s.parse().unwrap()),
                detail: match flag(&args, "--detail") {
                    None => Detail::default(),
                    Some("full") => Detail::Full,
                    Some(n) => Detail::Landmarks(n.parse().unwrap()),
                },
                ..CyclesOptions::default()
            };
            let report =
                memscape_cycles::analyze_trace_file(Path::new(&args[2]), &options).unwrap();
            println!(
                "total {:.3} s, records {} windows {} unique {} threshold {} h1_bars {} parameterizations {} level of detail {:?}",
                t0.elapsed().as_secs_f64(),
                report.records.len(),
                report.windows,
                report.unique_windows,
                report.threshold,
                report.barcode.len(),
                report.parameterizations.len(),
                report.level_of_detail
            );
        }
        Some("lod-error") => {
            // The level of detail against the full analysis of the same records: the
            // bottleneck distance of the H1 barcodes, beside the stated bound.
            let filter = RecordFilter {
                record_range: Some(parse_record_range(&args[3]).unwrap()),
                ..RecordFilter::default()
            };
            let trace = read_trace(Path::new(&args[2]), None).unwrap();
            let records = select_records(&trace, None, LoadBase::Detect, &filter).unwrap();
            let run = |detail| {
                let t = Instant::now();
                let options = CyclesOptions {
                    detail,
                    ..CyclesOptions::default()
                };
                let report = memscape_cycles::analyze_records(records.clone(), &options).unwrap();
                (report, t.elapsed().as_secs_f64())
            };
            let lod_detail = match flag(&args, "--landmarks") {
                Some(n) => Detail::Landmarks(n.parse().unwrap()),
                None => Detail::default(),
            };
            let (lod, lod_s) = run(lod_detail);
            let (full, full_s) = run(Detail::Full);
            let d = memscape_cycles::bottleneck::bottleneck_distance(&full.barcode, &lod.barcode);
            println!(
                "unique {} full {full_s:.1} s ({} bars) level of detail {lod_s:.1} s ({} bars) {:?} bottleneck distance {d}",
                full.unique_windows,
                full.barcode.len(),
                lod.barcode.len(),
                lod.level_of_detail
            );
        }
        _ => eprintln!(
            "usage: cycles_timing persistence FILE [DIM] [P] | levenshtein TRACE A..B W OUT | cycles TRACE A..B [--window W] [--top N] [--threshold T] [--binary B --function F]"
        ),
    }
}
