//! The files open in the GUI and what happens to them on disk.
//!
//! Each file has a state (loading, loaded, failed), the size and modification time it was read
//! at, and whatever changed since: a [`Watcher`] thread stats the open files on a timer (off
//! the UI thread) and reports changes. What the shell does with them ([`OpenFiles::poll`]):
//!
//! * the file **grew** (a trace still being written): it is reloaded, at most every
//!   [`FOLLOW_INTERVAL`], while "follow" is on (the default), like `tail -f` or lnav; the old
//!   data stays on screen until the new one has loaded;
//! * it **shrank**, was **rewritten** or **replaced**, or **vanished**: the pane keeps the data
//!   as loaded and offers a reload (as editors do for a changed file): another run overwriting
//!   the file is not more of the same data, and the user may still be looking at the old one;
//! * a reload that fails keeps the old data and shows the error; a file that failed to load
//!   is retried when it grows (a trace whose first bytes were not written yet) or on request.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use crossbeam_channel::{Receiver, Sender};

use memscape_views::{Dataset, LoadSource};

use super::loader::{LoadId, Loader};

/// Identifies one open file (stable across reloads).
pub type FileId = u64;

/// How often the watcher stats the open files.
pub const WATCH_INTERVAL: Duration = Duration::from_millis(1000);

/// The shortest time between two reloads of a growing file.
pub const FOLLOW_INTERVAL: Duration = Duration::from_secs(2);

/// What identifies a file's content on disk, cheaply: its size, modification time and inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub len: u64,
    pub modified: Option<SystemTime>,
    /// The inode (0 where there is none): another one means the file was replaced (renamed
    /// over, deleted and written again).
    pub inode: u64,
    file: bool,
}

impl Stamp {
    pub fn of(path: &Path) -> std::io::Result<Self> {
        let m = std::fs::metadata(path)?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&m);
        #[cfg(not(unix))]
        let inode = 0;
        Ok(Self {
            len: m.len(),
            modified: m.modified().ok(),
            inode,
            file: m.is_file(),
        })
    }

    /// A regular file (directories, such as Parquet datasets, are not watched).
    pub fn is_file(&self) -> bool {
        self.file
    }
}

/// How a file differs on disk from what was loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiskChange {
    /// The same file, longer: appended to.
    Grew { from: u64, to: u64 },
    /// The same file, shorter: truncated.
    Shrank { from: u64, to: u64 },
    /// The same size and another modification time, or another file under the same name.
    Rewritten { from: u64, to: u64 },
    /// It cannot be read any more (deleted, permissions).
    Vanished(String),
}

impl DiskChange {
    /// How the change is shown above the file's panes.
    pub fn describe(&self) -> String {
        let size = memscape_views::heap_tree::draw::human_bytes;
        match self {
            DiskChange::Grew { from, to } => {
                format!("the file grew from {} to {}", size(*from), size(*to))
            }
            DiskChange::Shrank { from, to } => format!(
                "the file was truncated from {} to {}",
                size(*from),
                size(*to)
            ),
            DiskChange::Rewritten { from, to } if from == to => {
                "the file was rewritten on disk".to_owned()
            }
            DiskChange::Rewritten { from, to } => format!(
                "the file was replaced on disk ({} → {})",
                size(*from),
                size(*to)
            ),
            DiskChange::Vanished(e) => format!("the file cannot be read any more ({e})"),
        }
    }
}

/// How `now` differs from `loaded`, if it does.
pub fn classify(loaded: Stamp, now: &Result<Stamp, String>) -> Option<DiskChange> {
    let now = match now {
        Ok(now) => *now,
        Err(e) => return Some(DiskChange::Vanished(e.clone())),
    };
    let (from, to) = (loaded.len, now.len);
    if now.inode != loaded.inode {
        return Some(DiskChange::Rewritten { from, to });
    }
    if to > from {
        Some(DiskChange::Grew { from, to })
    } else if to < from {
        Some(DiskChange::Shrank { from, to })
    } else if now.modified != loaded.modified {
        Some(DiskChange::Rewritten { from, to })
    } else {
        None
    }
}

/// What the watcher keeps per file: its path and what it last saw.
type Watched = HashMap<FileId, (PathBuf, Result<Stamp, String>)>;

/// A thread that stats the watched files every `interval` and reports each new observation.
pub struct Watcher {
    watched: Arc<Mutex<Watched>>,
    rx: Receiver<(FileId, Result<Stamp, String>)>,
    stop: Arc<AtomicBool>,
}

