//! memscape's native trace format (`.msc`): columnar, each column zstd-compressed, so loading is
//! decompression plus a little-endian copy into the column vectors, with no text parsing.
//!
//! Layout (all integers little-endian):
//!
//! | offset | size | content |
//! |---|---|---|
//! | 0 | 8 | magic `MEMSCAPE` |
//! | 8 | 4 | format version (currently 1) |
//! | 12 | 4 | number of sections `N` (at most 64) |
//! | 16 | 24·N | directory: per section `id: u32`, `element size: u32`, `element count: u64`, `compressed length: u64` |
//! | 16+24·N | … | the sections' zstd frames, in directory order |
//!
//! Section ids: 1–11 block columns (address, size, requested size, usable size, alloc time,
//! free time, alloc event, free event as u64; thread, site as u32; flags as u8), 20–26 call tree
//! (parent u32, ip u64, function u32, file u32, line u32, module u32, module offset u64), 30
//! string bytes (u8, concatenated UTF-8), 31 string end offsets (u64), 32 thread name ids (u32),
//! 40 metadata (u8, JSON: [`crate::model::TraceMeta`] and the warning summary).
//!
//! A reader checks every length against the directory and the file size and never allocates more
//! than the bytes actually decompressed, so a forged directory gives an error, not an allocation.

use std::io::Read;
use std::path::Path;

use memscape_io::{Location, Warnings};

use crate::LoadError;
use crate::model::{BlockColumns, CallTree, Frame, Strings, Trace, TraceMeta};
use crate::warn;

pub const MAGIC: &[u8; 8] = b"MEMSCAPE";
pub const VERSION: u32 = 1;
const MAX_SECTIONS: u32 = 64;
/// Warning counts above this in a `.msc` file are taken as corruption (restoring a count costs
/// one step per warning).
const MAX_RESTORED_WARNINGS: u64 = 1 << 28;

#[derive(serde::Serialize, serde::Deserialize)]
struct WarningRecord {
    kind: String,
    count: u64,
    first: Vec<(String, Option<u64>, Option<u64>)>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct MscMeta {
    meta: TraceMeta,
    warnings: Vec<WarningRecord>,
}

struct Writer {
    directory: Vec<u8>,
    payload: Vec<u8>,
    sections: u32,
    level: i32,
}

impl Writer {
    fn section(
        &mut self,
        id: u32,
        elem_size: u32,
        count: usize,
        raw: &[u8],
    ) -> std::io::Result<()> {
        let compressed = zstd::bulk::compress(raw, self.level)?;
        self.directory.extend_from_slice(&id.to_le_bytes());
        self.directory.extend_from_slice(&elem_size.to_le_bytes());
        self.directory
            .extend_from_slice(&(count as u64).to_le_bytes());
        self.directory
            .extend_from_slice(&(compressed.len() as u64).to_le_bytes());
        self.payload.extend_from_slice(&compressed);
        self.sections += 1;
        Ok(())
    }

    fn u64s(&mut self, id: u32, values: &[u64]) -> std::io::Result<()> {
        let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.section(id, 8, values.len(), &raw)
    }

    fn u32s(&mut self, id: u32, values: &[u32]) -> std::io::Result<()> {
        let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.section(id, 4, values.len(), &raw)
    }

