//! A trace's [`HeapTimeline`] from sums that something else computed: live bytes and blocks per
//! group of blocks (process, thread, call site) at each time point, as a query engine returns
//! them over a Parquet dataset. Built from the call tree alone (no blocks), it is the same
//! model [`crate::trace_timeline_with`] builds from the blocks — same trie, sizes, order, curve,
//! suspects and suppressions — so the views draw one picture whatever computed the sums.
//! Engine-agnostic: `memscape-engine` runs the queries and calls [`grouped_timeline`].

use std::collections::HashMap;

use memscape_trace::Trace;

use crate::evolution::{HeapTimeline, SizesSource, TimePoint, finish};
use crate::suppress::{Suppressed, rules_that_matched};
use crate::suspects::GrowthAccumulator;
use crate::trace_tree::{BlockGroup, GroupKey, HeapOptions, group_trie};
use crate::trie::Sizes;
use crate::view::{Metric, StableOrder};

/// Live requested bytes and blocks of one group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GroupTotal {
    pub group: BlockGroup,
    pub bytes: u64,
    pub blocks: u64,
}

/// One time point: the state after `events` events, at `time` (ns, or `events` again when the
/// trace has no wall time), and the live groups then.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GroupedPoint {
    pub events: u64,
    pub time: u64,
    pub live: Vec<GroupTotal>,
}

/// What a timeline is made of, as computed elsewhere (see [`crate::trace_timeline_with`] for
/// which points: evenly spaced, plus the end and the event right after the peak).
/// Serialized, it is what the GUI keeps of the engine's answer beside a dataset's index
/// (`memscape_engine::heap_kept`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GroupedInput {
    /// Every group that has a heap block or an anonymous mapping, in the order of its first
    /// block (the trie's node order follows it).
    pub groups: Vec<BlockGroup>,
    /// The slider's points, sorted by events, distinct.
    pub points: Vec<GroupedPoint>,
    /// The heap-size curve (time, live bytes).
    pub series: Vec<(u64, u64)>,
    /// Events applied right after the peak (one of the points).
    pub peak_events: u64,
    /// Blocks never freed and their bytes, per group (for the suppressions' summary).
    pub never_freed: Vec<GroupTotal>,
    /// Heap bytes ever allocated per raw call site (the call-site wrapper detection reads them).
    pub site_bytes: Vec<(u32, u64)>,
    pub wall_time: bool,
}

/// Errors of [`grouped_timeline`].
#[derive(Debug, thiserror::Error)]
pub enum GroupedError {
    #[error(
        "grouping by {0} needs each block's size: the query engine's heap views group by process, thread and call stack"
    )]
    Unsupported(&'static str),
    #[error("the computed sums name group {0:?}, which is not among the groups")]
    UnknownGroup(BlockGroup),
    #[error("the peak (after {0} events) is not one of the time points")]
    NoPeakPoint(u64),
}

/// The sizes at each point, precomputed: exact states exist at the points only (the end and
/// the peak among them), so a time between two points has none (`--at` there is refused).
#[derive(Debug, Clone)]
pub struct GroupedSizes {
    points: Vec<TimePoint>,
    sizes: Vec<Sizes>,
    peak_events: u64,
}

impl SizesSource for GroupedSizes {
    fn sizes_at_point(&mut self, point: usize) -> Option<Sizes> {
        self.sizes.get(point).cloned()
    }

    fn peak_events(&self) -> Option<u64> {
        Some(self.peak_events)
    }

    /// The point at `time`, or the end for any time past it.
    fn events_at_time(&self, time: u64) -> Option<u64> {
        let last = self.points.last()?;
        if time >= last.time {
            return Some(last.index);
        }
        self.points.iter().find(|p| p.time == time).map(|p| p.index)
    }

    fn sizes_at_events(&mut self, events: u64) -> Option<(TimePoint, Sizes)> {
        let i = self.points.iter().position(|p| p.index == events)?;
        Some((self.points[i].clone(), self.sizes.get(i)?.clone()))
    }
}

