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
    use memscape_engine::lod_index::lod_level_for_frame;
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
    // The level the frame is drawn from (small frames from finer cells), as a trace file's
    // whole index picks it.
    let level = lod_level_for_frame(&plan, &view);
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
/// classes, `Engine::lod_index`), opened over the blocks read back for the exact views. A map
/// already attached ([`load_head`]'s) is kept.
#[cfg(feature = "engine")]
pub fn attach(dataset: &mut memscape_views::Dataset, dir: &Path, spec: &str) -> anyhow::Result<()> {
    use anyhow::Context as _;
    use memscape_engine::{Engine, EngineSpec};
    let Some(trace) = dataset.alloc_trace_mut() else {
        return Ok(());
    };
    if trace.lod_query.is_some() {
        return Ok(());
    }
    let spec = EngineSpec::parse(spec)?;
    let engine = Engine::connect(&spec).with_context(|| format!("--engine {spec:?}"))?;
    let opened = engine.open(dir)?;
    trace.lod_query = Some(std::sync::Arc::new(EngineLod::new(
        engine,
        opened,
        dir,
        std::sync::OnceLock::new(),
    )));
    Ok(())
}

/// The GUI's Parquet trace dataset `dir` opened without reading every block: its first
/// `limit` blocks (`memscape_views::dataset::load_trace_head`, the bound the panes state)
/// laid out on the whole dataset's address axis — the engine's (`Engine::lod_plan`), or the
/// one of the index the engine built on an earlier open, kept in the cache directory
/// ([`EngineLod`]) — and the map pane's index from `engine` (the GUI's bounded one). A dataset
/// of at most `limit` blocks is read whole, as before.
#[cfg(feature = "engine")]
pub fn load_head(
    dir: &Path,
    limit: usize,
    engine: memscape_engine::Engine,
    progress: &dyn Fn(f32, &str),
) -> anyhow::Result<memscape_views::Dataset> {
    use memscape_lod::BuildParams;
    let manifest = memscape_parquet::Manifest::read(dir)?;
    let host = manifest.pick_host(dir, None)?;
    let total = manifest.hosts.get(&host).map_or(0, |e| e.rows);
    let opened = engine.open(dir)?;
    let plan = std::sync::OnceLock::new();
    let mut lod = EngineLod::new(engine, opened, dir, plan);
    let ranges = if total > limit as u64 {
        let axis = match lod.cached_axis(total) {
            Some(axis) => axis,
            None => {
                progress(-1.0, "the address axis from the query engine");
                let plan = lod
                    .engine
                    .lod_plan(&lod.dataset, None, &BuildParams::default())?;
                let axis = plan.axis.clone();
                lod.plan = std::sync::OnceLock::from(plan);
                axis
            }
        };
        Some(
            axis.regions
                .iter()
                .map(|r| (r.start, r.end))
                .collect::<Vec<_>>(),
        )
    } else {
        None
    };
    let mut dataset =
        memscape_views::dataset::load_trace_head(dir, limit, ranges.as_deref(), progress)?;
    if let Some(t) = dataset.alloc_trace_mut() {
        t.lod_query = Some(std::sync::Arc::new(lod));
    }
    Ok(dataset)
}

/// The engine's level-of-detail index of one trace dataset; every level of it kept in the cache
/// directory (`memscape_lod::sidecar::locations` of the dataset's manifest, as a trace file's
/// index is kept there), so that the next open draws from it at once.
#[cfg(feature = "engine")]
struct EngineLod {
    engine: memscape_engine::Engine,
    dataset: memscape_engine::Dataset,
    dir: std::path::PathBuf,
    plan: std::sync::OnceLock<memscape_engine::lod::LodPlan>,
    /// Where the whole index is kept (None: no cache directory).
    cached: Option<std::path::PathBuf>,
    /// How far the index being built is (fraction, stage), for the map pane.
    progress: std::sync::Mutex<Option<(f32, String)>>,
}

/// The colouring of the engine's index (its palette by thread), named as memscape-lod names it.
#[cfg(feature = "engine")]
const ENGINE_COLORING: &str = memscape_views::alloc_map::lod::LOD_COLORINGS;

