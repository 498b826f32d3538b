//! The functions `memscape.h` declares (weak there, so a program runs unchanged without the
//! shim): a custom allocator declares its pools and reports the blocks it hands out and takes
//! back inside them.
//!
//! Records: a declaration is a pool-name record (kind byte [`KIND_POOL_NAME`], varint pool
//! id, a length byte ≤ [`POOL_NAME_MAX`], the name) followed by a kind-0 record with function
//! [`PROC_POOL`] (address = start, size = length, usable = block size, stack = pool id).
//! A pool allocation is an allocation (kind 1) with function [`FN_POOL_ALLOC`] whose usable
//! field holds the pool id; a pool free is a free (kind 2) with function [`FN_POOL_FREE`]
//! whose size field holds the pool id.

use super::*;

/// Kind byte of a pool-name record (kind 7, function 2: no event has kind 7).
pub(crate) const KIND_POOL_NAME: u8 = 0x17;
/// Longest pool name kept (bytes).
pub(crate) const POOL_NAME_MAX: usize = 31;

static NEXT_POOL: AtomicU32 = AtomicU32::new(1);

/// Declares a pool: `name` (NUL-terminated, first 31 bytes kept), its memory `[start, start +
/// length)`, the size of each block (0: variable). Returns the pool id (> 0) to pass to the
/// other calls, or 0 when not recording.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memscape_shim_pool_declare(
    name: *const c_char,
    start: *const c_void,
    length: usize,
    block_size: usize,
) -> c_int {
    let Some(guard) = Guard::enter() else {
        return 0;
    };
    if !recording() {
        return 0;
    }
    let id = NEXT_POOL.fetch_add(1, Ordering::AcqRel);
    let mut bytes = [0u8; 2 + 5 + POOL_NAME_MAX];
    bytes[0] = KIND_POOL_NAME;
    let mut n = 1 + unsafe { put_varint(bytes.as_mut_ptr().add(1), u64::from(id)) };
    let name = if name.is_null() {
        &b""[..]
    } else {
        unsafe { core::ffi::CStr::from_ptr(name) }.to_bytes()
    };
    let name = &name[..name.len().min(POOL_NAME_MAX)];
    bytes[n] = name.len() as u8;
    bytes[n + 1..n + 1 + name.len()].copy_from_slice(name);
    n += 1 + name.len();
    unsafe { append_record(guard.0, &bytes[..n]) };
    let e = Event {
        seq: SEQ.fetch_add(1, Ordering::AcqRel),
        time_ns: now(),
        address: start as u64,
        size: length as u64,
        usable: block_size as u64,
        stack: id,
        kind: KIND_PROCESS,
        function: PROC_POOL,
    };
    unsafe { record(guard.0, &e) };
    drop(guard);
    id as c_int
}

/// The allocator handed out `size` bytes at `ptr` from pool `pool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memscape_shim_pool_alloc(pool: c_int, ptr: *const c_void, size: usize) {
    let Some(guard) = Guard::enter() else {
        return;
    };
    if pool <= 0 || ptr.is_null() || !recording() {
        return;
    }
    let stack = unsafe { stack_id(guard.0) };
    let e = Event {
        seq: SEQ.fetch_add(1, Ordering::AcqRel),
        time_ns: now(),
        address: ptr as u64,
        size: size as u64,
        usable: pool as u64,
        stack,
        kind: KIND_ALLOC,
        function: FN_POOL_ALLOC,
    };
    unsafe { record(guard.0, &e) };
    drop(guard);
}

/// The allocator took the block at `ptr` back into pool `pool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memscape_shim_pool_free(pool: c_int, ptr: *const c_void) {
    let Some(guard) = Guard::enter() else {
        return;
    };
    if pool <= 0 || ptr.is_null() || !recording() {
        return;
    }
    let stack = unsafe { free_stack_id(guard.0) };
    let e = Event {
        seq: SEQ.fetch_add(1, Ordering::AcqRel),
        time_ns: now(),
        address: ptr as u64,
        size: pool as u64,
        usable: pool as u64,
        stack,
        kind: KIND_FREE,
        function: FN_POOL_FREE,
    };
    unsafe { record(guard.0, &e) };
    drop(guard);
}
