//! `memscape record`: runs a program with the `memscape-recorder` shim preloaded, waits for it,
//! and converts the per-process files the shim wrote (`<exe>.<pid>.<n>.msr`, format in
//! `crates/memscape-recorder/README.md`) into native `.msc` traces through memscape-trace.
//!
//! Entry points: [`record`] (run + convert), [`convert_raw`] (one `.msr` file → [`Trace`]),
//! [`read_raw`] (parse a `.msr` file).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use memscape_trace::model::Module;
use memscape_trace::{Frame, Trace, TraceBuilder, TraceFormat};

mod raw;
pub use raw::{RawEvent, RawProcess, read_raw, read_raw_bytes};

/// Why a recording failed.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error(
        "cannot find the recorder shim libmemscape_recorder.so (looked in {looked}); build it with `cargo build -p memscape-recorder` or set MEMSCAPE_SHIM=/path/to/libmemscape_recorder.so"
    )]
    ShimNotFound { looked: String },
    #[error("cannot start {program}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}@{offset}: not a memscape recorder file: expected {expected}")]
    Corrupt {
        path: String,
        offset: u64,
        expected: String,
    },
    #[error(
        "the program wrote no recorder file: the shim was not loaded (static binary, or LD_PRELOAD ignored by a setuid program?)"
    )]
    NothingRecorded,
    #[error(transparent)]
    Write(#[from] memscape_trace::LoadError),
}

/// What to record and where.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// The `.msc` of the launched process; other processes go next to it as
    /// `<stem>.<pid>.msc` (`<stem>.<pid>.<n>.msc` for the n-th exec'd image of a pid).
    pub output: PathBuf,
    /// Frames kept per call stack.
    pub stack_depth: usize,
    pub no_stacks: bool,
    pub program: String,
    pub args: Vec<String>,
    /// The shim to preload; `None` = [`find_shim`].
    pub shim: Option<PathBuf>,
    /// Event times are stored rounded down to multiples of 2^`time_resolution_log2` ns (0:
    /// exact). Default [`DEFAULT_TIME_RESOLUTION_LOG2`]; see [`parse_time_resolution`].
    pub time_resolution_log2: u8,
}

/// The default time resolution of recordings: 2^4 = 16 ns. The shim's clock advances in steps
/// of 10 ns on the development VM (the TSC there moves 26 ticks at a time at 2.6 GHz; about
/// 0.4 ns on bare metal), and consecutive events of one thread are at least 20 ns apart in
/// 99.98 % of the sqlite3 benchmark's 3.8 M events (the shim's own cost per event): at 16 ns
/// they keep distinct times, which they start to share from 32 ns on. Exact nanoseconds cost
/// about 2.6 bits per event more than heaptrack's whole file per event on that VM, and more on
/// a machine with a finer clock; 16 ns keeps the file 25 % below heaptrack's and is still
/// 625,000 times finer than heaptrack's 10 ms ticks. `benches/record/RESULTS.md` has the sizes
/// per resolution.
pub const DEFAULT_TIME_RESOLUTION_LOG2: u8 = 4;

/// Parses a time resolution: `exact` (or `0`), or a duration `N[ns|us|ms|s]` (plain numbers
/// are nanoseconds), rounded down to a power of two nanoseconds. Returns its log2.
pub fn parse_time_resolution(text: &str) -> Result<u8, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("exact") {
        return Ok(0);
    }
    let (digits, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()));
    let scale: u64 = match unit.trim() {
        "" | "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        _ => {
            return Err(format!(
                "unknown unit in time resolution {text:?} (ns, us, ms or s)"
            ));
        }
    };
    let ns = digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .ok_or_else(|| {
            format!("time resolution {text:?}: expected `exact` or a duration such as 16ns or 1us")
        })?;
    if ns <= 1 {
        return Ok(0);
    }
    // The largest power of two not above `ns`; at most 2^62 ns (146 years).
    Ok((63 - ns.leading_zeros()).min(62) as u8)
}

