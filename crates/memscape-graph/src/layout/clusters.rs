//! Block-clustered layout (IGV's "cluster" view of a CFG): every block's nodes are laid out
//! together inside the block's box, and the boxes are laid out as the nodes of the block graph.
//!
//! Two levels of the same layered engine: each block's own nodes and inner edges first (its box
//! size follows), then the blocks with their sizes and the edges between them (block successors
//! and every edge whose ends lie in different blocks). An edge between blocks follows the block
//! graph's route, from the bottom of its source node to the top of its target node. Nodes in no
//! block stand alone in the block graph. DOT clusters nest: a node belongs to its innermost one.

use std::collections::HashMap;

use super::{EdgeRoute, Layout, LayoutOptions, NodeBox, Progress, crossings_of, layout_sized};
use crate::model::Graph;

/// A block's box in a clustered layout.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ClusterBox {
    /// Index into [`Graph::blocks`].
    pub block: usize,
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

/// Padding inside a block's box, around its nodes.
pub const CLUSTER_PAD: f64 = 10.0;
/// Room above a block's nodes for its title.
pub const CLUSTER_TITLE: f64 = 18.0;

/// One unit of the block graph: a block with its own nodes, or a node in no block.
struct Unit {
    block: Option<usize>,
    nodes: Vec<usize>,
}

/// Lays out `graph` with its blocks as boxes; `sizes` are the node sizes. Returns the layout
/// (one route per edge, in edge order, as [`layout_sized`]) and the boxes of the blocks that
/// hold nodes. A graph without blocks gets the plain layout and no boxes.
pub fn layout_clustered(
    graph: &Graph,
    sizes: &[(f64, f64)],
    options: &LayoutOptions,
    progress: &mut dyn FnMut(Progress),
) -> (Layout, Vec<ClusterBox>) {
    let n = graph.nodes.len().min(sizes.len());
    let edges: Vec<(usize, usize)> = graph.edges.iter().map(|e| (e.from, e.to)).collect();
    let units = units_of(graph, n);
    if units.iter().all(|u| u.block.is_none()) {
        return (
            layout_sized(sizes, &edges, options, None, progress),
            Vec::new(),
        );
    }
    let mut unit_of = vec![usize::MAX; n];
    let mut local_of = vec![0usize; n];
    for (u, unit) in units.iter().enumerate() {
        for (l, &v) in unit.nodes.iter().enumerate() {
            unit_of[v] = u;
            local_of[v] = l;
        }
    }
    // Level 1: inside every block.
    let mut inner: Vec<Option<(Layout, [f64; 2])>> = Vec::with_capacity(units.len());
    let mut unit_sizes = Vec::with_capacity(units.len());
    for unit in &units {
        match unit.block {
            None => {
                inner.push(None);
                unit_sizes.push(sizes[unit.nodes[0]]);
            }
            Some(_) => {
                let member_sizes: Vec<(f64, f64)> = unit.nodes.iter().map(|&v| sizes[v]).collect();
                let inner_edges: Vec<(usize, usize)> = edges
                    .iter()
                    .filter(|&&(a, b)| a < n && b < n && unit_of[a] == unit_of[b])
                    .filter(|&&(a, _)| unit.nodes.get(local_of[a]) == Some(&a))
                    .map(|&(a, b)| (local_of[a], local_of[b]))
                    .collect();
                let l = layout_sized(&member_sizes, &inner_edges, options, None, &mut |_| {});
                let (origin, far) = extent(&l);
                let (w, h) = (far[0] - origin[0], far[1] - origin[1]);
                unit_sizes.push((w + 2.0 * CLUSTER_PAD, h + CLUSTER_PAD + CLUSTER_TITLE));
                inner.push(Some((l, origin)));
            }
        }
    }
    // Level 2: the block graph.
    let block_unit: HashMap<&str, usize> = units
        .iter()
        .enumerate()
        .filter_map(|(u, unit)| Some((graph.blocks.get(unit.block?)?.name.as_str(), u)))
        .collect();
    let mut unit_edges: Vec<(usize, usize)> = Vec::new();
    let mut edge_unit_edge = vec![usize::MAX; edges.len()];
    let mut index: HashMap<(usize, usize), usize> = HashMap::new();
    let mut add = |a: usize, b: usize, unit_edges: &mut Vec<(usize, usize)>| {
        *index.entry((a, b)).or_insert_with(|| {
            unit_edges.push((a, b));
            unit_edges.len() - 1
        })
    };
    for (i, &(a, b)) in edges.iter().enumerate() {
        if a < n && b < n && unit_of[a] != unit_of[b] {
            edge_unit_edge[i] = add(unit_of[a], unit_of[b], &mut unit_edges);
        }
    }
    for (u, unit) in units.iter().enumerate() {
        let Some(block) = unit.block.and_then(|b| graph.blocks.get(b)) else {
            continue;
        };
        for s in &block.successors {
            if let Some(&t) = block_unit.get(s.as_str())
                && t != u
            {
                add(u, t, &mut unit_edges);
            }
        }
    }
    let top = layout_sized(&unit_sizes, &unit_edges, options, None, progress);
    // Place the nodes.
    let mut nodes = vec![
        NodeBox {
            x: 0.0,
            y: 0.0,
            w: 0.0,
            h: 0.0
        };
        n
    ];
    let mut boxes = Vec::new();
    for (u, unit) in units.iter().enumerate() {
        let ub = top.nodes[u];
        match (&inner[u], unit.block) {
            (Some((l, origin)), Some(block)) => {
                boxes.push(ClusterBox {
                    block,
                    x: ub.x,
                    y: ub.y,
                    w: ub.w,
                    h: ub.h,
                });
                for (local, &v) in unit.nodes.iter().enumerate() {
                    let b = l.nodes[local];
                    nodes[v] = NodeBox {
                        x: ub.x + CLUSTER_PAD + b.x - origin[0],
                        y: ub.y + CLUSTER_TITLE + b.y - origin[1],
                        w: b.w,
                        h: b.h,
                    };
                }
            }
            _ => nodes[unit.nodes[0]] = ub,
        }
    }
    // Routes, one per input edge.
    let mut inner_route = vec![0usize; units.len()];
    let mut routes = Vec::with_capacity(edges.len());
    for (i, &(a, b)) in edges.iter().enumerate() {
        if a >= n || b >= n {
            routes.push(EdgeRoute {
                from: a,
                to: b,
                points: Vec::new(),
                reversed: false,
                cut: true,
            });
            continue;
        }
        let (ua, ub) = (unit_of[a], unit_of[b]);
        if ua == ub {
            let route = match &inner[ua] {
                Some((l, origin)) => {
                    // Inner edges were added in edge order: the k-th inner edge of the unit.
                    let k = inner_route[ua];
                    inner_route[ua] += 1;
                    let base = top.nodes[ua];
                    l.edges.get(k).map(|r| EdgeRoute {
                        from: a,
                        to: b,
                        points: r
                            .points
                            .iter()
                            .map(|p| {
                                [
                                    base.x + CLUSTER_PAD + p[0] - origin[0],
                                    base.y + CLUSTER_TITLE + p[1] - origin[1],
                                ]
                            })
                            .collect(),
                        reversed: r.reversed,
                        cut: r.cut,
                    })
                }
                // A self-loop of a node in no block.
                None => None,
            };
            routes.push(route.unwrap_or_else(|| self_loop(a, &nodes[a], options)));
            continue;
        }
        let (na, nb) = (nodes[a], nodes[b]);
        let start = [na.x + na.w / 2.0, na.y + na.h];
        let end = [nb.x + nb.w / 2.0, nb.y];
        let mut points = vec![start];
        let mut reversed = false;
        let mut cut = false;
        if let Some(r) = top.edges.get(edge_unit_edge[i]) {
            points.extend(r.points.iter().copied());
            reversed = r.reversed;
            cut = r.cut;
        }
        points.push(end);
        if cut {
            // Stubs: keep the four-point convention of cut edges (source stub, target stub).
            let s = options.stub_length;
            points = vec![start, [start[0], start[1] + s], [end[0], end[1] - s], end];
        }
        routes.push(EdgeRoute {
            from: a,
            to: b,
            points,
            reversed,
            cut,
        });
    }
    let crossings = crossings_of(&nodes, &routes);
    let layer_of = (0..n)
        .map(|v| top.layer_of.get(unit_of[v]).copied().unwrap_or(0))
        .collect();
    (
        Layout {
            nodes,
            layer_of,
            edges: routes,
            layers: top.layers,
            crossings,
            width: top.width,
            height: top.height,
        },
        boxes,
    )
}

