//! A finished trace's events fed back into a builder ([`TraceBuilder::replay`]): how tests and
//! benchmarks reproduce a recording as a live view sees it, a stretch of events at a time.

use super::*;

impl TraceBuilder {
    /// A builder (with event times) ready to replay `trace`: its strings, call tree and threads
    /// copied, in the same order, so that its sites and thread numbers are `trace`'s.
    pub fn replaying(trace: &Trace, name: &str) -> Self {
        let mut builder = Self::with_event_times(name);
        builder.strings = trace.strings.clone();
        builder.call_tree = trace.call_tree.clone();
        for &t in &trace.threads {
            builder.thread(trace.strings.get(t));
        }
        builder
    }

    /// Feeds `trace`'s events `events` (positions in [`Trace::event_order`]) into this builder,
    /// each with its event position as its line, the free sites left unknown. The builder's
    /// threads and sites must be `trace`'s ([`TraceBuilder::replaying`]).
    pub fn replay(&mut self, trace: &Trace, events: std::ops::Range<usize>) {
        self.replay_with(trace, events, |i| (trace.blocks.thread[i], 0));
    }

    /// [`TraceBuilder::replay`] with each free's thread and site given by `free_side` for the
    /// freed block's index (tests that need frees from other threads or with known sites).
    pub fn replay_with(
        &mut self,
        trace: &Trace,
        events: std::ops::Range<usize>,
        free_side: impl Fn(usize) -> (u32, u32),
    ) {
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
                    let (thread, site) = free_side(i);
                    self.free_from(line, b.free_time_ns[i], b.address[i], thread, site);
                }
            }
        }
    }
}
