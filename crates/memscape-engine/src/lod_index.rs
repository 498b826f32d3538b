//! A whole level-of-detail index file of a trace dataset, written from the engine's results:
//! every level's tiles ([`Engine::lod_level`]), the size classes (the blocks large at some
//! level, each a copy, as memscape-lod's builder copies the long-lived and ≥ 4 KiB ones) and the
//! header, in memscape-lod's file format (`memscape_lod::LodIndex::open` reads and checks it).
//! The allocation map of a dataset draws from it as from a trace's own index
//! (`memscape_lod::LodTrace::with_index`); a view finer than every level draws the small blocks
//! near it exactly, which [`Engine::lod_small_blocks`] fetches (the classes hold the rest).
//!
//! The classes are written in bounded memory: the query sorts the large blocks by start
//! (DataFusion's sort, spilling past the engine's memory limit) and streams them into
//! [`SpilledClasses`], whose chunks wait in a temporary file until the header, which states each
//! class's length, is written (at 1 B events ≈ 490 M blocks, 20 GB as `LodBlock`s).
//!
//! Differences from the native index, none of which changes a picture: every class is copied
//! (the native builder lists the short, small members of a class by block number and reads
//! them from the trace, which the engine does not hold); a level's `blocks` counts the blocks
//! whose finest level it is, as natively, when the next finer level of its line is written
//! too (else every block small at it: the count is informative, nothing draws from it); the
//! heap-size curve is left out (the map does not read it; the engine's heap series is
//! `heap_series`).

use std::io::Write;
use std::path::Path;

use datafusion::functions::expr_fn::greatest;
use datafusion::prelude::{col, lit};
use memscape_lod::build::floor_log2;
use memscape_lod::format::{ClassDesc, LevelDesc, Section};
use memscape_lod::source::palette_color;
use memscape_lod::{IndexMeta, LodBlock, SourceId};
use memscape_trace::Trace;

use crate::lod::{LevelSpec, LevelTiles, LodPlan};
use crate::rows::u64s;
use crate::trace::u64_lit;
use crate::{Dataset, Engine, EngineError, Result};

/// One size class: lifetimes in `[2^c, 2^(c+1))` events, sizes in `[2^d, 2^(d+1))` bytes, its
/// blocks by start.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeClass {
    pub c: u8,
    pub d: u8,
    pub blocks: Vec<LodBlock>,
}

/// The smallest cell of `plan`'s levels in each direction (log₂): a block at least that long
/// or tall is large at some level (memscape-lod's `copy_min_c`, `copy_min_d`).
pub fn copy_min(plan: &LodPlan) -> (u8, u8) {
    let c = plan
        .levels
        .iter()
        .map(|l| l.log_tau)
        .min()
        .unwrap_or(u8::MAX);
    let d = plan
        .levels
        .iter()
        .map(|l| l.log_sig)
        .min()
        .unwrap_or(u8::MAX);
    (c, d)
}

/// `2^e` as a bound on u64 values (`None`: no u64 value reaches it).
fn bound(e: u8) -> Option<u64> {
    1u64.checked_shl(u32::from(e))
}

/// The rows of `b` (columns `t0`, `t1`, `size`, `address`, `thread`) as `each(address, thread,
/// block)`, the block on `plan`'s axis coloured by thread.
fn batch_blocks(
    b: &arrow_array::RecordBatch,
    plan: &LodPlan,
    mut each: impl FnMut(u64, u32, LodBlock) -> Result<()>,
) -> Result<()> {
    let (t0, t1, size) = (u64s(b, "t0")?, u64s(b, "t1")?, u64s(b, "size")?);
    let (address, thread) = (u64s(b, "address")?, u64s(b, "thread")?);
    for i in 0..b.num_rows() {
        let y = plan
            .axis
            .collapse(address[i].unwrap_or(0))
            .unwrap_or_default();
        let thread = u32::try_from(thread[i].unwrap_or(0)).unwrap_or(u32::MAX);
        let t = t0[i].unwrap_or(0);
        let block = LodBlock::new(
            t,
            t1[i].unwrap_or(t),
            y,
            size[i].unwrap_or(0),
            palette_color(thread),
            0.0,
        );
        each(address[i].unwrap_or(0), thread, block)?;
    }
    Ok(())
}

/// How many blocks a size class keeps in memory before [`SpilledClasses`] writes them to its
/// file: 640 KiB of [`LodBlock`]s, so that a hundred classes hold ≈ 64 MB whatever the blocks.
pub const CLASS_CHUNK_BLOCKS: usize = 1 << 14;

