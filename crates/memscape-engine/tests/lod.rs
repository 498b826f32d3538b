//! The engine's level-of-detail tiles equal memscape-lod's native builder on recorded traces
//! (written as a two-host Parquet dataset): the same levels, the same cells with the same block
//! counts, bucket counts and buckets, and every stored mean, bounding box, profile and colour
//! equal or one unit of its code apart (the engine adds the same values in another order). Run
//! embedded and on Ballista's standalone mode.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use memscape_engine::lod::{LevelSpec, LevelTiles};
use memscape_engine::{Dataset, Engine};
use memscape_lod::format::{BucketRec, CellRec, FEW_BLOCKS_FINE};
use memscape_lod::sidecar::{Coloring, build_columns};
use memscape_lod::source::palette_color;
use memscape_lod::trace_source::TraceFile;
use memscape_lod::{BuildParams, LodIndex, SourceId};
use memscape_parquet::trace::TraceWriteOptions;
use memscape_trace::Trace;

fn repo() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    dir.canonicalize().unwrap_or(dir)
}

fn thread_color(thread: u32, _site: u32, _size: u64, _life: u64) -> (u32, f32) {
    (palette_color(thread), 0.0)
}

/// The native index of `trace` (thread colouring, default parameters).
fn native_index(trace: Trace, dir: &Path) -> LodIndex {
    let file = TraceFile::from_trace(trace);
    let cols = file.columns();
    let source = SourceId {
        path: String::from("test"),
        len: 0,
        modified_ns: 0,
        events: file.trace.meta.events,
        blocks: cols.len() as u64,
    };
    let out = dir.join("native.lod");
    build_columns(
        &cols,
        source,
        &out,
        Coloring {
            name: "thread",
            color: &thread_color,
        },
        &BuildParams::default(),
        &mut |_, _| {},
        &AtomicBool::new(false),
    )
    .unwrap();
    LodIndex::open(&out).unwrap()
}

/// How far the engine's records are from the native ones.
#[derive(Debug, Default)]
struct Diff {
    cells: usize,
    buckets: usize,
    cells_exact: usize,
    buckets_exact: usize,
}

fn near(a: u16, b: u16) -> bool {
    a.abs_diff(b) <= 1
}

fn check_cell(got: &CellRec, want: &CellRec, what: &str) -> bool {
    assert_eq!(got.ky, want.ky, "{what}");
    assert_eq!(got.n, want.n, "{what}: blocks");
    assert_eq!(got.buckets, want.buckets, "{what}: buckets");
    assert_eq!(got.bucket_first, want.bucket_first, "{what}");
    for k in 0..4 {
        let code = |c: &CellRec| u16::from_be_bytes([c.bbox[k], c.bbox_fine[k]]);
        assert!(
            near(code(got), code(want)),
            "{what}: bounding box edge {k}: {} vs {}",
            code(got),
            code(want)
        );
    }
    for (g, w) in [(got.mean_w, want.mean_w), (got.mean_h, want.mean_h)] {
        assert!(
            (g - w).abs() <= w.abs() * 4.0 * f32::EPSILON,
            "{what}: mean {g} vs {w}"
        );
    }
    assert_eq!(got.mask, want.mask, "{what}: joint mask");
    // The slices' mean centres: sums of exact offsets, the same in any order.
    assert_eq!(got.spot_y, want.spot_y, "{what}: spots of the y profile");
    // The two lines of each spot slice's fullest quarter: the least and greatest f32 centres
    // (here per group, natively merged level by level in f64), the same step or, where a
    // centre's f32 rounding at this level crosses a step's edge, one apart; the upper line's
    // share from the mean of centres rounded at another level (≤ 3·10⁻⁸ of a cell apart, a
    // step is 1.5·10⁻⁵), within 1/64 of it.
    for (g, w) in got.spot_lines.iter().zip(&want.spot_lines) {
        let parts = |v: u32| [v & 0x3ff, (v >> 10) & 0x3ff, v >> 20];
        let close = parts(*g)
            .iter()
            .zip(parts(*w))
            .zip([1, 1, 64])
            .all(|((a, b), tolerance)| a.abs_diff(b) <= tolerance);
        assert!(
            close,
            "{what}: spot lines {:?} vs {:?}",
            got.spot_lines.map(parts),
            want.spot_lines.map(parts)
        );
    }
    // A cell of few blocks keeps their centres (in the builder's arrival order: compared as
    // sets, each within one unit of its code).
    if let (Some(g), Some(w)) = (got.few(), want.few()) {
        let sorted = |it: &mut dyn Iterator<Item = [f64; 2]>| {
            let mut v: Vec<[f64; 2]> = it.collect();
            v.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
            v
        };
        let (g, w) = (sorted(&mut { g }), sorted(&mut { w }));
        assert_eq!(g.len(), w.len(), "{what}");
        let unit = if got.n as usize <= FEW_BLOCKS_FINE {
            65535.0
        } else {
            255.0
        };
        for (a, b) in g.iter().zip(&w) {
            for k in 0..2 {
                assert!(
                    (a[k] - b[k]).abs() * unit <= 1.0 + 1e-9,
                    "{what}: centres {g:?} vs {w:?}"
                );
            }
        }
        let strip = |c: &CellRec| CellRec {
            profile_x: [0; 16],
            profile_y: [0; 16],
            ..*c
        };
        return g == w && strip(got) == strip(want);
    }
    for (g, w) in [
        (got.profile_x, want.profile_x),
        (got.profile_y, want.profile_y),
    ] {
        for j in 0..g.len() {
            assert!(
                near(u16::from(g[j]), u16::from(w[j])) && (g[j] == 0) == (w[j] == 0),
                "{what}: profile {g:?} vs {w:?}"
            );
        }
    }
    got == want
}

