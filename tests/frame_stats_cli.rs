//! `memscape render --stats` and `memscape bench` on lavapipe: the statistics JSON parsed and
//! checked (every field, the path the allocation map took matching the one forced with
//! MEMSCAPE_ALLOC_MAP_PATH, GPU times positive where the adapter has timestamp queries), and a
//! quick bench with tiny sizes giving a complete table and JSON.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

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
    // 4 paths (the level of detail resolved on the CPU and on the GPU) × 2 views + 1 morph +
    // the tour.
    assert_eq!(rows.len(), 10, "{json:#}");
    for path in ["raster", "dense", "lod", "lod-gpu"] {
        for view in ["zoomed out", "zoomed in"] {
            let row = rows
                .iter()
                .find(|r| r["case"] == "alloc_map" && r["path"] == path && r["view"] == view)
                .unwrap_or_else(|| panic!("no {path} {view} row: {json:#}"));
            assert_eq!(row["frames"], 2);
            assert!(row["wall_ms_p50"].as_f64().unwrap() > 0.0, "{row}");
            assert!(row["taken"].as_str().unwrap().starts_with(path), "{row}");
            assert_eq!(row["width"], 160);
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
        8,
        "{table}"
    );
    assert_eq!(
        table.lines().filter(|l| l.starts_with("| morph |")).count(),
        1
    );
    assert!(!table.contains("| tour |"));
}
