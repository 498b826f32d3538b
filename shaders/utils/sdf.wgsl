// Signed distances in pixels (negative inside) and their one-pixel coverage ramp, shared by the
// shape and cycle pipelines. CPU twin: crates/memscape-render/src/shapes/cpu_reference.rs.

const PI: f32 = 3.14159265358979;

fn sd_rect(p: vec2<f32>, lo: vec2<f32>, hi: vec2<f32>, radius: f32) -> f32 {
    let c = 0.5 * (lo + hi);
    let half = 0.5 * (hi - lo);
    let r = clamp(radius, 0.0, min(half.x, half.y));
    let d = abs(p - c) - half + r;
    return length(max(d, vec2<f32>(0.0))) + min(max(d.x, d.y), 0.0) - r;
}

fn sd_sector(p: vec2<f32>, c: vec2<f32>, r0: f32, r1: f32, a0: f32, a1: f32) -> f32 {
    let v = p - c;
    let r = length(v);
    let radial = abs(r - 0.5 * (r0 + r1)) - 0.5 * (r1 - r0);
    let half_span = 0.5 * (a1 - a0);
    if half_span >= PI {
        return radial;
    }
    let mid = 0.5 * (a0 + a1);
    // Angle of p from the sector's middle, wrapped to [-π, π].
    var phi = atan2(v.y, v.x) - mid;
    phi = phi - 2.0 * PI * floor((phi + PI) / (2.0 * PI));
    let off = abs(phi) - half_span;
    // Distance to the nearer bounding ray: r·sin(off) near the edge, r beyond a right angle.
    var angular: f32;
    if off > 0.5 * PI {
        angular = r;
    } else {
        angular = r * sin(off);
    }
    return max(radial, angular);
}

fn sd_segment(p: vec2<f32>, a: vec2<f32>, b: vec2<f32>, half_width: f32) -> f32 {
    let ab = b - a;
    let len2 = dot(ab, ab);
    var h = 0.0;
    if len2 > 1e-12 {
        h = clamp(dot(p - a, ab) / len2, 0.0, 1.0);
    }
    return length(p - a - ab * h) - half_width;
}

fn coverage(d: f32) -> f32 {
    return clamp(0.5 - d, 0.0, 1.0);
}

