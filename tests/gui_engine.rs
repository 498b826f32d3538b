//! The GUI on Parquet dataset directories (`memscape view DIR`): the topology and histograms
//! panes of a samples dataset, and the allocation map (its level-of-detail index) and heap
//! tree of a trace dataset, draw from the query engine (embedded DataFusion), each saying so
//! in its picture.
#![cfg(feature = "engine")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::{count_near, memscape, ok, shared, view_screenshot};

/// `memscape view LULESH-DATASET/ --screenshot`: both samples panes are there, drawn (the
/// topology's ramp ends, the histograms' bars), and every pane exported as the GUI's "Export
/// view as SVG…" writes it carries the engine's line: a pane missing, or drawn from the samples
/// in memory, fails.
#[test]
fn gui_draws_the_samples_panes_of_a_parquet_dataset_from_the_engine() {
    let lulesh = shared("memaxes/lulesh");
    let dir = common::fresh("gui_engine", "samples");
    std::fs::create_dir_all(&dir).unwrap();
    // The dataset's default topology: hardware.xml beside it (MemAxes' layout).
    std::fs::copy(lulesh.join("hardware.xml"), dir.join("hardware.xml")).unwrap();
    let dataset = export_lulesh(&lulesh, &dir);
    let exported = dir.join("exported-views");
    let png = dir.join("window.png");
    let image = view_screenshot(
        &png,
        &[dataset.as_os_str()],
        (1600, 1000),
        &[("MEMSCAPE_EXPORT_VIEWS", exported.as_os_str())],
    );
    assert!(
        count_near(&image, [165, 0, 38], 10) > 0,
        "a hottest resource"
    );
    assert!(
        count_near(&image, [49, 54, 149], 10) > 0,
        "a coolest resource"
    );
    assert!(
        count_near(&image, [86, 92, 108], 10) > 5000,
        "histogram bars"
    );
    check_all_from_the_engine(&exported, 2);
}

/// The SVGs of every pane exported into `exported`, each of which must carry the engine's line.
fn check_all_from_the_engine(exported: &Path, at_least: usize) -> Vec<String> {
    let svgs: Vec<_> = std::fs::read_dir(exported)
        .unwrap_or_else(|e| panic!("{}: {e} (no views exported)", exported.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "svg"))
        .collect();
    let names: Vec<String> = svgs
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(svgs.len() >= at_least, "panes exported: {names:?}");
    for svg in &svgs {
        let text = std::fs::read_to_string(svg).unwrap();
        assert!(
            text.contains("computed by the query engine (Embedded)"),
            "{}: not drawn from the query engine",
            svg.display()
        );
    }
    names
}

/// `memscape view KVSTORE-DATASET/ --screenshot`: the heap tree draws from the engine's
/// timeline; the allocation map pane of this small trace from its blocks, and from the
/// level-of-detail index the engine built (its map embedded in the exported SVG) when the
/// index is forced as a big trace's is; each engine-drawn pane says so.
#[test]
fn gui_draws_the_map_and_heap_panes_of_a_parquet_dataset_from_the_engine() {
    let (dir, dataset) = kvstore_dataset("trace", 5);
    // The demo is small: by default its map is drawn exactly from its blocks, as a small
    // file's (no level applies to the whole pane), the heap tree still from the engine.
    let exported = dir.join("exported-default");
    view_screenshot(
        &dir.join("window-default.png"),
        &[dataset.as_os_str()],
        (1400, 900),
        &[("MEMSCAPE_EXPORT_VIEWS", exported.as_os_str())],
    );
    let svgs: Vec<(String, String)> = std::fs::read_dir(&exported)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_lowercase();
            (name, std::fs::read_to_string(&path).unwrap())
        })
        .collect();
    let engine_line = "computed by the query engine (Embedded)";
    let of = |what: &str| {
        svgs.iter()
            .find(|(n, _)| n.contains(what))
            .unwrap_or_else(|| panic!("no {what} pane exported"))
    };
    assert!(
        !of("alloc").1.contains(engine_line),
        "small map from the engine"
    );
    assert!(of("alloc").1.contains("<image"), "no map drawn");
    assert!(
        of("heap").1.contains(engine_line),
        "heap tree not from the engine"
    );
    // Forced (`MEMSCAPE_ALLOC_MAP_PATH=lod`, as a big trace is), the map draws from the index
    // the engine builds.
    let exported = dir.join("exported-views");
    // The index the engine builds is kept in a cache directory: the test's own.
    let cache = dir.join("cache");
    let image = view_screenshot(
        &dir.join("window.png"),
        &[dataset.as_os_str()],
        (1400, 900),
        &[
            ("MEMSCAPE_EXPORT_VIEWS", exported.as_os_str()),
            ("MEMSCAPE_ALLOC_MAP_PATH", std::ffi::OsStr::new("lod")),
            ("XDG_CACHE_HOME", cache.as_os_str()),
        ],
    );
    assert!(image.distinct_colors() > 200, "the window looks blank");
    let names = check_all_from_the_engine(&exported, 2);
    let map = names
        .iter()
        .find(|n| n.to_lowercase().contains("alloc"))
        .unwrap_or_else(|| panic!("no allocation map pane among {names:?}"));
    let text = std::fs::read_to_string(exported.join(map)).unwrap();
    assert!(text.contains("<image"), "{map}: no map drawn");
    assert!(
        names.iter().any(|n| n.to_lowercase().contains("heap")),
        "no heap tree pane among {names:?}"
    );
}

