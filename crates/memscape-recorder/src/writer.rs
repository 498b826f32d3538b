//! Global recorder state, the clock, chunks and the records written into them.

use super::*;

/// 0 = not started, 1 = starting, 2 = recording, 3 = disabled (no directory or an error).
pub(crate) static STATE: AtomicU32 = AtomicU32::new(0);
pub(crate) static FD: AtomicU32 = AtomicU32::new(u32::MAX);
pub(crate) static NEXT_CHUNK: AtomicU64 = AtomicU64::new(0);
pub(crate) static FILE_LOCK: SpinLock = SpinLock::new();
pub(crate) static SEQ: AtomicU64 = AtomicU64::new(0);
/// Bumped in a forked child so that chunks mapped from the parent's file are never reused.
pub(crate) static GENERATION: AtomicU32 = AtomicU32::new(1);
pub(crate) static STACK_DEPTH: AtomicUsize = AtomicUsize::new(DEFAULT_STACK_DEPTH);
pub(crate) static NO_STACKS: AtomicBool = AtomicBool::new(false);
/// Frames kept per free (`MEMSCAPE_FREE_STACK_DEPTH`; default [`DEFAULT_FREE_STACK_DEPTH`]).
pub(crate) static FREE_STACK_DEPTH: AtomicUsize = AtomicUsize::new(DEFAULT_FREE_STACK_DEPTH);
pub(crate) static MAPS_SNAPSHOT: AtomicU64 = AtomicU64::new(0);
/// Bumped by every `pthread_setname_np`: each thread then re-reads its own name at its next
/// event (one atomic load per event; a rename of another thread cannot be mapped to a tid
/// from here without glibc internals). Starts at 1 so that a thread's first event reads it.
pub(crate) static THREAD_NAMES: AtomicU32 = AtomicU32::new(1);
pub(crate) static SHIM_TEXT_LO: AtomicUsize = AtomicUsize::new(0);
pub(crate) static SHIM_TEXT_HI: AtomicUsize = AtomicUsize::new(0);

pub(crate) struct SpinLock(AtomicBool);
impl SpinLock {
    pub(crate) const fn new() -> Self {
        Self(AtomicBool::new(false))
    }
    pub(crate) fn lock(&self) {
        while self
            .0
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            unsafe { libc::sched_yield() };
        }
    }
    pub(crate) fn unlock(&self) {
        self.0.store(false, Ordering::Release);
    }
}

pub(crate) fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// Whether event times are TSC ticks (1) rather than CLOCK_MONOTONIC ns (0): decided at start.
pub(crate) static CLOCK_TSC: AtomicBool = AtomicBool::new(false);
pub(crate) const CLOCK_KIND_NS: u32 = 0;
pub(crate) const CLOCK_KIND_TSC: u32 = 1;
/// First spacing of a thread's clock pairs in ticks (~5 µs); doubled after each pair up to
/// `PAIR_INTERVAL_MAX` (~10 ms), so that every event lies within a bounded distance of a pair
/// however short the program.
pub(crate) const PAIR_INTERVAL_MIN: u64 = 1 << 14;
pub(crate) const PAIR_INTERVAL_MAX: u64 = 1 << 25;
/// A pair whose two TSC reads lie further apart was interrupted: not used.
pub(crate) const PAIR_MAX_TICKS: u64 = 10_000;

#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn rdtsc() -> u64 {
    // SAFETY: RDTSC has no preconditions; it is only used when the kernel's own clocksource is
    // the TSC (invariant and synchronized across CPUs, or the kernel would not use it).
    unsafe { core::arch::x86_64::_rdtsc() }
}
#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn rdtsc() -> u64 {
    0
}

/// An event's time: TSC ticks when the kernel's clocksource is the TSC (~7 ns instead of ~25
/// for the vDSO's clock_gettime, which reads the same counter and converts), CLOCK_MONOTONIC ns
/// otherwise. The file carries (ticks, ns) pairs from which memscape-record converts ticks to
/// CLOCK_MONOTONIC ns.
#[inline(always)]
pub(crate) fn now() -> u64 {
    if CLOCK_TSC.load(Ordering::Relaxed) {
        rdtsc()
    } else {
        now_ns()
    }
}

