//! A view's Eq. 1 sums from the index: the level whose cells are at most a pixel, each cell's
//! blocks spread over the pixels they may reach, plus the blocks large at that level drawn
//! exactly. Views finer than every level are drawn exactly from the trace, or, where their
//! blocks are many, from a level of cells a little over a pixel (`LodIndex::level_for_view`).

use crate::eq1::ColorMode;
use crate::exact;
use crate::exact::ColumnSums;
use crate::format::{
    BucketRec, CellRec, FEW_BLOCKS, MASK_BINS, PROFILE_BINS, SPOT_QUARTERS, SpotSlice,
};
use crate::index::LodIndex;
use crate::sums::PixelSums;
use crate::view::{LodBlock, LodView};

mod axis;
pub use axis::{
    AxisCell, SplitPart, axis_weights, expected_overlap, profile_weights, profile_weights_split,
};

/// Where the exact blocks of a view come from when no level applies.
pub trait BlockSource: Sync {
    /// Calls `f` with every block of part `part` of `parts` meeting the window
    /// `[t0, t1) × [a0, a1)` (others may come too; they add nothing). The parts together give
    /// every block once.
    fn blocks_in(
        &self,
        window: ([f64; 2], [f64; 2]),
        part: usize,
        parts: usize,
        f: &mut dyn FnMut(&LodBlock),
    );

    /// Block number `id` of the trace (the index lists some blocks by number).
    fn block(&self, id: u64) -> Option<LodBlock>;
}

/// The `part`-th of `parts` equal pieces of `0..n`.
pub fn part_range(n: usize, part: usize, parts: usize) -> std::ops::Range<usize> {
    let parts = parts.max(1);
    n * part / parts..n * (part + 1) / parts
}

impl BlockSource for [LodBlock] {
    fn block(&self, id: u64) -> Option<LodBlock> {
        usize::try_from(id).ok().and_then(|i| self.get(i)).copied()
    }

    fn blocks_in(
        &self,
        window: ([f64; 2], [f64; 2]),
        part: usize,
        parts: usize,
        f: &mut dyn FnMut(&LodBlock),
    ) {
        let (wt, wa) = window;
        for b in &self[part_range(self.len(), part, parts)] {
            if (b.t1 as f64) > wt[0]
                && (b.t0 as f64) < wt[1]
                && (b.y.saturating_add(b.size) as f64) > wa[0]
                && (b.y as f64) < wa[1]
            {
                f(b);
            }
        }
    }
}

/// What a resolve did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResolveStats {
    /// Level used (`None`: exact).
    pub level: Option<usize>,
    pub cells: u64,
    /// Blocks drawn exactly.
    pub exact_blocks: u64,
}

/// `x.floor()` for |x| < 2^62 without a library call (the baseline x86-64 target has no
/// rounding instruction).
#[inline]
pub fn ffloor(x: f64) -> f64 {
    let t = x as i64 as f64;
    if t > x { t - 1.0 } else { t }
}

/// Threads a resolve uses.
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().clamp(1, 8))
}

/// Columns of a strip: the view is resolved strip by strip, each strip's sums alone in memory
/// reused for the next (a thread's arrays stay small and are not faulted in again for every
/// frame), and the strips share no pixel, so that no thread's sums are added to another's.
pub const STRIP_COLUMNS: u32 = 128;

/// Pixels of slack around a strip when finding its blocks and cells: more than a cell (at most
/// a pixel wide) and the clamping margin, so that every one reaching the strip is found.
const STRIP_SLACK_PX: f64 = 4.0;

/// The view's sums: from the level [`LodIndex::level_for_view`] picks, else exactly from
/// `source`; the view's strips of [`STRIP_COLUMNS`] shared by [`threads`] threads.
pub fn accumulate<S: BlockSource + ?Sized>(
    index: &LodIndex,
    source: &S,
    view: &LodView,
    sums: &mut PixelSums,
) -> ResolveStats {
    accumulate_at(index, source, view, index.level_for_view(view), sums)
}

/// The view's sums from level `level` of `index` (`None`: exactly from `source`), as
/// [`accumulate`] computes them.
pub fn accumulate_at<S: BlockSource + ?Sized>(
    index: &LodIndex,
    source: &S,
    view: &LodView,
    level: Option<usize>,
    sums: &mut PixelSums,
) -> ResolveStats {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let level = level.filter(|&li| li < index.levels.len());
    let strips: Vec<std::ops::Range<u32>> = (0..view.width.div_ceil(STRIP_COLUMNS))
        .map(|k| k * STRIP_COLUMNS..((k + 1) * STRIP_COLUMNS).min(view.width))
        .collect();
    let next = AtomicUsize::new(0);
    let out = std::sync::Mutex::new((
        sums,
        ResolveStats {
            level,
            ..ResolveStats::default()
        },
    ));
    std::thread::scope(|scope| {
        for _ in 0..threads().min(strips.len()) {
            scope.spawn(|| {
                let mut buffers = exact::AccumulatorBuffers::default();
                let mut scratch = Scratch::default();
                while let Some(columns) = strips.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let (strip, stats) = accumulate_strip(
                        index,
                        source,
                        view,
                        level,
                        columns.clone(),
                        &mut buffers,
                        &mut scratch,
                    );
                    if let Ok(mut out) = out.lock() {
                        put_columns(&strip, columns.start as usize, out.0);
                        out.1.cells += stats.cells;
                        out.1.exact_blocks += stats.exact_blocks;
                    }
                    buffers.keep(strip);
                }
            });
        }
    });
    match out.into_inner() {
        Ok((_, stats)) => stats,
        Err(poisoned) => poisoned.into_inner().1,
    }
}

