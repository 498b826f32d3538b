//! The occupancy bar's variants and stacked bars on the GPU (lavapipe in CI) against the CPU
//! reference, and what each variant must show.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memscape_render::alloc_map::occupancy::{render_occupancy_cpu, render_occupancy_offscreen};
use memscape_render::alloc_map::{
    AllocMapPipelines, BarBlocks, CushionKind, OccupancyBarData, OccupancyBarView, OccupancySteps,
    OccupancyVariant,
};

mod common;
use common::assert_close;
use common::ctx;

/// Three bins over `[0, 100_000)`:
/// 0: bursts of dense activity (an event every 7 time units) at 10–25 k, 50–52 k and 80–95 k,
///    idle in between; occupancy climbs in each burst and drops after it.
/// 1: sparse events every 6,000 units, occupancy a sawtooth.
/// 2: nearly full from 20 k on, events every 500 units.
fn bins() -> Vec<OccupancySteps> {
    let mut a = OccupancySteps {
        start: 0,
        end: 100_000,
        capacity: 1 << 20,
        ..Default::default()
    };
    for (lo, hi) in [(10_000u64, 25_000u64), (50_000, 52_000), (80_000, 95_000)] {
        let mut t = lo;
        while t < hi {
            a.times.push(t);
            a.bytes.push(((t - lo) * (1 << 20)) / (hi - lo));
            t += 7;
        }
        a.times.push(hi);
        a.bytes.push(1 << 17);
    }
    let mut b = OccupancySteps {
        start: 0,
        end: 100_000,
        capacity: 3000,
        ..Default::default()
    };
    for i in 1..16u64 {
        b.times.push(i * 6000);
        b.bytes.push((i % 5) * 700);
    }
    let mut c = OccupancySteps {
        start: 0,
        end: 100_000,
        capacity: 1 << 24,
        ..Default::default()
    };
    let mut t = 20_000;
    while t < 100_000 {
        c.times.push(t);
        c.bytes.push((1 << 24) - (t % 3) * 100_000);
        t += 500;
    }
    vec![a, b, c]
}

fn lum(p: [u8; 4]) -> u32 {
    u32::from(p[0]) + u32::from(p[1]) + u32::from(p[2])
}

#[test]
fn every_variant_single_and_stacked_matches_cpu() {
    let ctx = ctx();
    let mut pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
    let bins = bins();
    let bar = BarBlocks::by_capacity(&bins);
    let data = OccupancyBarData::upload(&ctx.device, &pipelines, &bar);
    assert_eq!(data.bin_count(), 3);
    if let Some(dir) = std::env::var_os("MEMSCAPE_DUMP_DIR") {
        // For looking at the variants by eye.
        for variant in OccupancyVariant::ALL {
            let view = OccupancyBarView::fit(0, 100_000, 400, variant);
            for bin in [None, Some(0)] {
                let img =
                    render_occupancy_offscreen(ctx, &mut pipelines, &data, &view, bin, 400, 40)
                        .unwrap();
                let name = format!("{}_{bin:?}.png", variant.name().replace(' ', "_"));
                img.save_png(&std::path::Path::new(&dir).join(name))
                    .unwrap();
            }
        }
    }
    let (w, h) = (240u32, 30u32);
    for variant in OccupancyVariant::ALL {
        // Whole trace; around the short burst; far in at its start (7-unit intervals of ~4 px,
        // right at the gap threshold).
        for (zoom, (t0, t1)) in [(0u64, 100_000u64), (47_000, 56_000), (49_900, 50_300)]
            .into_iter()
            .enumerate()
        {
            let mut view = OccupancyBarView::fit(t0, t1, w, variant);
            view.alpha = 0.3;
            for bin in [None, Some(0), Some(1), Some(2)] {
                let gpu = render_occupancy_offscreen(ctx, &mut pipelines, &data, &view, bin, w, h)
                    .unwrap();
                let cpu = render_occupancy_cpu(&bar, &view, bin, w, h);
                assert_close(
                    &format!(
                        "occupancy_{}_{zoom}_{bin:?}",
                        variant.name().replace(' ', "_")
                    ),
                    &gpu,
                    &cpu,
                );
                // (Bin 1's events are all 14 px apart: with black gaps its bar is all black.)
                if zoom == 0 && !(variant == OccupancyVariant::BlackGaps && bin == Some(1)) {
                    assert!(gpu.distinct_colors() > 2, "{variant:?} {bin:?}: blank bar");
                }
            }
        }
    }
}

