//! The allocation map of a Parquet trace dataset drawn from the query engine (`--features
//! engine`): the engine lays out the level-of-detail index as memscape-lod's builder would
//! (`Engine::lod_plan`), computes the one level a view is drawn from (its tiles, bit for bit
//! the native builder's) and the size classes (`Engine::lod_index`), or, for a view finer than
//! every level, fetches the few small blocks near it (`Engine::lod_small_blocks`); the map then
//! draws from them as from a trace's own index (`memscape_lod::LodTrace::with_index`). Only
//! the call tree, processes and threads are read from the dataset here, never every block.

use std::path::Path;

use memscape_lod::source::AddressAxis;

/// A view's window: `[t0, t1)` events × `[a0, a1)` collapsed bytes.
pub type MapWindow = ([u64; 2], [u64; 2]);

/// What [`open_view`] computed, for the caller's message.
pub struct EngineMapReport {
    pub engine: String,
    /// The level drawn (2^log_tau events × 2^log_sig bytes), or the small blocks fetched for an
    /// exact view.
    pub level: Option<(u8, u8)>,
    pub small_blocks: usize,
    pub seconds: f64,
}

impl EngineMapReport {
    pub fn line(&self) -> String {
        let what = match self.level {
            Some((t, s)) => format!("tiles of level 2^{t} events × 2^{s} bytes"),
            None => format!("{} small blocks in view", self.small_blocks),
        };
        format!(
            "{what} and the size classes computed by {} in {:.2} s",
            self.engine, self.seconds
        )
    }
}

/// Opens the trace dataset `dir` (whose call tree, processes and threads are `skeleton`,
/// `read_trace_skeleton`) on the engine `spec` names and computes what the map of the window
/// `window_of(axis, extent)` picks, at `size` pixels, is drawn from.
#[cfg(feature = "engine")]
pub fn open_view(
    dir: &Path,
    skeleton: memscape_trace::Trace,
    spec: &str,
    window_of: impl FnOnce(&AddressAxis, [u64; 2]) -> anyhow::Result<MapWindow>,
    size: [u32; 2],
) -> anyhow::Result<(memscape_lod::LodTrace, MapWindow, EngineMapReport)> {
    use anyhow::Context as _;
    use memscape_engine::lod_index::lod_level_for;
    use memscape_engine::{Engine, EngineSpec};
    use memscape_lod::{BuildParams, LodTrace, LodView, SourceId};
    let start = std::time::Instant::now();
    let spec = EngineSpec::parse(spec)?;
    let engine = Engine::connect(&spec).with_context(|| format!("--engine {spec:?}"))?;
    let dataset = engine.open(dir)?;
    let plan = engine.lod_plan(&dataset, None, &BuildParams::default())?;
    let window = window_of(&plan.axis, [plan.extent_t, plan.axis.extent])?;
    let ([t0, t1], [a0, a1]) = window;
    let view = LodView::fit(t0, t1, a0, a1, size[0], size[1]);
    let level = lod_level_for(&plan, view.pixel_size());
    let which: Vec<usize> = level.into_iter().collect();
    // The file is mapped once opened, then removed: it belongs to this one picture.
    let index_path = std::env::temp_dir().join(format!(
        "memscape-engine-map-{}-{}.lod",
        std::process::id(),
        start.elapsed().as_nanos()
    ));
    let source = SourceId::of_file(
        &dir.join(memscape_parquet::MANIFEST),
        plan.extent_t.saturating_sub(1),
        plan.blocks,
    );
    let meta = engine.lod_index(
        &dataset,
        None,
        &plan,
        Some(which.as_slice()),
        source,
        &index_path,
    )?;
    let trace = if level.is_none() {
        // `TraceBlocks` reads the small blocks allocated from 2^copy_min_c events before the
        // view's left edge to its right edge.
        let (wt, _) = view.window();
        let reach = 1u64
            .checked_shl(u32::from(meta.copy_min_c))
            .unwrap_or(u64::MAX);
        let lo = (wt[0].max(0.0) as u64).saturating_sub(reach);
        let hi = (wt[1].max(0.0).ceil() as u64).saturating_add(1);
        engine.lod_small_blocks(&dataset, None, &meta, [lo, hi], skeleton)?
    } else {
        skeleton
    };
    let small_blocks = if level.is_none() {
        trace.blocks.len()
    } else {
        0
    };
    let opened = LodTrace::with_index(
        dir,
        &index_path,
        memscape_lod::trace_source::TraceFile::from_trace(trace),
    );
    let _ = std::fs::remove_file(&index_path);
    let lod = opened?;
    let report = EngineMapReport {
        engine: format!("{:?}", engine.spec()),
        level: level.map(|k| (plan.levels[k].log_tau, plan.levels[k].log_sig)),
        small_blocks,
        seconds: start.elapsed().as_secs_f64(),
    };
    Ok((lod, window, report))
}

