//! Handing finished blocks over while a trace is still being built, so that a recording's
//! memory holds its live blocks and one segment, not every block (`memscape record` writes
//! them into a segmented `.msc` as they come: `msc::SegmentWriter`).
//!
//! [`TraceBuilder::drain`] takes the blocks that have ended (every block at the end) and the
//! times of the events since the previous drain; the builder keeps its live blocks, renumbered
//! from 0 in allocation order. Loaded back, the segments give the blocks of
//! [`TraceBuilder::finish`] without draining (the reader puts the blocks back in allocation
//! order), and `finish` after the last drain gives the rest of the trace (metadata, call tree,
//! strings, threads, processes, pools, warnings) with no blocks: what
//! `SegmentWriter::finish` writes as the footer.

use super::*;
use crate::msc::{SegmentBlocks, SegmentEvents};

/// Blocks and event times handed over by [`TraceBuilder::drain`]: one segment of a
/// segmented `.msc` file ([`Drained::blocks`], [`Drained::events`]).
#[derive(Debug, Default)]
pub struct Drained {
    pub(super) address: Vec<u64>,
    pub(super) size: Vec<u64>,
    pub(super) requested_size: Vec<u64>,
    pub(super) usable_size: Vec<u64>,
    pub(super) alloc_time_ns: Vec<u64>,
    pub(super) free_time_ns: Vec<u64>,
    pub(super) alloc_event: Vec<u64>,
    pub(super) free_event: Vec<u64>,
    pub(super) thread: Vec<u32>,
    pub(super) site: Vec<u32>,
    pub(super) flags: Vec<u8>,
    pub(super) process: Vec<u32>,
    pub(super) free_site: Vec<u32>,
    pub(super) free_thread: Vec<u32>,
    pub(super) pool: Vec<u32>,
    /// Index of the first event of `times`.
    pub(super) first_event: u64,
    /// One time per event since the previous drain (the last drain: and the trace end).
    pub(super) times: Vec<u64>,
    /// The events' order entries (`block << 1 | is_free`, block ids into `order_site`).
    pub(super) order: Vec<u32>,
    pub(super) order_site: Vec<u32>,
}

impl Drained {
    /// Number of blocks handed over.
    pub fn len(&self) -> usize {
        self.address.len()
    }

    pub fn is_empty(&self) -> bool {
        self.address.is_empty()
    }

    /// Number of events whose times this holds.
    pub fn event_count(&self) -> usize {
        self.order.len()
    }

    /// The blocks, as a segment's columns.
    pub fn blocks(&self) -> SegmentBlocks<'_> {
        SegmentBlocks {
            address: &self.address,
            size: &self.size,
            requested_size: &self.requested_size,
            usable_size: &self.usable_size,
            alloc_time_ns: &self.alloc_time_ns,
            free_time_ns: &self.free_time_ns,
            alloc_event: &self.alloc_event,
            free_event: &self.free_event,
            thread: &self.thread,
            site: &self.site,
            flags: &self.flags,
            process: &self.process,
            free_site: &self.free_site,
            free_thread: &self.free_thread,
            pool: &self.pool,
        }
    }

    /// The events' times, as a segment's.
    pub fn events(&self) -> SegmentEvents<'_> {
        SegmentEvents {
            first_event: self.first_event,
            times: &self.times,
            order: &self.order,
            site: &self.order_site,
        }
    }
}

