//! A trace's blocks as [`LodBlock`]s: the collapsed address axis (regions with the gaps
//! between them collapsed to thin separators, as the allocation map lays them out), the event
//! or wall-time axis, and colours.

use memscape_trace::Trace;
use memscape_trace::regions::{DEFAULT_GAP_THRESHOLD, Regions, find_regions};

use crate::view::LodBlock;

/// One used address range and where it starts on the collapsed axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RegionSpan {
    pub start: u64,
    pub end: u64,
    pub collapsed_start: u64,
}

/// The collapsed address axis: regions in address order, separated by 1 % of the used bytes
/// (at least 64 B), as memscape's allocation map draws them.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AddressAxis {
    pub regions: Vec<RegionSpan>,
    /// Total height of the collapsed axis in bytes.
    pub extent: u64,
}

impl AddressAxis {
    /// The axis of `regions` (used bytes per region), laid out as the allocation map does.
    pub fn from_ranges(ranges: &[(u64, u64)]) -> Self {
        let used: u64 = ranges.iter().map(|(s, e)| e.saturating_sub(*s)).sum();
        let separator = (used / 100).max(64);
        let mut next = 0u64;
        let regions: Vec<RegionSpan> = ranges
            .iter()
            .enumerate()
            .map(|(k, &(start, end))| {
                let span = RegionSpan {
                    start,
                    end,
                    collapsed_start: next.saturating_add(separator.saturating_mul(k as u64)),
                };
                next = next.saturating_add(end.saturating_sub(start));
                span
            })
            .collect();
        let extent = regions
            .last()
            .map_or(1, |r| r.collapsed_start.saturating_add(r.end - r.start))
            .max(1);
        Self { regions, extent }
    }

    pub fn from_regions(regions: &Regions) -> Self {
        let ranges: Vec<(u64, u64)> = regions.regions.iter().map(|r| (r.start, r.end)).collect();
        Self::from_ranges(&ranges)
    }

    /// The collapsed position of `address`, if it lies in a region.
    pub fn collapse(&self, address: u64) -> Option<u64> {
        let i = self
            .regions
            .partition_point(|r| r.start <= address)
            .checked_sub(1)?;
        let r = &self.regions[i];
        (address < r.end || (r.start == r.end && address == r.start))
            .then(|| r.collapsed_start + (address - r.start))
    }
}

/// How blocks are coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Coloring {
    /// Categorical, by thread (the renderer's palette of [`palette_color`]).
    Thread,
    /// Quantitative: log size over the largest block.
    Size,
}

/// Thread `index`'s colour: the views' 64-colour palette (memscape-eq1's), packed.
pub fn palette_color(index: u32) -> u32 {
    memscape_eq1::palette::categorical_packed(index)
}

/// The blocks of an in-memory trace on the event axis and the collapsed address axis.
pub fn blocks_from_trace(trace: &Trace, coloring: Coloring) -> (Vec<LodBlock>, AddressAxis) {
    let regions = find_regions(trace, DEFAULT_GAP_THRESHOLD);
    let axis = AddressAxis::from_regions(&regions);
    let b = &trace.blocks;
    let max_size = b.size.iter().copied().max().unwrap_or(1).max(2) as f64;
    let blocks = (0..b.len())
        .map(|i| {
            let y = axis.collapse(b.address[i]).unwrap_or(0);
            let (color, attr) = match coloring {
                Coloring::Thread => (palette_color(b.thread[i]), 0.0),
                Coloring::Size => (
                    0,
                    ((b.size[i].max(1) as f64).log2() / max_size.log2()).clamp(0.0, 1.0) as f32,
                ),
            };
            LodBlock::new(b.alloc_event[i], b.free_event[i], y, b.size[i], color, attr)
        })
        .collect();
    (blocks, axis)
}

#[cfg(test)]
mod palette_tests {
    use super::palette_color;

    #[test]
    fn threads_take_the_views_64_colours() {
        let colours: std::collections::HashSet<u32> = (0..64).map(palette_color).collect();
        assert_eq!(colours.len(), 64, "64 threads, 64 colours");
        for k in [0, 8, 9, 63, 64, 200] {
            assert_eq!(
                palette_color(k).to_le_bytes(),
                memscape_eq1::palette::categorical(k),
                "thread {k}"
            );
        }
    }
}
