//! A level's cells resolved on the GPU (`memscape_render::alloc_map::lod_cells`, the compute
//! pass `shaders/lod_cells.wgsl`) against their CPU twin (memscape-lod's `resolve.rs`), on
//! lavapipe: the same views drawn both ways through `alloc_map::lod::prepare` and the same
//! Eq. 1 resolve pass, on a real heaptrack trace (the one memscape-lod's tests index) and a
//! generated one, whole and zoomed, α = 0.1 and 1; isolated 1-byte blocks stay visible at
//! α = 0.1 on the GPU path at every zoom a level draws.
//!
//! Tolerance: mean ≤ [`MEAN_LEVELS`] and ≥ [`WITHIN_SHARE`] of pixels within [`WITHIN_LEVELS`]
//! of 255 per channel. The GPU sums in f32 where the CPU sums each cell in f64 and rounds into
//! f32 sums; the weights themselves are the same formulas (exp2/log2 for f^α instead of the
//! CPU's polynomial fast_pow: both within 1e-6 relative), and pixel positions are kept local to
//! an integer origin computed in f64 per column and row, so a cell's edges are placed to about
//! 1e-7 px as on the CPU. What remains is the order of f32 additions per pixel (atomic adds
//! in any order: ≈ 1e-7 relative per add, a few hundred adds per pixel) and, at α = 0.1, edges
//! that lie within 1e-6 px of a pixel boundary, where a sliver's o^0.1 jumps: rare pixels.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::sync::atomic::AtomicBool;

use memscape_lod::{FramePath, LodBlock, LodTrace};
use memscape_render::alloc_map::{
    AccumPath, AllocMapFrame, AllocMapPipelines, AllocMapView, CushionKind, LodCellsCache,
};
use memscape_render::offscreen::{OFFSCREEN_FORMAT, OffscreenTarget};
use memscape_views::alloc_map::lod::{
    ExactOnGpu, LargeBlocksOn, LodDrawn, LodFrameTarget, prepare, prepare_gpu_cells,
};

const MEAN_LEVELS: f64 = 0.05;
const WITHIN_LEVELS: u8 = 2;
const WITHIN_SHARE: f64 = 0.999;

fn open(path: &Path) -> LodTrace {
    LodTrace::open(
        path,
        "thread",
        false,
        &mut |_, _| {},
        &AtomicBool::new(false),
    )
    .expect("open with index")
    .0
}

/// `view` of `lod` drawn from its level, cells on the GPU (`Some`: the large blocks where it
/// says) or on the CPU; the pixels and the path.
fn draw(
    lod: &LodTrace,
    view: &AllocMapView,
    size: [u32; 2],
    gpu_cells: Option<LargeBlocksOn>,
) -> (Vec<u8>, LodDrawn) {
    let ctx = common::gpu_ctx();
    let mut pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
    let mut frame = AllocMapFrame::new(&ctx.device, &pipelines);
    let mut cache = LodCellsCache::default();
    let target = OffscreenTarget::new(ctx, size[0], size[1]).unwrap();
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    // The level's resolve only (`prepare` draws views of few blocks exactly instead).
    let mut upload = None;
    let drawn = if let Some(large_on) = gpu_cells {
        let (data, drawn) = prepare_gpu_cells(
            large_on,
            &mut LodFrameTarget::offscreen(ctx, &mut encoder, &mut pipelines, &mut frame),
            &mut cache,
            lod,
            view,
            size,
        )
        .expect("a level draws the view");
        upload = data;
        drawn
    } else {
        let (sums, stats) = lod.sums(&view.eq1(size), FramePath::Lod);
        frame.prepare_sums(
            &ctx.device,
            &ctx.queue,
            &mut pipelines,
            view,
            size,
            [0.0, 0.0],
            OFFSCREEN_FORMAT,
            &sums.acc,
            &sums.cov,
        );
        LodDrawn::Sums {
            level: stats.level,
            cells: stats.cells,
            exact_blocks: stats.exact_blocks,
        }
    };
    let _keep = upload;
    frame.resolve_to(&mut encoder, &target.view, &pipelines);
    ctx.queue.submit([encoder.finish()]);
    (target.read(ctx).unwrap().pixels, drawn)
}

