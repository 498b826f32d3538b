//! A big trace's allocation map composed like any view (what tours, `present` and headless
//! pictures use) draws from its level-of-detail index, and the picture is the exact one's
//! within the rules (mean ≤ 1/255, 99.9 % of pixels within 8/255). A trace with an
//! index beside it counts as big whatever its size (unless `MEMSCAPE_ALLOC_MAP_PATH` says
//! otherwise).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use memscape_views::picture::{Layer, Picture};

/// The picture's map layers alone, drawing from the index or (`keep_index` false) from every
/// block uploaded.
fn maps(picture: &Picture, keep_index: bool) -> Picture {
    let mut p = Picture::new(picture.size, picture.background.unwrap_or([0, 0, 0, 255]));
    for layer in &picture.layers {
        if let Layer::Map(m) = layer {
            let data =
                common::map_data_with(&m.data, m.data.lod.clone().filter(|_| keep_index), None);
            p.layers.push(Layer::Map(memscape_views::picture::MapLayer {
                slot: m.slot,
                rect: m.rect,
                data,
                window: m.window,
                extent: m.extent,
                range: m.range.clone(),
                style: m.style,
                cursors: None,
            }));
        }
    }
    p
}

#[test]
fn a_big_traces_composed_map_draws_from_its_index_like_the_exact_one() {
    let dir = tempfile::tempdir().unwrap();
    let (trace, _) = common::indexed_synth_trace(dir.path());
    let dataset = common::load(&trace);
    let settings = common::settings(memscape_views::ViewKind::AllocMap, "color = \"thread\"");
    let picture = settings
        .compose(&dataset, egui::vec2(320.0, 200.0))
        .unwrap();
    let layers: Vec<_> = picture
        .layers
        .iter()
        .filter_map(|l| match l {
            Layer::Map(m) => Some(m),
            _ => None,
        })
        .collect();
    assert!(!layers.is_empty());
    assert!(
        layers.iter().all(|m| m.data.lod.is_some()),
        "every map layer draws from the index"
    );
    assert!(dir.path().join("big.msc.thread.lod").is_file());
    let ctx = common::ctx();
    let got = memscape_views::headless::render_picture(ctx, &maps(&picture, true)).unwrap();
    let want = memscape_views::headless::render_picture(ctx, &maps(&picture, false)).unwrap();
    let (mut sum, mut within) = (0u64, 0usize);
    let n = want.pixels.len() / 4;
    for (w, g) in want.pixels.chunks_exact(4).zip(got.pixels.chunks_exact(4)) {
        let d: Vec<u8> = (0..3).map(|c| w[c].abs_diff(g[c])).collect();
        sum += d.iter().map(|&v| u64::from(v)).sum::<u64>();
        within += usize::from(d.iter().all(|&v| v <= 8));
    }
    let mean = sum as f64 / (n * 3) as f64;
    let share = within as f64 / n as f64;
    assert!(mean <= 1.0, "mean error {mean} levels of 255");
    assert!(share >= 0.999, "{:.3} % within 8/255", share * 100.0);
}
