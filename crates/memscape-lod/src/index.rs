//! A built index, memory-mapped: its levels, their cells in a window, and the copied blocks of
//! size classes.

use std::path::Path;
use std::sync::Arc;

use memscape_map::{MappedSlice, Mapping};

use crate::format::{BucketRec, CellRec, ColumnRec, LevelDesc, Section};
use crate::view::{LodBlock, LodView};
use crate::{IndexMeta, LodError, MAGIC, VERSION};

/// One level, mapped.
pub struct Level {
    pub desc: LevelDesc,
    pub columns: MappedSlice<ColumnRec>,
    pub cells: MappedSlice<CellRec>,
    pub buckets: MappedSlice<BucketRec>,
}

impl Level {
    /// Cell width (time units) and height (bytes).
    pub fn cell_size(&self) -> [f64; 2] {
        [
            2f64.powi(i32::from(self.desc.log_tau)),
            2f64.powi(i32::from(self.desc.log_sig)),
        ]
    }

    /// Calls `f` with every cell with column in `[kx0, kx1]` and row in `[ky0, ky1]` (and its
    /// column).
    pub fn cells_in(&self, kx: [u64; 2], ky: [u64; 2], mut f: impl FnMut(u64, &CellRec)) {
        let cols = &self.columns[..];
        let cells = &self.cells[..];
        let first = cols.partition_point(|c| c.kx < kx[0]);
        let last = cols.partition_point(|c| c.kx <= kx[1]);
        let n_cells = cells.len() as u64;
        for i in first..last {
            let start = cols[i].first_cell.min(n_cells) as usize;
            let end = cols
                .get(i + 1)
                .map_or(n_cells, |c| c.first_cell.min(n_cells)) as usize;
            let col = &cells[start..end.max(start)];
            let a = col.partition_point(|c| c.ky < ky[0]);
            let b = col.partition_point(|c| c.ky <= ky[1]);
            for c in &col[a..b.max(a)] {
                f(cols[i].kx, c);
            }
        }
    }

    /// The buckets of `cell`.
    pub fn buckets_of(&self, cell: &CellRec) -> &[BucketRec] {
        let start = cell.bucket_first as usize;
        self.buckets
            .get(start..start + usize::from(cell.buckets))
            .unwrap_or(&[])
    }
}

/// The blocks of one size class, sorted by start: copied, or listed by block number.
pub struct Class {
    /// Lifetimes in `[2^c, 2^(c+1))`, sizes in `[2^d, 2^(d+1))`.
    pub c: u8,
    pub d: u8,
    pub members: Members,
}

pub enum Members {
    Copied(MappedSlice<LodBlock>),
    Listed(MappedSlice<u64>),
}

impl Class {
    /// Calls `f` with the members of part `part` of `parts` that start in `[t_lo, t_hi)`
    /// (`fetch` reads listed blocks from the trace).
    pub fn for_each_starting_in(
        &self,
        t: [f64; 2],
        part: usize,
        parts: usize,
        fetch: &dyn Fn(u64) -> Option<LodBlock>,
        f: &mut dyn FnMut(&LodBlock),
    ) {
        match &self.members {
            Members::Copied(blocks) => {
                let first = blocks.partition_point(|b| (b.t0 as f64) < t[0]);
                let last = blocks.partition_point(|b| (b.t0 as f64) < t[1]);
                let range = crate::resolve::part_range(last.saturating_sub(first), part, parts);
                for b in &blocks[first + range.start..first + range.end] {
                    f(b);
                }
            }
            Members::Listed(ids) => {
                let start = |i: &u64| fetch(*i).map_or(f64::INFINITY, |b| b.t0 as f64);
                let first = ids.partition_point(|i| start(i) < t[0]);
                let last = ids.partition_point(|i| start(i) < t[1]);
                let range = crate::resolve::part_range(last.saturating_sub(first), part, parts);
                for &id in &ids[first + range.start..first + range.end] {
                    if let Some(b) = fetch(id) {
                        f(&b);
                    }
                }
            }
        }
    }
}

