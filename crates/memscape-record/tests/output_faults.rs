//! Faults on memscape's own side of a recording, without root: the disk filling up during the
//! final write (a preloaded library makes writes in the output's directory fail with ENOSPC),
//! a file-size limit (RLIMIT_FSIZE) reached by the final write, and the raw recording's
//! private directory in a shared, sticky directory with a symlink planted at the output's
//! name. memscape runs as users run it: the `record` example binary, started by a shell.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;
use memscape_record::RAW_DIR_PREFIX;

/// `tests/c/faultinject.c` built once into `dir`.
fn faultinject(dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/faultinject.c");
    let lib = dir.join("libfaultinject.so");
    require("gcc", "gcc");
    let ok = Command::new("gcc")
        .args(["-O1", "-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&src)
        .status()
        .unwrap()
        .success();
    assert!(ok, "compiling {}", src.display());
    lib
}

fn record_bin() -> PathBuf {
    let bin = target_dir().join("debug/examples/record");
    assert!(
        bin.is_file(),
        "{} missing (cargo test builds it)",
        bin.display()
    );
    bin
}

/// `sh -c "SETUP; exec record -o OUT -- sh -c LINE"` with `env` added.
fn record_via_shell(setup: &str, out: &Path, line: &str, env: &[(&str, &Path)]) -> Output {
    let quoted = line.replace('\'', r"'\''");
    let script = format!(
        "{setup}\nexec {} -o {} -- sh -c '{quoted}'",
        record_bin().display(),
        out.display()
    );
    let mut command = Command::new("sh");
    command.arg("-c").arg(script).env("MEMSCAPE_SHIM", shim());
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().unwrap()
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The kept raw directory named in a "cannot write" message.
fn kept_dir(stderr: &str) -> PathBuf {
    let at = stderr
        .find("the raw recording is kept in ")
        .unwrap_or_else(|| panic!("no kept directory in {stderr}"));
    let rest = &stderr[at + "the raw recording is kept in ".len()..];
    PathBuf::from(rest.split(':').next().unwrap())
}

/// What both write failures must leave: the error once, an old trace under the output's name
/// untouched, no partial file, the raw recording kept (private) and convertible.
fn check_failed_write(output: &Output, disk: &Path, out: &Path, cause: &str, program: &Path) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.matches(cause).count(), 1, "{stderr}");
    let kept = kept_dir(&stderr);
    assert!(
        stderr.contains(&format!(
            "memscape convert {} {}",
            kept.display(),
            out.display()
        )),
        "{stderr}"
    );
    // The previous trace under the output's name is untouched; no partial file beside it.
    assert_eq!(std::fs::read(out).unwrap(), b"the previous trace");
    let kept_name = kept.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(
        names_in(disk),
        vec![kept_name, "trace.msc".to_owned()],
        "partial files left"
    );
    let mode = std::fs::metadata(&kept).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    // Convertible once there is room: the run is not lost.
    let converted = disk.join("converted.msc");
    let report = memscape_record::convert_dir(&kept, &converted, 4).unwrap();
    let single = report
        .processes
        .iter()
        .find(|p| p.command_line.starts_with(&program.display().to_string()))
        .unwrap_or_else(|| panic!("no {} in {:#?}", program.display(), report.processes));
    assert!(single.allocs > 1000, "{single:#?}");
    let trace = memscape_trace::read_msc(&converted).unwrap();
    assert_eq!(trace.meta.allocs, report.allocs);
}

#[test]
fn a_disk_filling_up_during_the_final_write_loses_nothing_without_root() {
    let dir = tempfile::tempdir().unwrap();
    let inject = faultinject(dir.path());
    let program = compile("single.c", dir.path());
    let disk = dir.path().join("disk");
    std::fs::create_dir(&disk).unwrap();
    let out = disk.join("trace.msc");
    std::fs::write(&out, b"the previous trace").unwrap();
    let output = record_via_shell(
        &format!("export LD_PRELOAD={}", inject.display()),
        &out,
        &format!("{} 200", program.display()),
        &[("MEMSCAPE_TEST_FULL_DIR", &disk)],
    );
    check_failed_write(&output, &disk, &out, "No space left on device", &program);
}

#[test]
fn a_file_size_limit_reached_by_the_final_write_loses_nothing() {
    // RLIMIT_FSIZE (`ulimit -f`, common on batch systems) set on memscape once the program
    // has run (`prlimit` on the shell's parent, memscape): the final write reaches it. Without
    // handling, SIGXFSZ would kill memscape with the raw recording left unnamed.
    require("prlimit", "util-linux");
    let dir = tempfile::tempdir().unwrap();
    let program = compile("single.c", dir.path());
    let disk = dir.path().join("disk");
    std::fs::create_dir(&disk).unwrap();
    let out = disk.join("trace.msc");
    std::fs::write(&out, b"the previous trace").unwrap();
    let line = format!(
        "{} 200; prlimit --fsize=4096 --pid $PPID",
        program.display()
    );
    let output = record_via_shell("", &out, &line, &[]);
    check_failed_write(&output, &disk, &out, "File too large", &program);
}

#[test]
fn the_raw_recording_is_private_and_a_planted_symlink_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let inject = faultinject(dir.path());
    // A shared, sticky directory as /tmp, a umask that would open every new directory to
    // everyone, and another user's file behind a symlink planted at the output's name.
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"another user's file").unwrap();
    let out = shared.join("trace.msc");
    std::os::unix::fs::symlink(&victim, &out).unwrap();
    let seen = dir.path().join("seen");
    let log = dir.path().join("mkdir.log");
    let mut dirs = Vec::new();
    for _ in 0..2 {
        let line = format!(
            "stat -c %a \"$MEMSCAPE_RECORD_DIR\" >> {s}; echo \"$MEMSCAPE_RECORD_DIR\" >> {s}",
            s = seen.display()
        );
        let output = record_via_shell(
            &format!("umask 000; export LD_PRELOAD={}", inject.display()),
            &out,
            &line,
            &[("MEMSCAPE_TEST_MKDIR_LOG", &log)],
        );
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let seen = std::fs::read_to_string(&seen).unwrap();
    let lines: Vec<&str> = seen.lines().collect();
    assert_eq!(lines.len(), 4, "{seen}");
    for pair in lines.chunks(2) {
        // As the program saw it while it ran.
        assert_eq!(pair[0], "700", "{seen}");
        let raw = Path::new(pair[1]);
        assert_eq!(raw.parent(), Some(shared.as_path()));
        let name = raw.file_name().unwrap().to_string_lossy().into_owned();
        let random = name.strip_prefix(RAW_DIR_PREFIX).unwrap();
        assert_eq!(random.len(), 16, "{name}");
        assert!(random.chars().all(|c| c.is_ascii_alphanumeric()), "{name}");
        dirs.push(name);
    }
    assert_ne!(dirs[0], dirs[1], "the same name twice");
    // Created 0700 (mkdir's mode), never wider for a moment before a chmod.
    let log = std::fs::read_to_string(&log).unwrap();
    let made: Vec<&str> = log.lines().filter(|l| l.contains(RAW_DIR_PREFIX)).collect();
    assert_eq!(made.len(), 2, "{log}");
    assert!(made.iter().all(|l| l.starts_with("700 ")), "{log}");
    // The symlink was replaced by the trace, never written through.
    assert_eq!(std::fs::read(&victim).unwrap(), b"another user's file");
    let meta = std::fs::symlink_metadata(&out).unwrap();
    assert!(meta.file_type().is_file(), "{meta:?}");
    memscape_trace::read_msc(&out).unwrap();
    assert_eq!(names_in(&shared), vec!["trace.msc".to_owned()]);
}
