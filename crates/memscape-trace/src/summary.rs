//! Per-process summaries, who frees what (allocation site × free site, frees across threads),
//! for `info` and the views.

use std::collections::HashMap;

use crate::model::{
    FLAG_ENDED_BY_EXEC, FLAG_MMAP, FLAG_NEVER_FREED, NO_FREE_THREAD, NO_SITE, Trace,
};
use crate::process::ProcessEnd;

/// One process of the trace, as `info` lists it (JSON keys are the field names).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ProcessInfo {
    pub pid: u32,
    pub parent_pid: u32,
    pub command_line: String,
    pub executable: String,
    pub start_ns: u64,
    pub end_ns: u64,
    pub end: ProcessEnd,
    pub events: u64,
    pub allocs: u64,
    pub frees: u64,
    pub unknown_frees: u64,
    /// Frees of blocks inherited from the parent at the fork (not unknown frees).
    pub inherited_frees: u64,
    pub peak_live_bytes: u64,
    pub peak_time_ns: u64,
}

/// The process table of `trace` as `info` reports it.
pub fn processes(trace: &Trace) -> Vec<ProcessInfo> {
    trace
        .processes
        .iter()
        .map(|p| ProcessInfo {
            pid: p.pid,
            parent_pid: p.parent_pid,
            command_line: p.command_line.clone(),
            executable: p.executable.clone(),
            start_ns: p.start_ns,
            end_ns: p.end_ns,
            end: p.end,
            events: p.events,
            allocs: p.allocs,
            frees: p.frees,
            unknown_frees: p.unknown_frees,
            inherited_frees: p.inherited_frees,
            peak_live_bytes: p.peak_live_bytes,
            peak_time_ns: p.peak_time_ns,
        })
        .collect()
}

/// Blocks of one allocation site freed at one free site.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SitePair {
    /// Call-tree nodes (0: no stack recorded).
    pub alloc_site: u32,
    pub free_site: u32,
    pub alloc_location: String,
    pub free_location: String,
    pub blocks: u64,
    /// Requested bytes of those blocks.
    pub bytes: u64,
    /// Median of free time − alloc time.
    pub median_lifetime_ns: u64,
}

/// Frees by one thread of blocks another thread allocated.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ThreadPair {
    /// Indices into [`Trace::threads`].
    pub alloc_thread: u32,
    pub free_thread: u32,
    pub alloc_thread_name: String,
    pub free_thread_name: String,
    pub frees: u64,
    pub bytes: u64,
}

/// Freed heap and pool blocks (not mappings, not never-freed ones).
fn freed(trace: &Trace) -> impl Iterator<Item = usize> + '_ {
    let flags = trace.blocks.flags.as_slice();
    // (A block ended by its image's `exec` was freed by no code.)
    let not_freed = FLAG_NEVER_FREED | FLAG_MMAP | FLAG_ENDED_BY_EXEC;
    (0..flags.len()).filter(move |&i| flags[i] & not_freed == 0)
}

/// The allocation site × free site table, largest bytes first, at most `limit` rows. Empty
/// when the trace recorded no free sites.
pub fn site_pairs(trace: &Trace, limit: usize) -> Vec<SitePair> {
    let b = &trace.blocks;
    if b.free_site.iter().all(|&s| s == NO_SITE) {
        return Vec::new();
    }
    let mut pairs: HashMap<(u32, u32), (u64, Vec<u64>)> = HashMap::new();
    for i in freed(trace) {
        let e = pairs.entry((b.site[i], b.free_site[i])).or_default();
        e.0 += b.requested_size[i];
        e.1.push(b.free_time_ns[i].saturating_sub(b.alloc_time_ns[i]));
    }
    let mut rows: Vec<SitePair> = pairs
        .into_iter()
        .map(|((alloc_site, free_site), (bytes, mut lifetimes))| {
            let mid = lifetimes.len() / 2;
            let median = *lifetimes.select_nth_unstable(mid).1;
            SitePair {
                alloc_site,
                free_site,
                alloc_location: trace.describe_frame(alloc_site),
                free_location: trace.describe_frame(free_site),
                blocks: lifetimes.len() as u64,
                bytes,
                median_lifetime_ns: median,
            }
        })
        .collect();
    rows.sort_unstable_by(|a, b| {
        b.bytes
            .cmp(&a.bytes)
            .then(b.blocks.cmp(&a.blocks))
            .then((a.alloc_site, a.free_site).cmp(&(b.alloc_site, b.free_site)))
    });
    rows.truncate(limit);
    rows
}

/// The freed blocks (indices) of one row of [`site_pairs`]: allocated at `alloc_site` and
/// freed at `free_site`, for views that highlight a row.
pub fn site_pair_blocks(trace: &Trace, alloc_site: u32, free_site: u32) -> Vec<u32> {
    let b = &trace.blocks;
    freed(trace)
        .filter(|&i| b.site[i] == alloc_site && b.free_site[i] == free_site)
        .map(|i| i as u32)
        .collect()
}

/// The blocks (indices) of one row of [`cross_thread_frees`]: allocated by `alloc_thread`,
/// freed by `free_thread`.
pub fn thread_pair_blocks(trace: &Trace, alloc_thread: u32, free_thread: u32) -> Vec<u32> {
    let b = &trace.blocks;
    freed(trace)
        .filter(|&i| b.thread[i] == alloc_thread && b.free_thread[i] == free_thread.wrapping_add(1))
        .map(|i| i as u32)
        .collect()
}

/// Frees from another thread than the allocating one, per (allocating, freeing) thread pair,
/// most frees first.
pub fn cross_thread_frees(trace: &Trace) -> Vec<ThreadPair> {
    let b = &trace.blocks;
    let mut pairs: HashMap<(u32, u32), (u64, u64)> = HashMap::new();
    for i in freed(trace) {
        let by = b.free_thread[i];
        if by == NO_FREE_THREAD || by - 1 == b.thread[i] {
            continue;
        }
        let e = pairs.entry((b.thread[i], by - 1)).or_default();
        e.0 += 1;
        e.1 += b.requested_size[i];
    }
    let mut rows: Vec<ThreadPair> = pairs
        .into_iter()
        .map(|((a, f), (frees, bytes))| ThreadPair {
            alloc_thread: a,
            free_thread: f,
            alloc_thread_name: trace.thread_name(a).to_owned(),
            free_thread_name: trace.thread_name(f).to_owned(),
            frees,
            bytes,
        })
        .collect();
    rows.sort_unstable_by(|a, b| {
        b.frees
            .cmp(&a.frees)
            .then((a.alloc_thread, a.free_thread).cmp(&(b.alloc_thread, b.free_thread)))
    });
    rows
}
