//! `.msc` files with raw (mappable) block columns: `read_msc` maps them and hands the columns
//! to the views in place once checked; the same bytes read from memory decode by copying;
//! forged values are repaired, never handed out; mutated files are a clear error or a
//! consistent trace.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::data;
use memscape_trace::model::BlockColumn;
use memscape_trace::msc::{MscOptions, to_msc_bytes_with};
use memscape_trace::{LoadError, Trace, TraceFormat, from_msc_bytes, load, read_msc};
use proptest::prelude::*;

fn mappable() -> MscOptions {
    MscOptions {
        mappable: true,
        ..Default::default()
    }
}

fn assert_same(a: &Trace, b: &Trace) {
    assert_eq!(a.blocks, b.blocks);
    assert_eq!(a.call_tree.parent, b.call_tree.parent);
    assert_eq!(a.call_tree.frames, b.call_tree.frames);
    assert_eq!(a.strings, b.strings);
    assert_eq!(a.threads, b.threads);
    assert_eq!(a.warnings, b.warnings);
    let (mut ma, mut mb) = (a.meta.clone(), b.meta.clone());
    ma.format = TraceFormat::Msc;
    mb.format = TraceFormat::Msc;
    ma.source.clear();
    mb.source.clear();
    assert_eq!(ma, mb);
}

fn columns_mapped(t: &Trace) -> usize {
    let b = &t.blocks;
    [
        b.address.is_mapped(),
        b.size.is_mapped(),
        b.requested_size.is_mapped(),
        b.usable_size.is_mapped(),
        b.alloc_time_ns.is_mapped(),
        b.free_time_ns.is_mapped(),
        b.alloc_event.is_mapped(),
        b.free_event.is_mapped(),
        b.thread.is_mapped(),
        b.site.is_mapped(),
        b.flags.is_mapped(),
    ]
    .iter()
    .filter(|&&m| m)
    .count()
}

/// Offset of section `id`'s payload.
fn payload_offset(b: &[u8], id: u32) -> usize {
    let n = u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
    (0..n)
        .map(|e| 16 + 40 * e)
        .find(|&at| u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) == id)
        .map(|at| u64::from_le_bytes(b[at + 16..at + 24].try_into().unwrap()) as usize)
        .unwrap()
}

#[test]
fn mapped_columns_are_the_trace_in_place() {
    let dir = tempfile::tempdir().unwrap();
    for text in [
        "heaptrack/heaptrack.david.18594.gz",
        "heaptrack/test_sysroot.raw",
    ] {
        let fresh = load(&data(text)).unwrap();
        let bytes = to_msc_bytes_with(&fresh, &mappable(), &mut |_| {}).unwrap();
        let path = dir.path().join("m.msc");
        std::fs::write(&path, &bytes).unwrap();
        let mapped = read_msc(&path).unwrap();
        mapped.blocks.prefetch(&BlockColumn::ALL);
        assert_eq!(columns_mapped(&mapped), 11, "{text}");
        assert_same(&mapped, &fresh);
        // The report reads the same from the mapping.
        let report = |t: &Trace| {
            let mut r = memscape_trace::info::info(t, &Default::default());
            r.format = "";
            r.source.clear();
            serde_json::to_string(&r).unwrap()
        };
        assert_eq!(report(&mapped), report(&fresh));
        // From memory the raw columns are copied (no mapping), with the same values.
        let copied = from_msc_bytes("m.msc", &bytes).unwrap();
        copied.blocks.prefetch(&BlockColumn::ALL);
        assert_eq!(columns_mapped(&copied), 0);
        assert_same(&copied, &fresh);
        // A clone shares the mapping; a mutable column becomes a copy of its own.
        let mut clone = mapped.clone();
        assert_eq!(columns_mapped(&clone), 11);
        if !clone.blocks.is_empty() {
            clone.blocks.size[0] += 1;
            assert!(!clone.blocks.size.is_mapped());
            assert_eq!(clone.blocks.size[0], mapped.blocks.size[0] + 1);
        }
    }
}

