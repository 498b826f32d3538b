//! Following a recording while the program runs: the shim's `.msr` files are `MAP_SHARED`
//! mappings whose chunks carry a committed length (release-stored after each whole record),
//! so another process can read them as they fill. [`Follower::poll`] reads each chunk's bytes
//! committed since the last poll (positioned reads, never the whole file) into one
//! incremental [`RawReader`] per process image; [`Follower::summary`] and
//! [`Follower::snapshot`] give consistent views of what has been read.
//!
//! `record` polls while the program runs, so that at its exit only the last bytes remain
//! to be read; `record_live` also reports a [`LiveSummary`] after each poll.
//!
//! Consistency: each image's events are applied in sequence order, and only up to its
//! *watermark*, the first sequence number not yet seen (a thread may have taken a number and
//! not yet committed its record); a gap that stays open for [`STALL`] (a record the shim never
//! wrote, as when the disk filled) is skipped. A snapshot therefore never frees a block whose
//! allocation it has not seen.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::merge::{self, Image};
use crate::raw::{self, CHUNK_BYTES, CHUNK_HEADER_BYTES, FILE_HEADER_BYTES, RawReader};
use crate::stream::{Converter, Feed, Header};
use crate::{RecordError, parse_raw_name};

/// How long a gap in an image's sequence numbers may stay open before it is skipped.
pub const STALL: Duration = Duration::from_secs(1);

/// One process image as the follower has read it so far.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct LiveProcess {
    pub pid: u32,
    pub ppid: u32,
    pub command_line: String,
    /// Events applied (up to the watermark): allocations, frees, realloc halves, mmaps,
    /// munmaps.
    pub events: u64,
    /// Allocations (the alloc half of a realloc included), as the finished trace counts them.
    pub allocs: u64,
    /// Frees (the free half of a realloc included).
    pub frees: u64,
    /// Heap bytes (requested sizes) live at the watermark, and the most so far.
    pub live_bytes: u64,
    pub peak_live_bytes: u64,
}

/// What the recording holds so far (see [`Follower::summary`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct LiveSummary {
    pub events: u64,
    pub allocs: u64,
    pub frees: u64,
    pub live_bytes: u64,
    /// Process images, in the order their files were found.
    pub processes: Vec<LiveProcess>,
}

impl std::fmt::Display for LiveSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} process(es), {} events, {} allocations, {} frees, {:.1} MiB live",
            self.processes.len(),
            self.events,
            self.allocs,
            self.frees,
            self.live_bytes as f64 / (1u64 << 20) as f64
        )
    }
}

/// Sequence-ordered application of one image's events (for the summary and the watermark).
#[derive(Debug, Default)]
struct Applied {
    /// Index of the first event of the reader not yet queued.
    queued: usize,
    /// Queued events: (seq, kind, address, size) (a consuming follower hands the reader's
    /// events over after each poll: what waits here is copied).
    pending: BinaryHeap<Reverse<(u64, u8, u64, u64)>>,
    /// The watermark: every event below it is applied.
    next_seq: u64,
    /// Since when the smallest pending sequence number has been above the watermark.
    stalled_since: Option<Instant>,
    /// Live blocks: address → requested size.
    live: HashMap<u64, u64>,
    process: LiveProcess,
}

