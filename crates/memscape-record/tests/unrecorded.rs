//! Programs that a recorded process starts and that the loader will not preload the shim into
//! (a static binary, a setuid program): the shim notices before the `exec` and `memscape
//! record` warns, once per program, naming the pid, the parent and the reason; the parent's
//! events are all there. A dynamic child gives no warning, and a failed `exec` withdraws its
//! note.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use memscape_record::{RecordReport, UnrecordedReason, record};

/// The trace's `unrecorded_program` warnings, read back from the file: (count, locations).
fn trace_warnings(report: &RecordReport) -> (u64, Vec<String>) {
    let trace = memscape_trace::read_msc(&report.output).unwrap();
    let kind = trace
        .warnings
        .kinds()
        .iter()
        .find(|k| k.kind == memscape_trace::warn::UNRECORDED_PROGRAM);
    match kind {
        Some(k) => (k.count, k.first.iter().map(|l| l.file.clone()).collect()),
        None => (0, Vec::new()),
    }
}

fn script(dir: &Path, body: &str) -> PathBuf {
    let script = dir.join("launcher.sh");
    std::fs::write(&script, format!("#!/bin/sh\n{body}\n")).unwrap();
    Command::new("chmod")
        .arg("+x")
        .arg(&script)
        .status()
        .unwrap();
    script
}

#[test]
fn a_static_binary_started_by_sh_is_warned_about_with_its_pid_and_parent() {
    let dir = tempfile::tempdir().unwrap();
    compile_static(dir.path());
    // As a user types it: dash vforks and execs ./static.
    let line = format!("cd {} && ./static 5; echo after", dir.path().display());
    let report = record(&options(dir.path().join("t.msc"), "sh", &["-c", &line])).unwrap();
    assert_eq!(report.exit_status, 0);
    assert_eq!(report.unrecorded.len(), 1, "{:?}", report.unrecorded);
    let u = &report.unrecorded[0];
    assert_eq!(u.reason, UnrecordedReason::Static);
    assert_eq!(u.path, "./static");
    assert_eq!(u.started_by, "sh");
    assert_eq!(u.runs, 1);
    let sh = report
        .processes
        .iter()
        .find(|p| p.pid == u.started_by_pid)
        .unwrap();
    assert!(
        sh.events > 0 && sh.allocs > 0,
        "the parent's events: {sh:?}"
    );
    // The static program has no process of its own in the trace.
    assert!(
        report.processes.iter().all(|p| p.pid != u.pid),
        "{:?}",
        report.processes
    );
    let message = u.to_string();
    assert_eq!(
        message,
        format!(
            "./static (pid {}, started by sh) ran unrecorded: a static binary — the loader ignores LD_PRELOAD",
            u.pid
        )
    );
    let (count, places) = trace_warnings(&report);
    assert_eq!(count, 1);
    assert_eq!(places, vec![u.located()]);
}

#[test]
fn every_way_of_starting_a_static_binary_is_seen_and_warned_once() {
    let dir = tempfile::tempdir().unwrap();
    let launcher = compile("exec_every_way.c", dir.path());
    let program = compile_static(dir.path());
    let path_var = format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // `env` (dynamic, recorded) sets the PATH the launcher searches.
    let report = record(&options(
        dir.path().join("t.msc"),
        "env",
        &[
            &format!("PATH={path_var}"),
            &launcher.display().to_string(),
            &program.display().to_string(),
            "static",
        ],
    ))
    .unwrap();
    assert_eq!(report.exit_status, 0);
    // posix_spawn, posix_spawnp, vfork + execv/execvp/execle, fork + execl/execlp/execve/
    // fexecve: nine runs, one warning.
    assert_eq!(report.unrecorded.len(), 1, "{:?}", report.unrecorded);
    let u = &report.unrecorded[0];
    assert_eq!(u.runs, 9, "{u:?}");
    assert_eq!(u.reason, UnrecordedReason::Static);
    assert_eq!(u.path, program.display().to_string());
    assert_eq!(u.started_by, "exec_every_way");
    let (count, _) = trace_warnings(&report);
    assert_eq!(count, 1);
}

#[test]
fn dynamic_children_give_no_warning_and_are_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let launcher = compile("exec_every_way.c", dir.path());
    let program = compile("single.c", dir.path());
    let path_var = format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // `env` (dynamic, recorded) sets the PATH the launcher searches.
    let report = record(&options(
        dir.path().join("t.msc"),
        "env",
        &[
            &format!("PATH={path_var}"),
            &launcher.display().to_string(),
            &program.display().to_string(),
            "single",
        ],
    ))
    .unwrap();
    assert!(report.unrecorded.is_empty(), "{:?}", report.unrecorded);
    assert_eq!(trace_warnings(&report).0, 0);
    let runs = report
        .processes
        .iter()
        .filter(|p| p.command_line.starts_with("single 3") && p.allocs > 0)
        .count();
    assert_eq!(runs, 9, "{:#?}", report.processes);
}

#[test]
fn a_failed_exec_of_a_static_binary_withdraws_its_note() {
    let dir = tempfile::tempdir().unwrap();
    let program = compile_static(dir.path());
    // No execute bit for anyone: execve fails with EACCES (root too), after the shim looked.
    Command::new("chmod")
        .arg("644")
        .arg(&program)
        .status()
        .unwrap();
    let line = format!("{} 5; true", program.display());
    let report = record(&options(dir.path().join("t.msc"), "sh", &["-c", &line])).unwrap();
    assert!(report.unrecorded.is_empty(), "{:?}", report.unrecorded);
    assert_eq!(trace_warnings(&report).0, 0);
}

#[test]
fn a_script_that_execs_a_setuid_program_is_warned_about() {
    // In the target directory, as `faults.rs` does: a tmpfs /tmp may be mounted nosuid.
    let dir = tempfile::Builder::new().tempdir_in(target_dir()).unwrap();
    let program = compile("single.c", dir.path());
    // setuid to another user: the loader runs it in secure mode and ignores LD_PRELOAD.
    make_setuid_to_nobody(&program, dir.path());
    let launcher = script(dir.path(), &format!("exec {} 5", program.display()));
    // Through `sh SCRIPT`: executing the script file itself races with the other tests' forks
    // (one may inherit its still-open write descriptor: ETXTBSY).
    let report = record(&options(
        dir.path().join("t.msc"),
        "sh",
        &[&launcher.display().to_string()],
    ))
    .unwrap();
    assert_eq!(report.exit_status, 0);
    assert_eq!(report.unrecorded.len(), 1, "{:?}", report.unrecorded);
    let u = &report.unrecorded[0];
    assert_eq!(u.reason, UnrecordedReason::Setuid);
    assert_eq!(u.path, program.display().to_string());
    // The script's shell: exec keeps its pid.
    assert_eq!(u.pid, u.started_by_pid);
    assert!(
        u.to_string().contains("ran unrecorded: a setuid program"),
        "{u}"
    );
    let sh = report
        .processes
        .iter()
        .find(|p| p.pid == u.started_by_pid)
        .unwrap();
    assert!(sh.events > 0, "the script's events: {sh:?}");
    assert_eq!(trace_warnings(&report).0, 1);
}
