//! The level-of-detail index of the allocation map (memscape-lod's tiles) from the `blocks`
//! table of a trace dataset: the collapsed address axis and, per level, its cells and their area
//! buckets, as the records `memscape_lod::LodBuilder` writes.
//!
//! The native builder streams the blocks in allocation order, summarises each into the finest
//! level of each line of levels where it is smaller than a cell, and merges every completed
//! column into the next coarser level. A level's cells therefore summarise exactly the blocks
//! that are small at it (lifetime < 2^τ events and size < 2^σ bytes), each in the cell of its
//! centre. Here one level is one plan per record kind over those blocks: group by cell (count,
//! Σ width, Σ height, bounding box), by (cell, profile slice) along each axis, and by (cell,
//! area bucket, palette colour) (count, Σ area, Σ area²). What is per block — the collapsed
//! address (a balanced CASE tree over the regions), the centre, the slice and the bucket — is
//! computed with the builder's own IEEE operations (f32 where it uses f32, `log2` of the same
//! f64 area), so the keys are the same (and the counts, the y profile's quarters of
//! `CellRec::spot_y` among them). The other sums are added in another order, so a stored
//! mean or colour may differ from the native one by one unit of its 8- or 16-bit code (the
//! equality test counts how many records are bit for bit the same).
//!
//! The address axis: blocks grouped by page of the gap threshold (min address, max end), then
//! memscape-lod's own `RegionFinder` merges the (few) pages, as natively.

use datafusion::functions::expr_fn::{floor, greatest, log2};
use datafusion::functions_aggregate::expr_fn::{count, max, min, sum};
use datafusion::prelude::{DataFrame, Expr, cast, col, in_list, lit, when};
use memscape_lod::BuildParams;
use memscape_lod::build::{ceil_log2, floor_log2, level_specs};
use memscape_lod::encode::{BucketSums, CellSums};
use memscape_lod::eq1::unpack_linear;
use memscape_lod::format::{
    BUCKET_OCTAVES, BucketRec, CellRec, ColumnRec, FEW_BLOCKS, MASK_BINS, PROFILE_BINS,
    SPOT_QUARTERS,
};
use memscape_lod::source::AddressAxis;
use memscape_lod::source::palette_color;
use memscape_lod::trace_source::RegionFinder;
use memscape_trace::regions::DEFAULT_GAP_THRESHOLD;

use crate::rows::{f64s, i64s, u64s};
use crate::trace::u64_lit;
use crate::{Dataset, Engine, EngineError, Result};
use arrow_schema::DataType;

/// Colours of the thread palette (the views' 64 categorical colours).
const PALETTE: u64 = 64;

/// The levels of an index as the native builder lays them out for a trace.
#[derive(Debug, Clone, PartialEq)]
pub struct LodPlan {
    pub extent_t: u64,
    pub axis: AddressAxis,
    pub log_t: u8,
    pub log_y: u8,
    pub blocks: u64,
    /// In the builder's order: line by line (its anisotropy `a`), coarsest level first.
    pub levels: Vec<LevelSpec>,
    /// What the levels were laid out with.
    pub params: BuildParams,
}

/// One level: its line and depth, and its cells' size (2^log_tau events × 2^log_sig bytes).
pub use memscape_lod::build::LevelSpec;

/// A level's records, laid out as in the index file: columns by `kx`, their cells by `ky`,
/// each cell's buckets by area bucket.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LevelTiles {
    /// Blocks summarised in the level's cells (every block small at it; the index header's
    /// `LevelDesc::blocks` counts only those whose finest level it is).
    pub blocks: u64,
    pub columns: Vec<ColumnRec>,
    pub cells: Vec<CellRec>,
    pub buckets: Vec<BucketRec>,
}

