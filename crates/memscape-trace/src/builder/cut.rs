//! Segments cut from a builder that keeps every block: a live recording's merge, whose
//! snapshots share the builder's block columns, writes the same segmented `.msc` as
//! `memscape record`'s draining merge while the program runs, so that only the last segment
//! and the footer are left at its end.
//!
//! [`TraceBuilder::cut_kept`] hands over what [`TraceBuilder::drain`] would at that point
//! — the blocks ended since the last cut in allocation order, the times of the events since
//! then and their order entries (block ids renumbered into the segment's own site list) — as
//! copies: the builder keeps every block at its index, and its `finish` is the whole trace.
//! Cut at the same points, the file is the one a draining merge writes (`tests`).

use super::*;

/// What the cuts so far handed over (see the module documentation).
#[derive(Debug, Clone, Default)]
pub(super) struct KeptCuts {
    /// Blocks ended since the last cut (in the order they ended).
    ended: Vec<u32>,
    /// The first event not yet in a segment.
    next_event: u64,
    /// Blocks at the last cut: those after it were allocated since.
    blocks_at_cut: usize,
    /// Blocks handed over so far.
    written: u64,
}

impl KeptCuts {
    pub(super) fn ended(&mut self, block: u32) {
        self.ended.push(block);
    }
}

/// `column[i]`, or `default` where a sparse column stops short.
fn at<T: Copy>(column: &[T], i: usize, default: T) -> T {
    column.get(i).copied().unwrap_or(default)
}

impl TraceBuilder {
    /// From now on the builder notes which blocks end, so that [`TraceBuilder::cut_kept`]
    /// can hand segments over without taking the blocks out. Call it before the first event;
    /// do not mix it with [`TraceBuilder::drain`].
    pub fn keep_cuts(&mut self) {
        self.kept_cuts.get_or_insert_with(Default::default);
    }

    /// Blocks that [`TraceBuilder::cut_kept`] has not handed over yet (what a draining
    /// builder's [`TraceBuilder::held_blocks`] counts).
    pub fn unwritten_blocks(&self) -> usize {
        let written = self.kept_cuts.as_ref().map_or(0, |c| c.written);
        self.blocks
            .len()
            .saturating_sub(usize::try_from(written).unwrap_or(usize::MAX))
    }

    /// [`TraceBuilder::drain`]'s segment — the blocks that ended since the last cut (`all`:
    /// and every block still live, ended at the trace end; call it last, then `finish`), in
    /// allocation order, and the times of the events since the last cut — copied out: the
    /// builder keeps its blocks. `None` for builders without per-event times or without
    /// [`TraceBuilder::keep_cuts`].
    pub fn cut_kept(&mut self, all: bool) -> Option<Drained> {
        let Clock::PerEvent { last_ns } = self.clock else {
            return None;
        };
        let mut cuts = self.kept_cuts.take()?;
        let n = self.blocks.len();
        let events = self.events;
        if all {
            // Never-freed blocks end at the trace end, as `finish` (and `drain`) end them.
            // (Every block left live is after the last cut or ended nowhere yet.)
            let at_cut = cuts.blocks_at_cut;
            self.end_never_freed(last_ns, |i| {
                if i < at_cut {
                    cuts.ended.push(i as u32);
                }
            });
        }
        let born = cuts.blocks_at_cut.min(n);
        // Blocks of the segment: those ended since the last cut (older ones first, then the
        // ones born since), in index order = allocation order.
        let mut old: Vec<u32> = cuts
            .ended
            .iter()
            .copied()
            .filter(|&b| (b as usize) < born)
            .collect();
        old.sort_unstable();
        old.dedup();
        let b = &self.blocks;
        let ended = |i: usize| all || b.flags[i] & FLAG_NEVER_FREED == 0;
        let segment: Vec<usize> = old
            .iter()
            .map(|&i| i as usize)
            .chain((born..n).filter(|&i| ended(i)))
            .collect();
        // The events' times, as `drain` derives them from the blocks it holds (the old blocks
        // ended since the cut and every block born since; in index order, later ones last).
        let (times, prev) = super::drain::event_window_times(
            b,
            old.iter().map(|&i| i as usize).chain(born..n),
            ended,
            [cuts.next_event, events],
            all,
            self.drained_time,
            last_ns,
        );
        let first = cuts.next_event;
        self.drained_time = prev;
        // Order entries of the window, their blocks numbered as in the segment's site list:
        // the blocks born since the cut first (as `drain`'s builder numbers its held blocks,
        // whose sites only the context model reads), then the old blocks ended since.
        let young = n - born;
        let local = |block: u32| -> Option<u32> {
            let block_index = block as usize;
            if block_index >= born {
                u32::try_from(block_index - born).ok()
            } else {
                let k = old.binary_search(&block).ok()?;
                u32::try_from(young + k).ok()
            }
        };
        let from = usize::try_from(first - self.order_base).unwrap_or(usize::MAX);
        let to = usize::try_from(events - self.order_base).unwrap_or(usize::MAX);
        let order: Vec<u32> = self
            .order
            .get(from..to)
            .unwrap_or_default()
            .iter()
            .map(|&entry| match entry {
                u32::MAX => u32::MAX,
                entry => local(entry >> 1).map_or(u32::MAX, |id| id << 1 | (entry & 1)),
            })
            .collect();
        let order_site: Vec<u32> = b.site[born..n]
            .iter()
            .copied()
            .chain(old.iter().map(|&i| b.site[i as usize]))
            .collect();
        let gather_u64 = |column: &[u64], default: &dyn Fn(usize) -> u64| -> Vec<u64> {
            segment
                .iter()
                .map(|&i| column.get(i).copied().unwrap_or_else(|| default(i)))
                .collect()
        };
        let gather_u32 =
            |column: &[u32]| -> Vec<u32> { segment.iter().map(|&i| at(column, i, 0)).collect() };
        let requested: &[u64] = &b.requested_size;
        let drained = Drained {
            address: gather_u64(&b.address, &|_| 0),
            // Sparse columns stop short where every value so far is the default (`push_block`).
            size: gather_u64(&b.size, &|i| requested[i]),
            requested_size: gather_u64(requested, &|_| 0),
            usable_size: gather_u64(&b.usable_size, &|_| USABLE_UNKNOWN),
            alloc_time_ns: gather_u64(&b.alloc_time_ns, &|_| 0),
            free_time_ns: gather_u64(&b.free_time_ns, &|_| last_ns),
            alloc_event: gather_u64(&b.alloc_event, &|_| 0),
            free_event: gather_u64(&b.free_event, &|_| events),
            thread: gather_u32(&b.thread),
            site: gather_u32(&b.site),
            flags: segment.iter().map(|&i| b.flags[i]).collect(),
            process: gather_u32(&self.process_column),
            free_site: gather_u32(&self.free_site),
            free_thread: gather_u32(&self.free_thread),
            pool: gather_u32(&self.pool_column),
            first_event: first,
            times,
            order,
            order_site,
        };
        cuts.ended.clear();
        cuts.next_event = events;
        cuts.blocks_at_cut = n;
        cuts.written += drained.len() as u64;
        self.kept_cuts = Some(cuts);
        Some(drained)
    }
}
