//! The trace built so far while the builder goes on ([`TraceBuilder::snapshot`], for live
//! views): the columns a block never changes after its allocation are append-only
//! ([`AppendVec`]) and handed out as shared prefixes (no copy); the columns a free changes
//! (flags, free event and time, free site and thread) are copied, with the live blocks ended
//! at the snapshot's end as [`TraceBuilder::finish`] ends them.

use super::*;

/// The builder's block columns. Those written once, when the block is allocated, are
/// append-only and shared with snapshots; the free side is written again when the block
/// ends.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct GrowingBlocks {
    pub(crate) address: AppendVec<u64>,
    /// Empty while every extent equals the requested size (see `push_block`).
    pub(crate) size: AppendVec<u64>,
    pub(crate) requested_size: AppendVec<u64>,
    /// Empty while every usable size is unknown.
    pub(crate) usable_size: AppendVec<u64>,
    /// Empty for tick clocks (computed from the events when finished).
    pub(crate) alloc_time_ns: AppendVec<u64>,
    pub(crate) free_time_ns: Vec<u64>,
    pub(crate) alloc_event: AppendVec<u64>,
    pub(crate) free_event: Vec<u64>,
    /// Empty while every thread is 0.
    pub(crate) thread: AppendVec<u32>,
    pub(crate) site: AppendVec<u32>,
    pub(crate) flags: Vec<u8>,
}

impl GrowingBlocks {
    pub(crate) fn len(&self) -> usize {
        self.address.len()
    }
}

/// See [`TraceBuilder::counts`].
#[derive(Debug, Clone, Copy)]
pub struct BuilderCounts<'a> {
    pub events: u64,
    pub allocs: u64,
    pub frees: u64,
    /// Heap bytes (requested sizes) live now, all processes together.
    pub live_bytes: u64,
    /// Declared processes, their counts so far (events, allocations, frees, peak).
    pub processes: &'a [Process],
    /// Heap bytes live now in each of `processes`.
    pub process_live_bytes: &'a [u64],
}

impl TraceBuilder {
    /// The trace of the events so far, as [`TraceBuilder::finish`] would make it (equal to it),
    /// while the builder goes on. The append-only block columns are shared (their values so
    /// far, no copy); the free side of the blocks (flags, free event and time, free site and
    /// thread: 25 bytes a block) is copied, so a snapshot costs that copy plus the names
    /// (call tree without its index of children, strings, threads, processes), not a copy of
    /// the builder. The event order is the builder's, shared. Builders on ticks are
    /// copied and finished.
    pub fn snapshot(&mut self, format: TraceFormat, has_addresses: bool) -> Trace {
        let Clock::PerEvent { last_ns } = self.clock else {
            return self.clone().finish(format, has_addresses);
        };
        let n = self.blocks.len();
        let events = self.events;
        // The columns kept empty while they only repeat the others are filled in now (the
        // builder appends to them from here on), so that they can be shared too.
        self.fill_append_columns();
        self.blocks.alloc_time_ns.resize(n, 0);
        let b = &self.blocks;
        let mut free_event = b.free_event.clone();
        let mut free_time_ns = b.free_time_ns.clone();
        free_time_ns.resize(n, last_ns);
        for (i, &f) in b.flags.iter().enumerate() {
            if f & FLAG_NEVER_FREED != 0 {
                free_event[i] = events;
                free_time_ns[i] = last_ns;
            }
        }
        let sparse = |column: &Vec<u32>| -> Column<u32> {
            if column.is_empty() {
                Column::zeros(n)
            } else {
                let mut column = column.clone();
                column.resize(n, 0);
                Column::from(column)
            }
        };
        let free_site = sparse(&self.free_site);
        let free_thread = sparse(&self.free_thread);
        let flags = Column::from(b.flags.clone());
        let b = &mut self.blocks;
        let blocks = BlockColumns {
            address: Column::appended(b.address.freeze()),
            size: Column::appended(b.size.freeze()),
            requested_size: Column::appended(b.requested_size.freeze()),
            usable_size: Column::appended(b.usable_size.freeze()),
            alloc_time_ns: Column::appended(b.alloc_time_ns.freeze()),
            free_time_ns: Column::from(free_time_ns),
            alloc_event: Column::appended(b.alloc_event.freeze()),
            free_event: Column::from(free_event),
            thread: Column::appended(b.thread.freeze()),
            site: Column::appended(b.site.freeze()),
            flags,
            process: Column::appended(self.process_column.freeze()),
            free_site,
            free_thread,
            pool: Column::appended(self.pool_column.freeze()),
        };
        let meta = self.meta(format, has_addresses, last_ns, true, self.peak_time_ns);
        // The order kept as the events arrived, when it holds them all (no `drain` before).
        let event_order_cache = if self.order_base == 0 && self.order.len() as u64 == events {
            std::sync::OnceLock::from(crate::model::EventOrder::Shared(self.order.freeze()))
        } else {
            std::sync::OnceLock::new()
        };
        let mut processes = self.processes.clone();
        if processes.is_empty() {
            processes.push(Process::from_meta(&meta));
        }
        let thread_process = if self.thread_process.len() == self.threads.len() {
            self.thread_process.clone()
        } else {
            vec![0; self.threads.len()]
        };
        Trace {
            meta,
            blocks,
            strings: self.strings.clone(),
            call_tree: self.call_tree.without_index(),
            threads: self.threads.clone(),
            thread_process,
            processes,
            pools: self.pools.clone(),
            warnings: self.warnings.clone(),
            event_order_cache,
        }
    }

