//! `memscape record`: runs a program with the `memscape-recorder` shim preloaded, waits for it,
//! and converts the per-process files the shim wrote (`<exe>.<pid>.<n>.msr`, format in
//! `crates/memscape-recorder/README.md`) into native `.msc` traces through memscape-trace.
//!
//! Entry points: [`record`] (run + convert), [`convert_raw`] (one `.msr` file → [`Trace`]),
//! [`read_raw`] (parse a `.msr` file).

use std::path::{Path, PathBuf};
use std::process::Command;

use memscape_trace::Trace;

mod follow;
mod launch;
mod merge;
mod raw;
mod stream;
pub use follow::{Follower, LiveProcess, LiveSummary};
pub use raw::{RawEvent, RawProcess, Unrecorded, UnrecordedReason, read_raw, read_raw_bytes};
pub use stream::WholeTrace;

/// Why a recording failed. Each message says its cause once (no `source()` chain under a
/// message that already names it).
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error(
        "cannot find the recorder shim libmemscape_recorder.so (looked in {looked}); build it with `cargo build -p memscape-recorder` or set MEMSCAPE_SHIM=/path/to/libmemscape_recorder.so"
    )]
    ShimNotFound { looked: String },
    #[error("cannot start {program}: {cause}")]
    Spawn {
        program: String,
        cause: std::io::Error,
    },
    #[error("{path}: {cause}")]
    Io { path: String, cause: std::io::Error },
    #[error("{path}@{offset}: not a memscape recorder file: expected {expected}")]
    Corrupt {
        path: String,
        offset: u64,
        expected: String,
    },
    #[error(
        "the program wrote no recorder file: the shim was not loaded ({program} is a static binary, or a setuid/setgid program for which the loader ignores LD_PRELOAD)"
    )]
    NothingRecorded { program: String },
    #[error("{dir}: no recorder files (`*.msr`) in this directory")]
    NoRawFiles { dir: String },
    /// Writing the trace failed; the raw recording is kept.
    #[error(
        "cannot write {path}: {cause}; the raw recording is kept in {kept}: free some space (or fix the permissions) and convert it with `memscape convert {kept} {path}`"
    )]
    WriteKept {
        path: String,
        cause: String,
        kept: String,
    },
}

/// What to record and where.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// The `.msc` file: every process of the run in one trace.
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

/// The default time resolution of recordings: 2^6 = 64 ns (16 ns before wave 32). Under the
/// shim consecutive events of a thread are ≥ 42 ns apart in 99 % of sqlite3's events (the
/// shim's own cost per event), and no block of sqlite3 or cc1plus lives shorter than 64 ns
/// but 0.0015 % of cc1plus's (at 128 ns: 1.5 %, whose lifetimes would round to nothing); 99.2 %
/// of consecutive events keep distinct times. Finer times cost what the clock's jitter puts
/// into the low bits: on a VM whose TSC steps 6.2 ns, sqlite3's file at 16 ns was 1.29–1.32×
/// heaptrack's `.raw.zst` (the times ≈ 80 % of it), at 64 ns ≈ 0.8–0.86×. 64 ns is still
/// 156,000 times finer than heaptrack's 10 ms timestamps. `crates/memscape-record/README.md`
/// ("Time resolution") has the figures.
pub const DEFAULT_TIME_RESOLUTION_LOG2: u8 = 6;

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
    /// 0 for the pid's first image, n for the one its n-th `exec` started.
    pub image: u32,
    /// For a forked child: how many events its parent had recorded at the fork (the child's
    /// heap starts as a copy of the parent's, which valgrind counts into the child's totals).
    pub fork_seq: Option<u64>,
    pub command_line: String,
    /// How it ended (exit code, signal, exec, still running).
    pub end: memscape_trace::process::ProcessEnd,
    pub events: u64,
    pub allocs: u64,
    pub frees: u64,
    pub reallocs: u64,
    /// Frees of blocks this process image never allocated (inherited over fork, or bugs).
    pub unknown_frees: u64,
    /// Frees of blocks inherited from the parent at the fork (see `Process::inherited_frees`).
    pub inherited_frees: u64,
    pub mmaps: u64,
    pub munmaps: u64,
    pub threads: u64,
    pub peak_live_bytes: u64,
}

