//! `memscape info`: what a file holds, as text or JSON.

use std::io::{IsTerminal as _, Write as _};
use std::process::ExitCode;

use anyhow::Context as _;

use crate::cli::InfoArgs;

pub fn run(args: &InfoArgs) -> anyhow::Result<ExitCode> {
    let path = memscape_views::demo::resolve_path(&args.file)?;
    if path.is_dir() {
        return info_dir(args, &path);
    }
    // A big trace (one drawn from its level-of-detail index) keeps its summary beside it: the
    // second `info` reads it instead of passing over every block again.
    if memscape_views::alloc_map::lod::wants_lod(&path) {
        return stored_info(args, &path);
    }
    let trace = match memscape_trace::load(&path) {
        Ok(trace) => trace,
        // Massif, heap profiles, samples, topologies, reference traces and graphs are read by
        // the views' loader; it says once what it tried when none of them fits either.
        Err(memscape_trace::LoadError::NotATrace { .. }) => return other_info(args, &path),
        Err(e) => return Err(e.into()),
    };
    trace_info(args, trace)
}

/// `info` of a file that is not an allocation trace: its format, the counts the GUI's summary
/// shows, and its warnings.
fn other_info(args: &InfoArgs, path: &std::path::Path) -> anyhow::Result<ExitCode> {
    let dataset = match memscape_views::dataset::load(
        &memscape_views::LoadSource::File(path.to_path_buf()),
        &|_, _| {},
    ) {
        Ok(dataset) => dataset,
        // Numbers alone: a distance matrix `persistence` reads (no view opens one). Only a
        // file that starts with numbers is read whole for that.
        Err(e) if args.process.is_none() && starts_with_numbers(path) => {
            match memscape_cycles::read_matrix(path, memscape_cycles::MatrixFormat::LowerDistance) {
                Ok(matrix) => return matrix_info(args, path, &matrix),
                Err(_) => return Err(e.into()),
            }
        }
        Err(e) => return Err(e.into()),
    };
    let format = dataset.format_name();
    if let Some(filter) = &args.process {
        anyhow::bail!(
            "{}: --process {filter:?} selects processes of an allocation trace; this file is {format}",
            path.display()
        );
    }
    #[derive(serde::Serialize)]
    struct OtherInfo {
        file: String,
        format: String,
        /// The counts, as the GUI's summary shows them.
        summary: String,
        warnings: u64,
        warning_kinds: Vec<memscape_io::WarningKind>,
    }
    let report = OtherInfo {
        file: path.display().to_string(),
        format,
        summary: dataset.summary_text(),
        warnings: dataset.warnings().map_or(0, memscape_io::Warnings::total),
        warning_kinds: dataset
            .warnings()
            .map(|w| w.kinds().to_vec())
            .unwrap_or_default(),
    };
    if args.json {
        super::analyses::print_json(&report)?;
    } else {
        let mut out = std::io::stdout().lock();
        writeln!(out, "file:            {}", report.file)?;
        writeln!(out, "format:          {}", report.format)?;
        write!(out, "{}", report.summary)?;
        // As the traces' report lists them.
        writeln!(out, "warnings:        {}", report.warnings)?;
        for k in &report.warning_kinds {
            let places: Vec<String> = k.first.iter().map(ToString::to_string).collect();
            writeln!(
                out,
                "  {} × {} (first at {})",
                k.count,
                k.message,
                places.join(", ")
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether the first 4 KiB of `path` hold only what a distance matrix holds: numbers, commas,
/// whitespace.
fn starts_with_numbers(path: &std::path::Path) -> bool {
    use std::io::Read as _;
    let mut head = Vec::with_capacity(4096);
    let read = std::fs::File::open(path).and_then(|f| f.take(4096).read_to_end(&mut head));
    read.is_ok()
        && head.iter().any(u8::is_ascii_digit)
        && head
            .iter()
            .all(|&b| b.is_ascii_digit() || b",.-+eE \t\r\n".contains(&b))
}

/// `info` of a distance matrix in Ripser's lower-distance form: its points and distances, and
/// the command that computes its barcode.
fn matrix_info(
    args: &InfoArgs,
    path: &std::path::Path,
    matrix: &memscape_cycles::LowerDistanceMatrix,
) -> anyhow::Result<ExitCode> {
    use memscape_cycles::DistanceMatrix as _;
    #[derive(serde::Serialize)]
    struct MatrixInfo {
        file: String,
        format: &'static str,
        points: usize,
        distances: usize,
        min_distance: Option<f32>,
        max_distance: Option<f32>,
        zero_distances: usize,
    }
    let entries = matrix.entries();
    let report = MatrixInfo {
        file: path.display().to_string(),
        format: "distance matrix (Ripser's lower-distance: the strict lower triangle, row by row)",
        points: matrix.size(),
        distances: entries.len(),
        min_distance: entries.iter().copied().reduce(f32::min),
        max_distance: entries.iter().copied().reduce(f32::max),
        zero_distances: entries.iter().filter(|&&d| d == 0.0).count(),
    };
    if args.json {
        return super::analyses::print_json(&report).map(|()| ExitCode::SUCCESS);
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "file:            {}", report.file)?;
    writeln!(out, "format:          {}", report.format)?;
    writeln!(out, "points:          {}", report.points)?;
    writeln!(out, "distances:       {}", report.distances)?;
    if let (Some(lo), Some(hi)) = (report.min_distance, report.max_distance) {
        writeln!(out, "distance range:  {lo} to {hi}")?;
    }
    writeln!(out, "zero distances:  {}", report.zero_distances)?;
    writeln!(
        out,
        "barcode:         memscape persistence {} (--format distance or point-cloud for \
         other layouts)",
        report.file
    )?;
    Ok(ExitCode::SUCCESS)
}

/// What a stored summary was made with: the options and this program's version.
fn summary_key(args: &InfoArgs) -> String {
    format!(
        "memscape {} info process={:?} sites={:?}",
        env!("CARGO_PKG_VERSION"),
        args.process,
        args.sites
    )
}

/// `info` of a big trace: its stored summary when current, else the full pass, stored.
fn stored_info(args: &InfoArgs, path: &std::path::Path) -> anyhow::Result<ExitCode> {
    let key = summary_key(args);
    let stored = match memscape_lod::summary::load(path, &key) {
        Some(s) => s,
        None => {
            let trace = memscape_trace::load(path)?;
            let report = info_report(args, trace)?;
            let text = report.to_string();
            let json = serde_json::to_string_pretty(&report)?;
            match memscape_lod::summary::store(path, &key, &text, &json) {
                Ok(at) => tracing::debug!("summary stored in {}", at.display()),
                Err(e) => tracing::warn!("{}: summary not stored: {e}", path.display()),
            }
            memscape_lod::summary::StoredSummary {
                version: 0,
                source: memscape_lod::SourceId::default(),
                key,
                text,
                json,
            }
        }
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", stored.json)?;
    } else {
        write!(out, "{}", stored.text)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Stores the summary that `info FILE` (default options) prints, unless a current one is
/// stored already: called once `memscape lod build` has built a trace's level-of-detail index,
/// so that the first `info` of an indexed trace answers from what lies beside
/// its index instead of passing over every block. Returns whether it passed over the trace.
pub fn store_default_summary(path: &std::path::Path) -> anyhow::Result<bool> {
    let args = InfoArgs {
        file: path.to_path_buf(),
        process: None,
        sites: crate::cli::SiteArgs {
            wrappers: Vec::new(),
            no_wrapper_detection: false,
            innermost_sites: false,
        },
        json: false,
    };
    let key = summary_key(&args);
    if memscape_lod::summary::load(path, &key).is_some() {
        return Ok(false);
    }
    let trace = memscape_trace::load(path)?;
    let report = info_report(&args, trace)?;
    let at = memscape_lod::summary::store(
        path,
        &key,
        &report.to_string(),
        &serde_json::to_string_pretty(&report)?,
    )?;
    tracing::debug!("summary stored in {}", at.display());
    Ok(true)
}

/// `info` of one allocation trace.
fn trace_info(args: &InfoArgs, trace: memscape_trace::Trace) -> anyhow::Result<ExitCode> {
    let report = info_report(args, trace)?;
    if args.json {
        super::analyses::print_json(&report)?;
    } else {
        write!(std::io::stdout().lock(), "{report}")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The report of `info` on one allocation trace (one full pass).
fn info_report(
    args: &InfoArgs,
    trace: memscape_trace::Trace,
) -> anyhow::Result<memscape_trace::info::InfoReport> {
    let mut trace = select_processes(trace, args.process.as_deref())?;
    // Name the frames from the binaries (and their debug files) when they exist here.
    let symbols = memscape_trace::symbolize::symbolize(&mut trace);
    tracing::debug!("{}: {symbols:?}", args.file.display());
    let options = memscape_trace::info::InfoOptions {
        sites: super::analyses::site_options(&args.sites)?,
        ..Default::default()
    };
    Ok(memscape_trace::info::info(&trace, &options))
}

/// `info DIR`: a Parquet trace dataset reads as the trace it holds; any other directory
/// lists the datasets found in it (MemAxes' layout, Parquet datasets, files memscape reads),
/// each with its format and summary.
fn info_dir(args: &InfoArgs, dir: &std::path::Path) -> anyhow::Result<ExitCode> {
    if memscape_parquet::dataset_kind(dir) == Some(memscape_parquet::DatasetKind::Trace) {
        let trace = memscape_parquet::read_trace(dir, None)
            .with_context(|| format!("{}: reading the Parquet dataset", dir.display()))?;
        return trace_info(args, trace);
    }
    #[derive(serde::Serialize)]
    struct Entry {
        path: String,
        format: String,
        summary: String,
        /// The topology file samples map onto (MemAxes' layout).
        #[serde(skip_serializing_if = "Option::is_none")]
        topology: Option<String>,
    }
    let found = memscape_views::discover::datasets_in(dir)?;
    let mut entries = Vec::new();
    for path in found.all() {
        let (format, summary) = match samples_dataset_summary(&path)? {
            Some(described) => described,
            None => {
                let dataset = memscape_views::dataset::load(
                    &memscape_views::LoadSource::File(path.clone()),
                    &|_, _| {},
                )?;
                (dataset.format_name(), dataset.summary_text())
            }
        };
        let topology = found
            .pairs
            .iter()
            .find(|(s, _)| *s == path)
            .map(|(_, h)| h.display().to_string());
        entries.push(Entry {
            path: path.display().to_string(),
            format,
            summary,
            topology,
        });
    }
    if args.json {
        super::analyses::print_json(&entries)?;
    } else {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}: {} dataset(s)", dir.display(), entries.len())?;
        for e in &entries {
            writeln!(out, "\n{} ({})", e.path, e.format)?;
            if let Some(t) = &e.topology {
                writeln!(out, "  on the topology {t}")?;
            }
            let lines: Vec<&str> = e.summary.lines().collect();
            for line in lines.iter().take(12) {
                writeln!(out, "  {line}")?;
            }
            if lines.len() > 12 {
                writeln!(
                    out,
                    "  … {} more lines (--json has them all)",
                    lines.len() - 12
                )?;
            }
        }
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
        anyhow::bail!(
            "--process {text:?} matches none of the {} processes of {}: {}",
            trace.processes.len(),
            trace.meta.source,
            memscape_trace::process::process_list(trace)
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

/// A Parquet samples dataset's format and summary from its manifest alone (counts per host,
/// attributes): `info` reads no sample of it, whatever its size. None for anything else.
fn samples_dataset_summary(dir: &std::path::Path) -> anyhow::Result<Option<(String, String)>> {
    if memscape_parquet::dataset_kind(dir) != Some(memscape_parquet::DatasetKind::Samples) {
        return Ok(None);
    }
    let manifest = memscape_parquet::Manifest::read(dir)?;
    let total: u64 = manifest.hosts.values().map(|h| h.rows).sum();
    let mut summary = format!(
        "samples         {total} (from the manifest; none read)\nhosts           {}\n",
        manifest.hosts.len()
    );
    let mut format = String::from("Parquet samples dataset");
    for (i, (host, entry)) in manifest.hosts.iter().enumerate() {
        let meta = memscape_parquet::samples::samples_meta(dir, &manifest, host)?;
        if i == 0 {
            format = format!("{} samples, Parquet dataset", meta.format);
            let names: Vec<&str> = meta.attributes.iter().map(|a| a.name.as_str()).collect();
            summary.push_str(&format!("attributes      {}\n", names.join(", ")));
        }
        if i < 8 {
            summary.push_str(&format!("  {host:<14}{} samples\n", entry.rows));
        }
    }
    if manifest.hosts.len() > 8 {
        summary.push_str(&format!("  … {} hosts more\n", manifest.hosts.len() - 8));
    }
    Ok(Some((format, summary)))
}