/// The sums of the columns `columns` of `view` (at `level`, `None`: exactly from `source`). A
/// block or cell is counted in the strip where its left edge lies (the first strip for those
/// starting before the view).
fn accumulate_strip<S: BlockSource + ?Sized>(
    index: &LodIndex,
    source: &S,
    view: &LodView,
    level: Option<usize>,
    columns: std::ops::Range<u32>,
    buffers: &mut exact::AccumulatorBuffers,
    scratch: &mut Scratch,
) -> (ColumnSums, ResolveStats) {
    let (wt, wa) = view.window();
    let at = |x: f64| view.plane_at(x, 0.0)[0];
    let (x0, x1) = (f64::from(columns.start), f64::from(columns.end));
    // Inside the view's window: what lies outside it adds nothing.
    let window = (
        [
            at(x0 - STRIP_SLACK_PX).max(wt[0]),
            at(x1 + STRIP_SLACK_PX).min(wt[1]),
        ],
        wa,
    );
    // Where a block's or cell's left edge counts it: this strip's columns, the first strip's
    // from the left of the plane, the last's to its right.
    let counted = [
        if columns.start == 0 { f64::MIN } else { at(x0) },
        if columns.end >= view.width {
            f64::MAX
        } else {
            at(x1)
        },
    ];
    let counts = |t: f64| t >= counted[0] && t < counted[1];
    let mut stats = ResolveStats {
        level,
        ..ResolveStats::default()
    };
    let mut acc = exact::Accumulator::with_buffers(view, columns.clone(), buffers);
    let mut add = |b: &LodBlock| {
        acc.add(b);
        stats.exact_blocks += u64::from(counts(b.t0 as f64));
    };
    match level {
        None => source.blocks_in(window, 0, 1, &mut add),
        Some(li) => index.large_blocks(
            &index.levels[li].desc,
            window,
            0,
            1,
            &|id| source.block(id),
            add,
        ),
    }
    let mut strip = acc.finish_into(buffers);
    if let Some(li) = level {
        stats.cells = accumulate_cells(index, li, view, &mut strip, columns, scratch, &counts);
    }
    (strip, stats)
}

/// Adds the sums of the columns `strip` holds, which start at column `x0` of `out`.
fn put_columns(strip: &ColumnSums, x0: usize, out: &mut PixelSums) {
    let (w, h) = (out.width as usize, strip.height as usize);
    let cols = strip.width as usize;
    // Rows of a few columns at a time: the strip read in order, the output a few runs.
    const RUN: usize = 8;
    for first in (0..cols).step_by(RUN) {
        let last = (first + RUN).min(cols);
        for y in 0..h {
            let j = y * w + x0;
            for x in first..last {
                let i = x * h + y;
                for (a, s) in out.acc[j + x].iter_mut().zip(&strip.acc[i]) {
                    *a += s;
                }
                out.cov[j + x] += strip.cov[i];
            }
        }
    }
}

/// Adds the cells of level `li` reaching the columns `strip` holds (`columns` of the view) to
/// them; returns how many of them `counts` by their left edge (plane time).
pub fn accumulate_cells(
    index: &LodIndex,
    li: usize,
    view: &LodView,
    strip: &mut ColumnSums,
    columns: std::ops::Range<u32>,
    scratch: &mut Scratch,
    counts: &dyn Fn(f64) -> bool,
) -> u64 {
    let level = &index.levels[li];
    let [tau, sig] = level.cell_size();
    let [pw, ph] = view.pixel_size();
    let (view_t, wa) = view.window();
    let at = |x: f64| view.plane_at(x, 0.0)[0];
    let wt = [
        at(f64::from(columns.start) - STRIP_SLACK_PX).max(view_t[0]),
        at(f64::from(columns.end) + STRIP_SLACK_PX).min(view_t[1]),
    ];
    // Cells whose blocks may reach the window: centres within half a cell of it.
    let kx0 = ((wt[0] - tau) / tau).floor().max(0.0) as u64;
    let kx1 = ((wt[1] + tau) / tau).floor().max(0.0) as u64;
    let ky0 = ((wa[0] - sig) / sig).floor().max(0.0) as u64;
    let ky1 = ((wa[1] + sig) / sig).floor().max(0.0) as u64;
    let ctx = CellContext {
        rx: tau / pw,
        ry: sig / ph,
        alpha: f64::from(view.alpha),
        t_origin: view.time_origin as f64 + f64::from(view.time_origin_frac),
        a_origin: view.addr_origin as f64 + f64::from(view.addr_origin_frac),
        tau,
        sig,
        pw,
        ph,
        height: f64::from(view.height),
        w: i64::from(view.width),
        h: i64::from(view.height),
        held: [i64::from(columns.start), i64::from(columns.end)],
        mode: view.color_mode,
        bucket_pow: BucketPow::new(tau / pw * sig / ph, f64::from(view.alpha)),
        pow_one: f64::from(crate::eq1::fast_pow(1.0, view.alpha)),
    };
    let mut visited = 0;
    level.cells_in([kx0, kx1], [ky0, ky1], |kx, cell| {
        visited += u64::from(counts(kx as f64 * tau));
        add_cell(&ctx, kx, cell, level.buckets_of(cell), strip, scratch);
    });
    visited
}

