//! memscape-lod computes exact Eq. 1 pixels without a GPU stack (its level of detail is judged
//! against them): they must be this crate's CPU reference's pixels, on a generated heap-like
//! trace, for every cushion, both colour modes and several α.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memscape_lod::eq1::{ColorMode as LodColorMode, Cushion};
use memscape_lod::source::{Coloring, blocks_from_trace};
use memscape_lod::synth::{SynthParams, trace};
use memscape_lod::{LodView, exact};
use memscape_render::alloc_map::{
    AllocBlockGpu, AllocMapView, BlockTimeGpu, ColorMode, CushionKind, cpu_reference,
};

#[test]
fn lod_exact_pixels_are_the_cpu_reference() {
    for coloring in [Coloring::Thread, Coloring::Size] {
        let t = trace(SynthParams::new(40_000, 21));
        let (blocks, axis) = blocks_from_trace(&t, coloring);
        let gpu: Vec<AllocBlockGpu> = blocks
            .iter()
            .map(|b| AllocBlockGpu::new(b.y, b.size, b.color.to_le_bytes(), b.attr))
            .collect();
        let times: Vec<BlockTimeGpu> = blocks
            .iter()
            .map(|b| BlockTimeGpu::new(b.t0, b.t1))
            .collect();
        let te = blocks.iter().map(|b| b.t1).max().unwrap_or(1);
        let (w, h) = (160u32, 100u32);
        let views = [
            (0, te, 0, axis.extent),
            (te / 3, te / 3 + te / 50, 0, axis.extent),
            (
                te / 2,
                te / 2 + 400,
                axis.extent / 3,
                axis.extent / 3 + 20_000,
            ),
        ];
        for &(t0, t1, a0, a1) in &views {
            for (alpha, cushion, kind) in [
                (0.1f32, Cushion::Parabolic, CushionKind::Parabolic),
                (0.5, Cushion::Plateau, CushionKind::Plateau),
                (1.0, Cushion::None, CushionKind::None),
            ] {
                let mut lv = LodView::fit(t0, t1, a0, a1, w, h);
                lv.alpha = alpha;
                lv.cushion = cushion;
                let mut rv = AllocMapView::fit(t0, t1, a0, a1, w, h);
                rv.alpha = alpha;
                rv.cushion = kind;
                rv.background_linear = lv.background_linear;
                rv.cushion_strength = lv.cushion_strength;
                if coloring == Coloring::Size {
                    lv.color_mode = LodColorMode::Quantitative;
                    rv.color_mode = ColorMode::Quantitative;
                }
                let want = cpu_reference::render(&rv, w, h, &gpu, &times);
                for (name, got) in [
                    ("render", exact::render(&lv, &blocks)),
                    ("render_fast", exact::render_fast(&lv, &blocks)),
                ] {
                    let mut worst = 0u8;
                    let mut off = 0usize;
                    for (i, p) in got.iter().enumerate() {
                        let q = &want.pixels[i * 4..i * 4 + 3];
                        let d = (0..3).map(|k| p[k].abs_diff(q[k])).max().unwrap_or(0);
                        worst = worst.max(d);
                        off += usize::from(d > 1);
                    }
                    assert!(
                        worst <= 2 && off * 1000 <= got.len(),
                        "{coloring:?} {name} [{t0},{t1})×[{a0},{a1}) α {alpha} {cushion:?}: \
                         worst {worst}, {off} pixels off by more than 1"
                    );
                }
            }
        }
    }
}
