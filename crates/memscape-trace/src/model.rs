//! The columnar trace model: blocks as struct-of-arrays, interned strings, a deduplicated
//! call-stack tree and per-trace metadata.

use std::collections::HashMap;

use memscape_io::Warnings;

mod column;
pub use column::Column;
pub(crate) use column::{Force, Values};

/// Block flag: the block was still live when the trace ended; its free time is the trace end.
pub const FLAG_NEVER_FREED: u8 = 1;
/// Block flag: the block ended because a `realloc` moved or resized it.
pub const FLAG_FREED_BY_REALLOC: u8 = 2;
/// Block flag: the block ended because another allocation was reported at the same address
/// while it was still live (a lost free in the input); the block ends at that allocation.
pub const FLAG_ENDED_BY_OVERLAP: u8 = 4;

/// Block flag: the block ended because its process image was replaced by `exec` (its address
/// space is gone): it ends at the exec, is not a leak and not a free (see
/// `TraceBuilder::end_address_space`).
pub const FLAG_ENDED_BY_EXEC: u8 = 32;

/// Block flag: the block is an anonymous memory mapping (`mmap`, ended by `munmap`) recorded
/// by memscape's recorder, not a heap block. Mappings are counted in `TraceMeta::mmaps` /
/// `munmaps`, not in allocs/frees, and do not count towards live heap bytes.
pub const FLAG_MMAP: u8 = 8;

/// Block flag: the block was reported by a custom allocator through `memscape.h`
/// (`memscape_pool_alloc`), inside the pool its `pool` column names. Pool blocks are counted in
/// `TraceMeta::pool_allocs` / `pool_frees`, not in allocs/frees, and do not count towards live
/// heap bytes (the pool's own memory already does).
pub const FLAG_POOL: u8 = 16;

/// A block in no group (pool curves, `pools::group_curves`).
pub const NO_GROUP: u32 = u32::MAX;

/// `free_thread` value: the freeing thread is not known (never freed, or not recorded).
pub const NO_FREE_THREAD: u32 = 0;

/// `usable_size` value meaning "the trace does not say" (heaptrack records requested sizes only).
pub const USABLE_UNKNOWN: u64 = 0;

/// Call-site id of "no call stack recorded" (the root of the call-stack tree).
pub const NO_SITE: u32 = 0;

/// The formats memscape reads allocation traces from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormat {
    HeaptrackRaw,
    HeaptrackProcessed,
    Csv,
    Msc,
}

impl TraceFormat {
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::HeaptrackRaw => "heaptrack_raw",
            TraceFormat::HeaptrackProcessed => "heaptrack_processed",
            TraceFormat::Csv => "csv",
            TraceFormat::Msc => "msc",
        }
    }
}

/// The blocks of a trace, one column per attribute; row `i` of every column is block `i`.
/// Blocks are in allocation order (ascending `alloc_event`). Each column dereferences to a
/// slice (`&[u64]` / `&[u32]` / `&[u8]`) that a GPU uploader can hand to the device as it is;
/// columns of a trace loaded from `.msc` are decoded on first use ([`Column`]), and
/// [`BlockColumns::prefetch`] decodes several at once on parallel threads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockColumns {
    /// Start address (0 for every block when the trace has no addresses).
    pub address: Column<u64>,
    /// Extent on the address axis in bytes: usable size when known, else requested size.
    pub size: Column<u64>,
    /// Bytes the program asked for.
    pub requested_size: Column<u64>,
    /// Bytes the allocator actually reserved, or [`USABLE_UNKNOWN`].
    pub usable_size: Column<u64>,
    pub alloc_time_ns: Column<u64>,
    /// Free time; the trace end for never-freed blocks.
    pub free_time_ns: Column<u64>,
    /// Index of the allocation event among all events of the trace.
    pub alloc_event: Column<u64>,
    /// Index of the free event; `Trace::event_count()` for never-freed blocks.
    pub free_event: Column<u64>,
    /// Index into [`Trace::threads`].
    pub thread: Column<u32>,
    /// Leaf node of the allocating call stack in [`Trace::call_tree`] ([`NO_SITE`] if unknown).
    pub site: Column<u32>,
    /// `FLAG_*` bits.
    pub flags: Column<u8>,
    /// Index into [`Trace::processes`]: each process has its own address space.
    pub process: Column<u32>,
    /// Leaf node of the freeing call stack ([`NO_SITE`]: not recorded, or never freed).
    pub free_site: Column<u32>,
    /// 1 + index into [`Trace::threads`] of the freeing thread ([`NO_FREE_THREAD`]: not known).
    pub free_thread: Column<u32>,
    /// 1 + index into [`Trace::pools`] for blocks flagged [`FLAG_POOL`], else 0.
    pub pool: Column<u32>,
}

