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
        for view in ["sunburst", "icicle"] {
            let png = |from: &Path, engine: &str| {
                let out = scratch(&format!("{name}-{view}-{engine}.png"));
                ok(memscape()
                    .arg("render")
                    .arg(from)
                    .args(["--view", view, "--adapter", "cpu", "--engine", engine])
                    .args(["--width", "640", "--height", "480", "-o"])
                    .arg(&out));
                std::fs::read(&out).unwrap()
            };
            let native = png(&trace, "embedded");
            let engine = png(&dir, "embedded");
            assert!(native.len() > 1000, "{name} {view}");
            assert!(
                native == engine,
                "{name} {view}: the dataset's picture differs from the trace file's"
            );
            if name == "kv" && view == "sunburst" {
                assert!(
                    png(&dir, "standalone:2") == native,
                    "{name} {view} on Ballista"
                );
                let out = memscape()
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
