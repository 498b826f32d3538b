//! Timing driver for the peer benchmarks in `benches/cycles/` (the `memscape` CLI wires the
//! same functions; this keeps the comparison free of the GUI build).
//!
//! ```text
//! cycles_timing persistence FILE [MAX_DIM] [MODULUS]   # prints seconds and the bar counts
//! cycles_timing cycles TRACE A..B [WINDOW] [TOP] [BINARY FUNCTION]  # end to end on records A..B
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Instant;

use memscape_cycles::records::parse_record_range;
use memscape_cycles::{CyclesOptions, MatrixFormat, RecordFilter, RipsOptions};

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
        Some("cycles") => {
            let t0 = Instant::now();
            let options = CyclesOptions {
                filter: RecordFilter {
                    record_range: Some(parse_record_range(&args[3]).unwrap()),
                    functions: args.get(7).map(|f| vec![f.clone()]).unwrap_or_default(),
                    ..RecordFilter::default()
                },
                window: args.get(4).map_or(10, |s| s.parse().unwrap()),
                top: args.get(5).map_or(3, |s| s.parse().unwrap()),
                binary: args.get(6).map(Into::into),
                ..CyclesOptions::default()
            };
            let report =
                memscape_cycles::analyze_trace_file(Path::new(&args[2]), &options).unwrap();
            println!(
                "total {:.3} records {} windows {} unique {} h1_bars {} parameterizations {}",
                t0.elapsed().as_secs_f64(),
                report.records.len(),
                report.windows,
                report.unique_windows,
                report.barcode.len(),
                report.parameterizations.len()
            );
        }
        _ => eprintln!(
            "usage: cycles_timing persistence FILE [DIM] [P] | cycles TRACE A..B [W] [TOP]"
        ),
    }
}
