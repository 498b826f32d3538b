//! heaptrack's ~10 ms ticks: event times spread linearly by event index between ticks.

/// Piecewise-linear event index → time mapping through heaptrack's ticks.
pub(crate) struct TickClock {
    ticks: Vec<(u64, u64)>,
    events: u64,
    pub(crate) end_ns: u64,
}

impl TickClock {
    pub(crate) fn new(ticks: Vec<(u64, u64)>, events: u64) -> Self {
        let mut end_ns = ticks.last().map_or(0, |t| t.1);
        // Events after the last tick happened within one more tick period: extend the last
        // interval's rate rather than piling them onto one instant.
        if let (Some(&(e_last, t_last)), true) = (ticks.last(), ticks.len() >= 2)
            && events > e_last
        {
            let (e_prev, t_prev) = ticks[ticks.len() - 2];
            let span_e = e_last.saturating_sub(e_prev).max(1);
            let span_t = t_last.saturating_sub(t_prev);
            let extra = (events - e_last) as u128 * span_t as u128 / span_e as u128;
            end_ns = t_last.saturating_add(u64::try_from(extra).unwrap_or(u64::MAX));
        }
        Self {
            ticks,
            events,
            end_ns,
        }
    }

    /// The times of many events, with an index from event buckets to ticks instead of a
    /// binary search per event.
    pub(crate) fn times(&self, events: &[u64]) -> Vec<u64> {
        let last = self.ticks.last().map_or(0, |t| t.0);
        if self.ticks.len() < 2 || last == 0 {
            return events.iter().map(|&e| self.time(e)).collect();
        }
        // About four buckets per tick: bucket j covers events [j << shift, (j + 1) << shift).
        let per_bucket = (last / (4 * self.ticks.len() as u64)).max(1);
        let shift = 63 - per_bucket.leading_zeros();
        let buckets = usize::try_from(last >> shift).unwrap_or(0) + 1;
        let first_tick: Vec<u32> = (0..buckets)
            .map(|j| {
                let e = (j as u64) << shift;
                u32::try_from(self.ticks.partition_point(|&(t, _)| t <= e)).unwrap_or(u32::MAX)
            })
            .collect();
        events
            .iter()
            .map(|&e| {
                let Some(&k) = usize::try_from(e >> shift)
                    .ok()
                    .and_then(|j| first_tick.get(j))
                else {
                    return self.time(e);
                };
                // Ticks up to the bucket start are <= e; move on to the first tick after e.
                let mut k = k as usize;
                while k < self.ticks.len() && self.ticks[k].0 <= e {
                    k += 1;
                }
                self.time_in(k, e)
            })
            .collect()
    }

    pub(crate) fn time(&self, event: u64) -> u64 {
        self.time_in(self.ticks.partition_point(|&(e, _)| e <= event), event)
    }

    /// The time of `event`, `k` being the number of ticks at or before it.
    fn time_in(&self, k: usize, event: u64) -> u64 {
        // Tick k covers events [e_k, e_{k+1}) and spans times [t_k, t_{k+1}).
        if k == 0 {
            // Before the first tick: the span from 0 to the first tick's time.
            let (e1, t1) = self.ticks[0];
            if e1 == 0 {
                return 0;
            }
            return lerp(0, 0, e1, t1, event);
        }
        let (e0, t0) = self.ticks[k - 1];
        let (e1, t1) = self
            .ticks
            .get(k)
            .copied()
            .unwrap_or((self.events, self.end_ns));
        lerp(e0, t0, e1, t1, event)
    }
}

fn lerp(e0: u64, t0: u64, e1: u64, t1: u64, e: u64) -> u64 {
    if e1 <= e0 || t1 <= t0 {
        return t0;
    }
    let de = e.saturating_sub(e0);
    // 64-bit arithmetic when it cannot overflow (always, for 10 ms ticks): 128-bit division is
    // a library call and was a tenth of the load time.
    if let Some(product) = de.checked_mul(t1 - t0) {
        return t0.saturating_add(product / (e1 - e0)).min(t1);
    }
    let frac = de as u128 * (t1 - t0) as u128 / (e1 - e0) as u128;
    t0.saturating_add(u64::try_from(frac).unwrap_or(u64::MAX))
        .min(t1)
}
