//! Two runs compared: the heap trees of two inputs (allocation traces, massif files, profiles)
//! at one time point each, with the same grouping, matched node by node on their names along
//! the path from the root, what `memscape diff A B` prints and the difference views draw.
//!
//! Each side's tree is [`crate::report`]'s `heaptree` tree unpruned (every group, every level
//! of the grouping), so a leaf's bytes in A are exactly what `heaptree A --json` shows for it
//! with the same options and no pruning. A node's status compares its value in the chosen
//! metric: `new` (0 in A), `gone` (0 in B), `grown`, `shrunk` or `same`.

use memscape_trace::Trace;

use crate::massif::MassifFile;
use crate::profile::StackProfile;
use crate::report::{
    HeapError, HeapInput, HeapTreeOptions, HeapTreeReport, heaptree_massif, heaptree_profile,
    heaptree_trace,
};
use crate::view::{HeapNode, Metric, OTHER, PruneOptions};

/// One side of a comparison, borrowed (the GUI holds its inputs in datasets).
#[derive(Clone, Copy)]
pub enum HeapRef<'a> {
    Trace(&'a Trace),
    Massif(&'a MassifFile),
    Profile(&'a StackProfile),
}

impl<'a> From<&'a HeapInput> for HeapRef<'a> {
    fn from(input: &'a HeapInput) -> Self {
        match input {
            HeapInput::Trace(t) => HeapRef::Trace(t),
            HeapInput::Massif(m) => HeapRef::Massif(m),
            HeapInput::Profile(p) => HeapRef::Profile(p),
        }
    }
}

impl HeapRef<'_> {
    /// The input's name (its path as given).
    pub fn source(&self) -> &str {
        match self {
            HeapRef::Trace(t) => &t.meta.source,
            HeapRef::Massif(m) => &m.source,
            HeapRef::Profile(p) => &p.source,
        }
    }

    /// `heaptree`'s report with `options`.
    pub fn heaptree(&self, options: &HeapTreeOptions) -> Result<HeapTreeReport, HeapError> {
        match self {
            HeapRef::Trace(t) => heaptree_trace(t, options),
            HeapRef::Massif(m) => heaptree_massif(m, options),
            HeapRef::Profile(p) => heaptree_profile(p, options),
        }
    }
}

/// How a group changed from A to B (in the comparison's metric).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Grown,
    Shrunk,
    /// Absent (zero) in A.
    New,
    /// Absent (zero) in B.
    Gone,
    Same,
}

impl Status {
    pub fn of(a: u64, b: u64) -> Status {
        match (a, b) {
            (0, b) if b > 0 => Status::New,
            (a, 0) if a > 0 => Status::Gone,
            (a, b) if b > a => Status::Grown,
            (a, b) if b < a => Status::Shrunk,
            _ => Status::Same,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Status::Grown => "grown",
            Status::Shrunk => "shrunk",
            Status::New => "new",
            Status::Gone => "gone",
            Status::Same => "same",
        }
    }
}

/// A node of the difference tree: a group's sizes in A and B.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DiffNode {
    pub name: String,
    pub bytes_a: u64,
    pub bytes_b: u64,
    pub objects_a: u64,
    pub objects_b: u64,
    pub status: Status,
    pub children: Vec<DiffNode>,
}

impl DiffNode {
    pub fn value_a(&self, metric: Metric) -> u64 {
        match metric {
            Metric::Bytes => self.bytes_a,
            Metric::Objects => self.objects_a,
        }
    }

    pub fn value_b(&self, metric: Metric) -> u64 {
        match metric {
            Metric::Bytes => self.bytes_b,
            Metric::Objects => self.objects_b,
        }
    }

    /// B − A in bytes.
    pub fn change_bytes(&self) -> i128 {
        i128::from(self.bytes_b) - i128::from(self.bytes_a)
    }

    /// B − A in the metric.
    pub fn change(&self, metric: Metric) -> i128 {
        i128::from(self.value_b(metric)) - i128::from(self.value_a(metric))
    }

    /// The larger of the two sides: what a difference chart sizes a node by, so that what
    /// is gone keeps its room.
    pub fn larger(&self, metric: Metric) -> u64 {
        self.value_a(metric).max(self.value_b(metric))
    }

    /// Levels below this node.
    pub fn height(&self) -> usize {
        self.children
            .iter()
            .map(|c| c.height() + 1)
            .max()
            .unwrap_or(0)
    }

    fn restatus(&mut self, metric: Metric) {
        self.status = Status::of(self.value_a(metric), self.value_b(metric));
        for c in &mut self.children {
            c.restatus(metric);
        }
    }
}

/// Matches two heap trees node by node on their names (siblings of one name, as "Other", are
/// added together), children in order of decreasing larger side. Nodes zero on both sides are
/// left out.
pub fn diff_trees(a: &HeapNode, b: &HeapNode, metric: Metric) -> DiffNode {
    let mut node = merge(Some(a), Some(b));
    node.name = b.name.clone();
    node.restatus(metric);
    sort(&mut node, metric);
    node
}