/// One recorded process image.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ProcessReport {
    pub pid: u32,
    pub ppid: u32,
    /// For a forked child: how many events its parent had recorded at the fork (the child's
    /// heap starts as a copy of the parent's, which valgrind counts into the child's totals).
    pub fork_seq: Option<u64>,
    pub command_line: String,
    pub output: PathBuf,
    pub events: u64,
    pub allocs: u64,
    pub frees: u64,
    pub reallocs: u64,
    /// Frees of blocks this process image never allocated (inherited over fork, or bugs).
    pub unknown_frees: u64,
    pub mmaps: u64,
    pub munmaps: u64,
    pub threads: u64,
}

/// What `memscape record` prints (serde: the JSON of `memscape record --json`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct RecordReport {
    pub output: PathBuf,
    /// Counts of the launched process (the first image of its pid).
    pub events: u64,
    pub allocs: u64,
    pub frees: u64,
    /// Exit code, or 128 + signal number when the program was killed by a signal.
    pub exit_status: i32,
    pub signal: Option<i32>,
    pub processes: Vec<ProcessReport>,
    /// Event times are multiples of this many nanoseconds (1: exact).
    pub time_resolution_ns: u64,
}

/// Name of the shim library.
pub const SHIM_NAME: &str = "libmemscape_recorder.so";

