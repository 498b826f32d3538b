//! Layered (Sugiyama) layout, built for speed on graphs of thousands of nodes and tens of
//! thousands of edges.
//!
//! Phases (each reports progress):
//! 1. **Cycle breaking**: depth-first search from the sources in input order; edges closing a
//!    cycle (to a node on the DFS stack) are reversed, as dot does. Self-loops are set aside.
//! 2. **Layer assignment** ([`rank`]): network simplex (Gansner et al. 1993, as dot does) from
//!    a start of longest path from the sources plus a balancing pass that moves each node within
//!    its feasible range towards the side with more edges; the result has the least total edge
//!    length. [`Layering::LongestPath`] stops after the balancing pass.
//! 3. **Dummy nodes** for edges spanning several layers (or, with the stub option, edges longer
//!    than a threshold are cut to stubs and left out of the layered graph, as IGV does).
//! 4. **Crossing reduction** ([`order`]): DFS initial order, weighted-median sweeps alternating
//!    down and up with transposition of neighbours, keeping the best order seen, crossings
//!    counted with Barth–Jünger–Mutzel accumulator trees.
//! 5. **Coordinates** ([`coords`]): Brandes–Köpf (four alignments, balanced), node widths
//!    respected.
//! 6. **Routes**: polylines through the dummy nodes; forward edges leave the bottom of their
//!    source and enter the top of their target; backward edges too (they leave the bottom of the
//!    source, turn, climb along their dummy chain and drop into the top of the target).
//!
//! With [`LayoutOptions::stable`] and a previous layout, nodes present in both keep their relative
//! order in each layer (sweeps move only new nodes and dummies around them).

mod clusters;
mod coords;
mod order;
mod rank;

pub use clusters::{CLUSTER_PAD, CLUSTER_TITLE, ClusterBox, layout_clustered};

use std::collections::HashMap;

use crate::crossings::{DrawnEdge, DrawnNode, count_drawing_crossings};
use crate::model::Graph;

/// How cycles are broken before layering.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CycleBreaking {
    /// DFS, unless it needs more dummy nodes than `max_dummies` and the greedy order fewer.
    #[default]
    Auto,
    DepthFirst,
    GreedyFeedbackArcs,
}

/// How nodes are assigned to layers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layering {
    /// Least total edge length (dot's network simplex), started from the balanced longest path.
    #[default]
    NetworkSimplex,
    /// Longest path from the sources, then balancing moves to a fixpoint (faster, a few
    /// percent to ~15 % longer edges on tangled graphs).
    LongestPath,
}

/// Tuning of the layout; `Default` gives the values used by `memscape layout`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct LayoutOptions {
    /// Horizontal gap between neighbouring nodes.
    pub node_gap: f64,
    /// Horizontal gap next to a dummy node (edges run closer than boxes).
    pub edge_gap: f64,
    /// Vertical gap between layers.
    pub layer_gap: f64,
    /// Maximum number of median sweeps (each followed by transposition).
    pub max_sweeps: usize,
    /// Stop after this many sweeps without improvement.
    pub patience: usize,
    /// Edges spanning more than this many layers are cut to stubs (IGV's "cut long edges").
    pub cut_edges_longer_than: Option<u32>,
    /// Length of a stub.
    pub stub_length: f64,
    /// Keep the relative order of nodes from the previous snapshot (when one is given).
    pub stable: bool,
    pub cycle_breaking: CycleBreaking,
    pub layering: Layering,
    /// Most exchanges network simplex makes per connected component (beyond, the feasible
    /// layering reached so far is kept).
    pub simplex_iterations: usize,
    /// Most dummy nodes the layout may create; beyond, the longest edges are cut to stubs.
    pub max_dummies: usize,
    /// Above this many vertices (nodes + dummies) crossing reduction spends less effort.
    pub large_graph_vertices: usize,
    /// Width of one character and height of one text line, to size nodes from their labels.
    pub char_width: f64,
    pub line_height: f64,
}

