//! `memscape info` without the GUI binary, for benchmarks: load a trace, print the report.
//!
//! `trace-info FILE [--json] [--symbolize] [--time-load [--repeat N]]`, or
//! `trace-info --convert IN OUT.msc [--time-resolution K] [--mappable] [--segment-blocks N]`
//! (times rounded to 2^K ns; block columns stored raw, for mapping; a segmented version-6 file
//! of N blocks per segment).
//! `--time-load` prints the wall and CPU time of loading alone (`load_seconds …`) on stderr;
//! with `--repeat N` also of loading and then decoding every block column (`.msc` version 3
//! decodes columns on first use; text formats have them all after the load). `--load-only`
//! loads and exits (with `--all-columns`: after decoding every block column), for timing a
//! cold process with `/usr/bin/time`.

use std::path::Path;
use std::process::ExitCode;

use memscape_trace::info::{InfoOptions, convert_with, info};
use memscape_trace::model::BlockColumn;
use memscape_trace::msc::MscOptions;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--convert") {
        let (Some(input), Some(output)) = (args.get(1), args.get(2)) else {
            eprintln!("usage: trace-info --convert IN OUT.msc");
            return ExitCode::FAILURE;
        };
        let time_resolution_log2 = args
            .iter()
            .position(|a| a == "--time-resolution")
            .and_then(|i| args.get(i + 1))
            .and_then(|k| k.parse().ok())
            .unwrap_or(0);
        let options = MscOptions {
            time_resolution_log2,
            mappable: args.iter().any(|a| a == "--mappable"),
            segment_blocks: args
                .iter()
                .position(|a| a == "--segment-blocks")
                .and_then(|i| args.get(i + 1))
                .and_then(|n| n.parse().ok())
                .unwrap_or(0),
            ..MscOptions::default()
        };
        return match convert_with(Path::new(input), Path::new(output), &options, |_, _| {}) {
            Ok(r) => {
                println!("{} blocks, {} bytes written", r.blocks, r.output_bytes);
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        };
    }
    let Some(file) = args
        .iter()
        .enumerate()
        .find(|(i, a)| !a.starts_with("--") && (*i == 0 || args[i - 1] != "--repeat"))
        .map(|(_, a)| a)
    else {
        eprintln!("usage: trace-info FILE [--json] [--symbolize]");
        return ExitCode::FAILURE;
    };
    // `--repeat N`: load N times (after the first) and report the best wall time and the mean
    // CPU time per load, for inputs that load faster than the 10 ms CPU clock tick.
    let repeat: usize = args
        .iter()
        .position(|a| a == "--repeat")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let started = std::time::Instant::now();
    let cpu_before = cpu_seconds();
    let loaded = memscape_trace::load(Path::new(file));
    if args.iter().any(|a| a == "--time-load") {
        eprintln!("load_seconds {:.6}", started.elapsed().as_secs_f64());
        if let (Some(before), Some(after)) = (cpu_before, cpu_seconds()) {
            eprintln!("load_cpu_seconds {:.2}", after - before);
        }
        if repeat > 0 {
            let mut best_wall = f64::MAX;
            let cpu_before = cpu_seconds();
            for _ in 0..repeat {
                let t = std::time::Instant::now();
                let again = memscape_trace::load(Path::new(file));
                best_wall = best_wall.min(t.elapsed().as_secs_f64());
                drop(again);
            }
            if let (Some(before), Some(after)) = (cpu_before, cpu_seconds()) {
                eprintln!("repeat_best_wall_seconds {best_wall:.6}");
                eprintln!(
                    "repeat_mean_cpu_seconds {:.6}",
                    (after - before) / repeat as f64
                );
            }
            // Load, then decode every block column (what a view reading all of them pays).
            let mut best_wall = f64::MAX;
            let cpu_before = cpu_seconds();
            for _ in 0..repeat {
                let t = std::time::Instant::now();
                let again = memscape_trace::load(Path::new(file));
                if let Ok(trace) = &again {
                    trace.blocks.prefetch(&BlockColumn::ALL);
                }
                best_wall = best_wall.min(t.elapsed().as_secs_f64());
                drop(again);
            }
            if let (Some(before), Some(after)) = (cpu_before, cpu_seconds()) {
                eprintln!("repeat_all_columns_best_wall_seconds {best_wall:.6}");
                eprintln!(
                    "repeat_all_columns_mean_cpu_seconds {:.6}",
                    (after - before) / repeat as f64
                );
            }
        }
    }
    let mut trace = match loaded {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    if args.iter().any(|a| a == "--load-only") {
        if args.iter().any(|a| a == "--all-columns") {
            trace.blocks.prefetch(&BlockColumn::ALL);
        }
        println!("{} blocks", trace.blocks.len());
        return ExitCode::SUCCESS;
    }
    if args.iter().any(|a| a == "--symbolize") {
        memscape_trace::symbolize::symbolize(&mut trace);
    }
    let report = info(&trace, &InfoOptions::default());
    if args.iter().any(|a| a == "--json") {
        match serde_json::to_string_pretty(&report) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        print!("{report}");
    }
    ExitCode::SUCCESS
}

/// User + system CPU time of this process from /proc/self/stat (Linux, 100 ticks per second):
/// on a shared machine wall time mostly measures the neighbours.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesized command name; utime and stime are fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}