#[derive(Debug, Clone, Default)]
struct CellAcc {
    n: u64,
    sw: f64,
    sh: f64,
    lo: [f32; 2],
    hi: [f32; 2],
    px: [u64; PROFILE_BINS],
    py: [u64; PROFILE_BINS],
    /// Centres per quarter of each slice along y (`CellRec::spot_y`).
    py_quarters: [[u64; SPOT_QUARTERS]; PROFILE_BINS],
    /// The x eighths holding centres of each quarter of each slice along y
    /// (`CellRec::spot_x`).
    py_quarters_x: [[u8; SPOT_QUARTERS]; PROFILE_BINS],
    /// The least, the greatest and the sum of the centres' y of each occupied quarter of the
    /// slices along y (`CellRec::spot_lines`), by quarter (of all `PROFILE_BINS ·
    /// SPOT_QUARTERS`): a cell's occupied quarters are few, 1.5 KB in every cell was not.
    py_quarters_lines: Vec<(u8, [f64; 3])>,
    /// Eighths of the cell holding a centre (`CellRec::mask`).
    mask: u64,
    /// The centres of a cell of at most `FEW_BLOCKS` blocks, sorted.
    few: Vec<[f32; 2]>,
    /// (bucket, n, Σa, Σa², Σrgb)
    buckets: Vec<(i64, u64, f64, f64, [f64; 3])>,
}

/// Logs how long a stage of a level's plans took (`memscape_engine::lod` at debug): where the
/// GUI's first map waits (BENCHMARKS.md, wave 18).
fn stage(name: &str, since: &mut std::time::Instant) {
    tracing::debug!(
        target: "memscape_engine::lod",
        "{name}: {:.2} s",
        since.elapsed().as_secs_f64()
    );
    *since = std::time::Instant::now();
}

fn pow2(e: u32) -> Result<u64> {
    1u64.checked_shl(e)
        .ok_or_else(|| EngineError::Invalid(format!("level of 2^{e}: out of range")))
}

fn i64_lit(v: i64) -> Expr {
    lit(v)
}

/// The collapsed position of `addr` (Int64) on `axis`, 0 outside every region: a balanced CASE
/// tree over the region starts (depth log₂ of the regions), `AddressAxis::collapse`'s rule.
fn collapse_expr(
    addr: &Expr,
    regions: &[memscape_lod::source::RegionSpan],
    below: Expr,
) -> Result<Expr> {
    if regions.is_empty() {
        return Ok(below);
    }
    let mid = regions.len() / 2;
    let r = &regions[mid];
    let leaf = if r.start == r.end {
        when(
            addr.clone().eq(i64_lit(r.start as i64)),
            i64_lit(r.collapsed_start as i64),
        )
        .otherwise(i64_lit(0))?
    } else {
        when(
            addr.clone().lt(i64_lit(r.end as i64)),
            addr.clone() + i64_lit(r.collapsed_start as i64 - r.start as i64),
        )
        .otherwise(i64_lit(0))?
    };
    let left = collapse_expr(addr, &regions[..mid], below)?;
    let right = collapse_expr(addr, &regions[mid + 1..], leaf)?;
    Ok(when(addr.clone().lt(i64_lit(r.start as i64)), left).otherwise(right)?)
}

impl Engine {
    /// The collapsed address axis of host `host`'s blocks (memscape-lod's `address_axis`).
    pub fn lod_axis(&self, dataset: &Dataset, host: Option<&str>) -> Result<AddressAxis> {
        let host = dataset.host(host)?;
        let shift = floor_log2(DEFAULT_GAP_THRESHOLD);
        let page = pow2(shift)?;
        let df = self
            .table("blocks")?
            .filter(col("host").eq(lit(host.as_str())))?
            .aggregate(
                vec![(col("address") / u64_lit(page)).alias("page")],
                vec![
                    min(col("address")).alias("lo"),
                    max(col("address") + col("size")).alias("hi"),
                ],
            )?;
        let mut pages = Vec::new();
        for batch in self.collect(df)? {
            let (lo, hi) = (u64s(&batch, "lo")?, u64s(&batch, "hi")?);
            for (lo, hi) in lo.into_iter().zip(hi) {
                let (lo, hi) = (lo.unwrap_or(0), hi.unwrap_or(0));
                pages.push((lo, hi));
            }
        }
        // One range per page gives the finder's per-page boxes; it merges them in order.
        pages.sort_unstable();
        let mut finder = RegionFinder::new(DEFAULT_GAP_THRESHOLD);
        for (lo, hi) in pages {
            finder.push(lo, hi.saturating_sub(lo));
        }
        Ok(AddressAxis::from_ranges(&finder.finish()))
    }

