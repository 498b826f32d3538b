//! The cycle analysis off the UI thread: windows, persistent cohomology, circular coordinates
//! and the MDS projection on a named thread, with its progress (stage and overall fraction) and
//! a cancel. The pane polls a [`Job`] every frame; dropping a job cancels it, so a changed
//! setting that starts the next analysis stops the one running.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, TryRecvError};
use memscape_cycles::{CancelToken, Control, CyclesError, CyclesOptions, Phase, Progress};

use super::model::{self, CycleAnalysis};
use crate::dataset::{Dataset, DatasetContent};
use crate::error::ViewError;

/// What the views draw: the analysis and the MDS projection of its windows (`None` when the
/// projection failed: the other views still draw).
pub struct Analysed {
    pub analysis: CycleAnalysis,
    pub projection: Option<Vec<[f64; 2]>>,
}

/// How a job ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// [`Job::cancel`] (or dropping the job) stopped it.
    Cancelled,
    /// The analysis failed: the message with its causes.
    Error(String),
}

pub type Outcome = Result<Arc<Analysed>, Failure>;

/// Where a running job is: the stage it is in and the fraction of the whole job done, which
/// never decreases and is 1 once the job has finished.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobProgress {
    pub stage: &'static str,
    pub fraction: f32,
}

/// The stages of a job, each with its share of the whole: rough shares of the time a trace of a
/// few thousand windows takes (the distances and the reduction dominate).
const STAGES: [(Phase, f32); 9] = [
    (Phase::Reading, 0.0),
    (Phase::Selecting, 0.03),
    (Phase::Landmarks, 0.07),
    (Phase::Distances, 0.25),
    (Phase::Radius, 0.05),
    (Phase::Collapse, 0.12),
    (Phase::H0, 0.1),
    (Phase::H1, 0.25),
    (Phase::Coordinates, 0.08),
];

/// The share of the job the MDS projection takes (after the analysis's stages).
const PROJECTION_SHARE: f32 = 0.05;
pub const PROJECTION_STAGE: &str = "MDS projection";

/// The overall fraction at `progress` of the analysis: the shares of the stages before its
/// phase plus its share times the fraction of the phase done.
fn analysis_fraction(progress: &Progress) -> f32 {
    let mut before = 0.0;
    for (phase, share) in STAGES {
        if phase == progress.phase {
            return before + share * progress.fraction() as f32;
        }
        before += share;
    }
    before
}

/// The progress shared with the worker thread: it only ever moves forward (a time budget that
/// takes landmarks runs some phases again; the bar then waits rather than going back).
#[derive(Debug)]
struct Shared {
    progress: Mutex<JobProgress>,
}

impl Shared {
    fn advance(&self, stage: &'static str, fraction: f32) {
        if let Ok(mut p) = self.progress.lock() {
            p.stage = stage;
            p.fraction = p.fraction.max(fraction.clamp(0.0, 1.0));
        }
    }
}

/// One analysis running on its thread.
pub struct Job {
    token: CancelToken,
    shared: Arc<Shared>,
    outcome: Receiver<Outcome>,
    started: Instant,
}

