//! A built index, memory-mapped: its levels, their cells in a window, and the copied blocks of
//! size classes.

use std::path::Path;
use std::sync::Arc;

use memscape_map::{MappedSlice, Mapping};

use crate::format::{BucketRec, CellRec, ColumnRec, LevelDesc, Section};
use crate::view::LodBlock;
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

    /// The cells with column in `[kx0, kx1]` and row in `[ky0, ky1]`, as (kx, cell).
    pub fn cells_in(
        &self,
        kx: [u64; 2],
        ky: [u64; 2],
    ) -> impl Iterator<Item = (u64, &CellRec)> + '_ {
        let cols = &self.columns[..];
        let first = cols.partition_point(|c| c.kx < kx[0]);
        let last = cols.partition_point(|c| c.kx <= kx[1]);
        let n_cells = self.cells.len() as u64;
        (first..last).flat_map(move |i| {
            let start = cols[i].first_cell.min(n_cells) as usize;
            let end = cols
                .get(i + 1)
                .map_or(n_cells, |c| c.first_cell.min(n_cells)) as usize;
            let col = self.cells.get(start..end.max(start)).unwrap_or(&[]);
            let a = col.partition_point(|c| c.ky < ky[0]);
            let b = col.partition_point(|c| c.ky <= ky[1]);
            col[a..b.max(a)].iter().map(move |c| (cols[i].kx, c))
        })
    }

    /// The buckets of `cell`.
    pub fn buckets_of(&self, cell: &CellRec) -> &[BucketRec] {
        let start = cell.bucket_first as usize;
        self.buckets
            .get(start..start + usize::from(cell.buckets))
            .unwrap_or(&[])
    }
}

/// The copied blocks of one size class, sorted by start.
pub struct Class {
    /// Lifetimes in `[2^c, 2^(c+1))`, sizes in `[2^d, 2^(d+1))`.
    pub c: u8,
    pub d: u8,
    pub blocks: MappedSlice<LodBlock>,
}

/// An index file, mapped.
pub struct LodIndex {
    pub meta: IndexMeta,
    pub levels: Vec<Level>,
    pub classes: Vec<Class>,
    map: Arc<Mapping>,
}

impl LodIndex {
    /// Maps the index at `path` and checks its header and sections.
    pub fn open(path: &Path) -> Result<Self, LodError> {
        let file = std::fs::File::open(path).map_err(|e| LodError::io(path, e))?;
        let map = Mapping::new(&file).map_err(|e| LodError::io(path, e))?;
        let bytes = map.bytes();
        let bad = |what: &str| LodError::Format(format!("{}: {what}", path.display()));
        if bytes.len() < 20 || &bytes[..8] != MAGIC {
            return Err(bad("not a memscape level-of-detail index (bad magic)"));
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
            let (lo, ln) = slice(d.cells, 72, "level cells")?;
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
            let (o, n) = slice(c.blocks, 40, "class blocks")?;
            let blocks = MappedSlice::new(Arc::clone(&map), o, n)
                .ok_or_else(|| bad("class blocks outside the file"))?;
            classes.push(Class {
                c: c.c,
                d: c.d,
                blocks,
            });
        }
        Ok(Self {
            meta,
            levels,
            classes,
            map,
        })
    }

    /// Bytes of the mapped file.
    pub fn file_len(&self) -> usize {
        self.map.len()
    }

    /// The level a view with pixels of `pixel` (time units × bytes) is drawn from: among the
    /// levels whose cells are at most a pixel in both directions, the one with the largest
    /// cells. `None`: the view is finer than every level (draw its blocks exactly).
    pub fn level_for(&self, pixel: [f64; 2]) -> Option<usize> {
        let mut best: Option<(usize, i32)> = None;
        for (i, l) in self.levels.iter().enumerate() {
            let [tau, sig] = l.cell_size();
            if tau <= pixel[0] * (1.0 + 1e-9) && sig <= pixel[1] * (1.0 + 1e-9) {
                let size = i32::from(l.desc.log_tau) + i32::from(l.desc.log_sig);
                if best.is_none_or(|(_, s)| size > s) {
                    best = Some((i, size));
                }
            }
        }
        best.map(|(i, _)| i)
    }

    /// Calls `f` with every copied block that is large at `level` (at least a cell wide or
    /// tall) and meets the window `[t0, t1) × [a0, a1)`.
    pub fn large_blocks(
        &self,
        level: &LevelDesc,
        window: ([f64; 2], [f64; 2]),
        part: usize,
        parts: usize,
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
            let blocks = &class.blocks[..];
            let first = blocks.partition_point(|b| (b.t0 as f64) < lo);
            let last = blocks.partition_point(|b| (b.t0 as f64) < wt[1]);
            let range = crate::resolve::part_range(last.saturating_sub(first), part, parts);
            for b in &blocks[first + range.start..first + range.end] {
                if (b.t1 as f64) <= wt[0] || ((b.y + b.size) as f64) <= wa[0] || b.y as f64 >= wa[1]
                {
                    continue;
                }
                let w = b.width();
                if w >= 1u64 << level.log_tau || b.size >= 1u64 << level.log_sig {
                    f(b);
                }
            }
        }
    }
}