impl Default for LayoutOptions {
    fn default() -> Self {
        Self {
            node_gap: 20.0,
            edge_gap: 8.0,
            layer_gap: 40.0,
            max_sweeps: 24,
            patience: 6,
            cut_edges_longer_than: None,
            stub_length: 20.0,
            stable: true,
            cycle_breaking: CycleBreaking::Auto,
            layering: Layering::NetworkSimplex,
            simplex_iterations: 100_000,
            max_dummies: 400_000,
            large_graph_vertices: 30_000,
            char_width: 7.0,
            line_height: 14.0,
        }
    }
}

/// What the layout is doing, for a progress bar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    pub phase: &'static str,
    /// 0.0 to 1.0 over the whole layout.
    pub fraction: f32,
}

/// A placed node: top-left corner and size.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct NodeBox {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl NodeBox {
    pub fn center(&self) -> [f64; 2] {
        [self.x + self.w / 2.0, self.y + self.h / 2.0]
    }
}

/// The route of one input edge.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct EdgeRoute {
    /// Node indices of the input edge (as given, not reversed).
    pub from: usize,
    pub to: usize,
    /// Polyline from the source to the target. When `cut`, four points: the source stub
    /// (points 0–1) and the target stub (points 2–3), not to be joined.
    pub points: Vec<[f64; 2]>,
    /// The edge points upwards (it was reversed to break a cycle).
    pub reversed: bool,
    pub cut: bool,
}

/// A finished layout.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    pub nodes: Vec<NodeBox>,
    /// Layer of each node (0 at the top).
    pub layer_of: Vec<u32>,
    pub edges: Vec<EdgeRoute>,
    pub layers: usize,
    /// Crossings of the drawn edge segments between adjacent layers ([`crate::crossings`]).
    pub crossings: u64,
    pub width: f64,
    pub height: f64,
}

/// A previous layout to stay close to: node id → x center and layer.
#[derive(Debug, Clone, Default)]
pub struct PreviousPositions {
    pub x_of: HashMap<String, f64>,
}

impl PreviousPositions {
    pub fn from_layout(graph: &Graph, layout: &Layout) -> Self {
        Self {
            x_of: graph
                .nodes
                .iter()
                .zip(&layout.nodes)
                .map(|(n, b)| (n.id.clone(), b.center()[0]))
                .collect(),
        }
    }
}

/// The size of a node's box from its shown text.
pub fn node_size(label: &str, options: &LayoutOptions) -> (f64, f64) {
    let mut lines = 0usize;
    let mut widest = 0usize;
    for line in label.lines() {
        lines += 1;
        widest = widest.max(line.chars().count());
    }
    let w = (widest.min(120) as f64 * options.char_width + 16.0).max(40.0);
    let h = (lines.clamp(1, 60) as f64 * options.line_height + 10.0).max(24.0);
    (w, h)
}

/// Lays out a graph of the model (node sizes from their labels).
pub fn layout_graph(
    graph: &Graph,
    options: &LayoutOptions,
    previous: Option<&PreviousPositions>,
    progress: &mut dyn FnMut(Progress),
) -> Layout {
    let sizes: Vec<(f64, f64)> = graph
        .nodes
        .iter()
        .map(|n| node_size(n.label(), options))
        .collect();
    let edges: Vec<(usize, usize)> = graph.edges.iter().map(|e| (e.from, e.to)).collect();
    let fixed_order: Option<Vec<Option<f64>>> = match previous {
        Some(prev) if options.stable => Some(
            graph
                .nodes
                .iter()
                .map(|n| prev.x_of.get(&n.id).copied())
                .collect(),
        ),
        _ => None,
    };
    layout_sized(&sizes, &edges, options, fixed_order.as_deref(), progress)
}

/// [`layout_graph`] with the graph's blocks as boxes ([`layout_clustered`]); no stable order
/// across snapshots in this mode.
pub fn layout_graph_clustered(
    graph: &Graph,
    options: &LayoutOptions,
    progress: &mut dyn FnMut(Progress),
) -> (Layout, Vec<ClusterBox>) {
    let sizes: Vec<(f64, f64)> = graph
        .nodes
        .iter()
        .map(|n| node_size(n.label(), options))
        .collect();
    layout_clustered(graph, &sizes, options, progress)
}

