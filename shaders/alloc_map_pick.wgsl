// Allocation map picking: which block covers a pixel most. Drawn into a small window of the view
// (a few pixels around the cursor), never the whole view: each block's geometry is computed in
// the view's pixels exactly as the accumulate pass does, clamped to the window, and its exact
// box coverage f of each window pixel becomes the fragment's depth. The depth test (GreaterEqual,
// cleared to 0) keeps the largest f; on equal f the later draw wins, i.e. the higher block index
// (instances and chunks are drawn in index order, and rasterization order is guaranteed).
// The colour target (Rg32Uint) gets (block index + 1, bits of f); 0 means no block.
// CPU twin: crates/memscape-render/src/alloc_map/cpu_reference.rs (`pick_window`).

#import "utils/u64.wgsl"
#import "alloc_map_common.wgsl"

const EDGE_SLACK: f32 = 1.0 / 256.0;

// Keep in sync with `PickWindowGpu` in crates/memscape-render/src/alloc_map/pick.rs (16 bytes).
struct PickWindow {
    origin_px: vec2<f32>, // the window's top-left pixel in the view (integer)
    size_px: vec2<f32>,   // the window's size in pixels
}

@group(0) @binding(0) var<uniform> view: AllocMapView;
@group(0) @binding(1) var<uniform> window: PickWindow;
@group(1) @binding(0) var<storage, read> blocks: array<AllocBlock>;
@group(1) @binding(1) var<storage, read> times: array<BlockTime>;
@group(1) @binding(2) var<uniform> chunk: ChunkInfo;

struct VertexOut {
    @builtin(position) position: vec4<f32>,
    @location(0) @interpolate(flat) geometry: vec4<f32>,
    @location(1) @interpolate(flat) block: u32,
}

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32, @builtin(instance_index) instance: u32) -> VertexOut {
    let g = block_geometry_px(view, blocks[instance], times[instance]);
    let lo = window.origin_px;
    let hi = window.origin_px + window.size_px;
    let c = clamp_geometry_rect(g, lo, hi, 2.0);
    // Whole pixels, as in the accumulate pass; then into the window's clip space.
    let q0 = floor(vec2<f32>(c.x, c.y - c.w) - EDGE_SLACK);
    let q1 = max(ceil(vec2<f32>(c.x + c.z, c.y) + EDGE_SLACK), q0 + 1.0);
    var corner_ids = array<u32, 6>(0u, 1u, 2u, 2u, 1u, 3u);
    let corner = corner_ids[vertex];
    let p = vec2<f32>(select(q0.x, q1.x, (corner & 1u) != 0u), select(q0.y, q1.y, (corner & 2u) != 0u));
    let local = (p - lo) / window.size_px;
    var out: VertexOut;
    out.position = vec4<f32>(local.x * 2.0 - 1.0, 1.0 - local.y * 2.0, 0.0, 1.0);
    out.geometry = c;
    out.block = chunk.base + instance;
    return out;
}

struct FragmentOut {
    @location(0) id: vec2<u32>,
    @builtin(frag_depth) depth: f32,
}

@fragment
fn fs_main(in: VertexOut) -> FragmentOut {
    let pixel_lo = floor(in.position.xy) + window.origin_px;
    let f = box_coverage(in.geometry, pixel_lo);
    if f <= 0.0 {
        discard;
    }
    var out: FragmentOut;
    out.id = vec2<u32>(in.block + 1u, bitcast<u32>(f));
    out.depth = f;
    return out;
}
