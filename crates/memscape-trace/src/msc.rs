//! memscape's native trace format (`.msc`), version 4: columnar, each column encoded for fast
//! decoding *and* small size, block columns decoded on first use (the load checks and keeps
//! the file; see [`Column`]) — or, in a *mappable* file ([`MscOptions::mappable`]), stored
//! raw and used in place from a memory mapping.
//!
//! Layout (all integers little-endian):
//!
//! | offset | size | content |
//! |---|---|---|
//! | 0 | 8 | magic `MEMSCAPE` |
//! | 8 | 4 | format version (4; versions 1, 2 and 3 are still read) |
//! | 12 | 4 | number of sections `N` (at most 64) |
//! | 16 | 40·N | directory: per section `id: u32`, `element size: u8`, `transform: u8`, `packing: u8`, `time shift: u8`, `element count: u64`, `payload offset: u64` (from the file start, a multiple of 8), `payload length: u64`, `checksum: u64` (of the payload, see `checksum`; 0 and not checked for raw block sections) |
//! | … | … | payloads, each starting 8-byte aligned |
//!
//! Version 2 has 32-byte entries: no checksum, and 0 where the shift is. A shift `s` means the
//! decoded values are shifted left by `s` (times stored rounded to 2^s ns, [`MscOptions`]).
//! Version 3 is version 4 without packing 4.
//!
//! A value of a numeric section is decoded in two steps: *packing* gives a stream of u64
//! "codes", *transform* turns codes into values.
//!
//! Packings:
//!
//! | id | name | payload |
//! |---|---|---|
//! | 0 | raw | the elements, little-endian: byte sections, and the block columns of a mappable file (sections 1–11, transform none, no shift, exactly `count · element size` bytes; no checksum: what the views rely on is checked on first use) |
//! | 1 | bit-packed | chunks of 1024 codes: `C` chunk references (u64 each), then `C` chunk bit widths (u8 each, padded to whole u64 words), then per chunk, per group of 64 codes (the last one padded with zeros), `width` u64 words holding the 64 codes minus the chunk reference, LSB first. A chunk whose codes are all equal has width 0 and no data words. |
//! | 2 | byte planes + zstd | one byte `k` (1–8), one byte `b` (6–20), then one zstd frame of `k · count` bytes: per block of 2^b codes (the last one shorter), byte plane 0 (the low byte of every code of the block), plane 1, …, plane `k − 1` |
//! | 3 | zstd | one zstd frame of the little-endian elements (byte sections) |
//! | 4 | context-coded (version 4) | one byte: the context model (1: event times, `crate::ppm::EventTimeContexts`), then a range-coded stream of the codes (`crate::ppm`), padded with zeros to at least one byte per 256 codes |
//!
//! Transforms:
//!
//! | id | name | value |
//! |---|---|---|
//! | 0 | none | code |
//! | 1 | delta | running (wrapping) sum of the codes (sorted columns: alloc event, event times) |
//! | 2 | zigzag delta | running sum of the zigzag-decoded codes (`c >> 1 ^ -(c & 1)`: addresses) |
//! | 3 | plus base | code + the same element of the base section (wrapping): size = requested + code, usable = size + code, free time = alloc time + code, free event = alloc event + code |
//!
//! Section ids: 1–11 block columns (address, size, requested size, usable size, alloc time,
//! free time, alloc event, free event as u64; thread, site as u32; flags as u8), 12 event times
//! (u64, one per event plus the trace end; when present, sections 5 and 6 are absent and a
//! block's alloc/free time is the time of its alloc/free event), 20–26 call tree (parent u32, ip
//! u64, function u32, file u32, line u32, module u32, module offset u64), 30 string bytes (u8,
//! concatenated UTF-8), 31 string end offsets (u64), 32 thread name ids (u32), 40 metadata (u8,
//! JSON: [`crate::model::TraceMeta`] and the warning summary).
//!
//! Why these encodings: the bit-packed codes decode with constant shifts (one specialized loop
//! per width), at several bytes of output per nanosecond, without any entropy decoder; byte
//! planes + zstd are used only where they are much smaller (values that repeat, such as sizes
//! and addresses). Storing one time per event instead of alloc and free times per block turns
//! nanosecond lifetimes (2–4 bytes each) into small deltas between consecutive events, and the
//! context model codes those in ~2.6 bits each on a recording (byte planes + zstd: 4.1), by
//! learning the step from one event to the next per call site and kinds of events. It is used
//! where it is smaller; it decodes at ~25 ns per value, after the event and site columns it
//! takes its contexts from.
//!
//! A reader checks every offset and length against the file, every bit width and every base,
//! and sizes no allocation from a count the payload cannot back: a bit-packed chunk of 1024
//! values costs at least 9 payload bytes; zstd-coded sections are pre-sized for at most 256
//! elements per payload byte and grow only as their frame really decodes (at most
//! `memscape_io::DEFAULT_MAX_DECOMPRESSED` bytes, the limit on compressed text inputs too), so a
//! forged directory gives an error, not a huge allocation; a context-coded section backs its
//! count by its padding. `BlockColumns::prefetch` decodes several block columns on parallel
//! threads.

use std::io::Read;
use std::path::Path;
use std::sync::{Arc, Mutex};

use memscape_io::{Location, WarningKind, Warnings};

use crate::LoadError;
use crate::model::{
    BlockColumn, BlockColumns, BlockVecs, CallTree, Column, Frame, Strings, Trace, TraceMeta,
    Values,
};
use crate::warn;

pub const MAGIC: &[u8; 8] = b"MEMSCAPE";
/// The version [`to_msc_bytes`] writes.
pub const VERSION: u32 = 4;
/// Version 3: the same layout without packing 4 (read as version 4 is).
const VERSION_V3: u32 = 3;
/// Version 2 (no checksums, no time resolution): still read, decoded eagerly.
const VERSION_V2: u32 = 2;
const MAX_SECTIONS: u32 = 64;
const HEADER: usize = 16;
/// Directory entry size of version 3 (version 2: [`DIR_ENTRY_V2`]).
const DIR_ENTRY: usize = 40;
const DIR_ENTRY_V2: usize = 32;

const PACK_RAW: u8 = 0;
const PACK_BITS: u8 = 1;
const PACK_PLANES: u8 = 2;
const PACK_ZSTD: u8 = 3;
/// Context-modelled range coding (`crate::ppm`): a model id byte, then the coded bytes
/// (at least one byte per [`PRESIZE_PER_BYTE`] values). Version 4.
const PACK_CONTEXT: u8 = 4;

const XF_NONE: u8 = 0;
const XF_DELTA: u8 = 1;
const XF_ZIGZAG_DELTA: u8 = 2;
const XF_PLUS_BASE: u8 = 3;

/// Codes per bit-packed chunk (one reference and one width each).
const CHUNK: usize = 1024;
/// Codes per packed group: 64 codes of width `w` fill exactly `w` u64 words.
const GROUP: usize = 64;
/// Codes per block of byte planes.
/// Codes per block of byte planes, log2 (stored in each section). Larger blocks compress better
/// (zstd's literal statistics see one plane longer: 2^13 / 2^16 / 2^18 codes give 3.33 / 3.18 /
/// 3.13 MB of event times on a 3.8M-event recording) and need a larger decode buffer (k · 2^16
/// bytes, ≤ 512 KiB).
const PLANE_BLOCK_LOG2: u8 = 16;
/// Block sizes a reader accepts (2^6 ..= 2^20 codes: the buffer stays at most 8 MiB).
const PLANE_BLOCK_LOG2_RANGE: std::ops::RangeInclusive<u8> = 6..=20;
/// Most decoded bytes a zstd-coded section may claim (the limit memscape-io puts on compressed
/// text inputs too).
const MAX_DECODED: u64 = memscape_io::DEFAULT_MAX_DECOMPRESSED;
/// zstd-coded sections are pre-sized for at most this many elements per payload byte; a
/// section that really decodes to more grows as its data arrives, so a forged count costs
/// nothing until the frame backs it.
const PRESIZE_PER_BYTE: usize = 256;
/// zstd level of the writer: decoding speed does not depend on it. On a 3.8M-event recording
/// (version 4, event times context-coded), level 9 / 12 / 15 / 19 give 1.398 / 1.354 / 1.348 /
/// 1.329 MB in 0.58 / 0.70 / 2.7 / 6.6 s of CPU for the whole conversion.
const ZSTD_LEVEL: i32 = 12;
/// Byte planes replace bit-packing only when this much smaller (bit-packing decodes faster).
const PLANES_WORTH_IT: f64 = 0.8;

mod id {
    pub const ADDRESS: u32 = 1;
    pub const SIZE: u32 = 2;
    pub const REQUESTED: u32 = 3;
    pub const USABLE: u32 = 4;
    pub const ALLOC_TIME: u32 = 5;
    pub const FREE_TIME: u32 = 6;
    pub const ALLOC_EVENT: u32 = 7;
    pub const FREE_EVENT: u32 = 8;
    pub const THREAD: u32 = 9;
    pub const SITE: u32 = 10;
    pub const FLAGS: u32 = 11;
    pub const EVENT_TIME: u32 = 12;
    pub const TREE_PARENT: u32 = 20;
    pub const TREE_IP: u32 = 21;
    pub const TREE_FUNCTION: u32 = 22;
    pub const TREE_FILE: u32 = 23;
    pub const TREE_LINE: u32 = 24;
    pub const TREE_MODULE: u32 = 25;
    pub const TREE_MODULE_OFFSET: u32 = 26;
    pub const STRING_BYTES: u32 = 30;
    pub const STRING_ENDS: u32 = 31;
    pub const THREADS: u32 = 32;
    pub const META: u32 = 40;
}

/// The section a [`XF_PLUS_BASE`] section is stored relative to.
fn base_section(section: u32) -> Option<u32> {
    match section {
        id::SIZE => Some(id::REQUESTED),
        id::USABLE => Some(id::SIZE),
        id::FREE_TIME => Some(id::ALLOC_TIME),
        id::FREE_EVENT => Some(id::ALLOC_EVENT),
        _ => None,
    }
}

/// Warning counts above this in a `.msc` file are taken as corruption.
const MAX_RESTORED_WARNINGS: u64 = 1 << 40;

#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct WarningRecord {
    pub(crate) kind: String,
    pub(crate) count: u64,
    pub(crate) first: Vec<(String, Option<u64>, Option<u64>)>,
}

#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct MscMeta {
    pub(crate) meta: TraceMeta,
    pub(crate) warnings: Vec<WarningRecord>,
}

// ------------------------------------------------------------------------------------------
// Encoding

/// One encoded section before it is laid out in the file.
struct Encoded {
    id: u32,
    elem_size: u8,
    transform: u8,
    packing: u8,
    /// Values are stored shifted right by this many bits (times rounded to 2^shift ns).
    shift: u8,
    count: u64,
    payload: Vec<u8>,
}

fn zigzag(x: u64) -> u64 {
    (x << 1) ^ ((x as i64 >> 63) as u64)
}

fn unzigzag(c: u64) -> u64 {
    (c >> 1) ^ (c & 1).wrapping_neg()
}

