//! CPU time (not wall time) per heap-tree time point on the synthetic 5 M-event trace, read from
//! /proc/self/stat, so that the number means something on a loaded, shared machine where
//! criterion's wall times are inflated by waiting for a core. `cargo run --release --example
//! cpu_time [events]`.

use memscape_heap::synthetic::synthetic_trace;
use memscape_heap::trace_tree::{GroupKey, TraceHeap};
use memscape_heap::view::{PruneOptions, StableOrder, build_view};
use memscape_heap::{Metric, Sizes, sunburst};

/// user + system CPU seconds of this process (clock ticks of 10 ms).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // Fields after the command: state is index 0, utime 11, stime 12.
    (ticks(11) + ticks(12)) / 100.0
}

fn main() {
    let events = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5_000_000u64);
    let trace = synthetic_trace(events);
    let keys = [GroupKey::Thread, GroupKey::Site, GroupKey::Size];
    let t0 = cpu_seconds();
    let mut heap = TraceHeap::new(&trace, &keys);
    let t1 = cpu_seconds();
    println!(
        "{events} events, {} blocks, {} groups: index build {:.0} ms CPU",
        trace.blocks.len(),
        heap.trie().len(),
        (t1 - t0) * 1e3
    );
    let mut sizes = Sizes::default();
    let mut rng = 12345u64;
    let n = 200;
    let t0 = cpu_seconds();
    for _ in 0..n {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        heap.sizes_into((rng >> 11) % (events + 1), &mut sizes);
    }
    let t1 = cpu_seconds();
    println!(
        "random jump: {:.1} ms CPU per time point",
        (t1 - t0) * 1e3 / n as f64
    );
    let points = heap.even_points(100);
    let t0 = cpu_seconds();
    for _ in 0..3 {
        for &p in &points {
            heap.sizes_into(p, &mut sizes);
        }
    }
    let t1 = cpu_seconds();
    println!(
        "step of 100: {:.1} ms CPU per time point",
        (t1 - t0) * 1e3 / 300.0
    );
    let last = heap.sizes_at(events);
    let order = StableOrder::new(heap.trie(), &last, None, Metric::Bytes);
    let t0 = cpu_seconds();
    for _ in 0..n {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        heap.sizes_into((rng >> 11) % (events + 1), &mut sizes);
        let view = build_view(heap.trie(), &sizes, &order, 0, &PruneOptions::default());
        std::hint::black_box(sunburst(&view, Metric::Bytes, 2).shapes.len());
    }
    let t1 = cpu_seconds();
    println!(
        "random jump + prune + sunburst: {:.1} ms CPU per time point",
        (t1 - t0) * 1e3 / n as f64
    );
}
