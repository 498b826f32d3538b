//! Eq. 1's sums of a growing trace (a live recording's snapshots) kept from one snapshot to the
//! next while the view stays the same (issue 18 part 4): the CPU work of an update is
//! proportional to the blocks that ended since the last one plus the blocks still live, not to
//! the trace.
//!
//! A snapshot ends its live blocks at its own end; a block freed before that end has its final
//! lifetime, position and colour, so its contribution to a fixed view's pixels never changes
//! again. [`AccumulatedSums`] keeps the sums of those *closed* blocks (each added once) and sums
//! the live ones (*open*, which grow with every snapshot) again at each update; the picture is
//! the two added. Anything that moves blocks or changes the view — another view, pixel size,
//! address layout or colouring (the caller's `frame` key) — starts again from the first block.

use std::ops::Range;

use super::AllocMapView;
use super::cpu_reference::SumsControl;
use super::gpu::{AllocBlockGpu, BlockTimeGpu};
use memscape_eq1::accumulate::Accumulator;
use memscape_eq1::{AccumulatorBuffers, BlockSums, ColumnSums, PixelSums, RowAccumulator};

/// The sums of a trace's closed blocks in one view, and which blocks were open (see the
/// module's documentation).
#[derive(Debug, Default)]
pub struct AccumulatedSums {
    /// The caller's key of what the blocks' pixels depend on; `None` before the first update.
    frame: Option<u64>,
    size: [u32; 2],
    range_start: usize,
    /// Sums of the closed blocks among `range_start..seen`.
    closed: Option<ColumnSums>,
    /// Blocks of `range_start..seen` that were open at the last update.
    open: Vec<u32>,
    seen: usize,
    /// The two accumulators' arrays (closed, open) kept for the next update: each update
    /// otherwise allocates ≈ 70 MB per accumulator at 1400×600 that the kernel zeroes page by
    /// page. Lost, and made again, when an update is cancelled.
    scratch: [AccumulatorBuffers; 2],
}

/// What one [`AccumulatedSums::update`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AccumulatedUpdate {
    /// It started again from the first block (new frame, fewer blocks, another range start).
    pub restarted: bool,
    /// Blocks added to the closed sums by this update.
    pub closed: usize,
    /// Open blocks summed by this update.
    pub open: usize,
}

impl AccumulatedSums {
    pub fn new() -> Self {
        Self::default()
    }

    /// Drops the arrays kept for the next update (what an update costs without them: the
    /// `live_map_sums` example's comparison).
    pub fn forget_scratch(&mut self) {
        self.scratch = Default::default();
    }

    /// The sums of the blocks `range` of `blocks`/`times` in `view` at `size` pixels, keeping
    /// the closed blocks' sums for the next update. `frame` must change whenever a block that
    /// ended may be drawn differently (view, pixel size, address layout, colours): then the sums
    /// start again. A block is open when it ends at or after `open_from` (a snapshot ends its
    /// live blocks at its end); a closed block must keep its index, time, position and colour
    /// in later snapshots. `None` once cancelled through `control` (the
    /// state is then as before the call).
    #[allow(clippy::too_many_arguments)]
    pub fn update(
        &mut self,
        frame: u64,
        view: &AllocMapView,
        size: [u32; 2],
        blocks: &[AllocBlockGpu],
        times: &[BlockTimeGpu],
        range: Range<usize>,
        open_from: u64,
        threads: usize,
        control: &SumsControl,
    ) -> Option<(PixelSums, AccumulatedUpdate)> {
        let size = [size[0].max(1), size[1].max(1)];
        let n = blocks.len().min(times.len());
        let range = range.start.min(n)..range.end.min(n);
        let restart = self.frame != Some(frame)
            || self.size != size
            || self.range_start != range.start
            || range.end < self.seen;
        let (old_open, first_new): (&[u32], usize) = if restart {
            (&[], range.start)
        } else {
            (&self.open, self.seen)
        };
        // Candidates: the blocks open last time and the new ones.
        let candidates = || {
            old_open
                .iter()
                .map(|&i| i as usize)
                .chain(first_new..range.end)
        };
        let (mut now_closed, mut now_open) = (Vec::new(), Vec::new());
        for i in candidates() {
            if join(times[i].end) < open_from {
                now_closed.push(i as u32);
            } else {
                now_open.push(i as u32);
            }
        }
        let ev = view.eq1(size);
        let [closed_scratch, open_scratch] = std::mem::take(&mut self.scratch);
        // The closed blocks on one thread, the open ones on the others (each its own sums).
        let (closed, open) = if threads <= 1 {
            (
                sum_listed(&ev, blocks, times, &now_closed, control, closed_scratch),
                sum_listed(&ev, blocks, times, &now_open, control, open_scratch),
            )
        } else {
            std::thread::scope(|scope| {
                let open = scope
                    .spawn(|| sum_listed(&ev, blocks, times, &now_open, control, open_scratch));
                let closed = sum_listed(&ev, blocks, times, &now_closed, control, closed_scratch);
                let open = open.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
                (closed, open)
            })
        };
        let ((closed, mut closed_scratch), (open, mut open_scratch)) = (closed?, open?);
        if control.cancel.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        // Commit: the new closed blocks join the kept sums.
        let kept = match (self.closed.take(), restart) {
            (Some(mut kept), false) => {
                kept.add(&closed);
                closed_scratch.keep(closed);
                kept
            }
            (old, _) => {
                if let Some(old) = old {
                    closed_scratch.keep(old);
                }
                closed
            }
        };
        let mut out = PixelSums::new(size[0], size[1]);
        kept.add_to(&mut out);
        open.add_to(&mut out);
        open_scratch.keep(open);
        let update = AccumulatedUpdate {
            restarted: restart,
            closed: now_closed.len(),
            open: now_open.len(),
        };
        *self = Self {
            frame: Some(frame),
            size,
            range_start: range.start,
            closed: Some(kept),
            open: now_open,
            seen: range.end,
            scratch: [closed_scratch, open_scratch],
        };
        Some((out, update))
    }
}

