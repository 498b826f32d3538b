//! Turns a stream of alloc / free / realloc events into blocks, counting every inconsistency
//! as a warning instead of failing. All importers except `.msc` go through [`TraceBuilder`].

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use memscape_io::{Location, Warnings};

use memscape_map::AppendVec;

use crate::model::{
    BlockColumns, CallTree, Column, FLAG_ENDED_BY_EXEC, FLAG_ENDED_BY_OVERLAP,
    FLAG_FREED_BY_REALLOC, FLAG_MMAP, FLAG_NEVER_FREED, FLAG_POOL, Module, Strings, Trace,
    TraceFormat, TraceMeta, USABLE_UNKNOWN,
};
use crate::process::{Pool, Process};
use crate::ticks::TickClock;
use crate::warn;

/// `TraceBuilder::drain`: finished blocks handed over while the trace grows.
mod cut;
mod drain;
/// `TraceBuilder::finish`: the builder's state into a [`Trace`].
mod finish;
mod inherited;
/// `TraceBuilder::replay`: a finished trace's events fed back in.
mod replay;
/// `TraceBuilder::snapshot`: the trace so far, sharing the append-only columns.
mod snapshot;
pub use drain::Drained;
pub use snapshot::BuilderCounts;
use snapshot::GrowingBlocks;

/// Larger than any x86-64 / AArch64 user address space (128 TiB): a size above this cannot be a
/// real allocation and is reported as absurd instead of stretching every view.
pub const MAX_SANE_SIZE: u64 = 1 << 47;

/// Hasher for pointer keys: one multiply-rotate instead of SipHash, which was the largest cost
/// of loading (three lookups per event). Pointers are not attacker-chosen keys in a way that
/// matters here: a crafted trace can at worst slow its own load down.
#[derive(Default, Clone, Copy)]
pub struct PointerHasher(u64);