#[cfg(feature = "engine")]
impl EngineLod {
    fn new(
        engine: memscape_engine::Engine,
        dataset: memscape_engine::Dataset,
        dir: &Path,
        plan: std::sync::OnceLock<memscape_engine::lod::LodPlan>,
    ) -> Self {
        let manifest = dir.join(memscape_parquet::MANIFEST);
        // The cache directory's place only: a dataset's directory holds its tables.
        let cached =
            memscape_lod::sidecar::locations(&manifest, &format!("engine.{ENGINE_COLORING}.lod"))
                .into_iter()
                .nth(1);
        Self {
            engine,
            dataset,
            dir: dir.to_path_buf(),
            plan,
            cached,
            progress: std::sync::Mutex::new(None),
        }
    }

    fn set_progress(&self, now: Option<(f32, String)>) {
        if let Ok(mut p) = self.progress.lock() {
            *p = now;
        }
    }

    /// The index kept from an earlier open when it was built from the dataset as it is now
    /// (the manifest's size and time, `blocks` blocks) with the levels laid out now.
    fn cached_index(&self, blocks: u64) -> Option<memscape_lod::LodIndex> {
        let path = self.cached.as_ref()?;
        let index = memscape_lod::LodIndex::open(path).ok()?;
        let now =
            memscape_lod::SourceId::of_file(&self.dir.join(memscape_parquet::MANIFEST), 0, blocks);
        let s = &index.meta.source;
        let current = s.len == now.len
            && s.modified_ns == now.modified_ns
            && s.blocks == blocks
            && index.meta.coloring == ENGINE_COLORING
            && memscape_lod::sidecar::has_current_levels(&index.meta);
        current.then_some(index)
    }

    /// The whole dataset's address axis from the kept index, when current.
    fn cached_axis(&self, blocks: u64) -> Option<memscape_lod::source::AddressAxis> {
        self.cached_index(blocks)
            .map(|index| index.meta.axis.clone())
    }

    /// The kept index opened over `trace`'s blocks, when current.
    fn open_cached(
        &self,
        trace: &std::sync::Arc<memscape_trace::Trace>,
        blocks: u64,
    ) -> Option<memscape_lod::LodTrace> {
        let path = self.cached.as_ref()?;
        self.cached_index(blocks)?;
        let opened = memscape_lod::LodTrace::with_index(
            &self.dir,
            path,
            memscape_lod::trace_source::TraceFile::from_shared(trace.clone()),
        );
        match opened {
            Ok(index) => {
                tracing::info!(
                    "{}: level-of-detail index kept at {}",
                    self.dir.display(),
                    path.display()
                );
                Some(index)
            }
            Err(e) => {
                tracing::warn!("{}: {e}", path.display());
                None
            }
        }
    }

    /// Blocks of the dataset (its manifest's count).
    fn total_blocks(&self) -> Option<u64> {
        let manifest = memscape_parquet::Manifest::read(&self.dir).ok()?;
        let host = manifest.pick_host(&self.dir, None).ok()?;
        manifest.hosts.get(&host).map(|e| e.rows)
    }

