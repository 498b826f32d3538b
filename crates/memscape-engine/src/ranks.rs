//! The samples at chosen positions of the (value, ms_row) order, found without sorting them:
//! each pass streams the (value, row) pairs once and counts them into buckets of the intervals
//! still holding a wanted position (equal-width in value, or in row where an interval holds one
//! value), keeping each bucket's first and last pair; a pass's buckets are the next pass's
//! intervals, and an interval of a few pairs is gathered and sorted. Memory is the buckets of
//! one pass (a few hundred MB at 100 M samples), not the samples: a global sort of every sample
//! was what ran the engine out of its memory cap (`positioned`'s `ROW_NUMBER`, wave 11).

use std::cmp::Ordering;

use datafusion::prelude::DataFrame;

use crate::rows::{f64s, u64s};
use crate::{Engine, EngineError, Result};

/// A sample's place in the order: its value, then its row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct OrderKey {
    pub(crate) value: f64,
    pub(crate) row: u64,
}

impl OrderKey {
    pub(crate) fn order(&self, other: &Self) -> Ordering {
        self.value
            .total_cmp(&other.value)
            .then(self.row.cmp(&other.row))
    }
}

/// Intervals of at most this many pairs are gathered and sorted rather than split again.
const GATHER: u64 = 32;
/// Buckets of the first pass: about 8 pairs each, at most 4 Mi (160 MB of buckets).
const FIRST_BUCKETS_MAX: u64 = 1 << 22;
/// Buckets of each later interval.
const BUCKETS: usize = 16;
/// Passes before giving up (each pass divides an interval at least in two).
const PASSES_MAX: usize = 80;

/// An interval of the order, `[lo, hi]`, holding `count` pairs from position `start` on.
#[derive(Debug, Clone, Copy)]
struct Interval {
    lo: OrderKey,
    hi: OrderKey,
    start: u64,
    count: u64,
    /// Gather its pairs in the next pass (few, or a split that made no progress).
    gather: bool,
}

impl Interval {
    fn contains(&self, k: &OrderKey) -> bool {
        k.order(&self.lo) != Ordering::Less && k.order(&self.hi) != Ordering::Greater
    }

    /// The bucket of `k` among `buckets`: by value when the interval spans values, else by
    /// row; monotone in the order, so that buckets are intervals of it.
    fn bucket(&self, k: &OrderKey, buckets: usize) -> usize {
        if self.lo.value.total_cmp(&self.hi.value) == Ordering::Less {
            let x = (k.value - self.lo.value) / (self.hi.value - self.lo.value) * buckets as f64;
            // NaN (an infinite span) and negatives saturate to 0.
            (x as usize).min(buckets - 1)
        } else {
            let span = u128::from(self.hi.row - self.lo.row) + 1;
            let at = u128::from(k.row.saturating_sub(self.lo.row));
            ((at * buckets as u128 / span) as usize).min(buckets - 1)
        }
    }
}

/// A bucket's count and its first and last pair.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    count: u64,
    lo: OrderKey,
    hi: OrderKey,
}

const EMPTY: Bucket = Bucket {
    count: 0,
    lo: OrderKey {
        value: f64::INFINITY,
        row: u64::MAX,
    },
    hi: OrderKey {
        value: f64::NEG_INFINITY,
        row: 0,
    },
};

