//! Neighbor-constrained agglomerative clustering of sliding windows along an attribute
//! (MemAxes' guided clustering), scored by [`crate::metrics`]' latency or imbalance.
//!
//! The samples with a known value are ordered by (value, sample index); windows of `w`
//! consecutive samples start every Δ. Everything the tree needs of the samples is the
//! per-resource totals of each *segment* between window boundaries and the (value, index) of
//! each window's first and last sample ([`WindowPlan`]): [`cluster_tree`] sums them from the
//! samples in memory, a query engine from grouped rows ([`tree_from_segments`]), and both build
//! the same tree with the same code.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use memscape_topology::{ResourceKind, Topology};

use crate::mapping::{Aggregate, Mapping, RouteKey};
use crate::metrics::{LevelIndex, Metric, score};
use crate::table::NONE;
use crate::{Bitset, Samples, SamplesError};

/// Parameters of one cluster tree.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ClusterParams {
    pub attribute: String,
    pub metric: Metric,
    pub kind: ResourceKind,
    /// Samples per window (w).
    pub window: usize,
    /// Samples between window starts (Δ), 0 < Δ ≤ w.
    pub step: usize,
}

impl ClusterParams {
    /// An error unless 0 < Δ ≤ w.
    pub fn check(&self) -> Result<(), SamplesError> {
        if self.window == 0 || self.step == 0 || self.step > self.window {
            return Err(SamplesError::BadClusterParams {
                window: self.window,
                step: self.step,
            });
        }
        Ok(())
    }
}

/// A node of the cluster tree: a run of consecutive windows.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ClusterNode {
    /// Children (cluster ids), `None` for leaves (windows).
    pub children: Option<[u32; 2]>,
    /// First and last window.
    pub windows: [u32; 2],
    /// Positions in the sorted order, `[start, end)`.
    pub positions: [u32; 2],
    /// Attribute values of the first and last sample.
    pub range: [f64; 2],
    /// Sample indices of the first and last sample: with `range`, where the cluster starts and
    /// ends in the (value, index) order, so that its samples can be stated without the order.
    pub rows: [u32; 2],
    /// Distinct samples covered.
    pub samples: u64,
    /// Score of the union of the windows' samples (undefined latency scored 0).
    pub metric: f64,
    /// |metric difference| at which this cluster was formed (0 for leaves).
    pub distance: f64,
}

/// The tree: leaves `0..k` are the windows, node `k + m` is the m-th merge.
#[derive(Debug, Clone)]
pub struct ClusterTree {
    pub params: ClusterParams,
    pub nodes: Vec<ClusterNode>,
    pub leaves: usize,
    /// Sample indices sorted by the attribute (the positions refer to this); empty for a tree
    /// built from a query engine's segment totals, whose glyphs sum `keyed` instead.
    pub order: Vec<u32>,
    /// Each segment's totals by route key, from a query engine (None: from the samples).
    pub keyed: Option<KeyedSegments>,
}

/// Where the windows over `n` samples in attribute order start and the boundaries of the
/// segments between window boundaries.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowPlan {
    pub n: usize,
    pub window: usize,
    pub step: usize,
    pub starts: Vec<usize>,
    /// Sorted, distinct window starts and ends: segment s is `bounds[s]..bounds[s + 1]`.
    pub bounds: Vec<usize>,
}

impl WindowPlan {
    /// Windows start every `step` (a last window is aligned to the end so no sample is left
    /// out; one window when `n ≤ window`); parameters as [`ClusterParams::check`] allows.
    pub fn new(n: usize, window: usize, step: usize) -> Self {
        let (w, step) = (window.max(1), step.max(1));
        let mut starts: Vec<usize> = Vec::new();
        if n == 0 {
        } else if n <= w {
            starts.push(0);
        } else {
            let mut s = 0;
            while s + w <= n {
                starts.push(s);
                s += step;
            }
            if starts.last().is_some_and(|&last| last + w < n) {
                starts.push(n - w);
            }
        }
        let mut bounds: Vec<usize> = starts.iter().flat_map(|&s| [s, (s + w).min(n)]).collect();
        bounds.sort_unstable();
        bounds.dedup();
        WindowPlan {
            n,
            window: w,
            step,
            starts,
            bounds,
        }
    }

