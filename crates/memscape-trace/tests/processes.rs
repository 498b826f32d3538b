//! Processes, free sites and pools in the model and in `.msc` version 5: each process its own
//! address space, threads belonging to a process, the columns and tables round-tripping
//! (compact and mappable), version-4 files loading as one process, and selecting processes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use memscape_trace::model::{BlockColumn, FLAG_POOL, NO_FREE_THREAD};
use memscape_trace::msc::{MscOptions, VERSION, to_msc_bytes_with};
use memscape_trace::process::{
    Pool, Process, ProcessEnd, ProcessFilter, process_list, select_processes,
};
use memscape_trace::{Frame, Trace, TraceBuilder, TraceFormat, from_msc_bytes, load, to_msc_bytes};

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// A shell (pid 100) that forks a child (pid 101): both allocate at the same addresses; the
/// child frees from another thread and from a free site, and runs a pool allocator.
fn two_processes() -> Trace {
    let mut b = TraceBuilder::with_event_times("two");
    let site = |b: &mut TraceBuilder, ip| {
        b.call_tree.child(
            0,
            Frame {
                ip,
                ..Frame::default()
            },
        )
    };
    let (alloc_site, free_site) = (site(&mut b, 0x1000), site(&mut b, 0x2000));
    let sh = b.process(Process {
        pid: 100,
        parent_pid: 1,
        command_line: "sh -c ./child".into(),
        executable: "/bin/sh".into(),
        end: ProcessEnd::Exited { code: 0 },
        ..Process::default()
    });
    let child = b.process(Process {
        pid: 101,
        parent_pid: 100,
        command_line: "./child".into(),
        executable: "/tmp/child".into(),
        start_ns: 5,
        end: ProcessEnd::Signaled { signal: 9 },
        ..Process::default()
    });
    b.set_process(sh);
    let sh_main = b.thread("main (100)");
    b.alloc(1, 1, 0x1000, 100, 112, sh_main, alloc_site);
    b.set_process(child);
    let (c_main, c_worker) = (b.thread("main (101)"), b.thread("worker (102)"));
    // Same address as the shell's live block: another address space, no overlap.
    b.alloc(2, 10, 0x1000, 300, 304, c_main, alloc_site);
    let pool = b.pool(Pool {
        name: "small".into(),
        start: 0x9000,
        end: 0x9000 + 64 * 16,
        block_size: 64,
        ..Pool::default()
    });
    b.pool_alloc(3, 11, pool, 0x9000, 40, c_main, alloc_site);
    b.pool_alloc(4, 12, pool, 0x9040, 64, c_main, alloc_site);
    b.set_process(sh);
    b.free_from(5, 13, 0x1000, sh_main, free_site);
    b.set_process(child);
    b.free_from(6, 14, 0x1000, c_worker, free_site);
    b.pool_free(7, 15, 0x9000, c_worker, free_site);
    b.alloc(8, 16, 0x2000, 50, 56, c_worker, alloc_site);
    b.finish(TraceFormat::Msc, true)
}

fn assert_same(a: &Trace, b: &Trace) {
    a.blocks.prefetch(&BlockColumn::ALL);
    assert_eq!(a.blocks, b.blocks);
    assert_eq!(a.threads, b.threads);
    assert_eq!(a.thread_process, b.thread_process);
    assert_eq!(a.processes, b.processes);
    assert_eq!(a.pools, b.pools);
    let (mut ma, mut mb) = (a.meta.clone(), b.meta.clone());
    (ma.source, mb.source) = (String::new(), String::new());
    (ma.format, mb.format) = (TraceFormat::Msc, TraceFormat::Msc);
    assert_eq!(ma, mb);
}

#[test]
fn each_process_has_its_own_address_space_and_counts() {
    let t = two_processes();
    assert_eq!(t.warnings.total(), 0, "{:?}", t.warnings);
    assert_eq!(t.processes.len(), 2);
    assert_eq!(t.thread_process, vec![0, 1, 1]);
    let b = &t.blocks;
    assert_eq!(b.process.as_slice(), &[0, 1, 1, 1, 1]);
    // Both 0x1000 blocks were freed by their own process's free.
    assert_eq!(b.free_event[0], 4);
    assert_eq!(b.free_event[1], 5);
    assert_eq!(b.free_site[1], 2);
    // free_thread is 1 + the freeing thread: the worker freed the main thread's block.
    assert_eq!(b.free_thread[1], 3);
    assert_eq!(b.free_thread[4], NO_FREE_THREAD);
    assert_eq!(b.flags[2] & FLAG_POOL, FLAG_POOL);
    assert_eq!(b.pool.as_slice(), &[0, 0, 1, 1, 0]);
    // Pool block waste: usable = the pool's block size.
    assert_eq!(b.usable_size[2], 64);
    assert_eq!((t.meta.allocs, t.meta.frees), (3, 2));
    assert_eq!((t.meta.pool_allocs, t.meta.pool_frees), (2, 1));
    let [sh, child] = [&t.processes[0], &t.processes[1]];
    assert_eq!(
        (sh.events, sh.allocs, sh.frees, sh.peak_live_bytes),
        (2, 1, 1, 100)
    );
    assert_eq!(
        (
            child.events,
            child.allocs,
            child.frees,
            child.peak_live_bytes
        ),
        (6, 2, 1, 300)
    );
    // Heap bytes of both processes at once: 100 + 300.
    assert_eq!(t.meta.peak_live_bytes, 400);
}

