//! A live recording's heap trees, snapshot after snapshot: [`TraceHeap::continued`] groups
//! only the blocks a snapshot added, and the frees since the previous one, starting from what
//! the previous snapshot's heap handed over ([`HeapCarry`]); the result equals
//! [`TraceHeap::with_options`] on the new snapshot.
//!
//! Why that holds: a snapshot's blocks extend the previous snapshot's (blocks are appended in
//! allocation order and never change their allocation side); a block freed before the previous
//! snapshot keeps its free event, and every free since has a later event, so the blocks sorted
//! by free event only grow at the end; the blocks live at the previous snapshot's end (its
//! never-freed ones) are the only old ones whose free side can change. The trie is rebuilt
//! from the distinct grouping tuples in the order of their first block (what a full pass meets
//! first), since call sites may be resolved differently once more bytes are known (wrapper
//! detection): where a tuple's leaf moved, the old blocks are grouped again.

use std::collections::HashMap;

use memscape_trace::Trace;
use memscape_trace::model::{FLAG_MMAP, FLAG_NEVER_FREED};
use memscape_trace::sites::{LineKey, Sites};

use super::totals::HeapTotals;
use super::{GroupKey, Grouper, HeapOptions, TraceHeap, Tuple, Uses, trace_root_name};
use crate::suppress::Suppressed;
use crate::trie::{FastHash, GroupTrie, Sizes};

/// What [`TraceHeap::continued`] keeps beside the heap for the next snapshot.
#[derive(Debug, Clone, Default)]
pub(super) struct Growing {
    options: HeapOptions,
    /// Distinct tuples in the order of their first block, with their leaves.
    tuples: Vec<Tuple>,
    leaves: HashMap<Tuple, u32, FastHash>,
    /// Heap bytes ever allocated per call-tree node (wrapper detection's input).
    node_bytes: Vec<u64>,
    /// Blocks live at the snapshot's end (never freed in it): the old blocks whose free side a
    /// later snapshot may change.
    live: Vec<u32>,
    events: u64,
    /// The last block's allocation event: a cheap check that a later trace extends this one.
    last_alloc_event: Option<u64>,
    /// The grouper's `line` label values, the trie's root name and the call-tree length.
    lines: HashMap<LineKey, u64, FastHash>,
    root: String,
    nodes: usize,
    /// Suppression rule per raw site seen, and the suppressed blocks live at the end with
    /// their rule.
    rule_of_site: HashMap<u32, Option<usize>, FastHash>,
    suppressed_live: Vec<(u32, usize)>,
    /// The heap's bytes every few events (the heap-size curve's, only new events swept).
    totals: HeapTotals,
}

impl Growing {
    /// The heap's bytes every few events, swept up to the snapshot's end.
    pub(super) fn totals(&self) -> &HeapTotals {
        &self.totals
    }
}

/// A snapshot's grouping handed to the next snapshot's [`TraceHeap::continued`] (owned: the
/// heap it comes from borrows its trace).
#[derive(Debug, Clone)]
pub struct HeapCarry {
    keys: Vec<GroupKey>,
    trie: GroupTrie,
    sites: Sites,
    suppressed: Vec<u32>,
    block_leaf: Vec<u32>,
    by_free: Vec<u32>,
    free_events: Vec<u64>,
    growing: Growing,
}

impl HeapCarry {
    /// Number of blocks grouped already.
    pub fn blocks(&self) -> usize {
        self.block_leaf.len()
    }

    /// Whether `trace` can extend this carry: same grouping, at least as many blocks and
    /// events, and the same last old block.
    fn fits(&self, trace: &Trace, keys: &[GroupKey], options: &HeapOptions) -> bool {
        let n = self.block_leaf.len();
        self.keys == keys
            && self.growing.options == *options
            && n <= trace.blocks.len()
            && self.growing.events <= trace.event_count()
            && self.growing.node_bytes.len() <= trace.call_tree.len()
            && self.growing.totals.events() <= trace.event_order().len()
            && n.checked_sub(1).map(|i| trace.blocks.alloc_event[i])
                == self.growing.last_alloc_event
    }
}

