//! Occupancy, waste and external fragmentation over time, per pool (`memscape.h`) or per bin of
//! any other binning: blocks assigned to groups, each group with an address span.
//!
//! External fragmentation at a time `t` is `1 − largest free gap ÷ free bytes` inside the
//! group's span (0 when the free space is one piece or there is none): the share of free
//! memory a request as large as all of it could not use. Waste is the bytes between what was
//! requested and what each block occupies (`usable − requested`; a pool block occupies the
//! pool's block size).

use std::collections::BTreeMap;

use crate::model::{FLAG_MMAP, FLAG_POOL, NO_GROUP, Trace};

/// One point of a group's curves: the state right after event `event`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct GroupSample {
    pub event: u64,
    pub time_ns: u64,
    pub live_blocks: u64,
    /// Bytes the live blocks occupy (usable size when known, else requested).
    pub live_bytes: u64,
    /// `live_bytes` ÷ the span's bytes.
    pub occupancy: f64,
    /// Σ usable − requested over the live blocks.
    pub waste_bytes: u64,
    pub free_bytes: u64,
    pub largest_free_gap: u64,
    /// 1 − largest free gap ÷ free bytes (0 without free bytes).
    pub fragmentation: f64,
}

/// The curves of one group.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct GroupCurves {
    /// `[start, end)` the fragmentation is measured in.
    pub span: (u64, u64),
    pub blocks: u64,
    pub peak_live_bytes: u64,
    pub peak_occupancy: f64,
    pub peak_waste_bytes: u64,
    pub peak_fragmentation: f64,
    /// About the requested number of samples (a few more), evenly spread over the group's events (the
    /// last one is always the state at the group's last event).
    pub samples: Vec<GroupSample>,
}

/// Free space of one span: live extents and the multiset of gaps between them.
struct SpanState {
    start: u64,
    end: u64,
    /// Live extents by start: end (overlapping extents, possible in inconsistent inputs, are
    /// clipped to the free space they really take).
    live: BTreeMap<u64, u64>,
    /// Gap length → how many gaps of it.
    gaps: BTreeMap<u64, u64>,
    live_bytes: u64,
}

impl SpanState {
    fn new(start: u64, end: u64) -> Self {
        let mut gaps = BTreeMap::new();
        if end > start {
            gaps.insert(end - start, 1);
        }
        Self {
            start,
            end,
            live: BTreeMap::new(),
            gaps,
            live_bytes: 0,
        }
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
        if let Some(n) = self.gaps.get_mut(&len) {
            *n -= 1;
            if *n == 0 {
                self.gaps.remove(&len);
            }
        }
    }

    /// The free neighbours of `[a, b)`: the end of the extent before and the start of the
    /// one after (the span's ends when none).
    fn neighbours(&self, a: u64) -> (u64, u64) {
        let before = self
            .live
            .range(..a)
            .next_back()
            .map_or(self.start, |(_, &e)| e.max(self.start));
        let after = self
            .live
            .range(a..)
            .next()
            .map_or(self.end, |(&s, _)| s.min(self.end));
        (before, after)
    }

    fn insert(&mut self, a: u64, b: u64) {
        let (a, b) = (a.clamp(self.start, self.end), b.clamp(self.start, self.end));
        if b <= a || self.live.contains_key(&a) {
            return;
        }
        let (before, after) = self.neighbours(a);
        if before > a || after < b {
            // Overlaps a live extent: count it live, leave the gaps as they are.
            self.live.insert(a, b);
            self.live_bytes = self.live_bytes.saturating_add(b - a);
            return;
        }
        self.remove_gap(after - before);
        self.add_gap(a - before);
        self.add_gap(after - b);
        self.live.insert(a, b);
        self.live_bytes = self.live_bytes.saturating_add(b - a);
    }

    fn remove(&mut self, a: u64) {
        let a = a.clamp(self.start, self.end);
        let Some(b) = self.live.remove(&a) else {
            return;
        };
        self.live_bytes = self.live_bytes.saturating_sub(b - a);
        let (before, after) = self.neighbours(a);
        if before > a || after < b {
            return;
        }
        self.remove_gap(a - before);
        self.remove_gap(after - b);
        self.add_gap(after - before);
    }

