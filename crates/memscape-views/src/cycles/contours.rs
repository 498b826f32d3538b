//! The circular view's isocontour summary: the density of the drawn points (a Gaussian kernel
//! density on a grid) contoured at a few levels with marching squares, so that where records
//! crowd on the circle reads at a glance even when points overdraw each other. Also the lasso's
//! point-in-polygon test.

use memscape_render::shapes::{Geometry, Shape};

/// Grid cell in points, and the kernel's standard deviation in cells.
const CELL: f32 = 4.0;
const SIGMA_CELLS: f32 = 2.5;

/// Density of `points` (pane points) over `size`, on a grid of `CELL`-sized cells, normalized so
/// that the maximum is 1. Returns (columns, rows, values row-major).
pub fn density(points: &[[f32; 2]], size: [f32; 2]) -> (usize, usize, Vec<f32>) {
    let cols = ((size[0] / CELL).ceil() as usize).clamp(2, 1024);
    let rows = ((size[1] / CELL).ceil() as usize).clamp(2, 1024);
    let mut grid = vec![0f32; cols * rows];
    for p in points {
        let (x, y) = ((p[0] / CELL) as isize, (p[1] / CELL) as isize);
        if x >= 0 && y >= 0 && (x as usize) < cols && (y as usize) < rows {
            grid[y as usize * cols + x as usize] += 1.0;
        }
    }
    // Separable Gaussian blur: rows, then columns.
    let radius = (3.0 * SIGMA_CELLS).ceil() as isize;
    let kernel: Vec<f32> = (-radius..=radius)
        .map(|d| (-(d as f32).powi(2) / (2.0 * SIGMA_CELLS * SIGMA_CELLS)).exp())
        .collect();
    let blur = |src: &[f32], stride_a: usize, stride_b: usize, len_a: usize, len_b: usize| {
        let mut out = vec![0f32; src.len()];
        for b in 0..len_b {
            for a in 0..len_a {
                let mut acc = 0.0;
                for (k, w) in kernel.iter().enumerate() {
                    let j = a as isize + k as isize - radius;
                    if j >= 0 && (j as usize) < len_a {
                        acc += w * src[b * stride_b + j as usize * stride_a];
                    }
                }
                out[b * stride_b + a * stride_a] = acc;
            }
        }
        out
    };
    let grid = blur(&grid, 1, cols, cols, rows);
    let mut grid = blur(&grid, cols, 1, rows, cols);
    let max = grid.iter().copied().fold(0.0f32, f32::max);
    if max > 0.0 {
        grid.iter_mut().for_each(|v| *v /= max);
    }
    (cols, rows, grid)
}

/// Line segments (pane points) of the isoline at `level` through a grid of values sampled at
/// cell centres: marching squares with linear interpolation along cell edges; saddles are
/// resolved by the cell's mean.
pub fn isoline(cols: usize, rows: usize, values: &[f32], level: f32) -> Vec<[[f32; 2]; 2]> {
    let mut out = Vec::new();
    if values.len() < cols * rows {
        return out;
    }
    let at = |x: usize, y: usize| values[y * cols + x];
    let pos = |x: f32, y: f32| [(x + 0.5) * CELL, (y + 0.5) * CELL];
    for y in 0..rows.saturating_sub(1) {
        for x in 0..cols.saturating_sub(1) {
            // Corners: 0 top-left, 1 top-right, 2 bottom-right, 3 bottom-left.
            let v = [at(x, y), at(x + 1, y), at(x + 1, y + 1), at(x, y + 1)];
            let case = v
                .iter()
                .enumerate()
                .fold(0u8, |c, (i, &val)| c | (u8::from(val >= level) << i));
            if case == 0 || case == 15 {
                continue;
            }
            // Crossing on edge e (between corners e and e+1).
            let cross = |e: usize| {
                let (a, b) = (e, (e + 1) % 4);
                let t = ((level - v[a]) / (v[b] - v[a])).clamp(0.0, 1.0);
                let corner = |i: usize| match i {
                    0 => (x as f32, y as f32),
                    1 => (x as f32 + 1.0, y as f32),
                    2 => (x as f32 + 1.0, y as f32 + 1.0),
                    _ => (x as f32, y as f32 + 1.0),
                };
                let (pa, pb) = (corner(a), corner(b));
                pos(pa.0 + (pb.0 - pa.0) * t, pa.1 + (pb.1 - pa.1) * t)
            };
            let mean = v.iter().sum::<f32>() / 4.0;
            let pairs: &[(usize, usize)] = match case {
                1 | 14 => &[(3, 0)],
                2 | 13 => &[(0, 1)],
                3 | 12 => &[(3, 1)],
                4 | 11 => &[(1, 2)],
                6 | 9 => &[(0, 2)],
                7 | 8 => &[(2, 3)],
                5 if mean >= level => &[(3, 0), (1, 2)],
                5 => &[(0, 1), (2, 3)],
                10 if mean >= level => &[(0, 1), (2, 3)],
                _ => &[(3, 0), (1, 2)],
            };
            for &(e0, e1) in pairs {
                out.push([cross(e0), cross(e1)]);
            }
        }
    }
    out
}

