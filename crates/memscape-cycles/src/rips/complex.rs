//! The Rips complex without stored simplices: the combinatorial number system, simplices'
//! vertices and diameters, Ripser's coboundary and boundary enumerators (dense, or over
//! neighbour lists in sparse mode) and the zero-apparent-pair tests.

use super::{MAX_DIM, Value};
use crate::error::CyclesError;
use crate::metric::DistanceMatrix;
use crate::progress::Control;

/// Binomial coefficients `C(i, k)` for `i <= n`, `k <= k_max`, checked against overflow.
pub(super) struct Binomials {
    pub(super) stride: usize,
    pub(super) table: Vec<i64>,
}

impl Binomials {
    pub(super) fn new(n: usize, k_max: usize) -> Result<Self, CyclesError> {
        let stride = n + 1;
        let mut table = vec![0i64; stride * (k_max + 1)];
        for i in 0..=n {
            table[i] = 1;
            for k in 1..=k_max.min(i) {
                let value = table[(k - 1) * stride + i - 1]
                    .checked_add(if k < i { table[k * stride + i - 1] } else { 0 })
                    .ok_or_else(|| {
                        CyclesError::TooLarge(format!(
                            "{n} points: simplices of dimension {} cannot be indexed in 64 bits",
                            k_max - 1
                        ))
                    })?;
                table[k * stride + i] = value;
            }
        }
        Ok(Self { stride, table })
    }

    #[inline]
    pub(super) fn get(&self, i: i64, k: i64) -> i64 {
        if i < k || k < 0 {
            return 0;
        }
        self.table[k as usize * self.stride + i as usize]
    }
}

/// A simplex (or a cochain entry): diameter, combinatorial index, coefficient.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Entry {
    pub(super) diameter: Value,
    pub(super) index: i64,
    pub(super) coefficient: u32,
}

impl Entry {
    pub(super) const NONE: Entry = Entry {
        diameter: 0.0,
        index: -1,
        coefficient: 0,
    };
    pub(super) fn is_none(&self) -> bool {
        self.index == -1
    }
}

/// Vertices of a simplex, largest first, in a fixed array.
#[derive(Debug, Clone, Copy)]
pub(super) struct Vertices {
    pub(super) v: [usize; MAX_DIM + 3],
    pub(super) len: usize,
}

impl Vertices {
    pub(super) fn as_slice(&self) -> &[usize] {
        &self.v[..self.len]
    }
}

pub(super) struct Rips<'a, D> {
    pub(super) dist: &'a D,
    pub(super) n: usize,
    pub(super) dim_max: usize,
    pub(super) threshold: Value,
    pub(super) modulus: u32,
    pub(super) inverse: Vec<u32>,
    pub(super) binomials: Binomials,
    pub(super) keep_cocycles: bool,
    pub(super) control: &'a Control,
    /// Memory budget of the reduced columns kept by [`Self::compute_pairs`].
    pub(super) store_bytes: usize,
    /// Whether integer filtrations are reduced level by level.
    pub(super) level_by_level: bool,
    /// For thresholds that keep few edges (Ripser's sparse mode): the 1-skeleton at the
    /// threshold as adjacency lists. Cofacets are then enumerated by merging the neighbour lists
    /// of a simplex's vertices (O(degree) per coboundary instead of O(n)), in the same
    /// decreasing-index order as the dense enumeration, so every pairing decision is the same.
    pub(super) neighbors: Option<Neighbors>,
}

/// The 1-skeleton up to a threshold as compressed adjacency lists: the neighbours of `v` are
/// `entries[offsets[v]..offsets[v + 1]]`, in decreasing vertex order, each with its distance
/// to `v`.
pub(super) struct Neighbors {
    pub(super) offsets: Vec<usize>,
    pub(super) entries: Vec<(u32, Value)>,
}

impl Neighbors {
    #[inline]
    pub(super) fn of(&self, v: usize) -> &[(u32, Value)] {
        &self.entries[self.offsets[v]..self.offsets[v + 1]]
    }

    pub(super) fn edge_count(&self) -> usize {
        self.entries.len() / 2
    }
}