    /// The index of the levels `which` of the engine's plan (every level when `None`, else
    /// the view at `first`'s) with the size classes, opened over `trace`'s blocks. `None`: the
    /// whole plane at `first` is finer than every level.
    fn build(
        &self,
        trace: &std::sync::Arc<memscape_trace::Trace>,
        first: Option<[u32; 2]>,
    ) -> Result<Option<memscape_lod::LodTrace>, String> {
        use memscape_engine::lod_index::lod_level_for_frame;
        use memscape_lod::{BuildParams, LodTrace, LodView, SourceId};
        let started = std::time::Instant::now();
        // Planned once: the first level's build and the whole index's share it.
        let plan = match self.plan.get() {
            Some(plan) => plan,
            None => {
                self.set_progress(Some((0.0, String::from("the address axis"))));
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
                match lod_level_for_frame(plan, &whole) {
                    Some(level) => Some(vec![level]),
                    None => return Ok(None),
                }
            }
            None => None,
        };
        // The whole index is written beside its place in the cache and renamed there once
        // complete; the first level's file is mapped once opened, then removed.
        let keep = self.cached.as_ref().filter(|_| first.is_none());
        let index_path = match keep {
            Some(kept) => {
                if let Some(parent) = kept.parent() {
                    let _ = std::fs::create_dir_all(parent);
                }
                kept.with_extension(format!("lod.{}.part", std::process::id()))
            }
            None => std::env::temp_dir().join(format!(
                "memscape-engine-gui-map-{}-{:p}-{}.lod",
                std::process::id(),
                self,
                if first.is_some() { "first" } else { "all" }
            )),
        };
        let source = SourceId::of_file(
            &self.dir.join(memscape_parquet::MANIFEST),
            plan.extent_t.saturating_sub(1),
            plan.blocks,
        );
        let what = if first.is_some() {
            "the whole view's level"
        } else {
            "every level"
        };
        let built = self.engine.lod_index_with(
            &self.dataset,
            None,
            plan,
            which.as_deref(),
            source,
            &index_path,
            &|fraction, stage| self.set_progress(Some((fraction, format!("{what}: {stage}")))),
        );
        self.set_progress(None);
        built.map_err(|e| e.to_string())?;
        let opened_at = match keep {
            Some(kept) if std::fs::rename(&index_path, kept).is_ok() => kept.clone(),
            _ => index_path.clone(),
        };
        let opened = LodTrace::with_index(
            &self.dir,
            &opened_at,
            // The dataset's blocks (those read), shared: not a copy.
            memscape_lod::trace_source::TraceFile::from_shared(trace.clone()),
        );
        if opened_at == index_path {
            let _ = std::fs::remove_file(&index_path);
        }
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
        if let Some(index) = self
            .total_blocks()
            .and_then(|blocks| self.open_cached(trace, blocks))
        {
            return Ok(index);
        }
        self.build(trace, None)?
            .ok_or_else(|| String::from("the engine's plan has no level"))
    }

    fn open_first(
        &self,
        trace: &std::sync::Arc<memscape_trace::Trace>,
        size: [u32; 2],
    ) -> Option<Result<memscape_lod::LodTrace, String>> {
        // A kept index opens at once ([`Self::open`]): no first level to build.
        if self
            .total_blocks()
            .is_some_and(|blocks| self.cached_index(blocks).is_some())
        {
            return None;
        }
        self.build(trace, Some(size)).transpose()
    }

    fn engine(&self) -> String {
        format!("{:?}", self.engine.spec())
    }

    fn kept(&self) -> bool {
        self.total_blocks()
            .is_some_and(|blocks| self.cached_index(blocks).is_some())
    }

    fn progress(&self) -> Option<(f32, String)> {
        self.progress.lock().ok().and_then(|p| p.clone())
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
        // The whole index was kept in the cache directory: not left there by a test.
        let kept = memscape_lod::sidecar::locations(
            &dir.path().join(memscape_parquet::MANIFEST),
            &format!("engine.{}.lod", super::ENGINE_COLORING),
        );
        if let Some(kept) = kept.get(1) {
            let _ = std::fs::remove_file(kept);
        }
    }
}

#[cfg(all(test, feature = "engine"))]
mod head_tests {
    #![allow(clippy::unwrap_used)]
    use memscape_lod::open::FramePath;
    use memscape_lod::{LodTrace, LodView};

    /// Mean error (levels of 255) and the share of pixels within 8 levels, per channel: the
    /// level of detail's error bound (issue 25, memscape-lod's README "Error bound").
    fn compare(a: &[[u8; 4]], b: &[[u8; 4]]) -> (f64, f64) {
        let (mut sum, mut within) = (0u64, 0usize);
        for (p, q) in a.iter().zip(b) {
            let d: Vec<u8> = (0..3).map(|k| p[k].abs_diff(q[k])).collect();
            sum += d.iter().map(|&v| u64::from(v)).sum::<u64>();
            within += usize::from(d.iter().all(|&v| v <= 8));
        }
        (
            sum as f64 / (a.len() * 3) as f64,
            within as f64 / a.len() as f64,
        )
    }

