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

use std::collections::BTreeMap;

use crate::bins::Bins;
use crate::model::{Trace, USABLE_UNKNOWN};

/// The step functions of one bin, as columns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BinSeries {
    pub event: Vec<u64>,
    pub time_ns: Vec<u64>,
    pub occupancy: Vec<u64>,
    pub live_blocks: Vec<u64>,
    pub largest_free_gap: Vec<u64>,
    pub total_free: Vec<u64>,
    pub waste: Vec<u64>,
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

/// Live blocks and free gaps of one bin.
struct GapTracker {
    /// (start, block id + 1) → end; sentinels at the extent's two ends.
    live: BTreeMap<(u64, u64), u64>,
    /// gap length → how many gaps of that length (zero-length gaps are not stored).
    gaps: BTreeMap<u64, u64>,
}

impl GapTracker {
    fn new(lo: u64, hi: u64) -> Self {
        let mut live = BTreeMap::new();
        live.insert((lo, 0), lo);
        live.insert((hi, u64::MAX), hi);
        let mut t = Self {
            live,
            gaps: BTreeMap::new(),
        };
        t.add_gap(hi.saturating_sub(lo));
        t
    }

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

    fn neighbours(&self, key: (u64, u64)) -> Option<(u64, u64)> {
        let pred_end = self.live.range(..key).next_back().map(|(_, &e)| e)?;
        let succ_start = self
            .live
            .range((std::ops::Bound::Excluded(key), std::ops::Bound::Unbounded))
            .next()
            .map(|(k, _)| k.0)?;
        Some((pred_end, succ_start))
    }

    fn insert(&mut self, start: u64, end: u64, id: u64) {
        let key = (start, id + 1);
        if let Some((pred_end, succ_start)) = self.neighbours(key) {
            self.remove_gap(succ_start.saturating_sub(pred_end));
            self.add_gap(start.saturating_sub(pred_end));
            self.add_gap(succ_start.saturating_sub(end));
        }
        self.live.insert(key, end);
    }

    fn remove(&mut self, start: u64, end: u64, id: u64) {
        let key = (start, id + 1);
        if self.live.remove(&key).is_none() {
            return;
        }
        if let Some((pred_end, succ_start)) = self.neighbours(key) {
            self.remove_gap(start.saturating_sub(pred_end));
            self.remove_gap(succ_start.saturating_sub(end));
            self.add_gap(succ_start.saturating_sub(pred_end));
        }
    }

    fn largest(&self) -> u64 {
        self.gaps.keys().next_back().copied().unwrap_or(0)
    }
}

/// Step functions of every bin of a [`Bins`] partition.
#[derive(Debug, Clone)]
pub struct BinMetrics {
    pub series: Vec<BinSeries>,
    /// (extent start, extent end) of each bin.
    pub extents: Vec<(u64, u64)>,
    /// False for traces without addresses: gaps and free bytes are then always 0.
    pub has_gaps: bool,
}

impl BinMetrics {
    /// One sweep over the trace's events.
    pub fn compute(trace: &Trace, bins: &Bins) -> Self {
        let b = &trace.blocks;
        let n = bins.bins.len();
        let extents: Vec<(u64, u64)> = bins
            .bins
            .iter()
            .map(|bin| (bin.extent_start, bin.extent_end.max(bin.extent_start)))
            .collect();
        let track_gaps = trace.meta.has_addresses;
        let mut trackers: Vec<Option<GapTracker>> = extents
            .iter()
            .map(|&(lo, hi)| track_gaps.then(|| GapTracker::new(lo, hi)))
            .collect();
        let mut series = vec![BinSeries::default(); n];
        let mut occupancy = vec![0u64; n];
        let mut live = vec![0u64; n];
        let mut waste = vec![0u64; n];
        for (event, id) in trace.event_order().iter().copied().enumerate() {
            if id == u32::MAX {
                continue;
            }
            let block = (id >> 1) as usize;
            let is_free = id & 1 == 1;
            let Some(bin) = bins
                .block_bin
                .get(block)
                .map(|&g| g as usize)
                .filter(|&g| g < n)
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
                occupancy[bin] = occupancy[bin].saturating_sub(size);
                live[bin] = live[bin].saturating_sub(1);
                waste[bin] = waste[bin].saturating_sub(block_waste);
                if let Some(t) = &mut trackers[bin] {
                    t.remove(start, end, block as u64);
                }
            } else {
                occupancy[bin] = occupancy[bin].saturating_add(size);
                live[bin] += 1;
                waste[bin] = waste[bin].saturating_add(block_waste);
                if let Some(t) = &mut trackers[bin] {
                    t.insert(start, end, block as u64);
                }
            }
            let (lo, hi) = extents[bin];
            let s = &mut series[bin];
            s.event.push(event as u64);
            s.time_ns.push(time);
            s.occupancy.push(occupancy[bin]);
            s.live_blocks.push(live[bin]);
            s.largest_free_gap
                .push(trackers[bin].as_ref().map_or(0, GapTracker::largest));
            s.total_free.push(if track_gaps {
                (hi - lo).saturating_sub(occupancy[bin])
            } else {
                0
            });
            s.waste.push(waste[bin]);
        }
        Self {
            series,
            extents,
            has_gaps: track_gaps,
        }
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
                    out.largest_free_gap.push(s.largest_free_gap[i]);
                    out.fragmentation
                        .push(fragmentation(s.largest_free_gap[i], s.total_free[i]));
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
