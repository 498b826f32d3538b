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

/// The radial topology colours each level by its own range: a legend row per level below the
/// machine (its name, its ramp with ticks in cycles), laid out clear of the disc's sectors.
#[test]
fn radial_levels_have_ramps_with_values_clear_of_the_disc() {
    use memscape_render::shapes::Geometry;
    let samples = lulesh();
    let picture = common::settings(ViewKind::Topology, "")
        .compose(&samples, egui::vec2(640.0, 640.0))
        .unwrap();
    let ticks: Vec<&memscape_views::label::Label> = picture
        .labels
        .iter()
        .filter(|l| l.text.ends_with(" cyc") && l.text.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert!(ticks.len() >= 8, "ticks: {ticks:?}");
    for level in ["NUMA", "PU"] {
        assert!(
            picture.labels.iter().any(|l| l.text == level),
            "no legend row for {level}"
        );
    }
    let (center, radius) = picture
        .shapes
        .iter()
        .filter_map(|s| match s.geometry {
            Geometry::Sector { center, r1, .. } => Some((center, r1)),
            _ => None,
        })
        .fold(([0.0, 0.0], 0.0f32), |a, b| if b.1 > a.1 { b } else { a });
    for t in ticks {
        assert!(
            t.pos.y > center[1] + radius,
            "{t:?} lies beside the disc's sectors (centre {center:?}, radius {radius})"
        );
    }
}

/// The radial topology's resource labels lie clear of the transfer links (a label's anchor is
/// farther from every link than half the text's height plus half the link's width), every PU
/// is named whole, and dark text goes on light fills.
#[test]
fn radial_labels_are_whole_and_clear_of_the_links() {
    use memscape_render::shapes::Geometry;
    let samples = lulesh();
    let picture = common::settings(ViewKind::Topology, "")
        .compose(&samples, egui::vec2(1000.0, 1000.0))
        .unwrap();
    let links: Vec<([f32; 2], [f32; 2], f32)> = picture
        .shapes
        .iter()
        .filter_map(|s| match s.geometry {
            Geometry::Segment { a, b, width_px } => Some((a, b, width_px)),
            _ => None,
        })
        .collect();
    assert!(links.len() >= 32, "links: {}", links.len());
    let distance = |p: egui::Pos2, (a, b, _): &([f32; 2], [f32; 2], f32)| {
        let (ab, ap) = ([b[0] - a[0], b[1] - a[1]], [p.x - a[0], p.y - a[1]]);
        let t = ((ap[0] * ab[0] + ap[1] * ab[1]) / (ab[0] * ab[0] + ab[1] * ab[1])).clamp(0.0, 1.0);
        ((ap[0] - t * ab[0]).powi(2) + (ap[1] - t * ab[1]).powi(2)).sqrt()
    };
    let names: Vec<&memscape_views::label::Label> = picture
        .labels
        .iter()
        .filter(|l| {
            ["machine ", "NUMA ", "L3", "L2", "L1", "PU "]
                .iter()
                .any(|k| l.text.starts_with(k))
                && l.size == 10.0
        })
        .collect();
    let pus = names.iter().filter(|l| l.text.starts_with("PU ")).count();
    assert_eq!(pus, 32, "every PU named whole: {names:?}");
    assert!(names.iter().all(|l| !l.text.contains('…')), "{names:?}");
    for label in &names {
        for link in &links {
            let d = distance(label.pos, link);
            assert!(
                d > 0.5 * label.size + 0.5 * link.2,
                "{:?} at {:?} lies on a link ({d:.1} px from {link:?})",
                label.text,
                label.pos
            );
        }
    }
    // Some fills of this selection are light (the ramp's middle): their labels are dark.
    assert!(
        names.iter().any(|l| l.color.r() < 128) && names.iter().any(|l| l.color.r() > 128),
        "labels all of one shade: {:?}",
        names.iter().map(|l| l.color).collect::<Vec<_>>()
    );
}

/// Parallel histograms in a picture too narrow for every axis title in its column: the titles
/// take turns on two rows and are shown whole (`dataSource`, not `dataSo…`), apart from each
/// other; subtitles are shortened by whole words.
#[test]
fn parallel_histogram_titles_are_whole_and_apart() {
    let samples = lulesh();
    let picture = common::settings(ViewKind::Histograms, "")
        .compose(&samples, egui::vec2(900.0, 560.0))
        .unwrap();
    let titles: Vec<&memscape_views::label::Label> =
        picture.labels.iter().filter(|l| l.size == 12.0).collect();
    for name in ["dataSource", "variable", "latency", "map3D", "level"] {
        assert!(
            titles.iter().any(|l| l.text == name),
            "{name} is not shown whole: {:?}",
            titles.iter().map(|l| &l.text).collect::<Vec<_>>()
        );
    }
    let header: Vec<&memscape_views::label::Label> = picture
        .labels
        .iter()
        .filter(|l| l.size >= 9.5 && l.pos.y < 120.0 && l.pos.y > 56.0)
        .collect();
    for (i, a) in header.iter().enumerate() {
        assert!(!a.text.contains('…'), "{a:?} is cut");
        for b in &header[..i] {
            assert!(
                !a.approx_rect().intersects(b.approx_rect()),
                "{a:?} and {b:?} overlap"
            );
        }
    }
}

/// An expanded cluster glyph is drawn in its own column beside the parallel histograms: its
/// box meets no bar, strip or marker of any axis.
#[test]
fn cluster_glyph_covers_no_axis() {
    use memscape_render::shapes::Geometry;
    let samples = lulesh();
    let picture = common::settings(
        ViewKind::Histograms,
        "axes = \"zidx,latency,cpu,variable,level\"\nstrips = 24\ncluster_attribute = \"zidx\"\n\
         cluster_metric = \"imbalance\"\ncluster_depth = \"pu\"\nclusters = 6\nglyph = 2",
    )
    .compose(&samples, egui::vec2(1200.0, 640.0))
    .unwrap();
    let rect = |g: &Geometry| match *g {
        Geometry::Rect { min, max, .. } => Some(egui::Rect::from_min_max(
            egui::pos2(min[0], min[1]),
            egui::pos2(max[0], max[1]),
        )),
        _ => None,
    };
    let frame = picture
        .shapes
        .iter()
        .find(|s| s.fill == [30, 33, 42, 245])
        .and_then(|s| rect(&s.geometry))
        .expect("the glyph's box");
    for s in &picture.shapes {
        if let Some(r) = rect(&s.geometry)
            && s.fill != [30, 33, 42, 245]
            && !frame.contains_rect(r)
        {
            assert!(!frame.intersects(r), "the glyph {frame:?} covers {r:?}");
        }
    }
}

/// Samples whose data source names no level (Mitos writes `data_src` 2 for every sample) are
/// counted in the radial topology's legend as "level unknown", not silently on their PU.
#[test]
fn radial_topology_counts_level_unknown_samples() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("mitos.csv");
    std::fs::write(
        &csv,
        "source,line,instruction,bytes,ip,variable,buffer_size,dims,xidx,yidx,zidx,pid,tid,time,addr,cpu,latency,data_src\n\
         a.c,3,mov,8,4198400,buf,64,1,0,0,0,10,11,1000,140000,1,12,2\n\
         a.c,4,mov,8,4198404,buf,64,1,1,0,0,10,11,1001,140008,1,30,2\n\
         a.c,5,mov,8,4198408,buf,64,1,2,0,0,10,11,1002,140016,2,7,2\n",
    )
    .unwrap();
    let hardware = common::shared("memaxes/lulesh/hardware.xml");
    let samples = common::load(&csv);
    let picture = common::settings(
        ViewKind::Topology,
        &format!("hardware = {:?}", hardware.display().to_string()),
    )
    .compose(&samples, egui::vec2(640.0, 640.0))
    .unwrap();
    assert!(
        picture
            .labels
            .iter()
            .any(|l| l.text.starts_with("level unknown: 3 samples")),
        "{:?}",
        picture.labels.iter().map(|l| &l.text).collect::<Vec<_>>()
    );
    // LULESH's own samples all name their level: no such note.
    let lulesh = common::settings(ViewKind::Topology, "")
        .compose(&lulesh(), egui::vec2(640.0, 640.0))
        .unwrap();
    assert!(
        !lulesh
            .labels
            .iter()
            .any(|l| l.text.starts_with("level unknown"))
    );
}
