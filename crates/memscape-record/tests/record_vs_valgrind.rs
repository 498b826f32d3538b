//! Oracle tests: C/C++ programs compiled here are recorded with the shim and run under valgrind
//! memcheck; the alloc and free counts of every process must be equal, every free must match an
//! earlier allocation, and times must be monotonic per thread.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use memscape_record::{RecordOptions, RecordReport, record};

mod common;
use common::*;

/// Times read from the raw files are monotonic per thread in sequence order.
fn check_monotonic(dir: &Path, program: &Path, args: &[&str]) {
    let raw_dir = dir.join("raw");
    std::fs::create_dir_all(&raw_dir).unwrap();
    let status = Command::new(program)
        .args(args)
        .env("LD_PRELOAD", shim())
        .env("MEMSCAPE_RECORD_DIR", &raw_dir)
        .status()
        .unwrap();
    let _ = status;
    let mut files = 0;
    for entry in std::fs::read_dir(&raw_dir).unwrap() {
        let raw = memscape_record::read_raw(&entry.unwrap().path()).unwrap();
        files += 1;
        let mut events = raw.events.clone();
        events.sort_by_key(|e| e.seq);
        let mut last: HashMap<u32, u64> = HashMap::new();
        for e in &events {
            let prev = last.insert(e.tid, e.time_ns).unwrap_or(0);
            assert!(e.time_ns >= prev, "time went back in thread {}", e.tid);
        }
        // Sequence numbers are unique.
        let mut seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
        seqs.dedup();
        assert_eq!(seqs.len(), events.len());
    }
    assert!(files > 0);
}

fn oracle(name: &str, args: &[&str]) -> RecordReport {
    let dir = tempfile::tempdir().unwrap();
    let program = compile(name, dir.path());
    let expected = valgrind_counts(&program, args, dir.path());
    let report = record_program(&program, args, dir.path());
    assert_eq!(
        recorded_counts(&report),
        expected,
        "{name}: (allocs, frees) per process vs valgrind"
    );
    check_consistency(&report);
    check_monotonic(dir.path(), &program, args);
    report
}

#[test]
fn single_threaded_counts_equal_valgrind() {
    let report = oracle("single.c", &["1000"]);
    assert_eq!(report.exit_status, 0);
    assert!(report.allocs > 8000);
    // Reallocs of live blocks are marked.
    assert!(report.processes[0].reallocs >= 1000);
}

#[test]
fn eight_threads_freeing_each_others_blocks_equal_valgrind() {
    let report = oracle("threads.c", &["100000"]);
    assert!(report.allocs >= 800_000);
    // main + 16 workers
    assert!(
        report.processes[0].threads >= 9,
        "{}",
        report.processes[0].threads
    );
}

#[test]
fn fork_and_exec_children_are_processes_of_one_trace() {
    use memscape_trace::process::ProcessEnd;
    let report = oracle("forkexec.c", &[]);
    // parent, forked child, exec'ing child (two images: before and after exec)
    assert_eq!(report.processes.len(), 4, "{:#?}", report.processes);
    let parent = report.processes[0].pid;
    assert!(report.processes[1..].iter().all(|p| p.ppid == parent));
    let execd: Vec<_> = report
        .processes
        .iter()
        .filter(|p| p.end == ProcessEnd::Exec)
        .collect();
    assert_eq!(execd.len(), 1, "{:#?}", report.processes);
    assert!(
        report
            .processes
            .iter()
            .any(|p| p.pid == execd[0].pid && p.image == 1)
    );
    assert!(
        report
            .processes
            .iter()
            .all(|p| matches!(p.end, ProcessEnd::Exec | ProcessEnd::Exited { code: 0 })),
        "{:#?}",
        report.processes
    );
}

#[test]
fn cpp_new_and_delete_equal_valgrind() {
    let report = oracle("newdelete.cpp", &[]);
    assert!(report.allocs > 2500);
}

#[test]
fn sigterm_mid_run_keeps_everything_before_the_signal() {
    let report = oracle("sigterm.c", &["5000"]);
    assert_eq!(report.signal, Some(15));
    assert_eq!(report.exit_status, 128 + 15);
    assert_eq!(report.allocs, 5001);
}

#[test]
fn sigint_mid_run_keeps_everything_before_the_signal() {
    let report = oracle("sigterm.c", &["3000", "int"]);
    assert_eq!(report.signal, Some(2));
    assert_eq!(report.allocs, 3001);
}