/// Names of the block columns, for [`BlockColumns::prefetch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockColumn {
    Address,
    Size,
    RequestedSize,
    UsableSize,
    AllocTime,
    FreeTime,
    AllocEvent,
    FreeEvent,
    Thread,
    Site,
    Flags,
    Process,
    FreeSite,
    FreeThread,
    Pool,
}

impl BlockColumn {
    pub const ALL: [BlockColumn; 15] = [
        BlockColumn::Address,
        BlockColumn::Size,
        BlockColumn::RequestedSize,
        BlockColumn::UsableSize,
        BlockColumn::AllocTime,
        BlockColumn::FreeTime,
        BlockColumn::AllocEvent,
        BlockColumn::FreeEvent,
        BlockColumn::Thread,
        BlockColumn::Site,
        BlockColumn::Flags,
        BlockColumn::Process,
        BlockColumn::FreeSite,
        BlockColumn::FreeThread,
        BlockColumn::Pool,
    ];
}

/// Plain vectors of the block columns, for code that builds blocks row by row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct BlockVecs {
    pub(crate) address: Vec<u64>,
    pub(crate) size: Vec<u64>,
    pub(crate) requested_size: Vec<u64>,
    pub(crate) usable_size: Vec<u64>,
    pub(crate) alloc_time_ns: Vec<u64>,
    pub(crate) free_time_ns: Vec<u64>,
    pub(crate) alloc_event: Vec<u64>,
    pub(crate) free_event: Vec<u64>,
    pub(crate) thread: Vec<u32>,
    pub(crate) site: Vec<u32>,
    pub(crate) flags: Vec<u8>,
}

impl BlockVecs {
    pub(crate) fn len(&self) -> usize {
        self.address.len()
    }
}

impl From<BlockVecs> for BlockColumns {
    /// The columns of a single-process trace without free sites or pools (those read as 0).
    fn from(b: BlockVecs) -> Self {
        let n = b.len();
        Self {
            address: b.address.into(),
            size: b.size.into(),
            requested_size: b.requested_size.into(),
            usable_size: b.usable_size.into(),
            alloc_time_ns: b.alloc_time_ns.into(),
            free_time_ns: b.free_time_ns.into(),
            alloc_event: b.alloc_event.into(),
            free_event: b.free_event.into(),
            thread: b.thread.into(),
            site: b.site.into(),
            flags: b.flags.into(),
            process: Column::zeros(n),
            free_site: Column::zeros(n),
            free_thread: Column::zeros(n),
            pool: Column::zeros(n),
        }
    }
}