/// Raw sections carry no checksum (checking one would read the whole column at load): forged
/// values that would break the views are repaired on first use instead, never handed out.
#[test]
fn forged_raw_values_are_repaired_not_mapped() {
    let fresh = load(&data("heaptrack/heaptrack.david.18594.gz")).unwrap();
    let n = fresh.blocks.len();
    assert!(n > 100);
    let mut bytes = to_msc_bytes_with(&fresh, &mappable(), &mut |_| {}).unwrap();
    let put_u64 = |b: &mut Vec<u8>, id: u32, i: usize, v: u64| {
        let at = payload_offset(b, id) + 8 * i;
        b[at..at + 8].copy_from_slice(&v.to_le_bytes());
    };
    let put_u32 = |b: &mut Vec<u8>, id: u32, i: usize, v: u32| {
        let at = payload_offset(b, id) + 4 * i;
        b[at..at + 4].copy_from_slice(&v.to_le_bytes());
    };
    // Block 5 ends before it starts (events and times), block 7 after the trace end, block 9
    // names a call site and a thread that do not exist, block 11 starts after the end.
    let alloc5 = fresh.blocks.alloc_event[5];
    put_u64(&mut bytes, 8, 5, alloc5.saturating_sub(1));
    put_u64(
        &mut bytes,
        6,
        5,
        fresh.blocks.alloc_time_ns[5].saturating_sub(1),
    );
    put_u64(&mut bytes, 8, 7, u64::MAX);
    put_u32(&mut bytes, 10, 9, u32::MAX);
    put_u32(&mut bytes, 9, 9, 77);
    put_u64(&mut bytes, 7, 11, u64::MAX);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("forged.msc");
    std::fs::write(&path, &bytes).unwrap();
    for t in [
        read_msc(&path).unwrap(),
        from_msc_bytes("forged.msc", &bytes).unwrap(),
    ] {
        let b = &t.blocks;
        b.prefetch(&BlockColumn::ALL);
        for i in 0..n {
            assert!(b.alloc_event[i] <= b.free_event[i], "block {i}");
            assert!(b.free_event[i] <= t.meta.events);
            assert!(b.alloc_time_ns[i] <= b.free_time_ns[i]);
            assert!((b.site[i] as usize) < t.call_tree.len());
            assert!((b.thread[i] as usize) < t.threads.len().max(1));
        }
        assert_eq!(b.free_event[5], alloc5);
        assert_eq!(b.site[9], 0);
        assert_eq!(b.alloc_event[11], t.meta.events);
    }
    // The untouched columns are still mapped; the repaired ones are not.
    let t = read_msc(&path).unwrap();
    t.blocks.prefetch(&BlockColumn::ALL);
    assert!(t.blocks.address.is_mapped() && t.blocks.requested_size.is_mapped());
    assert!(!t.blocks.free_event.is_mapped() && !t.blocks.site.is_mapped());
    assert!(!t.blocks.thread.is_mapped() && !t.blocks.free_time_ns.is_mapped());
}

/// Mutated and truncated mappable files, read from disk (mapped) and from memory: a `Corrupt`
/// error naming the file, or a trace whose every column keeps the invariants.
#[test]
fn mutated_mappable_files_are_an_error_or_consistent() {
    let mut text = memscape_io::read_input(&data("heaptrack/sqlite_1M.raw.zst")).unwrap();
    text.truncate(48 * 1024);
    let t = memscape_trace::load_bytes("sqlite prefix", &text).unwrap();
    let sample = to_msc_bytes_with(&t, &mappable(), &mut |_| {}).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mutated.msc");
    let check = |t: Result<Trace, LoadError>| match t {
        Ok(t) => {
            let b = &t.blocks;
            b.prefetch(&BlockColumn::ALL);
            assert!(b.is_consistent());
            for i in 0..b.len() {
                assert!(b.alloc_event[i] <= b.free_event[i]);
                assert!(b.free_event[i] <= t.meta.events);
                assert!(b.alloc_time_ns[i] <= b.free_time_ns[i]);
                assert!((b.site[i] as usize) < t.call_tree.len());
                assert!((b.thread[i] as usize) < t.threads.len().max(1));
            }
            let report = memscape_trace::info::info(&t, &Default::default());
            assert_eq!(report.blocks, b.len() as u64);
        }
        Err(LoadError::Corrupt { at, expected }) => {
            assert!(at.offset.is_some());
            assert!(!expected.is_empty());
        }
        Err(e) => panic!("unexpected error kind: {e}"),
    };
    let config = ProptestConfig {
        cases: 300,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(edits in prop::collection::vec((any::<usize>(), 1u8..=255, any::<bool>()), 1..4), cut in any::<bool>(), at in any::<usize>())| {
        let mut b = sample.clone();
        for (p, x, header) in edits {
            // Half the edits in the header and directory, half anywhere.
            let span = if header { b.len().min(16 + 40 * 24) } else { b.len() };
            b[p % span] ^= x;
        }
        if cut {
            b.truncate(at % b.len());
        }
        std::fs::write(&path, &b).unwrap();
        check(read_msc(&path));
        check(from_msc_bytes("mutated.msc", &b));
    });
}

/// The mutation test's case that broke "no block ends before it starts": one flipped bit of the
/// directory (kept as a regression test, with where it lands printed).
#[test]
fn a_flipped_directory_bit_keeps_blocks_ordered() {
    let mut text = memscape_io::read_input(&data("heaptrack/sqlite_1M.raw.zst")).unwrap();
    text.truncate(48 * 1024);
    let t = memscape_trace::load_bytes("sqlite prefix", &text).unwrap();
    let mut b = to_msc_bytes_with(&t, &mappable(), &mut |_| {}).unwrap();
    let span = b.len().min(16 + 40 * 24);
    let at = 5665853661540961869usize % span;
    b[at] ^= 4;
    eprintln!(
        "byte {at}: entry {} field offset {}",
        (at - 16) / 40,
        (at - 16) % 40
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flipped.msc");
    std::fs::write(&path, &b).unwrap();
    for t in [read_msc(&path), from_msc_bytes("flipped.msc", &b)] {
        let Ok(t) = t else { continue };
        let blocks = &t.blocks;
        blocks.prefetch(&BlockColumn::ALL);
        for i in 0..blocks.len() {
            assert!(blocks.alloc_event[i] <= blocks.free_event[i], "block {i}");
            assert!(
                blocks.alloc_time_ns[i] <= blocks.free_time_ns[i],
                "block {i}"
            );
        }
    }
}
