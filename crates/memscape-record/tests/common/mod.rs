//! Helpers shared by the recorder's tests: the shim built once, C/C++ programs compiled at
//! test time, valgrind's counts, recording and consistency checks.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use memscape_record::{RecordOptions, RecordReport, record};

pub fn target_dir() -> PathBuf {
    // Test binaries live in <target>/<profile>/deps/.
    let exe = std::env::current_exe().unwrap();
    exe.parent()
        .unwrap()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_owned()
}

/// Builds the shim once per test run. A nested target directory: the outer `cargo test` holds
/// the lock on its own.
pub fn shim() -> PathBuf {
    static SHIM: OnceLock<PathBuf> = OnceLock::new();
    SHIM.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let nested = target_dir().join("memscape-recorder-shim");
        let status = Command::new(cargo)
            .args(["build", "--quiet", "-p", "memscape-recorder"])
            .env("CARGO_TARGET_DIR", &nested)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("cannot run cargo to build the shim");
        assert!(status.success(), "building memscape-recorder failed");
        let so = nested.join("debug").join(memscape_record::SHIM_NAME);
        assert!(so.is_file(), "{} missing after the build", so.display());
        so
    })
    .clone()
}

pub fn require(tool: &str, package: &str) {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "`{tool}` not found: install the apt package `{package}`"
    );
}

/// Compiles `tests/c/<name>` into `dir` with gcc or g++ at -O0 (so that no malloc/free pair is
/// optimized away).
pub fn compile(name: &str, dir: &Path) -> PathBuf {
    compile_with(name, dir, &["-O0", "-fno-builtin"], "")
}

