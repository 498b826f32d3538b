//! The live view of a recording in progress: what a [`memscape_record::Follower`] has read,
//! snapshotted into datasets on the thread that reads the recording and handed to the GUI
//! through a channel of one. When the GUI has not yet taken the last snapshot the next one is
//! not made (the viewer skips ahead); the recorded program never waits for any of it, since the
//! shim writes into file mappings that nobody locks.
//!
//! Two ways in: `memscape record --live` calls [`LiveSender::offer`] from its own reading
//! thread ([`memscape_record::record_observed`]) and [`LiveSender::finish`] with the file it
//! wrote; `memscape view --live` starts [`follow`] on a recording started elsewhere. Either
//! way the last update is the finished file loaded as opening it would load it, so that the
//! view ends identical to the file's.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use crossbeam_channel::{Receiver, Sender, TrySendError};
use memscape_record::Follower;

use crate::dataset::{AllocTraceData, Dataset, DatasetContent, LoadSource};

/// What a live recording sends the GUI.
pub enum LiveUpdate {
    /// What the recording holds so far (every process image cut at its sequence watermark).
    Snapshot {
        dataset: Arc<Dataset>,
        /// Events in the snapshot, and how many snapshots were sent before it.
        events: u64,
        number: u64,
        /// What making it cost: call-tree nodes symbolized for it (only those added since the
        /// last snapshot) and addresses looked up, and the time on the reading thread.
        stats: SnapshotStats,
    },
    /// The recording ended: the finished file loaded as opening it loads it, or why not.
    Finished(Result<Arc<Dataset>, String>),
}

/// What making one snapshot cost (see [`snapshot_dataset`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SnapshotStats {
    /// Call-tree nodes symbolized for this snapshot (the nodes added since the last one).
    pub nodes_symbolized: u64,
    /// Addresses looked up in the modules' symbols for it.
    pub lookups: u64,
    /// Call-tree nodes of the snapshot.
    pub nodes: u64,
    /// Milliseconds: the merge's copy-out with the symbolization of the new nodes, then the
    /// allocation-map scene.
    pub snapshot_ms: f64,
    pub scene_ms: f64,
}

/// How often a followed recording is read.
pub const POLL_EVERY: Duration = Duration::from_millis(200);

/// Most bytes of a shim file `follow` reads at once (about 230,000 events), as `record` does.
const READ_BUDGET: usize = 2 << 20;

/// The sending half, owned by the thread that reads the recording.
pub struct LiveSender {
    tx: Sender<LiveUpdate>,
    /// The dataset name of every update (the finished file's, so that titles do not change).
    name: String,
    last_events: u64,
    sent: u64,
    /// Each module's symbols, read once for all snapshots.
    symbolizer: memscape_trace::symbolize::Symbolizer,
    /// The last snapshot's occupancy sweep and call-site classification, continued by the
    /// next (only new events swept, only new call-tree nodes classified).
    scene: crate::alloc_map::scene::SceneCarry,
    /// Gone when the GUI dropped its [`LiveReceiver`].
    alive: std::sync::Weak<()>,
    pace: Arc<Pace>,
    /// New events after which, while waiting for the GUI, the occupancy is swept ahead.
    sweep_ahead_every: u64,
    /// The finished recording's dataset being made ([`LiveSender::prepare_finished`]).
    finishing: Option<std::thread::JoinHandle<Dataset>>,
}

/// How the GUI paces the snapshots ([`LiveReceiver::pace_by_shown`]).
#[derive(Debug)]
struct Pace {
    /// Snapshots the GUI has shown ([`NOT_PACED`] while it does not pace them).
    shown: AtomicU64,
    /// The reading thread, when it waits for the GUI to show the last snapshot: woken then,
    /// so that the next is made at once rather than at its next poll.
    waiting: std::sync::Mutex<Option<std::thread::Thread>>,
    /// The window to wake when an update is sent ([`LiveReceiver::wake`]): it then need not
    /// poll the channel with frames, which on a software rasterizer cost the CPU that the
    /// recording and the views' preparation need.
    window: std::sync::OnceLock<egui::Context>,
}