impl Hasher for PointerHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u32(&mut self, x: u32) {
        self.write_u64(u64::from(x));
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
#[derive(Debug, Clone)]
enum Clock {
    /// Every event carries its own time (CSV).
    PerEvent { last_ns: u64 },
    /// Coarse ticks (heaptrack's `c` lines); events between two ticks are spread evenly by event
    /// index when the trace is finished. Each entry is (first event after the tick, tick ns).
    Ticks(Vec<(u64, u64)>),
}

/// Accumulates events into a [`Trace`].
#[derive(Debug, Clone)]
pub struct TraceBuilder {
    source: String,
    pub(crate) blocks: GrowingBlocks,
    /// Live blocks by address.
    /// Value [`FREED`] marks an address whose last block was freed and that has not been
    /// allocated again, to tell a double free from a free of a pointer never seen: one map, so
    /// an allocation or a free is a single hash lookup.
    /// (Those of the current process; the other processes' maps wait in `other_spaces`.)
    live: PointerMap<u32>,
    /// Live anonymous mappings by start address (kept apart from heap blocks: the allocator's
    /// own arenas are mappings that heap blocks lie in).
    mappings: PointerMap<u32>,
    /// Each process's own address space: its `live` and `mappings` while another process is
    /// current (the current one's are empty here).
    other_spaces: Vec<(PointerMap<u32>, PointerMap<u32>)>,
    /// Each process's copy of its parent's heap at its fork (empty unless forked).
    inherited: Vec<inherited::InheritedHeap>,
    /// The process whose events arrive now (index into `processes`).
    current: u32,
    processes: Vec<Process>,
    /// Live bytes of each process.
    process_live: Vec<u64>,
    /// Per-block columns that stay empty while all 0 (single process, no free sites, no
    /// pools), filled up to a block when one needs them.
    process_column: AppendVec<u32>,
    free_site: Vec<u32>,
    free_thread: Vec<u32>,
    pool_column: AppendVec<u32>,
    pools: Vec<Pool>,
    /// Live pool blocks by (process, address).
    pool_live: HashMap<(u32, u64), u32>,
    pool_allocs: u64,
    pool_frees: u64,
    exec_ends: u64,
    /// CLOCK_MONOTONIC ns of time 0, when the input says.
    pub start_monotonic_ns: u64,
    mmaps: u64,
    munmaps: u64,
    clock: Clock,
    events: u64,
    /// [`Trace::event_order`], built as the events arrive (entry `e`: `block << 1 | is_free`,
    /// `u32::MAX` for an event without a block).
    order: AppendVec<u32>,
    allocs: u64,
    frees: u64,
    reallocs: u64,
    unknown_frees: u64,
    inherited_frees: u64,
    double_frees: u64,
    live_bytes: u64,
    peak_live_bytes: u64,
    peak_event: u64,
    peak_time_ns: u64,
    pub strings: Strings,
    pub call_tree: CallTree,
    threads: Vec<u32>,
    thread_process: Vec<u32>,
    thread_index: HashMap<(u32, String), u32>,
    pub warnings: Warnings,
    pub command_line: String,
    pub page_size: u64,
    pub modules: Vec<Module>,
    /// False for inputs without addresses: blocks are then freed by index, not by address.
    track_addresses: bool,
    /// Event index of `order[0]` (events before it were handed over by `drain`).
    order_base: u64,
    /// The time of the last event handed over by `drain`.
    drained_time: u64,
    /// Blocks handed over by `drain`.
    drained_blocks: u64,
    /// Segments cut from a builder that keeps its blocks (`cut::KeptCuts`): `None` unless
    /// [`TraceBuilder::keep_cuts`] was called.
    kept_cuts: Option<cut::KeptCuts>,
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
            blocks: GrowingBlocks::default(),
            live: PointerMap::default(),
            mappings: PointerMap::default(),
            other_spaces: Vec::new(),
            inherited: Vec::new(),
            current: 0,
            processes: Vec::new(),
            process_live: Vec::new(),
            process_column: AppendVec::new(),
            free_site: Vec::new(),
            free_thread: Vec::new(),
            pool_column: AppendVec::new(),
            pools: Vec::new(),
            pool_live: HashMap::new(),
            pool_allocs: 0,
            pool_frees: 0,
            exec_ends: 0,
            start_monotonic_ns: 0,
            mmaps: 0,
            munmaps: 0,
            clock,
            events: 0,
            order: AppendVec::new(),
            allocs: 0,
            frees: 0,
            reallocs: 0,
            unknown_frees: 0,
            inherited_frees: 0,
            double_frees: 0,
            live_bytes: 0,
            peak_live_bytes: 0,
            peak_event: 0,
            peak_time_ns: 0,
            strings: Strings::default(),
            call_tree: CallTree::default(),
            threads: Vec::new(),
            thread_process: Vec::new(),
            thread_index: HashMap::new(),
            warnings: Warnings::new(),
            command_line: String::new(),
            page_size: 0,
            modules: Vec::new(),
            track_addresses: true,
            order_base: 0,
            drained_time: 0,
            drained_blocks: 0,
            kept_cuts: None,
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

    /// Index of a named thread of the current process, created on first use.
    pub fn thread(&mut self, name: &str) -> u32 {
        let key = (self.current, name.to_owned());
        if let Some(&t) = self.thread_index.get(&key) {
            return t;
        }
        let id = self.strings.intern(name);
        let t = u32::try_from(self.threads.len()).unwrap_or(u32::MAX);
        self.threads.push(id);
        self.thread_process.push(self.current);
        self.thread_index.insert(key, t);
        t
    }

    /// Renames thread `thread` (a name learnt after its first event).
    pub fn rename_thread(&mut self, thread: u32, name: &str) {
        let Some(&old) = self.threads.get(thread as usize) else {
            return;
        };
        if self.strings.get(old) == name {
            return;
        }
        let process = self
            .thread_process
            .get(thread as usize)
            .copied()
            .unwrap_or(0);
        let id = self.strings.intern(name);
        self.threads[thread as usize] = id;
        self.thread_index.retain(|_, t| *t != thread);
        self.thread_index.insert((process, name.to_owned()), thread);
    }