impl BlockColumns {
    /// Decodes the named columns that are not in memory yet, on parallel threads (a trace loaded
    /// from `.msc` decodes each column on first use; a view that reads several columns right
    /// away saves wall time by asking for them together).
    pub fn prefetch(&self, columns: &[BlockColumn]) {
        let pending: Vec<&dyn Force> = columns
            .iter()
            .filter(|&&c| !self.is_decoded(c))
            .map(|&c| self.forcer(c))
            .collect();
        if pending.len() <= 1 {
            pending.iter().for_each(|column| column.force());
            return;
        }
        let threads = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .min(pending.len());
        let next = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| {
                    while let Some(column) =
                        pending.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                    {
                        column.force();
                    }
                });
            }
        });
    }

    fn is_decoded(&self, column: BlockColumn) -> bool {
        match column {
            BlockColumn::Address => self.address.is_decoded(),
            BlockColumn::Size => self.size.is_decoded(),
            BlockColumn::RequestedSize => self.requested_size.is_decoded(),
            BlockColumn::UsableSize => self.usable_size.is_decoded(),
            BlockColumn::AllocTime => self.alloc_time_ns.is_decoded(),
            BlockColumn::FreeTime => self.free_time_ns.is_decoded(),
            BlockColumn::AllocEvent => self.alloc_event.is_decoded(),
            BlockColumn::FreeEvent => self.free_event.is_decoded(),
            BlockColumn::Thread => self.thread.is_decoded(),
            BlockColumn::Site => self.site.is_decoded(),
            BlockColumn::Flags => self.flags.is_decoded(),
            BlockColumn::Process => self.process.is_decoded(),
            BlockColumn::FreeSite => self.free_site.is_decoded(),
            BlockColumn::FreeThread => self.free_thread.is_decoded(),
            BlockColumn::Pool => self.pool.is_decoded(),
        }
    }

    fn forcer(&self, column: BlockColumn) -> &dyn Force {
        match column {
            BlockColumn::Address => &self.address,
            BlockColumn::Size => &self.size,
            BlockColumn::RequestedSize => &self.requested_size,
            BlockColumn::UsableSize => &self.usable_size,
            BlockColumn::AllocTime => &self.alloc_time_ns,
            BlockColumn::FreeTime => &self.free_time_ns,
            BlockColumn::AllocEvent => &self.alloc_event,
            BlockColumn::FreeEvent => &self.free_event,
            BlockColumn::Thread => &self.thread,
            BlockColumn::Site => &self.site,
            BlockColumn::Flags => &self.flags,
            BlockColumn::Process => &self.process,
            BlockColumn::FreeSite => &self.free_site,
            BlockColumn::FreeThread => &self.free_thread,
            BlockColumn::Pool => &self.pool,
        }
    }

    pub fn len(&self) -> usize {
        self.address.len()
    }

    pub fn is_empty(&self) -> bool {
        self.address.is_empty()
    }

    /// True when every column has the same length (checked after loading `.msc` files).
    pub fn is_consistent(&self) -> bool {
        let n = self.address.len();
        [
            self.size.len(),
            self.requested_size.len(),
            self.usable_size.len(),
            self.alloc_time_ns.len(),
            self.free_time_ns.len(),
            self.alloc_event.len(),
            self.free_event.len(),
            self.thread.len(),
            self.site.len(),
            self.flags.len(),
            self.process.len(),
            self.free_site.len(),
            self.free_thread.len(),
            self.pool.len(),
        ]
        .iter()
        .all(|&len| len == n)
    }

    /// True when block `i` is live just after event `event` has been applied.
    pub fn is_live_after(&self, i: usize, event: u64) -> bool {
        self.alloc_event[i] <= event && self.free_event[i] > event
    }
}

/// Deduplicated strings; id 0 is the empty string ("none").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Strings {
    strings: Vec<String>,
    index: HashMap<String, u32>,
}

impl Default for Strings {
    fn default() -> Self {
        let mut s = Self {
            strings: Vec::new(),
            index: HashMap::new(),
        };
        s.intern("");
        s
    }
}

impl Strings {
    pub fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.index.get(s) {
            return id;
        }
        let id = u32::try_from(self.strings.len()).unwrap_or(u32::MAX);
        self.strings.push(s.to_owned());
        self.index.insert(s.to_owned(), id);
        id
    }

    /// The string with this id, or "" for an unknown id.
    pub fn get(&self, id: u32) -> &str {
        self.strings.get(id as usize).map_or("", String::as_str)
    }

    pub fn len(&self) -> usize {
        self.strings.len()
    }

    pub fn is_empty(&self) -> bool {
        self.strings.len() <= 1
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.strings.iter().map(String::as_str)
    }

    pub(crate) fn from_vec(strings: Vec<String>) -> Self {
        let mut s = Self::default();
        for string in strings.iter().skip(1) {
            s.strings.push(string.clone());
            let id = u32::try_from(s.strings.len() - 1).unwrap_or(u32::MAX);
            s.index.entry(string.clone()).or_insert(id);
        }
        s
    }
}

