//! Segmented `.msc` files (version 6): real traces written segment by segment read back as the
//! same trace as the unsegmented file gives, with every time resolution and without event
//! times; a damaged segment is an error naming the segment and its offset in the file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::data;
use memscape_trace::msc::{
    EncodedFooter, MscOptions, SegmentBlocks, SegmentWriter, to_msc_bytes_with,
};
use memscape_trace::{LoadError, Trace, TraceFormat, from_msc_bytes, load};

fn assert_same(a: &Trace, b: &Trace) {
    assert_eq!(a.blocks, b.blocks);
    assert_eq!(a.call_tree.parent, b.call_tree.parent);
    assert_eq!(a.call_tree.frames, b.call_tree.frames);
    assert_eq!(a.strings, b.strings);
    assert_eq!(a.threads, b.threads);
    assert_eq!(a.thread_process, b.thread_process);
    assert_eq!(a.processes, b.processes);
    assert_eq!(a.warnings, b.warnings);
    let (mut ma, mut mb) = (a.meta.clone(), b.meta.clone());
    ma.format = TraceFormat::Msc;
    mb.format = TraceFormat::Msc;
    ma.source.clear();
    mb.source.clear();
    assert_eq!(ma, mb);
}

fn segmented(t: &Trace, blocks: usize, shift: u8) -> Vec<u8> {
    let options = MscOptions {
        segment_blocks: blocks,
        time_resolution_log2: shift,
        ..Default::default()
    };
    to_msc_bytes_with(t, &options, &mut |_| {}).unwrap()
}

fn sqlite() -> Trace {
    load(&data("heaptrack/sqlite_1M.raw.zst")).unwrap()
}

/// A real heaptrack trace (1.2 M events, event times context-coded) in segments of several
/// sizes, one of them larger than the trace: the same trace as the version-5 file gives, at
/// about its size.
#[test]
fn segmented_files_read_back_as_the_unsegmented_trace() {
    let t = sqlite();
    assert!(t.blocks.len() > 100_000);
    let whole = memscape_trace::to_msc_bytes(&t, &mut |_| {}).unwrap();
    let from_whole = from_msc_bytes("whole.msc", &whole).unwrap();
    // (This trace compresses to 57 KB: a segment's fixed cost, ~1 KB of directory and
    // restarted codings, shows; on a recording, segments of 2^20 blocks are MBs each.)
    for (blocks, slack) in [(1 << 30, 1.01), (100_000, 1.2)] {
        let bytes = segmented(&t, blocks, 0);
        assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 6);
        assert_eq!(&bytes[bytes.len() - 8..], b"MSCSEGS\0");
        eprintln!(
            "{blocks}: {} segmented vs {} whole",
            bytes.len(),
            whole.len()
        );
        let back = from_msc_bytes("seg.msc", &bytes).unwrap();
        assert_same(&back, &t);
        assert_same(&back, &from_whole);
        assert!(
            (bytes.len() as f64) < whole.len() as f64 * slack,
            "{} segmented vs {} whole",
            bytes.len(),
            whole.len()
        );
    }
}

/// Rounded times, and traces without event times (block times per segment).
#[test]
fn segmented_files_keep_rounded_and_per_block_times() {
    let t = sqlite();
    let back = from_msc_bytes("r.msc", &segmented(&t, 50_000, 5)).unwrap();
    let rounded: Vec<u64> = t.blocks.free_time_ns.iter().map(|x| x >> 5 << 5).collect();
    assert_eq!(back.blocks.free_time_ns[..], rounded[..]);
    assert_eq!(back.blocks.alloc_event, t.blocks.alloc_event);
    // A block whose times are not those of its events: block times are stored instead.
    let mut b = memscape_trace::TraceBuilder::with_event_times("blocks");
    let thread = b.thread("main");
    for i in 0..3000u64 {
        b.alloc(
            i,
            10 * i,
            0x1000 + 64 * i,
            16 + i % 50,
            32 + i % 50,
            thread,
            0,
        );
    }
    let mut odd = b.finish(TraceFormat::Csv, true);
    let mut alloc_time = odd.blocks.alloc_time_ns.to_vec();
    alloc_time[7] += 3;
    odd.blocks.alloc_time_ns = alloc_time.into();
    let back = from_msc_bytes("b.msc", &segmented(&odd, 1000, 0)).unwrap();
    assert_same(&back, &odd);
}

