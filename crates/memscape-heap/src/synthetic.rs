//! A synthetic allocation trace for benchmarks and demos, built through memscape-trace's public
//! `TraceBuilder`: `events` events over 16 threads and 2,000 call sites under 50 callers, sizes
//! 16 B – 8 KiB in powers of two, slots of 200,000 addresses alternately allocated and freed in
//! a pseudo-random (deterministic) order, so about half of the events are frees.
//!
//! The events also come one at a time ([`SyntheticEvents`], over the threads and sites of
//! [`synthetic_skeleton`]), so that a trace too large to hold (1 B events: ≈ 43 GB as a
//! [`Trace`]) can be written as it is generated (memscape-engine's `synthetic` dataset writer).

use memscape_trace::model::Frame;
use memscape_trace::{Trace, TraceBuilder, TraceFormat};

const SLOTS: u64 = 200_000;
/// Nanoseconds between two events (event `e` is at `(e + 1) × EVENT_NS`).
const EVENT_NS: u64 = 7;
/// [`SyntheticEvents`]'s marker of a slot holding no live block.
const NO_BLOCK: u64 = u64::MAX;

/// The builder the synthetic trace starts from (its 16 threads and 2,000 call sites, no
/// events), with the thread ids and the call-site nodes its events name.
pub struct SyntheticSkeleton {
    pub builder: TraceBuilder,
    pub threads: Vec<u32>,
    pub sites: Vec<u32>,
}

/// The synthetic trace's threads and call sites, before any event.
pub fn synthetic_skeleton() -> SyntheticSkeleton {
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
    SyntheticSkeleton {
        builder: b,
        threads,
        sites,
    }
}

/// What one synthetic event does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyntheticOp {
    /// A new block of `size` bytes by `thread` from call site `site` (ids of the skeleton).
    Alloc { size: u64, thread: u32, site: u32 },
    /// The free of the live block at the event's address: `block`, its index in allocation
    /// order (the builder's block index).
    Free { block: u64 },
}

/// One synthetic event: its index, time and address, and what it does there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyntheticEvent {
    pub event: u64,
    pub time_ns: u64,
    pub address: u64,
    pub op: SyntheticOp,
}

/// The events of the synthetic trace, in order, holding only the slots' live blocks.
pub struct SyntheticEvents {
    threads: Vec<u32>,
    sites: Vec<u32>,
    /// The live block of each slot, or [`NO_BLOCK`].
    live: Vec<u64>,
    rng: u64,
    next_event: u64,
    events: u64,
    blocks: u64,
}

impl SyntheticEvents {
    /// The first `events` events, over `skeleton`'s threads and sites.
    pub fn new(skeleton: &SyntheticSkeleton, events: u64) -> Self {
        Self {
            threads: skeleton.threads.clone(),
            sites: skeleton.sites.clone(),
            live: vec![NO_BLOCK; SLOTS as usize],
            rng: 0x2545_f491_4f6c_dd1du64,
            next_event: 0,
            events,
            blocks: 0,
        }
    }

    /// The time of the last of `events` events (0 without events): the trace's end.
    pub fn end_time_ns(events: u64) -> u64 {
        events * EVENT_NS
    }
}

impl Iterator for SyntheticEvents {
    type Item = SyntheticEvent;

    fn next(&mut self) -> Option<SyntheticEvent> {
        if self.next_event >= self.events {
            return None;
        }
        let event = self.next_event;
        self.next_event += 1;
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let r = self.rng;
        let slot = (r % SLOTS) as usize;
        let address = 0x1000_0000 + slot as u64 * 4096;
        let live = std::mem::replace(&mut self.live[slot], NO_BLOCK);
        let op = if live != NO_BLOCK {
            SyntheticOp::Free { block: live }
        } else {
            self.live[slot] = self.blocks;
            self.blocks += 1;
            SyntheticOp::Alloc {
                size: 16 << ((r >> 20) % 10),
                thread: self.threads[((r >> 48) % 16) as usize],
                site: self.sites[((r >> 32) % 2000) as usize],
            }
        };
        Some(SyntheticEvent {
            event,
            time_ns: (event + 1) * EVENT_NS,
            address,
            op,
        })
    }
}

/// The synthetic trace with `events` events.
pub fn synthetic_trace(events: u64) -> Trace {
    let skeleton = synthetic_skeleton();
    let mut stream = SyntheticEvents::new(&skeleton, events);
    let mut b = skeleton.builder;
    for e in &mut stream {
        match e.op {
            SyntheticOp::Alloc { size, thread, site } => {
                b.alloc(e.event, e.time_ns, e.address, size, 0, thread, site);
            }
            SyntheticOp::Free { .. } => {
                b.free(e.event, e.time_ns, e.address);
            }
        }
    }
    b.finish(TraceFormat::Csv, true)
}