#[test]
fn processes_free_sites_and_pools_round_trip_compact_and_mappable() {
    let t = two_processes();
    for mappable in [false, true] {
        let options = MscOptions {
            mappable,
            ..MscOptions::default()
        };
        let bytes = to_msc_bytes_with(&t, &options, &mut |_| {}).unwrap();
        assert_eq!(
            u32::from_le_bytes(bytes[8..12].try_into().unwrap()),
            VERSION
        );
        let back = from_msc_bytes("two.msc", &bytes).unwrap();
        assert_same(&back, &t);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("two.msc");
        std::fs::write(&path, &bytes).unwrap();
        assert_same(&load(&path).unwrap(), &t);
    }
}

/// Version-4 files (written by memscape at e60b15c: two heaptrack conversions and a recording
/// of `ls /usr`) load as one process with the metadata's counts, no free sites, no pools.
#[test]
fn version_4_files_load_as_one_process() {
    for (v4, text) in [
        ("test_sysroot.v4.msc", Some("heaptrack/test_sysroot.raw")),
        ("david.v4.msc", Some("heaptrack/heaptrack.david.18594.gz")),
        ("ls.v4.msc", None),
    ] {
        let bytes = std::fs::read(fixture(v4)).unwrap();
        assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 4);
        let old = load(&fixture(v4)).unwrap();
        assert_eq!(old.processes.len(), 1);
        let p = &old.processes[0];
        assert_eq!(
            (p.events, p.allocs, p.frees, p.peak_live_bytes),
            (
                old.meta.events,
                old.meta.allocs,
                old.meta.frees,
                old.meta.peak_live_bytes
            )
        );
        assert!(old.blocks.process.iter().all(|&p| p == 0));
        assert!(old.blocks.free_site.iter().all(|&s| s == 0));
        assert!(old.blocks.pool.iter().all(|&s| s == 0));
        assert_eq!(old.thread_process.len(), old.threads.len());
        if let Some(text) = text {
            let fresh = load(&common::data(text)).unwrap();
            assert_same(&old, &fresh);
        }
        let again = from_msc_bytes("again.msc", &to_msc_bytes(&old, &mut |_| {}).unwrap()).unwrap();
        assert_same(&again, &old);
    }
}

/// `info`'s regions of several processes say that they share one address axis, and how to see
/// one process's; a single process's do not.
#[test]
fn info_says_when_regions_hold_several_processes_addresses() {
    let options = memscape_trace::info::InfoOptions::default();
    let t = two_processes();
    let text = memscape_trace::info::info(&t, &options).to_string();
    assert!(
        text.contains(
            "(the addresses of 2 processes on one axis; --process PID for one process's)"
        ),
        "{text}"
    );
    let one = select_processes(&t, &ProcessFilter::parse("101").unwrap().select(&t));
    let text = memscape_trace::info::info(&one, &options).to_string();
    assert!(!text.contains("processes on one axis"), "{text}");
}

/// A name regex picks program names first: the shell whose command line runs `./child` is not
/// `child`; a regex that names no program falls back to command lines.
#[test]
fn a_name_regex_matches_program_names_before_command_lines() {
    let t = two_processes();
    let select = |text: &str| ProcessFilter::parse(text).unwrap().select(&t);
    assert_eq!(select("child"), vec![false, true]);
    assert_eq!(select("sh"), vec![true, false]);
    assert_eq!(
        select("-c"),
        vec![true, false],
        "by command line: no program is named -c"
    );
    assert_eq!(select("nothing"), vec![false, false]);
    assert_eq!(process_list(&t), "100 sh, 101 child");
}

#[test]
fn selecting_a_process_keeps_its_blocks_threads_and_pools_renumbered() {
    let t = two_processes();
    let child = ProcessFilter::parse("^child$").unwrap();
    assert_eq!(child.select(&t), vec![false, true]);
    assert_eq!(
        ProcessFilter::parse("100").unwrap().select(&t),
        vec![true, false]
    );
    let c = select_processes(&t, &child.select(&t));
    assert_eq!(c.processes.len(), 1);
    assert_eq!(c.processes[0].pid, 101);
    assert_eq!(c.blocks.len(), 4);
    assert!(c.blocks.process.iter().all(|&p| p == 0));
    assert_eq!(c.threads.len(), 2);
    assert_eq!(c.thread_process, vec![0, 0]);
    // Events renumbered in order: alloc, pool alloc, pool alloc, free, pool free, alloc.
    assert_eq!(c.meta.events, 6);
    assert_eq!(c.blocks.alloc_event.as_slice(), &[0, 1, 2, 5]);
    assert_eq!(c.blocks.free_event.as_slice(), &[3, 4, 6, 6]);
    // The worker (thread 1 here) freed block 0.
    assert_eq!(c.blocks.free_thread[0], 2);
    assert_eq!(
        (c.meta.allocs, c.meta.frees, c.meta.peak_live_bytes),
        (2, 1, 300)
    );
    assert_eq!(c.pools.len(), 1);
    assert_eq!(c.pools[0].process, 0);
    assert_eq!(c.blocks.pool.as_slice(), &[0, 1, 1, 0]);
    // The selection is a valid trace: it round-trips through .msc.
    let back = from_msc_bytes("c.msc", &to_msc_bytes(&c, &mut |_| {}).unwrap()).unwrap();
    assert_same(&back, &c);
}
