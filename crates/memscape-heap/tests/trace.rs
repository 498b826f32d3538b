//! Heap trees from allocation traces: the incremental cursor against a brute-force live set, the
//! real sqlite heaptrack trace against its known totals, and leak suspects on a program that
//! leaks on purpose, recorded with heaptrack (package `heaptrack`) while the test runs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use memscape_heap::report::{HeapTreeOptions, TimeSelect, heaptree_trace};
use memscape_heap::suspects::trace_leak_suspects;
use memscape_heap::trace_tree::{GroupKey, TraceHeap, size_class};
use memscape_heap::view::Metric;
use memscape_trace::model::Frame;
use memscape_trace::{Trace, TraceBuilder, TraceFormat};
use proptest::prelude::*;

fn tool(name: &str, package: &str) -> Command {
    let found = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {name}"))
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        found,
        "`{name}` is not installed: this test needs the Debian package `{package}` (apt-get install -y {package})"
    );
    Command::new(name)
}

/// A trace from (op, slot, size, thread, site) steps: op 0 allocates into `slot` if empty,
/// otherwise frees it.
fn crafted(steps: &[(u8, u8, u16, u8, u8)]) -> Trace {
    let mut b = TraceBuilder::with_event_times("crafted");
    let threads: Vec<u32> = (0..3).map(|t| b.thread(&format!("t{t}"))).collect();
    let mut sites = Vec::new();
    for s in 0..4u32 {
        let outer = b.strings.intern(&format!("outer{}", s % 2));
        let inner = b.strings.intern(&format!("f{s}"));
        let parent = b.call_tree.child(
            0,
            Frame {
                ip: 100 + u64::from(s % 2),
                function: outer,
                ..Frame::default()
            },
        );
        sites.push(b.call_tree.child(
            parent,
            Frame {
                ip: 200 + u64::from(s),
                function: inner,
                ..Frame::default()
            },
        ));
    }
    let mut live = [false; 16];
    let mut time = 0u64;
    for (line, &(op, slot, size, thread, site)) in steps.iter().enumerate() {
        let slot = (slot % 16) as usize;
        let address = 0x1000 * (slot as u64 + 1);
        time += 10;
        if live[slot] && op % 2 == 1 {
            b.free(line as u64, time, address);
            live[slot] = false;
        } else if !live[slot] {
            b.alloc(
                line as u64,
                time,
                address,
                u64::from(size) + 1,
                0,
                threads[(thread % 3) as usize],
                sites[(site % 4) as usize],
            );
            live[slot] = true;
        }
    }
    b.finish(TraceFormat::Csv, true)
}

/// Live bytes and objects per (thread, site, size class) by brute force.
fn brute_force(trace: &Trace, applied: u64) -> HashMap<(u32, u32, u32), (u64, u64)> {
    let b = &trace.blocks;
    let mut out = HashMap::new();
    for i in 0..b.len() {
        if b.alloc_event[i] < applied && b.free_event[i] >= applied {
            let e = out
                .entry((b.thread[i], b.site[i], size_class(b.requested_size[i])))
                .or_insert((0, 0));
            e.0 += b.requested_size[i];
            e.1 += 1;
        }
    }
    out
}

