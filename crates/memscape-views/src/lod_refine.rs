//! A big trace's map frames computed off the UI thread (issue 25): the GUI's paint bridge asks a
//! [`LodRefiner`] for a view instead of computing the index's sums (or finding the exact blocks
//! in view) itself, and draws the newest finished picture, stretched and offset to the current
//! view the way map viewers show their last tiles, until the one of the current view lands.
//!
//! One worker thread per refiner (`memscape-lod-refine`, a [`SlotWorker`]) serves the map
//! layers (slots) of one pane, each with a one-request mailbox: a new view replaces the request
//! not yet started (views passed over while the worker was busy are never computed); a picture
//! that lands after a newer view was asked is still shown, stretched, until the newer one lands
//! (a continuous pan refines at the worker's pace instead of waiting for the pan to stop).

use std::sync::Arc;
use std::time::Duration;

use memscape_lod::{FramePath, LodBlock, LodTrace, LodView, PixelSums};

use crate::slot_worker::{Finished, JobControl, SlotJob, SlotWorker};

/// The most blocks in view that are drawn by the exact GPU pipeline rather than summed on the
/// CPU on a software rasterizer: lavapipe rasterizes them on the CPU at ≈ 3 µs a block (a
/// 1920×1080 view of 0.4 M blocks: 1.2 s of CPU), the CPU sums them at ≈ 0.16 µs plus
/// ≈ 0.1 s a frame (BENCHMARKS.md, "Level of detail: frames at 1920×1080 on lavapipe").
pub const EXACT_GPU_MAX_BLOCKS: usize = 50_000;

/// The same on a hardware GPU: its dense path draws them within the 1 GB GPU budget of issue
/// 25 (40–44 bytes a block: 0.8–0.9 GB), far faster than the CPU sums them.
pub const EXACT_GPU_MAX_BLOCKS_HARDWARE: usize = 20_000_000;

/// What the worker computed for a view.
pub enum Drawn {
    /// The index's Eq. 1 sums of the view's pixels.
    Sums(PixelSums),
    /// The view is finer than every level: its blocks, for the exact GPU pipeline.
    Blocks(Vec<LodBlock>),
}

/// A finished picture of one slot: for which request (`generation`) and view (`key`, and
/// `view` through `Deref`).
pub type Refined = Finished<LodView, LodPicture>;

/// What the worker made of a view.
pub struct LodPicture {
    pub view: LodView,
    pub drawn: Drawn,
}

/// A view of the index to draw.
struct LodJob {
    lod: Arc<LodTrace>,
    view: LodView,
    /// The most exact blocks handed to the GPU (`alloc_map::lod::ExactOnGpu`).
    exact_max_blocks: usize,
}

impl SlotJob for LodJob {
    type Key = LodView;
    type Output = LodPicture;
    fn key(&self) -> LodView {
        self.view
    }
    fn units(&self) -> usize {
        0
    }
    /// Runs to the end once started (the index's frames are short): a view passed over while
    /// it ran is still shown, stretched, until the newer one lands.
    fn run(&self, _control: &JobControl) -> Option<LodPicture> {
        Some(LodPicture {
            view: self.view,
            drawn: draw(&self.lod, &self.view, self.exact_max_blocks),
        })
    }
}

/// The worker of one pane's level-of-detail map layers (see the module's documentation);
/// dropping it stops the worker after its current view.
pub struct LodRefiner {
    lod: Arc<LodTrace>,
    worker: SlotWorker<u32, LodJob>,
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
        let worker = SlotWorker::new("memscape-lod-refine", ctx)?;
        Some(Arc::new(Self { lod, worker }))
    }

    /// The index the pictures come from.
    pub fn lod(&self) -> &Arc<LodTrace> {
        &self.lod
    }

    /// Asks for `view` in `slot` (nothing when it is the view asked last or the one finished)
    /// and returns the slot's newest finished picture, of whatever view; views finer than every
    /// level with at most `exact_max_blocks` blocks come as blocks for the GPU
    /// (`alloc_map::lod::ExactOnGpu` of the device). Never waits for the worker.
    pub fn want(&self, slot: u32, view: &LodView, exact_max_blocks: usize) -> Option<Arc<Refined>> {
        let job = LodJob {
            lod: self.lod.clone(),
            view: *view,
            exact_max_blocks,
        };
        self.worker.want(slot, job)
    }

    /// The newest finished picture of `slot` (asking nothing).
    pub fn latest(&self, slot: u32) -> Option<Arc<Refined>> {
        self.worker.latest(slot)
    }

    /// Whether some slot's newest picture is not yet of the view asked last.
    pub fn refining(&self) -> bool {
        self.worker.pending()
    }

    /// Keeps the worker from starting a view for at most `d` (or until [`Self::release`]):
    /// what tests use to show that frames do not wait for it.
    pub fn hold(&self, d: Duration) {
        self.worker.hold(d);
    }

    /// Ends a [`Self::hold`].
    pub fn release(&self) {
        self.worker.release();
    }
}

/// The picture of `view`: its blocks when it is finer than every level and at most
/// `exact_max_blocks` are in view, else the index's sums (the choice `lod::prepare` makes on
/// the spot).
pub fn draw(lod: &LodTrace, view: &LodView, exact_max_blocks: usize) -> Drawn {
    match lod.exact_blocks(view, exact_max_blocks) {
        Some(blocks) => Drawn::Blocks(blocks),
        None => Drawn::Sums(lod.sums(view, FramePath::Lod).0),
    }
}
