//! The GUI shell: menus, docking tabs (egui_tiles), the status bar with load progress, errors,
//! drag-and-drop, the open dialog and recent files. Panes live in `crate::panes`, the views they draw in `memscape_views`.

mod export;
mod live;
mod loader;
mod open_dialog;
pub mod present;
pub mod registry;
pub mod screenshot;
mod stats_overlay;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use memscape_views::gpu::GpuRegistry;
use memscape_views::{Dataset, LoadSource};

use crate::panes::{View, ViewContext};
use loader::Loader;
use registry::PaneKind;
use screenshot::ScreenshotJob;

/// One docked view.
/// Where "Record tour step" appends (in the current directory).
const TOUR_FILE: &str = "memscape-tour.toml";

pub struct Pane {
    view: Box<dyn View>,
}

struct TreeBehavior<'a> {
    cx: ViewContext<'a>,
    /// The pane the user clicked in this frame, if any.
    clicked: Option<egui_tiles::TileId>,
    /// "Export view as SVG/PNG…" chosen in a tab's context menu this frame.
    export: Option<(egui_tiles::TileId, export::ExportFormat)>,
}

impl egui_tiles::Behavior<Pane> for TreeBehavior<'_> {
    fn tab_title_for_pane(&mut self, pane: &Pane) -> egui::WidgetText {
        pane.view.title().into()
    }

    fn on_tab_button(
        &mut self,
        tiles: &mut egui_tiles::Tiles<Pane>,
        tile_id: egui_tiles::TileId,
        button_response: egui::Response,
    ) -> egui::Response {
        let exportable = matches!(tiles.get(tile_id), Some(egui_tiles::Tile::Pane(p)) if p.view.picture().is_some());
        if exportable {
            button_response.context_menu(|ui| {
                for (label, format) in [
                    ("Export view as SVG…", export::ExportFormat::Svg),
                    ("Export view as PNG…", export::ExportFormat::Png),
                ] {
                    if ui.button(label).clicked() {
                        self.export = Some((tile_id, format));
                        ui.close();
                    }
                }
            });
        }
        button_response
    }

    fn pane_ui(
        &mut self,
        ui: &mut egui::Ui,
        tile_id: egui_tiles::TileId,
        pane: &mut Pane,
    ) -> egui_tiles::UiResponse {
        pane.view.ui(ui, &self.cx);
        if ui.ui_contains_pointer() && ui.input(|i| i.pointer.any_pressed()) {
            self.clicked = Some(tile_id);
        }
        egui_tiles::UiResponse::None
    }

    fn is_tab_closable(
        &self,
        _tiles: &egui_tiles::Tiles<Pane>,
        _tile_id: egui_tiles::TileId,
    ) -> bool {
        true
    }

    fn simplification_options(&self) -> egui_tiles::SimplificationOptions {
        egui_tiles::SimplificationOptions {
            all_panes_must_have_tabs: true,
            ..Default::default()
        }
    }
}

pub struct MemscapeApp {
    loader: Loader,
    datasets: Vec<Arc<Dataset>>,
    tree: egui_tiles::Tree<Pane>,
    errors: Vec<String>,
    recent: Vec<PathBuf>,
    open_dialog: open_dialog::OpenDialog,
    screenshot: Option<ScreenshotJob>,
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
    /// Recordings followed while they run (`--live`).
    live: Vec<live::LiveFeed>,
    /// `memscape view --diff A B`: the two loads compared once both are in (and what has
    /// arrived of them).
    compare: Option<Compare>,
    /// Samples files and the topology file each maps onto (opened together).
    pairs: Vec<(PathBuf, PathBuf)>,
}

/// What `memscape view` asks of the shell besides the files.
#[derive(Debug, Default)]
pub struct Startup {
    /// Compare the first two files in one difference pane (`--diff A B`).
    pub compare: bool,
    /// Samples files and the topology file each is to map onto.
    pub pairs: Vec<(PathBuf, PathBuf)>,
    /// Start with the frame-statistics overlay shown (`--frame-stats`).
    pub frame_stats: bool,
    /// Recordings to follow while they run (`record --live`, `view --live`).
    pub live: Vec<memscape_views::live::LiveReceiver>,
}

/// Two loads to compare in a difference pane when both have finished.
struct Compare {
    ids: [loader::LoadId; 2],
    loaded: [Option<Arc<Dataset>>; 2],
}

