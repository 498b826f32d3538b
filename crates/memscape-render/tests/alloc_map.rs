//! The allocation map on the GPU (lavapipe in CI) against its CPU reference, and golden images.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memscape_render::alloc_map::cpu_reference;
use memscape_render::alloc_map::{
    AllocBlockGpu, AllocMapData, AllocMapPipelines, AllocMapView, BlockTimeGpu, ColorMode,
    CushionKind, render_offscreen,
};
use memscape_render::golden::{self, Tolerance, compare};
use memscape_render::{GpuContext, RgbaImage};

mod common;
use common::ctx;

/// GPU and CPU evaluate the same formulas in f32 but with different pow/exp implementations and
/// operation order: allow 2/255 per channel, on every pixel.
const GPU_VS_CPU: Tolerance = Tolerance {
    per_channel: 2,
    max_differing_pixels: 0,
};

/// A deterministic synthetic heap: large long-lived blocks, medium blocks, and a burst of tiny
/// short-lived ones far below a pixel, spread over an address range near the top of 64 bits.
fn synthetic(base: u64) -> (Vec<AllocBlockGpu>, Vec<BlockTimeGpu>) {
    let mut blocks = Vec::new();
    let mut times = Vec::new();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for i in 0..40u64 {
        let addr = base + i * 4096;
        let t0 = next() % 500;
        let t1 = t0 + 100 + next() % 500;
        blocks.push(AllocBlockGpu::new(
            addr,
            2048 + next() % 2048,
            memscape_render::color::categorical(i as u32),
            (i as f32) / 40.0,
        ));
        times.push(BlockTimeGpu::new(t0, t1));
    }
    for i in 0..3000u64 {
        let addr = base + 200_000 + (next() % 100_000);
        let t0 = next() % 1000;
        blocks.push(AllocBlockGpu::new(
            addr,
            8 + next() % 64,
            memscape_render::color::categorical((i % 5) as u32 + 7),
            (next() % 1000) as f32 / 1000.0,
        ));
        times.push(BlockTimeGpu::new(t0, t0 + 1 + next() % 3));
    }
    (blocks, times)
}

fn both(
    ctx: &GpuContext,
    view: &AllocMapView,
    w: u32,
    h: u32,
    blocks: &[AllocBlockGpu],
    times: &[BlockTimeGpu],
) -> (RgbaImage, RgbaImage) {
    let mut pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
    let data = AllocMapData::upload(&ctx.device, &pipelines, blocks, times);
    let gpu = render_offscreen(ctx, &mut pipelines, &data, view, w, h).unwrap();
    let cpu = cpu_reference::render(view, w, h, blocks, times);
    (gpu, cpu)
}

fn assert_close(name: &str, gpu: &RgbaImage, cpu: &RgbaImage, allowed_fraction: f64) {
    let c = compare(gpu, cpu, GPU_VS_CPU);
    let allowed = (f64::from(gpu.width * gpu.height) * allowed_fraction) as usize;
    if c.differing_pixels > allowed {
        let dir = std::env::temp_dir();
        gpu.save_png(&dir.join(format!("{name}.gpu.png"))).ok();
        cpu.save_png(&dir.join(format!("{name}.cpu.png"))).ok();
        c.diff.save_png(&dir.join(format!("{name}.diff.png"))).ok();
        panic!(
            "{name}: {} pixels differ by > {} (allowed {allowed}); max difference {}; images in {}",
            c.differing_pixels,
            GPU_VS_CPU.per_channel,
            c.max_channel_difference,
            dir.display()
        );
    }
}

#[test]
fn gpu_matches_cpu_reference_for_every_cushion_and_colour_mode() {
    let ctx = ctx();
    let base = 0xffff_ff00_0000_0000u64;
    let (blocks, times) = synthetic(base);
    for cushion in [
        CushionKind::None,
        CushionKind::Parabolic,
        CushionKind::Plateau,
    ] {
        for color_mode in [ColorMode::Categorical, ColorMode::Quantitative] {
            for alpha in [0.2f32, 1.0] {
                let mut view = AllocMapView::fit(0, 1100, base, base + 310_000, 160, 120);
                view.cushion = cushion;
                view.color_mode = color_mode;
                view.alpha = alpha;
                let (gpu, cpu) = both(ctx, &view, 160, 120, &blocks, &times);
                assert!(gpu.distinct_colors() > 20, "GPU image looks blank");
                assert_close(
                    &format!("alloc_map_{cushion:?}_{color_mode:?}_{alpha}"),
                    &gpu,
                    &cpu,
                    0.0,
                );
            }
        }
    }
}

