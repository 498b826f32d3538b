//! `memscape bench`: the standard frames on the user's own GPU, so that anyone can report their
//! numbers beside the product's targets.
//!
//! * **Allocation map**: a deterministic heap-like synthetic trace
//!   (`memscape_render::alloc_map::synthetic`) of each block count, at each size, zoomed out
//!   (the whole trace) and zoomed in (a 1/64 × 1/64 window at the centre), by each accumulation
//!   path: `raster` and `dense` on the GPU (one frame = accumulation + resolve into an offscreen
//!   target, submitted and waited for), and `lod`, memscape-lod's level-of-detail frames on the
//!   CPU (its own realistic generator, `memscape_lod::synth`, the same block count written as a
//!   mappable `.msc` with its index into a scratch directory, removed afterwards).
//! * **Cycle morph**: a synthetic spiral of each record count, one frame = a new `t` and the
//!   draw (`memscape_render::polar_morph::synthetic_spiral`).
//! * **Tour pacing**: the demo tour's frames drawn headless as `memscape present` draws them;
//!   the time between successive new frames (held frames repeat without drawing and are left
//!   out).
//!
//! Each row has wall time (p50, p99, mean of the timed frames) and, where the adapter has
//! timestamp queries, GPU time (the sum of the frame's passes, p50). A row with a target
//! compares its wall p50 (p99 for the tour) with it.

use std::path::PathBuf;
use std::time::Instant;

use memscape_render::alloc_map::synthetic::heap_like;
use memscape_render::alloc_map::{
    AccumPath, AllocMapData, AllocMapFrame, AllocMapPipelines, AllocMapView, DrawOptions,
};
use memscape_render::offscreen::OFFSCREEN_FORMAT;
use memscape_render::polar_morph::{
    PolarMorphData, PolarMorphPipelines, PolarMorphView, draw_into_timed, synthetic_spiral,
};
use memscape_render::{GpuContext, OffscreenTarget, StatsRecorder};
use serde::Serialize;

use crate::error::{Context as _, Result};
use crate::stats::{AdapterReport, path_name, percentile};

/// An accumulation path of the allocation map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BenchPath {
    Raster,
    Dense,
    /// memscape-lod's level-of-detail frames (CPU), and the same views on the GPU.
    Lod,
    /// The level-of-detail views on the GPU alone (`alloc_map::lod::prepare`), without the CPU
    /// frames beside them (seconds each at 4K).
    LodGpu,
}

impl BenchPath {
    pub fn name(self) -> &'static str {
        match self {
            Self::Raster => "raster",
            Self::Dense => "dense",
            Self::Lod => "lod",
            Self::LodGpu => "lod-gpu",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "raster" => Some(Self::Raster),
            "dense" => Some(Self::Dense),
            "lod" => Some(Self::Lod),
            "lod-gpu" => Some(Self::LodGpu),
            _ => None,
        }
    }
}

/// What to run.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchOptions {
    /// Allocation-map block counts (none: no allocation-map rows).
    pub blocks: Vec<usize>,
    /// Frame sizes in pixels.
    pub sizes: Vec<[u32; 2]>,
    pub paths: Vec<BenchPath>,
    /// Morph record counts (none: no morph rows).
    pub morph_records: Vec<usize>,
    /// Timed frames per row, after one untimed warm-up frame.
    pub frames: usize,
    /// The demo tour's size; `None`: no tour row.
    pub tour_size: Option<[u32; 2]>,
    /// Stop the tour after this many new frames.
    pub tour_max_frames: Option<usize>,
    /// Where the level-of-detail path's synthetic traces are written (and removed).
    pub scratch: PathBuf,
}

impl BenchOptions {
    /// The standard frames: 1 M and 10 M blocks at 1920×1080 and 3840×2160, every
    /// path, morphs of 100 k and 1 M records, the demo tour at 1280×720.
    pub fn standard(scratch: PathBuf) -> Self {
        Self {
            blocks: vec![1_000_000, 10_000_000],
            sizes: vec![[1920, 1080], [3840, 2160]],
            paths: vec![BenchPath::Raster, BenchPath::Dense, BenchPath::Lod],
            morph_records: vec![100_000, 1_000_000],
            frames: 5,
            tour_size: Some([1280, 720]),
            tour_max_frames: None,
            scratch,
        }
    }

