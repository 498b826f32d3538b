//! Golden images of the allocation map's pieces on lavapipe: each cushion type of the main map,
//! each occupancy bar variant, stacked bars, the bins grid with a selection, and cushion cursors
//! over a map and its bar. Regenerate with `MEMSCAPE_UPDATE_GOLDEN=1` on lavapipe only, and look
//! at every image that changes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use memscape_render::alloc_map::cursors::draw_cursors_offscreen;
use memscape_render::alloc_map::occupancy::render_occupancy_offscreen;
use memscape_render::alloc_map::{
    AllocBlockGpu, AllocMapData, AllocMapFrame, AllocMapPipelines, AllocMapView, BarBlocks,
    BlockTimeGpu, ColorMode, CursorPipelines, CursorStyle, CushionCursor, CushionKind, DrawOptions,
    GridCell, OccupancyBarData, OccupancyBarFrame, OccupancyBarView, OccupancySteps,
    OccupancyVariant, SelectionBits, SelectionStyle, TimeMapping, render_grid_offscreen,
    render_offscreen,
};
use memscape_render::golden::{self, Tolerance};
use memscape_render::offscreen::OFFSCREEN_FORMAT;
use memscape_render::{OffscreenTarget, RgbaImage};

mod common;
use common::ctx;

const GOLDEN: Tolerance = Tolerance {
    per_channel: 2,
    max_differing_pixels: 32,
};

fn check(name: &str, image: &RgbaImage) {
    let reference: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "golden", name]
        .iter()
        .collect();
    golden::check(image, &reference, GOLDEN).unwrap();
}

