//! A trace dataset written as its events come, without the trace in memory: what
//! [`crate::write_trace`] writes for the same events, for traces too large to hold (engine-bench's
//! synthetic 1 B events would be ≈ 43 GB as a [`Trace`]).
//!
//! The tables' rows are in the order `write_trace` gives them (blocks by index, events by
//! index, in their (process, window) partitions), yet a block's row, and its allocation's event
//! row, carry what only its free tells (free event and time, flags). So rows wait in memory
//! from the oldest block still live to the newest event: memory grows with the longest
//! lifetime among the blocks, not with the trace (at most a few million rows for the synthetic
//! trace, whose blocks all live ≈ 200,000 events).
//!
//! For the traces [`memscape_trace::TraceBuilder::with_event_times`] builds from allocations
//! and frees only, in one process: no reallocs, mappings, pools or frees of unknown blocks.

use std::collections::VecDeque;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, UInt8Array, UInt32Array, UInt64Array};
use arrow_schema::SchemaRef;
use memscape_heap::synthetic::{SyntheticEvents, SyntheticOp, synthetic_skeleton};
use memscape_trace::model::{FLAG_NEVER_FREED, USABLE_UNKNOWN};
use memscape_trace::process::Process;
use memscape_trace::{Trace, TraceFormat, TraceMeta};
use parquet::arrow::ArrowWriter;

use crate::schema::{self, EVENT_ALLOC, EVENT_FREE};
use crate::trace::{TRACE_TABLES, TraceWriteOptions, WriteSummary, write_small_tables};
use crate::{DatasetKind, HostEntry, Manifest, ParquetError, Result, invalid, partition_dir};

/// The one process a streamed trace holds (`process=0`).
const PROCESS: u32 = 0;
/// Rows gathered before they are handed to a file's writer.
const BATCH_ROWS: usize = 64 * 1024;

/// An allocation as [`TraceStreamWriter::alloc`] takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamedAlloc {
    pub time_ns: u64,
    pub address: u64,
    /// Requested bytes (the block's extent: the usable size is unknown).
    pub size: u64,
    pub thread: u32,
    pub site: u32,
}

/// How a block ended: its free (or the trace's end, flagged [`FLAG_NEVER_FREED`]).
#[derive(Debug, Clone, Copy)]
struct BlockEnd {
    event: u64,
    time_ns: u64,
    flags: u8,
}

/// A block whose row is not written yet.
#[derive(Debug, Clone, Copy)]
struct PendingBlock {
    alloc: StreamedAlloc,
    alloc_event: u64,
    end: Option<BlockEnd>,
}

/// An event whose row is not written yet: an allocation (its row waits for its block's end)
/// or a free (complete, but after every earlier event).
#[derive(Debug, Clone, Copy)]
enum PendingEvent {
    Alloc {
        block: u64,
    },
    Free {
        block: u64,
        time_ns: u64,
        alloc: StreamedAlloc,
    },
}

/// One `events` row.
struct EventRow {
    event: u64,
    time_ns: u64,
    kind: u8,
    block: u64,
    address: u64,
    size: u64,
    thread: u32,
    site: u32,
    flags: u8,
}

/// A batch's arrays by width: the `u64`, `u32` and `u8` columns, each in schema order.
type ByWidth = (Vec<ArrayRef>, Vec<ArrayRef>, Vec<ArrayRef>);

/// The rows of one table gathered for its writer, column by column.
#[derive(Default)]
struct Rows {
    u64s: Vec<Vec<u64>>,
    u32s: Vec<Vec<u32>>,
    u8s: Vec<Vec<u8>>,
    len: usize,
}

impl Rows {
    fn new(u64s: usize, u32s: usize, u8s: usize) -> Self {
        Self {
            u64s: vec![Vec::with_capacity(BATCH_ROWS); u64s],
            u32s: vec![Vec::with_capacity(BATCH_ROWS); u32s],
            u8s: vec![Vec::with_capacity(BATCH_ROWS); u8s],
            len: 0,
        }
    }

    fn push(&mut self, u64s: &[u64], u32s: &[u32], u8s: &[u8]) {
        for (column, &v) in self.u64s.iter_mut().zip(u64s) {
            column.push(v);
        }
        for (column, &v) in self.u32s.iter_mut().zip(u32s) {
            column.push(v);
        }
        for (column, &v) in self.u8s.iter_mut().zip(u8s) {
            column.push(v);
        }
        self.len += 1;
    }

