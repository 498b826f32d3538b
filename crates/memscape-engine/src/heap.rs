//! The heap views' timeline from a trace dataset: the slider's time points, the heap-size
//! curve, and the live bytes and blocks per (process, thread, call site) group at every point,
//! each computed by one or two scans of the `blocks` table; the call tree read from the
//! `call_sites` table. `memscape_heap::grouped_timeline` turns that into the same
//! [`HeapTimeline`] the native trace path builds (see the equality tests).
//!
//! The points are the native ones (`memscape_heap::evolution::slider_points`): evenly spaced in
//! wall time (in events without it), the end and the event right after the peak. The event
//! count at a wall time and the time of an event are maxima over the blocks at or before it
//! (times never go backwards in a trace, as the native index assumes too).

use std::collections::HashMap;
use std::ops::Not;

use datafusion::functions_aggregate::expr_fn::{count, max, min, sum};
use datafusion::prelude::{DataFrame, Expr, col, lit};
use memscape_heap::{
    BlockGroup, GroupKey, GroupTotal, GroupedInput, GroupedPoint, GroupedSizes, HeapOptions,
    HeapTimeline, Metric,
};
use memscape_trace::Trace;
use memscape_trace::model::{FLAG_MMAP, FLAG_NEVER_FREED};

use crate::rows::u64s;
use crate::trace::{flag_set, rank_expr, u64_lit};
use crate::{Dataset, Engine, EngineError, Result};

/// The heap timeline of host `host` of `dataset` from the engine's part of it, `input_of` (the
/// host and its skeleton: what [`Engine::grouped_input`] or a kept answer gives).
pub(crate) fn heap_timeline_with(
    dataset: &Dataset,
    host: Option<&str>,
    keys: &[GroupKey],
    metric: Metric,
    options: &HeapOptions,
    input_of: impl FnOnce(&str, &Trace) -> Result<GroupedInput>,
) -> Result<(HeapTimeline, GroupedSizes)> {
    let host = dataset.host(host)?;
    let skeleton = memscape_parquet::trace::read_trace_skeleton(&dataset.dir, Some(&host))?;
    let input = input_of(&host, &skeleton)?;
    memscape_heap::grouped_timeline(&skeleton, keys, metric, options, &input)
        .map_err(|e| EngineError::Invalid(format!("{}: {e}", dataset.dir.display())))
}

impl Engine {
    /// The heap timeline of host `host` of a trace dataset grouped by `keys`, with
    /// `point_count` points on the slider: the model the heap views draw, equal to
    /// `memscape_heap::trace_timeline_with` on the trace the dataset was written from.
    pub fn heap_timeline(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        keys: &[GroupKey],
        metric: Metric,
        point_count: usize,
        options: &HeapOptions,
    ) -> Result<(HeapTimeline, GroupedSizes)> {
        heap_timeline_with(dataset, host, keys, metric, options, |host, skeleton| {
            self.grouped_input(dataset, host, skeleton, keys, point_count)
        })
    }

