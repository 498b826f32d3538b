//! Live recordings in the shell (`memscape record --live`, `memscape view --live`): each feed's
//! first snapshot opens the default panes like a loaded file; every later one (and the
//! finished file at the end) is handed to those panes (`View::follow`), which prepare it off
//! screen and swap it in. Snapshots are made on the recording's reading thread
//! (`memscape_views::live`); the UI thread takes at most one per feed and frame.

use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::TryRecvError;
use memscape_views::Dataset;
use memscape_views::live::{LiveReceiver, LiveUpdate};

use super::MemscapeApp;
use super::registry::PaneKind;

/// One live recording as the shell follows it.
pub struct LiveFeed {
    rx: LiveReceiver,
    /// What the panes were last given (none before the first snapshot).
    shown: Option<Arc<Dataset>>,
    /// The pane tiles opened on it.
    panes: Vec<egui_tiles::TileId>,
    pub events: u64,
    pub updates: u64,
    pub finished: bool,
}

impl LiveFeed {
    pub fn new(rx: LiveReceiver) -> Self {
        Self {
            rx,
            shown: None,
            panes: Vec::new(),
            events: 0,
            updates: 0,
            finished: false,
        }
    }
}

/// How often the window wakes up while a recording is live.
const WAKE_EVERY: Duration = Duration::from_millis(100);

impl MemscapeApp {
    /// Takes each feed's newest update and hands it to its panes.
    pub(super) fn poll_live(&mut self, ctx: &egui::Context) {
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
            let dataset = match update {
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
                    dataset
                }
                LiveUpdate::Finished(Ok(dataset)) => {
                    tracing::info!(target: "memscape::live", "the finished recording handed to the views");
                    self.live[i].finished = true;
                    self.live[i].events = dataset.alloc_trace().map_or(0, |t| t.trace.meta.events);
                    dataset
                }
                LiveUpdate::Finished(Err(e)) => {
                    self.live[i].finished = true;
                    self.errors.push(format!("{}: {e}", self.live[i].rx.name));
                    continue;
                }
            };
            self.live[i].updates += 1;
            self.show_live(ctx, i, dataset);
        }
    }

    fn show_live(&mut self, ctx: &egui::Context, i: usize, dataset: Arc<Dataset>) {
        match self.live[i].shown.replace(dataset.clone()) {
            None => {
                let order = i as u64;
                let mut panes = Vec::new();
                for kind in PaneKind::defaults_for(&dataset) {
                    panes.push(self.add_view(ctx, kind, dataset.clone(), order));
                }
                self.live[i].panes = panes;
                self.datasets.push(dataset);
            }
            Some(old) => {
                for d in &mut self.datasets {
                    if Arc::ptr_eq(d, &old) {
                        *d = dataset.clone();
                    }
                }
                for &tile in &self.live[i].panes {
                    if let Some(egui_tiles::Tile::Pane(p)) = self.tree.tiles.get_mut(tile) {
                        p.view.follow(dataset.clone(), ctx);
                    }
                }
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
