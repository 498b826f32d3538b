//! Decoding: the directory, checksums, packings and transforms of `.msc` sections.

use super::*;

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
        && let Some(version @ (VERSION | VERSION_V4 | VERSION_V3)) = read_u32(buf, 8)
    {
        return from_msc_words(&name, words, len, version);
    }
    from_msc_bytes(&name, &buf[..len])
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Section {
    pub(super) id: u32,
    /// Where its directory entry is (for error messages).
    pub(super) entry_at: usize,
    pub(super) elem_size: u8,
    pub(super) transform: u8,
    pub(super) packing: u8,
    /// Decoded values are shifted left by this (version 3; 0 in version 2).
    pub(super) shift: u8,
    pub(super) count: u64,
    pub(super) offset: usize,
    pub(super) len: usize,
}

pub(super) fn corrupt(source: &str, offset: usize, expected: impl Into<String>) -> LoadError {
    LoadError::Corrupt {
        at: Location::offset(source, offset as u64),
        expected: expected.into(),
    }
}

pub(super) fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

pub(super) fn read_u64(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}

/// Decodes `.msc` bytes (version 3; version 2 here too, version 1 through `v1.rs`);
/// `source` names the input in errors. Block columns of a version-3 file are decoded on first
/// use (see [`Column`]).
pub fn from_msc_bytes(source: &str, bytes: &[u8]) -> Result<Trace, LoadError> {
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return Err(corrupt(source, 0, "the magic bytes MEMSCAPE"));
    }
    let version = read_u32(bytes, 8).unwrap_or(0);
    if version == super::v1::VERSION {
        return super::v1::from_msc_v1_bytes(source, bytes);
    }
    if version == super::segments::VERSION_SEGMENTED {
        // Segments are 8-byte aligned in the file: aligned bytes keep their bit-packed words so.
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        let buf: &mut [u8] = bytemuck::cast_slice_mut(&mut words);
        buf[..bytes.len()].copy_from_slice(bytes);
        return super::segments::from_segmented(source, &buf[..bytes.len()]);
    }
    if matches!(version, VERSION | VERSION_V4 | VERSION_V3) {
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
                "format version {VERSION} (or {}, {VERSION_V4}, {VERSION_V3}, {VERSION_V2}, {}), found {version}",
                super::segments::VERSION_SEGMENTED,
                super::v1::VERSION
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
pub(super) enum Transform<'a> {
    None,
    Delta,
    ZigzagDelta,
    PlusBase(&'a [u64]),
}

/// Output element types of numeric sections.
pub(super) trait Elem: Copy + Default + Send {
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
pub(super) fn unpack_group<const W: usize>(words: &[u64], reference: u64, out: &mut [u64; GROUP]) {
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
pub(super) fn unpack_chunk<const W: usize>(
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
pub(super) fn join_planes<const K: usize>(
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
pub(super) struct Decoder<'a> {
    pub(super) source: &'a str,
    pub(super) bytes: &'a [u8],
    pub(super) sections: Vec<Section>,
    pub(super) version: u32,
}

impl<'a> Decoder<'a> {
    /// Reads and checks the directory of a version-2 or version-3 file (version 3: every
    /// payload against its checksum).
    pub(super) fn new(source: &'a str, bytes: &'a [u8], version: u32) -> Result<Self, LoadError> {
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

    pub(super) fn corrupt(&self, s: &Section, expected: impl Into<String>) -> LoadError {
        corrupt(self.source, s.entry_at, expected)
    }

    pub(super) fn find(&self, section: u32) -> Option<&Section> {
        self.sections.iter().find(|s| s.id == section)
    }

    pub(super) fn need(&self, section: u32) -> Result<&Section, LoadError> {
        self.find(section)
            .ok_or_else(|| corrupt(self.source, HEADER, format!("a section with id {section}")))
    }

    pub(super) fn payload(&self, s: &Section) -> &'a [u8] {
        &self.bytes[s.offset..s.offset + s.len]
    }

    /// Decodes a numeric section into values of type `T`. `base` is the decoded base section
    /// for [`XF_PLUS_BASE`].
    pub(super) fn numeric<T: Elem>(
        &self,
        section: u32,
        base: Option<&[u64]>,
    ) -> Result<Vec<T>, LoadError> {
        self.numeric_ctx(section, base, None)
    }

    /// [`Decoder::numeric`] for a section that may be context-coded ([`PACK_CONTEXT`]) with the
    /// event-time model, whose contexts `contexts` gives.
    pub(super) fn numeric_ctx<T: Elem>(
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
            PACK_CONTEXT if self.version >= VERSION_V4 && contexts.is_some() => {
                // Model 1 (files before wave 32) or 2 (with the previous delta).
                let model = payload.first().copied().filter(|&m| {
                    m == crate::ppm::MODEL_EVENT_TIMES
                        || m == crate::ppm::MODEL_EVENT_TIMES_PREVIOUS
                });
                // A coded value can cost almost nothing: the writer pads the payload to one
                // byte per PRESIZE_PER_BYTE values, so the count is backed by the payload.
                let (Some(model), true) =
                    (model, n <= payload.len().saturating_mul(PRESIZE_PER_BYTE))
                else {
                    return Err(self.corrupt(
                        s,
                        format!(
                            "model {} or {} and at most {PRESIZE_PER_BYTE} values per payload byte in section {section}",
                            crate::ppm::MODEL_EVENT_TIMES,
                            crate::ppm::MODEL_EVENT_TIMES_PREVIOUS
                        ),
                    ));
                };
                let Some(contexts) = contexts else {
                    return Err(self.corrupt(s, "contexts"));
                };
                let contexts = crate::ppm::EventTimeContexts {
                    order: contexts.order,
                    site: contexts.site,
                    model,
                };
                Plan::Codes(crate::ppm::decode(
                    &payload[1..],
                    n,
                    crate::ppm::EVENT_TIME_LENGTH_CONTEXTS,
                    |i, previous| contexts.context(i, previous),
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
    pub(super) fn byte_section(&self, section: u32) -> Result<Vec<u8>, LoadError> {
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
    pub(super) fn checked_meta(&self) -> Result<(MscMeta, u64, bool), LoadError> {
        let source = self.source;
        let meta_json = self.byte_section(id::META)?;
        let meta: MscMeta = serde_json::from_slice(&meta_json)
            .map_err(|e| corrupt(source, HEADER, format!("metadata JSON ({e})")))?;
        let m = &meta.meta;
        let counted = [
            m.allocs,
            m.frees,
            m.unknown_frees,
            m.inherited_frees,
            m.double_frees,
            m.mmaps,
            m.munmaps,
            m.pool_allocs,
            m.pool_frees,
            m.exec_ends,
        ]
        .iter()
        .try_fold(0u64, |acc, &x| acc.checked_add(x));
        let n = self.need(id::ALLOC_EVENT)?.count;
        if m.allocs
            .checked_add(m.mmaps)
            .and_then(|x| x.checked_add(m.pool_allocs))
            != Some(n)
            || counted != Some(m.events)
            || m.reallocs > m.frees
            || m.peak_event > m.events
        {
            return Err(corrupt(
                source,
                HEADER,
                "metadata counts that agree with the blocks (allocs + mmaps + pool allocs = blocks, events = allocs + frees + unknown + inherited + double frees + mmaps + munmaps + pool allocs and frees + blocks ended by exec)",
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
        // Optional block sections (version 5), one per block when present.
        for section in [id::PROCESS, id::FREE_SITE, id::FREE_THREAD, id::POOL] {
            if let Some(s) = self.find(section)
                && (s.count != n || s.elem_size != 4)
            {
                return Err(self.corrupt(
                    s,
                    format!("section {section} with {n} 4-byte elements, one per block"),
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
}
