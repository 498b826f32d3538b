//! Heap trees over time from allocation traces.
//!
//! The live set after `c` events have been applied is every block with
//! `alloc_event < c <= free_event` (never-freed blocks have `free_event = events`). Grouping is
//! fixed per [`TraceHeap`]: each block is mapped once to a leaf of the [`GroupTrie`]; moving to a
//! new time point then only adds the blocks allocated and subtracts the blocks freed between the
//! old and the new point (blocks are sorted by allocation event already; a second index sorts
//! them by free event), or rebuilds from the blocks allocated so far when that is cheaper, and
//! finally sums leaves into their ancestors (one sweep over the trie).

use std::collections::HashMap;

use memscape_trace::Trace;
use memscape_trace::model::{FLAG_MMAP, FLAG_NEVER_FREED};
use memscape_trace::sites::{LineKey, SiteOptions, Sites, frame_identity, function_text};

use crate::suppress::{Suppressed, Suppressions, suppressed_blocks};
use crate::trie::{FastHash, GroupTrie, Label, Sizes};

mod continued;
mod totals;
pub use continued::HeapCarry;

/// How a [`TraceHeap`] sees call sites and which blocks leak suspects leave out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HeapOptions {
    pub sites: SiteOptions,
    pub suppressions: Suppressions,
}

/// One level of grouping. Call sites are effective sites: the first frame outside allocation
/// wrappers ([`memscape_trace::sites`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GroupKey {
    Thread,
    /// The `line` key: the call site's function, file and line, as `info` reports it, with
    /// the wrapper it called (`lookup_name (names.c:42) ← xmalloc`). Sites in one function at
    /// two lines are two groups. (`site` on the command line means this key too.)
    Site,
    /// The `function` key: the call site's function, every line of it merged (no line shown).
    Function,
    /// Top-down: the call path from the outermost caller down to the call site, one level per
    /// frame, frames merged by function (a flame graph's order).
    Path,
    /// Bottom-up: the call site's function, then its callers outwards, one level per frame
    /// (the inversion of [`GroupKey::Path`]).
    Callers,
    /// The binary of the call site (or of the first frame outwards that has one).
    Module,
    /// Power-of-two size class of the requested size.
    Size,
    /// The process that allocated the block (`pid name`), in a multi-process recording.
    Process,
}

impl GroupKey {
    /// Parses `thread,line,function,path,callers,module,size` (the CLI's `--group` list; `site`
    /// is `line`).
    pub fn parse_list(text: &str) -> Result<Vec<GroupKey>, String> {
        text.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| match s {
                "thread" => Ok(GroupKey::Thread),
                "site" | "line" => Ok(GroupKey::Site),
                "function" => Ok(GroupKey::Function),
                "path" => Ok(GroupKey::Path),
                "callers" => Ok(GroupKey::Callers),
                "module" => Ok(GroupKey::Module),
                "size" => Ok(GroupKey::Size),
                "process" => Ok(GroupKey::Process),
                other => Err(format!(
                    "unknown group key {other:?}: expected process, thread, line (or site), function, path, callers, module or size"
                )),
            })
            .collect()
    }

    /// The key's name in `--group` lists (the inverse of [`GroupKey::parse_list`]).
    pub fn name(self) -> &'static str {
        match self {
            GroupKey::Thread => "thread",
            GroupKey::Site => "line",
            GroupKey::Function => "function",
            GroupKey::Path => "path",
            GroupKey::Callers => "callers",
            GroupKey::Module => "module",
            GroupKey::Size => "size",
            GroupKey::Process => "process",
        }
    }

    fn kind(self) -> u8 {
        match self {
            GroupKey::Thread => 1,
            GroupKey::Site => 2,
            GroupKey::Path => 3,
            GroupKey::Module => 4,
            GroupKey::Size => 5,
            GroupKey::Function => 6,
            GroupKey::Callers => 7,
            GroupKey::Process => 8,
        }
    }

    /// Whether the key reads call stacks.
    fn uses_stacks(self) -> bool {
        matches!(
            self,
            GroupKey::Site
                | GroupKey::Function
                | GroupKey::Path
                | GroupKey::Callers
                | GroupKey::Module
        )
    }
}

