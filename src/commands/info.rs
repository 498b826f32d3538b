//! `memscape info`: what a file holds, as text or JSON.

use std::io::{IsTerminal as _, Write as _};
use std::process::ExitCode;

use crate::cli::InfoArgs;

pub fn run(args: &InfoArgs) -> anyhow::Result<ExitCode> {
    let mut trace = memscape_trace::load(&memscape_views::demo::resolve_path(&args.file)?)?;
    // Name the frames from the binaries (and their debug files) when they exist here.
    let symbols = memscape_trace::symbolize::symbolize(&mut trace);
    tracing::debug!("{}: {symbols:?}", args.file.display());
    let options = memscape_trace::info::InfoOptions {
        sites: super::analyses::site_options(&args.sites)?,
        ..Default::default()
    };
    let report = memscape_trace::info::info(&trace, &options);
    if args.json {
        super::analyses::print_json(&report)?;
    } else {
        write!(std::io::stdout().lock(), "{report}")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `memscape convert IN OUT.msc`, with a progress line on stderr for long inputs.
pub fn convert(args: &crate::cli::ConvertArgs) -> anyhow::Result<ExitCode> {
    let mut last_shown = -1i32;
    let show = std::io::stderr().is_terminal();
    let options = memscape_trace::msc::MscOptions {
        mappable: args.mappable,
        ..Default::default()
    };
    let report = memscape_trace::info::convert_with(
        &memscape_views::demo::resolve_path(&args.input)?,
        &args.output,
        &options,
        move |stage, fraction| {
            let percent = (fraction * 100.0) as i32;
            if show && percent / 5 != last_shown / 5 {
                last_shown = percent;
                eprint!("\r{stage:?}: {percent:3}%");
            }
        },
    )?;
    if show {
        eprintln!();
    }
    writeln!(
        std::io::stdout().lock(),
        "{} → {}: {} events, {} blocks, {} warnings, {} bytes",
        report.input,
        report.output,
        report.events,
        report.blocks,
        report.warnings,
        report.output_bytes
    )?;
    Ok(ExitCode::SUCCESS)
}