impl Applied {
    /// Applies the queued events in sequence order up to the watermark (`complete`: all of
    /// them, the recording has ended).
    fn apply(&mut self, reader: &RawReader, now: Instant, complete: bool) {
        let events = &reader.process.events;
        for e in events.iter().skip(self.queued) {
            self.pending
                .push(Reverse((e.seq, e.kind, e.address, e.size)));
        }
        self.queued = events.len();
        loop {
            let Some(&Reverse((seq, kind, address, size))) = self.pending.peek() else {
                self.stalled_since = None;
                return;
            };
            if seq > self.next_seq && !complete {
                let since = *self.stalled_since.get_or_insert(now);
                if now.duration_since(since) < STALL {
                    return;
                }
            }
            self.pending.pop();
            self.stalled_since = None;
            self.next_seq = self.next_seq.max(seq + 1);
            let p = &mut self.process;
            match kind {
                raw::KIND_ALLOC | raw::KIND_REALLOC_ALLOC => {
                    p.events += 1;
                    p.allocs += 1;
                    if let Some(old) = self.live.insert(address, size) {
                        p.live_bytes = p.live_bytes.saturating_sub(old);
                    }
                    p.live_bytes = p.live_bytes.saturating_add(size);
                    p.peak_live_bytes = p.peak_live_bytes.max(p.live_bytes);
                }
                raw::KIND_FREE | raw::KIND_REALLOC_FREE => {
                    p.events += 1;
                    if let Some(size) = self.live.remove(&address) {
                        p.frees += 1;
                        p.live_bytes = p.live_bytes.saturating_sub(size);
                    }
                }
                raw::KIND_MMAP | raw::KIND_MUNMAP => p.events += 1,
                _ => {}
            }
        }
    }
}

/// One `.msr` file being followed.
#[derive(Debug)]
struct Followed {
    path: PathBuf,
    file: File,
    /// The pid's n-th image by file name (renumbered by start time when merged).
    n: u32,
    /// `None` until the header is there.
    reader: Option<RawReader>,
    applied: Option<Applied>,
    /// Its index in the streaming merge (`feed`), once declared there.
    image: Option<usize>,
    /// The last poll stopped at its byte budget: more is committed than was read.
    behind: bool,
}

/// The merge behind [`Follower::snapshot`]: fed what was read since the last snapshot.
struct LiveMerge {
    converter: Converter,
    /// Per file: its image in the merge, events and clock pairs handed over, maps bytes seen.
    fed: HashMap<PathBuf, (usize, usize, usize, usize)>,
}

/// Reads a raw recording directory while the shim writes it. See the module documentation.
#[derive(Debug)]
pub struct Follower {
    dir: PathBuf,
    files: BTreeMap<PathBuf, Followed>,
    /// Keep the sequence-ordered summary (costs a map of live blocks per image).
    summarize: bool,
    /// Most payload bytes read per file and poll (`None`: all): the streaming merge reads
    /// what it can apply, the rest waits in the file, not in memory.
    budget: Option<usize>,
    /// The snapshots' merge, appended to at each snapshot (or at each poll when consuming).
    live: std::sync::Mutex<Option<LiveMerge>>,
    /// Hand what each poll read to the snapshots' merge and keep no events (see
    /// [`Follower::consuming`]), naming the trace `source`.
    consume: Option<String>,
    /// `poll_to_end` ran: every gap closes.
    ended: bool,
    /// What names the call tree's last nodes when a writing follower finishes (the live
    /// view's, which named the others: [`Follower::symbolize_the_rest_with`]).
    end_symbolizer: EndSymbolizer,
}

/// [`Follower::symbolize_the_rest_with`]'s symbolizer, kept until the end.
#[derive(Default)]
struct EndSymbolizer(std::sync::Mutex<Option<memscape_trace::symbolize::Symbolizer>>);

impl std::fmt::Debug for EndSymbolizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EndSymbolizer")
    }
}

impl LiveMerge {
    fn new(source: &str) -> Self {
        Self {
            converter: Converter::new(source, None),
            fed: HashMap::new(),
        }
    }
}

impl std::fmt::Debug for LiveMerge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LiveMerge({} images)", self.fed.len())
    }
}

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> RecordError + '_ {
    move |cause| RecordError::Io {
        path: path.display().to_string(),
        cause,
    }
}

impl Follower {
    /// Follows the `.msr` files of `dir` (a recording's private directory). `summarize`:
    /// keep what [`Follower::summary`] reports.
    pub fn new(dir: &Path, summarize: bool) -> Self {
        Self {
            dir: dir.to_owned(),
            files: BTreeMap::new(),
            summarize,
            budget: None,
            live: std::sync::Mutex::new(None),
            consume: None,
            ended: false,
            end_symbolizer: EndSymbolizer::default(),
        }
    }

