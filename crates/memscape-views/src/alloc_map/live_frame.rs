//! A live recording's allocation-map frame (issue 18 part 4): the time axis reaches past the
//! recording's end (a strip chart's axis still to come) and every used address region has room
//! to grow on the collapsed axis, so that from one snapshot to the next the blocks that ended
//! keep their pixels and the live map only adds what is new
//! (`memscape_render::alloc_map::AccumulatedSums`). The frame is laid out again — every block
//! summed again — only when the recording passes the time axis or a region outgrows its room:
//! a handful of times per run, as the headroom doubles.

use memscape_trace::regions::Regions;

use super::scene::{RegionLayout, TimeAxis};

/// When laid out again, the frame's time axis is this many times the recording's so far.
pub const TIME_HEADROOM: u64 = 2;

/// Regions closer than this share a slot, the gaps between them shown: an allocator maps new
/// chunks beside its last ones (glibc's mmap'd blocks and arenas, each its own region past
/// `REGION_GAP`), which would otherwise make a new slot, and so a new layout, at every snapshot.
pub const SLOT_GAP: u64 = 64 << 20;

/// The live map's frame: the address slots and the time axes' ends (see the module's
/// documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveFrame {
    /// Each used region with room on both sides (real addresses `start..end`) and where it
    /// starts on the collapsed axis; in address order.
    pub slots: Vec<RegionLayout>,
    /// Height of the collapsed axis (slots and separators).
    pub collapsed_extent: u64,
    pub events_end: u64,
    pub wall_end: u64,
    /// Counts the address layouts: blocks keep their collapsed positions while it stays.
    pub layout: u64,
}

impl LiveFrame {
    /// The frame of a snapshot with `regions` whose time axes end at `events` and `wall`:
    /// `previous` kept while it holds them all, else laid out again with room on both axes
    /// (every block is summed again then, whichever axis was passed).
    pub fn next(previous: Option<&LiveFrame>, regions: &Regions, events: u64, wall: u64) -> Self {
        if let Some(p) = previous
            && events <= p.events_end
            && wall <= p.wall_end
            && regions
                .regions
                .iter()
                .all(|r| p.slot_of(r.start, r.end).is_some())
        {
            return p.clone();
        }
        let events_end = events.max(1).saturating_mul(TIME_HEADROOM);
        let wall_end = wall.max(1).saturating_mul(TIME_HEADROOM);
        let mut spans: Vec<(u64, u64)> = Vec::with_capacity(regions.regions.len());
        for r in &regions.regions {
            match spans.last_mut() {
                Some(last) if r.start.saturating_sub(last.1) < SLOT_GAP => {
                    last.1 = last.1.max(r.end)
                }
                _ => spans.push((r.start, r.end)),
            }
        }
        let mut slots: Vec<RegionLayout> = Vec::with_capacity(spans.len());
        let mut collapsed = 0u64;
        let used: u64 = spans.iter().map(|(s, e)| e - s).sum();
        // Room on each side: as much again as the regions (at least 64 KiB), at most half the
        // gap to a neighbour, so that slots never overlap.
        let separator = (used / 100).max(64);
        for (k, &(start, end)) in spans.iter().enumerate() {
            let room = (end - start).max(64 << 10);
            let below = k.checked_sub(1).map_or(start, |j| (start - spans[j].1) / 2);
            let above = spans.get(k + 1).map_or(u64::MAX - end, |n| (n.0 - end) / 2);
            let (lo, hi) = (start - room.min(below), end + room.min(above));
            slots.push(RegionLayout {
                start: lo,
                end: hi,
                collapsed_start: collapsed,
            });
            collapsed = collapsed.saturating_add(hi - lo).saturating_add(separator);
        }
        Self {
            collapsed_extent: collapsed.saturating_sub(separator).max(1),
            slots,
            events_end,
            wall_end,
            layout: previous.map_or(0, |p| p.layout + 1),
        }
    }

    /// The slot holding the addresses `start..end`, if one does.
    fn slot_of(&self, start: u64, end: u64) -> Option<&RegionLayout> {
        let i = self
            .slots
            .partition_point(|s| s.start <= start)
            .checked_sub(1)?;
        let s = &self.slots[i];
        (end <= s.end).then_some(s)
    }

    /// Where a region starting at `start` (inside a slot) starts on the collapsed axis.
    pub fn collapsed_start(&self, start: u64) -> Option<u64> {
        let s = self.slot_of(start, start)?;
        Some(s.collapsed_start + (start - s.start))
    }

    /// The end of the frame's time axis.
    pub fn time_end(&self, axis: TimeAxis) -> u64 {
        match axis {
            TimeAxis::Events => self.events_end,
            TimeAxis::Wall => self.wall_end,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use memscape_trace::regions::Region;

    fn regions(spans: &[(u64, u64)]) -> Regions {
        let mut axis = 0;
        Regions {
            regions: spans
                .iter()
                .map(|&(start, end)| {
                    let r = Region {
                        start,
                        end,
                        peak_bytes: 0,
                        blocks: 1,
                        axis_start: axis,
                    };
                    axis += end - start;
                    r
                })
                .collect(),
            block_region: Vec::new(),
        }
    }

    #[test]
    fn a_growing_heap_keeps_its_layout_until_it_outgrows_its_room() {
        let a = LiveFrame::next(
            None,
            &regions(&[(1 << 20, 2 << 20), (1 << 40, (1 << 40) + 4096)]),
            100,
            1000,
        );
        assert_eq!((a.events_end, a.wall_end, a.layout), (200, 2000, 0));
        let top = a.collapsed_start(1 << 40).unwrap();
        // Grown upwards and downwards within the room, later in time: the same layout.
        let b = LiveFrame::next(
            Some(&a),
            &regions(&[((1 << 20) - 4096, 3 << 20), (1 << 40, (1 << 40) + 60_000)]),
            200,
            1500,
        );
        assert_eq!((b.events_end, b.wall_end, b.layout), (200, 2000, 0));
        assert_eq!(b.collapsed_start(1 << 40), Some(top));
        assert_eq!(
            b.collapsed_start((1 << 20) - 4096).unwrap() + 4096,
            a.collapsed_start(1 << 20).unwrap()
        );
        // Past the time axis: laid out again, the time ends from the recording's.
        let c = LiveFrame::next(Some(&b), &regions(&[(1 << 20, 3 << 20)]), 201, 1500);
        assert_eq!((c.events_end, c.wall_end, c.layout), (402, 3000, 1));
        // Outgrown (and a new region): laid out again.
        let d = LiveFrame::next(
            Some(&c),
            &regions(&[(1 << 20, 9 << 20), (5 << 30, (5 << 30) + 10)]),
            300,
            1500,
        );
        assert_eq!(d.layout, 2);
        assert!(d.collapsed_start(5 << 30).is_some());
        // A region beside another (an allocator's next chunk) shares its slot.
        let e = LiveFrame::next(
            Some(&d),
            &regions(&[
                (1 << 20, 9 << 20),
                ((5 << 30) - (8 << 20), (5 << 30) - (6 << 20)),
                (5 << 30, (5 << 30) + 10),
            ]),
            300,
            1500,
        );
        assert_eq!((e.layout, e.slots.len()), (3, 2));
        // Slots never overlap, on either axis.
        for w in d.slots.windows(2) {
            assert!(w[0].end <= w[1].start);
            assert!(w[0].collapsed_start + (w[0].end - w[0].start) <= w[1].collapsed_start);
        }
    }
}
