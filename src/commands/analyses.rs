//! Thin CLI wrappers over the analysis crates: each parses its flags, calls one library
//! function and prints its report as JSON or text.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Context as _;

use crate::cli::{
    ClusterArgs, CyclesArgs, HeaptreeArgs, LayoutArgs, PersistenceArgs, SamplesArgs, TopologyArgs,
};

pub fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    // Through io::Error, so that a closed pipe keeps its ErrorKind for main to recognise.
    serde_json::to_writer_pretty(&mut out, value).map_err(std::io::Error::from)?;
    writeln!(out)?;
    Ok(())
}

/// The call-site rules of `--wrapper`, `--no-wrapper-detection`, `--innermost-sites`.
pub fn site_options(
    args: &crate::cli::SiteArgs,
) -> anyhow::Result<memscape_trace::sites::SiteOptions> {
    if args.innermost_sites {
        return Ok(memscape_trace::sites::SiteOptions::innermost());
    }
    let mut options = memscape_trace::sites::SiteOptions::with_patterns(&args.wrappers)
        .context("--wrapper: not a regular expression")?;
    options.detect = !args.no_wrapper_detection;
    Ok(options)
}

/// The heap-tree options that `heaptree`, `export` and `diff` share: the time point, the
/// grouping (`--group`, `--bottom-up`) and the call-site rules.
pub fn heap_options(
    time: &crate::cli::HeapTimeArgs,
    group: &str,
    bottom_up: bool,
    sites: &crate::cli::SiteArgs,
) -> anyhow::Result<memscape_heap::report::HeapTreeOptions> {
    use memscape_heap::report::{HeapTreeOptions, TimeSelect};
    let mut options = HeapTreeOptions {
        select: match (time.at, time.snapshot, time.peak) {
            (Some(t), _, _) => TimeSelect::At(t),
            (_, Some(n), _) => TimeSelect::Snapshot(n),
            (_, _, true) => TimeSelect::Peak,
            _ => TimeSelect::Default,
        },
        ..HeapTreeOptions::default()
    };
    options.group =
        memscape_heap::GroupKey::parse_list(group).map_err(|e| anyhow::anyhow!("--group: {e}"))?;
    if bottom_up {
        options.group = memscape_heap::trace_tree::bottom_up(&options.group);
    }
    options.heap.sites = site_options(sites)?;
    Ok(options)
}

/// The heap input of `file` (a demo name too), with `--process` applied to recordings.
pub fn load_heap(
    file: &std::path::Path,
    process: Option<&str>,
    group: &str,
) -> anyhow::Result<memscape_heap::report::HeapInput> {
    use memscape_heap::report::HeapInput;
    let path = memscape_views::demo::resolve_path(file)?;
    Ok(
        match (process, memscape_heap::report::load_heap_input(&path)?) {
            (None, HeapInput::Trace(trace)) => HeapInput::Trace(largest_peak_process(
                trace,
                &path,
                grouped_by_process(group),
            )),
            (None, input) => input,
            (Some(filter), HeapInput::Trace(trace)) => {
                HeapInput::Trace(Box::new(super::info::selected(&trace, filter)?))
            }
            (Some(_), HeapInput::Massif(_)) => anyhow::bail!(
                "--process: {} is massif output, not a recording with processes",
                path.display()
            ),
            (Some(_), HeapInput::Profile(_)) => anyhow::bail!(
                "--process: {} is a heap profile, not a recording with processes",
                path.display()
            ),
        },
    )
}

/// Whether `--group` splits by process (then every process stays in the tree).
fn grouped_by_process(group: &str) -> bool {
    memscape_heap::GroupKey::parse_list(group)
        .is_ok_and(|keys| keys.contains(&memscape_heap::GroupKey::Process))
}