/// The timeline of a trace grouped by `keys` from sums per group: `trace` gives the call tree,
/// threads, processes and meta (its blocks are not read). Errors for keys that need block
/// sizes ([`GroupKey::Size`]) and for sums that name groups not in `input.groups`.
pub fn grouped_timeline(
    trace: &Trace,
    keys: &[GroupKey],
    metric: Metric,
    options: &HeapOptions,
    input: &GroupedInput,
) -> Result<(HeapTimeline, GroupedSizes), GroupedError> {
    if GroupKey::uses_columns(keys).is_none() {
        return Err(GroupedError::Unsupported(GroupKey::Size.name()));
    }
    let mut node_bytes = vec![0u64; trace.call_tree.len()];
    for &(site, bytes) in &input.site_bytes {
        if let Some(slot) = node_bytes.get_mut(site as usize) {
            *slot = slot.saturating_add(bytes);
        }
    }
    let (trie, _, leaves) = group_trie(trace, keys, options, &input.groups, node_bytes);
    let leaf_of: HashMap<BlockGroup, u32> = input.groups.iter().copied().zip(leaves).collect();
    let leaf = |g: &BlockGroup| {
        leaf_of
            .get(g)
            .copied()
            .ok_or(GroupedError::UnknownGroup(*g))
    };
    // The suppressions match call sites: a group's blocks are all suppressed or none.
    let mut rule_of_site: HashMap<u32, Option<usize>> = HashMap::new();
    let mut rule = |site: u32| {
        *rule_of_site
            .entry(site)
            .or_insert_with(|| options.suppressions.rule_of(trace, site))
    };
    let sizes_of = |live: &[GroupTotal], skip: &mut dyn FnMut(u32) -> bool| {
        let mut sizes = Sizes::zeros(trie.len());
        for t in live {
            if skip(t.group.site) {
                continue;
            }
            let n = leaf(&t.group)? as usize;
            sizes.bytes[n] = sizes.bytes[n].wrapping_add(t.bytes);
            sizes.objects[n] = sizes.objects[n].wrapping_add(t.blocks);
        }
        sizes.accumulate(&trie);
        Ok::<Sizes, GroupedError>(sizes)
    };
    let mut acc = GrowthAccumulator::default();
    let mut leaks = GrowthAccumulator::default();
    let mut points = Vec::with_capacity(input.points.len());
    let mut all = Vec::with_capacity(input.points.len());
    for p in &input.points {
        let sizes = sizes_of(&p.live, &mut |_| false)?;
        let kept = sizes_of(&p.live, &mut |site| rule(site).is_some())?;
        acc.add(p.time as f64, &sizes);
        leaks.add(p.time as f64, &kept);
        points.push(TimePoint {
            time: p.time,
            total_bytes: sizes.bytes(0),
            index: p.events,
        });
        all.push(sizes);
    }
    let peak = input
        .points
        .iter()
        .position(|p| p.events == input.peak_events)
        .ok_or(GroupedError::NoPeakPoint(input.peak_events))?;
    let last = all
        .last()
        .cloned()
        .unwrap_or_else(|| Sizes::zeros(trie.len()));
    let order = StableOrder::new(&trie, &last, all.get(peak), metric);
    let suppressed = suppressed_summary(options, &input.never_freed, &mut rule);
    let timeline = finish(
        HeapTimeline {
            source: trace.meta.source.clone(),
            trie,
            order,
            metric,
            points,
            series: input.series.clone(),
            time_unit: String::from(if input.wall_time { "ns" } else { "events" }),
            suspects: Vec::new(),
            suppressed,
            growth: Vec::new(),
            peak_point: 0,
        },
        &acc,
        &leaks,
    );
    let sizes = GroupedSizes {
        points: timeline.points.clone(),
        sizes: all,
        peak_events: input.peak_events,
    };
    Ok((timeline, sizes))
}

