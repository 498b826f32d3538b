//! Circular coordinates from a persistent cohomology class (de Silva, Morozov,
//! Vejdemo-Johansson, "Persistent cohomology and circular coordinates", 2011).
//!
//! Given a cocycle α over Z_p at a filtration value ε inside its bar: lift it to Z by the
//! symmetric representatives (c ↦ c, or c − p above p/2), find the vertex function f that
//! minimizes ‖α − δ₀f‖² over the edges of the Rips 1-skeleton at ε (the normal equations are the
//! graph Laplacian L f = δ₀ᵀα, solved by conjugate gradients per connected component) and take
//! θ = f mod 1. With Ripser's orientation, `δ₀f({i, j}) = f(i) − f(j)` for `i > j`.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use rayon::prelude::*;

use crate::error::CyclesError;
use crate::laplacian::{Graph, Multigrid};
use crate::metric::DistanceMatrix;
use crate::progress::Control;
use crate::rips::{Cocycle, Value};

/// A circle-valued coordinate of the points of a metric space.
#[derive(Debug, Clone, PartialEq)]
pub struct CircularCoordinates {
    /// θ in turns, `[0, 1)`, per point.
    pub theta: Vec<f64>,
    /// Where the cocycle was taken.
    pub epsilon: Value,
    /// `‖α − δ₀f‖₂` over the edges of the 1-skeleton at ε.
    pub residual: f64,
    /// Whether the integer lift is a cocycle on the 2-skeleton at ε (if not, the result is a
    /// least-squares compromise and the coordinate may wind inconsistently).
    pub lift_is_cocycle: bool,
    /// Points incident to an edge of the cocycle's support at ε ("cycle members").
    pub members: Vec<bool>,
    /// Number of edges of the 1-skeleton at ε.
    pub edges: usize,
}

/// Multiplicative hashing of vertex pairs for the cocycle map, which the cocycle check reads
/// three times per triangle touching the support (instead of the default SipHash).
#[derive(Default)]
struct PairHasher(u64);

