//! `memscape render --stats` and `memscape bench` on lavapipe: the statistics JSON parsed and
//! checked (every field, the path the allocation map took matching the one forced with
//! MEMSCAPE_ALLOC_MAP_PATH, GPU times positive where the adapter has timestamp queries), and a
//! quick bench with tiny sizes giving a complete table and JSON.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use memscape_render::RgbaImage;
use serde_json::Value;

fn memscape() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_memscape"));
    c.env("MEMSCAPE_ADAPTER", "cpu");
    c
}

fn stdout_of(mut c: Command) -> String {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{c:?} failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn render_stats_report_the_forced_path_and_timed_passes() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("render-stats");
    std::fs::create_dir_all(&dir).unwrap();
    for path in ["raster", "dense"] {
        let png = dir.join(format!("{path}.png"));
        let _ = std::fs::remove_file(&png);
        let mut c = memscape();
        c.args([
            "render", "demo", "--width", "480", "--height", "300", "--stats", "--out",
        ])
        .arg(&png)
        .env("MEMSCAPE_ALLOC_MAP_PATH", path);
        let text = stdout_of(c);
        let json: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("stdout is not the statistics JSON ({e}):\n{text}"));
        assert!(png.exists(), "--stats still writes the image");
        assert_eq!(json["out"], png.display().to_string());
        assert_eq!(json["view"], "alloc-map");
        assert_eq!(json["width"], 480);
        assert_eq!(json["height"], 300);
        for field in ["name", "backend", "device_type", "driver", "driver_info"] {
            assert!(
                json["adapter"][field].is_string(),
                "adapter.{field}: {json}"
            );
        }
        assert_eq!(json["adapter"]["device_type"], "Cpu");
        let wall = &json["wall_ms"];
        for field in ["compose", "draw", "total"] {
            assert!(
                wall[field].as_f64().unwrap() > 0.0,
                "wall_ms.{field}: {json}"
            );
        }
        let maps = json["maps"].as_array().unwrap();
        assert!(!maps.is_empty(), "{json}");
        for m in maps {
            assert_eq!(m["path"], path, "{m}");
            assert!(m["blocks"].as_u64().unwrap() > 0, "{m}");
            assert!(m["width"].as_u64().unwrap() > 0 && m["height"].as_u64().unwrap() > 0);
        }
        let passes = json["passes"].as_array().unwrap();
        let names: Vec<&str> = passes.iter().map(|p| p["pass"].as_str().unwrap()).collect();
        let expect = match path {
            "raster" => "alloc_map accumulate (raster)",
            _ => "alloc_map dense scan",
        };
        assert!(names.contains(&expect), "{names:?}");
        let timed = json["adapter"]["timestamp_queries"].as_bool().unwrap();
        if timed {
            assert_eq!(json["gpu_timing"], "timestamp queries per pass");
            for p in passes {
                assert!(p["gpu_ns"].as_u64().is_some(), "{p}");
            }
            assert!(json["gpu_total_ns"].as_u64().unwrap() > 0, "{json}");
        } else {
            assert_eq!(json["gpu_timing"], "GPU timing unavailable on this adapter");
            assert!(passes.iter().all(|p| p["gpu_ns"].is_null()));
        }
    }
}

/// `memscape render` of `trace`'s allocation map at `size` (WIDTHxHEIGHT) into `png` (with `--stats` when
/// `stats`), its index in `dir`, traces above 1000 blocks counted big; returns (stdout, stderr)
/// of a successful run. `memscape_views::render`'s debug log says when a file is read whole.
fn render_big(
    dir: &Path,
    trace: &Path,
    size: [u32; 2],
    png: &Path,
    stats: bool,
    path: Option<&str>,
) -> (String, String) {
    let _ = std::fs::remove_file(png);
    let mut c = memscape();
    c.arg("render")
        .arg(trace)
        .args(["--view", "alloc", "--color", "thread", "--width"])
        .arg(size[0].to_string())
        .arg("--height")
        .arg(size[1].to_string())
        .args(stats.then_some("--stats"))
        .arg("--out")
        .arg(png)
        .env("MEMSCAPE_LOD_BLOCKS", "1000")
        .env("XDG_CACHE_HOME", dir)
        .env("RUST_LOG", "warn,memscape_views::render=debug")
        .env("NO_COLOR", "1")
        .env_remove("MEMSCAPE_ALLOC_MAP_PATH");
    if let Some(path) = path {
        c.env("MEMSCAPE_ALLOC_MAP_PATH", path);
    }
    let out = c.output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "{c:?} failed:\n{stdout}\n{stderr}");
    assert!(png.exists(), "{c:?} wrote no image");
    (stdout, stderr)
}

