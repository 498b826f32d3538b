//! `memscape index DATASET/` against the native commands on the same traces: a recorded trace
//! (the demo's kvstore) and a heaptrack trace (sqlite, 1 M events) exported as two hosts of one
//! Parquet dataset at test time; the engine's heap at the peak, per call site, is `memscape
//! heaptree --peak`'s, its heap-size series ends where `memscape info` says the heap ends, and
//! Ballista's standalone mode (scheduler and two executors in the process, loopback) prints the
//! same figures as embedded DataFusion.
#![cfg(feature = "engine")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::{json, memscape, ok, shared};
use serde_json::Value;

fn scratch(name: &str) -> PathBuf {
    common::fresh("index_cli", name)
}

fn sqlite() -> PathBuf {
    shared("heaptrack/sqlite_1M.raw.zst")
}

/// The two traces as hosts `kv` and `sqlite` of one dataset.
fn dataset(name: &str) -> (PathBuf, Vec<(&'static str, PathBuf)>) {
    let dir = scratch(name);
    let traces = vec![("kv", PathBuf::from("demo")), ("sqlite", sqlite())];
    for (host, trace) in &traces {
        ok(memscape()
            .arg("export")
            .arg(trace)
            .args(["--to", "parquet", "--windows", "5", "--host", host, "-o"])
            .arg(&dir));
    }
    (dir, traces)
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn index_of_a_two_host_dataset_equals_info_and_heaptree() {
    let (dir, traces) = dataset("two-hosts");
    for (host, trace) in &traces {
        let info = json(memscape().arg("info").arg(trace).arg("--json"));
        let tree = json(memscape().arg("heaptree").arg(trace).args([
            "--peak",
            "--json",
            "--group",
            "function",
            "--innermost-sites",
        ]));
        let index = json(
            memscape()
                .arg("index")
                .arg(&dir)
                .args(["--host", host, "--points", "40"]),
        );
        assert_eq!(index["kind"], "trace");
        assert_eq!(index["host"], *host);
        assert_eq!(index["events"], info["events"], "{host}");
        // The heap-size series: 40 points, the last one the end of the trace.
        let series = index["heap_series"].as_array().unwrap();
        assert_eq!(series.len(), 40);
        assert_eq!(u(&series[39][0]), u(&info["events"]), "{host}");
        assert_eq!(u(&series[39][1]), u(&info["end_live_bytes"]), "{host}");
        let peak = u(&info["peak_live_bytes"]);
        assert!(series.iter().all(|p| u(&p[1]) <= peak), "{host}");
        assert!(series.iter().any(|p| u(&p[1]) > 0), "{host}");
        // The live heap at the peak: heaptree's time point, total, and every named group.
        let live = &index["live_by_site"];
        assert_eq!(
            live["events"], tree["events"],
            "{host}: the peak's time point"
        );
        let mut by_name: HashMap<String, (u64, u64)> = HashMap::new();
        for s in live["sites"].as_array().unwrap() {
            let e = by_name
                .entry(s["name"].as_str().unwrap().to_owned())
                .or_default();
            e.0 += u(&s["bytes"]);
            e.1 += u(&s["blocks"]);
        }
        let total = by_name.values().fold((0, 0), |a, v| (a.0 + v.0, a.1 + v.1));
        assert_eq!(total, (u(&tree["bytes"]), u(&tree["objects"])), "{host}");
        assert_eq!(total.0, peak, "{host}");
        let mut named = 0;
        for child in tree["children"].as_array().unwrap() {
            let name = child["name"].as_str().unwrap();
            if name == "Other" {
                continue;
            }
            named += 1;
            assert_eq!(
                by_name.get(name).copied().unwrap_or_default(),
                (u(&child["bytes"]), u(&child["objects"])),
                "{host}: {name}"
            );
        }
        assert!(named >= 1, "{host}: {tree}");
        // The size-class bins: every event in one window of one bin.
        let events: u64 = index["size_class_bins"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|b| b["events"].as_array().unwrap())
            .map(u)
            .sum();
        assert_eq!(events, u(&info["events"]), "{host}");
    }
    // Two hosts: the dataset's host must be named.
    let out = memscape().arg("index").arg(&dir).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("kv") && err.contains("sqlite"), "{err}");
}

/// `--lod`: the engine's level-of-detail tiles of the demo trace hold, level by level, the
/// blocks, columns, cells and buckets of the index `memscape lod build` writes natively.
#[test]
fn index_lod_equals_the_native_lod_build() {
    let dir = scratch("lod");
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("kvstore.msc");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo/kvstore.msc"),
        &trace,
    )
    .unwrap();
    ok(memscape().args(["lod", "build"]).arg(&trace));
    let native = memscape_lod::LodIndex::open(&dir.join("kvstore.msc.thread.lod")).unwrap();
    let ds = dir.join("ds");
    ok(memscape()
        .arg("export")
        .arg(&trace)
        .args(["--to", "parquet", "--windows", "4", "-o"])
        .arg(&ds));
    let index = json(
        memscape()
            .arg("index")
            .arg(&ds)
            .args(["--lod", "--points", "4"]),
    );
    let lod = &index["lod"];
    assert_eq!(u(&lod["blocks"]), native.meta.blocks);
    assert_eq!(u(&lod["extent_t"]), native.meta.extent_t);
    assert_eq!(u(&lod["extent_y"]), native.meta.axis.extent);
    assert_eq!(u(&lod["regions"]), native.meta.axis.regions.len() as u64);
    let levels = lod["levels"].as_array().unwrap();
    assert_eq!(levels.len(), native.levels.len());
    for (got, want) in levels.iter().zip(&native.levels) {
        let what = format!("level {got}");
        assert_eq!(u(&got["log_tau"]), u64::from(want.desc.log_tau), "{what}");
        assert_eq!(u(&got["log_sig"]), u64::from(want.desc.log_sig), "{what}");
        // The engine counts every block a level summarises (its cells' counts); the native
        // level descriptor counts only the blocks whose finest level it is.
        let summarised: u64 = want.cells.iter().map(|c| c.n as u64).sum();
        assert_eq!(u(&got["blocks"]), summarised, "{what}");
        assert_eq!(u(&got["columns"]), want.columns.len() as u64, "{what}");
        assert_eq!(u(&got["cells"]), want.cells.len() as u64, "{what}");
        assert_eq!(u(&got["buckets"]), want.buckets.len() as u64, "{what}");
    }
}

