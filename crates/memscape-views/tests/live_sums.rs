//! The live map's accumulated sums (`memscape_render::alloc_map::AccumulatedSums` in the frame
//! of `alloc_map::live_frame`) against the sums of every block of the same snapshot in the
//! same view (`cpu_reference::exact_sums`, what the map showed before): sqlite3's heaptrack
//! recording replayed into a trace builder and snapshotted at uneven points, as a live
//! recording is, each snapshot's scene continuing the last's frame.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use memscape_render::alloc_map::cpu_reference::{SumsControl, exact_sums};
use memscape_render::alloc_map::{AccumulatedSums, AllocMapView};
use memscape_trace::{TraceBuilder, TraceFormat};
use memscape_views::alloc_map::colors::ColorBy;
use memscape_views::alloc_map::scene::{AllocScene, SceneCarry, TimeAxis};

#[test]
fn accumulated_live_map_sums_equal_the_sums_of_every_block_at_every_snapshot() {
    let real = common::sqlite_recording();
    // Uneven cuts, one without new events.
    let cuts = common::uneven_cuts(&real);
    let mut builder = TraceBuilder::replaying(&real, "sqlite replay");
    let size = [480u32, 270u32];
    let mut carry = SceneCarry::default();
    let mut kept = AccumulatedSums::new();
    let (mut replayed, mut continued, mut layouts) = (0, 0, Vec::new());
    for &cut in &cuts {
        builder.replay(&real, replayed..cut);
        replayed = cut;
        let trace = builder.snapshot(TraceFormat::HeaptrackRaw, true);
        let (scene, next) = AllocScene::live(&trace, ColorBy::Site, carry, true);
        carry = next;
        let frame = scene
            .live_frame
            .as_ref()
            .expect("a live snapshot has a frame");
        layouts.push(frame.layout);
        assert!(scene.frame_time_end(TimeAxis::Events) >= scene.events_extent);
        let view = AllocMapView::fit(
            0,
            scene.frame_time_end(TimeAxis::Events),
            0,
            scene.collapsed_extent,
            size[0],
            size[1],
        );
        let key = scene
            .accumulation_key(ColorBy::Site)
            .expect("site colours accumulate");
        // The view is part of the key, as the sums worker keys it.
        let key = key
            ^ u64::from(view.pixels_per_time.to_bits()) << 20
            ^ u64::from(view.pixels_per_byte.to_bits());
        let n = scene.blocks.len();
        let (sums, update) = kept
            .update(
                key,
                &view,
                size,
                &scene.blocks,
                &scene.times_events,
                0..n,
                scene.events_extent,
                2,
                &SumsControl::default(),
            )
            .unwrap();
        let whole = exact_sums(&view, size, &scene.blocks, &scene.times_events, None, 1);
        let d = sums.largest_relative_difference(&whole);
        assert!(
            d < 1e-4,
            "at {cut} events ({update:?}): relative difference {d}"
        );
        continued += usize::from(!update.restarted);
    }
    eprintln!(
        "{continued} of {} snapshots continued; layouts {layouts:?}",
        cuts.len()
    );
    // The frame held most snapshots: their sums were continued, not made again.
    assert!(
        continued >= cuts.len() / 2,
        "{continued} of {} snapshots continued; layouts {layouts:?}",
        cuts.len()
    );
}