impl MemscapeApp {
    pub fn new(
        cc: &eframe::CreationContext<'_>,
        sources: Vec<LoadSource>,
        screenshot: Option<ScreenshotJob>,
        startup: Startup,
    ) -> Self {
        let render_state = cc.wgpu_render_state.clone();
        let mut errors = Vec::new();
        if let Some(rs) = &render_state {
            if let Err(e) = GpuRegistry::install(rs) {
                errors.push(format!("GPU pipelines: {e}"));
            }
            let info = rs.adapter.get_info();
            tracing::info!(
                "GUI renders on {} [{:?}, {:?}]",
                info.name,
                info.device_type,
                info.backend
            );
        }
        let mut app = Self {
            loader: Loader::new(),
            datasets: Vec::new(),
            tree: egui_tiles::Tree::empty(egui::Id::unique("memscape-tiles")),
            errors,
            recent: loader::load_recent(),
            open_dialog: open_dialog::OpenDialog::new(),
            screenshot,
            render_state,
            presenting: false,
            active_pane: None,
            notice: None,
            export: export::ExportDialog::new(),
            tile_order: HashMap::new(),
            stats_overlay: stats_overlay::StatsOverlay::new(startup.frame_stats),
            live: startup.live.into_iter().map(live::LiveFeed::new).collect(),
            compare: None,
            pairs: startup.pairs,
        };
        let ids: Vec<loader::LoadId> = sources
            .into_iter()
            .map(|s| app.open(&cc.egui_ctx, s))
            .collect();
        if let (true, [a, b, ..]) = (startup.compare, ids.as_slice()) {
            app.compare = Some(Compare {
                ids: [*a, *b],
                loaded: [None, None],
            });
        }
        app
    }

    /// Whether a freshly loaded dataset is one of `--diff`'s two (it then opens no panes of
    /// its own); opens the difference pane when both are in.
    fn take_for_compare(
        &mut self,
        ctx: &egui::Context,
        id: loader::LoadId,
        d: &Arc<Dataset>,
    ) -> bool {
        let Some(c) = &mut self.compare else {
            return false;
        };
        let Some(k) = c.ids.iter().position(|i| *i == id) else {
            return false;
        };
        c.loaded[k] = Some(d.clone());
        if let [Some(a), Some(b)] = &c.loaded {
            let (a, b) = (a.clone(), b.clone());
            self.compare = None;
            self.add_compare(ctx, a, b);
        }
        true
    }

    /// Pairs a loaded samples dataset with its topology file (it maps onto it from the
    /// start); true for a topology file that samples are paired with: it opens no panes of
    /// its own, the samples' views show it.
    fn pair(&mut self, dataset: &Arc<Dataset>) -> bool {
        let path = PathBuf::from(&dataset.name);
        match &dataset.content {
            memscape_views::DatasetContent::Samples(_) => {
                if let Some((_, hw)) = self.pairs.iter().find(|(s, _)| *s == path) {
                    dataset.links.set_topology(Some(hw.clone()));
                }
                false
            }
            memscape_views::DatasetContent::Topology(_) => {
                self.pairs.iter().any(|(_, h)| *h == path)
            }
            _ => false,
        }
    }

    /// A difference pane of `a` and `b`.
    fn add_compare(&mut self, ctx: &egui::Context, a: Arc<Dataset>, b: Arc<Dataset>) {
        let view = Box::new(crate::panes::diff::DiffPane::new(a, b, ctx));
        self.add_pane(Pane { view }, u64::MAX);
    }

    fn open(&mut self, ctx: &egui::Context, source: LoadSource) -> loader::LoadId {
        if let LoadSource::File(p) = &source {
            let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
            loader::remember_recent(&mut self.recent, p);
        }
        let ctx = ctx.clone();
        self.loader.start(source, move || ctx.request_repaint())
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
        order: u64,
    ) -> egui_tiles::TileId {
        let pane = Pane {
            view: kind.create(dataset, ctx),
        };
        self.add_pane(pane, order)
    }

