//! GPU-side structs of the polar morph. Keep in sync with `shaders/polar_morph.wgsl`.

use bytemuck::{Pod, Zeroable};

/// One record: a radius and its angles under two parameterizations (radians clockwise from
/// 12 o'clock). Keep in sync with `PointIn` in `shaders/polar_morph.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct PolarPointGpu {
    /// In units of the view's radius (1 = the circle of the circular view).
    pub r: f32,
    pub theta_a: f32,
    pub theta_b: f32,
    /// Straight-alpha sRGB rgba8 as `unpack4x8unorm` reads it.
    pub color: u32,
}
const _: () = assert!(std::mem::size_of::<PolarPointGpu>() == 16);

/// An arc between two temporally adjacent records. Keep in sync with `ArcIn`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct PolarArcGpu {
    /// r, θa, θb of the earlier record.
    pub from: [f32; 3],
    pub to: [f32; 3],
    pub color: u32,
    pub _pad: u32,
}
const _: () = assert!(std::mem::size_of::<PolarArcGpu>() == 32);

/// The view uniform. Keep in sync with `MorphView` in `shaders/polar_morph.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct PolarMorphViewGpu {
    pub center_px: [f32; 2],
    pub viewport_px: [f32; 2],
    pub radius_px: f32,
    pub t: f32,
    pub point_radius_px: f32,
    pub arc_width_px: f32,
    pub arc_subdivisions: u32,
    pub output_srgb_encode: u32,
    pub _pad: [u32; 2],
}
const _: () = assert!(std::mem::size_of::<PolarMorphViewGpu>() == 48);
