//! The persistence pairs: edges in filtration order and H0 by union–find, then the reduction
//! of the coboundary matrix in higher dimensions (clearing, apparent and emergent pairs,
//! stored reduced columns, level by level) with the representative cocycles.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::column::{Column, NarrowLayout, ReducedStore, sum_entries};
use super::complex::{Entry, Rips};
use super::{Bar, Cocycle, CocycleEntry, Value};
use crate::error::CyclesError;
use crate::metric::DistanceMatrix;
use crate::progress::Phase;

/// Sort order of columns to reduce: decreasing diameter, ties increasing index.
pub(super) fn greater_diameter_or_smaller_index(a: &(Value, i64), b: &(Value, i64)) -> Ordering {
    b.0.total_cmp(&a.0).then(a.1.cmp(&b.1))
}

/// A working column holding more entries than this after summing stops the reduction (the
/// dense 3,949-window demo trace grew one past 9 GB of memory): an error, or under a time
/// budget the cue to take landmarks.
const MAX_WORKING_ENTRIES: usize = 1 << 26;

/// Memory for the reduced coboundaries kept (8 or 16 bytes an entry); columns that do not fit
/// are re-derived from V when added, as in Ripser (10,000 Levenshtein windows: 2.4 M entries
/// after two thirds of the columns; 50,000: 50 M after a third).
pub(super) const MAX_STORED_BYTES: usize = 1 << 30;

#[cfg(test)]
thread_local! {
    /// Additions of columns re-derived from V on this thread (tests check the path is taken).
    pub(super) static REDERIVED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Multiplicative hashing of simplex indices (the keys are already well spread integers).
#[derive(Default)]
pub(super) struct IndexHasher(u64);

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
pub(super) type PivotMap = HashMap<i64, (u32, usize), BuildHasherDefault<IndexHasher>>;

impl<D: DistanceMatrix> Rips<'_, D> {
    /// Calls `visit` for every edge up to the threshold in filtration order: increasing
    /// diameter, ties decreasing index (Ripser sorts a reversed range).
    pub(super) fn for_each_edge_in_order(&self, mut visit: impl FnMut(Value, i64)) {
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
    pub(super) fn compute_dim_0_pairs(
        &self,
        simplices: &mut Vec<(Value, i64)>,
        bars: &mut Vec<Bar>,
    ) -> Result<Vec<(Value, i64)>, CyclesError> {
        let mut sets = UnionFind::new(self.n);
        let total = self.neighbors.as_ref().map_or_else(
            || self.n * self.n.saturating_sub(1) / 2,
            |nb| nb.edge_count(),
        ) as u64;
        self.control.begin(Phase::H0, total)?;
        let mut visited = 0u64;
        let mut cancelled = false;
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
                    // Dense complexes: a batch can take seconds; stop early when cancelled
                    // (the result is then discarded).
                    if self.control.check().is_err() {
                        return false;
                    }
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
            visited += 1;
            if visited.is_multiple_of(4096) {
                self.control.report(Phase::H0, visited, total);
            }
            if visited.is_multiple_of(256) && self.control.check().is_err() {
                cancelled = true;
            }
            if cancelled {
                return;
            }
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
        self.control.check()?;
        flush(&mut candidates, &mut columns_to_reduce);
        columns_to_reduce.reverse();
        for i in 0..self.n {
            if sets.find(i) == i {
                bars.push(Bar(0.0, None));
            }
        }
        Ok(columns_to_reduce)
    }

    pub(super) fn assemble_columns_to_reduce(
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

    pub(super) fn pop_pivot(&self, column: &mut Column) -> Entry {
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

    pub(super) fn get_pivot(&self, column: &mut Column) -> Entry {
        let result = self.pop_pivot(column);
        if !result.is_none() {
            column.push(result);
        }
        result
    }

    /// Adds `simplex` to V's working column and its coboundary up to `horizon` to the working
    /// coboundary.
    pub(super) fn add_simplex_coboundary(
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
    pub(super) fn push_coboundary(
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
    pub(super) fn init_coboundary_and_get_pivot(
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

    pub(super) fn compute_pairs(
        &self,
        columns_to_reduce: &[(Value, i64)],
        pivot_column_index: &mut PivotMap,
        dim: usize,
        bars: &mut Vec<Bar>,
        cocycles: &mut Vec<Cocycle>,
    ) -> Result<(), CyclesError> {
        let total = columns_to_reduce.len() as u64;
        self.control.begin(Phase::H1, total)?;
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
            self.control.report(Phase::H1, column_index as u64, total);
            self.control.check()?;
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
                // A single column can take seconds (millions of entries added).
                self.control.check()?;
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
                        if working_coboundary.len() > MAX_WORKING_ENTRIES {
                            return Err(CyclesError::TooLarge(format!(
                                "a column of the H{dim} reduction holds {} entries after summing \
                                 (more than {MAX_WORKING_ENTRIES}, about 1 GiB with its copies); \
                                 analyse landmark windows instead (--landmarks)",
                                working_coboundary.len()
                            )));
                        }
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
        self.control.report(Phase::H1, total, total);
        Ok(())
    }

    /// The cocycle `V_j = e_j + Σ (V entries)` of an H1 column as explicit edges.
    pub(super) fn make_cocycle(&self, bar: Bar, column: Entry, rest: &[Entry]) -> Cocycle {
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

/// Ripser's union–find with union by rank and path compression.
pub(super) struct UnionFind {
    pub(super) parent: Vec<usize>,
    pub(super) rank: Vec<u8>,
}

impl UnionFind {
    pub(super) fn new(n: usize) -> Self {
        Self {
            parent: (0..n).collect(),
            rank: vec![0; n],
        }
    }

    pub(super) fn find(&mut self, x: usize) -> usize {
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

    pub(super) fn link(&mut self, x: usize, y: usize) {
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
