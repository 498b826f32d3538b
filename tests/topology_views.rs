//! Golden images of the samples-on-topology views (radial topology, top offenders) on the LULESH
//! data MemAxes ships, and the radial view of the largest hwloc topology, rendered headless on
//! lavapipe through the GUI's drawing code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use memscape_render::RgbaImage;
use memscape_render::golden::{self, Tolerance};

const TOLERANCE: Tolerance = Tolerance {
    per_channel: 3,
    max_differing_pixels: 60,
};

fn shared(rel: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data")
        .join(rel);
    assert!(
        p.exists(),
        "{} is missing (see ../shared/data/README.md)",
        p.display()
    );
    p
}

fn render(name: &str, input: &Path, args: &[&str]) -> RgbaImage {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("topology_views");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(format!("{name}.png"));
    let status = Command::new(env!("CARGO_BIN_EXE_memscape"))
        .arg("render")
        .arg(input)
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

#[test]
fn lulesh_radial_topology_and_offenders() {
    let samples = shared("memaxes/lulesh/samples.out");
    let radial = render(
        "radial",
        &samples,
        &["--view", "topology", "--width", "640", "--height", "640"],
    );
    // Coloured by cycles: both ends of the ramp appear (per-level min and max).
    let has = |img: &RgbaImage, want: [u8; 3]| {
        (0..img.height).any(|y| {
            (0..img.width).any(|x| {
                let p = img.pixel(x, y);
                (0..3).all(|k| p[k].abs_diff(want[k]) < 10)
            })
        })
    };
    assert!(
        has(&radial, [165, 0, 38]),
        "a hottest resource (ramp's red end)"
    );
    assert!(
        has(&radial, [49, 54, 149]),
        "a coolest resource (ramp's blue end)"
    );
    check("topology_lulesh_radial", &radial);
    let offenders = render(
        "offenders",
        &samples,
        &["--view", "offenders", "--width", "960", "--height", "420"],
    );
    check("topology_lulesh_offenders", &offenders);
}

#[test]
fn largest_hwloc_topology_is_drawn_whole() {
    let xml = shared("hwloc/192em64t-12gr2n8c2t.xml");
    let img = render(
        "hwloc192",
        &xml,
        &["--view", "topology", "--width", "800", "--height", "800"],
    );
    check("topology_hwloc_192", &img);
}