fn check_bucket(got: &BucketRec, want: &BucketRec, what: &str) -> bool {
    assert_eq!((got.b, got.n), (want.b, want.n), "{what}: bucket");
    assert!(
        near(got.mean_frac, want.mean_frac),
        "{what}: {got:?} vs {want:?}"
    );
    assert!(
        got.cv2.abs_diff(want.cv2) <= 1,
        "{what}: {got:?} vs {want:?}"
    );
    for k in 0..3 {
        assert!(near(got.rgb[k], want.rgb[k]), "{what}: {got:?} vs {want:?}");
    }
    assert_eq!(got.attr, want.attr, "{what}");
    got == want
}

fn check_level(got: &LevelTiles, index: &LodIndex, at: usize, what: &str, diff: &mut Diff) {
    let level = &index.levels[at];
    let summarised: f64 = level.cells.iter().map(|c| f64::from(c.n)).sum();
    assert_eq!(
        got.blocks as f64, summarised,
        "{what}: blocks small at the level"
    );
    assert_eq!(&got.columns[..], &level.columns[..], "{what}: columns");
    assert_eq!(got.cells.len(), level.cells.len(), "{what}: cells");
    assert_eq!(got.buckets.len(), level.buckets.len(), "{what}: buckets");
    for (i, (g, w)) in got.cells.iter().zip(level.cells.iter()).enumerate() {
        diff.cells += 1;
        diff.cells_exact += usize::from(check_cell(g, w, &format!("{what} cell {i}")));
    }
    for (i, (g, w)) in got.buckets.iter().zip(level.buckets.iter()).enumerate() {
        diff.buckets += 1;
        diff.buckets_exact += usize::from(check_bucket(g, w, &format!("{what} bucket {i}")));
    }
}

/// Checks the engine's plan against the native index, then the levels `pick` chooses.
fn check_trace(
    engine: &Engine,
    ds: &Dataset,
    host: &str,
    index: &LodIndex,
    pick: impl Fn(usize, &LevelSpec) -> bool,
) -> Diff {
    let plan = engine
        .lod_plan(ds, Some(host), &BuildParams::default())
        .unwrap();
    assert_eq!(plan.axis, index.meta.axis, "{host}: address axis");
    assert_eq!(plan.extent_t, index.meta.extent_t, "{host}");
    assert_eq!(
        (plan.log_t, plan.log_y),
        (index.meta.log_t, index.meta.log_y)
    );
    assert_eq!(plan.blocks, index.meta.blocks, "{host}");
    let shapes: Vec<(u8, u8)> = plan.levels.iter().map(|l| (l.log_tau, l.log_sig)).collect();
    let native: Vec<(u8, u8)> = index
        .meta
        .levels
        .iter()
        .map(|l| (l.log_tau, l.log_sig))
        .collect();
    assert_eq!(shapes, native, "{host}: levels");
    let mut diff = Diff::default();
    for (i, level) in plan.levels.iter().enumerate() {
        if !pick(i, level) {
            continue;
        }
        let got = engine.lod_level(ds, Some(host), &plan, level).unwrap();
        let what = format!("{host} line {} level {}", level.line, level.k);
        check_level(&got, index, i, &what, &mut diff);
    }
    assert!(diff.cells > 0 && diff.buckets > 0, "{host}: {diff:?}");
    eprintln!("{host}: {diff:?}");
    diff
}

