//! Programs the recording cannot follow: before a recorded process `exec`s (or
//! `posix_spawn`s) a program, the shim looks at the file the kernel will run. A static binary
//! (no `PT_INTERP`: the loader never runs), a set-user-ID or set-group-ID program that the
//! caller's credentials make secure-mode (`AT_SECURE`: the loader ignores `LD_PRELOAD`) or an
//! ELF file of another class will run without the shim; the shim writes an unrecorded-program
//! record (kind byte [`KIND_UNRECORDED`]) with the pid, the reason and the path, and
//! memscape-record warns about it. An `exec` that returns (fails) withdraws its note.
//!
//! `exec` runs in `vfork` children (dash, glibc's `posix_spawn` before 2.24, …), where the
//! address space is the parent's: everything here is raw syscalls and stack buffers, no
//! allocation, no lock the parent could hold, and the guard is left before the real `exec`
//! (a successful one never returns to drop it). The record then lands in the parent's file
//! (same memory), with the child's pid.

use super::*;

unsafe extern "C" {
    static environ: *const *const c_char;
}

pub(crate) type ExecveFn =
    unsafe extern "C" fn(*const c_char, *const *const c_char, *const *const c_char) -> c_int;
pub(crate) type ExecvFn = unsafe extern "C" fn(*const c_char, *const *const c_char) -> c_int;
pub(crate) type FexecveFn =
    unsafe extern "C" fn(c_int, *const *const c_char, *const *const c_char) -> c_int;
pub(crate) type SpawnFn = unsafe extern "C" fn(
    *mut libc::pid_t,
    *const c_char,
    *const libc::posix_spawn_file_actions_t,
    *const libc::posix_spawnattr_t,
    *const *const c_char,
    *const *const c_char,
) -> c_int;

/// Path buffers: PATH_MAX.
const PATH_BYTES: usize = 4096;
/// Program headers looked at (a static binary has ~10, a dynamic one ~13).
const MAX_PHDRS: usize = 64;
const PT_INTERP: u32 = 3;
const ST_NOSUID: u64 = 2;

/// The kernel's `struct statfs` on 64-bit Linux (the libc crate's hides `f_flags`).
#[repr(C)]
#[derive(Default)]
struct KernelStatfs {
    words: [u64; 7],
    fsid: [i32; 2],
    namelen: u64,
    frsize: u64,
    flags: u64,
    spare: [u64; 4],
}

fn sys(ret: libc::c_long) -> Option<libc::c_long> {
    (ret >= 0).then_some(ret)
}

