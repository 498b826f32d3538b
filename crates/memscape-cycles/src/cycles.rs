//! End to end: trace → records → windows → Levenshtein metric → H1 barcode → circular
//! coordinates per record. The report is what `memscape cycles --json` prints.

use std::path::{Path, PathBuf};
use std::time::Instant;

use memscape_io::Warnings;
use rayon::prelude::*;

use crate::circular::{CircularCoordinates, Skeleton};
use crate::error::CyclesError;
use crate::landmarks::{Landmarks, maxmin_landmarks};
use crate::levenshtein::{make_windows, window_distances_with};
use crate::metric::DistanceMatrix;
use crate::progress::{Control, Phase};
use crate::records::{RecordFilter, SymbolMode, TraceRecord, record_symbols, select_records};
use crate::rips::{Bar, RipsOptions, Value, rips_persistence_with};
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
    /// All windows, or landmarks when there are too many.
    pub detail: Detail,
}

/// How many unique windows the analysis takes as points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// All unique windows when there are at most `max_points` and the persistence computation
    /// ends within `seconds` (0: no limit); else landmarks: `max_points` of them, halved each
    /// time the computation passes `seconds`.
    Auto { max_points: usize, seconds: u32 },
    /// All unique windows, however many and however long.
    Full,
    /// This many maxmin landmarks (all unique windows when there are no more).
    Landmarks(usize),
}

/// Above this many unique windows, [`Detail::Auto`] takes landmarks (memory: a byte per pair;
/// 20,000 windows of a real trace take about 20 s on two cores, see the crate README).
pub const DEFAULT_MAX_POINTS: usize = 20_000;
/// The default time budget of the persistence computation of [`Detail::Auto`].
pub const DEFAULT_BUDGET_SECONDS: u32 = 30;
/// [`Detail::Auto`] gives up below this many landmarks (the error is then the analysis's).
const MIN_POINTS: usize = 64;

impl Detail {
    /// How many landmarks to take of `unique` windows before any time budget is spent, and
    /// why (`None`: all of them).
    pub fn landmarks_for(self, unique: usize) -> Option<(usize, &'static str)> {
        match self {
            Self::Full => None,
            Self::Auto { max_points, .. } if unique <= max_points.max(1) => None,
            Self::Auto { max_points, .. } => Some((max_points.max(1), "budget")),
            Self::Landmarks(count) if count >= unique => None,
            Self::Landmarks(count) => Some((count.max(1), "requested")),
        }
    }
}

impl Default for Detail {
    fn default() -> Self {
        Self::Auto {
            max_points: DEFAULT_MAX_POINTS,
            seconds: DEFAULT_BUDGET_SECONDS,
        }
    }
}

/// A level of detail: the analysis ran on landmarks instead of every unique window (JSON key
/// `level_of_detail`; absent for a full analysis).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LevelOfDetail {
    /// Landmark windows analysed (maxmin sampling by Levenshtein distance).
    pub landmarks: usize,
    /// Unique windows of the records.
    pub unique_windows: usize,
    /// Largest distance of a window to its nearest landmark.
    pub covering_radius: u32,
    /// The H1 barcode is within this bottleneck distance of the full analysis's (2 × the
    /// covering radius).
    pub bottleneck_bound: u32,
    /// Why: "budget" (more unique windows than `max_points`), "time" (the full analysis, or
    /// one with more landmarks, passed the time budget) or "requested".
    pub reason: String,
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
            detail: Detail::default(),
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
    /// Set when the analysis ran on landmarks (see [`Detail`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level_of_detail: Option<LevelOfDetail>,
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
    analyze_trace_file_with(path, options, &Control::new())
}

/// [`analyze_trace_file`] with progress reports and cancellation.
pub fn analyze_trace_file_with(
    path: &Path,
    options: &CyclesOptions,
    control: &Control,
) -> Result<CyclesReport, CyclesError> {
    let started = Instant::now();
    control.begin(Phase::Reading, 1)?;
    let trace = read_trace(path, options.format)?;
    tracing::info!(
        "{}: {} accesses read in {:.2?}",
        path.display(),
        trace.accesses.len(),
        started.elapsed()
    );
    control.begin(Phase::Selecting, trace.accesses.len() as u64)?;
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
    let mut report = analyze_records_with(records, options, control)?;
    report.warnings = trace.warnings;
    Ok(report)
}

/// Analyzes records that are already selected (filters of `options` are not applied again).
pub fn analyze_records(
    records: Vec<TraceRecord>,
    options: &CyclesOptions,
) -> Result<CyclesReport, CyclesError> {
    analyze_records_with(records, options, &Control::new())
}

