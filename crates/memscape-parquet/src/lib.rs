//! memscape's data as Apache Parquet datasets that pyarrow, DuckDB, Spark, Polars and
//! DataFusion read as they are: allocation traces (blocks, events, processes, threads, call
//! sites) and memory-access samples, partitioned Hive-style by host, process and time window,
//! with a JSON manifest (`memscape-dataset.json`) that memscape reads them back with.
//!
//! Layout (the schema of every table is in the README's "Parquet datasets" section and in
//! [`schema`]):
//!
//! ```text
//! DIR/memscape-dataset.json
//! DIR/processes/host=H/part-0.parquet
//! DIR/threads/host=H/part-0.parquet
//! DIR/call_sites/host=H/part-0.parquet
//! DIR/pools/host=H/part-0.parquet
//! DIR/blocks/host=H/process=P/window=W/part-0.parquet   (W: alloc time / window_ns)
//! DIR/events/host=H/process=P/window=W/part-0.parquet   (W: event time / window_ns)
//! DIR/samples/host=H/window=W/part-0.parquet            (W: (time − time_min) / window)
//! ```
//!
//! Entry points: [`write_trace`], [`read_trace`], [`write_samples`], [`read_samples`],
//! [`Manifest::read`], [`is_dataset`]; [`TraceStreamWriter`] writes a trace as its events come.

pub mod samples;
pub mod schema;
pub mod trace;
pub mod trace_stream;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use samples::{SamplesHead, read_samples, read_samples_head, write_samples};
pub use trace::{TraceHead, read_trace, read_trace_head, write_trace};
pub use trace_stream::TraceStreamWriter;

/// File name of the manifest at the dataset's root.
pub const MANIFEST: &str = "memscape-dataset.json";
/// Version of the layout and schemas this crate writes.
pub const LAYOUT_VERSION: u32 = 1;

/// Errors of this crate; each names the file it concerns.
#[derive(Debug, thiserror::Error)]
pub enum ParquetError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Parquet {
        path: String,
        #[source]
        source: parquet::errors::ParquetError,
    },
    #[error("{path}: {source}")]
    Arrow {
        path: String,
        #[source]
        source: arrow_schema::ArrowError,
    },
    #[error("{path}: bad manifest: {why}")]
    Manifest { path: String, why: String },
    #[error("{path}: {why}")]
    Invalid { path: String, why: String },
}

pub type Result<T> = std::result::Result<T, ParquetError>;

pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ParquetError + '_ {
    move |source| ParquetError::Io {
        path: path.display().to_string(),
        source,
    }
}

pub(crate) fn invalid(path: &Path, why: impl Into<String>) -> ParquetError {
    ParquetError::Invalid {
        path: path.display().to_string(),
        why: why.into(),
    }
}

/// What a dataset holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DatasetKind {
    Trace,
    Samples,
}

/// One host's part of a dataset.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HostEntry {
    /// Width of a time window in the time unit of the table (ns for traces, the samples'
    /// `time` attribute or row numbers for samples).
    pub window: u64,
    /// Origin of the windows (samples: the smallest time; traces: 0).
    #[serde(default)]
    pub window_origin: u64,
    /// Rows of the main table (blocks or samples) and events (traces).
    pub rows: u64,
    #[serde(default)]
    pub events: u64,
    /// The trace's metadata (traces) or the samples' source description (samples).
    pub meta: serde_json::Value,
}

/// The dataset's manifest: kind, layout version and one entry per host.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Manifest {
    /// Always `memscape-parquet`.
    pub format: String,
    pub version: u32,
    pub kind: DatasetKind,
    pub hosts: BTreeMap<String, HostEntry>,
}

impl Manifest {
    pub fn new(kind: DatasetKind) -> Self {
        Self {
            format: String::from("memscape-parquet"),
            version: LAYOUT_VERSION,
            kind,
            hosts: BTreeMap::new(),
        }
    }

