//! Criterion benchmarks: Levenshtein all pairs, Rips persistence on Ripser's sphere and on
//! Levenshtein windows, classical MDS of the windows, and the whole cycles pipeline on the
//! committed demo trace.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use memscape_cycles::levenshtein::{make_windows, window_distances};
use memscape_cycles::records::{SymbolMode, record_symbols, select_records};
use memscape_cycles::symbolize::LoadBase;
use memscape_cycles::{MatrixFormat, RecordFilter, RipsOptions, read_matrix, read_trace};

fn benches(c: &mut Criterion) {
    // The CSV reference-trace importer on 1,000,000 synthetic rows.
    let csv: Vec<u8> = std::iter::once("ip,address,kind,size\n".to_owned())
        .chain((0..1_000_000u64).map(|i| {
            let kind = ["load", "store", "modify"][(i % 3) as usize];
            format!(
                "{:#x},{:#x},{kind},8\n",
                0x401000 + (i % 300) * 4,
                0x7ffd_0000 + (i % 4096) * 8
            )
        }))
        .collect::<String>()
        .into_bytes();
    let mut group = c.benchmark_group("import");
    group.sample_size(10);
    group.bench_function("parse reference CSV 1M rows", |b| {
        b.iter(|| memscape_cycles::trace::parse_trace("synthetic.csv", &csv, None).unwrap())
    });
    group.finish();

    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .canonicalize()
        .unwrap();
    let sphere = read_matrix(
        &root.join("../../../shared/data/ripser/sphere_3_192.lower_distance_matrix"),
        MatrixFormat::LowerDistance,
    )
    .unwrap();
    c.bench_function("rips H0-H1 sphere_3_192", |b| {
        b.iter(|| memscape_cycles::rips_persistence(&sphere, &RipsOptions::default()).unwrap())
    });
    c.bench_function("rips H0-H2 sphere_3_192 (Z/2)", |b| {
        b.iter(|| {
            memscape_cycles::rips_persistence(
                &sphere,
                &RipsOptions {
                    max_dim: 2,
                    modulus: 2,
                    ..RipsOptions::default()
                },
            )
            .unwrap()
        })
    });

    let trace = read_trace(&root.join("../../assets/demo/sort.lackey.zst"), None).unwrap();
    let records = select_records(
        &trace,
        None,
        LoadBase::Detect,
        &RecordFilter {
            record_range: Some(0..3000),
            ..RecordFilter::default()
        },
    )
    .unwrap();
    let (symbols, alphabet) = record_symbols(&records, SymbolMode::Address).unwrap();
    let windows = make_windows(&symbols, 10).unwrap();
    c.bench_function("levenshtein all pairs, demo trace 3000 records", |b| {
        b.iter(|| window_distances(&windows, alphabet).unwrap())
    });
    let dist = window_distances(&windows, alphabet).unwrap();
    c.bench_function("rips H0-H1 of those windows", |b| {
        b.iter(|| memscape_cycles::rips_persistence(&dist, &RipsOptions::default()).unwrap())
    });
    c.bench_function("classical MDS of those windows", |b| {
        b.iter(|| memscape_cycles::classical_mds(&dist, 2).unwrap())
    });
    let mut group = c.benchmark_group("pipeline");
    group.sample_size(10);
    group.bench_function("cycles end to end, demo trace 3000 records", |b| {
        b.iter(|| {
            memscape_cycles::analyze_records(
                records.clone(),
                &memscape_cycles::CyclesOptions::default(),
            )
            .unwrap()
        })
    });
    group.finish();
}

criterion_group!(cycles, benches);
criterion_main!(cycles);
