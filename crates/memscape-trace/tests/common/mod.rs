//! Shared helpers for the integration tests (included with `mod common;`).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data")
        .join(rel)
}

pub const HEAPTRACK_INTERPRET: &str = "/usr/lib/heaptrack/libexec/heaptrack_interpret";

/// Fails (never skips) when a tool is missing, naming the Debian package to install.
pub fn require_tool(path: &str, package: &str) {
    let found = if path.contains('/') {
        Path::new(path).is_file()
    } else {
        Command::new("sh")
            .arg("-c")
            .arg(format!("command -v {path}"))
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    assert!(
        found,
        "{path} is not installed: this test needs it as an oracle; install the Debian package `{package}` (apt-get install -y {package})"
    );
}

/// What heaptrack_print reports for a processed heaptrack file: (allocations, peak heap
/// consumption in bytes, leaked bytes). Exact byte values come from the flame-graph output
/// (one line per stack with its cost), because the summary lines are rounded ("4.44M").
/// Built-in leak suppressions are disabled so "leaked" means every byte still live at the end.
pub fn heaptrack_print_totals(processed: &Path, dir: &Path) -> (u64, u64, u64) {
    require_tool("heaptrack_print", "heaptrack");
    let mut out = [0u64; 3];
    for (i, cost) in ["allocations", "peak", "leaked"].iter().enumerate() {
        let stacks = dir.join(format!("stacks-{cost}.txt"));
        let status = Command::new("heaptrack_print")
            .arg("-f")
            .arg(processed)
            .args([
                "--disable-builtin-suppressions",
                "-p",
                "0",
                "-a",
                "0",
                "-T",
                "0",
            ])
            .args(["--flamegraph-cost-type", cost, "-F"])
            .arg(&stacks)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .expect("run heaptrack_print");
        assert!(
            status.success(),
            "heaptrack_print failed on {}",
            processed.display()
        );
        let text = std::fs::read_to_string(&stacks).unwrap();
        out[i] = text
            .lines()
            .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
            .sum();
    }
    (out[0], out[1], out[2])
}

/// Runs heaptrack_interpret on a raw file (compressed or not) and returns the processed file.
pub fn interpret(raw: &Path, dir: &Path) -> PathBuf {
    require_tool(HEAPTRACK_INTERPRET, "libheaptrack");
    let bytes = memscape_io::read_input(raw).unwrap();
    let out = dir.join("processed.txt");
    let mut child = Command::new(HEAPTRACK_INTERPRET)
        .stdin(std::process::Stdio::piped())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run heaptrack_interpret");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&bytes).unwrap();
    }
    assert!(child.wait().unwrap().success());
    out
}
