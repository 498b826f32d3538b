//! The allocation map computed on the CPU, pixel by pixel, with the same formulas as
//! `shaders/alloc_map_*.wgsl`: the reference the GPU output is tested against, and a fallback
//! that needs no GPU at all.

use std::ops::Range;

use super::gpu::{AllocBlockGpu, BlockTimeGpu};
use super::pick::{PickHit, PickResult, pick_window_rect};
use super::{AllocMapView, ColorMode, CushionKind, DrawOptions, GapRule, SelectionStyle};
use crate::RgbaImage;
use crate::color::{blue_red, linear_to_srgb, srgb_to_linear};
use crate::u64_split::offset_to_f32;

// Eq. 1's pieces and the cushion shading are memscape-eq1's (the one CPU copy, shared with
// memscape-lod); keep the shaders in sync with it.
pub use memscape_eq1::{
    CUSHION_KNOTS, FULL_COVERAGE_EPSILON, box_coverage, clamp_geometry, clamp_geometry_rect,
    cushion_knot_interval, interval_overlap,
};
use memscape_eq1::{Cushion, EDGE_SLACK};

fn join(v: [u32; 2]) -> u64 {
    u64::from(v[0]) | (u64::from(v[1]) << 32)
}

/// The block in pixels as (x0, y_bottom, width, height), y down; as `block_geometry_px` in WGSL.
/// Width and height come from the integer lifetime and size, never from subtracting rounded
/// edges, so sub-pixel blocks keep their extent.
pub fn block_geometry_px(
    view: &AllocMapView,
    size: [u32; 2],
    b: &AllocBlockGpu,
    t: &BlockTimeGpu,
) -> [f32; 4] {
    let h = size[1] as f32;
    let x0 = (offset_to_f32(join(t.start), view.time_origin) - view.time_origin_frac)
        * view.pixels_per_time;
    let a0 = (offset_to_f32(join(b.addr), view.addr_origin) - view.addr_origin_frac)
        * view.pixels_per_byte;
    let width = offset_to_f32(join(t.end), join(t.start)) * view.pixels_per_time;
    let height = offset_to_f32(join(b.size), 0) * view.pixels_per_byte;
    [x0, h - a0, width, height]
}

fn eq1_cushion(kind: CushionKind) -> Cushion {
    match kind {
        CushionKind::None => Cushion::None,
        CushionKind::Parabolic => Cushion::Parabolic,
        CushionKind::Plateau => Cushion::Plateau,
    }
}

/// Luminance factor of the cushion at `uv` in a block of `size_px`; 1 on flat ground.
pub fn cushion_luminance(
    kind: CushionKind,
    strength: f32,
    uv: [f32; 2],
    size_px: [f32; 2],
    light: [f32; 3],
) -> f32 {
    memscape_eq1::cushion_luminance(eq1_cushion(kind), strength, uv, size_px, light)
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
    memscape_eq1::block_cushion_luminance(eq1_cushion(kind), strength, uv, size_px, light)
}