fn merge(a: Option<&HeapNode>, b: Option<&HeapNode>) -> DiffNode {
    let name = a.or(b).map(|n| n.name.clone()).unwrap_or_default();
    let mut node = DiffNode {
        name,
        bytes_a: a.map_or(0, |n| n.bytes),
        bytes_b: b.map_or(0, |n| n.bytes),
        objects_a: a.map_or(0, |n| n.objects),
        objects_b: b.map_or(0, |n| n.objects),
        status: Status::Same,
        children: Vec::new(),
    };
    // Children by name, first appearance order; several of one name are added together.
    let mut names: Vec<&str> = Vec::new();
    for c in a
        .iter()
        .flat_map(|n| &n.children)
        .chain(b.iter().flat_map(|n| &n.children))
    {
        if !names.contains(&c.name.as_str()) {
            names.push(&c.name);
        }
    }
    for name in names {
        let side = |n: Option<&HeapNode>| -> Option<HeapNode> {
            let mut same = n?.children.iter().filter(|c| c.name == name);
            let first = same.next()?.clone();
            Some(same.fold(first, |mut acc, c| {
                acc.bytes = acc.bytes.saturating_add(c.bytes);
                acc.objects = acc.objects.saturating_add(c.objects);
                acc.children.extend(c.children.iter().cloned());
                acc
            }))
        };
        let (ca, cb) = (side(a), side(b));
        let child = merge(ca.as_ref(), cb.as_ref());
        if child.bytes_a | child.bytes_b | child.objects_a | child.objects_b != 0 {
            node.children.push(child);
        }
    }
    node
}

fn sort(node: &mut DiffNode, metric: Metric) {
    node.children.sort_by(|x, y| {
        y.larger(metric)
            .cmp(&x.larger(metric))
            .then_with(|| x.name.cmp(&y.name))
    });
    for c in &mut node.children {
        sort(c, metric);
    }
}

/// One side's time point and totals.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DiffSide {
    pub source: String,
    pub time: u64,
    pub time_unit: String,
    /// Live bytes at that time (the unpruned root).
    pub total_bytes: u64,
    pub total_objects: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events: Option<u64>,
    /// Profiles: the measure compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measure: Option<String>,
}

/// One leaf of the grouping (a call site with `--group line`, a whole call path with
/// `--group path`) in both runs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SiteDiff {
    /// The names from below the root down to the leaf.
    pub path: Vec<String>,
    pub bytes_a: u64,
    pub bytes_b: u64,
    /// B − A.
    pub bytes_change: i64,
    pub objects_a: u64,
    pub objects_b: u64,
    pub objects_change: i64,
    pub status: Status,
}

/// Totals of a comparison: both roots, the change, and how many leaves have each status.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct DiffTotals {
    pub bytes_a: u64,
    pub bytes_b: u64,
    pub bytes_change: i64,
    pub objects_a: u64,
    pub objects_b: u64,
    pub objects_change: i64,
    pub grown: usize,
    pub shrunk: usize,
    pub new: usize,
    pub gone: usize,
    pub same: usize,
    /// Sum of the grown and new leaves' increases, and of the shrunk and gone leaves'
    /// decreases (bytes_change = grown_bytes − shrunk_bytes when the leaves cover the roots).
    pub grown_bytes: u64,
    pub shrunk_bytes: u64,
}

/// The JSON of `memscape diff A B`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DiffReport {
    pub a: DiffSide,
    pub b: DiffSide,
    /// The grouping's keys (traces).
    pub group: Vec<crate::GroupKey>,
    pub metric: Metric,
    pub totals: DiffTotals,
    /// Leaves, largest change (either way) first.
    pub sites: Vec<SiteDiff>,
    pub tree: DiffNode,
}

