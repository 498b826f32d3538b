//! What the level-of-detail tests share: an index built for a trace in a directory, the zoom
//! ladder around a block and whether a block shows in a picture.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use memscape_lod::trace_source::TraceFile;
use memscape_lod::{LodBlock, LodView, PixelSums};

/// Threads' palette colours, as the GUI's index holds them.
pub fn color(t: u32, _s: u32, _z: u64, _l: u64) -> (u32, f32) {
    (memscape_lod::source::palette_color(t), 0.0)
}

/// The index of `file` (coloured by thread, default parameters), built in `dir` beside a
/// stand-in trace file; its path.
pub fn build_index(file: &TraceFile, dir: &Path) -> PathBuf {
    let trace_path = dir.join("t.msc");
    std::fs::write(&trace_path, b"stand-in").expect("write");
    let out = memscape_lod::sidecar::index_path(&trace_path, "thread");
    memscape_lod::sidecar::build(
        file,
        &trace_path,
        &out,
        memscape_lod::sidecar::Coloring {
            name: "thread",
            color: &color,
        },
        &memscape_lod::BuildParams::default(),
        &mut |_, _| {},
        &std::sync::atomic::AtomicBool::new(false),
    )
    .expect("build");
    out
}

/// Views of `w`×`h` at α = 0.1 around `b`, from the whole plane `extent` (time × collapsed
/// bytes) down to 64 × 64 units, each 4× closer, with their zoom factor.
pub fn zoom_ladder(b: &LodBlock, extent: [u64; 2], w: u32, h: u32) -> Vec<(u64, LodView)> {
    let [te, ye] = extent;
    let mut out = Vec::new();
    let mut zoom = 1u64;
    loop {
        let (tw, yw) = ((te / zoom).max(64), (ye / zoom).max(64));
        let t0 = b.t0.saturating_sub(tw / 3);
        let a0 = b.y.saturating_sub(yw / 3);
        let mut v = LodView::fit(t0, t0 + tw, a0, a0 + yw, w, h);
        v.alpha = 0.1;
        out.push((zoom, v));
        if tw <= 64 && yw <= 64 {
            return out;
        }
        zoom *= 4;
    }
}

/// Whether `b` shows in `img` (the view's pixels, row-major): a pixel at or next to it differs
/// from the background by at least 8/255 in some channel.
pub fn visible(v: &LodView, img: &[[u8; 4]], b: &LodBlock) -> bool {
    let w = v.width as usize;
    let bg = PixelSums::new(1, 1).resolve(v)[0];
    let g = v.block_geometry_px(b);
    let (px, py) = (
        g[0].max(0.0) as usize,
        (g[1] - g[3] / 2.0).max(0.0) as usize,
    );
    (py.saturating_sub(1)..=py + 1).any(|y| {
        (px.saturating_sub(1)..=px + 1).any(|x| {
            x < w
                && img
                    .get(y * w + x)
                    .is_some_and(|p| (0..3).any(|k| p[k].abs_diff(bg[k]) >= 8))
        })
    })
}
