//! The merge of a recording's process images into one trace, fed as the events arrive: what
//! `record` runs while the program runs (blocks handed to a segmented `.msc` as they end), and
//! what `merge::merge` runs over whole images.
//!
//! Each image's events are applied in sequence order (a gap in the sequence, a record a thread
//! has numbered but not committed yet, holds the image back; one open for [`STALL`] is
//! skipped), each with its time clamped never to go back within the image. The images are
//! merged by time (ties: the earlier-declared image first) up to a *frontier*: an event is
//! applied only once no image can still produce an earlier one — below the last applied time
//! of every image held back by a gap, and at least [`MARGIN`] before the moment the files
//! were read (a record whose clock was read that long before it was committed would come
//! too late: its time is then clamped to the last applied one). At the end the frontier is
//! gone and everything is applied.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use memscape_trace::msc::{MscOptions, SegmentWriter};
use memscape_trace::process::{Pool, Process, ProcessEnd};
use memscape_trace::{Drained, Frame, SyncedFile, Trace, TraceBuilder, TraceFormat};

use crate::follow::STALL;
use crate::merge::{Mapping, mappings_of};
use crate::raw::{self, RawEvent, RawProcess, TickMap, Unrecorded};

mod finish;
mod ready;
use ready::ChunkedQueue;

/// How long before the moment the files were read an event must lie to be applied while the
/// program runs (see the module documentation).
pub const MARGIN: Duration = Duration::from_millis(250);

/// The per-event maps keyed by small ids (stack ids, tids) hash by one multiply-rotate:
/// SipHash there was several per cent of the merge thread's time on cc1plus.
type IdHasher = memscape_trace::PointerHasher;
type IdMap<V> = HashMap<u32, V, std::hash::BuildHasherDefault<IdHasher>>;

/// Stack id → call-tree leaf. The shim numbers an image's stacks 1, 2, 3, …: a vector by id
/// (4 bytes each, [`Sites::UNKNOWN`] where none yet) is a quarter of a hash map's memory
/// and one load per event, where the map's probes missed the cache on most events of
/// cc1plus (hundreds of thousands of stacks). Ids far beyond the stacks read (a damaged
/// file) go to the map, so that no vector is sized by an unchecked field.
#[derive(Default)]
struct Sites {
    dense: Vec<u32>,
    sparse: IdMap<u32>,
}

impl Sites {
    const UNKNOWN: u32 = u32::MAX;

    fn get(&self, stack: u32) -> Option<u32> {
        match self.dense.get(stack as usize) {
            Some(&site) if site != Self::UNKNOWN => Some(site),
            _ => self.sparse.get(&stack).copied(),
        }
    }

    /// `dense_up_to`: ids below it may be kept in the vector.
    fn insert(&mut self, stack: u32, site: u32, dense_up_to: usize) {
        let i = stack as usize;
        if i < dense_up_to && site != Self::UNKNOWN {
            if i >= self.dense.len() {
                self.dense.resize(i + 1, Self::UNKNOWN);
            }
            self.dense[i] = site;
        } else {
            self.sparse.insert(stack, site);
        }
    }
}

/// An event waiting for its turn in sequence order (ties: the order read).
#[derive(Clone, Copy)]
struct Queued {
    seq: u64,
    arrival: u64,
    event: RawEvent,
}

impl PartialEq for Queued {
    fn eq(&self, other: &Self) -> bool {
        (self.seq, self.arrival) == (other.seq, other.arrival)
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Queued {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.seq, self.arrival).cmp(&(other.seq, other.arrival))
    }
}

/// What a process image's file says before its events.
pub(crate) struct Header {
    pub(crate) pid: u32,
    pub(crate) ppid: u32,
    pub(crate) start_ns: u64,
    pub(crate) page_size: u64,
    pub(crate) fork_seq: Option<u64>,
    pub(crate) command_line: String,
    pub(crate) executable: String,
    pub(crate) tsc_clock: bool,
    /// The file's own number of its image (sorting ties).
    pub(crate) n: u32,
}

impl Header {
    pub(crate) fn of(raw: &RawProcess, n: u32) -> Self {
        Self {
            pid: raw.pid,
            ppid: raw.ppid,
            start_ns: raw.start_ns,
            page_size: raw.page_size,
            fork_seq: raw.fork_seq,
            command_line: raw.command_line.clone(),
            executable: raw.executable.clone(),
            tsc_clock: raw.tsc_clock,
            n,
        }
    }
}