impl Pace {
    fn wake_window(&self) {
        if let Some(ctx) = self.window.get() {
            // One frame (an immediate request is two on egui): it hands the snapshot over.
            crate::wake(ctx);
        }
    }
}

/// New events after which a sender waiting for the GUI sweeps them ahead
/// ([`LiveSender::offer`]).
const SWEEP_AHEAD_EVENTS: u64 = 250_000;

/// Snapshots of fewer events than this are made while the GUI still swaps in the last one
/// ([`LiveReceiver::pace_by_shown`]): the next is then ready as soon as the panes show the last,
/// instead of a scene and a frame later, for a third snapshot's memory (tens of MB here).
const AHEAD_BELOW_EVENTS: u64 = 1_000_000;

/// [`Pace::shown`] while the receiver does not pace the snapshots by what it shows.
const NOT_PACED: u64 = u64::MAX;

/// The receiving half, owned by the GUI.
#[derive(Debug)]
pub struct LiveReceiver {
    pub rx: Receiver<LiveUpdate>,
    /// What the recording is called (its output file).
    pub name: String,
    _alive: Arc<()>,
    pace: Arc<Pace>,
}

impl LiveReceiver {
    /// From now on the next snapshot is made only once the GUI says it shows the last one
    /// ([`LiveReceiver::shown`]), not as soon as it took it: at most two snapshots are alive
    /// at once (the one shown and the next, being made or swapped in), instead of three (the
    /// one shown, the one the panes prepare, the one the reading thread makes meanwhile).
    pub fn pace_by_shown(&self) {
        self.pace.shown.store(0, Ordering::Release);
    }

    /// Wakes `ctx`'s window (a repaint) whenever an update is sent, so that the window need
    /// not repaint to poll for them.
    pub fn wake(&self, ctx: &egui::Context) {
        let _ = self.pace.window.set(ctx.clone());
    }

    /// Every view shows snapshot `number` (see [`LiveReceiver::pace_by_shown`]): wakes the
    /// reading thread if it waits for that.
    pub fn shown(&self, number: u64) {
        self.pace.shown.fetch_max(number + 1, Ordering::AcqRel);
        let waiting = self
            .pace
            .waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(thread) = waiting {
            thread.unpark();
        }
    }
}

/// A live channel for the recording that will be named `name` (its output file).
pub fn channel(name: &str) -> (LiveSender, LiveReceiver) {
    // One: a snapshot waiting to be taken is the newest there is.
    let (tx, rx) = crossbeam_channel::bounded(1);
    let alive = Arc::new(());
    let pace = Arc::new(Pace {
        shown: AtomicU64::new(NOT_PACED),
        waiting: std::sync::Mutex::new(None),
        window: std::sync::OnceLock::new(),
    });
    (
        LiveSender {
            tx,
            name: name.to_owned(),
            last_events: 0,
            sent: 0,
            symbolizer: memscape_trace::symbolize::Symbolizer::new(),
            scene: Default::default(),
            alive: Arc::downgrade(&alive),
            pace: pace.clone(),
            sweep_ahead_every: SWEEP_AHEAD_EVENTS,
            finishing: None,
        },
        LiveReceiver {
            rx,
            name: name.to_owned(),
            _alive: alive,
            pace,
        },
    )
}

impl LiveSender {
    /// Snapshots what `follower` has read and sends it, when the GUI took the last snapshot and
    /// there is something new. Returns whether a snapshot was sent.
    pub fn offer(&mut self, follower: &Follower) -> bool {
        if self.tx.is_full() || !self.connected() {
            return false;
        }
        if self.waits_for_the_gui() {
            // The GUI still swaps in the last one: the next waits (bounded memory), and the
            // occupancy sweep goes on meanwhile.
            self.sweep_ahead(follower);
            return false;
        }
        let events = follower.summary().events;
        if events == 0 || events == self.last_events {
            return false;
        }
        let started = Instant::now();
        let (trace, report) = follower.snapshot_symbolized(&self.name, &mut self.symbolizer);
        // The merge applies events a margin behind what was read: nothing new for the views
        // yet (the scene, the costly part, is not made).
        if trace.meta.events == self.last_events && self.sent > 0 {
            return false;
        }
        let (dataset, stats) = dataset_of(trace, &report, &self.name, started, &mut self.scene);
        let events = dataset.alloc_trace().map_or(0, |t| t.trace.meta.events);
        let update = LiveUpdate::Snapshot {
            dataset: Arc::new(dataset),
            events,
            number: self.sent,
            stats,
        };
        match self.tx.try_send(update) {
            Ok(()) => {
                self.last_events = events;
                self.sent += 1;
                self.pace.wake_window();
                true
            }
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => false,
        }
    }

