//! Building the index in one pass over the blocks in allocation order (streaming, bounded
//! memory): each block is summarised into the finest level where it is small on every line of
//! levels, and each completed column of a level is written out and merged into the next coarser
//! level of its line. Blocks that are large at some level are copied, by size class, so that a
//! view finds them without scanning the trace.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::encode::{BucketSums as BucketAcc, CellSums};
use crate::format::{
    BucketRec, CellRec, ClassDesc, ColumnRec, FEW_BLOCKS, LevelDesc, PROFILE_BINS, SPOT_QUARTERS,
    Section,
};
use crate::view::LodBlock;
use crate::{IndexMeta, LodError, MAGIC, VERSION};

/// Blocks of at least 2^12 bytes that are large somewhere are copied (not listed by number):
/// wide views meet many of them.
pub const COPY_MIN_SIZE_CLASS: u8 = 12;

/// Choices of the builder.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BuildParams {
    /// Lines of levels by anisotropy `a` = time level − address level (0: cells shaped like the
    /// whole plane; > 0: finer in time, for views zoomed in time; < 0: finer in addresses).
    pub lines: Vec<i32>,
    /// A level's grid has at most `blocks × max_cells_per_block` cells over the trace's
    /// extent, so that every level summarises at least `1 / max_cells_per_block` blocks per
    /// cell on average ([`level_specs`]); a big trace's, where that is more than
    /// `max(scale_from_cells, blocks × scale_cells_per_block)`, at most the latter
    /// ([`Self::max_cells`]).
    pub max_cells_per_block: f64,
    /// Cells a block of a big trace's grids (wave 32: an index's bytes are mostly its finest
    /// levels; before it, `max_cells_per_block` for every trace).
    #[serde(default = "no_scale_budget")]
    pub scale_cells_per_block: f64,
    /// The grids' size from which `scale_cells_per_block` applies.
    #[serde(default = "no_scale_budget")]
    pub scale_from_cells: f64,
    /// Lines whose grids have at most a quarter of a big trace's budget: one level fewer. An
    /// index's bytes are mostly its finest levels, and a view whose pixels' shape lies between
    /// two lines is drawn from the finer one's cells (wave 32). Indexes before it: none.
    #[serde(default)]
    pub thin_lines: Vec<i32>,
}

/// The scale budget of an index written before wave 32: none (`max_cells_per_block` alone;
/// finite, so that a header read and written again stays JSON that reads back).
fn no_scale_budget() -> f64 {
    f64::MAX
}

impl BuildParams {
    /// The most cells a grid of line `line` may have over the extent of a trace of `blocks`
    /// blocks: `blocks × max_cells_per_block`, or for a big trace the scale budget (a quarter
    /// of it on the thin lines). Traces up to 2^27 blocks keep every level they had before
    /// wave 32.
    pub fn max_cells(&self, blocks: u64, line: i32) -> f64 {
        let n = blocks.max(1) as f64;
        let small = n * self.max_cells_per_block;
        let scale = (n * self.scale_cells_per_block).max(self.scale_from_cells);
        let cells = if small <= scale {
            small
        } else if self.thin_lines.contains(&line) {
            scale / 4.0
        } else {
            scale
        };
        cells.max(1.0)
    }
}

impl Default for BuildParams {
    fn default() -> Self {
        // A big trace's grids of at most a tenth of a cell a block (from 2^26 cells, traces
        // of more than 2^27 blocks, ≈ 270 M events), and every other line's a quarter of that
        // (issue 25/21, wave 32, BENCHMARKS.md "… index size, wave 32"): half a cell a block on
        // every line made 82.6 B a block at 50 M events (2,064.8 MB, the finest level of each
        // line 43.5 B of it; 1 B events ≈ 41 GB, more than this machine's disk beside the
        // trace); the thin budget gives 24.7 B a block at 50 M, 16.7 at 100 M (measured with
        // it from 2^21 cells: `lod-build --scale-from-cells 2097152`). The levels keep their 8
        // shapes (4 lines 16× apart in shape missed the accuracy rule of `tests/faithful.rs`
        // at α 0.1). A big trace's finest grids hold a quarter to one budget of cells. What it
        // costs: views holding about 2–20 blocks a pixel lose their level and are drawn from
        // their blocks (the 1/4 view of 50 M events at 1920×1080 with the thin budget: 0.44 →
        // 0.95 s CPU, 6.3 M exact blocks), and the whole view is drawn from cells up to
        // 1.23 px (`index::COARSE_CELL_PIXELS`; at 50 M 0.013 → 0.056 % of pixels over 8/255
        // at α 0.1). So traces up to 2^27 blocks keep every level (their indexes ≤ ≈ 7.5 GB):
        // the thin budget only where the index would outgrow a disk beside its trace.
        Self {
            lines: vec![-8, -6, -4, -2, 0, 2, 4, 6],
            max_cells_per_block: 0.5,
            scale_cells_per_block: 0.1,
            scale_from_cells: f64::from(1u32 << 26),
            thin_lines: vec![-6, -2, 2, 6],
        }
    }
}