/// Why the loader will not preload the shim into the program in `fd` (0: it will, or it
/// cannot be told).
unsafe fn reason_of_fd(fd: c_int) -> u8 {
    let mut st: libc::stat = unsafe { core::mem::zeroed() };
    if sys(unsafe { libc::syscall(libc::SYS_fstat, fd, &mut st) }).is_none()
        || st.st_mode & libc::S_IFMT != libc::S_IFREG
    {
        return 0;
    }
    let setuid = st.st_mode & libc::S_ISUID != 0;
    // Set-group-ID without group execute is mandatory locking, not a set-group-ID program.
    let setgid = st.st_mode & libc::S_ISGID != 0 && st.st_mode & libc::S_IXGRP != 0;
    if setuid || setgid {
        // The kernel runs the program in secure mode when its effective ids differ from the
        // caller's real ones (commoncap.c): not on a nosuid mount, not under no_new_privs.
        let mut fs = KernelStatfs::default();
        let nosuid = sys(unsafe { libc::syscall(libc::SYS_fstatfs, fd, &mut fs) })
            .is_some_and(|_| fs.flags & ST_NOSUID != 0);
        let no_new_privs =
            unsafe { libc::syscall(libc::SYS_prctl, libc::PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) } == 1;
        if !nosuid && !no_new_privs {
            let uid = unsafe { libc::syscall(libc::SYS_getuid) } as u32;
            let gid = unsafe { libc::syscall(libc::SYS_getgid) } as u32;
            if setuid && st.st_uid != uid {
                return WHY_SETUID;
            }
            if setgid && st.st_gid != gid {
                return WHY_SETGID;
            }
        }
    }
    let mut ehdr = [0u8; 64];
    let n = unsafe { libc::syscall(libc::SYS_pread64, fd, ehdr.as_mut_ptr(), ehdr.len(), 0) };
    if n < 20 || ehdr[..4] != *b"\x7fELF" {
        // A script (its interpreter is preloaded as usual) or something exec will refuse.
        return 0;
    }
    let native_class = if cfg!(target_pointer_width = "64") {
        2
    } else {
        1
    };
    if ehdr[4] != native_class {
        return WHY_CLASS;
    }
    if n < 64 || ehdr[5] != 1 || native_class != 2 {
        return 0; // Big-endian or 32-bit: not looked into.
    }
    let u16_at = |at: usize| u16::from_le_bytes([ehdr[at], ehdr[at + 1]]);
    let mut phoff = [0u8; 8];
    phoff.copy_from_slice(&ehdr[32..40]);
    let phoff = u64::from_le_bytes(phoff);
    let (phentsize, phnum) = (usize::from(u16_at(54)), usize::from(u16_at(56)));
    if phentsize < 4 || phnum == 0 || phnum > MAX_PHDRS || phentsize > 64 {
        return 0;
    }
    let mut phdrs = [0u8; MAX_PHDRS * 64];
    let len = phentsize * phnum;
    let n = unsafe { libc::syscall(libc::SYS_pread64, fd, phdrs.as_mut_ptr(), len, phoff) };
    if n != len as libc::c_long {
        return 0;
    }
    let interp = phdrs[..len]
        .chunks_exact(phentsize)
        .any(|p| u32::from_le_bytes([p[0], p[1], p[2], p[3]]) == PT_INTERP);
    if interp { 0 } else { WHY_STATIC }
}

/// [`reason_of_fd`] of the file at `path`.
unsafe fn reason_of_path(path: *const c_char) -> u8 {
    if path.is_null() {
        return 0;
    }
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat,
            libc::AT_FDCWD,
            path,
            libc::O_RDONLY | libc::O_CLOEXEC,
        )
    };
    let Some(fd) = sys(fd) else {
        return 0; // Execute-only, or missing: exec decides.
    };
    let why = unsafe { reason_of_fd(fd as c_int) };
    unsafe { libc::syscall(libc::SYS_close, fd) };
    // The dynamic loader run as a program (`ld.so ./prog`) has no PT_INTERP but preloads.
    if why == WHY_STATIC && is_loader(unsafe { core::ffi::CStr::from_ptr(path) }.to_bytes()) {
        return 0;
    }
    why
}

fn is_loader(path: &[u8]) -> bool {
    let base = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
    base.starts_with(b"ld-") || base.starts_with(b"ld.so")
}

/// Where `execvp` would find `file`: itself when it has a slash, else the first executable
/// regular file along `$PATH` (default `/bin:/usr/bin`, an empty entry is the current
/// directory). Written into `buf` NUL-terminated; `None` when nothing is found.
unsafe fn resolve(file: *const c_char, buf: &mut [u8; PATH_BYTES]) -> Option<*const c_char> {
    if file.is_null() {
        return None;
    }
    let name = unsafe { core::ffi::CStr::from_ptr(file) }.to_bytes();
    if name.is_empty() {
        return None;
    }
    if name.contains(&b'/') {
        return Some(file);
    }
    let path = unsafe { libc::getenv(c"PATH".as_ptr()) };
    let path = if path.is_null() {
        &b"/bin:/usr/bin"[..]
    } else {
        unsafe { core::ffi::CStr::from_ptr(path) }.to_bytes()
    };
    for dir in path.split(|&b| b == b':') {
        let dir = if dir.is_empty() { &b"."[..] } else { dir };
        let len = dir.len() + 1 + name.len();
        if len + 1 > buf.len() {
            continue;
        }
        buf[..dir.len()].copy_from_slice(dir);
        buf[dir.len()] = b'/';
        buf[dir.len() + 1..len].copy_from_slice(name);
        buf[len] = 0;
        let candidate = buf.as_ptr().cast::<c_char>();
        let mut st: libc::stat = unsafe { core::mem::zeroed() };
        let ok = unsafe {
            libc::syscall(
                libc::SYS_faccessat,
                libc::AT_FDCWD,
                candidate,
                libc::X_OK,
                0,
            ) == 0
                && libc::syscall(libc::SYS_newfstatat, libc::AT_FDCWD, candidate, &mut st, 0) == 0
        };
        if ok && st.st_mode & libc::S_IFMT == libc::S_IFREG {
            return Some(candidate);
        }
    }
    None
}