/// [`analyze_records`] with progress reports and cancellation.
pub fn analyze_records_with(
    records: Vec<TraceRecord>,
    options: &CyclesOptions,
    control: &Control,
) -> Result<CyclesReport, CyclesError> {
    let started = Instant::now();
    let (symbols, alphabet) = record_symbols(&records, options.symbol)?;
    let windows = make_windows(&symbols, options.window)?;
    let unique = windows.unique_count();
    // The points of the metric: every unique window, or landmarks; under a time budget, half
    // as many landmarks each time the persistence computation passes it.
    let budget = match options.detail {
        Detail::Auto { seconds, .. } if seconds > 0 => {
            Some(std::time::Duration::from_secs(u64::from(seconds)))
        }
        _ => None,
    };
    let mut plan = options.detail.landmarks_for(unique);
    let (landmarks, dist, rips) = loop {
        let landmarks = plan
            .map(|(count, reason)| {
                let mut l = maxmin_landmarks(&windows, alphabet, count, control)?;
                if budget.is_some() {
                    let fewest = l.fewest_with_same_radius();
                    if fewest < l.chosen.len() {
                        l = maxmin_landmarks(&windows, alphabet, fewest, control)?;
                    }
                }
                Ok::<_, CyclesError>((l, reason))
            })
            .transpose()?;
        let point_windows = landmarks.as_ref().map(|(l, _)| l.windows(&windows));
        let dist = window_distances_with(
            point_windows.as_ref().unwrap_or(&windows),
            alphabet,
            control,
        )?;
        tracing::info!(
            "{} records, {} windows, {unique} unique, {} points, distances in {:.2?}",
            records.len(),
            windows.window_to_unique.len(),
            dist.size(),
            started.elapsed()
        );
        control.set_deadline(budget);
        let rips = rips_persistence_with(
            &dist,
            &RipsOptions {
                max_dim: 1,
                threshold: options.threshold,
                modulus: options.modulus,
                cocycles: true,
            },
            control,
        );
        control.set_deadline(None);
        match rips {
            Ok(rips) => break (landmarks, dist, rips),
            Err(CyclesError::OverBudget | CyclesError::TooLarge(_))
                if budget.is_some() && dist.size() / 2 >= MIN_POINTS =>
            {
                tracing::info!(
                    "{} points passed the time budget of {budget:?} (or the memory of a \
                     working column): trying {} landmarks",
                    dist.size(),
                    dist.size() / 2
                );
                plan = Some((dist.size() / 2, "time"));
            }
            Err(e) => return Err(e),
        }
    };
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

    // The top classes, with their ε; classes at the same ε share the 1-skeleton and its
    // solver (the top classes of Levenshtein windows are usually all [2, w) bars).
    let top: Vec<(usize, usize, Bar, Value)> = order
        .iter()
        .copied()
        .take(options.top)
        .enumerate()
        .map(|(rank, k)| {
            let bar = rips.cocycles[k].bar;
            let end = bar.1.unwrap_or(rips.threshold.max(bar.0));
            let epsilon =
                (f64::from(bar.0) + options.epsilon_position * f64::from(end - bar.0)) as Value;
            (rank, k, bar, epsilon)
        })
        .collect();
    let mut epsilons: Vec<Value> = top.iter().map(|t| t.3).collect();
    epsilons.sort_by(f32::total_cmp);
    epsilons.dedup();
    control.begin(Phase::Coordinates, top.len() as u64)?;
    let mut solved: Vec<(usize, Bar, Value, CircularCoordinates)> = Vec::new();
    for epsilon in epsilons {
        let skeleton = Skeleton::new(&dist, epsilon);
        let classes: Vec<_> = top.iter().filter(|t| t.3 == epsilon).collect();
        // The classes are independent: their coordinates are computed in parallel.
        let done: Vec<_> = classes
            .par_iter()
            .map(|&&(rank, k, bar, epsilon)| {
                // The cocycle at ε on the original complex (extended back through the edge
                // collapse when the engine collapsed the filtration), lifted to Z.
                let lifted = rips.lifted_cocycle_at(k, options.modulus, epsilon);
                let cc = skeleton.coordinates(&dist, &lifted, control)?;
                Ok((rank, bar, epsilon, cc))
            })
            .collect::<Result<_, CyclesError>>()?;
        solved.extend(done);
        control.report(Phase::Coordinates, solved.len() as u64, top.len() as u64);
    }
    solved.sort_by_key(|s| s.0);
    let n_windows = windows.window_to_unique.len();
    // Unique window → point of the metric.
    let point_of = |u: usize| -> usize {
        match &landmarks {
            Some((l, _)) => l.nearest[u] as usize,
            None => u,
        }
    };
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
        let window_of = |r: usize| windows.window_to_unique[r.min(n_windows - 1)] as usize;
        let theta: Vec<f64> = (0..records.len())
            .map(|r| cc.theta[point_of(window_of(r))])
            .collect();
        let member_windows: Vec<usize> = (0..n_windows)
            .filter(|&k| cc.members[point_of(windows.window_to_unique[k] as usize)])
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
        windows: n_windows,
        unique_windows: unique,
        level_of_detail: landmarks.map(|(l, reason)| level_of_detail(&l, unique, reason)),
        records,
        barcode,
        parameterizations,
        threshold: rips.threshold,
        warnings: Warnings::new(),
    })
}

fn level_of_detail(l: &Landmarks, unique_windows: usize, reason: &str) -> LevelOfDetail {
    LevelOfDetail {
        landmarks: l.chosen.len(),
        unique_windows,
        covering_radius: l.covering_radius,
        bottleneck_bound: l.bottleneck_bound(),
        reason: reason.to_owned(),
    }
}
