//! One bin's occupancy bar continued over a longer step function of the same rows
//! ([`ContinuedBar`]): a live recording's, whose intervals closed by earlier rows are copied
//! (their attributes kept while the capacity grows within the bar's power of two), the arrays
//! of the bar two snapshots back taken when nothing else holds them ([`SpareBar`]), each bar
//! naming its lineage and closed intervals ([`GrowingBar`]).

use super::{
    AllocBlockGpu, BAR_BLOCK_COLOR, BAR_UNITS, BarBand, BarBlocks, BarValues, BlockTimeGpu,
    OccupancySteps,
};

/// Which intervals of a live bar the later bars of its lineage keep ([`BarBlocks::growing`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GrowingBar {
    /// Bars of one lineage were continued one from the other by copying their closed intervals
    /// as they were ([`BarContinued::Copied`]); a bar made from the first row or recoloured
    /// starts a new lineage.
    pub lineage: u64,
    /// Intervals `..closed` are closed: every later bar of the lineage has them at the same
    /// indices, unchanged but for their attributes' reference (the last interval, open, ends at
    /// the bar's end and may still grow).
    pub closed: usize,
    /// The power of two the attributes are bytes over (0: fractions of the capacity). Within a
    /// lineage it only grows: a later bar's attributes of the same intervals are these times
    /// `reference / later reference`, exactly (a power of two).
    pub reference: u64,
}

/// The lineage of the next bar that starts one ([`GrowingBar::lineage`]).
static NEXT_LINEAGE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// One bin's bar (the whole stack one band, as [`BarBlocks::build`] makes it for one bin) with
/// where its intervals stood after the last row, so that a longer step function of the same bin
/// (a live recording's next snapshot: the same rows and more) continues it: the intervals the
/// earlier rows closed are copied, not made again, and their attributes kept as they are while the
/// capacity grows within the bar's power of two ([`BarBlocks::value_scale`]); only past it (or
/// when a row's bytes pass the capacity) made again from each interval's bytes, kept. Made from the
/// first row when a row lay past the earlier end (an interval cut there would end later now)
/// or the rows do not extend the earlier ones.
#[derive(Debug, Clone, Default)]
pub struct ContinuedBar {
    pub bar: std::sync::Arc<BarBlocks>,
    /// Bytes in use in each interval of `bar` (shared, for a later bar to take: [`SpareBar`]).
    bytes: std::sync::Arc<Vec<u64>>,
    /// Rows made into intervals; of the bar's blocks, `closed` were closed by those rows (the
    /// last one, if more, is the last state up to `end`).
    rows: usize,
    closed: usize,
    /// The interval iteration's state after `rows` rows: the open interval's start and bytes.
    t: u64,
    value: u64,
    /// The last row made, to check that a continuing step function extends these rows.
    last_row: Option<(u64, u64)>,
    start: u64,
    end: u64,
    /// The attributes' form, and the most bytes of any row made (what decides it).
    values: BarValues,
    max_bytes: u64,
    within_end: bool,
    /// The bar this one continued, for the next to take (see [`SpareBar`]).
    spare: std::sync::Arc<std::sync::Mutex<Option<SpareBar>>>,
    /// Whether this bar's arrays were an earlier bar's, taken (see [`SpareBar`]).
    reused: bool,
}

/// The bar a [`ContinuedBar`] continued (its closed intervals, their attributes in `values`'
/// form, a prefix of that bar's): a live snapshot's bar is shown while the next is made, so the next
/// cannot take its arrays and copied every interval (≈ 40 bytes a row, 6 M rows on cc1plus);
/// the one before it is no longer shown by then, and its arrays are taken when nothing else
/// holds them, only the intervals closed since copied into them.
#[derive(Debug)]
struct SpareBar {
    bar: std::sync::Arc<BarBlocks>,
    bytes: std::sync::Arc<Vec<u64>>,
    closed: usize,
    values: BarValues,
}

/// How far [`ContinuedBar::continued`] went on from the earlier bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarContinued {
    /// Made from the first row.
    No,
    /// The earlier intervals copied, their attributes made again: the capacity passed the
    /// bar's power of two, or a row's bytes passed the capacity ([`BarBlocks::value_scale`]).
    Recoloured,
    /// The earlier intervals copied as they were.
    Copied,
}