/// One node of the call-stack tree: a frame (instruction pointer and what is known about it)
/// under its caller. Node 0 is the root (no frame).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Frame {
    pub ip: u64,
    /// String ids, 0 when unknown.
    pub function: u32,
    pub file: u32,
    pub line: u32,
    pub module: u32,
    /// Offset of `ip` inside `module` (0 when the module is unknown).
    pub module_offset: u64,
}

impl Frame {
    /// An unnamed frame in module `module` (its file name): `libc.so.6+0x1234`, or
    /// `libGL.so.1 @0x7fbba5c3fcde` where its offset is unknown (heaptrack's processed files
    /// name a frame's module without its load address): `+0x0` there would make every frame
    /// of the module look like one.
    pub fn in_module(&self, module: &str) -> String {
        if self.module_offset == 0 && self.ip != 0 {
            format!("{module} @{:#x}", self.ip)
        } else {
            format!("{module}+{:#x}", self.module_offset)
        }
    }
}

/// Call-tree children: (parent, ip, module) → node.
type NodeMap =
    HashMap<(u32, u64, u32), u32, std::hash::BuildHasherDefault<crate::builder::PointerHasher>>;

/// Deduplicated call stacks as a tree stored in columns: node `n` has parent `parent[n]` and
/// frame `frames[n]`. Node 0 is the root. A block's `site` is the innermost frame's node.
/// (Equality is that of the columns: the index of children follows from them.)
#[derive(Debug, Clone)]
pub struct CallTree {
    pub parent: Vec<u32>,
    pub frames: Vec<Frame>,
    /// (parent, ip, module) → node: the module keeps apart equal addresses of different
    /// programs (fixed-address executables) in a multi-process trace.
    /// (A multiply-rotate hasher: SipHash here was 7 % of converting a recording.)
    /// Empty in a copy made by [`CallTree::without_index`] until a node is added.
    children: NodeMap,
}

impl PartialEq for CallTree {
    fn eq(&self, other: &Self) -> bool {
        self.parent == other.parent && self.frames == other.frames
    }
}

impl Eq for CallTree {}

impl Default for CallTree {
    fn default() -> Self {
        Self {
            parent: vec![0],
            frames: vec![Frame::default()],
            children: NodeMap::default(),
        }
    }
}

impl CallTree {
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    pub fn is_empty(&self) -> bool {
        self.parent.len() <= 1
    }

    /// The node for frame `frame` called from `parent`, created if new. Identity is
    /// (parent, ip, module), so the same instruction reached through different callers stays
    /// distinct, and so do equal addresses in different programs.
    pub fn child(&mut self, parent: u32, frame: Frame) -> u32 {
        self.index();
        let parent = if (parent as usize) < self.parent.len() {
            parent
        } else {
            0
        };
        if let Some(&node) = self.children.get(&(parent, frame.ip, frame.module)) {
            return node;
        }
        let node = u32::try_from(self.parent.len()).unwrap_or(u32::MAX);
        self.parent.push(parent);
        self.frames.push(frame);
        self.children.insert((parent, frame.ip, frame.module), node);
        node
    }

    /// Appends a node without deduplication (used when an input already numbers its nodes,
    /// so that its trace ids map one to one onto ours).
    pub(crate) fn push_raw(&mut self, parent: u32, frame: Frame) -> u32 {
        self.index();
        let node = u32::try_from(self.parent.len()).unwrap_or(u32::MAX);
        let parent = if parent < node { parent } else { 0 };
        self.parent.push(parent);
        self.frames.push(frame);
        self.children
            .entry((parent, frame.ip, frame.module))
            .or_insert(node);
        node
    }

    /// Frames from `node` (innermost) up to the root (excluded).
    pub fn stack(&self, node: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut n = node;
        // Bounded by the tree size: parents always have smaller ids, but a corrupt .msc might not.
        while n != 0 && (n as usize) < self.parent.len() && out.len() < self.parent.len() {
            out.push(n);
            n = self.parent[n as usize];
        }
        out
    }

