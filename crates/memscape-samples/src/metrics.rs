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
// Clustering: `clustering.rs`, re-exported here where callers have always found it.
pub use crate::clustering::*;

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