/// `--bottom-up`: the grouping with every top-down call path inverted (`path` → `callers`); a
/// grouping without a path gets the callers of each site.
pub fn bottom_up(keys: &[GroupKey]) -> Vec<GroupKey> {
    if keys.contains(&GroupKey::Path) {
        keys.iter()
            .map(|&k| {
                if k == GroupKey::Path {
                    GroupKey::Callers
                } else {
                    k
                }
            })
            .collect()
    } else if keys.contains(&GroupKey::Callers) {
        keys.to_vec()
    } else {
        let mut out: Vec<GroupKey> = keys
            .iter()
            .copied()
            .filter(|k| !matches!(k, GroupKey::Site | GroupKey::Function))
            .collect();
        out.push(GroupKey::Callers);
        out
    }
}

/// Size class of `bytes`: 0 for 0 bytes, else `k` such that `2^(k-1) < bytes <= 2^k`, plus one
/// (so class 1 is exactly 1 byte).
pub fn size_class(bytes: u64) -> u32 {
    if bytes == 0 {
        0
    } else {
        // ceil(log2(bytes)) + 1
        (64 - (bytes - 1).leading_zeros()) + 1
    }
}

/// Human name of a size class.
pub fn size_class_name(class: u32) -> String {
    fn fmt(b: u128) -> String {
        if b >= 1 << 30 && b.is_multiple_of(1 << 30) {
            format!("{} GiB", b >> 30)
        } else if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
            format!("{} MiB", b >> 20)
        } else if b >= 1 << 10 && b.is_multiple_of(1 << 10) {
            format!("{} KiB", b >> 10)
        } else {
            format!("{b} B")
        }
    }
    match class {
        0 => String::from("0 B"),
        1 => String::from("1 B"),
        k => {
            let hi: u128 = 1u128 << (k - 1);
            let lo = (hi >> 1) + 1;
            format!("{} – {}", fmt(lo), fmt(hi))
        }
    }
}

/// Heap trees of one trace for one grouping, with a cursor at the current time point.
pub struct TraceHeap<'a> {
    trace: &'a Trace,
    keys: Vec<GroupKey>,
    sites: Sites,
    /// Blocks the suppressions match (in block order), left out of leak suspects.
    suppressed: Vec<u32>,
    suppressed_summary: Suppressed,
    trie: GroupTrie,
    /// Trie leaf of each block.
    block_leaf: Vec<u32>,
    /// Blocks that are ever freed, sorted by free event.
    by_free: Vec<u32>,
    /// Free events of `by_free`, same order (for binary search).
    free_events: Vec<u64>,
    /// Own (not yet accumulated) bytes and objects per trie node at `applied` events.
    own: Sizes,
    /// The sum of `own.bytes` (wrapping, as they are): the heap-size curve's value.
    own_total: u64,
    /// Number of blocks indexed.
    blocks: usize,
    applied: u64,
    /// What a heap built by [`TraceHeap::continued`] hands to the next snapshot's.
    carried: Option<Box<continued::Growing>>,
}

/// A block's grouping columns: (process, thread, raw site, size class), 0 where not grouped by.
type Tuple = (u32, u32, u32, u32);

/// Which block columns a grouping reads.
#[derive(Debug, Clone, Copy)]
struct Uses {
    process: bool,
    thread: bool,
    site: bool,
    class: bool,
}

impl Uses {
    fn of(keys: &[GroupKey]) -> Self {
        Self {
            process: keys.contains(&GroupKey::Process),
            thread: keys.contains(&GroupKey::Thread),
            site: keys.iter().any(|k| k.uses_stacks()),
            class: keys.contains(&GroupKey::Size),
        }
    }

    /// Block `i`'s tuple (`i` below the trace's consistent length).
    fn tuple(self, trace: &Trace, i: usize) -> Tuple {
        let b = &trace.blocks;
        (
            if self.process { b.process[i] } else { 0 },
            if self.thread { b.thread[i] } else { 0 },
            if self.site { b.site[i] } else { 0 },
            if self.class {
                size_class(b.requested_size[i])
            } else {
                0
            },
        )
    }
}

