// Cushion cursors (Moreta & Telea): vertical cursors at time positions, drawn over a
// time-aligned view (the map, a bin view, the occupancy bar) as a cushion texture — a parabolic
// cushion across the cursor, lit like the blocks — whose opacity falls off logarithmically from
// its centre line: a(d) = opacity · (1 − ln(1 + k·d) / ln(1 + k)), d = |x − centre| / half width.
// Blended on top with premultiplied alpha, in instance order. Each pixel averages four samples
// across x, so narrow cursors stay smooth. The quads span the whole viewport height: the caller
// sets the viewport to the view's rectangle (several views of the same width and time mapping
// can share one uniform).
// CPU twin: crates/memscape-render/src/alloc_map/cursors.rs (`blend_cursors_cpu`).

#import "utils/u64.wgsl"
#import "utils/color.wgsl"
#import "utils/cushion.wgsl"

// Keep in sync with `CursorViewGpu` in crates/memscape-render/src/alloc_map/cursors.rs (64 bytes).
struct CursorView {
    origin_time: vec2<u32>, // (lo, hi) integer time at the left edge
    origin_frac: f32,       // its fractional part
    pixels_per_time: f32,
    viewport_width: f32,    // pixels
    width_px: f32,          // full width of a cursor in pixels
    opacity: f32,           // at the centre line, in [0, 1]
    falloff: f32,           // k > 0: larger is a sharper centre
    cushion_strength: f32,
    output_srgb_encode: u32,
    _pad0: u32,
    _pad1: u32,
    light: vec4<f32>,       // normalised light direction (xyz), the map's
}

// Keep in sync with `CursorGpu` (16 bytes).
struct Cursor {
    time: vec2<u32>,  // (lo, hi)
    frac: f32,        // fraction of a time unit added (0.5: the middle of an event)
    color: u32,       // sRGB rgba8
}

@group(0) @binding(0) var<uniform> view: CursorView;
@group(0) @binding(1) var<storage, read> cursors: array<Cursor>;

struct VertexOut {
    @builtin(position) position: vec4<f32>,
    // Pixels from the view's left edge, interpolated across the quad.
    @location(0) local_x: f32,
    @location(1) @interpolate(flat) centre_x: f32,
    @location(2) @interpolate(flat) color: vec4<f32>,
}

fn cursor_centre_px(c: Cursor) -> f32 {
    return (u64_offset_to_f32(c.time, view.origin_time) + (c.frac - view.origin_frac)) * view.pixels_per_time;
}

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32, @builtin(instance_index) instance: u32) -> VertexOut {
    let c = cursors[instance];
    let centre = cursor_centre_px(c);
    let half = 0.5 * view.width_px;
    // Whole pixels around the cursor, clamped near the viewport (a cursor far off screen must
    // not produce huge coordinates).
    let x0 = clamp(floor(centre - half), -2.0, view.viewport_width + 2.0);
    let x1 = clamp(ceil(centre + half), -2.0, view.viewport_width + 2.0);
    var corner_ids = array<u32, 6>(0u, 1u, 2u, 2u, 1u, 3u);
    let corner = corner_ids[vertex];
    let x = select(x0, x1, (corner & 1u) != 0u);
    let y = select(1.0, -1.0, (corner & 2u) != 0u);
    var out: VertexOut;
    out.position = vec4<f32>(x / view.viewport_width * 2.0 - 1.0, y, 0.0, 1.0);
    out.local_x = x;
    out.centre_x = centre;
    out.color = unpack_rgba8_srgb_to_linear(c.color);
    return out;
}

// Premultiplied (encoded rgb · a, a) of one sample at x.
fn cursor_sample(x: f32, centre: f32, color: vec3<f32>) -> vec4<f32> {
    let half = 0.5 * view.width_px;
    let d = abs(x - centre) / half;
    if d >= 1.0 {
        return vec4<f32>(0.0);
    }
    let k = view.falloff;
    let a = view.opacity * (1.0 - log(1.0 + k * d) / log(1.0 + k));
    let u = (x - centre) / view.width_px + 0.5;
    let lum = cushion_luminance(CUSHION_PARABOLIC, view.cushion_strength, vec2<f32>(u, 0.5),
        vec2<f32>(view.width_px, 1.0e6), view.light.xyz);
    var rgb = color * lum;
    if view.output_srgb_encode == 1u {
        rgb = linear_to_srgb(rgb);
    }
    return vec4<f32>(rgb * a, a);
}

@fragment
fn fs_main(in: VertexOut) -> @location(0) vec4<f32> {
    // The pixel's left edge in view pixels, from the interpolated centre.
    let left = floor(in.local_x);
    var sum = vec4<f32>(0.0);
    for (var i = 0u; i < 4u; i = i + 1u) {
        sum = sum + cursor_sample(left + (f32(i) + 0.5) * 0.25, in.centre_x, in.color.rgb);
    }
    let out = sum * 0.25;
    if out.a <= 0.0 {
        discard;
    }
    return out;
}