/// A program that a recorded process started (`exec`, `posix_spawn`) and that ran without the
/// recorder: a static binary, a setuid/setgid program in secure mode, a 32-bit program. The
/// shim saw it coming; its parent's trace is complete, the program has no process in it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct UnrecordedProgram {
    pub path: String,
    /// The pid of its first run.
    pub pid: u32,
    /// The executable name of the process that started it, and that process's pid.
    pub started_by: String,
    pub started_by_pid: u32,
    pub reason: UnrecordedReason,
    /// How many times it ran (warned once).
    pub runs: u64,
}

impl UnrecordedProgram {
    /// "/path/prog (pid N, started by sh)".
    pub fn located(&self) -> String {
        let more = match self.runs {
            0 | 1 => String::new(),
            2 => " and 1 more run".to_owned(),
            n => format!(" and {} more runs", n - 1),
        };
        format!(
            "{} (pid {}{more}, started by {})",
            self.path, self.pid, self.started_by
        )
    }
}

impl std::fmt::Display for UnrecordedProgram {
    /// The warning `memscape record` prints: `/path/prog (pid N, started by sh) ran
    /// unrecorded: a static binary — the loader ignores LD_PRELOAD`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ran unrecorded: {}",
            self.located(),
            self.reason.explain()
        )
    }
}

/// What `memscape record` prints (serde: the JSON of `memscape record --json`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct RecordReport {
    /// The one `.msc` file of the run.
    pub output: PathBuf,
    /// Totals over every process.
    pub events: u64,
    pub allocs: u64,
    pub frees: u64,
    /// The launched program's exit code, or 128 + signal number when a signal killed it.
    pub exit_status: i32,
    pub signal: Option<i32>,
    /// Ctrl-C (SIGINT) or SIGTERM ended the recording before every process had exited.
    pub interrupted: bool,
    /// Every process image, in the trace's order (by start time).
    pub processes: Vec<ProcessReport>,
    /// Event times are multiples of this many nanoseconds (1: exact).
    pub time_resolution_ns: u64,
    /// Programs started by recorded processes that ran without the recorder, once per path
    /// (also in the trace's warnings, kind `unrecorded_program`).
    pub unrecorded: Vec<UnrecordedProgram>,
    /// The raw recording's directory, kept when `MEMSCAPE_KEEP_RAW=1` (to compare the
    /// streaming merge with `convert_dir`'s whole-file one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_kept: Option<PathBuf>,
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

/// Runs the program under the shim, waits for every process that carries the recorder (see
/// `launch.rs`), merges every process image into one trace and writes it to
/// `options.output` (complete and synced before it gets that name). The raw recording lives
/// in a private directory (mode 0700, unpredictable name) next to the output and is removed
/// once the trace is written, or kept and named in the error when it cannot be.
pub fn record(options: &RecordOptions) -> Result<RecordReport, RecordError> {
    record_following(options, None, false, None)
}

/// [`record`], calling `on_update` with what the recording holds about every `every` while
/// the program runs (and once more at its end): `memscape record --live` without a window.
/// The callback runs on the thread that reads the recording; the recorded program never waits
/// for it. The trace is written as [`record`] writes it (merged and written while the program
/// runs: memory holds the live blocks, not the whole trace), the summaries kept beside it.
pub fn record_live(
    options: &RecordOptions,
    every: std::time::Duration,
    on_update: &mut (dyn FnMut(&LiveSummary) + Send),
) -> Result<RecordReport, RecordError> {
    record_following(
        options,
        Some((every, &mut |f: &Follower, _| on_update(&f.summary()))),
        false,
        None,
    )
}