    /// The index's layout for host `host`: extents, the address axis and every level the
    /// native builder makes with `params` (`LodBuilder::new`'s rule).
    pub fn lod_plan(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        params: &BuildParams,
    ) -> Result<LodPlan> {
        let mut since = std::time::Instant::now();
        let axis = self.lod_axis(dataset, host)?;
        stage("plan: address axis", &mut since);
        let events = self.event_count(dataset, host)?;
        let host = dataset.host(host)?;
        let df = self
            .table("blocks")?
            .filter(col("host").eq(lit(host.as_str())))?
            .aggregate(vec![], vec![count(lit(1u8)).alias("n")])?;
        let blocks = self
            .collect(df)?
            .iter()
            .map(|b| u64s(b, "n").map(|v| v.into_iter().flatten().sum::<u64>()))
            .sum::<Result<u64>>()?;
        stage("plan: block count", &mut since);
        let extent_t = events.max(1) + 1;
        let log_t = ceil_log2(extent_t.max(2)) as u8;
        let log_y = ceil_log2(axis.extent.max(2)) as u8;
        // The native builder's levels, by its rule.
        let levels = level_specs(extent_t, axis.extent, blocks, params);
        Ok(LodPlan {
            extent_t,
            axis,
            log_t,
            log_y,
            blocks,
            levels,
            params: params.clone(),
        })
    }

    /// The blocks of host `host` small at `level`, with their cell, centre offsets, sizes in
    /// cell units, profile slices, area bucket and palette colour; those allocated in
    /// `[events.0, events.1)` only when given (`None`: no end).
    fn lod_blocks(
        &self,
        host: &str,
        axis: &AddressAxis,
        level: &LevelSpec,
        events: Option<(u64, Option<u64>)>,
    ) -> Result<DataFrame> {
        let tau = pow2(u32::from(level.log_tau))?;
        let sig = pow2(u32::from(level.log_sig))?;
        let (pt, py) = (
            pow2(u32::from(level.log_tau) + 1)?,
            pow2(u32::from(level.log_sig) + 1)?,
        );
        let t0 = col("alloc_event");
        // `MapBlock::new`: a zero lifetime is one event, a zero size one byte.
        let w = greatest(vec![col("free_event"), t0.clone() + u64_lit(1)]) - t0.clone();
        let s = greatest(vec![col("size"), u64_lit(1)]);
        let addr = cast(col("address"), DataType::Int64);
        let y = cast(
            collapse_expr(&addr, &axis.regions, i64_lit(0))?,
            DataType::UInt64,
        );
        let mut at_host = col("host").eq(lit(host));
        if let Some((from, to)) = events {
            at_host = at_host.and(t0.clone().gt_eq(u64_lit(from)));
            if let Some(to) = to {
                at_host = at_host.and(t0.clone().lt(u64_lit(to)));
            }
        }
        let df = self
            .table("blocks")?
            .filter(at_host)?
            .select(vec![
                t0.alias("t0"),
                w.alias("w"),
                s.alias("s"),
                y.alias("y"),
                (col("thread") % lit(PALETTE as u32)).alias("pal"),
            ])?
            .filter(col("w").lt(u64_lit(tau)).and(col("s").lt(u64_lit(sig))))?;
        // Centre, exactly: (2 t0 + w) / 2^(log_tau + 1); its offset in the cell as the builder
        // computes it (f64 quotient, then f32).
        let cx2 = col("t0") * u64_lit(2) + col("w");
        let cy2 = col("y") * u64_lit(2) + col("s");
        let frac = |c2: Expr, p: u64| {
            cast(
                cast(c2 % u64_lit(p), DataType::Float64) / lit(p as f64),
                DataType::Float32,
            )
        };
        let wc = cast(col("w"), DataType::Float64) / lit(tau as f64);
        let hc = cast(col("s"), DataType::Float64) / lit(sig as f64);
        let df = df.select(vec![
            (cx2.clone() / u64_lit(pt)).alias("kx"),
            (cy2.clone() / u64_lit(py)).alias("ky"),
            frac(cx2, pt).alias("ux"),
            frac(cy2, py).alias("uy"),
            wc.alias("wc"),
            hc.alias("hc"),
            col("pal"),
        ])?;
        let half = |c: &str| cast(col(c) / lit(2.0f64), DataType::Float32);
        // Sixteenths of the profile's slices: `⌊256u⌋ / 16 = ⌊16u⌋` (both products exact in
        // f32), and groups this fine seldom hold two blocks (`Engine::lod_level`'s centres).
        let slice = |u: &str| {
            let b = cast(col(u) * lit(SUB_SLICES as f32), DataType::Int64);
            let top = i64_lit(SUB_SLICES as i64 - 1);
            when(b.clone().gt(top.clone()), top).otherwise(b)
        };
        let area = col("wc") * col("hc");
        let bucket = cast(
            floor(log2(area.clone()) / lit(f64::from(BUCKET_OCTAVES))),
            DataType::Int64,
        );
        let clamp = when(bucket.clone().lt(i64_lit(-127)), i64_lit(-127))
            .when(bucket.clone().gt(i64_lit(127)), i64_lit(127))
            .otherwise(bucket)?;
        Ok(df.select(vec![
            col("kx"),
            col("ky"),
            (col("ux") - half("wc")).alias("lox"),
            (col("ux") + half("wc")).alias("hix"),
            (col("uy") - half("hc")).alias("loy"),
            (col("uy") + half("hc")).alias("hiy"),
            slice("ux")?.alias("bx"),
            slice("uy")?.alias("by"),
            col("ux"),
            col("uy"),
            col("wc"),
            col("hc"),
            area.alias("area"),
            clamp.alias("bucket"),
            col("pal"),
        ])?)
    }

