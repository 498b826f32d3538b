// Allocation map, pass 1: every block's exact box-filter coverage of every pixel it touches,
// accumulated additively into float targets (Moreta & Telea's biased anti-aliasing, Eq. 1).
//
//   target 0 (rgba): rgb = Σ f_i^α · c_i · L_i   (categorical)   or (Σ f_i^α a_i, Σ f_i^α L_i, 0)
//                    a   = F = Σ f_i^α
//   target 1 (r):    Σ f_i
//
// f_i is the block's area inside the pixel divided by the pixel's area, computed analytically, so
// a block a thousandth of a pixel wide still adds its exact share. Quads are inflated to whole
// pixels: the rasterizer only decides which pixels to visit, never how much a block covers.
// CPU twin: crates/memscape-render/src/alloc_map/cpu_reference.rs.

#import "utils/u64.wgsl"
#import "utils/color.wgsl"
#import "utils/cushion.wgsl"
#import "alloc_map_common.wgsl"

const EDGE_SLACK: f32 = 1.0 / 256.0;

@group(0) @binding(0) var<uniform> view: AllocMapView;
@group(1) @binding(0) var<storage, read> blocks: array<AllocBlock>;
@group(1) @binding(1) var<storage, read> times: array<BlockTime>;
@group(1) @binding(2) var<uniform> chunk: ChunkInfo;
// One bit per block of the whole upload (bit i % 32 of word i / 32): the selection.
@group(1) @binding(3) var<storage, read> selection: array<u32>;

struct VertexOut {
    @builtin(position) position: vec4<f32>,
    // Block geometry in target pixels (x0, y_bottom, width, height), clamped near the viewport.
    @location(0) @interpolate(flat) geometry: vec4<f32>,
    // Unclamped block size in pixels, for the cushion profile.
    @location(1) @interpolate(flat) size_px: vec2<f32>,
    // Unclamped top-left corner, for the cushion's u, v.
    @location(2) @interpolate(flat) origin_px: vec2<f32>,
    @location(3) @interpolate(flat) color: vec4<f32>,
    @location(4) @interpolate(flat) attr: f32,
    @location(5) @interpolate(flat) cushion: u32,
}

// Raster list of the dense path (alloc_map_dense.wgsl): a header of indirect draw arguments (4
// words per chunk), then per chunk the chunk-local indices of the blocks left to this pass.
@group(2) @binding(0) var<storage, read> raster_list: array<u32>;

// Every block of the draw range, instance = chunk-local block index.
@vertex
fn vs_main(@builtin(vertex_index) vertex: u32, @builtin(instance_index) instance: u32) -> VertexOut {
    return block_vertex(vertex, instance);
}

// The blocks the dense path's compute pass left to the rasterizer (drawn indirectly).
@vertex
fn vs_listed(@builtin(vertex_index) vertex: u32, @builtin(instance_index) instance: u32) -> VertexOut {
    return block_vertex(vertex, raster_list[chunk.list_offset + chunk.base + instance]);
}

fn block_vertex(vertex: u32, instance: u32) -> VertexOut {
    let b = blocks[instance];
    let t = times[instance];
    let g = block_geometry_px(view, b, t);
    let c = clamp_geometry(g, view.viewport_px, 2.0);

    // Inflate to whole pixels: every pixel whose box the block touches has its centre inside.
    // EDGE_SLACK widens by a fraction of a pixel so that a sub-pixel block on an integer edge,
    // whose far edge rounds onto that edge in f32, still gets its pixel visited.
    let q0 = floor(vec2<f32>(c.x, c.y - c.w) - EDGE_SLACK);
    let q1 = max(ceil(vec2<f32>(c.x + c.z, c.y) + EDGE_SLACK), q0 + 1.0);
    // Two triangles from the vertex index bits: 0,1,2 / 2,1,3 over corners (x bit 0, y bit 1).
    var corner_ids = array<u32, 6>(0u, 1u, 2u, 2u, 1u, 3u);
    let corner = corner_ids[vertex];
    let p = vec2<f32>(select(q0.x, q1.x, (corner & 1u) != 0u), select(q0.y, q1.y, (corner & 2u) != 0u));
    let ndc = vec2<f32>(p.x / view.viewport_px.x * 2.0 - 1.0, 1.0 - p.y / view.viewport_px.y * 2.0);

    var out: VertexOut;
    out.position = vec4<f32>(ndc, 0.0, 1.0);
    out.cushion = view.cushion_kind;
    if view.gap_mode != GAP_NONE {
        let is_gap = g.z >= view.gap_min_px;
        if view.gap_mode == GAP_HIDE && is_gap {
            // Every corner at one point outside the clip volume: no fragments.
            out.position = vec4<f32>(-2.0, -2.0, 0.0, 1.0);
        }
        if view.gap_mode == GAP_CUSHION && !is_gap {
            out.cushion = CUSHION_NONE;
        }
    }
    out.geometry = c;
    out.size_px = g.zw;
    out.origin_px = vec2<f32>(g.x, g.y - g.w);
    var selected = true;
    if view.selection_mode != SELECTION_OFF {
        let i = chunk.base + instance;
        selected = ((selection[i >> 5u] >> (i & 31u)) & 1u) != 0u;
    }
    out.color = shaded_block_color(view, b, selected);
    out.attr = b.attr;
    return out;
}

struct FragmentOut {
    @location(0) weighted: vec4<f32>,
    @location(1) coverage: f32,
}

@fragment
fn fs_main(in: VertexOut) -> FragmentOut {
    let pixel_lo = floor(in.position.xy);
    let f = box_coverage(in.geometry, pixel_lo);
    if f <= 0.0 {
        discard;
    }
    let w = pow(f, view.alpha);
    let centre = pixel_lo + 0.5;
    let uv = clamp((centre - in.origin_px) / max(in.size_px, vec2<f32>(1e-6)), vec2<f32>(0.0), vec2<f32>(1.0));
    let lum = block_cushion_luminance(in.cushion, view.cushion_strength, uv, in.size_px, view.light.xyz);

    var out: FragmentOut;
    if view.color_mode == COLOR_MODE_QUANTITATIVE {
        out.weighted = vec4<f32>(w * in.attr, w * lum, 0.0, w);
    } else {
        out.weighted = vec4<f32>(w * in.color.rgb * lum, w);
    }
    out.coverage = f;
    return out;
}
