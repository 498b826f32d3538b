//! Prototype of the level of detail (in memory): a mip-map of cells over the plane, each with a
//! histogram of its small blocks' areas, resolved for any view and α.

use std::collections::HashMap;

use crate::eq1::ColorMode;
use crate::exact;
use crate::sums::PixelSums;
use crate::view::{LodBlock, LodView};

pub const BUCKETS: usize = 64;

#[derive(Debug, Clone, Default)]
pub struct Bucket {
    pub n: f64,
    pub a: f64,
    pub a2: f64,
    pub c: [f64; 3],
    pub attr: f64,
}

#[derive(Debug, Clone, Default)]
pub struct Cell {
    pub n: f64,
    pub sx: f64,
    pub sxx: f64,
    pub sy: f64,
    pub syy: f64,
    pub sw: f64,
    pub sh: f64,
    pub buckets: HashMap<i32, Bucket>,
    pub min_x: f64,
    pub max_x: f64,
    pub min_y: f64,
    pub max_y: f64,
    /// Blocks per sub-cell (SUB × SUB, row-major from the low time / low address corner).
    pub sub: Vec<u32>,
}

pub fn sub_n() -> usize {
    std::env::var("SUB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

pub struct Mip {
    pub log_t: u32,
    pub log_y: u32,
    pub levels: Vec<HashMap<(u64, u64), Cell>>,
    pub blocks: Vec<LodBlock>,
}

impl Mip {
    pub fn cell_size(&self, k: usize) -> (f64, f64) {
        (
            2f64.powi(self.log_t as i32 - k as i32),
            2f64.powi(self.log_y as i32 - k as i32),
        )
    }

    pub fn build(blocks: Vec<LodBlock>, extent_t: u64, extent_y: u64, levels: usize) -> Self {
        let log_t = 64 - (extent_t.max(2) - 1).leading_zeros();
        let log_y = 64 - (extent_y.max(2) - 1).leading_zeros();
        let mut mip = Self {
            log_t,
            log_y,
            levels: vec![HashMap::new(); levels],
            blocks: Vec::new(),
        };
        for b in &blocks {
            let w = b.width() as f64;
            let h = b.size as f64;
            let cx = b.t0 as f64 + w / 2.0;
            let cy = b.y as f64 + h / 2.0;
            let color = crate::eq1::unpack_linear(b.color);
            for k in 0..levels {
                let (tau, sig) = mip.cell_size(k);
                if w >= tau || h >= sig {
                    continue;
                }
                let kx = (cx / tau).floor();
                let ky = (cy / sig).floor();
                let ux = cx / tau - kx;
                let uy = cy / sig - ky;
                let cell = mip.levels[k].entry((kx as u64, ky as u64)).or_default();
                let sn = sub_n();
                if sn > 0 {
                    if cell.sub.is_empty() {
                        cell.sub = vec![0; sn * sn];
                    }
                    let si = ((ux * sn as f64) as usize).min(sn - 1);
                    let sj = ((uy * sn as f64) as usize).min(sn - 1);
                    cell.sub[sj * sn + si] += 1;
                }
                if cell.n == 0.0 {
                    cell.min_x = ux;
                    cell.max_x = ux;
                    cell.min_y = uy;
                    cell.max_y = uy;
                }
                cell.min_x = cell.min_x.min(ux);
                cell.max_x = cell.max_x.max(ux);
                cell.min_y = cell.min_y.min(uy);
                cell.max_y = cell.max_y.max(uy);
                cell.n += 1.0;
                cell.sx += ux;
                cell.sxx += ux * ux;
                cell.sy += uy;
                cell.syy += uy * uy;
                cell.sw += w / tau;
                cell.sh += h / sig;
                let a = (w / tau) * (h / sig);
                let bi = a.log2().floor().max(-200.0) as i32;
                let bk = cell.buckets.entry(bi).or_default();
                bk.n += 1.0;
                bk.a += a;
                bk.a2 += a * a;
                for q in 0..3 {
                    bk.c[q] += f64::from(color[q]);
                }
                bk.attr += f64::from(b.attr);
            }
        }
        mip.blocks = blocks;
        mip
    }

    /// The level whose cells are at most a pixel in both directions (coarsest such).
    pub fn level_for(&self, view: &LodView) -> Option<usize> {
        let [pw, ph] = view.pixel_size();
        let kt = (f64::from(self.log_t) - pw.log2()).ceil().max(0.0) as usize;
        let ky = (f64::from(self.log_y) - ph.log2()).ceil().max(0.0) as usize;
        let k = kt.max(ky);
        (k < self.levels.len()).then_some(k)
    }

    pub fn render(&self, view: &LodView) -> (Vec<[u8; 4]>, usize, usize) {
        let mut sums = PixelSums::new(view.width, view.height);
        let (cells, exact_n) = self.accumulate(view, &mut sums);
        (sums.resolve(view), cells, exact_n)
    }

    pub fn accumulate(&self, view: &LodView, sums: &mut PixelSums) -> (usize, usize) {
        let Some(k) = self.level_for(view) else {
            let (wt, wa) = view.window();
            let vis: Vec<LodBlock> = self
                .blocks
                .iter()
                .filter(|b| {
                    (b.t1 as f64) > wt[0]
                        && (b.t0 as f64) < wt[1]
                        && ((b.y + b.size) as f64) > wa[0]
                        && (b.y as f64) < wa[1]
                })
                .copied()
                .collect();
            exact::accumulate(view, &vis, sums);
            return (0, vis.len());
        };
        let (tau, sig) = self.cell_size(k);
        let (wt, wa) = view.window();
        let large: Vec<LodBlock> = self
            .blocks
            .iter()
            .filter(|b| {
                ((b.width() as f64) >= tau || (b.size as f64) >= sig)
                    && (b.t1 as f64) > wt[0]
                    && (b.t0 as f64) < wt[1]
                    && ((b.y + b.size) as f64) > wa[0]
                    && (b.y as f64) < wa[1]
            })
            .copied()
            .collect();
        exact::accumulate(view, &large, sums);
        let [pw, ph] = view.pixel_size();
        let rx = tau / pw;
        let ry = sig / ph;
        let alpha = f64::from(view.alpha);
        let (w, h) = (view.width as i64, view.height as i64);
        let t_origin = view.time_origin as f64 + f64::from(view.time_origin_frac);
        let a_origin = view.addr_origin as f64 + f64::from(view.addr_origin_frac);
        let mut used = 0;
        let mut xs = Vec::new();
        let mut ys = Vec::new();
        for (&(kx, ky), cell) in &self.levels[k] {
            let cx0 = (kx as f64 * tau - t_origin) / pw;
            let cy_top = f64::from(view.height) - ((ky as f64 + 1.0) * sig - a_origin) / ph;
            if cx0 > w as f64 + 2.0
                || cx0 + rx < -2.0
                || cy_top > h as f64 + 2.0
                || cy_top + ry < -2.0
            {
                continue;
            }
            used += 1;
            let n = cell.n;
            let mx = cell.sx / n;
            let sx = (cell.sxx / n - mx * mx).max(0.0).sqrt() * 3f64.sqrt();
            let my = cell.sy / n;
            let sy = (cell.syy / n - my * my).max(0.0).sqrt() * 3f64.sqrt();
            let bw = cell.sw / n * rx;
            let bh = cell.sh / n * ry;
            let model = std::env::var("MODEL").unwrap_or_default();
            let (x_lo, x_hi, y_lo, y_hi) = match model.as_str() {
                "bbox" => (cell.min_x, cell.max_x, cell.min_y, cell.max_y),
                "both" => (
                    (mx - sx).max(cell.min_x),
                    (mx + sx).min(cell.max_x),
                    (my - sy).max(cell.min_y),
                    (my + sy).min(cell.max_y),
                ),
                _ => (
                    (mx - sx).max(0.0),
                    (mx + sx).min(1.0),
                    (my - sy).max(0.0),
                    (my + sy).min(1.0),
                ),
            };
            // x in pixel units
            let lo_x = cx0 + x_lo * rx;
            let hi_x = cx0 + x_hi * rx;
            // y: cell bottom at cy_top + ry, up is -y; uy measured from the bottom (low address)
            let lo_y = cy_top + ry - y_hi * ry;
            let hi_y = cy_top + ry - y_lo * ry;
            let mut boxes: Vec<(f64, f64, f64, f64, f64)> = Vec::new();
            let sn = sub_n();
            if sn > 0 {
                for sj in 0..sn {
                    for si in 0..sn {
                        let c = cell.sub[sj * sn + si];
                        if c == 0 {
                            continue;
                        }
                        let f = sn as f64;
                        boxes.push((
                            cx0 + si as f64 / f * rx,
                            cx0 + (si + 1) as f64 / f * rx,
                            cy_top + ry - (sj + 1) as f64 / f * ry,
                            cy_top + ry - sj as f64 / f * ry,
                            f64::from(c) / n,
                        ));
                    }
                }
            } else {
                boxes.push((lo_x, hi_x, lo_y, hi_y, 1.0));
            }
            let mut f_sum = 0.0;
            let mut c_sum = [0.0f64; 3];
            let mut t_sum = 0.0;
            let mut s_sum = 0.0;
            for bk in cell.buckets.values() {
                let mean = bk.a / bk.n;
                let cv2 = (bk.n * bk.a2 / (bk.a * bk.a) - 1.0).max(0.0);
                let j = 1.0 + alpha * (alpha - 1.0) / 2.0 * cv2;
                let wgt = (mean * rx * ry).powf(alpha) * j;
                f_sum += bk.n * wgt;
                for q in 0..3 {
                    c_sum[q] += bk.c[q] * wgt;
                }
                t_sum += bk.attr * wgt;
                s_sum += bk.a * rx * ry;
            }
            for &(bx0, bx1, by0, by1, bw8) in &boxes {
                axis_weights(bx0, bx1, bw, alpha, w, &mut xs);
                axis_weights(by0, by1, bh, alpha, h, &mut ys);
                for &(px, ex, gx) in &xs {
                    for &(py, ey, gy) in &ys {
                        let (gx, ex) = (gx * bw8, ex * bw8);
                        let i = (py * w + px) as usize;
                        let g = gx * gy;
                        let a = &mut sums.acc[i];
                        match view.color_mode {
                            ColorMode::Categorical => {
                                for q in 0..3 {
                                    a[q] += (c_sum[q] * g) as f32;
                                }
                            }
                            ColorMode::Quantitative => {
                                a[0] += (t_sum * g) as f32;
                                a[1] += (f_sum * g) as f32;
                            }
                        }
                        a[3] += (f_sum * g) as f32;
                        sums.cov[i] += (s_sum * ex * ey) as f32;
                    }
                }
            }
        }
        (used, large.len())
    }
}

/// For block centres uniform on [lo, hi] (pixel units) and blocks `bw` pixels long: for each
/// pixel p in [0, n) reached, (p, E[o], E[o^α]) with o the fraction of a block inside p.
pub fn axis_weights(lo: f64, hi: f64, bw: f64, alpha: f64, n: i64, out: &mut Vec<(i64, f64, f64)>) {
    out.clear();
    let bw = bw.clamp(0.0, 1.0);
    let first = (lo - bw / 2.0).floor() as i64;
    let last = (hi + bw / 2.0).ceil() as i64;
    for p in first.max(0)..last.min(n) {
        let (e1, ea) = expected_overlap(lo, hi, bw, p as f64, alpha);
        if e1 > 0.0 {
            out.push((p, e1, ea));
        }
    }
}

/// E[o] and E[o^α] for x uniform on [lo, hi], o(x) = |[x−w/2, x+w/2] ∩ [p, p+1]| / w.
pub fn expected_overlap(lo: f64, hi: f64, w: f64, p: f64, alpha: f64) -> (f64, f64) {
    let o_at = |x: f64| -> f64 {
        if w <= 1e-12 {
            return if x >= p && x < p + 1.0 { 1.0 } else { 0.0 };
        }
        let l = (x + w / 2.0).min(p + 1.0) - (x - w / 2.0).max(p);
        (l / w).clamp(0.0, 1.0)
    };
    if hi - lo < 1e-9 {
        let o = o_at(lo);
        return (o, o.powf(alpha));
    }
    // Integrate piecewise: breakpoints where o changes form.
    let mut pts = vec![
        lo,
        hi,
        p - w / 2.0,
        p + w / 2.0,
        p + 1.0 - w / 2.0,
        p + 1.0 + w / 2.0,
    ];
    pts.retain(|&x| x >= lo && x <= hi);
    pts.sort_by(f64::total_cmp);
    let (mut i1, mut ia) = (0.0, 0.0);
    for s in pts.windows(2) {
        let (a, b) = (s[0], s[1]);
        if b - a <= 0.0 {
            continue;
        }
        let (oa, ob) = (o_at(a), o_at(b));
        // o is linear on [a, b].
        i1 += (oa + ob) / 2.0 * (b - a);
        if (ob - oa).abs() < 1e-12 {
            ia += oa.powf(alpha) * (b - a);
        } else {
            let k = (ob - oa) / (b - a);
            ia += (ob.powf(alpha + 1.0) - oa.powf(alpha + 1.0)) / ((alpha + 1.0) * k);
        }
    }
    let len = hi - lo;
    (i1 / len, ia / len)
}
