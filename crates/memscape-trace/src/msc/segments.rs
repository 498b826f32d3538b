//! Version 6: a *segmented* `.msc` file, written as a sequence of self-contained segments (each
//! the blocks of a range and the times of a range of events, their columns encoded and
//! compressed as in version 5) followed by a footer (call tree, strings, threads, processes,
//! pools, metadata and the segment table), so that a writer can emit each segment as soon as
//! its blocks are known and hold no more than one segment's columns.
//!
//! Layout (little-endian):
//!
//! | offset | size | content |
//! |---|---|---|
//! | 0 | 8 | magic `MEMSCAPE` |
//! | 8 | 4 | format version 6 |
//! | 12 | 4 | 0 (no directory here) |
//! | 16 | … | segments, each 8-byte aligned: a version-5 layout (header, directory, payloads) of block sections 1–4, 7–11, 13–16 for its blocks, and either section 12 (the times of its events; context-coded with the contexts of *its* events, the first one without a predecessor) or sections 5 and 6 (per-block times) |
//! | F | … | footer: a version-5 layout of sections 20–26, 30–33, 40–42 and 50, the segment table (u64, four per segment: offset from the file start, length, blocks, first event) |
//! | end − 16 | 8 | F, the footer's offset |
//! | end − 8 | 8 | `MSCSEGS\0` |
//!
//! Segment `k` holds the times of events `first_event[k] .. first_event[k + 1]` (the last one
//! up to and including the trace end, index `events`). Blocks are in file order across
//! segments. The reader decodes the segments one by one (errors name the file offset of the
//! segment's entry or payload), then hands the columns to the version-5 loader, which checks
//! them as it checks a mappable file's.

use std::io::Write;

use super::*;

/// Version of segmented files.
pub const VERSION_SEGMENTED: u32 = 6;
const TRAILER_MAGIC: &[u8; 8] = b"MSCSEGS\0";
const TRAILER: usize = 16;
/// Footer section: the segment table.
const SEGMENT_TABLE: u32 = 50;
/// Blocks per segment a writer should use: on the cc1plus recording (3.15 M blocks) 2^20
/// gives a file 0.02 % larger than version 5's, 2^18 3 % (BENCHMARKS.md); a segment's columns
/// and codes are then about 150 MB (estimated: 2^20 × ~73 bytes of columns plus the codes).
pub const DEFAULT_SEGMENT_BLOCKS: usize = 1 << 20;

/// The columns of one segment's blocks (equal lengths).
#[derive(Clone, Copy)]
pub struct SegmentBlocks<'a> {
    pub address: &'a [u64],
    pub size: &'a [u64],
    pub requested_size: &'a [u64],
    pub usable_size: &'a [u64],
    pub alloc_time_ns: &'a [u64],
    pub free_time_ns: &'a [u64],
    pub alloc_event: &'a [u64],
    pub free_event: &'a [u64],
    pub thread: &'a [u32],
    pub site: &'a [u32],
    pub flags: &'a [u8],
    pub process: &'a [u32],
    pub free_site: &'a [u32],
    pub free_thread: &'a [u32],
    pub pool: &'a [u32],
}

impl<'a> SegmentBlocks<'a> {
    /// Blocks `range` of a trace.
    pub fn of(b: &'a BlockColumns, range: std::ops::Range<usize>) -> Self {
        Self {
            address: &b.address[range.clone()],
            size: &b.size[range.clone()],
            requested_size: &b.requested_size[range.clone()],
            usable_size: &b.usable_size[range.clone()],
            alloc_time_ns: &b.alloc_time_ns[range.clone()],
            free_time_ns: &b.free_time_ns[range.clone()],
            alloc_event: &b.alloc_event[range.clone()],
            free_event: &b.free_event[range.clone()],
            thread: &b.thread[range.clone()],
            site: &b.site[range.clone()],
            flags: &b.flags[range.clone()],
            process: &b.process[range.clone()],
            free_site: &b.free_site[range.clone()],
            free_thread: &b.free_thread[range.clone()],
            pool: &b.pool[range],
        }
    }

    fn len(&self) -> usize {
        self.address.len()
    }
}