/// [`record`], calling `on_poll` with the follower after each read while the program runs
/// (about every `every`), and once more after the last read when every process has exited
/// (`ended`: true): what the live view snapshots ([`Follower::snapshot`]). The callback runs
/// on the thread that reads the recording; the recorded program never waits for it (a slow
/// callback only makes the reads rarer).
pub fn record_observed(
    options: &RecordOptions,
    every: std::time::Duration,
    on_poll: &mut (dyn FnMut(&Follower, bool) + Send),
) -> Result<RecordReport, RecordError> {
    record_following(options, Some((every, on_poll)), true, None)
}

/// [`record_observed`], also handing `on_whole` the recording's whole trace as the file it
/// writes will load (block times rounded to the file's resolution:
/// `msc::round_times_as_stored`) once the program has exited, while the file's footer is
/// encoded and written, so that a live view ends on it without reading the file back; not
/// called when the merge could not write the file while the program ran (the file is then
/// written at the end, or the recording fails). The merge the snapshots share writes the
/// file's segments while the program runs, as [`record`]'s does; `on_poll` may hand it the
/// symbolizer it named the snapshots' call trees with ([`Follower::symbolize_the_rest_with`])
/// for the last nodes.
pub fn record_observed_whole(
    options: &RecordOptions,
    every: std::time::Duration,
    on_poll: &mut (dyn FnMut(&Follower, bool) + Send),
    on_whole: &mut WholeTrace<'_>,
) -> Result<RecordReport, RecordError> {
    record_following(options, Some((every, on_poll)), true, Some(on_whole))
}

/// Most bytes of a shim file read at once by the streaming merge (about 230,000 events): the
/// rest waits in the file, so that memory holds what the merge can apply, not what the
/// program wrote while the merge was busy.
const READ_BUDGET: usize = 2 << 20;

/// How often `record` reads the shim's files while the program runs.
const POLL_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

type OnUpdate<'a> = (
    std::time::Duration,
    &'a mut (dyn FnMut(&Follower, bool) + Send),
);