/// The codes of `values` under a transform (`base` for [`XF_PLUS_BASE`]).
fn codes(values: &[u64], transform: u8, base: Option<&[u64]>) -> Vec<u64> {
    let mut prev = 0u64;
    match (transform, base) {
        (XF_DELTA, _) => values
            .iter()
            .map(|&v| v.wrapping_sub(std::mem::replace(&mut prev, v)))
            .collect(),
        (XF_ZIGZAG_DELTA, _) => values
            .iter()
            .map(|&v| zigzag(v.wrapping_sub(std::mem::replace(&mut prev, v))))
            .collect(),
        (XF_PLUS_BASE, Some(base)) => values
            .iter()
            .zip(base)
            .map(|(&v, &b)| v.wrapping_sub(b))
            .collect(),
        _ => values.to_vec(),
    }
}

fn bit_width(x: u64) -> u32 {
    64 - x.leading_zeros()
}

/// Bit-packs codes (packing [`PACK_BITS`]).
fn pack_bits(codes: &[u64]) -> Vec<u8> {
    let chunks = codes.len().div_ceil(CHUNK);
    let mut refs = Vec::with_capacity(chunks);
    let mut widths = Vec::with_capacity(chunks);
    let mut data: Vec<u64> = Vec::new();
    for chunk in codes.chunks(CHUNK) {
        let min = chunk.iter().copied().min().unwrap_or(0);
        let spread = chunk.iter().map(|&c| c - min).max().unwrap_or(0);
        let w = bit_width(spread) as usize;
        refs.push(min);
        widths.push(w as u8);
        if w == 0 {
            continue;
        }
        for group in chunk.chunks(GROUP) {
            let start = data.len();
            data.resize(start + w, 0);
            let words = &mut data[start..];
            for (j, &c) in group.iter().enumerate() {
                let x = c - min;
                let bit = j * w;
                let (word, shift) = (bit / 64, bit % 64);
                words[word] |= x << shift;
                if shift + w > 64 {
                    words[word + 1] |= x >> (64 - shift);
                }
            }
        }
    }
    let mut out = Vec::with_capacity(8 * (refs.len() + data.len()) + widths.len() + 8);
    for r in refs {
        out.extend_from_slice(&r.to_le_bytes());
    }
    out.extend_from_slice(&widths);
    out.resize(out.len().next_multiple_of(8), 0);
    for d in data {
        out.extend_from_slice(&d.to_le_bytes());
    }
    out
}

/// Byte planes of the low `k` bytes of every code, in blocks of 2^[`PLANE_BLOCK_LOG2`] codes (so
/// that a reader decompresses block by block into one small reused buffer), zstd-compressed as one
/// frame (packing [`PACK_PLANES`]).
fn pack_planes(codes: &[u64], k: usize) -> std::io::Result<Vec<u8>> {
    let mut planes = Vec::with_capacity(k * codes.len());
    let block_log2 = PLANE_BLOCK_LOG2;
    for block in codes.chunks(1 << block_log2) {
        for j in 0..k {
            planes.extend(block.iter().map(|&c| (c >> (8 * j)) as u8));
        }
    }
    let mut out = vec![k as u8, block_log2];
    out.extend_from_slice(&zstd::bulk::compress(&planes, ZSTD_LEVEL)?);
    Ok(out)
}

/// Encodes a numeric section: the smaller of bit-packing and byte planes + zstd, preferring
/// bit-packing (faster to decode) unless byte planes save a good share.
fn encode_numeric(
    section: u32,
    elem_size: u8,
    transform: u8,
    codes: &[u64],
) -> std::io::Result<Encoded> {
    let bits = pack_bits(codes);
    let max = codes.iter().copied().max().unwrap_or(0);
    let k = (bit_width(max) as usize).div_ceil(8);
    let mut best = (PACK_BITS, bits);
    // (A constant column is one plane of zeros: zstd makes it nearly nothing, where
    // bit-packing still spends 9 bytes per chunk of 1024.)
    if codes.len() >= GROUP {
        let planes = pack_planes(codes, k.max(1))?;
        if (planes.len() as f64) < best.1.len() as f64 * PLANES_WORTH_IT {
            best = (PACK_PLANES, planes);
        }
    }
    Ok(Encoded {
        id: section,
        elem_size,
        transform,
        packing: best.0,
        shift: 0,
        count: codes.len() as u64,
        payload: best.1,
    })
}

/// Encodes `values` with whichever of `transforms` gives the smallest section.
fn encode_best(
    section: u32,
    elem_size: u8,
    values: &[u64],
    transforms: &[u8],
    base: Option<&[u64]>,
) -> std::io::Result<Encoded> {
    let mut best: Option<Encoded> = None;
    for &t in transforms {
        let e = encode_numeric(section, elem_size, t, &codes(values, t, base))?;
        if best
            .as_ref()
            .is_none_or(|b| e.payload.len() < b.payload.len())
        {
            best = Some(e);
        }
    }
    best.ok_or_else(|| std::io::Error::other("no transform to encode with"))
}

/// Event times (delta-coded) with the context model of `crate::ppm` when that is smaller than
/// the best plain packing `plain`.
fn with_context_coding(plain: Encoded, values: &[u64], trace: &Trace) -> Encoded {
    let b = &trace.blocks;
    let order = crate::ppm::event_order(&b.alloc_event, &b.free_event, trace.meta.events);
    let contexts = crate::ppm::EventTimeContexts {
        order: &order,
        site: &b.site,
    };
    let deltas = codes(values, XF_DELTA, None);
    let mut payload = vec![crate::ppm::MODEL_EVENT_TIMES];
    payload.extend(crate::ppm::encode(
        &deltas,
        crate::ppm::EVENT_TIME_LENGTH_CONTEXTS,
        |i| contexts.context(i),
    ));
    // The reader accepts at most PRESIZE_PER_BYTE values per payload byte.
    payload.resize(
        payload
            .len()
            .max(deltas.len().div_ceil(PRESIZE_PER_BYTE) + 1),
        0,
    );
    if payload.len() >= plain.payload.len() {
        return plain;
    }
    Encoded {
        id: plain.id,
        elem_size: 8,
        transform: XF_DELTA,
        packing: PACK_CONTEXT,
        shift: 0,
        count: deltas.len() as u64,
        payload,
    }
}

fn encode_bytes(section: u32, bytes: &[u8]) -> std::io::Result<Encoded> {
    let z = zstd::bulk::compress(bytes, ZSTD_LEVEL)?;
    let (packing, payload) = if z.len() < bytes.len() {
        (PACK_ZSTD, z)
    } else {
        (PACK_RAW, bytes.to_vec())
    };
    Ok(Encoded {
        id: section,
        elem_size: 1,
        transform: XF_NONE,
        packing,
        shift: 0,
        count: bytes.len() as u64,
        payload,
    })
}

/// One time per event (index `events` = the time never-freed blocks end at), when the blocks'
/// times are exactly the times of their events (true for every importer); `None` otherwise.
fn event_times(trace: &Trace) -> Option<Vec<u64>> {
    let b = &trace.blocks;
    let events = usize::try_from(trace.meta.events).ok()?;
    let mut times = vec![0u64; events.checked_add(1)?];
    let mut known = vec![false; events + 1];
    let mut set = |e: u64, t: u64| -> Option<()> {
        let e = usize::try_from(e).ok()?;
        let slot = times.get_mut(e)?;
        if known[e] && *slot != t {
            return None;
        }
        known[e] = true;
        *slot = t;
        Some(())
    };
    for i in 0..b.len() {
        set(b.alloc_event[i], b.alloc_time_ns[i])?;
        set(b.free_event[i], b.free_time_ns[i])?;
    }
    // Events without a block (unmatched frees) take the previous time: a delta of zero.
    let mut prev = 0u64;
    for (t, k) in times.iter_mut().zip(&known) {
        if *k {
            prev = *t;
        } else {
            *t = prev;
        }
    }
    if !known[events] {
        times[events] = trace.meta.end_time_ns.max(prev);
    }
    Some(times)
}

fn widen<T: Copy + Into<u64>>(values: &[T]) -> Vec<u64> {
    values.iter().map(|&v| v.into()).collect()
}

/// Choices of the `.msc` writer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MscOptions {
    /// Times are stored rounded down to multiples of 2^`time_resolution_log2` nanoseconds (0:
    /// exact, the default). A recording's nanosecond times are most of its file (the context
    /// coder spends ~2.6 bits per event on them); 4 (16 ns) takes a third off, 5 half.
    /// Event order is kept exactly either way (event indices).
    pub time_resolution_log2: u8,
    /// Block columns stored uncompressed, as they are in memory (packing 0, little-endian,
    /// 8-byte aligned), so that `read_msc` maps the file and hands the columns to the views
    /// without decoding or copying them (73 bytes per block on disk instead of ~0.1–1).
    /// For large traces loaded again and again; not the default.
    pub mappable: bool,
}

/// Encodes a trace as `.msc` bytes (exact times). `progress` is called with a fraction in 0..=1
/// per column.
pub fn to_msc_bytes(trace: &Trace, progress: &mut dyn FnMut(f32)) -> std::io::Result<Vec<u8>> {
    to_msc_bytes_with(trace, &MscOptions::default(), progress)
}

