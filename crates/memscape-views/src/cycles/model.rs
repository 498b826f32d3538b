//! The cycle views' input: a reference trace of a dataset, filtered and analysed with the
//! user's settings (memscape-cycles), plus the colouring tables.

use memscape_cycles::views::{ViewTables, view_tables};
use memscape_cycles::{CyclesOptions, CyclesReport, ReferenceTrace};

/// The result the views draw.
pub struct CycleAnalysis {
    pub report: CyclesReport,
    pub tables: ViewTables,
}

/// Filters and analyses `trace` (the function and file filters need `options.binary`), keeping
/// at most `max_records` of the selected records.
pub fn analyze(
    source: &str,
    trace: &ReferenceTrace,
    options: &CyclesOptions,
    max_records: Option<usize>,
) -> crate::error::Result<CycleAnalysis> {
    // The embedded demo trace symbolizes against the binary it traced unless told otherwise
    // (written to the demo cache here, on the analysis thread).
    let demo_binary = match options.binary {
        Some(_) => None,
        None => crate::demo::binary_for_dataset(source)?,
    };
    let mut records = memscape_cycles::records::select_records(
        trace,
        options.binary.as_deref().or(demo_binary.as_deref()),
        options.load_base,
        &options.filter,
    )?;
    if let Some(max) = max_records {
        records.truncate(max.max(1));
    }
    crate::ensure!(
        !records.is_empty(),
        "{source}: no record is left after the filters (of {} accesses)",
        trace.accesses.len()
    );
    let tables = view_tables(&records, options)?;
    let report = memscape_cycles::analyze_records(records, options)?;
    Ok(CycleAnalysis { report, tables })
}
