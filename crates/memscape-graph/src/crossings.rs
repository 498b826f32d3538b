//! Crossing counts of layered drawings: the number of pairs of edge segments that cross between
//! two adjacent layers, summed over all adjacent layer pairs.
//!
//! The same counter measures memscape's own layouts and Graphviz's (read back from
//! `dot -Tplain`), so that the two can be compared fairly:
//!
//! 1. Layers are the distinct y values of the node centers (within a small tolerance).
//! 2. An edge from layer `i` to layer `j` (`i < j`, either direction) is cut into `j - i`
//!    segments; its x on an intermediate layer is where its polyline crosses that layer's y (for
//!    Graphviz, the B-spline control polygon, which hugs the curve); at its end layers it is the
//!    center of the end node. Edges within one layer and cut (stub) edges are not counted.
//! 3. Two segments between the same pair of layers cross when their order on the upper layer is
//!    strictly the reverse of their order on the lower layer (segments sharing an end never
//!    cross). Counted with a merge-sort inversion count: O(E log E) per layer pair.

use std::collections::HashMap;

/// A node of a drawing: center and size, as any layout engine reports it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DrawnNode {
    pub x: f64,
    pub y: f64,
}

/// An edge of a drawing: end nodes (indices) and its route (may be empty: straight line).
#[derive(Debug, Clone, PartialEq)]
pub struct DrawnEdge {
    pub from: usize,
    pub to: usize,
    pub points: Vec<[f64; 2]>,
}

/// Counts the segment pairs `(top, bottom)` that cross: pairs with `top_a < top_b` and
/// `bottom_a > bottom_b`.
pub fn count_segment_crossings(segments: &mut [(f64, f64)]) -> u64 {
    segments.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut bottoms: Vec<f64> = segments.iter().map(|s| s.1).collect();
    let mut scratch = vec![0.0; bottoms.len()];
    inversions(&mut bottoms, &mut scratch)
}

/// Strict inversions (`a[i] > a[j]`, `i < j`), sorting `values` on the way.
fn inversions(values: &mut [f64], scratch: &mut [f64]) -> u64 {
    let n = values.len();
    if n < 2 {
        return 0;
    }
    let mid = n / 2;
    let (left, right) = values.split_at_mut(mid);
    let mut count = inversions(left, &mut scratch[..mid]) + inversions(right, &mut scratch[mid..]);
    let (mut i, mut j, mut k) = (0, 0, 0);
    while i < left.len() && j < right.len() {
        if right[j] < left[i] {
            // right[j] is smaller than every remaining left value.
            count += (left.len() - i) as u64;
            scratch[k] = right[j];
            j += 1;
        } else {
            scratch[k] = left[i];
            i += 1;
        }
        k += 1;
    }
    while i < left.len() {
        scratch[k] = left[i];
        i += 1;
        k += 1;
    }
    while j < right.len() {
        scratch[k] = right[j];
        j += 1;
        k += 1;
    }
    values.copy_from_slice(&scratch[..n]);
    count
}

/// Layers of a drawing: sorted distinct y values of node centers, merged within `tolerance`.
pub fn layer_levels(nodes: &[DrawnNode], tolerance: f64) -> Vec<f64> {
    let mut ys: Vec<f64> = nodes
        .iter()
        .map(|n| n.y)
        .filter(|y| y.is_finite())
        .collect();
    ys.sort_by(f64::total_cmp);
    let mut levels: Vec<f64> = Vec::new();
    for y in ys {
        match levels.last() {
            Some(&last) if (y - last).abs() <= tolerance => {}
            _ => levels.push(y),
        }
    }
    levels
}

/// Where a polyline first crosses the horizontal line `y` (searching from its first point).
fn x_at(points: &[[f64; 2]], y: f64) -> Option<f64> {
    for w in points.windows(2) {
        let ([x0, y0], [x1, y1]) = (w[0], w[1]);
        let (lo, hi) = if y0 <= y1 { (y0, y1) } else { (y1, y0) };
        if y >= lo && y <= hi {
            if (y1 - y0).abs() < f64::EPSILON {
                return Some(x0);
            }
            return Some(x0 + (x1 - x0) * (y - y0) / (y1 - y0));
        }
    }
    None
}

/// The crossing count of a drawing (see the module documentation) and its number of layers.
pub fn count_drawing_crossings(nodes: &[DrawnNode], edges: &[DrawnEdge]) -> (u64, usize) {
    let spread = nodes
        .iter()
        .map(|n| n.y)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), y| {
            (lo.min(y), hi.max(y))
        });
    let tolerance = ((spread.1 - spread.0).abs() * 1e-6).max(1e-6);
    let levels = layer_levels(nodes, tolerance);
    let level_of = |y: f64| -> usize {
        // Nearest level (levels are sorted).
        match levels.binary_search_by(|l| l.total_cmp(&y)) {
            Ok(i) => i,
            Err(i) => {
                if i == 0 {
                    0
                } else if i >= levels.len() {
                    levels.len().saturating_sub(1)
                } else if (y - levels[i - 1]).abs() <= (levels[i] - y).abs() {
                    i - 1
                } else {
                    i
                }
            }
        }
    };
    let mut per_gap: HashMap<usize, Vec<(f64, f64)>> = HashMap::new();
    for edge in edges {
        let (Some(a), Some(b)) = (nodes.get(edge.from), nodes.get(edge.to)) else {
            continue;
        };
        let (la, lb) = (level_of(a.y), level_of(b.y));
        if la == lb {
            continue;
        }
        let (upper, lower, lu, ll) = if la < lb {
            (a, b, la, lb)
        } else {
            (b, a, lb, la)
        };
        let mut xs = Vec::with_capacity(ll - lu + 1);
        xs.push(upper.x);
        for level in levels.iter().take(ll).skip(lu + 1) {
            let x = x_at(&edge.points, *level).unwrap_or_else(|| {
                // No route through this layer: straight line between the centers.
                upper.x + (lower.x - upper.x) * (level - upper.y) / (lower.y - upper.y)
            });
            xs.push(x);
        }
        xs.push(lower.x);
        for (k, pair) in xs.windows(2).enumerate() {
            per_gap.entry(lu + k).or_default().push((pair[0], pair[1]));
        }
    }
    let total = per_gap
        .values_mut()
        .map(|segments| count_segment_crossings(segments))
        .sum();
    (total, levels.len())
}

