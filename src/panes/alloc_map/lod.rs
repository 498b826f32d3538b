//! The allocation-map pane's level-of-detail index (issue 25): for a big trace (see
//! `memscape_views::alloc_map::lod::wants_lod`), the index beside it is opened — built first
//! when missing or stale — on a thread of its own (`memscape-lod`) with its progress shown in
//! the pane; once there, the pane's map layers draw from it (exact GPU pipeline when few blocks
//! are in view, else the index's sums) whenever the settings allow.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use memscape_lod::LodTrace;
use memscape_views::alloc_map::lod::LOD_COLORINGS;

/// Where opening the index is.
#[derive(Clone)]
pub enum LodState {
    /// Building (pass 1: address regions, 2: blocks) or opening.
    Opening {
        pass: u8,
        fraction: f64,
    },
    /// Built by the query engine named (a Parquet trace dataset: `LodQuery`).
    Querying(String),
    Ready(Arc<LodTrace>),
    Failed(String),
}

/// Where a frame's map layers come from (`AllocMapPane::map_source`).
pub enum MapSource {
    /// The level-of-detail index, open.
    Index(Arc<LodTrace>),
    /// Left out of the picture until the index being opened draws them
    /// (`LodOpener::awaited_in`), instead of having every block summed meanwhile.
    AwaitIndex,
    /// The blocks (exact, or summed on the CPU).
    Blocks,
}

impl MapSource {
    /// The index, when the layers draw from it.
    pub fn index(&self) -> Option<Arc<LodTrace>> {
        match self {
            Self::Index(index) => Some(index.clone()),
            Self::AwaitIndex | Self::Blocks => None,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Self::Index(_) => "index",
            Self::AwaitIndex => "awaiting the index",
            Self::Blocks => "blocks",
        }
    }
}

/// The index being opened on its thread; dropping it cancels a build.
pub struct LodOpener {
    state: Arc<Mutex<LodState>>,
    cancel: Arc<AtomicBool>,
    /// The query engine building the index (a Parquet dataset's), named once it is open.
    engine: Option<String>,
    /// The engine's first index (the whole plane's level) is drawn while the finer levels
    /// are built.
    finer: Arc<AtomicBool>,
    /// An index lay beside the trace when opening began: it opens in about a second, so the
    /// map waits for it instead of summing every block meanwhile ([`Self::awaited`]).
    present: bool,
    /// The blocks read of a dataset read in part, said under the status line.
    bound: Option<String>,
    /// The query engine's index (its progress in the status line).
    query: Option<Arc<dyn memscape_views::dataset::LodQuery>>,
    /// Opened once the pane has drawn its first frame from the blocks read: the engine's
    /// queries start then ([`Self::first_frame_drawn`]).
    first_frame: Arc<FirstFrame>,
}

/// A latch the engine's thread waits on until the map pane's first frame is drawn from the
/// blocks read (or [`FIRST_FRAME_WAIT`] passed: a pane never shown draws none), so that on a
/// loaded machine that frame has the cores first; the engine's level replaces it when there.
#[derive(Default)]
pub struct FirstFrame {
    drawn: Mutex<bool>,
    changed: std::sync::Condvar,
}

/// The longest the engine waits for the pane's first frame.
const FIRST_FRAME_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

impl FirstFrame {
    /// Opens the latch; true the first time.
    fn open(&self) -> bool {
        let Ok(mut d) = self.drawn.lock() else {
            return false;
        };
        let first = !*d;
        *d = true;
        self.changed.notify_all();
        first
    }

    fn wait(&self) {
        if let Ok(d) = self.drawn.lock() {
            let _ = self
                .changed
                .wait_timeout_while(d, FIRST_FRAME_WAIT, |drawn| !*drawn);
        }
    }
}

/// The view the engine's first index is made for: the whole plane in a map pane of the
/// default window (1280×800, the map beside the heap tree). Smaller panes draw from the same
/// level (its cells only get smaller than their pixels); bigger ones from the blocks until
/// the whole index is there.
const FIRST_VIEW: [u32; 2] = [640, 480];

/// Sets the opener's state from its thread and wakes the window to show it.
fn publisher(state: Arc<Mutex<LodState>>, ctx: Option<egui::Context>) -> impl Fn(LodState) {
    move |s| {
        if let Ok(mut g) = state.lock() {
            *g = s;
        }
        if let Some(ctx) = &ctx {
            memscape_views::wake(ctx);
        }
    }
}

