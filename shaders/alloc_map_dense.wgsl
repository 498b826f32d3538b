// Allocation map, dense path, pass 1: one invocation per block adds the block's Eq. 1 sums to
// per-row difference arrays in 64-bit fixed point (utils/fixed64.wgsl), so that a block costs
// O(rows it touches), not O(pixels it covers). Pass 2 (alloc_map_dense_scan.wgsl) runs along
// each row and writes the sums into the accumulation targets.
//
// Inside a pixel row, a block's coverage of its interior columns is f = f_y (f_x = 1): F = f_y^α
// and Σf are constant there, and the colour sums w·c·L follow the cushion luminance L, which
// along a row is constant (none), piecewise constant (plateau) or piecewise linear between the
// knots u = k / CUSHION_KNOTS (parabolic, see utils/cushion.wgsl). Each channel of the row is
// a sequence of "set" operations: at column x the value becomes V and the per-column slope S,
// written as Dv[x] += V - (value reached at x), Ds[x] += S - (previous slope), computed in
// integers so that everything cancels exactly after the block. The block's partly covered end
// columns get their exact per-pixel values, as the fragment shader computes them; so do all
// columns of rows whose fully covered part is shorter than CHAIN_MAX columns (parabolic; 4
// otherwise), where that is cheaper than the pieces.
//
// Blocks taller than DENSE_MAX_ROWS rows, and blocks of several rows narrower than
// DENSE_MIN_COLUMNS, are few when zoomed out and cheap to rasterize (little vertex work per pixel,
// and few pixels per row): their chunk-local indices go to the raster list,
// drawn by alloc_map_accumulate.wgsl's vs_listed with an indirect draw. Blocks entirely outside
// the view are dropped here (culling before the vertex stage).
//
// CPU twin: the picture is defined by crates/memscape-render/src/alloc_map/cpu_reference.rs;
// `fixed` in dense.rs mirrors this pass's fixed-point arithmetic and row bookkeeping
// (`add_fixed`, `set_at`) for its unit tests.

#import "utils/u64.wgsl"
#import "utils/color.wgsl"
#import "utils/cushion.wgsl"
#import "utils/fixed64.wgsl"
#import "alloc_map_common.wgsl"

// Keep in sync with `EDGE_SLACK` in alloc_map_accumulate.wgsl.
const EDGE_SLACK: f32 = 1.0 / 256.0;
// Keep in sync with DENSE_MAX_ROWS, CHAIN_MAX and PAIRS_PER_PIXEL in dense.rs. The two
// raster-list thresholds are pipeline-overridable (dense.rs, `raster_list_thresholds`).
override DENSE_MAX_ROWS: i32 = 16;
// Blocks of several rows narrower than this are rasterized too: per row they would cost the
// dense pass more than their few fragments (the occupancy bar's intervals, tall narrow blocks).
override DENSE_MIN_COLUMNS: f32 = 16.0;
const CHAIN_MAX: i32 = 12;
const PAIRS_PER_PIXEL: u32 = 8u;
const WORKGROUP_SIZE: u32 = 64u;

@group(0) @binding(0) var<uniform> view: AllocMapView;
@group(1) @binding(0) var<storage, read> blocks: array<AllocBlock>;
@group(1) @binding(1) var<storage, read> times: array<BlockTime>;
@group(1) @binding(2) var<uniform> chunk: ChunkInfo;
@group(1) @binding(3) var<storage, read> selection: array<u32>;
// Per pixel PAIRS_PER_PIXEL (lo, hi) pairs: Dv of Σf, F, colour 0..2, then Ds of colour 0..2.
@group(2) @binding(0) var<storage, read_write> accum: array<atomic<u32>>;
// Header: per chunk the indirect draw arguments (vertex count, instance count, first vertex,
// first instance); then per chunk, from chunk.base, the chunk-local indices to rasterize.
@group(3) @binding(0) var<storage, read_write> raster: array<atomic<u32>>;

// What one block adds per pixel: w = f^α, Σf += f, F += w, colour k += w·(a_k + b_k·L).
struct Shade {
    c: vec4<f32>,       // geometry clamped near the viewport (coverage)
    origin: vec2<f32>,  // unclamped top-left corner (cushion u, v)
    size: vec2<f32>,    // unclamped size in pixels
    a: vec3<f32>,
    b: vec3<f32>,
}

struct Values {
    v: array<vec2<u32>, 5>,  // Σf, F, colour 0..2 in fixed point
    s: array<vec2<u32>, 3>,  // per-column slope of colour 0..2
}

