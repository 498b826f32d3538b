//! A faster x86_64 stack walk that gives libunwind's `unw_backtrace` answer exactly.
//!
//! Why: libunwind's cached walk was 21 % of a recorded cc1plus run's samples, most of it one
//! cache miss per frame probing its per-thread hash table of 48-byte entries. Here each thread
//! has a direct-mapped table from an address to one packed rule (the CFA is rsp or rbp plus N,
//! the return address at CFA − 8, rbp saved at CFA + M or unchanged), filled on a miss from
//! the module's `.eh_frame_hdr`/`.eh_frame` (found with `dl_iterate_phdr`) by a small CFI
//! interpreter of the common opcodes.
//!
//! Exactness: libunwind's fast trace (`tdep_trace`, libunwind 1.6) records each return
//! address as it is and looks its rule up one byte before it, takes the same "standard frame"
//! rules, ends at a frame whose return address or rbp is undefined, and stops at an address
//! below 0x4000. Any frame whose rule is not of that simple form (expressions, signal frames,
//! PLT stubs, no unwind info), and any read that would leave the thread's stack, makes the
//! caller run libunwind for the whole walk instead. `MEMSCAPE_UNWINDER=compare` walks both
//! ways and reports every difference (`tests/unwinder.rs` in memscape-record).

use super::*;

const RBP: u64 = 6;
const RSP: u64 = 7;
const RA: u64 = 16;

/// Rule kinds in a packed rule's low two bits (0: empty slot).
const KIND_STANDARD: u64 = 1;
/// The outermost frame: its return address or rbp is undefined; the walk ends here.
const KIND_LAST: u64 = 2;
/// Not of the simple form: libunwind walks.
const KIND_COMPLEX: u64 = 3;
const CFA_RSP: u64 = 1 << 2;
const RBP_SAVED: u64 = 1 << 3;

/// Slots of a thread's rule table (16 bytes each, mapped lazily: only touched pages cost).
const SLOTS: usize = 1 << 16;

#[repr(C)]
#[derive(Clone, Copy)]
struct Module {
    lo: u64,
    hi: u64,
    /// Address of `.eh_frame_hdr`; 0: none.
    hdr: u64,
}

/// A thread's unwind state, in one anonymous mapping.
#[repr(C)]
struct Cache {
    /// The mapping this cache lies in (unmapped at thread exit).
    mapping: u64,
    stack_lo: u64,
    stack_hi: u64,
    /// (address + 1, packed rule); address + 1 so that 0 marks an empty slot.
    slots: [[u64; 2]; SLOTS],
    /// The last two allocation walks' steps (one is the last walk's, the other is written by
    /// the next): see [`fast_backtrace`].
    /// Per kind of walk (frees' short ones, allocations' long ones).
    memo: [[[Step; MEMO]; 2]; 2],
    memo_len: [[usize; 2]; 2],
    memo_now: [usize; 2],
    /// [`UNLOADS`] when the table was last valid.
    unloads: u64,
    /// Recent stacks' ids by their hash, direct-mapped ([`known_stack_id`]): the shared
    /// table's probe missed the cache on most events (70 % of `walk_and_id`'s samples).
    ids: [[u64; 2]; ID_SLOTS],
    /// [`STACK_IDS_EPOCH`] when `ids` was last valid.
    ids_epoch: u64,
}

/// Slots of a thread's recent stack ids (16 bytes each).
const ID_SLOTS: usize = 1 << 14;

/// The id of the stack with this hash when this thread has it among its recent stacks. Ids
/// are the shared table's (or those it could no longer keep: a full table's ids are still
/// the stacks' written with them), so the answer is the table's.
pub(crate) unsafe fn known_stack_id(t: &ThreadState, hash: u64) -> Option<u32> {
    let cache = t.unwind_cache.get().cast::<Cache>();
    if cache.is_null() {
        return None;
    }
    let c = unsafe { &mut *cache };
    let epoch = STACK_IDS_EPOCH.load(Ordering::Acquire);
    if c.ids_epoch != epoch {
        c.ids.fill([0, 0]);
        c.ids_epoch = epoch;
        return None;
    }
    let slot = &c.ids[id_slot_of(hash)];
    (slot[0] == hash).then_some(slot[1] as u32)
}

/// Remembers a stack's id (0, no stack written, is not).
pub(crate) unsafe fn remember_stack_id(t: &ThreadState, hash: u64, id: u32) {
    let cache = t.unwind_cache.get().cast::<Cache>();
    if cache.is_null() || id == 0 {
        return;
    }
    let c = unsafe { &mut *cache };
    if c.ids_epoch == STACK_IDS_EPOCH.load(Ordering::Acquire) {
        c.ids[id_slot_of(hash)] = [hash, u64::from(id)];
    }
}

