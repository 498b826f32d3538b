//! A live recording's regions, snapshot after snapshot (issue 18 part 4):
//! [`regions_continued`] places only the blocks added since the last snapshot and sweeps only
//! the events since for the regions' peaks, from what the last one kept ([`RegionsCarry`]); the
//! result equals [`super::find_regions`] and [`Bins::of_regions`] on the new snapshot.
//!
//! Why that holds: a snapshot's blocks extend the last one's at the same indices with the same
//! addresses and sizes, and its events extend the last one's (a block freed since has a later
//! free event). The pages' summaries only widen, so every old region lies inside one new
//! region; when each lies in one of its own, the old blocks keep their region (renumbered where
//! regions were added before theirs) and the sweep's live and peak bytes per region stand. When
//! two old regions merged (their joint peak is not known from theirs), or a block that was in
//! no region (placed in the first, as `find_regions` does) now lands elsewhere, the blocks are
//! placed and the events swept again from the first (counted: [`RegionsCarry::rebuilt`]).

use super::{Regions, end_to_end, page_shift};
use crate::bins::{Bin, BinBy, Bins};
use crate::builder::PointerMap;
use crate::model::Trace;

/// What a snapshot's regions keep for the next snapshot's [`regions_continued`].
#[derive(Debug, Clone, Default)]
pub struct RegionsCarry {
    gap_threshold: u64,
    /// Per address page (`gap_threshold` rounded down to a power of two), the lowest start and
    /// highest end of the blocks starting in it.
    pages: PointerMap<(u64, u64)>,
    /// The regions' `[start, end)`, merged from the pages.
    spans: Vec<(u64, u64)>,
    /// Region of each block placed (blocks `0..len`).
    block_region: Vec<u32>,
    /// The placed blocks inside no region (counted in the first), with their addresses.
    unplaced: Vec<(u32, u64)>,
    /// The last placed block's allocation event and address: a later trace holds it there.
    last_block: Option<(u64, u64)>,
    /// Events swept for the peaks.
    events: usize,
    sums: Vec<RegionSums>,
    continued: u64,
    rebuilt: u64,
}

/// One region's running figures: its bin's (blocks, bytes, extent) and the peak sweep's.
#[derive(Debug, Clone, Copy)]
struct RegionSums {
    blocks: u64,
    bytes_allocated: u64,
    extent_start: u64,
    extent_end: u64,
    live: u64,
    peak: u64,
}

impl Default for RegionSums {
    fn default() -> Self {
        Self {
            blocks: 0,
            bytes_allocated: 0,
            extent_start: u64::MAX,
            extent_end: 0,
            live: 0,
            peak: 0,
        }
    }
}

impl RegionsCarry {
    /// Snapshots whose regions continued the last one's.
    pub fn continued(&self) -> u64 {
        self.continued
    }

    /// Snapshots whose blocks were placed and events swept from the first (no carry that
    /// fits, regions merged, a block in no region moved).
    pub fn rebuilt(&self) -> u64 {
        self.rebuilt
    }

    /// Whether `trace` extends what this carry placed and swept.
    fn fits(&self, trace: &Trace, gap_threshold: u64) -> bool {
        let b = &trace.blocks;
        let n = self.block_region.len();
        self.gap_threshold == gap_threshold
            && n <= b.len()
            && self.events <= trace.event_order().len()
            && n.checked_sub(1).map(|i| (b.alloc_event[i], b.address[i])) == self.last_block
    }

    /// Forgets the blocks placed and the events swept (the pages stay: they hold every block).
    fn restart(&mut self) {
        self.block_region.clear();
        self.unplaced.clear();
        self.events = 0;
        self.sums.clear();
    }
}