struct CellContext {
    /// Cell size in pixels.
    rx: f64,
    ry: f64,
    alpha: f64,
    t_origin: f64,
    a_origin: f64,
    tau: f64,
    sig: f64,
    pw: f64,
    ph: f64,
    height: f64,
    w: i64,
    h: i64,
    /// The columns the sums hold, `[first, end)` (they start at the first).
    held: [i64; 2],
    mode: ColorMode,
    bucket_pow: BucketPow,
    /// `fast_pow(1, α)`: a block's o^α where it lies whole in a pixel.
    pow_one: f64,
}

/// A bucket's mean area in pixels and its α-th power, from tables made once per strip rather
/// than a `powi` and a `fast_pow` per bucket of every cell: the area is
/// `4^b · (1 + 3u) · scale` (`BucketRec::mean_area`), its power `(4^b · scale)^α` (one entry
/// per `b`) times `(1 + 3u)^α` interpolated linearly between [`BucketPow::SEGMENTS`] + 1
/// points. The interpolation's relative error is at most h²/8 · max|f''| =
/// 9·|α(α − 1)| / (8 · 2048²) ≤ 5.4·10⁻⁷ for α ≤ 2 (f ≥ 1), below `fast_pow`'s own 10⁻⁵.
struct BucketPow {
    /// `4^b · scale` and its α-th power, at `b + 128`.
    area: Box<[f64; 256]>,
    pow: Box<[f64; 256]>,
    /// `(1 + 3u)^α` at `u = k / SEGMENTS`.
    frac: Vec<f64>,
}

impl BucketPow {
    const SEGMENTS: usize = 2048;

    fn new(scale: f64, alpha: f64) -> Self {
        let mut area = Box::new([0.0f64; 256]);
        let mut pow = Box::new([0.0f64; 256]);
        for (k, (a, p)) in area.iter_mut().zip(pow.iter_mut()).enumerate() {
            let b = k as i32 - 128;
            *a = 2f64.powi(crate::format::BUCKET_OCTAVES * b) * scale;
            *p = a.powf(alpha);
        }
        let width = f64::from((1 << crate::format::BUCKET_OCTAVES) - 1);
        let frac = (0..=Self::SEGMENTS)
            .map(|k| (1.0 + width * k as f64 / Self::SEGMENTS as f64).powf(alpha))
            .collect();
        Self { area, pow, frac }
    }

    /// The bucket's mean area (pixels) and its α-th power.
    #[inline]
    fn of(&self, b: &BucketRec) -> (f64, f64) {
        let k = (i32::from(b.b) + 128) as usize & 255;
        let width = f64::from((1 << crate::format::BUCKET_OCTAVES) - 1);
        let u = f64::from(b.mean_frac) / 65536.0;
        let mean = self.area[k] * (1.0 + width * u);
        // mean_frac < 65536, so the segment is below SEGMENTS.
        let at = f64::from(b.mean_frac) * (Self::SEGMENTS as f64 / 65536.0);
        let seg = (at as usize).min(Self::SEGMENTS - 1);
        let t = at - seg as f64;
        let (f0, f1) = (self.frac[seg], self.frac[seg + 1]);
        (mean, self.pow[k] * (f0 + (f1 - f0) * t))
    }
}

/// A resolve thread's working memory, kept from cell to cell.
#[derive(Default)]
pub struct Scratch {
    xs: Vec<(i64, f64, f64)>,
    ys: Vec<(i64, f64, f64)>,
    /// Whether the cell's blocks reach pixel pair (xs[i], ys[j]), at `i · ys.len() + j`.
    reach: Vec<bool>,
    /// A cell of few blocks' pixels: (x, y, Σo, Σo^α).
    pixels: Vec<(i64, i64, f64, f64)>,
    /// The quarters of spot slices cut by a row edge (`profile_weights_split`), and one
    /// quarter's columns.
    split: Vec<SplitPart>,
    part_xs: Vec<(i64, f64, f64)>,
}

