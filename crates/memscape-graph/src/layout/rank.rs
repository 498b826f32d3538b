//! Layer assignment by network simplex (Gansner, Koutsofios, North & Vo, "A technique for
//! drawing directed graphs", IEEE TSE 1993, §2), as Graphviz's dot does it: minimize the total
//! weighted edge length Σ w(e)·(λ(head) − λ(tail)) subject to λ(head) − λ(tail) ≥ 1 for every
//! edge of the acyclic graph.
//!
//! 1. a feasible spanning tree of tight edges (slack 0) is grown from a feasible ranking (the
//!    balanced longest-path layering), shifting the tree by the smallest slack of an incident
//!    edge whenever no tight edge leaves it;
//! 2. each tree edge gets its cut value (weight of the edges from the tail component to the
//!    head component minus the weight of those going back), computed bottom-up over a
//!    postorder numbering (`low`, `lim`) that answers "is x below v" in O(1);
//! 3. while a tree edge has a negative cut value, it leaves the tree and the non-tree edge of
//!    least slack crossing the same cut in the other direction enters it; ranks of the smaller
//!    side shift, cut values change only on the tree path between the entering edge's ends,
//!    and the numbering is redone below their lowest common ancestor;
//! 4. ranks are normalized to start at 0, and nodes with equal in- and out-weight move to the
//!    least crowded rank within their feasible range (dot's balancing; the total length stays
//!    optimal).
//!
//! Components are ranked separately. Everything is iterative (no recursion on deep graphs).

/// An edge of the ranking problem: tail, head, weight (parallel edges merged).
#[derive(Debug, Clone, Copy)]
struct Arc {
    tail: u32,
    head: u32,
    weight: i64,
}

/// The spanning-tree state of one component (local node indices).
struct Simplex<'a> {
    arcs: &'a [Arc],
    /// Arcs incident to each node (both directions).
    incident: Vec<Vec<u32>>,
    rank: Vec<i64>,
    in_tree: Vec<bool>,
    tree_adj: Vec<Vec<u32>>,
    /// Tree arcs, in the order leave_edge searches them.
    tree_arcs: Vec<u32>,
    /// Position of each tree arc in `tree_arcs` (usize::MAX when not in the tree).
    tree_index: Vec<usize>,
    cut: Vec<i64>,
    parent: Vec<Option<u32>>,
    low: Vec<u32>,
    lim: Vec<u32>,
    search_from: usize,
}

/// How many negative tree edges `leave_edge` looks at before taking the most negative (dot's
/// `searchsize`).
const SEARCH_SIZE: usize = 30;

impl<'a> Simplex<'a> {
    fn slack(&self, a: u32) -> i64 {
        let arc = self.arcs[a as usize];
        self.rank[arc.head as usize] - self.rank[arc.tail as usize] - 1
    }

    fn other(&self, a: u32, v: u32) -> u32 {
        let arc = self.arcs[a as usize];
        if arc.tail == v { arc.head } else { arc.tail }
    }

    /// Whether `x` lies in the subtree of `v` (postorder numbering).
    fn below(&self, x: u32, v: u32) -> bool {
        let (l, v_lim, x_lim) = (
            self.low[v as usize],
            self.lim[v as usize],
            self.lim[x as usize],
        );
        l <= x_lim && x_lim <= v_lim
    }

    fn add_tree_arc(&mut self, a: u32) {
        let arc = self.arcs[a as usize];
        self.tree_index[a as usize] = self.tree_arcs.len();
        self.tree_arcs.push(a);
        self.tree_adj[arc.tail as usize].push(a);
        self.tree_adj[arc.head as usize].push(a);
    }