#[test]
fn sub_pixel_blocks_never_vanish() {
    let ctx = ctx();
    // One block a hundredth of a pixel wide and a hundredth tall, bright on black.
    let blocks = vec![AllocBlockGpu::new(1000, 1, [255, 255, 255, 255], 1.0)];
    let times = vec![BlockTimeGpu::new(50, 51)];
    let mut view = AllocMapView::fit(0, 1000, 0, 10_000, 10, 100);
    view.alpha = 0.2;
    view.background_linear = [0.0; 3];
    let (gpu, cpu) = both(ctx, &view, 10, 100, &blocks, &times);
    // The block lies at x = 0.5 px, y = 100 - 10 = 90 px.
    let lit = gpu.pixel(0, 89);
    assert!(lit[0] > 0, "the sub-pixel block vanished: {lit:?}");
    assert_eq!(
        gpu.distinct_colors(),
        2,
        "exactly one pixel should light up"
    );
    assert_close("sub_pixel", &gpu, &cpu, 0.0);
}

#[test]
fn fully_covered_pixels_show_no_background_at_low_alpha() {
    let ctx = ctx();
    // 64 adjacent blocks, each 1/64 of a pixel tall, tile a pixel row exactly: f32 round-off in
    // Σf must not let the background "hang in the air" through them.
    let mut blocks = Vec::new();
    let mut times = Vec::new();
    for i in 0..64 * 8 {
        blocks.push(AllocBlockGpu::new(i, 1, [200, 40, 40, 255], 0.5));
        times.push(BlockTimeGpu::new(0, 8));
    }
    let mut view = AllocMapView::fit(0, 8, 0, 64 * 8, 8, 8);
    view.alpha = 0.05;
    view.cushion = CushionKind::None;
    view.background_linear = [0.0, 0.0, 1.0];
    let (gpu, cpu) = both(ctx, &view, 8, 8, &blocks, &times);
    for y in 0..8 {
        for x in 0..8 {
            let p = gpu.pixel(x, y);
            // Exactly the block colour: no blue from the background mixed in.
            assert!(
                p[0].abs_diff(200) <= 1 && p[1].abs_diff(40) <= 1 && p[2].abs_diff(40) <= 1,
                "background shows through at ({x},{y}): {p:?}"
            );
        }
    }
    assert_close("full_cover", &gpu, &cpu, 0.0);
}

#[test]
fn byte_level_zoom_near_the_top_of_the_address_space_is_exact() {
    let ctx = ctx();
    let origin = 0xffff_ffff_ffff_0000u64;
    // Blocks of 1, 2 and 3 bytes at consecutive addresses; 10 pixels per byte.
    let blocks = vec![
        AllocBlockGpu::new(origin + 2, 1, [255, 0, 0, 255], 0.0),
        AllocBlockGpu::new(origin + 3, 2, [0, 255, 0, 255], 0.0),
        AllocBlockGpu::new(origin + 5, 3, [0, 0, 255, 255], 0.0),
    ];
    let times = vec![BlockTimeGpu::new(u64::MAX - 100, u64::MAX - 90); 3];
    let mut view = AllocMapView::fit(u64::MAX - 100, u64::MAX - 90, origin, origin + 10, 10, 100);
    view.background_linear = [0.0; 3];
    view.cushion = CushionKind::None;
    view.alpha = 1.0;
    let (gpu, _) = both(ctx, &view, 10, 100, &blocks, &times);
    // Row r (from the bottom) shows byte r / 10.
    let colour_at_byte = |byte: u32| gpu.pixel(5, 99 - byte * 10 - 5);
    assert!(
        colour_at_byte(1)[..3].iter().all(|&c| c < 10),
        "byte 1 free: {:?}",
        colour_at_byte(1)
    );
    assert!(
        colour_at_byte(2)[0] > 200,
        "byte 2 should be red: {:?}",
        colour_at_byte(2)
    );
    assert!(
        colour_at_byte(3)[1] > 200 && colour_at_byte(4)[1] > 200,
        "bytes 3-4 green"
    );
    assert!((5..8).all(|b| colour_at_byte(b)[2] > 200), "bytes 5-7 blue");
    assert!(
        colour_at_byte(8)[0] < 10 && colour_at_byte(8)[1] < 10 && colour_at_byte(8)[2] < 10,
        "byte 8 free"
    );
    // Exact edges: the boundary between byte 2 and 3 is a clean row, no blended pixel.
    for row in 0..100 {
        let p = gpu.pixel(5, row);
        let saturated = p[..3].iter().filter(|&&c| c > 200).count() == 1
            && p[..3].iter().filter(|&&c| c < 10).count() == 2;
        let free = p[..3].iter().all(|&c| c < 10);
        assert!(saturated || free, "row {row} is blended: {p:?}");
    }
}

