//! Call stacks: unwinding, deduplication into stack ids.

use super::*;

#[repr(C)]
pub(crate) struct UnwindContext {
    pub(crate) _private: [u8; 0],
}
pub(crate) type UnwindTraceFn = extern "C" fn(*mut UnwindContext, *mut c_void) -> c_int;
unsafe extern "C" {
    pub(crate) fn _Unwind_Backtrace(trace: UnwindTraceFn, arg: *mut c_void) -> c_int;
    pub(crate) fn _Unwind_GetIP(ctx: *mut UnwindContext) -> usize;
}

pub(crate) struct StackBuf {
    /// Uninitialized beyond `len`: zeroing 2 KiB per event was 5 % of a recorded run.
    pub(crate) frames: [core::mem::MaybeUninit<u64>; MAX_STACK_DEPTH],
    pub(crate) len: usize,
    pub(crate) limit: usize,
}

pub(crate) extern "C" fn unwind_frame(ctx: *mut UnwindContext, arg: *mut c_void) -> c_int {
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

pub(crate) type UnwBacktraceFn = unsafe extern "C" fn(*mut *mut c_void, c_int) -> c_int;
/// `unw_backtrace` of libunwind.so.8 when it could be loaded, else 0.
pub(crate) static UNW_BACKTRACE: AtomicUsize = AtomicUsize::new(0);

/// The walker in use (`MEMSCAPE_UNWINDER`), when libunwind is loaded.
pub(crate) static UNWINDER: AtomicU32 = AtomicU32::new(UNWINDER_LIBUNWIND);
/// libunwind's `unw_backtrace` for every walk (`MEMSCAPE_UNWINDER=libunwind`; other arches).
pub(crate) const UNWINDER_LIBUNWIND: u32 = 0;
/// The cached CFI rules of `cfi.rs`, libunwind for walks they do not cover (the default on
/// x86_64).
pub(crate) const UNWINDER_CFI: u32 = 1;
/// Both, every walk, the differences reported on stderr (`MEMSCAPE_UNWINDER=compare`).
pub(crate) const UNWINDER_COMPARE: u32 = 2;
/// Compare mode's counts: walks by the CFI rules (each compared), walks left to libunwind,
/// differences.
static CFI_WALKS: AtomicU64 = AtomicU64::new(0);
static LIBUNWIND_WALKS: AtomicU64 = AtomicU64::new(0);
static MISMATCHES: AtomicU64 = AtomicU64::new(0);

/// Loads libunwind (when installed) for fast stack walks; `MEMSCAPE_UNWINDER=gcc` forces the
/// libgcc unwinder, `=libunwind` libunwind alone, `=compare` both (see [`UNWINDER_COMPARE`]).
pub(crate) unsafe fn load_libunwind() {
    let forced = unsafe { libc::getenv(c"MEMSCAPE_UNWINDER".as_ptr()) };
    let forced = if forced.is_null() {
        &b""[..]
    } else {
        unsafe { core::ffi::CStr::from_ptr(forced) }.to_bytes()
    };
    if forced == b"gcc" {
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
    #[cfg(target_arch = "x86_64")]
    if !f.is_null() && forced != b"libunwind" {
        unsafe { cfi::init_cfi() };
        let mode = if forced == b"compare" {
            UNWINDER_COMPARE
        } else {
            UNWINDER_CFI
        };
        UNWINDER.store(mode, Ordering::Relaxed);
    }
    UNWINDER_LOADED.store(true, Ordering::Relaxed);
    UNW_BACKTRACE.store(f as usize, Ordering::Release);
}

/// Whether libunwind was loaded (compare mode's report needs it).
static UNWINDER_LOADED: AtomicBool = AtomicBool::new(false);

/// Compare mode's counts on stderr when the process exits normally.
#[used]
#[unsafe(link_section = ".fini_array")]
static REPORT_AT_EXIT: extern "C" fn() = report_comparison;

extern "C" fn report_comparison() {
    if !UNWINDER_LOADED.load(Ordering::Relaxed)
        || UNWINDER.load(Ordering::Relaxed) != UNWINDER_COMPARE
    {
        return;
    }
    let mut line = [0u8; 200];
    let mut len = 0;
    push_bytes(
        &mut line,
        &mut len,
        b"memscape-recorder: unwinders compared: ",
    );
    push_decimal(&mut line, &mut len, CFI_WALKS.load(Ordering::Relaxed));
    push_bytes(&mut line, &mut len, b" walks by CFI rules, ");
    push_decimal(&mut line, &mut len, LIBUNWIND_WALKS.load(Ordering::Relaxed));
    push_bytes(&mut line, &mut len, b" left to libunwind, ");
    push_decimal(&mut line, &mut len, MISMATCHES.load(Ordering::Relaxed));
    push_bytes(&mut line, &mut len, b" mismatches\n");
    unsafe { libc::write(2, line.as_ptr().cast(), len) };
}

/// `unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD)` and a larger cache, as
/// heaptrack does: the default global cache takes a lock on every frame lookup, and the
/// default size (128 entries) thrashes on real programs; 1024 is heaptrack's choice. Symbols are
/// the architecture's `_UL<arch>_…` names (the `unw_…` names are macros in libunwind.h).
pub(crate) unsafe fn set_per_thread_caching(handle: *mut c_void) {
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

pub(crate) const STACK_TABLE_SLOTS: usize = 1 << 20;
/// (hash, id) pairs; hash 0 = empty. Mapped on first use.
pub(crate) static STACK_TABLE: AtomicUsize = AtomicUsize::new(0);
pub(crate) static STACK_LOCK: SpinLock = SpinLock::new();
pub(crate) static NEXT_STACK_ID: AtomicU32 = AtomicU32::new(1);
pub(crate) static STACK_CHUNK: AtomicUsize = AtomicUsize::new(0);
pub(crate) static STACKS_STORED: AtomicUsize = AtomicUsize::new(0);
/// Bumped when stack ids restart (a forked child's own file): the threads' recent ids
/// (`cfi::known_stack_id`) are then forgotten.
pub(crate) static STACK_IDS_EPOCH: AtomicU64 = AtomicU64::new(0);

/// 64-bit identity of a stack. Four independent multiply chains: one serial chain over ~30
/// frames was a dependency-bound 5 cycles per frame on every allocation.
pub(crate) fn hash_frames(frames: &[u64]) -> u64 {
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

pub(crate) unsafe fn stack_id(t: &ThreadState) -> u32 {
    unsafe { stack_id_limited(t, STACK_DEPTH.load(Ordering::Relaxed)) }
}

/// The stack of a free ([`FREE_STACK_DEPTH`] frames; 0: none).
pub(crate) unsafe fn free_stack_id(t: &ThreadState) -> u32 {
    match FREE_STACK_DEPTH.load(Ordering::Relaxed) {
        0 => 0,
        depth => unsafe { stack_id_limited(t, depth) },
    }
}

/// The id of this thread's current stack, at most `limit` frames (innermost first).
pub(crate) unsafe fn stack_id_limited(t: &ThreadState, limit: usize) -> u32 {
    if NO_STACKS.load(Ordering::Relaxed) || limit == 0 {
        return 0;
    }
    if !t.walked.get() {
        // libunwind mallocs its per-thread cache in a thread's first walk: the shim's own.
        t.walked.set(true);
        return internally(t, || unsafe {
            // The CFI walker leaves some walks to libunwind: its cache must exist before.
            #[cfg(target_arch = "x86_64")]
            if UNWINDER.load(Ordering::Relaxed) != UNWINDER_LIBUNWIND {
                warm_unwinder();
            }
            walk_and_id(t, limit)
        });
    }
    // Later walks do not allocate: an allocation nested in one is a signal handler's,
    // recorded (`tests/faults.rs` checks both: signal handlers, and valgrind's counts with
    // 64 threads).
    unsafe { walk_and_id(t, limit) }
}

/// One walk that records nothing, so that libunwind sets up this thread's cache (it mallocs
/// it in a thread's first walk); marks the thread as walked.
pub(crate) unsafe fn warm_unwinder() {
    let fast = UNW_BACKTRACE.load(Ordering::Acquire);
    if fast == 0 {
        return;
    }
    // SAFETY: dlsym returned this address for `unw_backtrace` in libunwind.so.8.
    let unw: UnwBacktraceFn = unsafe { core::mem::transmute::<usize, UnwBacktraceFn>(fast) };
    let mut ips = [null_mut::<c_void>(); 8];
    unsafe { unw(ips.as_mut_ptr(), ips.len() as c_int) };
    if let Some(t) = thread_state() {
        t.walked.set(true);
        #[cfg(target_arch = "x86_64")]
        if UNWINDER.load(Ordering::Relaxed) != UNWINDER_LIBUNWIND {
            unsafe { cfi::setup_thread(t) };
        }
    }
}

/// The walk itself.
unsafe fn walk_and_id(t: &ThreadState, limit: usize) -> u32 {
    let limit = limit.min(MAX_STACK_DEPTH);
    let mut buf = StackBuf {
        frames: [const { core::mem::MaybeUninit::uninit() }; MAX_STACK_DEPTH],
        len: 0,
        limit,
    };
    // Room for the shim's own frames, which are dropped.
    let mut ips = [const { core::mem::MaybeUninit::<u64>::uninit() }; MAX_STACK_DEPTH + 8];
    let fast = UNW_BACKTRACE.load(Ordering::Acquire);
    let frames: &[u64] = if fast != 0 {
        // SAFETY: dlsym returned this address for `unw_backtrace` in libunwind.so.8.
        let unw: UnwBacktraceFn = unsafe { core::mem::transmute::<usize, UnwBacktraceFn>(fast) };
        let want = (limit + 8).min(ips.len());
        let n = unsafe { raw_walk(t, unw, &mut ips[..want], limit) };
        // SAFETY: the walk wrote the first `n` entries.
        let ips = unsafe { core::slice::from_raw_parts(ips.as_ptr().cast::<u64>(), n) };
        program_frames(ips, limit)
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
    let id = unsafe { thread_stack_id(t, hash, frames) };
    t.last_stack_hash.set(hash);
    t.last_stack_id.set(id);
    id
}

/// The id of a stack: with the CFI walker from the thread's recent stacks when there (no
/// probe of the shared table, a cache miss), else the shared table's. Compare mode checks the
/// recent id against the table's.
unsafe fn thread_stack_id(t: &ThreadState, hash: u64, frames: &[u64]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        let mode = UNWINDER.load(Ordering::Relaxed);
        if mode != UNWINDER_LIBUNWIND {
            if let Some(id) = unsafe { cfi::known_stack_id(t, hash) } {
                if mode == UNWINDER_COMPARE
                    && let Some(shared) = unsafe { table_lookup(hash) }
                    && shared != id
                {
                    unsafe {
                        report_mismatch(
                            b"memscape-recorder: unwinder mismatch: stack id (recent / table)",
                            &[u64::from(id)],
                            &[u64::from(shared)],
                        )
                    };
                }
                return id;
            }
            let id = unsafe { stack_id_of(hash, frames) };
            unsafe { cfi::remember_stack_id(t, hash, id) };
            return id;
        }
    }
    unsafe { stack_id_of(hash, frames) }
}

/// libunwind's `unw_backtrace` into `ips`: return addresses, the shim's own first.
unsafe fn libunwind_walk(unw: UnwBacktraceFn, ips: &mut [core::mem::MaybeUninit<u64>]) -> usize {
    // libunwind's unw_backtrace caches the unwind rule of every return address it has seen
    // (heaptrack uses it for the same reason); _Unwind_Backtrace interprets the DWARF CFI
    // anew for every frame of every event, 10x slower on a real program.
    let n = unsafe { unw(ips.as_mut_ptr().cast(), ips.len() as c_int) };
    (n.max(0) as usize).min(ips.len())
}

/// The walk into `ips` (the shim's frames included), by the CFI rules where they cover it.
#[allow(unused_variables)]
unsafe fn raw_walk(
    t: &ThreadState,
    unw: UnwBacktraceFn,
    ips: &mut [core::mem::MaybeUninit<u64>],
    limit: usize,
) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        let mode = UNWINDER.load(Ordering::Relaxed);
        if mode != UNWINDER_LIBUNWIND {
            if let Some(n) = unsafe { cfi::fast_backtrace(t, ips, limit) } {
                if mode == UNWINDER_COMPARE {
                    unsafe { compare_with_libunwind(unw, ips, n, limit) };
                }
                return n;
            }
            if mode == UNWINDER_COMPARE {
                LIBUNWIND_WALKS.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    unsafe { libunwind_walk(unw, ips) }
}

/// Compare mode: libunwind's walk beside the CFI walk's `n` frames, the program's frames of
/// both compared, a difference written to stderr (the first 20).
#[cfg(target_arch = "x86_64")]
unsafe fn compare_with_libunwind(
    unw: UnwBacktraceFn,
    ips: &[core::mem::MaybeUninit<u64>],
    n: usize,
    limit: usize,
) {
    CFI_WALKS.fetch_add(1, Ordering::Relaxed);
    let mut theirs = [const { core::mem::MaybeUninit::<u64>::uninit() }; MAX_STACK_DEPTH + 8];
    let m = unsafe { libunwind_walk(unw, &mut theirs[..ips.len()]) };
    // SAFETY: both walks wrote their first `n` / `m` entries.
    let ours = unsafe { core::slice::from_raw_parts(ips.as_ptr().cast::<u64>(), n) };
    let theirs = unsafe { core::slice::from_raw_parts(theirs.as_ptr().cast::<u64>(), m) };
    let (ours, theirs) = (program_frames(ours, limit), program_frames(theirs, limit));
    if ours == theirs {
        return;
    }
    unsafe { report_mismatch(b"memscape-recorder: unwinder mismatch: cfi", ours, theirs) };
}

/// Compare mode: counts a difference and writes it to stderr (the first 20): `what`, ours,
/// " / libunwind", theirs.
#[cfg(target_arch = "x86_64")]
unsafe fn report_mismatch(what: &[u8], ours: &[u64], theirs: &[u64]) {
    if MISMATCHES.fetch_add(1, Ordering::Relaxed) >= 20 {
        return;
    }
    let mut line = [0u8; 4096];
    let mut len = 0;
    push_bytes(&mut line, &mut len, what);
    for frames in [ours, theirs] {
        for &ip in frames {
            push_bytes(&mut line, &mut len, b" ");
            push_hex(&mut line, &mut len, ip);
        }
        push_bytes(&mut line, &mut len, b" / libunwind");
    }
    push_bytes(&mut line, &mut len, b"\n");
    unsafe { libc::write(2, line.as_ptr().cast(), len) };
}

#[cfg(target_arch = "x86_64")]
fn push_hex(out: &mut [u8], len: &mut usize, v: u64) {
    let mut digits = [0u8; 16];
    for (i, d) in digits.iter_mut().enumerate() {
        *d = b"0123456789abcdef"[((v >> (60 - 4 * i)) & 15) as usize];
    }
    push_bytes(out, len, &digits);
}

/// The program's frames of a raw walk: the shim's own dropped, at most `limit`, ending at a
/// null return address.
fn program_frames(ips: &[u64], limit: usize) -> &[u64] {
    let lo = SHIM_TEXT_LO.load(Ordering::Relaxed) as u64;
    let hi = SHIM_TEXT_HI.load(Ordering::Relaxed) as u64;
    let start = ips
        .iter()
        .position(|&ip| ip < lo || ip >= hi)
        .unwrap_or(ips.len());
    let ips = &ips[start..];
    let ips = &ips[..ips.len().min(limit)];
    // Used in place (no copy); a null return address ends the stack.
    match ips.iter().position(|&ip| ip == 0) {
        Some(end) => &ips[..end],
        None => ips,
    }
}

/// The id of the stack with this hash in the shared table, if it is there.
unsafe fn table_lookup(hash: u64) -> Option<u32> {
    let table = STACK_TABLE.load(Ordering::Acquire) as *const [AtomicU64; 2];
    if table.is_null() {
        return None;
    }
    let mask = STACK_TABLE_SLOTS - 1;
    let mut slot = (hash as usize) & mask;
    for _ in 0..64 {
        let entry = unsafe { &*table.add(slot) };
        let h = entry[0].load(Ordering::Acquire);
        if h == hash {
            return Some(entry[1].load(Ordering::Acquire) as u32);
        }
        if h == 0 {
            break;
        }
        slot = (slot + 1) & mask;
    }
    None
}

/// The id of the stack with this hash, inserting it when new.
pub(crate) unsafe fn stack_id_of(hash: u64, frames: &[u64]) -> u32 {
    let table = STACK_TABLE.load(Ordering::Acquire) as *const [AtomicU64; 2];
    if table.is_null() {
        return 0;
    }
    if let Some(id) = unsafe { table_lookup(hash) } {
        return id;
    }
    // Miss: insert under the lock (re-probing: another thread may have inserted it).
    STACK_LOCK.lock();
    let id = unsafe { insert_stack(table, hash, frames) };
    STACK_LOCK.unlock();
    id
}

pub(crate) unsafe fn insert_stack(table: *const [AtomicU64; 2], hash: u64, frames: &[u64]) -> u32 {
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
