//! Edge collapse of a filtered flag complex with integer filtration values (Boissonnat & Pritam,
//! "Edge collapse and persistence of flag complexes", SoCG 2020; the single-pass filtered
//! algorithm of Glisse & Pritam, "Swift and parallel edge collapse", 2022, as in GUDHI's
//! `Flag_complex_edge_collapser`).
//!
//! An edge `uv` of a flag complex is *dominated* by a vertex `c ∉ {u, v}` when every common
//! neighbour of `u` and `v` is `c` or a neighbour of `c`. Removing a dominated edge (and every
//! simplex containing it) is a strong collapse: the smaller flag complex is a deformation
//! retract of the larger one. Edges are visited from the largest filtration value down; an edge
//! of value `f` is *delayed* to the first value `t ≥ f` at which it is not dominated in the
//! current graph at `t`, or removed when it stays dominated up to the top of the filtration. At
//! every filtration value the new complex is then obtained from the old one by a sequence of
//! strong collapses, so the inclusions are homotopy equivalences that commute with the
//! filtration maps: the persistence modules, hence the barcodes, are isomorphic in every
//! dimension.
//!
//! Cocycles of the collapsed complex extend to the original one by undoing the collapses at a
//! fixed value in reverse order: an edge `uv` dominated by `c` gets `α(uv) = α(uc) + α(cv)`
//! (the triangle `ucv` is present; for every other triangle `uvx`, the simplex `{u, v, c, x}` is
//! present because `x` is a neighbour of `c`, and the cocycle condition on `uvx` follows from
//! those on `ucx` and `cvx`, which do not contain `uv`). The extension is exact over Z, so an
//! integer lift that is a cocycle on the collapsed complex extends to an integer cocycle.
//!
//! The current graph at each level is kept as one adjacency bitset per level (cumulative: level
//! `t` holds the edges of value `≤ t`), so the common neighbours of an edge and the domination
//! test are word-wise ANDs. At 36,532 Levenshtein windows (32 M edges below the cone cut, nine
//! levels) that is 1.5 GiB; above [`MAX_BITSET_BYTES`] the collapse is not attempted.

use rayon::prelude::*;

use crate::error::CyclesError;
use crate::metric::{ByteDistanceMatrix, DistanceMatrix};
use crate::progress::{Control, Phase};

/// Memory the level bitsets may take.
pub(crate) const MAX_BITSET_BYTES: usize = 3 << 30;

/// One interval of filtration values during which a collapsed edge was dominated by one vertex
/// (the edge is absent from the collapsed complex on `from..to`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Segment {
    /// Combinatorial index `i(i-1)/2 + j` of the edge `{i > j}`.
    edge: u32,
    dominator: u32,
    from: u8,
    to: u8,
}

/// What [`collapse`] did, in the order it did it: enough to extend cocycles of the collapsed
/// complex back to the original one at any filtration value.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CollapseLog {
    segments: Vec<Segment>,
    /// Edges removed from the top of the filtration and edges delayed.
    pub removed: usize,
    pub delayed: usize,
    /// Edges up to the top level before the collapse.
    pub edges: usize,
}

/// A collapsed filtration: the same points, each edge at its new value (removed edges at
/// `top + 1`, above everything the computation looks at), and the log.
pub struct Collapsed {
    pub matrix: ByteDistanceMatrix,
    pub log: CollapseLog,
}

/// The vertices `(i, j)`, `i > j`, of the edge with combinatorial index `index`.
#[inline]
pub(crate) fn edge_vertices(index: u64) -> (usize, usize) {
    let mut i = ((1.0 + (1.0 + 8.0 * index as f64).sqrt()) / 2.0) as u64;
    while i > 1 && i * (i - 1) / 2 > index {
        i -= 1;
    }
    while (i + 1) * i / 2 <= index {
        i += 1;
    }
    (i as usize, (index - i * (i - 1) / 2) as usize)
}

#[inline]
fn edge_index(i: usize, j: usize) -> usize {
    let (i, j) = if i > j { (i, j) } else { (j, i) };
    i * (i - 1) / 2 + j
}