impl Job {
    /// Starts analysing `dataset`'s trace with `options` (at most `max_records` records after the
    /// filters) on a thread of its own; `on_update` is called (from that thread) at each progress
    /// report and when the job ends: the GUI asks for a repaint there.
    pub fn spawn(
        dataset: Arc<Dataset>,
        options: CyclesOptions,
        max_records: Option<usize>,
        on_update: impl Fn() + Send + Sync + 'static,
    ) -> std::io::Result<Self> {
        let token = CancelToken::new();
        let shared = Arc::new(Shared {
            progress: Mutex::new(JobProgress {
                stage: Phase::Selecting.label(),
                fraction: 0.0,
            }),
        });
        let (tx, rx) = crossbeam_channel::bounded(1);
        let on_update = Arc::new(on_update);
        let control = {
            let (shared, on_update) = (shared.clone(), on_update.clone());
            Control::new()
                .with_cancel(token.clone())
                .on_progress(move |p| {
                    shared.advance(p.phase.label(), analysis_fraction(&p));
                    on_update();
                })
        };
        let projection_control = {
            let (shared, on_update) = (shared.clone(), on_update.clone());
            let base = 1.0 - PROJECTION_SHARE;
            Control::new()
                .with_cancel(token.clone())
                .on_progress(move |p| {
                    // Landmarks, then distances: half of the projection's share each.
                    let half = if p.phase == Phase::Distances {
                        0.5
                    } else {
                        0.0
                    };
                    let within = half + 0.5 * p.fraction() as f32;
                    shared.advance(PROJECTION_STAGE, base + PROJECTION_SHARE * within);
                    on_update();
                })
        };
        let thread_shared = shared.clone();
        std::thread::Builder::new()
            .name(format!("cycles {}", dataset.name))
            .spawn(move || {
                let outcome = run(
                    &dataset,
                    &options,
                    max_records,
                    &control,
                    &projection_control,
                );
                if outcome.is_ok() {
                    thread_shared.advance("done", 1.0);
                }
                // The receiver may be gone (a dropped job): nobody waits for the outcome then.
                let _ = tx.send(outcome);
                on_update();
            })?;
        Ok(Self {
            token,
            shared,
            outcome: rx,
            started: Instant::now(),
        })
    }

    /// Asks the analysis to stop: it ends with [`Failure::Cancelled`] within about 100 ms.
    pub fn cancel(&self) {
        self.token.cancel();
    }

    pub fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }

    pub fn progress(&self) -> JobProgress {
        self.shared.progress.lock().map_or(
            JobProgress {
                stage: "",
                fraction: 0.0,
            },
            |p| *p,
        )
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// The outcome once the job has ended (once: later calls return `None`).
    pub fn poll(&self) -> Option<Outcome> {
        match self.outcome.try_recv() {
            Ok(outcome) => Some(outcome),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Err(Failure::Error(
                "the analysis thread stopped".to_owned(),
            ))),
        }
    }

    /// Waits at most `timeout` for the outcome.
    pub fn wait(&self, timeout: Duration) -> Option<Outcome> {
        self.outcome.recv_timeout(timeout).ok()
    }
}

impl Drop for Job {
    /// A job nobody polls any more stops (its thread ends within about 100 ms).
    fn drop(&mut self) {
        self.token.cancel();
    }
}

fn run(
    dataset: &Dataset,
    options: &CyclesOptions,
    max_records: Option<usize>,
    control: &Control,
    projection_control: &Control,
) -> Outcome {
    let DatasetContent::RefTrace(trace) = &dataset.content else {
        return Err(Failure::Error(format!(
            "{}: not a reference trace",
            dataset.name
        )));
    };
    let analysis = model::analyze_with(&dataset.name, trace, options, max_records, control)
        .map_err(failure)?;
    // The MDS baseline is cheap next to the persistence; computed now so that switching views
    // is instant. Its failure leaves the other views.
    let projection = match memscape_cycles::window_projection_with(
        &analysis.report.records,
        options,
        projection_control,
    ) {
        Ok(p) => Some(p),
        Err(CyclesError::Cancelled) => return Err(Failure::Cancelled),
        Err(e) => {
            tracing::warn!("{}: no MDS projection: {e}", dataset.name);
            None
        }
    };
    Ok(Arc::new(Analysed {
        analysis,
        projection,
    }))
}

fn failure(e: ViewError) -> Failure {
    match e {
        ViewError::Cycles(CyclesError::Cancelled) => Failure::Cancelled,
        e => {
            // The message and its causes, as the binary prints them.
            let mut message = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(cause) = source {
                message.push_str(": ");
                message.push_str(&cause.to_string());
                source = cause.source();
            }
            Failure::Error(message)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_shares_add_up_to_the_whole() {
        let total: f32 = STAGES.iter().map(|s| s.1).sum::<f32>() + PROJECTION_SHARE;
        assert!((total - 1.0).abs() < 1e-5, "{total}");
        let end = |phase| {
            analysis_fraction(&Progress {
                phase,
                done: 1,
                total: 1,
            })
        };
        let mut last = 0.0;
        for (phase, _) in STAGES {
            assert!(end(phase) >= last, "{phase:?}");
            last = end(phase);
        }
        assert!((last - (1.0 - PROJECTION_SHARE)).abs() < 1e-5);
    }
}