/// Without the engine, a Parquet trace dataset's map is drawn from its blocks, read in full.
#[cfg(not(feature = "engine"))]
pub fn open_view(
    dir: &Path,
    _skeleton: memscape_trace::Trace,
    _spec: &str,
    _window_of: impl FnOnce(&AddressAxis, [u64; 2]) -> anyhow::Result<MapWindow>,
    _size: [u32; 2],
) -> anyhow::Result<(memscape_lod::LodTrace, MapWindow, EngineMapReport)> {
    anyhow::bail!(
        "{}: the map of a Parquet dataset from the query engine needs a memscape built with \
         `--features engine`",
        dir.display()
    )
}

/// Makes the GUI's map pane of `dataset`, loaded from the Parquet trace dataset `dir`, draw
/// from the level-of-detail index the engine `spec` names builds (every level and the size
/// classes, `Engine::lod_index`), opened over the blocks read back for the exact views.
#[cfg(feature = "engine")]
pub fn attach(dataset: &mut memscape_views::Dataset, dir: &Path, spec: &str) -> anyhow::Result<()> {
    use anyhow::Context as _;
    use memscape_engine::{Engine, EngineSpec};
    let Some(trace) = dataset.alloc_trace_mut() else {
        return Ok(());
    };
    let spec = EngineSpec::parse(spec)?;
    let engine = Engine::connect(&spec).with_context(|| format!("--engine {spec:?}"))?;
    let opened = engine.open(dir)?;
    trace.lod_query = Some(std::sync::Arc::new(EngineLod {
        engine,
        dataset: opened,
        dir: dir.to_path_buf(),
        plan: std::sync::OnceLock::new(),
    }));
    Ok(())
}

#[cfg(feature = "engine")]
struct EngineLod {
    engine: memscape_engine::Engine,
    dataset: memscape_engine::Dataset,
    dir: std::path::PathBuf,
    plan: std::sync::OnceLock<memscape_engine::lod::LodPlan>,
}

#[cfg(feature = "engine")]
impl EngineLod {
    /// The index of the levels `which` of the engine's plan (every level when `None`, else
    /// the view at `first`'s) with the size classes, opened over `trace`'s blocks. `None`: the
    /// whole plane at `first` is finer than every level.
    fn build(
        &self,
        trace: &std::sync::Arc<memscape_trace::Trace>,
        first: Option<[u32; 2]>,
    ) -> Result<Option<memscape_lod::LodTrace>, String> {
        use memscape_engine::lod_index::lod_level_for;
        use memscape_lod::{BuildParams, LodTrace, LodView, SourceId};
        let started = std::time::Instant::now();
        // Planned once: the first level's build and the whole index's share it.
        let plan = match self.plan.get() {
            Some(plan) => plan,
            None => {
                let plan = self
                    .engine
                    .lod_plan(&self.dataset, None, &BuildParams::default())
                    .map_err(|e| e.to_string())?;
                self.plan.get_or_init(|| plan)
            }
        };
        let which = match first {
            Some([w, h]) => {
                let whole = LodView::fit(0, plan.extent_t, 0, plan.axis.extent, w, h);
                match lod_level_for(plan, whole.pixel_size()) {
                    Some(level) => Some(vec![level]),
                    None => return Ok(None),
                }
            }
            None => None,
        };
        // The file is mapped once opened, then removed: it belongs to this pane's index.
        let index_path = std::env::temp_dir().join(format!(
            "memscape-engine-gui-map-{}-{:p}-{}.lod",
            std::process::id(),
            self,
            if first.is_some() { "first" } else { "all" }
        ));
        let source = SourceId::of_file(
            &self.dir.join(memscape_parquet::MANIFEST),
            plan.extent_t.saturating_sub(1),
            plan.blocks,
        );
        self.engine
            .lod_index(
                &self.dataset,
                None,
                plan,
                which.as_deref(),
                source,
                &index_path,
            )
            .map_err(|e| e.to_string())?;
        let opened = LodTrace::with_index(
            &self.dir,
            &index_path,
            // The dataset's blocks, shared: not a copy of the whole trace.
            memscape_lod::trace_source::TraceFile::from_shared(trace.clone()),
        );
        let _ = std::fs::remove_file(&index_path);
        tracing::debug!(
            "{}: {} of {} levels built by {:?} in {:.2} s",
            self.dir.display(),
            which.as_ref().map_or(plan.levels.len(), Vec::len),
            plan.levels.len(),
            self.engine.spec(),
            started.elapsed().as_secs_f64()
        );
        opened.map(Some).map_err(|e| e.to_string())
    }
}

