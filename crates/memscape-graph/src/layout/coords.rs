//! Horizontal coordinates: Brandes & Köpf, "Fast and Simple Horizontal Coordinate Assignment"
//! (GD 2001). Four vertical alignments (up/down × left/right), each compacted into blocks with
//! classes and shifts, then balanced (average of the two median candidates per vertex). Long
//! edges run straight because type-1 conflicts (a non-inner segment crossing an inner,
//! dummy-to-dummy segment) are resolved in favour of the inner segment. A final left-to-right pass
//! restores the minimum separation where balancing brought two vertices too close.

use std::collections::HashSet;

use super::Layered;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Gaps {
    pub node: f64,
    pub edge: f64,
}

fn separation(lg: &Layered, gaps: Gaps, a: u32, b: u32) -> f64 {
    let (a, b) = (a as usize, b as usize);
    let gap = if lg.is_dummy[a] && lg.is_dummy[b] {
        gaps.edge
    } else if lg.is_dummy[a] || lg.is_dummy[b] {
        (gaps.node + gaps.edge) / 2.0
    } else {
        gaps.node
    };
    (lg.width[a] + lg.width[b]) / 2.0 + gap
}

/// Marks non-inner segments that cross an inner segment, as `(upper, lower)` pairs.
fn type1_conflicts(lg: &Layered, pos: &[u32]) -> HashSet<(u32, u32)> {
    let mut marked = HashSet::new();
    for i in 0..lg.layers.len().saturating_sub(1) {
        let upper_len = lg.layers[i].len();
        let lower = &lg.layers[i + 1];
        if upper_len == 0 {
            continue;
        }
        let mut k0 = 0u32;
        let mut l = 0usize;
        for (l1, &v) in lower.iter().enumerate() {
            let inner = if lg.is_dummy[v as usize] {
                lg.up[v as usize]
                    .iter()
                    .copied()
                    .find(|&u| lg.is_dummy[u as usize])
            } else {
                None
            };
            if l1 + 1 == lower.len() || inner.is_some() {
                let k1 = inner.map_or(upper_len as u32 - 1, |u| pos[u as usize]);
                while l <= l1 {
                    let w = lower[l];
                    for &u in &lg.up[w as usize] {
                        let both_dummies = lg.is_dummy[u as usize] && lg.is_dummy[w as usize];
                        let k = pos[u as usize];
                        if !both_dummies && (k < k0 || k > k1) {
                            marked.insert((u, w));
                        }
                    }
                    l += 1;
                }
                k0 = k1;
            }
        }
    }
    marked
}

