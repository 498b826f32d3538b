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
        // (Moved out, or, where a snapshot still holds a prefix — a live recording's — its
        // shared allocation kept as it is when full length: `Whole`.)
        let (size, usable_size, alloc_time_ns, thread) = (
            Whole::of(size),
            Whole::of(usable_size),
            Whole::of(alloc_time_ns),
            Whole::of(thread),
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
                free_time_ns.resize(n, last_ns);
                (
                    last_ns,
                    true,
                    alloc_time_ns.column(n, 0),
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
            size.extended(n, |from| requested_size[from..n].to_vec())
        };
        let usable_size = if usable_size.is_empty() {
            // Zeroed memory from the allocator costs nothing until a page is touched.
            Column::lazy(move || vec![USABLE_UNKNOWN; n])
        } else {
            usable_size.column(n, USABLE_UNKNOWN)
        };
        let thread = if thread.is_empty() {
            Column::lazy(move || vec![0u32; n])
        } else {
            thread.column(n, 0)
        };
        let sparse = |column: Whole<u32>| -> Column<u32> {
            if column.is_empty() {
                Column::zeros(n)
            } else {
                column.column(n, 0)
            }
        };
        let blocks = BlockColumns {
            process: sparse(Whole::of(process_column)),
            free_site: sparse(Whole::Vec(free_site)),
            free_thread: sparse(Whole::Vec(free_thread)),
            pool: sparse(Whole::of(pool_column)),
            address: Whole::of(address).column(n, 0),
            size,
            requested_size: Column::shared(requested_size),
            usable_size,
            alloc_time_ns: alloc_time,
            free_time_ns: free_time,
            alloc_event: Column::shared(alloc_event),
            free_event: Column::shared(free_event),
            thread,
            site: Whole::of(site).column(n, 0),
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
                std::sync::OnceLock::from(match order.into_vec_or_frozen() {
                    Ok(order) => crate::model::EventOrder::Computed(order),
                    Err(shared) => crate::model::EventOrder::Shared(shared),
                })
            } else {
                std::sync::OnceLock::new()
            },
        }
    }
}

/// A finished column's values: its own, or the allocation that a live recording's snapshots
/// share, frozen whole (copying 10 block columns of cc1plus's 3.1 M blocks and its 6.2 M
/// event-order entries was ~0.3 s of `record --live`'s end; BENCHMARKS.md, wave 23).
enum Whole<T> {
    Vec(Vec<T>),
    Frozen(memscape_map::Frozen<T>),
}

impl<T: bytemuck::Pod> Whole<T> {
    fn of(column: AppendVec<T>) -> Self {
        match column.into_vec_or_frozen() {
            Ok(values) => Self::Vec(values),
            Err(shared) => Self::Frozen(shared),
        }
    }

    fn is_empty(&self) -> bool {
        match self {
            Self::Vec(v) => v.is_empty(),
            Self::Frozen(f) => f.is_empty(),
        }
    }

    /// `n` values, those missing filled by `missing(len)` (the values from `len` to `n`).
    fn extended(self, n: usize, missing: impl FnOnce(usize) -> Vec<T>) -> Column<T> {
        match self {
            Self::Frozen(shared) if shared.len() == n => Column::appended(shared),
            Self::Frozen(shared) => Self::Vec(shared.to_vec()).extended(n, missing),
            Self::Vec(mut values) => {
                if values.len() < n {
                    values.extend(missing(values.len()));
                }
                values.truncate(n);
                Column::from(values)
            }
        }
    }

    /// `n` values, the missing ones `fill`.
    fn column(self, n: usize, fill: T) -> Column<T> {
        self.extended(n, |from| vec![fill; n.saturating_sub(from)])
    }
}