#[cfg(feature = "engine")]
impl memscape_views::dataset::LodQuery for EngineLod {
    fn open(
        &self,
        trace: &std::sync::Arc<memscape_trace::Trace>,
    ) -> Result<memscape_lod::LodTrace, String> {
        self.build(trace, None)?
            .ok_or_else(|| String::from("the engine's plan has no level"))
    }

    fn open_first(
        &self,
        trace: &std::sync::Arc<memscape_trace::Trace>,
        size: [u32; 2],
    ) -> Option<Result<memscape_lod::LodTrace, String>> {
        self.build(trace, Some(size)).transpose()
    }

    fn engine(&self) -> String {
        format!("{:?}", self.engine.spec())
    }
}

#[cfg(all(test, feature = "engine"))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use memscape_lod::open::FramePath;
    use memscape_views::dataset::{LoadSource, load};

    /// The GUI's first index from the engine (the whole plane's level alone) draws the whole
    /// plane from that level, pixel for pixel as the whole index does; then the whole index.
    #[test]
    fn the_engines_first_level_draws_the_whole_plane_as_the_whole_index_does() {
        let demo = memscape_views::demo::sources().remove(0);
        let trace = load(&demo, &|_, _| {}).unwrap();
        let trace = &trace.alloc_trace().unwrap().trace;
        let dir = tempfile::tempdir().unwrap();
        let options = memscape_parquet::trace::TraceWriteOptions {
            windows: 5,
            ..Default::default()
        };
        memscape_parquet::write_trace(trace, dir.path(), &options).unwrap();
        let mut dataset = load(&LoadSource::File(dir.path().to_path_buf()), &|_, _| {}).unwrap();
        super::attach(&mut dataset, dir.path(), "embedded").unwrap();
        let t = dataset.alloc_trace().unwrap();
        let query = t.lod_query.clone().unwrap();
        // The demo is small: at 1920×1080 its whole plane is finer than every level (drawn
        // exactly, no first index); a small picture of it is drawn from a level.
        assert!(query.open_first(&t.trace, [1920, 1080]).is_none());
        let [w, h] = [96, 48];
        let first = query.open_first(&t.trace, [w, h]).unwrap().unwrap();
        let whole = query.open(&t.trace).unwrap();
        assert_eq!(first.meta().levels.len(), 1);
        assert!(whole.meta().levels.len() > 1);
        let view = whole.whole_view(w, h);
        let (a, first_stats) = first.frame(&view, FramePath::Lod);
        let (b, whole_stats) = whole.frame(&view, FramePath::Lod);
        let level = |l: &memscape_lod::LevelDesc| (l.log_tau, l.log_sig);
        assert_eq!(
            first_stats.level.map(|k| level(&first.meta().levels[k])),
            whole_stats.level.map(|k| level(&whole.meta().levels[k])),
        );
        assert!(first_stats.level.is_some(), "drawn from the level");
        assert!(
            a == b,
            "the first index's picture differs from the whole index's"
        );
        // A smaller picture draws from the same level (finer than its pixels), not exactly.
        let small = whole.whole_view(w / 2, h / 2);
        assert!(first.frame(&small, FramePath::Lod).1.level.is_some());
    }
}
