//! Loading and analysis off the UI thread: one named thread per file, reporting progress and the
//! result through a bounded channel that the UI drains every frame.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_channel::{Receiver, Sender, TrySendError};

use memscape_views::{Dataset, LoadSource};

/// Identifies one load request.
pub type LoadId = u64;

/// What a loader thread reports.
pub enum LoadEvent {
    Progress {
        id: LoadId,
        /// 0..=1, or negative when unknown.
        fraction: f32,
        message: String,
    },
    /// The first part of a big trace, shown while the whole is read (`memscape_views::msc_head`).
    Partial(Partial),
    Done(Finished),
}

/// A big `.msc`'s first blocks (`memscape_views::msc_head`): the window's panes open on them
/// while the loader reads the whole trace, which then replaces them.
pub struct Partial {
    pub id: LoadId,
    pub dataset: Arc<Dataset>,
    /// Dropped once the panes have drawn it: the loader reads the whole trace after that,
    /// so that the first picture is not held behind the whole read on a busy machine (and the
    /// order is a fact the GUI test asserts, not a race).
    pub shown: Sender<()>,
}

/// A finished load.
pub struct Finished {
    pub id: LoadId,
    pub result: Result<Arc<Dataset>, String>,
    /// The file's size and modification time just before it was read (None for embedded
    /// files and directories): what later changes on disk are compared with.
    pub stamp: Option<super::files::Stamp>,
}

/// A load in flight, as the status bar shows it.
pub struct PendingLoad {
    pub id: LoadId,
    pub name: String,
    pub fraction: f32,
    pub message: String,
}

pub struct Loader {
    tx: Sender<LoadEvent>,
    rx: Receiver<LoadEvent>,
    next_id: AtomicU64,
    pub pending: Vec<PendingLoad>,
    /// First parts received by [`Loader::poll`] (of loads not finished in the same poll).
    pub partial: Vec<Partial>,
    /// Whether a progress report wakes the window. Not on a software rasterizer, where each
    /// frame redraws the whole window on the CPU the load needs (≈ 0.1 s of lavapipe at
    /// 1280×800; issue 25): the spinner's paced frames show the progress, and the result
    /// still wakes it at once.
    pub progress_wakes: bool,
}

/// Capacity of the channel: progress messages beyond it are dropped (the next one supersedes
/// them); results always get through because their send blocks.
const CHANNEL_CAPACITY: usize = 256;

impl Loader {
    pub fn new() -> Self {
        let (tx, rx) = crossbeam_channel::bounded(CHANNEL_CAPACITY);
        Self {
            tx,
            rx,
            next_id: AtomicU64::new(1),
            pending: Vec::new(),
            partial: Vec::new(),
            progress_wakes: !crate::panes::software_rasterizer(),
        }
    }

    /// Starts loading `source` on a background thread; `repaint` wakes the UI when it reports.
    pub fn start(
        &mut self,
        source: LoadSource,
        repaint: impl Fn() + Send + Sync + 'static,
    ) -> LoadId {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let name = source.display_name();
        self.pending.push(PendingLoad {
            id,
            name: name.clone(),
            fraction: -1.0,
            message: "starting".into(),
        });
        let tx = self.tx.clone();
        let repaint = Arc::new(repaint);
        let progress_wakes = self.progress_wakes;
        let spawn = std::thread::Builder::new()
            .name(format!("memscape-load-{id}"))
            .spawn(move || {
                let progress_tx = tx.clone();
                let progress_repaint = repaint.clone();
                let progress = move |fraction: f32, message: &str| {
                    let event = LoadEvent::Progress {
                        id,
                        fraction,
                        message: message.to_owned(),
                    };
                    match progress_tx.try_send(event) {
                        Ok(()) if progress_wakes => progress_repaint(),
                        Ok(()) | Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {}
                    }
                };
                // Taken before reading: a change while loading shows as a change afterwards.
                let stamp = match &source {
                    LoadSource::File(path) => super::files::Stamp::of(path)
                        .ok()
                        .filter(super::files::Stamp::is_file),
                    LoadSource::Embedded { .. } => None,
                };
                if let Some(first) = first_part(&source, &progress) {
                    let (shown, opened) = crossbeam_channel::bounded::<()>(1);
                    let partial = LoadEvent::Partial(Partial {
                        id,
                        dataset: Arc::new(first),
                        shown,
                    });
                    if tx.send(partial).is_ok() {
                        repaint();
                        // Bounded: a window that draws no frame (hidden) does not hold the load.
                        let _ = opened.recv_timeout(FIRST_PART_WAIT);
                    }
                }
                // The whole chain of causes, as the command line prints it.
                let result = load_dataset(&source, &progress)
                    .and_then(|dataset| with_engine_heap(dataset, &source))
                    .map(Arc::new)
                    .map_err(|e| format!("{e:#}"));
                // Blocking send: the result must arrive even when progress filled the channel.
                let _ = tx.send(LoadEvent::Done(Finished { id, result, stamp }));
                repaint();
            });
        if let Err(e) = spawn {
            let _ = self.tx.try_send(LoadEvent::Done(Finished {
                id,
                result: Err(format!("{name}: cannot start a loader thread: {e}")),
                stamp: None,
            }));
        }
        id
    }

