//! The pool demo allocator (`assets/demo/pools.c`, declaring its pools through `memscape.h`)
//! recorded at test time: the pool table, pool blocks and their curves; the heap counts equal
//! valgrind's (valgrind sees only malloc/free); free sites name the freeing function.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::Command;

use common::*;

#[test]
fn the_pool_demo_records_its_pools_curves_and_free_sites() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let program = dir.path().join("pools");
    require("gcc", "gcc");
    assert!(
        Command::new("gcc")
            .args(["-O0", "-g", "-I"])
            .arg(root.join("crates/memscape-recorder/include"))
            .arg("-o")
            .arg(&program)
            .arg(root.join("assets/demo/pools.c"))
            .status()
            .unwrap()
            .success()
    );
    // Without the recorder the header's calls do nothing and the program runs as it is.
    assert!(Command::new(&program).output().unwrap().status.success());
    let report = record_program(&program, &[], dir.path());
    assert_eq!(report.exit_status, 0);
    let trace = memscape_trace::read_msc(&report.output).unwrap();
    let names: Vec<&str> = trace.pools.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "small-16",
            "small-32",
            "small-64",
            "medium-128",
            "medium-256"
        ]
    );
    assert!(trace.meta.pool_allocs > 20_000);
    assert_eq!(trace.meta.pool_allocs, trace.meta.pool_frees, "drained");
    // The heap (the pools' arenas and the fallback) is what valgrind counts.
    assert_eq!(
        vec![(trace.meta.allocs, trace.meta.frees)],
        valgrind_counts(&program, &[], dir.path())
    );
    let reports = memscape_trace::pools::pool_reports(&trace, 64);
    for p in &reports {
        let c = &p.curves;
        assert!(c.samples.len() <= 70, "{} samples", c.samples.len());
        let last = c.samples.last().unwrap();
        assert_eq!((last.live_blocks, last.live_bytes), (0, 0), "{}", p.name);
        assert!(
            c.peak_occupancy > 0.3 && c.peak_occupancy <= 1.0,
            "{}",
            p.name
        );
        assert!(
            c.samples
                .iter()
                .all(|s| (0.0..=1.0).contains(&s.fragmentation))
        );
    }
    // The 256-byte spikes take every block of their class for a moment.
    assert_eq!(reports[4].curves.peak_occupancy, 1.0);
    // Freeing every other block fragments the free space of the fullest class.
    assert!(reports[0].curves.peak_fragmentation > 0.5);
    // Every freed block knows its free site: pool_free (pool and fallback blocks alike).
    let pairs = memscape_trace::summary::site_pairs(&trace, 50);
    assert!(!pairs.is_empty());
    assert!(
        pairs[0].free_location.contains("pool_free"),
        "{:?}",
        pairs[0]
    );
}