#[derive(Debug, Clone, Default)]
struct CellAcc {
    n: f64,
    lo: [f32; 2],
    hi: [f32; 2],
    sw: f64,
    sh: f64,
    /// Block centres per slice along x and y.
    px: [f32; PROFILE_BINS],
    py: [f32; PROFILE_BINS],
    /// Block centres per quarter of each slice along y (`CellRec::spot_y`).
    py_quarters: [[f32; SPOT_QUARTERS]; PROFILE_BINS],
    /// The x eighths holding centres of each quarter of each slice along y
    /// (`CellRec::spot_x`).
    py_quarters_x: [[u8; SPOT_QUARTERS]; PROFILE_BINS],
    /// The least, the greatest and the sum of the centres' y (cell units) of each occupied
    /// quarter of the slices along y (`CellRec::spot_lines`), once the cell has more than
    /// `FEW_BLOCKS` blocks (until then its centres are in `few`, from which they are made, and
    /// its record keeps no spots). Most cells of the fine levels hold a few blocks and most
    /// others few occupied quarters: a dense 1.5 KB in every cell made the build 50 % slower,
    /// and boxed in the cells of more blocks it took `tests/bounded_build.rs` over its bound
    /// (wave 31).
    lines: Vec<QuarterLine>,
    /// Eighths of the cell holding a centre (`CellRec::mask`).
    mask: u64,
    /// The centres while the cell has at most `FEW_BLOCKS` blocks (`CellRec::few`).
    few: [[f32; 2]; FEW_BLOCKS],
    buckets: Vec<(i16, BucketAcc)>,
}

/// Per quarter of each slice along y: the least, the greatest and the sum of its centres' y
/// (`CellRec::spot_lines`), as the encoder reads them.
type QuarterLines = [[[f64; 3]; SPOT_QUARTERS]; PROFILE_BINS];

/// One occupied quarter's line sums ([`CellAcc::lines`]): the quarter (of all
/// `PROFILE_BINS · SPOT_QUARTERS`) and the least, the greatest and the sum of its centres' y.
#[derive(Debug, Clone, Copy)]
struct QuarterLine {
    quarter: u8,
    y: [f64; 3],
}

/// The quarter of the slices along y (of all `PROFILE_BINS · SPOT_QUARTERS`) holding a centre
/// at `uy`: ⌊64u⌋ (exact in f32; its slice is ⌊16u⌋).
fn quarter_of(uy: f32) -> usize {
    ((uy * (PROFILE_BINS * SPOT_QUARTERS) as f32) as usize).min(PROFILE_BINS * SPOT_QUARTERS - 1)
}

/// Adds centres whose least, greatest and summed y are `y` to quarter `q`'s line sums.
fn add_to_lines(lines: &mut Vec<QuarterLine>, q: usize, y: [f64; 3]) {
    match lines.iter_mut().find(|l| usize::from(l.quarter) == q) {
        Some(l) => l.y = [l.y[0].min(y[0]), l.y[1].max(y[1]), l.y[2] + y[2]],
        None => lines.push(QuarterLine {
            quarter: q as u8,
            y,
        }),
    }
}

impl CellAcc {
    /// The line sums, made from the centres in `few` when the cell first needs them.
    fn lines_mut(&mut self) -> &mut Vec<QuarterLine> {
        if self.lines.is_empty() {
            for c in self.few.iter().take(self.n as usize) {
                let y = f64::from(c[1]);
                add_to_lines(&mut self.lines, quarter_of(c[1]), [y, y, y]);
            }
        }
        &mut self.lines
    }

    /// The line sums as the encoder reads them (`None` for a cell of at most `FEW_BLOCKS`).
    fn lines_dense(&self) -> Option<QuarterLines> {
        if self.lines.is_empty() {
            return None;
        }
        let mut out = [[[f64::INFINITY, f64::NEG_INFINITY, 0.0]; SPOT_QUARTERS]; PROFILE_BINS];
        for l in &self.lines {
            let q = usize::from(l.quarter);
            out[q / SPOT_QUARTERS][q % SPOT_QUARTERS] = l.y;
        }
        Some(out)
    }

    fn bucket(&mut self, b: i16) -> &mut BucketAcc {
        let i = match self.buckets.iter().position(|(k, _)| *k == b) {
            Some(i) => i,
            None => {
                self.buckets.push((b, BucketAcc::default()));
                self.buckets.len() - 1
            }
        };
        &mut self.buckets[i].1
    }

    /// Adds a block's extent `[lo, hi]` (cell units, per axis) to the bounding box.
    fn add_extent(&mut self, lo: [f32; 2], hi: [f32; 2]) {
        if self.n == 0.0 {
            self.lo = lo;
            self.hi = hi;
        } else {
            self.lo = [self.lo[0].min(lo[0]), self.lo[1].min(lo[1])];
            self.hi = [self.hi[0].max(hi[0]), self.hi[1].max(hi[1])];
        }
    }

