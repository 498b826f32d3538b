//! The index file format: a built index reopens with the same header; bad, truncated,
//! foreign-version and corrupted files are clear errors or draw garbage, never a panic or an
//! allocation sized by an unchecked field.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::color;

use memscape_lod::resolve::accumulate;
use memscape_lod::sidecar;
use memscape_lod::synth::{SynthParams, trace};
use memscape_lod::trace_source::{TraceBlocks, TraceFile};
use memscape_lod::{LodError, LodIndex, LodView, PixelSums};

fn built(dir: &std::path::Path) -> (TraceFile, std::path::PathBuf) {
    let file = TraceFile::from_trace(trace(SynthParams::new(200_000, 3)));
    let out = common::build_index(&file, dir);
    (file, out)
}

fn open_err(path: &std::path::Path) -> String {
    match LodIndex::open(path) {
        Ok(_) => panic!("{} opened", path.display()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn reopens_and_rejects_bad_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (file, out) = built(dir.path());
    let index = LodIndex::open(&out).expect("open");
    assert!(!index.levels.is_empty() && !index.classes.is_empty());
    assert_eq!(index.meta.blocks, file.columns().len() as u64);
    assert_eq!(index.meta.coloring, "thread");
    // The index belongs to its trace until the trace changes.
    let trace_path = dir.path().join("t.msc");
    let events = file.trace.meta.events;
    let n = index.meta.blocks;
    assert!(sidecar::open_current(&out, &trace_path, events, n, "thread").is_some());
    assert!(sidecar::open_current(&out, &trace_path, events, n, "size").is_none());
    assert!(sidecar::open_current(&out, &trace_path, events + 1, n, "thread").is_none());

    let bytes = std::fs::read(&out).expect("read");
    let bad = dir.path().join("bad.lod");
    let write = |b: &[u8]| std::fs::write(&bad, b).expect("write");

    write(b"");
    assert!(open_err(&bad).contains("bad magic"));
    write(b"PK\x03\x04 not an index at all");
    assert!(open_err(&bad).contains("bad magic"));

    let mut v = bytes.clone();
    v[8..12].copy_from_slice(&99u32.to_le_bytes());
    write(&v);
    let e = open_err(&bad);
    let want = format!("version 99, expected {}", memscape_lod::VERSION);
    assert!(e.contains(&want), "{e}");
    assert!(e.contains("bad.lod"), "names the file: {e}");

    // A header length far beyond the file (allocating it would take exabytes).
    let mut v = bytes.clone();
    v[12..20].copy_from_slice(&(u64::MAX - 7).to_le_bytes());
    write(&v);
    assert!(open_err(&bad).contains("header longer than the file"));

    // Truncated anywhere: in the header, in the JSON, in the sections.
    for cut in [19, 40, bytes.len() / 2, bytes.len() - 8] {
        write(&bytes[..cut]);
        let e = open_err(&bad);
        assert!(
            e.contains("header") || e.contains("outside the file"),
            "cut at {cut}: {e}"
        );
    }

    // A section whose length is no multiple of its records.
    let json_len = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes")) as usize;
    let json = std::str::from_utf8(&bytes[20..20 + json_len]).expect("utf-8");
    let mut meta: serde_json::Value = serde_json::from_str(json).expect("json");
    meta["levels"][0]["cells"]["len"] = serde_json::json!(73);
    let mut v = bytes[..20].to_vec();
    let j = serde_json::to_vec(&meta).expect("json");
    v[12..20].copy_from_slice(&(j.len() as u64).to_le_bytes());
    v.extend_from_slice(&j);
    write(&v);
    assert!(open_err(&bad).contains("level cells"));
    assert!(matches!(LodIndex::open(&bad), Err(LodError::Format(_))));
}

/// An index of the same trace whose levels stop short of those laid out now (as wave 13's,
/// whose grid was counted over the plane rounded up to powers of two) is not current: opening
/// builds it again; the current one is taken as it is.
#[test]
fn an_index_with_older_levels_is_rebuilt() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = TraceFile::from_trace(trace(SynthParams::new(200_000, 3)));
    let trace_path = dir.path().join("t.msc");
    std::fs::write(&trace_path, b"stand-in").expect("write");
    let out = sidecar::index_path(&trace_path, "thread");
    let build = |params: &memscape_lod::BuildParams| {
        sidecar::build(
            &file,
            &trace_path,
            &out,
            sidecar::Coloring {
                name: "thread",
                color: &color,
            },
            params,
            &mut |_, _| {},
            &std::sync::atomic::AtomicBool::new(false),
        )
        .expect("build")
    };
    let (events, n) = (file.trace.meta.events, file.columns().len() as u64);
    let older = build(&memscape_lod::BuildParams {
        max_cells_per_block: 0.25,
        ..Default::default()
    });
    assert!(!sidecar::has_current_levels(&older));
    assert!(sidecar::open_current(&out, &trace_path, events, n, "thread").is_none());
    let now = build(&memscape_lod::BuildParams::default());
    assert!(now.levels.len() > older.levels.len());
    assert!(sidecar::has_current_levels(&now));
    assert!(sidecar::open_current(&out, &trace_path, events, n, "thread").is_some());
}

#[test]
fn corrupted_records_draw_without_panicking() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (file, out) = built(dir.path());
    let good = std::fs::read(&out).expect("read");
    let json_len = u64::from_le_bytes(good[12..20].try_into().expect("8 bytes")) as usize;
    let data = (20 + json_len).next_multiple_of(8);
    // Deterministic garbage over the records (bucket indices, counts, rows, block numbers).
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for round in 0..6 {
        let mut v = good.clone();
        for _ in 0..(v.len() - data) / 16 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let at = data + (state as usize) % (v.len() - data);
            v[at] = (state >> 32) as u8;
        }
        let bad = dir.path().join(format!("garbage{round}.lod"));
        std::fs::write(&bad, &v).expect("write");
        let index = LodIndex::open(&bad).expect("the header is intact");
        let axis = index.meta.axis.clone();
        let source = TraceBlocks {
            columns: file.columns(),
            axis: &axis,
            color: &color,
            index: &index,
        };
        for (w, h) in [(64, 36), (200, 120)] {
            let view = LodView::fit(0, index.meta.extent_t, 0, axis.extent, w, h);
            let mut sums = PixelSums::new(w, h);
            accumulate(&index, &source, &view, &mut sums);
            assert_eq!(sums.resolve(&view).len(), (w * h) as usize);
        }
    }
}