/// The times of a segment's events and what the context model needs of each of them: per
/// event, its block's kind of event and call site (see `crate::ppm::EventTimeContexts`).
pub struct SegmentEvents<'a> {
    pub first_event: u64,
    /// Times of events `first_event ..` (the last segment: and the trace end).
    pub times: &'a [u64],
    /// `crate::ppm::event_order` of these events (ids refer to `site`).
    pub order: &'a [u32],
    pub site: &'a [u32],
}

/// Writes a segmented `.msc` file: [`SegmentWriter::push`] per segment as the trace grows,
/// [`SegmentWriter::finish`] with the rest of the trace at its end.
pub struct SegmentWriter<W: Write> {
    out: W,
    written: u64,
    /// Per segment: offset, length, blocks, first event.
    table: Vec<u64>,
    blocks: u64,
    next_event: u64,
    event_times: Option<bool>,
    level: i32,
    shift: u8,
    /// Event times context-coded where that is smaller (the default), or always plain
    /// ([`SegmentWriter::plain_event_times`]).
    context_coded_times: bool,
}

impl<W: Write> SegmentWriter<W> {
    /// Starts a file (writes its header).
    pub fn new(mut out: W, options: &MscOptions) -> std::io::Result<Self> {
        if options.time_resolution_log2 >= 64 {
            return Err(std::io::Error::other("time resolution of at most 2^63 ns"));
        }
        out.write_all(MAGIC)?;
        out.write_all(&VERSION_SEGMENTED.to_le_bytes())?;
        out.write_all(&0u32.to_le_bytes())?;
        Ok(Self {
            out,
            written: HEADER as u64,
            table: Vec::new(),
            blocks: 0,
            next_event: 0,
            event_times: None,
            level: options.zstd_level.unwrap_or(ZSTD_LEVEL),
            shift: options.time_resolution_log2,
            context_coded_times: true,
        })
    }

    /// Stores each segment's event times delta-coded and zstd-compressed only, without trying
    /// the context model of `crate::ppm` (which is most of a segment's encoding CPU: on a live
    /// cc1plus recording ≈ 57 % of the writer thread's, BENCHMARKS.md "wave 26"). For a writer
    /// that shares its cores with a live view; the file reads back the same, a little larger.
    pub fn plain_event_times(mut self) -> Self {
        self.context_coded_times = false;
        self
    }

    /// Encodes and writes one segment. `events`: the times of the events since the last
    /// segment (every segment of a file has them, or none has, then block times are stored).
    pub fn push(
        &mut self,
        blocks: &SegmentBlocks<'_>,
        events: Option<&SegmentEvents<'_>>,
    ) -> std::io::Result<()> {
        let n = blocks.len();
        if [
            blocks.size.len(),
            blocks.requested_size.len(),
            blocks.usable_size.len(),
            blocks.alloc_time_ns.len(),
            blocks.free_time_ns.len(),
            blocks.alloc_event.len(),
            blocks.free_event.len(),
            blocks.thread.len(),
            blocks.site.len(),
            blocks.flags.len(),
            blocks.process.len(),
            blocks.free_site.len(),
            blocks.free_thread.len(),
            blocks.pool.len(),
        ]
        .iter()
        .any(|&l| l != n)
        {
            return Err(std::io::Error::other("segment columns of unequal lengths"));
        }
        if *self.event_times.get_or_insert(events.is_some()) != events.is_some() {
            return Err(std::io::Error::other(
                "event times in every segment or in none",
            ));
        }
        let first_event = match events {
            Some(e) if e.first_event != self.next_event => {
                return Err(std::io::Error::other("segments of consecutive events"));
            }
            Some(e) => e.first_event,
            None => self.next_event,
        };
        let sections = encode_segment(
            blocks,
            events,
            self.shift,
            self.level,
            self.context_coded_times,
        )?;
        let bytes = lay_out(&sections);
        let offset = self.written;
        self.out.write_all(&bytes)?;
        let padded = bytes.len().next_multiple_of(8);
        self.out.write_all(&[0u8; 8][..padded - bytes.len()])?;
        self.written += padded as u64;
        self.table
            .extend([offset, bytes.len() as u64, n as u64, first_event]);
        self.blocks += n as u64;
        if let Some(e) = events {
            self.next_event = e.first_event + e.times.len() as u64;
        }
        Ok(())
    }

