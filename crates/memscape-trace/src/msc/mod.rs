//! memscape's native trace format (`.msc`), version 5: columnar, each column encoded for fast
//! decoding *and* small size, block columns decoded on first use (the load checks and keeps
//! the file; see [`Column`]) — or, in a *mappable* file ([`MscOptions::mappable`]), stored
//! raw and used in place from a memory mapping.
//!
//! Layout (all integers little-endian):
//!
//! | offset | size | content |
//! |---|---|---|
//! | 0 | 8 | magic `MEMSCAPE` |
//! | 8 | 4 | format version (5; versions 1, 2, 3 and 4 are still read; 6 is the segmented layout of `segments.rs`, whose segments and footer are each laid out as here) |
//! | 12 | 4 | number of sections `N` (at most 64) |
//! | 16 | 40·N | directory: per section `id: u32`, `element size: u8`, `transform: u8`, `packing: u8`, `time shift: u8`, `element count: u64`, `payload offset: u64` (from the file start, a multiple of 8), `payload length: u64`, `checksum: u64` (of the payload, see `checksum`; 0 and not checked for raw block sections) |
//! | … | … | payloads, each starting 8-byte aligned |
//!
//! Version 2 has 32-byte entries: no checksum, and 0 where the shift is. A shift `s` means the
//! decoded values are shifted left by `s` (times stored rounded to 2^s ns, [`MscOptions`]).
//! Version 3 is version 4 without packing 4; version 4 is version 5 without its optional
//! sections (13–16, 33, 41, 42), read as one process without free sites or pools.
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
//! | 4 | context-coded (version 4) | one byte: the context model (1: event times, `crate::ppm::EventTimeContexts`; 2: the same with the previous delta in the most specific order, written since wave 32), then a range-coded stream of the codes (`crate::ppm`), padded with zeros to at least one byte per 256 codes |
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
//! JSON: [`crate::model::TraceMeta`] and the warning summary). Version 5, optional: 13 process,
//! 14 free site, 15 free thread, 16 pool (u32 block columns), 33 thread process (u32 per
//! thread), 41 process table, 42 pool table (u8, JSON of [`crate::process::Process`] and
//! [`crate::process::Pool`] lists).
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
use crate::process::{Pool, Process};
use crate::warn;

pub const MAGIC: &[u8; 8] = b"MEMSCAPE";
/// The version [`to_msc_bytes`] writes.
pub const VERSION: u32 = 5;
/// Version 4: version 5 without the process, free-site and pool sections (13–16, 33, 41, 42):
/// read as version 5 is, as one process without free sites or pools.
const VERSION_V4: u32 = 4;
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
    pub const PROCESS: u32 = 13;
    pub const FREE_SITE: u32 = 14;
    pub const FREE_THREAD: u32 = 15;
    pub const POOL: u32 = 16;
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
    pub const THREAD_PROCESS: u32 = 33;
    pub const META: u32 = 40;
    pub const PROCESSES: u32 = 41;
    pub const POOLS: u32 = 42;
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

mod ahead;
mod decode;
mod eager;
mod layout;
mod lazy;
mod segments;
pub(crate) mod v1;
mod write;

pub use ahead::FooterAhead;
use decode::*;
pub use decode::{from_msc_bytes, read_msc};
pub use layout::reseal_checksums;
use layout::*;
use lazy::*;
pub use segments::{
    DEFAULT_SEGMENT_BLOCKS, EncodedFooter, SegmentBlocks, SegmentEvents, SegmentWriter,
    VERSION_SEGMENTED, round_times_as_stored,
};
use write::*;
pub use write::{
    FAST_ZSTD_LEVEL, MscOptions, to_msc_bytes, to_msc_bytes_with, write_msc, write_msc_with,
};

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
                pack_planes(&c, (bit_width(max) as usize).div_ceil(8).max(1), ZSTD_LEVEL).unwrap()
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
            payload: pack_planes(&v, 2, ZSTD_LEVEL).unwrap(),
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
