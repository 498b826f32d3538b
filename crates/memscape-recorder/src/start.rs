//! Start-up, fork, module maps, output file.

use super::*;

pub(crate) unsafe fn snapshot_maps() {
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
pub(crate) unsafe fn find_own_text() {
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

pub(crate) fn push_bytes(out: &mut [u8], len: &mut usize, bytes: &[u8]) -> bool {
    if *len + bytes.len() > out.len() {
        return false;
    }
    out[*len..*len + bytes.len()].copy_from_slice(bytes);
    *len += bytes.len();
    true
}

pub(crate) fn push_decimal(out: &mut [u8], len: &mut usize, mut v: u64) -> bool {
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

pub(crate) unsafe fn read_small_file(path: &core::ffi::CStr, out: &mut [u8]) -> usize {
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

pub(crate) fn env_usize(name: &core::ffi::CStr) -> Option<usize> {
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
pub(crate) unsafe fn open_output(fork_seq: u64) -> bool {
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

/// Starts recording (once). Marked as the shim's own work: `dlopen` of libunwind and the
/// environment reads may allocate.
pub(crate) unsafe fn start() {
    match thread_state() {
        Some(t) => internally(t, || unsafe { start_inner() }),
        None => unsafe { start_inner() },
    }
}

unsafe fn start_inner() {
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
    FREE_STACK_DEPTH.store(
        env_usize(c"MEMSCAPE_FREE_STACK_DEPTH")
            .unwrap_or(DEFAULT_FREE_STACK_DEPTH.min(STACK_DEPTH.load(Ordering::Relaxed)))
            .min(MAX_STACK_DEPTH),
        Ordering::Relaxed,
    );
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
        // This thread's unwinder cache now, as the shim's own work (start() runs marked so):
        // its first walk mallocs, and a signal handler interrupting that walk would be lost.
        unsafe { warm_unwinder() };
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

pub(crate) extern "C" fn atfork_prepare() {
    FILE_LOCK.lock();
    STACK_LOCK.lock();
}
pub(crate) extern "C" fn atfork_parent() {
    STACK_LOCK.unlock();
    FILE_LOCK.unlock();
}
pub(crate) extern "C" fn atfork_child() {
    // The child records to its own file: new generation (chunks mapped from the parent's file are
    // never written again), empty stack table, fresh tid cache.
    let fork_seq = SEQ.load(Ordering::Acquire);
    if let Some(t) = thread_state() {
        t.tid.set(0);
        // Stack ids restart in the child's file.
        t.last_stack_hash.set(0);
    }
    STACK_IDS_EPOCH.fetch_add(1, Ordering::AcqRel);
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
pub(crate) static INIT: extern "C" fn() = init_at_load;

pub(crate) extern "C" fn init_at_load() {
    let _guard = Guard::enter();
    unsafe { start() };
}

/// Records an event if recording is on. Called with the guard held.
#[inline]
pub(crate) fn recording() -> bool {
    match STATE.load(Ordering::Acquire) {
        2 => true,
        0 => {
            unsafe { start() };
            STATE.load(Ordering::Acquire) == 2
        }
        _ => false,
    }
}

pub(crate) unsafe fn usable_size(p: *mut c_void) -> u64 {
    if p.is_null() {
        return 0;
    }
    match real!(REAL_USABLE, UsableFn) {
        Some(f) => unsafe { f(p) as u64 },
        None => 0,
    }
}

pub(crate) unsafe fn record_alloc(
    t: &ThreadState,
    kind: u8,
    function: u8,
    p: *mut c_void,
    size: usize,
    stack: u32,
) {
    let e = alloc_event(kind, function, p, size, stack);
    unsafe { record(t, &e) };
}

/// An allocation's event: sequence number and time taken now, after the real call.
pub(crate) fn alloc_event(
    kind: u8,
    function: u8,
    p: *mut c_void,
    size: usize,
    stack: u32,
) -> Event {
    Event {
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
    }
}

/// A free's sequence number and time are taken *before* the real free, so that the block is
/// dead in the trace before any other thread can be handed the same address.
pub(crate) fn free_event(kind: u8, function: u8, p: *mut c_void, size: usize) -> Event {
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
