//! The cycle views' input: a reference trace of a dataset, filtered and analysed with the
//! user's settings (memscape-cycles), plus the colouring tables.

use memscape_cycles::views::{ViewTables, view_tables};
use memscape_cycles::{Control, CyclesOptions, CyclesReport, Phase, ReferenceTrace};

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
    analyze_with(source, trace, options, max_records, &Control::new())
}

/// [`analyze`] with progress reports and cancellation (`CyclesError::Cancelled` once
/// `control`'s token is cancelled).
pub fn analyze_with(
    source: &str,
    trace: &ReferenceTrace,
    options: &CyclesOptions,
    max_records: Option<usize>,
    control: &Control,
) -> crate::error::Result<CycleAnalysis> {
    control.begin(Phase::Selecting, trace.accesses.len() as u64)?;
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
    let report = memscape_cycles::analyze_records_with(records, options, control)?;
    Ok(CycleAnalysis { report, tables })
}