/// [`to_msc_bytes`] with writer options.
pub fn to_msc_bytes_with(
    trace: &Trace,
    options: &MscOptions,
    progress: &mut dyn FnMut(f32),
) -> std::io::Result<Vec<u8>> {
    let b = &trace.blocks;
    // A trace loaded from `.msc` decodes its columns on first use: all at once, in parallel.
    b.prefetch(&BlockColumn::ALL);
    let shift = options.time_resolution_log2;
    if shift >= 64 {
        return Err(std::io::Error::other("time resolution of at most 2^63 ns"));
    }
    if options.mappable {
        return mappable_bytes(trace, shift, progress);
    }
    let event_times = event_times(trace);
    let quantized = |values: &[u64]| -> Vec<u64> { values.iter().map(|&v| v >> shift).collect() };
    let with_shift = |mut e: Encoded| {
        e.shift = shift;
        e
    };
    // Independent columns are encoded on parallel threads (zstd at level 6 is the slow part).
    type Job<'a> = Box<dyn FnOnce() -> std::io::Result<Vec<Encoded>> + Send + 'a>;
    let jobs: Vec<Job<'_>> = vec![
        Box::new(|| {
            Ok(vec![encode_best(
                id::ADDRESS,
                8,
                &b.address,
                &[XF_NONE, XF_ZIGZAG_DELTA],
                None,
            )?])
        }),
        Box::new(|| {
            Ok(vec![
                encode_best(id::REQUESTED, 8, &b.requested_size, &[XF_NONE], None)?,
                encode_best(
                    id::SIZE,
                    8,
                    &b.size,
                    &[XF_PLUS_BASE],
                    Some(b.requested_size.as_slice()),
                )?,
                encode_best(
                    id::USABLE,
                    8,
                    &b.usable_size,
                    &[XF_NONE, XF_PLUS_BASE],
                    Some(b.size.as_slice()),
                )?,
            ])
        }),
        Box::new(|| {
            Ok(vec![
                encode_best(id::ALLOC_EVENT, 8, &b.alloc_event, &[XF_DELTA], None)?,
                encode_best(
                    id::FREE_EVENT,
                    8,
                    &b.free_event,
                    &[XF_PLUS_BASE],
                    Some(b.alloc_event.as_slice()),
                )?,
            ])
        }),
        Box::new(|| match &event_times {
            Some(times) => {
                let times = quantized(times);
                let plain = encode_best(id::EVENT_TIME, 8, &times, &[XF_DELTA], None)?;
                Ok(vec![with_shift(with_context_coding(plain, &times, trace))])
            }
            // Plus-base cannot be combined with a shift: free times delta-coded on their own.
            None if shift > 0 => Ok(vec![
                with_shift(encode_best(
                    id::ALLOC_TIME,
                    8,
                    &quantized(&b.alloc_time_ns),
                    &[XF_DELTA],
                    None,
                )?),
                with_shift(encode_best(
                    id::FREE_TIME,
                    8,
                    &quantized(&b.free_time_ns),
                    &[XF_NONE, XF_ZIGZAG_DELTA],
                    None,
                )?),
            ]),
            None => Ok(vec![
                encode_best(id::ALLOC_TIME, 8, &b.alloc_time_ns, &[XF_DELTA], None)?,
                encode_best(
                    id::FREE_TIME,
                    8,
                    &b.free_time_ns,
                    &[XF_PLUS_BASE],
                    Some(b.alloc_time_ns.as_slice()),
                )?,
            ]),
        }),
        Box::new(|| {
            let mut sections = vec![
                encode_best(id::THREAD, 4, &widen(&b.thread), &[XF_NONE], None)?,
                encode_best(id::SITE, 4, &widen(&b.site), &[XF_NONE], None)?,
                encode_best(id::FLAGS, 1, &widen(&b.flags), &[XF_NONE], None)?,
            ];
            sections.extend(tree_and_strings(trace)?);
            Ok(sections)
        }),
    ];
    let total = jobs.len() as f32;
    let results: Vec<std::io::Result<Vec<Encoded>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = jobs.into_iter().map(|job| scope.spawn(job)).collect();
        handles
            .into_iter()
            .enumerate()
            .map(|(i, h)| {
                progress((i + 1) as f32 / (total + 1.0));
                h.join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("column encoder panicked")))
            })
            .collect()
    });
    let mut sections = Vec::new();
    for r in results {
        sections.extend(r?);
    }
    sections.push(meta_section(trace)?);
    progress(1.0);
    Ok(lay_out(&sections))
}

/// The metadata section (JSON of the trace meta and the warning summary).
fn meta_section(trace: &Trace) -> std::io::Result<Encoded> {
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
    encode_bytes(id::META, &json)
}

/// The call tree, strings and thread names.
fn tree_and_strings(trace: &Trace) -> std::io::Result<Vec<Encoded>> {
    let t = &trace.call_tree;
    let mut string_bytes = Vec::new();
    let mut string_ends = Vec::with_capacity(trace.strings.len());
    for s in trace.strings.iter() {
        string_bytes.extend_from_slice(s.as_bytes());
        string_ends.push(string_bytes.len() as u64);
    }
    let frames = &t.frames;
    let column = |f: fn(&Frame) -> u64| frames.iter().map(f).collect::<Vec<u64>>();
    Ok(vec![
        encode_best(id::TREE_PARENT, 4, &widen(&t.parent), &[XF_NONE], None)?,
        encode_best(id::TREE_IP, 8, &column(|f| f.ip), &[XF_NONE], None)?,
        encode_best(
            id::TREE_FUNCTION,
            4,
            &column(|f| f.function.into()),
            &[XF_NONE],
            None,
        )?,
        encode_best(
            id::TREE_FILE,
            4,
            &column(|f| f.file.into()),
            &[XF_NONE],
            None,
        )?,
        encode_best(
            id::TREE_LINE,
            4,
            &column(|f| f.line.into()),
            &[XF_NONE],
            None,
        )?,
        encode_best(
            id::TREE_MODULE,
            4,
            &column(|f| f.module.into()),
            &[XF_NONE],
            None,
        )?,
        encode_best(
            id::TREE_MODULE_OFFSET,
            8,
            &column(|f| f.module_offset),
            &[XF_NONE],
            None,
        )?,
        encode_bytes(id::STRING_BYTES, &string_bytes)?,
        encode_best(id::STRING_ENDS, 8, &string_ends, &[XF_DELTA], None)?,
        encode_best(id::THREADS, 4, &widen(&trace.threads), &[XF_NONE], None)?,
    ])
}

/// A raw (packing 0) block section: the values as they are in memory, little-endian.
fn raw_section<T: bytemuck::Pod>(id: u32, values: &[T]) -> Encoded {
    Encoded {
        id,
        elem_size: std::mem::size_of::<T>() as u8,
        transform: XF_NONE,
        packing: PACK_RAW,
        shift: 0,
        count: values.len() as u64,
        payload: bytemuck::cast_slice(values).to_vec(),
    }
}

/// [`MscOptions::mappable`]: every block column raw (times per block, rounded down to 2^`shift`
/// ns, not per event), the rest as usual.
fn mappable_bytes(
    trace: &Trace,
    shift: u8,
    progress: &mut dyn FnMut(f32),
) -> std::io::Result<Vec<u8>> {
    let b = &trace.blocks;
    let rounded = |t: &[u64]| -> Vec<u64> { t.iter().map(|&v| v >> shift << shift).collect() };
    let mut sections = vec![
        raw_section(id::ADDRESS, &b.address),
        raw_section(id::SIZE, &b.size),
        raw_section(id::REQUESTED, &b.requested_size),
        raw_section(id::USABLE, &b.usable_size),
        raw_section(id::ALLOC_TIME, &rounded(&b.alloc_time_ns)),
        raw_section(id::FREE_TIME, &rounded(&b.free_time_ns)),
        raw_section(id::ALLOC_EVENT, &b.alloc_event),
        raw_section(id::FREE_EVENT, &b.free_event),
        raw_section(id::THREAD, &b.thread),
        raw_section(id::SITE, &b.site),
        raw_section(id::FLAGS, &b.flags),
    ];
    progress(0.5);
    sections.extend(tree_and_strings(trace)?);
    sections.push(meta_section(trace)?);
    progress(1.0);
    Ok(lay_out(&sections))
}

/// Recomputes the checksums of a version-3 file in place, for tests that forge payloads past the
/// checksums (to exercise the decoders' own checks). Does nothing to other inputs.
#[doc(hidden)]
pub fn reseal_checksums(bytes: &mut [u8]) {
    if bytes.len() < HEADER
        || &bytes[..8] != MAGIC
        || !matches!(read_u32(bytes, 8), Some(VERSION | VERSION_V3))
    {
        return;
    }
    let n = read_u32(bytes, 12).unwrap_or(0).min(MAX_SECTIONS) as usize;
    for i in 0..n {
        let at = HEADER + DIR_ENTRY * i;
        let (Some(offset), Some(len)) = (read_u64(bytes, at + 16), read_u64(bytes, at + 24)) else {
            return;
        };
        let (Ok(offset), Ok(len)) = (usize::try_from(offset), usize::try_from(len)) else {
            continue;
        };
        let Some(sum) = offset
            .checked_add(len)
            .and_then(|end| bytes.get(offset..end))
            .map(checksum)
        else {
            continue;
        };
        if let Some(slot) = bytes.get_mut(at + 32..at + 40) {
            slot.copy_from_slice(&sum.to_le_bytes());
        }
    }
}

/// Whether a section is a raw block column, meant to be memory-mapped: such sections carry no
/// checksum (0), because checking one would read the whole column at load, which mapping is
/// there to avoid; what the views rely on is checked on first use instead.
fn is_mappable(id: u32, packing: u8) -> bool {
    packing == PACK_RAW && (id::ADDRESS..=id::FLAGS).contains(&id)
}

/// Checksum of a section's payload (version 3): corruption is found when the file is loaded,
/// not when a column decoded on first use is read. Not cryptographic; about one multiply per
/// 8 bytes.
fn checksum(payload: &[u8]) -> u64 {
    let mix = |h: u64, w: u64| {
        let h = (h ^ w).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^ (h >> 29)
    };
    let mut h = 0x243F_6A88_85A3_08D3u64 ^ payload.len() as u64;
    let mut words = payload.chunks_exact(8);
    for w in &mut words {
        h = mix(
            h,
            u64::from_le_bytes(<[u8; 8]>::try_from(w).unwrap_or_default()),
        );
    }
    let mut last = [0u8; 8];
    last[..words.remainder().len()].copy_from_slice(words.remainder());
    mix(h, u64::from_le_bytes(last))
}

fn lay_out(sections: &[Encoded]) -> Vec<u8> {
    let mut offset = (HEADER + DIR_ENTRY * sections.len()).next_multiple_of(8);
    let mut out =
        Vec::with_capacity(offset + sections.iter().map(|s| s.payload.len() + 8).sum::<usize>());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(sections.len() as u32).to_le_bytes());
    for s in sections {
        out.extend_from_slice(&s.id.to_le_bytes());
        out.extend_from_slice(&[s.elem_size, s.transform, s.packing, s.shift]);
        out.extend_from_slice(&s.count.to_le_bytes());
        out.extend_from_slice(&(offset as u64).to_le_bytes());
        out.extend_from_slice(&(s.payload.len() as u64).to_le_bytes());
        let sum = if is_mappable(s.id, s.packing) {
            0
        } else {
            checksum(&s.payload)
        };
        out.extend_from_slice(&sum.to_le_bytes());
        offset = (offset + s.payload.len()).next_multiple_of(8);
    }
    for s in sections {
        out.resize(out.len().next_multiple_of(8), 0);
        out.extend_from_slice(&s.payload);
    }
    out
}

/// Writes a trace to an `.msc` file (exact times).
pub fn write_msc(trace: &Trace, path: &Path) -> Result<(), LoadError> {
    write_msc_with(trace, path, &MscOptions::default())
}

/// [`write_msc`] with writer options.
pub fn write_msc_with(trace: &Trace, path: &Path, options: &MscOptions) -> Result<(), LoadError> {
    let bytes = to_msc_bytes_with(trace, options, &mut |_| {}).map_err(|source| LoadError::Io {
        path: path.display().to_string(),
        source,
    })?;
    std::fs::write(path, bytes).map_err(|source| LoadError::Io {
        path: path.display().to_string(),
        source,
    })
}

// ------------------------------------------------------------------------------------------
// Decoding

