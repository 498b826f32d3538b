//! memscape-heap's synthetic trace written as a Parquet dataset as it is generated (the
//! dataset of `memscape-engine/examples/engine-bench.rs write-trace`, without building
//! DataFusion): `synthetic-dataset EVENTS DIR` (host `bench`, 16 time windows).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Instant;

use memscape_parquet::trace::TraceWriteOptions;
use memscape_parquet::trace_stream::write_synthetic_trace;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(events), Some(dir)) = (args.first(), args.get(1)) else {
        eprintln!("usage: synthetic-dataset EVENTS DIR");
        std::process::exit(2);
    };
    let start = Instant::now();
    let options = TraceWriteOptions {
        host: String::from("bench"),
        windows: 16,
    };
    let events: u64 = events.parse().expect("EVENTS: a number");
    let written = write_synthetic_trace(events, Path::new(dir), &options).unwrap();
    println!(
        "blocks {} events {} files {} held at most {} block rows {} event rows; {:.1} s",
        written.summary.rows,
        written.summary.events,
        written.summary.files,
        written.most_held.0,
        written.most_held.1,
        start.elapsed().as_secs_f64()
    );
}