fn add_cell(
    ctx: &CellContext,
    kx: u64,
    cell: &CellRec,
    buckets: &[BucketRec],
    sums: &mut ColumnSums,
    s: &mut Scratch,
) {
    if cell.n <= 0.0 {
        return;
    }
    // The cell's corner in pixels: left edge, and the bottom edge (low address; y grows down).
    let cx0 = (kx as f64 * ctx.tau - ctx.t_origin) / ctx.pw;
    let cy_bottom = ctx.height - (cell.ky as f64 * ctx.sig - ctx.a_origin) / ctx.ph;
    // A cell whose blocks cannot reach the columns held adds nothing to them: its blocks lie
    // in its bounding box (a cell of few blocks: also at its centres, `add_few`), widened by
    // less than a pixel where the box is narrower than a block.
    let (xb0, xb1) = (
        cx0 + cell.bbox_at(0) * ctx.rx,
        cx0 + cell.bbox_at(1) * ctx.rx,
    );
    let few = cell.few();
    if few.is_none()
        && (ffloor(xb0.max(xb1)) + 1.0 < ctx.held[0] as f64
            || ffloor(xb0.min(xb1)) - 1.0 >= ctx.held[1] as f64)
    {
        return;
    }
    // The cell's blocks, α applied: f̄^α per bucket with a second-order (Jensen) correction for
    // the spread of areas inside the bucket.
    let alpha = ctx.alpha;
    let (mut f_sum, mut t_sum, mut s_sum) = (0.0f64, 0.0f64, 0.0f64);
    let mut c_sum = [0.0f64; 3];
    for b in buckets {
        let n = f64::from(b.n);
        if n <= 0.0 {
            continue;
        }
        let (mean, mean_pow) = ctx.bucket_pow.of(b);
        let j = (1.0 + alpha * (alpha - 1.0) / 2.0 * b.cv2()).max(0.0);
        let nw = n * mean_pow * j;
        f_sum += nw;
        let c = b.color();
        for k in 0..3 {
            c_sum[k] += c[k] * nw;
        }
        t_sum += b.attr() * nw;
        s_sum += n * mean;
    }
    if let Some(few) = few {
        add_few(
            ctx,
            [cx0, cy_bottom],
            cell,
            few,
            CellSums {
                f: f_sum,
                c: c_sum,
                t: t_sum,
                s: s_sum,
            },
            sums,
            s,
        );
        return;
    }
    // Where the blocks lie: along each axis, their centres spread over the occupied slices
    // of the cell's profile, kept inside the bounding box of their extents.
    let bw = f64::from(cell.mean_w) * ctx.rx;
    let bh = f64::from(cell.mean_h) * ctx.ry;
    profile_weights(
        &AxisCell {
            origin: cx0,
            scale: ctx.rx,
            bbox: [cell.bbox_at(0), cell.bbox_at(1)],
            profile: &cell.profile_x,
            extent: bw,
            spots: [SpotSlice::NONE; 2],
            split_spots: false,
        },
        ctx.alpha,
        ctx.w,
        &mut s.xs,
    );
    if s.xs.is_empty() {
        return;
    }
    profile_weights_split(
        &AxisCell {
            origin: cy_bottom,
            scale: -ctx.ry,
            bbox: [cell.bbox_at(2), cell.bbox_at(3)],
            profile: &cell.profile_y,
            extent: bh,
            spots: cell.spots_y(),
            split_spots: cell.spot_x != [0; 2 * SPOT_QUARTERS],
        },
        ctx.alpha,
        ctx.h,
        &mut s.ys,
        &mut s.split,
    );
    let h = ctx.h as usize;
    let add = |sums: &mut ColumnSums, i: usize, g: f64, e1: f64| {
        let a = &mut sums.acc[i];
        match ctx.mode {
            ColorMode::Categorical => {
                for k in 0..3 {
                    a[k] += (c_sum[k] * g) as f32;
                }
            }
            ColorMode::Quantitative => {
                a[0] += (t_sum * g) as f32;
                a[1] += (f_sum * g) as f32;
            }
        }
        a[3] += (f_sum * g) as f32;
        sums.cov[i] += (s_sum * e1) as f32;
    };
    // A spot slice cut by a row edge: each quarter's blocks in the columns of its own x
    // eighths (`CellRec::spot_x`), not the cell's.
    let mut from = 0;
    while from < s.split.len() {
        let part = s.split[from].part;
        let to = from
            + s.split[from..]
                .iter()
                .take_while(|p| p.part == part)
                .count();
        let eighths = cell.spot_x_eighths(part / SPOT_QUARTERS, part % SPOT_QUARTERS);
        let per = PROFILE_BINS / MASK_BINS;
        let masked: [u8; PROFILE_BINS] = std::array::from_fn(|j| {
            if eighths & (1 << (j / per)) != 0 {
                cell.profile_x[j]
            } else {
                0
            }
        });
        let profile = if masked.iter().any(|&v| v > 0) {
            &masked
        } else {
            &cell.profile_x
        };
        let x_axis = AxisCell {
            origin: cx0,
            scale: ctx.rx,
            bbox: [cell.bbox_at(0), cell.bbox_at(1)],
            profile,
            extent: bw,
            spots: [SpotSlice::NONE; 2],
            split_spots: false,
        };
        profile_weights(&x_axis, ctx.alpha, ctx.w, &mut s.part_xs);
        for &(px, ex, gx) in &s.part_xs {
            if px < ctx.held[0] || px >= ctx.held[1] {
                continue;
            }
            let col = (px - ctx.held[0]) as usize * h;
            for p in &s.split[from..to] {
                add(sums, col + p.pixel as usize, gx * p.ea, ex * p.e1);
            }
        }
        from = to;
    }
    if s.ys.is_empty() {
        return;
    }
    let [scale_1, scale_a] = reach(ctx, cx0, cy_bottom, cell, s);
    let ny = s.ys.len();
    for (xi, &(px, ex, gx)) in s.xs.iter().enumerate() {
        if px < ctx.held[0] || px >= ctx.held[1] {
            continue;
        }
        let col = (px - ctx.held[0]) as usize * h;
        for (yi, &(py, ey, gy)) in s.ys.iter().enumerate() {
            if !s.reach[xi * ny + yi] {
                continue;
            }
            add(
                sums,
                col + py as usize,
                gx * gy * scale_a,
                ex * ey * scale_1,
            );
        }
    }
}