fn id_slot_of(hash: u64) -> usize {
    // The hash is already mixed; its high bits index (the low bit is always set).
    (hash >> (64 - ID_SLOTS.trailing_zeros())) as usize
}

/// `dlclose` calls that unloaded something, so far: a thread's table and memos filled before
/// the last one are cleared before its next walk (a rule is a function of the code at an
/// address, and a module loaded later may sit where the unloaded one was).
static UNLOADS: AtomicU64 = AtomicU64::new(0);

/// Called after a successful `dlclose`.
pub(crate) fn modules_unloaded() {
    UNLOADS.fetch_add(1, Ordering::Release);
}

/// One step of a walk: the state it started from and the stack words it read.
#[repr(C)]
#[derive(Clone, Copy)]
struct Step {
    key: u64,
    sp: u64,
    bp: u64,
    ra_at: u64,
    ra: u64,
    /// Where the saved rbp was read (0: not saved in this frame) and its value.
    rbp_at: u64,
    rbp: u64,
    /// The frame's CFA is rbp-based (its rbp at `bp` is used).
    rbp_based: bool,
}

/// Whether the walk on from step `j` of `memo` (`len` steps) uses the rbp of step `j`'s state:
/// a frame's CFA based on rbp before a frame reloads rbp from the stack (or the walk's end).
/// Code built without frame pointers leaves any value in rbp, different from one allocation
/// to the next; where it is not used, the states match without it.
unsafe fn rbp_used(memo: *const Step, j: usize, len: usize) -> bool {
    for i in j..len {
        let m = unsafe { &*memo.add(i) };
        if m.rbp_based {
            return true;
        }
        if m.rbp_at != 0 {
            return false;
        }
    }
    true
}

/// Steps kept per walk: every frame and the state after the last.
const MEMO: usize = MAX_STACK_DEPTH + 9;
/// Walks longer than this are allocations' (their own memo), shorter ones frees'.
const LONG_WALK: usize = 16;

const CACHE_BYTES: usize = core::mem::size_of::<Cache>();
const HUGE_PAGE: usize = 2 << 20;
/// The mapping: room for a 2 MiB-aligned cache (one huge page: with 4 KiB pages nearly every
/// probe of the 1 MiB table was a TLB miss).
const MAPPING_BYTES: usize = 2 * HUGE_PAGE;
/// Threads whose cache asks for a huge page (2 MiB of memory each): the first few.
const HUGE_THREADS: u32 = 8;
static HUGE_GIVEN: AtomicU32 = AtomicU32::new(0);

/// The pthread key whose destructor unmaps a thread's cache (`u32::MAX`: none).
static CACHE_KEY: AtomicU32 = AtomicU32::new(u32::MAX);

/// Creates the key (start-up, once).
pub(crate) unsafe fn init_cfi() {
    let mut key: libc::pthread_key_t = 0;
    if unsafe { libc::pthread_key_create(&mut key, Some(release_cache)) } == 0 {
        CACHE_KEY.store(key, Ordering::Release);
    }
}

extern "C" fn release_cache(cache: *mut c_void) {
    if let Some(t) = thread_state() {
        // Later walks of this exiting thread (other destructors' frees) go to libunwind.
        t.unwind_cache.set(null_mut());
        t.unwind_ready.set(2);
    }
    let mapping = unsafe { (*cache.cast::<Cache>()).mapping };
    unsafe { libc::munmap(mapping as *mut c_void, MAPPING_BYTES) };
}