/// New data of one image since the last feed (taken out of its reader).
#[derive(Default)]
pub(crate) struct Feed {
    pub(crate) events: Vec<RawEvent>,
    pub(crate) stacks: HashMap<u32, Vec<u64>>,
    pub(crate) clock_pairs: Vec<(u64, u64)>,
    /// Every maps snapshot so far (whole text), when it changed.
    pub(crate) maps: Option<Vec<String>>,
    pub(crate) thread_names: HashMap<u32, String>,
    pub(crate) pool_names: HashMap<u32, String>,
    pub(crate) unrecorded: Option<Vec<Unrecorded>>,
}

/// One process image being merged.
struct Image {
    header: Header,
    /// The pid's image number by start order (0 first, n after the n-th exec).
    n: u32,
    process: u32,
    pairs: Vec<(u64, u64)>,
    ticks: Option<TickMap>,
    pending: BinaryHeap<Reverse<Queued>>,
    arrivals: u64,
    next_seq: u64,
    stalled_since: Option<Instant>,
    /// Its file holds more than was read.
    behind: bool,
    /// In sequence order, each with its time since the origin, clamped (a process record's
    /// own time, unclamped CLOCK_MONOTONIC ns, is in its unused `usable`).
    ready: ChunkedQueue<RawEvent>,
    /// The last time given to an event (since the origin).
    clamped: u64,
    /// The latest event time, unclamped (since the origin).
    latest: u64,
    stacks: HashMap<u32, Vec<u64>>,
    /// Stack id → call-tree leaf: looked up for every event.
    sites: Sites,
    mappings: Vec<Mapping>,
    thread_names: HashMap<u32, String>,
    pool_names: HashMap<u32, String>,
    threads: IdMap<u32>,
    /// The last event's (tid, thread): runs of one thread skip the two lookups per event.
    last_thread: Option<(u32, u32)>,
    pools: HashMap<u64, u32>,
    reallocs: u64,
    mmaps: u64,
    munmaps: u64,
    tids: HashSet<u32, std::hash::BuildHasherDefault<IdHasher>>,
    /// The image's own exit record (seq, ns, code) and destructor record (seq, ns).
    exit: Option<(u64, u64, i32)>,
    end_record: Option<(u64, u64)>,
    unrecorded: Vec<Unrecorded>,
    /// For an image made by `exec` (n > 0): the image it replaced had its address space
    /// ended (`end_exec_predecessor`).
    replaced_ended: bool,
    /// For a forked child: its parent's image, until the child's copy of the parent's heap
    /// is taken (`inherit`).
    fork_parent: Option<usize>,
    /// Children forked by this image, by the parent's event count at their fork: each takes
    /// its copy before this image applies its event of that number.
    forks: VecDeque<(u64, usize)>,
}

impl Image {
    /// The next event in sequence order: its time in ns since the origin, clamped.
    fn make_ready(&mut self, mut e: RawEvent, origin: u64) {
        if self.header.tsc_clock {
            e.time_ns = self.ticks.as_ref().map_or(0, |m| m.ns(e.time_ns));
        }
        let t = e.time_ns.saturating_sub(origin);
        self.latest = self.latest.max(t);
        if e.kind == raw::KIND_PROCESS && e.function != raw::PROC_POOL {
            e.usable = e.time_ns;
        }
        e.time_ns = t.max(self.clamped);
        self.clamped = e.time_ns;
        self.ready.push_back(e);
    }
}

/// Where ended blocks go while the merge runs: a segmented `.msc` written on another thread.
pub(crate) struct Sink {
    segment_blocks: usize,
    /// The writer's options (the footer is encoded beside it).
    options: MscOptions,
    /// Blocks the builder kept at the last drain (live ones).
    kept: usize,
    tx: Option<std::sync::mpsc::SyncSender<Drained>>,
    writer: Option<std::thread::JoinHandle<std::io::Result<SegmentWriter<SyncedFile>>>>,
    /// The footer's call-tree columns compressed while the program runs
    /// ([`Converter::compress_footer_ahead`]): at the exit only the newest nodes are left.
    ahead: memscape_trace::msc::FooterAhead,
}

