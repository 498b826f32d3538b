//! Processes of a multi-process recording in the views: whether a trace has several, and a
//! dataset restricted to the processes a `--process` setting selects (what `render --process`,
//! tour steps and the panes' process checklist share).

use crate::dataset::{AllocTraceData, Dataset, DatasetContent};
use crate::error::Result;

/// Processes of `trace` with at least one event.
pub fn with_events(trace: &memscape_trace::Trace) -> usize {
    trace.processes.iter().filter(|p| p.events > 0).count()
}

/// Whether more than one process of `trace` has events (the views then split by process).
pub fn several(trace: &memscape_trace::Trace) -> bool {
    with_events(trace) > 1
}

/// `dataset` restricted to the processes `select` names (`PID`, `PID,PID,…` or a regular
/// expression over the program name and command line). Other kinds of data pass unchanged.
pub fn restrict(dataset: &Dataset, select: &str) -> Result<Dataset> {
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
        let known: Vec<String> = trace
            .processes
            .iter()
            .map(|p| format!("{} {}", p.pid, p.name()))
            .collect();
        crate::bail!(
            "--process {select:?} matches none of the {} processes of {}: {}",
            known.len(),
            dataset.name,
            known.join(", ")
        );
    }
    Ok(Dataset {
        name: dataset.name.clone(),
        content: DatasetContent::AllocTrace(Box::new(AllocTraceData::new(
            memscape_trace::process::select_processes(trace, &keep),
        ))),
        links: Default::default(),
    })
}

/// The label of process `index` of `trace`: `pid name`.
pub fn label(trace: &memscape_trace::Trace, index: u32) -> String {
    match trace.processes.get(index as usize) {
        Some(p) if p.pid != 0 => format!("{} {}", p.pid, p.name()),
        Some(p) if !p.name().is_empty() => p.name().to_owned(),
        _ => format!("process {index}"),
    }
}
