//! Windows of records and their Levenshtein distances.
//!
//! A window is `w` consecutive symbols. Identical windows are merged into one point before the
//! topology (their distance is 0, and Vietoris–Rips of a metric with duplicates has the same
//! persistence as without them). Distances between all pairs of unique windows are computed in
//! parallel with the bit-parallel algorithm of Myers (1999) in Hyyrö's formulation for global
//! edit distance, O(w) word operations per pair for `w <= 64`; longer windows fall back to the
//! two-row dynamic program.

use std::collections::HashMap;

use rayon::prelude::*;

use crate::error::CyclesError;
use crate::metric::{ByteDistanceMatrix, split_rows, triangle_entries};

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

/// All pairwise Levenshtein distances of the unique windows, in parallel; `alphabet` bounds the
/// symbol ids (they index a per-thread match-mask table).
pub fn window_distances(
    windows: &Windows,
    alphabet: usize,
) -> Result<ByteDistanceMatrix, CyclesError> {
    let n = windows.unique_count();
    let w = windows.width;
    let mut entries = vec![0u8; triangle_entries(n)?];
    let rows = split_rows(&mut entries, n);
    if w <= 64 {
        rows.into_par_iter().enumerate().for_each_init(
            || vec![0u64; alphabet],
            |peq, (i, row)| {
                let pattern = windows.unique_window(i);
                for (k, &s) in pattern.iter().enumerate() {
                    peq[s as usize] |= 1 << k;
                }
                for (j, slot) in row.iter_mut().enumerate() {
                    let d = myers(w, |c| peq[c as usize], windows.unique_window(j));
                    *slot = d as u8;
                }
                for &s in pattern {
                    peq[s as usize] = 0;
                }
            },
        );
    } else {
        rows.into_par_iter().enumerate().for_each(|(i, row)| {
            for (j, slot) in row.iter_mut().enumerate() {
                let d = levenshtein_dp(windows.unique_window(i), windows.unique_window(j));
                *slot = d as u8;
            }
        });
    }
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

        #[test]
        fn all_pairs_equal_the_reference(symbols in proptest::collection::vec(0u32..4, 8..40), w in 1usize..8) {
            let windows = make_windows(&symbols, w).unwrap();
            let m = window_distances(&windows, 4).unwrap();
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
