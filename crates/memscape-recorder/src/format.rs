//! File format constants (mirrored in memscape-record's reader) and the encoded records.

use super::*;

pub(crate) const FILE_MAGIC: &[u8; 8] = b"MSCREC01";
/// 6: unrecorded-program records; 5: process and pool records, free stacks; 4: name records;
/// 3: varint-coded events, TSC times with clock pairs, strings at 64 (2: varint-coded events,
/// ns times; 1: fixed 56-byte events).
pub(crate) const FILE_VERSION: u32 = 6;
/// Offset of the executable path and command line in the file header.
pub(crate) const HEADER_STRINGS: usize = 64;
pub(crate) const FILE_HEADER_BYTES: usize = 4096;
pub(crate) const CHUNK_BYTES: usize = 1 << 20;
pub(crate) const CHUNK_HEADER_BYTES: usize = 64;
pub(crate) const CHUNK_MAGIC: u32 = 0x4B48_4352; // "RCHK"
pub(crate) const CHUNK_EVENTS: u32 = 1;
pub(crate) const CHUNK_STACKS: u32 = 2;
pub(crate) const CHUNK_MAPS: u32 = 3;

pub(crate) const KIND_ALLOC: u8 = 1;
pub(crate) const KIND_FREE: u8 = 2;
pub(crate) const KIND_REALLOC_FREE: u8 = 3;
pub(crate) const KIND_REALLOC_ALLOC: u8 = 4;
pub(crate) const KIND_MMAP: u8 = 5;
pub(crate) const KIND_MUNMAP: u8 = 6;

pub(crate) const FN_MALLOC: u8 = 1;
pub(crate) const FN_CALLOC: u8 = 2;
pub(crate) const FN_REALLOC: u8 = 3;
pub(crate) const FN_REALLOCARRAY: u8 = 4;
pub(crate) const FN_FREE: u8 = 5;
pub(crate) const FN_POSIX_MEMALIGN: u8 = 6;
pub(crate) const FN_ALIGNED_ALLOC: u8 = 7;
pub(crate) const FN_MEMALIGN: u8 = 8;
pub(crate) const FN_VALLOC: u8 = 9;
pub(crate) const FN_PVALLOC: u8 = 10;
pub(crate) const FN_MMAP: u8 = 11;
pub(crate) const FN_MUNMAP: u8 = 12;
pub(crate) const FN_POOL_ALLOC: u8 = 13;
pub(crate) const FN_POOL_FREE: u8 = 14;

/// Kind 0: process and pool records (the function field says which). Address: a pid (process
/// records) or a pool id (a pool declaration); size: the value.
pub(crate) const KIND_PROCESS: u8 = 0;
/// `exit`/`_exit`/`_Exit(code)` called by process `address`; size = zigzag(code).
pub(crate) const PROC_EXIT: u8 = 1;
/// The shim's destructor ran (the image is ending; its status comes from whoever reaps it).
pub(crate) const PROC_END: u8 = 2;
/// This process reaped child `address` (`wait*`); size = the raw wait status.
pub(crate) const PROC_REAPED: u8 = 3;
/// Pool alloc (kind 1 = alloc with function 13) and pool free (kind 2 with function 14) are
/// ordinary events; a pool declaration is kind 0, function 4: address = pool id, size = block
/// size, then (in the stacks chunk: see `pools.rs`) its name and range.
pub(crate) const PROC_POOL: u8 = 4;

pub(crate) const MAX_STACK_DEPTH: usize = 256;
pub(crate) const DEFAULT_STACK_DEPTH: usize = 64;
/// Frames per free by default: enough to name the freeing function past `operator delete`
/// and a wrapper or two, and the file of a 6.2 M-event cc1plus recording stays under
/// heaptrack's (4 frames: 0.96× its `.raw.zst`; the allocations' 64: 1.04×). BENCHMARKS.md.
pub(crate) const DEFAULT_FREE_STACK_DEPTH: usize = 4;