fn traces() -> Vec<(Trace, &'static str)> {
    vec![
        (
            memscape_trace::load(&repo().join("assets/demo/kvstore.msc")).unwrap(),
            "kvstore",
        ),
        (
            memscape_trace::load(&repo().join("../shared/data/heaptrack/sqlite_1M.raw.zst"))
                .unwrap(),
            "sqlite",
        ),
        // A pool allocator recorded by memscape: size-class pools beside a fallback heap.
        (
            memscape_trace::load(&repo().join("assets/demo/pools.msc")).unwrap(),
            "pools",
        ),
    ]
}

fn dataset(traces: &[(Trace, &str)], dir: &Path) {
    for (trace, host) in traces {
        let options = TraceWriteOptions {
            host: (*host).to_owned(),
            windows: 9,
        };
        memscape_parquet::write_trace(trace, dir, &options).unwrap();
    }
}

#[test]
fn lod_tiles_on_embedded_datafusion_equal_the_native_builder() {
    let dir = tempfile::tempdir().unwrap();
    let traces = traces();
    dataset(&traces, &dir.path().join("ds"));
    let engine = Engine::embedded(2).unwrap();
    let ds = engine.open(&dir.path().join("ds")).unwrap();
    for (trace, host) in traces {
        let index = native_index(trace, dir.path());
        // kvstore: every level; sqlite (1 M events): every level of the square line and the
        // two coarsest of the others.
        let levels = index.meta.levels.len();
        let small = host == "kvstore";
        let diff = check_trace(&engine, &ds, host, &index, |_, l| {
            small || l.line == 0 || l.k <= 1
        });
        assert!(levels > 8, "{host}: {levels} levels");
        // Most records are bit for bit the native ones.
        assert!(
            diff.cells_exact * 100 >= diff.cells * 99,
            "{host}: {diff:?}"
        );
        assert!(
            diff.buckets_exact * 10 >= diff.buckets * 9,
            "{host}: {diff:?}"
        );
    }
}

#[cfg(feature = "ballista")]
#[test]
fn lod_tiles_on_ballista_standalone_equal_the_native_builder() {
    use memscape_engine::EngineSpec;
    let dir = tempfile::tempdir().unwrap();
    let (trace, host) = traces().swap_remove(0);
    // Nine time windows: a multi-partition dataset.
    dataset(&[(trace.clone(), host)], &dir.path().join("ds"));
    let engine = Engine::connect(&EngineSpec::Standalone {
        executors: 2,
        slots: 1,
    })
    .unwrap();
    let ds = engine.open(&dir.path().join("ds")).unwrap();
    let index = native_index(trace, dir.path());
    // Every query is a Ballista job (about a second each on loopback): three levels of two
    // lines, the embedded test above covers every level.
    check_trace(&engine, &ds, host, &index, |_, l| {
        (l.line == 0 && l.k <= 1) || (l.line == 4 && l.k == 0)
    });
}