impl Drop for LodOpener {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

impl LodOpener {
    /// Starts opening the index of `dataset`'s trace file when its map is drawn from one
    /// (else `None`). A dataset read in part (a big `.msc`'s first blocks,
    /// `memscape_views::msc_head`) has the index opened over the blocks read, as a Parquet
    /// dataset's is, so that what is hovered or drawn exactly is a block it holds.
    pub fn start(
        dataset: &Arc<memscape_views::Dataset>,
        ctx: Option<egui::Context>,
    ) -> Option<Self> {
        let t = dataset.alloc_trace()?;
        let path = t.path.clone()?;
        let bound = memscape_views::dataset::trace_extent(dataset).filter(|e| !e.is_whole());
        let over = bound.map(|_| t.trace.clone());
        if !memscape_views::alloc_map::lod::wants_lod(&path) {
            return None;
        }
        let present = LodTrace::index_exists(&path, LOD_COLORINGS);
        let state = Arc::new(Mutex::new(LodState::Opening {
            pass: 1,
            fraction: 0.0,
        }));
        let cancel = Arc::new(AtomicBool::new(false));
        let cn = cancel.clone();
        let set = publisher(state.clone(), ctx);
        let spawned = std::thread::Builder::new()
            .name("memscape-lod".into())
            .spawn(move || {
                let mut last = -1i64;
                let result = LodTrace::open(
                    &path,
                    LOD_COLORINGS,
                    false,
                    &mut |pass, fraction| {
                        let pct = (fraction * 100.0) as i64 + i64::from(pass) * 1000;
                        if pct != last {
                            last = pct;
                            set(LodState::Opening { pass, fraction });
                        }
                    },
                    &cn,
                );
                let result = match (result, over) {
                    (Ok((whole, _)), Some(head)) => LodTrace::with_index(
                        &path,
                        &whole.index_path,
                        memscape_lod::trace_source::TraceFile::from_shared(head),
                    ),
                    (result, _) => result.map(|(whole, _)| whole),
                };
                set(match result {
                    Ok(trace) => LodState::Ready(Arc::new(trace)),
                    Err(e) => LodState::Failed(format!("{}: {e}", path.display())),
                });
            });
        if let Err(e) = spawned {
            tracing::error!("level-of-detail thread: {e}");
            return None;
        }
        Some(Self {
            state,
            cancel,
            engine: None,
            finer: Arc::default(),
            present,
            bound: bound.map(|e| e.bound_line()),
            query: None,
            first_frame: Arc::default(),
        })
    }

    /// Builds the index of the Parquet trace dataset `dataset` was read from on the query
    /// engine (`LodQuery`), on the same thread, when the dataset has one (else `None`).
    pub fn start_query(
        dataset: &Arc<memscape_views::Dataset>,
        ctx: Option<egui::Context>,
    ) -> Option<Self> {
        let t = dataset.alloc_trace()?;
        let query = t.lod_query.clone()?;
        // As for files: a small trace's map is drawn exactly from its blocks (no level applies
        // to a pane's whole plane, and the engine's index would cost a minute of CPU for
        // nothing).
        // A dataset read in part (its first blocks) is always drawn from the index, which
        // holds every block; the bound is said in the status line.
        let bound = memscape_views::dataset::trace_extent(dataset).filter(|e| !e.is_whole());
        if bound.is_none()
            && !memscape_views::alloc_map::lod::wants_lod_blocks(t.trace.blocks.len() as u64)
        {
            return None;
        }
        let engine = query.engine();
        let first_frame = Arc::new(FirstFrame::default());
        let waits = first_frame.clone();
        let state = Arc::new(Mutex::new(LodState::Querying(engine.clone())));
        let cancel = Arc::new(AtomicBool::new(false));
        let finer = Arc::new(AtomicBool::new(false));
        let data = Arc::downgrade(dataset);
        let (cn, finer_flag) = (cancel.clone(), finer.clone());
        let set = publisher(state.clone(), ctx);
        let asked = query.clone();
        let spawned = std::thread::Builder::new()
            .name("memscape-lod".into())
            .spawn(move || {
                // A kept index opens in a moment: nothing to give the first frame's cores.
                if !query.kept() {
                    waits.wait();
                }
                let Some(trace) = data.upgrade() else {
                    return;
                };
                let Some(t) = trace.alloc_trace() else {
                    set(LodState::Failed(String::from(
                        "the dataset holds no allocation trace",
                    )));
                    return;
                };
                // First the whole plane's level (one level of the plan: the picture from the
                // engine in a fraction of the time), then every level.
                let first = match query.open_first(&t.trace, FIRST_VIEW) {
                    Some(Ok(index)) => {
                        tracing::info!(
                            "allocation map: the whole view's level built by {}",
                            query.engine()
                        );
                        finer_flag.store(true, Ordering::Relaxed);
                        set(LodState::Ready(Arc::new(index)));
                        true
                    }
                    Some(Err(e)) => {
                        tracing::warn!("{}: first level: {e}", query.engine());
                        false
                    }
                    None => false,
                };
                if cn.load(Ordering::Relaxed) {
                    return;
                }
                let result = query.open(&t.trace);
                drop(trace);
                finer_flag.store(false, Ordering::Relaxed);
                match result {
                    Ok(index) => {
                        tracing::info!(
                            "allocation map from the level-of-detail index built by {}",
                            query.engine()
                        );
                        set(LodState::Ready(Arc::new(index)));
                    }
                    // The first index stays: only the finer views lack levels (the pane's
                    // paced repaints while "finer levels…" showed see the flag cleared).
                    Err(e) if first => tracing::warn!("{}: finer levels: {e}", query.engine()),
                    Err(e) => set(LodState::Failed(format!("{}: {e}", query.engine()))),
                }
            });
        if let Err(e) = spawned {
            tracing::error!("level-of-detail thread: {e}");
            return None;
        }
        Some(Self {
            state,
            cancel,
            engine: Some(engine),
            finer,
            present: false,
            bound: bound.map(|e| e.bound_line()),
            query: Some(asked),
            first_frame,
        })
    }

