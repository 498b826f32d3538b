//! A live recording's per-update stages against the trace's length: for each snapshot, the CPU
//! time of the trace snapshot, the allocation-map scene continued from the last snapshot's
//! (`AllocScene::live`, the reading thread's), the map worker (`MapBuilder::following`, the
//! unbinned map and its bar as the live pane asks), the heap tree's grouping continued
//! (`TraceHeap::continued`), its slider points and heap-size curve (the rest of
//! `trace_timeline_continued`) and the carry copied for the next snapshot's pane
//! (`TraceSizes::carry`). BENCHMARKS.md, "Live view cadence", wave 18:
//!
//! ```sh
//! cargo build -p memscape-views --example live_stage_cost
//! target/debug/examples/live_stage_cost cc.msc
//! ```
//!
//! The recording is replayed into a trace builder and snapshotted at cuts 1.4× apart from
//! 100,000 events, as a live recording is. The stages run one after the other on this thread,
//! so the process's CPU time between two readings is that stage's (10 ms ticks).

use memscape_heap::{GroupKey, HeapOptions, Metric, Suppressions, TraceHeap};
use memscape_trace::{TraceBuilder, TraceFormat};
use memscape_views::alloc_map::bins::BinBy;
use memscape_views::alloc_map::colors::ColorBy;
use memscape_views::alloc_map::compose::{MapBuilder, Wanted};
use memscape_views::alloc_map::scene::{AllocScene, SceneCarry, TimeAxis};

#[path = "support/cpu.rs"]
mod cpu;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).ok_or("usage: live_stage_cost TRACE")?;
    let real = memscape_trace::load(std::path::Path::new(path))?;
    let events = real.event_order().len();
    let mut builder = TraceBuilder::replaying(&real, "replay");
    let (mut scene_carry, mut replayed, mut cut) = (SceneCarry::default(), 0, 100_000usize);
    let (mut live_bar, mut heap_carry) = (None, None);
    // The heap-tree pane's grouping: by call site, bytes, 120 slider points, built-in
    // suppressions (`heap_tree::model::Grouping`'s default).
    let keys = [GroupKey::Site];
    let options = HeapOptions {
        suppressions: Suppressions::builtin(),
        ..Default::default()
    };
    let now = || cpu::cpu_ms("/proc/self/stat");
    println!(
        "events\tblocks\tsnapshot\tscene\tmap_worker\theap_grouping\theap_points\theap_carry\tregions_continued"
    );
    loop {
        cut = cut.min(events);
        builder.replay(&real, replayed..cut);
        replayed = cut;
        let t = now();
        let trace = builder.snapshot(TraceFormat::HeaptrackRaw, true);
        let snapshot_ms = now() - t;
        let t = now();
        let (scene, next) =
            AllocScene::live(&trace, ColorBy::default_for(&trace), scene_carry, true);
        let scene_ms = now() - t;
        scene_carry = next;
        let t = now();
        let built = MapBuilder::following(live_bar.take()).build(
            &trace,
            &scene,
            Wanted {
                by: BinBy::None,
                axis: TimeAxis::Events,
                color_by: scene.color_by,
                age_at: 0,
                curves: false,
                bar_integral: false,
            },
            true,
        );
        let worker_ms = now() - t;
        live_bar = built.live_bar.clone();
        // The grouping alone, on a copy of the carry, then the whole timeline as the pane's
        // worker makes it: the points are the difference.
        let t = now();
        let grouped = TraceHeap::continued(&trace, &keys, &options, heap_carry.clone());
        let grouping_ms = now() - t;
        drop(grouped);
        let t = now();
        let (_timeline, mut sizes) = memscape_heap::trace_timeline_continued(
            &trace,
            &keys,
            Metric::Bytes,
            120,
            &options,
            heap_carry.take(),
        );
        let points_ms = (now() - t - grouping_ms).max(0.0);
        let t = now();
        heap_carry = sizes.carry();
        let carry_ms = now() - t;
        // Snapshots whose regions continued the last one's / were placed and swept whole.
        let regions = scene_carry
            .regions
            .as_ref()
            .map_or((0, 0), |c| (c.continued(), c.rebuilt()));
        println!(
            "{cut}\t{}\t{snapshot_ms:.0}\t{scene_ms:.0}\t{worker_ms:.0}\t{grouping_ms:.0}\t{points_ms:.0}\t{carry_ms:.0}\t{}/{}",
            trace.blocks.len(),
            regions.0,
            regions.0 + regions.1
        );
        if cut == events {
            break;
        }
        cut = cut * 7 / 5;
    }
    Ok(())
}
