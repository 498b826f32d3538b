// Signed 64-bit fixed point with 24 fractional bits, as vec2<u32>(lo, hi) in two's complement:
// the dense allocation-map path's sums. Integer addition is exact and associative, so the order
// in which atomics land does not matter, and a value added at one column and subtracted at a
// later one cancels exactly (a float difference array would leave round-off behind it).
// Resolution 2^-24 (6e-8, an f32's relative precision at 1), range ±2^39.
//
// In the accumulation buffer a pair is stored with a *signed* low word: value = hi·2^32 + i32(lo).
// A small value of either sign (|v| < 128) is then its low word alone, and adding it to a word
// near zero never carries, so one atomic per value suffices almost always (see `add_fixed` in
// alloc_map_dense.wgsl); the scan turns pairs back with `fixed_from_stored`.
// CPU twin: crates/memscape-render/src/alloc_map/dense.rs (`fixed` module).

const FIXED_ONE: f32 = 16777216.0;

fn fixed_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}

fn fixed_neg(a: vec2<u32>) -> vec2<u32> {
    let lo = ~a.x + 1u;
    return vec2<u32>(lo, ~a.y + select(0u, 1u, lo == 0u));
}

fn fixed_sub(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    return fixed_add(a, fixed_neg(b));
}

// x · n for 0 <= n < 2^16 (a column count), modulo 2^64.
fn fixed_mul_small(x: vec2<u32>, n: u32) -> vec2<u32> {
    let ll = (x.x & 0xffffu) * n;
    let lh = (x.x >> 16u) * n;
    let lo = ll + (lh << 16u);
    return vec2<u32>(lo, x.y * n + (lh >> 16u) + select(0u, 1u, lo < ll));
}

// f32 to fixed, truncating towards zero: the magnitude is split into its high word and the rest
// (both exact in f32) and negated in integer arithmetic, so small negative values keep their
// relative precision.
fn to_fixed(x: f32) -> vec2<u32> {
    let m = min(abs(x), 5.0e11);
    let hi = floor(m / 256.0);
    let v = vec2<u32>(u32((m - hi * 256.0) * FIXED_ONE), u32(hi));
    return select(v, fixed_neg(v), x < 0.0);
}

fn fixed_to_f32(a: vec2<u32>) -> f32 {
    let negative = (a.y & 0x80000000u) != 0u;
    let m = select(a, fixed_neg(a), negative);
    let magnitude = f32(m.y) * 256.0 + f32(m.x) / FIXED_ONE;
    return select(magnitude, -magnitude, negative);
}

// Two's complement to the stored form (signed low word) and back.
fn fixed_to_stored(a: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(a.x, a.y + (a.x >> 31u));
}

fn fixed_from_stored(a: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(a.x, a.y - (a.x >> 31u));
}
