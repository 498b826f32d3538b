//! A streaming writer of mappable `.msc` files (memscape-trace's native format with raw block
//! columns, README "Mappable files"), for traces too large to build in memory: blocks are
//! appended in allocation order and their frees recorded when they happen; memory holds a
//! window of recent blocks' free fields and the frees that come after a block left it.
//!
//! The small sections (call tree, strings, thread names, metadata) are encoded by
//! memscape-trace itself (`to_msc_bytes_with` of a trace without blocks) and copied after the
//! block columns, so the file is exactly what memscape-trace reads.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use memscape_trace::Trace;
use memscape_trace::model::FLAG_NEVER_FREED;

use crate::LodError;

/// Section ids of the block columns, in file order (memscape-trace's README).
const IDS: [u32; 11] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
/// Optional per-block sections of version 5 (process, free site, free thread, pool): the
/// generator's blocks have none, so the small trace's empty ones are left out.
const OPTIONAL_BLOCK_IDS: std::ops::RangeInclusive<u32> = 13..=16;
/// Element size of each block column.
const ELEM: [u64; 11] = [8, 8, 8, 8, 8, 8, 8, 8, 4, 4, 1];
const ADDRESS: usize = 0;
const SIZE: usize = 1;
const REQUESTED: usize = 2;
const USABLE: usize = 3;
const ALLOC_TIME: usize = 4;
const FREE_TIME: usize = 5;
const ALLOC_EVENT: usize = 6;
const FREE_EVENT: usize = 7;
const THREAD: usize = 8;
const SITE: usize = 9;
const FLAGS: usize = 10;
/// Room for the header and directory entries at the start of the file.
const DIR_BYTES: u64 = 16 + 40 * 40;
/// Blocks whose free fields stay in memory until they are written.
const WINDOW: usize = 1 << 20;

/// Appends to one column's region of the file.
struct ColumnWriter {
    offset: u64,
    buf: Vec<u8>,
    written: u64,
}

impl ColumnWriter {
    fn push(&mut self, file: &File, path: &Path, bytes: &[u8]) -> Result<(), LodError> {
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= 1 << 20 {
            self.flush(file, path)?;
        }
        Ok(())
    }

    fn flush(&mut self, file: &File, path: &Path) -> Result<(), LodError> {
        file.write_all_at(&self.buf, self.offset + self.written)
            .map_err(|e| LodError::io(path, e))?;
        self.written += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }
}

/// A late free: the block left the window before it was freed (or never was).
#[derive(Clone, Copy)]
struct Patch {
    block: u64,
    free_event: u64,
    free_time: u64,
    flags: u8,
}

/// Writes a mappable `.msc` block by block.
pub struct MappableWriter {
    path: PathBuf,
    tmp: PathBuf,
    file: File,
    capacity: u64,
    columns: Vec<ColumnWriter>,
    blocks: u64,
    /// Free fields of blocks `window_base..blocks`: (free event, free time, freed).
    window: std::collections::VecDeque<(u64, u64, bool)>,
    window_base: u64,
    /// Blocks written before they were freed: still live unless a patch says otherwise.
    pending: std::collections::HashSet<u64>,
    patches: Vec<Patch>,
}

