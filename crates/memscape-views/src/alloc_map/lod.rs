//! The allocation map of a big trace drawn from its level-of-detail index (memscape-lod, issue
//! 25): where the map's draw path is chosen, beside the exact pipelines' raster and dense paths.
//!
//! `MEMSCAPE_ALLOC_MAP_PATH` picks the path: `lod` forces the index, `raster`, `dense` and
//! `exact` the exact pipelines (every block uploaded); unset, a trace is drawn from its index when
//! one exists or when it is a mappable `.msc` of more than [`lod_block_threshold`] blocks.
//!
//! A map layer whose [`MapData`] carries a [`LodTrace`] is drawn per frame by [`prepare`]: when the
//! view is finer than every level of the index and holds at most [`ExactOnGpu::of`] the device
//! blocks ([`EXACT_GPU_MAX_BLOCKS`] on a software rasterizer, [`EXACT_GPU_MAX_BLOCKS_HARDWARE`]
//! by the dense path on a hardware GPU), those blocks (found through the index) go through the
//! exact GPU pipeline, the same draw as a small trace's; otherwise the index's Eq. 1 sums are
//! computed on the CPU, in work bounded by the view, written into the frame's accumulation
//! targets and resolved on the GPU like any frame. `memscape render`, tours and the GUI's paint
//! bridge all draw map layers this way.

use std::path::Path;
use std::sync::Arc;

use memscape_lod::{FramePath, LodTrace, LodView};
use memscape_render::alloc_map::{
    AccumPath, AllocBlockGpu, AllocMapData, AllocMapFrame, AllocMapPipelines, AllocMapView,
    BlockTimeGpu, DrawOptions, LodBlocksUpload, LodCellsCache, LodCellsInput,
};

use super::settings::AllocMapSettings;
use crate::picture::{Layer, MapData, MapLayer, MapStyle, MapWindow, Picture};

/// Blocks above which a mappable `.msc` is drawn from its index (`MEMSCAPE_LOD_BLOCKS`
/// overrides it).
pub const DEFAULT_LOD_BLOCKS: u64 = 2_000_000;

pub use crate::lod_refine::{EXACT_GPU_MAX_BLOCKS, EXACT_GPU_MAX_BLOCKS_HARDWARE};

/// The colourings the index draws (others are drawn exactly).
pub const LOD_COLORINGS: &str = "thread";

/// Background of a map drawn alone (sRGB): the map's own background, c_B.
const MAP_BACKGROUND: [u8; 4] = [3, 4, 5, 255];

/// `MEMSCAPE_LOD_BLOCKS`, else [`DEFAULT_LOD_BLOCKS`].
pub fn lod_block_threshold() -> u64 {
    std::env::var("MEMSCAPE_LOD_BLOCKS")
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(DEFAULT_LOD_BLOCKS)
}

/// The path `MEMSCAPE_ALLOC_MAP_PATH` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathChoice {
    /// Unset: the index for big traces, the exact pipeline (raster or dense, by device) else.
    Auto,
    /// `lod`: the index, whatever the size.
    Lod,
    /// `raster`, `dense` or `exact`: every block through the exact pipeline.
    Exact,
}

impl PathChoice {
    pub fn from_env() -> Self {
        match std::env::var("MEMSCAPE_ALLOC_MAP_PATH").as_deref() {
            Ok("lod") => Self::Lod,
            Ok("raster" | "dense" | "exact") => Self::Exact,
            _ => Self::Auto,
        }
    }
}

/// Whether `trace` is drawn from its level-of-detail index (see the module's documentation).
pub fn wants_lod(trace: &Path) -> bool {
    match PathChoice::from_env() {
        PathChoice::Lod => return true,
        PathChoice::Exact => return false,
        PathChoice::Auto => {}
    }
    if !trace.is_file() {
        return false;
    }
    if LodTrace::index_exists(trace, LOD_COLORINGS) {
        return true;
    }
    match memscape_lod::trace_source::MappedColumns::open(trace) {
        Ok(Some(m)) => wants_lod_blocks(m.columns().len() as u64),
        _ => false,
    }
}