    /// The gathered rows as arrays of the three widths (emptied for the next ones).
    fn take(&mut self) -> ByWidth {
        self.len = 0;
        fn take<T>(column: &mut Vec<T>) -> Vec<T> {
            std::mem::replace(column, Vec::with_capacity(BATCH_ROWS))
        }
        (
            self.u64s
                .iter_mut()
                .map(|c| Arc::new(UInt64Array::from(take(c))) as ArrayRef)
                .collect(),
            self.u32s
                .iter_mut()
                .map(|c| Arc::new(UInt32Array::from(take(c))) as ArrayRef)
                .collect(),
            self.u8s
                .iter_mut()
                .map(|c| Arc::new(UInt8Array::from(take(c))) as ArrayRef)
                .collect(),
        )
    }
}

/// One Parquet file written on its own thread (encoding and compressing are most of a write's
/// time; the blocks' and the events' files then encode beside the rows being made).
struct FileWriter {
    path: PathBuf,
    batches: Option<std::sync::mpsc::SyncSender<RecordBatch>>,
    thread: Option<std::thread::JoinHandle<Result<()>>>,
}

/// Batches waiting for a file's thread (bounds the memory ahead of it).
const QUEUED_BATCHES: usize = 4;

impl FileWriter {
    fn create(path: PathBuf, schema: SchemaRef) -> Result<Self> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(crate::io_err(parent))?;
        }
        let file = File::create(&path).map_err(crate::io_err(&path))?;
        let mut writer = ArrowWriter::try_new(file, schema, Some(schema::writer_properties()))
            .map_err(parquet_err(&path))?;
        let (batches, queue) = std::sync::mpsc::sync_channel::<RecordBatch>(QUEUED_BATCHES);
        let at = path.clone();
        let thread = std::thread::spawn(move || {
            for batch in queue {
                writer.write(&batch).map_err(parquet_err(&at))?;
            }
            writer.close().map_err(parquet_err(&at))?;
            Ok(())
        });
        Ok(Self {
            path,
            batches: Some(batches),
            thread: Some(thread),
        })
    }

    /// Queues `batch`; the thread's error when it stopped early.
    fn write(&mut self, batch: RecordBatch) -> Result<()> {
        let sent = self.batches.as_ref().map(|b| b.send(batch));
        match sent {
            Some(Ok(())) => Ok(()),
            _ => {
                self.close()?;
                Err(invalid(&self.path, "the file's writer thread stopped"))
            }
        }
    }

    fn close(&mut self) -> Result<()> {
        drop(self.batches.take());
        match self.thread.take().map(std::thread::JoinHandle::join) {
            Some(Ok(written)) => written,
            Some(Err(_)) => Err(invalid(&self.path, "the file's writer thread panicked")),
            None => Ok(()),
        }
    }
}

/// The rows of one table going into its (process, window) partitions in turn: the file of one
/// window open at a time, windows in increasing order.
struct TableOut {
    table: &'static str,
    schema: SchemaRef,
    /// Arrays in schema order from the three widths' arrays.
    arrange: fn(ByWidth) -> Vec<ArrayRef>,
    rows: Rows,
    open: Option<(u64, FileWriter)>,
    files: usize,
}

impl TableOut {
    /// Where the next row goes: window `window`'s file (the earlier one closed).
    fn open_window(&mut self, dir: &Path, host: &str, window: u64) -> Result<()> {
        match &self.open {
            Some((open, _)) if *open == window => return Ok(()),
            Some((open, file)) if *open > window => {
                return Err(invalid(
                    &file.path,
                    format!("a row of window {window} after window {open}: times out of order"),
                ));
            }
            _ => {}
        }
        self.close()?;
        let path = partition_dir(dir, self.table, host, Some(PROCESS), Some(window))
            .join("part-0.parquet");
        self.open = Some((window, FileWriter::create(path, Arc::clone(&self.schema))?));
        Ok(())
    }

    /// Hands the gathered rows to the open file's writer.
    fn flush(&mut self) -> Result<()> {
        let Some((_, file)) = &mut self.open else {
            return Ok(());
        };
        if self.rows.len == 0 {
            return Ok(());
        }
        let columns = (self.arrange)(self.rows.take());
        let batch = schema::batch(&file.path, Arc::clone(&self.schema), columns)?;
        file.write(batch)
    }

