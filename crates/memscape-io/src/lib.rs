//! Input plumbing shared by every memscape importer.
//!
//! * [`read_input`] / [`decompress`]: read a file whatever its compression (zstd, gzip or plain),
//!   detected from the magic bytes, never from the extension alone, with a hard cap on the
//!   decompressed size so a crafted header cannot make us allocate without bound.
//! * [`Location`]: "file:line" or "file@offset", the place every error and warning names.
//! * [`Warnings`]: counted recoverable problems, keeping only the first few locations per kind.
//! * [`InputError`]: the error type for "this file cannot be read at all".

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Upper bound for a decompressed input (64 GiB): far above any trace we can hold, low enough that
/// a decompression bomb fails with a clear message instead of exhausting memory.
pub const DEFAULT_MAX_DECOMPRESSED: u64 = 64 << 30;

/// How many locations [`Warnings`] keeps per kind of warning.
pub const LOCATIONS_KEPT: usize = 5;

/// The compression an input was stored with, detected from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    None,
    Zstd,
    Gzip,
}

impl Compression {
    /// Detects the compression from the magic bytes at the start of a file.
    pub fn sniff(head: &[u8]) -> Self {
        if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else {
            Compression::None
        }
    }
}

/// A file that could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{path}: cannot read: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {compression:?} stream is corrupt after {at} decompressed bytes: {source}")]
    Decompress {
        path: PathBuf,
        compression: Compression,
        at: u64,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: decompressed size exceeds the limit of {limit} bytes")]
    TooLarge { path: PathBuf, limit: u64 },
}

/// Reads a whole file, decompressing zstd or gzip transparently.
pub fn read_input(path: &Path) -> Result<Vec<u8>, InputError> {
    let raw = std::fs::read(path).map_err(|source| InputError::Io {
        path: path.to_owned(),
        source,
    })?;
    decompress(path, raw, DEFAULT_MAX_DECOMPRESSED)
}

/// Decompresses `raw` if its magic bytes say it is compressed; `path` is only used in errors.
/// Truncated compressed streams are an error (the data read so far is not returned: a truncated
/// zstd frame cannot be told apart from garbage reliably).
pub fn decompress(path: &Path, raw: Vec<u8>, limit: u64) -> Result<Vec<u8>, InputError> {
    let compression = Compression::sniff(&raw);
    let reader: Box<dyn Read + '_> = match compression {
        Compression::None => {
            if raw.len() as u64 > limit {
                return Err(InputError::TooLarge {
                    path: path.to_owned(),
                    limit,
                });
            }
            return Ok(raw);
        }
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::new(raw.as_slice()).map_err(
            |source| InputError::Decompress {
                path: path.to_owned(),
                compression,
                at: 0,
                source,
            },
        )?),
        // MultiGzDecoder: `cat a.gz b.gz` is a valid gzip file and heaptrack may append members.
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(raw.as_slice())),
    };
    let mut out = Vec::with_capacity(raw.len().saturating_mul(4).min(1 << 30));
    let read = reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|source| InputError::Decompress {
            path: path.to_owned(),
            compression,
            at: out.len() as u64,
            source,
        })?;
    if read as u64 > limit {
        return Err(InputError::TooLarge {
            path: path.to_owned(),
            limit,
        });
    }
    Ok(out)
}

/// Where in an input something happened. Lines are 1-based; offsets are byte offsets into the
/// decompressed content.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Location {
    pub file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
}

impl Location {
    pub fn line(file: impl Into<String>, line: u64) -> Self {
        Self {
            file: file.into(),
            line: Some(line),
            offset: None,
        }
    }

    pub fn offset(file: impl Into<String>, offset: u64) -> Self {
        Self {
            file: file.into(),
            line: None,
            offset: Some(offset),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.offset) {
            (Some(line), _) => write!(f, "{}:{line}", self.file),
            (None, Some(offset)) => write!(f, "{}@{offset}", self.file),
            (None, None) => write!(f, "{}", self.file),
        }
    }
}

/// One kind of recoverable problem, how often it happened and where the first few were.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct WarningKind {
    /// Short stable identifier, e.g. `"unknown_free"`; used as the JSON key.
    pub kind: &'static str,
    /// Human description of what was expected, e.g. `"free of a pointer that is not live"`.
    pub message: String,
    pub count: u64,
    pub first: Vec<Location>,
}

/// Counted warnings of an import: each kind keeps its count and the first [`LOCATIONS_KEPT`]
/// locations, so a file with a million bad lines costs a few bytes of bookkeeping, not a million.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(transparent)]
pub struct Warnings {
    kinds: Vec<WarningKind>,
}

