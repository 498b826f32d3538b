//! Eq. 1 of Moreta & Telea, the cushion shading and the blue → red ramp, on the CPU, in the
//! f32 arithmetic of memscape-render's shaders: the one copy that memscape-render's CPU
//! reference (the judge of every GPU path) and memscape-lod's exact path and level of detail
//! both call. No GPU stack: memscape-lod stays CPU-only.
//! `crates/memscape-render/tests/alloc_map_lod.rs` checks that both give the same image.
//!
//! Modules: [`view`] (what part of the plane a picture shows, a block's pixel geometry),
//! [`accumulate`] (a block's exact Eq. 1 sums per pixel), [`row`] (the same sums of a view one
//! pixel tall without cushions, along x only: an occupancy bar's row), [`sums`] (the per-pixel sums and their
//! resolve into colours), [`palette`] (the categorical colours).

pub mod accumulate;
pub mod palette;
pub mod row;
pub mod sums;
pub mod view;

/// xorshift64*, enough for the tests' random blocks (one generator for every module's tests).
#[cfg(test)]
pub(crate) mod test_rng {
    pub(crate) struct Rng(u64);

    impl Rng {
        pub(crate) fn new(seed: u64) -> Self {
            Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
        }
        pub(crate) fn next_u64(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.0 = x;
            x.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        pub(crate) fn unit(&mut self) -> f64 {
            (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
        }
        pub(crate) fn below(&mut self, n: u64) -> u64 {
            self.next_u64() % n.max(1)
        }
    }
}

pub use accumulate::{AccumulatorBuffers, BlockPaint, BlockSums, ColumnSums, add_block_px};
pub use row::{RowAccumulator, RowProgress};
pub use sums::PixelSums;
pub use view::{MapBlock, MapView, offset_to_f32};

/// How blocks are shaded (memscape-render's `CushionKind` maps onto it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Cushion {
    None,
    #[default]
    Parabolic,
    Plateau,
}

/// Whether colours (categorical) or attribute values (quantitative) are averaged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum ColorMode {
    #[default]
    Categorical,
    Quantitative,
}

/// Keep these in sync with `shaders/utils/cushion.wgsl` and `shaders/alloc_map_*.wgsl`.
const PLATEAU_BEVEL: f32 = 0.2;
const AMBIENT: f32 = 0.35;
const DIFFUSE: f32 = 0.65;
/// Coverage sums within this distance of 1 count as fully covered.
pub const FULL_COVERAGE_EPSILON: f32 = 1.0 / 1024.0;
/// Knots of the parabolic cushion's horizontal profile.
pub const CUSHION_KNOTS: f32 = 8.0;
/// Pixels a block's rectangle may reach past the view before it is clamped.
pub const CLAMP_MARGIN: f32 = 2.0;
/// Slack of the pixel range a block touches (as `EDGE_SLACK` in the shaders).
pub const EDGE_SLACK: f32 = 1.0 / 256.0;

/// The five sRGB stops of the blue → red ramp (low → high). Keep in sync with `blue_red` in
/// `shaders/utils/color.wgsl`.
pub const BLUE_RED_STOPS: [[f32; 3]; 5] = [
    [0.192, 0.212, 0.584],
    [0.271, 0.459, 0.706],
    [0.996, 0.878, 0.565],
    [0.957, 0.427, 0.263],
    [0.647, 0.000, 0.149],
];