    fn close(&mut self) -> Result<()> {
        self.flush()?;
        if let Some((_, mut file)) = self.open.take() {
            file.close()?;
            self.files += 1;
        }
        Ok(())
    }

    fn pushed(&mut self) -> Result<()> {
        if self.rows.len >= BATCH_ROWS {
            self.flush()?;
        }
        Ok(())
    }
}

fn parquet_err(path: &Path) -> impl FnOnce(parquet::errors::ParquetError) -> ParquetError + '_ {
    move |source| ParquetError::Parquet {
        path: path.display().to_string(),
        source,
    }
}

/// Writes a trace dataset from its allocations and frees as they come (see the module's
/// comment): [`TraceStreamWriter::create`], then [`TraceStreamWriter::alloc`] and
/// [`TraceStreamWriter::free`] in event order, then [`TraceStreamWriter::finish`].
pub struct TraceStreamWriter {
    dir: PathBuf,
    host: String,
    /// Width of a time window (ns), from the declared end time as `write_trace` cuts it.
    window: u64,
    end_time_ns: u64,
    manifest: Manifest,
    blocks: VecDeque<PendingBlock>,
    /// Index of `blocks[0]` (blocks before it are written).
    blocks_written: u64,
    events: VecDeque<PendingEvent>,
    events_written: u64,
    block_rows: TableOut,
    event_rows: TableOut,
    /// The meta's counts so far.
    event_count: u64,
    block_count: u64,
    frees: u64,
    live_bytes: u64,
    peak_live_bytes: u64,
    peak_event: u64,
    peak_time_ns: u64,
    last_time_ns: u64,
    /// The most rows held at once (blocks, events): the memory the stream needed.
    most_held: (usize, usize),
}

impl TraceStreamWriter {
    /// A writer of host `options.host` of the dataset at `dir` (created if missing; that host's
    /// partitions replaced), cut into `options.windows` windows up to `end_time_ns`, the time
    /// of the trace's last event (windows are cut before any row is written; `finish` checks
    /// that the last event came at that time).
    pub fn create(dir: &Path, options: &TraceWriteOptions, end_time_ns: u64) -> Result<Self> {
        crate::check_host(&options.host).map_err(|why| invalid(dir, why))?;
        std::fs::create_dir_all(dir).map_err(crate::io_err(dir))?;
        let manifest = Manifest::open_or_new(dir, DatasetKind::Trace)?;
        crate::remove_host(dir, &TRACE_TABLES, &options.host)?;
        let window = end_time_ns
            .saturating_add(1)
            .div_ceil(options.windows.max(1))
            .max(1);
        Ok(Self {
            dir: dir.to_path_buf(),
            host: options.host.clone(),
            window,
            end_time_ns,
            manifest,
            blocks: VecDeque::new(),
            blocks_written: 0,
            events: VecDeque::new(),
            events_written: 0,
            block_rows: TableOut {
                table: "blocks",
                schema: schema::blocks(),
                // block, address, size, requested_size, usable_size, alloc_time_ns,
                // free_time_ns, alloc_event, free_event | thread, site, free_site,
                // free_thread, pool | flags
                arrange: |(mut u64s, mut u32s, mut u8s)| {
                    let tail = u32s.split_off(2);
                    let mut columns = std::mem::take(&mut u64s);
                    columns.extend(u32s);
                    columns.append(&mut u8s);
                    columns.extend(tail);
                    columns
                },
                rows: Rows::new(9, 5, 1),
                open: None,
                files: 0,
            },
            event_rows: TableOut {
                table: "events",
                schema: schema::events(),
                // event, time_ns | kind | block, address, size | thread, site | flags
                arrange: |(u64s, u32s, u8s)| {
                    let mut u64s = u64s.into_iter();
                    let mut u8s = u8s.into_iter();
                    let mut columns: Vec<ArrayRef> = u64s.by_ref().take(2).collect();
                    columns.extend(u8s.next());
                    columns.extend(u64s);
                    columns.extend(u32s);
                    columns.extend(u8s);
                    columns
                },
                rows: Rows::new(5, 2, 2),
                open: None,
                files: 0,
            },
            event_count: 0,
            block_count: 0,
            frees: 0,
            live_bytes: 0,
            peak_live_bytes: 0,
            peak_event: 0,
            peak_time_ns: 0,
            last_time_ns: 0,
            most_held: (0, 0),
        })
    }

