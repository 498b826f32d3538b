//! A live recording's allocation-map worker per snapshot (`MapBuilder::following(previous bar)
//! .build`: bins, colours and the occupancy bar, as the GUI pane's `memscape-allocmap` thread
//! makes them for each snapshot), its wall time per snapshot. BENCHMARKS.md, "Live view
//! cadence", wave 15:
//!
//! ```sh
//! cargo build -p memscape-views --example live_map_worker_cost
//! target/debug/examples/live_map_worker_cost cc.msc
//! ```
//!
//! The recording is replayed into a trace builder and snapshotted at cuts 1.4× apart from
//! 100,000 events, as a live recording is (the trace snapshot and the scene are not timed).

use std::sync::Arc;
use std::time::Instant;

use memscape_trace::{TraceBuilder, TraceFormat};
use memscape_views::alloc_map::bins::BinBy;
use memscape_views::alloc_map::colors::ColorBy;
use memscape_views::alloc_map::compose::{MapBuilder, Wanted};
use memscape_views::alloc_map::scene::{AllocScene, SceneCarry, TimeAxis};

#[path = "support/cpu.rs"]
mod cpu;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).ok_or("usage: live_map_worker_cost TRACE")?;
    let real = memscape_trace::load(std::path::Path::new(path))?;
    let events = real.event_order().len();
    let mut builder = TraceBuilder::replaying(&real, "replay");
    let (mut carry, mut replayed, mut cut) = (SceneCarry::default(), 0, 100_000usize);
    let mut live_bar = None;
    let (mut total, mut total_cpu) = (0.0, 0.0);
    println!("events\tblocks\tscene_ms\tworker_ms\tworker_cpu_ms");
    loop {
        cut = cut.min(events);
        builder.replay(&real, replayed..cut);
        replayed = cut;
        let trace = builder.snapshot(TraceFormat::HeaptrackRaw, true);
        let started = Instant::now();
        let (scene, next) = AllocScene::live(&trace, ColorBy::default_for(&trace), carry, true);
        let scene_ms = started.elapsed().as_secs_f64() * 1e3;
        carry = next;
        let started = Instant::now();
        let cpu = cpu::cpu_ms("/proc/thread-self/stat");
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
        let ms = started.elapsed().as_secs_f64() * 1e3;
        let cpu = cpu::cpu_ms("/proc/thread-self/stat") - cpu;
        total_cpu += cpu;
        live_bar = built.live_bar.clone();
        let shared = Arc::ptr_eq(&built.blocks, &scene.blocks);
        total += ms;
        println!(
            "{cut}\t{}\t{scene_ms:.0}\t{ms:.0}\t{cpu:.0}\tshared_blocks={shared}",
            trace.blocks.len()
        );
        if cut == events {
            break;
        }
        cut = cut * 7 / 5;
    }
    println!("total worker: {total:.0} ms wall, {total_cpu:.0} ms CPU");
    Ok(())
}
