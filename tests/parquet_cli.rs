//! `memscape export --to parquet` and `memscape index` end to end: a recorded trace and the
//! LULESH samples become Parquet datasets that memscape opens again (the same picture as the
//! original file) and that the engine aggregates (the same figures as the native commands).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use common::{memscape, ok, shared};

fn scratch(name: &str) -> PathBuf {
    common::fresh("parquet_cli", name)
}

#[test]
fn a_trace_exported_to_parquet_opens_as_the_same_picture() {
    let dir = scratch("kvstore");
    ok(memscape()
        .args(["export", "demo", "--to", "parquet", "--windows", "6", "-o"])
        .arg(&dir));
    assert!(dir.join("memscape-dataset.json").is_file());
    assert!(dir.join("blocks/host=local/process=0").is_dir());

    // The dataset directory renders exactly as the recorded file does.
    let (a, b) = (scratch("msc.png"), scratch("parquet.png"));
    for (input, png) in [(Path::new("demo"), &a), (dir.as_path(), &b)] {
        ok(memscape()
            .arg("render")
            .arg(input)
            .args([
                "--view", "alloc", "--width", "320", "--height", "200", "--out",
            ])
            .arg(png));
    }
    assert_eq!(
        std::fs::read(&a).unwrap(),
        std::fs::read(&b).unwrap(),
        "the Parquet dataset draws a different allocation map"
    );
}