/// How many pixels a level's cell may span in each direction (its blocks are smaller than a
/// cell: up to this wide, so their cushions are at most faintly visible, by
/// `(w − 1) / 3` of the slope). `MEMSCAPE_LOD_CELL_PIXELS` overrides it (experiments).
pub fn max_cell_pixels() -> f64 {
    std::env::var("MEMSCAPE_LOD_CELL_PIXELS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0 + 1e-9)
}

/// Small frames are drawn from finer cells ([`LodIndex::level_for_frame`]): a frame of
/// `w`×`h` pixels from the level a frame of `s·w`×`s·h` over the same window would use — cells
/// at most `1/s` px —, `s` the largest power of two up to [`DETAIL_SCALE_MAX`] with
/// `s²·w·h` at most this many pixels. A level of cells up to a pixel puts few cells in each
/// pixel of a small frame, and each pixel edge that cuts a cell splits its blocks by the cell's
/// profiles, not by where they are; at α 0.1 a sliver of coverage weighs much, and a small
/// frame has few pixels to spare: the 99.9 % rule allows 57 misses at 320×180, 14 at 160×90.
/// At 50 M events the whole view at 320×180 from cells 0.84 × 0.48 px missed it at α 0.1 and
/// 0.5 (58 and 62 misses), at 160×90 too (29 at α 0.1); from cells at most half a pixel (a
/// quarter at 160×90) 33 and 12, and 14 (issue 25, wave 29, BENCHMARKS.md). The cells in view
/// are then about those of a frame of this many pixels (960×540 is 0.52 M) whatever the
/// frame's size: the 320×180 resolve 0.10 → 0.13 CPU-s, where 2^20 (cells of 1280×720) took
/// 0.20, and 640×360's 0.22 → 0.30, over the 250 ms a frame may take; larger frames keep the
/// level of cells up to a pixel. `MEMSCAPE_LOD_DETAIL_PIXELS` overrides it (experiments; 0:
/// never finer).
pub const DETAIL_PIXELS: u64 = 1 << 19;

/// The finest a small frame's cells go: an eighth of a pixel (cells 64 times as many in view).
pub const DETAIL_SCALE_MAX: u64 = 8;

/// [`DETAIL_PIXELS`], or `MEMSCAPE_LOD_DETAIL_PIXELS` where set.
pub fn detail_pixels() -> u64 {
    std::env::var("MEMSCAPE_LOD_DETAIL_PIXELS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DETAIL_PIXELS)
}

/// The level a frame of `view` is drawn from where `level_for` (a level for pixels of a size:
/// [`LodIndex::level_for`], or the query engine's twin over its plan) finds one: the finest
/// `level_for` finds for pixels `1/s` as wide and tall, `s` as `budget` ([`DETAIL_PIXELS`]) allows, stopping
/// at the first size it finds none for. One rule for both builders' indexes.
pub fn level_for_frame_by(
    view: &LodView,
    budget: u64,
    level_for: impl Fn([f64; 2]) -> Option<usize>,
) -> Option<usize> {
    let pixel = view.pixel_size();
    let mut li = level_for(pixel)?;
    let pixels = u64::from(view.width) * u64::from(view.height);
    let mut s = 2u64;
    while s <= DETAIL_SCALE_MAX && s * s * pixels <= budget {
        let Some(finer) = level_for([pixel[0] / s as f64, pixel[1] / s as f64]) else {
            break;
        };
        li = finer;
        s *= 2;
    }
    Some(li)
}

/// How many pixels a level's cells may span in each direction where a view is finer than
/// every level but holds so many blocks that drawing each costs more than a slightly coarser
/// level ([`LodIndex::level_for_view`]). The lines of levels are a factor of 4 apart in shape
/// and 2 in each direction: at 1.5 px a 16:9 view 1/4 of a 50 M-event trace wide (pixels
/// 2^12.7 × 2^14.5 units) finds the level of cells 2^13 × 2^14 (1.26 × 0.71 px).
/// `MEMSCAPE_LOD_COARSE_CELL_PIXELS` overrides it (experiments).
pub const COARSE_CELL_PIXELS: f64 = 1.5;

/// When a view finer than every level is drawn from a coarse level instead of its blocks
/// ([`LodIndex::level_for_view_with`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CoarseRule {
    /// Cells at most this many pixels in each direction.
    pub cell_pixels: f64,
    /// Only views with at least this many blocks (summarised by the level's cells in view):
    /// fewer are drawn exactly whatever a level costs (1 M blocks ≈ 0.13 s of CPU at the exact
    /// sums' 0.13 µs a block: BENCHMARKS.md, wave 12), so small traces keep their exact frames.
    pub min_blocks: f64,
    /// And only where the blocks are more than this many times the level's cells in view (a
    /// cell with its share of large blocks cost ≈ 2–3 exact blocks in the level frames of
    /// waves 12–14).
    pub blocks_per_cell: f64,
}

impl Default for CoarseRule {
    fn default() -> Self {
        Self {
            cell_pixels: std::env::var("MEMSCAPE_LOD_COARSE_CELL_PIXELS")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(COARSE_CELL_PIXELS),
            min_blocks: 1_000_000.0,
            blocks_per_cell: 4.0,
        }
    }
}

/// Among levels of cells 2^log_tau × 2^log_sig (`sizes`), those at most `cell_pixels` pixels
/// of `pixel` in both directions, the one that spans the fewest pixels in its larger direction
/// (the least blur), of those the largest cells; its position in `sizes`.
pub fn coarse_level_among(sizes: &[[u8; 2]], pixel: [f64; 2], cell_pixels: f64) -> Option<usize> {
    let mut best: Option<(usize, f64, i32)> = None;
    for (i, &[log_tau, log_sig]) in sizes.iter().enumerate() {
        let over = (2f64.powi(i32::from(log_tau)) / pixel[0])
            .max(2f64.powi(i32::from(log_sig)) / pixel[1]);
        if over > cell_pixels {
            continue;
        }
        let size = i32::from(log_tau) + i32::from(log_sig);
        if best.is_none_or(|(_, o, s)| over < o - 1e-9 || (over < o + 1e-9 && size > s)) {
            best = Some((i, over, size));
        }
    }
    best.map(|(i, _, _)| i)
}

/// An index file, mapped.
pub struct LodIndex {
    pub meta: IndexMeta,
    pub levels: Vec<Level>,
    pub classes: Vec<Class>,
    /// The heap-size curve's levels (`log_bin`, bins), finest first.
    pub curve: Vec<(u8, MappedSlice<crate::curve::CurveBin>)>,
    /// The pixel budget of small frames' finer cells ([`DETAIL_PIXELS`], read once when the
    /// index opens: `MEMSCAPE_LOD_DETAIL_PIXELS`); a caller may set it (tests of a level
    /// change on a small trace, whose small frames all reach its finest level).
    pub detail_pixels: u64,
    map: Arc<Mapping>,
}

impl LodIndex {
    /// Maps the index at `path` and checks its header and sections.
    pub fn open(path: &Path) -> Result<Self, LodError> {
        let file = std::fs::File::open(path).map_err(|e| LodError::io(path, e))?;
        let map = Mapping::new(&file).map_err(|e| LodError::io(path, e))?;
        let bytes = map.bytes();
        let bad = |what: &str| LodError::Format(format!("{}: {what}", path.display()));
        if bytes.len() < 8 || &bytes[..8] != MAGIC {
            return Err(bad("not a memscape level-of-detail index (bad magic)"));
        }
        if bytes.len() < 20 {
            return Err(bad(&format!(
                "truncated header: {} bytes, expected at least 20",
                bytes.len()
            )));
        }
        let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
        if version != VERSION {
            return Err(bad(&format!("version {version}, expected {VERSION}")));
        }
        let mut len8 = [0u8; 8];
        len8.copy_from_slice(&bytes[12..20]);
        let json_len = u64::from_le_bytes(len8);
        let json_end = 20u64
            .checked_add(json_len)
            .filter(|&e| e <= bytes.len() as u64)
            .ok_or_else(|| bad("header longer than the file"))?;
        let meta: IndexMeta = serde_json::from_slice(&bytes[20..json_end as usize])
            .map_err(|e| bad(&format!("header: {e}")))?;
        let data = json_end.next_multiple_of(8) as usize;
        let slice = |s: Section, size: usize, what: &str| -> Result<(usize, usize), LodError> {
            let off = usize::try_from(s.offset)
                .ok()
                .and_then(|o| o.checked_add(data))
                .ok_or_else(|| bad(what))?;
            let len = usize::try_from(s.len).map_err(|_| bad(what))?;
            if len % size != 0 {
                return Err(bad(what));
            }
            Ok((off, len / size))
        };
        let mut levels = Vec::new();
        for d in &meta.levels {
            let (co, cn) = slice(d.columns, 16, "level columns")?;
            let (lo, ln) = slice(d.cells, std::mem::size_of::<CellRec>(), "level cells")?;
            let (bo, bn) = slice(d.buckets, 16, "level buckets")?;
            let columns = MappedSlice::new(Arc::clone(&map), co, cn)
                .ok_or_else(|| bad("level columns outside the file"))?;
            let cells = MappedSlice::new(Arc::clone(&map), lo, ln)
                .ok_or_else(|| bad("level cells outside the file"))?;
            let buckets = MappedSlice::new(Arc::clone(&map), bo, bn)
                .ok_or_else(|| bad("level buckets outside the file"))?;
            levels.push(Level {
                desc: *d,
                columns,
                cells,
                buckets,
            });
        }
        let mut classes = Vec::new();
        for c in &meta.classes {
            let members = if c.copied {
                let (o, n) = slice(c.blocks, 40, "class blocks")?;
                Members::Copied(
                    MappedSlice::new(Arc::clone(&map), o, n)
                        .ok_or_else(|| bad("class blocks outside the file"))?,
                )
            } else {
                let (o, n) = slice(c.blocks, 8, "class block numbers")?;
                Members::Listed(
                    MappedSlice::new(Arc::clone(&map), o, n)
                        .ok_or_else(|| bad("class block numbers outside the file"))?,
                )
            };
            classes.push(Class {
                c: c.c,
                d: c.d,
                members,
            });
        }
        let mut curve = Vec::new();
        for c in &meta.curve {
            let (o, n) = slice(
                c.bins,
                std::mem::size_of::<crate::curve::CurveBin>(),
                "curve bins",
            )?;
            curve.push((
                c.log_bin,
                MappedSlice::new(Arc::clone(&map), o, n)
                    .ok_or_else(|| bad("curve bins outside the file"))?,
            ));
        }
        Ok(Self {
            meta,
            levels,
            classes,
            curve,
            detail_pixels: detail_pixels(),
            map,
        })
    }

    /// Bytes of the mapped file.
    pub fn file_len(&self) -> usize {
        self.map.len()
    }

    /// Whether a level applies to a view with pixels of `pixel` (time units × bytes), and which
    /// a large frame is drawn from: among the levels whose cells are at most
    /// [`max_cell_pixels`] pixels in both directions, the one with the largest cells (small
    /// frames go finer: [`Self::level_for_frame`]). `None`: the view is finer than every level
    /// (draw its blocks exactly).
    pub fn level_for(&self, pixel: [f64; 2]) -> Option<usize> {
        let slack = max_cell_pixels();
        let mut best: Option<(usize, i32)> = None;
        for (i, l) in self.levels.iter().enumerate() {
            let [tau, sig] = l.cell_size();
            if tau <= pixel[0] * slack && sig <= pixel[1] * slack {
                let size = i32::from(l.desc.log_tau) + i32::from(l.desc.log_sig);
                if best.is_none_or(|(_, s)| size > s) {
                    best = Some((i, size));
                }
            }
        }
        best.map(|(i, _)| i)
    }

    /// The level a frame of `view` is drawn from where [`Self::level_for`] finds one (`None`
    /// where it does not): for frames of few pixels a finer one ([`level_for_frame_by`],
    /// [`DETAIL_PIXELS`]). The CPU resolve ([`Self::level_for_view`]) and the GPU's
    /// (memscape-views' `prepare_gpu_cells`) both draw from it.
    pub fn level_for_frame(&self, view: &LodView) -> Option<usize> {
        level_for_frame_by(view, self.detail_pixels, |pixel| self.level_for(pixel))
    }

    /// The level `view` is drawn from: [`Self::level_for_frame`], else (the view is finer than
    /// every level) a level of cells at most [`COARSE_CELL_PIXELS`] where the view's blocks are
    /// many ([`CoarseRule`]); `None`: draw its blocks exactly.
    pub fn level_for_view(&self, view: &LodView) -> Option<usize> {
        self.level_for_view_with(view, &CoarseRule::default())
    }

    /// [`Self::level_for_view`] by `rule`.
    pub fn level_for_view_with(&self, view: &LodView, rule: &CoarseRule) -> Option<usize> {
        if let Some(li) = self.level_for_frame(view) {
            return Some(li);
        }
        let pixel = view.pixel_size();
        let li = self.coarse_level_for(pixel, rule.cell_pixels)?;
        let (cells, blocks) = self.load_in(li, view.window());
        (blocks >= rule.min_blocks && blocks >= rule.blocks_per_cell * cells as f64).then_some(li)
    }

    /// [`coarse_level_among`] this index's levels.
    pub fn coarse_level_for(&self, pixel: [f64; 2], cell_pixels: f64) -> Option<usize> {
        let sizes: Vec<[u8; 2]> = self
            .levels
            .iter()
            .map(|l| [l.desc.log_tau, l.desc.log_sig])
            .collect();
        coarse_level_among(&sizes, pixel, cell_pixels)
    }

    /// About how many blocks small at the finest level meet `window`: those its cells there
    /// summarise (read from the index, in work bounded by its cells in view).
    pub fn small_blocks_in(&self, window: ([f64; 2], [f64; 2])) -> f64 {
        let finest = self
            .levels
            .iter()
            .enumerate()
            .min_by_key(|(_, l)| u16::from(l.desc.log_tau) + u16::from(l.desc.log_sig));
        finest.map_or(0.0, |(li, _)| self.load_in(li, window).1)
    }

    /// Level `li`'s cells meeting `window` (time × bytes) and the blocks they summarise: the
    /// cost of drawing it there against the exact blocks'.
    pub fn load_in(&self, li: usize, window: ([f64; 2], [f64; 2])) -> (u64, f64) {
        let Some(level) = self.levels.get(li) else {
            return (0, 0.0);
        };
        let [tau, sig] = level.cell_size();
        let (wt, wa) = window;
        let k = |v: f64, s: f64| (v / s).floor().max(0.0) as u64;
        let (mut cells, mut blocks) = (0u64, 0.0f64);
        level.cells_in(
            [k(wt[0], tau), k(wt[1], tau)],
            [k(wa[0], sig), k(wa[1], sig)],
            |_, c| {
                cells += 1;
                blocks += f64::from(c.n);
            },
        );
        (cells, blocks)
    }

    /// The heap-size curve of `[t0, t1)` (time units) in `columns` columns: each column's
    /// lowest, highest and last live bytes, read from the level whose bins fit a column
    /// (`curve::read`; work bounded by `columns`).
    pub fn heap_curve(&self, t: [u64; 2], columns: usize) -> Vec<crate::curve::CurveBin> {
        let levels: Vec<(u8, &[crate::curve::CurveBin])> =
            self.curve.iter().map(|(l, b)| (*l, &b[..])).collect();
        crate::curve::read(&levels, t, columns)
    }

    /// Calls `f` with every copied block that is large at `level` (at least a cell wide or
    /// tall) and meets the window `[t0, t1) × [a0, a1)`.
    pub fn large_blocks(
        &self,
        level: &LevelDesc,
        window: ([f64; 2], [f64; 2]),
        part: usize,
        parts: usize,
        fetch: &dyn Fn(u64) -> Option<LodBlock>,
        mut f: impl FnMut(&LodBlock),
    ) {
        let (wt, wa) = window;
        for class in &self.classes {
            let large_t = class.c >= level.log_tau;
            let large_y = class.d >= level.log_sig;
            if !large_t && !large_y {
                continue;
            }
            // Lifetimes below 2^(c+1): blocks meeting [t0, t1) start after t0 − 2^(c+1).
            let reach = 2f64.powi(i32::from(class.c) + 1);
            let lo = (wt[0] - reach).max(0.0);
            class.for_each_starting_in([lo, wt[1]], part, parts, fetch, &mut |b| {
                if (b.t1 as f64) <= wt[0]
                    || (b.y.saturating_add(b.size) as f64) <= wa[0]
                    || b.y as f64 >= wa[1]
                {
                    return;
                }
                if b.width() >= 1u64 << level.log_tau || b.size >= 1u64 << level.log_sig {
                    f(b);
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Levels of cells 2^a × 2^b among `sizes` for pixels of `pixel`, as `LodIndex::level_for`
    /// picks them (the largest cells at most a pixel in both directions).
    fn level_among(sizes: &[[i32; 2]], pixel: [f64; 2]) -> Option<usize> {
        let mut best: Option<(usize, i32)> = None;
        for (i, &[a, b]) in sizes.iter().enumerate() {
            if 2f64.powi(a) <= pixel[0] && 2f64.powi(b) <= pixel[1] {
                let size = a + b;
                if best.is_none_or(|(_, s)| size > s) {
                    best = Some((i, size));
                }
            }
        }
        best.map(|(i, _)| i)
    }

    #[test]
    fn small_frames_go_finer_within_the_pixel_budget_and_large_ones_do_not() {
        // One line of levels, each half the last in both directions: 2^26 × 2^26 down to 2^10.
        let sizes: Vec<[i32; 2]> = (0..=16).map(|k| [26 - k, 26 - k]).collect();
        let level = |w: u32, h: u32, span: f64| {
            let v = LodView::fit(0, span as u64, 0, span as u64, w, h);
            level_for_frame_by(&v, DETAIL_PIXELS, |p| level_among(&sizes, p))
        };
        let span = 2f64.powi(28);
        // 1920×1080 (over the budget): the level of cells up to a pixel, as `level_for`.
        let v = LodView::fit(0, span as u64, 0, span as u64, 1920, 1080);
        assert_eq!(level(1920, 1080, span), level_among(&sizes, v.pixel_size()));
        // 320×180 (s = 2: 230,400 virtual pixels; s = 4 would be 921,600): one level finer.
        let v = LodView::fit(0, span as u64, 0, span as u64, 320, 180);
        let base = level_among(&sizes, v.pixel_size()).unwrap();
        assert_eq!(level(320, 180, span), Some(base + 1));
        // 160×90: s = 4, two levels finer; 64×32: s = 8 at most, three.
        let v = LodView::fit(0, span as u64, 0, span as u64, 160, 90);
        let base = level_among(&sizes, v.pixel_size()).unwrap();
        assert_eq!(level(160, 90, span), Some(base + 2));
        let v = LodView::fit(0, span as u64, 0, span as u64, 64, 32);
        let base = level_among(&sizes, v.pixel_size()).unwrap();
        assert_eq!(level(64, 32, span), Some(base + 3));
        // No finer level: the finest there is (2^21, for pixels of 2^22 × 2^23); no level at
        // all: none.
        let coarse = &sizes[..=5];
        let v = LodView::fit(0, span as u64, 0, span as u64, 64, 32);
        assert_eq!(
            level_for_frame_by(&v, DETAIL_PIXELS, |p| level_among(coarse, p)),
            Some(5)
        );
        assert_eq!(level_for_frame_by(&v, DETAIL_PIXELS, |_| None), None);
        // A budget of 0: never finer.
        let v = LodView::fit(0, span as u64, 0, span as u64, 160, 90);
        assert_eq!(
            level_for_frame_by(&v, 0, |p| level_among(&sizes, p)),
            level_among(&sizes, v.pixel_size())
        );
    }
}
