//! The allocation map's dense path (compute passes with per-row difference arrays, the tall
//! blocks rasterized from a compacted list) on the GPU (lavapipe in CI) against the CPU
//! reference, which defines the picture for both paths.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memscape_render::alloc_map::cpu_reference;
use memscape_render::alloc_map::{
    AccumPath, AllocBlockGpu, AllocMapData, AllocMapFrame, AllocMapPipelines, AllocMapView,
    BlockTimeGpu, ColorMode, CushionKind, DrawOptions, SelectionBits, SelectionStyle,
};
use memscape_render::golden::compare;
use memscape_render::offscreen::OFFSCREEN_FORMAT;
use memscape_render::{GpuContext, OffscreenTarget, RgbaImage};

mod common;
use common::assert_close;
use common::ctx;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// The view of [`random_blocks`]: 200×120 pixels, exactly 4 time units and 16 bytes per pixel
/// (so that blocks on multiples of those touch pixel borders exactly).
const W: u32 = 200;
const H: u32 = 120;
const T0: u64 = 400;
const A0: u64 = 0xffff_ff00_0000_0000;

fn view() -> AllocMapView {
    AllocMapView::fit(T0, T0 + 4 * u64::from(W), A0, A0 + 16 * u64::from(H), W, H)
}

/// Every kind of block the dense path treats differently: long thin ones spanning many columns
/// (sub-pixel tall, some straddling two rows), 1-byte and one-event blocks, blocks whose edges
/// lie exactly on pixel borders, medium ones of a few rows, tall ones (more than 16 rows: the
/// raster list), and blocks reaching outside the view on any side or lying entirely outside it.
fn random_blocks(seed: u64) -> (Vec<AllocBlockGpu>, Vec<BlockTimeGpu>) {
    let mut rng = Rng(seed);
    let mut blocks = Vec::new();
    let mut times = Vec::new();
    let t_span = 4 * u64::from(W);
    let a_span = 16 * u64::from(H);
    for i in 0..700u64 {
        let kind = i % 7;
        let (t0, life, addr, size) = match kind {
            // Long and thin: 20..600 columns, 1..16 bytes (at most a pixel tall).
            0 => (
                T0 - 40 + rng.below(t_span),
                80 + rng.below(2400),
                A0 + rng.below(a_span),
                1 + rng.below(16),
            ),
            // One byte, one event: far below a pixel.
            1 => (T0 + rng.below(t_span), 1, A0 + rng.below(a_span), 1),
            // On the pixel grid: start, lifetime, address and size multiples of a pixel.
            2 => (
                T0 + 4 * rng.below(u64::from(W)),
                4 * (1 + rng.below(60)),
                A0 + 16 * rng.below(u64::from(H)),
                16 * (1 + rng.below(3)),
            ),
            // A few pixels each way.
            3 => (
                T0 + rng.below(t_span),
                1 + rng.below(40),
                A0 + rng.below(a_span),
                1 + rng.below(80),
            ),
            // Tall: 17..60 rows, rasterized from the list.
            4 => (
                T0 - 20 + rng.below(t_span),
                1 + rng.below(200),
                A0 + rng.below(a_span),
                16 * (17 + rng.below(43)),
            ),
            // Reaching out of the view (left, right, below, above) or entirely outside.
            5 => {
                let t0 = T0 + rng.below(t_span + 200) - rng.below(600).min(T0);
                let addr = (A0 - 200) + rng.below(a_span + 400);
                (t0, 1 + rng.below(800), addr, 1 + rng.below(300))
            }
            // Long and a few rows tall: the interior pieces on every row.
            _ => (
                T0 - 100 + rng.below(t_span),
                200 + rng.below(1200),
                A0 + rng.below(a_span),
                8 + rng.below(120),
            ),
        };
        blocks.push(AllocBlockGpu::new(
            addr,
            size,
            memscape_render::color::categorical(rng.below(24) as u32),
            rng.below(1000) as f32 / 1000.0,
        ));
        times.push(BlockTimeGpu::new(t0, t0 + life));
    }
    (blocks, times)
}

