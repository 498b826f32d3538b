//! Reader of the shim's `.msr` files (format: `crates/memscape-recorder/README.md`).
//! Every length is checked against the file; a chunk cut short (the program died while the
//! file grew) ends the read with what was complete.

use std::collections::HashMap;
use std::path::Path;

use crate::RecordError;

pub(crate) const FILE_MAGIC: &[u8; 8] = b"MSCREC01";
pub(crate) const FILE_HEADER_BYTES: usize = 4096;
pub(crate) const CHUNK_BYTES: usize = 1 << 20;
pub(crate) const CHUNK_HEADER_BYTES: usize = 64;
pub(crate) const CHUNK_MAGIC: u32 = 0x4B48_4352;
pub(crate) const CHUNK_EVENTS: u32 = 1;
pub(crate) const CHUNK_STACKS: u32 = 2;
pub(crate) const CHUNK_MAPS: u32 = 3;
/// Version 3: varint-coded, delta-coded events; times in TSC ticks with clock pairs, or ns.
/// Version 4 adds thread-name records to the events; version 5 process records (kind 0),
/// pool records, free stacks; version 6 unrecorded-program records. Versions 3 to 5 are still
/// read.
pub(crate) const FILE_VERSION: u32 = 6;
const OLDEST_VERSION: u32 = 3;
/// Offset of the executable path and command line in the header.
const HEADER_STRINGS: usize = 64;
/// Header clock kinds.
const CLOCK_KIND_TSC: u32 = 1;
/// Kind byte of a clock record (ticks, CLOCK_MONOTONIC ns).
const KIND_CLOCK: u8 = 7;
/// Kind byte of a thread-name record (length byte, at most 15 name bytes).
const KIND_NAME: u8 = 0x0F;
/// Kind byte of a pool-name record (varint pool id, length byte, at most 31 name bytes).
const KIND_POOL_NAME: u8 = 0x17;
/// Kind byte of an unrecorded-program record (varint pid, reason byte, varint path length at
/// most [`NOTE_PATH_MAX`], the path).
const KIND_UNRECORDED: u8 = 0x1F;
const NOTE_PATH_MAX: usize = 1024;
/// Reason byte of the record withdrawing a pid's last note (its `exec` failed).
const WHY_EXEC_FAILED: u8 = 0;
/// Kind byte flag of an event record: size, usable size and stack are 0 and left out.
const RECORD_BARE: u8 = 0x80;

pub const KIND_ALLOC: u8 = 1;
pub const KIND_FREE: u8 = 2;
pub const KIND_REALLOC_FREE: u8 = 3;
pub const KIND_REALLOC_ALLOC: u8 = 4;
pub const KIND_MMAP: u8 = 5;
pub const KIND_MUNMAP: u8 = 6;
/// Process and pool records: the function says which ([`PROC_EXIT`] …).
pub const KIND_PROCESS: u8 = 0;
/// `exit(code)` by process `address` (size: zigzag code).
pub const PROC_EXIT: u8 = 1;
/// The shim's destructor ran in process `address`: the image is ending.
pub const PROC_END: u8 = 2;
/// This process reaped child `address` with wait status `size`.
pub const PROC_REAPED: u8 = 3;
/// A pool declaration: address = start, size = length, usable = block size, stack = pool id.
pub const PROC_POOL: u8 = 4;
/// Function of a pool allocation (kind alloc; usable = pool id) and a pool free (kind free;
/// size = pool id).
pub const FN_POOL_ALLOC: u8 = 13;
pub const FN_POOL_FREE: u8 = 14;

/// Most frames a stack record may claim (the shim caps at 256).
const MAX_DEPTH: usize = 256;

/// One event as the shim wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawEvent {
    /// Global order within the process image.
    pub seq: u64,
    /// CLOCK_MONOTONIC ns.
    pub time_ns: u64,
    pub address: u64,
    pub size: u64,
    pub usable: u64,
    pub tid: u32,
    /// Stack id (0 = none).
    pub stack: u32,
    pub kind: u8,
    /// Which C function (1 malloc … 12 munmap, see the README).
    pub function: u8,
}

/// Why a program ran without the shim (an unrecorded-program record of the shim).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UnrecordedReason {
    /// No `PT_INTERP`: the loader never runs.
    Static,
    /// Set-user-ID to another user: secure mode.
    Setuid,
    /// Set-group-ID to another group: secure mode.
    Setgid,
    /// An ELF file of another class (32-bit).
    OtherClass,
    /// A reason this reader does not know (a newer shim).
    Other,
}

impl UnrecordedReason {
    fn from_byte(b: u8) -> Self {
        match b {
            1 => Self::Static,
            2 => Self::Setuid,
            3 => Self::Setgid,
            4 => Self::OtherClass,
            _ => Self::Other,
        }
    }