/// Cumulative adjacency bitsets, one per level `first..=top`.
struct LevelBits {
    n: usize,
    words: usize,
    first: u8,
    bits: Vec<u64>,
    /// Degree of each vertex at each level, same layout without the words.
    degrees: Vec<u32>,
}

impl LevelBits {
    #[inline]
    fn row(&self, level: u8, v: usize) -> &[u64] {
        let start = ((usize::from(level - self.first)) * self.n + v) * self.words;
        &self.bits[start..start + self.words]
    }

    #[inline]
    fn degrees(&self, level: u8) -> &[u32] {
        let start = usize::from(level - self.first) * self.n;
        &self.degrees[start..start + self.n]
    }

    /// Removes the edge `{a, b}` at `level`.
    #[inline]
    fn clear(&mut self, level: u8, a: usize, b: usize) {
        let base = usize::from(level - self.first) * self.n;
        self.bits[(base + a) * self.words + b / 64] &= !(1u64 << (b % 64));
        self.bits[(base + b) * self.words + a / 64] &= !(1u64 << (a % 64));
        self.degrees[base + a] -= 1;
        self.degrees[base + b] -= 1;
    }
}

#[inline]
fn has_bit(row: &[u64], x: usize) -> bool {
    row[x / 64] >> (x % 64) & 1 == 1
}

/// Set bits of `words[lo..=hi]`, increasing, as absolute positions (`lo` is a word index).
fn for_each_bit(words: &[u64], mut visit: impl FnMut(usize) -> bool) {
    for (w, &word) in words.iter().enumerate() {
        let mut rest = word;
        while rest != 0 {
            let b = rest.trailing_zeros() as usize;
            if !visit(w * 64 + b) {
                return;
            }
            rest &= rest - 1;
        }
    }
}

/// Whether every vertex of `common` is `c` or in `row_c` (both slices start at word `lo`).
#[inline]
fn dominates(common: &[u64], row_c: &[u64], c: usize, lo: usize) -> bool {
    let own = (c / 64).wrapping_sub(lo);
    let clean = |a: &[u64], b: &[u64]| {
        a.chunks(16)
            .zip(b.chunks(16))
            .all(|(x, y)| x.iter().zip(y).fold(0, |acc, (p, q)| acc | (p & !q)) == 0)
    };
    if own >= common.len() {
        return clean(common, row_c);
    }
    common[own] & !row_c[own] & !(1u64 << (c % 64)) == 0
        && clean(&common[..own], &row_c[..own])
        && clean(&common[own + 1..], &row_c[own + 1..])
}

/// A vertex of `common` other than `c` missing from `row_c` (both slices start at word `lo`),
/// if any: `None` means that `c` dominates.
#[inline]
fn witness(common: &[u64], row_c: &[u64], c: usize, lo: usize) -> Option<usize> {
    let own = (c / 64).wrapping_sub(lo);
    let mut start = 0;
    for (a, b) in common.chunks(16).zip(row_c.chunks(16)) {
        if a.iter().zip(b).fold(0, |acc, (p, q)| acc | (p & !q)) != 0 {
            for (k, (p, q)) in a.iter().zip(b).enumerate() {
                let mut missing = p & !q;
                if start + k == own {
                    missing &= !(1u64 << (c % 64));
                }
                if missing != 0 {
                    return Some((lo + start + k) * 64 + missing.trailing_zeros() as usize);
                }
            }
        }
        start += a.len();
    }
    None
}

/// Common neighbours of smallest degree whose neighbourhoods narrow the candidates first.
const RARE: usize = 2;

struct Scratch {
    common: Vec<u64>,
    candidates: Vec<u64>,
    /// Per vertex, the last dominator found for an edge at it.
    hint: Vec<u32>,
    /// The intervals found for the edge being visited.
    segments: Vec<Segment>,
}