    /// A Parquet trace dataset opened as the GUI opens it, with a bound of a tenth of its
    /// blocks (heaptrack's sqlite trace, 16 windows): only those blocks are read (the read's
    /// count of decoded rows too), the map's scene lies on the whole trace's axis (that of the
    /// same trace opened as `.msc`), and the map the engine's index draws equals the `.msc`'s
    /// map — every block, exactly — within the level of detail's error bound on the views
    /// drawn from a level; the index is kept in the cache directory and the next open takes
    /// the axis from it.
    #[test]
    fn a_trace_dataset_read_in_part_draws_the_msc_map_from_the_engines_index() {
        let sqlite = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/data/heaptrack/sqlite_1M.raw.zst");
        let trace = memscape_trace::load(&sqlite).unwrap();
        let n = trace.blocks.len();
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("sqlite");
        let options = memscape_parquet::trace::TraceWriteOptions {
            windows: 16,
            ..Default::default()
        };
        memscape_parquet::write_trace(&trace, &data, &options).unwrap();
        let msc = dir.path().join("sqlite.msc");
        memscape_trace::msc::write_msc(&trace, &msc).unwrap();
        let kept = memscape_lod::sidecar::locations(
            &data.join(memscape_parquet::MANIFEST),
            &format!("engine.{}.lod", super::ENGINE_COLORING),
        )
        .into_iter()
        .nth(1)
        .unwrap();
        let _ = std::fs::remove_file(&kept);

        let limit = n / 10;
        let engine = memscape_engine::Engine::embedded_bounded(0, 1 << 30).unwrap();
        let dataset = super::load_head(&data, limit, engine, &|_, _| {}).unwrap();
        let extent = memscape_views::dataset::trace_extent(&dataset).unwrap();
        assert_eq!((extent.read, extent.total), (limit, n as u64));
        let t = dataset.alloc_trace().unwrap();
        assert_eq!(t.trace.blocks.len(), limit, "blocks held");
        let whole = memscape_views::dataset::AllocTraceData::new(trace.clone());
        let (scene, whole_scene) = (t.scene.as_ref().unwrap(), whole.scene.as_ref().unwrap());
        assert_eq!(scene.collapsed_extent, whole_scene.collapsed_extent);
        assert_eq!(scene.regions, whole_scene.regions);
        assert_eq!(scene.events_extent, whole_scene.events_extent);

        let query = t.lod_query.clone().unwrap();
        let from_engine = query.open(&t.trace).unwrap();
        assert!(
            kept.is_file(),
            "the index is not kept in the cache directory"
        );
        let (from_msc, _) = LodTrace::open(
            &msc,
            memscape_views::alloc_map::lod::LOD_COLORINGS,
            false,
            &mut |_, _| {},
            &std::sync::atomic::AtomicBool::new(false),
        )
        .unwrap();
        assert_eq!(from_engine.extent(), from_msc.extent());
        let [te, ye] = from_msc.extent();
        let mut from_levels = 0;
        for (w, h) in [(160u32, 90u32), (320, 180)] {
            for (t0, t1, a0, a1) in [(0, te, 0, ye), (te / 3, te / 3 + te / 3, 0, ye)] {
                let view = LodView::fit(t0, t1, a0, a1, w, h);
                let (got, stats) = from_engine.frame(&view, FramePath::Lod);
                if stats.level.is_none() {
                    continue;
                }
                from_levels += 1;
                let (want, _) = from_msc.frame(&view, FramePath::Exact);
                let (mean, within) = compare(&want, &got);
                assert!(mean <= 1.0, "{w}×{h} [{t0},{t1}): mean error {mean}");
                assert!(
                    within >= 0.999,
                    "{w}×{h} [{t0},{t1}): {:.3} % of pixels within 8 levels",
                    within * 100.0
                );
            }
        }
        assert!(from_levels > 0, "no view drawn from a level");

        // Opened again: the kept index gives the axis (no plan) and opens at once.
        let engine = memscape_engine::Engine::embedded_bounded(0, 1 << 30).unwrap();
        let again = super::load_head(&data, limit, engine, &|_, _| {}).unwrap();
        let t = again.alloc_trace().unwrap();
        assert_eq!(
            t.scene.as_ref().unwrap().collapsed_extent,
            whole_scene.collapsed_extent
        );
        let query = t.lod_query.clone().unwrap();
        assert!(query.open_first(&t.trace, [640, 480]).is_none());
        let reopened = query.open(&t.trace).unwrap();
        assert_eq!(reopened.extent(), from_msc.extent());
        let _ = std::fs::remove_file(&kept);
    }
}