/// The GPU's cells are drawn from the level the CPU resolve draws the same frame from
/// (`LodIndex::level_for_frame`: small frames from finer cells), not only to a picture within
/// the tolerance: two levels' pictures may both be.
fn assert_same_level(gpu: &LodDrawn, cpu: &LodDrawn) {
    if let (
        LodDrawn::GpuCells { level, .. },
        LodDrawn::Sums {
            level: cpu_level, ..
        },
    ) = (gpu, cpu)
    {
        assert_eq!(Some(*level), *cpu_level, "GPU {gpu:?}, CPU {cpu:?}");
    }
}

fn compare(a: &[u8], b: &[u8]) -> (f64, f64, u8) {
    let (mut sum, mut within, mut worst) = (0u64, 0usize, 0u8);
    for (p, q) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
        let d = (0..3).map(|k| p[k].abs_diff(q[k])).max().unwrap_or(0);
        sum += (0..3).map(|k| u64::from(p[k].abs_diff(q[k]))).sum::<u64>();
        within += usize::from(d <= WITHIN_LEVELS);
        worst = worst.max(d);
    }
    let n = a.len() / 4;
    (sum as f64 / (n * 3) as f64, within as f64 / n as f64, worst)
}

/// Checks the views of `lod`; returns how many the GPU cells drew.
fn check(name: &str, lod: &LodTrace, size: [u32; 2]) -> usize {
    let [te, ye] = lod.extent();
    let mut windows = vec![(0, te, 0, ye)];
    for z in [4u64, 16] {
        windows.push((te / 3, te / 3 + te / z, 0, ye));
        windows.push((te / 5, te / 5 + te / z, ye / 4, ye / 4 + ye / z));
    }
    let mut on_gpu = 0;
    for &(t0, t1, a0, a1) in &windows {
        for (alpha, cushion) in [(0.1f32, CushionKind::Parabolic), (1.0, CushionKind::None)] {
            let mut view = AllocMapView::fit(t0, t1, a0, a1, size[0], size[1]);
            view.alpha = alpha;
            view.cushion = cushion;
            if lod.index.level_for(view.eq1(size).pixel_size()).is_none() {
                continue;
            }
            let (cpu, cpu_drawn) = draw(lod, &view, size, None);
            // The large blocks rasterized (hardware GPUs) and summed on the CPU (lavapipe).
            for large_on in [LargeBlocksOn::Gpu, LargeBlocksOn::Cpu] {
                let (gpu, gpu_drawn) = draw(lod, &view, size, Some(large_on));
                let (mean, within, worst) = compare(&cpu, &gpu);
                eprintln!(
                    "{name} [{t0},{t1})×[{a0},{a1}) α {alpha} large on {large_on:?}: \
                     {gpu_drawn:?} vs {cpu_drawn:?}: mean {mean:.4}, within {WITHIN_LEVELS}: \
                     {:.4} %, worst {worst}",
                    within * 100.0
                );
                on_gpu += usize::from(matches!(gpu_drawn, LodDrawn::GpuCells { .. }));
                assert_same_level(&gpu_drawn, &cpu_drawn);
                assert!(mean <= MEAN_LEVELS, "{name}: mean {mean}");
                assert!(within >= WITHIN_SHARE, "{name}: within {within}");
            }
        }
    }
    on_gpu
}

#[test]
fn gpu_cells_match_the_cpu_resolve_on_a_real_trace() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("sqlite_1M.raw.zst");
    std::os::unix::fs::symlink(common::shared("heaptrack/sqlite_1M.raw.zst"), &trace).unwrap();
    let lod = open(&trace);
    // 1 M events: the levels draw views of fewer pixels than events.
    assert!(check("sqlite_1M", &lod, [320, 180]) + check("sqlite_1M", &lod, [64, 36]) >= 4);
}

/// The generated trace of the tests, 1.5 M events (isolated thin blocks among them), in `dir`.
fn generated(dir: &std::path::Path) -> std::path::PathBuf {
    let trace = dir.join("synth.msc");
    memscape_lod::synth::write_mappable(
        memscape_lod::synth::SynthParams::new(1_500_000, 11),
        &trace,
        &mut |_| {},
    )
    .unwrap();
    trace
}