    /// Drains the channel; returns the finished loads (first parts go to [`Loader::partial`],
    /// unless their load finished in the same poll).
    pub fn poll(&mut self) -> Vec<Finished> {
        let mut finished = Vec::new();
        while let Ok(event) = self.rx.try_recv() {
            match event {
                LoadEvent::Partial(partial) => self.partial.push(partial),
                LoadEvent::Progress {
                    id,
                    fraction,
                    message,
                } => {
                    if let Some(p) = self.pending.iter_mut().find(|p| p.id == id) {
                        p.fraction = fraction;
                        p.message = message;
                    }
                }
                LoadEvent::Done(done) => {
                    self.pending.retain(|p| p.id != done.id);
                    self.partial.retain(|p| p.id != done.id);
                    finished.push(done);
                }
            }
        }
        finished
    }

    pub fn is_idle(&self) -> bool {
        self.pending.is_empty()
    }
}

/// Where recent files are remembered: `$XDG_CONFIG_HOME/memscape/recent.txt`.
pub fn recent_files_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("memscape").join("recent.txt"))
}

/// The recent-files list, most recent first, at most [`RECENT_MAX`] entries.
pub const RECENT_MAX: usize = 12;

pub fn load_recent() -> Vec<PathBuf> {
    let Some(path) = recent_files_path() else {
        return Vec::new();
    };
    std::fs::read_to_string(path)
        .map(|s| {
            s.lines()
                .filter(|l| !l.trim().is_empty())
                .take(RECENT_MAX)
                .map(PathBuf::from)
                .collect()
        })
        .unwrap_or_default()
}

pub fn remember_recent(recent: &mut Vec<PathBuf>, file: PathBuf) {
    recent.retain(|p| p != &file);
    recent.insert(0, file);
    recent.truncate(RECENT_MAX);
    if let Some(path) = recent_files_path() {
        let text: String = recent
            .iter()
            .map(|p| format!("{}\n", p.display()))
            .collect();
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Err(e) = std::fs::write(&path, text) {
            tracing::warn!("cannot save recent files to {}: {e}", path.display());
        }
    }
}

/// How long the loader waits for the window to open its panes on a first part before it
/// reads the whole trace anyway.
const FIRST_PART_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// A big `.msc`'s first blocks, when its map draws from a current index beside it
/// (`memscape_views::msc_head`; `MEMSCAPE_TRACE_HEAD` blocks, default
/// `memscape_views::msc_head::MSC_HEAD`); `None` for anything else, and when that fails (the
/// whole read then says why).
fn first_part(source: &LoadSource, progress: &dyn Fn(f32, &str)) -> Option<Dataset> {
    let LoadSource::File(path) = source else {
        return None;
    };
    if !path.is_file() {
        return None;
    }
    let limit = match std::env::var("MEMSCAPE_TRACE_HEAD") {
        Ok(v) => v.parse().ok()?,
        Err(_) => memscape_views::msc_head::MSC_HEAD,
    };
    match memscape_views::msc_head::load_msc_head(path, limit, progress) {
        Ok(first) => first,
        Err(e) => {
            tracing::debug!("{}: no first part: {e}", path.display());
            None
        }
    }
}