impl MappableWriter {
    /// A writer for at most `capacity` blocks (columns are laid out for that many; the unused
    /// rest stays a hole of the sparse file).
    pub fn create(path: &Path, capacity: u64) -> Result<Self, LodError> {
        let tmp = path.with_extension("msc.partial");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .map_err(|e| LodError::io(&tmp, e))?;
        let mut offset = DIR_BYTES;
        let columns = ELEM
            .iter()
            .map(|&e| {
                let c = ColumnWriter {
                    offset,
                    buf: Vec::with_capacity(1 << 20),
                    written: 0,
                };
                offset = (offset + capacity * e).next_multiple_of(8);
                c
            })
            .collect();
        Ok(Self {
            path: path.to_path_buf(),
            tmp,
            file,
            capacity,
            columns,
            blocks: 0,
            window: std::collections::VecDeque::new(),
            window_base: 0,
            pending: std::collections::HashSet::new(),
            patches: Vec::new(),
        })
    }

    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// Appends block `self.blocks()` (its free comes later through [`Self::free`]).
    #[allow(clippy::too_many_arguments)]
    pub fn alloc(
        &mut self,
        alloc_event: u64,
        alloc_time: u64,
        address: u64,
        size: u64,
        requested: u64,
        usable: u64,
        thread: u32,
        site: u32,
    ) -> Result<u64, LodError> {
        if self.blocks >= self.capacity {
            return Err(LodError::Format(format!(
                "{}: more than the {} blocks the file was laid out for",
                self.path.display(),
                self.capacity
            )));
        }
        let (f, p) = (&self.file, &self.tmp);
        let c = &mut self.columns;
        c[ADDRESS].push(f, p, &address.to_le_bytes())?;
        c[SIZE].push(f, p, &size.to_le_bytes())?;
        c[REQUESTED].push(f, p, &requested.to_le_bytes())?;
        c[USABLE].push(f, p, &usable.to_le_bytes())?;
        c[ALLOC_TIME].push(f, p, &alloc_time.to_le_bytes())?;
        c[ALLOC_EVENT].push(f, p, &alloc_event.to_le_bytes())?;
        c[THREAD].push(f, p, &thread.to_le_bytes())?;
        c[SITE].push(f, p, &site.to_le_bytes())?;
        self.window.push_back((0, 0, false));
        let block = self.blocks;
        self.blocks += 1;
        while self.window.len() > WINDOW {
            self.retire_one()?;
        }
        Ok(block)
    }

    /// Writes the oldest block of the window.
    fn retire_one(&mut self) -> Result<(), LodError> {
        let Some((fe, ft, freed)) = self.window.pop_front() else {
            return Ok(());
        };
        let block = self.window_base;
        self.window_base += 1;
        if !freed {
            self.pending.insert(block);
        }
        let (f, p) = (&self.file, &self.tmp);
        let c = &mut self.columns;
        c[FREE_EVENT].push(f, p, &fe.to_le_bytes())?;
        c[FREE_TIME].push(f, p, &ft.to_le_bytes())?;
        c[FLAGS].push(f, p, &[0])?;
        Ok(())
    }

    /// Block `block` was freed at `event`, `time_ns`.
    pub fn free(&mut self, block: u64, event: u64, time_ns: u64) {
        if block >= self.window_base {
            if let Some(slot) = self.window.get_mut((block - self.window_base) as usize) {
                *slot = (event, time_ns, true);
            }
        } else if self.pending.remove(&block) {
            self.patches.push(Patch {
                block,
                free_event: event,
                free_time: time_ns,
                flags: 0,
            });
        }
    }

