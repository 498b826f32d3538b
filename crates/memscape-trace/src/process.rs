//! Processes and pools: the process table of a multi-process recording (each process its own
//! address space), the pools a custom allocator declared, and selecting processes out of a
//! trace ([`select_processes`]).

use crate::model::{
    BlockColumns, Column, FLAG_ENDED_BY_EXEC, FLAG_FREED_BY_REALLOC, FLAG_MMAP, FLAG_NEVER_FREED,
    FLAG_POOL, NO_FREE_THREAD, Trace, TraceMeta,
};

/// How a process image ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ProcessEnd {
    /// Not known (the input does not say, or nobody saw it end).
    #[default]
    Unknown,
    /// `exit(code)` or return from `main`.
    Exited { code: i32 },
    /// Killed by a signal.
    Signaled { signal: i32 },
    /// Replaced by another image through `exec` (the next image has the same pid).
    Exec,
    /// Still running when the recording ended (Ctrl-C, or a daemon left running).
    Running,
}

impl std::fmt::Display for ProcessEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProcessEnd::Unknown => write!(f, "?"),
            ProcessEnd::Exited { code } => write!(f, "exit {code}"),
            ProcessEnd::Signaled { signal } => write!(f, "signal {signal}"),
            ProcessEnd::Exec => write!(f, "exec"),
            ProcessEnd::Running => write!(f, "running"),
        }
    }
}

/// One process image (a `fork` makes a new one, so does an `exec`, with the same pid).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Process {
    /// 0 when the input does not say.
    pub pid: u32,
    pub parent_pid: u32,
    /// Arguments joined by spaces.
    pub command_line: String,
    /// Path of the executable image.
    #[serde(default)]
    pub executable: String,
    /// ns since the trace's time 0 (the earliest process start).
    pub start_ns: u64,
    /// ns since time 0; the last event's time when the end was not seen.
    pub end_ns: u64,
    #[serde(default)]
    pub end: ProcessEnd,
    /// Events of this process (allocs, frees, frees of nothing, mappings, pool events).
    pub events: u64,
    pub allocs: u64,
    pub frees: u64,
    #[serde(default)]
    pub unknown_frees: u64,
    /// Frees, in a forked child, of blocks it inherited from its parent at the fork (the
    /// parent's blocks: they end nothing in this process and are not unknown frees).
    #[serde(default)]
    pub inherited_frees: u64,
    /// The most heap bytes (requested) this process had live at once.
    pub peak_live_bytes: u64,
    #[serde(default)]
    pub peak_time_ns: u64,
}

impl Process {
    /// The one process of a single-process trace, from its metadata.
    pub fn from_meta(meta: &TraceMeta) -> Self {
        Self {
            command_line: meta.command_line.clone(),
            end_ns: meta.end_time_ns,
            events: meta.events,
            allocs: meta.allocs,
            frees: meta.frees,
            unknown_frees: meta.unknown_frees,
            peak_live_bytes: meta.peak_live_bytes,
            peak_time_ns: meta.peak_time_ns,
            ..Self::default()
        }
    }

    /// The program's name: the executable's file name, else the first word of the command line.
    pub fn name(&self) -> &str {
        let exe = self.executable.rsplit('/').next().unwrap_or("");
        if !exe.is_empty() {
            return exe;
        }
        let first = self.command_line.split(' ').next().unwrap_or("");
        first.rsplit('/').next().unwrap_or(first)
    }
}

/// A pool a custom allocator declared through `memscape.h` (`memscape_pool_declare`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Pool {
    pub name: String,
    /// Index into [`Trace::processes`].
    pub process: u32,
    /// Address range `[start, end)` of the pool's memory.
    pub start: u64,
    pub end: u64,
    /// Size of each of its blocks (0: variable-sized blocks).
    pub block_size: u64,
    /// When it was declared, ns since time 0.
    pub declared_ns: u64,
}

/// Which processes to keep: a pid, or a regular expression matched against the program name
/// (or, when it matches no program name, against the command line).
#[derive(Debug, Clone)]
pub enum ProcessFilter {
    Pid(u32),
    /// Several pids, `PID,PID,…` (what the GUI's process checklist writes).
    Pids(Vec<u32>),
    Name(regex::Regex),
}

impl ProcessFilter {
    /// `PID` (digits), `PID,PID,…` or `NAME-REGEX`.
    pub fn parse(text: &str) -> Result<Self, regex::Error> {
        if let Ok(pid) = text.trim().parse::<u32>() {
            return Ok(Self::Pid(pid));
        }
        let pids: Result<Vec<u32>, _> = text.split(',').map(|p| p.trim().parse::<u32>()).collect();
        if let Ok(pids) = pids {
            return Ok(Self::Pids(pids));
        }
        regex::Regex::new(text).map(Self::Name)
    }

