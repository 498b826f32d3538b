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

#[macro_use]
mod real;
#[cfg(target_arch = "x86_64")]
mod cfi;
mod exec;
mod format;
mod interpose;
mod lifecycle;
mod pools;
mod stacks;
mod start;
mod thread;
mod writer;

use format::*;
use interpose::*;
use lifecycle::own_pid;
use real::*;
use stacks::*;
use start::*;
use thread::*;
use writer::*;