/// Sets up this thread's cache and stack bounds; runs marked as the shim's own work
/// (`pthread_getattr_np` allocates). Leaves the thread on libunwind when anything fails.
pub(crate) unsafe fn setup_thread(t: &ThreadState) {
    if t.unwind_ready.get() != 0 {
        return;
    }
    t.unwind_ready.set(2);
    let key = CACHE_KEY.load(Ordering::Acquire);
    if key == u32::MAX {
        return;
    }
    let mut attr: libc::pthread_attr_t = unsafe { core::mem::zeroed() };
    if unsafe { libc::pthread_getattr_np(libc::pthread_self(), &mut attr) } != 0 {
        return;
    }
    let mut addr = null_mut::<c_void>();
    let mut size = 0usize;
    let got = unsafe { libc::pthread_attr_getstack(&attr, &mut addr, &mut size) };
    unsafe { libc::pthread_attr_destroy(&mut attr) };
    if got != 0 || size == 0 {
        return;
    }
    const _: () = assert!(CACHE_BYTES <= HUGE_PAGE);
    let mapping = unsafe {
        sys_mmap(
            MAPPING_BYTES,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if mapping.is_null() {
        return;
    }
    let cache = unsafe { mapping.add((HUGE_PAGE - mapping as usize % HUGE_PAGE) % HUGE_PAGE) };
    if HUGE_GIVEN.fetch_add(1, Ordering::Relaxed) < HUGE_THREADS {
        unsafe { libc::madvise(cache.cast(), HUGE_PAGE, libc::MADV_HUGEPAGE) };
    }
    let c = cache.cast::<Cache>();
    unsafe {
        (*c).mapping = mapping as u64;
        (*c).stack_lo = addr as u64;
        (*c).stack_hi = addr as u64 + size as u64;
    }
    if unsafe { libc::pthread_setspecific(key, cache.cast()) } != 0 {
        unsafe { libc::munmap(mapping.cast(), MAPPING_BYTES) };
        return;
    }
    t.unwind_cache.set(cache);
    t.unwind_ready.set(1);
}

fn slot_of(key: u64) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOTS.trailing_zeros())) as usize
}

