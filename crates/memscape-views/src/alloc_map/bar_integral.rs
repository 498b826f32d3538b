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
//! which the exact sums weigh by their coverage to the power α (tested against them below).

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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use memscape_render::alloc_map::cpu_reference::SumsControl;
    use memscape_render::alloc_map::{
        BarPart, ColorMode, CushionKind, OccupancyBarFrame, OccupancyBarView, OccupancyVariant,
    };

    use super::BarIntegral;
    use crate::alloc_map::bins::BinnedScene;
    use crate::alloc_map::scene::TimeAxis;
    use crate::dataset::{LoadSource, load};
    use crate::picture::{MapStyle, MapWindow};

    /// The unbinned bar of `source` on the event axis: its exact sums (every interval, as the
    /// sums worker computes them) and its integral's, at `size` in `window`, resolved to sRGB.
    fn both(
        source: &LoadSource,
        window: MapWindow,
        alpha: f32,
        size: [u32; 2],
    ) -> (Vec<[u8; 4]>, Vec<[u8; 4]>) {
        let dataset = load(source, &|_, _| {}).unwrap();
        let scene = dataset.alloc_trace().unwrap().scene.as_ref().unwrap();
        let binned = BinnedScene::unbinned(scene);
        assert_eq!(binned.bins.len(), 1);
        let end = scene.time_extent(TimeAxis::Events);
        let bars = binned.bar_blocks(TimeAxis::Events, end);
        let mut map_view = window.view(1, [size[0] as f32, size[1] as f32]);
        MapStyle {
            alpha,
            cushion: CushionKind::None,
            cushion_strength: 1.0,
            color_mode: ColorMode::Quantitative,
        }
        .apply(&mut map_view);
        let view = OccupancyBarView::from_map(&map_view, OccupancyVariant::Flat);
        let job = OccupancyBarFrame::cpu_sums_view(&bars, &view, BarPart::Bin(0), size).unwrap();
        let eq1 = job.view.eq1(size);
        let exact = job
            .sums(&bars.blocks, &bars.times, size, 2, &SumsControl::default())
            .unwrap();
        let info = &binned.bins[0];
        let integral = BarIntegral::build(binned.metrics.clone(), &info.series, end, info.capacity);
        let (exact, integral) = (exact.resolve(&eq1), integral.sums(&eq1).resolve(&eq1));
        // A bar of many shades, not a flat one that any two methods agree on.
        let shades: std::collections::HashSet<[u8; 4]> = exact.iter().copied().collect();
        assert!(shades.len() > 10, "{} shades", shades.len());
        (exact, integral)
    }

    /// A generated trace of `events` events (memscape-lod's realistic generator) in a file.
    fn synth(events: u64, dir: &tempfile::TempDir) -> LoadSource {
        let path = dir.path().join("synth.msc");
        memscape_lod::synth::write_mappable(
            memscape_lod::synth::SynthParams::new(events, 3),
            &path,
            &mut |_| {},
        )
        .unwrap();
        LoadSource::File(path)
    }

    fn worst(a: &[[u8; 4]], b: &[[u8; 4]]) -> u8 {
        a.iter()
            .zip(b)
            .flat_map(|(p, q)| (0..3).map(move |c| p[c].abs_diff(q[c])))
            .max()
            .unwrap_or(0)
    }

    /// At α = 1 Eq. 1 weighs each interval by its coverage: the exact bar's column is the
    /// time-weighted mean, which the integral gives from two searches (within the f32 sums'
    /// rounding), on the whole trace and zoomed into a stretch of it, real and generated.
    #[test]
    fn the_integrals_flat_bar_is_the_exact_bars_at_alpha_one() {
        let dir = tempfile::tempdir().unwrap();
        for source in [crate::demo::sources().remove(0), synth(60_000, &dir)] {
            let dataset = load(&source, &|_, _| {}).unwrap();
            let end = dataset
                .alloc_trace()
                .unwrap()
                .scene
                .as_ref()
                .unwrap()
                .events_extent;
            for window in [
                MapWindow {
                    t0: 0.0,
                    t_span: end as f64,
                    y0: 0.0,
                    y_span: 1.0,
                },
                MapWindow {
                    t0: end as f64 * 0.31 + 0.37,
                    t_span: end as f64 / 37.0,
                    y0: 0.0,
                    y_span: 1.0,
                },
            ] {
                let (exact, integral) = both(&source, window, 1.0, [397, 5]);
                let d = worst(&exact, &integral);
                assert!(d <= 2, "{}: {d} levels apart", source.display_name());
            }
        }
    }

    /// At the GUI's α (0.5) the exact sums weigh an interval by its coverage to the power α,
    /// alike for the one-event intervals of the event axis: the integral's columns stay within
    /// a few levels of the exact bar's but in the columns at the trace's ends, which are partly
    /// covered (the background weighs differently).
    #[test]
    fn the_integrals_flat_bar_is_close_to_the_exact_bars_at_the_guis_alpha() {
        let dir = tempfile::tempdir().unwrap();
        let source = synth(60_000, &dir);
        let dataset = load(&source, &|_, _| {}).unwrap();
        let end = dataset
            .alloc_trace()
            .unwrap()
            .scene
            .as_ref()
            .unwrap()
            .events_extent;
        let w = 512;
        let window = MapWindow {
            t0: 0.0,
            t_span: end as f64,
            y0: 0.0,
            y_span: 1.0,
        };
        let (exact, integral) = both(&source, window, 0.5, [w, 3]);
        let inner = |v: &[[u8; 4]]| -> Vec<[u8; 4]> {
            v.chunks(w as usize)
                .flat_map(|row| row[1..row.len() - 1].to_vec())
                .collect()
        };
        let d = worst(&inner(&exact), &inner(&integral));
        assert!(d <= 3, "{d} levels apart");
    }

    /// The integral holds one float per row of the bin's step functions and draws a view from
    /// two searches per column and series: nothing per interval is made (the stand-in bar the
    /// GUI's worker builds for a big trace has one interval).
    #[test]
    fn a_big_traces_flat_bar_builds_no_intervals() {
        use crate::alloc_map::colors::ColorBy;
        use crate::alloc_map::compose::{MapBuilder, Wanted};
        let dir = tempfile::tempdir().unwrap();
        let dataset = load(&synth(60_000, &dir), &|_, _| {}).unwrap();
        let t = dataset.alloc_trace().unwrap();
        let scene = t.scene.as_ref().unwrap();
        let wanted = Wanted {
            by: crate::alloc_map::bins::BinBy::None,
            axis: TimeAxis::Events,
            color_by: ColorBy::Thread,
            age_at: 0,
            curves: false,
            bar_integral: true,
        };
        let built = MapBuilder::default().build(&t.trace, scene, wanted, true);
        assert_eq!(built.bar.as_ref().unwrap().blocks.len(), 1);
        assert!(built.bar_integral.is_some());
        let exact = MapBuilder::default().build(
            &t.trace,
            scene,
            Wanted {
                bar_integral: false,
                ..wanted
            },
            true,
        );
        assert!(exact.bar.unwrap().blocks.len() > 50_000);
        assert!(exact.bar_integral.is_none());
    }
}