    /// A copy of the nodes without the index of children (a live snapshot's: the index is
    /// the larger part of the tree, and only adding nodes needs it; rebuilt then).
    pub(crate) fn without_index(&self) -> Self {
        Self {
            parent: self.parent.clone(),
            frames: self.frames.clone(),
            children: NodeMap::default(),
        }
    }

    /// Rebuilds the index of children when a copy left it out.
    fn index(&mut self) {
        if self.children.is_empty() && self.parent.len() > 1 {
            let columns = (
                std::mem::take(&mut self.parent),
                std::mem::take(&mut self.frames),
            );
            *self = Self::from_columns(columns.0, columns.1);
        }
    }

    pub(crate) fn from_columns(parent: Vec<u32>, frames: Vec<Frame>) -> Self {
        let mut children = NodeMap::with_capacity_and_hasher(
            parent.len(),
            std::hash::BuildHasherDefault::default(),
        );
        for (n, (&p, f)) in parent.iter().zip(&frames).enumerate().skip(1) {
            let id = u32::try_from(n).unwrap_or(u32::MAX);
            children.entry((p, f.ip, f.module)).or_insert(id);
        }
        Self {
            parent,
            frames,
            children,
        }
    }
}

/// A memory mapping of a binary, as heaptrack records them: the module was loaded at `base`
/// and covers `[start, end)`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Module {
    pub path: String,
    pub base: u64,
    pub start: u64,
    pub end: u64,
}

/// Facts about a trace as a whole.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TraceMeta {
    pub format: TraceFormat,
    /// The name the trace was loaded from (for messages).
    pub source: String,
    pub command_line: String,
    /// Whether blocks carry real addresses (heaptrack's processed format does not).
    pub has_addresses: bool,
    /// Whether wall times come from the input (false: they are synthesized from event order).
    pub has_wall_time: bool,
    /// Events: allocations plus successful frees plus frees that matched nothing or a block
    /// inherited at a fork, plus mappings and unmappings, pool events and blocks ended by
    /// `exec`.
    pub events: u64,
    pub allocs: u64,
    pub frees: u64,
    /// Reallocs of a live block (each is also counted as one alloc and one free).
    pub reallocs: u64,
    pub unknown_frees: u64,
    /// Frees, in forked children, of their copy of a parent's block
    /// (`Process::inherited_frees`, summed).
    #[serde(default)]
    pub inherited_frees: u64,
    pub double_frees: u64,
    /// Anonymous mappings (blocks flagged [`FLAG_MMAP`]); each is one event.
    #[serde(default)]
    pub mmaps: u64,
    /// Mappings ended by `munmap`; each is one event.
    #[serde(default)]
    pub munmaps: u64,
    /// Blocks a custom allocator reported inside its pools (flagged [`FLAG_POOL`]); each is
    /// one event.
    #[serde(default)]
    pub pool_allocs: u64,
    /// Pool blocks freed; each is one event.
    #[serde(default)]
    pub pool_frees: u64,
    /// Blocks (heap, mappings, pool blocks) ended because their process image called `exec`
    /// (flagged [`FLAG_ENDED_BY_EXEC`]); each is one event.
    #[serde(default)]
    pub exec_ends: u64,
    /// CLOCK_MONOTONIC ns of time 0 (recordings; 0 when the input does not say).
    #[serde(default)]
    pub start_monotonic_ns: u64,
    /// Wall time of the last event or tick (ns since trace start).
    pub end_time_ns: u64,
    pub peak_live_bytes: u64,
    /// Index of the event right after which `peak_live_bytes` was reached.
    pub peak_event: u64,
    pub peak_time_ns: u64,
    pub end_live_bytes: u64,
    pub page_size: u64,
    pub modules: Vec<Module>,
}