impl Watcher {
    /// Starts the thread; `wake` is called after it reports (the UI's repaint).
    pub fn start(interval: Duration, wake: impl Fn() + Send + 'static) -> Self {
        let watched: Arc<Mutex<Watched>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        // Bounded: a UI that does not drain it loses observations, never blocks the thread
        // (the next observation of the same file supersedes them).
        let (tx, rx) = crossbeam_channel::bounded(64);
        let (w, s) = (watched.clone(), stop.clone());
        let spawned = std::thread::Builder::new()
            .name("memscape-watch".into())
            .spawn(move || watch_loop(&w, &s, &tx, interval, &wake));
        if let Err(e) = spawned {
            tracing::warn!("cannot start the file watcher ({e}): changes on disk go unnoticed");
        }
        Self { watched, rx, stop }
    }

    /// Watches `path`, loaded at `stamp`.
    pub fn watch(&self, id: FileId, path: PathBuf, stamp: Stamp) {
        if let Ok(mut w) = self.watched.lock() {
            w.insert(id, (path, Ok(stamp)));
        }
    }

    pub fn unwatch(&self, id: FileId) {
        if let Ok(mut w) = self.watched.lock() {
            w.remove(&id);
        }
    }

    /// The observations since the last call.
    pub fn poll(&self) -> Vec<(FileId, Result<Stamp, String>)> {
        self.rx.try_iter().collect()
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn watch_loop(
    watched: &Mutex<Watched>,
    stop: &AtomicBool,
    tx: &Sender<(FileId, Result<Stamp, String>)>,
    interval: Duration,
    wake: &dyn Fn(),
) {
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(interval);
        // Stat outside the lock: a slow file system must not hold up the UI's `watch`.
        let files: Vec<(FileId, PathBuf, Result<Stamp, String>)> = match watched.lock() {
            Ok(w) => w
                .iter()
                .map(|(id, (p, s))| (*id, p.clone(), s.clone()))
                .collect(),
            Err(_) => return,
        };
        let mut reported = false;
        for (id, path, last) in files {
            let now = Stamp::of(&path).map_err(|e| e.to_string());
            if now == last {
                continue;
            }
            if let Ok(mut w) = watched.lock()
                && let Some(entry) = w.get_mut(&id)
            {
                entry.1 = now.clone();
            }
            reported |= tx.try_send((id, now)).is_ok();
        }
        if reported {
            wake();
        }
    }
}

/// Where an open file stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Loading,
    Loaded,
    Failed(String),
}

pub struct OpenFile {
    pub id: FileId,
    pub source: LoadSource,
    pub name: String,
    pub status: Status,
    /// The data as last loaded (kept while a reload runs and when it fails).
    pub dataset: Option<Arc<Dataset>>,
    /// Size and time of the file as last read.
    pub stamp: Option<Stamp>,
    /// What changed on disk since.
    pub change: Option<DiskChange>,
    /// The error of the last reload, when it failed (the old data stays).
    pub reload_error: Option<String>,
    /// Reload automatically when the file grows.
    pub follow: bool,
    /// Growth-triggered reloads so far.
    pub follows: u32,
    /// A recording in progress (`--live`): its data comes from the recording's snapshots, not
    /// from the loader, and it is neither reloaded nor watched until it has finished.
    pub live: bool,
    /// A big trace's first blocks, shown while its first load reads the whole
    /// (`loader::Partial`); dropped when the whole is in.
    pub first_part: Option<Arc<Dataset>>,
    /// Dropped once the panes have drawn a frame on `first_part` (at the next poll after
    /// [`OpenFiles::first_part_shown`]): the loader then reads the whole.
    first_part_shown: Option<Sender<()>>,
    first_part_open: bool,
    loading: Option<LoadId>,
    load_started: Option<Instant>,
}

impl OpenFile {
    pub fn is_reloading(&self) -> bool {
        self.loading.is_some() && self.status != Status::Loading
    }
}

/// What [`OpenFiles::poll`] tells the shell to do with the panes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileEvent {
    /// First loaded: open its views.
    Opened(FileId),
    /// A big trace's first blocks are in (`OpenFile::first_part`) while the whole is read:
    /// open its views on them.
    OpenedInPart(FileId),
    /// Loading failed (first load, or a retry of a failed file): show the error in its pane.
    Failed(FileId),
    /// New data after a reload (or a retry that now succeeds): replace its views' data.
    Reloaded(FileId),
    /// A reload failed; the old data stays, with the error above it.
    ReloadFailed(FileId),
    /// The file changed on disk (or its change was superseded): redraw its bars.
    Changed(FileId),
}