/// Draws `options` by the path it names, checks which path ran, reads the image back.
fn render(
    ctx: &GpuContext,
    pipelines: &mut AllocMapPipelines,
    data: &AllocMapData,
    view: &AllocMapView,
    size: [u32; 2],
    options: &DrawOptions,
) -> RgbaImage {
    let target = OffscreenTarget::new(ctx, size[0], size[1]).unwrap();
    let mut frame = AllocMapFrame::new(&ctx.device, pipelines);
    let mut encoder = ctx.device.create_command_encoder(&Default::default());
    frame.prepare_with(
        &ctx.device,
        &ctx.queue,
        &mut encoder,
        pipelines,
        data,
        view,
        size,
        [0.0, 0.0],
        OFFSCREEN_FORMAT,
        options,
    );
    if options.path != AccumPath::Auto {
        assert_eq!(
            frame.last_path(),
            options.path,
            "the draw took the other path"
        );
    }
    frame.resolve_to(&mut encoder, &target.view, pipelines);
    ctx.queue.submit([encoder.finish()]);
    target.read(ctx).unwrap()
}

fn dense() -> DrawOptions {
    DrawOptions {
        path: AccumPath::Dense,
        ..Default::default()
    }
}

fn pipelines(ctx: &GpuContext) -> AllocMapPipelines {
    let pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
    assert!(
        pipelines.dense_supported(),
        "the dense path is unavailable on this device ({}): these tests would test nothing",
        ctx.adapter_name()
    );
    pipelines
}

#[test]
fn dense_path_matches_cpu_for_every_cushion_alpha_and_colour_mode() {
    let ctx = ctx();
    let mut pipelines = pipelines(ctx);
    let (blocks, times) = random_blocks(0x9e37_79b9_7f4a_7c15);
    let data = AllocMapData::upload(&ctx.device, &pipelines, &blocks, &times);
    for cushion in [
        CushionKind::None,
        CushionKind::Parabolic,
        CushionKind::Plateau,
    ] {
        for color_mode in [ColorMode::Categorical, ColorMode::Quantitative] {
            for (alpha, strength) in [(0.05f32, 1.0f32), (0.5, 3.0), (1.0, 1.0), (2.0, 0.5)] {
                let mut view = view();
                view.cushion = cushion;
                view.color_mode = color_mode;
                view.alpha = alpha;
                view.cushion_strength = strength;
                let gpu = render(ctx, &mut pipelines, &data, &view, [W, H], &dense());
                assert!(gpu.distinct_colors() > 50, "GPU image looks blank");
                let cpu = cpu_reference::render(&view, W, H, &blocks, &times);
                assert_close(
                    &format!("dense_{cushion:?}_{color_mode:?}_{alpha}_{strength}"),
                    &gpu,
                    &cpu,
                );
            }
        }
    }
}

#[test]
fn dense_and_raster_paths_draw_the_same_picture() {
    let ctx = ctx();
    let mut pipelines = pipelines(ctx);
    let (blocks, times) = random_blocks(0x2545_f491_4f6c_dd1d);
    let data = AllocMapData::upload(&ctx.device, &pipelines, &blocks, &times);
    let view = view();
    let dense_image = render(ctx, &mut pipelines, &data, &view, [W, H], &dense());
    let raster = DrawOptions {
        path: AccumPath::Raster,
        ..Default::default()
    };
    let raster_image = render(ctx, &mut pipelines, &data, &view, [W, H], &raster);
    assert_close("dense_vs_raster", &dense_image, &raster_image);
    // Not trivially: the view has blocks of both kinds, and dropping either changes it.
    let mut thin_only = DrawOptions::range(0..1);
    thin_only.path = AccumPath::Dense;
    let one = render(ctx, &mut pipelines, &data, &view, [W, H], &thin_only);
    assert!(compare(&one, &dense_image, common::ALLOC_MAP_GPU_VS_CPU).differing_pixels > 100);
}

