//! Eq. 1's exact sums of big map and bar layers computed off the UI thread (issue 25): on a
//! software rasterizer a layer of millions of blocks is summed on the CPU
//! (`memscape_render::alloc_map::dense::prefers_cpu_sums`), which takes 0.5–1 s per view. The
//! GUI's paint bridge asks a [`SumsWorker`] for a view instead of summing it in its `prepare`,
//! and draws the newest finished sums — stretched and offset to the current view while the
//! current one is computed, as `lod_refine` does for the level-of-detail index — so that
//! nothing on the UI thread waits for them.
//!
//! One worker thread (`memscape-sums`, a [`SlotWorker`]) per pane serves its layers (slots).
//! Each slot has a one-request mailbox keyed by what the sums depend on (the data, the block
//! range, the view and the pixel size; not where the layer lies on the screen): asking the key
//! asked last, or the key of the sums already finished, computes nothing; a new key replaces
//! the request not yet started and cancels the one being summed for that slot (views passed
//! over are never finished). The worker asks egui for a repaint when sums land; [`SumsWorker::progress`] says
//! how far the running sum is.

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use crate::slot_worker::{Finished, JobControl, SlotJob, SlotWorker};
use memscape_eq1::{MapView, PixelSums};
use memscape_render::alloc_map::{
    AccumulatedSums, AllocBlockGpu, AllocMapView, BarBlocks, BarSumsJob, BlockTimeGpu,
    ContinuedRowSums, GrowingBar,
};

/// The blocks a job sums: a map layer's upload or a bar's intervals (shared, never copied).
#[derive(Clone)]
pub enum SumsSource {
    Map {
        blocks: Arc<Vec<AllocBlockGpu>>,
        times: Arc<Vec<BlockTimeGpu>>,
    },
    Bar(Arc<BarBlocks>),
}

impl SumsSource {
    fn slices(&self) -> (&[AllocBlockGpu], &[BlockTimeGpu]) {
        match self {
            Self::Map { blocks, times } => (blocks, times),
            Self::Bar(b) => (&b.blocks, &b.times),
        }
    }

    /// The identity of the data (its allocations), for the job's key.
    fn identity(&self) -> [usize; 2] {
        match self {
            Self::Map { blocks, times } => {
                [Arc::as_ptr(blocks) as usize, Arc::as_ptr(times) as usize]
            }
            Self::Bar(b) => [Arc::as_ptr(b) as usize, 0],
        }
    }
}

/// Sums to compute: the blocks `range` of `source` in `view` at `size` pixels; with `row`
/// (a bar whose rows are all alike, `BarSumsJob`), that one-pixel-tall view summed and
/// repeated.
#[derive(Clone)]
pub struct SumsJob {
    pub source: SumsSource,
    pub range: Range<usize>,
    pub view: AllocMapView,
    pub size: [u32; 2],
    pub row: Option<AllocMapView>,
    /// A live snapshot's map in its frame (`MapData::accumulate`): the slot's sums of the
    /// blocks that ended are kept under this key and only what changed is summed.
    pub accumulate: Option<crate::picture::Accumulate>,
}

/// `parts` hashed into one key (the standard hasher's fixed keys: equal parts, equal keys).
fn hashed(parts: impl std::hash::Hash) -> u64 {
    use std::hash::Hasher;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    parts.hash(&mut h);
    h.finish()
}

impl SumsJob {
    /// What the sums depend on, hashed: equal keys, equal sums. The data's identity and the
    /// range's end on top of [`Self::continuation_key`], deliberately: a job that continues
    /// the last one (a later snapshot of the same map or bar lineage) is a new request, whose
    /// sums the worker computes, going on from the kept ones.
    pub fn key(&self) -> u64 {
        hashed((
            self.source.identity(),
            self.range.end,
            self.continuation_key(),
        ))
    }

