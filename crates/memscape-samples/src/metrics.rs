//! Issue 9: latency `L_d` and imbalance `I_d` per topology level, window scores along an
//! attribute, and neighbor-constrained agglomerative clustering of sliding windows.
//!
//! For the resources r_1..r_m of one kind d (all L2 caches, all PUs, …), with s(r) the samples
//! and c(r) the cycles of r over a subset (see [`crate::mapping`]):
//!
//! * `L_d = (1/|R|) Σ_{r ∈ R} c(r)/s(r)` where **R is the set of resources of kind d with at
//!   least one sample**. An empty resource has no latency (0/0), and counting it as 0 would make
//!   L_d depend on how many resources a small subset happens to touch, breaking the invariance
//!   to the subset's size. If no resource has a sample, L_d is undefined (`None`; the window
//!   strips and the clustering score such a subset as 0 = "no latency observed").
//! * `I_d = max_i |s(r_i) − μ| / σ` over **all** m resources of kind d, empty ones included
//!   (an idle resource is exactly what imbalance is about), μ and σ the mean and population
//!   standard deviation of the counts. When σ = 0 every resource has the same count: perfectly
//!   balanced, `I_d = 0` by definition (the formula would give 0/0; NaN would poison sorting,
//!   colors and cluster distances). No resource of kind d: an error (`MissingLevel`) from the
//!   callers that know the topology, `None` from [`imbalance_score`] on an empty slice.
//!   Note that I_d is scale-free: counts that differ by a single sample over otherwise equal
//!   resources already score √(m−1)/… (e.g. √3 for eight PUs with 6 × n+1 and 2 × n), so it
//!   measures the *shape* of the distribution, not its magnitude.
//!
//! Both are invariant to scaling every count by the same factor (a subset twice as large with
//! the same distribution scores the same).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use memscape_topology::{NodeId, ResourceKind, Topology};

use crate::analysis::EqualWidth;
use crate::mapping::{Aggregate, Mapping};
use crate::table::NONE;
use crate::{Bitset, Samples, SamplesError};

/// Which score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    Latency,
    Imbalance,
}

impl Metric {
    pub fn parse(text: &str) -> Option<Self> {
        match text.to_ascii_lowercase().as_str() {
            "latency" => Some(Metric::Latency),
            "imbalance" => Some(Metric::Imbalance),
            _ => None,
        }
    }
}

/// `L_d` from per-resource (samples, cycles) of one level; see the module docs.
pub fn latency_score(per_resource: &[(u64, u64)]) -> Option<f64> {
    let mut sum = 0.0;
    let mut used = 0usize;
    for &(s, c) in per_resource {
        if s > 0 {
            sum += c as f64 / s as f64;
            used += 1;
        }
    }
    (used > 0).then(|| sum / used as f64)
}

/// `I_d` from per-resource (samples, cycles) of one level; see the module docs.
pub fn imbalance_score(per_resource: &[(u64, u64)]) -> Option<f64> {
    if per_resource.is_empty() {
        return None;
    }
    let m = per_resource.len() as f64;
    let mean = per_resource.iter().map(|&(s, _)| s as f64).sum::<f64>() / m;
    let var = per_resource
        .iter()
        .map(|&(s, _)| (s as f64 - mean).powi(2))
        .sum::<f64>()
        / m;
    let sigma = var.sqrt();
    // Relative threshold: identical integer counts give exactly 0, but keep round-off out.
    if sigma <= 1e-12 * mean.max(1.0) {
        return Some(0.0);
    }
    let max_dev = per_resource
        .iter()
        .map(|&(s, _)| (s as f64 - mean).abs())
        .fold(0.0, f64::max);
    Some(max_dev / sigma)
}

pub fn score(metric: Metric, per_resource: &[(u64, u64)]) -> Option<f64> {
    match metric {
        Metric::Latency => latency_score(per_resource),
        Metric::Imbalance => imbalance_score(per_resource),
    }
}

/// The resources of one kind and which of them each route passes.
#[derive(Debug, Clone)]
pub struct LevelIndex {
    pub kind: ResourceKind,
    pub resources: Vec<NodeId>,
    /// For each route, the slots (indices into `resources`) it passes.
    pub route_slots: Vec<Vec<u32>>,
}

