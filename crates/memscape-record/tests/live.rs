//! Following a recording while the program runs (issue 18 part 4, the library side): a real
//! program that allocates for about 1.5 s, launched through `sh -c` with a second copy in the
//! background (a fork tree), recorded with `record_live`; and a recording written by the shim
//! outside `memscape record`, followed by a `Follower` with trace snapshots.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use common::*;
use memscape_record::{Follower, LiveSummary, RecordOptions, record_live};

#[test]
fn record_live_reports_growing_summaries_that_end_at_the_trace_counts() {
    let dir = tempfile::tempdir().unwrap();
    let program = compile("slow.c", dir.path());
    let script = format!("{p} 30 & {p} 20; wait", p = program.display());
    let mut updates: Vec<(Instant, LiveSummary)> = Vec::new();
    let report = record_live(
        &RecordOptions {
            output: dir.path().join("live.msc"),
            stack_depth: 16,
            no_stacks: false,
            program: "sh".into(),
            args: vec!["-c".into(), script],
            shim: Some(shim()),
            time_resolution_log2: 4,
        },
        Duration::from_millis(100),
        &mut |s| updates.push((Instant::now(), s.clone())),
    )
    .unwrap();
    assert_eq!(report.exit_status, 0);
    check_consistency(&report);
    // Growing while the program ran: several distinct summaries, never going back.
    let mut distinct = updates.iter().map(|(_, s)| s.events).collect::<Vec<_>>();
    assert!(
        distinct.windows(2).all(|w| w[0] <= w[1]),
        "events went back: {distinct:?}"
    );
    distinct.dedup();
    assert!(
        distinct.len() >= 4,
        "expected the counts to grow in at least 3 steps over 1.5 s: {distinct:?}"
    );
    let span = updates.last().unwrap().0 - updates.first().unwrap().0;
    assert!(span >= Duration::from_millis(1000), "{span:?}");
    // The last summary is the whole trace: per process, allocations, frees and peaks equal
    // the finished trace's.
    let last = &updates.last().unwrap().1;
    assert_eq!((last.allocs, last.frees), (report.allocs, report.frees));
    let mut live: Vec<(u32, u64, u64, u64)> = last
        .processes
        .iter()
        .map(|p| (p.pid, p.allocs, p.frees, p.peak_live_bytes))
        .collect();
    let mut finished: Vec<(u32, u64, u64, u64)> = report
        .processes
        .iter()
        .map(|p| (p.pid, p.allocs, p.frees, p.peak_live_bytes))
        .collect();
    live.sort_unstable();
    finished.sort_unstable();
    assert_eq!(live, finished);
    // Both copies of the program: 30 and 20 rounds of 1000 allocations.
    let slow: Vec<u64> = report
        .processes
        .iter()
        .filter(|p| p.command_line.starts_with(&program.display().to_string()))
        .map(|p| p.allocs)
        .collect();
    assert_eq!(slow.len(), 2, "{:?}", report.processes);
    assert!(slow.contains(&30_000) && slow.contains(&20_000), "{slow:?}");
}