    /// A run of seconds on a software rasterizer: 10 k blocks at 320×180, a 10 k-record
    /// morph, 3 frames per row, 10 tour frames at 320×180.
    pub fn quick(scratch: PathBuf) -> Self {
        Self {
            blocks: vec![10_000],
            sizes: vec![[320, 180]],
            paths: vec![BenchPath::Raster, BenchPath::Dense, BenchPath::Lod],
            morph_records: vec![10_000],
            frames: 3,
            tour_size: Some([320, 180]),
            tour_max_frames: Some(10),
            scratch,
        }
    }
}

/// A target of the product (issue 22) that a row is held against.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Target {
    pub ms: f64,
    /// What is compared: `wall p50` or `wall p99`.
    pub statistic: String,
    pub met: bool,
}

/// One measured case.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchRow {
    /// `alloc_map`, `morph` or `tour`.
    pub case: String,
    /// The path asked for (allocation map).
    pub path: Option<String>,
    /// The path the draws took (a dense draw the device cannot make is rasterized; `lod` says
    /// whether a level or the exact blocks drew it).
    pub taken: Option<String>,
    /// Blocks (allocation map) or records (morph); frames drawn (tour).
    pub count: usize,
    pub width: u32,
    pub height: u32,
    /// `zoomed out` or `zoomed in` (allocation map).
    pub view: Option<String>,
    pub frames: usize,
    pub wall_ms_p50: Option<f64>,
    pub wall_ms_p99: Option<f64>,
    pub wall_ms_mean: Option<f64>,
    /// Sum of the frame's GPU passes (timestamp queries), p50; `null` without them (and for
    /// the CPU `lod` path and the tour).
    pub gpu_ms_p50: Option<f64>,
    /// The frame's host side, p50: from its start to `queue.submit` returned (the level-of-
    /// detail GPU frames, `lod-gpu`; `null` elsewhere).
    pub host_ms_p50: Option<f64>,
    /// Each GPU pass of the frame (timestamp queries), p50 over the timed frames, in the
    /// order drawn (the level-of-detail GPU frames, `lod-gpu`; empty elsewhere).
    pub gpu_passes: Vec<PassTime>,
    /// What the frame's passes were given: for a level drawn on the GPU, how the block pass
    /// splits the level's large blocks (`dense_work::DenseWork`); `null` elsewhere.
    pub work: Option<String>,
    pub target: Option<Target>,
    pub note: Option<String>,
}

/// One GPU pass of a frame: its name and its p50 time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PassTime {
    pub pass: String,
    pub ms_p50: f64,
}

/// Everything `memscape bench` measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchReport {
    pub adapter: AdapterReport,
    /// `debug` or `release`: the build that measured.
    pub build: String,
    pub rows: Vec<BenchRow>,
}

/// The targets: 10 M blocks at 3840×2160, zoomed out ≤ 8 ms and zoomed in ≤ 2 ms; a
/// morph of 1 M records ≤ 4 ms; tour frames ≤ 16.7 ms at the 99th percentile.
fn alloc_map_target(blocks: usize, size: [u32; 2], zoomed_in: bool) -> Option<f64> {
    (blocks >= 10_000_000 && size == [3840, 2160]).then_some(if zoomed_in { 2.0 } else { 8.0 })
}

fn morph_target(records: usize) -> Option<f64> {
    (records >= 1_000_000).then_some(4.0)
}

pub const TOUR_TARGET_MS: f64 = 16.7;

fn summary(wall: &[f64], gpu: &[f64]) -> (Option<f64>, Option<f64>, Option<f64>, Option<f64>) {
    let mean = (!wall.is_empty()).then(|| wall.iter().sum::<f64>() / wall.len() as f64);
    (
        percentile(wall, 50.0).map(round_us),
        percentile(wall, 99.0).map(round_us),
        mean.map(round_us),
        percentile(gpu, 50.0).map(round_us),
    )
}

