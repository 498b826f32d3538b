//! Golden images of the dependence-graph view, rendered headless on lavapipe through the GUI's
//! drawing code: a real IGV dump laid out in layers, a snapshot difference (whole and changes
//! only), blocks as boxes, a search zoomed in with the satellite inset, and a focus set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use memscape_render::RgbaImage;

mod common;
use common::{blurred_diff, check};

fn render(name: &str, input: &Path, args: &[&str]) -> RgbaImage {
    let args = [&["--view", "graph"][..], args].concat();
    common::render("graph_views", name, input, &args)
}

fn root(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

#[test]
fn igv_graph_golden() {
    let input = root("../shared/data/igv/example.xml");
    assert!(
        input.exists(),
        "{} is missing (see ../shared/data/README.md)",
        input.display()
    );
    let img = render("example", &input, &["--width", "900", "--height", "700"]);
    check("graph_igv_example", &img);
}

#[test]
fn difference_golden_colours_added_removed_changed() {
    let input = root("crates/memscape-graph/tests/data/igv_difference.xml");
    let img = render(
        "difference",
        &input,
        &[
            "--snapshot",
            "1",
            "--diff-from",
            "0",
            "--width",
            "600",
            "--height",
            "500",
        ],
    );
    // Added (green), removed (red) and changed (yellow) nodes are all there.
    let has = |want: [u8; 3]| {
        (0..img.height).any(|y| {
            (0..img.width).any(|x| {
                let p = img.pixel(x, y);
                (0..3).all(|k| p[k].abs_diff(want[k]) < 12)
            })
        })
    };
    assert!(has([70, 170, 90]), "an added node");
    assert!(has([200, 70, 70]), "a removed node");
    assert!(has([220, 180, 60]), "a changed node");
    check("graph_difference", &img);
}

#[test]
fn snapshot_out_of_range_is_a_clear_error() {
    let input = root("crates/memscape-graph/tests/data/igv_difference.xml");
    let out = Command::new(env!("CARGO_BIN_EXE_memscape"))
        .arg("render")
        .arg(&input)
        .args(["--view", "graph", "--snapshot", "9", "--out"])
        .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join("never.png"))
        .env("MEMSCAPE_ADAPTER", "cpu")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("snapshot 9"), "{err}");
}

/// Pixels of `img` inside `[x0, x1) × [y0, y1)` within 12 of `want`.
fn count_near(img: &RgbaImage, want: [u8; 3], x0: u32, y0: u32, x1: u32, y1: u32) -> usize {
    let mut n = 0;
    for y in y0..y1.min(img.height) {
        for x in x0..x1.min(img.width) {
            let p = img.pixel(x, y);
            if (0..3).all(|k| p[k].abs_diff(want[k]) < 12) {
                n += 1;
            }
        }
    }
    n
}

#[test]
fn blocks_golden_draws_basic_blocks_as_boxes() {
    let input = root("crates/memscape-graph/tests/data/cfg_clusters.dot");
    let args = ["--width", "800", "--height", "700"];
    let plain = render("cfg_plain", &input, &args);
    let img = render("cfg_blocks", &input, &[&args[..], &["--blocks"]].concat());
    assert_ne!(plain.pixels, img.pixels, "--blocks changes the picture");
    check("graph_blocks", &img);
}

#[test]
fn satellite_golden_frames_the_zoomed_view() {
    let input = root("../shared/data/igv/example.xml");
    let img = render(
        "satellite",
        &input,
        &[
            "--search",
            "name=Phi",
            "--zoom",
            "3",
            "--satellite",
            "--width",
            "900",
            "--height",
            "700",
        ],
    );
    // The frame (red) lies in the inset, bottom right, and nowhere else; search matches are
    // outlined in yellow in the main view.
    let red = [235, 70, 70];
    assert!(
        count_near(&img, red, 600, 450, 900, 700) > 100,
        "the satellite frame"
    );
    assert_eq!(count_near(&img, red, 0, 0, 600, 450), 0);
    assert!(
        count_near(&img, [250, 200, 60], 0, 0, 600, 700) > 50,
        "match outlines"
    );
    check("graph_satellite", &img);
}

#[test]
fn focus_and_changes_only_cut_the_graph_down() {
    let example = root("../shared/data/igv/example.xml");
    let all = render("all", &example, &["--width", "900", "--height", "700"]);
    let focus = render(
        "focus",
        &example,
        &["--focus", "name=Phi", "--width", "900", "--height", "700"],
    );
    assert_ne!(all.pixels, focus.pixels);
    check("graph_focus", &focus);
    let diff = root("crates/memscape-graph/tests/data/igv_difference.xml");
    let changes = render(
        "changes",
        &diff,
        &[
            "--diff",
            "0..1",
            "--changes-only",
            "--width",
            "600",
            "--height",
            "500",
        ],
    );
    check("graph_changes_only", &changes);
    // A search that is not a regex is a clear error naming it.
    let out = Command::new(env!("CARGO_BIN_EXE_memscape"))
        .arg("render")
        .arg(&example)
        .args(["--view", "graph", "--focus", "name=(", "--out"])
        .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join("never.png"))
        .env("MEMSCAPE_ADAPTER", "cpu")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("name=("), "{err}");
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
    let input = root("crates/memscape-graph/tests/data/igv_difference.xml");
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

/// A filtered graph: the shipped HotSpot profile colours nodes by category like IGV and merges
/// projections into their inputs.
#[test]
fn filtered_golden_applies_a_profile() {
    let input = root("../shared/data/igv/example.xml");
    let img = render(
        "filtered",
        &input,
        &["--profile", "hotspot", "--width", "900", "--height", "700"],
    );
    // The profile's category colours (control, data, memory) fill node boxes.
    for (name, hex) in [
        ("control", [0xf2, 0xca, 0xca]),
        ("data", [0xc8, 0xd8, 0xf4]),
        ("memory", [0xc6, 0xe9, 0xc6]),
    ] {
        assert!(
            count_near(&img, hex, 0, 0, 900, 700) > 100,
            "{name} nodes in {hex:?}"
        );
    }
    check("graph_filtered", &img);
}

/// `--profile NAME` also finds a profile saved by the GUI's editor in the user's directory;
/// an unknown name is an error naming where it was looked for.
#[test]
fn saved_profiles_are_found_by_name() {
    let input = root("crates/memscape-graph/tests/data/igv_difference.xml");
    let config = Path::new(env!("CARGO_TARGET_TMPDIR")).join("graph_config");
    let _ = std::fs::remove_dir_all(&config);
    let dir = config.join("memscape/profiles");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("reds.toml"),
        "name = \"reds\"\n[[rule]]\naction = \"color\"\nproperty = \"name\"\nregex = \".\"\ncolor = \"#d02020\"\n",
    )
    .unwrap();
    let out_png = config.join("reds.png");
    let run = |profile: &str| {
        Command::new(env!("CARGO_BIN_EXE_memscape"))
            .arg("render")
            .arg(&input)
            .args([
                "--view",
                "graph",
                "--profile",
                profile,
                "--width",
                "400",
                "--height",
                "300",
                "--out",
            ])
            .arg(&out_png)
            .env("MEMSCAPE_ADAPTER", "cpu")
            .env("XDG_CONFIG_HOME", &config)
            .output()
            .unwrap()
    };
    let out = run("reds");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let img = RgbaImage::load_png(&out_png).unwrap();
    assert!(
        count_near(&img, [0xd0, 0x20, 0x20], 0, 0, 400, 300) > 100,
        "red nodes"
    );
    let out = run("blues");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("blues") && err.contains("memscape/profiles"),
        "{err}"
    );
}
