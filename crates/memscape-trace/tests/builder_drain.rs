//! `TraceBuilder::drain` into a `SegmentWriter` (what `memscape record` does while the program
//! runs): the file reads back as the trace the builder gives without draining, whatever the
//! events (several processes, reallocs, frees of unknown pointers, double frees, allocations
//! over live blocks, mappings, pools, free sites) and wherever the drains fall; and
//! `TraceBuilder::cut_kept` (a live view's merge, which keeps its blocks for the snapshots)
//! writes the same file byte for byte, its whole trace rounded as stored equal to the file's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memscape_trace::msc::{MscOptions, SegmentWriter, round_times_as_stored, to_msc_bytes_with};
use memscape_trace::process::{Pool, Process};
use memscape_trace::{Trace, TraceBuilder, TraceFormat, from_msc_bytes};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Alloc { slot: u8, size: u16, usable: bool },
    Free { slot: u8 },
    Realloc { slot: u8, to: u8, size: u16 },
    Mmap { slot: u8 },
    Munmap { slot: u8 },
    PoolAlloc { slot: u8 },
    PoolFree { slot: u8 },
    Process(u8),
    Gap(u16),
    Drain,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u8..24, 1u16..5000, any::<bool>()).prop_map(|(slot, size, usable)| Op::Alloc { slot, size, usable }),
        5 => (0u8..26).prop_map(|slot| Op::Free { slot }),
        2 => (0u8..24, 0u8..24, 0u16..3000).prop_map(|(slot, to, size)| Op::Realloc { slot, to, size }),
        1 => (0u8..4).prop_map(|slot| Op::Mmap { slot }),
        1 => (0u8..5).prop_map(|slot| Op::Munmap { slot }),
        1 => (0u8..6).prop_map(|slot| Op::PoolAlloc { slot }),
        1 => (0u8..7).prop_map(|slot| Op::PoolFree { slot }),
        1 => (0u8..3).prop_map(Op::Process),
        2 => (0u16..300).prop_map(Op::Gap),
        2 => Just(Op::Drain),
    ]
}

/// Runs `ops` into a builder; `drain(builder)` is called at each `Drain`.
fn build(ops: &[Op], drain: impl FnMut(&mut TraceBuilder)) -> TraceBuilder {
    build_into(TraceBuilder::with_event_times("t"), ops, drain)
}

/// [`build`] into `b` (a builder set up beforehand).
fn build_into(
    mut b: TraceBuilder,
    ops: &[Op],
    mut drain: impl FnMut(&mut TraceBuilder),
) -> TraceBuilder {
    for pid in 0..3u32 {
        b.process(Process {
            pid: 100 + pid,
            ..Process::default()
        });
    }
    b.set_process(0);
    let pool = b.pool(Pool {
        name: "bins".into(),
        start: 0x9000_0000,
        end: 0x9001_0000,
        block_size: 64,
        ..Pool::default()
    });
    let mut time = 1_000u64;
    for (line, op) in ops.iter().enumerate() {
        let line = line as u64 + 1;
        let addr = |slot: u8| 0x1000 + u64::from(slot) * 0x100;
        let thread = b.thread("main");
        let site = b.call_tree.child(
            0,
            memscape_trace::Frame {
                ip: 0x400 + line % 5,
                ..Default::default()
            },
        );
        time += 7;
        match *op {
            Op::Alloc { slot, size, usable } => {
                let u = if usable {
                    u64::from(size) + 8
                } else {
                    memscape_trace::model::USABLE_UNKNOWN
                };
                b.alloc(line, time, addr(slot), u64::from(size), u, thread, site);
            }
            Op::Free { slot } => {
                b.free_from(line, time, addr(slot), thread, site);
            }
            Op::Realloc { slot, to, size } => {
                b.realloc(
                    line,
                    time,
                    addr(slot),
                    addr(to),
                    u64::from(size),
                    0,
                    thread,
                    site,
                );
            }
            Op::Mmap { slot } => {
                b.mmap(
                    line,
                    time,
                    0x7000_0000 + u64::from(slot) * 0x10000,
                    0x10000,
                    thread,
                    site,
                );
            }
            Op::Munmap { slot } => {
                b.munmap(line, time, 0x7000_0000 + u64::from(slot) * 0x10000, 0x20000);
            }
            Op::PoolAlloc { slot } => {
                b.pool_alloc(
                    line,
                    time,
                    pool,
                    0x9000_0000 + u64::from(slot) * 64,
                    40,
                    thread,
                    site,
                );
            }
            Op::PoolFree { slot } => {
                b.pool_free(line, time, 0x9000_0000 + u64::from(slot) * 64, thread, site);
            }
            Op::Process(p) => b.set_process(u32::from(p)),
            // Times that go back are clamped (and warned about).
            Op::Gap(back) => time = time.saturating_sub(u64::from(back)),
            Op::Drain => drain(&mut b),
        }
    }
    b
}

