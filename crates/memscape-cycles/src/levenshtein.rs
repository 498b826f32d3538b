//! Windows of records and their Levenshtein distances.
//!
//! A window is `w` consecutive symbols. Identical windows are merged into one point before the
//! topology (their distance is 0, and Vietoris–Rips of a metric with duplicates has the same
//! persistence as without them). Distances between all pairs of unique windows are computed in
//! parallel with the bit-parallel algorithm of Myers (1999) in Hyyrö's formulation for global
//! edit distance, O(w) word operations per pair for `w <= 64`; longer windows fall back to the
//! two-row dynamic program.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::error::CyclesError;
use crate::metric::{ByteDistanceMatrix, split_rows, triangle_entries};
use crate::progress::{Control, Phase};

/// The longest window: distances are stored in a byte.
pub const MAX_WINDOW: usize = 255;

/// Windows of a symbol sequence, with identical windows merged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Windows {
    pub width: usize,
    /// Unique windows, `width` symbols each, in order of first occurrence.
    pub unique: Vec<u32>,
    /// For every window (starting at record `k`), the index of its unique window.
    pub window_to_unique: Vec<u32>,
}

impl Windows {
    pub fn unique_count(&self) -> usize {
        self.unique.len() / self.width.max(1)
    }

    pub fn unique_window(&self, u: usize) -> &[u32] {
        &self.unique[u * self.width..(u + 1) * self.width]
    }
}

/// Cuts `symbols` into the `m - w + 1` windows of width `w` and merges identical ones.
pub fn make_windows(symbols: &[u32], width: usize) -> Result<Windows, CyclesError> {
    if width == 0 || width > MAX_WINDOW {
        return Err(CyclesError::InvalidParameter(format!(
            "window width {width}: expected 1..={MAX_WINDOW}"
        )));
    }
    if symbols.len() < width {
        return Err(CyclesError::InvalidParameter(format!(
            "{} records are fewer than one window of {width}",
            symbols.len()
        )));
    }
    let mut ids: HashMap<&[u32], u32> = HashMap::new();
    let mut unique = Vec::new();
    let mut window_to_unique = Vec::with_capacity(symbols.len() - width + 1);
    for window in symbols.windows(width) {
        let next = u32::try_from(ids.len())
            .map_err(|_| CyclesError::TooLarge("more than 2^32 unique windows".into()))?;
        let id = *ids.entry(window).or_insert_with(|| {
            unique.extend_from_slice(window);
            next
        });
        window_to_unique.push(id);
    }
    Ok(Windows {
        width,
        unique,
        window_to_unique,
    })
}

