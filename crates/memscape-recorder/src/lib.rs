//! LD_PRELOAD shim for `memscape record`: interposes the C allocator and writes every event to
//! `$MEMSCAPE_RECORD_DIR/<exe>.<pid>.<n>.msr` (format in the crate README).
//!
//! Why the file is a shared memory mapping: every event is stored straight into a
//! `MAP_SHARED` mapping of the output file, so nothing has to be flushed when the program ends.
//! `exit`, `_exit`, return from main, `exec`, `SIGTERM`, even `SIGKILL` keep everything written
//! before them, and the traced program never waits on disk I/O (the kernel writes the page cache
//! back). The shim never allocates through malloc itself: its memory comes from `mmap` syscalls.

#![allow(clippy::missing_safety_doc)]

use core::cell::Cell;
use core::ffi::{c_char, c_int, c_void};
use core::ptr::null_mut;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

// ---------------------------------------------------------------------------------------------
// File format constants (mirrored in memscape-record's reader).

const FILE_MAGIC: &[u8; 8] = b"MSCREC01";
/// 3: varint-coded events, TSC times with clock pairs, strings at 64 (2: varint-coded events,
/// ns times; 1: fixed 56-byte events).
const FILE_VERSION: u32 = 4;
/// Offset of the executable path and command line in the file header.
const HEADER_STRINGS: usize = 64;
const FILE_HEADER_BYTES: usize = 4096;
const CHUNK_BYTES: usize = 1 << 20;
const CHUNK_HEADER_BYTES: usize = 64;
const CHUNK_MAGIC: u32 = 0x4B48_4352; // "RCHK"
const CHUNK_EVENTS: u32 = 1;
const CHUNK_STACKS: u32 = 2;
const CHUNK_MAPS: u32 = 3;

const KIND_ALLOC: u8 = 1;
const KIND_FREE: u8 = 2;
const KIND_REALLOC_FREE: u8 = 3;
const KIND_REALLOC_ALLOC: u8 = 4;
const KIND_MMAP: u8 = 5;
const KIND_MUNMAP: u8 = 6;

const FN_MALLOC: u8 = 1;
const FN_CALLOC: u8 = 2;
const FN_REALLOC: u8 = 3;
const FN_REALLOCARRAY: u8 = 4;
const FN_FREE: u8 = 5;
const FN_POSIX_MEMALIGN: u8 = 6;
const FN_ALIGNED_ALLOC: u8 = 7;
const FN_MEMALIGN: u8 = 8;
const FN_VALLOC: u8 = 9;
const FN_PVALLOC: u8 = 10;
const FN_MMAP: u8 = 11;
const FN_MUNMAP: u8 = 12;

const MAX_STACK_DEPTH: usize = 256;
const DEFAULT_STACK_DEPTH: usize = 64;

/// One event before encoding (records in the file are varint-coded, see [`encode_event`]).
#[derive(Clone, Copy)]
struct Event {
    seq: u64,
    time_ns: u64,
    address: u64,
    size: u64,
    usable: u64,
    stack: u32,
    kind: u8,
    function: u8,
}

/// Longest encoded event: the kind byte and six varints of at most 10 bytes.
const MAX_RECORD_BYTES: usize = 1 + 6 * 10;
/// Kind byte flag: size, usable size and stack are all 0 and left out (frees).
const RECORD_BARE: u8 = 0x80;
/// Kind byte of a clock record: (ticks, CLOCK_MONOTONIC ns) pair, in TSC mode.
const KIND_CLOCK: u8 = 7;
/// Kind byte of a thread-name record: a length byte (at most 15) and the name, the thread's
/// `comm` (what `pthread_setname_np` sets). Not an event kind: `KIND_NAME & 7` is 7 as for a
/// clock record, which no event has.
const KIND_NAME: u8 = 0x0F;
/// The longest name record.
const NAME_ROOM: usize = 2 + 15;
/// Room a record needs: an event, a clock record and a name record before it.
const RECORD_ROOM: usize = MAX_RECORD_BYTES + 1 + 2 * 10 + NAME_ROOM;

#[repr(C)]
struct ChunkHeader {
    magic: u32,
    kind: u32,
    tid: u32,
    _pad: u32,
    /// Payload bytes committed (release-stored after each record is complete).
    used: AtomicU64,
    /// Maps chunks: snapshot number; others 0.
    tag: u64,
}

// ---------------------------------------------------------------------------------------------
// Real functions, resolved with dlsym(RTLD_NEXT).

type MallocFn = unsafe extern "C" fn(usize) -> *mut c_void;
type FreeFn = unsafe extern "C" fn(*mut c_void);
type CallocFn = unsafe extern "C" fn(usize, usize) -> *mut c_void;
type ReallocFn = unsafe extern "C" fn(*mut c_void, usize) -> *mut c_void;
type PosixMemalignFn = unsafe extern "C" fn(*mut *mut c_void, usize, usize) -> c_int;
type AlignFn = unsafe extern "C" fn(usize, usize) -> *mut c_void;
type UsableFn = unsafe extern "C" fn(*mut c_void) -> usize;
type MmapFn = unsafe extern "C" fn(*mut c_void, usize, c_int, c_int, c_int, i64) -> *mut c_void;
type MunmapFn = unsafe extern "C" fn(*mut c_void, usize) -> c_int;
type DlopenFn = unsafe extern "C" fn(*const c_char, c_int) -> *mut c_void;
type ForkFn = unsafe extern "C" fn() -> libc::pid_t;
type SetnameFn = unsafe extern "C" fn(libc::pthread_t, *const c_char) -> c_int;

static REAL_MALLOC: AtomicUsize = AtomicUsize::new(0);
static REAL_FREE: AtomicUsize = AtomicUsize::new(0);
static REAL_CALLOC: AtomicUsize = AtomicUsize::new(0);
static REAL_REALLOC: AtomicUsize = AtomicUsize::new(0);
static REAL_POSIX_MEMALIGN: AtomicUsize = AtomicUsize::new(0);
static REAL_ALIGNED_ALLOC: AtomicUsize = AtomicUsize::new(0);
static REAL_MEMALIGN: AtomicUsize = AtomicUsize::new(0);
static REAL_VALLOC: AtomicUsize = AtomicUsize::new(0);
static REAL_PVALLOC: AtomicUsize = AtomicUsize::new(0);
static REAL_USABLE: AtomicUsize = AtomicUsize::new(0);
static REAL_MMAP: AtomicUsize = AtomicUsize::new(0);
static REAL_MUNMAP: AtomicUsize = AtomicUsize::new(0);
static REAL_DLOPEN: AtomicUsize = AtomicUsize::new(0);
static REAL_FORK: AtomicUsize = AtomicUsize::new(0);
static REAL_SETNAME: AtomicUsize = AtomicUsize::new(0);

/// 0 = nothing resolved, 1 = resolving (dlsym may call calloc: served from the arena),
/// 2 = resolved.
static RESOLVE_STATE: AtomicU32 = AtomicU32::new(0);

