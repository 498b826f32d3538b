//! Heap profiles made by real tools while the test runs, read back and checked against the
//! tools' own readings: a Go program writing `runtime/pprof` heap profiles over time (Debian's
//! `golang-go`; `go tool pprof` is the oracle), the same program's legacy text profile, a C
//! program profiled by jemalloc (`libjemalloc2`, `MALLOC_CONF=prof:true`) and by valgrind's
//! DHAT (`valgrind`). Exports (pprof, collapsed) of profiles and of the real sqlite heaptrack
//! trace are read back by `go tool pprof` and by our own importer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use memscape_heap::export::{collapsed, heap_at, pprof};
use memscape_heap::profile::{ProfileFormat, parse_profile, read_profile};
use memscape_heap::report::{HeapInput, HeapTreeOptions, TimeSelect, heaptree_file};
use memscape_heap::{ProfileHeap, StackProfile, profile_timeline};

fn require_tool(tool: &str, args: &[&str], package: &str) {
    let found = Command::new(tool).args(args).output().is_ok();
    assert!(
        found,
        "`{tool}` is not installed: this test needs it; install the Debian package `{package}`"
    );
}

/// `go` with a private cache in the target directory (no network, no module).
fn go() -> Command {
    require_tool("go", &["version"], "golang-go");
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("go");
    let mut cmd = Command::new("go");
    cmd.env("GOCACHE", base.join("cache"))
        .env("GOPATH", base.join("path"))
        .env("HOME", &base)
        .env("GO111MODULE", "off")
        .env("GOFLAGS", "")
        .env("GOTOOLCHAIN", "local");
    cmd
}

const GO_LEAK: &str = r#"
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

var leaked [][]byte

//go:noinline
func leak(n int) { leaked = append(leaked, make([]byte, n)) }

//go:noinline
func churn(n int) int { b := make([]byte, n); return len(b) }

func main() {
	runtime.MemProfileRate = 1
	dir := os.Args[1]
	for round := 0; round < 3; round++ {
		for i := 0; i < 1000; i++ {
			leak(4096)
			churn(1024)
		}
		runtime.GC()
		f, _ := os.Create(fmt.Sprintf("%s/heap.%d.pb.gz", dir, round))
		pprof.WriteHeapProfile(f)
		f.Close()
	}
	f, _ := os.Create(dir + "/legacy.heap")
	pprof.Lookup("heap").WriteTo(f, 1)
	f.Close()
}
"#;

/// Runs the Go program once per test process; returns the directory with its profiles.
fn go_profiles() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("go-heap-{}", std::process::id()));
        let out = dir.join("profiles");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(dir.join("leak.go"), GO_LEAK).unwrap();
        let status = go()
            .arg("run")
            .arg(dir.join("leak.go"))
            .arg(&out)
            .status()
            .unwrap();
        assert!(status.success(), "go run failed");
        out
    })
    .clone()
}

/// `go tool pprof -raw`: the sum of every sample's values, per sample type.
fn pprof_raw_totals(path: &Path) -> BTreeMap<String, u64> {
    let out = go()
        .args(["tool", "pprof", "-raw"])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text
        .lines()
        .skip_while(|l| !l.starts_with("Samples:"))
        .skip(1);
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split_whitespace()
        .map(|t| t.split('/').next().unwrap().to_owned())
        .collect();
    let mut totals: BTreeMap<String, u64> = header.iter().map(|h| (h.clone(), 0)).collect();
    for line in lines {
        let Some((values, _)) = line.split_once(':') else {
            continue;
        };
        let values: Vec<u64> = values
            .split_whitespace()
            .filter_map(|v| v.parse().ok())
            .collect();
        if values.len() != header.len() {
            continue;
        }
        for (h, v) in header.iter().zip(values) {
            *totals.get_mut(h).unwrap() += v;
        }
    }
    totals
}

