// Instanced 2-D shapes with analytic anti-aliasing: axis-aligned rectangles (optionally rounded),
// discs, annular sectors and thick segments. Every instance is drawn as a quad that covers it
// plus one pixel; the fragment shader evaluates the shape's signed distance in pixels and turns
// it into coverage (a one-pixel ramp), so edges are smooth at any zoom without MSAA.
//
// Used by the heap trees (sunburst, icicle), the cycle views, the topology view, graphs and
// histograms. CPU twin: crates/memscape-render/src/shapes/cpu_reference.rs.
//
// Colours arrive as straight-alpha sRGB bytes and are blended premultiplied in the target's
// space: sRGB-encoded for plain *Unorm targets (egui's own convention), linear for *Srgb ones.

#import "utils/color.wgsl"
#import "utils/sdf.wgsl"

// Keep in sync with ShapesViewGpu in crates/memscape-render/src/shapes/gpu.rs.
struct ShapesView {
    // pixel = world * scale + offset (y down, origin at the top left of the viewport).
    scale: vec2<f32>,
    offset: vec2<f32>,
    viewport_px: vec2<f32>,
    output_srgb_encode: u32,
    _pad: u32,
};

@group(0) @binding(0) var<uniform> view: ShapesView;

const KIND_RECT: u32 = 0u;
const KIND_DISC: u32 = 1u;
const KIND_SECTOR: u32 = 2u;
const KIND_SEGMENT: u32 = 3u;

// Flag bits of ShapeGpu::kind above the low byte.
const FLAG_PIXEL_SIZE: u32 = 256u; // disc radius / rect size given in pixels around p.xy

// Keep in sync with ShapeGpu in crates/memscape-render/src/shapes/gpu.rs.
struct ShapeIn {
    @location(0) kind: u32,
    @location(1) border_px: f32,
    @location(2) fill: u32,
    @location(3) border: u32,
    @location(4) p: vec4<f32>,
    @location(5) q: vec4<f32>,
};

struct VsOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) pixel: vec2<f32>,
    @location(1) @interpolate(flat) kind: u32,
    @location(2) @interpolate(flat) border_px: f32,
    @location(3) @interpolate(flat) fill: u32,
    @location(4) @interpolate(flat) border: u32,
    // Shape parameters already in pixels (see shape_in_pixels).
    @location(5) @interpolate(flat) a: vec4<f32>,
    @location(6) @interpolate(flat) b: vec4<f32>,
};

fn to_px(world: vec2<f32>) -> vec2<f32> {
    return world * view.scale + view.offset;
}

struct PixelShape {
    a: vec4<f32>,
    b: vec4<f32>,
};

// Converts a shape's world parameters to pixels. Radii of discs and sectors scale with the mean
// of |scale.x| and |scale.y| (the views that use them keep the scale isotropic).
fn shape_in_pixels(kind: u32, flags: u32, p: vec4<f32>, q: vec4<f32>) -> PixelShape {
    let iso = 0.5 * (abs(view.scale.x) + abs(view.scale.y));
    var s: PixelShape;
    if kind == KIND_RECT {
        if (flags & FLAG_PIXEL_SIZE) != 0u {
            let c = to_px(p.xy);
            s.a = vec4<f32>(c - 0.5 * p.zw, c + 0.5 * p.zw);
        } else {
            let a = to_px(p.xy);
            let b = to_px(p.zw);
            s.a = vec4<f32>(min(a, b), max(a, b));
        }
        s.b = q; // q.x = corner radius in pixels
    } else if kind == KIND_DISC {
        var r = p.z * iso;
        if (flags & FLAG_PIXEL_SIZE) != 0u {
            r = p.z;
        }
        s.a = vec4<f32>(to_px(p.xy), r, 0.0);
        s.b = q;
    } else if kind == KIND_SECTOR {
        s.a = vec4<f32>(to_px(p.xy), p.z * iso, p.w * iso);
        s.b = q; // angles in radians, clockwise on screen from +x: q.x = start, q.y = end
    } else {
        s.a = vec4<f32>(to_px(p.xy), to_px(p.zw));
        s.b = q; // q.x = half width in pixels
    }
    return s;
}

