// Allocation map, dense path, pass 2: one invocation per pixel row runs along the row through the
// difference arrays that pass 1 (alloc_map_dense.wgsl) filled, and writes the Eq. 1 sums into the
// accumulation targets that the raster pass then adds the remaining (tall) blocks to and the
// resolve pass reads, exactly as if every block had been rasterized:
//   value(x) = Σ_{x' <= x} Dv[x'] + Σ_{x' < x} S(x'),   S(x) = Σ_{x' <= x} Ds[x']
// (Ds only for the three colour channels, whose cushion luminance is piecewise linear along a row).
// Every pixel is written, so this pass also clears the targets.

#import "utils/u64.wgsl"
#import "utils/color.wgsl"
#import "utils/fixed64.wgsl"
#import "alloc_map_common.wgsl"

// Per pixel 8 fixed-point pairs: Σf, F = Σf^α, three colour sums, three colour slopes.
// Keep in sync with PAIRS_PER_PIXEL in crates/memscape-render/src/alloc_map/dense.rs.
const PAIRS_PER_PIXEL: u32 = 8u;

@group(0) @binding(0) var<uniform> view: AllocMapView;
@group(1) @binding(0) var<storage, read> sums: array<vec2<u32>>;
@group(1) @binding(1) var weighted_out: texture_storage_2d<rgba32float, write>;
@group(1) @binding(2) var coverage_out: texture_storage_2d<r32float, write>;

@compute @workgroup_size(64)
fn cs_scan(@builtin(global_invocation_id) id: vec3<u32>) {
    let width = u32(view.viewport_px.x);
    let height = u32(view.viewport_px.y);
    let y = id.x;
    if y >= height {
        return;
    }
    var v: array<vec2<u32>, 5>;
    var s: array<vec2<u32>, 3>;
    for (var x = 0u; x < width; x++) {
        let base = (y * width + x) * PAIRS_PER_PIXEL;
        // Unrolled by hand: constant indices keep the arrays in registers (llvmpipe).
        v[0] = fixed_add(v[0], fixed_from_stored(sums[base]));
        v[1] = fixed_add(v[1], fixed_from_stored(sums[base + 1u]));
        v[2] = fixed_add(v[2], fixed_from_stored(sums[base + 2u]));
        v[3] = fixed_add(v[3], fixed_from_stored(sums[base + 3u]));
        v[4] = fixed_add(v[4], fixed_from_stored(sums[base + 4u]));
        let p = vec2<i32>(i32(x), i32(y));
        textureStore(weighted_out, p, vec4<f32>(fixed_to_f32(v[2]), fixed_to_f32(v[3]), fixed_to_f32(v[4]), fixed_to_f32(v[1])));
        textureStore(coverage_out, p, vec4<f32>(fixed_to_f32(v[0]), 0.0, 0.0, 0.0));
        s[0] = fixed_add(s[0], fixed_from_stored(sums[base + 5u]));
        s[1] = fixed_add(s[1], fixed_from_stored(sums[base + 6u]));
        s[2] = fixed_add(s[2], fixed_from_stored(sums[base + 7u]));
        v[2] = fixed_add(v[2], s[0]);
        v[3] = fixed_add(v[3], s[1]);
        v[4] = fixed_add(v[4], s[2]);
    }
}