/// Writes the caller's stack into `out` as `unw_backtrace` would (return addresses, this
/// function's own frame left out, at most `out.len()`); `None`: libunwind must walk.
#[inline(never)]
pub(crate) unsafe fn fast_backtrace(
    t: &ThreadState,
    out: &mut [core::mem::MaybeUninit<u64>],
    limit: usize,
) -> Option<usize> {
    let cache = t.unwind_cache.get().cast::<Cache>();
    if cache.is_null() {
        return None;
    }
    let (mut ip, mut sp, mut bp): (u64, u64, u64);
    // SAFETY: reads three registers; the row of `ip` describes this very point (no push
    // between the `lea` and the `mov`s).
    unsafe {
        core::arch::asm!(
            "lea {ip}, [rip]",
            "mov {sp}, rsp",
            "mov {bp}, rbp",
            ip = out(reg) ip,
            sp = out(reg) sp,
            bp = out(reg) bp,
            options(nomem, nostack, preserves_flags),
        );
    }
    let c = unsafe { &mut *cache };
    let unloads = UNLOADS.load(Ordering::Acquire);
    if c.unloads != unloads {
        c.slots.fill([0, 0]);
        c.memo_len = [[0; 2]; 2];
        c.unloads = unloads;
    }
    let (lo, hi) = (c.stack_lo, c.stack_hi);
    if sp < lo || sp >= hi {
        return None; // a signal handler on an alternate stack
    }
    let read = |at: u64| -> Option<u64> {
        if at < lo || at > hi - 8 {
            return None;
        }
        // SAFETY: inside this thread's stack.
        Some(unsafe { core::ptr::read(at as *const u64) })
    };
    // The memo: consecutive allocations share most of their callers. Where this walk reaches
    // a state (address, rsp, rbp) the last allocation walk also passed through, the rest of
    // that walk is this one's as long as the stack words it read still hold what it read
    // there: those words are compared (independent loads) instead of walked (a chain of
    // dependent loads and table probes per frame). Exact: a walk is a function of its state,
    // the rules of its addresses and the words it reads.
    let class = usize::from(out.len() > LONG_WALK);
    let old = c.memo_now[class];
    let old_len = c.memo_len[class][old];
    let memo_old: *const Step = c.memo[class][old].as_ptr();
    let memo_new: *mut Step = c.memo[class][old ^ 1].as_mut_ptr();
    let mut matching = old_len > 0;
    let mut j = 0;
    let mut n = 0;
    // The walk stops after `limit` frames past the shim's own: the caller keeps no more
    // (libunwind's walk goes on to `out.len()`; the frames kept are the same).
    let (shim_lo, shim_hi) = (
        SHIM_TEXT_LO.load(Ordering::Relaxed) as u64,
        SHIM_TEXT_HI.load(Ordering::Relaxed) as u64,
    );
    // The frame count at which the walk has its `limit` frames: known at the first frame
    // outside the shim.
    let mut stop_at = usize::MAX;
    let mut enough = |n: usize, ra: u64| {
        if stop_at == usize::MAX && (ra < shim_lo || ra >= shim_hi) {
            stop_at = n.saturating_add(limit);
        }
        n + 1 >= stop_at
    };
    let mut done = false;
    // The shim's own frames (this function's and its callers' up to the interposed one's) run
    // the same code wherever the program called in: when the last walk started at another
    // depth, its first steps are this walk's moved by the difference (their CFAs are
    // rsp-based), return addresses compared, saved rbp read, no rule looked up. A third of the
    // walked steps were these.
    if old_len > 0 && unsafe { (*memo_old).key } == ip && unsafe { (*memo_old).sp } != sp {
        let delta = sp.wrapping_sub(unsafe { (*memo_old).sp });
        let mut k = 0;
        while k < old_len && n < out.len() && !done {
            let m = unsafe { &*memo_old.add(k) };
            if m.key < shim_lo || m.key >= shim_hi || m.rbp_based {
                break;
            }
            let ra_at = m.ra_at.wrapping_add(delta);
            if read(ra_at) != Some(m.ra) {
                break;
            }
            let (rbp_at, next_bp) = if m.rbp_at == 0 {
                (0, bp)
            } else {
                let at = m.rbp_at.wrapping_add(delta);
                match read(at) {
                    Some(v) => (at, v),
                    None => break,
                }
            };
            out[n].write(m.ra);
            let step = Step {
                key: ip,
                sp,
                bp,
                ra_at,
                ra: m.ra,
                rbp_at,
                rbp: next_bp,
                rbp_based: false,
            };
            unsafe { *memo_new.add(n) = step };
            done = enough(n, m.ra);
            n += 1;
            k += 1;
            // SAFETY: k <= old_len: a step or the old walk's end state.
            let next = unsafe { &*memo_old.add(k) };
            (ip, sp, bp) = (next.key, next.sp.wrapping_add(delta), next_bp);
        }
    }
    while n < out.len() && !done {
        if matching {
            // SAFETY: j < old_len < MEMO.
            while j < old_len && unsafe { (*memo_old.add(j)).sp } < sp {
                j += 1;
            }
            let m = unsafe { &*memo_old.add(j) };
            if j == old_len || m.sp > sp {
                matching = j < old_len;
            } else if m.key == ip && (m.bp == bp || !unsafe { rbp_used(memo_old, j, old_len) }) {
                let mut k = j;
                // This walk's rbp: the old steps' until a frame reloads it (equal wherever
                // a CFA uses it: `rbp_used`).
                let mut cur_bp = bp;
                while k < old_len && n < out.len() {
                    let m = unsafe { &*memo_old.add(k) };
                    // SAFETY: read inside this thread's stack (bounds checked when recorded).
                    let word = |at: u64| unsafe { core::ptr::read(at as *const u64) };
                    if word(m.ra_at) != m.ra {
                        break; // another caller: walked from this state
                    }
                    // A saved rbp may differ (code without frame pointers keeps any value
                    // there): the step is the same, the next state's rbp is the word read.
                    let mut differs = false;
                    let next_bp = if m.rbp_at != 0 {
                        let saved = word(m.rbp_at);
                        differs = saved != m.rbp;
                        saved
                    } else {
                        cur_bp
                    };
                    out[n].write(m.ra);
                    unsafe {
                        *memo_new.add(n) = Step {
                            bp: cur_bp,
                            rbp: next_bp,
                            ..*m
                        }
                    };
                    done = enough(n, m.ra);
                    n += 1;
                    k += 1;
                    cur_bp = next_bp;
                    if done || (differs && unsafe { rbp_used(memo_old, k, old_len) }) {
                        break; // a CFA further out uses the rbp that differs: walked
                    }
                }
                // The state before step k (old_len: after the last), from words just read.
                let m = unsafe { &*memo_old.add(k) };
                (ip, sp, bp) = (m.key, m.sp, cur_bp);
                // Where the walk goes on from, the old walk's states further out may still
                // be met (after at least one step walked: this state's own step differs).
                j = k + 1;
                matching = j < old_len;
                continue;
            }
            // Otherwise a caller further out may still be one of the last walk's states.
        }
        let rule = unsafe { rule_of(c, ip) };
        match rule & 3 {
            KIND_STANDARD => {}
            KIND_LAST => break,
            _ => return None,
        }
        let base = if rule & CFA_RSP != 0 { sp } else { bp };
        let cfa = base.wrapping_add((rule >> 32) as i32 as i64 as u64);
        let ra_at = cfa.wrapping_sub(8);
        let ra = read(ra_at)?;
        let (mut rbp_at, mut next_bp) = (0, bp);
        if rule & RBP_SAVED != 0 {
            rbp_at = cfa.wrapping_add((rule >> 16) as u16 as i16 as i64 as u64);
            next_bp = read(rbp_at)?;
        }
        if ra < 0x4000 {
            break;
        }
        {
            let step = Step {
                key: ip,
                sp,
                bp,
                ra_at,
                ra,
                rbp_at,
                rbp: next_bp,
                rbp_based: rule & CFA_RSP == 0,
            };
            unsafe { *memo_new.add(n) = step };
        }
        // Recorded as it is; its rule is the call's, one byte before (libunwind's
        // `use_prev_instr`).
        out[n].write(ra);
        (ip, sp, bp) = (ra - 1, cfa, next_bp);
        done = enough(n, ra);
        n += 1;
    }
    {
        // The state after the last step (where this walk ended or would go on).
        let end = Step {
            key: ip,
            sp,
            bp,
            ra_at: 0,
            ra: 0,
            rbp_at: 0,
            rbp: 0,
            rbp_based: false,
        };
        unsafe { *memo_new.add(n) = end };
        c.memo_now[class] = old ^ 1;
        c.memo_len[class][old ^ 1] = n;
    }
    Some(n)
}

