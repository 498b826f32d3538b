//! Helpers shared by the integration tests: the Python oracles (ripser, DREiMac), compiling and
//! tracing C programs with gcc and valgrind lackey, and barcode comparison.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use memscape_cycles::PersistenceReport;

/// `../shared/data` relative to the repository root.
pub fn shared_data() -> PathBuf {
    crate_dir().join("../../../shared/data")
}

/// The crate's directory with symlinks resolved (the repository may be reached through one).
pub fn crate_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    dir.canonicalize().unwrap_or_else(|_| dir.to_owned())
}

/// Runs a Python script; a missing module fails the test naming the pip package.
pub fn python(script: &str, args: &[&str]) -> String {
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python3 is needed for the oracle tests (apt-get install -y python3)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("MISSING-MODULE") {
        panic!("oracle missing: {stderr}; install it with `pip install ripser dreimac`");
    }
    assert!(out.status.success(), "python oracle failed: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

const RIPSER_SCRIPT: &str = r#"
import sys, json
try:
    import numpy as np
    from ripser import ripser
except ImportError as e:
    sys.stderr.write("MISSING-MODULE: %s (pip package `ripser`)\n" % e)
    sys.exit(3)
path, fmt, maxdim, coeff = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
thresh = float(sys.argv[5]) if len(sys.argv) > 5 else float("inf")
if fmt == "lower":
    vals = np.array([float(t) for t in open(path).read().replace(",", " ").split()])
    k = len(vals)
    n = int(round((1 + (1 + 8 * k) ** 0.5) / 2))
    D = np.zeros((n, n))
    D[np.tril_indices(n, -1)] = vals
    D = D + D.T
    res = ripser(D, maxdim=maxdim, coeff=coeff, distance_matrix=True, thresh=thresh)
else:
    X = np.loadtxt(path, ndmin=2)
    res = ripser(X, maxdim=maxdim, coeff=coeff)
print(json.dumps([[[float(b), None if np.isinf(d) else float(d)] for b, d in dgm] for dgm in res["dgms"]]))
"#;

/// The barcode ripser.py computes for a file (`lower` distance matrix or `points`).
pub fn ripser_oracle(
    path: &Path,
    format: &str,
    max_dim: usize,
    modulus: u16,
) -> Vec<Vec<(f64, Option<f64>)>> {
    ripser_oracle_thresholded(path, format, max_dim, modulus, f64::INFINITY)
}

/// Same with ripser.py's `thresh`.
pub fn ripser_oracle_thresholded(
    path: &Path,
    format: &str,
    max_dim: usize,
    modulus: u16,
    threshold: f64,
) -> Vec<Vec<(f64, Option<f64>)>> {
    let json = python(
        RIPSER_SCRIPT,
        &[
            path.to_str().unwrap(),
            format,
            &max_dim.to_string(),
            &modulus.to_string(),
            &threshold.to_string(),
        ],
    );
    serde_json::from_str(&json).unwrap()
}

pub fn as_pairs(report: &PersistenceReport) -> Vec<Vec<(f64, Option<f64>)>> {
    report
        .dims
        .iter()
        .map(|bars| {
            bars.iter()
                .map(|b| (f64::from(b.0), b.1.map(f64::from)))
                .collect()
        })
        .collect()
}

/// Asserts two barcodes are the same multisets of pairs, dimension by dimension, up to `tol`.
pub fn assert_same_barcodes(
    ours: &[Vec<(f64, Option<f64>)>],
    theirs: &[Vec<(f64, Option<f64>)>],
    tol: f64,
    what: &str,
) {
    assert_eq!(ours.len(), theirs.len(), "{what}: number of dimensions");
    for (dim, (a, b)) in ours.iter().zip(theirs).enumerate() {
        let key = |p: &(f64, Option<f64>)| (p.0, p.1.unwrap_or(f64::INFINITY));
        let mut a: Vec<_> = a.iter().map(key).collect();
        let mut b: Vec<_> = b.iter().map(key).collect();
        let cmp = |x: &(f64, f64), y: &(f64, f64)| x.partial_cmp(y).unwrap();
        a.sort_by(cmp);
        b.sort_by(cmp);
        assert_eq!(
            a.len(),
            b.len(),
            "{what}: H{dim} has {} bars here and {} in ripser\nours: {a:?}\nripser: {b:?}",
            a.len(),
            b.len()
        );
        for (x, y) in a.iter().zip(&b) {
            let close = |u: f64, v: f64| (u == v) || (u - v).abs() <= tol;
            assert!(
                close(x.0, y.0) && close(x.1, y.1),
                "{what}: H{dim} bar {x:?} here vs {y:?} in ripser\nours: {a:?}\nripser: {b:?}"
            );
        }
    }
}

/// Compiles a C program with `gcc -O0 -g` into `dir`.
pub fn compile_c(dir: &Path, name: &str, source: &str) -> PathBuf {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, source).unwrap();
    let exe = dir.join(name);
    let out = Command::new("gcc")
        .args(["-O0", "-g", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("gcc is needed to build the traced programs (apt-get install -y gcc)");
    assert!(
        out.status.success(),
        "gcc failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// Runs `exe args` under `valgrind --tool=lackey --trace-mem=yes`, returns the log file.
pub fn lackey_trace(dir: &Path, exe: &Path, args: &[&str], tag: &str) -> PathBuf {
    let log = dir.join(format!("{tag}.lackey"));
    let out = Command::new("valgrind")
        .arg("--tool=lackey")
        .arg("--trace-mem=yes")
        .arg(format!("--log-file={}", log.display()))
        .arg(exe)
        .args(args)
        .output()
        .expect("valgrind is needed to record lackey traces (apt-get install -y valgrind)");
    assert!(
        out.status.success(),
        "valgrind failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    log
}

pub const BUBBLE_SORT: &str = r#"
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void bubble_sort(int *a, int n) {
    for (int i = 0; i < n - 1; i++)
        for (int j = 0; j < n - 1 - i; j++)
            if (a[j] > a[j + 1]) {
                int t = a[j];
                a[j] = a[j + 1];
                a[j + 1] = t;
            }
}

int main(int argc, char **argv) {
    int a[5];
    for (int i = 0; i < 5; i++) a[i] = atoi(argv[i + 1]);
    bubble_sort(a, 5);
    for (int i = 0; i < 5; i++) printf("%d ", a[i]);
    printf("\n");
    return 0;
}
"#;

pub const MATMUL: &str = r#"
#include <stdio.h>
#define N 8
#define B 4
static double a[N][N], b[N][N], c[N][N];

__attribute__((noinline)) void matmul(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            for (int k = 0; k < N; k++)
                c[i][j] += a[i][k] * b[k][j];
}

__attribute__((noinline)) void matmul_blocked(void) {
    for (int ii = 0; ii < N; ii += B)
        for (int jj = 0; jj < N; jj += B)
            for (int kk = 0; kk < N; kk += B)
                for (int i = ii; i < ii + B; i++)
                    for (int j = jj; j < jj + B; j++)
                        for (int k = kk; k < kk + B; k++)
                            c[i][j] += a[i][k] * b[k][j];
}

int main(int argc, char **argv) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) { a[i][j] = i + j; b[i][j] = i - j; }
    if (argc > 1) matmul_blocked(); else matmul();
    printf("%f\n", c[N - 1][N - 1]);
    return 0;
}
"#;
