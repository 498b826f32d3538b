//! Drawing block ranges (the bins grid) and the selection bitset of the allocation map, on the
//! GPU (lavapipe in CI) against the CPU reference.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memscape_render::RgbaImage;
use memscape_render::alloc_map::cpu_reference;
use memscape_render::alloc_map::{
    AllocBlockGpu, AllocMapData, AllocMapPipelines, AllocMapView, BlockTimeGpu, ColorMode,
    CushionKind, DrawOptions, GridCell, SelectionBits, SelectionStyle, render_grid_offscreen,
    render_offscreen, render_offscreen_with,
};
use memscape_render::golden::{Tolerance, compare};

mod common;
use common::assert_close;
use common::ctx;

fn xorshift(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// `bins` bins of blocks, uploaded bin after bin (as the app sorts them): bin k lives at its own
/// address range and has its own colours; sizes from 1 byte up, lifetimes from 1 event up.
/// Returns the blocks, times and each bin's (block range, address extent).
#[allow(clippy::type_complexity)]
fn binned(
    bins: usize,
    per_bin: usize,
) -> (
    Vec<AllocBlockGpu>,
    Vec<BlockTimeGpu>,
    Vec<(std::ops::Range<usize>, u64, u64)>,
) {
    let mut seed = 0xddb1_a5e5_u64;
    let mut blocks = Vec::new();
    let mut times = Vec::new();
    let mut ranges = Vec::new();
    for k in 0..bins {
        let start = blocks.len();
        let base = 0x7f00_0000_0000u64 + (k as u64) * 150_000;
        let span = 60_000 + 20_000 * k as u64;
        for i in 0..per_bin {
            let size = 1 + xorshift(&mut seed) % (64 << (i % 7));
            let addr = base + xorshift(&mut seed) % span;
            let t0 = xorshift(&mut seed) % 1000;
            let life = 1 + xorshift(&mut seed) % (1 + 400 * (i as u64 % 3));
            blocks.push(AllocBlockGpu::new(
                addr,
                size,
                memscape_render::color::categorical((k * 5 + i % 5) as u32),
                (xorshift(&mut seed) % 1000) as f32 / 1000.0,
            ));
            times.push(BlockTimeGpu::new(t0, t0 + life));
        }
        ranges.push((start..blocks.len(), base, base + span + (64 << 6)));
    }
    (blocks, times, ranges)
}

#[test]
fn a_block_range_draws_only_its_blocks_across_chunk_boundaries() {
    let ctx = ctx();
    let mut pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
    let (blocks, times, _) = binned(3, 1000);
    // Chunks of 700: the range 800..2300 spans three of them, starting and ending mid-chunk.
    let data = AllocMapData::upload_chunked(&ctx.device, &pipelines, &blocks, &times, 700);
    let lo = 0x7f00_0000_0000u64;
    let view = AllocMapView::fit(0, 1400, lo, lo + 3 * 150_000, 128, 96);
    let range = 800..2300;
    let gpu = render_offscreen_with(
        ctx,
        &mut pipelines,
        &data,
        &view,
        128,
        96,
        &DrawOptions::range(range.clone()),
    )
    .unwrap();
    let cpu_slice = cpu_reference::render(
        &view,
        128,
        96,
        &blocks[range.clone()],
        &times[range.clone()],
    );
    let cpu_range = cpu_reference::render_with(
        &view,
        128,
        96,
        &blocks,
        &times,
        &DrawOptions::range(range.clone()),
        &[],
    );
    assert_eq!(
        compare(&cpu_slice, &cpu_range, Tolerance::SAME_DEVICE).differing_pixels,
        0
    );
    assert_close("range", &gpu, &cpu_slice);
    let all = render_offscreen(ctx, &mut pipelines, &data, &view, 128, 96).unwrap();
    assert!(
        compare(&all, &gpu, Tolerance::SAME_DEVICE).differing_pixels > 500,
        "the range must leave blocks out"
    );
    // A range past the end is clipped; an empty range draws nothing.
    let empty = render_offscreen_with(
        ctx,
        &mut pipelines,
        &data,
        &view,
        128,
        96,
        &DrawOptions::range(5000..6000),
    )
    .unwrap();
    assert_eq!(empty.distinct_colors(), 1);
}

#[test]
fn bins_grid_of_ranges_with_their_own_views_matches_cpu() {
    let ctx = ctx();
    let mut pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
    let (blocks, times, bins) = binned(4, 600);
    let data = AllocMapData::upload(&ctx.device, &pipelines, &blocks, &times);
    let (cw, ch, gap) = (80u32, 60u32, 10u32);
    let (width, height) = (2 * cw + 3 * gap, 2 * ch + 3 * gap);
    let clear = [20, 20, 30, 255];
    let cells: Vec<GridCell> = bins
        .iter()
        .enumerate()
        .map(|(k, (range, a0, a1))| {
            let (col, row) = (k as u32 % 2, k as u32 / 2);
            let mut view = AllocMapView::fit(0, 1400, *a0, *a1, cw, ch);
            view.alpha = 0.5;
            view.cushion = if k % 2 == 0 {
                CushionKind::Plateau
            } else {
                CushionKind::Parabolic
            };
            GridCell {
                rect: [gap + col * (cw + gap), gap + row * (ch + gap), cw, ch],
                view,
                options: DrawOptions::range(range.clone()),
            }
        })
        .collect();
    let gpu =
        render_grid_offscreen(ctx, &mut pipelines, &data, &cells, width, height, clear).unwrap();
    let mut cpu = RgbaImage::new(width, height, clear);
    for cell in &cells {
        let [x, y, w, h] = cell.rect;
        let one = cpu_reference::render_with(&cell.view, w, h, &blocks, &times, &cell.options, &[]);
        for yy in 0..h {
            for xx in 0..w {
                cpu.set_pixel(x + xx, y + yy, one.pixel(xx, yy));
            }
        }
    }
    assert_close("bins_grid", &gpu, &cpu);
    assert_eq!(gpu.pixel(2, 2), clear, "outside the cells stays clear");
    // A cell outside the target is an error, not a panic.
    let mut bad = cells[0].clone();
    bad.rect = [width - 10, 0, 20, 20];
    assert!(
        render_grid_offscreen(ctx, &mut pipelines, &data, &[bad], width, height, clear).is_err()
    );
}

#[test]
fn selection_bits_dim_unselected_blocks_without_reupload() {
    let ctx = ctx();
    let mut pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
    let (blocks, times, _) = binned(2, 1500);
    let n = blocks.len();
    // Small chunks: the bit index is the global block index, not the chunk-local one.
    let data = AllocMapData::upload_chunked(&ctx.device, &pipelines, &blocks, &times, 333);
    let lo = 0x7f00_0000_0000u64;
    let mut seed = 7u64;
    for color_mode in [ColorMode::Categorical, ColorMode::Quantitative] {
        let mut view = AllocMapView::fit(0, 1400, lo, lo + 2 * 150_000, 120, 90);
        view.color_mode = color_mode;
        view.alpha = 0.4;
        view.cushion = CushionKind::Plateau;
        let plain = render_offscreen(ctx, &mut pipelines, &data, &view, 120, 90).unwrap();
        for (round, style) in [
            SelectionStyle::DIM,
            SelectionStyle::DimUnselected {
                color: [255, 255, 0],
                amount: 0.6,
            },
        ]
        .into_iter()
        .enumerate()
        {
            let bits =
                SelectionBits::from_indices(n, (0..n).filter(|_| xorshift(&mut seed) % 10 < 3));
            assert_eq!(bits.words().len(), n.div_ceil(32));
            data.set_selection(&ctx.queue, bits.words());
            let options = DrawOptions {
                range: None,
                selection: style,
                ..Default::default()
            };
            let gpu = render_offscreen_with(ctx, &mut pipelines, &data, &view, 120, 90, &options)
                .unwrap();
            let cpu =
                cpu_reference::render_with(&view, 120, 90, &blocks, &times, &options, bits.words());
            assert_close(&format!("selection_{color_mode:?}_{round}"), &gpu, &cpu);
            assert!(
                compare(&gpu, &plain, Tolerance::SAME_DEVICE).differing_pixels > 500,
                "dimming must show"
            );
            // Selection off: the bits are ignored.
            let off = render_offscreen(ctx, &mut pipelines, &data, &view, 120, 90).unwrap();
            assert_eq!(
                compare(&off, &plain, Tolerance::SAME_DEVICE).differing_pixels,
                0
            );
        }
        // Everything selected: in categorical mode the picture is the plain one.
        let all = SelectionBits::all(n);
        data.set_selection(&ctx.queue, all.words());
        let options = DrawOptions {
            range: None,
            selection: SelectionStyle::DIM,
            ..Default::default()
        };
        let gpu =
            render_offscreen_with(ctx, &mut pipelines, &data, &view, 120, 90, &options).unwrap();
        let cpu =
            cpu_reference::render_with(&view, 120, 90, &blocks, &times, &options, all.words());
        assert_close(&format!("selection_all_{color_mode:?}"), &gpu, &cpu);
        if color_mode == ColorMode::Categorical {
            assert_close("selection_all_is_plain", &gpu, &plain);
        }
    }
}

#[test]
fn selection_bits_round_trip() {
    let mut bits = SelectionBits::new(70);
    assert_eq!(bits.words().len(), 3);
    bits.set(0, true);
    bits.set(33, true);
    bits.set(69, true);
    bits.set(70, true); // beyond: ignored
    assert!(bits.get(0) && bits.get(33) && bits.get(69) && !bits.get(70) && !bits.get(1));
    assert_eq!(bits.words(), &[1, 2, 1 << 5]);
    bits.set(33, false);
    assert_eq!(bits.words()[1], 0);
}