/// Reads an `.msc` file with one read into an 8-byte-aligned buffer (the bit-packed sections are
/// then viewed as u64 words without copying).
pub fn read_msc(path: &Path) -> Result<Trace, LoadError> {
    let name = path.display().to_string();
    let io_err = |source| LoadError::Io {
        path: name.clone(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(io_err)?;
    let len = file.metadata().map_err(io_err)?.len();
    let len = usize::try_from(len)
        .map_err(|_| io_err(std::io::Error::other("file larger than the address space")))?;
    // Files with raw block columns are mapped, not read: their columns are used in place.
    let mut head = vec![0u8; len.min(HEADER + DIR_ENTRY * MAX_SECTIONS as usize)];
    file.read_exact(&mut head).map_err(io_err)?;
    if wants_mapping(&head) {
        match memscape_map::Mapping::new(&file) {
            Ok(map) if map.len() == len => {
                let version = read_u32(&head, 8).unwrap_or(VERSION);
                return from_msc_storage(&name, Storage::Mapped(map), version);
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("{name}: not mapped ({e}); reading it instead"),
        }
    }
    std::io::Seek::rewind(&mut file).map_err(io_err)?;
    let mut words = vec![0u64; len.div_ceil(8)];
    let buf: &mut [u8] = bytemuck::cast_slice_mut(&mut words);
    file.read_exact(&mut buf[..len]).map_err(io_err)?;
    if len >= HEADER
        && &buf[..8] == MAGIC
        && let Some(version @ (VERSION | VERSION_V3)) = read_u32(buf, 8)
    {
        return from_msc_words(&name, words, len, version);
    }
    from_msc_bytes(&name, &buf[..len])
}

#[derive(Debug, Clone, Copy)]
struct Section {
    id: u32,
    /// Where its directory entry is (for error messages).
    entry_at: usize,
    elem_size: u8,
    transform: u8,
    packing: u8,
    /// Decoded values are shifted left by this (version 3; 0 in version 2).
    shift: u8,
    count: u64,
    offset: usize,
    len: usize,
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

/// Decodes `.msc` bytes (version 3; version 2 here too, version 1 through `msc_v1.rs`);
/// `source` names the input in errors. Block columns of a version-3 file are decoded on first
/// use (see [`Column`]).
pub fn from_msc_bytes(source: &str, bytes: &[u8]) -> Result<Trace, LoadError> {
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return Err(corrupt(source, 0, "the magic bytes MEMSCAPE"));
    }
    let version = read_u32(bytes, 8).unwrap_or(0);
    if version == crate::msc_v1::VERSION {
        return crate::msc_v1::from_msc_v1_bytes(source, bytes);
    }
    if version == VERSION || version == VERSION_V3 {
        // One copy into aligned words that the lazily decoded columns keep (the file is small:
        // it is the compressed form).
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        let buf: &mut [u8] = bytemuck::cast_slice_mut(&mut words);
        buf[..bytes.len()].copy_from_slice(bytes);
        return from_msc_words(source, words, bytes.len(), version);
    }
    if version != VERSION_V2 {
        return Err(corrupt(
            source,
            8,
            format!(
                "format version {VERSION} (or {VERSION_V3}, {VERSION_V2}, {}), found {version}",
                crate::msc_v1::VERSION
            ),
        ));
    }
    // Bit-packed sections are read as u64 words in place: that needs 8-byte alignment, which
    // `read_msc` guarantees; other callers' bytes are copied once.
    if bytemuck::try_cast_slice::<u8, u64>(&bytes[..bytes.len() / 8 * 8]).is_err() {
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        let buf: &mut [u8] = bytemuck::cast_slice_mut(&mut words);
        buf[..bytes.len()].copy_from_slice(bytes);
        return Decoder::new(source, &buf[..bytes.len()], VERSION_V2)?.decode();
    }
    Decoder::new(source, bytes, VERSION_V2)?.decode()
}

/// How a numeric section's codes become values.
#[derive(Clone, Copy)]
enum Transform<'a> {
    None,
    Delta,
    ZigzagDelta,
    PlusBase(&'a [u64]),
}

/// Output element types of numeric sections.
trait Elem: Copy + Default + Send {
    const SIZE: u8;
    const MAX: u64;
    fn narrow(v: u64) -> Self;
}

impl Elem for u64 {
    const SIZE: u8 = 8;
    const MAX: u64 = u64::MAX;
    fn narrow(v: u64) -> Self {
        v
    }
}

impl Elem for u32 {
    const SIZE: u8 = 4;
    const MAX: u64 = u32::MAX as u64;
    fn narrow(v: u64) -> Self {
        v as u32
    }
}

impl Elem for u8 {
    const SIZE: u8 = 1;
    const MAX: u64 = u8::MAX as u64;
    fn narrow(v: u64) -> Self {
        v as u8
    }
}

/// Unpacks one group of 64 codes of width `W` (1..=64) from exactly `W` words.
#[inline(always)]
fn unpack_group<const W: usize>(words: &[u64], reference: u64, out: &mut [u64; GROUP]) {
    let Some(words) = words.get(..W) else {
        return;
    };
    let mask = if W == 64 { u64::MAX } else { (1u64 << W) - 1 };
    for (j, o) in out.iter_mut().enumerate() {
        let bit = j * W;
        let (word, shift) = (bit / 64, bit % 64);
        let mut x = u64::from_le(words[word]) >> shift;
        if shift + W > 64 {
            x |= u64::from_le(words[word + 1]) << (64 - shift);
        }
        *o = reference.wrapping_add(x & mask);
    }
}

/// Unpacks every group of one chunk with a width known at compile time, so that the shifts are
/// constants (one specialized loop per width).
fn unpack_chunk<const W: usize>(
    words: &[u64],
    reference: u64,
    groups: usize,
    sink: &mut dyn FnMut(&[u64; GROUP]),
) {
    let mut buf = [0u64; GROUP];
    for g in 0..groups {
        unpack_group::<W>(&words[g * W..], reference, &mut buf);
        sink(&buf);
    }
}

/// Rebuilds the codes of one block of `len` codes from its `K` byte planes, 64 at a time; `K`
/// known at compile time so the plane loop unrolls.
fn join_planes<const K: usize>(
    planes: &[u8],
    len: usize,
    buf: &mut [u64; GROUP],
    sink: &mut dyn FnMut(&[u64; GROUP]),
) {
    let mut start = 0usize;
    while start < len {
        let take = GROUP.min(len - start);
        buf.fill(0);
        for j in 0..K {
            let plane = &planes[j * len + start..j * len + start + take];
            for (b, &p) in buf.iter_mut().zip(plane) {
                *b |= u64::from(p) << (8 * j);
            }
        }
        sink(buf);
        start += take;
    }
}

macro_rules! dispatch_width {
    ($w:expr, $words:expr, $reference:expr, $groups:expr, $sink:expr; $($n:literal)*) => {
        match $w {
            $($n => unpack_chunk::<$n>($words, $reference, $groups, $sink),)*
            _ => {}
        }
    };
}

/// Decoder state: the input and its directory.
struct Decoder<'a> {
    source: &'a str,
    bytes: &'a [u8],
    sections: Vec<Section>,
    version: u32,
}

impl<'a> Decoder<'a> {
    /// Reads and checks the directory of a version-2 or version-3 file (version 3: every
    /// payload against its checksum).
    fn new(source: &'a str, bytes: &'a [u8], version: u32) -> Result<Self, LoadError> {
        let entry = if version == VERSION_V2 {
            DIR_ENTRY_V2
        } else {
            DIR_ENTRY
        };
        let n = read_u32(bytes, 12).unwrap_or(0);
        if n > MAX_SECTIONS {
            return Err(corrupt(
                source,
                12,
                format!("at most {MAX_SECTIONS} sections, found {n}"),
            ));
        }
        let mut sections: Vec<Section> = Vec::with_capacity(n as usize);
        for i in 0..n as usize {
            let at = HEADER + entry * i;
            let (Some(id), Some(kinds), Some(count), Some(offset), Some(len)) = (
                read_u32(bytes, at),
                read_u32(bytes, at + 4),
                read_u64(bytes, at + 8),
                read_u64(bytes, at + 16),
                read_u64(bytes, at + 24),
            ) else {
                return Err(corrupt(source, at, "a complete section directory entry"));
            };
            let [elem_size, transform, packing, shift] = kinds.to_le_bytes();
            // Version 2 had a zero byte here.
            let shift = if version == VERSION_V2 { 0 } else { shift };
            let offset = usize::try_from(offset).unwrap_or(usize::MAX);
            let len = usize::try_from(len).unwrap_or(usize::MAX);
            if !offset.is_multiple_of(8)
                || offset < HEADER + entry * n as usize
                || offset.checked_add(len).is_none_or(|end| end > bytes.len())
            {
                return Err(corrupt(
                    source,
                    at + 16,
                    format!(
                        "section {id} 8-byte aligned after the directory and within the file ({} bytes)",
                        bytes.len()
                    ),
                ));
            }
            if sections.iter().any(|s| s.id == id) {
                return Err(corrupt(source, at, format!("section {id} only once")));
            }
            if version != VERSION_V2 && !is_mappable(id, packing) {
                let Some(sum) = read_u64(bytes, at + 32) else {
                    return Err(corrupt(source, at, "a complete section directory entry"));
                };
                if checksum(&bytes[offset..offset + len]) != sum {
                    return Err(corrupt(
                        source,
                        at + 32,
                        format!("section {id}'s payload to match its checksum"),
                    ));
                }
            }
            sections.push(Section {
                id,
                entry_at: at,
                elem_size,
                transform,
                packing,
                shift,
                count,
                offset,
                len,
            });
        }
        Ok(Self {
            source,
            bytes,
            sections,
            version,
        })
    }

    fn corrupt(&self, s: &Section, expected: impl Into<String>) -> LoadError {
        corrupt(self.source, s.entry_at, expected)
    }

    fn find(&self, section: u32) -> Option<&Section> {
        self.sections.iter().find(|s| s.id == section)
    }

    fn need(&self, section: u32) -> Result<&Section, LoadError> {
        self.find(section)
            .ok_or_else(|| corrupt(self.source, HEADER, format!("a section with id {section}")))
    }

    fn payload(&self, s: &Section) -> &'a [u8] {
        &self.bytes[s.offset..s.offset + s.len]
    }

    /// Decodes a numeric section into values of type `T`. `base` is the decoded base section
    /// for [`XF_PLUS_BASE`].
    fn numeric<T: Elem>(&self, section: u32, base: Option<&[u64]>) -> Result<Vec<T>, LoadError> {
        self.numeric_ctx(section, base, None)
    }

    /// [`Decoder::numeric`] for a section that may be context-coded ([`PACK_CONTEXT`]) with the
    /// event-time model, whose contexts `contexts` gives.
    fn numeric_ctx<T: Elem>(
        &self,
        section: u32,
        base: Option<&[u64]>,
        contexts: Option<&crate::ppm::EventTimeContexts<'_>>,
    ) -> Result<Vec<T>, LoadError> {
        let s = self.need(section)?;
        if s.elem_size != T::SIZE {
            return Err(self.corrupt(
                s,
                format!("section {section} with {}-byte elements", T::SIZE),
            ));
        }
        let shift = u32::from(s.shift);
        if shift != 0 && (T::SIZE != 8 || shift >= 64 || s.transform == XF_PLUS_BASE) {
            return Err(self.corrupt(
                s,
                format!(
                    "no time resolution shift, or one below 64 without a base, in section {section}"
                ),
            ));
        }
        let transform = match (s.transform, base) {
            (XF_NONE, _) => Transform::None,
            (XF_DELTA, _) if T::SIZE == 8 => Transform::Delta,
            (XF_ZIGZAG_DELTA, _) if T::SIZE == 8 => Transform::ZigzagDelta,
            (XF_PLUS_BASE, Some(b)) if T::SIZE == 8 && base_section(section).is_some() => {
                if b.len() as u64 != s.count {
                    return Err(self.corrupt(
                        s,
                        format!(
                            "section {section} as long as its base section ({})",
                            b.len()
                        ),
                    ));
                }
                Transform::PlusBase(b)
            }
            (t, _) => {
                return Err(self.corrupt(
                    s,
                    format!("a known transform for section {section}, found {t}"),
                ));
            }
        };
        let n = usize::try_from(s.count)
            .map_err(|_| self.corrupt(s, "an element count that fits memory"))?;
        let payload = self.payload(s);
        // Check the payload against `n` before allocating anything sized by `n`.
        enum Plan<'p> {
            Bits {
                refs: &'p [u64],
                widths: &'p [u8],
                data: &'p [u64],
            },
            Planes {
                k: usize,
                block: usize,
                decoder: zstd::stream::read::Decoder<'p, &'p [u8]>,
            },
            Codes(Vec<u64>),
            /// Little-endian elements of `T::SIZE` bytes (mappable block columns).
            Raw(&'p [u8]),
        }
        let plan = match s.packing {
            PACK_RAW => {
                if n.checked_mul(usize::from(T::SIZE)) != Some(payload.len()) {
                    return Err(self.corrupt(
                        s,
                        format!(
                            "{n} raw {}-byte values in section {section}, found {} bytes",
                            T::SIZE,
                            payload.len()
                        ),
                    ));
                }
                Plan::Raw(payload)
            }
            PACK_BITS => {
                let words: &[u64] = bytemuck::try_cast_slice(payload).map_err(|_| {
                    self.corrupt(s, format!("section {section} of whole u64 words"))
                })?;
                let chunks = n.div_ceil(CHUNK);
                let width_words = chunks.div_ceil(8);
                let Some(data) = words.get(chunks + width_words..) else {
                    return Err(self.corrupt(
                        s,
                        format!("{chunks} chunk headers for {n} values in section {section}"),
                    ));
                };
                let refs = &words[..chunks];
                let widths: &[u8] = bytemuck::cast_slice(&words[chunks..chunks + width_words]);
                let widths = &widths[..chunks];
                let mut needed = 0usize;
                for (c, &w) in widths.iter().enumerate() {
                    if w > 64 {
                        return Err(self
                            .corrupt(s, format!("bit widths of at most 64 in section {section}")));
                    }
                    let groups = (n - c * CHUNK).min(CHUNK).div_ceil(GROUP);
                    needed += groups * w as usize;
                }
                if needed != data.len() {
                    return Err(self.corrupt(
                        s,
                        format!(
                            "{needed} data words in section {section}, found {}",
                            data.len()
                        ),
                    ));
                }
                Plan::Bits { refs, widths, data }
            }
            PACK_PLANES => {
                let (k, block_log2, frame) = match payload {
                    [k, log2, frame @ ..] if PLANE_BLOCK_LOG2_RANGE.contains(log2) => {
                        (*k as usize, *log2, frame)
                    }
                    _ => {
                        return Err(self.corrupt(
                            s,
                            format!("a plane count and a block size of 2^6 to 2^20 codes in section {section}"),
                        ));
                    }
                };
                let decoded = (n as u64).checked_mul(u64::from(T::SIZE));
                if !(1..=8).contains(&k) || decoded.is_none_or(|d| d > MAX_DECODED) {
                    return Err(self.corrupt(
                        s,
                        format!(
                            "1 to 8 byte planes and at most {MAX_DECODED} decoded bytes in section {section}"
                        ),
                    ));
                }
                let decoder = zstd::stream::read::Decoder::with_buffer(frame).map_err(|_| {
                    self.corrupt(s, format!("a valid zstd frame in section {section}"))
                })?;
                Plan::Planes {
                    k,
                    block: 1usize << block_log2,
                    decoder,
                }
            }
            PACK_CONTEXT if self.version >= VERSION && contexts.is_some() => {
                let model = payload.first().copied();
                // A coded value can cost almost nothing: the writer pads the payload to one
                // byte per PRESIZE_PER_BYTE values, so the count is backed by the payload.
                if model != Some(crate::ppm::MODEL_EVENT_TIMES)
                    || n > payload.len().saturating_mul(PRESIZE_PER_BYTE)
                {
                    return Err(self.corrupt(
                        s,
                        format!(
                            "model {} and at most {PRESIZE_PER_BYTE} values per payload byte in section {section}",
                            crate::ppm::MODEL_EVENT_TIMES
                        ),
                    ));
                }
                let Some(contexts) = contexts else {
                    return Err(self.corrupt(s, "contexts"));
                };
                Plan::Codes(crate::ppm::decode(
                    &payload[1..],
                    n,
                    crate::ppm::EVENT_TIME_LENGTH_CONTEXTS,
                    |i| contexts.context(i),
                ))
            }
            p => {
                return Err(self.corrupt(
                    s,
                    format!("a known numeric packing for section {section}, found {p}"),
                ));
            }
        };
        // Filled group by group with `extend` (no zero-filling pass over fresh memory).
        let presize = match plan {
            Plan::Bits { .. } | Plan::Codes(_) | Plan::Raw(_) => n,
            Plan::Planes { .. } => n.min(payload.len().saturating_mul(PRESIZE_PER_BYTE)),
        };
        let mut out: Vec<T> = Vec::with_capacity(presize);
        let mut too_wide = false;
        let mut failed = false;
        {
            let mut acc = 0u64;
            let mut sink = |codes: &[u64; GROUP]| {
                let filled = out.len();
                let codes = &codes[..GROUP.min(n - filled)];
                match transform {
                    Transform::None => {
                        too_wide |= codes.iter().any(|&c| c > T::MAX);
                        out.extend(codes.iter().map(|&c| T::narrow(c << shift)));
                    }
                    Transform::Delta => out.extend(codes.iter().map(|&c| {
                        acc = acc.wrapping_add(c);
                        T::narrow(acc << shift)
                    })),
                    Transform::ZigzagDelta => out.extend(codes.iter().map(|&c| {
                        acc = acc.wrapping_add(unzigzag(c));
                        T::narrow(acc << shift)
                    })),
                    Transform::PlusBase(b) => out.extend(
                        codes
                            .iter()
                            .zip(&b[filled..filled + codes.len()])
                            .map(|(&c, &b)| T::narrow(c.wrapping_add(b))),
                    ),
                }
            };
            match plan {
                Plan::Bits { refs, widths, data } => {
                    let mut at = 0usize;
                    for (c, (&w, &reference)) in widths.iter().zip(refs).enumerate() {
                        let groups = (n - c * CHUNK).min(CHUNK).div_ceil(GROUP);
                        let reference = u64::from_le(reference);
                        let w = w as usize;
                        let chunk_words = &data[at..at + groups * w];
                        at += groups * w;
                        if w == 0 {
                            let buf = [reference; GROUP];
                            for _ in 0..groups {
                                sink(&buf);
                            }
                            continue;
                        }
                        dispatch_width!(w, chunk_words, reference, groups, &mut sink;
                            1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32
                            33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64);
                    }
                }
                Plan::Codes(codes) => {
                    let mut buf = [0u64; GROUP];
                    for group in codes.chunks(GROUP) {
                        buf[..group.len()].copy_from_slice(group);
                        sink(&buf);
                    }
                }
                Plan::Raw(bytes) => {
                    let size = usize::from(T::SIZE);
                    let mut buf = [0u64; GROUP];
                    for group in bytes.chunks(GROUP * size) {
                        for (b, e) in buf.iter_mut().zip(group.chunks_exact(size)) {
                            let mut le = [0u8; 8];
                            le[..size].copy_from_slice(e);
                            *b = u64::from_le_bytes(le);
                        }
                        sink(&buf);
                    }
                }
                Plan::Planes {
                    k,
                    block,
                    mut decoder,
                } => {
                    // Block by block into one small buffer that stays in cache.
                    let mut planes = vec![0u8; k * block.min(n)];
                    let mut buf = [0u64; GROUP];
                    let mut block_start = 0usize;
                    while block_start < n {
                        let len = block.min(n - block_start);
                        let planes = &mut planes[..k * len];
                        if decoder.read_exact(planes).is_err() {
                            failed = true;
                            break;
                        }
                        let planes: &[u8] = planes;
                        match k {
                            1 => join_planes::<1>(planes, len, &mut buf, &mut sink),
                            2 => join_planes::<2>(planes, len, &mut buf, &mut sink),
                            3 => join_planes::<3>(planes, len, &mut buf, &mut sink),
                            4 => join_planes::<4>(planes, len, &mut buf, &mut sink),
                            5 => join_planes::<5>(planes, len, &mut buf, &mut sink),
                            6 => join_planes::<6>(planes, len, &mut buf, &mut sink),
                            7 => join_planes::<7>(planes, len, &mut buf, &mut sink),
                            _ => join_planes::<8>(planes, len, &mut buf, &mut sink),
                        }
                        block_start += len;
                    }
                }
            }
        }
        if failed {
            return Err(self.corrupt(
                s,
                format!("a complete zstd frame of byte planes in section {section}"),
            ));
        }
        if too_wide {
            return Err(self.corrupt(
                s,
                format!("values of section {section} that fit {} bytes", T::SIZE),
            ));
        }
        Ok(out)
    }

    /// Decodes a byte section (raw or zstd).
    fn byte_section(&self, section: u32) -> Result<Vec<u8>, LoadError> {
        let s = self.need(section)?;
        let payload = self.payload(s);
        let n = usize::try_from(s.count).unwrap_or(usize::MAX);
        match (s.elem_size, s.packing) {
            (1, PACK_RAW) if n == payload.len() => Ok(payload.to_vec()),
            (1, PACK_ZSTD) if (n as u64) <= MAX_DECODED => {
                // Grows as the frame really decodes (never pre-sized from the count alone).
                let mut out: Vec<u8> =
                    Vec::with_capacity(n.min(payload.len().saturating_mul(PRESIZE_PER_BYTE)));
                let bad = || {
                    self.corrupt(
                        s,
                        format!("a valid zstd frame of {n} bytes in section {section}"),
                    )
                };
                let decoder =
                    zstd::stream::read::Decoder::with_buffer(payload).map_err(|_| bad())?;
                decoder
                    .take(n as u64 + 1)
                    .read_to_end(&mut out)
                    .map_err(|_| bad())?;
                if out.len() != n {
                    return Err(self.corrupt(
                        s,
                        format!("{n} bytes in section {section}, found {}", out.len()),
                    ));
                }
                Ok(out)
            }
            _ => Err(self.corrupt(
                s,
                format!("section {section} of bytes, raw or zstd, of a plausible length"),
            )),
        }
    }

    /// The metadata, checked against the section counts; with the block count and whether the
    /// file has event times. Everything a loader checks before it decodes any block column.
    fn checked_meta(&self) -> Result<(MscMeta, u64, bool), LoadError> {
        let source = self.source;
        let meta_json = self.byte_section(id::META)?;
        let meta: MscMeta = serde_json::from_slice(&meta_json)
            .map_err(|e| corrupt(source, HEADER, format!("metadata JSON ({e})")))?;
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
        let n = self.need(id::ALLOC_EVENT)?.count;
        if m.allocs.checked_add(m.mmaps) != Some(n)
            || counted != Some(m.events)
            || m.reallocs > m.frees
            || m.peak_event > m.events
        {
            return Err(corrupt(
                source,
                HEADER,
                "metadata counts that agree with the blocks (allocs + mmaps = blocks, events = allocs + frees + unknown + double frees + mmaps + munmaps)",
            ));
        }
        for section in [
            id::ADDRESS,
            id::SIZE,
            id::REQUESTED,
            id::USABLE,
            id::FREE_EVENT,
            id::THREAD,
            id::SITE,
            id::FLAGS,
        ] {
            let s = self.need(section)?;
            if s.count != n {
                return Err(self.corrupt(
                    s,
                    format!("section {section} with {n} elements, one per block"),
                ));
            }
        }
        let events = m.events;
        let has_event_times = self.find(id::EVENT_TIME).is_some();
        if has_event_times && self.need(id::EVENT_TIME)?.count != events.saturating_add(1) {
            return Err(corrupt(
                source,
                HEADER,
                "one event time per event plus the trace end",
            ));
        }
        if !has_event_times {
            for section in [id::ALLOC_TIME, id::FREE_TIME] {
                let s = self.need(section)?;
                if s.count != n {
                    return Err(self.corrupt(
                        s,
                        format!("section {section} with {n} elements, one per block"),
                    ));
                }
            }
        }
        Ok((meta, n, has_event_times))
    }

    /// Decodes every column now (version 2).
    fn decode(&self) -> Result<Trace, LoadError> {
        let source = self.source;
        let (meta, _, has_event_times) = self.checked_meta()?;
        let events = meta.meta.events;
        type Res<T> = Result<T, LoadError>;
        let (address, sizes, events_times, rest) = std::thread::scope(|scope| {
            let address = scope.spawn(|| self.numeric::<u64>(id::ADDRESS, None));
            let sizes = scope.spawn(|| -> Res<(Vec<u64>, Vec<u64>, Vec<u64>)> {
                let requested = self.numeric::<u64>(id::REQUESTED, None)?;
                let size = self.numeric::<u64>(id::SIZE, Some(&requested))?;
                let usable = self.numeric::<u64>(id::USABLE, Some(&size))?;
                Ok((requested, size, usable))
            });
            let times = scope.spawn(|| -> Res<Option<Vec<u64>>> {
                if has_event_times {
                    Ok(Some(self.numeric::<u64>(id::EVENT_TIME, None)?))
                } else {
                    Ok(None)
                }
            });
            // Events, then the block times: gathered from the event times, or decoded. Blocks
            // must end after they start, in events and in time (views subtract them).
            let not_ordered = || {
                corrupt(
                    source,
                    HEADER,
                    "blocks freed after they were allocated (events and times)",
                )
            };
            let event_cols = scope.spawn(move || -> Res<[Vec<u64>; 4]> {
                let alloc_event = self.numeric::<u64>(id::ALLOC_EVENT, None)?;
                let free_event = self.numeric::<u64>(id::FREE_EVENT, Some(&alloc_event))?;
                let (alloc_time, free_time) = match joined(source, times.join())? {
                    Some(times) => {
                        let bad_event =
                            || corrupt(source, HEADER, "event indices below the event count");
                        let time_of = |e: u64| {
                            usize::try_from(e)
                                .ok()
                                .and_then(|e| times.get(e).copied())
                                .ok_or_else(bad_event)
                        };
                        let mut alloc_time = Vec::with_capacity(alloc_event.len());
                        for &e in &alloc_event {
                            alloc_time.push(time_of(e)?);
                        }
                        // Free times, checking on the way that blocks end after they start.
                        let mut free_time = Vec::with_capacity(free_event.len());
                        for ((&fe, &ae), &at) in
                            free_event.iter().zip(&alloc_event).zip(&alloc_time)
                        {
                            let ft = time_of(fe)?;
                            if fe < ae || ft < at {
                                return Err(not_ordered());
                            }
                            free_time.push(ft);
                        }
                        (alloc_time, free_time)
                    }
                    None => {
                        let alloc_time = self.numeric::<u64>(id::ALLOC_TIME, None)?;
                        let free_time = self.numeric::<u64>(id::FREE_TIME, Some(&alloc_time))?;
                        if alloc_event.iter().chain(&free_event).any(|&e| e > events) {
                            return Err(corrupt(
                                source,
                                HEADER,
                                "event indices below the event count",
                            ));
                        }
                        let ordered = alloc_event
                            .iter()
                            .zip(&free_event)
                            .zip(alloc_time.iter().zip(&free_time))
                            .all(|((ae, fe), (at, ft))| ae <= fe && at <= ft);
                        if !ordered {
                            return Err(not_ordered());
                        }
                        (alloc_time, free_time)
                    }
                };
                Ok([alloc_event, free_event, alloc_time, free_time])
            });
            let rest = self.small_columns();
            (
                joined(source, address.join()),
                joined(source, sizes.join()),
                joined(source, event_cols.join()),
                rest,
            )
        });
        let address = address?;
        let (requested_size, size, usable_size) = sizes?;
        let [alloc_event, free_event, alloc_time_ns, free_time_ns] = events_times?;
        let (thread, site, flags, tree, strings, threads) = rest?;
        let blocks = BlockColumns::from(BlockVecs {
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
        });
        if !blocks.is_consistent() {
            return Err(corrupt(source, HEADER, "block columns of equal length"));
        }
        let warnings = restore_warnings(source, meta.warnings)?;
        let mut meta_out = meta.meta;
        meta_out.source = source.to_owned();
        meta_out.format = crate::model::TraceFormat::Msc;
        Ok(Trace {
            meta: meta_out,
            blocks,
            strings,
            call_tree: tree,
            threads,
            warnings,
            event_order_cache: Default::default(),
        })
    }

    /// Thread, site and flag columns, the call tree, strings and thread names, all checked
    /// against each other.
    #[allow(clippy::type_complexity)]
    fn small_columns(
        &self,
    ) -> Result<(Vec<u32>, Vec<u32>, Vec<u8>, CallTree, Strings, Vec<u32>), LoadError> {
        let source = self.source;
        let thread = self.numeric::<u32>(id::THREAD, None)?;
        let site = self.numeric::<u32>(id::SITE, None)?;
        let flags = self.numeric::<u8>(id::FLAGS, None)?;
        let (tree, strings, threads) = self.tree_strings_threads()?;
        let nodes = tree.len();
        let thread_count = threads.len().max(1);
        if site.iter().any(|&s| s as usize >= nodes)
            || thread.iter().any(|&t| t as usize >= thread_count)
        {
            return Err(corrupt(
                source,
                HEADER,
                "block sites and threads that exist",
            ));
        }
        Ok((thread, site, flags, tree, strings, threads))
    }

    /// The call tree, strings and thread names, checked against each other.
    fn tree_strings_threads(&self) -> Result<(CallTree, Strings, Vec<u32>), LoadError> {
        let source = self.source;
        let parent = self.numeric::<u32>(id::TREE_PARENT, None)?;
        let ips = self.numeric::<u64>(id::TREE_IP, None)?;
        let function = self.numeric::<u32>(id::TREE_FUNCTION, None)?;
        let file = self.numeric::<u32>(id::TREE_FILE, None)?;
        let line = self.numeric::<u32>(id::TREE_LINE, None)?;
        let module = self.numeric::<u32>(id::TREE_MODULE, None)?;
        let module_offset = self.numeric::<u64>(id::TREE_MODULE_OFFSET, None)?;
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
                HEADER,
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
                HEADER,
                "call-tree parents numbered before their children",
            ));
        }
        let string_bytes = self.byte_section(id::STRING_BYTES)?;
        let string_ends = self.numeric::<u64>(id::STRING_ENDS, None)?;
        let mut strings = Vec::with_capacity(string_ends.len());
        let mut start = 0usize;
        for &end in &string_ends {
            let end = usize::try_from(end).unwrap_or(usize::MAX);
            let Some(s) = string_bytes.get(start..end) else {
                return Err(corrupt(
                    source,
                    HEADER,
                    "string offsets inside the string section",
                ));
            };
            let Ok(s) = std::str::from_utf8(s) else {
                return Err(corrupt(source, HEADER, "UTF-8 strings"));
            };
            strings.push(s.to_owned());
            start = end;
        }
        if strings.first().is_none_or(|s| !s.is_empty()) {
            return Err(corrupt(source, HEADER, "the empty string as string 0"));
        }
        let string_count = strings.len();
        let threads = self.numeric::<u32>(id::THREADS, None)?;
        let str_ok = |id: &u32| (*id as usize) < string_count;
        if !(function.iter().all(str_ok)
            && file.iter().all(str_ok)
            && module.iter().all(str_ok)
            && threads.iter().all(str_ok))
        {
            return Err(corrupt(source, HEADER, "string ids below the string count"));
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
        Ok((
            CallTree::from_columns(parent, frames),
            Strings::from_vec(strings),
            threads,
        ))
    }
}

