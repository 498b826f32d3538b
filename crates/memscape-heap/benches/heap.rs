//! Per-time-point heap-tree building on a synthetic 5 M-event trace (2.5 M allocations, 2.5 M
//! frees, 16 threads, 2,000 call sites under 50 callers), built through memscape-trace's public
//! `TraceBuilder`. Target: < 50 ms per time point.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use memscape_heap::trace_tree::{GroupKey, TraceHeap};
use memscape_heap::view::{PruneOptions, StableOrder, build_view};
use memscape_heap::{Metric, Sizes, sunburst};
use memscape_trace::model::Frame;
use memscape_trace::{Trace, TraceBuilder, TraceFormat};

const EVENTS: u64 = 5_000_000;
const SLOTS: u64 = 200_000;

fn synthetic() -> Trace {
    let mut b = TraceBuilder::with_event_times("synthetic-5M");
    let threads: Vec<u32> = (0..16).map(|t| b.thread(&format!("worker-{t}"))).collect();
    let mut sites = Vec::new();
    for s in 0..2000u64 {
        let caller = b.strings.intern(&format!("caller_{}", s % 50));
        let function = b.strings.intern(&format!("alloc_site_{s}"));
        let parent = b.call_tree.child(
            0,
            Frame {
                ip: 0x1000 + s % 50,
                function: caller,
                ..Frame::default()
            },
        );
        sites.push(b.call_tree.child(
            parent,
            Frame {
                ip: 0x10_0000 + s,
                function,
                ..Frame::default()
            },
        ));
    }
    let mut live = vec![false; SLOTS as usize];
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut events = 0u64;
    let mut time = 0u64;
    while events < EVENTS {
        let r = next();
        let slot = r % SLOTS;
        let address = 0x1000_0000 + slot * 4096;
        time += 7;
        if live[slot as usize] {
            b.free(events, time, address);
            live[slot as usize] = false;
        } else {
            let size = 16 << ((r >> 20) % 10);
            let site = sites[((r >> 32) % 2000) as usize];
            let thread = threads[((r >> 48) % 16) as usize];
            b.alloc(events, time, address, size, 0, thread, site);
            live[slot as usize] = true;
        }
        events += 1;
    }
    b.finish(TraceFormat::Csv, true)
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