#[test]
fn dense_ranges_selection_and_chunks_match_cpu() {
    let ctx = ctx();
    let mut pipelines = pipelines(ctx);
    let (blocks, times) = random_blocks(0x1234_5678_9abc_def1);
    // Chunks of 97 blocks: ranges start and end inside chunks, the raster list has a region and
    // an indirect draw per chunk.
    let data = AllocMapData::upload_chunked(&ctx.device, &pipelines, &blocks, &times, 97);
    assert!(data.chunk_count() > 5);
    let bits = SelectionBits::from_indices(blocks.len(), (0..blocks.len()).filter(|i| i % 3 == 0));
    data.set_selection(&ctx.queue, bits.words());
    for (range, selection, color_mode) in [
        (None, SelectionStyle::Off, ColorMode::Categorical),
        (Some(50..460), SelectionStyle::Off, ColorMode::Quantitative),
        (Some(200..201), SelectionStyle::Off, ColorMode::Categorical),
        (None, SelectionStyle::DIM, ColorMode::Categorical),
        (Some(90..650), SelectionStyle::DIM, ColorMode::Quantitative),
    ] {
        let mut view = view();
        view.color_mode = color_mode;
        let options = DrawOptions {
            range: range.clone(),
            selection,
            path: AccumPath::Dense,
        };
        let gpu = render(ctx, &mut pipelines, &data, &view, [W, H], &options);
        let cpu = cpu_reference::render_with(&view, W, H, &blocks, &times, &options, bits.words());
        assert_close(&format!("dense_{range:?}_{color_mode:?}"), &gpu, &cpu);
    }
}

/// A zoomed-out heap as the benchmark draws it (every block sub-pixel tall, many of them tens
/// of columns long), small enough for the CPU reference.
#[test]
fn dense_zoomed_out_heap_matches_cpu() {
    let ctx = ctx();
    let mut pipelines = pipelines(ctx);
    let mut rng = Rng(0x0bad_5eed_1234_5678);
    let n = 20_000u64;
    let mut blocks = Vec::new();
    let mut times = Vec::new();
    for i in 0..n {
        let size = 1u64 << rng.below(14);
        let addr = rng.below(n * 64);
        let life = 1u64 << rng.below(16);
        blocks.push(AllocBlockGpu::new(
            addr,
            size,
            memscape_render::color::categorical(rng.below(12) as u32),
            0.5,
        ));
        times.push(BlockTimeGpu::new(2 * i, 2 * i + life));
    }
    let data = AllocMapData::upload(&ctx.device, &pipelines, &blocks, &times);
    let (w, h) = (320, 180);
    for cushion in [CushionKind::Parabolic, CushionKind::Plateau] {
        let mut view = AllocMapView::fit(0, 2 * n, 0, 64 * n, w, h);
        view.cushion = cushion;
        let gpu = render(ctx, &mut pipelines, &data, &view, [w, h], &dense());
        let cpu = cpu_reference::render(&view, w, h, &blocks, &times);
        assert_close(&format!("dense_heap_{cushion:?}"), &gpu, &cpu);
    }
}