/// The class of a block: (⌊log₂ lifetime⌋, ⌊log₂ size⌋), as memscape-lod's builder keys it.
fn class_key(b: &LodBlock) -> (u8, u8) {
    (floor_log2(b.width()) as u8, floor_log2(b.size) as u8)
}

/// One class of [`SpilledClasses`]: where its full chunks lie in the spill file, in order, and
/// the blocks after them.
#[derive(Debug, Default)]
struct SpilledClass {
    chunks: Vec<u64>,
    pending: Vec<LodBlock>,
}

/// Size classes in bounded memory: blocks pushed by start go to their class, and each class's
/// blocks go to an unnamed temporary file in chunks of `chunk_blocks` as they fill, so that
/// [`write_index_spilled`] copies every class, in (c, d) order and by start, into the index
/// file without holding them (1 B events: ≈ 490 M large blocks, 20 GB as `LodBlock`s).
#[derive(Debug)]
pub struct SpilledClasses {
    file: std::fs::File,
    /// The spill file's length: where the next chunk goes.
    end: u64,
    chunk_blocks: usize,
    classes: std::collections::BTreeMap<(u8, u8), SpilledClass>,
    blocks: u64,
}

impl SpilledClasses {
    /// Classes spilling to a temporary file in `dir` (removed when they are dropped, or by the
    /// system if the process dies), [`CLASS_CHUNK_BLOCKS`] blocks a chunk.
    pub fn new_in(dir: &Path) -> Result<Self> {
        let file = tempfile::tempfile_in(dir)
            .map_err(|e| EngineError::Invalid(format!("{}: {e}", dir.display())))?;
        Ok(Self {
            file,
            end: 0,
            chunk_blocks: CLASS_CHUNK_BLOCKS,
            classes: Default::default(),
            blocks: 0,
        })
    }

    /// Chunks of `blocks` blocks (at least 1): tests spill after a few blocks.
    pub fn with_chunk_blocks(mut self, blocks: usize) -> Self {
        self.chunk_blocks = blocks.max(1);
        self
    }

    /// Adds `block` to its class; blocks must come by start (each class keeps their order).
    pub fn push(&mut self, block: LodBlock) -> Result<()> {
        let class = self.classes.entry(class_key(&block)).or_default();
        class.pending.push(block);
        self.blocks += 1;
        if class.pending.len() >= self.chunk_blocks {
            let bytes: &[u8] = bytemuck::cast_slice(&class.pending);
            self.file.write_all(bytes).map_err(spill_error)?;
            class.chunks.push(self.end);
            self.end += bytes.len() as u64;
            class.pending.clear();
        }
        Ok(())
    }

    /// How many blocks were pushed.
    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// How many classes hold blocks.
    pub fn len(&self) -> usize {
        self.classes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.classes.is_empty()
    }

    /// Each class's key and length in bytes, in (c, d) order.
    fn sections(&self) -> Vec<((u8, u8), usize)> {
        let block = std::mem::size_of::<LodBlock>();
        self.classes
            .iter()
            .map(|(&key, class)| {
                let n = class.chunks.len() * self.chunk_blocks + class.pending.len();
                (key, n * block)
            })
            .collect()
    }

    /// Writes every class's blocks to `w`, in (c, d) order, each padded to 8 bytes.
    fn copy_to(mut self, w: &mut dyn Write) -> std::io::Result<()> {
        use std::io::{Read, Seek, SeekFrom};
        let mut chunk = vec![0u8; self.chunk_blocks * std::mem::size_of::<LodBlock>()];
        for class in self.classes.values() {
            for &at in &class.chunks {
                self.file.seek(SeekFrom::Start(at))?;
                self.file.read_exact(&mut chunk)?;
                w.write_all(&chunk)?;
            }
            let pending: &[u8] = bytemuck::cast_slice(&class.pending);
            w.write_all(pending)?;
            let len = class.chunks.len() * chunk.len() + pending.len();
            pad_to_8(w, len)?;
        }
        Ok(())
    }
}

/// Zeros after a section of `len` bytes up to the next multiple of 8 (the index's sections are
/// 8-byte aligned).
fn pad_to_8(w: &mut dyn Write, len: usize) -> std::io::Result<()> {
    w.write_all(&[0u8; 8][..(len.next_multiple_of(8) - len)])
}

fn spill_error(e: std::io::Error) -> EngineError {
    EngineError::Invalid(format!("size classes' spill file: {e}"))
}

