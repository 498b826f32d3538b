//! The shared real traces: exact counts from `shared/data/README.md`, and agreement with
//! heaptrack_print.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{data, heaptrack_print_totals, interpret};
use memscape_trace::info::{InfoOptions, info};
use memscape_trace::model::FLAG_NEVER_FREED;
use memscape_trace::{TraceFormat, load};

#[test]
fn sqlite_1m_raw_has_the_documented_counts() {
    let t = load(&data("heaptrack/sqlite_1M.raw.zst")).unwrap();
    assert_eq!(t.meta.format, TraceFormat::HeaptrackRaw);
    assert!(t.has_addresses());
    // Numbers from shared/data/README.md.
    assert_eq!(t.meta.events, 1_014_246);
    assert_eq!(t.meta.allocs, 507_131);
    assert_eq!(t.meta.frees, 507_115);
    assert_eq!(t.never_freed(), 16);
    assert_eq!(t.meta.peak_live_bytes, 4_444_354);
    assert_eq!(t.meta.end_live_bytes, 13_033);
    assert!(t.warnings.is_empty(), "{}", t.warnings);
    assert!(t.blocks.is_consistent());
    assert_eq!(t.meta.command_line, "sqlite3 /tmp/gen/db.sqlite");
    assert_eq!(t.meta.page_size, 0x1000);
    // Times are interpolated between ticks and never go backwards in allocation order.
    assert!(t.blocks.alloc_time_ns.windows(2).all(|w| w[0] <= w[1]));
    assert!(t.meta.end_time_ns > 500_000_000);
    for i in 0..t.blocks.len() {
        assert!(t.blocks.alloc_event[i] < t.blocks.free_event[i]);
        assert!(t.blocks.alloc_time_ns[i] <= t.blocks.free_time_ns[i]);
        if t.blocks.flags[i] & FLAG_NEVER_FREED != 0 {
            assert_eq!(t.blocks.free_event[i], t.meta.events);
            assert_eq!(t.blocks.free_time_ns[i], t.meta.end_time_ns);
        }
    }
    // Every frame of a raw trace lies in a recorded module.
    let with_module = t
        .call_tree
        .frames
        .iter()
        .skip(1)
        .filter(|f| f.module != 0)
        .count();
    assert!(with_module * 10 >= (t.call_tree.len() - 1) * 9);
}

#[test]
fn sqlite_1m_info_matches_heaptrack_print() {
    let dir = tempfile::tempdir().unwrap();
    let raw = data("heaptrack/sqlite_1M.raw.zst");
    let processed = interpret(&raw, dir.path());
    let (allocations, peak, leaked) = heaptrack_print_totals(&processed, dir.path());
    let report = info(&load(&raw).unwrap(), &InfoOptions::default());
    assert_eq!(report.allocs, allocations);
    assert_eq!(report.peak_live_bytes, peak);
    assert_eq!(report.end_live_bytes, leaked);
}

#[test]
fn processed_david_has_no_addresses_and_matches_heaptrack_print() {
    let path = data("heaptrack/heaptrack.david.18594.gz");
    let t = load(&path).unwrap();
    assert_eq!(t.meta.format, TraceFormat::HeaptrackProcessed);
    assert!(!t.has_addresses());
    assert!(t.blocks.address.iter().all(|&a| a == 0));
    assert_eq!(t.meta.allocs, 2896);
    let dir = tempfile::tempdir().unwrap();
    let (allocations, peak, leaked) = heaptrack_print_totals(&path, dir.path());
    let report = info(&t, &InfoOptions::default());
    assert_eq!(report.allocs, allocations);
    assert_eq!(report.peak_live_bytes, peak);
    assert_eq!(report.end_live_bytes, leaked);
    assert!(
        report.regions.is_empty(),
        "no address axis without addresses"
    );
    // The processed format carries symbols: the top call site has a function name.
    let top = &report.top_call_sites[0];
    assert!(!top.location.starts_with("0x"), "{}", top.location);
}

#[test]
fn test_sysroot_raw_three_allocations() {
    let t = load(&data("heaptrack/test_sysroot.raw")).unwrap();
    assert_eq!(t.meta.format, TraceFormat::HeaptrackRaw);
    assert_eq!(t.meta.allocs, 3);
    assert_eq!(t.never_freed(), 3);
    assert_eq!(t.meta.end_live_bytes, 0x12000 + 0x18 + 0x8);
    // The binaries it names are not on this machine: module + offset, and no failure.
    let mut t = t;
    let report = memscape_trace::symbolize::symbolize(&mut t);
    assert_eq!(report.frames_resolved, 0);
    let described: Vec<String> = (1..t.call_tree.len() as u32)
        .map(|n| t.describe_frame(n))
        .collect();
    assert!(
        described
            .iter()
            .any(|d| d.starts_with("/usr/lib/libc.so.6+0x")),
        "{described:?}"
    );
}

#[test]
fn test_sysroot_matches_heaptrack_print() {
    let dir = tempfile::tempdir().unwrap();
    let raw = data("heaptrack/test_sysroot.raw");
    let processed = interpret(&raw, dir.path());
    let (allocations, peak, leaked) = heaptrack_print_totals(&processed, dir.path());
    let t = load(&raw).unwrap();
    assert_eq!(
        (t.meta.allocs, t.meta.peak_live_bytes, t.meta.end_live_bytes),
        (allocations, peak, leaked)
    );
}

#[test]
fn info_json_has_the_issue_keys() {
    let t = load(&data("heaptrack/test_sysroot.raw")).unwrap();
    let json = serde_json::to_value(info(&t, &InfoOptions::default())).unwrap();
    for key in [
        "format",
        "events",
        "allocs",
        "frees",
        "reallocs",
        "blocks",
        "unknown_frees",
        "double_frees",
        "warnings",
        "peak_live_bytes",
        "end_live_bytes",
        "never_freed",
        "regions",
    ] {
        assert!(json.get(key).is_some(), "missing key {key}");
    }
    assert_eq!(json["format"], "heaptrack_raw");
    assert_eq!(json["regions"][0]["peak_bytes"], 0x12000 + 0x18 + 0x8);
}

#[test]
fn demo_asset_is_a_small_clean_raw_trace() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../assets/demo/sqlite-small.heaptrack.raw.zst");
    assert!(std::fs::metadata(&path).unwrap().len() < 600 * 1024);
    let t = load(&path).unwrap();
    assert_eq!(t.meta.format, TraceFormat::HeaptrackRaw);
    assert!(t.warnings.is_empty(), "{}", t.warnings);
    assert!(
        (50_000..=150_000).contains(&t.meta.events),
        "{}",
        t.meta.events
    );
    assert!(t.meta.has_wall_time);
}