    /// While the GUI swaps in the last snapshot: sweeps the occupancy of what was read since
    /// (once [`SWEEP_AHEAD_EVENTS`] have piled up, or as set by
    /// [`LiveSender::sweep_ahead_every`]), so that the next snapshot's scene, made
    /// when the GUI shows the last, has little left to sweep. The trace used is dropped.
    fn sweep_ahead(&mut self, follower: &Follower) {
        let done = self.scene.sweep.as_ref().map_or(0, |s| s.events());
        let every = self.sweep_ahead_every;
        if self.sent == 0 || follower.summary().events < done + every {
            return;
        }
        let started = Instant::now();
        let trace = follower.snapshot(&self.name);
        if !trace.has_addresses() || trace.meta.events < done + every {
            return;
        }
        crate::alloc_map::scene::AllocScene::sweep_ahead(&trace, &mut self.scene);
        tracing::debug!(
            target: "memscape::live",
            from = done,
            to = trace.meta.events,
            ms = started.elapsed().as_secs_f64() * 1e3,
            "occupancy swept ahead while the GUI swaps in the last snapshot"
        );
    }

    /// Whether the GUI paces the snapshots and has not shown the last one yet; if so, this
    /// thread is woken when it has ([`LiveReceiver::shown`]).
    fn waits_for_the_gui(&self) -> bool {
        let mut waiting = self.pace.waiting.lock().unwrap_or_else(|e| e.into_inner());
        let shown = self.pace.shown.load(Ordering::Acquire);
        // Small snapshots are made one ahead: the next is ready when the panes show the last
        // (three alive at most); big ones only once the last is shown (two).
        let ahead = u64::from(self.last_events < AHEAD_BELOW_EVENTS);
        let waits = shown != NOT_PACED && shown + ahead < self.sent;
        *waiting = waits.then(std::thread::current);
        waits
    }

    /// Sweeps ahead (see [`LiveSender::offer`]) once `events` new events have piled up instead
    /// of [`SWEEP_AHEAD_EVENTS`].
    pub fn sweep_ahead_every(&mut self, events: u64) {
        self.sweep_ahead_every = events.max(1);
    }

    /// Whether the GUI still listens.
    pub fn connected(&self) -> bool {
        self.alive.strong_count() > 0
    }

    /// Snapshots sent so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// The recording ended and wrote `output`: sends its last dataset, the one
    /// [`LiveSender::prepare_finished`] made if it was called, else `output` loaded (waiting
    /// for the GUI to take the last snapshot; not at all when the GUI has closed).
    pub fn finish(mut self, output: &Path) {
        let started = Instant::now();
        let prepared = self.finishing.take().and_then(|h| h.join().ok());
        let from_memory = prepared.is_some();
        let finished = match prepared {
            Some(dataset) => Ok(dataset),
            None => crate::dataset::load(&LoadSource::File(output.to_owned()), &|_, _| {})
                .map(|mut d| {
                    d.name.clone_from(&self.name);
                    d
                })
                .map_err(|e| format!("{e}")),
        };
        tracing::debug!(
            target: "memscape::live",
            from_memory,
            ms = started.elapsed().as_secs_f64() * 1e3,
            "the finished recording's dataset ready"
        );
        let _ = self.tx.send(LiveUpdate::Finished(finished.map(Arc::new)));
        self.pace.wake_window();
    }

