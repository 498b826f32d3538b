//! Metrics per bin over time, computed once as step functions (one row per event that touches
//! the bin: the state right after it) and sampled at any resolution with [`BinMetrics::sample`].
//!
//! * occupancy: bytes of live blocks (block extents);
//! * live blocks;
//! * events (activity): rows in a sampling bucket;
//! * largest free gap and total free bytes inside the bin's extent (lowest block start to highest
//!   block end over the whole trace), and fragmentation `1 − largest_free_gap / total_free`
//!   (0 when nothing is free);
//! * waste: `usable − requested` summed over live blocks whose usable size is known.
//!
//! Free gaps are kept exactly with an ordered map of live blocks and a multiset of gap lengths,
//! O(log n) per event. Overlapping live blocks (only in inconsistent inputs) make gaps an
//! approximation: a gap is measured from a block's end to the next block's start, never below 0.
//!
//! The rows do not depend on the bins' extents (which grow with a live recording): each keeps
//! the largest gap *between* live blocks and the first live block's start and last one's end,
//! and the gaps to the extent's ends are taken when read ([`BinMetrics::largest_free_gap`]).
//! So a later snapshot of a growing trace continues the sweep of an earlier one
//! ([`BinMetrics::continued`]: only the events since are swept, the rows so far are shared,
//! not copied) and equals a sweep from the first event.
//!
//! The free gaps are most of a sweep's cost (two ordered maps per event) and the occupancy bars
//! never read them: [`BinMetrics::continued_occupancy`] sweeps without them (the same occupancy,
//! live-block and waste rows; no gap columns, gaps and free bytes read as 0).

use std::collections::BTreeMap;

use memscape_map::AppendVec;

use crate::bins::Bins;
use crate::model::{Column, Trace, USABLE_UNKNOWN};

/// [`BinSeries::first_start`] of a row where the bin has no live block.
pub const NO_LIVE_BLOCK: u64 = u64::MAX;

/// The step functions of one bin, as columns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BinSeries {
    pub event: Column<u64>,
    pub time_ns: Column<u64>,
    pub occupancy: Column<u64>,
    pub live_blocks: Column<u64>,
    /// Largest free gap between two live blocks (0 with fewer than two).
    pub inner_gap: Column<u64>,
    /// Start of the live block of the lowest address ([`NO_LIVE_BLOCK`] when none is live) and
    /// end of the one of the highest: the gaps to the bin's extent ends.
    pub first_start: Column<u64>,
    pub last_end: Column<u64>,
    pub waste: Column<u64>,
}

impl BinSeries {
    pub fn len(&self) -> usize {
        self.event.len()
    }

    pub fn is_empty(&self) -> bool {
        self.event.is_empty()
    }
}

/// Which time a sample range is given in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeAxis {
    EventIndex,
    WallNs,
}

/// Samples of one bin over `columns` equal buckets of `[t0, t1)`.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Samples {
    /// Start of each bucket.
    pub start: Vec<u64>,
    /// State at the end of the bucket.
    pub occupancy: Vec<u64>,
    /// Highest occupancy reached inside the bucket.
    pub occupancy_max: Vec<u64>,
    pub live_blocks: Vec<u64>,
    /// Events inside the bucket.
    pub events: Vec<u64>,
    pub largest_free_gap: Vec<u64>,
    pub fragmentation: Vec<f64>,
    pub waste: Vec<u64>,
}

/// Live blocks and the free gaps between them, of one bin.
#[derive(Debug, Clone, Default)]
struct GapTracker {
    /// (start, block id + 1) → end.
    live: BTreeMap<(u64, u64), u64>,
    /// gap length → how many gaps of that length (zero-length gaps are not stored).
    gaps: BTreeMap<u64, u64>,
}

impl GapTracker {
    fn add_gap(&mut self, len: u64) {
        if len > 0 {
            *self.gaps.entry(len).or_insert(0) += 1;
        }
    }

    fn remove_gap(&mut self, len: u64) {
        if len == 0 {
            return;
        }
        if let Some(count) = self.gaps.get_mut(&len) {
            *count -= 1;
            if *count == 0 {
                self.gaps.remove(&len);
            }
        }
    }

    /// The end of the live block before `key` and the start of the one after it.
    fn neighbours(&self, key: (u64, u64)) -> (Option<u64>, Option<u64>) {
        let pred_end = self.live.range(..key).next_back().map(|(_, &e)| e);
        let succ_start = self
            .live
            .range((std::ops::Bound::Excluded(key), std::ops::Bound::Unbounded))
            .next()
            .map(|(k, _)| k.0);
        (pred_end, succ_start)
    }

