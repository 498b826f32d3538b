//! The allocation views on programs recorded here with `memscape record`'s library: who frees
//! what (the GUI panel's table is `info --json`'s, and a row's blocks are exactly that pair's),
//! and the pool allocator demo (`assets/demo/pools.c`): bins by pool with their waste and
//! fragmentation curves, the same numbers as `info --json`'s `pools`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use memscape_views::alloc_map::AllocMapSettings;
use memscape_views::alloc_map::bins::{BinBy, BinnedScene};
use memscape_views::alloc_map::free_sites::FreeSiteTable;
use memscape_views::alloc_map::settings::Panel;
use memscape_views::dataset::{AllocTraceData, Dataset, DatasetContent};

fn shim() -> PathBuf {
    if let Ok(shim) = memscape_record::find_shim() {
        return shim;
    }
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--quiet", "-p", "memscape-recorder"])
        .status()
        .unwrap();
    assert!(status.success());
    memscape_record::find_shim().unwrap()
}

/// Compiles `source` (C, with memscape.h on the include path), records it, loads the trace.
fn record(dir: &Path, name: &str, source: &str, libs: &[&str]) -> memscape_trace::Trace {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, source).unwrap();
    let exe = dir.join(name);
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../memscape-recorder/include");
    let status = Command::new("gcc")
        .args(["-O0", "-g", "-fno-omit-frame-pointer", "-I"])
        .arg(&include)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .args(libs)
        .status()
        .expect("gcc (make test installs it)");
    assert!(status.success());
    let output = dir.join(format!("{name}.msc"));
    memscape_record::record(&memscape_record::RecordOptions {
        output: output.clone(),
        stack_depth: 16,
        no_stacks: false,
        program: exe.display().to_string(),
        args: Vec::new(),
        shim: Some(shim()),
        time_resolution_log2: 4,
    })
    .unwrap();
    memscape_trace::read_msc(&output).unwrap()
}

fn dataset(trace: memscape_trace::Trace) -> Dataset {
    Dataset {
        name: "recorded".into(),
        content: DatasetContent::AllocTrace(Box::new(AllocTraceData::new(trace))),
        links: Default::default(),
    }
}

/// 300 blocks made in `make_a` and freed in `drop_a`, 120 made in `make_b` freed in `drop_b`,
/// and 64 made by the main thread that a worker thread frees (in `drop_b`).
const WHO_FREES: &str = r#"
#include <pthread.h>
#include <stdlib.h>
static void *a[300], *b[120], *c[64];
__attribute__((noinline)) void *make_a(int i) { return malloc(32 + i % 5); }
__attribute__((noinline)) void *make_b(int i) { return malloc(400 + i); }
__attribute__((noinline)) void drop_a(void *p) { free(p); }
__attribute__((noinline)) void drop_b(void *p) { free(p); }
static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 64; i++) drop_b(c[i]);
    return NULL;
}
int main(void) {
    for (int i = 0; i < 300; i++) a[i] = make_a(i);
    for (int i = 0; i < 120; i++) b[i] = make_b(i);
    for (int i = 0; i < 64; i++) c[i] = make_b(1000);
    for (int i = 0; i < 300; i++) drop_a(a[i]);
    for (int i = 0; i < 120; i++) drop_b(b[i]);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    return 0;
}
"#;

#[test]
fn who_frees_what_pairs_the_known_sites_and_threads() {
    let dir = tempfile::tempdir().unwrap();
    let trace = record(dir.path(), "who_frees", WHO_FREES, &["-lpthread"]);
    let table = FreeSiteTable::compute(&trace);
    let info = memscape_trace::info::info(&trace, &memscape_trace::info::InfoOptions::default());
    // One computation: the panel's rows are `info --json`'s `free_sites` (which keeps 20).
    assert_eq!(table.pairs[..info.free_sites.len()], info.free_sites[..]);
    assert_eq!(table.threads, info.cross_thread_frees);
    let row = |alloc: &str, free: &str| {
        table
            .pairs
            .iter()
            .find(|r| r.alloc_location.contains(alloc) && r.free_location.contains(free))
            .unwrap_or_else(|| panic!("no {alloc} × {free} row in {:#?}", table.pairs))
    };
    let aa = row("make_a", "drop_a");
    assert_eq!(
        (aa.blocks, aa.bytes),
        (300, (0..300u64).map(|i| 32 + i % 5).sum())
    );
    // Sites are call stacks: `make_b` called from two lines, `drop_b` from main and from the
    // worker, are three rows.
    let bb: Vec<_> = table
        .pairs
        .iter()
        .filter(|r| r.alloc_location.contains("make_b") && r.free_location.contains("drop_b"))
        .map(|r| r.blocks)
        .collect();
    assert_eq!(bb.iter().sum::<u64>(), 120 + 64, "{bb:?}");
    assert!(bb.contains(&120) && bb.contains(&64), "{bb:?}");
    assert!(
        table
            .pairs
            .iter()
            .all(|r| !(r.alloc_location.contains("make_a") && r.free_location.contains("drop_b")))
    );
    // The row's blocks: exactly its pair's.
    let blocks = memscape_trace::summary::site_pair_blocks(&trace, aa.alloc_site, aa.free_site);
    assert_eq!(blocks.len(), 300);
    let sites = memscape_trace::sites::Sites::new(&trace, &Default::default());
    assert!(blocks.iter().all(|&i| {
        let i = i as usize;
        sites.site(trace.blocks.site[i]) == aa.alloc_site
            && sites.site(trace.blocks.free_site[i]) == aa.free_site
    }));
    // The worker freed the main thread's 64 blocks: one thread pair, 64 frees.
    assert_eq!(table.threads.len(), 1, "{:#?}", table.threads);
    let t = &table.threads[0];
    assert_eq!((t.frees, t.bytes), (64, 64 * 1400));
    let moved = memscape_trace::summary::thread_pair_blocks(&trace, t.alloc_thread, t.free_thread);
    assert_eq!(moved.len(), 64);
}