impl<'a> TraceHeap<'a> {
    /// Groups `trace` by `keys` (outermost level first), with the default call-site rules and
    /// suppressions. An empty key list gives a tree with the root alone. Costs one pass over
    /// the blocks and one sort by free event.
    pub fn new(trace: &'a Trace, keys: &[GroupKey]) -> Self {
        Self::with_options(trace, keys, &HeapOptions::default())
    }

    /// [`TraceHeap::new`] with explicit call-site rules and suppressions.
    pub fn with_options(trace: &'a Trace, keys: &[GroupKey], options: &HeapOptions) -> Self {
        let by_site = keys.iter().any(|k| k.uses_stacks());
        let sites = if by_site {
            Sites::new(trace, &options.sites)
        } else {
            Sites::default()
        };
        let (suppressed, suppressed_summary) = suppressed_blocks(trace, &options.suppressions);
        let root_name = trace_root_name(trace);
        let mut trie = GroupTrie::new(&root_name);
        // Loaders guarantee equal column lengths; a hand-built trace might not, and then no
        // block is trusted rather than indexing past a shorter column.
        let n = if trace.blocks.is_consistent() {
            trace.blocks.len()
        } else {
            tracing::warn!(
                "{}: block columns differ in length; heap tree left empty",
                trace.meta.source
            );
            0
        };
        let mut block_leaf = Vec::with_capacity(n);
        // Blocks sharing (thread, site, size class) share a leaf: cache the trie walk per tuple.
        let uses = Uses::of(keys);
        let mut cache: HashMap<Tuple, u32, FastHash> = HashMap::default();
        let mut grouper = Grouper {
            trace,
            sites: &sites,
            lines: HashMap::default(),
        };
        for i in 0..n {
            let (process, thread, site, class) = uses.tuple(trace, i);
            let leaf = *cache
                .entry((process, thread, site, class))
                .or_insert_with(|| grouper.leaf(&mut trie, keys, (process, thread), site, class));
            block_leaf.push(leaf);
        }
        // Sort (event, block) pairs rather than block ids by a looked-up key: the comparisons
        // then read contiguous memory.
        let mut pairs: Vec<(u64, u32)> = (0..n)
            .filter(|&i| trace.blocks.flags[i] & FLAG_NEVER_FREED == 0)
            .filter_map(|i| Some((trace.blocks.free_event[i], u32::try_from(i).ok()?)))
            .collect();
        pairs.sort_unstable();
        let (free_events, by_free): (Vec<u64>, Vec<u32>) = pairs.into_iter().unzip();
        let own = Sizes::zeros(trie.len());
        Self {
            trace,
            keys: keys.to_vec(),
            sites,
            suppressed,
            suppressed_summary,
            trie,
            block_leaf,
            by_free,
            free_events,
            own,
            own_total: 0,
            blocks: n,
            applied: 0,
            carried: None,
        }
    }