    /// Which processes of `trace` match. A name regex keeps the processes whose program name it
    /// matches, and only when it matches none of them those whose command line it matches:
    /// through a version-manager shim `python` names the interpreter, not each of the shim's
    /// shell scripts whose command line mentions it, while `work.py` still finds the
    /// interpreter that runs that script.
    pub fn select(&self, trace: &Trace) -> Vec<bool> {
        let each = |keep: &dyn Fn(&Process) -> bool| trace.processes.iter().map(keep).collect();
        match self {
            Self::Pid(pid) => each(&|p| p.pid == *pid),
            Self::Pids(pids) => each(&|p| pids.contains(&p.pid)),
            Self::Name(re) => {
                let by_name: Vec<bool> = each(&|p| re.is_match(p.name()));
                if by_name.contains(&true) {
                    by_name
                } else {
                    each(&|p| re.is_match(&p.command_line))
                }
            }
        }
    }
}

/// A command line as one line of text: runs of whitespace (a `python3 -c` script's newlines
/// and indents) as one space. For labels and text reports; the model keeps it as recorded.
pub fn one_line(command_line: &str) -> String {
    command_line
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// `pid name` of every process of `trace`, comma-separated: what an error lists when a filter
/// names none of them.
pub fn process_list(trace: &Trace) -> String {
    let names: Vec<String> = trace
        .processes
        .iter()
        .map(|p| format!("{} {}", p.pid, p.name()))
        .collect();
    names.join(", ")
}

/// Processes of `trace` with at least one event.
pub fn with_events(trace: &Trace) -> usize {
    trace.processes.iter().filter(|p| p.events > 0).count()
}

/// Whether more than one process of `trace` has events (views then split by process).
pub fn several_with_events(trace: &Trace) -> bool {
    with_events(trace) > 1
}

/// Among the processes `keep` admits, the one whose heap a single-process view shows by
/// default: the largest peak (then the most events, then the earliest). `None` when none is
/// admitted.
pub fn largest_peak(trace: &Trace, keep: &[bool]) -> Option<usize> {
    (0..trace.processes.len())
        .filter(|&i| keep.get(i).copied().unwrap_or(false))
        .max_by_key(|&i| {
            let p = &trace.processes[i];
            (p.peak_live_bytes, p.events, usize::MAX - i)
        })
}

/// The trace restricted to the processes whose `keep` entry is true: their blocks, threads and
/// pools, events renumbered in their order, counts and peaks recomputed. Frees that matched no
/// block have no event here (they stay counted in each process's `unknown_frees`).
pub fn select_processes(trace: &Trace, keep: &[bool]) -> Trace {
    let kept = |p: u32| keep.get(p as usize).copied().unwrap_or(false);
    let b = &trace.blocks;
    // New indices of processes, threads (1-based for free_thread) and pools.
    let process_map = renumber(trace.processes.len(), |i| kept(i as u32));
    let thread_map = renumber(trace.threads.len(), |i| {
        kept(trace.thread_process.get(i).copied().unwrap_or(0))
    });
    let pool_map = renumber(trace.pools.len(), |i| kept(trace.pools[i].process));
    let rows: Vec<usize> = (0..b.len()).filter(|&i| kept(b.process[i])).collect();
    let is_kept_block: Vec<bool> = {
        let mut v = vec![false; b.len()];
        rows.iter().for_each(|&i| v[i] = true);
        v
    };
    // New event numbers: the kept blocks' events in their old order.
    let order = trace.event_order();
    let mut new_event = vec![u64::MAX; order.len()];
    let mut events = 0u64;
    let (mut live, mut peak, mut peak_event, mut peak_time) = (0u64, 0u64, 0u64, 0u64);
    for (e, &entry) in order.iter().enumerate() {
        if entry == u32::MAX
            || !is_kept_block
                .get((entry >> 1) as usize)
                .copied()
                .unwrap_or(false)
        {
            continue;
        }
        new_event[e] = events;
        let block = (entry >> 1) as usize;
        if b.flags[block] & (FLAG_MMAP | FLAG_POOL) == 0 {
            if entry & 1 == 0 {
                live = live.saturating_add(b.requested_size[block]);
                if live > peak {
                    (peak, peak_event, peak_time) = (live, events, b.alloc_time_ns[block]);
                }
            } else {
                live = live.saturating_sub(b.requested_size[block]);
            }
        }
        events += 1;
    }
    let pick_u64 =
        |c: &Column<u64>| -> Column<u64> { rows.iter().map(|&i| c[i]).collect::<Vec<_>>().into() };
    let event_of = |e: u64, never: bool| {
        if never {
            events
        } else {
            usize::try_from(e)
                .ok()
                .and_then(|e| new_event.get(e).copied())
                .filter(|&n| n != u64::MAX)
                .unwrap_or(events)
        }
    };
    let never = |i: usize| b.flags[i] & FLAG_NEVER_FREED != 0;
    // Ended by `exec`: not freed either, but each its own event.
    let exec = |i: usize| b.flags[i] & FLAG_ENDED_BY_EXEC != 0;
    let map_u32 = |c: &Column<u32>, f: &dyn Fn(u32) -> u32| -> Column<u32> {
        rows.iter().map(|&i| f(c[i])).collect::<Vec<_>>().into()
    };
    let blocks = BlockColumns {
        address: pick_u64(&b.address),
        size: pick_u64(&b.size),
        requested_size: pick_u64(&b.requested_size),
        usable_size: pick_u64(&b.usable_size),
        alloc_time_ns: pick_u64(&b.alloc_time_ns),
        free_time_ns: pick_u64(&b.free_time_ns),
        alloc_event: rows
            .iter()
            .map(|&i| event_of(b.alloc_event[i], false))
            .collect::<Vec<_>>()
            .into(),
        free_event: rows
            .iter()
            .map(|&i| event_of(b.free_event[i], never(i)))
            .collect::<Vec<_>>()
            .into(),
        thread: map_u32(&b.thread, &|t| {
            thread_map.get(t as usize).copied().flatten().unwrap_or(0)
        }),
        site: map_u32(&b.site, &|s| s),
        flags: rows.iter().map(|&i| b.flags[i]).collect::<Vec<_>>().into(),
        process: map_u32(&b.process, &|p| {
            process_map.get(p as usize).copied().flatten().unwrap_or(0)
        }),
        free_site: map_u32(&b.free_site, &|s| s),
        free_thread: map_u32(&b.free_thread, &|t| match t {
            NO_FREE_THREAD => NO_FREE_THREAD,
            t => thread_map
                .get(t as usize - 1)
                .copied()
                .flatten()
                .map_or(NO_FREE_THREAD, |t| t + 1),
        }),
        pool: map_u32(&b.pool, &|p| match p {
            0 => 0,
            p => pool_map
                .get(p as usize - 1)
                .copied()
                .flatten()
                .map_or(0, |p| p + 1),
        }),
    };
    let count = |pred: &dyn Fn(usize) -> bool| rows.iter().filter(|&&i| pred(i)).count() as u64;
    let heap = |i: usize| b.flags[i] & (FLAG_MMAP | FLAG_POOL) == 0;
    let mut meta = trace.meta.clone();
    meta.events = events;
    meta.allocs = count(&heap);
    meta.frees = count(&|i| heap(i) && !never(i) && !exec(i));
    meta.reallocs = count(&|i| heap(i) && b.flags[i] & FLAG_FREED_BY_REALLOC != 0);
    meta.mmaps = count(&|i| b.flags[i] & FLAG_MMAP != 0);
    meta.munmaps = count(&|i| b.flags[i] & FLAG_MMAP != 0 && !never(i) && !exec(i));
    meta.pool_allocs = count(&|i| b.flags[i] & FLAG_POOL != 0);
    meta.pool_frees = count(&|i| b.flags[i] & FLAG_POOL != 0 && !never(i) && !exec(i));
    meta.exec_ends = count(&exec);
    meta.unknown_frees = 0;
    meta.inherited_frees = 0;
    meta.double_frees = 0;
    meta.peak_live_bytes = peak;
    meta.peak_event = peak_event;
    meta.peak_time_ns = peak_time;
    meta.end_live_bytes = live;
    let processes: Vec<_> = trace
        .processes
        .iter()
        .enumerate()
        .filter(|&(i, _)| kept(i as u32))
        .map(|(_, p)| p.clone())
        .collect();
    if let [only] = processes.as_slice() {
        meta.command_line = only.command_line.clone();
    }
    let threads = (0..trace.threads.len())
        .filter(|&i| thread_map[i].is_some())
        .map(|i| trace.threads[i])
        .collect();
    let thread_process = (0..trace.threads.len())
        .filter(|&i| thread_map[i].is_some())
        .map(|i| {
            let p = trace.thread_process.get(i).copied().unwrap_or(0);
            process_map.get(p as usize).copied().flatten().unwrap_or(0)
        })
        .collect();
    let pools = trace
        .pools
        .iter()
        .filter(|p| kept(p.process))
        .map(|p| crate::process::Pool {
            process: process_map
                .get(p.process as usize)
                .copied()
                .flatten()
                .unwrap_or(0),
            ..p.clone()
        })
        .collect();
    Trace {
        meta,
        blocks,
        strings: trace.strings.clone(),
        call_tree: trace.call_tree.clone(),
        threads,
        thread_process,
        processes,
        pools,
        warnings: trace.warnings.clone(),
        event_order_cache: Default::default(),
    }
}

/// New index of each of `n` items, `None` for the ones dropped.
fn renumber(n: usize, keep: impl Fn(usize) -> bool) -> Vec<Option<u32>> {
    let mut next = 0u32;
    (0..n)
        .map(|i| {
            keep(i).then(|| {
                next += 1;
                next - 1
            })
        })
        .collect()
}
