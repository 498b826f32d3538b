//! Bins over time windows: the occupancy bars and per-bin metrics of the allocation map
//! (`memscape_trace::metrics::BinMetrics::sample`) from the `blocks` table of a trace dataset.
//!
//! Blocks are partitioned by thread or by size class (powers of two or given boundaries, on the
//! requested size, as `memscape_trace::bins::Bins`). One scan groups allocations and frees by
//! (bin key, window bucket) — the bucket is the number of window boundaries at or before the
//! event, a balanced CASE tree — and prefix sums over the few buckets give each bin's state at
//! the end of every window. Occupancy counts block extents (`size`), as natively; unlike the
//! heap series, anonymous mappings are included, as they are in the map's bins.

use std::ops::Not;

use datafusion::functions_aggregate::expr_fn::{count, sum};
use datafusion::prelude::{DataFrame, Expr, col, lit, when};
use memscape_trace::metrics::TimeAxis;
use memscape_trace::model::FLAG_NEVER_FREED;

use crate::rows::u64s;
use crate::trace::{flag_set, rank_expr, u64_lit};
use crate::{Dataset, Engine, EngineError, Result};

/// How blocks are put into bins (the engine's side of `memscape_trace::bins::BinBy`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BinKey {
    /// The allocating thread (`blocks.thread`).
    Thread,
    /// `[2^(k−1), 2^k)` of the requested size: key k (0 for size 0).
    SizePow2,
    /// `[0, b0)`, `[b0, b1)`, …: key = number of boundaries ≤ the requested size.
    SizeBoundaries(Vec<u64>),
}

/// One bin's state at the end of each window, and its events inside each window.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct BinWindows {
    /// Thread, size class, or boundary rank.
    pub key: u64,
    /// Start of each window.
    pub start: Vec<u64>,
    /// Bytes of live block extents at the end of each window.
    pub occupancy: Vec<u64>,
    pub live_blocks: Vec<u64>,
    /// Allocations and frees inside each window.
    pub events: Vec<u64>,
    /// `usable − requested` over live blocks whose usable size is known.
    pub waste: Vec<u64>,
}

/// Per (key, bucket): bytes, blocks, waste of the events there.
type Buckets = std::collections::BTreeMap<u64, Vec<[i128; 3]>>;