    /// Merges a child cell at (`qx`, `qy`) ∈ {0, 1}² of this (parent) cell.
    fn merge_child(&mut self, child: &CellAcc, qx: f32, qy: f32) {
        let lo = [(qx + child.lo[0]) / 2.0, (qy + child.lo[1]) / 2.0];
        let hi = [(qx + child.hi[0]) / 2.0, (qy + child.hi[1]) / 2.0];
        if self.n == 0.0 {
            self.lo = lo;
            self.hi = hi;
        } else {
            self.lo = [self.lo[0].min(lo[0]), self.lo[1].min(lo[1])];
            self.hi = [self.hi[0].max(hi[0]), self.hi[1].max(hi[1])];
        }
        if self.n + child.n <= FEW_BLOCKS as f64 {
            let at = self.n as usize;
            for (i, c) in child.few.iter().take(child.n as usize).enumerate() {
                self.few[at + i] = [(qx + c[0]) / 2.0, (qy + c[1]) / 2.0];
            }
        } else {
            // Each centre's y in the parent: (qy + y) / 2 (exact in f64); the child's quarter
            // b (of all 4 · PROFILE_BINS) is quarter (b + 4 · PROFILE_BINS · qy) / 2 here.
            let quarters = SPOT_QUARTERS * PROFILE_BINS;
            let qy64 = f64::from(qy);
            let to = |b: usize| (b + quarters * qy as usize) / 2;
            let lines = self.lines_mut();
            if child.lines.is_empty() {
                for c in child.few.iter().take(child.n as usize) {
                    let y = (qy64 + f64::from(c[1])) / 2.0;
                    add_to_lines(lines, to(quarter_of(c[1])), [y, y, y]);
                }
            } else {
                for l in &child.lines {
                    let b = usize::from(l.quarter);
                    let count = f64::from(child.py_quarters[b / SPOT_QUARTERS][b % SPOT_QUARTERS]);
                    let [lo, hi, sum] = l.y;
                    add_to_lines(
                        lines,
                        to(b),
                        [
                            (qy64 + lo) / 2.0,
                            (qy64 + hi) / 2.0,
                            (qy64 * count + sum) / 2.0,
                        ],
                    );
                }
            }
        }
        self.n += child.n;
        // The child's eighths, two by two, in the parent's quarter it lies in.
        let (ox, oy) = (qx as u64 * 4, qy as u64 * 4);
        for bit in 0..64u64 {
            if child.mask & (1 << bit) != 0 {
                let (i, j) = (bit % 8, bit / 8);
                self.mask |= 1 << ((oy + j / 2) * 8 + ox + i / 2);
            }
        }
        self.sw += child.sw / 2.0;
        self.sh += child.sh / 2.0;
        // The child's slices, two by two, fill the parent's half it lies in.
        let half = PROFILE_BINS / 2;
        let (ox, oy) = (qx as usize * half, qy as usize * half);
        for j in 0..PROFILE_BINS {
            self.px[ox + j / 2] += child.px[j];
            self.py[oy + j / 2] += child.py[j];
        }
        // The child's quarters, two by two, likewise: quarter b of the child (of all
        // 4 · PROFILE_BINS) is quarter (b + 4 · PROFILE_BINS · qy) / 2 of the parent.
        let quarters = SPOT_QUARTERS * PROFILE_BINS;
        for b in 0..quarters {
            let to = (b + quarters * qy as usize) / 2;
            self.py_quarters[to / SPOT_QUARTERS][to % SPOT_QUARTERS] +=
                child.py_quarters[b / SPOT_QUARTERS][b % SPOT_QUARTERS];
            // The child's x eighths, two by two, in the parent's half it lies in.
            let eighths = child.py_quarters_x[b / SPOT_QUARTERS][b % SPOT_QUARTERS];
            for e in (0..8).filter(|e| eighths & (1 << e) != 0) {
                self.py_quarters_x[to / SPOT_QUARTERS][to % SPOT_QUARTERS] |=
                    1 << (4 * qx as usize + e / 2);
            }
        }
        for &(b, acc) in &child.buckets {
            let p = self.bucket(b - (2 / crate::format::BUCKET_OCTAVES) as i16);
            p.n += acc.n;
            p.a += acc.a / 4.0;
            p.a2 += acc.a2 / 16.0;
            for k in 0..3 {
                p.rgb[k] += acc.rgb[k];
            }
            p.attr += acc.attr;
        }
    }
}

/// Writes a level's records as its columns complete.
struct LevelOut {
    columns: BufWriter<std::fs::File>,
    cells: BufWriter<std::fs::File>,
    buckets: BufWriter<std::fs::File>,
    paths: [PathBuf; 3],
    n_columns: u64,
    n_cells: u64,
    n_buckets: u64,
}

impl LevelOut {
    fn new(dir: &Path, name: &str) -> Result<Self, LodError> {
        let paths = [
            dir.join(format!("{name}.columns")),
            dir.join(format!("{name}.cells")),
            dir.join(format!("{name}.buckets")),
        ];
        let open = |p: &Path| -> Result<BufWriter<std::fs::File>, LodError> {
            Ok(BufWriter::with_capacity(
                1 << 16,
                std::fs::File::create(p).map_err(|e| LodError::io(p, e))?,
            ))
        };
        Ok(Self {
            columns: open(&paths[0])?,
            cells: open(&paths[1])?,
            buckets: open(&paths[2])?,
            paths,
            n_columns: 0,
            n_cells: 0,
            n_buckets: 0,
        })
    }