/// The writer as a recorder drives it: segments pushed one by one into a file.
#[test]
fn segment_writer_writes_a_file_that_loads() {
    let t = sqlite();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.msc");
    let file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut w = SegmentWriter::new(file, &MscOptions::default()).unwrap();
    let n = t.blocks.len();
    for start in (0..n).step_by(40_000) {
        let blocks = SegmentBlocks::of(&t.blocks, start..(start + 40_000).min(n));
        w.push(&blocks, None).unwrap();
    }
    w.finish(&t).unwrap();
    let back = memscape_trace::msc::read_msc(&path).unwrap();
    assert_same(&back, &t);
}

/// The footer encoded apart from the writer (`EncodedFooter`, as a recorder does while the
/// writer encodes its last segment) gives the same bytes as `SegmentWriter::finish`, at the
/// default and at another zstd level.
#[test]
fn footer_encoded_apart_gives_the_same_file() {
    let t = sqlite();
    for options in [
        MscOptions::default(),
        MscOptions {
            zstd_level: Some(3),
            ..Default::default()
        },
    ] {
        let write = |apart: bool| -> Vec<u8> {
            let mut w = SegmentWriter::new(Vec::new(), &options).unwrap();
            let n = t.blocks.len();
            for start in (0..n).step_by(100_000) {
                let blocks = SegmentBlocks::of(&t.blocks, start..(start + 100_000).min(n));
                w.push(&blocks, None).unwrap();
            }
            match apart {
                true => w
                    .finish_with(EncodedFooter::new(&t, &options).unwrap())
                    .unwrap(),
                false => w.finish(&t).unwrap(),
            }
        };
        let apart = write(true);
        assert_eq!(apart, write(false), "{options:?}");
        assert_same(&from_msc_bytes("f.msc", &apart).unwrap(), &t);
    }
}

/// The call tree's columns compressed ahead while the tree grows (`FooterAhead`, as a recording
/// does while the program runs) and continued at the end give a file that loads as the footer
/// encoded whole does; a column whose compressed prefix changed since (a node renamed) is
/// encoded whole, and the file still loads the same.
#[test]
fn footer_compressed_ahead_loads_as_the_whole_footer() {
    use memscape_trace::msc::FooterAhead;
    for rename_after in [false, true] {
        let options = MscOptions {
            zstd_level: Some(3),
            ..Default::default()
        };
        let mut b = memscape_trace::TraceBuilder::with_event_times("ahead");
        let thread = b.thread("tid 1");
        let names: Vec<u32> = (0..50)
            .map(|k| b.strings.intern(&format!("f{k}")))
            .collect();
        let mut ahead = FooterAhead::new(&options);
        // 200,000 nodes (three whole plane blocks and a part), compressed ahead three times.
        let mut leaves = Vec::new();
        for n in 0..200_000u64 {
            let parent = if n % 7 == 0 {
                0
            } else {
                (n as u32).saturating_sub(3)
            };
            let frame = memscape_trace::Frame {
                ip: 0x40_0000 + 16 * n,
                function: names[(n % 50) as usize],
                file: 0,
                line: (n % 300) as u32,
                module: 0,
                module_offset: 16 * n,
            };
            leaves.push(b.call_tree.child(parent, frame));
            if n % 70_000 == 69_999 {
                ahead.advance(&b.call_tree).unwrap();
            }
        }
        if rename_after {
            // Node 10 (compressed ahead) named again, as a late symbolization would.
            b.call_tree.frames[10].function = names[49];
        }
        for (i, &site) in leaves.iter().enumerate().step_by(97) {
            let i = i as u64;
            b.alloc(2 * i + 1, 10 * i, 0x1000 + 64 * i, 32, 40, thread, site);
        }
        let t = b.finish(TraceFormat::Csv, true);
        let write = |footer: EncodedFooter| -> Vec<u8> {
            let mut w = SegmentWriter::new(Vec::new(), &options).unwrap();
            w.push(&SegmentBlocks::of(&t.blocks, 0..t.blocks.len()), None)
                .unwrap();
            w.finish_with(footer).unwrap()
        };
        let whole = write(EncodedFooter::new(&t, &options).unwrap());
        let continued = write(EncodedFooter::with_ahead(&t, &options, &ahead).unwrap());
        // The frames were used (several frames are other bytes than one), except for the
        // renamed column.
        assert_ne!(whole, continued);
        let back = from_msc_bytes("ahead.msc", &continued).unwrap();
        assert_same(&back, &t);
        assert_same(&from_msc_bytes("whole.msc", &whole).unwrap(), &back);
    }
}

