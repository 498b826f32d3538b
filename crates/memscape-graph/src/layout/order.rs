//! Crossing reduction: order the vertices of each layer.
//!
//! DFS initial order, then weighted-median sweeps (Gansner et al., the heuristic dot uses)
//! alternating downwards and upwards, each followed by transposition of adjacent vertices while
//! that lowers the crossings; the best order seen is kept. Crossings between two layers are
//! counted in O(E log V) with an accumulator (Fenwick) tree, as Barth, Jünger and Mutzel do.

use super::{Layered, LayoutOptions};

/// How a sweep ranks a vertex from its neighbours' positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ranking {
    WeightedMedian,
    Barycenter,
}

/// Fills `lg.layers` with a low-crossing order. `fixed[v] = Some(x)` pins the relative order of
/// such vertices (by `x`) within their layer.
///
/// Several starts (depth-first and breadth-first initial orders, weighted median and
/// barycenter ranking) each run sweeps to a plateau; the best order of all is kept. Medians win
/// on CFGs, barycenters on call graphs with many shared callees; trying both is cheap next to
/// the gain.
pub(crate) fn order(
    lg: &mut Layered,
    options: &LayoutOptions,
    fixed: Option<&[Option<f64>]>,
    progress: &mut dyn FnMut(f32),
) {
    let total = lg.layer.len();
    let all_starts = [
        (Initial::DepthFirst, Ranking::WeightedMedian),
        (Initial::DepthFirst, Ranking::Barycenter),
        (Initial::BreadthFirst, Ranking::WeightedMedian),
        (Initial::BreadthFirst, Ranking::Barycenter),
    ];
    // Effort scales down on huge layered graphs (long edges of call graphs make hundreds of
    // thousands of dummies): fewer starts and a shorter plateau keep the layout interactive.
    let huge = total > options.large_graph_vertices;
    let starts = if huge {
        &all_starts[1..2]
    } else {
        &all_starts[..]
    };
    let patience = if huge {
        options.patience.min(2)
    } else {
        options.patience
    };
    let max_sweeps = if huge {
        options.max_sweeps.min(8)
    } else {
        options.max_sweeps
    };
    let transpose_passes = if huge { 2 } else { 8 };
    let mut best: Option<(u64, Vec<Vec<u32>>)> = None;
    let mut pos = vec![0u32; total];
    let mut scratch = Scratch::default();
    for (k, &(initial, ranking)) in starts.iter().enumerate() {
        for layer in &mut lg.layers {
            layer.clear();
        }
        initial_order(lg, initial);
        // Connected components stay side by side in every layer: interleaving them only adds
        // crossings between edges that have nothing to do with each other. (Pinned vertices
        // may have to cross component runs, so with pins everything is one run.)
        let component = if fixed.is_some() {
            vec![0; total]
        } else {
            components(lg)
        };
        for layer in &mut lg.layers {
            layer.sort_by_key(|&v| component[v as usize]);
        }
        if let Some(fixed) = fixed {
            for l in 0..lg.layers.len() {
                impose_fixed(&mut lg.layers[l], fixed);
            }
        }
        update_positions(lg, &mut pos);
        let mut start_best = total_crossings(lg, &pos);
        let mut start_layers = lg.layers.clone();
        let mut since_best = 0;
        for sweep in 0..max_sweeps {
            if start_best == 0 {
                break;
            }
            let downwards = sweep % 2 == 0;
            sweep_layers(
                lg,
                &mut pos,
                downwards,
                ranking,
                fixed,
                &component,
                &mut scratch,
            );
            transpose(
                lg,
                &mut pos,
                fixed,
                &component,
                transpose_passes,
                &mut scratch,
            );
            let crossings = total_crossings(lg, &pos);
            if crossings < start_best {
                start_best = crossings;
                start_layers.clone_from(&lg.layers);
                since_best = 0;
            } else {
                since_best += 1;
                if since_best >= patience {
                    break;
                }
            }
        }
        if best.as_ref().is_none_or(|(c, _)| start_best < *c) {
            best = Some((start_best, start_layers));
        }
        progress((k + 1) as f32 / starts.len() as f32);
        if best.as_ref().is_some_and(|(c, _)| *c == 0) {
            break;
        }
    }
    if let Some((crossings, layers)) = best {
        lg.layers = layers;
        tracing::debug!(crossings, "crossing reduction done");
    }
}