    pub fn state(&self) -> Option<LodState> {
        self.state.lock().ok().map(|g| g.clone())
    }

    /// The index, once open.
    pub fn ready(&self) -> Option<Arc<LodTrace>> {
        match self.state()? {
            LodState::Ready(m) => Some(m),
            _ => None,
        }
    }

    /// Whether, in `state` (one reading of [`Self::state`]: the pane decides each frame from
    /// one), the map should wait for the index rather than be drawn from its blocks: an
    /// index was present and is being opened, not rebuilt (a build reports progress; until
    /// then the state is its first). Summing a big trace's every block meanwhile took seconds
    /// of CPU per map layer, on cores the first window's other workers need (issue 25).
    pub fn awaited_in(&self, state: Option<&LodState>) -> bool {
        self.present
            && matches!(
                state,
                Some(LodState::Opening { pass: 1, fraction }) if *fraction == 0.0
            )
    }

    /// Whether the query engine builds the index (a Parquet dataset's; a trace file's opens
    /// beside it, the map awaiting it without summing the blocks: `awaited_in`).
    pub fn queried(&self) -> bool {
        self.engine.is_some()
    }

    /// Lets the engine's queries start: the pane drew its first frame (without them).
    pub fn first_frame_drawn(&self) {
        if self.first_frame.open() && matches!(self.state(), Some(LodState::Querying(_))) {
            tracing::info!(
                "allocation map: first frame drawn from the blocks read, before the query \
                 engine's level"
            );
        }
    }

    /// The bound of the blocks read when the dataset was read in part.
    pub fn bound(&self) -> Option<&str> {
        self.bound.as_deref()
    }

    /// A line for the pane while the index is not there, or failed.
    pub fn status(&self) -> Option<(bool, String)> {
        match self.state()? {
            LodState::Opening { pass, fraction } => Some((
                true,
                format!(
                    "level-of-detail index: {} {:.0} %",
                    if pass <= 1 {
                        "address regions"
                    } else {
                        "blocks"
                    },
                    fraction * 100.0
                ),
            )),
            LodState::Querying(engine) => Some((
                true,
                match self.query.as_ref().and_then(|q| q.progress()) {
                    Some((fraction, stage)) => format!(
                        "level-of-detail tiles computed by the query engine ({engine}): \
                         {stage}, {:.0} %",
                        fraction * 100.0
                    ),
                    None => {
                        format!("level-of-detail tiles computed by the query engine ({engine})…")
                    }
                },
            )),
            LodState::Ready(_) => {
                let finer = self.finer.load(Ordering::Relaxed);
                Some((
                    finer,
                    match &self.engine {
                        Some(engine) if finer => format!(
                            "level-of-detail index computed by the query engine ({engine}); \
                             finer levels…"
                        ),
                        Some(engine) => {
                            format!("level-of-detail index computed by the query engine ({engine})")
                        }
                        None => String::from("level-of-detail index open"),
                    },
                ))
            }
            LodState::Failed(e) => Some((false, format!("level of detail off: {e}"))),
        }
    }
}

/// The index a pane's map layers draw from, and the one that replaces it: a newer index (the
/// engine's first level over the blocks read, the whole index over the first level) is drawn
/// only once its worker has a picture of every map layer the pane shows, asked for before
/// (`ask`), so that the switch shows neither an empty map (the worker's first picture not
/// there yet: the bridge drew the background) nor a frame with some layers from each. On a
/// GPU that resolves levels itself the bridge draws a level at once: the switch is at once.
#[derive(Default)]
pub struct IndexSwitch {
    shown: Option<Arc<LodTrace>>,
    next: Option<NextIndex>,
}

/// The index waiting to be shown, its worker and the map layers (slots) asked of it.
type NextIndex = (Arc<LodTrace>, Option<Arc<LodRefiner>>, Vec<u32>);

use memscape_views::lod_refine::LodRefiner;

impl IndexSwitch {
    /// The index to draw from when `ready` is open (`None`: the blocks), and the worker the
    /// pane takes over with it when it is shown now.
    pub fn pick(
        &mut self,
        ready: &Arc<LodTrace>,
        waits: bool,
    ) -> (Option<Arc<LodTrace>>, Option<Arc<LodRefiner>>) {
        if self.shown.as_ref().is_some_and(|s| Arc::ptr_eq(s, ready)) {
            return (self.shown.clone(), None);
        }
        if !waits {
            self.next = None;
            self.shown = Some(ready.clone());
            return (self.shown.clone(), None);
        }
        match &self.next {
            Some((index, Some(refiner), slots))
                if Arc::ptr_eq(index, ready)
                    && !slots.is_empty()
                    && slots.iter().all(|&k| refiner.latest(k).is_some()) =>
            {
                let refiner = refiner.clone();
                self.next = None;
                self.shown = Some(ready.clone());
                tracing::info!("allocation map: drawn from the newer level-of-detail index");
                (self.shown.clone(), Some(refiner))
            }
            Some((index, ..)) if Arc::ptr_eq(index, ready) => (self.shown.clone(), None),
            _ => {
                self.next = Some((ready.clone(), None, Vec::new()));
                (self.shown.clone(), None)
            }
        }
    }