    fn free_bytes(&self) -> u64 {
        self.end
            .saturating_sub(self.start)
            .saturating_sub(self.live_bytes)
    }

    fn largest_gap(&self) -> u64 {
        self.gaps.keys().next_back().copied().unwrap_or(0)
    }
}

/// The curves of each group: `group[i]` is block `i`'s group ([`NO_GROUP`]: none), `spans[g]`
/// group `g`'s address span (blocks outside it are clipped to it). Sweeps the events once.
pub fn group_curves(
    trace: &Trace,
    group: &[u32],
    spans: &[(u64, u64)],
    max_samples: usize,
) -> Vec<GroupCurves> {
    let b = &trace.blocks;
    let groups = spans.len();
    let mut states: Vec<SpanState> = spans.iter().map(|&(s, e)| SpanState::new(s, e)).collect();
    let mut events_of = vec![0u64; groups];
    let mut blocks = vec![0u64; groups];
    for &g in group {
        if let Some(n) = blocks.get_mut(g as usize) {
            *n += 2;
        }
    }
    // Every group event counts twice (alloc and free) except never-freed blocks' frees; an
    // estimate is enough to spread the samples.
    let stride: Vec<u64> = blocks
        .iter()
        .map(|&n| (n / max_samples.max(1) as u64).max(1))
        .collect();
    let mut waste = vec![0u64; groups];
    let mut out: Vec<GroupCurves> = spans
        .iter()
        .zip(&blocks)
        .map(|(&span, &n)| GroupCurves {
            span,
            blocks: n / 2,
            peak_live_bytes: 0,
            peak_occupancy: 0.0,
            peak_waste_bytes: 0,
            peak_fragmentation: 0.0,
            samples: Vec::new(),
        })
        .collect();
    let mut last: Vec<Option<GroupSample>> = vec![None; groups];
    for (event, &entry) in trace.event_order().iter().enumerate() {
        if entry == u32::MAX {
            continue;
        }
        let i = (entry >> 1) as usize;
        let Some(&g) = group.get(i) else {
            continue;
        };
        let gi = g as usize;
        if g == NO_GROUP || gi >= groups {
            continue;
        }
        let extent = b.size[i];
        let block_waste = b.usable_size[i].saturating_sub(b.requested_size[i]);
        let (a, end) = (b.address[i], b.address[i].saturating_add(extent));
        let state = &mut states[gi];
        if entry & 1 == 0 {
            state.insert(a, end);
            waste[gi] = waste[gi].saturating_add(block_waste);
        } else {
            state.remove(a);
            waste[gi] = waste[gi].saturating_sub(block_waste);
        }
        let span_bytes = state.end.saturating_sub(state.start).max(1);
        let free = state.free_bytes();
        let largest = state.largest_gap();
        let sample = GroupSample {
            event: event as u64,
            time_ns: if entry & 1 == 0 {
                b.alloc_time_ns[i]
            } else {
                b.free_time_ns[i]
            },
            live_blocks: state.live.len() as u64,
            live_bytes: state.live_bytes,
            occupancy: state.live_bytes as f64 / span_bytes as f64,
            waste_bytes: waste[gi],
            free_bytes: free,
            largest_free_gap: largest,
            fragmentation: if free == 0 {
                0.0
            } else {
                1.0 - largest as f64 / free as f64
            },
        };
        let c = &mut out[gi];
        c.peak_live_bytes = c.peak_live_bytes.max(sample.live_bytes);
        c.peak_occupancy = c.peak_occupancy.max(sample.occupancy);
        c.peak_waste_bytes = c.peak_waste_bytes.max(sample.waste_bytes);
        c.peak_fragmentation = c.peak_fragmentation.max(sample.fragmentation);
        events_of[gi] += 1;
        if events_of[gi] % stride[gi] == 1 || stride[gi] == 1 {
            c.samples.push(sample);
            last[gi] = None;
        } else {
            last[gi] = Some(sample);
        }
    }
    for (c, l) in out.iter_mut().zip(last) {
        if let Some(s) = l {
            c.samples.push(s);
        }
    }
    out
}