/// `memscape view LULESH-DATASET/` reading at most 1,000 of its 15,676 samples
/// (`MEMSCAPE_SAMPLES_HEAD`, as a dataset above the default bound is read): its log says so,
/// and every pane it exports is the samples file's picture, element for element, but for the
/// engine's `<desc>`: the panes draw from the query engine, not from the samples read.
#[test]
fn gui_opens_a_samples_dataset_reading_its_first_samples_only() {
    let lulesh = shared("memaxes/lulesh");
    let dir = common::fresh("gui_engine", "samples-head");
    std::fs::create_dir_all(&dir).unwrap();
    // The topology and the source pane beside the dataset, as beside the samples file, which
    // is there too: the panes' headers name the topology's path, and a path of another length
    // wraps them differently, leaving the pictures another height.
    for file in ["hardware.xml", "LULESH_OMP.cc", "samples.out"] {
        std::fs::copy(lulesh.join(file), dir.join(file)).unwrap();
    }
    let dataset = export_lulesh(&lulesh, &dir);
    let from_dataset = dir.join("exported-dataset");
    let mut c = common::view_screenshot_command(
        &dir.join("dataset.png"),
        &[dataset.as_os_str()],
        (1600, 1000),
    );
    c.env("MEMSCAPE_EXPORT_VIEWS", &from_dataset)
        .env("MEMSCAPE_SAMPLES_HEAD", "1000")
        .env("RUST_LOG", "warn,memscape_views::dataset=info");
    let out = common::run_windowed(c);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("1000 of 15676 samples read"), "{log}");
    let from_file = dir.join("exported-file");
    view_screenshot(
        &dir.join("file.png"),
        &[dir.join("samples.out").as_os_str()],
        (1600, 1000),
        &[("MEMSCAPE_EXPORT_VIEWS", from_file.as_os_str())],
    );
    let svgs = |at: &Path| -> Vec<(String, String)> {
        let mut found: Vec<(String, String)> = std::fs::read_dir(at)
            .unwrap_or_else(|e| panic!("{}: {e}", at.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "svg"))
            .map(|p| {
                let text = std::fs::read_to_string(&p).unwrap();
                // The engine's provenance is the one line the file's picture has not.
                let picture: Vec<&str> =
                    text.lines().filter(|l| !l.starts_with("<desc>")).collect();
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (name, picture.join("\n"))
            })
            .collect();
        found.sort();
        found
    };
    let (engine, native) = (svgs(&from_dataset), svgs(&from_file));
    assert_eq!(engine.len(), 2, "panes exported: {engine:?}");
    assert_eq!(native.len(), engine.len());
    check_all_from_the_engine(&from_dataset, 2);
    for ((name, a), (_, b)) in engine.iter().zip(&native) {
        assert!(a.len() > 1000, "{name}: empty");
        assert!(
            a == b,
            "{name}: the dataset's pane differs from the samples file's"
        );
    }
}

