//! GPU-side structs of the shape pipeline. Keep in sync with `shaders/shapes.wgsl`.

use bytemuck::{Pod, Zeroable};

/// Low byte of [`ShapeGpu::kind`]. Keep in sync with the `KIND_*` constants of `shapes.wgsl`.
pub const KIND_RECT: u32 = 0;
pub const KIND_DISC: u32 = 1;
pub const KIND_SECTOR: u32 = 2;
pub const KIND_SEGMENT: u32 = 3;
/// Flag bit of [`ShapeGpu::kind`]: the rect size or disc radius is in pixels, not world units.
pub const FLAG_PIXEL_SIZE: u32 = 256;

/// One shape instance (a vertex-buffer instance, so no storage-binding limit applies).
/// Keep in sync with `ShapeIn` in `shaders/shapes.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct ShapeGpu {
    /// `KIND_*` in the low byte, `FLAG_*` above.
    pub kind: u32,
    /// Border width in pixels, drawn inside the shape's edge; 0 for none.
    pub border_px: f32,
    /// Straight-alpha sRGB rgba8, packed as `unpack4x8unorm` reads it.
    pub fill: u32,
    pub border: u32,
    /// Kind-specific geometry, world units (see `shapes.wgsl`).
    pub p: [f32; 4],
    pub q: [f32; 4],
}
const _: () = assert!(std::mem::size_of::<ShapeGpu>() == 48);

/// The view uniform. Keep in sync with `ShapesView` in `shaders/shapes.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct ShapesViewGpu {
    pub scale: [f32; 2],
    pub offset: [f32; 2],
    pub viewport_px: [f32; 2],
    pub output_srgb_encode: u32,
    pub _pad: u32,
}
const _: () = assert!(std::mem::size_of::<ShapesViewGpu>() == 32);
