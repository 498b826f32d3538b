//! The interposed functions.

use super::*;

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
    ($guard:ident, $call:expr, $function:expr, $size:expr) => {
        let Some($guard) = Guard::enter() else {
            let p = $call;
            if !p.is_null()
                && !thread_state().is_some_and(|t| {
                    interrupted_shim(t) && defer(t, alloc_event(KIND_ALLOC, $function, p, $size, 0))
                })
            {
                nested_remember(p as u64);
            }
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
pub(crate) const NESTED_SLOTS: usize = 1 << 14;
pub(crate) static NESTED: [AtomicU64; NESTED_SLOTS] = [const { AtomicU64::new(0) }; NESTED_SLOTS];
pub(crate) static NESTED_LIVE: AtomicUsize = AtomicUsize::new(0);
/// One bit per hash bucket of every address ever remembered (bits are never cleared): a free of
/// the program's own block, nearly every free, is dismissed by one load from these 512 bytes
/// instead of a probe into the 128 KiB table.
pub(crate) static NESTED_FILTER: [AtomicU64; 64] = [const { AtomicU64::new(0) }; 64];

pub(crate) fn nested_filter_bit(address: u64) -> (usize, u64) {
    let bit = (address.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 52) as usize;
    ((bit >> 6) & 63, 1u64 << (bit & 63))
}
pub(crate) static NESTED_LOCK: SpinLock = SpinLock::new();

pub(crate) fn nested_slot(address: u64) -> usize {
    (address.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 50) as usize & (NESTED_SLOTS - 1)
}

pub(crate) fn nested_remember(address: u64) {
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
pub(crate) fn nested_forget(address: u64) -> bool {
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
    nested_alloc!(guard, real(), FN_MALLOC, size);
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
    nested_alloc!(guard, real(), FN_CALLOC, n.saturating_mul(size));
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
        if !nested_forget(p as u64)
            && let Some(t) = thread_state()
            && interrupted_shim(t)
        {
            // A signal handler's free, while this thread was inside the shim.
            defer(t, free_event(KIND_FREE, FN_FREE, p, 0));
        }
        return real();
    };
    if !recording() || nested_forget(p as u64) {
        drop(guard);
        return real();
    }
    // The free's own call site (`MEMSCAPE_FREE_STACK_DEPTH` frames), walked before the
    // sequence number is taken (the number must precede the real free, not the walk).
    let stack = unsafe { free_stack_id(guard.0) };
    let mut e = free_event(KIND_FREE, FN_FREE, p, 0);
    e.stack = stack;
    unsafe { record(guard.0, &e) };
    real();
    drop(guard);
}

pub(crate) unsafe fn realloc_common(
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
        let t = thread_state().filter(|&t| interrupted_shim(t));
        if !nested_forget(p as u64)
            && let Some(t) = t
        {
            // A signal handler's realloc, while this thread was inside the shim.
            let freed = (!p.is_null()).then(|| free_event(KIND_REALLOC_FREE, function, p, 0));
            let new = call(p);
            if (!new.is_null() || size == 0)
                && let Some(e) = freed
            {
                defer(t, e);
            }
            if !new.is_null() && !defer(t, alloc_event(KIND_REALLOC_ALLOC, function, new, size, 0))
            {
                nested_remember(new as u64);
            }
            return new;
        }
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
    // The free half carries the realloc's stack too: the realloc call site is its free site.
    let freed = (!p.is_null()).then(|| {
        let mut e = free_event(KIND_REALLOC_FREE, function, p, 0);
        e.stack = if FREE_STACK_DEPTH.load(Ordering::Relaxed) > 0 {
            stack
        } else {
            0
        };
        e
    });
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
            let p = unsafe { *out };
            if !thread_state().is_some_and(|t| {
                interrupted_shim(t)
                    && defer(t, alloc_event(KIND_ALLOC, FN_POSIX_MEMALIGN, p, size, 0))
            }) {
                nested_remember(p as u64);
            }
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
            nested_alloc!(guard, real(), $function, size);
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
            nested_alloc!(guard, real(), $function, size);
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

/// Interposed so that the stack walker's rules of an unloaded module are forgotten: another
/// module mapped at its addresses later must not be walked with them.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlclose(handle: *mut c_void) -> c_int {
    let rc = match real!(REAL_DLCLOSE, DlcloseFn) {
        Some(f) => unsafe { f(handle) },
        None => -1,
    };
    #[cfg(target_arch = "x86_64")]
    if rc == 0 {
        crate::cfi::modules_unloaded();
    }
    rc
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