/// Whether a trace of `blocks` blocks is drawn from a level-of-detail index (the same rule
/// for a file's index and a query engine's): `MEMSCAPE_ALLOC_MAP_PATH`, else more blocks than
/// [`lod_block_threshold`].
pub fn wants_lod_blocks(blocks: u64) -> bool {
    match PathChoice::from_env() {
        PathChoice::Lod => true,
        PathChoice::Exact => false,
        PathChoice::Auto => blocks > lod_block_threshold(),
    }
}

/// Why the map layers of `settings` cannot be drawn from the index of `trace` (`None`: they
/// can): the index holds blocks coloured by thread, unbinned, on the event axis.
pub fn unsupported_map(
    settings: &AllocMapSettings,
    trace: &memscape_trace::Trace,
) -> Option<String> {
    use super::bins::BinBy;
    use super::colors::ColorBy;
    use super::scene::TimeAxis;
    let several_processes = memscape_trace::process::several_with_events(trace);
    let color = settings
        .color
        .unwrap_or_else(|| ColorBy::default_for(trace));
    if color != ColorBy::Thread {
        return Some(format!(
            "colour by {} (the index offers: {LOD_COLORINGS})",
            color.name()
        ));
    }
    let default_bins = if several_processes {
        BinBy::Process
    } else {
        BinBy::None
    };
    if settings.bins.unwrap_or(default_bins) != BinBy::None {
        return Some(String::from("bins"));
    }
    if settings.time != TimeAxis::Events {
        return Some(String::from("a time axis other than events"));
    }
    if settings.process.is_some() || !settings.cursors.is_empty() {
        return Some(String::from("--process or cursors"));
    }
    None
}

/// Why [`picture`] (the map alone) cannot draw `settings` of `trace`: [`unsupported_map`], and
/// panels other than the main map.
pub fn unsupported(settings: &AllocMapSettings, trace: &memscape_trace::Trace) -> Option<String> {
    use super::settings::Panel;
    if settings.panels.iter().any(|p| *p != Panel::Main) {
        return Some(String::from("panels other than main"));
    }
    unsupported_map(settings, trace)
}

/// The index of `path` opened once per process (built first when missing or stale), when its
/// map is drawn from one ([`wants_lod`]); what composed pictures share (a tour's frames open it
/// once). A failure is logged and the map is drawn exactly.
pub fn shared(path: &Path) -> Option<Arc<LodTrace>> {
    static OPEN: std::sync::LazyLock<
        std::sync::Mutex<std::collections::HashMap<std::path::PathBuf, Arc<LodTrace>>>,
    > = std::sync::LazyLock::new(Default::default);
    if !wants_lod(path) {
        return None;
    }
    let mut open = OPEN.lock().ok()?;
    if let Some(m) = open.get(path) {
        return Some(m.clone());
    }
    match LodTrace::open(
        path,
        LOD_COLORINGS,
        false,
        &mut |_, _| {},
        &std::sync::atomic::AtomicBool::new(false),
    ) {
        Ok((trace, _)) => {
            let m = Arc::new(trace);
            open.insert(path.to_path_buf(), m.clone());
            Some(m)
        }
        Err(e) => {
            tracing::warn!("{}: level of detail off: {e}", path.display());
            None
        }
    }
}

/// What [`prepare`] drew, for the caller's message and statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LodDrawn {
    /// The exact GPU pipeline, with this many blocks found through the index.
    ExactBlocks(usize),
    /// The index's sums (level `level`, `None`: exact sums on the CPU) resolved on the GPU.
    Sums {
        level: Option<usize>,
        cells: u64,
        exact_blocks: u64,
    },
    /// Level `level`'s cells summed on the GPU, its large blocks by the exact pipeline.
    GpuCells {
        level: usize,
        cells: u64,
        exact_blocks: u64,
    },
}

impl std::fmt::Display for LodDrawn {
    /// What drew the frame, as `memscape bench` and logs show it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Self::ExactBlocks(n) => write!(f, "exact: {n} blocks on the GPU"),
            Self::Sums {
                level: Some(level),
                cells,
                exact_blocks,
            } => write!(
                f,
                "level {level}: {cells} cells and {exact_blocks} large blocks summed on the CPU"
            ),
            Self::Sums {
                level: None,
                exact_blocks,
                ..
            } => write!(f, "exact: {exact_blocks} blocks summed on the CPU"),
            Self::GpuCells {
                level,
                cells,
                exact_blocks,
            } => write!(
                f,
                "level {level}: {cells} cells on the GPU, {exact_blocks} large blocks"
            ),
        }
    }
}