#[test]
fn gpu_cells_match_the_cpu_resolve_on_a_generated_trace_and_keep_isolated_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let lod = open(&generated(dir.path()));
    let size = [320u32, 180];
    assert!(check("generated", &lod, size) + check("generated", &lod, [96, 54]) >= 4);
    // Isolated 1-byte blocks, visible at α = 0.1 on the GPU path from the whole plane down.
    let cols = lod.file.columns();
    let axis = &lod.index.meta.axis;
    let color = |t: u32, _: u32, _: u64, _: u64| (memscape_lod::source::palette_color(t), 0.0);
    let isolated: Vec<LodBlock> = (0..cols.len())
        .map(|i| memscape_lod::trace_source::lod_block(&cols, axis, &color, i))
        .filter(|b| b.size == 1)
        .step_by(5)
        .take(4)
        .collect();
    assert!(!isolated.is_empty());
    let [te, ye] = lod.extent();
    let mut by_gpu = 0;
    for b in &isolated {
        let mut zoom = 1u64;
        while te / zoom > 4096 {
            let (tw, yw) = ((te / zoom).max(64), (ye / zoom).max(64));
            let (t0, a0) = (b.t0.saturating_sub(tw / 3), b.y.saturating_sub(yw / 3));
            let mut view = AllocMapView::fit(t0, t0 + tw, a0, a0 + yw, size[0], size[1]);
            view.alpha = 0.1;
            zoom *= 4;
            if lod.index.level_for(view.eq1(size).pixel_size()).is_none() {
                continue;
            }
            let (img, drawn) = draw(
                &lod,
                &view,
                size,
                Some(LargeBlocksOn::of(&common::gpu_ctx().device)),
            );
            by_gpu += usize::from(matches!(drawn, LodDrawn::GpuCells { .. }));
            let lv = view.eq1(size);
            let bg = memscape_lod::PixelSums::new(1, 1).resolve(&lv)[0];
            let g = lv.block_geometry_px(b);
            let (px, py) = (
                g[0].max(0.0) as usize,
                (g[1] - g[3] / 2.0).max(0.0) as usize,
            );
            let w = size[0] as usize;
            let seen = (py.saturating_sub(1)..=py + 1).any(|y| {
                (px.saturating_sub(1)..=px + 1).any(|x| {
                    x < w
                        && img
                            .get((y * w + x) * 4..(y * w + x) * 4 + 3)
                            .is_some_and(|p| (0..3).any(|k| p[k].abs_diff(bg[k]) >= 8))
                })
            });
            assert!(
                seen,
                "1-byte block at t {} y {} invisible at zoom {zoom} ({drawn:?})",
                b.t0, b.y
            );
            zoom *= 4;
        }
    }
    assert!(
        by_gpu > 0,
        "no zoom of the isolated blocks was drawn by the GPU cells"
    );
}

/// The short views of memscape-lod's `tests/faithful.rs` (640 px wide, cells 1.00 × 0.71 px,
/// α 0.1 with cushions), where a pixel edge cuts lines of reused addresses: which side of it a
/// slice's blocks lie on comes from the quarters of the cells' fullest address slices
/// (`CellRec::spot_y`), read by the GPU twin too (without them it differs from the CPU on
/// more than 0.1 % of pixels).
#[test]
fn gpu_cells_match_the_cpu_resolve_on_short_views_cut_by_pixel_edges() {
    let dir = tempfile::tempdir().unwrap();
    let lod = open(&generated(dir.path()));
    let [te, ye] = lod.extent();
    let mut checked = 0;
    for l in lod.index.levels.iter() {
        let [tau, sig] = l.cell_size();
        let pixel = [tau, sig / 0.71];
        let h = (ye as f64 / pixel[1]).round() as u32;
        if !(100..270).contains(&h) {
            continue;
        }
        let size = [640u32, h];
        let t0 = te / 3;
        let mut view = AllocMapView::fit(
            t0,
            t0 + (640.0 * pixel[0]) as u64,
            0,
            (f64::from(h) * pixel[1]) as u64,
            size[0],
            size[1],
        );
        view.alpha = 0.1;
        view.cushion = CushionKind::Parabolic;
        if lod.index.level_for(view.eq1(size).pixel_size()).is_none() {
            continue;
        }
        let (cpu, cpu_drawn) = draw(&lod, &view, size, None);
        let (gpu, drawn) = draw(&lod, &view, size, Some(LargeBlocksOn::Cpu));
        assert_same_level(&drawn, &cpu_drawn);
        let (mean, within, worst) = compare(&cpu, &gpu);
        eprintln!(
            "short 640×{h}: {drawn:?}: mean {mean:.4}, within {WITHIN_LEVELS}: {:.4} %, worst {worst}",
            within * 100.0
        );
        assert!(matches!(drawn, LodDrawn::GpuCells { .. }), "{drawn:?}");
        assert!(mean <= MEAN_LEVELS, "640×{h}: mean {mean}");
        assert!(within >= WITHIN_SHARE, "640×{h}: within {within}");
        checked += 1;
    }
    assert!(checked > 0, "no short view drawn from a level");
}

