//! Eq. 1's exact sums of a view one pixel tall without cushions, one block at a time along x
//! only: what a one-bin occupancy bar is summed as (its rows are alike, so one row is summed
//! and repeated; issue 25). [`crate::accumulate::Accumulator`] gives the same floats for such a
//! view, bit for bit (tested below), but walks its 2-D loop — the rows a block touches, the
//! cushion's light and luminance tables — for each of the bar's millions of intervals; here a
//! block is its columns, its vertical overlap with the one row computed once per distinct
//! (address, size) (a bar's band is the same for all its intervals), the luminance 1.

use crate::accumulate::{BlockSums, ColumnSums, WIDE_BLOCK_COLUMNS};
use crate::view::{MapBlock, MapView, offset_to_f32};
use crate::{
    CLAMP_MARGIN, ColorMode, Cushion, EDGE_SLACK, fast_pow, interval_overlap, unpack_linear,
    vertical_overlap,
};

/// The exact accumulator of a view one pixel tall without cushions (see the module's
/// documentation). The same sums as `Accumulator`, pixel for pixel and bit for bit.
pub struct RowAccumulator<'v> {
    view: &'v MapView,
    sums: ColumnSums,
    /// Per column (and one past the last): the constant parts of (c0, c1, c2, F, S) that wide
    /// blocks add over their interior columns, as `Accumulator`'s difference arrays.
    d0: Vec<[f64; 5]>,
    any_wide: bool,
    /// The last block's (address, size) and what its rows give: `None` when it misses the
    /// row, else the clamped (y_bottom, height), its overlap with the row, and whether a
    /// narrow block of it may touch the row.
    rows: Option<((u64, u64), RowFit)>,
}

/// What a [`RowAccumulator`] has added so far, apart from the view it borrows: kept between
/// uses and resumed on the same view ([`RowAccumulator::resume`]), so that a live occupancy
/// bar's sums go on over its new intervals and equal, bit for bit, one accumulator that added
/// every interval in order.
#[derive(Debug, Clone)]
pub struct RowProgress {
    sums: ColumnSums,
    d0: Vec<[f64; 5]>,
    any_wide: bool,
}

impl RowProgress {
    /// Multiplies what the blocks' attributes added (quantitative mode) by `factor`: the state
    /// of the same blocks with their attributes times `factor`. Exact, bit for bit, when
    /// `factor` is a power of two (each product and partial sum scales without rounding; the
    /// values are far from the subnormal range), which is how a live bar's attributes change
    /// when its reference power of two grows.
    pub fn scale_attributes(&mut self, factor: f32) {
        for a in &mut self.sums.acc {
            a[0] *= factor;
        }
        for d in &mut self.d0 {
            d[0] *= f64::from(factor);
        }
    }
}

/// How a block's vertical extent meets the view's one row.
#[derive(Clone, Copy)]
struct RowFit {
    /// The clamped geometry's y part (y_bottom, height), as `clamp_geometry` gives it.
    y: [f32; 2],
    /// Its overlap with row 0 (`vertical_overlap`).
    fy: f32,
    /// Whether the 2-D loop visits row 0 for a narrow block (`touched_pixels`' rows hold 0).
    narrow_row: bool,
    /// Whether the difference-array loop visits row 0 for a wide block.
    wide_row: bool,
}

impl<'v> RowAccumulator<'v> {
    /// Whether `view` is one this accumulator sums exactly: one pixel tall, no cushions.
    pub fn applies(view: &MapView) -> bool {
        view.height == 1 && view.cushion == Cushion::None
    }

    /// An accumulator of `view`, which must satisfy [`Self::applies`] (else `None`).
    pub fn new(view: &'v MapView) -> Option<Self> {
        Self::applies(view).then(|| Self {
            view,
            sums: ColumnSums::new(view.width, 1),
            d0: Vec::new(),
            any_wide: false,
            rows: None,
        })
    }