/// Levenshtein distance by the textbook two-row dynamic program (the reference).
pub fn levenshtein_dp(a: &[u32], b: &[u32]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, &ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitute = prev[j] + usize::from(ca != cb);
            cur[j + 1] = substitute.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Myers/Hyyrö bit-parallel edit distance of a pattern of length `m <= 64` (given by its match
/// masks `peq(symbol)`) against `text`.
#[inline]
fn myers(m: usize, peq: impl Fn(u32) -> u64, text: &[u32]) -> usize {
    debug_assert!((1..=64).contains(&m));
    let last = 1u64 << (m - 1);
    let mut pv: u64 = if m == 64 { !0 } else { (1u64 << m) - 1 };
    let mut mv: u64 = 0;
    let mut score = m;
    for &c in text {
        let eq = peq(c);
        let xv = eq | mv;
        let xh = ((eq & pv).wrapping_add(pv) ^ pv) | eq;
        let mut ph = mv | !(xh | pv);
        let mut mh = pv & xh;
        if ph & last != 0 {
            score += 1;
        } else if mh & last != 0 {
            score -= 1;
        }
        // The top row of the global edit-distance matrix grows by one per column.
        ph = (ph << 1) | 1;
        mh <<= 1;
        pv = mh | !(xv | ph);
        mv = ph & xv;
    }
    score
}

/// Levenshtein distance of two symbol strings (bit-parallel when the first is at most 64 long).
pub fn levenshtein(a: &[u32], b: &[u32]) -> usize {
    if a.is_empty() {
        return b.len();
    }
    if a.len() > 64 {
        return levenshtein_dp(a, b);
    }
    let peq = |c: u32| {
        a.iter()
            .enumerate()
            .filter(|&(_, &s)| s == c)
            .fold(0u64, |mask, (k, _)| mask | (1 << k))
    };
    myers(a.len(), peq, b)
}

/// For each symbol, the unique windows containing it, increasing, each window once.
pub(crate) fn symbol_postings(windows: &Windows, alphabet: usize) -> Vec<Vec<u32>> {
    let mut postings: Vec<Vec<u32>> = vec![Vec::new(); alphabet];
    for u in 0..windows.unique_count() {
        for &s in windows.unique_window(u) {
            let list = &mut postings[s as usize];
            if list.last() != Some(&(u as u32)) {
                list.push(u as u32);
            }
        }
    }
    postings
}

/// All pairwise Levenshtein distances of the unique windows, in parallel; `alphabet` bounds the
/// symbol ids (they index a per-thread match-mask table).
pub fn window_distances(
    windows: &Windows,
    alphabet: usize,
) -> Result<ByteDistanceMatrix, CyclesError> {
    window_distances_with(windows, alphabet, &Control::new())
}

/// [`window_distances`] with progress reports (pairs done) and cancellation (checked per row).
pub fn window_distances_with(
    windows: &Windows,
    alphabet: usize,
    control: &Control,
) -> Result<ByteDistanceMatrix, CyclesError> {
    let n = windows.unique_count();
    let w = windows.width;
    let pairs = triangle_entries(n)?;
    control.begin(Phase::Distances, pairs as u64)?;
    let mut entries = vec![0u8; pairs];
    let rows = split_rows(&mut entries, n);
    let done = AtomicU64::new(0);
    // Per row: false when cancelled (the row is left undone).
    let proceed = |i: usize| -> bool {
        let so_far = done.fetch_add(i as u64, Ordering::Relaxed) + i as u64;
        control.report(Phase::Distances, so_far, pairs as u64);
        !control.is_cancelled()
    };
    if w <= 64 {
        // Two windows without a common symbol are exactly w apart (w substitutions, and no
        // alignment can do better without a match). Most pairs of a real trace are such pairs
        // (97 % of 34 M at 10,000 windows), so each row starts at w and the edit distance is
        // computed only for the windows that share a symbol with it, found through the
        // windows in which each symbol occurs. A row whose symbols occur nearly everywhere is
        // computed in full instead.
        let postings = symbol_postings(windows, alphabet);
        rows.into_par_iter().enumerate().for_each_init(
            || (vec![0u64; alphabet], vec![0u32; n], Vec::new()),
            |(peq, stamp, candidates), (i, row)| {
                if !proceed(i) {
                    return;
                }
                let pattern = windows.unique_window(i);
                let mut distinct = Vec::with_capacity(w);
                for (k, &s) in pattern.iter().enumerate() {
                    if peq[s as usize] == 0 {
                        distinct.push(s);
                    }
                    peq[s as usize] |= 1 << k;
                }
                let below = |s: &u32| postings[*s as usize].partition_point(|&j| (j as usize) < i);
                let scanned: usize = distinct.iter().map(below).sum();
                if scanned > i / 4 {
                    for (j, slot) in row.iter_mut().enumerate() {
                        let d = myers(w, |c| peq[c as usize], windows.unique_window(j));
                        *slot = d as u8;
                    }
                } else {
                    row.fill(w as u8);
                    candidates.clear();
                    let mark = i as u32 + 1;
                    for s in &distinct {
                        let list = &postings[*s as usize];
                        for &j in &list[..below(s)] {
                            if stamp[j as usize] != mark {
                                stamp[j as usize] = mark;
                                candidates.push(j);
                            }
                        }
                    }
                    for &j in candidates.iter() {
                        let d = myers(w, |c| peq[c as usize], windows.unique_window(j as usize));
                        row[j as usize] = d as u8;
                    }
                }
                for &s in pattern {
                    peq[s as usize] = 0;
                }
            },
        );
    } else {
        rows.into_par_iter().enumerate().for_each(|(i, row)| {
            if !proceed(i) {
                return;
            }
            for (j, slot) in row.iter_mut().enumerate() {
                let d = levenshtein_dp(windows.unique_window(i), windows.unique_window(j));
                *slot = d as u8;
            }
        });
    }
    control.check()?;
    ByteDistanceMatrix::from_lower_triangle(entries)
        .ok_or_else(|| CyclesError::TooLarge("distance matrix layout".into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn classic_examples() {
        let s = |t: &str| t.bytes().map(u32::from).collect::<Vec<_>>();
        assert_eq!(levenshtein(&s("kitten"), &s("sitting")), 3);
        assert_eq!(levenshtein(&s("flaw"), &s("lawn")), 2);
        assert_eq!(levenshtein(&s(""), &s("abc")), 3);
        assert_eq!(levenshtein(&s("abc"), &s("abc")), 0);
    }

    #[test]
    fn windows_merge_duplicates() {
        let w = make_windows(&[1, 2, 1, 2, 1, 2], 2).unwrap();
        assert_eq!(w.unique_count(), 2);
        assert_eq!(w.window_to_unique, vec![0, 1, 0, 1, 0]);
        assert!(make_windows(&[1], 2).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn bit_parallel_equals_dynamic_program(
            a in proptest::collection::vec(0u32..6, 1..=64),
            b in proptest::collection::vec(0u32..6, 0..=70),
        ) {
            prop_assert_eq!(levenshtein(&a, &b), levenshtein_dp(&a, &b));
        }

        /// Small alphabets (rows computed in full) and large ones (most pairs disjoint: only
        /// windows sharing a symbol are computed, the rest set to w).
        #[test]
        fn all_pairs_equal_the_reference(
            alphabet in prop_oneof![Just(4u32), Just(80u32)],
            seed in proptest::collection::vec(0u32..1000, 8..120),
            w in 1usize..12,
        ) {
            let symbols: Vec<u32> = seed.iter().map(|s| s % alphabet).collect();
            prop_assume!(symbols.len() >= w);
            let windows = make_windows(&symbols, w).unwrap();
            let m = window_distances(&windows, alphabet as usize).unwrap();
            let n = windows.unique_count();
            for i in 0..n {
                for j in 0..i {
                    let want = levenshtein_dp(windows.unique_window(i), windows.unique_window(j));
                    prop_assert_eq!(m.entries()[i * (i - 1) / 2 + j] as usize, want);
                }
            }
        }
    }
}
