//! The heap over time as the interactive views need it: the time points a user steps through,
//! the heap-size curve above the slider, the stable sibling order and the leak suspects,
//! computed once ([`HeapTimeline`]), plus a source of the group sizes at any time point
//! ([`SizesSource`]) that the GUI keeps on a worker thread (a trace's source borrows the trace).

use crate::massif::MassifFile;
use crate::massif_tree::MassifHeap;
use crate::suspects::{GrowthAccumulator, LeakSuspect};
use crate::trace_tree::{GroupKey, HeapCarry, HeapOptions, TraceHeap};
use crate::trie::{GroupTrie, Sizes};
use crate::view::{Metric, StableOrder};
use memscape_trace::Trace;

/// One time point of the slider.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TimePoint {
    /// In [`HeapTimeline::time_unit`].
    pub time: u64,
    pub total_bytes: u64,
    /// Massif: the snapshot number; traces: the number of events applied.
    pub index: u64,
}

/// Everything about a heap's evolution that does not depend on the time point shown.
#[derive(Debug, Clone)]
pub struct HeapTimeline {
    pub source: String,
    pub trie: GroupTrie,
    pub order: StableOrder,
    pub metric: Metric,
    pub points: Vec<TimePoint>,
    /// The heap-size curve (time, bytes), denser than the points where the input allows.
    pub series: Vec<(u64, u64)>,
    /// `ns`, `events`, or massif's `i`, `ms`, `B`.
    pub time_unit: String,
    /// Leaves ranked by growth over the points (see [`crate::suspects`]), without the blocks
    /// the suppressions match.
    pub suspects: Vec<LeakSuspect>,
    /// What the suppressions left out of the suspects ("suppressed: N blocks").
    pub suppressed: crate::suppress::Suppressed,
    /// Slope of every trie node's bytes over the points (hover's "growth"), per time unit.
    pub growth: Vec<f64>,
    /// The point with the most live bytes.
    pub peak_point: usize,
}

/// Sizes of every trie node at a time point of a [`HeapTimeline`].
pub trait SizesSource: Send {
    fn sizes_at_point(&mut self, point: usize) -> Option<Sizes>;

    /// Blocks (indices into the trace's block columns) of a group and its descendants, for
    /// highlighting them in the allocation map; None when the input has no blocks (massif).
    fn blocks_in_group(&self, _group: u32) -> Option<Vec<u32>> {
        None
    }

    /// The group (trie leaf) of a block, for showing a block picked in the allocation map.
    fn group_of_block(&self, _block: u32) -> Option<u32> {
        None
    }

    /// Events applied at `time` (in the timeline's unit), for inputs made of events (traces);
    /// None for massif, whose trees exist only at its detailed snapshots.
    fn events_at_time(&self, _time: u64) -> Option<u64> {
        None
    }

    /// Events applied right after the heap peak (traces).
    fn peak_events(&self) -> Option<u64> {
        None
    }

    /// The exact state after `events` events, off the slider's points (a time chosen in the
    /// allocation map, `--at`, `--times`): its time point and sizes. Traces only.
    fn sizes_at_events(&mut self, _events: u64) -> Option<(TimePoint, Sizes)> {
        None
    }

    /// What a live recording's next snapshot continues from (a copy of the grouping; wrapper
    /// detection's state moved, not copied); None for a heap not built to be continued (see
    /// [`TraceSizes::carry`]).
    fn carry(&mut self) -> Option<HeapCarry> {
        None
    }
}

/// Massif: the detailed snapshots.
pub struct MassifSizes {
    heap: MassifHeap,
}

impl SizesSource for MassifSizes {
    fn sizes_at_point(&mut self, point: usize) -> Option<Sizes> {
        self.heap.sizes(point)
    }
}

/// A trace: `points` event counts, sizes built incrementally from the previous request.
pub struct TraceSizes<'a> {
    heap: TraceHeap<'a>,
    applied: Vec<u64>,
}

impl<'a> TraceSizes<'a> {
    /// What the next snapshot's [`trace_timeline_continued`] starts from (a heap built by
    /// it only).
    pub fn carry(&mut self) -> Option<HeapCarry> {
        self.heap.carry()
    }

    /// The underlying index, for time points that are not on the slider (`--at`, `--peak`).
    pub fn heap_mut(&mut self) -> &mut TraceHeap<'a> {
        &mut self.heap
    }
}