/// Finds the shim: `$MEMSCAPE_SHIM`, then next to the current executable (and its parent, for
/// test binaries in `target/<profile>/deps/`), then `target/<profile>/` of this workspace.
pub fn find_shim() -> Result<PathBuf, RecordError> {
    let mut candidates = Vec::new();
    if let Some(p) = std::env::var_os("MEMSCAPE_SHIM") {
        candidates.push(PathBuf::from(p));
    }
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        candidates.push(dir.join(SHIM_NAME));
        if let Some(up) = dir.parent() {
            candidates.push(up.join(SHIM_NAME));
        }
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    for profile in ["release", "debug"] {
        candidates.push(target.join(profile).join(SHIM_NAME));
    }
    for c in &candidates {
        if c.is_file() {
            return Ok(c.canonicalize().unwrap_or_else(|_| c.clone()));
        }
    }
    Err(RecordError::ShimNotFound {
        looked: candidates
            .iter()
            .map(|c| c.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// Runs the program under the shim, waits for it, converts every process's file into `.msc`.
pub fn record(options: &RecordOptions) -> Result<RecordReport, RecordError> {
    let shim = match &options.shim {
        Some(path) if path.is_file() => path.clone(),
        Some(path) => {
            return Err(RecordError::ShimNotFound {
                looked: path.display().to_string(),
            });
        }
        None => find_shim()?,
    };
    let out_dir = options
        .output
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |source| RecordError::Io { path, source }
    };
    let raw_dir = tempfile::Builder::new()
        .prefix(".memscape-record-")
        .tempdir_in(out_dir)
        .map_err(io(out_dir))?;
    let preload = match std::env::var_os("LD_PRELOAD") {
        Some(old) if !old.is_empty() => {
            let mut v = shim.clone().into_os_string();
            v.push(":");
            v.push(old);
            v
        }
        _ => shim.clone().into_os_string(),
    };
    let mut command = Command::new(&options.program);
    command
        .args(&options.args)
        .env("LD_PRELOAD", preload)
        .env("MEMSCAPE_RECORD_DIR", raw_dir.path())
        .env("MEMSCAPE_STACK_DEPTH", options.stack_depth.to_string())
        .env(
            "MEMSCAPE_NO_STACKS",
            if options.no_stacks { "1" } else { "0" },
        );
    let status = command.status().map_err(|source| RecordError::Spawn {
        program: options.program.clone(),
        source,
    })?;
    let signal = std::os::unix::process::ExitStatusExt::signal(&status);
    let exit_status = status.code().unwrap_or_else(|| 128 + signal.unwrap_or(0));
    let root_pid = status_pid_hint(&raw_dir);
    let mut files: Vec<(u32, u32, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(raw_dir.path()).map_err(io(raw_dir.path()))? {
        let path = entry.map_err(io(raw_dir.path()))?.path();
        if let Some((pid, n)) = parse_raw_name(&path) {
            files.push((pid, n, path));
        }
    }
    if files.is_empty() {
        return Err(RecordError::NothingRecorded);
    }
    files.sort();
    let stem = options
        .output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "trace".to_owned());
    let mut processes = Vec::new();
    let mut root: Option<ProcessReport> = None;
    for (pid, n, path) in &files {
        let raw = read_raw(path)?;
        let is_root = Some(*pid) == root_pid && *n == 0 && root.is_none();
        let output = if is_root {
            options.output.clone()
        } else if *n == 0 {
            out_dir.join(format!("{stem}.{pid}.msc"))
        } else {
            out_dir.join(format!("{stem}.{pid}.{n}.msc"))
        };
        let mut trace = convert_raw(&path.display().to_string(), &raw);
        let _ = memscape_trace::symbolize::symbolize(&mut trace);
        memscape_trace::msc::write_msc_with(
            &trace,
            &output,
            &memscape_trace::msc::MscOptions {
                time_resolution_log2: options.time_resolution_log2,
                ..Default::default()
            },
        )?;
        let report = ProcessReport {
            pid: raw.pid,
            ppid: raw.ppid,
            fork_seq: raw.fork_seq,
            command_line: raw.command_line.clone(),
            output,
            events: trace.meta.events,
            allocs: trace.meta.allocs,
            frees: trace.meta.frees,
            reallocs: trace.meta.reallocs,
            unknown_frees: trace.meta.unknown_frees,
            mmaps: raw
                .events
                .iter()
                .filter(|e| e.kind == raw::KIND_MMAP)
                .count() as u64,
            munmaps: raw
                .events
                .iter()
                .filter(|e| e.kind == raw::KIND_MUNMAP)
                .count() as u64,
            threads: trace.threads.len() as u64,
        };
        if is_root {
            root = Some(report.clone());
        }
        processes.push(report);
    }
    let root = root.or_else(|| processes.first().cloned());
    let (events, allocs, frees) = root
        .as_ref()
        .map_or((0, 0, 0), |r| (r.events, r.allocs, r.frees));
    Ok(RecordReport {
        output: options.output.clone(),
        events,
        allocs,
        frees,
        exit_status,
        signal,
        processes,
        time_resolution_ns: 1 << options.time_resolution_log2.min(62),
    })
}

/// The launched process is the one whose parent is not among the recorded processes.
fn status_pid_hint(raw_dir: &tempfile::TempDir) -> Option<u32> {
    let mut pids = Vec::new();
    let mut parents = HashMap::new();
    for entry in std::fs::read_dir(raw_dir.path()).ok()?.flatten() {
        let path = entry.path();
        if let Some((pid, _)) = parse_raw_name(&path)
            && let Ok(header) = raw::read_header_only(&path)
        {
            pids.push(pid);
            parents.insert(pid, header.ppid);
        }
    }
    pids.sort_unstable();
    pids.iter()
        .copied()
        .find(|p| parents.get(p).is_none_or(|pp| !pids.contains(pp)))
}

/// `<exe>.<pid>.<n>.msr` → (pid, n).
fn parse_raw_name(path: &Path) -> Option<(u32, u32)> {
    let name = path.file_name()?.to_str()?;
    let rest = name.strip_suffix(".msr")?;
    let (rest, n) = rest.rsplit_once('.')?;
    let (_, pid) = rest.rsplit_once('.')?;
    Some((pid.parse().ok()?, n.parse().ok()?))
}

/// One mapping line of /proc/self/maps with a file name.
#[derive(Debug, Clone)]
struct Mapping {
    start: u64,
    end: u64,
    /// Address of file offset 0 (what addr2line offsets are relative to).
    bias: u64,
    module: u32,
}

/// Converts a parsed recorder file into a trace: events in their global sequence order, times
/// in ns since the process image started, threads named `name (tid)` (`tid <n>` without a name record), stacks as a call tree with
/// module + offset per frame. Anonymous mmap/munmap become blocks flagged
/// `memscape_trace::model::FLAG_MMAP` (counted in `meta.mmaps` / `meta.munmaps`, not in the
/// heap's allocs and frees).
pub fn convert_raw(source: &str, raw: &RawProcess) -> Trace {
    let mut builder = TraceBuilder::with_event_times(source);
    builder.command_line = raw.command_line.clone();
    builder.page_size = raw.page_size;
    // Module maps: union of all snapshots (later ones win for the same range).
    let mut mappings: Vec<Mapping> = Vec::new();
    let mut elf_types: HashMap<String, bool> = HashMap::new();
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
    // Stacks → call-tree nodes (outermost frame first).
    let mut site_of_stack: HashMap<u32, u32> = HashMap::new();
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
    let mut order: Vec<&RawEvent> = raw.events.iter().collect();
    order.sort_by_key(|e| e.seq);
    let start = raw.start_ns;
    let mut last = 0u64;
    let mut thread_of_tid: HashMap<u32, u32> = HashMap::new();
    for (line, e) in order.iter().enumerate() {
        let line = line as u64 + 1;
        // Sequence numbers and clock reads are taken separately: a thread preempted between the
        // two may carry a time slightly before its predecessor's. Order is the sequence's.
        let time = e.time_ns.saturating_sub(start).max(last);
        last = time;
        let thread = *thread_of_tid.entry(e.tid).or_insert_with(|| {
            builder.thread(&match raw.thread_names.get(&e.tid) {
                Some(name) => format!("{name} ({})", e.tid),
                None => format!("tid {}", e.tid),
            })
        });
        let site = site_of_stack.get(&e.stack).copied().unwrap_or(0);
        match e.kind {
            raw::KIND_ALLOC | raw::KIND_REALLOC_ALLOC => {
                builder.alloc(line, time, e.address, e.size, e.usable, thread, site);
            }
            raw::KIND_FREE => {
                builder.free(line, time, e.address);
            }
            raw::KIND_REALLOC_FREE => {
                // The free half of a realloc: counted as a realloc, flagged on the block.
                builder.realloc(line, time, e.address, 0, 0, 0, thread, site);
            }
            raw::KIND_MMAP => {
                // Anonymous mappings: blocks flagged FLAG_MMAP, apart from the heap counts.
                builder.mmap(line, time, e.address, e.size, thread, site);
            }
            raw::KIND_MUNMAP => {
                builder.munmap(line, time, e.address, e.size);
            }
            _ => builder.warn("malformed_line", line),
        }
    }
    builder.finish(TraceFormat::Msc, true)
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
fn is_et_exec(path: &str) -> bool {
    use std::io::Read;
    let mut head = [0u8; 18];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| {
            head.starts_with(b"\x7fELF") && u16::from_le_bytes([head[16], head[17]]) == 2
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_resolutions_parse_to_powers_of_two_at_or_below() {
        assert_eq!(parse_time_resolution("exact"), Ok(0));
        assert_eq!(parse_time_resolution("1ns"), Ok(0));
        assert_eq!(parse_time_resolution("0"), Ok(0));
        assert_eq!(parse_time_resolution("16ns"), Ok(4));
        assert_eq!(parse_time_resolution("17"), Ok(4));
        assert_eq!(parse_time_resolution("1us"), Ok(9));
        assert_eq!(parse_time_resolution("10ms"), Ok(23));
        assert_eq!(parse_time_resolution("9999999999s"), Ok(62));
        assert!(parse_time_resolution("16 parsecs").is_err());
        assert!(parse_time_resolution("").is_err());
        assert!(parse_time_resolution("99999999999999999999").is_err());
    }
}
