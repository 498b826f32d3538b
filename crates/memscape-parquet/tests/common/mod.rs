//! What the tests share: where the repository and the shared data are, and the pyarrow oracle.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn repo() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    dir.canonicalize().unwrap_or(dir)
}

pub fn shared_data() -> PathBuf {
    repo().join("../shared/data")
}

/// Runs a pyarrow script (from the test venv `target/oracles` when there is one) and parses
/// the JSON it prints; a missing module fails the test naming the pip package.
pub fn pyarrow<A: AsRef<OsStr>>(script: &str, args: &[A]) -> serde_json::Value {
    let venv = repo().join("target/oracles/bin/python3");
    let python = if venv.exists() {
        venv
    } else {
        PathBuf::from("python3")
    };
    let out = Command::new(&python)
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python3 is needed for the pyarrow oracle (scripts/install-deps.sh test)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("MISSING-MODULE"),
        "oracle missing: {stderr}; run scripts/install-deps.sh test (pip install pyarrow)"
    );
    assert!(out.status.success(), "pyarrow oracle failed: {stderr}");
    serde_json::from_slice(&out.stdout).unwrap()
}
