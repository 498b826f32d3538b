//! Encoding: traces to `.msc` sections and bytes.

use super::*;

/// One encoded section before it is laid out in the file.
pub(super) struct Encoded {
    pub(super) id: u32,
    pub(super) elem_size: u8,
    pub(super) transform: u8,
    pub(super) packing: u8,
    /// Values are stored shifted right by this many bits (times rounded to 2^shift ns).
    pub(super) shift: u8,
    pub(super) count: u64,
    pub(super) payload: Vec<u8>,
}

pub(super) fn zigzag(x: u64) -> u64 {
    (x << 1) ^ ((x as i64 >> 63) as u64)
}

pub(super) fn unzigzag(c: u64) -> u64 {
    (c >> 1) ^ (c & 1).wrapping_neg()
}

/// The codes of `values` under a transform (`base` for [`XF_PLUS_BASE`]).
pub(super) fn codes(values: &[u64], transform: u8, base: Option<&[u64]>) -> Vec<u64> {
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

pub(super) fn bit_width(x: u64) -> u32 {
    64 - x.leading_zeros()
}

/// Bit-packs codes (packing [`PACK_BITS`]).
pub(super) fn pack_bits(codes: &[u64]) -> Vec<u8> {
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
pub(super) fn pack_planes(codes: &[u64], k: usize, level: i32) -> std::io::Result<Vec<u8>> {
    let mut planes = Vec::with_capacity(k * codes.len());
    let block_log2 = PLANE_BLOCK_LOG2;
    for block in codes.chunks(1 << block_log2) {
        for j in 0..k {
            planes.extend(block.iter().map(|&c| (c >> (8 * j)) as u8));
        }
    }
    let mut out = vec![k as u8, block_log2];
    out.extend_from_slice(&zstd::bulk::compress(&planes, level)?);
    Ok(out)
}

/// Encodes a numeric section: the smaller of bit-packing and byte planes + zstd, preferring
/// bit-packing (faster to decode) unless byte planes save a good share.
pub(super) fn encode_numeric(
    section: u32,
    elem_size: u8,
    transform: u8,
    codes: &[u64],
    level: i32,
) -> std::io::Result<Encoded> {
    let bits = pack_bits(codes);
    let max = codes.iter().copied().max().unwrap_or(0);
    let k = (bit_width(max) as usize).div_ceil(8);
    let mut best = (PACK_BITS, bits);
    // (A constant column is one plane of zeros: zstd makes it nearly nothing, where
    // bit-packing still spends 9 bytes per chunk of 1024.)
    if codes.len() >= GROUP {
        let planes = pack_planes(codes, k.max(1), level)?;
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

/// Values from which on the writer chooses between encodings on a sample of
/// [`SAMPLE_VALUES`] values from the middle of a column instead of encoding the whole column
/// each way (each way is a zstd pass at level 12: on a 6.2 M-event recording, trying every
/// transform and the plain coding of event times beside the context coder was about a third
/// of the writer's CPU time).
const SAMPLE_FROM: usize = 1 << 20;
const SAMPLE_VALUES: usize = 1 << 18;

/// The sample of a column of `len` values the writer chooses its encoding on, when long.
fn sample_range(len: usize) -> Option<std::ops::Range<usize>> {
    (len >= SAMPLE_FROM).then(|| {
        let start = (len - SAMPLE_VALUES) / 2;
        start..start + SAMPLE_VALUES
    })
}

/// Encodes `values` with whichever of `transforms` gives the smallest section (chosen on a
/// sample for long columns, see [`SAMPLE_FROM`]).
pub(super) fn encode_best(
    section: u32,
    elem_size: u8,
    values: &[u64],
    transforms: &[u8],
    base: Option<&[u64]>,
    level: i32,
) -> std::io::Result<Encoded> {
    let mut best: Option<Encoded> = None;
    let chosen;
    let transforms = match sample_range(values.len()) {
        Some(range) if transforms.len() > 1 => {
            let base = base.map(|b| &b[range.clone()]);
            let sample = &values[range];
            let mut smallest = (usize::MAX, transforms[0]);
            for &t in transforms {
                let e = encode_numeric(section, elem_size, t, &codes(sample, t, base), level)?;
                smallest = smallest.min((e.payload.len(), t));
            }
            chosen = [smallest.1];
            &chosen[..]
        }
        _ => transforms,
    };
    for &t in transforms {
        let e = encode_numeric(section, elem_size, t, &codes(values, t, base), level)?;
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
pub(super) fn with_context_coding(plain: Encoded, values: &[u64], trace: &Trace) -> Encoded {
    let b = &trace.blocks;
    let order = crate::ppm::event_order(&b.alloc_event, &b.free_event, trace.meta.events);
    let contexts = crate::ppm::EventTimeContexts {
        order: &order,
        site: &b.site,
        model: crate::ppm::MODEL_EVENT_TIMES_PREVIOUS,
    };
    context_coded(Some(plain), values, &contexts)
}

/// Event times (section 12): context-coded or plain (delta, the best packing), whichever is
/// smaller — chosen on a sample of a long trace ([`SAMPLE_FROM`]), so that the plain coding
/// (a zstd pass over the whole column) is made only when the sample says it wins.
pub(super) fn encode_event_times(
    values: &[u64],
    trace: &Trace,
    level: i32,
) -> std::io::Result<Encoded> {
    let plain = |v: &[u64]| encode_best(id::EVENT_TIME, 8, v, &[XF_DELTA], None, level);
    let Some(range) = sample_range(values.len()) else {
        return Ok(with_context_coding(plain(values)?, values, trace));
    };
    let plain_sample = plain(&values[range.clone()])?.payload.len();
    let b = &trace.blocks;
    let order = crate::ppm::event_order(&b.alloc_event, &b.free_event, trace.meta.events);
    let contexts = crate::ppm::EventTimeContexts {
        order: &order,
        site: &b.site,
        model: crate::ppm::MODEL_EVENT_TIMES_PREVIOUS,
    };
    // Deltas as the whole column's coding sees them (from the value before the sample).
    let deltas: Vec<u64> = range
        .clone()
        .map(|i| values[i].wrapping_sub(i.checked_sub(1).map_or(0, |p| values[p])))
        .collect();
    let context_sample = crate::ppm::encode(
        &deltas,
        crate::ppm::EVENT_TIME_LENGTH_CONTEXTS,
        |j, previous| contexts.context(range.start + j, previous),
    )
    .len();
    Ok(if context_sample < plain_sample {
        context_coded(None, values, &contexts)
    } else {
        plain(values)?
    })
}

/// The context-coded event times, or `plain` when that is given and not larger.
pub(super) fn context_coded(
    plain: Option<Encoded>,
    values: &[u64],
    contexts: &crate::ppm::EventTimeContexts<'_>,
) -> Encoded {
    let deltas = codes(values, XF_DELTA, None);
    let mut payload = vec![contexts.model];
    payload.extend(crate::ppm::encode(
        &deltas,
        crate::ppm::EVENT_TIME_LENGTH_CONTEXTS,
        |i, previous| contexts.context(i, previous),
    ));
    // The reader accepts at most PRESIZE_PER_BYTE values per payload byte.
    payload.resize(
        payload
            .len()
            .max(deltas.len().div_ceil(PRESIZE_PER_BYTE) + 1),
        0,
    );
    if let Some(plain) = plain
        && payload.len() >= plain.payload.len()
    {
        return plain;
    }
    Encoded {
        id: id::EVENT_TIME,
        elem_size: 8,
        transform: XF_DELTA,
        packing: PACK_CONTEXT,
        shift: 0,
        count: deltas.len() as u64,
        payload,
    }
}

pub(super) fn encode_bytes(section: u32, bytes: &[u8], level: i32) -> std::io::Result<Encoded> {
    let z = zstd::bulk::compress(bytes, level)?;
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
pub(super) fn event_times(trace: &Trace) -> Option<Vec<u64>> {
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

pub(super) fn widen<T: Copy + Into<u64>>(values: &[T]) -> Vec<u64> {
    values.iter().map(|&v| v.into()).collect()
}

/// Index of the event-times job in `to_msc_bytes_with` (started first: the longest).
const EVENT_TIMES_JOB: usize = 3;

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
    /// zstd level of the byte-plane and byte sections; `None`: 12 (small files). Measured on
    /// recordings (`memscape-record`'s `examples/convert`, `MSC_ZSTD_LEVEL=N`): converting a
    /// 6.2 M-event cc1plus recording took 5.7 s of CPU at level 12, 4.9 s at 9, 4.1 s at 6,
    /// 3.2 s at 3, for files of 0.95×, 0.96×, 0.97× and 1.04× heaptrack's `.raw.zst`; on the
    /// 1.26 M-event sqlite3 benchmark the files were 0.92×, 0.95×, 0.97× and 1.04× (and, with
    /// symbols, level 6 was 1.01×). `memscape record` keeps 12: the size target holds only there.
    pub zstd_level: Option<i32>,
    /// Blocks per segment of a segmented file (version 6, see `segments.rs`); 0: one
    /// unsegmented version-5 file. Ignored for [`MscOptions::mappable`] files (version 5).
    pub segment_blocks: usize,
}

/// A faster level than the default (see [`MscOptions::zstd_level`]) for callers that favour
/// time over size.
pub const FAST_ZSTD_LEVEL: i32 = 6;

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
    let level = options.zstd_level.unwrap_or(ZSTD_LEVEL);
    if shift >= 64 {
        return Err(std::io::Error::other("time resolution of at most 2^63 ns"));
    }
    if options.mappable {
        return mappable_bytes(trace, shift, progress);
    }
    if options.segment_blocks > 0 {
        let bytes = super::segments::segmented_bytes(trace, options, options.segment_blocks)?;
        progress(1.0);
        return Ok(bytes);
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
                level,
            )?])
        }),
        Box::new(|| {
            Ok(vec![
                encode_best(id::REQUESTED, 8, &b.requested_size, &[XF_NONE], None, level)?,
                encode_best(
                    id::SIZE,
                    8,
                    &b.size,
                    &[XF_PLUS_BASE],
                    Some(b.requested_size.as_slice()),
                    level,
                )?,
                encode_best(
                    id::USABLE,
                    8,
                    &b.usable_size,
                    &[XF_NONE, XF_PLUS_BASE],
                    Some(b.size.as_slice()),
                    level,
                )?,
            ])
        }),
        Box::new(|| {
            Ok(vec![
                encode_best(id::ALLOC_EVENT, 8, &b.alloc_event, &[XF_DELTA], None, level)?,
                encode_best(
                    id::FREE_EVENT,
                    8,
                    &b.free_event,
                    &[XF_PLUS_BASE],
                    Some(b.alloc_event.as_slice()),
                    level,
                )?,
            ])
        }),
        Box::new(|| match &event_times {
            Some(times) => {
                let times = quantized(times);
                Ok(vec![with_shift(encode_event_times(&times, trace, level)?)])
            }
            None => block_time_sections(&b.alloc_time_ns, &b.free_time_ns, shift, level),
        }),
        Box::new(|| {
            let mut sections = vec![
                encode_best(id::THREAD, 4, &widen(&b.thread), &[XF_NONE], None, level)?,
                encode_best(id::SITE, 4, &widen(&b.site), &[XF_NONE], None, level)?,
                encode_best(id::FLAGS, 1, &widen(&b.flags), &[XF_NONE], None, level)?,
                encode_best(id::PROCESS, 4, &widen(&b.process), &[XF_NONE], None, level)?,
                encode_best(
                    id::FREE_SITE,
                    4,
                    &widen(&b.free_site),
                    &[XF_NONE],
                    None,
                    level,
                )?,
                encode_best(
                    id::FREE_THREAD,
                    4,
                    &widen(&b.free_thread),
                    &[XF_NONE],
                    None,
                    level,
                )?,
                encode_best(id::POOL, 4, &widen(&b.pool), &[XF_NONE], None, level)?,
            ];
            sections.extend(tree_and_strings(trace, level)?);
            Ok(sections)
        }),
    ];
    let total = jobs.len() as f32;
    // As many workers as cores, not one thread per job: each job holds its columns' codes
    // while it runs (on a 6 M-event recording, five at once took the writer's peak from 0.5
    // to 1 GB). The event times (the longest job) start first.
    let workers = std::thread::available_parallelism()
        .map_or(2, usize::from)
        .clamp(1, jobs.len().max(1));
    let mut queue: Vec<(usize, Job<'_>)> = jobs.into_iter().enumerate().collect();
    queue.sort_by_key(|(i, _)| usize::from(*i != EVENT_TIMES_JOB));
    queue.reverse();
    let queue = Mutex::new(queue);
    let mut results: Vec<Option<std::io::Result<Vec<Encoded>>>> =
        (0..total as usize).map(|_| None).collect();
    std::thread::scope(|scope| {
        let (done, finished) = std::sync::mpsc::channel();
        for _ in 0..workers {
            let done = done.clone();
            let queue = &queue;
            scope.spawn(move || {
                loop {
                    let next = queue.lock().ok().and_then(|mut q| q.pop());
                    let Some((i, job)) = next else { break };
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job))
                        .unwrap_or_else(|_| Err(std::io::Error::other("column encoder panicked")));
                    if done.send((i, result)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done);
        for (n, (i, result)) in finished.iter().enumerate() {
            progress((n + 1) as f32 / (total + 1.0));
            results[i] = Some(result);
        }
    });
    let results = results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(std::io::Error::other("column encoder did not run"))));
    let mut sections = Vec::new();
    for r in results {
        sections.extend(r?);
    }
    sections.push(meta_section(trace, level)?);
    progress(1.0);
    Ok(lay_out(&sections))
}

/// Per-block alloc and free times (sections 5 and 6), for traces whose block times are not
/// their events' times.
pub(super) fn block_time_sections(
    alloc: &[u64],
    free: &[u64],
    shift: u8,
    level: i32,
) -> std::io::Result<Vec<Encoded>> {
    if shift == 0 {
        return Ok(vec![
            encode_best(id::ALLOC_TIME, 8, alloc, &[XF_DELTA], None, level)?,
            encode_best(id::FREE_TIME, 8, free, &[XF_PLUS_BASE], Some(alloc), level)?,
        ]);
    }
    // Plus-base cannot be combined with a shift: free times delta-coded on their own.
    let quantized = |values: &[u64]| -> Vec<u64> { values.iter().map(|&v| v >> shift).collect() };
    let mut sections = vec![
        encode_best(
            id::ALLOC_TIME,
            8,
            &quantized(alloc),
            &[XF_DELTA],
            None,
            level,
        )?,
        encode_best(
            id::FREE_TIME,
            8,
            &quantized(free),
            &[XF_NONE, XF_ZIGZAG_DELTA],
            None,
            level,
        )?,
    ];
    for s in &mut sections {
        s.shift = shift;
    }
    Ok(sections)
}

/// The metadata section (JSON of the trace meta and the warning summary).
pub(super) fn meta_section(trace: &Trace, level: i32) -> std::io::Result<Encoded> {
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
    encode_bytes(id::META, &json, level)
}

/// The call tree, strings and thread names.
pub(super) fn tree_and_strings(trace: &Trace, level: i32) -> std::io::Result<Vec<Encoded>> {
    tree_and_strings_ahead(trace, level, None)
}

/// [`tree_and_strings`] with the call tree's columns continuing what `ahead` compressed while
/// a recording ran (`ahead.rs`).
pub(super) fn tree_and_strings_ahead(
    trace: &Trace,
    level: i32,
    ahead: Option<&super::ahead::FooterAhead>,
) -> std::io::Result<Vec<Encoded>> {
    let mut string_bytes = Vec::new();
    let mut string_ends = Vec::with_capacity(trace.strings.len());
    for s in trace.strings.iter() {
        string_bytes.extend_from_slice(s.as_bytes());
        string_ends.push(string_bytes.len() as u64);
    }
    let mut sections = super::ahead::tree_sections(trace, level, ahead)?;
    sections.extend([
        encode_bytes(id::STRING_BYTES, &string_bytes, level)?,
        encode_best(id::STRING_ENDS, 8, &string_ends, &[XF_DELTA], None, level)?,
        encode_best(
            id::THREADS,
            4,
            &widen(&trace.threads),
            &[XF_NONE],
            None,
            level,
        )?,
        encode_best(
            id::THREAD_PROCESS,
            4,
            &widen(&trace.thread_process),
            &[XF_NONE],
            None,
            level,
        )?,
        encode_bytes(
            id::PROCESSES,
            &serde_json::to_vec(&trace.processes).map_err(std::io::Error::other)?,
            level,
        )?,
        encode_bytes(
            id::POOLS,
            &serde_json::to_vec(&trace.pools).map_err(std::io::Error::other)?,
            level,
        )?,
    ]);
    Ok(sections)
}

/// A raw (packing 0) block section: the values as they are in memory, little-endian.
pub(super) fn raw_section<T: bytemuck::Pod>(id: u32, values: &[T]) -> Encoded {
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
pub(super) fn mappable_bytes(
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
        raw_section(id::PROCESS, &b.process),
        raw_section(id::FREE_SITE, &b.free_site),
        raw_section(id::FREE_THREAD, &b.free_thread),
        raw_section(id::POOL, &b.pool),
    ];
    progress(0.5);
    sections.extend(tree_and_strings(trace, ZSTD_LEVEL)?);
    sections.push(meta_section(trace, ZSTD_LEVEL)?);
    progress(1.0);
    Ok(lay_out(&sections))
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
    crate::write_synced(path, &bytes).map_err(|source| LoadError::Io {
        path: path.display().to_string(),
        source,
    })
}
