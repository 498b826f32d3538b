//! Turns a stream of alloc / free / realloc events into blocks, counting every inconsistency
//! as a warning instead of failing. All importers except `.msc` go through [`TraceBuilder`].

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use memscape_io::{Location, Warnings};

use crate::model::{
    BlockVecs, CallTree, FLAG_ENDED_BY_OVERLAP, FLAG_FREED_BY_REALLOC, FLAG_MMAP, FLAG_NEVER_FREED,
    Module, Strings, Trace, TraceFormat, TraceMeta, USABLE_UNKNOWN,
};
use crate::warn;

/// Larger than any x86-64 / AArch64 user address space (128 TiB): a size above this cannot be a
/// real allocation and is reported as absurd instead of stretching every view.
pub const MAX_SANE_SIZE: u64 = 1 << 47;

/// Hasher for pointer keys: one multiply-rotate instead of SipHash, which was the largest cost
/// of loading (three lookups per event). Pointers are not attacker-chosen keys in a way that
/// matters here: a crafted trace can at worst slow its own load down.
#[derive(Default, Clone, Copy)]
pub(crate) struct PointerHasher(u64);

impl Hasher for PointerHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, x: u64) {
        // Fibonacci hashing; the rotation moves the well-mixed high bits down, where hashbrown
        // takes its bucket index from.
        self.0 = (self.0 ^ x)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(26);
    }
}

pub(crate) type PointerMap<V> = HashMap<u64, V, BuildHasherDefault<PointerHasher>>;
/// Value of `TraceBuilder::live` for an address whose block was freed.
const FREED: u32 = u32::MAX;

/// How events get their wall time.
#[derive(Debug)]
enum Clock {
    /// Every event carries its own time (CSV).
    PerEvent { last_ns: u64 },
    /// Coarse ticks (heaptrack's `c` lines); events between two ticks are spread evenly by event
    /// index when the trace is finished. Each entry is (first event after the tick, tick ns).
    Ticks(Vec<(u64, u64)>),
}

/// Accumulates events into a [`Trace`].
#[derive(Debug)]
pub struct TraceBuilder {
    source: String,
    pub(crate) blocks: BlockVecs,
    /// Live blocks by address.
    /// Value [`FREED`] marks an address whose last block was freed and that has not been
    /// allocated again, to tell a double free from a free of a pointer never seen: one map, so
    /// an allocation or a free is a single hash lookup.
    live: PointerMap<u32>,
    /// Live anonymous mappings by start address (kept apart from heap blocks: the allocator's
    /// own arenas are mappings that heap blocks lie in).
    mappings: PointerMap<u32>,
    mmaps: u64,
    munmaps: u64,
    clock: Clock,
    events: u64,
    allocs: u64,
    frees: u64,
    reallocs: u64,
    unknown_frees: u64,
    double_frees: u64,
    live_bytes: u64,
    peak_live_bytes: u64,
    peak_event: u64,
    peak_time_ns: u64,
    pub strings: Strings,
    pub call_tree: CallTree,
    threads: Vec<u32>,
    thread_index: HashMap<String, u32>,
    pub warnings: Warnings,
    pub command_line: String,
    pub page_size: u64,
    pub modules: Vec<Module>,
    /// False for inputs without addresses: blocks are then freed by index, not by address.
    track_addresses: bool,
}

impl TraceBuilder {
    /// For inputs without addresses (blocks are freed with [`TraceBuilder::free_block`]).
    pub fn without_addresses(mut self) -> Self {
        self.track_addresses = false;
        self
    }

    /// A builder whose events carry their own times.
    pub fn with_event_times(source: &str) -> Self {
        Self::new(source, Clock::PerEvent { last_ns: 0 })
    }

    /// A builder whose times come from [`TraceBuilder::tick`] calls.
    pub fn with_ticks(source: &str) -> Self {
        Self::new(source, Clock::Ticks(Vec::new()))
    }

