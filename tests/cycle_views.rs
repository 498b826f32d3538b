//! Golden images of the cycle views, rendered headless on lavapipe through the GUI's code
//! (`memscape render --view spiral|circular|barcode|projection`, morph with --morph-to/--t), on
//! the lackey trace of assets/demo (recorded by assets/demo/record-lackey-demo.sh).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use memscape_render::RgbaImage;
use memscape_render::golden::{self, Tolerance};

mod common;
use common::check;

fn trace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo/sort.lackey.zst")
}

fn render(name: &str, args: &[&str]) -> RgbaImage {
    let args = [
        &["--range", "0..1200", "--width", "480", "--height", "480"][..],
        args,
    ]
    .concat();
    common::render("cycle_views", name, &trace(), &args)
}

/// Pixels that differ from the background by more than a little, per quadrant around the
/// centre: a spiral whose loops are turns covers all four.
fn quadrant_coverage(img: &RgbaImage) -> [usize; 4] {
    let mut q = [0usize; 4];
    let (cx, cy) = (img.width / 2, img.height / 2);
    for y in 0..img.height {
        for x in 0..img.width {
            let p = img.pixel(x, y);
            if p[0].max(p[1]).max(p[2]) > 60 {
                q[usize::from(x >= cx) + 2 * usize::from(y >= cy)] += 1;
            }
        }
    }
    q
}

#[test]
fn spiral_circular_and_barcode_goldens() {
    let spiral = render("spiral", &["--view", "spiral"]);
    let q = quadrant_coverage(&spiral);
    assert!(
        q.iter().all(|&n| n > 300),
        "the sort loop winds around the centre: {q:?}"
    );
    check("cycles_spiral", &spiral);
    check(
        "cycles_circular",
        &render("circular", &["--view", "circular"]),
    );
    check("cycles_barcode", &render("barcode", &["--view", "barcode"]));
}

#[test]
fn morph_goldens_at_0_half_and_1() {
    let start = render(
        "morph0",
        &["--view", "spiral", "--morph-to", "1", "--t", "0"],
    );
    let half = render(
        "morph05",
        &["--view", "spiral", "--morph-to", "1", "--t", "0.5"],
    );
    let end = render(
        "morph1",
        &["--view", "spiral", "--morph-to", "1", "--t", "1"],
    );
    let plain1 = render("plain1", &["--view", "spiral", "--param", "1"]);
    // The ends are the plain spirals up to the caption line at the top.
    let crop = |img: &RgbaImage| {
        let mut c = img.clone();
        for y in 0..24 {
            for x in 0..img.width {
                c.set_pixel(x, y, [0, 0, 0, 255]);
            }
        }
        c
    };
    let same = Tolerance {
        per_channel: 2,
        max_differing_pixels: 5,
    };
    let c = golden::compare(&crop(&end), &crop(&plain1), same);
    assert!(
        c.differing_pixels <= 5,
        "t = 1 is parameterization 1: {c:?}"
    );
    assert!(golden::compare(&crop(&half), &crop(&start), same).differing_pixels > 500);
    check("cycles_morph_0", &start);
    check("cycles_morph_05", &half);
    check("cycles_morph_1", &end);
}

#[test]
fn parameterizations_out_of_range_are_clear_errors() {
    // Beyond what the analysis found (only a handful of bars on 40 records).
    let out = Command::new(env!("CARGO_BIN_EXE_memscape"))
        .arg("render")
        .arg(trace())
        .args([
            "--range", "0..40", "--view", "spiral", "--param", "60", "--out",
        ])
        .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join("never.png"))
        .env("MEMSCAPE_ADAPTER", "cpu")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--param 60") && err.contains("parameterization"),
        "{err}"
    );
    // Beyond what the CLI accepts.
    let out = Command::new(env!("CARGO_BIN_EXE_memscape"))
        .arg("render")
        .arg(trace())
        .args([
            "--range", "0..300", "--view", "spiral", "--param", "99", "--out",
        ])
        .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join("never.png"))
        .env("MEMSCAPE_ADAPTER", "cpu")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--param") && err.contains("99"), "{err}");
}

#[test]
fn circular_isocontour_summary_golden() {
    let plain = render("circular_plain", &["--view", "circular"]);
    let contoured = render("circular_contours", &["--view", "circular", "--contours"]);
    // The contours only add light lines around the crowded stretches of the circle.
    let changed = (0..plain.height)
        .flat_map(|y| (0..plain.width).map(move |x| (x, y)))
        .filter(|&(x, y)| plain.pixel(x, y) != contoured.pixel(x, y))
        .count();
    assert!(changed > 200, "contours drawn: {changed} pixels changed");
    check("cycles_circular_contours", &contoured);
}

/// `--select-record N` selects N's source line as a click does: the other records are drawn in
/// the dimmed grey, so fewer pixels keep their line colours; a record past the end is an error.
#[test]
fn a_selected_source_line_dims_the_other_records() {
    let colourful = |img: &RgbaImage| {
        let mut n = 0usize;
        for y in 0..img.height {
            for x in 0..img.width {
                let p = img.pixel(x, y);
                let (hi, lo) = (p[0].max(p[1]).max(p[2]), p[0].min(p[1]).min(p[2]));
                // Saturated: a line colour, not the grey of dimmed records or the background.
                if hi > 90 && hi - lo > 60 {
                    n += 1;
                }
            }
        }
        n
    };
    let plain = render("select_plain", &["--view", "spiral"]);
    let selected = render(
        "select_record",
        &["--view", "spiral", "--select-record", "400"],
    );
    let (all, some) = (colourful(&plain), colourful(&selected));
    assert!(some > 0, "the selected line keeps its colour");
    assert!(
        some * 3 < all,
        "the other lines are dimmed ({some} of {all} coloured pixels left)"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_memscape"))
        .arg("render")
        .arg(trace())
        .args(["--range", "0..1200", "--view", "spiral", "--select-record"])
        .arg("99999")
        .args(["--out", "/dev/null"])
        .env("MEMSCAPE_ADAPTER", "cpu")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--select-record 99999"), "{err}");
}