impl Warnings {
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts one occurrence of `kind` at `at`. `message` is only stored the first time.
    pub fn add(&mut self, kind: &'static str, message: impl Into<String>, at: Location) {
        if let Some(existing) = self.kinds.iter_mut().find(|k| k.kind == kind) {
            existing.count += 1;
            if existing.first.len() < LOCATIONS_KEPT {
                existing.first.push(at);
            }
        } else {
            self.kinds.push(WarningKind {
                kind,
                message: message.into(),
                count: 1,
                first: vec![at],
            });
        }
    }

    /// Total number of warnings of all kinds.
    pub fn total(&self) -> u64 {
        self.kinds.iter().map(|k| k.count).sum()
    }

    /// How many warnings of one kind were counted.
    pub fn count(&self, kind: &str) -> u64 {
        self.kinds
            .iter()
            .find(|k| k.kind == kind)
            .map_or(0, |k| k.count)
    }

    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    pub fn kinds(&self) -> &[WarningKind] {
        &self.kinds
    }

    /// Adds every warning of `other` into `self`.
    pub fn merge(&mut self, other: Warnings) {
        for k in other.kinds {
            if let Some(existing) = self.kinds.iter_mut().find(|e| e.kind == k.kind) {
                existing.count += k.count;
                let room = LOCATIONS_KEPT.saturating_sub(existing.first.len());
                existing.first.extend(k.first.into_iter().take(room));
            } else {
                self.kinds.push(k);
            }
        }
    }
}

impl fmt::Display for Warnings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for k in &self.kinds {
            write!(f, "{} × {}", k.count, k.message)?;
            let places: Vec<String> = k.first.iter().map(ToString::to_string).collect();
            writeln!(f, " (first at {})", places.join(", "))?;
        }
        Ok(())
    }
}

/// Iterates over the lines of a byte buffer with 1-based line numbers, tolerating `\r\n` and
/// non-UTF-8 bytes (the caller decides what a non-UTF-8 line means).
pub fn numbered_lines(data: &[u8]) -> impl Iterator<Item = (u64, &[u8])> {
    let mut rest = data;
    let mut number = 0u64;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        number += 1;
        let (line, tail) = match memchr_newline(rest) {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        rest = tail;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        Some((number, line))
    })
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn sniffs_and_decompresses_all_three() {
        let text = b"hello\nworld\n".to_vec();
        let path = Path::new("x");
        assert_eq!(
            decompress(path, text.clone(), 1 << 20).ok(),
            Some(text.clone())
        );

        let z = zstd::encode_all(text.as_slice(), 3)
            .ok()
            .unwrap_or_default();
        assert_eq!(Compression::sniff(&z), Compression::Zstd);
        assert_eq!(decompress(path, z, 1 << 20).ok(), Some(text.clone()));

        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&text).ok();
        let gz = gz.finish().ok().unwrap_or_default();
        assert_eq!(Compression::sniff(&gz), Compression::Gzip);
        assert_eq!(decompress(path, gz, 1 << 20).ok(), Some(text));
    }

    #[test]
    fn truncated_zstd_is_an_error_not_a_panic() {
        let text = vec![b'a'; 100_000];
        let z = zstd::encode_all(text.as_slice(), 3)
            .ok()
            .unwrap_or_default();
        let cut = z[..z.len() / 2].to_vec();
        let err = decompress(Path::new("t.zst"), cut, 1 << 20);
        assert!(matches!(err, Err(InputError::Decompress { .. })));
    }

    #[test]
    fn decompression_bomb_hits_the_limit() {
        let text = vec![0u8; 1 << 20];
        let z = zstd::encode_all(text.as_slice(), 3)
            .ok()
            .unwrap_or_default();
        let err = decompress(Path::new("bomb.zst"), z, 1000);
        assert!(matches!(err, Err(InputError::TooLarge { limit: 1000, .. })));
    }

    #[test]
    fn warnings_keep_counts_and_first_locations() {
        let mut w = Warnings::new();
        for line in 1..=100 {
            w.add("bad", "a bad line", Location::line("f.txt", line));
        }
        w.add("other", "something else", Location::offset("f.txt", 7));
        assert_eq!(w.total(), 101);
        assert_eq!(w.count("bad"), 100);
        assert_eq!(w.kinds()[0].first.len(), LOCATIONS_KEPT);
        let shown = w.to_string();
        assert!(shown.contains("100 × a bad line (first at f.txt:1, f.txt:2"));
        assert!(shown.contains("f.txt@7"));
    }

    #[test]
    fn numbered_lines_handles_crlf_and_missing_final_newline() {
        let lines: Vec<_> = numbered_lines(b"a\r\nb\n\nc").collect();
        assert_eq!(
            lines,
            vec![
                (1, &b"a"[..]),
                (2, &b"b"[..]),
                (3, &b""[..]),
                (4, &b"c"[..])
            ]
        );
    }
}