    /// The end (exclusive) of the window starting at `start`.
    pub fn end(&self, start: usize) -> usize {
        (start + self.window).min(self.n)
    }

    pub fn segments(&self) -> usize {
        self.bounds.len().saturating_sub(1)
    }

    /// The segment holding position `p` (a bound: the segment it starts).
    pub fn segment_of(&self, p: usize) -> usize {
        self.bounds.partition_point(|&b| b <= p).saturating_sub(1)
    }

    /// The positions of every window's first and last sample, sorted and distinct.
    pub fn ends(&self) -> Vec<usize> {
        let mut ends: Vec<usize> = self
            .starts
            .iter()
            .flat_map(|&s| [s, self.end(s) - 1])
            .collect();
        ends.sort_unstable();
        ends.dedup();
        ends
    }

    /// A piece length g such that the positions `[g·j, g·(j+1))`, each split at
    /// [`Self::aligned_start`], lie in one segment: every window start is a multiple of Δ and
    /// every end one of w past it, so every bound but the aligned last window's start (and n,
    /// which ends the last piece) is a multiple of gcd(w, Δ). What a query groups positions by.
    pub fn piece(&self) -> usize {
        let (mut a, mut b) = (self.window, self.step);
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a.max(1)
    }

    /// The start of the last window when it is aligned to the end off the Δ grid.
    pub fn aligned_start(&self) -> Option<usize> {
        self.starts.last().copied().filter(|&s| s % self.step != 0)
    }
}

/// A query engine's totals of each segment by route key: what a cluster's topology glyph sums
/// without the samples ([`ClusterTree::aggregate`]).
#[derive(Debug, Clone, PartialEq)]
pub struct KeyedSegments {
    /// The (cpu, level, data node) keys of the grouped rows (placed by [`Mapping::for_keys`]).
    pub keys: Vec<RouteKey>,
    /// The plan's segment bounds.
    pub bounds: Vec<usize>,
    /// Per segment: (key, samples, cycles).
    pub totals: Vec<Vec<(u32, u64, u64)>>,
}

/// Where a cluster starts and ends in the (value, sample index) order along `attribute`: its
/// samples stated without the order (a query engine's filter, [`select_span`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterSpan {
    pub attribute: String,
    /// (value, sample index) of the first sample.
    pub first: (f64, u32),
    /// (value, sample index) of the last sample.
    pub last: (f64, u32),
}

impl ClusterSpan {
    /// Whether a sample of value `v` and index `i` lies in the span.
    pub fn contains(&self, v: f64, i: u32) -> bool {
        let order = |a: (f64, u32), b: (f64, u32)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
        order((v, i), self.first) != Ordering::Less && order((v, i), self.last) != Ordering::Greater
    }
}

/// The samples of `span`.
pub fn select_span(samples: &Samples, span: &ClusterSpan) -> Result<Bitset, SamplesError> {
    let column = samples
        .column(&span.attribute)
        .ok_or_else(|| SamplesError::UnknownAttribute {
            name: span.attribute.clone(),
            available: samples.column_names().join(", "),
        })?;
    Ok(Bitset::from_fn(samples.len(), |i| {
        column.value(i).is_some_and(|v| span.contains(v, i as u32))
    }))
}