/// Writes an unrecorded-program record for `pid`, if recording.
unsafe fn note(pid: u32, why: u8, path: &[u8]) {
    if STATE.load(Ordering::Acquire) != 2 {
        return;
    }
    let Some(guard) = Guard::enter() else {
        return;
    };
    let path = &path[..path.len().min(NOTE_PATH_MAX)];
    let mut bytes = [0u8; LONG_RECORD_MAX];
    bytes[0] = KIND_UNRECORDED;
    let mut n = 1 + unsafe { put_varint(bytes.as_mut_ptr().add(1), u64::from(pid)) };
    bytes[n] = why;
    n += 1;
    n += unsafe { put_varint(bytes.as_mut_ptr().add(n), path.len() as u64) };
    bytes[n..n + path.len()].copy_from_slice(path);
    n += path.len();
    unsafe { append_long_record(guard.0, &bytes[..n]) };
    // Left before the exec: a successful one never returns here.
    drop(guard);
}

fn c_bytes<'a>(p: *const c_char) -> &'a [u8] {
    if p.is_null() {
        &[]
    } else {
        unsafe { core::ffi::CStr::from_ptr(p) }.to_bytes()
    }
}

/// Notes `path` if it will run unrecorded; returns whether a note was written.
unsafe fn before_exec(path: *const c_char) -> bool {
    if STATE.load(Ordering::Acquire) != 2 {
        return false;
    }
    let why = unsafe { reason_of_path(path) };
    if why == 0 {
        return false;
    }
    unsafe { note(own_pid(), why, c_bytes(path)) };
    true
}