/// `go tool pprof -top`: each function's flat value of a sample type.
fn pprof_flat(path: &Path, sample_index: &str) -> BTreeMap<String, u64> {
    let out = go()
        .args([
            "tool",
            "pprof",
            "-top",
            "-nodefraction=0",
            "-nodecount=100000",
            "-unit=B",
        ])
        .arg(format!("-sample_index={sample_index}"))
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .skip_while(|l| !l.trim_start().starts_with("flat"))
        .skip(1)
        .filter_map(|l| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            let flat: u64 = fields.first()?.trim_end_matches('B').parse().ok()?;
            // pprof marks functions inlined into their caller: the same function here.
            let name = fields[5..].join(" ");
            let name = name.trim_end_matches(" (inline)").to_owned();
            (flat > 0).then_some((name, flat))
        })
        .collect()
}

fn level_one(profile: &StackProfile, measure: &str) -> BTreeMap<String, u64> {
    let m = profile.measure(Some(measure)).unwrap();
    let heap = ProfileHeap::new(profile, m);
    let sizes = heap.sizes(heap.len() - 1).unwrap();
    heap.trie()
        .children(0)
        .iter()
        .map(|&c| {
            let name = heap.trie().name(c);
            let function = name.split(" (").next().unwrap().to_owned();
            (function, sizes.bytes(c))
        })
        .filter(|(_, b)| *b > 0)
        .collect()
}

#[test]
fn go_heap_profiles_read_like_go_tool_pprof() {
    let dir = go_profiles();
    for n in 0..3 {
        let path = dir.join(format!("heap.{n}.pb.gz"));
        let profile = read_profile(&path).unwrap();
        assert_eq!(profile.format, ProfileFormat::Pprof);
        assert!(profile.warnings.is_empty(), "{}", profile.warnings);
        let names: Vec<&str> = profile
            .sample_types
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "alloc_objects",
                "alloc_space",
                "inuse_objects",
                "inuse_space"
            ]
        );
        // Totals of every sample type = the root of the matching measure.
        let totals = pprof_raw_totals(&path);
        for (measure, bytes, objects) in [
            ("inuse", "inuse_space", "inuse_objects"),
            ("alloc", "alloc_space", "alloc_objects"),
        ] {
            let heap = ProfileHeap::new(&profile, profile.measure(Some(measure)).unwrap());
            let sizes = heap.sizes(0).unwrap();
            assert_eq!(sizes.bytes(0), totals[bytes], "{path:?} {measure}");
            assert_eq!(sizes.objects(0), totals[objects], "{path:?} {measure}");
        }
        // The first level of the tree is the allocating function: pprof's flat values.
        for index in ["inuse_space", "alloc_space"] {
            let ours = level_one(&profile, index);
            let theirs = pprof_flat(&path, index);
            assert_eq!(ours, theirs, "{path:?} {index}");
        }
    }
}

#[test]
fn profiles_over_time_give_time_points_and_the_leak_as_first_suspect() {
    let dir = go_profiles();
    let report = heaptree_file(&dir, &HeapTreeOptions::default()).unwrap();
    assert_eq!(
        report.time_unit, "profile",
        "the legacy profile has no time"
    );
    let paths: Vec<PathBuf> = (0..3)
        .map(|n| dir.join(format!("heap.{n}.pb.gz")))
        .collect();
    let refs: Vec<&Path> = paths.iter().map(|p| p.as_path()).collect();
    let profile = memscape_heap::load_profiles(&refs).unwrap();
    assert_eq!(profile.snapshots.len(), 3);
    assert_eq!(profile.time_unit(), "ns");
    let measure = profile.measure(None).unwrap();
    assert_eq!(measure.name, "inuse");
    let (timeline, _) = profile_timeline(&profile, measure, memscape_heap::Metric::Bytes);
    assert_eq!(timeline.points.len(), 3);
    assert!(timeline.points.windows(2).all(|w| w[0].time < w[1].time));
    // 1000 leaked 4 KiB blocks per round, never freed.
    for w in timeline.points.windows(2) {
        let growth = w[1].total_bytes - w[0].total_bytes;
        assert!((4_096_000..4_400_000).contains(&growth), "{growth}");
    }
    // Suspects are whole paths (allocating function first): the steepest is the leak's.
    let top = &timeline.suspects[0];
    assert!(top.path[1].starts_with("main.leak"), "{top:?}");
    // Time travel: the first profile through --snapshot 0.
    let first = heaptree_file(
        &dir,
        &HeapTreeOptions {
            select: TimeSelect::Snapshot(0),
            ..HeapTreeOptions::default()
        },
    )
    .unwrap();
    assert!(first.total_bytes < report.total_bytes);
}