/// Loads a version-3 file held in 8-byte-aligned `words` (`len` bytes): the directory,
/// checksums, metadata, call tree and strings are checked and decoded now; each block column is
/// decoded on its first use, from these words (the compressed file, kept by the columns).
fn from_msc_words(
    source: &str,
    words: Vec<u64>,
    len: usize,
    version: u32,
) -> Result<Trace, LoadError> {
    from_msc_storage(source, Storage::Words(words, len), version)
}

/// Where a lazily loaded file's bytes are.
enum Storage {
    /// Read into 8-byte-aligned words (`len` bytes of them are the file).
    Words(Vec<u64>, usize),
    /// Memory-mapped (files with raw block columns, [`MscOptions::mappable`]).
    Mapped(Arc<memscape_map::Mapping>),
}

impl Storage {
    fn bytes(&self) -> &[u8] {
        match self {
            Storage::Words(words, len) => bytemuck::cast_slice::<u64, u8>(words)
                .get(..*len)
                .unwrap_or_default(),
            Storage::Mapped(map) => map.bytes(),
        }
    }
}

/// Whether the start of a file (its header and directory) says that it has raw block columns
/// to map: a version-3/4 file with a block section of packing 0.
fn wants_mapping(head: &[u8]) -> bool {
    if head.len() < HEADER
        || &head[..8] != MAGIC
        || !matches!(read_u32(head, 8), Some(VERSION | VERSION_V3))
    {
        return false;
    }
    let n = read_u32(head, 12).unwrap_or(0).min(MAX_SECTIONS) as usize;
    (0..n).any(|i| {
        let at = HEADER + DIR_ENTRY * i;
        matches!(
            (read_u32(head, at), head.get(at + 6)),
            (Some(id), Some(&packing)) if is_mappable(id, packing)
        )
    })
}

