//! GPU-side structs of the allocation map. Keep in sync with `shaders/alloc_map_common.wgsl`.

use bytemuck::{Pod, Zeroable};

/// One block: where it sits on the collapsed address axis and how it is coloured.
/// Keep in sync with `AllocBlock` in `shaders/alloc_map_common.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct AllocBlockGpu {
    /// (lo, hi) start on the collapsed address axis.
    pub addr: [u32; 2],
    /// (lo, hi) size in bytes.
    pub size: [u32; 2],
    /// sRGB rgba8 packed as `unpack4x8unorm` reads it (categorical colouring).
    pub color: u32,
    /// Attribute in [0, 1] (quantitative colouring).
    pub attr: f32,
}
const _: () = assert!(std::mem::size_of::<AllocBlockGpu>() == 24);

impl AllocBlockGpu {
    pub fn new(addr: u64, size: u64, color: [u8; 4], attr: f32) -> Self {
        Self {
            addr: crate::u64_split::split(addr),
            size: crate::u64_split::split(size),
            color: crate::color::pack_rgba8(color),
            attr,
        }
    }
}

/// A block's lifetime on the active time axis (wall nanoseconds or event index), end exclusive.
/// Kept apart from [`AllocBlockGpu`] so that switching the time axis re-uploads only this.
/// Keep in sync with `BlockTime` in `shaders/alloc_map_common.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct BlockTimeGpu {
    pub start: [u32; 2],
    pub end: [u32; 2],
}
const _: () = assert!(std::mem::size_of::<BlockTimeGpu>() == 16);

impl BlockTimeGpu {
    /// A zero-length lifetime would have no area at all; it is widened to one time unit.
    pub fn new(start: u64, end: u64) -> Self {
        Self {
            start: crate::u64_split::split(start),
            end: crate::u64_split::split(end.max(start.saturating_add(1))),
        }
    }
}

/// Where a chunk of blocks starts in the whole dataset: instance `i` of the chunk's buffers is
/// block `base + i` (picking reports, and the selection bitset is indexed by, global indices).
/// Keep in sync with `ChunkInfo` in `shaders/alloc_map_common.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct ChunkInfoGpu {
    pub base: u32,
    pub count: u32,
    /// The chunk's position in the upload (its indirect draw in the dense path's raster list).
    pub index: u32,
    /// Words before the raster list's entries (4 per chunk of the upload).
    pub list_offset: u32,
}
const _: () = assert!(std::mem::size_of::<ChunkInfoGpu>() == 16);

/// The view uniform. Keep in sync with `AllocMapView` in `shaders/alloc_map_common.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct AllocMapViewGpu {
    pub origin_time: [u32; 2],
    pub origin_addr: [u32; 2],
    pub origin_frac: [f32; 2],
    pub scale: [f32; 2],
    pub viewport_px: [f32; 2],
    pub resolve_origin_px: [f32; 2],
    pub alpha: f32,
    pub cushion_kind: u32,
    pub cushion_strength: f32,
    pub color_mode: u32,
    pub background: [f32; 4],
    pub light: [f32; 4],
    pub output_srgb_encode: u32,
    /// 0: selection bits ignored; 1: unselected blocks dimmed (block colours); 2: the same with
    /// quantitative blocks coloured through the ramp first. `color_mode` is then categorical.
    pub selection_mode: u32,
    /// How far an unselected block's colour moves towards `dim_color` (1: all the way).
    pub dim_amount: f32,
    /// Occupancy bar: 0 no gap rule, 1 intervals at least `gap_min_px` wide are not drawn,
    /// 2 only those get the cushion.
    pub gap_mode: u32,
    /// Colour of unselected blocks, linear RGB.
    pub dim_color: [f32; 4],
    pub gap_min_px: f32,
    /// The draw range `[range_start, range_end)` of global block indices (the dense path's
    /// compute pass reads it; the raster path draws the range by instances).
    pub range_start: u32,
    pub range_end: u32,
    /// Quantitative values are drawn as the mean attribute times this (1 but for a one-bin
    /// occupancy bar whose attributes are bytes over a power of two, `BarBlocks::value_scale`:
    /// its capacity can grow without rewriting every interval).
    pub value_scale: f32,
}
const _: () = assert!(std::mem::size_of::<AllocMapViewGpu>() == 144);
