//! Allocation traces as Parquet datasets: blocks and events partitioned by host, process and
//! time window; processes, threads and the call-site tree per host.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, StringArray, UInt8Array, UInt32Array, UInt64Array};
use memscape_trace::model::BlockColumns;
use memscape_trace::process::{Pool, Process, ProcessEnd};
use memscape_trace::{Frame, Trace, TraceMeta, TraceParts};

use crate::schema::{self, Columns, EVENT_ALLOC, EVENT_FREE};
use crate::{DatasetKind, HostEntry, Manifest, Result, invalid, partition_dir, partition_files};

/// The tables of a trace dataset.
pub const TRACE_TABLES: [&str; 6] = [
    "blocks",
    "events",
    "processes",
    "threads",
    "call_sites",
    "pools",
];

/// How to write a trace.
#[derive(Debug, Clone)]
pub struct TraceWriteOptions {
    /// The host partition (`host=NAME`); writing another host into the same directory adds it.
    pub host: String,
    /// Number of time windows the trace's duration is cut into (at least 1).
    pub windows: u64,
}

impl Default for TraceWriteOptions {
    fn default() -> Self {
        Self {
            host: String::from("local"),
            windows: 16,
        }
    }
}

/// What was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteSummary {
    pub files: usize,
    pub rows: u64,
    pub events: u64,
}

/// The process, free site, freeing thread and pool of block `i`.
fn block_extra(trace: &Trace, i: usize) -> (u32, u32, u32, u32) {
    let b = &trace.blocks;
    (b.process[i], b.free_site[i], b.free_thread[i], b.pool[i])
}

/// A process end as the `processes.end` column writes it.
fn end_text(end: ProcessEnd) -> String {
    match end {
        ProcessEnd::Unknown => String::from("unknown"),
        ProcessEnd::Exited { code } => format!("exit {code}"),
        ProcessEnd::Signaled { signal } => format!("signal {signal}"),
        ProcessEnd::Exec => String::from("exec"),
        ProcessEnd::Running => String::from("running"),
    }
}

fn parse_end(text: &str) -> Option<ProcessEnd> {
    let number = |s: &str| s.trim().parse::<i32>().ok();
    match text {
        "unknown" => Some(ProcessEnd::Unknown),
        "exec" => Some(ProcessEnd::Exec),
        "running" => Some(ProcessEnd::Running),
        _ => {
            if let Some(code) = text.strip_prefix("exit ") {
                number(code).map(|code| ProcessEnd::Exited { code })
            } else {
                number(text.strip_prefix("signal ")?).map(|signal| ProcessEnd::Signaled { signal })
            }
        }
    }
}