/// Issue 25: `render --stats` of a big trace (100,000 blocks; big with
/// `MEMSCAPE_LOD_BLOCKS=1000`) draws its map from the level-of-detail index as plain `render`
/// does — the same PNG, byte for byte, the report naming the level — without reading the
/// trace whole (it did: 12.7 GB and 23–34 s at 25 M blocks). The control, the exact path
/// forced, reads it whole and says so, so that the log assertion can fail.
#[test]
fn render_stats_of_a_big_trace_draws_from_its_level_of_detail_index() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("render-stats-lod");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("big.msc");
    memscape_lod::synth::write_mappable(
        memscape_lod::synth::SynthParams::new(200_000, 9),
        &trace,
        &mut |_| {},
    )
    .unwrap();
    let read_whole = |log: &str| log.lines().any(|l| l.contains("read whole"));

    // The whole view at 160×90 is drawn from a level; at 640×360 it is finer than every level,
    // its 100,000 blocks found through the index (more than lavapipe's exact pipeline takes:
    // summed on the CPU).
    for (size, path, said) in [
        ([160, 90], "level", "allocation map from level of detail"),
        (
            [640, 360],
            "exact",
            "allocation map from exact blocks found through the index",
        ),
    ] {
        let plain_png = dir.join(format!("plain-{path}.png"));
        let (_, plain_log) = render_big(&dir, &trace, size, &plain_png, false, None);
        assert!(plain_log.contains(said), "{plain_log}");
        let stats_png = dir.join(format!("stats-{path}.png"));
        let (text, stats_log) = render_big(&dir, &trace, size, &stats_png, true, None);
        assert!(
            !read_whole(&stats_log),
            "--stats read the trace whole:\n{stats_log}"
        );
        assert!(stats_log.contains(said), "{stats_log}");
        let json: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("stdout is not the statistics JSON ({e}):\n{text}"));
        let lod = json["lod"].as_array().unwrap();
        assert_eq!(
            lod.len(),
            1,
            "one map layer, drawn from the index: {json:#}"
        );
        let lod = &lod[0];
        assert_eq!(lod["path"], path, "{json:#}");
        assert_eq!(lod["scope"], "layer 0 map", "{json:#}");
        if path == "level" {
            assert!(lod["level"].as_u64().is_some(), "{json:#}");
            assert!(lod["level_log2_events"].as_u64().is_some(), "{json:#}");
            assert!(lod["cells"].as_u64().unwrap() > 0, "{json:#}");
            assert!(
                lod["drawn"].as_str().unwrap().starts_with("level "),
                "{json:#}"
            );
        } else {
            assert!(lod["level"].is_null(), "{json:#}");
            assert_eq!(lod["exact_blocks"], 100_509, "{json:#}");
            assert_eq!(lod["summed_on"], "cpu", "{json:#}");
        }
        assert!(json["wall_ms"]["open"].as_f64().unwrap() > 0.0, "{json:#}");
        let (plain, stats) = (
            RgbaImage::load_png(&plain_png).unwrap(),
            RgbaImage::load_png(&stats_png).unwrap(),
        );
        assert_eq!([stats.width, stats.height], size);
        assert!(stats.distinct_colors() > 20, "the map looks blank");
        assert!(
            plain.pixels == stats.pixels,
            "render --stats drew another picture than render ({path})"
        );
    }

    // The control: every block read and drawn by the exact pipeline, and said.
    let exact_png = dir.join("exact.png");
    let (text, exact_log) = render_big(&dir, &trace, [160, 90], &exact_png, true, Some("exact"));
    assert!(read_whole(&exact_log), "{exact_log}");
    let json: Value = serde_json::from_str(&text).unwrap();
    assert!(json["lod"].as_array().unwrap().is_empty(), "{json:#}");
    assert!(!json["maps"].as_array().unwrap().is_empty(), "{json:#}");
}

