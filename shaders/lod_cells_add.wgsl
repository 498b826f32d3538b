// Adds the level-of-detail cells' sums (`lod_cells.wgsl`) into the allocation map's
// accumulation targets, which already hold the exact blocks of the view (the accumulation
// pipeline's additive blending): one full-screen triangle.

struct AddParams {
    width: u32,
    height: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> params: AddParams;
@group(0) @binding(1) var<storage, read> sums: array<f32>;

struct Sums {
    @location(0) weighted: vec4<f32>,
    @location(1) coverage: vec4<f32>,
}

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32) -> @builtin(position) vec4<f32> {
    let uv = vec2<f32>(f32((vertex << 1u) & 2u), f32(vertex & 2u));
    return vec4<f32>(uv * vec2<f32>(2.0, -2.0) + vec2<f32>(-1.0, 1.0), 0.0, 1.0);
}

@fragment
fn fs_main(@builtin(position) pos: vec4<f32>) -> Sums {
    let px = min(u32(pos.x), params.width - 1u);
    let py = min(u32(pos.y), params.height - 1u);
    let i = (py * params.width + px) * 5u;
    var out: Sums;
    out.weighted = vec4<f32>(sums[i], sums[i + 1u], sums[i + 2u], sums[i + 3u]);
    out.coverage = vec4<f32>(sums[i + 4u], 0.0, 0.0, 0.0);
    return out;
}