/// The rule at `ip`, from the table or computed into it.
unsafe fn rule_of(c: &mut Cache, ip: u64) -> u64 {
    let slot = &mut c.slots[slot_of(ip)];
    if slot[0] == ip.wrapping_add(1) {
        return slot[1];
    }
    let rule = unsafe { compute_rule(ip) };
    let slot = &mut c.slots[slot_of(ip)];
    *slot = [ip.wrapping_add(1), rule];
    rule
}

unsafe fn compute_rule(ip: u64) -> u64 {
    let Some(hdr) = (unsafe { module_hdr(ip) }) else {
        return KIND_COMPLEX;
    };
    match unsafe { rule_from_hdr(hdr, ip) } {
        Some(row) => classify(&row),
        None => KIND_COMPLEX,
    }
}

/// The `.eh_frame_hdr` of the module holding `ip`. Asked of the loader on every miss, not
/// kept: a module unloaded and another loaded in its place must not be read through a stale
/// address.
unsafe fn module_hdr(ip: u64) -> Option<u64> {
    let mut find = Find {
        ip,
        module: Module {
            lo: 0,
            hi: 0,
            hdr: 0,
        },
        found: false,
    };
    unsafe { libc::dl_iterate_phdr(Some(find_module), (&mut find as *mut Find).cast()) };
    (find.found && find.module.hdr != 0).then_some(find.module.hdr)
}

struct Find {
    ip: u64,
    module: Module,
    found: bool,
}

unsafe extern "C" fn find_module(
    info: *mut libc::dl_phdr_info,
    _size: usize,
    data: *mut c_void,
) -> c_int {
    let find = unsafe { &mut *data.cast::<Find>() };
    let info = unsafe { &*info };
    if info.dlpi_phdr.is_null() {
        return 0;
    }
    let phdrs =
        unsafe { core::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) };
    let base = info.dlpi_addr;
    let (mut lo, mut hi, mut hdr, mut holds) = (u64::MAX, 0u64, 0u64, false);
    for ph in phdrs {
        if ph.p_type == libc::PT_LOAD {
            let start = base.wrapping_add(ph.p_vaddr);
            let end = start.wrapping_add(ph.p_memsz);
            holds |= find.ip >= start && find.ip < end;
            lo = lo.min(start);
            hi = hi.max(end);
        } else if ph.p_type == libc::PT_GNU_EH_FRAME {
            hdr = base.wrapping_add(ph.p_vaddr);
        }
    }
    if !holds {
        return 0;
    }
    find.module = Module { lo, hi, hdr };
    find.found = true;
    1
}

/// One register's rule, for the registers the walk uses.
#[derive(Clone, Copy, PartialEq)]
enum Reg {
    Same,
    Undefined,
    /// Saved at CFA + N.
    At(i64),
    /// Anything else (in another register, an expression, a value): libunwind's.
    Other,
}

#[derive(Clone, Copy)]
struct Row {
    cfa_reg: u64,
    cfa_offset: i64,
    /// CFA = register + offset (not an expression, not yet unset).
    cfa_simple: bool,
    rbp: Reg,
    rsp: Reg,
    ra: Reg,
}