    /// The next event's time checked to be no earlier than the last one's.
    fn next_event(&mut self, time_ns: u64) -> Result<u64> {
        if time_ns < self.last_time_ns || time_ns > self.end_time_ns {
            return Err(invalid(
                &self.dir,
                format!(
                    "event {} at {time_ns} ns: after the last one at {} ns, up to the declared end {} ns, expected",
                    self.event_count, self.last_time_ns, self.end_time_ns
                ),
            ));
        }
        self.last_time_ns = time_ns;
        let event = self.event_count;
        self.event_count += 1;
        Ok(event)
    }

    /// An allocation; returns its block's index (allocation order).
    pub fn alloc(&mut self, alloc: StreamedAlloc) -> Result<u64> {
        let event = self.next_event(alloc.time_ns)?;
        let block = self.block_count;
        self.block_count += 1;
        self.blocks.push_back(PendingBlock {
            alloc,
            alloc_event: event,
            end: None,
        });
        self.events.push_back(PendingEvent::Alloc { block });
        self.live_bytes = self.live_bytes.saturating_add(alloc.size);
        if self.live_bytes > self.peak_live_bytes {
            self.peak_live_bytes = self.live_bytes;
            self.peak_event = event;
            self.peak_time_ns = alloc.time_ns;
        }
        self.most_held.0 = self.most_held.0.max(self.blocks.len());
        self.most_held.1 = self.most_held.1.max(self.events.len());
        Ok(block)
    }

    /// The free, at `time_ns`, of live block `block`.
    pub fn free(&mut self, block: u64, time_ns: u64) -> Result<()> {
        let index = block
            .checked_sub(self.blocks_written)
            .and_then(|i| usize::try_from(i).ok())
            .filter(|&i| self.blocks.get(i).is_some_and(|b| b.end.is_none()))
            .ok_or_else(|| {
                let event = self.event_count;
                invalid(
                    &self.dir,
                    format!("event {event}: block {block} is not live"),
                )
            })?;
        let event = self.next_event(time_ns)?;
        let pending = &mut self.blocks[index];
        pending.end = Some(BlockEnd {
            event,
            time_ns,
            flags: 0,
        });
        let alloc = pending.alloc;
        self.events.push_back(PendingEvent::Free {
            block,
            time_ns,
            alloc,
        });
        self.live_bytes = self.live_bytes.saturating_sub(alloc.size);
        self.frees += 1;
        self.write_complete()
    }

    /// The most block and event rows held at once so far (what the stream's memory held).
    pub fn most_held(&self) -> (usize, usize) {
        self.most_held
    }

    /// Writes the rows that are complete and have no earlier row waiting: the events first
    /// (an allocation's row reads its block's end, whose row goes after).
    fn write_complete(&mut self) -> Result<()> {
        while let Some(&front) = self.events.front() {
            let row = match front {
                PendingEvent::Alloc { block } => {
                    let pending = block
                        .checked_sub(self.blocks_written)
                        .and_then(|i| usize::try_from(i).ok())
                        .and_then(|i| self.blocks.get(i))
                        .ok_or_else(|| {
                            invalid(
                                &self.dir,
                                format!("block {block}: written before its event"),
                            )
                        })?;
                    let Some(end) = pending.end else { break };
                    let a = pending.alloc;
                    EventRow {
                        event: self.events_written,
                        time_ns: a.time_ns,
                        kind: EVENT_ALLOC,
                        block,
                        address: a.address,
                        size: a.size,
                        thread: a.thread,
                        site: a.site,
                        flags: end.flags,
                    }
                }
                // A free names the freeing thread when the input says (it does not here) and
                // the free site (unknown: 0); the freed block's flags lost `FLAG_NEVER_FREED`.
                PendingEvent::Free {
                    block,
                    time_ns,
                    alloc,
                } => EventRow {
                    event: self.events_written,
                    time_ns,
                    kind: EVENT_FREE,
                    block,
                    address: alloc.address,
                    size: alloc.size,
                    thread: alloc.thread,
                    site: 0,
                    flags: 0,
                },
            };
            self.push_event(&row)?;
            self.events.pop_front();
            self.events_written += 1;
        }
        while let Some(&PendingBlock {
            alloc: a,
            alloc_event,
            end: Some(end),
        }) = self.blocks.front()
        {
            let out = &mut self.block_rows;
            out.open_window(&self.dir, &self.host, a.time_ns / self.window)?;
            out.rows.push(
                &[
                    self.blocks_written,
                    a.address,
                    a.size,
                    a.size,
                    USABLE_UNKNOWN,
                    a.time_ns,
                    end.time_ns,
                    alloc_event,
                    end.event,
                ],
                &[a.thread, a.site, 0, 0, 0],
                &[end.flags],
            );
            out.pushed()?;
            self.blocks.pop_front();
            self.blocks_written += 1;
        }
        Ok(())
    }