impl LevelIndex {
    pub fn new(
        topology: &Topology,
        mapping: &Mapping,
        kind: ResourceKind,
    ) -> Result<Self, SamplesError> {
        let resources: Vec<NodeId> = topology.nodes_of_kind(kind).map(|n| n.id).collect();
        if resources.is_empty() {
            return Err(SamplesError::MissingLevel {
                kind,
                topology: topology.source().to_owned(),
            });
        }
        let mut slot_of = vec![NONE; topology.nodes().len()];
        for (slot, &n) in resources.iter().enumerate() {
            slot_of[n as usize] = slot as u32;
        }
        let route_slots = mapping
            .routes
            .iter()
            .map(|r| {
                r.nodes
                    .iter()
                    .map(|&n| slot_of[n as usize])
                    .filter(|&s| s != NONE)
                    .collect()
            })
            .collect();
        Ok(LevelIndex {
            kind,
            resources,
            route_slots,
        })
    }

    /// Per-resource (samples, cycles) of this level from a full aggregate.
    pub fn from_aggregate(&self, agg: &Aggregate) -> Vec<(u64, u64)> {
        self.resources
            .iter()
            .map(|&n| (agg.samples[n as usize], agg.cycles[n as usize]))
            .collect()
    }
}

/// `L_d` or `I_d` of a subset (all samples with `None`), computed directly.
pub fn subset_score(
    samples: &Samples,
    topology: &Topology,
    mapping: &Mapping,
    metric: Metric,
    kind: ResourceKind,
    selection: Option<&Bitset>,
) -> Result<Option<f64>, SamplesError> {
    let level = LevelIndex::new(topology, mapping, kind)?;
    let agg = mapping.aggregate(samples, selection);
    Ok(score(metric, &level.from_aggregate(&agg)))
}

/// One window along an attribute.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WindowScore {
    /// `[lo, hi]` in the attribute's units.
    pub range: [f64; 2],
    pub samples: u64,
    /// The score; `null` where undefined (see the module docs).
    pub metric: Option<f64>,
}

/// Cuts an attribute's value range into `windows` equal-width windows and scores the selected
/// samples in each (the colored strip along a histogram axis). One pass over the samples.
#[allow(clippy::too_many_arguments)]
pub fn window_scores(
    samples: &Samples,
    topology: &Topology,
    mapping: &Mapping,
    attribute: &str,
    windows: usize,
    metric: Metric,
    kind: ResourceKind,
    selection: Option<&Bitset>,
) -> Result<Vec<WindowScore>, SamplesError> {
    let column = samples
        .column(attribute)
        .ok_or_else(|| SamplesError::UnknownAttribute {
            name: attribute.to_owned(),
            available: samples.column_names().join(", "),
        })?;
    let level = LevelIndex::new(topology, mapping, kind)?;
    let Some(edges) = EqualWidth::of_column(column, windows) else {
        return Ok(Vec::new());
    };
    let mut totals = WindowTotals::new(&level, edges.count);
    for i in 0..samples.len() {
        if selection.is_some_and(|s| !s.get(i)) {
            continue;
        }
        let Some(v) = column.value(i) else { continue };
        totals.add(edges.index(v), mapping.route_of[i], 1, samples.latency[i]);
    }
    Ok(totals.scores(metric, |w| edges.window(w)))
}

/// Per-window, per-resource (samples, cycles) of one level, accumulated from samples (one at a
/// time, natively) or from (window, route) totals (the query engine's groups), then scored.
#[derive(Debug, Clone)]
pub struct WindowTotals<'a> {
    level: &'a LevelIndex,
    per: Vec<(u64, u64)>,
    counts: Vec<u64>,
}

impl<'a> WindowTotals<'a> {
    /// `windows` (at least 1) empty windows.
    pub fn new(level: &'a LevelIndex, windows: usize) -> Self {
        let windows = windows.max(1);
        Self {
            level,
            per: vec![(0, 0); windows * level.resources.len()],
            counts: vec![0; windows],
        }
    }

    /// `samples` samples of `cycles` in total in window `window` (clamped to the last) on
    /// route `route` ([`NONE`]: not mapped, counted in the window only).
    pub fn add(&mut self, window: usize, route: u32, samples: u64, cycles: u64) {
        let w = window.min(self.counts.len() - 1);
        self.counts[w] += samples;
        if route == NONE {
            return;
        }
        let m = self.level.resources.len();
        for &slot in &self.level.route_slots[route as usize] {
            let cell = &mut self.per[w * m + slot as usize];
            cell.0 += samples;
            cell.1 = cell.1.saturating_add(cycles);
        }
    }

    /// Each window's range (`range(w)`), samples and score.
    pub fn scores(&self, metric: Metric, range: impl Fn(usize) -> [f64; 2]) -> Vec<WindowScore> {
        let m = self.level.resources.len();
        (0..self.counts.len())
            .map(|w| WindowScore {
                range: range(w),
                samples: self.counts[w],
                metric: score(metric, &self.per[w * m..(w + 1) * m]),
            })
            .collect()
    }
}