unsafe fn resolve_all() {
    if RESOLVE_STATE
        .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        // Another thread resolves; wait for it (this thread is not inside dlsym).
        let here = || thread_state().is_some_and(|t| t.resolving_here.get());
        while RESOLVE_STATE.load(Ordering::Acquire) == 1 && !here() {
            core::hint::spin_loop();
        }
        return;
    }
    let set_here = |v: bool| {
        if let Some(t) = thread_state() {
            t.resolving_here.set(v);
        }
    };
    set_here(true);
    let sym = |name: &[u8]| unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr().cast()) as usize };
    REAL_MALLOC.store(sym(b"malloc\0"), Ordering::Release);
    REAL_FREE.store(sym(b"free\0"), Ordering::Release);
    REAL_CALLOC.store(sym(b"calloc\0"), Ordering::Release);
    REAL_REALLOC.store(sym(b"realloc\0"), Ordering::Release);
    REAL_POSIX_MEMALIGN.store(sym(b"posix_memalign\0"), Ordering::Release);
    REAL_ALIGNED_ALLOC.store(sym(b"aligned_alloc\0"), Ordering::Release);
    REAL_MEMALIGN.store(sym(b"memalign\0"), Ordering::Release);
    REAL_VALLOC.store(sym(b"valloc\0"), Ordering::Release);
    REAL_PVALLOC.store(sym(b"pvalloc\0"), Ordering::Release);
    REAL_USABLE.store(sym(b"malloc_usable_size\0"), Ordering::Release);
    REAL_MMAP.store(sym(b"mmap\0"), Ordering::Release);
    REAL_MUNMAP.store(sym(b"munmap\0"), Ordering::Release);
    REAL_DLOPEN.store(sym(b"dlopen\0"), Ordering::Release);
    REAL_FORK.store(sym(b"fork\0"), Ordering::Release);
    REAL_SETNAME.store(sym(b"pthread_setname_np\0"), Ordering::Release);
    set_here(false);
    RESOLVE_STATE.store(2, Ordering::Release);
}

macro_rules! real {
    ($slot:ident, $ty:ty) => {{
        let mut f = $slot.load(Ordering::Acquire);
        if f == 0 && RESOLVE_STATE.load(Ordering::Acquire) != 1 {
            unsafe { resolve_all() };
            f = $slot.load(Ordering::Acquire);
        }
        if f == 0 {
            None
        } else {
            // SAFETY: the slot holds the address dlsym returned for this very symbol.
            Some(unsafe { core::mem::transmute::<usize, $ty>(f) })
        }
    }};
}

// ---------------------------------------------------------------------------------------------
// Bootstrap arena: dlsym calls calloc before the real calloc is known.

const ARENA_BYTES: usize = 64 * 1024;
#[repr(C, align(64))]
struct Arena(core::cell::UnsafeCell<[u8; ARENA_BYTES]>);
// SAFETY: bump allocation hands out disjoint ranges through an atomic cursor.
unsafe impl Sync for Arena {}
static ARENA: Arena = Arena(core::cell::UnsafeCell::new([0; ARENA_BYTES]));
static ARENA_USED: AtomicUsize = AtomicUsize::new(0);

fn arena_alloc(size: usize) -> *mut c_void {
    let size = (size.max(1) + 15) & !15;
    let start = ARENA_USED.fetch_add(size, Ordering::AcqRel);
    if start.saturating_add(size) > ARENA_BYTES {
        return null_mut();
    }
    // Zeroed: the arena is never reused, so calloc is satisfied too.
    unsafe { (ARENA.0.get() as *mut u8).add(start).cast() }
}

fn in_arena(p: *mut c_void) -> bool {
    let base = ARENA.0.get() as usize;
    (p as usize) >= base && (p as usize) < base + ARENA_BYTES
}

// ---------------------------------------------------------------------------------------------
// Per-thread state. `const` thread-locals of `Cell`s need no destructor and no allocation; the
// shim is loaded at startup, so its TLS block is static and reachable from the first call.

/// Everything the shim keeps per thread, in one thread-local: the shim is a `cdylib`, so each
/// thread-local access is a `__tls_get_addr` call, and the hot path makes one instead of five.
struct ThreadState {
    /// Set while this thread is inside the shim: nested allocations (the unwinder's, dlsym's)
    /// go straight to the real allocator, unrecorded.
    in_shim: Cell<bool>,
    resolving_here: Cell<bool>,
    tid: Cell<u32>,
    /// This thread's events chunk (null: none yet) and the file generation it belongs to.
    chunk: Cell<*mut u8>,
    generation: Cell<u32>,
    /// Payload bytes committed in `chunk` (the chunk header holds the same, for the reader).
    used: Cell<usize>,
    /// The previous record of `chunk` (records are delta-coded against it; 0 at a chunk start).
    prev_seq: Cell<u64>,
    prev_time: Cell<u64>,
    prev_address: Cell<u64>,
    /// TSC of the thread's last clock pair in `chunk` (0: none yet) and the spacing to the next.
    last_pair: Cell<u64>,
    pair_interval: Cell<u64>,
    /// Hash and id of this thread's previous stack.
    last_stack_hash: Cell<u64>,
    last_stack_id: Cell<u32>,
    /// The value of `THREAD_NAMES` this thread last looked at its name for (0: never, or a new
    /// chunk since), and the name it last wrote.
    names_seen: Cell<u32>,
    name: Cell<[u8; 16]>,
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
fn thread_state() -> Option<&'static ThreadState> {
    // SAFETY: a `const` thread-local without destructor lives as long as its thread, and the
    // reference never leaves the thread (ThreadState is not Sync).
    THREAD
        .try_with(|t| unsafe { &*(t as *const ThreadState) })
        .ok()
}

