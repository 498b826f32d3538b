//! The heap-size curve served from the index (issue 25): on a real heaptrack trace (sqlite, 1 M
//! events: requested sizes, so the blocks' extents are the heap's bytes), the curve read from
//! the index at any width holds the trace's own peak (memscape-trace's builder counts it event
//! by event) in the column of the peak event, never more anywhere, and ends at the live bytes
//! at the end; a zoomed window reads the same peak from a finer level.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use memscape_lod::LodIndex;
use memscape_lod::trace_source::TraceFile;

#[test]
fn the_index_curve_holds_the_traces_peak_and_end() {
    // More events than the finest level has bins: bins of several events.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/heaptrack/sqlite_1M.raw.zst");
    let t = memscape_trace::load(&path).expect("load sqlite_1M");
    let (peak, end, peak_event) = (
        t.meta.peak_live_bytes,
        t.meta.end_live_bytes,
        t.meta.peak_event,
    );
    assert!(peak > 0);
    let file = TraceFile::from_trace(t);
    let dir = tempfile::tempdir().unwrap();
    let out = common::build_index(&file, dir.path());
    let index = LodIndex::open(&out).unwrap();
    let te = index.meta.extent_t;
    assert!(index.curve.len() > 5, "{} curve levels", index.curve.len());
    assert!(index.curve[0].0 >= 1, "bins of more than one event");
    let whole = index.heap_curve([0, te], 1);
    assert_eq!(whole[0].max, peak, "the peak");
    assert_eq!(whole[0].end, end, "live at the end");
    for cols in [7usize, 300, 1920] {
        let curve = index.heap_curve([0, te], cols);
        assert_eq!(curve.len(), cols);
        assert!(curve.iter().all(|c| c.max <= peak && c.min <= c.max));
        let at = (peak_event as u128 * cols as u128 / te as u128) as usize;
        assert_eq!(curve[at].max, peak, "{cols} columns: the peak's column");
        assert_eq!(curve[cols - 1].end, end);
    }
    // Zoomed around the peak: a finer level, the same peak.
    let (z0, z1) = (peak_event.saturating_sub(5_000), peak_event + 5_000);
    let curve = index.heap_curve([z0, z1], 100);
    assert_eq!(curve.iter().map(|c| c.max).max(), Some(peak));
}