/// `blocks` (found through an index) uploaded for the exact GPU pipeline.
pub fn upload_blocks(
    device: &wgpu::Device,
    pipelines: &AllocMapPipelines,
    blocks: &[memscape_lod::LodBlock],
) -> AllocMapData {
    let (gpu, times): (Vec<AllocBlockGpu>, Vec<BlockTimeGpu>) = blocks
        .iter()
        .map(|b| {
            (
                AllocBlockGpu {
                    addr: memscape_render::u64_split::split(b.y),
                    size: memscape_render::u64_split::split(b.size),
                    color: b.color,
                    attr: b.attr,
                },
                BlockTimeGpu::new(b.t0, b.t1),
            )
        })
        .unzip();
    AllocMapData::upload(device, pipelines, &gpu, &times)
}

/// Whether a level's cells are resolved on the GPU (`memscape_render::alloc_map::lod_cells`)
/// on `device`: on hardware GPUs; not on a software rasterizer, where the CPU resolve measured
/// 3–4× cheaper (lavapipe runs compute shaders on the CPU: BENCHMARKS.md, "Level of detail: the
/// resolve on the GPU"). `MEMSCAPE_LOD_RESOLVE=gpu|cpu` overrides the choice.
pub fn cells_on_gpu(device: &wgpu::Device) -> bool {
    match std::env::var("MEMSCAPE_LOD_RESOLVE").as_deref() {
        Ok("gpu") => true,
        Ok("cpu") => false,
        _ => !memscape_render::context::is_software(device),
    }
}

/// How many of the blocks in a view finer than every level the exact GPU pipeline draws, and by
/// which of its paths; more are summed on the CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExactOnGpu {
    pub max_blocks: usize,
    pub path: AccumPath,
}

impl ExactOnGpu {
    /// A software rasterizer's: [`EXACT_GPU_MAX_BLOCKS`], the path it prefers.
    pub const SOFTWARE: Self = Self {
        max_blocks: EXACT_GPU_MAX_BLOCKS,
        path: AccumPath::Auto,
    };

    /// A hardware GPU's: [`EXACT_GPU_MAX_BLOCKS_HARDWARE`] by the dense path.
    pub const HARDWARE: Self = Self {
        max_blocks: EXACT_GPU_MAX_BLOCKS_HARDWARE,
        path: AccumPath::Dense,
    };

    /// `device`'s ([`Self::HARDWARE`] unless it is a software rasterizer);
    /// `MEMSCAPE_LOD_EXACT_GPU=software|hardware|N` overrides it (the hardware choice can be
    /// measured and tested on lavapipe; N: the device's path with a limit of N blocks).
    pub fn of(device: &wgpu::Device) -> Self {
        // Read once: `of` is asked every frame.
        static SETTING: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
        let setting = SETTING.get_or_init(|| {
            let v = std::env::var("MEMSCAPE_LOD_EXACT_GPU").ok()?;
            let known = matches!(v.as_str(), "hardware" | "software")
                || v.replace('_', "").parse::<usize>().is_ok();
            if !known {
                tracing::warn!(
                    "MEMSCAPE_LOD_EXACT_GPU={v:?} is not software|hardware|N; using the device's"
                );
            }
            Some(v)
        });
        Self::chosen(
            setting.as_deref(),
            memscape_render::context::is_software(device),
        )
    }

    /// The choice for the setting `setting` on a device that is `software` or not.
    pub fn chosen(setting: Option<&str>, software: bool) -> Self {
        let device = if software {
            Self::SOFTWARE
        } else {
            Self::HARDWARE
        };
        match setting {
            Some("hardware") => Self::HARDWARE,
            Some("software") => Self::SOFTWARE,
            Some(n) => match n.replace('_', "").parse() {
                Ok(max_blocks) => Self {
                    max_blocks,
                    ..device
                },
                Err(_) => device,
            },
            None => device,
        }
    }
}

