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
    let dataset = dir.join("lulesh");
    ok(memscape()
        .arg("export")
        .arg(lulesh.join("samples.out"))
        .args(["--to", "parquet", "--windows", "4", "-o"])
        .arg(&dataset));
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
    let dir = common::fresh("gui_engine", "trace");
    std::fs::create_dir_all(&dir).unwrap();
    let dataset = dir.join("kvstore");
    ok(memscape()
        .args(["export", "demo", "--to", "parquet", "--windows", "5", "-o"])
        .arg(&dataset));
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
    let image = view_screenshot(
        &dir.join("window.png"),
        &[dataset.as_os_str()],
        (1400, 900),
        &[
            ("MEMSCAPE_EXPORT_VIEWS", exported.as_os_str()),
            ("MEMSCAPE_ALLOC_MAP_PATH", std::ffi::OsStr::new("lod")),
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
