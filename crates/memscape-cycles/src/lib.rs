//! Cycles in memory reference traces (Choudhury, Wang, Rosen, Pascucci: *Topological Analysis
//! and Visualization of Cyclical Behavior in Memory Reference Traces*), CPU only.
//!
//! Pipeline: [`trace`] importers → [`records`] (symbolization with [`symbolize`], filters,
//! symbols) → [`levenshtein`] windows and distances → [`rips`] persistent cohomology →
//! [`circular`] coordinates; [`cycles`] runs it end to end and produces the report of
//! `memscape cycles`, [`views`] gives the cycle views their projection and colour tables,
//! [`rips::PersistenceReport`] is the report of `memscape persistence`.

pub mod bottleneck;
pub mod circular;
pub mod collapse;
pub mod cycles;
pub mod error;
pub mod landmarks;
pub mod laplacian;
pub mod levenshtein;
pub mod metric;
pub mod progress;
pub mod records;
pub mod rips;
pub mod symbolize;
pub mod trace;
pub mod views;

pub use cycles::{
    CyclesOptions, CyclesReport, DEFAULT_BUDGET_SECONDS, DEFAULT_MAX_POINTS, Detail, LevelOfDetail,
    Parameterization, analyze_records, analyze_records_with, analyze_trace_file,
    analyze_trace_file_with,
};
pub use error::CyclesError;
pub use metric::{DistanceMatrix, LowerDistanceMatrix, MatrixFormat, read_matrix};
pub use progress::{CancelToken, Control, Phase, Progress};
pub use records::{RecordFilter, SymbolMode, TraceRecord};
pub use rips::{
    Bar, PersistenceReport, RipsOptions, RipsResult, rips_persistence, rips_persistence_with,
};
pub use trace::{AccessKind, ReferenceTrace, TraceFormat, read_trace};
pub use views::{
    CollapsedFunctions, LineKeys, ViewTables, classical_mds, view_tables, window_projection,
    window_projection_with,
};

/// `memscape persistence FILE [--format F] [--dim D] [--threshold T] [--modulus P]`: reads the
/// matrix and returns its barcode.
pub fn persistence_of_file(
    path: &std::path::Path,
    format: MatrixFormat,
    options: &RipsOptions,
) -> Result<PersistenceReport, CyclesError> {
    let matrix = read_matrix(path, format)?;
    Ok(rips_persistence(&matrix, options)?.barcode)
}