/// (ticks, CLOCK_MONOTONIC ns) read together, or None when interrupted in between.
pub(crate) fn clock_pair() -> Option<(u64, u64)> {
    let a = rdtsc();
    let ns = now_ns();
    let b = rdtsc();
    let d = b.wrapping_sub(a);
    (d < PAIR_MAX_TICKS).then_some((a.wrapping_add(d / 2), ns))
}

/// Whether the kernel keeps time with the TSC (then it is invariant and synchronized); the
/// `MEMSCAPE_CLOCK=monotonic` environment variable keeps clock_gettime.
pub(crate) unsafe fn tsc_usable() -> bool {
    if !cfg!(target_arch = "x86_64") {
        return false;
    }
    let forced = unsafe { libc::getenv(c"MEMSCAPE_CLOCK".as_ptr()) };
    if !forced.is_null() && unsafe { core::ffi::CStr::from_ptr(forced) }.to_bytes() == b"monotonic"
    {
        return false;
    }
    let mut source = [0u8; 64];
    let n = unsafe {
        read_small_file(
            c"/sys/devices/system/clocksource/clocksource0/current_clocksource",
            &mut source,
        )
    };
    source[..n].trim_ascii() == b"tsc"
}

pub(crate) fn gettid(t: &ThreadState) -> u32 {
    let cached = t.tid.get();
    if cached != 0 {
        return cached;
    }
    let tid = unsafe { libc::syscall(libc::SYS_gettid) } as u32;
    t.tid.set(tid);
    tid
}

pub(crate) unsafe fn sys_mmap(
    len: usize,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: i64,
) -> *mut u8 {
    let p = unsafe {
        libc::syscall(
            libc::SYS_mmap,
            0usize,
            len,
            prot as libc::c_long,
            flags as libc::c_long,
            fd as libc::c_long,
            off,
        )
    };
    if p < 0 && p > -4096 {
        null_mut()
    } else {
        p as *mut u8
    }
}

/// Maps a fresh chunk of the output file and writes its header.
pub(crate) unsafe fn new_chunk(kind: u32, tid: u32, tag: u64) -> *mut u8 {
    let fd = FD.load(Ordering::Acquire);
    if fd == u32::MAX {
        return null_mut();
    }
    FILE_LOCK.lock();
    let index = NEXT_CHUNK.fetch_add(1, Ordering::AcqRel);
    let offset = FILE_HEADER_BYTES as u64 + index * CHUNK_BYTES as u64;
    // fallocate reserves the blocks now (one call per chunk) instead of in the page-fault path
    // of every first write to a page; filesystems without it get the sparse ftruncate.
    let ok = unsafe { libc::fallocate(fd as c_int, 0, offset as i64, CHUNK_BYTES as i64) } == 0
        || unsafe { libc::ftruncate(fd as c_int, (offset + CHUNK_BYTES as u64) as i64) } == 0;
    FILE_LOCK.unlock();
    if !ok {
        return null_mut();
    }
    let p = unsafe {
        sys_mmap(
            CHUNK_BYTES,
            libc::PROT_READ | libc::PROT_WRITE,
            // Populated in one call: 256 read faults less per chunk.
            libc::MAP_SHARED | libc::MAP_POPULATE,
            fd as c_int,
            offset as i64,
        )
    };
    if p.is_null() {
        return null_mut();
    }
    let h = p.cast::<ChunkHeader>();
    unsafe {
        (*h).kind = kind;
        (*h).tid = tid;
        (*h).tag = tag;
        (*h).used.store(0, Ordering::Relaxed);
        // The magic last: a chunk without it is ignored by the reader.
        core::ptr::write_volatile(&mut (*h).magic, CHUNK_MAGIC);
    }
    p
}