    /// The records of `level` (of `plan`) for host `host`, as the native builder writes them.
    ///
    /// One scan and one aggregation: the blocks grouped by (cell, x and y [`SUB_SLICES`], area
    /// bucket, palette colour), from which every record kind is summed here — a cell's counts,
    /// extents and box, its profiles (16 sub-slices to a slice: `⌊16u⌋ = ⌊256u⌋ / 16`, both
    /// products exact in f32), its joint mask (32 to an eighth, likewise), its buckets and, for
    /// a cell of at most `FEW_BLOCKS` blocks whose groups hold one block each, its centres (the
    /// group's min).
    /// Until wave 18 this was six plans over the blocks (≈ 3 s each at 5 M blocks in the dev
    /// profile). The groups are many (up to a block each), so the blocks are aggregated in
    /// [`LEVEL_CHUNKS`] ranges of allocation events, more on traces of more than 50 M blocks
    /// ([`level_ranges`]: at most [`LEVEL_RANGE_BLOCKS`] a range; the Parquet row groups of the
    /// others are pruned), each range's groups added here: the engine's hash tables hold one
    /// range's. A cell is encoded to its record as soon as no later range reaches its column
    /// ([`first_open_column`]), so that only the last columns' sums are kept (at 100 M events
    /// the sums of every cell were ≈ 4.5 GB: BENCHMARKS.md, wave 31). Only the few cells whose
    /// groups hold more than one block are scanned for again.
    pub fn lod_level(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        plan: &LodPlan,
        level: &LevelSpec,
    ) -> Result<LevelTiles> {
        self.lod_level_with(dataset, host, plan, level, &|_| {})
    }

