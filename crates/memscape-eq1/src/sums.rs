//! Eq. 1's per-pixel sums and their resolve into colours.
//!
//! For a pixel covered by blocks with coverage fractions fᵢ, weights wᵢ = fᵢ^α, colours cᵢ (or
//! attributes aᵢ) and cushion luminances Lᵢ, the sums are `acc = (Σ wᵢLᵢcᵢ, Σ wᵢ)` (categorical)
//! or `acc = (Σ wᵢaᵢ, Σ wᵢLᵢ, 0, Σ wᵢ)` (quantitative) and `cov = Σ fᵢ`; what the renderer's
//! accumulation targets hold, resolved the same way.

use crate::{ColorMode, FULL_COVERAGE_EPSILON, blue_red, fast_pow};

/// Linear values at which the rounded 8-bit sRGB code steps up: code k for values in
/// `[THRESHOLDS[k-1], THRESHOLDS[k])`.
static THRESHOLDS: std::sync::LazyLock<[f32; 255]> = std::sync::LazyLock::new(|| {
    std::array::from_fn(|k| crate::srgb_to_linear((k as f32 + 0.5) / 255.0))
});

/// `round(linear_to_srgb(c) · 255)` by a binary search of the code thresholds.
#[inline]
pub fn srgb8(c: f32) -> u8 {
    let t = &*THRESHOLDS;
    t.partition_point(|&x| x <= c) as u8
}

/// [`crate::linear_to_srgb`] through [`fast_pow`].
#[inline]
pub fn fast_linear_to_srgb(c: f32) -> f32 {
    let x = c.clamp(0.0, 1.0);
    if x <= 0.003_130_8 {
        x * 12.92
    } else {
        1.055 * fast_pow(x, 1.0 / 2.4) - 0.055
    }
}
use crate::view::MapView;

/// The sums of every pixel of a view, row-major, row 0 at the top.
#[derive(Debug, Clone, PartialEq)]
pub struct PixelSums {
    pub width: u32,
    pub height: u32,
    pub acc: Vec<[f32; 4]>,
    pub cov: Vec<f32>,
}

impl PixelSums {
    pub fn new(width: u32, height: u32) -> Self {
        let (acc, cov) = zeroed(width, height);
        Self {
            width,
            height,
            acc,
            cov,
        }
    }

    /// The largest difference from `reference` (same size) over every sum of every pixel,
    /// relative to the larger of 1 and the reference's value: how tests and examples compare
    /// sums computed two ways.
    pub fn largest_relative_difference(&self, reference: &PixelSums) -> f32 {
        let rel = |x: f32, y: f32| (x - y).abs() / y.abs().max(1.0);
        let acc = self
            .acc
            .iter()
            .zip(&reference.acc)
            .flat_map(|(x, y)| (0..4).map(move |k| rel(x[k], y[k])));
        let cov = self
            .cov
            .iter()
            .zip(&reference.cov)
            .map(|(&x, &y)| rel(x, y));
        acc.chain(cov).fold(0.0, f32::max)
    }

    /// Adds `other` (same size) pixel by pixel.
    pub fn add(&mut self, other: &PixelSums) {
        add_sums((&mut self.acc, &mut self.cov), (&other.acc, &other.cov));
    }

    /// These sums (of `from`'s pixels) stretched and offset to `to`: every pixel of `to` takes
    /// the sums of the pixel of `from` under its centre (none outside `from`), the way a map
    /// viewer shows its last picture while the new one is computed.
    pub fn stretched(&self, from: &MapView, to: &MapView) -> PixelSums {
        let mut out = PixelSums::new(to.width, to.height);
        let [fw, fh] = from.pixel_size();
        let (ft, fa) = from.window();
        let (w, h) = (self.width as usize, self.height as usize);
        let along = |n: u32, at: &dyn Fn(f64) -> f64, limit: usize| -> Vec<Option<usize>> {
            (0..n)
                .map(|i| {
                    let u = at(f64::from(i) + 0.5);
                    (u >= 0.0 && (u as usize) < limit).then_some(u as usize)
                })
                .collect()
        };
        let xs = along(
            to.width,
            &|x| (to.plane_at(x, 0.0)[0] - ft[0]) / fw,
            w.min(from.width as usize),
        );
        let ys = along(
            to.height,
            &|y| (fa[1] - to.plane_at(0.0, y)[1]) / fh,
            h.min(from.height as usize),
        );
        for (y, sy) in ys.iter().enumerate() {
            let Some(sy) = sy else { continue };
            for (x, sx) in xs.iter().enumerate() {
                let Some(sx) = sx else { continue };
                let (i, j) = (y * to.width as usize + x, sy * w + sx);
                if let (Some(a), Some(c)) = (self.acc.get(j), self.cov.get(j)) {
                    out.acc[i] = *a;
                    out.cov[i] = *c;
                }
            }
        }
        out
    }