/// The isocontour summary of `points` over `size` at 20 %, 45 % and 70 % of the peak density,
/// as line shapes (brighter for denser levels).
pub fn contour_shapes(points: &[[f32; 2]], size: [f32; 2]) -> Vec<Shape> {
    let (cols, rows, values) = density(points, size);
    let mut out = Vec::new();
    for (level, alpha) in [(0.2f32, 120u8), (0.45, 170), (0.7, 230)] {
        for [a, b] in isoline(cols, rows, &values, level) {
            out.push(Shape::new(
                Geometry::Segment {
                    a,
                    b,
                    width_px: 1.4,
                },
                [245, 245, 250, alpha],
            ));
        }
    }
    out
}

/// Whether `p` lies inside the closed polygon `poly` (even-odd rule).
pub fn inside(poly: &[[f32; 2]], p: [f32; 2]) -> bool {
    let mut inside = false;
    let n = poly.len();
    for i in 0..n {
        let (a, b) = (poly[i], poly[(i + n - 1) % n]);
        if (a[1] > p[1]) != (b[1] > p[1])
            && p[0] < (b[0] - a[0]) * (p[1] - a[1]) / (b[1] - a[1]) + a[0]
        {
            inside = !inside;
        }
    }
    inside
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blob_contours_as_a_closed_ring_around_it() {
        // A dense blob at (100, 80) and sparse noise elsewhere.
        let mut pts: Vec<[f32; 2]> = (0..400)
            .map(|i| {
                let a = i as f32 * 0.7;
                let r = (i % 10) as f32;
                [100.0 + a.cos() * r, 80.0 + a.sin() * r]
            })
            .collect();
        pts.extend((0..20).map(|i| [10.0 + i as f32 * 9.0, 150.0]));
        let (cols, rows, values) = density(&pts, [200.0, 160.0]);
        let max = values.iter().copied().fold(0.0f32, f32::max);
        assert!((max - 1.0).abs() < 1e-6);
        let segments = isoline(cols, rows, &values, 0.5);
        assert!(segments.len() >= 8, "{}", segments.len());
        // Every segment of the 50 % line lies around the blob, within a few cells.
        for [a, b] in &segments {
            for p in [a, b] {
                let d = ((p[0] - 100.0).powi(2) + (p[1] - 80.0).powi(2)).sqrt();
                assert!(d > 4.0 && d < 40.0, "{p:?} at {d}");
            }
        }
        // The line closes: every endpoint is shared by exactly two segments.
        let key = |p: &[f32; 2]| ((p[0] * 100.0).round() as i64, (p[1] * 100.0).round() as i64);
        let mut count = std::collections::HashMap::new();
        for [a, b] in &segments {
            *count.entry(key(a)).or_insert(0) += 1;
            *count.entry(key(b)).or_insert(0) += 1;
        }
        assert!(count.values().all(|&c| c == 2), "an open contour");
        // Above the peak nothing; no points nothing.
        assert!(isoline(cols, rows, &values, 1.1).is_empty());
        let (c, r, empty) = density(&[], [50.0, 50.0]);
        assert!(isoline(c, r, &empty, 0.5).is_empty());
    }

    #[test]
    fn point_in_polygon_even_odd() {
        let square = [[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]];
        assert!(inside(&square, [5.0, 5.0]));
        assert!(!inside(&square, [15.0, 5.0]));
        assert!(!inside(&square, [5.0, -1.0]));
        // A concave "C": the notch is outside.
        let c = [
            [0.0, 0.0],
            [10.0, 0.0],
            [10.0, 3.0],
            [3.0, 3.0],
            [3.0, 7.0],
            [10.0, 7.0],
            [10.0, 10.0],
            [0.0, 10.0],
        ];
        assert!(inside(&c, [1.5, 5.0]));
        assert!(!inside(&c, [6.0, 5.0]));
        assert!(!inside(&[[0.0, 0.0], [1.0, 1.0]], [0.5, 0.5]));
    }
}