/// `snapshots`: `live`'s callback takes trace snapshots (`Follower::snapshot`), so the trace
/// so far is kept in memory (a consuming follower) and written at the end; otherwise the trace
/// is streamed to the file while the program runs (`live`'s callback reads summaries only).
fn record_following(
    options: &RecordOptions,
    mut live: Option<OnUpdate<'_>>,
    snapshots: bool,
    on_whole: Option<&mut stream::WholeTrace<'_>>,
) -> Result<RecordReport, RecordError> {
    let shim = match &options.shim {
        Some(path) if path.is_file() => path.clone(),
        Some(path) => {
            return Err(RecordError::ShimNotFound {
                looked: path.display().to_string(),
            });
        }
        None => find_shim()?,
    };
    let out_dir = output_dir(&options.output);
    // Absolute: the program may change directories, and /proc/PID/maps names it so.
    let out_dir = &std::path::absolute(out_dir).map_err(io(out_dir))?;
    let raw_dir = private_raw_dir(out_dir)?;
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
    file_size_limit_is_an_error();
    let phase = std::time::Instant::now();
    // Without a live view the trace is merged and written while the program runs (see
    // `stream.rs`); a live view merges it as it is read (`Follower::consuming`: the trace so
    // far, shared with the snapshots, not the events) and writes it at the end.
    let keeps_trace = live.is_some() && snapshots;
    // A live view's merge writes the file too (the segments copied out of the merge its
    // snapshots share: `Follower::writing`), so that little is left at the end either way.
    let sink = match stream::Sink::create(
        &options.output,
        &msc_options(options),
        segment_blocks(),
        keeps_trace,
    ) {
        Ok(sink) => Some(sink),
        // Reported as the final write's error, with the raw recording kept.
        Err(e) => {
            tracing::debug!("cannot start writing {}: {e}", options.output.display());
            None
        }
    };
    let (sink, live_sink) = match keeps_trace {
        true => (None, sink),
        false => (sink, None),
    };
    let source = options.output.display().to_string();
    // The shim's files are read while the program runs (on another thread), so that at its
    // exit only the last bytes remain.
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (launched, followed) = std::thread::scope(|scope| {
        let dir = raw_dir.path();
        let stop = &stop;
        let live = &mut live;
        let source = &source;
        let follower = scope.spawn(move || {
            let mut follower = match live {
                Some(_) if keeps_trace => {
                    let follower = Follower::consuming(dir, source).with_budget(READ_BUDGET);
                    match live_sink {
                        Some(sink) => follower.writing(sink),
                        None => follower,
                    }
                }
                // Summaries: each image's live blocks by address, beside the streamed file.
                Some(_) => Follower::new(dir, true),
                None => Follower::new(dir, false),
            };
            let mut converter = sink.map(|sink| stream::Converter::new(source, Some(sink)));
            if converter.is_some() {
                follower = follower.with_budget(READ_BUDGET);
            }
            // The call tree's nodes are symbolized as the merge makes them (each node and each
            // address once), so that at the exit only the last ones are left.
            let mut symbolizer = memscape_trace::symbolize::Symbolizer::new();
            let every = live.as_ref().map_or(POLL_EVERY, |(every, _)| *every);
            while !stop.load(std::sync::atomic::Ordering::Acquire) {
                let read_at = stream::monotonic_ns();
                follower.poll()?;
                if let Some(converter) = &mut converter {
                    follower.feed(converter, std::time::Instant::now(), false);
                    // Everything below the frontier: what is left waits for time, not work.
                    converter.advance(Some(read_at));
                    if tracing::enabled!(tracing::Level::DEBUG) {
                        let (ready, pending, blocks) = converter.held();
                        phase_done(
                            &format!("poll: {ready} events ready, {pending} out of sequence, {blocks} blocks held"),
                            std::time::Instant::now(),
                        );
                    }
                }
                if let Some((_, on_poll)) = live.as_mut() {
                    on_poll(&follower, false);
                }
                // Behind the program: read on at once.
                if follower.caught_up() {
                    // Idle: the new nodes are named now (reading and merging go first, so a
                    // short program's merge is not held back by reading its modules' symbols).
                    if let Some(converter) = &mut converter {
                        converter.symbolize_new(&mut symbolizer);
                        // And the footer's call tree compressed so far (named first).
                        converter.compress_footer_ahead();
                    }
                    std::thread::park_timeout(every);
                }
            }
            Ok::<_, RecordError>((follower, converter.map(|c| (c, symbolizer))))
        });
        let launched = launch::run(command, dir);
        stop.store(true, std::sync::atomic::Ordering::Release);
        follower.thread().unpark();
        let followed = follower
            .join()
            .unwrap_or_else(|_| Ok((Follower::new(dir, false), None)));
        (launched, followed)
    });
    let (outcome, _child) = launched.map_err(|cause| RecordError::Spawn {
        program: options.program.clone(),
        cause,
    })?;
    phase_done("run", phase);
    let endings = merge::Endings {
        reaped: outcome.reaped.clone(),
        still_running: outcome.still_running.clone(),
    };
    let (signal, exit_status) = match outcome.root {
        Some(r) => (
            r.signal,
            r.code.unwrap_or_else(|| 128 + r.signal.unwrap_or(0)),
        ),
        None => (None, 130),
    };
    let kept = |raw_dir: tempfile::TempDir, cause: String| {
        let kept = raw_dir.keep();
        RecordError::WriteKept {
            path: options.output.display().to_string(),
            cause,
            kept: kept.display().to_string(),
        }
    };
    let phase = std::time::Instant::now();
    let converted = match followed {
        Err(e) => return Err(kept(raw_dir, e.to_string())),
        Ok((mut follower, Some((mut converter, mut symbolizer)))) => {
            // The rest: what was written since the last poll, every gap closed, read a budget
            // at a time and applied as it is read.
            loop {
                if let Err(e) = follower.poll_to_end() {
                    return Err(kept(raw_dir, e.to_string()));
                }
                follower.feed(&mut converter, std::time::Instant::now(), true);
                if follower.caught_up() {
                    break;
                }
                converter.advance(None);
            }
            if let Some((_, on_poll)) = live.as_mut() {
                // The last summary: everything, every gap closed.
                on_poll(&follower, true);
            }
            phase_done("read", phase);
            if converter.len() == 0 {
                return Err(RecordError::NothingRecorded {
                    program: options.program.clone(),
                });
            }
            let phase = std::time::Instant::now();
            let finished = converter.finish_into(&endings, &mut symbolizer, None);
            phase_done("finish", phase);
            finished.map_err(|e| ConvertError::Write(source.clone(), e))
        }
        Ok((mut follower, None)) if keeps_trace => {
            // The rest, a budget at a time; then the last snapshot: everything, every gap
            // closed.
            loop {
                if let Err(e) = follower.poll_to_end() {
                    return Err(kept(raw_dir, e.to_string()));
                }
                if follower.caught_up() {
                    break;
                }
            }
            if let Some((_, on_poll)) = live.as_mut() {
                on_poll(&follower, true);
            }
            phase_done("read", phase);
            if follower.writes() {
                let phase = std::time::Instant::now();
                let finished = follower.finish_written(&endings, on_whole);
                phase_done("finish", phase);
                match finished {
                    Some(Ok((reports, unrecorded))) => Ok((reports, unrecorded)),
                    Some(Err(e)) => Err(ConvertError::Write(source.clone(), e)),
                    None => {
                        return Err(RecordError::NothingRecorded {
                            program: options.program.clone(),
                        });
                    }
                }
            } else {
                match follower.into_trace(&endings) {
                    Some((trace, reports, unrecorded)) => {
                        write_trace(trace, options).map(|()| (reports, unrecorded))
                    }
                    None => {
                        return Err(RecordError::NothingRecorded {
                            program: options.program.clone(),
                        });
                    }
                }
            }
        }
        Ok((mut follower, None)) => {
            let images = match (|| {
                if let Some((_, on_poll)) = live.as_mut() {
                    // The last summary: everything, every gap closed.
                    follower.poll_to_end()?;
                    on_poll(&follower, true);
                }
                follower.finish()
            })() {
                Ok(images) => images,
                Err(e) => return Err(kept(raw_dir, e.to_string())),
            };
            phase_done("read", phase);
            if images.is_empty() {
                return Err(RecordError::NothingRecorded {
                    program: options.program.clone(),
                });
            }
            convert_images(images, &endings, options)
        }
    };
    let (processes, unrecorded) = match converted {
        Ok(converted) => converted,
        // Keep the raw recording: it is the run.
        Err(e) => return Err(kept(raw_dir, e.to_string())),
    };
    // The trace is complete and synced under its name: only now is the raw recording removed.
    let phase = std::time::Instant::now();
    let mut raw_kept = None;
    if std::env::var_os("MEMSCAPE_KEEP_RAW").is_some_and(|v| v == "1") {
        raw_kept = Some(raw_dir.keep());
    } else if let Err(e) = raw_dir.close() {
        tracing::warn!("cannot remove the raw recording: {e}");
    }
    phase_done("raw recording removed", phase);
    Ok(RecordReport {
        raw_kept,
        ..report(
            options,
            (processes, unrecorded),
            exit_status,
            signal,
            outcome.interrupted,
        )
    })
}