#[derive(PartialEq)]
struct Candidate {
    distance: f64,
    left: u32,
    right: u32,
}
impl Eq for Candidate {}
impl Ord for Candidate {
    // Min-heap by distance, then leftmost pair, for determinism.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .distance
            .total_cmp(&self.distance)
            .then(other.left.cmp(&self.left))
            .then(other.right.cmp(&self.right))
    }
}
impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Builds the neighbor-constrained cluster tree along `params.attribute`.
///
/// Samples with a known value (and in `selection`, if given) are sorted by it; windows of `w`
/// consecutive samples start every Δ (a last window is aligned to the end so no sample is
/// left out). Each window's per-resource totals come from prefix sums over the segments
/// between window boundaries, so any run of windows is scored from exactly its samples in
/// O(resources). Merging pops the closest neighboring pair from a heap and pushes the two new
/// neighbor distances: O(k log k) for k windows after the O(n log n) sort.
pub fn cluster_tree(
    samples: &Samples,
    topology: &Topology,
    mapping: &Mapping,
    params: ClusterParams,
    selection: Option<&Bitset>,
) -> Result<ClusterTree, SamplesError> {
    params.check()?;
    let column =
        samples
            .column(&params.attribute)
            .ok_or_else(|| SamplesError::UnknownAttribute {
                name: params.attribute.clone(),
                available: samples.column_names().join(", "),
            })?;
    let level = LevelIndex::new(topology, mapping, params.kind)?;
    let mut keyed: Vec<(f64, u32)> = (0..samples.len())
        .filter(|&i| selection.is_none_or(|s| s.get(i)))
        .filter_map(|i| column.value(i).map(|v| (v, i as u32)))
        .collect();
    // (value, index) is a total order, so the unstable sort is still deterministic.
    keyed.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let plan = WindowPlan::new(keyed.len(), params.window, params.step);
    let m = level.resources.len();
    let mut per_segment = vec![(0u64, 0u64); plan.segments() * m];
    for s in 0..plan.segments() {
        let row = &mut per_segment[s * m..(s + 1) * m];
        for &(_, i) in &keyed[plan.bounds[s]..plan.bounds[s + 1]] {
            let r = mapping.route_of[i as usize];
            if r == NONE {
                continue;
            }
            for &slot in &level.route_slots[r as usize] {
                let cell = &mut row[slot as usize];
                cell.0 += 1;
                cell.1 = cell.1.saturating_add(samples.latency[i as usize]);
            }
        }
    }
    let ends = |p: usize| keyed[p];
    let mut tree = tree_from_segments(params, &plan, m, &per_segment, ends, None);
    tree.order = keyed.iter().map(|k| k.1).collect();
    Ok(tree)
}