/// A loaded allocation trace.
#[derive(Debug, Clone)]
pub struct Trace {
    pub meta: TraceMeta,
    pub blocks: BlockColumns,
    pub strings: Strings,
    pub call_tree: CallTree,
    /// Thread names (string ids); block `thread` columns index this.
    pub threads: Vec<u32>,
    /// The process of each thread (index into `processes`).
    pub thread_process: Vec<u32>,
    /// Every process image of the recording (at least one: single-process formats get one
    /// made from the metadata); block `process` columns index this.
    pub processes: Vec<crate::process::Process>,
    /// Pools a custom allocator declared (`memscape.h`); block `pool` columns index this + 1.
    pub pools: Vec<crate::process::Pool>,
    pub warnings: Warnings,
    /// [`Trace::event_order`], computed on first use (several sweeps share it), or a live
    /// snapshot's prefix of its builder's.
    pub(crate) event_order_cache: std::sync::OnceLock<EventOrder>,
}

/// A trace's event order: computed from its blocks, or, for a live snapshot, the prefix of the
/// order its builder keeps as events arrive (shared, not copied or computed again: it grows
/// with the recording).
#[derive(Debug, Clone)]
pub(crate) enum EventOrder {
    Computed(Vec<u32>),
    Shared(memscape_map::Frozen<u32>),
}

impl std::ops::Deref for EventOrder {
    type Target = [u32];

    fn deref(&self) -> &[u32] {
        match self {
            EventOrder::Computed(order) => order,
            EventOrder::Shared(order) => order,
        }
    }
}

impl Trace {
    pub fn event_count(&self) -> u64 {
        self.meta.events
    }

    pub fn has_addresses(&self) -> bool {
        self.meta.has_addresses
    }

    pub fn thread_name(&self, thread: u32) -> &str {
        self.threads
            .get(thread as usize)
            .map_or("", |&id| self.strings.get(id))
    }

    /// Blocks never freed before the trace ended.
    pub fn never_freed(&self) -> u64 {
        self.blocks
            .flags
            .iter()
            .filter(|&&f| f & FLAG_NEVER_FREED != 0)
            .count() as u64
    }

    /// One line describing a call-tree node: function (file:line) when known, else
    /// module+offset, else the raw instruction pointer.
    pub fn describe_frame(&self, node: u32) -> String {
        let Some(frame) = self.call_tree.frames.get(node as usize) else {
            return String::from("?");
        };
        if node == 0 {
            return String::from("<no call stack>");
        }
        let function = self.strings.get(frame.function);
        let file = self.strings.get(frame.file);
        let module = self.strings.get(frame.module);
        match (function.is_empty(), file.is_empty(), module.is_empty()) {
            (false, false, _) => format!("{function} ({file}:{})", frame.line),
            (false, true, false) => format!("{function} ({module})"),
            (false, true, true) => function.to_owned(),
            (true, _, false) => frame.in_module(module),
            (true, _, true) => format!("{:#x}", frame.ip),
        }
    }

    /// Event-ordered view of the trace: entry `e` is `block << 1 | is_free`, or `u32::MAX` for
    /// an event that touched no block (a free that matched nothing). Costs 4 bytes per event;
    /// used by sweeps (regions, metrics) that need events in order. Computed once and kept
    /// (do not mutate `blocks` afterwards).
    pub fn event_order(&self) -> &[u32] {
        self.event_order_cache
            .get_or_init(|| EventOrder::Computed(self.compute_event_order()))
    }

    pub(crate) fn compute_event_order(&self) -> Vec<u32> {
        let n = usize::try_from(self.meta.events).unwrap_or(0);
        let mut order = vec![u32::MAX; n];
        for i in 0..self.blocks.len() {
            let id = u32::try_from(i).unwrap_or(u32::MAX >> 1) << 1;
            if let Some(slot) = usize::try_from(self.blocks.alloc_event[i])
                .ok()
                .and_then(|e| order.get_mut(e))
            {
                *slot = id;
            }
            if self.blocks.flags[i] & FLAG_NEVER_FREED == 0
                && let Some(slot) = usize::try_from(self.blocks.free_event[i])
                    .ok()
                    .and_then(|e| order.get_mut(e))
            {
                *slot = id | 1;
            }
        }
        order
    }
}