/// The index file the engine writes (`lod_index`: chosen levels and the size classes, in
/// memscape-lod's format) opens with memscape-lod's own reader; its levels are the native
/// index's, its size classes hold the native classes' blocks in the same order (the native
/// builder lists some by block number: those are read from the trace), and a view drawn from it
/// through `LodTrace::with_index` is the native index's view, pixel for pixel.
#[test]
fn the_engines_index_file_is_the_native_index_for_the_levels_it_holds() {
    use memscape_lod::trace_source::lod_block;
    use memscape_lod::{FramePath, LodTrace, LodView};
    let dir = tempfile::tempdir().unwrap();
    let (trace, host) = traces().swap_remove(0);
    dataset(&[(trace.clone(), host)], &dir.path().join("ds"));
    let engine = Engine::embedded(2).unwrap();
    let ds = engine.open(&dir.path().join("ds")).unwrap();
    let native = native_index(trace.clone(), dir.path());
    let plan = engine
        .lod_plan(&ds, Some(host), &BuildParams::default())
        .unwrap();
    let view = LodView::fit(0, plan.extent_t, 0, plan.axis.extent, 96, 54);
    let level = memscape_engine::lod_index::lod_level_for(&plan, view.pixel_size()).unwrap();
    assert_eq!(native.level_for(view.pixel_size()), Some(level));
    // A frame this small is drawn from cells half a pixel or less (`level_for_frame`): the
    // engine picks the level the native index draws it from, and writes that one.
    let frame_level = memscape_engine::lod_index::lod_level_for_frame(&plan, &view).unwrap();
    assert_eq!(native.level_for_frame(&view), Some(frame_level));
    assert_ne!(frame_level, level, "the 96×54 frame from the finer level");
    let which = [frame_level, plan.levels.len() - 1];
    let out = dir.path().join("engine.lod");
    let meta = engine
        .lod_index(
            &ds,
            Some(host),
            &plan,
            Some(&which),
            SourceId::default(),
            &out,
        )
        .unwrap();
    let index = LodIndex::open(&out).unwrap();
    assert_eq!(index.meta, meta);
    assert_eq!(
        (
            meta.copy_min_c,
            meta.copy_min_d,
            meta.extent_t,
            meta.extent_y
        ),
        (
            native.meta.copy_min_c,
            native.meta.copy_min_d,
            native.meta.extent_t,
            native.meta.extent_y
        )
    );
    for (k, &at) in which.iter().enumerate() {
        let (got, want) = (&index.levels[k], &native.levels[at]);
        // A level's `blocks` counts those whose finest level it is: known when the next finer
        // level of its line is in the file too, or when it is the finest.
        if at + 1 == plan.levels.len() {
            assert_eq!(got.desc.blocks, want.desc.blocks, "level {at}: blocks");
        }
        assert_eq!(&got.columns[..], &want.columns[..], "level {at}");
        assert_eq!(got.cells.len(), want.cells.len(), "level {at}");
        for (i, (g, w)) in got.cells.iter().zip(want.cells.iter()).enumerate() {
            check_cell(g, w, &format!("level {at} cell {i}"));
        }
    }
    let file = TraceFile::from_trace(trace);
    let cols = file.columns();
    let fetch = |id: u64| {
        Some(lod_block(
            &cols,
            &native.meta.axis,
            &thread_color,
            id as usize,
        ))
    };
    let keys = |i: &LodIndex| i.classes.iter().map(|c| (c.c, c.d)).collect::<Vec<_>>();
    assert_eq!(keys(&index), keys(&native));
    let members = |class: &memscape_lod::index::Class| {
        let mut out = Vec::new();
        class.for_each_starting_in([0.0, f64::INFINITY], 0, 1, &fetch, &mut |b| out.push(*b));
        out
    };
    let mut copied = 0;
    for (g, w) in index.classes.iter().zip(&native.classes) {
        let got = members(g);
        assert_eq!(got, members(w), "class ({}, {})", g.c, g.d);
        copied += got.len();
    }
    assert!(copied > 100, "{copied} blocks in classes");
    // The view drawn from the engine's index (no small blocks needed: a level draws it).
    let lod = LodTrace::with_index(
        &dir.path().join("ds"),
        &out,
        TraceFile::from_trace(
            memscape_parquet::trace::read_trace_skeleton(&dir.path().join("ds"), Some(host))
                .unwrap(),
        ),
    )
    .unwrap();
    let (got, stats) = lod.frame(&view, FramePath::Lod);
    assert!(stats.level.is_some());
    let native_path = dir.path().join("native.lod");
    let reference = LodTrace::with_index(&dir.path().join("ds"), &native_path, file).unwrap();
    let (want, _) = reference.frame(&view, FramePath::Lod);
    assert_eq!(got, want, "the view drawn from the engine's index");
}