/// Writes `trace` into the dataset at `dir` (created if missing) as host `options.host`,
/// replacing that host's partitions if it was written before.
pub fn write_trace(trace: &Trace, dir: &Path, options: &TraceWriteOptions) -> Result<WriteSummary> {
    crate::check_host(&options.host).map_err(|why| invalid(dir, why))?;
    if !trace.blocks.is_consistent() {
        return Err(invalid(dir, "the trace's block columns differ in length"));
    }
    std::fs::create_dir_all(dir).map_err(crate::io_err(dir))?;
    let mut manifest = Manifest::open_or_new(dir, DatasetKind::Trace)?;
    crate::remove_host(dir, &TRACE_TABLES, &options.host)?;
    let host = options.host.as_str();
    let window = trace
        .meta
        .end_time_ns
        .saturating_add(1)
        .div_ceil(options.windows.max(1))
        .max(1);
    let mut files = 0usize;
    let b = &trace.blocks;
    let n = b.len();

    // Blocks, grouped by (process, window of the allocation time).
    let mut groups: BTreeMap<(u32, u64), Vec<u32>> = BTreeMap::new();
    for i in 0..n {
        let key = (block_extra(trace, i).0, b.alloc_time_ns[i] / window);
        groups.entry(key).or_default().push(i as u32);
    }
    for (&(process, w), rows) in &groups {
        let path =
            partition_dir(dir, "blocks", host, Some(process), Some(w)).join("part-0.parquet");
        let pick64 = |col: &[u64]| -> ArrayRef {
            Arc::new(UInt64Array::from_iter_values(
                rows.iter().map(|&r| col[r as usize]),
            ))
        };
        let pick32 = |col: &[u32]| -> ArrayRef {
            Arc::new(UInt32Array::from_iter_values(
                rows.iter().map(|&r| col[r as usize]),
            ))
        };
        let extra = |k: usize| -> ArrayRef {
            Arc::new(UInt32Array::from_iter_values(rows.iter().map(|&r| {
                let e = block_extra(trace, r as usize);
                [e.0, e.1, e.2, e.3][k]
            })))
        };
        let columns: Vec<ArrayRef> = vec![
            Arc::new(UInt64Array::from_iter_values(
                rows.iter().map(|&r| u64::from(r)),
            )),
            pick64(&b.address),
            pick64(&b.size),
            pick64(&b.requested_size),
            pick64(&b.usable_size),
            pick64(&b.alloc_time_ns),
            pick64(&b.free_time_ns),
            pick64(&b.alloc_event),
            pick64(&b.free_event),
            pick32(&b.thread),
            pick32(&b.site),
            Arc::new(UInt8Array::from_iter_values(
                rows.iter().map(|&r| b.flags[r as usize]),
            )),
            extra(1),
            extra(2),
            extra(3),
        ];
        schema::write_batch(&path, &schema::batch(&path, schema::blocks(), columns)?)?;
        files += 1;
    }
    drop(groups);

    // Events in event order, grouped by (process, window of the event's time).
    let order = trace.event_order();
    let mut groups: BTreeMap<(u32, u64), Vec<u64>> = BTreeMap::new();
    let mut events = 0u64;
    for (e, &entry) in order.iter().enumerate() {
        if entry == u32::MAX {
            continue;
        }
        let (block, free) = ((entry >> 1) as usize, entry & 1 == 1);
        if block >= n {
            continue;
        }
        let time = if free {
            b.free_time_ns[block]
        } else {
            b.alloc_time_ns[block]
        };
        let key = (block_extra(trace, block).0, time / window);
        groups.entry(key).or_default().push(e as u64);
        events += 1;
    }
    for (&(process, w), rows) in &groups {
        let path =
            partition_dir(dir, "events", host, Some(process), Some(w)).join("part-0.parquet");
        let decode = |e: u64| {
            let entry = order[e as usize];
            ((entry >> 1) as usize, entry & 1 == 1)
        };
        let col64 = |f: &dyn Fn(usize, bool) -> u64| -> ArrayRef {
            Arc::new(UInt64Array::from_iter_values(rows.iter().map(|&e| {
                let (blk, free) = decode(e);
                f(blk, free)
            })))
        };
        let col32 = |f: &dyn Fn(usize, bool) -> u32| -> ArrayRef {
            Arc::new(UInt32Array::from_iter_values(rows.iter().map(|&e| {
                let (blk, free) = decode(e);
                f(blk, free)
            })))
        };
        let col8 = |f: &dyn Fn(usize, bool) -> u8| -> ArrayRef {
            Arc::new(UInt8Array::from_iter_values(rows.iter().map(|&e| {
                let (blk, free) = decode(e);
                f(blk, free)
            })))
        };
        let columns: Vec<ArrayRef> = vec![
            Arc::new(UInt64Array::from_iter_values(rows.iter().copied())),
            col64(&|blk, free| {
                if free {
                    b.free_time_ns[blk]
                } else {
                    b.alloc_time_ns[blk]
                }
            }),
            col8(&|_, free| if free { EVENT_FREE } else { EVENT_ALLOC }),
            col64(&|blk, _| blk as u64),
            col64(&|blk, _| b.address[blk]),
            col64(&|blk, _| b.requested_size[blk]),
            col32(&|blk, free| {
                let (_, _, free_thread, _) = block_extra(trace, blk);
                if free && free_thread != 0 {
                    free_thread - 1
                } else {
                    b.thread[blk]
                }
            }),
            col32(&|blk, free| {
                if free {
                    block_extra(trace, blk).1
                } else {
                    b.site[blk]
                }
            }),
            col8(&|blk, _| b.flags[blk]),
        ];
        schema::write_batch(&path, &schema::batch(&path, schema::events(), columns)?)?;
        files += 1;
    }

    files += write_small_tables(trace, dir, host)?;
    let meta = serde_json::to_value(&trace.meta).map_err(|e| invalid(dir, e.to_string()))?;
    manifest.hosts.insert(
        options.host.clone(),
        HostEntry {
            window,
            window_origin: 0,
            rows: n as u64,
            events,
            meta,
        },
    );
    manifest.write(dir)?;
    Ok(WriteSummary {
        files,
        rows: n as u64,
        events,
    })
}

