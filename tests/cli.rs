//! The `memscape` binary end to end: help, headless rendering on lavapipe, errors on bad input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn memscape() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_memscape"));
    // Golden and CI rendering happen on the software adapter.
    c.env("MEMSCAPE_ADAPTER", "cpu");
    c
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn help_documents_every_subcommand() {
    let out = memscape().arg("--help").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for sub in ["view", "render", "info", "demo"] {
        assert!(text.contains(sub), "--help does not mention {sub}:\n{text}");
    }
}

#[test]
fn render_writes_a_non_blank_png_of_the_demo() {
    let out_png = scratch("demo-alloc-map.png");
    let _ = std::fs::remove_file(&out_png);
    let out = memscape()
        .args([
            "render",
            "demo",
            "--view",
            "alloc-map",
            "--width",
            "400",
            "--height",
            "300",
            "--out",
        ])
        .arg(&out_png)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "render failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let image = memscape_render::RgbaImage::load_png(&out_png).unwrap();
    assert_eq!((image.width, image.height), (400, 300));
    assert!(
        image.distinct_colors() > 100,
        "the demo rendering looks blank ({} colours)",
        image.distinct_colors()
    );
}

#[test]
fn a_file_that_is_not_a_trace_is_a_clear_error() {
    let bad = scratch("not-a-trace.txt");
    std::fs::write(&bad, "hello, this is not a memory trace\n").unwrap();
    let out = memscape()
        .args(["render", "--out"])
        .arg(scratch("never.png"))
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not-a-trace.txt"),
        "error does not name the file: {err}"
    );
    assert!(!err.contains("panicked"), "panic on bad input: {err}");
}

#[test]
fn a_missing_file_is_a_clear_error() {
    let out = memscape()
        .args(["info", "/nonexistent/trace.raw"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/trace.raw"), "{err}");
}