    fn push_event(&mut self, row: &EventRow) -> Result<()> {
        let out = &mut self.event_rows;
        out.open_window(&self.dir, &self.host, row.time_ns / self.window)?;
        out.rows.push(
            &[row.event, row.time_ns, row.block, row.address, row.size],
            &[row.thread, row.site],
            &[row.kind, row.flags],
        );
        out.pushed()
    }

    /// Ends the blocks still live at the trace's end (as `TraceBuilder::finish` ends them),
    /// writes the rest of the rows, and the small tables and the manifest from `skeleton`: the
    /// trace's strings, call tree and threads (its blocks, counts and processes are the
    /// stream's: one process, whose figures are the trace's).
    pub fn finish(mut self, skeleton: Trace) -> Result<WriteSummary> {
        if self.event_count > 0 && self.last_time_ns != self.end_time_ns {
            return Err(invalid(
                &self.dir,
                format!(
                    "the last event came at {} ns, not at the declared end {} ns: the windows are cut wrong",
                    self.last_time_ns, self.end_time_ns
                ),
            ));
        }
        let (events, last) = (self.event_count, self.last_time_ns);
        for block in &mut self.blocks {
            if block.end.is_none() {
                block.end = Some(BlockEnd {
                    event: events,
                    time_ns: last,
                    flags: FLAG_NEVER_FREED,
                });
            }
        }
        self.write_complete()?;
        if !self.blocks.is_empty() || !self.events.is_empty() {
            return Err(invalid(&self.dir, "rows left unwritten at the trace's end"));
        }
        self.block_rows.close()?;
        self.event_rows.close()?;
        let meta = TraceMeta {
            has_wall_time: true,
            events,
            allocs: self.block_count,
            frees: self.frees,
            end_time_ns: last,
            peak_live_bytes: self.peak_live_bytes,
            peak_event: self.peak_event,
            peak_time_ns: self.peak_time_ns,
            end_live_bytes: self.live_bytes,
            ..skeleton.meta.clone()
        };
        let mut trace = skeleton;
        trace.processes = vec![Process::from_meta(&meta)];
        trace.meta = meta;
        let files = self.block_rows.files
            + self.event_rows.files
            + write_small_tables(&trace, &self.dir, &self.host)?;
        let meta =
            serde_json::to_value(&trace.meta).map_err(|e| invalid(&self.dir, e.to_string()))?;
        self.manifest.hosts.insert(
            self.host.clone(),
            HostEntry {
                window: self.window,
                window_origin: 0,
                rows: self.block_count,
                events,
                meta,
            },
        );
        self.manifest.write(&self.dir)?;
        Ok(WriteSummary {
            files,
            rows: self.block_count,
            events,
        })
    }
}

/// What [`write_synthetic_trace`] wrote, and the most rows it held at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntheticWritten {
    pub summary: WriteSummary,
    /// Block rows and event rows held at most, waiting for a block's free (the memory the
    /// stream needed).
    pub most_held: (usize, usize),
}

