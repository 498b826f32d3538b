//! Per-time-point heap-tree building on a synthetic 5 M-event trace (2.5 M allocations, 2.5 M
//! frees, 16 threads, 2,000 call sites under 50 callers), built through memscape-trace's public
//! `TraceBuilder`. Target: < 50 ms per time point.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use memscape_heap::synthetic::synthetic_trace;
use memscape_heap::trace_tree::{GroupKey, TraceHeap};
use memscape_heap::view::{PruneOptions, StableOrder, build_view};
use memscape_heap::{Metric, Sizes, sunburst};
use memscape_trace::Trace;

const EVENTS: u64 = 5_000_000;

fn synthetic() -> Trace {
    synthetic_trace(EVENTS)
}

fn bench(c: &mut Criterion) {
    let trace = synthetic();
    assert_eq!(trace.event_count(), EVENTS);
    let keys = [GroupKey::Thread, GroupKey::Site, GroupKey::Size];
    let mut group = c.benchmark_group("heap_5M_events");
    group.sample_size(10);
    group.bench_function("index_build_thread_site_size", |bch| {
        bch.iter(|| black_box(TraceHeap::new(&trace, &keys).trie().len()));
    });
    let mut heap = TraceHeap::new(&trace, &keys);
    let mut sizes = Sizes::default();
    // Random jumps across the whole trace (the slider dragged anywhere).
    let mut rng = 12345u64;
    group.bench_function("time_point_random_jump", |bch| {
        bch.iter(|| {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let at = (rng >> 11) % (EVENTS + 1);
            heap.sizes_into(at, &mut sizes);
            black_box(sizes.bytes(0))
        });
    });
    // Stepping through 100 evenly spaced time points (the play button).
    let points = heap.even_points(100);
    let mut i = 0usize;
    group.bench_function("time_point_step_of_100", |bch| {
        bch.iter(|| {
            i = (i + 1) % points.len();
            heap.sizes_into(points[i], &mut sizes);
            black_box(sizes.bytes(0))
        });
    });
    // Tree + pruning + stable order + sunburst geometry at a random time point.
    let last = heap.sizes_at(EVENTS);
    let order = StableOrder::new(heap.trie(), &last, None, Metric::Bytes);
    group.bench_function("time_point_to_sunburst", |bch| {
        bch.iter(|| {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let at = (rng >> 11) % (EVENTS + 1);
            heap.sizes_into(at, &mut sizes);
            let view = build_view(heap.trie(), &sizes, &order, 0, &PruneOptions::default());
            black_box(sunburst(&view, Metric::Bytes, 2).shapes.len())
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
