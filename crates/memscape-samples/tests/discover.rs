//! Finding datasets in directories: MemAxes' own layout (`DIR/data/samples.out`,
//! `DIR/hardware.xml`, `DIR/src/`) built from the LULESH run MemAxes ships, the flat layout of
//! `../shared/data/memaxes/lulesh`, a parent of dataset directories, and files opened together.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use memscape_samples::discover::{FileKind, file_kind};
use memscape_samples::{ImportOptions, Session, find_datasets, pair_files};

fn lulesh() -> PathBuf {
    memscape_topology::shared_data_dir().join("memaxes/lulesh")
}

/// MemAxes' `example_data/lulesh/` layout in a temporary directory.
fn memaxes_layout(root: &Path) -> PathBuf {
    let dir = root.join("lulesh");
    std::fs::create_dir_all(dir.join("data")).unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::copy(lulesh().join("samples.out"), dir.join("data/samples.out")).unwrap();
    std::fs::copy(lulesh().join("hardware.xml"), dir.join("hardware.xml")).unwrap();
    std::fs::copy(
        lulesh().join("LULESH_OMP.cc"),
        dir.join("src/LULESH_OMP.cc"),
    )
    .unwrap();
    // Something that is neither: skipped.
    std::fs::write(dir.join("data/README"), "notes\n").unwrap();
    dir
}

#[test]
fn memaxes_layout_pairs_samples_hardware_and_sources() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = memaxes_layout(tmp.path());
    let found = find_datasets(&dir).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    let d = &found[0];
    assert_eq!(d.samples, dir.join("data/samples.out"));
    assert_eq!(
        d.hardware.as_deref(),
        Some(dir.join("hardware.xml").as_path())
    );
    assert_eq!(d.sources.as_deref(), Some(dir.join("src").as_path()));
    // The pair opens on the machine the samples came from (32 cpus), not this one.
    let session =
        Session::open(&d.samples, d.hardware.as_deref(), ImportOptions::default()).unwrap();
    let rows = std::fs::read_to_string(&d.samples).unwrap().lines().count() - 1;
    assert_eq!(session.samples.len(), rows);
    let pus = session
        .topology
        .nodes()
        .iter()
        .filter(|n| n.kind == memscape_topology::ResourceKind::Pu)
        .count();
    assert_eq!(pus, 32);

    // A parent of dataset directories finds the one below it.
    let above = find_datasets(tmp.path()).unwrap();
    assert_eq!(above, found);
}

#[test]
fn flat_directories_and_files_opened_together() {
    let found = find_datasets(&lulesh()).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(
        found[0].hardware.as_deref(),
        Some(lulesh().join("hardware.xml").as_path())
    );
    assert_eq!(file_kind(&lulesh().join("LULESH_OMP.cc")), FileKind::Other);

    // Samples and one topology opened together: paired, whatever their directories.
    let tmp = tempfile::tempdir().unwrap();
    let samples = tmp.path().join("run.csv");
    std::fs::copy(lulesh().join("samples.out"), &samples).unwrap();
    let topo = tmp.path().join("machine").join("hw.xml");
    std::fs::create_dir_all(topo.parent().unwrap()).unwrap();
    std::fs::copy(lulesh().join("hardware.xml"), &topo).unwrap();
    let other = lulesh().join("LULESH_OMP.cc");
    let (datasets, others) = pair_files(&[samples.clone(), topo.clone(), other.clone()]);
    assert_eq!(datasets.len(), 1);
    assert_eq!(datasets[0].samples, samples);
    assert_eq!(datasets[0].hardware.as_deref(), Some(topo.as_path()));
    assert_eq!(others, [other]);

    // Compressed files are recognised from their first decompressed bytes.
    let topo_zst = tmp.path().join("hw.xml.zst");
    let xml = std::fs::read(lulesh().join("hardware.xml")).unwrap();
    std::fs::write(&topo_zst, zstd::encode_all(xml.as_slice(), 3).unwrap()).unwrap();
    assert_eq!(file_kind(&topo_zst), FileKind::Topology);
    let samples_zst = tmp.path().join("run.csv.zst");
    let csv = std::fs::read(&samples).unwrap();
    std::fs::write(&samples_zst, zstd::encode_all(csv.as_slice(), 3).unwrap()).unwrap();
    assert_eq!(file_kind(&samples_zst), FileKind::Samples);
    // Empty and missing files are neither.
    let empty = tmp.path().join("empty");
    std::fs::write(&empty, b"").unwrap();
    assert_eq!(file_kind(&empty), FileKind::Other);
    assert_eq!(file_kind(&tmp.path().join("missing")), FileKind::Other);

    // Not a directory: a clear error naming it.
    let e = find_datasets(&samples).unwrap_err().to_string();
    assert!(e.contains("run.csv"), "{e}");
}
