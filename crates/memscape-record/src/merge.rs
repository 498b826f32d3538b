//! Every process image of a recording into one trace: processes ordered by start, events
//! merged by CLOCK_MONOTONIC time (each image keeping its own sequence order), each process
//! its own address space, threads and call stacks of their process, the process table with
//! how each image ended.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use memscape_trace::model::Module;
use memscape_trace::process::{Pool, Process, ProcessEnd};
use memscape_trace::{Frame, Trace, TraceBuilder, TraceFormat};

use crate::ProcessReport;
use crate::launch::Reaped;
use crate::raw::{self, RawEvent, RawProcess};

/// One process image's file: the pid's `n`-th image (0: the first; exec makes the next;
/// `merge` renumbers them by start time).
pub(crate) struct Image {
    pub(crate) raw: RawProcess,
    pub(crate) n: u32,
}

/// What the launcher knows beyond the files.
#[derive(Default)]
pub(crate) struct Endings {
    /// Processes the launcher reaped.
    pub(crate) reaped: HashMap<u32, Reaped>,
    /// Processes still running when the recording ended.
    pub(crate) still_running: Vec<u32>,
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// How each image ended and when (CLOCK_MONOTONIC ns; `None`: not seen).
fn endings(images: &[Image], launcher: &Endings) -> Vec<(ProcessEnd, Option<u64>)> {
    // Statuses from the `wait*` calls recorded in every image, then the launcher's own.
    let mut reaped: HashMap<u32, (ProcessEnd, u64)> = HashMap::new();
    for image in images {
        for e in image
            .raw
            .events
            .iter()
            .filter(|e| e.kind == raw::KIND_PROCESS && e.function == raw::PROC_REAPED)
        {
            let status = e.size as i32;
            let end = if status & 0x7f == 0 {
                ProcessEnd::Exited {
                    code: (status >> 8) & 0xff,
                }
            } else {
                ProcessEnd::Signaled {
                    signal: status & 0x7f,
                }
            };
            reaped.insert(e.address as u32, (end, e.time_ns));
        }
    }
    for (&pid, r) in &launcher.reaped {
        let end = match (r.code, r.signal) {
            (Some(code), _) => ProcessEnd::Exited { code },
            (None, Some(signal)) => ProcessEnd::Signaled { signal },
            (None, None) => ProcessEnd::Unknown,
        };
        reaped.insert(pid, (end, r.at_ns));
    }
    images
        .iter()
        .map(|image| {
            let pid = image.raw.pid;
            if images
                .iter()
                .any(|o| o.raw.pid == pid && o.n == image.n + 1)
            {
                let next = images
                    .iter()
                    .find(|o| o.raw.pid == pid && o.n == image.n + 1)
                    .map(|o| o.raw.start_ns);
                return (ProcessEnd::Exec, next);
            }
            // The image's own records: exit(code) and the destructor (its end time).
            let own = |f: u8| {
                image
                    .raw
                    .events
                    .iter()
                    .filter(|e| e.kind == raw::KIND_PROCESS && e.function == f)
                    .filter(|e| e.address == u64::from(pid))
                    .max_by_key(|e| e.seq)
            };
            let exit = own(raw::PROC_EXIT);
            let end_record = own(raw::PROC_END);
            let mut end = exit.map_or(ProcessEnd::Unknown, |e| ProcessEnd::Exited {
                code: unzigzag(e.size) as i32,
            });
            let mut at = [exit, end_record].iter().flatten().map(|e| e.time_ns).max();
            if let Some(&(status, when)) = reaped.get(&pid) {
                end = status;
                at = at.or(Some(when));
            } else if launcher.still_running.contains(&pid) {
                end = ProcessEnd::Running;
            }
            (end, at)
        })
        .collect()
}

/// Module mappings of one image (union of its maps snapshots; later ones win).
struct Mapping {
    start: u64,
    end: u64,
    /// Address of file offset 0 (what addr2line offsets are relative to).
    bias: u64,
    module: u32,
}

/// Reads the image's maps snapshots into `builder` (modules) and returns its mappings.
fn mappings(
    builder: &mut TraceBuilder,
    raw: &RawProcess,
    elf_types: &mut HashMap<String, bool>,
) -> Vec<Mapping> {
    let mut mappings: Vec<Mapping> = Vec::new();
    for snapshot in &raw.maps {
        let mut lowest: HashMap<&str, (u64, u64)> = HashMap::new();
        for line in snapshot.lines() {
            let Some(m) = parse_maps_line(line) else {
                continue;
            };
            let e = lowest.entry(m.3).or_insert((m.0, m.2));
            if m.0 < e.0 {
                *e = (m.0, m.2);
            }
        }
        for line in snapshot.lines() {
            let Some((start, end, _, path)) = parse_maps_line(line) else {
                continue;
            };
            let (low, low_off) = lowest.get(path).copied().unwrap_or((start, 0));
            let is_exec_type = *elf_types
                .entry(path.to_owned())
                .or_insert_with(|| is_et_exec(path));
            let bias = if is_exec_type {
                0
            } else {
                low.saturating_sub(low_off)
            };
            let module = builder.strings.intern(path);
            mappings.retain(|m| m.end <= start || m.start >= end);
            mappings.push(Mapping {
                start,
                end,
                bias,
                module,
            });
            if !builder
                .modules
                .iter()
                .any(|m| m.path == path && m.start == start)
            {
                builder.modules.push(Module {
                    path: path.to_owned(),
                    base: bias,
                    start,
                    end,
                });
            }
        }
    }
    mappings.sort_by_key(|m| m.start);
    mappings
}

/// The image's stacks as call-tree nodes (outermost frame first): stack id → leaf node.
fn sites(builder: &mut TraceBuilder, raw: &RawProcess, mappings: &[Mapping]) -> HashMap<u32, u32> {
    let mut site_of_stack = HashMap::with_capacity(raw.stacks.len());
    for (&id, frames) in &raw.stacks {
        let mut node = 0u32;
        for &ip in frames.iter().rev() {
            let i = mappings.partition_point(|m| m.start <= ip);
            let (module, module_offset) = match i.checked_sub(1).map(|i| &mappings[i]) {
                Some(m) if ip < m.end => (m.module, ip - m.bias),
                _ => (0, 0),
            };
            node = builder.call_tree.child(
                node,
                Frame {
                    ip,
                    module,
                    module_offset,
                    ..Frame::default()
                },
            );
        }
        site_of_stack.insert(id, node);
    }
    site_of_stack
}

/// Counts of one image's raw events for its report.
struct RawCounts {
    reallocs: u64,
    mmaps: u64,
    munmaps: u64,
    threads: u64,
}

impl RawCounts {
    fn of(raw: &RawProcess) -> Self {
        let count = |kind: u8| raw.events.iter().filter(|e| e.kind == kind).count() as u64;
        let mut tids: Vec<u32> = raw
            .events
            .iter()
            .filter(|e| e.kind != raw::KIND_PROCESS)
            .map(|e| e.tid)
            .collect();
        tids.sort_unstable();
        tids.dedup();
        Self {
            reallocs: count(raw::KIND_REALLOC_FREE),
            mmaps: count(raw::KIND_MMAP),
            munmaps: count(raw::KIND_MUNMAP),
            threads: tids.len() as u64,
        }
    }
}

/// Merges the images into one trace (see the module documentation). Returns it with one
/// report per image, in the trace's process order.
pub(crate) fn merge(
    source: &str,
    mut images: Vec<Image>,
    launcher: &Endings,
) -> (Trace, Vec<ProcessReport>) {
    images.sort_by_key(|i| (i.raw.start_ns, i.raw.pid, i.n));
    // The images of one pid follow each other through `exec`, in start order (the file
    // names number them per executable name, not per pid).
    let mut seen: HashMap<u32, u32> = HashMap::new();
    for image in &mut images {
        let n = seen.entry(image.raw.pid).or_insert(0);
        image.n = *n;
        *n += 1;
    }
    let ends = endings(&images, launcher);
    // Each image's events in sequence order, in place (one thread's chunks are already in
    // order: a run the sort only checks).
    for image in &mut images {
        image.raw.events.sort_by_key(|e| e.seq);
    }
    let origin = images.iter().map(|i| i.raw.start_ns).min().unwrap_or(0);
    let rel = |ns: u64| ns.saturating_sub(origin);
    let mut builder = TraceBuilder::with_event_times(source);
    builder.start_monotonic_ns = origin;
    if let Some(first) = images.first() {
        builder.command_line = first.raw.command_line.clone();
        builder.page_size = first.raw.page_size;
    }
    let mut elf_types = HashMap::new();
    // Per image: its process index and stack → site. Event times (since the origin) are
    // clamped never to go back within an image (a clock read can trail its sequence number by
    // a preemption; the order is the sequence's): `clamped` holds each image's last time.
    let mut site_maps = Vec::with_capacity(images.len());
    let mut clamped: Vec<u64> = Vec::with_capacity(images.len());
    for (image, (end, at)) in images.iter().zip(&ends) {
        let raw = &image.raw;
        let start = rel(raw.start_ns);
        let last = raw
            .events
            .iter()
            .map(|e| rel(e.time_ns))
            .max()
            .unwrap_or(start)
            .max(start);
        clamped.push(start);
        let end_ns = at.map(rel).unwrap_or(last).max(last);
        let p = builder.process(Process {
            pid: raw.pid,
            parent_pid: raw.ppid,
            command_line: raw.command_line.clone(),
            executable: raw.executable.clone(),
            start_ns: rel(raw.start_ns),
            end_ns,
            end: *end,
            ..Process::default()
        });
        builder.set_process(p);
        let maps = mappings(&mut builder, raw, &mut elf_types);
        site_maps.push(sites(&mut builder, raw, &maps));
    }
    let mut next_time = |image: usize, e: &RawEvent| {
        let t = rel(e.time_ns).max(clamped[image]);
        clamped[image] = t;
        t
    };
    // Merge by time; ties keep the image order (the earlier-started process first).
    let mut heads: BinaryHeap<Reverse<(u64, usize, usize)>> = BinaryHeap::new();
    for (i, image) in images.iter().enumerate() {
        if let Some(e) = image.raw.events.first() {
            heads.push(Reverse((next_time(i, e), i, 0)));
        }
    }
    // What the reports need from the raw events, counted before the events are released.
    let counts: Vec<RawCounts> = images.iter().map(|i| RawCounts::of(&i.raw)).collect();
    let mut threads: HashMap<(usize, u32), u32> = HashMap::new();
    let mut pools: HashMap<(usize, u64), u32> = HashMap::new();
    let mut line = 0u64;
    while let Some(Reverse((time, image, at))) = heads.pop() {
        let events = &images[image].raw.events;
        let e = events[at];
        match events.get(at + 1) {
            Some(next) => heads.push(Reverse((next_time(image, next), image, at + 1))),
            // This image's events are all in the builder: their memory goes back now.
            None => images[image].raw.events = Vec::new(),
        }
        let e = &e;
        line += 1;
        builder.set_process(image as u32);
        let raw = &images[image].raw;
        let thread = *threads.entry((image, e.tid)).or_insert_with(|| {
            builder.thread(&match raw.thread_names.get(&e.tid) {
                Some(name) => format!("{name} ({})", e.tid),
                None => format!("tid {}", e.tid),
            })
        });
        let site = site_maps[image].get(&e.stack).copied().unwrap_or(0);
        match (e.kind, e.function) {
            (raw::KIND_ALLOC, raw::FN_POOL_ALLOC) => match pools.get(&(image, e.usable)) {
                Some(&pool) => {
                    builder.pool_alloc(line, time, pool, e.address, e.size, thread, site);
                }
                None => builder.warn("bad_reference", line),
            },
            (raw::KIND_FREE, raw::FN_POOL_FREE) => {
                builder.pool_free(line, time, e.address, thread, site);
            }
            (raw::KIND_ALLOC | raw::KIND_REALLOC_ALLOC, _) => {
                builder.alloc(line, time, e.address, e.size, e.usable, thread, site);
            }
            (raw::KIND_FREE, _) => {
                builder.free_from(line, time, e.address, thread, site);
            }
            (raw::KIND_REALLOC_FREE, _) => {
                // The free half of a realloc: counted as a realloc, flagged on the block.
                builder.realloc(line, time, e.address, 0, 0, 0, thread, site);
            }
            (raw::KIND_MMAP, _) => {
                builder.mmap(line, time, e.address, e.size, thread, site);
            }
            (raw::KIND_MUNMAP, _) => {
                builder.munmap(line, time, e.address, e.size);
            }
            (raw::KIND_PROCESS, raw::PROC_POOL) => {
                let id = u64::from(e.stack);
                let pool = builder.pool(Pool {
                    name: raw
                        .pool_names
                        .get(&e.stack)
                        .cloned()
                        .unwrap_or_else(|| format!("pool {id}")),
                    start: e.address,
                    end: e.address.saturating_add(e.size),
                    block_size: e.usable,
                    declared_ns: time,
                    ..Pool::default()
                });
                pools.insert((image, id), pool);
            }
            // Exit, end and reap records: read by `endings`.
            (raw::KIND_PROCESS, _) => {}
            _ => builder.warn("malformed_line", line),
        }
    }
    let trace = builder.finish(TraceFormat::Msc, true);
    let reports = images
        .iter()
        .zip(&counts)
        .zip(&trace.processes)
        .map(|((image, c), p)| {
            let raw = &image.raw;
            ProcessReport {
                pid: raw.pid,
                ppid: raw.ppid,
                image: image.n,
                fork_seq: raw.fork_seq,
                command_line: raw.command_line.clone(),
                end: p.end,
                events: p.events,
                allocs: p.allocs,
                frees: p.frees,
                reallocs: c.reallocs,
                unknown_frees: p.unknown_frees,
                mmaps: c.mmaps,
                munmaps: c.munmaps,
                threads: c.threads,
                peak_live_bytes: p.peak_live_bytes,
            }
        })
        .collect();
    (trace, reports)
}

/// `start-end perms offset dev inode path` → (start, end, offset, path) for file mappings.
fn parse_maps_line(line: &str) -> Option<(u64, u64, u64, &str)> {
    let mut fields = line.splitn(6, ' ');
    let range = fields.next()?;
    let _perms = fields.next()?;
    let offset = u64::from_str_radix(fields.next()?, 16).ok()?;
    let _dev = fields.next()?;
    let _inode = fields.next()?;
    let path = fields.next()?.trim_start();
    if !path.starts_with('/') {
        return None;
    }
    let (s, e) = range.split_once('-')?;
    Some((
        u64::from_str_radix(s, 16).ok()?,
        u64::from_str_radix(e, 16).ok()?,
        offset,
        path,
    ))
}

/// Whether the ELF file is a fixed-address executable (ET_EXEC): its addresses are absolute.
/// Only regular files are opened: a mapping's path comes from the raw recording, and opening a
/// FIFO there would block, a device never end.
fn is_et_exec(path: &str) -> bool {
    use std::io::Read;
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut head = [0u8; 18];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| {
            head.starts_with(b"\x7fELF") && u16::from_le_bytes([head[16], head[17]]) == 2
        })
}

#[cfg(test)]
mod tests {
    use super::is_et_exec;

    #[test]
    fn only_regular_files_are_read_for_their_elf_type() {
        let dir = std::env::temp_dir().join(format!("memscape-et-exec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // Opening the FIFO for reading would block with no writer: it must not be opened.
        assert!(!is_et_exec(fifo.to_str().unwrap()));
        assert!(!is_et_exec("/dev/zero"));
        assert!(!is_et_exec(dir.to_str().unwrap()));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
