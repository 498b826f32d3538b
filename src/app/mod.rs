//! The GUI shell: menus, docking tabs (egui_tiles), the status bar with load progress, errors,
//! drag-and-drop, the open dialog and recent files. Panes live in `crate::panes`, the views they draw in `memscape_views`.

mod compare;
pub mod engine_heap;
pub mod engine_map;
pub mod engine_samples;
#[cfg(feature = "engine")]
pub mod engine_samples_query;
mod export;
mod file_bar;
pub mod files;
mod live;
mod loader;
mod menu_bar;
mod open_dialog;
pub mod present;
pub mod registry;
pub mod screenshot;
mod stats_overlay;
mod tree_behavior;

pub use compare::Startup;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use memscape_views::gpu::GpuRegistry;
use memscape_views::gpu_health::GpuHealth;
use memscape_views::{Dataset, LoadSource};

use crate::panes::{View, ViewContext};
use file_bar::FileRequest;
use files::{FileEvent, FileId, OpenFiles, Status};
use registry::PaneKind;
use screenshot::ScreenshotJob;
use tree_behavior::TreeBehavior;

/// The window's smallest size in logical pixels: where the demo's four panes still hold their
/// controls (at 640×480 the cycles pane's controls alone were taller than the pane).
const MIN_WINDOW_SIZE: [f32; 2] = [800.0, 560.0];

/// Where "Record tour step" appends (in the current directory).
const TOUR_FILE: &str = "memscape-tour.toml";

/// One docked view.
pub struct Pane {
    view: Box<dyn View>,
    /// The file it shows (None for panes of no file).
    file: Option<FileId>,
    /// What it is (None for a file's load-error pane), to make it again after a reload.
    kind: Option<PaneKind>,
    /// The two files a difference pane compares (A, B), to compare them again after a reload.
    compare: Option<[FileId; 2]>,
}

pub struct MemscapeApp {
    /// The open files: loading, loaded (their datasets) or failed, and their changes on disk.
    files: OpenFiles,
    tree: egui_tiles::Tree<Pane>,
    errors: Vec<String>,
    recent: Vec<PathBuf>,
    open_dialog: open_dialog::OpenDialog,
    screenshot: Option<ScreenshotJob>,
    /// The first pane whose content reached past its edge in the last frame: a failure of the
    /// screenshot self-test.
    pane_overflow: Option<String>,
    render_state: Option<egui_wgpu::RenderState>,
    presenting: bool,
    /// The pane last clicked: what "Record tour step" records.
    active_pane: Option<egui_tiles::TileId>,
    /// A short message for the status bar (tour steps recorded).
    notice: Option<String>,
    /// "Export view as SVG/PNG…".
    export: export::ExportDialog,
    /// Where each tab tile of the grid belongs (see `add_view`).
    tile_order: HashMap<egui_tiles::TileId, u64>,
    /// The frame-statistics overlay (F3).
    stats_overlay: stats_overlay::StatsOverlay,
    /// Recordings followed while they run (`--live`), each an open file.
    live: Vec<live::LiveFeed>,
    /// Frames drawn so far.
    frames: u64,
    /// `memscape view --diff A B`: the two files to compare in one difference pane once both
    /// are in (see `compare.rs`).
    compare: Option<[FileId; 2]>,
    /// Samples files and the topology file each maps onto (opened together).
    pairs: Vec<(PathBuf, PathBuf)>,
}

