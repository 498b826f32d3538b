//! How a level's cell spreads its blocks along one axis: the share of their Eq. 1 weight each
//! pixel row or column receives, from the cell's bounding box, its centre profile (and the
//! quarters of its fullest slices) and the blocks' mean extent.

use super::ffloor;
use crate::format::{PROFILE_BINS, SPOT_QUARTERS, SpotSlice};

/// A cell along one axis: pixel coordinate of cell position `u` is `origin + u · scale`.
pub struct AxisCell<'a> {
    pub origin: f64,
    pub scale: f64,
    /// The blocks' extents' bounding box (low, high), cell units ([`crate::format::CellRec::bbox_at`]).
    pub bbox: [f64; 2],
    pub profile: &'a [u8; PROFILE_BINS],
    /// Mean block extent along the axis, in pixels.
    pub extent: f64,
    /// Slices whose quarters' shares of their centres are known, with them
    /// (`CellRec::spots_y`): their centres are spread over each quarter (the fullest one's
    /// over its two lines, `CellRec::spot_lines`) by its share rather than over the slice
    /// ([`SpotSlice::NONE`]: none).
    pub spots: [SpotSlice; 2],
    /// Whether the quarters of a spot slice whose blocks reach more than one pixel are left
    /// out of the sums and given apart, each with its own pixels (`CellRec::spot_x` tells
    /// along the other axis where each quarter's blocks lie).
    pub split_spots: bool,
}

/// A quarter of a spot slice left out of [`profile_weights`]' sums (`AxisCell::split_spots`):
/// which (`SPOT_QUARTERS · k + i` for quarter `i` of `spots[k]`), and a pixel its blocks reach
/// with E[o] and E[o^α] there, the quarter's share of the cell's blocks applied. A quarter's
/// pixels come one after another.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SplitPart {
    pub part: usize,
    pub pixel: i64,
    pub e1: f64,
    pub ea: f64,
}

/// For a cell's blocks along one axis (centres spread over the occupied profile slices,
/// extents inside the bounding box): every pixel `p` in `[0, n)` they may reach, with E[o] and
/// E[o^α], o the fraction of a block inside `p`, summed over the slices by their weights.
pub fn profile_weights(c: &AxisCell<'_>, alpha: f64, n: i64, out: &mut Vec<(i64, f64, f64)>) {
    profile_weights_split(c, alpha, n, out, &mut Vec::new());
}

/// [`profile_weights`], the quarters of the spot slices that reach more than one pixel given
/// in `split` rather than summed into `out` where `c.split_spots`.
pub fn profile_weights_split(
    c: &AxisCell<'_>,
    alpha: f64,
    n: i64,
    out: &mut Vec<(i64, f64, f64)>,
    split: &mut Vec<SplitPart>,
) {
    out.clear();
    split.clear();
    let to_px = |u: f64| c.origin + u * c.scale;
    let (b0, b1) = (to_px(c.bbox[0]), to_px(c.bbox[1]));
    let (blo, bhi) = (b0.min(b1), b0.max(b1));
    // Every block inside one pixel: all of them there, whole.
    let p0 = ffloor(blo);
    if bhi <= p0 + 1.0 {
        if p0 >= 0.0 && (p0 as i64) < n {
            out.push((p0 as i64, 1.0, 1.0));
        }
        return;
    }
    let total: f64 = c.profile.iter().map(|&v| f64::from(v)).sum();
    if total <= 0.0 {
        return;
    }
    let e = c.extent.clamp(0.0, 1.0);
    // Centres keep the extents inside the box.
    let (clo, chi) = if bhi - blo <= c.extent {
        let m = (blo + bhi) / 2.0;
        (m, m)
    } else {
        (blo + c.extent / 2.0, bhi - c.extent / 2.0)
    };
    // The box spans at most a few pixels: sums by pixel from p0.
    let mut acc = [(0.0f64, 0.0f64); 8];
    for (j, &v) in c.profile.iter().enumerate() {
        if v == 0 {
            continue;
        }
        let slice_q = f64::from(v) / total;
        // The slice whole, or its quarters (the fullest as its two lines) by their shares:
        // (quarter, share, range).
        let mut parts = [(0usize, 0.0f64, 0.0f64, 0.0f64); SPOT_QUARTERS + 1];
        let spot = c.spots.iter().position(|s| s.slice == j);
        // A spot slice whose blocks reach more than one pixel: its quarters apart.
        let split_k = spot.filter(|_| {
            c.split_spots && {
                let (a0, a1) = (
                    to_px(j as f64 / PROFILE_BINS as f64),
                    to_px((j + 1) as f64 / PROFILE_BINS as f64),
                );
                let (lo, hi) = (a0.min(a1).max(clo), a0.max(a1).min(chi));
                lo <= hi && hi + e / 2.0 > ffloor(lo - e / 2.0) + 1.0
            }
        });
        let parts = match spot.map(|k| c.spots[k]) {
            Some(spot) => {
                for (part, p) in parts.iter_mut().zip(spot.parts()) {
                    *part = (p.quarter, slice_q * p.share, p.range[0], p.range[1]);
                }
                &parts[..spot.parts().len()]
            }
            None => {
                parts[0] = (
                    0,
                    slice_q,
                    j as f64 / PROFILE_BINS as f64,
                    (j + 1) as f64 / PROFILE_BINS as f64,
                );
                &parts[..1]
            }
        };
        for &(i, q, s0, s1) in parts {
            if q <= 0.0 {
                continue;
            }
            let (a0, a1) = (to_px(s0), to_px(s1));
            let (mut lo, mut hi) = (a0.min(a1).max(clo), a0.max(a1).min(chi));
            if lo > hi {
                // The slice lies outside the centres' range (rounding): its nearest point.
                let m = if a0.min(a1) > chi { chi } else { clo };
                lo = m;
                hi = m;
            }
            let p = ffloor(lo - e / 2.0);
            if let Some(k) = split_k {
                let part = SPOT_QUARTERS * k + i;
                if hi + e / 2.0 <= p + 1.0 {
                    if p >= 0.0 && (p as i64) < n {
                        split.push(SplitPart {
                            part,
                            pixel: p as i64,
                            e1: q,
                            ea: q,
                        });
                    }
                } else {
                    axis_weights_each(lo, hi, e, alpha, n, |pp, e1, ea| {
                        split.push(SplitPart {
                            part,
                            pixel: pp,
                            e1: q * e1,
                            ea: q * ea,
                        });
                    });
                }
                continue;
            }
            if hi + e / 2.0 <= p + 1.0 {
                // This slice's blocks lie inside one pixel.
                let k = (p - p0) as usize;
                if let Some(slot) = acc.get_mut(k) {
                    slot.0 += q;
                    slot.1 += q;
                }
                continue;
            }
            // Straight into the pixels' sums (a list per slice cost an allocation per cell).
            axis_weights_each(lo, hi, e, alpha, i64::MAX, |pp, e1, ea| {
                let k = (pp as f64 - p0) as usize;
                if let Some(slot) = acc.get_mut(k) {
                    slot.0 += q * e1;
                    slot.1 += q * ea;
                }
            });
        }
    }
    for (k, &(e1, ea)) in acc.iter().enumerate() {
        let p = (p0 as i64).saturating_add(k as i64);
        if e1 > 0.0 && p >= 0 && p < n {
            out.push((p, e1, ea));
        }
    }
}

