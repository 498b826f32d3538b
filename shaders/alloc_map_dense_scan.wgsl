// Allocation map, dense path, pass 2: one workgroup per pixel row runs along the row through the
// difference arrays that pass 1 (alloc_map_dense.wgsl) filled, and writes the Eq. 1 sums into the
// accumulation targets that the raster pass then adds the remaining (tall) blocks to and the
// resolve pass reads, exactly as if every block had been rasterized:
//   value(x) = Σ_{x' <= x} Dv[x'] + Σ_{x' < x} S(x'),   S(x) = Σ_{x' <= x} Ds[x']
// (Ds only for the three colour channels, whose cushion luminance is piecewise linear along a row).
// Every pixel is written, so this pass also clears the targets.
//
// The row is split into SCAN_WG contiguous segments, one per invocation (a row walked by one
// invocation left a GPU mostly idle: 2,160 invocations for a 4K frame, each 3,840 dependent
// steps — ≈ 9 ms on an H100). Each invocation first sums its segment: ΣDs, ΣDv and the segment's
// own share of the slopes, Q = Σ_{x in seg} Σ_{x0 <= x' <= x} Ds[x']. A workgroup prefix sum of
// ΣDs gives the slope S entering each segment; the segment then adds n·S_in + Q to its colour
// totals, and a second prefix sum gives the values entering each segment; the second walk writes
// the pixels. All of it is 64-bit integer arithmetic (utils/fixed64.wgsl), exact and associative,
// so the picture is bit for bit the one a single walk along the row makes.

#import "utils/u64.wgsl"
#import "utils/color.wgsl"
#import "utils/fixed64.wgsl"
#import "alloc_map_common.wgsl"

// Per pixel 8 fixed-point pairs: Σf, F = Σf^α, three colour sums, three colour slopes.
// Keep in sync with PAIRS_PER_PIXEL in crates/memscape-render/src/alloc_map/dense.rs.
const PAIRS_PER_PIXEL: u32 = 8u;
// Invocations per row. Keep in sync with SCAN_WORKGROUP in dense.rs.
const SCAN_WG: u32 = 128u;

@group(0) @binding(0) var<uniform> view: AllocMapView;
@group(1) @binding(0) var<storage, read> sums: array<vec2<u32>>;
@group(1) @binding(1) var weighted_out: texture_storage_2d<rgba32float, write>;
@group(1) @binding(2) var coverage_out: texture_storage_2d<r32float, write>;

// One row's per-segment totals while they are prefix-summed (5 channels: Σf, F, colour 0..2).
var<workgroup> totals: array<array<vec2<u32>, 5>, SCAN_WG>;

// Replaces totals[t] by the sum of totals[0..t) (exclusive prefix sum, Hillis–Steele) and
// returns it. Called in uniform control flow by every invocation of the workgroup.
fn exclusive_prefix(t: u32) -> array<vec2<u32>, 5> {
    for (var off = 1u; off < SCAN_WG; off = off << 1u) {
        var add: array<vec2<u32>, 5>;
        if t >= off {
            add = totals[t - off];
        }
        workgroupBarrier();
        if t >= off {
            var mine = totals[t];
            mine[0] = fixed_add(mine[0], add[0]);
            mine[1] = fixed_add(mine[1], add[1]);
            mine[2] = fixed_add(mine[2], add[2]);
            mine[3] = fixed_add(mine[3], add[3]);
            mine[4] = fixed_add(mine[4], add[4]);
            totals[t] = mine;
        }
        workgroupBarrier();
    }
    var before: array<vec2<u32>, 5>;
    if t > 0u {
        before = totals[t - 1u];
    }
    workgroupBarrier();
    return before;
}

@compute @workgroup_size(SCAN_WG)
fn cs_scan(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let width = u32(view.viewport_px.x);
    let height = u32(view.viewport_px.y);
    // One workgroup per row: the whole group leaves together, before any barrier.
    let y = group.x;
    if y >= height {
        return;
    }
    let t = local.x;
    let seg = (width + SCAN_WG - 1u) / SCAN_WG;
    let x0 = min(t * seg, width);
    let x1 = min(x0 + seg, width);

    // Walk 1: the segment's own sums. Unrolled by hand: constant indices keep the arrays in
    // registers (llvmpipe).
    var dv: array<vec2<u32>, 5>;
    var ds: array<vec2<u32>, 3>;
    var q: array<vec2<u32>, 3>;
    for (var x = x0; x < x1; x++) {
        let base = (y * width + x) * PAIRS_PER_PIXEL;
        dv[0] = fixed_add(dv[0], fixed_from_stored(sums[base]));
        dv[1] = fixed_add(dv[1], fixed_from_stored(sums[base + 1u]));
        dv[2] = fixed_add(dv[2], fixed_from_stored(sums[base + 2u]));
        dv[3] = fixed_add(dv[3], fixed_from_stored(sums[base + 3u]));
        dv[4] = fixed_add(dv[4], fixed_from_stored(sums[base + 4u]));
        ds[0] = fixed_add(ds[0], fixed_from_stored(sums[base + 5u]));
        ds[1] = fixed_add(ds[1], fixed_from_stored(sums[base + 6u]));
        ds[2] = fixed_add(ds[2], fixed_from_stored(sums[base + 7u]));
        q[0] = fixed_add(q[0], ds[0]);
        q[1] = fixed_add(q[1], ds[1]);
        q[2] = fixed_add(q[2], ds[2]);
    }

    // The slope entering the segment: the prefix sum of the segments' ΣDs.
    var slopes: array<vec2<u32>, 5>;
    slopes[2] = ds[0];
    slopes[3] = ds[1];
    slopes[4] = ds[2];
    totals[t] = slopes;
    workgroupBarrier();
    let s_in = exclusive_prefix(t);

    // The values entering the segment: the prefix sum of Σ (Dv[x] + S(x)) over the segments.
    let n = x1 - x0;
    var own: array<vec2<u32>, 5>;
    own[0] = dv[0];
    own[1] = dv[1];
    own[2] = fixed_add(fixed_add(dv[2], fixed_mul_small(s_in[2], n)), q[0]);
    own[3] = fixed_add(fixed_add(dv[3], fixed_mul_small(s_in[3], n)), q[1]);
    own[4] = fixed_add(fixed_add(dv[4], fixed_mul_small(s_in[4], n)), q[2]);
    totals[t] = own;
    workgroupBarrier();
    var v = exclusive_prefix(t);

    // Walk 2: the pixels, exactly as one walk along the whole row would make them.
    var s: array<vec2<u32>, 3>;
    s[0] = s_in[2];
    s[1] = s_in[3];
    s[2] = s_in[4];
    for (var x = x0; x < x1; x++) {
        let base = (y * width + x) * PAIRS_PER_PIXEL;
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
