//! Blocks of a trace file for the index: a mappable `.msc` is read in place through its raw
//! block columns (nothing per block is copied into memory, so traces larger than memory stream
//! through), any other trace is loaded with memscape-trace. The collapsed address axis is
//! found in one streaming pass with the same rule as memscape-trace's regions.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use memscape_map::{MappedSlice, Mapping};
use memscape_trace::Trace;
use memscape_trace::regions::DEFAULT_GAP_THRESHOLD;

use crate::LodError;
use crate::source::AddressAxis;
use crate::view::LodBlock;

/// The block columns of a trace, wherever they live.
pub struct Columns<'a> {
    pub alloc_event: &'a [u64],
    pub free_event: &'a [u64],
    pub address: &'a [u64],
    pub size: &'a [u64],
    pub thread: &'a [u32],
    pub site: &'a [u32],
    pub flags: &'a [u8],
}

impl Columns<'_> {
    pub fn len(&self) -> usize {
        self.alloc_event
            .len()
            .min(self.free_event.len())
            .min(self.address.len())
            .min(self.size.len())
            .min(self.thread.len())
            .min(self.site.len())
            .min(self.flags.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The raw block columns of a mappable `.msc` file (`memscape convert --mappable`), mapped.
pub struct MappedColumns {
    alloc_event: MappedSlice<u64>,
    free_event: MappedSlice<u64>,
    address: MappedSlice<u64>,
    size: MappedSlice<u64>,
    thread: MappedSlice<u32>,
    site: MappedSlice<u32>,
    flags: MappedSlice<u8>,
}

impl MappedColumns {
    /// The raw block columns of `path`, or `None` when it is not a mappable `.msc` (compact
    /// columns, another format): such traces are loaded instead.
    pub fn open(path: &Path) -> Result<Option<Self>, LodError> {
        let file = std::fs::File::open(path).map_err(|e| LodError::io(path, e))?;
        let map = Mapping::new(&file).map_err(|e| LodError::io(path, e))?;
        let b = map.bytes();
        if b.len() < 16 || &b[..8] != b"MEMSCAPE" {
            return Ok(None);
        }
        let u32_at = |o: usize| -> Option<u32> {
            b.get(o..o + 4)
                .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        };
        let u64_at = |o: usize| -> Option<u64> {
            b.get(o..o + 8).map(|s| {
                let mut a = [0u8; 8];
                a.copy_from_slice(s);
                u64::from_le_bytes(a)
            })
        };
        let version = u32_at(8).unwrap_or(0);
        if !(3..=5).contains(&version) {
            return Ok(None);
        }
        let n = u32_at(12).unwrap_or(0).min(64) as usize;
        // (element size, offset, count) of each raw section, by id.
        let mut raw: HashMap<u32, (u8, usize, usize)> = HashMap::new();
        for i in 0..n {
            let at = 16 + 40 * i;
            let (Some(id), Some(count), Some(offset), Some(len)) =
                (u32_at(at), u64_at(at + 8), u64_at(at + 16), u64_at(at + 24))
            else {
                return Ok(None);
            };
            let (elem, transform, packing, shift) = (b[at + 4], b[at + 5], b[at + 6], b[at + 7]);
            if packing == 0
                && transform == 0
                && shift == 0
                && count.checked_mul(u64::from(elem)) == Some(len)
            {
                raw.insert(
                    id,
                    (
                        elem,
                        usize::try_from(offset).unwrap_or(usize::MAX),
                        count as usize,
                    ),
                );
            }
        }
        fn col<T: bytemuck::Pod>(
            map: &Arc<Mapping>,
            raw: &HashMap<u32, (u8, usize, usize)>,
            id: u32,
        ) -> Option<MappedSlice<T>> {
            let &(elem, offset, count) = raw.get(&id)?;
            if usize::from(elem) != std::mem::size_of::<T>() {
                return None;
            }
            MappedSlice::new(Arc::clone(map), offset, count)
        }
        // Section ids of memscape-trace's `.msc` (README, "`.msc` (native)").
        let (Some(address), Some(size), Some(alloc_event), Some(free_event)) = (
            col::<u64>(&map, &raw, 1),
            col::<u64>(&map, &raw, 2),
            col::<u64>(&map, &raw, 7),
            col::<u64>(&map, &raw, 8),
        ) else {
            return Ok(None);
        };
        let (Some(thread), Some(site), Some(flags)) = (
            col::<u32>(&map, &raw, 9),
            col::<u32>(&map, &raw, 10),
            col::<u8>(&map, &raw, 11),
        ) else {
            return Ok(None);
        };
        Ok(Some(Self {
            alloc_event,
            free_event,
            address,
            size,
            thread,
            site,
            flags,
        }))
    }

    pub fn columns(&self) -> Columns<'_> {
        Columns {
            alloc_event: &self.alloc_event,
            free_event: &self.free_event,
            address: &self.address,
            size: &self.size,
            thread: &self.thread,
            site: &self.site,
            flags: &self.flags,
        }
    }
}

/// A trace opened for the level of detail: its metadata, strings and call tree (always in
/// memory, they are small), and its block columns mapped when the file allows it.
pub struct TraceFile {
    /// Shared: a trace already in memory is opened without copying its blocks.
    pub trace: std::sync::Arc<Trace>,
    mapped: Option<MappedColumns>,
}

impl TraceFile {
    /// Opens `path`: a mappable `.msc` keeps its block columns on disk; anything else is loaded.
    pub fn open(path: &Path) -> Result<Self, LodError> {
        let mapped = MappedColumns::open(path)?;
        let trace = memscape_trace::load(path).map_err(|e| LodError::Format(e.to_string()))?;
        Ok(Self {
            trace: std::sync::Arc::new(trace),
            mapped,
        })
    }

    /// A trace already in memory.
    pub fn from_trace(trace: Trace) -> Self {
        Self::from_shared(std::sync::Arc::new(trace))
    }

    /// A trace in memory that others hold too (a GUI dataset's), its blocks not copied.
    pub fn from_shared(trace: std::sync::Arc<Trace>) -> Self {
        Self {
            trace,
            mapped: None,
        }
    }

    pub fn is_mapped(&self) -> bool {
        self.mapped.is_some()
    }

    pub fn columns(&self) -> Columns<'_> {
        match &self.mapped {
            Some(m) => m.columns(),
            None => {
                let b = &self.trace.blocks;
                Columns {
                    alloc_event: &b.alloc_event,
                    free_event: &b.free_event,
                    address: &b.address,
                    size: &b.size,
                    thread: &b.thread,
                    site: &b.site,
                    flags: &b.flags,
                }
            }
        }
    }
}