/// For blocks `bw` pixels long whose centres are uniform on `[lo, hi]` (pixel units): every
/// pixel `p` in `[0, n)` they may reach, with E[o] and E[o^α], o the fraction of a block
/// inside `p`.
pub fn axis_weights(lo: f64, hi: f64, bw: f64, alpha: f64, n: i64, out: &mut Vec<(i64, f64, f64)>) {
    out.clear();
    axis_weights_each(lo, hi, bw, alpha, n, |p, e1, ea| out.push((p, e1, ea)));
}

/// [`axis_weights`], each pixel's `(p, E[o], E[o^α])` given to `f` in the same order.
#[inline]
fn axis_weights_each(
    lo: f64,
    hi: f64,
    bw: f64,
    alpha: f64,
    n: i64,
    mut f: impl FnMut(i64, f64, f64),
) {
    let bw = bw.clamp(0.0, 1.0);
    if bw < 1e-4 {
        // Points (to within 10⁻⁴ px): o is 0 or 1, E[o] = E[o^α] = the share inside.
        let first = ffloor(lo) as i64;
        let last = ffloor(hi) as i64;
        for p in first.max(0)..=last.min(n - 1) {
            let share = if hi - lo < 1e-12 {
                1.0
            } else {
                ((hi.min(p as f64 + 1.0) - lo.max(p as f64)) / (hi - lo)).max(0.0)
            };
            if share > 0.0 {
                f(p, share, share);
            }
        }
        return;
    }
    let first = ffloor(lo - bw / 2.0) as i64;
    let last = (hi + bw / 2.0).ceil() as i64;
    for p in first.max(0)..last.min(n) {
        let (e1, ea) = expected_overlap(lo, hi, bw, p as f64, alpha);
        if e1 > 0.0 {
            f(p, e1, ea);
        }
    }
}

/// E[o] and E[o^α] for x uniform on `[lo, hi]`, o(x) = |[x − w/2, x + w/2] ∩ [p, p + 1]| / w
/// (for w → 0, whether x lies in the pixel); w ≤ 1.
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
        return (o, f64::from(crate::eq1::fast_pow(o as f32, alpha as f32)));
    }
    let mut pts = [
        lo,
        hi,
        p - w / 2.0,
        p + w / 2.0,
        p + 1.0 - w / 2.0,
        p + 1.0 + w / 2.0,
    ];
    pts.sort_by(f64::total_cmp);
    let (mut i1, mut ia) = (0.0, 0.0);
    let mut prev = lo;
    for &x in pts.iter().chain(std::iter::once(&hi)) {
        let x = x.clamp(lo, hi);
        let (a, b) = (prev, x);
        if b <= a {
            continue;
        }
        prev = x;
        // o is linear on [a, b] (no breakpoint inside).
        let (oa, ob) = if w <= 1e-12 {
            let m = o_at((a + b) / 2.0);
            (m, m)
        } else {
            (o_at(a), o_at(b))
        };
        i1 += (oa + ob) / 2.0 * (b - a);
        let pw = |o: f64, e: f64| f64::from(crate::eq1::fast_pow(o as f32, e as f32));
        if (ob - oa).abs() < 1e-9 {
            ia += pw(oa, alpha) * (b - a);
        } else {
            let k = (ob - oa) / (b - a);
            ia += (pw(ob, alpha + 1.0) - pw(oa, alpha + 1.0)) / ((alpha + 1.0) * k);
        }
    }
    let len = hi - lo;
    (i1 / len, ia / len)
}