    /// A follower for live views whose memory holds the trace so far, not the events read:
    /// each poll hands what it read to the merge behind [`Follower::snapshot`] (as `record`
    /// hands it to the file it writes) and keeps nothing else, so that a snapshot only copies
    /// the merge's state out (see `TraceBuilder::snapshot`), events wait in the merge only
    /// while their time is within [`crate::stream::MARGIN`] of the last read (or behind a gap
    /// in an image's sequence), and [`Follower::into_trace`] finishes that merge into the
    /// recording's trace, named `source`. [`Follower::rebuilt_snapshot`] and `finish` see
    /// no events.
    ///
    /// Its [`Follower::summary`] counts what the merge has applied (what the next snapshot
    /// holds), not every event read: no second, sequence-ordered pass over the events (a
    /// queue and a map of live blocks per image, as much work again as the merge's own).
    pub fn consuming(dir: &Path, source: &str) -> Self {
        Self {
            consume: Some(source.to_owned()),
            ..Self::new(dir, false)
        }
    }

    /// A consuming follower whose merge also writes the recording's file while it runs
    /// (`record`'s segments, copied out of the merge that the snapshots share: one merge for
    /// both, `Converter::keeping`), finished by [`Follower::finish_written`].
    pub(crate) fn writing(mut self, sink: crate::stream::Sink) -> Self {
        let source = self.consume.clone().unwrap_or_default();
        *self.live.get_mut().unwrap_or_else(|e| e.into_inner()) = Some(LiveMerge {
            converter: Converter::keeping(&source, sink),
            fed: HashMap::new(),
        });
        self
    }

    /// When this follower's merge writes the file ([`Follower::writing`]), `symbolizer`
    /// names the call-tree nodes left at the end: the one the snapshots named the others
    /// with ([`Follower::snapshot_symbolized`]), so that the modules' symbols are not read
    /// again.
    pub fn symbolize_the_rest_with(&self, symbolizer: memscape_trace::symbolize::Symbolizer) {
        *self
            .end_symbolizer
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(symbolizer);
    }

    /// Reads at most `bytes` per file and poll (see [`Follower::caught_up`]): memory then
    /// holds what one poll read, however far behind the program the reader is.
    pub fn with_budget(mut self, bytes: usize) -> Self {
        self.budget = Some(bytes);
        self
    }

    /// Whether the last poll read everything committed (no file stopped at its budget).
    pub fn caught_up(&self) -> bool {
        self.files.values().all(|f| !f.behind)
    }

    /// Reads what the shim committed since the last poll, in every file of the directory
    /// (new files included).
    pub fn poll(&mut self) -> Result<(), RecordError> {
        self.poll_files(false)
    }

    /// Reads everything, the program having ended: chunks never started count as bad, and
    /// gaps in the sequence are closed.
    pub fn poll_to_end(&mut self) -> Result<(), RecordError> {
        self.ended = true;
        self.poll_files(true)
    }

