//! A hovered cluster's glyph asked of the query engine, for a cluster tree that keeps no
//! per-segment totals (an engine's tree past its budget of them: at 25 M samples and more in
//! windows of 1000). The pane asks for the span under the pointer each frame it stays there
//! ([`GlyphQueries::get`]); one `samples-glyph` thread answers the newest span asked (spans
//! asked while a query runs and left before it ends are never queried), caches the last
//! [`CACHED`] answers and wakes the window when one lands. Nothing is held per sample.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, Weak};

use crossbeam_channel::{Receiver, Sender};
use memscape_samples::{Aggregate, ClusterSpan};

use super::query::query_of;
use super::shared::{Outcome, Repaint, SamplesShared};
use crate::dataset::Dataset;

/// Answers kept (a cut shows at most a few dozen clusters; each answer is one aggregate).
pub const CACHED: usize = 64;

#[derive(Default)]
struct State {
    /// The span asked last and not yet taken by the worker.
    wanted: Option<ClusterSpan>,
    /// The span being queried.
    running: Option<ClusterSpan>,
    /// Answers, oldest first.
    done: VecDeque<(ClusterSpan, Outcome<Aggregate>)>,
    /// Bumped when the answers no longer hold (the samples paired with another topology): a
    /// query started before is not kept.
    epoch: u64,
}

/// The glyph queries of one samples dataset (held by its [`SamplesShared`]).
pub struct GlyphQueries {
    state: Mutex<State>,
    wake: Sender<()>,
}

impl GlyphQueries {
    /// The queries and the receiving end of their wake-ups, for [`worker`].
    pub(super) fn new() -> (Self, Receiver<()>) {
        let (wake, wake_rx) = crossbeam_channel::bounded(1);
        let queries = GlyphQueries {
            state: Mutex::new(State::default()),
            wake,
        };
        (queries, wake_rx)
    }

    /// The glyph of `span`: Some when answered (or failed), None while asked (the newest span
    /// asked replaces one not yet started).
    pub fn get(&self, span: &ClusterSpan) -> Option<Outcome<Aggregate>> {
        let mut s = self.state.lock().ok()?;
        if let Some((_, out)) = s.done.iter().find(|(k, _)| k == span) {
            return Some(out.clone());
        }
        if s.running.as_ref() != Some(span) && s.wanted.as_ref() != Some(span) {
            s.wanted = Some(span.clone());
            // Full means a wake-up is pending: the worker reads the newest span anyway.
            let _ = self.wake.try_send(());
        }
        None
    }

    /// Whether a query is running or waiting.
    pub fn pending(&self) -> bool {
        self.state
            .lock()
            .is_ok_and(|s| s.running.is_some() || s.wanted.is_some())
    }

    /// Forgets every answer (the samples now map onto another topology).
    pub(super) fn clear(&self) {
        if let Ok(mut s) = self.state.lock() {
            s.done.clear();
            s.epoch += 1;
        }
    }
}

/// The `samples-glyph` thread: answers the newest span asked until the dataset or its shared
/// state is gone.
pub(super) fn worker(
    dataset: Weak<Dataset>,
    shared: Weak<SamplesShared>,
    wake: Receiver<()>,
    ctx: Repaint,
) {
    while wake.recv().is_ok() {
        loop {
            let (Some(data), Some(me)) = (dataset.upgrade(), shared.upgrade()) else {
                return;
            };
            let Some(glyphs) = me.glyph_queries() else {
                return;
            };
            let Some((span, epoch)) = glyphs.state.lock().ok().and_then(|mut s| {
                let span = s.wanted.take()?;
                s.running = Some(span.clone());
                Some((span, s.epoch))
            }) else {
                break;
            };
            let started = std::time::Instant::now();
            let out = match (query_of(&data), me.base()) {
                (Some(q), Some(Ok(base))) => q
                    .cluster_glyph(&base, &span)
                    .unwrap_or_else(|| Err(String::from("the query states no cluster glyph"))),
                (None, _) => Err(String::from("no query engine")),
                (_, Some(Err(e))) => Err(e),
                (_, None) => Err(String::from("the samples are being mapped")),
            };
            tracing::debug!(
                "cluster glyph {span:?}: {:.0} ms",
                started.elapsed().as_secs_f64() * 1e3
            );
            if let Ok(mut s) = glyphs.state.lock() {
                s.running = None;
                if s.epoch == epoch {
                    if s.done.len() >= CACHED {
                        s.done.pop_front();
                    }
                    s.done.push_back((span, out.map(Arc::new)));
                }
            }
            drop((data, me));
            ctx();
        }
    }
}