/// Compiles `tests/c/<name>` into `dir` with gcc or g++ and `flags` (besides `-g -pthread`),
/// the program's name followed by `suffix`.
pub fn compile_with(name: &str, dir: &Path, flags: &[&str], suffix: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c")
        .join(name);
    let cpp = name.ends_with(".cpp");
    let (compiler, package) = if cpp { ("g++", "g++") } else { ("gcc", "gcc") };
    require(compiler, package);
    let out = dir.join(format!("{}{suffix}", name.split('.').next().unwrap()));
    let status = Command::new(compiler)
        .args(flags)
        .args(["-g", "-pthread", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .unwrap();
    assert!(status.success(), "compiling {}", src.display());
    out
}

/// Builds `tests/c/alloclib.c` as the shared library `dir/<name>` (gcc, `-g -shared -fPIC` and
/// `opt`), for the programs that dlopen it.
pub fn compile_alloclib(dir: &Path, name: &str, opt: &str) -> PathBuf {
    require("gcc", "gcc");
    let lib = dir.join(name);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/alloclib.c");
    let built = Command::new("gcc")
        .args([opt, "-g", "-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&src)
        .status()
        .unwrap();
    assert!(built.success(), "compiling {}", src.display());
    lib
}

/// valgrind's `total heap usage` per process: (allocs, frees).
pub fn valgrind_counts(program: &Path, args: &[&str], dir: &Path) -> Vec<(u64, u64)> {
    require("valgrind", "valgrind");
    let logs = dir.join("vg");
    std::fs::create_dir_all(&logs).unwrap();
    // freeres: valgrind frees glibc's and libstdc++'s internal buffers at exit, which an
    // ordinary run never does.
    let _ = Command::new("valgrind")
        .args([
            "--tool=memcheck",
            "--run-libc-freeres=no",
            "--run-cxx-freeres=no",
            "--trace-children=yes",
        ])
        .arg(format!("--log-file={}/vg.%p", logs.display()))
        // The variables a recording sets (shells allocate per variable).
        .env("MEMSCAPE_RECORD_DIR", "-")
        .env("MEMSCAPE_STACK_DEPTH", "-")
        .env("MEMSCAPE_NO_STACKS", "-")
        .arg(program)
        .args(args)
        .output()
        .unwrap();
    read_valgrind_logs(&logs)
}

/// The `total heap usage` lines of valgrind's per-process logs in `logs`: (allocs, frees).
pub fn read_valgrind_logs(logs: &Path) -> Vec<(u64, u64)> {
    let mut counts = Vec::new();
    for entry in std::fs::read_dir(logs).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for line in text.lines() {
            if let Some(rest) = line.split("total heap usage: ").nth(1) {
                // "8,102 allocs, 8,036 frees, ..." (thousands separated by commas)
                let number = |unit: &str| -> u64 {
                    let before = rest.split(unit).next().unwrap();
                    let word = before.rsplit(' ').find(|w| !w.is_empty()).unwrap();
                    word.replace(',', "").parse().unwrap()
                };
                let nums = [number(" allocs"), number(" frees")];
                counts.push((nums[0], nums[1]));
            }
        }
    }
    counts.sort_unstable();
    counts
}

pub fn record_program(program: &Path, args: &[&str], dir: &Path) -> RecordReport {
    record(&RecordOptions {
        output: dir.join("trace.msc"),
        stack_depth: 32,
        no_stacks: false,
        program: program.display().to_string(),
        args: args.iter().map(|s| (*s).to_owned()).collect(),
        shim: Some(shim()),
        // Exact times: the clock test compares them with the program's own clock reads.
        time_resolution_log2: 0,
    })
    .unwrap()
}

/// Counts of the images valgrind reports on: for an exec'd pid, only the last image (valgrind
/// starts over at exec and prints no summary for the image that exec'd).
pub fn recorded_counts(report: &RecordReport) -> Vec<(u64, u64)> {
    let mut last_image: HashMap<u32, &memscape_record::ProcessReport> = HashMap::new();
    for p in &report.processes {
        let slot = last_image.entry(p.pid).or_insert(p);
        if p.image > slot.image {
            *slot = p;
        }
    }
    let mut counts: Vec<(u64, u64)> = last_image
        .values()
        .map(|p| (p.allocs, p.frees + p.unknown_frees + p.inherited_frees))
        .collect();
    counts.sort_unstable();
    counts
}

/// One trace holds every process: its process table agrees with the report, every free
/// matched an allocation, and nothing but the trace is left in the output directory.
pub fn check_consistency(report: &RecordReport) {
    let trace = memscape_trace::read_msc(&report.output).unwrap();
    assert_eq!(trace.processes.len(), report.processes.len());
    for (p, t) in report.processes.iter().zip(&trace.processes) {
        // Programs compiled by the tests free nothing they did not allocate or inherit at a
        // fork. (System programs such as `sleep` free blocks ld.so allocated before the shim
        // started.)
        let first = p.command_line.split(' ').next().unwrap_or("");
        let ours = first.starts_with(&*std::env::temp_dir().to_string_lossy())
            || first.starts_with(&*target_dir().to_string_lossy());
        if ours {
            assert_eq!(
                p.unknown_frees, 0,
                "{}: frees of unknown addresses",
                p.command_line
            );
        }
        assert_eq!(
            (t.pid, t.parent_pid, t.allocs, t.frees, &t.command_line),
            (p.pid, p.ppid, p.allocs, p.frees, &p.command_line)
        );
    }
    assert_eq!(trace.meta.allocs, report.allocs);
    assert_eq!(trace.meta.frees, report.frees);
    assert_eq!(trace.meta.double_frees, 0);
    let unknown: u64 = report.processes.iter().map(|p| p.unknown_frees).sum();
    assert_eq!(
        trace.warnings.total(),
        unknown,
        "warnings other than unknown frees: {:?}",
        trace.warnings
    );
    let dir = report.output.parent().unwrap();
    let left: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".msc") || n.starts_with(".memscape") || n.ends_with(".msr"))
        .collect();
    assert_eq!(
        left,
        vec![
            report
                .output
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        ]
    );
}

/// What the fault tests record with: 16 frames, the shim built here.
pub fn options(output: PathBuf, program: &str, args: &[&str]) -> RecordOptions {
    RecordOptions {
        output,
        stack_depth: 16,
        no_stacks: false,
        program: program.to_owned(),
        args: args.iter().map(|s| (*s).to_owned()).collect(),
        shim: Some(shim()),
        time_resolution_log2: memscape_record::DEFAULT_TIME_RESOLUTION_LOG2,
    }
}

/// `tests/c/single.c` linked statically into `dir/static`.
pub fn compile_static(dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/single.c");
    let program = dir.join("static");
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
    program
}

/// Makes `program` (in `dir`) setuid to `nobody`, so that the loader runs it in secure mode
/// and ignores LD_PRELOAD; `dir` is opened to everyone (needs root, as CI has).
pub fn make_setuid_to_nobody(program: &Path, dir: &Path) {
    assert!(
        Command::new("chown")
            .args(["nobody"])
            .arg(program)
            .status()
            .unwrap()
            .success(),
        "chown needs root"
    );
    Command::new("chmod").arg("755").arg(dir).status().unwrap();
    Command::new("chmod")
        .arg("u+s")
        .arg(program)
        .status()
        .unwrap();
}