impl Engine {
    /// Every non-empty bin's metrics over `windows` equal windows of `[t0, t1)` on `axis`
    /// (event numbers or ns since the start), for host `host`, sorted by key: equal to
    /// `BinMetrics::sample` of the same bins.
    #[allow(clippy::too_many_arguments)]
    pub fn bin_windows(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        by: &BinKey,
        axis: TimeAxis,
        t0: u64,
        t1: u64,
        windows: usize,
    ) -> Result<Vec<BinWindows>> {
        let host = dataset.host(host)?;
        if windows == 0 || t1 <= t0 {
            return Ok(Vec::new());
        }
        let span = u128::from(t1 - t0);
        let end_of = |c: usize| {
            t0 + u64::try_from(span * (c as u128 + 1) / windows as u128).unwrap_or(u64::MAX)
        };
        // Distinct sorted boundaries: t0 and every window's end.
        let mut bounds: Vec<u64> = std::iter::once(t0)
            .chain((0..windows).map(end_of))
            .collect();
        bounds.dedup();
        let (alloc_key, free_key) = match axis {
            TimeAxis::EventIndex => ("alloc_event", "free_event"),
            TimeAxis::WallNs => ("alloc_time_ns", "free_time_ns"),
        };
        let blocks = self
            .table("blocks")?
            .filter(col("host").eq(lit(host.as_str())))?;
        let key = bin_key_expr(by)?;
        let waste = when(
            col("usable_size")
                .not_eq(u64_lit(0))
                .and(col("usable_size").gt(col("requested_size"))),
            col("usable_size") - col("requested_size"),
        )
        .otherwise(u64_lit(0))?;
        let grouped = |df: DataFrame, time: &str| -> Result<DataFrame> {
            Ok(df.aggregate(
                vec![
                    key.clone().alias("key"),
                    rank_expr(&col(time), &bounds, 0)?.alias("bucket"),
                ],
                vec![
                    sum(col("size")).alias("bytes"),
                    count(lit(1u8)).alias("blocks"),
                    sum(waste.clone()).alias("waste"),
                ],
            )?)
        };
        let allocs = grouped(blocks.clone(), alloc_key)?;
        let frees = grouped(blocks.filter(flag_set(FLAG_NEVER_FREED).not())?, free_key)?;
        let mut alloc_buckets = Buckets::new();
        let mut free_buckets = Buckets::new();
        for (df, out) in [(allocs, &mut alloc_buckets), (frees, &mut free_buckets)] {
            for batch in self.collect(df)? {
                let (k, b) = (u64s(&batch, "key")?, u64s(&batch, "bucket")?);
                let (bytes, n, w) = (
                    u64s(&batch, "bytes")?,
                    u64s(&batch, "blocks")?,
                    u64s(&batch, "waste")?,
                );
                for r in 0..batch.num_rows() {
                    let key = k[r].ok_or_else(|| EngineError::Invalid("null bin key".into()))?;
                    let slots = out
                        .entry(key)
                        .or_insert_with(|| vec![[0; 3]; bounds.len() + 1]);
                    let slot = b[r]
                        .and_then(|b| slots.get_mut(b as usize))
                        .ok_or_else(|| EngineError::Invalid("bucket out of range".into()))?;
                    for (s, v) in slot.iter_mut().zip([bytes[r], n[r], w[r]]) {
                        *s += i128::from(v.unwrap_or(0));
                    }
                }
            }
        }
        let empty = vec![[0i128; 3]; bounds.len() + 1];
        let mut out = Vec::new();
        for (&key, allocs) in &alloc_buckets {
            let frees = free_buckets.get(&key).unwrap_or(&empty);
            // cum[i]: totals of the events before bounds[i] (ranks 0..=i).
            let prefix = |v: &[[i128; 3]]| {
                let mut acc = [0i128; 3];
                v.iter()
                    .take(bounds.len())
                    .map(|x| {
                        for (a, b) in acc.iter_mut().zip(x) {
                            *a += b;
                        }
                        acc
                    })
                    .collect::<Vec<_>>()
            };
            let (ca, cf) = (prefix(allocs), prefix(frees));
            let at = |x: u64| bounds.binary_search(&x).unwrap_or(0);
            let live = |i: usize, f: usize| u64::try_from(ca[i][f] - cf[i][f]).unwrap_or(0);
            let count_before = |i: usize| ca[i][1] + cf[i][1];
            let mut w = BinWindows {
                key,
                ..BinWindows::default()
            };
            for c in 0..windows {
                let start = if c == 0 { t0 } else { end_of(c - 1) };
                let (i0, i1) = (at(start), at(end_of(c)));
                w.start.push(start);
                w.occupancy.push(live(i1, 0));
                w.live_blocks.push(live(i1, 1));
                w.waste.push(live(i1, 2));
                w.events
                    .push(u64::try_from(count_before(i1) - count_before(i0)).unwrap_or(0));
            }
            out.push(w);
        }
        Ok(out)
    }
}

/// The bin key of a block as an expression over `blocks`.
fn bin_key_expr(by: &BinKey) -> Result<Expr> {
    Ok(match by {
        BinKey::Thread => col("thread"),
        BinKey::SizePow2 => {
            let powers: Vec<u64> = (0..64).map(|k| 1u64 << k).collect();
            rank_expr(&col("requested_size"), &powers, 0)?
        }
        BinKey::SizeBoundaries(bounds) => {
            let mut bounds = bounds.clone();
            bounds.sort_unstable();
            bounds.dedup();
            rank_expr(&col("requested_size"), &bounds, 0)?
        }
    })
}