    /// The key under which a slot's kept sums go on from one job to the next (the frame of
    /// [`AccumulatedSums`] and of [`ContinuedRowSums`]): what the pixels of a block depend on
    /// besides the block — the view, the pixel size, the range's start and the accumulation
    /// key — and, for a live bar's row continued from its lineage ([`Self::continued_bar`]),
    /// the lineage: the kept sums start again when either changes.
    fn continuation_key(&self) -> u64 {
        let v = &self.view;
        let pixels = hashed((
            (
                self.range.start,
                self.size,
                self.row.map(|r| r.pixels_per_byte.to_bits()),
                self.accumulate.map(|a| a.key),
            ),
            (
                v.time_origin,
                v.time_origin_frac.to_bits(),
                v.addr_origin,
                v.addr_origin_frac.to_bits(),
                v.pixels_per_time.to_bits(),
                v.pixels_per_byte.to_bits(),
                v.alpha.to_bits(),
                v.cushion_strength.to_bits(),
            ),
            (
                v.cushion,
                v.color_mode,
                v.background_linear.map(f32::to_bits),
            ),
        ));
        match self.continued_bar() {
            Some((growing, _)) => hashed((pixels, growing.lineage)),
            None => pixels,
        }
    }

    /// The blocks it sums.
    pub fn blocks(&self) -> usize {
        let (b, t) = self.source.slices();
        self.range
            .end
            .min(b.len().min(t.len()))
            .saturating_sub(self.range.start)
    }

    /// The sums, computed on this thread on up to `threads` threads.
    pub fn sums_now(&self, threads: usize) -> PixelSums {
        self.compute(threads, &JobControl::default())
            .unwrap_or_else(|| PixelSums::new(self.size[0].max(1), self.size[1].max(1)))
    }

    /// The sums, `None` once cancelled through `control`.
    fn compute(&self, threads: usize, control: &JobControl) -> Option<PixelSums> {
        let (blocks, times) = self.source.slices();
        BarSumsJob {
            view: self.view,
            range: self.range.clone(),
            row: self.row,
        }
        .sums(blocks, times, self.size, threads, control)
    }

    /// A live bar's one-row sums that go on from the last bar of its lineage
    /// ([`ContinuedRowSums`]): the bar's lineage and the row view.
    fn continued_bar(&self) -> Option<(GrowingBar, AllocMapView)> {
        match &self.source {
            SumsSource::Bar(bar) => bar.growing.zip(self.row),
            SumsSource::Map { .. } => None,
        }
    }

    fn eq1_view(&self) -> MapView {
        self.view.eq1([self.size[0].max(1), self.size[1].max(1)])
    }
}

/// Finished sums of one slot: for which request (`generation`, `key`); `view` and `sums`
/// through `Deref`.
pub type Summed = Finished<u64, SumsOf>;

/// Sums and the view (memscape-eq1's, at the job's size) they are of: what
/// [`PixelSums::stretched`] starts from.
#[derive(Debug)]
pub struct SumsOf {
    pub view: MapView,
    pub sums: PixelSums,
}

/// A job as the worker runs it: on up to `threads` threads; with its slot's kept sums when it
/// accumulates.
struct Threaded {
    job: SumsJob,
    threads: usize,
    accumulated: Option<Arc<std::sync::Mutex<KeptSums>>>,
}

/// What a slot keeps from one job to the next: a live map's sums of its ended blocks, or a
/// live bar's row summed up to its closed intervals (one of the two per slot).
#[derive(Debug, Default)]
struct KeptSums {
    map: AccumulatedSums,
    bar: ContinuedRowSums,
}

impl SlotJob for Threaded {
    type Key = u64;
    type Output = SumsOf;
    fn key(&self) -> u64 {
        self.job.key()
    }
    fn units(&self) -> usize {
        self.job.blocks()
    }
    fn run(&self, control: &JobControl) -> Option<SumsOf> {
        let sums = match (&self.accumulated, &self.job.source) {
            (Some(kept), SumsSource::Bar(bar)) if self.job.continued_bar().is_some() => {
                let (growing, row) = self.job.continued_bar()?;
                let started = std::time::Instant::now();
                let mut kept = kept.lock().ok()?;
                let (sums, update) = kept.bar.update(
                    self.job.continuation_key(),
                    &row,
                    self.job.size,
                    &bar.blocks,
                    &bar.times,
                    self.job.range.clone(),
                    growing.closed,
                    growing.reference,
                    control,
                )?;
                tracing::debug!(
                    target: "memscape::live",
                    restarted = update.restarted,
                    kept = update.kept,
                    open = update.open,
                    ms = started.elapsed().as_secs_f64() * 1e3,
                    "bar sums continued"
                );
                sums
            }
            (Some(kept), SumsSource::Map { blocks, times }) => {
                let started = std::time::Instant::now();
                let mut kept = kept.lock().ok()?;
                let (sums, update) = kept.map.update(
                    self.job.continuation_key(),
                    &self.job.view,
                    self.job.size,
                    blocks,
                    times,
                    self.job.range.clone(),
                    self.job.accumulate.map_or(u64::MAX, |a| a.open_from),
                    self.threads,
                    control,
                )?;
                tracing::debug!(
                    target: "memscape::live",
                    restarted = update.restarted,
                    closed = update.closed,
                    open = update.open,
                    ms = started.elapsed().as_secs_f64() * 1e3,
                    "map sums accumulated"
                );
                sums
            }
            _ => self.job.compute(self.threads, control)?,
        };
        Some(SumsOf {
            view: self.job.eq1_view(),
            sums,
        })
    }
}