/// One pool's report for `info --json`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PoolReport {
    pub name: String,
    pub pid: u32,
    pub start: u64,
    pub end: u64,
    pub block_size: u64,
    pub curves: GroupCurves,
}

/// The curves of every declared pool (its blocks: those flagged pool with its index).
pub fn pool_reports(trace: &Trace, max_samples: usize) -> Vec<PoolReport> {
    if trace.pools.is_empty() {
        return Vec::new();
    }
    let b = &trace.blocks;
    let group: Vec<u32> = (0..b.len())
        .map(|i| match b.pool[i] {
            p if p > 0 && b.flags[i] & FLAG_POOL != 0 => p - 1,
            _ => NO_GROUP,
        })
        .collect();
    let spans: Vec<(u64, u64)> = trace.pools.iter().map(|p| (p.start, p.end)).collect();
    group_curves(trace, &group, &spans, max_samples)
        .into_iter()
        .zip(&trace.pools)
        .map(|(curves, p)| PoolReport {
            name: p.name.clone(),
            pid: trace
                .processes
                .get(p.process as usize)
                .map_or(0, |pr| pr.pid),
            start: p.start,
            end: p.end,
            block_size: p.block_size,
            curves,
        })
        .collect()
}

/// The curves of the bins of any binning (`bins.rs`): each bin's span is the address range
/// its heap blocks cover (mappings and pool blocks left out), or, binned by pool, the pool's
/// declared range (its pool blocks in it).
pub fn bin_curves(trace: &Trace, bins: &crate::bins::Bins, max_samples: usize) -> Vec<GroupCurves> {
    let b = &trace.blocks;
    let n = bins.bins.len();
    let by_pool = matches!(bins.by, crate::bins::BinBy::Pool);
    let pools = if by_pool { trace.pools.len() } else { 0 };
    let mut spans = vec![(u64::MAX, 0u64); n];
    for (span, p) in spans.iter_mut().zip(&trace.pools).take(pools) {
        *span = (p.start, p.end);
    }
    let group: Vec<u32> = (0..b.len())
        .map(|i| {
            let g = bins.block_bin.get(i).copied().unwrap_or(NO_GROUP);
            let pooled = b.flags[i] & FLAG_POOL != 0;
            if b.flags[i] & FLAG_MMAP != 0 || g as usize >= n || pooled != ((g as usize) < pools) {
                return NO_GROUP;
            }
            if (g as usize) >= pools {
                let s = &mut spans[g as usize];
                s.0 = s.0.min(b.address[i]);
                s.1 = s.1.max(b.address[i].saturating_add(b.size[i]));
            }
            g
        })
        .collect();
    let spans: Vec<(u64, u64)> = spans
        .into_iter()
        .map(|(s, e)| if s > e { (0, 0) } else { (s, e) })
        .collect();
    group_curves(trace, &group, &spans, max_samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gap multiset against a brute-force recount after every step.
    #[test]
    fn span_gaps_match_a_recount() {
        let mut s = SpanState::new(0, 100);
        let steps: [(bool, u64, u64); 8] = [
            (true, 10, 20),
            (true, 40, 50),
            (true, 0, 5),
            (true, 90, 100),
            (false, 40, 50),
            (true, 20, 30),
            (false, 0, 5),
            (false, 10, 20),
        ];
        for (insert, a, b) in steps {
            if insert {
                s.insert(a, b);
            } else {
                s.remove(a);
            }
            let mut covered = [false; 100];
            for (&a, &b) in &s.live {
                covered[a as usize..b as usize]
                    .iter_mut()
                    .for_each(|c| *c = true);
            }
            let (mut largest, mut run) = (0u64, 0u64);
            for c in covered {
                run = if c { 0 } else { run + 1 };
                largest = largest.max(run);
            }
            assert_eq!(s.largest_gap(), largest);
            assert_eq!(
                s.free_bytes(),
                covered.iter().filter(|c| !**c).count() as u64
            );
        }
    }
}