impl Engine {
    /// The blocks of `host` (lifetime `w`, size `s`, both at least 1; start `t0`, end `t1`)
    /// with `filter` true: their columns `t0`, `t1`, `size`, `address`, `thread`.
    fn blocks_frame(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        filter: datafusion::prelude::Expr,
    ) -> Result<datafusion::prelude::DataFrame> {
        let host = dataset.host(host)?;
        let t0 = col("alloc_event");
        Ok(self
            .table("blocks")?
            .filter(col("host").eq(lit(host.as_str())))?
            .select(vec![
                t0.clone().alias("t0"),
                col("free_event").alias("t1"),
                (greatest(vec![col("free_event"), t0.clone() + u64_lit(1)]) - t0).alias("w"),
                greatest(vec![col("size"), u64_lit(1)]).alias("s"),
                col("size"),
                col("address"),
                col("thread"),
            ])?
            .filter(filter)?
            .select_columns(&["t0", "t1", "size", "address", "thread"])?)
    }

    /// The blocks (lifetime `w`, size `s`, both at least 1) with `large(w, s)` true, as
    /// memscape-lod's [`LodBlock`]s on `plan`'s axis coloured by thread, by start.
    fn lod_blocks_where(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        plan: &LodPlan,
        filter: datafusion::prelude::Expr,
    ) -> Result<Vec<(u64, u32, LodBlock)>> {
        let df = self.blocks_frame(dataset, host, filter)?;
        let mut out = Vec::new();
        for b in self.collect(df)? {
            batch_blocks(&b, plan, |address, thread, block| {
                out.push((address, thread, block));
                Ok(())
            })?;
        }
        // Allocation order: every allocation is its own event.
        out.sort_unstable_by_key(|(_, _, b)| b.t0);
        Ok(out)
    }

    /// Hands `each` every block large at some level of `plan` (lifetime ≥ 2^copy_min_c events
    /// or size ≥ 2^copy_min_d bytes), by start, as the query streams them: DataFusion sorts
    /// them (spilling past the engine's memory limit, `Engine::embedded_bounded`), nothing
    /// here holds them.
    fn for_each_large_block(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        plan: &LodPlan,
        mut each: impl FnMut(LodBlock) -> Result<()>,
    ) -> Result<()> {
        let (min_c, min_d) = copy_min(plan);
        let large = match (bound(min_c), bound(min_d)) {
            (None, None) => return Ok(()),
            (Some(c), None) => col("w").gt_eq(u64_lit(c)),
            (None, Some(d)) => col("s").gt_eq(u64_lit(d)),
            (Some(c), Some(d)) => col("w").gt_eq(u64_lit(c)).or(col("s").gt_eq(u64_lit(d))),
        };
        // Allocation order: every allocation is its own event.
        let df = self
            .blocks_frame(dataset, host, large)?
            .sort(vec![col("t0").sort(true, false)])?;
        self.for_each_batch(df, |b| batch_blocks(b, plan, |_, _, block| each(block)))
    }

    /// The size classes of `plan`: every block large at some level (lifetime ≥ 2^copy_min_c
    /// events or size ≥ 2^copy_min_d bytes), by (⌊log₂ lifetime⌋, ⌊log₂ size⌋), each sorted
    /// by start — in memory (the index file is written from [`Engine::lod_classes_spilled`]).
    pub fn lod_classes(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        plan: &LodPlan,
    ) -> Result<Vec<SizeClass>> {
        let mut classes: std::collections::BTreeMap<(u8, u8), Vec<LodBlock>> = Default::default();
        self.for_each_large_block(dataset, host, plan, |b| {
            classes.entry(class_key(&b)).or_default().push(b);
            Ok(())
        })?;
        Ok(classes
            .into_iter()
            .map(|((c, d), blocks)| SizeClass { c, d, blocks })
            .collect())
    }

    /// [`Engine::lod_classes`] pushed into `classes` as they stream (bounded memory).
    pub fn lod_classes_spilled(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        plan: &LodPlan,
        classes: &mut SpilledClasses,
    ) -> Result<()> {
        self.for_each_large_block(dataset, host, plan, |b| classes.push(b))
    }