impl SizesSource for TraceSizes<'_> {
    fn sizes_at_point(&mut self, point: usize) -> Option<Sizes> {
        let applied = *self.applied.get(point)?;
        Some(self.heap.sizes_at(applied))
    }

    fn blocks_in_group(&self, group: u32) -> Option<Vec<u32>> {
        Some(self.heap.blocks_in_group(group))
    }

    fn group_of_block(&self, block: u32) -> Option<u32> {
        self.heap.block_group(block as usize)
    }

    fn events_at_time(&self, time: u64) -> Option<u64> {
        Some(if self.heap.trace().meta.has_wall_time {
            self.heap.events_at_time(time)
        } else {
            time.min(self.heap.events())
        })
    }

    fn peak_events(&self) -> Option<u64> {
        Some(self.heap.peak_point())
    }

    fn carry(&mut self) -> Option<HeapCarry> {
        self.heap.carry()
    }

    fn sizes_at_events(&mut self, events: u64) -> Option<(TimePoint, Sizes)> {
        let events = events.min(self.heap.events());
        let sizes = self.heap.sizes_at(events);
        let time = if self.heap.trace().meta.has_wall_time {
            self.heap.time_of(events)
        } else {
            events
        };
        let point = TimePoint {
            time,
            total_bytes: sizes.bytes(0),
            index: events,
        };
        Some((point, sizes))
    }
}

// TraceHeap holds only shared references to an immutable Trace.
fn _assert_send() {
    fn is_send<T: Send>() {}
    is_send::<TraceSizes<'static>>();
}

/// Fills in what follows from the points: suspects (from `leaks`: the sizes without suppressed
/// blocks), growth (from `acc`: every block), peak.
pub(crate) fn finish(
    mut timeline: HeapTimeline,
    acc: &GrowthAccumulator,
    leaks: &GrowthAccumulator,
) -> HeapTimeline {
    timeline.suspects = leaks.rank(&timeline.trie, None);
    timeline.growth = (0..timeline.trie.len() as u32)
        .map(|n| acc.slope_of(n))
        .collect();
    timeline.peak_point = timeline
        .points
        .iter()
        .enumerate()
        .max_by_key(|(i, p)| (p.total_bytes, std::cmp::Reverse(*i)))
        .map_or(0, |(i, _)| i);
    timeline
}

/// The timeline of a massif file: one point per detailed snapshot; the curve from every snapshot.
pub fn massif_timeline(file: &MassifFile, metric: Metric) -> (HeapTimeline, MassifSizes) {
    let heap = MassifHeap::new(file);
    let snapshots = heap.snapshot_indices();
    let mut acc = GrowthAccumulator::default();
    let mut points = Vec::with_capacity(snapshots.len());
    let mut last = Sizes::default();
    for (point, &s) in snapshots.iter().enumerate() {
        let (Some(sizes), Some(snap)) = (heap.sizes(point), file.snapshots.get(s)) else {
            continue;
        };
        acc.add(snap.time as f64, &sizes);
        points.push(TimePoint {
            time: snap.time,
            total_bytes: snap.mem_heap_b,
            index: snap.number,
        });
        last = sizes;
    }
    let peak = file
        .marked_peak()
        .and_then(|p| heap.point_of_snapshot(p))
        .and_then(|p| heap.sizes(p));
    let order = StableOrder::new(heap.trie(), &last, peak.as_ref(), metric);
    let timeline = finish(
        HeapTimeline {
            source: file.source.clone(),
            trie: heap.trie().clone(),
            order,
            metric,
            points,
            series: file.heap_series(),
            time_unit: file.time_unit.clone(),
            suspects: Vec::new(),
            suppressed: Default::default(),
            growth: Vec::new(),
            peak_point: 0,
        },
        &acc,
        &acc,
    );
    (timeline, MassifSizes { heap })
}

