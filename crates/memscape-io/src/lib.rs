//! Input plumbing shared by every memscape importer.
//!
//! * [`read_input`] / [`decompress`]: read a file whatever its compression (zstd, gzip, bzip2
//!   or plain), detected from the magic bytes, never from the extension alone, with a hard cap
//!   on the decompressed size so a crafted header cannot make us allocate without bound. A
//!   compressed stream that breaks off (a cut download, a recording killed mid-write) gives
//!   what was decompressed before the break and a warning, the same in every command.
//! * [`Location`]: "file:line" or "file@offset", the place every error and warning names.
//! * [`Warnings`]: counted recoverable problems, keeping only the first few locations per kind.
//! * [`InputError`]: the error type for "this file cannot be read at all".
//! * [`quote_start`]: the start of an input quoted for a message (at most 16 bytes, anything
//!   unprintable as `\xNN`), so that no message prints raw binary.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Upper bound for a decompressed input (64 GiB): far above any trace we can hold, low enough that
/// a decompression bomb fails with a clear message instead of exhausting memory.
pub const DEFAULT_MAX_DECOMPRESSED: u64 = 64 << 30;

/// How many locations [`Warnings`] keeps per kind of warning.
pub const LOCATIONS_KEPT: usize = 5;

/// How many bytes of an input a message quotes at most.
pub const QUOTED_BYTES: usize = 16;

/// The compression an input was stored with, detected from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    None,
    Zstd,
    Gzip,
    Bzip2,
}

impl Compression {
    /// Detects the compression from the magic bytes at the start of a file.
    pub fn sniff(head: &[u8]) -> Self {
        if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if is_bzip2(head) {
            Compression::Bzip2
        } else {
            Compression::None
        }
    }

    /// The name messages use.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "plain",
            Compression::Zstd => "zstd",
            Compression::Gzip => "gzip",
            Compression::Bzip2 => "bzip2",
        }
    }
}

/// `BZh` and a block size digit, then the first block's magic (π in BCD) or, for an empty
/// stream, the end-of-stream magic (√π): three letters alone could start a text file.
fn is_bzip2(head: &[u8]) -> bool {
    const BLOCK: &[u8] = &[0x31, 0x41, 0x59, 0x26, 0x53, 0x59];
    const END: &[u8] = &[0x17, 0x72, 0x45, 0x38, 0x50, 0x90];
    match head {
        [b'B', b'Z', b'h', level, rest @ ..] if (b'1'..=b'9').contains(level) => {
            rest.starts_with(BLOCK) || rest.starts_with(END)
        }
        _ => false,
    }
}

/// A decompressing reader over `inner` for `compression` (`None` reads it as it is).
pub fn decoder<'a, R: std::io::BufRead + 'a>(
    compression: Compression,
    inner: R,
) -> std::io::Result<Box<dyn Read + 'a>> {
    Ok(match compression {
        Compression::None => Box::new(inner),
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(inner)?),
        // Multi-member decoders: `cat a.gz b.gz` is a valid gzip file (heaptrack may append
        // members), and pbzip2 writes one bzip2 stream per block.
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(inner)),
        Compression::Bzip2 => Box::new(bzip2::bufread::MultiBzDecoder::new(inner)),
    })
}

/// A file that could not be read at all. Each message names the file and says its cause once:
/// the I/O error under [`InputError::Io`] is its `source()`, printed by whoever prints the
/// chain (`{:#}` of anyhow), not repeated in this message.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{path}: cannot read")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path}: not a valid {} stream (it starts with {} magic bytes, but nothing could be decompressed): {reason}",
        compression.name(), compression.name()
    )]
    Decompress {
        path: PathBuf,
        compression: Compression,
        /// The decoder's own message (kept as text: it is the cause, said once).
        reason: String,
    },
    #[error(
        "{path}: decompressed size exceeds the limit of {limit} bytes (a decompression bomb, or an input larger than memscape reads)"
    )]
    TooLarge { path: PathBuf, limit: u64 },
    #[error("{path}: the file is empty{}", if *.compression == Compression::None { String::new() } else { format!(" once decompressed ({})", compression.name()) })]
    Empty {
        path: PathBuf,
        compression: Compression,
    },
}

/// A compressed stream that broke off: what was decompressed before the break is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamBreak {
    pub compression: Compression,
    /// Decompressed bytes kept (everything before the break).
    pub at: u64,
    /// The decoder's message.
    pub reason: String,
}

impl fmt::Display for StreamBreak {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the {} stream is cut or corrupt after {} decompressed bytes ({}); what came before is loaded",
            self.compression.name(),
            self.at,
            self.reason
        )
    }
}

/// The content of an input and how it was stored.
#[derive(Debug)]
pub struct Decoded {
    pub bytes: Vec<u8>,
    pub compression: Compression,
    /// Set when a compressed stream broke off: `bytes` is what came before.
    pub stream_break: Option<StreamBreak>,
}