    /// Ends the blocks never freed at (`events`, `end_time_ns`), writes the small sections of
    /// `header` (call tree, strings, threads; its `meta` must count the blocks written) and the
    /// directory, and renames the file into place.
    pub fn finish(mut self, header: &Trace) -> Result<u64, LodError> {
        let (events, end) = (header.meta.events, header.meta.end_time_ns);
        while !self.window.is_empty() {
            let last = self.window_base;
            if let Some(slot) = self.window.front_mut()
                && !slot.2
            {
                *slot = (events, end, true);
                self.patches.push(Patch {
                    block: last,
                    free_event: events,
                    free_time: end,
                    flags: FLAG_NEVER_FREED,
                });
            }
            self.retire_one()?;
        }
        for &block in &self.pending {
            self.patches.push(Patch {
                block,
                free_event: events,
                free_time: end,
                flags: FLAG_NEVER_FREED,
            });
        }
        for c in &mut self.columns {
            c.flush(&self.file, &self.tmp)?;
        }
        self.apply_patches()?;
        // The small sections, encoded by memscape-trace.
        let small = memscape_trace::msc::to_msc_bytes_with(
            header,
            &memscape_trace::msc::MscOptions {
                mappable: true,
                ..Default::default()
            },
            &mut |_| {},
        )
        .map_err(|e| LodError::io(&self.tmp, e))?;
        let bad = |what: &str| LodError::Format(format!("encoding the small sections: {what}"));
        let u32_at = |o: usize| -> Result<u32, LodError> {
            small
                .get(o..o + 4)
                .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
                .ok_or_else(|| bad("short"))
        };
        let u64_at = |o: usize| -> Result<u64, LodError> {
            small
                .get(o..o + 8)
                .map(|s| {
                    let mut a = [0u8; 8];
                    a.copy_from_slice(s);
                    u64::from_le_bytes(a)
                })
                .ok_or_else(|| bad("short"))
        };
        let version = u32_at(8)?;
        let n = u32_at(12)? as usize;
        let mut entries: Vec<[u8; 40]> = Vec::new();
        let mut offset = self.columns[FLAGS].offset + self.capacity;
        offset = offset.next_multiple_of(8);
        for (k, (&id, &elem)) in IDS.iter().zip(&ELEM).enumerate() {
            let mut e = [0u8; 40];
            e[..4].copy_from_slice(&id.to_le_bytes());
            e[4] = elem as u8;
            e[8..16].copy_from_slice(&self.blocks.to_le_bytes());
            e[16..24].copy_from_slice(&self.columns[k].offset.to_le_bytes());
            e[24..32].copy_from_slice(&(self.blocks * elem).to_le_bytes());
            entries.push(e);
        }
        for i in 0..n {
            let at = 16 + 40 * i;
            let id = u32_at(at)?;
            if IDS.contains(&id) || OPTIONAL_BLOCK_IDS.contains(&id) {
                continue;
            }
            let (src, len) = (u64_at(at + 16)? as usize, u64_at(at + 24)? as usize);
            let payload = small.get(src..src + len).ok_or_else(|| bad("payload"))?;
            let mut e = [0u8; 40];
            e.copy_from_slice(&small[at..at + 40]);
            e[16..24].copy_from_slice(&offset.to_le_bytes());
            self.file
                .write_all_at(payload, offset)
                .map_err(|e| LodError::io(&self.tmp, e))?;
            offset = (offset + len as u64).next_multiple_of(8);
            entries.push(e);
        }
        if 16 + 40 * entries.len() as u64 > DIR_BYTES {
            return Err(bad("too many sections"));
        }
        let mut head = Vec::with_capacity(DIR_BYTES as usize);
        head.extend_from_slice(b"MEMSCAPE");
        head.extend_from_slice(&version.to_le_bytes());
        head.extend_from_slice(&(entries.len() as u32).to_le_bytes());
        for e in &entries {
            head.extend_from_slice(e);
        }
        self.file
            .write_all_at(&head, 0)
            .map_err(|e| LodError::io(&self.tmp, e))?;
        self.file
            .set_len(offset)
            .map_err(|e| LodError::io(&self.tmp, e))?;
        self.file
            .sync_all()
            .map_err(|e| LodError::io(&self.tmp, e))?;
        std::fs::rename(&self.tmp, &self.path).map_err(|e| LodError::io(&self.path, e))?;
        Ok(self.blocks)
    }

    /// Applies the late frees chunk by chunk (read, patch, write back: sequential I/O).
    fn apply_patches(&mut self) -> Result<(), LodError> {
        self.patches.sort_unstable_by_key(|p| p.block);
        const CHUNK: u64 = 1 << 20;
        let mut i = 0;
        while i < self.patches.len() {
            let chunk = self.patches[i].block / CHUNK;
            let first = chunk * CHUNK;
            let n = CHUNK.min(self.blocks - first) as usize;
            let mut fe = vec![0u8; n * 8];
            let mut ft = vec![0u8; n * 8];
            let mut fl = vec![0u8; n];
            let rd = |buf: &mut [u8], col: usize, elem: u64| {
                self.file
                    .read_exact_at(buf, self.columns[col].offset + first * elem)
                    .map_err(|e| LodError::io(&self.tmp, e))
            };
            rd(&mut fe, FREE_EVENT, 8)?;
            rd(&mut ft, FREE_TIME, 8)?;
            rd(&mut fl, FLAGS, 1)?;
            while i < self.patches.len() && self.patches[i].block / CHUNK == chunk {
                let p = self.patches[i];
                let k = (p.block - first) as usize;
                fe[k * 8..k * 8 + 8].copy_from_slice(&p.free_event.to_le_bytes());
                ft[k * 8..k * 8 + 8].copy_from_slice(&p.free_time.to_le_bytes());
                fl[k] |= p.flags;
                i += 1;
            }
            let wr = |buf: &[u8], col: usize, elem: u64| {
                self.file
                    .write_all_at(buf, self.columns[col].offset + first * elem)
                    .map_err(|e| LodError::io(&self.tmp, e))
            };
            wr(&fe, FREE_EVENT, 8)?;
            wr(&ft, FREE_TIME, 8)?;
            wr(&fl, FLAGS, 1)?;
        }
        Ok(())
    }
}
