//! Eq. 1's exact sums of big map and bar layers computed off the UI thread (issue 25): on a
//! software rasterizer a layer of millions of blocks is summed on the CPU
//! (`memscape_render::alloc_map::dense::prefers_cpu_sums`), which takes 0.5–1 s per view. The
//! GUI's paint bridge asks a [`SumsWorker`] for a view instead of summing it in its `prepare`,
//! and draws the newest finished sums — stretched and offset to the current view while the
//! current one is computed, as `lod_refine` does for the level-of-detail index — so that
//! nothing on the UI thread waits for them.
//!
//! One worker thread (`memscape-sums`) per pane serves its layers (slots). Each slot has a
//! one-request mailbox keyed by what the sums depend on (the data, the block range, the view and
//! the pixel size; not where the layer lies on the screen): asking the key asked last, or the key
//! of the sums already finished, computes nothing; a new key replaces the request not yet
//! started and cancels the one being summed for that slot (views passed over are never
//! finished). The worker asks egui for a repaint when sums land; [`SumsWorker::progress`] says
//! how far the running sum is.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use memscape_eq1::{MapView, PixelSums};
use memscape_render::alloc_map::cpu_reference::SumsControl;
use memscape_render::alloc_map::{
    AllocBlockGpu, AllocMapView, BarBlocks, BarSumsJob, BlockTimeGpu,
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
}

impl SumsJob {
    /// What the sums depend on, hashed: equal keys, equal sums.
    pub fn key(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let v = &self.view;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (
            self.source.identity(),
            self.range.start,
            self.range.end,
            self.size,
            self.row.map(|r| r.pixels_per_byte.to_bits()),
        )
            .hash(&mut h);
        (
            v.time_origin,
            v.time_origin_frac.to_bits(),
            v.addr_origin,
            v.addr_origin_frac.to_bits(),
            v.pixels_per_time.to_bits(),
            v.pixels_per_byte.to_bits(),
            v.alpha.to_bits(),
            v.cushion_strength.to_bits(),
        )
            .hash(&mut h);
        (
            format!("{:?}{:?}", v.cushion, v.color_mode),
            v.background_linear.map(f32::to_bits),
        )
            .hash(&mut h);
        h.finish()
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
        self.compute(threads, &SumsControl::default())
            .unwrap_or_else(|| PixelSums::new(self.size[0].max(1), self.size[1].max(1)))
    }

    /// The sums, `None` once cancelled through `control`.
    fn compute(&self, threads: usize, control: &SumsControl) -> Option<PixelSums> {
        let (blocks, times) = self.source.slices();
        BarSumsJob {
            view: self.view,
            range: self.range.clone(),
            row: self.row,
        }
        .sums(blocks, times, self.size, threads, control)
    }

    fn eq1_view(&self) -> MapView {
        self.view.eq1([self.size[0].max(1), self.size[1].max(1)])
    }
}

/// Finished sums of one slot: for which request (`generation`, `key`) and view.
pub struct Summed {
    pub generation: u64,
    pub key: u64,
    /// The view (memscape-eq1's, at the job's size) the sums are of: what
    /// [`PixelSums::stretched`] starts from.
    pub view: MapView,
    pub sums: PixelSums,
}

/// A map layer's slot in the worker (a bar's is [`bar_slot`]).
pub fn map_slot(slot: u32) -> u64 {
    u64::from(slot)
}

/// A bar layer's slot in the worker.
pub fn bar_slot(slot: u32) -> u64 {
    1 << 32 | u64::from(slot)
}

#[derive(Default)]
struct Slot {
    /// The newest key asked, with its generation.
    wanted: Option<(u64, u64)>,
    /// Asked and not yet taken by the worker.
    job: Option<SumsJob>,
    done: Option<Arc<Summed>>,
}

/// The job being summed: its slot, blocks and control.
struct Running {
    slot: u64,
    blocks: usize,
    control: Arc<SumsControl>,
}

#[derive(Default)]
struct State {
    generation: u64,
    slots: HashMap<u64, Slot>,
    running: Option<Running>,
    /// Sums finished (not cancelled) since the worker started.
    finished: u64,
    held_until: Option<Instant>,
    quit: bool,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    ctx: Option<egui::Context>,
    threads: usize,
}

impl Shared {
    fn lock(&self) -> Option<MutexGuard<'_, State>> {
        self.state.lock().ok()
    }
}

/// The worker of one pane's CPU-summed layers (see the module's documentation); dropping it
/// stops the worker (a running sum is cancelled).
pub struct SumsWorker {
    shared: Arc<Shared>,
}