#[test]
fn dlopen_captures_the_module_maps_again() {
    let report = oracle("dlopen.c", &[]);
    assert_eq!(report.exit_status, 0);
    let dir = tempfile::tempdir().unwrap();
    let program = compile("dlopen.c", dir.path());
    let raw_dir = dir.path().join("raw");
    std::fs::create_dir_all(&raw_dir).unwrap();
    Command::new(&program)
        .env("LD_PRELOAD", shim())
        .env("MEMSCAPE_RECORD_DIR", &raw_dir)
        .status()
        .unwrap();
    let path = std::fs::read_dir(&raw_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let raw = memscape_record::read_raw(&path).unwrap();
    assert!(raw.maps.len() >= 2, "{} snapshots", raw.maps.len());
    assert!(!raw.maps[0].contains("libz.so"));
    assert!(raw.maps.last().unwrap().contains("libz.so"));
}

#[test]
fn stacks_resolve_to_the_test_program_source() {
    let dir = tempfile::tempdir().unwrap();
    let program = compile("single.c", dir.path());
    let report = record_program(&program, &["10"], dir.path());
    let trace = memscape_trace::read_msc(&report.output).unwrap();
    let named_main =
        (1..trace.call_tree.len() as u32).any(|n| trace.describe_frame(n).contains("main"));
    assert!(named_main, "no frame symbolized as main");
}

/// Anonymous mmap/munmap are their own event kind in the trace: blocks flagged FLAG_MMAP with
/// the mapped length, ended by the munmap that covers their start, apart from the heap counts.
#[test]
fn anonymous_mappings_are_recorded_as_their_own_kind() {
    use memscape_trace::model::{FLAG_MMAP, FLAG_NEVER_FREED};
    let dir = tempfile::tempdir().unwrap();
    let program = compile("mmaps.c", dir.path());
    let report = record_program(&program, &[], dir.path());
    let trace = memscape_trace::read_msc(&report.output).unwrap();
    let page = trace.meta.page_size.max(4096);
    let b = &trace.blocks;
    let mapping = |pages: u64| {
        let found: Vec<usize> = (0..b.len())
            .filter(|&i| b.flags[i] & FLAG_MMAP != 0 && b.size[i] == pages * page)
            .collect();
        assert_eq!(found.len(), 1, "one {pages}-page mapping in the trace");
        found[0]
    };
    // The 8-page reservation was unmapped by its own munmap; 3 and 5 by one munmap over both.
    for pages in [8, 3, 5, 7] {
        let i = mapping(pages);
        assert_eq!(
            b.flags[i] & FLAG_NEVER_FREED,
            0,
            "{pages}-page mapping unmapped"
        );
    }
    for pages in [11, 13] {
        let i = mapping(pages);
        assert_ne!(
            b.flags[i] & FLAG_NEVER_FREED,
            0,
            "{pages}-page mapping still mapped"
        );
    }
    assert_eq!(b.address[mapping(5)], b.address[mapping(3)] + 3 * page);
    assert_eq!(b.free_event[mapping(3)] + 1, b.free_event[mapping(5)]);
    assert!(trace.meta.mmaps >= 6 && trace.meta.munmaps >= 4);
    // Mappings are not heap blocks: the heap counts are the program's malloc/free (plus
    // whatever libc's stdio allocates), and the file mapping is not recorded at all.
    assert_eq!(
        trace.meta.allocs + trace.meta.mmaps,
        b.len() as u64,
        "blocks = allocs + mappings"
    );
    assert!(trace.meta.allocs >= 1 && trace.meta.allocs < 10);
    assert!(trace.meta.peak_live_bytes < 64 * 1024);
}

#[test]
fn exit_status_passes_through() {
    let dir = tempfile::tempdir().unwrap();
    let report = record(&RecordOptions {
        output: dir.path().join("t.msc"),
        stack_depth: 8,
        no_stacks: true,
        program: "sh".to_owned(),
        args: vec!["-c".to_owned(), "exit 7".to_owned()],
        shim: Some(shim()),
        time_resolution_log2: memscape_record::DEFAULT_TIME_RESOLUTION_LOG2,
    })
    .unwrap();
    assert_eq!(report.exit_status, 7);
    assert!(report.output.is_file());
}

/// Mutated and truncated real recordings: no panic, no hang, the conversion still succeeds
/// (bad chunks skipped or counted as warnings).
#[test]
fn mutated_real_recordings_never_panic() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let dir = tempfile::tempdir().unwrap();
    let program = compile("single.c", dir.path());
    let raw_dir = dir.path().join("raw");
    std::fs::create_dir_all(&raw_dir).unwrap();
    Command::new(&program)
        .arg("20")
        .env("LD_PRELOAD", shim())
        .env("MEMSCAPE_RECORD_DIR", &raw_dir)
        .output()
        .unwrap();
    let path = std::fs::read_dir(&raw_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let original = std::fs::read(&path).unwrap();
    // The interesting bytes: the header, and the start of each chunk (headers and records).
    let mut hot: Vec<usize> = (0..200).collect();
    for chunk in 0..3 {
        let base = 4096 + chunk * (1 << 20);
        hot.extend(base..base + 600);
    }
    let hot_len = hot.len();
    let mut runner = TestRunner::new(Config {
        cases: 48,
        ..Config::default()
    });
    runner
        .run(
            &(
                proptest::collection::vec((0..hot_len, any::<u8>()), 1..16),
                0..original.len() + 1,
            ),
            |(flips, cut)| {
                let mut bytes = original.clone();
                for (i, b) in flips {
                    let at = hot[i];
                    if at < bytes.len() {
                        bytes[at] = b;
                    }
                }
                bytes.truncate(cut.max(4096 + 64));
                if let Ok(raw) = memscape_record::read_raw_bytes("mutated.msr", &bytes) {
                    let trace = memscape_record::convert_raw("mutated.msr", &raw);
                    prop_assert!(trace.meta.allocs <= raw.events.len() as u64);
                }
                Ok(())
            },
        )
        .unwrap();
}

/// Event times are CLOCK_MONOTONIC ns in both clock modes (TSC ticks converted through the
/// clock pairs, and clock_gettime): each of two allocations 200 ms apart is recorded between the
/// program's own clock reads around the call (1 µs of slack for the TSC interpolation; a tick
/// rate off by 1 % would be 2 ms off at the second one).
#[test]
fn recorded_times_are_the_programs_monotonic_clock_in_both_modes() {
    let dir = tempfile::tempdir().unwrap();
    let program = compile("sleepy.c", dir.path());
    for clock in ["default", "monotonic"] {
        let raw_dir = dir.path().join(clock);
        std::fs::create_dir_all(&raw_dir).unwrap();
        let out = Command::new(&program)
            .env("LD_PRELOAD", shim())
            .env("MEMSCAPE_RECORD_DIR", &raw_dir)
            .env("MEMSCAPE_CLOCK", clock)
            .output()
            .unwrap();
        assert!(out.status.success());
        let printed: Vec<u64> = String::from_utf8(out.stdout)
            .unwrap()
            .split_whitespace()
            .map(|w| w.parse().unwrap())
            .collect();
        let file = std::fs::read_dir(&raw_dir)
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        let raw = memscape_record::read_raw(&file.path()).unwrap();
        if clock == "monotonic" {
            assert!(!raw.tsc_clock);
        }
        for (size, before, after) in [
            (4242u64, printed[0], printed[1]),
            (4343, printed[2], printed[3]),
        ] {
            let recorded = raw
                .events
                .iter()
                .find(|e| e.size == size)
                .unwrap_or_else(|| panic!("{clock}: no allocation of {size} bytes"))
                .time_ns;
            assert!(
                before - 1000 <= recorded && recorded <= after + 1000,
                "{clock} (tsc: {}): {size}-byte malloc recorded at {recorded} ns, the program read {before} ns before and {after} ns after it",
                raw.tsc_clock
            );
        }
    }
}

/// `time_resolution_log2`: every event time of the `.msc` is a multiple of 2^k ns, and the
/// counts and event order are those of the exact recording of the same program.
#[test]
fn time_resolution_rounds_recorded_times() {
    let dir = tempfile::tempdir().unwrap();
    let program = compile("single.c", dir.path());
    let run = |k: u8| {
        let report = record(&RecordOptions {
            output: dir.path().join(format!("t{k}.msc")),
            stack_depth: 16,
            no_stacks: false,
            program: program.display().to_string(),
            args: Vec::new(),
            shim: Some(shim()),
            time_resolution_log2: k,
        })
        .unwrap();
        assert_eq!(report.time_resolution_ns, 1 << k);
        memscape_trace::load(&report.output).unwrap()
    };
    let exact = run(0);
    let coarse = run(6);
    assert_eq!(coarse.meta.allocs, exact.meta.allocs);
    assert_eq!(coarse.meta.frees, exact.meta.frees);
    let b = &coarse.blocks;
    assert!(b.len() > 100);
    assert!(
        b.alloc_time_ns
            .iter()
            .chain(b.free_time_ns.iter())
            .all(|&t| t % 64 == 0)
    );
    assert!(b.alloc_time_ns.windows(2).all(|w| w[0] <= w[1]));
}

/// Threads carry the names the program gave them (`pthread_setname_np`, before or after their
/// first allocation, by themselves or by another thread), else the program's name.
#[test]
fn threads_are_named_as_the_program_named_them() {
    let dir = tempfile::tempdir().unwrap();
    let program = compile("named_threads.c", dir.path());
    let report = record_program(&program, &[], dir.path());
    let trace = memscape_trace::read_msc(&report.output).unwrap();
    let mut names: Vec<String> = (0..trace.threads.len() as u32)
        .map(|t| trace.thread_name(t).to_owned())
        .collect();
    names.sort();
    // `name (tid)`: strip the tid.
    let bare: Vec<&str> = names
        .iter()
        .map(|n| n.rsplit_once(" (").map_or(n.as_str(), |(name, _)| name))
        .collect();
    assert_eq!(
        bare,
        [
            "early-worker",
            "late-worker",
            "named_threads",
            "named_threads",
            "outside-named"
        ],
        "{names:?}"
    );
    assert!(names.iter().all(|n| n.ends_with(')')), "{names:?}");
}