    /// [`Engine::lod_level`] telling `progress` the fraction of its ranges of events done.
    pub fn lod_level_with(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        plan: &LodPlan,
        level: &LevelSpec,
        progress: &dyn Fn(f32),
    ) -> Result<LevelTiles> {
        let host = dataset.host(host)?;
        let mut since = std::time::Instant::now();
        let palette: Vec<[f64; 3]> = (0..PALETTE as u32)
            .map(|k| unpack_linear(palette_color(k)).map(f64::from))
            .collect();
        // The cells a later range of events may still add blocks to; the others are encoded
        // into `out` as soon as no later range reaches them (their sums are ≈ 1.9 KB a cell
        // by the RSS, their records 96 bytes: BENCHMARKS.md, wave 31).
        let mut open: std::collections::BTreeMap<(u64, u64), CellAcc> = Default::default();
        // Open cells some group of which holds more than one block: their centres are not
        // known from the groups' minima.
        let mut shared_groups: std::collections::BTreeSet<(u64, u64)> = Default::default();
        let mut out = LevelRecords::default();
        // Closed cells of few blocks to scan again for their centres, encoded without them
        // meanwhile (`LevelRecords::encode_again`).
        let mut rescan = Rescan::default();
        let chunks = level_ranges(plan, self.level_range_blocks());
        let step = plan.extent_t.div_ceil(chunks);
        for j in 0..chunks {
            // The first range from 0 and the last with no end: every block in one range.
            let from = if j == 0 { 0 } else { j * step };
            let to = (j + 1 < chunks).then_some((j + 1) * step);
            let chunk = self.lod_blocks(&host, &plan.axis, level, Some((from, to)))?;
            let groups = chunk.aggregate(
                vec![
                    col("kx"),
                    col("ky"),
                    col("bx"),
                    col("by"),
                    col("bucket"),
                    col("pal"),
                ],
                vec![
                    count(lit(1u8)).alias("n"),
                    sum(col("wc")).alias("sw"),
                    sum(col("hc")).alias("sh"),
                    min(col("lox")).alias("lox"),
                    max(col("hix")).alias("hix"),
                    min(col("loy")).alias("loy"),
                    max(col("hiy")).alias("hiy"),
                    sum(col("area")).alias("a"),
                    sum(col("area") * col("area")).alias("a2"),
                    min(col("ux")).alias("ux"),
                    min(col("uy")).alias("uy"),
                    max(col("ux")).alias("ux1"),
                    max(col("uy")).alias("uy1"),
                    sum(cast(col("ux"), DataType::Float64) * cast(col("uy"), DataType::Float64))
                        .alias("uxy"),
                    sum(cast(col("uy"), DataType::Float64)).alias("suy"),
                ],
            )?;
            self.for_each_batch(groups, |b| {
                add_groups(b, &palette, &mut open, &mut shared_groups)
            })?;
            // Every column before the next range's first is final.
            let closed = match to {
                Some(to) => {
                    let still_open = open.split_off(&(first_open_column(to, level.log_tau), 0));
                    std::mem::replace(&mut open, still_open)
                }
                None => std::mem::take(&mut open),
            };
            for (key, c) in closed {
                let shared = shared_groups.remove(&key);
                close_cell(key, c, shared, &mut out, &mut rescan)?;
            }
            progress((j + 1) as f32 / chunks as f32);
        }
        stage("level: cells, profiles, mask and buckets", &mut since);
        if !rescan.cells.is_empty() {
            tracing::debug!(
                target: "memscape_engine::lod",
                "{} of {} cells scanned again for their centres, in {} columns ({} ranges of events)",
                rescan.cells.len(),
                out.tiles.cells.len(),
                rescan
                    .cells
                    .keys()
                    .map(|k| k.0)
                    .collect::<std::collections::BTreeSet<_>>()
                    .len(),
                chunks
            );
            let keys: Vec<(u64, u64)> = rescan.cells.keys().copied().collect();
            let blocks = self.lod_blocks(&host, &plan.axis, level, None)?;
            self.few_centres(blocks, &keys, &mut rescan.cells)?;
            // Keys closed in order: the records' indices were pushed in the map's order.
            for (c, at) in rescan.cells.values().zip(rescan.records) {
                out.encode_again(at, c);
            }
            stage("level: few centres of shared groups", &mut since);
        }
        Ok(out.tiles)
    }

    /// The centres of the blocks of the cells `keys` (each of at most `FEW_BLOCKS`), added to
    /// `cells`: the blocks whose column and row are among theirs, kept when their cell is one.
    fn few_centres(
        &self,
        blocks: DataFrame,
        keys: &[(u64, u64)],
        cells: &mut std::collections::BTreeMap<(u64, u64), CellAcc>,
    ) -> Result<()> {
        let distinct = |of: &dyn Fn(&(u64, u64)) -> u64| -> Vec<Expr> {
            let set: std::collections::BTreeSet<u64> = keys.iter().map(of).collect();
            set.into_iter().map(u64_lit).collect()
        };
        let (xs, ys) = (distinct(&|k| k.0), distinct(&|k| k.1));
        let df = blocks
            .filter(in_list(col("kx"), xs, false).and(in_list(col("ky"), ys, false)))?
            .select(vec![col("kx"), col("ky"), col("ux"), col("uy")])?;
        let wanted: std::collections::BTreeSet<(u64, u64)> = keys.iter().copied().collect();
        self.for_each_batch(df, |b| {
            let (kx, ky) = (u64s(b, "kx")?, u64s(b, "ky")?);
            let (ux, uy) = (f32s(b, "ux")?, f32s(b, "uy")?);
            for i in 0..b.num_rows() {
                let key = (kx[i].unwrap_or(0), ky[i].unwrap_or(0));
                if wanted.contains(&key)
                    && let Some(c) = cells.get_mut(&key)
                {
                    c.few.push([ux[i], uy[i]]);
                }
            }
            Ok(())
        })
    }
}

