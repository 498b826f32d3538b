//! `memscape diff A B` on real inputs: two recordings of a small C program with different
//! workloads, made with `memscape record` while the test runs (the program's own counts and
//! `heaptree --json` of each run are the oracles), and two real massif files (each side's
//! `heaptree --json`); `render --compare` draws the difference views.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{memscape, shared};
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

/// The site whose path ends in a name containing `needle`.
fn site<'a>(report: &'a Value, needle: &str) -> &'a Value {
    report["sites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["path"]
                .as_array()
                .unwrap()
                .last()
                .is_some_and(|n| n.as_str().unwrap().contains(needle))
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

#[test]
fn two_massif_files_compare_like_their_heaptrees() {
    let a = shared("massif/massif.out.32406");
    let b = shared("massif/massif.out.kate");
    let report = json(&["diff", "--json", a.to_str().unwrap(), b.to_str().unwrap()]);
    for (side, file) in [("a", &a), ("b", &b)] {
        let (total, children) = heaptree_level_one(file, &[]);
        assert_eq!(report["totals"][format!("bytes_{side}")], total, "{side}");
        assert_eq!(report[side]["total_bytes"], total, "{side}");
        let level_one: u64 = report["tree"]["children"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c[format!("bytes_{side}")].as_u64().unwrap())
            .sum();
        let theirs: u64 = children.iter().map(|c| c.1).sum();
        assert_eq!(level_one, theirs, "{side}: first level");
    }
    // Different programs: A's sites are gone, B's new.
    assert!(report["totals"]["gone"].as_u64().unwrap() > 0);
    assert!(report["totals"]["new"].as_u64().unwrap() > 0);
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