    /// Declares a process image (its counts are filled in by the events); returns its index.
    /// Without any, the trace has one process made from its metadata.
    pub fn process(&mut self, process: Process) -> u32 {
        let p = u32::try_from(self.processes.len()).unwrap_or(u32::MAX);
        self.processes.push(Process {
            events: 0,
            allocs: 0,
            frees: 0,
            unknown_frees: 0,
            inherited_frees: 0,
            peak_live_bytes: 0,
            peak_time_ns: 0,
            ..process
        });
        self.process_live.push(0);
        self.other_spaces.push(Default::default());
        self.inherited.push(Default::default());
        p
    }

    /// Mutable access to a declared process (its end, once known).
    pub fn process_mut(&mut self, process: u32) -> Option<&mut Process> {
        self.processes.get_mut(process as usize)
    }

    /// Makes `process` the one whose events come next: each process has its own address space.
    pub fn set_process(&mut self, process: u32) {
        if process == self.current || process as usize >= self.processes.len() {
            return;
        }
        let (live, mappings) = &mut self.other_spaces[self.current as usize];
        std::mem::swap(live, &mut self.live);
        std::mem::swap(mappings, &mut self.mappings);
        self.current = process;
        let (live, mappings) = &mut self.other_spaces[process as usize];
        std::mem::swap(live, &mut self.live);
        std::mem::swap(mappings, &mut self.mappings);
    }

    /// Declares a pool of the current process (`memscape.h`); returns its index.
    pub fn pool(&mut self, mut pool: Pool) -> u32 {
        pool.process = self.current;
        let p = u32::try_from(self.pools.len()).unwrap_or(u32::MAX);
        self.pools.push(pool);
        p
    }

    /// Counts an event of the current process.
    fn count_event(&mut self) {
        if let Some(p) = self.processes.get_mut(self.current as usize) {
            p.events += 1;
        }
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
        self.order.push(u32::MAX);
        self.count_event();
        e
    }

    /// Records in the event order that `event` is block `block`'s allocation or free.
    fn order_event(&mut self, event: u64, block: u32, is_free: bool) {
        if let Some(slot) = event
            .checked_sub(self.order_base)
            .and_then(|e| usize::try_from(e).ok())
            .and_then(|e| self.order.get_mut(e))
        {
            *slot = block << 1 | u32::from(is_free);
        }
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
        self.push_block(
            address,
            extent,
            requested,
            usable,
            time,
            event,
            thread,
            site,
            FLAG_NEVER_FREED,
        );
        self.allocs += 1;
        self.live_bytes = self.live_bytes.saturating_add(requested);
        if self.live_bytes > self.peak_live_bytes {
            self.peak_live_bytes = self.live_bytes;
            self.peak_event = event;
            self.peak_time_ns = time;
        }
        let cur = self.current as usize;
        if let (Some(p), Some(live)) = (self.processes.get_mut(cur), self.process_live.get_mut(cur))
        {
            p.allocs += 1;
            *live = live.saturating_add(requested);
            if *live > p.peak_live_bytes {
                p.peak_live_bytes = *live;
                p.peak_time_ns = time;
            }
        }
        Some(index)
    }

    /// Appends a block. Columns that would only repeat what the others say stay empty until a
    /// block needs them (then they are filled in up to it): the extent while it equals the
    /// requested size, usable sizes while unknown, threads while all 0, and both times when
    /// they come from ticks (computed from the event indices when read, see `finish`). For a
    /// heaptrack trace that halves the memory written per block.
    #[allow(clippy::too_many_arguments)]
    fn push_block(
        &mut self,
        address: u64,
        extent: u64,
        requested: u64,
        usable: u64,
        time: u64,
        event: u64,
        thread: u32,
        site: u32,
        flags: u8,
    ) {
        let n = self.blocks.address.len();
        self.order_event(event, u32::try_from(n).unwrap_or(u32::MAX >> 1), false);
        let b = &mut self.blocks;
        b.address.push(address);
        b.requested_size.push(requested);
        if extent != requested || !b.size.is_empty() {
            if b.size.len() < n {
                b.size.extend_from_slice(&b.requested_size[b.size.len()..n]);
            }
            b.size.push(extent);
        }
        if usable != USABLE_UNKNOWN || !b.usable_size.is_empty() {
            b.usable_size.resize(n, USABLE_UNKNOWN);
            b.usable_size.push(usable);
        }
        if matches!(self.clock, Clock::PerEvent { .. }) {
            b.alloc_time_ns.push(time);
            b.free_time_ns.push(0);
        }
        b.alloc_event.push(event);
        b.free_event.push(0);
        if thread != 0 || !b.thread.is_empty() {
            b.thread.resize(n, 0);
            b.thread.push(thread);
        }
        b.site.push(site);
        b.flags.push(flags);
        if self.current != 0 || !self.process_column.is_empty() {
            self.process_column.resize(n, 0);
            self.process_column.push(self.current);
        }
    }

