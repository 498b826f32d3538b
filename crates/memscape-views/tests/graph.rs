//! Golden images of the dependence-graph view drawn in-process through its one `compose`: a
//! real IGV dump laid out in layers, a snapshot difference (whole and changes only), blocks as
//! boxes, a search zoomed in with the satellite inset, a focus set and a filter profile.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memscape_render::RgbaImage;
use memscape_views::{Dataset, ViewKind};

mod common;
use common::{check, count_in};

fn example() -> Dataset {
    common::load(&common::shared("igv/example.xml"))
}

fn test_data(name: &str) -> Dataset {
    common::load(&common::repo(&format!(
        "crates/memscape-graph/tests/data/{name}"
    )))
}

fn draw(dataset: &Dataset, fields: &str, w: u32, h: u32) -> RgbaImage {
    common::draw(dataset, ViewKind::Graph, fields, w, h)
}

/// Pixels of `img` inside `[x0, x1) × [y0, y1)` within 12 of `want`.
fn count_near(img: &RgbaImage, want: [u8; 3], x0: u32, y0: u32, x1: u32, y1: u32) -> usize {
    count_in(img, want, 12, x0, y0, x1, y1)
}

#[test]
fn igv_graph_golden() {
    check("graph_igv_example", &draw(&example(), "", 900, 700));
}

#[test]
fn difference_golden_colours_added_removed_changed() {
    let img = draw(
        &test_data("igv_difference.xml"),
        "snapshot = 1\ndiff_from = 0",
        600,
        500,
    );
    // Added (green), removed (red) and changed (yellow) nodes are all there.
    let has = |want: [u8; 3]| count_near(&img, want, 0, 0, img.width, img.height) > 0;
    assert!(has([70, 170, 90]), "an added node");
    assert!(has([200, 70, 70]), "a removed node");
    assert!(has([220, 180, 60]), "a changed node");
    check("graph_difference", &img);
}

#[test]
fn snapshot_out_of_range_is_a_clear_error() {
    let err = common::error(
        &test_data("igv_difference.xml"),
        ViewKind::Graph,
        "snapshot = 9",
    );
    assert!(err.contains("snapshot 9"), "{err}");
}

#[test]
fn blocks_golden_draws_basic_blocks_as_boxes() {
    let cfg = test_data("cfg_clusters.dot");
    let plain = draw(&cfg, "", 800, 700);
    let img = draw(&cfg, "blocks = true", 800, 700);
    assert_ne!(plain.pixels, img.pixels, "blocks change the picture");
    check("graph_blocks", &img);
}

#[test]
fn satellite_golden_frames_the_zoomed_view() {
    let img = draw(
        &example(),
        "search = \"name=Phi\"\nzoom = 3.0\nsatellite = true",
        900,
        700,
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
    let example = example();
    let all = draw(&example, "", 900, 700);
    let focus = draw(&example, "focus = \"name=Phi\"", 900, 700);
    assert_ne!(all.pixels, focus.pixels);
    check("graph_focus", &focus);
    let changes = draw(
        &test_data("igv_difference.xml"),
        "diff = [0, 1]\nchanges_only = true",
        600,
        500,
    );
    check("graph_changes_only", &changes);
    // A search that is not a regex is a clear error naming it.
    let err = common::error(&example, ViewKind::Graph, "focus = \"name=(\"");
    assert!(err.contains("name=("), "{err}");
}

/// A filtered graph: the shipped HotSpot profile colours nodes by category like IGV and merges
/// projections into their inputs.
#[test]
fn filtered_golden_applies_a_profile() {
    let img = draw(&example(), "profile = \"hotspot\"", 900, 700);
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