/// `view` of `lod` (finer than every level) drawn through `prepare` with `exact`: the
/// exact blocks on the GPU when they fit its limit, else their sums on the CPU.
fn draw_exact(
    lod: &LodTrace,
    view: &AllocMapView,
    size: [u32; 2],
    exact: ExactOnGpu,
) -> (Vec<u8>, LodDrawn) {
    let ctx = common::gpu_ctx();
    let mut pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
    let mut frame = AllocMapFrame::new(&ctx.device, &pipelines);
    let target = OffscreenTarget::new(ctx, size[0], size[1]).unwrap();
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    let (upload, drawn) = prepare(
        exact,
        &mut LodFrameTarget::offscreen(ctx, &mut encoder, &mut pipelines, &mut frame),
        None,
        lod,
        view,
        size,
    );
    frame.resolve_to(&mut encoder, &target.view, &pipelines);
    ctx.queue.submit([encoder.finish()]);
    let pixels = target.read(ctx).unwrap().pixels;
    drop(upload);
    (pixels, drawn)
}

/// Views finer than every level: a hardware GPU draws up to `EXACT_GPU_MAX_BLOCKS_HARDWARE`
/// exact blocks by the dense path (lavapipe 50,000, summed on the CPU beyond). The hardware choice,
/// forced on lavapipe, draws the same pictures as the CPU sums (a limit below the view's
/// blocks), within the tolerance of the cells above.
#[test]
fn exact_blocks_by_the_dense_gpu_path_match_the_cpu_sums() {
    let software = ExactOnGpu::of(&common::gpu_ctx().device);
    if std::env::var_os("MEMSCAPE_LOD_EXACT_GPU").is_none() && common::gpu_ctx_is_software() {
        assert_eq!(software, ExactOnGpu::SOFTWARE, "lavapipe keeps its limit");
    }
    assert_eq!(
        ExactOnGpu::chosen(Some("hardware"), true),
        ExactOnGpu::HARDWARE
    );
    assert_eq!(ExactOnGpu::chosen(None, false), ExactOnGpu::HARDWARE);
    assert_eq!(ExactOnGpu::HARDWARE.path, AccumPath::Dense);
    assert_eq!(ExactOnGpu::HARDWARE.max_blocks, 20_000_000);
    let dir = tempfile::tempdir().unwrap();
    let lod = open(&generated(dir.path()));
    let [te, ye] = lod.extent();
    let size = [640u32, 360];
    let mut checked = 0;
    for (t0, t1, a0, a1) in [(0, te, 0, ye), (te / 3, te / 3 + te / 4, ye / 4, ye)] {
        for (alpha, cushion) in [(0.1f32, CushionKind::Parabolic), (1.0, CushionKind::None)] {
            let mut view = AllocMapView::fit(t0, t1, a0, a1, size[0], size[1]);
            view.alpha = alpha;
            view.cushion = cushion;
            if lod.index.level_for(view.eq1(size).pixel_size()).is_some() {
                continue;
            }
            let (gpu, gpu_drawn) = draw_exact(&lod, &view, size, ExactOnGpu::HARDWARE);
            let LodDrawn::ExactBlocks(n) = gpu_drawn else {
                panic!("the hardware limit draws the exact blocks on the GPU: {gpu_drawn:?}");
            };
            // A limit below the view's blocks: their sums on the CPU.
            let below = ExactOnGpu {
                max_blocks: n.saturating_sub(1),
                ..ExactOnGpu::SOFTWARE
            };
            let (cpu, cpu_drawn) = draw_exact(&lod, &view, size, below);
            assert!(
                matches!(cpu_drawn, LodDrawn::Sums { level: None, .. }),
                "{cpu_drawn:?}"
            );
            let (mean, within, worst) = compare(&cpu, &gpu);
            eprintln!(
                "[{t0},{t1})×[{a0},{a1}) α {alpha}: {n} blocks dense on the GPU vs CPU sums: \
                 mean {mean:.4}, within {WITHIN_LEVELS}: {:.4} %, worst {worst}",
                within * 100.0
            );
            assert!(mean <= MEAN_LEVELS, "mean {mean}");
            assert!(within >= WITHIN_SHARE, "within {within}");
            checked += 1;
        }
    }
    assert!(checked >= 2, "views finer than every level: {checked}");
}