/// Where a map layer's frame drawn from a level-of-detail index is recorded: the GPU context
/// (device, queue and the encoder the commands go into), the map pipelines, and the frame whose
/// accumulation targets the draw fills, placed at `origin` in a target of `target_format`. What
/// every caller of [`prepare`] and [`prepare_gpu_cells`] passes alike, whatever the view.
pub struct LodFrameTarget<'a> {
    pub device: &'a wgpu::Device,
    pub queue: &'a wgpu::Queue,
    pub encoder: &'a mut wgpu::CommandEncoder,
    pub pipelines: &'a mut AllocMapPipelines,
    pub frame: &'a mut AllocMapFrame,
    /// The frame's corner in the target, pixels.
    pub origin: [f32; 2],
    /// The format of the target the frame is resolved into.
    pub target_format: wgpu::TextureFormat,
}

impl<'a> LodFrameTarget<'a> {
    /// A frame alone at the corner of an offscreen target (`memscape_render::offscreen::OFFSCREEN_FORMAT`):
    /// what the bench, the examples and the tests draw into.
    pub fn offscreen(
        ctx: &'a memscape_render::GpuContext,
        encoder: &'a mut wgpu::CommandEncoder,
        pipelines: &'a mut AllocMapPipelines,
        frame: &'a mut AllocMapFrame,
    ) -> Self {
        Self {
            device: &ctx.device,
            queue: &ctx.queue,
            encoder,
            pipelines,
            frame,
            origin: [0.0, 0.0],
            target_format: memscape_render::offscreen::OFFSCREEN_FORMAT,
        }
    }

    /// Records the exact pipeline's accumulation of `data` for `view` (`size` pixels) by `path`.
    pub(crate) fn record_blocks(
        &mut self,
        data: &AllocMapData,
        view: &AllocMapView,
        size: [u32; 2],
        path: AccumPath,
    ) {
        self.frame.prepare_with(
            self.device,
            self.queue,
            self.encoder,
            self.pipelines,
            data,
            view,
            size,
            self.origin,
            self.target_format,
            &DrawOptions {
                path,
                ..DrawOptions::default()
            },
        );
    }

    /// Writes sums computed on the CPU (`acc`, `cov`) for `view` (`size` pixels) into the
    /// frame's accumulation targets.
    pub(crate) fn record_sums(
        &mut self,
        view: &AllocMapView,
        size: [u32; 2],
        acc: &[[f32; 4]],
        cov: &[f32],
    ) {
        self.frame.prepare_sums(
            self.device,
            self.queue,
            self.pipelines,
            view,
            size,
            self.origin,
            self.target_format,
            acc,
            cov,
        );
    }
}

/// Uploads `blocks` and records the exact pipeline's accumulation of them in `target` by
/// `path`; the upload must live until the commands are submitted.
fn prepare_exact(
    target: &mut LodFrameTarget<'_>,
    blocks: &[memscape_lod::LodBlock],
    view: &AllocMapView,
    size: [u32; 2],
    path: AccumPath,
) -> AllocMapData {
    let data = upload_blocks(target.device, target.pipelines, blocks);
    target.record_blocks(&data, view, size, path);
    data
}