    /// The blocks small at every level of `meta` (in no class) allocated in `[t0, t1)` events,
    /// as the block columns a view finer than every level reads (`TraceBlocks`): `skeleton`
    /// (the dataset's call tree and threads, `read_trace_skeleton`) with these blocks, by start.
    pub fn lod_small_blocks(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        meta: &IndexMeta,
        t: [u64; 2],
        mut skeleton: Trace,
    ) -> Result<Trace> {
        let plan = LodPlan {
            extent_t: meta.extent_t,
            axis: meta.axis.clone(),
            log_t: meta.log_t,
            log_y: meta.log_y,
            blocks: meta.blocks,
            levels: Vec::new(),
            params: meta.params.clone(),
        };
        let mut small = col("t0")
            .gt_eq(u64_lit(t[0]))
            .and(col("t0").lt(u64_lit(t[1])));
        if let Some(c) = bound(meta.copy_min_c) {
            small = small.and(col("w").lt(u64_lit(c)));
        }
        if let Some(d) = bound(meta.copy_min_d) {
            small = small.and(col("s").lt(u64_lit(d)));
        }
        let blocks = self.lod_blocks_where(dataset, host, &plan, small)?;
        let n = blocks.len();
        let (mut t0, mut t1, mut address, mut size, mut thread) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        // `TraceBlocks` makes the block again from these columns (and colours it by thread).
        for (a, th, b) in &blocks {
            t0.push(b.t0);
            t1.push(b.t1);
            address.push(*a);
            size.push(b.size);
            thread.push(*th);
        }
        let b = &mut skeleton.blocks;
        b.alloc_event = t0.into();
        b.free_event = t1.into();
        b.address = address.into();
        b.size = size.into();
        b.thread = thread.into();
        b.site = vec![0u32; n].into();
        b.flags = vec![0u8; n].into();
        Ok(skeleton)
    }

    /// Computes the index of host `host` as `plan` lays it out — the levels numbered `which`
    /// (all of them: `None`; a view needs one, `lod_level_for`) and the size classes of every
    /// level — and writes it to `out` in memscape-lod's format; `source` says what it was built
    /// from (checked by whoever reuses the file). Returns its header.
    pub fn lod_index(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        plan: &LodPlan,
        which: Option<&[usize]>,
        source: SourceId,
        out: &Path,
    ) -> Result<IndexMeta> {
        self.lod_index_with(dataset, host, plan, which, source, out, &|_, _| {})
    }

    /// [`Engine::lod_index`] telling `progress(fraction, stage)` how far it is: after each
    /// range of events of each level (`lod::level_ranges` a level) and before the size classes.
    #[allow(clippy::too_many_arguments)]
    pub fn lod_index_with(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        plan: &LodPlan,
        which: Option<&[usize]>,
        source: SourceId,
        out: &Path,
        progress: &dyn Fn(f32, &str),
    ) -> Result<IndexMeta> {
        let all: Vec<usize> = (0..plan.levels.len()).collect();
        let which = which.unwrap_or(&all);
        let mut levels = Vec::new();
        // The size classes count as one more level's work.
        let steps = (which.len() + 1) as f32;
        for (done, &k) in which.iter().enumerate() {
            let spec = plan.levels.get(k).ok_or_else(|| {
                EngineError::Invalid(format!("level {k} of a plan of {}", plan.levels.len()))
            })?;
            let stage = format!("level {} of {}", done + 1, which.len());
            let tiles = self.lod_level_with(dataset, host, plan, spec, &|f| {
                progress((done as f32 + f) / steps, &stage)
            })?;
            levels.push((*spec, tiles));
        }
        progress(which.len() as f32 / steps, "size classes");
        let since = std::time::Instant::now();
        // The spill file beside the index: its cache directory has room for the index.
        let dir = out
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let mut classes = SpilledClasses::new_in(dir)?;
        self.lod_classes_spilled(dataset, host, plan, &mut classes)?;
        tracing::debug!(
            target: "memscape_engine::lod",
            "size classes: {:.2} s, {} blocks",
            since.elapsed().as_secs_f64(),
            classes.blocks()
        );
        write_index_spilled(plan, &levels, classes, source, out)
    }
}

/// The level of `plan` a view with pixels of `pixel` (events × bytes) is drawn from, by
/// memscape-lod's rule (`LodIndex::level_for`: the largest cells at most
/// `max_cell_pixels` pixels in both directions); `None`: the view is finer than every level.
pub fn lod_level_for(plan: &LodPlan, pixel: [f64; 2]) -> Option<usize> {
    let slack = memscape_lod::index::max_cell_pixels();
    let mut best: Option<(usize, i32)> = None;
    for (i, l) in plan.levels.iter().enumerate() {
        let tau = 2f64.powi(i32::from(l.log_tau));
        let sig = 2f64.powi(i32::from(l.log_sig));
        if tau <= pixel[0] * slack && sig <= pixel[1] * slack {
            let size = i32::from(l.log_tau) + i32::from(l.log_sig);
            if best.is_none_or(|(_, s)| size > s) {
                best = Some((i, size));
            }
        }
    }
    best.map(|(i, _)| i)
}