fn assert_same(a: &Trace, b: &Trace) {
    assert_eq!(a.blocks, b.blocks);
    assert_eq!(a.call_tree.parent, b.call_tree.parent);
    assert_eq!(a.call_tree.frames, b.call_tree.frames);
    assert_eq!(a.strings, b.strings);
    assert_eq!(a.threads, b.threads);
    assert_eq!(a.thread_process, b.thread_process);
    assert_eq!(a.processes, b.processes);
    assert_eq!(a.pools, b.pools);
    assert_eq!(a.warnings, b.warnings);
    let (mut ma, mut mb) = (a.meta.clone(), b.meta.clone());
    ma.source.clear();
    mb.source.clear();
    assert_eq!(ma, mb);
    assert_eq!(a.event_order(), b.event_order());
}

fn drained_file(ops: &[Op], shift: u8) -> Vec<u8> {
    let options = MscOptions {
        time_resolution_log2: shift,
        ..Default::default()
    };
    let mut writer = SegmentWriter::new(Vec::new(), &options).unwrap();
    let mut b = build(ops, |b| {
        let d = b.drain(false).unwrap();
        writer.push(&d.blocks(), Some(&d.events())).unwrap();
    });
    let last = b.drain(true).unwrap();
    writer.push(&last.blocks(), Some(&last.events())).unwrap();
    assert_eq!(b.held_blocks(), 0);
    let rest = b.finish(TraceFormat::Msc, true);
    assert_eq!(rest.blocks.len(), 0);
    writer.finish(&rest).unwrap()
}

/// The file of [`drained_file`] written from a builder that keeps its blocks (segments cut
/// by `cut_kept` at each `Drain`, a snapshot taken there as a live view does), and the
/// builder's whole trace.
fn kept_file(ops: &[Op], shift: u8) -> (Vec<u8>, Trace) {
    let options = MscOptions {
        time_resolution_log2: shift,
        ..Default::default()
    };
    let mut writer = SegmentWriter::new(Vec::new(), &options).unwrap();
    let mut keeping = TraceBuilder::with_event_times("t");
    keeping.keep_cuts();
    let mut snapshots = Vec::new();
    let mut b = build_into(keeping, ops, |b| {
        let d = b.cut_kept(false).unwrap();
        writer.push(&d.blocks(), Some(&d.events())).unwrap();
        snapshots.push(b.snapshot(TraceFormat::Msc, true));
    });
    let last = b.cut_kept(true).unwrap();
    writer.push(&last.blocks(), Some(&last.events())).unwrap();
    assert_eq!(b.unwritten_blocks(), 0);
    let whole = b.finish(TraceFormat::Msc, true);
    (writer.finish(&whole).unwrap(), whole)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn kept_cuts_write_the_drained_file_and_keep_the_trace_it_loads_as(
        ops in proptest::collection::vec(op(), 1..400),
        shift in prop_oneof![Just(0u8), Just(4u8)],
    ) {
        let drained = drained_file(&ops, shift);
        let (kept, mut whole) = kept_file(&ops, shift);
        prop_assert!(drained == kept, "the kept cuts' file differs from the drained one");
        let loaded = from_msc_bytes("v6", &kept).unwrap();
        let options = MscOptions { time_resolution_log2: shift, ..Default::default() };
        round_times_as_stored(&mut whole, &options);
        assert_same(&loaded, &whole);
    }

    #[test]
    fn drained_segments_read_back_as_the_undrained_trace(
        ops in proptest::collection::vec(op(), 1..400),
        shift in prop_oneof![Just(0u8), Just(4u8)],
    ) {
        let whole = build(&ops, |_| {}).finish(TraceFormat::Msc, true);
        let options = MscOptions { time_resolution_log2: shift, ..Default::default() };
        let v5 = to_msc_bytes_with(&whole, &options, &mut |_| {}).unwrap();
        let expected = from_msc_bytes("v5", &v5).unwrap();
        let streamed = from_msc_bytes("v6", &drained_file(&ops, shift)).unwrap();
        assert_same(&expected, &streamed);
    }
}

/// Blocks that live across drains come back in allocation order with their frees, and the
/// builder holds only the live ones after a drain.
#[test]
fn live_blocks_are_carried_across_drains() {
    let mut ops = Vec::new();
    for i in 0..20u8 {
        ops.push(Op::Alloc {
            slot: i,
            size: 100 + u16::from(i),
            usable: false,
        });
        if i % 2 == 0 {
            ops.push(Op::Free { slot: i });
        }
        if i % 5 == 4 {
            ops.push(Op::Drain);
        }
    }
    for i in 0..20u8 {
        ops.push(Op::Free { slot: i });
    }
    let mut held = Vec::new();
    build(&ops, |b| {
        b.drain(false).unwrap();
        held.push(b.held_blocks());
    });
    // Odd slots stay live: 3, 5, 8, 10 after the four drains.
    assert_eq!(held, [2, 5, 7, 10]);
    let t = from_msc_bytes("v6", &drained_file(&ops, 0)).unwrap();
    assert_eq!(t.blocks.len(), 20);
    assert!(t.blocks.alloc_event.is_sorted());
    let sizes: Vec<u64> = t.blocks.requested_size.to_vec();
    assert_eq!(sizes, (100..120).collect::<Vec<u64>>());
    assert!(t.blocks.is_consistent());
}
