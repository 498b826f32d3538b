//! The GUI's level-of-detail frames off the UI thread (issue 25), through the paint bridge as
//! egui's paint callback drives it, on lavapipe: with the worker held, a frame returns at once
//! (the background first, then after a pan the last picture offset to the new view) and says it
//! is refining; once the worker is let go, the picture equals the one computed synchronously
//! (what `memscape render` draws) for the current view.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use memscape_render::RgbaImage;
use memscape_render::alloc_map::{ColorMode, CushionKind};
use memscape_render::offscreen::OFFSCREEN_FORMAT;
use memscape_views::gpu::{GpuRegistry, PaneKey};
use memscape_views::lod_refine::{Drawn, LodRefiner};
use memscape_views::picture::{Layer, MapStyle, Picture};

mod common;
use common::{ctx, through_bridge};

/// `picture`'s map layer drawn by `refiner` (the GUI's way) instead of on the spot.
fn refined(mut picture: Picture, refiner: &Arc<LodRefiner>) -> Picture {
    for layer in &mut picture.layers {
        if let Layer::Map(m) = layer {
            m.data = common::map_data_with(&m.data, m.data.lod.clone(), Some(refiner.clone()));
        }
    }
    picture
}

fn pixel(img: &RgbaImage, x: u32, y: u32) -> [u8; 4] {
    let i = ((y * img.width + x) * 4) as usize;
    [
        img.pixels[i],
        img.pixels[i + 1],
        img.pixels[i + 2],
        img.pixels[i + 3],
    ]
}

fn close(a: [u8; 4], b: [u8; 4]) -> bool {
    (0..3).all(|k| a[k].abs_diff(b[k]) <= 1)
}

/// Frames until the worker has caught up (panics after 120 s); the last frame's image.
fn settle(
    registry: &mut GpuRegistry,
    key: &PaneKey,
    picture: &Picture,
    r: &LodRefiner,
) -> RgbaImage {
    let start = Instant::now();
    loop {
        let img = through_bridge(registry, key, picture);
        if !r.refining() {
            // The frame after the picture landed draws it.
            return through_bridge(registry, key, picture);
        }
        assert!(start.elapsed() < Duration::from_secs(120), "never refined");
        std::thread::sleep(Duration::from_millis(20));
        drop(img);
    }
}

#[test]
fn frames_never_wait_for_the_index_and_refine_to_the_synchronous_picture() {
    let dir = tempfile::tempdir().unwrap();
    let (_trace, lod) = common::indexed_synth_trace(dir.path());
    let lod = Arc::new(lod);
    let [te, ye] = lod.extent();
    let (w, h) = (160u32, 100u32);
    // A time span of whole pixels, so that a pan of 16 pixels moves every column by 16.
    let span = te / u64::from(w) * u64::from(w);
    let px = span / u64::from(w);
    let style = MapStyle {
        alpha: 0.5,
        cushion: CushionKind::Parabolic,
        cushion_strength: 1.0,
        color_mode: ColorMode::Categorical,
    };
    let size = egui::vec2(w as f32, h as f32);
    let at = |t0: u64| {
        memscape_views::alloc_map::lod::picture(
            lod.clone(),
            ([t0, t0 + span], [0, ye]),
            style,
            size,
        )
    };
    let ctx = ctx();
    let mut registry = GpuRegistry::new(&ctx.device, OFFSCREEN_FORMAT).unwrap();
    let key = PaneKey::new();
    let refiner = LodRefiner::new(lod.clone(), None).unwrap();
    let hold = Duration::from_secs(30);
    let quick = Duration::from_secs(10);

    // The first frame: nothing computed yet and the worker held: the background, at once.
    let first = refined(at(0), &refiner);
    let synchronous = memscape_views::headless::render_picture(ctx, &at(0)).unwrap();
    refiner.hold(hold);
    let start = Instant::now();
    let img = through_bridge(&mut registry, &key, &first);
    assert!(
        start.elapsed() < quick,
        "the first frame waited {:?}",
        start.elapsed()
    );
    assert!(refiner.refining(), "the worker finished while held");
    let bg = pixel(&img, 0, 0);
    assert!(
        (0..h).all(|y| (0..w).all(|x| pixel(&img, x, y) == bg)),
        "an empty first frame"
    );
    assert!(
        (0..h).any(|y| (0..w).any(|x| !close(pixel(&synchronous, x, y), bg))),
        "the map is not empty"
    );
    refiner.release();
    let img = settle(&mut registry, &key, &first, &refiner);
    assert_eq!(
        img.pixels, synchronous.pixels,
        "the refined picture is the synchronous one"
    );
    // Drawn from the index's sums (a level applies at this size), not from exact blocks.
    let done = refiner.latest(0).expect("a picture");
    assert!(matches!(done.drawn, Drawn::Sums(_)), "drawn from a level");

    // A pan of 16 pixels with the worker held: the frame returns at once with the last picture
    // moved 16 pixels to the left (the new columns empty) and says it is refining.
    let panned = refined(at(16 * px), &refiner);
    refiner.hold(hold);
    let start = Instant::now();
    let img = through_bridge(&mut registry, &key, &panned);
    assert!(
        start.elapsed() < quick,
        "the frame after a pan waited {:?} for the sums",
        start.elapsed()
    );
    assert!(refiner.refining());
    for y in 0..h {
        for x in 0..w {
            let want = if x + 16 < w {
                pixel(&synchronous, x + 16, y)
            } else {
                bg
            };
            assert!(
                close(pixel(&img, x, y), want),
                "({x}, {y}): {:?}, want {want:?}",
                pixel(&img, x, y)
            );
        }
    }
    // Let go: the picture of the new view, as drawn synchronously.
    refiner.release();
    let img = settle(&mut registry, &key, &panned, &refiner);
    let want = memscape_views::headless::render_picture(ctx, &at(16 * px)).unwrap();
    assert_eq!(img.pixels, want.pixels, "refined after the pan");
    assert!(!refiner.refining());
}
