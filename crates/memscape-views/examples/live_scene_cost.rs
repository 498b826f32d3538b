//! A live recording's allocation-map scene per snapshot, continued from the last snapshot's
//! (`AllocScene::live` with its carry: in the same live frame only the new blocks laid out and
//! coloured, `alloc_map::scene_blocks`) against the same snapshot's scene with its block arrays
//! made whole in the same frame, sweep and site classification continued as before (what each
//! snapshot did before); prints the CPU time of each (both
//! threads) per snapshot and checks that the two are equal. BENCHMARKS.md, "Live view cadence", wave 12:
//!
//! ```sh
//! cargo run --release -p memscape-views --example live_scene_cost -- cc.msc
//! ```
//!
//! The recording is replayed into a trace builder and snapshotted at cuts 1.4× apart from
//! 100,000 events, as a live recording is (the reading thread's trace snapshot is not timed).

use memscape_trace::{TraceBuilder, TraceFormat};
use memscape_views::alloc_map::colors::ColorBy;
use memscape_views::alloc_map::scene::{AllocScene, SceneCarry};

#[path = "support/cpu.rs"]
mod cpu;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).ok_or("usage: live_scene_cost TRACE")?;
    let real = memscape_trace::load(std::path::Path::new(path))?;
    let events = real.event_order().len();
    let mut builder = TraceBuilder::replaying(&real, "replay");
    let (mut carry, mut replayed, mut cut) = (SceneCarry::default(), 0, 100_000usize);
    let (mut total_continued, mut total_whole) = (0.0, 0.0);
    println!("events\tblocks\tframe\tcontinued_cpu_ms\tarrays_whole_cpu_ms\tequal");
    loop {
        cut = cut.min(events);
        builder.replay(&real, replayed..cut);
        replayed = cut;
        let trace = builder.snapshot(TraceFormat::HeaptrackRaw, true);
        // Before: the same frame, regions, occupancy sweep and call-site classification
        // continued, the block arrays made whole.
        let fresh = SceneCarry {
            frame: carry.frame.clone(),
            sweep: carry.sweep.clone(),
            site_rules: carry.site_rules.clone(),
            blocks: None,
            regions: carry.regions.clone(),
        };
        let started = cpu::cpu_ms("/proc/self/stat");
        let (scene, next) = AllocScene::live(&trace, ColorBy::Site, carry, true);
        let continued_ms = cpu::cpu_ms("/proc/self/stat") - started;
        carry = next;
        let started = cpu::cpu_ms("/proc/self/stat");
        let (whole, _) = AllocScene::live(&trace, ColorBy::Site, fresh, true);
        let whole_ms = cpu::cpu_ms("/proc/self/stat") - started;
        let equal = scene.blocks == whole.blocks
            && scene.times_events == whole.times_events
            && scene.times_wall == whole.times_wall
            && scene.top_free_sites == whole.top_free_sites;
        let layout = scene.live_frame.as_ref().map_or(0, |f| f.layout);
        total_continued += continued_ms;
        total_whole += whole_ms;
        println!(
            "{cut}\t{}\t{layout}\t{continued_ms:.0}\t{whole_ms:.0}\t{equal}",
            trace.blocks.len()
        );
        if !equal {
            return Err(format!("the continued scene differs at {cut} events").into());
        }
        if cut == events {
            break;
        }
        cut = cut * 7 / 5;
    }
    println!("total: continued {total_continued:.0} ms, arrays made whole {total_whole:.0} ms");
    Ok(())
}