#[test]
fn the_legacy_text_profile_matches_its_header_and_names_frames() {
    let path = go_profiles().join("legacy.heap");
    let text = std::fs::read_to_string(&path).unwrap();
    // `heap profile: <inuse objects>: <inuse bytes> [<alloc objects>: <alloc bytes>] @ heap/2`
    let header: Vec<u64> = text
        .lines()
        .next()
        .unwrap()
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|t| t.parse().ok())
        .collect();
    let profile = read_profile(&path).unwrap();
    assert_eq!(profile.format, ProfileFormat::HeapText);
    for (measure, bytes, objects) in [
        ("inuse", header[1], header[0]),
        ("alloc", header[3], header[2]),
    ] {
        let heap = ProfileHeap::new(&profile, profile.measure(Some(measure)).unwrap());
        let sizes = heap.sizes(0).unwrap();
        assert_eq!(
            (sizes.bytes(0), sizes.objects(0)),
            (bytes, objects),
            "{measure}"
        );
    }
    // Go's `#` lines name the frames: the 3000 leaked blocks are under main.leak.
    let ours = level_one(&profile, "inuse");
    assert!(ours["main.leak"] >= 3000 * 4096, "{ours:?}");
}

fn c_program(dir: &Path, source: &str) -> PathBuf {
    require_tool("gcc", &["--version"], "gcc");
    let c = dir.join("prog.c");
    std::fs::write(&c, source).unwrap();
    let exe = dir.join("prog");
    let status = Command::new("gcc")
        .args(["-g", "-O1", "-fno-omit-frame-pointer", "-o"])
        .arg(&exe)
        .arg(&c)
        .status()
        .unwrap();
    assert!(status.success());
    exe
}

const C_LEAK: &str = r#"
#include <stdlib.h>
#include <string.h>
static char *kept[100];
__attribute__((noinline)) char *never_read(void) { char *p = malloc(1000); memset(p, 1, 1000); return p; }
__attribute__((noinline)) int read_twice(void) {
    volatile int *p = malloc(400); memset((void *)p, 0, 400); int s = 0;
    for (int k = 0; k < 2; k++) for (int i = 0; i < 100; i++) s += p[i];
    free((void *)p); return s;
}
int main(void) { int s = 0; for (int i = 0; i < 100; i++) { kept[i] = never_read(); s += read_twice(); } return s & 1; }
"#;

#[test]
fn jemalloc_heap_profiles_read_with_symbols_and_exact_sizes() {
    let lib = [
        "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2",
        "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2",
    ]
    .into_iter()
    .find(|l| Path::new(l).exists())
    .expect("libjemalloc.so.2 is missing: install the Debian package `libjemalloc2`");
    let dir = tempfile::tempdir().unwrap();
    let exe = c_program(dir.path(), C_LEAK);
    let prefix = dir.path().join("jeprof");
    // lg_prof_sample:0 samples every allocation, so sizes are exact; prof_accum counts the
    // allocations of the whole run too.
    let status = Command::new(&exe)
        .env("LD_PRELOAD", lib)
        .env(
            "MALLOC_CONF",
            format!(
                "prof:true,prof_accum:true,prof_final:true,lg_prof_sample:0,prof_prefix:{}",
                prefix.display()
            ),
        )
        .status()
        .unwrap();
    assert!(status.success());
    let file = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "heap"))
        .expect("jemalloc wrote no heap profile: is Debian's jemalloc built with --enable-prof?");
    let profile = read_profile(&file).unwrap();
    assert_eq!(profile.format, ProfileFormat::HeapText);
    let ours = level_one(&profile, "inuse");
    // The allocator's frames are pruned: the 100 kept blocks are never_read's. jemalloc
    // records the size class it served (1000 → 1024 bytes).
    assert_eq!(ours.get("never_read"), Some(&102_400), "{ours:?}");
    assert!(
        !ours.contains_key("read_twice"),
        "read_twice frees all it allocates"
    );
    let heap = ProfileHeap::new(&profile, profile.measure(Some("inuse")).unwrap());
    let sizes = heap.sizes(0).unwrap();
    let node = heap.trie().find("never_read").unwrap();
    assert_eq!(sizes.objects(node), 100);
    // 100 blocks of 1024 (+ 100 freed 400-byte ones) were allocated in all.
    let alloc = level_one(&profile, "alloc");
    assert_eq!(alloc.get("read_twice"), Some(&(100 * 448)), "{alloc:?}");
}

