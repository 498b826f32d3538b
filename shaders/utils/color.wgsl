// Colour helpers shared by every pipeline. CPU twin: crates/memscape-render/src/color.rs.

fn srgb_to_linear(c: vec3<f32>) -> vec3<f32> {
    let lo = c / 12.92;
    let hi = pow((c + 0.055) / 1.055, vec3<f32>(2.4));
    return select(hi, lo, c <= vec3<f32>(0.04045));
}

fn linear_to_srgb(c: vec3<f32>) -> vec3<f32> {
    let x = clamp(c, vec3<f32>(0.0), vec3<f32>(1.0));
    let lo = x * 12.92;
    let hi = 1.055 * pow(x, vec3<f32>(1.0 / 2.4)) - 0.055;
    return select(hi, lo, x <= vec3<f32>(0.0031308));
}

fn unpack_rgba8_srgb_to_linear(packed: u32) -> vec4<f32> {
    let c = unpack4x8unorm(packed);
    return vec4<f32>(srgb_to_linear(c.rgb), c.a);
}

// Blue (low) -> red (high) ramp through cyan, green-yellow and orange, defined by five sRGB stops
// and interpolated in linear light. Keep the stops in sync with BLUE_RED_STOPS in color.rs.
fn blue_red(t_in: f32) -> vec3<f32> {
    let t = clamp(t_in, 0.0, 1.0) * 4.0;
    let i = min(u32(floor(t)), 3u);
    let f = t - f32(i);
    var stops = array<vec3<f32>, 5>(
        vec3<f32>(0.192, 0.212, 0.584),
        vec3<f32>(0.271, 0.459, 0.706),
        vec3<f32>(0.996, 0.878, 0.565),
        vec3<f32>(0.957, 0.427, 0.263),
        vec3<f32>(0.647, 0.000, 0.149),
    );
    return mix(srgb_to_linear(stops[i]), srgb_to_linear(stops[i + 1u]), f);
}