/// State of Ripser's `simplex_coboundary_enumerator`: cofacets come in decreasing index order.
pub(super) struct Coboundary {
    pub(super) idx_below: i64,
    pub(super) idx_above: i64,
    pub(super) v: i64,
    pub(super) k: i64,
    pub(super) vertices: Vertices,
    pub(super) simplex: Entry,
    /// Sparse mode: read positions in the neighbour lists of the simplex's vertices.
    pub(super) positions: [usize; MAX_DIM + 3],
    /// Sparse mode: the common neighbour found by `cob_has_next`, and its largest distance to
    /// the simplex's vertices.
    pub(super) found: (usize, Value),
}

/// State of Ripser's `simplex_boundary_enumerator`.
pub(super) struct Boundary {
    pub(super) idx_below: i64,
    pub(super) idx_above: i64,
    pub(super) j: i64,
    pub(super) k: i64,
    pub(super) dim: usize,
    pub(super) simplex: Entry,
}

impl<D: DistanceMatrix> Rips<'_, D> {
    #[inline]
    pub(super) fn b(&self, i: i64, k: i64) -> i64 {
        self.binomials.get(i, k)
    }

    /// Largest `v <= top` with `C(v, k) <= idx`.
    pub(super) fn max_vertex(&self, idx: i64, k: i64, top: i64) -> i64 {
        let (mut lo, mut hi) = (k - 1, top);
        while lo < hi {
            let mid = lo + (hi - lo + 1) / 2;
            if self.b(mid, k) <= idx {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    }

    pub(super) fn simplex_vertices(&self, mut idx: i64, dim: usize) -> Vertices {
        let mut out = Vertices {
            v: [0; MAX_DIM + 3],
            len: dim + 1,
        };
        if dim == 1 {
            // Edges (most lookups): the largest i with C(i, 2) <= idx from a square root,
            // corrected for rounding, instead of a binary search.
            let mut i = ((1.0 + (1.0 + 8.0 * idx as f64).sqrt()) / 2.0) as i64;
            while i > 1 && i * (i - 1) / 2 > idx {
                i -= 1;
            }
            while (i + 1) * i / 2 <= idx {
                i += 1;
            }
            out.v[0] = i as usize;
            out.v[1] = (idx - i * (i - 1) / 2) as usize;
            return out;
        }
        let mut top = self.n as i64 - 1;
        for (slot, k) in (1..=dim as i64 + 1).rev().enumerate() {
            top = self.max_vertex(idx, k, top);
            out.v[slot] = top as usize;
            idx -= self.b(top, k);
        }
        out
    }

    pub(super) fn compute_diameter(&self, index: i64, dim: usize) -> Value {
        let vertices = self.simplex_vertices(index, dim);
        let vs = vertices.as_slice();
        let mut diameter = Value::NEG_INFINITY;
        for (a, &i) in vs.iter().enumerate() {
            for &j in &vs[..a] {
                diameter = diameter.max(self.dist.distance(i, j));
            }
        }
        diameter
    }

    pub(super) fn coboundary(&self, simplex: Entry, dim: usize) -> Coboundary {
        Coboundary {
            idx_below: simplex.index,
            idx_above: 0,
            v: self.n as i64 - 1,
            k: dim as i64 + 1,
            vertices: self.simplex_vertices(simplex.index, dim),
            simplex,
            positions: [0; MAX_DIM + 3],
            found: (0, 0.0),
        }
    }

    /// Whether a cofacet follows; with `all_cofacets == false`, only cofacets whose added vertex
    /// is above all of the simplex's (each simplex of the next dimension then comes up once).
    #[inline]
    pub(super) fn cob_has_next(&self, c: &mut Coboundary, all_cofacets: bool) -> bool {
        match &self.neighbors {
            Some(neighbors) => Self::sparse_has_next(neighbors, c, all_cofacets),
            None => c.v >= c.k && (all_cofacets || self.b(c.v, c.k) > c.idx_below),
        }
    }

    /// Ripser's sparse `has_next`: the next common neighbour of all vertices (lists are in
    /// decreasing vertex order, so cofacets come in decreasing index order).
    pub(super) fn sparse_has_next(
        neighbors: &Neighbors,
        c: &mut Coboundary,
        all_cofacets: bool,
    ) -> bool {
        let vertices = c.vertices;
        let driver = neighbors.of(vertices.v[0]);
        'candidates: while c.positions[0] < driver.len() {
            let (x, d0) = driver[c.positions[0]];
            let mut diameter = c.simplex.diameter.max(d0);
            for m in 1..vertices.len {
                let list = neighbors.of(vertices.v[m]);
                let p = &mut c.positions[m];
                while *p < list.len() && list[*p].0 > x {
                    *p += 1;
                }
                let Some(&(y, d)) = list.get(*p) else {
                    return false;
                };
                if y != x {
                    c.positions[0] += 1;
                    continue 'candidates;
                }
                diameter = diameter.max(d);
            }
            if !all_cofacets && (x as usize) < vertices.v[0] {
                return false;
            }
            c.found = (x as usize, diameter);
            return true;
        }
        false
    }

    /// The cofacet for the neighbour found by [`Self::sparse_has_next`].
    #[inline]
    pub(super) fn sparse_next(&self, c: &mut Coboundary) -> Entry {
        let (x, diameter) = c.found;
        c.positions[0] += 1;
        let vertices = c.vertices.as_slice();
        let dim = vertices.len() as i64 - 1;
        // Cofacet vertices w_0 > … > w_{dim+1}: index Σ C(w_q, dim + 2 − q). Vertices above x keep
        // their position, those below move down by one.
        let mut index = 0;
        let mut above = 0;
        for (m, &u) in vertices.iter().enumerate() {
            let m = m as i64;
            if u > x {
                index += self.b(u as i64, dim + 2 - m);
                above += 1;
            } else {
                index += self.b(u as i64, dim + 1 - m);
            }
        }
        index += self.b(x as i64, dim + 2 - above);
        // Ripser's sign: (−1)^(number of vertices below x).
        let below = vertices.len() as i64 - above;
        let sign = if below & 1 == 1 { self.modulus - 1 } else { 1 };
        Entry {
            diameter,
            index,
            coefficient: sign * c.simplex.coefficient % self.modulus,
        }
    }

    #[inline]
    pub(super) fn cob_next(&self, c: &mut Coboundary) -> Entry {
        if self.neighbors.is_some() {
            return self.sparse_next(c);
        }
        while self.b(c.v, c.k) <= c.idx_below {
            c.idx_below -= self.b(c.v, c.k);
            c.idx_above += self.b(c.v, c.k + 1);
            c.v -= 1;
            c.k -= 1;
        }
        let v = c.v as usize;
        let mut diameter = c.simplex.diameter;
        for &w in c.vertices.as_slice() {
            diameter = diameter.max(self.dist.distance(v, w));
        }
        let index = c.idx_above + self.b(c.v, c.k + 1) + c.idx_below;
        c.v -= 1;
        let sign = if c.k & 1 == 1 { self.modulus - 1 } else { 1 };
        Entry {
            diameter,
            index,
            coefficient: sign * c.simplex.coefficient % self.modulus,
        }
    }

    pub(super) fn boundary(&self, simplex: Entry, dim: usize) -> Boundary {
        Boundary {
            idx_below: simplex.index,
            idx_above: 0,
            j: self.n as i64 - 1,
            k: dim as i64,
            dim,
            simplex,
        }
    }

    #[inline]
    pub(super) fn bd_next(&self, f: &mut Boundary) -> Entry {
        f.j = self.max_vertex(f.idx_below, f.k + 1, f.j);
        let index = f.idx_above - self.b(f.j, f.k + 1) + f.idx_below;
        let diameter = self.compute_diameter(index, f.dim - 1);
        let sign = if f.k & 1 == 1 { self.modulus - 1 } else { 1 };
        let coefficient = sign * f.simplex.coefficient % self.modulus;
        f.idx_below -= self.b(f.j, f.k + 1);
        f.idx_above += self.b(f.j, f.k);
        f.k -= 1;
        Entry {
            diameter,
            index,
            coefficient,
        }
    }

    pub(super) fn zero_pivot_facet(&self, simplex: Entry, dim: usize) -> Entry {
        let mut facets = self.boundary(simplex, dim);
        while facets.k >= 0 {
            let facet = self.bd_next(&mut facets);
            if facet.diameter == simplex.diameter {
                return facet;
            }
        }
        Entry::NONE
    }

    pub(super) fn zero_pivot_cofacet(&self, simplex: Entry, dim: usize) -> Entry {
        let mut cofacets = self.coboundary(simplex, dim);
        while self.cob_has_next(&mut cofacets, true) {
            let cofacet = self.cob_next(&mut cofacets);
            if cofacet.diameter == simplex.diameter {
                return cofacet;
            }
        }
        Entry::NONE
    }

    pub(super) fn zero_apparent_facet(&self, simplex: Entry, dim: usize) -> Entry {
        let facet = self.zero_pivot_facet(simplex, dim);
        if !facet.is_none() && self.zero_pivot_cofacet(facet, dim - 1).index == simplex.index {
            facet
        } else {
            Entry::NONE
        }
    }

    pub(super) fn zero_apparent_cofacet(&self, simplex: Entry, dim: usize) -> Entry {
        let cofacet = self.zero_pivot_cofacet(simplex, dim);
        if !cofacet.is_none() && self.zero_pivot_facet(cofacet, dim + 1).index == simplex.index {
            cofacet
        } else {
            Entry::NONE
        }
    }

    pub(super) fn is_in_zero_apparent_pair(&self, simplex: Entry, dim: usize) -> bool {
        !self.zero_apparent_cofacet(simplex, dim).is_none()
            || !self.zero_apparent_facet(simplex, dim).is_none()
    }
}

