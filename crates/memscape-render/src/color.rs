//! Colour handling shared by every view; CPU twin of `shaders/utils/color.wgsl`.
//!
//! Pipelines compute in linear light. Targets are non-sRGB 8-bit formats and the resolve passes
//! encode sRGB themselves when [`needs_shader_srgb_encode`] says so: that is the one place where
//! colour space is decided, for the GUI and headless alike.

// The ramp and the sRGB transfer are memscape-eq1's: the one CPU copy, shared with
// memscape-lod. Keep `shaders/utils/color.wgsl` in sync with it.
pub use memscape_eq1::{BLUE_RED_STOPS, blue_red, linear_to_srgb, srgb_to_linear};

/// The blue → red ramp at `t` as opaque sRGB bytes (for shapes and legends).
pub fn blue_red_srgb8(t: f32) -> [u8; 4] {
    let c = blue_red(t);
    let byte = |v: f32| (linear_to_srgb(v) * 255.0).round() as u8;
    [byte(c[0]), byte(c[1]), byte(c[2]), 255]
}

/// [`blue_red_srgb8`] for many values (the bars' millions of intervals): the same bytes, with
/// the ramp's stops turned linear once instead of at every call.
pub struct BlueRedSrgb8 {
    stops: [[f32; 3]; 5],
}

impl BlueRedSrgb8 {
    pub fn new() -> Self {
        Self {
            stops: BLUE_RED_STOPS.map(|s| s.map(srgb_to_linear)),
        }
    }

    /// [`blue_red_srgb8`]`(t)`.
    pub fn at(&self, t: f32) -> [u8; 4] {
        // `blue_red`'s interpolation, on the stops made linear in `new`.
        let t = t.clamp(0.0, 1.0) * 4.0;
        let i = (t.floor() as usize).min(3);
        let f = t - i as f32;
        let (a, b) = (self.stops[i], self.stops[i + 1]);
        let byte = |k: usize| (linear_to_srgb(a[k] + (b[k] - a[k]) * f) * 255.0).round() as u8;
        [byte(0), byte(1), byte(2), 255]
    }
}

impl Default for BlueRedSrgb8 {
    fn default() -> Self {
        Self::new()
    }
}

/// Packs sRGB 8-bit channels the way WGSL's `unpack4x8unorm` reads them.
pub fn pack_rgba8(rgba: [u8; 4]) -> u32 {
    u32::from_le_bytes(rgba)
}

/// Whether a resolve pass writing to `format` must apply the sRGB transfer itself: true for the
/// plain `*Unorm` formats (the hardware stores what the shader writes), false for `*UnormSrgb`.
pub fn needs_shader_srgb_encode(format: wgpu::TextureFormat) -> bool {
    !format.is_srgb()
}

/// A categorical palette of well-separated sRGB colours (Glasbey-like, tuned for dark and light
/// backgrounds). Index wraps around.
pub fn categorical(index: u32) -> [u8; 4] {
    const PALETTE: [[u8; 3]; 16] = [
        [0x4e, 0x79, 0xa7],
        [0xf2, 0x8e, 0x2b],
        [0xe1, 0x57, 0x59],
        [0x76, 0xb7, 0xb2],
        [0x59, 0xa1, 0x4f],
        [0xed, 0xc9, 0x48],
        [0xb0, 0x7a, 0xa1],
        [0xff, 0x9d, 0xa7],
        [0x9c, 0x75, 0x5f],
        [0xba, 0xb0, 0xac],
        [0x1f, 0x77, 0xb4],
        [0xd6, 0x27, 0x28],
        [0x2c, 0xa0, 0x2c],
        [0x94, 0x67, 0xbd],
        [0x8c, 0x56, 0x4b],
        [0x17, 0xbe, 0xcf],
    ];
    let [r, g, b] = PALETTE[(index as usize) % PALETTE.len()];
    [r, g, b, 255]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ramp_for_many_values_gives_the_same_bytes() {
        let ramp = BlueRedSrgb8::new();
        for i in -10..=100_010 {
            let t = i as f32 / 100_000.0;
            assert_eq!(ramp.at(t), blue_red_srgb8(t), "t = {t}");
        }
        for t in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.25, 0.5, 0.75] {
            assert_eq!(ramp.at(t), blue_red_srgb8(t), "t = {t}");
        }
    }

    #[test]
    fn srgb_round_trip() {
        for i in 0..=255 {
            let c = i as f32 / 255.0;
            assert!((linear_to_srgb(srgb_to_linear(c)) - c).abs() < 1e-5);
        }
    }

    #[test]
    fn ramp_ends_are_the_end_stops() {
        let lo = blue_red(0.0);
        let hi = blue_red(1.0);
        for k in 0..3 {
            assert!((linear_to_srgb(lo[k]) - BLUE_RED_STOPS[0][k]).abs() < 1e-5);
            assert!((linear_to_srgb(hi[k]) - BLUE_RED_STOPS[4][k]).abs() < 1e-5);
        }
    }
}