/// A vertex dominating the edge whose common neighbours at `level` are `common`, if any.
///
/// A dominator `c` is a common neighbour adjacent to every other one: it is `x` or a neighbour
/// of `x` for every common neighbour `x`, and its degree is at least `|common| + 1`. The
/// candidates start as the common neighbours, narrowed to the closed neighbourhoods of the
/// common neighbours of smallest degree; then a candidate is tested, and if it fails, the
/// common neighbour it misses (a witness) narrows the candidates again (removing it and every
/// other candidate that misses the witness). Narrowing is a word-wise AND over the span of
/// words still holding candidates.
fn find_dominator(
    bits: &LevelBits,
    level: u8,
    common: &[u64],
    hints: [u32; 2],
    candidates: &mut [u64],
) -> Option<usize> {
    let (Some(lo), Some(hi)) = (
        common.iter().position(|&w| w != 0),
        common.iter().rposition(|&w| w != 0),
    ) else {
        return None;
    };
    // The dominator of a neighbouring edge first (consecutive edges share a vertex).
    let mut pending: Option<usize> = None;
    for h in hints {
        let h = h as usize;
        if h < bits.n && has_bit(common, h) {
            match witness(&common[lo..=hi], &bits.row(level, h)[lo..=hi], h, lo) {
                None => return Some(h),
                Some(x) => pending = pending.or(Some(x)),
            }
        }
    }
    let degrees = bits.degrees(level);
    let mut size = 0u32;
    let mut rarest = [(u32::MAX, usize::MAX); RARE];
    for_each_bit(&common[lo..=hi], |x| {
        let x = x + lo * 64;
        size += 1;
        let d = degrees[x];
        if d < rarest[RARE - 1].0 {
            let mut k = RARE - 1;
            while k > 0 && rarest[k - 1].0 > d {
                rarest[k] = rarest[k - 1];
                k -= 1;
            }
            rarest[k] = (d, x);
        }
        true
    });
    // Narrow the candidates to the closed neighbourhood of x, over the span clo..=chi.
    let narrow = |candidates: &mut [u64], x: usize, clo: &mut usize, chi: &mut usize| -> bool {
        let row = bits.row(level, x);
        let xw = x / 64;
        let keep = if (*clo..=*chi).contains(&xw) {
            candidates[xw] & (1u64 << (x % 64))
        } else {
            0
        };
        for (c, &r) in candidates[*clo..=*chi].iter_mut().zip(&row[*clo..=*chi]) {
            *c &= r;
        }
        if keep != 0 {
            candidates[xw] |= keep;
        }
        while *clo <= *chi && candidates[*clo] == 0 {
            *clo += 1;
        }
        while *chi > *clo && candidates[*chi] == 0 {
            *chi -= 1;
        }
        *clo <= *chi
    };
    let (mut clo, mut chi) = (lo, hi);
    candidates[lo..=hi].copy_from_slice(&common[lo..=hi]);
    for x in pending
        .into_iter()
        .chain(rarest.iter().map(|r| r.1).filter(|&x| x != usize::MAX))
    {
        if !narrow(candidates, x, &mut clo, &mut chi) {
            return None;
        }
    }
    loop {
        let c = clo * 64 + candidates[clo].trailing_zeros() as usize;
        if degrees[c] <= size {
            candidates[clo] &= candidates[clo] - 1;
        } else {
            match witness(&common[lo..=hi], &bits.row(level, c)[lo..=hi], c, lo) {
                None => return Some(c),
                Some(x) => {
                    if !narrow(candidates, x, &mut clo, &mut chi) {
                        return None;
                    }
                    continue;
                }
            }
        }
        while clo <= chi && candidates[clo] == 0 {
            clo += 1;
        }
        if clo > chi {
            return None;
        }
    }
}

