//! The heap views' engine answers kept beside the dataset's level-of-detail index: in the
//! cache directory (`memscape_lod::sidecar::locations` of the dataset's manifest,
//! `manifest.HASH.engine.heap.json`), keyed by the manifest's size and modification time and
//! the host's block count exactly as the kept index is (`memscape`'s `app/engine_map.rs`), so
//! that a dataset reopened unchanged draws its heap panes without asking the engine again and
//! a changed one is computed anew.
//!
//! What is kept is the engine's part of [`Engine::heap_timeline`], the
//! [`GroupedInput`] of each (host, grouping, point count) asked (the slider's points, the
//! heap-size curve, the live bytes per group at each point): the metric and the suppressions
//! are applied natively on it (`memscape_heap::grouped_timeline`), so one kept answer serves
//! every metric and suppression setting.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use memscape_heap::{GroupKey, GroupedInput, GroupedSizes, HeapOptions, HeapTimeline, Metric};

use crate::{Dataset, Engine, Result};

/// The kept file's format: a file of another format is ignored and rewritten.
const FORMAT: u32 = 1;

/// The kept answers' file name after the manifest's in the cache directory.
pub const KEPT_SUFFIX: &str = "engine.heap.json";

/// The dataset a kept file was written from: its manifest's size and modification time and the
/// host's block count (as the kept level-of-detail index's `SourceId`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct KeptSource {
    len: u64,
    modified_ns: u64,
    blocks: u64,
}

/// One answer: the engine's input of one host's timeline grouped by `keys` with `points`.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct KeptAnswer {
    host: String,
    keys: Vec<GroupKey>,
    points: usize,
    input: GroupedInput,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct KeptFile {
    format: u32,
    source: KeptSource,
    answers: Vec<KeptAnswer>,
}

/// The heap timelines of one dataset, answered from the kept file when it belongs to the
/// dataset as it is now, else from the engine (the answer then added to the file).
#[derive(Debug)]
pub struct KeptHeap {
    /// Where the answers are kept (None: no cache directory; every answer from the engine).
    path: Option<PathBuf>,
    /// Times the engine was asked (tests and logs tell a kept answer by it).
    engine_asked: AtomicUsize,
    /// One writer of the file at a time within the process (panes ask from their threads).
    writing: Mutex<()>,
}

impl KeptHeap {
    /// Kept in the cache directory, beside the engine's level-of-detail index of `dataset`.
    pub fn in_cache_dir(dataset: &Dataset) -> Self {
        let manifest = dataset.dir.join(memscape_parquet::MANIFEST);
        // The cache directory's place only (the second location): a dataset's directory holds
        // its tables.
        let path = memscape_lod::sidecar::locations(&manifest, KEPT_SUFFIX)
            .into_iter()
            .nth(1);
        Self::at(path)
    }

    /// Kept at `path` (None: nowhere).
    pub fn at(path: Option<PathBuf>) -> Self {
        Self {
            path,
            engine_asked: AtomicUsize::new(0),
            writing: Mutex::new(()),
        }
    }

    /// Where the answers are kept.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// How many timelines this asked the engine for (0: every one was kept).
    pub fn engine_asked(&self) -> usize {
        self.engine_asked.load(Ordering::Relaxed)
    }

    /// [`Engine::heap_timeline`], its engine part taken from the kept file when that holds it
    /// for `dataset` as it is now.
    #[allow(clippy::too_many_arguments)]
    pub fn heap_timeline(
        &self,
        engine: &Engine,
        dataset: &Dataset,
        host: Option<&str>,
        keys: &[GroupKey],
        metric: Metric,
        point_count: usize,
        options: &HeapOptions,
    ) -> Result<(HeapTimeline, GroupedSizes)> {
        crate::heap::heap_timeline_with(dataset, host, keys, metric, options, |host, skeleton| {
            let source = source_of(dataset, host);
            let kept = self
                .read(source.as_ref())
                .and_then(|file| take_answer(file, host, keys, point_count));
            if let Some(input) = kept {
                tracing::info!(
                    "{}: heap timeline ({keys:?}, {point_count} points) kept from an earlier open",
                    dataset.dir.display()
                );
                return Ok(input);
            }
            self.engine_asked.fetch_add(1, Ordering::Relaxed);
            let input = engine.grouped_input(dataset, host, skeleton, keys, point_count)?;
            if let Some(source) = source {
                self.keep(source, host, keys, point_count, &input);
            }
            Ok(input)
        })
    }

    /// The kept file when it was written from `source` (the dataset as it is now) in this
    /// format.
    fn read(&self, source: Option<&KeptSource>) -> Option<KeptFile> {
        let path = self.path.as_ref()?;
        let bytes = std::fs::read(path).ok()?;
        let file: KeptFile = match serde_json::from_slice(&bytes) {
            Ok(file) => file,
            Err(e) => {
                tracing::warn!("{}: not read ({e}); computed again", path.display());
                return None;
            }
        };
        (file.format == FORMAT && Some(&file.source) == source).then_some(file)
    }

    /// Adds `input` to the kept file (a file of another dataset or format replaced), written
    /// beside it and renamed over it so that a reader never sees half a file.
    fn keep(
        &self,
        source: KeptSource,
        host: &str,
        keys: &[GroupKey],
        points: usize,
        input: &GroupedInput,
    ) {
        let Some(path) = self.path.as_ref() else {
            return;
        };
        let _one_writer = self.writing.lock();
        let mut file = self.read(Some(&source)).unwrap_or(KeptFile {
            format: FORMAT,
            source,
            answers: Vec::new(),
        });
        file.answers
            .retain(|a| !(a.host == host && a.keys == keys && a.points == points));
        file.answers.push(KeptAnswer {
            host: host.to_owned(),
            keys: keys.to_vec(),
            points,
            input: input.clone(),
        });
        let written = (|| -> std::io::Result<()> {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let part = path.with_extension(format!("json.{}.part", std::process::id()));
            std::fs::write(&part, serde_json::to_vec(&file)?)?;
            std::fs::rename(&part, path)
        })();
        match written {
            Ok(()) => tracing::info!("heap timeline kept at {}", path.display()),
            Err(e) => tracing::warn!("{}: heap timeline not kept: {e}", path.display()),
        }
    }
}

/// The identity of `dataset`'s manifest now with `host`'s block count (None when the manifest
/// cannot be read: nothing is kept then).
fn source_of(dataset: &Dataset, host: &str) -> Option<KeptSource> {
    let manifest = memscape_parquet::Manifest::read(&dataset.dir).ok()?;
    let blocks = manifest.hosts.get(host).map_or(0, |e| e.rows);
    let id = memscape_lod::SourceId::of_file(&dataset.dir.join(memscape_parquet::MANIFEST), 0, 0);
    Some(KeptSource {
        len: id.len,
        modified_ns: id.modified_ns,
        blocks,
    })
}

fn take_answer(
    file: KeptFile,
    host: &str,
    keys: &[GroupKey],
    points: usize,
) -> Option<GroupedInput> {
    file.answers
        .into_iter()
        .find(|a| a.host == host && a.keys == keys && a.points == points)
        .map(|a| a.input)
}
