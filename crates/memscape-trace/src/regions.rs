//! Used regions of the sparse address space: the address ranges of all blocks, clustered and
//! split wherever the gap between consecutive used ranges exceeds a threshold. The map's y axis
//! concatenates regions with the gaps collapsed ([`Regions::axis_position`]).

use crate::model::Trace;

mod continued;
pub use continued::{RegionsCarry, regions_continued};

/// Gaps wider than this (1 MiB) split regions by default.
pub const DEFAULT_GAP_THRESHOLD: u64 = 1 << 20;

/// One used region `[start, end)`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Region {
    pub start: u64,
    pub end: u64,
    /// Largest number of bytes of live blocks inside the region at any one time.
    pub peak_bytes: u64,
    pub blocks: u64,
    /// Where the region starts on the collapsed axis (sum of the sizes of the regions before it).
    pub axis_start: u64,
}

/// The regions of a trace and the region of every block.
#[derive(Debug, Clone, Default)]
pub struct Regions {
    pub regions: Vec<Region>,
    /// Region index of each block (empty when the trace has no addresses).
    pub block_region: Vec<u32>,
}

impl Regions {
    /// The region holding `address`, if any.
    pub fn region_of(&self, address: u64) -> Option<usize> {
        let k = self.regions.partition_point(|r| r.start <= address);
        let r = self.regions.get(k.checked_sub(1)?)?;
        (address < r.end || (r.start == r.end && address == r.start)).then_some(k - 1)
    }

    /// Position of `address` on the collapsed axis, if it is inside a region.
    pub fn axis_position(&self, address: u64) -> Option<u64> {
        let r = &self.regions[self.region_of(address)?];
        Some(r.axis_start + (address - r.start))
    }

    /// Total length of the collapsed axis.
    pub fn axis_len(&self) -> u64 {
        self.regions
            .last()
            .map_or(0, |r| r.axis_start + (r.end - r.start))
    }
}

/// Clusters the blocks' address ranges into regions. Traces without addresses have none.
pub fn find_regions(trace: &Trace, gap_threshold: u64) -> Regions {
    if !trace.meta.has_addresses || trace.blocks.is_empty() {
        return Regions::default();
    }
    // Summarize blocks per address page of `page` bytes (a power of two not above the
    // threshold): blocks starting in the same page are less than the threshold apart, so they
    // always share a region, and merging the per-page (lowest start, highest end) summaries in
    // page order gives exactly the regions of sorting all ranges, at the cost of a hash lookup
    // per block instead of a sort of all blocks.
    let mut pages: crate::builder::PointerMap<(u64, u64)> = Default::default();
    continued::add_to_pages(
        &mut pages,
        page_shift(gap_threshold),
        trace.blocks.address.as_slice(),
        trace.blocks.size.as_slice(),
    );
    let spans = continued::spans_of(&pages, gap_threshold);
    drop(pages);
    assign_blocks(trace, end_to_end(&spans))
}

/// The shift of the address pages whose blocks always share a region: `gap_threshold` rounded
/// down to a power of two.
fn page_shift(gap_threshold: u64) -> u32 {
    63 - gap_threshold.max(1).leading_zeros()
}

/// The regions `ranges` (`[start, end)`, sorted, disjoint: found elsewhere, as a query engine
/// finds them over a whole dataset of which `trace` holds some blocks) with `trace`'s blocks
/// placed in them, so that a part of a trace is laid out on the whole one's axis. A block in
/// no range counts in the first region, as [`find_regions`] places one.
pub fn regions_on(trace: &Trace, ranges: &[(u64, u64)]) -> Regions {
    if !trace.meta.has_addresses || ranges.is_empty() {
        return Regions::default();
    }
    assign_blocks(trace, end_to_end(ranges))
}