#[test]
fn a_follower_snapshots_a_recording_in_progress_and_ends_at_the_converted_trace() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, raw) = start_recording_elsewhere(dir.path());
    let mut follower = Follower::new(&raw, true);
    let mut snapshots = Vec::new();
    follow_while_running(&mut follower, &mut child, |follower| {
        let started = Instant::now();
        let trace = follower.snapshot("live");
        let appended = started.elapsed();
        // Consistent: cut at the watermark, every free has its allocation.
        assert_eq!(trace.meta.unknown_frees, 0);
        // Appended to the previous snapshot, it is the snapshot rebuilt from the first event.
        let started = Instant::now();
        let rebuilt = follower.rebuilt_snapshot("live");
        eprintln!(
            "{} events: appended {appended:?}, rebuilt {:?}",
            trace.meta.events,
            started.elapsed()
        );
        assert_same_blocks(&trace, &rebuilt);
        snapshots.push((trace.meta.allocs, trace.meta.frees, trace.blocks.len()));
    });
    let end = follower.snapshot("live");
    assert_same_blocks(&end, &follower.rebuilt_snapshot("live"));
    let converted = memscape_record::convert_dir(&raw, &dir.path().join("c.msc"), 0).unwrap();
    let trace = memscape_trace::read_msc(&converted.output).unwrap();
    assert_eq!(
        (
            end.meta.allocs,
            end.meta.frees,
            end.meta.events,
            end.blocks.len()
        ),
        (
            trace.meta.allocs,
            trace.meta.frees,
            trace.meta.events,
            trace.blocks.len()
        )
    );
    assert_eq!(end.blocks.address[..], trace.blocks.address[..]);
    let growing: Vec<u64> = snapshots.iter().map(|s| s.0).filter(|&a| a > 0).collect();
    assert!(
        growing.len() >= 4 && growing.windows(2).all(|w| w[0] <= w[1]),
        "{snapshots:?}"
    );
    assert!(growing.first() < growing.last(), "{snapshots:?}");
    assert!(*growing.last().unwrap() <= end.meta.allocs);
}

#[test]
fn a_consuming_follower_keeps_the_trace_not_the_events_and_ends_at_the_converted_trace() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, raw) = start_recording_elsewhere(dir.path());
    let mut follower = Follower::consuming(&raw, "live");
    let mut snapshots: Vec<memscape_trace::Trace> = Vec::new();
    follow_while_running(&mut follower, &mut child, |follower| {
        let trace = follower.snapshot("live");
        // Consistent (every free has its allocation), and what the summary counts.
        assert_eq!(trace.meta.unknown_frees, 0);
        assert_summary_counts_the_snapshot(&follower.summary(), &trace);
        // No events kept: rebuilding from them finds none.
        assert_eq!(follower.rebuilt_snapshot("live").meta.events, 0);
        snapshots.push(trace);
    });
    let end = follower.snapshot("live");
    assert_summary_counts_the_snapshot(&follower.summary(), &end);
    let converted = memscape_record::convert_dir(&raw, &dir.path().join("c.msc"), 0).unwrap();
    let trace = memscape_trace::read_msc(&converted.output).unwrap();
    assert_same_blocks(&end, &trace);
    // Each earlier snapshot is still what it was: a prefix of the end's blocks (in allocation
    // order), alive or ended as it had seen them.
    let growing: Vec<u64> = snapshots.iter().map(|s| s.meta.allocs).collect();
    assert!(
        growing.windows(2).all(|w| w[0] <= w[1]) && growing.iter().filter(|&&a| a > 0).count() >= 4,
        "{growing:?}"
    );
    for s in &snapshots {
        let n = s.blocks.len();
        assert_eq!(s.blocks.address[..], end.blocks.address[..n]);
        assert_eq!(s.blocks.alloc_event[..], end.blocks.alloc_event[..n]);
        for i in 0..n {
            let freed = s.blocks.free_event[i] < s.meta.events;
            if freed {
                assert_eq!(
                    s.blocks.free_event[i], end.blocks.free_event[i],
                    "block {i}"
                );
            } else {
                assert!(end.blocks.free_event[i] >= s.meta.events, "block {i}");
            }
        }
    }
}