/// Eq. 1 for one pixel from its sums: `acc` = (Σw·c or (Σw·a, Σw·L, 0), F), `coverage` = Σf.
pub fn resolve_pixel(view: &AllocMapView, acc: [f32; 4], coverage: f32) -> [f32; 3] {
    let uncovered = if coverage >= 1.0 - FULL_COVERAGE_EPSILON {
        0.0
    } else {
        1.0 - coverage
    };
    let f_sum = acc[3];
    let b = uncovered.max(0.0).powf(view.alpha);
    let bg = view.background_linear;
    if f_sum + b <= 0.0 {
        return bg;
    }
    let c = match view.color_mode {
        ColorMode::Categorical => [acc[0], acc[1], acc[2]],
        ColorMode::Quantitative => {
            if f_sum > 0.0 {
                let ramp = blue_red(acc[0] / f_sum);
                let shade = acc[1] / f_sum;
                ramp.map(|r| r * shade * f_sum)
            } else {
                [0.0; 3]
            }
        }
    };
    std::array::from_fn(|k| (c[k] + b * bg[k]) / (f_sum + b))
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
) -> RgbaImage {
    let (w, h) = (width as usize, height as usize);
    let mut acc = vec![[0f32; 4]; w * h];
    let mut cov = vec![0f32; w * h];
    let light = view.light();
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
    let n = blocks.len().min(times.len());
    let range = options.range.clone().unwrap_or(0..n);
    for i in range.start..range.end.min(n) {
        let (b, t) = (&blocks[i], &times[i]);
        let g = block_geometry_px(view, [width, height], b, t);
        let c = clamp_geometry(g, [w as f32, h as f32], 2.0);
        let size_px = [g[2], g[3]];
        let origin_px = [g[0], g[1] - g[3]];
        let mut cushion = view.cushion;
        match gaps {
            GapRule::None => {}
            GapRule::Hide { min_px } => {
                if g[2] >= min_px {
                    continue;
                }
            }
            GapRule::CushionOnly { min_px } => {
                if g[2] < min_px {
                    cushion = CushionKind::None;
                }
            }
        }
        let color = b.color.to_le_bytes();
        let mut color = [0, 1, 2].map(|k| srgb_to_linear(f32::from(color[k]) / 255.0));
        if let Some((dim_color, amount)) = dim {
            if view.color_mode == ColorMode::Quantitative {
                color = blue_red(b.attr);
            }
            let selected = selection
                .get(i / 32)
                .is_some_and(|word| word & (1 << (i % 32)) != 0);
            if !selected {
                color = std::array::from_fn(|k| color[k] * (1.0 - amount) + dim_color[k] * amount);
            }
        }
        let q0 = [
            (c[0] - EDGE_SLACK).floor(),
            (c[1] - c[3] - EDGE_SLACK).floor(),
        ];
        let q1 = [
            (c[0] + c[2] + EDGE_SLACK).ceil().max(q0[0] + 1.0),
            (c[1] + EDGE_SLACK).ceil().max(q0[1] + 1.0),
        ];
        let x_start = q0[0].max(0.0) as usize;
        let y_start = q0[1].max(0.0) as usize;
        let x_end = (q1[0].max(0.0) as usize).min(w);
        let y_end = (q1[1].max(0.0) as usize).min(h);
        for py in y_start..y_end {
            for px in x_start..x_end {
                let p = [px as f32, py as f32];
                let f = box_coverage(c, p);
                if f <= 0.0 {
                    continue;
                }
                let wgt = f.powf(view.alpha);
                let centre = [p[0] + 0.5, p[1] + 0.5];
                let uv = [
                    ((centre[0] - origin_px[0]) / size_px[0].max(1e-6)).clamp(0.0, 1.0),
                    ((centre[1] - origin_px[1]) / size_px[1].max(1e-6)).clamp(0.0, 1.0),
                ];
                let lum =
                    block_cushion_luminance(cushion, view.cushion_strength, uv, size_px, light);
                let a = &mut acc[py * w + px];
                match mode {
                    ColorMode::Categorical => {
                        for k in 0..3 {
                            a[k] += wgt * color[k] * lum;
                        }
                    }
                    ColorMode::Quantitative => {
                        a[0] += wgt * b.attr;
                        a[1] += wgt * lum;
                    }
                }
                a[3] += wgt;
                cov[py * w + px] += f;
            }
        }
    }
    let resolve_view = AllocMapView {
        color_mode: mode,
        ..*view
    };
    let mut image = RgbaImage::new(width, height, [0, 0, 0, 255]);
    for y in 0..h {
        for x in 0..w {
            let c = resolve_pixel(&resolve_view, acc[y * w + x], cov[y * w + x]);
            let px = c.map(|v| (linear_to_srgb(v) * 255.0).round() as u8);
            image.set_pixel(x as u32, y as u32, [px[0], px[1], px[2], 255]);
        }
    }
    image
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
        let q0 = [
            (c[0] - EDGE_SLACK).floor(),
            (c[1] - c[3] - EDGE_SLACK).floor(),
        ];
        let q1 = [
            (c[0] + c[2] + EDGE_SLACK).ceil().max(q0[0] + 1.0),
            (c[1] + EDGE_SLACK).ceil().max(q0[1] + 1.0),
        ];
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