    pub fn trace(&self) -> &'a Trace {
        self.trace
    }

    pub fn keys(&self) -> &[GroupKey] {
        &self.keys
    }

    /// The call sites the grouping used (effective sites and wrappers of every stack).
    pub fn sites(&self) -> &Sites {
        &self.sites
    }

    /// What the suppressions match among the blocks never freed.
    pub fn suppressed(&self) -> &Suppressed {
        &self.suppressed_summary
    }

    /// `sizes` (at `applied` events) without the suppressed blocks live then: what leak
    /// suspects rank.
    pub fn without_suppressed(&self, sizes: &Sizes, applied: u64) -> Sizes {
        let mut out = sizes.clone();
        let b = &self.trace.blocks;
        for &block in &self.suppressed {
            let i = block as usize;
            if i >= self.blocks || !(b.alloc_event[i] < applied && b.free_event[i] >= applied) {
                continue;
            }
            let bytes = b.requested_size[i];
            let mut node = self.block_leaf[i];
            loop {
                if let Some(v) = out.bytes.get_mut(node as usize) {
                    *v = v.saturating_sub(bytes);
                }
                if let Some(v) = out.objects.get_mut(node as usize) {
                    *v = v.saturating_sub(1);
                }
                match self.trie.parent(node) {
                    Some(p) => node = p,
                    None => break,
                }
            }
        }
        out
    }

    pub fn trie(&self) -> &GroupTrie {
        &self.trie
    }

    /// The trie leaf a block belongs to (for linking with the allocation map).
    pub fn block_group(&self, block: usize) -> Option<u32> {
        self.block_leaf.get(block).copied()
    }

    /// Blocks whose group is `node` or lies under it (selecting a node highlights them).
    pub fn blocks_in_group(&self, node: u32) -> Vec<u32> {
        let mut inside = vec![false; self.trie.len()];
        for n in 0..self.trie.len() {
            let id = n as u32;
            inside[n] = id == node
                || self
                    .trie
                    .parent(id)
                    .is_some_and(|p| (p as usize) < n && inside[p as usize]);
        }
        self.block_leaf
            .iter()
            .enumerate()
            .filter(|(_, leaf)| inside.get(**leaf as usize).copied().unwrap_or(false))
            .filter_map(|(b, _)| u32::try_from(b).ok())
            .collect()
    }

    /// Number of events of the trace: the last time point.
    pub fn events(&self) -> u64 {
        self.trace.event_count()
    }

    /// The current time point (events applied).
    pub fn applied(&self) -> u64 {
        self.applied
    }

    /// Number of blocks allocated before `applied` events (blocks are in allocation order).
    fn allocated_before(&self, applied: u64) -> usize {
        self.trace
            .blocks
            .alloc_event
            .partition_point(|&e| e < applied)
            .min(self.blocks)
    }

    fn freed_before(&self, applied: u64) -> usize {
        self.free_events.partition_point(|&e| e < applied)
    }

    fn add_block(&mut self, block: usize, sign_add: bool) {
        // Anonymous mappings (recorder traces) are not heap: the trees leave them out, as the
        // trace's live-heap figures do.
        if self.trace.blocks.flags[block] & FLAG_MMAP != 0 {
            return;
        }
        let leaf = self.block_leaf[block] as usize;
        let bytes = self.trace.blocks.requested_size[block];
        if sign_add {
            self.own.bytes[leaf] = self.own.bytes[leaf].wrapping_add(bytes);
            self.own_total = self.own_total.wrapping_add(bytes);
            self.own.objects[leaf] = self.own.objects[leaf].wrapping_add(1);
        } else {
            self.own.bytes[leaf] = self.own.bytes[leaf].wrapping_sub(bytes);
            self.own_total = self.own_total.wrapping_sub(bytes);
            self.own.objects[leaf] = self.own.objects[leaf].wrapping_sub(1);
        }
    }

    /// Moves the cursor to `applied` events (clamped to the trace length), incrementally or by a
    /// rebuild, whichever touches fewer blocks.
    pub fn seek(&mut self, applied: u64) {
        let target = applied.min(self.events());
        let (a0, a1) = (
            self.allocated_before(self.applied),
            self.allocated_before(target),
        );
        let (f0, f1) = (self.freed_before(self.applied), self.freed_before(target));
        let incremental = a0.abs_diff(a1) + f0.abs_diff(f1);
        if incremental <= a1 {
            // Wrapping arithmetic: a node may dip below zero in the middle of a step (a free
            // applied before the matching allocation) and is back in range at the end.
            let (lo, hi, forward) = if a1 >= a0 {
                (a0, a1, true)
            } else {
                (a1, a0, false)
            };
            for b in lo..hi {
                self.add_block(b, forward);
            }
            let (lo, hi, forward) = if f1 >= f0 {
                (f0, f1, true)
            } else {
                (f1, f0, false)
            };
            for i in lo..hi {
                let b = self.by_free[i] as usize;
                self.add_block(b, !forward);
            }
        } else {
            self.own.bytes.fill(0);
            self.own_total = 0;
            self.own.objects.fill(0);
            for b in 0..a1 {
                if self.trace.blocks.free_event[b] >= target {
                    self.add_block(b, true);
                }
            }
        }
        self.applied = target;
    }

    /// Sizes of every group at `applied` events.
    pub fn sizes_at(&mut self, applied: u64) -> Sizes {
        self.seek(applied);
        let mut sizes = self.own.clone();
        sizes.accumulate(&self.trie);
        sizes
    }

    /// Same as [`TraceHeap::sizes_at`] but writing into `out` (no allocation per time point).
    pub fn sizes_into(&mut self, applied: u64, out: &mut Sizes) {
        self.seek(applied);
        out.bytes.clear();
        out.bytes.extend_from_slice(&self.own.bytes);
        out.objects.clear();
        out.objects.extend_from_slice(&self.own.objects);
        out.accumulate(&self.trie);
    }

    /// Events applied at wall time `ns`: every event whose time is at most `ns`.
    pub fn events_at_time(&self, ns: u64) -> u64 {
        let b = &self.trace.blocks;
        let allocs = b.alloc_time_ns.partition_point(|&t| t <= ns);
        // Free times follow free events (times never go backwards in a trace).
        let frees = self
            .by_free
            .partition_point(|&blk| b.free_time_ns[blk as usize] <= ns);
        // Frees that matched no block are events too; spread them by position: the event index
        // of the last counted alloc or free bounds the count from below.
        let last_alloc = allocs
            .min(self.blocks)
            .checked_sub(1)
            .and_then(|i| b.alloc_event.get(i))
            .map_or(0, |e| e.saturating_add(1));
        let last_free = frees
            .checked_sub(1)
            .map_or(0, |i| self.free_events[i].saturating_add(1));
        last_alloc.max(last_free).min(self.events())
    }

    /// Wall time (ns) of the state after `applied` events: the time of the last applied event.
    pub fn time_of(&self, applied: u64) -> u64 {
        if applied == 0 {
            return 0;
        }
        let b = &self.trace.blocks;
        let e = applied - 1;
        let a = b.alloc_event.partition_point(|&x| x <= e).min(self.blocks);
        let t_alloc = a
            .checked_sub(1)
            .and_then(|i| b.alloc_time_ns.get(i))
            .copied()
            .unwrap_or(0);
        let f = self.free_events.partition_point(|&x| x <= e);
        let t_free = f
            .checked_sub(1)
            .map_or(0, |i| b.free_time_ns[self.by_free[i] as usize]);
        t_alloc.max(t_free)
    }

    /// `n` time points evenly spaced over the events (the first after the first event, the last
    /// at the trace end).
    pub fn even_points(&self, n: usize) -> Vec<u64> {
        let events = self.events();
        let n = n.max(1) as u64;
        (1..=n)
            .map(|i| ((events as u128 * i as u128) / n as u128) as u64)
            .collect()
    }

    /// `n` time points evenly spaced in wall time, as event counts.
    pub fn even_points_in_time(&self, n: usize) -> Vec<u64> {
        let end = self.trace.meta.end_time_ns;
        let n = n.max(1) as u64;
        (1..=n)
            .map(|i| self.events_at_time(((end as u128 * i as u128) / n as u128) as u64))
            .collect()
    }

    /// Live bytes at each of `points` (the heap-size time series). A heap continued from a
    /// live recording's last snapshot reads them from its kept totals (no sweep of the blocks).
    pub fn heap_series(&mut self, points: &[u64]) -> Vec<(u64, u64)> {
        if let Some(totals) = self.carried.as_ref().map(|g| g.totals())
            && let Some(series) = points
                .iter()
                .map(|&p| Some((p, totals.at(self.trace, p)?)))
                .collect::<Option<Vec<_>>>()
        {
            return series;
        }
        points
            .iter()
            .map(|&p| {
                self.seek(p);
                (p, self.own_total)
            })
            .collect()
    }

    /// The event count right after the heap peak (the peak of requested bytes).
    pub fn peak_point(&self) -> u64 {
        if self.trace.meta.peak_live_bytes == 0 {
            return 0;
        }
        self.trace
            .meta
            .peak_event
            .saturating_add(1)
            .min(self.events())
    }
}

