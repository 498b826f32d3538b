//! Presentation tours rendered headless (`memscape render-tour`): frame count, gradual
//! transitions, steps equal to plain renders of their state, and a caption golden image.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use memscape_render::RgbaImage;
use memscape_render::golden::{self, Tolerance};

const FPS: f32 = 12.0;
const W: u32 = 480;
const H: u32 = 270;

fn memscape() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_memscape"));
    c.env("MEMSCAPE_ADAPTER", "cpu");
    c
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("tour")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Frames the tour file says it has: per step round(duration·fps) transition frames (none for
/// the first step; duration 1 s by default) and round(hold·fps) hold frames (2 s by default).
fn expected_frames(tour: &str) -> (usize, Vec<(usize, usize)>) {
    let value: toml::Value = toml::from_str(tour).unwrap();
    let steps = value["step"].as_array().unwrap();
    let mut total = 0;
    let mut spans = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let secs = |k: &str, d: f64| s.get(k).and_then(|v| v.as_float()).unwrap_or(d);
        let transition = if i == 0 {
            0
        } else {
            ((secs("duration", 1.0) * f64::from(FPS)).round() as usize).max(1)
        };
        let hold = ((secs("hold", 2.0) * f64::from(FPS)).round() as usize).max(1);
        spans.push((total, transition));
        total += transition + hold;
    }
    (total, spans)
}

/// Mean absolute difference of the two images averaged over 32×32 blocks: thin points that move
/// by a pixel change whole pixels, blocks change in proportion to how far things move.
fn blurred_diff(a: &RgbaImage, b: &RgbaImage) -> f64 {
    let block = 32u32;
    let mean = |img: &RgbaImage, bx: u32, by: u32| {
        let mut sum = [0u64; 3];
        for y in by * block..((by + 1) * block).min(img.height) {
            for x in bx * block..((bx + 1) * block).min(img.width) {
                let p = img.pixel(x, y);
                for k in 0..3 {
                    sum[k] += u64::from(p[k]);
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

#[allow(dead_code)]
fn mean_abs_diff(a: &RgbaImage, b: &RgbaImage) -> f64 {
    let sum: u64 = a
        .pixels
        .iter()
        .zip(&b.pixels)
        .map(|(x, y)| u64::from(x.abs_diff(*y)))
        .sum();
    sum as f64 / a.pixels.len() as f64
}

fn frame(dir: &Path, k: usize) -> RgbaImage {
    RgbaImage::load_png(&dir.join(format!("frame_{k:05}.png"))).unwrap()
}

#[test]
fn demo_tour_frames_count_transitions_and_steps() {
    let dir = scratch("demo");
    let out = memscape()
        .args([
            "render-tour",
            "--demo",
            "--fps",
            "12",
            "--width",
            "480",
            "--height",
            "270",
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tour = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo/tour.toml"),
    )
    .unwrap();
    let (total, spans) = expected_frames(&tour);
    let written = std::fs::read_dir(&dir).unwrap().count();
    assert_eq!(written, total, "one PNG per frame");

    // The last step morphs the spiral from t = 0 to t = 1 (the same picture): every frame of
    // the transition moves only part of the way.
    let (start, n) = *spans.last().unwrap();
    assert!(n >= 4);
    let before = frame(&dir, start - 1);
    let after = frame(&dir, start + n - 1);
    let whole = blurred_diff(&before, &after);
    assert!(whole > 1.0, "the morph changes the picture ({whole})");
    // No frame jumps by more than half the way (the fastest, middle frames of the eased
    // transition move points by tens of pixels, which saturates a pixel metric), and the
    // first frame leaves the held picture almost unchanged (the easing starts slowly).
    let mut previous = before;
    for k in start..start + n {
        let f = frame(&dir, k);
        let step = blurred_diff(&previous, &f);
        assert!(
            step <= 0.5 * whole,
            "frame {k}: a jump of {step:.2} against {whole:.2} for the whole transition"
        );
        if k == start {
            assert!(
                step <= 0.15 * whole,
                "the transition starts gently ({step:.2})"
            );
        }
        previous = f;
    }

    // The zoom step's frames equal the plain render of that state (outside the caption band).
    let (zoom_start, zoom_n) = spans[1];
    let held = frame(&dir, zoom_start + zoom_n);
    let plain_path = dir.join("plain.png");
    let out = memscape()
        .args([
            "render",
            "demo",
            "--view",
            "alloc-map",
            "--alpha",
            "0.5",
            "--range-time",
            "40000..90000",
            "--width",
            "480",
            "--height",
            "270",
            "--out",
        ])
        .arg(&plain_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plain = RgbaImage::load_png(&plain_path).unwrap();
    let mut differing = 0;
    for y in 0..H - 60 {
        for x in 0..W {
            let (p, q) = (held.pixel(x, y), plain.pixel(x, y));
            if (0..4).any(|c| p[c].abs_diff(q[c]) > 2) {
                differing += 1;
            }
        }
    }
    assert_eq!(
        differing, 0,
        "the held frame is the plain render of the step"
    );
    // The first frame of the tour is the first step's state, caption included.
    golden::check(
        &frame(&dir, 0),
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/tour_caption.png"),
        Tolerance {
            per_channel: 3,
            max_differing_pixels: 60,
        },
    )
    .unwrap();
}

#[test]
fn bad_tours_are_clear_errors() {
    let dir = scratch("bad");
    let tour = dir.join("tour.toml");
    std::fs::write(&tour, "[[step]]\nview = \"sunburst\"\nzoom = 3\n").unwrap();
    let out = memscape()
        .args(["render-tour"])
        .arg(&tour)
        .arg("--out")
        .arg(dir.join("frames"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("tour.toml") && err.contains("zoom"), "{err}");
    std::fs::write(&tour, "[[step]]\nview = \"sunburst\"\n").unwrap();
    let out = memscape()
        .args(["render-tour"])
        .arg(&tour)
        .arg("--out")
        .arg(dir.join("frames"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("step 1") && err.contains("file"), "{err}");
}
