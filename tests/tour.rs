//! Presentation tours rendered headless (`memscape render-tour`): frame count, gradual
//! transitions, steps equal to plain renders of their state, and a caption golden image.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use memscape_render::RgbaImage;
use memscape_render::golden::{self, Tolerance};

mod common;
use common::blurred_diff;

// Few frames per second: the demo tour is about 50 s long and lavapipe renders every
// transition frame.
const FPS: f32 = 8.0;
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
            &FPS.to_string(),
            "--width",
            &W.to_string(),
            "--height",
            &H.to_string(),
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
    let value: toml::Value = toml::from_str(&tour).unwrap();
    let steps = value["step"].as_array().unwrap();

    // The morph step moves the spiral from t = 0 toward the second parameterization: every
    // frame of the transition moves only part of the way.
    let morph = steps
        .iter()
        .position(|s| {
            s.get("t")
                .and_then(toml::Value::as_float)
                .is_some_and(|t| t > 0.0)
        })
        .expect("the demo tour plays a morph");
    let (start, n) = spans[morph];
    assert!(n >= 4);
    let before = frame(&dir, start - 1);
    let after = frame(&dir, start + n - 1);
    let whole = blurred_diff(&before, &after);
    assert!(whole > 1.0, "the morph changes the picture ({whole})");
    // No frame carries more than 40 % of the way the transition travels (the sum of the
    // frame-to-frame changes: an abrupt switch puts it all in one frame; the fastest, middle
    // frames of an eased transition move points by tens of pixels, which saturates a pixel
    // metric, so the whole start-to-end difference is no yardstick), and the first frame
    // leaves the held picture almost unchanged (the easing starts slowly).
    let mut previous = before;
    let mut steps_diff = Vec::with_capacity(n);
    for k in start..start + n {
        let f = frame(&dir, k);
        steps_diff.push(blurred_diff(&previous, &f));
        previous = f;
    }
    let path: f64 = steps_diff.iter().sum();
    for (k, step) in steps_diff.iter().enumerate() {
        assert!(
            *step <= 0.4 * path,
            "frame {}: a jump of {step:.2} of the {path:.2} the transition travels",
            start + k
        );
    }
    assert!(
        steps_diff[0] <= 0.1 * path,
        "the transition starts gently ({:.2} of {path:.2})",
        steps_diff[0]
    );

    // The zoom step's held frames equal the plain render of that state (outside the caption
    // band): the map coloured by size with parabolic cushions on the wall-time axis, α 0.5.
    let zoom = steps
        .iter()
        .skip(1)
        .position(|s| s.get("range_time").is_some())
        .expect("the demo tour zooms")
        + 1;
    let range = |key: &str| {
        let r = steps[zoom][key].as_array().unwrap();
        let (a, b) = (r[0].as_integer().unwrap(), r[1].as_integer().unwrap());
        (a, b)
    };
    let (t0, t1) = range("range_time");
    let (a0, a1) = range("range_addr");
    let (zoom_start, zoom_n) = spans[zoom];
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
            "--color",
            "size",
            "--cushion",
            "parabolic",
            "--time",
            "wall",
        ])
        .arg("--range-time")
        .arg(format!("{t0}..{t1}"))
        .arg("--range-addr")
        .arg(format!("{a0:#x}..{a1:#x}"))
        .args([
            "--width",
            &W.to_string(),
            "--height",
            &H.to_string(),
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

fn mean_abs_diff(a: &RgbaImage, b: &RgbaImage) -> f64 {
    let sum: u64 = a
        .pixels
        .iter()
        .zip(&b.pixels)
        .map(|(x, y)| u64::from(x.abs_diff(*y)))
        .sum();
    sum as f64 / a.pixels.len() as f64
}

/// Pixels differing by more than 2 in some channel.
fn differing_pixels(a: &RgbaImage, b: &RgbaImage) -> usize {
    assert_eq!((a.width, a.height), (b.width, b.height));
    a.pixels
        .chunks(4)
        .zip(b.pixels.chunks(4))
        .filter(|(p, q)| p.iter().zip(q.iter()).any(|(x, y)| x.abs_diff(*y) > 2))
        .count()
}

/// A tour over one graph file (snapshot 0, snapshot 1, snapshot 1 with its differences from
/// 0): transitions move the nodes from one layout to the other gradually (not a cross-fade),
/// and each step's frames equal the plain `memscape render` of its state.
#[test]
fn tour_transitions_between_graph_snapshots_glide() {
    let input = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/memscape-graph/tests/data/igv_difference.xml");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("graph_tour");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let tour = dir.join("tour.toml");
    std::fs::write(
        &tour,
        format!(
            "[[step]]\nfile = {:?}\nview = \"graph\"\nsnapshot = 0\nhold = 0.1\n\n\
             [[step]]\nsnapshot = 1\nduration = 1.0\nhold = 0.1\n\n\
             [[step]]\ndiff_from = 0\nduration = 1.0\nhold = 0.1\n",
            input.display().to_string()
        ),
    )
    .unwrap();
    let frames = dir.join("frames");
    let out = Command::new(env!("CARGO_BIN_EXE_memscape"))
        .arg("render-tour")
        .arg(&tour)
        .args(["--fps", "12", "--width", "480", "--height", "360", "--out"])
        .arg(&frames)
        .env("MEMSCAPE_ADAPTER", "cpu")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let frame = |k: usize| RgbaImage::load_png(&frames.join(format!("frame_{k:05}.png"))).unwrap();
    // 1 held frame, then 12 transition frames + 1 held, twice.
    assert_eq!(std::fs::read_dir(&frames).unwrap().count(), 1 + 13 + 13);
    let size = ["--width", "480", "--height", "360"];
    let render = |name: &str, input: &Path, args: &[&str]| {
        let args = [&["--view", "graph"][..], args].concat();
        common::render("graph_tour", name, input, &args)
    };
    let plain0 = render(
        "tour_plain0",
        &input,
        &[&size[..], &["--snapshot", "0"]].concat(),
    );
    let plain1 = render(
        "tour_plain1",
        &input,
        &[&size[..], &["--snapshot", "1"]].concat(),
    );
    let plain_diff = render(
        "tour_plain_diff",
        &input,
        &[&size[..], &["--snapshot", "1", "--diff-from", "0"]].concat(),
    );
    // The ends are the plain renders.
    assert_eq!(differing_pixels(&frame(0), &plain0), 0, "step 1 held");
    assert_eq!(
        differing_pixels(&frame(12), &plain1),
        0,
        "end of transition 1"
    );
    assert_eq!(differing_pixels(&frame(13), &plain1), 0, "step 2 held");
    assert_eq!(
        differing_pixels(&frame(25), &plain_diff),
        0,
        "end of transition 2"
    );
    assert_eq!(differing_pixels(&frame(26), &plain_diff), 0, "step 3 held");
    for (name, before, first, n) in [("snapshots", 0, 1, 12), ("difference", 13, 14, 12)] {
        let (start, end) = (frame(before), frame(first + n - 1));
        let whole = blurred_diff(&start, &end);
        assert!(
            whole > 0.3,
            "{name}: the transition changes the picture ({whole})"
        );
        let mut previous = start.clone();
        for k in first..first + n {
            let f = frame(k);
            let step = blurred_diff(&previous, &f);
            assert!(
                step <= 0.5 * whole,
                "{name}, frame {k}: a jump of {step:.3} against {whole:.3} for the whole transition"
            );
            if k == first {
                assert!(step <= 0.15 * whole, "{name}: starts gently ({step:.3})");
            }
            previous = f;
        }
        // Halfway, the picture is neither end, nor their cross-fade: the nodes are in between.
        let mid = frame(first + n / 2 - 1);
        let fade = crossfade(&start, &end, 0.5);
        let from_fade = mean_abs_diff(&mid, &fade);
        eprintln!(
            "{name}: whole {whole:.3}, mid vs cross-fade {from_fade:.3}, mid vs start {:.3}, mid vs end {:.3}",
            mean_abs_diff(&mid, &start),
            mean_abs_diff(&mid, &end)
        );
        assert!(differing_pixels(&mid, &start) > 0 && differing_pixels(&mid, &end) > 0);
        if name == "difference" {
            // Colouring the differences brings back the removed node: the layout widens and
            // the shared nodes move sideways (a cross-fade would show both places at once).
            assert!(
                from_fade > 1.5,
                "{name}: the middle frame is a cross-fade ({from_fade:.3})"
            );
        }
    }
}

fn crossfade(a: &RgbaImage, b: &RgbaImage, u: f32) -> RgbaImage {
    let mut out = b.clone();
    for (o, (x, y)) in out.pixels.iter_mut().zip(a.pixels.iter().zip(&b.pixels)) {
        *o = (f32::from(*x) + (f32::from(*y) - f32::from(*x)) * u).round() as u8;
    }
    out
}

/// `render-tour --svg` writes each step's picture as SVG beside the frames: the graph's nodes
/// and edges as vectors, its labels and the step's caption as text.
#[test]
fn render_tour_writes_each_step_as_svg() {
    let input = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/memscape-graph/tests/data/igv_difference.xml");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("svg_tour");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let tour = dir.join("tour.toml");
    std::fs::write(
        &tour,
        format!(
            "[[step]]\nfile = {:?}\nview = \"graph\"\nsnapshot = 0\nhold = 0.1\ncaption = \"the **first** snapshot\"\n\n\
             [[step]]\nsnapshot = 1\nduration = 0.2\nhold = 0.1\n",
            input.display().to_string()
        ),
    )
    .unwrap();
    let frames = dir.join("frames");
    let out = Command::new(env!("CARGO_BIN_EXE_memscape"))
        .arg("render-tour")
        .arg(&tour)
        .args([
            "--fps", "10", "--width", "480", "--height", "360", "--svg", "--out",
        ])
        .arg(&frames)
        .env("MEMSCAPE_ADAPTER", "cpu")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (k, caption) in [(0, Some("the first snapshot")), (1, None)] {
        let svg = std::fs::read_to_string(frames.join(format!("step_{k:02}.svg"))).unwrap();
        assert!(svg.contains(r#"width="480" height="360""#), "step {k}");
        assert!(
            svg.matches("<rect").count() >= 3,
            "step {k}: nodes as rectangles"
        );
        assert!(svg.contains("<text"), "step {k}");
        if let Some(c) = caption {
            assert!(svg.contains(c), "step {k}: caption {c:?}");
        }
    }
    assert!(!frames.join("step_02.svg").exists());
}