/// Appends `bytes` to the chunk, or returns false when it is full.
pub(crate) unsafe fn chunk_append(chunk: *mut u8, bytes: &[u8]) -> bool {
    let h = chunk.cast::<ChunkHeader>();
    let used = unsafe { (*h).used.load(Ordering::Relaxed) } as usize;
    if CHUNK_HEADER_BYTES + used + bytes.len() > CHUNK_BYTES {
        return false;
    }
    unsafe {
        core::ptr::copy_nonoverlapping(
            bytes.as_ptr(),
            chunk.add(CHUNK_HEADER_BYTES + used),
            bytes.len(),
        );
        (*h).used
            .store((used + bytes.len()) as u64, Ordering::Release);
    }
    true
}

/// Writes `v` as a LEB128 varint at `dst`; returns the bytes written (at most 10).
#[inline(always)]
pub(crate) unsafe fn put_varint(dst: *mut u8, mut v: u64) -> usize {
    let mut n = 0;
    while v >= 0x80 {
        unsafe { dst.add(n).write((v as u8) | 0x80) };
        v >>= 7;
        n += 1;
    }
    unsafe { dst.add(n).write(v as u8) };
    n + 1
}

#[inline(always)]
pub(crate) fn zigzag(v: u64) -> u64 {
    let v = v as i64;
    ((v << 1) ^ (v >> 63)) as u64
}

/// Encodes one event at `dst` (at least [`MAX_RECORD_BYTES`] free), delta-coded against the
/// thread's previous record in the chunk; returns its length. 56 fixed bytes per event made the
/// kernel's page-cache work (first-write faults, zeroing, writeback) a third of a recorded run;
/// this is ~10 bytes.
#[inline(always)]
pub(crate) unsafe fn encode_event(t: &ThreadState, dst: *mut u8, e: &Event) -> usize {
    let bare = e.size == 0 && e.usable == 0 && e.stack == 0;
    let head = e.kind | (e.function << 3) | if bare { RECORD_BARE } else { 0 };
    unsafe { dst.write(head) };
    let mut n = 1;
    unsafe {
        n += put_varint(dst.add(n), zigzag(e.seq.wrapping_sub(t.prev_seq.get())));
        n += put_varint(
            dst.add(n),
            zigzag(e.time_ns.wrapping_sub(t.prev_time.get())),
        );
        n += put_varint(
            dst.add(n),
            zigzag(e.address.wrapping_sub(t.prev_address.get())),
        );
        if !bare {
            n += put_varint(dst.add(n), e.size);
            n += put_varint(dst.add(n), zigzag(e.usable.wrapping_sub(e.size)));
            n += put_varint(dst.add(n), u64::from(e.stack));
        }
    }
    t.prev_seq.set(e.seq);
    t.prev_time.set(e.time_ns);
    t.prev_address.set(e.address);
    n
}

/// A clock record: kind byte 7, zigzag(ticks − previous time), ns. Moves the time base.
pub(crate) unsafe fn encode_clock(t: &ThreadState, dst: *mut u8, ticks: u64, ns: u64) -> usize {
    unsafe { dst.write(KIND_CLOCK) };
    let mut n = 1;
    unsafe {
        n += put_varint(dst.add(n), zigzag(ticks.wrapping_sub(t.prev_time.get())));
        n += put_varint(dst.add(n), ns);
    }
    t.prev_time.set(ticks);
    n
}

/// A name record when this thread's name (`PR_GET_NAME`: 15 bytes and a NUL) differs from the
/// one it last wrote; returns its length (0: unchanged or unreadable).
pub(crate) unsafe fn encode_name(t: &ThreadState, dst: *mut u8) -> usize {
    let mut name = [0u8; 16];
    if unsafe { libc::prctl(libc::PR_GET_NAME, name.as_mut_ptr()) } != 0 || name == t.name.get() {
        return 0;
    }
    t.name.set(name);
    let len = name.iter().position(|&b| b == 0).unwrap_or(15).min(15);
    unsafe {
        dst.write(KIND_NAME);
        dst.add(1).write(len as u8);
        core::ptr::copy_nonoverlapping(name.as_ptr(), dst.add(2), len);
    }
    2 + len
}