/// The units of the block graph: blocks with nodes (a node in its innermost block), then the
/// nodes in no block, each alone.
fn units_of(graph: &Graph, n: usize) -> Vec<Unit> {
    let depth_of = |mut b: usize| {
        let mut d = 0usize;
        while let Some(p) = graph.blocks.get(b).and_then(|blk| blk.parent) {
            d += 1;
            // Parents come before children; a malformed cycle stops at the block count.
            if d > graph.blocks.len() {
                break;
            }
            b = p;
        }
        d
    };
    let mut home: Vec<Option<(usize, usize)>> = vec![None; n];
    for (b, block) in graph.blocks.iter().enumerate() {
        let d = depth_of(b);
        for &v in &block.nodes {
            if let Some(slot) = home.get_mut(v)
                && slot.is_none_or(|(_, old)| d > old)
            {
                *slot = Some((b, d));
            }
        }
    }
    let mut by_block: Vec<Vec<usize>> = vec![Vec::new(); graph.blocks.len()];
    let mut loose = Vec::new();
    for (v, h) in home.iter().enumerate() {
        match h {
            Some((b, _)) => by_block[*b].push(v),
            None => loose.push(v),
        }
    }
    let mut units: Vec<Unit> = by_block
        .into_iter()
        .enumerate()
        .filter(|(_, nodes)| !nodes.is_empty())
        .map(|(b, nodes)| Unit {
            block: Some(b),
            nodes,
        })
        .collect();
    units.extend(loose.into_iter().map(|v| Unit {
        block: None,
        nodes: vec![v],
    }));
    units
}

/// The top-left and bottom-right corners of everything drawn in `l` (boxes and routes).
fn extent(l: &Layout) -> ([f64; 2], [f64; 2]) {
    let mut lo = [f64::INFINITY; 2];
    let mut hi = [f64::NEG_INFINITY; 2];
    let mut take = |p: [f64; 2]| {
        for k in 0..2 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    };
    for b in &l.nodes {
        take([b.x, b.y]);
        take([b.x + b.w, b.y + b.h]);
    }
    for r in &l.edges {
        r.points.iter().for_each(|&p| take(p));
    }
    if lo[0].is_finite() {
        (lo, hi)
    } else {
        ([0.0; 2], [0.0; 2])
    }
}

fn self_loop(v: usize, b: &NodeBox, options: &LayoutOptions) -> EdgeRoute {
    let hook = options.layer_gap / 3.0;
    let xc = b.x + b.w / 2.0;
    let right = b.x + b.w + options.edge_gap;
    EdgeRoute {
        from: v,
        to: v,
        points: vec![
            [xc, b.y + b.h],
            [xc, b.y + b.h + hook],
            [right, b.y + b.h + hook],
            [right, b.y - hook],
            [xc, b.y - hook],
            [xc, b.y],
        ],
        reversed: false,
        cut: true,
    }
}
