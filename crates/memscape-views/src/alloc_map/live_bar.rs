//! The unbinned map's occupancy bar on a live recording, continued from one snapshot to the
//! next: the regions' step functions merged in event order once (the previous snapshot's merge
//! extended by the rows of the events since), and the bar's intervals of those rows copied
//! rather than made again (`memscape_render::alloc_map::ContinuedBar`): their attributes are
//! bytes over a power of two, so the regions' growing capacity changes only the bar's
//! `value_scale`, and they are rewritten only when it passes that power of two. Without it each snapshot merged every row of
//! every region and made one interval per row: 1.5–2.7 s a snapshot on cc1plus's 3 M blocks.
//! The merged rows are not kept: only the new rows are merged, after the last one kept
//! (copying 16 bytes a row of every earlier row was ≈ 80 ms a snapshot at 6 M events).
//! Equal to [`BinnedScene::bar_blocks`] of the snapshot (tests below and `tests/live.rs`).

use std::sync::Arc;

use memscape_render::alloc_map::occupancy::{BarBlocks, OccupancySteps};
use memscape_render::alloc_map::{BarContinued, ContinuedBar};

use super::bins::{BinBy, BinnedScene};
use super::scene::TimeAxis;

/// The unbinned bar of one snapshot with what the next snapshot's continues.
#[derive(Debug, Clone)]
pub struct LiveBar {
    axis: TimeAxis,
    /// Events of the snapshot (its rows are those of events `0..events`).
    events: u64,
    /// Rows of the bin's merged step function (times on `axis`, bytes of every region
    /// together) and the last one: what the next snapshot's merge goes on from.
    rows: usize,
    last_row: Option<(u64, u64)>,
    bar: ContinuedBar,
}

/// What [`LiveBar::build`] could continue (the `memscape::live` log says it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Continued {
    /// The merged rows of the previous snapshot were kept and only the new rows merged.
    pub steps: bool,
    /// How the previous bar's intervals were kept.
    pub intervals: BarContinued,
    /// Whether the arrays of the bar before the previous one were taken (not a copy of every
    /// interval: `ContinuedBar::reused_arrays`).
    pub arrays_reused: bool,
}

impl LiveBar {
    /// The bar of `binned` (the unbinned map: `None` for any binning) on `axis` up to `end`,
    /// for a snapshot of `events` events, continuing `from` (the previous snapshot's of the
    /// same recording) where it can.
    pub fn build(
        binned: &BinnedScene,
        axis: TimeAxis,
        end: u64,
        events: u64,
        from: Option<&LiveBar>,
    ) -> Option<(Self, Continued)> {
        if binned.by != BinBy::None || binned.bins.len() != 1 {
            return None;
        }
        let from = from.filter(|f| f.axis == axis && f.events <= events);
        let continued = from.and_then(|f| {
            let (tail, base) = new_steps(binned, axis, end, f)?;
            let (bar, intervals) = ContinuedBar::continued_tail(&tail, base, &f.bar)?;
            Some((bar, intervals, base + tail.times.len(), last_row(&tail)))
        });
        let steps_continued = continued.is_some();
        let (bar, intervals, rows, last) = continued.unwrap_or_else(|| {
            let steps = binned.steps(0, axis, end);
            let (bar, intervals) = ContinuedBar::continued(&steps, from.map(|f| &f.bar));
            (bar, intervals, steps.times.len(), last_row(&steps))
        });
        let arrays_reused = bar.reused_arrays();
        Some((
            Self {
                axis,
                events,
                rows,
                last_row: last,
                bar,
            },
            Continued {
                steps: steps_continued,
                intervals,
                arrays_reused,
            },
        ))
    }

    /// The bar (as [`BinnedScene::bar_blocks`] makes it).
    pub fn bar(&self) -> &Arc<BarBlocks> {
        &self.bar.bar
    }

    pub fn axis(&self) -> TimeAxis {
        self.axis
    }
}

fn last_row(steps: &OccupancySteps) -> Option<(u64, u64)> {
    steps.times.last().copied().zip(steps.bytes.last().copied())
}

/// The merged rows of the events since `from`'s, after `from`'s last merged row, and that
/// row's index: the rows of `binned.steps(0, axis, end)` from there on, without merging (or
/// copying) the earlier rows. None when the rows before `from`'s events are not the ones it
/// merged (their count or their total differs) or a series' new rows are not in event order
/// (`steps` sorts those whole).
fn new_steps(
    binned: &BinnedScene,
    axis: TimeAxis,
    end: u64,
    from: &LiveBar,
) -> Option<(OccupancySteps, usize)> {
    let info = binned.bins.first()?;
    let series: Vec<&memscape_trace::metrics::BinSeries> = info
        .series
        .iter()
        .filter_map(|&j| binned.metrics.series.get(j))
        .collect();
    let mut old_rows = 0usize;
    let mut state = Vec::with_capacity(series.len());
    let mut new_rows: Vec<(u64, u32, u32)> = Vec::new();
    for (j, s) in series.iter().enumerate() {
        let first = s.event.partition_point(|&e| e < from.events);
        old_rows += first;
        state.push(first.checked_sub(1).map_or(0, |i| s.occupancy[i]));
        let mut last = first.checked_sub(1).map(|i| s.event[i]);
        for i in first..s.len() {
            if last.is_some_and(|l| l > s.event[i]) {
                return None;
            }
            last = Some(s.event[i]);
            new_rows.push((s.event[i], j as u32, i as u32));
        }
    }
    let mut total: u64 = state.iter().sum();
    if old_rows != from.rows || total != from.last_row.map_or(0, |(_, bytes)| bytes) {
        return None;
    }
    new_rows.sort_unstable();
    // From the last merged row on (the bar checks that it continues there).
    let base = old_rows.saturating_sub(1);
    let mut times = Vec::with_capacity(1 + new_rows.len());
    let mut bytes = Vec::with_capacity(1 + new_rows.len());
    if let Some((t, b)) = from.last_row {
        times.push(t);
        bytes.push(b);
    }
    for (_, j, i) in new_rows {
        let (s, i, j) = (series[j as usize], i as usize, j as usize);
        total = total - state[j] + s.occupancy[i];
        state[j] = s.occupancy[i];
        times.push(match axis {
            TimeAxis::Events => s.event[i],
            TimeAxis::Wall => s.time_ns[i],
        });
        bytes.push(total);
    }
    Some((
        OccupancySteps {
            start: 0,
            end,
            times,
            bytes,
            capacity: info.capacity,
        },
        base,
    ))
}