/// The level of `plan` a frame of `view` is drawn from, by memscape-lod's rule
/// (`LodIndex::level_for_frame`: [`lod_level_for`], or for frames of few pixels the level of
/// finer pixels, `memscape_lod::index::level_for_frame_by`), so that an index of that one level
/// draws the frame the whole index draws; `None`: the view is finer than every level.
pub fn lod_level_for_frame(plan: &LodPlan, view: &memscape_lod::LodView) -> Option<usize> {
    memscape_lod::index::level_for_frame_by(view, memscape_lod::index::detail_pixels(), |pixel| {
        lod_level_for(plan, pixel)
    })
}

/// Writes an index file of `plan` with these levels (each with its tiles, in the plan's
/// order) and classes: memscape-lod's layout (magic, version, JSON header length and header,
/// then 8-byte-aligned sections), through a temporary file renamed into place.
pub fn write_index(
    plan: &LodPlan,
    tiles: &[(LevelSpec, LevelTiles)],
    classes: &[SizeClass],
    source: SourceId,
    out: &Path,
) -> Result<IndexMeta> {
    let sections: Vec<((u8, u8), usize)> = classes
        .iter()
        .map(|c| ((c.c, c.d), std::mem::size_of_val(&c.blocks[..])))
        .collect();
    write_index_with(plan, tiles, &sections, source, out, |w| {
        for c in classes {
            let bytes: &[u8] = bytemuck::cast_slice(&c.blocks);
            w.write_all(bytes)?;
            pad_to_8(w, bytes.len())?;
        }
        Ok(())
    })
}

/// [`write_index`] with the classes of `classes`, copied from their spill file: the same file,
/// byte for byte, as [`write_index`] of the same classes in memory.
pub fn write_index_spilled(
    plan: &LodPlan,
    tiles: &[(LevelSpec, LevelTiles)],
    classes: SpilledClasses,
    source: SourceId,
    out: &Path,
) -> Result<IndexMeta> {
    let sections = classes.sections();
    write_index_with(plan, tiles, &sections, source, out, |w| classes.copy_to(w))
}

