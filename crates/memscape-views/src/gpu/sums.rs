//! The paint bridge's map and bar layers whose Eq. 1 sums the pane's worker computes on the CPU
//! (`sums_worker`; a software rasterizer's path for layers of millions of blocks): the view is
//! asked of the worker and the newest sums it finished are drawn, stretched and offset to the
//! view; nothing here waits for it.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use memscape_eq1::{MapView, PixelSums};

use super::frame_key;
use crate::sums_worker::{Summed, SumsJob, SumsWorker};

/// The sums a pane's CPU-summed layers draw, swapped in together: a live snapshot's map,
/// context and bar are asked in one frame and land 100–400 ms apart; each drawn as it landed,
/// the pane showed one layer of the new snapshot beside one of the last, and lavapipe drew the
/// map once per landing. Taken at the start of each frame's prepare ([`Self::begin_frame`]).
#[derive(Default)]
pub(super) struct SumsShown {
    slots: HashMap<u64, Arc<Summed>>,
    /// Since when newer sums wait for the pane's others.
    held_since: Option<Instant>,
}

impl SumsShown {
    /// The worker's newest sums of every slot when none is pending, or when they have waited
    /// the worker's [`SumsWorker::group_hold`]; else those shown (a slot's first sums at once).
    pub(super) fn begin_frame(&mut self, worker: &SumsWorker) {
        let (settled, latest) = worker.latest_all();
        let newer = latest.iter().any(|(slot, d)| {
            self.slots
                .get(slot)
                .is_none_or(|s| s.generation != d.generation)
        });
        if !newer {
            self.held_since = None;
            return;
        }
        let since = *self.held_since.get_or_insert_with(Instant::now);
        if settled || since.elapsed() >= worker.group_hold() {
            if !settled {
                tracing::debug!(
                    "sums swapped in after waiting {:?} for others",
                    since.elapsed()
                );
            }
            self.slots = latest;
            self.held_since = None;
        } else {
            for (slot, d) in latest {
                self.slots.entry(slot).or_insert(d);
            }
        }
    }
}

/// Draws `job`'s sums through `prepare`: the worker's when the pane has one
/// ([`prepare_from_worker`]), else computed here when the frame is not yet prepared for `key`
/// (headless pictures).
#[allow(clippy::too_many_arguments)]
pub(super) fn prepare_cpu(
    worker: Option<&SumsWorker>,
    shown: &SumsShown,
    slot: u64,
    job: SumsJob,
    key: u64,
    prepared: &mut u64,
    prepare: impl FnOnce(&PixelSums),
) {
    if let Some(worker) = worker {
        prepare_from_worker(worker, shown, slot, job, key, prepared, prepare);
        return;
    }
    if *prepared == key {
        return;
    }
    let started = std::time::Instant::now();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    prepare(&job.sums_now(threads));
    tracing::debug!(
        "slot {slot:#x}: {} blocks summed on the CPU at {}x{} in {:?}",
        job.blocks(),
        job.size[0],
        job.size[1],
        started.elapsed()
    );
    *prepared = key;
}

/// Asks `worker` for `job` in `slot` and, when the frame is not yet prepared for what is drawn
/// (`key` with the generation of the sums the pane shows, [`SumsShown`]), hands those sums —
/// stretched to the view when of another — to `prepare`.
pub(super) fn prepare_from_worker(
    worker: &SumsWorker,
    shown: &SumsShown,
    slot: u64,
    job: SumsJob,
    key: u64,
    prepared: &mut u64,
    prepare: impl FnOnce(&PixelSums),
) {
    let (view, size) = (job.view, job.size);
    let landed = worker.want(slot, job);
    // A slot with nothing shown yet draws its first sums as soon as they land.
    let done = shown.slots.get(&slot).cloned().or(landed);
    let key = frame_key(&view, &[key, done.as_ref().map_or(0, |d| d.generation)]);
    if *prepared == key {
        return;
    }
    let sums = summed_for(done.as_deref(), &view.eq1([size[0].max(1), size[1].max(1)]));
    prepare(&sums);
    *prepared = key;
}

/// The sums a worker finished, for `view`: as they are when of `view`, else stretched and
/// offset to it; none yet: no blocks (the background).
fn summed_for<'a>(done: Option<&'a Summed>, view: &MapView) -> Cow<'a, PixelSums> {
    match done {
        Some(d) if d.view == *view => Cow::Borrowed(&d.sums),
        Some(d) => Cow::Owned(d.sums.stretched(&d.view, view)),
        None => Cow::Owned(PixelSums::new(view.width, view.height)),
    }
}