    fn poll_files(&mut self, complete: bool) -> Result<(), RecordError> {
        for entry in std::fs::read_dir(&self.dir).map_err(io_error(&self.dir))? {
            let path = entry.map_err(io_error(&self.dir))?.path();
            if self.files.contains_key(&path) {
                continue;
            }
            let Some((_, n)) = parse_raw_name(&path) else {
                continue;
            };
            let file = File::open(&path).map_err(io_error(&path))?;
            self.files.insert(
                path.clone(),
                Followed {
                    path,
                    file,
                    n,
                    reader: None,
                    applied: self.summarize.then(Applied::default),
                    image: None,
                    behind: false,
                },
            );
        }
        let now = Instant::now();
        let read_at = crate::stream::monotonic_ns();
        for f in self.files.values_mut() {
            read_new(f, complete, self.budget)?;
            if let (Some(reader), Some(applied)) = (&f.reader, &mut f.applied) {
                // (A file read up to its budget may have more below a gap.)
                applied.apply(reader, now, complete && !f.behind);
            }
        }
        if let Some(source) = &self.consume {
            let taken = self
                .live
                .get_mut()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            let mut live = taken.unwrap_or_else(|| LiveMerge::new(source));
            self.feed(&mut live.converter, now, complete);
            let fed = now.elapsed();
            live.converter.advance((!complete).then_some(read_at));
            tracing::debug!(
                target: "memscape_record::live",
                read_and_feed_ms = fed.as_secs_f64() * 1e3,
                apply_ms = (now.elapsed() - fed).as_secs_f64() * 1e3,
                "poll"
            );
            for f in self.files.values_mut() {
                if let Some(applied) = &mut f.applied {
                    applied.queued = 0;
                }
            }
            *self.live.get_mut().unwrap_or_else(|e| e.into_inner()) = Some(live);
        }
        Ok(())
    }

    /// The recording's trace (what `record` writes) of a consuming follower after
    /// [`Follower::poll_to_end`], and per-process reports; `None` when nothing was read.
    pub(crate) fn into_trace(
        self,
        launcher: &merge::Endings,
    ) -> Option<(
        memscape_trace::Trace,
        Vec<crate::ProcessReport>,
        Vec<crate::UnrecordedProgram>,
    )> {
        let live = self.live.into_inner().unwrap_or_else(|e| e.into_inner())?;
        (live.converter.len() > 0).then(|| live.converter.finish(launcher))
    }

    /// The end of a [`Follower::writing`] follower after [`Follower::poll_to_end`]: the rest
    /// applied, the last segment and the footer written, the file named; the reports. The
    /// whole trace goes to `on_whole` (symbolized, rounded as the file stores it) before the
    /// footer is encoded. `None` when nothing was read.
    #[allow(clippy::type_complexity)]
    pub(crate) fn finish_written(
        self,
        launcher: &merge::Endings,
        on_whole: Option<&mut crate::stream::WholeTrace<'_>>,
    ) -> Option<std::io::Result<(Vec<crate::ProcessReport>, Vec<crate::UnrecordedProgram>)>> {
        // (`new`, not `default`: it reads where debug information is looked for from the
        // environment.)
        #[allow(clippy::unwrap_or_default)]
        let mut symbolizer = self
            .end_symbolizer
            .0
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .unwrap_or_else(memscape_trace::symbolize::Symbolizer::new);
        let live = self.live.into_inner().unwrap_or_else(|e| e.into_inner())?;
        (live.converter.len() > 0).then(|| {
            live.converter
                .finish_into(launcher, &mut symbolizer, on_whole)
        })
    }

    /// Whether this follower's merge writes the file ([`Follower::writing`]).
    pub(crate) fn writes(&self) -> bool {
        self.live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .is_some_and(|live| live.converter.writes())
    }

    /// What has been applied so far (all zero without `summarize`; a consuming follower's
    /// merge: what [`Follower::snapshot`] would hold now).
    pub fn summary(&self) -> LiveSummary {
        if self.consume.is_some() {
            let guard = self.live.lock().unwrap_or_else(|e| e.into_inner());
            return guard
                .as_ref()
                .map_or_else(LiveSummary::default, |live| merged_summary(&live.converter));
        }
        let mut s = LiveSummary::default();
        for f in self.files.values() {
            let (Some(reader), Some(applied)) = (&f.reader, &f.applied) else {
                continue;
            };
            let mut p = applied.process.clone();
            p.pid = reader.process.pid;
            p.ppid = reader.process.ppid;
            p.command_line = reader.process.command_line.clone();
            s.events += p.events;
            s.allocs += p.allocs;
            s.frees += p.frees;
            s.live_bytes += p.live_bytes;
            s.processes.push(p);
        }
        s
    }