/// The layered graph: real nodes `0..n`, then dummies.
pub(crate) struct Layered {
    pub layer: Vec<u32>,
    pub width: Vec<f64>,
    pub is_dummy: Vec<bool>,
    /// Neighbours in the layer above / below (with multiplicity).
    pub up: Vec<Vec<u32>>,
    pub down: Vec<Vec<u32>>,
    /// Vertices of each layer in order.
    pub layers: Vec<Vec<u32>>,
}

/// Lays out `sizes.len()` nodes of the given sizes (width, height) and the edges between them.
/// `keep_order`, when given, holds for each node a previous x (or `None` for a new node); nodes
/// with one keep that relative order within their layer.
pub fn layout_sized(
    sizes: &[(f64, f64)],
    edges: &[(usize, usize)],
    options: &LayoutOptions,
    keep_order: Option<&[Option<f64>]>,
    progress: &mut dyn FnMut(Progress),
) -> Layout {
    let n = sizes.len();
    let mut report = |phase: &'static str, fraction: f32| progress(Progress { phase, fraction });
    report("cycles", 0.0);
    // Valid edges only; self-loops are drawn on their own.
    let valid: Vec<(usize, usize)> = edges
        .iter()
        .copied()
        .filter(|&(a, b)| a < n && b < n)
        .collect();
    // Two ways to break cycles: DFS (follows the program's structure: loop back edges of a CFG
    // are exactly the reversed ones) and greedy feedback arc set (far shallower on tangled
    // graphs such as call graphs with big recursive components). Keep the one whose layering
    // needs fewer dummy nodes: they are what the later phases pay for.
    // (total span, reversed flags, acyclic edges, layer of each node)
    type Candidate = (u64, Vec<bool>, Vec<(usize, usize)>, Vec<u32>);
    let first_choice = match options.cycle_breaking {
        CycleBreaking::GreedyFeedbackArcs => greedy_feedback_arcs(n, &valid),
        CycleBreaking::DepthFirst | CycleBreaking::Auto => break_cycles(n, &valid),
    };
    let candidate = |reversed: Vec<bool>| -> Candidate {
        let dag: Vec<(usize, usize)> = valid
            .iter()
            .zip(&reversed)
            .map(|(&(a, b), &r)| if r { (b, a) } else { (a, b) })
            .collect();
        let layer = assign_layers(n, &dag, options);
        let span: u64 = dag
            .iter()
            .map(|&(a, b)| u64::from(layer[b].abs_diff(layer[a])))
            .sum();
        (span, reversed, dag, layer)
    };
    let mut best: Option<Candidate> = Some(candidate(first_choice));
    // Auto: DFS first; the feedback-arc order only replaces it when DFS needs more dummies than
    // the budget and the greedy order fewer (only then is it computed). On CFGs DFS reverses
    // exactly the loop back edges; the greedy order may shorten edges by reversing many more,
    // which squashes the CFG into few layers and costs crossings.
    let dfs_over_budget = best.as_ref().is_some_and(|(s, _, dag, _)| {
        s.saturating_sub(dag.len() as u64) > options.max_dummies as u64
    });
    if options.cycle_breaking == CycleBreaking::Auto && dfs_over_budget {
        let greedy = candidate(greedy_feedback_arcs(n, &valid));
        if best.as_ref().is_some_and(|(s, ..)| greedy.0 < *s) {
            best = Some(greedy);
        }
    }
    let Some((total_span, reversed, dag, layer)) = best else {
        return Layout {
            nodes: Vec::new(),
            layer_of: Vec::new(),
            edges: Vec::new(),
            layers: 0,
            crossings: 0,
            width: 0.0,
            height: 0.0,
        };
    };
    report("layers", 0.1);
    // Dummy budget: beyond it the longest edges are cut to stubs (as with
    // `cut_edges_longer_than`), so that a tangled graph still lays out in bounded time.
    let budget = options.max_dummies as u64;
    let dummies_needed = total_span.saturating_sub(dag.len() as u64);
    let mut cut_limit = options.cut_edges_longer_than;
    if dummies_needed > budget {
        let mut spans: Vec<u32> = dag
            .iter()
            .map(|&(a, b)| layer[b].abs_diff(layer[a]))
            .filter(|&s| s > 1)
            .collect();
        spans.sort_unstable();
        // Largest limit whose kept edges stay within the budget.
        let mut used = 0u64;
        let mut limit = 1u32;
        for &s in &spans {
            if used + u64::from(s - 1) > budget {
                break;
            }
            used += u64::from(s - 1);
            limit = s;
        }
        tracing::debug!(
            dummies_needed,
            budget,
            limit,
            "dummy budget exceeded: long edges cut"
        );
        cut_limit = Some(cut_limit.map_or(limit, |c| c.min(limit)));
    }
    report("dummies", 0.2);

    // Layered graph with dummy chains.
    let mut lg = Layered {
        layer: layer.clone(),
        width: sizes.iter().map(|s| s.0).collect(),
        is_dummy: vec![false; n],
        up: vec![Vec::new(); n],
        down: vec![Vec::new(); n],
        layers: Vec::new(),
    };
    // For each input edge: the vertex chain top → bottom, or None (self-loop or cut).
    let mut chains: Vec<Option<Vec<u32>>> = Vec::with_capacity(dag.len());
    let mut cut = vec![false; dag.len()];
    for (i, &(a, b)) in dag.iter().enumerate() {
        if a == b {
            chains.push(None);
            continue;
        }
        let span = layer[b].saturating_sub(layer[a]);
        if let Some(limit) = cut_limit
            && span > limit.max(1)
        {
            cut[i] = true;
            chains.push(None);
            continue;
        }
        let mut chain = Vec::with_capacity(span as usize + 1);
        chain.push(a as u32);
        let mut prev = a as u32;
        for l in layer[a] + 1..layer[b] {
            let d = lg.layer.len() as u32;
            lg.layer.push(l);
            lg.width.push(0.0);
            lg.is_dummy.push(true);
            lg.up.push(vec![prev]);
            lg.down.push(Vec::new());
            lg.down[prev as usize].push(d);
            chain.push(d);
            prev = d;
        }
        lg.down[prev as usize].push(b as u32);
        lg.up[b].push(prev);
        chain.push(b as u32);
        chains.push(Some(chain));
    }
    let layer_count = lg.layer.iter().copied().max().map_or(0, |m| m as usize + 1);
    lg.layers = vec![Vec::new(); layer_count];
    tracing::debug!(
        nodes = n,
        dummies = lg.layer.len() - n,
        layers = layer_count,
        reversed = reversed.iter().filter(|r| **r).count(),
        "layered graph built"
    );

    report("order", 0.3);
    let fixed: Option<Vec<Option<f64>>> = keep_order.map(|k| {
        (0..lg.layer.len())
            .map(|v| k.get(v).copied().flatten())
            .collect()
    });
    order::order(&mut lg, options, fixed.as_deref(), &mut |f| {
        report("order", 0.3 + 0.5 * f)
    });

    report("coordinates", 0.8);
    let gaps = coords::Gaps {
        node: options.node_gap,
        edge: options.edge_gap,
    };
    let x = coords::brandes_kopf(&lg, gaps);

    report("routes", 0.9);
    // y: layers stacked with their tallest node.
    let mut layer_height = vec![0.0f64; layer_count];
    for v in 0..n {
        let l = layer[v] as usize;
        layer_height[l] = layer_height[l].max(sizes[v].1);
    }
    let mut layer_center = vec![0.0f64; layer_count];
    let mut top = 0.0;
    for l in 0..layer_count {
        layer_center[l] = top + layer_height[l] / 2.0;
        top += layer_height[l] + options.layer_gap;
    }
    let height = (top - options.layer_gap).max(0.0);
    let min_x = (0..n)
        .map(|v| x[v] - sizes[v].0 / 2.0)
        .chain((n..lg.layer.len()).map(|v| x[v]))
        .fold(f64::INFINITY, f64::min);
    let shift = if min_x.is_finite() { -min_x } else { 0.0 };
    let xc = |v: usize| x[v] + shift;
    let nodes: Vec<NodeBox> = (0..n)
        .map(|v| {
            let c = layer_center[layer[v] as usize];
            NodeBox {
                x: xc(v) - sizes[v].0 / 2.0,
                y: c - sizes[v].1 / 2.0,
                w: sizes[v].0,
                h: sizes[v].1,
            }
        })
        .collect();
    let width = nodes
        .iter()
        .map(|b| b.x + b.w)
        .chain((n..lg.layer.len()).map(xc))
        .fold(0.0f64, f64::max);

    let bottom = |v: usize| layer_center[layer[v] as usize] + sizes[v].1 / 2.0;
    let top_of = |v: usize| layer_center[layer[v] as usize] - sizes[v].1 / 2.0;
    let hook = options.layer_gap / 3.0;
    let mut routes = Vec::with_capacity(valid.len());
    for (i, &(from, to)) in valid.iter().enumerate() {
        let is_reversed = reversed[i];
        let points = if from == to {
            // Self-loop: out of the bottom, around the right side, into the top.
            let b = nodes[from];
            let right = b.x + b.w + options.edge_gap;
            vec![
                [xc(from), b.y + b.h],
                [xc(from), b.y + b.h + hook],
                [right, b.y + b.h + hook],
                [right, b.y - hook],
                [xc(from), b.y - hook],
                [xc(from), b.y],
            ]
        } else if cut[i] {
            let s = options.stub_length;
            vec![
                [xc(from), bottom(from)],
                [xc(from), bottom(from) + s],
                [xc(to), top_of(to) - s],
                [xc(to), top_of(to)],
            ]
        } else if let Some(chain) = &chains[i] {
            let inner: Vec<[f64; 2]> = chain[1..chain.len() - 1]
                .iter()
                .map(|&d| [xc(d as usize), layer_center[lg.layer[d as usize] as usize]])
                .collect();
            if !is_reversed {
                let mut p = Vec::with_capacity(inner.len() + 2);
                p.push([xc(from), bottom(from)]);
                p.extend(inner);
                p.push([xc(to), top_of(to)]);
                p
            } else {
                // The chain runs top (target) → bottom (source); walk it upwards.
                let below = bottom(from) + hook;
                let above = top_of(to) - hook;
                let side = if inner.is_empty() {
                    let (bf, bt) = (nodes[from], nodes[to]);
                    (bf.x + bf.w).max(bt.x + bt.w) + options.edge_gap
                } else {
                    0.0
                };
                let first_x = inner.last().map_or(side, |p| p[0]);
                let last_x = inner.first().map_or(side, |p| p[0]);
                let mut p = Vec::with_capacity(inner.len() + 6);
                p.push([xc(from), bottom(from)]);
                p.push([xc(from), below]);
                p.push([first_x, below]);
                p.extend(inner.iter().rev());
                p.push([last_x, above]);
                p.push([xc(to), above]);
                p.push([xc(to), top_of(to)]);
                p
            }
        } else {
            Vec::new()
        };
        routes.push(EdgeRoute {
            from,
            to,
            points,
            reversed: is_reversed,
            cut: cut[i] || from == to,
        });
    }
    report("crossings", 0.97);
    let crossings = crossings_of(&nodes, &routes);
    report("done", 1.0);
    Layout {
        nodes,
        layer_of: layer,
        edges: routes,
        layers: layer_count,
        crossings,
        width,
        height,
    }
}

