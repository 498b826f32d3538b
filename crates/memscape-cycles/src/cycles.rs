//! End to end: trace → records → windows → Levenshtein metric → H1 barcode → circular
//! coordinates per record. The report is what `memscape cycles --json` prints.

use std::path::{Path, PathBuf};
use std::time::Instant;

use memscape_io::Warnings;
use rayon::prelude::*;

use crate::circular::circular_coordinates_of_lift;
use crate::error::CyclesError;
use crate::levenshtein::{make_windows, window_distances};
use crate::records::{RecordFilter, SymbolMode, TraceRecord, record_symbols, select_records};
use crate::rips::{Bar, RipsOptions, Value, rips_persistence};
use crate::symbolize::LoadBase;
use crate::trace::{TraceFormat, read_trace};

/// Parameters of `memscape cycles`.
#[derive(Debug, Clone, PartialEq)]
pub struct CyclesOptions {
    /// Trace format; detected when `None`.
    pub format: Option<TraceFormat>,
    /// The traced executable, for symbolization and the function/file filters.
    pub binary: Option<PathBuf>,
    pub load_base: LoadBase,
    pub filter: RecordFilter,
    /// Window width w (records per point).
    pub window: usize,
    pub symbol: SymbolMode,
    /// Rips threshold; the enclosing radius when `None`.
    pub threshold: Option<Value>,
    /// Prime p of the coefficients.
    pub modulus: u16,
    /// How many classes, by decreasing persistence, get a parameterization.
    pub top: usize,
    /// Where in the bar ε is taken, as a fraction from birth (0.5: the midpoint).
    pub epsilon_position: f64,
}

impl Default for CyclesOptions {
    fn default() -> Self {
        Self {
            format: None,
            binary: None,
            load_base: LoadBase::Detect,
            filter: RecordFilter::default(),
            window: 10,
            symbol: SymbolMode::Address,
            threshold: None,
            modulus: 47,
            top: 3,
            epsilon_position: 0.5,
        }
    }
}

/// One circle-valued parameterization of the records (JSON keys of `parameterizations`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Parameterization {
    /// 1 for the most persistent class.
    pub rank: usize,
    pub birth: Value,
    /// `null` for a class alive at the threshold.
    pub death: Option<Value>,
    /// `death - birth`; `null` when infinite.
    pub persistence: Option<f64>,
    pub epsilon: Value,
    pub residual: f64,
    /// θ in turns, `[0, 1)`, one per record, aligned with `records`. Record k takes the θ of
    /// the window starting at k (the last w−1 records that of the last window).
    pub theta: Vec<f64>,
    /// Records `0..preamble_end` come before the first window that is a cycle member.
    pub preamble_end: usize,
    /// Records from `postamble_start` on come after the last window that is a cycle member.
    pub postamble_start: usize,
    /// Whether the Z-lift of the cocycle is a cocycle at ε (a warning is logged if not).
    pub lift_is_cocycle: bool,
}

/// The report of `memscape cycles`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CyclesReport {
    pub records: Vec<TraceRecord>,
    pub windows: usize,
    pub unique_windows: usize,
    /// The H1 barcode, in Ripser's order.
    pub barcode: Vec<Bar>,
    pub parameterizations: Vec<Parameterization>,
    /// The Rips threshold used.
    pub threshold: Value,
    /// Counted import warnings.
    pub warnings: Warnings,
}

/// Reads, symbolizes, filters and analyzes a trace file.
pub fn analyze_trace_file(
    path: &Path,
    options: &CyclesOptions,
) -> Result<CyclesReport, CyclesError> {
    let started = Instant::now();
    let trace = read_trace(path, options.format)?;
    tracing::info!(
        "{}: {} accesses read in {:.2?}",
        path.display(),
        trace.accesses.len(),
        started.elapsed()
    );
    let records = select_records(
        &trace,
        options.binary.as_deref(),
        options.load_base,
        &options.filter,
    )?;
    if records.is_empty() {
        return Err(CyclesError::InvalidParameter(format!(
            "{}: no record is left after the filters (of {} accesses)",
            path.display(),
            trace.accesses.len()
        )));
    }
    let mut report = analyze_records(records, options)?;
    report.warnings = trace.warnings;
    Ok(report)
}