/// Collapses the filtration of `dist` up to the integer level `top` (the edges above `top`
/// are not part of it). `None` when there are fewer than `min_edges` edges up to `top`, when the metric does not have integer levels, `top` is 255 or
/// more, or the level bitsets would take more than [`MAX_BITSET_BYTES`].
pub fn collapse<D: DistanceMatrix>(
    dist: &D,
    top: u32,
    min_edges: usize,
    control: &Control,
) -> Result<Option<Collapsed>, CyclesError> {
    if min_edges == usize::MAX {
        return Ok(None);
    }
    let Some(max) = dist.integer_levels() else {
        return Ok(None);
    };
    if top >= 255 || max > 255 {
        return Ok(None);
    }
    let top = top as u8;
    let n = dist.size();
    let pairs = n * n.saturating_sub(1) / 2;
    if pairs > u32::MAX as usize {
        return Ok(None);
    }
    let started = std::time::Instant::now();
    // The levels as bytes, edited in place into the collapsed matrix.
    let mut levels: Vec<u8> = (0..pairs)
        .into_par_iter()
        .with_min_len(1 << 16)
        .map(|e| dist.edge_length(e) as u8)
        .collect();
    let mut log = CollapseLog::default();
    let mut bits: Option<LevelBits> = None;
    for pass in 0..MAX_PASSES {
        let buckets = bucket_edges(&levels, n, top);
        let edges: usize = buckets.iter().map(Vec::len).sum();
        if pass == 0 {
            if edges < min_edges || edges == 0 {
                return Ok(None);
            }
            log.edges = edges;
            control.begin(Phase::Collapse, PROGRESS_UNITS)?;
        }
        let Some(first) = buckets.iter().position(|b| !b.is_empty()) else {
            return Ok(None);
        };
        let first = first as u8;
        let words = n.div_ceil(64);
        let bytes = (usize::from(top - first) + 1)
            .saturating_mul(n)
            .saturating_mul(words)
            .saturating_mul(8);
        if bytes > MAX_BITSET_BYTES {
            tracing::debug!("collapse: level bitsets would take {bytes} bytes; not collapsing");
            return Ok(None);
        }
        let bits = LevelBits::build(&mut bits, &buckets, n, first);
        let removed_before = log.removed;
        let mut progress = PassProgress {
            control,
            pass,
            done: 0,
            edges,
        };
        for f in (first..=top).rev() {
            let bucket = &buckets[usize::from(f)];
            tracing::debug!(
                "collapse pass {}: level {f}, {} edges; {} removed, {} delays so far, after \
                 {:.2?}",
                pass + 1,
                bucket.len(),
                log.removed,
                log.delayed,
                started.elapsed()
            );
            collapse_level(bits, &mut levels, &mut log, bucket, f, top, &mut progress)?;
        }
        let removed = log.removed - removed_before;
        tracing::debug!(
            "collapse pass {}: {removed} of {edges} edges removed after {:.2?}",
            pass + 1,
            started.elapsed()
        );
        if removed < edges / MIN_PASS_GAIN {
            break;
        }
    }
    drop(bits);
    tracing::debug!(
        "collapse: {} of {} edges removed, {} delays, {} logged intervals, in {:.2?}",
        log.removed,
        log.edges,
        log.delayed,
        log.segments.len(),
        started.elapsed()
    );
    control.report(Phase::Collapse, PROGRESS_UNITS, PROGRESS_UNITS);
    Ok(ByteDistanceMatrix::from_lower_triangle(levels).map(|matrix| Collapsed { matrix, log }))
}

/// Progress of the collapse in thousandths: the first pass takes about 70 % of the time, the
/// second 20 %, the third 10 %.
const PROGRESS_UNITS: u64 = 1000;

struct PassProgress<'a> {
    control: &'a Control,
    pass: usize,
    done: usize,
    edges: usize,
}

impl PassProgress<'_> {
    /// Counts `visited` more edges of this pass; `Err` when cancelled.
    fn advance(&mut self, visited: usize) -> Result<(), CyclesError> {
        self.done += visited;
        let (from, span) = match self.pass {
            0 => (0.0, 700.0),
            1 => (700.0, 200.0),
            _ => (900.0, 100.0),
        };
        let fraction = (self.done as f64 / self.edges.max(1) as f64).min(1.0);
        self.control.report(
            Phase::Collapse,
            (from + span * fraction) as u64,
            PROGRESS_UNITS,
        );
        self.control.check()
    }
}

/// At most this many passes: a pass removes edges that became dominated only after edges
/// visited later in the previous pass were removed or delayed (at 36,532 Levenshtein windows
/// the first pass keeps 11.6 M of 32 M edges, the second 7.6 M of those).
const MAX_PASSES: usize = 3;
/// Another pass follows one that removed at least 1/MIN_PASS_GAIN of its edges.
const MIN_PASS_GAIN: usize = 4;

