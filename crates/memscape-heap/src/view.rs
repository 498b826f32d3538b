//! From a group trie and the sizes of one time point to the tree the user sees: pruned (largest
//! children until they cover 90 % of the node, at most 9, the rest merged into "Other"), in a
//! sibling order that is the same at every time point, cut at N levels below the chosen root.

use crate::trie::{GroupTrie, Sizes};

/// What a node's size means for pruning, order and geometry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    #[default]
    Bytes,
    Objects,
}

impl Metric {
    pub fn of(self, sizes: &Sizes, node: u32) -> u64 {
        match self {
            Metric::Bytes => sizes.bytes(node),
            Metric::Objects => sizes.objects(node),
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "bytes" => Some(Metric::Bytes),
            "objects" => Some(Metric::Objects),
            _ => None,
        }
    }
}

/// Pruning and depth settings.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PruneOptions {
    /// Keep children until they cover this fraction of their parent (0..=1).
    pub coverage: f64,
    /// Keep at most this many children per node (the "Other" node comes on top).
    pub max_children: usize,
    /// Levels shown below the root (0: the root alone).
    pub depth: usize,
    pub metric: Metric,
}

impl Default for PruneOptions {
    fn default() -> Self {
        Self {
            coverage: 0.9,
            max_children: 9,
            depth: 2,
            metric: Metric::Bytes,
        }
    }
}

/// Name of the node that stands for the children pruning merged.
pub const OTHER: &str = "Other";

/// A node of the shown tree. Serialized with exactly the keys `name, bytes, objects, children`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HeapNode {
    pub name: String,
    pub bytes: u64,
    pub objects: u64,
    pub children: Vec<HeapNode>,
    /// The trie node this stands for (its stable identity and color key); `None` for "Other".
    #[serde(skip)]
    pub group: Option<u32>,
    /// For "Other": the trie node whose children were merged, and how many.
    #[serde(skip)]
    pub merged_from: Option<(u32, usize)>,
}

impl HeapNode {
    pub fn value(&self, metric: Metric) -> u64 {
        match metric {
            Metric::Bytes => self.bytes,
            Metric::Objects => self.objects,
        }
    }

    pub fn is_other(&self) -> bool {
        self.group.is_none()
    }

    /// Number of levels below this node.
    pub fn height(&self) -> usize {
        self.children
            .iter()
            .map(|c| c.height() + 1)
            .max()
            .unwrap_or(0)
    }
}

/// Sibling order fixed once for all time points: by size at the reference (last) time point,
/// larger first; groups absent there by their size at the fallback point (e.g. the peak), then
/// by name so that the order is total.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StableOrder {
    rank: Vec<u32>,
}

impl StableOrder {
    pub fn new(trie: &GroupTrie, last: &Sizes, fallback: Option<&Sizes>, metric: Metric) -> Self {
        let mut rank = vec![0u32; trie.len()];
        let mut stack = vec![0u32];
        while let Some(node) = stack.pop() {
            let mut children = trie.children(node).to_vec();
            children.sort_by(|&a, &b| {
                metric
                    .of(last, b)
                    .cmp(&metric.of(last, a))
                    .then_with(|| {
                        let fa = fallback.map_or(0, |f| metric.of(f, a));
                        let fb = fallback.map_or(0, |f| metric.of(f, b));
                        fb.cmp(&fa)
                    })
                    .then_with(|| trie.name(a).cmp(trie.name(b)))
                    .then_with(|| a.cmp(&b))
            });
            for (i, &c) in children.iter().enumerate() {
                rank[c as usize] = u32::try_from(i).unwrap_or(u32::MAX);
            }
            stack.extend(children);
        }
        Self { rank }
    }

    /// Position of `node` among its siblings (nodes added to the trie later come last).
    pub fn rank(&self, node: u32) -> u32 {
        self.rank.get(node as usize).copied().unwrap_or(u32::MAX)
    }
}

/// Which children of a node are kept and what is merged, by the pruning rule alone (before the
/// stable order is applied). Children of size 0 are dropped: they would have no extent.
pub fn prune_children(
    values: &[(u32, u64)],
    parent_value: u64,
    options: &PruneOptions,
) -> (Vec<u32>, Vec<u32>) {
    let mut sorted: Vec<(u32, u64)> = values.iter().copied().filter(|&(_, v)| v > 0).collect();
    sorted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let target = options.coverage.clamp(0.0, 1.0) * parent_value as f64;
    let mut covered = 0u64;
    let mut kept = Vec::new();
    let mut merged = Vec::new();
    for (node, value) in sorted {
        if kept.len() < options.max_children && (covered as f64) < target {
            kept.push(node);
            covered = covered.saturating_add(value);
        } else {
            merged.push(node);
        }
    }
    (kept, merged)
}