/// Crossings of a finished layout, with the counter used for every engine.
pub fn crossings_of(nodes: &[NodeBox], routes: &[EdgeRoute]) -> u64 {
    let drawn_nodes: Vec<DrawnNode> = nodes
        .iter()
        .map(|b| {
            let [x, y] = b.center();
            DrawnNode { x, y }
        })
        .collect();
    let drawn_edges: Vec<DrawnEdge> = routes
        .iter()
        .filter(|r| !r.cut)
        .map(|r| DrawnEdge {
            from: r.from,
            to: r.to,
            points: r.points.clone(),
        })
        .collect();
    count_drawing_crossings(&drawn_nodes, &drawn_edges).0
}

/// Marks the edges to reverse so that the graph becomes acyclic: iterative DFS from the sources
/// (in input order), then from any unvisited node; an edge to a node on the stack is reversed.
pub(crate) fn break_cycles(n: usize, edges: &[(usize, usize)]) -> Vec<bool> {
    let mut out_start = vec![0u32; n + 1];
    for &(a, _) in edges {
        out_start[a + 1] += 1;
    }
    for i in 0..n {
        out_start[i + 1] += out_start[i];
    }
    let mut fill = out_start.clone();
    let mut out_edge = vec![0u32; edges.len()];
    for (i, &(a, _)) in edges.iter().enumerate() {
        out_edge[fill[a] as usize] = i as u32;
        fill[a] += 1;
    }
    let mut has_in = vec![false; n];
    for &(a, b) in edges {
        if a != b {
            has_in[b] = true;
        }
    }
    // 0 = unvisited, 1 = on stack, 2 = done.
    let mut state = vec![0u8; n];
    let mut reversed = vec![false; edges.len()];
    let mut stack: Vec<(usize, u32)> = Vec::new();
    let starts = (0..n).filter(|&v| !has_in[v]).chain(0..n);
    for root in starts {
        if state[root] != 0 {
            continue;
        }
        state[root] = 1;
        stack.push((root, out_start[root]));
        while let Some(&mut (v, ref mut next)) = stack.last_mut() {
            if *next < out_start[v + 1] {
                let e = out_edge[*next as usize] as usize;
                *next += 1;
                let w = edges[e].1;
                match state[w] {
                    0 => {
                        state[w] = 1;
                        stack.push((w, out_start[w]));
                    }
                    1 if w != v => {
                        reversed[e] = true;
                    }
                    _ => {}
                }
            } else {
                state[v] = 2;
                stack.pop();
            }
        }
    }
    reversed
}

