//! Leak suspects: groups ranked by growth, i.e. the least-squares slope of their live bytes over
//! the time points, then by their bytes at the last time point. A group must also have grown
//! from the first point to the last: one that grows and is released again (a cache emptied at
//! exit) is no leak however steep its slope, and one that keeps a little of a steep rise ranks
//! by what it kept (its net growth rate), not by the rise.

use crate::massif::MassifFile;
use crate::massif_tree::MassifHeap;
use crate::trace_tree::TraceHeap;
use crate::trie::{GroupTrie, Sizes};

/// One ranked group.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LeakSuspect {
    /// Trie node (drill-down target).
    pub group: u32,
    pub name: String,
    /// Names from the root down to the group.
    pub path: Vec<String>,
    /// Bytes per time unit (ns for traces with wall time, else events; massif's `time_unit`).
    pub slope: f64,
    /// Bytes per time unit gained from the first time point to the last.
    pub net_rate: f64,
    pub start_bytes: u64,
    pub end_bytes: u64,
    pub end_objects: u64,
}

impl LeakSuspect {
    /// How strongly the group looks like a leak: its least-squares slope, but no more than its
    /// net growth rate (what it kept), so that a group that rose and was released ranks low.
    pub fn score(&self) -> f64 {
        self.slope.min(self.net_rate)
    }
}

/// Running sums for a least-squares slope per trie node, one time point at a time (memory is
/// per node, not per node and time point).
#[derive(Debug, Clone, Default)]
pub struct GrowthAccumulator {
    n: f64,
    sum_x: f64,
    sum_xx: f64,
    sum_y: Vec<f64>,
    sum_xy: Vec<f64>,
    first: Vec<u64>,
    last: Sizes,
    first_x: f64,
    last_x: f64,
}

impl GrowthAccumulator {
    pub fn add(&mut self, x: f64, sizes: &Sizes) {
        let len = sizes.bytes.len();
        if self.sum_y.len() < len {
            self.sum_y.resize(len, 0.0);
            self.sum_xy.resize(len, 0.0);
            // Groups that did not exist at earlier points started at 0 bytes.
            self.first.resize(len, 0);
        }
        if self.n == 0.0 {
            self.first.copy_from_slice(&sizes.bytes);
            self.first_x = x;
        }
        self.last_x = x;
        self.n += 1.0;
        self.sum_x += x;
        self.sum_xx += x * x;
        for (i, &b) in sizes.bytes.iter().enumerate() {
            let y = b as f64;
            self.sum_y[i] += y;
            self.sum_xy[i] += x * y;
        }
        self.last = sizes.clone();
    }

    /// Least-squares slope of a node's bytes over the points added so far (hover's "growth").
    pub fn slope_of(&self, node: u32) -> f64 {
        self.slope(node as usize)
    }

    fn slope(&self, node: usize) -> f64 {
        let denominator = self.n * self.sum_xx - self.sum_x * self.sum_x;
        if self.n < 2.0 || denominator.abs() < f64::EPSILON {
            return 0.0;
        }
        let sy = self.sum_y.get(node).copied().unwrap_or(0.0);
        let sxy = self.sum_xy.get(node).copied().unwrap_or(0.0);
        (self.n * sxy - self.sum_x * sy) / denominator
    }

    /// Bytes per time unit a node gained from the first point to the last.
    fn net_rate(&self, node: usize) -> f64 {
        let span = self.last_x - self.first_x;
        if span <= 0.0 {
            return 0.0;
        }
        let first = self.first.get(node).copied().unwrap_or(0) as f64;
        let last = self.last.bytes.get(node).copied().unwrap_or(0) as f64;
        (last - first) / span
    }

    /// Groups at trie depth `level` (`None`: the leaves) that grew over the points (positive
    /// slope and more bytes at the end than at the start), by their [`LeakSuspect::score`], then
    /// by bytes at the end.
    pub fn rank(&self, trie: &GroupTrie, level: Option<usize>) -> Vec<LeakSuspect> {
        let mut out: Vec<LeakSuspect> = (1..trie.len())
            .filter_map(|n| u32::try_from(n).ok())
            .filter(|&n| match level {
                Some(level) => trie.depth(n) as usize == level,
                None => trie.children(n).is_empty(),
            })
            .map(|n| LeakSuspect {
                group: n,
                name: trie.name(n).to_owned(),
                path: trie.breadcrumb(n),
                slope: self.slope(n as usize),
                net_rate: self.net_rate(n as usize),
                start_bytes: self.first.get(n as usize).copied().unwrap_or(0),
                end_bytes: self.last.bytes(n),
                end_objects: self.last.objects(n),
            })
            .filter(|s| s.slope > 0.0 && s.end_bytes > s.start_bytes)
            .collect();
        let score = LeakSuspect::score;
        out.sort_by(|a, b| {
            score(b)
                .total_cmp(&score(a))
                .then(b.end_bytes.cmp(&a.end_bytes))
                .then(a.group.cmp(&b.group))
        });
        out
    }
}