    fn new(source: &str, clock: Clock) -> Self {
        Self {
            source: source.to_owned(),
            blocks: BlockVecs::default(),
            live: PointerMap::default(),
            mappings: PointerMap::default(),
            mmaps: 0,
            munmaps: 0,
            clock,
            events: 0,
            allocs: 0,
            frees: 0,
            reallocs: 0,
            unknown_frees: 0,
            double_frees: 0,
            live_bytes: 0,
            peak_live_bytes: 0,
            peak_event: 0,
            peak_time_ns: 0,
            strings: Strings::default(),
            call_tree: CallTree::default(),
            threads: Vec::new(),
            thread_index: HashMap::new(),
            warnings: Warnings::new(),
            command_line: String::new(),
            page_size: 0,
            modules: Vec::new(),
            track_addresses: true,
        }
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    pub fn at(&self, line: u64) -> Location {
        Location::line(self.source.clone(), line)
    }

    pub fn warn(&mut self, kind: &'static str, line: u64) {
        let at = self.at(line);
        self.warnings.add(kind, warn::message(kind), at);
    }

    /// Index of a named thread, created on first use.
    pub fn thread(&mut self, name: &str) -> u32 {
        if let Some(&t) = self.thread_index.get(name) {
            return t;
        }
        let id = self.strings.intern(name);
        let t = u32::try_from(self.threads.len()).unwrap_or(u32::MAX);
        self.threads.push(id);
        self.thread_index.insert(name.to_owned(), t);
        t
    }

    /// A heaptrack time tick, in nanoseconds since the start.
    pub fn tick(&mut self, ns: u64, line: u64) {
        let events = self.events;
        let mut unsorted = false;
        if let Clock::Ticks(ticks) = &mut self.clock {
            let ns = match ticks.last() {
                Some(&(_, last)) if ns < last => {
                    unsorted = true;
                    last
                }
                _ => ns,
            };
            match ticks.last_mut() {
                // Several ticks with no event in between: only the latest matters.
                Some(last) if last.0 == events => last.1 = ns,
                _ => ticks.push((events, ns)),
            }
        }
        if unsorted {
            self.warn(warn::UNSORTED_TIME, line);
        }
    }

    /// The time of the current event, clamped so that times never go backwards.
    fn event_time(&mut self, time_ns: u64, line: u64) -> u64 {
        match &mut self.clock {
            Clock::PerEvent { last_ns } => {
                if time_ns < *last_ns {
                    let clamped = *last_ns;
                    self.warn(warn::UNSORTED_TIME, line);
                    clamped
                } else {
                    *last_ns = time_ns;
                    time_ns
                }
            }
            // Filled in by `finish` from the ticks.
            Clock::Ticks(_) => 0,
        }
    }

    fn next_event(&mut self) -> u64 {
        let e = self.events;
        self.events += 1;
        e
    }

    /// An allocation. Returns the new block's index, or `None` when the event was rejected.
    #[allow(clippy::too_many_arguments)]
    pub fn alloc(
        &mut self,
        line: u64,
        time_ns: u64,
        address: u64,
        requested: u64,
        usable: u64,
        thread: u32,
        site: u32,
    ) -> Option<u32> {
        let extent = if usable != USABLE_UNKNOWN {
            usable
        } else {
            requested
        };
        if requested > MAX_SANE_SIZE
            || extent > MAX_SANE_SIZE
            || address.checked_add(extent).is_none()
        {
            self.warn(warn::ABSURD_SIZE, line);
            return None;
        }
        let index = match u32::try_from(self.blocks.len()) {
            Ok(i) if i < FREED => i,
            _ => {
                self.warn(warn::TOO_MANY_BLOCKS, line);
                return None;
            }
        };
        let time = self.event_time(time_ns, line);
        let event = self.next_event();
        if self.track_addresses {
            let slot = self.live.entry(address).or_insert(FREED);
            let old = std::mem::replace(slot, index);
            if old != FREED {
                // A lost free: end the old block here so that blocks never overlap in time.
                self.warn(warn::ALLOC_OVER_LIVE, line);
                self.end_block(old, event, time, FLAG_ENDED_BY_OVERLAP);
            }
        }
        let b = &mut self.blocks;
        b.address.push(address);
        b.size.push(extent);
        b.requested_size.push(requested);
        b.usable_size.push(usable);
        b.alloc_time_ns.push(time);
        b.free_time_ns.push(0);
        b.alloc_event.push(event);
        b.free_event.push(0);
        b.thread.push(thread);
        b.site.push(site);
        b.flags.push(FLAG_NEVER_FREED);
        self.allocs += 1;
        self.live_bytes = self.live_bytes.saturating_add(requested);
        if self.live_bytes > self.peak_live_bytes {
            self.peak_live_bytes = self.live_bytes;
            self.peak_event = event;
            self.peak_time_ns = time;
        }
        Some(index)
    }

    fn end_block(&mut self, block: u32, event: u64, time: u64, flag: u8) {
        let i = block as usize;
        self.blocks.free_event[i] = event;
        self.blocks.free_time_ns[i] = time;
        self.blocks.flags[i] = (self.blocks.flags[i] & !FLAG_NEVER_FREED) | flag;
        if self.blocks.flags[i] & FLAG_MMAP == 0 {
            self.live_bytes = self
                .live_bytes
                .saturating_sub(self.blocks.requested_size[i]);
        }
    }

    /// An anonymous mapping of `length` bytes at `address`: a block flagged [`FLAG_MMAP`],
    /// counted in `mmaps` (not in allocs, not in live heap bytes). A mapping over the start of
    /// a live one (`MAP_FIXED`) ends the old one. Returns the block, or `None` when rejected.
    #[allow(clippy::too_many_arguments)]
    pub fn mmap(
        &mut self,
        line: u64,
        time_ns: u64,
        address: u64,
        length: u64,
        thread: u32,
        site: u32,
    ) -> Option<u32> {
        if length > MAX_SANE_SIZE || address.checked_add(length).is_none() {
            self.warn(warn::ABSURD_SIZE, line);
            return None;
        }
        let index = match u32::try_from(self.blocks.len()) {
            Ok(i) if i < FREED => i,
            _ => {
                self.warn(warn::TOO_MANY_BLOCKS, line);
                return None;
            }
        };
        let time = self.event_time(time_ns, line);
        let event = self.next_event();
        if let Some(old) = self.mappings.insert(address, index) {
            self.end_block(old, event, time, FLAG_ENDED_BY_OVERLAP);
        }
        let b = &mut self.blocks;
        b.address.push(address);
        b.size.push(length);
        b.requested_size.push(length);
        b.usable_size.push(USABLE_UNKNOWN);
        b.alloc_time_ns.push(time);
        b.free_time_ns.push(0);
        b.alloc_event.push(event);
        b.free_event.push(0);
        b.thread.push(thread);
        b.site.push(site);
        b.flags.push(FLAG_NEVER_FREED | FLAG_MMAP);
        self.mmaps += 1;
        Some(index)
    }

    /// `munmap(address, length)`: ends every live mapping that starts inside the range, one
    /// event each (a mapping unmapped only in part ends whole). Unmapping memory that was not
    /// mapped through the recorder (the loader's, the allocator's own arenas) is not an event.
    /// Returns how many mappings ended.
    pub fn munmap(&mut self, line: u64, time_ns: u64, address: u64, length: u64) -> u64 {
        let end = address.saturating_add(length.max(1));
        // Live mappings are few (hundreds): a scan is cheaper than keeping them sorted.
        let mut ended: Vec<(u64, u32)> = self
            .mappings
            .iter()
            .filter(|&(&start, _)| start >= address && start < end)
            .map(|(&start, &block)| (start, block))
            .collect();
        ended.sort_unstable();
        for &(start, block) in &ended {
            let time = self.event_time(time_ns, line);
            let event = self.next_event();
            self.mappings.remove(&start);
            self.end_block(block, event, time, 0);
            self.munmaps += 1;
        }
        ended.len() as u64
    }

    /// A free. Returns whether it matched a live block.
    pub fn free(&mut self, line: u64, time_ns: u64, address: u64) -> bool {
        self.free_flagged(line, time_ns, address, 0)
    }

    fn free_flagged(&mut self, line: u64, time_ns: u64, address: u64, flag: u8) -> bool {
        let time = self.event_time(time_ns, line);
        let event = self.next_event();
        let found = self
            .live
            .get_mut(&address)
            .map(|slot| std::mem::replace(slot, FREED));
        match found {
            Some(block) if block != FREED => {
                self.end_block(block, event, time, flag);
                self.frees += 1;
                true
            }
            Some(_) => {
                self.double_frees += 1;
                self.warn(warn::DOUBLE_FREE, line);
                false
            }
            None => {
                self.unknown_frees += 1;
                self.warn(warn::UNKNOWN_FREE, line);
                false
            }
        }
    }

    /// Frees a specific block (for inputs that name blocks, not addresses, like heaptrack's
    /// processed format).
    pub fn free_block(&mut self, line: u64, block: u32) {
        let event = self.next_event();
        let time = self.event_time(0, line);
        self.end_block(block, event, time, 0);
        self.frees += 1;
    }

    /// A free that matched nothing, in inputs without addresses.
    pub fn unmatched_free(&mut self, line: u64) {
        self.next_event();
        self.unknown_frees += 1;
        self.warn(warn::UNKNOWN_FREE, line);
    }

    /// A realloc: the free of `old` (when it is live) and the allocation of `new`, counted the
    /// way valgrind's memcheck counts them (one alloc, one free). `new == 0` with size 0 is a
    /// pure free; `old == 0` a pure allocation.
    #[allow(clippy::too_many_arguments)]
    pub fn realloc(
        &mut self,
        line: u64,
        time_ns: u64,
        old: u64,
        new: u64,
        requested: u64,
        usable: u64,
        thread: u32,
        site: u32,
    ) {
        if requested > MAX_SANE_SIZE {
            self.warn(warn::ABSURD_SIZE, line);
            return;
        }
        if old != 0 && self.free_flagged(line, time_ns, old, FLAG_FREED_BY_REALLOC) {
            self.reallocs += 1;
        }
        if new != 0 || requested != 0 {
            self.alloc(line, time_ns, new, requested, usable, thread, site);
        }
    }

    /// Live blocks by address (read by the processed-heaptrack importer).
    pub fn is_live(&self, block: u32) -> bool {
        self.blocks
            .flags
            .get(block as usize)
            .is_some_and(|&f| f & FLAG_NEVER_FREED != 0)
    }

    pub fn finish(self, format: TraceFormat, has_addresses: bool) -> Trace {
        let Self {
            source,
            mut blocks,
            clock,
            events,
            allocs,
            frees,
            reallocs,
            unknown_frees,
            double_frees,
            mmaps,
            munmaps,
            live_bytes,
            peak_live_bytes,
            peak_event,
            mut peak_time_ns,
            strings,
            call_tree,
            threads,
            warnings,
            command_line,
            page_size,
            modules,
            ..
        } = self;
        let (end_time_ns, has_wall_time) = match clock {
            Clock::PerEvent { last_ns } => (last_ns, true),
            Clock::Ticks(ticks) if ticks.is_empty() => {
                // No clock at all: one nanosecond per event, and say so.
                for (t, &e) in blocks.alloc_time_ns.iter_mut().zip(&blocks.alloc_event) {
                    *t = e;
                }
                for (t, &e) in blocks.free_time_ns.iter_mut().zip(&blocks.free_event) {
                    *t = e;
                }
                peak_time_ns = peak_event;
                (events, false)
            }
            Clock::Ticks(ticks) => {
                let clock = TickClock::new(ticks, events);
                for (t, &e) in blocks.alloc_time_ns.iter_mut().zip(&blocks.alloc_event) {
                    *t = clock.time(e);
                }
                for (t, &e) in blocks.free_time_ns.iter_mut().zip(&blocks.free_event) {
                    *t = clock.time(e);
                }
                peak_time_ns = clock.time(peak_event);
                (clock.end_ns, true)
            }
        };
        for i in 0..blocks.len() {
            if blocks.flags[i] & FLAG_NEVER_FREED != 0 {
                blocks.free_event[i] = events;
                blocks.free_time_ns[i] = end_time_ns;
            }
        }
        let meta = TraceMeta {
            format,
            source,
            command_line,
            has_addresses,
            has_wall_time,
            events,
            allocs,
            frees,
            reallocs,
            unknown_frees,
            double_frees,
            mmaps,
            munmaps,
            end_time_ns,
            peak_live_bytes,
            peak_event,
            peak_time_ns,
            end_live_bytes: live_bytes,
            page_size,
            modules,
        };
        Trace {
            meta,
            blocks: blocks.into(),
            strings,
            call_tree,
            threads,
            warnings,
            event_order_cache: Default::default(),
        }
    }
}

/// Piecewise-linear event index → time mapping through heaptrack's ticks.
struct TickClock {
    ticks: Vec<(u64, u64)>,
    events: u64,
    end_ns: u64,
}

impl TickClock {
    fn new(ticks: Vec<(u64, u64)>, events: u64) -> Self {
        let mut end_ns = ticks.last().map_or(0, |t| t.1);
        // Events after the last tick happened within one more tick period: extend the last
        // interval's rate rather than piling them onto one instant.
        if let (Some(&(e_last, t_last)), true) = (ticks.last(), ticks.len() >= 2)
            && events > e_last
        {
            let (e_prev, t_prev) = ticks[ticks.len() - 2];
            let span_e = e_last.saturating_sub(e_prev).max(1);
            let span_t = t_last.saturating_sub(t_prev);
            let extra = (events - e_last) as u128 * span_t as u128 / span_e as u128;
            end_ns = t_last.saturating_add(u64::try_from(extra).unwrap_or(u64::MAX));
        }
        Self {
            ticks,
            events,
            end_ns,
        }
    }