    /// The manifest of the dataset at `dir`.
    pub fn read(dir: &Path) -> Result<Self> {
        let path = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&path).map_err(io_err(&path))?;
        let manifest: Manifest =
            serde_json::from_str(&text).map_err(|e| ParquetError::Manifest {
                path: path.display().to_string(),
                why: e.to_string(),
            })?;
        if manifest.format != "memscape-parquet" || manifest.version > LAYOUT_VERSION {
            return Err(ParquetError::Manifest {
                path: path.display().to_string(),
                why: format!(
                    "expected format \"memscape-parquet\" version 1..={LAYOUT_VERSION}, found {:?} version {}",
                    manifest.format, manifest.version
                ),
            });
        }
        Ok(manifest)
    }

    /// The manifest of `dir` when it has one of `kind`, else a new one; an existing dataset of
    /// the other kind is an error (one directory holds one kind).
    pub(crate) fn open_or_new(dir: &Path, kind: DatasetKind) -> Result<Self> {
        if !dir.join(MANIFEST).exists() {
            return Ok(Self::new(kind));
        }
        let manifest = Self::read(dir)?;
        if manifest.kind != kind {
            return Err(invalid(
                dir,
                format!(
                    "holds a {:?} dataset; write {:?} data to another directory",
                    manifest.kind, kind
                ),
            ));
        }
        Ok(manifest)
    }

    pub(crate) fn write(&self, dir: &Path) -> Result<()> {
        let path = dir.join(MANIFEST);
        let text = serde_json::to_string_pretty(self).map_err(|e| ParquetError::Manifest {
            path: path.display().to_string(),
            why: e.to_string(),
        })?;
        // Written last and atomically: a directory with a manifest is a complete dataset.
        let tmp = dir.join(format!("{MANIFEST}.tmp"));
        std::fs::write(&tmp, text).map_err(io_err(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(io_err(&path))
    }

    /// The host to read: `host` when given (it must exist), else the only one.
    pub fn pick_host(&self, dir: &Path, host: Option<&str>) -> Result<String> {
        let names = || self.hosts.keys().cloned().collect::<Vec<_>>().join(", ");
        match host {
            Some(h) if self.hosts.contains_key(h) => Ok(h.to_owned()),
            Some(h) => Err(invalid(dir, format!("no host {h:?}; hosts: {}", names()))),
            None if self.hosts.len() == 1 => {
                Ok(self.hosts.keys().next().cloned().unwrap_or_default())
            }
            None => Err(invalid(
                dir,
                format!("holds several hosts ({}); name one", names()),
            )),
        }
    }
}

/// Whether `dir` is a memscape Parquet dataset (has a manifest).
pub fn is_dataset(dir: &Path) -> bool {
    dir.is_dir() && dir.join(MANIFEST).is_file()
}

/// The kind of the dataset at `dir`, or `None` when it is none.
pub fn dataset_kind(dir: &Path) -> Option<DatasetKind> {
    is_dataset(dir)
        .then(|| Manifest::read(dir).ok().map(|m| m.kind))
        .flatten()
}

/// Checks a host name for use as a directory name (`host=NAME`).
pub fn check_host(host: &str) -> std::result::Result<(), String> {
    if host.is_empty()
        || host.len() > 128
        || !host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        || host.starts_with('.')
    {
        return Err(format!(
            "host {host:?}: expected 1 to 128 letters, digits, '.', '_' or '-' (not starting with '.')"
        ));
    }
    Ok(())
}

/// The Hive-style partition directory `table/host=H[/process=P][/window=W]` under `dir`.
pub fn partition_dir(
    dir: &Path,
    table: &str,
    host: &str,
    process: Option<u32>,
    window: Option<u64>,
) -> PathBuf {
    let mut p = dir.join(table).join(format!("host={host}"));
    if let Some(process) = process {
        p.push(format!("process={process}"));
    }
    if let Some(window) = window {
        p.push(format!("window={window}"));
    }
    p
}

/// A Parquet file found under a table's directory with its partition values.
#[derive(Debug, Clone)]
pub struct PartitionFile {
    pub path: PathBuf,
    pub host: String,
    pub process: Option<u32>,
    pub window: Option<u64>,
}

/// Every `.parquet` file under `dir/table/host=H/…` (all hosts when `host` is `None`), sorted
/// by path; partition values parsed from the directory names.
pub fn partition_files(dir: &Path, table: &str, host: Option<&str>) -> Result<Vec<PartitionFile>> {
    let root = dir.join(table);
    let mut out = Vec::new();
    if !root.is_dir() {
        return Ok(out);
    }
    let mut stack = vec![root.clone()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).map_err(io_err(&d))? {
            let path = entry.map_err(io_err(&d))?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "parquet") {
                let mut file = PartitionFile {
                    path: path.clone(),
                    host: String::new(),
                    process: None,
                    window: None,
                };
                let rel = path.strip_prefix(&root).unwrap_or(&path);
                for part in rel.iter().filter_map(|s| s.to_str()) {
                    let Some((key, value)) = part.split_once('=') else {
                        continue;
                    };
                    let bad = || invalid(&path, format!("partition {part:?} is not a number"));
                    match key {
                        "host" => file.host = value.to_owned(),
                        "process" => file.process = Some(value.parse().map_err(|_| bad())?),
                        "window" => file.window = Some(value.parse().map_err(|_| bad())?),
                        _ => {}
                    }
                }
                if host.is_none_or(|h| h == file.host) {
                    out.push(file);
                }
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// Removes a host's partitions of `tables` (before writing it again).
pub(crate) fn remove_host(dir: &Path, tables: &[&str], host: &str) -> Result<()> {
    for table in tables {
        let d = partition_dir(dir, table, host, None, None);
        if d.exists() {
            std::fs::remove_dir_all(&d).map_err(io_err(&d))?;
        }
    }
    Ok(())
}