pub fn srgb_to_linear(c: f32) -> f32 {
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

pub fn linear_to_srgb(c: f32) -> f32 {
    let x = c.clamp(0.0, 1.0);
    if x <= 0.003_130_8 {
        x * 12.92
    } else {
        1.055 * x.powf(1.0 / 2.4) - 0.055
    }
}

/// [`srgb_to_linear`] of every 8-bit value.
static SRGB_TO_LINEAR: std::sync::LazyLock<[f32; 256]> =
    std::sync::LazyLock::new(|| std::array::from_fn(|i| srgb_to_linear(i as f32 / 255.0)));

/// Linear RGB of an sRGB colour packed as `unpack4x8unorm` reads it (alpha ignored).
#[inline]
pub fn unpack_linear(packed: u32) -> [f32; 3] {
    let c = packed.to_le_bytes();
    let t = &*SRGB_TO_LINEAR;
    [
        t[usize::from(c[0])],
        t[usize::from(c[1])],
        t[usize::from(c[2])],
    ]
}

/// Linear RGB of the blue → red ramp at `t` in [0, 1].
pub fn blue_red(t: f32) -> [f32; 3] {
    let t = t.clamp(0.0, 1.0) * 4.0;
    let i = (t.floor() as usize).min(3);
    let f = t - i as f32;
    let a = BLUE_RED_STOPS[i];
    let b = BLUE_RED_STOPS[i + 1];
    std::array::from_fn(|k| {
        let la = srgb_to_linear(a[k]);
        let lb = srgb_to_linear(b[k]);
        la + (lb - la) * f
    })
}

/// The cushions' light: from the upper left, slightly towards the viewer (normalised).
pub fn default_light() -> [f32; 3] {
    let l = [-0.45f32, -0.55, 0.7];
    let n = (l[0] * l[0] + l[1] * l[1] + l[2] * l[2]).sqrt();
    l.map(|v| v / n)
}

/// Length of `[a, a + w) ∩ [p, p + 1)`; exact for tiny `w` inside the pixel.
#[inline]
pub fn interval_overlap(a: f32, w: f32, p: f32) -> f32 {
    let cut_before = (p - a).max(0.0);
    let cut_after = ((a - p - 1.0) + w).max(0.0);
    (w - cut_before - cut_after).clamp(0.0, w.min(1.0))
}

/// Vertical overlap of the block `g` = (x0, y_bottom, w, h) with the pixel row at `py`.
#[inline]
pub fn vertical_overlap(g: [f32; 4], py: f32) -> f32 {
    let cut_above = ((py - g[1]) + g[3]).max(0.0);
    let cut_below = (g[1] - py - 1.0).max(0.0);
    (g[3] - cut_above - cut_below).clamp(0.0, g[3].min(1.0))
}

/// Exact area of the block `g` = (x0, y_bottom, w, h) inside the unit pixel at `p`.
#[inline]
pub fn box_coverage(g: [f32; 4], p: [f32; 2]) -> f32 {
    interval_overlap(g[0], g[2], p[0]) * vertical_overlap(g, p[1])
}

/// The pixels `[q0, q1)` (corners, pixel units) a clamped block `c` = (x0, y_bottom, w, h) may
/// touch, with [`EDGE_SLACK`] for rounding and at least one pixel each way; as the shaders'
/// quad bounds.
#[inline]
pub fn touched_pixels(c: [f32; 4]) -> [[f32; 2]; 2] {
    let q0 = [
        (c[0] - EDGE_SLACK).floor(),
        (c[1] - c[3] - EDGE_SLACK).floor(),
    ];
    let q1 = [
        (c[0] + c[2] + EDGE_SLACK).ceil().max(q0[0] + 1.0),
        (c[1] + EDGE_SLACK).ceil().max(q0[1] + 1.0),
    ];
    [q0, q1]
}

/// Clamps to the viewport plus `margin`, keeping the far edges; as `clamp_geometry` in WGSL.
pub fn clamp_geometry(g: [f32; 4], viewport: [f32; 2], margin: f32) -> [f32; 4] {
    clamp_geometry_rect(g, [0.0, 0.0], viewport, margin)
}

/// Clamps to the rectangle `[lo, hi)` (pixels, y down) plus `margin`, keeping the far edges; as
/// `clamp_geometry_rect` in WGSL. With `lo` = 0 it is exactly [`clamp_geometry`].
pub fn clamp_geometry_rect(g: [f32; 4], lo: [f32; 2], hi: [f32; 2], margin: f32) -> [f32; 4] {
    let (mut x0, mut w, mut yb, mut h) = (g[0], g[2], g[1], g[3]);
    if x0 < lo[0] - margin {
        w -= (lo[0] - margin) - x0;
        x0 = lo[0] - margin;
    }
    w = w.min(hi[0] + margin - x0);
    if yb > hi[1] + margin {
        h -= yb - (hi[1] + margin);
        yb = hi[1] + margin;
    }
    h = h.min(yb - (lo[1] - margin));
    [x0, yb, w.max(0.0), h.max(0.0)]
}

fn cushion_slope(kind: Cushion, u: f32) -> f32 {
    match kind {
        Cushion::None => 0.0,
        Cushion::Parabolic => 1.0 - 2.0 * u,
        Cushion::Plateau => {
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

#[inline]
fn cushion_size_fade(extent_px: f32) -> f32 {
    ((extent_px - 1.0) / 3.0).clamp(0.0, 1.0)
}

/// Luminance factor of the cushion at `uv` in a block of `size_px`; 1 on flat ground.
pub fn cushion_luminance(
    kind: Cushion,
    strength: f32,
    uv: [f32; 2],
    size_px: [f32; 2],
    light: [f32; 3],
) -> f32 {
    if kind == Cushion::None || strength <= 0.0 {
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

/// The knot interval `[j, j + 1) / CUSHION_KNOTS` that holds `u` (in [0, 1]), as `j`.
#[inline]
pub fn cushion_knot_interval(u: f32) -> f32 {
    (u * CUSHION_KNOTS).floor().min(CUSHION_KNOTS - 1.0)
}

/// A block's luminance: [`cushion_luminance`], the parabolic profile along x interpolated
/// linearly between knots.
pub fn block_cushion_luminance(
    kind: Cushion,
    strength: f32,
    uv: [f32; 2],
    size_px: [f32; 2],
    light: [f32; 3],
) -> f32 {
    if kind != Cushion::Parabolic {
        return cushion_luminance(kind, strength, uv, size_px, light);
    }
    let j = cushion_knot_interval(uv[0]);
    let l0 = cushion_luminance(kind, strength, [j / CUSHION_KNOTS, uv[1]], size_px, light);
    let l1 = cushion_luminance(
        kind,
        strength,
        [(j + 1.0) / CUSHION_KNOTS, uv[1]],
        size_px,
        light,
    );
    l0 + (l1 - l0) * (uv[0] * CUSHION_KNOTS - j)
}

/// log2 of a positive normal f32 to about 1e-7 (absolute): exponent bits plus a polynomial on
/// the mantissa. Subnormals and 0 give a very negative value.
#[inline]
pub fn fast_log2(x: f32) -> f32 {
    if x <= 0.0 {
        return -300.0;
    }
    let bits = x.to_bits();
    let exp = ((bits >> 23) & 0xff) as i32 - 127;
    // Mantissa in [1, 2), then m = (x − 1)/(x + 1) for the atanh series of ln.
    let m = f32::from_bits((bits & 0x007f_ffff) | 0x3f80_0000);
    let m = f64::from(m);
    let t = (m - 1.0) / (m + 1.0);
    let t2 = t * t;
    // ln(m) = 2 (t + t³/3 + t⁵/5 + t⁷/7 + t⁹/9), |t| ≤ 1/3.
    let ln = 2.0 * t * (1.0 + t2 * (1.0 / 3.0 + t2 * (0.2 + t2 * (1.0 / 7.0 + t2 / 9.0))));
    (f64::from(exp) + ln * std::f64::consts::LOG2_E) as f32
}

/// 2^x for x ≤ 0 (larger x work up to 127), relative error about 1e-7.
#[inline]
pub fn fast_exp2(x: f32) -> f32 {
    let x = f64::from(x.clamp(-126.0, 126.0));
    let i = x.floor();
    let f = x - i;
    // 2^f on [0, 1): Taylor series of e^(f ln 2) to the 7th power.
    let l = f * std::f64::consts::LN_2;
    let p = 1.0
        + l * (1.0
            + l * (0.5
                + l * (1.0 / 6.0
                    + l * (1.0 / 24.0 + l * (1.0 / 120.0 + l * (1.0 / 720.0 + l / 5040.0))))));
    (p * f64::from_bits(((i as i64 + 1023) as u64) << 52)) as f32
}

/// x^α for x in [0, 1] through [`fast_log2`] and [`fast_exp2`] (0 for x ≤ 0).
#[inline]
pub fn fast_pow(x: f32, alpha: f32) -> f32 {
    if x <= 0.0 {
        0.0
    } else {
        fast_exp2(alpha * fast_log2(x))
    }
}

#[cfg(test)]
mod fast_math_tests {
    use super::*;

    #[test]
    fn fast_pow_matches_powf() {
        let mut worst = 0.0f64;
        for i in 1..20_000 {
            let x = (i as f32 / 20_000.0).powi(7);
            for alpha in [0.05f32, 0.1, 0.3, 0.5, 1.0, 1.5, 2.0] {
                let a = f64::from(fast_pow(x, alpha));
                let b = f64::from(x.powf(alpha));
                if b > 1e-30 {
                    worst = worst.max((a - b).abs() / b);
                }
            }
        }
        assert!(worst < 1e-5, "{worst}");
    }
}