/// A one-bin bar carries each interval's bytes over a power of two and draws the fraction with
/// the bar's `value_scale` (a live bar's capacity grows without rewriting its intervals): the
/// GPU's picture (the scale in the resolve's uniform) equals the CPU twin's and the same bin's
/// band of the stacked bar, whose attributes are the fractions themselves.
#[test]
fn a_one_bin_bar_scaled_where_drawn_equals_its_fractions() {
    let ctx = ctx();
    let mut pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
    let bins = bins();
    let stacked = BarBlocks::by_capacity(&bins);
    let stacked_data = OccupancyBarData::upload(&ctx.device, &pipelines, &stacked);
    assert_eq!(stacked.value_scale, 1.0);
    let (w, h) = (240u32, 30u32);
    for (k, bin) in bins.iter().enumerate() {
        let one = BarBlocks::build(std::slice::from_ref(bin), &[1.0]);
        // Bin 1's capacity, 3,000, is no power of two: its attributes are bytes over 4,096.
        let scale = if k == 1 { 4096.0 / 3000.0 } else { 1.0 };
        assert_eq!(one.value_scale, scale as f32, "bin {k}");
        let data = OccupancyBarData::upload(&ctx.device, &pipelines, &one);
        for variant in OccupancyVariant::ALL {
            for (zoom, (t0, t1)) in [(0u64, 100_000u64), (47_000, 56_000)]
                .into_iter()
                .enumerate()
            {
                let mut view = OccupancyBarView::fit(t0, t1, w, variant);
                view.alpha = 0.3;
                let name = format!("one_bin_{k}_{}_{zoom}", variant.name().replace(' ', "_"));
                let gpu =
                    render_occupancy_offscreen(ctx, &mut pipelines, &data, &view, Some(0), w, h)
                        .unwrap();
                let cpu = render_occupancy_cpu(&one, &view, Some(0), w, h);
                assert_close(&name, &gpu, &cpu);
                let band = render_occupancy_offscreen(
                    ctx,
                    &mut pipelines,
                    &stacked_data,
                    &view,
                    Some(k),
                    w,
                    h,
                )
                .unwrap();
                assert_close(&format!("{name}_band"), &gpu, &band);
            }
        }
    }
}

