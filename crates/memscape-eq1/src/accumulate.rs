//! Exact accumulation of blocks into [`PixelSums`]: for each pixel a block touches, its exact
//! box-filter coverage, its weight f^α and its cushion luminance at the pixel's centre, as the
//! renderer's CPU reference computes them.

use crate::sums::PixelSums;
use crate::view::{MapBlock, MapView};
use crate::{
    CLAMP_MARGIN, ColorMode, Cushion, EDGE_SLACK, block_cushion_luminance, box_coverage,
    clamp_geometry, cushion_knot_interval, default_light, fast_pow, touched_pixels, unpack_linear,
};

/// Per-pixel sums in column-major order (index `x · height + y`): blocks arrive by start time,
/// so consecutive blocks touch neighbouring columns and the writes stay in cache.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnSums {
    pub width: u32,
    pub height: u32,
    pub acc: Vec<[f32; 4]>,
    pub cov: Vec<f32>,
}

impl ColumnSums {
    pub fn new(width: u32, height: u32) -> Self {
        let (acc, cov) = crate::sums::zeroed(width, height);
        Self {
            width,
            height,
            acc,
            cov,
        }
    }

    #[inline]
    pub fn at(&self, x: usize, y: usize) -> usize {
        x * self.height as usize + y
    }

    pub fn add(&mut self, other: &ColumnSums) {
        crate::sums::add_sums((&mut self.acc, &mut self.cov), (&other.acc, &other.cov));
    }

    /// The sums in row-major order, added to `out`.
    pub fn add_to(&self, out: &mut PixelSums) {
        let (w, h) = (self.width as usize, self.height as usize);
        for x in 0..w {
            for y in 0..h {
                let (i, j) = (x * h + y, y * w + x);
                for k in 0..4 {
                    out.acc[j][k] += self.acc[i][k];
                }
                out.cov[j] += self.cov[i];
            }
        }
    }
}

/// Adds `blocks` to `sums` exactly (the view's α, cushion and colour mode).
pub fn accumulate(view: &MapView, blocks: &[MapBlock], sums: &mut PixelSums) {
    let mut cs = ColumnSums::new(sums.width, sums.height);
    for b in blocks {
        accumulate_block(view, b, &mut cs);
    }
    cs.add_to(sums);
}

/// What a block adds besides its geometry: its colour (linear RGB), its attribute and the
/// cushion it is shaded with (the renderer's reference overrides colour and cushion for
/// selections and occupancy gaps).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockPaint {
    pub color: [f32; 3],
    pub attr: f32,
    pub cushion: Cushion,
}

impl BlockPaint {
    /// The block's own colour and attribute, the view's cushion.
    #[inline]
    pub fn of(view: &MapView, b: &MapBlock) -> Self {
        Self {
            color: unpack_linear(b.color),
            attr: b.attr,
            cushion: view.cushion,
        }
    }
}

/// Adds one block exactly.
#[inline]
pub fn accumulate_block(view: &MapView, b: &MapBlock, sums: &mut ColumnSums) {
    add_block_px(
        view,
        view.block_geometry_px(b),
        &BlockPaint::of(view, b),
        sums,
    );
}

/// Adds the block whose pixel geometry is `g` (x0, y_bottom, width, height; y down, as
/// [`MapView::block_geometry_px`] gives it) exactly: for each pixel it touches, its box-filter
/// coverage f, its weight f^α and its cushion luminance at the pixel's centre. This is the
/// loop of the renderer's CPU reference (the judge of its GPU paths) and of memscape-lod's
/// exact path.
pub fn add_block_px(view: &MapView, g: [f32; 4], paint: &BlockPaint, sums: &mut ColumnSums) {
    let w = sums.width as usize;
    add_block_px_in(view, g, paint, sums, 0, w);
}