    /// The recording's whole trace as its file `output` will load
    /// (`memscape_record::record_observed_whole`, while the file is being finished): its
    /// dataset is made on a thread of its own, as opening `output` makes it
    /// (`dataset::load`), and [`LiveSender::finish`] sends it instead of reading the file
    /// back.
    pub fn prepare_finished(&mut self, whole: Arc<memscape_trace::Trace>, output: &Path) {
        let (name, output) = (self.name.clone(), output.to_owned());
        let made = std::thread::Builder::new()
            .name("live-finished".into())
            .spawn(move || {
                let started = Instant::now();
                let dataset = crate::dataset::msc_dataset(name, whole, output);
                tracing::debug!(
                    target: "memscape::live",
                    ms = started.elapsed().as_secs_f64() * 1e3,
                    "the finished recording's dataset made from its trace"
                );
                dataset
            });
        // (Without a thread, `finish` reads the file.)
        self.finishing = made.ok();
    }

    /// The recording read its last events (`record_observed`'s last call, `ended`): hands
    /// `follower` the symbolizer that named the snapshots' call trees, to name the nodes the
    /// end adds (the modules' symbols are then not read again).
    pub fn ended(&mut self, follower: &Follower) {
        let symbolizer = std::mem::replace(
            &mut self.symbolizer,
            memscape_trace::symbolize::Symbolizer::new(),
        );
        follower.symbolize_the_rest_with(symbolizer);
    }

    /// The recording failed or ended without a file: `last` is the final state (all gaps
    /// closed) when there is one.
    pub fn fail(self, last: Option<&Follower>, why: String) {
        let result = match last {
            Some(f) if f.summary().events > 0 => {
                let mut symbolizer = self.symbolizer;
                Ok(Arc::new(snapshot_dataset(f, &self.name, &mut symbolizer).0))
            }
            _ => Err(why),
        };
        let _ = self.tx.send(LiveUpdate::Finished(result));
        self.pace.wake_window();
    }
}

/// The dataset of what `follower` has read, symbolized as the finished file will be: a
/// consuming follower's call tree is symbolized in its merge, each node once for all snapshots
/// (`Follower::snapshot_symbolized`).
pub fn snapshot_dataset(
    follower: &Follower,
    name: &str,
    symbolizer: &mut memscape_trace::symbolize::Symbolizer,
) -> (Dataset, SnapshotStats) {
    let started = Instant::now();
    let (trace, report) = follower.snapshot_symbolized(name, symbolizer);
    dataset_of(trace, &report, name, started, &mut Default::default())
}

/// The dataset of a snapshot made (and symbolized, `report`) since `started`; its scene
/// continues `carry` (the previous snapshot's), replaced by its own.
fn dataset_of(
    trace: memscape_trace::Trace,
    report: &memscape_trace::symbolize::SymbolizeReport,
    name: &str,
    started: Instant,
    carry: &mut crate::alloc_map::scene::SceneCarry,
) -> (Dataset, SnapshotStats) {
    let made = started.elapsed();
    let nodes = trace.call_tree.len() as u64;
    let data = AllocTraceData::continued(trace, carry);
    let content = DatasetContent::AllocTrace(Box::new(data));
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let stats = SnapshotStats {
        nodes_symbolized: report.nodes,
        lookups: report.lookups,
        nodes,
        snapshot_ms: ms(made),
        scene_ms: ms(started.elapsed() - made),
    };
    tracing::debug!(
        target: "memscape::live",
        snapshot_and_symbolize_ms = stats.snapshot_ms,
        scene_ms = stats.scene_ms,
        nodes,
        nodes_symbolized = report.nodes,
        lookups = report.lookups,
        "snapshot made"
    );
    let dataset = Dataset {
        name: name.to_owned(),
        content,
        links: Default::default(),
    };
    (dataset, stats)
}

