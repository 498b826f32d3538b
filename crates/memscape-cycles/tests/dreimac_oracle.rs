//! Circular coordinates compared with DREiMac (PyPI `dreimac`) on a noisy circle: circular
//! correlation at least 0.99 up to rotation and reflection.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Write;

use common::*;
use memscape_cycles::circular::{circular_coordinates, winding_number};
use memscape_cycles::{LowerDistanceMatrix, RipsOptions, rips_persistence};

const DREIMAC_SCRIPT: &str = r#"
import sys, json
try:
    import numpy as np
    from dreimac import CircularCoords
except ImportError as e:
    sys.stderr.write("MISSING-MODULE: %s (pip package `dreimac`)\n" % e)
    sys.exit(3)
X = np.loadtxt(sys.argv[1], ndmin=2)
cc = CircularCoords(X, n_landmarks=X.shape[0], prime=47)
theta = cc.get_coordinates(perc=0.5, cocycle_idx=0)
print(json.dumps([float(t) / (2 * np.pi) for t in theta]))
"#;

/// |mean exp(2πi(a − s·b))| maximized over the reflection s = ±1 (rotation drops out).
fn circular_correlation(a: &[f64], b: &[f64]) -> f64 {
    [1.0, -1.0]
        .iter()
        .map(|s| {
            let (mut re, mut im) = (0.0, 0.0);
            for (x, y) in a.iter().zip(b) {
                let phase = std::f64::consts::TAU * (x - s * y);
                re += phase.cos();
                im += phase.sin();
            }
            (re * re + im * im).sqrt() / a.len() as f64
        })
        .fold(0.0, f64::max)
}

#[test]
fn noisy_circle_matches_dreimac() {
    let n = 200;
    let mut seed = 5u64;
    let mut next = || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let points: Vec<Vec<f64>> = (0..n)
        .map(|_| {
            let t = std::f64::consts::TAU * next();
            let r = 1.0 + 0.1 * (next() - 0.5);
            vec![r * t.cos() + 0.05 * (next() - 0.5), r * t.sin()]
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("circle.txt");
    let mut f = std::fs::File::create(&path).unwrap();
    for p in &points {
        writeln!(f, "{:.17} {:.17}", p[0], p[1]).unwrap();
    }
    drop(f);

    let matrix = LowerDistanceMatrix::from_points(&points).unwrap();
    let rips = rips_persistence(
        &matrix,
        &RipsOptions {
            cocycles: true,
            ..RipsOptions::default()
        },
    )
    .unwrap();
    let best = rips
        .cocycles
        .iter()
        .max_by(|a, b| a.bar.persistence().total_cmp(&b.bar.persistence()))
        .unwrap();
    let eps = (best.bar.0 + best.bar.1.unwrap()) / 2.0;
    let ours = circular_coordinates(&matrix, best, 47, eps);
    assert!(ours.lift_is_cocycle);

    // Going once around the circle by angle winds θ once.
    let mut by_angle: Vec<usize> = (0..n).collect();
    by_angle.sort_by(|&a, &b| {
        points[a][1]
            .atan2(points[a][0])
            .total_cmp(&points[b][1].atan2(points[b][0]))
    });
    let mut around: Vec<f64> = by_angle.iter().map(|&k| ours.theta[k]).collect();
    around.push(around[0]);
    assert!((winding_number(&around).abs() - 1.0).abs() < 1e-6);

    let json = python(DREIMAC_SCRIPT, &[path.to_str().unwrap()]);
    let theirs: Vec<f64> = serde_json::from_str(&json).unwrap();
    assert_eq!(theirs.len(), n);
    let correlation = circular_correlation(&ours.theta, &theirs);
    assert!(
        correlation >= 0.99,
        "circular correlation with DREiMac {correlation}"
    );
    // And the measure is not vacuous: a scrambled coordinate does not correlate.
    let scrambled: Vec<f64> = (0..n).map(|k| theirs[(k * 7 + 3) % n]).collect();
    assert!(circular_correlation(&ours.theta, &scrambled) < 0.5);
}
