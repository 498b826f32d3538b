//! The polar morph (cycle views) on the GPU against its CPU reference, and the morph's ends
//! against the plain spirals of the two parameterizations.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memscape_render::golden::{Tolerance, compare};
use memscape_render::polar_morph::{
    PolarArcGpu, PolarMorphData, PolarMorphPipelines, PolarMorphView, PolarPointGpu, cpu_reference,
    render_offscreen,
};
use memscape_render::shapes::{ShapesView, cpu_reference as shapes_cpu};
use memscape_render::{GpuContext, RgbaImage};
use std::f32::consts::TAU;

mod common;
use common::ctx;

/// As for the shapes: same formulas, GPU trig differs in the last bits, a few pixels at
/// coverage rounding boundaries may move by more than one step.
const GPU_VS_CPU: Tolerance = Tolerance {
    per_channel: 3,
    max_differing_pixels: 60,
};

const W: u32 = 320;
const H: u32 = 320;
const BG: [u8; 4] = [16, 18, 24, 255];

/// A spiral of `n` records: parameterization A turns 5 times, B turns 3 times backwards with a
/// phase, so most points cross the ±π seam at some t.
fn records(n: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let r: Vec<f32> = (0..n).map(|i| 0.15 + 0.85 * i as f32 / n as f32).collect();
    let a: Vec<f32> = (0..n)
        .map(|i| (5.0 * TAU * i as f32 / n as f32) % TAU)
        .collect();
    let b: Vec<f32> = (0..n)
        .map(|i| (1.0 - 3.0 * TAU * i as f32 / n as f32).rem_euclid(TAU))
        .collect();
    (r, a, b)
}

fn data(r: &[f32], a: &[f32], b: &[f32]) -> (Vec<PolarPointGpu>, Vec<PolarArcGpu>) {
    let color = |i: usize| {
        memscape_render::color::pack_rgba8(memscape_render::color::categorical((i / 40) as u32))
    };
    let points: Vec<PolarPointGpu> = (0..r.len())
        .map(|i| PolarPointGpu {
            r: r[i],
            theta_a: a[i],
            theta_b: b[i],
            color: color(i),
        })
        .collect();
    let arcs: Vec<PolarArcGpu> = (1..r.len())
        .map(|i| PolarArcGpu {
            from: [r[i - 1], a[i - 1], b[i - 1]],
            to: [r[i], a[i], b[i]],
            color: memscape_render::color::pack_rgba8([200, 200, 210, 90]),
            _pad: 0,
        })
        .collect();
    (points, arcs)
}

fn view(t: f32) -> PolarMorphView {
    PolarMorphView {
        t,
        ..PolarMorphView::centered(W as f32, H as f32, 1.0)
    }
}

fn gpu_frame(
    ctx: &GpuContext,
    points: &[PolarPointGpu],
    arcs: &[PolarArcGpu],
    t: f32,
) -> RgbaImage {
    let mut pipelines = PolarMorphPipelines::new(&ctx.device).unwrap();
    let mut data = PolarMorphData::new(&ctx.device, &pipelines, points, arcs).unwrap();
    render_offscreen(ctx, &mut pipelines, &mut data, &view(t), W, H, BG).unwrap()
}

#[test]
fn gpu_matches_cpu_reference_along_the_morph() {
    let ctx = ctx();
    let (r, a, b) = records(300);
    let (points, arcs) = data(&r, &a, &b);
    for t in [0.0f32, 0.3, 0.5, 1.0] {
        let gpu = gpu_frame(ctx, &points, &arcs, t);
        let shapes = cpu_reference::shapes_at(&view(t), &points, &arcs);
        let cpu = shapes_cpu::render(&shapes, &ShapesView::IDENTITY, W, H, BG);
        let c = compare(&gpu, &cpu, GPU_VS_CPU);
        assert!(
            c.differing_pixels <= GPU_VS_CPU.max_differing_pixels,
            "t = {t}: GPU and CPU differ on {} pixels (max channel difference {})",
            c.differing_pixels,
            c.max_channel_difference
        );
        assert!(
            gpu.distinct_colors() > 20,
            "t = {t}: the picture is not empty"
        );
    }
}

#[test]
fn morph_ends_are_the_plain_spirals() {
    let ctx = ctx();
    let (r, a, b) = records(300);
    let (morph_points, morph_arcs) = data(&r, &a, &b);
    let (plain_a, arcs_a) = data(&r, &a, &a);
    let (plain_b, arcs_b) = data(&r, &b, &b);
    let exact = Tolerance {
        per_channel: 2,
        max_differing_pixels: 0,
    };
    let start = gpu_frame(ctx, &morph_points, &morph_arcs, 0.0);
    let spiral_a = gpu_frame(ctx, &plain_a, &arcs_a, 0.0);
    let c = compare(&start, &spiral_a, exact);
    assert_eq!(c.differing_pixels, 0, "t = 0 is parameterization A ({c:?})");
    let end = gpu_frame(ctx, &morph_points, &morph_arcs, 1.0);
    let spiral_b = gpu_frame(ctx, &plain_b, &arcs_b, 0.0);
    let c = compare(&end, &spiral_b, exact);
    assert!(
        c.differing_pixels <= 5,
        "t = 1 is parameterization B up to float rounding of a full turn ({c:?})"
    );
    // And the middle is neither.
    let middle = gpu_frame(ctx, &morph_points, &morph_arcs, 0.5);
    assert!(compare(&middle, &spiral_a, exact).differing_pixels > 1000);
    assert!(compare(&middle, &spiral_b, exact).differing_pixels > 1000);
}