/// The same command on Ballista's standalone mode prints the same figures.
#[cfg(feature = "ballista")]
#[test]
fn index_on_ballista_standalone_equals_embedded() {
    let (dir, _) = dataset("standalone");
    let run = |engine: &str| {
        let mut v = json(
            memscape()
                .arg("index")
                .arg(&dir)
                .args(["--host", "kv", "--points", "25", "--engine", engine]),
        );
        let spec = v["engine"].as_str().unwrap().to_owned();
        v["engine"] = Value::Null;
        (v, spec)
    };
    let (embedded, a) = run("embedded");
    let (standalone, b) = run("standalone:2");
    assert_eq!(a, "Embedded");
    assert!(b.starts_with("Standalone"), "{b}");
    assert_eq!(standalone, embedded);
}

/// `memscape render DATASET/ --view sunburst|icicle` draws the heap from the query engine, and
/// the picture is the one drawn from the trace file, pixel for pixel (same PNG bytes), for the
/// demo's recorded kvstore and a heaptrack trace of sqlite, each in 6 time partitions; the
/// same through Ballista's standalone mode; and the engine is really asked: a Ballista address
/// where no scheduler listens fails the render.
#[test]
fn heap_views_of_a_dataset_are_the_trace_files_pictures() {
    for (name, trace) in [("kv", PathBuf::from("demo")), ("sqlite", sqlite())] {
        let dir = scratch(&format!("render-{name}"));
        ok(memscape()
            .arg("export")
            .arg(&trace)
            .args(["--to", "parquet", "--windows", "6", "-o"])
            .arg(&dir));
        // The engine's heap answers are kept in the cache directory for the next open
        // (`heap_kept`): renders that must ask the engine get a cache of their own.
        let cache = scratch(&format!("render-{name}-cache"));
        for view in ["sunburst", "icicle"] {
            let png = |from: &Path, engine: &str, cache: &Path| {
                let out = scratch(&format!("{name}-{view}-{engine}.png"));
                ok(memscape()
                    .env("XDG_CACHE_HOME", cache)
                    .arg("render")
                    .arg(from)
                    .args(["--view", view, "--adapter", "cpu", "--engine", engine])
                    .args(["--width", "640", "--height", "480", "-o"])
                    .arg(&out));
                std::fs::read(&out).unwrap()
            };
            let fresh = |what: &str| scratch(&format!("render-{name}-{view}-{what}-cache"));
            let native = png(&trace, "embedded", &cache);
            let kept = fresh("embedded");
            let engine = png(&dir, "embedded", &kept);
            // Again from the answers kept by that render: the same picture.
            assert!(
                png(&dir, "embedded", &kept) == engine,
                "{name} {view}: the picture from kept answers differs"
            );
            assert!(native.len() > 1000, "{name} {view}");
            assert!(
                native == engine,
                "{name} {view}: the dataset's picture differs from the trace file's"
            );
            if name == "kv" && view == "sunburst" {
                assert!(
                    png(&dir, "standalone:2", &fresh("standalone")) == native,
                    "{name} {view} on Ballista"
                );
                let out = memscape()
                    .env("XDG_CACHE_HOME", fresh("none"))
                    .arg("render")
                    .arg(&dir)
                    .args(["--view", view, "--adapter", "cpu"])
                    .args(["--engine", "ballista://127.0.0.1:1", "-o"])
                    .arg(scratch("never.png"))
                    .output()
                    .unwrap();
                assert!(!out.status.success(), "no scheduler, yet a picture");
            }
        }
    }
}

