//! A big trace's map frames computed off the UI thread (issue 25): the GUI's paint bridge asks a
//! [`LodRefiner`] for a view instead of computing the index's sums (or finding the exact blocks
//! in view) itself, and draws the newest finished picture, stretched and offset to the current
//! view the way map viewers show their last tiles, until the one of the current view lands.
//!
//! One worker thread per refiner (`memscape-lod-refine`) serves the map layers (slots) of one
//! pane. Each slot has a one-request mailbox: a new view replaces the request not yet started
//! (the newest request wins; views passed over while the worker was busy are never computed).
//! A finished picture replaces the slot's last one only when it is newer (results of an older
//! request than the one shown are dropped); one that lands after a newer view was asked is
//! still shown, stretched, until the newer one lands (a continuous pan refines at the worker's
//! pace instead of waiting for the pan to stop). The worker asks egui for a repaint when a
//! picture lands.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use memscape_lod::{FramePath, LodBlock, LodTrace, LodView, PixelSums};

/// The most blocks in view that are drawn by the exact GPU pipeline (40 bytes each on the GPU:
/// 80 MB) rather than from the index's sums.
pub const EXACT_GPU_MAX_BLOCKS: usize = 2_000_000;

/// What the worker computed for a view.
pub enum Drawn {
    /// The index's Eq. 1 sums of the view's pixels.
    Sums(PixelSums),
    /// The view is finer than every level: its blocks, for the exact GPU pipeline.
    Blocks(Vec<LodBlock>),
}

/// A finished picture of one slot: for which request (`generation`) and view.
pub struct Refined {
    pub generation: u64,
    pub view: LodView,
    pub drawn: Drawn,
}

#[derive(Default)]
struct Slot {
    /// The newest view asked, with its generation.
    wanted: Option<(u64, LodView)>,
    /// Asked and not yet taken by the worker.
    pending: bool,
    /// The newest finished picture.
    done: Option<Arc<Refined>>,
}

#[derive(Default)]
struct State {
    generation: u64,
    slots: HashMap<u32, Slot>,
    /// The worker starts nothing before this instant (tests: [`LodRefiner::hold`]).
    held_until: Option<Instant>,
    quit: bool,
}

struct Shared {
    lod: Arc<LodTrace>,
    state: Mutex<State>,
    wake: Condvar,
    ctx: Option<egui::Context>,
}

impl Shared {
    fn lock(&self) -> Option<MutexGuard<'_, State>> {
        self.state.lock().ok()
    }
}

/// The worker of one pane's level-of-detail map layers (see the module's documentation);
/// dropping it stops the worker after its current view.
pub struct LodRefiner {
    shared: Arc<Shared>,
}

impl Drop for LodRefiner {
    fn drop(&mut self) {
        if let Some(mut s) = self.shared.lock() {
            s.quit = true;
        }
        self.shared.wake.notify_all();
    }
}

impl std::fmt::Debug for LodRefiner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LodRefiner")
            .field("refining", &self.refining())
            .finish()
    }
}

impl LodRefiner {
    /// Starts the worker for `lod`; `ctx` is asked to repaint when a picture lands.
    pub fn new(lod: Arc<LodTrace>, ctx: Option<egui::Context>) -> Option<Arc<Self>> {
        let shared = Arc::new(Shared {
            lod,
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            ctx,
        });
        let worker = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("memscape-lod-refine".into())
            .spawn(move || serve(&worker));
        match spawned {
            Ok(_) => Some(Arc::new(Self { shared })),
            Err(e) => {
                tracing::error!("level-of-detail refine thread: {e}");
                None
            }
        }
    }

    /// The index the pictures come from.
    pub fn lod(&self) -> &Arc<LodTrace> {
        &self.shared.lod
    }

    /// Asks for `view` in `slot` (nothing when it is the view asked last) and returns the
    /// slot's newest finished picture, of whatever view. Never waits for the worker.
    pub fn want(&self, slot: u32, view: &LodView) -> Option<Arc<Refined>> {
        let mut s = self.shared.lock()?;
        let next = s.generation + 1;
        let sl = s.slots.entry(slot).or_default();
        let fresh = sl.wanted.as_ref().is_none_or(|(_, v)| v != view);
        if fresh {
            sl.wanted = Some((next, *view));
            sl.pending = true;
        }
        let done = sl.done.clone();
        if fresh {
            s.generation = next;
            drop(s);
            self.shared.wake.notify_all();
        }
        done
    }

    /// The newest finished picture of `slot` (asking nothing).
    pub fn latest(&self, slot: u32) -> Option<Arc<Refined>> {
        self.shared.lock()?.slots.get(&slot)?.done.clone()
    }

    /// Whether some slot's newest picture is not yet of the view asked last.
    pub fn refining(&self) -> bool {
        self.shared.lock().is_some_and(|s| {
            s.slots.values().any(|sl| match (&sl.wanted, &sl.done) {
                (Some((g, _)), Some(d)) => d.generation < *g,
                (Some(_), None) => true,
                _ => false,
            })
        })
    }

    /// Keeps the worker from starting a view for at most `d` (or until [`Self::release`]):
    /// what tests use to show that frames do not wait for it.
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

/// The worker: the oldest asked slot's newest view, one at a time, until the refiner is
/// dropped.
fn serve(shared: &Shared) {
    loop {
        let Some(mut s) = shared.lock() else {
            return;
        };
        let job = loop {
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
                .iter_mut()
                .filter(|(_, sl)| sl.pending)
                .filter_map(|(k, sl)| sl.wanted.map(|(g, v)| (g, *k, v)))
                .min_by_key(|(g, _, _)| *g);
            if let Some((g, slot, view)) = next {
                if let Some(sl) = s.slots.get_mut(&slot) {
                    sl.pending = false;
                }
                break (g, slot, view);
            }
            let Ok(g) = shared.wake.wait(s) else {
                return;
            };
            s = g;
        };
        drop(s);
        let (generation, slot, view) = job;
        let drawn = draw(&shared.lod, &view);
        let Some(mut s) = shared.lock() else {
            return;
        };
        let sl = s.slots.entry(slot).or_default();
        if sl.done.as_ref().is_none_or(|d| d.generation < generation) {
            sl.done = Some(Arc::new(Refined {
                generation,
                view,
                drawn,
            }));
        }
        drop(s);
        if let Some(ctx) = &shared.ctx {
            ctx.request_repaint();
        }
    }
}

/// The picture of `view`: its blocks when few are in view and it is finer than every level,
/// else the index's sums (the choice `lod::prepare` makes on the spot).
pub fn draw(lod: &LodTrace, view: &LodView) -> Drawn {
    match lod.exact_blocks(view, EXACT_GPU_MAX_BLOCKS) {
        Some(blocks) => Drawn::Blocks(blocks),
        None => Drawn::Sums(lod.sums(view, FramePath::Lod).0),
    }
}
