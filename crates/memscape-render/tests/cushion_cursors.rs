//! Cushion cursors on the GPU (lavapipe in CI) against the CPU reference.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memscape_render::alloc_map::cursors::{
    blend_cursors_cpu, cursor_centre_px, draw_cursors_offscreen,
};
use memscape_render::alloc_map::{
    AllocBlockGpu, AllocMapData, AllocMapFrame, AllocMapPipelines, AllocMapView, BlockTimeGpu,
    CursorOverlay, CursorPipelines, CursorStyle, CushionCursor, TimeMapping,
};
use memscape_render::golden::{Tolerance, compare};
use memscape_render::offscreen::OFFSCREEN_FORMAT;
use memscape_render::{GpuContext, OffscreenTarget};

mod common;
use common::assert_close;
use common::ctx;

/// A target holding an allocation map picture (stripes of blocks) under the cursors.
fn map_target(ctx: &GpuContext, view: &AllocMapView, w: u32, h: u32) -> OffscreenTarget {
    let mut pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
    let mut blocks = Vec::new();
    let mut times = Vec::new();
    for i in 0..40u64 {
        blocks.push(AllocBlockGpu::new(
            i * 100,
            90,
            memscape_render::color::categorical(i as u32),
            0.5,
        ));
        times.push(BlockTimeGpu::new(i * 20, 600 + i * 10));
    }
    let data = AllocMapData::upload(&ctx.device, &pipelines, &blocks, &times);
    let target = OffscreenTarget::new(ctx, w, h).unwrap();
    let mut frame = AllocMapFrame::new(&ctx.device, &pipelines);
    let mut encoder = ctx.device.create_command_encoder(&Default::default());
    frame.prepare(
        &ctx.device,
        &ctx.queue,
        &mut encoder,
        &mut pipelines,
        &data,
        view,
        [w, h],
        [0.0, 0.0],
        OFFSCREEN_FORMAT,
    );
    frame.resolve_to(&mut encoder, &target.view, &pipelines);
    ctx.queue.submit([encoder.finish()]);
    target
}

#[test]
fn cursors_match_cpu_for_widths_opacities_and_overlaps() {
    let ctx = ctx();
    let mut cursor_pipelines = CursorPipelines::new(&ctx.device).unwrap();
    let (w, h) = (200u32, 80u32);
    let view = AllocMapView::fit(0, 1000, 0, 4000, w, h);
    let time = TimeMapping::from(&view);
    let cursors = vec![
        CushionCursor::new(100, [255, 255, 255, 255]),
        // Overlapping the first.
        CushionCursor {
            time: 104,
            time_frac: 0.5,
            color: [255, 220, 0, 255],
        },
        CushionCursor::new(500, [0, 200, 255, 255]),
        // At the edges and off screen.
        CushionCursor::new(0, [255, 80, 80, 255]),
        CushionCursor::new(998, [255, 80, 80, 255]),
        CushionCursor::new(5000, [255, 80, 80, 255]),
    ];
    for (k, style) in [
        CursorStyle::default(),
        CursorStyle {
            width_px: 3.0,
            opacity: 1.0,
            ..CursorStyle::default()
        },
        CursorStyle {
            width_px: 41.0,
            opacity: 0.5,
            falloff: 30.0,
            cushion_strength: 2.0,
        },
        CursorStyle {
            width_px: 9.5,
            opacity: 0.3,
            falloff: 1.0,
            ..CursorStyle::default()
        },
    ]
    .into_iter()
    .enumerate()
    {
        let target = map_target(ctx, &view, w, h);
        let base = target.read(ctx).unwrap();
        draw_cursors_offscreen(
            ctx,
            &mut cursor_pipelines,
            &target,
            [0, 0, w, h],
            &cursors,
            &time,
            &style,
        )
        .unwrap();
        let gpu = target.read(ctx).unwrap();
        let mut cpu = base.clone();
        blend_cursors_cpu(&mut cpu, [0, 0, w, h], &cursors, &time, &style);
        assert_close(&format!("cursors_{k}"), &gpu, &cpu);
        assert!(
            compare(&gpu, &base, Tolerance::SAME_DEVICE).differing_pixels > 0,
            "cursors must show"
        );
        // Far from every cursor (x = 150: 50 px from the one at 500 = x 100) nothing changes.
        if style.width_px < 50.0 {
            assert_eq!(gpu.pixel(150, 40), base.pixel(150, 40));
        }
    }
}

