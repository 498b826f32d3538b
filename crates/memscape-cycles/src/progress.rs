//! Progress reports and cancellation of a long analysis.
//!
//! An analysis takes a [`Control`]: it reports what it is doing ([`Phase`], with the work done
//! and to do in that phase) to an optional callback, at most about 20 times a second and at
//! every change of phase, and it checks the control's [`CancelToken`] often enough to return
//! [`CyclesError::Cancelled`] within about 100 ms of [`CancelToken::cancel`] (every Levenshtein
//! row, every few hundred edges of the collapse, every column and addition of the reduction,
//! every conjugate-gradient iteration).
//!
//! ```
//! use memscape_cycles::progress::{CancelToken, Control};
//! let token = CancelToken::new();
//! let control = Control::new()
//!     .with_cancel(token.clone())
//!     .on_progress(|p| eprintln!("{}: {:.0} %", p.phase.label(), 100.0 * p.fraction()));
//! // Another thread (a Cancel button) calls `token.cancel()`; the analysis then stops with
//! // `CyclesError::Cancelled`.
//! assert!(!control.is_cancelled());
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::time::Instant;

use crate::error::CyclesError;

/// The steps of `memscape cycles`, in the order they run (some are skipped: no collapse below
/// its size gate, no landmarks for a full analysis).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Reading and parsing the trace (units: bytes).
    Reading,
    /// Symbolization and filters (units: records).
    Selecting,
    /// Choosing landmark windows for a level of detail (units: landmarks).
    Landmarks,
    /// Levenshtein distances between windows (units: rows of the matrix).
    Distances,
    /// Enclosing radius and the edges below it (units: passes over the pairs).
    Radius,
    /// Edge collapse (units: edges visited, over all passes).
    Collapse,
    /// Edges in filtration order, H0 and the apparent pairs of the edges (units: edges).
    H0,
    /// Reduction of the coboundary matrix in dimension 1 (units: columns).
    H1,
    /// Circular coordinates of the top classes (units: classes).
    Coordinates,
}

impl Phase {
    /// What the user reads beside a progress bar.
    pub fn label(self) -> &'static str {
        match self {
            Self::Reading => "reading the trace",
            Self::Selecting => "symbols and filters",
            Self::Landmarks => "choosing landmarks",
            Self::Distances => "Levenshtein distances",
            Self::Radius => "enclosing radius",
            Self::Collapse => "edge collapse",
            Self::H0 => "H0 and apparent pairs",
            Self::H1 => "H1 reduction",
            Self::Coordinates => "circular coordinates",
        }
    }

    const ALL: [Phase; 9] = [
        Self::Reading,
        Self::Selecting,
        Self::Landmarks,
        Self::Distances,
        Self::Radius,
        Self::Collapse,
        Self::H0,
        Self::H1,
        Self::Coordinates,
    ];

    fn index(self) -> u8 {
        Self::ALL.iter().position(|&p| p == self).unwrap_or(0) as u8
    }
}

/// One progress report: the phase and how far into it the analysis is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Progress {
    pub phase: Phase,
    /// Units done in this phase (see [`Phase`] for the unit), at most `total`.
    pub done: u64,
    /// Units in this phase; 0 when not known.
    pub total: u64,
}

impl Progress {
    /// `done / total` in `[0, 1]` (0 when the total is not known).
    pub fn fraction(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            (self.done as f64 / self.total as f64).clamp(0.0, 1.0)
        }
    }
}

/// A flag another thread sets to stop an analysis; clones share the flag.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks every analysis holding this token to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

type Sink = Box<dyn Fn(Progress) + Send + Sync>;

/// The progress callback and the cancel token of one analysis (shared by its threads).
pub struct Control {
    cancel: CancelToken,
    sink: Option<Sink>,
    started: Instant,
    /// Nanoseconds after `started` of the last report, and its phase (throttling).
    last_report: AtomicU64,
    last_phase: AtomicU8,
    /// Nanoseconds after `started` past which [`Control::check`] fails with
    /// [`CyclesError::OverBudget`]; 0: none (the time budget of a level of detail).
    deadline: AtomicU64,
}

impl Default for Control {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Control {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Control")
            .field("cancelled", &self.is_cancelled())
            .field("reports", &self.sink.is_some())
            .finish()
    }
}

