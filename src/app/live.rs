//! Live recordings in the shell (`memscape record --live`, `memscape view --live`): each is an
//! open file (`files.rs`) whose data comes from the recording instead of the loader. Its first
//! snapshot opens the default panes like a loaded file; every later one (and the finished file
//! at the end) is handed to those panes (`View::follow`), which prepare it off screen and swap
//! it in. Snapshots are made on the recording's reading thread (`memscape_views::live`); the UI
//! thread takes at most one per feed and frame. Once finished, the file is watched and
//! reloaded as any other.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::TryRecvError;
use memscape_views::Dataset;
use memscape_views::live::{LiveReceiver, LiveUpdate};

use super::MemscapeApp;
use super::files::{FileEvent, FileId};
use crate::panes::LiveStep;

/// One live recording as the shell follows it.
pub struct LiveFeed {
    rx: LiveReceiver,
    /// The open file it feeds.
    file: FileId,
    pub events: u64,
    pub updates: u64,
    pub finished: bool,
    /// The snapshot handed to the panes and not yet shown by all of them: its number, events,
    /// and when it was handed (time and the window's pass).
    handed: Option<(u64, u64, Instant, u64)>,
    /// When the panes showed each of the last snapshots (for the rate in the status line).
    shown: VecDeque<Instant>,
    /// Snapshots shown in all, and when the first was.
    shown_total: u64,
    first_shown: Option<Instant>,
    /// The window's pass when the last snapshot was shown (frames per update, logged).
    shown_pass: Option<u64>,
}

/// Snapshots over which the status line's rate is taken.
const RATE_OVER: usize = 8;

impl LiveFeed {
    /// Snapshots shown per second, over the last [`RATE_OVER`] (0 before the second), and
    /// counting the wait for the next as an interval once it is longer than the last ones.
    pub fn rate(&self) -> f64 {
        let (Some(first), Some(last)) = (self.shown.front(), self.shown.back()) else {
            return 0.0;
        };
        let intervals = (self.shown.len() - 1) as f64;
        let span = last.duration_since(*first).as_secs_f64();
        let waiting = last.elapsed().as_secs_f64();
        if intervals == 0.0 || span <= 0.0 {
            return 0.0;
        }
        if waiting > span / intervals {
            // No snapshot for longer than usual: the rate falls as the wait goes on.
            return (intervals + 1.0) / (span + waiting);
        }
        intervals / span
    }

    /// A snapshot was shown by every pane of the recording.
    /// `pass`: the window's frame now.
    fn shown_now(&mut self, pass: u64) {
        let now = Instant::now();
        if let Some((number, events, handed, handed_pass)) = self.handed.take() {
            self.rx.shown(number);
            // The window's frames since the last snapshot shown (the first: since handed), this
            // one included: what each update costs on a software rasterizer.
            let frames = pass - self.shown_pass.unwrap_or(handed_pass).min(pass);
            self.shown_pass = Some(pass);
            tracing::info!(
                target: "memscape::live",
                number,
                events,
                apply_ms = handed.elapsed().as_secs_f64() * 1e3,
                frames,
                "live snapshot shown"
            );
        }
        self.shown.push_back(now);
        if self.shown.len() > RATE_OVER {
            self.shown.pop_front();
        }
        self.shown_total += 1;
        self.first_shown.get_or_insert(now);
    }
}

/// How often the window wakes up while a recording is live, besides when an update arrives
/// (the reading thread wakes it, `LiveReceiver::wake`) and when a pane's worker is done: for the
/// status line's rate. Each frame redraws the whole window, which on a software rasterizer
/// takes the CPU that the recording and the views' preparation need (at 100 ms, 64 % of a
/// small recording's CPU samples were lavapipe's): there every 5 s (`panes::fallback`).
const WAKE_EVERY: Duration = Duration::from_millis(250);

impl MemscapeApp {
    /// Follows the recording `rx` sends, as an open file.
    pub(super) fn add_live(&mut self, rx: LiveReceiver) {
        let file = self.files.open_live(PathBuf::from(&rx.name));
        // The next snapshot once the panes show the last: two alive at most (bounded memory).
        rx.pace_by_shown();
        self.live.push(LiveFeed {
            rx,
            file,
            events: 0,
            updates: 0,
            finished: false,
            handed: None,
            shown: VecDeque::new(),
            shown_total: 0,
            first_shown: None,
            shown_pass: None,
        });
    }

