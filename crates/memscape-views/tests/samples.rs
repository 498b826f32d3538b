//! Golden images of the samples-on-topology views drawn in-process through their one
//! `compose` (radial topology, top offenders, parallel and single histograms with the linked
//! selection, window-score strips and cluster markers with a glyph expanded) on the LULESH data
//! MemAxes ships, the radial view of the largest hwloc topology, and errors naming the setting.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memscape_render::RgbaImage;
use memscape_views::{Dataset, ViewKind};

mod common;
use common::{check, count, has};

fn lulesh() -> Dataset {
    common::load(&common::shared("memaxes/lulesh/samples.out"))
}

fn draw(dataset: &Dataset, kind: ViewKind, fields: &str, w: u32, h: u32) -> RgbaImage {
    common::draw(dataset, kind, fields, w, h)
}

/// The selected subset's bar colour.
const SELECTED: [u8; 3] = [243, 168, 58];

#[test]
fn lulesh_radial_topology_and_offenders() {
    let samples = lulesh();
    let radial = draw(&samples, ViewKind::Topology, "", 640, 640);
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
    let offenders = draw(&samples, ViewKind::Offenders, "", 960, 420);
    check("topology_lulesh_offenders", &offenders);
}

#[test]
fn largest_hwloc_topology_is_drawn_whole() {
    let xml = common::load(&common::shared("hwloc/192em64t-12gr2n8c2t.xml"));
    check(
        "topology_hwloc_192",
        &draw(&xml, ViewKind::Topology, "", 800, 800),
    );
}

#[test]
fn lulesh_linked_selection_in_every_view() {
    let samples = lulesh();
    // Parallel histograms with two brushes (and): the selection over the whole.
    let hist = draw(
        &samples,
        ViewKind::Histograms,
        "select = [\"latency=0..60\", \"zidx=3..20\"]",
        1280,
        640,
    );
    assert!(
        count(&hist, SELECTED) > 2000,
        "the selected subset is drawn over the whole"
    );
    check("topology_lulesh_histograms", &hist);
    // A click on an offender bar, headless: every view shows that line's samples.
    let line = "select_line = \"LULESH_OMP.cc:2035\"";
    let radial = draw(&samples, ViewKind::Topology, line, 640, 640);
    let whole = draw(&samples, ViewKind::Topology, "", 640, 640);
    assert_ne!(
        radial.pixels, whole.pixels,
        "the topology is coloured by the selection"
    );
    check("topology_lulesh_radial_selected", &radial);
    let offenders = draw(&samples, ViewKind::Offenders, line, 960, 420);
    assert!(
        count(&offenders, SELECTED) > 500,
        "the selected part of the bars"
    );
    check("topology_lulesh_offenders_selected", &offenders);
}

#[test]
fn lulesh_cluster_markers_with_a_glyph() {
    let samples = lulesh();
    // Clustering along zidx by processor (PU) imbalance, in the parallel histograms.
    let zidx = draw(
        &samples,
        ViewKind::Histograms,
        "axes = \"zidx,latency,cpu,variable,level\"\nstrips = 24\ncluster_attribute = \"zidx\"\n\
         cluster_metric = \"imbalance\"\ncluster_depth = \"pu\"\nclusters = 6\nglyph = 2",
        1200,
        640,
    );
    // The glyph's frame (white border) and the ramp's ends in strips, markers and glyph.
    assert!(has(&zidx, [165, 0, 38]) && has(&zidx, [49, 54, 149]));
    check("topology_lulesh_clusters_zidx", &zidx);
    // Clustering along time by L2 imbalance, in the single histogram.
    let time = draw(
        &samples,
        ViewKind::Histogram,
        "strips = 40\ncluster_attribute = \"time\"\ncluster_metric = \"imbalance\"\n\
         cluster_depth = \"l2\"\nclusters = 8\nglyph = 3",
        1000,
        500,
    );
    check("topology_lulesh_clusters_time", &time);
}

/// `histogram_bins` re-bins the quantitative axes (the GUI's bins control): 32 is the default
/// picture, 8 another (the index's bin counts are tested in `samples::shared`).
#[test]
fn histogram_bins_rebin_the_quantitative_axes() {
    let samples = lulesh();
    let picture = |bins: &str| {
        draw(
            &samples,
            ViewKind::Histograms,
            &format!("select = [\"latency=0..400\"]\n{bins}"),
            600,
            400,
        )
    };
    let default = picture("");
    let same = picture("histogram_bins = 32");
    let eight = picture("histogram_bins = 8");
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
fn bad_samples_view_settings_are_errors_naming_the_problem() {
    let samples = lulesh();
    for (kind, fields, expect) in [
        (
            ViewKind::Histograms,
            "select = [\"nope=1..2\"]",
            "no attribute named \"nope\"",
        ),
        (
            ViewKind::Histograms,
            "axes = \"latency,bogus\"",
            "--axes: no attribute \"bogus\"",
        ),
        (
            ViewKind::Histograms,
            "cluster_attribute = \"zidx\"\nglyph = 99",
            "--glyph 99",
        ),
        (
            ViewKind::Histograms,
            "glyph = 1",
            "--glyph needs --cluster-attribute",
        ),
        (
            ViewKind::Topology,
            "select_line = \"nowhere.c:1\"",
            "--select-line: no line \"nowhere.c:1\"",
        ),
        (
            ViewKind::Histograms,
            "histogram_bins = 1000",
            "--histogram-bins 1000: expected 4 to 256",
        ),
    ] {
        let err = common::error(&samples, kind, fields);
        assert!(err.contains(expect), "{fields}: {err}");
    }
}