impl MemscapeApp {
    pub fn new(
        cc: &eframe::CreationContext<'_>,
        sources: Vec<LoadSource>,
        screenshot: Option<ScreenshotJob>,
        startup: Startup,
    ) -> Self {
        memscape_views::fonts::install(&cc.egui_ctx);
        let render_state = cc.wgpu_render_state.clone();
        let mut errors = Vec::new();
        if let Some(rs) = &render_state {
            match GpuRegistry::install(rs) {
                Ok(health) => {
                    memscape_views::gpu_health::attach(&cc.egui_ctx, health.clone());
                    let _ = GPU_HEALTH.set(health);
                }
                Err(e) => errors.push(format!("GPU pipelines: {e}")),
            }
            let info = rs.adapter.get_info();
            crate::panes::set_software_rasterizer(info.device_type == wgpu::DeviceType::Cpu);
            tracing::info!(
                "GUI renders on {} [{:?}, {:?}]",
                info.name,
                info.device_type,
                info.backend
            );
        }
        let wake = cc.egui_ctx.clone();
        let mut app = Self {
            files: OpenFiles::new(files::WATCH_INTERVAL, files::FOLLOW_INTERVAL, move || {
                memscape_views::wake(&wake)
            }),
            tree: egui_tiles::Tree::empty(egui::Id::unique("memscape-tiles")),
            errors,
            recent: loader::load_recent(),
            open_dialog: open_dialog::OpenDialog::new(),
            screenshot,
            pane_overflow: None,
            render_state,
            presenting: false,
            active_pane: None,
            notice: None,
            export: export::ExportDialog::new(),
            tile_order: HashMap::new(),
            stats_overlay: stats_overlay::StatsOverlay::new(startup.frame_stats),
            live: Vec::new(),
            frames: 0,
            compare: None,
            pairs: startup.pairs,
        };
        let ids: Vec<FileId> = sources
            .into_iter()
            .map(|s| app.open(&cc.egui_ctx, s))
            .collect();
        if let (true, [a, b, ..]) = (startup.compare, ids.as_slice()) {
            app.compare = Some([*a, *b]);
        }
        for rx in startup.live {
            app.add_live(rx);
        }
        app
    }

    fn open(&mut self, ctx: &egui::Context, source: LoadSource) -> FileId {
        // The shell's unit tests (`compare/tests.rs`) leave the user's recent files alone.
        if let LoadSource::File(p) = &source
            && !cfg!(test)
        {
            let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
            loader::remember_recent(&mut self.recent, p);
        }
        let ctx = ctx.clone();
        self.files.open(source, move || memscape_views::wake(&ctx))
    }

    /// Applies finished loads and changes on disk to the panes: a new file's views, a failed
    /// file's error pane, new data in the views of a reloaded file.
    fn apply_file_events(&mut self, ctx: &egui::Context) {
        let repaint = {
            let ctx = ctx.clone();
            move || memscape_views::wake(&ctx)
        };
        let (mut events, due) = self.files.poll(repaint);
        events.extend(self.poll_live(ctx));
        if let Some(due) = due {
            ctx.request_repaint_after(due);
        }
        for event in events {
            match event {
                FileEvent::Opened(id) => self.show_data(ctx, id, true),
                FileEvent::OpenedInPart(id) => self.show_first_part(ctx, id),
                FileEvent::Reloaded(id) if self.is_live(id) => {
                    self.follow_data(ctx, id);
                    self.refresh_compares(ctx, id);
                }
                FileEvent::Reloaded(id) => {
                    self.show_data(ctx, id, false);
                    self.refresh_compares(ctx, id);
                }
                FileEvent::Failed(id) => {
                    self.show_failure(id);
                    self.cancel_compare(ctx, id);
                }
                FileEvent::ReloadFailed(id) => {
                    if let Some(e) = self.files.get(id).and_then(|f| f.reload_error.as_ref()) {
                        tracing::error!("{e}");
                    }
                }
                FileEvent::Changed(_) => {}
            }
        }
        // A failed file whose error pane was closed is forgotten.
        let shown: Vec<FileId> = self.file_panes(None).into_iter().map(|(_, f)| f).collect();
        let orphans: Vec<FileId> = self
            .files
            .files
            .iter()
            .filter(|f| matches!(f.status, Status::Failed(_)) && !shown.contains(&f.id))
            .map(|f| f.id)
            .collect();
        for id in orphans {
            self.files.close(id);
        }
    }

    /// The pane tiles of file `file` (every file's when None), with their file.
    fn file_panes(&self, file: Option<FileId>) -> Vec<(egui_tiles::TileId, FileId)> {
        self.tree
            .tiles
            .iter()
            .filter_map(|(id, t)| match t {
                egui_tiles::Tile::Pane(p) => p.file.map(|f| (*id, f)),
                _ => None,
            })
            .filter(|(_, f)| file.is_none_or(|want| *f == want))
            .collect()
    }