/// Records `target`'s frame's accumulation for `view` (`size` pixels, its corner at the
/// target's `origin`) from `lod`: the exact GPU pipeline when the view is finer than every
/// level and holds at most `exact`'s blocks (callers pass [`ExactOnGpu::of`] their device),
/// else the index's level — its cells resolved on the GPU when `cells` is given (callers give
/// it where [`cells_on_gpu`]; the blocks large at the level drawn by the exact pipeline
/// first), else its sums computed on the CPU. Returns the upload the exact pipeline drew from
/// (keep it until the commands are submitted) and what was drawn.
///
/// With `cells`, the exact blocks (and a level's large blocks) are gathered for a region around
/// the view ([`margin_view`]) and kept in it on the GPU: the next frames draw from that upload
/// while their view lies within the region (`None` is returned for the upload then, and
/// [`LodDrawn`] counts the blocks uploaded for the region).
pub fn prepare(
    exact: ExactOnGpu,
    target: &mut LodFrameTarget<'_>,
    cells: Option<&mut LodCellsCache>,
    lod: &LodTrace,
    view: &AllocMapView,
    size: [u32; 2],
) -> (Option<AllocMapData>, LodDrawn) {
    let size = [size[0].max(1), size[1].max(1)];
    let lv = view.eq1(size);
    let mut cells = cells;
    if let Some(cache) = cells.as_deref_mut().filter(|c| keeps_blocks(c)) {
        if let Some(n) = prepare_exact_kept(exact, target, cache, lod, view, size) {
            return (None, LodDrawn::ExactBlocks(n));
        }
    } else if let Some(blocks) = lod.exact_blocks(&lv, exact.max_blocks) {
        let data = prepare_exact(target, &blocks, view, size, exact.path);
        return (Some(data), LodDrawn::ExactBlocks(blocks.len()));
    }
    if let Some(cache) = cells
        && let Some(drawn) = prepare_gpu_cells(
            LargeBlocksOn::of(target.device),
            target,
            cache,
            lod,
            view,
            size,
        )
    {
        return drawn;
    }
    let (sums, stats) = lod.sums(&lv, FramePath::Lod);
    target.record_sums(view, size, &sums.acc, &sums.cov);
    (
        None,
        LodDrawn::Sums {
            level: stats.level,
            cells: stats.cells,
            exact_blocks: stats.exact_blocks,
        },
    )
}

/// The exact blocks of `view` (finer than every level, at most `exact.max_blocks` of them) drawn
/// by the exact pipeline from `cache.exact_blocks`, gathered anew only when the view leaves the
/// region they were gathered for; `None` (nothing recorded, the upload dropped) where
/// [`LodTrace::exact_blocks`] would say `None` for the view. Returns the blocks uploaded.
fn prepare_exact_kept(
    exact: ExactOnGpu,
    target: &mut LodFrameTarget<'_>,
    cache: &mut LodCellsCache,
    lod: &LodTrace,
    view: &AllocMapView,
    size: [u32; 2],
) -> Option<usize> {
    let lv = view.eq1(size);
    let window = lv.window();
    // The level slot `usize::MAX`: the trace's blocks; the limit too, since the region's blocks
    // were counted against it.
    let key = blocks_key(lod, usize::MAX, exact.max_blocks);
    // `exact_blocks`'s own refusals, which the blocks kept for a region cannot answer: a level
    // applies, or the index counts clearly too many blocks in view (a walk of the finest
    // level's cells in view: not again for the window last drawn from these blocks).
    let checked = cache
        .exact_blocks
        .as_ref()
        .is_some_and(|u| u.key == key && u.checked == Some(window));
    let too_many = |w| lod.index.small_blocks_in(w) > 2.0 * exact.max_blocks as f64;
    if lod.index.level_for(lv.pixel_size()).is_some() || (!checked && too_many(window)) {
        cache.exact_blocks = None;
        return None;
    }
    let extent = lod.extent().map(|e| e as f64);
    let kept = cache
        .exact_blocks
        .as_ref()
        .is_some_and(|u| u.covers(key, window, extent));
    if !kept {
        // Dropped first: the region's blocks and the old upload are not held together.
        cache.exact_blocks = None;
        let region = margin_view(&lv);
        let (blocks, gathered) = match lod.exact_blocks(&region, exact.max_blocks) {
            Some(blocks) => (blocks, region.window()),
            // The region holds too many: the view's own blocks, kept for this view only.
            None => (lod.exact_blocks(&lv, exact.max_blocks)?, window),
        };
        cache.exact_blocks = Some(LodBlocksUpload {
            key,
            region: gathered,
            data: upload_blocks(target.device, target.pipelines, &blocks),
            checked: None,
        });
    }
    // One kind of kept blocks at a time on the GPU (a level's large blocks are gathered again
    // when a level draws): the exact ones may be up to the device's limit (20 M × 44 B).
    cache.large_blocks = None;
    let upload = cache.exact_blocks.as_mut()?;
    upload.checked = Some(window);
    target.record_blocks(&upload.data, view, size, exact.path);
    Some(upload.data.block_count)
}

