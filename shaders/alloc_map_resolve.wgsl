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
// A level-of-detail level's cells summed on the GPU (lod_cells.wgsl): per pixel of the view,
// row-major, 5 f32 (the weighted sums, then the coverage). Bound only for `fs_with_cells`.
@group(0) @binding(3) var<storage, read> cell_sums: array<f32>;

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

fn encoded(rgb: vec3<f32>) -> vec4<f32> {
    if view.output_srgb_encode == 1u {
        return vec4<f32>(linear_to_srgb(rgb), 1.0);
    }
    return vec4<f32>(rgb, 1.0);
}

@fragment
fn fs_main(@builtin(position) position: vec4<f32>) -> @location(0) vec4<f32> {
    let p = vec2<i32>(floor(position.xy - view.resolve_origin_px));
    let acc = textureLoad(weighted_sums, p, 0);
    let coverage = textureLoad(coverage_sums, p, 0).r;
    return encoded(resolve(acc, coverage));
}

// `fs_main` with the cells' sums added to the accumulated ones first: the same f32 additions,
// target + cell, that lod_cells_add.wgsl's additive blending made into 32-bit float targets
// (lod_cells.rs uses this entry only there), without that full-screen pass's reads and writes
// of both targets.
@fragment
fn fs_with_cells(@builtin(position) position: vec4<f32>) -> @location(0) vec4<f32> {
    let p = vec2<i32>(floor(position.xy - view.resolve_origin_px));
    let width = u32(view.viewport_px.x);
    let height = u32(view.viewport_px.y);
    let i = (min(u32(max(p.y, 0)), height - 1u) * width + min(u32(max(p.x, 0)), width - 1u)) * 5u;
    let cell = vec4<f32>(cell_sums[i], cell_sums[i + 1u], cell_sums[i + 2u], cell_sums[i + 3u]);
    let acc = textureLoad(weighted_sums, p, 0) + cell;
    let coverage = textureLoad(coverage_sums, p, 0).r + cell_sums[i + 4u];
    return encoded(resolve(acc, coverage));
}
