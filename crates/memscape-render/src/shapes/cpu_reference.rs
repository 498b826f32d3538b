//! CPU twin of `shaders/shapes.wgsl`: the same signed distances, coverage ramp and premultiplied
//! "over" blending, evaluated at pixel centres, with 8-bit quantisation after every instance as
//! an `Rgba8Unorm` target does. Tests compare it with the GPU on lavapipe.

use super::ShapesView;
use super::gpu::{FLAG_PIXEL_SIZE, KIND_DISC, KIND_RECT, KIND_SECTOR, ShapeGpu};
use crate::RgbaImage;
use std::f32::consts::PI;

/// Signed distance (pixels, negative inside) of an axis-aligned box with rounded corners.
pub fn sd_rect(p: [f32; 2], lo: [f32; 2], hi: [f32; 2], radius: f32) -> f32 {
    let c = [0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1])];
    let half = [0.5 * (hi[0] - lo[0]), 0.5 * (hi[1] - lo[1])];
    let r = radius.clamp(0.0, half[0].min(half[1]).max(0.0));
    let d = [
        (p[0] - c[0]).abs() - half[0] + r,
        (p[1] - c[1]).abs() - half[1] + r,
    ];
    let outside = (d[0].max(0.0).powi(2) + d[1].max(0.0).powi(2)).sqrt();
    outside + d[0].max(d[1]).min(0.0) - r
}

/// Signed distance of an annular sector: radial band intersected with the angular wedge.
pub fn sd_sector(p: [f32; 2], c: [f32; 2], r0: f32, r1: f32, a0: f32, a1: f32) -> f32 {
    let v = [p[0] - c[0], p[1] - c[1]];
    let r = (v[0] * v[0] + v[1] * v[1]).sqrt();
    let radial = (r - 0.5 * (r0 + r1)).abs() - 0.5 * (r1 - r0);
    let half_span = 0.5 * (a1 - a0);
    if half_span >= PI {
        return radial;
    }
    let mid = 0.5 * (a0 + a1);
    let mut phi = v[1].atan2(v[0]) - mid;
    phi -= 2.0 * PI * ((phi + PI) / (2.0 * PI)).floor();
    let off = phi.abs() - half_span;
    let angular = if off > 0.5 * PI { r } else { r * off.sin() };
    radial.max(angular)
}