    /// An accumulator of `view` holding what `progress` holds (taken from an accumulator of the
    /// same view): adding blocks to it, then finishing, gives the floats an accumulator that
    /// added the earlier blocks and these gives. `None` unless `view` satisfies
    /// [`Self::applies`] and is as wide as `progress`.
    pub fn resume(view: &'v MapView, progress: RowProgress) -> Option<Self> {
        let fits = Self::applies(view)
            && progress.sums.width == view.width
            && progress.sums.height == 1
            && (!progress.any_wide || progress.d0.len() == view.width as usize + 1);
        fits.then_some(Self {
            view,
            sums: progress.sums,
            d0: progress.d0,
            any_wide: progress.any_wide,
            // Only a cache of the last block's rows: its values do not depend on it.
            rows: None,
        })
    }

    /// A copy of what this accumulator has added (for [`Self::resume`]).
    pub fn progress(&self) -> RowProgress {
        RowProgress {
            sums: self.sums.clone(),
            d0: self.d0.clone(),
            any_wide: self.any_wide,
        }
    }

    /// The vertical part of `b`'s geometry against the row, as the 2-D loop computes it.
    fn fit(&mut self, b: &MapBlock) -> RowFit {
        let key = (b.y, b.size);
        if let Some((k, fit)) = self.rows
            && k == key
        {
            return fit;
        }
        let v = self.view;
        let h = v.height as f32;
        // `MapView::block_geometry_px`'s y part and `clamp_geometry`'s, unchanged.
        let a0 = (offset_to_f32(b.y, v.addr_origin) - v.addr_origin_frac) * v.pixels_per_byte;
        let height_px = offset_to_f32(b.size, 0) * v.pixels_per_byte;
        let (mut yb, mut hh) = (h - a0, height_px);
        if yb > h + CLAMP_MARGIN {
            hh -= yb - (h + CLAMP_MARGIN);
            yb = h + CLAMP_MARGIN;
        }
        hh = hh.min(yb - (0.0 - CLAMP_MARGIN));
        let hh = hh.max(0.0);
        let c = [0.0, yb, 0.0, hh];
        let fy = vertical_overlap(c, 0.0);
        // `touched_pixels`' rows [q0, q1) (narrow blocks) and the wide loop's first row.
        let q0 = (yb - hh - EDGE_SLACK).floor();
        let q1 = (yb + EDGE_SLACK).ceil().max(q0 + 1.0);
        let fit = RowFit {
            y: [yb, hh],
            fy,
            narrow_row: q0 <= 0.0 && q1 >= 1.0,
            wide_row: q0 <= 0.0,
        };
        self.rows = Some((key, fit));
        fit
    }

    /// Adds one block.
    pub fn add(&mut self, b: &MapBlock) {
        let v = self.view;
        let w = self.sums.width as usize;
        let fit = self.fit(b);
        // `block_geometry_px`'s x part and `clamp_geometry`'s.
        let gx0 = (offset_to_f32(b.t0, v.time_origin) - v.time_origin_frac) * v.pixels_per_time;
        let (mut x0, mut cw) = (gx0, offset_to_f32(b.t1, b.t0) * v.pixels_per_time);
        if x0 < 0.0 - CLAMP_MARGIN {
            cw -= (0.0 - CLAMP_MARGIN) - x0;
            x0 = 0.0 - CLAMP_MARGIN;
        }
        cw = cw.min(w as f32 + CLAMP_MARGIN - x0);
        let cw = cw.max(0.0);
        if cw < WIDE_BLOCK_COLUMNS {
            if fit.narrow_row {
                self.add_narrow(b, x0, cw, fit.fy);
            }
            return;
        }
        if !self.any_wide {
            self.any_wide = true;
            self.d0 = vec![[0.0; 5]; w + 1];
        }
        if fit.wide_row {
            self.add_wide(b, x0, cw, fit);
        }
    }

