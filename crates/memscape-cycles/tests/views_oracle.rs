//! The data of the cycle views: classical MDS compared with numpy (`numpy.linalg.eigh` of the
//! double-centred squared distances) on Levenshtein matrices of real lackey traces and on a
//! point cloud, and the colour tables on a symbolized trace.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::*;
use memscape_cycles::levenshtein::{make_windows, window_distances};
use memscape_cycles::records::{RecordFilter, SymbolMode, record_symbols, select_records};
use memscape_cycles::symbolize::LoadBase;
use memscape_cycles::{
    CyclesOptions, DistanceMatrix, LowerDistanceMatrix, analyze_records, classical_mds, read_trace,
    view_tables, window_projection,
};

/// The oracle interpreter: the repository's oracle venv when there is one, else `python3`.
fn oracle_python() -> PathBuf {
    let venv = crate_dir().join("../../target/oracles/bin/python3");
    if venv.exists() {
        venv
    } else {
        PathBuf::from("python3")
    }
}

const NUMPY_MDS: &str = r#"
import sys, json
try:
    import numpy as np
except ImportError as e:
    sys.stderr.write("MISSING-MODULE: %s (pip package `numpy`)\n" % e)
    sys.exit(3)
vals = np.array([float(t) for t in open(sys.argv[1]).read().split(",")])
n = int(round((1 + (1 + 8 * len(vals)) ** 0.5) / 2))
D = np.zeros((n, n)); D[np.tril_indices(n, -1)] = vals; D = D + D.T
J = np.eye(n) - np.ones((n, n)) / n
B = -0.5 * J @ (D * D) @ J
w, V = np.linalg.eigh(B)
order = np.argsort(w)[::-1][:3]
X = V[:, order[:2]] * np.sqrt(np.maximum(w[order[:2]], 0))
print(json.dumps({"eigenvalues": w[order].tolist(), "points": X.tolist()}))
"#;

/// numpy's classical MDS of a lower-triangular matrix: the top three eigenvalues and the
/// 2-D points.
fn numpy_mds(dist: &impl DistanceMatrix) -> (Vec<f64>, Vec<[f64; 2]>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.txt");
    let n = dist.size();
    let mut text = Vec::new();
    for i in 0..n {
        for j in 0..i {
            text.push(dist.distance(i, j).to_string());
        }
    }
    std::fs::write(&path, text.join(",")).unwrap();
    let out = Command::new(oracle_python())
        .arg("-c")
        .arg(NUMPY_MDS)
        .arg(&path)
        .output()
        .expect("python3 is needed for the numpy oracle (apt-get install -y python3)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("MISSING-MODULE") {
        panic!("oracle missing: {stderr}; install it with `pip install numpy`");
    }
    assert!(out.status.success(), "numpy oracle failed: {stderr}");
    #[derive(serde::Deserialize)]
    struct Answer {
        eigenvalues: Vec<f64>,
        points: Vec<[f64; 2]>,
    }
    let answer: Answer = serde_json::from_slice(&out.stdout).unwrap();
    (answer.eigenvalues, answer.points)
}

/// Compares two embeddings up to a reflection of each axis: pairwise distances, and the
/// coordinates after aligning signs (when the two eigenvalues are apart, so that the axes are
/// defined).
fn assert_same_embedding(ours: &[[f64; 2]], theirs: &[[f64; 2]], eigenvalues: &[f64], what: &str) {
    assert_eq!(ours.len(), theirs.len(), "{what}");
    let scale = theirs
        .iter()
        .flat_map(|p| p.iter())
        .fold(0.0f64, |a, v| a.max(v.abs()));
    assert!(scale > 0.0, "{what}: degenerate embedding");
    let tol = 1e-6 * scale;
    let n = ours.len();
    let step = (n / 150).max(1);
    for i in (0..n).step_by(step) {
        for j in (0..i).step_by(step) {
            let d =
                |p: &[[f64; 2]]| ((p[i][0] - p[j][0]).powi(2) + (p[i][1] - p[j][1]).powi(2)).sqrt();
            assert!(
                (d(ours) - d(theirs)).abs() <= tol,
                "{what}: distance {i}-{j}: {} here, {} in numpy",
                d(ours),
                d(theirs)
            );
        }
    }
    let gap = |a: f64, b: f64| (a - b).abs() > 1e-6 * a.abs().max(1.0);
    if gap(eigenvalues[0], eigenvalues[1]) && gap(eigenvalues[1], eigenvalues[2]) {
        for axis in 0..2 {
            let dotp: f64 = ours
                .iter()
                .zip(theirs)
                .map(|(a, b)| a[axis] * b[axis])
                .sum();
            let sign = dotp.signum();
            for (a, b) in ours.iter().zip(theirs) {
                assert!(
                    (a[axis] * sign - b[axis]).abs() <= tol,
                    "{what}: axis {axis}: {} here, {} in numpy",
                    a[axis] * sign,
                    b[axis]
                );
            }
        }
    }
}