    /// Writes the footer (everything of `rest` but its blocks, which the segments hold) and the
    /// trailer; returns the output.
    pub fn finish(self, rest: &Trace) -> std::io::Result<W> {
        let footer = encode_footer_at(rest, self.level, None)?;
        self.finish_with(footer)
    }

    /// [`SegmentWriter::finish`] with the footer encoded beforehand ([`EncodedFooter::new`],
    /// with this writer's options): only the segment table is left to encode.
    pub fn finish_with(mut self, footer: EncodedFooter) -> std::io::Result<W> {
        let mut sections = footer.sections;
        sections.push(encode_best(
            SEGMENT_TABLE,
            8,
            &self.table,
            &[XF_NONE],
            None,
            self.level,
        )?);
        let bytes = lay_out(&sections);
        let footer = self.written;
        self.out.write_all(&bytes)?;
        let padded = bytes.len().next_multiple_of(8);
        self.out.write_all(&[0u8; 8][..padded - bytes.len()])?;
        self.out.write_all(&footer.to_le_bytes())?;
        self.out.write_all(TRAILER_MAGIC)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// `trace` as a file written from it with `options` loads: its block times rounded down to
/// the file's time resolution (the encoder stores `t >> shift`, the loader `code << shift`);
/// everything else is stored as it is. A live recording's last view is its in-memory trace
/// made equal to the file it wrote this way, instead of the file read back.
pub fn round_times_as_stored(trace: &mut Trace, options: &MscOptions) {
    let shift = options.time_resolution_log2;
    if shift == 0 || shift >= 64 {
        return;
    }
    let round = |column: &Column<u64>| -> Column<u64> {
        Column::from(
            column
                .iter()
                .map(|&t| t >> shift << shift)
                .collect::<Vec<u64>>(),
        )
    };
    trace.blocks.alloc_time_ns = round(&trace.blocks.alloc_time_ns);
    trace.blocks.free_time_ns = round(&trace.blocks.free_time_ns);
}

/// A footer's sections but the segment table, encoded apart from the writer (while it is
/// still busy with the last segments) and handed to [`SegmentWriter::finish_with`].
pub struct EncodedFooter {
    sections: Vec<Encoded>,
}

impl EncodedFooter {
    /// Encodes everything of `rest` but its blocks, with the writer's `options`.
    pub fn new(rest: &Trace, options: &MscOptions) -> std::io::Result<Self> {
        encode_footer_at(rest, options.zstd_level.unwrap_or(ZSTD_LEVEL), None)
    }

    /// [`EncodedFooter::new`] continuing the call tree's columns that `ahead` compressed while
    /// the recording ran: only the nodes added since are compressed now (a column whose
    /// compressed prefix no longer matches is encoded whole). The file loads the same.
    pub fn with_ahead(
        rest: &Trace,
        options: &MscOptions,
        ahead: &super::ahead::FooterAhead,
    ) -> std::io::Result<Self> {
        encode_footer_at(rest, options.zstd_level.unwrap_or(ZSTD_LEVEL), Some(ahead))
    }
}

fn encode_footer_at(
    rest: &Trace,
    level: i32,
    ahead: Option<&super::ahead::FooterAhead>,
) -> std::io::Result<EncodedFooter> {
    let mut sections = tree_and_strings_ahead(rest, level, ahead)?;
    sections.push(meta_section(rest, level)?);
    Ok(EncodedFooter { sections })
}

/// The sections of one segment.
fn encode_segment(
    b: &SegmentBlocks<'_>,
    events: Option<&SegmentEvents<'_>>,
    shift: u8,
    level: i32,
    context_coded_times: bool,
) -> std::io::Result<Vec<Encoded>> {
    let quantized = |values: &[u64]| -> Vec<u64> { values.iter().map(|&v| v >> shift).collect() };
    let with_shift = |mut e: Encoded| {
        e.shift = shift;
        e
    };
    type Job<'a> = Box<dyn FnOnce() -> std::io::Result<Vec<Encoded>> + Send + 'a>;
    let jobs: Vec<Job<'_>> = vec![
        Box::new(|| {
            Ok(vec![encode_best(
                id::ADDRESS,
                8,
                b.address,
                &[XF_NONE, XF_ZIGZAG_DELTA],
                None,
                level,
            )?])
        }),
        Box::new(|| {
            Ok(vec![
                encode_best(id::REQUESTED, 8, b.requested_size, &[XF_NONE], None, level)?,
                encode_best(
                    id::SIZE,
                    8,
                    b.size,
                    &[XF_PLUS_BASE],
                    Some(b.requested_size),
                    level,
                )?,
                encode_best(
                    id::USABLE,
                    8,
                    b.usable_size,
                    &[XF_NONE, XF_PLUS_BASE],
                    Some(b.size),
                    level,
                )?,
                encode_best(id::ALLOC_EVENT, 8, b.alloc_event, &[XF_DELTA], None, level)?,
                encode_best(
                    id::FREE_EVENT,
                    8,
                    b.free_event,
                    &[XF_PLUS_BASE],
                    Some(b.alloc_event),
                    level,
                )?,
            ])
        }),
        Box::new(move || match events {
            Some(e) => {
                let times = quantized(e.times);
                let plain = encode_best(id::EVENT_TIME, 8, &times, &[XF_DELTA], None, level)?;
                if !context_coded_times {
                    return Ok(vec![with_shift(plain)]);
                }
                let contexts = crate::ppm::EventTimeContexts {
                    order: e.order,
                    site: e.site,
                    model: crate::ppm::MODEL_EVENT_TIMES_PREVIOUS,
                };
                Ok(vec![with_shift(context_coded(
                    Some(plain),
                    &times,
                    &contexts,
                ))])
            }
            None => block_time_sections(b.alloc_time_ns, b.free_time_ns, shift, level),
        }),
        Box::new(|| {
            let small = |section, values: &[u32]| {
                encode_best(section, 4, &widen(values), &[XF_NONE], None, level)
            };
            Ok(vec![
                small(id::THREAD, b.thread)?,
                small(id::SITE, b.site)?,
                encode_best(id::FLAGS, 1, &widen(b.flags), &[XF_NONE], None, level)?,
                small(id::PROCESS, b.process)?,
                small(id::FREE_SITE, b.free_site)?,
                small(id::FREE_THREAD, b.free_thread)?,
                small(id::POOL, b.pool)?,
            ])
        }),
    ];
    let results: Vec<std::io::Result<Vec<Encoded>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = jobs.into_iter().map(|job| scope.spawn(job)).collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("column encoder panicked")))
            })
            .collect()
    });
    let mut sections = Vec::new();
    for r in results {
        sections.extend(r?);
    }
    Ok(sections)
}