    /// Takes each feed's newest update into its open file; returns what happened to the files
    /// (handled as the loader's events are, see `apply_file_events`).
    pub(super) fn poll_live(&mut self, ctx: &egui::Context) -> Vec<FileEvent> {
        let mut events = Vec::new();
        tracing::trace!(target: "memscape::live", pass = ctx.cumulative_pass_nr(), "frame");
        crate::panes::set_live_recording(self.live.iter().any(|f| !f.finished));
        for i in 0..self.live.len() {
            if self.live[i].finished {
                continue;
            }
            ctx.request_repaint_after(crate::panes::fallback(WAKE_EVERY));
            self.live[i].rx.wake(ctx);
            // The next snapshot only once the panes show the last one (the reading thread makes
            // none while one waits in the channel: no work for snapshots that would be dropped).
            let file = self.live[i].file;
            if self.file_preparing(file, ctx) {
                continue;
            }
            if self.live[i].handed.is_some() {
                self.live[i].shown_now(ctx.cumulative_pass_nr());
            }
            let update = match self.live[i].rx.rx.try_recv() {
                Ok(u) => u,
                Err(TryRecvError::Empty) => continue,
                Err(TryRecvError::Disconnected) => {
                    self.live[i].finished = true;
                    continue;
                }
            };
            let event = match update {
                LiveUpdate::Snapshot {
                    dataset,
                    events,
                    number,
                    stats,
                } => {
                    tracing::info!(
                        target: "memscape::live",
                        events,
                        number,
                        snapshot_ms = stats.snapshot_ms,
                        scene_ms = stats.scene_ms,
                        nodes = stats.nodes,
                        nodes_symbolized = stats.nodes_symbolized,
                        "live snapshot handed to the views"
                    );
                    self.live[i].events = events;
                    self.live[i].handed =
                        Some((number, events, Instant::now(), ctx.cumulative_pass_nr()));
                    self.carry_links(file, &dataset);
                    self.files.live_data(file, dataset, false)
                }
                LiveUpdate::Finished(Ok(dataset)) => {
                    let f = &self.live[i];
                    let span = f.first_shown.map_or(0.0, |t| t.elapsed().as_secs_f64());
                    tracing::info!(
                        target: "memscape::live",
                        shown = f.shown_total,
                        seconds = span,
                        per_second = if span > 0.0 { f.shown_total as f64 / span } else { 0.0 },
                        "the finished recording handed to the views"
                    );
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

    /// Moves the snapshots the panes prepare on and swaps those of one file in together, in
    /// this frame, once none of that file's panes is still preparing (before the panes draw:
    /// they draw what they swapped in).
    pub(super) fn step_live_panes(&mut self, ctx: &egui::Context) {
        // Only a live recording hands panes snapshots (`follow`): nothing to step otherwise,
        // and no list of panes made every frame.
        if self.live.is_empty() {
            return;
        }
        let panes = self.file_panes(None);
        let mut preparing = Vec::new();
        let mut ready = Vec::new();
        for (tile, file) in panes {
            let Some(egui_tiles::Tile::Pane(p)) = self.tree.tiles.get_mut(tile) else {
                continue;
            };
            match p.view.live_step(ctx, false) {
                LiveStep::Preparing => preparing.push(file),
                LiveStep::Ready => ready.push((tile, file)),
                LiveStep::Idle | LiveStep::Swapped => {}
            }
        }
        for (tile, file) in ready {
            if preparing.contains(&file) {
                continue;
            }
            if let Some(egui_tiles::Tile::Pane(p)) = self.tree.tiles.get_mut(tile) {
                p.view.live_step(ctx, true);
            }
        }
    }

    /// After the panes drew: a snapshot that all of them show now is shown in this frame, so
    /// that no frame is drawn only to notice it (the panes ask none after a swap; the reading
    /// thread, told, makes the next snapshot and wakes the window with it).
    pub(super) fn live_shown_by_panes(&mut self, ctx: &egui::Context) {
        for i in 0..self.live.len() {
            let feed = &self.live[i];
            if feed.finished || feed.handed.is_none() || self.file_preparing(feed.file, ctx) {
                continue;
            }
            self.live[i].shown_now(ctx.cumulative_pass_nr());
        }
    }

    /// Whether a pane of file `id` is preparing a snapshot (see `View::preparing_live`).
    fn file_preparing(&self, id: FileId, ctx: &egui::Context) -> bool {
        self.file_panes(Some(id)).iter().any(|(tile, _)| {
            matches!(self.tree.tiles.get(*tile),
                Some(egui_tiles::Tile::Pane(p)) if p.view.preparing_live(ctx))
        })
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
            // A still mark, not a spinner: a spinner repaints the window every frame for the
            // whole recording, and on a software rasterizer those frames took most of the CPU
            // that the recording and the views' preparation need (77 % of a 2-core run).
            ui.colored_label(egui::Color32::from_rgb(230, 70, 70), "●");
            ui.label(format!(
                "live · {:.1} updates/s · {} events · {}",
                f.rate(),
                short_count(f.events),
                f.rx.name
            ))
            .on_hover_text(format!(
                "{} snapshots shown by the views so far; the rate is over the last {RATE_OVER}",
                f.shown_total
            ));
            ui.separator();
        }
    }
}

/// `3.1 M`, `420 k`, `87`.
pub(super) fn short_count(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.0} k", n as f64 / 1e3),
        _ => format!("{:.1} M", n as f64 / 1e6),
    }
}
