//! The allocation map computed on the CPU, pixel by pixel, with the same formulas as
//! `shaders/alloc_map_*.wgsl`: the reference the GPU output is tested against, and a fallback
//! that needs no GPU at all.

use std::ops::Range;

use super::gpu::{AllocBlockGpu, BlockTimeGpu};
use super::pick::{PickHit, PickResult, pick_window_rect};
use super::{AllocMapView, ColorMode, CushionKind, DrawOptions, GapRule, SelectionStyle};
use crate::RgbaImage;
use crate::color::{blue_red, linear_to_srgb, srgb_to_linear};

// Eq. 1's pieces and the cushion shading are memscape-eq1's (the one CPU copy, shared with
// memscape-lod); keep the shaders in sync with it.
use memscape_eq1::accumulate::Accumulator;
use memscape_eq1::{
    BlockPaint, BlockSums, ColumnSums, Cushion, MapBlock, RowAccumulator, add_block_px,
    touched_pixels,
};
pub use memscape_eq1::{
    CUSHION_KNOTS, FULL_COVERAGE_EPSILON, box_coverage, clamp_geometry, clamp_geometry_rect,
    cushion_knot_interval, interval_overlap,
};

fn join(v: [u32; 2]) -> u64 {
    u64::from(v[0]) | (u64::from(v[1]) << 32)
}

/// The block as memscape-eq1 sees it (the upload's integers as they are).
pub(crate) fn eq1_block(b: &AllocBlockGpu, t: &BlockTimeGpu) -> MapBlock {
    MapBlock {
        t0: join(t.start),
        t1: join(t.end),
        y: join(b.addr),
        size: join(b.size),
        color: b.color,
        attr: b.attr,
    }
}

/// The block in pixels as (x0, y_bottom, width, height), y down; as `block_geometry_px` in WGSL
/// (memscape-eq1's `MapView::block_geometry_px`). Width and height come from the integer
/// lifetime and size, never from subtracting rounded edges, so sub-pixel blocks keep their
/// extent.
pub fn block_geometry_px(
    view: &AllocMapView,
    size: [u32; 2],
    b: &AllocBlockGpu,
    t: &BlockTimeGpu,
) -> [f32; 4] {
    view.eq1(size).block_geometry_px(&eq1_block(b, t))
}

/// Luminance factor of the cushion at `uv` in a block of `size_px`; 1 on flat ground.
pub fn cushion_luminance(
    kind: CushionKind,
    strength: f32,
    uv: [f32; 2],
    size_px: [f32; 2],
    light: [f32; 3],
) -> f32 {
    memscape_eq1::cushion_luminance(kind.eq1(), strength, uv, size_px, light)
}

/// The luminance of an allocation-map block: [`cushion_luminance`], except that the parabolic
/// profile along x is interpolated linearly between the knots `u = k / CUSHION_KNOTS`, so that
/// along a pixel row it is piecewise linear in the column (what the dense path adds with
/// difference arrays). As `block_cushion_luminance` in `shaders/utils/cushion.wgsl`.
pub fn block_cushion_luminance(
    kind: CushionKind,
    strength: f32,
    uv: [f32; 2],
    size_px: [f32; 2],
    light: [f32; 3],
) -> f32 {
    memscape_eq1::block_cushion_luminance(kind.eq1(), strength, uv, size_px, light)
}

/// Eq. 1 for one pixel from its sums: `acc` = (Σw·c or (Σw·a, Σw·L, 0), F), `coverage` = Σf
/// (memscape-eq1's `resolve_sums`).
pub fn resolve_pixel(view: &AllocMapView, acc: [f32; 4], coverage: f32) -> [f32; 3] {
    resolve_pixel_scaled(view, acc, coverage, 1.0)
}

/// [`resolve_pixel`] with quantitative values `value_scale` times the mean attribute (the
/// uniform's `value_scale`: a one-bin occupancy bar's, `BarBlocks::value_scale`).
pub fn resolve_pixel_scaled(
    view: &AllocMapView,
    mut acc: [f32; 4],
    coverage: f32,
    value_scale: f32,
) -> [f32; 3] {
    let v = view.eq1([1, 1]);
    if v.color_mode == memscape_eq1::ColorMode::Quantitative {
        acc[0] *= value_scale;
    }
    memscape_eq1::sums::resolve_sums(v.alpha, v.color_mode, v.background_linear, acc, coverage)
}

/// Renders the allocation map into an image of `width`×`height`, sRGB encoded.
pub fn render(
    view: &AllocMapView,
    width: u32,
    height: u32,
    blocks: &[AllocBlockGpu],
    times: &[BlockTimeGpu],
) -> RgbaImage {
    render_with(
        view,
        width,
        height,
        blocks,
        times,
        &DrawOptions::default(),
        &[],
    )
}