/// How far picture `got` is from `want`: (mean absolute channel difference in 1/255,
/// share of pixels with every channel within 8/255).
fn map_error(got: &memscape_render::RgbaImage, want: &memscape_render::RgbaImage) -> (f64, f64) {
    assert_eq!((got.width, got.height), (want.width, want.height));
    let (mut sum, mut near) = (0u64, 0usize);
    for (a, b) in got.pixels.chunks(4).zip(want.pixels.chunks(4)) {
        let d: Vec<u64> = (0..3).map(|k| u64::from(a[k].abs_diff(b[k]))).collect();
        sum += d.iter().sum::<u64>();
        near += usize::from(d.iter().all(|&d| d <= 8));
    }
    let n = got.pixels.len() / 4;
    (sum as f64 / (3 * n) as f64, near as f64 / n as f64)
}

/// `memscape render DATASET/ --view alloc` of a big dataset (here: forced by
/// `MEMSCAPE_ALLOC_MAP_PATH=lod`, as for a trace file) draws the allocation map from the query
/// engine's level-of-detail tiles (the one level the view is drawn from, and the size classes) or, zoomed
/// in past every level, from the few small blocks the engine fetches near the view: the picture
/// is the one the trace file draws from its own index (`MEMSCAPE_ALLOC_MAP_PATH=lod`), and
/// within the index's stated error (mean ≤ 1/255, ≥ 99.9 % of pixels within 8/255) of every
/// block drawn exactly, for the demo's kvstore and sqlite (1 M events) each exported in 6 time
/// partitions; the same on Ballista's standalone mode (two executors).
#[test]
fn alloc_map_of_a_dataset_is_drawn_from_the_engines_level_of_detail() {
    use memscape_render::RgbaImage;
    let demo = memscape_views::demo::resolve_path(Path::new("demo")).unwrap();
    let cache = scratch("alloc-map-cache");
    std::fs::create_dir_all(&cache).unwrap();
    for (name, source) in [("kv", demo), ("sqlite", sqlite())] {
        // A copy of the trace, so that its own index is built in the scratch folder.
        let trace = scratch(&format!(
            "alloc-map-{name}-{}",
            source.file_name().unwrap().to_string_lossy()
        ));
        std::fs::copy(&source, &trace).unwrap();
        let dir = scratch(&format!("alloc-map-{name}"));
        ok(memscape()
            .arg("export")
            .arg(&trace)
            .args(["--to", "parquet", "--windows", "6", "-o"])
            .arg(&dir));
        // The whole trace small (a level draws it) and a window of it (finer than every level).
        let views: [(&str, Vec<&str>); 2] = [
            ("whole", vec!["--width", "160", "--height", "90"]),
            (
                "zoom",
                vec![
                    "--width",
                    "320",
                    "--height",
                    "180",
                    "--range-time",
                    "100000..104000",
                ],
            ),
        ];
        for (view, size) in &views {
            let png = |from: &Path, path: &str, engine: &str| {
                let out = scratch(&format!("alloc-map-{name}-{view}-{path}-{engine}.png"));
                let mut cmd = memscape();
                cmd.env("XDG_CACHE_HOME", &cache)
                    .env("MEMSCAPE_ALLOC_MAP_PATH", path)
                    .arg("render")
                    .arg(from)
                    .args(["--view", "alloc", "--color", "thread", "--engine", engine])
                    .args(size)
                    .arg("-o")
                    .arg(&out);
                let output = cmd.output().unwrap();
                let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
                assert!(output.status.success(), "{cmd:?}: {stderr}");
                (RgbaImage::load_png(&out).unwrap(), stderr)
            };
            let (native, _) = png(&trace, "lod", "embedded");
            let (exact, _) = png(&trace, "exact", "embedded");
            // A dataset this small is drawn exactly from its blocks unless the level of detail
            // is asked for, as a trace file is.
            let (engine, how) = png(&dir, "lod", "embedded");
            assert!(
                how.contains("computed by Embedded"),
                "{name} {view}: the engine did not draw it: {how}"
            );
            let want = if *view == "whole" {
                "tiles of level"
            } else {
                "small blocks in view"
            };
            assert!(how.contains(want), "{name} {view}: {how}");
            let lit = engine
                .pixels
                .chunks(4)
                .filter(|p| p[..3] != [3, 4, 5])
                .count();
            assert!(
                lit > engine.pixels.len() / 40,
                "{name} {view}: {lit} pixels drawn"
            );
            let (mean, near) = map_error(&engine, &native);
            assert!(
                mean <= 0.05 && near >= 0.999,
                "{name} {view}: engine vs the trace's index: mean {mean}/255, {near} within 8/255"
            );
            let (mean, near) = map_error(&engine, &exact);
            assert!(
                mean <= 1.0 && near >= 0.999,
                "{name} {view}: engine vs exact: mean {mean}/255, {near} within 8/255"
            );
            eprintln!(
                "{name} {view}: {} of {} pixels equal to the trace's index's picture; vs exact: mean {mean:.3}/255, {:.4} within 8/255",
                engine
                    .pixels
                    .chunks(4)
                    .zip(native.pixels.chunks(4))
                    .filter(|(a, b)| a == b)
                    .count(),
                engine.pixels.len() / 4,
                near
            );
            if name == "kv" && *view == "whole" {
                let (ballista, how) = png(&dir, "lod", "standalone:2");
                assert!(how.contains("computed by Standalone"), "{how}");
                assert!(ballista.pixels == engine.pixels, "kv on Ballista");
            }
        }
    }
}

