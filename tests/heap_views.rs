//! Golden images of the heap-evolution views, rendered headless on lavapipe through the same
//! code as the GUI (`memscape render --view sunburst|icicle|timeline`), on a real massif file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use memscape_render::RgbaImage;
use memscape_render::golden::{self, Tolerance};

mod common;
use common::check;

fn kate() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/massif/massif.out.kate");
    assert!(
        p.exists(),
        "{} is missing (see ../shared/data/README.md)",
        p.display()
    );
    p
}

fn render(name: &str, args: &[&str]) -> RgbaImage {
    common::render("heap_views", name, &kate(), args)
}

#[test]
fn sunburst_golden() {
    let img = render(
        "sunburst",
        &[
            "--view", "sunburst", "--width", "640", "--height", "480", "--depth", "3",
        ],
    );
    assert!(
        img.distinct_colors() > 100,
        "a sunburst with labels has many colours"
    );
    check("heap_sunburst", &img);
}

#[test]
fn icicle_golden() {
    let img = render(
        "icicle",
        &[
            "--view", "icicle", "--width", "640", "--height", "480", "--depth", "3",
        ],
    );
    check("heap_icicle", &img);
}

#[test]
fn timeline_golden() {
    let img = render(
        "timeline",
        &[
            "--view", "timeline", "--width", "960", "--height", "300", "--points", "4",
        ],
    );
    check("heap_timeline", &img);
}

#[test]
fn drill_down_golden_differs_from_the_whole_heap() {
    let whole = render(
        "whole",
        &[
            "--view",
            "sunburst",
            "--width",
            "480",
            "--height",
            "480",
            "--snapshot",
            "44",
        ],
    );
    let drilled = render(
        "drilled",
        &[
            "--view",
            "sunburst",
            "--width",
            "480",
            "--height",
            "480",
            "--snapshot",
            "44",
            "--root",
            "QTextEngine::LayoutData::reallocate",
        ],
    );
    let c = golden::compare(
        &whole,
        &drilled,
        Tolerance {
            per_channel: 8,
            max_differing_pixels: 0,
        },
    );
    assert!(
        c.differing_pixels > 10_000,
        "drilling down changes the picture"
    );
    check("heap_sunburst_drilled", &drilled);
}

#[test]
fn unknown_root_is_a_clear_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_memscape"))
        .arg("render")
        .arg(kate())
        .args(["--view", "sunburst", "--root", "no-such-function", "--out"])
        .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join("never.png"))
        .env("MEMSCAPE_ADAPTER", "cpu")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--root") && err.contains("no-such-function"),
        "{err}"
    );
}

#[test]
fn timeline_at_chosen_times() {
    // Three massif times: the first, a middle and the last detailed snapshots' times.
    let img = render(
        "timeline_times",
        &[
            "--view",
            "timeline",
            "--width",
            "720",
            "--height",
            "260",
            "--times",
            "0,2000000000,99999999999",
        ],
    );
    let even = render(
        "timeline_even",
        &[
            "--view", "timeline", "--width", "720", "--height", "260", "--points", "3",
        ],
    );
    // Three cells either way, but not the same time points.
    let c = golden::compare(
        &img,
        &even,
        Tolerance {
            per_channel: 8,
            max_differing_pixels: 0,
        },
    );
    assert!(
        c.differing_pixels > 100,
        "chosen times differ from even spacing"
    );
    check("heap_timeline_times", &img);
}
