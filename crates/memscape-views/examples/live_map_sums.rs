//! The live map's sums per snapshot of a recording, accumulated in the live frame
//! (`AccumulatedSums`, what the GUI's sums worker does on a live snapshot) against every block
//! summed again (`exact_sums`, what it did before), both on 2 threads; prints one line per
//! snapshot and checks that the two agree. BENCHMARKS.md, "Live view cadence", wave 11:
//!
//! ```sh
//! cargo run --release -p memscape-views --example live_map_sums -- cc.msc [WIDTH HEIGHT]
//! ```
//!
//! The recording is replayed into a trace builder and snapshotted at cuts 1.4× apart from
//! 100,000 events, as a live recording is.
//! `MEMSCAPE_SUMS_FRESH_ARRAYS=1`: each update on new arrays, as before the accumulators' arrays
//! were kept (wave 13).

use std::time::Instant;

use memscape_render::alloc_map::cpu_reference::{SumsControl, exact_sums};
use memscape_render::alloc_map::{AccumulatedSums, AllocMapView};
use memscape_trace::{TraceBuilder, TraceFormat};
use memscape_views::alloc_map::colors::ColorBy;
use memscape_views::alloc_map::scene::{AllocScene, SceneCarry, TimeAxis};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .ok_or("usage: live_map_sums TRACE [WIDTH HEIGHT]")?;
    let width: u32 = args.get(2).map_or(Ok(1400), |s| s.parse())?;
    let height: u32 = args.get(3).map_or(Ok(600), |s| s.parse())?;
    let real = memscape_trace::load(std::path::Path::new(path))?;
    let events = real.event_order().len();
    let mut builder = TraceBuilder::replaying(&real, "replay");
    let (mut carry, mut replayed, mut cut) = (SceneCarry::default(), 0, 100_000usize);
    let mut kept = AccumulatedSums::new();
    // Each update on new arrays, as before they were kept (the comparison's baseline).
    let fresh_arrays = std::env::var_os("MEMSCAPE_SUMS_FRESH_ARRAYS").is_some();
    let (mut total_acc, mut total_exact) = (0.0, 0.0);
    println!(
        "events\tblocks\tframe\tcontinued\tclosed_added\topen\taccumulated_ms\tevery_block_ms\tlargest_rel_diff"
    );
    loop {
        cut = cut.min(events);
        builder.replay(&real, replayed..cut);
        replayed = cut;
        let trace = builder.snapshot(TraceFormat::HeaptrackRaw, true);
        let (scene, next) = AllocScene::live(&trace, ColorBy::Site, carry, true);
        carry = next;
        let frame = scene.live_frame.as_ref().ok_or("no live frame")?;
        let view = AllocMapView::fit(
            0,
            scene.frame_time_end(TimeAxis::Events),
            0,
            scene.collapsed_extent,
            width,
            height,
        );
        let key = scene
            .accumulation_key(ColorBy::Site)
            .ok_or("site colours accumulate")?;
        let n = scene.blocks.len();
        if fresh_arrays {
            kept.forget_scratch();
        }
        let started = Instant::now();
        let (sums, update) = kept
            .update(
                key,
                &view,
                [width, height],
                &scene.blocks,
                &scene.times_events,
                0..n,
                scene.events_extent,
                2,
                &SumsControl::default(),
            )
            .ok_or("cancelled")?;
        let acc_ms = started.elapsed().as_secs_f64() * 1e3;
        let started = Instant::now();
        let whole = exact_sums(
            &view,
            [width, height],
            &scene.blocks,
            &scene.times_events,
            None,
            2,
        );
        let exact_ms = started.elapsed().as_secs_f64() * 1e3;
        let diff = sums.largest_relative_difference(&whole);
        total_acc += acc_ms;
        total_exact += exact_ms;
        println!(
            "{cut}\t{n}\t{}\t{}\t{}\t{}\t{acc_ms:.1}\t{exact_ms:.1}\t{diff:.2e}",
            frame.layout, !update.restarted, update.closed, update.open
        );
        if cut == events {
            break;
        }
        cut = cut * 7 / 5;
    }
    println!("total: accumulated {total_acc:.0} ms, every block {total_exact:.0} ms");
    Ok(())
}