// A channel's (value, slope) as the scan will have it at column `pos`.
struct RowState {
    r: array<vec2<u32>, 5>,
    s: array<vec2<u32>, 3>,
    pos: i32,
}

// Adds a fixed-point value to a stored pair (value = hi·2^32 + i32(lo), utils/fixed64.wgsl): the
// low words add as wrapping i32s; where one addition overflows (both operands of one sign, the
// sum of the other), the high word takes the ±1 carry. The pair's total is then exact whatever
// order the atomics land in, and a small value needs no second atomic.
fn add_fixed(word: u32, value: vec2<u32>) {
    let v = fixed_to_stored(value);
    var hi = v.y;
    if v.x != 0u {
        let old = atomicAdd(&accum[word], v.x);
        let sum = old + v.x;
        if ((~(old ^ v.x)) & (old ^ sum) & 0x80000000u) != 0u {
            hi += select(1u, 0xffffffffu, (v.x & 0x80000000u) != 0u);
        }
    }
    if hi != 0u {
        atomicAdd(&accum[word + 1u], hi);
    }
}

// Column x's value becomes `to.v` and the slope after it `to.s`.
fn set_at(st: ptr<function, RowState>, row_pair: u32, x: i32, to: Values) {
    if x >= i32(view.viewport_px.x) {
        return;
    }
    let n = u32(x - (*st).pos);
    let word = (row_pair + u32(x) * PAIRS_PER_PIXEL) * 2u;
    // Unrolled by hand: constant indices keep the small arrays in registers (llvmpipe).
    add_fixed(word, fixed_sub(to.v[0], (*st).r[0]));
    add_fixed(word + 2u, fixed_sub(to.v[1], (*st).r[1]));
    add_fixed(word + 4u, fixed_sub(to.v[2], fixed_add((*st).r[2], fixed_mul_small((*st).s[0], n))));
    add_fixed(word + 6u, fixed_sub(to.v[3], fixed_add((*st).r[3], fixed_mul_small((*st).s[1], n))));
    add_fixed(word + 8u, fixed_sub(to.v[4], fixed_add((*st).r[4], fixed_mul_small((*st).s[2], n))));
    add_fixed(word + 10u, fixed_sub(to.s[0], (*st).s[0]));
    add_fixed(word + 12u, fixed_sub(to.s[1], (*st).s[1]));
    add_fixed(word + 14u, fixed_sub(to.s[2], (*st).s[2]));
    (*st).r = to.v;
    (*st).s = to.s;
    (*st).pos = x;
}

// Column x's values become `to.v` while every colour slope is zero (rows added pixel by pixel,
// exact end columns, pieces of constant luminance): no slope channels to touch.
fn set_value_at(st: ptr<function, RowState>, row_pair: u32, x: i32, to: Values) {
    if x >= i32(view.viewport_px.x) {
        return;
    }
    let word = (row_pair + u32(x) * PAIRS_PER_PIXEL) * 2u;
    add_fixed(word, fixed_sub(to.v[0], (*st).r[0]));
    add_fixed(word + 2u, fixed_sub(to.v[1], (*st).r[1]));
    add_fixed(word + 4u, fixed_sub(to.v[2], (*st).r[2]));
    add_fixed(word + 6u, fixed_sub(to.v[3], (*st).r[3]));
    add_fixed(word + 8u, fixed_sub(to.v[4], (*st).r[4]));
    (*st).r = to.v;
    (*st).pos = x;
}

fn u_at(sh: Shade, x: i32) -> f32 {
    return clamp((f32(x) + 0.5 - sh.origin.x) / max(sh.size.x, 1e-6), 0.0, 1.0);
}

// Which piece of the row's luminance function holds u: a new piece starts wherever L is not
// continued linearly. Matches the branches of block_cushion_luminance.
fn segment_of(u: f32) -> i32 {
    if view.cushion_kind == CUSHION_PARABOLIC && view.cushion_strength > 0.0 {
        return i32(cushion_knot_interval(u));
    }
    if view.cushion_kind == CUSHION_PLATEAU && view.cushion_strength > 0.0 {
        if u < PLATEAU_BEVEL {
            return 0;
        }
        if u > 1.0 - PLATEAU_BEVEL {
            return 2;
        }
        return 1;
    }
    return 0;
}

fn segment_start_u(j: i32) -> f32 {
    if view.cushion_kind == CUSHION_PLATEAU {
        return select(PLATEAU_BEVEL, 1.0 - PLATEAU_BEVEL, j == 2);
    }
    return f32(j) / CUSHION_KNOTS;
}

