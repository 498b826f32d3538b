//! Traces recorded at test time with real heaptrack, compared with heaptrack_print.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{heaptrack_print_totals, interpret, require_tool};
use memscape_trace::info::{InfoOptions, info};
use memscape_trace::load;

/// malloc, calloc, realloc (growing, shrinking, from NULL), frees in another order, leaks.
const PROGRAM: &str = r#"
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 200;
    void **keep = malloc(sizeof(void *) * n);
    for (int i = 0; i < n; i++) { keep[i] = malloc(16 + (i % 37) * 24); memset(keep[i], 1, 16); }
    for (int i = 0; i < n; i += 2) free(keep[i]);
    for (int i = 1; i < n; i += 2) keep[i] = realloc(keep[i], 4096 + i);
    for (int i = 1; i < n; i += 4) keep[i] = realloc(keep[i], 8);
    char *c = calloc(10, 100);
    void *r = realloc(NULL, 333);
    for (int i = 1; i < n - 10; i += 2) free(keep[i]);
    free(c);
    free(r);
    (void)keep;
    return 0;
}
"#;

fn record(dir: &Path) -> PathBuf {
    require_tool("gcc", "gcc");
    require_tool("heaptrack", "heaptrack");
    let src = dir.join("prog.c");
    std::fs::write(&src, PROGRAM).unwrap();
    let exe = dir.join("prog");
    let ok = Command::new("gcc")
        .args(["-O0", "-g", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .unwrap()
        .success();
    assert!(ok, "gcc failed");
    let out = dir.join("rec");
    let status = Command::new("heaptrack")
        .arg("-r")
        .arg("-o")
        .arg(&out)
        .arg(&exe)
        .arg("300")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "heaptrack -r failed");
    ["rec.raw.zst", "rec.raw.gz", "rec.raw"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
        .expect("heaptrack wrote no raw file")
}

#[test]
fn recorded_trace_matches_heaptrack_print() {
    let dir = tempfile::tempdir().unwrap();
    let raw = record(dir.path());
    let processed = interpret(&raw, dir.path());
    let (allocations, peak, leaked) = heaptrack_print_totals(&processed, dir.path());
    let mut trace = load(&raw).unwrap();
    assert!(trace.warnings.is_empty(), "{}", trace.warnings);
    let report = info(&trace, &InfoOptions::default());
    // heaptrack records each realloc as a free and an allocation; heaptrack_print counts the
    // allocation, exactly like our valgrind-style count.
    assert_eq!(report.allocs, allocations);
    assert_eq!(report.peak_live_bytes, peak);
    assert_eq!(report.end_live_bytes, leaked);
    assert!(report.allocs > 300 + 150);

    // The program is on this machine with debug info: its frames get function, file and line.
    let s = memscape_trace::symbolize::symbolize(&mut trace);
    assert!(s.frames_resolved > 0, "{s:?}");
    let report = info(&trace, &InfoOptions::default());
    assert!(
        report
            .top_call_sites
            .iter()
            .flat_map(|c| &c.stack)
            .any(|f| f.starts_with("main (") && f.contains("prog.c:")),
        "{:#?}",
        report.top_call_sites
    );

    // The processed file of the same run: same counts, no addresses.
    let processed_trace = load(&processed).unwrap();
    assert!(!processed_trace.has_addresses());
    assert_eq!(processed_trace.meta.allocs, allocations);
    assert_eq!(processed_trace.meta.peak_live_bytes, peak);
    assert_eq!(processed_trace.meta.end_live_bytes, leaked);
}