/// Neighbour lists within `threshold` (Ripser's sparse distance matrix), built when they are
/// small enough to pay: at most a quarter of all pairs (a merge of two lists then costs at most
/// about n/2 steps, against n for the dense enumeration) and at most 48 M edges (768 MiB; the
/// dense enumeration of that many edges' coboundaries would take hours anyway).
pub(super) fn neighbor_lists<D: DistanceMatrix>(dist: &D, threshold: Value) -> Option<Neighbors> {
    use rayon::prelude::*;
    let n = dist.size();
    let pairs = n * n.saturating_sub(1) / 2;
    if n < 64 {
        return None;
    }
    let within = (0..pairs)
        .into_par_iter()
        .with_min_len(1 << 16)
        .filter(|&e| dist.edge_length(e) <= threshold)
        .count();
    if within > pairs / 4 || within > 48 << 20 {
        return None;
    }
    // Row i of the lower triangle (j < i), scanned in memory order, in parallel.
    let lower: Vec<Vec<(u32, Value)>> = (0..n)
        .into_par_iter()
        .map(|i| {
            let row = i * i.saturating_sub(1) / 2;
            (0..i)
                .rev()
                .filter_map(|j| {
                    let d = dist.edge_length(row + j);
                    (d <= threshold).then_some((j as u32, d))
                })
                .collect()
        })
        .collect();
    let mut degree = vec![0usize; n];
    for (i, row) in lower.iter().enumerate() {
        degree[i] += row.len();
        for &(j, _) in row {
            degree[j as usize] += 1;
        }
    }
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0);
    for d in &degree {
        offsets.push(offsets.last().copied().unwrap_or(0) + d);
    }
    let mut entries = vec![(0u32, 0.0); within * 2];
    let mut cursor: Vec<usize> = offsets[..n].to_vec();
    // Neighbours above v first, in decreasing order (rows visited from the top)…
    for (i, row) in lower.iter().enumerate().rev() {
        for &(j, d) in row {
            let slot = &mut cursor[j as usize];
            entries[*slot] = (i as u32, d);
            *slot += 1;
        }
    }
    // …then those below, already decreasing.
    for (i, row) in lower.iter().enumerate() {
        let start = cursor[i];
        entries[start..start + row.len()].copy_from_slice(row);
    }
    Some(Neighbors { offsets, entries })
}