fn check_point(heap: &mut TraceHeap<'_>, trace: &Trace, applied: u64) {
    let sizes = heap.sizes_at(applied);
    let expected = brute_force(trace, applied);
    let total: u64 = expected.values().map(|v| v.0).sum();
    let objects: u64 = expected.values().map(|v| v.1).sum();
    assert_eq!(sizes.bytes(0), total, "total at {applied}");
    assert_eq!(sizes.objects(0), objects, "objects at {applied}");
    // Per thread (level 1 of thread,site,size).
    let trie = heap.trie();
    for &thread_node in trie.children(0) {
        let name = trie.name(thread_node);
        let t = trace
            .threads
            .iter()
            .position(|&s| trace.strings.get(s) == name)
            .unwrap() as u32;
        let want: u64 = expected
            .iter()
            .filter(|(k, _)| k.0 == t)
            .map(|(_, v)| v.0)
            .sum();
        assert_eq!(sizes.bytes(thread_node), want, "thread {name} at {applied}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// Seeking forward, backward and far (incremental or rebuilt) always equals brute force.
    #[test]
    fn cursor_matches_brute_force(
        steps in proptest::collection::vec((0u8..2, 0u8..16, 0u16..5000, 0u8..3, 0u8..4), 1..300),
        seeks in proptest::collection::vec(0u64..400, 1..12),
    ) {
        let trace = crafted(&steps);
        let mut heap = TraceHeap::new(&trace, &[GroupKey::Thread, GroupKey::Site, GroupKey::Size]);
        for s in seeks {
            check_point(&mut heap, &trace, s.min(trace.event_count()));
        }
        check_point(&mut heap, &trace, trace.event_count());
        check_point(&mut heap, &trace, 0);
        // Wall time ↔ event count round trip (every event of this trace has its own time).
        for c in 1..=trace.event_count() {
            prop_assert_eq!(heap.events_at_time(heap.time_of(c)), c);
        }
        let points = heap.even_points(7);
        prop_assert_eq!(points.last().copied(), Some(trace.event_count()));
        prop_assert!(points.windows(2).all(|w| w[0] <= w[1]));
    }
}

#[test]
fn path_grouping_is_a_flame_graph() {
    let steps: Vec<_> = (0..40u8).map(|i| (0, i % 16, 100, 0, i % 4)).collect();
    let trace = crafted(&steps);
    let mut heap = TraceHeap::new(&trace, &[GroupKey::Path]);
    let sizes = heap.sizes_at(trace.event_count());
    let trie = heap.trie();
    // Two outer functions at level 1, two inner ones under each.
    let outer: Vec<&str> = trie.children(0).iter().map(|&n| trie.name(n)).collect();
    assert_eq!(outer.len(), 2, "{outer:?}");
    for &o in trie.children(0) {
        assert_eq!(trie.children(o).len(), 2);
        let sum: u64 = trie.children(o).iter().map(|&c| sizes.bytes(c)).sum();
        assert_eq!(sum, sizes.bytes(o));
    }
    // 16 slots live with 101 bytes each.
    assert_eq!(sizes.bytes(0), 16 * 101);
    assert_eq!(sizes.objects(0), 16);
}

fn sqlite() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/heaptrack/sqlite_1M.raw.zst")
}

#[test]
fn sqlite_trace_totals_match_the_recorded_facts() {
    let trace = memscape_trace::load(&sqlite()).unwrap();
    // From shared/data/README.md: peak live 4,444,354 B, 13,033 B live at the end.
    let mut heap = TraceHeap::new(&trace, &[GroupKey::Size, GroupKey::Thread]);
    let end = heap.sizes_at(trace.event_count());
    assert_eq!(end.bytes(0), 13_033);
    assert_eq!(end.objects(0), 16);
    let peak = heap.sizes_at(heap.peak_point());
    assert_eq!(peak.bytes(0), 4_444_354);
    // Every size-class node holds only blocks of its class.
    let trie = heap.trie();
    let classes: u64 = trie.children(0).iter().map(|&c| peak.objects(c)).sum();
    assert_eq!(classes, peak.objects(0));
    // The report at the peak, by objects.
    let opts = HeapTreeOptions {
        select: TimeSelect::Peak,
        group: vec![GroupKey::Size],
        prune: memscape_heap::PruneOptions {
            metric: Metric::Objects,
            ..Default::default()
        },
        ..HeapTreeOptions::default()
    };
    let report = heaptree_trace(&trace, &opts).unwrap();
    assert_eq!(report.total_bytes, 4_444_354);
    assert_eq!(report.events, Some(heap.peak_point()));
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["metric"], "objects");
    assert!(json["children"].as_array().unwrap().len() <= 10);

    // Timeline: eight time points, one sibling order; a size class that is shown at two time
    // points is in the same relative position at both.
    let opts = HeapTreeOptions {
        group: vec![GroupKey::Size],
        ..HeapTreeOptions::default()
    };
    let selects: Vec<TimeSelect> = heap
        .even_points(8)
        .into_iter()
        .map(TimeSelect::AtEvent)
        .collect();
    let reports = memscape_heap::timeline_trace(&trace, &opts, &selects).unwrap();
    assert_eq!(reports.len(), 8);
    let shown: Vec<Vec<&str>> = reports
        .iter()
        .map(|r| {
            r.tree
                .children
                .iter()
                .filter(|c| !c.is_other())
                .map(|c| c.name.as_str())
                .collect()
        })
        .collect();
    for a in &shown {
        for b in &shown {
            let common_a: Vec<&&str> = a.iter().filter(|n| b.contains(n)).collect();
            let common_b: Vec<&&str> = b.iter().filter(|n| a.contains(n)).collect();
            assert_eq!(common_a, common_b);
        }
    }
    assert!(shown.iter().map(Vec::len).sum::<usize>() > 8);
}

const LEAKER: &str = r#"
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) void *leak_here(size_t n) { void *p = malloc(n); memset(p, 1, n); return p; }
__attribute__((noinline)) void *temp_buffer(size_t n) { void *p = malloc(n); memset(p, 2, n); return p; }
__attribute__((noinline)) void *cache_entry(size_t n) { void *p = malloc(n); memset(p, 3, n); return p; }
int main(void) {
    void *cache[64];
    for (int i = 0; i < 3000; i++) {
        void *t = temp_buffer(8192);
        if (i < 64) cache[i] = cache_entry(2000);
        leak_here(128);
        free(t);
    }
    for (int i = 0; i < 64; i++) free(cache[i]);
    return 0;
}
"#;