    /// Why, in words: "a static binary — the loader ignores LD_PRELOAD" …
    pub fn explain(self) -> &'static str {
        match self {
            Self::Static => "a static binary — the loader ignores LD_PRELOAD",
            Self::Setuid => {
                "a setuid program — the loader runs it in secure mode and ignores LD_PRELOAD"
            }
            Self::Setgid => {
                "a setgid program — the loader runs it in secure mode and ignores LD_PRELOAD"
            }
            Self::OtherClass => {
                "a program of another ELF class (32-bit) — the 64-bit shim cannot be loaded into it"
            }
            Self::Other => "the loader will not preload the recorder into it",
        }
    }
}

/// A program that a recorded process `exec`'d or `posix_spawn`'d and that ran without the shim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unrecorded {
    /// The pid it ran as.
    pub pid: u32,
    pub path: String,
    pub reason: UnrecordedReason,
}

/// One process image's recording.
#[derive(Debug, Clone, Default)]
pub struct RawProcess {
    pub pid: u32,
    pub ppid: u32,
    pub stack_depth: u32,
    pub fork_seq: Option<u64>,
    pub start_ns: u64,
    pub page_size: u64,
    pub executable: String,
    /// Arguments joined by spaces.
    pub command_line: String,
    /// In file order (per thread: program order).
    pub events: Vec<RawEvent>,
    /// Stack id → frames, innermost first.
    pub stacks: HashMap<u32, Vec<u64>>,
    /// /proc/self/maps text per snapshot, in snapshot order.
    pub maps: Vec<String>,
    /// Each thread's name (the last it wrote: a thread's chunks are in file order).
    pub thread_names: HashMap<u32, String>,
    /// Pool id → name (`memscape.h` declarations).
    pub pool_names: HashMap<u32, String>,
    /// Programs this image started that ran unrecorded (static, setuid …), in file order.
    pub unrecorded: Vec<Unrecorded>,
    /// Chunks whose header was bad (skipped).
    pub bad_chunks: u64,
    /// The shim read the TSC for event times (converted to CLOCK_MONOTONIC ns by the reader
    /// through `clock_pairs`); false: times were CLOCK_MONOTONIC ns already.
    pub tsc_clock: bool,
    /// (ticks, CLOCK_MONOTONIC ns) pairs the shim read together (the header's first); used only
    /// when `tsc_clock`.
    pub clock_pairs: Vec<(u64, u64)>,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut x = [0u8; 4];
    x.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(x)
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}
fn u16_at(b: &[u8], at: usize) -> usize {
    usize::from(u16::from_le_bytes([b[at], b[at + 1]]))
}

/// Reads a `.msr` file.
pub fn read_raw(path: &Path) -> Result<RawProcess, RecordError> {
    let bytes = std::fs::read(path).map_err(|cause| RecordError::Io {
        path: path.display().to_string(),
        cause,
    })?;
    read_raw_bytes(&path.display().to_string(), &bytes)
}

fn parse_header(source: &str, bytes: &[u8]) -> Result<RawProcess, RecordError> {
    let corrupt = |offset: u64, expected: &str| RecordError::Corrupt {
        path: source.to_owned(),
        offset,
        expected: expected.to_owned(),
    };
    if bytes.len() < FILE_HEADER_BYTES || !bytes.starts_with(FILE_MAGIC) {
        return Err(corrupt(0, "the magic `MSCREC01` and a 4096-byte header"));
    }
    let version = u32_at(bytes, 8);
    if !(OLDEST_VERSION..=FILE_VERSION).contains(&version) {
        return Err(corrupt(8, "version 3 to 6"));
    }
    let exe_len = u16_at(bytes, 48);
    let cmd_len = u16_at(bytes, 50);
    if HEADER_STRINGS + exe_len + cmd_len > FILE_HEADER_BYTES {
        return Err(corrupt(
            48,
            "executable and command-line lengths within the header",
        ));
    }
    let fork_seq = u64_at(bytes, 24);
    let strings = &bytes[HEADER_STRINGS..];
    let command_line = String::from_utf8_lossy(&strings[exe_len..exe_len + cmd_len])
        .split('\0')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    Ok(RawProcess {
        pid: u32_at(bytes, 12),
        ppid: u32_at(bytes, 16),
        stack_depth: u32_at(bytes, 20),
        fork_seq: (fork_seq != u64::MAX).then_some(fork_seq),
        start_ns: u64_at(bytes, 32),
        page_size: u64_at(bytes, 40),
        executable: String::from_utf8_lossy(&strings[..exe_len]).into_owned(),
        tsc_clock: u32_at(bytes, 52) == CLOCK_KIND_TSC,
        clock_pairs: vec![(u64_at(bytes, 56), u64_at(bytes, 32))],
        command_line,
        ..RawProcess::default()
    })
}