/// `memscape view KVSTORE-DATASET/` reading at most 1,000 of its blocks (`MEMSCAPE_TRACE_HEAD`,
/// as a dataset above the default bound is read): its log says how many of how many were read
/// and how many rows were decoded to find them — fewer than the dataset holds, the read's
/// bound asserted —, and the map (drawn from the engine's index, as any dataset read in part)
/// and the heap tree both say the query engine computed them.
#[test]
fn gui_opens_a_trace_dataset_reading_its_first_blocks_only() {
    let (dir, dataset) = kvstore_dataset("trace-head", 16);
    let (c, exported) = trace_dataset_window(
        &dir,
        &dataset,
        "exported-views",
        "1000",
        "warn,memscape_views::dataset=info",
    );
    let out = common::run_windowed(c);
    let log = String::from_utf8_lossy(&out.stderr);
    let line = log
        .lines()
        .find(|l| l.contains("blocks read"))
        .unwrap_or_else(|| panic!("no read bound in the log: {log}"));
    // "DIR: 1000 of N blocks read (R rows decoded); …"
    let numbers: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    let at = line.find(": 1000 of ").unwrap_or_else(|| panic!("{line}"));
    let counts: Vec<u64> = line[at..]
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    let (total, decoded) = (counts[1], counts[2]);
    assert!(total > 10_000, "{numbers:?}: {line}");
    assert!(
        decoded < total / 2,
        "{decoded} rows decoded of {total} to read 1000: {line}"
    );
    let names = check_all_from_the_engine(&exported, 2);
    let map = names
        .iter()
        .find(|n| n.to_lowercase().contains("alloc"))
        .unwrap_or_else(|| panic!("no allocation map pane among {names:?}"));
    let text = std::fs::read_to_string(exported.join(map)).unwrap();
    assert!(text.contains("<image"), "{map}: no map drawn");
    // The engine's index is kept in the cache directory for the next open.
    let kept: Vec<_> = std::fs::read_dir(dir.join("cache/memscape/lod"))
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(
        kept.iter()
            .any(|p| p.to_string_lossy().ends_with(".engine.thread.lod")),
        "no index kept: {kept:?}"
    );
}

/// `memscape view KVSTORE-DATASET/` read in part (`MEMSCAPE_TRACE_HEAD`): the map pane's first
/// frame is drawn from the blocks read before the query engine has computed anything for it
/// (the pane's log line comes before the engine's level, which waits for that frame: a pane
/// that waited for the engine would never draw it, and the screenshot would time out), and the
/// final picture is the engine's index's — the map's SVG carries the engine's line, not the
/// veil over the blocks not read — swapped in once its worker had the picture (on lavapipe
/// the switch is logged).
#[test]
fn gui_draws_a_trace_datasets_first_frame_before_the_engines_level_then_the_index() {
    let (dir, dataset) = kvstore_dataset("trace-first-frame", 16);
    let (c, exported) = trace_dataset_window(
        &dir,
        &dataset,
        "exported-views",
        "20000",
        "warn,memscape_views::dataset=info,memscape::panes::alloc_map=info",
    );
    let out = common::run_windowed(c);
    let log = String::from_utf8_lossy(&out.stderr);
    let at = |what: &str| log.find(what);
    let first = at("first frame drawn from the blocks read, before the query engine's level")
        .unwrap_or_else(|| panic!("no first frame from the blocks read: {log}"));
    let engine = [
        "the whole view's level built by",
        "from the level-of-detail index built by",
    ]
    .iter()
    .filter_map(|w| at(w))
    .min()
    .unwrap_or_else(|| panic!("the engine built no index: {log}"));
    assert!(
        first < engine,
        "the first frame waited for the engine: {log}"
    );
    assert!(
        at("drawn from the newer level-of-detail index").is_some_and(|k| k > engine),
        "the index was not swapped in after its level: {log}"
    );
    let names = check_all_from_the_engine(&exported, 2);
    let map = names
        .iter()
        .find(|n| n.to_lowercase().contains("alloc"))
        .unwrap_or_else(|| panic!("no allocation map pane among {names:?}"));
    let text = std::fs::read_to_string(exported.join(map)).unwrap();
    assert!(text.contains("<image"), "{map}: no map drawn");
    assert!(
        !text.contains("not read yet"),
        "{map}: the final picture still veils the blocks not read"
    );
}