/// Writes `memscape_heap::synthetic::synthetic_trace(events)` into the dataset at `dir` as host
/// `options.host` as it is generated: the dataset that [`crate::write_trace`] writes for that
/// trace, without holding it (engine-bench's `write-trace`, up to 1 B events).
pub fn write_synthetic_trace(
    events: u64,
    dir: &Path,
    options: &TraceWriteOptions,
) -> Result<SyntheticWritten> {
    let skeleton = synthetic_skeleton();
    let stream = SyntheticEvents::new(&skeleton, events);
    let mut writer = TraceStreamWriter::create(dir, options, SyntheticEvents::end_time_ns(events))?;
    for e in stream {
        match e.op {
            SyntheticOp::Alloc { size, thread, site } => {
                writer.alloc(StreamedAlloc {
                    time_ns: e.time_ns,
                    address: e.address,
                    size,
                    thread,
                    site,
                })?;
            }
            SyntheticOp::Free { block } => writer.free(block, e.time_ns)?,
        }
    }
    let most_held = writer.most_held();
    // The skeleton's strings, call tree and threads, as the in-memory trace has them.
    let skeleton = skeleton.builder.finish(TraceFormat::Csv, true);
    let summary = writer.finish(skeleton)?;
    Ok(SyntheticWritten { summary, most_held })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use memscape_trace::TraceBuilder;

    use super::*;
    use crate::Manifest;

    fn options() -> TraceWriteOptions {
        TraceWriteOptions {
            host: String::from("h"),
            windows: 4,
        }
    }

    fn skeleton() -> Trace {
        TraceBuilder::with_event_times("stream").finish(TraceFormat::Csv, true)
    }

    fn alloc(time_ns: u64) -> StreamedAlloc {
        StreamedAlloc {
            time_ns,
            address: 0x1000 * time_ns,
            size: 16,
            thread: 0,
            site: 0,
        }
    }

    /// A block freed twice, a block never allocated, times going back and an end other than
    /// the declared one are refused: the dataset would not be `write_trace`'s.
    #[test]
    fn a_stream_that_no_trace_gives_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = TraceStreamWriter::create(dir.path(), &options(), 100).unwrap();
        let a = w.alloc(alloc(10)).unwrap();
        w.free(a, 20).unwrap();
        assert!(w.free(a, 30).is_err(), "freed twice");
        assert!(w.free(7, 30).is_err(), "never allocated");
        assert!(w.alloc(alloc(5)).is_err(), "earlier than the last event");
        assert!(w.alloc(alloc(101)).is_err(), "past the declared end");
        assert!(w.finish(skeleton()).is_err(), "ended at 20 ns, not 100");

        let mut w = TraceStreamWriter::create(dir.path(), &options(), 100).unwrap();
        w.alloc(alloc(10)).unwrap();
        w.alloc(alloc(100)).unwrap();
        let summary = w.finish(skeleton()).unwrap();
        assert_eq!((summary.rows, summary.events), (2, 2));
    }
    /// Every Parquet file under `dir`, relative to it, sorted.
    fn files(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "parquet") {
                    out.push(path.strip_prefix(dir).unwrap().to_path_buf());
                }
            }
        }
        out.sort();
        out
    }

    /// The streamed dataset holds the same files, rows (in the same order, in the same row
    /// groups) and manifest as `write_trace` of the trace in memory: no events (no block or event
    /// files), a few (every block live at the end), and past the 200,000 slots (frees, blocks
    /// live across windows, blocks never freed), cut into 16 and 3 windows.
    #[test]
    fn the_streamed_synthetic_dataset_equals_the_trace_written_whole() {
        for (events, windows) in [(0, 16), (5, 16), (450_000, 16), (450_000, 3)] {
            let options = TraceWriteOptions {
                host: String::from("bench"),
                windows,
            };
            let whole = tempfile::tempdir().unwrap();
            let streamed = tempfile::tempdir().unwrap();
            let trace = memscape_heap::synthetic::synthetic_trace(events);
            let expected = crate::write_trace(&trace, whole.path(), &options).unwrap();
            let written = write_synthetic_trace(events, streamed.path(), &options).unwrap();
            assert_eq!(written.summary, expected, "{events} events");
            assert_eq!(
                Manifest::read(streamed.path()).unwrap(),
                Manifest::read(whole.path()).unwrap(),
                "{events} events: the manifests"
            );
            let names = files(whole.path());
            assert_eq!(files(streamed.path()), names, "{events} events: the files");
            for name in &names {
                let read = |dir: &Path| schema::read_file(&dir.join(name)).unwrap();
                assert!(
                    read(streamed.path()) == read(whole.path()),
                    "{events} events, {windows} windows: {} differs",
                    name.display()
                );
            }
        }
    }
}
