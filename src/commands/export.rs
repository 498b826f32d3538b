//! `memscape export FILE --to pprof|collapsed [-o OUT]`: a heap tree at one time point (as
//! `heaptree` selects it) for pprof, Pyroscope, speedscope, inferno and FlameGraph.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Context as _;
use memscape_heap::export::{ExportFormat, collapsed, heap_at, pprof};
use memscape_heap::report::load_heap_input;

use crate::cli::ExportArgs;

pub fn run(args: &ExportArgs) -> anyhow::Result<ExitCode> {
    if args.to == "parquet" {
        return parquet(args);
    }
    let format = ExportFormat::parse(&args.to)
        .with_context(|| format!("--to {:?}: expected pprof, collapsed or parquet", args.to))?;
    let mut options =
        super::analyses::heap_options(&args.time, &args.group, args.bottom_up, &args.sites)?;
    options.measure = args.measure.clone();
    let objects = match args.metric.as_str() {
        "bytes" => false,
        "objects" => true,
        other => anyhow::bail!("--metric {other:?}: expected bytes or objects"),
    };
    let input = load_heap_input(&memscape_views::demo::resolve_path(&args.file)?)?;
    let heap = heap_at(&input, &options)?;
    let bytes = match format {
        ExportFormat::Pprof => pprof(&heap),
        ExportFormat::Collapsed => collapsed(&heap, objects).into_bytes(),
    };
    match &args.out {
        Some(path) => std::fs::write(path, &bytes)
            .with_context(|| format!("{}: cannot write", path.display()))?,
        None => std::io::stdout().lock().write_all(&bytes)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `--to parquet -o DIR`: an allocation trace or samples as a partitioned Parquet dataset.
fn parquet(args: &ExportArgs) -> anyhow::Result<ExitCode> {
    let dir = args
        .out
        .as_ref()
        .context("--to parquet needs -o DIR (the dataset directory)")?;
    let path = memscape_views::demo::resolve_path(&args.file)?;
    let bytes = memscape_io::read_input(&path)?;
    let name = path.display().to_string();
    let summary = if memscape_views::dataset::is_samples(&bytes) {
        let samples = memscape_samples::parse_samples(&bytes, &name, Default::default())?;
        let options = memscape_parquet::samples::SamplesWriteOptions {
            host: args.host.clone(),
            windows: args.windows,
        };
        memscape_parquet::write_samples(&samples, dir, &options)?
    } else {
        let trace = memscape_trace::load_bytes(&name, &bytes)?;
        let options = memscape_parquet::trace::TraceWriteOptions {
            host: args.host.clone(),
            windows: args.windows,
        };
        memscape_parquet::write_trace(&trace, dir, &options)?
    };
    eprintln!(
        "memscape: wrote {} rows{} in {} files to {}",
        summary.rows,
        if summary.events > 0 {
            format!(" and {} events", summary.events)
        } else {
            String::new()
        },
        summary.files,
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}