    /// Grows a spanning tree of tight arcs, shifting ranks where none reaches further.
    fn feasible_tree(&mut self) {
        let n = self.rank.len();
        if n <= 1 {
            return;
        }
        let mut in_tree_node = vec![false; n];
        let mut tree_nodes: Vec<u32> = vec![0];
        in_tree_node[0] = true;
        let mut stack = vec![0u32];
        loop {
            // Everything reachable over tight arcs joins the tree.
            while let Some(v) = stack.pop() {
                for k in 0..self.incident[v as usize].len() {
                    let a = self.incident[v as usize][k];
                    let w = self.other(a, v);
                    if !in_tree_node[w as usize] && self.slack(a) == 0 {
                        in_tree_node[w as usize] = true;
                        tree_nodes.push(w);
                        self.in_tree[a as usize] = true;
                        self.add_tree_arc(a);
                        stack.push(w);
                    }
                }
            }
            if tree_nodes.len() == n {
                return;
            }
            // The arc of least slack with one end in the tree; shift the tree to tighten it.
            let mut best: Option<(i64, u32)> = None;
            for (a, arc) in self.arcs.iter().enumerate() {
                if in_tree_node[arc.tail as usize] != in_tree_node[arc.head as usize] {
                    let s = self.slack(a as u32);
                    if best.is_none_or(|(b, _)| s < b) {
                        best = Some((s, a as u32));
                    }
                }
            }
            let Some((delta, a)) = best else {
                // Not connected: cannot happen for a component; stop with a partial tree.
                return;
            };
            let arc = self.arcs[a as usize];
            // Tree at the head: move it up (towards the tail); at the tail: move it down.
            let shift = if in_tree_node[arc.head as usize] {
                -delta
            } else {
                delta
            };
            for &v in &tree_nodes {
                self.rank[v as usize] += shift;
            }
            // Every crossing arc that became tight lets the tree grow from its inner end.
            for (b, arc) in self.arcs.iter().enumerate() {
                let (t, h) = (arc.tail as usize, arc.head as usize);
                if in_tree_node[t] != in_tree_node[h] && self.slack(b as u32) == 0 {
                    stack.push(if in_tree_node[t] { arc.tail } else { arc.head });
                }
            }
        }
    }

    /// Postorder numbering of the subtree of `root` (whose parent arc is `parent`), numbers
    /// starting at `low0`.
    fn number(&mut self, root: u32, parent: Option<u32>, low0: u32) {
        let mut counter = low0;
        self.parent[root as usize] = parent;
        self.low[root as usize] = counter;
        let mut stack: Vec<(u32, usize)> = vec![(root, 0)];
        while let Some(&mut (v, ref mut i)) = stack.last_mut() {
            if let Some(&a) = self.tree_adj[v as usize].get(*i) {
                *i += 1;
                if Some(a) == self.parent[v as usize] {
                    continue;
                }
                let w = self.other(a, v);
                self.parent[w as usize] = Some(a);
                self.low[w as usize] = counter;
                stack.push((w, 0));
            } else {
                self.lim[v as usize] = counter;
                counter += 1;
                stack.pop();
            }
        }
    }

    /// Cut value of the tree arc `f` from the arcs at its lower end (children done already).
    fn cut_value(&self, f: u32) -> i64 {
        let arc = self.arcs[f as usize];
        let (v, dir) = if self.parent[arc.tail as usize] == Some(f) {
            (arc.tail, true)
        } else {
            (arc.head, false)
        };
        let mut sum = 0;
        for &e in &self.incident[v as usize] {
            let ea = self.arcs[e as usize];
            let other = self.other(e, v);
            let outside = !self.below(other, v);
            let mut value = if outside {
                ea.weight
            } else {
                let tree_cut = if self.in_tree[e as usize] {
                    self.cut[e as usize]
                } else {
                    0
                };
                tree_cut - ea.weight
            };
            let mut d = if dir { ea.head == v } else { ea.tail == v };
            if outside {
                d = !d;
            }
            if !d {
                value = -value;
            }
            sum += value;
        }
        sum
    }

    /// Cut values of every tree arc, bottom-up from `root`.
    fn init_cut_values(&mut self) {
        let root = 0u32;
        self.number(root, None, 0);
        // Postorder: a node's children finish before it.
        let mut order: Vec<u32> = (0..self.rank.len() as u32).collect();
        order.sort_unstable_by_key(|&v| self.lim[v as usize]);
        for v in order {
            if let Some(f) = self.parent[v as usize] {
                self.cut[f as usize] = self.cut_value(f);
            }
        }
    }

    /// A tree arc with a negative cut value (dot's search: from where the last search ended,
    /// the most negative among the first `SEARCH_SIZE` found).
    fn leave_edge(&mut self) -> Option<u32> {
        let count = self.tree_arcs.len();
        let mut best: Option<u32> = None;
        let mut found = 0;
        for k in 0..count {
            let i = (self.search_from + k) % count;
            let a = self.tree_arcs[i];
            if self.cut[a as usize] < 0 {
                if best.is_none_or(|b| self.cut[a as usize] < self.cut[b as usize]) {
                    best = Some(a);
                }
                found += 1;
                if found >= SEARCH_SIZE {
                    self.search_from = i;
                    return best;
                }
            }
        }
        self.search_from = 0;
        best
    }

