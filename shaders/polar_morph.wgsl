// Records of a reference trace as points and arcs in polar coordinates, morphing between two
// circle-valued parameterizations (Choudhury et al.): each record has one radius (its time or
// its place on the cycle) and two angles θa, θb; the vertex shader puts it at
// θa + t·shortest(θa → θb), so the CPU uploads once and then sends only t. Arcs join temporal
// neighbours and are interpolated in polar coordinates (the short way round), cut into
// `arc_subdivisions` straight pieces expanded to quads here.
//
// Angles are radians clockwise from 12 o'clock. CPU twin:
// crates/memscape-render/src/polar_morph/cpu_reference.rs.

#import "utils/color.wgsl"
#import "utils/sdf.wgsl"

// Keep in sync with PolarMorphViewGpu in crates/memscape-render/src/polar_morph/gpu.rs.
struct MorphView {
    center_px: vec2<f32>,
    viewport_px: vec2<f32>,
    radius_px: f32,
    // Eased morph parameter in [0, 1].
    t: f32,
    point_radius_px: f32,
    arc_width_px: f32,
    arc_subdivisions: u32,
    output_srgb_encode: u32,
    _pad: vec2<u32>,
};

@group(0) @binding(0) var<uniform> view: MorphView;

// Shortest signed turn from a to b, in (-π, π].
fn turn(a: f32, b: f32) -> f32 {
    let d = b - a;
    return d - 2.0 * PI * ceil((d - PI) / (2.0 * PI));
}

fn angle_at(theta_a: f32, theta_b: f32) -> f32 {
    return theta_a + turn(theta_a, theta_b) * view.t;
}

fn polar_px(r: f32, theta: f32) -> vec2<f32> {
    let a = theta - 0.5 * PI;
    return view.center_px + vec2<f32>(cos(a), sin(a)) * r * view.radius_px;
}

fn clip_of(pixel: vec2<f32>) -> vec4<f32> {
    let ndc = pixel / view.viewport_px * 2.0 - 1.0;
    return vec4<f32>(ndc.x, -ndc.y, 0.0, 1.0);
}

fn premultiplied(packed: u32, cover: f32) -> vec4<f32> {
    let c = unpack4x8unorm(packed);
    var out = vec4<f32>(c.rgb * c.a, c.a) * cover;
    if view.output_srgb_encode == 0u && out.a > 0.0 {
        out = vec4<f32>(srgb_to_linear(out.rgb / out.a) * out.a, out.a);
    }
    return out;
}

// ---- points ----

// Keep in sync with PolarPointGpu.
struct PointIn {
    @location(0) r: f32,
    @location(1) theta_a: f32,
    @location(2) theta_b: f32,
    @location(3) color: u32,
};

struct PointOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) pixel: vec2<f32>,
    @location(1) @interpolate(flat) center: vec2<f32>,
    @location(2) @interpolate(flat) color: u32,
};

@vertex
fn vs_point(@builtin(vertex_index) vertex: u32, p: PointIn) -> PointOut {
    let c = polar_px(p.r, angle_at(p.theta_a, p.theta_b));
    let corner = vec2<f32>(f32(vertex & 1u), f32((vertex >> 1u) & 1u)) * 2.0 - 1.0;
    let pixel = c + corner * (view.point_radius_px + 1.5);
    var out: PointOut;
    out.clip = clip_of(pixel);
    out.pixel = pixel;
    out.center = c;
    out.color = p.color;
    return out;
}

@fragment
fn fs_point(in: PointOut) -> @location(0) vec4<f32> {
    let cover = coverage(length(in.pixel - in.center) - view.point_radius_px);
    if cover <= 0.0 {
        discard;
    }
    return premultiplied(in.color, cover);
}

// ---- arcs ----

// Keep in sync with PolarArcGpu.
struct ArcIn {
    @location(0) from_r_theta: vec3<f32>, // r, θa, θb of the earlier record
    @location(1) to_r_theta: vec3<f32>,
    @location(2) color: u32,
};

struct ArcOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) pixel: vec2<f32>,
    @location(1) @interpolate(flat) a: vec2<f32>,
    @location(2) @interpolate(flat) b: vec2<f32>,
    @location(3) @interpolate(flat) color: u32,
};

// Point s ∈ [0, 1] along the arc, at the current t.
fn arc_point(arc: ArcIn, s: f32) -> vec2<f32> {
    let th0 = angle_at(arc.from_r_theta.y, arc.from_r_theta.z);
    let th1 = angle_at(arc.to_r_theta.y, arc.to_r_theta.z);
    let r = mix(arc.from_r_theta.x, arc.to_r_theta.x, s);
    return polar_px(r, th0 + turn(th0, th1) * s);
}

@vertex
fn vs_arc(@builtin(vertex_index) vertex: u32, arc: ArcIn) -> ArcOut {
    let n = max(view.arc_subdivisions, 1u);
    let piece = min(vertex / 6u, n - 1u);
    // Two triangles per piece: corners (0,0) (1,0) (0,1) (0,1) (1,0) (1,1).
    let corners = array<vec2<f32>, 6>(
        vec2<f32>(0.0, 0.0), vec2<f32>(1.0, 0.0), vec2<f32>(0.0, 1.0),
        vec2<f32>(0.0, 1.0), vec2<f32>(1.0, 0.0), vec2<f32>(1.0, 1.0),
    );
    let corner = corners[vertex % 6u];
    let a = arc_point(arc, f32(piece) / f32(n));
    let b = arc_point(arc, f32(piece + 1u) / f32(n));
    let len = length(b - a);
    var dir = vec2<f32>(1.0, 0.0);
    if len > 1e-6 {
        dir = (b - a) / len;
    }
    let normal = vec2<f32>(-dir.y, dir.x);
    let hw = 0.5 * view.arc_width_px + 1.5;
    let pixel = a + dir * mix(-hw, len + hw, corner.x) + normal * mix(-hw, hw, corner.y);
    var out: ArcOut;
    out.clip = clip_of(pixel);
    out.pixel = pixel;
    out.a = a;
    out.b = b;
    out.color = arc.color;
    return out;
}

@fragment
fn fs_arc(in: ArcOut) -> @location(0) vec4<f32> {
    let cover = coverage(sd_segment(in.pixel, in.a, in.b, 0.5 * view.arc_width_px));
    if cover <= 0.0 {
        discard;
    }
    return premultiplied(in.color, cover);
}
