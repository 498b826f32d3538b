//! Persistent cohomology of Vietoris–Rips filtrations over Z_p, following Ripser (U. Bauer,
//! "Ripser: efficient computation of Vietoris–Rips persistence barcodes", 2021) step by step so
//! that barcodes agree with it pair for pair:
//!
//! * simplices are never stored: a k-simplex with vertices `v_k > … > v_0` is the integer
//!   `Σ C(v_i, i+1)` (combinatorial number system) and its cofacets/facets are enumerated from
//!   that integer;
//! * dimension 0 by union–find over the edges in filtration order;
//! * higher dimensions by reducing the coboundary matrix column by column in reverse filtration
//!   order, with *clearing* (a simplex that is the pivot of a column of the previous dimension
//!   is not reduced), *apparent pairs* (a simplex whose youngest equal-diameter cofacet has it as
//!   oldest equal-diameter facet is paired without any reduction) and *emergent pairs* (a column
//!   whose first equal-diameter cofacet is not yet a pivot is paired on the spot);
//! * the reduction matrix V is kept (sparse) so that columns can be added lazily, and its
//!   column gives the representative cocycle of a class.
//!
//! Ordering conventions are Ripser's: a filtration order by diameter with ties broken by the
//! combinatorial index (larger index first in the pivot order), working columns as heaps with
//! lazy coefficient summation.

use std::collections::HashMap;

use crate::error::CyclesError;
use crate::metric::DistanceMatrix;
use crate::progress::{Control, Phase};

mod column;
mod complex;
mod reduce;
#[cfg(test)]
mod tests;

use complex::{Binomials, Rips, neighbor_lists};
use reduce::{MAX_STORED_BYTES, PivotMap};

/// The filtration value type (Ripser's `value_t`).
pub type Value = f32;

/// Largest supported homology dimension (simplex vertices are kept in fixed arrays).
pub const MAX_DIM: usize = 5;

/// Options of a Rips computation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RipsOptions {
    /// Highest homology dimension computed (1 computes H0 and H1).
    pub max_dim: usize,
    /// Largest filtration value; `None` takes the enclosing radius (the filtration is a cone,
    /// hence contractible, from there on, so no finite bar is lost).
    pub threshold: Option<Value>,
    /// The prime p of the coefficient field Z_p.
    pub modulus: u16,
    /// Whether to keep representative cocycles of the H1 classes.
    pub cocycles: bool,
}

impl Default for RipsOptions {
    fn default() -> Self {
        Self {
            max_dim: 1,
            threshold: None,
            modulus: 47,
            cocycles: false,
        }
    }
}

/// A bar `[birth, death)`; `death` is `None` for a class that never dies (JSON `null`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Bar(pub Value, pub Option<Value>);

impl Bar {
    pub fn birth(&self) -> Value {
        self.0
    }
    pub fn death(&self) -> Option<Value> {
        self.1
    }
    /// `death - birth`, infinite for an infinite bar.
    pub fn persistence(&self) -> f64 {
        self.1
            .map_or(f64::INFINITY, |d| f64::from(d) - f64::from(self.0))
    }
}

/// The barcode of `memscape persistence`: `{"dims": [[[birth, death], …], …]}`, dimension 0
/// first, bars in the order Ripser reports them.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PersistenceReport {
    pub dims: Vec<Vec<Bar>>,
}

/// One entry of a cocycle: the edge `{i, j}` (`i > j`) with a coefficient in Z_p.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CocycleEntry {
    pub i: u32,
    pub j: u32,
    pub coefficient: u16,
}

/// A representative cocycle of an H1 class: a cocycle of the Rips complex at every filtration
/// value in `[birth, death)` once restricted to the edges present there.
#[derive(Debug, Clone, PartialEq)]
pub struct Cocycle {
    pub bar: Bar,
    pub entries: Vec<CocycleEntry>,
}

/// Result of [`rips_persistence`].
#[derive(Debug, Clone, PartialEq)]
pub struct RipsResult {
    pub barcode: PersistenceReport,
    /// The threshold used (the enclosing radius unless one was given).
    pub threshold: Value,
    /// With [`RipsOptions::cocycles`]: one per bar of `barcode.dims[1]`, same order. When the
    /// filtration was collapsed (`collapse` is set) these are cocycles of the collapsed
    /// complex: [`RipsResult::lifted_cocycle_at`] gives them on the original one.
    pub cocycles: Vec<Cocycle>,
    /// The edge collapse applied before the reduction, if any.
    pub collapse: Option<crate::collapse::CollapseLog>,
}