    /// Adds `pane` in its own tab to the grid, placed by `order` (see `add_view`); returns its
    /// tile.
    fn add_pane(&mut self, pane: Pane, order: u64) -> egui_tiles::TileId {
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
            c.retain(|_| false);
            for child in children {
                c.add_child(child);
            }
        }
        self.tree.root = Some(row);
        pane_id
    }

    fn menu(&mut self, ctx: &egui::Context, ui: &mut egui::Ui) {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                if ui.button("Open…").clicked() {
                    self.open_dialog.open = true;
                    ui.close();
                }
                if ui.button("Open the demo").clicked() {
                    for s in memscape_views::demo::sources() {
                        self.open(ctx, s);
                    }
                    ui.close();
                }
                ui.menu_button("Recent", |ui| {
                    if self.recent.is_empty() {
                        ui.label("nothing yet");
                    }
                    for p in self.recent.clone() {
                        if ui.button(p.display().to_string()).clicked() {
                            self.open(ctx, LoadSource::File(p));
                            ui.close();
                        }
                    }
                });
                ui.separator();
                if ui.button("Quit").clicked() {
                    ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                }
            });
            ui.menu_button("View", |ui| {
                if ui.button("Presentation mode (F5)").clicked() {
                    let ctx = ui.ctx().clone();
                    self.set_presenting(&ctx, true);
                    ui.close();
                }
                ui.checkbox(
                    &mut self.stats_overlay.shown,
                    format!("Frame statistics ({})", stats_overlay::KEY_NAME),
                )
                .on_hover_text(
                    "frame and CPU times, GPU time per pass, the path each allocation map took",
                );
                if ui
                    .button("Record tour step")
                    .on_hover_text(format!(
                        "append the state of the last clicked view to {TOUR_FILE} (memscape present / render-tour)"
                    ))
                    .clicked()
                {
                    self.record_tour_step();
                    ui.close();
                }
                for (label, format) in [
                    ("Export view as SVG…", export::ExportFormat::Svg),
                    ("Export view as PNG…", export::ExportFormat::Png),
                ] {
                    if ui
                        .button(label)
                        .on_hover_text("the last clicked view as it is drawn now (also: right-click its tab)")
                        .clicked()
                    {
                        self.export_view(None, format);
                        ui.close();
                    }
                }
                ui.separator();
                if self.datasets.is_empty() {
                    ui.label("open a file first");
                }
                for d in self.datasets.clone() {
                    ui.menu_button(&d.name, |ui| {
                        for kind in PaneKind::ALL {
                            match kind.accepts(&d) {
                                Ok(()) => {
                                    if ui.button(kind.name()).clicked() {
                                        self.add_view(ui.ctx(), *kind, d.clone(), u64::MAX);
                                        ui.close();
                                    }
                                }
                                Err(why) => {
                                    ui.add_enabled(false, egui::Button::new(kind.name()))
                                        .on_disabled_hover_text(why);
                                }
                            }
                        }
                    });
                }
                self.compare_menu(ui);
            });
            ui.menu_button("Help", |ui| {
                ui.label("Scroll: zoom (shift: time only, ctrl: addresses only)");
                ui.label("Drag: pan · double-click: reset the view");
                ui.label("Drop files on the window to open them");
                ui.label(format!(
                    "{}: frame statistics · F5: presentation mode",
                    stats_overlay::KEY_NAME
                ));
            });
        });
    }

    /// View ▸ Compare: A ▸ B, over the open datasets that have a heap.
    fn compare_menu(&mut self, ui: &mut egui::Ui) {
        let heaps: Vec<Arc<Dataset>> = self
            .datasets
            .iter()
            .filter(|d| memscape_views::heap_tree::accepts(d).is_ok())
            .cloned()
            .collect();
        ui.separator();
        if heaps.len() < 2 {
            ui.add_enabled(false, egui::Button::new("Compare two runs"))
                .on_disabled_hover_text(
                    "open two allocation traces, massif files or heap profiles first",
                );
            return;
        }
        ui.menu_button("Compare two runs", |ui| {
            for a in &heaps {
                ui.menu_button(format!("A: {}", a.name), |ui| {
                    for b in heaps.iter().filter(|b| !Arc::ptr_eq(a, b)) {
                        if ui.button(format!("B: {}", b.name)).clicked() {
                            self.add_compare(ui.ctx(), a.clone(), b.clone());
                            ui.close();
                        }
                    }
                });
            }
        });
    }

    fn status_bar(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            for p in &self.loader.pending {
                ui.spinner();
                if p.fraction >= 0.0 {
                    ui.add(
                        egui::ProgressBar::new(p.fraction)
                            .desired_width(120.0)
                            .show_percentage(),
                    );
                }
                ui.label(format!("{}: {}", p.name, p.message));
                ui.separator();
            }
            if let Some(n) = &self.notice {
                ui.label(n);
                ui.separator();
            }
            self.live_status(ui);
            if self.loader.is_idle() {
                ui.label(format!("{} file(s) loaded", self.datasets.len()));
            }
            if let Some(rs) = &self.render_state {
                let info = rs.adapter.get_info();
                ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                    ui.weak(format!("{} · {:?}", info.name, info.backend));
                });
            }
        });
        let mut dismiss = None;
        for (i, e) in self.errors.iter().enumerate() {
            ui.horizontal(|ui| {
                ui.colored_label(egui::Color32::from_rgb(255, 120, 110), format!("⚠ {e}"));
                if ui.small_button("dismiss").clicked() {
                    dismiss = Some(i);
                }
            });
        }
        if let Some(i) = dismiss {
            self.errors.remove(i);
        }
    }
}