/// The pairs at `positions` (sorted, distinct, each below `n`) of the order of `pairs`'
/// `ms_value` (f64, never null) and `ms_row`, whose values lie in `[lo, hi]` and number `n`.
pub(crate) fn keys_at(
    engine: &Engine,
    pairs: &DataFrame,
    n: u64,
    (lo, hi): (f64, f64),
    positions: &[u64],
) -> Result<Vec<OrderKey>> {
    let mut found: Vec<Option<OrderKey>> = vec![None; positions.len()];
    if n == 0 || positions.is_empty() {
        return Ok(Vec::new());
    }
    let mut open = vec![Interval {
        lo: OrderKey { value: lo, row: 0 },
        hi: OrderKey {
            value: hi,
            row: u64::MAX,
        },
        start: 0,
        count: n,
        gather: n <= GATHER,
    }];
    let first_buckets = (n / 8).clamp(2, FIRST_BUCKETS_MAX) as usize;
    for pass in 0..PASSES_MAX {
        if open.is_empty() {
            break;
        }
        let per = if pass == 0 { first_buckets } else { BUCKETS };
        // Where each split interval's buckets begin, and each gathered one's pairs.
        let mut offset = Vec::with_capacity(open.len());
        let (mut buckets, mut gathered) = (0usize, 0usize);
        for iv in &open {
            if iv.gather {
                offset.push(gathered);
                gathered += 1;
            } else {
                offset.push(buckets);
                buckets += per;
            }
        }
        let mut counts = vec![EMPTY; buckets];
        let mut pairs_of: Vec<Vec<OrderKey>> = vec![Vec::new(); gathered];
        engine.for_each_batch(pairs.clone(), |batch| {
            let (value, row) = (f64s(batch, "ms_value")?, u64s(batch, "ms_row")?);
            for r in 0..batch.num_rows() {
                let (Some(value), Some(row)) = (value[r], row[r]) else {
                    continue;
                };
                let k = OrderKey { value, row };
                let i = open
                    .partition_point(|iv| iv.lo.order(&k) != Ordering::Greater)
                    .saturating_sub(1);
                let Some(iv) = open.get(i).filter(|iv| iv.contains(&k)) else {
                    continue;
                };
                if iv.gather {
                    pairs_of[offset[i]].push(k);
                    continue;
                }
                let b = &mut counts[offset[i] + iv.bucket(&k, per)];
                b.count += 1;
                if k.order(&b.lo) == Ordering::Less {
                    b.lo = k;
                }
                if k.order(&b.hi) == Ordering::Greater {
                    b.hi = k;
                }
            }
            Ok(())
        })?;
        let mut next = Vec::new();
        for (i, iv) in open.iter().enumerate() {
            if iv.gather {
                let pairs = &mut pairs_of[offset[i]];
                pairs.sort_unstable_by(OrderKey::order);
                if pairs.len() as u64 != iv.count {
                    return Err(EngineError::Invalid(format!(
                        "{} of {} samples read back between two positions (the dataset changed?)",
                        pairs.len(),
                        iv.count
                    )));
                }
                let from = positions.partition_point(|&p| p < iv.start);
                let to = positions.partition_point(|&p| p < iv.start + iv.count);
                for j in from..to {
                    found[j] = Some(pairs[(positions[j] - iv.start) as usize]);
                }
                continue;
            }
            let mut start = iv.start;
            for b in &counts[offset[i]..offset[i] + per] {
                let range = start..start + b.count;
                let from = positions.partition_point(|&p| p < range.start);
                if b.count > 0 && positions.get(from).is_some_and(|p| range.contains(p)) {
                    next.push(Interval {
                        lo: b.lo,
                        hi: b.hi,
                        start,
                        count: b.count,
                        // No progress (a span past f64's range): gathered whatever its size.
                        gather: b.count <= GATHER
                            || (b.count == iv.count
                                && b.lo.order(&iv.lo) == Ordering::Equal
                                && b.hi.order(&iv.hi) == Ordering::Equal),
                    });
                }
                start = range.end;
            }
            if start != iv.start + iv.count {
                return Err(EngineError::Invalid(format!(
                    "{} of {} samples counted between two positions (the dataset changed?)",
                    start - iv.start,
                    iv.count
                )));
            }
        }
        open = next;
    }
    found
        .into_iter()
        .zip(positions)
        .map(|(k, p)| {
            k.ok_or_else(|| EngineError::Invalid(format!("no sample found at position {p}")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Float64Array, RecordBatch, UInt64Array};

    use super::*;

    /// `keys_at` against a sort of the pairs, at every position, on values with no ties, with
    /// a few values shared by thousands (split by row), all one value, and two values
    /// f64's range apart (a span no bucket width covers).
    #[test]
    fn keys_at_every_position_are_the_sorted_pairs() {
        let engine = Engine::embedded(2).unwrap();
        let n = 5000u64;
        let cases: Vec<(&str, Vec<f64>)> = vec![
            (
                "distinct",
                (0..n).map(|i| ((i * 7919) % n) as f64 * 0.5).collect(),
            ),
            ("ties", (0..n).map(|i| (i % 3) as f64 - 1.0).collect()),
            ("one value", vec![42.0; n as usize]),
            (
                "extremes",
                (0..n)
                    .map(|i| if i % 2 == 0 { -f64::MAX } else { f64::MAX })
                    .collect(),
            ),
        ];
        for (what, values) in cases {
            // Rows out of order, as the dataset's files hold them.
            let rows: Vec<u64> = (0..n).map(|i| (i * 4001) % n + 10).collect();
            let batch = RecordBatch::try_from_iter(vec![
                (
                    "ms_value",
                    Arc::new(Float64Array::from(values.clone())) as _,
                ),
                ("ms_row", Arc::new(UInt64Array::from(rows.clone())) as _),
            ])
            .unwrap();
            let pairs = engine.ctx.read_batch(batch).unwrap();
            let mut want: Vec<OrderKey> = values
                .iter()
                .zip(&rows)
                .map(|(&value, &row)| OrderKey { value, row })
                .collect();
            want.sort_unstable_by(OrderKey::order);
            let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let positions: Vec<u64> = (0..n).collect();
            let got = keys_at(&engine, &pairs, n, (lo, hi), &positions).unwrap();
            assert_eq!(got, want, "{what}");
            let some = [0, 1, 249, 250, n - 1];
            let got = keys_at(&engine, &pairs, n, (lo, hi), &some).unwrap();
            let picked: Vec<OrderKey> = some.iter().map(|&p| want[p as usize]).collect();
            assert_eq!(got, picked, "{what}: some positions");
        }
    }
}