/// The x and y slices of a cell a level's blocks are grouped by ([`Engine::lod_level`]): 16 to
/// a slice of the profiles (`PROFILE_BINS`), 32 to an eighth of the joint mask (`MASK_BINS`).
const SUB_SLICES: usize = PROFILE_BINS * 16;

/// How many ranges of allocation events a level's blocks are aggregated in
/// ([`Engine::lod_level`]): the engine's hash tables hold one range's groups.
pub const LEVEL_CHUNKS: u64 = 8;

/// At most this many blocks of the trace to a range of events ([`level_ranges`]): each
/// range's groups are held in the engine's hash tables at once (at 1 B events, 8 ranges held
/// 8–13 GB each: BENCHMARKS.md, waves 29 and 31). 50 M blocks, the 100 M-event traces
/// measured, still take [`LEVEL_CHUNKS`] ranges.
pub const LEVEL_RANGE_BLOCKS: u64 = 6_250_000;

/// How many ranges of allocation events `plan`'s levels are aggregated in: [`LEVEL_CHUNKS`],
/// more where the trace has more than `range_blocks` blocks a range, at most one an event.
/// With more ranges a cell's f64 sums add in another order (within one unit of their codes,
/// as against the native builder).
pub fn level_ranges(plan: &LodPlan, range_blocks: u64) -> u64 {
    LEVEL_CHUNKS
        .max(plan.blocks / range_blocks.max(1))
        .min(plan.extent_t.max(1))
}

/// The first column of a level of cells 2^`log_tau` events wide that a block allocated at or
/// after event `from` can fall in: a block small at the level lives less than 2^log_tau events,
/// its centre `t0 + w/2` is at least `from`, so its column `⌊(2 t0 + w) / 2^(log_tau+1)⌋` is
/// at least `⌊from / 2^log_tau⌋` (and at most one past its start's column). Cells of the
/// columns before it are final once the blocks allocated before `from` are in.
pub fn first_open_column(from: u64, log_tau: u8) -> u64 {
    from.checked_shr(u32::from(log_tau)).unwrap_or(0)
}

/// A level's records as its cells close, in (kx, ky) order: columns by `kx`, their cells by
/// `ky`, each cell's buckets by area bucket (the whole level's map encoded at once until
/// wave 31).
#[derive(Default)]
struct LevelRecords {
    tiles: LevelTiles,
    last: Option<(u64, u64)>,
}

impl LevelRecords {
    /// Encodes the closed cell `key`; its index among the level's cells.
    fn push(&mut self, key: (u64, u64), c: &CellAcc) -> Result<usize> {
        if let Some(last) = self.last.filter(|last| key <= *last) {
            return Err(EngineError::Invalid(format!(
                "level cell {key:?} closed after {last:?}: a range of events reached a cell \
                 already encoded"
            )));
        }
        let (kx, ky) = key;
        if self.last.map(|l| l.0) != Some(kx) {
            self.tiles.columns.push(ColumnRec {
                kx,
                first_cell: self.tiles.cells.len() as u64,
            });
        }
        self.last = Some(key);
        let out = &mut self.tiles;
        out.blocks += c.n;
        let mut buckets = c.buckets.clone();
        buckets.sort_unstable_by_key(|e| e.0);
        let at = out.cells.len();
        out.cells
            .push(encode_cell(ky, out.buckets.len() as u64, buckets.len(), c));
        for (b, count, a, a2, rgb) in buckets {
            // Attributes are 0 for the thread colouring.
            let sums = BucketSums {
                n: count as f64,
                a,
                a2,
                rgb,
                attr: 0.0,
            };
            out.buckets
                .push(BucketRec::encode(b.clamp(-127, 127) as i16, &sums));
        }
        Ok(at)
    }

    /// Encodes the cell at `at` again from `c` (its centres found since), in its place.
    fn encode_again(&mut self, at: usize, c: &CellAcc) {
        if let Some(rec) = self.tiles.cells.get_mut(at) {
            *rec = encode_cell(rec.ky, rec.bucket_first, usize::from(rec.buckets), c);
        }
    }
}