/// Reports closer together than this are dropped (unless the phase changes or it ends).
const REPORT_INTERVAL_NS: u64 = 50_000_000;

impl Control {
    /// No reports, a fresh token (the analysis runs to its end unless that token is cancelled).
    pub fn new() -> Self {
        Self {
            cancel: CancelToken::new(),
            sink: None,
            started: Instant::now(),
            last_report: AtomicU64::new(0),
            last_phase: AtomicU8::new(u8::MAX),
            deadline: AtomicU64::new(0),
        }
    }

    /// From now on, [`Control::check`] fails with [`CyclesError::OverBudget`] once `budget`
    /// has passed (`None`: never).
    pub(crate) fn set_deadline(&self, budget: Option<std::time::Duration>) {
        let at = budget.map_or(0, |b| (self.started.elapsed() + b).as_nanos().max(1) as u64);
        self.deadline.store(at, Ordering::Relaxed);
    }

    /// Stop when `token` is cancelled.
    pub fn with_cancel(mut self, token: CancelToken) -> Self {
        self.cancel = token;
        self
    }

    /// Call `sink` with progress reports (from the analysis's threads, about 20 times a second
    /// at most, and at every change of phase).
    pub fn on_progress(mut self, sink: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.sink = Some(Box::new(sink));
        self
    }

    pub fn cancel_token(&self) -> &CancelToken {
        &self.cancel
    }

    #[inline]
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// `Err(Cancelled)` once the token is cancelled (`Err(OverBudget)` past an internal time
    /// budget).
    #[inline]
    pub fn check(&self) -> Result<(), CyclesError> {
        if self.is_cancelled() {
            return Err(CyclesError::Cancelled);
        }
        let deadline = self.deadline.load(Ordering::Relaxed);
        if deadline != 0 && self.started.elapsed().as_nanos() as u64 > deadline {
            return Err(CyclesError::OverBudget);
        }
        Ok(())
    }

    /// Reports `done` of `total` units of `phase` (throttled).
    pub fn report(&self, phase: Phase, done: u64, total: u64) {
        let Some(sink) = &self.sink else {
            return;
        };
        let now = self.started.elapsed().as_nanos() as u64;
        let index = phase.index();
        let new_phase = self.last_phase.swap(index, Ordering::Relaxed) != index;
        let last = self.last_report.load(Ordering::Relaxed);
        if !new_phase && done < total && now.saturating_sub(last) < REPORT_INTERVAL_NS {
            return;
        }
        // One thread wins each interval; the others drop their report.
        if !new_phase
            && self
                .last_report
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        self.last_report.store(now, Ordering::Relaxed);
        sink(Progress { phase, done, total });
    }

    /// Reports the start of `phase` and checks for cancellation.
    pub fn begin(&self, phase: Phase, total: u64) -> Result<(), CyclesError> {
        self.report(phase, 0, total);
        self.check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn reports_are_throttled_but_phase_changes_and_ends_get_through() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let control = Control::new().on_progress(move |p| {
            if let Ok(mut s) = sink.lock() {
                s.push(p);
            }
        });
        control.report(Phase::Distances, 0, 100);
        for k in 1..100 {
            control.report(Phase::Distances, k, 100);
        }
        control.report(Phase::Distances, 100, 100);
        control.report(Phase::H1, 0, 10);
        let seen = seen.lock().map(|s| s.clone()).unwrap_or_default();
        assert_eq!(seen.first().map(|p| p.done), Some(0));
        assert!(seen.len() <= 5, "{seen:?}");
        assert!(
            seen.iter()
                .any(|p| p.phase == Phase::Distances && p.done == 100)
        );
        assert_eq!(seen.last().map(|p| p.phase), Some(Phase::H1));
        assert_eq!(
            Progress {
                phase: Phase::H1,
                done: 5,
                total: 10
            }
            .fraction(),
            0.5
        );
    }

    #[test]
    fn a_cancelled_token_stops_every_clone() {
        let token = CancelToken::new();
        let control = Control::new().with_cancel(token.clone());
        assert!(control.check().is_ok());
        token.cancel();
        assert!(matches!(control.check(), Err(CyclesError::Cancelled)));
    }
}
