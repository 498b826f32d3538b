//! A live recording's address regions continued from the last snapshot's
//! (`regions::regions_continued`: only the new blocks placed, only the new events swept for the
//! regions' peaks) against `find_regions` and `Bins::of_regions` made whole on each snapshot:
//! sqlite3's heaptrack recording replayed into a trace builder and cut at uneven points, and a
//! small recording whose regions are added before others, merge, and hold blocks in no region.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::data;
use memscape_trace::bins::Bins;
use memscape_trace::regions::{
    DEFAULT_GAP_THRESHOLD, RegionsCarry, find_regions, regions_continued,
};
use memscape_trace::{Trace, TraceBuilder, TraceFormat, load};

/// The continued regions and bins of `trace` equal those made whole; returns the carry.
fn continue_and_compare(trace: &Trace, carry: Option<RegionsCarry>, at: &str) -> RegionsCarry {
    let (regions, bins, carry) = regions_continued(trace, DEFAULT_GAP_THRESHOLD, carry);
    let whole = find_regions(trace, DEFAULT_GAP_THRESHOLD);
    let whole_bins = Bins::of_regions(trace, &whole, DEFAULT_GAP_THRESHOLD);
    assert_eq!(regions.regions, whole.regions, "regions, {at}");
    assert!(
        regions.block_region == whole.block_region,
        "blocks' regions differ, {at}"
    );
    assert_eq!(bins.bins, whole_bins.bins, "bins, {at}");
    assert!(bins.block_bin == whole_bins.block_bin, "blocks' bins, {at}");
    assert_eq!(bins.by, whole_bins.by, "{at}");
    carry
}

#[test]
fn regions_continued_over_a_replayed_recording_equal_regions_found_whole() {
    let real = load(&data("heaptrack/sqlite_1M.raw.zst")).unwrap();
    let events = real.event_order().len();
    let cuts = [
        1, 700, 9_000, 9_000, 30_000, 61_000, 120_000, 121_500, 290_000, 500_000, events,
    ];
    let mut builder = TraceBuilder::replaying(&real, "sqlite replay");
    let (mut carry, mut replayed, mut regions) = (None, 0, Vec::new());
    for &cut in &cuts {
        builder.replay(&real, replayed..cut);
        replayed = cut;
        let trace = builder.snapshot(TraceFormat::HeaptrackRaw, true);
        let next = continue_and_compare(&trace, carry, &format!("{cut} events"));
        regions.push(find_regions(&trace, DEFAULT_GAP_THRESHOLD).regions.len());
        carry = Some(next);
    }
    let carry = carry.unwrap();
    // The regions grew from one to several, and all but the first snapshot continued.
    assert!(regions.last() > regions.first(), "regions {regions:?}");
    assert_eq!(
        (carry.continued(), carry.rebuilt()),
        (cuts.len() as u64 - 1, 1),
        "regions {regions:?}"
    );
}

/// A recording made event by event.
struct Recording {
    builder: TraceBuilder,
    thread: u32,
    event: u64,
}

impl Recording {
    fn alloc(&mut self, address: u64, size: u64) {
        let e = self.event;
        self.builder
            .alloc(e, e, address, size, 0, self.thread, 0)
            .unwrap();
        self.event += 1;
    }

    fn free(&mut self, address: u64) {
        let e = self.event;
        assert!(self.builder.free(e, e, address));
        self.event += 1;
    }
}

/// Snapshots of a small recording whose regions are added before the others (renumbered),
/// grow, merge (swept again), and hold a block in no region (an empty block at a region's
/// end) that a later block places elsewhere (swept again), with frees between snapshots.
#[test]
fn regions_added_before_merged_and_a_block_in_none_continue_exactly() {
    const MB: u64 = 1 << 20;
    let mut builder = TraceBuilder::with_event_times("regions");
    let thread = builder.thread("main");
    let mut r = Recording {
        builder,
        thread,
        event: 0,
    };
    let (mut carry, mut steps) = (None, Vec::new());
    let mut snapshot = |r: &mut Recording, at: &str| {
        let trace = r.builder.snapshot(TraceFormat::Csv, true);
        let next = continue_and_compare(&trace, carry.take(), at);
        steps.push((next.continued(), next.rebuilt()));
        carry = Some(next);
    };
    // Region 0x100 MiB; region 0x300 MiB.
    r.alloc(0x100 * MB, 4096);
    r.alloc(0x100 * MB + 4096, 8192);
    r.alloc(0x300 * MB, 100);
    snapshot(&mut r, "first");
    // An empty block at the end of 0x300 MiB's region: in none (counted in the first), and a
    // region added before every other (all renumbered); a free of a block swept.
    r.alloc(0x300 * MB + 100, 0);
    r.alloc(0x80 * MB, 64);
    r.free(0x100 * MB);
    r.alloc(0x100 * MB + 16384, 1 << 16);
    snapshot(&mut r, "a region added first");
    // A region between two (renumbered behind it), a peak in it, and a free.
    r.alloc(0x200 * MB, 1 << 20);
    r.alloc(0x200 * MB + (1 << 20), 1 << 20);
    r.free(0x200 * MB);
    snapshot(&mut r, "a region added between");
    // 0x300 MiB's region grows over the empty block: it moves from the first region.
    r.alloc(0x300 * MB + 100, 32);
    snapshot(&mut r, "a block in no region placed");
    // Within the gap of two regions: they merge.
    r.alloc(0x200 * MB + (2 << 20) + MB / 2, 64);
    r.alloc(0x200 * MB + (4 << 20), 64);
    snapshot(&mut r, "nothing merged yet");
    r.alloc(0x200 * MB + (3 << 20), 64);
    snapshot(&mut r, "regions merged");
    r.alloc(0x200 * MB + (5 << 20), 4096);
    snapshot(&mut r, "after the merge");
    // Per snapshot (continued, rebuilt) so far: the first and the two that could not go on
    // are whole, the renumbered ones continued.
    assert_eq!(
        steps,
        [(0, 1), (1, 1), (2, 1), (2, 2), (3, 2), (3, 3), (4, 3)]
    );
}