fn strings(values: impl Iterator<Item = String>) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(values))
}

pub(crate) fn write_small_tables(trace: &Trace, dir: &Path, host: &str) -> Result<usize> {
    let path = partition_dir(dir, "processes", host, None, None).join("part-0.parquet");
    let ps = &trace.processes;
    let p64 = |f: &dyn Fn(&Process) -> u64| -> ArrayRef {
        Arc::new(UInt64Array::from_iter_values(ps.iter().map(f)))
    };
    let p32 = |f: &dyn Fn(&Process) -> u32| -> ArrayRef {
        Arc::new(UInt32Array::from_iter_values(ps.iter().map(f)))
    };
    let columns: Vec<ArrayRef> = vec![
        Arc::new(UInt32Array::from_iter_values(0..ps.len() as u32)),
        p32(&|p| p.pid),
        p32(&|p| p.parent_pid),
        strings(ps.iter().map(|p| p.command_line.clone())),
        strings(ps.iter().map(|p| p.executable.clone())),
        p64(&|p| p.start_ns),
        p64(&|p| p.end_ns),
        strings(ps.iter().map(|p| end_text(p.end))),
        p64(&|p| p.events),
        p64(&|p| p.allocs),
        p64(&|p| p.frees),
        p64(&|p| p.unknown_frees),
        p64(&|p| p.inherited_frees),
        p64(&|p| p.peak_live_bytes),
        p64(&|p| p.peak_time_ns),
    ];
    schema::write_batch(&path, &schema::batch(&path, schema::processes(), columns)?)?;

    let path = partition_dir(dir, "pools", host, None, None).join("part-0.parquet");
    let pools = &trace.pools;
    let columns: Vec<ArrayRef> = vec![
        Arc::new(UInt32Array::from_iter_values(0..pools.len() as u32)),
        strings(pools.iter().map(|p| p.name.clone())),
        Arc::new(UInt32Array::from_iter_values(
            pools.iter().map(|p| p.process),
        )),
        Arc::new(UInt64Array::from_iter_values(pools.iter().map(|p| p.start))),
        Arc::new(UInt64Array::from_iter_values(pools.iter().map(|p| p.end))),
        Arc::new(UInt64Array::from_iter_values(
            pools.iter().map(|p| p.block_size),
        )),
        Arc::new(UInt64Array::from_iter_values(
            pools.iter().map(|p| p.declared_ns),
        )),
    ];
    schema::write_batch(&path, &schema::batch(&path, schema::pools(), columns)?)?;

    let path = partition_dir(dir, "threads", host, None, None).join("part-0.parquet");
    let t = trace.threads.len() as u32;
    let columns: Vec<ArrayRef> = vec![
        Arc::new(UInt32Array::from_iter_values(0..t)),
        strings(
            trace
                .threads
                .iter()
                .map(|&id| trace.strings.get(id).to_owned()),
        ),
        Arc::new(UInt32Array::from_iter_values(
            (0..t as usize).map(|i| trace.thread_process.get(i).copied().unwrap_or(0)),
        )),
    ];
    schema::write_batch(&path, &schema::batch(&path, schema::threads(), columns)?)?;

    let path = partition_dir(dir, "call_sites", host, None, None).join("part-0.parquet");
    let tree = &trace.call_tree;
    let f = &tree.frames;
    let s = |id: u32| trace.strings.get(id).to_owned();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(UInt32Array::from_iter_values(0..tree.len() as u32)),
        Arc::new(UInt32Array::from(tree.parent.clone())),
        Arc::new(UInt64Array::from_iter_values(f.iter().map(|x| x.ip))),
        strings(f.iter().map(|x| s(x.function))),
        strings(f.iter().map(|x| s(x.file))),
        Arc::new(UInt32Array::from_iter_values(f.iter().map(|x| x.line))),
        strings(f.iter().map(|x| s(x.module))),
        Arc::new(UInt64Array::from_iter_values(
            f.iter().map(|x| x.module_offset),
        )),
    ];
    schema::write_batch(&path, &schema::batch(&path, schema::call_sites(), columns)?)?;
    Ok(4)
}

