//! A synthetic allocation trace for benchmarks and demos, built through memscape-trace's public
//! `TraceBuilder`: `events` events over 16 threads and 2,000 call sites under 50 callers, sizes
//! 16 B – 8 KiB in powers of two, slots of 200,000 addresses alternately allocated and freed in
//! a pseudo-random (deterministic) order, so about half of the events are frees.

use memscape_trace::model::Frame;
use memscape_trace::{Trace, TraceBuilder, TraceFormat};

const SLOTS: u64 = 200_000;

/// The synthetic trace with `events` events.
pub fn synthetic_trace(events: u64) -> Trace {
    let mut b = TraceBuilder::with_event_times("synthetic");
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
    let mut time = 0u64;
    for event in 0..events {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let r = rng;
        let slot = r % SLOTS;
        let address = 0x1000_0000 + slot * 4096;
        time += 7;
        if live[slot as usize] {
            b.free(event, time, address);
            live[slot as usize] = false;
        } else {
            let size = 16 << ((r >> 20) % 10);
            let site = sites[((r >> 32) % 2000) as usize];
            let thread = threads[((r >> 48) % 16) as usize];
            b.alloc(event, time, address, size, 0, thread, site);
            live[slot as usize] = true;
        }
    }
    b.finish(TraceFormat::Csv, true)
}
