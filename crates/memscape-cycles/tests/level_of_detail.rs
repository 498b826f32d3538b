//! The level of detail (maxmin landmark windows) against the full analysis, on the demo trace
//! and on paper-style programs traced with valgrind lackey at test time: the H1 barcode's
//! bottleneck distance to the full one is measured and must stay within the bound 2r the
//! output states (r: the covering radius), and the landmarks keep the winding of the
//! loop-matching class, where sampling every k-th record loses it. Our bottleneck distance is
//! checked against persim's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use common::*;
use memscape_cycles::bottleneck::bottleneck_distance;
use memscape_cycles::circular::winding_number;
use memscape_cycles::records::{RecordFilter, select_records};
use memscape_cycles::symbolize::LoadBase;
use memscape_cycles::{
    Bar, CyclesOptions, CyclesReport, Detail, TraceRecord, analyze_records, read_trace,
};

fn demo_dir() -> PathBuf {
    crate_dir().join("../../assets/demo")
}

fn records_of(trace: &Path, binary: &Path, function: &str, max: usize) -> Vec<TraceRecord> {
    let trace = read_trace(trace, None).unwrap();
    let filter = RecordFilter {
        functions: vec![function.to_owned()],
        ..RecordFilter::default()
    };
    let mut records = select_records(&trace, Some(binary), LoadBase::Detect, &filter).unwrap();
    records.truncate(max);
    records
}

fn analyze(records: &[TraceRecord], detail: Detail, sample: usize) -> CyclesReport {
    let records: Vec<TraceRecord> = records.iter().step_by(sample).cloned().collect();
    analyze_records(
        records,
        &CyclesOptions {
            top: 5,
            detail,
            ..CyclesOptions::default()
        },
    )
    .unwrap()
}

/// |winding number| along the records of the most persistent class's θ.
fn top_winding(report: &CyclesReport) -> f64 {
    report
        .parameterizations
        .first()
        .map_or(0.0, |p| winding_number(&p.theta).abs())
}

const PERSIM_SCRIPT: &str = r#"
import sys, json
try:
    import numpy as np
    from persim import bottleneck
except ImportError as e:
    sys.stderr.write("MISSING-MODULE: %s (pip package `persim`, installed with ripser)\n" % e)
    sys.exit(3)
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
arr = lambda d: np.array(d, dtype=float).reshape(-1, 2)
print(bottleneck(arr(a), arr(b)))
"#;

fn persim_bottleneck(a: &[Bar], b: &[Bar]) -> f64 {
    let json = |bars: &[Bar]| {
        serde_json::to_string(
            &bars
                .iter()
                .map(|bar| [f64::from(bar.0), f64::from(bar.1.unwrap())])
                .collect::<Vec<_>>(),
        )
        .unwrap()
    };
    python(PERSIM_SCRIPT, &[&json(a), &json(b)])
        .trim()
        .parse()
        .unwrap()
}

/// One row of the table in benches/cycles/RESULTS.md; asserts the bound.
fn compare(name: &str, records: &[TraceRecord], fractions: &[usize]) -> Vec<(usize, f64, u32)> {
    let full = analyze(records, Detail::Full, 1);
    assert!(full.level_of_detail.is_none());
    let mut rows = Vec::new();
    for &divisor in fractions {
        let count = (full.unique_windows / divisor).max(8);
        let lod = analyze(records, Detail::Landmarks(count), 1);
        let detail = lod.level_of_detail.clone().unwrap();
        assert_eq!(detail.landmarks, count);
        assert_eq!(detail.bottleneck_bound, 2 * detail.covering_radius);
        let measured = bottleneck_distance(&full.barcode, &lod.barcode);
        eprintln!(
            "| {name} | {} | {} | {count} | {} | {} | {measured} | {:.2} | {:.2} |",
            records.len(),
            full.unique_windows,
            detail.covering_radius,
            detail.bottleneck_bound,
            top_winding(&full),
            top_winding(&lod)
        );
        assert!(
            measured <= f64::from(detail.bottleneck_bound),
            "{name}: {count} landmarks: bottleneck distance {measured} above the stated bound {}",
            detail.bottleneck_bound
        );
        rows.push((count, measured, detail.bottleneck_bound));
    }
    rows
}

#[test]
fn landmark_barcodes_of_the_paper_programs_stay_within_the_stated_bound() {
    let dir = tempfile::tempdir().unwrap();
    let sort = compile_c(dir.path(), "sort", BUBBLE_SORT);
    let log = lackey_trace(dir.path(), &sort, &["5", "4", "3", "2", "1"], "sort");
    let records = records_of(&log, &sort, "bubble_sort", 2000);
    let rows = compare("bubble sort, descending", &records, &[2, 4]);
    // Our bottleneck distance is persim's.
    let full = analyze(&records, Detail::Full, 1);
    let lod = analyze(&records, Detail::Landmarks(rows[1].0), 1);
    let ours = bottleneck_distance(&full.barcode, &lod.barcode);
    assert!((ours - persim_bottleneck(&full.barcode, &lod.barcode)).abs() < 1e-9);

    let matmul = compile_c(dir.path(), "matmul", MATMUL);
    let log = lackey_trace(dir.path(), &matmul, &[], "matmul");
    let records = records_of(&log, &matmul, "matmul", 1200);
    compare("matmul 8x8, first 1,200 records", &records, &[2, 4]);
}

#[test]
fn landmarks_keep_the_demo_spiral_winding_where_sampling_loses_it() {
    let demo = demo_dir();
    let records = records_of(
        &demo.join("sort.lackey.zst"),
        &demo.join("sort"),
        "insertion_sort",
        3000,
    );
    let rows = compare("demo insertion_sort, first 3,000 records", &records, &[4]);
    let full = analyze(&records, Detail::Full, 1);
    let lod = analyze(&records, Detail::Landmarks(rows[0].0), 1);
    let sampled = analyze(&records, Detail::Full, 20);
    let (w_full, w_lod, w_sampled) = (top_winding(&full), top_winding(&lod), top_winding(&sampled));
    eprintln!(
        "demo, most persistent class winds: full {w_full:.2}, {} landmarks {w_lod:.2}, every \
         20th record {w_sampled:.2}",
        rows[0].0
    );
    // The spiral keeps its turns with landmarks and collapses with sampling (issue #23).
    assert!(w_full >= 10.0, "the full analysis winds {w_full}");
    assert!(
        (w_lod - w_full).abs() <= 0.1 * w_full,
        "landmarks wind {w_lod}, full {w_full}"
    );
    assert!(w_sampled < 0.25 * w_full, "sampling winds {w_sampled}");
}
