//! The views crate stays below the window shell and the command line: its default build pulls
//! in neither eframe, egui_tiles nor clap (what `cargo tree` resolves for it alone), while it
//! does draw through egui's text, egui-wgpu and memscape's renderer. The `clap` feature, which
//! only the binary enables, adds clap and nothing of the shell.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::process::Command;

/// The packages `cargo tree` resolves for memscape-views (normal and build dependencies).
fn dependencies(features: &[&str]) -> BTreeSet<String> {
    let out = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "--offline",
            "-p",
            "memscape-views",
            "-e",
            "normal,build",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .args(features)
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

#[test]
fn the_default_build_has_no_window_shell_and_no_command_line() {
    let deps = dependencies(&[]);
    for present in [
        "egui",
        "egui-wgpu",
        "memscape-render",
        "memscape-trace",
        "wgpu",
    ] {
        assert!(deps.contains(present), "{present} missing from {deps:?}");
    }
    for absent in ["eframe", "egui_tiles", "clap", "winit"] {
        assert!(!deps.contains(absent), "memscape-views depends on {absent}");
    }
    // The binary's feature brings clap and only clap of those.
    let with_clap = dependencies(&["--features", "clap"]);
    assert!(with_clap.contains("clap"));
    for absent in ["eframe", "egui_tiles", "winit"] {
        assert!(
            !with_clap.contains(absent),
            "the clap feature pulls in {absent}"
        );
    }
}
