//! Exact accumulation of blocks into [`PixelSums`]: for each pixel a block touches, its exact
//! box-filter coverage, its weight f^α and its cushion luminance at the pixel's centre, as the
//! renderer's CPU reference computes them.

use crate::eq1::{
    CLAMP_MARGIN, ColorMode, EDGE_SLACK, block_cushion_luminance, box_coverage, clamp_geometry,
    default_light, unpack_linear,
};
use crate::sums::PixelSums;
use crate::view::{LodBlock, LodView};

/// Adds `blocks` to `sums` exactly (the view's α, cushion and colour mode).
pub fn accumulate(view: &LodView, blocks: &[LodBlock], sums: &mut PixelSums) {
    for b in blocks {
        accumulate_block(view, b, sums);
    }
}

/// Adds one block exactly.
pub fn accumulate_block(view: &LodView, b: &LodBlock, sums: &mut PixelSums) {
    let (w, h) = (sums.width as usize, sums.height as usize);
    let light = default_light();
    let g = view.block_geometry_px(b);
    let c = clamp_geometry(g, [w as f32, h as f32], CLAMP_MARGIN);
    let size_px = [g[2], g[3]];
    let origin_px = [g[0], g[1] - g[3]];
    let color = unpack_linear(b.color);
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
                block_cushion_luminance(view.cushion, view.cushion_strength, uv, size_px, light);
            let i = py * w + px;
            let a = &mut sums.acc[i];
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
            sums.cov[i] += f;
        }
    }
}

/// The exact picture of `blocks` in `view` (sRGB RGBA bytes, row-major).
pub fn render(view: &LodView, blocks: &[LodBlock]) -> Vec<[u8; 4]> {
    let mut sums = PixelSums::new(view.width, view.height);
    accumulate(view, blocks, &mut sums);
    sums.resolve(view)
}
