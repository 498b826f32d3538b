//! Processes of a multi-process recording in the views: whether a trace has several, and a
//! dataset restricted to the processes a `--process` setting selects (what `render --process`,
//! tour steps and the panes' process checklist share).

use crate::dataset::{AllocTraceData, Dataset, DatasetContent};
use crate::error::Result;

// Kept in memscape-trace so that the colour and bin defaults can ask without importing this
// module (which imports the datasets, which import the allocation map).
pub use memscape_trace::process::{several_with_events as several, with_events};

/// `dataset` restricted to the processes `select` names (`PID`, `PID,PID,…` or a regular
/// expression over the program name and command line). Other kinds of data pass unchanged.
pub fn restrict(dataset: &Dataset, select: &str) -> Result<Dataset> {
    let keep = selection(dataset, select)?;
    restrict_to(dataset, &keep)
}

/// Which processes of `dataset` `select` names (an error names them all when none matches).
pub fn selection(dataset: &Dataset, select: &str) -> Result<Vec<bool>> {
    let DatasetContent::AllocTrace(t) = &dataset.content else {
        crate::bail!(
            "--process {select:?}: {} is not a recording with processes",
            dataset.name
        );
    };
    let trace = &t.trace;
    let filter = memscape_trace::process::ProcessFilter::parse(select).map_err(|e| {
        crate::error::ViewError::msg(format!(
            "--process {select:?}: neither a pid nor a regular expression ({e})"
        ))
    })?;
    let keep = filter.select(trace);
    if !keep.contains(&true) {
        crate::bail!(
            "--process {select:?} matches none of the {} processes of {}: {}",
            trace.processes.len(),
            dataset.name,
            memscape_trace::process::process_list(trace)
        );
    }
    Ok(keep)
}

/// `dataset` with only the processes `keep` marks (its own links: block indices differ).
pub fn restrict_to(dataset: &Dataset, keep: &[bool]) -> Result<Dataset> {
    let Some(t) = dataset.alloc_trace() else {
        crate::bail!("{}: is not a recording with processes", dataset.name);
    };
    Ok(Dataset {
        name: dataset.name.clone(),
        content: DatasetContent::AllocTrace(Box::new(AllocTraceData::new(
            memscape_trace::process::select_processes(&t.trace, keep),
        ))),
        links: Default::default(),
    })
}

/// The trace blocks `keep` retains, in order: block `k` of the restricted trace is block
/// `rows[k]` of the whole one.
pub fn kept_rows(trace: &memscape_trace::Trace, keep: &[bool]) -> Vec<u32> {
    let process = &trace.blocks.process;
    (0..process.len())
        .filter(|&i| keep.get(process[i] as usize).copied().unwrap_or(false))
        .map(|i| i as u32)
        .collect()
}

/// The processes the heap tree shows: those `select` names; else, when several processes
/// have events and the grouping does not split by process, the one with the largest peak
/// (one process's heap, as `heaptree` prints it). `None`: every block.
pub fn heap_selection(
    dataset: &Dataset,
    select: Option<&str>,
    grouped_by_process: bool,
) -> Result<Option<Vec<bool>>> {
    let Some(t) = dataset.alloc_trace() else {
        return match select {
            Some(s) => selection(dataset, s).map(Some),
            None => Ok(None),
        };
    };
    let mut keep = match select {
        Some(s) => selection(dataset, s)?,
        None => vec![true; t.trace.processes.len()],
    };
    let several = t
        .trace
        .processes
        .iter()
        .zip(&keep)
        .filter(|(p, k)| **k && p.events > 0)
        .count()
        > 1;
    if several && !grouped_by_process {
        let best = memscape_trace::process::largest_peak(&t.trace, &keep);
        keep = (0..keep.len()).map(|i| Some(i) == best).collect();
    }
    Ok(keep.contains(&false).then_some(keep))
}

/// The label of process `index` of `trace`: `pid name`.
pub fn label(trace: &memscape_trace::Trace, index: u32) -> String {
    match trace.processes.get(index as usize) {
        Some(p) if p.pid != 0 => format!("{} {}", p.pid, p.name()),
        Some(p) if !p.name().is_empty() => p.name().to_owned(),
        _ => format!("process {index}"),
    }
}