/// Interns strings for the trace being read.
#[derive(Default)]
struct Interner {
    strings: Vec<String>,
    index: HashMap<String, u32>,
}

impl Interner {
    fn new() -> Self {
        let mut s = Self::default();
        s.id("");
        s
    }
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.index.get(s) {
            return id;
        }
        let id = self.strings.len() as u32;
        self.strings.push(s.to_owned());
        self.index.insert(s.to_owned(), id);
        id
    }
}

/// Reads host `host` (the only one when `None`) of the trace dataset at `dir` back into a
/// [`Trace`], checked like any loaded trace.
pub fn read_trace(dir: &Path, host: Option<&str>) -> Result<Trace> {
    read_trace_with(dir, host, true)
}

/// [`read_trace`] without the blocks: the call tree, threads, processes, pools and meta of
/// host `host` (what the query engine's results are named and grouped by).
pub fn read_trace_skeleton(dir: &Path, host: Option<&str>) -> Result<Trace> {
    read_trace_with(dir, host, false)
}

/// The first blocks of a trace dataset's host: what [`read_trace_head`] returns.
pub struct TraceHead {
    /// The skeleton (call tree, threads, processes, pools, the whole trace's meta) with the
    /// blocks `0..limit` (the first allocated; every block when the host holds at most `limit`).
    pub trace: Trace,
    /// Blocks of the host in the dataset (its manifest's count).
    pub total: u64,
    /// Block rows decoded from the files to find them (at most the head and the rest of the
    /// batches read last per file: the read's bound, which tests assert).
    pub rows_read: u64,
}

/// At most `limit` blocks of host `host` (the only one when `None`) of the trace dataset at
/// `dir`, the first allocated (ids `0..limit`), read window by window in time order and stopped
/// once every one is found: what a view drawing from a query engine keeps in memory, without
/// reading every block. Every block when the host holds at most `limit`.
pub fn read_trace_head(dir: &Path, host: Option<&str>, limit: usize) -> Result<TraceHead> {
    let manifest = Manifest::read(dir)?;
    let picked = manifest.pick_host(dir, host)?;
    let total = manifest.hosts.get(&picked).map_or(0, |e| e.rows);
    let (trace, rows_read) = read_trace_bounded(dir, Some(&picked), Some(limit))?;
    Ok(TraceHead {
        trace,
        total,
        rows_read,
    })
}

fn read_trace_with(dir: &Path, host: Option<&str>, with_blocks: bool) -> Result<Trace> {
    if with_blocks {
        return read_trace_bounded(dir, host, None).map(|(trace, _)| trace);
    }
    read_trace_parts(dir, host, None)
}

/// Every block (`limit` None) or the first `limit`, with the rows decoded to find them.
fn read_trace_bounded(
    dir: &Path,
    host: Option<&str>,
    limit: Option<usize>,
) -> Result<(Trace, u64)> {
    let mut rows_read = 0u64;
    let trace = read_trace_parts(dir, host, Some((limit, &mut rows_read)))?;
    Ok((trace, rows_read))
}

