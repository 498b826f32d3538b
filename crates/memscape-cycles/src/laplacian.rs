//! Graph Laplacian systems `L x = b` for the circular coordinates: conjugate gradients
//! preconditioned by an aggregation multigrid V-cycle.
//!
//! The 1-skeleton of Levenshtein windows at ε is made of dense clusters (a loop's windows, all
//! within a few edits of each other) joined by thin bridges, so its Laplacian has tiny nonzero
//! eigenvalues and Jacobi-preconditioned CG took ~1,000 iterations at 24,000 windows. Here
//! each cluster becomes one coarse unknown: greedy aggregation (a vertex whose neighbours are
//! all free takes them as its aggregate; the rest join the aggregate of a neighbour), the
//! piecewise-constant prolongation P, the Galerkin coarse Laplacian `Pᵀ L P` (a weighted
//! graph of the aggregates), recursively, down to a dense solve. One symmetric V-cycle (damped
//! Jacobi before and after the coarse correction) preconditions CG: tens of iterations.
//!
//! Every connected component is solved at once: `b` must sum to zero on each (δ₀ᵀα does),
//! and the solution has mean zero on each.

use rayon::prelude::*;

use crate::error::CyclesError;
use crate::progress::Control;

/// A symmetric graph given as compressed adjacency lists (no self loops), unit weights.
#[derive(Debug, Clone)]
pub struct Graph {
    pub offsets: Vec<usize>,
    pub neighbors: Vec<u32>,
}

impl Graph {
    pub fn from_lists(lists: &[Vec<u32>]) -> Self {
        let mut offsets = Vec::with_capacity(lists.len() + 1);
        offsets.push(0);
        let mut neighbors = Vec::with_capacity(lists.iter().map(Vec::len).sum());
        for list in lists {
            neighbors.extend_from_slice(list);
            offsets.push(neighbors.len());
        }
        Self { offsets, neighbors }
    }

    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn of(&self, v: usize) -> &[u32] {
        &self.neighbors[self.offsets[v]..self.offsets[v + 1]]
    }
}

/// A weighted Laplacian: off-diagonal `-weight` per neighbour, `diagonal` the weighted degree.
#[derive(Debug, Clone)]
struct Weighted {
    offsets: Vec<usize>,
    neighbors: Vec<u32>,
    weights: Vec<f64>,
    diagonal: Vec<f64>,
}

/// One level of the hierarchy: its operator and the aggregate of each of its unknowns in the
/// next coarser level.
enum Operator {
    Unit(Graph),
    Weighted(Weighted),
}

impl Operator {
    fn len(&self) -> usize {
        match self {
            Self::Unit(g) => g.len(),
            Self::Weighted(w) => w.diagonal.len(),
        }
    }

    fn diagonal(&self, v: usize) -> f64 {
        match self {
            Self::Unit(g) => (g.offsets[v + 1] - g.offsets[v]) as f64,
            Self::Weighted(w) => w.diagonal[v],
        }
    }

    /// `out = A x`.
    fn apply(&self, x: &[f64], out: &mut [f64]) {
        let row = |v: usize| -> f64 {
            match self {
                Self::Unit(g) => {
                    let nb = g.of(v);
                    nb.len() as f64 * x[v] - nb.iter().map(|&u| x[u as usize]).sum::<f64>()
                }
                Self::Weighted(w) => {
                    let range = w.offsets[v]..w.offsets[v + 1];
                    w.diagonal[v] * x[v]
                        - w.neighbors[range.clone()]
                            .iter()
                            .zip(&w.weights[range])
                            .map(|(&u, &c)| c * x[u as usize])
                            .sum::<f64>()
                }
            }
        };
        if self.len() >= 4096 {
            out.par_iter_mut()
                .with_min_len(256)
                .enumerate()
                .for_each(|(v, o)| *o = row(v));
        } else {
            out.iter_mut().enumerate().for_each(|(v, o)| *o = row(v));
        }
    }