/// A cell's blocks' sums, α applied (`add_cell`).
struct CellSums {
    f: f64,
    c: [f64; 3],
    t: f64,
    s: f64,
}

/// A cell of few blocks, whose centres it keeps: each a block of the cell's mean size there
/// (inside the cell's bounding box), its coverage of each pixel exact.
fn add_few(
    ctx: &CellContext,
    corner: [f64; 2],
    cell: &CellRec,
    few: impl Iterator<Item = [f64; 2]>,
    cs: CellSums,
    sums: &mut ColumnSums,
    s: &mut Scratch,
) {
    let [cx0, cy_bottom] = corner;
    let (bw, bh) = (
        (f64::from(cell.mean_w) * ctx.rx).clamp(0.0, 1.0),
        (f64::from(cell.mean_h) * ctx.ry).clamp(0.0, 1.0),
    );
    let (xb0, xb1) = (
        cx0 + cell.bbox_at(0) * ctx.rx,
        cx0 + cell.bbox_at(1) * ctx.rx,
    );
    let (yb0, yb1) = (
        cy_bottom - cell.bbox_at(3) * ctx.ry,
        cy_bottom - cell.bbox_at(2) * ctx.ry,
    );
    // Pixels along an axis a span [a, b] of length `len` covers, with the fraction in each.
    fn spans(a: f64, b: f64, len: f64, out: &mut Vec<(i64, f64, f64)>) {
        out.clear();
        let (p0, p1) = (ffloor(a), ffloor(b));
        // A span of a cell's box is a few pixels long; one far longer (or where `p + 1 == p`)
        // comes from corrupted records: one pixel, not a loop without end.
        let long = p1 - p0 > 64.0 || (p1 - p0).is_nan();
        if p0 == p1 || len <= 1e-12 || long || p0 + 1.0 == p0 {
            out.push((p0 as i64, 1.0, 0.0));
            return;
        }
        let mut p = p0;
        while p <= p1 {
            let l = (b.min(p + 1.0) - a.max(p)).max(0.0) / len;
            if l > 0.0 {
                out.push((p as i64, l.min(1.0), 0.0));
            }
            p += 1.0;
        }
    }
    let mut centres = [[0.0f64; 2]; FEW_BLOCKS];
    let mut k = 0usize;
    for (slot, c) in centres.iter_mut().zip(few) {
        *slot = c;
        k += 1;
    }
    let centres = &centres[..k];
    if k == 0 {
        return;
    }
    // The pixels the blocks may cover: inside the bounding box, or at a centre outside it.
    let (mut lo, mut hi) = ([xb0, yb0], [xb1, yb1]);
    for &[u, v] in centres {
        let (x, y) = (cx0 + u * ctx.rx, cy_bottom - v * ctx.ry);
        lo = [lo[0].min(x), lo[1].min(y)];
        hi = [hi[0].max(x), hi[1].max(y)];
    }
    let (p_lo, p_hi) = (
        [ffloor(lo[0]), ffloor(lo[1])],
        [ffloor(hi[0]), ffloor(hi[1])],
    );
    if p_hi[0] < ctx.held[0] as f64 || p_lo[0] >= ctx.held[1] as f64 {
        return;
    }
    if p_lo == p_hi {
        // One pixel holds every block whole (o = 1 each): what the loop below adds there, k
        // times E[o] = 1 and o^α = fast_pow(1, α), exactly (k ≤ 16 copies of an f32 sum
        // exactly in f64).
        add_few_pixel(
            ctx,
            [p_lo[0] as i64, p_lo[1] as i64],
            1.0,
            ctx.pow_one,
            &cs,
            sums,
        );
        return;
    }
    let mut pixels = std::mem::take(&mut s.pixels);
    pixels.clear();
    // The blocks of the outermost centres reach the bounding box (what the box says: some
    // block does; a sliver over a pixel edge weighs much at low α).
    // In one pass; of equal centres the last, as `max_by` picks them.
    let (mut left, mut right, mut bottom, mut top) = (0, 0, 0, 0);
    for (i, c) in centres.iter().enumerate().skip(1) {
        use std::cmp::Ordering::{Greater, Less};
        if c[0].total_cmp(&centres[left][0]) != Greater {
            left = i;
        }
        if c[0].total_cmp(&centres[right][0]) != Less {
            right = i;
        }
        if c[1].total_cmp(&centres[bottom][1]) != Greater {
            bottom = i;
        }
        if c[1].total_cmp(&centres[top][1]) != Less {
            top = i;
        }
    }
    for (i, &[u, v]) in centres.iter().enumerate() {
        let x = cx0 + u * ctx.rx;
        let y = cy_bottom - v * ctx.ry;
        let (mut x0, mut x1) = ((x - bw / 2.0).max(xb0), (x + bw / 2.0).min(xb1));
        let (mut y0, mut y1) = ((y - bh / 2.0).max(yb0), (y + bh / 2.0).min(yb1));
        if i == left {
            x0 = xb0;
        }
        if i == right {
            x1 = xb1;
        }
        // Rows grow downwards: the top is the low pixel coordinate.
        if i == top {
            y0 = yb0;
        }
        if i == bottom {
            y1 = yb1;
        }
        let (x0, x1) = if x0 <= x1 { (x0, x1) } else { (x, x) };
        let (y0, y1) = if y0 <= y1 { (y0, y1) } else { (y, y) };
        let (px, py) = (ffloor(x0), ffloor(y0));
        if px == ffloor(x1) && py == ffloor(y1) {
            // Whole in one pixel (what `spans` gives there, o = 1), without the spans.
            let (px, py) = (px as i64, py as i64);
            if px < ctx.held[0] || px >= ctx.held[1] {
                continue;
            }
            match pixels.iter_mut().find(|p| p.0 == px && p.1 == py) {
                Some(p) => {
                    p.2 += 1.0;
                    p.3 += ctx.pow_one;
                }
                None => pixels.push((px, py, 1.0, ctx.pow_one)),
            }
            continue;
        }
        spans(x0, x1, x1 - x0, &mut s.xs);
        spans(y0, y1, y1 - y0, &mut s.ys);
        for &(px, ox, _) in &s.xs {
            // Pixels outside the columns held add nothing here (`add_few_pixel`).
            if px < ctx.held[0] || px >= ctx.held[1] {
                continue;
            }
            for &(py, oy, _) in &s.ys {
                let o = ox * oy;
                // A block whole in the pixel (the usual case zoomed out): 1^α once per strip.
                let oa = if o == 1.0 {
                    ctx.pow_one
                } else {
                    f64::from(crate::eq1::fast_pow(o as f32, ctx.alpha as f32))
                };
                match pixels.iter_mut().find(|p| p.0 == px && p.1 == py) {
                    Some(p) => {
                        p.2 += o;
                        p.3 += oa;
                    }
                    None => pixels.push((px, py, o, oa)),
                }
            }
        }
    }
    let k = k as f64;
    for &(px, py, e1, ea) in &pixels {
        add_few_pixel(ctx, [px, py], e1 / k, ea / k, &cs, sums);
    }
    s.pixels = pixels;
}

