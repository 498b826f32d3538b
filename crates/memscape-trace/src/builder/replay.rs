//! A finished trace's events fed back into a builder ([`TraceBuilder::replay`]): how tests and
//! benchmarks reproduce a recording as a live view sees it, a stretch of events at a time.

use super::*;

impl TraceBuilder {
    /// Feeds `trace`'s events `events` (positions in [`Trace::event_order`]) into this builder,
    /// each with its event position as its line, the free sites left unknown. The builder's
    /// threads and sites must be `trace`'s (copy its strings, call tree and threads first).
    pub fn replay(&mut self, trace: &Trace, events: std::ops::Range<usize>) {
        let b = &trace.blocks;
        let order = trace.event_order();
        let start = events.start;
        for (e, &id) in order[events].iter().enumerate() {
            let line = (start + e) as u64;
            let i = (id >> 1) as usize;
            match id {
                u32::MAX => self.unmatched_free(line),
                id if id & 1 == 0 => {
                    self.alloc(
                        line,
                        b.alloc_time_ns[i],
                        b.address[i],
                        b.requested_size[i],
                        b.usable_size[i],
                        b.thread[i],
                        b.site[i],
                    );
                }
                _ => {
                    self.free_from(line, b.free_time_ns[i], b.address[i], b.thread[i], 0);
                }
            }
        }
    }
}
