//! `memscape diff A B` on real inputs: two recordings of a small C program with different
//! workloads, made with `memscape record` while the test runs, and valgrind massif's profiles
//! of the same two runs (the program's own counts, `heaptree --json` of each run and massif's
//! peaks are the oracles); `render --compare` draws the difference views, `info`, `render`
//! and `view` read directories.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::memscape;
use serde_json::Value;

/// `memscape` with the recorder shim the tests build next to the binary.
fn recorder() -> Command {
    let shim = Path::new(env!("CARGO_BIN_EXE_memscape")).with_file_name("libmemscape_recorder.so");
    if !shim.is_file() {
        let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(["build", "--quiet", "-p", "memscape-recorder"])
            .status()
            .unwrap();
        assert!(status.success());
    }
    let mut c = memscape();
    c.env("MEMSCAPE_SHIM", shim);
    c
}

/// Keeps `small` 64-byte blocks, `big` 4 KiB blocks and (heavy) 100 × 256 B from a third site
/// live at once, then frees them all.
const WORKLOAD: &str = r#"
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) void *keep_small(size_t n) { void *p = malloc(n); memset(p, 1, n); return p; }
__attribute__((noinline)) void *keep_big(size_t n) { void *p = malloc(n); memset(p, 2, n); return p; }
__attribute__((noinline)) void *only_heavy(size_t n) { void *p = malloc(n); memset(p, 3, n); return p; }
int main(int argc, char **argv) {
    int heavy = argc > 1 && strcmp(argv[1], "heavy") == 0;
    static void *keep[4000];
    int k = 0;
    for (int i = 0; i < (heavy ? 1000 : 500); i++) keep[k++] = keep_small(64);
    for (int i = 0; i < (heavy ? 10 : 20); i++) keep[k++] = keep_big(4096);
    if (heavy) for (int i = 0; i < 100; i++) keep[k++] = only_heavy(256);
    for (int i = 0; i < k; i++) free(keep[i]);
    return 0;
}
"#;

/// The two recordings (made once per test process).
fn recordings() -> (PathBuf, PathBuf) {
    static RUNS: std::sync::OnceLock<(PathBuf, PathBuf)> = std::sync::OnceLock::new();
    RUNS.get_or_init(|| {
        let dir =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("diff-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("workload.c"), WORKLOAD).unwrap();
        let status = Command::new("cc")
            .current_dir(&dir)
            .args(["-O1", "-g", "-o", "workload", "workload.c"])
            .status()
            .unwrap();
        assert!(status.success(), "cc failed");
        let run = |mode: &str| {
            let out = dir.join(format!("{mode}.msc"));
            let status = recorder()
                .arg("record")
                .arg("-o")
                .arg(&out)
                .arg("--")
                .arg(dir.join("workload"))
                .arg(mode)
                .status()
                .unwrap();
            assert!(status.success(), "memscape record {mode}");
            out
        };
        (run("light"), run("heavy"))
    })
    .clone()
}

fn json(args: &[&str]) -> Value {
    let out = memscape().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "memscape {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The site whose path has a name containing `needle`.
fn site<'a>(report: &'a Value, needle: &str) -> &'a Value {
    report["sites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["path"]
                .as_array()
                .unwrap()
                .iter()
                .any(|n| n.as_str().unwrap().contains(needle))
        })
        .unwrap_or_else(|| panic!("no site {needle} in {report:#}"))
}

/// `heaptree --json` of one run: its first level by name (bytes, objects).
fn heaptree_level_one(file: &Path, extra: &[&str]) -> (u64, Vec<(String, u64, u64)>) {
    let mut args = vec!["heaptree", "--json", "--depth", "1"];
    args.extend_from_slice(extra);
    args.push(file.to_str().unwrap());
    let r = json(&args);
    let children = r["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_owned(),
                c["bytes"].as_u64().unwrap(),
                c["objects"].as_u64().unwrap(),
            )
        })
        .collect();
    (r["total_bytes"].as_u64().unwrap(), children)
}