/// The edges up to `top` bucketed by level, each bucket in increasing index order.
fn bucket_edges(levels: &[u8], n: usize, top: u8) -> Vec<Vec<u32>> {
    let blocks = crate::rips::row_blocks(n, 1 << 22);
    let per_block: Vec<Vec<Vec<u32>>> = blocks
        .par_iter()
        .map(|&(start, end)| {
            let mut buckets = vec![Vec::new(); usize::from(top) + 1];
            let from = start * start.saturating_sub(1) / 2;
            let to = end * end.saturating_sub(1) / 2;
            for (offset, &l) in levels[from..to].iter().enumerate() {
                if l <= top {
                    buckets[usize::from(l)].push((from + offset) as u32);
                }
            }
            buckets
        })
        .collect();
    let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); usize::from(top) + 1];
    for block in per_block {
        for (bucket, part) in buckets.iter_mut().zip(block) {
            bucket.extend(part);
        }
    }
    buckets
}

impl LevelBits {
    /// The cumulative bitsets and degrees of the edges in `buckets` (levels `first..`), in
    /// the allocation of `slot` when it has one.
    fn build<'a>(
        slot: &'a mut Option<LevelBits>,
        buckets: &[Vec<u32>],
        n: usize,
        first: u8,
    ) -> &'a mut LevelBits {
        let words = n.div_ceil(64);
        let levels = buckets.len() - usize::from(first);
        let bits = slot.get_or_insert_with(|| LevelBits {
            n,
            words,
            first,
            bits: Vec::new(),
            degrees: Vec::new(),
        });
        bits.first = first;
        bits.bits.clear();
        bits.bits.resize(levels * n * words, 0);
        bits.degrees.clear();
        bits.degrees.resize(levels * n, 0);
        for (level, bucket) in buckets.iter().enumerate().skip(usize::from(first)) {
            let base = (level - usize::from(first)) * n * words;
            let degrees = (level - usize::from(first)) * n;
            for &e in bucket {
                let (i, j) = edge_vertices(u64::from(e));
                bits.bits[base + i * words + j / 64] |= 1 << (j % 64);
                bits.bits[base + j * words + i / 64] |= 1 << (i % 64);
                bits.degrees[degrees + i] += 1;
                bits.degrees[degrees + j] += 1;
            }
        }
        // Cumulative: level t also holds every edge below it.
        let level_len = n * words;
        for level in 1..levels {
            let (below, rest) = bits.degrees.split_at_mut(level * n);
            for (d, p) in rest[..n].iter_mut().zip(&below[(level - 1) * n..]) {
                *d += p;
            }
            let (below, rest) = bits.bits.split_at_mut(level * level_len);
            let previous = &below[(level - 1) * level_len..];
            rest[..level_len]
                .par_chunks_mut(1 << 16)
                .zip(previous.par_chunks(1 << 16))
                .for_each(|(row, prev)| {
                    for (a, b) in row.iter_mut().zip(prev) {
                        *a |= b;
                    }
                });
        }
        bits
    }
}

/// What the visit of one edge decided on the graph it saw: its new level and the intervals on
/// which it is dominated (at most [`MAX_SEGMENTS`]; more are recomputed in order).
#[derive(Clone, Copy)]
struct Decision {
    new_level: u8,
    count: u8,
    segments: [Segment; MAX_SEGMENTS],
}

const MAX_SEGMENTS: usize = 4;

/// Edges visited in parallel against the same graph, then committed in order.
const BATCH: usize = 512;

const NO_SEGMENT: Segment = Segment {
    edge: 0,
    dominator: 0,
    from: 0,
    to: 0,
};

impl Scratch {
    fn new(bits: &LevelBits) -> Self {
        Self {
            common: vec![0; bits.words],
            candidates: vec![0; bits.words],
            hint: vec![u32::MAX; bits.n],
            segments: Vec::new(),
        }
    }
}