/// Parses `.msr` bytes; `source` names them in errors.
pub fn read_raw_bytes(source: &str, bytes: &[u8]) -> Result<RawProcess, RecordError> {
    let mut reader = RawReader::new(source, bytes)?;
    let mut offset = FILE_HEADER_BYTES;
    let mut index = 0;
    while offset + CHUNK_HEADER_BYTES <= bytes.len() {
        let chunk = &bytes[offset..bytes.len().min(offset + CHUNK_BYTES)];
        offset += CHUNK_BYTES;
        let (header, payload) = chunk.split_at(CHUNK_HEADER_BYTES);
        reader.chunk(
            index,
            header,
            |range| payload.get(range).map(<[u8]>::to_vec),
            true,
        );
        index += 1;
    }
    Ok(reader.finish())
}

/// Where the reading of one chunk stands: payload bytes decoded and the delta bases after
/// them (events chunks are delta-coded record to record).
#[derive(Debug, Clone, Copy, Default)]
struct ChunkCursor {
    consumed: usize,
    seq: u64,
    time: u64,
    address: u64,
    /// Bad header or a record that does not decode: not read further.
    bad: bool,
}

/// The kind of the chunk whose 64-byte header is `header` (`None`: not a chunk header, or not
/// written yet).
pub(crate) fn chunk_kind(header: &[u8]) -> Option<u32> {
    (header.len() >= CHUNK_HEADER_BYTES && u32_at(header, 0) == CHUNK_MAGIC)
        .then(|| u32_at(header, 4))
}

/// Reads one `.msr` file incrementally, as the shim fills it: chunk by chunk, each chunk's
/// committed bytes once. [`read_raw_bytes`] is this reader over a whole file; the follower
/// (`crate::follow`) calls [`RawReader::chunk`] again whenever a chunk's committed length grew.
/// Events keep the shim's clock (TSC ticks or ns) until [`RawReader::finish`].
#[derive(Debug, Clone)]
pub(crate) struct RawReader {
    pub(crate) process: RawProcess,
    /// (snapshot tag, text so far).
    maps: Vec<(u64, Vec<u8>)>,
    cursors: Vec<ChunkCursor>,
    /// Bytes of maps text handed over by `take_feed`.
    maps_fed: usize,
}

impl RawReader {
    /// From the file's first bytes (at least the 4096-byte header).
    pub(crate) fn new(source: &str, header: &[u8]) -> Result<Self, RecordError> {
        Ok(Self {
            process: parse_header(source, header)?,
            maps: Vec::new(),
            cursors: Vec::new(),
            maps_fed: 0,
        })
    }

    /// Reads what is new in chunk `index`: `header` is its 64-byte header, `payload(range)` reads
    /// payload bytes (`None`: not there). `complete`: the chunk will not grow any more (a
    /// chunk never started then counts as bad).
    pub(crate) fn chunk(
        &mut self,
        index: usize,
        header: &[u8],
        mut payload: impl FnMut(std::ops::Range<usize>) -> Option<Vec<u8>>,
        complete: bool,
    ) {
        if self.cursors.len() <= index {
            self.cursors.resize(index + 1, ChunkCursor::default());
        }
        let mut cursor = self.cursors[index];
        if cursor.bad || header.len() < CHUNK_HEADER_BYTES {
            return;
        }
        if u32_at(header, 0) != CHUNK_MAGIC {
            // Mapped but never written (the program died between growing the file and the
            // header store), not written yet, or garbage.
            if complete {
                self.process.bad_chunks += 1;
                self.cursors[index].bad = true;
            }
            return;
        }
        let kind = u32_at(header, 4);
        let tid = u32_at(header, 8);
        let used = u64_at(header, 16);
        let tag = u64_at(header, 24);
        let Some(used) = usize::try_from(used)
            .ok()
            .filter(|&u| u <= CHUNK_BYTES - CHUNK_HEADER_BYTES && u >= cursor.consumed)
        else {
            self.process.bad_chunks += 1;
            self.cursors[index].bad = true;
            return;
        };
        if used == cursor.consumed {
            return;
        }
        let Some(bytes) = payload(cursor.consumed..used) else {
            self.process.bad_chunks += 1;
            self.cursors[index].bad = true;
            return;
        };
        let p = &mut self.process;
        match kind {
            CHUNK_EVENTS => {
                let decoded = decode_events(&bytes, tid, &mut cursor, p);
                if decoded.is_none() {
                    p.bad_chunks += 1;
                    cursor.bad = true;
                }
            }
            CHUNK_STACKS => {
                // Stack records are committed whole: `bytes` starts at a record.
                let mut at = 0;
                while at + 8 <= bytes.len() {
                    let id = u32_at(&bytes, at);
                    let depth = u32_at(&bytes, at + 4) as usize;
                    let need = depth.min(MAX_DEPTH + 1) * 8;
                    if depth > MAX_DEPTH || at + 8 + need > bytes.len() {
                        p.bad_chunks += 1;
                        cursor.bad = true;
                        break;
                    }
                    let frames = bytes[at + 8..at + 8 + need]
                        .chunks_exact(8)
                        .map(|f| u64_at(f, 0))
                        .collect();
                    p.stacks.insert(id, frames);
                    at += 8 + need;
                }
                cursor.consumed += at;
            }
            CHUNK_MAPS => {
                match self.maps.iter_mut().find(|(t, _)| *t == tag) {
                    Some((_, text)) => text.extend_from_slice(&bytes),
                    None => self.maps.push((tag, bytes)),
                }
                cursor.consumed = used;
            }
            _ => {
                p.bad_chunks += 1;
                cursor.bad = true;
            }
        }
        self.cursors[index] = cursor;
    }

