//! `convert IN.msr OUT.msc [--time-resolution R]`: converts one recorder file (what the shim
//! writes) into `.msc` without symbolizing, e.g. to compare `.msc` encodings or time
//! resolutions on the same recording (default: exact times).

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(input), Some(output)) = (args.first(), args.get(1)) else {
        eprintln!("usage: convert IN.msr OUT.msc [--time-resolution R]");
        return ExitCode::FAILURE;
    };
    let time_resolution_log2 = match args
        .iter()
        .position(|a| a == "--time-resolution")
        .and_then(|i| args.get(i + 1))
        .map(|r| memscape_record::parse_time_resolution(r))
    {
        None => 0,
        Some(Ok(k)) => k,
        Some(Err(e)) => {
            eprintln!("convert: {e}");
            return ExitCode::FAILURE;
        }
    };
    let raw = match memscape_record::read_raw(Path::new(input)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let trace = memscape_record::convert_raw(input, &raw);
    let options = memscape_trace::msc::MscOptions {
        time_resolution_log2,
        // `MSC_ZSTD_LEVEL=N` compares levels (default: memscape record's, 12).
        zstd_level: std::env::var("MSC_ZSTD_LEVEL")
            .ok()
            .and_then(|l| l.parse().ok()),
        ..Default::default()
    };
    if let Err(e) = memscape_trace::msc::write_msc_with(&trace, Path::new(output), &options) {
        eprintln!("{e}");
        return ExitCode::FAILURE;
    }
    println!(
        "{} events, {} bytes",
        trace.meta.events,
        std::fs::metadata(output).map_or(0, |m| m.len())
    );
    ExitCode::SUCCESS
}