    /// `add_block_px` on the one row: each column's coverage, weight and luminance 1 (flat
    /// or not: without cushions the luminance is 1 everywhere, and the 2-D loop's one-pixel
    /// shortcut adds what its general loop would).
    fn add_narrow(&mut self, b: &MapBlock, x0: f32, cw: f32, fy: f32) {
        let q0 = (x0 - EDGE_SLACK).floor();
        let q1 = (x0 + cw + EDGE_SLACK).ceil().max(q0 + 1.0);
        let start = q0.max(0.0) as usize;
        let end = (q1.max(0.0) as usize).min(self.sums.width as usize);
        for px in start..end {
            let f = interval_overlap(x0, cw, px as f32) * fy;
            if f > 0.0 {
                self.add_pixel(b, px, f);
            }
        }
    }

    /// `add_pixel` with luminance 1.
    #[inline]
    fn add_pixel(&mut self, b: &MapBlock, px: usize, f: f32) {
        let view = self.view;
        let wgt = fast_pow(f, view.alpha);
        let a = &mut self.sums.acc[px];
        match view.color_mode {
            ColorMode::Categorical => {
                for (a, c) in a.iter_mut().zip(unpack_linear(b.color)) {
                    *a += wgt * c * 1.0;
                }
            }
            ColorMode::Quantitative => {
                a[0] += wgt * b.attr;
                a[1] += wgt * 1.0;
            }
        }
        a[3] += wgt;
        self.sums.cov[px] += f;
    }

    /// `Accumulator::add`'s wide block on the one row: end columns pixel by pixel, the
    /// interior through the difference arrays (one piece: the luminance is 1).
    fn add_wide(&mut self, b: &MapBlock, x0: f32, cw: f32, fit: RowFit) {
        let view = self.view;
        let w = self.sums.width as usize;
        let fy = fit.fy;
        if fy <= 0.0 {
            return;
        }
        let c = [x0, fit.y[0], cw, fit.y[1]];
        let x_start = (c[0] - EDGE_SLACK).floor().max(0.0) as i64;
        let x_end = ((c[0] + c[2] + EDGE_SLACK).ceil() as i64).min(w as i64);
        let in_lo = (c[0].ceil() as i64).max(x_start).max(0);
        let in_hi = (((c[0] + c[2]).floor() as i64) - 1).min(x_end - 1);
        for px in x_start.max(0)..x_end {
            if px >= in_lo && px <= in_hi {
                continue;
            }
            let f = interval_overlap(c[0], c[2], px as f32) * fy;
            if f > 0.0 {
                self.add_pixel(b, px as usize, f);
            }
        }
        if in_hi < in_lo {
            return;
        }
        let wgt = f64::from(fast_pow(fy, view.alpha));
        let (ks, attr) = match view.color_mode {
            ColorMode::Categorical => (unpack_linear(b.color).map(|c| f64::from(c) * wgt), 0.0),
            ColorMode::Quantitative => ([0.0, wgt, 0.0], f64::from(b.attr) * wgt),
        };
        let (a, z) = (in_lo as usize, in_hi as usize + 1);
        self.d0[a][3] += wgt;
        self.d0[z][3] -= wgt;
        self.d0[a][4] += f64::from(fy);
        self.d0[z][4] -= f64::from(fy);
        if attr != 0.0 {
            self.d0[a][0] += attr;
            self.d0[z][0] -= attr;
        }
        // The luminance is 1 over the whole interior: one piece of slope 0.
        for (q, &k) in ks.iter().enumerate() {
            if k == 0.0 {
                continue;
            }
            self.d0[a][q] += k * 1.0;
            self.d0[z][q] -= k * 1.0;
        }
    }

    /// Resolves the difference arrays into the sums (one row) and returns them.
    pub fn finish(mut self) -> ColumnSums {
        if self.any_wide {
            let mut c0 = [0.0f64; 5];
            for px in 0..self.sums.width as usize {
                for (c, v) in c0.iter_mut().zip(&self.d0[px]) {
                    *c += v;
                }
                let a = &mut self.sums.acc[px];
                match self.view.color_mode {
                    ColorMode::Categorical => {
                        for q in 0..3 {
                            a[q] += c0[q] as f32;
                        }
                    }
                    ColorMode::Quantitative => {
                        a[0] += c0[0] as f32;
                        a[1] += c0[1] as f32;
                    }
                }
                a[3] += c0[3] as f32;
                self.sums.cov[px] += c0[4] as f32;
            }
        }
        self.sums
    }
}

