//! Live recordings in the shell (`memscape record --live`, `memscape view --live`): each is an
//! open file (`files.rs`) whose data comes from the recording instead of the loader. Its first
//! snapshot opens the default panes like a loaded file; every later one (and the finished file
//! at the end) is handed to those panes (`View::follow`), which prepare it off screen and swap
//! it in. Snapshots are made on the recording's reading thread (`memscape_views::live`); the UI
//! thread takes at most one per feed and frame. Once finished, the file is watched and
//! reloaded as any other.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::TryRecvError;
use memscape_views::Dataset;
use memscape_views::live::{LiveReceiver, LiveUpdate};

use super::MemscapeApp;
use super::files::{FileEvent, FileId};

/// One live recording as the shell follows it.
pub struct LiveFeed {
    rx: LiveReceiver,
    /// The open file it feeds.
    file: FileId,
    pub events: u64,
    pub updates: u64,
    pub finished: bool,
}

/// How often the window wakes up while a recording is live.
const WAKE_EVERY: Duration = Duration::from_millis(100);

impl MemscapeApp {
    /// Follows the recording `rx` sends, as an open file.
    pub(super) fn add_live(&mut self, rx: LiveReceiver) {
        let file = self.files.open_live(PathBuf::from(&rx.name));
        self.live.push(LiveFeed {
            rx,
            file,
            events: 0,
            updates: 0,
            finished: false,
        });
    }

    /// Takes each feed's newest update into its open file; returns what happened to the files
    /// (handled as the loader's events are, see `apply_file_events`).
    pub(super) fn poll_live(&mut self, ctx: &egui::Context) -> Vec<FileEvent> {
        let mut events = Vec::new();
        for i in 0..self.live.len() {
            if self.live[i].finished {
                continue;
            }
            ctx.request_repaint_after(WAKE_EVERY);
            let update = match self.live[i].rx.rx.try_recv() {
                Ok(u) => u,
                Err(TryRecvError::Empty) => continue,
                Err(TryRecvError::Disconnected) => {
                    self.live[i].finished = true;
                    continue;
                }
            };
            let file = self.live[i].file;
            let event = match update {
                LiveUpdate::Snapshot {
                    dataset,
                    events,
                    number,
                } => {
                    tracing::info!(
                        target: "memscape::live",
                        events,
                        number,
                        "live snapshot handed to the views"
                    );
                    self.live[i].events = events;
                    self.carry_links(file, &dataset);
                    self.files.live_data(file, dataset, false)
                }
                LiveUpdate::Finished(Ok(dataset)) => {
                    tracing::info!(target: "memscape::live", "the finished recording handed to the views");
                    self.live[i].finished = true;
                    self.live[i].events = dataset.alloc_trace().map_or(0, |t| t.trace.meta.events);
                    self.carry_links(file, &dataset);
                    self.files.live_data(file, dataset, true)
                }
                LiveUpdate::Finished(Err(e)) => {
                    self.live[i].finished = true;
                    let e = format!("{}: {e}", self.live[i].rx.name);
                    self.files.live_failed(file, e)
                }
            };
            self.live[i].updates += 1;
            events.extend(event);
        }
        events
    }

    /// Keeps what the user chose on file `id`'s shown dataset (time cursor, highlight, picked
    /// block) on the `next` one that replaces it.
    fn carry_links(&self, id: FileId, next: &Dataset) {
        if let Some(shown) = self.files.get(id).and_then(|f| f.dataset.as_ref()) {
            memscape_views::live::carry_links(shown, next);
        }
    }

    /// Whether file `id` is (or was) fed by a live recording: its panes follow new data
    /// (`View::follow`) instead of being made again.
    pub(super) fn is_live(&self, id: FileId) -> bool {
        self.live.iter().any(|f| f.file == id)
    }

    /// Hands file `id`'s new data to its panes (`View::follow`).
    pub(super) fn follow_data(&mut self, ctx: &egui::Context, id: FileId) {
        let Some(dataset): Option<Arc<Dataset>> =
            self.files.get(id).and_then(|f| f.dataset.clone())
        else {
            return;
        };
        for (tile, _) in self.file_panes(Some(id)) {
            if let Some(egui_tiles::Tile::Pane(p)) = self.tree.tiles.get_mut(tile) {
                p.view.follow(dataset.clone(), ctx);
            }
        }
    }

    /// Whether every live recording has ended and its finished file was handed over.
    pub(super) fn live_done(&self) -> bool {
        self.live.iter().all(|f| f.finished)
    }

    /// The status bar's line per live recording.
    pub(super) fn live_status(&self, ui: &mut egui::Ui) {
        for f in &self.live {
            if f.finished {
                continue;
            }
            ui.spinner();
            ui.label(format!(
                "live: {} · {} events · {} updates",
                f.rx.name, f.events, f.updates
            ));
            ui.separator();
        }
    }
}