/// Adds a cell of few blocks to pixel `[px, py]` (skipped outside the columns held and the
/// view): E[o] `e1` and E[o^α] `g` of its blocks there.
#[inline]
fn add_few_pixel(
    ctx: &CellContext,
    [px, py]: [i64; 2],
    e1: f64,
    g: f64,
    cs: &CellSums,
    sums: &mut ColumnSums,
) {
    if px < ctx.held[0] || py < 0 || px >= ctx.held[1].min(ctx.w) || py >= ctx.h {
        return;
    }
    let i = (px - ctx.held[0]) as usize * ctx.h as usize + py as usize;
    let a = &mut sums.acc[i];
    match ctx.mode {
        ColorMode::Categorical => {
            for (v, c) in a.iter_mut().zip(cs.c) {
                *v += (c * g) as f32;
            }
        }
        ColorMode::Quantitative => {
            a[0] += (cs.t * g) as f32;
            a[1] += (cs.f * g) as f32;
        }
    }
    a[3] += (cs.f * g) as f32;
    sums.cov[i] += (cs.s * e1) as f32;
}

/// Which pixel pairs of `s.xs × s.ys` the cell's blocks reach together (`s.reach`), from its
/// joint mask: a pair is reached when an occupied eighth overlaps both pixels, an eighth
/// spanning the occupied profile slices inside it, widened by half the blocks' mean extent. The
/// expected overlaps of the pairs not reached go to those reached (their sum is kept): returns
/// the factors of E[o] and E[o^α].
fn reach(ctx: &CellContext, cx0: f64, cy_bottom: f64, cell: &CellRec, s: &mut Scratch) -> [f64; 2] {
    let (nx, ny) = (s.xs.len(), s.ys.len());
    s.reach.clear();
    s.reach.resize(nx * ny, true);
    if cell.mask == 0 || nx * ny <= 1 {
        return [1.0, 1.0];
    }
    let (hw, hh) = (f64::from(cell.mean_w) / 2.0, f64::from(cell.mean_h) / 2.0);
    // The eighths along an axis whose centres (the occupied slices of the profile inside
    // them, widened) overlap the pixel's span [u0, u1] (cell units), as 8 bits.
    let per = PROFILE_BINS / MASK_BINS;
    let eighths = |profile: &[u8; PROFILE_BINS], u0: f64, u1: f64, half: f64| -> u64 {
        (0..MASK_BINS)
            .filter(|&q| {
                let slices = &profile[q * per..(q + 1) * per];
                let (Some(first), Some(last)) = (
                    slices.iter().position(|&v| v > 0),
                    slices.iter().rposition(|&v| v > 0),
                ) else {
                    return false;
                };
                let a = (q * per + first) as f64 / PROFILE_BINS as f64 - half;
                let b = (q * per + last + 1) as f64 / PROFILE_BINS as f64 + half;
                a < u1 && b > u0
            })
            .fold(0, |m, q| m | (1 << q))
    };
    // The rows' eighths (a cell spans a few pixels at most: `profile_weights`).
    let mut ys = [0u64; 8];
    for (q, &(py, _, _)) in ys.iter_mut().zip(&s.ys) {
        // Rows grow downwards, addresses upwards.
        *q = eighths(
            &cell.profile_y,
            (cy_bottom - py as f64 - 1.0) / ctx.ry,
            (cy_bottom - py as f64) / ctx.ry,
            hh,
        );
    }
    let (mut all, mut hit) = ([0.0f64; 2], [0.0f64; 2]);
    for (xi, &(px, ex, gx)) in s.xs.iter().enumerate() {
        let qx = eighths(
            &cell.profile_x,
            (px as f64 - cx0) / ctx.rx,
            (px as f64 + 1.0 - cx0) / ctx.rx,
            hw,
        );
        for (yi, &(_, ey, gy)) in s.ys.iter().enumerate() {
            let qy = ys.get(yi).copied().unwrap_or(u64::MAX);
            let reached =
                (0..MASK_BINS).any(|j| qy & (1 << j) != 0 && (cell.mask >> (8 * j)) & qx != 0);
            all[0] += ex * ey;
            all[1] += gx * gy;
            if reached {
                hit[0] += ex * ey;
                hit[1] += gx * gy;
            }
            s.reach[xi * ny + yi] = reached;
        }
    }
    if hit[0] <= 0.0 || hit[1] <= 0.0 {
        // Nothing reached (rounding): the profiles alone.
        s.reach.fill(true);
        return [1.0, 1.0];
    }
    [all[0] / hit[0], all[1] / hit[1]]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_overlap_of_points_and_short_blocks() {
        // Points uniform on [0.5, 1.5]: half in pixel 0, half in pixel 1.
        let (e, ea) = expected_overlap(0.5, 1.5, 0.0, 0.0, 0.3);
        assert!((e - 0.5).abs() < 1e-12 && (ea - 0.5).abs() < 1e-12);
        // A single block of width 0.5 centred at 1.0 straddles pixels 0 and 1 evenly.
        let (e, ea) = expected_overlap(1.0, 1.0, 0.5, 0.0, 0.5);
        assert!((e - 0.5).abs() < 1e-12);
        assert!((ea - 0.5f64.powf(0.5)).abs() < 1e-6);
        // Numerical check of a ramp: centres uniform on [0.8, 1.2], width 0.4, pixel 1.
        let (lo, hi, w, alpha) = (0.8, 1.2, 0.4, 0.25);
        let (e, ea) = expected_overlap(lo, hi, w, 1.0, alpha);
        let n = 100_000;
        let (mut s1, mut sa) = (0.0, 0.0);
        for i in 0..n {
            let x = lo + (hi - lo) * (i as f64 + 0.5) / n as f64;
            let o: f64 = (((x + w / 2.0).min(2.0) - (x - w / 2.0).max(1.0)) / w).clamp(0.0, 1.0);
            s1 += o;
            sa += o.powf(alpha);
        }
        assert!((e - s1 / n as f64).abs() < 1e-6, "{e} {}", s1 / n as f64);
        assert!((ea - sa / n as f64).abs() < 1e-5, "{ea} {}", sa / n as f64);
    }

    /// A cell whose fullest address slice holds a line of blocks at one reused address,
    /// 0.3 of a profile quarter up (1/64 of the cell), and other blocks in another slice; a
    /// pixel row edge at 0.5 of that quarter, just past the line. The quarter's lines
    /// (`CellRec::spot_lines`) keep it in its own row; spread over the quarter (format 6,
    /// whose records read as unknown lines) 40 % of its centres lay in the next row. Two lines
    /// in it, either side of the edge, each in its own row by its share.
    #[test]
    fn a_line_of_reused_addresses_near_a_row_edge_stays_in_its_row() {
        use crate::encode::CellSums;
        const LINE: f64 = 200.0;
        const OTHERS: f64 = 100.0;
        let (j_line, i_line) = (5usize, 1usize);
        let quarter = 1.0 / (PROFILE_BINS * SPOT_QUARTERS) as f64;
        let y_line = (j_line * SPOT_QUARTERS + i_line) as f64 * quarter + 0.3 * quarter;
        let y_others = 12.5 / PROFILE_BINS as f64;
        let height = 0.002;
        let mut py = [0.0f32; PROFILE_BINS];
        let mut quarters = [[0.0f32; SPOT_QUARTERS]; PROFILE_BINS];
        let mut lines = [[[0.0f64; 3]; SPOT_QUARTERS]; PROFILE_BINS];
        py[j_line] = LINE as f32;
        quarters[j_line][i_line] = LINE as f32;
        lines[j_line][i_line] = [y_line, y_line, LINE * y_line];
        py[12] = OTHERS as f32;
        quarters[12][2] = OTHERS as f32;
        lines[12][2] = [y_others - 0.01, y_others + 0.01, OTHERS * y_others];
        let px = [1.0f32; PROFILE_BINS];
        let cell = CellRec::encode(&CellSums {
            ky: 0,
            bucket_first: 0,
            buckets: 1,
            n: LINE + OTHERS,
            lo: [0.0, (y_line - height / 2.0) as f32],
            hi: [1.0, (y_others + height / 2.0) as f32],
            sw: LINE + OTHERS,
            sh: (LINE + OTHERS) * height,
            px: &px,
            py: &py,
            py_quarters: Some(&quarters),
            py_quarters_x: None,
            py_quarters_lines: Some(&lines),
            mask: u64::MAX,
            few: &[],
        });
        assert_eq!(cell.spots_y()[0].slice, j_line);
        // The edge: pixel 10.0 at 0.5 of the line's quarter, cells 0.8 px tall, y downwards.
        let ry = 0.8;
        let y_edge = (j_line * SPOT_QUARTERS + i_line) as f64 * quarter + 0.5 * quarter;
        let origin = 10.0 + y_edge * ry;
        let weights = |cell: &CellRec| {
            let (mut out, mut split) = (Vec::new(), Vec::new());
            profile_weights_split(
                &AxisCell {
                    origin,
                    scale: -ry,
                    bbox: [cell.bbox_at(2), cell.bbox_at(3)],
                    profile: &cell.profile_y,
                    extent: f64::from(cell.mean_h) * ry,
                    spots: cell.spots_y(),
                    split_spots: true,
                },
                0.5,
                64,
                &mut out,
                &mut split,
            );
            // E[o^α] of the line's quarter (spot slice 0, quarter 1) in rows 9 and 10.
            let mut rows = [0.0f64; 2];
            for p in split.iter().filter(|p| p.part == i_line) {
                if let Some(r) = rows.get_mut((p.pixel - 9) as usize) {
                    *r += p.ea;
                }
            }
            rows
        };
        let share = f64::from(cell.profile_y[j_line])
            / f64::from(u32::from(cell.profile_y[j_line]) + u32::from(cell.profile_y[12]));
        let [above, own] = weights(&cell);
        assert!(above < 1e-9, "the line reached the row above: {above}");
        assert!((own - share).abs() < 1e-9, "{own} vs {share}");
        // Two lines in the quarter, 3 : 1, at 0.3 and 0.7 of it (the edge between them): each
        // in its own row by its share.
        let mut two = cell;
        let at = |f: f64| (j_line * SPOT_QUARTERS + i_line) as f64 * quarter + f * quarter;
        two.spot_lines[0] = CellRec::spot_lines_of(
            j_line,
            i_line,
            at(0.3),
            at(0.7),
            (3.0 * at(0.3) + at(0.7)) / 4.0,
        );
        let [above, own] = weights(&two);
        assert!(
            (above - 0.25 * share).abs() < 0.01,
            "{above} vs {}",
            0.25 * share
        );
        assert!(
            (own - 0.75 * share).abs() < 0.01,
            "{own} vs {}",
            0.75 * share
        );
        // Format 6's records (no lines): the quarter spread evenly, 40 % above the edge.
        let mut spread = cell;
        spread.spot_lines = CellRec::SPOT_LINES_UNKNOWN;
        let [above, own] = weights(&spread);
        assert!(above > 0.35 * share && own < 0.8 * share, "{above} {own}");
    }
}