/// Closed cells of at most `FEW_BLOCKS` blocks some group of which held more than one block:
/// their sums, by key, and their records' indices in the same order.
#[derive(Default)]
struct Rescan {
    cells: std::collections::BTreeMap<(u64, u64), CellAcc>,
    records: Vec<usize>,
}

/// Encodes a cell no later range of events reaches (`shared`: some group of it held more
/// than one block); one of few blocks whose centres are not known is kept in `rescan`.
fn close_cell(
    key: (u64, u64),
    mut c: CellAcc,
    shared: bool,
    out: &mut LevelRecords,
    rescan: &mut Rescan,
) -> Result<()> {
    // Only a cell of at most FEW_BLOCKS blocks keeps its centres.
    let scan_again = c.n as usize <= FEW_BLOCKS && shared;
    if c.n as usize > FEW_BLOCKS || shared {
        c.few.clear();
    }
    let at = out.push(key, &c)?;
    if scan_again {
        rescan.records.push(at);
        rescan.cells.insert(key, c);
    }
    Ok(())
}

/// Adds one batch of a level's groups (cell, x slice, y slice, area bucket, palette colour:
/// [`Engine::lod_level`]) to `cells`; cells a group of which holds more than one block go
/// into `shared`.
fn add_groups(
    b: &arrow_array::RecordBatch,
    palette: &[[f64; 3]],
    cells: &mut std::collections::BTreeMap<(u64, u64), CellAcc>,
    shared: &mut std::collections::BTreeSet<(u64, u64)>,
) -> Result<()> {
    let (kx, ky, n) = (u64s(b, "kx")?, u64s(b, "ky")?, u64s(b, "n")?);
    let (bx, by) = (i64s(b, "bx")?, i64s(b, "by")?);
    let (bucket, pal) = (i64s(b, "bucket")?, u64s(b, "pal")?);
    let (sw, sh) = (f64s(b, "sw")?, f64s(b, "sh")?);
    let (a, a2) = (f64s(b, "a")?, f64s(b, "a2")?);
    let (lox, hix) = (f32s(b, "lox")?, f32s(b, "hix")?);
    let (loy, hiy) = (f32s(b, "loy")?, f32s(b, "hiy")?);
    let (ux, uy) = (f32s(b, "ux")?, f32s(b, "uy")?);
    let (ux1, uy1, uxy) = (f32s(b, "ux1")?, f32s(b, "uy1")?, f64s(b, "uxy")?);
    let sum_uy = f64s(b, "suy")?;
    let top = SUB_SLICES as i64 - 1;
    let per_slice = SUB_SLICES / PROFILE_BINS;
    let per_eighth = SUB_SLICES / MASK_BINS;
    for i in 0..b.num_rows() {
        let key = (kx[i].unwrap_or(0), ky[i].unwrap_or(0));
        let blocks_n = n[i].unwrap_or(0);
        let c = cells.entry(key).or_insert_with(|| CellAcc {
            lo: [f32::INFINITY; 2],
            hi: [f32::NEG_INFINITY; 2],
            ..CellAcc::default()
        });
        c.n += blocks_n;
        c.sw += sw[i].unwrap_or(0.0);
        c.sh += sh[i].unwrap_or(0.0);
        c.lo = [c.lo[0].min(lox[i]), c.lo[1].min(loy[i])];
        c.hi = [c.hi[0].max(hix[i]), c.hi[1].max(hiy[i])];
        let (jx, jy) = (
            bx[i].unwrap_or(0).clamp(0, top) as usize,
            by[i].unwrap_or(0).clamp(0, top) as usize,
        );
        c.px[jx / per_slice] += blocks_n;
        c.py[jy / per_slice] += blocks_n;
        let quarter = jy / (per_slice / SPOT_QUARTERS);
        // The group's least, greatest and summed centres (its y sub-slice lies in one
        // quarter).
        let y = [
            f64::from(uy[i]),
            f64::from(uy1[i]),
            sum_uy[i].unwrap_or(0.0),
        ];
        match c
            .py_quarters_lines
            .iter_mut()
            .find(|l| usize::from(l.0) == quarter)
        {
            Some(l) => l.1 = [l.1[0].min(y[0]), l.1[1].max(y[1]), l.1[2] + y[2]],
            None => c.py_quarters_lines.push((quarter as u8, y)),
        }
        c.py_quarters[quarter / SPOT_QUARTERS][quarter % SPOT_QUARTERS] += blocks_n;
        c.py_quarters_x[quarter / SPOT_QUARTERS][quarter % SPOT_QUARTERS] |= 1 << (jx / per_eighth);
        c.mask |= 1u64 << ((jy / per_eighth) * MASK_BINS + jx / per_eighth).min(63);
        if c.few.len() + blocks_n as usize <= FEW_BLOCKS {
            match blocks_n {
                1 => c.few.push([ux[i], uy[i]]),
                2 => c.few.extend(pair(
                    [ux[i], uy[i]],
                    [ux1[i], uy1[i]],
                    uxy[i].unwrap_or(0.0),
                )),
                _ => {
                    shared.insert(key);
                }
            }
        }
        let bk = bucket[i].unwrap_or(0);
        let colour = palette[(pal[i].unwrap_or(0) % PALETTE) as usize];
        let slot = match c.buckets.iter().position(|e| e.0 == bk) {
            Some(p) => p,
            None => {
                c.buckets.push((bk, 0, 0.0, 0.0, [0.0; 3]));
                c.buckets.len() - 1
            }
        };
        let e = &mut c.buckets[slot];
        e.1 += blocks_n;
        e.2 += a[i].unwrap_or(0.0);
        e.3 += a2[i].unwrap_or(0.0);
        for (sum, ch) in e.4.iter_mut().zip(colour) {
            *sum += blocks_n as f64 * ch;
        }
    }
    Ok(())
}

