//! How process images end: `exit`/`_exit`/`_Exit` (the status the program asked for), the
//! shim's destructor (the image is ending), and the `wait` family (a parent reaping a child
//! learns how it ended, signals included). Each is a kind-0 record in the calling thread's
//! events chunk; memscape-record puts them together into the process table.

use super::*;

/// Writes a process record (kind 0) of this thread, if recording.
fn record_process(function: u8, pid: u32, value: u64) {
    let Some(guard) = Guard::enter() else {
        return;
    };
    if STATE.load(Ordering::Acquire) != 2 {
        return;
    }
    let e = Event {
        seq: SEQ.fetch_add(1, Ordering::AcqRel),
        time_ns: now(),
        address: u64::from(pid),
        size: value,
        usable: value,
        stack: 0,
        kind: KIND_PROCESS,
        function,
    };
    unsafe { record(guard.0, &e) };
    drop(guard);
}

/// The calling process's pid from the kernel (in a `vfork` child, the child's: the shim's
/// state there is the parent's, so the reader drops records whose pid is not the file's).
pub(crate) fn own_pid() -> u32 {
    (unsafe { libc::syscall(libc::SYS_getpid) }) as u32
}

fn exit_record(code: c_int) {
    record_process(PROC_EXIT, own_pid(), zigzag(i64::from(code) as u64));
}

/// A child reaped with `status` (only exits and deaths by signal, not stops).
fn reaped(pid: libc::pid_t, status: c_int) {
    if pid > 0 && (libc::WIFEXITED(status) || libc::WIFSIGNALED(status)) {
        record_process(PROC_REAPED, pid as u32, status as u32 as u64);
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn exit(code: c_int) -> ! {
    exit_record(code);
    match real!(REAL_EXIT, ExitFn) {
        Some(f) => unsafe { f(code) },
        None => unsafe { libc::_exit(code) },
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn _exit(code: c_int) -> ! {
    exit_record(code);
    match real!(REAL__EXIT, ExitFn) {
        Some(f) => unsafe { f(code) },
        None => loop {
            unsafe { libc::syscall(libc::SYS_exit_group, code) };
        },
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn _Exit(code: c_int) -> ! {
    exit_record(code);
    match real!(REAL__EXIT2, ExitFn) {
        Some(f) => unsafe { f(code) },
        None => loop {
            unsafe { libc::syscall(libc::SYS_exit_group, code) };
        },
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn waitpid(
    pid: libc::pid_t,
    status: *mut c_int,
    options: c_int,
) -> libc::pid_t {
    let mut local: c_int = 0;
    let r = match real!(REAL_WAITPID, WaitpidFn) {
        Some(f) => unsafe { f(pid, &mut local, options) },
        None => -1,
    };
    if r > 0 {
        reaped(r, local);
    }
    if !status.is_null() {
        unsafe { *status = local };
    }
    r
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn wait(status: *mut c_int) -> libc::pid_t {
    unsafe { waitpid(-1, status, 0) }
}

/// dash's `wait` builtin and job control reap through `wait3` (glibc's calls `wait4` inside,
/// past the interposed one).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wait3(
    status: *mut c_int,
    options: c_int,
    usage: *mut libc::rusage,
) -> libc::pid_t {
    unsafe { wait4(-1, status, options, usage) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn wait4(
    pid: libc::pid_t,
    status: *mut c_int,
    options: c_int,
    usage: *mut libc::rusage,
) -> libc::pid_t {
    let mut local: c_int = 0;
    let r = match real!(REAL_WAIT4, Wait4Fn) {
        Some(f) => unsafe { f(pid, &mut local, options, usage) },
        None => -1,
    };
    if r > 0 {
        reaped(r, local);
    }
    if !status.is_null() {
        unsafe { *status = local };
    }
    r
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn waitid(
    idtype: libc::idtype_t,
    id: libc::id_t,
    info: *mut libc::siginfo_t,
    options: c_int,
) -> c_int {
    let r = match real!(REAL_WAITID, WaitidFn) {
        Some(f) => unsafe { f(idtype, id, info, options) },
        None => -1,
    };
    // WNOWAIT leaves the child to be reaped later: recorded then.
    if r == 0 && !info.is_null() && options & libc::WNOWAIT == 0 {
        let info = unsafe { &*info };
        let pid = unsafe { info.si_pid() };
        let value = unsafe { info.si_status() };
        // Back to a wait status: exit code in bits 8–15, else the signal.
        let status = match info.si_code {
            libc::CLD_EXITED => (value & 0xff) << 8,
            libc::CLD_KILLED | libc::CLD_DUMPED => value & 0x7f,
            _ => return r,
        };
        reaped(pid, status);
    }
    r
}

#[used]
#[unsafe(link_section = ".fini_array")]
static FINI: extern "C" fn() = fini_at_exit;

/// The image is ending (return from `main`, `exit`): its end time.
extern "C" fn fini_at_exit() {
    record_process(PROC_END, own_pid(), 0);
}