    /// The trace of what has been read so far: each image's events in sequence order up to its
    /// watermark (as [`Follower::summary`] counts them), the images merged by time, times from
    /// the clock pairs read when each event was applied. **Appended to**: each call merges only
    /// what was read since the previous one into a merge kept between calls (the `Converter`
    /// of `record`, see `stream.rs`) and returns a copy of its state, so its cost is the new
    /// events plus a copy of the blocks, not a rebuild from the first event
    /// ([`Follower::rebuilt_snapshot`] is that rebuild). After [`Follower::poll_to_end`], the
    /// trace `convert_dir` writes (same counts and blocks: `tests/live.rs`).
    pub fn snapshot(&self, source: &str) -> memscape_trace::Trace {
        let mut guard = self.live.lock().unwrap_or_else(|e| e.into_inner());
        if self.consume.is_some() {
            let started = Instant::now();
            let live = guard.get_or_insert_with(|| LiveMerge::new(source));
            let mut trace = live.converter.snapshot();
            source.clone_into(&mut trace.meta.source);
            tracing::debug!(
                target: "memscape_record::live",
                snapshot_ms = started.elapsed().as_secs_f64() * 1e3,
                "snapshot"
            );
            return trace;
        }
        let live = guard.get_or_insert_with(|| LiveMerge::new(source));
        let new: Vec<(&PathBuf, &RawReader, u32)> = self
            .files
            .iter()
            .filter(|(path, _)| !live.fed.contains_key(*path))
            .filter_map(|(path, f)| Some((path, f.reader.as_ref()?, f.n)))
            .collect();
        if !new.is_empty() {
            let headers = new
                .iter()
                .map(|(_, reader, n)| Header::of(&reader.process, *n))
                .collect();
            let index = live.converter.add_images(headers);
            for ((path, ..), i) in new.into_iter().zip(index) {
                live.fed.insert(path.clone(), (i, 0, 0, 0));
            }
        }
        let now = Instant::now();
        let mut new_events = 0;
        for (path, f) in &self.files {
            let (Some(reader), Some(fed)) = (&f.reader, live.fed.get_mut(path)) else {
                continue;
            };
            let (i, events, pairs, maps) = *fed;
            let p = &reader.process;
            let maps_len = reader.maps_len();
            let feed = Feed {
                events: p.events.get(events..).unwrap_or_default().to_vec(),
                stacks: p
                    .stacks
                    .iter()
                    .filter(|(id, _)| !live.converter.has_stack(i, **id))
                    .map(|(&id, frames)| (id, frames.clone()))
                    .collect(),
                clock_pairs: p.clock_pairs.get(pairs..).unwrap_or_default().to_vec(),
                maps: (maps_len != maps).then(|| reader.maps_text()),
                thread_names: p.thread_names.clone(),
                pool_names: p.pool_names.clone(),
                unrecorded: Some(p.unrecorded.clone()),
            };
            *fed = (i, p.events.len(), p.clock_pairs.len(), maps_len);
            new_events += feed.events.len();
            live.converter.feed(i, feed, now, self.ended, false);
        }
        let fed = now.elapsed();
        live.converter.advance(None);
        let advanced = now.elapsed();
        let trace = live.converter.snapshot();
        tracing::debug!(
            target: "memscape_record::live",
            new_events,
            feed_ms = fed.as_secs_f64() * 1e3,
            apply_ms = (advanced - fed).as_secs_f64() * 1e3,
            snapshot_ms = (now.elapsed() - advanced).as_secs_f64() * 1e3,
            "snapshot"
        );
        trace
    }