/// zstd level of a recording's `.msc` (`MEMSCAPE_ZSTD_LEVEL` to change it). The segments are
/// encoded while the program runs, on the recorder's CPU: on cc1plus (6.2 M events, load 10)
/// level 12 took 11.0 s of CPU for the whole record and gave 15.2 MB, level 3 8.0 s and 16.4 MB
/// (heaptrack's `.raw.zst`: 18.7 MB); level 1 18.2 MB for no less CPU. BENCHMARKS.md.
pub const RECORD_ZSTD_LEVEL: i32 = 3;

/// The `.msc` choices of a recording: its time resolution, zstd level [`RECORD_ZSTD_LEVEL`].
fn msc_options(options: &RecordOptions) -> memscape_trace::msc::MscOptions {
    memscape_trace::msc::MscOptions {
        time_resolution_log2: options.time_resolution_log2,
        zstd_level: Some(
            std::env::var("MEMSCAPE_ZSTD_LEVEL")
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(RECORD_ZSTD_LEVEL),
        ),
        ..Default::default()
    }
}

/// Blocks per segment of a recording's `.msc` (version 6), unless `MEMSCAPE_SEGMENT_BLOCKS`
/// says otherwise: 2^18, a quarter of `memscape_trace::msc::DEFAULT_SEGMENT_BLOCKS`. The
/// last segment (the blocks ended since the last cut, and the live ones) is encoded after the
/// program's exit: on cc1plus, 2^20 left ~1 s of encoding there, 2^18 ~0.1 s, for a file
/// 1–3 % larger (BENCHMARKS.md).
pub const RECORD_SEGMENT_BLOCKS: usize = 1 << 18;

