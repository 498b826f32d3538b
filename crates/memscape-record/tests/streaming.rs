//! `record` merges and writes the trace while the program runs (`src/stream.rs`): the file it
//! leaves holds what the whole-file merge of the same raw recording (`convert_dir`) gives, and
//! its memory does not grow with the length of the recording.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{compile, shim, target_dir};
use memscape_trace::Trace;

fn record_bin() -> PathBuf {
    let bin = target_dir().join("debug/examples/record");
    assert!(
        bin.is_file(),
        "{} missing (cargo test builds it)",
        bin.display()
    );
    bin
}

/// Runs the `record` example with `env`; returns its report (JSON) and the launcher's peak
/// RSS in KiB (its own VmHWM, which it prints).
fn record(
    out: &Path,
    program: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (serde_json::Value, u64) {
    // Options of the example before `--` (`--live`), the program's arguments after it.
    let (options, args) = args.split_at(args.iter().take_while(|a| a.starts_with("--")).count());
    let mut command = Command::new(record_bin());
    command
        .args(options)
        .arg("-o")
        .arg(out)
        .arg("--")
        .arg(program)
        .args(args)
        .env("MEMSCAPE_SHIM", shim());
    for (k, v) in env {
        command.env(k, v);
    }
    let output = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "record failed: {stderr}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let peak = stderr
        .lines()
        .find_map(|l| l.split("VmHWM:").nth(1))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("the launcher's VmHWM");
    (report, peak)
}

/// A frame as symbolized: (address, module, function, file, line).
type NamedFrame = (u64, String, String, String, u32);

/// Each block as its process sees it, in its process's event order: (process pid, address,
/// requested, usable, flags, thread name, allocating stack, freeing stack, freed).
type Row = (
    u32,
    u64,
    u64,
    u64,
    u8,
    String,
    Vec<NamedFrame>,
    Vec<NamedFrame>,
    bool,
);

fn rows(t: &Trace) -> Vec<Row> {
    let b = &t.blocks;
    let stack = |node: u32| -> Vec<NamedFrame> {
        t.call_tree
            .stack(node)
            .iter()
            .map(|&n| {
                let f = &t.call_tree.frames[n as usize];
                (
                    f.ip,
                    t.strings.get(f.module).to_owned(),
                    t.strings.get(f.function).to_owned(),
                    t.strings.get(f.file).to_owned(),
                    f.line,
                )
            })
            .collect()
    };
    let mut order: Vec<usize> = (0..b.len()).collect();
    order.sort_by_key(|&i| (b.process[i], b.alloc_event[i]));
    order
        .into_iter()
        .map(|i| {
            (
                t.processes[b.process[i] as usize].pid,
                b.address[i],
                b.requested_size[i],
                b.usable_size[i],
                b.flags[i],
                t.strings.get(t.threads[b.thread[i] as usize]).to_owned(),
                stack(b.site[i]),
                stack(b.free_site[i]),
                b.free_event[i] < t.meta.events,
            )
        })
        .collect()
}

/// Recorded with segments of 20,000 blocks (many cut while the program runs: three threads
/// and a forked child, blocks live across segments, some never freed, reallocs, named
/// threads), the trace equals the whole-file merge of the same raw recording: every block of
/// every process with its sizes, flags, thread, allocating and freeing stacks (each frame's
/// symbols too: the recording names them while the program runs, the whole-file merge
/// afterwards), the process
/// table, the counts and the warnings; times agree within 2 µs.
#[test]
fn the_streamed_trace_is_the_whole_file_merge_of_the_same_recording() {
    let dir = tempfile::tempdir().unwrap();
    let program = compile("stream.c", dir.path());
    let out = dir.path().join("streamed.msc");
    let (report, _) = record(
        &out,
        &program,
        &[],
        &[
            ("MEMSCAPE_SEGMENT_BLOCKS", "20000"),
            ("MEMSCAPE_KEEP_RAW", "1"),
        ],
    );
    let raw = PathBuf::from(report["raw_kept"].as_str().expect("the raw recording kept"));
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(
        u32::from_le_bytes(bytes[8..12].try_into().unwrap()),
        6,
        "a segmented file"
    );
    let streamed = memscape_trace::read_msc(&out).unwrap();
    let whole = whole_merge(&raw, dir.path());
    assert!(
        streamed.blocks.len() > 150_000,
        "{} blocks",
        streamed.blocks.len()
    );
    assert!(streamed.blocks.len() > 5 * 20_000, "several segments");
    assert_eq!(streamed.processes.len(), 2);
    for (k, (s, w)) in streamed.processes.iter().zip(&whole.processes).enumerate() {
        assert_eq!(
            (
                s.pid,
                s.parent_pid,
                &s.command_line,
                s.events,
                s.allocs,
                s.frees
            ),
            (
                w.pid,
                w.parent_pid,
                &w.command_line,
                w.events,
                w.allocs,
                w.frees
            )
        );
        // (`convert_dir` does not know how the launched program ended: `record` reaped it.)
        if k > 0 {
            assert_eq!(s.end, w.end);
        }
        assert_eq!(s.peak_live_bytes, w.peak_live_bytes);
        assert_eq!(s.start_ns, w.start_ns);
    }
    assert_eq!(
        streamed.processes[1].end,
        memscape_trace::process::ProcessEnd::Exited { code: 5 }
    );
    let (ms, mw) = (&streamed.meta, &whole.meta);
    assert_eq!(
        (
            ms.events,
            ms.allocs,
            ms.frees,
            ms.reallocs,
            ms.unknown_frees,
            ms.peak_live_bytes
        ),
        (
            mw.events,
            mw.allocs,
            mw.frees,
            mw.reallocs,
            mw.unknown_frees,
            mw.peak_live_bytes
        )
    );
    assert_eq!(streamed.warnings, whole.warnings);
    let (rs, rw) = (rows(&streamed), rows(&whole));
    assert_eq!(rs.len(), rw.len());
    for (k, (a, b)) in rs.iter().zip(&rw).enumerate() {
        assert_eq!(a, b, "block {k} of its process");
    }
    // Named after their first allocations: the names they set.
    assert!(rs.iter().any(|r| r.5.starts_with("churn-1 (")));
    assert!(rs.iter().any(|r| !r.8), "never-freed blocks");
    // Times: each block's, matched by process and order, within 2 µs.
    let times = |t: &Trace| {
        let b = &t.blocks;
        let mut v: Vec<(u32, u64, u64, u64)> = (0..b.len())
            .map(|i| {
                (
                    b.process[i],
                    b.alloc_event[i],
                    b.alloc_time_ns[i],
                    b.free_time_ns[i],
                )
            })
            .collect();
        v.sort_unstable();
        v
    };
    for (a, b) in times(&streamed).iter().zip(&times(&whole)) {
        assert!(
            a.2.abs_diff(b.2) <= 2_000 && a.3.abs_diff(b.3) <= 2_000,
            "{a:?} vs {b:?}"
        );
    }
    std::fs::remove_dir_all(&raw).unwrap();
}

/// Memory does not grow with the recording's length: 18 M events take at most 200 MiB more
/// peak RSS than 6 M (the whole-file merge held ~100 bytes per event, +1.2 GB here). What the
/// streaming merge holds is bounded by the event *rate* (the events of the last
/// `stream::MARGIN`, 250 ms, wait for the other threads' clocks), not by the length: the
/// shorter run must last well past that margin, or it holds its whole trace and the
/// comparison measures the rate instead (with 2 M against 6 M events the difference was
/// 230–290 MiB on a quiet machine). The program's rate is capped at 2 M pairs a second (4 M
/// events, ≈ 1 M events and 56 MB waiting): uncapped, 12 M events a second in CI's quiet
/// minutes and far fewer in its loaded ones made the two runs' peaks differ by their rates
/// (CI: 330 MiB for 6 M, 586 MiB for 18 M, with the queue then doubling its buffer).
#[test]
fn peak_memory_does_not_grow_with_the_number_of_events() {
    peak_memory_is_bounded(&[]);
}

/// The same bound for `record --live` without a window (running summaries): the trace is
/// streamed as `record` streams it (before: kept whole for the end, +330 MiB from 2 M to 6 M
/// events, 2 GB at 20 M).
#[test]
fn live_summaries_keep_the_peak_memory_bounded() {
    peak_memory_is_bounded(&["--live"]);
}

fn peak_memory_is_bounded(record_args: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let program = compile("churn.c", dir.path());
    let env = [("MEMSCAPE_SEGMENT_BLOCKS", "65536")];
    let run = |out: &str, pairs: &str| {
        let args: Vec<&str> = record_args.iter().copied().chain([pairs, "2e6"]).collect();
        record(&dir.path().join(out), &program, &args, &env)
    };
    let (short, short_peak) = run("s.msc", "3000000");
    let (long, long_peak) = run("l.msc", "9000000");
    assert!(short["events"].as_u64().unwrap() >= 6_000_000);
    assert!(long["events"].as_u64().unwrap() >= 18_000_000);
    eprintln!("peak RSS: {short_peak} KiB for 6 M events, {long_peak} KiB for 18 M");
    assert!(
        long_peak <= short_peak + 200 * 1024,
        "peak RSS {long_peak} KiB for 18 M events vs {short_peak} KiB for 6 M"
    );
    let t = memscape_trace::read_msc(&dir.path().join("l.msc")).unwrap();
    assert_eq!(t.meta.allocs, t.meta.frees);
    assert_eq!(t.blocks.len() as u64, t.meta.allocs);
}

/// The call tree is symbolized while the program runs (each node as the merge makes it): a
/// library the program dlopens only after a second of allocating, called just before its
/// exit (its stacks first seen after the exit) and not closed, has every frame named, as
/// have the program's own frames from the start; and the names equal those of the whole-file
/// merge of the same raw recording, which symbolizes once at the end.
#[test]
fn a_library_dlopened_late_has_every_frame_symbolized() {
    let dir = tempfile::tempdir().unwrap();
    let lib = common::compile_alloclib(dir.path(), "liblate.so", "-O0");
    let program = compile("late_dlopen.c", dir.path());
    let out = dir.path().join("late.msc");
    let (report, _) = record(
        &out,
        &program,
        &[&lib.display().to_string()],
        &[("MEMSCAPE_KEEP_RAW", "1")],
    );
    let raw = PathBuf::from(report["raw_kept"].as_str().expect("the raw recording kept"));
    let t = memscape_trace::read_msc(&out).unwrap();
    let lib_path = lib.display().to_string();
    let program_path = program.display().to_string();
    let mut named = std::collections::BTreeMap::<(String, String), usize>::new();
    let mut lib_frames = 0;
    for f in t.call_tree.frames.iter().skip(1) {
        let module = t.strings.get(f.module);
        if module != lib_path && module != program_path {
            continue;
        }
        lib_frames += usize::from(module == lib_path);
        let function = t.strings.get(f.function);
        assert!(
            f.function != 0 && !function.is_empty(),
            "a frame of {module} at offset {:#x} unnamed",
            f.module_offset
        );
        *named
            .entry((module.to_owned(), function.to_owned()))
            .or_default() += 1;
    }
    assert!(lib_frames >= 2, "the library's frames: {named:?}");
    for (module, function) in [
        (&lib_path, "load"),
        (&lib_path, "work"),
        (&program_path, "main"),
        (&program_path, "early"),
    ] {
        assert!(
            named.contains_key(&(module.clone(), function.to_owned())),
            "{function} of {module} not among {named:?}"
        );
    }
    let whole = whole_merge(&raw, dir.path());
    let (rs, rw) = (rows(&t), rows(&whole));
    assert_eq!(rs.len(), rw.len());
    for (k, (a, b)) in rs.iter().zip(&rw).enumerate() {
        assert_eq!(a, b, "block {k}");
    }
    std::fs::remove_dir_all(&raw).unwrap();
}

/// The whole-file merge of the raw recording `raw` (`convert_dir`, written in `dir`), read back:
/// what the streamed trace must equal.
fn whole_merge(raw: &Path, dir: &Path) -> Trace {
    let whole_path = dir.join("whole.msc");
    memscape_record::convert_dir(
        raw,
        &whole_path,
        memscape_record::DEFAULT_TIME_RESOLUTION_LOG2,
    )
    .unwrap();
    memscape_trace::read_msc(&whole_path).unwrap()
}