/// `views` of `lod` drawn in turn through `prepare_gpu_cells` (large blocks on the GPU) or
/// `prepare` (exact blocks: `exact`), with one cache keeping blocks across the frames (`keep`)
/// or blocks gathered for each view alone and uploaded every frame (`blocks_per_frame`, the way
/// before they were kept); the pixels, what was drawn and the region the kept blocks were
/// gathered for.
#[allow(clippy::type_complexity)]
fn draw_sequence(
    lod: &LodTrace,
    views: &[AllocMapView],
    size: [u32; 2],
    exact: Option<ExactOnGpu>,
    keep: bool,
) -> Vec<(Vec<u8>, LodDrawn, Option<([f64; 2], [f64; 2])>)> {
    let mut cache = LodCellsCache::default();
    cache.blocks_per_frame = !keep;
    draw_sequence_with(lod, views, size, exact, cache)
}

/// [`draw_sequence`] with `cache` as the caller set it up.
#[allow(clippy::type_complexity)]
fn draw_sequence_with(
    lod: &LodTrace,
    views: &[AllocMapView],
    size: [u32; 2],
    exact: Option<ExactOnGpu>,
    mut cache: LodCellsCache,
) -> Vec<(Vec<u8>, LodDrawn, Option<([f64; 2], [f64; 2])>)> {
    let ctx = common::gpu_ctx();
    let mut pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
    let target = OffscreenTarget::new(ctx, size[0], size[1]).unwrap();
    let mut out = Vec::new();
    for view in views {
        let mut frame = AllocMapFrame::new(&ctx.device, &pipelines);
        let mut encoder = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        let (upload, drawn) = match exact {
            Some(exact) => prepare(
                exact,
                &mut LodFrameTarget::offscreen(ctx, &mut encoder, &mut pipelines, &mut frame),
                Some(&mut cache),
                lod,
                view,
                size,
            ),
            None => prepare_gpu_cells(
                LargeBlocksOn::Gpu,
                &mut LodFrameTarget::offscreen(ctx, &mut encoder, &mut pipelines, &mut frame),
                &mut cache,
                lod,
                view,
                size,
            )
            .expect("a level draws the view"),
        };
        frame.resolve_to(&mut encoder, &target.view, &pipelines);
        ctx.queue.submit([encoder.finish()]);
        let pixels = target.read(ctx).unwrap().pixels;
        drop(upload);
        let region = if exact.is_some() {
            cache.exact_blocks.as_ref().map(|u| u.region)
        } else {
            cache.large_blocks.as_ref().map(|u| u.region)
        };
        out.push((pixels, drawn, region));
    }
    out
}

/// A view of `[t0, t1) × [a0, a1)` at `size`, α `alpha`.
fn view_of(w: (u64, u64, u64, u64), size: [u32; 2], alpha: f32) -> AllocMapView {
    let mut view = AllocMapView::fit(w.0, w.1, w.2, w.3, size[0], size[1]);
    view.alpha = alpha;
    view.cushion = CushionKind::Parabolic;
    view
}