    fn write_column(&mut self, kx: u64, cells: &mut [(u64, CellAcc)]) -> Result<(), LodError> {
        cells.sort_unstable_by_key(|(ky, _)| *ky);
        let col = ColumnRec {
            kx,
            first_cell: self.n_cells,
        };
        let err = |p: &Path, e| LodError::io(p, e);
        self.columns
            .write_all(bytemuck::bytes_of(&col))
            .map_err(|e| err(&self.paths[0], e))?;
        self.n_columns += 1;
        for (ky, c) in cells.iter() {
            let lines = c.lines_dense();
            let rec = CellRec::encode(&CellSums {
                ky: *ky,
                bucket_first: self.n_buckets,
                buckets: c.buckets.len() as u16,
                n: c.n,
                lo: c.lo,
                hi: c.hi,
                sw: c.sw,
                sh: c.sh,
                px: &c.px,
                py: &c.py,
                py_quarters: Some(&c.py_quarters),
                py_quarters_x: Some(&c.py_quarters_x),
                py_quarters_lines: lines.as_ref(),
                mask: c.mask,
                few: &c.few,
            });
            self.cells
                .write_all(bytemuck::bytes_of(&rec))
                .map_err(|e| err(&self.paths[1], e))?;
            self.n_cells += 1;
            let mut bs = c.buckets.clone();
            bs.sort_unstable_by_key(|(b, _)| *b);
            for (b, acc) in bs {
                let rec = BucketRec::encode(b, &acc);
                self.buckets
                    .write_all(bytemuck::bytes_of(&rec))
                    .map_err(|e| err(&self.paths[2], e))?;
                self.n_buckets += 1;
            }
        }
        Ok(())
    }

    fn finish(self) -> Result<[PathBuf; 3], LodError> {
        for (mut w, p) in [self.columns, self.cells, self.buckets]
            .into_iter()
            .zip(&self.paths)
        {
            w.flush().map_err(|e| LodError::io(p, e))?;
        }
        Ok(self.paths)
    }
}

struct LevelBuild {
    log_tau: u8,
    log_sig: u8,
    /// Open columns: kx → (ky → cell).
    open: BTreeMap<u64, HashMap<u64, CellAcc>>,
    out: LevelOut,
    blocks: u64,
}

struct LineBuild {
    a: i32,
    a_t: u32,
    a_y: u32,
    /// Coarsest first.
    levels: Vec<LevelBuild>,
}

/// The index being built.
pub struct LodBuilder {
    meta: IndexMeta,
    lines: Vec<LineBuild>,
    classes: HashMap<(u8, u8), (BufWriter<std::fs::File>, PathBuf, u64)>,
    /// Classes with lifetime class ≥ this or size class ≥ `min_class_d` are copied.
    min_class_c: u8,
    min_class_d: u8,
    dir: PathBuf,
    last_t0: u64,
    since_flush: u32,
    blocks: u64,
    /// The heap-size curve.
    curve: crate::curve::CurveBuilder,
}

/// ⌊log₂ v⌋ (0 for 0): the index's level grid is in powers of two. The query engine builds the
/// same grid with these.
pub fn floor_log2(v: u64) -> u32 {
    63 - v.max(1).leading_zeros()
}

/// ⌈log₂ v⌉ (0 for 0 and 1).
pub fn ceil_log2(v: u64) -> u32 {
    if v <= 1 {
        0
    } else {
        64 - (v - 1).leading_zeros()
    }
}

/// One level of an index: its line (anisotropy `a`), its depth `k` on the line, and its cells'
/// size, 2^log_tau time units × 2^log_sig bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LevelSpec {
    pub line: i32,
    pub k: u32,
    pub log_tau: u8,
    pub log_sig: u8,
}

/// The levels of an index of `blocks` blocks in `[0, extent_t) × [0, extent_y)`, line by line
/// (as `params.lines`), coarsest first: level `k` of line `a` cuts the plane rounded up to
/// powers of two, 2^log_t × 2^log_y, into 2^(k + max(a, 0)) columns and 2^(k + max(−a, 0))
/// rows, down to the finest whose grid has at most `params.max_cells(blocks, a)` cells over
/// the trace's extent. (Counted over the rounded plane, as before wave 14, up to 4× as many
/// cells lay outside the trace: at 50 M events the plane is 1.8× the extent, and the level the
/// whole view at 1920×1080 needs, 2^24 cells of which 2^23.2 over the extent, was cut.) The
/// query engine lays out its levels with this too.
pub fn level_specs(
    extent_t: u64,
    extent_y: u64,
    blocks: u64,
    params: &BuildParams,
) -> Vec<LevelSpec> {
    let log_t = ceil_log2(extent_t.max(2));
    let log_y = ceil_log2(extent_y.max(2));
    // log2 of the fraction of the rounded plane the extent covers (≤ 0).
    let covered_log2 = (extent_t.max(2) as f64).log2() - f64::from(log_t)
        + (extent_y.max(2) as f64).log2()
        - f64::from(log_y);
    let mut out = Vec::new();
    for &a in &params.lines {
        let a_t = a.max(0).unsigned_abs();
        let a_y = (-a).max(0).unsigned_abs();
        let budget_log2 = params.max_cells(blocks, a).log2();
        for k in 0u32.. {
            let (kt, ky) = (k + a_t, k + a_y);
            // A small slack: a grid exactly at the budget is in it despite rounding.
            if kt > log_t || ky > log_y || f64::from(kt + ky) + covered_log2 > budget_log2 + 1e-9 {
                break;
            }
            out.push(LevelSpec {
                line: a,
                k,
                log_tau: (log_t - kt) as u8,
                log_sig: (log_y - ky) as u8,
            });
        }
    }
    out
}