/// One group of blocks as a query engine returns them: the columns a grouping reads (0 for
/// those it does not: see [`GroupKey::uses_columns`]).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct BlockGroup {
    pub process: u32,
    pub thread: u32,
    /// The raw call site (the allocating stack's leaf node).
    pub site: u32,
}

impl GroupKey {
    /// Which block columns a grouping by `keys` reads besides the site: (process, thread).
    /// None when it needs the block sizes ([`GroupKey::Size`]), which per-group sums cannot give.
    pub fn uses_columns(keys: &[GroupKey]) -> Option<(bool, bool)> {
        if keys.contains(&GroupKey::Size) {
            return None;
        }
        Some((
            keys.contains(&GroupKey::Process),
            keys.contains(&GroupKey::Thread),
        ))
    }
}

/// The trie [`TraceHeap`] builds for `keys`, built from the call tree alone: `groups` in the
/// order of their first block (the order in which [`TraceHeap`] meets them), with the leaf of
/// each. `trace` needs its call tree, threads and processes, not its blocks; `node_bytes`: the
/// heap bytes ever allocated per call-tree node (wrapper detection, `memscape_trace::sites`).
pub fn group_trie(
    trace: &Trace,
    keys: &[GroupKey],
    options: &HeapOptions,
    groups: &[BlockGroup],
    node_bytes: Vec<u64>,
) -> (GroupTrie, Sites, Vec<u32>) {
    let sites = if keys.iter().any(|k| k.uses_stacks()) {
        Sites::with_node_bytes(trace, &options.sites, node_bytes)
    } else {
        Sites::default()
    };
    let mut trie = GroupTrie::new(&trace_root_name(trace));
    let mut grouper = Grouper {
        trace,
        sites: &sites,
        lines: HashMap::default(),
    };
    let leaves = groups
        .iter()
        .map(|g| grouper.leaf(&mut trie, keys, (g.process, g.thread), g.site, 0))
        .collect();
    (trie, sites, leaves)
}