/// A recording in which several processes have events shows one heap, the largest peak's,
/// as the GUI's heap tree does (the processes' blocks live in different address spaces, and a
/// shell's or a compiler driver's heap would otherwise be summed into the program's and
/// named after it); a note on standard error says which and how to choose.
fn largest_peak_process(
    trace: Box<memscape_trace::Trace>,
    path: &std::path::Path,
    grouped_by_process: bool,
) -> Box<memscape_trace::Trace> {
    use memscape_trace::process;
    if grouped_by_process || !process::several_with_events(&trace) {
        return trace;
    }
    let all = vec![true; trace.processes.len()];
    let Some(best) = process::largest_peak(&trace, &all) else {
        return trace;
    };
    let p = &trace.processes[best];
    eprintln!(
        "memscape: {} has {} processes with events; this is pid {} ({}), the largest peak \
         (--process PID|NAME to choose one, --group process,… for all)",
        path.display(),
        process::with_events(&trace),
        p.pid,
        process::one_line(&p.command_line)
    );
    let keep: Vec<bool> = (0..trace.processes.len()).map(|i| i == best).collect();
    Box::new(process::select_processes(&trace, &keep))
}

/// `--metric`: bytes or objects.
pub fn metric_of(name: &str) -> anyhow::Result<memscape_heap::Metric> {
    memscape_heap::Metric::parse(name)
        .with_context(|| format!("--metric {name:?}: expected bytes or objects"))
}

