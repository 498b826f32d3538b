//! `memscape record` end to end as a user runs it: a shell that runs other programs is one
//! `.msc` file with every process; `info`, `heaptree` and `convert` select processes with
//! `--process PID|NAME-REGEX`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::memscape_recording as memscape;

use std::process::Command;

fn json(args: &[&str]) -> serde_json::Value {
    let out = memscape().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "memscape {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_shell_running_programs_is_one_file_and_processes_can_be_selected() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.msc");
    let status = memscape()
        .arg("record")
        .arg("-o")
        .arg(&out)
        .args([
            "--",
            "sh",
            "-c",
            "ls / > /dev/null; sort /etc/passwd > /dev/null",
        ])
        .status()
        .unwrap();
    assert!(status.success());
    // One file, nothing else left.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["run.msc"]);
    let path = out.to_str().unwrap();
    let info = json(&["info", "--json", path]);
    let processes = info["processes"].as_array().unwrap();
    assert!(processes.len() >= 3, "{processes:#?}");
    for p in processes {
        for key in [
            "pid",
            "parent_pid",
            "command_line",
            "events",
            "allocs",
            "frees",
            "peak_live_bytes",
        ] {
            assert!(p.get(key).is_some(), "no {key} in {p}");
        }
    }
    let sh = processes[0]["pid"].as_u64().unwrap();
    assert!(processes[1..].iter().all(|p| p["parent_pid"] == sh));
    // By name: the sort process only (not the shell whose command line mentions it... unless
    // the regex says so: `^sort` matches the program name).
    let sort = json(&["info", "--json", "--process", "^sort", path]);
    let selected = sort["processes"].as_array().unwrap();
    assert_eq!(selected.len(), 1, "{selected:#?}");
    assert!(
        selected[0]["command_line"]
            .as_str()
            .unwrap()
            .starts_with("sort")
    );
    assert_eq!(sort["allocs"], selected[0]["allocs"]);
    // By pid, in heaptree and convert.
    let pid = selected[0]["pid"].to_string();
    let tree = json(&["heaptree", "--peak", "--json", "--process", &pid, path]);
    assert!(tree["total_bytes"].as_u64().unwrap() > 0);
    // Without --process, the heap tree is one process's heap, the largest peak's (as the GUI
    // shows it), and says so; `--group process,…` keeps every process.
    let largest = processes
        .iter()
        .max_by_key(|p| p["peak_live_bytes"].as_u64().unwrap())
        .unwrap();
    let default = memscape()
        .args(["heaptree", "--peak", "--json", path])
        .output()
        .unwrap();
    assert!(default.status.success());
    let note = String::from_utf8_lossy(&default.stderr);
    let largest_pid = largest["pid"].to_string();
    assert!(
        note.contains("the largest peak") && note.contains(&format!("pid {largest_pid} ")),
        "{note}"
    );
    let default: serde_json::Value = serde_json::from_slice(&default.stdout).unwrap();
    assert_eq!(default["total_bytes"], largest["peak_live_bytes"]);
    let chosen = json(&[
        "heaptree",
        "--peak",
        "--json",
        "--process",
        &largest_pid,
        path,
    ]);
    assert_eq!(default, chosen);
    let all = json(&[
        "heaptree",
        "--peak",
        "--json",
        "--group",
        "process,line",
        path,
    ]);
    assert_eq!(all["total_bytes"], info["peak_live_bytes"]);
    let one = dir.path().join("sort.msc");
    let converted = memscape()
        .args(["convert", "--process", &pid, path])
        .arg(&one)
        .output()
        .unwrap();
    assert!(converted.status.success());
    let again = json(&["info", "--json", one.to_str().unwrap()]);
    assert_eq!(again["processes"].as_array().unwrap().len(), 1);
    assert_eq!(again["allocs"], sort["allocs"]);
    // `render --process` (the views' one process setting) draws the selected process only;
    // one that matches nothing names the processes there are.
    let png = dir.path().join("sort.png");
    let render = |select: &str| {
        memscape()
            .env("MEMSCAPE_ADAPTER", "cpu")
            .args([
                "render",
                "--panels",
                "main,occupancy",
                "--process",
                select,
                "-o",
            ])
            .arg(&png)
            .arg(path)
            .output()
            .unwrap()
    };
    let drawn = render(&pid);
    assert!(
        drawn.status.success(),
        "{}",
        String::from_utf8_lossy(&drawn.stderr)
    );
    assert!(std::fs::metadata(&png).unwrap().len() > 0);
    let nothing = render("no-such-program");
    assert!(!nothing.status.success());
    let message = String::from_utf8_lossy(&nothing.stderr);
    assert!(
        message.contains("matches none") && message.contains("sort"),
        "{message}"
    );
    // A filter that matches nothing names the processes there are.
    let none = memscape()
        .args(["info", "--process", "no-such-program", path])
        .output()
        .unwrap();
    assert!(!none.status.success());
    let message = String::from_utf8_lossy(&none.stderr);
    assert!(
        message.contains("matches none") && message.contains("sort"),
        "{message}"
    );
}

