//! Where the GUI's first map of a trace dataset waits: the engine's plan (address axis, counts)
//! and the whole plane's level at the GUI's first view (640×480) with the size classes, as
//! `src/app/engine_map.rs` asks them, each stage timed (`memscape_engine::lod` debug lines).
//!
//! ```text
//! lod-first-level DATASET [PARTITIONS] [W H]
//! lod-first-level DATASET all     # every level, kept where the GUI keeps the engine's index
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use memscape_engine::Engine;
use memscape_engine::lod_index::lod_level_for;
use memscape_lod::{BuildParams, LodView, SourceId};

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "memscape_engine=debug".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = std::path::PathBuf::from(args.first().expect("DATASET"));
    if args.get(1).map(String::as_str) == Some("all") {
        return every_level(&dir);
    }
    let partitions: usize = args.get(1).map_or(0, |p| p.parse().expect("PARTITIONS"));
    let w: u32 = args.get(2).map_or(640, |v| v.parse().expect("W"));
    let h: u32 = args.get(3).map_or(480, |v| v.parse().expect("H"));
    let start = Instant::now();
    // The GUI's engine: bounded to 4 GiB.
    let engine = Engine::embedded_bounded(partitions, 4 << 30).unwrap();
    let dataset = engine.open(&dir).unwrap();
    let mut t = Instant::now();
    let plan = engine
        .lod_plan(&dataset, None, &BuildParams::default())
        .unwrap();
    println!(
        "plan {:.2} s ({} levels)",
        t.elapsed().as_secs_f64(),
        plan.levels.len()
    );
    let whole = LodView::fit(0, plan.extent_t, 0, plan.axis.extent, w, h);
    let level = lod_level_for(&plan, whole.pixel_size()).expect("a level for the whole plane");
    let spec = plan.levels[level];
    println!("level 2^{} events × 2^{} bytes", spec.log_tau, spec.log_sig);
    t = Instant::now();
    let out = tempfile::tempdir().unwrap();
    let source = SourceId::of_file(
        &dir.join(memscape_parquet::MANIFEST),
        plan.extent_t.saturating_sub(1),
        plan.blocks,
    );
    let meta = engine
        .lod_index(
            &dataset,
            None,
            &plan,
            Some(&[level]),
            source,
            &out.path().join("first.lod"),
        )
        .unwrap();
    println!(
        "first level and classes {:.2} s ({} classes)",
        t.elapsed().as_secs_f64(),
        meta.classes.len()
    );
    println!("total {:.2}", start.elapsed().as_secs_f64());
}

/// Every level and the size classes, written where the GUI keeps the engine's index of `dir`
/// (`memscape_lod::sidecar::locations` of its manifest, as `src/app/engine_map.rs` names it),
/// so that the GUI's next open of `dir` draws from it at once.
fn every_level(dir: &std::path::Path) {
    let start = Instant::now();
    let engine = Engine::embedded_bounded(0, 4 << 30).unwrap();
    let dataset = engine.open(dir).unwrap();
    let plan = engine
        .lod_plan(&dataset, None, &BuildParams::default())
        .unwrap();
    let manifest = dir.join(memscape_parquet::MANIFEST);
    let kept = memscape_lod::sidecar::locations(&manifest, "engine.thread.lod")
        .into_iter()
        .nth(1)
        .expect("a cache directory");
    std::fs::create_dir_all(kept.parent().unwrap()).unwrap();
    let source = SourceId::of_file(&manifest, plan.extent_t.saturating_sub(1), plan.blocks);
    let last = std::cell::Cell::new(-1i64);
    engine
        .lod_index_with(&dataset, None, &plan, None, source, &kept, &|f, stage| {
            let pct = (f * 100.0) as i64;
            if pct != last.get() {
                last.set(pct);
                println!("{:7.1} s {pct:3} % {stage}", start.elapsed().as_secs_f64());
            }
        })
        .unwrap();
    println!(
        "every level ({}) in {:.1} s: {}",
        plan.levels.len(),
        start.elapsed().as_secs_f64(),
        kept.display()
    );
}