/// Greedy feedback arc set (Eades, Lin & Smyth 1993): repeatedly peel sinks to the back and
/// sources to the front, otherwise move the vertex with the largest out-degree minus in-degree to
/// the front; edges pointing backwards in the resulting sequence are reversed.
pub(crate) fn greedy_feedback_arcs(n: usize, edges: &[(usize, usize)]) -> Vec<bool> {
    use std::collections::BinaryHeap;
    let mut outs: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut ins: Vec<Vec<u32>> = vec![Vec::new(); n];
    for &(a, b) in edges {
        if a != b {
            outs[a].push(b as u32);
            ins[b].push(a as u32);
        }
    }
    let mut out_deg: Vec<i64> = outs.iter().map(|o| o.len() as i64).collect();
    let mut in_deg: Vec<i64> = ins.iter().map(|i| i.len() as i64).collect();
    let mut removed = vec![false; n];
    let mut sinks: Vec<u32> = (0..n as u32)
        .filter(|&v| out_deg[v as usize] == 0)
        .collect();
    let mut sources: Vec<u32> = (0..n as u32)
        .filter(|&v| in_deg[v as usize] == 0 && out_deg[v as usize] > 0)
        .collect();
    sinks.reverse();
    sources.reverse();
    let mut heap: BinaryHeap<(i64, std::cmp::Reverse<u32>)> = (0..n as u32)
        .map(|v| {
            (
                out_deg[v as usize] - in_deg[v as usize],
                std::cmp::Reverse(v),
            )
        })
        .collect();
    let mut front: Vec<u32> = Vec::with_capacity(n);
    let mut back: Vec<u32> = Vec::new();
    let mut remaining = n;
    let take = |v: u32,
                removed: &mut Vec<bool>,
                out_deg: &mut Vec<i64>,
                in_deg: &mut Vec<i64>,
                sinks: &mut Vec<u32>,
                sources: &mut Vec<u32>,
                heap: &mut BinaryHeap<(i64, std::cmp::Reverse<u32>)>| {
        removed[v as usize] = true;
        for &w in &outs[v as usize] {
            let wi = w as usize;
            if !removed[wi] {
                in_deg[wi] -= 1;
                if in_deg[wi] == 0 && out_deg[wi] > 0 {
                    sources.push(w);
                }
                heap.push((out_deg[wi] - in_deg[wi], std::cmp::Reverse(w)));
            }
        }
        for &u in &ins[v as usize] {
            let ui = u as usize;
            if !removed[ui] {
                out_deg[ui] -= 1;
                if out_deg[ui] == 0 {
                    sinks.push(u);
                }
                heap.push((out_deg[ui] - in_deg[ui], std::cmp::Reverse(u)));
            }
        }
    };
    while remaining > 0 {
        if let Some(v) = sinks.pop() {
            if !removed[v as usize] {
                take(
                    v,
                    &mut removed,
                    &mut out_deg,
                    &mut in_deg,
                    &mut sinks,
                    &mut sources,
                    &mut heap,
                );
                back.push(v);
                remaining -= 1;
            }
            continue;
        }
        if let Some(v) = sources.pop() {
            if !removed[v as usize] {
                take(
                    v,
                    &mut removed,
                    &mut out_deg,
                    &mut in_deg,
                    &mut sinks,
                    &mut sources,
                    &mut heap,
                );
                front.push(v);
                remaining -= 1;
            }
            continue;
        }
        // Largest out − in among the remaining vertices (stale heap entries are skipped).
        let mut chosen = None;
        while let Some((delta, std::cmp::Reverse(v))) = heap.pop() {
            let vi = v as usize;
            if !removed[vi] && delta == out_deg[vi] - in_deg[vi] {
                chosen = Some(v);
                break;
            }
        }
        let Some(v) = chosen else {
            break;
        };
        take(
            v,
            &mut removed,
            &mut out_deg,
            &mut in_deg,
            &mut sinks,
            &mut sources,
            &mut heap,
        );
        front.push(v);
        remaining -= 1;
    }
    let mut position = vec![0usize; n];
    for (i, &v) in front.iter().chain(back.iter().rev()).enumerate() {
        position[v as usize] = i;
    }
    edges
        .iter()
        .map(|&(a, b)| a != b && position[a] > position[b])
        .collect()
}