#[test]
fn classical_mds_of_real_levenshtein_matrices_matches_numpy() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile_c(dir.path(), "bubble", BUBBLE_SORT);
    let log = lackey_trace(dir.path(), &exe, &["9", "3", "7", "1", "5"], "bubble");
    let trace = read_trace(&log, None).unwrap();
    let in_function = select_records(
        &trace,
        Some(&exe),
        LoadBase::Detect,
        &RecordFilter {
            functions: vec!["bubble_sort".into()],
            ..RecordFilter::default()
        },
    )
    .unwrap();
    let loader_part = select_records(
        &trace,
        None,
        LoadBase::Detect,
        &RecordFilter {
            record_range: Some(3000..4000),
            ..RecordFilter::default()
        },
    )
    .unwrap();
    for (what, records) in [
        ("bubble_sort", &in_function),
        ("loader slice", &loader_part),
    ] {
        let (symbols, alphabet) = record_symbols(records, SymbolMode::Address).unwrap();
        let windows = make_windows(&symbols, 10).unwrap();
        let dist = window_distances(&windows, alphabet).unwrap();
        assert!(dist.size() > 50, "{what}: {} windows", dist.size());
        let ours = classical_mds(&dist, 2).unwrap();
        let (eigenvalues, theirs) = numpy_mds(&dist);
        assert_same_embedding(&ours, &theirs, &eigenvalues, what);
        // Deterministic: the same bits again.
        assert_eq!(classical_mds(&dist, 2).unwrap(), ours, "{what}");
    }
}

#[test]
fn classical_mds_of_a_noisy_circle_in_3d_matches_numpy() {
    let mut seed = 99u64;
    let mut next = || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let points: Vec<Vec<f64>> = (0..300)
        .map(|k| {
            let a = std::f64::consts::TAU * k as f64 / 300.0;
            vec![
                2.0 * a.cos() + 0.1 * next(),
                a.sin() + 0.1 * next(),
                0.3 * next(),
            ]
        })
        .collect();
    let dist = LowerDistanceMatrix::from_points(&points).unwrap();
    let ours = classical_mds(&dist, 2).unwrap();
    let (eigenvalues, theirs) = numpy_mds(&dist);
    assert_same_embedding(&ours, &theirs, &eigenvalues, "noisy circle");
}

#[test]
fn view_tables_of_a_symbolized_trace() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile_c(dir.path(), "bubble", BUBBLE_SORT);
    let log = lackey_trace(dir.path(), &exe, &["5", "4", "3", "2", "1"], "bubble");
    let trace = read_trace(&log, None).unwrap();
    // The whole process around main: loader records have no symbols, bubble_sort's do.
    let records = select_records(
        &trace,
        Some(&exe),
        LoadBase::Detect,
        &RecordFilter::default(),
    )
    .unwrap();
    let options = CyclesOptions::default();
    let tables = view_tables(&records, &options).unwrap();
    let w = options.window;
    let windows = &tables.windows;
    assert_eq!(windows.record_start.len(), records.len() - w + 1);
    for k in 0..windows.record_start.len() {
        assert_eq!(windows.record_start[k] as usize, k);
        assert_eq!(
            (windows.record_end[k] - windows.record_start[k]) as usize,
            w
        );
        assert_eq!(windows.line[k], tables.records.line[k]);
    }
    assert_eq!(tables.records.address.len(), records.len());
    for (k, r) in records.iter().enumerate() {
        assert_eq!(tables.records.address[k], r.address);
        assert_eq!(tables.records.kind[k], r.kind);
        let function = &tables.function_labels[tables.records.function[k] as usize];
        assert_eq!(function, r.function.as_deref().unwrap_or("??"));
        let file = &tables.file_labels[tables.records.file[k] as usize];
        assert_eq!(file, r.file.as_deref().unwrap_or("??"));
        let line = &tables.line_labels[tables.records.line[k] as usize];
        match (&r.function, &r.file, r.line) {
            (Some(f), Some(s), Some(l)) => assert_eq!(line, &format!("{f} {s}:{l}")),
            (None, None, None) => assert_eq!(line, "??"),
            _ => assert!(line.contains("??"), "{line}"),
        }
    }
    let sort_lines = tables
        .line_labels
        .iter()
        .filter(|l| l.starts_with("bubble_sort ") && l.contains("bubble.c:"))
        .count();
    assert!(sort_lines >= 3, "{:?}", tables.line_labels);
    assert!(tables.function_labels.iter().any(|f| f == "??"));
    assert!(tables.function_labels.iter().any(|f| f == "main"));
    // Window ids agree with the analysis (same merging of identical windows).
    let sort_only = select_records(
        &trace,
        Some(&exe),
        LoadBase::Detect,
        &RecordFilter {
            functions: vec!["bubble_sort".into()],
            ..RecordFilter::default()
        },
    )
    .unwrap();
    let report = analyze_records(sort_only.clone(), &options).unwrap();
    let tables = view_tables(&sort_only, &options).unwrap();
    assert_eq!(tables.windows.unique.len(), report.windows);
    let unique = *tables.windows.unique.iter().max().unwrap() as usize + 1;
    assert_eq!(unique, report.unique_windows);
    let projection = window_projection(&sort_only, &options).unwrap();
    assert_eq!(projection.len(), report.unique_windows);
    // Serializable as the lead dumps it.
    let json = serde_json::to_value(&tables).unwrap();
    assert!(json["windows"]["record_start"].is_array());
    assert!(json["records"]["kind"][0].is_string());
}