fn segment_blocks() -> usize {
    std::env::var("MEMSCAPE_SEGMENT_BLOCKS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or(RECORD_SEGMENT_BLOCKS)
}

/// Converts a raw recording kept by a failed `record` (a directory of `.msr` files) into one
/// `.msc` trace, as `record` would have.
pub fn convert_dir(
    dir: &Path,
    output: &Path,
    time_resolution_log2: u8,
) -> Result<RecordReport, RecordError> {
    file_size_limit_is_an_error();
    // The follower's reading, all at once: the program has ended.
    let images = Follower::new(dir, false).finish()?;
    if images.is_empty() {
        return Err(RecordError::NoRawFiles {
            dir: dir.display().to_string(),
        });
    }
    let options = RecordOptions {
        output: output.to_owned(),
        stack_depth: 0,
        no_stacks: false,
        program: String::new(),
        args: Vec::new(),
        shim: None,
        time_resolution_log2,
    };
    let converted =
        convert_images(images, &merge::Endings::default(), &options).map_err(|e| match e {
            ConvertError::Write(path, cause) => RecordError::Io { path, cause },
        })?;
    let (exit_status, signal) = converted.0.first().map_or((0, None), |p| match p.end {
        memscape_trace::process::ProcessEnd::Exited { code } => (code, None),
        memscape_trace::process::ProcessEnd::Signaled { signal } => (128 + signal, Some(signal)),
        _ => (0, None),
    });
    Ok(report(&options, converted, exit_status, signal, false))
}

fn report(
    options: &RecordOptions,
    (processes, unrecorded): (Vec<ProcessReport>, Vec<UnrecordedProgram>),
    exit_status: i32,
    signal: Option<i32>,
    interrupted: bool,
) -> RecordReport {
    RecordReport {
        output: options.output.clone(),
        events: processes.iter().map(|p| p.events).sum(),
        allocs: processes.iter().map(|p| p.allocs).sum(),
        frees: processes.iter().map(|p| p.frees).sum(),
        exit_status,
        signal,
        interrupted,
        processes,
        time_resolution_ns: 1 << options.time_resolution_log2.min(62),
        unrecorded,
        raw_kept: None,
    }
}

/// The raw recording's directory beside the output, safe in a shared directory such as
/// `/tmp`: `mkdir` with mode 0700 from the start (no moment where another user could enter
/// it), a name with 16 random characters (about 95 bits: not guessable, so not pre-plantable),
/// and `mkdir` never follows a symlink or reuses an existing entry (it fails and another name
/// is tried). The shim creates its files inside with `O_CREAT | O_EXCL`.
fn private_raw_dir(out_dir: &Path) -> Result<tempfile::TempDir, RecordError> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new()
        .prefix(RAW_DIR_PREFIX)
        .rand_bytes(16)
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir_in(out_dir)
        .map_err(io(out_dir))?;
    // A umask that removes the owner's own bits (0o277) would leave it unwritable.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))
        .map_err(io(dir.path()))?;
    Ok(dir)
}