impl TraceBuilder {
    /// Hands over the blocks that have ended (`all`: every block, never-freed ones ended at the
    /// trace end as [`TraceBuilder::finish`] ends them; call it last, then `finish`) in
    /// allocation order, and the times of the events since the previous drain. The live blocks
    /// stay, renumbered from 0: block indices returned before a drain mean nothing after it.
    /// For builders whose events carry their own times ([`TraceBuilder::with_event_times`]);
    /// `None` for others.
    pub fn drain(&mut self, all: bool) -> Option<Drained> {
        let Clock::PerEvent { last_ns } = self.clock else {
            return None;
        };
        let n = self.blocks.len();
        let events = self.events;
        if all {
            self.end_never_freed(last_ns, |_| {});
        }
        // Every column full length (the sparse ones are filled in up to a block on demand).
        self.fill_append_columns();
        for column in [&mut self.free_site, &mut self.free_thread] {
            column.resize(n, 0);
        }
        // The events' times, as `msc::write::event_times` derives them from the blocks.
        let first = self.order_base;
        let b = &self.blocks;
        let ended = |i: usize| all || b.flags[i] & FLAG_NEVER_FREED == 0;
        let (times, prev) = event_window_times(
            b,
            0..n,
            ended,
            [first, events],
            all,
            self.drained_time,
            last_ns,
        );
        self.drained_time = prev;
        let order = std::mem::take(&mut self.order).into_vec();
        let order_site = b.site.to_vec();
        // Split: ended blocks out (in index order = allocation order), live ones compacted.
        let ended = |flags: u8| all || flags & FLAG_NEVER_FREED == 0;
        let mut renumber = vec![FREED; n];
        let mut kept = 0u32;
        for (i, &f) in b.flags.iter().enumerate() {
            if !ended(f) {
                renumber[i] = kept;
                kept += 1;
            }
        }
        let flags = b.flags.clone();
        fn split<T: Copy>(column: &mut Vec<T>, flags: &[u8], ended: impl Fn(u8) -> bool) -> Vec<T> {
            let mut out = Vec::new();
            let mut keep = 0;
            for i in 0..column.len() {
                if ended(flags[i]) {
                    out.push(column[i]);
                } else {
                    column[keep] = column[i];
                    keep += 1;
                }
            }
            column.truncate(keep);
            column.shrink_to(keep.max(1024));
            out
        }
        // The append-only columns as vectors for the split (no copy: a builder that drains
        // makes no snapshots).
        fn split_append<T: bytemuck::Pod>(
            column: &mut AppendVec<T>,
            flags: &[u8],
            ended: impl Fn(u8) -> bool,
        ) -> Vec<T> {
            let mut v = std::mem::take(column).into_vec();
            let out = split(&mut v, flags, ended);
            *column = v.into();
            out
        }
        let b = &mut self.blocks;
        let drained = Drained {
            address: split_append(&mut b.address, &flags, ended),
            size: split_append(&mut b.size, &flags, ended),
            requested_size: split_append(&mut b.requested_size, &flags, ended),
            usable_size: split_append(&mut b.usable_size, &flags, ended),
            alloc_time_ns: split_append(&mut b.alloc_time_ns, &flags, ended),
            free_time_ns: split(&mut b.free_time_ns, &flags, ended),
            alloc_event: split_append(&mut b.alloc_event, &flags, ended),
            free_event: split(&mut b.free_event, &flags, ended),
            thread: split_append(&mut b.thread, &flags, ended),
            site: split_append(&mut b.site, &flags, ended),
            flags: split(&mut b.flags, &flags, ended),
            process: split_append(&mut self.process_column, &flags, ended),
            free_site: split(&mut self.free_site, &flags, ended),
            free_thread: split(&mut self.free_thread, &flags, ended),
            pool: split_append(&mut self.pool_column, &flags, ended),
            first_event: first,
            times,
            order,
            order_site,
        };
        // Every reference to a block is to a live one: renumber them.
        let moved = |block: &mut u32| {
            if let Some(&to) = renumber.get(*block as usize) {
                *block = to;
            }
        };
        self.live.values_mut().for_each(moved);
        self.mappings.values_mut().for_each(moved);
        for (live, mappings) in &mut self.other_spaces {
            live.values_mut().for_each(moved);
            mappings.values_mut().for_each(moved);
        }
        self.pool_live.values_mut().for_each(moved);
        self.order_base = events;
        self.drained_blocks += drained.len() as u64;
        Some(drained)
    }

    /// Blocks the builder holds (live ones, and ended ones since the last drain).
    pub fn held_blocks(&self) -> usize {
        self.blocks.len()
    }

    /// Blocks handed over by [`TraceBuilder::drain`] so far.
    pub fn drained_blocks(&self) -> u64 {
        self.drained_blocks
    }
}

impl TraceBuilder {
    /// Ends every block still live at the trace end (`last_ns`), as `finish` ends them, telling
    /// `ended` each one's index: a last segment's blocks.
    pub(super) fn end_never_freed(&mut self, last_ns: u64, mut ended: impl FnMut(usize)) {
        let events = self.events;
        let b = &mut self.blocks;
        for i in 0..b.len() {
            if b.flags[i] & FLAG_NEVER_FREED != 0 {
                b.free_event[i] = events;
                b.free_time_ns[i] = last_ns;
                ended(i);
            }
        }
    }
}

/// The times of events `window[0]..window[1]` (and with `all` one more, the trace end), as
/// `msc::write::event_times` derives them from the blocks: each event at its block's allocation
/// or (where `ended`) free time, an event without a block at the previous event's time (`prev`
/// before the first). `blocks` are the indices whose events may lie in the window; later ones
/// win where two name the same event. Returns the times and the last of them.
pub(super) fn event_window_times(
    b: &GrowingBlocks,
    blocks: impl Iterator<Item = usize>,
    ended: impl Fn(usize) -> bool,
    window: [u64; 2],
    all: bool,
    mut prev: u64,
    last_ns: u64,
) -> (Vec<u64>, u64) {
    let [first, events] = window;
    let len = usize::try_from(events.saturating_sub(first)).unwrap_or(0);
    let mut times = vec![u64::MAX; len + usize::from(all)];
    for i in blocks {
        let free = ended(i).then_some((b.free_event[i], b.free_time_ns[i]));
        for (e, t) in std::iter::once((b.alloc_event[i], b.alloc_time_ns[i])).chain(free) {
            if let Some(slot) = e
                .checked_sub(first)
                .and_then(|e| usize::try_from(e).ok())
                .and_then(|e| times.get_mut(e))
            {
                *slot = t;
            }
        }
    }
    for t in &mut times {
        if *t == u64::MAX {
            *t = prev;
        }
        prev = *t;
    }
    if all && let Some(end) = times.last_mut() {
        *end = last_ns.max(prev);
    }
    (times, prev)
}