/// Whether blocks found through the index are kept on the GPU across frames (see [`prepare`]);
/// `MEMSCAPE_LOD_KEEP_BLOCKS=0` gathers and uploads them every frame, as before wave 24 (the
/// baseline of `memscape bench`'s lod-gpu rows).
pub fn keep_blocks() -> bool {
    static KEEP: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *KEEP.get_or_init(|| std::env::var("MEMSCAPE_LOD_KEEP_BLOCKS").as_deref() != Ok("0"))
}

/// Whether `cache` keeps blocks across frames: [`keep_blocks`], and not
/// [`LodCellsCache::blocks_per_frame`].
fn keeps_blocks(cache: &LodCellsCache) -> bool {
    keep_blocks() && !cache.blocks_per_frame
}

/// The region around `lv` whose blocks a frame gathers and keeps on the GPU: the view's window
/// widened by half its span on each side (a pan by half a view, or a zoom out to twice the span,
/// draws from the same upload), clipped at the plane's origin, as a view at `lv`'s scale (the
/// index picks levels by scale: no level applies to it where none applies to `lv`).
pub fn margin_view(lv: &LodView) -> LodView {
    let ([t0, t1], [a0, a1]) = lv.window();
    let (mt, ma) = ((t1 - t0) / 2.0, (a1 - a0) / 2.0);
    let (rt0, ra0) = ((t0 - mt).max(0.0).floor(), (a0 - ma).max(0.0).floor());
    let (rt1, ra1) = ((t1 + mt).ceil(), (a1 + ma).ceil());
    let [pw, ph] = lv.pixel_size();
    let pixels = |span: f64, per: f64| (span / per).ceil().clamp(1.0, f64::from(u32::MAX)) as u32;
    LodView {
        time_origin: rt0 as u64,
        time_origin_frac: 0.0,
        addr_origin: ra0 as u64,
        addr_origin_frac: 0.0,
        width: pixels(rt1 - rt0, pw),
        height: pixels(ra1 - ra0, ph),
        ..*lv
    }
}

/// Where the blocks large at a level are summed when its cells are resolved on the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LargeBlocksOn {
    /// By the exact GPU pipeline (raster or dense).
    Gpu,
    /// On the CPU (`LodTrace::block_sums`), written into the targets before the commands run.
    Cpu,
}

impl LargeBlocksOn {
    /// Rasterized where the GPU is hardware; on a software rasterizer summed on the CPU
    /// (lavapipe took 2.5 s to rasterize 0.5 M long-lived blocks at 1920×1080: BENCHMARKS.md,
    /// "Level of detail: the resolve on the GPU"). `MEMSCAPE_LOD_LARGE=gpu|cpu` overrides the
    /// choice (the hardware path measured on lavapipe).
    pub fn of(device: &wgpu::Device) -> Self {
        match std::env::var("MEMSCAPE_LOD_LARGE").as_deref() {
            Ok("gpu") => Self::Gpu,
            Ok("cpu") => Self::Cpu,
            _ if memscape_render::context::is_software(device) => Self::Cpu,
            _ => Self::Gpu,
        }
    }
}