    fn insert(&mut self, start: u64, end: u64, id: u64) {
        let key = (start, id + 1);
        let (pred_end, succ_start) = self.neighbours(key);
        if let (Some(p), Some(s)) = (pred_end, succ_start) {
            self.remove_gap(s.saturating_sub(p));
        }
        if let Some(p) = pred_end {
            self.add_gap(start.saturating_sub(p));
        }
        if let Some(s) = succ_start {
            self.add_gap(s.saturating_sub(end));
        }
        self.live.insert(key, end);
    }

    fn remove(&mut self, start: u64, end: u64, id: u64) {
        let key = (start, id + 1);
        if self.live.remove(&key).is_none() {
            return;
        }
        let (pred_end, succ_start) = self.neighbours(key);
        if let Some(p) = pred_end {
            self.remove_gap(start.saturating_sub(p));
        }
        if let Some(s) = succ_start {
            self.remove_gap(s.saturating_sub(end));
        }
        if let (Some(p), Some(s)) = (pred_end, succ_start) {
            self.add_gap(s.saturating_sub(p));
        }
    }

    fn largest(&self) -> u64 {
        self.gaps.keys().next_back().copied().unwrap_or(0)
    }

    /// (first live block's start, last one's end), or ([`NO_LIVE_BLOCK`], 0).
    fn ends(&self) -> (u64, u64) {
        match (self.live.first_key_value(), self.live.last_key_value()) {
            (Some((first, _)), Some((_, &last_end))) => (first.0, last_end),
            _ => (NO_LIVE_BLOCK, 0),
        }
    }
}

/// The rows of one bin being written (shared with the [`BinMetrics`] made so far).
#[derive(Debug, Clone, Default)]
struct SeriesColumns {
    event: AppendVec<u64>,
    time_ns: AppendVec<u64>,
    occupancy: AppendVec<u64>,
    live_blocks: AppendVec<u64>,
    inner_gap: AppendVec<u64>,
    first_start: AppendVec<u64>,
    last_end: AppendVec<u64>,
    waste: AppendVec<u64>,
}

impl SeriesColumns {
    fn freeze(&mut self) -> BinSeries {
        BinSeries {
            event: Column::appended(self.event.freeze()),
            time_ns: Column::appended(self.time_ns.freeze()),
            occupancy: Column::appended(self.occupancy.freeze()),
            live_blocks: Column::appended(self.live_blocks.freeze()),
            inner_gap: Column::appended(self.inner_gap.freeze()),
            first_start: Column::appended(self.first_start.freeze()),
            last_end: Column::appended(self.last_end.freeze()),
            waste: Column::appended(self.waste.freeze()),
        }
    }
}

/// One bin's state after the events swept so far.
#[derive(Debug, Clone, Default)]
struct BinState {
    tracker: Option<GapTracker>,
    occupancy: u64,
    live: u64,
    waste: u64,
    rows: SeriesColumns,
}

/// Where a sweep of [`BinMetrics`] stopped, to be continued on a later snapshot of the same
/// growing trace ([`BinMetrics::continued`]).
#[derive(Debug, Clone)]
pub struct MetricsSweep {
    /// Events swept (rows are made for events `0..events`).
    events: u64,
    /// The event this sweep started at: 0 from the first, else where the sweep it continued
    /// had stopped.
    started_at: u64,
    has_gaps: bool,
    /// Whether the free gaps were swept ([`BinMetrics::continued_occupancy`]: not).
    with_gaps: bool,
    /// Bin of each block of the trace swept (its blocks `0..block_bin.len()`).
    block_bin: Vec<u32>,
    bins: Vec<BinState>,
}

impl MetricsSweep {
    /// Events swept so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Where this sweep started: 0 when from the first event, else the events of the sweep it
    /// continued.
    pub fn started_at(&self) -> u64 {
        self.started_at
    }

    /// Where each earlier bin is among `bins` (a later partition of a trace that extends the
    /// swept one), or None when the old bins are not each inside one new bin of their own
    /// (two merged, or one split): then the sweep starts again.
    fn bin_map(&self, trace: &Trace, bins: &Bins, with_gaps: bool) -> Option<Vec<Option<usize>>> {
        let old_n = self.block_bin.len();
        if trace.meta.has_addresses != self.has_gaps
            || with_gaps != self.with_gaps
            || trace.meta.events < self.events
            || trace.blocks.len() < old_n
            || bins.block_bin.len() < old_n
        {
            return None;
        }
        let mut map: Vec<Option<usize>> = vec![None; self.bins.len()];
        for (&old, &new) in self.block_bin.iter().zip(&bins.block_bin) {
            let (old, new) = (old as usize, new as usize);
            match map.get_mut(old)? {
                Some(m) if *m != new => return None,
                Some(_) => {}
                slot @ None => *slot = Some(new),
            }
        }
        let mut taken = vec![false; bins.bins.len()];
        for &m in map.iter().flatten() {
            if std::mem::replace(taken.get_mut(m)?, true) {
                return None;
            }
        }
        Some(map)
    }
}