/// A whole trace as a segmented file of segments of `segment_blocks` blocks (the events of a
/// segment: from its first block's alloc event on).
pub(super) fn segmented_bytes(
    trace: &Trace,
    options: &MscOptions,
    segment_blocks: usize,
) -> std::io::Result<Vec<u8>> {
    write_segments(
        trace,
        SegmentWriter::new(Vec::new(), options)?,
        segment_blocks,
    )
}

/// [`segmented_bytes`] with `writer` as configured.
fn write_segments(
    trace: &Trace,
    mut writer: SegmentWriter<Vec<u8>>,
    segment_blocks: usize,
) -> std::io::Result<Vec<u8>> {
    let b = &trace.blocks;
    b.prefetch(&BlockColumn::ALL);
    let times = event_times(trace);
    let order = times
        .as_ref()
        .map(|_| crate::ppm::event_order(&b.alloc_event, &b.free_event, trace.meta.events));
    let per = segment_blocks.max(1);
    let segments = b.len().div_ceil(per).max(1);
    let mut first_event = 0usize;
    for k in 0..segments {
        let range = k * per..((k + 1) * per).min(b.len());
        let blocks = SegmentBlocks::of(b, range.clone());
        let (Some(times), Some(order)) = (&times, &order) else {
            writer.push(&blocks, None)?;
            continue;
        };
        let end = if k + 1 == segments {
            times.len()
        } else {
            usize::try_from(b.alloc_event[range.end])
                .unwrap_or(usize::MAX)
                .clamp(first_event, times.len())
        };
        let events = SegmentEvents {
            first_event: first_event as u64,
            times: &times[first_event..end],
            order: &order[first_event.min(order.len())..end.min(order.len())],
            site: &b.site,
        };
        writer.push(&blocks, Some(&events))?;
        first_event = end;
    }
    writer.finish(trace)
}