/// Appends a record that is not an event (a pool's name) to this thread's chunk: it leaves
/// the delta bases alone. At most `RECORD_ROOM - MAX_RECORD_BYTES` bytes.
pub(crate) unsafe fn append_record(t: &ThreadState, bytes: &[u8]) {
    if bytes.len() > RECORD_ROOM - MAX_RECORD_BYTES {
        return;
    }
    unsafe { append_long_record(t, bytes) };
}

/// Appends a record that is not an event and may be long (at most [`LONG_RECORD_MAX`] bytes:
/// an unrecorded program's path) to this thread's chunk, starting a new chunk when it does
/// not fit. Leaves the delta bases alone. Raw syscalls only: safe in a `vfork` child.
pub(crate) unsafe fn append_long_record(t: &ThreadState, bytes: &[u8]) {
    if bytes.len() > LONG_RECORD_MAX {
        return;
    }
    let mut chunk = unsafe { chunk_with_room(t) };
    if !chunk.is_null() && CHUNK_HEADER_BYTES + t.used.get() + bytes.len() > CHUNK_BYTES {
        // Full for this record: the next chunk (as if it were full for an event).
        t.used.set(CHUNK_BYTES);
        chunk = unsafe { chunk_with_room(t) };
    }
    if chunk.is_null() {
        return;
    }
    let used = t.used.get();
    unsafe {
        core::ptr::copy_nonoverlapping(
            bytes.as_ptr(),
            chunk.add(CHUNK_HEADER_BYTES + used),
            bytes.len(),
        );
        t.used.set(used + bytes.len());
        (*chunk.cast::<ChunkHeader>())
            .used
            .store((used + bytes.len()) as u64, Ordering::Release)
    };
}

/// This thread's events chunk with room for one more record (a new chunk when it is full or
/// belongs to the parent's file after a fork); null when none could be made.
unsafe fn chunk_with_room(t: &ThreadState) -> *mut u8 {
    let generation = GENERATION.load(Ordering::Acquire);
    let mut chunk = t.chunk.get();
    if t.generation.get() != generation
        || chunk.is_null()
        || CHUNK_HEADER_BYTES + t.used.get() + RECORD_ROOM > CHUNK_BYTES
    {
        // The old chunk stays mapped: it is the file's content, and unmapping costs a TLB
        // shootdown.
        chunk = unsafe { new_chunk(CHUNK_EVENTS, gettid(t), 0) };
        t.chunk.set(chunk);
        t.generation.set(generation);
        t.used.set(0);
        t.prev_seq.set(0);
        t.prev_time.set(0);
        t.prev_address.set(0);
        t.last_pair.set(0);
        t.pair_interval.set(PAIR_INTERVAL_MIN);
        // Every chunk names its thread, so a chunk (or a forked child's file) stands alone.
        t.names_seen.set(0);
        t.name.set([0; 16]);
    }
    chunk
}

pub(crate) unsafe fn record(t: &ThreadState, event: &Event) {
    let chunk = unsafe { chunk_with_room(t) };
    if chunk.is_null() {
        return;
    }
    let mut used = t.used.get();
    let names = THREAD_NAMES.load(Ordering::Relaxed);
    if t.names_seen.get() != names {
        t.names_seen.set(names);
        used += unsafe { encode_name(t, chunk.add(CHUNK_HEADER_BYTES + used)) };
    }
    if CLOCK_TSC.load(Ordering::Relaxed) {
        let last = t.last_pair.get();
        if (last == 0 || event.time_ns.wrapping_sub(last) as i64 > t.pair_interval.get() as i64)
            && let Some((ticks, ns)) = clock_pair()
        {
            used += unsafe { encode_clock(t, chunk.add(CHUNK_HEADER_BYTES + used), ticks, ns) };
            t.last_pair.set(ticks);
            t.pair_interval
                .set((t.pair_interval.get() * 2).min(PAIR_INTERVAL_MAX));
        }
    }
    let n = unsafe { encode_event(t, chunk.add(CHUNK_HEADER_BYTES + used), event) };
    t.used.set(used + n);
    // Committed only now: a reader (or a crash) never sees half a record.
    unsafe {
        (*chunk.cast::<ChunkHeader>())
            .used
            .store((used + n) as u64, Ordering::Release)
    };
}