/// `memscape render DATASET/ --view topology|offenders` of the LULESH samples exported to
/// Parquet draws the per-resource totals, the selection's count and the offender rows from the
/// query engine: the picture is the samples file's, pixel for pixel (same PNG bytes), with no
/// selection and with ranges of two attributes; the same on Ballista standalone.
#[test]
fn samples_views_of_a_dataset_are_the_samples_files_pictures() {
    let lulesh = shared("memaxes/lulesh");
    let dir = scratch("samples-views");
    ok(memscape()
        .arg("export")
        .arg(lulesh.join("samples.out"))
        .args(["--to", "parquet", "--windows", "4", "-o"])
        .arg(&dir));
    let hardware = lulesh.join("hardware.xml");
    let selections: [&[&str]; 2] = [&[], &["--select", "latency=50..", "--select", "zidx=..15"]];
    for view in ["topology", "offenders"] {
        for (k, select) in selections.iter().enumerate() {
            let png = |from: &Path, engine: &str| {
                let out = scratch(&format!(
                    "samples-{view}-{k}-{engine}-{}.png",
                    from.is_dir()
                ));
                let output = memscape()
                    .arg("render")
                    .arg(from)
                    .args(["--view", view, "--engine", engine, "--hardware"])
                    .arg(&hardware)
                    .args(*select)
                    .args(["--width", "900", "--height", "600", "-o"])
                    .arg(&out)
                    .output()
                    .unwrap();
                let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
                assert!(output.status.success(), "{view} {select:?}: {stderr}");
                (std::fs::read(&out).unwrap(), stderr)
            };
            let (native, _) = png(&lulesh.join("samples.out"), "embedded");
            let (engine, how) = png(&dir, "embedded");
            assert!(how.contains("computed by Embedded"), "{view}: {how}");
            assert!(native.len() > 1000);
            assert!(
                native == engine,
                "{view} {select:?}: the dataset's picture differs from the samples file's"
            );
            if view == "topology" && k == 1 {
                let (ballista, how) = png(&dir, "standalone:2");
                assert!(how.contains("computed by Standalone"), "{how}");
                assert!(ballista == native, "{view} {select:?} on Ballista");
            }
        }
    }
}

