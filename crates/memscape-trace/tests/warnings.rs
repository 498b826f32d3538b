//! Every warning kind of the issue, one crafted input each: counted, located, rest loaded.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memscape_trace::{LoadError, TraceFormat, load_bytes, warn};

const HEADER: &str = "time,op,address,size,thread,site\n";

fn csv(body: &str) -> memscape_trace::Trace {
    load_bytes("crafted.csv", format!("{HEADER}{body}").as_bytes()).unwrap()
}

/// The single warning kind present, its count and its first line.
fn only(t: &memscape_trace::Trace) -> (&'static str, u64, Option<u64>) {
    let kinds = t.warnings.kinds();
    assert_eq!(kinds.len(), 1, "{}", t.warnings);
    (kinds[0].kind, kinds[0].count, kinds[0].first[0].line)
}

#[test]
fn unknown_free() {
    let t = csv("1,alloc,0x1000,16,,\n2,free,0x2000,,,\n3,free,0x1000,,,\n");
    assert_eq!(only(&t), (warn::UNKNOWN_FREE, 1, Some(3)));
    assert_eq!(t.meta.unknown_frees, 1);
    assert_eq!(t.meta.frees, 1);
    assert_eq!(t.meta.events, 3);
    assert_eq!(t.warnings.kinds()[0].first[0].file, "crafted.csv");
}

#[test]
fn double_free() {
    let t = csv(
        "1,alloc,0x1000,16,,\n2,free,0x1000,,,\n3,free,0x1000,,,\n4,alloc,0x1000,8,,\n5,free,0x1000,,,\n",
    );
    assert_eq!(only(&t), (warn::DOUBLE_FREE, 1, Some(4)));
    assert_eq!(t.meta.double_frees, 1);
    assert_eq!(t.meta.frees, 2);
    assert_eq!(t.blocks.len(), 2);
}

#[test]
fn alloc_over_live_pointer() {
    let t = csv("1,alloc,0x1000,16,,\n2,alloc,0x1000,32,,\n3,free,0x1000,,,\n");
    assert_eq!(only(&t), (warn::ALLOC_OVER_LIVE, 1, Some(3)));
    // The first block ends where the second starts; the free ends the second.
    assert_eq!(t.blocks.len(), 2);
    assert_eq!(t.blocks.free_event[0], 1);
    assert_eq!(t.blocks.free_event[1], 2);
    assert_eq!(t.meta.end_live_bytes, 0);
    assert_eq!(t.meta.peak_live_bytes, 32);
}

#[test]
fn truncated_heaptrack_line() {
    let raw = b"v 10400 3\nx 3 abc\nt 1000 0\n+ 10 1 5000\n+ 20 1 60";
    let t = load_bytes("cut.raw", raw).unwrap();
    assert_eq!(t.meta.format, TraceFormat::HeaptrackRaw);
    assert_eq!(only(&t), (warn::TRUNCATED, 1, Some(5)));
    assert_eq!(t.meta.allocs, 1);
}

#[test]
fn truncated_compressed_stream_keeps_what_was_read() {
    let mut text = String::from("v 10400 3\nx 3 abc\nt 1000 0\n");
    for i in 0..20_000u64 {
        text.push_str(&format!("+ 10 1 {:x}\n", 0x10_0000 + i * 0x20));
    }
    let z = zstd::encode_all(text.as_bytes(), 1).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.raw.zst");
    std::fs::write(&path, &z[..z.len() * 2 / 3]).unwrap();
    let t = memscape_trace::load(&path).unwrap();
    assert_eq!(t.warnings.count(warn::TRUNCATED), 1, "{}", t.warnings);
    assert!(
        t.meta.allocs > 1000 && t.meta.allocs < 20_000,
        "{}",
        t.meta.allocs
    );
}

#[test]
fn malformed_lines() {
    let t = csv(
        "1,alloc,0x1000,16,,\nnot a row\n2,alloc,0xZZ,16,,\n3,explode,0x10,1,,\n4,free,0x1000,,,\n",
    );
    assert_eq!(only(&t), (warn::MALFORMED_LINE, 3, Some(3)));
    assert_eq!(
        t.warnings.kinds()[0]
            .first
            .iter()
            .map(|l| l.line.unwrap())
            .collect::<Vec<_>>(),
        vec![3, 4, 5]
    );
    assert_eq!(t.meta.allocs, 1);
    assert_eq!(t.meta.frees, 1);
    let raw = load_bytes(
        "m.raw",
        b"v 10400 3\nx 3 abc\n+ zz 0 10\nQ what\n+ 10 0 20\n",
    )
    .unwrap();
    assert_eq!(only(&raw), (warn::MALFORMED_LINE, 2, Some(3)));
    assert_eq!(raw.meta.allocs, 1);
}