/// The trace of host `host`; its blocks when `blocks` asks (all of them, or the first `limit`,
/// counting the rows decoded).
fn read_trace_parts(
    dir: &Path,
    host: Option<&str>,
    blocks: Option<(Option<usize>, &mut u64)>,
) -> Result<Trace> {
    let manifest = Manifest::read(dir)?;
    if manifest.kind != DatasetKind::Trace {
        return Err(invalid(
            dir,
            "is a samples dataset, not an allocation trace",
        ));
    }
    let host = manifest.pick_host(dir, host)?;
    let entry = &manifest.hosts[&host];
    let mut meta: TraceMeta = serde_json::from_value(entry.meta.clone()).map_err(|e| {
        invalid(
            &dir.join(crate::MANIFEST),
            format!("host {host:?} meta: {e}"),
        )
    })?;
    meta.source = dir.display().to_string();
    let mut interner = Interner::new();

    // Call sites: rows may come in any order; nodes must be 0..n.
    let mut nodes: Vec<(u32, u32, Frame)> = Vec::new();
    for file in partition_files(dir, "call_sites", Some(&host))? {
        for batch in schema::read_file(&file.path)? {
            let c = Columns::new(&file.path, &batch);
            let (node, parent, ip) = (c.u32("node")?, c.u32("parent")?, c.u64("ip")?);
            let (function, source, module) = (c.str("function")?, c.str("file")?, c.str("module")?);
            let (line, offset) = (c.u32("line")?, c.u64("module_offset")?);
            for r in 0..batch.num_rows() {
                let frame = Frame {
                    ip: ip[r],
                    function: interner.id(function[r]),
                    file: interner.id(source[r]),
                    line: line[r],
                    module: interner.id(module[r]),
                    module_offset: offset[r],
                };
                nodes.push((node[r], parent[r], frame));
            }
        }
    }
    nodes.sort_by_key(|n| n.0);
    if nodes.iter().enumerate().any(|(i, n)| n.0 as usize != i) {
        return Err(invalid(dir, "call_sites: node ids are not 0, 1, 2, …"));
    }
    let (call_parent, frames) = nodes.into_iter().map(|(_, p, f)| (p, f)).unzip();

    let mut thread_rows: Vec<(u32, u32, u32)> = Vec::new();
    for file in partition_files(dir, "threads", Some(&host))? {
        for batch in schema::read_file(&file.path)? {
            let c = Columns::new(&file.path, &batch);
            let (thread, name, process) = (c.u32("thread")?, c.str("name")?, c.u32("process")?);
            for r in 0..batch.num_rows() {
                thread_rows.push((thread[r], interner.id(name[r]), process[r]));
            }
        }
    }
    thread_rows.sort_by_key(|t| t.0);
    if thread_rows
        .iter()
        .enumerate()
        .any(|(i, t)| t.0 as usize != i)
    {
        return Err(invalid(dir, "threads: thread ids are not 0, 1, 2, …"));
    }

    let processes = read_processes(dir, &host)?;
    let pools = read_pools(dir, &host)?;
    let blocks = match blocks {
        Some((Some(limit), rows_read)) if (limit as u64) < entry.rows => {
            read_blocks_head(dir, &host, limit, rows_read)?
        }
        // Every block: no limit, or one the host does not pass.
        Some((_, rows_read)) => {
            *rows_read = entry.rows;
            read_blocks(dir, &host, entry.rows)?
        }
        None => Default::default(),
    };
    let parts = TraceParts {
        meta: Some(meta),
        blocks,
        strings: interner.strings,
        call_parent,
        frames,
        threads: thread_rows.iter().map(|t| t.1).collect(),
        thread_process: thread_rows.iter().map(|t| t.2).collect(),
        processes,
        pools,
        warnings: Default::default(),
    };
    Trace::from_parts(parts).map_err(|e| invalid(dir, format!("host {host:?}: {e}")))
}

