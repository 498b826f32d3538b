//! A big trace's unbinned occupancy bar in the flat variant, drawn from running integrals of its
//! step functions (issue 25): the flat variant shows each pixel column's time-weighted mean
//! occupancy, which is the difference of the integral at the column's two edges, found by a
//! binary search per series. A frame then costs a few searches per column, where the exact path
//! made every inter-event interval a 40-byte block of the bar (800 MB at 20 M events) and had
//! the sums worker sum them all for every view (2–3 s at 20 M events on 2 cores).
//!
//! On the event axis every interval is one event wide, so Eq. 1's sums of the exact bar weigh
//! the intervals of a column alike and give this mean too; they differ only in the columns at
//! the ends of the trace (partly covered) and where equal-time events make wider intervals,
//! which the exact sums weigh by their coverage to the power α (`tests/bar_integral.rs`
//! compares them).

use std::sync::Arc;

use memscape_eq1::{MapView, PixelSums, fast_pow};
use memscape_trace::metrics::BinMetrics;

/// Running integrals of one bin's step functions on the event axis (see the module's
/// documentation).
pub struct BarIntegral {
    metrics: Arc<BinMetrics>,
    /// The series of `metrics` that make the bin (one per address region when unbinned), each
    /// with `∫ bytes dt` from its first row to each row, in byte·events.
    series: Vec<(usize, Vec<f64>)>,
    /// The bar's time range `[start, end)`: empty before the first row, the last row's state
    /// until the end.
    start: u64,
    end: u64,
    /// Bytes that count as full (0: any use is full).
    capacity: u64,
}

impl std::fmt::Debug for BarIntegral {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BarIntegral")
            .field("series", &self.series.len())
            .field("end", &self.end)
            .finish()
    }
}

impl BarIntegral {
    /// The integrals of `series` of `metrics` (their rows' event numbers and occupancy), over
    /// `[0, end)`, as a fraction of `capacity`.
    pub fn build(metrics: Arc<BinMetrics>, series: &[usize], end: u64, capacity: u64) -> Self {
        let series = series
            .iter()
            .filter_map(|&j| {
                let s = metrics.series.get(j)?;
                let (event, bytes) = (&s.event[..], &s.occupancy[..]);
                let n = event.len().min(bytes.len());
                let mut running = Vec::with_capacity(n);
                let mut sum = 0.0f64;
                for i in 0..n {
                    if i > 0 {
                        let dt = event[i].min(end).saturating_sub(event[i - 1].min(end));
                        sum += bytes[i - 1] as f64 * dt as f64;
                    }
                    running.push(sum);
                }
                Some((j, running))
            })
            .collect();
        Self {
            metrics,
            series,
            start: 0,
            end,
            capacity,
        }
    }

    /// `∫ bytes dt` of every series from the start to `t` (events, fractional).
    fn integral_at(&self, t: f64) -> f64 {
        let t = t.clamp(self.start as f64, self.end as f64);
        self.series
            .iter()
            .filter_map(|(j, running)| {
                let s = self.metrics.series.get(*j)?;
                let event = &s.event[..running.len()];
                // Rows at or before t: the state after the last of them lasts until t.
                let i = event.partition_point(|&e| (e as f64) <= t).checked_sub(1)?;
                Some(running[i] + s.occupancy[i] as f64 * (t - event[i] as f64))
            })
            .sum()
    }

    /// The mean occupancy fraction over `[t0, t1)` (events, fractional; t1 > t0).
    fn mean_fraction(&self, t0: f64, t1: f64) -> f32 {
        let bytes = (self.integral_at(t1) - self.integral_at(t0)) / (t1 - t0);
        if self.capacity == 0 {
            return if bytes > 0.0 { 1.0 } else { 0.0 };
        }
        (bytes / self.capacity as f64).clamp(0.0, 1.0) as f32
    }

    /// Eq. 1's sums of the bar in `view` (quantitative, without cushions, the band filling the
    /// view's height): per column, the part of it within the trace as one interval of the
    /// column's mean occupancy; every row alike.
    pub fn sums(&self, view: &MapView) -> PixelSums {
        let (w, h) = (view.width as usize, view.height as usize);
        let mut sums = PixelSums::new(view.width, view.height);
        let per_px = 1.0 / f64::from(view.pixels_per_time.max(f32::MIN_POSITIVE));
        let origin = view.time_origin as f64 + f64::from(view.time_origin_frac);
        for x in 0..w {
            let a = (origin + x as f64 * per_px).max(self.start as f64);
            let b = (origin + (x + 1) as f64 * per_px).min(self.end as f64);
            if b <= a {
                continue;
            }
            let coverage = ((b - a) / per_px).min(1.0) as f32;
            let weight = fast_pow(coverage, view.alpha);
            let acc = [weight * self.mean_fraction(a, b), weight, 0.0, weight];
            for y in 0..h {
                sums.acc[y * w + x] = acc;
                sums.cov[y * w + x] = coverage;
            }
        }
        sums
    }
}