/// [`super::find_regions`] and [`Bins::of_regions`] of a live recording's snapshot, continuing
/// `carry` (the last snapshot's) when it fits: the work is the new blocks and events, the
/// pages and the regions. Returns what the next snapshot continues.
pub fn regions_continued(
    trace: &Trace,
    gap_threshold: u64,
    carry: Option<RegionsCarry>,
) -> (Regions, Bins, RegionsCarry) {
    let (continued, rebuilt) = carry.as_ref().map_or((0, 0), |c| (c.continued, c.rebuilt));
    let b = &trace.blocks;
    let n = b.len();
    if !trace.meta.has_addresses || n == 0 {
        let regions = super::find_regions(trace, gap_threshold);
        let bins = Bins::of_regions(trace, &regions, gap_threshold);
        let carry = RegionsCarry {
            gap_threshold,
            rebuilt: rebuilt + 1,
            continued,
            ..Default::default()
        };
        return (regions, bins, carry);
    }
    let mut c = match carry.filter(|c| c.fits(trace, gap_threshold)) {
        Some(c) => c,
        None => RegionsCarry {
            gap_threshold,
            continued,
            rebuilt,
            ..Default::default()
        },
    };
    let (address, size) = (b.address.as_slice(), b.size.as_slice());
    add_to_pages(
        &mut c.pages,
        page_shift(gap_threshold),
        &address[c.block_region.len()..n],
        &size[c.block_region.len()..n],
    );
    let spans = spans_of(&c.pages, gap_threshold);
    let mut out = Regions {
        regions: end_to_end(&spans),
        block_region: Vec::new(),
    };
    let whole = c.block_region.is_empty() || !renumber(&mut c, &spans, &out);
    if whole {
        c.restart();
        c.rebuilt += 1;
    } else {
        c.continued += 1;
    }
    c.spans = spans;
    c.sums.resize(out.regions.len(), RegionSums::default());
    place(trace, &mut c, &out);
    sweep(trace, &mut c);
    for (region, s) in out.regions.iter_mut().zip(&c.sums) {
        region.blocks = s.blocks;
        region.peak_bytes = s.peak;
    }
    out.block_region = c.block_region.clone();
    let bins = Bins {
        by: BinBy::Region { gap_threshold },
        bins: out
            .regions
            .iter()
            .zip(&c.sums)
            .map(|(r, s)| Bin {
                label: format!("{:#x}–{:#x}", r.start, r.end),
                blocks: s.blocks,
                bytes_allocated: s.bytes_allocated,
                peak_bytes: s.peak,
                extent_start: if s.blocks == 0 { 0 } else { s.extent_start },
                extent_end: s.extent_end,
            })
            .collect(),
        block_bin: c.block_region.clone(),
    };
    (out, bins, c)
}

/// Widens the pages' summaries by blocks (`address`, `size`): consecutive blocks mostly share
/// a page, so a run is summarized locally and merged when the page changes.
pub(super) fn add_to_pages(
    pages: &mut PointerMap<(u64, u64)>,
    page_shift: u32,
    address: &[u64],
    size: &[u64],
) {
    let mut merge = |page: u64, (lo, hi): (u64, u64)| {
        let e = pages.entry(page).or_insert((lo, hi));
        e.0 = e.0.min(lo);
        e.1 = e.1.max(hi);
    };
    let mut current: Option<(u64, (u64, u64))> = None;
    for (&a, &s) in address.iter().zip(size) {
        let end = a.saturating_add(s);
        let page = a >> page_shift;
        match &mut current {
            Some((p, range)) if *p == page => {
                range.0 = range.0.min(a);
                range.1 = range.1.max(end);
            }
            _ => {
                if let Some((p, range)) = current {
                    merge(p, range);
                }
                current = Some((page, (a, end)));
            }
        }
    }
    if let Some((p, range)) = current {
        merge(p, range);
    }
}

/// The regions' spans of the pages' summaries: merged in address order wherever the gap is
/// at most `gap_threshold`. Empty without pages.
pub(super) fn spans_of(pages: &PointerMap<(u64, u64)>, gap_threshold: u64) -> Vec<(u64, u64)> {
    let mut ranges: Vec<(u64, u64)> = pages.values().copied().collect();
    ranges.sort_unstable();
    let mut spans: Vec<(u64, u64)> = Vec::new();
    let Some((&first, rest)) = ranges.split_first() else {
        return spans;
    };
    let mut current = first;
    for &(start, end) in rest {
        if start <= current.1.saturating_add(gap_threshold) {
            current.1 = current.1.max(end);
        } else {
            spans.push(current);
            current = (start, end);
        }
    }
    spans.push(current);
    spans
}

