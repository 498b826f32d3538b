//! `record -o OUT.msc [--stack-depth N] [--no-stacks] [--time-resolution R] [--live | --snapshots]
//! -- PROG ARGS…`: what `memscape record` does, for benchmarks and trying the recorder without
//! the GUI binary. Prints the report as JSON and exits with the program's status.
//! `--snapshots`: what `memscape record --live` does for its views, without them: a trace
//! snapshot (`Follower::snapshot` of the consuming follower: the merge goes on as the files
//! are read, the snapshot shares its columns) after each read, as often as they can be made
//! (at most every 50 ms), each one's time and size on stderr.

use std::path::PathBuf;

use memscape_record::{DEFAULT_TIME_RESOLUTION_LOG2, RecordOptions, parse_time_resolution, record};

fn main() {
    // `RUST_LOG=memscape_record=info` prints the conversion's phases.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let mut args = std::env::args().skip(1);
    let mut output = PathBuf::from("memscape-record.msc");
    let mut stack_depth = 64;
    let mut no_stacks = false;
    let mut live = false;
    let mut snapshots = false;
    let mut time_resolution_log2 = DEFAULT_TIME_RESOLUTION_LOG2;
    let mut rest = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "-o" => output = args.next().map(PathBuf::from).unwrap_or(output),
            "--stack-depth" => {
                stack_depth = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(stack_depth)
            }
            "--no-stacks" => no_stacks = true,
            "--live" => live = true,
            "--snapshots" => snapshots = true,
            "--time-resolution" => match args.next().map(|r| parse_time_resolution(&r)) {
                Some(Ok(k)) => time_resolution_log2 = k,
                Some(Err(e)) => {
                    eprintln!("record: {e}");
                    std::process::exit(2);
                }
                None => {}
            },
            "--" => {
                rest.extend(args.by_ref());
            }
            _ => rest.push(a),
        }
    }
    let Some(program) = rest.first().cloned() else {
        eprintln!(
            "usage: record [-o OUT.msc] [--stack-depth N] [--no-stacks] [--time-resolution R] [--live] -- PROG ARGS..."
        );
        std::process::exit(2);
    };
    let options = RecordOptions {
        output,
        stack_depth,
        no_stacks,
        program,
        args: rest[1..].to_vec(),
        shim: None,
        time_resolution_log2,
    };
    let result = if snapshots {
        let started = std::time::Instant::now();
        memscape_record::record_observed(
            &options,
            std::time::Duration::from_millis(50),
            &mut |follower, ended| {
                let at = std::time::Instant::now();
                let trace = follower.snapshot("live");
                eprintln!(
                    "record: snapshot at {:.2} s: {} events, {} blocks in {:.1} ms{}",
                    started.elapsed().as_secs_f64(),
                    trace.meta.events,
                    trace.blocks.len(),
                    at.elapsed().as_secs_f64() * 1e3,
                    if ended { " (the last)" } else { "" }
                );
            },
        )
    } else if live {
        // A running summary on stderr, 4 times a second.
        memscape_record::record_live(&options, std::time::Duration::from_millis(250), &mut |s| {
            eprintln!("record: {s}")
        })
    } else {
        record(&options)
    };
    match result {
        Ok(report) => {
            println!(
                "{}",
                serde_json::to_string_pretty(&report).unwrap_or_default()
            );
            // The launcher's own peak RSS (what `/usr/bin/time` cannot tell apart from the
            // recorded program's), for benches/record/e2e.sh.
            let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
            if let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:")) {
                eprintln!("record: launcher {line}");
            }
            std::process::exit(report.exit_status);
        }
        Err(e) => {
            eprintln!("record: {e}");
            std::process::exit(1);
        }
    }
}