/// Step functions of every bin of a [`Bins`] partition.
#[derive(Debug, Clone)]
pub struct BinMetrics {
    pub series: Vec<BinSeries>,
    /// (extent start, extent end) of each bin.
    pub extents: Vec<(u64, u64)>,
    /// False for traces without addresses and sweeps without gaps
    /// ([`BinMetrics::continued_occupancy`]): gaps and free bytes are then always 0, and the
    /// series' gap columns empty in the latter.
    pub has_gaps: bool,
}

impl BinMetrics {
    /// One sweep over the trace's events.
    pub fn compute(trace: &Trace, bins: &Bins) -> Self {
        Self::continued(trace, bins, None).0
    }

    /// The metrics of `trace`, continuing `from`: the sweep of an earlier state of the same
    /// growing trace (a live recording's previous snapshot: the same blocks and events up to
    /// where `from` stopped, more after). Only the events after `from` are swept, and the rows
    /// so far are shared, not copied; the result equals [`BinMetrics::compute`]. Starts from
    /// the first event when `from` is None or does not fit `bins` (bins merged or split since).
    /// Returns the sweep's state for the next snapshot.
    pub fn continued(
        trace: &Trace,
        bins: &Bins,
        from: Option<MetricsSweep>,
    ) -> (Self, MetricsSweep) {
        Self::sweep(trace, bins, from, true)
    }

    /// [`BinMetrics::continued`] without the free gaps (what the occupancy bars read: the
    /// occupancy, live-block and waste rows, equal to a sweep with gaps; the gap columns empty,
    /// `has_gaps` false). Continues only a sweep made this way.
    pub fn continued_occupancy(
        trace: &Trace,
        bins: &Bins,
        from: Option<MetricsSweep>,
    ) -> (Self, MetricsSweep) {
        Self::sweep(trace, bins, from, false)
    }

    fn sweep(
        trace: &Trace,
        bins: &Bins,
        from: Option<MetricsSweep>,
        with_gaps: bool,
    ) -> (Self, MetricsSweep) {
        let n = bins.bins.len();
        let has_gaps = with_gaps && trace.meta.has_addresses;
        let extents: Vec<(u64, u64)> = bins
            .bins
            .iter()
            .map(|bin| (bin.extent_start, bin.extent_end.max(bin.extent_start)))
            .collect();
        let new_state = || BinState {
            tracker: has_gaps.then(GapTracker::default),
            ..BinState::default()
        };
        let (mut states, first_event) =
            match from.and_then(|f| Some((f.bin_map(trace, bins, with_gaps)?, f))) {
                Some((map, from)) => {
                    let mut states: Vec<Option<BinState>> = (0..n).map(|_| None).collect();
                    for (state, m) in from.bins.into_iter().zip(map) {
                        if let Some(slot) = m.and_then(|m| states.get_mut(m)) {
                            *slot = Some(state);
                        }
                    }
                    let states = states
                        .into_iter()
                        .map(|s| s.unwrap_or_else(new_state))
                        .collect();
                    (states, from.events)
                }
                None => ((0..n).map(|_| new_state()).collect::<Vec<_>>(), 0),
            };
        let b = &trace.blocks;
        let order = trace.event_order();
        let first = usize::try_from(first_event).unwrap_or(order.len());
        for (event, &id) in order.iter().enumerate().skip(first) {
            if id == u32::MAX {
                continue;
            }
            let block = (id >> 1) as usize;
            let is_free = id & 1 == 1;
            let Some(state) = bins
                .block_bin
                .get(block)
                .and_then(|&g| states.get_mut(g as usize))
            else {
                continue;
            };
            let (start, size) = (b.address[block], b.size[block]);
            let end = start.saturating_add(size);
            let block_waste = if b.usable_size[block] != USABLE_UNKNOWN {
                b.usable_size[block].saturating_sub(b.requested_size[block])
            } else {
                0
            };
            let time = if is_free {
                b.free_time_ns[block]
            } else {
                b.alloc_time_ns[block]
            };
            if is_free {
                state.occupancy = state.occupancy.saturating_sub(size);
                state.live = state.live.saturating_sub(1);
                state.waste = state.waste.saturating_sub(block_waste);
                if let Some(t) = &mut state.tracker {
                    t.remove(start, end, block as u64);
                }
            } else {
                state.occupancy = state.occupancy.saturating_add(size);
                state.live += 1;
                state.waste = state.waste.saturating_add(block_waste);
                if let Some(t) = &mut state.tracker {
                    t.insert(start, end, block as u64);
                }
            }
            let rows = &mut state.rows;
            rows.event.push(event as u64);
            rows.time_ns.push(time);
            rows.occupancy.push(state.occupancy);
            rows.live_blocks.push(state.live);
            rows.waste.push(state.waste);
            if let Some(t) = &state.tracker {
                rows.inner_gap.push(t.largest());
                let (first_start, last_end) = t.ends();
                rows.first_start.push(first_start);
                rows.last_end.push(last_end);
            } else if with_gaps {
                // A trace without addresses keeps the columns (gaps 0, nothing live).
                rows.inner_gap.push(0);
                rows.first_start.push(NO_LIVE_BLOCK);
                rows.last_end.push(0);
            }
        }
        let series = states.iter_mut().map(|s| s.rows.freeze()).collect();
        let sweep = MetricsSweep {
            events: order.len() as u64,
            started_at: first_event,
            has_gaps: trace.meta.has_addresses,
            with_gaps,
            block_bin: bins.block_bin.clone(),
            bins: states,
        };
        (
            Self {
                series,
                extents,
                has_gaps,
            },
            sweep,
        )
    }