    /// The maps snapshots so far, in snapshot order.
    pub(crate) fn maps_text(&self) -> Vec<String> {
        let mut maps: Vec<&(u64, Vec<u8>)> = self.maps.iter().collect();
        maps.sort_by_key(|(t, _)| *t);
        maps.into_iter()
            .map(|(_, text)| String::from_utf8_lossy(text).into_owned())
            .collect()
    }

    /// Bytes of maps text read so far (it changes when a snapshot grows or a new one comes).
    pub(crate) fn maps_len(&self) -> usize {
        self.maps.iter().map(|(_, t)| t.len()).sum()
    }

    /// What was read since the last call, taken out of the reader (events keep the shim's
    /// clock; the clock pairs say how to map it): what the streaming merge feeds on. A reader
    /// used so keeps no events for [`RawReader::snapshot`] or [`RawReader::finish`].
    pub(crate) fn take_feed(&mut self) -> crate::stream::Feed {
        let maps_len: usize = self.maps.iter().map(|(_, t)| t.len()).sum();
        let maps = (maps_len != self.maps_fed).then(|| {
            self.maps_fed = maps_len;
            self.maps_text()
        });
        let p = &mut self.process;
        crate::stream::Feed {
            events: std::mem::take(&mut p.events),
            stacks: std::mem::take(&mut p.stacks),
            clock_pairs: std::mem::take(&mut p.clock_pairs),
            maps,
            thread_names: p.thread_names.clone(),
            pool_names: p.pool_names.clone(),
            unrecorded: Some(p.unrecorded.clone()),
        }
    }

    /// Everything read so far as a [`RawProcess`] with times in CLOCK_MONOTONIC ns (the
    /// clock pairs read so far), leaving the reader as it is.
    pub(crate) fn snapshot(&self) -> RawProcess {
        let mut process = self.process.clone();
        if process.tsc_clock {
            ticks_to_ns(&process.clock_pairs, &mut process.events);
        }
        process.maps = self.maps_text();
        process
    }

    /// The recording: times in CLOCK_MONOTONIC ns, maps snapshots in order.
    pub(crate) fn finish(self) -> RawProcess {
        let maps = self.maps_text();
        let mut process = self.process;
        if process.tsc_clock {
            ticks_to_ns(&process.clock_pairs, &mut process.events);
        }
        process.maps = maps;
        process
    }
}

/// Reads one LEB128 varint at `*at`.
fn varint(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(v);
        }
    }
    None
}

fn unzigzag(v: u64) -> u64 {
    ((v >> 1) as i64 ^ -((v & 1) as i64)) as u64
}

/// Converts event times from TSC ticks to CLOCK_MONOTONIC ns: linear between the clock pairs
/// that bracket each time (pairs whose ns do not increase with their ticks are dropped, so the
/// mapping is monotonic), extrapolated before the first and after the last pair with the slope
/// across all pairs (the shim takes pairs ever more sparsely, so an event is never far past
/// the last one). Without two usable pairs the times are left as ticks since the first.
fn ticks_to_ns(pairs: &[(u64, u64)], events: &mut [RawEvent]) {
    let Some(map) = TickMap::new(pairs) else {
        return;
    };
    for e in events {
        e.time_ns = map.ns(e.time_ns);
    }
}

/// The mapping of [`ticks_to_ns`] from a set of clock pairs.
#[derive(Debug, Clone)]
pub(crate) struct TickMap {
    /// Pairs whose ns increase with their ticks, sorted.
    mono: Vec<(u64, u64)>,
    /// Across all of them.
    slope: f64,
}

impl TickMap {
    /// `None` without a pair.
    pub(crate) fn new(pairs: &[(u64, u64)]) -> Option<Self> {
        let mut sorted = pairs.to_vec();
        sorted.sort_unstable();
        let mut mono: Vec<(u64, u64)> = Vec::with_capacity(sorted.len());
        for (ticks, ns) in sorted {
            if mono.last().is_none_or(|&(t, n)| ticks > t && ns > n) {
                mono.push((ticks, ns));
            }
        }
        let (&first, &last) = (mono.first()?, mono.last()?);
        let slope = if last.0 > first.0 {
            (last.1 - first.1) as f64 / (last.0 - first.0) as f64
        } else {
            1.0
        };
        Some(Self { mono, slope })
    }