impl ContinuedBar {
    /// The bar of `steps`, continuing `from` (the bar of a prefix of its rows) where it can.
    /// Equal to `BarBlocks::build(&[steps.clone()], &[1.0])`.
    pub fn continued(steps: &OccupancySteps, from: Option<&ContinuedBar>) -> (Self, BarContinued) {
        Self::resume(steps, 0, Self::reusable(steps, 0, from))
    }

    /// [`ContinuedBar::continued`] of a step function of which `tail` holds the rows from
    /// `base` on (its `times[k]` and `bytes[k]` are row `base + k`), the earlier ones those
    /// `from` was made of: the merged rows of a live snapshot need not be copied whole. None
    /// unless `from` continues there (made of rows up to `base` or later, `tail` not empty).
    pub fn continued_tail(
        tail: &OccupancySteps,
        base: usize,
        from: &ContinuedBar,
    ) -> Option<(Self, BarContinued)> {
        if tail.times.is_empty() || tail.bytes.is_empty() {
            return None;
        }
        let reuse = Self::reusable(tail, base, Some(from))?;
        Some(Self::resume(tail, base, Some(reuse)))
    }

    /// `from` when `steps` (rows from `base` on) extends the rows it was made of and the
    /// rows from its last one on are in `steps`.
    fn reusable<'a>(
        steps: &OccupancySteps,
        base: usize,
        from: Option<&'a ContinuedBar>,
    ) -> Option<&'a ContinuedBar> {
        let n = base + steps.times.len().min(steps.bytes.len());
        from.filter(|f| {
            f.within_end
                && f.start == steps.start
                && f.end <= steps.end
                && f.rows <= n
                && (base == 0 || f.rows > base)
                && f.last_row
                    == f.rows
                        .checked_sub(1)
                        .map(|i| (steps.times[i - base], steps.bytes[i - base]))
        })
    }

    /// The bar of rows `base..` (in `steps`), after `reuse`'s rows (from the first row when
    /// `None`: then `base` is 0).
    fn resume(
        steps: &OccupancySteps,
        base: usize,
        reuse: Option<&ContinuedBar>,
    ) -> (Self, BarContinued) {
        let n = base + steps.times.len().min(steps.bytes.len());
        let row = |i: usize| (steps.times[i - base], steps.bytes[i - base]);
        let first_new = reuse.map_or(0, |f| f.rows);
        let max_bytes = (first_new..n)
            .map(|i| row(i).1)
            .fold(reuse.map_or(0, |f| f.max_bytes), u64::max);
        let values = BarValues::of(steps, max_bytes);
        let block =
            |bytes: u64| AllocBlockGpu::new(0, BAR_UNITS, BAR_BLOCK_COLOR, values.attr(bytes));
        let end = steps.end.max(steps.start);
        let mut how = BarContinued::No;
        let mut reused = false;
        let (mut blocks, mut times, mut bytes, first, mut t, mut value) = match reuse {
            Some(f) => {
                let spare = f
                    .spare
                    .lock()
                    .ok()
                    .and_then(|mut s| s.take())
                    .filter(|s| s.closed <= f.closed)
                    .and_then(|s| {
                        let bar = std::sync::Arc::try_unwrap(s.bar).ok()?;
                        let bytes = std::sync::Arc::try_unwrap(s.bytes).ok()?;
                        (bar.blocks.len() >= s.closed
                            && bar.times.len() >= s.closed
                            && bytes.len() >= s.closed)
                            .then_some((bar, bytes, s.closed, s.values))
                    });
                // The intervals kept: the first `split` in `split_values`' form, the others
                // in `f`'s.
                let (mut blocks, times, bytes, split, split_values) = match spare {
                    Some((bar, mut bytes, closed, spare_values)) => {
                        reused = true;
                        let (mut blocks, mut times) = (bar.blocks, bar.times);
                        blocks.truncate(closed);
                        times.truncate(closed);
                        bytes.truncate(closed);
                        blocks.extend_from_slice(&f.bar.blocks[closed..f.closed]);
                        times.extend_from_slice(&f.bar.times[closed..f.closed]);
                        bytes.extend_from_slice(&f.bytes[closed..f.closed]);
                        (blocks, times, bytes, closed, spare_values)
                    }
                    None => (
                        f.bar.blocks[..f.closed].to_vec(),
                        f.bar.times[..f.closed].to_vec(),
                        f.bytes[..f.closed].to_vec(),
                        0,
                        f.values,
                    ),
                };
                how = BarContinued::Copied;
                for (range, kept) in [(0..split, split_values), (split..f.closed, f.values)] {
                    if kept != values {
                        // Only the attributes change (the colour field is the same for all).
                        how = BarContinued::Recoloured;
                        for (b, &bytes) in blocks[range.clone()].iter_mut().zip(&f.bytes[range]) {
                            b.attr = values.attr(bytes);
                        }
                    }
                }
                (blocks, times, bytes, f.rows, f.t, f.value)
            }
            None => (Vec::new(), Vec::new(), Vec::new(), 0, steps.start, 0),
        };
        let extra = n - first + 1;
        blocks.reserve_exact(extra);
        times.reserve_exact(extra);
        bytes.reserve_exact(extra);
        let push = |blocks: &mut Vec<AllocBlockGpu>,
                    times: &mut Vec<BlockTimeGpu>,
                    bytes: &mut Vec<u64>,
                    (t0, t1, b): (u64, u64, u64)| {
            blocks.push(block(b));
            times.push(BlockTimeGpu::new(t0, t1));
            bytes.push(b);
        };
        // `OccupancySteps::intervals_iter`, resumed at row `first`.
        let mut within_end = true;
        for i in first..n {
            let (row_time, row_bytes) = row(i);
            let raw = row_time.max(t);
            within_end &= raw <= end;
            let ti = raw.min(end);
            if ti > t {
                push(&mut blocks, &mut times, &mut bytes, (t, ti, value));
            }
            t = ti;
            value = row_bytes;
        }
        let closed = blocks.len();
        if end > t {
            push(&mut blocks, &mut times, &mut bytes, (t, end, value));
        }
        // The closed intervals kept as they were: the earlier bar's lineage goes on.
        let rescaled = |f: &ContinuedBar| {
            how == BarContinued::Recoloured
                && matches!(
                    (f.values, values),
                    (BarValues::OverReference(_), BarValues::OverReference(_))
                )
        };
        let lineage = reuse
            .filter(|f| how == BarContinued::Copied || rescaled(f))
            .and_then(|f| f.bar.growing)
            .map_or_else(
                || NEXT_LINEAGE.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                |g| g.lineage,
            );
        let bar = BarBlocks {
            bands: vec![BarBand {
                range: 0..blocks.len(),
                lo: 0,
                hi: BAR_UNITS,
            }],
            blocks,
            times,
            value_scale: values.scale(steps.capacity),
            growing: Some(GrowingBar {
                lineage,
                closed,
                reference: match values {
                    BarValues::OverReference(reference) => reference,
                    BarValues::Fractions(_) => 0,
                },
            }),
        };
        (
            Self {
                bar: std::sync::Arc::new(bar),
                bytes: std::sync::Arc::new(bytes),
                rows: n,
                closed,
                t,
                value,
                last_row: n.checked_sub(1).map(row),
                start: steps.start,
                end,
                values,
                max_bytes,
                within_end,
                spare: std::sync::Arc::new(std::sync::Mutex::new(reuse.map(|f| SpareBar {
                    bar: f.bar.clone(),
                    bytes: f.bytes.clone(),
                    closed: f.closed,
                    values: f.values,
                }))),
                reused,
            },
            how,
        )
    }

    /// Whether this bar's arrays were those of the bar before the one it continued, taken
    /// rather than copied ([`SpareBar`]).
    pub fn reused_arrays(&self) -> bool {
        self.reused
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_continued_bar_equals_the_bar_made_from_the_first_row() {
        // A growing step function cut at several lengths (times with repeats, one going
        // backwards, as the wall-clock axis may), its end growing with it.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let (mut times, mut bytes, mut t) = (Vec::new(), Vec::new(), 3u64);
        for _ in 0..2000 {
            t = match next() % 10 {
                0 => t,
                1 => t.saturating_sub(2),
                k => t + k,
            };
            times.push(t);
            bytes.push(next() % 1000);
        }
        let steps = |rows: usize, end: u64, capacity: u64| OccupancySteps {
            start: 1,
            end,
            times: times[..rows].to_vec(),
            bytes: bytes[..rows].to_vec(),
            capacity,
        };
        let full = |s: &OccupancySteps| BarBlocks::build(std::slice::from_ref(s), &[1.0]);
        let mut carried: Option<ContinuedBar> = None;
        let (mut how, mut reused, mut lineages) = (Vec::new(), Vec::new(), Vec::new());
        for (rows, capacity) in [
            (0, 900),
            (1, 900),
            (7, 900),
            (300, 900),
            (301, 950),
            (900, 950),
            (2000, 950),
        ] {
            let end = times[..rows].iter().copied().max().unwrap_or(0) + 5;
            let s = steps(rows, end, capacity);
            let (bar, continued) = ContinuedBar::continued(&s, carried.as_ref());
            assert_eq!(*bar.bar, full(&s), "{rows} rows");
            how.push(continued);
            reused.push(bar.reused_arrays());
            lineages.push(bar.bar.growing.map(|g| (g.lineage, g.closed)));
            carried = Some(bar);
        }
        // The first rows' bytes are within the capacity (bytes over 1024), from 300 rows on
        // some pass it (the clamped fractions). Every growth continued the last bar,
        // recoloured where the form or the capacity of the fractions changed and once more
        // after (the arrays taken, two bars back, hold the attributes before the change).
        use BarContinued::{Copied, No, Recoloured};
        assert_eq!(
            how,
            [
                No, Copied, Recoloured, Recoloured, Recoloured, Recoloured, Copied
            ]
        );
        // A bar whose closed intervals were copied as they were goes on with its lineage, one
        // made from the first row starts another (a recoloured one goes on only when its
        // attributes are bytes over a grown power of two: here they become fractions).
        for k in 1..how.len() {
            let same = lineages[k].map(|g| g.0) == lineages[k - 1].map(|g| g.0);
            assert_eq!(same, how[k] == Copied, "bar {k}: {lineages:?}");
        }
        // From the third bar on, each took the arrays of the bar two before it (nothing else
        // held them), and was still equal to the bar made from the first row.
        assert_eq!(reused, [false, false, true, true, true, true, true]);
        // Held elsewhere (a live snapshot's shown bar), the arrays are copied: still equal.
        let longer = steps(2000, 20_000, 950);
        let (held, _) = ContinuedBar::continued(&steps(1500, 20_000, 950), None);
        let (middle, _) = ContinuedBar::continued(&steps(1700, 20_000, 950), Some(&held));
        let shown = held.bar.clone();
        drop(held);
        let (bar, continued) = ContinuedBar::continued(&longer, Some(&middle));
        assert_eq!((continued, bar.reused_arrays()), (Copied, false));
        assert_eq!(*bar.bar, full(&longer));
        drop(shown);
        // A row past the earlier end: that bar is not continued, and still equal.
        let s = steps(100, 50, 950);
        let (cut, _) = ContinuedBar::continued(&s, None);
        assert_eq!(*cut.bar, full(&s));
        let longer = steps(200, 10_000, 950);
        let (bar, continued) = ContinuedBar::continued(&longer, Some(&cut));
        assert_eq!(continued, BarContinued::No);
        assert_eq!(*bar.bar, full(&longer));
        // Rows that do not extend the earlier ones are not continued either.
        let mut other = steps(300, 10_000, 950);
        other.bytes[99] += 1;
        let (from, _) = ContinuedBar::continued(&steps(100, 10_000, 950), None);
        let (bar, continued) = ContinuedBar::continued(&other, Some(&from));
        assert_eq!(continued, BarContinued::No);
        assert_eq!(*bar.bar, full(&other));
    }

    #[test]
    fn a_bar_continued_from_the_new_rows_only_equals_the_bar_continued_from_all() {
        // A step function growing by uneven rows (time repeats and steps back), continued
        // from the rows since the earlier bar's last one (`continued_tail`) and from all rows.
        let (mut times, mut bytes) = (Vec::new(), Vec::new());
        let mut t = 5u64;
        for k in 0..1500u64 {
            t = match k * 7919 % 13 {
                0 => t,
                1 => t.saturating_sub(3),
                d => t + d,
            };
            times.push(t);
            bytes.push(k * 104_729 % 777);
        }
        let steps = |from: usize, rows: usize, capacity: u64| OccupancySteps {
            start: 2,
            end: times[..rows].iter().copied().max().unwrap_or(0) + 4,
            times: times[from..rows].to_vec(),
            bytes: bytes[from..rows].to_vec(),
            capacity,
        };
        let (mut tail_bar, _) = ContinuedBar::continued(&steps(0, 1, 800), None);
        let mut rows_before = 1;
        let mut how = Vec::new();
        for (rows, capacity) in [
            (1, 800),
            (2, 800),
            (40, 800),
            (41, 900),
            (700, 900),
            (1500, 900),
        ] {
            let whole = steps(0, rows, capacity);
            let (from_all, _) = ContinuedBar::continued(&whole, Some(&tail_bar));
            let base = rows_before - 1;
            let (bar, continued) =
                ContinuedBar::continued_tail(&steps(base, rows, capacity), base, &tail_bar)
                    .expect("the rows extend the earlier bar's");
            assert_eq!(*bar.bar, *from_all.bar, "{rows} rows");
            assert_eq!(*bar.bar, BarBlocks::build(&[whole], &[1.0]), "{rows} rows");
            how.push(continued);
            (tail_bar, rows_before) = (bar, rows);
        }
        // Every row's bytes within the capacity, which grows within one power of two (1024):
        // the attributes are bytes over it, nothing recoloured.
        assert_eq!(how, [BarContinued::Copied; 6]);
        assert_eq!(tail_bar.bar.value_scale, (1024.0 / 900.0) as f32);
        // A tail holding more of the earlier rows than the last one, and no new ones.
        let (same, _) = ContinuedBar::continued_tail(&steps(1400, 1500, 900), 1400, &tail_bar)
            .expect("the same rows");
        assert_eq!(*same.bar, *tail_bar.bar);
        // Rows that start after the earlier bar's last one, or an empty tail: not continued.
        let (short, _) = ContinuedBar::continued(&steps(0, 10, 900), None);
        assert!(ContinuedBar::continued_tail(&steps(10, 20, 900), 10, &short).is_none());
        assert!(ContinuedBar::continued_tail(&steps(9, 9, 900), 9, &short).is_none());
        // A tail whose first row is not the earlier last one: not continued.
        let mut other = steps(9, 20, 900);
        other.bytes[0] += 1;
        assert!(ContinuedBar::continued_tail(&other, 9, &short).is_none());
    }

    #[test]
    fn a_live_bar_whose_capacity_grows_keeps_its_intervals_until_a_power_of_two() {
        // A live recording's bar: rows' bytes within a capacity that grows at each snapshot.
        let rows: Vec<(u64, u64)> = (0..3000u64)
            .map(|k| (k * 3, k * 37 % 500 + k / 10))
            .collect();
        let steps = |n: usize, capacity: u64| OccupancySteps {
            start: 0,
            end: 3 * n as u64 + 7,
            times: rows[..n].iter().map(|r| r.0).collect(),
            bytes: rows[..n].iter().map(|r| r.1).collect(),
            capacity,
        };
        let mut carried: Option<ContinuedBar> = None;
        let mut how = Vec::new();
        // Capacities: 1000 → 1024 (same power of two), 1500 (the next), 2000, 2040, then one
        // below some row's bytes (600: the clamped fractions), then 2048 again.
        for (n, capacity) in [
            (100, 1000),
            (400, 1024),
            (900, 1500),
            (1500, 2000),
            (2000, 2040),
            (3000, 600),
            (3000, 2048),
        ] {
            let s = steps(n, capacity);
            let (bar, continued) = ContinuedBar::continued(&s, carried.as_ref());
            let scratch = BarBlocks::build(std::slice::from_ref(&s), &[1.0]);
            assert_eq!(*bar.bar, scratch, "{n} rows at {capacity}");
            // What is drawn, the attribute times the scale, is the fraction (to f32 rounding).
            for ((t0, t1, f), b) in s.intervals_iter().zip(&bar.bar.blocks) {
                let drawn = b.attr * bar.bar.value_scale;
                assert!(
                    (drawn - f).abs() <= 2e-7 * f.max(1.0),
                    "[{t0}, {t1}) {drawn} vs {f}"
                );
            }
            how.push(continued);
            carried = Some(bar);
        }
        // Recoloured where the power of two (or the form) changed and once more after (the
        // arrays taken, two bars back, hold the attributes before the change).
        use BarContinued::{Copied, No, Recoloured};
        assert_eq!(
            how,
            [
                No, Copied, Recoloured, Recoloured, Copied, Recoloured, Recoloured
            ]
        );
    }
}
