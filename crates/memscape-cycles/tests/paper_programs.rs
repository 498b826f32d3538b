//! The paper's setting (Choudhury et al., Table 1 and Figure 7): programs compiled with gcc and
//! traced with valgrind lackey at test time, the analysis restricted to the sorting/multiplying
//! function. For at least one of the top parameterizations, the winding number of θ along the
//! trace must equal the iteration count of the outer or of the inner loop (±1).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use memscape_cycles::circular::winding_number;
use memscape_cycles::records::RecordFilter;
use memscape_cycles::{CyclesOptions, analyze_trace_file};

struct Case {
    name: &'static str,
    source: &'static str,
    args: &'static [&'static str],
    function: &'static str,
    /// Total iterations of the outer and of the innermost loop.
    outer: f64,
    inner: f64,
}

/// Runs one program and returns its Table-1 row; panics if no class matches a loop.
fn run(case: &Case) -> String {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile_c(dir.path(), "prog", case.source);
    let log = lackey_trace(dir.path(), &exe, case.args, case.name);
    let options = CyclesOptions {
        binary: Some(exe.clone()),
        filter: RecordFilter {
            functions: vec![case.function.to_owned()],
            ..RecordFilter::default()
        },
        top: 10,
        ..CyclesOptions::default()
    };
    let report = analyze_trace_file(&log, &options).unwrap();
    assert!(
        report
            .records
            .iter()
            .all(|r| r.function.as_deref() == Some(case.function)),
        "{}: the filter kept records of other functions",
        case.name
    );
    assert!(
        report
            .records
            .iter()
            .all(|r| r.line.is_some() && r.file.is_some())
    );
    let windings: Vec<f64> = report
        .parameterizations
        .iter()
        .map(|p| {
            assert_eq!(p.theta.len(), report.records.len());
            assert!(p.theta.iter().all(|t| (0.0..1.0).contains(t)));
            winding_number(&p.theta).abs()
        })
        .collect();
    let matching = report
        .parameterizations
        .iter()
        .zip(&windings)
        .find(|(_, w)| (*w - case.outer).abs() <= 1.0 || (*w - case.inner).abs() <= 1.0);
    let row = format!(
        "| {} | {} | {} | {} | {} | {} | {:?} |",
        case.name,
        report.records.len(),
        report.windows,
        report.unique_windows,
        report.barcode.len(),
        matching.map_or("none".to_owned(), |(p, _)| p.rank.to_string()),
        windings
            .iter()
            .map(|w| (w * 100.0).round() / 100.0)
            .collect::<Vec<_>>()
    );
    eprintln!("{row}");
    assert!(
        matching.is_some(),
        "{}: no parameterization winds like the outer loop ({}) or the inner loop ({}): {row}",
        case.name,
        case.outer,
        case.inner
    );
    row
}

const SORT_ARGS: [(&str, [&str; 5]); 3] = [
    ("bubble sort, ascending", ["1", "2", "3", "4", "5"]),
    ("bubble sort, descending", ["5", "4", "3", "2", "1"]),
    ("bubble sort, shuffled", ["3", "5", "1", "4", "2"]),
];

#[test]
fn bubble_sort_classes_match_its_loops() {
    for (name, args) in &SORT_ARGS {
        run(&Case {
            name,
            source: BUBBLE_SORT,
            args,
            function: "bubble_sort",
            outer: 4.0,
            inner: 10.0,
        });
    }
}

#[test]
fn matmul_classes_match_its_loops() {
    run(&Case {
        name: "matmul 8x8, standard",
        source: MATMUL,
        args: &[],
        function: "matmul",
        outer: 8.0,
        inner: 512.0,
    });
}

#[test]
fn blocked_matmul_classes_match_its_loops() {
    run(&Case {
        name: "matmul 8x8, blocked",
        source: MATMUL,
        args: &["blocked"],
        function: "matmul_blocked",
        outer: 2.0,
        inner: 512.0,
    });
}
