//! CPU twin of `shaders/polar_morph.wgsl`: the same interpolation evaluated on the CPU, turned
//! into the generic shapes (discs and segment pieces, in drawing order) and rasterised by the
//! shapes reference. Tests compare it with the GPU morph at several t.

use std::f32::consts::PI;

use super::PolarMorphView;
use super::gpu::{PolarArcGpu, PolarPointGpu};
use crate::shapes::gpu::{FLAG_PIXEL_SIZE, KIND_DISC, KIND_SEGMENT, ShapeGpu};

/// Shortest signed turn from `a` to `b`, in (−π, π] (the shader's `turn`).
pub fn turn(a: f32, b: f32) -> f32 {
    let d = b - a;
    d - 2.0 * PI * ((d - PI) / (2.0 * PI)).ceil()
}

pub fn angle_at(theta_a: f32, theta_b: f32, t: f32) -> f32 {
    theta_a + turn(theta_a, theta_b) * t
}

/// Pixel position of polar (r, θ) in `view`.
pub fn polar_px(view: &PolarMorphView, r: f32, theta: f32) -> [f32; 2] {
    let a = theta - 0.5 * PI;
    [
        view.center_px[0] + a.cos() * r * view.radius_px,
        view.center_px[1] + a.sin() * r * view.radius_px,
    ]
}

fn arc_point(view: &PolarMorphView, arc: &PolarArcGpu, s: f32) -> [f32; 2] {
    let th0 = angle_at(arc.from[1], arc.from[2], view.t);
    let th1 = angle_at(arc.to[1], arc.to[2], view.t);
    let r = arc.from[0] + (arc.to[0] - arc.from[0]) * s;
    polar_px(view, r, th0 + turn(th0, th1) * s)
}

/// The shapes the GPU draws for this frame, in its order: every arc's pieces, then the points.
/// In pixels (draw them with `ShapesView::IDENTITY`).
pub fn shapes_at(
    view: &PolarMorphView,
    points: &[PolarPointGpu],
    arcs: &[PolarArcGpu],
) -> Vec<ShapeGpu> {
    let n = view.arc_subdivisions.max(1);
    let mut out = Vec::with_capacity(arcs.len() * n as usize + points.len());
    for arc in arcs {
        for piece in 0..n {
            let a = arc_point(view, arc, piece as f32 / n as f32);
            let b = arc_point(view, arc, (piece + 1) as f32 / n as f32);
            out.push(ShapeGpu {
                kind: KIND_SEGMENT,
                border_px: 0.0,
                fill: arc.color,
                border: 0,
                p: [a[0], a[1], b[0], b[1]],
                q: [0.5 * view.arc_width_px, 0.0, 0.0, 0.0],
            });
        }
    }
    for p in points {
        let c = polar_px(view, p.r, angle_at(p.theta_a, p.theta_b, view.t));
        out.push(ShapeGpu {
            kind: KIND_DISC | FLAG_PIXEL_SIZE,
            border_px: 0.0,
            fill: p.color,
            border: 0,
            p: [c[0], c[1], view.point_radius_px, 0.0],
            q: [0.0; 4],
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turn_takes_the_short_way() {
        let close = |a: f32, b: f32| (a - b).abs() < 1e-5;
        assert!(close(turn(0.1, 0.3), 0.2));
        assert!(close(turn(0.1, 2.0 * PI - 0.1), -0.2));
        assert!(close(turn(2.0 * PI - 0.1, 0.1), 0.2));
        assert!(close(turn(0.0, PI), PI));
        for i in 0..100 {
            let a = i as f32 * 0.37;
            let b = i as f32 * 1.91 - 7.0;
            let d = turn(a, b);
            assert!(d > -PI - 1e-5 && d <= PI + 1e-5);
            // Lands on b modulo a full turn.
            let diff = (a + d - b) / (2.0 * PI);
            assert!((diff - diff.round()).abs() < 1e-4);
        }
    }
}