/// libunwind's standard-frame test (`dwarf_stash_frame`) and its end of stack (`unw_step`: an
/// undefined return address or rbp).
fn classify(row: &Row) -> u64 {
    if !row.cfa_simple {
        return KIND_COMPLEX;
    }
    if row.ra == Reg::Undefined || row.rbp == Reg::Undefined {
        return KIND_LAST;
    }
    let small = |r: Reg| match r {
        Reg::Same | Reg::Undefined => true,
        Reg::At(n) => n.abs() < 1 << 14 && n != -1,
        Reg::Other => false,
    };
    if (row.cfa_reg != RSP && row.cfa_reg != RBP)
        || row.cfa_offset.abs() >= 1 << 28
        || row.ra != Reg::At(-8)
        || !small(row.rbp)
        || !small(row.rsp)
    {
        return KIND_COMPLEX;
    }
    let mut rule = KIND_STANDARD | ((row.cfa_offset as i32 as u32 as u64) << 32);
    if row.cfa_reg == RSP {
        rule |= CFA_RSP;
    }
    if let Reg::At(n) = row.rbp {
        rule |= RBP_SAVED | ((n as i16 as u16 as u64) << 16);
    }
    rule
}

/// A cursor over unwind data in a loaded module.
struct Bytes {
    at: *const u8,
}

impl Bytes {
    unsafe fn u8(&mut self) -> u8 {
        let v = unsafe { *self.at };
        self.at = unsafe { self.at.add(1) };
        v
    }
    unsafe fn fixed<const N: usize>(&mut self) -> [u8; N] {
        let v = unsafe { core::ptr::read_unaligned(self.at.cast::<[u8; N]>()) };
        self.at = unsafe { self.at.add(N) };
        v
    }
    unsafe fn uleb(&mut self) -> u64 {
        let (mut v, mut shift) = (0u64, 0u32);
        loop {
            let b = unsafe { self.u8() };
            if shift < 64 {
                v |= u64::from(b & 0x7f) << shift;
            }
            shift += 7;
            if b & 0x80 == 0 {
                return v;
            }
        }
    }
    unsafe fn sleb(&mut self) -> i64 {
        let (mut v, mut shift) = (0i64, 0u32);
        loop {
            let b = unsafe { self.u8() };
            if shift < 64 {
                v |= i64::from(b & 0x7f) << shift;
            }
            shift += 7;
            if b & 0x80 == 0 {
                if shift < 64 && b & 0x40 != 0 {
                    v |= -1i64 << shift;
                }
                return v;
            }
        }
    }
    /// A `DW_EH_PE_*`-encoded pointer; `None` for encodings this walker does not take.
    unsafe fn encoded(&mut self, enc: u8, datarel: u64) -> Option<u64> {
        let start = self.at as u64;
        let v = match enc & 0x0f {
            0x00 | 0x04 => u64::from_le_bytes(unsafe { self.fixed::<8>() }),
            0x01 => unsafe { self.uleb() },
            0x02 => u64::from(u16::from_le_bytes(unsafe { self.fixed::<2>() })),
            0x03 => u64::from(u32::from_le_bytes(unsafe { self.fixed::<4>() })),
            0x09 => (unsafe { self.sleb() }) as u64,
            0x0a => i16::from_le_bytes(unsafe { self.fixed::<2>() }) as i64 as u64,
            0x0b => i32::from_le_bytes(unsafe { self.fixed::<4>() }) as i64 as u64,
            0x0c => u64::from_le_bytes(unsafe { self.fixed::<8>() }),
            _ => return None,
        };
        match enc & 0xf0 {
            0x00 => Some(v),
            0x10 => Some(start.wrapping_add(v)),
            0x30 => Some(datarel.wrapping_add(v)),
            _ => None,
        }
    }
}