    /// Shows file `id`'s (new) data (`opened`: its first): its default views when it has no
    /// pane yet, else the same views again over the new data (an error pane becomes the file's
    /// first default view). A file compared by `--diff` or a topology file that samples map
    /// onto opens no views of its own (see `compare.rs`).
    fn show_data(&mut self, ctx: &egui::Context, id: FileId, opened: bool) {
        let Some(dataset) = self.files.get(id).and_then(|f| f.dataset.clone()) else {
            return;
        };
        self.show_dataset(ctx, id, dataset, opened);
    }

    /// A big trace's first blocks (`OpenFile::first_part`): its default views open on them
    /// while the whole is read, which [`Self::show_data`] then shows in the same views. Not
    /// for a file `--diff` waits for (it compares whole files).
    fn show_first_part(&mut self, ctx: &egui::Context, id: FileId) {
        let compared = self.compare.is_some_and(|ids| ids.contains(&id));
        if let Some(first) = self.files.get(id).and_then(|f| f.first_part.clone())
            && !compared
        {
            self.show_dataset(ctx, id, first, false);
            tracing::debug!(
                target: "memscape::load",
                "panes open on the first blocks read"
            );
        }
        self.files.first_part_shown(id);
        // The frame after this one tells the loader to read the whole.
        ctx.request_repaint();
    }

    fn show_dataset(
        &mut self,
        ctx: &egui::Context,
        id: FileId,
        dataset: Arc<Dataset>,
        opened: bool,
    ) {
        let paired_topology = self.pair(&dataset);
        if opened && self.take_for_compare(ctx, id) {
            return;
        }
        let defaults = PaneKind::defaults_for(&dataset);
        let panes = self.file_panes(Some(id));
        if panes.is_empty() {
            if paired_topology || self.is_compared(id) {
                return;
            }
            for kind in defaults {
                self.add_view(ctx, kind, dataset.clone(), id, id);
            }
            return;
        }
        let mut more = Vec::new();
        for (tile, _) in panes {
            let Some(egui_tiles::Tile::Pane(pane)) = self.tree.tiles.get_mut(tile) else {
                continue;
            };
            // A view that cannot show what the file now holds becomes its summary.
            let kind = match pane.kind {
                Some(k) if k.accepts(&dataset).is_ok() => k,
                Some(_) => PaneKind::Summary,
                None => {
                    more = defaults.iter().skip(1).copied().collect();
                    defaults.first().copied().unwrap_or(PaneKind::Summary)
                }
            };
            pane.view = kind.create(dataset.clone(), ctx);
            pane.kind = Some(kind);
        }
        for kind in more {
            self.add_view(ctx, kind, dataset.clone(), id, id);
        }
    }

    /// Shows file `id`'s load error in its own pane (replacing what its panes showed).
    fn show_failure(&mut self, id: FileId) {
        let Some(file) = self.files.get(id) else {
            return;
        };
        let Status::Failed(message) = &file.status else {
            return;
        };
        tracing::error!("{message}");
        let error = || {
            Box::new(crate::panes::load_error::LoadErrorPane::new(
                file.name.clone(),
                message.clone(),
            ))
        };
        let panes = self.file_panes(Some(id));
        if panes.is_empty() {
            let view = error();
            self.insert_pane(
                Pane {
                    view,
                    file: Some(id),
                    kind: None,
                    compare: None,
                },
                id,
            );
            return;
        }
        for (tile, _) in panes {
            if let Some(egui_tiles::Tile::Pane(pane)) = self.tree.tiles.get_mut(tile) {
                pane.view = error();
                pane.kind = None;
            }
        }
    }

    /// GPU errors that no scope caught go to the status bar; a lost device is said there and
    /// in every GPU pane. A test can lose the device on purpose after some frames
    /// (`MEMSCAPE_FAULT_LOSE_DEVICE_AFTER_FRAMES`), as a driver reset would.
    fn gpu_faults(&mut self, ctx: &egui::Context) {
        let Some(health) = memscape_views::gpu_health::of(ctx) else {
            return;
        };
        for e in health.take_errors() {
            let e = format!("GPU: {e}");
            if !self.errors.contains(&e) {
                self.errors.push(e);
            }
        }
        if let Some(why) = health.lost() {
            let message = GpuHealth::lost_message(&why);
            if !self.errors.contains(&message) {
                self.errors.insert(0, message);
            }
        }
        self.frames += 1;
        if let Some(rs) = &self.render_state
            && std::env::var("MEMSCAPE_FAULT_LOSE_DEVICE_AFTER_FRAMES")
                .ok()
                .and_then(|n| n.parse::<u64>().ok())
                == Some(self.frames)
        {
            tracing::warn!(
                "losing the GPU device on purpose (MEMSCAPE_FAULT_LOSE_DEVICE_AFTER_FRAMES)"
            );
            // As `Device::destroy` asks: once the queue is idle, so that the next poll
            // reports the loss (a driver reset reports it at once).
            let _ = rs.device.poll(wgpu::PollType::wait_indefinitely());
            rs.device.destroy();
            let _ = rs.device.poll(wgpu::PollType::Poll);
        }
    }

