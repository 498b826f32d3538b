//! Allocation traces for memscape: a columnar model of malloc/free blocks, importers for
//! heaptrack (raw and processed), CSV and memscape's own `.msc` format, address regions, bins,
//! and metrics per bin over time.
//!
//! Entry points: [`load`] / [`load_bytes`] (format detected from content), [`write_msc`],
//! [`regions::find_regions`], [`bins::Bins`], [`metrics::BinMetrics`], [`info::info`],
//! [`info::convert`].

pub mod bins;
mod builder;
mod csv;
pub mod debuginfo;
mod fsync;
mod heaptrack;
pub mod info;
pub mod metrics;
pub mod model;
pub mod msc;
pub mod parts;
pub mod pools;
mod ppm;
pub mod process;
pub mod regions;
pub mod sites;
pub mod summary;
pub mod symbolize;
pub mod symtab;
mod text;
mod ticks;
pub mod warn;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use memscape_io::{Compression, InputError, Location};

pub use builder::{BuilderCounts, Drained, MAX_SANE_SIZE, PointerHasher, TraceBuilder};
pub use fsync::{SyncedFile, write_synced};
pub use model::{BlockColumns, CallTree, Frame, Trace, TraceFormat, TraceMeta};
pub use msc::{from_msc_bytes, read_msc, to_msc_bytes, write_msc};
pub use parts::{PartsError, TraceParts};

use text::LineParser;

/// Why a trace could not be loaded at all.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("{path}: cannot read")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path}: not an allocation trace: expected a heaptrack file (first line `v <version> <file version>`), a CSV header with `time,op,address`, or an .msc file; the input starts with {start}"
    )]
    NotATrace {
        path: String,
        /// The first bytes, quoted by [`memscape_io::quote_start`].
        start: String,
    },
    #[error(
        "{path}: not a memscape .msc file (bad magic {start}): expected the 8 bytes `MEMSCAPE` at offset 0"
    )]
    NotMsc {
        path: String,
        /// The first bytes, quoted by [`memscape_io::quote_start`].
        start: String,
    },
    #[error("{at}: corrupt .msc file: expected {expected}")]
    Corrupt { at: Location, expected: String },
}

/// How much of the decompressed start of a file is looked at to detect its format.
const SNIFF_BYTES: usize = 64 * 1024;

fn detect(path: &str, head: &[u8]) -> Result<TraceFormat, LoadError> {
    if head.starts_with(msc::MAGIC) {
        return Ok(TraceFormat::Msc);
    }
    if let Some(format) = heaptrack::sniff(head) {
        return Ok(format);
    }
    if csv::sniff(head) {
        return Ok(TraceFormat::Csv);
    }
    let start = memscape_io::quote_start(head);
    let named_msc = Path::new(path)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("msc"));
    Err(if named_msc {
        LoadError::NotMsc {
            path: path.to_owned(),
            start,
        }
    } else {
        LoadError::NotATrace {
            path: path.to_owned(),
            start,
        }
    })
}

/// Detects the format of already-decompressed bytes.
pub fn detect_format(source: &str, bytes: &[u8]) -> Result<TraceFormat, LoadError> {
    detect(source, &bytes[..bytes.len().min(SNIFF_BYTES)])
}

/// Loads a trace from decompressed (or compressed: zstd, gzip and bzip2 are detected) bytes.
/// `source` names the input in warnings and errors.
pub fn load_bytes(source: &str, bytes: &[u8]) -> Result<Trace, LoadError> {
    let owned;
    let bytes = match Compression::sniff(bytes) {
        Compression::None if bytes.is_empty() => {
            return Err(InputError::Empty {
                path: source.into(),
                compression: Compression::None,
            }
            .into());
        }
        Compression::None => bytes,
        _ => {
            owned = memscape_io::decompress(
                Path::new(source),
                bytes.to_vec(),
                memscape_io::DEFAULT_MAX_DECOMPRESSED,
            )?;
            owned.as_slice()
        }
    };
    match detect_format(source, bytes)? {
        TraceFormat::Msc => from_msc_bytes(source, bytes),
        TraceFormat::HeaptrackRaw => {
            let mut p = heaptrack::RawParser::new(source);
            text::feed_bytes(&mut p, bytes);
            Ok(p.finish())
        }
        TraceFormat::HeaptrackProcessed => {
            let mut p = heaptrack::ProcessedParser::new(source);
            text::feed_bytes(&mut p, bytes);
            Ok(p.finish())
        }
        TraceFormat::Csv => Ok(csv::parse(source, bytes, Some(bytes.ends_with(b"\n")))),
    }
}