/// The index file written as the size classes stream (`lod_index`: DataFusion sorts the large
/// blocks by start, each class spills to a file in chunks) is byte for byte the file of the
/// same levels and classes held in memory (`lod_classes`, `write_index`), whatever the chunks.
#[test]
fn the_index_file_streamed_is_the_index_file_written_from_memory() {
    use memscape_engine::lod_index::{SpilledClasses, write_index, write_index_spilled};
    let dir = tempfile::tempdir().unwrap();
    let (trace, host) = traces().swap_remove(0);
    dataset(&[(trace, host)], &dir.path().join("ds"));
    // A small memory limit: the engine's plans as the GUI runs them.
    let engine = Engine::embedded_bounded(2, 64 << 20).unwrap();
    let ds = engine.open(&dir.path().join("ds")).unwrap();
    let plan = engine
        .lod_plan(&ds, Some(host), &BuildParams::default())
        .unwrap();
    let finest = plan.levels.len() - 1;
    let streamed = dir.path().join("streamed.lod");
    engine
        .lod_index(
            &ds,
            Some(host),
            &plan,
            Some(&[finest]),
            SourceId::default(),
            &streamed,
        )
        .unwrap();
    let streamed = std::fs::read(streamed).unwrap();
    let tiles = vec![(
        plan.levels[finest],
        engine
            .lod_level(&ds, Some(host), &plan, &plan.levels[finest])
            .unwrap(),
    )];
    let classes = engine.lod_classes(&ds, Some(host), &plan).unwrap();
    let copied: usize = classes.iter().map(|c| c.blocks.len()).sum();
    assert!(
        classes.len() > 4 && copied > 100,
        "{} classes, {copied} blocks",
        classes.len()
    );
    let memory = dir.path().join("memory.lod");
    write_index(&plan, &tiles, &classes, SourceId::default(), &memory).unwrap();
    assert!(
        std::fs::read(&memory).unwrap() == streamed,
        "the streamed index file"
    );
    // Chunks of 5 blocks: every class through the spill file, in many chunks.
    let mut spilled = SpilledClasses::new_in(dir.path())
        .unwrap()
        .with_chunk_blocks(5);
    engine
        .lod_classes_spilled(&ds, Some(host), &plan, &mut spilled)
        .unwrap();
    assert_eq!(spilled.blocks(), copied as u64);
    let chunked = dir.path().join("chunked.lod");
    write_index_spilled(&plan, &tiles, spilled, SourceId::default(), &chunked).unwrap();
    assert!(std::fs::read(&chunked).unwrap() == streamed, "chunks of 5");
}

/// The size classes stream from DataFusion's sort by start; under a memory limit that sort
/// spills sorted runs to files and merges them: the classes are those sorted in memory. (The
/// synthetic trace: nearly every block is large, as in the 100 M and 1 B measurements.)
#[test]
fn the_size_classes_under_a_small_memory_limit_are_the_classes_sorted_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let trace = memscape_heap::synthetic::synthetic_trace(4_000_000);
    let host = "synthetic";
    dataset(&[(trace, host)], &dir.path().join("ds"));
    let unbounded = Engine::embedded(2).unwrap();
    let ds = unbounded.open(&dir.path().join("ds")).unwrap();
    let plan = unbounded
        .lod_plan(&ds, Some(host), &BuildParams::default())
        .unwrap();
    let want = unbounded.lod_classes(&ds, Some(host), &plan).unwrap();
    let copied: usize = want.iter().map(|c| c.blocks.len()).sum();
    let by_start = |classes: &[memscape_engine::lod_index::SizeClass]| {
        classes
            .iter()
            .all(|c| c.blocks.windows(2).all(|w| w[0].t0 < w[1].t0))
    };
    assert!(by_start(&want), "each class by start");
    // 32 MiB, less than half the large blocks' sorted columns (8 bytes × 5 a block). Two
    // partitions: with DataFusion's greedy pool one partition's sort took the memory the
    // other's merge then needed ("Not enough memory to continue external sort": 4 of 4 runs,
    // BENCHMARKS.md, waves 30 and 31); `embedded_bounded`'s fair pool shares it (3 of 3 pass).
    let limit = 32 << 20;
    assert!(copied * 40 > 2 * limit, "{copied} blocks in classes");
    let bounded = Engine::embedded_bounded(2, limit).unwrap();
    let ds = bounded.open(&dir.path().join("ds")).unwrap();
    let got = bounded.lod_classes(&ds, Some(host), &plan).unwrap();
    assert!(got == want, "the classes under 32 MiB");
}

