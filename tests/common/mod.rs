//! Helpers shared by the integration tests that drive the `memscape` binary: `memscape render`
//! on Mesa's lavapipe, windows under Xvfb and their screenshots, colour counts and an image
//! distance for animations (the views' golden-image checks run in-process in
//! `crates/memscape-views/tests/`). Each test file uses a part of them.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use memscape_render::RgbaImage;

/// The binary under test, on the software Vulkan device golden images are made on.
pub fn memscape() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_memscape"));
    c.env("MEMSCAPE_ADAPTER", "cpu");
    c
}

/// The binary under test for recordings: `MEMSCAPE_SHIM` names the recorder shim built next
/// to the binary (`cargo build -p memscape-recorder`), built (or found up to date) once per
/// run, never merely found: a shim left from an older build in a warm target directory lacks
/// what the tests check.
pub fn memscape_recording() -> Command {
    static BUILT: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    BUILT.get_or_init(|| {
        let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(["build", "--quiet", "-p", "memscape-recorder"])
            .status()
            .unwrap();
        assert!(status.success());
    });
    let mut c = Command::new(env!("CARGO_BIN_EXE_memscape"));
    let shim = Path::new(env!("CARGO_BIN_EXE_memscape")).with_file_name("libmemscape_recorder.so");
    c.env("MEMSCAPE_SHIM", shim);
    c
}

/// A file of the shared real-data directory (`../shared/data/<rel>`).
pub fn shared(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data")
        .join(rel)
}

/// `memscape render INPUT ARGS… --out <tmp>/<group>/<name>.png`, which must succeed, and the
/// picture it wrote.
pub fn render(group: &str, name: &str, input: &Path, args: &[&str]) -> RgbaImage {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(group);
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(format!("{name}.png"));
    let _ = std::fs::remove_file(&out);
    let status = memscape()
        .arg("render")
        .arg(input)
        .args(args)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "memscape render {} {args:?} failed: {}",
        input.display(),
        String::from_utf8_lossy(&status.stderr)
    );
    RgbaImage::load_png(&out).unwrap()
}

/// Mean absolute difference of two images averaged over 32×32 blocks: thin points that move by
/// a pixel change whole pixels, blocks change in proportion to how far things move.
pub fn blurred_diff(a: &RgbaImage, b: &RgbaImage) -> f64 {
    let block = 32u32;
    let mean = |img: &RgbaImage, bx: u32, by: u32| {
        let mut sum = [0u64; 3];
        for y in by * block..((by + 1) * block).min(img.height) {
            for x in bx * block..((bx + 1) * block).min(img.width) {
                let p = img.pixel(x, y);
                for (s, &v) in sum.iter_mut().zip(&p[..3]) {
                    *s += u64::from(v);
                }
            }
        }
        sum.map(|v| v as f64 / f64::from(block * block))
    };
    let (nx, ny) = (a.width.div_ceil(block), a.height.div_ceil(block));
    let mut total = 0.0;
    for by in 0..ny {
        for bx in 0..nx {
            let (p, q) = (mean(a, bx, by), mean(b, bx, by));
            total += (0..3).map(|k| (p[k] - q[k]).abs()).sum::<f64>();
        }
    }
    total / f64::from(nx * ny * 3)
}

/// Runs `command`: whether it succeeded, its stdout and its stderr.
pub fn outcome(command: &mut Command) -> (bool, String, String) {
    let out = command.output().expect("run memscape");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A scratch folder `<target tmp>/<group>`, made if missing.
pub fn scratch(group: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(group);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A fresh path `<target tmp>/<group>/<name>`: whatever a previous run left there is removed.
pub fn fresh(group: &str, name: &str) -> PathBuf {
    let path = scratch(group).join(name);
    let _ = std::fs::remove_dir_all(&path);
    let _ = std::fs::remove_file(&path);
    path
}

/// Runs `cmd`, which must succeed: its stdout.
pub fn ok(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Runs `cmd`, which must succeed and print JSON: that JSON.
pub fn json(cmd: &mut Command) -> serde_json::Value {
    serde_json::from_slice(&ok(cmd)).unwrap()
}

/// `memscape` in a window under Xvfb (a screen a little larger than `window`), rendering on
/// lavapipe, its settings under `config` (`XDG_CONFIG_HOME`): the command, to add the
/// subcommand and its arguments to.
pub fn windowed(config: &Path, window: (u32, u32)) -> Command {
    let xvfb = Command::new("sh")
        .args(["-c", "command -v xvfb-run"])
        .output()
        .unwrap();
    assert!(
        xvfb.status.success(),
        "xvfb-run is missing: install the `xvfb` package (make test does)"
    );
    let mut c = Command::new("xvfb-run");
    // `-noreset`: see `tests/gui_faults.rs` (without it xvfb-run sometimes exits 5 instead of
    // memscape's status, when Xvfb's reset signal reaches its clean-up).
    c.args([
        "-a",
        "-s",
        &format!("-screen 0 {}x{}x24 -noreset", window.0 + 80, window.1 + 40),
    ])
    .arg(env!("CARGO_BIN_EXE_memscape"))
    .env("MEMSCAPE_ADAPTER", "cpu")
    .env("XDG_CONFIG_HOME", config);
    c
}

/// Runs a [`windowed`] command, which must succeed (its output in the failure), and returns
/// its output.
pub fn run_windowed(mut command: Command) -> Output {
    let out = command.output().expect("xvfb-run (package xvfb) runs");
    assert!(
        out.status.success(),
        "{command:?} failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `memscape view ARGS --window-size W×H --screenshot PNG` in a window under Xvfb (settings in
/// `PNG`'s folder), and with `env` set, which must succeed: the window's picture.
pub fn view_screenshot(
    png: &Path,
    args: &[&OsStr],
    window: (u32, u32),
    env: &[(&str, &OsStr)],
) -> RgbaImage {
    let mut c = view_screenshot_command(png, args, window);
    for (k, v) in env {
        c.env(k, v);
    }
    run_windowed(c);
    RgbaImage::load_png(png).unwrap()
}

/// The command `view_screenshot` runs (an earlier `PNG` removed), for tests that read its log
/// too: `run_windowed` it.
pub fn view_screenshot_command(png: &Path, args: &[&OsStr], window: (u32, u32)) -> Command {
    let _ = std::fs::remove_file(png);
    let mut c = windowed(png.parent().unwrap(), window);
    c.arg("view").args(args).args([
        "--window-size",
        &format!("{}x{}", window.0, window.1),
        "--screenshot-timeout",
        "240",
        "--screenshot",
    ]);
    c.arg(png);
    c
}

/// Pixels of `img` within `tolerance` (exclusive) of `want` in every channel.
pub fn count_near(img: &RgbaImage, want: [u8; 3], tolerance: u8) -> usize {
    (0..img.height)
        .flat_map(|y| (0..img.width).map(move |x| (x, y)))
        .filter(|&(x, y)| {
            let p = img.pixel(x, y);
            (0..3).all(|k| p[k].abs_diff(want[k]) < tolerance)
        })
        .count()
}