// The first column in [lo, hi + 1] whose piece is at least j (pieces grow with the column).
fn segment_start(sh: Shade, j: i32, lo: i32, hi: i32) -> i32 {
    let guess = sh.origin.x + segment_start_u(j) * sh.size.x - 0.5;
    var x = i32(clamp(ceil(guess), f32(lo), f32(hi + 1)));
    for (var i = 0; i < 16; i++) {
        if x > lo && segment_of(u_at(sh, x - 1)) >= j {
            x -= 1;
        } else {
            break;
        }
    }
    for (var i = 0; i < 16; i++) {
        if x <= hi && segment_of(u_at(sh, x)) < j {
            x += 1;
        } else {
            break;
        }
    }
    return x;
}

fn luminance(sh: Shade, u: f32, v: f32) -> f32 {
    return block_cushion_luminance(view.cushion_kind, view.cushion_strength, vec2<f32>(u, v), sh.size, view.light.xyz);
}

fn values_of(sh: Shade, f: f32, w: f32, lum: f32) -> Values {
    var out: Values;
    if f <= 0.0 {
        return out;
    }
    let c = w * (sh.a + sh.b * lum);
    out.v = array<vec2<u32>, 5>(to_fixed(f), to_fixed(w), to_fixed(c.x), to_fixed(c.y), to_fixed(c.z));
    return out;
}

// The exact per-pixel values, as alloc_map_accumulate.wgsl's fs_main computes them.
fn pixel_values(sh: Shade, x: i32, y: i32, v: f32) -> Values {
    let f = box_coverage(sh.c, vec2<f32>(f32(x), f32(y)));
    if f <= 0.0 {
        var none: Values;
        return none;
    }
    return values_of(sh, f, pow(f, view.alpha), luminance(sh, u_at(sh, x), v));
}

// Coverage of row y by the block where it spans the whole pixel horizontally (f_x = 1).
fn row_coverage(c: vec4<f32>, y: f32) -> f32 {
    let cut_above = max((y - c.y) + c.w, 0.0);
    let cut_below = max(c.y - y - 1.0, 0.0);
    return clamp(c.w - cut_above - cut_below, 0.0, min(c.w, 1.0));
}

fn slopes(sh: Shade, w: f32, dl: f32) -> array<vec2<u32>, 3> {
    let ds = w * sh.b * dl;
    return array<vec2<u32>, 3>(to_fixed(ds.x), to_fixed(ds.y), to_fixed(ds.z));
}

// Columns [xa, xb] of row y; [lo, hi] are the columns the block covers horizontally in full.
fn add_row(sh: Shade, y: i32, xa: i32, xb: i32, lo: i32, hi: i32) {
    let fy = row_coverage(sh.c, f32(y));
    if fy <= 0.0 {
        return;
    }
    let v = clamp((f32(y) + 0.5 - sh.origin.y) / max(sh.size.y, 1e-6), 0.0, 1.0);
    let row_pair = u32(y) * u32(view.viewport_px.x) * PAIRS_PER_PIXEL;
    var st: RowState;
    st.pos = xa;
    var none: Values;
    let parabolic = view.cushion_kind == CUSHION_PARABOLIC && view.cushion_strength > 0.0;
    // Rows this short are cheaper pixel by pixel than piece by piece.
    let chain_max = select(4, CHAIN_MAX, parabolic);
    if hi - lo + 1 < chain_max {
        for (var x = xa; x <= xb; x++) {
            set_value_at(&st, row_pair, x, pixel_values(sh, x, y, v));
        }
        set_value_at(&st, row_pair, xb + 1, none);
        return;
    }
    for (var x = xa; x < lo; x++) {
        set_value_at(&st, row_pair, x, pixel_values(sh, x, y, v));
    }
    // Interior columns [lo, hi]: f = f_y; the luminance piece by piece.
    let w = pow(fy, view.alpha);
    let u_lo = u_at(sh, lo);
    if parabolic {
        // Linear between knots: at the first column of each piece its exact value (the knot lies
        // between two column centres) and its slope per column, (L1 - L0) · knots per u · u per
        // column. The knots' luminances are evaluated once each.
        let per_column = CUSHION_KNOTS / max(sh.size.x, 1e-6);
        let j_lo = i32(cushion_knot_interval(u_lo));
        let j_hi = i32(cushion_knot_interval(u_at(sh, hi)));
        var l1 = luminance(sh, f32(j_lo) / CUSHION_KNOTS, v);
        for (var j = j_lo; j <= j_hi; j++) {
            var x = lo;
            if j > j_lo {
                x = segment_start(sh, j, lo, hi);
            }
            let l0 = l1;
            l1 = luminance(sh, f32(j + 1) / CUSHION_KNOTS, v);
            // As block_cushion_luminance interpolates.
            let lum = l0 + (l1 - l0) * (u_at(sh, x) * CUSHION_KNOTS - f32(j));
            var next = values_of(sh, fy, w, lum);
            next.s = slopes(sh, w, (l1 - l0) * per_column);
            set_at(&st, row_pair, x, next);
        }
    } else {
        set_value_at(&st, row_pair, lo, values_of(sh, fy, w, luminance(sh, u_lo, v)));
        let j_lo = segment_of(u_lo);
        let j_hi = segment_of(u_at(sh, hi));
        for (var j = j_lo + 1; j <= j_hi; j++) {
            let x = segment_start(sh, j, lo, hi);
            set_value_at(&st, row_pair, x, values_of(sh, fy, w, luminance(sh, u_at(sh, x), v)));
        }
    }
    // After the parabolic pieces, the first column set also sets the slopes back to zero.
    var sloped = parabolic;
    for (var x = hi + 1; x <= xb; x++) {
        if sloped {
            set_at(&st, row_pair, x, pixel_values(sh, x, y, v));
        } else {
            set_value_at(&st, row_pair, x, pixel_values(sh, x, y, v));
        }
        sloped = false;
    }
    if sloped {
        set_at(&st, row_pair, xb + 1, none);
    } else {
        set_value_at(&st, row_pair, xb + 1, none);
    }
}

