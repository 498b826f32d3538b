//! The paper's setting (Choudhury et al., Table 1 and Figure 7): programs compiled with gcc and
//! traced with valgrind lackey at test time, the analysis restricted to the sorting/multiplying
//! function. For at least one of the top parameterizations, the winding number of θ along the
//! trace must equal the iteration count of the outer or of the inner loop (±1).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use memscape_cycles::circular::winding_number;
use memscape_cycles::records::RecordFilter;
use memscape_cycles::records::select_records;
use memscape_cycles::symbolize::LoadBase;
use memscape_cycles::{CyclesOptions, TraceRecord, analyze_records, read_trace};

struct Case {
    name: &'static str,
    source: &'static str,
    args: &'static [&'static str],
    function: &'static str,
    /// Source text of the outer loop's header and of the innermost loop's body (their line
    /// numbers inside `function` are looked up in `source`).
    outer_header: &'static str,
    inner_body: &'static str,
    /// Analyze at most this many records of the function (the paper's 460–2000 per analysis).
    max_records: usize,
}

/// 1-based line of the first line containing `needle` after the definition of `function`.
fn line_in_function(source: &str, function: &str, needle: &str) -> u32 {
    let lines: Vec<&str> = source.lines().collect();
    let def = lines
        .iter()
        .position(|l| l.contains(&format!(" {function}(")) && l.contains('{'))
        .unwrap();
    let k = (def..lines.len())
        .find(|&k| lines[k].contains(needle))
        .unwrap();
    k as u32 + 1
}

/// Maximal runs of consecutive records on `line`: how often control entered that line.
fn runs_on_line(records: &[TraceRecord], line: u32) -> usize {
    let mut runs = 0;
    let mut inside = false;
    for r in records {
        let here = r.line == Some(line);
        if here && !inside {
            runs += 1;
        }
        inside = here;
    }
    runs
}

/// Runs one program and returns its Table-1 row; panics if no class matches a loop.
fn run(case: &Case) -> String {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile_c(dir.path(), "prog", case.source);
    let log = lackey_trace(dir.path(), &exe, case.args, case.name);
    let trace = read_trace(&log, None).unwrap();
    let filter = RecordFilter {
        functions: vec![case.function.to_owned()],
        ..RecordFilter::default()
    };
    let mut records = select_records(&trace, Some(&exe), LoadBase::Detect, &filter).unwrap();
    let in_function = records.len();
    records.truncate(case.max_records);
    assert!(
        records
            .iter()
            .all(|r| r.function.as_deref() == Some(case.function)),
        "{}: the filter kept records of other functions",
        case.name
    );
    assert!(records.iter().all(|r| r.line.is_some() && r.file.is_some()));
    // Loop iteration counts from the source lines of the records themselves: every outer
    // iteration re-enters the header (plus the final failing test), every inner iteration the
    // body.
    let outer_line = line_in_function(case.source, case.function, case.outer_header);
    let inner_line = line_in_function(case.source, case.function, case.inner_body);
    let outer = runs_on_line(&records, outer_line).saturating_sub(1) as f64;
    let inner = runs_on_line(&records, inner_line) as f64;
    assert!(
        outer >= 1.0 && inner > outer,
        "{}: outer {outer}, inner {inner}",
        case.name
    );

    let options = CyclesOptions {
        top: 10,
        ..CyclesOptions::default()
    };
    let report = analyze_records(records, &options).unwrap();
    let windings: Vec<f64> = report
        .parameterizations
        .iter()
        .map(|p| {
            assert_eq!(p.theta.len(), report.records.len());
            assert!(p.theta.iter().all(|t| (0.0..1.0).contains(t)));
            winding_number(&p.theta).abs()
        })
        .collect();
    // A loop of fewer than 3 iterations is no evidence (±1 would admit a class that does not
    // wind at all).
    let loops: Vec<f64> = [outer, inner].into_iter().filter(|&c| c >= 3.0).collect();
    assert!(
        !loops.is_empty(),
        "{}: no loop with 3 iterations in range",
        case.name
    );
    let matching = report
        .parameterizations
        .iter()
        .zip(&windings)
        .find(|(_, w)| loops.iter().any(|c| (*w - c).abs() <= 1.0));
    let row = format!(
        "| {} | {in_function} | {} | {} | {} | {outer} / {inner} | {} | {} | {:?} |",
        case.name,
        report.records.len(),
        report.unique_windows,
        report.barcode.len(),
        report.parameterizations.len(),
        matching.map_or("none".to_owned(), |(p, _)| p.rank.to_string()),
        windings
            .iter()
            .map(|w| (w * 100.0).round() / 100.0)
            .collect::<Vec<_>>()
    );
    eprintln!("{row}");
    assert!(
        matching.is_some(),
        "{}: no parameterization winds like the outer loop ({outer}) or the inner loop ({inner}): {row}",
        case.name,
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
            outer_header: "for (int i = 0;",
            inner_body: "if (a[j] > a[j + 1])",
            max_records: 2000,
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
        outer_header: "for (int i = 0;",
        inner_body: "c[i][j] += a[i][k] * b[k][j];",
        max_records: 1200,
    });
}

#[test]
fn blocked_matmul_classes_match_its_loops() {
    run(&Case {
        name: "matmul 8x8, blocked",
        source: MATMUL,
        args: &["blocked"],
        function: "matmul_blocked",
        outer_header: "for (int i = ii;",
        inner_body: "c[i][j] += a[i][k] * b[k][j];",
        max_records: 1200,
    });
}
