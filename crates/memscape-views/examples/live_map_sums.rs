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
//!
//! Each snapshot's live occupancy bar too (wave 22): its one row summed whole on 2 threads (what
//! the sums worker did before) and continued from the last bar's (`ContinuedRowSums`), in CPU
//! milliseconds of the process (10 ms ticks), checked bit for bit against the sums of every
//! interval in order.

use std::time::Instant;

use memscape_render::alloc_map::cpu_reference::{SumsControl, exact_sums};
use memscape_render::alloc_map::{
    AccumulatedSums, AllocMapView, BarPart, ContinuedRowSums, CushionKind, OccupancyBarFrame,
    OccupancyBarView, OccupancyVariant,
};
use memscape_trace::{TraceBuilder, TraceFormat};
use memscape_views::alloc_map::bins::BinnedScene;
use memscape_views::alloc_map::colors::ColorBy;
use memscape_views::alloc_map::live_bar::LiveBar;
use memscape_views::alloc_map::scene::{AllocScene, SceneCarry, TimeAxis};

#[path = "support/cpu.rs"]
mod cpu;

/// The bar's height in pixels (its rows are alike: only the copy of the row grows with it).
const BAR_HEIGHT: u32 = 14;

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
    let (mut last_bar, mut kept_bar) = (None, ContinuedRowSums::new());
    let (mut total_bar_whole, mut total_bar_continued) = (0.0, 0.0);
    println!(
        "events\tblocks\tframe\tcontinued\tclosed_added\topen\taccumulated_ms\tevery_block_ms\tlargest_rel_diff\tbar_intervals\tbar_continued\tbar_kept_added\tbar_whole_cpu_ms\tbar_continued_cpu_ms\tbar_equal\tbar_intervals_kept"
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
        // The live bar in the same frame, as the map pane's worker sums it.
        let binned = BinnedScene::unbinned(&scene);
        let (bar, bar_how) = LiveBar::build(
            &binned,
            TimeAxis::Events,
            scene.time_extent(TimeAxis::Events),
            scene.events_extent,
            last_bar.as_ref(),
        )
        .ok_or("no live bar")?;
        let mut bar_map_view = view;
        bar_map_view.cushion = CushionKind::None;
        let bar_view = OccupancyBarView::from_map(&bar_map_view, OccupancyVariant::Flat);
        let size = [width, BAR_HEIGHT];
        let job = OccupancyBarFrame::cpu_sums_view(bar.bar(), &bar_view, BarPart::Bin(0), size)
            .ok_or("no CPU sums for the bar")?;
        let (b, control) = (bar.bar(), SumsControl::default());
        let cpu0 = cpu::cpu_ms("/proc/self/stat");
        let whole = job
            .sums(&b.blocks, &b.times, size, 2, &control)
            .ok_or("cancelled")?;
        let cpu1 = cpu::cpu_ms("/proc/self/stat");
        let growing = b.growing.ok_or("a live bar has a lineage")?;
        // The bar's view (its time axis: the frame's) and lineage, as the sums worker keys
        // them: another frame starts again.
        let bar_key = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            let v = &job.view;
            (
                growing.lineage,
                v.time_origin,
                v.time_origin_frac.to_bits(),
                v.pixels_per_time.to_bits(),
            )
                .hash(&mut h);
            h.finish()
        };
        let (continued, bar_update) = kept_bar
            .update(
                bar_key,
                job.row.as_ref().ok_or("one row")?,
                size,
                &b.blocks,
                &b.times,
                job.range.clone(),
                growing.closed,
                growing.reference,
                &control,
            )
            .ok_or("cancelled")?;
        let cpu2 = cpu::cpu_ms("/proc/self/stat");
        drop(whole);
        let in_order = job
            .sums(&b.blocks, &b.times, size, 1, &control)
            .ok_or("cancelled")?;
        let (bar_whole_ms, bar_continued_ms) = (cpu1 - cpu0, cpu2 - cpu1);
        total_bar_whole += bar_whole_ms;
        total_bar_continued += bar_continued_ms;
        println!(
            "{cut}\t{n}\t{}\t{}\t{}\t{}\t{acc_ms:.1}\t{exact_ms:.1}\t{diff:.2e}\t{}\t{}\t{}\t{bar_whole_ms:.0}\t{bar_continued_ms:.0}\t{}\t{:?}",
            frame.layout,
            !update.restarted,
            update.closed,
            update.open,
            b.blocks.len(),
            !bar_update.restarted,
            bar_update.kept,
            continued == in_order,
            bar_how.intervals
        );
        last_bar = Some(bar);
        if cut == events {
            break;
        }
        cut = cut * 7 / 5;
    }
    println!("total: accumulated {total_acc:.0} ms, every block {total_exact:.0} ms");
    println!(
        "bar total (CPU): whole {total_bar_whole:.0} ms, continued {total_bar_continued:.0} ms"
    );
    Ok(())
}