/// The root's name: the command line on one line (`python3 -c "…"` scripts hold newlines,
/// which broke the root's label over the sunburst's centre and the pane's title).
fn trace_root_name(trace: &Trace) -> String {
    match memscape_trace::process::one_line(&trace.meta.command_line) {
        line if line.is_empty() => String::from("heap"),
        line => line,
    }
}

/// The call site a user means, by the built-in wrapper rules alone (no detection, no user
/// patterns): cheap for one frame at a time (hover, legends). [`TraceHeap`] and `info` use
/// [`memscape_trace::sites::Sites`], which also detects wrappers.
pub fn allocation_site(trace: &Trace, site: u32) -> u32 {
    memscape_trace::sites::builtin_site(trace, site)
}

/// Maps a block's (thread, raw site, size class) to its trie leaf.
struct Grouper<'t> {
    trace: &'t Trace,
    sites: &'t Sites,
    /// `line` identities → label value.
    lines: HashMap<LineKey, u64, FastHash>,
}

impl Grouper<'_> {
    fn line_value(&mut self, raw: u32) -> u64 {
        let key = self.sites.line_key(self.trace, raw);
        let next = self.lines.len() as u64;
        *self.lines.entry(key).or_insert(next)
    }

    fn leaf(
        &mut self,
        trie: &mut GroupTrie,
        keys: &[GroupKey],
        (process, thread): (u32, u32),
        raw: u32,
        class: u32,
    ) -> u32 {
        let trace = self.trace;
        let site = self.sites.site(raw);
        let mut node = 0u32;
        for &key in keys {
            let kind = key.kind();
            match key {
                GroupKey::Thread => {
                    node = trie.child(
                        node,
                        Label {
                            kind,
                            value: u64::from(thread),
                        },
                        || match trace.thread_name(thread) {
                            "" => format!("thread {thread}"),
                            name => name.to_owned(),
                        },
                    );
                }
                GroupKey::Site => {
                    let value = self.line_value(raw);
                    let sites = self.sites;
                    node = trie.child(node, Label { kind, value }, || sites.label(trace, raw));
                }
                GroupKey::Function => {
                    let value = frame_identity(trace, site);
                    node = trie.child(node, Label { kind, value }, || function_text(trace, site));
                }
                GroupKey::Path | GroupKey::Callers => {
                    let mut stack = trace.call_tree.stack(site);
                    if key == GroupKey::Path {
                        stack.reverse();
                    }
                    if stack.is_empty() {
                        stack.push(0);
                    }
                    for frame in stack {
                        let value = frame_identity(trace, frame);
                        node =
                            trie.child(node, Label { kind, value }, || function_text(trace, frame));
                    }
                }
                GroupKey::Module => {
                    let module = trace
                        .call_tree
                        .stack(site)
                        .into_iter()
                        .filter_map(|n| trace.call_tree.frames.get(n as usize))
                        .map(|f| f.module)
                        .find(|&m| m != 0)
                        .unwrap_or(0);
                    node = trie.child(
                        node,
                        Label {
                            kind,
                            value: u64::from(module),
                        },
                        || match trace.strings.get(module) {
                            "" => String::from("<unknown module>"),
                            m => m.to_owned(),
                        },
                    );
                }
                GroupKey::Size => {
                    node = trie.child(
                        node,
                        Label {
                            kind,
                            value: u64::from(class),
                        },
                        || size_class_name(class),
                    );
                }
                GroupKey::Process => {
                    node = trie.child(
                        node,
                        Label {
                            kind,
                            value: u64::from(process),
                        },
                        || match trace.processes.get(process as usize) {
                            Some(p) if p.pid != 0 => format!("{} {}", p.pid, p.name()),
                            _ => format!("process {process}"),
                        },
                    );
                }
            }
        }
        node
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_classes() {
        assert_eq!(size_class(0), 0);
        assert_eq!(size_class(1), 1);
        assert_eq!(size_class(2), 2);
        assert_eq!(size_class(3), 3);
        assert_eq!(size_class(4), 3);
        assert_eq!(size_class(5), 4);
        assert_eq!(size_class(u64::MAX), 65);
        assert_eq!(size_class_name(3), "3 B – 4 B");
        assert_eq!(size_class_name(11), "513 B – 1 KiB");
        assert_eq!(
            size_class_name(65),
            "9223372036854775809 B – 17179869184 GiB"
        );
    }

    #[test]
    fn parse_group_list() {
        assert_eq!(
            GroupKey::parse_list("thread,site,size").unwrap(),
            [GroupKey::Thread, GroupKey::Site, GroupKey::Size]
        );
        assert!(GroupKey::parse_list("bogus").is_err());
        assert_eq!(
            GroupKey::parse_list("line,site,function,callers").unwrap(),
            [
                GroupKey::Site,
                GroupKey::Site,
                GroupKey::Function,
                GroupKey::Callers
            ]
        );
        assert_eq!(GroupKey::Site.name(), "line");
    }

    #[test]
    fn the_root_is_named_by_the_command_line_on_one_line() {
        let mut trace = memscape_trace::TraceBuilder::with_event_times("t")
            .finish(memscape_trace::TraceFormat::Csv, true);
        trace.meta.command_line.clear();
        assert_eq!(trace_root_name(&trace), "heap");
        trace.meta.command_line = "python3 -c \nimport json\n\tprint(1)  ".into();
        assert_eq!(trace_root_name(&trace), "python3 -c import json print(1)");
    }

    #[test]
    fn bottom_up_inverts_paths() {
        use GroupKey::*;
        assert_eq!(bottom_up(&[Thread, Path]), [Thread, Callers]);
        assert_eq!(bottom_up(&[Site]), [Callers]);
        assert_eq!(bottom_up(&[Size, Function]), [Size, Callers]);
        assert_eq!(bottom_up(&[Callers]), [Callers]);
    }
}
