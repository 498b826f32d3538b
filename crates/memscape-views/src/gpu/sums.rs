//! The paint bridge's map and bar layers whose Eq. 1 sums the pane's worker computes on the CPU
//! (`sums_worker`; a software rasterizer's path for layers of millions of blocks): the view is
//! asked of the worker and the newest sums it finished are drawn, stretched and offset to the
//! view; nothing here waits for it.

use std::borrow::Cow;

use memscape_eq1::{MapView, PixelSums};

use super::frame_key;
use crate::sums_worker::{Summed, SumsJob, SumsWorker};

/// Draws `job`'s sums through `prepare`: the worker's when the pane has one
/// ([`prepare_from_worker`]), else computed here when the frame is not yet prepared for `key`
/// (headless pictures).
pub(super) fn prepare_cpu(
    worker: Option<&SumsWorker>,
    slot: u64,
    job: SumsJob,
    key: u64,
    prepared: &mut u64,
    prepare: impl FnOnce(&PixelSums),
) {
    if let Some(worker) = worker {
        prepare_from_worker(worker, slot, job, key, prepared, prepare);
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
/// (`key` with the generation of the newest sums), hands those sums — stretched to the view when
/// of another — to `prepare`.
pub(super) fn prepare_from_worker(
    worker: &SumsWorker,
    slot: u64,
    job: SumsJob,
    key: u64,
    prepared: &mut u64,
    prepare: impl FnOnce(&PixelSums),
) {
    let (view, size) = (job.view, job.size);
    let done = worker.want(slot, job);
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
