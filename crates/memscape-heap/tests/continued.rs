//! A live recording's heap trees continued snapshot after snapshot
//! (`TraceHeap::continued`, `trace_timeline_continued`) against the full build on each
//! snapshot: sqlite3's heaptrack recording replayed into a trace builder and snapshotted at
//! uneven points, as a live recording is, grouped three ways.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use memscape_heap::trace_tree::{GroupKey, HeapOptions};
use memscape_heap::view::Metric;
use memscape_heap::{SizesSource, Suppressions, trace_timeline_continued, trace_timeline_with};
use memscape_trace::{TraceBuilder, TraceFormat};

#[test]
fn continued_heap_trees_equal_the_full_build_at_every_snapshot() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/heaptrack/sqlite_1M.raw.zst");
    let real = memscape_trace::load(&path).unwrap();
    // The first 400,000 events (test time), cut at uneven points; two cuts without new events.
    let events = 400_000usize.min(real.event_order().len());
    let cuts = [
        1, 900, 900, 37_000, 37_001, 150_000, 151_234, 290_000, events, events,
    ];
    let options = HeapOptions {
        suppressions: Suppressions::builtin(),
        ..HeapOptions::default()
    };
    let groupings = [
        vec![GroupKey::Site],
        vec![GroupKey::Size, GroupKey::Thread],
        vec![GroupKey::Path],
    ];
    for keys in &groupings {
        let mut builder = TraceBuilder::replaying(&real, "sqlite replay");
        let mut carry = None;
        let mut replayed = 0;
        let mut continued = 0;
        let mut suppressed_seen = 0;
        for &cut in &cuts {
            builder.replay(&real, replayed..cut);
            replayed = cut;
            let snapshot = builder.snapshot(TraceFormat::HeaptrackRaw, true);
            let carried = carry.as_ref().map_or(0, memscape_heap::HeapCarry::blocks);
            if carried > 0 {
                continued += 1;
            }
            let (full, mut full_sizes) =
                trace_timeline_with(&snapshot, keys, Metric::Bytes, 40, &options);
            let (grown, mut grown_sizes) = trace_timeline_continued(
                &snapshot,
                keys,
                Metric::Bytes,
                40,
                &options,
                carry.take(),
            );
            let at = format!("{keys:?} at {cut} events (carried {carried} blocks)");
            // Trie, order, points, curve, suspects, growth, peak: everything the pane shows.
            assert_eq!(format!("{grown:?}"), format!("{full:?}"), "{at}");
            for point in 0..full.points.len() {
                assert_eq!(
                    grown_sizes.sizes_at_point(point),
                    full_sizes.sizes_at_point(point),
                    "{at}, point {point}"
                );
            }
            for events in [cut as u64 / 3, cut as u64] {
                assert_eq!(
                    grown_sizes.sizes_at_events(events),
                    full_sizes.sizes_at_events(events),
                    "{at}, {events} events"
                );
            }
            for group in 0..full.trie.len().min(50) as u32 {
                assert_eq!(
                    grown_sizes.blocks_in_group(group),
                    full_sizes.blocks_in_group(group),
                    "{at}, group {group}"
                );
            }
            let blocks = snapshot.blocks.len() as u32;
            for block in (0..blocks).step_by(997) {
                assert_eq!(
                    grown_sizes.group_of_block(block),
                    full_sizes.group_of_block(block),
                    "{at}, block {block}"
                );
            }
            suppressed_seen = suppressed_seen.max(full.suppressed.blocks);
            carry = grown_sizes.carry();
            assert_eq!(carry.as_ref().map(|c| c.blocks()), Some(blocks as usize));
        }
        assert_eq!(continued, cuts.len() - 1, "{keys:?}");
        // The suppressions' summary was compared with blocks in it.
        assert!(suppressed_seen > 0, "{keys:?}");
    }
}
