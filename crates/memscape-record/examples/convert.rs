//! `convert IN.msr OUT.msc`: converts one recorder file (what the shim writes) into `.msc`
//! without symbolizing, e.g. to compare `.msc` encodings on the same recording.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(input), Some(output)) = (args.first(), args.get(1)) else {
        eprintln!("usage: convert IN.msr OUT.msc");
        return ExitCode::FAILURE;
    };
    let raw = match memscape_record::read_raw(Path::new(input)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let trace = memscape_record::convert_raw(input, &raw);
    if let Err(e) = memscape_trace::write_msc(&trace, Path::new(output)) {
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