    /// Sets a sparse per-block column's value for block `i` (filling in zeros up to it).
    fn set_sparse(column: &mut Vec<u32>, i: usize, value: u32) {
        if value == 0 && column.len() <= i {
            return;
        }
        if column.len() <= i {
            column.resize(i + 1, 0);
        }
        column[i] = value;
    }

    fn end_block(&mut self, block: u32, event: u64, time: u64, flag: u8) {
        // (An allocation over a live block ends it at its own event, which then names the
        // allocation: `push_block` comes after.)
        self.order_event(event, block, true);
        if let Some(cuts) = &mut self.kept_cuts {
            cuts.ended(block);
        }
        let i = block as usize;
        self.blocks.free_event[i] = event;
        if let Some(t) = self.blocks.free_time_ns.get_mut(i) {
            *t = time;
        }
        self.blocks.flags[i] = (self.blocks.flags[i] & !FLAG_NEVER_FREED) | flag;
        if self.blocks.flags[i] & (FLAG_MMAP | FLAG_POOL) == 0 {
            let requested = self.blocks.requested_size[i];
            self.live_bytes = self.live_bytes.saturating_sub(requested);
            let p = self.process_column.get(i).copied().unwrap_or(0) as usize;
            if let Some(live) = self.process_live.get_mut(p) {
                *live = live.saturating_sub(requested);
            }
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
        self.push_block(
            address,
            length,
            length,
            USABLE_UNKNOWN,
            time,
            event,
            thread,
            site,
            FLAG_NEVER_FREED | FLAG_MMAP,
        );
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

    /// The address space of `process` is gone (its image called `exec`): every block still
    /// live in it — heap blocks, mappings, pool blocks — ends at `time_ns`, one event each (as
    /// a `munmap` over several mappings makes), flagged [`FLAG_ENDED_BY_EXEC`]: neither leaks
    /// (never freed) nor frees. Returns how many blocks ended.
    pub fn end_address_space(&mut self, line: u64, time_ns: u64, process: u32) -> u64 {
        if process as usize >= self.processes.len() {
            return 0;
        }
        let current = self.current;
        self.set_process(process);
        let mut ended: Vec<u32> = self
            .live
            .values()
            .copied()
            .filter(|&b| b != FREED)
            .chain(self.mappings.values().copied())
            .chain(
                self.pool_live
                    .iter()
                    .filter(|((p, _), _)| *p == process)
                    .map(|(_, &b)| b),
            )
            .collect();
        ended.sort_unstable();
        ended.dedup();
        for &block in &ended {
            let time = self.event_time(time_ns, line);
            let event = self.next_event();
            self.end_block(block, event, time, FLAG_ENDED_BY_EXEC);
        }
        self.exec_ends += ended.len() as u64;
        self.live.clear();
        self.mappings.clear();
        self.pool_live.retain(|(p, _), _| *p != process);
        self.release_inherited(process);
        self.set_process(current);
        ended.len() as u64
    }

    /// A free. Returns whether it matched a live block.
    pub fn free(&mut self, line: u64, time_ns: u64, address: u64) -> bool {
        self.free_flagged(line, time_ns, address, 0, (0, 0))
    }

    /// A free by `thread` from call site `site` (both recorded on the block it ends).
    pub fn free_from(
        &mut self,
        line: u64,
        time_ns: u64,
        address: u64,
        thread: u32,
        site: u32,
    ) -> bool {
        self.free_flagged(line, time_ns, address, 0, (thread.saturating_add(1), site))
    }

    /// `by`: (1 + freeing thread, or 0 when unknown; freeing call site).
    fn free_flagged(
        &mut self,
        line: u64,
        time_ns: u64,
        address: u64,
        flag: u8,
        by: (u32, u32),
    ) -> bool {
        let time = self.event_time(time_ns, line);
        let event = self.next_event();
        let found = self
            .live
            .get_mut(&address)
            .map(|slot| std::mem::replace(slot, FREED));
        match found {
            Some(block) if block != FREED => {
                self.end_block(block, event, time, flag);
                Self::set_sparse(&mut self.free_thread, block as usize, by.0);
                Self::set_sparse(&mut self.free_site, block as usize, by.1);
                self.frees += 1;
                if let Some(p) = self.processes.get_mut(self.current as usize) {
                    p.frees += 1;
                }
                true
            }
            Some(_) => {
                self.double_frees += 1;
                self.warn(warn::DOUBLE_FREE, line);
                false
            }
            None if self.free_inherited(address) => false,
            None => {
                self.unknown_frees += 1;
                if let Some(p) = self.processes.get_mut(self.current as usize) {
                    p.unknown_frees += 1;
                }
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
        if old != 0
            && self.free_flagged(
                line,
                time_ns,
                old,
                FLAG_FREED_BY_REALLOC,
                (thread.saturating_add(1), site),
            )
        {
            self.reallocs += 1;
        }
        if new != 0 || requested != 0 {
            self.alloc(line, time_ns, new, requested, usable, thread, site);
        }
    }

    /// A block a custom allocator handed out inside pool `pool` (index from
    /// [`TraceBuilder::pool`]): flagged [`FLAG_POOL`], its usable size the pool's block size
    /// (waste = usable − requested). Returns the block, or `None` when rejected.
    #[allow(clippy::too_many_arguments)]
    pub fn pool_alloc(
        &mut self,
        line: u64,
        time_ns: u64,
        pool: u32,
        address: u64,
        requested: u64,
        thread: u32,
        site: u32,
    ) -> Option<u32> {
        let Some(block_size) = self.pools.get(pool as usize).map(|p| p.block_size) else {
            self.warn(warn::BAD_REFERENCE, line);
            return None;
        };
        let usable = if block_size > 0 {
            block_size.max(requested)
        } else {
            requested
        };
        if usable > MAX_SANE_SIZE || address.checked_add(usable).is_none() {
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
        if let Some(old) = self.pool_live.insert((self.current, address), index) {
            self.warn(warn::ALLOC_OVER_LIVE, line);
            self.end_block(old, event, time, FLAG_ENDED_BY_OVERLAP);
        }
        self.push_block(
            address,
            usable,
            requested,
            usable,
            time,
            event,
            thread,
            site,
            FLAG_NEVER_FREED | FLAG_POOL,
        );
        let i = index as usize;
        if self.pool_column.len() <= i {
            self.pool_column.resize(i + 1, 0);
        }
        if let Some(slot) = self.pool_column.get_mut(i) {
            *slot = pool + 1;
        }
        self.pool_allocs += 1;
        Some(index)
    }

    /// A pool block given back to its pool. Returns whether it matched a live pool block.
    pub fn pool_free(
        &mut self,
        line: u64,
        time_ns: u64,
        address: u64,
        thread: u32,
        site: u32,
    ) -> bool {
        let time = self.event_time(time_ns, line);
        let event = self.next_event();
        match self.pool_live.remove(&(self.current, address)) {
            Some(block) => {
                self.end_block(block, event, time, 0);
                Self::set_sparse(
                    &mut self.free_thread,
                    block as usize,
                    thread.saturating_add(1),
                );
                Self::set_sparse(&mut self.free_site, block as usize, site);
                self.pool_frees += 1;
                true
            }
            None => {
                self.unknown_frees += 1;
                if let Some(p) = self.processes.get_mut(self.current as usize) {
                    p.unknown_frees += 1;
                }
                self.warn(warn::UNKNOWN_FREE, line);
                false
            }
        }
    }

    /// Live blocks by address (read by the processed-heaptrack importer).
    pub fn is_live(&self, block: u32) -> bool {
        self.blocks
            .flags
            .get(block as usize)
            .is_some_and(|&f| f & FLAG_NEVER_FREED != 0)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The bucketed many-event lookup gives what the per-event binary search gives.
        #[test]
        fn tick_times_match_the_per_event_mapping(
            gaps in proptest::collection::vec((1u64..5000, 0u64..30_000_000), 1..60),
            extra in 0u64..5000,
            probes in proptest::collection::vec(any::<u64>(), 0..300),
        ) {
            let mut ticks = Vec::new();
            let (mut e, mut t) = (0u64, 0u64);
            for (de, dt) in gaps {
                e += de;
                t += dt;
                ticks.push((e, t));
            }
            let events = e + extra;
            let clock = TickClock::new(ticks, events);
            let mut probes: Vec<u64> = probes.iter().map(|p| p % (events + 2)).collect();
            probes.extend(0..events.min(2000) + 1);
            let fast = clock.times(&probes);
            let slow: Vec<u64> = probes.iter().map(|&p| clock.time(p)).collect();
            prop_assert_eq!(fast, slow);
        }
    }

    /// The event order built while the events arrive equals the one computed from the block
    /// columns (frees of unknown pointers, double frees, allocations over live blocks,
    /// reallocs, mappings and never-freed blocks included), and the sparse columns fill in.
    #[test]
    fn event_order_and_sparse_columns_as_if_computed_from_the_blocks() {
        let mut b = TraceBuilder::with_event_times("t");
        b.alloc(1, 10, 0x1000, 16, USABLE_UNKNOWN, 0, 0);
        b.free(2, 11, 0x2000);
        b.alloc(3, 12, 0x1000, 32, USABLE_UNKNOWN, 0, 0);
        b.free(4, 13, 0x1000);
        b.free(5, 14, 0x1000);
        b.alloc(6, 15, 0x3000, 8, 24, 2, 0);
        b.realloc(7, 16, 0x3000, 0x4000, 40, 48, 0, 0);
        b.mmap(8, 17, 0x10_0000, 4096, 0, 0);
        b.alloc(9, 18, 0x5000, 7, USABLE_UNKNOWN, 0, 0);
        b.munmap(10, 19, 0x10_0000, 4096);
        let t = b.finish(TraceFormat::Csv, true);
        assert_eq!(t.event_order(), t.compute_event_order().as_slice());
        assert_eq!(t.blocks.size.as_slice(), &[16, 32, 24, 48, 4096, 7]);
        assert_eq!(t.blocks.usable_size.as_slice(), &[0, 0, 24, 48, 0, 0]);
        assert_eq!(t.blocks.thread.as_slice(), &[0, 0, 2, 0, 0, 0]);
        assert_eq!(t.blocks.free_time_ns[5], 19);
        assert!(t.blocks.is_consistent());

        // Ticks: times computed on first read from the events, as the per-event mapping does.
        let mut b = TraceBuilder::with_ticks("t");
        b.tick(0, 1);
        for i in 0..100u64 {
            b.alloc(i + 2, 0, 0x1000 + 64 * i, 16, USABLE_UNKNOWN, 0, 0);
            if i % 3 == 0 {
                b.free(i + 2, 0, 0x1000 + 64 * i);
            }
            if i % 10 == 0 {
                b.tick(i * 1_000_000, i + 2);
            }
        }
        let events = b.events;
        let ticks = match &b.clock {
            Clock::Ticks(t) => t.clone(),
            Clock::PerEvent { .. } => unreachable!(),
        };
        let t = b.finish(TraceFormat::HeaptrackRaw, true);
        let clock = TickClock::new(ticks, events);
        assert!(!t.blocks.alloc_time_ns.is_decoded());
        for i in 0..t.blocks.len() {
            assert_eq!(
                t.blocks.alloc_time_ns[i],
                clock.time(t.blocks.alloc_event[i])
            );
            assert_eq!(t.blocks.free_time_ns[i], clock.time(t.blocks.free_event[i]));
        }
        assert_eq!(t.blocks.size.as_slice(), t.blocks.requested_size.as_slice());
        assert!(t.blocks.usable_size.iter().all(|&u| u == USABLE_UNKNOWN));
        assert_eq!(t.event_order(), t.compute_event_order().as_slice());
    }
}