/// The tree of `plan`'s windows from each segment's per-resource totals (`per_segment[s * m +
/// r]`: segment s, resource slot r of the level scored) and `end_at(p)`, the (value, sample
/// index) at each position of [`WindowPlan::ends`]. `order` is left empty.
pub fn tree_from_segments(
    params: ClusterParams,
    plan: &WindowPlan,
    m: usize,
    per_segment: &[(u64, u64)],
    end_at: impl Fn(usize) -> (f64, u32),
    keyed: Option<KeyedSegments>,
) -> ClusterTree {
    let k = plan.starts.len();
    if k == 0 {
        return ClusterTree {
            params,
            nodes: Vec::new(),
            leaves: 0,
            order: Vec::new(),
            keyed,
        };
    }
    let segments = plan.segments();
    // prefix[s * m + r]: totals of resource slot r over segments before s.
    let mut prefix = vec![(0u64, 0u64); (segments + 1) * m];
    for s in 0..segments {
        for r in 0..m {
            let (before, add) = (prefix[s * m + r], per_segment[s * m + r]);
            prefix[(s + 1) * m + r] = (before.0 + add.0, before.1.saturating_add(add.1));
        }
    }
    let seg_of = |p: usize| plan.bounds.binary_search(&p).unwrap_or_else(|x| x);
    let mut scratch = vec![(0u64, 0u64); m];
    let mut score_positions = |a: usize, b: usize| -> f64 {
        let (sa, sb) = (seg_of(a), seg_of(b));
        for r in 0..m {
            let hi = prefix[sb * m + r];
            let lo = prefix[sa * m + r];
            scratch[r] = (hi.0 - lo.0, hi.1 - lo.1);
        }
        score(params.metric, &scratch).unwrap_or(0.0)
    };
    let node_of = |children, windows, a: usize, b: usize, metric, distance| {
        let (first, last) = (end_at(a), end_at(b - 1));
        ClusterNode {
            children,
            windows,
            positions: [a as u32, b as u32],
            range: [first.0, last.0],
            rows: [first.1, last.1],
            samples: (b - a) as u64,
            metric,
            distance,
        }
    };
    let mut nodes: Vec<ClusterNode> = Vec::with_capacity(2 * k);
    for (i, &s) in plan.starts.iter().enumerate() {
        let e = plan.end(s);
        let metric = score_positions(s, e);
        nodes.push(node_of(None, [i as u32, i as u32], s, e, metric, 0.0));
    }
    let total = 2 * k - 1;
    let mut prev: Vec<u32> = vec![NONE; total];
    let mut next: Vec<u32> = vec![NONE; total];
    let mut alive = vec![false; total];
    let mut heap = BinaryHeap::with_capacity(2 * k);
    for i in 0..k {
        alive[i] = true;
        if i > 0 {
            prev[i] = (i - 1) as u32;
        }
        if i + 1 < k {
            next[i] = (i + 1) as u32;
            heap.push(Candidate {
                distance: (nodes[i].metric - nodes[i + 1].metric).abs(),
                left: i as u32,
                right: (i + 1) as u32,
            });
        }
    }
    while let Some(c) = heap.pop() {
        let (l, r) = (c.left as usize, c.right as usize);
        if !alive[l] || !alive[r] || next[l] != c.right {
            continue;
        }
        let id = nodes.len();
        let (a, b) = (
            nodes[l].positions[0] as usize,
            nodes[r].positions[1] as usize,
        );
        let metric = score_positions(a, b);
        let windows = [nodes[l].windows[0], nodes[r].windows[1]];
        nodes.push(node_of(
            Some([l as u32, r as u32]),
            windows,
            a,
            b,
            metric,
            c.distance,
        ));
        alive[l] = false;
        alive[r] = false;
        alive[id] = true;
        prev[id] = prev[l];
        next[id] = next[r];
        if prev[id] != NONE {
            let p = prev[id] as usize;
            next[p] = id as u32;
            heap.push(Candidate {
                distance: (nodes[p].metric - metric).abs(),
                left: p as u32,
                right: id as u32,
            });
        }
        if next[id] != NONE {
            let q = next[id] as usize;
            prev[q] = id as u32;
            heap.push(Candidate {
                distance: (metric - nodes[q].metric).abs(),
                left: id as u32,
                right: q as u32,
            });
        }
    }
    ClusterTree {
        params,
        nodes,
        leaves: k,
        order: Vec::new(),
        keyed,
    }
}

impl ClusterTree {
    /// The windows (leaves).
    pub fn windows(&self) -> &[ClusterNode] {
        &self.nodes[..self.leaves]
    }

    /// The tree cut into (at most) `clusters` clusters: the state after the first
    /// `k − clusters` merges, in attribute order.
    pub fn cut(&self, clusters: usize) -> Vec<&ClusterNode> {
        let k = self.leaves;
        if k == 0 {
            return Vec::new();
        }
        let clusters = clusters.clamp(1, k);
        let merges = k - clusters;
        let mut alive = vec![false; k + merges];
        alive[..k].fill(true);
        for m in 0..merges {
            let id = k + m;
            if let Some([a, b]) = self.nodes[id].children {
                alive[a as usize] = false;
                alive[b as usize] = false;
            }
            alive[id] = true;
        }
        let mut out: Vec<&ClusterNode> = alive
            .iter()
            .enumerate()
            .filter(|&(_, &a)| a)
            .map(|(i, _)| &self.nodes[i])
            .collect();
        out.sort_by_key(|n| n.windows[0]);
        out
    }

    /// The samples of a cluster as a selection over all samples (from the order; a tree
    /// without it selects them by [`Self::span`], [`select_span`]).
    pub fn selection(&self, node: &ClusterNode, universe: usize) -> Bitset {
        let mut b = Bitset::new(universe);
        let range = node.positions[0] as usize..node.positions[1] as usize;
        for &i in self.order.get(range).unwrap_or_default() {
            b.set(i as usize);
        }
        b
    }

    /// Where `node` starts and ends in the order.
    pub fn span(&self, node: &ClusterNode) -> ClusterSpan {
        ClusterSpan {
            attribute: self.params.attribute.clone(),
            first: (node.range[0], node.rows[0]),
            last: (node.range[1], node.rows[1]),
        }
    }