/// A `Corrupt` error of a part of the file at `base` made to name the file and the offset in it.
fn rebased(source: &str, base: usize, what: &str, e: LoadError) -> LoadError {
    match e {
        LoadError::Corrupt { at, expected } => corrupt(
            source,
            base + at.offset.unwrap_or(0) as usize,
            format!("{what}: {expected}"),
        ),
        other => other,
    }
}

/// Block columns gathered from the segments.
#[derive(Default)]
struct Gathered {
    u64s: [Vec<u64>; 8],
    u32s: [Vec<u32>; 6],
    flags: Vec<u8>,
}

const U64_IDS: [u32; 8] = [
    id::ADDRESS,
    id::REQUESTED,
    id::SIZE,
    id::USABLE,
    id::ALLOC_EVENT,
    id::FREE_EVENT,
    id::ALLOC_TIME,
    id::FREE_TIME,
];
const U32_IDS: [u32; 6] = [
    id::THREAD,
    id::SITE,
    id::PROCESS,
    id::FREE_SITE,
    id::FREE_THREAD,
    id::POOL,
];

/// Reads a segmented file held in 8-byte-aligned `bytes`.
pub(super) fn from_segmented(source: &str, bytes: &[u8]) -> Result<Trace, LoadError> {
    let len = bytes.len();
    if len < HEADER + TRAILER || &bytes[len - 8..] != TRAILER_MAGIC {
        return Err(corrupt(
            source,
            len.saturating_sub(8),
            "the segment trailer MSCSEGS at the end of a version-6 file (a cut file?)",
        ));
    }
    let footer_at = read_u64(bytes, len - TRAILER)
        .and_then(|f| usize::try_from(f).ok())
        .filter(|&f| f >= HEADER && f <= len - TRAILER && f.is_multiple_of(8))
        .ok_or_else(|| {
            corrupt(
                source,
                len - TRAILER,
                "the footer's offset, 8-byte aligned, after the header and before the trailer",
            )
        })?;
    let footer_bytes = &bytes[footer_at..len - TRAILER];
    let footer = Decoder::new(source, footer_bytes, VERSION)
        .map_err(|e| rebased(source, footer_at, "footer", e))?;
    let table = footer
        .numeric::<u64>(SEGMENT_TABLE, None)
        .map_err(|e| rebased(source, footer_at, "footer", e))?;
    let table_at = footer_at + footer.need(SEGMENT_TABLE).map_or(0, |s| s.entry_at);
    let bad_table = |what: &str| corrupt(source, table_at, format!("a segment table of {what}"));
    if !table.len().is_multiple_of(4) {
        return Err(bad_table("four values per segment"));
    }
    let meta_json = footer
        .byte_section(id::META)
        .map_err(|e| rebased(source, footer_at, "footer", e))?;
    let meta: MscMeta = serde_json::from_slice(&meta_json)
        .map_err(|e| corrupt(source, footer_at, format!("footer: metadata JSON ({e})")))?;
    let events = meta.meta.events;
    let mut gathered = Gathered::default();
    let mut segment_times: Vec<(usize, usize, usize, u64)> = Vec::new();
    let mut next_at = HEADER;
    let mut has_times: Option<bool> = None;
    for (k, entry) in table.chunks_exact(4).enumerate() {
        let [offset, seg_len, blocks, first_event] = [entry[0], entry[1], entry[2], entry[3]];
        let (Ok(offset), Ok(seg_len)) = (usize::try_from(offset), usize::try_from(seg_len)) else {
            return Err(bad_table("offsets within the file"));
        };
        if offset != next_at || offset.checked_add(seg_len).is_none_or(|e| e > footer_at) {
            return Err(bad_table(&format!(
                "segments one after the other before the footer (segment {k} at {offset})"
            )));
        }
        next_at = (offset + seg_len).next_multiple_of(8);
        let what = format!("segment {k} (at offset {offset})");
        let seg = Decoder::new(source, &bytes[offset..offset + seg_len], VERSION)
            .map_err(|e| rebased(source, offset, &what, e))?;
        let at = |e| rebased(source, offset, &what, e);
        let n = seg.need(id::ADDRESS).map_err(at)?.count;
        if n != blocks {
            return Err(corrupt(
                source,
                offset + HEADER,
                format!("{what}: {blocks} blocks, as the segment table says, found {n}"),
            ));
        }
        let times_here = seg.find(id::EVENT_TIME).is_some();
        if *has_times.get_or_insert(times_here) != times_here {
            return Err(corrupt(
                source,
                offset,
                format!("{what}: event times in every segment or in none"),
            ));
        }
        decode_segment_blocks(&seg, &mut gathered, times_here).map_err(at)?;
        if times_here {
            segment_times.push((k, offset, seg_len, first_event));
        }
    }
    if next_at != footer_at {
        return Err(bad_table("segments that end where the footer starts"));
    }
    let n = gathered.u64s[0].len();
    if has_times == Some(true) {
        let [.., alloc_event, free_event, alloc_time, free_time] = &mut gathered.u64s;
        let times = segment_event_times(
            source,
            bytes,
            &segment_times,
            events,
            alloc_event,
            free_event,
            &gathered.u32s[1],
        )?;
        let time_of = |e: u64| {
            usize::try_from(e)
                .ok()
                .and_then(|e| times.get(e).copied())
                .ok_or_else(|| corrupt(source, HEADER, "event indices below the event count"))
        };
        *alloc_time = alloc_event
            .iter()
            .map(|&e| time_of(e))
            .collect::<Result<_, _>>()?;
        *free_time = free_event
            .iter()
            .map(|&e| time_of(e))
            .collect::<Result<_, _>>()?;
    }
    // A writer that streams blocks as they end (`memscape record`) writes them in the order
    // they ended, live ones last: back into allocation order (the model's).
    in_allocation_order(&mut gathered);
    // The columns as a version-5 file with raw block columns, loaded (and checked) as such.
    let [
        address,
        requested,
        size,
        usable,
        alloc_event,
        free_event,
        alloc_time,
        free_time,
    ] = &gathered.u64s;
    let [thread, site, process, free_site, free_thread, pool] = &gathered.u32s;
    fn raw<'a, T: bytemuck::Pod>(id: u32, values: &'a [T]) -> SectionRef<'a> {
        SectionRef {
            id,
            elem_size: std::mem::size_of::<T>() as u8,
            transform: XF_NONE,
            packing: PACK_RAW,
            shift: 0,
            count: values.len() as u64,
            payload: bytemuck::cast_slice(values),
        }
    }
    let mut sections = vec![
        raw(id::ADDRESS, address),
        raw(id::SIZE, size),
        raw(id::REQUESTED, requested),
        raw(id::USABLE, usable),
        raw(id::ALLOC_TIME, alloc_time),
        raw(id::FREE_TIME, free_time),
        raw(id::ALLOC_EVENT, alloc_event),
        raw(id::FREE_EVENT, free_event),
        raw(id::THREAD, thread),
        raw(id::SITE, site),
        raw(id::FLAGS, &gathered.flags),
        raw(id::PROCESS, process),
        raw(id::FREE_SITE, free_site),
        raw(id::FREE_THREAD, free_thread),
        raw(id::POOL, pool),
    ];
    debug_assert!(sections.iter().all(|s| s.count == n as u64));
    for s in footer.sections.iter().filter(|s| s.id != SEGMENT_TABLE) {
        sections.push(SectionRef {
            id: s.id,
            elem_size: s.elem_size,
            transform: s.transform,
            packing: s.packing,
            shift: s.shift,
            count: s.count,
            payload: footer.payload(s),
        });
    }
    // Laid out straight into the aligned words the loader keeps (one copy of the columns).
    let laid_len = laid_out_len(&sections);
    let mut words = vec![0u64; laid_len.div_ceil(8)];
    lay_out_into(
        &sections,
        &mut bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..laid_len],
    );
    drop(sections);
    drop(gathered);
    // What the loader finds wrong is in the footer's tables or the blocks' cross-checks.
    from_msc_words(source, words, laid_len, VERSION).map_err(|e| match e {
        LoadError::Corrupt { expected, .. } => corrupt(
            source,
            footer_at,
            format!("footer and segments that agree: {expected}"),
        ),
        other => other,
    })
}