    /// Calls `visit(u, weight)` for the neighbours of `v`.
    fn for_each_neighbor(&self, v: usize, mut visit: impl FnMut(usize, f64)) {
        match self {
            Self::Unit(g) => g.of(v).iter().for_each(|&u| visit(u as usize, 1.0)),
            Self::Weighted(w) => {
                for k in w.offsets[v]..w.offsets[v + 1] {
                    visit(w.neighbors[k] as usize, w.weights[k]);
                }
            }
        }
    }
}

struct Level {
    operator: Operator,
    /// 1 / diagonal (0 for isolated unknowns).
    inverse_diagonal: Vec<f64>,
    /// Aggregate (unknown of the next level) of each unknown; empty on the coarsest level.
    aggregate: Vec<u32>,
}

/// The coarsest level, solved densely: `(A + Σ_C 1_C 1_Cᵀ · s)⁻¹` via Cholesky, where the
/// sum over connected components C removes the kernel of the Laplacian.
struct Dense {
    n: usize,
    cholesky: Vec<f64>,
    component: Vec<u32>,
    components: usize,
}

/// An aggregation multigrid hierarchy for the Laplacian of a graph.
pub struct Multigrid {
    levels: Vec<Level>,
    coarsest: Dense,
    /// Connected component of each vertex, and the number of components.
    component: Vec<u32>,
    components: usize,
}

/// Coarsening stops at this many unknowns (the dense Cholesky costs n³/3).
const COARSEST: usize = 600;
/// Damping of the Jacobi smoother (the spectrum of D⁻¹L lies in [0, 2]).
const OMEGA: f64 = 2.0 / 3.0;

impl Multigrid {
    pub fn new(graph: Graph) -> Self {
        let mut levels = Vec::new();
        let mut operator = Operator::Unit(graph);
        let (component, components) = connected_components(&operator);
        loop {
            let n = operator.len();
            let inverse_diagonal = (0..n)
                .map(|v| {
                    let d = operator.diagonal(v);
                    if d > 0.0 { 1.0 / d } else { 0.0 }
                })
                .collect();
            let (aggregate, count) = if n > COARSEST {
                aggregate(&operator)
            } else {
                (Vec::new(), n)
            };
            // Stop when small, or when aggregation no longer shrinks the problem.
            if n <= COARSEST || count * 5 > n * 4 {
                let coarsest = Dense::new(&operator);
                levels.push(Level {
                    operator,
                    inverse_diagonal,
                    aggregate: Vec::new(),
                });
                return Self {
                    levels,
                    coarsest,
                    component,
                    components,
                };
            }
            let coarse = galerkin(&operator, &aggregate, count);
            levels.push(Level {
                operator,
                inverse_diagonal,
                aggregate,
            });
            operator = Operator::Weighted(coarse);
        }
    }

    fn len(&self) -> usize {
        self.levels[0].operator.len()
    }

    /// Approximately `A⁻¹ r` by one symmetric V-cycle from level `k`.
    fn v_cycle(&self, k: usize, r: &[f64], x: &mut [f64]) {
        let level = &self.levels[k];
        if k + 1 == self.levels.len() {
            self.coarsest.solve(r, x);
            return;
        }
        let n = r.len();
        // Pre-smoothing from zero: one damped Jacobi step.
        for v in 0..n {
            x[v] = OMEGA * level.inverse_diagonal[v] * r[v];
        }
        let mut residual = vec![0.0; n];
        level.operator.apply(x, &mut residual);
        for v in 0..n {
            residual[v] = r[v] - residual[v];
        }
        let coarse_n = self.levels[k + 1].operator.len();
        let mut coarse_r = vec![0.0; coarse_n];
        for v in 0..n {
            coarse_r[level.aggregate[v] as usize] += residual[v];
        }
        let mut coarse_x = vec![0.0; coarse_n];
        self.v_cycle(k + 1, &coarse_r, &mut coarse_x);
        for v in 0..n {
            x[v] += coarse_x[level.aggregate[v] as usize];
        }
        // Post-smoothing (the adjoint of the pre-smoothing: the cycle stays symmetric).
        level.operator.apply(x, &mut residual);
        for v in 0..n {
            x[v] += OMEGA * level.inverse_diagonal[v] * (r[v] - residual[v]);
        }
    }

