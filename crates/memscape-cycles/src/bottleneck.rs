//! Bottleneck distance between two barcodes: the smallest δ such that the bars can be matched
//! one to one, each bar either to a bar of the other barcode with both ends within δ (the L∞
//! distance of the points `(birth, death)`) or to the diagonal when half its length is at most
//! δ. Infinite bars match only infinite bars (by birth).
//!
//! Barcodes of Levenshtein windows have integer ends and many equal bars, so bars are grouped
//! into distinct points with multiplicities and each candidate δ is tested by a maximum flow on
//! the small graph of points (source → points of A → points of B or A's diagonal → sink, with
//! B's diagonal copies matching A's freely), instead of a matching of individual bars.

use std::collections::{BTreeMap, VecDeque};

use crate::rips::Bar;

/// The bottleneck distance of two barcodes (`f64::INFINITY` when their infinite bars differ
/// in number).
pub fn bottleneck_distance(a: &[Bar], b: &[Bar]) -> f64 {
    let split = |bars: &[Bar]| {
        let mut finite: BTreeMap<(u64, u64), usize> = BTreeMap::new();
        let mut infinite: Vec<f64> = Vec::new();
        for bar in bars {
            match bar.1 {
                Some(d) if d > bar.0 => {
                    *finite
                        .entry((f64::from(bar.0).to_bits(), f64::from(d).to_bits()))
                        .or_default() += 1;
                }
                Some(_) => {}
                None => infinite.push(f64::from(bar.0)),
            }
        }
        let points: Vec<(f64, f64, usize)> = finite
            .into_iter()
            .map(|((b, d), m)| (f64::from_bits(b), f64::from_bits(d), m))
            .collect();
        infinite.sort_by(f64::total_cmp);
        (points, infinite)
    };
    let (pa, ia) = split(a);
    let (pb, ib) = split(b);
    if ia.len() != ib.len() {
        return f64::INFINITY;
    }
    // Infinite bars: sorted births matched in order is optimal for the L∞ cost on a line.
    let infinite = ia
        .iter()
        .zip(&ib)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    // Candidate values: every pairwise L∞ distance and every half length.
    let mut candidates: Vec<f64> = vec![0.0];
    for &(b1, d1, _) in &pa {
        candidates.push((d1 - b1) / 2.0);
        for &(b2, d2, _) in &pb {
            candidates.push((b1 - b2).abs().max((d1 - d2).abs()));
        }
    }
    candidates.extend(pb.iter().map(|&(b2, d2, _)| (d2 - b2) / 2.0));
    candidates.sort_by(f64::total_cmp);
    candidates.dedup();
    // The smallest feasible candidate (the largest candidate is always feasible: every bar
    // to the diagonal).
    let (mut lo, mut hi) = (0, candidates.len() - 1);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if matches_within(&pa, &pb, candidates[mid]) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    candidates[lo].max(infinite)
}

/// Whether every bar of `a` and `b` can be matched within `delta`.
fn matches_within(a: &[(f64, f64, usize)], b: &[(f64, f64, usize)], delta: f64) -> bool {
    // Nodes: source, A points, B's diagonal copies, B points, A's diagonal copies, sink.
    let (na, nb) = (a.len(), b.len());
    let source = 0;
    let a_node = |i: usize| 1 + i;
    let b_diag = |j: usize| 1 + na + j;
    let b_node = |j: usize| 1 + na + nb + j;
    let a_diag = |i: usize| 1 + na + 2 * nb + i;
    let sink = 1 + 2 * na + 2 * nb;
    let mut flow = Flow::new(sink + 1);
    let total: usize = a.iter().map(|p| p.2).sum::<usize>() + b.iter().map(|p| p.2).sum::<usize>();
    let near = |p: &(f64, f64, usize), q: &(f64, f64, usize)| {
        (p.0 - q.0).abs().max((p.1 - q.1).abs()) <= delta
    };
    for (i, p) in a.iter().enumerate() {
        flow.edge(source, a_node(i), p.2);
        for (j, q) in b.iter().enumerate() {
            if near(p, q) {
                flow.edge(a_node(i), b_node(j), usize::MAX);
            }
        }
        if (p.1 - p.0) / 2.0 <= delta {
            flow.edge(a_node(i), a_diag(i), usize::MAX);
        }
        flow.edge(a_diag(i), sink, p.2);
    }
    for (j, q) in b.iter().enumerate() {
        flow.edge(source, b_diag(j), q.2);
        if (q.1 - q.0) / 2.0 <= delta {
            flow.edge(b_diag(j), b_node(j), usize::MAX);
        }
        // Diagonal to diagonal costs nothing.
        for i in 0..na {
            flow.edge(b_diag(j), a_diag(i), usize::MAX);
        }
        flow.edge(b_node(j), sink, q.2);
    }
    flow.max_flow(source, sink) == total
}