    /// What [`Engine::heap_timeline`] computes on the engine (`memscape_heap::grouped::
    /// native_input` is its native twin).
    pub fn grouped_input(
        &self,
        dataset: &Dataset,
        host: &str,
        skeleton: &Trace,
        keys: &[GroupKey],
        point_count: usize,
    ) -> Result<GroupedInput> {
        let (by_process, by_thread) = GroupKey::uses_columns(keys).ok_or_else(|| {
            EngineError::Invalid(String::from(
                "grouping by size needs each block's size: the engine's heap views group by process, thread and call stack",
            ))
        })?;
        let meta = &skeleton.meta;
        let events = self.event_count(dataset, Some(host))?;
        let wall = meta.has_wall_time;
        let peak = if meta.peak_live_bytes == 0 {
            0
        } else {
            meta.peak_event.saturating_add(1).min(events)
        };
        let all = self.table("blocks")?.filter(col("host").eq(lit(host)))?;
        let even = |n: usize| -> Result<Vec<u64>> {
            let n = n.max(1) as u64;
            let spaced = |total: u64| -> Vec<u64> {
                (1..=n)
                    .map(|i| ((u128::from(total) * u128::from(i)) / u128::from(n)) as u64)
                    .collect()
            };
            let mut p = if wall {
                self.events_at_times(&all, &spaced(meta.end_time_ns), events)?
            } else {
                spaced(events)
            };
            p.push(events);
            p.push(peak);
            p.sort_unstable();
            p.dedup();
            Ok(p)
        };
        let points = even(point_count.max(2))?;
        let curve_points = even(point_count.max(2) * 4)?;
        let times = |p: &[u64]| -> Result<Vec<u64>> {
            if wall {
                self.times_of(&all, p)
            } else {
                Ok(p.to_vec())
            }
        };
        let curve_times = times(&curve_points)?;
        let series = self.heap_series(dataset, Some(host), &curve_points)?;
        let series = curve_times
            .into_iter()
            .zip(series)
            .map(|(t, (_, bytes))| (t, bytes))
            .collect();

        let mut group_cols = Vec::new();
        if by_process {
            group_cols.push("process");
        }
        if by_thread {
            group_cols.push("thread");
        }
        group_cols.push("site");
        let group_of = |batch: &arrow_array::RecordBatch| -> Result<Vec<BlockGroup>> {
            let column = |name: &str, used: bool| -> Result<Vec<u32>> {
                if !used {
                    return Ok(vec![0; batch.num_rows()]);
                }
                u64s(batch, name)?
                    .into_iter()
                    .map(|v| {
                        v.and_then(|v| u32::try_from(v).ok()).ok_or_else(|| {
                            EngineError::Invalid(format!("{name} out of range in a result"))
                        })
                    })
                    .collect()
            };
            let (p, t, s) = (
                column("process", by_process)?,
                column("thread", by_thread)?,
                column("site", true)?,
            );
            let groups: Vec<BlockGroup> = (0..batch.num_rows())
                .map(|r| BlockGroup {
                    process: p[r],
                    thread: t[r],
                    site: s[r],
                })
                .collect();
            check_groups(skeleton, &groups)?;
            Ok(groups)
        };
        let cols = || group_cols.iter().map(|c| col(*c)).collect::<Vec<Expr>>();

        // The groups in the order of their first block (mappings too: the native trie meets
        // every block).
        let first = all
            .clone()
            .aggregate(cols(), vec![min(col("alloc_event")).alias("first")])?;
        let mut groups: Vec<(u64, BlockGroup)> = Vec::new();
        for batch in self.collect(first)? {
            let first = u64s(&batch, "first")?;
            for (g, f) in group_of(&batch)?.into_iter().zip(first) {
                groups.push((f.unwrap_or(0), g));
            }
        }
        groups.sort_unstable();

        // Live sums per group at each point: allocations and frees bucketed by the number of
        // points at or before them, then prefix sums per group.
        let heap = all.clone().filter(flag_set(FLAG_MMAP).not())?;
        let k = points.len();
        let mut delta: HashMap<BlockGroup, Vec<(i128, i64)>> = HashMap::new();
        let sums = || {
            vec![
                sum(col("requested_size")).alias("bytes"),
                count(lit(1u8)).alias("blocks"),
            ]
        };
        for (column, frame, sign) in [
            ("alloc_event", heap.clone(), 1),
            (
                "free_event",
                heap.clone().filter(flag_set(FLAG_NEVER_FREED).not())?,
                -1,
            ),
        ] {
            let mut by = cols();
            by.push(rank_expr(&col(column), &points, 0)?.alias("bucket"));
            let df = frame.aggregate(by, sums())?;
            for batch in self.collect(df)? {
                let (bucket, bytes, blocks) = (
                    u64s(&batch, "bucket")?,
                    u64s(&batch, "bytes")?,
                    u64s(&batch, "blocks")?,
                );
                for (r, g) in group_of(&batch)?.into_iter().enumerate() {
                    let d = delta.entry(g).or_insert_with(|| vec![(0, 0); k + 1]);
                    let b = bucket[r].unwrap_or(0) as usize;
                    if let Some(slot) = d.get_mut(b) {
                        slot.0 += sign as i128 * i128::from(bytes[r].unwrap_or(0));
                        slot.1 += sign * blocks[r].unwrap_or(0) as i64;
                    }
                }
            }
        }
        let mut point_rows: Vec<GroupedPoint> = points
            .iter()
            .zip(times(&points)?)
            .map(|(&events, time)| GroupedPoint {
                events,
                time,
                live: Vec::new(),
            })
            .collect();
        for (_, g) in &groups {
            let Some(d) = delta.get(g) else { continue };
            memscape_heap::grouped::push_live_totals(&mut point_rows, *g, d);
        }

        // Never-freed heap blocks per group (the suppressions' summary).
        let never = heap
            .clone()
            .filter(flag_set(FLAG_NEVER_FREED))?
            .aggregate(cols(), sums())?;
        let mut never_freed = Vec::new();
        for batch in self.collect(never)? {
            let (bytes, blocks) = (u64s(&batch, "bytes")?, u64s(&batch, "blocks")?);
            for (r, group) in group_of(&batch)?.into_iter().enumerate() {
                never_freed.push(GroupTotal {
                    group,
                    bytes: bytes[r].unwrap_or(0),
                    blocks: blocks[r].unwrap_or(0),
                });
            }
        }
        never_freed.sort_by_key(|t| t.group);
        // Heap bytes ever allocated per call site (call-site wrapper detection).
        let per_site = heap.clone().aggregate(
            vec![col("site")],
            vec![sum(col("requested_size")).alias("bytes")],
        )?;
        let mut site_bytes = Vec::new();
        for batch in self.collect(per_site)? {
            let (site, bytes) = (u64s(&batch, "site")?, u64s(&batch, "bytes")?);
            for (s, b) in site.into_iter().zip(bytes) {
                let s = s.and_then(|s| u32::try_from(s).ok()).ok_or_else(|| {
                    EngineError::Invalid(String::from("site out of range in a result"))
                })?;
                site_bytes.push((s, b.unwrap_or(0)));
            }
        }
        site_bytes.sort_unstable();
        Ok(GroupedInput {
            groups: groups.into_iter().map(|(_, g)| g).collect(),
            points: point_rows,
            series,
            peak_events: peak,
            never_freed,
            site_bytes,
            wall_time: wall,
        })
    }

