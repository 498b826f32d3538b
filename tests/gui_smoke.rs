//! The windowed self-test: the real GUI under Xvfb, rendering through lavapipe, saved with
//! `--screenshot` and checked for content.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

#[test]
fn gui_opens_the_demo_and_screenshots_it_under_xvfb() {
    let xvfb = Command::new("sh")
        .args(["-c", "command -v xvfb-run"])
        .output()
        .unwrap();
    assert!(
        xvfb.status.success(),
        "xvfb-run is missing: install the `xvfb` package (make test does)"
    );
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gui");
    std::fs::create_dir_all(&dir).unwrap();
    let png = dir.join("demo-window.png");
    let _ = std::fs::remove_file(&png);
    let out = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1280x800x24"])
        .arg(env!("CARGO_BIN_EXE_memscape"))
        .args([
            "view",
            "--window-size",
            "1200x760",
            "--screenshot-timeout",
            "240",
            "--screenshot",
        ])
        .arg(&png)
        .env("MEMSCAPE_ADAPTER", "cpu")
        .env("XDG_CONFIG_HOME", &dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "memscape view --screenshot failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let image = memscape_render::RgbaImage::load_png(&png).unwrap();
    assert!(
        image.width >= 1000 && image.height >= 600,
        "unexpected size {}x{}",
        image.width,
        image.height
    );
    assert!(
        image.distinct_colors() > 200,
        "the window looks blank ({} colours)",
        image.distinct_colors()
    );
}
