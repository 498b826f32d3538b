//! Helpers shared by the integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// `../shared/data` relative to the repository root.
pub fn shared_data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data")
        .join(rel)
}

pub fn test_data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

/// Fails (never skips) when a tool the test needs is missing, naming the Debian package.
pub fn require_tool(tool: &str, package: &str) {
    let found = Command::new(tool).arg("--version").output().is_ok()
        || Command::new(tool).arg("-V").output().is_ok();
    assert!(
        found,
        "`{tool}` is not installed: this test needs it as an oracle; install the Debian package `{package}` (apt-get install -y {package})"
    );
}

/// Runs `dot -Tplain` on a DOT text.
pub fn dot_plain(dot_text: &[u8]) -> String {
    use std::io::Write;
    require_tool("dot", "graphviz");
    let mut child = Command::new("dot")
        .arg("-Tplain")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn dot");
    child.stdin.take().unwrap().write_all(dot_text).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "dot failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Compiles C source to LLVM IR with clang and writes the CFG of every function with
/// `opt -passes=dot-cfg`; returns (function name, DOT bytes) pairs.
pub fn llvm_cfgs(c_source: &str, opt_level: &str, dir: &Path) -> Vec<(String, Vec<u8>)> {
    require_tool("clang", "clang");
    require_tool("opt", "llvm");
    let c = dir.join("input.c");
    std::fs::write(&c, c_source).unwrap();
    let ll = dir.join("input.ll");
    // -O0 marks functions `optnone`, and opt's dot-cfg skips those: lift it.
    let status = Command::new("clang")
        .args([
            opt_level,
            "-Xclang",
            "-disable-O0-optnone",
            "-fno-discard-value-names",
            "-g0",
            "-S",
            "-emit-llvm",
            "-o",
        ])
        .arg(&ll)
        .arg(&c)
        .status()
        .unwrap();
    assert!(status.success(), "clang failed");
    let status = Command::new("opt")
        .args(["-passes=dot-cfg", "-disable-output"])
        .arg(&ll)
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(status.success(), "opt -passes=dot-cfg failed");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if let Some(func) = name.strip_prefix('.').and_then(|n| n.strip_suffix(".dot")) {
            out.push((func.to_owned(), std::fs::read(&path).unwrap()));
        }
    }
    out.sort();
    out
}

/// A C file with loops, switches and branches: realistic CFG shapes for the tests.
pub const SAMPLE_C: &str = r#"
int collatz(int n) { int steps = 0; while (n != 1) { if (n % 2) n = 3 * n + 1; else n /= 2; steps++; } return steps; }
int classify(int op, int a, int b) {
  int r = 0;
  for (int i = 0; i < a; i++) {
    switch (op + i % 5) {
      case 0: r += a; break;
      case 1: r -= b; if (r < 0) r = -r; break;
      case 2: while (r > 100) r /= 3; break;
      case 3: for (int j = 0; j < b; j++) { if (j & 1) r ^= j; else r += j; } break;
      case 4: r = r * 7 + 1; break;
      default: r = 0;
    }
    if (r > 1000) break;
  }
  return r;
}
int main(int argc, char **argv) { (void)argv; return classify(argc, 5, 7) + collatz(argc + 26); }
"#;