#[test]
fn heaptrack_recorded_leak_is_the_first_suspect() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("leaker.c");
    std::fs::write(&src, LEAKER).unwrap();
    let exe = dir.path().join("leaker");
    let ok = tool("gcc", "gcc")
        .args(["-g", "-O0", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let out = dir.path().join("leaker");
    let ok = tool("heaptrack", "heaptrack")
        .arg("-r")
        .arg("-o")
        .arg(&out)
        .arg(&exe)
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok);
    let raw = dir.path().join("leaker.raw.zst");
    let mut trace = memscape_trace::load(&raw).unwrap();
    memscape_trace::symbolize::symbolize(&mut trace);
    let mut heap = TraceHeap::new(&trace, &[GroupKey::Site]);
    let points = heap.even_points(20);
    let suspects = trace_leak_suspects(&mut heap, &points, Some(1));
    assert!(!suspects.is_empty());
    assert!(
        suspects[0].name.contains("leak_here"),
        "first suspect {:?}; all: {:?}",
        suspects[0].name,
        suspects.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    assert_eq!(suspects[0].end_bytes, 3000 * 128);
    // The heap-size series ends with the leak alone.
    let series = heap.heap_series(&points);
    assert!(series.last().unwrap().1 >= 3000 * 128);

    // Full call path: leak_here sits under main, like a flame graph.
    let mut paths = TraceHeap::new(&trace, &[GroupKey::Path]);
    let end = paths.sizes_at(trace.event_count());
    let leak = paths.trie().find("leak_here").unwrap();
    let crumbs = paths.trie().breadcrumb(leak);
    assert!(crumbs.iter().any(|c| c.contains("main")), "{crumbs:?}");
    assert_eq!(end.bytes(leak), 3000 * 128);
    assert_eq!(end.objects(leak), 3000);
    // Linking with the allocation map: the blocks of the leak's group are its 3000 blocks.
    let blocks = paths.blocks_in_group(leak);
    assert_eq!(blocks.len(), 3000);
    assert!(
        blocks
            .iter()
            .all(|&b| trace.blocks.requested_size[b as usize] == 128)
    );
    let outermost = paths.trie().path_to_root(leak)[1];
    assert!(paths.blocks_in_group(outermost).len() > 3000);
    // By module: the leaking binary holds the leak at the end.
    let mut modules = TraceHeap::new(&trace, &[GroupKey::Module]);
    let end = modules.sizes_at(trace.event_count());
    let trie = modules.trie();
    let top = *trie
        .children(0)
        .iter()
        .max_by_key(|&&m| end.bytes(m))
        .unwrap();
    assert!(trie.name(top).ends_with("/leaker"), "{}", trie.name(top));
    assert!(end.bytes(top) >= 3000 * 128);
}

#[test]
fn synthetic_trace_totals_match_the_builders_accounting() {
    let trace = memscape_heap::synthetic::synthetic_trace(50_000);
    assert_eq!(trace.event_count(), 50_000);
    let mut heap = TraceHeap::new(&trace, &[GroupKey::Thread, GroupKey::Site, GroupKey::Size]);
    assert_eq!(
        heap.sizes_at(trace.event_count()).bytes(0),
        trace.meta.end_live_bytes
    );
    assert_eq!(
        heap.sizes_at(heap.peak_point()).bytes(0),
        trace.meta.peak_live_bytes
    );
    // The peak is a maximum over every time point.
    let series = heap.heap_series(&heap.even_points(500));
    assert!(series.iter().all(|&(_, b)| b <= trace.meta.peak_live_bytes));
}

#[test]
fn anonymous_mappings_are_not_heap() {
    let mut b = TraceBuilder::with_event_times("mmaps");
    let thread = b.thread("main");
    b.alloc(1, 10, 0x1000, 100, 0, thread, 0);
    b.mmap(2, 20, 0x7f00_0000_0000, 1 << 20, thread, 0);
    b.alloc(3, 30, 0x2000, 50, 0, thread, 0);
    b.munmap(4, 40, 0x7f00_0000_0000, 1 << 20);
    b.alloc(5, 50, 0x3000, 7, 0, thread, 0);
    let trace = b.finish(TraceFormat::Csv, true);
    let mut heap = TraceHeap::new(&trace, &[GroupKey::Thread]);
    // After each event, the root holds only malloc'd bytes, whether the cursor steps or jumps.
    for (applied, expected) in [(2, 100), (3, 150), (4, 150), (5, 157), (1, 100), (5, 157)] {
        assert_eq!(
            heap.sizes_at(applied).bytes(0),
            expected,
            "after {applied} events"
        );
    }
}
