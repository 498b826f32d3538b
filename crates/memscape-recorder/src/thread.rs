//! Per-thread state.

use super::*;

/// Everything the shim keeps per thread, in one thread-local: the shim is a `cdylib`, so each
/// thread-local access is a `__tls_get_addr` call, and the hot path makes one instead of five.
pub(crate) struct ThreadState {
    /// Set while this thread is inside the shim: nested allocations (the unwinder's, dlsym's)
    /// go straight to the real allocator, unrecorded.
    pub(crate) in_shim: Cell<bool>,
    pub(crate) resolving_here: Cell<bool>,
    /// Set while the shim runs code that may allocate for the shim itself (the unwinder,
    /// dlsym, start-up): a nested allocation then is the shim's, not the program's. A nested
    /// allocation without it comes from a signal handler that interrupted the shim: it is
    /// recorded, deferred through `pending` until the interrupted call is done.
    pub(crate) internal: Cell<bool>,
    /// Whether this thread has walked its stack once (libunwind mallocs its per-thread cache
    /// in the first walk: that walk is the shim's own work).
    pub(crate) walked: Cell<bool>,
    /// This thread's unwind rules and stack bounds (`cfi.rs`; null: none) and whether they
    /// are set up (0: not yet, 1: ready, 2: this thread walks with libunwind only).
    pub(crate) unwind_cache: Cell<*mut u8>,
    pub(crate) unwind_ready: Cell<u8>,
    /// Events of signal handlers that interrupted the shim (a ring: `pending_tail` is only
    /// advanced by the handlers, `pending_head` only by the flush).
    pub(crate) pending: [Cell<Event>; PENDING],
    pub(crate) pending_head: Cell<u32>,
    pub(crate) pending_tail: Cell<u32>,
    pub(crate) tid: Cell<u32>,
    /// This thread's events chunk (null: none yet) and the file generation it belongs to.
    pub(crate) chunk: Cell<*mut u8>,
    pub(crate) generation: Cell<u32>,
    /// Payload bytes committed in `chunk` (the chunk header holds the same, for the reader).
    pub(crate) used: Cell<usize>,
    /// The previous record of `chunk` (records are delta-coded against it; 0 at a chunk start).
    pub(crate) prev_seq: Cell<u64>,
    pub(crate) prev_time: Cell<u64>,
    pub(crate) prev_address: Cell<u64>,
    /// TSC of the thread's last clock pair in `chunk` (0: none yet) and the spacing to the next.
    pub(crate) last_pair: Cell<u64>,
    pub(crate) pair_interval: Cell<u64>,
    /// Hash and id of this thread's previous stack.
    pub(crate) last_stack_hash: Cell<u64>,
    pub(crate) last_stack_id: Cell<u32>,
    /// The value of `THREAD_NAMES` this thread last looked at its name for (0: never, or a new
    /// chunk since), and the name it last wrote.
    pub(crate) names_seen: Cell<u32>,
    pub(crate) name: Cell<[u8; 16]>,
}

thread_local! {
    static THREAD: ThreadState = const {
        ThreadState {
            in_shim: Cell::new(false),
            resolving_here: Cell::new(false),
            internal: Cell::new(false),
            walked: Cell::new(false),
            unwind_cache: Cell::new(null_mut()),
            unwind_ready: Cell::new(0),
            pending: [const { Cell::new(Event::EMPTY) }; PENDING],
            pending_head: Cell::new(0),
            pending_tail: Cell::new(0),
            tid: Cell::new(0),
            chunk: Cell::new(null_mut()),
            generation: Cell::new(0),
            used: Cell::new(0),
            prev_seq: Cell::new(0),
            prev_time: Cell::new(0),
            prev_address: Cell::new(0),
            last_stack_hash: Cell::new(0),
            last_stack_id: Cell::new(0),
            last_pair: Cell::new(0),
            pair_interval: Cell::new(PAIR_INTERVAL_MIN),
            names_seen: Cell::new(0),
            name: Cell::new([0; 16]),
        }
    };
}

/// This thread's state; `None` only if thread-locals are unusable (they are not destroyed: no
/// destructor, static TLS of a preloaded library).
pub(crate) fn thread_state() -> Option<&'static ThreadState> {
    // SAFETY: a `const` thread-local without destructor lives as long as its thread, and the
    // reference never leaves the thread (ThreadState is not Sync).
    THREAD
        .try_with(|t| unsafe { &*(t as *const ThreadState) })
        .ok()
}

pub(crate) struct Guard(pub(crate) &'static ThreadState);
impl Guard {
    /// None when this thread is already inside the shim.
    pub(crate) fn enter() -> Option<Guard> {
        let t = thread_state()?;
        if t.in_shim.get() {
            return None;
        }
        t.in_shim.set(true);
        Some(Guard(t))
    }
}
impl Drop for Guard {
    fn drop(&mut self) {
        let t = self.0;
        loop {
            // Write what signal handlers left while this thread was inside (they may add
            // more meanwhile: the loop takes those too).
            while t.pending_head.get() != t.pending_tail.get() {
                let head = t.pending_head.get();
                let e = t.pending[head as usize % PENDING].get();
                if STATE.load(Ordering::Acquire) == 2 {
                    unsafe { record(t, &e) };
                }
                t.pending_head.set(head.wrapping_add(1));
            }
            t.in_shim.set(false);
            core::sync::atomic::compiler_fence(Ordering::SeqCst);
            // A handler that ran between the last check and leaving found the shim busy.
            if t.pending_head.get() == t.pending_tail.get() {
                break;
            }
            match Guard::enter() {
                // Inside again; this drop goes on flushing (the new guard must not).
                Some(g) => core::mem::forget(g),
                None => break,
            }
        }
    }
}

/// Defers an event of a signal handler that interrupted this thread inside the shim (see
/// [`ThreadState::pending`]); false when the ring is full (the event is then not recorded,
/// and its caller treats the block as the shim's own).
pub(crate) fn defer(t: &ThreadState, e: Event) -> bool {
    let tail = t.pending_tail.get();
    if tail.wrapping_sub(t.pending_head.get()) as usize >= PENDING {
        return false;
    }
    t.pending[tail as usize % PENDING].set(e);
    core::sync::atomic::compiler_fence(Ordering::SeqCst);
    t.pending_tail.set(tail.wrapping_add(1));
    true
}

/// Whether a nested call on this thread comes from a signal handler that interrupted the
/// shim (recorded, deferred) rather than from the shim's own code (not recorded).
pub(crate) fn interrupted_shim(t: &ThreadState) -> bool {
    t.in_shim.get() && !t.internal.get() && !t.resolving_here.get()
}

/// Runs `f` marked as the shim's own work: allocations inside it are not the program's.
pub(crate) fn internally<R>(t: &ThreadState, f: impl FnOnce() -> R) -> R {
    let was = t.internal.replace(true);
    let r = f();
    t.internal.set(was);
    r
}