fn xorshift(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

const T_END: u64 = 1000;
const A_SPAN: u64 = 64 * 1024;

/// A small heap whose blocks are several pixels wide and tall at 320×200: eight lanes of
/// address space where blocks of a few colours follow each other in time at the same address
/// (equal-coloured neighbours, which the cushions must keep apart), stacked lanes touching each
/// other, and a band of tiny short-lived blocks at the top.
fn cushion_heap() -> (Vec<AllocBlockGpu>, Vec<BlockTimeGpu>) {
    let mut seed = 0x5eed_cafe_f00d_u64;
    let mut blocks = Vec::new();
    let mut times = Vec::new();
    let mut addr = 0u64;
    for lane in 0..8u64 {
        let height = 2048 + 1024 * (lane % 4);
        let mut t = xorshift(&mut seed) % 60;
        while t < T_END - 40 {
            let life = 40 + xorshift(&mut seed) % 200;
            let end = (t + life).min(T_END);
            let color = memscape_render::color::categorical((lane / 2) as u32 * 3);
            blocks.push(AllocBlockGpu::new(
                addr,
                height,
                color,
                (height as f32) / 5120.0,
            ));
            times.push(BlockTimeGpu::new(t, end));
            t = end + xorshift(&mut seed) % 3 * 10;
        }
        addr += height;
    }
    let tiny_lo = addr + 4096;
    for i in 0..2500u64 {
        let a = tiny_lo + xorshift(&mut seed) % (A_SPAN - tiny_lo - 64);
        let t0 = xorshift(&mut seed) % T_END;
        blocks.push(AllocBlockGpu::new(
            a,
            1 + xorshift(&mut seed) % 48,
            memscape_render::color::categorical((i % 4) as u32 + 9),
            (xorshift(&mut seed) % 1000) as f32 / 1000.0,
        ));
        times.push(BlockTimeGpu::new(t0, t0 + 1 + xorshift(&mut seed) % 4));
    }
    (blocks, times)
}

/// Three bins over `[0, T_END)`: 0 has bursts of activity between idle gaps, 1 a steady
/// sawtooth, 2 fills up and drains slowly with sparse events.
fn bar_bins() -> Vec<OccupancySteps> {
    let mut a = OccupancySteps {
        start: 0,
        end: T_END,
        capacity: 1000,
        ..Default::default()
    };
    for (lo, hi, peak) in [(80u64, 230u64, 900u64), (420, 470, 500), (700, 900, 1000)] {
        for t in lo..hi {
            if t % 2 == 0 {
                a.times.push(t);
                a.bytes.push(peak * (t - lo) / (hi - lo));
            }
        }
        a.times.push(hi);
        a.bytes.push(120);
    }
    let mut b = OccupancySteps {
        start: 0,
        end: T_END,
        capacity: 1000,
        ..Default::default()
    };
    for t in (10..T_END).step_by(9) {
        b.times.push(t);
        b.bytes.push(200 + (t % 90) * 8);
    }
    let mut c = OccupancySteps {
        start: 0,
        end: T_END,
        capacity: 2000,
        ..Default::default()
    };
    for (i, t) in (30..T_END).step_by(37).enumerate() {
        c.times.push(t);
        let up = (i as u64).min(14) * 130;
        let down = (i as u64).saturating_sub(14) * 110;
        c.bytes.push(up.saturating_sub(down));
    }
    vec![a, b, c]
}

#[test]
fn golden_main_map_cushions() {
    let ctx = ctx();
    let mut pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
    let (blocks, times) = cushion_heap();
    let data = AllocMapData::upload(&ctx.device, &pipelines, &blocks, &times);
    for (cushion, color_mode, name) in [
        (
            CushionKind::None,
            ColorMode::Categorical,
            "alloc_map_cushion_none.png",
        ),
        (
            CushionKind::Parabolic,
            ColorMode::Categorical,
            "alloc_map_cushion_parabolic.png",
        ),
        (
            CushionKind::Plateau,
            ColorMode::Categorical,
            "alloc_map_cushion_plateau.png",
        ),
        (
            CushionKind::Parabolic,
            ColorMode::Quantitative,
            "alloc_map_cushion_parabolic_quantitative.png",
        ),
    ] {
        let mut view = AllocMapView::fit(0, T_END, 0, A_SPAN, 320, 200);
        view.alpha = 0.5;
        view.cushion = cushion;
        view.color_mode = color_mode;
        let image = render_offscreen(ctx, &mut pipelines, &data, &view, 320, 200).unwrap();
        check(name, &image);
    }
}

#[test]
fn golden_occupancy_variants_and_stacked_bars() {
    let ctx = ctx();
    let mut pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
    let bins = bar_bins();
    let bar = BarBlocks::build(&bins, &[1.0, 1.0, 2.0]);
    let data = OccupancyBarData::upload(&ctx.device, &pipelines, &bar);
    for variant in OccupancyVariant::ALL {
        let mut view = OccupancyBarView::fit(0, T_END, 320, variant);
        view.alpha = 0.3;
        let image = render_occupancy_offscreen(ctx, &mut pipelines, &data, &view, Some(0), 320, 32)
            .unwrap();
        check(
            &format!("occupancy_{}.png", variant.name().replace(' ', "_")),
            &image,
        );
    }
    for (variant, name) in [
        (OccupancyVariant::Flat, "occupancy_stacked_flat.png"),
        (
            OccupancyVariant::EventCushions(CushionKind::Parabolic),
            "occupancy_stacked_parabolic_event_cushions.png",
        ),
    ] {
        let mut view = OccupancyBarView::fit(0, T_END, 320, variant);
        view.alpha = 0.3;
        let image =
            render_occupancy_offscreen(ctx, &mut pipelines, &data, &view, None, 320, 64).unwrap();
        check(name, &image);
    }
}

#[test]
fn golden_cushion_cursors_over_a_map_and_its_bar() {
    let ctx = ctx();
    let mut pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
    let mut cursor_pipelines = CursorPipelines::new(&ctx.device).unwrap();
    let (blocks, times) = cushion_heap();
    let data = AllocMapData::upload(&ctx.device, &pipelines, &blocks, &times);
    let bar = BarBlocks::by_capacity(&bar_bins()[..1]);
    let bar_data = OccupancyBarData::upload(&ctx.device, &pipelines, &bar);
    let (w, map_h, bar_h, gap) = (320u32, 200u32, 28u32, 4u32);
    let height = map_h + gap + bar_h;
    let mut view = AllocMapView::fit(0, T_END, 0, A_SPAN, w, map_h);
    view.cushion = CushionKind::Plateau;
    let bar_view =
        OccupancyBarView::from_map(&view, OccupancyVariant::GapCushions(CushionKind::Parabolic));
    let target = OffscreenTarget::new(ctx, w, height).unwrap();
    let mut map_frame = AllocMapFrame::new(&ctx.device, &pipelines);
    let mut bar_frame = OccupancyBarFrame::new(&ctx.device, &pipelines);
    let mut encoder = ctx.device.create_command_encoder(&Default::default());
    map_frame.prepare(
        &ctx.device,
        &ctx.queue,
        &mut encoder,
        &mut pipelines,
        &data,
        &view,
        [w, map_h],
        [0.0, 0.0],
        OFFSCREEN_FORMAT,
    );
    let bar_top = map_h + gap;
    bar_frame.prepare(
        &ctx.device,
        &ctx.queue,
        &mut encoder,
        &mut pipelines,
        &bar_data,
        &bar_view,
        None,
        [w, bar_h],
        [0.0, bar_top as f32],
        OFFSCREEN_FORMAT,
    );
    {
        let mut pass = target.begin_pass(&mut encoder, "golden", Some([40, 40, 48, 255]));
        pass.set_viewport(0.0, 0.0, w as f32, map_h as f32, 0.0, 1.0);
        map_frame.resolve(&mut pass, &pipelines);
        pass.set_viewport(0.0, bar_top as f32, w as f32, bar_h as f32, 0.0, 1.0);
        bar_frame.resolve(&mut pass, &pipelines);
    }
    ctx.queue.submit([encoder.finish()]);
    let cursors = [
        CushionCursor::new(150, [255, 255, 255, 255]),
        CushionCursor::new(445, [255, 210, 60, 255]),
        CushionCursor::new(455, [255, 210, 60, 255]),
        CushionCursor::new(800, [120, 220, 255, 255]),
    ];
    let style = CursorStyle {
        width_px: 17.0,
        opacity: 0.85,
        ..CursorStyle::default()
    };
    let time = TimeMapping::from(&view);
    for rect in [[0, 0, w, map_h], [0, bar_top, w, bar_h]] {
        draw_cursors_offscreen(
            ctx,
            &mut cursor_pipelines,
            &target,
            rect,
            &cursors,
            &time,
            &style,
        )
        .unwrap();
    }
    check("alloc_map_cursors.png", &target.read(ctx).unwrap());
}

#[test]
fn golden_bins_grid_with_selection() {
    let ctx = ctx();
    let mut pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
    // Four bins: the cushion heap shifted to four address regions, uploaded bin after bin.
    let (one, one_t) = cushion_heap();
    let mut blocks = Vec::new();
    let mut times = Vec::new();
    let mut ranges = Vec::new();
    for k in 0..4u64 {
        let start = blocks.len();
        let base = 0x7f00_0000_0000 + k * (1 << 30);
        for (b, t) in one.iter().zip(&one_t) {
            let addr = u64::from(b.addr[0]) | (u64::from(b.addr[1]) << 32);
            let size = u64::from(b.size[0]) | (u64::from(b.size[1]) << 32);
            // Each bin keeps a different share of the heap.
            if (addr / 1024 + k) % (k + 1) != 0 {
                continue;
            }
            let bytes = b.color.to_le_bytes();
            blocks.push(AllocBlockGpu::new(base + addr, size, bytes, b.attr));
            times.push(*t);
        }
        ranges.push((start..blocks.len(), base));
    }
    let data = AllocMapData::upload(&ctx.device, &pipelines, &blocks, &times);
    // Select every third block.
    let bits = SelectionBits::from_indices(blocks.len(), (0..blocks.len()).step_by(3));
    data.set_selection(&ctx.queue, bits.words());
    let (cw, ch, gap) = (150u32, 90u32, 6u32);
    let cells: Vec<GridCell> = ranges
        .iter()
        .enumerate()
        .map(|(k, (range, base))| {
            let (col, row) = (k as u32 % 2, k as u32 / 2);
            let mut view = AllocMapView::fit(0, T_END, *base, base + A_SPAN, cw, ch);
            view.cushion = CushionKind::Parabolic;
            GridCell {
                rect: [gap + col * (cw + gap), gap + row * (ch + gap), cw, ch],
                view,
                options: DrawOptions {
                    range: Some(range.clone()),
                    // The right column dims unselected blocks.
                    selection: if col == 1 {
                        SelectionStyle::DIM
                    } else {
                        SelectionStyle::Off
                    },
                    ..Default::default()
                },
            }
        })
        .collect();
    let image = render_grid_offscreen(
        ctx,
        &mut pipelines,
        &data,
        &cells,
        2 * cw + 3 * gap,
        2 * ch + 3 * gap,
        [40, 40, 48, 255],
    )
    .unwrap();
    check("alloc_map_bins_grid_selection.png", &image);
}