    /// The per-resource totals of `node`'s samples on `topology` from the query engine's
    /// segment totals (None for a tree from the samples: sum its `order`).
    pub fn aggregate(&self, node: &ClusterNode, topology: &Topology) -> Option<Aggregate> {
        let keyed = self.keyed.as_ref()?;
        let seg = |p: u32| {
            keyed
                .bounds
                .binary_search(&(p as usize))
                .unwrap_or_else(|x| x)
        };
        let mut totals = vec![(0u64, 0u64); keyed.keys.len()];
        for segment in keyed
            .totals
            .get(seg(node.positions[0])..seg(node.positions[1]))?
        {
            for &(key, n, cycles) in segment {
                let t = totals.get_mut(key as usize)?;
                t.0 += n;
                t.1 = t.1.saturating_add(cycles);
            }
        }
        Some(Mapping::for_keys(&keyed.keys, topology).aggregate_totals(&totals))
    }
}

/// `memscape cluster … --json`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ClusterReport {
    pub clusters: Vec<ClusterOut>,
    pub windows: Vec<ClusterOut>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ClusterOut {
    pub range: [f64; 2],
    pub samples: u64,
    pub metric: f64,
}

impl From<&ClusterNode> for ClusterOut {
    fn from(n: &ClusterNode) -> Self {
        ClusterOut {
            range: n.range,
            samples: n.samples,
            metric: n.metric,
        }
    }
}

/// The report of a tree cut into `clusters`.
pub fn cluster_report(tree: &ClusterTree, clusters: usize) -> ClusterReport {
    ClusterReport {
        clusters: tree
            .cut(clusters)
            .into_iter()
            .map(ClusterOut::from)
            .collect(),
        windows: tree.windows().iter().map(ClusterOut::from).collect(),
    }
}

/// Cluster trees computed so far, one per (metric, level, attribute, w, Δ). The UI computes
/// them on a worker thread and keeps them here.
#[derive(Debug, Default)]
pub struct ClusterCache {
    trees: Vec<ClusterTree>,
}

impl ClusterCache {
    pub fn get(&self, params: &ClusterParams) -> Option<&ClusterTree> {
        self.trees.iter().find(|t| &t.params == params)
    }

    pub fn get_or_build(
        &mut self,
        samples: &Samples,
        topology: &Topology,
        mapping: &Mapping,
        params: ClusterParams,
    ) -> Result<&ClusterTree, SamplesError> {
        if let Some(pos) = self.trees.iter().position(|t| t.params == params) {
            return Ok(&self.trees[pos]);
        }
        let tree = cluster_tree(samples, topology, mapping, params, None)?;
        self.trees.push(tree);
        let last = self.trees.len() - 1;
        Ok(&self.trees[last])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pieces a query groups positions by never straddle a segment bound, for windows on
    /// and off each other's grid and with an aligned last window.
    #[test]
    fn pieces_lie_in_one_segment() {
        for (n, w, step) in [(1000, 100, 25), (1003, 100, 30), (97, 10, 7), (5, 10, 3)] {
            let plan = WindowPlan::new(n, w, step);
            let g = plan.piece();
            let split = plan.aligned_start();
            let piece_of = |p: usize| (p / g, split.is_some_and(|s| p >= s));
            for p in 1..n {
                if piece_of(p) == piece_of(p - 1) {
                    assert_eq!(
                        plan.segment_of(p),
                        plan.segment_of(p - 1),
                        "n {n} w {w} Δ {step}: position {p}"
                    );
                }
            }
            assert_eq!(plan.bounds.first(), Some(&0));
            assert_eq!(plan.bounds.last(), Some(&n));
        }
        assert!(WindowPlan::new(0, 10, 5).starts.is_empty());
    }

    #[test]
    fn a_span_is_inclusive_in_value_then_index_order() {
        let span = ClusterSpan {
            attribute: "time".into(),
            first: (2.0, 7),
            last: (5.0, 3),
        };
        assert!(span.contains(2.0, 7) && span.contains(5.0, 3) && span.contains(3.0, 0));
        assert!(!span.contains(2.0, 6) && !span.contains(5.0, 4) && !span.contains(1.0, 9));
    }
}
