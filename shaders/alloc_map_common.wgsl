// Types and geometry shared by the allocation map's passes.
// Keep in sync with crates/memscape-render/src/alloc_map/gpu.rs.

#import "utils/u64.wgsl"

const COLOR_MODE_CATEGORICAL: u32 = 0u;
const COLOR_MODE_QUANTITATIVE: u32 = 1u;

// Keep in sync with `AllocMapViewGpu` (size 112 bytes).
struct AllocMapView {
    origin_time: vec2<u32>,       // (lo, hi) integer time at the left edge
    origin_addr: vec2<u32>,       // (lo, hi) integer collapsed address at the bottom edge
    origin_frac: vec2<f32>,       // fractional part of both origins (smooth pan at any zoom)
    scale: vec2<f32>,             // pixels per time unit, pixels per byte
    viewport_px: vec2<f32>,       // size of the accumulation target in pixels
    resolve_origin_px: vec2<f32>, // where the resolve pass's viewport starts in its target
    alpha: f32,                   // bias α of Eq. 1
    cushion_kind: u32,
    cushion_strength: f32,
    color_mode: u32,
    background: vec4<f32>,        // c_B, linear RGB
    light: vec4<f32>,             // normalised light direction (xyz)
    output_srgb_encode: u32,      // 1: the target stores raw values, encode sRGB in the shader
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

// Keep in sync with `AllocBlockGpu` (size 24 bytes).
struct AllocBlock {
    addr: vec2<u32>,   // (lo, hi) start on the collapsed address axis
    size: vec2<u32>,   // (lo, hi) bytes
    color: u32,        // sRGB rgba8, categorical colour
    attr: f32,         // quantitative attribute in [0, 1]
}

// Keep in sync with `BlockTimeGpu` (size 16 bytes).
struct BlockTime {
    start: vec2<u32>,  // (lo, hi)
    end: vec2<u32>,    // (lo, hi), exclusive
}

// The block's rectangle in target pixels: (x0, y0, x1, y1) with y growing downwards and
// addresses growing upwards.
fn block_rect_px(view: AllocMapView, b: AllocBlock, t: BlockTime) -> vec4<f32> {
    let x0 = (u64_offset_to_f32(t.start, view.origin_time) - view.origin_frac.x) * view.scale.x;
    let x1 = (u64_offset_to_f32(t.end, view.origin_time) - view.origin_frac.x) * view.scale.x;
    let a0 = (u64_offset_to_f32(b.addr, view.origin_addr) - view.origin_frac.y) * view.scale.y;
    let a1 = (u64_offset_to_f32(u64_add(b.addr, b.size), view.origin_addr) - view.origin_frac.y) * view.scale.y;
    return vec4<f32>(x0, view.viewport_px.y - a1, x1, view.viewport_px.y - a0);
}

// Exact area of rect ∩ [p, p+1]², i.e. the box-filtered coverage of the pixel whose top-left
// corner is p.
fn box_coverage(rect: vec4<f32>, p: vec2<f32>) -> f32 {
    let w = max(min(rect.z, p.x + 1.0) - max(rect.x, p.x), 0.0);
    let h = max(min(rect.w, p.y + 1.0) - max(rect.y, p.y), 0.0);
    return w * h;
}