struct Guard(&'static ThreadState);
impl Guard {
    /// None when this thread is already inside the shim.
    fn enter() -> Option<Guard> {
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

// ---------------------------------------------------------------------------------------------
// Global recorder state.

/// 0 = not started, 1 = starting, 2 = recording, 3 = disabled (no directory or an error).
static STATE: AtomicU32 = AtomicU32::new(0);
static FD: AtomicU32 = AtomicU32::new(u32::MAX);
static NEXT_CHUNK: AtomicU64 = AtomicU64::new(0);
static FILE_LOCK: SpinLock = SpinLock::new();
static SEQ: AtomicU64 = AtomicU64::new(0);
/// Bumped in a forked child so that chunks mapped from the parent's file are never reused.
static GENERATION: AtomicU32 = AtomicU32::new(1);
static STACK_DEPTH: AtomicUsize = AtomicUsize::new(DEFAULT_STACK_DEPTH);
static NO_STACKS: AtomicBool = AtomicBool::new(false);
static MAPS_SNAPSHOT: AtomicU64 = AtomicU64::new(0);
/// Bumped by every `pthread_setname_np`: each thread then re-reads its own name at its next
/// event (one atomic load per event; a rename of another thread cannot be mapped to a tid
/// from here without glibc internals). Starts at 1 so that a thread's first event reads it.
static THREAD_NAMES: AtomicU32 = AtomicU32::new(1);
static SHIM_TEXT_LO: AtomicUsize = AtomicUsize::new(0);
static SHIM_TEXT_HI: AtomicUsize = AtomicUsize::new(0);

struct SpinLock(AtomicBool);
impl SpinLock {
    const fn new() -> Self {
        Self(AtomicBool::new(false))
    }
    fn lock(&self) {
        while self
            .0
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            unsafe { libc::sched_yield() };
        }
    }
    fn unlock(&self) {
        self.0.store(false, Ordering::Release);
    }
}

fn now_ns() -> u64 {
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
static CLOCK_TSC: AtomicBool = AtomicBool::new(false);
const CLOCK_KIND_NS: u32 = 0;
const CLOCK_KIND_TSC: u32 = 1;
/// First spacing of a thread's clock pairs in ticks (~5 µs); doubled after each pair up to
/// `PAIR_INTERVAL_MAX` (~10 ms), so that every event lies within a bounded distance of a pair
/// however short the program.
const PAIR_INTERVAL_MIN: u64 = 1 << 14;
const PAIR_INTERVAL_MAX: u64 = 1 << 25;
/// A pair whose two TSC reads lie further apart was interrupted: not used.
const PAIR_MAX_TICKS: u64 = 10_000;

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn rdtsc() -> u64 {
    // SAFETY: RDTSC has no preconditions; it is only used when the kernel's own clocksource is
    // the TSC (invariant and synchronized across CPUs, or the kernel would not use it).
    unsafe { core::arch::x86_64::_rdtsc() }
}
#[cfg(not(target_arch = "x86_64"))]
fn rdtsc() -> u64 {
    0
}

/// An event's time: TSC ticks when the kernel's clocksource is the TSC (~7 ns instead of ~25
/// for the vDSO's clock_gettime, which reads the same counter and converts), CLOCK_MONOTONIC ns
/// otherwise. The file carries (ticks, ns) pairs from which memscape-record converts ticks to
/// CLOCK_MONOTONIC ns.
#[inline(always)]
fn now() -> u64 {
    if CLOCK_TSC.load(Ordering::Relaxed) {
        rdtsc()
    } else {
        now_ns()
    }
}

/// (ticks, CLOCK_MONOTONIC ns) read together, or None when interrupted in between.
fn clock_pair() -> Option<(u64, u64)> {
    let a = rdtsc();
    let ns = now_ns();
    let b = rdtsc();
    let d = b.wrapping_sub(a);
    (d < PAIR_MAX_TICKS).then_some((a.wrapping_add(d / 2), ns))
}

/// Whether the kernel keeps time with the TSC (then it is invariant and synchronized); the
/// `MEMSCAPE_CLOCK=monotonic` environment variable keeps clock_gettime.
unsafe fn tsc_usable() -> bool {
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

fn gettid(t: &ThreadState) -> u32 {
    let cached = t.tid.get();
    if cached != 0 {
        return cached;
    }
    let tid = unsafe { libc::syscall(libc::SYS_gettid) } as u32;
    t.tid.set(tid);
    tid
}

unsafe fn sys_mmap(len: usize, prot: c_int, flags: c_int, fd: c_int, off: i64) -> *mut u8 {
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
unsafe fn new_chunk(kind: u32, tid: u32, tag: u64) -> *mut u8 {
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
unsafe fn chunk_append(chunk: *mut u8, bytes: &[u8]) -> bool {
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
unsafe fn put_varint(dst: *mut u8, mut v: u64) -> usize {
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
fn zigzag(v: u64) -> u64 {
    let v = v as i64;
    ((v << 1) ^ (v >> 63)) as u64
}

/// Encodes one event at `dst` (at least [`MAX_RECORD_BYTES`] free), delta-coded against the
/// thread's previous record in the chunk; returns its length. 56 fixed bytes per event made the
/// kernel's page-cache work (first-write faults, zeroing, writeback) a third of a recorded run;
/// this is ~10 bytes.
#[inline(always)]
unsafe fn encode_event(t: &ThreadState, dst: *mut u8, e: &Event) -> usize {
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
unsafe fn encode_clock(t: &ThreadState, dst: *mut u8, ticks: u64, ns: u64) -> usize {
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
unsafe fn encode_name(t: &ThreadState, dst: *mut u8) -> usize {
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

unsafe fn record(t: &ThreadState, event: &Event) {
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
        if chunk.is_null() {
            return;
        }
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

// ---------------------------------------------------------------------------------------------
// Call stacks: `_Unwind_Backtrace`, deduplicated by a 64-bit hash of the frames into stack ids.
// Each new stack is written once (id, depth, frames) to a stacks chunk; events carry the id.

#[repr(C)]
struct UnwindContext {
    _private: [u8; 0],
}
type UnwindTraceFn = extern "C" fn(*mut UnwindContext, *mut c_void) -> c_int;
unsafe extern "C" {
    fn _Unwind_Backtrace(trace: UnwindTraceFn, arg: *mut c_void) -> c_int;
    fn _Unwind_GetIP(ctx: *mut UnwindContext) -> usize;
}

struct StackBuf {
    /// Uninitialized beyond `len`: zeroing 2 KiB per event was 5 % of a recorded run.
    frames: [core::mem::MaybeUninit<u64>; MAX_STACK_DEPTH],
    len: usize,
    limit: usize,
}

extern "C" fn unwind_frame(ctx: *mut UnwindContext, arg: *mut c_void) -> c_int {
    let buf = unsafe { &mut *arg.cast::<StackBuf>() };
    let ip = unsafe { _Unwind_GetIP(ctx) } as u64;
    if ip == 0 {
        return 5; // _URC_END_OF_STACK
    }
    let lo = SHIM_TEXT_LO.load(Ordering::Relaxed) as u64;
    let hi = SHIM_TEXT_HI.load(Ordering::Relaxed) as u64;
    if buf.len == 0 && ip >= lo && ip < hi {
        return 0; // the shim's own frames
    }
    if buf.len >= buf.limit {
        return 5;
    }
    buf.frames[buf.len].write(ip);
    buf.len += 1;
    0
}

type UnwBacktraceFn = unsafe extern "C" fn(*mut *mut c_void, c_int) -> c_int;
/// `unw_backtrace` of libunwind.so.8 when it could be loaded, else 0.
static UNW_BACKTRACE: AtomicUsize = AtomicUsize::new(0);

/// Loads libunwind (when installed) for fast stack walks; `MEMSCAPE_UNWINDER=gcc` forces the
/// libgcc unwinder.
unsafe fn load_libunwind() {
    let forced = unsafe { libc::getenv(c"MEMSCAPE_UNWINDER".as_ptr()) };
    if !forced.is_null() && unsafe { core::ffi::CStr::from_ptr(forced) }.to_bytes() == b"gcc" {
        return;
    }
    let handle = unsafe {
        libc::dlopen(
            c"libunwind.so.8".as_ptr(),
            libc::RTLD_NOW | libc::RTLD_LOCAL,
        )
    };
    if handle.is_null() {
        return;
    }
    let f = unsafe { libc::dlsym(handle, c"unw_backtrace".as_ptr()) };
    unsafe { set_per_thread_caching(handle) };
    UNW_BACKTRACE.store(f as usize, Ordering::Release);
}

/// `unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD)` and a larger cache, as
/// heaptrack does: the default global cache takes a lock on every frame lookup, and the
/// default size (128 entries) thrashes on real programs; 1024 is heaptrack's choice. Symbols are
/// the architecture's `_UL<arch>_…` names (the `unw_…` names are macros in libunwind.h).
unsafe fn set_per_thread_caching(handle: *mut c_void) {
    #[cfg(target_arch = "x86_64")]
    const NAMES: [&core::ffi::CStr; 3] = [
        c"_ULx86_64_local_addr_space",
        c"_ULx86_64_set_caching_policy",
        c"_ULx86_64_set_cache_size",
    ];
    #[cfg(target_arch = "aarch64")]
    const NAMES: [&core::ffi::CStr; 3] = [
        c"_ULaarch64_local_addr_space",
        c"_ULaarch64_set_caching_policy",
        c"_ULaarch64_set_cache_size",
    ];
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    return;
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        /// `UNW_CACHE_PER_THREAD` of `enum unw_caching_policy_t`.
        const UNW_CACHE_PER_THREAD: c_int = 2;
        type SetPolicyFn = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;
        type SetSizeFn = unsafe extern "C" fn(*mut c_void, usize, c_int) -> c_int;
        let space = unsafe { libc::dlsym(handle, NAMES[0].as_ptr()) };
        let policy = unsafe { libc::dlsym(handle, NAMES[1].as_ptr()) };
        let size = unsafe { libc::dlsym(handle, NAMES[2].as_ptr()) };
        if space.is_null() || policy.is_null() {
            return;
        }
        // SAFETY: `_UL<arch>_local_addr_space` is a variable of type `unw_addr_space_t` (a
        // pointer); dlsym gives its address.
        let space = unsafe { *space.cast::<*mut c_void>() };
        // SAFETY: the signatures of unw_set_caching_policy / unw_set_cache_size (libunwind.h).
        let policy = unsafe { core::mem::transmute::<*mut c_void, SetPolicyFn>(policy) };
        unsafe { policy(space, UNW_CACHE_PER_THREAD) };
        if !size.is_null() {
            let size = unsafe { core::mem::transmute::<*mut c_void, SetSizeFn>(size) };
            unsafe { size(space, 1024, 0) };
        }
    }
}

const STACK_TABLE_SLOTS: usize = 1 << 20;
/// (hash, id) pairs; hash 0 = empty. Mapped on first use.
static STACK_TABLE: AtomicUsize = AtomicUsize::new(0);
static STACK_LOCK: SpinLock = SpinLock::new();
static NEXT_STACK_ID: AtomicU32 = AtomicU32::new(1);
static STACK_CHUNK: AtomicUsize = AtomicUsize::new(0);
static STACKS_STORED: AtomicUsize = AtomicUsize::new(0);

/// 64-bit identity of a stack. Four independent multiply chains: one serial chain over ~30
/// frames was a dependency-bound 5 cycles per frame on every allocation.
fn hash_frames(frames: &[u64]) -> u64 {
    const M: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut lanes: [u64; 4] = [
        0xcbf2_9ce4_8422_2325,
        0xC2B2_AE3D_27D4_EB4F,
        0x1656_67B1_9E37_79F9,
        0x27D4_EB2F_1656_67C5,
    ];
    let mut quads = frames.chunks_exact(4);
    for q in &mut quads {
        for (lane, &f) in lanes.iter_mut().zip(q) {
            *lane = (*lane ^ f).wrapping_mul(M).rotate_left(29);
        }
    }
    for (lane, &f) in lanes.iter_mut().zip(quads.remainder()) {
        *lane = (*lane ^ f).wrapping_mul(M).rotate_left(29);
    }
    let mut h = frames.len() as u64;
    for lane in lanes {
        h = (h ^ lane).wrapping_mul(M).rotate_left(31);
    }
    h | 1
}

unsafe fn stack_id(t: &ThreadState) -> u32 {
    if NO_STACKS.load(Ordering::Relaxed) {
        return 0;
    }
    let limit = STACK_DEPTH.load(Ordering::Relaxed).min(MAX_STACK_DEPTH);
    let mut buf = StackBuf {
        frames: [const { core::mem::MaybeUninit::uninit() }; MAX_STACK_DEPTH],
        len: 0,
        limit,
    };
    // Room for the shim's own frames, which are dropped.
    let mut ips = [const { core::mem::MaybeUninit::<u64>::uninit() }; MAX_STACK_DEPTH + 8];
    let fast = UNW_BACKTRACE.load(Ordering::Acquire);
    let frames: &[u64] = if fast != 0 {
        // libunwind's unw_backtrace caches the unwind rule of every return address it has seen
        // (heaptrack uses it for the same reason); _Unwind_Backtrace interprets the DWARF CFI
        // anew for every frame of every event, 10x slower on a real program.
        // SAFETY: dlsym returned this address for `unw_backtrace` in libunwind.so.8.
        let unw: UnwBacktraceFn = unsafe { core::mem::transmute::<usize, UnwBacktraceFn>(fast) };
        let want = (limit + 8).min(ips.len()) as c_int;
        let n = (unsafe { unw(ips.as_mut_ptr().cast(), want) }.max(0) as usize).min(ips.len());
        // SAFETY: unw_backtrace wrote the first `n` entries (pointers, 8 bytes each).
        let ips = unsafe { core::slice::from_raw_parts(ips.as_ptr().cast::<u64>(), n) };
        let lo = SHIM_TEXT_LO.load(Ordering::Relaxed) as u64;
        let hi = SHIM_TEXT_HI.load(Ordering::Relaxed) as u64;
        let start = ips.iter().position(|&ip| ip < lo || ip >= hi).unwrap_or(n);
        let ips = &ips[start..];
        let ips = &ips[..ips.len().min(limit)];
        // Used in place (no copy); a null return address ends the stack.
        match ips.iter().position(|&ip| ip == 0) {
            Some(end) => &ips[..end],
            None => ips,
        }
    } else {
        unsafe { _Unwind_Backtrace(unwind_frame, (&mut buf as *mut StackBuf).cast()) };
        // SAFETY: the first `len` frames were written by unwind_frame.
        unsafe { core::slice::from_raw_parts(buf.frames.as_ptr().cast::<u64>(), buf.len) }
    };
    if frames.is_empty() {
        return 0;
    }
    let hash = hash_frames(frames);
    // Loops allocate from one site again and again: the thread's previous stack first.
    if t.last_stack_hash.get() == hash {
        return t.last_stack_id.get();
    }
    let id = unsafe { stack_id_of(hash, frames) };
    t.last_stack_hash.set(hash);
    t.last_stack_id.set(id);
    id
}

/// The id of the stack with this hash, inserting it when new.
unsafe fn stack_id_of(hash: u64, frames: &[u64]) -> u32 {
    let table = STACK_TABLE.load(Ordering::Acquire) as *const [AtomicU64; 2];
    if table.is_null() {
        return 0;
    }
    let mask = STACK_TABLE_SLOTS - 1;
    let mut slot = (hash as usize) & mask;
    for _ in 0..64 {
        let entry = unsafe { &*table.add(slot) };
        let h = entry[0].load(Ordering::Acquire);
        if h == hash {
            return entry[1].load(Ordering::Acquire) as u32;
        }
        if h == 0 {
            break;
        }
        slot = (slot + 1) & mask;
    }
    // Miss: insert under the lock (re-probing: another thread may have inserted it).
    STACK_LOCK.lock();
    let id = unsafe { insert_stack(table, hash, frames) };
    STACK_LOCK.unlock();
    id
}

unsafe fn insert_stack(table: *const [AtomicU64; 2], hash: u64, frames: &[u64]) -> u32 {
    let mask = STACK_TABLE_SLOTS - 1;
    let mut slot = (hash as usize) & mask;
    let mut free_slot = None;
    for _ in 0..64 {
        let entry = unsafe { &*table.add(slot) };
        let h = entry[0].load(Ordering::Acquire);
        if h == hash {
            return entry[1].load(Ordering::Acquire) as u32;
        }
        if h == 0 {
            free_slot = Some(slot);
            break;
        }
        slot = (slot + 1) & mask;
    }
    let id = NEXT_STACK_ID.fetch_add(1, Ordering::AcqRel);
    // Record: id u32, depth u32, frames u64 × depth.
    let mut header = [0u8; 8];
    header[..4].copy_from_slice(&id.to_le_bytes());
    header[4..].copy_from_slice(&(frames.len() as u32).to_le_bytes());
    let body =
        unsafe { core::slice::from_raw_parts(frames.as_ptr().cast::<u8>(), frames.len() * 8) };
    let need = 8 + body.len();
    let mut chunk = STACK_CHUNK.load(Ordering::Acquire) as *mut u8;
    let fits = |c: *mut u8| {
        !c.is_null()
            && CHUNK_HEADER_BYTES
                + unsafe { (*c.cast::<ChunkHeader>()).used.load(Ordering::Relaxed) } as usize
                + need
                <= CHUNK_BYTES
    };
    if !fits(chunk) {
        chunk = unsafe { new_chunk(CHUNK_STACKS, 0, 0) };
        STACK_CHUNK.store(chunk as usize, Ordering::Release);
        if chunk.is_null() {
            return 0;
        }
    }
    // Header and frames as one record: the committed length covers both or neither.
    let h = chunk.cast::<ChunkHeader>();
    let used = unsafe { (*h).used.load(Ordering::Relaxed) } as usize;
    unsafe {
        let dst = chunk.add(CHUNK_HEADER_BYTES + used);
        core::ptr::copy_nonoverlapping(header.as_ptr(), dst, 8);
        core::ptr::copy_nonoverlapping(body.as_ptr(), dst.add(8), body.len());
        (*h).used.store((used + need) as u64, Ordering::Release);
    }
    // Stop deduplicating past 3/4 full rather than probing forever.
    if let Some(slot) = free_slot
        && STACKS_STORED.fetch_add(1, Ordering::Relaxed) < STACK_TABLE_SLOTS / 4 * 3
    {
        let entry = unsafe { &*table.add(slot) };
        entry[1].store(u64::from(id), Ordering::Release);
        entry[0].store(hash, Ordering::Release);
    }
    id
}

// ---------------------------------------------------------------------------------------------
// Module maps: /proc/self/maps copied into maps chunks at start and after every dlopen.

unsafe fn snapshot_maps() {
    let fd = unsafe {
        libc::open(
            c"/proc/self/maps".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return;
    }
    let tag = MAPS_SNAPSHOT.fetch_add(1, Ordering::AcqRel);
    let mut chunk = unsafe { new_chunk(CHUNK_MAPS, 0, tag) };
    let mut buf = [0u8; 4096];
    while !chunk.is_null() {
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
        let data = &buf[..n as usize];
        if !unsafe { chunk_append(chunk, data) } {
            chunk = unsafe { new_chunk(CHUNK_MAPS, 0, tag) };
            if !chunk.is_null() {
                unsafe { chunk_append(chunk, data) };
            }
        }
    }
    unsafe { libc::close(fd) };
}

/// Finds the text range of this shim in /proc/self/maps, to drop its frames from stacks.
unsafe fn find_own_text() {
    let mut info: libc::Dl_info = unsafe { core::mem::zeroed() };
    if unsafe { libc::dladdr(malloc as *const c_void, &mut info) } == 0 {
        return;
    }
    let base = info.dli_fbase as usize;
    // The shim is small: everything within 16 MiB of its load address is its own.
    SHIM_TEXT_LO.store(base, Ordering::Relaxed);
    SHIM_TEXT_HI.store(base + (16 << 20), Ordering::Relaxed);
}

// ---------------------------------------------------------------------------------------------
// Start-up: open `$MEMSCAPE_RECORD_DIR/<exe>.<pid>.<n>.msr` and write the header.

fn push_bytes(out: &mut [u8], len: &mut usize, bytes: &[u8]) -> bool {
    if *len + bytes.len() > out.len() {
        return false;
    }
    out[*len..*len + bytes.len()].copy_from_slice(bytes);
    *len += bytes.len();
    true
}

fn push_decimal(out: &mut [u8], len: &mut usize, mut v: u64) -> bool {
    let mut digits = [0u8; 20];
    let mut n = 0;
    loop {
        digits[19 - n] = b'0' + (v % 10) as u8;
        n += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    push_bytes(out, len, &digits[20 - n..])
}

unsafe fn read_small_file(path: &core::ffi::CStr, out: &mut [u8]) -> usize {
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return 0;
    }
    let mut total = 0;
    while total < out.len() {
        let n = unsafe { libc::read(fd, out[total..].as_mut_ptr().cast(), out.len() - total) };
        if n <= 0 {
            break;
        }
        total += n as usize;
    }
    unsafe { libc::close(fd) };
    total
}

fn env_usize(name: &core::ffi::CStr) -> Option<usize> {
    let v = unsafe { libc::getenv(name.as_ptr()) };
    if v.is_null() {
        return None;
    }
    let s = unsafe { core::ffi::CStr::from_ptr(v) }.to_bytes();
    let mut n: usize = 0;
    for &b in s {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n.saturating_mul(10).saturating_add(usize::from(b - b'0'));
    }
    Some(n)
}

/// Opens the output file and writes its header; `fork_seq` is the parent's event count at the
/// fork for a forked child, `u64::MAX` otherwise.
unsafe fn open_output(fork_seq: u64) -> bool {
    let dir = unsafe { libc::getenv(c"MEMSCAPE_RECORD_DIR".as_ptr()) };
    if dir.is_null() {
        return false;
    }
    let dir = unsafe { core::ffi::CStr::from_ptr(dir) }.to_bytes();
    let mut exe = [0u8; 1024];
    let exe_len = unsafe {
        libc::readlink(
            c"/proc/self/exe".as_ptr(),
            exe.as_mut_ptr().cast(),
            exe.len(),
        )
    };
    let exe_len = if exe_len > 0 { exe_len as usize } else { 0 };
    let exe = &exe[..exe_len];
    let base = exe
        .iter()
        .rposition(|&b| b == b'/')
        .map_or(exe, |i| &exe[i + 1..]);
    let base = if base.is_empty() { &b"prog"[..] } else { base };
    let pid = unsafe { libc::getpid() } as u64;
    let mut fd = -1;
    for n in 0..10_000u64 {
        let mut path = [0u8; 4096];
        let mut len = 0;
        let ok = push_bytes(&mut path, &mut len, dir)
            && push_bytes(&mut path, &mut len, b"/")
            && push_bytes(&mut path, &mut len, &base[..base.len().min(200)])
            && push_bytes(&mut path, &mut len, b".")
            && push_decimal(&mut path, &mut len, pid)
            && push_bytes(&mut path, &mut len, b".")
            && push_decimal(&mut path, &mut len, n)
            && push_bytes(&mut path, &mut len, b".msr\0");
        if !ok {
            return false;
        }
        fd = unsafe {
            libc::open(
                path.as_ptr().cast(),
                libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC,
                0o644,
            )
        };
        if fd >= 0 || unsafe { *libc::__errno_location() } != libc::EEXIST {
            break;
        }
    }
    if fd < 0 {
        return false;
    }
    let mut header = [0u8; FILE_HEADER_BYTES];
    header[..8].copy_from_slice(FILE_MAGIC);
    header[8..12].copy_from_slice(&FILE_VERSION.to_le_bytes());
    header[12..16].copy_from_slice(&(pid as u32).to_le_bytes());
    header[16..20].copy_from_slice(&(unsafe { libc::getppid() } as u32).to_le_bytes());
    let depth = if NO_STACKS.load(Ordering::Relaxed) {
        0
    } else {
        STACK_DEPTH.load(Ordering::Relaxed) as u32
    };
    header[20..24].copy_from_slice(&depth.to_le_bytes());
    header[24..32].copy_from_slice(&fork_seq.to_le_bytes());
    // The start time, and in TSC mode the ticks read with it (the first clock pair).
    let tsc_mode = CLOCK_TSC.load(Ordering::Relaxed);
    let (start_ticks, start_ns) = if tsc_mode {
        (0..8)
            .find_map(|_| clock_pair())
            .unwrap_or_else(|| (rdtsc(), now_ns()))
    } else {
        (0, now_ns())
    };
    header[32..40].copy_from_slice(&start_ns.to_le_bytes());
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(0) as u64;
    header[40..48].copy_from_slice(&page.to_le_bytes());
    let clock = if tsc_mode {
        CLOCK_KIND_TSC
    } else {
        CLOCK_KIND_NS
    };
    header[52..56].copy_from_slice(&clock.to_le_bytes());
    header[56..64].copy_from_slice(&start_ticks.to_le_bytes());
    let exe_len = exe.len().min(1024);
    header[48..50].copy_from_slice(&(exe_len as u16).to_le_bytes());
    let mut cmdline = [0u8; FILE_HEADER_BYTES];
    let room = FILE_HEADER_BYTES - HEADER_STRINGS - exe_len;
    let cmd_len = unsafe { read_small_file(c"/proc/self/cmdline", &mut cmdline[..room]) };
    header[50..52].copy_from_slice(&(cmd_len as u16).to_le_bytes());
    header[HEADER_STRINGS..HEADER_STRINGS + exe_len].copy_from_slice(&exe[..exe_len]);
    header[HEADER_STRINGS + exe_len..HEADER_STRINGS + exe_len + cmd_len]
        .copy_from_slice(&cmdline[..cmd_len]);
    let mut written = 0;
    while written < header.len() {
        let n = unsafe {
            libc::write(
                fd,
                header[written..].as_ptr().cast(),
                header.len() - written,
            )
        };
        if n <= 0 {
            unsafe { libc::close(fd) };
            return false;
        }
        written += n as usize;
    }
    NEXT_CHUNK.store(0, Ordering::Release);
    FD.store(fd as u32, Ordering::Release);
    true
}

unsafe fn start() {
    if STATE
        .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return;
    }
    unsafe { resolve_all() };
    if let Some(depth) = env_usize(c"MEMSCAPE_STACK_DEPTH") {
        STACK_DEPTH.store(depth.min(MAX_STACK_DEPTH), Ordering::Relaxed);
    }
    if env_usize(c"MEMSCAPE_NO_STACKS").is_some_and(|v| v != 0) {
        NO_STACKS.store(true, Ordering::Relaxed);
    }
    let table = unsafe {
        sys_mmap(
            STACK_TABLE_SLOTS * 16,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if !table.is_null() {
        // Probes land anywhere in 16 MiB: with 4 KiB pages nearly every lookup was a TLB miss.
        unsafe { libc::madvise(table.cast(), STACK_TABLE_SLOTS * 16, libc::MADV_HUGEPAGE) };
    }
    STACK_TABLE.store(table as usize, Ordering::Release);
    unsafe { find_own_text() };
    CLOCK_TSC.store(unsafe { tsc_usable() }, Ordering::Relaxed);
    if !NO_STACKS.load(Ordering::Relaxed) {
        unsafe { load_libunwind() };
    }
    if !unsafe { open_output(u64::MAX) } {
        STATE.store(3, Ordering::Release);
        return;
    }
    unsafe { snapshot_maps() };
    unsafe {
        libc::pthread_atfork(
            Some(atfork_prepare),
            Some(atfork_parent),
            Some(atfork_child),
        )
    };
    STATE.store(2, Ordering::Release);
}

extern "C" fn atfork_prepare() {
    FILE_LOCK.lock();
    STACK_LOCK.lock();
}
extern "C" fn atfork_parent() {
    STACK_LOCK.unlock();
    FILE_LOCK.unlock();
}
extern "C" fn atfork_child() {
    // The child records to its own file: new generation (chunks mapped from the parent's file are
    // never written again), empty stack table, fresh tid cache.
    let fork_seq = SEQ.load(Ordering::Acquire);
    if let Some(t) = thread_state() {
        t.tid.set(0);
        // Stack ids restart in the child's file.
        t.last_stack_hash.set(0);
    }
    GENERATION.fetch_add(1, Ordering::AcqRel);
    STACK_LOCK.unlock();
    FILE_LOCK.unlock();
    let old_fd = FD.swap(u32::MAX, Ordering::AcqRel);
    if old_fd != u32::MAX {
        unsafe { libc::close(old_fd as c_int) };
    }
    let table = STACK_TABLE.load(Ordering::Acquire) as *mut u8;
    if !table.is_null() {
        unsafe { core::ptr::write_bytes(table, 0, STACK_TABLE_SLOTS * 16) };
    }
    STACKS_STORED.store(0, Ordering::Release);
    STACK_CHUNK.store(0, Ordering::Release);
    NEXT_STACK_ID.store(1, Ordering::Release);
    SEQ.store(0, Ordering::Release);
    if unsafe { open_output(fork_seq) } {
        unsafe { snapshot_maps() };
    } else {
        STATE.store(3, Ordering::Release);
    }
}

#[used]
#[unsafe(link_section = ".init_array")]
static INIT: extern "C" fn() = init_at_load;

extern "C" fn init_at_load() {
    let _guard = Guard::enter();
    unsafe { start() };
}

/// Records an event if recording is on. Called with the guard held.
#[inline]
fn recording() -> bool {
    match STATE.load(Ordering::Acquire) {
        2 => true,
        0 => {
            unsafe { start() };
            STATE.load(Ordering::Acquire) == 2
        }
        _ => false,
    }
}

unsafe fn usable_size(p: *mut c_void) -> u64 {
    if p.is_null() {
        return 0;
    }
    match real!(REAL_USABLE, UsableFn) {
        Some(f) => unsafe { f(p) as u64 },
        None => 0,
    }
}

unsafe fn record_alloc(
    t: &ThreadState,
    kind: u8,
    function: u8,
    p: *mut c_void,
    size: usize,
    stack: u32,
) {
    let e = Event {
        seq: SEQ.fetch_add(1, Ordering::AcqRel),
        time_ns: now(),
        address: p as u64,
        size: size as u64,
        usable: if kind == KIND_MMAP {
            size as u64
        } else {
            unsafe { usable_size(p) }
        },
        stack,
        kind,
        function,
    };
    unsafe { record(t, &e) };
}

/// A free's sequence number and time are taken *before* the real free, so that the block is
/// dead in the trace before any other thread can be handed the same address.
fn free_event(kind: u8, function: u8, p: *mut c_void, size: usize) -> Event {
    Event {
        seq: SEQ.fetch_add(1, Ordering::AcqRel),
        time_ns: now(),
        address: p as u64,
        size: size as u64,
        usable: 0,
        stack: 0,
        kind,
        function,
    }
}

// ---------------------------------------------------------------------------------------------
// The interposed functions.

/// Runs `call` unrecorded when the shim is re-entered or recording is off.
macro_rules! passthrough_if_nested {
    ($guard:ident, $call:expr) => {
        let Some($guard) = Guard::enter() else {
            return $call;
        };
        if !recording() {
            drop($guard);
            return $call;
        }
    };
}

/// Like `passthrough_if_nested!`, remembering the block when it is the shim's own (its
/// unwinder's caches): their later frees, possibly outside the shim (libunwind frees its
/// per-thread cache in a thread-exit destructor), must not be recorded either.
macro_rules! nested_alloc {
    ($guard:ident, $call:expr) => {
        let Some($guard) = Guard::enter() else {
            let p = $call;
            nested_remember(p as u64);
            return p;
        };
        if !recording() {
            drop($guard);
            return $call;
        }
    };
}

// Addresses of live blocks allocated by the shim's own code (open addressing; 0 = empty,
// 1 = deleted). Few: the unwinder's caches, dlsym's and dlopen's buffers.
const NESTED_SLOTS: usize = 1 << 14;
static NESTED: [AtomicU64; NESTED_SLOTS] = [const { AtomicU64::new(0) }; NESTED_SLOTS];
static NESTED_LIVE: AtomicUsize = AtomicUsize::new(0);
/// One bit per hash bucket of every address ever remembered (bits are never cleared): a free of
/// the program's own block, nearly every free, is dismissed by one load from these 512 bytes
/// instead of a probe into the 128 KiB table.
static NESTED_FILTER: [AtomicU64; 64] = [const { AtomicU64::new(0) }; 64];

fn nested_filter_bit(address: u64) -> (usize, u64) {
    let bit = (address.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 52) as usize;
    ((bit >> 6) & 63, 1u64 << (bit & 63))
}
static NESTED_LOCK: SpinLock = SpinLock::new();

fn nested_slot(address: u64) -> usize {
    (address.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 50) as usize & (NESTED_SLOTS - 1)
}

fn nested_remember(address: u64) {
    if address == 0 {
        return;
    }
    NESTED_LOCK.lock();
    let mut slot = nested_slot(address);
    for _ in 0..NESTED_SLOTS {
        let v = NESTED[slot].load(Ordering::Acquire);
        if v == 0 || v == 1 {
            NESTED[slot].store(address, Ordering::Release);
            let (word, mask) = nested_filter_bit(address);
            NESTED_FILTER[word].fetch_or(mask, Ordering::AcqRel);
            NESTED_LIVE.fetch_add(1, Ordering::AcqRel);
            break;
        }
        slot = (slot + 1) & (NESTED_SLOTS - 1);
    }
    NESTED_LOCK.unlock();
}

/// Forgets `address` if it is the shim's own block; returns whether it was.
fn nested_forget(address: u64) -> bool {
    if address == 0 || NESTED_LIVE.load(Ordering::Acquire) == 0 {
        return false;
    }
    let (word, mask) = nested_filter_bit(address);
    if NESTED_FILTER[word].load(Ordering::Acquire) & mask == 0 {
        return false;
    }
    // Lock-free look first: nearly every free is the program's own.
    let mut slot = nested_slot(address);
    let mut present = false;
    for _ in 0..NESTED_SLOTS {
        let v = NESTED[slot].load(Ordering::Acquire);
        if v == 0 {
            break;
        }
        if v == address {
            present = true;
            break;
        }
        slot = (slot + 1) & (NESTED_SLOTS - 1);
    }
    if !present {
        return false;
    }
    NESTED_LOCK.lock();
    let mut slot = nested_slot(address);
    let mut found = false;
    for _ in 0..NESTED_SLOTS {
        let v = NESTED[slot].load(Ordering::Acquire);
        if v == 0 {
            break;
        }
        if v == address {
            NESTED[slot].store(1, Ordering::Release);
            NESTED_LIVE.fetch_sub(1, Ordering::AcqRel);
            found = true;
            break;
        }
        slot = (slot + 1) & (NESTED_SLOTS - 1);
    }
    NESTED_LOCK.unlock();
    found
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
    let real = || match real!(REAL_MALLOC, MallocFn) {
        Some(f) => unsafe { f(size) },
        None => arena_alloc(size),
    };
    nested_alloc!(guard, real());
    let p = real();
    if !p.is_null() {
        let stack = unsafe { stack_id(guard.0) };
        unsafe { record_alloc(guard.0, KIND_ALLOC, FN_MALLOC, p, size, stack) };
    }
    drop(guard);
    p
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn calloc(n: usize, size: usize) -> *mut c_void {
    let real = || {
        if thread_state().is_none_or(|t| t.resolving_here.get()) {
            return arena_alloc(n.saturating_mul(size));
        }
        match real!(REAL_CALLOC, CallocFn) {
            Some(f) => unsafe { f(n, size) },
            None => arena_alloc(n.saturating_mul(size)),
        }
    };
    nested_alloc!(guard, real());
    let p = real();
    if !p.is_null() {
        let stack = unsafe { stack_id(guard.0) };
        unsafe {
            record_alloc(
                guard.0,
                KIND_ALLOC,
                FN_CALLOC,
                p,
                n.saturating_mul(size),
                stack,
            )
        };
    }
    drop(guard);
    p
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn free(p: *mut c_void) {
    if p.is_null() || in_arena(p) {
        return;
    }
    let real = || {
        if let Some(f) = real!(REAL_FREE, FreeFn) {
            unsafe { f(p) }
        }
    };
    let Some(guard) = Guard::enter() else {
        nested_forget(p as u64);
        return real();
    };
    if !recording() || nested_forget(p as u64) {
        drop(guard);
        return real();
    }
    // No stack walk for a free: the trace keeps the allocating call site only (as heaptrack
    // does), and the walk is most of the cost of an event.
    let e = free_event(KIND_FREE, FN_FREE, p, 0);
    unsafe { record(guard.0, &e) };
    real();
    drop(guard);
}

unsafe fn realloc_common(
    p: *mut c_void,
    size: usize,
    function: u8,
    call: &dyn Fn(*mut c_void) -> *mut c_void,
) -> *mut c_void {
    if in_arena(p) {
        // Moving a bootstrap block into the real heap: copy what the arena can hold.
        let new = unsafe { malloc(size) };
        if !new.is_null() {
            let base = ARENA.0.get() as usize;
            let avail = ARENA_BYTES - (p as usize - base);
            unsafe {
                core::ptr::copy_nonoverlapping(p.cast::<u8>(), new.cast::<u8>(), size.min(avail))
            };
        }
        return new;
    }
    let Some(guard) = Guard::enter() else {
        nested_forget(p as u64);
        let new = call(p);
        nested_remember(new as u64);
        return new;
    };
    if !recording() || nested_forget(p as u64) {
        drop(guard);
        let new = call(p);
        nested_remember(new as u64);
        return new;
    }
    let stack = unsafe { stack_id(guard.0) };
    let freed = (!p.is_null()).then(|| free_event(KIND_REALLOC_FREE, function, p, 0));
    let new = call(p);
    // A failed realloc (NULL with a size) keeps the old block: no free happened.
    if (!new.is_null() || size == 0)
        && let Some(e) = freed.as_ref()
    {
        unsafe { record(guard.0, e) };
    }
    if !new.is_null() {
        unsafe { record_alloc(guard.0, KIND_REALLOC_ALLOC, function, new, size, stack) };
    }
    drop(guard);
    new
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn realloc(p: *mut c_void, size: usize) -> *mut c_void {
    let call = |p: *mut c_void| match real!(REAL_REALLOC, ReallocFn) {
        Some(f) => unsafe { f(p, size) },
        None => null_mut(),
    };
    unsafe { realloc_common(p, size, FN_REALLOC, &call) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn reallocarray(p: *mut c_void, n: usize, size: usize) -> *mut c_void {
    let Some(total) = n.checked_mul(size) else {
        unsafe { *libc::__errno_location() = libc::ENOMEM };
        return null_mut();
    };
    // The real realloc with the checked product: glibc's reallocarray calls realloc through
    // the PLT, which would land in this shim a second time.
    let call = |p: *mut c_void| match real!(REAL_REALLOC, ReallocFn) {
        Some(f) => unsafe { f(p, total) },
        None => null_mut(),
    };
    unsafe { realloc_common(p, total, FN_REALLOCARRAY, &call) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn posix_memalign(out: *mut *mut c_void, align: usize, size: usize) -> c_int {
    let real = || match real!(REAL_POSIX_MEMALIGN, PosixMemalignFn) {
        Some(f) => unsafe { f(out, align, size) },
        None => libc::ENOMEM,
    };
    let Some(guard) = Guard::enter() else {
        let rc = real();
        if rc == 0 {
            nested_remember(unsafe { *out } as u64);
        }
        return rc;
    };
    if !recording() {
        drop(guard);
        return real();
    }
    let rc = real();
    if rc == 0 {
        let p = unsafe { *out };
        let stack = unsafe { stack_id(guard.0) };
        unsafe { record_alloc(guard.0, KIND_ALLOC, FN_POSIX_MEMALIGN, p, size, stack) };
    }
    drop(guard);
    rc
}

macro_rules! aligned_fn {
    ($name:ident, $slot:ident, $function:expr) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(align: usize, size: usize) -> *mut c_void {
            let real = || match real!($slot, AlignFn) {
                Some(f) => unsafe { f(align, size) },
                None => null_mut(),
            };
            nested_alloc!(guard, real());
            let p = real();
            if !p.is_null() {
                let stack = unsafe { stack_id(guard.0) };
                unsafe { record_alloc(guard.0, KIND_ALLOC, $function, p, size, stack) };
            }
            drop(guard);
            p
        }
    };
}
aligned_fn!(aligned_alloc, REAL_ALIGNED_ALLOC, FN_ALIGNED_ALLOC);
aligned_fn!(memalign, REAL_MEMALIGN, FN_MEMALIGN);

macro_rules! page_fn {
    ($name:ident, $slot:ident, $function:expr) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(size: usize) -> *mut c_void {
            let real = || match real!($slot, MallocFn) {
                Some(f) => unsafe { f(size) },
                None => null_mut(),
            };
            nested_alloc!(guard, real());
            let p = real();
            if !p.is_null() {
                let stack = unsafe { stack_id(guard.0) };
                unsafe { record_alloc(guard.0, KIND_ALLOC, $function, p, size, stack) };
            }
            drop(guard);
            p
        }
    };
}
page_fn!(valloc, REAL_VALLOC, FN_VALLOC);
page_fn!(pvalloc, REAL_PVALLOC, FN_PVALLOC);

#[unsafe(no_mangle)]
pub unsafe extern "C" fn mmap(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: i64,
) -> *mut c_void {
    let real = || match real!(REAL_MMAP, MmapFn) {
        Some(f) => unsafe { f(addr, len, prot, flags, fd, off) },
        None => unsafe { sys_mmap(len, prot, flags, fd, off) }.cast(),
    };
    if flags & libc::MAP_ANONYMOUS == 0 {
        return real();
    }
    passthrough_if_nested!(guard, real());
    let p = real();
    if p != libc::MAP_FAILED {
        let stack = unsafe { stack_id(guard.0) };
        unsafe { record_alloc(guard.0, KIND_MMAP, FN_MMAP, p, len, stack) };
    }
    drop(guard);
    p
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn mmap64(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: i64,
) -> *mut c_void {
    unsafe { mmap(addr, len, prot, flags, fd, off) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn munmap(addr: *mut c_void, len: usize) -> c_int {
    let real = || match real!(REAL_MUNMAP, MunmapFn) {
        Some(f) => unsafe { f(addr, len) },
        None => unsafe { libc::syscall(libc::SYS_munmap, addr, len) as c_int },
    };
    passthrough_if_nested!(guard, real());
    // Recorded for every munmap: the reader pairs it with anonymous mmaps it knows.
    let e = free_event(KIND_MUNMAP, FN_MUNMAP, addr, len);
    let rc = real();
    if rc == 0 {
        unsafe { record(guard.0, &e) };
    }
    drop(guard);
    rc
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlopen(file: *const c_char, mode: c_int) -> *mut c_void {
    let handle = match real!(REAL_DLOPEN, DlopenFn) {
        Some(f) => unsafe { f(file, mode) },
        None => null_mut(),
    };
    if !handle.is_null()
        && let Some(guard) = Guard::enter()
    {
        if STATE.load(Ordering::Acquire) == 2 {
            unsafe { snapshot_maps() };
        }
        drop(guard);
    }
    handle
}

/// Interposed so that threads named after their first allocation are named in the trace too.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_setname_np(thread: libc::pthread_t, name: *const c_char) -> c_int {
    let rc = match real!(REAL_SETNAME, SetnameFn) {
        Some(f) => unsafe { f(thread, name) },
        None => libc::ENOSYS,
    };
    THREAD_NAMES.fetch_add(1, Ordering::Release);
    rc
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fork() -> libc::pid_t {
    // The atfork handlers do the work; interposed only so that a fork before the first malloc
    // still starts the recorder in the parent first.
    if STATE.load(Ordering::Acquire) == 0
        && let Some(guard) = Guard::enter()
    {
        unsafe { start() };
        drop(guard);
    }
    match real!(REAL_FORK, ForkFn) {
        Some(f) => unsafe { f() },
        None => -1,
    }
}
