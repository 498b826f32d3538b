//! Golden images of the samples-on-topology views (radial topology, top offenders, parallel and
//! single histograms with the linked selection, window-score strips and cluster markers with a
//! glyph expanded) on the LULESH data MemAxes ships, and the radial view of the largest hwloc
//! topology, rendered headless on lavapipe through the GUI's drawing code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use memscape_render::RgbaImage;

mod common;
use common::check;

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

fn run(input: &Path, args: &[&str], out: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_memscape"))
        .arg("render")
        .arg(input)
        .args(args)
        .arg("--out")
        .arg(out)
        .env("MEMSCAPE_ADAPTER", "cpu")
        .output()
        .unwrap()
}

/// Whether `img` has a pixel within 10 of `want` in every channel.
fn has(img: &RgbaImage, want: [u8; 3]) -> bool {
    (0..img.height).any(|y| {
        (0..img.width).any(|x| {
            let p = img.pixel(x, y);
            (0..3).all(|k| p[k].abs_diff(want[k]) < 10)
        })
    })
}

/// Pixels within 10 of `want`.
fn count(img: &RgbaImage, want: [u8; 3]) -> usize {
    (0..img.height)
        .flat_map(|y| (0..img.width).map(move |x| (x, y)))
        .filter(|&(x, y)| {
            let p = img.pixel(x, y);
            (0..3).all(|k| p[k].abs_diff(want[k]) < 10)
        })
        .count()
}

/// The selected subset's bar colour.
const SELECTED: [u8; 3] = [243, 168, 58];