    /// The non-tree arc of least slack that crosses the cut of tree arc `e` the other way.
    fn enter_edge(&self, e: u32) -> Option<u32> {
        let arc = self.arcs[e as usize];
        // The side below `e` in the rooted tree; arcs must leave it (head side) or enter it
        // (tail side).
        let (v, outward) = if self.lim[arc.tail as usize] < self.lim[arc.head as usize] {
            (arc.tail, false)
        } else {
            (arc.head, true)
        };
        let mut best: Option<(i64, u32)> = None;
        let mut stack = vec![v];
        while let Some(x) = stack.pop() {
            for &a in &self.incident[x as usize] {
                let ar = self.arcs[a as usize];
                if self.in_tree[a as usize] {
                    let w = self.other(a, x);
                    if self.lim[w as usize] < self.lim[x as usize] {
                        stack.push(w);
                    }
                    continue;
                }
                let (from, to) = (ar.tail, ar.head);
                let crosses = if outward {
                    from == x && !self.below(to, v)
                } else {
                    to == x && !self.below(from, v)
                };
                if crosses {
                    let s = self.slack(a);
                    if best.is_none_or(|(b, _)| s < b) {
                        best = Some((s, a));
                        if s == 0 {
                            return Some(a);
                        }
                    }
                }
            }
        }
        best.map(|(_, a)| a)
    }

    /// Adds `delta` to the ranks of the subtree of `v` (below its parent arc).
    fn shift_subtree(&mut self, v: u32, delta: i64) {
        let mut stack = vec![v];
        while let Some(x) = stack.pop() {
            self.rank[x as usize] += delta;
            for k in 0..self.tree_adj[x as usize].len() {
                let a = self.tree_adj[x as usize][k];
                let w = self.other(a, x);
                if self.lim[w as usize] < self.lim[x as usize] {
                    stack.push(w);
                }
            }
        }
    }

    /// Walks from `v` up to the common ancestor with `w`, adding the cut value to the arcs
    /// on the way (or subtracting it, by their direction).
    fn tree_update(&mut self, mut v: u32, w: u32, cut: i64, dir: bool) -> u32 {
        while !self.below(w, v) {
            let Some(e) = self.parent[v as usize] else {
                break;
            };
            let arc = self.arcs[e as usize];
            let d = if v == arc.tail { dir } else { !dir };
            if d {
                self.cut[e as usize] += cut;
            } else {
                self.cut[e as usize] -= cut;
            }
            v = if self.lim[arc.tail as usize] > self.lim[arc.head as usize] {
                arc.tail
            } else {
                arc.head
            };
        }
        v
    }

    /// Tree arc `e` leaves, `f` enters.
    fn update(&mut self, e: u32, f: u32) {
        let delta = self.slack(f);
        if delta > 0 {
            let arc = self.arcs[e as usize];
            if self.lim[arc.tail as usize] < self.lim[arc.head as usize] {
                // The tail side is below e: it moves up to meet f.
                self.shift_subtree(arc.tail, -delta);
            } else {
                self.shift_subtree(arc.head, delta);
            }
        }
        let cut = self.cut[e as usize];
        let fa = self.arcs[f as usize];
        let lca = self.tree_update(fa.tail, fa.head, cut, true);
        self.tree_update(fa.head, fa.tail, cut, false);
        self.cut[f as usize] = -cut;
        self.cut[e as usize] = 0;
        // Exchange the arcs in the tree.
        let ea = self.arcs[e as usize];
        for v in [ea.tail, ea.head] {
            self.tree_adj[v as usize].retain(|&a| a != e);
        }
        self.in_tree[e as usize] = false;
        self.in_tree[f as usize] = true;
        let index = self.tree_index[e as usize];
        self.tree_index[e as usize] = usize::MAX;
        self.tree_index[f as usize] = index;
        self.tree_arcs[index] = f;
        self.tree_adj[fa.tail as usize].push(f);
        self.tree_adj[fa.head as usize].push(f);
        let (parent, low) = (self.parent[lca as usize], self.low[lca as usize]);
        self.number(lca, parent, low);
    }
}

