//! The cycle views' input: a reference trace of a dataset, filtered and analysed with the
//! user's settings (memscape-cycles), plus the colouring tables.

use memscape_cycles::views::{ViewTables, view_tables};
use memscape_cycles::{CyclesOptions, CyclesReport, ReferenceTrace};

/// The result the views draw.
pub struct CycleAnalysis {
    pub report: CyclesReport,
    pub tables: ViewTables,
}

/// Filters and analyses `trace` (the function and file filters need `options.binary`).
pub fn analyze(
    source: &str,
    trace: &ReferenceTrace,
    options: &CyclesOptions,
) -> anyhow::Result<CycleAnalysis> {
    let records = memscape_cycles::records::select_records(
        trace,
        options.binary.as_deref(),
        options.load_base,
        &options.filter,
    )?;
    anyhow::ensure!(
        !records.is_empty(),
        "{source}: no record is left after the filters (of {} accesses)",
        trace.accesses.len()
    );
    let tables = view_tables(&records, options)?;
    let report = memscape_cycles::analyze_records(records, options)?;
    Ok(CycleAnalysis { report, tables })
}
