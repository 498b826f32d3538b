//! Allocation-trace aggregations: the heap-size series at chosen time points and the live heap
//! grouped by call site at a time point, over the `blocks` table of a trace dataset.
//!
//! A time point is an event count `p` (the state after `p` events, as `memscape-heap`'s
//! `TraceHeap` counts them): a block is live at `p` when `alloc_event < p ≤ free_event`.
//! Anonymous mappings (`flags & 8`) are not heap and are left out, as natively.

use std::ops::Not;

use datafusion::common::ScalarValue;
use datafusion::functions_aggregate::expr_fn::{count, sum};
use datafusion::logical_expr::{BinaryExpr, Operator};
use datafusion::prelude::{Expr, col, lit, when};
use memscape_trace::model::{FLAG_MMAP, FLAG_NEVER_FREED};

use crate::rows::u64s;
use crate::{Dataset, Engine, EngineError, Result};

/// Live bytes and blocks of one call site (the leaf node of the allocating stack).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct SiteTotal {
    pub site: u32,
    pub bytes: u64,
    pub blocks: u64,
}

pub(crate) fn flag_set(flag: u8) -> Expr {
    Expr::BinaryExpr(BinaryExpr::new(
        Box::new(col("flags")),
        Operator::BitwiseAnd,
        Box::new(lit(ScalarValue::UInt8(Some(flag)))),
    ))
    .not_eq(lit(ScalarValue::UInt8(Some(0))))
}

pub(crate) fn u64_lit(v: u64) -> Expr {
    lit(ScalarValue::UInt64(Some(v)))
}

/// `#{points ≤ e}` for sorted, distinct `points`, as a balanced tree of CASE expressions (depth
/// log₂ of the number of points, so one scan buckets every row against every point).
pub(crate) fn rank_expr(e: &Expr, points: &[u64], offset: u64) -> Result<Expr> {
    if points.is_empty() {
        return Ok(u64_lit(offset));
    }
    let mid = points.len() / 2;
    let below = rank_expr(e, &points[..mid], offset)?;
    let above = rank_expr(e, &points[mid + 1..], offset + mid as u64 + 1)?;
    Ok(when(e.clone().lt(u64_lit(points[mid])), below).otherwise(above)?)
}

impl Engine {
    /// Live requested bytes after each of `points` events (the heap-size series), for host
    /// `host` of a trace dataset: one scan of the blocks, each allocation and free bucketed by
    /// the number of points at or before it, then prefix sums over the (few) buckets.
    pub fn heap_series(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        points: &[u64],
    ) -> Result<Vec<(u64, u64)>> {
        let host = dataset.host(host)?;
        let mut sorted = points.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let k = sorted.len();
        let blocks = self.table("blocks")?.filter(
            col("host")
                .eq(lit(host.as_str()))
                .and(flag_set(FLAG_MMAP).not()),
        )?;
        // delta[j]: bytes allocated (resp. freed) by events with exactly j points at or before
        // them; live(p_j) = Σ_{i<j} (alloc[i] − free[i]).
        let alloc = blocks.clone().aggregate(
            vec![rank_expr(&col("alloc_event"), &sorted, 0)?.alias("bucket")],
            vec![sum(col("requested_size")).alias("bytes")],
        )?;
        let freed = blocks.filter(flag_set(FLAG_NEVER_FREED).not())?.aggregate(
            vec![rank_expr(&col("free_event"), &sorted, 0)?.alias("bucket")],
            vec![sum(col("requested_size")).alias("bytes")],
        )?;
        let mut delta = vec![0i128; k + 1];
        for (df, sign) in [(alloc, 1i128), (freed, -1i128)] {
            for batch in self.collect(df)? {
                let (bucket, bytes) = (u64s(&batch, "bucket")?, u64s(&batch, "bytes")?);
                for (b, v) in bucket.into_iter().zip(bytes) {
                    let b = b.unwrap_or(0) as usize;
                    if let Some(slot) = delta.get_mut(b) {
                        *slot += sign * i128::from(v.unwrap_or(0));
                    }
                }
            }
        }
        let mut live_at = Vec::with_capacity(k);
        let mut acc = 0i128;
        for d in delta.iter().take(k) {
            acc += d;
            live_at.push(acc as u64);
        }
        Ok(points
            .iter()
            .map(|p| {
                let j = sorted.partition_point(|&x| x < *p);
                (*p, live_at.get(j).copied().unwrap_or(0))
            })
            .collect())
    }

    /// Live blocks and requested bytes per call site after `point` events, for host `host`,
    /// sorted by site.
    pub fn live_by_site(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        point: u64,
    ) -> Result<Vec<SiteTotal>> {
        let host = dataset.host(host)?;
        let df = self
            .table("blocks")?
            .filter(
                col("host")
                    .eq(lit(host.as_str()))
                    .and(flag_set(FLAG_MMAP).not())
                    .and(col("alloc_event").lt(u64_lit(point)))
                    .and(col("free_event").gt_eq(u64_lit(point))),
            )?
            .aggregate(
                vec![col("site")],
                vec![
                    sum(col("requested_size")).alias("bytes"),
                    count(lit(1u8)).alias("blocks"),
                ],
            )?;
        let mut out = Vec::new();
        for batch in self.collect(df)? {
            let (site, bytes, blocks) = (
                u64s(&batch, "site")?,
                u64s(&batch, "bytes")?,
                u64s(&batch, "blocks")?,
            );
            for ((s, b), n) in site.into_iter().zip(bytes).zip(blocks) {
                let site = s
                    .and_then(|s| u32::try_from(s).ok())
                    .ok_or_else(|| EngineError::Invalid(String::from("site out of range")))?;
                out.push(SiteTotal {
                    site,
                    bytes: b.unwrap_or(0),
                    blocks: n.unwrap_or(0),
                });
            }
        }
        out.sort_by_key(|t| t.site);
        Ok(out)
    }

    /// Events of host `host` (the last time point), from the manifest.
    pub fn event_count(&self, dataset: &Dataset, host: Option<&str>) -> Result<u64> {
        let host = dataset.host(host)?;
        let meta = &dataset.manifest.hosts[&host].meta;
        meta.get("events")
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| EngineError::Invalid(format!("host {host:?}: no event count")))
    }
}