impl Sink {
    /// Starts writing `path` (under a temporary name until [`Converter::finish_into`]).
    /// `beside_a_window`: the segments are encoded on the cores a live window draws with, so
    /// their event times are stored without the context model (`plain_event_times`: about
    /// half the encoding's CPU while the program runs, for a larger file; BENCHMARKS.md
    /// "wave 26"); without a window the file keeps its smallest coding.
    pub(crate) fn create(
        path: &std::path::Path,
        options: &MscOptions,
        segment_blocks: usize,
        beside_a_window: bool,
    ) -> std::io::Result<Self> {
        let file = SyncedFile::create(path)?;
        let mut writer = SegmentWriter::new(file, options)?;
        if beside_a_window {
            writer = writer.plain_event_times();
        }
        // One segment encoded while the next one fills.
        let (tx, rx) = std::sync::mpsc::sync_channel::<Drained>(0);
        let handle = std::thread::Builder::new()
            .name("msc-segments".into())
            .spawn(move || {
                let mut failed = None;
                for drained in rx {
                    if failed.is_none()
                        && let Err(e) = writer.push(&drained.blocks(), Some(&drained.events()))
                    {
                        failed = Some(e);
                    }
                }
                match failed {
                    Some(e) => Err(e),
                    None => Ok(writer),
                }
            })?;
        Ok(Self {
            segment_blocks: segment_blocks.max(1),
            options: *options,
            kept: 0,
            tx: Some(tx),
            writer: Some(handle),
            ahead: memscape_trace::msc::FooterAhead::new(options),
        })
    }
}