    /// [`Follower::snapshot`] with its call tree symbolized by `symbolizer`: for a consuming
    /// follower, only the nodes added since the last call are looked up, in the merge itself,
    /// so that each node is symbolized once for all snapshots (the report counts this call's
    /// nodes and lookups); otherwise the whole snapshot, with the modules' symbols kept.
    pub fn snapshot_symbolized(
        &self,
        source: &str,
        symbolizer: &mut memscape_trace::symbolize::Symbolizer,
    ) -> (
        memscape_trace::Trace,
        memscape_trace::symbolize::SymbolizeReport,
    ) {
        if self.consume.is_some() {
            let started = Instant::now();
            let report = {
                let mut guard = self.live.lock().unwrap_or_else(|e| e.into_inner());
                let live = guard.get_or_insert_with(|| LiveMerge::new(source));
                live.converter.symbolize_new(symbolizer)
            };
            tracing::debug!(
                target: "memscape_record::live",
                symbolize_ms = started.elapsed().as_secs_f64() * 1e3,
                nodes = report.nodes,
                lookups = report.lookups,
                "new call-tree nodes symbolized"
            );
            return (self.snapshot(source), report);
        }
        let mut trace = self.snapshot(source);
        let report = symbolizer.symbolize(&mut trace);
        (trace, report)
    }

    /// [`Follower::snapshot`] rebuilt from the first event (every image cut at its watermark
    /// with `summarize`, else every event read; times from the clock pairs read so far): what
    /// appended snapshots are tested against.
    pub fn rebuilt_snapshot(&self, source: &str) -> memscape_trace::Trace {
        let images = self
            .files
            .values()
            .filter_map(|f| {
                let mut raw = f.reader.as_ref()?.snapshot();
                if let Some(applied) = &f.applied {
                    raw.events.retain(|e| e.seq < applied.next_seq);
                }
                Some(Image { raw, n: f.n })
            })
            .collect();
        merge::merge(source, images, &merge::Endings::default()).0
    }

    /// Hands what was read since the last call to the streaming merge (new images declared
    /// first, those found together in start order). `complete`: after [`Follower::poll_to_end`].
    /// A follower that feeds keeps no events for [`Follower::snapshot`] or `finish`.
    pub(crate) fn feed(&mut self, converter: &mut Converter, now: Instant, complete: bool) {
        let new: Vec<&mut Followed> = self
            .files
            .values_mut()
            .filter(|f| f.image.is_none() && f.reader.is_some())
            .collect();
        if !new.is_empty() {
            let headers = new
                .iter()
                .filter_map(|f| Some(Header::of(&f.reader.as_ref()?.process, f.n)))
                .collect();
            let index = converter.add_images(headers);
            for (f, i) in new.into_iter().zip(index) {
                f.image = Some(i);
            }
        }
        for f in self.files.values_mut() {
            if let (Some(i), Some(reader)) = (f.image, f.reader.as_mut()) {
                converter.feed(i, reader.take_feed(), now, complete && !f.behind, f.behind);
                // The summary queued every event read (`poll`); the next ones start at 0.
                if let Some(applied) = &mut f.applied {
                    applied.queued = 0;
                }
            }
        }
    }

    /// Reads the rest (the program has ended: every chunk is complete) and returns the
    /// images. A file without even a header is left out with a warning.
    pub(crate) fn finish(mut self) -> Result<Vec<Image>, RecordError> {
        self.poll_files(true)?;
        let mut images = Vec::with_capacity(self.files.len());
        for f in self.files.into_values() {
            match f.reader {
                Some(reader) => images.push(Image {
                    raw: reader.finish(),
                    n: f.n,
                }),
                None => tracing::warn!(
                    "{}: no recorder header: this process image is left out",
                    f.path.display()
                ),
            }
        }
        Ok(images)
    }
}

