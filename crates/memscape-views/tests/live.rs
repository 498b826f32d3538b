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

/// `a` and `b` have the same counts and blocks, their times at most `ns` apart.
fn assert_same_within(a: &Fingerprint, b: &Fingerprint, ns: u64) {
    assert_eq!(a.0, b.0, "counts");
    assert_eq!(a.1.len(), b.1.len(), "blocks");
    for (x, y) in a.1.iter().zip(&b.1) {
        assert_eq!((x.0, x.1), (y.0, y.1), "block address and size");
        assert!(
            x.2.abs_diff(y.2) <= ns && x.3.abs_diff(y.3) <= ns,
            "block times {x:?} vs {y:?}"
        );
    }
}

/// Call-tree nodes with a function name (or without a module: nothing to symbolize).
fn named_nodes(t: &memscape_trace::Trace) -> usize {
    t.call_tree
        .frames
        .iter()
        .filter(|f| f.function != 0 || f.module == 0)
        .count()
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

/// The snapshot's occupancy step functions (its sweep continued from the previous
/// snapshot's) equal a sweep of the snapshot from its first event.
fn assert_region_metrics_are_a_full_sweep(dataset: &memscape_views::Dataset) {
    use memscape_trace::bins::{BinBy, Bins};
    let data = dataset.alloc_trace().unwrap();
    let scene = data.scene.as_ref().unwrap();
    let bins = Bins::new(
        &data.trace,
        BinBy::Region {
            gap_threshold: memscape_views::alloc_map::scene::REGION_GAP,
        },
    );
    // The scene sweeps without the free gaps (the bars read the occupancy only).
    let (full, _) =
        memscape_trace::metrics::BinMetrics::continued_occupancy(&data.trace, &bins, None);
    let live = &scene.region_metrics;
    assert_eq!(live.extents, full.extents);
    assert_eq!(live.series, full.series, "a continued sweep differs");
}

#[test]
fn record_live_snapshots_grow_and_end_as_the_finished_file() {
    let dir = tempfile::tempdir().unwrap();
    let exe = grow_program(dir.path());
    let output = dir.path().join("grow.msc");
    let (mut sender, receiver) = live::channel(&output.display().to_string());
    // Paced as the window paces it (the next snapshot once this one is shown), with the
    // occupancy swept ahead meanwhile every few events (every snapshot's sweep is checked).
    receiver.pace_by_shown();
    sender.sweep_ahead_every(300);
    // The GUI's side: takes every update as it comes (as a window would, once a frame), and
    // keeps what the user chose on the shown dataset on the next (as the window does): a
    // highlight and a time cursor set on the first snapshot with blocks.
    let taker = std::thread::spawn(move || {
        let mut events = Vec::new();
        let mut symbolized = Vec::new();
        let mut shown: Option<std::sync::Arc<memscape_views::Dataset>> = None;
        let mut kept = 0;
        // The heap tree's grouping continued from snapshot to snapshot, as the live pane does.
        let mut carry: Option<memscape_heap::HeapCarry> = None;
        let mut continued = 0;
        loop {
            let (next, finished) = match receiver.rx.recv_timeout(Duration::from_secs(60)) {
                Ok(LiveUpdate::Snapshot {
                    dataset,
                    events: e,
                    stats,
                    number,
                }) => {
                    let t = &dataset.alloc_trace().unwrap().trace;
                    assert_eq!(t.meta.events, e);
                    assert_region_metrics_are_a_full_sweep(&dataset);
                    let grouping = memscape_views::heap_tree::model::Grouping::default();
                    let (full, _) =
                        memscape_views::heap_tree::model::timeline(&dataset, &grouping).unwrap();
                    continued += usize::from(carry.as_ref().is_some_and(|c| c.blocks() > 0));
                    let (grown, mut sizes) = memscape_views::heap_tree::model::timeline_continued(
                        &dataset,
                        &grouping,
                        carry.take(),
                    )
                    .unwrap();
                    assert_eq!(
                        format!("{grown:?}"),
                        format!("{full:?}"),
                        "the continued heap tree differs at {e} events"
                    );
                    carry = sizes.carry();
                    // Shown later, as a window's panes show it (the reading thread polls meanwhile:
                    // longer than one poll, short enough for three snapshots of the 1.2 s program
                    // on a loaded machine).
                    std::thread::sleep(live::POLL_EVERY + Duration::from_millis(50));
                    receiver.shown(number);
                    assert_eq!(stats.nodes, t.call_tree.len() as u64);
                    events.push(e);
                    symbolized.push((stats, named_nodes(t)));
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
                assert!(continued >= 1, "{continued} heap trees continued");
                return (events, next, kept, symbolized);
            }
            shown = Some(next);
        }
    });
    let mut last = None;
    // As `memscape record --live` runs it: the merge writes the file while the program runs,
    // and the last update is its whole trace as the file loads, not the file read back.
    let shared = std::sync::Mutex::new(sender);
    let sender = || shared.lock().unwrap();
    let mut handed = 0;
    let report = memscape_record::record_observed_whole(
        &options(dir.path(), &exe, &output),
        live::POLL_EVERY,
        &mut |follower, ended| {
            if ended {
                // The last state as the live path makes it (symbolized in the merge).
                let mut symbolizer = memscape_trace::symbolize::Symbolizer::new();
                let name = output.display().to_string();
                last = Some(live::snapshot_dataset(follower, &name, &mut symbolizer).0);
                sender().ended(follower);
            } else {
                sender().offer(follower);
            }
        },
        &mut |whole| {
            handed += 1;
            sender().prepare_finished(whole, &output);
        },
    )
    .unwrap();
    assert_eq!(handed, 1, "the recording handed no trace over");
    shared.into_inner().unwrap().finish(&report.output);
    let (events, finished, kept, symbolized) = taker.join().unwrap();
    // About 1.2 s of bursts read every 200 ms: several snapshots, growing.
    assert!(events.len() >= 3, "{events:?}");
    assert!(kept >= 2, "the highlight was carried {kept} times");
    assert!(events.windows(2).all(|w| w[0] < w[1]), "{events:?}");
    let file = memscape_trace::read_msc(&output).unwrap();
    assert!(*events.last().unwrap() <= file.meta.events);
    // The end: the last state read is the file's trace, and the view ends on the file.
    // The recording's file was converted while the program ran, the snapshot after it: with a
    // TSC clock each converts ticks with the clock pairs read so far, so a time may differ by
    // rounding (1 ns seen); everything else is exact.
    let last = last.unwrap();
    let last_trace = &last.alloc_trace().unwrap().trace;
    assert_same_within(&fingerprint(last_trace), &fingerprint(&file), 1_000);
    // Each snapshot symbolized only the call-tree nodes added since the one before (each
    // node looked at once for all snapshots, each address looked up at most once), and every
    // snapshot's nodes are named: the earlier ones kept their names.
    let mut before = 1;
    for (stats, named) in &symbolized {
        assert!(
            stats.nodes_symbolized <= stats.nodes - before,
            "symbolized {} nodes, {} new: {symbolized:?}",
            stats.nodes_symbolized,
            stats.nodes - before
        );
        assert!(stats.lookups <= stats.nodes_symbolized, "{stats:?}");
        assert!(
            *named + 1 >= stats.nodes as usize,
            "{named} named: {stats:?}"
        );
        before = stats.nodes;
    }
    let total: u64 = symbolized.iter().map(|(s, _)| s.nodes_symbolized).sum();
    assert!(total < file.call_tree.len() as u64, "{total} symbolized");
    assert!(
        symbolized.iter().any(|(s, _)| s.nodes_symbolized > 0),
        "{symbolized:?}"
    );
    // The live picture is the finished file's: the allocation map's blocks (places, sizes,
    // colours by call site, past wrappers: names included) and its legend of sites.
    let finished_data = finished.alloc_trace().unwrap();
    let (a, b) = (
        last.alloc_trace().unwrap().scene.as_ref().unwrap(),
        finished_data.scene.as_ref().unwrap(),
    );
    assert_eq!(a.color_by, b.color_by);
    // The snapshot's map lies in its live frame (regions with room to grow), the file's
    // collapsed as opening it does: the same blocks at the same real addresses.
    assert!(a.live_frame.is_some() && b.live_frame.is_none());
    let real = |s: &memscape_views::alloc_map::scene::AllocScene| -> Vec<_> {
        s.blocks
            .iter()
            .map(|g| {
                let y = u64::from(g.addr[0]) | u64::from(g.addr[1]) << 32;
                (
                    s.uncollapse(y).map(|(_, a)| a),
                    g.size,
                    g.color,
                    g.attr.to_bits(),
                )
            })
            .collect()
    };
    assert_eq!(real(a), real(b), "allocation-map blocks differ");
    assert_eq!(a.top_sites, b.top_sites);
    assert!(
        a.top_sites
            .iter()
            .any(|(_, label)| label.contains("make_node")),
        "{:?}",
        a.top_sites
    );
    let finished = &finished_data.trace;
    assert_eq!(fingerprint(finished), fingerprint(&file));
    assert_eq!(finished.meta.source, file.meta.source);
    // And the whole dataset is the one opening the file makes.
    let opened = memscape_views::dataset::load(
        &memscape_views::dataset::LoadSource::File(output.clone()),
        &|_, _| {},
    )
    .unwrap();
    assert_same_dataset(finished_data, opened.alloc_trace().unwrap());
}

/// Every part of two traces (not only what [`fingerprint`] draws from): blocks, call tree,
/// strings, threads, processes, pools, warnings, metadata, event order.
fn assert_same_trace(a: &memscape_trace::Trace, b: &memscape_trace::Trace) {
    assert_eq!(a.blocks, b.blocks, "blocks");
    assert_eq!(a.call_tree.parent, b.call_tree.parent, "call tree");
    assert_eq!(a.call_tree.frames, b.call_tree.frames, "call-tree frames");
    assert_eq!(a.strings, b.strings, "strings");
    assert_eq!(a.threads, b.threads, "threads");
    assert_eq!(a.thread_process, b.thread_process, "threads' processes");
    assert_eq!(a.processes, b.processes, "processes");
    assert_eq!(a.pools, b.pools, "pools");
    assert_eq!(a.warnings, b.warnings, "warnings");
    assert_eq!(a.meta, b.meta, "metadata");
    assert_eq!(a.event_order(), b.event_order(), "event order");
}

/// A live recording's finished dataset is the one opening its file makes: the trace, the
/// allocation map's scene (blocks, colours, legend, regions) and the file it names.
fn assert_same_dataset(
    a: &memscape_views::dataset::AllocTraceData,
    b: &memscape_views::dataset::AllocTraceData,
) {
    assert_same_trace(&a.trace, &b.trace);
    assert_eq!(a.path, b.path);
    let (sa, sb) = (a.scene.as_ref().unwrap(), b.scene.as_ref().unwrap());
    assert_eq!(
        format!("{:?}", sa.blocks),
        format!("{:?}", sb.blocks),
        "scene blocks"
    );
    assert_eq!(sa.top_sites, sb.top_sites);
    assert_eq!(sa.color_by, sb.color_by);
}

/// At 16 ns (the default time resolution before wave 32): the finished dataset is made from the recording's
/// trace in memory, its times rounded as the file rounds them, without reading the file (it
/// is moved away meanwhile), and equals the dataset opening the file makes.
#[test]
fn record_live_ends_on_its_trace_rounded_as_the_file_without_reading_it() {
    let dir = tempfile::tempdir().unwrap();
    let exe = grow_program(dir.path());
    let output = dir.path().join("rounded.msc");
    let (sender, receiver) = live::channel(&output.display().to_string());
    let taker = std::thread::spawn(move || {
        loop {
            match receiver.rx.recv_timeout(Duration::from_secs(60)) {
                Ok(LiveUpdate::Snapshot { .. }) => {}
                Ok(LiveUpdate::Finished(done)) => return done.unwrap(),
                Err(e) => panic!("no update: {e}"),
            }
        }
    });
    let opts = memscape_record::RecordOptions {
        time_resolution_log2: 4,
        ..options(dir.path(), &exe, &output)
    };
    let shared = std::sync::Mutex::new(sender);
    let sender = || shared.lock().unwrap();
    let mut whole = None;
    let report = memscape_record::record_observed_whole(
        &opts,
        live::POLL_EVERY,
        &mut |f, ended| match ended {
            false => {
                sender().offer(f);
            }
            true => sender().ended(f),
        },
        &mut |trace| whole = Some(trace),
    )
    .unwrap();
    let whole = whole.expect("the recording kept its trace");
    // Rounded to 16 ns (the program's clock is in ns: unrounded, almost none would be).
    assert!(whole.blocks.alloc_time_ns.iter().all(|t| t % 16 == 0));
    assert!(whole.blocks.free_time_ns.iter().all(|t| t % 16 == 0));
    let away = dir.path().join("away.msc");
    std::fs::rename(&report.output, &away).unwrap();
    let mut sender = shared.into_inner().unwrap();
    sender.prepare_finished(whole, &report.output);
    sender.finish(&report.output);
    let finished = taker.join().unwrap();
    std::fs::rename(&away, &report.output).unwrap();
    let opened = memscape_views::dataset::load(
        &memscape_views::dataset::LoadSource::File(report.output.clone()),
        &|_, _| {},
    )
    .unwrap();
    assert_eq!(finished.name, opened.name);
    assert_same_dataset(
        finished.alloc_trace().unwrap(),
        opened.alloc_trace().unwrap(),
    );
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