// Bounding box (min.xy, max.xy) in pixels of an annular sector.
fn sector_bounds(c: vec2<f32>, r0: f32, r1: f32, a0: f32, a1: f32) -> vec4<f32> {
    let d0 = vec2<f32>(cos(a0), sin(a0));
    let d1 = vec2<f32>(cos(a1), sin(a1));
    var lo = min(min(c + d0 * r0, c + d1 * r0), min(c + d0 * r1, c + d1 * r1));
    var hi = max(max(c + d0 * r0, c + d1 * r0), max(c + d0 * r1, c + d1 * r1));
    // The axis extremes inside [a0, a1].
    for (var k = 0; k < 12; k++) {
        let axis = f32(k - 4) * 0.5 * PI;
        if axis >= a0 && axis <= a1 {
            let e = c + vec2<f32>(cos(axis), sin(axis)) * r1;
            lo = min(lo, e);
            hi = max(hi, e);
        }
    }
    return vec4<f32>(lo, hi);
}

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32, shape: ShapeIn) -> VsOut {
    let kind = shape.kind & 255u;
    let flags = shape.kind & ~255u;
    let px = shape_in_pixels(kind, flags, shape.p, shape.q);
    // One pixel of anti-aliasing ramp outside the shape, plus rounding slack.
    let pad = 1.5;
    let corner = vec2<f32>(f32(vertex & 1u), f32((vertex >> 1u) & 1u));
    var pixel: vec2<f32>;
    if kind == KIND_SEGMENT {
        // An oriented quad around the segment, so long diagonal edges cost no empty pixels.
        let a = px.a.xy;
        let b = px.a.zw;
        let len = length(b - a);
        var dir = vec2<f32>(1.0, 0.0);
        if len > 1e-6 {
            dir = (b - a) / len;
        }
        let normal = vec2<f32>(-dir.y, dir.x);
        let hw = px.b.x + pad;
        let along = mix(-hw, len + hw, corner.x);
        let across = mix(-hw, hw, corner.y);
        pixel = a + dir * along + normal * across;
    } else {
        var bounds: vec4<f32>;
        if kind == KIND_RECT {
            bounds = px.a;
        } else if kind == KIND_DISC {
            bounds = vec4<f32>(px.a.xy - px.a.z, px.a.xy + px.a.z);
        } else {
            bounds = sector_bounds(px.a.xy, px.a.z, px.a.w, px.b.x, px.b.y);
        }
        bounds = vec4<f32>(bounds.xy - pad, bounds.zw + pad);
        pixel = mix(bounds.xy, bounds.zw, corner);
    }
    var out: VsOut;
    let ndc = pixel / view.viewport_px * 2.0 - 1.0;
    out.clip = vec4<f32>(ndc.x, -ndc.y, 0.0, 1.0);
    out.pixel = pixel;
    out.kind = kind;
    out.border_px = shape.border_px;
    out.fill = shape.fill;
    out.border = shape.border;
    out.a = px.a;
    out.b = px.b;
    return out;
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    var d: f32;
    if in.kind == KIND_RECT {
        d = sd_rect(in.pixel, in.a.xy, in.a.zw, in.b.x);
    } else if in.kind == KIND_DISC {
        d = length(in.pixel - in.a.xy) - in.a.z;
    } else if in.kind == KIND_SECTOR {
        d = sd_sector(in.pixel, in.a.xy, in.a.z, in.a.w, in.b.x, in.b.y);
    } else {
        d = sd_segment(in.pixel, in.a.xy, in.a.zw, in.b.x);
    }
    let outer = coverage(d);
    if outer <= 0.0 {
        discard;
    }
    let fill = unpack4x8unorm(in.fill);
    var color = vec4<f32>(fill.rgb * fill.a, fill.a) * outer;
    if in.border_px > 0.0 {
        let inner = coverage(d + in.border_px);
        let border = unpack4x8unorm(in.border);
        color = vec4<f32>(fill.rgb * fill.a, fill.a) * inner
            + vec4<f32>(border.rgb * border.a, border.a) * (outer - inner);
    }
    if view.output_srgb_encode == 0u && color.a > 0.0 {
        // *Srgb target: the hardware encodes, so hand it linear light.
        let straight = color.rgb / color.a;
        color = vec4<f32>(srgb_to_linear(straight) * color.a, color.a);
    }
    return color;
}