#[test]
fn the_pool_demo_bins_by_pool_with_waste_and_fragmentation() {
    let dir = tempfile::tempdir().unwrap();
    let source = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/demo/pools.c"),
    )
    .unwrap();
    let trace = record(dir.path(), "pools", &source, &[]);
    assert_eq!(trace.pools.len(), 5);
    // Opened without settings, a trace with pools is binned by pool.
    assert_eq!(BinBy::default_for(&trace), BinBy::Pool);
    let data = dataset(trace);
    let t = data.alloc_trace().unwrap();
    let scene = t.scene.as_ref().unwrap();
    let binned = BinnedScene::build(&t.trace, scene, BinBy::Pool);
    let labels: Vec<&str> = binned.bins.iter().map(|b| b.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "small-16 (16 B blocks)",
            "small-32 (32 B blocks)",
            "small-64 (64 B blocks)",
            "medium-128 (128 B blocks)",
            "medium-256 (256 B blocks)",
            memscape_trace::bins::HEAP_BIN_LABEL,
        ]
    );
    // Pool bins hold pool blocks only, inside the pool's range.
    for (i, &bin) in binned.block_bin.iter().enumerate() {
        let pooled = t.trace.blocks.flags[i] & memscape_trace::model::FLAG_POOL != 0;
        assert_eq!(pooled, (bin as usize) < 5, "block {i}");
        if pooled {
            let p = &t.trace.pools[bin as usize];
            assert!(t.trace.blocks.address[i] >= p.start && t.trace.blocks.address[i] < p.end);
        }
    }
    // The curves under the bins are `info --json`'s `pools`.
    let curves = memscape_views::alloc_map::curves::bin_curves(&t.trace, &binned);
    let reports = memscape_trace::pools::pool_reports(
        &t.trace,
        memscape_views::alloc_map::curves::CURVE_SAMPLES,
    );
    for (c, r) in curves.iter().zip(&reports) {
        assert_eq!(c, &r.curves, "{}", r.name);
    }
    // What the workload does shows: freeing every other block fragments the small pools
    // (most of their free space is holes), a 128-byte block holding 65–84 bytes wastes about
    // 40 %, and the 256-byte spikes fill their pool for a moment.
    assert!(
        curves[0].peak_fragmentation > 0.9,
        "{}",
        curves[0].peak_fragmentation
    );
    let waste_128 = curves[3]
        .samples
        .iter()
        .filter(|s| s.live_bytes > 0)
        .map(|s| s.waste_bytes as f64 / s.live_bytes as f64)
        .fold(0.0, f64::max);
    assert!((0.3..0.5).contains(&waste_128), "{waste_128}");
    assert!(
        curves[4].peak_occupancy > 0.99,
        "{}",
        curves[4].peak_occupancy
    );
    // The picture: a curve strip under each of the six bins.
    let settings = AllocMapSettings {
        bins: Some(BinBy::Pool),
        panels: vec![Panel::Main, Panel::Occupancy, Panel::Curves],
        ..AllocMapSettings::default()
    };
    let picture =
        memscape_views::alloc_map::compose::compose(&data, &settings, egui::vec2(1400.0, 800.0))
            .unwrap();
    let strips = picture
        .labels
        .iter()
        .filter(|l| l.text.starts_with("frag. ≤"))
        .count();
    assert_eq!(strips, 2 * 6, "a caption (and its shadow) per bin");
}
