//! `memscape_render::shapes::Shape`s as SVG elements, placed exactly as the shape shader places
//! them: world points through the layer's camera (`pixel = world·scale + offset`), radii of discs
//! and sectors scaled by the mean of |scale.x| and |scale.y|, pixel sizes (markers, segment
//! widths, corner radii, borders) left unscaled; borders lie inside the shape's edge and the fill
//! shows only inside the border, as `fs_main` mixes them.
//!
//! Two things the shader's coverage ramp does that exact vector coverage does not are carried
//! over on purpose: a rectangle or segment thinner than a pixel is drawn with the ink the GPU
//! gives it (`(0.5 + w/2)²` pixels across rather than `w`, so hairlines stay visible), and runs
//! of segments of one colour and width that join end to end become one polyline (round joins,
//! as the capsules' round caps overlap) so that an edge of a graph is one element.

use std::f32::consts::PI;
use std::fmt::Write as _;

use memscape_render::shapes::{Geometry, Shape, ShapesView};

use super::num;

/// `shapes` seen through `view`, as SVG elements appended to `out`.
pub fn write_shapes(out: &mut String, shapes: &[Shape], view: &ShapesView) {
    let mut i = 0;
    while i < shapes.len() {
        if let Some(run) = segment_run(&shapes[i..], view) {
            write_polyline(out, &shapes[i..i + run], view);
            i += run;
            continue;
        }
        write_shape(out, &shapes[i], view);
        i += 1;
    }
}

/// How many shapes from the first form one polyline (two or more segments of one colour and
/// width, each starting where the one before ended), if they do.
fn segment_run(shapes: &[Shape], view: &ShapesView) -> Option<usize> {
    let first = shapes.first()?;
    let Geometry::Segment { b, width_px, .. } = first.geometry else {
        return None;
    };
    if first.border_px > 0.0 {
        return None;
    }
    let mut end = view.to_pixels(b);
    let mut n = 1;
    for s in &shapes[1..] {
        match s.geometry {
            Geometry::Segment {
                a: next_a,
                b: next_b,
                width_px: w,
            } if w == width_px && s.fill == first.fill && s.border_px <= 0.0 => {
                let start = view.to_pixels(next_a);
                if (start[0] - end[0]).abs() > 1e-3 || (start[1] - end[1]).abs() > 1e-3 {
                    break;
                }
                end = view.to_pixels(next_b);
                n += 1;
            }
            _ => break,
        }
    }
    (n > 1).then_some(n)
}

fn write_polyline(out: &mut String, run: &[Shape], view: &ShapesView) {
    let Some(first) = run.first() else {
        return;
    };
    let Geometry::Segment { a, width_px, .. } = first.geometry else {
        return;
    };
    let mut points = String::new();
    let p = view.to_pixels(a);
    let _ = write!(points, "{},{}", num(p[0]), num(p[1]));
    for s in run {
        if let Geometry::Segment { b, .. } = s.geometry {
            let q = view.to_pixels(b);
            let _ = write!(points, " {},{}", num(q[0]), num(q[1]));
        }
    }
    let _ = writeln!(
        out,
        r#"<polyline points="{points}" fill="none"{} stroke-width="{}" stroke-linecap="round" stroke-linejoin="round"/>"#,
        paint("stroke", first.fill),
        num(ink(width_px))
    );
}

/// Pixels across that a `w`-pixel-wide rectangle or stroke covers on the GPU (its coverage
/// ramp is one pixel wide, centred on the edge, so thin ones gain ink).
pub fn ink(w: f32) -> f32 {
    let w = w.max(0.0);
    if w < 1.0 { (0.5 + 0.5 * w).powi(2) } else { w }
}