impl LodBuilder {
    /// A builder for blocks in `[0, extent_t) × [0, extent_y)`, about `blocks` of them, with
    /// its scratch files in `dir` (created).
    pub fn new(
        dir: &Path,
        extent_t: u64,
        extent_y: u64,
        blocks: u64,
        params: &BuildParams,
    ) -> Result<Self, LodError> {
        std::fs::create_dir_all(dir).map_err(|e| LodError::io(dir, e))?;
        let log_t = ceil_log2(extent_t.max(2)) as u8;
        let log_y = ceil_log2(extent_y.max(2)) as u8;
        let mut lines: Vec<LineBuild> = Vec::new();
        let (mut min_c, mut min_d) = (u8::MAX, u8::MAX);
        for spec in level_specs(extent_t, extent_y, blocks, params) {
            let a = spec.line;
            if lines.last().is_none_or(|l| l.a != a) {
                lines.push(LineBuild {
                    a,
                    a_t: a.max(0) as u32,
                    a_y: (-a).max(0) as u32,
                    levels: Vec::new(),
                });
            }
            min_c = min_c.min(spec.log_tau);
            min_d = min_d.min(spec.log_sig);
            let level = LevelBuild {
                log_tau: spec.log_tau,
                log_sig: spec.log_sig,
                open: BTreeMap::new(),
                out: LevelOut::new(dir, &format!("l{a}_{}", spec.k))?,
                blocks: 0,
            };
            if let Some(line) = lines.last_mut() {
                line.levels.push(level);
            }
        }
        Ok(Self {
            meta: IndexMeta {
                extent_t,
                extent_y,
                log_t,
                log_y,
                blocks: 0,
                params: params.clone(),
                levels: Vec::new(),
                classes: Vec::new(),
                source: crate::SourceId::default(),
                axis: Default::default(),
                coloring: String::new(),
                copy_min_c: min_c,
                copy_min_d: min_d,
                curve: Vec::new(),
            },
            curve: crate::curve::CurveBuilder::new(extent_t),
            lines,
            classes: HashMap::new(),
            min_class_c: min_c,
            min_class_d: min_d,
            dir: dir.to_path_buf(),
            last_t0: 0,
            since_flush: 0,
            blocks: 0,
        })
    }

    /// Adds the next block, block number `id` of the trace (blocks must come by increasing
    /// `t0`), freed at its end.
    pub fn push(&mut self, id: u64, b: &LodBlock) -> Result<(), LodError> {
        self.push_block(id, b, false)
    }