#[test]
fn variants_show_what_the_paper_describes() {
    let ctx = ctx();
    let mut pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
    let bins = bins();
    let bar = BarBlocks::by_capacity(&bins);
    let data = OccupancyBarData::upload(&ctx.device, &pipelines, &bar);
    let (w, h) = (200u32, 24u32);
    let render = |pipelines: &mut AllocMapPipelines, variant, bin| {
        let view = OccupancyBarView::fit(0, 100_000, w, variant);
        render_occupancy_offscreen(ctx, pipelines, &data, &view, bin, w, h).unwrap()
    };
    // Bin 0, 500 time units per pixel: x = 70 (35 k) is idle (occupancy 1/8 after the first
    // burst), x = 40 (20 k) inside a burst (an event every 7 units).
    let flat = render(&mut pipelines, OccupancyVariant::Flat, Some(0));
    let ramp = memscape_render::color::blue_red_srgb8(0.125);
    let idle = flat.pixel(70, 12);
    assert!(
        (0..3).all(|k| idle[k].abs_diff(ramp[k]) <= 2),
        "flat idle column {idle:?} should be the ramp at 1/8 {ramp:?}"
    );
    // Flat: every column constant over the height.
    for x in 0..w {
        assert!(
            (0..h).all(|y| flat.pixel(x, y) == flat.pixel(x, 0)),
            "column {x}"
        );
    }
    let black = render(&mut pipelines, OccupancyVariant::BlackGaps, Some(0));
    assert_eq!(
        &black.pixel(70, 12)[..3],
        &[0, 0, 0],
        "idle gap must be black"
    );
    assert_eq!(
        black.pixel(40, 12),
        flat.pixel(40, 12),
        "busy column unchanged"
    );
    for kind in [CushionKind::Plateau, CushionKind::Parabolic] {
        let gaps = render(&mut pipelines, OccupancyVariant::GapCushions(kind), Some(0));
        // The idle gap (25 k to 50 k: x 50..100) is one cushion: darker at its bottom edge than
        // in its middle (light from the upper left), while busy columns stay flat.
        assert!(
            lum(gaps.pixel(75, h - 1)) + 20 < lum(gaps.pixel(75, h / 2)),
            "{kind:?}: no cushion over the idle gap: {:?} vs {:?}",
            gaps.pixel(75, h - 1),
            gaps.pixel(75, h / 2)
        );
        assert!(
            (0..h).all(|y| gaps.pixel(40, y) == gaps.pixel(40, 0)),
            "{kind:?} busy column"
        );
        // Every interval a cushion: bin 1's sparse intervals (6,000 units = 12 px) each show a
        // vertical profile; with gap cushions at a 16 px threshold they are flat.
        let events = render(
            &mut pipelines,
            OccupancyVariant::EventCushions(kind),
            Some(1),
        );
        let x = 36; // inside [12 k, 18 k)
        assert!(
            lum(events.pixel(x, h - 1)) + 20 < lum(events.pixel(x, h / 2)),
            "{kind:?}: no cushion on a sparse interval"
        );
        let view = OccupancyBarView {
            gap_min_px: 16.0,
            ..OccupancyBarView::fit(0, 100_000, w, OccupancyVariant::GapCushions(kind))
        };
        let narrow =
            render_occupancy_offscreen(ctx, &mut pipelines, &data, &view, Some(1), w, h).unwrap();
        assert!((0..h).all(|y| narrow.pixel(x, y) == narrow.pixel(x, 0)));
    }
    // Stacked: bin 0 (1 MiB) on top, bin 1 (3000 B) a sliver, bin 2 (16 MiB) the rest.
    let stacked = render(&mut pipelines, OccupancyVariant::Flat, None);
    let share0 = (1u64 << 20) as f64 / ((1u64 << 20) + 3000 + (1 << 24)) as f64;
    let top_rows = (share0 * f64::from(h)).floor() as u32;
    assert!(top_rows >= 1);
    assert_eq!(
        stacked.pixel(70, 0),
        flat.pixel(70, 0),
        "bin 0's band on top"
    );
    let bin2 = render(&mut pipelines, OccupancyVariant::Flat, Some(2));
    assert_eq!(
        stacked.pixel(150, h - 1),
        bin2.pixel(150, h - 1),
        "bin 2 at the bottom"
    );
}

/// A scrolled stacked bar (`BarPart::Slice`) is the stack's rows it covers: the slice drawn
/// into 32 rows equals rows 16..48 of the whole stack drawn into 64 (CPU twin); the GPU draws
/// the slice as the CPU does.
#[test]
fn a_slice_of_the_stack_is_those_rows_of_the_whole_stack() {
    use memscape_render::alloc_map::BarPart;
    use memscape_render::alloc_map::occupancy::BAR_UNITS;
    let ctx = ctx();
    let mut pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
    let bins = bins();
    let bar = BarBlocks::build(&bins, &[1.0, 1.0, 1.0]);
    let data = OccupancyBarData::upload(&ctx.device, &pipelines, &bar);
    let w = 200u32;
    let view = OccupancyBarView::fit(0, 100_000, w, OccupancyVariant::Flat);
    let whole = render_occupancy_cpu(&bar, &view, BarPart::Stack, w, 64);
    let per_row = BAR_UNITS / 64;
    let slice = BarPart::Slice(BAR_UNITS - 48 * per_row, BAR_UNITS - 16 * per_row);
    let cpu = render_occupancy_cpu(&bar, &view, slice, w, 32);
    for y in 0..32 {
        for x in 0..w {
            assert_eq!(cpu.pixel(x, y), whole.pixel(x, y + 16), "({x}, {y})");
        }
    }
    assert!(cpu.distinct_colors() > 2, "a blank slice");
    let gpu = render_occupancy_offscreen(ctx, &mut pipelines, &data, &view, slice, w, 32).unwrap();
    assert_close("occupancy_stack_slice", &gpu, &cpu);
}