/// [`add_block_px`] into sums that hold the columns `[x0, x0 + sums.width)` of a view `width`
/// pixels wide (the pixels outside them skipped; those inside get the values of the whole
/// view's).
pub fn add_block_px_in(
    view: &MapView,
    g: [f32; 4],
    paint: &BlockPaint,
    sums: &mut ColumnSums,
    x0: usize,
    width: usize,
) {
    let (w, h) = (width, sums.height as usize);
    let x_held = x0..x0 + sums.width as usize;
    let c = clamp_geometry(g, [w as f32, h as f32], CLAMP_MARGIN);
    let size_px = [g[2], g[3]];
    // Blocks at most a pixel in both directions have no cushion (its slopes fade to 0 below
    // one pixel): luminance exactly 1.
    let flat = size_px[0] <= 1.0 && size_px[1] <= 1.0;
    // The pixels the block may touch (with slack for rounding).
    let [q0, q1] = touched_pixels(c);
    if flat && q1[0] == q0[0] + 1.0 && q1[1] == q0[1] + 1.0 {
        // One pixel (or outside the view): its coverage there is its area.
        let [px, py] = q0;
        if px < 0.0 || py < 0.0 || px >= w as f32 || py >= h as f32 {
            return;
        }
        if !x_held.contains(&(px as usize)) {
            return;
        }
        let f = box_coverage(c, [px, py]);
        if f > 0.0 {
            add_pixel(view, paint, sums, px as usize - x0, py as usize, f, 1.0);
        }
        return;
    }
    let light = default_light();
    let origin_px = [g[0], g[1] - g[3]];
    let x_start = (q0[0].max(0.0) as usize).max(x_held.start);
    let y_start = q0[1].max(0.0) as usize;
    let x_end = (q1[0].max(0.0) as usize).min(w).min(x_held.end);
    let y_end = (q1[1].max(0.0) as usize).min(h);
    for px in x_start..x_end {
        for py in y_start..y_end {
            let p = [px as f32, py as f32];
            let f = box_coverage(c, p);
            if f <= 0.0 {
                continue;
            }
            let lum = if flat {
                1.0
            } else {
                let centre = [p[0] + 0.5, p[1] + 0.5];
                let uv = [
                    ((centre[0] - origin_px[0]) / size_px[0].max(1e-6)).clamp(0.0, 1.0),
                    ((centre[1] - origin_px[1]) / size_px[1].max(1e-6)).clamp(0.0, 1.0),
                ];
                block_cushion_luminance(paint.cushion, view.cushion_strength, uv, size_px, light)
            };
            add_pixel(view, paint, sums, px - x0, py, f, lum);
        }
    }
}