fn read_processes(dir: &Path, host: &str) -> Result<Vec<Process>> {
    let mut rows: Vec<(u32, Process)> = Vec::new();
    for file in partition_files(dir, "processes", Some(host))? {
        for batch in schema::read_file(&file.path)? {
            let c = Columns::new(&file.path, &batch);
            let (id, pid, ppid) = (c.u32("process")?, c.u32("pid")?, c.u32("parent_pid")?);
            let (cmd, exe, end) = (c.str("command_line")?, c.str("executable")?, c.str("end")?);
            let u = |name| c.u64(name);
            let (start, stop, events) = (u("start_ns")?, u("end_ns")?, u("events")?);
            let (allocs, frees, unknown) = (u("allocs")?, u("frees")?, u("unknown_frees")?);
            let (peak, peak_time) = (u("peak_live_bytes")?, u("peak_time_ns")?);
            let inherited = c.u64_or_none("inherited_frees")?;
            for r in 0..batch.num_rows() {
                let end = parse_end(end[r])
                    .ok_or_else(|| invalid(&file.path, format!("process end {:?}", end[r])))?;
                rows.push((
                    id[r],
                    Process {
                        pid: pid[r],
                        parent_pid: ppid[r],
                        command_line: cmd[r].to_owned(),
                        executable: exe[r].to_owned(),
                        start_ns: start[r],
                        end_ns: stop[r],
                        end,
                        events: events[r],
                        allocs: allocs[r],
                        frees: frees[r],
                        unknown_frees: unknown[r],
                        inherited_frees: inherited.map_or(0, |v| v[r]),
                        peak_live_bytes: peak[r],
                        peak_time_ns: peak_time[r],
                    },
                ));
            }
        }
    }
    rows.sort_by_key(|r| r.0);
    if rows.iter().enumerate().any(|(i, r)| r.0 as usize != i) {
        return Err(invalid(dir, "processes: process ids are not 0, 1, 2, …"));
    }
    Ok(rows.into_iter().map(|r| r.1).collect())
}

fn read_pools(dir: &Path, host: &str) -> Result<Vec<Pool>> {
    let mut rows: Vec<(u32, Pool)> = Vec::new();
    for file in partition_files(dir, "pools", Some(host))? {
        for batch in schema::read_file(&file.path)? {
            let c = Columns::new(&file.path, &batch);
            let (id, name, process) = (c.u32("pool")?, c.str("name")?, c.u32("process")?);
            let (start, end) = (c.u64("start")?, c.u64("end")?);
            let (size, declared) = (c.u64("block_size")?, c.u64("declared_ns")?);
            for r in 0..batch.num_rows() {
                rows.push((
                    id[r],
                    Pool {
                        name: name[r].to_owned(),
                        process: process[r],
                        start: start[r],
                        end: end[r],
                        block_size: size[r],
                        declared_ns: declared[r],
                    },
                ));
            }
        }
    }
    rows.sort_by_key(|r| r.0);
    if rows.iter().enumerate().any(|(i, r)| r.0 as usize != i) {
        return Err(invalid(dir, "pools: pool ids are not 0, 1, 2, …"));
    }
    Ok(rows.into_iter().map(|r| r.1).collect())
}

fn read_blocks(dir: &Path, host: &str, expected: u64) -> Result<BlockColumns> {
    let n = usize::try_from(expected).map_err(|_| invalid(dir, "too many blocks"))?;
    // Allocation sized by the manifest, checked against the files below; a manifest claiming
    // more rows than the files hold is an error before anything that large is used.
    let files = partition_files(dir, "blocks", Some(host))?;
    let mut total = 0u64;
    for f in &files {
        total += schema::file_rows(&f.path)?;
    }
    if total != expected {
        return Err(invalid(
            dir,
            format!(
                "blocks: the manifest says {expected} rows for host {host:?}, the files hold {total}"
            ),
        ));
    }
    let mut rows_read = 0;
    fill_blocks(&files, n, false, &mut rows_read)
}

/// The blocks `0..limit` of host `host`: the files in time-window order, each read batch by
/// batch, and no file after the one where the last of them is found (block ids are in
/// allocation order, windows are of the allocation time).
fn read_blocks_head(
    dir: &Path,
    host: &str,
    limit: usize,
    rows_read: &mut u64,
) -> Result<BlockColumns> {
    let mut files = partition_files(dir, "blocks", Some(host))?;
    files.sort_by_key(|f| (f.window, f.process));
    fill_blocks(&files, limit, true, rows_read)
}