fn from_msc_storage(source: &str, storage: Storage, version: u32) -> Result<Trace, LoadError> {
    let bytes = storage.bytes();
    let d = Decoder::new(source, bytes, version)?;
    let (meta, n, has_event_times) = d.checked_meta()?;
    // What the lazy decoders will meet is checked now, as far as it is without decoding.
    for (section, elem_size) in [
        (id::ADDRESS, 8),
        (id::SIZE, 8),
        (id::REQUESTED, 8),
        (id::USABLE, 8),
        (id::ALLOC_EVENT, 8),
        (id::FREE_EVENT, 8),
        (id::THREAD, 4),
        (id::SITE, 4),
        (id::FLAGS, 1),
    ] {
        let s = d.need(section)?;
        if s.elem_size != elem_size
            || !matches!(s.packing, PACK_BITS | PACK_PLANES | PACK_RAW)
            || s.transform > XF_PLUS_BASE
        {
            return Err(d.corrupt(
                s,
                format!("section {section} with {elem_size}-byte elements, a known packing and transform"),
            ));
        }
    }
    // Raw block columns (all of them, times included) hold exactly their values.
    for s in d.sections.iter().filter(|s| is_mappable(s.id, s.packing)) {
        if s.count.checked_mul(u64::from(s.elem_size)) != Some(s.len as u64) || s.shift != 0 {
            return Err(d.corrupt(
                s,
                format!(
                    "{} raw values of {} bytes in section {}, unshifted",
                    s.count, s.elem_size, s.id
                ),
            ));
        }
    }
    let (call_tree, strings, threads) = d.tree_strings_threads()?;
    let warnings = restore_warnings(source, meta.warnings)?;
    let sections = d.sections.clone();
    drop(d);
    let blocks = usize::try_from(n)
        .map_err(|_| corrupt(source, HEADER, "a block count that fits memory"))?;
    let mut meta_out = meta.meta;
    meta_out.source = source.to_owned();
    meta_out.format = crate::model::TraceFormat::Msc;
    let shared = Arc::new(LazyFile {
        source: source.to_owned(),
        version,
        storage,
        sections,
        blocks,
        events: meta_out.events,
        has_event_times,
        nodes: call_tree.len(),
        thread_count: threads.len().max(1),
        groups: Default::default(),
    });
    /// A column decoded on first use, or, where the file is mapped and the column raw, borrowed
    /// from the mapping once `check` has found it usable as it is (`check` returns the
    /// repaired values of a column that is not: only a forged file has one).
    fn lazy<T: bytemuck::Pod + Default + Send + Sync + 'static>(
        shared: &Arc<LazyFile>,
        name: &'static str,
        section: u32,
        check: fn(&LazyFile, &[T]) -> Option<Vec<T>>,
        decode: fn(&LazyFile) -> Result<Vec<T>, LoadError>,
    ) -> Column<T> {
        let shared = Arc::clone(shared);
        Column::lazy_values(move || {
            if let Some(mapped) = shared.mapped::<T>(section) {
                return match check(&shared, &mapped) {
                    None => Values::Mapped(mapped),
                    Some(repaired) => {
                        tracing::warn!(
                            "{}: the {name} column breaks what the views rely on; repaired",
                            shared.source
                        );
                        Values::Owned(repaired)
                    }
                };
            }
            Values::Owned(match decode(&shared) {
                Ok(values) => values,
                Err(e) => {
                    // Only a forged file gets here (its checksums matched): zeros keep every
                    // invariant the views rely on.
                    tracing::warn!("{e}; the {name} column reads as zeros");
                    vec![T::default(); shared.blocks]
                }
            })
        })
    }
    fn any<T>(_: &LazyFile, _: &[T]) -> Option<Vec<T>> {
        None
    }
    let blocks = BlockColumns {
        address: lazy(&shared, "address", id::ADDRESS, any, |f| {
            f.decoder().numeric(id::ADDRESS, None)
        }),
        size: lazy(&shared, "size", id::SIZE, any, |f| {
            f.grouped(SIZES, id::SIZE)
        }),
        requested_size: lazy(&shared, "requested size", id::REQUESTED, any, |f| {
            f.grouped(SIZES, id::REQUESTED)
        }),
        usable_size: lazy(&shared, "usable size", id::USABLE, any, |f| {
            f.grouped(SIZES, id::USABLE)
        }),
        alloc_time_ns: lazy(&shared, "alloc time", id::ALLOC_TIME, any, |f| {
            f.grouped(TIMES, id::ALLOC_TIME)
        }),
        free_time_ns: lazy(
            &shared,
            "free time",
            id::FREE_TIME,
            LazyFile::check_free_times,
            |f| f.grouped(TIMES, id::FREE_TIME),
        ),
        alloc_event: lazy(
            &shared,
            "alloc event",
            id::ALLOC_EVENT,
            LazyFile::check_alloc_events,
            |f| f.grouped(EVENTS, id::ALLOC_EVENT),
        ),
        free_event: lazy(
            &shared,
            "free event",
            id::FREE_EVENT,
            LazyFile::check_free_events,
            |f| f.grouped(EVENTS, id::FREE_EVENT),
        ),
        thread: lazy(
            &shared,
            "thread",
            id::THREAD,
            |f, t| below(t, f.thread_count as u64),
            LazyFile::thread,
        ),
        site: lazy(
            &shared,
            "site",
            id::SITE,
            |f, s| below(s, f.nodes as u64),
            LazyFile::site,
        ),
        flags: lazy(&shared, "flags", id::FLAGS, any, |f| {
            f.decoder().numeric(id::FLAGS, None)
        }),
    };
    Ok(Trace {
        meta: meta_out,
        blocks,
        strings,
        call_tree,
        threads,
        warnings,
        event_order_cache: Default::default(),
    })
}