/// The two centres of a group of two blocks from their least and greatest coordinates and
/// the sum of their products (exact in f64): (lo, hi) and the other corners are the two
/// candidates, told apart by that sum when both coordinates differ.
fn pair(lo: [f32; 2], hi: [f32; 2], sum_xy: f64) -> [[f32; 2]; 2] {
    let (x0, y0, x1, y1) = (
        f64::from(lo[0]),
        f64::from(lo[1]),
        f64::from(hi[0]),
        f64::from(hi[1]),
    );
    let along = x0 * y0 + x1 * y1;
    let across = x0 * y1 + x1 * y0;
    if (sum_xy - along).abs() <= (sum_xy - across).abs() {
        [lo, hi]
    } else {
        [[lo[0], hi[1]], [hi[0], lo[1]]]
    }
}

/// A Float32 result column (null → 0).
fn f32s(b: &arrow_array::RecordBatch, c: &str) -> Result<Vec<f32>> {
    use arrow_array::cast::AsArray;
    let a = b
        .column_by_name(c)
        .ok_or_else(|| EngineError::Invalid(format!("result has no column {c:?}")))?;
    if a.data_type() != &DataType::Float32 {
        return Err(EngineError::Invalid(format!(
            "result column {c:?}: expected Float32, found {}",
            a.data_type()
        )));
    }
    Ok(a.as_primitive::<arrow_array::types::Float32Type>()
        .iter()
        .map(|v| v.unwrap_or(0.0))
        .collect())
}

/// The record of a cell's sums, quantised by memscape-lod's own encoder (as its builder's
/// `LevelOut::write_column`).
fn encode_cell(ky: u64, bucket_first: u64, buckets: usize, c: &CellAcc) -> CellRec {
    // The builder's `few` centres are in its arrival order; here sorted: the order is not
    // part of what the index says.
    let mut few = c.few.clone();
    few.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
    let mut lines = [[[f64::INFINITY, f64::NEG_INFINITY, 0.0]; SPOT_QUARTERS]; PROFILE_BINS];
    for &(q, y) in &c.py_quarters_lines {
        let q = usize::from(q);
        lines[q / SPOT_QUARTERS][q % SPOT_QUARTERS] = y;
    }
    CellRec::encode(&CellSums {
        ky,
        bucket_first,
        buckets: buckets as u16,
        n: c.n as f64,
        lo: c.lo,
        hi: c.hi,
        sw: c.sw,
        sh: c.sh,
        px: &c.px.map(|v| v as f32),
        py: &c.py.map(|v| v as f32),
        py_quarters: Some(&c.py_quarters.map(|q| q.map(|v| v as f32))),
        py_quarters_x: Some(&c.py_quarters_x),
        py_quarters_lines: Some(&lines),
        mask: c.mask,
        few: &few,
    })
}