/// Adds a block's share `f` of pixel (`px`, `py`) with luminance `lum`.
#[inline]
fn add_pixel(
    view: &MapView,
    b: &BlockPaint,
    sums: &mut ColumnSums,
    px: usize,
    py: usize,
    f: f32,
    lum: f32,
) {
    let wgt = fast_pow(f, view.alpha);
    let i = sums.at(px, py);
    let a = &mut sums.acc[i];
    match view.color_mode {
        ColorMode::Categorical => {
            for (a, c) in a.iter_mut().zip(b.color) {
                *a += wgt * c * lum;
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

/// The exact picture of `blocks` in `view` (sRGB RGBA bytes, row-major).
pub fn render(view: &MapView, blocks: &[MapBlock]) -> Vec<[u8; 4]> {
    let mut sums = PixelSums::new(view.width, view.height);
    accumulate(view, blocks, &mut sums);
    sums.resolve(view)
}

/// [`render`] through the [`Accumulator`] (wide blocks by difference arrays).
pub fn render_fast(view: &MapView, blocks: &[MapBlock]) -> Vec<[u8; 4]> {
    let mut acc = Accumulator::new(view);
    for b in blocks {
        acc.add(b);
    }
    let mut sums = PixelSums::new(view.width, view.height);
    acc.finish().add_to(&mut sums);
    sums.resolve(view)
}

/// A block's luminance along one pixel row (fixed v): the values
/// [`block_cushion_luminance`] interpolates between, computed once (the same floats).
struct RowLuminance {
    kind: Cushion,
    /// Parabolic: the 9 knots; plateau: slope +1, 0, −1 in 0..3; none: unused.
    table: [f32; 9],
}

impl RowLuminance {
    fn new(view: &MapView, size_px: [f32; 2], v: f32, light: [f32; 3]) -> Self {
        let (kind, k) = (view.cushion, view.cushion_strength);
        let mut table = [1.0f32; 9];
        match kind {
            Cushion::None => {}
            Cushion::Parabolic => {
                for (j, t) in table.iter_mut().enumerate() {
                    *t = crate::cushion_luminance(
                        kind,
                        k,
                        [j as f32 / crate::CUSHION_KNOTS, v],
                        size_px,
                        light,
                    );
                }
            }
            Cushion::Plateau => {
                // Slopes +1, 0, −1 at u = 0, 0.5, 1.
                for (j, u) in [0.0f32, 0.5, 1.0].into_iter().enumerate() {
                    table[j] = crate::cushion_luminance(kind, k, [u, v], size_px, light);
                }
            }
        }
        Self { kind, table }
    }

    #[inline]
    fn at(&self, u: f32) -> f32 {
        match self.kind {
            Cushion::None => self.table[0],
            Cushion::Parabolic => {
                let j = cushion_knot_interval(u);
                let i = j as usize;
                let (l0, l1) = (self.table[i], self.table[(i + 1).min(8)]);
                l0 + (l1 - l0) * (u * crate::CUSHION_KNOTS - j)
            }
            Cushion::Plateau => {
                if u < 0.2 {
                    self.table[0]
                } else if u > 0.8 {
                    self.table[2]
                } else {
                    self.table[1]
                }
            }
        }
    }
}

/// Blocks at least this many pixel columns wide add their interior by difference arrays.
pub const WIDE_BLOCK_COLUMNS: f32 = 6.0;

/// Exact accumulation whose cost grows with the pixel rows a block touches, not its pixels:
/// the interior columns of a wide block (fully covered horizontally) add their weight and
/// their piecewise-linear cushion luminance through per-row difference arrays, resolved once
/// in [`Accumulator::finish`]; narrow blocks and the end columns go pixel by pixel. The result
/// is the one [`accumulate_block`] gives, to floating-point rounding.
///
/// An accumulator may hold only some columns of its view ([`Accumulator::with_buffers`]: a
/// vertical strip, the blocks' geometry still that of the whole view, so that each pixel gets
/// the same values as from an accumulator of the whole view), and reuse the memory of an
/// earlier one ([`AccumulatorBuffers`]).
pub struct Accumulator<'v> {
    view: &'v MapView,
    /// The first column of the view the sums hold (`sums.width` columns from it).
    x0: usize,
    pub sums: ColumnSums,
    /// Per pixel of the columns held (a run reaching past the last column has no end to
    /// subtract: `add` writes none), column-major like the sums: constant parts of (c0, c1, c2, F, S), then
    /// slopes (per column) of (c0, c1, c2). All zero outside `add`/`finish` (finish clears
    /// what it reads), so that the memory can be reused without clearing it again.
    d: Vec<Diff>,
    any_wide: bool,
}

/// One pixel's entry of an [`Accumulator`]'s difference arrays, a cache line of its own: a
/// run's ends fall on columns far apart, each entry a miss; unaligned, most entries spanned
/// two lines (the allocation is 16 bytes past a page), and every end cost two misses.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[repr(C, align(64))]
struct Diff([f64; 8]);

impl std::ops::Index<usize> for Diff {
    type Output = f64;
    #[inline]
    fn index(&self, q: usize) -> &f64 {
        &self.0[q]
    }
}

impl std::ops::IndexMut<usize> for Diff {
    #[inline]
    fn index_mut(&mut self, q: usize) -> &mut f64 {
        &mut self.0[q]
    }
}

/// The memory of an [`Accumulator`], kept between accumulators (a strip after another, a frame
/// after another): its sums' arrays and its difference arrays (all zero while kept).
#[derive(Debug, Default)]
pub struct AccumulatorBuffers {
    acc: Vec<[f32; 4]>,
    cov: Vec<f32>,
    d: Vec<Diff>,
}

impl AccumulatorBuffers {
    /// Takes back the arrays of sums an accumulator returned (their values are dropped).
    pub fn keep(&mut self, sums: ColumnSums) {
        self.acc = sums.acc;
        self.cov = sums.cov;
    }
}

impl<'v> Accumulator<'v> {
    pub fn new(view: &'v MapView) -> Self {
        Self {
            view,
            x0: 0,
            sums: ColumnSums::new(view.width, view.height),
            d: Vec::new(),
            any_wide: false,
        }
    }

    /// An accumulator of the columns `columns` of `view` (clamped to the view), in the memory
    /// of `buffers` (taken; [`Accumulator::finish_into`] gives it back).
    pub fn with_buffers(
        view: &'v MapView,
        columns: std::ops::Range<u32>,
        buffers: &mut AccumulatorBuffers,
    ) -> Self {
        let x1 = columns.end.min(view.width);
        let x0 = columns.start.min(x1);
        let n = (x1 - x0) as usize * view.height as usize;
        let (mut acc, mut cov) = (
            std::mem::take(&mut buffers.acc),
            std::mem::take(&mut buffers.cov),
        );
        acc.clear();
        acc.resize(n, [0.0; 4]);
        cov.clear();
        cov.resize(n, 0.0);
        Self {
            view,
            x0: x0 as usize,
            sums: ColumnSums {
                width: x1 - x0,
                height: view.height,
                acc,
                cov,
            },
            d: std::mem::take(&mut buffers.d),
            any_wide: false,
        }
    }

    /// Adds one block.
    pub fn add(&mut self, b: &MapBlock) {
        let view = self.view;
        let (w, h) = (view.width as usize, self.sums.height as usize);
        let (x0, cols) = (self.x0 as i64, self.sums.width as usize);
        let g = view.block_geometry_px(b);
        let c = clamp_geometry(g, [w as f32, h as f32], CLAMP_MARGIN);
        if c[2] < WIDE_BLOCK_COLUMNS {
            // `accumulate_block` with the geometry computed above.
            add_block_px_in(
                view,
                g,
                &BlockPaint::of(view, b),
                &mut self.sums,
                self.x0,
                w,
            );
            return;
        }
        if !self.any_wide {
            self.any_wide = true;
            let n = cols * h;
            if self.d.len() < n {
                self.d.clear();
                self.d.resize(n, Diff::default());
            }
        }
        let light = default_light();
        let size_px = [g[2], g[3]];
        let origin_px = [g[0], g[1] - g[3]];
        let paint = BlockPaint::of(view, b);
        let color = paint.color;
        let y_start = ((c[1] - c[3] - EDGE_SLACK).floor().max(0.0) as usize).min(h);
        let y_end = (((c[1] + EDGE_SLACK).ceil().max(y_start as f32 + 1.0)) as usize).min(h);
        // The columns held only: the same pixels an accumulator of the whole view computes.
        let x_start = ((c[0] - EDGE_SLACK).floor().max(0.0) as i64).max(x0);
        let x_end = ((c[0] + c[2] + EDGE_SLACK).ceil() as i64)
            .min(w as i64)
            .min(x0 + cols as i64);
        if x_end <= x_start {
            return;
        }
        // Interior columns: the pixel lies inside [x0, x0 + w] entirely (fx = 1).
        let in_lo = (c[0].ceil() as i64).max(x_start).max(0);
        let in_hi = (((c[0] + c[2]).floor() as i64) - 1).min(x_end - 1);
        let u_of = |px: i64| -> f32 {
            ((px as f32 + 0.5 - origin_px[0]) / size_px[0].max(1e-6)).clamp(0.0, 1.0)
        };
        // Thin blocks (at most a pixel tall) shade alike on every row.
        let v_of =
            |py: usize| ((py as f32 + 0.5 - origin_px[1]) / size_px[1].max(1e-6)).clamp(0.0, 1.0);
        let thin_lum =
            (size_px[1] <= 1.0).then(|| RowLuminance::new(view, size_px, v_of(y_start), light));
        // Where column `px`'s entry of row `py` lies in `d`; `past`: the column after those held.
        let at = |px: i64, py: usize| (px - x0) as usize * h + py;
        let past = x0 + cols as i64;
        // The interior's luminance pieces (runs of columns on which it is linear in the
        // column; the same on every row): where they end.
        let mut ends = [0i64; 16];
        let mut found = 0;
        let mut start = in_lo;
        while start <= in_hi && found < ends.len() {
            ends[found] = piece_end(view, start, in_hi, &u_of);
            start = ends[found] + 1;
            found += 1;
        }
        for py in y_start..y_end {
            let fy = crate::vertical_overlap(c, py as f32);
            if fy <= 0.0 {
                continue;
            }
            if in_hi >= in_lo {
                // The entries where the interior and its pieces start and end, read first and
                // together: columns apart, each a cache miss, which then overlap (and the end
                // columns' work below) instead of stalling the sums one after the other.
                let mut touched = self.d[at(in_lo, py)][0];
                for &end in &ends[..found] {
                    if end + 1 < past {
                        touched += self.d[at(end + 1, py)][0];
                    }
                }
                std::hint::black_box(touched);
            }
            let row_lum;
            let lum = match &thin_lum {
                Some(l) => l,
                None => {
                    row_lum = RowLuminance::new(view, size_px, v_of(py), light);
                    &row_lum
                }
            };
            // End columns (and everything when there is no interior), pixel by pixel.
            for px in x_start..x_end {
                if px >= in_lo && px <= in_hi {
                    continue;
                }
                let p = [px as f32, py as f32];
                let f = box_coverage(c, p);
                if f > 0.0 {
                    let l = lum.at(u_of(px));
                    add_pixel(view, &paint, &mut self.sums, (px - x0) as usize, py, f, l);
                }
            }
            if in_hi < in_lo {
                continue;
            }
            let wgt = f64::from(fast_pow(fy, view.alpha));
            let lum_at = |px: i64| -> f64 { f64::from(lum.at(u_of(px))) };
            let (k0, k1, k2) = match view.color_mode {
                ColorMode::Categorical => (
                    f64::from(color[0]) * wgt,
                    f64::from(color[1]) * wgt,
                    f64::from(color[2]) * wgt,
                ),
                ColorMode::Quantitative => (0.0, wgt, 0.0),
            };
            let attr = match view.color_mode {
                ColorMode::Categorical => 0.0,
                ColorMode::Quantitative => f64::from(b.attr) * wgt,
            };
            // Constant channels over the whole interior. A run reaching past the columns held
            // ends in the column after them, which `finish_into` never reads: no end written.
            let a = at(in_lo, py);
            let z = (in_hi + 1 < past).then(|| at(in_hi + 1, py));
            self.d[a][3] += wgt;
            self.d[a][4] += f64::from(fy);
            if attr != 0.0 {
                self.d[a][0] += attr;
            }
            if let Some(z) = z {
                self.d[z][3] -= wgt;
                self.d[z][4] -= f64::from(fy);
                if attr != 0.0 {
                    self.d[z][0] -= attr;
                }
            }
            let mut start = in_lo;
            let mut piece = 0;
            while start <= in_hi {
                let end = match ends[..found].get(piece) {
                    Some(&end) => end,
                    None => piece_end(view, start, in_hi, &u_of),
                };
                piece += 1;
                let (l0, l1) = (lum_at(start), lum_at(end));
                let slope = if end > start {
                    (l1 - l0) / (end - start) as f64
                } else {
                    0.0
                };
                let base = l0 - slope * start as f64;
                let a = at(start, py);
                let z = (end + 1 < past).then(|| at(end + 1, py));
                let ks = [k0, k1, k2];
                for (q, &k) in ks.iter().enumerate() {
                    if k == 0.0 {
                        continue;
                    }
                    self.d[a][q] += k * base;
                    self.d[a][5 + q] += k * slope;
                    if let Some(z) = z {
                        self.d[z][q] -= k * base;
                        self.d[z][5 + q] -= k * slope;
                    }
                }
                start = end + 1;
            }
        }
    }

    /// Resolves the difference arrays into the sums and returns them.
    pub fn finish(self) -> ColumnSums {
        self.finish_into(&mut AccumulatorBuffers::default())
    }

    /// [`Accumulator::finish`], the difference arrays' memory given back to `buffers`
    /// (cleared; take the sums' back with [`AccumulatorBuffers::keep`]).
    pub fn finish_into(mut self, buffers: &mut AccumulatorBuffers) -> ColumnSums {
        if self.any_wide {
            let (cols, h) = (self.sums.width as usize, self.sums.height as usize);
            // Column by column, each row's running sums (the same additions in the same order
            // as row by row, reading and writing memory in order).
            let mut run = vec![[0.0f64; 8]; h];
            for lx in 0..cols {
                let x = (self.x0 + lx) as f64;
                for (py, r) in run.iter_mut().enumerate() {
                    let i = lx * h + py;
                    let d = std::mem::take(&mut self.d[i]);
                    for (c, v) in r.iter_mut().zip(&d.0) {
                        *c += v;
                    }
                    let a = &mut self.sums.acc[i];
                    match self.view.color_mode {
                        ColorMode::Categorical => {
                            for q in 0..3 {
                                a[q] += (r[q] + r[5 + q] * x) as f32;
                            }
                        }
                        ColorMode::Quantitative => {
                            a[0] += r[0] as f32;
                            a[1] += (r[1] + r[6] * x) as f32;
                        }
                    }
                    a[3] += r[3] as f32;
                    self.sums.cov[i] += r[4] as f32;
                }
            }
        }
        buffers.d = std::mem::take(&mut self.d);
        self.sums
    }
}

/// An exact accumulator of blocks into a view's sums: [`Accumulator`] (any view) or
/// [`crate::row::RowAccumulator`] (one row without cushions: the same floats, faster).
pub trait BlockSums {
    /// Adds one block.
    fn add(&mut self, b: &MapBlock);
    /// The sums of every block added.
    fn finish(self) -> ColumnSums;
}

impl BlockSums for Accumulator<'_> {
    fn add(&mut self, b: &MapBlock) {
        Accumulator::add(self, b);
    }
    fn finish(self) -> ColumnSums {
        Accumulator::finish(self)
    }
}

/// The last column from `start` (at most `last`) on which the block's luminance along the row
/// is linear in the column: the same knot interval (parabolic) or the same bevel (plateau), as
/// the reference decides them for each pixel centre.
fn piece_end(view: &MapView, start: i64, last: i64, u_of: &dyn Fn(i64) -> f32) -> i64 {
    let class = |u: f32| -> i32 {
        match view.cushion {
            Cushion::None => 0,
            Cushion::Parabolic => cushion_knot_interval(u) as i32,
            Cushion::Plateau => {
                if u < 0.2 {
                    0
                } else if u > 0.8 {
                    2
                } else {
                    1
                }
            }
        }
    };
    if view.cushion == Cushion::None || view.cushion_strength <= 0.0 {
        return last;
    }
    let k = class(u_of(start));
    // Binary search for the last column of the same class (classes grow along the row).
    let (mut lo, mut hi) = (start, last);
    if class(u_of(hi)) == k {
        return hi;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if class(u_of(mid)) == k {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_rng::Rng;

    fn random_blocks(n: usize, seed: u64) -> Vec<MapBlock> {
        let mut r = Rng::new(seed);
        (0..n)
            .map(|i| {
                let t0 = r.below(10_000);
                let w = if i % 3 == 0 {
                    r.below(8_000)
                } else {
                    r.below(50)
                };
                let y = r.below(1 << 20);
                let s = if i % 5 == 0 {
                    r.below(60_000)
                } else {
                    1 + r.below(2000)
                };
                MapBlock::new(
                    t0,
                    t0 + w,
                    y,
                    s,
                    (r.next_u64() as u32) | 0xff00_0000,
                    r.unit() as f32,
                )
            })
            .collect()
    }

    #[test]
    fn difference_arrays_give_the_per_pixel_picture() {
        let blocks = random_blocks(3000, 5);
        for cushion in [Cushion::None, Cushion::Parabolic, Cushion::Plateau] {
            for mode in [ColorMode::Categorical, ColorMode::Quantitative] {
                for alpha in [0.1f32, 0.6, 1.7] {
                    let mut v = MapView::fit(1000, 9000, 1 << 17, 1 << 19, 300, 200);
                    v.cushion = cushion;
                    v.color_mode = mode;
                    v.alpha = alpha;
                    let a = render(&v, &blocks);
                    let b = render_fast(&v, &blocks);
                    let worst = a
                        .iter()
                        .zip(&b)
                        .map(|(p, q)| (0..3).map(|k| p[k].abs_diff(q[k])).max().unwrap_or(0))
                        .max()
                        .unwrap_or(0);
                    assert!(worst <= 1, "{cushion:?} {mode:?} α={alpha}: {worst}");
                }
            }
        }
    }

    /// Accumulators of whole views on the memory an earlier one left (`finish_into`, `keep`:
    /// the live view's accumulated sums) sum exactly what fresh ones do, bit for bit: the
    /// difference arrays come back zeroed, the sums are zeroed on reuse, and a view of another
    /// size resizes them.
    #[test]
    fn reused_buffers_sum_what_a_fresh_accumulator_sums() {
        let sets = [
            random_blocks(2500, 11),
            random_blocks(40, 12),
            random_blocks(1800, 13),
        ];
        for cushion in [Cushion::None, Cushion::Parabolic] {
            let mut buffers = AccumulatorBuffers::default();
            for (round, blocks) in sets.iter().chain(&sets).enumerate() {
                // Round 3 is another size, smaller; round 4 grows again.
                let (w, h) = if round == 3 { (180, 90) } else { (300, 200) };
                let mut v = MapView::fit(1000, 9000, 1 << 17, 1 << 19, w, h);
                v.cushion = cushion;
                let mut fresh = Accumulator::new(&v);
                let mut reused = Accumulator::with_buffers(&v, 0..v.width, &mut buffers);
                for b in blocks {
                    fresh.add(b);
                    reused.add(b);
                }
                let expected = fresh.finish();
                let got = reused.finish_into(&mut buffers);
                let bits = |c: &ColumnSums| -> Vec<u32> {
                    c.acc
                        .iter()
                        .flatten()
                        .chain(&c.cov)
                        .map(|f| f.to_bits())
                        .collect()
                };
                assert_eq!(bits(&got), bits(&expected), "{cushion:?}, round {round}");
                assert!(buffers.d.iter().flat_map(|d| d.0).all(|d| d == 0.0));
                buffers.keep(got);
            }
        }
    }

    /// A strip's sums are, bit for bit, the same columns of a wider strip starting at the same
    /// column: a run reaching past the strip writes no end (only the columns held are read),
    /// where the wider strip subtracts it at its real end, past those columns too. Without
    /// cushions: with them a run's luminance pieces end where the strip ends, so their slopes
    /// differ by rounding from the wider strip's (as they always did).
    #[test]
    fn runs_past_a_strip_end_leave_its_columns_bit_identical() {
        let blocks = random_blocks(30_000, 9);
        for cushion in [Cushion::None] {
            for mode in [ColorMode::Categorical, ColorMode::Quantitative] {
                let mut v = MapView::fit(1000, 9000, 1 << 17, 1 << 19, 301, 200);
                v.cushion = cushion;
                v.color_mode = mode;
                v.alpha = 0.3;
                let mut buffers = AccumulatorBuffers::default();
                for (x0, x1, wider) in [(0, 40, 301), (40, 100, 170), (100, 171, 301)] {
                    let sums_of = |cols: std::ops::Range<u32>, buffers: &mut AccumulatorBuffers| {
                        let mut acc = Accumulator::with_buffers(&v, cols, buffers);
                        for b in &blocks {
                            acc.add(b);
                        }
                        acc.finish_into(buffers)
                    };
                    let strip = sums_of(x0..x1, &mut buffers);
                    let strip = (strip.acc.clone(), strip.cov.clone());
                    let wide = sums_of(x0..wider, &mut buffers);
                    let n = (x1 - x0) as usize * v.height as usize;
                    let bits = |acc: &[[f32; 4]], cov: &[f32]| -> Vec<u32> {
                        acc[..n]
                            .iter()
                            .flatten()
                            .chain(&cov[..n])
                            .map(|f| f.to_bits())
                            .collect()
                    };
                    assert_eq!(
                        bits(&strip.0, &strip.1),
                        bits(&wide.acc, &wide.cov),
                        "{cushion:?} {mode:?} columns {x0}..{x1}"
                    );
                    buffers.keep(wide);
                }
            }
        }
    }

    /// A view accumulated strip by strip in reused memory (what memscape-lod's resolve does)
    /// gives every pixel the sums of an accumulator of the whole view, to rounding.
    #[test]
    fn strips_in_reused_memory_give_the_whole_views_sums() {
        let blocks = random_blocks(3000, 7);
        for cushion in [Cushion::None, Cushion::Parabolic] {
            for mode in [ColorMode::Categorical, ColorMode::Quantitative] {
                let mut v = MapView::fit(1000, 9000, 1 << 17, 1 << 19, 301, 200);
                v.cushion = cushion;
                v.color_mode = mode;
                v.alpha = 0.3;
                let mut whole = Accumulator::new(&v);
                for b in &blocks {
                    whole.add(b);
                }
                let whole = whole.finish();
                let mut buffers = AccumulatorBuffers::default();
                // Strips of uneven widths, the last one short; the memory of each reused.
                let (mut x0, mut checked) = (0u32, 0usize);
                for width in [1u32, 37, 64, 128, 200].iter().cycle() {
                    if x0 >= v.width {
                        break;
                    }
                    let x1 = (x0 + width).min(v.width);
                    let mut strip = Accumulator::with_buffers(&v, x0..x1, &mut buffers);
                    for b in &blocks {
                        strip.add(b);
                    }
                    let sums = strip.finish_into(&mut buffers);
                    assert_eq!(sums.width, x1 - x0);
                    for x in x0..x1 {
                        for y in 0..v.height as usize {
                            let i = (x - x0) as usize * v.height as usize + y;
                            let j = whole.at(x as usize, y);
                            let close = |a: f32, b: f32| (a - b).abs() <= 1e-4 * b.abs().max(1.0);
                            assert!(close(sums.cov[i], whole.cov[j]), "cov at ({x}, {y})");
                            for k in 0..4 {
                                assert!(
                                    close(sums.acc[i][k], whole.acc[j][k]),
                                    "{cushion:?} {mode:?} acc[{k}] at ({x}, {y}): {} vs {}",
                                    sums.acc[i][k],
                                    whole.acc[j][k]
                                );
                            }
                            checked += 1;
                        }
                    }
                    buffers.keep(sums);
                    x0 = x1;
                }
                assert_eq!(checked, (v.width * v.height) as usize);
            }
        }
    }
}
