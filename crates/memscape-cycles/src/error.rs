//! The error type of every fallible entry point of this crate.

use std::path::PathBuf;

use memscape_io::Location;

/// Why an import or an analysis could not be done at all. Recoverable problems (a malformed
/// line among good ones) are counted [`memscape_io::Warnings`] instead.
#[derive(Debug, thiserror::Error)]
pub enum CyclesError {
    #[error(transparent)]
    Input(#[from] memscape_io::InputError),
    #[error(
        "{path}: cannot tell the trace format: expected valgrind lackey (`I  addr,size`, ` L addr,size`), \
         pinatrace (`ip: R addr`) or CSV (`ip,address,kind,size`) in the first lines"
    )]
    UnknownTraceFormat { path: String },
    #[error("{path}: no memory accesses found ({skipped} lines skipped, see the warnings)")]
    EmptyTrace { path: String, skipped: u64 },
    #[error("{at}: {message}")]
    Parse { at: Location, message: String },
    #[error("{path}: cannot symbolize: {message}")]
    Binary { path: PathBuf, message: String },
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
    #[error("problem too large: {0}")]
    TooLarge(String),
    /// The analysis's [`crate::progress::CancelToken`] was cancelled.
    #[error("cancelled")]
    Cancelled,
    /// The time budget of [`crate::Detail::Auto`] passed (the analysis then takes landmarks).
    #[error("the analysis passed its time budget")]
    OverBudget,
}