/// Layers of a DAG by `options.layering`.
pub(crate) fn assign_layers(n: usize, dag: &[(usize, usize)], options: &LayoutOptions) -> Vec<u32> {
    let start = assign_layers_longest_path(n, dag);
    match options.layering {
        Layering::LongestPath => start,
        Layering::NetworkSimplex => {
            rank::network_simplex(n, dag, &start, options.simplex_iterations)
        }
    }
}

/// Layers of a DAG by longest path from the sources alone (every source at layer 0).
#[cfg(test)]
pub(crate) fn longest_path(n: usize, dag: &[(usize, usize)]) -> Vec<u32> {
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut indeg = vec![0u32; n];
    for &(a, b) in dag {
        if a != b {
            succ[a].push(b);
            indeg[b] += 1;
        }
    }
    let mut layer = vec![0u32; n];
    let mut queue: Vec<usize> = (0..n).filter(|&v| indeg[v] == 0).collect();
    let mut head = 0;
    while head < queue.len() {
        let v = queue[head];
        head += 1;
        for &w in &succ[v] {
            layer[w] = layer[w].max(layer[v] + 1);
            indeg[w] -= 1;
            if indeg[w] == 0 {
                queue.push(w);
            }
        }
    }
    layer
}

/// Layers of a DAG: longest path from the sources, then balancing moves to a fixpoint (each
/// move strictly shortens the total edge length, so it terminates).
pub(crate) fn assign_layers_longest_path(n: usize, dag: &[(usize, usize)]) -> Vec<u32> {
    let mut succ: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut pred: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut indeg = vec![0u32; n];
    for &(a, b) in dag {
        if a == b {
            continue;
        }
        succ[a].push(b as u32);
        pred[b].push(a as u32);
        indeg[b] += 1;
    }
    let mut layer = vec![0u32; n];
    let mut queue: Vec<u32> = (0..n as u32).filter(|&v| indeg[v as usize] == 0).collect();
    let mut topo = Vec::with_capacity(n);
    let mut head = 0;
    while head < queue.len() {
        let v = queue[head] as usize;
        head += 1;
        topo.push(v);
        for &w in &succ[v] {
            let w = w as usize;
            layer[w] = layer[w].max(layer[v] + 1);
            indeg[w] -= 1;
            if indeg[w] == 0 {
                queue.push(w as u32);
            }
        }
    }
    // Sources sit at layer 0 under longest path; pull each node towards the side with more
    // edges. Bounded passes: each pass is O(E) and the gains shrink quickly.
    for _pass in 0..32 {
        let mut moved = false;
        for &v in topo.iter().rev() {
            let (ins, outs) = (pred[v].len(), succ[v].len());
            if outs > ins {
                // Down as far as the successors allow.
                if let Some(hi) = succ[v].iter().map(|&w| layer[w as usize]).min() {
                    let target = hi.saturating_sub(1);
                    if target > layer[v] {
                        layer[v] = target;
                        moved = true;
                    }
                }
            }
        }
        for &v in &topo {
            let (ins, outs) = (pred[v].len(), succ[v].len());
            if ins > outs {
                let lo = pred[v]
                    .iter()
                    .map(|&u| layer[u as usize] + 1)
                    .max()
                    .unwrap_or(0);
                if lo < layer[v] {
                    layer[v] = lo;
                    moved = true;
                }
            }
        }
        if !moved {
            break;
        }
    }
    if let Some(&min) = layer.iter().min() {
        for l in &mut layer {
            *l -= min;
        }
    }
    layer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_progress(_: Progress) {}

    #[test]
    fn cycle_breaking_leaves_a_dag() {
        let edges = vec![(0, 1), (1, 2), (2, 0), (2, 3), (3, 1), (3, 3)];
        let rev = break_cycles(4, &edges);
        let dag: Vec<_> = edges
            .iter()
            .zip(&rev)
            .map(|(&(a, b), &r)| if r { (b, a) } else { (a, b) })
            .collect();
        let layers = assign_layers(4, &dag, &LayoutOptions::default());
        for &(a, b) in &dag {
            if a != b {
                assert!(layers[a] < layers[b], "{a}->{b} {layers:?}");
            }
        }
        assert!(!rev[5], "self-loops are not reversed");
    }

    #[test]
    fn greedy_feedback_arcs_leave_a_dag() {
        let mut state = 7u64;
        let mut edges = Vec::new();
        for _ in 0..300 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            edges.push(((state >> 33) as usize % 60, (state >> 17) as usize % 60));
        }
        let rev = greedy_feedback_arcs(60, &edges);
        let dag: Vec<_> = edges
            .iter()
            .zip(&rev)
            .map(|(&(a, b), &r)| if r { (b, a) } else { (a, b) })
            .collect();
        let layers = assign_layers(60, &dag, &LayoutOptions::default());
        for &(a, b) in &dag {
            if a != b {
                assert!(layers[a] < layers[b]);
            }
        }
    }

    #[test]
    fn balancing_pulls_sources_down() {
        // 0→1→2→3 and 4→3: longest path puts 4 at layer 0; balancing puts it right above 3.
        let layers = assign_layers_longest_path(5, &[(0, 1), (1, 2), (2, 3), (4, 3)]);
        assert_eq!(layers, vec![0, 1, 2, 3, 2]);
    }

    #[test]
    fn diamond_has_no_crossings_and_no_overlaps() {
        let sizes = vec![(40.0, 20.0); 4];
        let layout = layout_sized(
            &sizes,
            &[(0, 1), (0, 2), (1, 3), (2, 3)],
            &LayoutOptions::default(),
            None,
            &mut no_progress,
        );
        assert_eq!(layout.layers, 3);
        assert_eq!(layout.crossings, 0);
        let (b1, b2) = (layout.nodes[1], layout.nodes[2]);
        assert!(b1.x + b1.w <= b2.x || b2.x + b2.w <= b1.x);
    }
}