/// The CFI row at `ip` from the module's `.eh_frame_hdr` search table.
unsafe fn rule_from_hdr(hdr: u64, ip: u64) -> Option<Row> {
    let mut b = Bytes {
        at: hdr as *const u8,
    };
    let (version, ptr_enc, count_enc, table_enc) = unsafe { (b.u8(), b.u8(), b.u8(), b.u8()) };
    // The table libunwind and every linker write: 4-byte offsets from the header.
    if version != 1 || table_enc != 0x3b {
        return None;
    }
    unsafe { b.encoded(ptr_enc, hdr)? };
    let count = unsafe { b.encoded(count_enc, hdr)? } as usize;
    if count == 0 {
        return None;
    }
    let table = b.at.cast::<[i32; 2]>();
    let entry = |i: usize| unsafe { core::ptr::read_unaligned(table.add(i)) };
    let located = |i: usize| hdr.wrapping_add(entry(i)[0] as i64 as u64);
    if ip < located(0) {
        return None;
    }
    // The last entry starting at or below ip.
    let (mut lo, mut hi) = (0usize, count);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if located(mid) <= ip {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let fde = hdr.wrapping_add(entry(lo)[1] as i64 as u64);
    unsafe { row_of_fde(fde, ip) }
}

struct Cie {
    code_align: u64,
    data_align: i64,
    fde_enc: u8,
    has_z: bool,
    program: *const u8,
    end: *const u8,
}

unsafe fn parse_cie(at: *const u8) -> Option<Cie> {
    let mut b = Bytes { at };
    let length = u32::from_le_bytes(unsafe { b.fixed::<4>() });
    if length == 0 || length == u32::MAX {
        return None;
    }
    let end = unsafe { at.add(4 + length as usize) };
    if u32::from_le_bytes(unsafe { b.fixed::<4>() }) != 0 {
        return None;
    }
    let version = unsafe { b.u8() };
    if version != 1 && version != 3 {
        return None;
    }
    let mut aug = [0u8; 8];
    let mut aug_len = 0;
    loop {
        let ch = unsafe { b.u8() };
        if ch == 0 {
            break;
        }
        if aug_len == aug.len() {
            return None;
        }
        aug[aug_len] = ch;
        aug_len += 1;
    }
    let code_align = unsafe { b.uleb() };
    let data_align = unsafe { b.sleb() };
    let ra = if version == 1 {
        u64::from(unsafe { b.u8() })
    } else {
        unsafe { b.uleb() }
    };
    if ra != RA {
        return None;
    }
    let aug = &aug[..aug_len];
    let mut fde_enc = 0u8;
    let has_z = aug.first() == Some(&b'z');
    if has_z {
        let data_len = unsafe { b.uleb() } as usize;
        let data_end = unsafe { b.at.add(data_len) };
        for &ch in &aug[1..] {
            match ch {
                b'R' => fde_enc = unsafe { b.u8() },
                b'P' => {
                    let enc = unsafe { b.u8() };
                    unsafe { b.encoded(enc & 0x0f, 0)? };
                }
                b'L' => {
                    unsafe { b.u8() };
                }
                // 'S' (a signal frame) and anything unknown: libunwind's.
                _ => return None,
            }
        }
        b.at = data_end;
    } else if !aug.is_empty() {
        return None;
    }
    Some(Cie {
        code_align,
        data_align,
        fde_enc,
        has_z,
        program: b.at,
        end,
    })
}

unsafe fn row_of_fde(fde: u64, ip: u64) -> Option<Row> {
    let at = fde as *const u8;
    let mut b = Bytes { at };
    let length = u32::from_le_bytes(unsafe { b.fixed::<4>() });
    if length == 0 || length == u32::MAX {
        return None;
    }
    let end = unsafe { at.add(4 + length as usize) };
    let cie_pointer = b.at;
    let cie_offset = u32::from_le_bytes(unsafe { b.fixed::<4>() });
    if cie_offset == 0 {
        return None;
    }
    let cie = unsafe { parse_cie(cie_pointer.sub(cie_offset as usize))? };
    let start = unsafe { b.encoded(cie.fde_enc, 0)? };
    let range = unsafe { b.encoded(cie.fde_enc & 0x0f, 0)? };
    if ip < start || ip >= start.wrapping_add(range) {
        return None; // no FDE covers ip: libunwind guesses a frame
    }
    if cie.has_z {
        let data_len = unsafe { b.uleb() } as usize;
        b.at = unsafe { b.at.add(data_len) };
    }
    let blank = Row {
        cfa_reg: 0,
        cfa_offset: 0,
        cfa_simple: false,
        rbp: Reg::Same,
        rsp: Reg::Same,
        ra: Reg::Same,
    };
    let mut cfi = Cfi {
        row: blank,
        initial: blank,
        loc: start,
        ip,
        cie: &cie,
        stack: [blank; 8],
        depth: 0,
    };
    unsafe { cfi.run(cie.program, cie.end)? };
    cfi.initial = cfi.row;
    cfi.loc = start;
    unsafe { cfi.run(b.at, end)? };
    Some(cfi.row)
}

/// The CFA program interpreter: the row in force at `ip`.
struct Cfi<'a> {
    row: Row,
    /// The row after the CIE's instructions (`DW_CFA_restore`).
    initial: Row,
    loc: u64,
    ip: u64,
    cie: &'a Cie,
    stack: [Row; 8],
    depth: usize,
}

