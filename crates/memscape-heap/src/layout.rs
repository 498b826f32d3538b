//! Geometry of the shown tree as plain data for the GPU renderer: sunburst ring segments and
//! icicle rectangles, in normalized units. The renderer scales them to pixels, draws labels
//! where they fit and colors by `color_key`, which is the same for a group at every time point.
//!
//! Sunburst: the root is a disc of radius `1 / (levels + 1)`; a node at depth `d` is the ring
//! `[d, d + 1] / (levels + 1)`; angles run clockwise from 12 o'clock (0) to 2π, each child's
//! span is `parent span × child / parent` in the chosen metric, children laid out in the tree's
//! (stable) order from the parent's start angle. Children smaller than their parent in sum leave
//! the rest of the parent's span empty (bytes not attributed to any child).
//!
//! Icicle: hierarchy left → right, x = `[d, d + 1] / (levels + 1)`, heights ∝ size with the
//! same rule in `[0, 1]`, children from the top (y = 0) down.

use crate::view::{HeapNode, Metric};

/// A node of the shown tree flattened in preorder (the index used by the geometry).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LayoutNode {
    pub parent: Option<u32>,
    pub depth: u32,
    pub name: String,
    pub bytes: u64,
    pub objects: u64,
    /// Trie node, or `None` for "Other".
    pub group: Option<u32>,
    /// Stable across time points: the trie node, or for "Other" the parent's trie node with
    /// the top bit set.
    pub color_key: u64,
}

/// One ring segment.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct SunburstSegment {
    /// Index into [`Layout::nodes`].
    pub node: u32,
    pub depth: u32,
    pub start_angle: f64,
    pub end_angle: f64,
    pub inner_radius: f64,
    pub outer_radius: f64,
}

/// One icicle rectangle.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct IcicleRect {
    pub node: u32,
    pub depth: u32,
    pub x0: f64,
    pub x1: f64,
    pub y0: f64,
    pub y1: f64,
}

/// The flattened nodes and their geometry.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Layout<T> {
    pub nodes: Vec<LayoutNode>,
    pub shapes: Vec<T>,
    /// Levels below the root that the geometry makes room for.
    pub levels: u32,
}

const OTHER_BIT: u64 = 1 << 63;

fn flatten(node: &HeapNode, parent: Option<u32>, depth: u32, out: &mut Vec<LayoutNode>) {
    let color_key = match node.group {
        Some(g) => u64::from(g),
        None => OTHER_BIT | node.merged_from.map_or(0, |(p, _)| u64::from(p)),
    };
    let id = u32::try_from(out.len()).unwrap_or(u32::MAX);
    out.push(LayoutNode {
        parent,
        depth,
        name: node.name.clone(),
        bytes: node.bytes,
        objects: node.objects,
        group: node.group,
        color_key,
    });
    for c in &node.children {
        flatten(c, Some(id), depth + 1, out);
    }
}

/// Walks the tree assigning each node a span `[start, end)` of its parent's span.
fn spans(node: &HeapNode, metric: Metric, start: f64, end: f64, visit: &mut dyn FnMut(f64, f64)) {
    visit(start, end);
    let total = node.value(metric) as f64;
    let mut at = start;
    for c in &node.children {
        let share = if total > 0.0 {
            c.value(metric) as f64 / total
        } else {
            0.0
        };
        let next = (at + share * (end - start)).min(end);
        spans(c, metric, at, next, visit);
        at = next;
    }
}

/// Sunburst geometry of a shown tree. `levels`: rings to make room for (at least the tree's own
/// height; pass the `depth` used to build the view so that rings keep their radii when a
/// drill-down shows a shallower subtree).
pub fn sunburst(root: &HeapNode, metric: Metric, levels: usize) -> Layout<SunburstSegment> {
    let mut nodes = Vec::new();
    flatten(root, None, 0, &mut nodes);
    let levels = levels.max(root.height());
    let ring = 1.0 / (levels as f64 + 1.0);
    let mut shapes = Vec::with_capacity(nodes.len());
    let mut index = 0usize;
    spans(root, metric, 0.0, std::f64::consts::TAU, &mut |a0, a1| {
        let depth = nodes[index].depth;
        shapes.push(SunburstSegment {
            node: index as u32,
            depth,
            start_angle: a0,
            end_angle: a1,
            inner_radius: if depth == 0 { 0.0 } else { depth as f64 * ring },
            outer_radius: (depth as f64 + 1.0) * ring,
        });
        index += 1;
    });
    Layout {
        nodes,
        shapes,
        levels: levels as u32,
    }
}

/// Icicle geometry of a shown tree (same `levels` rule as [`sunburst`]).
pub fn icicle(root: &HeapNode, metric: Metric, levels: usize) -> Layout<IcicleRect> {
    let mut nodes = Vec::new();
    flatten(root, None, 0, &mut nodes);
    let levels = levels.max(root.height());
    let column = 1.0 / (levels as f64 + 1.0);
    let mut shapes = Vec::with_capacity(nodes.len());
    let mut index = 0usize;
    spans(root, metric, 0.0, 1.0, &mut |y0, y1| {
        let depth = nodes[index].depth;
        shapes.push(IcicleRect {
            node: index as u32,
            depth,
            x0: depth as f64 * column,
            x1: (depth as f64 + 1.0) * column,
            y0,
            y1,
        });
        index += 1;
    });
    Layout {
        nodes,
        shapes,
        levels: levels as u32,
    }
}

