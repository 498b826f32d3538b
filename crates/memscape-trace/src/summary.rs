//! Per-process summaries, who frees what (allocation site × free site, frees across threads),
//! for `info` and the views.

use std::collections::HashMap;

use crate::model::{
    FLAG_ENDED_BY_EXEC, FLAG_MMAP, FLAG_NEVER_FREED, NO_FREE_THREAD, NO_SITE, Trace,
};
use crate::process::ProcessEnd;
use crate::sites::{SiteOptions, Sites};

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
    /// Call-tree nodes of the effective sites, past allocation wrappers on both sides
    /// ([`Sites::site`]; 0: no stack recorded).
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

/// The allocation site × free site table, largest bytes first, at most `limit` rows, with the
/// default [`SiteOptions`]. Empty when the trace recorded no free sites.
pub fn site_pairs(trace: &Trace, limit: usize) -> Vec<SitePair> {
    let b = &trace.blocks;
    if b.free_site.iter().all(|&s| s == NO_SITE) {
        return Vec::new();
    }
    site_pairs_with(trace, &Sites::new(trace, &SiteOptions::default()), limit)
}

/// [`site_pairs`] with resolved sites. Both sides are effective sites: a C++ block's row names
/// `make_node ← operator new`, not `operator new`, and its free `~Registry ← std::_Rb_tree…`,
/// not the standard library's frame; stacks that differ only inside wrappers are one row.
pub fn site_pairs_with(trace: &Trace, sites: &Sites, limit: usize) -> Vec<SitePair> {
    let b = &trace.blocks;
    if b.free_site.iter().all(|&s| s == NO_SITE) {
        return Vec::new();
    }
    // Per raw pair of stacks first (few), then per pair of effective sites, each labelled
    // through its largest raw pair (the wrappers named are that pair's).
    let mut raw: HashMap<(u32, u32), (u64, Vec<u64>)> = HashMap::new();
    for i in freed(trace) {
        let e = raw.entry((b.site[i], b.free_site[i])).or_default();
        e.0 += b.requested_size[i];
        e.1.push(b.free_time_ns[i].saturating_sub(b.alloc_time_ns[i]));
    }
    type Merged = (u64, Vec<u64>, (u64, u32, u32));
    let mut pairs: HashMap<(u32, u32), Merged> = HashMap::new();
    for ((a, f), (bytes, lifetimes)) in raw {
        let e = pairs
            .entry((sites.site(a), sites.site(f)))
            .or_insert_with(|| (0, Vec::new(), (0, a, f)));
        e.0 += bytes;
        e.1.extend(lifetimes);
        if (bytes, std::cmp::Reverse((a, f))) > (e.2.0, std::cmp::Reverse((e.2.1, e.2.2))) {
            e.2 = (bytes, a, f);
        }
    }
    let mut rows: Vec<SitePair> = pairs
        .into_iter()
        .map(
            |((alloc_site, free_site), (bytes, mut lifetimes, (_, a, f)))| {
                let mid = lifetimes.len() / 2;
                let median = *lifetimes.select_nth_unstable(mid).1;
                SitePair {
                    alloc_site,
                    free_site,
                    alloc_location: sites.label(trace, a),
                    free_location: sites.label(trace, f),
                    blocks: lifetimes.len() as u64,
                    bytes,
                    median_lifetime_ns: median,
                }
            },
        )
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

/// The freed blocks (indices) of one row of [`site_pairs`]: allocated at effective site
/// `alloc_site` and freed at `free_site` (default [`SiteOptions`], as [`site_pairs`]), for
/// views that highlight a row.
pub fn site_pair_blocks(trace: &Trace, alloc_site: u32, free_site: u32) -> Vec<u32> {
    let sites = Sites::new(trace, &SiteOptions::default());
    let b = &trace.blocks;
    freed(trace)
        .filter(|&i| sites.site(b.site[i]) == alloc_site && sites.site(b.free_site[i]) == free_site)
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

#[cfg(test)]
mod tests {
    use crate::model::Frame;
    use crate::{TraceBuilder, TraceFormat};

    /// `make_node` allocates through `operator new` from two call paths inside the standard
    /// library (as `std::string` and `std::vector` growth do); `~Registry` frees through
    /// `std::_Rb_tree::_M_erase`. The table names the caller on both sides, in one row (it was
    /// `operator new` → `std::_Rb_tree…`, a row per stack).
    #[test]
    fn a_site_pair_names_the_callers_past_wrappers_on_both_sides() {
        let mut b = TraceBuilder::with_event_times("wrapped.msc");
        let frame = |b: &mut TraceBuilder, parent: u32, name: &str, ip: u64| {
            let function = b.strings.intern(name);
            b.call_tree.child(
                parent,
                Frame {
                    ip,
                    function,
                    ..Frame::default()
                },
            )
        };
        let main = frame(&mut b, 0, "main", 0x10);
        let make = frame(&mut b, main, "make_node(int)", 0x20);
        let string = frame(&mut b, make, "std::string::_M_create(unsigned long&)", 0x30);
        let vector = frame(
            &mut b,
            make,
            "std::vector<int>::_M_default_append(unsigned long)",
            0x40,
        );
        let new_a = frame(&mut b, string, "operator new(unsigned long)", 0x50);
        let new_b = frame(&mut b, vector, "operator new(unsigned long)", 0x50);
        let dtor = frame(&mut b, main, "Registry::~Registry()", 0x60);
        let erase = frame(
            &mut b,
            dtor,
            "std::_Rb_tree<int, int>::_M_erase(int*)",
            0x70,
        );
        let thread = b.thread("main");
        for k in 0..10u64 {
            let site = if k % 2 == 0 { new_a } else { new_b };
            b.alloc(k + 1, k * 10, 0x1000 + k * 64, 64, 64, thread, site);
        }
        for k in 0..10u64 {
            b.free_from(20 + k, 200 + k * 10, 0x1000 + k * 64, thread, erase);
        }
        let trace = b.finish(TraceFormat::Msc, true);
        let pairs = super::site_pairs(&trace, 10);
        assert_eq!(pairs.len(), 1, "{pairs:#?}");
        let p = &pairs[0];
        assert_eq!((p.alloc_site, p.free_site), (make, dtor));
        assert!(
            p.alloc_location.starts_with("make_node"),
            "{}",
            p.alloc_location
        );
        // The wrapper it called, of its largest stack.
        assert!(
            p.alloc_location.contains(" ← std::"),
            "{}",
            p.alloc_location
        );
        assert!(
            p.free_location.starts_with("Registry::~Registry"),
            "{}",
            p.free_location
        );
        assert_eq!((p.blocks, p.bytes), (10, 640));
        assert_eq!(super::site_pair_blocks(&trace, make, dtor).len(), 10);
    }
}