/// Regions over `spans` (sorted `[start, end)`) laid end to end on the collapsed axis, their
/// blocks not yet counted.
fn end_to_end(spans: &[(u64, u64)]) -> Vec<Region> {
    let mut axis = 0u64;
    spans
        .iter()
        .map(|&(start, end)| {
            let r = Region {
                start,
                end,
                peak_bytes: 0,
                blocks: 0,
                axis_start: axis,
            };
            axis = axis.saturating_add(end.saturating_sub(start));
            r
        })
        .collect()
}

/// `regions` with the region of every block of `trace`, the regions' block counts and peaks.
fn assign_blocks(trace: &Trace, regions: Vec<Region>) -> Regions {
    let b = &trace.blocks;
    let mut out = Regions {
        regions,
        block_region: Vec::with_capacity(b.len()),
    };
    // The region of the previous block first: consecutive blocks mostly share one.
    let mut last: Option<(u64, u64, usize)> = None;
    for &a in b.address.as_slice() {
        let r = match last {
            Some((start, end, r)) if a >= start && a < end => r,
            _ => {
                let r = out.region_of(a).unwrap_or(0);
                last = out.regions.get(r).map(|g| (g.start, g.end, r));
                r
            }
        };
        out.block_region.push(u32::try_from(r).unwrap_or(u32::MAX));
        if let Some(region) = out.regions.get_mut(r) {
            region.blocks += 1;
        }
    }
    let peaks = peak_per_group(trace, &out.block_region, out.regions.len());
    for (r, p) in out.regions.iter_mut().zip(peaks) {
        r.peak_bytes = p;
    }
    out
}

/// Peak live bytes (block extents) of each group of blocks, by one sweep over the events.
pub fn peak_per_group(trace: &Trace, block_group: &[u32], groups: usize) -> Vec<u64> {
    peak_per_group_of(trace, block_group, groups, trace.blocks.size.as_slice())
}

/// [`peak_per_group`] counting `sizes` of each block (e.g. the requested sizes, as the heap's
/// own peak counts them, where the groups' peaks stand beside it).
pub fn peak_per_group_of(
    trace: &Trace,
    block_group: &[u32],
    groups: usize,
    sizes: &[u64],
) -> Vec<u64> {
    let mut live = vec![0u64; groups];
    let mut peak = vec![0u64; groups];
    for &id in trace.event_order() {
        if id == u32::MAX {
            continue;
        }
        let block = (id >> 1) as usize;
        let Some(&g) = block_group.get(block) else {
            continue;
        };
        let g = g as usize;
        if g >= groups {
            continue;
        }
        let size = sizes.get(block).copied().unwrap_or(0);
        if id & 1 == 0 {
            live[g] = live[g].saturating_add(size);
            peak[g] = peak[g].max(live[g]);
        } else {
            live[g] = live[g].saturating_sub(size);
        }
    }
    peak
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A trace's own regions handed back as ranges place every block where `find_regions`
    /// does; on wider ranges (a whole dataset's) the axis is theirs.
    #[test]
    fn blocks_on_given_ranges_are_placed_as_on_their_own() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/data/heaptrack/sqlite_1M.raw.zst");
        let trace = crate::load(&path).unwrap();
        let own = find_regions(&trace, DEFAULT_GAP_THRESHOLD);
        assert!(own.regions.len() > 1, "{} regions", own.regions.len());
        let ranges: Vec<(u64, u64)> = own.regions.iter().map(|r| (r.start, r.end)).collect();
        let given = regions_on(&trace, &ranges);
        assert_eq!(given.regions, own.regions);
        assert_eq!(given.block_region, own.block_region);
        // Ranges wider than the blocks' (a whole dataset's, of which the trace is a part) keep
        // their extent on the axis.
        let wider: Vec<(u64, u64)> = ranges.iter().map(|&(s, e)| (s, e + 4096)).collect();
        let on_wider = regions_on(&trace, &wider);
        assert_eq!(on_wider.block_region, own.block_region);
        assert_eq!(
            on_wider.axis_len(),
            own.axis_len() + 4096 * ranges.len() as u64
        );
    }
}