/// What the user chose on a live recording's last dataset, kept on the one replacing it (the
/// next snapshot, or the finished file): the time cursor, the highlighted blocks and the
/// picked block. Blocks are found again as the n-th allocation of their size at their address
/// in their process (a later snapshot may number blocks differently as processes interleave,
/// and its times may move by a nanosecond as its clock is fitted again).
pub fn carry_links(from: &Dataset, to: &Dataset) {
    let state = from.links.get();
    // A time the heap tree placed by itself (its peak) is not carried: the next snapshot's
    // own default follows the recording; one the user chose stays.
    if let Some(events) = state.time_events.filter(|_| state.time_chosen) {
        to.links.set_time(events);
    }
    let (Some(old), Some(new)) = (from.alloc_trace(), to.alloc_trace()) else {
        return;
    };
    if state.highlight.is_none() && state.picked_block.is_none() {
        return;
    }
    // A consuming follower's snapshots, and the file written from the same merge, keep every
    // block at its index: when the chosen blocks are the same at their indices, they are
    // carried as they are (work in the blocks chosen, not in all blocks).
    let (a, b) = (&old.trace.blocks, &new.trace.blocks);
    let same_at = |i: u32| {
        let i = i as usize;
        i < a.len()
            && i < b.len()
            && (a.process[i], a.address[i], a.size[i], a.alloc_event[i])
                == (b.process[i], b.address[i], b.size[i], b.alloc_event[i])
    };
    let highlight: &[u32] = state.highlight.as_deref().map_or(&[], |h| h.as_slice());
    if highlight.iter().all(|&i| same_at(i)) && state.picked_block.is_none_or(same_at) {
        if state.highlight.is_some() {
            to.links
                .set_highlight(highlight.to_vec(), state.highlight_label);
        }
        if let Some(i) = state.picked_block {
            to.links.pick_block(i);
        }
        return;
    }
    let (old_keys, new_keys) = (block_keys(&old.trace), block_keys(&new.trace));
    let wanted: std::collections::HashSet<&BlockKey> = state
        .highlight
        .iter()
        .flat_map(|h| h.iter())
        .filter_map(|&i| old_keys.get(i as usize))
        .collect();
    let picked = state.picked_block.and_then(|i| old_keys.get(i as usize));
    let highlight = (0..new_keys.len() as u32)
        .filter(|&i| wanted.contains(&new_keys[i as usize]))
        .collect();
    if state.highlight.is_some() {
        to.links.set_highlight(highlight, state.highlight_label);
    }
    if let Some(i) = picked.and_then(|k| new_keys.iter().position(|n| n == k)) {
        to.links.pick_block(i as u32);
    }
}

/// A block as the same in two snapshots: process, address, size, and how many blocks of that
/// process, address and size were allocated before it.
type BlockKey = (u32, u64, u64, u32);

fn block_keys(trace: &memscape_trace::Trace) -> Vec<BlockKey> {
    let b = &trace.blocks;
    let mut seen: std::collections::HashMap<(u32, u64, u64), u32> = Default::default();
    (0..b.len())
        .map(|i| {
            let at = (b.process[i], b.address[i], b.size[i]);
            let n = seen.entry(at).or_default();
            *n += 1;
            (at.0, at.1, at.2, *n - 1)
        })
        .collect()
}

/// The raw directory of the recording writing `file`: the newest `memscape record` private
/// directory beside it.
fn raw_dir_beside(file: &Path) -> Option<PathBuf> {
    let parent = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::read_dir(parent)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(memscape_record::RAW_DIR_PREFIX)
                && e.file_type().is_ok_and(|t| t.is_dir())
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max()
        .map(|(_, p)| p)
}

/// The newest `.msc` file of `dir` written since `since` (what a recording whose raw directory
/// was there wrote when it ended).
fn newest_msc(dir: &Path, since: SystemTime) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "msc"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .filter(|(t, _)| *t >= since)
        .max()
        .map(|(_, p)| p)
}

