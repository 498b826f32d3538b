//! `memscape info`: what a file holds, as text or JSON.

use std::io::{IsTerminal as _, Write as _};
use std::process::ExitCode;

use anyhow::Context as _;

use crate::cli::InfoArgs;

pub fn run(args: &InfoArgs) -> anyhow::Result<ExitCode> {
    let trace = memscape_trace::load(&memscape_views::demo::resolve_path(&args.file)?)?;
    let mut trace = select_processes(trace, args.process.as_deref())?;
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

/// The processes `--process PID|NAME-REGEX` names (all without the flag); an error listing
/// the trace's processes when it names none.
pub(crate) fn select_processes(
    trace: memscape_trace::Trace,
    filter: Option<&str>,
) -> anyhow::Result<memscape_trace::Trace> {
    match filter {
        Some(text) => selected(&trace, text),
        None => Ok(trace),
    }
}

/// The processes of `trace` that `text` (a pid or a name regex) names.
pub(crate) fn selected(
    trace: &memscape_trace::Trace,
    text: &str,
) -> anyhow::Result<memscape_trace::Trace> {
    use memscape_trace::process::ProcessFilter;
    let filter = ProcessFilter::parse(text).map_err(|e| {
        anyhow::anyhow!("--process {text:?}: neither a pid nor a regular expression ({e})")
    })?;
    let keep = filter.select(trace);
    if !keep.contains(&true) {
        let known: Vec<String> = trace
            .processes
            .iter()
            .map(|p| format!("{} {}", p.pid, p.name()))
            .collect();
        anyhow::bail!(
            "--process {text:?} matches none of the {} processes of {}: {}",
            known.len(),
            trace.meta.source,
            known.join(", ")
        );
    }
    Ok(memscape_trace::process::select_processes(trace, &keep))
}

/// `memscape convert IN OUT.msc`, with a progress line on stderr for long inputs. `IN` may be
/// the raw recording directory that a `memscape record` which could not write its output kept.
pub fn convert(args: &crate::cli::ConvertArgs) -> anyhow::Result<ExitCode> {
    if args.input.is_dir() {
        let report = memscape_record::convert_dir(
            &args.input,
            &args.output,
            memscape_record::DEFAULT_TIME_RESOLUTION_LOG2,
        )?;
        writeln!(
            std::io::stdout().lock(),
            "{} → {}: {} events from {} process(es)",
            args.input.display(),
            report.output.display(),
            report.events,
            report.processes.len()
        )?;
        for u in &report.unrecorded {
            eprintln!("warning: {u}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.process.is_some() {
        let trace = memscape_trace::load(&memscape_views::demo::resolve_path(&args.input)?)?;
        let trace = select_processes(trace, args.process.as_deref())?;
        let options = memscape_trace::msc::MscOptions {
            mappable: args.mappable,
            ..Default::default()
        };
        let bytes = memscape_trace::msc::to_msc_bytes_with(&trace, &options, &mut |_| {})
            .with_context(|| format!("{}: cannot encode", args.output.display()))?;
        memscape_trace::write_synced(&args.output, &bytes)
            .with_context(|| format!("cannot write {}", args.output.display()))?;
        writeln!(
            std::io::stdout().lock(),
            "{} → {}: {} events, {} blocks of {} process(es), {} bytes",
            args.input.display(),
            args.output.display(),
            trace.meta.events,
            trace.blocks.len(),
            trace.processes.len(),
            bytes.len()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
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