/// A consuming follower's summary is its merge's counts: the snapshot made at the same moment
/// counts the same events, allocations, frees and live bytes, in total and per process (a
/// live view asks the summary whether a snapshot would hold anything new).
fn assert_summary_counts_the_snapshot(summary: &LiveSummary, trace: &memscape_trace::Trace) {
    let m = &trace.meta;
    assert_eq!(
        (
            summary.events,
            summary.allocs,
            summary.frees,
            summary.live_bytes
        ),
        (m.events, m.allocs, m.frees, m.end_live_bytes)
    );
    if m.events == 0 {
        return;
    }
    let per_process =
        |pid, ppid, events, allocs, frees, peak| (pid, ppid, events, allocs, frees, peak);
    let summarized: Vec<_> = summary
        .processes
        .iter()
        .map(|p| {
            per_process(
                p.pid,
                p.ppid,
                p.events,
                p.allocs,
                p.frees,
                p.peak_live_bytes,
            )
        })
        .collect();
    let traced: Vec<_> = trace
        .processes
        .iter()
        .map(|p| {
            per_process(
                p.pid,
                p.parent_pid,
                p.events,
                p.allocs,
                p.frees,
                p.peak_live_bytes,
            )
        })
        .collect();
    assert_eq!(summarized, traced);
    let live: u64 = summary.processes.iter().map(|p| p.live_bytes).sum();
    assert_eq!(live, m.end_live_bytes);
}

/// `slow.c` run through `sh -c "exec slow 25"` with the shim preloaded by hand, as a recording
/// started elsewhere, writing into `dir/raw`.
fn start_recording_elsewhere(dir: &Path) -> (Child, PathBuf) {
    let program = compile("slow.c", dir);
    let raw = dir.join("raw");
    std::fs::create_dir(&raw).unwrap();
    let child = Command::new("sh")
        .args(["-c", &format!("exec {} 25", program.display())])
        .env("LD_PRELOAD", shim())
        .env("MEMSCAPE_RECORD_DIR", &raw)
        .env("MEMSCAPE_STACK_DEPTH", "8")
        .spawn()
        .unwrap();
    (child, raw)
}

/// Polls `follower` every 150 ms while `child` runs, handing it to `after_poll` after each
/// poll; then reads the rest (every gap closed).
fn follow_while_running(
    follower: &mut Follower,
    child: &mut Child,
    mut after_poll: impl FnMut(&Follower),
) {
    while child.try_wait().unwrap().is_none() {
        follower.poll().unwrap();
        after_poll(follower);
        std::thread::sleep(Duration::from_millis(150));
    }
    follower.poll_to_end().unwrap();
}

/// The same blocks (sizes, addresses, flags, events, sites' frames, threads) and counts; times
/// within 2 µs (each event's clock mapping is fixed when it is appended, from the clock pairs
/// read by then).
fn assert_same_blocks(a: &memscape_trace::Trace, b: &memscape_trace::Trace) {
    let (ma, mb) = (&a.meta, &b.meta);
    assert_eq!(
        (
            ma.events,
            ma.allocs,
            ma.frees,
            ma.unknown_frees,
            ma.peak_live_bytes
        ),
        (
            mb.events,
            mb.allocs,
            mb.frees,
            mb.unknown_frees,
            mb.peak_live_bytes
        )
    );
    let (x, y) = (&a.blocks, &b.blocks);
    assert_eq!(x.address[..], y.address[..]);
    assert_eq!(x.requested_size[..], y.requested_size[..]);
    assert_eq!(x.flags[..], y.flags[..]);
    assert_eq!(x.alloc_event[..], y.alloc_event[..]);
    assert_eq!(x.free_event[..], y.free_event[..]);
    let frames = |t: &memscape_trace::Trace, node: u32| -> Vec<u64> {
        t.call_tree
            .stack(node)
            .iter()
            .map(|&n| t.call_tree.frames[n as usize].ip)
            .collect()
    };
    let name = |t: &memscape_trace::Trace, i: u32| t.strings.get(t.threads[i as usize]).to_owned();
    for i in 0..x.len() {
        assert_eq!(frames(a, x.site[i]), frames(b, y.site[i]), "block {i}");
        assert_eq!(name(a, x.thread[i]), name(b, y.thread[i]), "block {i}");
        assert!(
            x.alloc_time_ns[i].abs_diff(y.alloc_time_ns[i]) <= 2_000,
            "block {i}"
        );
    }
}