/// Dinic's maximum flow on a small graph.
struct Flow {
    head: Vec<usize>,
    to: Vec<usize>,
    capacity: Vec<usize>,
    next: Vec<usize>,
}

const NONE: usize = usize::MAX;

impl Flow {
    fn new(nodes: usize) -> Self {
        Self {
            head: vec![NONE; nodes],
            to: Vec::new(),
            capacity: Vec::new(),
            next: Vec::new(),
        }
    }

    fn edge(&mut self, from: usize, to: usize, capacity: usize) {
        for (a, b, c) in [(from, to, capacity), (to, from, 0)] {
            self.to.push(b);
            self.capacity.push(c);
            self.next.push(self.head[a]);
            self.head[a] = self.to.len() - 1;
        }
    }

    fn max_flow(&mut self, source: usize, sink: usize) -> usize {
        let n = self.head.len();
        let mut total = 0usize;
        loop {
            let mut level = vec![usize::MAX; n];
            level[source] = 0;
            let mut queue = VecDeque::from([source]);
            while let Some(v) = queue.pop_front() {
                let mut e = self.head[v];
                while e != NONE {
                    if self.capacity[e] > 0 && level[self.to[e]] == usize::MAX {
                        level[self.to[e]] = level[v] + 1;
                        queue.push_back(self.to[e]);
                    }
                    e = self.next[e];
                }
            }
            if level[sink] == usize::MAX {
                return total;
            }
            let mut cursor = self.head.clone();
            loop {
                let pushed = self.push(source, sink, usize::MAX, &level, &mut cursor);
                if pushed == 0 {
                    break;
                }
                total = total.saturating_add(pushed);
            }
        }
    }

    /// One augmenting path in the level graph (iterative depth-first search).
    fn push(
        &mut self,
        source: usize,
        sink: usize,
        limit: usize,
        level: &[usize],
        cursor: &mut [usize],
    ) -> usize {
        let mut path: Vec<usize> = Vec::new();
        let mut v = source;
        loop {
            if v == sink {
                let amount = path
                    .iter()
                    .map(|&e| self.capacity[e])
                    .fold(limit, usize::min);
                for &e in &path {
                    self.capacity[e] -= amount;
                    self.capacity[e ^ 1] = self.capacity[e ^ 1].saturating_add(amount);
                }
                return amount;
            }
            let mut advanced = false;
            while cursor[v] != NONE {
                let e = cursor[v];
                let w = self.to[e];
                if self.capacity[e] > 0 && level[w] == level[v] + 1 {
                    path.push(e);
                    v = w;
                    advanced = true;
                    break;
                }
                cursor[v] = self.next[e];
            }
            if !advanced {
                // Dead end: retreat and skip the edge that led here.
                let Some(e) = path.pop() else {
                    return 0;
                };
                v = self.to[e ^ 1];
                cursor[v] = self.next[e];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bars(list: &[(f32, Option<f32>)]) -> Vec<Bar> {
        list.iter().map(|&(b, d)| Bar(b, d)).collect()
    }

    #[test]
    fn hand_computed_distances() {
        let a = bars(&[(0.0, Some(4.0)), (1.0, Some(2.0))]);
        assert_eq!(bottleneck_distance(&a, &a), 0.0);
        // The long bar moves by 1; the short one goes to the diagonal (half length 0.5).
        let b = bars(&[(0.0, Some(5.0))]);
        assert_eq!(bottleneck_distance(&a, &b), 1.0);
        // Nothing against a bar of length 6: half of it.
        assert_eq!(bottleneck_distance(&[], &bars(&[(2.0, Some(8.0))])), 3.0);
        // Multiplicities count: three equal bars against two.
        let three = bars(&[(2.0, Some(10.0)); 3]);
        let two = bars(&[(2.0, Some(10.0)); 2]);
        assert_eq!(bottleneck_distance(&three, &two), 4.0);
        // Infinite bars match by birth, and only each other.
        let inf = bars(&[(0.0, None), (3.0, None)]);
        assert_eq!(
            bottleneck_distance(&inf, &bars(&[(0.0, None), (1.0, None)])),
            2.0
        );
        assert!(bottleneck_distance(&inf, &bars(&[(0.0, None)])).is_infinite());
        // Symmetric.
        assert_eq!(bottleneck_distance(&b, &a), 1.0);
    }
}
