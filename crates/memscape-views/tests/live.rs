//! The live view's reading side, headless, on a real program recorded at test time: the
//! snapshots `memscape record --live` hands the GUI grow while the program runs, and the
//! recording's last state (every gap closed) is the finished file's trace, what the user chose
//! on one snapshot (highlight, time cursor) is kept on the next; `memscape view
//! --live FILE` (`live::follow`) started before the recording follows it and ends on the file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use memscape_views::live::{self, LiveUpdate};

/// A C program that allocates in 10 bursts 120 ms apart (with frees), so that a reader polling
/// every 200 ms sees it grow.
const GROW_C: &str = r#"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static void *keep[4096];
static void *make_node(size_t n) { void *p = malloc(n); memset(p, 1, n); return p; }
int main(void) {
    for (int round = 0; round < 10; round++) {
        for (int i = 0; i < 300; i++) {
            int k = round * 300 + i;
            keep[k % 4096] = make_node(64 + (k % 7) * 48);
            if (k % 3 == 0) { free(keep[(k * 7) % 4096]); keep[(k * 7) % 4096] = 0; }
        }
        usleep(120000);
    }
    return 0;
}
"#;

fn shim() -> PathBuf {
    if let Ok(shim) = memscape_record::find_shim() {
        return shim;
    }
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--quiet", "-p", "memscape-recorder"])
        .status()
        .unwrap();
    assert!(status.success());
    memscape_record::find_shim().unwrap()
}