impl RipsResult {
    /// The cocycle of H1 bar `k` at filtration value `epsilon` (inside its bar), lifted
    /// symmetrically from Z_p to Z, as `(i, j, value)` on edges `{i > j}` of the original
    /// complex at `epsilon` (zeros left out). Without a collapse these are the cocycle's own
    /// entries (longer edges included; they are zero at `epsilon`); after one, the cocycle of
    /// the collapsed complex is extended back through the collapses at `epsilon`.
    pub fn lifted_cocycle_at(
        &self,
        k: usize,
        modulus: u16,
        epsilon: Value,
    ) -> Vec<(u32, u32, i64)> {
        let Some(cocycle) = self.cocycles.get(k) else {
            return Vec::new();
        };
        let lifted = cocycle
            .entries
            .iter()
            .map(|e| (e.i, e.j, crate::circular::lift(e.coefficient, modulus)));
        let Some(log) = &self.collapse else {
            return lifted.filter(|e| e.2 != 0).collect();
        };
        let mut alpha: HashMap<u64, i64> = lifted
            .filter(|e| e.2 != 0)
            .map(|(i, j, a)| {
                (
                    u64::from(i) * u64::from(i.saturating_sub(1)) / 2 + u64::from(j),
                    a,
                )
            })
            .collect();
        log.extend(&mut alpha, epsilon);
        let mut out: Vec<(u32, u32, i64)> = alpha
            .into_iter()
            .filter(|&(_, a)| a != 0)
            .map(|(index, a)| {
                let (i, j) = crate::collapse::edge_vertices(index);
                (i as u32, j as u32, a)
            })
            .collect();
        out.sort_unstable();
        out
    }
}

