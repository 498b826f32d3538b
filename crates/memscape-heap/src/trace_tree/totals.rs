//! A live recording's heap-size curve without a sweep of every block (issue 18 part 4): the
//! heap's bytes after every [`STEP`]-th event, extended over the events a snapshot added
//! ([`HeapTotals::extend`]), so that the curve's bytes at any event are one of them plus at
//! most `STEP - 1` events ([`HeapTotals::at`]), equal to [`super::TraceHeap::heap_series`]'s.

use memscape_trace::Trace;
use memscape_trace::model::FLAG_MMAP;

/// Events between two kept totals.
pub(super) const STEP: usize = 1024;

/// The heap's requested bytes of heap blocks (anonymous mappings left out, as the trees do)
/// after every [`STEP`]-th event and after the last event swept.
#[derive(Debug, Clone, Default)]
pub(super) struct HeapTotals {
    /// `every[k]`: the bytes after `k * STEP` events.
    every: Vec<u64>,
    /// The bytes after `events` events.
    last: u64,
    events: usize,
}

impl HeapTotals {
    /// Sweeps the events of `trace` after those swept (a trace extending the one swept).
    pub(super) fn extend(&mut self, trace: &Trace) {
        let order = trace.event_order();
        let mut total = self.last;
        for (e, &id) in order.iter().enumerate().skip(self.events) {
            if e % STEP == 0 {
                self.every.push(total);
            }
            total = step(trace, total, id);
        }
        self.last = total;
        self.events = self.events.max(order.len());
    }

    /// Events swept.
    pub(super) fn events(&self) -> usize {
        self.events
    }

    /// The heap's bytes after `applied` events; None past those swept.
    pub(super) fn at(&self, trace: &Trace, applied: u64) -> Option<u64> {
        let applied = usize::try_from(applied).ok()?;
        if applied == self.events {
            return Some(self.last);
        }
        let k = applied / STEP;
        let from = *self.every.get(k)?;
        let events = trace.event_order().get(k * STEP..applied)?;
        Some(
            events
                .iter()
                .fold(from, |total, &id| step(trace, total, id)),
        )
    }
}

/// `total` after event `id` (`block << 1 | is_free`, `u32::MAX` for none). Wrapping, as the
/// trees' sums: a total is in range once every event before it is applied.
fn step(trace: &Trace, total: u64, id: u32) -> u64 {
    if id == u32::MAX {
        return total;
    }
    let b = &trace.blocks;
    let block = (id >> 1) as usize;
    if b.flags[block] & FLAG_MMAP != 0 {
        return total;
    }
    let bytes = b.requested_size[block];
    if id & 1 == 0 {
        total.wrapping_add(bytes)
    } else {
        total.wrapping_sub(bytes)
    }
}