/// Eq. 1's sums of a live occupancy bar's one row (a one-bin bar without cushions:
/// [`super::BarSumsJob`]'s `row`) kept from one snapshot's bar to the next while the view stays
/// the same (issue 18 part 4): the intervals a bar closed never change in the later bars of its
/// lineage ([`super::GrowingBar`]), so the accumulator's state after them is kept
/// ([`memscape_eq1::RowProgress`]) and each update adds only the intervals closed since to it,
/// then the open ones to a copy. The sums are, bit for bit, those of one accumulator adding
/// every interval in order (`exact_sums` on one thread): the same additions in the same order,
/// which the map's [`AccumulatedSums`] (its live blocks lie among the ended ones) cannot be.
#[derive(Debug, Default)]
pub struct ContinuedRowSums {
    /// The caller's key of the view and the bar's lineage; `None` before the first update.
    frame: Option<u64>,
    width: u32,
    range_start: usize,
    /// The intervals `range_start..kept` are in `progress`.
    kept: usize,
    /// Interval `kept - 1`, to check that a later bar still has it.
    last_kept: Option<(AllocBlockGpu, BlockTimeGpu)>,
    progress: Option<memscape_eq1::RowProgress>,
    /// The attributes' reference power of two the kept state was summed with (0: fractions).
    reference: u64,
}

/// What one [`ContinuedRowSums::update`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RowSumsUpdate {
    /// It started again from the first interval.
    pub restarted: bool,
    /// Intervals added to the kept state by this update.
    pub kept: usize,
    /// Intervals added after it, to a copy (the open ones, and closed ones past the range).
    pub open: usize,
}

impl ContinuedRowSums {
    pub fn new() -> Self {
        Self::default()
    }

