//! The streaming builder's memory bound: building the index of a mapped trace whose block
//! columns are several times larger than the bound keeps the process's anonymous memory (its
//! heap: the mapped trace and the written index are file pages the kernel may drop) under
//! [`BOUND_BYTES`] above where it started. One test in its own process, so that no other test's
//! allocations count.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::AtomicBool;

use memscape_lod::sidecar::{Coloring, build_columns};
use memscape_lod::source::palette_color;
use memscape_lod::synth::{SynthParams, write_mappable};
use memscape_lod::trace_source::MappedColumns;
use memscape_lod::{BuildParams, LodIndex, SourceId};

/// The builder's working set: the open columns of every level (cells whose column is still
/// receiving blocks, a few columns per level), 64 KiB write buffers per level file and size
/// class, and the address regions. 36 MiB since index format 7 (wave 31): the open cells of
/// more than 16 blocks keep their occupied spot quarters' lines (`CellRec::spot_lines`), and
/// this build grew by 33.8 MB where format 6's grew by 31.4 MB (32 MiB before).
const BOUND_BYTES: u64 = 36 << 20;

fn rss_anon() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("RssAnon:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

#[test]
fn building_a_large_mapped_trace_stays_within_the_bound() {
    if !std::path::Path::new("/proc/self/status").exists() {
        return; // RssAnon is Linux's.
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("big.msc");
    let meta =
        write_mappable(SynthParams::new(8_000_000, 5), &path, &mut |_| {}).expect("generate");
    let mapped = MappedColumns::open(&path)
        .expect("open")
        .expect("a mappable .msc");
    let cols = mapped.columns();
    let n = cols.len() as u64;
    // What a per-block array of the trace would take: its columns (45 B a block).
    let column_bytes = n * (8 * 4 + 4 * 2 + 1);
    assert!(
        column_bytes > 4 * BOUND_BYTES,
        "{column_bytes} B of columns is not far beyond the bound"
    );
    let color = |t: u32, _s: u32, _z: u64, _l: u64| (palette_color(t), 0.0f32);
    let out = dir.path().join("big.lod");
    let base = rss_anon();
    let mut peak = base;
    let source = SourceId::of_file(&path, meta.events, n);
    build_columns(
        &cols,
        source,
        &out,
        Coloring {
            name: "thread",
            color: &color,
        },
        &BuildParams::default(),
        &mut |_, _| peak = peak.max(rss_anon()),
        &AtomicBool::new(false),
    )
    .expect("build");
    let grown = peak.saturating_sub(base);
    eprintln!(
        "{n} blocks, {} MB of columns: the build grew anonymous memory by {:.1} MB",
        column_bytes >> 20,
        grown as f64 / (1 << 20) as f64
    );
    assert!(
        grown < BOUND_BYTES,
        "anonymous memory grew by {grown} B, bound {BOUND_BYTES} B"
    );
    let index = LodIndex::open(&out).expect("open index");
    assert_eq!(index.meta.blocks, n);
    let summarised: u64 = index.levels.iter().map(|l| l.desc.blocks).sum();
    assert!(summarised > 0);
}
