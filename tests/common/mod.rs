//! Helpers shared by the integration tests that drive the `memscape` binary: `memscape render`
//! on Mesa's lavapipe and an image distance for animations (the views' golden-image checks run
//! in-process in `crates/memscape-views/tests/`). Each test file uses a part of them.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use memscape_render::RgbaImage;

/// The binary under test, on the software Vulkan device golden images are made on.
pub fn memscape() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_memscape"));
    c.env("MEMSCAPE_ADAPTER", "cpu");
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