    /// CLOCK_MONOTONIC ns of a TSC reading.
    pub(crate) fn ns(&self, ticks: u64) -> u64 {
        let at = |base: (u64, u64), ticks: u64, slope: f64| -> u64 {
            let dt = ticks as f64 - base.0 as f64;
            (base.1 as f64 + dt * slope).max(0.0).round() as u64
        };
        let mono = &self.mono;
        let i = mono.partition_point(|&(t, _)| t <= ticks);
        match (i.checked_sub(1).map(|i| mono[i]), mono.get(i)) {
            (Some(lo), Some(&hi)) => at(lo, ticks, (hi.1 - lo.1) as f64 / (hi.0 - lo.0) as f64),
            (Some(lo), None) => at(lo, ticks, self.slope),
            (None, _) => at(mono[0], ticks, self.slope),
        }
    }
}

/// Decodes the varint records of one events chunk (layout in the shim's README): a kind byte,
/// then zigzag deltas of sequence, time and address against the chunk's previous record, then
/// (unless the kind byte says "bare") size, zigzag(usable − size) and stack id. `payload` starts
/// `cursor.consumed` bytes into the chunk, with the cursor's bases; the cursor moves past each
/// whole record. `None` at a record cut short; the events before it are kept.
fn decode_events(
    payload: &[u8],
    tid: u32,
    cursor: &mut ChunkCursor,
    p: &mut RawProcess,
) -> Option<()> {
    let RawProcess {
        events: out,
        clock_pairs,
        thread_names: names,
        pool_names,
        unrecorded,
        ..
    } = p;
    let (mut seq, mut time_ns, mut address) = (cursor.seq, cursor.time, cursor.address);
    let start = cursor.consumed;
    let mut at = 0;
    // After each whole record: what the next read starts from.
    let mut commit = |at: usize, seq: u64, time: u64, address: u64| {
        cursor.consumed = start + at;
        (cursor.seq, cursor.time, cursor.address) = (seq, time, address);
    };
    while at < payload.len() {
        commit(at, seq, time_ns, address);
        let head = payload[at];
        at += 1;
        if head == KIND_CLOCK {
            time_ns = time_ns.wrapping_add(unzigzag(varint(payload, &mut at)?));
            clock_pairs.push((time_ns, varint(payload, &mut at)?));
            continue;
        }
        if head == KIND_NAME {
            let len = usize::from(*payload.get(at)?);
            let name = payload.get(at + 1..at + 1 + len.min(15))?;
            at += 1 + len.min(15);
            if len > 15 {
                return None;
            }
            names.insert(tid, String::from_utf8_lossy(name).into_owned());
            continue;
        }
        if head == KIND_POOL_NAME {
            let id = u32::try_from(varint(payload, &mut at)?).ok()?;
            let len = usize::from(*payload.get(at)?);
            if len > 31 {
                return None;
            }
            let name = payload.get(at + 1..at + 1 + len)?;
            at += 1 + len;
            pool_names.insert(id, String::from_utf8_lossy(name).into_owned());
            continue;
        }
        if head == KIND_UNRECORDED {
            let pid = u32::try_from(varint(payload, &mut at)?).ok()?;
            let why = *payload.get(at)?;
            at += 1;
            let len = usize::try_from(varint(payload, &mut at)?).ok()?;
            if len > NOTE_PATH_MAX {
                return None;
            }
            let path = payload.get(at..at + len)?;
            at += len;
            if why == WHY_EXEC_FAILED {
                // The exec failed: the note before it did not happen.
                if let Some(i) = unrecorded.iter().rposition(|u| u.pid == pid) {
                    unrecorded.remove(i);
                }
            } else {
                unrecorded.push(Unrecorded {
                    pid,
                    path: String::from_utf8_lossy(path).into_owned(),
                    reason: UnrecordedReason::from_byte(why),
                });
            }
            continue;
        }
        seq = seq.wrapping_add(unzigzag(varint(payload, &mut at)?));
        time_ns = time_ns.wrapping_add(unzigzag(varint(payload, &mut at)?));
        address = address.wrapping_add(unzigzag(varint(payload, &mut at)?));
        let (size, usable, stack) = if head & RECORD_BARE != 0 {
            (0, 0, 0)
        } else {
            let size = varint(payload, &mut at)?;
            let usable = size.wrapping_add(unzigzag(varint(payload, &mut at)?));
            let stack = u32::try_from(varint(payload, &mut at)?).ok()?;
            (size, usable, stack)
        };
        out.push(RawEvent {
            seq,
            time_ns,
            address,
            size,
            usable,
            tid,
            stack,
            kind: head & 7,
            function: (head >> 3) & 15,
        });
    }
    commit(at, seq, time_ns, address);
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Vec<u8> {
        let mut h = vec![0u8; FILE_HEADER_BYTES];
        h[..8].copy_from_slice(FILE_MAGIC);
        h[8..12].copy_from_slice(&FILE_VERSION.to_le_bytes());
        h[12..16].copy_from_slice(&42u32.to_le_bytes());
        h[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
        h
    }

    #[test]
    fn rejects_a_file_that_is_not_a_recording_naming_the_offset() {
        let err = read_raw_bytes("x.msr", b"hello").unwrap_err().to_string();
        assert!(err.contains("x.msr@0"), "{err}");
        let mut h = header();
        h[8] = 9;
        let err = read_raw_bytes("y.msr", &h).unwrap_err().to_string();
        assert!(
            err.contains("y.msr@8") && err.contains("version 3 to 6"),
            "{err}"
        );
    }

    #[test]
    fn version_3_files_still_read() {
        let mut h = header();
        h[8..12].copy_from_slice(&3u32.to_le_bytes());
        let events = sample_events(3);
        h.extend_from_slice(&events_chunk(3, &encode(&events)));
        let p = read_raw_bytes("old.msr", &h).unwrap();
        assert_eq!(p.events, events);
    }

    #[test]
    fn a_chunk_whose_length_exceeds_the_file_is_skipped_not_trusted() {
        let mut f = header();
        let mut chunk = vec![0u8; 4096];
        chunk[..4].copy_from_slice(&CHUNK_MAGIC.to_le_bytes());
        chunk[4..8].copy_from_slice(&CHUNK_EVENTS.to_le_bytes());
        chunk[16..24].copy_from_slice(&(u64::MAX - 3).to_le_bytes());
        f.extend_from_slice(&chunk);
        let p = read_raw_bytes("z.msr", &f).unwrap();
        assert_eq!(p.bad_chunks, 1);
        assert!(p.events.is_empty());
    }

    /// The shim's encoding, written out from the README's description.
    fn encode(events: &[RawEvent]) -> Vec<u8> {
        fn put(out: &mut Vec<u8>, mut v: u64) {
            while v >= 0x80 {
                out.push(v as u8 | 0x80);
                v >>= 7;
            }
            out.push(v as u8);
        }
        fn zz(v: u64) -> u64 {
            let v = v as i64;
            ((v << 1) ^ (v >> 63)) as u64
        }
        let mut out = Vec::new();
        let (mut seq, mut time, mut address) = (0u64, 0u64, 0u64);
        for e in events {
            let bare = e.size == 0 && e.usable == 0 && e.stack == 0;
            out.push(e.kind | e.function << 3 | if bare { RECORD_BARE } else { 0 });
            put(&mut out, zz(e.seq.wrapping_sub(seq)));
            put(&mut out, zz(e.time_ns.wrapping_sub(time)));
            put(&mut out, zz(e.address.wrapping_sub(address)));
            if !bare {
                put(&mut out, e.size);
                put(&mut out, zz(e.usable.wrapping_sub(e.size)));
                put(&mut out, u64::from(e.stack));
            }
            (seq, time, address) = (e.seq, e.time_ns, e.address);
        }
        out
    }

    fn events_chunk(tid: u32, payload: &[u8]) -> Vec<u8> {
        let mut chunk = vec![0u8; CHUNK_BYTES];
        chunk[..4].copy_from_slice(&CHUNK_MAGIC.to_le_bytes());
        chunk[4..8].copy_from_slice(&CHUNK_EVENTS.to_le_bytes());
        chunk[8..12].copy_from_slice(&tid.to_le_bytes());
        chunk[16..24].copy_from_slice(&(payload.len() as u64).to_le_bytes());
        chunk[CHUNK_HEADER_BYTES..CHUNK_HEADER_BYTES + payload.len()].copy_from_slice(payload);
        chunk
    }

    fn sample_events(tid: u32) -> Vec<RawEvent> {
        let e = |seq, time_ns, address, size, usable, stack, kind, function| RawEvent {
            seq,
            time_ns,
            address,
            size,
            usable,
            tid,
            stack,
            kind,
            function,
        };
        vec![
            e(0, 5_000_000_000, 0x5555_0000_1000, 24, 24, 7, KIND_ALLOC, 1),
            // A later sequence number from another thread in between, a smaller address.
            e(9, 5_000_000_300, 0x5555_0000_0100, 0, 24, 3, KIND_ALLOC, 1),
            e(10, 5_000_000_350, 0x5555_0000_1000, 0, 0, 0, KIND_FREE, 5),
            // Usable size below the requested one cannot happen, but must survive.
            e(
                11,
                5_000_000_351,
                u64::MAX - 7,
                u64::MAX,
                3,
                u32::MAX,
                KIND_REALLOC_ALLOC,
                4,
            ),
            e(
                12,
                4_999_999_999,
                0x7f00_0000_0000,
                1 << 40,
                1 << 40,
                0,
                KIND_MMAP,
                11,
            ),
            e(
                13,
                5_000_001_000,
                0x7f00_0000_0000,
                1 << 40,
                0,
                0,
                KIND_MUNMAP,
                12,
            ),
        ]
    }

    #[test]
    fn varint_events_decode_to_what_was_encoded_with_the_chunk_thread() {
        let events = sample_events(77);
        let mut f = header();
        f.extend_from_slice(&events_chunk(77, &encode(&events)));
        let p = read_raw_bytes("v.msr", &f).unwrap();
        assert_eq!(p.bad_chunks, 0);
        assert_eq!(p.events, events);
    }

    fn unrecorded_record(pid: u32, why: u8, path: &[u8]) -> Vec<u8> {
        fn put(r: &mut Vec<u8>, mut v: u64) {
            while v >= 0x80 {
                r.push(v as u8 | 0x80);
                v >>= 7;
            }
            r.push(v as u8);
        }
        let mut r = vec![KIND_UNRECORDED];
        put(&mut r, u64::from(pid));
        r.push(why);
        put(&mut r, path.len() as u64);
        r.extend_from_slice(path);
        r
    }

    #[test]
    fn unrecorded_program_records_are_read_and_a_failed_exec_withdraws_its_note() {
        let events = sample_events(9);
        let head = encode(&events[..2]);
        let mut payload = head.clone();
        payload.extend_from_slice(&unrecorded_record(70_000, 1, b"/bin/static"));
        payload.extend_from_slice(&unrecorded_record(70_001, 2, b"/usr/bin/su"));
        // 70,002's exec failed: its note goes, the others stay.
        payload.extend_from_slice(&unrecorded_record(70_002, 3, b"/x/sg"));
        payload.extend_from_slice(&unrecorded_record(70_002, WHY_EXEC_FAILED, b""));
        payload.extend_from_slice(&unrecorded_record(70_003, 9, &[b'p'; NOTE_PATH_MAX]));
        // The delta bases are untouched by the records.
        payload.extend_from_slice(&encode(&events)[head.len()..]);
        let mut f = header();
        f.extend_from_slice(&events_chunk(9, &payload));
        let p = read_raw_bytes("u.msr", &f).unwrap();
        assert_eq!(p.bad_chunks, 0);
        assert_eq!(p.events, events);
        let seen: Vec<(u32, &str, UnrecordedReason)> = p
            .unrecorded
            .iter()
            .map(|u| (u.pid, u.path.as_str(), u.reason))
            .collect();
        assert_eq!(
            seen[..2],
            [
                (70_000, "/bin/static", UnrecordedReason::Static),
                (70_001, "/usr/bin/su", UnrecordedReason::Setuid),
            ]
        );
        assert_eq!(seen.len(), 3);
        assert_eq!(seen[2].2, UnrecordedReason::Other);
        assert_eq!(seen[2].1.len(), NOTE_PATH_MAX);
    }

    #[test]
    fn an_unrecorded_program_record_too_long_or_cut_short_ends_the_chunk() {
        let events = sample_events(9);
        for bad in [
            unrecorded_record(1, 1, &[b'p'; NOTE_PATH_MAX + 1]),
            unrecorded_record(1, 1, b"/bin/static")[..6].to_vec(),
        ] {
            let mut payload = encode(&events[..2]);
            payload.extend_from_slice(&bad);
            let mut f = header();
            f.extend_from_slice(&events_chunk(9, &payload));
            let p = read_raw_bytes("u.msr", &f).unwrap();
            assert_eq!(p.bad_chunks, 1);
            assert_eq!(p.events, events[..2]);
            assert!(p.unrecorded.is_empty());
        }
    }

    #[test]
    fn name_records_name_the_chunk_thread_the_last_one_winning() {
        let name = |n: &str| {
            let mut r = vec![KIND_NAME, n.len() as u8];
            r.extend_from_slice(n.as_bytes());
            r
        };
        let events = sample_events(9);
        let mut first = name("kvstore");
        first.extend_from_slice(&encode(&events[..2]));
        // Renamed mid-chunk: the delta bases are untouched by the name record.
        let mut renamed = encode(&events[..2]);
        renamed.extend_from_slice(&name("worker-1"));
        let rest = encode(&events);
        renamed.extend_from_slice(&rest[encode(&events[..2]).len()..]);
        let mut f = header();
        f.extend_from_slice(&events_chunk(9, &first));
        f.extend_from_slice(&events_chunk(9, &renamed));
        f.extend_from_slice(&events_chunk(10, &name("other")));
        let p = read_raw_bytes("n.msr", &f).unwrap();
        assert_eq!(p.bad_chunks, 0);
        assert_eq!(p.events.len(), 2 + events.len());
        assert_eq!(p.events[2..], events[..]);
        assert_eq!(p.thread_names.get(&9).map(String::as_str), Some("worker-1"));
        assert_eq!(p.thread_names.get(&10).map(String::as_str), Some("other"));

        // A length past 15, or past the payload, is a bad chunk, not a panic or a read past.
        for bad in [vec![KIND_NAME, 16], vec![KIND_NAME, 5, b'a']] {
            let mut f = header();
            f.extend_from_slice(&events_chunk(9, &bad));
            let p = read_raw_bytes("b.msr", &f).unwrap();
            assert_eq!(p.bad_chunks, 1);
            assert!(p.thread_names.is_empty());
        }
    }

    #[test]
    fn a_record_cut_short_keeps_the_events_before_it_and_counts_the_chunk() {
        let events = sample_events(5);
        let bytes = encode(&events);
        let whole = encode(&events[..3]).len();
        let mut f = header();
        // The committed length ends inside the fourth record (a corrupt file: the shim commits
        // whole records only).
        f.extend_from_slice(&events_chunk(5, &bytes[..whole + 3]));
        let p = read_raw_bytes("c.msr", &f).unwrap();
        assert_eq!(p.bad_chunks, 1);
        assert_eq!(p.events, events[..3]);
    }

    #[test]
    fn ticks_become_ns_between_pairs_and_past_them_with_the_overall_slope() {
        let pairs = [
            (3000, 6000),
            (1000, 5000),
            // Interrupted between its two reads: ns behind an earlier pair; dropped.
            (4000, 5900),
            (7000, 7000),
        ];
        let mut events: Vec<RawEvent> = [1000u64, 2000, 5000, 9000, 0]
            .iter()
            .map(|&t| RawEvent {
                seq: 0,
                time_ns: t,
                address: 0,
                size: 0,
                usable: 0,
                tid: 1,
                stack: 0,
                kind: KIND_FREE,
                function: 5,
            })
            .collect();
        ticks_to_ns(&pairs, &mut events);
        let ns: Vec<u64> = events.iter().map(|e| e.time_ns).collect();
        // Overall slope: 2000 ns over 6000 ticks.
        assert_eq!(ns, [5000, 5500, 6500, 7667, 4667]);
    }

    #[test]
    fn a_tsc_recording_reads_back_in_ns_from_its_clock_records() {
        let mut f = header();
        f[52..56].copy_from_slice(&CLOCK_KIND_TSC.to_le_bytes());
        // Header pair: tick 10,000 at 1,000,000 ns; one tick is half a ns in this file.
        f[56..64].copy_from_slice(&10_000u64.to_le_bytes());
        f[32..40].copy_from_slice(&1_000_000u64.to_le_bytes());
        let mut events = sample_events(3);
        for (e, ticks) in events
            .iter_mut()
            .zip([12_000u64, 14_000, 16_000, 18_000, 20_000, 22_000])
        {
            e.time_ns = ticks;
        }
        // A clock record before the third event: tick 15,000 at 1,002,500 ns.
        let mut payload = encode(&events[..2]);
        payload.push(KIND_CLOCK);
        let zz = |v: i64| ((v << 1) ^ (v >> 63)) as u64;
        let mut put = |mut v: u64| {
            while v >= 0x80 {
                payload.push(v as u8 | 0x80);
                v >>= 7;
            }
            payload.push(v as u8);
        };
        put(zz(15_000 - 14_000));
        put(1_002_500);
        // The rest, delta-coded from the clock record's ticks: encoded after a copy of the
        // second event at those ticks, whose record is then left out.
        let bridge = RawEvent {
            time_ns: 15_000,
            ..events[1]
        };
        let tail = encode(&[&[bridge][..], &events[2..]].concat());
        payload.extend_from_slice(&tail[encode(&[bridge]).len()..]);
        f.extend_from_slice(&events_chunk(3, &payload));
        let p = read_raw_bytes("t.msr", &f).unwrap();
        assert!(p.tsc_clock);
        assert_eq!(p.bad_chunks, 0);
        assert_eq!(p.clock_pairs.len(), 2);
        let ns: Vec<u64> = p.events.iter().map(|e| e.time_ns).collect();
        // 12,000 and 14,000 between the pairs (0.5 ns per tick); after the last pair the
        // overall slope (2,500 ns over 5,000 ticks) continues.
        assert_eq!(
            ns,
            [
                1_001_000, 1_002_000, 1_003_000, 1_004_000, 1_005_000, 1_006_000
            ]
        );
        let mut expected = events.clone();
        for (e, &n) in expected.iter_mut().zip(&ns) {
            e.time_ns = n;
        }
        assert_eq!(p.events, expected);
    }
}