/// `index` on embedded DataFusion: the heap at the peak is the trace's peak.
#[cfg(feature = "engine")]
#[test]
fn a_trace_exported_to_parquet_indexes_on_the_engine() {
    let dir = scratch("kvstore-index");
    ok(memscape()
        .args(["export", "demo", "--to", "parquet", "--windows", "6", "-o"])
        .arg(&dir));
    let info: serde_json::Value =
        serde_json::from_slice(&ok(memscape().args(["info", "demo", "--json"]))).unwrap();
    let index: serde_json::Value = serde_json::from_slice(&ok(memscape()
        .arg("index")
        .arg(&dir)
        .args(["--points", "10"])))
    .unwrap();
    assert_eq!(index["kind"], "trace");
    assert_eq!(index["heap_series"].as_array().unwrap().len(), 10);
    let at_peak: u64 = index["live_by_site"]["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(at_peak, info["peak_live_bytes"].as_u64().unwrap());
    let last = index["heap_series"][9][1].as_u64().unwrap();
    assert_eq!(last, info["end_live_bytes"].as_u64().unwrap());
    // Every event falls in one window of one size-class bin.
    let bins = index["size_class_bins"].as_array().unwrap();
    assert!(bins.len() > 3);
    let events: u64 = bins
        .iter()
        .flat_map(|b| b["events"].as_array().unwrap())
        .map(|e| e.as_u64().unwrap())
        .sum();
    assert_eq!(events, index["events"].as_u64().unwrap());
}

#[test]
fn samples_exported_to_parquet_draw_the_same_histograms() {
    let lulesh = shared("memaxes/lulesh");
    let dir = scratch("lulesh-render");
    ok(memscape()
        .arg("export")
        .arg(lulesh.join("samples.out"))
        .args(["--to", "parquet", "--windows", "5", "-o"])
        .arg(&dir));
    let (a, b) = (scratch("samples.png"), scratch("samples-parquet.png"));
    for (input, png) in [(lulesh.join("samples.out"), &a), (dir.clone(), &b)] {
        ok(memscape()
            .arg("render")
            .arg(input)
            .args([
                "--view",
                "histograms",
                "--select",
                "latency=100..",
                "--width",
                "480",
            ])
            .args(["--height", "300", "--out"])
            .arg(png));
    }
    assert_eq!(
        std::fs::read(&a).unwrap(),
        std::fs::read(&b).unwrap(),
        "the Parquet dataset draws different histograms"
    );
}

/// Bad input: no -o, a broken dataset, an unknown format, are errors that say what is wrong.
#[test]
fn parquet_export_and_reading_errors_are_clear() {
    let out = memscape()
        .args(["export", "demo", "--to", "parquet"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs -o DIR"));
    let dir = scratch("broken");
    ok(memscape()
        .args(["export", "demo", "--to", "parquet", "--windows", "2", "-o"])
        .arg(&dir));
    let threads = dir.join("threads/host=local/part-0.parquet");
    std::fs::write(&threads, b"PAR1 not really").unwrap();
    let out = memscape()
        .arg("render")
        .arg(&dir)
        .args(["--view", "alloc", "--out"])
        .arg(scratch("broken.png"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("threads/host=local/part-0.parquet"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[cfg(feature = "engine")]
#[test]
fn samples_exported_to_parquet_index_like_the_samples_command() {
    let lulesh = shared("memaxes/lulesh");
    let dir = scratch("lulesh");
    ok(memscape()
        .arg("export")
        .arg(lulesh.join("samples.out"))
        .args(["--to", "parquet", "--host", "rank0", "-o"])
        .arg(&dir));
    let hw = lulesh.join("hardware.xml");
    let native: serde_json::Value = serde_json::from_slice(&ok(memscape()
        .arg("samples")
        .arg(lulesh.join("samples.out"))
        .arg("--hardware")
        .arg(&hw)
        .args(["--select", "latency=100..", "--json"])))
    .unwrap();
    let index: serde_json::Value = serde_json::from_slice(&ok(memscape()
        .arg("index")
        .arg(&dir)
        .arg("--hardware")
        .arg(&hw)
        .args(["--select", "latency=100.."])))
    .unwrap();
    assert_eq!(index["kind"], "samples");
    assert_eq!(index["host"], "rank0");
    // Every resource's totals over the selection, both ways.
    let resources = native["resources"].as_array().unwrap();
    assert!(resources.iter().any(|r| r["samples"].as_u64().unwrap() > 0));
    for r in resources {
        let id = r["id"].as_u64().unwrap() as usize;
        let got = &index["resources"][id];
        assert_eq!(got["node"], r["id"]);
        assert_eq!(got["kind"], r["kind"]);
        assert_eq!(got["samples"], r["samples"], "resource {id}");
        assert_eq!(got["cycles"], r["cycles"], "resource {id}");
    }
    // Every attribute of the CSV header has its histogram, and so has the memory level that
    // memscape-samples derives from dataSource (the native histograms view draws it too).
    let header = std::fs::read_to_string(lulesh.join("samples.out")).unwrap();
    let mut expected: Vec<&str> = header.lines().next().unwrap().split(',').collect();
    expected.push("level");
    let histograms = index["histograms"].as_array().unwrap();
    let names: Vec<&str> = histograms
        .iter()
        .map(|h| h["attribute"].as_str().unwrap())
        .collect();
    assert_eq!(names, expected);
    // Each histogram bins every sample with a value, and marks exactly the selected ones: the
    // level's bins are the native report's samples per memory level.
    let rows = index["rows"].as_u64().unwrap();
    let selected: u64 = native["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["samples"].as_u64().unwrap())
        .sum();
    assert!(selected > 0 && selected < rows);
    for h in histograms {
        let bins = h["bins"].as_array().unwrap();
        let count: u64 = bins.iter().map(|b| b["count"].as_u64().unwrap()).sum();
        assert_eq!(
            count + h["unknown"].as_u64().unwrap(),
            rows,
            "{}",
            h["attribute"]
        );
        if h["attribute"] == "latency" {
            let marked: u64 = bins.iter().map(|b| b["selected"].as_u64().unwrap()).sum();
            assert_eq!(marked, selected);
        }
    }
    let level = histograms.last().unwrap()["bins"].as_array().unwrap();
    for l in native["levels"].as_array().unwrap() {
        let bin = level
            .iter()
            .find(|b| b["label"] == l["level"])
            .unwrap_or_else(|| panic!("no level bin {}", l["level"]));
        assert_eq!(bin["selected"], l["samples"], "level {}", l["level"]);
    }
    // The top offenders are the native ones.
    assert_eq!(index["top_source_lines"], native["top_lines"]);
    assert_eq!(index["top_symbols"], native["top_symbols"]);
    // A bad engine is a clear error.
    let out = memscape()
        .arg("index")
        .arg(&dir)
        .args(["--engine", "spark://x"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("ballista://HOST:PORT"));
}

/// `memscape info DATASET/` of a samples dataset answers from its manifest: the count, the
/// hosts and the attributes, reading no sample (its summary says so).
#[test]
fn info_of_a_samples_dataset_reads_its_manifest_only() {
    let lulesh = common::shared("memaxes/lulesh");
    let dir = common::fresh("parquet_cli", "info-samples");
    common::ok(
        common::memscape()
            .arg("export")
            .arg(lulesh.join("samples.out"))
            .args(["--to", "parquet", "--windows", "4", "--host", "rank0", "-o"])
            .arg(&dir),
    );
    let out = common::ok(common::memscape().arg("info").arg(&dir));
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.contains("(memaxes_csv samples, Parquet dataset)"),
        "{text}"
    );
    assert!(
        text.contains("samples         15676 (from the manifest; none read)"),
        "{text}"
    );
    assert!(text.contains("rank0         15676 samples"), "{text}");
    assert!(
        text.contains("attributes      variable, source, line, time"),
        "{text}"
    );
}