/// A version-3 file after its checks, kept by its lazily decoded block columns. Decoders
/// repair what the eager checks could not see (event indices beyond the event count, frees
/// before allocs, unknown sites or threads) instead of failing: a file whose checksums match
/// was written so, or forged.
struct LazyFile {
    source: String,
    version: u32,
    storage: Storage,
    sections: Vec<Section>,
    blocks: usize,
    events: u64,
    has_event_times: bool,
    nodes: usize,
    thread_count: usize,
    /// Per group of columns decoded together ([`SIZES`], [`EVENTS`], [`TIMES`]): the columns
    /// already asked for, and the ones decoded on the way and not asked for yet.
    groups: [Mutex<Group>; 3],
}

/// Requested size, size (requested + code) and usable size (size + code).
const SIZES: usize = 0;
/// Alloc event and free event (alloc + code).
const EVENTS: usize = 1;
/// Alloc and free times (both gathered from the event times).
const TIMES: usize = 2;

#[derive(Default)]
struct Group {
    /// Bit `1 << id` for every section whose column has asked for its values.
    asked: u64,
    /// Values decoded on the way, waiting for their column.
    kept: Vec<(u32, Vec<u64>)>,
}

impl LazyFile {
    fn decoder(&self) -> Decoder<'_> {
        Decoder {
            source: &self.source,
            bytes: self.storage.bytes(),
            sections: self.sections.clone(),
            version: self.version,
        }
    }

    /// The values of a raw block section of a mapped file, borrowed from the mapping; `None`
    /// when the file is not mapped or the section is not raw.
    fn mapped<T: bytemuck::Pod>(&self, section: u32) -> Option<memscape_map::MappedSlice<T>> {
        let Storage::Mapped(map) = &self.storage else {
            return None;
        };
        let s = self.sections.iter().find(|s| s.id == section)?;
        if !is_mappable(s.id, s.packing)
            || s.transform != XF_NONE
            || s.shift != 0
            || usize::from(s.elem_size) != std::mem::size_of::<T>()
            || s.count != self.blocks as u64
        {
            return None;
        }
        memscape_map::MappedSlice::new(Arc::clone(map), s.offset, self.blocks)
    }

    /// Alloc events of a block at most the event count.
    fn check_alloc_events(&self, alloc: &[u64]) -> Option<Vec<u64>> {
        let events = self.events;
        let bad = alloc.iter().fold(false, |bad, &a| bad | (a > events));
        bad.then(|| alloc.iter().map(|&a| a.min(events)).collect())
    }

    /// Free events between the block's alloc event and the event count.
    fn check_free_events(&self, free: &[u64]) -> Option<Vec<u64>> {
        let events = self.events;
        let decoded;
        let mapped = self.mapped::<u64>(id::ALLOC_EVENT);
        let alloc: &[u64] = match &mapped {
            Some(m) => m,
            None => {
                decoded = self.grouped(EVENTS, id::ALLOC_EVENT).unwrap_or_default();
                &decoded
            }
        };
        let bad = alloc.len() != free.len()
            || free.iter().zip(alloc).fold(false, |bad, (&f, &a)| {
                bad | (f > events) | (f < a.min(events))
            });
        bad.then(|| {
            free.iter()
                .enumerate()
                .map(|(i, &f)| f.clamp(alloc.get(i).map_or(0, |&a| a.min(events)), events))
                .collect()
        })
    }

    /// Free times not before the block's alloc time.
    fn check_free_times(&self, free: &[u64]) -> Option<Vec<u64>> {
        let decoded;
        let mapped = self.mapped::<u64>(id::ALLOC_TIME);
        let alloc: &[u64] = match &mapped {
            Some(m) => m,
            None => {
                decoded = self.grouped(TIMES, id::ALLOC_TIME).unwrap_or_default();
                &decoded
            }
        };
        let bad = alloc.len() != free.len()
            || free
                .iter()
                .zip(alloc)
                .fold(false, |bad, (&f, &a)| bad | (f < a));
        bad.then(|| {
            free.iter()
                .enumerate()
                .map(|(i, &f)| f.max(alloc.get(i).copied().unwrap_or(0)))
                .collect()
        })
    }

    /// The values of `section` of a group: kept from an earlier decoding of the group, or
    /// decoded now with what it needs; what was decoded on the way and not yet asked for is
    /// kept for its column (so that size, requested and usable sizes, say, decode once).
    fn grouped(&self, group: usize, section: u32) -> Result<Vec<u64>, LoadError> {
        let Some(lock) = self.groups.get(group) else {
            return Err(corrupt(&self.source, HEADER, "a known column group"));
        };
        let mut g = lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        g.asked |= 1 << (section % 64);
        if let Some(at) = g.kept.iter().position(|(id, _)| *id == section) {
            return Ok(g.kept.swap_remove(at).1);
        }
        let decoded = match group {
            SIZES => self.sizes(section)?,
            EVENTS => {
                let (alloc, free) = self.events()?;
                vec![(id::ALLOC_EVENT, alloc), (id::FREE_EVENT, free)]
            }
            _ => {
                let (alloc_event, free_event) = self.events()?;
                let (alloc, free) = self.times(&alloc_event, &free_event)?;
                // The events were decoded on the way: kept for their columns if not read yet
                // (the events group never waits on this one, so the two locks cannot deadlock).
                if let Some(events) = self.groups.get(EVENTS) {
                    let mut e = events
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    for (id, values) in
                        [(id::ALLOC_EVENT, alloc_event), (id::FREE_EVENT, free_event)]
                    {
                        if e.asked & (1 << id) == 0 && e.kept.iter().all(|(k, _)| *k != id) {
                            e.kept.push((id, values));
                        }
                    }
                }
                vec![(id::ALLOC_TIME, alloc), (id::FREE_TIME, free)]
            }
        };
        let mut mine = None;
        for (id, values) in decoded {
            if id == section {
                mine = Some(values);
            } else if g.asked & (1 << (id % 64)) == 0 {
                g.kept.push((id, values));
            }
        }
        mine.ok_or_else(|| corrupt(&self.source, HEADER, format!("a section with id {section}")))
    }

    /// `section` (requested, size or usable size) and the sizes it is stored relative to.
    fn sizes(&self, section: u32) -> Result<Vec<(u32, Vec<u64>)>, LoadError> {
        let d = self.decoder();
        let based =
            |s: u32| -> Result<bool, LoadError> { Ok(d.need(s)?.transform == XF_PLUS_BASE) };
        let need_size = section == id::SIZE || (section == id::USABLE && based(id::USABLE)?);
        let need_requested = section == id::REQUESTED || (need_size && based(id::SIZE)?);
        let requested = match need_requested {
            true => Some(d.numeric::<u64>(id::REQUESTED, None)?),
            false => None,
        };
        let size = match need_size {
            true => Some(d.numeric::<u64>(id::SIZE, requested.as_deref())?),
            false => None,
        };
        let usable = match section == id::USABLE {
            true => Some(d.numeric::<u64>(id::USABLE, size.as_deref())?),
            false => None,
        };
        Ok([
            (id::REQUESTED, requested),
            (id::SIZE, size),
            (id::USABLE, usable),
        ]
        .into_iter()
        .filter_map(|(id, values)| Some((id, values?)))
        .collect())
    }

    /// Alloc and free events, clamped so that `alloc <= free <= events`.
    fn events(&self) -> Result<(Vec<u64>, Vec<u64>), LoadError> {
        let d = self.decoder();
        let mut alloc = d.numeric::<u64>(id::ALLOC_EVENT, None)?;
        let base = (d.need(id::FREE_EVENT)?.transform == XF_PLUS_BASE).then_some(alloc.as_slice());
        let mut free = d.numeric::<u64>(id::FREE_EVENT, base)?;
        let events = self.events;
        for (a, f) in alloc.iter_mut().zip(&mut free) {
            *a = (*a).min(events);
            *f = (*f).clamp(*a, events);
        }
        Ok((alloc, free))
    }

    /// Block times: from the event times when the file has them, else from the per-block
    /// sections; a free time is never before its alloc time.
    fn times(
        &self,
        alloc_event: &[u64],
        free_event: &[u64],
    ) -> Result<(Vec<u64>, Vec<u64>), LoadError> {
        let d = self.decoder();
        if self.has_event_times {
            let times = if d.need(id::EVENT_TIME)?.packing == PACK_CONTEXT {
                // Contexts: the event order and the blocks' call sites.
                let order = crate::ppm::event_order(alloc_event, free_event, self.events);
                let site = self.site()?;
                let contexts = crate::ppm::EventTimeContexts {
                    order: &order,
                    site: &site,
                };
                d.numeric_ctx::<u64>(id::EVENT_TIME, None, Some(&contexts))?
            } else {
                d.numeric::<u64>(id::EVENT_TIME, None)?
            };
            let time_of = |e: u64| {
                usize::try_from(e)
                    .ok()
                    .and_then(|e| times.get(e).copied())
                    .unwrap_or(0)
            };
            let alloc: Vec<u64> = alloc_event.iter().map(|&e| time_of(e)).collect();
            let free = free_event
                .iter()
                .zip(&alloc)
                .map(|(&e, &at)| time_of(e).max(at))
                .collect();
            Ok((alloc, free))
        } else {
            let alloc = d.numeric::<u64>(id::ALLOC_TIME, None)?;
            let base =
                (d.need(id::FREE_TIME)?.transform == XF_PLUS_BASE).then_some(alloc.as_slice());
            let mut free = d.numeric::<u64>(id::FREE_TIME, base)?;
            for (f, &a) in free.iter_mut().zip(&alloc) {
                *f = (*f).max(a);
            }
            Ok((alloc, free))
        }
    }

    fn thread(&self) -> Result<Vec<u32>, LoadError> {
        let mut thread = self.decoder().numeric::<u32>(id::THREAD, None)?;
        for t in &mut thread {
            if *t as usize >= self.thread_count {
                *t = 0;
            }
        }
        Ok(thread)
    }

    fn site(&self) -> Result<Vec<u32>, LoadError> {
        let mut site = self.decoder().numeric::<u32>(id::SITE, None)?;
        for s in &mut site {
            if *s as usize >= self.nodes {
                *s = crate::model::NO_SITE;
            }
        }
        Ok(site)
    }
}