    /// Whether a newer index waits for its first pictures.
    pub fn switching(&self) -> bool {
        self.next.is_some()
    }

    /// Asks the waiting index's worker for the views of `picture`'s map layers (as the bridge
    /// will ask them, `MapLayer::lod_view`); its landing wakes `ctx`.
    pub fn ask(
        &mut self,
        picture: &memscape_views::Picture,
        pixels_per_point: f32,
        ctx: &egui::Context,
    ) {
        let Some((index, refiner, slots)) = &mut self.next else {
            return;
        };
        if refiner.is_none() {
            *refiner = LodRefiner::new(index.clone(), Some(ctx.clone()));
        }
        let Some(refiner) = refiner else {
            return;
        };
        slots.clear();
        for layer in &picture.layers {
            if let memscape_views::picture::Layer::Map(m) = layer {
                let view = m.lod_view(pixels_per_point);
                refiner.want(
                    m.slot,
                    &view,
                    memscape_views::lod_refine::EXACT_GPU_MAX_BLOCKS,
                );
                slots.push(m.slot);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use memscape_views::dataset::{LoadSource, LodQuery, load};

    /// Counts every index asked of it (and builds none).
    #[derive(Default)]
    struct Counting(AtomicUsize);

    impl LodQuery for Counting {
        fn open(
            &self,
            _trace: &Arc<memscape_trace::Trace>,
        ) -> Result<memscape_lod::LodTrace, String> {
            self.0.fetch_add(1, Ordering::Relaxed);
            Err(String::from("not built here"))
        }

        fn open_first(
            &self,
            _trace: &Arc<memscape_trace::Trace>,
            _size: [u32; 2],
        ) -> Option<Result<memscape_lod::LodTrace, String>> {
            self.0.fetch_add(1, Ordering::Relaxed);
            None
        }

        fn engine(&self) -> String {
            String::from("Counting")
        }
    }

    /// The map pane of a small dataset with a query engine attached (below the block
    /// threshold, as the demo's 32 k blocks are) starts no index build: the pane draws it
    /// exactly from its blocks, so the engine is never asked for an index it would not use.
    #[test]
    fn a_small_datasets_map_pane_asks_the_engine_for_no_index() {
        let demo: &LoadSource = &memscape_views::demo::sources()[0];
        let mut dataset = load(demo, &|_, _| {}).unwrap();
        let blocks = dataset.alloc_trace().unwrap().trace.blocks.len() as u64;
        if memscape_views::alloc_map::lod::wants_lod_blocks(blocks) {
            // MEMSCAPE_ALLOC_MAP_PATH=lod (or a lowered MEMSCAPE_LOD_BLOCKS) forces the index.
            return;
        }
        let counting = Arc::new(Counting::default());
        dataset.alloc_trace_mut().unwrap().lod_query = Some(counting.clone());
        let dataset = Arc::new(dataset);
        assert!(super::LodOpener::start_query(&dataset, None).is_none());
        assert_eq!(counting.0.load(Ordering::Relaxed), 0);
    }
}
