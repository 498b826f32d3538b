//! The GUI's GPU bridge (`memscape_views::gpu`) on lavapipe: a picture prepared and painted
//! through the registry, as egui's paint callback does it, equals the same picture drawn
//! headless; a second frame of an unchanged picture reuses its uploads; and a dropped pane's
//! key releases everything the registry kept for it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use memscape_render::golden::{Tolerance, compare};
use memscape_render::offscreen::OFFSCREEN_FORMAT;
use memscape_views::ViewKind;
use memscape_views::gpu::{GpuRegistry, PaneKey, take_released_pane_keys};

mod common;
use common::{ctx, load, settings, through_bridge};

#[test]
fn the_bridge_paints_what_headless_draws_and_releases_closed_panes() {
    let ctx = ctx();
    let mut registry = GpuRegistry::new(&ctx.device, OFFSCREEN_FORMAT).unwrap();
    let demo = load(Path::new("demo"));
    let sort = load(&common::repo("assets/demo/sort.lackey.zst"));
    let size = egui::vec2(640.0, 400.0);
    let pictures = [
        // Maps, bars, the context view, cushion cursors, decorations.
        settings(
            ViewKind::AllocMap,
            "panels = \"main,occupancy,context\"\nbins = \"thread\"\nlayout = \"time\"\n\
             cursors = [50000, 90000]",
        )
        .compose(&demo, size)
        .unwrap(),
        // The morph, contours and the legend.
        settings(
            ViewKind::Spiral,
            "range = \"0..1200\"\nmorph_to = 1\nt = 0.4\ncontours = true",
        )
        .compose(&sort, size)
        .unwrap(),
        // Shapes only.
        settings(ViewKind::Sunburst, "peak = true\ndepth = 3")
            .compose(&demo, size)
            .unwrap(),
    ];
    let keys: Vec<PaneKey> = pictures.iter().map(|_| PaneKey::new()).collect();
    let exact = Tolerance {
        per_channel: 1,
        max_differing_pixels: 0,
    };
    for (picture, key) in pictures.iter().zip(&keys) {
        let headless = memscape_views::headless::render_picture(ctx, picture).unwrap();
        let first = through_bridge(&mut registry, key, picture);
        let c = compare(&first, &headless, exact);
        assert_eq!(c.differing_pixels, 0, "bridge vs headless: {c:?}");
        // The same picture again: uploads and accumulations are reused, the image is the same.
        let again = through_bridge(&mut registry, key, picture);
        assert_eq!(again.pixels, first.pixels, "a second frame");
    }
    assert_eq!(registry.pane_count(), 3);
    // Closing the first pane frees its resources, and only its.
    let closed = keys[0].get();
    let mut keys = keys;
    drop(keys.remove(0));
    let released = take_released_pane_keys();
    assert!(released.contains(&closed));
    registry.release(&released);
    assert_eq!(registry.pane_count(), 2);
}
