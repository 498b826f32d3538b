//! 64-bit integers as `(lo, hi)` pairs of u32 for WGSL, and the CPU twin of
//! `shaders/utils/u64.wgsl`'s exact origin subtraction.

/// Splits a u64 into the `vec2<u32>(lo, hi)` layout the shaders use.
pub fn split(value: u64) -> [u32; 2] {
    [value as u32, (value >> 32) as u32]
}

/// `(a - origin)` as a signed 64-bit offset converted to f32 after the exact subtraction, as the
/// shader computes it (including its rounding: the high word is scaled in f32); memscape-eq1's.
pub use memscape_eq1::offset_to_f32;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_exact_near_the_origin_anywhere_in_the_address_space() {
        let origin = 0x7fff_ffff_fff0_0000u64;
        assert_eq!(offset_to_f32(origin + 1, origin), 1.0);
        assert_eq!(offset_to_f32(origin - 1, origin), -1.0);
        assert_eq!(offset_to_f32(origin + 12_345, origin), 12_345.0);
        // Crossing a 32-bit boundary.
        let o = 0x1_0000_0000u64 - 3;
        assert_eq!(offset_to_f32(o + 5, o), 5.0);
        assert_eq!(offset_to_f32(o - 7, o), -7.0);
        assert_eq!(offset_to_f32(0, u64::MAX), 1.0);
        assert_eq!(offset_to_f32(u64::MAX, 0), -1.0);
        assert_eq!(offset_to_f32(1 << 63, 0), -(2f32.powi(63)));
        // Matches the exact value rounded once, for large offsets too.
        for (a, o) in [
            (5u64 << 40, 3u64),
            (3, 5u64 << 40),
            (u64::MAX / 3, u64::MAX / 7),
        ] {
            let exact = a.wrapping_sub(o) as i64 as f64;
            assert!((f64::from(offset_to_f32(a, o)) - exact).abs() <= exact.abs() * 1e-7);
        }
        // A plain f32 conversion of the absolute values cannot tell these apart.
        assert_eq!((origin + 1) as f32, origin as f32);
    }
}