#[test]
fn a_quick_bench_gives_a_complete_table_and_json() {
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let args = [
        "bench",
        "--quick",
        "--blocks",
        "3000",
        "--sizes",
        "160x100",
        "--records",
        "2000",
        "--frames",
        "2",
        "--tour-size",
        "160x100",
        "--tour-frames",
        "1",
    ];
    let mut c = memscape();
    c.args(args).arg("--json").arg("--scratch").arg(&scratch);
    let text = stdout_of(c);
    let json: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["adapter"]["device_type"], "Cpu");
    let rows = json["rows"].as_array().unwrap();
    // 4 paths (the level of detail resolved on the CPU and on the GPU) × 2 views, the level of
    // detail's level-drawn view ("zoomed out 8×") on both, 1 morph, the tour.
    assert_eq!(rows.len(), 12, "{json:#}");
    for path in ["raster", "dense", "lod", "lod-gpu"] {
        let views: &[&str] = if path.starts_with("lod") {
            &["zoomed out", "zoomed out 8×", "zoomed in"]
        } else {
            &["zoomed out", "zoomed in"]
        };
        for &view in views {
            let row = rows
                .iter()
                .find(|r| r["case"] == "alloc_map" && r["path"] == path && r["view"] == view)
                .unwrap_or_else(|| panic!("no {path} {view} row: {json:#}"));
            assert_eq!(row["frames"], 2);
            assert!(row["wall_ms_p50"].as_f64().unwrap() > 0.0, "{row}");
            assert!(row["taken"].as_str().unwrap().starts_with(path), "{row}");
            assert_eq!(row["width"], 160);
            // The level-of-detail GPU frames' host side (to `queue.submit` returned).
            if path == "lod-gpu" {
                assert!(row["host_ms_p50"].as_f64().unwrap() > 0.0, "{row}");
                // Each of the frame's passes, where the adapter times them.
                if json["adapter"]["timestamp_queries"] == true {
                    let passes = row["gpu_passes"].as_array().unwrap();
                    assert!(
                        passes.iter().any(|p| p["pass"] == "alloc_map resolve"),
                        "{row}"
                    );
                }
            }
        }
    }
    let morph = rows.iter().find(|r| r["case"] == "morph").unwrap();
    assert_eq!(morph["count"], 2000);
    let tour = rows.iter().find(|r| r["case"] == "tour").unwrap();
    assert_eq!(tour["frames"], 1);
    assert_eq!(tour["target"]["ms"], 16.7);
    if json["adapter"]["timestamp_queries"] == true {
        assert!(morph["gpu_ms_p50"].as_f64().unwrap() > 0.0, "{morph}");
    }
    // The scratch trace and its index are gone.
    assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 0);

    let mut c = memscape();
    c.args(args).arg("--no-tour").arg("--scratch").arg(&scratch);
    let table = stdout_of(c);
    assert!(table.starts_with("device: "), "{table}");
    assert!(table.contains("| case | path (taken) |"), "{table}");
    assert_eq!(
        table
            .lines()
            .filter(|l| l.starts_with("| alloc_map |"))
            .count(),
        10,
        "{table}"
    );
    assert_eq!(
        table.lines().filter(|l| l.starts_with("| morph |")).count(),
        1
    );
    assert!(!table.contains("| tour |"));
    // The level-of-detail GPU frames' passes below the table.
    if table.contains("timestamp queries per pass") {
        assert!(
            table.contains("\n- lod-gpu 160×100 zoomed in: alloc_map "),
            "{table}"
        );
    }
}