    /// The sums of the intervals `range` of `blocks`/`times` in `row_view` (one pixel tall,
    /// no cushions) repeated over `size[1]` rows, keeping the state after the intervals
    /// `..closed` for the next update. `frame` must change whenever an interval before
    /// `closed` may differ in a later call (another view, pixel width or bar lineage): then the
    /// sums start again. `None` when `row_view` is not one row without cushions, or once
    /// cancelled through `control` (the state is then as before the call).
    #[allow(clippy::too_many_arguments)]
    pub fn update(
        &mut self,
        frame: u64,
        row_view: &AllocMapView,
        size: [u32; 2],
        blocks: &[AllocBlockGpu],
        times: &[BlockTimeGpu],
        range: Range<usize>,
        closed: usize,
        reference: u64,
        control: &SumsControl,
    ) -> Option<(PixelSums, RowSumsUpdate)> {
        let width = size[0].max(1);
        // A grown reference power of two: the kept intervals' attributes are the kept ones
        // times old / new, a power of two, and so are their sums (bit for bit).
        let rescale =
            (self.reference != reference && self.reference > 0 && reference > self.reference)
                .then(|| (self.reference as f64 / reference as f64) as f32);
        let mut last_kept = self.last_kept;
        if let (Some(factor), Some((b, _))) = (rescale, last_kept.as_mut()) {
            b.attr *= factor;
        }
        let ev = row_view.eq1([width, 1]);
        let n = blocks.len().min(times.len());
        let range = range.start.min(n)..range.end.min(n);
        // The intervals whose sums are kept after this update.
        let closed = closed.clamp(range.start, range.end);
        let still_there = |k: usize| {
            k == range.start || (k <= n && last_kept == Some((blocks[k - 1], times[k - 1])))
        };
        let restart = self.frame != Some(frame)
            || self.width != width
            || self.range_start != range.start
            || self.kept > closed
            || self.progress.is_none()
            || (self.reference != reference && rescale.is_none())
            || !still_there(self.kept);
        let (progress, from) = match (&self.progress, restart) {
            (Some(p), false) => {
                let mut p = p.clone();
                if let Some(factor) = rescale {
                    p.scale_attributes(factor);
                }
                (p, self.kept)
            }
            _ => (RowAccumulator::new(&ev)?.progress(), range.start),
        };
        let mut acc = RowAccumulator::resume(&ev, progress)?;
        add_range(&mut acc, blocks, times, from..closed, control)?;
        let progress = acc.progress();
        add_range(&mut acc, blocks, times, closed..range.end, control)?;
        let row_sums = acc.finish();
        if control.cancel.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        // As `exact_sums` hands one accumulator's sums over.
        let mut row = PixelSums::new(width, 1);
        row_sums.add_to(&mut row);
        let out = super::occupancy::rows_repeated(&row, size[1]);
        *self = Self {
            frame: Some(frame),
            width,
            range_start: range.start,
            kept: closed,
            last_kept: (closed > range.start).then(|| (blocks[closed - 1], times[closed - 1])),
            progress: Some(progress),
            reference,
        };
        Some((
            out,
            RowSumsUpdate {
                restarted: restart,
                kept: closed - from,
                open: range.end - closed,
            },
        ))
    }
}

/// Adds the blocks `range` to `acc` in order; `None` once cancelled.
fn add_range(
    acc: &mut impl BlockSums,
    blocks: &[AllocBlockGpu],
    times: &[BlockTimeGpu],
    range: Range<usize>,
    control: &SumsControl,
) -> Option<()> {
    use std::sync::atomic::Ordering;
    let mut at = range.start;
    while at < range.end {
        if control.cancel.load(Ordering::Relaxed) {
            return None;
        }
        let end = (at + super::cpu_reference::SUMS_CHECK_BLOCKS).min(range.end);
        for i in at..end {
            acc.add(&super::cpu_reference::eq1_block(&blocks[i], &times[i]));
        }
        control.done.fetch_add(end - at, Ordering::Relaxed);
        at = end;
    }
    Some(())
}

fn join(v: [u32; 2]) -> u64 {
    u64::from(v[0]) | (u64::from(v[1]) << 32)
}

/// The sums of the blocks `listed` (indices), as `exact_sums` sums a range, on `scratch`'s
/// arrays, and what the accumulator leaves for the next; `None` once cancelled.
fn sum_listed(
    ev: &memscape_eq1::MapView,
    blocks: &[AllocBlockGpu],
    times: &[BlockTimeGpu],
    listed: &[u32],
    control: &SumsControl,
    mut scratch: AccumulatorBuffers,
) -> Option<(ColumnSums, AccumulatorBuffers)> {
    match RowAccumulator::new(ev) {
        // One row: small arrays, not worth keeping.
        Some(row) => Some((sum_into(row, blocks, times, listed, control)?, scratch)),
        None => {
            let mut acc = Accumulator::with_buffers(ev, 0..ev.width, &mut scratch);
            add_listed(&mut acc, blocks, times, listed, control)?;
            let sums = acc.finish_into(&mut scratch);
            Some((sums, scratch))
        }
    }
}

fn sum_into(
    mut acc: impl BlockSums,
    blocks: &[AllocBlockGpu],
    times: &[BlockTimeGpu],
    listed: &[u32],
    control: &SumsControl,
) -> Option<ColumnSums> {
    add_listed(&mut acc, blocks, times, listed, control)?;
    Some(acc.finish())
}