impl eframe::App for MemscapeApp {
    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        let ctx = ui.ctx().clone();
        self.stats_overlay.frame_started(frame.info().cpu_usage);
        if ctx.input(|i| i.key_pressed(stats_overlay::KEY)) {
            self.stats_overlay.shown = !self.stats_overlay.shown;
        }
        // Panes closed in an earlier frame: their GPU resources go now.
        if let Some(rs) = &self.render_state {
            GpuRegistry::release_closed(rs);
        }
        self.poll_live(&ctx);
        let mut first_failure = None;
        for (id, name, result) in self.loader.poll() {
            match result {
                Ok(dataset) => {
                    if !self.take_for_compare(&ctx, id, &dataset) && !self.pair(&dataset) {
                        for kind in PaneKind::defaults_for(&dataset) {
                            self.add_view(&ctx, kind, dataset.clone(), id);
                        }
                    }
                    self.datasets.push(dataset);
                }
                Err(e) => {
                    tracing::error!("{e}");
                    first_failure.get_or_insert_with(|| e.clone());
                    self.errors.push(if e.contains(&name) {
                        e
                    } else {
                        format!("{name}: {e}")
                    });
                }
            }
        }
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
        egui::CentralPanel::default().show(ui, |ui| {
            if self.tree.root.is_none() {
                ui.centered_and_justified(|ui| {
                    if self.loader.is_idle() && self.live_done() {
                        ui.label(
                            "Drop a file here, or File ▸ Open… (heaptrack, CSV, memscape .msc)",
                        );
                    } else {
                        ui.spinner();
                    }
                });
            } else {
                let topologies: Vec<Arc<Dataset>> = self
                    .datasets
                    .iter()
                    .filter(|d| matches!(d.content, memscape_views::DatasetContent::Topology(_)))
                    .cloned()
                    .collect();
                let mut behavior = TreeBehavior {
                    cx: ViewContext {
                        render_state: self.render_state.as_ref(),
                        topologies: &topologies,
                    },
                    clicked: None,
                    export: None,
                };
                self.tree.ui(&mut behavior, ui);
                if behavior.clicked.is_some() {
                    self.active_pane = behavior.clicked;
                }
                if let Some((id, format)) = behavior.export {
                    self.export_view(Some(id), format);
                }
            }
        });

        self.stats_overlay.show(&ctx, self.render_state.as_ref());

        let live_done = self.live_done();
        if let Some(job) = &mut self.screenshot {
            // Only visible panes draw; hidden tabs would never become ready.
            let views_ready =
                self.tree
                    .active_tiles()
                    .into_iter()
                    .all(|id| match self.tree.tiles.get(id) {
                        Some(egui_tiles::Tile::Pane(p)) => p.view.is_ready(),
                        _ => true,
                    });
            let ready =
                self.loader.is_idle() && live_done && !self.datasets.is_empty() && views_ready;
            job.update(&ctx, ready, first_failure);
            if job.is_requested()
                && let Some(dir) = job.export_dir.take()
            {
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
            .with_inner_size([window_size.0 as f32, window_size.1 as f32])
            .with_drag_and_drop(true),
        wgpu_options: wgpu_configuration(),
        ..Default::default()
    };
    let is_self_test = job.is_some();
    eframe::run_native(
        "memscape",
        options,
        Box::new(move |cc| Ok(Box::new(MemscapeApp::new(cc, sources, job, startup)))),
    )
    .map_err(|e| anyhow::anyhow!("cannot open the window: {e}"))?;
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