pub fn heaptree(args: &HeaptreeArgs) -> anyhow::Result<ExitCode> {
    use memscape_heap::report::{HeapInput, heaptree_massif};
    let mut options = heap_options(
        &args.time,
        &args.grouping.group,
        args.grouping.bottom_up,
        &args.sites,
    )?;
    options.prune.metric = metric_of(&args.metric)?;
    if let Some(d) = args.depth {
        options.prune.depth = d;
    }
    options.measure = args.measure.clone();
    if args.no_suppressions {
        options.heap.suppressions = memscape_heap::Suppressions::none();
    }
    let input = load_heap(
        &args.file,
        args.grouping.process.as_deref(),
        &args.grouping.group,
    )?;
    // A massif file without any tree still has its heap-size curve: show it, say why.
    if let HeapInput::Massif(file) = &input
        && let Some(curve) = file.curve_instead_of_tree()
    {
        if args.json {
            print_json(&curve)?;
        } else {
            print_curve(&curve)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.leaks {
        let report = memscape_heap::report::leaks_input(&input, &options);
        if args.json {
            print_json(&report)?;
        } else {
            print_leaks(&args.file, &report)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let report = match &input {
        HeapInput::Massif(file) => heaptree_massif(file, &options)?,
        HeapInput::Trace(trace) => memscape_heap::report::heaptree_trace(trace, &options)?,
        HeapInput::Profile(profile) => memscape_heap::report::heaptree_profile(profile, &options)?,
    };
    if args.json {
        print_json(&report)?;
    } else {
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "{} at {} {} — {} bytes live",
            args.file.display(),
            report.time,
            report.time_unit,
            report.total_bytes
        )?;
        print_node(&mut out, &report.tree, 0, options.prune.metric)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn print_curve(curve: &memscape_heap::HeapCurveReport) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}: {}", curve.source, curve.message)?;
    writeln!(
        out,
        "{:>9} {:>16} {:>14} {:>12} {:>12}",
        "snapshot",
        format!("time ({})", curve.time_unit),
        "heap B",
        "extra B",
        "stacks B"
    )?;
    for p in &curve.snapshots {
        writeln!(
            out,
            "{:>9} {:>16} {:>14} {:>12} {:>12}",
            p.snapshot, p.time, p.heap_bytes, p.heap_extra_bytes, p.stacks_bytes
        )?;
    }
    match &curve.peak {
        Some(p) if curve.no_heap_bytes => writeln!(
            out,
            "stacks peak: snapshot {} at {} {}: {} B stacks, no heap",
            p.snapshot, p.time, curve.time_unit, p.stacks_bytes
        )?,
        Some(p) => writeln!(
            out,
            "peak: snapshot {} at {} {}: {} B heap + {} B extra",
            p.snapshot, p.time, curve.time_unit, p.heap_bytes, p.heap_extra_bytes
        )?,
        None => {}
    }
    Ok(())
}

fn print_leaks(
    file: &std::path::Path,
    report: &memscape_heap::report::LeakReport,
) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{}: leak suspects over {} time points (bytes kept at the end, growth per {})",
        file.display(),
        report.points,
        report.time_unit
    )?;
    for s in report.suspects.iter().take(25) {
        writeln!(
            out,
            "{:>12} B {:>9} obj  {:>+12.3e}/{}  {}",
            s.end_bytes, s.end_objects, s.slope, report.time_unit, s.name
        )?;
    }
    if report.suspects.is_empty() {
        writeln!(out, "  (no group grew)")?;
    }
    let sup = &report.suppressed;
    if sup.applied {
        writeln!(
            out,
            "suppressed: {} blocks ({} B) the C library, the loader and the C++ runtime keep until exit (--no-suppressions shows them)",
            sup.blocks, sup.bytes
        )?;
        for r in &sup.by_rule {
            writeln!(
                out,
                "  {:>6} blocks {:>10} B  {}",
                r.blocks, r.bytes, r.rule
            )?;
        }
    } else {
        writeln!(out, "suppressions off")?;
    }
    Ok(())
}

fn print_node(
    out: &mut impl std::io::Write,
    node: &memscape_heap::HeapNode,
    depth: usize,
    metric: memscape_heap::Metric,
) -> std::io::Result<()> {
    writeln!(
        out,
        "{:indent$}{:>12} B {:>9} obj  {}",
        "",
        node.bytes,
        node.objects,
        node.name,
        indent = depth * 2
    )?;
    // Largest first, "Other" last. The views keep one order over time (a wedge does not jump
    // when the time cursor moves); a printed tree is read at one time point.
    let mut children: Vec<&memscape_heap::HeapNode> = node.children.iter().collect();
    children.sort_by_key(|c| (c.is_other(), std::cmp::Reverse(c.value(metric))));
    for c in children {
        print_node(out, c, depth + 1, metric)?;
    }
    Ok(())
}

pub fn topology(args: &TopologyArgs) -> anyhow::Result<ExitCode> {
    let topology = memscape_topology::Topology::load(args.file.as_deref())?;
    if args.json {
        print_json(&memscape_topology::topology_report(&topology))?;
    } else {
        write!(
            std::io::stdout().lock(),
            "{}",
            memscape_topology::render_tree(&topology)
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn session(
    file: &std::path::Path,
    hardware: Option<&std::path::Path>,
    radix: &str,
) -> anyhow::Result<memscape_samples::Session> {
    let data_source_radix = memscape_samples::DataSourceRadix::parse(radix)
        .with_context(|| format!("--data-source-radix {radix:?}: expected auto, hex or decimal"))?;
    // A directory: its first dataset (MemAxes' layout: data/samples.*, hardware.xml).
    let found;
    let (file, hardware) = if file.is_dir() {
        found = memscape_samples::find_datasets(file)?;
        let first = found.first().with_context(|| {
            format!(
                "{}: no samples found (looked for data/samples.* with hardware.xml, samples files, and both in subdirectories)",
                file.display()
            )
        })?;
        (
            first.samples.as_path(),
            hardware.or(first.hardware.as_deref()),
        )
    } else {
        (file, hardware)
    };
    Ok(memscape_samples::Session::open(
        file,
        hardware,
        memscape_samples::ImportOptions { data_source_radix },
    )?)
}

pub fn samples(args: &SamplesArgs) -> anyhow::Result<ExitCode> {
    let session = session(
        &args.file,
        args.hardware.as_deref(),
        &args.data_source_radix,
    )?;
    let selects = args
        .select
        .iter()
        .map(|s| memscape_samples::RangeSpec::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    let report = session.report(&selects)?;
    if args.json {
        print_json(&report)?;
    } else {
        print_samples_text(&report)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn print_samples_text(report: &memscape_samples::SamplesReport) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    let value = serde_json::to_value(report).unwrap_or_default();
    let list = |key: &str| {
        value
            .get(key)
            .and_then(|v| v.as_array())
            .cloned()
            .unwrap_or_default()
    };
    writeln!(
        out,
        "{:<14} {:>6} {:>10} {:>14}",
        "resource", "depth", "samples", "cycles"
    )?;
    for r in list("resources") {
        writeln!(
            out,
            "{:<14} {:>6} {:>10} {:>14}",
            format!("{} {}", r["kind"].as_str().unwrap_or(""), r["id"]),
            r["depth"],
            r["samples"],
            r["cycles"]
        )?;
    }
    let levels = list("levels");
    if !levels.is_empty() {
        writeln!(out, "\nserved by (memory level of the data source):")?;
        for l in &levels {
            writeln!(
                out,
                "  {:<14} {:>10} samples {:>14} cycles",
                l["level"].as_str().unwrap_or(""),
                l["samples"],
                l["cycles"]
            )?;
        }
        if levels.iter().any(|l| l["level"] == "level unknown") {
            writeln!(
                out,
                "  (level unknown: the data source names no level; counted on the PU that took the sample only)"
            )?;
        }
    }
    for (title, key) in [
        ("top source lines", "top_lines"),
        ("top data symbols", "top_symbols"),
    ] {
        writeln!(out, "\n{title} (by total latency):")?;
        for t in list(key).iter().take(10) {
            writeln!(
                out,
                "  {:>14} cycles {:>8} samples  {}",
                t["cycles"],
                t["samples"],
                t["name"].as_str().unwrap_or("")
            )?;
        }
    }
    Ok(())
}

pub fn cluster(args: &ClusterArgs) -> anyhow::Result<ExitCode> {
    let session = session(&args.file, args.hardware.as_deref(), "auto")?;
    let metric = memscape_samples::Metric::parse(&args.metric)
        .with_context(|| format!("--metric {:?}: expected latency or imbalance", args.metric))?;
    let depth = memscape_topology::ResourceKind::parse(&args.depth).with_context(|| {
        format!(
            "--depth {:?}: expected numa, l3, l2, l1, core or pu",
            args.depth
        )
    })?;
    let report = memscape_samples::report::cluster_command(
        &session,
        &args.attribute,
        metric,
        depth,
        args.window,
        args.step,
        args.clusters,
    )?;
    print_json(&report)?;
    Ok(ExitCode::SUCCESS)
}

pub fn persistence(args: &PersistenceArgs) -> anyhow::Result<ExitCode> {
    let format = memscape_cycles::MatrixFormat::from_name(&args.format).with_context(|| {
        format!(
            "--format {:?}: expected lower-distance, distance or point-cloud",
            args.format
        )
    })?;
    let options = memscape_cycles::RipsOptions {
        max_dim: args.dim,
        threshold: args.threshold,
        modulus: args.modulus,
        cocycles: false,
    };
    let report = memscape_cycles::persistence_of_file(&args.file, format, &options)?;
    if args.json {
        print_json(&report)?;
    } else {
        let value = serde_json::to_value(&report)?;
        let mut out = std::io::stdout().lock();
        for (dim, bars) in value["dims"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            writeln!(out, "persistence intervals in dim {dim}:")?;
            for bar in bars.as_array().cloned().unwrap_or_default() {
                let death = if bar[1].is_null() {
                    " ".to_owned()
                } else {
                    bar[1].to_string()
                };
                writeln!(out, " [{},{death})", bar[0])?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn cycles(args: &CyclesArgs) -> anyhow::Result<ExitCode> {
    let mut options = memscape_cycles::CyclesOptions {
        modulus: args.modulus,
        ..args.select.options(args.top)?
    };
    if options.binary.is_none() {
        options.binary = memscape_views::demo::binary_for_name(&args.trace)?;
    }
    let path = memscape_views::demo::resolve_path(&args.trace)?;
    let bar = progress_bar();
    let control = match &bar {
        Some(bar) => {
            let bar = bar.clone();
            memscape_cycles::Control::new().on_progress(move |p| {
                bar.set_position((1000.0 * p.fraction()) as u64);
                bar.set_message(p.phase.label());
            })
        }
        None => memscape_cycles::Control::new(),
    };
    let report = memscape_cycles::analyze_trace_file_with(&path, &options, &control);
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let report = report?;
    let detail = report
        .level_of_detail
        .as_ref()
        .map(memscape_views::cycles::settings::detail_note);
    if args.json {
        if let Some(note) = &detail {
            eprintln!("{note}");
        }
        print_json(&report)?;
    } else {
        let value = serde_json::to_value(&report)?;
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "records {} · windows {} · unique windows {}",
            value["records"].as_array().map_or(0, Vec::len),
            value["windows"],
            value["unique_windows"]
        )?;
        if let Some(note) = &detail {
            writeln!(out, "{note}")?;
        }
        writeln!(
            out,
            "H1 bars: {}",
            value["barcode"].as_array().map_or(0, Vec::len)
        )?;
        for p in value["parameterizations"]
            .as_array()
            .cloned()
            .unwrap_or_default()
        {
            writeln!(
                out,
                "  rank {}: [{}, {}) persistence {} at ε = {}, residual {:.3}",
                p["rank"],
                p["birth"],
                p["death"],
                p["persistence"],
                p["epsilon"],
                p["residual"].as_f64().unwrap_or(f64::NAN)
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A progress bar on stderr (phase and its fraction), or `None` when stderr is not a terminal.
fn progress_bar() -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal as _;
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let style = indicatif::ProgressStyle::with_template(
        "{spinner} {msg:<22} [{bar:32}] {percent:>3}% {elapsed}",
    )
    .ok()?
    .progress_chars("=> ");
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(1000),
        indicatif::ProgressDrawTarget::stderr(),
    )
    .with_style(style);
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    Some(bar)
}

pub fn layout(args: &LayoutArgs) -> anyhow::Result<ExitCode> {
    let files = args
        .graphs
        .iter()
        .map(|p| memscape_views::demo::resolve_path(p).map_err(anyhow::Error::from))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let paths: Vec<&std::path::Path> = files.iter().map(|p| p.as_path()).collect();
    let imported = memscape_graph::load_graphs(&paths)?;
    if !imported.warnings.is_empty() {
        eprint!("{}", imported.warnings);
    }
    let snapshots = imported.document.snapshots();
    let graph = snapshots.get(args.snapshot).with_context(|| {
        format!(
            "--snapshot {}: the input has {} snapshot(s)",
            args.snapshot,
            snapshots.len()
        )
    })?;
    let report = memscape_graph::report::layout_report(
        graph,
        &memscape_graph::layout::LayoutOptions::default(),
        None,
        &mut |_| {},
    );
    if args.json {
        print_json(&report)?;
    } else {
        let value = serde_json::to_value(&report)?;
        writeln!(
            std::io::stdout().lock(),
            "{}: {} nodes, {} edges, {} layers, {} crossings, {:.1} ms",
            value["graph"].as_str().unwrap_or(""),
            value["nodes"].as_array().map_or(0, Vec::len),
            value["edges"].as_array().map_or(0, Vec::len),
            value["layers"],
            value["crossings"],
            value["layout_ms"].as_f64().unwrap_or(0.0)
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use memscape_heap::{HeapNode, Metric};

    fn node(name: &str, bytes: u64, objects: u64, other: bool) -> HeapNode {
        HeapNode {
            name: name.into(),
            bytes,
            objects,
            children: Vec::new(),
            group: (!other).then_some(1),
            merged_from: None,
        }
    }

    /// The printed tree lists each node's children largest first by the chosen metric, "Other"
    /// last, whatever order the views' stable ordering gave them.
    #[test]
    fn a_printed_heap_tree_lists_children_largest_first_and_other_last() {
        let mut root = node("root", 100, 10, false);
        root.children = vec![
            node("Other", 90, 1, true),
            node("small", 10, 8, false),
            node("large", 60, 1, false),
        ];
        let printed = |metric| {
            let mut out = Vec::new();
            super::print_node(&mut out, &root, 0, metric).unwrap();
            let text = String::from_utf8(out).unwrap();
            let names: Vec<String> = text
                .lines()
                .skip(1)
                .map(|l| l.rsplit(' ').next().unwrap_or("").to_string())
                .collect();
            names
        };
        assert_eq!(printed(Metric::Bytes), ["large", "small", "Other"]);
        assert_eq!(printed(Metric::Objects), ["small", "large", "Other"]);
    }
}