/// Builds the shown tree rooted at `root` (a trie node: drill-down is a different root).
pub fn build_view(
    trie: &GroupTrie,
    sizes: &Sizes,
    order: &StableOrder,
    root: u32,
    options: &PruneOptions,
) -> HeapNode {
    build_view_keeping(trie, sizes, order, root, options, None)
}

/// [`build_view`], but `keep` (a group the user picked, e.g. in the allocation map) and its
/// ancestors stay their own nodes even where pruning would merge them into "Other": a picked
/// group must be visible, however small.
pub fn build_view_keeping(
    trie: &GroupTrie,
    sizes: &Sizes,
    order: &StableOrder,
    root: u32,
    options: &PruneOptions,
    keep: Option<u32>,
) -> HeapNode {
    let keep_path = keep.map(|k| trie.path_to_root(k)).unwrap_or_default();
    build_node(trie, sizes, order, root, options, 0, &keep_path)
}

fn build_node(
    trie: &GroupTrie,
    sizes: &Sizes,
    order: &StableOrder,
    node: u32,
    options: &PruneOptions,
    level: usize,
    keep_path: &[u32],
) -> HeapNode {
    let mut out = HeapNode {
        name: trie.name(node).to_owned(),
        bytes: sizes.bytes(node),
        objects: sizes.objects(node),
        children: Vec::new(),
        group: Some(node),
        merged_from: None,
    };
    if level >= options.depth {
        return out;
    }
    let values: Vec<(u32, u64)> = trie
        .children(node)
        .iter()
        .map(|&c| (c, options.metric.of(sizes, c)))
        .collect();
    let (mut kept, mut merged) = prune_children(&values, options.metric.of(sizes, node), options);
    // At most one child lies on the kept path (it is a path); rescue it from "Other".
    if let Some(i) = merged.iter().position(|c| keep_path.contains(c)) {
        kept.push(merged.remove(i));
    }
    kept.sort_by_key(|&c| (order.rank(c), c));
    out.children = kept
        .into_iter()
        .map(|c| build_node(trie, sizes, order, c, options, level + 1, keep_path))
        .collect();
    if !merged.is_empty() {
        out.children.push(HeapNode {
            name: OTHER.to_owned(),
            bytes: merged
                .iter()
                .fold(0u64, |acc, &c| acc.saturating_add(sizes.bytes(c))),
            objects: merged
                .iter()
                .fold(0u64, |acc, &c| acc.saturating_add(sizes.objects(c))),
            children: Vec::new(),
            group: None,
            merged_from: Some((node, merged.len())),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trie::Label;

    /// root with children of the given byte sizes (one object each).
    fn crafted(sizes: &[u64]) -> (GroupTrie, Sizes) {
        let mut trie = GroupTrie::new("root");
        let mut s = Sizes::zeros(1);
        for (i, &b) in sizes.iter().enumerate() {
            let id = trie.child(
                0,
                Label {
                    kind: 1,
                    value: i as u64,
                },
                || format!("c{i}"),
            );
            s.grow_to(trie.len());
            s.bytes[id as usize] = b;
            s.objects[id as usize] = 1;
        }
        s.accumulate(&trie);
        (trie, s)
    }

    fn names(node: &HeapNode) -> Vec<&str> {
        node.children.iter().map(|c| c.name.as_str()).collect()
    }

    #[test]
    fn keeps_largest_until_ninety_percent() {
        // 50 + 30 = 80 % < 90 %, + 12 = 92 % >= 90 %: three kept, the rest (5, 3) is Other.
        let (trie, s) = crafted(&[5, 30, 12, 50, 3]);
        let order = StableOrder::new(&trie, &s, None, Metric::Bytes);
        let view = build_view(&trie, &s, &order, 0, &PruneOptions::default());
        assert_eq!(names(&view), ["c3", "c1", "c2", "Other"]);
        let other = view.children.last().unwrap();
        assert_eq!((other.bytes, other.objects), (8, 2));
        assert_eq!(other.merged_from, Some((0, 2)));
        assert_eq!(view.bytes, 100);
    }

    #[test]
    fn a_kept_group_is_never_merged_into_other() {
        // c4 (3 bytes) is merged by the default pruning; keeping it makes it its own node and
        // leaves only c0 in Other.
        let (trie, s) = crafted(&[5, 30, 12, 50, 3]);
        let order = StableOrder::new(&trie, &s, None, Metric::Bytes);
        let plain = build_view(&trie, &s, &order, 0, &PruneOptions::default());
        assert!(!names(&plain).contains(&"c4"));
        let c4 = trie.children(0)[4];
        let kept = build_view_keeping(&trie, &s, &order, 0, &PruneOptions::default(), Some(c4));
        assert_eq!(names(&kept), ["c3", "c1", "c2", "c4", "Other"]);
        let other = kept.children.last().unwrap();
        assert_eq!((other.bytes, other.merged_from), (5, Some((0, 1))));
        // The sizes still add up to the parent.
        assert_eq!(kept.children.iter().map(|c| c.bytes).sum::<u64>(), 100);
    }

    #[test]
    fn at_most_nine_children() {
        let (trie, s) = crafted(&[10; 20]);
        let order = StableOrder::new(&trie, &s, None, Metric::Bytes);
        let view = build_view(&trie, &s, &order, 0, &PruneOptions::default());
        assert_eq!(view.children.len(), 10);
        assert_eq!(view.children[9].name, OTHER);
        assert_eq!(view.children[9].bytes, 110);
        // Thresholds are adjustable.
        let loose = PruneOptions {
            coverage: 0.5,
            max_children: 3,
            ..PruneOptions::default()
        };
        let view = build_view(&trie, &s, &order, 0, &loose);
        assert_eq!(view.children.len(), 4);
        let all = PruneOptions {
            coverage: 1.0,
            max_children: 100,
            ..PruneOptions::default()
        };
        let view = build_view(&trie, &s, &order, 0, &all);
        assert_eq!(view.children.len(), 20);
        assert!(view.children.iter().all(|c| !c.is_other()));
    }

    #[test]
    fn zero_sized_children_are_dropped_and_metric_objects_prunes_by_count() {
        let (trie, mut s) = crafted(&[0, 100, 1]);
        s.objects = vec![0, 0, 1, 9];
        s.accumulate(&trie);
        let order = StableOrder::new(&trie, &s, None, Metric::Objects);
        let opts = PruneOptions {
            metric: Metric::Objects,
            ..PruneOptions::default()
        };
        let view = build_view(&trie, &s, &order, 0, &opts);
        // By objects c2 (9 of 10) is largest and covers 90 %.
        assert_eq!(names(&view), ["c2", "Other"]);
    }

    #[test]
    fn stable_order_is_by_last_time_point_at_every_time_point() {
        let (trie, early) = crafted(&[70, 20, 10]);
        let (_, last) = crafted(&[5, 15, 80]);
        let order = StableOrder::new(&trie, &last, None, Metric::Bytes);
        let opts = PruneOptions {
            coverage: 1.0,
            ..PruneOptions::default()
        };
        let at_early = build_view(&trie, &early, &order, 0, &opts);
        let at_last = build_view(&trie, &last, &order, 0, &opts);
        assert_eq!(names(&at_early), ["c2", "c1", "c0"]);
        assert_eq!(names(&at_last), ["c2", "c1", "c0"]);
        // Without a stable order the early point would sort c0 first: the order really is fixed.
        let own = StableOrder::new(&trie, &early, None, Metric::Bytes);
        assert_eq!(
            names(&build_view(&trie, &early, &own, 0, &opts)),
            ["c0", "c1", "c2"]
        );
    }

    #[test]
    fn absent_at_the_end_falls_back_then_by_name() {
        let (trie, last) = crafted(&[0, 0, 10]);
        let (_, peak) = crafted(&[1, 50, 0]);
        let order = StableOrder::new(&trie, &last, Some(&peak), Metric::Bytes);
        assert_eq!(order.rank(3), 0);
        assert_eq!(order.rank(2), 1);
        assert_eq!(order.rank(1), 2);
    }

    #[test]
    fn depth_limits_levels_and_drill_down_changes_root() {
        let mut trie = GroupTrie::new("root");
        let a = trie.child(0, Label { kind: 1, value: 1 }, || "a".into());
        let b = trie.child(a, Label { kind: 1, value: 2 }, || "b".into());
        let c = trie.child(b, Label { kind: 1, value: 3 }, || "c".into());
        let mut s = Sizes::zeros(trie.len());
        s.bytes[c as usize] = 7;
        s.objects[c as usize] = 1;
        s.accumulate(&trie);
        let order = StableOrder::new(&trie, &s, None, Metric::Bytes);
        let view = build_view(&trie, &s, &order, 0, &PruneOptions::default());
        assert_eq!(view.height(), 2);
        let drilled = build_view(&trie, &s, &order, b, &PruneOptions::default());
        assert_eq!(drilled.name, "b");
        assert_eq!(drilled.children[0].name, "c");
        assert_eq!(trie.breadcrumb(c), ["root", "a", "b", "c"]);
        assert_eq!(trie.parent(b), Some(a));
        assert_eq!(trie.parent(0), None);
    }
}