fn clamp_i64(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

/// `options` with every group kept at every level (no "Other", no depth cut).
pub fn unpruned(options: &HeapTreeOptions) -> HeapTreeOptions {
    HeapTreeOptions {
        prune: PruneOptions {
            coverage: 1.0,
            max_children: usize::MAX,
            depth: usize::MAX,
            metric: options.prune.metric,
        },
        ..options.clone()
    }
}

/// Compares `a` and `b` at the time point and grouping of `options` (each side's own time
/// point: `--peak` is each run's peak).
pub fn diff(
    a: HeapRef<'_>,
    b: HeapRef<'_>,
    options: &HeapTreeOptions,
) -> Result<DiffReport, HeapError> {
    let full = unpruned(options);
    let ra = a.heaptree(&full)?;
    let rb = b.heaptree(&full)?;
    Ok(diff_reports(
        (a.source(), &ra),
        (b.source(), &rb),
        &options.group,
    ))
}

/// The comparison of two (unpruned) heap-tree reports.
pub fn diff_reports(
    (source_a, a): (&str, &HeapTreeReport),
    (source_b, b): (&str, &HeapTreeReport),
    group: &[crate::GroupKey],
) -> DiffReport {
    let metric = b.metric;
    let tree = diff_trees(&a.tree, &b.tree, metric);
    let mut sites = Vec::new();
    leaves(&tree, &mut Vec::new(), &mut sites, metric);
    sites.sort_by(|x, y| {
        let change = |s: &SiteDiff| match metric {
            Metric::Bytes => s.bytes_change.unsigned_abs(),
            Metric::Objects => s.objects_change.unsigned_abs(),
        };
        change(y).cmp(&change(x)).then_with(|| x.path.cmp(&y.path))
    });
    let mut totals = DiffTotals {
        bytes_a: a.total_bytes,
        bytes_b: b.total_bytes,
        bytes_change: clamp_i64(i128::from(b.total_bytes) - i128::from(a.total_bytes)),
        objects_a: a.tree.objects,
        objects_b: b.tree.objects,
        objects_change: clamp_i64(i128::from(b.tree.objects) - i128::from(a.tree.objects)),
        ..DiffTotals::default()
    };
    for s in &sites {
        match s.status {
            Status::Grown => totals.grown += 1,
            Status::Shrunk => totals.shrunk += 1,
            Status::New => totals.new += 1,
            Status::Gone => totals.gone += 1,
            Status::Same => totals.same += 1,
        }
        if s.bytes_change > 0 {
            totals.grown_bytes = totals
                .grown_bytes
                .saturating_add(s.bytes_change.unsigned_abs());
        } else {
            totals.shrunk_bytes = totals
                .shrunk_bytes
                .saturating_add(s.bytes_change.unsigned_abs());
        }
    }
    let side = |source: &str, r: &HeapTreeReport| DiffSide {
        source: source.to_owned(),
        time: r.time,
        time_unit: r.time_unit.clone(),
        total_bytes: r.total_bytes,
        total_objects: r.tree.objects,
        snapshot: r.snapshot,
        events: r.events,
        measure: r.measure.as_ref().map(|m| m.name.clone()),
    };
    DiffReport {
        a: side(source_a, a),
        b: side(source_b, b),
        group: group.to_vec(),
        metric,
        totals,
        sites,
        tree,
    }
}

fn leaves(node: &DiffNode, path: &mut Vec<String>, out: &mut Vec<SiteDiff>, metric: Metric) {
    for c in &node.children {
        path.push(c.name.clone());
        if c.children.is_empty() || c.name == OTHER {
            out.push(SiteDiff {
                path: path.clone(),
                bytes_a: c.bytes_a,
                bytes_b: c.bytes_b,
                bytes_change: clamp_i64(c.change_bytes()),
                objects_a: c.objects_a,
                objects_b: c.objects_b,
                objects_change: clamp_i64(c.change(Metric::Objects)),
                status: Status::of(c.value_a(metric), c.value_b(metric)),
            });
        } else {
            leaves(c, path, out, metric);
        }
        path.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, bytes: u64, children: Vec<HeapNode>) -> HeapNode {
        HeapNode {
            name: name.into(),
            bytes,
            objects: bytes / 8,
            children,
            group: Some(0),
            merged_from: None,
        }
    }

    #[test]
    fn nodes_match_by_name_and_get_their_status() {
        let a = node(
            "root",
            300,
            vec![
                node("f", 100, vec![node("g", 100, vec![])]),
                node("old", 200, vec![]),
            ],
        );
        let b = node(
            "root",
            280,
            vec![
                node("f", 80, vec![node("g", 40, vec![]), node("h", 40, vec![])]),
                node("fresh", 200, vec![]),
            ],
        );
        let d = diff_trees(&a, &b, Metric::Bytes);
        assert_eq!((d.bytes_a, d.bytes_b, d.status), (300, 280, Status::Shrunk));
        let names: Vec<(&str, Status)> = d
            .children
            .iter()
            .map(|c| (c.name.as_str(), c.status))
            .collect();
        // Larger side first, then by name.
        assert_eq!(
            names,
            [
                ("fresh", Status::New),
                ("old", Status::Gone),
                ("f", Status::Shrunk)
            ]
        );
        let f = &d.children[2];
        let g: Vec<(&str, u64, u64, Status)> = f
            .children
            .iter()
            .map(|c| (c.name.as_str(), c.bytes_a, c.bytes_b, c.status))
            .collect();
        assert_eq!(
            g,
            [("g", 100, 40, Status::Shrunk), ("h", 0, 40, Status::New)]
        );
    }

    #[test]
    fn siblings_of_one_name_add_up() {
        let a = node("r", 30, vec![node("x", 10, vec![]), node("x", 20, vec![])]);
        let b = node("r", 30, vec![node("x", 30, vec![])]);
        let d = diff_trees(&a, &b, Metric::Bytes);
        assert_eq!(d.children.len(), 1);
        assert_eq!(d.children[0].status, Status::Same);
    }
}