    fn bytes(&mut self, id: u32, values: &[u8]) -> std::io::Result<()> {
        self.section(id, 1, values.len(), values)
    }
}

/// Encodes a trace as `.msc` bytes. `progress` is called with a fraction in 0..=1 per column.
pub fn to_msc_bytes(trace: &Trace, progress: &mut dyn FnMut(f32)) -> std::io::Result<Vec<u8>> {
    let mut w = Writer {
        directory: Vec::new(),
        payload: Vec::new(),
        sections: 0,
        level: 3,
    };
    let b = &trace.blocks;
    let steps = 22.0;
    let mut step = 0.0;
    let mut tick = |p: &mut dyn FnMut(f32)| {
        step += 1.0;
        p(step / steps);
    };
    for (id, col) in [
        (1, &b.address),
        (2, &b.size),
        (3, &b.requested_size),
        (4, &b.usable_size),
        (5, &b.alloc_time_ns),
        (6, &b.free_time_ns),
        (7, &b.alloc_event),
        (8, &b.free_event),
    ] {
        w.u64s(id, col)?;
        tick(progress);
    }
    w.u32s(9, &b.thread)?;
    w.u32s(10, &b.site)?;
    w.bytes(11, &b.flags)?;
    tick(progress);
    let t = &trace.call_tree;
    w.u32s(20, &t.parent)?;
    let frames = &t.frames;
    w.u64s(21, &frames.iter().map(|f| f.ip).collect::<Vec<_>>())?;
    w.u32s(22, &frames.iter().map(|f| f.function).collect::<Vec<_>>())?;
    w.u32s(23, &frames.iter().map(|f| f.file).collect::<Vec<_>>())?;
    w.u32s(24, &frames.iter().map(|f| f.line).collect::<Vec<_>>())?;
    w.u32s(25, &frames.iter().map(|f| f.module).collect::<Vec<_>>())?;
    w.u64s(
        26,
        &frames.iter().map(|f| f.module_offset).collect::<Vec<_>>(),
    )?;
    tick(progress);
    let mut string_bytes = Vec::new();
    let mut string_ends = Vec::with_capacity(trace.strings.len());
    for s in trace.strings.iter() {
        string_bytes.extend_from_slice(s.as_bytes());
        string_ends.push(string_bytes.len() as u64);
    }
    w.bytes(30, &string_bytes)?;
    w.u64s(31, &string_ends)?;
    w.u32s(32, &trace.threads)?;
    let meta = MscMeta {
        meta: trace.meta.clone(),
        warnings: trace
            .warnings
            .kinds()
            .iter()
            .map(|k| WarningRecord {
                kind: k.kind.to_owned(),
                count: k.count,
                first: k
                    .first
                    .iter()
                    .map(|l| (l.file.clone(), l.line, l.offset))
                    .collect(),
            })
            .collect(),
    };
    let json = serde_json::to_vec(&meta).map_err(std::io::Error::other)?;
    w.bytes(40, &json)?;
    progress(1.0);
    let mut out = Vec::with_capacity(16 + w.directory.len() + w.payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&w.sections.to_le_bytes());
    out.extend_from_slice(&w.directory);
    out.extend_from_slice(&w.payload);
    Ok(out)
}

/// Writes a trace to an `.msc` file.
pub fn write_msc(trace: &Trace, path: &Path) -> Result<(), LoadError> {
    let bytes = to_msc_bytes(trace, &mut |_| {}).map_err(|source| LoadError::Io {
        path: path.display().to_string(),
        source,
    })?;
    std::fs::write(path, bytes).map_err(|source| LoadError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Reads an `.msc` file.
pub fn read_msc(path: &Path) -> Result<Trace, LoadError> {
    let bytes = std::fs::read(path).map_err(|source| LoadError::Io {
        path: path.display().to_string(),
        source,
    })?;
    from_msc_bytes(&path.display().to_string(), &bytes)
}

struct Section {
    id: u32,
    elem_size: u32,
    count: u64,
    data_offset: usize,
    compressed_len: usize,
}

fn corrupt(source: &str, offset: usize, expected: impl Into<String>) -> LoadError {
    LoadError::Corrupt {
        at: Location::offset(source, offset as u64),
        expected: expected.into(),
    }
}

fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn read_u64(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}

/// Decodes `.msc` bytes; `source` names the input in errors.
pub fn from_msc_bytes(source: &str, bytes: &[u8]) -> Result<Trace, LoadError> {
    if bytes.len() < 16 || &bytes[..8] != MAGIC {
        return Err(corrupt(source, 0, "the magic bytes MEMSCAPE"));
    }
    let version = read_u32(bytes, 8).unwrap_or(0);
    if version != VERSION {
        return Err(corrupt(
            source,
            8,
            format!("format version {VERSION}, found {version}"),
        ));
    }
    let n = read_u32(bytes, 12).unwrap_or(0);
    if n > MAX_SECTIONS {
        return Err(corrupt(
            source,
            12,
            format!("at most {MAX_SECTIONS} sections, found {n}"),
        ));
    }
    let mut sections = Vec::new();
    let mut data_offset = 16 + 24 * n as usize;
    for i in 0..n as usize {
        let at = 16 + 24 * i;
        let (Some(id), Some(elem_size), Some(count), Some(clen)) = (
            read_u32(bytes, at),
            read_u32(bytes, at + 4),
            read_u64(bytes, at + 8),
            read_u64(bytes, at + 16),
        ) else {
            return Err(corrupt(source, at, "a complete section directory entry"));
        };
        let clen = usize::try_from(clen).unwrap_or(usize::MAX);
        if data_offset
            .checked_add(clen)
            .is_none_or(|end| end > bytes.len())
        {
            return Err(corrupt(
                source,
                at + 16,
                format!("section {id} within the file ({} bytes)", bytes.len()),
            ));
        }
        sections.push(Section {
            id,
            elem_size,
            count,
            data_offset,
            compressed_len: clen,
        });
        data_offset += clen;
    }
    let raw = |id: u32, elem_size: u32| -> Result<Vec<u8>, LoadError> {
        let Some(s) = sections.iter().find(|s| s.id == id) else {
            return Err(corrupt(source, 16, format!("a section with id {id}")));
        };
        if s.elem_size != elem_size {
            return Err(corrupt(
                source,
                s.data_offset,
                format!("section {id} with {elem_size}-byte elements"),
            ));
        }
        let Some(len) = s.count.checked_mul(u64::from(elem_size)) else {
            return Err(corrupt(
                source,
                s.data_offset,
                "a section length that fits 64 bits",
            ));
        };
        let data = &bytes[s.data_offset..s.data_offset + s.compressed_len];
        let mut out = Vec::new();
        let decoder = zstd::stream::read::Decoder::new(data)
            .map_err(|_| corrupt(source, s.data_offset, "a zstd frame"))?;
        // `take` bounds the output by the declared length without allocating it up front.
        decoder
            .take(len.saturating_add(1))
            .read_to_end(&mut out)
            .map_err(|_| {
                corrupt(
                    source,
                    s.data_offset,
                    format!("a valid zstd frame for section {id}"),
                )
            })?;
        if out.len() as u64 != len {
            return Err(corrupt(
                source,
                s.data_offset,
                format!("{len} bytes in section {id}, found {}", out.len()),
            ));
        }
        Ok(out)
    };
    let u64s = |id| -> Result<Vec<u64>, LoadError> {
        Ok(raw(id, 8)?
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect())
    };
    let u32s = |id| -> Result<Vec<u32>, LoadError> {
        Ok(raw(id, 4)?
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    };
    let blocks = BlockColumns {
        address: u64s(1)?,
        size: u64s(2)?,
        requested_size: u64s(3)?,
        usable_size: u64s(4)?,
        alloc_time_ns: u64s(5)?,
        free_time_ns: u64s(6)?,
        alloc_event: u64s(7)?,
        free_event: u64s(8)?,
        thread: u32s(9)?,
        site: u32s(10)?,
        flags: raw(11, 1)?,
    };
    if !blocks.is_consistent() {
        return Err(corrupt(source, 16, "block columns of equal length"));
    }
    let parent = u32s(20)?;
    let ips = u64s(21)?;
    let function = u32s(22)?;
    let file = u32s(23)?;
    let line = u32s(24)?;
    let module = u32s(25)?;
    let module_offset = u64s(26)?;
    let nodes = parent.len();
    if nodes == 0
        || [
            ips.len(),
            function.len(),
            file.len(),
            line.len(),
            module.len(),
            module_offset.len(),
        ]
        .iter()
        .any(|&l| l != nodes)
    {
        return Err(corrupt(
            source,
            16,
            "call-tree columns of equal, non-zero length",
        ));
    }
    if parent
        .iter()
        .enumerate()
        .skip(1)
        .any(|(n, &p)| p as usize >= n)
    {
        return Err(corrupt(
            source,
            16,
            "call-tree parents numbered before their children",
        ));
    }
    let string_bytes = raw(30, 1)?;
    let string_ends = u64s(31)?;
    let mut strings = Vec::with_capacity(string_ends.len());
    let mut start = 0usize;
    for &end in &string_ends {
        let end = usize::try_from(end).unwrap_or(usize::MAX);
        let Some(s) = string_bytes.get(start..end) else {
            return Err(corrupt(
                source,
                16,
                "string offsets inside the string section",
            ));
        };
        let Ok(s) = std::str::from_utf8(s) else {
            return Err(corrupt(source, 16, "UTF-8 strings"));
        };
        strings.push(s.to_owned());
        start = end;
    }
    if strings.first().is_none_or(|s| !s.is_empty()) {
        return Err(corrupt(source, 16, "the empty string as string 0"));
    }
    let string_count = strings.len();
    let threads = u32s(32)?;
    let str_ok = |id: &u32| (*id as usize) < string_count;
    if !(function.iter().all(str_ok)
        && file.iter().all(str_ok)
        && module.iter().all(str_ok)
        && threads.iter().all(str_ok))
    {
        return Err(corrupt(source, 16, "string ids below the string count"));
    }
    if blocks.site.iter().any(|&s| s as usize >= nodes)
        || blocks
            .thread
            .iter()
            .any(|&t| t as usize >= threads.len().max(1))
    {
        return Err(corrupt(source, 16, "block sites and threads that exist"));
    }
    let frames = (0..nodes)
        .map(|n| Frame {
            ip: ips[n],
            function: function[n],
            file: file[n],
            line: line[n],
            module: module[n],
            module_offset: module_offset[n],
        })
        .collect();
    let meta_json = raw(40, 1)?;
    let meta: MscMeta = serde_json::from_slice(&meta_json)
        .map_err(|e| corrupt(source, 16, format!("metadata JSON ({e})")))?;
    if blocks
        .alloc_event
        .iter()
        .chain(&blocks.free_event)
        .any(|&e| e > meta.meta.events)
    {
        return Err(corrupt(source, 16, "event indices below the event count"));
    }
    let mut warnings = Warnings::new();
    for w in meta.warnings {
        let Some(kind) = warn::static_kind(&w.kind) else {
            return Err(corrupt(
                source,
                16,
                format!("a known warning kind, found {:?}", w.kind),
            ));
        };
        if w.count > MAX_RESTORED_WARNINGS {
            return Err(corrupt(source, 16, "a plausible warning count"));
        }
        let locations: Vec<Location> = w
            .first
            .into_iter()
            .map(|(file, line, offset)| Location { file, line, offset })
            .collect();
        let fallback = Location::offset(source, 0);
        for i in 0..w.count as usize {
            let at = locations
                .get(i)
                .cloned()
                .unwrap_or_else(|| fallback.clone());
            warnings.add(kind, warn::message(kind), at);
        }
    }
    let mut meta_out = meta.meta;
    meta_out.source = source.to_owned();
    meta_out.format = crate::model::TraceFormat::Msc;
    Ok(Trace {
        meta: meta_out,
        blocks,
        strings: Strings::from_vec(strings),
        call_tree: CallTree::from_columns(parent, frames),
        threads,
        warnings,
    })
}