/// Blocks `0..n` from `files`: every row placed by its id (`head`: rows past `n` skipped and
/// the read stopped once all `n` are found; else such a row is an error, as is a block missing).
fn fill_blocks(
    files: &[crate::PartitionFile],
    n: usize,
    head: bool,
    rows_read: &mut u64,
) -> Result<BlockColumns> {
    let mut c64 = vec![vec![0u64; n]; 8];
    let mut c32 = vec![vec![0u32; n]; 6];
    let mut flags = vec![0u8; n];
    let mut seen = vec![false; n];
    let mut found = 0usize;
    const U64S: [&str; 8] = [
        "address",
        "size",
        "requested_size",
        "usable_size",
        "alloc_time_ns",
        "free_time_ns",
        "alloc_event",
        "free_event",
    ];
    'files: for file in files {
        if head && found == n {
            break;
        }
        for batch in schema::file_batches(&file.path)? {
            if head && found == n {
                break 'files;
            }
            let batch = batch?;
            *rows_read += batch.num_rows() as u64;
            let c = Columns::new(&file.path, &batch);
            let ids = c.u64("block")?;
            let cols64 = U64S
                .iter()
                .map(|name| c.u64(name))
                .collect::<Result<Vec<_>>>()?;
            let (thread, site, fl) = (c.u32("thread")?, c.u32("site")?, c.u8("flags")?);
            let (free_site, free_thread, pool) =
                (c.u32("free_site")?, c.u32("free_thread")?, c.u32("pool")?);
            let process = file
                .process
                .ok_or_else(|| invalid(&file.path, "not under a process=P directory"))?;
            for r in 0..batch.num_rows() {
                let i = usize::try_from(ids[r]).unwrap_or(usize::MAX);
                if head && i >= n {
                    continue;
                }
                if i >= n || std::mem::replace(&mut seen[i], true) {
                    return Err(invalid(
                        &file.path,
                        format!("block id {} repeated or out of range 0..{n}", ids[r]),
                    ));
                }
                found += 1;
                for (k, col) in cols64.iter().enumerate() {
                    c64[k][i] = col[r];
                }
                c32[0][i] = thread[r];
                c32[1][i] = site[r];
                c32[2][i] = process;
                c32[3][i] = free_site[r];
                c32[4][i] = free_thread[r];
                c32[5][i] = pool[r];
                flags[i] = fl[r];
            }
        }
    }
    if found != n {
        let missing = seen.iter().position(|s| !s).unwrap_or(n);
        return Err(invalid(
            files.first().map_or(Path::new("."), |f| f.path.as_path()),
            format!("blocks: block {missing} of 0..{n} is in no file"),
        ));
    }
    let mut it = c64.into_iter();
    let mut next = || it.next().unwrap_or_default().into();
    let mut it32 = c32.into_iter();
    let mut next32 = || it32.next().unwrap_or_default().into();
    Ok(BlockColumns {
        address: next(),
        size: next(),
        requested_size: next(),
        usable_size: next(),
        alloc_time_ns: next(),
        free_time_ns: next(),
        alloc_event: next(),
        free_event: next(),
        thread: next32(),
        site: next32(),
        flags: flags.into(),
        process: next32(),
        free_site: next32(),
        free_thread: next32(),
        pool: next32(),
    })
}

/// One line per call-tree node of host `host` (function, else module file name+offset, else
/// the raw address), indexed by node: what a site id in a query result names.
pub fn site_names(dir: &Path, host: &str) -> Result<Vec<String>> {
    let mut rows: Vec<(u32, String)> = Vec::new();
    for file in partition_files(dir, "call_sites", Some(host))? {
        for batch in schema::read_file(&file.path)? {
            let c = Columns::new(&file.path, &batch);
            let (node, ip) = (c.u32("node")?, c.u64("ip")?);
            let (function, module, offset) = (
                c.str("function")?,
                c.str("module")?,
                c.u64("module_offset")?,
            );
            for r in 0..batch.num_rows() {
                let name = if node[r] == 0 {
                    String::from("<no call stack>")
                } else if !function[r].is_empty() {
                    function[r].to_owned()
                } else if !module[r].is_empty() {
                    // The module's file name, as the native views and `heaptree` name it.
                    let path = module[r];
                    let file = path.rsplit('/').next().unwrap_or(path);
                    memscape_trace::Frame {
                        ip: ip[r],
                        module_offset: offset[r],
                        ..memscape_trace::Frame::default()
                    }
                    .in_module(file)
                } else {
                    format!("{:#x}", ip[r])
                };
                rows.push((node[r], name));
            }
        }
    }
    rows.sort_by_key(|r| r.0);
    Ok(rows.into_iter().map(|r| r.1).collect())
}