impl BlockSums for RowAccumulator<'_> {
    fn add(&mut self, b: &MapBlock) {
        RowAccumulator::add(self, b);
    }
    fn finish(self) -> ColumnSums {
        RowAccumulator::finish(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accumulate::Accumulator;

    use crate::test_rng::Rng;

    /// An occupancy bar's intervals: consecutive lifetimes tiling `[0, end)` in one band, most
    /// far below a pixel, some pixels wide (idle gaps), a few before or after the view.
    fn bar_intervals(n: usize, band: (u64, u64), seed: u64) -> Vec<MapBlock> {
        let mut r = Rng::new(seed);
        let mut t = 0u64;
        (0..n)
            .map(|i| {
                let len = match i % 97 {
                    // A few idle gaps tens of pixels wide (the difference arrays' blocks).
                    0 if i % 20_000 == 0 => 30_000_000 + r.below(40_000_000),
                    0 => 20_000 + r.below(200_000),
                    1..=3 => 1 + r.below(5_000),
                    _ => 1 + r.below(60),
                };
                let b = MapBlock::new(
                    t,
                    t + len,
                    band.0,
                    band.1 - band.0,
                    (r.next_u64() as u32) | 0xff00_0000,
                    r.below(1001) as f32 / 1000.0,
                );
                t += len;
                b
            })
            .collect()
    }

    /// Blocks anywhere in the plane: other bands, sizes and heights around the row's.
    fn scattered(n: usize, seed: u64) -> Vec<MapBlock> {
        let mut r = Rng::new(seed);
        (0..n)
            .map(|i| {
                let t0 = r.below(400_000);
                let len = if i % 7 == 0 {
                    r.below(150_000)
                } else {
                    r.below(300)
                };
                let y = r.below(1 << 21);
                let size = 1 + r.below(if i % 3 == 0 { 1 << 21 } else { 3_000 });
                MapBlock::new(
                    t0,
                    t0 + len,
                    y,
                    size,
                    r.next_u64() as u32,
                    r.below(1001) as f32 / 1000.0,
                )
            })
            .collect()
    }

    fn both(view: &MapView, blocks: &[MapBlock]) -> (ColumnSums, ColumnSums) {
        let mut plane = Accumulator::new(view);
        let mut row = RowAccumulator::new(view).expect("a one-row view without cushions");
        for b in blocks {
            plane.add(b);
            row.add(b);
        }
        (plane.finish(), row.finish())
    }

    #[test]
    fn a_bar_row_sums_as_the_2d_accumulator_does_bit_for_bit() {
        let band = (1 << 19, 1 << 20);
        let blocks = bar_intervals(200_000, band, 7);
        let end = blocks.last().map_or(1, |b| b.t1);
        for mode in [ColorMode::Quantitative, ColorMode::Categorical] {
            for alpha in [1.0f32, 0.5, 0.1] {
                for (t0, t1, width) in [(0, end, 524), (end / 3, end / 2, 97), (0, end, 3)] {
                    let mut v = MapView::fit(t0, t1, band.0, band.1, width, 1);
                    v.cushion = Cushion::None;
                    v.color_mode = mode;
                    v.alpha = alpha;
                    let (plane, row) = both(&v, &blocks);
                    assert_eq!(plane, row, "{mode:?} α={alpha} [{t0}, {t1}) at {width}");
                    assert!(row.cov.iter().any(|&c| c > 0.0));
                }
            }
        }
    }

    #[test]
    fn any_blocks_in_a_one_row_view_sum_as_the_2d_accumulator_does() {
        let blocks = scattered(50_000, 11);
        for (a0, a1) in [(0, 1 << 21), (1 << 20, (1 << 20) + 700), (5_000, 5_001)] {
            for mode in [ColorMode::Quantitative, ColorMode::Categorical] {
                let mut v = MapView::fit(10_000, 390_000, a0, a1, 331, 1);
                v.cushion = Cushion::None;
                v.color_mode = mode;
                v.alpha = 0.6;
                let (plane, row) = both(&v, &blocks);
                assert_eq!(plane, row, "{mode:?} band [{a0}, {a1})");
            }
        }
    }

    #[test]
    fn a_resumed_accumulator_sums_as_one_that_added_every_block_bit_for_bit() {
        let band = (1 << 19, 1 << 20);
        let blocks = bar_intervals(60_000, band, 3);
        let end = blocks.last().map_or(1, |b| b.t1);
        for mode in [ColorMode::Quantitative, ColorMode::Categorical] {
            let mut v = MapView::fit(0, end + end / 3, band.0, band.1, 411, 1);
            v.cushion = Cushion::None;
            v.color_mode = mode;
            v.alpha = 0.7;
            let mut whole = RowAccumulator::new(&v).expect("a one-row view");
            for b in &blocks {
                whole.add(b);
            }
            let whole = whole.finish();
            // Paused and resumed at uneven points (before any wide block, and after some).
            let mut progress = RowAccumulator::new(&v).expect("a one-row view").progress();
            let mut at = 0;
            for cut in [0, 1, 97, 5_000, 5_001, 33_333, blocks.len()] {
                let mut acc = RowAccumulator::resume(&v, progress).expect("the same view");
                for b in &blocks[at..cut] {
                    acc.add(b);
                }
                at = cut;
                progress = acc.progress();
            }
            let resumed = RowAccumulator::resume(&v, progress).expect("the same view");
            assert_eq!(resumed.finish(), whole, "{mode:?}");
            // Another width is refused.
            let mut other = MapView::fit(0, end, band.0, band.1, 410, 1);
            other.cushion = Cushion::None;
            let progress = RowAccumulator::new(&v).expect("a one-row view").progress();
            assert!(RowAccumulator::resume(&other, progress).is_none());
        }
    }

    #[test]
    fn attributes_scaled_by_a_power_of_two_in_the_kept_state_sum_as_scaled_blocks() {
        let band = (1 << 19, 1 << 20);
        let blocks = bar_intervals(60_000, band, 5);
        let end = blocks.last().map_or(1, |b| b.t1);
        let mut v = MapView::fit(0, end + end / 3, band.0, band.1, 389, 1);
        v.cushion = Cushion::None;
        v.color_mode = ColorMode::Quantitative;
        v.alpha = 0.7;
        // The same blocks with their attributes over a reference four times greater.
        let quarter: Vec<MapBlock> = blocks
            .iter()
            .map(|b| MapBlock {
                attr: b.attr * 0.25,
                ..*b
            })
            .collect();
        let mut whole = RowAccumulator::new(&v).expect("a one-row view");
        for b in &quarter {
            whole.add(b);
        }
        let whole = whole.finish();
        // The first 40,000 (wide idle gaps among them) summed with the old attributes,
        // scaled, then the rest with the new ones.
        let mut acc = RowAccumulator::new(&v).expect("a one-row view");
        for b in &blocks[..40_000] {
            acc.add(b);
        }
        let mut progress = acc.progress();
        progress.scale_attributes(0.25);
        let mut acc = RowAccumulator::resume(&v, progress).expect("the same view");
        for b in &quarter[40_000..] {
            acc.add(b);
        }
        assert_eq!(acc.finish(), whole);
    }

    #[test]
    fn only_one_row_views_without_cushions_are_taken() {
        let mut v = MapView::fit(0, 10, 0, 10, 10, 1);
        assert!(RowAccumulator::new(&v).is_none(), "a cushioned view");
        v.cushion = Cushion::None;
        assert!(RowAccumulator::new(&v).is_some());
        v.height = 2;
        assert!(RowAccumulator::new(&v).is_none(), "two rows");
    }
}