#[test]
fn golden_synthetic_heap() {
    let ctx = ctx();
    let base = 0x5555_0000_0000u64;
    let (blocks, times) = synthetic(base);
    let mut view = AllocMapView::fit(0, 1100, base, base + 310_000, 320, 200);
    view.alpha = 0.4;
    let mut pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
    let data = AllocMapData::upload(&ctx.device, &pipelines, &blocks, &times);
    let image = render_offscreen(ctx, &mut pipelines, &data, &view, 320, 200).unwrap();
    let reference = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/alloc_map_synthetic.png");
    golden::check(
        &image,
        &reference,
        Tolerance {
            per_channel: 2,
            max_differing_pixels: 32,
        },
    )
    .unwrap();
}

#[test]
fn block_buffers_split_below_the_binding_limit_render_the_same() {
    assert_eq!(AllocMapData::blocks_per_chunk(128 << 20), (128 << 20) / 24);
    assert_eq!(AllocMapData::blocks_per_chunk(10), 1);
    let ctx = ctx();
    let base = 1u64 << 40;
    let (blocks, times) = synthetic(base);
    let view = AllocMapView::fit(0, 1100, base, base + 310_000, 96, 64);
    let mut pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
    let whole = AllocMapData::upload(&ctx.device, &pipelines, &blocks, &times);
    let split = AllocMapData::upload_chunked(&ctx.device, &pipelines, &blocks, &times, 7);
    assert_eq!(split.chunk_count(), blocks.len().div_ceil(7));
    let a = render_offscreen(ctx, &mut pipelines, &whole, &view, 96, 64).unwrap();
    let b = render_offscreen(ctx, &mut pipelines, &split, &view, 96, 64).unwrap();
    assert_eq!(compare(&a, &b, Tolerance::SAME_DEVICE).differing_pixels, 0);
}

/// Issue 4's acceptance check: one 1-byte block alive for one event, alone in a gigabyte of
/// address space over a million events, seen whole at 200×200. Its coverage of its pixel is
/// about 4·10⁻¹¹; a low α must still tint the pixel visibly, and the tint must fade to nothing as
/// α → 1 (plain area-weighted anti-aliasing).
#[test]
fn a_lone_one_byte_block_is_tinted_at_low_alpha_and_fades_as_alpha_grows() {
    let ctx = ctx();
    let blocks = vec![AllocBlockGpu::new(
        500_000_000,
        1,
        [255, 255, 255, 255],
        1.0,
    )];
    let times = vec![BlockTimeGpu::new(500_000, 500_001)];
    let mut tints = Vec::new();
    for alpha in [0.05f32, 0.1, 0.2, 0.5, 1.0] {
        let mut view = AllocMapView::fit(0, 1_000_000, 0, 1_000_000_000, 200, 200);
        view.alpha = alpha;
        view.cushion = CushionKind::None;
        view.background_linear = [0.0; 3];
        let (gpu, cpu) = both(ctx, &view, 200, 200, &blocks, &times);
        assert_close(&format!("lone_byte_{alpha}"), &gpu, &cpu, 0.0);
        let brightest = (0..200)
            .flat_map(|y| (0..200).map(move |x| (x, y)))
            .map(|(x, y)| gpu.pixel(x, y)[0])
            .max()
            .unwrap_or(0);
        tints.push(brightest);
    }
    assert!(tints[0] >= 60, "not visibly tinted at α = 0.05: {tints:?}");
    assert!(
        tints.windows(2).all(|w| w[0] >= w[1]),
        "tint must fade as α grows: {tints:?}"
    );
    assert_eq!(
        tints[4], 0,
        "at α = 1 a 4e-11 coverage is invisible: {tints:?}"
    );
}