/// Visits the edges of value `f` (increasing index order in `bucket`) from the last.
///
/// In batches: the edges of a batch are visited in parallel against the graph as it was before
/// the batch, then committed in order. A decision stays valid unless an edge committed before
/// it in the batch was one its dominator needed: an edge `{c, x}` at a level where `c`
/// dominates, with `x` one of the edge's ends or a common neighbour of them (removing other
/// edges only shrinks the common neighbourhood, which keeps `c` dominating; and an edge left
/// in place where it could have been collapsed is merely less collapse). Invalid decisions are
/// recomputed on the current graph. Every committed collapse is thus a strong collapse of the
/// graph at that level when it is made, as in the sequential algorithm; the result depends on
/// the batch size, not on the number of threads.
fn collapse_level(
    bits: &mut LevelBits,
    levels: &mut [u8],
    log: &mut CollapseLog,
    bucket: &[u32],
    f: u8,
    top: u8,
    progress: &mut PassProgress<'_>,
) -> Result<(), CyclesError> {
    let mut scratch = Scratch::new(bits);
    // One scratch per worker thread (the hints stay warm across batches).
    let scratches: Vec<std::sync::Mutex<Scratch>> = (0..rayon::current_num_threads())
        .map(|_| std::sync::Mutex::new(Scratch::new(bits)))
        .collect();
    // Removals committed in the current batch, per vertex: (other end, from, to).
    let mut removed_at: Vec<Vec<(u32, u8, u8)>> = vec![Vec::new(); bits.n];
    let mut touched: Vec<u32> = Vec::new();
    let mut recomputed = 0usize;
    let order: Vec<u32> = bucket.iter().rev().copied().collect();
    for batch in order.chunks(BATCH) {
        let decisions: Vec<Option<Decision>> = {
            let bits: &LevelBits = bits;
            batch
                .par_iter()
                .with_min_len(64)
                .map(|&e| {
                    let slot = rayon::current_thread_index().unwrap_or(0) % scratches.len();
                    let Ok(mut scratch) = scratches[slot].lock() else {
                        return None;
                    };
                    let (u, v) = edge_vertices(u64::from(e));
                    scratch.segments.clear();
                    let new_level = collapse_edge(bits, &mut scratch, e, u, v, f, top);
                    let count = scratch.segments.len();
                    (count <= MAX_SEGMENTS).then(|| {
                        let mut segments = [NO_SEGMENT; MAX_SEGMENTS];
                        segments[..count].copy_from_slice(&scratch.segments);
                        Decision {
                            new_level,
                            count: count as u8,
                            segments,
                        }
                    })
                })
                .collect()
        };
        for (&e, decision) in batch.iter().zip(decisions) {
            let (u, v) = edge_vertices(u64::from(e));
            let valid = decision.filter(|d| {
                d.segments[..usize::from(d.count)]
                    .iter()
                    .all(|s| still_dominates(bits, &removed_at, s, u, v))
                    && (d.new_level > top
                        || !neighbourhood_shrank(bits, &removed_at, u, v, d.new_level))
            });
            let new_level = match valid {
                Some(d) => {
                    log.segments
                        .extend_from_slice(&d.segments[..usize::from(d.count)]);
                    d.new_level
                }
                None => {
                    recomputed += 1;
                    scratch.segments.clear();
                    let new_level = collapse_edge(bits, &mut scratch, e, u, v, f, top);
                    log.segments.extend_from_slice(&scratch.segments);
                    new_level
                }
            };
            if new_level != f {
                for t in f..new_level {
                    bits.clear(t, u, v);
                }
                levels[e as usize] = new_level;
                if new_level > top {
                    log.removed += 1;
                } else {
                    log.delayed += 1;
                }
                for (a, b) in [(u, v), (v, u)] {
                    if removed_at[a].is_empty() {
                        touched.push(a as u32);
                    }
                    removed_at[a].push((b as u32, f, new_level));
                }
            }
        }
        for &a in &touched {
            removed_at[a as usize].clear();
        }
        touched.clear();
        progress.advance(batch.len())?;
    }
    if recomputed > 0 {
        tracing::debug!(
            "collapse: level {f}: {recomputed} of {} decisions recomputed",
            bucket.len()
        );
    }
    Ok(())
}

/// Whether the batch removed an edge from `u` or `v` to one of their common neighbours at
/// `level`: the common neighbourhood there shrank, and the edge, found undominated at `level`,
/// may now be dominated (visiting it again keeps the collapse as strong as the sequential one).
fn neighbourhood_shrank(
    bits: &LevelBits,
    removed_at: &[Vec<(u32, u8, u8)>],
    u: usize,
    v: usize,
    level: u8,
) -> bool {
    [(u, v), (v, u)].iter().any(|&(a, b)| {
        removed_at[a].iter().any(|&(x, from, to)| {
            from <= level && level < to && has_bit(bits.row(level, b), x as usize)
        })
    })
}

