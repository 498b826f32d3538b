//! Golden images of the heap-evolution views drawn in-process through their one `compose`
//! (sunburst, icicle, timeline) on a real massif file, and the drill-down and chosen times.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memscape_render::RgbaImage;
use memscape_render::golden::{self, Tolerance};
use memscape_views::{Dataset, ViewKind};

mod common;
use common::check;

fn kate() -> Dataset {
    common::load(&common::shared("massif/massif.out.kate"))
}

fn draw(dataset: &Dataset, kind: ViewKind, fields: &str, w: u32, h: u32) -> RgbaImage {
    common::draw(dataset, kind, fields, w, h)
}

#[test]
fn sunburst_icicle_and_timeline_goldens() {
    let kate = kate();
    let img = draw(&kate, ViewKind::Sunburst, "depth = 3", 640, 480);
    assert!(
        img.distinct_colors() > 100,
        "a sunburst with labels has many colours"
    );
    check("heap_sunburst", &img);
    check(
        "heap_icicle",
        &draw(&kate, ViewKind::Icicle, "depth = 3", 640, 480),
    );
    check(
        "heap_timeline",
        &draw(&kate, ViewKind::Timeline, "points = 4", 960, 300),
    );
}

#[test]
fn drill_down_golden_differs_from_the_whole_heap() {
    let kate = kate();
    let whole = draw(&kate, ViewKind::Sunburst, "snapshot = 44", 480, 480);
    let drilled = draw(
        &kate,
        ViewKind::Sunburst,
        "snapshot = 44\nroot = \"QTextEngine::LayoutData::reallocate\"",
        480,
        480,
    );
    let c = golden::compare(
        &whole,
        &drilled,
        Tolerance {
            per_channel: 8,
            max_differing_pixels: 0,
        },
    );
    assert!(
        c.differing_pixels > 10_000,
        "drilling down changes the picture"
    );
    check("heap_sunburst_drilled", &drilled);
}

#[test]
fn unknown_root_and_snapshot_are_clear_errors() {
    let kate = kate();
    let err = common::error(&kate, ViewKind::Sunburst, "root = \"no-such-function\"");
    assert!(
        err.contains("--root") && err.contains("no-such-function"),
        "{err}"
    );
    let err = common::error(&kate, ViewKind::Sunburst, "snapshot = 99999");
    assert!(err.contains("--snapshot 99999"), "{err}");
}

#[test]
fn timeline_at_chosen_times() {
    let kate = kate();
    // Three massif times: the first, a middle and the last detailed snapshots' times.
    let img = draw(
        &kate,
        ViewKind::Timeline,
        "times = [0, 2000000000, 99999999999]",
        720,
        260,
    );
    let even = draw(&kate, ViewKind::Timeline, "points = 3", 720, 260);
    // Three cells either way, but not the same time points.
    let c = golden::compare(
        &img,
        &even,
        Tolerance {
            per_channel: 8,
            max_differing_pixels: 0,
        },
    );
    assert!(
        c.differing_pixels > 100,
        "chosen times differ from even spacing"
    );
    check("heap_timeline_times", &img);
}