#[test]
fn dhat_measures_totals_reads_and_never_read() {
    require_tool("valgrind", &["--version"], "valgrind");
    let dir = tempfile::tempdir().unwrap();
    let exe = c_program(dir.path(), C_LEAK);
    let json = dir.path().join("dhat.json");
    let out = Command::new("valgrind")
        .arg("--tool=dhat")
        .arg(format!("--dhat-out-file={}", json.display()))
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let profile = read_profile(&json).unwrap();
    assert_eq!(profile.format, ProfileFormat::Dhat);
    assert!(profile.warnings.is_empty(), "{}", profile.warnings);
    let measures: Vec<String> = profile.measures().into_iter().map(|m| m.name).collect();
    for m in [
        "total",
        "at_gmax",
        "at_end",
        "max",
        "reads",
        "writes",
        "never_read",
        "lifetime",
    ] {
        assert!(measures.contains(&m.to_owned()), "{m} in {measures:?}");
    }
    let at = |measure: &str| level_one(&profile, measure);
    // 100 × 1000 bytes kept and never read; 100 × 400 bytes read twice and freed.
    assert_eq!(at("total").get("never_read"), Some(&100_000));
    assert_eq!(at("total").get("read_twice"), Some(&40_000));
    assert_eq!(at("never_read").get("never_read"), Some(&100_000));
    assert_eq!(at("never_read").get("read_twice"), None);
    assert_eq!(at("reads").get("read_twice"), Some(&80_000));
    assert_eq!(at("writes").get("never_read"), Some(&100_000));
    assert_eq!(at("at_end").get("never_read"), Some(&100_000));
    assert_eq!(at("at_end").get("read_twice"), None);
    assert!(at("lifetime")["never_read"] > at("lifetime")["read_twice"]);
    let objects = {
        let m = profile.measure(Some("total")).unwrap();
        let heap = ProfileHeap::new(&profile, m);
        heap.sizes(0).unwrap().objects(0)
    };
    assert_eq!(objects, 200);
}

fn sum_collapsed(text: &str) -> u64 {
    text.lines()
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum()
}

