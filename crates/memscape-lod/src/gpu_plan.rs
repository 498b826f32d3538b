//! What resolving a view on the GPU needs from the index (memscape-render's `alloc_map::lod_cells`
//! runs `resolve.rs`'s `add_cell` in `shaders/lod_cells.wgsl`): the level, the cells of the view
//! as ranges of the level's mapped cell array (uploaded in fixed chunks of [`CHUNK_CELLS`] cells,
//! so that a pan or zoom within a level uploads only the chunks it has not uploaded yet), one
//! entry per column and per row with its pixel origin computed in f64 here, and the blocks large
//! at the level (drawn by the exact GPU pipeline). CPU only: the bytes are the index's own.

use std::ops::Range;

use crate::format::{BucketRec, CellRec};
use crate::index::LodIndex;
use crate::resolve::ffloor;
use crate::view::LodView;

/// Cells per upload chunk (96 bytes each: 96 MiB, below lavapipe's 128 MiB storage bindings).
pub const CHUNK_CELLS: u64 = 1 << 20;

/// Rows of a view beyond which the GPU resolve is not planned (its row table would exceed
/// 32 MiB; only levels much finer in address than in time get there).
pub const MAX_ROWS: u64 = 1 << 22;

/// One column of a view's cells: where its cells in view start in the dispatch and in the level
/// (relative to [`CellsPlan::first_cell`]), and its left edge in pixels as an integer origin
/// and the edge's offset from it (f32 bits). Keep in sync with `shaders/lod_cells.wgsl`.
pub type ColumnEntry = [u32; 4];

/// One row: its bottom edge in pixels as an integer origin and offset (f32 bits).
pub type RowEntry = [u32; 2];

/// The cells of one upload chunk that a view uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkUse {
    /// Chunk number: cells `[j · CHUNK_CELLS, (j + 1) · CHUNK_CELLS)` of the level.
    pub chunk: u64,
    /// Its cells in view, as positions in the dispatch (consecutive: cells in view come by
    /// column, then row, as the level stores them).
    pub dispatch: Range<u32>,
}

/// A view's GPU resolve plan (see the module's documentation).
#[derive(Debug, Clone)]
pub struct CellsPlan {
    pub level: usize,
    /// The level's first cell in view (cells are numbered in the level's array).
    pub first_cell: u64,
    /// Cells in view (the dispatch's size).
    pub cells: u32,
    pub columns: Vec<ColumnEntry>,
    pub rows: Vec<RowEntry>,
    pub ky0: u64,
    /// Cell size in pixels.
    pub rx: f32,
    pub ry: f32,
    pub chunks: Vec<ChunkUse>,
}

/// A pixel coordinate as (integer origin, offset from it as f32 bits).
fn split_px(x: f64) -> [u32; 2] {
    let o = ffloor(x.clamp(-1e9, 1e9));
    [(o as i32) as u32, ((x - o) as f32).to_bits()]
}

/// The plan of `view` at `level` (`resolve::accumulate_cells`' cells, columns and rows), or
/// `None` when the view has too many rows or cells for one dispatch.
pub fn cells_plan(index: &LodIndex, li: usize, view: &LodView) -> Option<CellsPlan> {
    let level = index.levels.get(li)?;
    let [tau, sig] = level.cell_size();
    let [pw, ph] = view.pixel_size();
    let (wt, wa) = view.window();
    let kx_lo = ((wt[0] - tau) / tau).floor().max(0.0) as u64;
    let kx_hi = ((wt[1] + tau) / tau).floor().max(0.0) as u64;
    let ky0 = ((wa[0] - sig) / sig).floor().max(0.0) as u64;
    let ky1 = ((wa[1] + sig) / sig).floor().max(0.0) as u64;
    if ky1 < ky0 || ky1 - ky0 >= MAX_ROWS {
        return None;
    }
    let t_origin = view.time_origin as f64 + f64::from(view.time_origin_frac);
    let a_origin = view.addr_origin as f64 + f64::from(view.addr_origin_frac);
    let height = f64::from(view.height);
    let rows = (ky0..=ky1)
        .map(|ky| split_px(height - (ky as f64 * sig - a_origin) / ph))
        .collect();
    let cols = &level.columns[..];
    let cells = &level.cells[..];
    let n_cells = cells.len() as u64;
    let first = cols.partition_point(|c| c.kx < kx_lo);
    let last = cols.partition_point(|c| c.kx <= kx_hi);
    let mut columns = Vec::with_capacity(last.saturating_sub(first));
    let mut first_cell = None;
    let mut in_view: u64 = 0;
    // Where each chunk's cells start in the dispatch.
    let mut chunks: Vec<ChunkUse> = Vec::new();
    for i in first..last {
        let start = cols[i].first_cell.min(n_cells) as usize;
        let end = cols
            .get(i + 1)
            .map_or(n_cells, |c| c.first_cell.min(n_cells)) as usize;
        let col = &cells[start..end.max(start)];
        let a = col.partition_point(|c| c.ky < ky0);
        let b = col.partition_point(|c| c.ky <= ky1);
        if b <= a {
            continue;
        }
        let g = (start + a) as u64;
        let base = *first_cell.get_or_insert(g);
        let rel = u32::try_from(g - base).ok()?;
        let [o, f] = split_px((cols[i].kx as f64 * tau - t_origin) / pw);
        let at = u32::try_from(in_view).ok()?;
        columns.push([at, rel, o, f]);
        // The chunks this column's cells [g, g + b − a) fall in.
        let mut c = g;
        let end_g = g + (b - a) as u64;
        while c < end_g {
            let j = c / CHUNK_CELLS;
            let upto = ((j + 1) * CHUNK_CELLS).min(end_g);
            let d0 = u32::try_from(in_view + (c - g)).ok()?;
            let d1 = u32::try_from(in_view + (upto - g)).ok()?;
            match chunks.last_mut() {
                Some(u) if u.chunk == j => u.dispatch.end = d1,
                _ => chunks.push(ChunkUse {
                    chunk: j,
                    dispatch: d0..d1,
                }),
            }
            c = upto;
        }
        in_view += (b - a) as u64;
    }
    Some(CellsPlan {
        level: li,
        first_cell: first_cell.unwrap_or(0),
        cells: u32::try_from(in_view).ok()?,
        columns,
        rows,
        ky0,
        rx: (tau / pw) as f32,
        ry: (sig / ph) as f32,
        chunks,
    })
}

/// The bytes of chunk `j` of level `li`: its cells, its buckets and the number of its first
/// bucket (cells name buckets by their number in the level).
pub fn chunk_bytes(index: &LodIndex, li: usize, j: u64) -> Option<(&[u8], &[u8], u64)> {
    let level = index.levels.get(li)?;
    let cells: &[CellRec] = &level.cells[..];
    let start = usize::try_from(j.checked_mul(CHUNK_CELLS)?).ok()?;
    let end = usize::try_from((j + 1) * CHUNK_CELLS)
        .ok()?
        .min(cells.len());
    let chunk = cells.get(start..end)?;
    let buckets: &[BucketRec] = &level.buckets[..];
    let b0 = chunk.iter().map(|c| c.bucket_first).min().unwrap_or(0);
    let b1 = chunk
        .iter()
        .map(|c| c.bucket_first + u64::from(c.buckets))
        .max()
        .unwrap_or(0)
        .min(buckets.len() as u64);
    let bucket_slice = buckets.get(usize::try_from(b0).ok()?..usize::try_from(b1.max(b0)).ok()?)?;
    Some((
        bytemuck::cast_slice(chunk),
        bytemuck::cast_slice(bucket_slice),
        b0,
    ))
}