/// Sorts the gathered blocks by allocation event (stable), when they are not already.
fn in_allocation_order(g: &mut Gathered) {
    let alloc_event = &g.u64s[4];
    if alloc_event.is_sorted() {
        return;
    }
    let mut order: Vec<u32> = (0..alloc_event.len() as u32).collect();
    order.sort_by_key(|&i| alloc_event[i as usize]);
    fn permuted<T: Copy>(column: &mut Vec<T>, order: &[u32]) {
        if column.len() == order.len() {
            *column = order.iter().map(|&i| column[i as usize]).collect();
        }
    }
    for column in &mut g.u64s {
        permuted(column, &order);
    }
    for column in &mut g.u32s {
        permuted(column, &order);
    }
    permuted(&mut g.flags, &order);
}

/// Decodes a segment's block columns onto the gathered ones.
fn decode_segment_blocks(
    seg: &Decoder<'_>,
    g: &mut Gathered,
    event_times: bool,
) -> Result<(), LoadError> {
    let n = seg.need(id::ADDRESS)?.count;
    let mut decoded: Vec<Vec<u64>> = Vec::with_capacity(8);
    for (i, &section) in U64_IDS.iter().enumerate() {
        let values = match section {
            id::ALLOC_TIME | id::FREE_TIME if event_times => Vec::new(),
            _ => {
                let base = match (seg.need(section)?.transform, base_section(section)) {
                    (XF_PLUS_BASE, Some(base)) => {
                        let j = U64_IDS.iter().position(|&b| b == base).unwrap_or(i);
                        decoded.get(j).map(Vec::as_slice)
                    }
                    _ => None,
                };
                seg.numeric::<u64>(section, base)?
            }
        };
        decoded.push(values);
    }
    for (section, values) in U64_IDS.iter().zip(&decoded) {
        // Only the time columns are absent when the segment carries event times (they are
        // filled from those times later); every other column has one value per block.
        let times_from_events = event_times && matches!(*section, id::ALLOC_TIME | id::FREE_TIME);
        if !(values.len() as u64 == n || times_from_events && values.is_empty()) {
            let s = seg.need(*section)?;
            return Err(seg.corrupt(s, format!("section {section} with {n} elements")));
        }
    }
    for (column, values) in g.u64s.iter_mut().zip(decoded) {
        column.extend(values);
    }
    for (column, &section) in g.u32s.iter_mut().zip(&U32_IDS) {
        let values = seg.numeric::<u32>(section, None)?;
        if values.len() as u64 != n {
            let s = seg.need(section)?;
            return Err(seg.corrupt(s, format!("section {section} with {n} elements")));
        }
        column.extend(values);
    }
    let flags = seg.numeric::<u8>(id::FLAGS, None)?;
    if flags.len() as u64 != n {
        let s = seg.need(id::FLAGS)?;
        return Err(seg.corrupt(s, format!("section {} with {n} elements", id::FLAGS)));
    }
    g.flags.extend(flags);
    Ok(())
}