impl Drop for SumsWorker {
    fn drop(&mut self) {
        if let Some(mut s) = self.shared.lock() {
            s.quit = true;
            if let Some(r) = &s.running {
                r.control.cancel.store(true, Ordering::Relaxed);
            }
        }
        self.shared.wake.notify_all();
    }
}

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
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            ctx,
            threads: threads.max(1),
        });
        let worker = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("memscape-sums".into())
            .spawn(move || serve(&worker));
        match spawned {
            Ok(_) => Some(Arc::new(Self { shared })),
            Err(e) => {
                tracing::error!("map sums thread: {e}");
                None
            }
        }
    }

    /// Asks for `job` in `slot` (nothing when its key is the one asked last or the one
    /// finished) and returns the slot's newest finished sums, of whatever view. Never waits.
    pub fn want(&self, slot: u64, job: SumsJob) -> Option<Arc<Summed>> {
        let key = job.key();
        let mut s = self.shared.lock()?;
        let next = s.generation + 1;
        let sl = s.slots.entry(slot).or_default();
        let done = sl.done.clone();
        if sl.wanted.is_some_and(|(_, k)| k == key) {
            return done;
        }
        let finished = done.as_ref().is_some_and(|d| d.key == key);
        sl.wanted = Some((next, key));
        sl.job = (!finished).then_some(job);
        s.generation = next;
        // The sum running for this slot is of a view passed over.
        if let Some(r) = &s.running
            && r.slot == slot
        {
            r.control.cancel.store(true, Ordering::Relaxed);
        }
        drop(s);
        self.shared.wake.notify_all();
        done
    }

    /// Whether some slot's newest sums are not yet of the key asked last.
    pub fn pending(&self) -> bool {
        self.shared.lock().is_some_and(|s| {
            s.slots.values().any(|sl| match (&sl.wanted, &sl.done) {
                (Some((_, k)), Some(d)) => d.key != *k,
                (Some(_), None) => true,
                _ => false,
            })
        })
    }

    /// The running sum's blocks done and in all, when one runs.
    pub fn progress(&self) -> Option<(usize, usize)> {
        let s = self.shared.lock()?;
        let r = s.running.as_ref()?;
        Some((
            r.control.done.load(Ordering::Relaxed).min(r.blocks),
            r.blocks,
        ))
    }

    /// Sums finished since the worker started (cancelled ones are not counted).
    pub fn finished(&self) -> u64 {
        self.shared.lock().map_or(0, |s| s.finished)
    }

    /// The newest finished sums of `slot` (asking nothing).
    pub fn latest(&self, slot: u64) -> Option<Arc<Summed>> {
        self.shared.lock()?.slots.get(&slot)?.done.clone()
    }

    /// Keeps the worker from starting a job for at most `d` (or until [`Self::release`]): what
    /// tests use to show that frames do not wait for it.
    pub fn hold(&self, d: Duration) {
        if let Some(mut s) = self.shared.lock() {
            s.held_until = Some(Instant::now() + d);
        }
    }

    /// Ends a [`Self::hold`].
    pub fn release(&self) {
        if let Some(mut s) = self.shared.lock() {
            s.held_until = None;
        }
        self.shared.wake.notify_all();
    }
}

/// The worker: the oldest asked slot's newest job, one at a time, until the worker is dropped.
fn serve(shared: &Shared) {
    loop {
        let Some(mut s) = shared.lock() else {
            return;
        };
        let (slot, generation, key, job, control) = loop {
            if s.quit {
                return;
            }
            let now = Instant::now();
            match s.held_until {
                Some(t) if t > now => {
                    let Ok((g, _)) = shared.wake.wait_timeout(s, t - now) else {
                        return;
                    };
                    s = g;
                    continue;
                }
                _ => s.held_until = None,
            }
            let next = s
                .slots
                .iter()
                .filter(|(_, sl)| sl.job.is_some())
                .filter_map(|(k, sl)| sl.wanted.map(|(g, key)| (g, key, *k)))
                .min_by_key(|(g, _, _)| *g);
            if let Some((g, key, slot)) = next
                && let Some(job) = s.slots.get_mut(&slot).and_then(|sl| sl.job.take())
            {
                let control = Arc::new(SumsControl::default());
                s.running = Some(Running {
                    slot,
                    blocks: job.blocks(),
                    control: control.clone(),
                });
                break (slot, g, key, job, control);
            }
            let Ok(g) = shared.wake.wait(s) else {
                return;
            };
            s = g;
        };
        drop(s);
        let started = Instant::now();
        let sums = job.compute(shared.threads, &control);
        let Some(mut s) = shared.lock() else {
            return;
        };
        s.running = None;
        let Some(sums) = sums else {
            tracing::debug!(
                "sums of slot {slot:#x} cancelled after {:?}",
                started.elapsed()
            );
            continue;
        };
        tracing::debug!(
            "sums of slot {slot:#x}: {} blocks at {}x{} in {:?}",
            job.blocks(),
            job.size[0],
            job.size[1],
            started.elapsed()
        );
        s.finished += 1;
        let sl = s.slots.entry(slot).or_default();
        if sl.done.as_ref().is_none_or(|d| d.generation < generation) {
            sl.done = Some(Arc::new(Summed {
                generation,
                key,
                view: job.eq1_view(),
                sums,
            }));
        }
        drop(s);
        if let Some(ctx) = &shared.ctx {
            ctx.request_repaint();
        }
    }
}