/// "suppressed: N blocks": the never-freed blocks of the groups a rule matches.
fn suppressed_summary(
    options: &HeapOptions,
    never_freed: &[GroupTotal],
    rule: &mut dyn FnMut(u32) -> Option<usize>,
) -> Suppressed {
    let mut summary = Suppressed {
        applied: !options.suppressions.is_empty(),
        ..Suppressed::default()
    };
    if options.suppressions.is_empty() {
        return summary;
    }
    let names = options.suppressions.rule_names();
    let mut per_rule = vec![(0u64, 0u64); names.len()];
    for t in never_freed {
        let Some(r) = rule(t.group.site) else {
            continue;
        };
        summary.blocks += t.blocks;
        summary.bytes = summary.bytes.saturating_add(t.bytes);
        if let Some(slot) = per_rule.get_mut(r) {
            slot.0 += t.blocks;
            slot.1 = slot.1.saturating_add(t.bytes);
        }
    }
    summary.by_rule = rules_that_matched(names, per_rule);
    summary
}

/// The [`GroupedInput`] of `trace` computed natively from its blocks, for the points
/// [`crate::trace_timeline_with`] uses: what a query engine must return (the reference of its
/// tests, and of this module's).
pub fn native_input(trace: &Trace, keys: &[GroupKey], point_count: usize) -> GroupedInput {
    use memscape_trace::model::{FLAG_MMAP, FLAG_NEVER_FREED};
    let (by_process, by_thread) = GroupKey::uses_columns(keys).unwrap_or((false, false));
    let mut heap = crate::TraceHeap::new(trace, &[]);
    let (events, series) = crate::evolution::slider_points(&mut heap, point_count);
    let wall = trace.meta.has_wall_time;
    let b = &trace.blocks;
    let n = if b.is_consistent() { b.len() } else { 0 };
    let mut groups = Vec::new();
    let mut index: HashMap<BlockGroup, usize> = HashMap::new();
    // Per group, live bytes/blocks changes at each point (a block is live at the points p with
    // alloc_event < p ≤ free_event).
    let mut delta: Vec<Vec<(i128, i64)>> = Vec::new();
    let mut never: Vec<(u64, u64)> = Vec::new();
    let mut site_bytes: std::collections::BTreeMap<u32, u64> = Default::default();
    for i in 0..n {
        let group = BlockGroup {
            process: if by_process { b.process[i] } else { 0 },
            thread: if by_thread { b.thread[i] } else { 0 },
            site: b.site[i],
        };
        let g = *index.entry(group).or_insert_with(|| {
            groups.push(group);
            delta.push(vec![(0, 0); events.len() + 1]);
            never.push((0, 0));
            groups.len() - 1
        });
        if b.flags[i] & FLAG_MMAP != 0 {
            continue;
        }
        *site_bytes.entry(b.site[i]).or_default() += b.requested_size[i];
        let lo = events.partition_point(|&p| p <= b.alloc_event[i]);
        let hi = events.partition_point(|&p| p <= b.free_event[i]);
        let bytes = i128::from(b.requested_size[i]);
        delta[g][lo].0 += bytes;
        delta[g][lo].1 += 1;
        delta[g][hi].0 -= bytes;
        delta[g][hi].1 -= 1;
        if b.flags[i] & FLAG_NEVER_FREED != 0 {
            never[g].0 += 1;
            never[g].1 += b.requested_size[i];
        }
    }
    let mut points: Vec<GroupedPoint> = events
        .iter()
        .map(|&e| GroupedPoint {
            events: e,
            time: if wall { heap.time_of(e) } else { e },
            live: Vec::new(),
        })
        .collect();
    for (g, d) in delta.iter().enumerate() {
        push_live_totals(&mut points, groups[g], d);
    }
    let never_freed = groups
        .iter()
        .zip(&never)
        .filter(|(_, n)| n.0 > 0)
        .map(|(&group, &(blocks, bytes))| GroupTotal {
            group,
            bytes,
            blocks,
        })
        .collect();
    GroupedInput {
        groups,
        points,
        series,
        peak_events: heap.peak_point(),
        never_freed,
        site_bytes: site_bytes.into_iter().collect(),
        wall_time: wall,
    }
}

