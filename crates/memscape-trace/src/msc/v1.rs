//! Reader of version 1 of memscape's native trace format (`.msc`), kept so that files written
//! before version 2 still load. Version 1 was columnar, each column zstd-compressed, so loading is
//! decompression plus a little-endian copy into the column vectors, with no text parsing.
//!
//! Layout (all integers little-endian):
//!
//! | offset | size | content |
//! |---|---|---|
//! | 0 | 8 | magic `MEMSCAPE` |
//! | 8 | 4 | format version (currently 1) |
//! | 12 | 4 | number of sections `N` (at most 64) |
//! | 16 | 24·N | directory: per section `id: u32`, `element size: u16` + `codec: u16` (one u32, codec in the high half), `element count: u64`, `payload length: u64` |
//! | 16+24·N | … | the sections' payloads, in directory order |
//!
//! Codecs: 0 zstd of the little-endian elements; 1 constant (the payload is one element, for
//! block columns whose values are all equal, e.g. unknown usable sizes); 2 zstd of wrapping
//! differences to the previous element (sorted columns: alloc time, alloc event); 3 zstd of
//! wrapping differences to the same element of a base column (size − requested size, free time −
//! alloc time, free event − alloc event). Differences repeat a lot, which makes the file 4–5×
//! smaller and zstd's decoding much faster; undoing them is one add per element.
//!
//! Section ids: 1–11 block columns (address, size, requested size, usable size, alloc time,
//! free time, alloc event, free event as u64; thread, site as u32; flags as u8), 20–26 call tree
//! (parent u32, ip u64, function u32, file u32, line u32, module u32, module offset u64), 30
//! string bytes (u8, concatenated UTF-8), 31 string end offsets (u64), 32 thread name ids (u32),
//! 40 metadata (u8, JSON: [`crate::model::TraceMeta`] and the warning summary).
//!
//! A reader checks every length against the directory and the file size and never allocates more
//! than the bytes actually decompressed (constant columns are expanded to the length of the alloc
//! event column, which is never constant), so a forged directory gives an error, not an
//! allocation.

use std::io::Read;

use crate::LoadError;
use crate::model::{BlockColumns, BlockVecs, CallTree, Frame, Strings, Trace};

use super::{MAGIC, MscMeta, corrupt, read_u32, read_u64};
/// The version this module reads.
pub const VERSION: u32 = 1;
const MAX_SECTIONS: u32 = 64;
/// Codecs, in the high 16 bits of a directory entry's element-size field.
const CODEC_ZSTD: u32 = 0;
const CODEC_CONSTANT: u32 = 1;
/// zstd of the differences to the previous element (wrapping), for sorted columns: the
/// differences repeat, so zstd decodes far fewer sequences.
const CODEC_ZSTD_DELTA: u32 = 2;
/// zstd of the differences to the same element of the base section ([`base_section`]): free
/// minus alloc (lifetimes), extent minus requested size (zero unless usable sizes are known).
const CODEC_ZSTD_MINUS_PREVIOUS_SECTION: u32 = 3;
/// The block column every other block column's length is checked against; never constant
/// (event indices strictly increase), so its length is what the data really holds.
const LENGTH_COLUMN: u32 = 7;

/// The section a [`CODEC_ZSTD_MINUS_PREVIOUS_SECTION`] column is stored relative to.
fn base_section(id: u32) -> Option<u32> {
    match id {
        2 => Some(3),
        6 => Some(5),
        8 => Some(7),
        _ => None,
    }
}

struct Section {
    id: u32,
    elem_size: u32,
    codec: u32,
    count: u64,
    data_offset: usize,
    compressed_len: usize,
}

/// Expands a constant-codec column to `n` copies of its value (`n` is the length column's real
/// length, so this never allocates more than the data justifies).
fn expand<T: Copy>(
    source: &str,
    sections: &[Section],
    id: u32,
    v: Vec<T>,
    n: usize,
) -> Result<Vec<T>, LoadError> {
    let Some(s) = sections.iter().find(|s| s.id == id) else {
        return Ok(v);
    };
    if s.codec != CODEC_CONSTANT {
        return Ok(v);
    }
    if s.count != n as u64 || v.len() != 1 {
        return Err(corrupt(
            source,
            s.data_offset,
            format!("section {id} as long as the event column ({n})"),
        ));
    }
    Ok(vec![v[0]; n])
}

