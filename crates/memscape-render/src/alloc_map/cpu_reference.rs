//! The allocation map computed on the CPU, pixel by pixel, with the same formulas as
//! `shaders/alloc_map_*.wgsl`: the reference the GPU output is tested against, and a fallback
//! that needs no GPU at all.

use super::gpu::{AllocBlockGpu, BlockTimeGpu};
use super::{AllocMapView, ColorMode, CushionKind};
use crate::RgbaImage;
use crate::color::{blue_red, linear_to_srgb, srgb_to_linear};
use crate::u64_split::offset_to_f32;

/// Keep in sync with `shaders/utils/cushion.wgsl`.
const PLATEAU_BEVEL: f32 = 0.2;
const AMBIENT: f32 = 0.35;
const DIFFUSE: f32 = 0.65;
/// Keep in sync with `FULL_COVERAGE_EPSILON` in `shaders/alloc_map_resolve.wgsl`.
pub const FULL_COVERAGE_EPSILON: f32 = 1.0 / 1024.0;

fn join(v: [u32; 2]) -> u64 {
    u64::from(v[0]) | (u64::from(v[1]) << 32)
}

/// The block's rectangle in pixels (x0, y0, x1, y1), y down; as `block_rect_px` in WGSL.
pub fn block_rect_px(
    view: &AllocMapView,
    size: [u32; 2],
    b: &AllocBlockGpu,
    t: &BlockTimeGpu,
) -> [f32; 4] {
    let h = size[1] as f32;
    let x0 = (offset_to_f32(join(t.start), view.time_origin) - view.time_origin_frac)
        * view.pixels_per_time;
    let x1 = (offset_to_f32(join(t.end), view.time_origin) - view.time_origin_frac)
        * view.pixels_per_time;
    let addr = join(b.addr);
    let a0 = (offset_to_f32(addr, view.addr_origin) - view.addr_origin_frac) * view.pixels_per_byte;
    let a1 = (offset_to_f32(addr.wrapping_add(join(b.size)), view.addr_origin)
        - view.addr_origin_frac)
        * view.pixels_per_byte;
    [x0, h - a1, x1, h - a0]
}

/// Exact area of `rect` ∩ the unit pixel at `p`.
pub fn box_coverage(rect: [f32; 4], p: [f32; 2]) -> f32 {
    let w = (rect[2].min(p[0] + 1.0) - rect[0].max(p[0])).max(0.0);
    let h = (rect[3].min(p[1] + 1.0) - rect[1].max(p[1])).max(0.0);
    w * h
}

fn cushion_slope(kind: CushionKind, u: f32) -> f32 {
    match kind {
        CushionKind::None => 0.0,
        CushionKind::Parabolic => 1.0 - 2.0 * u,
        CushionKind::Plateau => {
            if u < PLATEAU_BEVEL {
                1.0
            } else if u > 1.0 - PLATEAU_BEVEL {
                -1.0
            } else {
                0.0
            }
        }
    }
}

fn cushion_size_fade(extent_px: f32) -> f32 {
    ((extent_px - 1.0) / 3.0).clamp(0.0, 1.0)
}

/// Luminance factor of the cushion at `uv` in a block of `size_px`; 1 on flat ground.
pub fn cushion_luminance(
    kind: CushionKind,
    strength: f32,
    uv: [f32; 2],
    size_px: [f32; 2],
    light: [f32; 3],
) -> f32 {
    if kind == CushionKind::None || strength <= 0.0 {
        return 1.0;
    }
    let sx = cushion_slope(kind, uv[0]) * cushion_size_fade(size_px[0]);
    let sy = cushion_slope(kind, uv[1]) * cushion_size_fade(size_px[1]);
    let n = [-sx * strength, -sy * strength, 1.0];
    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    let dot = (n[0] * light[0] + n[1] * light[1] + n[2] * light[2]) / len;
    let flat = AMBIENT + DIFFUSE * light[2];
    (AMBIENT + DIFFUSE * dot.max(0.0)) / flat
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
    let (w, h) = (width as usize, height as usize);
    let mut acc = vec![[0f32; 4]; w * h];
    let mut cov = vec![0f32; w * h];
    let light = view.light();
    for (b, t) in blocks.iter().zip(times) {
        let r = block_rect_px(view, [width, height], b, t);
        let margin = 2.0;
        let lo = [
            r[0].clamp(-margin, w as f32 + margin),
            r[1].clamp(-margin, h as f32 + margin),
        ];
        let hi = [
            r[2].clamp(-margin, w as f32 + margin),
            r[3].clamp(-margin, h as f32 + margin),
        ];
        let rect = [lo[0], lo[1], hi[0], hi[1]];
        let size_px = [r[2] - r[0], r[3] - r[1]];
        let color = b.color.to_le_bytes();
        let color = [0, 1, 2].map(|k| srgb_to_linear(f32::from(color[k]) / 255.0));
        let x_start = lo[0].floor().max(0.0) as usize;
        let y_start = lo[1].floor().max(0.0) as usize;
        let x_end = (hi[0].ceil().max(lo[0].floor() + 1.0).max(0.0) as usize).min(w);
        let y_end = (hi[1].ceil().max(lo[1].floor() + 1.0).max(0.0) as usize).min(h);
        for py in y_start..y_end {
            for px in x_start..x_end {
                let p = [px as f32, py as f32];
                let f = box_coverage(rect, p);
                if f <= 0.0 {
                    continue;
                }
                let wgt = f.powf(view.alpha);
                let centre = [p[0] + 0.5, p[1] + 0.5];
                let uv = [
                    ((centre[0] - r[0]) / size_px[0].max(1e-6)).clamp(0.0, 1.0),
                    ((centre[1] - r[1]) / size_px[1].max(1e-6)).clamp(0.0, 1.0),
                ];
                let lum =
                    cushion_luminance(view.cushion, view.cushion_strength, uv, size_px, light);
                let a = &mut acc[py * w + px];
                match view.color_mode {
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
    let mut image = RgbaImage::new(width, height, [0, 0, 0, 255]);
    for y in 0..h {
        for x in 0..w {
            let c = resolve_pixel(view, acc[y * w + x], cov[y * w + x]);
            let px = c.map(|v| (linear_to_srgb(v) * 255.0).round() as u8);
            image.set_pixel(x as u32, y as u32, [px[0], px[1], px[2], 255]);
        }
    }
    image
}