/// A map layer's slot in the worker (a bar's is [`bar_slot`]).
pub fn map_slot(slot: u32) -> u64 {
    u64::from(slot)
}

/// A bar layer's slot in the worker.
pub fn bar_slot(slot: u32) -> u64 {
    1 << 32 | u64::from(slot)
}

/// The worker of one pane's CPU-summed layers (see the module's documentation); dropping it
/// stops the worker (a running sum is cancelled).
pub struct SumsWorker {
    worker: SlotWorker<u64, Threaded>,
    threads: usize,
    /// The key asked last per slot (for the log of each new request).
    asked: std::sync::Mutex<std::collections::HashMap<u64, u64>>,
    /// Per slot, the sums kept by accumulating jobs (`SumsJob::accumulate`) and by live bars
    /// (`BarBlocks::growing`).
    accumulated: std::sync::Mutex<std::collections::HashMap<u64, Arc<std::sync::Mutex<KeptSums>>>>,
    /// How long a pane keeps drawing its layers' older sums while some of its layers' newer
    /// ones are not yet summed (milliseconds; see [`Self::latest_all`]).
    group_hold_ms: std::sync::atomic::AtomicU64,
}

/// [`SumsWorker::group_hold`] unless set: longer than a live cc1plus snapshot's map, context
/// and bar sums take together on lavapipe (0.3–0.7 s), short enough that a continuous pan, whose
/// layers are asked anew each frame, still refines.
const GROUP_HOLD: Duration = Duration::from_millis(1500);

impl std::fmt::Debug for SumsWorker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SumsWorker")
            .field("pending", &self.pending())
            .finish()
    }
}

impl SumsWorker {
    /// Starts the worker, summing on up to `threads` threads; `ctx` is asked to repaint when
    /// sums land.
    pub fn new(ctx: Option<egui::Context>, threads: usize) -> Option<Arc<Self>> {
        let worker = SlotWorker::new("memscape-sums", ctx)?.waking_once_drained();
        Some(Arc::new(Self {
            worker,
            threads: threads.max(1),
            asked: Default::default(),
            accumulated: Default::default(),
            group_hold_ms: (GROUP_HOLD.as_millis() as u64).into(),
        }))
    }

    /// Asks for `job` in `slot` (nothing when its key is the one asked last or the one
    /// finished) and returns the slot's newest finished sums, of whatever view. Never waits.
    pub fn want(&self, slot: u64, job: SumsJob) -> Option<Arc<Summed>> {
        let threads = self.threads;
        if let Ok(mut asked) = self.asked.lock() {
            let key = job.key();
            if asked.insert(slot, key) != Some(key) {
                tracing::debug!(
                    "slot {slot:#x}: sums of {} blocks at {}x{} asked",
                    job.blocks(),
                    job.size[0],
                    job.size[1]
                );
            }
        }
        let accumulated = (job.accumulate.is_some() || job.continued_bar().is_some())
            .then(|| self.accumulated.lock().ok())
            .flatten()
            .map(|mut kept| kept.entry(slot).or_default().clone());
        self.worker.want(
            slot,
            Threaded {
                job,
                threads,
                accumulated,
            },
        )
    }

    /// Whether some slot's newest sums are not yet of the key asked last.
    pub fn pending(&self) -> bool {
        self.worker.pending()
    }

    /// The running sum's blocks done and in all, when one runs.
    pub fn progress(&self) -> Option<(usize, usize)> {
        self.worker.progress()
    }

    /// Sums finished since the worker started (cancelled ones are not counted).
    pub fn finished(&self) -> u64 {
        self.worker.finished()
    }

