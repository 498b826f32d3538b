//! The shim's CFI walker (`memscape-recorder`'s `cfi.rs`, x86_64) against libunwind, the
//! oracle it replaces: the same stacks for every event of real programs.
#![cfg(target_arch = "x86_64")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{compile, compile_with, require, shim};

/// Compiles `tests/c/<name>` at `-O2` (frames without a frame pointer, the CFA moving within
/// functions): the optimized code real programs are.
fn compile_optimized(name: &str, dir: &Path) -> PathBuf {
    compile_with(name, dir, &["-O2"], "-O2")
}

/// The counts compare mode prints at exit.
#[derive(Debug)]
struct Compared {
    by_rules: u64,
    left_to_libunwind: u64,
}

/// Runs `program` under the shim with `MEMSCAPE_UNWINDER=compare`: every stack walked by the
/// CFI rules is walked by libunwind too and compared. Fails on any difference.
fn compare(program: &Path, args: &[&str], dir: &Path) -> Compared {
    compare_with(program, args, dir, &[])
}

/// [`compare`] with more environment (stack depths).
fn compare_with(program: &Path, args: &[&str], dir: &Path, env: &[(&str, &str)]) -> Compared {
    let raw = dir.join(format!(
        "raw-{}-{}",
        program.file_name().unwrap().to_string_lossy(),
        env.len()
    ));
    std::fs::create_dir_all(&raw).unwrap();
    let out = Command::new(program)
        .args(args)
        .env("LD_PRELOAD", shim())
        .env("MEMSCAPE_RECORD_DIR", &raw)
        .env("MEMSCAPE_UNWINDER", "compare")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} failed: {out:?}",
        program.display()
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("unwinder mismatch"),
        "{}: stacks differ:\n{stderr}",
        program.display()
    );
    // One line per process image (children of a fork print their own).
    let line = stderr
        .lines()
        .find(|l| l.starts_with("memscape-recorder: unwinders compared: "))
        .unwrap_or_else(|| panic!("no comparison report in {stderr}"));
    let numbers: Vec<u64> = line.split(' ').filter_map(|w| w.parse().ok()).collect();
    assert_eq!(numbers.len(), 3, "{line}");
    assert_eq!(numbers[2], 0, "{line}");
    Compared {
        by_rules: numbers[0],
        left_to_libunwind: numbers[1],
    }
}

#[test]
fn deep_cpp_template_stacks_equal_libunwinds() {
    let dir = tempfile::tempdir().unwrap();
    for program in [
        compile("deep_templates.cpp", dir.path()),
        compile_optimized("deep_templates.cpp", dir.path()),
        compile_optimized("newdelete.cpp", dir.path()),
    ] {
        let c = compare(&program, &[], dir.path());
        // Nearly every walk is the CFI walker's own (libunwind only where a frame has no
        // simple rule, such as the exceptions' unwinding).
        assert!(
            c.by_rules > 100_000 || (program.ends_with("newdelete-O2") && c.by_rules > 5_000),
            "{}: {c:?}",
            program.display()
        );
        assert!(c.left_to_libunwind * 100 < c.by_rules, "{c:?}");
    }
}

/// The walker stops after the frames the shim keeps; libunwind walks 8 more. Short, long and
/// the longest stacks.
#[test]
fn stacks_cut_at_any_depth_equal_libunwinds() {
    let dir = tempfile::tempdir().unwrap();
    let program = compile_optimized("deep_templates.cpp", dir.path());
    for (depth, free_depth) in [("3", "1"), ("8", "2"), ("256", "64")] {
        let env = [
            ("MEMSCAPE_STACK_DEPTH", depth),
            ("MEMSCAPE_FREE_STACK_DEPTH", free_depth),
        ];
        let c = compare_with(&program, &[], dir.path(), &env);
        assert!(c.by_rules > 100_000, "depth {depth}: {c:?}");
    }
}

#[test]
fn stacks_through_a_shared_library_equal_libunwinds() {
    let dir = tempfile::tempdir().unwrap();
    let lib = common::compile_alloclib(dir.path(), "liballoc.so", "-O2");
    let program = compile("dlopen_alloc.c", dir.path());
    // Loaded, called, unloaded and loaded again: rules of a module that went away.
    let c = compare(&program, &[&lib.display().to_string()], dir.path());
    assert!(c.by_rules > 400, "{c:?}");
}

#[test]
fn threads_stacks_equal_libunwinds() {
    let dir = tempfile::tempdir().unwrap();
    for program in [
        compile("threads.c", dir.path()),
        compile_optimized("threads.c", dir.path()),
    ] {
        let c = compare(&program, &["2000"], dir.path());
        // 8 threads, each walk ending at the thread's start (clone3's undefined return address).
        assert!(c.by_rules >= 8 * 2000, "{}: {c:?}", program.display());
    }
}

#[test]
fn signal_handler_stacks_equal_libunwinds_through_signal_frames_and_alternate_stacks() {
    let dir = tempfile::tempdir().unwrap();
    let program = compile_optimized("signal_stacks.c", dir.path());
    let c = compare(&program, &[], dir.path());
    // 50 handlers on an alternate stack (their walks start off the thread's stack) and the
    // SIGALRM handler's walks through the signal frame: those are libunwind's whole.
    assert!(c.left_to_libunwind >= 50, "{c:?}");
    assert!(c.by_rules >= 100, "{c:?}");
}