/// Leak suspects of points given as (x, sizes) pairs.
pub fn leak_suspects<'s>(
    trie: &GroupTrie,
    points: impl IntoIterator<Item = (f64, &'s Sizes)>,
    level: Option<usize>,
) -> Vec<LeakSuspect> {
    let mut acc = GrowthAccumulator::default();
    for (x, sizes) in points {
        acc.add(x, sizes);
    }
    acc.rank(trie, level)
}

/// Leak suspects of a trace at the given time points (event counts), without the blocks the
/// heap's suppressions match ([`TraceHeap::suppressed`] counts them). x is wall time when the
/// trace has it, else the event count.
pub fn trace_leak_suspects(
    heap: &mut TraceHeap<'_>,
    points: &[u64],
    level: Option<usize>,
) -> Vec<LeakSuspect> {
    let wall = heap.trace().meta.has_wall_time;
    let mut acc = GrowthAccumulator::default();
    let mut sizes = Sizes::default();
    for &p in points {
        heap.sizes_into(p, &mut sizes);
        let x = if wall {
            heap.time_of(p) as f64
        } else {
            p as f64
        };
        // Blocks the runtime keeps on purpose are no leak (crate::suppress).
        acc.add(x, &heap.without_suppressed(&sizes, p));
    }
    acc.rank(heap.trie(), level)
}

/// Leak suspects over a massif file's detailed snapshots (x: the snapshot time).
pub fn massif_leak_suspects(
    file: &MassifFile,
    heap: &MassifHeap,
    level: Option<usize>,
) -> Vec<LeakSuspect> {
    let mut acc = GrowthAccumulator::default();
    for (point, &snapshot) in heap.snapshot_indices().iter().enumerate() {
        if let (Some(sizes), Some(s)) = (heap.sizes(point), file.snapshots.get(snapshot)) {
            acc.add(s.time as f64, &sizes);
        }
    }
    acc.rank(heap.trie(), level)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trie::Label;

    #[test]
    fn steepest_first_then_largest_at_end() {
        let mut trie = GroupTrie::new("r");
        let flat = trie.child(0, Label { kind: 1, value: 1 }, || "flat".into());
        let grows = trie.child(0, Label { kind: 1, value: 2 }, || "grows".into());
        let shrinks = trie.child(0, Label { kind: 1, value: 3 }, || "shrinks".into());
        let grows_too = trie.child(0, Label { kind: 1, value: 4 }, || "grows_too".into());
        let mut points = Vec::new();
        for t in 0..5u64 {
            let mut s = Sizes::zeros(trie.len());
            s.bytes[flat as usize] = 1000;
            s.bytes[grows as usize] = 10 * t;
            s.bytes[shrinks as usize] = 100 - 10 * t;
            s.bytes[grows_too as usize] = 500 + 10 * t;
            s.accumulate(&trie);
            points.push((t as f64, s));
        }
        let ranked = leak_suspects(&trie, points.iter().map(|(x, s)| (*x, s)), Some(1));
        let names: Vec<&str> = ranked.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["grows_too", "grows"]);
        assert!((ranked[0].slope - 10.0).abs() < 1e-9);
        assert_eq!(ranked[1].start_bytes, 0);
        assert_eq!(ranked[1].end_bytes, 40);
    }

    #[test]
    fn what_rises_and_is_released_is_no_leak() {
        let mut trie = GroupTrie::new("r");
        let cache = trie.child(0, Label { kind: 1, value: 1 }, || "cache".into());
        let log = trie.child(0, Label { kind: 1, value: 2 }, || "log".into());
        let kept = trie.child(0, Label { kind: 1, value: 3 }, || "kept_a_little".into());
        let mut points = Vec::new();
        for t in 0..=10u64 {
            let mut s = Sizes::zeros(trie.len());
            // The cache fills steeply and is emptied at the last point; another steep riser
            // keeps 10 bytes; the log grows slowly and is never freed.
            s.bytes[cache as usize] = if t < 10 { 1000 * t } else { 0 };
            s.bytes[kept as usize] = if t < 10 { 900 * t } else { 10 };
            s.bytes[log as usize] = 50 * t;
            s.accumulate(&trie);
            points.push((t as f64, s));
        }
        let ranked = leak_suspects(&trie, points.iter().map(|(x, s)| (*x, s)), Some(1));
        let names: Vec<&str> = ranked.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["log", "kept_a_little"]);
        // The cache's slope is the steepest, yet it is not listed.
        assert!(
            points.iter().all(|(_, s)| s.bytes.len() > cache as usize),
            "the cache is a group"
        );
    }
}