/// Whether the domination of `{u, v}` by `s.dominator` on `s.from..s.to` survives the removals
/// committed so far in the batch (`removed_at`; the graph in `bits` already lacks them).
fn still_dominates(
    bits: &LevelBits,
    removed_at: &[Vec<(u32, u8, u8)>],
    s: &Segment,
    u: usize,
    v: usize,
) -> bool {
    let c = s.dominator as usize;
    removed_at[c].iter().all(|&(x, from, to)| {
        let lo = from.max(s.from);
        let hi = to.min(s.to);
        if lo >= hi {
            return true;
        }
        let x = x as usize;
        if x == u || x == v {
            return false;
        }
        // x a common neighbour at some level of the overlap (adjacency only grows with the
        // level, so the highest one decides; levels above the top do not exist).
        let t = hi - 1;
        !(has_bit(bits.row(t, u), x) && has_bit(bits.row(t, v), x))
    })
}

/// Visits the edge `e = {u, v}` of value `f`: returns its new value (`top + 1`: removed) and
/// logs the intervals on which it is dominated.
fn collapse_edge(
    bits: &LevelBits,
    scratch: &mut Scratch,
    e: u32,
    u: usize,
    v: usize,
    f: u8,
    top: u8,
) -> u8 {
    let mut time = f;
    for ((c, &a), &b) in scratch
        .common
        .iter_mut()
        .zip(bits.row(time, u))
        .zip(bits.row(time, v))
    {
        *c = a & b;
    }
    loop {
        let Some(dominator) = find_dominator(
            bits,
            time,
            &scratch.common,
            [scratch.hint[u], scratch.hint[v]],
            &mut scratch.candidates,
        ) else {
            return time;
        };
        scratch.hint[u] = dominator as u32;
        scratch.hint[v] = dominator as u32;
        let from = time;
        // Still dominated by the same vertex at the next levels?
        loop {
            if time == top {
                scratch.segments.push(Segment {
                    edge: e,
                    dominator: dominator as u32,
                    from,
                    to: top + 1,
                });
                return top + 1;
            }
            time += 1;
            let (ru, rv) = (bits.row(time, u), bits.row(time, v));
            for ((c, &a), &b) in scratch.common.iter_mut().zip(ru).zip(rv) {
                *c = a & b;
            }
            let still = dominates(&scratch.common, bits.row(time, dominator), dominator, 0);
            if !still {
                scratch.segments.push(Segment {
                    edge: e,
                    dominator: dominator as u32,
                    from,
                    to: time,
                });
                break;
            }
        }
    }
}

impl CollapseLog {
    /// Extends an integer cochain of the collapsed complex at filtration value `epsilon`
    /// (`alpha`: edge index → value, absent = 0; only edges of the collapsed complex at
    /// `epsilon` are read) to the original complex at `epsilon`, by undoing the collapses in
    /// reverse order. A cocycle extends to a cocycle of the same class.
    pub fn extend(&self, alpha: &mut std::collections::HashMap<u64, i64>, epsilon: f32) {
        let value = |alpha: &std::collections::HashMap<u64, i64>, a: usize, b: usize| -> i64 {
            // α(a, b) for the oriented edge a → b: the stored value is for (max, min).
            let x = alpha.get(&(edge_index(a, b) as u64)).copied().unwrap_or(0);
            if a > b { x } else { -x }
        };
        for s in self.segments.iter().rev() {
            if !(f32::from(s.from) <= epsilon && epsilon < f32::from(s.to)) {
                continue;
            }
            let (u, v) = edge_vertices(u64::from(s.edge));
            let c = s.dominator as usize;
            // α(u → v) = α(u → c) + α(c → v), u > v.
            let x = value(alpha, u, c) + value(alpha, c, v);
            if x != 0 {
                alpha.insert(u64::from(s.edge), x);
            } else {
                alpha.remove(&u64::from(s.edge));
            }
        }
    }

    /// Number of logged intervals.
    pub fn segments(&self) -> usize {
        self.segments.len()
    }
}