/// Adds the blocks `listed` to `acc`; `None` once cancelled.
fn add_listed(
    acc: &mut impl BlockSums,
    blocks: &[AllocBlockGpu],
    times: &[BlockTimeGpu],
    listed: &[u32],
    control: &SumsControl,
) -> Option<()> {
    use std::sync::atomic::Ordering;
    for part in listed.chunks(super::cpu_reference::SUMS_CHECK_BLOCKS) {
        if control.cancel.load(Ordering::Relaxed) {
            return None;
        }
        for &i in part {
            let i = i as usize;
            acc.add(&super::cpu_reference::eq1_block(&blocks[i], &times[i]));
        }
        control.done.fetch_add(part.len(), Ordering::Relaxed);
    }
    Some(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::alloc_map::cpu_reference::exact_sums;
    use crate::alloc_map::synthetic::heap_like;

    /// The blocks allocated before `cut`, the live ones ended there: a snapshot at `cut`.
    fn snapshot(
        blocks: &[AllocBlockGpu],
        times: &[BlockTimeGpu],
        cut: u64,
    ) -> (Vec<AllocBlockGpu>, Vec<BlockTimeGpu>) {
        let n = times.iter().take_while(|t| join(t.start) < cut).count();
        let cut_times = times[..n]
            .iter()
            .map(|t| BlockTimeGpu::new(join(t.start), join(t.end).min(cut)))
            .collect();
        (blocks[..n].to_vec(), cut_times)
    }

    #[test]
    fn accumulated_sums_equal_the_sums_of_every_block_at_every_snapshot() {
        let (blocks, times, t_end, span) = heap_like(20_000);
        // The frame has headroom: a fixed view over the whole run, as the live map's.
        for cushion in [
            super::super::CushionKind::Parabolic,
            super::super::CushionKind::None,
        ] {
            let mut view = AllocMapView::fit(0, t_end + t_end / 2, 0, span, 320, 180);
            view.cushion = cushion;
            let mut acc = AccumulatedSums::new();
            let cuts = [
                1,
                500,
                500,
                7_000,
                7_001,
                19_000,
                33_333,
                t_end,
                t_end + 600_000,
            ];
            let mut kept = 0;
            for (k, &cut) in cuts.iter().enumerate() {
                let (b, t) = snapshot(&blocks, &times, cut);
                let control = SumsControl::default();
                let (sums, update) = acc
                    .update(7, &view, [320, 180], &b, &t, 0..b.len(), cut, 2, &control)
                    .unwrap();
                let whole = exact_sums(&view, [320, 180], &b, &t, None, 1);
                let d = sums.largest_relative_difference(&whole);
                assert!(d < 1e-4, "{cushion:?} cut {cut}: relative difference {d}");
                assert_eq!(update.restarted, k == 0, "cut {cut}");
                kept += update.closed;
            }
            assert!(kept > 10_000, "closed blocks were added once each: {kept}");
        }
    }

    /// A live bar's row sums continued over each snapshot's bar equal, bit for bit, one
    /// accumulator's sums of every interval (what `BarSumsJob` on one thread gives).
    #[test]
    fn continued_bar_row_sums_equal_the_sums_of_every_interval_bit_for_bit() {
        use super::super::occupancy::{BAR_UNITS, BarSumsJob, ContinuedBar, OccupancySteps};
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let (mut times, mut bytes, mut t) = (Vec::new(), Vec::new(), 1u64);
        for i in 0..60_000u64 {
            // Mostly sub-pixel steps, some idle gaps pixels wide.
            t += if i % 5_000 == 0 {
                40_000
            } else {
                1 + next() % 9
            };
            times.push(t);
            bytes.push(next() % 1_000);
        }
        let frame_end = 2 * t;
        let (width, height) = (523u32, 3u32);
        let full_view = {
            let mut v = AllocMapView::fit(0, frame_end, 0, BAR_UNITS, width, height);
            v.cushion = super::super::CushionKind::None;
            v.color_mode = super::super::ColorMode::Quantitative;
            v.alpha = 0.8;
            v
        };
        let row_view = {
            let mut v = AllocMapView::fit(0, frame_end, 0, BAR_UNITS, width, 1);
            v.cushion = full_view.cushion;
            v.color_mode = full_view.color_mode;
            v.alpha = full_view.alpha;
            v
        };
        let mut carried: Option<ContinuedBar> = None;
        let mut kept = ContinuedRowSums::new();
        let control = SumsControl::default();
        let mut continued = 0;
        let cuts = [1, 2, 900, 900, 7_000, 7_001, 25_000, 41_234, 60_000];
        for &rows in &cuts {
            let s = OccupancySteps {
                start: 1,
                end: times[rows - 1] + 3,
                times: times[..rows].to_vec(),
                bytes: bytes[..rows].to_vec(),
                capacity: 1_000,
            };
            let (bar, _) = ContinuedBar::continued(&s, carried.as_ref());
            let b = &bar.bar;
            let growing = b.growing.unwrap();
            let n = b.blocks.len();
            let (sums, update) = kept
                .update(
                    growing.lineage,
                    &row_view,
                    [width, height],
                    &b.blocks,
                    &b.times,
                    0..n,
                    growing.closed,
                    growing.reference,
                    &control,
                )
                .unwrap();
            let whole = BarSumsJob {
                view: full_view,
                range: 0..n,
                row: Some(row_view),
            }
            .sums(&b.blocks, &b.times, [width, height], 1, &control)
            .unwrap();
            assert_eq!(sums, whole, "{rows} rows ({update:?})");
            assert!(update.open <= 1, "{rows} rows ({update:?})");
            continued += usize::from(!update.restarted);
            carried = Some(bar);
        }
        // Every bar after the first continued its lineage: its sums went on.
        assert_eq!(continued, cuts.len() - 1);
        // Another lineage, or a bar whose kept intervals changed, starts again.
        let b = &carried.unwrap().bar;
        let (n, closed, reference) = {
            let g = b.growing.unwrap();
            (b.blocks.len(), g.closed, g.reference)
        };
        let update = |kept: &mut ContinuedRowSums, lineage: u64, blocks: &[AllocBlockGpu]| {
            let (sums, update) = kept
                .update(
                    lineage,
                    &row_view,
                    [width, height],
                    blocks,
                    &b.times,
                    0..n,
                    closed,
                    reference,
                    &control,
                )
                .unwrap();
            (sums, update.restarted)
        };
        let lineage = b.growing.unwrap().lineage;
        assert!(!update(&mut kept, lineage, &b.blocks).1);
        assert!(update(&mut kept, lineage + 1, &b.blocks).1);
        let mut changed = b.blocks.clone();
        changed[closed - 1].attr += 1.0;
        assert!(update(&mut kept, lineage + 1, &changed).1);
        // A cancelled update leaves the state as it was.
        let cancelled = SumsControl::default();
        cancelled
            .cancel
            .store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(
            kept.update(
                lineage,
                &row_view,
                [width, height],
                &b.blocks,
                &b.times,
                0..n,
                closed,
                reference,
                &cancelled
            )
            .is_none()
        );
        assert!(!update(&mut kept, lineage + 1, &changed).1);
    }

    #[test]
    fn another_frame_or_fewer_blocks_start_again() {
        let (blocks, times, t_end, span) = heap_like(3_000);
        let view = AllocMapView::fit(0, t_end, 0, span, 64, 48);
        let control = SumsControl::default();
        let mut acc = AccumulatedSums::new();
        let (b, t) = snapshot(&blocks, &times, t_end / 2);
        let n = b.len();
        let first = acc
            .update(1, &view, [64, 48], &b, &t, 0..n, t_end / 2, 1, &control)
            .unwrap();
        assert!(first.1.restarted);
        let same = acc
            .update(1, &view, [64, 48], &b, &t, 0..n, t_end / 2, 1, &control)
            .unwrap();
        assert!(!same.1.restarted);
        assert_eq!(same.0, first.0);
        assert!(
            acc.update(2, &view, [64, 48], &b, &t, 0..n, t_end / 2, 1, &control)
                .unwrap()
                .1
                .restarted
        );
        assert!(
            acc.update(2, &view, [64, 40], &b, &t, 0..n, t_end / 2, 1, &control)
                .unwrap()
                .1
                .restarted
        );
        assert!(
            acc.update(2, &view, [64, 40], &b, &t, 0..n - 1, t_end / 2, 1, &control)
                .unwrap()
                .1
                .restarted
        );
        // A cancelled update leaves the state as it was.
        let cancelled = SumsControl::default();
        cancelled
            .cancel
            .store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(
            acc.update(3, &view, [64, 40], &b, &t, 0..n, t_end / 2, 1, &cancelled)
                .is_none()
        );
        let after = acc
            .update(2, &view, [64, 40], &b, &t, 0..n - 1, t_end / 2, 1, &control)
            .unwrap();
        assert!(!after.1.restarted);
    }
}