/// Finds the used address regions in one pass, as memscape-trace's `find_regions` does:
/// blocks summarised per page of the gap threshold, pages merged in address order wherever
/// the gap between them is at most the threshold.
#[derive(Debug, Default)]
pub struct RegionFinder {
    page_shift: u32,
    gap: u64,
    pages: HashMap<u64, (u64, u64)>,
    current: Option<(u64, (u64, u64))>,
}

impl RegionFinder {
    pub fn new(gap_threshold: u64) -> Self {
        Self {
            page_shift: 63 - gap_threshold.max(1).leading_zeros(),
            gap: gap_threshold,
            pages: HashMap::new(),
            current: None,
        }
    }

    pub fn push(&mut self, address: u64, size: u64) {
        let end = address.saturating_add(size);
        let page = address >> self.page_shift;
        match &mut self.current {
            Some((p, range)) if *p == page => {
                range.0 = range.0.min(address);
                range.1 = range.1.max(end);
            }
            _ => {
                if let Some((p, range)) = self.current.take() {
                    self.merge(p, range);
                }
                self.current = Some((page, (address, end)));
            }
        }
    }

    fn merge(&mut self, page: u64, (lo, hi): (u64, u64)) {
        let e = self.pages.entry(page).or_insert((lo, hi));
        e.0 = e.0.min(lo);
        e.1 = e.1.max(hi);
    }

    /// The regions `[start, end)` in address order.
    pub fn finish(mut self) -> Vec<(u64, u64)> {
        if let Some((p, range)) = self.current.take() {
            self.merge(p, range);
        }
        let mut ranges: Vec<(u64, u64)> = self.pages.into_values().collect();
        ranges.sort_unstable();
        let mut out = Vec::new();
        let mut it = ranges.into_iter();
        let Some(mut current) = it.next() else {
            return out;
        };
        for (start, end) in it {
            if start <= current.1.saturating_add(self.gap) {
                current.1 = current.1.max(end);
            } else {
                out.push(current);
                current = (start, end);
            }
        }
        out.push(current);
        out
    }
}

/// The collapsed address axis of `columns` (one pass over addresses and sizes).
pub fn address_axis(columns: &Columns<'_>) -> AddressAxis {
    let mut f = RegionFinder::new(DEFAULT_GAP_THRESHOLD);
    for i in 0..columns.len() {
        f.push(columns.address[i], columns.size[i]);
    }
    AddressAxis::from_ranges(&f.finish())
}

/// How a block is coloured: its packed sRGB colour and its attribute in [0, 1], from its
/// thread, site, size and lifetime (events).
pub type ColorFn<'a> = dyn Fn(u32, u32, u64, u64) -> (u32, f32) + Sync + 'a;

/// Block `i` of `columns` as a [`LodBlock`] on the event axis and the collapsed address axis.
#[inline]
pub fn lod_block(
    columns: &Columns<'_>,
    axis: &AddressAxis,
    color: &ColorFn<'_>,
    i: usize,
) -> LodBlock {
    let (t0, t1) = (columns.alloc_event[i], columns.free_event[i]);
    let y = axis.collapse(columns.address[i]).unwrap_or(0);
    let size = columns.size[i];
    let (c, attr) = color(
        columns.thread[i],
        columns.site[i],
        size,
        t1.saturating_sub(t0),
    );
    LodBlock::new(t0, t1, y, size, c, attr)
}