impl Cfi<'_> {
    fn set(&mut self, reg: u64, rule: Reg) {
        match reg {
            RBP => self.row.rbp = rule,
            RSP => self.row.rsp = rule,
            RA => self.row.ra = rule,
            _ => {}
        }
    }
    fn restore(&mut self, reg: u64) {
        let initial = self.initial;
        match reg {
            RBP => self.row.rbp = initial.rbp,
            RSP => self.row.rsp = initial.rsp,
            RA => self.row.ra = initial.ra,
            _ => {}
        }
    }
    /// Moves the location on; false once it passes `ip` (the row is then final).
    fn advance(&mut self, delta: u64) -> bool {
        self.loc = self
            .loc
            .wrapping_add(delta.wrapping_mul(self.cie.code_align));
        self.loc <= self.ip
    }

    /// Runs instructions in `[at, end)` until the location passes `ip`; `None`: an
    /// instruction this walker does not take.
    unsafe fn run(&mut self, at: *const u8, end: *const u8) -> Option<()> {
        let mut b = Bytes { at };
        let data_align = self.cie.data_align;
        while b.at < end {
            let op = unsafe { b.u8() };
            let low = u64::from(op & 0x3f);
            match op >> 6 {
                1 => {
                    if !self.advance(low) {
                        return Some(());
                    }
                    continue;
                }
                2 => {
                    let n = unsafe { b.uleb() } as i64;
                    self.set(low, Reg::At(n.wrapping_mul(data_align)));
                    continue;
                }
                3 => {
                    self.restore(low);
                    continue;
                }
                _ => {}
            }
            match op {
                0x00 => {}
                0x01 => {
                    self.loc = unsafe { b.encoded(self.cie.fde_enc, 0)? };
                    if self.loc > self.ip {
                        return Some(());
                    }
                }
                0x02..=0x04 => {
                    let delta = match op {
                        0x02 => u64::from(unsafe { b.u8() }),
                        0x03 => u64::from(u16::from_le_bytes(unsafe { b.fixed::<2>() })),
                        _ => u64::from(u32::from_le_bytes(unsafe { b.fixed::<4>() })),
                    };
                    if !self.advance(delta) {
                        return Some(());
                    }
                }
                0x05 => {
                    let reg = unsafe { b.uleb() };
                    let n = unsafe { b.uleb() } as i64;
                    self.set(reg, Reg::At(n.wrapping_mul(data_align)));
                }
                0x11 => {
                    let reg = unsafe { b.uleb() };
                    let n = unsafe { b.sleb() };
                    self.set(reg, Reg::At(n.wrapping_mul(data_align)));
                }
                0x06 => {
                    let reg = unsafe { b.uleb() };
                    self.restore(reg);
                }
                0x07 => {
                    let reg = unsafe { b.uleb() };
                    self.set(reg, Reg::Undefined);
                }
                0x08 => {
                    let reg = unsafe { b.uleb() };
                    self.set(reg, Reg::Same);
                }
                0x09 => {
                    let reg = unsafe { b.uleb() };
                    unsafe { b.uleb() };
                    self.set(reg, Reg::Other);
                }
                0x0a => {
                    if self.depth == self.stack.len() {
                        return None;
                    }
                    self.stack[self.depth] = self.row;
                    self.depth += 1;
                }
                0x0b => {
                    if self.depth == 0 {
                        return None;
                    }
                    self.depth -= 1;
                    // The whole row, CFA included, as libunwind keeps it.
                    self.row = self.stack[self.depth];
                }
                0x0c => {
                    self.row.cfa_reg = unsafe { b.uleb() };
                    self.row.cfa_offset = unsafe { b.uleb() } as i64;
                    self.row.cfa_simple = true;
                }
                0x12 => {
                    self.row.cfa_reg = unsafe { b.uleb() };
                    self.row.cfa_offset = unsafe { b.sleb() }.wrapping_mul(data_align);
                    self.row.cfa_simple = true;
                }
                0x0d => {
                    self.row.cfa_reg = unsafe { b.uleb() };
                }
                0x0e => {
                    self.row.cfa_offset = unsafe { b.uleb() } as i64;
                }
                0x13 => {
                    self.row.cfa_offset = unsafe { b.sleb() }.wrapping_mul(data_align);
                }
                0x2e => {
                    unsafe { b.uleb() };
                }
                // Expressions, value rules, negative offsets, vendor opcodes: libunwind's.
                _ => return None,
            }
        }
        Some(())
    }
}