/// Events a thread can hold back for its signal handlers (see `ThreadState::pending`).
pub(crate) const PENDING: usize = 32;

/// One event before encoding (records in the file are varint-coded, see [`encode_event`]).
#[derive(Clone, Copy)]
pub(crate) struct Event {
    pub(crate) seq: u64,
    pub(crate) time_ns: u64,
    pub(crate) address: u64,
    pub(crate) size: u64,
    pub(crate) usable: u64,
    pub(crate) stack: u32,
    pub(crate) kind: u8,
    pub(crate) function: u8,
}

impl Event {
    pub(crate) const EMPTY: Event = Event {
        seq: 0,
        time_ns: 0,
        address: 0,
        size: 0,
        usable: 0,
        stack: 0,
        kind: 0,
        function: 0,
    };
}

/// Longest encoded event: the kind byte and six varints of at most 10 bytes.
pub(crate) const MAX_RECORD_BYTES: usize = 1 + 6 * 10;
/// Kind byte flag: size, usable size and stack are all 0 and left out (frees).
pub(crate) const RECORD_BARE: u8 = 0x80;
/// Kind byte of a clock record: (ticks, CLOCK_MONOTONIC ns) pair, in TSC mode.
pub(crate) const KIND_CLOCK: u8 = 7;
/// Kind byte of a thread-name record: a length byte (at most 15) and the name, the thread's
/// `comm` (what `pthread_setname_np` sets). Not an event kind: `KIND_NAME & 7` is 7 as for a
/// clock record, which no event has.
pub(crate) const KIND_NAME: u8 = 0x0F;
/// The longest name record.
pub(crate) const NAME_ROOM: usize = 2 + 15;
/// Kind byte of an unrecorded-program record (kind 7, function 3: no event has kind 7): a
/// process of this recording `exec`s (or `posix_spawn`s) a program the loader will not
/// preload the shim into. Varint pid, a reason byte ([`WHY_STATIC`] …; [`WHY_EXEC_FAILED`]
/// withdraws that pid's last note), varint path length (≤ [`NOTE_PATH_MAX`]), the path.
pub(crate) const KIND_UNRECORDED: u8 = 0x1F;
/// No `PT_INTERP`: a static binary (the loader never runs, so `LD_PRELOAD` is never read).
pub(crate) const WHY_STATIC: u8 = 1;
/// A set-user-ID program whose owner is not the caller's real user: the loader runs it in
/// secure mode (`AT_SECURE`) and ignores `LD_PRELOAD` paths with a slash.
pub(crate) const WHY_SETUID: u8 = 2;
/// The same for set-group-ID.
pub(crate) const WHY_SETGID: u8 = 3;
/// An ELF file of another class (a 32-bit program): the 64-bit shim cannot be loaded into it.
pub(crate) const WHY_CLASS: u8 = 4;
/// The `exec` returned (failed): the pid's previous note did not happen.
pub(crate) const WHY_EXEC_FAILED: u8 = 0;
/// Longest path kept in an unrecorded-program record (longer ones are cut).
pub(crate) const NOTE_PATH_MAX: usize = 1024;
/// Longest record [`append_long_record`] takes.
pub(crate) const LONG_RECORD_MAX: usize = 1 + 5 + 1 + 2 + NOTE_PATH_MAX;
/// Room a record needs: an event, a clock record and a name record before it.
pub(crate) const RECORD_ROOM: usize = MAX_RECORD_BYTES + 1 + 2 * 10 + NAME_ROOM;

#[repr(C)]
pub(crate) struct ChunkHeader {
    pub(crate) magic: u32,
    pub(crate) kind: u32,
    pub(crate) tid: u32,
    pub(crate) _pad: u32,
    /// Payload bytes committed (release-stored after each record is complete).
    pub(crate) used: AtomicU64,
    /// Maps chunks: snapshot number; others 0.
    pub(crate) tag: u64,
}