/// Milliseconds to the microsecond (reports print no false precision).
pub fn round_us(ms: f64) -> f64 {
    (ms * 1e3).round() / 1e3
}

fn held_to(ms: Option<f64>, wall_p: Option<f64>, statistic: &str) -> Option<Target> {
    let ms = ms?;
    Some(Target {
        ms,
        statistic: statistic.to_owned(),
        met: wall_p.is_some_and(|w| w <= ms),
    })
}

/// Runs the benchmark on `ctx` (made with timestamp queries where the adapter has them:
/// [`crate::render::gpu_context_timed`]). `progress` gets a line per row as it starts.
pub fn run(
    ctx: GpuContext,
    options: &BenchOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<BenchReport> {
    crate::ensure!(options.frames >= 1, "at least one timed frame per row");
    let adapter = AdapterReport::of(&ctx);
    let mut rows = Vec::new();
    let gpu_paths: Vec<BenchPath> = options
        .paths
        .iter()
        .copied()
        .filter(|p| !matches!(p, BenchPath::Lod | BenchPath::LodGpu))
        .collect();
    for &n in &options.blocks {
        if !gpu_paths.is_empty() {
            alloc_map_rows(&ctx, options, n, &gpu_paths, &mut rows, progress)?;
        }
        if options.paths.contains(&BenchPath::Lod) || options.paths.contains(&BenchPath::LodGpu) {
            lod_rows(&ctx, options, n, &mut rows, progress)?;
        }
    }
    for &n in &options.morph_records {
        for &size in &options.sizes {
            progress(&format!("morph {n} records {}x{}", size[0], size[1]));
            rows.push(morph_row(&ctx, n, size, options.frames)?);
        }
    }
    if let Some(size) = options.tour_size {
        progress(&format!("demo tour {}x{}", size[0], size[1]));
        rows.push(tour_row(ctx, size, options.tour_max_frames)?);
    }
    Ok(BenchReport {
        adapter,
        build: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
        .to_owned(),
        rows,
    })
}

fn views(t_extent: u64, a_extent: u64, size: [u32; 2]) -> [(&'static str, AllocMapView); 2] {
    let [w, h] = size;
    [
        (
            "zoomed out",
            AllocMapView::fit(0, t_extent, 0, a_extent, w, h),
        ),
        (
            "zoomed in",
            AllocMapView::fit(
                t_extent / 2,
                t_extent / 2 + (t_extent / 64).max(1),
                a_extent / 2,
                a_extent / 2 + (a_extent / 64).max(1),
                w,
                h,
            ),
        ),
    ]
}

fn alloc_map_rows(
    ctx: &GpuContext,
    options: &BenchOptions,
    n: usize,
    paths: &[BenchPath],
    rows: &mut Vec<BenchRow>,
    progress: &mut dyn FnMut(&str),
) -> Result<()> {
    let (blocks, times, t_extent, a_extent) = heap_like(n);
    let mut pipelines = AllocMapPipelines::new(&ctx.device)?;
    let data = AllocMapData::upload(&ctx.device, &pipelines, &blocks, &times);
    drop((blocks, times));
    let stats = StatsRecorder::new(&ctx.device, &ctx.queue);
    pipelines.set_stats(Some(stats.clone()));
    for &size in &options.sizes {
        let target = OffscreenTarget::new(ctx, size[0], size[1])?;
        for (label, view) in views(t_extent, a_extent, size) {
            for &path in paths {
                progress(&format!(
                    "alloc_map {n} blocks {}x{} {label} {}",
                    size[0],
                    size[1],
                    path.name()
                ));
                let accum = match path {
                    BenchPath::Dense => AccumPath::Dense,
                    _ => AccumPath::Raster,
                };
                let mut frame = AllocMapFrame::new(&ctx.device, &pipelines);
                let (mut wall, mut gpu) = (Vec::new(), Vec::new());
                for k in 0..=options.frames {
                    stats.set_scope("bench");
                    let start = Instant::now();
                    let mut encoder = ctx.device.create_command_encoder(&Default::default());
                    frame.prepare_with(
                        &ctx.device,
                        &ctx.queue,
                        &mut encoder,
                        &mut pipelines,
                        &data,
                        &view,
                        size,
                        [0.0, 0.0],
                        OFFSCREEN_FORMAT,
                        &DrawOptions {
                            path: accum,
                            ..DrawOptions::default()
                        },
                    );
                    frame.resolve_to(&mut encoder, &target.view, &pipelines);
                    stats.resolve(&mut encoder);
                    ctx.queue.submit([encoder.finish()]);
                    let _ = ctx.device.poll(wgpu::PollType::wait_indefinitely());
                    let ms = start.elapsed().as_secs_f64() * 1e3;
                    let frame_stats = stats.finish_blocking(&ctx.device);
                    if k > 0 {
                        wall.push(ms);
                        if let Some(ns) = frame_stats.gpu_total_ns() {
                            gpu.push(ns as f64 / 1e6);
                        }
                    }
                }
                let taken = path_name(frame.last_path()).to_owned();
                let note = (path == BenchPath::Dense && frame.last_path() != AccumPath::Dense)
                    .then(|| {
                        "the dense path is not available here (device or difference-array size): drawn by the raster path".to_owned()
                    });
                let (p50, p99, mean, gpu50) = summary(&wall, &gpu);
                rows.push(BenchRow {
                    case: "alloc_map".into(),
                    path: Some(path.name().into()),
                    taken: Some(taken),
                    count: n,
                    width: size[0],
                    height: size[1],
                    view: Some(label.into()),
                    frames: wall.len(),
                    wall_ms_p50: p50,
                    wall_ms_p99: p99,
                    wall_ms_mean: mean,
                    gpu_ms_p50: gpu50,
                    host_ms_p50: None,
                    gpu_passes: Vec::new(),
                    work: None,
                    target: held_to(
                        alloc_map_target(n, size, label == "zoomed in"),
                        p50,
                        "wall p50",
                    ),
                    note,
                });
            }
        }
    }
    Ok(())
}

/// What [`lod_gpu_frames`] measured per frame (ms): wall (to the wait's end), host (to
/// `queue.submit` returned) and the GPU passes (timestamp queries, where the device has them).
#[derive(Default)]
struct LodGpuTimes {
    wall: Vec<f64>,
    host: Vec<f64>,
    gpu: Vec<f64>,
    /// Per pass (in the order first drawn), its GPU time in each timed frame.
    passes: Vec<(String, Vec<f64>)>,
    /// The block pass's split of the level's large blocks (a level drawn on the GPU).
    work: Option<memscape_render::alloc_map::dense_work::DenseWork>,
}

impl LodGpuTimes {
    /// Adds one frame's pass times (a pass drawn twice in a frame counts its sum).
    fn add_passes(&mut self, stats: &memscape_render::FrameStats) {
        for (name, ns) in stats.pass_totals_ns() {
            let ms = ns as f64 / 1e6;
            match self.passes.iter_mut().find(|(n, _)| *n == name) {
                Some((_, times)) => times.push(ms),
                None => self.passes.push((name, vec![ms])),
            }
        }
    }

    fn pass_p50s(&self) -> Vec<PassTime> {
        self.passes
            .iter()
            .filter_map(|(pass, times)| {
                Some(PassTime {
                    pass: pass.clone(),
                    ms_p50: round_us(percentile(times, 50.0)?),
                })
            })
            .collect()
    }
}

/// `frames` timed frames (after one untimed: uploads) of `view` drawn by
/// `alloc_map::lod::prepare` with the level's cells on the GPU and resolved into a target,
/// submitted and waited for; the times and what was drawn. The frames repeat the view (a
/// repaint: blocks kept on the GPU are drawn again, `MEMSCAPE_LOD_KEEP_BLOCKS=0` gathers and
/// uploads them every frame).
fn lod_gpu_frames(
    ctx: &GpuContext,
    lod: &memscape_lod::LodTrace,
    view: &memscape_lod::LodView,
    frames: usize,
) -> Result<(LodGpuTimes, String)> {
    use memscape_render::alloc_map::{AllocMapView, CushionKind, LodCellsCache};
    let size = [view.width, view.height];
    let (wt, wa) = view.window();
    let mut map_view = AllocMapView::fit(
        wt[0] as u64,
        wt[1] as u64,
        wa[0] as u64,
        wa[1] as u64,
        size[0],
        size[1],
    );
    map_view.alpha = view.alpha;
    map_view.cushion = CushionKind::Parabolic;
    let mut pipelines = AllocMapPipelines::new(&ctx.device)?;
    let mut frame = AllocMapFrame::new(&ctx.device, &pipelines);
    let mut cache = LodCellsCache::default();
    // The baseline of the cells' sums added by a pass of their own (before wave 26).
    cache.cells_add_pass = std::env::var("MEMSCAPE_LOD_CELLS_ADD").as_deref() == Ok("pass");
    let stats = StatsRecorder::new(&ctx.device, &ctx.queue);
    pipelines.set_stats(Some(stats.clone()));
    let target = OffscreenTarget::new(ctx, size[0], size[1])?;
    let (mut times, mut taken) = (LodGpuTimes::default(), String::new());
    for k in 0..=frames {
        stats.set_scope("bench");
        let start = Instant::now();
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        let (upload, drawn) = crate::alloc_map::lod::prepare(
            crate::alloc_map::lod::ExactOnGpu::of(&ctx.device),
            &mut crate::alloc_map::lod::LodFrameTarget::offscreen(
                ctx,
                &mut encoder,
                &mut pipelines,
                &mut frame,
            ),
            Some(&mut cache),
            lod,
            &map_view,
            size,
        );
        frame.resolve_to(&mut encoder, &target.view, &pipelines);
        stats.resolve(&mut encoder);
        ctx.queue.submit([encoder.finish()]);
        let host = start.elapsed().as_secs_f64() * 1e3;
        let _ = ctx.device.poll(wgpu::PollType::wait_indefinitely());
        drop(upload);
        let wall = start.elapsed().as_secs_f64() * 1e3;
        let frame_stats = stats.finish_blocking(&ctx.device);
        if k > 0 {
            times.wall.push(wall);
            times.host.push(host);
            if let Some(ns) = frame_stats.gpu_total_ns() {
                times.gpu.push(ns as f64 / 1e6);
            }
            times.add_passes(&frame_stats);
        }
        taken = format!("lod-gpu ({drawn})");
        if k == 0
            && let crate::alloc_map::lod::LodDrawn::GpuCells { level, .. } = drawn
        {
            times.work = Some(large_blocks_work(lod, &map_view.eq1(size), level));
        }
    }
    Ok((times, taken))
}

/// How the dense block pass splits the large blocks a level draws on the GPU: those the frame
/// uploads (gathered for the region around the view where blocks are kept, as
/// `alloc_map::lod::prepare_gpu_cells` gathers them), each by its geometry in the view.
fn large_blocks_work(
    lod: &memscape_lod::LodTrace,
    lv: &memscape_lod::LodView,
    level: usize,
) -> memscape_render::alloc_map::dense_work::DenseWork {
    let region = if crate::alloc_map::lod::keep_blocks() {
        crate::alloc_map::lod::margin_view(lv)
    } else {
        *lv
    };
    let blocks = lod.large_blocks(&region, level);
    memscape_render::alloc_map::dense_work::DenseWork::of(
        blocks.iter().map(|b| lv.block_geometry_px(b)),
        [lv.width, lv.height],
    )
}

fn lod_rows(
    ctx: &GpuContext,
    options: &BenchOptions,
    n: usize,
    rows: &mut Vec<BenchRow>,
    progress: &mut dyn FnMut(&str),
) -> Result<()> {
    use memscape_lod::{FramePath, LodTrace, LodView};
    progress(&format!("lod: generating {n} blocks and their index"));
    std::fs::create_dir_all(&options.scratch).with_context(|| {
        format!(
            "{}: cannot create the scratch directory",
            options.scratch.display()
        )
    })?;
    let trace_path = options
        .scratch
        .join(format!("memscape-bench-{}-{n}.msc", std::process::id()));
    // About two events per block (the generator's blocks still live at the end are never freed).
    let params = memscape_lod::synth::SynthParams::new(2 * n as u64, 22);
    let result = (|| -> Result<()> {
        memscape_lod::synth::write_mappable(params, &trace_path, &mut |_| {})
            .map_err(|e| crate::error::ViewError::msg(e.to_string()))?;
        let (trace, _) = LodTrace::open(
            &trace_path,
            "thread",
            true,
            &mut |_, _| {},
            &std::sync::atomic::AtomicBool::new(false),
        )
        .map_err(|e| crate::error::ViewError::msg(e.to_string()))?;
        let blocks = trace.meta().blocks as usize;
        let [te, ye] = trace.extent();
        for &[w, h] in &options.sizes {
            let cases = [
                ("zoomed out", trace.whole_view(w, h)),
                // The trace an eighth of the view's width: drawn from a level, as the whole
                // view of a trace ≈ 8× longer is (a small trace's whole view at 4K is finer
                // than every level and draws its exact blocks).
                (
                    "zoomed out 8×",
                    LodView::fit(0, te.saturating_mul(8), 0, ye, w, h),
                ),
                (
                    "zoomed in",
                    LodView::fit(
                        te / 2,
                        te / 2 + (te / 64).max(1),
                        ye / 2,
                        ye / 2 + (ye / 64).max(1),
                        w,
                        h,
                    ),
                ),
            ];
            for (label, view) in cases {
                if options.paths.contains(&BenchPath::Lod) {
                    progress(&format!("alloc_map {blocks} blocks {w}x{h} {label} lod"));
                    let mut wall = Vec::new();
                    let mut taken = String::new();
                    for k in 0..=options.frames {
                        let start = Instant::now();
                        let (pixels, stats) = trace.frame(&view, FramePath::Lod);
                        std::hint::black_box(pixels);
                        if k > 0 {
                            wall.push(start.elapsed().as_secs_f64() * 1e3);
                        }
                        taken = match stats.level {
                            Some(l) => format!("lod (level {l}: {} cells)", stats.cells),
                            None => format!("lod (exact: {} blocks)", stats.exact_blocks),
                        };
                    }
                    rows.push(lod_row(
                        "lod",
                        taken,
                        blocks,
                        [w, h],
                        label,
                        &wall,
                        "CPU (memscape-lod), its own synthetic trace",
                    ));
                }
                progress(&format!(
                    "alloc_map {blocks} blocks {w}x{h} {label} lod-gpu"
                ));
                let (times, taken) = lod_gpu_frames(ctx, &trace, &view, options.frames)?;
                let mut row = lod_row(
                    "lod-gpu",
                    taken,
                    blocks,
                    [w, h],
                    label,
                    &times.wall,
                    if crate::alloc_map::lod::keep_blocks() {
                        "level's cells resolved on the GPU (lod_cells.wgsl), blocks kept on the GPU across frames, frame submitted and waited for"
                    } else {
                        "level's cells resolved on the GPU (lod_cells.wgsl), blocks gathered and uploaded every frame (MEMSCAPE_LOD_KEEP_BLOCKS=0), frame submitted and waited for"
                    },
                );
                let (_, _, _, gpu50) = summary(&times.wall, &times.gpu);
                row.gpu_ms_p50 = gpu50;
                row.host_ms_p50 = percentile(&times.host, 50.0).map(round_us);
                row.gpu_passes = times.pass_p50s();
                row.work = times.work.map(|w| format!("large blocks: {w}"));
                rows.push(row);
            }
        }
        Ok(())
    })();
    // The trace and its index beside it.
    for entry in std::fs::read_dir(&options.scratch)
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(stem) = trace_path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            && name.starts_with(&stem)
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    result
}

fn morph_row(ctx: &GpuContext, n: usize, size: [u32; 2], frames: usize) -> Result<BenchRow> {
    let (points, arcs) = synthetic_spiral(n);
    let mut pipelines = PolarMorphPipelines::new(&ctx.device)?;
    let mut data = PolarMorphData::new(&ctx.device, &pipelines, &points, &arcs)?;
    drop((points, arcs));
    let target = OffscreenTarget::new(ctx, size[0], size[1])?;
    let mut view = PolarMorphView::centered(size[0] as f32, size[1] as f32, 1.0);
    view.point_radius_px = 1.2;
    view.arc_subdivisions = PolarMorphView::arc_pieces_for(n);
    let stats = StatsRecorder::new(&ctx.device, &ctx.queue);
    let (mut wall, mut gpu) = (Vec::new(), Vec::new());
    for k in 0..=frames {
        view.t = (k as f32 * 0.1) % 1.0;
        let start = Instant::now();
        let queries = stats.pass("polar_morph");
        draw_into_timed(
            ctx,
            &mut pipelines,
            &mut data,
            &view,
            &target,
            Some([0, 0, 0, 255]),
            &queries,
        );
        drop(queries);
        let _ = ctx.device.poll(wgpu::PollType::wait_indefinitely());
        let ms = start.elapsed().as_secs_f64() * 1e3;
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        stats.resolve(&mut encoder);
        ctx.queue.submit([encoder.finish()]);
        let frame_stats = stats.finish_blocking(&ctx.device);
        if k > 0 {
            wall.push(ms);
            if let Some(ns) = frame_stats.gpu_total_ns() {
                gpu.push(ns as f64 / 1e6);
            }
        }
    }
    let (p50, p99, mean, gpu50) = summary(&wall, &gpu);
    Ok(BenchRow {
        case: "morph".into(),
        path: None,
        taken: None,
        count: n,
        width: size[0],
        height: size[1],
        view: None,
        frames: wall.len(),
        wall_ms_p50: p50,
        wall_ms_p99: p99,
        wall_ms_mean: mean,
        gpu_ms_p50: gpu50,
        host_ms_p50: None,
        gpu_passes: Vec::new(),
        work: None,
        target: held_to(morph_target(n), p50, "wall p50"),
        note: Some(format!("{} arc pieces", view.arc_subdivisions)),
    })
}

fn tour_row(ctx: GpuContext, size: [u32; 2], max_frames: Option<usize>) -> Result<BenchRow> {
    let steps = crate::tour::parse(crate::tour::DEMO_TOUR, "demo tour")?;
    let mut renderer = crate::tour::Renderer::new(ctx, std::path::Path::new("."), size[0], size[1]);
    let mut intervals = Vec::new();
    // The last frame emitted (its address and a hash of its pixels) and when the loop went
    // back to drawing after it.
    let mut last: Option<(*const memscape_render::RgbaImage, u64)> = None;
    let mut clock: Option<Instant> = None;
    let mut stopped = false;
    let start = Instant::now();
    let result = crate::tour::render_frames(&mut renderer, &steps, 30.0, &mut |_, _, image| {
        let now = Instant::now();
        let ptr: *const memscape_render::RgbaImage = image;
        // A held frame is the same image again, nothing drawn. The address alone could be a
        // new frame's on the stack; the hash decides (its time is left out of the intervals).
        let hash = pixels_hash(image);
        let repeat = last == Some((ptr, hash));
        if !repeat && let Some(t) = clock {
            intervals.push((now - t).as_secs_f64() * 1e3);
        }
        last = Some((ptr, hash));
        clock = Some(Instant::now());
        if max_frames.is_some_and(|m| intervals.len() >= m) {
            stopped = true;
            crate::bail!("frame limit");
        }
        Ok(())
    });
    if !stopped {
        result?;
    }
    let (p50, p99, mean, _) = summary(&intervals, &[]);
    Ok(BenchRow {
        case: "tour".into(),
        path: None,
        taken: None,
        count: intervals.len(),
        width: size[0],
        height: size[1],
        view: None,
        frames: intervals.len(),
        wall_ms_p50: p50,
        wall_ms_p99: p99,
        wall_ms_mean: mean,
        gpu_ms_p50: None,
        host_ms_p50: None,
        gpu_passes: Vec::new(),
        work: None,
        target: held_to(Some(TOUR_TARGET_MS), p99, "wall p99"),
        note: Some(format!(
            "demo tour, 30 fps, time between new frames (drawn and captioned headless), {:.1} s in all",
            start.elapsed().as_secs_f64()
        )),
    })
}

fn pixels_hash(image: &memscape_render::RgbaImage) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (image.width, image.height, &image.pixels).hash(&mut h);
    h.finish()
}

fn fmt_ms(v: Option<f64>) -> String {
    match v {
        None => "–".to_owned(),
        Some(v) if v >= 100.0 => format!("{v:.0}"),
        Some(v) if v >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.2}"),
    }
}