/// Analyzes records that are already selected (filters of `options` are not applied again).
pub fn analyze_records(
    records: Vec<TraceRecord>,
    options: &CyclesOptions,
) -> Result<CyclesReport, CyclesError> {
    let started = Instant::now();
    let (symbols, alphabet) = record_symbols(&records, options.symbol)?;
    let windows = make_windows(&symbols, options.window)?;
    let unique = windows.unique_count();
    let dist = window_distances(&windows, alphabet)?;
    tracing::info!(
        "{} records, {} windows, {unique} unique, distances in {:.2?}",
        records.len(),
        windows.window_to_unique.len(),
        started.elapsed()
    );
    let rips = rips_persistence(
        &dist,
        &RipsOptions {
            max_dim: 1,
            threshold: options.threshold,
            modulus: options.modulus,
            cocycles: true,
        },
    )?;
    tracing::info!(
        "H1: {} bars, threshold {}, after {:.2?}",
        rips.barcode.dims[1].len(),
        rips.threshold,
        started.elapsed()
    );
    let barcode = rips.barcode.dims[1].clone();
    let mut order: Vec<usize> = (0..barcode.len()).collect();
    order.sort_by(|&a, &b| {
        barcode[b]
            .persistence()
            .total_cmp(&barcode[a].persistence())
    });

    // The classes are independent: their coordinates are computed in parallel.
    let top: Vec<(usize, usize)> = order
        .iter()
        .copied()
        .take(options.top)
        .enumerate()
        .collect();
    let solved: Vec<_> = top
        .par_iter()
        .map(|&(rank, k)| {
            let cocycle = &rips.cocycles[k];
            let bar = cocycle.bar;
            let end = bar.1.unwrap_or(rips.threshold.max(bar.0));
            let epsilon =
                (f64::from(bar.0) + options.epsilon_position * f64::from(end - bar.0)) as Value;
            // The cocycle at ε on the original complex (extended back through the edge
            // collapse when the engine collapsed the filtration), lifted to Z.
            let lifted = rips.lifted_cocycle_at(k, options.modulus, epsilon);
            let cc = circular_coordinates_of_lift(&dist, lifted.into_iter(), epsilon);
            (rank, bar, epsilon, cc)
        })
        .collect();
    let mut parameterizations = Vec::new();
    for (rank, bar, epsilon, cc) in solved {
        if !cc.lift_is_cocycle {
            tracing::warn!(
                "class {} ([{}, {:?})): the symmetric Z-lift of its Z_{} cocycle is not a cocycle at ε = {epsilon}; θ is a least-squares compromise",
                rank + 1,
                bar.0,
                bar.1,
                options.modulus
            );
        }
        let n_windows = windows.window_to_unique.len();
        let window_of = |r: usize| windows.window_to_unique[r.min(n_windows - 1)] as usize;
        let theta: Vec<f64> = (0..records.len()).map(|r| cc.theta[window_of(r)]).collect();
        let member_windows: Vec<usize> = (0..n_windows)
            .filter(|&k| cc.members[windows.window_to_unique[k] as usize])
            .collect();
        let preamble_end = member_windows.first().copied().unwrap_or(0);
        let postamble_start = member_windows.last().map_or(records.len(), |&k| k + 1);
        parameterizations.push(Parameterization {
            rank: rank + 1,
            birth: bar.0,
            death: bar.1,
            persistence: bar.1.map(|d| f64::from(d) - f64::from(bar.0)),
            epsilon,
            residual: cc.residual,
            theta,
            preamble_end,
            postamble_start,
            lift_is_cocycle: cc.lift_is_cocycle,
        });
    }
    tracing::info!("cycles done in {:.2?}", started.elapsed());
    Ok(CyclesReport {
        windows: windows.window_to_unique.len(),
        unique_windows: unique,
        records,
        barcode,
        parameterizations,
        threshold: rips.threshold,
        warnings: Warnings::new(),
    })
}
