// Types and geometry shared by the allocation map's passes.
// Keep in sync with crates/memscape-render/src/alloc_map/gpu.rs.

#import "utils/u64.wgsl"
#import "utils/color.wgsl"

const COLOR_MODE_CATEGORICAL: u32 = 0u;
const COLOR_MODE_QUANTITATIVE: u32 = 1u;

const SELECTION_OFF: u32 = 0u;
const SELECTION_DIM: u32 = 1u;
const SELECTION_DIM_RAMP: u32 = 2u;

// Inter-event intervals of the occupancy bar that are at least gap_min_px wide ("idle gaps"):
const GAP_NONE: u32 = 0u;     // no special treatment (the main map)
const GAP_HIDE: u32 = 1u;     // not drawn: the background (black) shows
const GAP_CUSHION: u32 = 2u;  // only gaps get the view's cushion; other intervals are flat

// Keep in sync with `AllocMapViewGpu` (size 144 bytes).
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
    selection_mode: u32,          // SELECTION_*: dim blocks whose selection bit is clear
    dim_amount: f32,              // how far unselected colours move towards dim_color
    gap_mode: u32,                // GAP_*
    dim_color: vec4<f32>,         // linear RGB of unselected blocks
    gap_min_px: f32,              // width from which an interval counts as an idle gap
    range_start: u32,             // the blocks [range_start, range_end) of the upload are drawn
    range_end: u32,               //   (global indices; the dense path's compute pass reads them)
    value_scale: f32,             // quantitative values: the mean attribute times this
}

// Keep in sync with `AllocBlockGpu` (size 24 bytes).
struct AllocBlock {
    addr: vec2<u32>,   // (lo, hi) start on the collapsed address axis
    size: vec2<u32>,   // (lo, hi) bytes
    color: u32,        // sRGB rgba8, categorical colour
    attr: f32,         // quantitative attribute in [0, 1]
}

// Where a chunk of blocks starts in the whole dataset: instance i of the chunk is block base + i.
// Keep in sync with `ChunkInfoGpu` (size 16 bytes).
struct ChunkInfo {
    base: u32,
    count: u32,
    index: u32,        // which chunk: its indirect draw arguments in the raster list's header
    list_offset: u32,  // words before the raster list's entries (4 per chunk of the upload)
}

// Keep in sync with `BlockTimeGpu` (size 16 bytes).
struct BlockTime {
    start: vec2<u32>,  // (lo, hi)
    end: vec2<u32>,    // (lo, hi), exclusive
}

// The block in target pixels as (x0, y_bottom, width, height), y growing downwards and addresses
// upwards. Width and height come from the integer lifetime and size, not from subtracting two
// rounded edges: near pixel 100 an f32 edge is only good to ~1e-5 px, and a 1-byte block seen
// over a gigabyte is 2e-7 px tall. Subtracting its edges would give exactly 0 and the block would
// vanish; its own height keeps it.
fn block_geometry_px(view: AllocMapView, b: AllocBlock, t: BlockTime) -> vec4<f32> {
    let x0 = (u64_offset_to_f32(t.start, view.origin_time) - view.origin_frac.x) * view.scale.x;
    let a0 = (u64_offset_to_f32(b.addr, view.origin_addr) - view.origin_frac.y) * view.scale.y;
    let width = u64_offset_to_f32(t.end, t.start) * view.scale.x;
    let height = u64_offset_to_f32(b.size, vec2<u32>(0u, 0u)) * view.scale.y;
    return vec4<f32>(x0, view.viewport_px.y - a0, width, height);
}

// Length of [a, a + w) ∩ [p, p + 1), written so that a tiny w inside the pixel is returned
// exactly (no subtraction of nearly equal large numbers).
fn interval_overlap(a: f32, w: f32, p: f32) -> f32 {
    let cut_before = max(p - a, 0.0);
    let cut_after = max((a - p - 1.0) + w, 0.0);
    return clamp(w - cut_before - cut_after, 0.0, min(w, 1.0));
}

// Box-filtered coverage of the pixel whose top-left corner is p by the block (x0, y_bottom, w, h):
// the exact area of block ∩ pixel.
fn box_coverage(g: vec4<f32>, p: vec2<f32>) -> f32 {
    let fx = interval_overlap(g.x, g.z, p.x);
    // The block spans [y_bottom - h, y_bottom) downwards; mirrored so h is never subtracted from
    // a large coordinate.
    let cut_above = max((p.y - g.y) + g.w, 0.0);
    let cut_below = max(g.y - p.y - 1.0, 0.0);
    let fy = clamp(g.w - cut_above - cut_below, 0.0, min(g.w, 1.0));
    return fx * fy;
}

// Clamps a block's geometry to the viewport plus a margin, keeping its far edges where they were.
fn clamp_geometry(g: vec4<f32>, viewport: vec2<f32>, margin: f32) -> vec4<f32> {
    return clamp_geometry_rect(g, vec2<f32>(0.0), viewport, margin);
}

// Clamps a block's geometry to the rectangle [lo, hi) (target pixels, y down) plus a margin,
// keeping its far edges where they were. With lo = 0 this is exactly `clamp_geometry`.
fn clamp_geometry_rect(g: vec4<f32>, lo: vec2<f32>, hi: vec2<f32>, margin: f32) -> vec4<f32> {
    var x0 = g.x;
    var w = g.z;
    if x0 < lo.x - margin {
        w = w - ((lo.x - margin) - x0);
        x0 = lo.x - margin;
    }
    w = min(w, hi.x + margin - x0);
    var yb = g.y;
    var h = g.w;
    if yb > hi.y + margin {
        h = h - (yb - (hi.y + margin));
        yb = hi.y + margin;
    }
    h = min(h, yb - (lo.y - margin));
    return vec4<f32>(x0, yb, max(w, 0.0), max(h, 0.0));
}

// A block's linear colour as the accumulation adds it: its own colour, or with a selection shown,
// quantitative blocks through the ramp first and unselected ones moved towards the dim colour.
fn shaded_block_color(view: AllocMapView, b: AllocBlock, selected: bool) -> vec4<f32> {
    var color = unpack_rgba8_srgb_to_linear(b.color);
    if view.selection_mode != SELECTION_OFF {
        // Colours are averaged (view.color_mode is categorical).
        if view.selection_mode == SELECTION_DIM_RAMP {
            color = vec4<f32>(blue_red(b.attr * view.value_scale), 1.0);
        }
        if !selected {
            color = vec4<f32>(mix(color.rgb, view.dim_color.rgb, view.dim_amount), 1.0);
        }
    }
    return color;
}
