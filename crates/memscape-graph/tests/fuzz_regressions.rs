//! Inputs the fuzzers found failing (`scripts/fuzz.sh`), each with what it did.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

/// 7 KB of BGV whose source positions quote earlier ones (as their places' URIs) several
/// times each: texts nested into gigabytes (2.4 GB RSS, > 10 s: the `igv_xml` target's
/// timeout, 2026-11-26). Texts composed of pool objects are capped now.
#[test]
fn bgv_source_positions_quoting_each_other_stay_small() {
    let bytes = include_bytes!("data/fuzz/bgv-memory-blowup.bgv");
    let start = Instant::now();
    let imported = memscape_graph::bgv::parse_bgv(bytes, "blowup.bgv");
    let elapsed = start.elapsed();
    // Whatever it imports (or the error it stops at), quickly and small.
    if let Ok(imported) = &imported {
        let longest = imported
            .document
            .groups
            .iter()
            .flat_map(|g| g.graphs.iter())
            .flat_map(|g| g.nodes.iter())
            .flat_map(|n| n.properties.iter())
            .map(|(_, v)| v.len())
            .max()
            .unwrap_or(0);
        assert!(longest < 64 * 1024, "{longest}");
    }
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
}