/// Optimal layers of one connected component (local indices `0..n`) starting from the
/// feasible `initial` ranks; at most `max_iterations` exchanges. Returns the ranks (not
/// normalized) and the number of exchanges.
fn rank_component(
    n: usize,
    arcs: &[Arc],
    initial: Vec<i64>,
    max_iterations: usize,
) -> (Vec<i64>, usize) {
    let mut incident = vec![Vec::new(); n];
    for (a, arc) in arcs.iter().enumerate() {
        incident[arc.tail as usize].push(a as u32);
        incident[arc.head as usize].push(a as u32);
    }
    let mut s = Simplex {
        arcs,
        incident,
        rank: initial,
        in_tree: vec![false; arcs.len()],
        tree_adj: vec![Vec::new(); n],
        tree_arcs: Vec::with_capacity(n.saturating_sub(1)),
        tree_index: vec![usize::MAX; arcs.len()],
        cut: vec![0; arcs.len()],
        parent: vec![None; n],
        low: vec![0; n],
        lim: vec![0; n],
        search_from: 0,
    };
    let started = std::time::Instant::now();
    s.feasible_tree();
    if s.tree_arcs.len() + 1 != n {
        return (s.rank, 0);
    }
    s.init_cut_values();
    tracing::trace!(
        nodes = n,
        arcs = arcs.len(),
        ms = started.elapsed().as_secs_f64() * 1e3,
        "feasible tree and cut values"
    );
    let mut iterations = 0;
    while iterations < max_iterations {
        let Some(e) = s.leave_edge() else {
            break;
        };
        let Some(f) = s.enter_edge(e) else {
            // No arc crosses back: the graph is not connected the way the tree says
            // (cannot happen for a component); keep what is feasible.
            break;
        };
        s.update(e, f);
        iterations += 1;
    }
    (s.rank, iterations)
}

/// Network-simplex layers of the acyclic graph `dag` on `n` nodes (self-loops ignored),
/// starting from the feasible layering `initial` (every edge pointing to a higher layer).
/// At most `max_iterations` exchanges per component (beyond, the feasible ranking reached so
/// far is kept). Layers start at 0; nodes whose in- and out-degree are equal sit on the least
/// crowded layer of their feasible range.
pub(crate) fn network_simplex(
    n: usize,
    dag: &[(usize, usize)],
    initial: &[u32],
    max_iterations: usize,
) -> Vec<u32> {
    if n == 0 {
        return Vec::new();
    }
    // Components (union-find over the edges).
    let mut root: Vec<u32> = (0..n as u32).collect();
    fn find(root: &mut [u32], mut v: u32) -> u32 {
        while root[v as usize] != v {
            root[v as usize] = root[root[v as usize] as usize];
            v = root[v as usize];
        }
        v
    }
    for &(a, b) in dag {
        if a != b && a < n && b < n {
            let (ra, rb) = (find(&mut root, a as u32), find(&mut root, b as u32));
            if ra != rb {
                root[ra as usize] = rb;
            }
        }
    }
    let mut component_of = vec![u32::MAX; n];
    let mut members: Vec<Vec<u32>> = Vec::new();
    let mut local = vec![0u32; n];
    for (v, local_index) in local.iter_mut().enumerate() {
        let r = find(&mut root, v as u32) as usize;
        if component_of[r] == u32::MAX {
            component_of[r] = members.len() as u32;
            members.push(Vec::new());
        }
        let c = component_of[r] as usize;
        *local_index = members[c].len() as u32;
        members[c].push(v as u32);
    }
    // Arcs per component, parallel ones merged into weights.
    let mut pairs: Vec<(u32, u32)> = dag
        .iter()
        .filter(|&&(a, b)| a != b && a < n && b < n)
        .map(|&(a, b)| (a as u32, b as u32))
        .collect();
    pairs.sort_unstable();
    let mut arcs_of: Vec<Vec<Arc>> = vec![Vec::new(); members.len()];
    let mut k = 0;
    while k < pairs.len() {
        let mut j = k;
        while j < pairs.len() && pairs[j] == pairs[k] {
            j += 1;
        }
        let (a, b) = pairs[k];
        let c = component_of[find(&mut root, a) as usize] as usize;
        arcs_of[c].push(Arc {
            tail: local[a as usize],
            head: local[b as usize],
            weight: (j - k) as i64,
        });
        k = j;
    }
    let mut rank = vec![0i64; n];
    let mut total_iterations = 0;
    for (c, nodes) in members.iter().enumerate() {
        let initial_local: Vec<i64> = nodes
            .iter()
            .map(|&v| i64::from(initial.get(v as usize).copied().unwrap_or(0)))
            .collect();
        let (r, iterations) =
            rank_component(nodes.len(), &arcs_of[c], initial_local, max_iterations);
        total_iterations += iterations;
        let min = r.iter().copied().min().unwrap_or(0);
        for (&v, rv) in nodes.iter().zip(r) {
            rank[v as usize] = rv - min;
        }
    }
    tracing::debug!(
        components = members.len(),
        iterations = total_iterations,
        "network simplex"
    );
    // Balance: nodes with as much weight in as out move to the least crowded feasible rank.
    let max_rank = rank.iter().copied().max().unwrap_or(0);
    let mut count = vec![0usize; max_rank as usize + 1];
    for &r in &rank {
        count[r as usize] += 1;
    }
    let mut ins: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut outs: Vec<Vec<u32>> = vec![Vec::new(); n];
    for &(a, b) in dag {
        if a != b && a < n && b < n {
            outs[a].push(b as u32);
            ins[b].push(a as u32);
        }
    }
    for v in 0..n {
        if ins[v].len() != outs[v].len() || ins[v].is_empty() {
            // Isolated nodes stay at the top, as dot leaves them.
            continue;
        }
        let low = ins[v]
            .iter()
            .map(|&u| rank[u as usize] + 1)
            .max()
            .unwrap_or(0)
            .max(0);
        let high = outs[v]
            .iter()
            .map(|&w| rank[w as usize] - 1)
            .min()
            .unwrap_or(max_rank);
        let mut choice = low;
        for r in low + 1..=high {
            if count[r as usize] < count[choice as usize] {
                choice = r;
            }
        }
        if low <= high && choice != rank[v] {
            count[rank[v] as usize] -= 1;
            count[choice as usize] += 1;
            rank[v] = choice;
        }
    }
    rank.into_iter().map(|r| r as u32).collect()
}

