//! memscape-heap's synthetic trace written as a Parquet dataset as it is generated (the
//! dataset of `memscape-engine/examples/engine-bench.rs write-trace`, without building
//! DataFusion): `synthetic-dataset EVENTS DIR` (host `bench`, 16 time windows).
use std::path::Path;
use std::time::Instant;

use memscape_parquet::trace::TraceWriteOptions;
use memscape_parquet::trace_stream::write_synthetic_trace;

fn main() -> Result<(), Box<dyn std::error::Error>> {
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
    let events: u64 = events
        .parse()
        .map_err(|e| format!("EVENTS {events:?}: expected a whole number ({e})"))?;
    let written = write_synthetic_trace(events, Path::new(dir), &options)
        .map_err(|e| format!("{dir}: {e}"))?;
    println!(
        "blocks {} events {} files {} held at most {} block rows {} event rows; {:.1} s",
        written.summary.rows,
        written.summary.events,
        written.summary.files,
        written.most_held.0,
        written.most_held.1,
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