    /// The largest free gap inside bin `bin`'s extent after row `row` of its series: between
    /// live blocks, or from the extent's start to the first or from the last to its end (the
    /// whole extent when nothing is live; 0 for traces without addresses).
    pub fn largest_free_gap(&self, bin: usize, row: usize) -> u64 {
        let (Some(s), Some(&(lo, hi))) = (self.series.get(bin), self.extents.get(bin)) else {
            return 0;
        };
        if !self.has_gaps || row >= s.len() {
            return 0;
        }
        match s.first_start[row] {
            NO_LIVE_BLOCK => hi - lo,
            first => s.inner_gap[row]
                .max(first.saturating_sub(lo))
                .max(hi.saturating_sub(s.last_end[row])),
        }
    }

    /// Free bytes inside bin `bin`'s extent after row `row` of its series (0 for traces without
    /// addresses).
    pub fn total_free(&self, bin: usize, row: usize) -> u64 {
        let (Some(s), Some(&(lo, hi))) = (self.series.get(bin), self.extents.get(bin)) else {
            return 0;
        };
        if !self.has_gaps || row >= s.len() {
            return 0;
        }
        (hi - lo).saturating_sub(s.occupancy[row])
    }

    /// Samples bin `bin` over `columns` equal buckets of `[t0, t1)` on `axis`. An unknown bin,
    /// zero columns or an empty range give empty samples.
    pub fn sample(&self, bin: usize, axis: TimeAxis, t0: u64, t1: u64, columns: usize) -> Samples {
        let mut out = Samples::default();
        let Some(s) = self.series.get(bin) else {
            return out;
        };
        if columns == 0 || t1 <= t0 {
            return out;
        }
        let keys = match axis {
            TimeAxis::EventIndex => &s.event,
            TimeAxis::WallNs => &s.time_ns,
        };
        let mut idx = keys.partition_point(|&k| k < t0);
        let span = u128::from(t1 - t0);
        for c in 0..columns {
            let start = t0 + u64::try_from(span * c as u128 / columns as u128).unwrap_or(0);
            let end = t0 + u64::try_from(span * (c as u128 + 1) / columns as u128).unwrap_or(0);
            let mut max = idx.checked_sub(1).map_or(0, |i| s.occupancy[i]);
            let first = idx;
            while idx < keys.len() && keys[idx] < end {
                max = max.max(s.occupancy[idx]);
                idx += 1;
            }
            out.start.push(start);
            out.events.push((idx - first) as u64);
            out.occupancy_max.push(max);
            match idx.checked_sub(1) {
                Some(i) => {
                    out.occupancy.push(s.occupancy[i]);
                    out.live_blocks.push(s.live_blocks[i]);
                    let gap = self.largest_free_gap(bin, i);
                    out.largest_free_gap.push(gap);
                    out.fragmentation
                        .push(fragmentation(gap, self.total_free(bin, i)));
                    out.waste.push(s.waste[i]);
                }
                None => {
                    let (lo, hi) = self.extents.get(bin).copied().unwrap_or((0, 0));
                    out.occupancy.push(0);
                    out.live_blocks.push(0);
                    out.largest_free_gap
                        .push(if self.has_gaps { hi - lo } else { 0 });
                    out.fragmentation.push(0.0);
                    out.waste.push(0);
                }
            }
        }
        out
    }
}

/// `1 − largest_free_gap / total_free`, 0 when nothing is free.
pub fn fragmentation(largest_free_gap: u64, total_free: u64) -> f64 {
    if total_free == 0 {
        0.0
    } else {
        (1.0 - largest_free_gap as f64 / total_free as f64).clamp(0.0, 1.0)
    }
}