/// ` fill="#rrggbb" fill-opacity="a"` (or `stroke…`) for straight-alpha sRGB bytes.
pub fn paint(attribute: &str, c: [u8; 4]) -> String {
    if c[3] == 0 {
        return format!(r#" {attribute}="none""#);
    }
    let mut s = format!(r##" {attribute}="#{:02x}{:02x}{:02x}""##, c[0], c[1], c[2]);
    if c[3] < 255 {
        let _ = write!(
            s,
            r#" {attribute}-opacity="{}""#,
            num(f32::from(c[3]) / 255.0)
        );
    }
    s
}

/// A shape's outline in pixels, possibly shrunk by an inset (its border's inner edge).
enum Outline {
    Rect {
        lo: [f32; 2],
        hi: [f32; 2],
        radius: f32,
    },
    Circle {
        c: [f32; 2],
        r: f32,
    },
    /// SVG path data (sectors, rings).
    Path(String),
}

impl Outline {
    /// The outline as path data (for rings: the outer outline then the inner, evenodd).
    fn path(&self) -> String {
        match self {
            Outline::Rect { lo, hi, radius } => rect_path(*lo, *hi, *radius),
            Outline::Circle { c, r } => circle_path(*c, *r),
            Outline::Path(d) => d.clone(),
        }
    }

    fn element(&self, attributes: &str) -> String {
        match self {
            Outline::Rect { lo, hi, radius } => {
                let r = if *radius > 0.0 {
                    format!(r#" rx="{}""#, num(*radius))
                } else {
                    String::new()
                };
                format!(
                    r#"<rect x="{}" y="{}" width="{}" height="{}"{r}{attributes}/>"#,
                    num(lo[0]),
                    num(lo[1]),
                    num(hi[0] - lo[0]),
                    num(hi[1] - lo[1])
                )
            }
            Outline::Circle { c, r } => format!(
                r#"<circle cx="{}" cy="{}" r="{}"{attributes}/>"#,
                num(c[0]),
                num(c[1]),
                num(*r)
            ),
            Outline::Path(d) => format!(r#"<path d="{d}"{attributes}/>"#),
        }
    }
}

/// One shape as one element (fill only or border only) or two (fill, then its border as a ring).
fn write_shape(out: &mut String, shape: &Shape, view: &ShapesView) {
    if let Geometry::Segment { a, b, width_px } = shape.geometry {
        write_segment(out, shape, view.to_pixels(a), view.to_pixels(b), width_px);
        return;
    }
    let Some(outer) = outline(&shape.geometry, view, 0.0) else {
        return;
    };
    let b = shape.border_px;
    let has_fill = shape.fill[3] > 0;
    if b <= 0.0 {
        if has_fill {
            let _ = writeln!(out, "{}", outer.element(&paint("fill", shape.fill)));
        }
        return;
    }
    let inner = outline(&shape.geometry, view, b);
    // The fill shows inside the border only; under an opaque border it can cover the whole
    // shape, which avoids a hairline seam between the two where anti-aliased edges meet.
    if has_fill {
        let fill_outline = if shape.border[3] == 255 {
            Some(&outer)
        } else {
            inner.as_ref()
        };
        if let Some(o) = fill_outline {
            let _ = writeln!(out, "{}", o.element(&paint("fill", shape.fill)));
        }
    }
    if shape.border[3] > 0 {
        match &inner {
            Some(i) => {
                let ring = Outline::Path(format!("{} {}", outer.path(), i.path()));
                let attributes = format!(r#"{} fill-rule="evenodd""#, paint("fill", shape.border));
                let _ = writeln!(out, "{}", ring.element(&attributes));
            }
            // All border: nothing is left inside it.
            None => {
                let _ = writeln!(out, "{}", outer.element(&paint("fill", shape.border)));
            }
        }
    }
}

/// A capsule: a round-capped line (a segment's border, rarely used, as a wider line under it).
fn write_segment(out: &mut String, shape: &Shape, a: [f32; 2], b: [f32; 2], width: f32) {
    let line = |color: [u8; 4], w: f32| {
        format!(
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}"{} stroke-width="{}" stroke-linecap="round"/>"#,
            num(a[0]),
            num(a[1]),
            num(b[0]),
            num(b[1]),
            paint("stroke", color),
            num(ink(w))
        )
    };
    if shape.border_px > 0.0 && shape.border[3] > 0 {
        let _ = writeln!(out, "{}", line(shape.border, width));
        let inner = width - 2.0 * shape.border_px;
        if inner > 0.0 && shape.fill[3] > 0 {
            let _ = writeln!(out, "{}", line(shape.fill, inner));
        }
    } else if shape.fill[3] > 0 {
        let _ = writeln!(out, "{}", line(shape.fill, width));
    }
}

/// The outline of a (non-segment) geometry in pixels, shrunk by `inset` pixels; None when
/// nothing is left.
fn outline(geometry: &Geometry, view: &ShapesView, inset: f32) -> Option<Outline> {
    let iso = 0.5 * (view.scale[0].abs() + view.scale[1].abs());
    match *geometry {
        Geometry::Rect {
            min,
            max,
            corner_px,
        } => {
            let a = view.to_pixels(min);
            let b = view.to_pixels(max);
            rect_outline(
                [a[0].min(b[0]), a[1].min(b[1])],
                [a[0].max(b[0]), a[1].max(b[1])],
                corner_px,
                inset,
            )
        }
        Geometry::PixelRect {
            center,
            size_px,
            corner_px,
        } => {
            let c = view.to_pixels(center);
            let half = [0.5 * size_px[0].abs(), 0.5 * size_px[1].abs()];
            rect_outline(
                [c[0] - half[0], c[1] - half[1]],
                [c[0] + half[0], c[1] + half[1]],
                corner_px,
                inset,
            )
        }
        Geometry::Disc { center, radius } => circle(view.to_pixels(center), radius * iso, inset),
        Geometry::PixelDisc { center, radius_px } => {
            circle(view.to_pixels(center), radius_px, inset)
        }
        Geometry::Sector {
            center,
            r0,
            r1,
            a0,
            a1,
        } => sector_path(
            view.to_pixels(center),
            r0.min(r1) * iso,
            r0.max(r1) * iso,
            a0.min(a1),
            a0.max(a1),
            inset,
        )
        .map(Outline::Path),
        Geometry::Segment { .. } => None,
    }
}

fn circle(c: [f32; 2], r: f32, inset: f32) -> Option<Outline> {
    let r = r - inset;
    (r > 0.0).then_some(Outline::Circle { c, r })
}

/// A rectangle as the shader's `sd_rect` sees it (corner radius clamped to half the shorter
/// side), shrunk by `inset`; a sliver thinner than a pixel widened to its GPU ink.
fn rect_outline(lo: [f32; 2], hi: [f32; 2], corner: f32, inset: f32) -> Option<Outline> {
    let mut lo = lo;
    let mut hi = hi;
    if inset == 0.0 {
        for k in 0..2 {
            let w = hi[k] - lo[k];
            let grow = 0.5 * (ink(w) - w);
            lo[k] -= grow;
            hi[k] += grow;
        }
    }
    let half = [0.5 * (hi[0] - lo[0]), 0.5 * (hi[1] - lo[1])];
    let r = corner.clamp(0.0, half[0].min(half[1]).max(0.0));
    let lo = [lo[0] + inset, lo[1] + inset];
    let hi = [hi[0] - inset, hi[1] - inset];
    if hi[0] - lo[0] <= 0.0 || hi[1] - lo[1] <= 0.0 {
        return None;
    }
    Some(Outline::Rect {
        lo,
        hi,
        radius: (r - inset).max(0.0),
    })
}

fn rect_path(lo: [f32; 2], hi: [f32; 2], r: f32) -> String {
    let (x0, y0, x1, y1) = (lo[0], lo[1], hi[0], hi[1]);
    if r <= 0.0 {
        return format!(
            "M{} {}H{}V{}H{}Z",
            num(x0),
            num(y0),
            num(x1),
            num(y1),
            num(x0)
        );
    }
    let rs = num(r);
    let arc = |x: f32, y: f32| format!("A{rs} {rs} 0 0 1 {} {}", num(x), num(y));
    format!(
        "M{} {}H{}{}V{}{}H{}{}V{}{}Z",
        num(x0 + r),
        num(y0),
        num(x1 - r),
        arc(x1, y0 + r),
        num(y1 - r),
        arc(x1 - r, y1),
        num(x0 + r),
        arc(x0, y1 - r),
        num(y0 + r),
        arc(x0 + r, y0)
    )
}

fn circle_path(c: [f32; 2], r: f32) -> String {
    let rs = num(r);
    format!(
        "M{} {}A{rs} {rs} 0 1 1 {} {}A{rs} {rs} 0 1 1 {} {}Z",
        num(c[0] + r),
        num(c[1]),
        num(c[0] - r),
        num(c[1]),
        num(c[0] + r),
        num(c[1])
    )
}

fn polar(c: [f32; 2], r: f32, a: f32) -> String {
    format!("{} {}", num(c[0] + r * a.cos()), num(c[1] + r * a.sin()))
}

/// The annular sector between radii `r0 < r1` and angles `a0 < a1` (clockwise on screen), as
/// the shader's `sd_sector` bounds it, shrunk by `inset` pixels: radially by `inset`, and its
/// straight edges moved `inset` inwards (parallel), so that on a circle of radius R the edge
/// moves by asin(inset/R). None when nothing is left.
pub fn sector_path(c: [f32; 2], r0: f32, r1: f32, a0: f32, a1: f32, inset: f32) -> Option<String> {
    let outer = r1 - inset;
    let inner = (r0 + inset).max(0.0);
    if outer <= inner || outer <= 0.0 {
        return None;
    }
    let span = a1 - a0;
    if span >= 2.0 * PI {
        let ring = circle_path(c, outer);
        return Some(if inner > 0.0 {
            format!("{ring} {}", circle_path(c, inner))
        } else {
            ring
        });
    }
    let half = 0.5 * span;
    let shift = |r: f32| {
        if inset <= 0.0 {
            0.0
        } else if r <= inset {
            0.5 * PI
        } else {
            (inset / r).asin()
        }
    };
    let so = shift(outer);
    if so >= half {
        return None;
    }
    let (b0, b1) = (a0 + so, a1 - so);
    let large = u8::from(b1 - b0 > PI);
    let rs = num(outer);
    let mut d = format!(
        "M{}A{rs} {rs} 0 {large} 1 {}",
        polar(c, outer, b0),
        polar(c, outer, b1)
    );
    let si = shift(inner);
    if inner > 0.0 && si < half {
        let (e0, e1) = (a0 + si, a1 - si);
        let large = u8::from(e1 - e0 > PI);
        let rs = num(inner);
        let _ = write!(
            d,
            "L{}A{rs} {rs} 0 {large} 0 {}Z",
            polar(c, inner, e1),
            polar(c, inner, e0)
        );
    } else {
        // The straight edges (moved inwards) meet on the bisector before the inner radius.
        let mid = 0.5 * (a0 + a1);
        let r = if inset > 0.0 && half < 0.5 * PI {
            inset / half.sin()
        } else {
            0.0
        };
        if r >= outer {
            return None;
        }
        let _ = write!(d, "L{}Z", polar(c, r, mid));
    }
    Some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thin_shapes_keep_their_gpu_ink_and_wide_ones_their_width() {
        assert_eq!(ink(3.0), 3.0);
        assert_eq!(ink(1.0), 1.0);
        assert!((ink(0.0) - 0.25).abs() < 1e-6);
        assert!((ink(0.5) - 0.5625).abs() < 1e-6);
    }

    #[test]
    fn colours_are_hex_with_opacity_only_when_translucent() {
        assert_eq!(paint("fill", [255, 0, 16, 255]), r##" fill="#ff0010""##);
        assert_eq!(
            paint("stroke", [0, 0, 0, 128]),
            r##" stroke="#000000" stroke-opacity="0.5""##
        );
        assert_eq!(paint("fill", [9, 9, 9, 0]), r#" fill="none""#);
    }

    #[test]
    fn world_shapes_go_through_the_camera_and_pixel_sizes_do_not() {
        let view = ShapesView {
            scale: [2.0, 2.0],
            offset: [10.0, 20.0],
        };
        let mut out = String::new();
        write_shapes(
            &mut out,
            &[
                Shape::new(
                    Geometry::Rect {
                        min: [0.0, 0.0],
                        max: [5.0, 5.0],
                        corner_px: 0.0,
                    },
                    [1, 2, 3, 255],
                ),
                Shape::new(
                    Geometry::PixelDisc {
                        center: [5.0, 5.0],
                        radius_px: 4.0,
                    },
                    [1, 2, 3, 255],
                ),
                Shape::new(
                    Geometry::Disc {
                        center: [5.0, 5.0],
                        radius: 4.0,
                    },
                    [1, 2, 3, 255],
                ),
            ],
            &view,
        );
        assert!(
            out.contains(r#"<rect x="10" y="20" width="10" height="10""#),
            "{out}"
        );
        assert!(out.contains(r#"<circle cx="20" cy="30" r="4""#), "{out}");
        assert!(out.contains(r#"<circle cx="20" cy="30" r="8""#), "{out}");
    }

    #[test]
    fn joined_segments_of_one_colour_become_one_polyline() {
        let seg = |a: [f32; 2], b: [f32; 2]| {
            Shape::new(
                Geometry::Segment {
                    a,
                    b,
                    width_px: 2.0,
                },
                [0, 0, 0, 255],
            )
        };
        let mut out = String::new();
        write_shapes(
            &mut out,
            &[
                seg([0.0, 0.0], [10.0, 0.0]),
                seg([10.0, 0.0], [10.0, 10.0]),
                seg([50.0, 50.0], [60.0, 60.0]),
            ],
            &ShapesView::IDENTITY,
        );
        assert_eq!(out.matches("<polyline").count(), 1, "{out}");
        assert!(out.contains(r#"points="0,0 10,0 10,10""#), "{out}");
        assert_eq!(out.matches("<line").count(), 1, "{out}");
    }

    #[test]
    fn a_sector_inset_by_its_border_keeps_parallel_straight_edges() {
        // A quarter ring from 0 to π/2, radii 10..20, inset 1: the outer arc starts at
        // asin(1/19) past 0, the inner at asin(1/11).
        let d = sector_path([0.0, 0.0], 10.0, 20.0, 0.0, 0.5 * PI, 1.0).unwrap();
        let start = format!("M{} {}", num(19.0 * (1.0f32 / 19.0).asin().cos()), num(1.0));
        assert!(d.starts_with(&start), "{d} vs {start}");
        // A wedge from the centre: the inset edges meet on the bisector at 1/sin(π/4).
        let wedge = sector_path([0.0, 0.0], 0.0, 20.0, 0.0, 0.5 * PI, 1.0).unwrap();
        let r = 1.0 / (0.25 * PI).sin();
        let tip = polar([0.0, 0.0], r, 0.25 * PI);
        assert!(wedge.ends_with(&format!("L{tip}Z")), "{wedge}");
        // Too thin for its border: nothing inside.
        assert!(sector_path([0.0, 0.0], 10.0, 11.5, 0.0, 1.0, 1.0).is_none());
        // A full ring is two circles.
        let ring = sector_path([0.0, 0.0], 5.0, 9.0, 0.0, 7.0, 0.0).unwrap();
        assert_eq!(ring.matches('M').count(), 2);
    }
}