/// `memscape render DATASET/ --view histograms|histogram` of the LULESH samples exported to
/// Parquet draws every axis' bins, the selection's marked bins and panel and the window-score
/// strips (quantitative and qualitative axes) from the query engine: the picture is the
/// samples file's, pixel for pixel (same PNG bytes), with no selection and with ranges of two
/// attributes, in 32 and 12 bins; the same on Ballista standalone.
#[test]
fn samples_histograms_of_a_dataset_are_the_samples_files_pictures() {
    let cases: [(&str, &[&str]); 4] = [
        ("histograms", &["--strips", "16"]),
        (
            "histograms",
            &[
                "--select",
                "latency=50..",
                "--select",
                "zidx=..15",
                "--histogram-bins",
                "12",
                "--strips",
                "9",
                "--cluster-metric",
                "imbalance",
            ],
        ),
        (
            "histogram",
            &["--histogram-attribute", "time", "--strips", "24"],
        ),
        (
            "histogram",
            &[
                "--histogram-attribute",
                "cpu",
                "--select",
                "latency=..40",
                "--strips",
                "4",
            ],
        ),
    ];
    dataset_pictures_are_the_samples_files(
        "samples-histograms",
        &cases,
        "per histogram bin and window",
        1,
    );
}

/// `memscape render DATASET/ --view histograms|histogram --cluster-attribute ATTR [--glyph I]`
/// of the LULESH samples exported to Parquet draws the cluster markers from the engine's
/// cluster tree and the glyph from its segment totals: the picture is the samples file's,
/// pixel for pixel, along an attribute with few ties (time) and one with many (latency), with
/// strips and a selection; the same on Ballista standalone.
#[test]
fn samples_clusters_of_a_dataset_are_the_samples_files_pictures() {
    let cases: [(&str, &[&str]); 3] = [
        (
            "histograms",
            &[
                "--cluster-attribute",
                "time",
                "--glyph",
                "2",
                "--strips",
                "8",
            ],
        ),
        (
            "histograms",
            &[
                "--cluster-attribute",
                "latency",
                "--cluster-metric",
                "imbalance",
                "--cluster-depth",
                "l2",
                "--cluster-window",
                "300",
                "--cluster-step",
                "70",
                "--clusters",
                "5",
                "--glyph",
                "4",
                "--select",
                "latency=50..",
            ],
        ),
        (
            "histogram",
            &[
                "--histogram-attribute",
                "time",
                "--cluster-attribute",
                "time",
            ],
        ),
    ];
    dataset_pictures_are_the_samples_files(
        "samples-clusters",
        &cases,
        "per histogram bin, window and cluster",
        0,
    );
}

/// Exports the LULESH samples to a Parquet dataset (scratch `name`) and renders each `(view,
/// args)` case from the samples file and from the dataset: the PNGs are the same bytes, the
/// dataset's numbers say they were computed by the embedded engine `provenance`, and case
/// `on_ballista` is drawn the same on Ballista standalone.
fn dataset_pictures_are_the_samples_files(
    name: &str,
    cases: &[(&str, &[&str])],
    provenance: &str,
    on_ballista: usize,
) {
    let lulesh = shared("memaxes/lulesh");
    let dir = scratch(name);
    ok(memscape()
        .arg("export")
        .arg(lulesh.join("samples.out"))
        .args(["--to", "parquet", "--windows", "3", "-o"])
        .arg(&dir));
    let hardware = lulesh.join("hardware.xml");
    for (k, &(view, args)) in cases.iter().enumerate() {
        let png = |from: &Path, engine: &str| {
            let out = scratch(&format!("{name}-{k}-{engine}-{}.png", from.is_dir()));
            render_samples_view(from, view, engine, &hardware, args, &out)
        };
        let (native, _) = png(&lulesh.join("samples.out"), "embedded");
        let (engine, how) = png(&dir, "embedded");
        assert!(how.contains("computed by Embedded"), "{view}: {how}");
        assert!(how.contains(provenance), "{view}: {how}");
        assert!(native.len() > 1000);
        assert!(
            native == engine,
            "{view} {args:?}: the dataset's picture differs from the samples file's"
        );
        if k == on_ballista {
            let (ballista, how) = png(&dir, "standalone:2");
            assert!(how.contains("computed by Standalone"), "{how}");
            assert!(ballista == native, "{view} {args:?} on Ballista");
        }
    }
}
/// `memscape render FROM --view VIEW --engine ENGINE --hardware HARDWARE ARGS…` at 1100×640
/// into `out`: the PNG's bytes and what the command printed on stderr (where it says which
/// engine computed the numbers).
fn render_samples_view(
    from: &Path,
    view: &str,
    engine: &str,
    hardware: &Path,
    args: &[&str],
    out: &Path,
) -> (Vec<u8>, String) {
    let output = memscape()
        .arg("render")
        .arg(from)
        .args(["--view", view, "--engine", engine, "--hardware"])
        .arg(hardware)
        .args(args)
        .args(["--width", "1100", "--height", "640", "-o"])
        .arg(out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{view} {args:?}: {stderr}");
    (std::fs::read(out).unwrap(), stderr)
}