    /// [`Self::push`] of a block that may never have been freed (`never_freed`: it ends with
    /// the trace, and stays in the heap-size curve to the end).
    pub fn push_block(&mut self, id: u64, b: &LodBlock, never_freed: bool) -> Result<(), LodError> {
        let w = b.width();
        let s = b.size;
        let fw = floor_log2(w);
        let fs = floor_log2(s);
        self.blocks += 1;
        if b.t0 < self.last_t0 {
            return Err(LodError::Unsorted {
                block: self.blocks - 1,
            });
        }
        self.last_t0 = b.t0;
        self.curve
            .push(b.t0, if never_freed { u64::MAX } else { b.t1 }, b.size);
        let log_t = u32::from(self.meta.log_t);
        let log_y = u32::from(self.meta.log_y);
        let color = crate::eq1::unpack_linear(b.color);
        for line in &mut self.lines {
            // Finest level where the block is small: log_tau > fw and log_sig > fs.
            let kt_max = log_t as i64 - i64::from(fw) - 1 - i64::from(line.a_t);
            let ky_max = log_y as i64 - i64::from(fs) - 1 - i64::from(line.a_y);
            let k = kt_max.min(ky_max).min(line.levels.len() as i64 - 1);
            if k < 0 {
                continue;
            }
            let level = &mut line.levels[k as usize];
            level.blocks += 1;
            // Centre, exactly: (2 t0 + w) / 2^(log_tau + 1).
            let cx2 = u128::from(b.t0) * 2 + u128::from(w);
            let cy2 = u128::from(b.y) * 2 + u128::from(s);
            let (st, sy) = (u32::from(level.log_tau) + 1, u32::from(level.log_sig) + 1);
            let kx = (cx2 >> st) as u64;
            let ky = (cy2 >> sy) as u64;
            let ux = ((cx2 & ((1u128 << st) - 1)) as f64 / (1u128 << st) as f64) as f32;
            let uy = ((cy2 & ((1u128 << sy) - 1)) as f64 / (1u128 << sy) as f64) as f32;
            let tau = (1u64 << level.log_tau) as f64;
            let sig = (1u64 << level.log_sig) as f64;
            let cell = level.open.entry(kx).or_default().entry(ky).or_default();
            let (wc, hc) = (w as f64 / tau, s as f64 / sig);
            let (hw, hh) = ((wc / 2.0) as f32, (hc / 2.0) as f32);
            cell.add_extent([ux - hw, uy - hh], [ux + hw, uy + hh]);
            let bin = |u: f32| ((u * PROFILE_BINS as f32) as usize).min(PROFILE_BINS - 1);
            cell.px[bin(ux)] += 1.0;
            cell.py[bin(uy)] += 1.0;
            let quarter = quarter_of(uy);
            cell.py_quarters[quarter / SPOT_QUARTERS][quarter % SPOT_QUARTERS] += 1.0;
            if cell.n >= FEW_BLOCKS as f64 {
                // More than FEW_BLOCKS: the lines from the centres kept so far, and this one.
                let y = f64::from(uy);
                add_to_lines(cell.lines_mut(), quarter, [y, y, y]);
            }
            let eighth = |u: f32| ((u * 8.0) as u64).min(7);
            cell.py_quarters_x[quarter / SPOT_QUARTERS][quarter % SPOT_QUARTERS] |= 1 << eighth(ux);
            cell.mask |= 1 << (eighth(uy) * 8 + eighth(ux));
            if let Some(slot) = cell.few.get_mut(cell.n as usize) {
                *slot = [ux, uy];
            }
            cell.n += 1.0;
            cell.sw += wc;
            cell.sh += hc;
            let area = wc * hc;
            let bi = crate::format::bucket_of(area);
            let acc = cell.bucket(bi);
            acc.n += 1.0;
            acc.a += area;
            acc.a2 += area * area;
            for (sum, &c) in acc.rgb.iter_mut().zip(&color) {
                *sum += f64::from(c);
            }
            acc.attr += f64::from(b.attr);
        }
        // Large at some level: copied into its class (long-lived ones) or listed.
        let c = fw as u8;
        let d = fs as u8;
        if c >= self.min_class_c || d >= self.min_class_d {
            let copied = c >= self.min_class_c || d >= COPY_MIN_SIZE_CLASS;
            let entry = match self.classes.entry((c, d)) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(v) => {
                    let p = self.dir.join(format!("class_{c}_{d}"));
                    let f = std::fs::File::create(&p).map_err(|e| LodError::io(&p, e))?;
                    v.insert((BufWriter::with_capacity(1 << 16, f), p, 0))
                }
            };
            let bytes: &[u8] = if copied {
                bytemuck::bytes_of(b)
            } else {
                bytemuck::bytes_of(&id)
            };
            entry
                .0
                .write_all(bytes)
                .map_err(|e| LodError::io(&entry.1, e))?;
            entry.2 += 1;
        }
        self.since_flush += 1;
        if self.since_flush >= 4096 {
            self.since_flush = 0;
            self.flush(b.t0, false)?;
        }
        Ok(())
    }

    /// Writes out every column complete before time `now` (all of them when `all`), finest
    /// levels first, merging each into its parent.
    fn flush(&mut self, now: u64, all: bool) -> Result<(), LodError> {
        for line in &mut self.lines {
            for k in (0..line.levels.len()).rev() {
                let tau = 1u64 << line.levels[k].log_tau;
                while let Some((&kx, _)) = line.levels[k].open.first_key_value() {
                    let done = all || kx.saturating_add(1).saturating_mul(tau) <= now;
                    if !done {
                        break;
                    }
                    let Some((kx, cells)) = line.levels[k].open.pop_first() else {
                        break;
                    };
                    let mut cells: Vec<(u64, CellAcc)> = cells.into_iter().collect();
                    if k > 0 {
                        let parent = &mut line.levels[k - 1];
                        let col = parent.open.entry(kx / 2).or_default();
                        for (ky, c) in &cells {
                            col.entry(ky / 2).or_default().merge_child(
                                c,
                                (kx % 2) as f32,
                                (ky % 2) as f32,
                            );
                        }
                    }
                    line.levels[k].out.write_column(kx, &mut cells)?;
                }
            }
        }
        Ok(())
    }

    /// Finishes the index and writes it to `path` (the scratch directory is removed).
    pub fn finish(
        mut self,
        path: &Path,
        source: crate::SourceId,
        axis: crate::source::AddressAxis,
        coloring: &str,
    ) -> Result<IndexMeta, LodError> {
        self.flush(u64::MAX, true)?;
        let mut meta = self.meta;
        meta.blocks = self.blocks;
        meta.source = source;
        meta.axis = axis;
        meta.coloring = coloring.to_owned();
        // Lay out: header, JSON, then the sections, each 8-byte aligned.
        let mut parts: Vec<(PathBuf, u64)> = Vec::new();
        let mut levels = Vec::new();
        let mut offset = 0u64;
        let mut section = |p: PathBuf, n: u64, size: u64, parts: &mut Vec<(PathBuf, u64)>| {
            let s = Section {
                offset,
                len: n * size,
            };
            offset += (n * size).next_multiple_of(8);
            parts.push((p, n * size));
            s
        };
        for line in self.lines {
            for level in line.levels {
                let (n_cols, n_cells, n_buckets) =
                    (level.out.n_columns, level.out.n_cells, level.out.n_buckets);
                let [pc, pl, pb] = level.out.finish()?;
                let columns = section(pc, n_cols, 16, &mut parts);
                let cells = section(
                    pl,
                    n_cells,
                    std::mem::size_of::<CellRec>() as u64,
                    &mut parts,
                );
                let buckets = section(pb, n_buckets, 16, &mut parts);
                levels.push(LevelDesc {
                    log_tau: level.log_tau,
                    log_sig: level.log_sig,
                    blocks: level.blocks,
                    columns,
                    cells,
                    buckets,
                });
            }
        }
        let mut classes = Vec::new();
        let mut keys: Vec<(u8, u8)> = self.classes.keys().copied().collect();
        keys.sort_unstable();
        for key in keys {
            if let Some((mut w, p, n)) = self.classes.remove(&key) {
                w.flush().map_err(|e| LodError::io(&p, e))?;
                drop(w);
                // Blocks arrived by start: the class is sorted by start.
                let copied = key.0 >= self.min_class_c || key.1 >= COPY_MIN_SIZE_CLASS;
                let blocks = section(p, n, if copied { 40 } else { 8 }, &mut parts);
                classes.push(ClassDesc {
                    c: key.0,
                    d: key.1,
                    copied,
                    blocks,
                });
            }
        }
        let mut curve = Vec::new();
        for (log_bin, p, n) in self.curve.finish(&self.dir)? {
            curve.push(crate::curve::CurveLevelDesc {
                log_bin,
                bins: section(
                    p,
                    n,
                    std::mem::size_of::<crate::curve::CurveBin>() as u64,
                    &mut parts,
                ),
            });
        }
        meta.levels = levels;
        meta.classes = classes;
        meta.curve = curve;
        let json = serde_json::to_vec(&meta).map_err(|e| LodError::Format(e.to_string()))?;
        let header_len = (8 + 4 + 8 + json.len() as u64).next_multiple_of(8);
        let tmp = path.with_extension("lod.partial");
        let file = std::fs::File::create(&tmp).map_err(|e| LodError::io(&tmp, e))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        let werr = |e| LodError::io(&tmp, e);
        out.write_all(MAGIC).map_err(werr)?;
        out.write_all(&VERSION.to_le_bytes()).map_err(werr)?;
        out.write_all(&(json.len() as u64).to_le_bytes())
            .map_err(werr)?;
        out.write_all(&json).map_err(werr)?;
        out.write_all(&vec![0u8; (header_len - 20 - json.len() as u64) as usize])
            .map_err(werr)?;
        for (p, len) in &parts {
            let mut f = std::fs::File::open(p).map_err(|e| LodError::io(p, e))?;
            let copied = std::io::copy(&mut f, &mut out).map_err(|e| LodError::io(p, e))?;
            if copied != *len {
                return Err(LodError::Format(format!(
                    "{}: {copied} bytes, expected {len}",
                    p.display()
                )));
            }
            out.write_all(&vec![0u8; (len.next_multiple_of(8) - len) as usize])
                .map_err(werr)?;
            let _ = std::fs::remove_file(p);
        }
        out.flush().map_err(werr)?;
        drop(out);
        std::fs::rename(&tmp, path).map_err(|e| LodError::io(path, e))?;
        let _ = std::fs::remove_dir_all(&self.dir);
        Ok(meta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The grid of `s` over the extent, in cells.
    fn grid_cells(extent_t: u64, extent_y: u64, s: &LevelSpec) -> f64 {
        extent_t as f64 / 2f64.powi(i32::from(s.log_tau))
            * (extent_y as f64 / 2f64.powi(i32::from(s.log_sig)))
    }

    /// wave 12's 50 M-event generated trace (`synth-trace synth-50M.msc 50000000`): its whole
    /// view at 1920×1080 has a level with cells at most a pixel (2^14.7 × 2^14.5 there): a
    /// trace of 25 M blocks keeps half a cell a block on every line.
    #[test]
    fn the_whole_view_of_50m_events_at_1920x1080_has_a_level() {
        let (extent_t, extent_y, blocks) = (50_000_001u64, 24_826_177u64, 25_007_781u64);
        let pixel = [extent_t as f64 / 1920.0, extent_y as f64 / 1080.0];
        let specs = level_specs(extent_t, extent_y, blocks, &BuildParams::default());
        let fits = |s: &LevelSpec| {
            2f64.powi(i32::from(s.log_tau)) <= pixel[0]
                && 2f64.powi(i32::from(s.log_sig)) <= pixel[1]
        };
        assert!(specs.iter().any(fits), "{specs:?}");
        // Every level keeps the budget over the extent: at most blocks × 0.5 cells.
        for s in &specs {
            let cells = grid_cells(extent_t, extent_y, s);
            assert!(cells <= blocks as f64 * 0.5, "{s:?}: {cells} cells");
        }
    }

    /// With the thin budget from 2^21 cells (wave 32's measurement), the same whole view is
    /// drawn from line 0's cells of 2^15 × 2^14 (1.23 × 0.71 px, the coarse rule
    /// `index::COARSE_CELL_PIXELS`), and its 1/4 view (pixels 2^12.7 × 2^14.5) from its
    /// 6.26 M blocks: the price of an index 30 % the size.
    #[test]
    fn a_thin_budget_draws_the_whole_view_coarse_and_the_quarter_view_exactly() {
        let (extent_t, extent_y, blocks) = (50_000_001u64, 24_826_177u64, 25_007_781u64);
        let params = BuildParams {
            scale_from_cells: f64::from(1u32 << 21),
            ..BuildParams::default()
        };
        let specs = level_specs(extent_t, extent_y, blocks, &params);
        let sizes: Vec<[u8; 2]> = specs.iter().map(|s| [s.log_tau, s.log_sig]).collect();
        let whole = [extent_t as f64 / 1920.0, extent_y as f64 / 1080.0];
        assert_eq!(
            crate::index::coarse_level_among(&sizes, whole, 1.0 + 1e-9),
            None
        );
        let li = crate::index::coarse_level_among(&sizes, whole, crate::index::COARSE_CELL_PIXELS)
            .map(|i| (sizes[i], specs[i].line));
        assert_eq!(li, Some(([15, 14], 0)), "{specs:?}");
        let quarter = [extent_t as f64 / 4.0 / 1920.0, extent_y as f64 / 1080.0];
        let li =
            crate::index::coarse_level_among(&sizes, quarter, crate::index::COARSE_CELL_PIXELS);
        assert_eq!(li.map(|i| sizes[i]), None, "{specs:?}");
        // Without it (the default for 25 M blocks) line 2's finest level serves the 1/4 view.
        let specs = level_specs(extent_t, extent_y, blocks, &BuildParams::default());
        let sizes: Vec<[u8; 2]> = specs.iter().map(|s| [s.log_tau, s.log_sig]).collect();
        let li =
            crate::index::coarse_level_among(&sizes, quarter, crate::index::COARSE_CELL_PIXELS);
        assert_eq!(li.map(|i| (sizes[i], specs[i].line)), Some(([13, 14], 2)));
    }

    /// The thin lines stop one level short of the others of their parity: the finest levels of
    /// a 1 B-event and a 2 B-event trace hold a quarter to one budget of cells on the full
    /// lines, a quarter of that on the thin ones (and of a 50 M-event trace with the thin
    /// budget from 2^21 cells, as wave 32 measured).
    #[test]
    fn thin_lines_stop_one_level_short() {
        let default = BuildParams::default();
        let early = BuildParams {
            scale_from_cells: f64::from(1u32 << 21),
            ..BuildParams::default()
        };
        for (extent_t, extent_y, blocks, params) in [
            (1_000_000_001u64, 120_000_000u64, 500_000_000u64, &default),
            (2_000_000_001, 130_000_000, 1_000_000_000, &default),
            (50_000_001, 24_826_177, 25_007_781, &early),
        ] {
            let specs = level_specs(extent_t, extent_y, blocks, params);
            let full = params.max_cells(blocks, 0);
            assert!(
                full < blocks as f64 * 0.5,
                "{blocks}: the thin budget applies"
            );
            for &a in &params.lines {
                let finest = specs
                    .iter()
                    .filter(|s| s.line == a)
                    .max_by_key(|s| s.k)
                    .map(|s| grid_cells(extent_t, extent_y, s));
                let Some(c) = finest else {
                    panic!("line {a} has no level")
                };
                let budget = if params.thin_lines.contains(&a) {
                    full / 4.0
                } else {
                    full
                };
                assert!(
                    c > budget / 4.0 && c <= budget * (1.0 + 1e-9),
                    "{blocks} blocks, line {a}: {c} cells for a budget of {budget}"
                );
            }
        }
    }

    /// Up to 2^27 blocks every line keeps the levels of half a cell a block, as before wave 32;
    /// past that, 2^26 cells and from 2^26 · 10 blocks a tenth of a cell a block, a quarter of
    /// that on the thin lines.
    #[test]
    fn small_traces_keep_half_a_cell_a_block() {
        let p = BuildParams::default();
        for line in [0, 2] {
            assert_eq!(p.max_cells(1_500_000, line), 750_000.0);
            assert_eq!(p.max_cells(25_007_781, line), 25_007_781.0 * 0.5);
            assert_eq!(p.max_cells(1 << 27, line), f64::from(1u32 << 26));
            assert_eq!(p.max_cells(0, line), 1.0);
        }
        assert_eq!(p.max_cells(10 << 26, 0), f64::from(1u32 << 26));
        assert_eq!(p.max_cells(10 << 26, 2), f64::from(1u32 << 24));
        assert_eq!(p.max_cells(100 << 26, 0), 10.0 * f64::from(1u32 << 26));
        assert_eq!(p.max_cells(100 << 26, 2), 10.0 * f64::from(1u32 << 24));
        // An index's header before wave 32 reads as half a cell a block whatever its size.
        let old: BuildParams =
            serde_json::from_str(r#"{"lines":[0],"max_cells_per_block":0.5}"#).expect("json");
        assert_eq!(old.max_cells(100 << 26, 0), 50.0 * f64::from(1u32 << 26));
        assert!(old.thin_lines.is_empty());
        let again: BuildParams =
            serde_json::from_str(&serde_json::to_string(&old).expect("json")).expect("json");
        assert_eq!(again, old);
    }
}