/// Follows a recording started elsewhere (`memscape view --live`) on a thread of its own:
/// `target` is a `memscape record` raw directory (kept by a failed run, or a running one's),
/// or the `.msc` file a `memscape record -o FILE` is writing, whose private raw directory
/// beside it is found and followed (waited for, while neither it nor the file exists). Ends
/// when the recording does (its raw directory is removed once the file is written), sending
/// the finished file; a file with no recording beside it is sent as it is. The thread stops
/// early when the receiver is dropped.
pub fn follow(target: PathBuf) -> std::io::Result<LiveReceiver> {
    let name = target.display().to_string();
    let (mut sender, rx) = channel(&name);
    std::thread::Builder::new()
        .name("memscape-live".into())
        .spawn(move || {
            let started = SystemTime::now() - Duration::from_secs(1);
            let (dir, file) = if target.is_dir() {
                (target.clone(), None)
            } else {
                // The recording may not have started yet: wait for its raw directory, or
                // for the file (a recording that already ended, or none at all).
                loop {
                    if let Some(dir) = raw_dir_beside(&target) {
                        break (dir, Some(target.clone()));
                    }
                    if target.is_file() {
                        sender.finish(&target);
                        return;
                    }
                    if !sender.connected() {
                        return;
                    }
                    std::thread::sleep(POLL_EVERY);
                }
            };
            tracing::info!(target: "memscape::live", "following {}", dir.display());
            // Keeps the trace so far, not the events read, and reads a bounded amount at a
            // time (reading on at once while behind).
            let mut follower = Follower::consuming(&dir, &name).with_budget(READ_BUDGET);
            let mut next = Instant::now();
            loop {
                if !dir.is_dir() {
                    // The recording wrote its file and removed its raw directory.
                    let written = file
                        .clone()
                        .or_else(|| newest_msc(dir.parent().unwrap_or(Path::new(".")), started));
                    match written {
                        Some(f) if f.is_file() => sender.finish(&f),
                        _ => {
                            let why = format!("{}: the recording ended", dir.display());
                            sender.fail(Some(&follower), why);
                        }
                    }
                    return;
                }
                if let Err(e) = follower.poll() {
                    if dir.is_dir() {
                        while follower.poll_to_end().is_ok() && !follower.caught_up() {}
                        sender.fail(Some(&follower), e.to_string());
                        return;
                    }
                    continue;
                }
                sender.offer(&follower);
                if !sender.connected() {
                    return;
                }
                if !follower.caught_up() {
                    continue;
                }
                next += POLL_EVERY;
                // Parked: the GUI wakes it once it shows the last snapshot.
                std::thread::park_timeout(next.saturating_duration_since(Instant::now()));
                next = next.max(Instant::now());
            }
        })?;
    Ok(rx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_snapshots_are_made_one_ahead_big_ones_once_the_last_is_shown() {
        let (mut sender, receiver) = channel("t.msc");
        // Not paced: never waits.
        sender.sent = 5;
        assert!(!sender.waits_for_the_gui());
        receiver.pace_by_shown();
        // Snapshot 0 sent, not shown: the next (small) is made meanwhile; a third is not.
        sender.sent = 1;
        sender.last_events = 1_000;
        assert!(!sender.waits_for_the_gui());
        sender.sent = 2;
        assert!(sender.waits_for_the_gui());
        receiver.shown(0);
        assert!(!sender.waits_for_the_gui());
        // Big snapshots: the next only once the last is shown (two alive at most).
        sender.last_events = AHEAD_BELOW_EVENTS;
        assert!(sender.waits_for_the_gui());
        receiver.shown(1);
        assert!(!sender.waits_for_the_gui());
    }

    #[test]
    fn an_update_sent_wakes_the_window() {
        let (sender, receiver) = channel("t.msc");
        let ctx = egui::Context::default();
        let woken = Arc::new(AtomicU64::new(0));
        let counter = woken.clone();
        ctx.set_request_repaint_callback(move |_| {
            counter.fetch_add(1, Ordering::Relaxed);
        });
        receiver.wake(&ctx);
        sender.fail(None, "the recording ended".into());
        assert!(woken.load(Ordering::Relaxed) >= 1, "not woken");
        assert!(matches!(
            receiver.rx.try_recv(),
            Ok(LiveUpdate::Finished(Err(_)))
        ));
    }
}