/// The level's cells resolved on the GPU (see [`prepare`]), the large blocks where `large_on`
/// says; `None` (nothing recorded) when no level applies or the view's cells do not fit the
/// GPU budget.
pub fn prepare_gpu_cells(
    large_on: LargeBlocksOn,
    target: &mut LodFrameTarget<'_>,
    cache: &mut LodCellsCache,
    lod: &LodTrace,
    view: &AllocMapView,
    size: [u32; 2],
) -> Option<(Option<AllocMapData>, LodDrawn)> {
    use memscape_lod::gpu_plan;
    let lv = view.eq1(size);
    // The level the CPU resolve draws the same frame from (small frames from finer cells).
    let li = lod.index.level_for_frame(&lv)?;
    let plan = gpu_plan::cells_plan(&lod.index, li, &lv)?;
    let chunks: Vec<(u64, std::ops::Range<u32>)> = plan
        .chunks
        .iter()
        .map(|c| (c.chunk, c.dispatch.clone()))
        .collect();
    let input = LodCellsInput {
        level_key: level_key(lod, li),
        chunk_cells: gpu_plan::CHUNK_CELLS,
        first_cell: plan.first_cell,
        cells: plan.cells,
        columns: &plan.columns,
        rows: &plan.rows,
        ky0: plan.ky0,
        rx: plan.rx,
        ry: plan.ry,
        width: size[0],
        height: size[1],
        chunks: &chunks,
    };
    let chunk_bytes = |j: u64| gpu_plan::chunk_bytes(&lod.index, li, j);
    if let Err(e) = cache.upload(target.device, target.pipelines, &input, &chunk_bytes) {
        tracing::debug!("level-of-detail cells resolved on the CPU: {e}");
        return None;
    }
    let large_blocks = if large_on == LargeBlocksOn::Cpu {
        let large = lod.large_blocks(&lv, li);
        let sums = LodTrace::block_sums(&lv, &large);
        target.record_sums(view, size, &sums.acc, &sums.cov);
        large.len()
    } else {
        // Kept on the GPU for a region around the view (see `prepare_exact_kept`).
        let key = blocks_key(lod, li, 0);
        let extent = lod.extent().map(|e| e as f64);
        let keep = keeps_blocks(cache);
        let kept = keep
            && cache
                .large_blocks
                .as_ref()
                .is_some_and(|u| u.covers(key, lv.window(), extent));
        if !kept {
            cache.large_blocks = None;
            let region = if keep { margin_view(&lv) } else { lv };
            let large = lod.large_blocks(&region, li);
            cache.large_blocks = Some(LodBlocksUpload {
                key,
                region: region.window(),
                data: upload_blocks(target.device, target.pipelines, &large),
                checked: None,
            });
        }
        let upload = cache.large_blocks.as_ref()?;
        // The device's exact path (dense on hardware), not `Auto`: `Auto` chooses by the blocks
        // uploaded, which the region kept around the view changes (on the H200 a kept region of
        // 14,497 blocks went dense where the view's 3,887 rasterized: the same picture within
        // tolerance, not bit for bit).
        let path = ExactOnGpu::of(target.device).path;
        target.record_blocks(&upload.data, view, size, path);
        upload.data.block_count
    };
    target.frame.add_lod_cells(
        target.device,
        target.encoder,
        target.pipelines,
        cache,
        &lv,
        &input,
    );
    Some((
        None,
        LodDrawn::GpuCells {
            level: li,
            cells: u64::from(plan.cells),
            exact_blocks: large_blocks as u64,
        },
    ))
}

/// The cache key of level `li` of `lod`'s index: its file and the level.
fn level_key(lod: &LodTrace, li: usize) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    lod.index_path.hash(&mut h);
    lod.index.file_len().hash(&mut h);
    li.hash(&mut h);
    h.finish()
}

/// The key of blocks kept on the GPU ([`LodBlocksUpload`]): the level's (`usize::MAX`: the
/// exact blocks) and the limit they were gathered under.
fn blocks_key(lod: &LodTrace, li: usize, limit: usize) -> u64 {
    level_key(lod, li) ^ (limit as u64).rotate_left(32)
}

/// The picture of `lod`'s map alone, `[t0, t1) × [a0, a1)` (events × collapsed bytes) filling
/// `size` points, drawn in `style`.
pub fn picture(
    lod: Arc<LodTrace>,
    window: ([u64; 2], [u64; 2]),
    style: MapStyle,
    size: egui::Vec2,
) -> Picture {
    let ([t0, t1], [a0, a1]) = window;
    let extent = lod.extent()[1].max(1);
    let mut picture = Picture::new(size, MAP_BACKGROUND);
    picture.layers.push(Layer::Map(MapLayer {
        slot: 0,
        rect: egui::Rect::from_min_size(egui::Pos2::ZERO, size),
        data: Arc::new(MapData {
            blocks: Arc::new(Vec::new()),
            times: Arc::new(Vec::new()),
            selection: None,
            lod: Some(lod),
            refiner: None,
            accumulate: None,
        }),
        window: MapWindow {
            t0: t0 as f64,
            t_span: (t1.saturating_sub(t0)).max(1) as f64,
            y0: a0 as f64 / extent as f64,
            y_span: (a1.saturating_sub(a0)).max(1) as f64 / extent as f64,
        },
        extent,
        range: 0..0,
        style,
        cursors: None,
    }));
    picture
}