/// Reads a whole file, decompressing zstd, gzip or bzip2 transparently. A compressed stream
/// that breaks off after some content gives that content, and a warning is logged
/// (`read_input_decoded` hands it to the caller instead).
pub fn read_input(path: &Path) -> Result<Vec<u8>, InputError> {
    let decoded = read_input_decoded(path)?;
    if let Some(b) = &decoded.stream_break {
        tracing::warn!("{}: {b}", path.display());
    }
    Ok(decoded.bytes)
}

/// [`read_input`], returning a stream break to the caller rather than logging it.
pub fn read_input_decoded(path: &Path) -> Result<Decoded, InputError> {
    let raw = std::fs::read(path).map_err(|source| InputError::Io {
        path: path.to_owned(),
        source,
    })?;
    decompress_decoded(path, raw, DEFAULT_MAX_DECOMPRESSED)
}

/// Decompresses `raw` if its magic bytes say it is compressed; `path` is only used in messages.
/// A stream that breaks off after some content gives that content (and logs a warning).
pub fn decompress(path: &Path, raw: Vec<u8>, limit: u64) -> Result<Vec<u8>, InputError> {
    let decoded = decompress_decoded(path, raw, limit)?;
    if let Some(b) = &decoded.stream_break {
        tracing::warn!("{}: {b}", path.display());
    }
    Ok(decoded.bytes)
}

/// [`decompress`], returning a stream break to the caller rather than logging it. Errors: an
/// empty input, a stream from which nothing at all can be decompressed, or more than `limit`
/// decompressed bytes.
pub fn decompress_decoded(path: &Path, raw: Vec<u8>, limit: u64) -> Result<Decoded, InputError> {
    let compression = Compression::sniff(&raw);
    let empty = |compression| InputError::Empty {
        path: path.to_owned(),
        compression,
    };
    if raw.is_empty() {
        return Err(empty(Compression::None));
    }
    let too_large = || InputError::TooLarge {
        path: path.to_owned(),
        limit,
    };
    if compression == Compression::None {
        if raw.len() as u64 > limit {
            return Err(too_large());
        }
        return Ok(Decoded {
            bytes: raw,
            compression,
            stream_break: None,
        });
    }
    let broken = |reason: String| InputError::Decompress {
        path: path.to_owned(),
        compression,
        reason,
    };
    let reader = decoder(compression, raw.as_slice()).map_err(|e| broken(e.to_string()))?;
    // Grown as it fills (no capacity guessed from the compressed size beyond a small start:
    // a bomb must hit the limit, not an allocation sized up front).
    let mut out = Vec::with_capacity(raw.len().saturating_mul(4).min(64 << 20));
    let mut stream_break = None;
    match reader.take(limit.saturating_add(1)).read_to_end(&mut out) {
        Ok(_) => {}
        Err(e) if out.is_empty() => return Err(broken(e.to_string())),
        Err(e) => {
            stream_break = Some(StreamBreak {
                compression,
                at: out.len() as u64,
                reason: e.to_string(),
            });
        }
    }
    if out.len() as u64 > limit {
        return Err(too_large());
    }
    if out.is_empty() {
        return Err(empty(compression));
    }
    Ok(Decoded {
        bytes: out,
        compression,
        stream_break,
    })
}