/// The exec returned: it failed, so the program never ran.
unsafe fn exec_failed(noted: bool) {
    if noted {
        let errno = unsafe { *libc::__errno_location() };
        unsafe { note(own_pid(), WHY_EXEC_FAILED, &[]) };
        unsafe { *libc::__errno_location() = errno };
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn execve(
    path: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    let noted = unsafe { before_exec(path) };
    let r = match real!(REAL_EXECVE, ExecveFn) {
        Some(f) => unsafe { f(path, argv, envp) },
        None => unsafe { libc::syscall(libc::SYS_execve, path, argv, envp) as c_int },
    };
    unsafe { exec_failed(noted) };
    r
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn execv(path: *const c_char, argv: *const *const c_char) -> c_int {
    let noted = unsafe { before_exec(path) };
    let r = match real!(REAL_EXECV, ExecvFn) {
        Some(f) => unsafe { f(path, argv) },
        None => unsafe { libc::syscall(libc::SYS_execve, path, argv, environ) as c_int },
    };
    unsafe { exec_failed(noted) };
    r
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn execvp(file: *const c_char, argv: *const *const c_char) -> c_int {
    let mut buf = [0u8; PATH_BYTES];
    let noted = match unsafe { resolve(file, &mut buf) } {
        Some(path) => unsafe { before_exec(path) },
        None => false,
    };
    let r = match real!(REAL_EXECVP, ExecvFn) {
        Some(f) => unsafe { f(file, argv) },
        None => {
            unsafe { *libc::__errno_location() = libc::ENOSYS };
            -1
        }
    };
    unsafe { exec_failed(noted) };
    r
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn execvpe(
    file: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    let mut buf = [0u8; PATH_BYTES];
    let noted = match unsafe { resolve(file, &mut buf) } {
        Some(path) => unsafe { before_exec(path) },
        None => false,
    };
    let r = match real!(REAL_EXECVPE, ExecveFn) {
        Some(f) => unsafe { f(file, argv, envp) },
        None => {
            unsafe { *libc::__errno_location() = libc::ENOSYS };
            -1
        }
    };
    unsafe { exec_failed(noted) };
    r
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fexecve(
    fd: c_int,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    let mut noted = false;
    if STATE.load(Ordering::Acquire) == 2 {
        let why = unsafe { reason_of_fd(fd) };
        if why != 0 {
            // The file's name, for the message.
            let mut link = *b"/proc/self/fd/\0\0\0\0\0\0\0\0\0\0\0";
            let mut n = 14;
            let mut digits = [0u8; 10];
            let mut d = 0;
            let mut v = fd.max(0) as u32;
            loop {
                digits[d] = b'0' + (v % 10) as u8;
                d += 1;
                v /= 10;
                if v == 0 {
                    break;
                }
            }
            while d > 0 {
                d -= 1;
                link[n] = digits[d];
                n += 1;
            }
            let mut buf = [0u8; PATH_BYTES];
            let len = unsafe {
                libc::syscall(
                    libc::SYS_readlinkat,
                    libc::AT_FDCWD,
                    link.as_ptr(),
                    buf.as_mut_ptr(),
                    buf.len(),
                )
            };
            let name = if len > 0 {
                &buf[..len as usize]
            } else {
                &link[..n]
            };
            unsafe { note(own_pid(), why, name) };
            noted = true;
        }
    }
    let r = match real!(REAL_FEXECVE, FexecveFn) {
        Some(f) => unsafe { f(fd, argv, envp) },
        None => {
            unsafe { *libc::__errno_location() = libc::ENOSYS };
            -1
        }
    };
    unsafe { exec_failed(noted) };
    r
}

/// `posix_spawn` and `posix_spawnp`: the check runs in the caller, the note after a
/// successful spawn (the child's pid is known then, and the child has exec'd: glibc reports
/// an exec failure as the call's error).
unsafe fn spawn(
    search: bool,
    pid: *mut libc::pid_t,
    file: *const c_char,
    actions: *const libc::posix_spawn_file_actions_t,
    attr: *const libc::posix_spawnattr_t,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    let mut buf = [0u8; PATH_BYTES];
    let mut why = 0;
    let mut path = file;
    if STATE.load(Ordering::Acquire) == 2 {
        let resolved = if search {
            unsafe { resolve(file, &mut buf) }
        } else {
            Some(file)
        };
        if let Some(p) = resolved {
            why = unsafe { reason_of_path(p) };
            path = p;
        }
    }
    let mut local: libc::pid_t = 0;
    let out = if pid.is_null() { &mut local } else { pid };
    let slot = if search {
        &REAL_POSIX_SPAWNP
    } else {
        &REAL_POSIX_SPAWN
    };
    let r = match real_spawn(slot) {
        Some(f) => unsafe { f(out, file, actions, attr, argv, envp) },
        None => libc::ENOSYS,
    };
    if r == 0 && why != 0 {
        unsafe { note(*out as u32, why, c_bytes(path)) };
    }
    r
}

fn real_spawn(slot: &AtomicUsize) -> Option<SpawnFn> {
    let mut f = slot.load(Ordering::Acquire);
    if f == 0 && RESOLVE_STATE.load(Ordering::Acquire) != 1 {
        unsafe { resolve_all() };
        f = slot.load(Ordering::Acquire);
    }
    // SAFETY: the slot holds the address dlsym returned for posix_spawn or posix_spawnp.
    (f != 0).then(|| unsafe { core::mem::transmute::<usize, SpawnFn>(f) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn posix_spawn(
    pid: *mut libc::pid_t,
    path: *const c_char,
    actions: *const libc::posix_spawn_file_actions_t,
    attr: *const libc::posix_spawnattr_t,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    unsafe { spawn(false, pid, path, actions, attr, argv, envp) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn posix_spawnp(
    pid: *mut libc::pid_t,
    file: *const c_char,
    actions: *const libc::posix_spawn_file_actions_t,
    attr: *const libc::posix_spawnattr_t,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    unsafe { spawn(true, pid, file, actions, attr, argv, envp) }
}

// ---------------------------------------------------------------------------------------------
// execl, execlp, execle: C-variadic, which stable Rust cannot define. On x86-64 a naked
// function spills the five argument registers after the path next to each other and hands
// them, with the address of the caller's stack arguments, to `exec_list`, which collects the
// list up to its NULL (the System V ABI passes variadic pointer arguments as it passes fixed
// ones: registers first, then the stack in order). glibc's own `execl*` call its internal
// `execve`, past the interposed one: without these, `execl` of a static binary would go
// unnoticed. Elsewhere they are not interposed (README).

/// Most arguments `execl*` take here (glibc has no limit; a list this long in source is not
/// seen in practice): more fail with E2BIG.
#[cfg(target_arch = "x86_64")]
const MAX_LIST_ARGS: usize = 1024;

#[cfg(target_arch = "x86_64")]
const LIST_EXECL: c_int = 0;
#[cfg(target_arch = "x86_64")]
const LIST_EXECLP: c_int = 1;
#[cfg(target_arch = "x86_64")]
const LIST_EXECLE: c_int = 2;

/// `regs`: the five register arguments after the path; `stack`: the caller's stack arguments.
#[cfg(target_arch = "x86_64")]
unsafe extern "C" fn exec_list(
    path: *const c_char,
    regs: *const *const c_char,
    stack: *const *const c_char,
    kind: c_int,
) -> c_int {
    let arg = |i: usize| unsafe {
        if i < 5 {
            *regs.add(i)
        } else {
            *stack.add(i - 5)
        }
    };
    let mut argv = [core::ptr::null::<c_char>(); MAX_LIST_ARGS + 1];
    let mut n = 0;
    loop {
        let a = arg(n);
        if a.is_null() {
            break;
        }
        if n == MAX_LIST_ARGS {
            unsafe { *libc::__errno_location() = libc::E2BIG };
            return -1;
        }
        argv[n] = a;
        n += 1;
    }
    let argv = argv.as_ptr();
    match kind {
        LIST_EXECLP => unsafe { execvp(path, argv) },
        LIST_EXECLE => unsafe { execve(path, argv, arg(n + 1).cast()) },
        _ => unsafe { execve(path, argv, environ) },
    }
}

macro_rules! exec_list_entry {
    ($name:ident, $kind:expr) => {
        #[cfg(target_arch = "x86_64")]
        #[unsafe(no_mangle)]
        #[unsafe(naked)]
        pub unsafe extern "C" fn $name(path: *const c_char, arg: *const c_char) -> c_int {
            core::arch::naked_asm!(
                "push rbp",
                "mov rbp, rsp",
                "sub rsp, 48",
                "mov [rsp], rsi",
                "mov [rsp + 8], rdx",
                "mov [rsp + 16], rcx",
                "mov [rsp + 24], r8",
                "mov [rsp + 32], r9",
                "mov rsi, rsp",
                "lea rdx, [rbp + 16]",
                "mov ecx, {kind}",
                "call {list}",
                "leave",
                "ret",
                kind = const $kind,
                list = sym exec_list,
            )
        }
    };
}

exec_list_entry!(execl, LIST_EXECL);
exec_list_entry!(execlp, LIST_EXECLP);
exec_list_entry!(execle, LIST_EXECLE);