impl Hasher for PairHasher {
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 31)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u32(u32::from(b));
        }
    }
    fn write_u32(&mut self, x: u32) {
        self.0 = (self.0.rotate_left(32) ^ u64::from(x)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Symmetric lift of a coefficient of Z_p to Z.
pub fn lift(coefficient: u16, modulus: u16) -> i64 {
    let c = i64::from(coefficient);
    let p = i64::from(modulus);
    if 2 * c > p { c - p } else { c }
}

/// Wrapped differences of consecutive θ values, summed: how many turns a sequence makes.
pub fn winding_number(theta: &[f64]) -> f64 {
    theta
        .windows(2)
        .map(|w| {
            let d = w[1] - w[0];
            d - d.round()
        })
        .sum()
}

/// Circular coordinates of the points of `dist` from `cocycle` (coefficients mod `modulus`)
/// at filtration value `epsilon`.
pub fn circular_coordinates<D: DistanceMatrix>(
    dist: &D,
    cocycle: &Cocycle,
    modulus: u16,
    epsilon: Value,
) -> CircularCoordinates {
    circular_coordinates_of_lift(
        dist,
        cocycle
            .entries
            .iter()
            .map(|e| (e.i, e.j, lift(e.coefficient, modulus))),
        epsilon,
    )
}

/// [`circular_coordinates`] of an integer cochain already lifted from Z_p (`(i, j, value)`
/// with `i > j`; edges longer than `epsilon` are ignored), e.g.
/// [`crate::rips::RipsResult::lifted_cocycle_at`].
pub fn circular_coordinates_of_lift<D: DistanceMatrix>(
    dist: &D,
    lifted: impl Iterator<Item = (u32, u32, i64)>,
    epsilon: Value,
) -> CircularCoordinates {
    let skeleton = Skeleton::new(dist, epsilon);
    let lifted: Vec<(u32, u32, i64)> = lifted.collect();
    // A fresh control is never cancelled.
    skeleton
        .coordinates(dist, &lifted, &Control::new())
        .unwrap_or_else(|_| CircularCoordinates {
            theta: vec![0.0; dist.size()],
            epsilon,
            residual: f64::NAN,
            lift_is_cocycle: false,
            members: vec![false; dist.size()],
            edges: 0,
        })
}

/// The 1-skeleton of the Rips complex at ε with its connected components and, for the large
/// ones, a multigrid solver: built once for every class whose coordinates are taken at the
/// same ε (the top classes of Levenshtein windows usually share it).
pub struct Skeleton {
    epsilon: Value,
    neighbors: Vec<Vec<u32>>,
    components: Vec<Vec<u32>>,
    /// Per component: a multigrid hierarchy when it has at least [`MULTIGRID_POINTS`] points.
    solvers: Vec<Option<Multigrid>>,
}

/// Components with at least this many points are solved by multigrid-preconditioned CG;
/// smaller ones by Jacobi-preconditioned CG, which is fast there (and keeps their θ as it was).
pub const MULTIGRID_POINTS: usize = 4096;

impl Skeleton {
    pub fn new<D: DistanceMatrix>(dist: &D, epsilon: Value) -> Self {
        let neighbors = adjacency_within(dist, epsilon);
        let components = components(&neighbors);
        let solvers = components
            .iter()
            .map(|component| {
                (component.len() >= MULTIGRID_POINTS)
                    .then(|| Multigrid::new(Graph::from_lists(&local_graph(&neighbors, component))))
            })
            .collect();
        Self {
            epsilon,
            neighbors,
            components,
            solvers,
        }
    }

    /// Number of edges.
    pub fn edges(&self) -> usize {
        self.neighbors.iter().map(Vec::len).sum::<usize>() / 2
    }

    /// The circular coordinates of one lifted cochain (see [`circular_coordinates_of_lift`]).
    pub fn coordinates<D: DistanceMatrix>(
        &self,
        dist: &D,
        lifted: &[(u32, u32, i64)],
        control: &Control,
    ) -> Result<CircularCoordinates, CyclesError> {
        let n = dist.size();
        let epsilon = self.epsilon;
        let neighbors = &self.neighbors;
        let edges = self.edges();

        // The lifted cocycle on the edges present at ε, keyed (i, j) with i > j.
        let alpha: HashMap<(u32, u32), f64, BuildHasherDefault<PairHasher>> = lifted
            .iter()
            .filter(|&&(i, j, _)| dist.distance(i as usize, j as usize) <= epsilon)
            .map(|&(i, j, a)| ((i, j), a as f64))
            .filter(|&(_, a)| a != 0.0)
            .collect();
        let alpha_of = |a: u32, b: u32| -> f64 {
            let key = if a > b { (a, b) } else { (b, a) };
            alpha.get(&key).copied().unwrap_or(0.0)
        };

        let mut members = vec![false; n];
        for &(i, j) in alpha.keys() {
            members[i as usize] = true;
            members[j as usize] = true;
        }

        // Cocycle condition over Z on the triangles at ε that touch the support:
        // δα({a > b > c}) = α(b,c) − α(a,c) + α(a,b). The third vertices are the common
        // neighbours of i and j (sorted lists, merged).
        let support: Vec<(u32, u32)> = alpha.keys().copied().collect();
        let lift_is_cocycle = support.par_iter().all(|&(i, j)| {
            common_neighbors(&neighbors[i as usize], &neighbors[j as usize]).all(|k| {
                let mut t = [i, j, k];
                t.sort_unstable_by(|x, y| y.cmp(x));
                let [a, b, c] = t;
                (alpha_of(b, c) - alpha_of(a, c) + alpha_of(a, b)).abs() < 0.5
            })
        });

        // Right-hand side δ₀ᵀα.
        let mut rhs = vec![0f64; n];
        for (&(i, j), &a) in &alpha {
            rhs[i as usize] += a;
            rhs[j as usize] -= a;
        }

        let mut f = vec![0f64; n];
        for (component, solver) in self.components.iter().zip(&self.solvers) {
            control.check()?;
            match solver {
                Some(multigrid) => {
                    let b: Vec<f64> = component.iter().map(|&v| rhs[v as usize]).collect();
                    let mut x = vec![0.0; b.len()];
                    let iterations = multigrid.solve(&b, &mut x, 1e-8, control)?;
                    tracing::debug!(
                        "circular coordinates: component of {} points: {iterations} multigrid-CG iterations",
                        component.len()
                    );
                    for (k, &v) in component.iter().enumerate() {
                        f[v as usize] = x[k];
                    }
                }
                None if component.len() > 1 => {
                    solve_component(neighbors, component, &rhs, &mut f, control)?;
                }
                None => {}
            }
        }

        let residual = (0..n)
            .into_par_iter()
            .map(|i| {
                neighbors[i]
                    .iter()
                    .filter(|&&j| (j as usize) < i)
                    .map(|&j| {
                        let r = alpha_of(i as u32, j) - (f[i] - f[j as usize]);
                        r * r
                    })
                    .sum::<f64>()
            })
            .sum::<f64>()
            .sqrt();

        Ok(CircularCoordinates {
            theta: f.iter().map(|v| v.rem_euclid(1.0)).collect(),
            epsilon,
            residual,
            lift_is_cocycle,
            members,
            edges,
        })
    }
}

/// The subgraph on `component` with local vertex numbers: entry k lists the local neighbours
/// of `component[k]`, increasing.
fn local_graph(neighbors: &[Vec<u32>], component: &[u32]) -> Vec<Vec<u32>> {
    let mut local = HashMap::with_capacity(component.len());
    for (k, &v) in component.iter().enumerate() {
        local.insert(v, k);
    }
    component
        .iter()
        .map(|&v| {
            let mut list: Vec<u32> = neighbors[v as usize]
                .iter()
                .filter_map(|u| local.get(u).map(|&k| k as u32))
                .collect();
            list.sort_unstable();
            list
        })
        .collect()
}

/// The 1-skeleton at `epsilon` as adjacency lists, each in increasing vertex order. Built from
/// the rows of the lower triangle, read in memory order (a column walk of a big matrix is a
/// cache miss per entry).
pub fn adjacency_within<D: DistanceMatrix>(dist: &D, epsilon: Value) -> Vec<Vec<u32>> {
    let n = dist.size();
    let lower: Vec<Vec<u32>> = (0..n)
        .into_par_iter()
        .map(|i| {
            let row = i * i.saturating_sub(1) / 2;
            (0..i)
                .filter(|&j| dist.edge_length(row + j) <= epsilon)
                .map(|j| j as u32)
                .collect()
        })
        .collect();
    let mut neighbors = lower.clone();
    for (i, row) in lower.iter().enumerate() {
        for &j in row {
            neighbors[j as usize].push(i as u32);
        }
    }
    neighbors
}

/// The common elements of two increasing lists.
fn common_neighbors<'a>(a: &'a [u32], b: &'a [u32]) -> impl Iterator<Item = u32> + 'a {
    let (mut p, mut q) = (0, 0);
    std::iter::from_fn(move || {
        while p < a.len() && q < b.len() {
            match a[p].cmp(&b[q]) {
                std::cmp::Ordering::Less => p += 1,
                std::cmp::Ordering::Greater => q += 1,
                std::cmp::Ordering::Equal => {
                    p += 1;
                    q += 1;
                    return Some(a[p - 1]);
                }
            }
        }
        None
    })
}

/// Connected components of the graph, as vertex lists.
fn components(neighbors: &[Vec<u32>]) -> Vec<Vec<u32>> {
    let n = neighbors.len();
    let mut seen = vec![false; n];
    let mut out = Vec::new();
    for start in 0..n {
        if seen[start] {
            continue;
        }
        seen[start] = true;
        let mut component = vec![start as u32];
        let mut k = 0;
        while k < component.len() {
            let v = component[k] as usize;
            k += 1;
            for &u in &neighbors[v] {
                if !seen[u as usize] {
                    seen[u as usize] = true;
                    component.push(u);
                }
            }
        }
        out.push(component);
    }
    out
}

/// Preconditioned conjugate gradients for `L x = b` on one connected component (L is positive semidefinite
/// with the constants as kernel; b sums to zero on the component, so CG from 0 converges to the
/// solution of mean zero).
fn solve_component(
    neighbors: &[Vec<u32>],
    component: &[u32],
    rhs: &[f64],
    f: &mut [f64],
    control: &Control,
) -> Result<(), CyclesError> {
    let m = component.len();
    let mut local = HashMap::with_capacity(m);
    for (k, &v) in component.iter().enumerate() {
        local.insert(v, k);
    }
    let local_neighbors: Vec<Vec<usize>> = component
        .iter()
        .map(|&v| {
            neighbors[v as usize]
                .iter()
                .filter_map(|u| local.get(u).copied())
                .collect()
        })
        .collect();
    // Small components: plain loops (rayon's per-call overhead would dominate the iterations).
    let parallel = m >= 20_000;
    let laplacian = |x: &[f64], out: &mut [f64]| {
        let row = |k: usize| {
            let nb = &local_neighbors[k];
            nb.len() as f64 * x[k] - nb.iter().map(|&u| x[u]).sum::<f64>()
        };
        if parallel {
            out.par_iter_mut()
                .enumerate()
                .for_each(|(k, o)| *o = row(k));
        } else {
            out.iter_mut().enumerate().for_each(|(k, o)| *o = row(k));
        }
    };
    let dot = |a: &[f64], b: &[f64]| -> f64 {
        if parallel {
            a.par_iter().zip(b).map(|(x, y)| x * y).sum()
        } else {
            a.iter().zip(b).map(|(x, y)| x * y).sum()
        }
    };

    let mut b: Vec<f64> = component.iter().map(|&v| rhs[v as usize]).collect();
    let mean = b.iter().sum::<f64>() / m as f64;
    b.iter_mut().for_each(|x| *x -= mean);
    let b_norm = dot(&b, &b).sqrt();
    if b_norm == 0.0 {
        return Ok(());
    }
    // Jacobi-preconditioned CG; θ needs far less than the 1e-8 relative residual we ask for.
    let inverse_degree: Vec<f64> = local_neighbors
        .iter()
        .map(|nb| 1.0 / nb.len().max(1) as f64)
        .collect();
    let mut x = vec![0f64; m];
    let mut r = b.clone();
    let mut z: Vec<f64> = r.iter().zip(&inverse_degree).map(|(a, d)| a * d).collect();
    let mut p = z.clone();
    let mut ap = vec![0f64; m];
    let mut rz = dot(&r, &z);
    let max_iterations = 20 * m + 100;
    let mut iterations = 0;
    for _ in 0..max_iterations {
        iterations += 1;
        control.check()?;
        laplacian(&p, &mut ap);
        let pap = dot(&p, &ap);
        if pap <= 0.0 {
            break;
        }
        let step = rz / pap;
        x.iter_mut().zip(&p).for_each(|(xi, pi)| *xi += step * pi);
        r.iter_mut().zip(&ap).for_each(|(ri, ai)| *ri -= step * ai);
        if dot(&r, &r).sqrt() <= 1e-8 * b_norm {
            break;
        }
        z.iter_mut()
            .zip(r.iter().zip(&inverse_degree))
            .for_each(|(zi, (ri, d))| *zi = ri * d);
        let rz_next = dot(&r, &z);
        let beta = rz_next / rz;
        rz = rz_next;
        p.iter_mut()
            .zip(&z)
            .for_each(|(pi, zi)| *pi = zi + beta * *pi);
    }
    tracing::debug!(
        "circular coordinates: component of {m} points, {} edges: {iterations} CG iterations",
        local_neighbors.iter().map(Vec::len).sum::<usize>() / 2
    );
    for (k, &v) in component.iter().enumerate() {
        f[v as usize] = x[k];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::LowerDistanceMatrix;
    use crate::rips::{RipsOptions, rips_persistence};

    #[test]
    fn a_circle_gets_a_coordinate_that_winds_once() {
        let n = 40;
        let points: Vec<Vec<f64>> = (0..n)
            .map(|k| {
                let a = std::f64::consts::TAU * k as f64 / n as f64;
                vec![a.cos(), a.sin()]
            })
            .collect();
        let m = LowerDistanceMatrix::from_points(&points).unwrap();
        let r = rips_persistence(
            &m,
            &RipsOptions {
                cocycles: true,
                ..RipsOptions::default()
            },
        )
        .unwrap();
        let cocycle = &r.cocycles[0];
        let eps = (cocycle.bar.0 + cocycle.bar.1.unwrap()) / 2.0;
        let cc = circular_coordinates(&m, cocycle, 47, eps);
        assert!(cc.lift_is_cocycle);
        let mut theta = cc.theta.clone();
        theta.push(theta[0]);
        assert!(
            (winding_number(&theta).abs() - 1.0).abs() < 1e-9,
            "{theta:?}"
        );
        // Evenly spaced points: evenly spaced angles.
        for k in 0..n {
            let step = theta[k + 1] - theta[k];
            let step = (step - step.round()).abs();
            assert!((step - 1.0 / n as f64).abs() < 1e-6, "{step}");
        }
        assert!(lift(46, 47) == -1 && lift(23, 47) == 23 && lift(24, 47) == -23);
    }
}