    /// Solves `L x = b` by preconditioned CG to a relative residual of `tolerance`; returns
    /// the number of iterations. `b` must sum to zero on every connected component.
    pub fn solve(
        &self,
        b: &[f64],
        x: &mut [f64],
        tolerance: f64,
        control: &Control,
    ) -> Result<usize, CyclesError> {
        let n = self.len();
        let operator = &self.levels[0].operator;
        let dot = |a: &[f64], b: &[f64]| -> f64 {
            if n >= 4096 {
                a.par_iter().zip(b).map(|(x, y)| x * y).sum()
            } else {
                a.iter().zip(b).map(|(x, y)| x * y).sum()
            }
        };
        x.iter_mut().for_each(|v| *v = 0.0);
        let b_norm = dot(b, b).sqrt();
        if b_norm == 0.0 {
            return Ok(0);
        }
        let mut r = b.to_vec();
        let mut z = vec![0.0; n];
        self.v_cycle(0, &r, &mut z);
        let mut p = z.clone();
        let mut ap = vec![0.0; n];
        let mut rz = dot(&r, &z);
        let mut iterations = 0;
        while iterations < 4 * n + 100 {
            iterations += 1;
            control.check()?;
            operator.apply(&p, &mut ap);
            let pap = dot(&p, &ap);
            if pap <= 0.0 {
                break;
            }
            let step = rz / pap;
            x.iter_mut().zip(&p).for_each(|(xi, pi)| *xi += step * pi);
            r.iter_mut().zip(&ap).for_each(|(ri, ai)| *ri -= step * ai);
            if dot(&r, &r).sqrt() <= tolerance * b_norm {
                break;
            }
            self.v_cycle(0, &r, &mut z);
            let rz_next = dot(&r, &z);
            let beta = rz_next / rz;
            rz = rz_next;
            p.iter_mut()
                .zip(&z)
                .for_each(|(pi, zi)| *pi = zi + beta * *pi);
        }
        // The solution of mean zero on every component (CG leaves the kernel part of its
        // preconditioned start).
        center(x, &self.component, self.components);
        Ok(iterations)
    }
}

/// The connected component of each unknown, and their number.
fn connected_components(operator: &Operator) -> (Vec<u32>, usize) {
    let n = operator.len();
    let mut component = vec![u32::MAX; n];
    let mut components = 0u32;
    let mut stack = Vec::new();
    for s in 0..n {
        if component[s] != u32::MAX {
            continue;
        }
        component[s] = components;
        stack.push(s);
        while let Some(v) = stack.pop() {
            operator.for_each_neighbor(v, |u, _| {
                if component[u] == u32::MAX {
                    component[u] = components;
                    stack.push(u);
                }
            });
        }
        components += 1;
    }
    (component, components as usize)
}

/// Subtracts from `x` its mean on each component.
fn center(x: &mut [f64], component: &[u32], components: usize) {
    let mut sums = vec![(0.0f64, 0usize); components];
    for (v, &c) in x.iter().zip(component) {
        let s = &mut sums[c as usize];
        s.0 += v;
        s.1 += 1;
    }
    for (v, &c) in x.iter_mut().zip(component) {
        let s = sums[c as usize];
        *v -= s.0 / s.1 as f64;
    }
}

