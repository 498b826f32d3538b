//! The live map's occupancy bar continued snapshot after snapshot (`alloc_map::live_bar`)
//! against the bar made from every row of the snapshot (`BinnedScene::bar_blocks`, what
//! opening the file shows): sqlite3's heaptrack recording replayed into a trace builder and
//! snapshotted at uneven points, as a live recording is, on both time axes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use memscape_trace::{TraceBuilder, TraceFormat};
use memscape_views::alloc_map::bins::BinnedScene;
use memscape_views::alloc_map::colors::ColorBy;
use memscape_views::alloc_map::live_bar::LiveBar;
use memscape_views::alloc_map::scene::{AllocScene, TimeAxis};

#[test]
fn continued_live_bars_equal_the_bar_of_every_row_at_every_snapshot() {
    let real = common::sqlite_recording();
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

/// The live bar's one-row sums continued by the pane's sums worker from snapshot to snapshot
/// (`memscape_render::alloc_map::ContinuedRowSums`: only the intervals closed since added to the
/// kept state) against the sums of every interval of the same bar in order (`BarSumsJob` on one
/// thread): equal bit for bit at every snapshot of sqlite3's recording replayed, in the live
/// frame's view as the pane asks for it.
#[test]
fn continued_live_bar_sums_equal_the_sums_of_every_interval_at_every_snapshot() {
    use memscape_render::alloc_map::cpu_reference::SumsControl;
    use memscape_render::alloc_map::{
        AllocMapView, BarPart, ContinuedRowSums, CushionKind, OccupancyBarFrame, OccupancyBarView,
        OccupancyVariant,
    };
    use memscape_views::alloc_map::scene::SceneCarry;
    use memscape_views::sums_worker::{SumsJob, SumsSource, SumsWorker, bar_slot};

    let real = common::sqlite_recording();
    // Uneven cuts, one without new events.
    let cuts = common::uneven_cuts(&real);
    let mut builder = TraceBuilder::replaying(&real, "sqlite replay");
    let (mut carry, mut last, mut replayed) = (SceneCarry::default(), None, 0);
    let size = [480u32, 14u32];
    let worker = SumsWorker::new(None, 2).unwrap();
    let mut kept = ContinuedRowSums::new();
    let (mut continued, mut kept_intervals, mut intervals) = (0, 0, 0);
    for &cut in &cuts {
        builder.replay(&real, replayed..cut);
        replayed = cut;
        let trace = builder.snapshot(TraceFormat::HeaptrackRaw, true);
        let (scene, next) = AllocScene::live(&trace, ColorBy::Site, carry, true);
        carry = next;
        let binned = BinnedScene::unbinned(&scene);
        let end = scene.time_extent(TimeAxis::Events);
        let (bar, _) = LiveBar::build(
            &binned,
            TimeAxis::Events,
            end,
            scene.events_extent,
            last.as_ref(),
        )
        .expect("the unbinned map has a live bar");
        let mut map_view = AllocMapView::fit(
            0,
            scene.frame_time_end(TimeAxis::Events),
            0,
            1,
            size[0],
            size[1],
        );
        map_view.cushion = CushionKind::None;
        let view = OccupancyBarView::from_map(&map_view, OccupancyVariant::Flat);
        let job = OccupancyBarFrame::cpu_sums_view(bar.bar(), &view, BarPart::Bin(0), size)
            .expect("a flat bar is summed on the CPU");
        assert!(job.row.is_some(), "one bin's bar is summed as one row");
        let b = bar.bar();
        let whole = job
            .sums(&b.blocks, &b.times, size, 1, &SumsControl::default())
            .unwrap();
        // Through the pane's worker, as the paint bridge asks.
        worker.want(
            bar_slot(0),
            SumsJob {
                source: SumsSource::Bar(b.clone()),
                range: job.range.clone(),
                view: job.view,
                size,
                row: job.row,
                accumulate: None,
            },
        );
        let started = std::time::Instant::now();
        while worker.pending() {
            assert!(started.elapsed().as_secs() < 120, "never summed");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let summed = worker.latest(bar_slot(0)).expect("summed");
        assert!(
            summed.sums == whole,
            "at {cut} events: the worker's bar sums differ from every interval's"
        );
        // The same continuation on its own, to count what it kept.
        let growing = b.growing.expect("a live bar has a lineage");
        // The lineage and the view's time axis (the frame's), as the worker keys them.
        let key = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            let v = &job.view;
            let time = (v.time_origin, v.time_origin_frac.to_bits());
            (growing.lineage, time, v.pixels_per_time.to_bits()).hash(&mut h);
            h.finish()
        };
        let (sums, update) = kept
            .update(
                key,
                job.row.as_ref().unwrap(),
                size,
                &b.blocks,
                &b.times,
                job.range.clone(),
                growing.closed,
                growing.reference,
                &SumsControl::default(),
            )
            .unwrap();
        assert!(sums == whole, "at {cut} events ({update:?})");
        continued += usize::from(!update.restarted);
        kept_intervals += update.kept;
        intervals += b.blocks.len();
        last = Some(bar);
    }
    eprintln!(
        "{continued} of {} bars continued; {kept_intervals} intervals added to the kept sums, {intervals} in all bars",
        cuts.len()
    );
    // Some snapshots went on from the last one's sums: the others start again where the
    // live frame's time axis is laid out again or the bar's attributes are recoloured.
    assert!(continued >= 2, "{continued} continued");
    assert!(
        kept_intervals < intervals,
        "{kept_intervals} of {intervals}"
    );
}