/// Ripser's enclosing radius `min_i max_j d(i, j)`.
pub fn enclosing_radius<D: DistanceMatrix>(dist: &D) -> Value {
    use rayon::prelude::*;
    let n = dist.size();
    if n == 0 {
        return Value::INFINITY;
    }
    // Eccentricities from the rows of the lower triangle, read in memory order (the column
    // part of a row is a cache miss per entry in a big matrix): each block of rows keeps its
    // own maxima, merged at the end (max is exact, so the order does not matter).
    let blocks = row_blocks(n, 1 << 20);
    let eccentricity = blocks
        .par_iter()
        .map(|&(start, end)| {
            let mut ecc = vec![0.0 as Value; end];
            for i in start..end {
                let row = i * i.saturating_sub(1) / 2;
                let mut own: Value = 0.0;
                for (j, slot) in ecc[..i].iter_mut().enumerate() {
                    let d = dist.edge_length(row + j);
                    own = own.max(d);
                    *slot = slot.max(d);
                }
                ecc[i] = ecc[i].max(own);
            }
            ecc
        })
        .reduce(Vec::new, |a, b| {
            let (mut long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
            for (x, y) in long.iter_mut().zip(short) {
                *x = x.max(y);
            }
            long
        });
    eccentricity.into_iter().fold(Value::INFINITY, Value::min)
}

/// Row ranges `start..end` of the lower triangle holding about `entries` entries each.
pub(crate) fn row_blocks(n: usize, entries: usize) -> Vec<(usize, usize)> {
    let mut blocks = Vec::new();
    let (mut start, mut filled) = (0, 0);
    for i in 0..n {
        filled += i;
        if filled >= entries || i + 1 == n {
            blocks.push((start, i + 1));
            start = i + 1;
            filled = 0;
        }
    }
    blocks
}

/// Persistent cohomology of the Vietoris–Rips filtration of `dist`.
pub fn rips_persistence<D: DistanceMatrix>(
    dist: &D,
    options: &RipsOptions,
) -> Result<RipsResult, CyclesError> {
    persistence_with(dist, options, Shortcuts::ALL, &Control::new())
}

/// [`rips_persistence`] with progress reports and cancellation.
pub fn rips_persistence_with<D: DistanceMatrix>(
    dist: &D,
    options: &RipsOptions,
    control: &Control,
) -> Result<RipsResult, CyclesError> {
    persistence_with(dist, options, Shortcuts::ALL, control)
}

/// Which exact shortcuts the engine may take (all of them outside tests, which compare each
/// against the plain computation).
#[derive(Debug, Clone, Copy)]
struct Shortcuts {
    cone_cut: bool,
    sparse: bool,
    /// Memory for reduced columns kept during the reduction (a budget, not a shortcut: tests
    /// make it tiny to run the re-derivation of columns that did not fit).
    store_bytes: usize,
    /// Edge collapse of integer filtrations with at least this many edges below the threshold
    /// (`usize::MAX`: never).
    collapse_min_edges: usize,
    /// Columns reduced level by level (integer filtrations).
    level_by_level: bool,
}

impl Shortcuts {
    const ALL: Self = Self {
        cone_cut: true,
        sparse: true,
        store_bytes: MAX_STORED_BYTES,
        collapse_min_edges: COLLAPSE_MIN_EDGES,
        level_by_level: true,
    };
}

/// Integer filtrations with fewer edges below the threshold are not collapsed (the collapse
/// costs about what it saves on small complexes, and it changes the order of tied bars).
const COLLAPSE_MIN_EDGES: usize = 1 << 18;

fn persistence_with<D: DistanceMatrix>(
    dist: &D,
    options: &RipsOptions,
    shortcuts: Shortcuts,
    control: &Control,
) -> Result<RipsResult, CyclesError> {
    if options.max_dim > MAX_DIM {
        return Err(CyclesError::InvalidParameter(format!(
            "dimension {} is above the supported maximum {MAX_DIM}",
            options.max_dim
        )));
    }
    let modulus = u32::from(options.modulus);
    if !is_prime(modulus) {
        return Err(CyclesError::InvalidParameter(format!(
            "coefficient modulus {modulus} is not a prime"
        )));
    }
    if options.threshold.is_some_and(Value::is_nan) {
        return Err(CyclesError::InvalidParameter("threshold is NaN".into()));
    }
    let n = dist.size();
    control.begin(Phase::Radius, 2)?;
    let radius = enclosing_radius(dist);
    control.report(Phase::Radius, 1, 2);
    control.check()?;
    let threshold = options.threshold.unwrap_or(radius);
    // The cone cut: from the enclosing radius r on, the complex is a cone (the vertex of
    // eccentricity r is joined to every simplex), so all its homology in dimensions >= 1 is zero
    // and it is connected. Every class alive just below r therefore dies exactly at r and no
    // class born at r or later has positive length: the barcode up to any threshold >= r is the
    // barcode up to the largest distance below r with its infinite bars closed at r (all but one
    // in dimension 0). Levenshtein metrics of windows put most pairs at the largest distance w,
    // so this drops almost every edge: at 8,283 unique windows of a real trace 97 % of the 34 M
    // pairs are at distance 10 = r.
    let cone_at = (shortcuts.cone_cut && n >= 2 && threshold >= radius)
        .then(|| largest_length_below(dist, radius))
        .flatten();
    let computed_threshold = cone_at.map_or(threshold, |(below, _)| below);
    // Edge collapse (exact for every barcode; cocycles are extended back on demand): for
    // integer metrics with many edges below the threshold.
    let collapsed = (0.0..255.0)
        .contains(&computed_threshold)
        .then(|| {
            crate::collapse::collapse(
                dist,
                computed_threshold as u32,
                shortcuts.collapse_min_edges,
                control,
            )
        })
        .transpose()?
        .flatten();
    let (mut dims, mut cocycles, collapse) = match collapsed {
        Some(collapsed) => {
            let (dims, cocycles) = compute(
                &collapsed.matrix,
                options,
                shortcuts,
                (computed_threshold, threshold, radius),
                control,
            )?;
            (dims, cocycles, Some(collapsed.log))
        }
        None => {
            let (dims, cocycles) = compute(
                dist,
                options,
                shortcuts,
                (computed_threshold, threshold, radius),
                control,
            )?;
            (dims, cocycles, None)
        }
    };
    if let Some((_, radius)) = cone_at {
        close_bars_at_cone(&mut dims, &mut cocycles, radius);
    }
    Ok(RipsResult {
        barcode: PersistenceReport { dims },
        threshold,
        cocycles,
        collapse,
    })
}

/// The persistence pairs of `dist` up to `computed_threshold` (the engine proper).
fn compute<D: DistanceMatrix>(
    dist: &D,
    options: &RipsOptions,
    shortcuts: Shortcuts,
    (computed_threshold, threshold, radius): (Value, Value, Value),
    control: &Control,
) -> Result<(Vec<Vec<Bar>>, Vec<Cocycle>), CyclesError> {
    let n = dist.size();
    let modulus = u32::from(options.modulus);
    let binomials = Binomials::new(n, options.max_dim + 2)?;
    let engine = Rips {
        dist,
        n,
        dim_max: options.max_dim,
        threshold: computed_threshold,
        modulus,
        inverse: multiplicative_inverses(modulus),
        binomials,
        keep_cocycles: options.cocycles,
        control,
        store_bytes: shortcuts.store_bytes,
        level_by_level: shortcuts.level_by_level,
        neighbors: if shortcuts.sparse {
            neighbor_lists(dist, computed_threshold)
        } else {
            None
        },
    };
    tracing::debug!(
        "rips: {n} points, enclosing radius {radius}, threshold {threshold}, computed up to \
         {computed_threshold}, {}",
        engine.neighbors.as_ref().map_or_else(
            || "dense".to_owned(),
            |nb| format!("sparse ({} edges)", nb.edge_count())
        )
    );
    let mut dims = vec![Vec::new(); options.max_dim + 1];
    let mut cocycles = Vec::new();
    let mut simplices = Vec::new();
    let started = std::time::Instant::now();
    let mut columns_to_reduce = engine.compute_dim_0_pairs(&mut simplices, &mut dims[0])?;
    tracing::debug!(
        "rips: H0 in {:.2?}, {} columns to reduce in dimension 1",
        started.elapsed(),
        columns_to_reduce.len()
    );
    for (dim, bars) in dims.iter_mut().enumerate().skip(1) {
        let mut pivot_column_index = PivotMap::default();
        pivot_column_index.reserve(columns_to_reduce.len());
        engine.compute_pairs(
            &columns_to_reduce,
            &mut pivot_column_index,
            dim,
            bars,
            &mut cocycles,
        )?;
        tracing::debug!(
            "rips: H{dim} done after {:.2?} ({} bars)",
            started.elapsed(),
            bars.len()
        );
        if dim < options.max_dim {
            columns_to_reduce =
                engine.assemble_columns_to_reduce(&mut simplices, &pivot_column_index, dim + 1);
        }
    }
    Ok((dims, cocycles))
}

/// The largest edge length below `radius` (the `below` of the cone cut) and `radius`; `None`
/// when every edge has length `radius` or more.
fn largest_length_below<D: DistanceMatrix>(dist: &D, radius: Value) -> Option<(Value, Value)> {
    use rayon::prelude::*;
    let pairs = dist.size() * dist.size().saturating_sub(1) / 2;
    let below = (0..pairs)
        .into_par_iter()
        .with_min_len(1 << 16)
        .map(|e| dist.edge_length(e))
        .filter(|&d| d < radius)
        .reduce(|| Value::NEG_INFINITY, Value::max);
    (below >= 0.0).then_some((below, radius))
}

/// Closes the bars left open by a computation cut just below the cone at `radius`: in dimension
/// 0 all infinite bars but the last die at `radius` (Ripser emits these merges, all `[0, r)`,
/// after the smaller edges and before the one infinite bar, so the order is Ripser's too); in
/// higher dimensions every infinite bar dies at `radius`.
fn close_bars_at_cone(dims: &mut [Vec<Bar>], cocycles: &mut [Cocycle], radius: Value) {
    if let Some(bars) = dims.first_mut() {
        let infinite = bars.iter().filter(|b| b.1.is_none()).count();
        for bar in bars
            .iter_mut()
            .filter(|b| b.1.is_none())
            .take(infinite.saturating_sub(1))
        {
            bar.1 = Some(radius);
        }
    }
    for bar in dims.iter_mut().skip(1).flatten() {
        if bar.1.is_none() {
            bar.1 = Some(radius);
        }
    }
    for cocycle in cocycles {
        if cocycle.bar.1.is_none() {
            cocycle.bar.1 = Some(radius);
        }
    }
}

fn is_prime(p: u32) -> bool {
    p >= 2
        && (2..)
            .take_while(|d| d * d <= p)
            .all(|d| !p.is_multiple_of(d))
}

/// Ripser's table of inverses modulo a prime.
fn multiplicative_inverses(m: u32) -> Vec<u32> {
    let mut inverse = vec![0u32; m as usize];
    if m > 1 {
        inverse[1] = 1;
    }
    // m = a * (m / a) + m % a, so 0 = inverse(m % a) * (m / a) + inverse(a) (mod m).
    for a in 2..m {
        inverse[a as usize] = m - (inverse[(m % a) as usize] * (m / a)) % m;
    }
    inverse
}