/// Reads from `reader` and counts bytes for a progress callback.
struct Counting<R> {
    inner: R,
    read: u64,
    total: u64,
    next_report: u64,
    progress: Box<dyn FnMut(f32)>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if self.read >= self.next_report && self.total > 0 {
            (self.progress)((self.read as f64 / self.total as f64).min(1.0) as f32);
            self.next_report = self.read + self.total / 100 + 1;
        }
        Ok(n)
    }
}

/// Loads a trace file, streaming and decompressing it (zstd, gzip or plain, from the magic
/// bytes) so that the text never sits in memory whole. The format is detected from the content.
pub fn load(path: &Path) -> Result<Trace, LoadError> {
    load_with_progress(path, Box::new(|_| {}))
}

/// [`load`] with a progress callback receiving the fraction of the (compressed) file read.
pub fn load_with_progress(path: &Path, progress: Box<dyn FnMut(f32)>) -> Result<Trace, LoadError> {
    let name = path.display().to_string();
    let io_err = |source| LoadError::Io {
        path: name.clone(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io_err)?;
    let total = file.metadata().map(|m| m.len()).map_err(io_err)?;
    if total == 0 {
        return Err(InputError::Empty {
            path: path.to_owned(),
            compression: Compression::None,
        }
        .into());
    }
    let mut file = BufReader::with_capacity(
        1 << 16,
        Counting {
            inner: file,
            read: 0,
            total,
            next_report: 0,
            progress,
        },
    );
    let magic = file.fill_buf().map_err(io_err)?;
    let compression = Compression::sniff(magic);
    if magic.starts_with(msc::MAGIC) {
        // Columnar: no lines to stream; one read into an aligned buffer.
        drop(file);
        let trace = read_msc(path);
        return trace;
    }
    let broken = |reason: String| InputError::Decompress {
        path: path.to_owned(),
        compression,
        reason,
    };
    let decoded = memscape_io::decoder(compression, file).map_err(|e| broken(e.to_string()))?;
    // Read the start for detection, then put it back in front of the stream.
    let mut decoded = decoded;
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    (&mut decoded)
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|e| broken(e.to_string()))?;
    if head.is_empty() {
        return Err(InputError::Empty {
            path: path.to_owned(),
            compression,
        }
        .into());
    }
    let format = detect(&name, &head)?;
    let mut reader = BufReader::with_capacity(1 << 20, std::io::Cursor::new(head).chain(decoded));
    run_stream(&name, format, &mut reader)
}

fn run_stream(
    name: &str,
    format: TraceFormat,
    reader: &mut impl BufRead,
) -> Result<Trace, LoadError> {
    fn go<P: LineParser>(p: &mut P, name: &str, reader: &mut impl BufRead) {
        if let Err(e) = text::feed_reader(p, reader) {
            // The same words as memscape_io's in-memory path.
            tracing::warn!(
                "{name}: the stream is cut or corrupt ({e}); what came before is loaded"
            );
        }
    }
    Ok(match format {
        TraceFormat::HeaptrackRaw => {
            let mut p = heaptrack::RawParser::new(name);
            go(&mut p, name, reader);
            p.finish()
        }
        TraceFormat::HeaptrackProcessed => {
            let mut p = heaptrack::ProcessedParser::new(name);
            go(&mut p, name, reader);
            p.finish()
        }
        TraceFormat::Csv => csv::parse(name, reader, None),
        TraceFormat::Msc => {
            let mut bytes = Vec::new();
            reader
                .read_to_end(&mut bytes)
                .map_err(|source| LoadError::Io {
                    path: name.to_owned(),
                    source,
                })?;
            from_msc_bytes(name, &bytes)?
        }
    })
}