    fn handle_requests(&mut self, ctx: &egui::Context, requests: Vec<FileRequest>) {
        for r in requests {
            match r {
                FileRequest::Reload(id) => {
                    let ctx = ctx.clone();
                    self.files.reload(id, move || memscape_views::wake(&ctx));
                }
                FileRequest::Follow(id, on) => self.files.set_follow(id, on),
            }
        }
    }

    /// Appends the active (else the first) pane's state to the tour file in the current
    /// directory.
    fn record_tour_step(&mut self) {
        let panes: Vec<egui_tiles::TileId> = self
            .tree
            .tiles
            .iter()
            .filter_map(|(id, t)| matches!(t, egui_tiles::Tile::Pane(_)).then_some(*id))
            .collect();
        let id = self
            .active_pane
            .filter(|a| panes.contains(a))
            .or_else(|| panes.first().copied());
        let step = id.and_then(|id| match self.tree.tiles.get(id) {
            Some(egui_tiles::Tile::Pane(p)) => p.view.tour_step(),
            _ => None,
        });
        self.notice = Some(match step {
            None => "this view cannot be recorded as a tour step".to_owned(),
            Some(step) => {
                match memscape_views::tour::append_step(std::path::Path::new(TOUR_FILE), &step) {
                    Ok(()) => format!("recorded a {} step in {TOUR_FILE}", step.kind().name()),
                    Err(e) => format!("{:#}", anyhow::Error::from(e)),
                }
            }
        });
    }

    /// Opens the export window for pane `id` (the active, else the first, pane when None).
    fn export_view(&mut self, id: Option<egui_tiles::TileId>, format: export::ExportFormat) {
        let id = id.or(self.active_pane).or_else(|| {
            self.tree
                .tiles
                .iter()
                .find_map(|(id, t)| matches!(t, egui_tiles::Tile::Pane(_)).then_some(*id))
        });
        let pane = id.and_then(|id| match self.tree.tiles.get(id) {
            Some(egui_tiles::Tile::Pane(p)) => Some(p),
            _ => None,
        });
        match pane.and_then(|p| Some((p.view.title(), p.view.picture()?))) {
            Some((title, picture)) => self.export.open(&title, picture, format),
            None => self.notice = Some("this view has no picture to export".to_owned()),
        }
    }

    fn set_presenting(&mut self, ctx: &egui::Context, on: bool) {
        self.presenting = on;
        ctx.send_viewport_cmd(egui::ViewportCommand::Fullscreen(on));
        ctx.set_zoom_factor(if on { 1.35 } else { 1.0 });
    }

    /// Opens a view beside the existing ones: the root is a grid of tab groups, one per opened
    /// view, as near square as the window allows (two side by side, four 2 × 2; users can drag
    /// tabs to regroup them).
    /// Adds a view in its own tab to the grid. `order` places it: files opened together keep
    /// the order they were given in (the grid does not depend on which finished loading first);
    /// views added later by hand go last (`u64::MAX`).
    fn add_view(
        &mut self,
        ctx: &egui::Context,
        kind: PaneKind,
        dataset: Arc<Dataset>,
        file: FileId,
        order: u64,
    ) -> egui_tiles::TileId {
        let pane = Pane {
            view: kind.create(dataset, ctx),
            file: Some(file),
            kind: Some(kind),
            compare: None,
        };
        self.insert_pane(pane, order)
    }