    /// Eq. 1 for every pixel, sRGB bytes (RGBA, alpha 255), as the renderer's resolve pass.
    pub fn resolve(&self, view: &MapView) -> Vec<[u8; 4]> {
        self.acc
            .iter()
            .zip(&self.cov)
            .map(|(acc, &cov)| {
                let c = resolve_pixel(view, *acc, cov);
                [srgb8(c[0]), srgb8(c[1]), srgb8(c[2]), 255]
            })
            .collect()
    }
}

/// Eq. 1 for one pixel from its sums (linear RGB): [`resolve_sums`] with the view's α, colour
/// mode and background.
#[inline]
pub fn resolve_pixel(view: &MapView, acc: [f32; 4], coverage: f32) -> [f32; 3] {
    resolve_sums(
        view.alpha,
        view.color_mode,
        view.background_linear,
        acc,
        coverage,
    )
}

/// Eq. 1 for one pixel from its sums, `acc` = (Σw·L·c or (Σw·a, Σw·L, 0), F = Σw) and
/// `coverage` = Σf, with the background `bg` (linear RGB) weighing (1 − Σf)^α: what the
/// renderer's resolve pass computes (`shaders/alloc_map_resolve.wgsl`).
pub fn resolve_sums(
    alpha: f32,
    color_mode: ColorMode,
    bg: [f32; 3],
    acc: [f32; 4],
    coverage: f32,
) -> [f32; 3] {
    let uncovered = if coverage >= 1.0 - FULL_COVERAGE_EPSILON {
        0.0
    } else {
        1.0 - coverage
    };
    let f_sum = acc[3];
    let b = fast_pow(uncovered.max(0.0), alpha);
    if f_sum + b <= 0.0 {
        return bg;
    }
    let c = match color_mode {
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

/// Zeroed sums of `width × height` pixels (any order): Σ fᵢ^α (cᵢ, 1) and Σ fᵢ.
pub(crate) fn zeroed(width: u32, height: u32) -> (Vec<[f32; 4]>, Vec<f32>) {
    let n = width as usize * height as usize;
    (vec![[0.0; 4]; n], vec![0.0; n])
}

/// Adds the sums `from` to `to`, element by element (both in the same order and size).
pub(crate) fn add_sums(to: (&mut [[f32; 4]], &mut [f32]), from: (&[[f32; 4]], &[f32])) {
    for (a, b) in to.0.iter_mut().zip(from.0) {
        for k in 0..4 {
            a[k] += b[k];
        }
    }
    for (a, b) in to.1.iter_mut().zip(from.1) {
        *a += b;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stretched_sums_follow_a_pan_and_a_zoom() {
        let from = MapView::fit(0, 100, 0, 50, 10, 5);
        let mut s = PixelSums::new(10, 5);
        for (i, a) in s.acc.iter_mut().enumerate() {
            *a = [i as f32, 0.0, 0.0, 1.0];
        }
        assert_eq!(s.stretched(&from, &from), s);
        // Panned right by 3 columns (30 time units): column x shows the old column x + 3,
        // the last 3 columns nothing.
        let pan = MapView::fit(30, 130, 0, 50, 10, 5);
        let p = s.stretched(&from, &pan);
        for y in 0..5 {
            for x in 0..10 {
                let got = p.acc[y * 10 + x][0];
                let want = if x + 3 < 10 {
                    (y * 10 + x + 3) as f32
                } else {
                    0.0
                };
                assert_eq!(got, want, "({x}, {y})");
            }
        }
        // Zoomed in 2× on the top left quarter: each old pixel covers 2×2 new ones (row 0 is
        // the top: the high addresses).
        let zoom = MapView::fit(0, 50, 25, 50, 10, 5);
        let z = s.stretched(&from, &zoom);
        assert_eq!(z.acc[0][0], 0.0);
        assert_eq!(z.acc[1][0], 0.0);
        assert_eq!(z.acc[2][0], 1.0);
        assert_eq!(z.acc[4 * 10 + 9][0], (2 * 10 + 4) as f32);
    }

    #[test]
    fn srgb8_rounds_like_the_formula() {
        let mut off = 0;
        for i in 0..=100_000 {
            let v = i as f32 / 100_000.0;
            let want = (crate::linear_to_srgb(v) * 255.0).round() as u8;
            let got = srgb8(v);
            assert!(got.abs_diff(want) <= 1, "{v}: {got} vs {want}");
            off += usize::from(got != want);
        }
        assert!(off < 50, "{off} values one level off");
        assert_eq!(srgb8(-1.0), 0);
        assert_eq!(srgb8(2.0), 255);
    }
}