/// Renumbers the placed blocks and the regions' figures from the carry's regions to `spans`
/// (`out`'s), when each old region lies in a new one of its own and every block that was in no
/// region is where `find_regions` would now place it; false (nothing changed) otherwise.
fn renumber(c: &mut RegionsCarry, spans: &[(u64, u64)], out: &Regions) -> bool {
    let mut map = Vec::with_capacity(c.spans.len());
    for &(start, _) in &c.spans {
        let Some(k) = spans.partition_point(|s| s.0 <= start).checked_sub(1) else {
            return false;
        };
        if map.last().is_some_and(|&last| last >= k) {
            // Two old regions in one new one: their joint peak is not known.
            return false;
        }
        map.push(k);
    }
    let new_of = |old: u32| map.get(old as usize).map(|&k| k as u32);
    // A block in no region counts in the first: it must stay where it counted.
    let mut unplaced = Vec::new();
    for &(i, address) in &c.unplaced {
        let found = out.region_of(address);
        let now = found.unwrap_or(0) as u32;
        if new_of(c.block_region[i as usize]) != Some(now) {
            return false;
        }
        if found.is_none() {
            unplaced.push((i, address));
        }
    }
    c.unplaced = unplaced;
    if map.iter().enumerate().any(|(old, &new)| old != new) {
        for r in &mut c.block_region {
            *r = new_of(*r).unwrap_or(*r);
        }
        let mut sums = vec![RegionSums::default(); spans.len()];
        for (s, &k) in c.sums.iter().zip(&map) {
            sums[k] = *s;
        }
        c.sums = sums;
    }
    true
}

/// Places the blocks after those placed in `out`'s regions (the previous block's region first:
/// consecutive blocks mostly share one), adding them to their regions' figures.
fn place(trace: &Trace, c: &mut RegionsCarry, out: &Regions) {
    let b = &trace.blocks;
    let (address, size, requested) = (
        b.address.as_slice(),
        b.size.as_slice(),
        b.requested_size.as_slice(),
    );
    let from = c.block_region.len();
    c.block_region.reserve(b.len() - from);
    let mut last: Option<(u64, u64, usize)> = None;
    for i in from..b.len() {
        let a = address[i];
        let r = match last {
            Some((start, end, r)) if a >= start && a < end => r,
            _ => {
                let found = out.region_of(a);
                if found.is_none() {
                    c.unplaced.push((u32::try_from(i).unwrap_or(u32::MAX), a));
                }
                let r = found.unwrap_or(0);
                last = out.regions.get(r).map(|g| (g.start, g.end, r));
                r
            }
        };
        c.block_region.push(u32::try_from(r).unwrap_or(u32::MAX));
        if let Some(s) = c.sums.get_mut(r) {
            s.blocks += 1;
            s.bytes_allocated = s.bytes_allocated.saturating_add(requested[i]);
            s.extent_start = s.extent_start.min(a);
            s.extent_end = s.extent_end.max(a.saturating_add(size[i]));
        }
    }
    c.last_block = b
        .len()
        .checked_sub(1)
        .map(|i| (b.alloc_event[i], address[i]));
}

/// Sweeps the events after those swept for the regions' live and peak bytes, as
/// [`super::peak_per_group`] does over every event.
fn sweep(trace: &Trace, c: &mut RegionsCarry) {
    let sizes = trace.blocks.size.as_slice();
    let order = trace.event_order();
    for &id in order.get(c.events..).unwrap_or(&[]) {
        if id == u32::MAX {
            continue;
        }
        let block = (id >> 1) as usize;
        let Some(s) = c
            .block_region
            .get(block)
            .and_then(|&g| c.sums.get_mut(g as usize))
        else {
            continue;
        };
        if id & 1 == 0 {
            s.live = s.live.saturating_add(sizes[block]);
            s.peak = s.peak.max(s.live);
        } else {
            s.live = s.live.saturating_sub(sizes[block]);
        }
    }
    c.events = order.len();
}