/// Blocks kept on the GPU across frames (a level's large blocks, a fine view's exact blocks,
/// gathered for a region around the view) draw the same pictures, bit for bit, as each view's
/// own blocks gathered and uploaded for every frame: a repaint at another α, a pan and zooms
/// within the region (one of them to another level: the key), a view outside it, and back.
#[test]
fn kept_blocks_draw_the_same_frames_as_fresh_ones() {
    let dir = tempfile::tempdir().unwrap();
    let mut lod = open(&generated(dir.path()));
    // Small frames are drawn from finer cells (`LodIndex::level_for_frame`): on this trace
    // every 96×54 frame below would reach its finest level, and no zoom within the region
    // would change the level. The levels of cells up to a pixel, as before, change.
    lod.index.detail_pixels = 0;
    let [te, ye] = lod.extent();
    let (t0, ts, a0, as_) = (te / 3, te / 4, ye / 4, ye / 2);
    // `zoom_in`: the fifth view zooms in 2× (finer than every level here), else pans by 1/8.
    let sequence = |t0: u64, ts: u64, a0: u64, as_: u64, size: [u32; 2], zoom_in: bool| {
        let (d, s) = if zoom_in { (4, 2) } else { (8, 1) };
        vec![
            view_of((t0, t0 + ts, a0, a0 + as_), size, 0.5),
            // A repaint at another α.
            view_of((t0, t0 + ts, a0, a0 + as_), size, 0.1),
            // A pan by a quarter view: within the region.
            view_of(
                (
                    t0 + ts / 4,
                    t0 + ts / 4 + ts,
                    a0 + as_ / 8,
                    a0 + as_ / 8 + as_,
                ),
                size,
                0.5,
            ),
            // Zoomed out 1.8× (a coarser level), in 2× around the centre (or a pan): within the
            // region.
            view_of(
                (
                    t0 - ts * 2 / 5,
                    t0 + ts + ts * 2 / 5,
                    a0 - as_ * 2 / 5,
                    a0 + as_ + as_ * 2 / 5,
                ),
                size,
                0.5,
            ),
            view_of(
                (
                    t0 + ts / d,
                    t0 + ts / d + ts / s,
                    a0 + as_ / d,
                    a0 + as_ / d + as_ / s,
                ),
                size,
                0.5,
            ),
            // Elsewhere, then back.
            view_of((t0 + 2 * ts, t0 + 3 * ts, a0, a0 + as_), size, 0.5),
            view_of((t0, t0 + ts, a0, a0 + as_), size, 0.5),
        ]
    };
    // A level's cells with its large blocks on the GPU.
    let size = [96u32, 54];
    let views = sequence(t0, ts, a0, as_, size, false);
    let levels: Vec<Option<usize>> = views
        .iter()
        .map(|v| lod.index.level_for(v.eq1(size).pixel_size()))
        .collect();
    eprintln!("levels of the cells views: {levels:?}");
    let kept = draw_sequence(&lod, &views, size, None, true);
    let fresh = draw_sequence(&lod, &views, size, None, false);
    let mut levels = Vec::new();
    for (i, ((k, kd, _), (f, fd, _))) in kept.iter().zip(&fresh).enumerate() {
        eprintln!("cells frame {i}: kept {kd:?}, fresh {fd:?}");
        let LodDrawn::GpuCells { level, .. } = fd else {
            panic!("frame {i}: {fd:?}");
        };
        levels.push(*level);
        assert!(
            k == f,
            "cells frame {i}: the kept blocks drew another picture"
        );
    }
    assert_eq!(
        kept[0].2, kept[1].2,
        "the repaint gathered its blocks again"
    );
    assert_eq!(kept[0].2, kept[2].2, "the pan gathered its blocks again");
    assert!(
        levels[3] != levels[0],
        "no zoom within the region changed the level: {levels:?}"
    );
    // A view finer than every level: its exact blocks.
    let size = [640u32, 360];
    // Near the bottom of the plane, where the generated trace's blocks are dense.
    let (t0, ts, a0, as_) = (te / 2, te / 64, ye / 64, ye / 32);
    let views = sequence(t0, ts, a0, as_, size, true);
    let in_view: Vec<usize> = views
        .iter()
        .map(|v| {
            lod.exact_blocks(&v.eq1(size), usize::MAX)
                .map_or(0, |b| b.len())
        })
        .collect();
    eprintln!("blocks in the exact views: {in_view:?}");
    assert!(
        in_view.iter().all(|&n| n > 0),
        "an exact view without blocks: {in_view:?}"
    );
    let exact = ExactOnGpu::of(&common::gpu_ctx().device);
    let kept = draw_sequence(&lod, &views, size, Some(exact), true);
    let fresh = draw_sequence(&lod, &views, size, Some(exact), false);
    for (i, ((k, kd, _), (f, fd, _))) in kept.iter().zip(&fresh).enumerate() {
        eprintln!("exact frame {i}: kept {kd:?}, fresh {fd:?}");
        assert!(matches!(fd, LodDrawn::ExactBlocks(_)), "frame {i}: {fd:?}");
        assert!(
            k == f,
            "exact frame {i}: the kept blocks drew another picture"
        );
    }
    assert_eq!(kept[0].2, kept[2].2, "the pan gathered its blocks again");
}