/// A flipped byte in a segment's payload: an error naming the segment, its offset, and a file
/// offset inside that segment.
#[test]
fn damaged_segment_is_an_error_at_its_offset() {
    let t = sqlite();
    let bytes = segmented(&t, 100_000, 0);
    let back = from_msc_bytes("ok.msc", &bytes).unwrap();
    assert_eq!(back.blocks.len(), t.blocks.len());
    // The second segment starts after the first: find its magic.
    let starts: Vec<usize> = (16..bytes.len() - 8)
        .step_by(8)
        .filter(|&i| &bytes[i..i + 8] == b"MEMSCAPE")
        .collect();
    let (second, third) = (starts[1], starts[2]);
    // A byte in the last quarter of segment 1: a payload.
    let at = third - (third - second) / 4;
    let mut bad = bytes.clone();
    bad[at] ^= 0x40;
    match from_msc_bytes("bad.msc", &bad).unwrap_err() {
        LoadError::Corrupt { at, expected } => {
            assert_eq!(at.file, "bad.msc");
            let offset = at.offset.unwrap() as usize;
            assert!(offset >= second && offset < third, "{offset}");
            assert!(
                expected.starts_with(&format!("segment 1 (at offset {second}): ")),
                "{expected}"
            );
        }
        e => panic!("{e}"),
    }
    // A cut file (no trailer) says so.
    let e = from_msc_bytes("cut.msc", &bytes[..bytes.len() - 100]).unwrap_err();
    assert!(e.to_string().contains("segment trailer"), "{e}");
}

/// Every section count of every segment set to 2^40 (or more), checksums resealed: an error,
/// found before anything is allocated for it.
#[test]
fn forged_segment_counts_never_allocate() {
    // A prefix of the sqlite trace (about 3,000 blocks) in segments of 500.
    let mut text = memscape_io::read_input(&data("heaptrack/sqlite_1M.raw.zst")).unwrap();
    text.truncate(96 * 1024);
    let t = memscape_trace::load_bytes("sqlite prefix", &text).unwrap();
    let bytes = segmented(&t, 500, 0);
    let starts: Vec<usize> = (16..bytes.len() - 8)
        .step_by(8)
        .filter(|&i| &bytes[i..i + 8] == b"MEMSCAPE")
        .collect();
    assert!(starts.len() > 3, "segments and the footer");
    for &start in &starts {
        let sections = u32::from_le_bytes(bytes[start + 12..start + 16].try_into().unwrap());
        for entry in 0..sections as usize {
            for count in [1u64 << 40, u64::MAX] {
                let mut forged = bytes.clone();
                let at = start + 16 + 40 * entry + 8;
                forged[at..at + 8].copy_from_slice(&count.to_le_bytes());
                memscape_trace::msc::reseal_checksums(&mut forged);
                let e = from_msc_bytes("forged.msc", &forged).unwrap_err();
                assert!(matches!(e, LoadError::Corrupt { .. }), "{e}");
            }
        }
    }
}
