//! The shape pipeline on the GPU (lavapipe in CI) against its CPU reference, and a golden image.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memscape_render::golden::{self, Tolerance, compare};
use memscape_render::shapes::{
    Geometry, Shape, ShapeGpu, ShapesPipelines, ShapesView, cpu_reference, render_offscreen,
};
use std::f32::consts::PI;

mod common;
use common::ctx;

/// Same formulas in f32 on both sides, but GPU atan2/sin/sqrt differ from Rust's in the last
/// bits, and a distance that lands on a coverage rounding boundary can move a channel by one
/// step per blended layer: 3/255 per channel, and at most 0.1 % of pixels beyond that.
const GPU_VS_CPU: Tolerance = Tolerance {
    per_channel: 3,
    max_differing_pixels: 40,
};

const W: u32 = 240;
const H: u32 = 160;
const BG: [u8; 4] = [20, 22, 30, 255];

/// Every kind of shape, overlapping, with borders, translucency, sub-pixel sizes and a sector
/// that crosses the ±π seam.
fn scene() -> Vec<ShapeGpu> {
    let c = memscape_render::color::categorical;
    let mut shapes = vec![
        Shape::new(
            Geometry::Rect {
                min: [10.0, 10.0],
                max: [90.5, 60.25],
                corner_px: 0.0,
            },
            c(0),
        )
        .with_border([250, 250, 250, 255], 2.0),
        Shape::new(
            Geometry::Rect {
                min: [60.0, 30.0],
                max: [130.0, 90.0],
                corner_px: 8.0,
            },
            [230, 120, 40, 160],
        ),
        Shape::new(
            Geometry::Disc {
                center: [170.0, 50.0],
                radius: 30.3,
            },
            c(2),
        )
        .with_border([0, 0, 0, 200], 1.5),
        Shape::new(
            Geometry::PixelDisc {
                center: [200.0, 120.0],
                radius_px: 0.4,
            },
            [255, 255, 255, 255],
        ),
        Shape::new(
            Geometry::Segment {
                a: [12.0, 150.0],
                b: [228.0, 95.0],
                width_px: 3.0,
            },
            c(4),
        ),
        Shape::new(
            Geometry::Segment {
                a: [12.0, 100.0],
                b: [100.0, 140.0],
                width_px: 0.5,
            },
            [255, 255, 255, 255],
        ),
        Shape::new(
            Geometry::PixelRect {
                center: [150.0, 130.0],
                size_px: [9.0, 5.0],
                corner_px: 2.0,
            },
            c(5),
        ),
    ];
    // A small sunburst: a full ring and segments, one across the seam at angle π.
    let center = [60.0, 110.0];
    shapes.push(Shape::new(
        Geometry::Sector {
            center,
            r0: 0.0,
            r1: 12.0,
            a0: 0.0,
            a1: 2.0 * PI,
        },
        c(6),
    ));
    let spans = [(-0.5f32, 1.2f32), (1.2, 2.6), (2.6, 3.9), (3.9, 5.783)];
    for (i, (a0, a1)) in spans.iter().enumerate() {
        shapes.push(
            Shape::new(
                Geometry::Sector {
                    center,
                    r0: 12.0,
                    r1: 30.0,
                    a0: *a0,
                    a1: *a1,
                },
                c(i as u32 + 7),
            )
            .with_border(BG, 1.0),
        );
    }
    shapes.iter().map(Shape::gpu).collect()
}

#[test]
fn gpu_matches_cpu_reference() {
    let ctx = ctx();
    let mut pipelines = ShapesPipelines::new(&ctx.device).unwrap();
    let view = ShapesView::IDENTITY;
    let shapes = scene();
    let gpu = render_offscreen(ctx, &mut pipelines, &shapes, &view, W, H, BG).unwrap();
    let cpu = cpu_reference::render(&shapes, &view, W, H, BG);
    let c = compare(&gpu, &cpu, GPU_VS_CPU);
    assert!(
        c.differing_pixels <= GPU_VS_CPU.max_differing_pixels,
        "GPU and CPU differ on {} pixels (max channel difference {})",
        c.differing_pixels,
        c.max_channel_difference
    );
    // And the picture is not empty: many distinct colours from edges and blending.
    assert!(gpu.distinct_colors() > 50);
    golden::check(
        &gpu,
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/shapes_scene.png"),
        Tolerance {
            per_channel: 2,
            max_differing_pixels: 0,
        },
    )
    .unwrap();
}

#[test]
fn zoomed_view_matches_cpu_reference() {
    let ctx = ctx();
    let mut pipelines = ShapesPipelines::new(&ctx.device).unwrap();
    // Zoom 3× onto the sunburst with a translation: sectors and discs scale, segments keep
    // their pixel width.
    let view = ShapesView {
        scale: [3.0, 3.0],
        offset: [-120.0, -250.0],
    };
    let shapes = scene();
    let gpu = render_offscreen(ctx, &mut pipelines, &shapes, &view, W, H, BG).unwrap();
    let cpu = cpu_reference::render(&shapes, &view, W, H, BG);
    let c = compare(&gpu, &cpu, GPU_VS_CPU);
    assert!(
        c.differing_pixels <= GPU_VS_CPU.max_differing_pixels,
        "GPU and CPU differ on {} pixels (max channel difference {})",
        c.differing_pixels,
        c.max_channel_difference
    );
}

#[test]
fn coverage_is_area_for_straight_edges() {
    // A rectangle from x = 10.25 to 20.75 covers 0.75 of pixel 10 and 0.75 of pixel 20:
    // white on black gives 191 or 192 at those columns, 255 inside, 0 outside.
    let ctx = ctx();
    let mut pipelines = ShapesPipelines::new(&ctx.device).unwrap();
    let shapes = [Shape::new(
        Geometry::Rect {
            min: [10.25, 2.0],
            max: [20.75, 8.0],
            corner_px: 0.0,
        },
        [255, 255, 255, 255],
    )
    .gpu()];
    let img = render_offscreen(
        ctx,
        &mut pipelines,
        &shapes,
        &ShapesView::IDENTITY,
        32,
        10,
        [0, 0, 0, 255],
    )
    .unwrap();
    let at = |x| img.pixel(x, 5)[0];
    assert!((190..=192).contains(&at(10)), "left edge {}", at(10));
    assert_eq!(at(15), 255);
    assert!((190..=192).contains(&at(20)), "right edge {}", at(20));
    assert_eq!(at(9), 0);
    assert_eq!(at(21), 0);
}

#[test]
fn fit_maps_world_rectangle_into_viewport() {
    let v = ShapesView::fit([-1.0, -1.0], [1.0, 1.0], 200.0, 100.0, 10.0, true);
    let a = v.to_pixels([-1.0, -1.0]);
    let b = v.to_pixels([1.0, 1.0]);
    assert!((b[1] - a[1] - 80.0).abs() < 1e-4, "height fills 100 - 2·10");
    assert!((b[0] - a[0] - 80.0).abs() < 1e-4, "isotropic");
    assert!((0.5 * (a[0] + b[0]) - 100.0).abs() < 1e-4, "centred");
    let w = v.to_world(v.to_pixels([0.3, -0.7]));
    assert!((w[0] - 0.3).abs() < 1e-6 && (w[1] + 0.7).abs() < 1e-6);
}