    /// What the next [`TraceBuilder::snapshot`] would count, without making it: its
    /// metadata's events, allocations, frees and live bytes, and each declared process with
    /// its live bytes. A live view asks this after every read (is there anything new?) and
    /// summarizes the recording from it, instead of applying every event a second time.
    pub fn counts(&self) -> BuilderCounts<'_> {
        BuilderCounts {
            events: self.events,
            allocs: self.allocs,
            frees: self.frees,
            live_bytes: self.live_bytes,
            processes: &self.processes,
            process_live_bytes: &self.process_live,
        }
    }

    /// Fills the append-only columns kept empty while they only repeat the others (extent,
    /// usable size, thread, process, pool) up to every block.
    pub(super) fn fill_append_columns(&mut self) {
        let n = self.blocks.len();
        let b = &mut self.blocks;
        if b.size.len() < n {
            let from = b.size.len();
            b.size.extend_from_slice(&b.requested_size[from..n]);
        }
        b.usable_size.resize(n, USABLE_UNKNOWN);
        b.thread.resize(n, 0);
        self.process_column.resize(n, 0);
        self.pool_column.resize(n, 0);
    }

    /// The trace's metadata as it stands.
    pub(super) fn meta(
        &self,
        format: TraceFormat,
        has_addresses: bool,
        end_time_ns: u64,
        has_wall_time: bool,
        peak_time_ns: u64,
    ) -> TraceMeta {
        TraceMeta {
            format,
            source: self.source.clone(),
            command_line: self.command_line.clone(),
            has_addresses,
            has_wall_time,
            events: self.events,
            allocs: self.allocs,
            frees: self.frees,
            reallocs: self.reallocs,
            unknown_frees: self.unknown_frees,
            inherited_frees: self.inherited_frees,
            double_frees: self.double_frees,
            mmaps: self.mmaps,
            munmaps: self.munmaps,
            pool_allocs: self.pool_allocs,
            pool_frees: self.pool_frees,
            exec_ends: self.exec_ends,
            start_monotonic_ns: self.start_monotonic_ns,
            end_time_ns,
            peak_live_bytes: self.peak_live_bytes,
            peak_event: self.peak_event,
            peak_time_ns,
            end_live_bytes: self.live_bytes,
            page_size: self.page_size,
            modules: self.modules.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A pseudo-random stream of allocations, frees, reallocs, mmaps and thread and process
    /// switches; after each step (or every few), a snapshot equals the finished copy of the
    /// builder, and every earlier snapshot still equals what it was when made.
    #[test]
    fn snapshots_equal_the_finished_trace_and_never_change_afterwards() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..20 {
            let mut b = TraceBuilder::with_event_times("snap.csv");
            let mut kept: Vec<(Trace, Trace)> = Vec::new();
            let mut time = 0;
            for step in 0..300u64 {
                let x = next();
                time += x % 5;
                let address = 0x1000 + (x >> 16) % 64 * 16;
                let usable = if x & 0x100 != 0 { 48 } else { USABLE_UNKNOWN };
                let thread = if round % 2 == 1 {
                    (x >> 40) as u32 % 3
                } else {
                    0
                };
                match x % 11 {
                    0..=3 => {
                        b.alloc(step, time, address, x % 40 + 1, usable, thread, 1);
                    }
                    4..=6 => {
                        b.free_from(step, time, address, thread, 2);
                    }
                    7 => b.realloc(step, time, address, address + 8, 24, usable, thread, 3),
                    8 => {
                        b.mmap(step, time, 0x10_0000 + (x % 3) * 0x1000, 4096, thread, 0);
                    }
                    9 => {
                        b.munmap(step, time, 0x10_0000, 0x3000);
                    }
                    _ if round % 3 == 2 => {
                        let pid = (x >> 20) as u32 % 2;
                        let p = b.process(Process {
                            pid: 100 + pid,
                            ..Process::default()
                        });
                        b.set_process(p);
                    }
                    _ => {
                        let frame = crate::model::Frame {
                            ip: x % 7,
                            ..crate::model::Frame::default()
                        };
                        b.call_tree.child((x >> 30) as u32 % 4, frame);
                    }
                }
                if x % 4 == 0 {
                    let snapshot = b.snapshot(TraceFormat::Msc, true);
                    let finished = b.clone().finish(TraceFormat::Msc, true);
                    assert_eq!(snapshot.meta, finished.meta, "round {round} step {step}");
                    assert_eq!(
                        snapshot.blocks, finished.blocks,
                        "round {round} step {step}"
                    );
                    assert_eq!(snapshot.event_order(), finished.event_order());
                    assert_eq!(snapshot.event_order(), snapshot.compute_event_order());
                    assert_eq!(snapshot.processes, finished.processes);
                    assert_eq!(snapshot.threads, finished.threads);
                    assert_eq!(snapshot.call_tree, finished.call_tree);
                    assert_eq!(snapshot.call_tree.len(), b.call_tree.len());
                    kept.push((snapshot, finished));
                }
            }
            for (snapshot, finished) in &kept {
                assert_eq!(
                    snapshot.blocks, finished.blocks,
                    "round {round}: changed after"
                );
                assert_eq!(snapshot.meta, finished.meta);
            }
            let end = b.snapshot(TraceFormat::Msc, true);
            let finished = b.finish(TraceFormat::Msc, true);
            assert_eq!(end.blocks, finished.blocks);
            assert_eq!(end.meta, finished.meta);
        }
    }
}