#[test]
fn record_live_prints_a_growing_summary_while_the_program_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("live.msc");
    let output = memscape()
        .args(["record", "--live", "--no-window", "-o"])
        .arg(&out)
        .args([
            "--",
            "sh",
            "-c",
            "for i in 1 2 3 4 5 6 7 8; do sort /etc/passwd > /dev/null; sleep 0.2; done",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    // `memscape: N process(es), E events, …` 4 times a second over ~1.6 s.
    let events: Vec<u64> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("memscape: ")?.split(", ").nth(1))
        .filter_map(|e| e.strip_suffix(" events")?.parse().ok())
        .collect();
    assert!(events.len() >= 5, "{stderr}");
    assert!(events.windows(2).all(|w| w[0] <= w[1]), "{events:?}");
    let mut steps = events.clone();
    steps.dedup();
    assert!(steps.len() >= 3, "the summary did not grow: {events:?}");
    // The last summary is the trace's.
    let trace = memscape_trace::read_msc(&out).unwrap();
    assert_eq!(*events.last().unwrap(), trace.meta.events, "{stderr}");
}

#[test]
fn a_static_program_started_by_the_shell_is_a_warning_and_in_info() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/memscape-record/tests/c/single.c");
    let program = dir.path().join("static_prog");
    assert!(
        Command::new("gcc")
            .args(["-O0", "-static", "-o"])
            .arg(&program)
            .arg(&src)
            .status()
            .unwrap()
            .success(),
        "gcc -static needs libc6-dev's libc.a"
    );
    let out = dir.path().join("run.msc");
    let run = memscape()
        .current_dir(dir.path())
        .arg("record")
        .arg("-o")
        .arg(&out)
        .args(["--", "sh", "-c", "./static_prog 3; ./static_prog 2"])
        .output()
        .unwrap();
    assert!(run.status.success());
    let stderr = String::from_utf8_lossy(&run.stderr);
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].starts_with("warning: ./static_prog (pid ")
            && warnings[0].ends_with(
                " and 1 more run, started by sh) ran unrecorded: a static binary — the loader ignores LD_PRELOAD"
            ),
        "{stderr}"
    );
    let info = json(&["info", "--json", out.to_str().unwrap()]);
    let kinds = info["warning_kinds"].as_array().unwrap();
    let unrecorded = kinds
        .iter()
        .find(|k| k["kind"] == "unrecorded_program")
        .unwrap_or_else(|| panic!("{kinds:#?}"));
    assert_eq!(unrecorded["count"], 1);
    let place = unrecorded["first"][0]["file"].as_str().unwrap();
    assert!(place.starts_with("./static_prog (pid "), "{place}");
}
