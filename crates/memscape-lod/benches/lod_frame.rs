//! Criterion: building the index of a generated trace, and a whole-trace frame from it
//! (level of detail) beside exact accumulation of every block on the same view.
//!
//! `cargo bench -p memscape-lod --bench lod_frame`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::AtomicBool;

use criterion::{Criterion, criterion_group, criterion_main};
use memscape_lod::resolve::accumulate;
use memscape_lod::sidecar::{self, Coloring};
use memscape_lod::source::palette_color;
use memscape_lod::synth::{SynthParams, trace};
use memscape_lod::trace_source::{TraceBlocks, TraceFile};
use memscape_lod::{BuildParams, LodIndex, LodView, PixelSums, exact};

fn color(t: u32, _s: u32, _z: u64, _l: u64) -> (u32, f32) {
    (palette_color(t), 0.0)
}

fn build(file: &TraceFile, dir: &std::path::Path) -> std::path::PathBuf {
    let tp = dir.join("trace");
    std::fs::write(&tp, b"stand-in").unwrap();
    let out = dir.join("trace.lod");
    sidecar::build(
        file,
        &tp,
        &out,
        Coloring {
            name: "thread",
            color: &color,
        },
        &BuildParams::default(),
        &mut |_, _| {},
        &AtomicBool::new(false),
    )
    .unwrap();
    out
}

fn benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let small = TraceFile::from_trace(trace(SynthParams::new(400_000, 2)));
    let mut g = c.benchmark_group("lod");
    g.sample_size(10);
    g.bench_function("build 400k events", |b| {
        b.iter(|| build(&small, dir.path()))
    });

    // 4 M events (2 M blocks): at 320×180 the whole view is drawn from a level.
    let file = TraceFile::from_trace(trace(SynthParams::new(4_000_000, 3)));
    let out = build(&file, dir.path());
    let index = LodIndex::open(&out).unwrap();
    let axis = index.meta.axis.clone();
    let source = TraceBlocks {
        columns: file.columns(),
        axis: &axis,
        color: &color,
        index: &index,
    };
    let (w, h) = (320, 180);
    let view = LodView::fit(0, index.meta.extent_t, 0, axis.extent, w, h);
    g.bench_function("whole frame 320x180, 2M blocks, lod", |b| {
        b.iter(|| {
            let mut sums = PixelSums::new(w, h);
            let st = accumulate(&index, &source, &view, &mut sums);
            assert!(st.level.is_some());
            sums.resolve(&view)
        })
    });
    let cols = file.columns();
    let all: Vec<_> = (0..cols.len())
        .map(|i| memscape_lod::trace_source::lod_block(&cols, &axis, &color, i))
        .collect();
    g.bench_function("whole frame 320x180, 2M blocks, exact", |b| {
        b.iter(|| exact::render_fast(&view, &all))
    });
    g.finish();
}

criterion_group!(lod, benches);
criterion_main!(lod);