/// [`render`] of the blocks `options.range`, with the selection bits `selection` (layout of
/// `SelectionBits::words`; missing words read as clear) applied as `options.selection` says;
/// what `AllocMapFrame::prepare_with` draws.
pub fn render_with(
    view: &AllocMapView,
    width: u32,
    height: u32,
    blocks: &[AllocBlockGpu],
    times: &[BlockTimeGpu],
    options: &DrawOptions,
    selection: &[u32],
) -> RgbaImage {
    render_inner(
        view,
        width,
        height,
        blocks,
        times,
        options,
        selection,
        GapRule::None,
        1.0,
    )
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn render_inner(
    view: &AllocMapView,
    width: u32,
    height: u32,
    blocks: &[AllocBlockGpu],
    times: &[BlockTimeGpu],
    options: &DrawOptions,
    selection: &[u32],
    gaps: GapRule,
    value_scale: f32,
) -> RgbaImage {
    let (w, h) = (width as usize, height as usize);
    let mut sums = ColumnSums::new(width, height);
    // With a selection shown, colours are averaged (as the GPU's uniform says, see `gpu()`).
    let (dim, mode) = match options.selection {
        SelectionStyle::Off => (None, view.color_mode),
        SelectionStyle::DimUnselected { color, amount } => (
            Some((
                color.map(|b| srgb_to_linear(f32::from(b) / 255.0)),
                amount.clamp(0.0, 1.0),
            )),
            ColorMode::Categorical,
        ),
    };
    let resolve_view = AllocMapView {
        color_mode: mode,
        ..*view
    };
    let ev = resolve_view.eq1([width, height]);
    let n = blocks.len().min(times.len());
    let range = options.range.clone().unwrap_or(0..n);
    for i in range.start..range.end.min(n) {
        let (b, t) = (&blocks[i], &times[i]);
        let mb = eq1_block(b, t);
        let g = ev.block_geometry_px(&mb);
        let mut paint = BlockPaint::of(&ev, &mb);
        match gaps {
            GapRule::None => {}
            GapRule::Hide { min_px } => {
                if g[2] >= min_px {
                    continue;
                }
            }
            GapRule::CushionOnly { min_px } => {
                if g[2] < min_px {
                    paint.cushion = Cushion::None;
                }
            }
        }
        if let Some((dim_color, amount)) = dim {
            if view.color_mode == ColorMode::Quantitative {
                paint.color = blue_red(b.attr * value_scale);
            }
            let selected = selection
                .get(i / 32)
                .is_some_and(|word| word & (1 << (i % 32)) != 0);
            if !selected {
                paint.color = std::array::from_fn(|k| {
                    paint.color[k] * (1.0 - amount) + dim_color[k] * amount
                });
            }
        }
        add_block_px(&ev, g, &paint, &mut sums);
    }
    let mut image = RgbaImage::new(width, height, [0, 0, 0, 255]);
    for y in 0..h {
        for x in 0..w {
            let i = sums.at(x, y);
            let c = resolve_pixel_scaled(&resolve_view, sums.acc[i], sums.cov[i], value_scale);
            let px = c.map(|v| (linear_to_srgb(v) * 255.0).round() as u8);
            image.set_pixel(x as u32, y as u32, [px[0], px[1], px[2], 255]);
        }
    }
    image
}

/// Eq. 1's per-pixel sums of the blocks `range` (all when `None`), computed on the CPU and
/// returned row-major: what [`super::AllocMapFrame::prepare_sums`] writes into a frame's
/// accumulation targets. The sums of [`render_with`] without a selection, to floating-point
/// rounding (memscape-eq1's `Accumulator`: wide blocks by difference arrays), split over up to
/// `threads` threads by block ranges. On a software rasterizer this is what a frame of many
/// blocks costs instead of rasterizing every block ([`super::dense::prefers_cpu_sums`]).
pub fn exact_sums(
    view: &AllocMapView,
    size: [u32; 2],
    blocks: &[AllocBlockGpu],
    times: &[BlockTimeGpu],
    range: Option<Range<usize>>,
    threads: usize,
) -> memscape_eq1::PixelSums {
    let never = SumsControl::default();
    exact_sums_controlled(view, size, blocks, times, range, threads, &never)
        .unwrap_or_else(|| memscape_eq1::PixelSums::new(size[0].max(1), size[1].max(1)))
}

/// How a long [`exact_sums_controlled`] is followed and stopped from another thread: `done`
/// counts the blocks summed so far; setting `cancel` stops it (within [`SUMS_CHECK_BLOCKS`]
/// blocks per thread).
#[derive(Debug, Default)]
pub struct SumsControl {
    pub cancel: std::sync::atomic::AtomicBool,
    pub done: std::sync::atomic::AtomicUsize,
}

/// Blocks each thread of [`exact_sums_controlled`] sums between two looks at its control.
pub const SUMS_CHECK_BLOCKS: usize = 1 << 16;

/// [`exact_sums`], reporting progress into `control` and returning `None` once cancelled
/// through it: what the GUI's sums worker runs.
pub fn exact_sums_controlled(
    view: &AllocMapView,
    size: [u32; 2],
    blocks: &[AllocBlockGpu],
    times: &[BlockTimeGpu],
    range: Option<Range<usize>>,
    threads: usize,
    control: &SumsControl,
) -> Option<memscape_eq1::PixelSums> {
    use std::sync::atomic::Ordering;
    let size = [size[0].max(1), size[1].max(1)];
    let ev = view.eq1(size);
    let n = blocks.len().min(times.len());
    let range = range.unwrap_or(0..n);
    let range = range.start.min(n)..range.end.min(n);
    let threads = threads.clamp(1, 8).min(range.len().max(1));
    let chunk = range.len().div_ceil(threads);
    // A view one pixel tall without cushions (a one-bin occupancy bar's row) is summed along x
    // only: the same floats, without the 2-D loop per block.
    let part = |lo: usize, hi: usize| match RowAccumulator::new(&ev) {
        Some(row) => sum_blocks(row, blocks, times, lo..hi, control),
        None => sum_blocks(Accumulator::new(&ev), blocks, times, lo..hi, control),
    };
    let parts: Vec<Option<ColumnSums>> = if threads <= 1 {
        vec![part(range.start, range.end)]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|k| {
                    let lo = range.start + k * chunk;
                    let hi = (lo + chunk).min(range.end);
                    scope.spawn(move || part(lo, hi))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        })
    };
    let mut parts = parts.into_iter().collect::<Option<Vec<ColumnSums>>>()?;
    if control.cancel.load(Ordering::Relaxed) {
        return None;
    }
    let mut total = parts
        .pop()
        .unwrap_or_else(|| ColumnSums::new(size[0], size[1]));
    for p in &parts {
        total.add(p);
    }
    let mut out = memscape_eq1::PixelSums::new(size[0], size[1]);
    total.add_to(&mut out);
    Some(out)
}