/// Two recordings of one deterministic program, address randomization off, one with
/// libunwind alone and one with the CFI walker: the same frames for every event, in order.
#[test]
fn recordings_with_either_unwinder_hold_the_same_stacks_per_event() {
    require("setarch", "util-linux");
    let dir = tempfile::tempdir().unwrap();
    let program = compile_optimized("deep_templates.cpp", dir.path());
    let record = |unwinder: &str| {
        let raw = dir.path().join(format!("raw-{unwinder}"));
        std::fs::create_dir_all(&raw).unwrap();
        let status = Command::new("setarch")
            .args(["x86_64", "-R"])
            .arg(&program)
            .env("LD_PRELOAD", shim())
            .env("MEMSCAPE_RECORD_DIR", &raw)
            .env("MEMSCAPE_UNWINDER", unwinder)
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        // setarch runs under the shim too: the program's own image's file.
        let file = std::fs::read_dir(&raw)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("deep_templates-O2.")
            })
            .unwrap();
        memscape_record::read_raw(&file).unwrap()
    };
    let libunwind = record("libunwind");
    let cfi = record("cfi");
    assert!(
        libunwind.events.len() > 100_000,
        "{}",
        libunwind.events.len()
    );
    assert_eq!(libunwind.events.len(), cfi.events.len());
    let frames = |raw: &memscape_record::RawProcess, stack: u32| -> Vec<u64> {
        raw.stacks.get(&stack).cloned().unwrap_or_default()
    };
    for (i, (a, b)) in libunwind.events.iter().zip(&cfi.events).enumerate() {
        assert_eq!((a.kind, a.size), (b.kind, b.size), "event {i}");
        assert_eq!(
            frames(&libunwind, a.stack),
            frames(&cfi, b.stack),
            "event {i} ({:?})",
            a.kind
        );
    }
}

/// A program's processes recorded without address randomization (`setarch -R`) with one
/// unwinder: parent first, then its forked child, then that one's.
fn record_processes(
    program: &Path,
    raw: &Path,
    unwinder: &str,
) -> Vec<memscape_record::RawProcess> {
    std::fs::create_dir_all(raw).unwrap();
    let status = Command::new("setarch")
        .args(["x86_64", "-R"])
        .arg(program)
        .env("LD_PRELOAD", shim())
        .env("MEMSCAPE_RECORD_DIR", raw)
        .env("MEMSCAPE_UNWINDER", unwinder)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let name = program.file_name().unwrap().to_string_lossy().into_owned();
    let mut processes: Vec<_> = std::fs::read_dir(raw)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&format!("{name}."))
        })
        .map(|p| memscape_record::read_raw(&p).unwrap())
        .collect();
    // The first image, then each one's child (a chain of forks).
    let mut chain = Vec::new();
    let mut parent = None;
    while let Some(at) = processes.iter().position(|p| {
        parent.map_or(p.fork_seq.is_none(), |pid| {
            p.ppid == pid && p.fork_seq.is_some()
        })
    }) {
        let process = processes.swap_remove(at);
        parent = Some(process.pid);
        chain.push(process);
    }
    assert!(processes.is_empty(), "not one chain of forks");
    chain
}

/// Stack ids restart in a forked child's file; the CFI walker's per-thread memory of recent
/// stacks' ids must restart with them. A parent, child and grandchild allocating from the
/// same call paths, recorded once with libunwind and the shim's own stack table alone and
/// once with the CFI walker: the same frames for every event of every process.
#[test]
fn forked_children_record_their_stacks_as_libunwind_does() {
    require("setarch", "util-linux");
    let dir = tempfile::tempdir().unwrap();
    for program in [
        compile("fork_same_sites.c", dir.path()),
        compile_optimized("fork_same_sites.c", dir.path()),
    ] {
        let tag = program.file_name().unwrap().to_string_lossy().into_owned();
        let libunwind =
            record_processes(&program, &dir.path().join(format!("lu-{tag}")), "libunwind");
        let cfi = record_processes(&program, &dir.path().join(format!("cfi-{tag}")), "cfi");
        assert_eq!(libunwind.len(), 3, "{tag}: parent, child, grandchild");
        assert_eq!(cfi.len(), 3, "{tag}");
        for (a, b) in libunwind.iter().zip(&cfi) {
            assert!(a.events.len() > 10_000, "{tag}: {}", a.events.len());
            assert_eq!(a.events.len(), b.events.len(), "{tag}");
            let frames = |raw: &memscape_record::RawProcess, stack: u32| -> Option<Vec<u64>> {
                (stack != 0).then(|| raw.stacks.get(&stack).cloned().unwrap_or_default())
            };
            for (i, (x, y)) in a.events.iter().zip(&b.events).enumerate() {
                assert_eq!((x.kind, x.size), (y.kind, y.size), "{tag} event {i}");
                let ours = frames(b, y.stack);
                assert!(
                    ours.as_ref().is_none_or(|f| !f.is_empty()),
                    "{tag} event {i}: stack {} not in the file",
                    y.stack
                );
                assert_eq!(frames(a, x.stack), ours, "{tag} pid {} event {i}", b.pid);
            }
        }
    }
}
