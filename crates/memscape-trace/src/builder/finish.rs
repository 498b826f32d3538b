//! The end of a build: the builder's state into a [`Trace`] (meta counts, per-process
//! figures, never-freed blocks ended at the trace end, columns).

use super::*;

impl TraceBuilder {
    pub fn finish(self, format: TraceFormat, has_addresses: bool) -> Trace {
        // Times filled in below.
        let mut meta = self.meta(format, has_addresses, 0, true, 0);
        let Self {
            mut blocks,
            clock,
            events,
            order,
            peak_event,
            mut peak_time_ns,
            strings,
            call_tree,
            threads,
            thread_process,
            warnings,
            mut processes,
            process_column,
            free_site,
            free_thread,
            pool_column,
            pools,
            order_base,
            ..
        } = self;
        // Never-freed blocks end at the trace end (event and time).
        for (i, &f) in blocks.flags.iter().enumerate() {
            if f & FLAG_NEVER_FREED != 0 {
                blocks.free_event[i] = events;
            }
        }
        let n = blocks.len();
        let GrowingBlocks {
            address,
            size,
            requested_size,
            usable_size,
            alloc_time_ns,
            mut free_time_ns,
            alloc_event,
            free_event,
            thread,
            site,
            flags,
        } = blocks;
        // (Not shared with a snapshot unless one was made: then copied here.)
        let (mut size, mut usable_size, mut alloc_time_ns, mut thread) = (
            size.into_vec(),
            usable_size.into_vec(),
            alloc_time_ns.into_vec(),
            thread.into_vec(),
        );
        let requested_size = Arc::new(requested_size.into_vec());
        let alloc_event = Arc::new(alloc_event.into_vec());
        let free_event = Arc::new(free_event);
        let (end_time_ns, has_wall_time, alloc_time, free_time) = match clock {
            Clock::PerEvent { last_ns } => {
                for (i, &f) in flags.iter().enumerate() {
                    if f & FLAG_NEVER_FREED != 0 {
                        free_time_ns[i] = last_ns;
                    }
                }
                alloc_time_ns.resize(n, 0);
                free_time_ns.resize(n, last_ns);
                (
                    last_ns,
                    true,
                    Column::from(alloc_time_ns),
                    Column::from(free_time_ns),
                )
            }
            Clock::Ticks(ticks) if ticks.iter().all(|&(_, ns)| ns == 0) => {
                // No clock at all, or one that never advanced (a short program run inside
                // heaptrack's first 10 ms tick: every time 0, so points by time would all fall
                // on one event): one nanosecond per event, and say so.
                peak_time_ns = peak_event;
                (
                    events,
                    false,
                    Column::shared(Arc::clone(&alloc_event)),
                    Column::shared(Arc::clone(&free_event)),
                )
            }
            Clock::Ticks(ticks) => {
                // Computed from the event indices when first read: `info` never reads them.
                let clock = Arc::new(TickClock::new(ticks, events));
                peak_time_ns = clock.time(peak_event);
                let times = |events: &Arc<Vec<u64>>| {
                    let (clock, events) = (Arc::clone(&clock), Arc::clone(events));
                    Column::lazy(move || clock.times(&events))
                };
                (clock.end_ns, true, times(&alloc_event), times(&free_event))
            }
        };
        let size = if size.is_empty() {
            Column::shared(Arc::clone(&requested_size))
        } else {
            size.extend_from_slice(&requested_size[size.len()..]);
            Column::from(size)
        };
        let usable_size = if usable_size.is_empty() {
            // Zeroed memory from the allocator costs nothing until a page is touched.
            Column::lazy(move || vec![USABLE_UNKNOWN; n])
        } else {
            usable_size.resize(n, USABLE_UNKNOWN);
            Column::from(usable_size)
        };
        let thread = if thread.is_empty() {
            Column::lazy(move || vec![0u32; n])
        } else {
            thread.resize(n, 0);
            Column::from(thread)
        };
        let sparse = |mut column: Vec<u32>| -> Column<u32> {
            if column.is_empty() {
                Column::zeros(n)
            } else {
                column.resize(n, 0);
                Column::from(column)
            }
        };
        let blocks = BlockColumns {
            process: sparse(process_column.into_vec()),
            free_site: sparse(free_site),
            free_thread: sparse(free_thread),
            pool: sparse(pool_column.into_vec()),
            address: address.into_vec().into(),
            size,
            requested_size: Column::shared(requested_size),
            usable_size,
            alloc_time_ns: alloc_time,
            free_time_ns: free_time,
            alloc_event: Column::shared(alloc_event),
            free_event: Column::shared(free_event),
            thread,
            site: site.into_vec().into(),
            flags: flags.into(),
        };
        meta.end_time_ns = end_time_ns;
        meta.has_wall_time = has_wall_time;
        meta.peak_time_ns = peak_time_ns;
        if processes.is_empty() {
            processes.push(Process::from_meta(&meta));
        }
        let thread_process = if thread_process.len() == threads.len() {
            thread_process
        } else {
            vec![0; threads.len()]
        };
        Trace {
            meta,
            blocks,
            strings,
            call_tree,
            threads,
            thread_process,
            processes,
            pools,
            warnings,
            // After a `drain` the order holds only the last events: computed when asked instead.
            event_order_cache: if order_base == 0 {
                std::sync::OnceLock::from(crate::model::EventOrder::Computed(order.into_vec()))
            } else {
                std::sync::OnceLock::new()
            },
        }
    }
}
