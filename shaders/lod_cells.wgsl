// The Eq. 1 sums of a level-of-detail level's cells (memscape-lod's `resolve.rs`, `add_cell`,
// on the GPU): one invocation per cell of the view, each spreading its area buckets over the
// pixels its blocks may reach exactly as the CPU resolve does (profiles, joint mask, the
// centres of cells of few blocks), added into per-pixel f32 sums with compare-exchange loops
// (WGSL has no float atomics). Pixel positions are local to an integer pixel origin per column
// and per row (computed in f64 on the CPU): in f32 a position near x = 3840 is off by 2.4e-4 px,
// and at α = 0.1 a sliver of that size would weigh 0.43 of a block.
//
// Layouts (keep in sync with memscape-lod's `format.rs` and memscape-render's `lod_cells.rs`):
// a cell is 24 words (`CellRec`, 96 bytes), a bucket 4 words (`BucketRec`, 16 bytes).

struct CellsParams {
    rx: f32,
    ry: f32,
    alpha: f32,
    // 0: categorical, 1: quantitative.
    mode: u32,
    width: u32,
    height: u32,
    // Cells of this dispatch and the first one's position among the view's cells; the view's
    // first cell's index in this chunk's buffer (wrapping: it may lie in an earlier chunk).
    n_cells: u32,
    view_first: u32,
    chunk_delta: u32,
    n_columns: u32,
    // The view's first row (u64) and how many rows the row table holds.
    ky0_lo: u32,
    ky0_hi: u32,
    rows: u32,
    // Low word of the chunk's first bucket number (bucket numbers within a chunk differ by
    // less than 2^32).
    bucket_base: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> params: CellsParams;
@group(0) @binding(1) var<storage, read> cells: array<u32>;
@group(0) @binding(2) var<storage, read> buckets: array<u32>;
// Per column of the view: (its first cell's position among the view's cells, that cell's index
// relative to the view's first cell, pixel origin (i32 bits), the column's left edge minus that
// origin (f32 bits)) (memscape-lod's `gpu_plan.rs`).
@group(0) @binding(3) var<storage, read> columns: array<vec4<u32>>;
// Per row ky0 + i: (pixel origin (i32 bits), the row's bottom edge minus it (f32 bits)).
@group(0) @binding(4) var<storage, read> rows: array<vec2<u32>>;
// Per pixel (row-major, row 0 at the top) 5 f32 sums as bits: acc (4) and coverage.
@group(0) @binding(5) var<storage, read_write> sums: array<atomic<u32>>;

const CELL_WORDS: u32 = 24u;
// `profile_weights`' `part_sel`: every slice summed; the spot slices cut by a pixel edge left
// out (`AxisCell::split_spots`); below 8, only quarter `part_sel % 4` of spot slice
// `part_sel / 4`, where that slice is cut (`SplitPart`).
const SPLIT_NONE: u32 = 0xffffffffu;
const SPLIT_REST: u32 = 0xfffffffeu;
const PROFILE_BINS: u32 = 16u;
const FEW_BLOCKS: f32 = 16.0;
const FEW_BLOCKS_FINE: f32 = 8.0;
const MAX_BUCKETS: u32 = 256u;
// `format::SPOT_LINE_STEPS`.
const SPOT_LINE_STEPS: u32 = 1024u;

fn add_f32(i: u32, v: f32) {
    if (v == 0.0) {
        return;
    }
    var old = atomicLoad(&sums[i]);
    loop {
        let r = atomicCompareExchangeWeak(&sums[i], old, bitcast<u32>(bitcast<f32>(old) + v));
        if (r.exchanged) {
            break;
        }
        old = r.old_value;
    }
}

// x^a for x in [0, 1] (0 for x ≤ 0), as memscape-eq1's fast_pow.
fn pow_a(x: f32, a: f32) -> f32 {
    if (x <= 0.0) {
        return 0.0;
    }
    return exp2(a * log2(x));
}

fn cell_byte(base: u32, byte: u32) -> u32 {
    return (cells[base + byte / 4u] >> ((byte % 4u) * 8u)) & 0xffu;
}

// Bounding box edge k (x lo, x hi, y lo, y hi) in cell units (`CellRec::bbox_at`).
fn bbox_at(base: u32, k: u32) -> f32 {
    let code = (cell_byte(base, 30u + k) << 8u) | cell_byte(base, 76u + k);
    return f32(code) * 2.0 / 65535.0 - 0.5;
}

// The quarter of a spot slice whose centres `spot_lines` places (`CellRec::spot_quarter`): the
// lowest one of 2-bit count 3; 4 where none.
fn spot_quarter(code: u32) -> u32 {
    for (var i = 0u; i < 4u; i++) {
        if (((code >> (2u * i)) & 3u) == 3u) {
            return i;
        }
    }
    return 4u;
}

fn profile_at(base: u32, axis: u32, j: u32) -> u32 {
    return cell_byte(base, 44u + 16u * axis + j);
}

// The sums of one pixel, in the view's global pixel coordinates.
struct Sums {
    f: f32,
    c: vec3<f32>,
    t: f32,
    s: f32,
}

fn in_view(px: i32, py: i32) -> bool {
    return px >= 0 && py >= 0 && px < i32(params.width) && py < i32(params.height);
}

// Adds weight g (of E[o^α]) and coverage e (of E[o]) of the cell's sums to a pixel.
fn add_pixel(px: i32, py: i32, cs: Sums, g: f32, e: f32) {
    if (!in_view(px, py)) {
        return;
    }
    let i = (u32(py) * params.width + u32(px)) * 5u;
    if (params.mode == 0u) {
        add_f32(i, cs.c.x * g);
        add_f32(i + 1u, cs.c.y * g);
        add_f32(i + 2u, cs.c.z * g);
    } else {
        add_f32(i, cs.t * g);
        add_f32(i + 1u, cs.f * g);
    }
    add_f32(i + 3u, cs.f * g);
    add_f32(i + 4u, cs.s * e);
}

// E[o] and E[o^α] for x uniform on [lo, hi], o(x) the fraction of [x − w/2, x + w/2] inside
// [p, p + 1] (`expected_overlap`).
fn o_at(x: f32, w: f32, p: f32) -> f32 {
    if (w <= 1e-12) {
        return select(0.0, 1.0, x >= p && x < p + 1.0);
    }
    let l = min(x + w / 2.0, p + 1.0) - max(x - w / 2.0, p);
    return clamp(l / w, 0.0, 1.0);
}

fn expected_overlap(lo: f32, hi: f32, w: f32, p: f32, alpha: f32) -> vec2<f32> {
    if (hi - lo < 1e-9) {
        let o = o_at(lo, w, p);
        return vec2<f32>(o, pow_a(o, alpha));
    }
    var pts = array<f32, 7>(lo, hi, p - w / 2.0, p + w / 2.0, p + 1.0 - w / 2.0, p + 1.0 + w / 2.0, hi);
    // Insertion sort of the first six; the seventh is hi (the CPU's chain).
    for (var i = 1; i < 6; i++) {
        var j = i;
        loop {
            if (j <= 0 || pts[j - 1] <= pts[j]) {
                break;
            }
            let t = pts[j];
            pts[j] = pts[j - 1];
            pts[j - 1] = t;
            j--;
        }
    }
    var i1 = 0.0;
    var ia = 0.0;
    var prev = lo;
    for (var k = 0; k < 7; k++) {
        let x = clamp(pts[k], lo, hi);
        let a = prev;
        let b = x;
        if (b <= a) {
            continue;
        }
        prev = x;
        var oa: f32;
        var ob: f32;
        if (w <= 1e-12) {
            oa = o_at((a + b) / 2.0, w, p);
            ob = oa;
        } else {
            oa = o_at(a, w, p);
            ob = o_at(b, w, p);
        }
        i1 += (oa + ob) / 2.0 * (b - a);
        if (abs(ob - oa) < 1e-9) {
            ia += pow_a(oa, alpha) * (b - a);
        } else {
            let kk = (ob - oa) / (b - a);
            ia += (pow_a(ob, alpha + 1.0) - pow_a(oa, alpha + 1.0)) / ((alpha + 1.0) * kk);
        }
    }
    let len = hi - lo;
    return vec2<f32>(i1 / len, ia / len);
}

// One axis of a cell (`profile_weights`): up to 8 pixels from `p0` (local), E[o] and E[o^α].
struct Axis {
    count: u32,
    p: array<i32, 8>,
    e1: array<f32, 8>,
    ea: array<f32, 8>,
}

// Only the profile slices in the eighths of `xmask` (bit e: slices 2e, 2e + 1) count, all of
// them where none of those is occupied; `part_sel` as above.
fn profile_weights(base: u32, axis: u32, origin: f32, scale: f32, b_lo: f32, b_hi: f32,
                   extent: f32, alpha: f32, global0: i32, n: i32, xmask_in: u32,
                   part_sel: u32) -> Axis {
    var out: Axis;
    out.count = 0u;
    let b0 = origin + b_lo * scale;
    let b1 = origin + b_hi * scale;
    let blo = min(b0, b1);
    let bhi = max(b0, b1);
    let p0 = floor(blo);
    if (bhi <= p0 + 1.0) {
        let g = global0 + i32(p0);
        // Every block in one pixel: no slice is cut, no quarter apart.
        if (g >= 0 && g < n && part_sel >= 8u) {
            out.p[0] = i32(p0);
            out.e1[0] = 1.0;
            out.ea[0] = 1.0;
            out.count = 1u;
        }
        return out;
    }
    var xmask = xmask_in;
    var total = 0.0;
    for (var j = 0u; j < PROFILE_BINS; j++) {
        if ((xmask & (1u << (j / 2u))) != 0u) {
            total += f32(profile_at(base, axis, j));
        }
    }
    if (total <= 0.0 && xmask != 0xffu) {
        xmask = 0xffu;
        for (var j = 0u; j < PROFILE_BINS; j++) {
            total += f32(profile_at(base, axis, j));
        }
    }
    if (total <= 0.0) {
        return out;
    }
    let e = clamp(extent, 0.0, 1.0);
    var clo: f32;
    var chi: f32;
    if (bhi - blo <= extent) {
        clo = (blo + bhi) / 2.0;
        chi = clo;
    } else {
        clo = blo + extent / 2.0;
        chi = bhi - extent / 2.0;
    }
    // Along y, the two fullest slices' quarters (`CellRec::spots_y`, bytes 34 and 35, 2 bits
    // a quarter; ties: the lower slice first; 0: unknown): their centres spread over each
    // quarter by its share.
    var spot_j = array<u32, 2>(PROFILE_BINS, PROFILE_BINS);
    if (axis == 1u) {
        for (var j = 0u; j < PROFILE_BINS; j++) {
            let v = profile_at(base, 1u, j);
            if (v == 0u) {
                continue;
            }
            if (spot_j[0] == PROFILE_BINS || v > profile_at(base, 1u, spot_j[0])) {
                spot_j[1] = spot_j[0];
                spot_j[0] = j;
            } else if (spot_j[1] == PROFILE_BINS || v > profile_at(base, 1u, spot_j[1])) {
                spot_j[1] = j;
            }
        }
    }
    var acc1 = array<f32, 8>(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    var acca = array<f32, 8>(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for (var j = 0u; j < PROFILE_BINS; j++) {
        let v = profile_at(base, axis, j);
        if (v == 0u || (xmask & (1u << (j / 2u))) == 0u) {
            continue;
        }
        let slice_q = f32(v) / total;
        // The slice whole, or its quarters by their shares.
        var code = 0u;
        var spot_k = 2u;
        for (var k = 0u; k < 2u; k++) {
            if (spot_j[k] == j) {
                code = cell_byte(base, 34u + k);
                spot_k = k;
            }
        }
        var parts = 1u;
        var code_total = 1u;
        if (code > 0u) {
            parts = 4u;
            code_total = (code & 3u) + ((code >> 2u) & 3u) + ((code >> 4u) & 3u) + (code >> 6u);
        }
        var first_part = 0u;
        if (part_sel != SPLIT_NONE) {
            // A spot slice whose blocks reach more than one pixel: its quarters apart.
            var cut = false;
            if (spot_k < 2u) {
                let c0 = origin + f32(j) / f32(PROFILE_BINS) * scale;
                let c1 = origin + f32(j + 1u) / f32(PROFILE_BINS) * scale;
                let slo = max(min(c0, c1), clo);
                let shi = min(max(c0, c1), chi);
                cut = slo <= shi && shi + e / 2.0 > floor(slo - e / 2.0) + 1.0;
            }
            if (part_sel == SPLIT_REST) {
                if (cut) {
                    continue;
                }
            } else {
                if (!cut || spot_k != part_sel / 4u) {
                    continue;
                }
                first_part = part_sel % 4u;
                parts = first_part + 1u;
            }
        }
        for (var part = first_part; part < parts; part++) {
            var q_part = slice_q;
            var s0_part = f32(j) / f32(PROFILE_BINS);
            var s1_part = f32(j + 1u) / f32(PROFILE_BINS);
            // `CellRec::spots_y`: the fullest quarter (the lowest of count 3,
            // `CellRec::spot_quarter`) as its two lines where known (`CellRec::spot_lines`,
            // word 22 + k for spot slice k: the lower and upper line's steps of the quarter, 10
            // bits each, and the upper one's share × 4095).
            var lines = false;
            var line_lo = 0u;
            var line_hi = 0u;
            var upper = 0.0;
            if (code > 0u) {
                q_part = slice_q * f32((code >> (2u * part)) & 3u) / f32(code_total);
                s0_part = f32(j * 4u + part) / f32(PROFILE_BINS * 4u);
                s1_part = f32(j * 4u + part + 1u) / f32(PROFILE_BINS * 4u);
                if (part == spot_quarter(code)) {
                    let w = cells[base + 22u + spot_k];
                    line_lo = w & 0x3ffu;
                    line_hi = (w >> 10u) & 0x3ffu;
                    upper = f32(w >> 20u) / 4095.0;
                    lines = line_lo <= line_hi;
                }
            }
            // One line where both are at one step (all the quarter's share), two otherwise.
            let subs = select(1u, 2u, lines && line_lo < line_hi);
            for (var sub = 0u; sub < subs; sub++) {
                var q = q_part;
                var s0 = s0_part;
                var s1 = s1_part;
                if (lines) {
                    // Powers of two: exact.
                    let step = (s1_part - s0_part) / f32(SPOT_LINE_STEPS);
                    let at = select(line_lo, line_hi, sub == 1u);
                    s0 = s0_part + f32(at) * step;
                    s1 = s0_part + f32(at + 1u) * step;
                    if (subs == 2u) {
                        q = q_part * select(1.0 - upper, upper, sub == 1u);
                    }
                }
                if (q <= 0.0) {
                    continue;
                }
                let a0 = origin + s0 * scale;
                let a1 = origin + s1 * scale;
                var lo = max(min(a0, a1), clo);
                var hi = min(max(a0, a1), chi);
                if (lo > hi) {
                    let m = select(clo, chi, min(a0, a1) > chi);
                    lo = m;
                    hi = m;
                }
                let p = floor(lo - e / 2.0);
                if (hi + e / 2.0 <= p + 1.0) {
                    let k = i32(p - p0);
                    if (k >= 0 && k < 8) {
                        acc1[k] += q;
                        acca[k] += q;
                    }
                    continue;
                }
                // `axis_weights`, only its pixels that land in the 8 slots.
                if (e < 1e-4) {
                    let first = max(floor(lo), p0);
                    let last = min(floor(hi), p0 + 7.0);
                    for (var pp = first; pp <= last; pp += 1.0) {
                        var share = 1.0;
                        if (hi - lo >= 1e-12) {
                            share = max((min(hi, pp + 1.0) - max(lo, pp)) / (hi - lo), 0.0);
                        }
                        if (share > 0.0) {
                            let k = i32(pp - p0);
                            acc1[k] += q * share;
                            acca[k] += q * share;
                        }
                    }
                } else {
                    let first = max(floor(lo - e / 2.0), p0);
                    let last = min(ceil(hi + e / 2.0), p0 + 8.0);
                    for (var pp = first; pp < last; pp += 1.0) {
                        let w = expected_overlap(lo, hi, e, pp, alpha);
                        if (w.x > 0.0) {
                            let k = i32(pp - p0);
                            acc1[k] += q * w.x;
                            acca[k] += q * w.y;
                        }
                    }
                }
            }
        }
    }
    for (var k = 0; k < 8; k++) {
        let pl = i32(p0) + k;
        let g = global0 + pl;
        if (acc1[k] > 0.0 && g >= 0 && g < n) {
            out.p[out.count] = pl;
            out.e1[out.count] = acc1[k];
            out.ea[out.count] = acca[k];
            out.count += 1u;
        }
    }
    return out;
}

// The eighths along an axis whose occupied profile slices, widened by `half`, overlap
// [u0, u1] (cell units), as 8 bits (`reach`'s `eighths`).
fn eighths(base: u32, axis: u32, u0: f32, u1: f32, half: f32) -> u32 {
    var bits = 0u;
    for (var q = 0u; q < 8u; q++) {
        let s0 = profile_at(base, axis, 2u * q);
        let s1 = profile_at(base, axis, 2u * q + 1u);
        if (s0 == 0u && s1 == 0u) {
            continue;
        }
        let first = select(1u, 0u, s0 > 0u);
        let last = select(0u, 1u, s1 > 0u);
        let a = f32(2u * q + first) / f32(PROFILE_BINS) - half;
        let b = f32(2u * q + last + 1u) / f32(PROFILE_BINS) + half;
        if (a < u1 && b > u0) {
            bits |= 1u << q;
        }
    }
    return bits;
}

fn mask_row(base: u32, j: u32) -> u32 {
    let word = cells[base + 4u + j / 4u];
    return (word >> (8u * (j % 4u))) & 0xffu;
}

// A centre of a cell of few blocks (`CellRec::few`), cell units.
fn centre(base: u32, i: u32, fine: bool) -> vec2<f32> {
    if (fine) {
        let x = profile_at(base, 0u, 2u * i) | (profile_at(base, 0u, 2u * i + 1u) << 8u);
        let y = profile_at(base, 1u, 2u * i) | (profile_at(base, 1u, 2u * i + 1u) << 8u);
        return vec2<f32>(f32(x), f32(y)) / 65535.0;
    }
    return vec2<f32>(f32(profile_at(base, 0u, i)), f32(profile_at(base, 1u, i))) / 255.0;
}

// Pixels of a span [a, b] (`spans` in `add_few`; at most 2 px long: the bounding box): first
// pixel, count (≤ 4), fractions.
struct Span {
    p0: f32,
    count: i32,
    l: array<f32, 4>,
}

fn spans(a: f32, b: f32) -> Span {
    var s: Span;
    let len = b - a;
    let p0 = floor(a);
    let p1 = floor(b);
    s.p0 = p0;
    if (p0 == p1 || len <= 1e-12) {
        s.count = 1;
        s.l[0] = 1.0;
        return s;
    }
    s.count = 0;
    for (var p = p0; p <= p1 && s.count < 4; p += 1.0) {
        let l = max(min(b, p + 1.0) - max(a, p), 0.0) / len;
        s.l[s.count] = min(l, 1.0);
        s.count += 1;
    }
    return s;
}

// A cell of at most 16 blocks: each of the mean size at its centre, inside the bounding box,
// the outermost reaching it (`add_few`).
fn add_few(base: u32, cx0: f32, cyb: f32, gx0: i32, gy0: i32, k: u32, cs: Sums) {
    let rx = params.rx;
    let ry = params.ry;
    let alpha = params.alpha;
    let bw = clamp(bitcast<f32>(cells[base + 9u]) * rx, 0.0, 1.0);
    let bh = clamp(bitcast<f32>(cells[base + 10u]) * ry, 0.0, 1.0);
    let xb0 = cx0 + bbox_at(base, 0u) * rx;
    let xb1 = cx0 + bbox_at(base, 1u) * rx;
    let yb0 = cyb - bbox_at(base, 3u) * ry;
    let yb1 = cyb - bbox_at(base, 2u) * ry;
    let fine = f32(k) <= FEW_BLOCKS_FINE;
    // The outermost centres (the last of equals, as the CPU's max_by).
    var left = 0u;
    var right = 0u;
    var bottom = 0u;
    var top = 0u;
    var c0 = centre(base, 0u, fine);
    var lo = c0;
    var hi = c0;
    for (var i = 1u; i < k; i++) {
        let c = centre(base, i, fine);
        if (c.x <= lo.x) { lo.x = c.x; left = i; }
        if (c.x >= hi.x) { hi.x = c.x; right = i; }
        if (c.y <= lo.y) { lo.y = c.y; bottom = i; }
        if (c.y >= hi.y) { hi.y = c.y; top = i; }
    }
    let inv_k = 1.0 / f32(k);
    for (var i = 0u; i < k; i++) {
        let c = centre(base, i, fine);
        let x = cx0 + c.x * rx;
        let y = cyb - c.y * ry;
        var x0 = max(x - bw / 2.0, xb0);
        var x1 = min(x + bw / 2.0, xb1);
        var y0 = max(y - bh / 2.0, yb0);
        var y1 = min(y + bh / 2.0, yb1);
        if (i == left) { x0 = xb0; }
        if (i == right) { x1 = xb1; }
        if (i == top) { y0 = yb0; }
        if (i == bottom) { y1 = yb1; }
        if (x0 > x1) { x0 = x; x1 = x; }
        if (y0 > y1) { y0 = y; y1 = y; }
        let sx = spans(x0, x1);
        let sy = spans(y0, y1);
        for (var a = 0; a < sx.count; a++) {
            for (var b = 0; b < sy.count; b++) {
                let o = sx.l[a] * sy.l[b];
                add_pixel(gx0 + i32(sx.p0) + a, gy0 + i32(sy.p0) + b, cs,
                          pow_a(o, alpha) * inv_k, o * inv_k);
            }
        }
    }
}

@compute @workgroup_size(64)
fn cells_main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * 65535u * 64u;
    if (i >= params.n_cells) {
        return;
    }
    // The cell's column: the last whose first cell is at most this one.
    let vi = params.view_first + i;
    var lo_c = 0u;
    var hi_c = params.n_columns;
    loop {
        if (hi_c - lo_c <= 1u) {
            break;
        }
        let mid = (lo_c + hi_c) / 2u;
        if (columns[mid].x <= vi) {
            lo_c = mid;
        } else {
            hi_c = mid;
        }
    }
    let col = columns[lo_c];
    let base = (col.y + (vi - col.x) + params.chunk_delta) * CELL_WORDS;
    let n = bitcast<f32>(cells[base + 6u]);
    if (n <= 0.0) {
        return;
    }
    // The cell's row, relative to the view's first.
    let ky_lo = cells[base];
    let ky_hi = cells[base + 1u];
    let dlo = ky_lo - params.ky0_lo;
    let borrow = select(0u, 1u, ky_lo < params.ky0_lo);
    let dhi = ky_hi - params.ky0_hi - borrow;
    if (dhi != 0u || dlo >= params.rows) {
        return;
    }
    let row = rows[dlo];
    let gx0 = bitcast<i32>(col.z);
    let cx0 = bitcast<f32>(col.w);
    let gy0 = bitcast<i32>(row.x);
    let cyb = bitcast<f32>(row.y);
    let rx = params.rx;
    let ry = params.ry;
    let alpha = params.alpha;

    // The cell's buckets, α applied (log domain: areas of a cell's blocks go far below f32's
    // smallest normal number before f^α does).
    let lscale = log2(rx * ry);
    var cs: Sums;
    cs.f = 0.0;
    cs.c = vec3<f32>(0.0);
    cs.t = 0.0;
    cs.s = 0.0;
    let nb = min(cells[base + 7u] & 0xffffu, MAX_BUCKETS);
    let b_first = cells[base + 2u] - params.bucket_base;
    for (var b = 0u; b < nb; b++) {
        let w = (b_first + b) * 4u;
        let bn = bitcast<f32>(buckets[w]);
        if (bn <= 0.0) {
            continue;
        }
        let w1 = buckets[w + 1u];
        let octave = bitcast<i32>(w1 << 24u) >> 24u;
        let cv2 = f32((w1 >> 8u) & 0xffu) / 255.0;
        let frac = f32(w1 >> 16u);
        let lmean = 2.0 * f32(octave) + log2(1.0 + 3.0 * frac / 65536.0) + lscale;
        let jensen = max(1.0 + alpha * (alpha - 1.0) / 2.0 * cv2, 0.0);
        let nw = bn * exp2(alpha * lmean) * jensen;
        let w2 = buckets[w + 2u];
        let w3 = buckets[w + 3u];
        let rgb = vec3<f32>(f32(w2 & 0xffffu), f32(w2 >> 16u), f32(w3 & 0xffffu)) / 65535.0;
        cs.f += nw;
        cs.c += rgb * nw;
        cs.t += f32(w3 >> 16u) / 65535.0 * nw;
        cs.s += bn * exp2(lmean);
    }
    let k = round(n);
    if (k >= 1.0 && k <= FEW_BLOCKS) {
        add_few(base, cx0, cyb, gx0, gy0, u32(k), cs);
        return;
    }
    let mean_w = bitcast<f32>(cells[base + 9u]);
    let mean_h = bitcast<f32>(cells[base + 10u]);
    let xs = profile_weights(base, 0u, cx0, rx, bbox_at(base, 0u), bbox_at(base, 1u),
                             mean_w * rx, alpha, gx0, i32(params.width), 0xffu, SPLIT_NONE);
    if (xs.count == 0u) {
        return;
    }
    // `CellRec::spot_x` (bytes 80..88): where known, a spot slice cut by a row edge is resolved
    // quarter by quarter, each in the columns of its own x eighths (`add_cell`'s split parts).
    let split = (cells[base + 20u] | cells[base + 21u]) != 0u;
    let ys = profile_weights(base, 1u, cyb, -ry, bbox_at(base, 2u), bbox_at(base, 3u),
                             mean_h * ry, alpha, gy0, i32(params.height), 0xffu,
                             select(SPLIT_NONE, SPLIT_REST, split));
    if (split) {
        for (var part = 0u; part < 8u; part++) {
            let yp = profile_weights(base, 1u, cyb, -ry, bbox_at(base, 2u), bbox_at(base, 3u),
                                     mean_h * ry, alpha, gy0, i32(params.height), 0xffu, part);
            if (yp.count == 0u) {
                continue;
            }
            let xp = profile_weights(base, 0u, cx0, rx, bbox_at(base, 0u), bbox_at(base, 1u),
                                     mean_w * rx, alpha, gx0, i32(params.width),
                                     cell_byte(base, 80u + part), SPLIT_NONE);
            for (var xi = 0u; xi < xp.count; xi++) {
                for (var yi = 0u; yi < yp.count; yi++) {
                    add_pixel(gx0 + xp.p[xi], gy0 + yp.p[yi], cs, xp.ea[xi] * yp.ea[yi],
                              xp.e1[xi] * yp.e1[yi]);
                }
            }
        }
    }
    if (ys.count == 0u) {
        return;
    }
    // `reach`: which pixel pairs an occupied eighth reaches, and the factors that move the
    // others' share to them.
    var reached = array<u32, 8>(0xffu, 0xffu, 0xffu, 0xffu, 0xffu, 0xffu, 0xffu, 0xffu);
    var scale1 = 1.0;
    var scalea = 1.0;
    let mask_any = (cells[base + 4u] | cells[base + 5u]) != 0u;
    if (mask_any && xs.count * ys.count > 1u) {
        let hw = mean_w / 2.0;
        let hh = mean_h / 2.0;
        var qys = array<u32, 8>(0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u);
        for (var yi = 0u; yi < ys.count; yi++) {
            let py = f32(ys.p[yi]);
            qys[yi] = eighths(base, 1u, (cyb - py - 1.0) / ry, (cyb - py) / ry, hh);
        }
        var all1 = 0.0;
        var alla = 0.0;
        var hit1 = 0.0;
        var hita = 0.0;
        for (var xi = 0u; xi < xs.count; xi++) {
            let px = f32(xs.p[xi]);
            let qx = eighths(base, 0u, (px - cx0) / rx, (px + 1.0 - cx0) / rx, hw);
            var bits = 0u;
            for (var yi = 0u; yi < ys.count; yi++) {
                var r = false;
                for (var j = 0u; j < 8u; j++) {
                    if ((qys[yi] & (1u << j)) != 0u && (mask_row(base, j) & qx) != 0u) {
                        r = true;
                    }
                }
                all1 += xs.e1[xi] * ys.e1[yi];
                alla += xs.ea[xi] * ys.ea[yi];
                if (r) {
                    hit1 += xs.e1[xi] * ys.e1[yi];
                    hita += xs.ea[xi] * ys.ea[yi];
                    bits |= 1u << yi;
                }
            }
            reached[xi] = bits;
        }
        if (hit1 > 0.0 && hita > 0.0) {
            scale1 = all1 / hit1;
            scalea = alla / hita;
        } else {
            for (var xi = 0u; xi < 8u; xi++) {
                reached[xi] = 0xffu;
            }
        }
    }
    for (var xi = 0u; xi < xs.count; xi++) {
        for (var yi = 0u; yi < ys.count; yi++) {
            if ((reached[xi] & (1u << yi)) == 0u) {
                continue;
            }
            add_pixel(gx0 + xs.p[xi], gy0 + ys.p[yi], cs,
                      xs.ea[xi] * ys.ea[yi] * scalea,
                      xs.e1[xi] * ys.e1[yi] * scale1);
        }
    }
}