#[derive(Default)]
struct Scratch {
    keys: Vec<(f64, u32)>,
    free_slots: Vec<usize>,
    neighbours: Vec<u32>,
    sorted_up: Vec<Vec<u32>>,
    sorted_down: Vec<Vec<u32>>,
}

/// Weakly connected components, numbered in order of their first vertex in the initial order.
fn components(lg: &Layered) -> Vec<u32> {
    let total = lg.layer.len();
    let mut comp = vec![u32::MAX; total];
    let mut next = 0u32;
    let mut stack = Vec::new();
    let first_seen: Vec<u32> = {
        // Layer-major order of the initial placement, so numbering follows the drawing.
        let mut order: Vec<u32> = lg.layers.iter().flatten().copied().collect();
        order.extend(0..total as u32);
        order
    };
    for start in first_seen {
        if comp[start as usize] != u32::MAX {
            continue;
        }
        comp[start as usize] = next;
        stack.push(start);
        while let Some(v) = stack.pop() {
            for &w in lg.up[v as usize].iter().chain(&lg.down[v as usize]) {
                if comp[w as usize] == u32::MAX {
                    comp[w as usize] = next;
                    stack.push(w);
                }
            }
        }
        next += 1;
    }
    comp
}

fn update_positions(lg: &Layered, pos: &mut [u32]) {
    for layer in &lg.layers {
        for (i, &v) in layer.iter().enumerate() {
            pos[v as usize] = i as u32;
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Initial {
    DepthFirst,
    BreadthFirst,
}

/// Depth- or breadth-first from the top vertices, each vertex appended to its layer when first
/// reached: a tree-like start in which many edges already run straight (dot starts breadth-first).
fn initial_order(lg: &mut Layered, initial: Initial) {
    let total = lg.layer.len();
    let mut seen = vec![false; total];
    let mut stack: Vec<u32> = Vec::new();
    let roots = (0..total as u32)
        .filter(|&v| lg.up[v as usize].is_empty())
        .chain(0..total as u32);
    for root in roots {
        if seen[root as usize] {
            continue;
        }
        stack.clear();
        stack.push(root);
        seen[root as usize] = true;
        let mut head = 0;
        loop {
            let v = match initial {
                Initial::DepthFirst => match stack.pop() {
                    Some(v) => v,
                    None => break,
                },
                Initial::BreadthFirst => match stack.get(head) {
                    Some(&v) => {
                        head += 1;
                        v
                    }
                    None => break,
                },
            };
            lg.layers[lg.layer[v as usize] as usize].push(v);
            let children = lg.down[v as usize].iter();
            // Depth-first pushes in reverse so that the first child is visited first.
            let children: Vec<u32> = match initial {
                Initial::DepthFirst => children.rev().copied().collect(),
                Initial::BreadthFirst => children.copied().collect(),
            };
            for w in children {
                if !seen[w as usize] {
                    seen[w as usize] = true;
                    stack.push(w);
                }
            }
        }
    }
}

/// Puts the pinned vertices of a layer back in their pinned order, in the slots they occupy.
fn impose_fixed(layer: &mut [u32], fixed: &[Option<f64>]) {
    let mut slots = Vec::new();
    let mut pinned = Vec::new();
    for (i, &v) in layer.iter().enumerate() {
        if let Some(Some(x)) = fixed.get(v as usize) {
            slots.push(i);
            pinned.push((*x, v));
        }
    }
    pinned.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (slot, (_, v)) in slots.into_iter().zip(pinned) {
        layer[slot] = v;
    }
}

/// Weighted median of sorted neighbour positions; `None` without neighbours.
fn weighted_median(p: &[u32]) -> Option<f64> {
    let n = p.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(f64::from(p[n / 2])),
        2 => Some((f64::from(p[0]) + f64::from(p[1])) / 2.0),
        _ => {
            let m = n / 2;
            let left = f64::from(p[m - 1] - p[0]);
            let right = f64::from(p[n - 1] - p[m]);
            if left + right == 0.0 {
                Some((f64::from(p[m - 1]) + f64::from(p[m])) / 2.0)
            } else {
                Some((f64::from(p[m - 1]) * right + f64::from(p[m]) * left) / (left + right))
            }
        }
    }
}

fn sweep_layers(
    lg: &mut Layered,
    pos: &mut [u32],
    downwards: bool,
    ranking: Ranking,
    fixed: Option<&[Option<f64>]>,
    component: &[u32],
    scratch: &mut Scratch,
) {
    let count = lg.layers.len();
    let layer_ids: Vec<usize> = if downwards {
        (1..count).collect()
    } else {
        (0..count.saturating_sub(1)).rev().collect()
    };
    for l in layer_ids {
        scratch.keys.clear();
        scratch.free_slots.clear();
        let layer = &lg.layers[l];
        let mut placed = layer.clone();
        for (i, &v) in layer.iter().enumerate() {
            let adjacent = if downwards {
                &lg.up[v as usize]
            } else {
                &lg.down[v as usize]
            };
            scratch.neighbours.clear();
            scratch
                .neighbours
                .extend(adjacent.iter().map(|&w| pos[w as usize]));
            scratch.neighbours.sort_unstable();
            let key = match ranking {
                Ranking::WeightedMedian => weighted_median(&scratch.neighbours),
                Ranking::Barycenter if scratch.neighbours.is_empty() => None,
                Ranking::Barycenter => Some(
                    scratch
                        .neighbours
                        .iter()
                        .map(|&p| f64::from(p))
                        .sum::<f64>()
                        / scratch.neighbours.len() as f64,
                ),
            };
            // Without neighbours on that side a vertex keeps its place.
            if let Some(m) = key {
                scratch.keys.push((m, v));
                scratch.free_slots.push(i);
            }
        }
        // Within each component's run of slots: sorted by median (components never mix, as
        // the layer is grouped by component and each group is sorted separately).
        scratch.keys.sort_by(|a, b| {
            component[a.1 as usize]
                .cmp(&component[b.1 as usize])
                .then(a.0.total_cmp(&b.0))
        });
        for (&slot, &(_, v)) in scratch.free_slots.iter().zip(&scratch.keys) {
            placed[slot] = v;
        }
        if let Some(fixed) = fixed {
            impose_fixed(&mut placed, fixed);
        }
        for (i, &v) in placed.iter().enumerate() {
            pos[v as usize] = i as u32;
        }
        lg.layers[l] = placed;
    }
}

/// Crossings between the edges of `a` and of `b` (each list sorted) when `a` is left of `b`:
/// pairs with the neighbour of `a` to the right of the neighbour of `b`.
fn pair_crossings(a: &[u32], b: &[u32]) -> u64 {
    let mut j = 0;
    let mut count = 0u64;
    for &x in a {
        while j < b.len() && b[j] < x {
            j += 1;
        }
        count += j as u64;
    }
    count
}

fn transpose(
    lg: &mut Layered,
    pos: &mut [u32],
    fixed: Option<&[Option<f64>]>,
    component: &[u32],
    passes: usize,
    scratch: &mut Scratch,
) {
    let pinned = |v: u32| fixed.is_some_and(|f| matches!(f.get(v as usize), Some(Some(_))));
    for _pass in 0..passes {
        let mut improved = false;
        for l in 0..lg.layers.len() {
            let len = lg.layers[l].len();
            if len < 2 {
                continue;
            }
            // Neighbour layers do not move while this layer is transposed: sort once.
            scratch.sorted_up.resize_with(len, Vec::new);
            scratch.sorted_down.resize_with(len, Vec::new);
            for (i, &v) in lg.layers[l].iter().enumerate() {
                let up = &mut scratch.sorted_up[i];
                up.clear();
                up.extend(lg.up[v as usize].iter().map(|&w| pos[w as usize]));
                up.sort_unstable();
                let down = &mut scratch.sorted_down[i];
                down.clear();
                down.extend(lg.down[v as usize].iter().map(|&w| pos[w as usize]));
                down.sort_unstable();
            }
            for i in 0..len - 1 {
                let (v, w) = (lg.layers[l][i], lg.layers[l][i + 1]);
                if (pinned(v) && pinned(w)) || component[v as usize] != component[w as usize] {
                    continue;
                }
                let (ui, uj) = (&scratch.sorted_up[i], &scratch.sorted_up[i + 1]);
                let (di, dj) = (&scratch.sorted_down[i], &scratch.sorted_down[i + 1]);
                let as_is = pair_crossings(ui, uj) + pair_crossings(di, dj);
                let swapped = pair_crossings(uj, ui) + pair_crossings(dj, di);
                if swapped < as_is {
                    lg.layers[l].swap(i, i + 1);
                    scratch.sorted_up.swap(i, i + 1);
                    scratch.sorted_down.swap(i, i + 1);
                    pos[v as usize] = (i + 1) as u32;
                    pos[w as usize] = i as u32;
                    improved = true;
                }
            }
        }
        if !improved {
            break;
        }
    }
}

/// Total crossings between all adjacent layer pairs.
pub(crate) fn total_crossings(lg: &Layered, pos: &[u32]) -> u64 {
    let mut total = 0;
    let mut sequence = Vec::new();
    let mut tree = Vec::new();
    for l in 0..lg.layers.len().saturating_sub(1) {
        sequence.clear();
        for &v in &lg.layers[l] {
            let start = sequence.len();
            sequence.extend(lg.down[v as usize].iter().map(|&w| pos[w as usize]));
            sequence[start..].sort_unstable();
        }
        total += count_inversions(&sequence, lg.layers[l + 1].len(), &mut tree);
    }
    total
}

/// Pairs `i < j` with `seq[i] > seq[j]`, values in `0..south`: Fenwick tree accumulation.
fn count_inversions(seq: &[u32], south: usize, tree: &mut Vec<u64>) -> u64 {
    tree.clear();
    tree.resize(south + 1, 0);
    let mut count = 0u64;
    for (inserted, &p) in seq.iter().enumerate() {
        // Number of inserted values <= p.
        let mut i = p as usize + 1;
        let mut not_greater = 0;
        while i > 0 {
            not_greater += tree[i];
            i &= i - 1;
        }
        count += inserted as u64 - not_greater;
        let mut i = p as usize + 1;
        while i <= south {
            tree[i] += 1;
            i += i & i.wrapping_neg();
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fenwick_inversions_match_brute_force() {
        let mut tree = Vec::new();
        let seq = [3u32, 1, 2, 0, 3, 2];
        let brute = (0..seq.len())
            .flat_map(|i| (i + 1..seq.len()).map(move |j| (i, j)))
            .filter(|&(i, j)| seq[i] > seq[j])
            .count() as u64;
        assert_eq!(count_inversions(&seq, 4, &mut tree), brute);
    }

    #[test]
    fn weighted_median_of_even_lists_leans_to_the_denser_side() {
        assert_eq!(weighted_median(&[]), None);
        assert_eq!(weighted_median(&[4]), Some(4.0));
        assert_eq!(weighted_median(&[2, 4]), Some(3.0));
        // left spread 0, right spread 6: the median sticks to the left middle value.
        assert_eq!(weighted_median(&[1, 1, 2, 8]), Some(1.0));
    }

    #[test]
    fn pair_crossings_counts_inverted_pairs() {
        assert_eq!(pair_crossings(&[2, 3], &[0, 1]), 4);
        assert_eq!(pair_crossings(&[0, 1], &[2, 3]), 0);
        assert_eq!(pair_crossings(&[1], &[1]), 0);
    }
}