/// Greedy aggregation: the aggregate of each unknown and the number of aggregates.
fn aggregate(operator: &Operator) -> (Vec<u32>, usize) {
    let n = operator.len();
    const FREE: u32 = u32::MAX;
    let mut aggregate = vec![FREE; n];
    let mut count = 0u32;
    // Pass 1: roots whose neighbourhood is entirely free take it.
    for v in 0..n {
        if aggregate[v] != FREE {
            continue;
        }
        let mut free = true;
        operator.for_each_neighbor(v, |u, _| free &= aggregate[u] == FREE);
        if !free {
            continue;
        }
        aggregate[v] = count;
        operator.for_each_neighbor(v, |u, _| aggregate[u] = count);
        count += 1;
    }
    // Pass 2: the rest join the aggregate of their strongest aggregated neighbour.
    let first_pass = aggregate.clone();
    for (v, slot) in aggregate.iter_mut().enumerate() {
        if *slot != FREE {
            continue;
        }
        let mut best = (0.0, FREE);
        operator.for_each_neighbor(v, |u, w| {
            if first_pass[u] != FREE && w > best.0 {
                best = (w, first_pass[u]);
            }
        });
        if best.1 != FREE {
            *slot = best.1;
        } else {
            // Isolated (or only free neighbours, which pass 1 would have taken): its own.
            *slot = count;
            count += 1;
        }
    }
    (aggregate, count as usize)
}

/// The coarse Laplacian `Pᵀ A P` for piecewise-constant P: the weights between aggregates.
fn galerkin(operator: &Operator, aggregate: &[u32], count: usize) -> Weighted {
    let n = operator.len();
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); count];
    for v in 0..n {
        members[aggregate[v] as usize].push(v as u32);
    }
    let rows: Vec<Vec<(u32, f64)>> = members
        .par_iter()
        .enumerate()
        .map_init(
            || (vec![0.0f64; count], Vec::new()),
            |(scratch, touched): &mut (Vec<f64>, Vec<u32>), (a, list)| {
                for &v in list {
                    operator.for_each_neighbor(v as usize, |u, w| {
                        let b = aggregate[u] as usize;
                        if b != a {
                            if scratch[b] == 0.0 {
                                touched.push(b as u32);
                            }
                            scratch[b] += w;
                        }
                    });
                }
                touched.sort_unstable();
                let row = touched
                    .iter()
                    .map(|&b| (b, std::mem::take(&mut scratch[b as usize])))
                    .collect();
                touched.clear();
                row
            },
        )
        .collect();
    let mut offsets = Vec::with_capacity(count + 1);
    offsets.push(0);
    let mut neighbors = Vec::new();
    let mut weights = Vec::new();
    let mut diagonal = Vec::with_capacity(count);
    for row in rows {
        diagonal.push(row.iter().map(|e| e.1).sum());
        for (b, w) in row {
            neighbors.push(b);
            weights.push(w);
        }
        offsets.push(neighbors.len());
    }
    Weighted {
        offsets,
        neighbors,
        weights,
        diagonal,
    }
}

impl Dense {
    fn new(operator: &Operator) -> Self {
        let n = operator.len();
        let (component, components) = connected_components(operator);
        let mut a = vec![0.0f64; n * n];
        let scale = (0..n).map(|v| operator.diagonal(v)).fold(1.0, f64::max);
        for v in 0..n {
            a[v * n + v] = operator.diagonal(v);
            operator.for_each_neighbor(v, |u, w| a[v * n + u] -= w);
            for u in 0..n {
                if component[u] == component[v] {
                    a[v * n + u] += scale / n as f64;
                }
            }
        }
        // In-place Cholesky (lower triangle); the matrix is positive definite.
        for j in 0..n {
            let mut d = a[j * n + j];
            for k in 0..j {
                d -= a[j * n + k] * a[j * n + k];
            }
            let d = d.max(f64::MIN_POSITIVE).sqrt();
            a[j * n + j] = d;
            for i in j + 1..n {
                let mut s = a[i * n + j];
                for k in 0..j {
                    s -= a[i * n + k] * a[j * n + k];
                }
                a[i * n + j] = s / d;
            }
        }
        Self {
            n,
            cholesky: a,
            component,
            components,
        }
    }

