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

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use crate::error::CyclesError;
use crate::metric::DistanceMatrix;

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
    persistence_with(dist, options, Shortcuts::ALL)
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
    let radius = enclosing_radius(dist);
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
            )
        })
        .flatten();
    let (mut dims, mut cocycles, collapse) = match collapsed {
        Some(collapsed) => {
            let (dims, cocycles) = compute(
                &collapsed.matrix,
                options,
                shortcuts,
                computed_threshold,
                threshold,
                radius,
            )?;
            (dims, cocycles, Some(collapsed.log))
        }
        None => {
            let (dims, cocycles) = compute(
                dist,
                options,
                shortcuts,
                computed_threshold,
                threshold,
                radius,
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
    computed_threshold: Value,
    threshold: Value,
    radius: Value,
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
    let mut columns_to_reduce = engine.compute_dim_0_pairs(&mut simplices, &mut dims[0]);
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
        );
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

/// Binomial coefficients `C(i, k)` for `i <= n`, `k <= k_max`, checked against overflow.
struct Binomials {
    stride: usize,
    table: Vec<i64>,
}

impl Binomials {
    fn new(n: usize, k_max: usize) -> Result<Self, CyclesError> {
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
    fn get(&self, i: i64, k: i64) -> i64 {
        if i < k || k < 0 {
            return 0;
        }
        self.table[k as usize * self.stride + i as usize]
    }
}

/// A simplex (or a cochain entry): diameter, combinatorial index, coefficient.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Entry {
    diameter: Value,
    index: i64,
    coefficient: u32,
}

impl Entry {
    const NONE: Entry = Entry {
        diameter: 0.0,
        index: -1,
        coefficient: 0,
    };
    fn is_none(&self) -> bool {
        self.index == -1
    }
}

/// A working column: a max-heap of entries packed into integer keys so that the top is the
/// smallest diameter, ties the largest index (Ripser's `greater_diameter_or_smaller_index` in a
/// `std::priority_queue`); the coefficient, in the low bits, never decides the order among
/// distinct simplices.
///
/// `Wide` keys (`u128`, in a binary heap): bits 96..128 the complemented diameter bits (the
/// bits of a non-negative `f32` order like the value), 32..96 the index, 0..32 the
/// coefficient. `Narrow` keys (`u64`), for integer diameters when everything fits: the
/// complemented diameter, then `index_bits` of index, then `coefficient_bits` of coefficient,
/// stored complemented in a [`RadixHeap`] (smallest first). The heap is the hot loop of the
/// reduction: the narrow keys save ≈ 20 % of the H1 time and the radix heap ≈ 18 % more on
/// 10,000 Levenshtein windows.
#[derive(Debug)]
enum Column {
    Wide(BinaryHeap<u128>),
    Narrow {
        heap: Box<RadixHeap>,
        layout: NarrowLayout,
    },
}

/// A radix heap (Ahuja, Mehlhorn, Orlin, Tarjan 1990) of `u64` keys, popping the smallest:
/// keys are kept in 65 buckets by the highest bit in which they differ from the last minimum,
/// so a push is O(1) and each key moves down at most 64 times. It needs pushes not below the
/// last minimum, which the reduction nearly always satisfies (an added column's entries all lie
/// at or after its pivot, the current one); the rare smaller key, from a column rebuilt out of
/// V simplex by simplex, goes to a small binary heap that is served first.
#[derive(Debug)]
struct RadixHeap {
    last: u64,
    buckets: [Vec<u64>; 65],
    radix_len: usize,
    /// Keys below `last`, smallest first.
    below: BinaryHeap<std::cmp::Reverse<u64>>,
}

impl Default for RadixHeap {
    fn default() -> Self {
        Self {
            last: 0,
            buckets: std::array::from_fn(|_| Vec::new()),
            radix_len: 0,
            below: BinaryHeap::new(),
        }
    }
}

impl RadixHeap {
    #[inline]
    fn bucket(&self, key: u64) -> usize {
        (64 - (key ^ self.last).leading_zeros()) as usize
    }

    #[inline]
    fn push(&mut self, key: u64) {
        if key < self.last {
            self.below.push(std::cmp::Reverse(key));
        } else {
            let b = self.bucket(key);
            self.buckets[b].push(key);
            self.radix_len += 1;
        }
    }

    /// Makes bucket 0 hold the smallest radix key (if any).
    fn settle(&mut self) {
        if !self.buckets[0].is_empty() || self.radix_len == 0 {
            return;
        }
        let Some(i) = (1..65).find(|&i| !self.buckets[i].is_empty()) else {
            return;
        };
        let keys = std::mem::take(&mut self.buckets[i]);
        self.last = keys.iter().copied().min().unwrap_or(self.last);
        for &key in &keys {
            let b = self.bucket(key);
            self.buckets[b].push(key);
        }
        // Give the emptied bucket its allocation back.
        let mut keys = keys;
        keys.clear();
        if self.buckets[i].is_empty() {
            self.buckets[i] = keys;
        }
    }

    #[inline]
    fn peek_min(&mut self) -> Option<u64> {
        if let Some(&std::cmp::Reverse(key)) = self.below.peek() {
            return Some(key);
        }
        self.settle();
        self.buckets[0].last().copied()
    }

    #[inline]
    fn pop_min(&mut self) {
        if self.below.pop().is_some() {
            return;
        }
        self.settle();
        if self.buckets[0].pop().is_some() {
            self.radix_len -= 1;
        }
    }

    fn clear(&mut self) {
        for b in &mut self.buckets {
            b.clear();
        }
        self.below.clear();
        self.radix_len = 0;
        self.last = 0;
    }

    fn len(&self) -> usize {
        self.radix_len + self.below.len()
    }

    /// All keys, in no order; empties the heap.
    fn take_all(&mut self) -> Vec<u64> {
        let mut out = Vec::with_capacity(self.len());
        for b in &mut self.buckets {
            out.append(b);
        }
        out.extend(self.below.drain().map(|std::cmp::Reverse(k)| k));
        self.clear();
        out
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct NarrowLayout {
    index_bits: u32,
    coefficient_bits: u32,
}

impl NarrowLayout {
    /// The layout for integer diameters `0..=max_level`, indices `< index_bound` and
    /// coefficients `< modulus`, if it fits in 64 bits.
    fn new(max_level: u32, index_bound: i64, modulus: u32) -> Option<Self> {
        let bits = |x: u64| 64 - x.leading_zeros();
        let index_bits = bits(u64::try_from(index_bound).ok()?);
        let coefficient_bits = bits(u64::from(modulus));
        (bits(u64::from(max_level)) + index_bits + coefficient_bits <= 64).then_some(Self {
            index_bits,
            coefficient_bits,
        })
    }

    #[inline]
    fn shift(&self) -> u32 {
        self.index_bits + self.coefficient_bits
    }

    #[inline]
    fn pack(&self, e: Entry) -> u64 {
        let level = e.diameter as u64;
        let level_mask = u64::MAX >> self.shift();
        ((!level & level_mask) << self.shift())
            | ((e.index as u64) << self.coefficient_bits)
            | u64::from(e.coefficient)
    }

    #[inline]
    fn unpack(&self, key: u64) -> Entry {
        let level_mask = u64::MAX >> self.shift();
        let index_mask = (1u64 << self.index_bits) - 1;
        let coefficient_mask = (1u64 << self.coefficient_bits) - 1;
        Entry {
            diameter: (!(key >> self.shift()) & level_mask) as Value,
            index: ((key >> self.coefficient_bits) & index_mask) as i64,
            coefficient: (key & coefficient_mask) as u32,
        }
    }
}

impl Column {
    fn new(layout: Option<NarrowLayout>) -> Self {
        match layout {
            Some(layout) => Self::Narrow {
                heap: Box::default(),
                layout,
            },
            None => Self::Wide(BinaryHeap::new()),
        }
    }

    /// The wide packing (also the storage format of reduced columns).
    #[inline]
    fn pack(e: Entry) -> u128 {
        (u128::from(!e.diameter.to_bits()) << 96)
            | (u128::from(e.index as u64) << 32)
            | u128::from(e.coefficient)
    }

    #[inline]
    fn unpack(key: u128) -> Entry {
        Entry {
            diameter: Value::from_bits(!((key >> 96) as u32)),
            index: (key >> 32) as u64 as i64,
            coefficient: key as u32,
        }
    }

    #[inline]
    fn push(&mut self, e: Entry) {
        match self {
            Self::Wide(heap) => heap.push(Self::pack(e)),
            Self::Narrow { heap, layout } => heap.push(!layout.pack(e)),
        }
    }

    #[inline]
    fn peek(&mut self) -> Option<Entry> {
        match self {
            Self::Wide(heap) => heap.peek().map(|&k| Self::unpack(k)),
            Self::Narrow { heap, layout } => heap.peek_min().map(|k| layout.unpack(!k)),
        }
    }

    #[inline]
    fn pop(&mut self) {
        match self {
            Self::Wide(heap) => {
                heap.pop();
            }
            Self::Narrow { heap, .. } => heap.pop_min(),
        }
    }

    fn clear(&mut self) {
        match self {
            Self::Wide(heap) => heap.clear(),
            Self::Narrow { heap, .. } => heap.clear(),
        }
    }

    fn len(&self) -> usize {
        match self {
            Self::Wide(heap) => heap.len(),
            Self::Narrow { heap, .. } => heap.len(),
        }
    }

    fn extend(&mut self, entries: impl Iterator<Item = Entry>) {
        for e in entries {
            self.push(e);
        }
    }

    /// All entries, summed by simplex, zeros dropped, appended to `out`; empties the column.
    /// Sorting the keys (equal simplices are then neighbours, whatever their coefficients) and
    /// summing neighbours is cheaper than popping one by one.
    fn drain_summed(&mut self, modulus: u32, out: &mut ReducedStore) {
        match self {
            Self::Wide(heap) => {
                let mut keys = std::mem::take(heap).into_vec();
                keys.sort_unstable();
                sum_neighbours(keys.into_iter().map(Self::unpack), modulus, out);
            }
            Self::Narrow { heap, layout } => {
                let mut keys = heap.take_all();
                keys.sort_unstable();
                let layout = *layout;
                sum_neighbours(keys.into_iter().map(|k| layout.unpack(!k)), modulus, out);
            }
        }
    }

    /// Sums the entries of each simplex and drops zeros, keeping the column's sum: bounds a
    /// working column that many additions filled with entries that cancel (at 50,000
    /// Levenshtein windows single columns received over 60 M entries).
    fn compact(&mut self, modulus: u32, scratch: &mut ReducedStore) {
        scratch.truncate(0);
        self.drain_summed(modulus, scratch);
        match self {
            Self::Wide(heap) => heap.extend(scratch.wide.iter().copied()),
            Self::Narrow { heap, .. } => {
                for &key in &scratch.narrow {
                    heap.push(!key);
                }
            }
        }
        scratch.truncate(0);
    }
}

/// Sums runs of entries of the same simplex, drops zeros, appends the rest to `out`.
fn sum_neighbours(entries: impl Iterator<Item = Entry>, modulus: u32, out: &mut ReducedStore) {
    let mut pending = Entry::NONE;
    for e in entries {
        if e.index == pending.index {
            pending.coefficient = (pending.coefficient + e.coefficient) % modulus;
            continue;
        }
        if !pending.is_none() && pending.coefficient != 0 {
            out.push(pending);
        }
        pending = e;
    }
    if !pending.is_none() && pending.coefficient != 0 {
        out.push(pending);
    }
}

/// The reduced coboundaries `R_j` kept by the reduction, entries packed back to back: narrow
/// keys (8 bytes) when the layout fits, wide ones (16 bytes) otherwise, within a memory budget.
struct ReducedStore {
    wide: Vec<u128>,
    narrow: Vec<u64>,
    layout: Option<NarrowLayout>,
    budget_bytes: usize,
}

impl ReducedStore {
    fn new(layout: Option<NarrowLayout>, budget_bytes: usize) -> Self {
        Self {
            wide: Vec::new(),
            narrow: Vec::new(),
            layout,
            budget_bytes,
        }
    }

    fn len(&self) -> usize {
        self.wide.len() + self.narrow.len()
    }

    /// Whether another `extra` entries fit in the budget.
    fn has_room(&self, extra: usize) -> bool {
        let width = if self.layout.is_some() { 8 } else { 16 };
        (self.len() + extra).saturating_mul(width) <= self.budget_bytes
    }

    fn truncate(&mut self, len: usize) {
        self.wide.truncate(len);
        self.narrow.truncate(len);
    }

    #[inline]
    fn push(&mut self, e: Entry) {
        match self.layout {
            Some(layout) => self.narrow.push(layout.pack(e)),
            None => self.wide.push(Column::pack(e)),
        }
    }

    /// Pushes entries `from..to` up to `horizon`, coefficients times `factor`, onto `column`.
    fn add_to(
        &self,
        from: usize,
        to: usize,
        factor: u32,
        modulus: u32,
        horizon: Value,
        column: &mut Column,
    ) {
        let scaled = |mut e: Entry| {
            e.coefficient = e.coefficient * factor % modulus;
            e
        };
        match self.layout {
            Some(layout) => {
                for &key in &self.narrow[from..to] {
                    let e = layout.unpack(key);
                    if e.diameter <= horizon {
                        column.push(scaled(e));
                    }
                }
            }
            None => {
                for &key in &self.wide[from..to] {
                    let e = Column::unpack(key);
                    if e.diameter <= horizon {
                        column.push(scaled(e));
                    }
                }
            }
        }
    }
}

/// Appends the entries of `column` summed by simplex, zeros dropped, to `out`; empties `column`.
fn sum_entries(column: &mut Vec<Entry>, modulus: u32, out: &mut Vec<Entry>) {
    column.sort_unstable_by_key(|e| e.index);
    let mut pending = Entry::NONE;
    for e in column.drain(..) {
        if e.index == pending.index {
            pending.coefficient = (pending.coefficient + e.coefficient) % modulus;
            continue;
        }
        if !pending.is_none() && pending.coefficient != 0 {
            out.push(pending);
        }
        pending = e;
    }
    if !pending.is_none() && pending.coefficient != 0 {
        out.push(pending);
    }
}

/// Sort order of columns to reduce: decreasing diameter, ties increasing index.
fn greater_diameter_or_smaller_index(a: &(Value, i64), b: &(Value, i64)) -> Ordering {
    b.0.total_cmp(&a.0).then(a.1.cmp(&b.1))
}

/// Memory for the reduced coboundaries kept (8 or 16 bytes an entry); columns that do not fit
/// are re-derived from V when added, as in Ripser (10,000 Levenshtein windows: 2.4 M entries
/// after two thirds of the columns; 50,000: 50 M after a third).
const MAX_STORED_BYTES: usize = 1 << 30;

#[cfg(test)]
thread_local! {
    /// Additions of columns re-derived from V on this thread (tests check the path is taken).
    static REDERIVED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Multiplicative hashing of simplex indices (the keys are already well spread integers).
#[derive(Default)]
struct IndexHasher(u64);

impl Hasher for IndexHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_i64(&mut self, i: i64) {
        self.0 = (i as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(29);
    }
}

/// Pivot (index) → (its coefficient, the column whose pivot it is).
type PivotMap = HashMap<i64, (u32, usize), BuildHasherDefault<IndexHasher>>;

/// Vertices of a simplex, largest first, in a fixed array.
#[derive(Debug, Clone, Copy)]
struct Vertices {
    v: [usize; MAX_DIM + 3],
    len: usize,
}

impl Vertices {
    fn as_slice(&self) -> &[usize] {
        &self.v[..self.len]
    }
}

struct Rips<'a, D> {
    dist: &'a D,
    n: usize,
    dim_max: usize,
    threshold: Value,
    modulus: u32,
    inverse: Vec<u32>,
    binomials: Binomials,
    keep_cocycles: bool,
    /// Memory budget of the reduced columns kept by [`Self::compute_pairs`].
    store_bytes: usize,
    /// Whether integer filtrations are reduced level by level.
    level_by_level: bool,
    /// For thresholds that keep few edges (Ripser's sparse mode): the 1-skeleton at the
    /// threshold as adjacency lists. Cofacets are then enumerated by merging the neighbour lists
    /// of a simplex's vertices (O(degree) per coboundary instead of O(n)), in the same
    /// decreasing-index order as the dense enumeration, so every pairing decision is the same.
    neighbors: Option<Neighbors>,
}

/// The 1-skeleton up to a threshold as compressed adjacency lists: the neighbours of `v` are
/// `entries[offsets[v]..offsets[v + 1]]`, in decreasing vertex order, each with its distance
/// to `v`.
struct Neighbors {
    offsets: Vec<usize>,
    entries: Vec<(u32, Value)>,
}

impl Neighbors {
    #[inline]
    fn of(&self, v: usize) -> &[(u32, Value)] {
        &self.entries[self.offsets[v]..self.offsets[v + 1]]
    }

    fn edge_count(&self) -> usize {
        self.entries.len() / 2
    }
}

/// State of Ripser's `simplex_coboundary_enumerator`: cofacets come in decreasing index order.
struct Coboundary {
    idx_below: i64,
    idx_above: i64,
    v: i64,
    k: i64,
    vertices: Vertices,
    simplex: Entry,
    /// Sparse mode: read positions in the neighbour lists of the simplex's vertices.
    positions: [usize; MAX_DIM + 3],
    /// Sparse mode: the common neighbour found by `cob_has_next`, and its largest distance to
    /// the simplex's vertices.
    found: (usize, Value),
}

/// State of Ripser's `simplex_boundary_enumerator`.
struct Boundary {
    idx_below: i64,
    idx_above: i64,
    j: i64,
    k: i64,
    dim: usize,
    simplex: Entry,
}

impl<D: DistanceMatrix> Rips<'_, D> {
    #[inline]
    fn b(&self, i: i64, k: i64) -> i64 {
        self.binomials.get(i, k)
    }

    /// Largest `v <= top` with `C(v, k) <= idx`.
    fn max_vertex(&self, idx: i64, k: i64, top: i64) -> i64 {
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

    fn simplex_vertices(&self, mut idx: i64, dim: usize) -> Vertices {
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

    fn compute_diameter(&self, index: i64, dim: usize) -> Value {
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

    fn coboundary(&self, simplex: Entry, dim: usize) -> Coboundary {
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
    fn cob_has_next(&self, c: &mut Coboundary, all_cofacets: bool) -> bool {
        match &self.neighbors {
            Some(neighbors) => Self::sparse_has_next(neighbors, c, all_cofacets),
            None => c.v >= c.k && (all_cofacets || self.b(c.v, c.k) > c.idx_below),
        }
    }

    /// Ripser's sparse `has_next`: the next common neighbour of all vertices (lists are in
    /// decreasing vertex order, so cofacets come in decreasing index order).
    fn sparse_has_next(neighbors: &Neighbors, c: &mut Coboundary, all_cofacets: bool) -> bool {
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
    fn sparse_next(&self, c: &mut Coboundary) -> Entry {
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
    fn cob_next(&self, c: &mut Coboundary) -> Entry {
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

    fn boundary(&self, simplex: Entry, dim: usize) -> Boundary {
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
    fn bd_next(&self, f: &mut Boundary) -> Entry {
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

    fn zero_pivot_facet(&self, simplex: Entry, dim: usize) -> Entry {
        let mut facets = self.boundary(simplex, dim);
        while facets.k >= 0 {
            let facet = self.bd_next(&mut facets);
            if facet.diameter == simplex.diameter {
                return facet;
            }
        }
        Entry::NONE
    }

    fn zero_pivot_cofacet(&self, simplex: Entry, dim: usize) -> Entry {
        let mut cofacets = self.coboundary(simplex, dim);
        while self.cob_has_next(&mut cofacets, true) {
            let cofacet = self.cob_next(&mut cofacets);
            if cofacet.diameter == simplex.diameter {
                return cofacet;
            }
        }
        Entry::NONE
    }

    fn zero_apparent_facet(&self, simplex: Entry, dim: usize) -> Entry {
        let facet = self.zero_pivot_facet(simplex, dim);
        if !facet.is_none() && self.zero_pivot_cofacet(facet, dim - 1).index == simplex.index {
            facet
        } else {
            Entry::NONE
        }
    }

    fn zero_apparent_cofacet(&self, simplex: Entry, dim: usize) -> Entry {
        let cofacet = self.zero_pivot_cofacet(simplex, dim);
        if !cofacet.is_none() && self.zero_pivot_facet(cofacet, dim + 1).index == simplex.index {
            cofacet
        } else {
            Entry::NONE
        }
    }

    fn is_in_zero_apparent_pair(&self, simplex: Entry, dim: usize) -> bool {
        !self.zero_apparent_cofacet(simplex, dim).is_none()
            || !self.zero_apparent_facet(simplex, dim).is_none()
    }

    /// Calls `visit` for every edge up to the threshold in filtration order: increasing
    /// diameter, ties decreasing index (Ripser sorts a reversed range).
    fn for_each_edge_in_order(&self, mut visit: impl FnMut(Value, i64)) {
        let edge_count = self.n * self.n.saturating_sub(1) / 2;
        if let (Some(neighbors), Some(max)) = (&self.neighbors, self.dist.integer_levels()) {
            // Integer lengths: a counting sort by level instead of a comparison sort (50,000
            // Levenshtein windows: 32 M edges). Rows from the top, each row's lower neighbours
            // in list order (decreasing), give decreasing indices within a level.
            let levels = max as usize + 1;
            let lower = |i: usize| {
                let list = neighbors.of(i);
                &list[list.partition_point(|&(j, _)| j as usize > i)..]
            };
            let level_of = |d: Value| (d as usize).min(levels - 1);
            let mut starts = vec![0usize; levels + 1];
            for i in 0..self.n {
                for &(_, d) in lower(i) {
                    starts[level_of(d) + 1] += 1;
                }
            }
            for level in 0..levels {
                starts[level + 1] += starts[level];
            }
            let mut order = vec![0i64; starts[levels]];
            let mut cursor = starts.clone();
            for i in (0..self.n).rev() {
                let row = self.b(i as i64, 2);
                for &(j, d) in lower(i) {
                    let slot = &mut cursor[level_of(d)];
                    order[*slot] = row + i64::from(j);
                    *slot += 1;
                }
            }
            for level in 0..levels {
                for &index in &order[starts[level]..starts[level + 1]] {
                    visit(level as Value, index);
                }
            }
        } else if let Some(neighbors) = &self.neighbors {
            let mut edges: Vec<(Value, i64)> = Vec::with_capacity(neighbors.edge_count());
            for i in 0..self.n {
                let row = self.b(i as i64, 2);
                edges.extend(
                    neighbors
                        .of(i)
                        .iter()
                        .filter(|&&(j, _)| (j as usize) < i)
                        .map(|&(j, d)| (d, row + i64::from(j))),
                );
            }
            use rayon::slice::ParallelSliceMut;
            edges.par_sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)));
            for (length, index) in edges {
                visit(length, index);
            }
        } else if let Some(max) = self.dist.integer_levels() {
            // Few distinct values: one scan per value instead of a sort of every edge.
            for level in 0..=max {
                let level = level as Value;
                if level > self.threshold {
                    break;
                }
                for index in (0..edge_count).rev() {
                    if self.dist.edge_length(index) == level {
                        visit(level, index as i64);
                    }
                }
            }
        } else {
            let mut edges: Vec<(Value, i64)> = (0..edge_count)
                .filter_map(|index| {
                    let length = self.dist.edge_length(index);
                    (length <= self.threshold).then_some((length, index as i64))
                })
                .collect();
            use rayon::slice::ParallelSliceMut;
            edges.par_sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)));
            for (length, index) in edges {
                visit(length, index);
            }
        }
    }

    /// H0 by union–find; returns the edges to reduce in dimension 1 (in reduction order) and,
    /// when higher dimensions follow, all edges in `simplices`.
    fn compute_dim_0_pairs(
        &self,
        simplices: &mut Vec<(Value, i64)>,
        bars: &mut Vec<Bar>,
    ) -> Vec<(Value, i64)> {
        let mut sets = UnionFind::new(self.n);
        let mut columns_to_reduce = Vec::new();
        // Edges that close a cycle, checked for apparent pairs in parallel batches (the check
        // does not depend on the union–find, and rayon's collect keeps the order).
        let mut candidates: Vec<(Value, i64)> = Vec::new();
        const BATCH: usize = 1 << 18;
        let flush = |candidates: &mut Vec<(Value, i64)>, out: &mut Vec<(Value, i64)>| {
            use rayon::prelude::*;
            let kept: Vec<(Value, i64)> = candidates
                .par_iter()
                .with_min_len(256)
                .copied()
                .filter(|&(diameter, index)| {
                    let edge = Entry {
                        diameter,
                        index,
                        coefficient: 1,
                    };
                    self.zero_apparent_cofacet(edge, 1).is_none()
                })
                .collect();
            out.extend(kept);
            candidates.clear();
        };
        let keep_edges = self.dim_max >= 2;
        self.for_each_edge_in_order(|length, index| {
            if keep_edges {
                simplices.push((length, index));
            }
            let vertices = self.simplex_vertices(index, 1);
            let u = sets.find(vertices.v[0]);
            let v = sets.find(vertices.v[1]);
            if u != v {
                if length != 0.0 {
                    bars.push(Bar(0.0, Some(length)));
                }
                sets.link(u, v);
            } else if self.dim_max > 0 {
                candidates.push((length, index));
                if candidates.len() >= BATCH {
                    flush(&mut candidates, &mut columns_to_reduce);
                }
            }
        });
        flush(&mut candidates, &mut columns_to_reduce);
        columns_to_reduce.reverse();
        for i in 0..self.n {
            if sets.find(i) == i {
                bars.push(Bar(0.0, None));
            }
        }
        columns_to_reduce
    }

    fn assemble_columns_to_reduce(
        &self,
        simplices: &mut Vec<(Value, i64)>,
        pivot_column_index: &PivotMap,
        dim: usize,
    ) -> Vec<(Value, i64)> {
        let facet_dim = dim - 1;
        let mut columns_to_reduce = Vec::new();
        let mut next_simplices = Vec::new();
        for &(diameter, index) in simplices.iter() {
            let simplex = Entry {
                diameter,
                index,
                coefficient: 1,
            };
            let mut cofacets = self.coboundary(simplex, facet_dim);
            while self.cob_has_next(&mut cofacets, false) {
                let cofacet = self.cob_next(&mut cofacets);
                if cofacet.diameter <= self.threshold {
                    if dim < self.dim_max {
                        next_simplices.push((cofacet.diameter, cofacet.index));
                    }
                    if !self.is_in_zero_apparent_pair(cofacet, dim)
                        && !pivot_column_index.contains_key(&cofacet.index)
                    {
                        columns_to_reduce.push((cofacet.diameter, cofacet.index));
                    }
                }
            }
        }
        *simplices = next_simplices;
        use rayon::slice::ParallelSliceMut;
        columns_to_reduce.par_sort_unstable_by(greater_diameter_or_smaller_index);
        columns_to_reduce
    }

    fn pop_pivot(&self, column: &mut Column) -> Entry {
        let mut pivot = Entry::NONE;
        while let Some(top) = column.peek() {
            if pivot.coefficient == 0 {
                pivot = top;
            } else if top.index != pivot.index {
                return pivot;
            } else {
                pivot.coefficient = (pivot.coefficient + top.coefficient) % self.modulus;
            }
            column.pop();
        }
        if pivot.coefficient == 0 {
            Entry::NONE
        } else {
            pivot
        }
    }

    fn get_pivot(&self, column: &mut Column) -> Entry {
        let result = self.pop_pivot(column);
        if !result.is_none() {
            column.push(result);
        }
        result
    }

    /// Adds `simplex` to V's working column and its coboundary up to `horizon` to the working
    /// coboundary.
    fn add_simplex_coboundary(
        &self,
        simplex: Entry,
        dim: usize,
        horizon: Value,
        working_reduction_column: &mut Vec<Entry>,
        working_coboundary: &mut Column,
    ) {
        working_reduction_column.push(simplex);
        let mut cofacets = self.coboundary(simplex, dim);
        while self.cob_has_next(&mut cofacets, true) {
            let cofacet = self.cob_next(&mut cofacets);
            if cofacet.diameter <= horizon {
                working_coboundary.push(cofacet);
            }
        }
    }

    /// Appends the cofacets of `simplex` with diameter in `(above, upto]` to `out`.
    fn push_coboundary(
        &self,
        simplex: Entry,
        dim: usize,
        (above, upto): (Value, Value),
        out: &mut Vec<Entry>,
    ) {
        let mut cofacets = self.coboundary(simplex, dim);
        while self.cob_has_next(&mut cofacets, true) {
            let cofacet = self.cob_next(&mut cofacets);
            if cofacet.diameter <= upto && cofacet.diameter > above {
                out.push(cofacet);
            }
        }
    }

    /// Ripser's `init_coboundary_and_get_pivot`, with the working coboundary holding the
    /// cofacets up to `horizon` (the emergent-pair check sees all of them).
    fn init_coboundary_and_get_pivot(
        &self,
        simplex: Entry,
        working_coboundary: &mut Column,
        dim: usize,
        horizon: Value,
        pivot_column_index: &PivotMap,
        cofacet_entries: &mut Vec<Entry>,
    ) -> Entry {
        let mut check_for_emergent_pair = true;
        cofacet_entries.clear();
        let mut cofacets = self.coboundary(simplex, dim);
        while self.cob_has_next(&mut cofacets, true) {
            let cofacet = self.cob_next(&mut cofacets);
            if cofacet.diameter <= self.threshold {
                if cofacet.diameter <= horizon {
                    cofacet_entries.push(cofacet);
                }
                if check_for_emergent_pair && simplex.diameter == cofacet.diameter {
                    if !pivot_column_index.contains_key(&cofacet.index)
                        && self.zero_apparent_facet(cofacet, dim + 1).is_none()
                    {
                        return cofacet;
                    }
                    check_for_emergent_pair = false;
                }
            }
        }
        working_coboundary.extend(cofacet_entries.iter().copied());
        self.get_pivot(working_coboundary)
    }

    fn compute_pairs(
        &self,
        columns_to_reduce: &[(Value, i64)],
        pivot_column_index: &mut PivotMap,
        dim: usize,
        bars: &mut Vec<Bar>,
        cocycles: &mut Vec<Cocycle>,
    ) {
        let want_cocycles = self.keep_cocycles && dim == 1;
        // The reduction matrix V without its diagonal, column by column.
        let mut reduction_entries: Vec<Entry> = Vec::new();
        let mut reduction_starts: Vec<usize> = Vec::with_capacity(columns_to_reduce.len() + 1);
        let layout = self.dist.integer_levels().and_then(|max| {
            NarrowLayout::new(max, self.b(self.n as i64, dim as i64 + 2), self.modulus)
        });
        // V's working column is only ever read whole at the end: a plain list, summed then.
        let mut working_reduction_column: Vec<Entry> = Vec::new();
        let mut working_coboundary = Column::new(layout);
        let mut cofacet_entries = Vec::new();
        let mut cocycle_scratch: Vec<Entry> = Vec::new();
        // The reduced coboundary R_j = δV_j of each finished column, summed and sorted, when it
        // fits (packed heap keys). Adding column j then pushes |R_j| entries instead of
        // recomputing the coboundary of every simplex of V_j (most of which cancel); the sum is
        // the same, so every pivot and pairing is unchanged.
        let mut reduced_keys = ReducedStore::new(layout, self.store_bytes);
        let mut reduced_at: Vec<Option<(usize, usize)>> =
            Vec::with_capacity(columns_to_reduce.len());
        let mut reduced_at_once: Option<usize> = None;
        let mut rederived_columns = 0usize;
        // Working columns are compacted when they outgrow twice their size after the last
        // compaction (and this floor).
        const COMPACT_FLOOR: usize = 1 << 20;
        let mut compact_scratch = ReducedStore::new(layout, usize::MAX);
        let mut compactions = 0usize;
        // Level by level (integer filtrations): a column's working coboundary holds only the
        // entries up to its horizon, the level of its current pivot. Every entry below it sums
        // to zero and an added column's entries start at that pivot, so the pivot is the same
        // as with the whole coboundary; when the entries up to the horizon cancel, the next
        // level of δ(V) is enumerated from V. Columns whose pivot lies a few levels above
        // their own no longer carry the (much longer) rest of every column they add:
        // 50,000 Levenshtein windows had columns born at 3 that died at 4 after 85 additions
        // holding 12 M entries.
        let level_lazy =
            self.level_by_level && layout.is_some() && self.dist.integer_levels().is_some();
        let mut band_column: Vec<Entry> = Vec::new();
        let mut band_entries: Vec<Entry> = Vec::new();
        let mut raises = 0usize;
        // Statistics for the progress log: additions, entries pushed, largest working column.
        let mut additions = 0usize;
        let mut pushed = 0usize;
        let mut largest = 0usize;
        let mut rederived: Vec<Entry> = Vec::new();
        let mut rederived_sum: Vec<Entry> = Vec::new();

        let started = std::time::Instant::now();
        for (column_index, &(diameter, index)) in columns_to_reduce.iter().enumerate() {
            if column_index % (1 << 14) == 0 && column_index > 0 {
                tracing::debug!(
                    "rips: H{dim}: {column_index} of {} columns after {:.2?}; {} reduced \
                     entries stored, {} V entries; {additions} additions pushing {pushed} \
                     entries, largest working column {largest}, {compactions} compactions, {raises} level raises",
                    columns_to_reduce.len(),
                    started.elapsed(),
                    reduced_keys.len(),
                    reduction_entries.len()
                );
            }
            reduced_at.push(None);
            reduction_starts.push(reduction_entries.len());
            let column_to_reduce = Entry {
                diameter,
                index,
                coefficient: 1,
            };
            working_reduction_column.clear();
            working_coboundary.clear();
            let mut compact_at = COMPACT_FLOOR;
            let mut horizon = if level_lazy { diameter } else { self.threshold };
            let mut pivot = self.init_coboundary_and_get_pivot(
                column_to_reduce,
                &mut working_coboundary,
                dim,
                horizon,
                pivot_column_index,
                &mut cofacet_entries,
            );
            loop {
                if pivot.is_none() && horizon + 1.0 <= self.threshold {
                    // Everything up to the horizon cancelled: the next level of δ(V).
                    raises += 1;
                    let above = horizon;
                    horizon += 1.0;
                    band_column.clear();
                    sum_entries(
                        &mut working_reduction_column,
                        self.modulus,
                        &mut band_column,
                    );
                    working_reduction_column.extend_from_slice(&band_column);
                    band_entries.clear();
                    for &simplex in std::iter::once(&column_to_reduce).chain(&band_column) {
                        self.push_coboundary(simplex, dim, (above, horizon), &mut band_entries);
                    }
                    working_coboundary.extend(band_entries.drain(..));
                    pivot = self.get_pivot(&mut working_coboundary);
                    continue;
                }
                if pivot.is_none() {
                    bars.push(Bar(diameter, None));
                    if want_cocycles {
                        cocycle_scratch.clear();
                        sum_entries(
                            &mut working_reduction_column,
                            self.modulus,
                            &mut cocycle_scratch,
                        );
                        cocycles.push(self.make_cocycle(
                            Bar(diameter, None),
                            column_to_reduce,
                            &cocycle_scratch,
                        ));
                    }
                    break;
                }
                if let Some(&(other_coefficient, column_to_add)) =
                    pivot_column_index.get(&pivot.index)
                {
                    let factor = self.modulus
                        - pivot.coefficient * self.inverse[other_coefficient as usize]
                            % self.modulus;
                    let (add_diameter, add_index) = columns_to_reduce[column_to_add];
                    additions += 1;
                    largest = largest.max(working_coboundary.len());
                    if working_coboundary.len() > compact_at {
                        working_coboundary.compact(self.modulus, &mut compact_scratch);
                        compact_at = (2 * working_coboundary.len()).max(COMPACT_FLOOR);
                        compactions += 1;
                    }
                    let start = reduction_starts[column_to_add];
                    let end = reduction_starts
                        .get(column_to_add + 1)
                        .copied()
                        .unwrap_or(reduction_entries.len());
                    if reduced_at[column_to_add].is_none() && end > start {
                        // Not stored (the store was full when it finished): R_j = δ(σ_j) +
                        // Σ δ(V_j), summed once here and kept if there is room now. Pushing the
                        // coboundaries one by one would put most entries before the current
                        // pivot (they cancel in the sum), out of the radix heap's order.
                        rederived_columns += 1;
                        rederived.clear();
                        self.push_coboundary(
                            Entry {
                                diameter: add_diameter,
                                index: add_index,
                                coefficient: 1,
                            },
                            dim,
                            (Value::NEG_INFINITY, horizon),
                            &mut rederived,
                        );
                        for &entry in &reduction_entries[start..end] {
                            self.push_coboundary(
                                entry,
                                dim,
                                (Value::NEG_INFINITY, horizon),
                                &mut rederived,
                            );
                        }
                        let from = reduced_keys.len();
                        sum_entries(&mut rederived, self.modulus, &mut rederived_sum);
                        for e in rederived_sum.drain(..) {
                            reduced_keys.push(e);
                        }
                        if reduced_keys.has_room(0) {
                            reduced_at[column_to_add] = Some((from, reduced_keys.len()));
                        } else {
                            // No room: use it once, from the end of the store.
                            reduced_at_once = Some(from);
                        }
                    }
                    let stored = reduced_at[column_to_add].or_else(|| {
                        reduced_at_once
                            .take()
                            .map(|from| (from, reduced_keys.len()))
                    });
                    if let Some((from, to)) = stored {
                        // V_j to the reduction column, the stored R_j to the coboundary.
                        let scaled = |mut e: Entry| {
                            e.coefficient = e.coefficient * factor % self.modulus;
                            e
                        };
                        working_reduction_column.push(Entry {
                            diameter: add_diameter,
                            index: add_index,
                            coefficient: factor,
                        });
                        for &entry in &reduction_entries[start..end] {
                            working_reduction_column.push(scaled(entry));
                        }
                        pushed += to - from;
                        reduced_keys.add_to(
                            from,
                            to,
                            factor,
                            self.modulus,
                            horizon,
                            &mut working_coboundary,
                        );
                        if reduced_at[column_to_add].is_none() {
                            reduced_keys.truncate(from);
                        }
                        pivot = self.get_pivot(&mut working_coboundary);
                        continue;
                    }
                    // add_coboundary: the other column's simplex, then its V entries.
                    self.add_simplex_coboundary(
                        Entry {
                            diameter: add_diameter,
                            index: add_index,
                            coefficient: factor,
                        },
                        dim,
                        horizon,
                        &mut working_reduction_column,
                        &mut working_coboundary,
                    );
                    for &entry in &reduction_entries[start..end] {
                        let mut simplex = entry;
                        simplex.coefficient = simplex.coefficient * factor % self.modulus;
                        self.add_simplex_coboundary(
                            simplex,
                            dim,
                            horizon,
                            &mut working_reduction_column,
                            &mut working_coboundary,
                        );
                    }
                    pivot = self.get_pivot(&mut working_coboundary);
                } else {
                    let mut e = self.zero_apparent_facet(pivot, dim + 1);
                    if !e.is_none() {
                        e.coefficient = self.modulus - e.coefficient;
                        self.add_simplex_coboundary(
                            e,
                            dim,
                            horizon,
                            &mut working_reduction_column,
                            &mut working_coboundary,
                        );
                        pivot = self.get_pivot(&mut working_coboundary);
                        continue;
                    }
                    let death = pivot.diameter;
                    let emitted = death > diameter;
                    if emitted {
                        bars.push(Bar(diameter, Some(death)));
                    }
                    pivot_column_index.insert(pivot.index, (pivot.coefficient, column_index));
                    // Without additions (an empty V list; also every emergent pair, whose heap
                    // is empty) R_j = δσ_j: re-deriving it costs one coboundary and pushes the
                    // same entries, so only columns that needed additions are stored.
                    if !working_reduction_column.is_empty()
                        && working_coboundary.len() > 0
                        && reduced_keys.has_room(1)
                    {
                        let from = reduced_keys.len();
                        working_coboundary.drain_summed(self.modulus, &mut reduced_keys);
                        if reduced_keys.has_room(0) {
                            reduced_at[column_index] = Some((from, reduced_keys.len()));
                        } else {
                            reduced_keys.truncate(from);
                        }
                    }
                    cocycle_scratch.clear();
                    let from = reduction_entries.len();
                    sum_entries(
                        &mut working_reduction_column,
                        self.modulus,
                        &mut reduction_entries,
                    );
                    if want_cocycles && emitted {
                        cocycle_scratch.extend_from_slice(&reduction_entries[from..]);
                        cocycles.push(self.make_cocycle(
                            Bar(diameter, Some(death)),
                            column_to_reduce,
                            &cocycle_scratch,
                        ));
                    }
                    break;
                }
            }
        }
        tracing::debug!(
            "rips: H{dim}: {} columns reduced, {} reduced entries stored, {} V entries, {} \
             additions re-derived from V",
            columns_to_reduce.len(),
            reduced_keys.len(),
            reduction_entries.len(),
            rederived_columns
        );
        #[cfg(test)]
        REDERIVED.with(|count| count.set(count.get() + rederived_columns));
    }

    /// The cocycle `V_j = e_j + Σ (V entries)` of an H1 column as explicit edges.
    fn make_cocycle(&self, bar: Bar, column: Entry, rest: &[Entry]) -> Cocycle {
        let mut summed: HashMap<i64, u32, BuildHasherDefault<IndexHasher>> = HashMap::default();
        for e in std::iter::once(&column).chain(rest) {
            let c = summed.entry(e.index).or_insert(0);
            *c = (*c + e.coefficient) % self.modulus;
        }
        let mut entries: Vec<CocycleEntry> = summed
            .into_iter()
            .filter(|&(_, c)| c != 0)
            .map(|(index, c)| {
                let v = self.simplex_vertices(index, 1);
                CocycleEntry {
                    i: v.v[0] as u32,
                    j: v.v[1] as u32,
                    coefficient: c as u16,
                }
            })
            .collect();
        entries.sort_unstable_by_key(|e| (e.i, e.j));
        Cocycle { bar, entries }
    }
}

/// Neighbour lists within `threshold` (Ripser's sparse distance matrix), built when they are
/// small enough to pay: at most a quarter of all pairs (a merge of two lists then costs at most
/// about n/2 steps, against n for the dense enumeration) and at most 48 M edges (768 MiB; the
/// dense enumeration of that many edges' coboundaries would take hours anyway).
fn neighbor_lists<D: DistanceMatrix>(dist: &D, threshold: Value) -> Option<Neighbors> {
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

/// Ripser's union–find with union by rank and path compression.
struct UnionFind {
    parent: Vec<usize>,
    rank: Vec<u8>,
}

impl UnionFind {
    fn new(n: usize) -> Self {
        Self {
            parent: (0..n).collect(),
            rank: vec![0; n],
        }
    }

    fn find(&mut self, x: usize) -> usize {
        let mut root = x;
        while self.parent[root] != root {
            root = self.parent[root];
        }
        let mut y = x;
        while self.parent[y] != root {
            let next = self.parent[y];
            self.parent[y] = root;
            y = next;
        }
        root
    }

    fn link(&mut self, x: usize, y: usize) {
        let (x, y) = (self.find(x), self.find(y));
        if x == y {
            return;
        }
        if self.rank[x] > self.rank[y] {
            self.parent[y] = x;
        } else {
            self.parent[x] = y;
            if self.rank[x] == self.rank[y] {
                self.rank[y] = self.rank[y].saturating_add(1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::LowerDistanceMatrix;

    fn circle(n: usize) -> LowerDistanceMatrix {
        let points: Vec<Vec<f64>> = (0..n)
            .map(|k| {
                let a = std::f64::consts::TAU * k as f64 / n as f64;
                vec![a.cos(), a.sin()]
            })
            .collect();
        LowerDistanceMatrix::from_points(&points).unwrap()
    }

    #[test]
    fn a_circle_has_one_long_h1_bar_and_one_component() {
        let result = rips_persistence(
            &circle(24),
            &RipsOptions {
                cocycles: true,
                ..RipsOptions::default()
            },
        )
        .unwrap();
        let dims = &result.barcode.dims;
        assert_eq!(dims[0].iter().filter(|b| b.1.is_none()).count(), 1);
        assert_eq!(dims[0].len(), 24);
        assert_eq!(dims[1].len(), 1, "{:?}", dims[1]);
        let bar = dims[1][0];
        assert!(bar.0 < 0.3 && bar.1.unwrap() > 1.5, "{bar:?}");
        assert_eq!(result.cocycles.len(), 1);
        assert!(!result.cocycles[0].entries.is_empty());
    }

    #[test]
    fn binomials_and_vertices_round_trip() {
        let m = circle(10);
        let engine = Rips {
            dist: &m,
            n: 10,
            dim_max: 2,
            threshold: 10.0,
            modulus: 2,
            inverse: multiplicative_inverses(2),
            binomials: Binomials::new(10, 4).unwrap(),
            keep_cocycles: false,
            store_bytes: MAX_STORED_BYTES,
            level_by_level: true,
            neighbors: None,
        };
        // {7, 4, 1}: C(7,3) + C(4,2) + C(1,1) = 35 + 6 + 1.
        let v = engine.simplex_vertices(42, 2);
        assert_eq!(v.as_slice(), &[7, 4, 1]);
        assert!(Binomials::new(100_000, 12).is_err());
        assert_eq!(multiplicative_inverses(47)[5] * 5 % 47, 1);
    }

    /// Windows of a synthetic trace with nested loops and noise: a Levenshtein metric with the
    /// ties of real ones.
    fn loop_windows(records: usize, seed: u64) -> crate::metric::ByteDistanceMatrix {
        let mut state = seed;
        let mut symbols = Vec::with_capacity(records);
        let mut k = 0u32;
        while symbols.len() < records {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let noise = (state >> 33).is_multiple_of(5);
            symbols.push(if noise {
                100 + (state >> 40) as u32 % 1000
            } else {
                k % 61
            });
            k += 1;
        }
        let windows = crate::levenshtein::make_windows(&symbols, 10).unwrap();
        crate::levenshtein::window_distances(&windows, 1100).unwrap()
    }

    fn sorted_bars(bars: &[Bar]) -> Vec<(f32, Option<f32>)> {
        let mut v: Vec<_> = bars.iter().map(|b| (b.0, b.1)).collect();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v
    }

    #[test]
    fn cone_cut_and_sparse_lists_change_nothing() {
        let m = loop_windows(500, 7);
        // Both shortcuts must really be taken on this input.
        let radius = enclosing_radius(&m);
        let (below, _) = largest_length_below(&m, radius).unwrap();
        assert!(neighbor_lists(&m, below).is_some(), "{} windows", m.size());
        let options = RipsOptions {
            max_dim: 1,
            modulus: 3,
            cocycles: true,
            ..RipsOptions::default()
        };
        let plain = persistence_with(
            &m,
            &options,
            Shortcuts {
                cone_cut: false,
                sparse: false,
                ..Shortcuts::ALL
            },
        )
        .unwrap();
        assert!(plain.barcode.dims[1].len() > 3);
        for shortcuts in [
            Shortcuts::ALL,
            Shortcuts {
                cone_cut: true,
                sparse: false,
                ..Shortcuts::ALL
            },
            Shortcuts {
                cone_cut: false,
                sparse: true,
                ..Shortcuts::ALL
            },
        ] {
            let fast = persistence_with(&m, &options, shortcuts).unwrap();
            // Same bars in the same (Ripser's) order, H0 included.
            assert_eq!(fast.barcode, plain.barcode, "{shortcuts:?}");
            assert_eq!(fast.threshold, plain.threshold);
            // One cocycle per H1 bar, each a cocycle mod p on the triangles present before its
            // death (the representative may differ; the class may not).
            assert_eq!(fast.cocycles.len(), fast.barcode.dims[1].len());
            for cocycle in &fast.cocycles {
                assert_cocycle(&m, cocycle, 3);
            }
        }
        // The f32 copy of the metric takes the wide heap keys; same bars.
        let wide = rips_persistence(&m.to_f32(), &options).unwrap();
        for dim in 0..=1 {
            assert_eq!(
                sorted_bars(&wide.barcode.dims[dim]),
                sorted_bars(&plain.barcode.dims[dim])
            );
        }
        // Reduced columns that do not fit in the store are re-derived from V when added: the
        // same sums, so the same pairs and the same cocycles, with no room at all or a little
        // (narrow and wide keys).
        let full = rips_persistence(&m, &options).unwrap();
        for store_bytes in [0, 1 << 12, 1 << 16] {
            let small_store = Shortcuts {
                store_bytes,
                ..Shortcuts::ALL
            };
            REDERIVED.with(|count| count.set(0));
            let narrow = persistence_with(&m, &options, small_store).unwrap();
            assert_eq!(narrow, full, "store of {store_bytes} bytes");
            if store_bytes == 0 {
                assert!(REDERIVED.with(std::cell::Cell::get) > 0);
            }
            let wide_small = persistence_with(&m.to_f32(), &options, small_store).unwrap();
            assert_eq!(wide_small, wide, "store of {store_bytes} bytes, wide keys");
        }
        // Level by level or whole columns: the same pivots and the same V, so the same
        // result, cocycles included; with a small store too (re-derived columns).
        for store_bytes in [MAX_STORED_BYTES, 1 << 12] {
            let whole = Shortcuts {
                level_by_level: false,
                store_bytes,
                ..Shortcuts::ALL
            };
            let by_level = Shortcuts {
                store_bytes,
                ..Shortcuts::ALL
            };
            assert_eq!(
                persistence_with(&m, &options, whole).unwrap(),
                persistence_with(&m, &options, by_level).unwrap()
            );
        }
        // Dimension 2 (the sparse enumeration of new simplices), sparse against dense.
        let options = RipsOptions {
            max_dim: 2,
            ..options
        };
        let sparse = rips_persistence(&m, &options).unwrap();
        let dense = persistence_with(
            &m,
            &options,
            Shortcuts {
                cone_cut: true,
                sparse: false,
                ..Shortcuts::ALL
            },
        )
        .unwrap();
        assert_eq!(sparse.barcode, dense.barcode);
        assert_eq!(sparse.barcode.dims[1], plain.barcode.dims[1]);
    }

    /// The edge collapse keeps both barcodes (as multisets: tied bars may come in another
    /// order) and its cocycles, extended back, are cocycles of the original complex.
    #[test]
    fn edge_collapse_keeps_barcodes_and_extends_cocycles() {
        let m = loop_windows(700, 11);
        let options = RipsOptions {
            max_dim: 1,
            modulus: 5,
            cocycles: true,
            ..RipsOptions::default()
        };
        let plain = persistence_with(&m, &options, Shortcuts::ALL).unwrap();
        assert!(plain.collapse.is_none(), "below the size gate");
        let collapsing = Shortcuts {
            collapse_min_edges: 0,
            ..Shortcuts::ALL
        };
        let collapsed = persistence_with(&m, &options, collapsing).unwrap();
        let log = collapsed.collapse.as_ref().expect("collapsed");
        assert!(log.removed > log.edges / 10, "{log:?}");
        assert!(log.delayed > 0);
        assert!(plain.barcode.dims[1].len() > 10);
        for dim in 0..=1 {
            assert_eq!(
                sorted_bars(&collapsed.barcode.dims[dim]),
                sorted_bars(&plain.barcode.dims[dim]),
                "H{dim}"
            );
        }
        assert_eq!(collapsed.threshold, plain.threshold);
        // Also below the cone, with a threshold inside the filtration, and without the cone
        // cut (the collapse then runs up to the enclosing radius).
        for (threshold, cone_cut) in [(Some(4.0), true), (None, false)] {
            let options = RipsOptions {
                threshold,
                ..options
            };
            let a = persistence_with(
                &m,
                &options,
                Shortcuts {
                    cone_cut,
                    ..Shortcuts::ALL
                },
            )
            .unwrap();
            let b = persistence_with(
                &m,
                &options,
                Shortcuts {
                    cone_cut,
                    ..collapsing
                },
            )
            .unwrap();
            assert!(b.collapse.is_some());
            for dim in 0..=1 {
                assert_eq!(
                    sorted_bars(&a.barcode.dims[dim]),
                    sorted_bars(&b.barcode.dims[dim])
                );
            }
        }
        // Extended cocycles: δα = 0 mod p on every triangle of the original complex at ε,
        // for ε at the birth and inside each bar; the restriction to the collapsed complex is
        // the computed cocycle.
        let mut extended_edges = 0;
        for (k, cocycle) in collapsed.cocycles.iter().enumerate() {
            let death = cocycle.bar.1.unwrap_or(collapsed.threshold);
            for epsilon in [cocycle.bar.0, (cocycle.bar.0 + death) / 2.0] {
                if epsilon >= death {
                    continue;
                }
                let lifted = collapsed.lifted_cocycle_at(k, 5, epsilon);
                assert!(!lifted.is_empty());
                let outside = lifted
                    .iter()
                    .filter(|&&(i, j, _)| !cocycle.entries.iter().any(|e| e.i == i && e.j == j))
                    .count();
                extended_edges += outside;
                assert_integer_cocycle_mod(&m, &lifted, epsilon, 5);
            }
        }
        assert!(extended_edges > 0, "no cocycle needed an extension");
    }

    /// An integer metric on a circle of 90 points (hop distance / 3, rounded up: levels 1..15):
    /// with and without the collapse, the longest bar gives the same circular coordinate up to
    /// rotation and reflection.
    #[test]
    fn edge_collapse_gives_the_same_circular_coordinates() {
        let n = 90usize;
        let mut entries = Vec::new();
        for i in 0..n {
            for j in 0..i {
                let hop = (i - j).min(n - (i - j));
                entries.push(hop.div_ceil(3) as u8);
            }
        }
        let m = crate::metric::ByteDistanceMatrix::from_lower_triangle(entries).unwrap();
        let options = RipsOptions {
            cocycles: true,
            ..RipsOptions::default()
        };
        let plain = persistence_with(&m, &options, Shortcuts::ALL).unwrap();
        let collapsed = persistence_with(
            &m,
            &options,
            Shortcuts {
                collapse_min_edges: 0,
                ..Shortcuts::ALL
            },
        )
        .unwrap();
        let log = collapsed.collapse.as_ref().unwrap();
        assert!(log.removed > 0 && log.segments() > 0, "{log:?}");
        assert_eq!(
            sorted_bars(&collapsed.barcode.dims[1]),
            sorted_bars(&plain.barcode.dims[1])
        );
        let longest = |r: &RipsResult| {
            (0..r.barcode.dims[1].len())
                .max_by(|&a, &b| {
                    r.barcode.dims[1][a]
                        .persistence()
                        .total_cmp(&r.barcode.dims[1][b].persistence())
                })
                .unwrap()
        };
        let (kp, kc) = (longest(&plain), longest(&collapsed));
        let bar = plain.barcode.dims[1][kp];
        assert_eq!(bar, collapsed.barcode.dims[1][kc]);
        assert!(bar.persistence() >= 5.0, "{bar:?}");
        let epsilon = (bar.0 + bar.1.unwrap()) / 2.0;
        let a = crate::circular::circular_coordinates_of_lift(
            &m,
            plain.lifted_cocycle_at(kp, 47, epsilon).into_iter(),
            epsilon,
        );
        let lifted = collapsed.lifted_cocycle_at(kc, 47, epsilon);
        assert_integer_cocycle_mod(&m, &lifted, epsilon, 47);
        let b = crate::circular::circular_coordinates_of_lift(&m, lifted.into_iter(), epsilon);
        assert!(a.lift_is_cocycle && b.lift_is_cocycle);
        let mut ta = a.theta.clone();
        ta.push(ta[0]);
        let mut tb = b.theta.clone();
        tb.push(tb[0]);
        assert!((crate::circular::winding_number(&ta).abs() - 1.0).abs() < 1e-6);
        assert!((crate::circular::winding_number(&tb).abs() - 1.0).abs() < 1e-6);
        // θ_b = ±θ_a + shift: the differences of consecutive points agree up to sign.
        let steps = |t: &[f64]| -> Vec<f64> {
            t.windows(2)
                .map(|w| {
                    let d = w[1] - w[0];
                    d - d.round()
                })
                .collect()
        };
        let (sa, sb) = (steps(&ta), steps(&tb));
        let same = sa.iter().zip(&sb).all(|(x, y)| (x - y).abs() < 1e-6);
        let mirrored = sa.iter().zip(&sb).all(|(x, y)| (x + y).abs() < 1e-6);
        assert!(same || mirrored, "{sa:?}\n{sb:?}");
    }

    /// δα = 0 mod p on every triangle of the complex at `epsilon` touching the support.
    fn assert_integer_cocycle_mod(
        m: &crate::metric::ByteDistanceMatrix,
        alpha: &[(u32, u32, i64)],
        epsilon: Value,
        p: i64,
    ) {
        let map: HashMap<(u32, u32), i64> = alpha.iter().map(|&(i, j, a)| ((i, j), a)).collect();
        let a = |x: u32, y: u32| -> i64 {
            if x > y {
                map.get(&(x, y)).copied().unwrap_or(0)
            } else {
                -map.get(&(y, x)).copied().unwrap_or(0)
            }
        };
        let n = m.size() as u32;
        for &(i, j, _) in alpha {
            if m.distance(i as usize, j as usize) > epsilon {
                continue;
            }
            for k in 0..n {
                if k == i || k == j {
                    continue;
                }
                let d = m
                    .distance(i as usize, k as usize)
                    .max(m.distance(j as usize, k as usize));
                if d > epsilon {
                    continue;
                }
                let delta = a(i, j) + a(j, k) + a(k, i);
                assert_eq!(delta.rem_euclid(p), 0, "triangle {i} {j} {k} at {epsilon}");
            }
        }
    }

    /// δα = 0 mod p on every triangle with diameter below the cocycle's death.
    fn assert_cocycle(m: &crate::metric::ByteDistanceMatrix, cocycle: &Cocycle, p: u32) {
        let below = cocycle.bar.1.unwrap_or(Value::INFINITY);
        let mut alpha = HashMap::new();
        for e in &cocycle.entries {
            alpha.insert((e.i, e.j), u32::from(e.coefficient));
        }
        let a = |x: u32, y: u32| alpha.get(&(x.max(y), x.min(y))).copied().unwrap_or(0);
        let n = m.size() as u32;
        for &(i, j) in alpha.keys() {
            for k in 0..n {
                if k == i || k == j {
                    continue;
                }
                let d = m
                    .distance(i as usize, j as usize)
                    .max(m.distance(i as usize, k as usize))
                    .max(m.distance(j as usize, k as usize));
                if d >= below {
                    continue;
                }
                let mut t = [i, j, k];
                t.sort_unstable_by(|x, y| y.cmp(x));
                let [x, y, z] = t;
                let delta = (a(y, z) + (p - a(x, z)) + a(x, y)) % p;
                assert_eq!(delta, 0, "triangle {t:?} of {:?}", cocycle.bar);
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// The radix heap pops what a binary min-heap pops, also when keys below the last
        /// minimum are pushed (they go to its side heap).
        #[test]
        fn radix_heap_is_a_min_heap(
            operations in proptest::collection::vec((0u8..3, 0u64..1 << 40), 1..300)
        ) {
            let mut radix = RadixHeap::default();
            let mut reference = BinaryHeap::new();
            for (op, key) in operations {
                if op < 2 {
                    radix.push(key);
                    reference.push(std::cmp::Reverse(key));
                } else {
                    proptest::prop_assert_eq!(radix.peek_min(), reference.peek().map(|r| r.0));
                    radix.pop_min();
                    reference.pop();
                }
                proptest::prop_assert_eq!(radix.len(), reference.len());
            }
            let mut rest = radix.take_all();
            rest.sort_unstable();
            let mut want: Vec<u64> = reference.into_iter().map(|r| r.0).collect();
            want.sort_unstable();
            proptest::prop_assert_eq!(rest, want);
        }
    }

    #[test]
    fn rejects_bad_parameters() {
        let m = circle(5);
        let opts = RipsOptions {
            modulus: 4,
            ..RipsOptions::default()
        };
        assert!(rips_persistence(&m, &opts).is_err());
    }
}