impl Drop for Sink {
    /// Unfinished (an error, a program that could not start): the writer stops and its
    /// temporary file is removed before this returns.
    fn drop(&mut self) {
        drop(self.tx.take());
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

/// The merge (see the module documentation).
pub(crate) struct Converter {
    builder: TraceBuilder,
    images: Vec<Image>,
    /// CLOCK_MONOTONIC ns of time 0: the first image's start.
    origin: Option<u64>,
    /// Child statuses from the images' `wait*` records: pid → (end, ns).
    reaped: HashMap<u32, (ProcessEnd, u64)>,
    elf_types: HashMap<String, bool>,
    line: u64,
    /// The last time applied (events are applied in time order).
    applied_time: u64,
    sink: Option<Sink>,
    /// The builder keeps its blocks and hands copies to the sink ([`Converter::keeping`]).
    keeps_blocks: bool,
}

/// What takes a live recording's whole trace at its end ([`Converter::finish_into`]).
pub type WholeTrace<'a> = dyn FnMut(std::sync::Arc<Trace>) + Send + 'a;

/// CLOCK_MONOTONIC now, ns.
pub(crate) fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    u64::try_from(t.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(t.tv_nsec).unwrap_or(0)
}

impl Converter {
    pub(crate) fn new(source: &str, sink: Option<Sink>) -> Self {
        Self {
            builder: TraceBuilder::with_event_times(source),
            images: Vec::new(),
            origin: None,
            reaped: HashMap::new(),
            elf_types: HashMap::new(),
            line: 0,
            applied_time: 0,
            sink,
            keeps_blocks: false,
        }
    }

    /// [`Converter::new`] for a live view: the builder keeps every block (the snapshots share
    /// its columns) and the sink gets copies of each segment (`TraceBuilder::cut_kept`), so
    /// that the file is written while the program runs from this one merge and
    /// [`Converter::finish_into`] also gives the whole trace.
    pub(crate) fn keeping(source: &str, sink: Sink) -> Self {
        let mut converter = Self::new(source, Some(sink));
        converter.builder.keep_cuts();
        converter.keeps_blocks = true;
        converter
    }

    /// Blocks not yet handed to the sink (the live ones and those ended since the last cut).
    fn held_blocks(&self) -> usize {
        match self.keeps_blocks {
            true => self.builder.unwritten_blocks(),
            false => self.builder.held_blocks(),
        }
    }

    /// The next segment: the blocks ended since the last one (`all`: every block left).
    fn cut(&mut self, all: bool) -> Option<Drained> {
        match self.keeps_blocks {
            true => self.builder.cut_kept(all),
            false => self.builder.drain(all),
        }
    }

    fn rel(&self, ns: u64) -> u64 {
        ns.saturating_sub(self.origin.unwrap_or(0))
    }

    /// Declares images (found together: declared in start order); returns the index of each
    /// (in the order given).
    pub(crate) fn add_images(&mut self, headers: Vec<Header>) -> Vec<usize> {
        let mut order: Vec<usize> = (0..headers.len()).collect();
        order.sort_by_key(|&k| (headers[k].start_ns, headers[k].pid, headers[k].n));
        let mut index = vec![0usize; headers.len()];
        for (rank, &k) in order.iter().enumerate() {
            index[k] = self.images.len() + rank;
        }
        let mut slots: Vec<Option<Header>> = headers.into_iter().map(Some).collect();
        let headers: Vec<Header> = order.iter().filter_map(|&k| slots[k].take()).collect();
        if self.origin.is_none()
            && let Some(first) = headers.first()
        {
            self.origin = Some(first.start_ns);
            self.builder.start_monotonic_ns = first.start_ns;
            self.builder.command_line = first.command_line.clone();
            self.builder.page_size = first.page_size;
        }
        for header in headers {
            let n = self
                .images
                .iter()
                .filter(|i| i.header.pid == header.pid)
                .count() as u32;
            let start = self.rel(header.start_ns);
            let process = self.builder.process(Process {
                pid: header.pid,
                parent_pid: header.ppid,
                command_line: header.command_line.clone(),
                executable: header.executable.clone(),
                start_ns: start,
                end_ns: start,
                end: ProcessEnd::Running,
                ..Process::default()
            });
            self.images.push(Image {
                n,
                process,
                pairs: Vec::new(),
                ticks: None,
                pending: BinaryHeap::new(),
                arrivals: 0,
                // Every image numbers its events from 0 (a forked child restarts the count).
                next_seq: 0,
                stalled_since: None,
                behind: false,
                ready: ChunkedQueue::new(),
                clamped: start,
                latest: start,
                stacks: HashMap::new(),
                sites: Sites::default(),
                mappings: Vec::new(),
                thread_names: HashMap::new(),
                pool_names: HashMap::new(),
                threads: IdMap::default(),
                last_thread: None,
                pools: HashMap::new(),
                reallocs: 0,
                mmaps: 0,
                munmaps: 0,
                tids: HashSet::default(),
                replaced_ended: false,
                fork_parent: None,
                forks: VecDeque::new(),
                exit: None,
                end_record: None,
                unrecorded: Vec::new(),
                header,
            });
            self.note_fork(self.images.len() - 1);
        }
        index
    }

    /// Image `child` was made by `fork` (its header says at which of its parent's events):
    /// its parent image (the parent pid's image that was running when the child started) is
    /// told to hand over its heap at that event.
    fn note_fork(&mut self, child: usize) {
        let header = &self.images[child].header;
        let (Some(seq), ppid, start) = (header.fork_seq, header.ppid, header.start_ns) else {
            return;
        };
        let Some(parent) = (0..child)
            .filter(|&k| {
                self.images[k].header.pid == ppid && self.images[k].header.start_ns <= start
            })
            .max_by_key(|&k| self.images[k].n)
        else {
            return;
        };
        self.images[child].fork_parent = Some(parent);
        let forks = &mut self.images[parent].forks;
        let at = forks.partition_point(|&(s, _)| s <= seq);
        forks.insert(at, (seq, child));
    }

    /// Before image `i` applies its event `seq`: the children it forked before that event,
    /// and `i` itself if it is a forked child whose copy is not taken yet, take their copy of
    /// the parent's heap.
    fn inherit_before(&mut self, i: usize, seq: u64) {
        while let Some(&(fork_seq, child)) = self.images[i].forks.front()
            && fork_seq <= seq
        {
            self.images[i].forks.pop_front();
            self.inherit(child);
        }
        if self.images[i].fork_parent.is_some() {
            self.inherit(i);
        }
    }

    fn inherit(&mut self, child: usize) {
        if let Some(parent) = self.images[child].fork_parent.take() {
            let (c, p) = (self.images[child].process, self.images[parent].process);
            self.builder.inherit_address_space(c, p);
        }
    }

    /// Takes new data of image `i`; `complete`: the image will get no more (every gap closes);
    /// `behind`: its file holds more than was read (a gap may be in what is not read yet: it
    /// never counts as stalled, and the frontier waits for the image).
    pub(crate) fn feed(
        &mut self,
        i: usize,
        feed: Feed,
        now: Instant,
        complete: bool,
        behind: bool,
    ) {
        let origin = self.origin.unwrap_or(0);
        let Some(image) = self.images.get_mut(i) else {
            return;
        };
        image.behind = behind;
        if !feed.clock_pairs.is_empty() {
            image.pairs.extend(feed.clock_pairs);
            image.ticks = TickMap::new(&image.pairs);
        }
        image.stacks.extend(feed.stacks);
        image.thread_names.extend(feed.thread_names);
        image.pool_names.extend(feed.pool_names);
        if let Some(unrecorded) = feed.unrecorded {
            image.unrecorded = unrecorded;
        }
        if let Some(maps) = feed.maps {
            image.mappings = mappings_of(&mut self.builder, &maps, &mut self.elf_types, complete);
        }
        for event in feed.events {
            // In order (one thread, or its turn): straight on, without the queue.
            if image.pending.is_empty() && event.seq == image.next_seq {
                image.next_seq += 1;
                image.make_ready(event, origin);
                continue;
            }
            image.pending.push(Reverse(Queued {
                seq: event.seq,
                arrival: image.arrivals,
                event,
            }));
            image.arrivals += 1;
        }
        // In sequence order up to the watermark.
        while let Some(&Reverse(q)) = image.pending.peek() {
            if q.seq > image.next_seq && !complete {
                if behind {
                    image.stalled_since = None;
                    break;
                }
                let since = *image.stalled_since.get_or_insert(now);
                if now.duration_since(since) < STALL {
                    break;
                }
            }
            image.pending.pop();
            image.stalled_since = None;
            image.next_seq = image.next_seq.max(q.seq.saturating_add(1));
            image.make_ready(q.event, origin);
        }
        if image.pending.is_empty() {
            image.pending = BinaryHeap::new();
        }
    }

    /// Applies the ready events up to the frontier: `read_at` is when the files were last read
    /// (CLOCK_MONOTONIC ns) while the program runs; `None` once every process has ended (then
    /// only images with more to read or a gap hold the others back). Hands ended blocks to
    /// the sink when a segment's worth has ended.
    pub(crate) fn advance(&mut self, read_at: Option<u64>) {
        let mut frontier = read_at.map_or(u64::MAX, |at| {
            self.rel(at).saturating_sub(MARGIN.as_nanos() as u64)
        });
        for image in &self.images {
            if !image.pending.is_empty() || image.behind {
                frontier = frontier.min(image.clamped);
            }
        }
        let mut heads: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
        for (i, image) in self.images.iter().enumerate() {
            if let Some(t) = image.ready.front().map(|e| e.time_ns)
                && t < frontier
            {
                heads.push(Reverse((t, i)));
            }
        }
        while let Some(Reverse((_, i))) = heads.pop() {
            // Image `i` goes on while it is first (one heap operation per change of image).
            let next = heads.peek().map_or((u64::MAX, usize::MAX), |&Reverse(h)| h);
            while let Some(&e) = self.images[i].ready.front() {
                let t = e.time_ns;
                if t >= frontier {
                    break;
                }
                if (t, i) > next {
                    heads.push(Reverse((t, i)));
                    break;
                }
                self.images[i].ready.pop_front();
                // A record committed after the margin: never back in time.
                let time = t.max(self.applied_time);
                if self.images[i].n > 0 && !self.images[i].replaced_ended {
                    self.end_exec_predecessor(i, time);
                }
                self.applied_time = time;
                self.inherit_before(i, e.seq);
                self.apply(i, &e, time);
            }
        }
        let Some((kept, per)) = self.sink.as_ref().map(|s| (s.kept, s.segment_blocks)) else {
            return;
        };
        if self.held_blocks().saturating_sub(kept) >= per
            && let Some(drained) = self.cut(false)
        {
            let held = self.held_blocks();
            if let Some(sink) = &mut self.sink {
                sink.kept = held;
                if let Some(tx) = &sink.tx {
                    // The writer failed: its error is reported at the end.
                    let _ = tx.send(drained);
                }
            }
        }
    }

    /// Image `i` was made by `exec`: the image it replaced (same pid, one before) lost its
    /// address space then, so its blocks still live end at `i`'s start (at the latest `by`,
    /// the time of `i`'s first event; never before what was applied), not at the trace end as
    /// leaks.
    fn end_exec_predecessor(&mut self, i: usize, by: u64) {
        self.images[i].replaced_ended = true;
        let (pid, n) = (self.images[i].header.pid, self.images[i].n);
        let Some(old) = self
            .images
            .iter()
            .find(|o| o.header.pid == pid && o.n + 1 == n)
            .map(|o| o.process)
        else {
            return;
        };
        let at = self
            .rel(self.images[i].header.start_ns)
            .min(by)
            .max(self.applied_time);
        self.applied_time = at;
        self.line += 1;
        let ended = self.builder.end_address_space(self.line, at, old);
        tracing::debug!(pid, ended, "blocks of the image replaced by exec ended");
    }

    /// The call-tree leaf of a stack of image `i` (resolved on first use).
    fn site(&mut self, i: usize, stack: u32) -> u32 {
        let image = &mut self.images[i];
        if let Some(site) = image.sites.get(stack) {
            return site;
        }
        let Some(frames) = image.stacks.get(&stack) else {
            return 0;
        };
        let node = leaf(&mut self.builder, frames, &image.mappings);
        let dense_up_to = image.stacks.len().saturating_mul(2).saturating_add(4096);
        image.sites.insert(stack, node, dense_up_to);
        node
    }

    fn apply(&mut self, i: usize, e: &RawEvent, time: u64) {
        self.line += 1;
        let line = self.line;
        let site = self.site(i, e.stack);
        let image = &mut self.images[i];
        let builder = &mut self.builder;
        builder.set_process(image.process);
        let thread = match image.last_thread {
            Some((tid, thread)) if tid == e.tid => thread,
            _ => {
                let thread = *image.threads.entry(e.tid).or_insert_with(|| {
                    builder.thread(&match image.thread_names.get(&e.tid) {
                        Some(name) => format!("{name} ({})", e.tid),
                        None => format!("tid {}", e.tid),
                    })
                });
                // Only events count a thread as the image's (a process record does not).
                if e.kind != raw::KIND_PROCESS {
                    image.tids.insert(e.tid);
                    image.last_thread = Some((e.tid, thread));
                }
                thread
            }
        };
        match (e.kind, e.function) {
            (raw::KIND_ALLOC, raw::FN_POOL_ALLOC) => match image.pools.get(&e.usable) {
                Some(&pool) => {
                    builder.pool_alloc(line, time, pool, e.address, e.size, thread, site);
                }
                None => builder.warn("bad_reference", line),
            },
            (raw::KIND_FREE, raw::FN_POOL_FREE) => {
                builder.pool_free(line, time, e.address, thread, site);
            }
            (raw::KIND_ALLOC | raw::KIND_REALLOC_ALLOC, _) => {
                builder.alloc(line, time, e.address, e.size, e.usable, thread, site);
            }
            (raw::KIND_FREE, _) => {
                builder.free_from(line, time, e.address, thread, site);
            }
            (raw::KIND_REALLOC_FREE, _) => {
                // The free half of a realloc: counted as a realloc, flagged on the block.
                image.reallocs += 1;
                builder.realloc(line, time, e.address, 0, 0, 0, thread, site);
            }
            (raw::KIND_MMAP, _) => {
                image.mmaps += 1;
                builder.mmap(line, time, e.address, e.size, thread, site);
            }
            (raw::KIND_MUNMAP, _) => {
                image.munmaps += 1;
                builder.munmap(line, time, e.address, e.size);
            }
            (raw::KIND_PROCESS, raw::PROC_POOL) => {
                let id = u64::from(e.stack);
                let pool = builder.pool(Pool {
                    name: image
                        .pool_names
                        .get(&e.stack)
                        .cloned()
                        .unwrap_or_else(|| format!("pool {id}")),
                    start: e.address,
                    end: e.address.saturating_add(e.size),
                    block_size: e.usable,
                    declared_ns: time,
                    ..Pool::default()
                });
                image.pools.insert(id, pool);
            }
            (raw::KIND_PROCESS, raw::PROC_REAPED) => {
                let status = e.size as i32;
                let end = if status & 0x7f == 0 {
                    ProcessEnd::Exited {
                        code: (status >> 8) & 0xff,
                    }
                } else {
                    ProcessEnd::Signaled {
                        signal: status & 0x7f,
                    }
                };
                self.reaped.insert(e.address as u32, (end, e.usable));
            }
            (raw::KIND_PROCESS, raw::PROC_EXIT) if e.address == u64::from(image.header.pid) => {
                if image.exit.is_none_or(|(seq, ..)| e.seq >= seq) {
                    image.exit = Some((e.seq, e.usable, unzigzag(e.size) as i32));
                }
            }
            (raw::KIND_PROCESS, raw::PROC_END) if e.address == u64::from(image.header.pid) => {
                if image.end_record.is_none_or(|(seq, _)| e.seq >= seq) {
                    image.end_record = Some((e.seq, e.usable));
                }
                // The image is ending: no more frees of what it inherited.
                builder.release_inherited(image.process);
            }
            (raw::KIND_PROCESS, _) => {}
            _ => builder.warn("malformed_line", line),
        }
    }

    /// What the merge holds (for `RUST_LOG=memscape_record=debug`): events read and not yet
    /// applied, blocks held by the builder.
    pub(crate) fn held(&self) -> (usize, usize, usize) {
        let ready = self.images.iter().map(|i| i.ready.len()).sum();
        let pending = self.images.iter().map(|i| i.pending.len()).sum();
        (ready, pending, self.builder.held_blocks())
    }

    /// Whether image `i` has stack `id` (a live merge hands over only new stacks).
    pub(crate) fn has_stack(&self, i: usize, id: u32) -> bool {
        self.images
            .get(i)
            .is_some_and(|image| image.stacks.contains_key(&id))
    }

    /// Symbolizes the call-tree nodes added to the merge since `symbolizer`'s last call, in
    /// place (a live view's snapshots then copy names, not look them up again; the file
    /// written from this merge skips frames already named).
    pub(crate) fn symbolize_new(
        &mut self,
        symbolizer: &mut memscape_trace::symbolize::Symbolizer,
    ) -> memscape_trace::symbolize::SymbolizeReport {
        symbolizer.symbolize_new(&mut self.builder.call_tree, &mut self.builder.strings)
    }

    /// Compresses the call tree's columns made since the last call, for the footer (their
    /// whole plane blocks: `memscape_trace::msc::FooterAhead`). For idle moments, after
    /// [`Converter::symbolize_new`]: a node named after its block was compressed makes the
    /// footer encode that column whole at the end (the same file, later). A failure here
    /// only means the same.
    pub(crate) fn compress_footer_ahead(&mut self) {
        if let Some(sink) = &mut self.sink {
            let _ = sink.ahead.advance(&self.builder.call_tree);
        }
    }

    /// The trace of what has been applied so far (`TraceBuilder::snapshot`: the append-only
    /// block columns shared, not copied; threads under their latest names; processes still
    /// `running`): the merge goes on.
    pub(crate) fn snapshot(&mut self) -> Trace {
        let mut trace = self.builder.snapshot(TraceFormat::Msc, true);
        for image in &self.images {
            for (tid, &thread) in &image.threads {
                if let Some(name) = image.thread_names.get(tid) {
                    let name = format!("{name} ({tid})");
                    let Some(&old) = trace.threads.get(thread as usize) else {
                        continue;
                    };
                    if trace.strings.get(old) != name {
                        let id = trace.strings.intern(&name);
                        trace.threads[thread as usize] = id;
                    }
                }
            }
        }
        trace
    }

    /// Whether this merge writes a file.
    pub(crate) fn writes(&self) -> bool {
        self.sink.is_some()
    }

    /// Images declared so far.
    pub(crate) fn len(&self) -> usize {
        self.images.len()
    }

    /// What the merge has applied so far (see `TraceBuilder::counts`), and each image's
    /// header with its process in the trace, in the order declared.
    pub(crate) fn counts(&self) -> (memscape_trace::BuilderCounts<'_>, Vec<(&Header, u32)>) {
        let images = self.images.iter().map(|i| (&i.header, i.process)).collect();
        (self.builder.counts(), images)
    }
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// A stack (innermost frame first) as a call-tree leaf, frames placed in their modules.
pub(crate) fn leaf(builder: &mut TraceBuilder, frames: &[u64], mappings: &[Mapping]) -> u32 {
    let mut node = 0u32;
    for &ip in frames.iter().rev() {
        let i = mappings.partition_point(|m| m.start <= ip);
        let (module, module_offset) = match i.checked_sub(1).map(|i| &mappings[i]) {
            Some(m) if ip < m.end => (m.module, ip - m.bias),
            _ => (0, 0),
        };
        node = builder.call_tree.child(
            node,
            Frame {
                ip,
                module,
                module_offset,
                ..Frame::default()
            },
        );
    }
    node
}