/// A write past the file-size limit (`ulimit -f`, RLIMIT_FSIZE) fails with EFBIG ("File too
/// large") and keeps the raw recording, instead of SIGXFSZ killing memscape with it unnamed. A
/// handler, not `SIG_IGN`: programs started later get the default action back at exec.
fn file_size_limit_is_an_error() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        if let Err(e) = signal_hook::flag::register(signal_hook::consts::SIGXFSZ, flag) {
            tracing::debug!("cannot handle SIGXFSZ ({e}): a file-size limit ends memscape");
        }
    });
}

/// Name prefix of a recording's private raw directory (kept, and named, when the final write
/// fails).
pub const RAW_DIR_PREFIX: &str = ".memscape-record-";

/// Logs a phase's time and the process's resident memory after it (current and peak, MiB):
/// `RUST_LOG=memscape_record=info`.
fn phase_done(name: &str, since: std::time::Instant) {
    if !tracing::enabled!(tracing::Level::INFO) {
        return;
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib = |key: &str| -> u64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches(" kB").parse().ok())
            .unwrap_or(0)
    };
    tracing::info!(
        phase = name,
        seconds = since.elapsed().as_secs_f64(),
        rss_mib = kib("VmRSS:") / 1024,
        peak_rss_mib = kib("VmHWM:") / 1024,
    );
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> RecordError + '_ {
    move |cause| RecordError::Io {
        path: path.display().to_string(),
        cause,
    }
}

fn output_dir(output: &Path) -> &Path {
    output
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

#[derive(Debug)]
enum ConvertError {
    /// (path, cause)
    Write(String, std::io::Error),
}

impl std::fmt::Display for ConvertError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConvertError::Write(_, cause) => write!(f, "{cause}"),
        }
    }
}

/// Merges, symbolizes and writes the images; returns their reports.
fn convert_images(
    images: Vec<merge::Image>,
    endings: &merge::Endings,
    options: &RecordOptions,
) -> Result<(Vec<ProcessReport>, Vec<UnrecordedProgram>), ConvertError> {
    let source = options.output.display().to_string();
    let phase = std::time::Instant::now();
    let (trace, reports, unrecorded) = merge::merge(&source, images, endings);
    phase_done("merge", phase);
    write_trace(trace, options)?;
    Ok((reports, unrecorded))
}

/// Symbolizes `trace` and writes it to `options.output` (synced).
fn write_trace(mut trace: Trace, options: &RecordOptions) -> Result<(), ConvertError> {
    let source = options.output.display().to_string();
    let phase = std::time::Instant::now();
    let _ = memscape_trace::symbolize::symbolize(&mut trace);
    phase_done("symbolize", phase);
    let phase = std::time::Instant::now();
    let bytes = memscape_trace::msc::to_msc_bytes_with(&trace, &msc_options(options), &mut |_| {})
        .map_err(|e| ConvertError::Write(source.clone(), e))?;
    phase_done("encode", phase);
    let phase = std::time::Instant::now();
    memscape_trace::write_synced(&options.output, &bytes)
        .map_err(|e| ConvertError::Write(source, e))?;
    phase_done("write", phase);
    Ok(())
}

/// `<exe>.<pid>.<n>.msr` → (pid, n).
pub(crate) fn parse_raw_name(path: &Path) -> Option<(u32, u32)> {
    let name = path.file_name()?.to_str()?;
    let rest = name.strip_suffix(".msr")?;
    let (rest, n) = rest.rsplit_once('.')?;
    let (_, pid) = rest.rsplit_once('.')?;
    Some((pid.parse().ok()?, n.parse().ok()?))
}

/// Converts one recorder file into a trace (one process). See [`record`] for a whole run.
pub fn convert_raw(source: &str, raw: &RawProcess) -> Trace {
    let image = merge::Image {
        raw: raw.clone(),
        n: 0,
    };
    merge::merge(source, vec![image], &merge::Endings::default()).0
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