    fn time(&self, event: u64) -> u64 {
        // Tick k covers events [e_k, e_{k+1}) and spans times [t_k, t_{k+1}).
        let k = self.ticks.partition_point(|&(e, _)| e <= event);
        if k == 0 {
            // Before the first tick: the span from 0 to the first tick's time.
            let (e1, t1) = self.ticks[0];
            if e1 == 0 {
                return 0;
            }
            return lerp(0, 0, e1, t1, event);
        }
        let (e0, t0) = self.ticks[k - 1];
        let (e1, t1) = self
            .ticks
            .get(k)
            .copied()
            .unwrap_or((self.events, self.end_ns));
        lerp(e0, t0, e1, t1, event)
    }
}

fn lerp(e0: u64, t0: u64, e1: u64, t1: u64, e: u64) -> u64 {
    if e1 <= e0 || t1 <= t0 {
        return t0;
    }
    let de = e.saturating_sub(e0);
    // 64-bit arithmetic when it cannot overflow (always, for 10 ms ticks): 128-bit division is
    // a library call and was a tenth of the load time.
    if let Some(product) = de.checked_mul(t1 - t0) {
        return t0.saturating_add(product / (e1 - e0)).min(t1);
    }
    let frac = de as u128 * (t1 - t0) as u128 / (e1 - e0) as u128;
    t0.saturating_add(u64::try_from(frac).unwrap_or(u64::MAX))
        .min(t1)
}