/// Adds `group`'s live bytes and blocks at each point to `points`, from its changes per point
/// (`deltas[j]`: what was allocated minus what was freed between points j − 1 and j; a running
/// sum gives what is live at j). Points where nothing of the group is live get no entry. The
/// one place both the native grouping and the query engine's turn changes into totals.
pub fn push_live_totals(points: &mut [GroupedPoint], group: BlockGroup, deltas: &[(i128, i64)]) {
    let (mut bytes, mut blocks) = (0i128, 0i64);
    for (point, d) in points.iter_mut().zip(deltas) {
        bytes += d.0;
        blocks += d.1;
        if blocks > 0 {
            point.live.push(GroupTotal {
                group,
                bytes: bytes as u64,
                blocks: blocks as u64,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both models of one trace compare equal: trie (names and parents), order, points, curve,
    /// sizes at every point, suspects, suppressions.
    pub(crate) fn assert_same(a: &HeapTimeline, b: &HeapTimeline, what: &str) {
        assert_eq!(a.trie.len(), b.trie.len(), "{what}: trie size");
        for n in 0..a.trie.len() as u32 {
            assert_eq!(a.trie.name(n), b.trie.name(n), "{what}: node {n}");
            assert_eq!(a.trie.parent(n), b.trie.parent(n), "{what}: parent of {n}");
        }
        assert_eq!(a.order, b.order, "{what}: order");
        assert_eq!(a.points, b.points, "{what}: points");
        assert_eq!(a.series, b.series, "{what}: curve");
        assert_eq!(a.time_unit, b.time_unit, "{what}");
        assert_eq!(a.suppressed, b.suppressed, "{what}: suppressed");
        assert_eq!(a.peak_point, b.peak_point, "{what}: peak");
        let names = |t: &HeapTimeline| -> Vec<(String, u64)> {
            t.suspects
                .iter()
                .map(|s| (s.name.clone(), s.end_bytes))
                .collect()
        };
        assert_eq!(names(a), names(b), "{what}: suspects");
    }

    #[test]
    fn sums_per_group_give_the_native_timeline() {
        let trace = crate::synthetic::synthetic_trace(6000);
        let options = HeapOptions {
            suppressions: crate::Suppressions::builtin(),
            ..Default::default()
        };
        for keys in [
            vec![GroupKey::Site],
            vec![GroupKey::Thread, GroupKey::Path],
            vec![GroupKey::Callers],
            vec![GroupKey::Process, GroupKey::Module, GroupKey::Function],
        ] {
            let what = format!("{keys:?}");
            let (native, mut native_sizes) =
                crate::trace_timeline_with(&trace, &keys, Metric::Bytes, 30, &options);
            let input = native_input(&trace, &keys, 30);
            let (got, mut sizes) =
                grouped_timeline(&trace, &keys, Metric::Bytes, &options, &input).unwrap();
            assert_same(&got, &native, &what);
            for p in 0..native.points.len() {
                assert_eq!(
                    sizes.sizes_at_point(p),
                    native_sizes.sizes_at_point(p),
                    "{what}: point {p}"
                );
            }
            assert!(native.points.iter().any(|p| p.total_bytes > 0));
            assert_eq!(sizes.peak_events(), native_sizes.peak_events());
            for events in [native_sizes.peak_events().unwrap(), native.points[3].index] {
                assert_eq!(
                    sizes.sizes_at_events(events),
                    native_sizes.sizes_at_events(events),
                    "{what}: after {events} events"
                );
            }
            assert_eq!(
                sizes.events_at_time(u64::MAX),
                native_sizes.events_at_time(u64::MAX)
            );
        }
        let err = grouped_timeline(
            &trace,
            &[GroupKey::Size],
            Metric::Bytes,
            &options,
            &native_input(&trace, &[GroupKey::Size], 4),
        );
        assert!(matches!(err, Err(GroupedError::Unsupported("size"))));
    }
}
