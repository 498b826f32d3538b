//! `memscape info`: what a file holds, as text or JSON.

use std::process::ExitCode;

use crate::cli::InfoArgs;

pub fn run(args: &InfoArgs) -> anyhow::Result<ExitCode> {
    let trace = memscape_trace::load(&args.file)?;
    let report = memscape_trace::info::info(&trace, &memscape_trace::info::InfoOptions::default());
    if args.json {
        serde_json::to_writer_pretty(std::io::stdout().lock(), &report)?;
        println!();
    } else {
        print!("{report}");
    }
    Ok(ExitCode::SUCCESS)
}