/// The slider's points of a trace (event counts: `point_count` evenly spaced in wall time, in
/// events without it, plus the trace end and the event right after the peak) and the heap-size
/// curve at 4× that resolution, against the points' time.
pub fn slider_points(heap: &mut TraceHeap<'_>, point_count: usize) -> (Vec<u64>, Vec<(u64, u64)>) {
    let wall = heap.trace().meta.has_wall_time;
    let even = |heap: &TraceHeap<'_>, n: usize| {
        let mut p = if wall {
            heap.even_points_in_time(n)
        } else {
            heap.even_points(n)
        };
        // The end of the run and the exact peak are points too: a short spike between two
        // evenly spaced points would otherwise be missed by the curve and the "peak" button.
        p.push(heap.events());
        p.push(heap.peak_point());
        p.sort_unstable();
        p.dedup();
        p
    };
    let applied = even(heap, point_count.max(2));
    let curve_points = even(heap, point_count.max(2) * 4);
    // heap_series is indexed by events; the curve is drawn against the points' time.
    let series: Vec<(u64, u64)> = heap
        .heap_series(&curve_points)
        .into_iter()
        .map(|(applied, bytes)| (if wall { heap.time_of(applied) } else { applied }, bytes))
        .collect();
    (applied, series)
}

/// The timeline of a trace grouped by `keys`: `point_count` points evenly spaced in wall time
/// (in events when the trace has no wall time), plus the trace end and the peak; the curve at
/// 4× that resolution.
pub fn trace_timeline<'a>(
    trace: &'a Trace,
    keys: &[GroupKey],
    metric: Metric,
    point_count: usize,
) -> (HeapTimeline, TraceSizes<'a>) {
    trace_timeline_with(trace, keys, metric, point_count, &HeapOptions::default())
}

/// [`trace_timeline`] with explicit call-site rules and suppressions.
pub fn trace_timeline_with<'a>(
    trace: &'a Trace,
    keys: &[GroupKey],
    metric: Metric,
    point_count: usize,
    options: &HeapOptions,
) -> (HeapTimeline, TraceSizes<'a>) {
    timeline_of(
        TraceHeap::with_options(trace, keys, options),
        metric,
        point_count,
    )
}

/// [`trace_timeline_with`] on a snapshot of a recording that goes on, its grouping continued
/// from an earlier snapshot's ([`TraceSizes::carry`]; see [`TraceHeap::continued`]): equal to
/// the full build.
pub fn trace_timeline_continued<'a>(
    trace: &'a Trace,
    keys: &[GroupKey],
    metric: Metric,
    point_count: usize,
    options: &HeapOptions,
    carry: Option<HeapCarry>,
) -> (HeapTimeline, TraceSizes<'a>) {
    let heap = TraceHeap::continued(trace, keys, options, carry);
    let started = std::time::Instant::now();
    let got = timeline_of(heap, metric, point_count);
    tracing::debug!(
        target: "memscape::live",
        ms = started.elapsed().as_secs_f64() * 1e3,
        "heap timeline's points"
    );
    got
}