/// The summary of what `converter` has merged: its trace's counts so far, per image.
fn merged_summary(converter: &Converter) -> LiveSummary {
    let (counts, images) = converter.counts();
    let processes = images
        .into_iter()
        .map(|(header, process)| {
            let p = counts.processes.get(process as usize);
            LiveProcess {
                pid: header.pid,
                ppid: header.ppid,
                command_line: header.command_line.clone(),
                events: p.map_or(0, |p| p.events),
                allocs: p.map_or(0, |p| p.allocs),
                frees: p.map_or(0, |p| p.frees),
                live_bytes: counts
                    .process_live_bytes
                    .get(process as usize)
                    .copied()
                    .unwrap_or(0),
                peak_live_bytes: p.map_or(0, |p| p.peak_live_bytes),
            }
        })
        .collect();
    LiveSummary {
        events: counts.events,
        allocs: counts.allocs,
        frees: counts.frees,
        live_bytes: counts.live_bytes,
        processes,
    }
}

/// Reads the header (once) and every chunk's newly committed bytes of one file (chunks in
/// file order, up to `budget` payload bytes: `f.behind` says whether it stopped there).
fn read_new(f: &mut Followed, complete: bool, budget: Option<usize>) -> Result<(), RecordError> {
    f.behind = false;
    let len = f.file.metadata().map_err(io_error(&f.path))?.len();
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    if f.reader.is_none() {
        if len < FILE_HEADER_BYTES {
            return Ok(());
        }
        let mut header = vec![0u8; FILE_HEADER_BYTES];
        f.file
            .read_exact_at(&mut header, 0)
            .map_err(io_error(&f.path))?;
        match RawReader::new(&f.path.display().to_string(), &header) {
            Ok(reader) => f.reader = Some(reader),
            // The header may not be stored yet; at the end it is an error for this file.
            Err(e) if complete => {
                tracing::warn!("{e}: this process image is left out");
                return Ok(());
            }
            Err(_) => return Ok(()),
        }
    }
    let Some(reader) = f.reader.as_mut() else {
        return Ok(());
    };
    let file = &f.file;
    let mut index = 0;
    let mut offset = FILE_HEADER_BYTES;
    let mut read = 0usize;
    while offset.saturating_add(CHUNK_HEADER_BYTES) <= len {
        let mut header = [0u8; CHUNK_HEADER_BYTES];
        file.read_exact_at(&mut header, offset as u64)
            .map_err(io_error(&f.path))?;
        // Past the budget only events wait. The module maps and stack records the events read
        // so far need can lie in later chunks (a `dlopen`'s maps snapshot is a new chunk after
        // the thread's events chunk): read them on, or those events would be applied with
        // their frames in no module, or with no stack at all.
        if budget.is_some_and(|b| read >= b) {
            f.behind = true;
            if raw::chunk_kind(&header) == Some(raw::CHUNK_EVENTS) {
                index += 1;
                offset += CHUNK_BYTES;
                continue;
            }
        }
        let payload_at = offset + CHUNK_HEADER_BYTES;
        reader.chunk(
            index,
            &header,
            |range| {
                let end = payload_at.checked_add(range.end)?;
                if end > len.min(offset + CHUNK_BYTES) {
                    return None;
                }
                let mut bytes = vec![0u8; range.len()];
                file.read_exact_at(&mut bytes, (payload_at + range.start) as u64)
                    .ok()?;
                read += bytes.len();
                Some(bytes)
            },
            complete,
        );
        index += 1;
        offset += CHUNK_BYTES;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_directory_summarizes_to_nothing_and_finishes_empty() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = Follower::new(dir.path(), true);
        f.poll().unwrap();
        assert_eq!(f.summary(), LiveSummary::default());
        assert!(f.finish().unwrap().is_empty());
    }

    /// A `.msr` chunk of `kind` holding `payload` (`full`: padded to its whole length, as
    /// every chunk but the file's last is).
    fn chunk(kind: u32, tag: u64, payload: &[u8], full: bool) -> Vec<u8> {
        let mut c = vec![0u8; CHUNK_HEADER_BYTES];
        c[..4].copy_from_slice(&raw::CHUNK_MAGIC.to_le_bytes());
        c[4..8].copy_from_slice(&kind.to_le_bytes());
        c[8..12].copy_from_slice(&7u32.to_le_bytes());
        c[16..24].copy_from_slice(&(payload.len() as u64).to_le_bytes());
        c[24..32].copy_from_slice(&tag.to_le_bytes());
        c.extend_from_slice(payload);
        if full {
            c.resize(CHUNK_BYTES, 0);
        }
        c
    }

    fn varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    #[test]
    fn maps_and_stacks_after_the_budget_are_read_before_the_events_they_place() {
        // One image of pid 7 (CLOCK_MONOTONIC ns, started at 1 s): two mallocs from a stack
        // inside a library whose maps snapshot, like a `dlopen`'s, is in a chunk after the
        // events chunk, and whose stack record is too.
        let dir = tempfile::tempdir().unwrap();
        let lib = "/opt/late/liblate.so";
        let mut file = vec![0u8; FILE_HEADER_BYTES];
        file[..8].copy_from_slice(raw::FILE_MAGIC);
        file[8..12].copy_from_slice(&raw::FILE_VERSION.to_le_bytes());
        file[12..16].copy_from_slice(&7u32.to_le_bytes());
        file[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
        file[32..40].copy_from_slice(&1_000_000_000u64.to_le_bytes());
        file[40..48].copy_from_slice(&4096u64.to_le_bytes());
        let mut events = Vec::new();
        let (mut time, mut address) = (0u64, 0u64);
        for (seq, (t, a)) in [(1_100_000_000u64, 0x1000u64), (1_200_000_000, 0x2000)]
            .into_iter()
            .enumerate()
        {
            events.push(raw::KIND_ALLOC | 1 << 3);
            varint(&mut events, if seq == 0 { 0 } else { 2 }); // zigzag(+1)
            varint(&mut events, (t - time) << 1);
            varint(&mut events, (a - address) << 1);
            varint(&mut events, 24); // size
            varint(&mut events, 0); // usable − size
            varint(&mut events, 3); // stack id
            (time, address) = (t, a);
        }
        let mut stacks = Vec::new();
        stacks.extend_from_slice(&3u32.to_le_bytes());
        stacks.extend_from_slice(&2u32.to_le_bytes());
        for ip in [0x7f00_0000_1234u64, 0x5555_0000_0100] {
            stacks.extend_from_slice(&ip.to_le_bytes());
        }
        let maps = format!("7f0000000000-7f0000010000 r-xp 00000000 08:01 99 {lib}\n");
        file.extend(chunk(raw::CHUNK_EVENTS, 0, &events, true));
        file.extend(chunk(raw::CHUNK_STACKS, 0, &stacks, true));
        file.extend(chunk(raw::CHUNK_MAPS, 1, maps.as_bytes(), false));
        std::fs::write(dir.path().join("late.7.0.msr"), &file).unwrap();

        // A budget the events chunk alone exceeds: the poll stops reading events there.
        let mut follower = Follower::new(dir.path(), false).with_budget(1);
        let mut converter = Converter::new("late", None);
        follower.poll().unwrap();
        assert!(!follower.caught_up());
        follower.feed(&mut converter, Instant::now(), false);
        // The first malloc lies before the image's last time read: it is applied now.
        converter.advance(None);
        let trace = converter.snapshot();
        let placed: Vec<_> = trace
            .call_tree
            .frames
            .iter()
            .skip(1)
            .map(|f| (trace.strings.get(f.module).to_owned(), f.module_offset))
            .collect();
        assert!(
            placed.contains(&(lib.to_owned(), 0x1234)),
            "the library's frame placed in it: {placed:?}"
        );
    }

    #[test]
    fn a_file_without_its_header_yet_is_waited_for_then_left_out() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("prog.7.0.msr"), [0u8; 100]).unwrap();
        let mut f = Follower::new(dir.path(), true);
        f.poll().unwrap();
        assert!(f.summary().processes.is_empty());
        assert!(f.finish().unwrap().is_empty());
    }
}