/// The blocks of a trace file on the index's axes, as a [`crate::resolve::BlockSource`] for
/// views finer than every level: blocks allocated in the window (or shortly before it) from
/// the trace, longer or taller ones from the index's copies.
pub struct TraceBlocks<'a> {
    pub columns: Columns<'a>,
    pub axis: &'a AddressAxis,
    pub color: &'a ColorFn<'a>,
    pub index: &'a crate::LodIndex,
}

impl crate::resolve::BlockSource for TraceBlocks<'_> {
    fn block(&self, id: u64) -> Option<LodBlock> {
        let i = usize::try_from(id)
            .ok()
            .filter(|&i| i < self.columns.len())?;
        Some(lod_block(&self.columns, self.axis, self.color, i))
    }

    fn blocks_in(
        &self,
        window: ([f64; 2], [f64; 2]),
        part: usize,
        parts: usize,
        f: &mut dyn FnMut(&LodBlock),
    ) {
        let (wt, wa) = window;
        let (min_c, min_d) = (self.index.meta.copy_min_c, self.index.meta.copy_min_d);
        // Blocks of lifetimes below 2^scan_c and sizes below 2^scan_d are found by the scan of
        // the allocation order below, the others through the index's classes: the scan starts
        // at most 2^scan_c before the window (a 16th of its width) and reads the blocks in
        // order, where a class listed by block number costs a random read per block (with the
        // finer levels of wave 14 the classes of 512-byte blocks were listed, and the 1/4
        // view's exact frame took 25 % more CPU).
        let scan_c = ((wt[1] - wt[0]) / 16.0)
            .max(1.0)
            .log2()
            .floor()
            .clamp(f64::from(min_c), 63.0) as u8;
        let scan_d = min_d.max(crate::build::COPY_MIN_SIZE_CLASS);
        let fetch = |id: u64| crate::resolve::BlockSource::block(self, id);
        for class in &self.index.classes {
            if class.c < scan_c && class.d < scan_d {
                continue;
            }
            let reach = 2f64.powi(i32::from(class.c) + 1);
            let lo = (wt[0] - reach).max(0.0);
            class.for_each_starting_in([lo, wt[1]], part, parts, &fetch, &mut |b| {
                if (b.t1 as f64) > wt[0]
                    && (b.y.saturating_add(b.size) as f64) > wa[0]
                    && (b.y as f64) < wa[1]
                {
                    f(b);
                }
            });
        }
        // The rest lives less than 2^scan_c: allocated after t0 − 2^scan_c.
        let c = &self.columns;
        let lo = (wt[0] - 2f64.powi(i32::from(scan_c))).max(0.0);
        let n = c.len();
        let first = c.alloc_event[..n].partition_point(|&t| (t as f64) < lo);
        let last = c.alloc_event[..n].partition_point(|&t| (t as f64) < wt[1]);
        let range = crate::resolve::part_range(last.saturating_sub(first), part, parts);
        for i in first + range.start..first + range.end {
            let w = c.free_event[i].saturating_sub(c.alloc_event[i]).max(1);
            let s = c.size[i].max(1);
            if (63 - w.leading_zeros()) as u8 >= scan_c || (63 - s.leading_zeros()) as u8 >= scan_d
            {
                continue;
            }
            let b = lod_block(c, self.axis, self.color, i);
            if (b.t1 as f64) > wt[0]
                && (b.y.saturating_add(b.size) as f64) > wa[0]
                && (b.y as f64) < wa[1]
            {
                f(&b);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{SynthParams, trace};

    #[test]
    fn streaming_regions_equal_memscape_traces() {
        let t = trace(SynthParams::new(150_000, 9));
        let f = TraceFile::from_trace(t);
        let axis = address_axis(&f.columns());
        let reference = memscape_trace::regions::find_regions(&f.trace, DEFAULT_GAP_THRESHOLD);
        let want: Vec<(u64, u64)> = reference.regions.iter().map(|r| (r.start, r.end)).collect();
        let got: Vec<(u64, u64)> = axis.regions.iter().map(|r| (r.start, r.end)).collect();
        assert_eq!(got, want);
        assert!(want.len() >= 4);
    }

    #[test]
    fn a_mappable_file_is_read_in_place_with_the_same_blocks() {
        let t = trace(SynthParams::new(60_000, 4));
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.msc");
        memscape_trace::msc::write_msc_with(
            &t,
            &path,
            &memscape_trace::msc::MscOptions {
                mappable: true,
                ..Default::default()
            },
        )
        .expect("write");
        let f = TraceFile::open(&path).expect("open");
        assert!(f.is_mapped());
        let c = f.columns();
        assert_eq!(c.len(), t.blocks.len());
        assert_eq!(c.address, &t.blocks.address[..]);
        assert_eq!(c.free_event, &t.blocks.free_event[..]);
        assert_eq!(c.site, &t.blocks.site[..]);
        // A compact file is not mapped.
        let compact = dir.path().join("c.msc");
        memscape_trace::write_msc(&t, &compact).expect("write");
        assert!(!TraceFile::open(&compact).expect("open").is_mapped());
    }
}
