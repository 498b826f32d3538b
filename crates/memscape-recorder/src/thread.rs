//! Per-thread state.

use super::*;

/// Everything the shim keeps per thread, in one thread-local: the shim is a `cdylib`, so each
/// thread-local access is a `__tls_get_addr` call, and the hot path makes one instead of five.
pub(crate) struct ThreadState {
    /// Set while this thread is inside the shim: nested allocations (the unwinder's, dlsym's)
    /// go straight to the real allocator, unrecorded.
    pub(crate) in_shim: Cell<bool>,
    pub(crate) resolving_here: Cell<bool>,
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
        self.0.in_shim.set(false);
    }
}