/// `memscape view KVSTORE-DATASET/` read in part, twice with one cache directory: the second
/// open's heap tree is drawn from the engine's answers kept by the first
/// (`memscape_engine::heap_kept`; its log line, and no "heap timeline kept at" write, which
/// follows every answer the engine computes) and its exported picture shows what the first
/// open's did: the same labels at the same angles, the same fills in the same order (the
/// pane's width may differ by a pixel between two windows, so not the coordinates).
#[test]
fn gui_reopens_a_trace_dataset_with_the_heap_panes_answers_kept() {
    let (dir, dataset) = kvstore_dataset("trace-heap-kept", 16);
    let open = |name: &str| {
        let (c, exported) = trace_dataset_window(
            &dir,
            &dataset,
            name,
            "20000",
            "warn,memscape_engine::heap_kept=info",
        );
        let out = common::run_windowed(c);
        let log = String::from_utf8_lossy(&out.stderr).into_owned();
        let names = check_all_from_the_engine(&exported, 2);
        let heap = names
            .iter()
            .find(|n| n.to_lowercase().contains("heap"))
            .unwrap_or_else(|| panic!("no heap tree pane among {names:?}"))
            .clone();
        let svg = std::fs::read_to_string(exported.join(heap)).unwrap();
        (log, heap_picture_data(&svg))
    };
    let (first_log, first) = open("first");
    assert!(
        first_log.contains("heap timeline kept at"),
        "the first open kept nothing: {first_log}"
    );
    assert!(
        !first_log.contains("kept from an earlier open"),
        "{first_log}"
    );
    let (second_log, second) = open("second");
    assert!(
        second_log.contains("kept from an earlier open"),
        "the reopened heap tree was not drawn from the kept answers: {second_log}"
    );
    assert!(
        !second_log.contains("heap timeline kept at"),
        "the reopened heap tree asked the engine again: {second_log}"
    );
    assert!(first.len() > 5, "{first:?}");
    assert_eq!(
        first, second,
        "the reopened heap tree differs from the first open's"
    );
}

/// What a heap tree's SVG shows independently of its size: each label's text and rotation (a
/// sector's angle), each path's fill, in document order.
fn heap_picture_data(svg: &str) -> Vec<String> {
    let attr = |element: &str, name: &str| -> String {
        element
            .split_once(name)
            .and_then(|(_, rest)| rest.split(['"', ' ', ')']).next())
            .unwrap_or_default()
            .to_owned()
    };
    let mut out = Vec::new();
    for element in svg.split('<').skip(1) {
        if element.starts_with("path ") {
            out.push(format!("fill {}", attr(element, "fill=\"")));
        } else if element.starts_with("text ") {
            out.push(format!("rotate {}", attr(element, "rotate(")));
        } else if let Some(tspan) = element.strip_prefix("tspan ") {
            out.push(format!(
                "label {}",
                tspan.split_once('>').map_or("", |t| t.1)
            ));
        }
    }
    out
}

/// The shared LULESH samples exported as a Parquet dataset `dir/lulesh` (four windows).
/// A fresh test directory `name` holding the embedded kvstore demo exported as a Parquet
/// dataset in `windows` time windows (`DIR/kvstore`): the directory and the dataset.
fn kvstore_dataset(name: &str, windows: u32) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = common::fresh("gui_engine", name);
    std::fs::create_dir_all(&dir).unwrap();
    let dataset = dir.join("kvstore");
    ok(memscape()
        .args(["export", "demo", "--to", "parquet", "--windows"])
        .arg(windows.to_string())
        .arg("-o")
        .arg(&dataset));
    (dir, dataset)
}

/// `memscape view DATASET/` of the kvstore dataset in `dir` reading its first `head` blocks,
/// its views exported to `dir/NAME`, its cache in `dir/cache`, logging `rust_log`: the
/// screenshot command and the export directory.
fn trace_dataset_window(
    dir: &Path,
    dataset: &Path,
    name: &str,
    head: &str,
    rust_log: &str,
) -> (std::process::Command, std::path::PathBuf) {
    let exported = dir.join(name);
    let mut c = common::view_screenshot_command(
        &dir.join(format!("{name}.png")),
        &[dataset.as_os_str()],
        (1400, 900),
    );
    c.env("MEMSCAPE_EXPORT_VIEWS", &exported)
        .env("MEMSCAPE_TRACE_HEAD", head)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("RUST_LOG", rust_log);
    (c, exported)
}

fn export_lulesh(lulesh: &std::path::Path, dir: &std::path::Path) -> std::path::PathBuf {
    let dataset = dir.join("lulesh");
    ok(memscape()
        .arg("export")
        .arg(lulesh.join("samples.out"))
        .args(["--to", "parquet", "--windows", "4", "-o"])
        .arg(&dataset));
    dataset
}