/// The index file: the header (its class sections of `class_sections` bytes each, by key),
/// the levels' tiles, then what `write_classes` writes (every class's blocks, each padded to 8
/// bytes, in the order of `class_sections`).
fn write_index_with(
    plan: &LodPlan,
    tiles: &[(LevelSpec, LevelTiles)],
    class_sections: &[((u8, u8), usize)],
    source: SourceId,
    out: &Path,
    write_classes: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<IndexMeta> {
    let mut offset = 0u64;
    let mut section = |bytes: usize| {
        let s = Section {
            offset,
            len: bytes as u64,
        };
        offset += (bytes as u64).next_multiple_of(8);
        s
    };
    let mut levels = Vec::with_capacity(tiles.len());
    for (k, (spec, t)) in tiles.iter().enumerate() {
        // The builder counts a block in its finest level of each line: this level's blocks
        // less the next finer one's on the same line.
        let finer = tiles
            .get(k + 1)
            .filter(|(next, _)| next.line == spec.line && next.k == spec.k + 1)
            .map_or(0, |(_, next)| next.blocks);
        levels.push(LevelDesc {
            log_tau: spec.log_tau,
            log_sig: spec.log_sig,
            blocks: t.blocks.saturating_sub(finer),
            columns: section(std::mem::size_of_val(&t.columns[..])),
            cells: section(std::mem::size_of_val(&t.cells[..])),
            buckets: section(std::mem::size_of_val(&t.buckets[..])),
        });
    }
    let class_descs: Vec<ClassDesc> = class_sections
        .iter()
        .map(|&((c, d), bytes)| ClassDesc {
            c,
            d,
            copied: true,
            blocks: section(bytes),
        })
        .collect();
    let (copy_min_c, copy_min_d) = copy_min(plan);
    let meta = IndexMeta {
        extent_t: plan.extent_t,
        extent_y: plan.axis.extent,
        log_t: plan.log_t,
        log_y: plan.log_y,
        blocks: plan.blocks,
        params: plan.params.clone(),
        levels,
        classes: class_descs,
        source,
        axis: plan.axis.clone(),
        coloring: String::from("thread"),
        copy_min_c,
        copy_min_d,
        curve: Vec::new(),
    };
    let json = serde_json::to_vec(&meta).map_err(|e| EngineError::Invalid(e.to_string()))?;
    let tmp = out.with_extension("lod.partial");
    let io = |e: std::io::Error| EngineError::Invalid(format!("{}: {e}", tmp.display()));
    let file = std::fs::File::create(&tmp).map_err(io)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    w.write_all(memscape_lod::MAGIC).map_err(io)?;
    w.write_all(&memscape_lod::VERSION.to_le_bytes())
        .map_err(io)?;
    w.write_all(&(json.len() as u64).to_le_bytes())
        .map_err(io)?;
    w.write_all(&json).map_err(io)?;
    pad_to_8(&mut w, 20 + json.len()).map_err(io)?;
    let mut put = |bytes: &[u8]| -> std::io::Result<()> {
        w.write_all(bytes)?;
        pad_to_8(&mut w, bytes.len())
    };
    for (_, t) in tiles {
        put(bytemuck::cast_slice(&t.columns)).map_err(io)?;
        put(bytemuck::cast_slice(&t.cells)).map_err(io)?;
        put(bytemuck::cast_slice(&t.buckets)).map_err(io)?;
    }
    write_classes(&mut w).map_err(io)?;
    w.flush().map_err(io)?;
    drop(w);
    std::fs::rename(&tmp, out)
        .map_err(|e| EngineError::Invalid(format!("{}: {e}", out.display())))?;
    Ok(meta)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks by start in several classes, interleaved: lifetimes and sizes cycling through a
    /// few powers of two, so that every class spills many chunks between another's.
    fn blocks(n: u64) -> Vec<LodBlock> {
        (0..n)
            .map(|t| {
                let life = 1u64 << (t * 7 % 5) | (t % 3);
                let size = (1u64 << (t * 3 % 4 + 4)) + t % 11;
                LodBlock::new(
                    t,
                    t + life,
                    t * 64,
                    size,
                    palette_color((t % 4) as u32),
                    0.0,
                )
            })
            .collect()
    }

    fn plan() -> LodPlan {
        let spec = LevelSpec {
            line: 0,
            k: 0,
            log_tau: 3,
            log_sig: 5,
        };
        LodPlan {
            extent_t: 1000,
            axis: memscape_lod::source::AddressAxis::from_ranges(&[(0, 64_000)]),
            log_t: 10,
            log_y: 16,
            blocks: 1000,
            levels: vec![spec],
            params: memscape_lod::BuildParams::default(),
        }
    }

    #[test]
    fn spilled_classes_write_the_index_that_classes_in_memory_write() {
        let dir = tempfile::tempdir().unwrap();
        let plan = plan();
        let tiles = vec![(plan.levels[0], LevelTiles::default())];
        let all = blocks(1000);
        let mut memory: std::collections::BTreeMap<(u8, u8), Vec<LodBlock>> = Default::default();
        for b in &all {
            memory.entry(class_key(b)).or_default().push(*b);
        }
        let memory: Vec<SizeClass> = memory
            .into_iter()
            .map(|((c, d), blocks)| SizeClass { c, d, blocks })
            .collect();
        assert!(memory.len() >= 8, "{} classes", memory.len());
        let want_path = dir.path().join("memory.lod");
        let want_meta =
            write_index(&plan, &tiles, &memory, SourceId::default(), &want_path).unwrap();
        let want = std::fs::read(&want_path).unwrap();
        // Chunks of 1 block (every block through the file), 7 (chunks and remainders), more
        // than any class holds (nothing spilled).
        for chunk in [1, 7, CLASS_CHUNK_BLOCKS] {
            let mut spilled = SpilledClasses::new_in(dir.path())
                .unwrap()
                .with_chunk_blocks(chunk);
            for b in &all {
                spilled.push(*b).unwrap();
            }
            assert_eq!(spilled.blocks(), 1000);
            assert_eq!(spilled.len(), memory.len());
            let path = dir.path().join(format!("spilled-{chunk}.lod"));
            let meta =
                write_index_spilled(&plan, &tiles, spilled, SourceId::default(), &path).unwrap();
            assert_eq!(meta, want_meta, "chunks of {chunk}");
            assert!(
                std::fs::read(&path).unwrap() == want,
                "chunks of {chunk}: the file"
            );
        }
    }
}