impl<'a> TraceHeap<'a> {
    /// [`TraceHeap::with_options`] on a snapshot of a recording that goes on, continuing from
    /// `carry` (an earlier snapshot's [`TraceHeap::carry`]) when it fits: the work is then the
    /// new blocks, the blocks live at the earlier snapshot's end, and the call tree. The result
    /// is equal to the full build's (tested against it at every snapshot of a replayed trace).
    pub fn continued(
        trace: &'a Trace,
        keys: &[GroupKey],
        options: &HeapOptions,
        carry: Option<HeapCarry>,
    ) -> Self {
        if !trace.blocks.is_consistent() {
            return Self::with_options(trace, keys, options);
        }
        let carry = carry.filter(|c| c.fits(trace, keys, options));
        let (mut block_leaf, mut by_free, mut free_events, old, kept) = match carry {
            Some(c) => (
                c.block_leaf,
                c.by_free,
                c.free_events,
                c.growing,
                Some((c.trie, c.sites, c.suppressed)),
            ),
            None => Default::default(),
        };
        let (old_trie, mut old_sites, mut suppressed) = match kept {
            Some((trie, sites, suppressed)) => (Some(trie), Some(sites), suppressed),
            None => (None, None, Vec::new()),
        };
        let b = &trace.blocks;
        let n = b.len();
        let from = block_leaf.len();
        let started = std::time::Instant::now();
        let ms = |t: std::time::Instant| t.elapsed().as_secs_f64() * 1e3;
        let uses = Uses::of(keys);
        // Wrapper detection's input, from the new blocks.
        let mut node_bytes = old.node_bytes;
        let sites = if uses.site {
            node_bytes.resize(trace.call_tree.len(), 0);
            for i in from..n {
                if b.flags[i] & FLAG_MMAP == 0
                    && let Some(slot) = node_bytes.get_mut(b.site[i] as usize)
                {
                    *slot = slot.saturating_add(b.requested_size[i]);
                }
            }
            // The old nodes' classification by the rules is kept (only new nodes classified).
            let rules = old_sites.as_mut().map(Sites::take_rules);
            Sites::with_node_bytes_continued(trace, &options.sites, node_bytes.clone(), rules)
        } else {
            Sites::default()
        };
        let sites_ms = ms(started);
        let replay = std::time::Instant::now();
        // The old trie stands when what it was made of has not changed: the call sites and
        // wrappers of the old call-tree nodes (their frames and parents never change) and the
        // root's name; thread and process names may (renamed threads), so those groupings
        // rebuild it.
        let root = trace_root_name(trace);
        let same = !uses.thread
            && !uses.process
            && old.root == root
            && old.nodes <= trace.call_tree.len()
            && old_sites.as_ref().is_some_and(|was| {
                (0..old.nodes as u32).all(|node| {
                    was.site(node) == sites.site(node) && was.kind(node) == sites.kind(node)
                })
            });
        let mut moved = false;
        let (mut trie, mut grouper, leaves) = match old_trie {
            Some(trie) if same => (
                trie,
                Grouper {
                    trace,
                    sites: &sites,
                    lines: old.lines,
                },
                old.leaves,
            ),
            _ => {
                // The trie of the old tuples, in the order a full pass meets them.
                let mut trie = GroupTrie::new(&root);
                let mut grouper = Grouper {
                    trace,
                    sites: &sites,
                    lines: HashMap::default(),
                };
                let mut leaves: HashMap<Tuple, u32, FastHash> = HashMap::default();
                for &t @ (process, thread, site, class) in &old.tuples {
                    let leaf = grouper.leaf(&mut trie, keys, (process, thread), site, class);
                    moved |= old.leaves.get(&t) != Some(&leaf);
                    leaves.insert(t, leaf);
                }
                (trie, grouper, leaves)
            }
        };
        let mut leaves = leaves;
        if moved {
            for (i, slot) in block_leaf.iter_mut().enumerate() {
                if let Some(&leaf) = leaves.get(&uses.tuple(trace, i)) {
                    *slot = leaf;
                }
            }
        }
        let replay_ms = ms(replay);
        let mut tuples = old.tuples;
        block_leaf.reserve(n - from);
        for i in from..n {
            let t @ (process, thread, site, class) = uses.tuple(trace, i);
            let leaf = *leaves.entry(t).or_insert_with(|| {
                tuples.push(t);
                grouper.leaf(&mut trie, keys, (process, thread), site, class)
            });
            block_leaf.push(leaf);
        }
        // Frees since: old blocks live then and freed now, and new blocks freed; every free
        // after the old snapshot's end is one of theirs, so the events since list them in
        // order (no sort).
        let live: Vec<u32> = old
            .live
            .iter()
            .map(|&i| i as usize)
            .chain(from..n)
            .filter(|&i| i < n && b.flags[i] & FLAG_NEVER_FREED != 0)
            .filter_map(|i| u32::try_from(i).ok())
            .collect();
        let since = usize::try_from(old.events).unwrap_or(usize::MAX);
        let pairs: Vec<(u64, u32)> = trace
            .event_order()
            .iter()
            .enumerate()
            .skip(since)
            .filter(|&(_, &id)| id != u32::MAX && id & 1 == 1)
            .map(|(event, &id)| (event as u64, id >> 1))
            .collect();
        let in_order = match (pairs.first(), by_free.last(), free_events.last()) {
            (Some(&first), Some(&block), Some(&event)) => first > (event, block),
            _ => true,
        };
        if in_order {
            for (event, block) in pairs {
                free_events.push(event);
                by_free.push(block);
            }
        } else {
            // Not expected of snapshots; still exact.
            let mut all: Vec<(u64, u32)> = free_events.into_iter().zip(by_free).collect();
            all.extend(pairs);
            all.sort_unstable();
            (free_events, by_free) = all.into_iter().unzip();
        }
        let suppress = std::time::Instant::now();
        let mut rule_of_site = old.rule_of_site;
        let mut suppressed_live = Vec::new();
        let summary = options.suppressions.is_empty().then(|| Suppressed {
            applied: false,
            ..Suppressed::default()
        });
        let suppressed_summary = summary.unwrap_or_else(|| {
            // As `suppressed_blocks`: heap blocks a rule matches, in block order; the summary
            // of those never freed.
            for &(block, rule) in &old.suppressed_live {
                if b.flags[block as usize] & FLAG_NEVER_FREED != 0 {
                    suppressed_live.push((block, rule));
                }
            }
            for i in from..n {
                if b.flags[i] & FLAG_MMAP != 0 {
                    continue;
                }
                let site = b.site[i];
                let rule = *rule_of_site
                    .entry(site)
                    .or_insert_with(|| options.suppressions.rule_of(trace, site));
                let (Some(rule), Ok(id)) = (rule, u32::try_from(i)) else {
                    continue;
                };
                suppressed.push(id);
                if b.flags[i] & FLAG_NEVER_FREED != 0 {
                    suppressed_live.push((id, rule));
                }
            }
            crate::suppress::summarize(trace, &options.suppressions, &suppressed_live)
        });
        tracing::debug!(
            target: "memscape::live",
            blocks = n,
            from,
            nodes = trace.call_tree.len(),
            tuples = tuples.len(),
            moved,
            sites_ms,
            replay_ms,
            suppressed_ms = ms(suppress),
            ms = ms(started),
            "heap grouping continued"
        );
        let own = Sizes::zeros(trie.len());
        let mut totals = old.totals;
        totals.extend(trace);
        let growing = Growing {
            options: options.clone(),
            tuples,
            leaves,
            node_bytes,
            live,
            events: trace.event_count(),
            last_alloc_event: n.checked_sub(1).map(|i| b.alloc_event[i]),
            lines: grouper.lines,
            root,
            nodes: trace.call_tree.len(),
            rule_of_site,
            suppressed_live,
            totals,
        };
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
            carried: Some(Box::new(growing)),
        }
    }

    /// What the next snapshot's [`TraceHeap::continued`] starts from (a copy of the grouping:
    /// this heap stays usable; wrapper detection's state, which only the next snapshot reads,
    /// moved); None for a heap not built by [`TraceHeap::continued`].
    pub fn carry(&mut self) -> Option<HeapCarry> {
        self.carried.as_ref()?;
        let sites = self.sites.handed_on();
        let growing = self.carried.as_deref()?;
        Some(HeapCarry {
            keys: self.keys.clone(),
            trie: self.trie.clone(),
            sites,
            suppressed: self.suppressed.clone(),
            block_leaf: with_room(&self.block_leaf),
            by_free: with_room(&self.by_free),
            free_events: with_room(&self.free_events),
            growing: growing.clone(),
        })
    }
}

/// A copy of a per-block array with room for half as many more values: the next snapshot
/// appends its blocks and frees without moving the copy again.
fn with_room<T: Copy>(values: &[T]) -> Vec<T> {
    let mut copy = Vec::with_capacity(values.len() + values.len() / 2);
    copy.extend_from_slice(values);
    copy
}