/// The event times of every segment (`segments`: index, offset, length, first event), decoded with the
/// contexts of the gathered blocks: one per event plus the trace end.
fn segment_event_times(
    source: &str,
    bytes: &[u8],
    segments: &[(usize, usize, usize, u64)],
    events: u64,
    alloc_event: &[u64],
    free_event: &[u64],
    site: &[u32],
) -> Result<Vec<u64>, LoadError> {
    let total = usize::try_from(events)
        .ok()
        .and_then(|e| e.checked_add(1))
        .ok_or_else(|| corrupt(source, HEADER, "an event count that fits memory"))?;
    // First the segments' event ranges, and the times of those not context-coded: the event
    // count is backed by decoded data, or by the context coder's payload bound, before the
    // event order (4 bytes per event) is allocated.
    let mut plain: Vec<Option<Vec<u64>>> = Vec::with_capacity(segments.len());
    let mut start = 0usize;
    for (j, &(k, offset, seg_len, first_event)) in segments.iter().enumerate() {
        let what = format!("segment {k} (at offset {offset})");
        let at = |e| rebased(source, offset, &what, e);
        // (Bounds checked when its blocks were read.)
        let seg = Decoder::new(source, &bytes[offset..offset + seg_len], VERSION).map_err(at)?;
        if first_event != start as u64 {
            return Err(corrupt(
                source,
                offset,
                format!("{what}: events from {start} on, found {first_event}"),
            ));
        }
        let s = seg.need(id::EVENT_TIME).map_err(at)?;
        let count = usize::try_from(s.count).unwrap_or(usize::MAX);
        let end = start.saturating_add(count);
        let last = j + 1 == segments.len();
        let backed = s.packing != PACK_CONTEXT || count / PRESIZE_PER_BYTE < s.len;
        if end > total || (last && end != total) || !backed {
            return Err(corrupt(
                source,
                offset + s.entry_at,
                format!("{what}: event times up to the trace end ({total} in all)"),
            ));
        }
        plain.push(if s.packing == PACK_CONTEXT {
            None
        } else {
            let values = seg.numeric::<u64>(id::EVENT_TIME, None).map_err(at)?;
            if values.len() != count {
                return Err(at(seg.corrupt(s, format!("{count} event times"))));
            }
            Some(values)
        });
        start = end;
    }
    let order = crate::ppm::event_order(alloc_event, free_event, events);
    let mut times: Vec<u64> = Vec::with_capacity(total);
    for (&(k, offset, seg_len, _), plain) in segments.iter().zip(plain) {
        if let Some(values) = plain {
            times.extend(values);
            continue;
        }
        let what = format!("segment {k} (at offset {offset})");
        let at = |e| rebased(source, offset, &what, e);
        let seg = Decoder::new(source, &bytes[offset..offset + seg_len], VERSION).map_err(at)?;
        let start = times.len();
        let end = start + seg.need(id::EVENT_TIME).map_or(0, |s| s.count as usize);
        let contexts = crate::ppm::EventTimeContexts {
            order: &order[start.min(order.len())..end.min(order.len())],
            site,
            // The decoder takes the model from the section's first byte.
            model: crate::ppm::MODEL_EVENT_TIMES,
        };
        let values = seg
            .numeric_ctx::<u64>(id::EVENT_TIME, None, Some(&contexts))
            .map_err(at)?;
        times.extend(values);
    }
    Ok(times)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A trace with event times: allocations and frees at irregular times from a few sites.
    fn churn() -> Trace {
        let mut b = crate::TraceBuilder::with_event_times("churn");
        let thread = b.thread("main");
        let sites: Vec<u32> = (1..=5u64)
            .map(|ip| {
                b.call_tree.child(
                    0,
                    crate::Frame {
                        ip: 0x400_000 + ip * 16,
                        ..Default::default()
                    },
                )
            })
            .collect();
        let mut t = 0u64;
        let mut live = Vec::new();
        // Noisy gaps between events (xorshift), as a program's are.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..40_000u64 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Each site's events at its own pace (what the context model keys on).
            let k = ((state >> 20) % 5) as usize;
            t += [3, 40, 900, 7_000, 25_000][k] + state % 4;
            if i % 3 == 2
                && let Some(address) = live.pop()
            {
                b.free(i, t, address);
                continue;
            }
            let address = 0x10_0000 + 64 * i;
            let site = sites[k];
            b.alloc(i, t, address, 16 + i % 50, 32 + i % 50, thread, site);
            live.push(address);
        }
        b.finish(crate::TraceFormat::Csv, true)
    }

    /// Segments whose event times skip the context model read back as the same trace as those
    /// that use it (every column, rounded or exact times); only the coding differs.
    #[test]
    fn plain_event_times_read_back_as_the_context_coded_file() {
        let trace = churn();
        for shift in [0, 4] {
            let options = MscOptions {
                time_resolution_log2: shift,
                zstd_level: Some(3),
                ..Default::default()
            };
            let coded = segmented_bytes(&trace, &options, 5_000).unwrap();
            let writer = SegmentWriter::new(Vec::new(), &options)
                .unwrap()
                .plain_event_times();
            let plain = write_segments(&trace, writer, 5_000).unwrap();
            // (The context model wins on these times: else both files would be the same.)
            assert!(
                plain.len() > coded.len(),
                "shift {shift}: {} vs {}",
                plain.len(),
                coded.len()
            );
            let a = crate::from_msc_bytes("s.msc", &coded).unwrap();
            let b = crate::from_msc_bytes("s.msc", &plain).unwrap();
            assert_eq!(a.blocks, b.blocks, "shift {shift}");
            assert_eq!(a.meta, b.meta, "shift {shift}");
            assert_eq!(a.strings, b.strings);
            assert_eq!(a.call_tree.parent, b.call_tree.parent);
        }
    }
}