pub struct OpenFiles {
    pub files: Vec<OpenFile>,
    pub loader: Loader,
    watcher: Watcher,
    next_id: FileId,
    follow_interval: Duration,
}

impl OpenFiles {
    /// `wake` is called from the watcher's thread when a file changed on disk. The watcher
    /// stats every `watch_interval`; a growing file reloads at most every `follow_interval`.
    pub fn new(
        watch_interval: Duration,
        follow_interval: Duration,
        wake: impl Fn() + Send + 'static,
    ) -> Self {
        Self {
            files: Vec::new(),
            loader: Loader::new(),
            watcher: Watcher::start(watch_interval, wake),
            next_id: 1,
            follow_interval,
        }
    }

    pub fn get(&self, id: FileId) -> Option<&OpenFile> {
        self.files.iter().find(|f| f.id == id)
    }

    fn get_mut(&mut self, id: FileId) -> Option<&mut OpenFile> {
        self.files.iter_mut().find(|f| f.id == id)
    }

    /// Starts loading `source`; `repaint` wakes the UI when the loader reports.
    pub fn open(
        &mut self,
        source: LoadSource,
        repaint: impl Fn() + Send + Sync + 'static,
    ) -> FileId {
        let load = self.loader.start(source.clone(), repaint);
        self.add(source, Some(load), false)
    }

    /// A new open file, loading (by the loader when `loading`, else by a live recording).
    fn add(&mut self, source: LoadSource, loading: Option<LoadId>, live: bool) -> FileId {
        let id = self.next_id;
        self.next_id += 1;
        self.files.push(OpenFile {
            id,
            name: source.display_name(),
            source,
            status: Status::Loading,
            dataset: None,
            stamp: None,
            change: None,
            reload_error: None,
            follow: true,
            follows: 0,
            live,
            first_part: None,
            first_part_shown: None,
            first_part_open: false,
            load_started: loading.map(|_| Instant::now()),
            loading,
        });
        id
    }

    /// Reads `id` again (a reload, or a retry of a failed file); nothing if it is loading.
    pub fn reload(&mut self, id: FileId, repaint: impl Fn() + Send + Sync + 'static) {
        let Some(file) = self.files.iter().find(|f| f.id == id) else {
            return;
        };
        if file.loading.is_some() || file.live {
            return;
        }
        let load = self.loader.start(file.source.clone(), repaint);
        if let Some(file) = self.get_mut(id) {
            file.loading = Some(load);
            file.load_started = Some(Instant::now());
        }
    }

    /// Opens a recording in progress, `path` its output: loading until its first snapshot
    /// ([`Self::live_data`]).
    pub fn open_live(&mut self, path: PathBuf) -> FileId {
        self.add(LoadSource::File(path), None, true)
    }

    /// A recording's newer snapshot (`finished`: the finished file, after which the file is
    /// watched and reloaded as any other): `Opened` for its first data, else `Reloaded`.
    pub fn live_data(
        &mut self,
        id: FileId,
        dataset: Arc<Dataset>,
        finished: bool,
    ) -> Option<FileEvent> {
        let file = self.get_mut(id)?;
        let first = file.dataset.is_none();
        file.dataset = Some(dataset);
        file.status = Status::Loaded;
        if finished {
            self.finish_live(id);
        }
        Some(if first {
            FileEvent::Opened(id)
        } else {
            FileEvent::Reloaded(id)
        })
    }

    /// A recording that ended in error: a failed file when nothing was shown yet, else its
    /// last snapshot stays with the error above it.
    pub fn live_failed(&mut self, id: FileId, error: String) -> Option<FileEvent> {
        let file = self.get_mut(id)?;
        let event = if file.dataset.is_none() {
            file.status = Status::Failed(error);
            FileEvent::Failed(id)
        } else {
            file.reload_error = Some(error);
            FileEvent::ReloadFailed(id)
        };
        self.finish_live(id);
        Some(event)
    }

    /// The recording is over: the file on disk is watched from now on.
    fn finish_live(&mut self, id: FileId) {
        let Some(file) = self.files.iter_mut().find(|f| f.id == id) else {
            return;
        };
        file.live = false;
        if let LoadSource::File(path) = &file.source
            && let Ok(stamp) = Stamp::of(path)
            && stamp.is_file()
        {
            file.stamp = Some(stamp);
            self.watcher.watch(id, path.clone(), stamp);
        }
    }