/// Signed distance of a segment of half width `half_width` (a capsule).
pub fn sd_segment(p: [f32; 2], a: [f32; 2], b: [f32; 2], half_width: f32) -> f32 {
    let ab = [b[0] - a[0], b[1] - a[1]];
    let len2 = ab[0] * ab[0] + ab[1] * ab[1];
    let ap = [p[0] - a[0], p[1] - a[1]];
    let h = if len2 > 1e-12 {
        ((ap[0] * ab[0] + ap[1] * ab[1]) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let d = [ap[0] - ab[0] * h, ap[1] - ab[1] * h];
    (d[0] * d[0] + d[1] * d[1]).sqrt() - half_width
}

pub fn coverage(d: f32) -> f32 {
    (0.5 - d).clamp(0.0, 1.0)
}

/// Shape parameters in pixels, as `shape_in_pixels` computes them in the shader.
fn in_pixels(shape: &ShapeGpu, view: &ShapesView) -> ([f32; 4], [f32; 4]) {
    let kind = shape.kind & 255;
    let pixel_size = shape.kind & FLAG_PIXEL_SIZE != 0;
    let to_px = |x: f32, y: f32| view.to_pixels([x, y]);
    let iso = 0.5 * (view.scale[0].abs() + view.scale[1].abs());
    let (p, q) = (shape.p, shape.q);
    match kind {
        KIND_RECT => {
            if pixel_size {
                let c = to_px(p[0], p[1]);
                (
                    [
                        c[0] - 0.5 * p[2],
                        c[1] - 0.5 * p[3],
                        c[0] + 0.5 * p[2],
                        c[1] + 0.5 * p[3],
                    ],
                    q,
                )
            } else {
                let a = to_px(p[0], p[1]);
                let b = to_px(p[2], p[3]);
                (
                    [
                        a[0].min(b[0]),
                        a[1].min(b[1]),
                        a[0].max(b[0]),
                        a[1].max(b[1]),
                    ],
                    q,
                )
            }
        }
        KIND_DISC => {
            let c = to_px(p[0], p[1]);
            let r = if pixel_size { p[2] } else { p[2] * iso };
            ([c[0], c[1], r, 0.0], q)
        }
        KIND_SECTOR => {
            let c = to_px(p[0], p[1]);
            ([c[0], c[1], p[2] * iso, p[3] * iso], q)
        }
        _ => {
            let a = to_px(p[0], p[1]);
            let b = to_px(p[2], p[3]);
            ([a[0], a[1], b[0], b[1]], q)
        }
    }
}

/// Signed distance in pixels of `shape` at pixel position `p`.
pub fn signed_distance(shape: &ShapeGpu, view: &ShapesView, p: [f32; 2]) -> f32 {
    let (a, b) = in_pixels(shape, view);
    match shape.kind & 255 {
        KIND_RECT => sd_rect(p, [a[0], a[1]], [a[2], a[3]], b[0]),
        KIND_DISC => ((p[0] - a[0]).powi(2) + (p[1] - a[1]).powi(2)).sqrt() - a[2],
        KIND_SECTOR => sd_sector(p, [a[0], a[1]], a[2], a[3], b[0], b[1]),
        _ => sd_segment(p, [a[0], a[1]], [a[2], a[3]], b[0]),
    }
}

/// Premultiplied colour (sRGB-encoded channels) the fragment shader writes for `shape` at `p`.
pub fn fragment(shape: &ShapeGpu, view: &ShapesView, p: [f32; 2]) -> [f32; 4] {
    let d = signed_distance(shape, view, p);
    let outer = coverage(d);
    let unpack = |c: u32| c.to_le_bytes().map(|b| f32::from(b) / 255.0);
    let premul = |c: [f32; 4]| [c[0] * c[3], c[1] * c[3], c[2] * c[3], c[3]];
    let fill = premul(unpack(shape.fill));
    if shape.border_px > 0.0 {
        let inner = coverage(d + shape.border_px);
        let border = premul(unpack(shape.border));
        std::array::from_fn(|k| fill[k] * inner + border[k] * (outer - inner))
    } else {
        fill.map(|v| v * outer)
    }
}

/// Draws `shapes` in order over `background` (straight sRGB) into a `width`×`height` image,
/// returned with straight alpha like [`crate::OffscreenTarget::read`].
pub fn render(
    shapes: &[ShapeGpu],
    view: &ShapesView,
    width: u32,
    height: u32,
    background: [u8; 4],
) -> RgbaImage {
    let n = width as usize * height as usize;
    let bg = background.map(|b| f32::from(b) / 255.0);
    let bg_premul = [bg[0] * bg[3], bg[1] * bg[3], bg[2] * bg[3], bg[3]];
    let mut acc: Vec<[f32; 4]> = vec![quantise(bg_premul); n];
    for shape in shapes {
        let Some((x0, y0, x1, y1)) = pixel_bounds(shape, view, width, height) else {
            continue;
        };
        for y in y0..y1 {
            for x in x0..x1 {
                let p = [x as f32 + 0.5, y as f32 + 0.5];
                let src = fragment(shape, view, p);
                if src[3] <= 0.0 && src.iter().all(|v| *v <= 0.0) {
                    continue;
                }
                let dst = &mut acc[y as usize * width as usize + x as usize];
                *dst = quantise(std::array::from_fn(|k| src[k] + dst[k] * (1.0 - src[3])));
            }
        }
    }
    let mut pixels = Vec::with_capacity(n * 4);
    for c in acc {
        let a = c[3];
        let straight = |v: f32| {
            if a > 0.0 {
                ((v / a).clamp(0.0, 1.0) * 255.0).round() as u8
            } else {
                0
            }
        };
        pixels.extend_from_slice(&[
            straight(c[0]),
            straight(c[1]),
            straight(c[2]),
            (a.clamp(0.0, 1.0) * 255.0).round() as u8,
        ]);
    }
    RgbaImage {
        width,
        height,
        pixels,
    }
}

fn quantise(c: [f32; 4]) -> [f32; 4] {
    c.map(|v| (v.clamp(0.0, 1.0) * 255.0).round() / 255.0)
}

/// Pixels worth evaluating for `shape` (its pixel-space bounds plus the ramp), clipped.
fn pixel_bounds(
    shape: &ShapeGpu,
    view: &ShapesView,
    width: u32,
    height: u32,
) -> Option<(u32, u32, u32, u32)> {
    let (a, b) = in_pixels(shape, view);
    let (lo, hi) = match shape.kind & 255 {
        KIND_RECT => ([a[0], a[1]], [a[2], a[3]]),
        KIND_DISC | KIND_SECTOR => {
            let r = if shape.kind & 255 == KIND_DISC {
                a[2]
            } else {
                a[3]
            };
            ([a[0] - r, a[1] - r], [a[0] + r, a[1] + r])
        }
        _ => (
            [a[0].min(a[2]) - b[0], a[1].min(a[3]) - b[0]],
            [a[0].max(a[2]) + b[0], a[1].max(a[3]) + b[0]],
        ),
    };
    let x0 = (lo[0] - 2.0).floor().max(0.0);
    let y0 = (lo[1] - 2.0).floor().max(0.0);
    let x1 = (hi[0] + 2.0).ceil().min(width as f32);
    let y1 = (hi[1] + 2.0).ceil().min(height as f32);
    if !(x0 < x1 && y0 < y1) {
        return None;
    }
    Some((x0 as u32, y0 as u32, x1 as u32, y1 as u32))
}