/// A level aggregated in many ranges of events (`Engine::with_level_range_blocks`: what bounds
/// its memory on long traces, each cell encoded as soon as no later range reaches its column)
/// is the level aggregated in `LEVEL_CHUNKS` ranges: the same columns, cells and buckets, every
/// count, box, profile, mask, spot and centre bit for bit; only what sums f64 values in another
/// order — a cell's mean width and height, a bucket's mean area, spread and colour — within
/// one unit of its code (the index's stated error against the native builder), and both the
/// native index's records by `check_level`.
#[test]
fn a_level_in_many_ranges_of_events_is_the_level_in_eight() {
    use memscape_engine::lod::{LEVEL_CHUNKS, level_ranges};
    let dir = tempfile::tempdir().unwrap();
    let traces = traces();
    dataset(&traces, &dir.path().join("ds"));
    let eight = Engine::embedded(2).unwrap();
    let ds = eight.open(&dir.path().join("ds")).unwrap();
    for (trace, host) in traces {
        let index = native_index(trace, dir.path());
        let plan = eight
            .lod_plan(&ds, Some(host), &BuildParams::default())
            .unwrap();
        assert_eq!(
            level_ranges(&plan, eight.level_range_blocks()),
            LEVEL_CHUNKS
        );
        // Ranges of ≈ 1/40 of the blocks (and a few events each on kvstore).
        let many = Engine::embedded(2)
            .unwrap()
            .with_level_range_blocks(plan.blocks / 40);
        let ds_many = many.open(&dir.path().join("ds")).unwrap();
        let ranges = level_ranges(&plan, many.level_range_blocks());
        assert!(ranges >= 40, "{host}: {ranges} ranges");
        let (mut records, mut exact) = (0, 0);
        for (i, level) in plan.levels.iter().enumerate() {
            // sqlite: the square line and the coarsest of the others, as above.
            if host != "kvstore" && level.line != 0 && level.k > 1 {
                continue;
            }
            let what = format!(
                "{host} line {} level {} in {ranges} ranges",
                level.line, level.k
            );
            let want = eight.lod_level(&ds, Some(host), &plan, level).unwrap();
            let got = many.lod_level(&ds_many, Some(host), &plan, level).unwrap();
            check_level(&got, &index, i, &what, &mut Diff::default());
            assert_eq!(got.blocks, want.blocks, "{what}");
            assert_eq!(got.columns, want.columns, "{what}: columns");
            assert_eq!(got.cells.len(), want.cells.len(), "{what}: cells");
            assert_eq!(got.buckets.len(), want.buckets.len(), "{what}: buckets");
            for (k, (g, w)) in got.cells.iter().zip(&want.cells).enumerate() {
                // The f64 sums' means to within a few f32 units; everything else exact.
                for (a, b) in [(g.mean_w, w.mean_w), (g.mean_h, w.mean_h)] {
                    assert!(
                        (a - b).abs() <= b.abs() * 4.0 * f32::EPSILON,
                        "{what} cell {k}: mean {a} vs {b}"
                    );
                }
                let sums_aside = |c: &CellRec| CellRec {
                    mean_w: 0.0,
                    mean_h: 0.0,
                    ..*c
                };
                assert_eq!(sums_aside(g), sums_aside(w), "{what} cell {k}");
                records += 1;
                exact += usize::from(g == w);
            }
            for (k, (g, w)) in got.buckets.iter().zip(&want.buckets).enumerate() {
                assert_eq!((g.b, g.n, g.attr), (w.b, w.n, w.attr), "{what} bucket {k}");
                assert!(
                    near(g.mean_frac, w.mean_frac)
                        && g.cv2.abs_diff(w.cv2) <= 1
                        && (0..3).all(|c| near(g.rgb[c], w.rgb[c])),
                    "{what} bucket {k}: {g:?} vs {w:?}"
                );
                records += 1;
                exact += usize::from(g == w);
            }
        }
        eprintln!("{host}: {exact} of {records} records bit for bit in {ranges} ranges");
        assert!(exact * 100 >= records * 99, "{host}: {exact} of {records}");
    }
}
