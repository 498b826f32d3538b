//! The paper's cases (Choudhury et al.): bubble sort and matrix multiplication compiled with gcc
//! and traced with valgrind lackey while the test runs, rendered as spiral views restricted to
//! the sorting / multiplying function. Their loops must show as turns: records spread over every
//! quadrant around the centre, coloured by several source lines.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../crates/memscape-cycles/tests/common/mod.rs"]
mod common;

use std::path::Path;
use std::process::Command;

use memscape_render::RgbaImage;

fn spiral(log: &Path, exe: &Path, function: &str, max: usize, out: &Path) -> RgbaImage {
    let status = Command::new(env!("CARGO_BIN_EXE_memscape"))
        .arg("render")
        .arg(log)
        .args([
            "--view", "spiral", "--width", "480", "--height", "480", "--binary",
        ])
        .arg(exe)
        .args([
            "--function",
            function,
            "--max-records",
            &max.to_string(),
            "--out",
        ])
        .arg(out)
        .env("MEMSCAPE_ADAPTER", "cpu")
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "memscape render failed: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    RgbaImage::load_png(out).unwrap()
}

/// Drawn pixels (arcs between records included) per quadrant around the records' centre,
/// outside the legend's column (at most 40 % of the width, under the caption's band) and the
/// caption, and the categorical colours present. The centre is that of the drawn pixels'
/// bounding box (the plot lies beside the legend); returns its diameter too.
fn coverage(img: &RgbaImage) -> ([usize; 4], usize, f32) {
    let text = |x: u32, y: u32| (x * 5 < img.width * 2 && y < 240) || y < 24;
    let drawn = |p: [u8; 4]| p[0].max(p[1]).max(p[2]) > 40;
    let (mut x0, mut y0, mut x1, mut y1) = (u32::MAX, u32::MAX, 0, 0);
    for y in 0..img.height {
        for x in 0..img.width {
            if !text(x, y) && drawn(img.pixel(x, y)) {
                (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
            }
        }
    }
    let (cx, cy) = ((x0 + x1) / 2, (y0 + y1) / 2);
    let mut q = [0usize; 4];
    let mut palette = std::collections::HashSet::new();
    for y in 0..img.height {
        for x in 0..img.width {
            let p = img.pixel(x, y);
            if !text(x, y) && drawn(p) {
                q[usize::from(x >= cx) + 2 * usize::from(y >= cy)] += 1;
            }
            for k in 0..8u32 {
                let c = memscape_render::color::categorical(k);
                if (0..3).all(|i| p[i] == c[i]) {
                    palette.insert(k);
                }
            }
        }
    }
    (
        q,
        palette.len(),
        x1.saturating_sub(x0).max(y1.saturating_sub(y0)) as f32,
    )
}

/// `max`: records of the function analysed (the paper's 460–2000 per analysis).
fn case(source: &str, args: &[&str], function: &str, max: usize, tag: &str) {
    let dir = tempfile::tempdir().unwrap();
    let exe = common::compile_c(dir.path(), "prog", source);
    let log = common::lackey_trace(dir.path(), &exe, args, tag);
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("paper_{tag}.png"));
    let img = spiral(&log, &exe, function, max, &out);
    let (q, colours, diameter) = coverage(&img);
    // Arcs' pixels grow with the radius: 150 per quadrant for a plot 450 points across.
    let least = (150.0 * diameter / 450.0) as usize;
    assert!(
        q.iter().all(|&n| n > least),
        "{tag}: the loops wind around the centre ({q:?}, at least {least}); image {}",
        out.display()
    );
    assert!(
        colours >= 3,
        "{tag}: several source lines are coloured apart ({colours})"
    );
}

#[test]
fn bubble_sort_spiral_shows_its_loops() {
    case(
        common::BUBBLE_SORT,
        &["9", "3", "7", "1", "8", "2", "6", "4", "5"],
        "bubble_sort",
        2000,
        "bubble",
    );
}

#[test]
fn matmul_spiral_shows_its_loops() {
    case(common::MATMUL, &[], "matmul", 1200, "matmul");
}