/// The start of an input quoted for a message: at most [`QUOTED_BYTES`] bytes, printable ASCII
/// as it is and every other byte as `\xNN`, in double quotes, `…` when there is more.
pub fn quote_start(bytes: &[u8]) -> String {
    let shown = &bytes[..bytes.len().min(QUOTED_BYTES)];
    let mut out = String::with_capacity(shown.len() * 4 + 4);
    out.push('"');
    for &b in shown {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    if bytes.len() > shown.len() {
        out.push('…');
    }
    out
}

pub use csv::ByteRecord;

pub use csv::{ErrorKind as CsvErrorKind, StringRecord};

/// The one CSV reader of every memscape importer (the `csv` crate): RFC 4180 quoting (`""`
/// inside quotes is a quote; a quoted field may hold commas and line breaks), comma-separated,
/// empty lines and lines starting with `#` skipped, no header handling (each importer reads
/// its own), and rows of any length: importers check the field count themselves and name the
/// row (`position().line()`) in their warnings. Fields are not trimmed here (the csv crate's
/// trimming copies every record): importers trim the fields they read (`trim_ascii`).
pub fn csv_reader<R: Read>(input: R) -> csv::Reader<R> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .comment(Some(b'#'))
        .buffer_capacity(1 << 16)
        .from_reader(input)
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

    fn zstd_of(text: &[u8]) -> Vec<u8> {
        zstd::encode_all(text, 3).ok().unwrap_or_default()
    }

    fn gzip_of(text: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(text).ok();
        gz.finish().ok().unwrap_or_default()
    }

    fn bzip2_of(text: &[u8]) -> Vec<u8> {
        let mut bz = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
        bz.write_all(text).ok();
        bz.finish().ok().unwrap_or_default()
    }

    /// The message as `{:#}` of anyhow prints it: the error, then each source after `: `.
    fn chain(err: &dyn std::error::Error) -> String {
        let mut out = err.to_string();
        let mut next = err.source();
        while let Some(e) = next {
            out.push_str(": ");
            out.push_str(&e.to_string());
            next = e.source();
        }
        out
    }

    #[test]
    fn sniffs_and_decompresses_all_four() {
        let text = b"hello\nworld\n".to_vec();
        let path = Path::new("x");
        assert_eq!(
            decompress(path, text.clone(), 1 << 20).ok(),
            Some(text.clone())
        );
        for (packed, kind) in [
            (zstd_of(&text), Compression::Zstd),
            (gzip_of(&text), Compression::Gzip),
            (bzip2_of(&text), Compression::Bzip2),
        ] {
            assert_eq!(Compression::sniff(&packed), kind);
            assert_eq!(decompress(path, packed, 1 << 20).ok(), Some(text.clone()));
        }
        // Concatenated bzip2 streams (pbzip2, `cat a.bz2 b.bz2`) are one input.
        let mut two = bzip2_of(b"a\n");
        two.extend(bzip2_of(b"b\n"));
        assert_eq!(
            decompress(path, two, 1 << 20).ok(),
            Some(b"a\nb\n".to_vec())
        );
        // Text that happens to start with `BZh` is text.
        assert_eq!(Compression::sniff(b"BZh9 is a tank\n"), Compression::None);
    }

    #[test]
    fn a_cut_stream_gives_what_came_before_with_a_warning() {
        let text: Vec<u8> = (0..200_000u32)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        for packed in [zstd_of(&text), gzip_of(&text), bzip2_of(&text)] {
            let cut = packed[..packed.len() * 2 / 3].to_vec();
            let decoded = decompress_decoded(Path::new("t.z"), cut, 1 << 30).unwrap();
            let b = decoded.stream_break.expect("a cut stream is reported");
            assert_eq!(b.at, decoded.bytes.len() as u64);
            assert!(!decoded.bytes.is_empty() && decoded.bytes.len() < text.len());
            assert!(text.starts_with(&decoded.bytes), "a prefix of the content");
            assert!(b.to_string().contains("what came before is loaded"), "{b}");
        }
        // Nothing decompressible at all is an error, naming the file once.
        let err = decompress(
            Path::new("junk.zst"),
            vec![0x28, 0xb5, 0x2f, 0xfd, 0xff, 0xff],
            1 << 20,
        )
        .unwrap_err();
        assert!(matches!(err, InputError::Decompress { .. }), "{err}");
        assert_eq!(
            chain(&err).matches("junk.zst").count(),
            1,
            "{}",
            chain(&err)
        );
    }

    #[test]
    fn decompression_bombs_hit_the_limit() {
        // 64 MiB of zeros packs into a few kilobytes in every format.
        let zeros = vec![0u8; 64 << 20];
        for packed in [zstd_of(&zeros), gzip_of(&zeros), bzip2_of(&zeros)] {
            assert!(packed.len() < 1 << 20, "{} bytes", packed.len());
            let err = decompress(Path::new("bomb"), packed, 1 << 20);
            assert!(
                matches!(err, Err(InputError::TooLarge { limit, .. }) if limit == 1 << 20),
                "{err:?}"
            );
        }
        let err = decompress(Path::new("plain"), vec![b'a'; 1001], 1000);
        assert!(matches!(err, Err(InputError::TooLarge { limit: 1000, .. })));
    }

    #[test]
    fn an_empty_file_says_it_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty.csv");
        std::fs::write(&path, b"").unwrap();
        let err = read_input(&path).unwrap_err();
        assert_eq!(
            chain(&err),
            format!("{}: the file is empty", path.display())
        );
        let err = decompress(Path::new("e.gz"), gzip_of(b""), 1 << 20).unwrap_err();
        assert_eq!(
            chain(&err),
            "e.gz: the file is empty once decompressed (gzip)"
        );
    }

    #[test]
    fn io_errors_say_their_cause_once() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_input(dir.path()).unwrap_err();
        let text = chain(&err);
        assert_eq!(text.matches("os error").count(), 1, "{text}");
        assert!(
            text.starts_with(&format!("{}: cannot read: ", dir.path().display())),
            "{text}"
        );
        let err = read_input(&dir.path().join("missing")).unwrap_err();
        assert_eq!(
            chain(&err).matches("os error 2").count(),
            1,
            "{}",
            chain(&err)
        );
    }

    #[test]
    fn quoted_starts_are_short_and_printable() {
        assert_eq!(quote_start(b"v 10 3"), "\"v 10 3\"");
        let q = quote_start(b"BZh91AY&SY\x8d\x0f\x00\xff\"\\more bytes after");
        assert_eq!(q, "\"BZh91AY&SY\\x8d\\x0f\\x00\\xff\\\"\\\\\"…");
        assert!(q.chars().all(|c| c == '…' || (' '..='~').contains(&c)));
        assert_eq!(quote_start(b""), "\"\"");
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