/// What hovering a node shows (the growth comes from `suspects::GrowthAccumulator::slope_of`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HoverInfo {
    pub name: String,
    pub bytes: u64,
    pub objects: u64,
    /// Share of the parent in the chosen metric (1 for the root).
    pub share_of_parent: f64,
    /// Share of the whole heap's bytes (`total_bytes` of the report), whatever the shown root.
    pub share_of_total: f64,
}

/// Hover facts of node `node` of a layout.
pub fn hover<T>(
    layout: &Layout<T>,
    node: u32,
    metric: Metric,
    total_bytes: u64,
) -> Option<HoverInfo> {
    let n = layout.nodes.get(node as usize)?;
    let value = |x: &LayoutNode| match metric {
        Metric::Bytes => x.bytes,
        Metric::Objects => x.objects,
    };
    let share_of_parent = match n.parent.and_then(|p| layout.nodes.get(p as usize)) {
        Some(p) if value(p) > 0 => value(n) as f64 / value(p) as f64,
        Some(_) => 0.0,
        None => 1.0,
    };
    let share_of_total = if total_bytes > 0 {
        n.bytes as f64 / total_bytes as f64
    } else {
        0.0
    };
    Some(HoverInfo {
        name: n.name.clone(),
        bytes: n.bytes,
        objects: n.objects,
        share_of_parent,
        share_of_total,
    })
}

/// The shape under a point: the deepest sunburst segment containing polar (`angle`, `radius`).
pub fn sunburst_hit(layout: &Layout<SunburstSegment>, angle: f64, radius: f64) -> Option<u32> {
    let angle = angle.rem_euclid(std::f64::consts::TAU);
    layout
        .shapes
        .iter()
        .filter(|s| {
            radius >= s.inner_radius
                && radius < s.outer_radius
                && angle >= s.start_angle
                && angle < s.end_angle
        })
        .max_by_key(|s| s.depth)
        .map(|s| s.node)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf(name: &str, bytes: u64, group: u32) -> HeapNode {
        HeapNode {
            name: name.into(),
            bytes,
            objects: 1,
            children: vec![],
            group: Some(group),
            merged_from: None,
        }
    }

    fn tree() -> HeapNode {
        let mut a = leaf("a", 60, 1);
        a.children = vec![leaf("a1", 30, 3), leaf("a2", 30, 4)];
        let b = leaf("b", 20, 2);
        let mut root = leaf("root", 100, 0);
        root.children = vec![a, b];
        root
    }

    #[test]
    fn sunburst_angles_are_proportional_and_nested() {
        let l = sunburst(&tree(), Metric::Bytes, 2);
        assert_eq!(l.nodes.len(), 5);
        let tau = std::f64::consts::TAU;
        let by_name = |n: &str| {
            let i = l.nodes.iter().position(|x| x.name == n).unwrap();
            l.shapes[i]
        };
        let root = by_name("root");
        assert_eq!(
            (root.start_angle, root.end_angle, root.inner_radius),
            (0.0, tau, 0.0)
        );
        assert!((root.outer_radius - 1.0 / 3.0).abs() < 1e-12);
        let a = by_name("a");
        assert!((a.end_angle - 0.6 * tau).abs() < 1e-12);
        let b = by_name("b");
        assert!((b.start_angle - 0.6 * tau).abs() < 1e-12);
        assert!((b.end_angle - 0.8 * tau).abs() < 1e-12);
        let a2 = by_name("a2");
        assert!((a2.start_angle - 0.3 * tau).abs() < 1e-12);
        assert!((a2.end_angle - 0.6 * tau).abs() < 1e-12);
        assert!((a2.outer_radius - 1.0).abs() < 1e-12);
        assert_eq!(l.nodes[by_name("a2").node as usize].parent, Some(1));
        let hit = sunburst_hit(&l, 0.5 * tau, 0.9).unwrap();
        assert_eq!(l.nodes[hit as usize].name, "a2");
        let info = hover(&l, hit, Metric::Bytes, 200).unwrap();
        assert!((info.share_of_parent - 0.5).abs() < 1e-12);
        assert!((info.share_of_total - 0.15).abs() < 1e-12);
        assert_eq!(
            hover(&l, 0, Metric::Bytes, 200).unwrap().share_of_parent,
            1.0
        );
    }

    #[test]
    fn icicle_rectangles() {
        let l = icicle(&tree(), Metric::Bytes, 2);
        let b = l.shapes[l.nodes.iter().position(|x| x.name == "b").unwrap()];
        assert!((b.y0 - 0.6).abs() < 1e-12 && (b.y1 - 0.8).abs() < 1e-12);
        assert!((b.x0 - 1.0 / 3.0).abs() < 1e-12 && (b.x1 - 2.0 / 3.0).abs() < 1e-12);
        // More levels requested than present: columns keep their width.
        let l = icicle(&tree(), Metric::Bytes, 4);
        assert!((l.shapes[0].x1 - 0.2).abs() < 1e-12);
    }
}
