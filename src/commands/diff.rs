//! `memscape diff A B`: two runs' heap trees compared (memscape-heap's `diff`), as text or JSON.

use std::io::Write as _;
use std::process::ExitCode;

use memscape_heap::diff::{DiffReport, HeapRef, Status};

use super::analyses::{heap_options, load_heap, metric_of, print_json};
use crate::cli::DiffArgs;

pub fn run(args: &DiffArgs) -> anyhow::Result<ExitCode> {
    let mut options = heap_options(
        &args.time,
        &args.grouping.group,
        args.grouping.bottom_up,
        &args.sites,
    )?;
    options.measure = args.measure.clone();
    options.prune.metric = metric_of(&args.metric)?;
    let a = load_heap(
        &args.a,
        args.grouping.process.as_deref(),
        &args.grouping.group,
    )?;
    let b = load_heap(
        &args.b,
        args.grouping.process.as_deref(),
        &args.grouping.group,
    )?;
    let report = memscape_heap::diff::diff(HeapRef::from(&a), HeapRef::from(&b), &options)?;
    if args.json {
        print_json(&report)?;
    } else {
        print_text(&report, args.top)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn signed_bytes(v: i64) -> String {
    let text = memscape_views::ramp::bytes(v.unsigned_abs() as f64);
    match v.signum() {
        1 => format!("+{text}"),
        -1 => format!("-{text}"),
        _ => text,
    }
}

fn print_text(report: &DiffReport, top: usize) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    let t = &report.totals;
    for (tag, side) in [("A", &report.a), ("B", &report.b)] {
        writeln!(
            out,
            "{tag}: {} at {} {}{} — {} bytes in {} blocks",
            side.source,
            side.time,
            side.time_unit,
            side.measure
                .as_ref()
                .map(|m| format!(" ({m})"))
                .unwrap_or_default(),
            side.total_bytes,
            side.total_objects
        )?;
    }
    writeln!(
        out,
        "change: {} bytes ({}), {:+} blocks; {} grown, {} shrunk, {} new, {} gone, {} same",
        t.bytes_change,
        signed_bytes(t.bytes_change),
        t.objects_change,
        t.grown,
        t.shrunk,
        t.new,
        t.gone,
        t.same
    )?;
    writeln!(
        out,
        "{:>12} {:>12} {:>13} {:>8} {:>8} {:>8}  {:<6}  site",
        "A bytes", "B bytes", "change", "A blks", "B blks", "change", "status"
    )?;
    for s in report
        .sites
        .iter()
        .filter(|s| s.status != Status::Same)
        .take(top)
    {
        writeln!(
            out,
            "{:>12} {:>12} {:>+13} {:>8} {:>8} {:>+8}  {:<6}  {}",
            s.bytes_a,
            s.bytes_b,
            s.bytes_change,
            s.objects_a,
            s.objects_b,
            s.objects_change,
            s.status.name(),
            s.path.join(" → ")
        )?;
    }
    let changed = report
        .sites
        .iter()
        .filter(|s| s.status != Status::Same)
        .count();
    if changed > top {
        writeln!(
            out,
            "… {} more changed sites (--top N, or --json for all)",
            changed - top
        )?;
    }
    Ok(())
}
