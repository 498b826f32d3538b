//! Conversion of a recording into a trace: 200,000 malloc/free pairs over 8 threads with 64
//! distinct 12-frame stacks (synthetic, so the bench needs neither gcc nor the shim).

use std::collections::HashMap;

use criterion::{Criterion, criterion_group, criterion_main};
use memscape_record::{RawEvent, RawProcess, convert_raw};

const KIND_ALLOC: u8 = 1;
const KIND_FREE: u8 = 2;

fn synthetic(pairs: u64) -> RawProcess {
    let mut events = Vec::with_capacity(pairs as usize * 2);
    let mut stacks = HashMap::new();
    for id in 1..=64u32 {
        stacks.insert(
            id,
            (0..12)
                .map(|f| 0x40_0000 + u64::from(id) * 0x100 + f * 8)
                .collect(),
        );
    }
    for i in 0..pairs {
        let address = 0x1000_0000 + (i % 4096) * 64;
        let event = |seq, kind| RawEvent {
            seq,
            time_ns: 1_000 + seq * 50,
            address,
            size: 16 + i % 200,
            usable: 24 + i % 200,
            tid: 100 + (i % 8) as u32,
            stack: 1 + (i % 64) as u32,
            kind,
            function: 1,
        };
        events.push(event(2 * i, KIND_ALLOC));
        events.push(event(2 * i + 1, KIND_FREE));
    }
    RawProcess {
        pid: 100,
        ppid: 1,
        stack_depth: 64,
        start_ns: 1_000,
        page_size: 4096,
        events,
        stacks,
        ..RawProcess::default()
    }
}

fn bench(c: &mut Criterion) {
    let raw = synthetic(200_000);
    let mut group = c.benchmark_group("record");
    group.sample_size(10);
    group.bench_function("convert_raw 400k events", |b| {
        b.iter(|| convert_raw("bench.msr", &raw))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