#[test]
fn exports_read_back_in_go_tool_pprof_and_in_our_importer() {
    let dir = go_profiles();
    let out = tempfile::tempdir().unwrap();
    // A Go profile: alloc measure at the first snapshot of the series.
    let input = memscape_heap::load_heap_input(&dir).unwrap();
    let options = HeapTreeOptions {
        select: TimeSelect::Snapshot(1),
        measure: Some("alloc".into()),
        ..HeapTreeOptions::default()
    };
    let heap = heap_at(&input, &options).unwrap();
    let path = out.path().join("go.pb.gz");
    std::fs::write(&path, pprof(&heap)).unwrap();
    let totals = pprof_raw_totals(&path);
    assert_eq!(totals["alloc_space"], heap.sizes.bytes(0));
    assert_eq!(totals["alloc_objects"], heap.sizes.objects(0));
    assert_eq!(sum_collapsed(&collapsed(&heap, false)), heap.sizes.bytes(0));
    // Round trip: the export read by our importer gives the same tree.
    let back = read_profile(&path).unwrap();
    let HeapInput::Profile(original) = &input else {
        panic!()
    };
    let before = {
        let mut p = (**original).clone();
        p.snapshots = vec![p.snapshots[1].clone()];
        level_one(&p, "alloc")
    };
    assert_eq!(level_one(&back, "alloc_space"), before);
    let flat = pprof_flat(&path, "alloc_space");
    let functions: BTreeMap<String, u64> = before.into_iter().collect();
    assert_eq!(flat, functions);

    // The real sqlite heaptrack trace at its peak, whole call stacks.
    let trace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/heaptrack/sqlite_1M.raw.zst");
    let input = memscape_heap::load_heap_input(&trace).unwrap();
    let options = HeapTreeOptions {
        select: TimeSelect::Peak,
        group: vec![memscape_heap::GroupKey::Path],
        ..HeapTreeOptions::default()
    };
    let heap = heap_at(&input, &options).unwrap();
    assert_eq!(heap.sizes.bytes(0), 4_444_354);
    let path = out.path().join("sqlite.pb.gz");
    std::fs::write(&path, pprof(&heap)).unwrap();
    let totals = pprof_raw_totals(&path);
    assert_eq!(totals["inuse_space"], 4_444_354);
    assert_eq!(totals["inuse_objects"], heap.sizes.objects(0));
    let text = collapsed(&heap, false);
    assert_eq!(sum_collapsed(&text), 4_444_354);
    // Collapsed stacks run from the outermost caller: every line starts at the program's
    // entry (or a thread start), never at an allocation site.
    let back = read_profile(&path).unwrap();
    let heap_back = ProfileHeap::new(&back, back.measure(None).unwrap());
    assert_eq!(heap_back.sizes(0).unwrap().bytes(0), 4_444_354);
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn go_bytes() -> Vec<u8> {
        let raw = std::fs::read(go_profiles().join("heap.1.pb.gz")).unwrap();
        memscape_io::decompress(Path::new("x"), raw, 1 << 30).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// Cut or corrupted profile.proto and text profiles: an error or a profile, no panic.
        #[test]
        fn corrupt_profiles_never_panic(cut in 0usize..20_000, at in 0usize..20_000, byte: u8) {
            let mut bytes = go_bytes();
            let len = bytes.len();
            bytes[at % len] = byte;
            bytes.truncate(cut.min(len));
            let _ = memscape_heap::profile::pprof::parse("fuzz.pb", &bytes);
            let text = format!("heap profile: 1: 2 [3: 4] @ heap/{byte}\n{}", String::from_utf8_lossy(&bytes[..cut.min(len).min(200)]));
            let _ = parse_profile("fuzz.heap", text.as_bytes());
        }
    }
}

/// Two Go heap profiles of one run compared (`memscape diff`'s library): each function's
/// change is `go tool pprof`'s flat inuse_space of the later profile minus the earlier's, and
/// the leaking function grew by at least the 2000 × 4 KiB the program kept in between.
#[test]
fn two_go_profiles_compared_match_go_tool_pprof() {
    use memscape_heap::diff::{HeapRef, Status, diff};
    let dir = go_profiles();
    let (pa, pb) = (dir.join("heap.0.pb.gz"), dir.join("heap.2.pb.gz"));
    let (a, b) = (read_profile(&pa).unwrap(), read_profile(&pb).unwrap());
    let options = HeapTreeOptions {
        measure: Some("inuse".into()),
        ..HeapTreeOptions::default()
    };
    let report = diff(HeapRef::Profile(&a), HeapRef::Profile(&b), &options).unwrap();
    let (flat_a, flat_b) = (
        pprof_flat(&pa, "inuse_space"),
        pprof_flat(&pb, "inuse_space"),
    );
    assert_eq!(report.totals.bytes_a, flat_a.values().sum::<u64>());
    assert_eq!(report.totals.bytes_b, flat_b.values().sum::<u64>());
    for node in &report.tree.children {
        let function = node.name.split(" (").next().unwrap();
        let (ta, tb) = (
            flat_a.get(function).copied().unwrap_or(0),
            flat_b.get(function).copied().unwrap_or(0),
        );
        assert_eq!((node.bytes_a, node.bytes_b), (ta, tb), "{}", node.name);
        assert_eq!(node.status, Status::of(ta, tb), "{}", node.name);
    }
    let leak = report
        .tree
        .children
        .iter()
        .find(|n| n.name.contains("main.leak"))
        .expect("main.leak in the comparison");
    assert_eq!(leak.status, Status::Grown);
    // 2000 more 4 KiB buffers, and the growing slice that holds them.
    assert!(leak.objects_b - leak.objects_a >= 2000, "{leak:?}");
    assert!(leak.bytes_b - leak.bytes_a >= 2000 * 4096, "{leak:?}");
    // The sites' changes add up to the roots' change.
    let sum: i64 = report.sites.iter().map(|s| s.bytes_change).sum();
    assert_eq!(sum, report.totals.bytes_change);
}