fn timeline_of<'a>(
    mut heap: TraceHeap<'a>,
    metric: Metric,
    point_count: usize,
) -> (HeapTimeline, TraceSizes<'a>) {
    let trace = heap.trace();
    let wall = trace.meta.has_wall_time;
    let (applied, series) = slider_points(&mut heap, point_count);
    let mut acc = GrowthAccumulator::default();
    let mut leaks = GrowthAccumulator::default();
    let mut points = Vec::with_capacity(applied.len());
    let mut sizes = Sizes::default();
    // The peak is one of the points: its sizes are kept on the way, not sought again.
    let peak_at = heap.peak_point();
    let mut peak = None;
    for &a in &applied {
        heap.sizes_into(a, &mut sizes);
        if a == peak_at {
            peak = Some(sizes.clone());
        }
        let time = if wall { heap.time_of(a) } else { a };
        acc.add(time as f64, &sizes);
        leaks.add(time as f64, &heap.without_suppressed(&sizes, a));
        points.push(TimePoint {
            time,
            total_bytes: sizes.bytes(0),
            index: a,
        });
    }
    let last = sizes;
    let peak = peak.unwrap_or_else(|| heap.sizes_at(peak_at));
    let order = StableOrder::new(heap.trie(), &last, Some(&peak), metric);
    let timeline = finish(
        HeapTimeline {
            source: trace.meta.source.clone(),
            trie: heap.trie().clone(),
            order,
            metric,
            points,
            series,
            time_unit: String::from(if wall { "ns" } else { "events" }),
            suspects: Vec::new(),
            suppressed: heap.suppressed().clone(),
            growth: Vec::new(),
            peak_point: 0,
        },
        &acc,
        &leaks,
    );
    (timeline, TraceSizes { heap, applied })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_sizes_between_points_match_a_fresh_index() {
        let trace = crate::synthetic::synthetic_trace(4000);
        let (timeline, mut source) = trace_timeline(&trace, &[GroupKey::Site], Metric::Bytes, 8);
        let mut fresh = TraceHeap::new(&trace, &[GroupKey::Site]);
        // Event counts between the slider's points, in any order.
        for events in [1234u64, 17, 3999, 2500, 0] {
            let (point, sizes) = source.sizes_at_events(events).unwrap();
            assert_eq!(point.index, events);
            assert_eq!(sizes, fresh.sizes_at(events));
            assert_eq!(point.total_bytes, sizes.bytes(0));
        }
        let t = timeline.points[3].time + 1;
        let e = source.events_at_time(t).unwrap();
        assert!(e >= timeline.points[3].index);
        assert_eq!(source.peak_events(), Some(fresh.peak_point()));
    }

    #[test]
    fn the_peak_is_a_point_of_the_timeline_and_of_its_curve() {
        // 100 small blocks, and at event 57 a 1 MiB block freed by the next event: a spike
        // that evenly spaced points miss.
        let mut b = memscape_trace::TraceBuilder::with_event_times("spike");
        let thread = b.thread("main");
        let mut event = 0;
        for i in 0..100u64 {
            b.alloc(event, event, 0x1000 + i * 64, 32, 0, thread, 0);
            event += 1;
            if i == 56 {
                b.alloc(event, event, 0x10_0000, 1 << 20, 0, thread, 0);
                b.free(event + 1, event + 1, 0x10_0000);
                event += 2;
            }
        }
        let trace = b.finish(memscape_trace::TraceFormat::Csv, true);
        let mut fresh = TraceHeap::new(&trace, &[GroupKey::Site]);
        let peak_events = fresh.peak_point();
        let peak_bytes = fresh.sizes_at(peak_events).bytes(0);
        assert!(peak_bytes > 1 << 20, "{peak_bytes}");
        let (timeline, _) = trace_timeline(&trace, &[GroupKey::Site], Metric::Bytes, 3);
        let peak = &timeline.points[timeline.peak_point];
        assert_eq!((peak.index, peak.total_bytes), (peak_events, peak_bytes));
        let curve_max = timeline.series.iter().map(|&(_, b)| b).max();
        assert_eq!(curve_max, Some(peak_bytes));
    }

    #[test]
    fn trace_timeline_points_match_direct_sizes() {
        let trace = crate::synthetic::synthetic_trace(20_000);
        let (timeline, mut source) = trace_timeline(
            &trace,
            &[GroupKey::Thread, GroupKey::Site],
            Metric::Bytes,
            16,
        );
        assert!(timeline.points.len() >= 16);
        assert!(timeline.series.len() >= timeline.points.len());
        // Sizes from the source agree with the point totals, in any order of requests.
        for point in [5usize, 0, timeline.points.len() - 1, 3] {
            let sizes = source.sizes_at_point(point).unwrap();
            assert_eq!(sizes.bytes(0), timeline.points[point].total_bytes);
        }
        assert!(source.sizes_at_point(timeline.points.len()).is_none());
        assert_eq!(timeline.growth.len(), timeline.trie.len());
        // The curve shares the points' time axis and passes through their totals.
        for p in &timeline.points {
            if let Some(&(_, bytes)) = timeline.series.iter().find(|(t, _)| *t == p.time) {
                assert_eq!(bytes, p.total_bytes);
            }
        }
        let last_series = timeline.series.last().unwrap().0;
        assert_eq!(last_series, timeline.points.last().unwrap().time);
        // A picked block's group contains it (the map → tree link).
        for block in [0u32, 17, 999] {
            let group = source.group_of_block(block).unwrap();
            assert!(source.blocks_in_group(group).unwrap().contains(&block));
            let parent = timeline.trie.parent(group).unwrap();
            assert!(source.blocks_in_group(parent).unwrap().contains(&block));
        }
        let peak = timeline.points[timeline.peak_point].total_bytes;
        assert!(timeline.points.iter().all(|p| p.total_bytes <= peak));
    }
}