    /// Events applied at each wall time of `times` (ns): past every allocation and free at or
    /// before it, at most `events`.
    fn events_at_times(&self, blocks: &DataFrame, times: &[u64], events: u64) -> Result<Vec<u64>> {
        // A row counts for time t when its time τ ≤ t: its bucket is #{t < τ} = #{t + 1 ≤ τ}.
        let shifted: Vec<u64> = times.iter().map(|t| t.saturating_add(1)).collect();
        let freed = blocks.clone().filter(flag_set(FLAG_NEVER_FREED).not())?;
        let after = |e: &str| col(e) + u64_lit(1);
        let got = self.prefix_max(
            &[
                (blocks.clone(), "alloc_time_ns", after("alloc_event")),
                (freed, "free_time_ns", after("free_event")),
            ],
            &shifted,
        )?;
        Ok(got.into_iter().map(|e| e.min(events)).collect())
    }

    /// Wall time of the state after each of `points` events: the time of the last event
    /// applied (0 for none).
    fn times_of(&self, blocks: &DataFrame, points: &[u64]) -> Result<Vec<u64>> {
        let freed = blocks.clone().filter(flag_set(FLAG_NEVER_FREED).not())?;
        self.prefix_max(
            &[
                (blocks.clone(), "alloc_event", col("alloc_time_ns")),
                (freed, "free_event", col("free_time_ns")),
            ],
            points,
        )
    }

    /// For each of `thresholds`: the largest `value` over the rows of every (frame, key, value)
    /// whose `key` is below it (0 when none).
    fn prefix_max(
        &self,
        parts: &[(DataFrame, &str, Expr)],
        thresholds: &[u64],
    ) -> Result<Vec<u64>> {
        let mut sorted = thresholds.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let mut best = vec![0u64; sorted.len() + 1];
        for (frame, key, value) in parts {
            let df = frame.clone().aggregate(
                vec![rank_expr(&col(*key), &sorted, 0)?.alias("bucket")],
                vec![max(value.clone()).alias("value")],
            )?;
            for batch in self.collect(df)? {
                let (bucket, value) = (u64s(&batch, "bucket")?, u64s(&batch, "value")?);
                for (b, v) in bucket.into_iter().zip(value) {
                    if let Some(slot) = best.get_mut(b.unwrap_or(0) as usize) {
                        *slot = (*slot).max(v.unwrap_or(0));
                    }
                }
            }
        }
        let mut acc = 0;
        let running: Vec<u64> = best
            .iter()
            .map(|&v| {
                acc = acc.max(v);
                acc
            })
            .collect();
        // Threshold j counts the buckets 0..=j (rows below it).
        Ok(thresholds
            .iter()
            .map(|t| running[sorted.partition_point(|x| x < t)])
            .collect())
    }
}

/// Groups name nodes, threads and processes of the call tree read from the dataset.
fn check_groups(trace: &Trace, groups: &[BlockGroup]) -> Result<()> {
    let (nodes, threads, processes) = (
        trace.call_tree.len(),
        trace.threads.len().max(1),
        trace.processes.len().max(1),
    );
    match groups.iter().find(|g| {
        g.site as usize >= nodes || g.thread as usize >= threads || g.process as usize >= processes
    }) {
        Some(g) => Err(EngineError::Invalid(format!(
            "blocks name {g:?}, outside the dataset's {nodes} call sites, {threads} threads, {processes} processes"
        ))),
        None => Ok(()),
    }
}