/// A layout read back from `dot -Tplain` (coordinates in inches, y up).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlainLayout {
    pub names: Vec<String>,
    pub nodes: Vec<DrawnNode>,
    pub edges: Vec<DrawnEdge>,
}

/// Splits a `-Tplain` line into fields, honouring double quotes.
fn plain_fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let mut field = String::new();
        if c == '"' {
            chars.next();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => {
                        if let Some(n) = chars.next() {
                            field.push(n);
                        }
                    }
                    '"' => break,
                    c => field.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                field.push(c);
                chars.next();
            }
        }
        out.push(field);
    }
    out
}

/// Parses Graphviz's `-Tplain` output: `node name x y w h …` and
/// `edge tail head n x1 y1 … xn yn …` lines (y is flipped so that layers grow downwards).
pub fn parse_dot_plain(text: &str) -> Result<PlainLayout, String> {
    let mut layout = PlainLayout::default();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (number, line) in text.lines().enumerate() {
        let fields = plain_fields(line);
        let num = |i: usize| -> Result<f64, String> {
            fields
                .get(i)
                .and_then(|f| f.parse::<f64>().ok())
                .ok_or_else(|| format!("line {}: expected a number in field {}", number + 1, i + 1))
        };
        match fields.first().map(String::as_str) {
            Some("node") => {
                let name = fields
                    .get(1)
                    .cloned()
                    .ok_or_else(|| format!("line {}: node without a name", number + 1))?;
                let (x, y) = (num(2)?, num(3)?);
                index.insert(name.clone(), layout.nodes.len());
                layout.names.push(name);
                layout.nodes.push(DrawnNode { x, y: -y });
            }
            Some("edge") => {
                let (Some(tail), Some(head)) = (fields.get(1), fields.get(2)) else {
                    return Err(format!("line {}: edge without ends", number + 1));
                };
                let count = num(3)? as usize;
                if count > fields.len() {
                    return Err(format!("line {}: edge point count too large", number + 1));
                }
                let mut points = Vec::with_capacity(count);
                for k in 0..count {
                    points.push([num(4 + 2 * k)?, -num(5 + 2 * k)?]);
                }
                let (Some(&from), Some(&to)) = (index.get(tail), index.get(head)) else {
                    return Err(format!("line {}: edge between unknown nodes", number + 1));
                };
                layout.edges.push(DrawnEdge { from, to, points });
            }
            _ => {}
        }
    }
    Ok(layout)
}

/// Crossings and layers of a `dot -Tplain` layout.
pub fn count_plain_crossings(plain: &PlainLayout) -> (u64, usize) {
    count_drawing_crossings(&plain.nodes, &plain.edges)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_crossing_segments_count_once() {
        let mut s = vec![(0.0, 1.0), (1.0, 0.0)];
        assert_eq!(count_segment_crossings(&mut s), 1);
        let mut shared_end = vec![(0.0, 1.0), (0.0, 0.0), (1.0, 1.0)];
        assert_eq!(count_segment_crossings(&mut shared_end), 0);
    }

    #[test]
    fn inversion_count_matches_brute_force() {
        let mut state = 12345u64;
        for n in 0..60 {
            let mut segs: Vec<(f64, f64)> = (0..n)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (((state >> 33) % 7) as f64, ((state >> 17) % 7) as f64)
                })
                .collect();
            let mut brute = 0;
            for i in 0..segs.len() {
                for j in 0..segs.len() {
                    if segs[i].0 < segs[j].0 && segs[i].1 > segs[j].1 {
                        brute += 1;
                    }
                }
            }
            assert_eq!(count_segment_crossings(&mut segs), brute);
        }
    }

    #[test]
    fn plain_output_is_read() {
        let text = "graph 1 2 3\nnode a 1 3 0.75 0.5 a solid ellipse black lightgrey\nnode \"b c\" 0 1 0.75 0.5 b solid ellipse black lightgrey\nedge a \"b c\" 4 1 2.8 0.8 2.2 0.4 1.6 0.2 1.2 solid black\nstop\n";
        let plain = parse_dot_plain(text).unwrap();
        assert_eq!(plain.names, vec!["a", "b c"]);
        assert_eq!(plain.edges.len(), 1);
        assert_eq!(plain.edges[0].points.len(), 4);
        assert!(parse_dot_plain("edge a b 99999999 1 2").is_err());
    }
}