#[test]
fn opacity_falls_off_from_the_centre_and_zero_opacity_draws_nothing() {
    let ctx = ctx();
    let mut cursor_pipelines = CursorPipelines::new(&ctx.device).unwrap();
    let (w, h) = (120u32, 20u32);
    let target = OffscreenTarget::new(ctx, w, h).unwrap();
    target.clear(ctx, [0, 0, 0, 255]);
    let view = AllocMapView::fit(0, 120, 0, 10, w, h);
    let time = TimeMapping::from(&view);
    // A white cursor in the middle of pixel 60, no cushion: brightness is the opacity.
    let cursor = CushionCursor {
        time: 60,
        time_frac: 0.5,
        color: [255, 255, 255, 255],
    };
    assert_eq!(cursor_centre_px(&time, &cursor), 60.5);
    let style = CursorStyle {
        width_px: 31.0,
        opacity: 1.0,
        falloff: 9.0,
        cushion_strength: 0.0,
    };
    draw_cursors_offscreen(
        ctx,
        &mut cursor_pipelines,
        &target,
        [0, 0, w, h],
        &[cursor],
        &time,
        &style,
    )
    .unwrap();
    let img = target.read(ctx).unwrap();
    let row: Vec<u8> = (0..w).map(|x| img.pixel(x, 10)[0]).collect();
    assert!(row[60] >= 230, "centre {}", row[60]);
    for d in 0..16 {
        assert_eq!(row[60 - d], row[60 + d], "symmetric at {d}");
        if d > 0 {
            assert!(row[60 + d] <= row[60 + d - 1], "falls off at {d}: {row:?}");
        }
    }
    assert_eq!(row[60 + 16], 0, "nothing beyond the half width");
    // Logarithmic: 4 px from the centre (d = 4 / 15.5) the opacity is 1 − ln(1 + 9d) / ln 10
    // ≈ 0.48 (white over black with the target's encoded blending: the byte is the opacity).
    let quarter = f32::from(row[60 + 4]) / 255.0;
    let expected = 1.0 - (1.0f32 + 9.0 * 4.0 / 15.5).ln() / 10f32.ln();
    assert!((quarter - expected).abs() < 0.03, "{quarter} vs {expected}");
    // Global opacity 0: nothing drawn.
    target.clear(ctx, [10, 20, 30, 255]);
    draw_cursors_offscreen(
        ctx,
        &mut cursor_pipelines,
        &target,
        [0, 0, w, h],
        &[cursor],
        &time,
        &CursorStyle {
            opacity: 0.0,
            ..style
        },
    )
    .unwrap();
    let img = target.read(ctx).unwrap();
    assert!((0..w).all(|x| img.pixel(x, 5) == [10, 20, 30, 255]));
}

#[test]
fn one_overlay_serves_a_column_of_time_aligned_views() {
    let ctx = ctx();
    let mut cursor_pipelines = CursorPipelines::new(&ctx.device).unwrap();
    let (w, h) = (100u32, 90u32);
    let target = OffscreenTarget::new(ctx, w, h).unwrap();
    target.clear(ctx, [30, 60, 90, 255]);
    let base = target.read(ctx).unwrap();
    let view = AllocMapView::fit(1 << 40, (1 << 40) + 50, 0, 10, 80, 30);
    let time = TimeMapping::from(&view);
    let cursors = [
        CushionCursor::new((1 << 40) + 10, [255, 255, 255, 255]),
        CushionCursor::new((1 << 40) + 31, [255, 128, 0, 255]),
    ];
    let style = CursorStyle::default();
    let mut overlay = CursorOverlay::new(&ctx.device, &cursor_pipelines);
    overlay.prepare(
        &ctx.device,
        &ctx.queue,
        &mut cursor_pipelines,
        &cursors,
        &time,
        &style,
        80,
        OFFSCREEN_FORMAT,
    );
    let rects = [[10u32, 5u32, 80u32, 30u32], [10, 50, 80, 20]];
    let mut encoder = ctx.device.create_command_encoder(&Default::default());
    {
        let mut pass = target.begin_pass(&mut encoder, "test", None);
        for [x, y, rw, rh] in rects {
            pass.set_viewport(x as f32, y as f32, rw as f32, rh as f32, 0.0, 1.0);
            overlay.draw(&mut pass, &cursor_pipelines);
        }
    }
    ctx.queue.submit([encoder.finish()]);
    let gpu = target.read(ctx).unwrap();
    let mut cpu = base.clone();
    for r in rects {
        blend_cursors_cpu(&mut cpu, r, &cursors, &time, &style);
    }
    assert_close("cursor_column", &gpu, &cpu);
    // Between the two views (rows 35..50) nothing is drawn.
    assert!((0..w).all(|x| gpu.pixel(x, 40) == base.pixel(x, 40)));
    // A rectangle outside the target is an error.
    assert!(
        draw_cursors_offscreen(
            ctx,
            &mut cursor_pipelines,
            &target,
            [90, 0, 20, 10],
            &cursors,
            &time,
            &style
        )
        .is_err()
    );
}
