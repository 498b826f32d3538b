//! The live map's occupancy bar continued snapshot after snapshot (`alloc_map::live_bar`)
//! against the bar made from every row of the snapshot (`BinnedScene::bar_blocks`, what
//! opening the file shows): sqlite3's heaptrack recording replayed into a trace builder and
//! snapshotted at uneven points, as a live recording is, on both time axes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use memscape_trace::{TraceBuilder, TraceFormat};
use memscape_views::alloc_map::bins::BinnedScene;
use memscape_views::alloc_map::colors::ColorBy;
use memscape_views::alloc_map::live_bar::LiveBar;
use memscape_views::alloc_map::scene::{AllocScene, TimeAxis};

#[test]
fn continued_live_bars_equal_the_bar_of_every_row_at_every_snapshot() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/heaptrack/sqlite_1M.raw.zst");
    let real = memscape_trace::load(&path).unwrap();
    let events = 300_000usize.min(real.event_order().len());
    // Uneven cuts, two without new events.
    let cuts = [
        1, 700, 700, 25_000, 25_001, 120_000, 121_500, 260_000, events, events,
    ];
    let mut builder = TraceBuilder::replaying(&real, "sqlite replay");
    let mut sweep = None;
    let mut bars: [Option<LiveBar>; 2] = [None, None];
    let (mut steps_continued, mut intervals_continued, mut arrays_reused) = (0, 0, 0);
    let mut replayed = 0;
    for &cut in &cuts {
        builder.replay(&real, replayed..cut);
        replayed = cut;
        let trace = builder.snapshot(TraceFormat::HeaptrackRaw, true);
        let (scene, next) = AllocScene::continued(&trace, ColorBy::default_for(&trace), sweep);
        sweep = Some(next);
        let binned = BinnedScene::unbinned(&scene);
        for (k, axis) in [TimeAxis::Events, TimeAxis::Wall].into_iter().enumerate() {
            let end = scene.time_extent(axis);
            let (bar, continued) =
                LiveBar::build(&binned, axis, end, scene.events_extent, bars[k].as_ref())
                    .expect("the unbinned map has a live bar");
            let full = binned.bar_blocks(axis, end);
            assert!(
                **bar.bar() == full,
                "{axis:?} at {cut} events ({continued:?}): {} vs {} intervals",
                bar.bar().blocks.len(),
                full.blocks.len()
            );
            steps_continued += usize::from(continued.steps);
            intervals_continued +=
                usize::from(continued.intervals != memscape_render::alloc_map::BarContinued::No);
            arrays_reused += usize::from(continued.arrays_reused);
            bars[k] = Some(bar);
        }
    }
    // Every snapshot after the first continued the merge on both axes.
    assert_eq!(steps_continued, 2 * (cuts.len() - 1));
    assert!(intervals_continued >= 2, "{intervals_continued}");
    // Bars continued from a continued bar took the arrays of the one before (none held them).
    assert!(arrays_reused >= 2, "{arrays_reused}");
    // A binned map has none (its bars are made whole).
    let trace = builder.snapshot(TraceFormat::HeaptrackRaw, true);
    let scene = AllocScene::build(&trace, ColorBy::default_for(&trace));
    let by_size = BinnedScene::build(&trace, &scene, memscape_views::alloc_map::bins::BinBy::Size);
    assert!(LiveBar::build(&by_size, TimeAxis::Events, 1, 1, None).is_none());
}