    pub fn set_follow(&mut self, id: FileId, follow: bool) {
        if let Some(f) = self.get_mut(id) {
            f.follow = follow;
        }
    }

    /// The panes of `id` are open on its first part: the loader reads the whole once they
    /// have drawn it (the next poll).
    pub fn first_part_shown(&mut self, id: FileId) {
        if let Some(f) = self.get_mut(id) {
            f.first_part_open = true;
        }
    }

    /// Forgets `id` (its last pane was closed).
    pub fn close(&mut self, id: FileId) {
        self.watcher.unwatch(id);
        self.files.retain(|f| f.id != id);
    }

    /// Applies finished loads and changes on disk; starts the reloads that following a growing
    /// file asks for. Returns what happened, in order, and how soon to poll again when a
    /// reload is due later (None when nothing is).
    pub fn poll(
        &mut self,
        repaint: impl Fn() + Send + Sync + Clone + 'static,
    ) -> (Vec<FileEvent>, Option<Duration>) {
        let mut events = Vec::new();
        // Polled at the start of a frame: the last one drew the panes opened on a first part.
        for file in self.files.iter_mut().filter(|f| f.first_part_open) {
            file.first_part_shown = None;
        }
        for done in self.loader.poll() {
            let Some(file) = self.files.iter_mut().find(|f| f.loading == Some(done.id)) else {
                continue; // closed while loading
            };
            file.loading = None;
            file.first_part = None;
            file.first_part_shown = None;
            file.first_part_open = false;
            let first = file.status == Status::Loading;
            let was_failed = matches!(file.status, Status::Failed(_));
            if let (LoadSource::File(path), Some(stamp)) = (&file.source, done.stamp) {
                self.watcher.watch(file.id, path.clone(), stamp);
            }
            match done.result {
                Ok(dataset) => {
                    file.dataset = Some(dataset);
                    file.status = Status::Loaded;
                    file.stamp = done.stamp;
                    file.change = None;
                    file.reload_error = None;
                    events.push(if first {
                        FileEvent::Opened(file.id)
                    } else {
                        FileEvent::Reloaded(file.id)
                    });
                }
                Err(e) if first || was_failed => {
                    file.status = Status::Failed(e);
                    file.stamp = done.stamp;
                    file.change = None;
                    events.push(FileEvent::Failed(file.id));
                }
                Err(e) => {
                    // What was read is what failed: only a later change calls for a reload.
                    file.stamp = done.stamp;
                    file.change = None;
                    file.reload_error = Some(e);
                    events.push(FileEvent::ReloadFailed(file.id));
                }
            }
        }
        // A first part of a first load (a reload keeps the data shown until the whole is in).
        for part in std::mem::take(&mut self.loader.partial) {
            if let Some(file) = self
                .files
                .iter_mut()
                .find(|f| f.loading == Some(part.id) && f.status == Status::Loading)
            {
                file.first_part = Some(part.dataset);
                file.first_part_shown = Some(part.shown);
                events.push(FileEvent::OpenedInPart(file.id));
            }
        }
        for (id, now) in self.watcher.poll() {
            let Some(file) = self.get_mut(id) else {
                continue;
            };
            let Some(stamp) = file.stamp else {
                continue;
            };
            let change = classify(stamp, &now);
            if change != file.change {
                file.change = change;
                events.push(FileEvent::Changed(id));
            }
        }
        // Follow growth: reload a grown file (or retry a failed one that grew).
        let mut due = None;
        let mut reload = Vec::new();
        for file in &self.files {
            let grew = matches!(file.change, Some(DiskChange::Grew { .. }));
            if !grew || !file.follow || file.loading.is_some() {
                continue;
            }
            let since = file
                .load_started
                .map_or(self.follow_interval, |t| t.elapsed());
            if since >= self.follow_interval {
                reload.push(file.id);
            } else {
                let wait = self.follow_interval - since;
                due = Some(due.map_or(wait, |d: Duration| d.min(wait)));
            }
        }
        for id in reload {
            self.reload(id, repaint.clone());
            if let Some(f) = self.get_mut(id) {
                f.follows += 1;
            }
        }
        (events, due)
    }
}

#[cfg(test)]
mod tests;