#[test]
fn dense_full_coverage_and_lone_sub_pixel_blocks() {
    let ctx = ctx();
    let mut pipelines = pipelines(ctx);
    // 64 blocks 1/64 pixel tall tile each row of a 40-pixel-long strip exactly, at α = 0.05:
    // the fixed-point sums must reach exactly 1 (no background through them).
    let mut blocks = Vec::new();
    let mut times = Vec::new();
    for i in 0..64 * 8 {
        blocks.push(AllocBlockGpu::new(i, 1, [200, 40, 40, 255], 0.5));
        times.push(BlockTimeGpu::new(0, 40));
    }
    // A 1-byte, one-event block alone far above them.
    blocks.push(AllocBlockGpu::new(100_000, 1, [255, 255, 255, 255], 1.0));
    times.push(BlockTimeGpu::new(20, 21));
    let data = AllocMapData::upload(&ctx.device, &pipelines, &blocks, &times);
    let mut view = AllocMapView::fit(0, 40, 0, 64 * 8, 40, 8);
    view.alpha = 0.05;
    view.cushion = CushionKind::None;
    view.background_linear = [0.0, 0.0, 1.0];
    let gpu = render(ctx, &mut pipelines, &data, &view, [40, 8], &dense());
    for y in 0..8 {
        for x in 0..40 {
            let p = gpu.pixel(x, y);
            assert!(
                p[0].abs_diff(200) <= 1 && p[1].abs_diff(40) <= 1 && p[2].abs_diff(40) <= 1,
                "background shows through at ({x},{y}): {p:?}"
            );
        }
    }
    assert_close(
        "dense_full_cover",
        &gpu,
        &cpu_reference::render(&view, 40, 8, &blocks, &times),
    );
    // Zoomed out so that the lone block is 1e-6 of a pixel: tinted at low α.
    let mut view = AllocMapView::fit(0, 40_000, 0, 1 << 20, 40, 40);
    view.alpha = 0.1;
    view.background_linear = [0.0; 3];
    let gpu = render(ctx, &mut pipelines, &data, &view, [40, 40], &dense());
    let cpu = cpu_reference::render(&view, 40, 40, &blocks, &times);
    let lone = gpu.pixel(0, 40 - 1 - ((100_000 * 40) >> 20));
    assert!(lone[0] > 0, "the sub-pixel block vanished: {lone:?}");
    assert_close("dense_lone", &gpu, &cpu);
}

/// The CPU sums a software rasterizer draws many blocks by (`cpu_reference::exact_sums`, split
/// over threads by block ranges, written into the accumulation targets and resolved on the GPU)
/// give the CPU reference's picture, for ranges, cushions and both colour modes.
#[test]
fn cpu_sums_resolved_on_the_gpu_are_the_cpu_reference() {
    let ctx = ctx();
    let mut pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
    let (blocks, times) = random_blocks(0x5eed_0f5c_a1ab_1e00);
    for (range, cushion, color_mode, threads) in [
        (None, CushionKind::Parabolic, ColorMode::Categorical, 1),
        (None, CushionKind::Parabolic, ColorMode::Categorical, 3),
        (
            Some(50..460),
            CushionKind::Plateau,
            ColorMode::Quantitative,
            2,
        ),
        (Some(200..201), CushionKind::None, ColorMode::Categorical, 4),
    ] {
        let mut view = view();
        view.cushion = cushion;
        view.color_mode = color_mode;
        view.alpha = 0.5;
        let sums =
            cpu_reference::exact_sums(&view, [W, H], &blocks, &times, range.clone(), threads);
        let target = OffscreenTarget::new(ctx, W, H).unwrap();
        let mut frame = AllocMapFrame::new(&ctx.device, &pipelines);
        frame.prepare_sums(
            &ctx.device,
            &ctx.queue,
            &mut pipelines,
            &view,
            [W, H],
            [0.0, 0.0],
            OFFSCREEN_FORMAT,
            &sums.acc,
            &sums.cov,
        );
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        frame.resolve_to(&mut encoder, &target.view, &pipelines);
        ctx.queue.submit([encoder.finish()]);
        let gpu = target.read(ctx).unwrap();
        let options = DrawOptions::range(range.clone().unwrap_or(0..blocks.len()));
        let cpu = cpu_reference::render_with(&view, W, H, &blocks, &times, &options, &[]);
        assert!(
            range.is_some() || cpu.distinct_colors() > 50,
            "reference image looks blank"
        );
        assert_close(
            &format!("cpu_sums_{range:?}_{cushion:?}_{color_mode:?}_{threads}"),
            &gpu,
            &cpu,
        );
    }
}
