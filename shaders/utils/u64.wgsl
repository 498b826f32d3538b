// 64-bit unsigned integers as vec2<u32>(lo, hi), and their exact difference to a view origin.
// WGSL has no 64-bit integers; a 64-bit address or nanosecond time loses its low bits in f32, so
// we subtract the view origin in integer arithmetic first and convert only the (small, on-screen)
// difference to float. See crates/memscape-render/src/u64_split.rs for the CPU twin.

fn u64_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    let carry = select(0u, 1u, lo < a.x);
    return vec2<u32>(lo, a.y + b.y + carry);
}

// (a - origin) as a signed 64-bit value, converted to f32 after the exact subtraction. Negative
// offsets are negated in integer arithmetic first: converting hi = -1 and a large lo separately
// would cancel catastrophically (-2^32 + 4294967295 rounds to 0 in f32).
fn u64_offset_to_f32(a: vec2<u32>, origin: vec2<u32>) -> f32 {
    var lo = a.x - origin.x;
    let borrow = select(0u, 1u, a.x < origin.x);
    var hi = a.y - origin.y - borrow;
    let negative = (hi & 0x80000000u) != 0u;
    if negative {
        lo = ~lo + 1u;
        hi = ~hi + select(0u, 1u, lo == 0u);
    }
    let magnitude = f32(hi) * 4294967296.0 + f32(lo);
    return select(magnitude, -magnitude, negative);
}