    /// The solution of mean zero on each component, for `r` projected to sum zero on each.
    fn solve(&self, r: &[f64], x: &mut [f64]) {
        let n = self.n;
        x.copy_from_slice(r);
        center(x, &self.component, self.components);
        let l = &self.cholesky;
        for i in 0..n {
            let mut s = x[i];
            for k in 0..i {
                s -= l[i * n + k] * x[k];
            }
            x[i] = s / l[i * n + i];
        }
        for i in (0..n).rev() {
            let mut s = x[i];
            for k in i + 1..n {
                s -= l[k * n + i] * x[k];
            }
            x[i] = s / l[i * n + i];
        }
        center(x, &self.component, self.components);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Jacobi-preconditioned CG, the reference.
    fn reference(graph: &Graph, b: &[f64]) -> Vec<f64> {
        let op = Operator::Unit(graph.clone());
        let n = graph.len();
        let inv: Vec<f64> = (0..n)
            .map(|v| {
                let d = op.diagonal(v);
                if d > 0.0 { 1.0 / d } else { 0.0 }
            })
            .collect();
        let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
        let mut x = vec![0.0; n];
        let mut r = b.to_vec();
        let mut z: Vec<f64> = r.iter().zip(&inv).map(|(a, d)| a * d).collect();
        let mut p = z.clone();
        let mut ap = vec![0.0; n];
        let mut rz = dot(&r, &z);
        for _ in 0..100 * n {
            op.apply(&p, &mut ap);
            let step = rz / dot(&p, &ap);
            x.iter_mut().zip(&p).for_each(|(xi, pi)| *xi += step * pi);
            r.iter_mut().zip(&ap).for_each(|(ri, ai)| *ri -= step * ai);
            if dot(&r, &r).sqrt() < 1e-13 {
                break;
            }
            z = r.iter().zip(&inv).map(|(a, d)| a * d).collect();
            let next = dot(&r, &z);
            p = z
                .iter()
                .zip(&p)
                .map(|(zi, pi)| zi + next / rz * pi)
                .collect();
            rz = next;
        }
        x
    }

    /// Clusters (cliques) on a ring joined by single edges, plus a separate path and an
    /// isolated vertex: the shape of window graphs.
    fn clustered(clusters: usize, size: usize) -> Graph {
        let n = clusters * size + 41;
        let mut lists = vec![Vec::new(); n];
        let mut link = |a: usize, b: usize| {
            lists[a].push(b as u32);
            lists[b].push(a as u32);
        };
        for c in 0..clusters {
            for i in 0..size {
                for j in 0..i {
                    link(c * size + i, c * size + j);
                }
            }
            link(c * size, ((c + 1) % clusters) * size + 1);
        }
        for k in 0..39 {
            link(clusters * size + k, clusters * size + k + 1);
        }
        for l in &mut lists {
            l.sort_unstable();
        }
        Graph::from_lists(&lists)
    }

    #[test]
    fn multigrid_cg_matches_plain_cg_in_few_iterations() {
        let graph = clustered(300, 12);
        let n = graph.len();
        // A right-hand side summing to zero on every component: δ₀ᵀ of a cochain.
        let mut b = vec![0.0; n];
        for v in 0..n {
            for &u in graph.of(v) {
                if (u as usize) < v {
                    let a = ((v * 7 + u as usize * 13) % 5) as f64 - 2.0;
                    b[v] += a;
                    b[u as usize] -= a;
                }
            }
        }
        let mut want = reference(&graph, &b);
        let (component, components) = connected_components(&Operator::Unit(graph.clone()));
        center(&mut want, &component, components);
        let mg = Multigrid::new(graph);
        assert!(mg.levels.len() >= 2, "no coarsening");
        let mut x = vec![0.0; n];
        let iterations = mg.solve(&b, &mut x, 1e-10, &Control::new()).unwrap();
        assert!(iterations < 60, "{iterations} iterations");
        // Both have mean zero per component.
        for (a, b) in x.iter().zip(&want) {
            assert!((a - b).abs() < 1e-6, "{a} vs {b}");
        }
    }
}