/// Two lines of blocks at reused addresses (one centre each) and other blocks a 64th of the
/// plane below them, so that no quarter of a slice holds both: at every level, each cell's
/// fullest quarter of the line's spot slice keeps the line's centre to one step
/// (`CellRec::spot_lines`: both lines at its step), the levels merged from finer ones included
/// (the builder's least and greatest centres are exact through the merges).
#[test]
fn every_level_keeps_a_reused_address_line_to_one_step() {
    use memscape_lod::format::{CellRec, PROFILE_BINS, SPOT_LINE_STEPS, SPOT_QUARTERS};
    use memscape_lod::{LodBlock, LodBuilder};
    let dir = tempfile::tempdir().expect("tempdir");
    let (extent_t, extent_y) = (1u64 << 20, 1u64 << 20);
    let lines = [(300_001u64, 16u64), (700_003, 40)];
    let mut blocks = Vec::new();
    for i in 0..40_000u64 {
        let t0 = i * 25;
        let (y, size) = lines[(i % 2) as usize];
        blocks.push(LodBlock::new(t0, t0 + 7, y, size, 0xff00_00ff, 0.0));
        // Others in the lowest 64th of the addresses.
        blocks.push(LodBlock::new(
            t0 + 3,
            t0 + 40,
            (i * 7919) % 16_000,
            8,
            0xff00_ff00,
            0.0,
        ));
    }
    blocks.sort_by_key(|b| b.t0);
    let scratch = dir.path().join("scratch");
    let mut builder = LodBuilder::new(
        &scratch,
        extent_t,
        extent_y,
        blocks.len() as u64,
        &Default::default(),
    )
    .expect("builder");
    for (i, b) in blocks.iter().enumerate() {
        builder.push(i as u64, b).expect("push");
    }
    let out = dir.path().join("t.lod");
    let axis = memscape_lod::source::AddressAxis::from_ranges(&[(0, extent_y)]);
    builder
        .finish(&out, Default::default(), axis, "thread")
        .expect("finish");
    let index = LodIndex::open(&out).expect("open");
    let (mut checked, mut levels) = (0usize, 0usize);
    for level in &index.levels {
        let sig = 1u64 << level.desc.log_sig;
        let mut here = 0;
        level.cells_in([0, u64::MAX / 2], [0, u64::MAX / 2], |_, cell| {
            for (k, spot) in cell.spots_y().into_iter().enumerate() {
                let Some(i) = CellRec::spot_quarter(cell.spot_y[k]) else {
                    continue;
                };
                for &(y, size) in &lines {
                    // The line's centre in the cell, as the builder computes it.
                    let c2 = 2 * y + size;
                    if c2 / (2 * sig) != cell.ky {
                        continue;
                    }
                    let u = (c2 % (2 * sig)) as f64 / (2 * sig) as f64;
                    let quarter = (u * (PROFILE_BINS * SPOT_QUARTERS) as f64) as usize;
                    if quarter != spot.slice * SPOT_QUARTERS + i {
                        continue;
                    }
                    let steps = SPOT_LINE_STEPS as usize;
                    let step = (u * (PROFILE_BINS * SPOT_QUARTERS * steps) as f64) as usize
                        - quarter * steps;
                    assert_eq!(
                        CellRec::spot_line_parts(cell.spot_lines[k]),
                        Some((step as u32, step as u32, 0.0)),
                        "level {:?}, cell row {}: line at {y}",
                        level.desc,
                        cell.ky
                    );
                    let parts: Vec<_> = spot.parts().iter().filter(|p| p.quarter == i).collect();
                    assert_eq!(parts.len(), 1);
                    let [lo, hi] = parts[0].range;
                    assert!(lo <= u && u < hi && hi - lo < 2e-5, "{lo} {u} {hi}");
                    here += 1;
                }
            }
        });
        checked += here;
        levels += usize::from(here > 0);
    }
    assert!(
        levels >= 8 && checked >= 100,
        "{levels} levels, {checked} cells"
    );
}
