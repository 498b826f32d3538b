//! What a directory given to `view`, `render` or `info` holds: MemAxes' layout first
//! (`DIR/data/samples.*` with `DIR/hardware.xml` and `DIR/src/`, found by memscape-samples'
//! `find_datasets`), a Parquet dataset directory (`export --to parquet`), else the files in it
//! that memscape can load (recognised by their first bytes, as `dataset::load` does) and the
//! Parquet datasets among its subdirectories.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use crate::error::{Context as _, Result};

/// The datasets of a directory, in a stable order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    /// Files (or Parquet dataset directories) to load, each on its own.
    pub files: Vec<PathBuf>,
    /// Samples files with the topology they map onto (load both; pair them).
    pub pairs: Vec<(PathBuf, PathBuf)>,
}

impl Found {
    /// Every path to load: the pairs' samples and topologies first, then the other files.
    pub fn all(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = Vec::new();
        for (s, h) in &self.pairs {
            out.push(s.clone());
            if !out.contains(h) {
                out.push(h.clone());
            }
        }
        out.extend(self.files.iter().cloned());
        out
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.pairs.is_empty()
    }
}

/// The datasets of `dir` (see the module documentation).
pub fn datasets_in(dir: &Path) -> Result<Found> {
    if memscape_parquet::dataset_kind(dir).is_some() {
        return Ok(Found {
            files: vec![dir.to_owned()],
            pairs: Vec::new(),
        });
    }
    let mut found = Found::default();
    let samples = memscape_samples::find_datasets(dir)
        .with_context(|| format!("{}: cannot list", dir.display()))?;
    if !samples.is_empty() {
        for s in samples {
            match s.hardware {
                Some(h) => found.pairs.push((s.samples, h)),
                None => found.files.push(s.samples),
            }
        }
        return Ok(found);
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("{}: cannot list", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            if memscape_parquet::dataset_kind(&path).is_some() {
                found.files.push(path);
            }
        } else if is_loadable(&path) {
            found.files.push(path);
        }
    }
    crate::ensure!(
        !found.is_empty(),
        "{}: no dataset found (looked for MemAxes' data/samples.* with hardware.xml, a Parquet dataset from `export --to parquet`, and files memscape reads)",
        dir.display()
    );
    Ok(found)
}

/// Bytes read from the start of a file to recognise it.
const HEAD: u64 = 64 * 1024;

/// Whether the first bytes of `path` (decompressed) are a format memscape reads.
pub fn is_loadable(path: &Path) -> bool {
    let Some(head) = head_of(path) else {
        return false;
    };
    if head.is_empty() {
        return false;
    }
    match crate::dataset::sniff_head(&head) {
        Some(_) => true,
        None => memscape_trace::detect_format(&path.display().to_string(), &head).is_ok(),
    }
}

fn head_of(path: &Path) -> Option<Vec<u8>> {
    let file = std::fs::File::open(path).ok()?;
    let mut raw = Vec::new();
    file.take(HEAD).read_to_end(&mut raw).ok()?;
    let compression = memscape_io::Compression::sniff(&raw);
    if compression == memscape_io::Compression::None {
        return Some(raw);
    }
    let file = std::fs::File::open(path).ok()?;
    let reader = memscape_io::decoder(compression, std::io::BufReader::new(file)).ok()?;
    let mut out = Vec::new();
    // A cut stream still gives what came before.
    let _ = reader.take(HEAD).read_to_end(&mut out);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/data")
            .join(rel)
    }

    #[test]
    fn memaxes_layout_pairs_samples_with_their_hardware() {
        // The shared copy: samples and hardware.xml side by side.
        let dir = shared("memaxes/lulesh");
        let found = datasets_in(&dir).unwrap();
        assert_eq!(
            found.pairs,
            [(dir.join("samples.out"), dir.join("hardware.xml"))]
        );
        // MemAxes' own layout: DIR/data/samples.*, DIR/hardware.xml, DIR/src/.
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("data")).unwrap();
        std::fs::create_dir_all(tmp.path().join("src")).unwrap();
        std::fs::copy(dir.join("samples.out"), tmp.path().join("data/samples.out")).unwrap();
        std::fs::copy(dir.join("hardware.xml"), tmp.path().join("hardware.xml")).unwrap();
        let found = datasets_in(tmp.path()).unwrap();
        assert_eq!(
            found.pairs,
            [(
                tmp.path().join("data/samples.out"),
                tmp.path().join("hardware.xml")
            )]
        );
        assert_eq!(
            found.all(),
            [
                tmp.path().join("data/samples.out"),
                tmp.path().join("hardware.xml")
            ]
        );
    }

    #[test]
    fn other_directories_list_the_files_memscape_reads() {
        let found = datasets_in(&shared("massif")).unwrap();
        assert!(found.pairs.is_empty());
        let names: Vec<String> = found
            .files
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert!(names.contains(&"massif.out.kate".to_owned()), "{names:?}");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "nothing to see").unwrap();
        assert!(datasets_in(dir.path()).is_err());
    }
}