/// Decodes version-1 `.msc` bytes; `source` names the input in errors.
pub(crate) fn from_msc_v1_bytes(source: &str, bytes: &[u8]) -> Result<Trace, LoadError> {
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
            elem_size: elem_size & 0xffff,
            codec: elem_size >> 16,
            count,
            data_offset,
            compressed_len: clen,
        });
        data_offset += clen;
    }
    // Finds a section and checks its element size; returns it with its byte length.
    let find = |id: u32, elem_size: u32| -> Result<(&Section, u64), LoadError> {
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
        Ok((s, len))
    };
    // Decompresses a section chunk by chunk, handing each chunk of whole elements to `sink`.
    // Output grows with what the frame really holds (never pre-sized from the directory), and
    // is decoded straight into the column, so each byte of a column is written once.
    let stream = |id: u32, elem_size: u32, sink: &mut dyn FnMut(&[u8])| -> Result<(), LoadError> {
        let (s, len) = find(id, elem_size)?;
        let data = &bytes[s.data_offset..s.data_offset + s.compressed_len];
        if s.codec == CODEC_CONSTANT {
            // Expanded by the caller once the length column is known.
            if data.len() != elem_size as usize || id == LENGTH_COLUMN || !(1..=11).contains(&id) {
                return Err(corrupt(
                    source,
                    s.data_offset,
                    format!("one {elem_size}-byte constant for section {id}"),
                ));
            }
            sink(data);
            return Ok(());
        }
        if ![
            CODEC_ZSTD,
            CODEC_ZSTD_DELTA,
            CODEC_ZSTD_MINUS_PREVIOUS_SECTION,
        ]
        .contains(&s.codec)
        {
            return Err(corrupt(
                source,
                s.data_offset,
                format!("a known codec for section {id}, found {}", s.codec),
            ));
        }
        let bad_frame = || {
            corrupt(
                source,
                s.data_offset,
                format!("a valid zstd frame for section {id}"),
            )
        };
        let mut decoder =
            zstd::stream::read::Decoder::with_buffer(data).map_err(|_| bad_frame())?;
        let mut buf = vec![0u8; 1 << 20];
        let mut filled = 0usize;
        let mut total = 0u64;
        loop {
            let n = decoder.read(&mut buf[filled..]).map_err(|_| bad_frame())?;
            if n == 0 {
                break;
            }
            total += n as u64;
            if total > len {
                break;
            }
            filled += n;
            let whole = filled - filled % elem_size as usize;
            if filled == buf.len() || whole > (1 << 19) {
                sink(&buf[..whole]);
                buf.copy_within(whole..filled, 0);
                filled -= whole;
            }
        }
        if total != len || !filled.is_multiple_of(elem_size as usize) {
            return Err(corrupt(
                source,
                s.data_offset,
                format!("{len} bytes in section {id}, found {total}"),
            ));
        }
        sink(&buf[..filled]);
        Ok(())
    };
    let raw = |id: u32, elem_size: u32| -> Result<Vec<u8>, LoadError> {
        let mut out = Vec::new();
        stream(id, elem_size, &mut |chunk| out.extend_from_slice(chunk))?;
        Ok(out)
    };
    let u64s = |id| -> Result<Vec<u64>, LoadError> {
        let mut out = Vec::new();
        stream(id, 8, &mut |chunk| {
            out.extend(
                chunk
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])),
            );
        })?;
        Ok(out)
    };
    let u32s = |id| -> Result<Vec<u32>, LoadError> {
        let mut out = Vec::new();
        stream(id, 4, &mut |chunk| {
            out.extend(
                chunk
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            );
        })?;
        Ok(out)
    };
    // The block columns are independent frames: decode them on all cores.
    let (
        address,
        size,
        requested_size,
        usable_size,
        alloc_time_ns,
        free_time_ns,
        alloc_event,
        free_event,
        thread,
        site,
        flags,
    ) = std::thread::scope(|scope| {
        let a = scope.spawn(|| u64s(1));
        let b = scope.spawn(|| u64s(2));
        let c = scope.spawn(|| u64s(3));
        let d = scope.spawn(|| u64s(4));
        let e = scope.spawn(|| u64s(5));
        let f = scope.spawn(|| u64s(6));
        let g = scope.spawn(|| u64s(7));
        let h = scope.spawn(|| u64s(8));
        let thread = u32s(9);
        let site = u32s(10);
        let flags = raw(11, 1);
        let join = |h: std::thread::ScopedJoinHandle<'_, Result<Vec<u64>, LoadError>>| {
            h.join()
                .unwrap_or_else(|_| Err(corrupt(source, 16, "a decodable block column")))
        };
        (
            join(a),
            join(b),
            join(c),
            join(d),
            join(e),
            join(f),
            join(g),
            join(h),
            thread,
            site,
            flags,
        )
    });
    let codec_of = |id: u32| {
        sections
            .iter()
            .find(|s| s.id == id)
            .map_or(CODEC_ZSTD, |s| s.codec)
    };
    let undelta = |id: u32, mut v: Vec<u64>, base: Option<&[u64]>| -> Result<Vec<u64>, LoadError> {
        match (codec_of(id), base) {
            (CODEC_ZSTD_DELTA, _) => {
                let mut acc = 0u64;
                for x in &mut v {
                    acc = acc.wrapping_add(*x);
                    *x = acc;
                }
            }
            (CODEC_ZSTD_MINUS_PREVIOUS_SECTION, Some(base)) if base.len() == v.len() => {
                for (x, b) in v.iter_mut().zip(base) {
                    *x = x.wrapping_add(*b);
                }
            }
            (CODEC_ZSTD_MINUS_PREVIOUS_SECTION, _) => {
                return Err(corrupt(
                    source,
                    16,
                    format!(
                        "section {id} as long as its base section {:?}",
                        base_section(id)
                    ),
                ));
            }
            _ => {}
        }
        Ok(v)
    };
    let alloc_event = undelta(7, alloc_event?, None)?;
    let n = alloc_event.len();
    let expand_u64 = |id: u32, v: Vec<u64>| -> Result<Vec<u64>, LoadError> {
        expand(source, &sections, id, v, n)
    };
    let expand_u32 = |id: u32, v: Vec<u32>| -> Result<Vec<u32>, LoadError> {
        expand(source, &sections, id, v, n)
    };
    let blocks = BlockVecs {
        address: expand_u64(1, address?)?,
        size: Vec::new(),
        requested_size: expand_u64(3, requested_size?)?,
        usable_size: expand_u64(4, usable_size?)?,
        alloc_time_ns: Vec::new(),
        free_time_ns: Vec::new(),
        free_event: undelta(8, free_event?, Some(&alloc_event))?,
        alloc_event,
        thread: expand_u32(9, thread?)?,
        site: expand_u32(10, site?)?,
        flags: expand(source, &sections, 11, flags?, n)?,
    };
    let mut blocks = blocks;
    blocks.size = undelta(2, expand_u64(2, size?)?, Some(&blocks.requested_size))?;
    blocks.alloc_time_ns = undelta(5, alloc_time_ns?, None)?;
    blocks.free_time_ns = undelta(6, free_time_ns?, Some(&blocks.alloc_time_ns))?;
    let blocks = BlockColumns::from(blocks);
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
    let m = &meta.meta;
    let counted = [
        m.allocs,
        m.frees,
        m.unknown_frees,
        m.double_frees,
        m.mmaps,
        m.munmaps,
    ]
    .iter()
    .try_fold(0u64, |acc, &x| acc.checked_add(x));
    if m.allocs.checked_add(m.mmaps) != Some(blocks.len() as u64)
        || counted != Some(m.events)
        || m.reallocs > m.frees
        || m.peak_event > m.events
    {
        return Err(corrupt(
            source,
            16,
            "metadata counts that agree with the blocks (allocs + mmaps = blocks, events = allocs + frees + unknown + double frees + mmaps + munmaps)",
        ));
    }
    if blocks
        .alloc_event
        .iter()
        .chain(&blocks.free_event)
        .any(|&e| e > meta.meta.events)
    {
        return Err(corrupt(source, 16, "event indices below the event count"));
    }
    let warnings = super::restore_warnings(source, meta.warnings)?;
    let mut meta_out = meta.meta;
    meta_out.source = source.to_owned();
    meta_out.format = crate::model::TraceFormat::Msc;
    let processes = vec![crate::process::Process::from_meta(&meta_out)];
    Ok(Trace {
        meta: meta_out,
        blocks,
        strings: Strings::from_vec(strings),
        call_tree: CallTree::from_columns(parent, frames),
        thread_process: vec![0; threads.len()],
        processes,
        pools: Vec::new(),
        threads,
        warnings,
        event_order_cache: Default::default(),
    })
}