#[test]
fn unsorted_times() {
    let t = csv("100,alloc,0x1000,16,,\n50,alloc,0x2000,16,,\n200,free,0x1000,,,\n");
    assert_eq!(only(&t), (warn::UNSORTED_TIME, 1, Some(3)));
    // Clamped to the previous time, so time never runs backwards.
    assert_eq!(t.blocks.alloc_time_ns, vec![100, 100]);
    let raw = load_bytes("u.raw", b"v 10400 3\nx 3 abc\nc 10\n+ 10 0 20\nc 5\n- 20\n").unwrap();
    assert_eq!(only(&raw), (warn::UNSORTED_TIME, 1, Some(5)));
}

#[test]
fn non_utf8_bytes() {
    let mut body = HEADER.as_bytes().to_vec();
    body.extend_from_slice(b"1,alloc,0x1000,16,thr\xff\xfe,site\n2,free,0x1000,,,\n");
    let t = load_bytes("bytes.csv", &body).unwrap();
    assert_eq!(only(&t), (warn::NON_UTF8, 1, Some(2)));
    assert_eq!(t.thread_name(t.blocks.thread[0]), "thr\u{fffd}\u{fffd}");
    let raw = load_bytes("bytes.raw", b"v 10400 3\nx 3 a\xffc\n+ 10 0 20\n").unwrap();
    assert_eq!(only(&raw), (warn::NON_UTF8, 1, Some(2)));
    assert_eq!(raw.meta.allocs, 1);
}

#[test]
fn absurd_sizes() {
    let t = csv(
        "1,alloc,0x1000,999999999999999999,,\n2,alloc,0xfffffffffffffff0,32,,\n3,alloc,0x2000,16,,\n",
    );
    assert_eq!(only(&t), (warn::ABSURD_SIZE, 2, Some(2)));
    assert_eq!(t.blocks.len(), 1);
    assert_eq!(t.meta.peak_live_bytes, 16);
}

#[test]
fn not_a_trace_is_a_clear_error() {
    let err = load_bytes("photo.jpg", b"\xff\xd8\xff\xe0 JFIF garbage").unwrap_err();
    assert!(matches!(err, LoadError::NotATrace { .. }));
    let msg = err.to_string();
    assert!(
        msg.starts_with("photo.jpg: not an allocation trace"),
        "{msg}"
    );
    assert!(msg.contains("expected a heaptrack file"), "{msg}");
}

#[test]
fn csv_realloc_counts_like_memcheck() {
    let t = load_bytes(
        "r.csv",
        b"time,op,address,size,thread,site,old_address\n\
          1,alloc,0x1000,16,main,a,\n\
          2,realloc,0x2000,64,main,b,0x1000\n\
          3,realloc,0x3000,8,worker,c,0\n\
          4,realloc,0x2000,128,main,b,0x2000\n\
          5,free,0x2000,,,,\n",
    )
    .unwrap();
    assert!(t.warnings.is_empty(), "{}", t.warnings);
    assert_eq!(t.meta.allocs, 4);
    assert_eq!(t.meta.frees, 3);
    assert_eq!(t.meta.reallocs, 2);
    assert_eq!(t.meta.end_live_bytes, 8);
    assert_eq!(t.meta.peak_live_bytes, 136);
    assert_eq!(
        t.blocks.flags[0] & memscape_trace::model::FLAG_FREED_BY_REALLOC,
        memscape_trace::model::FLAG_FREED_BY_REALLOC
    );
    assert_eq!(t.thread_name(t.blocks.thread[2]), "worker");
    assert_eq!(t.describe_frame(t.blocks.site[1]), "b");
}

#[test]
fn heaptrack_times_are_interpolated_by_event_index_within_a_tick() {
    // Four events in the first 10 ms tick, two in the next (20 ms long), one after the last tick.
    let raw = b"v 10400 3\nx 3 abc\nt 1000 0\nc 0\n+ 10 1 100\n+ 10 1 200\n- 100\n- 200\nc a\n+ 10 1 300\n- 300\nc 1e\n+ 10 1 400\n";
    let t = load_bytes("ticks.raw", raw).unwrap();
    assert!(t.warnings.is_empty(), "{}", t.warnings);
    assert!(t.meta.has_wall_time);
    let ms = 1_000_000;
    // Events 0..4 spread over [0, 10 ms); 4..6 over [10, 30 ms); event 6 after the last tick
    // continues the last rate (10 ms per event).
    assert_eq!(t.blocks.alloc_time_ns, vec![0, 2_500_000, 10 * ms, 30 * ms]);
    assert_eq!(t.blocks.free_time_ns[..3], [5 * ms, 7_500_000, 20 * ms]);
    assert_eq!(t.meta.end_time_ns, 40 * ms);
    assert_eq!(
        t.blocks.free_time_ns[3],
        40 * ms,
        "never freed: ends at the trace end"
    );
}
