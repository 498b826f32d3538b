//! What part of the (time, collapsed address) plane a picture shows, and the blocks it shows,
//! in the same terms as memscape-render's `AllocMapView` / `AllocBlockGpu` / `BlockTimeGpu`.

use crate::{ColorMode, Cushion};

/// One block of the allocation map: `[t0, t1) × [y, y + size)` on the active time axis and the
/// collapsed address axis, with its colour (sRGB packed as `unpack4x8unorm` reads it) and its
/// attribute in [0, 1] (quantitative colourings). `t1 > t0` and `size ≥ 1` (see [`Self::new`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct MapBlock {
    pub t0: u64,
    pub t1: u64,
    pub y: u64,
    pub size: u64,
    pub color: u32,
    pub attr: f32,
}
const _: () = assert!(std::mem::size_of::<MapBlock>() == 40);

impl MapBlock {
    /// A zero-length lifetime is widened to one time unit and a zero size to one byte, as the
    /// renderer does (a block without area would vanish).
    pub fn new(t0: u64, t1: u64, y: u64, size: u64, color: u32, attr: f32) -> Self {
        Self {
            t0,
            t1: t1.max(t0.saturating_add(1)),
            y,
            size: size.max(1),
            color,
            attr,
        }
    }

    pub fn width(&self) -> u64 {
        // Saturating: blocks read from a damaged index may end before they start.
        self.t1.saturating_sub(self.t0)
    }
}

/// A view: origin, scale, size in pixels, and how Eq. 1 and the cushions are evaluated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MapView {
    pub time_origin: u64,
    pub time_origin_frac: f32,
    pub addr_origin: u64,
    pub addr_origin_frac: f32,
    pub pixels_per_time: f32,
    pub pixels_per_byte: f32,
    pub width: u32,
    pub height: u32,
    pub alpha: f32,
    pub cushion: Cushion,
    pub cushion_strength: f32,
    pub color_mode: ColorMode,
    /// c_B, the colour of free memory, linear RGB.
    pub background_linear: [f32; 3],
}

impl MapView {
    /// `[t0, t1) × [a0, a1)` in `width`×`height` pixels, with the renderer's defaults.
    pub fn fit(t0: u64, t1: u64, a0: u64, a1: u64, width: u32, height: u32) -> Self {
        let span_t = (t1.saturating_sub(t0)).max(1) as f64;
        let span_a = (a1.saturating_sub(a0)).max(1) as f64;
        Self {
            time_origin: t0,
            time_origin_frac: 0.0,
            addr_origin: a0,
            addr_origin_frac: 0.0,
            pixels_per_time: (f64::from(width) / span_t) as f32,
            pixels_per_byte: (f64::from(height) / span_a) as f32,
            width,
            height,
            alpha: 0.5,
            cushion: Cushion::Parabolic,
            cushion_strength: 1.0,
            color_mode: ColorMode::Categorical,
            background_linear: [0.012, 0.014, 0.02],
        }
    }

    /// Time units per pixel column and bytes per pixel row, in f64.
    pub fn pixel_size(&self) -> [f64; 2] {
        [
            1.0 / f64::from(self.pixels_per_time.max(f32::MIN_POSITIVE)),
            1.0 / f64::from(self.pixels_per_byte.max(f32::MIN_POSITIVE)),
        ]
    }

    /// The time at pixel column boundary `x` and the collapsed address at pixel row boundary
    /// `y` (y down: row 0 is the top), in f64 trace units.
    pub fn plane_at(&self, x: f64, y: f64) -> [f64; 2] {
        let [pw, ph] = self.pixel_size();
        [
            self.time_origin as f64 + f64::from(self.time_origin_frac) + x * pw,
            self.addr_origin as f64
                + f64::from(self.addr_origin_frac)
                + (f64::from(self.height) - y) * ph,
        ]
    }

    /// The visible part of the plane as `[t0, t1) × [a0, a1)` (f64 trace units).
    pub fn window(&self) -> ([f64; 2], [f64; 2]) {
        let [t0, a1] = self.plane_at(0.0, 0.0);
        let [t1, a0] = self.plane_at(f64::from(self.width), f64::from(self.height));
        ([t0, t1], [a0, a1])
    }

    /// The block in pixels as (x0, y_bottom, width, height), y down, exactly as the renderer's
    /// `block_geometry_px` computes it (integer origin subtraction, then f32).
    pub fn block_geometry_px(&self, b: &MapBlock) -> [f32; 4] {
        let h = self.height as f32;
        let x0 =
            (offset_to_f32(b.t0, self.time_origin) - self.time_origin_frac) * self.pixels_per_time;
        let a0 =
            (offset_to_f32(b.y, self.addr_origin) - self.addr_origin_frac) * self.pixels_per_byte;
        let width = offset_to_f32(b.t1, b.t0) * self.pixels_per_time;
        let height = offset_to_f32(b.size, 0) * self.pixels_per_byte;
        [x0, h - a0, width, height]
    }
}

/// `(a - origin)` as a signed offset converted to f32 after the exact subtraction, the way the
/// shaders compute it (memscape-render's `u64_split::offset_to_f32`).
pub fn offset_to_f32(a: u64, origin: u64) -> f32 {
    let (a_lo, a_hi) = (a as u32, (a >> 32) as u32);
    let (o_lo, o_hi) = (origin as u32, (origin >> 32) as u32);
    let mut lo = a_lo.wrapping_sub(o_lo);
    let borrow = u32::from(a_lo < o_lo);
    let mut hi = a_hi.wrapping_sub(o_hi).wrapping_sub(borrow);
    let negative = hi & 0x8000_0000 != 0;
    if negative {
        lo = (!lo).wrapping_add(1);
        hi = (!hi).wrapping_add(u32::from(lo == 0));
    }
    let magnitude = hi as f32 * 4_294_967_296.0 + lo as f32;
    if negative { -magnitude } else { magnitude }
}