// ------------------------------------------------------------------------------------------
// Clustering

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
    /// Sample indices sorted by the attribute (the positions refer to this).
    pub order: Vec<u32>,
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
    if params.window == 0 || params.step == 0 || params.step > params.window {
        return Err(SamplesError::BadClusterParams {
            window: params.window,
            step: params.step,
        });
    }
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
    let values: Vec<f64> = keyed.iter().map(|k| k.0).collect();
    let order: Vec<u32> = keyed.iter().map(|k| k.1).collect();
    let n = order.len();
    if n == 0 {
        return Ok(ClusterTree {
            params,
            nodes: Vec::new(),
            leaves: 0,
            order,
        });
    }
    let (w, step) = (params.window, params.step);
    let mut starts: Vec<usize> = Vec::new();
    if n <= w {
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
    let window_end = |s: usize| (s + w).min(n);
    let mut bounds: Vec<usize> = starts.iter().flat_map(|&s| [s, window_end(s)]).collect();
    bounds.sort_unstable();
    bounds.dedup();
    let seg_of = |p: usize| bounds.binary_search(&p).unwrap_or_else(|x| x);
    // prefix[s * m + r]: totals of resource slot r over segments before s.
    let m = level.resources.len();
    let segments = bounds.len().saturating_sub(1);
    let mut prefix = vec![(0u64, 0u64); (segments + 1) * m];
    for s in 0..segments {
        let (a, b) = (bounds[s], bounds[s + 1]);
        let (done, rest) = prefix.split_at_mut((s + 1) * m);
        let row = &mut rest[..m];
        row.copy_from_slice(&done[s * m..(s + 1) * m]);
        for &i in &order[a..b] {
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
    let k = starts.len();
    let mut nodes: Vec<ClusterNode> = Vec::with_capacity(2 * k);
    for (i, &s) in starts.iter().enumerate() {
        let e = window_end(s);
        nodes.push(ClusterNode {
            children: None,
            windows: [i as u32, i as u32],
            positions: [s as u32, e as u32],
            range: [values[s], values[e - 1]],
            samples: (e - s) as u64,
            metric: score_positions(s, e),
            distance: 0.0,
        });
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
        nodes.push(ClusterNode {
            children: Some([l as u32, r as u32]),
            windows: [nodes[l].windows[0], nodes[r].windows[1]],
            positions: [a as u32, b as u32],
            range: [values[a], values[b - 1]],
            samples: (b - a) as u64,
            metric,
            distance: c.distance,
        });
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
    Ok(ClusterTree {
        params,
        nodes,
        leaves: k,
        order,
    })
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

    /// The samples of a cluster as a selection over all samples.
    pub fn selection(&self, node: &ClusterNode, universe: usize) -> Bitset {
        let mut b = Bitset::new(universe);
        for &i in &self.order[node.positions[0] as usize..node.positions[1] as usize] {
            b.set(i as usize);
        }
        b
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

    #[test]
    fn hand_computed_latency() {
        // Two resources with samples: 100/2 = 50 and 30/3 = 10 → (50 + 10) / 2 = 30; the
        // empty third resource is left out.
        assert_eq!(latency_score(&[(2, 100), (3, 30), (0, 0)]), Some(30.0));
        assert_eq!(latency_score(&[(0, 0), (0, 0)]), None);
        // Size invariance: every count and cycle ×7.
        assert_eq!(latency_score(&[(14, 700), (21, 210)]), Some(30.0));
    }

    #[test]
    fn hand_computed_imbalance() {
        // counts 4, 0, 0, 0: μ = 1, σ = √3, max |s − μ| = 3 → 3/√3 = √3.
        let i = imbalance_score(&[(4, 0), (0, 0), (0, 0), (0, 0)]).unwrap();
        assert!((i - 3f64.sqrt()).abs() < 1e-12);
        // counts 1, 3: μ = 2, σ = 1, max dev 1 → 1.
        assert_eq!(imbalance_score(&[(1, 0), (3, 0)]), Some(1.0));
        // σ = 0 → 0 (balanced), no resources → None.
        assert_eq!(imbalance_score(&[(5, 9), (5, 1)]), Some(0.0));
        assert_eq!(imbalance_score(&[]), None);
        // Size invariance.
        let a = imbalance_score(&[(2, 0), (5, 0), (9, 0)]).unwrap();
        let b = imbalance_score(&[(20, 0), (50, 0), (90, 0)]).unwrap();
        assert!((a - b).abs() < 1e-12);
    }
}