    /// Puts `pane` in its own tab of the grid, placed by `order` (see `add_view`); returns its
    /// tile.
    fn insert_pane(&mut self, pane: Pane, order: u64) -> egui_tiles::TileId {
        let pane_id = self.tree.tiles.insert_pane(pane);
        let tabs = self.tree.tiles.insert_tab_tile(vec![pane_id]);
        let tiles = &self.tree.tiles;
        self.tile_order.retain(|t, _| tiles.get(*t).is_some());
        self.tile_order.insert(tabs, order);
        let row = match self.tree.root {
            Some(root)
                if matches!(
                    self.tree.tiles.get(root),
                    Some(egui_tiles::Tile::Container(egui_tiles::Container::Grid(_)))
                ) =>
            {
                root
            }
            Some(root) => self.tree.tiles.insert_grid_tile(vec![root]),
            None => self.tree.tiles.insert_grid_tile(vec![]),
        };
        if let Some(egui_tiles::Tile::Container(c)) = self.tree.tiles.get_mut(row) {
            let mut children: Vec<egui_tiles::TileId> = c.children().copied().collect();
            children.push(tabs);
            // Stable: views of one file stay in the order PaneKind gives them.
            children.sort_by_key(|t| self.tile_order.get(t).copied().unwrap_or(u64::MAX));
            // A new grid of these children (the shares and layout kept): emptying the old one
            // left a hole per child, laid out as cells until egui_tiles collapses them, so the
            // first frame drew every pane at the wrong width (and a big map's sums of that
            // width were started, then cancelled).
            let mut grid = egui_tiles::Grid::new(children);
            if let egui_tiles::Container::Grid(old) = c {
                grid.layout = old.layout;
                grid.col_shares = std::mem::take(&mut old.col_shares);
                grid.row_shares = std::mem::take(&mut old.row_shares);
            }
            *c = egui_tiles::Container::Grid(grid);
        }
        self.tree.root = Some(row);
        pane_id
    }
}

