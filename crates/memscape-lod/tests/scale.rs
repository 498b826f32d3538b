//! The paper's guarantee at scale (issue 25): on a generated trace of at least 100 M events,
//! every isolated 1-byte block stays visible at α = 0.1 at every zoom level, from the whole
//! trace down to 64 events × 64 bytes, drawn from the level-of-detail index; and the index's
//! pictures keep the issue's accuracy rule against exact accumulation of every block (mean
//! error ≤ 1/255, 99.9 % of pixels within 8/255) on views from its levels, α = 0.1 / 0.5 / 1,
//! cushions on and off. Too big for CI
//! (7.3 GB of trace and 2.4 GB of index at 100 M events): ignored, run by hand and recorded in
//! BENCHMARKS.md:
//!
//! ```sh
//! MEMSCAPE_LOD_SCALE_TRACE=/tmp/big.msc cargo test --release -p memscape-lod --test scale -- --ignored
//! ```
//!
//! `MEMSCAPE_LOD_SCALE_TRACE` names a mappable trace from `synth-trace` (generated there when
//! missing, with `MEMSCAPE_LOD_SCALE_EVENTS` events, default 100 M); its index is built beside
//! it when missing. `faithful.rs` runs the same check on 1.5 M events in CI.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use memscape_lod::eq1::Cushion;
use memscape_lod::trace_source::lod_block;
use memscape_lod::{FramePath, LodTrace, LodView};

#[test]
#[ignore = "needs ~10 GB of disk and minutes: run by hand (see the file's header)"]
fn isolated_bytes_stay_visible_at_low_alpha_at_every_zoom_on_a_huge_trace() {
    let trace: PathBuf = std::env::var_os("MEMSCAPE_LOD_SCALE_TRACE")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("memscape-lod-scale.msc"));
    let events: u64 = std::env::var("MEMSCAPE_LOD_SCALE_EVENTS")
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(100_000_000);
    if !trace.is_file() {
        memscape_lod::synth::write_mappable(
            memscape_lod::synth::SynthParams::new(events, 42),
            &trace,
            &mut |_| {},
        )
        .expect("generate");
    }
    let (t, _) = LodTrace::open(
        &trace,
        "thread",
        false,
        &mut |_, _| {},
        &AtomicBool::new(false),
    )
    .expect("open");
    eprintln!(
        "{}: {} events, {} blocks",
        trace.display(),
        t.meta().source.events,
        t.meta().blocks
    );
    let cols = t.file.columns();
    let axis = &t.meta().axis;
    let color = |th: u32, _: u32, _: u64, _: u64| (memscape_lod::source::palette_color(th), 0.0);
    let isolated: Vec<_> = (0..cols.len())
        .filter(|&i| cols.size[i] == 1)
        .map(|i| lod_block(&cols, axis, &color, i))
        .collect();
    assert!(isolated.len() >= 8, "{} isolated bytes", isolated.len());
    let [te, ye] = t.extent();
    let (w, h) = (320u32, 180u32);
    // Every view is checked and every miss reported at the end, not only the first: a run
    // takes many minutes, and which views miss is what the next change needs to know.
    let mut misses: Vec<String> = Vec::new();
    let (mut frames, mut from_levels) = (0, 0);
    for b in isolated.iter().step_by((isolated.len() / 8).max(1)) {
        for (zoom, v) in common::zoom_ladder(b, [te, ye], w, h) {
            let (sums, stats) = t.sums(&v, FramePath::Lod);
            frames += 1;
            from_levels += usize::from(stats.level.is_some());
            let img = sums.resolve(&v);
            if !common::visible(&v, &img, b) {
                misses.push(format!(
                    "1-byte block at t {} y {} invisible at zoom {zoom} (level {:?})",
                    b.t0, b.y, stats.level
                ));
            }
        }
    }
    eprintln!(
        "{frames} frames, {from_levels} from levels, {} isolated bytes invisible",
        misses.len()
    );
    assert!(from_levels > 0, "no view used a level");

    // The accuracy rule on views drawn from levels, against every block accumulated exactly.
    // The whole view at 640×360 too: the last one to miss at 50 M events (a row edge next to
    // a line of reused addresses, wave 29; `CellRec::spot_lines`, wave 31).
    let mut levels_checked = 0;
    for ((t0, t1, a0, a1), (w, h)) in [
        ((0, te, 0, ye), (w, h)),
        ((te / 3, te / 3 + te / 8, 0, ye), (w, h)),
        ((0, te, ye / 5, ye / 5 + ye / 8), (w, h)),
        ((0, te, 0, ye), (640, 360)),
    ] {
        for (alpha, cushion) in [
            (0.1f32, Cushion::Parabolic),
            (0.5, Cushion::Parabolic),
            (1.0, Cushion::None),
        ] {
            let mut v = LodView::fit(t0, t1, a0, a1, w, h);
            v.alpha = alpha;
            v.cushion = cushion;
            let (lod, stats) = t.frame(&v, FramePath::Lod);
            if stats.level.is_none() {
                continue;
            }
            levels_checked += 1;
            let (exact, _) = t.frame(&v, FramePath::Exact);
            let (mut sum, mut within) = (0u64, 0usize);
            for (p, q) in exact.iter().zip(&lod) {
                let d: Vec<u8> = (0..3).map(|k| p[k].abs_diff(q[k])).collect();
                sum += d.iter().map(|&x| u64::from(x)).sum::<u64>();
                within += usize::from(d.iter().all(|&x| x <= 8));
            }
            let mean = sum as f64 / (exact.len() * 3) as f64;
            let share = within as f64 / exact.len() as f64;
            let figures = format!(
                "{w}×{h} [{t0},{t1})×[{a0},{a1}) α {alpha} {cushion:?}: level {:?}, mean {mean:.3}/255, {:.3} % within 8/255 ({} pixels over)",
                stats.level,
                share * 100.0,
                exact.len() - within
            );
            eprintln!("{figures}");
            if mean > 1.0 || share < 0.999 {
                misses.push(figures);
            }
        }
    }
    assert!(levels_checked > 0, "no accuracy view used a level");
    assert!(
        misses.is_empty(),
        "{} misses:\n{}",
        misses.len(),
        misses.join("\n")
    );
}