/// `None` when every value is below `limit`; else the values with those at or above it set to
/// 0 (the "none" thread or call site).
fn below<T: Copy + Into<u64> + Default>(values: &[T], limit: u64) -> Option<Vec<T>> {
    let bad = values
        .iter()
        .fold(false, |bad, &v| bad | (v.into() >= limit));
    bad.then(|| {
        values
            .iter()
            .map(|&v| if v.into() < limit { v } else { T::default() })
            .collect()
    })
}

/// The result of a decoding thread (a panic, which would be a bug, becomes an error).
fn joined<T>(source: &str, r: std::thread::Result<Result<T, LoadError>>) -> Result<T, LoadError> {
    r.unwrap_or_else(|_| Err(corrupt(source, HEADER, "a decodable block column")))
}

/// Rebuilds the warning summary: the kept locations, then the rest of the count by doubling
/// (`Warnings` only counts up one at a time; merging a copy into itself doubles it), so a
/// count of a billion costs 30 merges, not a billion additions.
fn restore_warnings(source: &str, records: Vec<WarningRecord>) -> Result<Warnings, LoadError> {
    let mut warnings = Warnings::new();
    for w in records {
        let Some(kind) = warn::static_kind(&w.kind) else {
            return Err(corrupt(
                source,
                HEADER,
                format!("a known warning kind, found {:?}", w.kind),
            ));
        };
        if w.count > MAX_RESTORED_WARNINGS || (w.first.len() as u64) > w.count {
            return Err(corrupt(source, HEADER, "a plausible warning count"));
        }
        let mut this = Warnings::new();
        for (file, line, offset) in w.first {
            this.add(kind, warn::message(kind), Location { file, line, offset });
        }
        let kept = this.kinds().first().map_or(0, |k: &WarningKind| k.count);
        let rest = w.count - kept;
        if rest > 0 {
            let mut one = Warnings::new();
            one.add(kind, warn::message(kind), Location::offset(source, 0));
            let mut extra = Warnings::new();
            for bit in (0..64 - rest.leading_zeros()).rev() {
                extra.merge(extra.clone());
                if rest >> bit & 1 == 1 {
                    extra.merge(one.clone());
                }
            }
            this.merge(extra);
        }
        warnings.merge(this);
    }
    Ok(warnings)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use proptest::prelude::*;

    /// A file holding one numeric section (and its base, if any) packed as asked, decoded back.
    fn round_trip(values: &[u64], transform: u8, base: Option<&[u64]>, packing: u8) -> Vec<u64> {
        let section = if transform == XF_PLUS_BASE {
            id::FREE_EVENT
        } else {
            id::ADDRESS
        };
        let c = codes(values, transform, base);
        let payload = match packing {
            PACK_BITS => pack_bits(&c),
            _ => {
                let max = c.iter().copied().max().unwrap_or(0);
                pack_planes(&c, (bit_width(max) as usize).div_ceil(8).max(1)).unwrap()
            }
        };
        let encoded = Encoded {
            id: section,
            elem_size: 8,
            transform,
            packing,
            shift: 0,
            count: values.len() as u64,
            payload,
        };
        let bytes = lay_out(&[encoded]);
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        let buf: &mut [u8] = bytemuck::cast_slice_mut(&mut words);
        buf[..bytes.len()].copy_from_slice(&bytes);
        let d = Decoder::new("t.msc", &buf[..bytes.len()], VERSION).unwrap();
        d.numeric::<u64>(section, base).unwrap()
    }

    fn values() -> impl Strategy<Value = Vec<u64>> {
        prop_oneof![
            prop::collection::vec(any::<u64>(), 0..3000),
            prop::collection::vec(0u64..1000, 0..3000),
            prop::collection::vec(Just(7u64), 0..3000),
            (
                any::<u64>(),
                prop::collection::vec(0u64..(1 << 20), 0..3000)
            )
                .prop_map(|(base, v)| v.into_iter().map(|x| base.wrapping_add(x)).collect()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

        /// Every transform and both numeric packings give back exactly the values, for any
        /// widths (including 0 and 64) and lengths that are not multiples of a group or chunk.
        #[test]
        fn numeric_sections_round_trip(v in values(), packing in prop_oneof![Just(PACK_BITS), Just(PACK_PLANES)]) {
            for transform in [XF_NONE, XF_DELTA, XF_ZIGZAG_DELTA] {
                prop_assert_eq!(&round_trip(&v, transform, None, packing), &v);
            }
            let base: Vec<u64> = v.iter().map(|x| x.rotate_left(7) ^ 0x5555).collect();
            prop_assert_eq!(&round_trip(&v, XF_PLUS_BASE, Some(&base), packing), &v);
        }
    }

    #[test]
    fn bit_packing_uses_the_chunk_spread() {
        // 1024 values spanning 0..=255 above a large reference: 8 bits each.
        let v: Vec<u64> = (0..1024).map(|i| (1 << 40) + (i % 256)).collect();
        let packed = pack_bits(&v);
        assert_eq!(packed.len(), 8 + 8 + 1024);
        // A constant chunk has width 0 and no data words.
        assert_eq!(pack_bits(&[5; 1000]).len(), 16);
    }

    #[test]
    fn forged_plane_count_is_an_error_not_an_allocation() {
        let v: Vec<u64> = (0..5000).map(|i| i * 3).collect();
        let encoded = Encoded {
            id: id::ADDRESS,
            elem_size: 8,
            transform: XF_NONE,
            packing: PACK_PLANES,
            shift: 0,
            count: 1 << 50,
            payload: pack_planes(&v, 2).unwrap(),
        };
        let bytes = lay_out(&[encoded]);
        let d = Decoder::new("p.msc", &bytes, VERSION).unwrap();
        let e = d.numeric::<u64>(id::ADDRESS, None).unwrap_err();
        assert!(
            e.to_string().starts_with("p.msc@16: corrupt .msc file"),
            "{e}"
        );
    }
}