    /// Every slot's newest finished sums, and whether none is pending, read together: the
    /// paint bridge swaps a pane's layers' sums in together, when none is pending (so that a
    /// frame shows no layer of a new live snapshot beside one of the last), or once it has
    /// waited [`Self::group_hold`] for them.
    pub fn latest_all(&self) -> (bool, std::collections::HashMap<u64, Arc<Summed>>) {
        self.worker.latest_all()
    }

    /// How long a pane draws its layers' older sums while some are not yet summed.
    pub fn group_hold(&self) -> Duration {
        Duration::from_millis(
            self.group_hold_ms
                .load(std::sync::atomic::Ordering::Relaxed),
        )
    }

    /// Sets [`Self::group_hold`] (tests: long, so that a slow machine never lets one go).
    pub fn set_group_hold(&self, d: Duration) {
        self.group_hold_ms.store(
            d.as_millis().min(u128::from(u64::MAX)) as u64,
            std::sync::atomic::Ordering::Relaxed,
        );
    }

    /// The newest finished sums of `slot` (asking nothing).
    pub fn latest(&self, slot: u64) -> Option<Arc<Summed>> {
        self.worker.latest(slot)
    }

    /// Keeps the worker from starting a job for at most `d` (or until [`Self::release`]): what
    /// tests use to show that frames do not wait for it.
    pub fn hold(&self, d: Duration) {
        self.worker.hold(d);
    }

    /// Ends a [`Self::hold`].
    pub fn release(&self) {
        self.worker.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::picture::Accumulate;

    /// A live bar of `lineage` whose intervals `..closed` are closed.
    fn live_bar(lineage: u64, closed: usize) -> SumsSource {
        SumsSource::Bar(Arc::new(BarBlocks {
            growing: Some(GrowingBar {
                lineage,
                closed,
                reference: 1 << 20,
            }),
            ..BarBlocks::default()
        }))
    }

    /// `source`'s blocks `..end` in an 800 × 40 view of events `t0..t0 + 1000`, summed as one
    /// row (a one-bin bar) when `row`.
    fn job(source: SumsSource, end: usize, t0: u64, row: bool) -> SumsJob {
        SumsJob {
            source,
            range: 0..end,
            view: AllocMapView::fit(t0, t0 + 1000, 0, 4096, 800, 40),
            size: [800, 40],
            row: row.then(|| AllocMapView::fit(t0, t0 + 1000, 0, 4096, 800, 1)),
            accumulate: None,
        }
    }

    #[test]
    fn a_live_bar_continued_by_its_next_snapshot_keeps_its_continuation_key() {
        let first = job(live_bar(7, 10), 12, 0, true);
        let next = job(live_bar(7, 20), 25, 0, true);
        assert!(first.continued_bar().is_some());
        assert_eq!(first.continuation_key(), next.continuation_key());
        // A new request all the same: its sums are computed, going on from the kept ones.
        assert_ne!(first.key(), next.key());
        // Another lineage (a bar recoloured or started anew) or another view starts again.
        let recoloured = job(live_bar(8, 10), 12, 0, true);
        assert_ne!(first.continuation_key(), recoloured.continuation_key());
        let panned = job(live_bar(7, 20), 25, 1, true);
        assert_ne!(first.continuation_key(), panned.continuation_key());
        let mut resized = job(live_bar(7, 20), 25, 0, true);
        resized.size = [800, 41];
        assert_ne!(first.continuation_key(), resized.continuation_key());
    }

    #[test]
    fn a_live_map_continued_by_its_next_snapshot_keeps_its_continuation_key() {
        // Each snapshot's arrays are allocations of their own (the key's data identity).
        let map = || SumsSource::Map {
            blocks: Arc::new(Vec::new()),
            times: Arc::new(Vec::new()),
        };
        let accumulating = |mut job: SumsJob, key: u64| {
            job.accumulate = Some(Accumulate {
                key,
                open_from: 900,
            });
            job
        };
        let first = accumulating(job(map(), 3, 0, false), 5);
        let next = accumulating(job(map(), 4, 0, false), 5);
        assert!(first.continued_bar().is_none());
        assert_eq!(first.continuation_key(), next.continuation_key());
        assert_ne!(first.key(), next.key());
        let relaid = accumulating(job(map(), 4, 0, false), 6);
        assert_ne!(first.continuation_key(), relaid.continuation_key());
        let panned = accumulating(job(map(), 4, 1, false), 5);
        assert_ne!(first.continuation_key(), panned.continuation_key());
    }
}