/// Σ (layer(b) − layer(a)) over the edges (self-loops count 0).
#[cfg(test)]
pub(crate) fn total_length(dag: &[(usize, usize)], layer: &[u32]) -> u64 {
    dag.iter()
        .filter(|(a, b)| a != b)
        .map(|&(a, b)| u64::from(layer[b].abs_diff(layer[a])))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feasible(dag: &[(usize, usize)], layer: &[u32]) -> bool {
        dag.iter().all(|&(a, b)| a == b || layer[a] < layer[b])
    }

    /// The least total length over every ranking of `n` nodes into `0..n` layers.
    fn brute_force(n: usize, dag: &[(usize, usize)]) -> u64 {
        let mut best = u64::MAX;
        let mut layer = vec![0u32; n];
        loop {
            if feasible(dag, &layer) {
                best = best.min(total_length(dag, &layer));
            }
            let mut i = 0;
            loop {
                if i == n {
                    return best;
                }
                layer[i] += 1;
                if (layer[i] as usize) < n {
                    break;
                }
                layer[i] = 0;
                i += 1;
            }
        }
    }

    fn random_dag(n: usize, m: usize, seed: u64) -> Vec<(usize, usize)> {
        let mut state = seed;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize
        };
        let mut edges = Vec::new();
        for _ in 0..m {
            let (a, b) = (next() % n, next() % n);
            if a < b {
                edges.push((a, b));
            } else if b < a {
                edges.push((b, a));
            }
        }
        edges
    }

    #[test]
    fn optimal_on_small_random_graphs() {
        for seed in 0..60u64 {
            let n = 3 + (seed % 4) as usize; // 3..=6 nodes
            let dag = random_dag(n, 2 + (seed % 9) as usize, seed);
            let start = super::super::assign_layers_longest_path(n, &dag);
            let layer = network_simplex(n, &dag, &start, usize::MAX);
            assert!(feasible(&dag, &layer), "seed {seed}: {dag:?} {layer:?}");
            assert_eq!(
                total_length(&dag, &layer),
                brute_force(n, &dag),
                "seed {seed}: {dag:?} -> {layer:?}"
            );
        }
    }

    #[test]
    fn never_longer_than_longest_path_and_balancing() {
        for seed in 0..20u64 {
            let n = 40 + seed as usize * 7;
            let dag = random_dag(n, n * 3, seed + 100);
            let balanced = super::super::assign_layers_longest_path(n, &dag);
            let layer = network_simplex(n, &dag, &balanced, usize::MAX);
            assert!(feasible(&dag, &layer));
            assert!(total_length(&dag, &layer) <= total_length(&dag, &balanced));
        }
    }

    #[test]
    fn groups_move_where_single_nodes_cannot() {
        // A chain 0→…→4 and a pair s→t both feeding 4. Balancing moves one node at a time:
        // s is held up by t, and t (one edge in, one out) has no reason to move, so the pair
        // stays at the top with long edges. Network simplex moves the pair down together.
        let (s, t) = (5, 6);
        let dag = [(0, 1), (1, 2), (2, 3), (3, 4), (s, t), (s, 4), (t, 4)];
        let balanced = super::super::assign_layers_longest_path(7, &dag);
        assert_eq!(total_length(&dag, &balanced), 12, "{balanced:?}");
        let layer = network_simplex(7, &dag, &balanced, usize::MAX);
        assert_eq!(total_length(&dag, &layer), 8, "{layer:?}");
        assert_eq!((layer[s], layer[t]), (2, 3));
    }

    /// Cut value of tree arc `e` by its definition: the tree without `e` splits into the tail
    /// side and the head side; arcs tail side → head side count +w, the others −w.
    fn cut_by_definition(s: &Simplex<'_>, e: u32) -> i64 {
        let n = s.rank.len();
        let mut tail_side = vec![false; n];
        let start = s.arcs[e as usize].tail;
        tail_side[start as usize] = true;
        let mut stack = vec![start];
        while let Some(v) = stack.pop() {
            for &a in &s.tree_adj[v as usize] {
                let w = s.other(a, v);
                if a != e && !tail_side[w as usize] {
                    tail_side[w as usize] = true;
                    stack.push(w);
                }
            }
        }
        s.arcs
            .iter()
            .map(
                |arc| match (tail_side[arc.tail as usize], tail_side[arc.head as usize]) {
                    (true, false) => arc.weight,
                    (false, true) => -arc.weight,
                    _ => 0,
                },
            )
            .sum()
    }

    #[test]
    fn incremental_cut_values_match_their_definition() {
        let mut exchanges = 0;
        for seed in 0..12u64 {
            let n = 12 + seed as usize * 3;
            let dag = random_dag(n, n * 2, seed + 500);
            // One component: chain everything to node 0 as well.
            let mut dag = dag;
            dag.extend((1..n).map(|v| (0, v)));
            let start = super::super::assign_layers_longest_path(n, &dag);
            let mut pairs: Vec<(usize, usize)> = dag.clone();
            pairs.sort_unstable();
            pairs.dedup();
            let arcs: Vec<Arc> = pairs
                .iter()
                .map(|&(a, b)| Arc {
                    tail: a as u32,
                    head: b as u32,
                    weight: dag.iter().filter(|&&p| p == (a, b)).count() as i64,
                })
                .collect();
            let mut incident = vec![Vec::new(); n];
            for (a, arc) in arcs.iter().enumerate() {
                incident[arc.tail as usize].push(a as u32);
                incident[arc.head as usize].push(a as u32);
            }
            let mut s = Simplex {
                arcs: &arcs,
                incident,
                rank: start.iter().map(|&r| i64::from(r)).collect(),
                in_tree: vec![false; arcs.len()],
                tree_adj: vec![Vec::new(); n],
                tree_arcs: Vec::new(),
                tree_index: vec![usize::MAX; arcs.len()],
                cut: vec![0; arcs.len()],
                parent: vec![None; n],
                low: vec![0; n],
                lim: vec![0; n],
                search_from: 0,
            };
            s.feasible_tree();
            assert_eq!(s.tree_arcs.len(), n - 1);
            s.init_cut_values();
            let mut steps = 0;
            loop {
                for &e in &s.tree_arcs {
                    assert_eq!(s.slack(e), 0, "seed {seed}: tree arcs are tight");
                    assert_eq!(s.cut[e as usize], cut_by_definition(&s, e), "seed {seed}");
                }
                assert!(arcs.iter().enumerate().all(|(a, _)| s.slack(a as u32) >= 0));
                let Some(e) = s.leave_edge() else { break };
                let f = s.enter_edge(e).unwrap();
                s.update(e, f);
                steps += 1;
                assert!(steps < 10_000);
            }
            exchanges += steps;
        }
        assert!(
            exchanges > 10,
            "the checks ran over exchanges ({exchanges})"
        );
    }

    #[test]
    fn components_and_parallel_edges_are_optimal() {
        // Two components, parallel edges (weights), an isolated node.
        let dag = [
            (0, 1),
            (0, 1),
            (1, 2),
            (0, 2),
            (3, 4),
            (4, 5),
            (3, 5),
            (3, 5),
        ];
        let start = super::super::longest_path(7, &dag);
        let layer = network_simplex(7, &dag, &start, usize::MAX);
        assert!(feasible(&dag, &layer));
        assert_eq!(total_length(&dag, &layer), brute_force(7, &dag));
        assert_eq!(layer[6], 0);
    }
}