/// A bar's sums computed on the CPU (`OccupancyBarFrame::prepare_cpu`, how a software
/// rasterizer draws millions of intervals) and resolved on the GPU give the CPU reference's
/// picture; the variants with idle gaps decline (the GPU draws them).
#[test]
fn cpu_sums_of_a_bar_are_the_cpu_reference() {
    use memscape_render::OffscreenTarget;
    use memscape_render::alloc_map::OccupancyBarFrame;
    use memscape_render::offscreen::OFFSCREEN_FORMAT;
    let ctx = ctx();
    let mut pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
    let bar = BarBlocks::by_capacity(&bins());
    let (w, h) = (240u32, 30u32);
    for variant in OccupancyVariant::ALL {
        for (t0, t1) in [(0u64, 100_000u64), (47_000, 56_000)] {
            let mut view = OccupancyBarView::fit(t0, t1, w, variant);
            view.alpha = 0.3;
            for bin in [None, Some(0), Some(2)] {
                let mut frame = OccupancyBarFrame::new(&ctx.device, &pipelines);
                let drawn = frame.prepare_cpu(
                    &ctx.device,
                    &ctx.queue,
                    &mut pipelines,
                    &bar,
                    &view,
                    bin,
                    [w, h],
                    [0.0, 0.0],
                    OFFSCREEN_FORMAT,
                    2,
                );
                let gaps = matches!(
                    variant,
                    OccupancyVariant::BlackGaps | OccupancyVariant::GapCushions(_)
                );
                assert_eq!(drawn, !gaps, "{variant:?}");
                if !drawn {
                    continue;
                }
                let target = OffscreenTarget::new(ctx, w, h).unwrap();
                let mut encoder = ctx.device.create_command_encoder(&Default::default());
                frame.resolve_to(&mut encoder, &target.view, &pipelines);
                ctx.queue.submit([encoder.finish()]);
                let gpu = target.read(ctx).unwrap();
                let cpu = render_occupancy_cpu(&bar, &view, bin, w, h);
                assert!(gpu.distinct_colors() > 2, "{variant:?} {bin:?}: blank bar");
                assert_close(
                    &format!(
                        "cpu_sums_occupancy_{}_{t0}_{bin:?}",
                        variant.name().replace(' ', "_")
                    ),
                    &gpu,
                    &cpu,
                );
            }
        }
    }
}

/// A bar's intervals carry one colour (`BAR_BLOCK_COLOR`) instead of the ramp at their fraction:
/// the bar is drawn in quantitative mode, which sums the fractions and applies the ramp to the
/// resolved value, so the colour field must not change a pixel (a live recording's bar then
/// rewrites only fractions when its capacity grows). Drawn by every variant, whole and per bin,
/// on the GPU and the CPU, against the same bar with each interval coloured by the ramp.
#[test]
fn a_bars_pixels_do_not_depend_on_its_intervals_colour_field() {
    let ctx = ctx();
    let mut pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
    let bar = BarBlocks::by_capacity(&bins());
    let one =
        memscape_render::color::pack_rgba8(memscape_render::alloc_map::occupancy::BAR_BLOCK_COLOR);
    assert!(bar.blocks.iter().all(|b| b.color == one));
    let mut ramped = bar.clone();
    for b in &mut ramped.blocks {
        b.color =
            memscape_render::color::pack_rgba8(memscape_render::color::blue_red_srgb8(b.attr));
    }
    assert!(ramped.blocks.iter().any(|b| b.color != one));
    let data = OccupancyBarData::upload(&ctx.device, &pipelines, &bar);
    let ramped_data = OccupancyBarData::upload(&ctx.device, &pipelines, &ramped);
    let (w, h) = (240u32, 30u32);
    for variant in OccupancyVariant::ALL {
        for (t0, t1) in [(0u64, 100_000u64), (49_900, 50_300)] {
            let mut view = OccupancyBarView::fit(t0, t1, w, variant);
            view.alpha = 0.3;
            for bin in [None, Some(0), Some(2)] {
                let at = format!("{variant:?} {bin:?} {t0}..{t1}");
                assert!(
                    render_occupancy_cpu(&bar, &view, bin, w, h)
                        == render_occupancy_cpu(&ramped, &view, bin, w, h),
                    "CPU, {at}"
                );
                let mut gpu = |d: &OccupancyBarData| {
                    render_occupancy_offscreen(ctx, &mut pipelines, d, &view, bin, w, h).unwrap()
                };
                let (plain, colored) = (gpu(&data), gpu(&ramped_data));
                assert!(plain == colored, "GPU, {at}");
            }
        }
    }
}
