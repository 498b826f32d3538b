// Allocation map, pass 2: Eq. 1 of Moreta & Telea per pixel, from the accumulated sums.
//   F = Σ f_i^α,  B = (1 − Σ f_i)^α,  C = (F · c(Σ f_i^α a_i / F) + B · c_B) / (F + B)
// Drawn as one full-screen triangle into the caller's pass (egui's, or the offscreen target).
// CPU twin: crates/memscape-render/src/alloc_map/cpu_reference.rs (`resolve_pixel`).

#import "utils/u64.wgsl"
#import "utils/color.wgsl"
#import "alloc_map_common.wgsl"

// Coverage sums within this distance of 1 count as fully covered: f32 round-off over many
// blocks must not leave a sliver of background "hanging in the air" under a low α.
const FULL_COVERAGE_EPSILON: f32 = 1.0 / 1024.0;

@group(0) @binding(0) var<uniform> view: AllocMapView;
@group(0) @binding(1) var weighted_sums: texture_2d<f32>;
@group(0) @binding(2) var coverage_sums: texture_2d<f32>;

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32) -> @builtin(position) vec4<f32> {
    let uv = vec2<f32>(f32((vertex << 1u) & 2u), f32(vertex & 2u));
    return vec4<f32>(uv * vec2<f32>(2.0, -2.0) + vec2<f32>(-1.0, 1.0), 0.0, 1.0);
}

fn resolve(acc: vec4<f32>, coverage: f32) -> vec3<f32> {
    let uncovered = select(1.0 - coverage, 0.0, coverage >= 1.0 - FULL_COVERAGE_EPSILON);
    let f_sum = acc.a;
    let b = pow(max(uncovered, 0.0), view.alpha);
    if f_sum + b <= 0.0 {
        return view.background.rgb;
    }
    var c = acc.rgb;
    if view.color_mode == COLOR_MODE_QUANTITATIVE {
        if f_sum > 0.0 {
            c = blue_red(acc.r / f_sum * view.value_scale) * (acc.g / f_sum) * f_sum;
        } else {
            c = vec3<f32>(0.0);
        }
    }
    return (c + b * view.background.rgb) / (f_sum + b);
}

@fragment
fn fs_main(@builtin(position) position: vec4<f32>) -> @location(0) vec4<f32> {
    let p = vec2<i32>(floor(position.xy - view.resolve_origin_px));
    let acc = textureLoad(weighted_sums, p, 0);
    let coverage = textureLoad(coverage_sums, p, 0).r;
    var rgb = resolve(acc, coverage);
    if view.output_srgb_encode == 1u {
        rgb = linear_to_srgb(rgb);
    }
    return vec4<f32>(rgb, 1.0);
}