/// The cells' sums added to the accumulated ones in the frame's resolve draw the same pictures,
/// bit for bit, as the full-screen pass that added them into the targets before
/// (`LodCellsCache::cells_add_pass`): the same f32 additions. Views of a level at α 0.1, 0.5
/// and 1, cushioned and flat, the large blocks on the GPU and on the CPU, and a frame of
/// another size after them (the sums buffer made again).
#[test]
fn cells_added_in_the_resolve_draw_the_same_frames_as_the_add_pass() {
    let dir = tempfile::tempdir().unwrap();
    let lod = open(&generated(dir.path()));
    let [te, ye] = lod.extent();
    let size = [96u32, 54];
    let mut views = Vec::new();
    for (w, alpha) in [
        ((0, te, 0, ye), 0.5f32),
        ((te / 3, te / 3 + te / 4, ye / 4, ye / 4 + ye / 2), 0.1),
        ((te / 5, te / 5 + te / 2, 0, ye / 2), 1.0),
    ] {
        views.push(view_of(w, size, alpha));
        let mut flat = view_of(w, size, alpha);
        flat.cushion = CushionKind::None;
        views.push(flat);
    }
    for (i, v) in views.iter().enumerate() {
        assert!(
            lod.index.level_for(v.eq1(size).pixel_size()).is_some(),
            "view {i} is not drawn from a level"
        );
    }
    let fused = draw_sequence_with(&lod, &views, size, None, LodCellsCache::default());
    let mut baseline = LodCellsCache::default();
    baseline.cells_add_pass = true;
    let pass = draw_sequence_with(&lod, &views, size, None, baseline);
    for (i, ((a, ad, _), (b, _, _))) in fused.iter().zip(&pass).enumerate() {
        assert!(matches!(ad, LodDrawn::GpuCells { .. }), "frame {i}: {ad:?}");
        let (mean, _, worst) = compare(a, b);
        assert!(
            a == b,
            "frame {i}: the resolve's addition drew another picture (mean {mean}, worst {worst})"
        );
    }
    // The large blocks summed on the CPU (lavapipe's choice), and another size.
    for (size, large_on) in [
        ([96u32, 54], LargeBlocksOn::Cpu),
        ([64, 48], LargeBlocksOn::Gpu),
    ] {
        let view = view_of((te / 3, te / 3 + te / 4, 0, ye), size, 0.25);
        let mut frames = Vec::new();
        for add_pass in [false, true] {
            let ctx = common::gpu_ctx();
            let mut pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
            let mut frame = AllocMapFrame::new(&ctx.device, &pipelines);
            let mut cache = LodCellsCache::default();
            cache.cells_add_pass = add_pass;
            let target = OffscreenTarget::new(ctx, size[0], size[1]).unwrap();
            let mut encoder = ctx
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
            let (upload, drawn) = prepare_gpu_cells(
                large_on,
                &mut LodFrameTarget::offscreen(ctx, &mut encoder, &mut pipelines, &mut frame),
                &mut cache,
                &lod,
                &view,
                size,
            )
            .expect("a level draws the view");
            assert!(matches!(drawn, LodDrawn::GpuCells { .. }), "{drawn:?}");
            frame.resolve_to(&mut encoder, &target.view, &pipelines);
            ctx.queue.submit([encoder.finish()]);
            frames.push(target.read(ctx).unwrap().pixels);
            drop(upload);
            // The same frame prepared again from sums of its own resolves those alone: the
            // cells' sums were the last prepare's.
            let (sums, _) = lod.sums(&view.eq1(size), FramePath::Lod);
            frame.prepare_sums(
                &ctx.device,
                &ctx.queue,
                &mut pipelines,
                &view,
                size,
                [0.0, 0.0],
                OFFSCREEN_FORMAT,
                &sums.acc,
                &sums.cov,
            );
            let mut encoder = ctx
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
            frame.resolve_to(&mut encoder, &target.view, &pipelines);
            ctx.queue.submit([encoder.finish()]);
            assert!(
                target.read(ctx).unwrap().pixels == draw(&lod, &view, size, None).0,
                "a frame prepared again still added the cells' sums of the one before"
            );
        }
        assert!(
            frames[0] == frames[1],
            "{large_on:?} at {size:?}: the resolve's addition drew another picture"
        );
    }
}
