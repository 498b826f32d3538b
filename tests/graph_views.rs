//! Golden images of the dependence-graph view, rendered headless on lavapipe through the GUI's
//! drawing code: a real IGV dump laid out in layers, a snapshot difference (whole and changes
//! only), blocks as boxes, a search zoomed in with the satellite inset, and a focus set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use memscape_render::RgbaImage;
use memscape_render::golden::{self, Tolerance};

const TOLERANCE: Tolerance = Tolerance {
    per_channel: 3,
    max_differing_pixels: 60,
};

fn render(name: &str, input: &Path, args: &[&str]) -> RgbaImage {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("graph_views");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(format!("{name}.png"));
    let status = Command::new(env!("CARGO_BIN_EXE_memscape"))
        .arg("render")
        .arg(input)
        .args(["--view", "graph"])
        .args(args)
        .arg("--out")
        .arg(&out)
        .env("MEMSCAPE_ADAPTER", "cpu")
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "memscape render {args:?} failed: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    RgbaImage::load_png(&out).unwrap()
}

fn check(name: &str, image: &RgbaImage) {
    let reference = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.png"));
    golden::check(image, &reference, TOLERANCE).unwrap();
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