impl eframe::App for MemscapeApp {
    /// The panels' colour: the central panel is not filled (see `ui`).
    fn clear_color(&self, visuals: &egui::Visuals) -> [f32; 4] {
        visuals.panel_fill.to_normalized_gamma_f32()
    }

    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        let ctx = ui.ctx().clone();
        self.stats_overlay.frame_started(frame.info().cpu_usage);
        tracing::trace!(
            target: "memscape::frames",
            pass = ctx.cumulative_pass_nr(),
            cpu_ms = frame.info().cpu_usage.map(|s| s * 1e3),
            "frame ({:?})",
            ctx.repaint_causes()
        );
        if ctx.input(|i| i.key_pressed(stats_overlay::KEY)) {
            self.stats_overlay.shown = !self.stats_overlay.shown;
        }
        // Panes closed in an earlier frame: their GPU resources go now.
        if let Some(rs) = &self.render_state {
            GpuRegistry::release_closed(rs);
        }
        self.apply_file_events(&ctx);
        self.gpu_faults(&ctx);
        let dropped: Vec<PathBuf> = ctx.input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        });
        // Dropped together: samples map onto the one topology file among them.
        let (samples, _) = memscape_samples::pair_files(&dropped);
        self.pairs.extend(
            samples
                .into_iter()
                .filter_map(|s| Some((s.samples, s.hardware?)))
                .filter(|(_, h)| dropped.contains(h)),
        );
        for p in dropped {
            self.open(&ctx, LoadSource::File(p));
        }
        if let Some(p) = self.open_dialog.show(&ctx) {
            self.open(&ctx, LoadSource::File(p));
        }
        if let Some(message) = self.export.show(&ctx, self.render_state.as_ref()) {
            self.notice = Some(message);
        }

        // Presentation mode (F5, View menu): full screen, no menus or status bar, larger text;
        // Esc leaves it.
        let (f5, esc) = ctx.input(|i| {
            (
                i.key_pressed(egui::Key::F5),
                i.key_pressed(egui::Key::Escape),
            )
        });
        if f5 || (esc && self.presenting) {
            self.set_presenting(&ctx, !self.presenting);
        }
        if !self.presenting {
            egui::Panel::top("menu").show(ui, |ui| self.menu(&ctx, ui));
            egui::Panel::bottom("status").show(ui, |ui| self.status_bar(ui));
        }
        self.step_live_panes(&ctx);
        // No fill: the frame is cleared to the panel's colour (`clear_color`), and on a software
        // rasterizer a fill of the whole window is a large share of each frame's CPU.
        let central =
            egui::Frame::central_panel(&ctx.global_style()).fill(egui::Color32::TRANSPARENT);
        egui::CentralPanel::default().frame(central).show(ui, |ui| {
            if self.tree.root.is_none() {
                ui.centered_and_justified(|ui| {
                    if self.files.loader.is_idle() && self.live_done() {
                        ui.label(
                            "Drop a file here, or File ▸ Open… (heaptrack, CSV, memscape .msc)",
                        );
                    } else {
                        crate::panes::spinner(ui);
                    }
                });
            } else {
                let topologies: Vec<Arc<Dataset>> = self
                    .files
                    .files
                    .iter()
                    .filter_map(|f| f.dataset.clone())
                    .filter(|d| matches!(d.content, memscape_views::DatasetContent::Topology(_)))
                    .collect();
                let mut behavior = TreeBehavior {
                    cx: ViewContext {
                        render_state: self.render_state.as_ref(),
                        topologies: &topologies,
                    },
                    files: &self.files,
                    clicked: None,
                    requests: Vec::new(),
                    export: None,
                    overflows: Vec::new(),
                };
                self.tree.ui(&mut behavior, ui);
                if behavior.clicked.is_some() {
                    self.active_pane = behavior.clicked;
                }
                let requests = std::mem::take(&mut behavior.requests);
                let export = behavior.export;
                for overflow in &behavior.overflows {
                    tracing::debug!("{overflow}");
                }
                self.pane_overflow = behavior.overflows.into_iter().next();
                self.handle_requests(&ctx, requests);
                if let Some((id, format)) = export {
                    self.export_view(Some(id), format);
                }
            }
        });
        self.live_shown_by_panes(&ctx);

        self.stats_overlay.show(&ctx, self.render_state.as_ref());

        let live_done = self.live_done();
        if let Some(job) = &mut self.screenshot {
            // Views wake the window when what they wait for lands: the poll is a fallback,
            // paced on a software rasterizer (while a recording is live, as the live status).
            job.poll = if live_done {
                crate::panes::paced(std::time::Duration::from_millis(50))
            } else {
                crate::panes::fallback(std::time::Duration::from_millis(500))
            };
            // Only visible panes draw; hidden tabs would never become ready.
            let unready: Vec<String> = self
                .tree
                .active_tiles()
                .into_iter()
                .filter_map(|id| match self.tree.tiles.get(id) {
                    Some(egui_tiles::Tile::Pane(p)) if !p.view.is_ready() => Some(p.view.title()),
                    _ => None,
                })
                .collect();
            let views_ready = unready.is_empty();
            job.waiting_for = unready;
            // A file that failed beside others that loaded is in the screenshot (its error
            // pane) and in the exit status; when nothing loaded there is nothing to show.
            let idle = self.files.loader.is_idle();
            let file_failure = self.files.files.iter().find_map(|f| match &f.status {
                Status::Failed(e) => Some(e.clone()),
                _ => None,
            });
            let any_data = self.files.files.iter().any(|f| f.dataset.is_some());
            let fatal = file_failure.clone().filter(|_| idle && !any_data);
            let failure = file_failure
                .map(|e| (e, " in its pane beside the other files"))
                .or_else(|| self.pane_overflow.clone().map(|o| (o, "")));
            let ready = idle && live_done && any_data && views_ready;
            job.update(&ctx, ready, fatal, failure);
            if let Some(dir) = job.take_export() {
                let pictures = self
                    .tree
                    .active_tiles()
                    .into_iter()
                    .filter_map(|id| match self.tree.tiles.get(id) {
                        Some(egui_tiles::Tile::Pane(p)) => {
                            Some((p.view.title(), p.view.picture()?))
                        }
                        _ => None,
                    })
                    .collect();
                if let Err(e) = export::export_all(self.render_state.as_ref(), pictures, &dir) {
                    tracing::error!("exporting the views: {e:#}");
                }
            }
        }
    }
}

/// The health of the GUI's device (lost, errors no scope caught), for `run` to explain a
/// window that closed because the device was lost.
static GPU_HEALTH: std::sync::OnceLock<Arc<GpuHealth>> = std::sync::OnceLock::new();

/// Why the GUI's device was lost, once it was.
fn device_lost() -> Option<String> {
    GPU_HEALTH.get().and_then(|h| h.lost())
}