// Each invocation takes BLOCKS_PER_INVOCATION blocks, a whole dispatch apart (neighbouring
// invocations read neighbouring blocks): fewer workgroups, whose start-up cost dominates for
// blocks culled at once (lavapipe). Keep in sync with BLOCKS_PER_INVOCATION in dense.rs.
const BLOCKS_PER_INVOCATION: u32 = 16u;

@compute @workgroup_size(64)
fn cs_blocks(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let first = max(view.range_start, chunk.base) - chunk.base;
    let invocation = (group.y * groups.x + group.x) * WORKGROUP_SIZE + lane;
    let stride = groups.x * groups.y * WORKGROUP_SIZE;
    for (var k = 0u; k < BLOCKS_PER_INVOCATION; k++) {
        let local = first + k * stride + invocation;
        if local >= chunk.count || chunk.base + local >= view.range_end {
            return;
        }
        add_block(local);
    }
}

fn add_block(local: u32) {
    let b = blocks[local];
    let g = block_geometry_px(view, b, times[local]);
    let c = clamp_geometry(g, view.viewport_px, 2.0);
    // The pixels the rasterizer would visit (alloc_map_accumulate.wgsl), clipped to the view.
    let q0 = floor(vec2<f32>(c.x, c.y - c.w) - EDGE_SLACK);
    let q1 = max(ceil(vec2<f32>(c.x + c.z, c.y) + EDGE_SLACK), q0 + 1.0);
    let lo = max(q0, vec2<f32>(0.0));
    let hi = min(q1, view.viewport_px) - 1.0;
    if hi.x < lo.x || hi.y < lo.y {
        return;
    }
    let rows = hi.y - lo.y + 1.0;
    if rows > f32(DENSE_MAX_ROWS) || (rows > 1.0 && hi.x - lo.x + 1.0 < DENSE_MIN_COLUMNS) {
        let slot = atomicAdd(&raster[chunk.index * 4u + 1u], 1u);
        atomicStore(&raster[chunk.list_offset + chunk.base + slot], local);
        return;
    }
    var selected = true;
    if view.selection_mode != SELECTION_OFF {
        let i = chunk.base + local;
        selected = ((selection[i >> 5u] >> (i & 31u)) & 1u) != 0u;
    }
    let color = shaded_block_color(view, b, selected);
    var sh: Shade;
    sh.c = c;
    sh.origin = vec2<f32>(g.x, g.y - g.w);
    sh.size = g.zw;
    if view.color_mode == COLOR_MODE_QUANTITATIVE {
        sh.a = vec3<f32>(b.attr, 0.0, 0.0);
        sh.b = vec3<f32>(0.0, 1.0, 0.0);
    } else {
        sh.a = vec3<f32>(0.0);
        sh.b = color.rgb;
    }
    // The columns covered in full: from the first pixel edge after the block's start to the last
    // one before its end; the others get their exact per-pixel values.
    let full_lo = max(i32(floor(c.x)) + 1, i32(lo.x));
    let full_hi = min(i32(ceil(c.x + c.z)) - 2, i32(hi.x));
    for (var y = i32(lo.y); y <= i32(hi.y); y++) {
        add_row(sh, y, i32(lo.x), i32(hi.x), full_lo, full_hi);
    }
}
