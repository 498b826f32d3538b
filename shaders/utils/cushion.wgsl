// Cushion shading (van Wijk & van de Wetering's cushion treemaps, as Moreta & Telea use them):
// each block is a height field over its rectangle, shaded with a fixed light. CPU twin:
// crates/memscape-render/src/alloc_map/cpu_reference.rs (`cushion_luminance`).

const CUSHION_NONE: u32 = 0u;
const CUSHION_PARABOLIC: u32 = 1u;
const CUSHION_PLATEAU: u32 = 2u;

// Fraction of a block's extent (per side) taken by the plateau's bevel.
const PLATEAU_BEVEL: f32 = 0.2;
const AMBIENT: f32 = 0.35;
const DIFFUSE: f32 = 0.65;

// Slope dh/du of the profile at u in [0,1] along one axis, scaled so that the steepest slope is 1.
fn cushion_slope(kind: u32, u: f32) -> f32 {
    if kind == CUSHION_PARABOLIC {
        // h = 4u(1-u): dh/du = 4(1-2u), in [-4, 4]; normalised.
        return 1.0 - 2.0 * u;
    }
    if kind == CUSHION_PLATEAU {
        if u < PLATEAU_BEVEL { return 1.0; }
        if u > 1.0 - PLATEAU_BEVEL { return -1.0; }
        return 0.0;
    }
    return 0.0;
}

// A profile cannot show on a block a pixel or two wide: its slope fades in from 1 to 4 pixels.
fn cushion_size_fade(extent_px: f32) -> f32 {
    return clamp((extent_px - 1.0) / 3.0, 0.0, 1.0);
}

// Luminance factor at normalised position uv inside a block of size_px pixels; 1 on flat ground.
fn cushion_luminance(kind: u32, strength: f32, uv: vec2<f32>, size_px: vec2<f32>, light: vec3<f32>) -> f32 {
    if kind == CUSHION_NONE || strength <= 0.0 {
        return 1.0;
    }
    let sx = cushion_slope(kind, uv.x) * cushion_size_fade(size_px.x);
    let sy = cushion_slope(kind, uv.y) * cushion_size_fade(size_px.y);
    let n = normalize(vec3<f32>(-sx * strength, -sy * strength, 1.0));
    let flat = AMBIENT + DIFFUSE * light.z;
    let lit = AMBIENT + DIFFUSE * max(dot(n, light), 0.0);
    return lit / flat;
}

// The allocation map's blocks: as `cushion_luminance`, except that the parabolic profile along
// x (time) is interpolated linearly between CUSHION_KNOTS + 1 knots u = k / CUSHION_KNOTS. Along
// a pixel row the luminance of a block is then piecewise linear in the column, which the dense
// path (alloc_map_dense.wgsl) adds in O(knots) per row with difference arrays instead of per
// pixel. With the default relief (strength 1) the interpolation moves the luminance by at most
// 0.5 %; at the slider's maximum (3) by at most 4 %, next to the kink where the lit side meets
// the ambient-only side. The vertical (address) profile stays exact: it is constant along a row.
// CPU twin: `block_cushion_luminance` in crates/memscape-render/src/alloc_map/cpu_reference.rs.
const CUSHION_KNOTS: f32 = 8.0;

// The knot interval [j, j + 1) / CUSHION_KNOTS that holds u (u in [0, 1]).
fn cushion_knot_interval(u: f32) -> f32 {
    return min(floor(u * CUSHION_KNOTS), CUSHION_KNOTS - 1.0);
}

fn block_cushion_luminance(kind: u32, strength: f32, uv: vec2<f32>, size_px: vec2<f32>, light: vec3<f32>) -> f32 {
    if kind != CUSHION_PARABOLIC {
        return cushion_luminance(kind, strength, uv, size_px, light);
    }
    let j = cushion_knot_interval(uv.x);
    let l0 = cushion_luminance(kind, strength, vec2<f32>(j / CUSHION_KNOTS, uv.y), size_px, light);
    let l1 = cushion_luminance(kind, strength, vec2<f32>((j + 1.0) / CUSHION_KNOTS, uv.y), size_px, light);
    return l0 + (l1 - l0) * (uv.x * CUSHION_KNOTS - j);
}