/// The report as a Markdown table (what `memscape bench` prints without `--json`).
pub fn table(report: &BenchReport) -> String {
    let a = &report.adapter;
    let mut out = format!(
        "device: {}\nbackend: {} · type: {} · driver: {} {}\nGPU timing: {} · build: {}\n\n",
        a.name,
        a.backend,
        a.device_type,
        a.driver,
        a.driver_info,
        if a.timestamp_queries {
            "timestamp queries per pass"
        } else {
            memscape_render::GpuTimingSupport::UNAVAILABLE_NOTE
        },
        report.build
    );
    out.push_str("| case | path (taken) | count | size | view | frames | wall p50 ms | wall p99 ms | GPU p50 ms | host p50 ms | target | note |\n");
    out.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for r in &report.rows {
        let path = match (&r.path, &r.taken) {
            (Some(p), Some(t)) if t.starts_with(p.as_str()) => t.clone(),
            (Some(p), Some(t)) => format!("{p} ({t})"),
            (Some(p), None) => p.clone(),
            _ => "–".to_owned(),
        };
        let target = r.target.as_ref().map_or("–".to_owned(), |t| {
            format!(
                "≤ {} ms ({}): {}",
                t.ms,
                t.statistic,
                if t.met { "met" } else { "missed" }
            )
        });
        out.push_str(&format!(
            "| {} | {} | {} | {}×{} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.case,
            path,
            crate::stats::group_digits(r.count as u64),
            r.width,
            r.height,
            r.view.as_deref().unwrap_or("–"),
            r.frames,
            fmt_ms(r.wall_ms_p50),
            fmt_ms(r.wall_ms_p99),
            fmt_ms(r.gpu_ms_p50),
            fmt_ms(r.host_ms_p50),
            target,
            r.note.as_deref().unwrap_or(""),
        ));
    }
    // Each level-of-detail GPU frame's passes (p50 each; their sum's p50 is the GPU column).
    let split: Vec<&BenchRow> = report
        .rows
        .iter()
        .filter(|r| !r.gpu_passes.is_empty() || r.work.is_some())
        .collect();
    if !split.is_empty() {
        out.push_str("\nGPU passes (p50 ms) and the work they were given:\n\n");
        for r in split {
            let passes: Vec<String> = r
                .gpu_passes
                .iter()
                .map(|p| format!("{} {}", p.pass, fmt_ms(Some(p.ms_p50))))
                .collect();
            out.push_str(&format!(
                "- {} {}×{} {}: {}{}\n",
                r.path.as_deref().unwrap_or("–"),
                r.width,
                r.height,
                r.view.as_deref().unwrap_or("–"),
                if passes.is_empty() {
                    "no GPU times".to_owned()
                } else {
                    passes.join(" · ")
                },
                r.work
                    .as_deref()
                    .map_or(String::new(), |w| format!("; {w}")),
            ));
        }
    }
    out
}

/// A row of the level-of-detail frames: `path` drew `wall` (ms per frame) of `label`'s view.
fn lod_row(
    path: &str,
    taken: String,
    blocks: usize,
    [w, h]: [u32; 2],
    label: &str,
    wall: &[f64],
    note: &str,
) -> BenchRow {
    let (p50, p99, mean, _) = summary(wall, &[]);
    BenchRow {
        case: "alloc_map".into(),
        path: Some(path.into()),
        taken: Some(taken),
        count: blocks,
        width: w,
        height: h,
        view: Some(label.into()),
        frames: wall.len(),
        wall_ms_p50: p50,
        wall_ms_p99: p99,
        wall_ms_mean: mean,
        gpu_ms_p50: None,
        host_ms_p50: None,
        gpu_passes: Vec::new(),
        work: None,
        target: held_to(
            alloc_map_target(blocks, [w, h], label == "zoomed in"),
            p50,
            "wall p50",
        ),
        note: Some(note.into()),
    }
}