/// One of the four alignments: x per vertex (in the un-mirrored direction).
fn align_and_compact(
    lg: &Layered,
    gaps: Gaps,
    marked: &HashSet<(u32, u32)>,
    downwards: bool,
    leftwards: bool,
) -> Vec<f64> {
    let total = lg.layer.len();
    // Transformed layers: mirror horizontally for right alignments.
    let layers: Vec<Vec<u32>> = lg
        .layers
        .iter()
        .map(|layer| {
            if leftwards {
                layer.clone()
            } else {
                layer.iter().rev().copied().collect()
            }
        })
        .collect();
    let mut pos = vec![0u32; total];
    for layer in &layers {
        for (i, &v) in layer.iter().enumerate() {
            pos[v as usize] = i as u32;
        }
    }
    let mut root: Vec<u32> = (0..total as u32).collect();
    let mut align: Vec<u32> = (0..total as u32).collect();
    let order: Vec<usize> = if downwards {
        (0..layers.len()).collect()
    } else {
        (0..layers.len()).rev().collect()
    };
    let mut neighbours: Vec<u32> = Vec::new();
    for &l in order.iter().skip(1) {
        let mut r: i64 = -1;
        for &v in &layers[l] {
            let adjacent = if downwards {
                &lg.up[v as usize]
            } else {
                &lg.down[v as usize]
            };
            if adjacent.is_empty() {
                continue;
            }
            neighbours.clear();
            neighbours.extend_from_slice(adjacent);
            neighbours.sort_unstable_by_key(|&u| pos[u as usize]);
            let d = neighbours.len();
            let (lo, hi) = ((d - 1) / 2, d / 2);
            for &u in &neighbours[lo..=hi] {
                if align[v as usize] != v {
                    break;
                }
                let key = if downwards { (u, v) } else { (v, u) };
                if !marked.contains(&key) && r < i64::from(pos[u as usize]) {
                    align[u as usize] = v;
                    root[v as usize] = root[u as usize];
                    align[v as usize] = root[v as usize];
                    r = i64::from(pos[u as usize]);
                }
            }
        }
    }

    // Horizontal compaction, iterative (a recursive place_block overflows the stack on long
    // block chains).
    let mut sink: Vec<u32> = (0..total as u32).collect();
    let mut shift = vec![f64::INFINITY; total];
    let mut x = vec![f64::NAN; total];
    let mut stack: Vec<(u32, u32)> = Vec::new();
    for start in 0..total as u32 {
        if root[start as usize] != start || !x[start as usize].is_nan() {
            continue;
        }
        x[start as usize] = 0.0;
        stack.push((start, start));
        while let Some(&(v, w)) = stack.last() {
            let (vi, wi) = (v as usize, w as usize);
            let p = pos[wi];
            if p > 0 {
                let left = layers[lg.layer[wi] as usize][p as usize - 1];
                let u = root[left as usize];
                let ui = u as usize;
                if x[ui].is_nan() {
                    // Place the block on the left first, then come back to this same step.
                    x[ui] = 0.0;
                    stack.push((u, u));
                    continue;
                }
                let sep = separation(lg, gaps, left, w);
                if sink[vi] == v {
                    sink[vi] = sink[ui];
                }
                if sink[vi] != sink[ui] {
                    let s = sink[ui] as usize;
                    shift[s] = shift[s].min(x[vi] - x[ui] - sep);
                } else {
                    x[vi] = x[vi].max(x[ui] + sep);
                }
            }
            let next = align[wi];
            if next == v {
                stack.pop();
            } else if let Some(top) = stack.last_mut() {
                top.1 = next;
            }
        }
    }
    let mut out = vec![0.0; total];
    for v in 0..total {
        let r = root[v] as usize;
        let mut xv = x[r];
        let s = shift[sink[r] as usize];
        if s.is_finite() {
            xv += s;
        }
        out[v] = if leftwards { xv } else { -xv };
    }
    out
}

/// Balanced Brandes–Köpf x coordinates (vertex centers) for every vertex of `lg`.
pub(crate) fn brandes_kopf(lg: &Layered, gaps: Gaps) -> Vec<f64> {
    let total = lg.layer.len();
    if total == 0 {
        return Vec::new();
    }
    let mut pos = vec![0u32; total];
    for layer in &lg.layers {
        for (i, &v) in layer.iter().enumerate() {
            pos[v as usize] = i as u32;
        }
    }
    let marked = type1_conflicts(lg, &pos);
    let mut candidates: Vec<Vec<f64>> = Vec::with_capacity(4);
    let mut extents: Vec<(f64, f64)> = Vec::with_capacity(4);
    for (downwards, leftwards) in [(true, true), (true, false), (false, true), (false, false)] {
        let x = align_and_compact(lg, gaps, &marked, downwards, leftwards);
        let lo = (0..total)
            .map(|v| x[v] - lg.width[v] / 2.0)
            .fold(f64::INFINITY, f64::min);
        let hi = (0..total)
            .map(|v| x[v] + lg.width[v] / 2.0)
            .fold(f64::NEG_INFINITY, f64::max);
        candidates.push(x);
        extents.push((lo, hi));
    }
    let narrowest = (0..4)
        .min_by(|&a, &b| (extents[a].1 - extents[a].0).total_cmp(&(extents[b].1 - extents[b].0)))
        .unwrap_or(0);
    let (target_lo, target_hi) = extents[narrowest];
    for (k, x) in candidates.iter_mut().enumerate() {
        let leftwards = k % 2 == 0;
        let delta = if leftwards {
            target_lo - extents[k].0
        } else {
            target_hi - extents[k].1
        };
        for xv in x.iter_mut() {
            *xv += delta;
        }
    }
    let mut x = vec![0.0; total];
    let mut four = [0.0f64; 4];
    for v in 0..total {
        for k in 0..4 {
            four[k] = candidates[k][v];
        }
        four.sort_by(f64::total_cmp);
        x[v] = (four[1] + four[2]) / 2.0;
    }
    // Guarantee the separation (balancing may bring neighbours too close).
    for layer in &lg.layers {
        for pair in layer.windows(2) {
            let min = x[pair[0] as usize] + separation(lg, gaps, pair[0], pair[1]);
            if x[pair[1] as usize] < min {
                x[pair[1] as usize] = min;
            }
        }
    }
    x
}
