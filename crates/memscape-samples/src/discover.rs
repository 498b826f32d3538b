//! Finding sample datasets in a directory and pairing samples with a topology.
//!
//! MemAxes' own layout comes first:
//!
//! ```text
//! DIR/data/samples.*     the samples (MemAxes/Mitos CSV, perf script text)
//! DIR/hardware.xml       the machine they came from (MemAxes XML or hwloc XML)
//! DIR/src/               the sources the samples' `source,line` refer to
//! ```
//!
//! then samples files directly in DIR (with a topology XML beside them), then each
//! subdirectory of DIR laid out either way (MemAxes' `example_data/lulesh/…`). Files are
//! recognised by content: a samples CSV's header names `latency` and `dataSource`
//! (`data_src`), `perf script` lines carry `|OP `, a topology is XML with `<topology` (hwloc)
//! or `<Hardware` (MemAxes).

use std::path::{Path, PathBuf};

use crate::SamplesError;

/// One samples file with the topology and sources that go with it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SamplesDataset {
    pub samples: PathBuf,
    /// The topology of the machine the samples came from, when the layout names one.
    pub hardware: Option<PathBuf>,
    /// The directory of the sources (`DIR/src`), when there is one.
    pub sources: Option<PathBuf>,
}

/// What the first bytes of a file say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Samples,
    Topology,
    Other,
}

/// Recognises samples and topology files from their first 4 KiB (decompressed).
pub fn file_kind(path: &Path) -> FileKind {
    let Some(bytes) = first_bytes(path, 4096) else {
        return FileKind::Other;
    };
    let head = String::from_utf8_lossy(&bytes);
    let first = head.lines().next().unwrap_or("");
    if head.contains("<topology") || head.contains("<Hardware") {
        FileKind::Topology
    } else if first.contains("latency")
        && (first.contains("dataSource") || first.contains("data_src"))
        || head.contains("|OP ")
    {
        FileKind::Samples
    } else {
        FileKind::Other
    }
}

/// The first `n` decompressed bytes of `path` (those before a broken stream; `None` when none),
/// read without reading the rest: `memscape view` asks this of every file it opens, and reading
/// a 1.5 GB trace whole for it held the window back (issue 25).
fn first_bytes(path: &Path, n: u64) -> Option<Vec<u8>> {
    use std::io::{BufRead, Read};
    let mut file = std::io::BufReader::new(std::fs::File::open(path).ok()?);
    let compression = memscape_io::Compression::sniff(file.fill_buf().ok()?);
    let mut head = Vec::new();
    let _ = memscape_io::decoder(compression, file)
        .ok()?
        .take(n)
        .read_to_end(&mut head);
    (!head.is_empty()).then_some(head)
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The topology of a directory: `hardware.xml` when it is one, else the only topology XML.
fn topology_in(dir: &Path) -> Option<PathBuf> {
    let named = dir.join("hardware.xml");
    if named.is_file() && file_kind(&named) == FileKind::Topology {
        return Some(named);
    }
    let mut found = files_in(dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "xml"))
        .filter(|p| file_kind(p) == FileKind::Topology);
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

fn datasets_here(dir: &Path) -> Vec<SamplesDataset> {
    let sources = Some(dir.join("src")).filter(|s| s.is_dir());
    let hardware = topology_in(dir);
    let data = dir.join("data");
    let mut out = Vec::new();
    if data.is_dir() {
        let hardware = hardware.clone().or_else(|| topology_in(&data));
        for p in files_in(&data) {
            if file_kind(&p) == FileKind::Samples {
                out.push(SamplesDataset {
                    samples: p,
                    hardware: hardware.clone(),
                    sources: sources.clone(),
                });
            }
        }
    }
    if out.is_empty() {
        for p in files_in(dir) {
            if file_kind(&p) == FileKind::Samples {
                out.push(SamplesDataset {
                    samples: p,
                    hardware: hardware.clone(),
                    sources: sources.clone(),
                });
            }
        }
    }
    out
}

/// The sample datasets of `dir` (see the module documentation for the layouts searched).
pub fn find_datasets(dir: &Path) -> Result<Vec<SamplesDataset>, SamplesError> {
    if !dir.is_dir() {
        return Err(SamplesError::Input(memscape_io::InputError::Io {
            path: dir.to_owned(),
            source: std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a directory"),
        }));
    }
    let mut out = datasets_here(dir);
    if out.is_empty() {
        let mut subdirs: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.is_dir())
                    .collect()
            })
            .unwrap_or_default();
        subdirs.sort();
        for sub in subdirs {
            out.extend(datasets_here(&sub));
        }
    }
    Ok(out)
}

/// Files opened together: the samples among them, each paired with the topology when exactly
/// one topology file was given (else with the one its own layout names, if any), and the files
/// that are neither.
pub fn pair_files(paths: &[PathBuf]) -> (Vec<SamplesDataset>, Vec<PathBuf>) {
    let kinds: Vec<FileKind> = paths.iter().map(|p| file_kind(p)).collect();
    let topologies: Vec<&PathBuf> = paths
        .iter()
        .zip(&kinds)
        .filter(|(_, k)| **k == FileKind::Topology)
        .map(|(p, _)| p)
        .collect();
    let given = (topologies.len() == 1).then(|| topologies[0].clone());
    let mut datasets = Vec::new();
    let mut others = Vec::new();
    for (p, kind) in paths.iter().zip(&kinds) {
        match kind {
            FileKind::Samples => datasets.push(SamplesDataset {
                samples: p.clone(),
                hardware: given.clone().or_else(|| crate::report::default_hardware(p)),
                sources: None,
            }),
            FileKind::Topology if given.is_some() => {}
            _ => others.push(p.clone()),
        }
    }
    (datasets, others)
}