#[test]
fn two_recordings_compare_site_by_site_at_their_peaks() {
    let (light, heavy) = recordings();
    let (a, b) = (light.to_str().unwrap(), heavy.to_str().unwrap());
    let report = json(&["diff", "--json", "--peak", a, b]);
    // The program's own counts: at each peak every block is live.
    let small = site(&report, "keep_small");
    assert_eq!(small["bytes_a"], 500 * 64);
    assert_eq!(small["bytes_b"], 1000 * 64);
    assert_eq!(small["objects_change"], 500);
    assert_eq!(small["status"], "grown");
    let big = site(&report, "keep_big");
    assert_eq!(
        (big["bytes_a"].as_u64(), big["bytes_b"].as_u64()),
        (Some(20 * 4096), Some(10 * 4096))
    );
    assert_eq!(big["bytes_change"], -10 * 4096);
    assert_eq!(big["status"], "shrunk");
    let heavy_only = site(&report, "only_heavy");
    assert_eq!(heavy_only["bytes_b"], 100 * 256);
    assert_eq!(heavy_only["status"], "new");
    // Independently: heaptree of each run with the same options.
    for (side, file) in [("a", &light), ("b", &heavy)] {
        let (total, children) = heaptree_level_one(file, &["--peak"]);
        assert_eq!(report["totals"][format!("bytes_{side}")], total, "{side}");
        for (name, bytes, objects) in children.iter().filter(|c| c.0 != "Other") {
            let s = site(&report, name);
            assert_eq!(s[format!("bytes_{side}")], *bytes, "{side} {name}");
            assert_eq!(s[format!("objects_{side}")], *objects, "{side} {name}");
        }
    }
    // The sites' changes add up to the totals' change.
    let sum: i64 = report["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["bytes_change"].as_i64().unwrap())
        .sum();
    assert_eq!(report["totals"]["bytes_change"], sum);
    assert_eq!(report["totals"]["new"], 1);
    // Reversed: new becomes gone, grown shrunk.
    let back = json(&["diff", "--json", "--peak", b, a]);
    assert_eq!(site(&back, "only_heavy")["status"], "gone");
    assert_eq!(site(&back, "keep_small")["status"], "shrunk");
    // Text output names the sites with their status.
    let out = memscape().args(["diff", "--peak", a, b]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("new") && text.contains("only_heavy"),
        "{text}"
    );
    // By call path: the leaves are whole paths through main.
    let paths = json(&["diff", "--json", "--peak", "--group", "path", a, b]);
    let leaf = site(&paths, "keep_small");
    let path: Vec<&str> = leaf["path"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(path.iter().any(|n| n.starts_with("main")), "{path:?}");
    assert_eq!(leaf["bytes_b"], 1000 * 64);
}

/// valgrind's massif on the same two workloads (exact peak, a tree at every snapshot).
fn massif_runs() -> (PathBuf, PathBuf) {
    let (light, _) = recordings();
    let dir = light.parent().unwrap().to_owned();
    let run = |mode: &str| {
        let out = dir.join(format!("massif.{mode}"));
        if !out.is_file() {
            let status = Command::new("valgrind")
                .arg("--tool=massif")
                .arg("--detailed-freq=1")
                .arg("--peak-inaccuracy=0")
                .arg(format!("--massif-out-file={}", out.display()))
                .arg(dir.join("workload"))
                .arg(mode)
                .output()
                .expect("valgrind is installed (scripts/install-deps.sh)");
            assert!(status.status.success(), "valgrind massif {mode}");
        }
        out
    };
    (run("light"), run("heavy"))
}

#[test]
fn two_massif_runs_compare_like_their_heaptrees_and_the_recordings() {
    let (a, b) = massif_runs();
    let report = json(&[
        "diff",
        "--json",
        "--peak",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    let level_one = |side: &str| -> Vec<(String, u64)> {
        report["tree"]["children"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap().to_owned(),
                    c[format!("bytes_{side}")].as_u64().unwrap(),
                )
            })
            .collect()
    };
    for (side, file) in [("a", &a), ("b", &b)] {
        let (total, children) = heaptree_level_one(file, &["--peak"]);
        assert_eq!(report["totals"][format!("bytes_{side}")], total, "{side}");
        let ours = level_one(side);
        for (name, bytes, _) in children.iter().filter(|c| c.0 != "Other") {
            let found = ours.iter().find(|(n, _)| n == name);
            assert_eq!(found.map(|f| f.1), Some(*bytes), "{side} {name}");
        }
    }
    // massif's allocation functions at each peak: the program's own numbers.
    let bytes_of = |needle: &str| {
        report["tree"]["children"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"].as_str().unwrap().contains(needle))
            .map(|c| {
                (
                    c["bytes_a"].as_u64().unwrap(),
                    c["bytes_b"].as_u64().unwrap(),
                    c["status"].clone(),
                )
            })
            .unwrap_or_else(|| panic!("{needle} in {report:#}"))
    };
    assert_eq!(
        bytes_of("keep_small"),
        (500 * 64, 1000 * 64, "grown".into())
    );
    assert_eq!(
        bytes_of("keep_big"),
        (20 * 4096, 10 * 4096, "shrunk".into())
    );
    assert_eq!(bytes_of("only_heavy"), (0, 100 * 256, "new".into()));
    // The same runs recorded by memscape: the same heap at the peak.
    let (light, heavy) = recordings();
    let recorded = json(&[
        "diff",
        "--json",
        "--peak",
        light.to_str().unwrap(),
        heavy.to_str().unwrap(),
    ]);
    assert_eq!(recorded["totals"]["bytes_a"], report["totals"]["bytes_a"]);
    assert_eq!(recorded["totals"]["bytes_b"], report["totals"]["bytes_b"]);
}

#[test]
fn the_difference_views_render() {
    let (light, heavy) = recordings();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("diff-render");
    std::fs::create_dir_all(&dir).unwrap();
    for view in ["sunburst", "icicle", "timeline", "alloc"] {
        let out = dir.join(format!("{view}.png"));
        let status = memscape()
            .args(["render", "--compare"])
            .arg(&light)
            .arg(&heavy)
            .args([
                "--view", view, "--peak", "--width", "900", "--height", "600", "--out",
            ])
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            status.status.success(),
            "render --compare --view {view}: {}",
            String::from_utf8_lossy(&status.stderr)
        );
        let image = memscape_render::RgbaImage::load_png(&out).unwrap();
        assert_eq!((image.width, image.height), (900, 600));
        // Not a blank picture: many distinct colours.
        let mut colours = std::collections::HashSet::new();
        for y in (0..image.height).step_by(7) {
            for x in (0..image.width).step_by(7) {
                colours.insert(image.pixel(x, y));
            }
        }
        assert!(colours.len() > 20, "{view}: {} colours", colours.len());
    }
}

/// `memscape view ARGS --screenshot` under Xvfb; the window's picture.
fn window(name: &str, args: &[&std::ffi::OsStr]) -> memscape_render::RgbaImage {
    let png = common::scratch("diff-gui").join(format!("{name}.png"));
    common::view_screenshot(&png, args, (1200, 760), &[])
}

/// `memscape view --diff A B` opens one difference pane: its picture carries the diverging
/// ramp (its dark blue end) and the grown sites' red.
#[test]
fn the_gui_compares_two_runs_in_one_pane() {
    let (light, heavy) = recordings();
    let image = window(
        "diff",
        &["--diff".as_ref(), light.as_os_str(), heavy.as_os_str()],
    );
    let near = |want: [u8; 4]| {
        (0..image.height).any(|y| {
            (0..image.width).any(|x| {
                let p = image.pixel(x, y);
                (0..3).all(|k| p[k].abs_diff(want[k]) <= 6)
            })
        })
    };
    assert!(
        near(memscape_render::color::blue_red_srgb8(0.0)),
        "no ramp in the window"
    );
    assert!(
        image.distinct_colors() > 100,
        "{} colours",
        image.distinct_colors()
    );
}

/// `info`, `render` and `view` of directories: a Parquet dataset reads as its trace, MemAxes'
/// layout pairs the samples with its hardware.xml (the same picture as naming both).
#[test]
fn directories_open_their_datasets() {
    let (light, _) = recordings();
    let base = light.parent().unwrap();
    let parquet = base.join("light.parquet");
    let _ = std::fs::remove_dir_all(&parquet);
    let status = memscape()
        .args(["export", "--to", "parquet", "-o"])
        .arg(&parquet)
        .arg(&light)
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let from_dir = json(&["info", "--json", parquet.to_str().unwrap()]);
    let from_file = json(&["info", "--json", light.to_str().unwrap()]);
    for key in ["events", "allocs", "frees", "peak_live_bytes"] {
        assert_eq!(from_dir[key], from_file[key], "{key}");
    }
    // MemAxes' layout: DIR/data/samples.*, DIR/hardware.xml, DIR/src/.
    let lulesh = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/memaxes/lulesh");
    let memaxes = base.join("memaxes");
    std::fs::create_dir_all(memaxes.join("data")).unwrap();
    std::fs::create_dir_all(memaxes.join("src")).unwrap();
    std::fs::copy(lulesh.join("samples.out"), memaxes.join("data/samples.out")).unwrap();
    std::fs::copy(lulesh.join("hardware.xml"), memaxes.join("hardware.xml")).unwrap();
    std::fs::copy(
        lulesh.join("LULESH_OMP.cc"),
        memaxes.join("src/LULESH_OMP.cc"),
    )
    .unwrap();
    let listed = json(&["info", "--json", memaxes.to_str().unwrap()]);
    assert_eq!(
        listed[0]["path"],
        memaxes.join("data/samples.out").to_str().unwrap()
    );
    assert_eq!(
        listed[0]["topology"],
        memaxes.join("hardware.xml").to_str().unwrap()
    );
    let dir_png = common::render("dirs", "memaxes-dir", &memaxes, &["--view", "topology"]);
    let named = common::render(
        "dirs",
        "memaxes-named",
        &memaxes.join("data/samples.out"),
        &[
            "--view",
            "topology",
            "--hardware",
            memaxes.join("hardware.xml").to_str().unwrap(),
        ],
    );
    assert_eq!(
        dir_png.pixels, named.pixels,
        "render DIR = render samples --hardware"
    );
    // The window opens the directory's datasets.
    let image = window("memaxes", &[memaxes.as_os_str()]);
    assert!(image.distinct_colors() > 100);
}