fn render(name: &str, input: &Path, args: &[&str]) -> RgbaImage {
    common::render("topology_views", name, input, args)
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

#[test]
fn lulesh_linked_selection_in_every_view() {
    let samples = shared("memaxes/lulesh/samples.out");
    // Parallel histograms with two brushes (and): the selection over the whole.
    let hist = render(
        "histograms",
        &samples,
        &[
            "--view",
            "histograms",
            "--select",
            "latency=0..60",
            "--select",
            "zidx=3..20",
            "--width",
            "1280",
            "--height",
            "640",
        ],
    );
    assert!(
        count(&hist, SELECTED) > 2000,
        "the selected subset is drawn over the whole"
    );
    check("topology_lulesh_histograms", &hist);
    // A click on an offender bar, headless: every view shows that line's samples.
    let line = ["--select-line", "LULESH_OMP.cc:2035"];
    let radial = render(
        "radial_selected",
        &samples,
        &[
            &["--view", "topology", "--width", "640", "--height", "640"][..],
            &line[..],
        ]
        .concat(),
    );
    let whole = render(
        "radial_whole",
        &samples,
        &["--view", "topology", "--width", "640", "--height", "640"],
    );
    assert_ne!(
        radial.pixels, whole.pixels,
        "the topology is coloured by the selection"
    );
    check("topology_lulesh_radial_selected", &radial);
    let offenders = render(
        "offenders_selected",
        &samples,
        &[
            &["--view", "offenders", "--width", "960", "--height", "420"][..],
            &line[..],
        ]
        .concat(),
    );
    assert!(
        count(&offenders, SELECTED) > 500,
        "the selected part of the bars"
    );
    check("topology_lulesh_offenders_selected", &offenders);
}

#[test]
fn lulesh_cluster_markers_with_a_glyph() {
    let samples = shared("memaxes/lulesh/samples.out");
    // Clustering along zidx by processor (PU) imbalance, in the parallel histograms.
    let zidx = render(
        "clusters_zidx",
        &samples,
        &[
            "--view",
            "histograms",
            "--axes",
            "zidx,latency,cpu,variable,level",
            "--strips",
            "24",
            "--cluster-attribute",
            "zidx",
            "--cluster-metric",
            "imbalance",
            "--cluster-depth",
            "pu",
            "--clusters",
            "6",
            "--glyph",
            "2",
            "--width",
            "1200",
            "--height",
            "640",
        ],
    );
    // The glyph's frame (white border) and the ramp's ends in strips, markers and glyph.
    assert!(has(&zidx, [165, 0, 38]) && has(&zidx, [49, 54, 149]));
    check("topology_lulesh_clusters_zidx", &zidx);
    // Clustering along time by L2 imbalance, in the single histogram.
    let time = render(
        "clusters_time",
        &samples,
        &[
            "--view",
            "histogram",
            "--strips",
            "40",
            "--cluster-attribute",
            "time",
            "--cluster-metric",
            "imbalance",
            "--cluster-depth",
            "l2",
            "--clusters",
            "8",
            "--glyph",
            "3",
            "--width",
            "1000",
            "--height",
            "500",
        ],
    );
    check("topology_lulesh_clusters_time", &time);
}

/// `--histogram-bins` re-bins the quantitative axes (the GUI's bins control): 32 is the
/// default picture, 8 another (the index's bin counts are tested in `views::samples::shared`).
#[test]
fn histogram_bins_rebin_the_quantitative_axes() {
    let samples = shared("memaxes/lulesh/samples.out");
    let picture = |name: &str, bins: &[&str]| {
        let mut args = vec![
            "--view",
            "histograms",
            "--select",
            "latency=0..400",
            "--width",
            "600",
            "--height",
            "400",
        ];
        args.extend_from_slice(bins);
        render(name, &samples, &args)
    };
    let default = picture("bins_default", &[]);
    let same = picture("bins_32", &["--histogram-bins", "32"]);
    let eight = picture("bins_8", &["--histogram-bins", "8"]);
    let differing = |a: &RgbaImage, b: &RgbaImage| {
        (0..a.height)
            .flat_map(|y| (0..a.width).map(move |x| (x, y)))
            .filter(|&(x, y)| a.pixel(x, y) != b.pixel(x, y))
            .count()
    };
    assert_eq!(differing(&default, &same), 0, "32 bins is the default");
    assert!(differing(&default, &eight) > 1000, "8 bins draw other bars");
    assert!(
        has(&eight, SELECTED),
        "the selection is drawn in 8 bins too"
    );
}

#[test]
fn bad_samples_view_options_are_errors_naming_the_problem() {
    let samples = shared("memaxes/lulesh/samples.out");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("topology_views_bad.png");
    for (args, expect) in [
        (
            &["--view", "histograms", "--select", "nope=1..2"][..],
            "no attribute named \"nope\"",
        ),
        (
            &["--view", "histograms", "--axes", "latency,bogus"][..],
            "--axes: no attribute \"bogus\"",
        ),
        (
            &[
                "--view",
                "histograms",
                "--cluster-attribute",
                "zidx",
                "--glyph",
                "99",
            ][..],
            "--glyph 99",
        ),
        (
            &["--view", "histograms", "--glyph", "1"][..],
            "--glyph needs --cluster-attribute",
        ),
        (
            &[
                "--view",
                "histograms",
                "--cluster-attribute",
                "zidx",
                "--cluster-depth",
                "l9",
            ][..],
            "--cluster-depth",
        ),
        (
            &["--view", "topology", "--select-line", "nowhere.c:1"][..],
            "--select-line: no line \"nowhere.c:1\"",
        ),
        (
            &["--view", "histograms", "--histogram-bins", "1000"][..],
            "--histogram-bins 1000: expected 4 to 256",
        ),
    ] {
        let o = run(&samples, args, &out);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} should fail");
        assert!(stderr.contains(expect), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn gui_opens_the_samples_views_under_xvfb() {
    let samples = shared("memaxes/lulesh/samples.out");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("topology_views_gui");
    std::fs::create_dir_all(&dir).unwrap();
    let png = dir.join("lulesh-window.png");
    let _ = std::fs::remove_file(&png);
    let out = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1600x1000x24"])
        .arg(env!("CARGO_BIN_EXE_memscape"))
        .arg("view")
        .arg(&samples)
        .args([
            "--window-size",
            "1600x1000",
            "--screenshot-timeout",
            "240",
            "--screenshot",
        ])
        .arg(&png)
        .env("MEMSCAPE_ADAPTER", "cpu")
        .env("XDG_CONFIG_HOME", &dir)
        .output()
        .expect("xvfb-run (package xvfb) runs");
    assert!(
        out.status.success(),
        "memscape view --screenshot failed:\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let image = RgbaImage::load_png(&png).unwrap();
    // The topology (ramp ends), the histograms' bars and the source pane's highlighted line.
    assert!(has(&image, [165, 0, 38]), "a hottest resource");
    assert!(has(&image, [49, 54, 149]), "a coolest resource");
    assert!(count(&image, [86, 92, 108]) > 5000, "histogram bars");
    assert!(
        count(&image, [120, 86, 20]) > 1000,
        "the top line in the source pane"
    );
}
