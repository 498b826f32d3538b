//! Barcodes compared with ripser.py (PyPI `ripser`) on real and random inputs: identical
//! multisets of (birth, death) pairs up to 1e-6.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Write;

use common::*;
use memscape_cycles::levenshtein::{make_windows, window_distances};
use memscape_cycles::records::{RecordFilter, SymbolMode, record_symbols, select_records};
use memscape_cycles::symbolize::LoadBase;
use memscape_cycles::{
    LowerDistanceMatrix, MatrixFormat, RipsOptions, read_matrix, read_trace, rips_persistence,
};

fn compare_file(name: &str, max_dim: usize, modulus: u16) {
    let path = shared_data().join("ripser").join(name);
    let matrix = read_matrix(&path, MatrixFormat::LowerDistance).unwrap();
    let ours = rips_persistence(
        &matrix,
        &RipsOptions {
            max_dim,
            modulus,
            ..RipsOptions::default()
        },
    )
    .unwrap();
    let theirs = ripser_oracle(&path, "lower", max_dim, modulus);
    assert_same_barcodes(&as_pairs(&ours.barcode), &theirs, 1e-6, name);
}

#[test]
fn random16_matches_ripser_in_dims_0_to_2() {
    compare_file("random16.lower_distance_matrix", 2, 2);
    compare_file("random16.lower_distance_matrix", 2, 47);
}

#[test]
fn sphere_3_192_matches_ripser_in_dims_0_and_1() {
    compare_file("sphere_3_192.lower_distance_matrix", 1, 47);
}

#[test]
fn sphere_3_192_matches_ripser_in_dim_2() {
    compare_file("sphere_3_192.lower_distance_matrix", 2, 2);
}

/// A tiny deterministic generator, so failures reproduce.
fn lcg(seed: &mut u64) -> f64 {
    *seed = seed
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    (*seed >> 11) as f64 / (1u64 << 53) as f64
}

#[test]
fn random_point_clouds_match_ripser() {
    let dir = tempfile::tempdir().unwrap();
    for (case, (n, d)) in [(60, 2), (80, 3), (50, 4)].into_iter().enumerate() {
        let mut seed = 17 + case as u64;
        let points: Vec<Vec<f64>> = (0..n)
            .map(|_| (0..d).map(|_| lcg(&mut seed)).collect())
            .collect();
        let path = dir.path().join(format!("cloud{case}.txt"));
        let mut f = std::fs::File::create(&path).unwrap();
        for p in &points {
            let line: Vec<String> = p.iter().map(|x| format!("{x:.17}")).collect();
            writeln!(f, "{}", line.join(" ")).unwrap();
        }
        drop(f);
        let ours = rips_persistence(
            &read_matrix(&path, MatrixFormat::PointCloud).unwrap(),
            &RipsOptions {
                max_dim: 2,
                modulus: 3,
                ..RipsOptions::default()
            },
        )
        .unwrap();
        let theirs = ripser_oracle(&path, "points", 2, 3);
        assert_same_barcodes(
            &as_pairs(&ours.barcode),
            &theirs,
            1e-6,
            &format!("cloud {case}"),
        );
        // Same points through the in-memory constructor.
        let direct = LowerDistanceMatrix::from_points(&points).unwrap();
        let again = rips_persistence(
            &direct,
            &RipsOptions {
                max_dim: 2,
                modulus: 3,
                ..RipsOptions::default()
            },
        )
        .unwrap();
        assert_eq!(again.barcode, ours.barcode);
    }
}

#[test]
fn levenshtein_matrices_of_a_real_lackey_trace_match_ripser() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile_c(dir.path(), "bubble", BUBBLE_SORT);
    let log = lackey_trace(dir.path(), &exe, &["9", "3", "7", "1", "5"], "bubble");
    let trace = read_trace(&log, None).unwrap();
    let filter = RecordFilter {
        functions: vec!["bubble_sort".into()],
        ..RecordFilter::default()
    };
    let records = select_records(&trace, Some(&exe), LoadBase::Detect, &filter).unwrap();
    assert!(
        records.len() > 50,
        "{} records in bubble_sort",
        records.len()
    );
    // Also a slice of the whole process (mostly the dynamic loader), a different texture.
    let loader_part: Vec<_> = select_records(
        &trace,
        None,
        LoadBase::Detect,
        &RecordFilter {
            record_range: Some(2000..2600),
            ..RecordFilter::default()
        },
    )
    .unwrap();
    for (what, recs, mode) in [
        ("bubble_sort addresses", &records, SymbolMode::Address),
        (
            "bubble_sort cache lines",
            &records,
            SymbolMode::CacheLine(16),
        ),
        ("loader slice", &loader_part, SymbolMode::AddressKind),
    ] {
        let (symbols, alphabet) = record_symbols(recs, mode).unwrap();
        let windows = make_windows(&symbols, 10).unwrap();
        let dist = window_distances(&windows, alphabet).unwrap();
        let path = dir.path().join("lev.lower_distance_matrix");
        let text: Vec<String> = dist.entries().iter().map(u8::to_string).collect();
        std::fs::write(&path, text.join(",")).unwrap();
        let ours = rips_persistence(&dist, &RipsOptions::default()).unwrap();
        // The byte matrix and its f32 copy (sorted-edge path) must agree exactly.
        let as_f32 = rips_persistence(&dist.to_f32(), &RipsOptions::default()).unwrap();
        assert_eq!(ours.barcode, as_f32.barcode, "{what}");
        let theirs = ripser_oracle(&path, "lower", 1, 47);
        assert_same_barcodes(&as_pairs(&ours.barcode), &theirs, 1e-6, what);
        // Below the enclosing radius (the neighbour-list path of the engine, infinite bars).
        for threshold in [2.0f32, 4.0] {
            let options = RipsOptions {
                threshold: Some(threshold),
                ..RipsOptions::default()
            };
            let ours = rips_persistence(&dist, &options).unwrap();
            let theirs = ripser_oracle_thresholded(&path, "lower", 1, 47, f64::from(threshold));
            assert_same_barcodes(
                &as_pairs(&ours.barcode),
                &theirs,
                1e-6,
                &format!("{what}, threshold {threshold}"),
            );
        }
    }
}