/// Adds the blocks `range` to `acc`, reporting into `control` every [`SUMS_CHECK_BLOCKS`]
/// blocks; `None` once cancelled.
fn sum_blocks(
    mut acc: impl BlockSums,
    blocks: &[AllocBlockGpu],
    times: &[BlockTimeGpu],
    range: Range<usize>,
    control: &SumsControl,
) -> Option<ColumnSums> {
    use std::sync::atomic::Ordering;
    let mut at = range.start;
    while at < range.end {
        if control.cancel.load(Ordering::Relaxed) {
            return None;
        }
        let end = (at + SUMS_CHECK_BLOCKS).min(range.end);
        for i in at..end {
            acc.add(&eq1_block(&blocks[i], &times[i]));
        }
        control.done.fetch_add(end - at, Ordering::Relaxed);
        at = end;
    }
    Some(acc.finish())
}

/// Which block covers each pixel of the pick window around `cursor_px` most (ties: the higher
/// block index), over the blocks `range` (`None`: all); what `AllocMapPicker` computes on the
/// GPU, with the same geometry, clamping and coverage formulas. `request` is 0.
pub fn pick_window(
    view: &AllocMapView,
    view_size: [u32; 2],
    blocks: &[AllocBlockGpu],
    times: &[BlockTimeGpu],
    range: Option<Range<usize>>,
    cursor_px: [u32; 2],
    radius: u32,
) -> PickResult {
    let view_size = [view_size[0].max(1), view_size[1].max(1)];
    let (origin, size) = pick_window_rect(view_size, cursor_px, radius.min(15));
    let lo = [origin[0] as f32, origin[1] as f32];
    let hi = [lo[0] + size[0] as f32, lo[1] + size[1] as f32];
    let mut hits: Vec<Option<PickHit>> = vec![None; (size[0] * size[1]) as usize];
    let n = blocks.len().min(times.len());
    let range = range.unwrap_or(0..n);
    for i in range.start..range.end.min(n) {
        let g = block_geometry_px(view, view_size, &blocks[i], &times[i]);
        let c = clamp_geometry_rect(g, lo, hi, 2.0);
        let [q0, q1] = touched_pixels(c);
        for wy in 0..size[1] {
            for wx in 0..size[0] {
                let p = [lo[0] + wx as f32, lo[1] + wy as f32];
                if p[0] < q0[0] || p[0] >= q1[0] || p[1] < q0[1] || p[1] >= q1[1] {
                    continue;
                }
                let f = box_coverage(c, p);
                if f <= 0.0 {
                    continue;
                }
                let slot = &mut hits[(wy * size[0] + wx) as usize];
                // Blocks come in index order: `>=` gives ties to the higher index.
                if slot.is_none_or(|h| f >= h.coverage) {
                    *slot = Some(PickHit {
                        block: i as u32,
                        coverage: f,
                    });
                }
            }
        }
    }
    PickResult {
        request: 0,
        cursor_px: [
            cursor_px[0].min(view_size[0] - 1),
            cursor_px[1].min(view_size[1] - 1),
        ],
        origin_px: origin,
        width: size[0],
        height: size[1],
        hits,
    }
}