fn grow_program(dir: &Path) -> PathBuf {
    let src = dir.join("grow.c");
    std::fs::write(&src, GROW_C).unwrap();
    let exe = dir.join("grow");
    let status = Command::new("gcc")
        .args(["-O0", "-g", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .expect("gcc (make test installs it)");
    assert!(status.success());
    exe
}

fn options(dir: &Path, exe: &Path, output: &Path) -> memscape_record::RecordOptions {
    let _ = dir;
    memscape_record::RecordOptions {
        output: output.to_owned(),
        stack_depth: 16,
        no_stacks: false,
        program: exe.display().to_string(),
        args: Vec::new(),
        shim: Some(shim()),
        // Exact times: the snapshots' and the file's compare as they are.
        time_resolution_log2: 0,
    }
}

/// Counts (events, allocations, frees) and blocks (address, size, alloc and free time).
type Fingerprint = ((u64, u64, u64), Vec<(u64, u64, u64, u64)>);

/// The parts of a trace the views draw from, for comparing two of them.
fn fingerprint(t: &memscape_trace::Trace) -> Fingerprint {
    let b = &t.blocks;
    let mut blocks: Vec<(u64, u64, u64, u64)> = (0..b.len())
        .map(|i| {
            (
                b.address[i],
                b.size[i],
                b.alloc_time_ns[i],
                b.free_time_ns[i],
            )
        })
        .collect();
    blocks.sort_unstable();
    ((t.meta.events, t.meta.allocs, t.meta.frees), blocks)
}

/// The highlighted blocks of `dataset`: process, address, size and allocation event (one
/// program's events keep their numbers as its recording grows).
fn highlighted(dataset: &memscape_views::Dataset) -> Vec<(u32, u64, u64, u64)> {
    let b = &dataset.alloc_trace().unwrap().trace.blocks;
    let highlight = dataset.links.get().highlight.unwrap_or_default();
    highlight
        .iter()
        .map(|&i| {
            let i = i as usize;
            (b.process[i], b.address[i], b.size[i], b.alloc_event[i])
        })
        .collect()
}

#[test]
fn record_live_snapshots_grow_and_end_as_the_finished_file() {
    let dir = tempfile::tempdir().unwrap();
    let exe = grow_program(dir.path());
    let output = dir.path().join("grow.msc");
    let (mut sender, receiver) = live::channel(&output.display().to_string());
    // The GUI's side: takes every update as it comes (as a window would, once a frame), and
    // keeps what the user chose on the shown dataset on the next (as the window does): a
    // highlight and a time cursor set on the first snapshot with blocks.
    let taker = std::thread::spawn(move || {
        let mut events = Vec::new();
        let mut shown: Option<std::sync::Arc<memscape_views::Dataset>> = None;
        let mut kept = 0;
        loop {
            let (next, finished) = match receiver.rx.recv_timeout(Duration::from_secs(60)) {
                Ok(LiveUpdate::Snapshot {
                    dataset, events: e, ..
                }) => {
                    let t = &dataset.alloc_trace().unwrap().trace;
                    assert_eq!(t.meta.events, e);
                    events.push(e);
                    (dataset, false)
                }
                Ok(LiveUpdate::Finished(done)) => (done.unwrap(), true),
                Err(e) => panic!("no update: {e}"),
            };
            match &shown {
                Some(before) if before.links.get().highlight.is_some() => {
                    live::carry_links(before, &next);
                    assert_eq!(highlighted(before), highlighted(&next), "highlight lost");
                    let (a, b) = (before.links.get(), next.links.get());
                    assert_eq!(a.time_events, b.time_events, "time cursor lost");
                    kept += 1;
                }
                _ => {
                    let n = next.alloc_trace().unwrap().trace.blocks.len() as u32;
                    if n >= 40 {
                        let every_third = (0..n).step_by(3).collect();
                        next.links
                            .set_highlight(every_third, "every third block".into());
                        next.links.set_time(n as u64 / 2);
                    }
                }
            }
            if finished {
                return (events, next, kept);
            }
            shown = Some(next);
        }
    });
    let mut last = None;
    let report = memscape_record::record_observed(
        &options(dir.path(), &exe, &output),
        live::POLL_EVERY,
        &mut |follower, ended| {
            if ended {
                last = Some(follower.snapshot("last"));
            } else {
                sender.offer(follower);
            }
        },
    )
    .unwrap();
    sender.finish(&report.output);
    let (events, finished, kept) = taker.join().unwrap();
    // About 1.2 s of bursts read every 200 ms: several snapshots, growing.
    assert!(events.len() >= 3, "{events:?}");
    assert!(kept >= 2, "the highlight was carried {kept} times");
    assert!(events.windows(2).all(|w| w[0] < w[1]), "{events:?}");
    let file = memscape_trace::read_msc(&output).unwrap();
    assert!(*events.last().unwrap() <= file.meta.events);
    // The end: the last state read is the file's trace, and the view ends on the file.
    assert_eq!(fingerprint(&last.unwrap()), fingerprint(&file));
    let finished = &finished.alloc_trace().unwrap().trace;
    assert_eq!(fingerprint(finished), fingerprint(&file));
    assert_eq!(finished.meta.source, file.meta.source);
}

#[test]
fn view_live_follows_a_recording_started_elsewhere_to_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let exe = grow_program(dir.path());
    let output = dir.path().join("elsewhere.msc");
    // Following starts before the recording does: it waits for the recording's directory.
    let receiver = live::follow(output.clone()).unwrap();
    let opts = options(dir.path(), &exe, &output);
    let recording = std::thread::spawn(move || memscape_record::record(&opts).unwrap());
    let mut snapshots = Vec::new();
    let finished = loop {
        match receiver.rx.recv_timeout(Duration::from_secs(60)).unwrap() {
            LiveUpdate::Snapshot { events, .. } => snapshots.push(events),
            LiveUpdate::Finished(done) => break done.unwrap(),
        }
    };
    recording.join().unwrap();
    assert!(snapshots.len() >= 2, "{snapshots:?}");
    assert!(snapshots.windows(2).all(|w| w[0] < w[1]), "{snapshots:?}");
    let file = memscape_trace::read_msc(&output).unwrap();
    assert_eq!(
        fingerprint(&finished.alloc_trace().unwrap().trace),
        fingerprint(&file)
    );
}