/// Runs the GUI until the window closes. Returns the screenshot outcome when one was asked for.
pub fn run(
    sources: Vec<LoadSource>,
    screenshot: Option<(PathBuf, std::time::Duration)>,
    window_size: (u32, u32),
    startup: Startup,
) -> anyhow::Result<Option<Result<PathBuf, String>>> {
    let outcome: screenshot::Outcome = Default::default();
    let job = screenshot.map(|(path, timeout)| ScreenshotJob::new(path, timeout, outcome.clone()));
    let options = eframe::NativeOptions {
        renderer: eframe::Renderer::Wgpu,
        viewport: egui::ViewportBuilder::default()
            .with_title("memscape")
            // Smaller, the four panes of a first layout have less room than their controls
            // take (the self-test then fails on a pane drawn past its edge). The minimum is a
            // hint to the window manager: the size asked for is raised to it here too.
            .with_inner_size([
                (window_size.0 as f32).max(MIN_WINDOW_SIZE[0]),
                (window_size.1 as f32).max(MIN_WINDOW_SIZE[1]),
            ])
            .with_min_inner_size(MIN_WINDOW_SIZE)
            .with_drag_and_drop(true),
        wgpu_options: wgpu_configuration(),
        ..Default::default()
    };
    let is_self_test = job.is_some();
    // After the device is lost, egui's renderer panics on its next buffer upload (eframe
    // cannot re-create its render state): the window closes and this says why, once, without
    // the panic's text; any other panic is reported as usual.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if device_lost().is_none() {
            hook(info);
        }
    }));
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        eframe::run_native(
            "memscape",
            options,
            Box::new(move |cc| Ok(Box::new(MemscapeApp::new(cc, sources, job, startup)))),
        )
    }));
    tracing::debug!("window closed");
    match run {
        Ok(run) => run.map_err(|e| anyhow::anyhow!("cannot open the window: {e}"))?,
        Err(panic) => match device_lost() {
            Some(why) => anyhow::bail!("the window closed: {}", GpuHealth::lost_message(&why)),
            None => std::panic::resume_unwind(panic),
        },
    }
    if let Some(why) = device_lost() {
        anyhow::bail!("the window closed: {}", GpuHealth::lost_message(&why));
    }
    if !is_self_test {
        return Ok(None);
    }
    let result = outcome
        .lock()
        .map_err(|_| anyhow::anyhow!("screenshot state poisoned"))?
        .take()
        .unwrap_or_else(|| Err("the window closed before the screenshot was taken".into()));
    Ok(Some(result))
}

/// eframe's wgpu set-up with the features and limits memscape's pipelines want, and the adapter
/// chosen by `MEMSCAPE_ADAPTER` (cpu|gpu|auto) like the headless renderer.
pub(crate) fn wgpu_configuration() -> egui_wgpu::WgpuConfiguration {
    use memscape_render::AdapterChoice;
    let mut setup = egui_wgpu::WgpuSetupCreateNew::without_display_handle();
    setup.device_descriptor = Arc::new(|adapter| {
        let mut limits = memscape_render::context::wanted_limits(adapter);
        limits.max_texture_dimension_2d = limits
            .max_texture_dimension_2d
            .max(8192)
            .min(adapter.limits().max_texture_dimension_2d);
        wgpu::DeviceDescriptor {
            label: Some("memscape::gui"),
            // Timestamp queries where the adapter has them: the frame-statistics overlay's
            // GPU times.
            required_features: memscape_render::context::wanted_features(adapter)
                | memscape_render::stats::timing_features(adapter),
            required_limits: limits,
            ..Default::default()
        }
    });
    let choice = AdapterChoice::from_env_or(AdapterChoice::Auto);
    if choice != AdapterChoice::Auto {
        setup.native_adapter_selector = Some(Arc::new(move |adapters, _surface| {
            adapters
                .iter()
                .find(|a| {
                    let software = a.get_info().device_type == wgpu::DeviceType::Cpu;
                    software == (choice == AdapterChoice::Cpu)
                })
                .cloned()
                .ok_or_else(|| format!("no adapter matches MEMSCAPE_ADAPTER ({choice:?})"))
        }));
    }
    egui_wgpu::WgpuConfiguration {
        wgpu_setup: egui_wgpu::WgpuSetup::CreateNew(setup),
        ..Default::default()
    }
}