/// Reads `source`: a Parquet samples dataset whose panes draw from the embedded query engine
/// (`--features engine`) in part, its first samples only (`MEMSCAPE_SAMPLES_HEAD`, default
/// `memscape_views::dataset::SAMPLES_HEAD`), and a Parquet trace dataset its first blocks only
/// (`MEMSCAPE_TRACE_HEAD`, default `memscape_views::dataset::TRACE_HEAD`; its map, heap tree
/// and heap curve from the engine), so that a dataset of any size opens; anything else whole.
fn load_dataset(
    source: &LoadSource,
    progress: &dyn Fn(f32, &str),
) -> anyhow::Result<memscape_views::Dataset> {
    #[cfg(feature = "engine")]
    if let LoadSource::File(path) = source
        && super::engine_samples::is_samples_dataset(path)
    {
        let limit = match std::env::var("MEMSCAPE_SAMPLES_HEAD") {
            Ok(v) => v.parse().map_err(|e| {
                anyhow::anyhow!("MEMSCAPE_SAMPLES_HEAD={v:?}: not a number of samples: {e}")
            })?,
            Err(_) => memscape_views::dataset::SAMPLES_HEAD,
        };
        return Ok(memscape_views::dataset::load_samples_head(
            path, limit, progress,
        )?);
    }
    #[cfg(feature = "engine")]
    if let LoadSource::File(path) = source
        && super::engine_heap::is_trace_dataset(path)
    {
        let limit = match std::env::var("MEMSCAPE_TRACE_HEAD") {
            Ok(v) => v.parse().map_err(|e| {
                anyhow::anyhow!("MEMSCAPE_TRACE_HEAD={v:?}: not a number of blocks: {e}")
            })?,
            Err(_) => memscape_views::dataset::TRACE_HEAD,
        };
        let engine = memscape_engine::Engine::embedded_bounded(
            0,
            super::engine_samples_query::memory_limit()?,
        )?;
        return super::engine_map::load_head(path, limit, engine, progress);
    }
    Ok(memscape_views::dataset::load(source, progress)?)
}

/// A Parquet trace dataset's heap views, and a Parquet samples dataset's samples panes, draw
/// from the embedded query engine when memscape has it (`--features engine`); without it they
/// draw from the blocks or samples read back.
fn with_engine_heap(
    #[allow(unused_mut)] mut dataset: memscape_views::Dataset,
    source: &LoadSource,
) -> anyhow::Result<memscape_views::Dataset> {
    #[cfg(feature = "engine")]
    if let LoadSource::File(path) = source
        && super::engine_heap::is_trace_dataset(path)
    {
        super::engine_heap::attach(&mut dataset, path, "embedded")?;
        super::engine_map::attach(&mut dataset, path, "embedded")?;
    }
    #[cfg(feature = "engine")]
    if let LoadSource::File(path) = source
        && super::engine_samples::is_samples_dataset(path)
    {
        super::engine_samples_query::attach(&dataset, path, "embedded")?;
    }
    let _ = source;
    Ok(dataset)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::time::{Duration, Instant};

    /// Loads `path` with `progress_wakes`; returns how often the window was woken.
    fn wakes_of_a_load(path: &std::path::Path, progress_wakes: bool) -> usize {
        let mut loader = Loader::new();
        loader.progress_wakes = progress_wakes;
        let wakes = Arc::new(AtomicUsize::new(0));
        let counted = wakes.clone();
        loader.start(LoadSource::File(path.to_owned()), move || {
            counted.fetch_add(1, Ordering::SeqCst);
        });
        let start = Instant::now();
        let done = loop {
            if let Some(done) = loader.poll().pop() {
                break done;
            }
            assert!(start.elapsed() < Duration::from_secs(30), "no result");
            std::thread::sleep(Duration::from_millis(5));
        };
        assert!(done.result.is_ok(), "{:?}", done.result.err());
        assert!(loader.is_idle());
        // The result's wake follows its send.
        while wakes.load(Ordering::SeqCst) == 0 {
            assert!(start.elapsed() < Duration::from_secs(30), "no wake");
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(50));
        wakes.load(Ordering::SeqCst)
    }

    #[test]
    fn on_a_software_rasterizer_only_the_result_wakes_the_window() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.csv");
        let rows: String = (0..200)
            .map(|i| format!("{i},alloc,{:#x},64\n", 0x1000 + i * 64))
            .collect();
        std::fs::write(&path, format!("time,op,address,size\n{rows}")).expect("write");
        // Each report woke a frame: reading, format, layout, done, and the result.
        assert!(wakes_of_a_load(&path, true) >= 4);
        assert_eq!(wakes_of_a_load(&path, false), 1);
    }
}
