//! Real functions, resolved with dlsym(RTLD_NEXT), and the bootstrap arena dlsym allocates from.

use super::*;

pub(crate) type MallocFn = unsafe extern "C" fn(usize) -> *mut c_void;
pub(crate) type FreeFn = unsafe extern "C" fn(*mut c_void);
pub(crate) type CallocFn = unsafe extern "C" fn(usize, usize) -> *mut c_void;
pub(crate) type ReallocFn = unsafe extern "C" fn(*mut c_void, usize) -> *mut c_void;
pub(crate) type PosixMemalignFn = unsafe extern "C" fn(*mut *mut c_void, usize, usize) -> c_int;
pub(crate) type AlignFn = unsafe extern "C" fn(usize, usize) -> *mut c_void;
pub(crate) type UsableFn = unsafe extern "C" fn(*mut c_void) -> usize;
pub(crate) type MmapFn =
    unsafe extern "C" fn(*mut c_void, usize, c_int, c_int, c_int, i64) -> *mut c_void;
pub(crate) type MunmapFn = unsafe extern "C" fn(*mut c_void, usize) -> c_int;
pub(crate) type DlopenFn = unsafe extern "C" fn(*const c_char, c_int) -> *mut c_void;
pub(crate) type DlcloseFn = unsafe extern "C" fn(*mut c_void) -> c_int;
pub(crate) type ForkFn = unsafe extern "C" fn() -> libc::pid_t;
pub(crate) type SetnameFn = unsafe extern "C" fn(libc::pthread_t, *const c_char) -> c_int;
pub(crate) type ExitFn = unsafe extern "C" fn(c_int) -> !;
pub(crate) type WaitpidFn = unsafe extern "C" fn(libc::pid_t, *mut c_int, c_int) -> libc::pid_t;
pub(crate) type Wait4Fn =
    unsafe extern "C" fn(libc::pid_t, *mut c_int, c_int, *mut libc::rusage) -> libc::pid_t;
pub(crate) type WaitidFn =
    unsafe extern "C" fn(libc::idtype_t, libc::id_t, *mut libc::siginfo_t, c_int) -> c_int;

pub(crate) static REAL_MALLOC: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_FREE: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_CALLOC: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_REALLOC: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_POSIX_MEMALIGN: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_ALIGNED_ALLOC: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_MEMALIGN: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_VALLOC: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_PVALLOC: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_USABLE: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_MMAP: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_MUNMAP: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_DLOPEN: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_DLCLOSE: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_FORK: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_SETNAME: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_EXIT: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL__EXIT: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL__EXIT2: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_WAITPID: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_WAIT4: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_WAITID: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_EXECVE: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_EXECV: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_EXECVP: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_EXECVPE: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_FEXECVE: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_POSIX_SPAWN: AtomicUsize = AtomicUsize::new(0);
pub(crate) static REAL_POSIX_SPAWNP: AtomicUsize = AtomicUsize::new(0);

/// 0 = nothing resolved, 1 = resolving (dlsym may call calloc: served from the arena),
/// 2 = resolved.
pub(crate) static RESOLVE_STATE: AtomicU32 = AtomicU32::new(0);

pub(crate) unsafe fn resolve_all() {
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
    REAL_DLCLOSE.store(sym(b"dlclose\0"), Ordering::Release);
    REAL_FORK.store(sym(b"fork\0"), Ordering::Release);
    REAL_SETNAME.store(sym(b"pthread_setname_np\0"), Ordering::Release);
    REAL_EXIT.store(sym(b"exit\0"), Ordering::Release);
    REAL__EXIT.store(sym(b"_exit\0"), Ordering::Release);
    REAL__EXIT2.store(sym(b"_Exit\0"), Ordering::Release);
    REAL_WAITPID.store(sym(b"waitpid\0"), Ordering::Release);
    REAL_WAIT4.store(sym(b"wait4\0"), Ordering::Release);
    REAL_WAITID.store(sym(b"waitid\0"), Ordering::Release);
    REAL_EXECVE.store(sym(b"execve\0"), Ordering::Release);
    REAL_EXECV.store(sym(b"execv\0"), Ordering::Release);
    REAL_EXECVP.store(sym(b"execvp\0"), Ordering::Release);
    REAL_EXECVPE.store(sym(b"execvpe\0"), Ordering::Release);
    REAL_FEXECVE.store(sym(b"fexecve\0"), Ordering::Release);
    REAL_POSIX_SPAWN.store(sym(b"posix_spawn\0"), Ordering::Release);
    REAL_POSIX_SPAWNP.store(sym(b"posix_spawnp\0"), Ordering::Release);
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

pub(crate) const ARENA_BYTES: usize = 64 * 1024;
#[repr(C, align(64))]
pub(crate) struct Arena(pub(crate) core::cell::UnsafeCell<[u8; ARENA_BYTES]>);
// SAFETY: bump allocation hands out disjoint ranges through an atomic cursor.
unsafe impl Sync for Arena {}
pub(crate) static ARENA: Arena = Arena(core::cell::UnsafeCell::new([0; ARENA_BYTES]));
pub(crate) static ARENA_USED: AtomicUsize = AtomicUsize::new(0);

pub(crate) fn arena_alloc(size: usize) -> *mut c_void {
    let size = (size.max(1) + 15) & !15;
    let start = ARENA_USED.fetch_add(size, Ordering::AcqRel);
    if start.saturating_add(size) > ARENA_BYTES {
        return null_mut();
    }
    // Zeroed: the arena is never reused, so calloc is satisfied too.
    unsafe { (ARENA.0.get() as *mut u8).add(start).cast() }
}

pub(crate) fn in_arena(p: *mut c_void) -> bool {
    let base = ARENA.0.get() as usize;
    (p as usize) >= base && (p as usize) < base + ARENA_BYTES
}
