//! The allocation-map pane: bins, camera (animated zoom, pan, keyboard), controls, GPU picking,
//! cushion cursors, the context view, and the GPU paint callbacks.
//!
//! Heavy work runs on the pane's worker thread (`memscape-allocmap`): splitting into bins,
//! colouring blocks, building the occupancy bars. The UI thread sends it the wanted state through
//! a bounded channel and takes finished results from another; it never touches every block.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crossbeam_channel::{Receiver, Sender, TrySendError};
use memscape_render::alloc_map::{
    AllocBlockGpu, AllocMapData, AllocMapFrame, AllocMapPicker, AllocMapPipelines, AllocMapView,
    BarBlocks, BlockTimeGpu, ColorMode, CursorOverlay, CursorPipelines, CursorStyle, CushionCursor,
    CushionKind, DrawOptions, OccupancyBarData, OccupancyBarFrame, OccupancyBarView,
    OccupancyVariant, SelectionBits, SelectionStyle, TimeMapping,
};

use super::draw::{self, DecorateInputs, Panels, decorate};
use super::model::{
    BinLayout, Camera, axis_time_of_events, events_at, selection_bits, variant_key, variant_label,
};
use crate::data::Dataset;
use crate::scene::{BinBy, BinnedScene, ColorBy, TimeAxis};
use crate::views::picture::Picture;
use crate::views::shapes_paint::{self, ShapesCallback};
use crate::views::{View, ViewContext, labels};

/// GPU resources of every allocation-map pane, kept in egui-wgpu's callback resources.
pub struct AllocMapGpu {
    pipelines: AllocMapPipelines,
    cursors: CursorPipelines,
    /// The format of egui's render target, which the resolve pass writes.
    target_format: wgpu::TextureFormat,
    panes: HashMap<u64, PaneGpu>,
}

/// One pane's uploads and per-view frames.
struct PaneGpu {
    data: Option<AllocMapData>,
    /// (binning generation, time axis, colour version) the upload holds.
    data_key: (u64, TimeAxis, u64),
    selection_version: u64,
    bar: Option<OccupancyBarData>,
    bar_key: u64,
    frames: HashMap<Slot, AllocMapFrame>,
    bar_frames: HashMap<Slot, OccupancyBarFrame>,
    /// What each frame's accumulation was last recorded for: an unchanged view is not drawn
    /// again (hover and animation elsewhere cost only the resolve).
    prepared: HashMap<(Slot, bool), u64>,
    cursors: CursorOverlay,
    cursors_frame: u64,
    picker: AllocMapPicker,
    /// What each pick request asked.
    asked: HashMap<u64, PickTag>,
    polled_frame: u64,
}

impl AllocMapGpu {
    pub fn new(
        device: &wgpu::Device,
        target_format: wgpu::TextureFormat,
    ) -> Result<Self, memscape_render::RenderError> {
        Ok(Self {
            pipelines: AllocMapPipelines::new(device)?,
            cursors: CursorPipelines::new(device)?,
            target_format,
            panes: HashMap::new(),
        })
    }

    /// Frees the uploads and frames of closed panes.
    pub fn release(&mut self, released: &[u64]) {
        crate::views::forget_released(&mut self.panes, released);
    }
}

/// Which view of a pane a frame belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Slot {
    Cell(usize),
    Context,
    Stacked,
}

/// What a pick request was for: the answer applies while the pointer and camera stay put.
#[derive(Debug, Clone, Copy, PartialEq)]
struct PickTag {
    bin: usize,
    pos: egui::Pos2,
    camera: Camera,
    data_gen: u64,
}

/// A GPU pick's answer: the upload position of the block under the pointer, if any.
#[derive(Debug, Clone, Copy, PartialEq)]
struct PickAnswer {
    tag: PickTag,
    position: Option<usize>,
}

/// What the worker thread is asked to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Wanted {
    by: BinBy,
    axis: TimeAxis,
    color_by: ColorBy,
    /// Events from which age is seen (only for [`ColorBy::Age`]; else 0).
    age_at: u64,
}

struct Built {
    wanted: Wanted,
    binned: Arc<BinnedScene>,
    blocks: Arc<Vec<AllocBlockGpu>>,
    bar: Arc<BarBlocks>,
}

/// The worker: bins, colours and bars for the wanted state; results cached per binning.
fn spawn_worker(dataset: Arc<Dataset>) -> Option<(Sender<Wanted>, Receiver<Built>)> {
    let (tx_job, rx_job) = crossbeam_channel::bounded::<Wanted>(4);
    let (tx_done, rx_done) = crossbeam_channel::bounded::<Built>(2);
    let spawned = std::thread::Builder::new()
        .name("memscape-allocmap".into())
        .spawn(move || {
            let Some(t) = dataset.alloc_trace() else {
                return;
            };
            let Some(scene) = t.scene.as_ref() else {
                return;
            };
            let mut binned: HashMap<BinBy, Arc<BinnedScene>> = HashMap::new();
            let mut bars: HashMap<(BinBy, TimeAxis), Arc<BarBlocks>> = HashMap::new();
            while let Ok(mut wanted) = rx_job.recv() {
                // Only the latest wish matters.
                while let Ok(w) = rx_job.try_recv() {
                    wanted = w;
                }
                let b = binned
                    .entry(wanted.by)
                    .or_insert_with(|| Arc::new(BinnedScene::build(&t.trace, scene, wanted.by)))
                    .clone();
                let bar = bars
                    .entry((wanted.by, wanted.axis))
                    .or_insert_with(|| {
                        Arc::new(b.bar_blocks(wanted.axis, scene.time_extent(wanted.axis)))
                    })
                    .clone();
                let age_at = if wanted.color_by == ColorBy::Age {
                    wanted.age_at
                } else {
                    scene.events_extent
                };
                let colors = scene.block_colors(&t.trace, wanted.color_by, &b.block_bin, age_at);
                let blocks = Arc::new(b.colored(&colors));
                let built = Built {
                    wanted,
                    binned: b,
                    blocks,
                    bar,
                };
                if tx_done.send(built).is_err() {
                    return;
                }
            }
        });
    match spawned {
        Ok(_) => Some((tx_job, rx_done)),
        Err(e) => {
            tracing::error!("allocation map worker thread: {e}");
            None
        }
    }
}

pub struct AllocMapPane {
    key: crate::views::PaneKey,
    dataset: Arc<Dataset>,
    color_by: ColorBy,
    axis: TimeAxis,
    alpha: f32,
    cushion: CushionKind,
    cushion_strength: f32,
    bin_by: BinBy,
    layout: BinLayout,
    occupancy: Option<OccupancyVariant>,
    show_context: bool,
    /// The shown binning, its coloured blocks and bars, and what they were made for.
    binned: Arc<BinnedScene>,
    blocks: Arc<Vec<AllocBlockGpu>>,
    bar: Option<Arc<BarBlocks>>,
    shown: Wanted,
    /// Bumped whenever `binned` (data_gen) or `blocks` (color_version) change.
    data_gen: u64,
    color_version: u64,
    worker: Option<(Sender<Wanted>, Receiver<Built>)>,
    requested: Option<Wanted>,
    /// The camera shown and the one it moves to (animated zoom).
    camera: Option<Camera>,
    target: Option<Camera>,
    drawn: Arc<AtomicBool>,
    /// The dataset's highlight version the selection bits were made for.
    seen_highlight: u64,
    selection: Option<(u64, Arc<SelectionBits>)>,
    /// Cushion cursors, in events (so they survive a change of the time axis).
    cursors: Vec<u64>,
    cursor_opacity: f32,
    /// Plain clicks drop cursors instead of pinning blocks.
    cursor_mode: bool,
    pinned: Option<usize>,
    answers: Arc<Mutex<Option<PickAnswer>>>,
    /// The bin the context view shows (the last one hovered).
    focus_bin: usize,
    /// The pane's rectangle at the last frame (a tour step records the camera's ranges).
    last_map: Option<egui::Rect>,
    box_start: Option<egui::Pos2>,
    context_drag: Option<(egui::Pos2, Camera)>,
    frame: u64,
}

/// Height of the controls is whatever egui gives them; the cushion cursors' width in points.
const CURSOR_WIDTH: f32 = 15.0;

impl AllocMapPane {
    pub fn new(dataset: Arc<Dataset>) -> Self {
        let scene = dataset.alloc_trace().and_then(|t| t.scene.as_ref());
        let color_by = scene.map_or(ColorBy::Thread, |s| s.color_by);
        let (binned, blocks) = match scene {
            Some(s) => (Arc::new(BinnedScene::unbinned(s)), s.blocks.clone()),
            None => (
                Arc::new(BinnedScene {
                    by: BinBy::None,
                    bins: Vec::new(),
                    order: None,
                    position: None,
                    block_bin: Arc::default(),
                    blocks: Arc::default(),
                    times_events: Arc::default(),
                    times_wall: Arc::default(),
                    metrics: Arc::new(memscape_trace::metrics::BinMetrics {
                        series: Vec::new(),
                        extents: Vec::new(),
                        has_gaps: false,
                    }),
                }),
                Arc::default(),
            ),
        };
        let shown = Wanted {
            by: BinBy::None,
            axis: TimeAxis::Events,
            color_by,
            age_at: 0,
        };
        let worker = scene.and_then(|_| spawn_worker(dataset.clone()));
        Self {
            key: crate::views::PaneKey::new(),
            dataset,
            color_by,
            axis: TimeAxis::Events,
            alpha: 0.5,
            cushion: CushionKind::Parabolic,
            cushion_strength: 1.0,
            bin_by: BinBy::None,
            layout: BinLayout::Address,
            occupancy: Some(OccupancyVariant::Flat),
            show_context: true,
            binned,
            blocks,
            bar: None,
            shown,
            data_gen: 1,
            color_version: 1,
            worker,
            requested: None,
            camera: None,
            target: None,
            drawn: Arc::new(AtomicBool::new(false)),
            seen_highlight: 0,
            selection: None,
            cursors: Vec::new(),
            cursor_opacity: 0.8,
            cursor_mode: false,
            pinned: None,
            answers: Arc::new(Mutex::new(None)),
            focus_bin: 0,
            last_map: None,
            box_start: None,
            context_drag: None,
            frame: 0,
        }
    }

    fn wanted(&self, time_events: Option<u64>, events_extent: u64) -> Wanted {
        Wanted {
            by: self.bin_by,
            axis: self.axis,
            color_by: self.color_by,
            age_at: if self.color_by == ColorBy::Age {
                time_events.unwrap_or(events_extent)
            } else {
                0
            },
        }
    }

    /// Sends the wanted state to the worker when it changed; takes finished results.
    fn sync_worker(&mut self, wanted: Wanted) {
        let Some((tx, rx)) = self.worker.clone() else {
            return;
        };
        if self.requested != Some(wanted) {
            match tx.try_send(wanted) {
                Ok(()) => self.requested = Some(wanted),
                Err(TrySendError::Full(_)) => {}
                Err(TrySendError::Disconnected(_)) => {
                    tracing::error!("allocation map worker stopped");
                    self.worker = None;
                }
            }
        }
        while let Ok(built) = rx.try_recv() {
            if !Arc::ptr_eq(&built.binned, &self.binned) {
                self.binned = built.binned;
                self.data_gen += 1;
                self.seen_highlight = u64::MAX;
                self.pinned = None;
                self.focus_bin = self.binned.largest_bin();
                if let Ok(mut a) = self.answers.lock() {
                    *a = None;
                }
            }
            self.blocks = built.blocks;
            self.bar = Some(built.bar);
            self.color_version += 1;
            self.shown = built.wanted;
        }
    }

    fn busy(&self) -> bool {
        self.worker.is_some() && (self.requested != Some(self.shown) || self.bar.is_none())
    }

    fn controls(&mut self, ui: &mut egui::Ui) {
        ui.horizontal_wrapped(|ui| {
            ui.label("α");
            ui.add(egui::Slider::new(&mut self.alpha, 0.05..=2.0).logarithmic(true))
                .on_hover_text("bias of the anti-aliasing: low α shows few, thin blocks strongly");
            egui::ComboBox::from_id_salt(("cushion", self.key.get()))
                .selected_text(format!("{:?} cushion", self.cushion))
                .show_ui(ui, |ui| {
                    for k in [
                        CushionKind::Parabolic,
                        CushionKind::Plateau,
                        CushionKind::None,
                    ] {
                        ui.selectable_value(&mut self.cushion, k, format!("{k:?}"));
                    }
                });
            ui.add(egui::Slider::new(&mut self.cushion_strength, 0.0..=3.0).text("relief"));
            ui.separator();
            ui.selectable_value(&mut self.axis, TimeAxis::Events, "event index");
            ui.selectable_value(&mut self.axis, TimeAxis::Wall, "wall time");
            ui.separator();
            egui::ComboBox::from_id_salt(("color", self.key.get()))
                .selected_text(format!("colour: {}", self.color_by.name()))
                .show_ui(ui, |ui| {
                    for c in ColorBy::ALL {
                        ui.selectable_value(&mut self.color_by, c, c.name());
                    }
                });
        });
        ui.horizontal_wrapped(|ui| {
            let before = self.bin_by;
            egui::ComboBox::from_id_salt(("bins", self.key.get()))
                .selected_text(self.bin_by.name())
                .show_ui(ui, |ui| {
                    for b in BinBy::ALL {
                        ui.selectable_value(&mut self.bin_by, b, b.name());
                    }
                })
                .response
                .on_hover_text("one view per bin, each with its own collapsed address axis");
            if before != self.bin_by {
                self.target = Some(self.camera.map_or_else(
                    || Camera::fit(1),
                    |c| Camera {
                        y0: 0.0,
                        y_span: 1.0,
                        ..c
                    },
                ));
            }
            if self.bin_by != BinBy::None {
                ui.selectable_value(&mut self.layout, BinLayout::Address, "address-aligned")
                    .on_hover_text(
                        "bins side by side, each bin's address axis scaled to the same height: \
                         relative occupancy compares",
                    );
                ui.selectable_value(&mut self.layout, BinLayout::Time, "time-aligned")
                    .on_hover_text("bins stacked on one time axis: activity compares");
            }
            ui.separator();
            egui::ComboBox::from_id_salt(("occupancy", self.key.get()))
                .selected_text(self.occupancy.map_or("no occupancy bar", variant_label))
                .show_ui(ui, |ui| {
                    for v in OccupancyVariant::ALL {
                        ui.selectable_value(&mut self.occupancy, Some(v), variant_label(v));
                    }
                    ui.selectable_value(&mut self.occupancy, None, "no occupancy bar");
                })
                .response
                .on_hover_text(
                    "per time column, the bin's bytes in use (blue empty → red full); idle gaps \
                     are stretches without an allocation or free at least 4 pixels wide",
                );
            ui.checkbox(&mut self.show_context, "context")
                .on_hover_text("the whole map in miniature; drag its red frame to scroll");
            ui.separator();
            ui.toggle_value(&mut self.cursor_mode, "cursor mode")
                .on_hover_text(
                    "click: pin the block under the pointer (alt-click drops a cushion cursor). \
                 In cursor mode (key C) a click drops a cushion cursor and alt-click pins. \
                 Clicking a cursor again removes it.",
                );
            if !self.cursors.is_empty() {
                ui.spacing_mut().slider_width = 60.0;
                ui.add(egui::Slider::new(&mut self.cursor_opacity, 0.0..=1.0).text("cursors"))
                    .on_hover_text("opacity of the cushion cursors");
                if ui.small_button("clear cursors").clicked() {
                    self.cursors.clear();
                }
            }
            if ui
                .button("fit")
                .on_hover_text("Home, or double-click")
                .clicked()
            {
                self.fit();
            }
        });
    }

    fn fit(&mut self) {
        if let Some(scene) = self.dataset.alloc_trace().and_then(|t| t.scene.as_ref()) {
            self.target = Some(Camera::fit(scene.time_extent(self.axis)));
        }
    }
}

impl View for AllocMapPane {
    fn title(&self) -> String {
        format!("Allocation map · {}", self.dataset.name)
    }

    fn tour_step(&self) -> Option<crate::tour::StepSpec> {
        let t = self.dataset.alloc_trace()?;
        let scene = t.scene.as_ref()?;
        let mut step = crate::tour::StepSpec {
            file: Some(crate::views::tour_file_of(&self.dataset)),
            view: Some("alloc-map".to_owned()),
            alpha: Some(self.alpha),
            cushion: Some(
                match self.cushion {
                    CushionKind::None => "none",
                    CushionKind::Parabolic => "parabolic",
                    CushionKind::Plateau => "plateau",
                }
                .to_owned(),
            ),
            color: Some(self.color_by.key().to_owned()),
            time: Some(
                match self.axis {
                    TimeAxis::Events => "events",
                    TimeAxis::Wall => "wall",
                }
                .to_owned(),
            ),
            ..Default::default()
        };
        // Bins, layout, bars, context and cursors as `memscape render` names them.
        step.bins = Some(
            match self.bin_by {
                BinBy::None => "none",
                BinBy::Region => "region",
                BinBy::Size => "size",
                BinBy::Thread => "thread",
            }
            .to_owned(),
        );
        step.layout = Some(
            match self.layout {
                BinLayout::Address => "address",
                BinLayout::Time => "time",
            }
            .to_owned(),
        );
        let mut panels = vec!["main"];
        if let Some(variant) = self.occupancy {
            panels.push("occupancy");
            step.occupancy = Some(super::model::occupancy_arg_name(variant).to_owned());
        }
        if self.show_context {
            panels.push("context");
        }
        step.panels = Some(panels.join(","));
        step.cursors = Some(
            self.cursors
                .iter()
                .map(|&events| super::model::axis_time_of_events(&t.trace, self.axis, events))
                .collect(),
        );
        step.cursor_opacity = Some(self.cursor_opacity);
        if let Some(cam) = &self.camera {
            let t0 = cam.t0.max(0.0) as u64;
            let t1 = (cam.t0 + cam.t_span).max(1.0) as u64;
            step.range_time = Some([t0, t1.max(t0 + 1)]);
            if self.bin_by == BinBy::None {
                let e = scene.collapsed_extent as f64;
                let y0 = (cam.y0 * e).max(0.0) as u64;
                let y1 = (((cam.y0 + cam.y_span) * e) as u64)
                    .min(scene.collapsed_extent.saturating_sub(1));
                // Addresses must lie in used regions; a camera edge in a gap keeps all regions.
                if let (Some((_, a0)), Some((_, a1))) = (scene.uncollapse(y0), scene.uncollapse(y1))
                    && a1 > a0
                {
                    step.range_addr = Some([a0, a1 + 1]);
                }
            }
        }
        Some(step)
    }

    fn is_ready(&self) -> bool {
        self.drawn.load(Ordering::Acquire) && !self.busy()
    }

    fn ui(&mut self, ui: &mut egui::Ui, cx: &ViewContext<'_>) {
        let dataset = self.dataset.clone();
        let Some((t, scene)) = dataset
            .alloc_trace()
            .and_then(|t| Some((t, t.scene.as_ref()?)))
        else {
            ui.label("This trace has no addresses: the allocation map needs heaptrack --raw, CSV or memscape's own format.");
            return;
        };
        self.frame += 1;
        // Controls that overflow their row must not widen the map past the pane.
        let width = ui.available_width();
        let axis_before = self.axis;
        self.controls(ui);
        if axis_before != self.axis {
            // Keep the same stretch of the trace on screen on the other axis.
            if let Some(c) = self.camera {
                let conv = |v: f64| {
                    let e = events_at(&t.trace, axis_before, v.max(0.0) as u64);
                    axis_time_of_events(&t.trace, self.axis, e) as f64
                };
                let (a, b) = (conv(c.t0), conv(c.t0 + c.t_span));
                let cam = Camera {
                    t0: a,
                    t_span: (b - a).max(1.0),
                    ..c
                };
                self.camera = Some(cam);
                self.target = Some(cam);
            }
        }
        let links = self.dataset.links.get();
        let wanted = self.wanted(links.time_events, scene.events_extent);
        self.sync_worker(wanted);
        if self.busy() {
            ui.ctx()
                .request_repaint_after(std::time::Duration::from_millis(50));
        }
        // The linked highlight becomes selection bits (others dimmed on the GPU).
        if links.highlight_version != self.seen_highlight {
            self.seen_highlight = links.highlight_version;
            self.selection = links.highlight.as_ref().map(|h| {
                (
                    self.seen_highlight.wrapping_add(self.data_gen << 32),
                    Arc::new(selection_bits(&self.binned, h)),
                )
            });
        }
        ui.horizontal(|ui| {
            if let Some(h) = &links.highlight {
                ui.label(format!(
                    "highlighted: {} ({} blocks)",
                    links.highlight_label,
                    h.len()
                ));
                if ui.button("clear").clicked() {
                    self.dataset.links.clear_highlight();
                }
            }
            if let Some(i) = self.pinned {
                ui.label(format!(
                    "pinned: {:#x} ({} B)",
                    t.trace.blocks.address[i], t.trace.blocks.size[i]
                ))
                .on_hover_ui(|ui| draw::block_details(ui, &t.trace, i));
                if ui.small_button("unpin").clicked() {
                    self.pinned = None;
                }
            }
            if self.busy() {
                ui.spinner();
                ui.weak("building bins…");
            }
        });

        let (full, response) = ui.allocate_exact_size(
            egui::vec2(width, ui.available_height()),
            egui::Sense::click_and_drag(),
        );
        if full.width() < 40.0 || full.height() < 40.0 {
            return;
        }
        let binned = self.binned.clone();
        let nbins = binned.bins.len().max(1);
        let panels = Panels {
            occupancy: self.occupancy.is_some(),
            context: self.show_context,
            decorations: true,
        };
        let layout = draw::pane_layout(full.size(), nbins, self.layout, panels);
        let origin = full.min.to_vec2();
        let abs = |r: egui::Rect| r.translate(origin);
        let maps: Vec<egui::Rect> = layout.cells.iter().map(|c| abs(c.map)).collect();
        self.last_map = maps.first().copied();
        let t_extent = scene.time_extent(self.axis);
        let mut cam = self.camera.unwrap_or_else(|| Camera::fit(t_extent));
        let mut target = self.target.unwrap_or(cam);

        let pointer = response.hover_pos();
        let hovered_cell = pointer.and_then(|p| maps.iter().position(|m| m.contains(p)));
        if let Some(k) = hovered_cell {
            self.focus_bin = k;
        }
        let context_rect = layout.context.map(abs);

        // Context view: drag the frame (or click elsewhere to centre it there).
        if let Some(ctx_rect) = context_rect {
            let ctx_resp = ui.interact(
                ctx_rect,
                ui.make_persistent_id(("alloc-map-context", self.key.get())),
                egui::Sense::click_and_drag(),
            );
            let to_cam = |pos: egui::Pos2| {
                (
                    f64::from((pos.x - ctx_rect.left()) / ctx_rect.width()) * t_extent as f64,
                    f64::from((ctx_rect.bottom() - pos.y) / ctx_rect.height()),
                )
            };
            if ctx_resp.drag_started()
                && let Some(p) = ctx_resp.interact_pointer_pos()
            {
                let frame = draw::context_frame_rect(ctx_rect, &cam, t_extent);
                if !frame.expand(3.0).contains(p) {
                    let (tc, yc) = to_cam(p);
                    cam.t0 = tc - 0.5 * cam.t_span;
                    cam.y0 = yc - 0.5 * cam.y_span;
                }
                self.context_drag = Some((p, cam));
            }
            // Follow the pointer while dragging, and to where it was released (slow frames
            // may not have seen its last moves).
            if let (Some((start, start_cam)), Some(p)) = (
                self.context_drag,
                ctx_resp
                    .interact_pointer_pos()
                    .or_else(|| ui.input(|i| i.pointer.latest_pos())),
            ) && (ctx_resp.dragged() || ctx_resp.drag_stopped())
            {
                let (t1, y1) = to_cam(p);
                let (t0, y0) = to_cam(start);
                cam.t0 = start_cam.t0 + (t1 - t0);
                cam.y0 = start_cam.y0 + (y1 - y0);
                target = cam;
            }
            if ctx_resp.drag_stopped() {
                self.context_drag = None;
            }
            if ctx_resp.clicked()
                && let Some(p) = ctx_resp.interact_pointer_pos()
            {
                let (tc, yc) = to_cam(p);
                target.t0 = tc - 0.5 * target.t_span;
                target.y0 = yc - 0.5 * target.y_span;
            }
            ctx_resp.on_hover_text("the whole map; drag the red frame to scroll");
        }

        // Zoom around the pointer (shift: time only, ctrl: addresses only); animated.
        if let (Some(pos), Some(k)) = (pointer, hovered_cell) {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            if scroll != 0.0 {
                let factor = (-f64::from(scroll) * 0.002).exp();
                let (shift, ctrl) = ui.input(|i| (i.modifiers.shift, i.modifiers.command));
                let m = maps[k];
                let u = f64::from((pos.x - m.left()) / m.width());
                let v = f64::from((m.bottom() - pos.y) / m.height());
                target.zoom(
                    if ctrl { 1.0 } else { factor },
                    if shift { 1.0 } else { factor },
                    u,
                    v,
                );
            }
        }
        // Keyboard while the pointer is over the pane: +/− zoom, arrows pan, Home fits, C
        // toggles cursor mode.
        if response.hovered() {
            let (plus, minus, left, right, up, down, home, c) = ui.input(|i| {
                (
                    i.key_pressed(egui::Key::Plus) || i.key_pressed(egui::Key::Equals),
                    i.key_pressed(egui::Key::Minus),
                    i.key_pressed(egui::Key::ArrowLeft),
                    i.key_pressed(egui::Key::ArrowRight),
                    i.key_pressed(egui::Key::ArrowUp),
                    i.key_pressed(egui::Key::ArrowDown),
                    i.key_pressed(egui::Key::Home),
                    i.key_pressed(egui::Key::C),
                )
            });
            if plus {
                target.zoom(0.6, 0.6, 0.5, 0.5);
            }
            if minus {
                target.zoom(1.0 / 0.6, 1.0 / 0.6, 0.5, 0.5);
            }
            let dx = f64::from(u8::from(right)) - f64::from(u8::from(left));
            let dy = f64::from(u8::from(up)) - f64::from(u8::from(down));
            if dx != 0.0 || dy != 0.0 {
                target.pan(0.2 * dx, 0.2 * dy);
            }
            if home {
                target = Camera::fit(t_extent);
            }
            if c {
                self.cursor_mode = !self.cursor_mode;
            }
        }
        // Shift-drag draws a box and zooms to it on release; a plain drag pans at once.
        let shift = ui.input(|i| i.modifiers.shift);
        if response.drag_started() && shift && self.context_drag.is_none() {
            self.box_start = response.interact_pointer_pos();
        }
        if let Some(start) = self.box_start {
            let k = maps.iter().position(|m| m.contains(start));
            match (ui.input(|i| i.pointer.latest_pos()), k) {
                (Some(now), Some(k)) => {
                    let m = maps[k];
                    let r = egui::Rect::from_two_pos(start, now).intersect(m);
                    ui.painter().rect_stroke(
                        r,
                        0.0,
                        egui::Stroke::new(1.5, egui::Color32::from_rgb(250, 200, 80)),
                        egui::StrokeKind::Inside,
                    );
                    if response.drag_stopped() {
                        if r.width() > 4.0 && r.height() > 4.0 {
                            let u0 = f64::from((r.left() - m.left()) / m.width());
                            let v0 = f64::from((m.bottom() - r.bottom()) / m.height());
                            let (t0, y0) = cam.at(u0, v0);
                            target = Camera {
                                t0,
                                y0,
                                t_span: cam.t_span * f64::from(r.width() / m.width()),
                                y_span: cam.y_span * f64::from(r.height() / m.height()),
                            };
                        }
                        self.box_start = None;
                    }
                }
                _ => self.box_start = None,
            }
        } else if response.dragged()
            && self.context_drag.is_none()
            && let Some(m) = hovered_cell.or(Some(0)).and_then(|k| maps.get(k))
        {
            let d = response.drag_delta();
            let du = -f64::from(d.x / m.width());
            let dv = f64::from(d.y / m.height());
            cam.pan(du, dv);
            target.pan(du, dv);
        }
        if response.double_clicked() {
            target = Camera::fit(t_extent);
        }
        // Clicks: pin the block under the pointer and set the linked time, or drop/remove a
        // cushion cursor (cursor mode, or alt-click).
        if response.clicked()
            && let (Some(pos), Some(k)) = (response.interact_pointer_pos(), hovered_cell)
        {
            let alt = ui.input(|i| i.modifiers.alt);
            let m = maps[k];
            let u = f64::from((pos.x - m.left()) / m.width());
            let v = f64::from((m.bottom() - pos.y) / m.height());
            let (time, y) = cam.at(u, v);
            if self.cursor_mode != alt {
                // Remove a cursor within half its width, else drop one.
                let near = self.cursors.iter().position(|&e| {
                    let ct = axis_time_of_events(&t.trace, self.axis, e) as f64;
                    let x = m.left() + ((ct - cam.t0) / cam.t_span) as f32 * m.width();
                    (x - pos.x).abs() <= 0.5 * CURSOR_WIDTH
                });
                match near {
                    Some(i) => {
                        self.cursors.remove(i);
                    }
                    None => {
                        self.cursors
                            .push(events_at(&t.trace, self.axis, time.max(0.0) as u64));
                    }
                }
            } else {
                self.dataset
                    .links
                    .set_time(events_at(&t.trace, self.axis, time.max(0.0) as u64));
                let answer = self.answers.lock().ok().and_then(|a| *a);
                let gpu = answer
                    .filter(|a| {
                        a.tag.bin == k
                            && a.tag.pos.distance(pos) < 2.0
                            && a.tag.data_gen == self.data_gen
                    })
                    .map(|a| a.position);
                // The CPU scan of the bin's blocks only where the GPU has not answered.
                let position = gpu.unwrap_or_else(|| {
                    let extent = binned.bins.get(k).map_or(1, |b| b.collapsed_extent);
                    (time >= 0.0 && y >= 0.0)
                        .then(|| binned.pick(k, self.axis, time as u64, (y * extent as f64) as u64))
                        .flatten()
                });
                self.pinned = position.and_then(|p| binned.block_at(p));
                if let Some(i) = self.pinned.and_then(|i| u32::try_from(i).ok()) {
                    self.dataset.links.pick_block(i);
                }
            }
        }

        // Animate towards the target.
        if cam != target {
            let dt = f64::from(ui.input(|i| i.stable_dt).min(0.1));
            let k = 1.0 - (-dt / 0.07).exp();
            cam.approach(&target, k.max(0.05));
            ui.ctx().request_repaint();
        }
        self.camera = Some(cam);
        self.target = Some(target);

        // GPU views.
        let render = cx.render_state.is_some();
        let pick = pointer.zip(hovered_cell).map(|(pos, k)| PickTag {
            bin: k,
            pos,
            camera: cam,
            data_gen: self.data_gen,
        });
        let answer = self.answers.lock().ok().and_then(|a| *a);
        let answered = pick.is_some_and(|p| answer.is_some_and(|a| a.tag == p));
        let inputs = Arc::new(FrameInputs {
            data_gen: self.data_gen,
            axis: self.axis,
            blocks: self.blocks.clone(),
            times: binned.times(self.axis).clone(),
            color_version: self.color_version,
            selection: self.selection.clone(),
            bar: self.bar.clone(),
            bar_key: self.data_gen * 2 + u64::from(self.axis == TimeAxis::Wall),
            pick: if answered { None } else { pick },
            answers: self.answers.clone(),
            frame: self.frame,
            cursors: self
                .cursors
                .iter()
                .map(|&e| {
                    CushionCursor::new(
                        axis_time_of_events(&t.trace, self.axis, e),
                        [255, 250, 235, 255],
                    )
                })
                .collect(),
            cursor_style: CursorStyle {
                width_px: CURSOR_WIDTH,
                opacity: self.cursor_opacity,
                ..CursorStyle::default()
            },
        });
        if pick.is_some() && !answered {
            ui.ctx().request_repaint();
        }
        let style = MapStyle {
            alpha: self.alpha,
            cushion: self.cushion,
            cushion_strength: self.cushion_strength,
            color_mode: self.color_by.mode(),
        };
        if render {
            for (k, cell) in layout.cells.iter().enumerate() {
                let info = binned.bins.get(k);
                let paint = |rect: egui::Rect, what: Draw| {
                    ui.painter().add(egui_wgpu::Callback::new_paint_callback(
                        rect,
                        MapCallback {
                            key: self.key.get(),
                            rect,
                            what,
                            inputs: inputs.clone(),
                            drawn: self.drawn.clone(),
                        },
                    ));
                };
                paint(
                    abs(cell.map),
                    Draw::Map {
                        slot: Slot::Cell(k),
                        camera: cam,
                        extent: info.map_or(1, |b| b.collapsed_extent),
                        range: info.map_or(0..0, |b| b.range.clone()),
                        style,
                        cursors: true,
                    },
                );
                if let (Some(bar), Some(variant)) = (cell.bar, self.occupancy) {
                    paint(
                        abs(bar),
                        Draw::Bar {
                            slot: Slot::Cell(k),
                            camera: cam,
                            variant,
                            bin: Some(k),
                            style,
                        },
                    );
                }
            }
            if let (Some(bar), Some(variant)) = (layout.stacked, self.occupancy) {
                ui.painter().add(egui_wgpu::Callback::new_paint_callback(
                    abs(bar),
                    MapCallback {
                        key: self.key.get(),
                        rect: abs(bar),
                        what: Draw::Bar {
                            slot: Slot::Stacked,
                            camera: cam,
                            variant,
                            bin: None,
                            style,
                        },
                        inputs: inputs.clone(),
                        drawn: self.drawn.clone(),
                    },
                ));
            }
            if let Some(ctx_rect) = context_rect {
                let k = self.focus_bin.min(nbins - 1);
                let info = binned.bins.get(k);
                ui.painter().add(egui_wgpu::Callback::new_paint_callback(
                    ctx_rect,
                    MapCallback {
                        key: self.key.get(),
                        rect: ctx_rect,
                        what: Draw::Map {
                            slot: Slot::Context,
                            camera: Camera::fit(t_extent),
                            extent: info.map_or(1, |b| b.collapsed_extent),
                            range: info.map_or(0..0, |b| b.range.clone()),
                            style: MapStyle {
                                alpha: self.alpha.min(0.5),
                                cushion: CushionKind::None,
                                ..style
                            },
                            cursors: false,
                        },
                        inputs: inputs.clone(),
                        drawn: self.drawn.clone(),
                    },
                ));
            }
        } else {
            ui.painter().text(
                full.center(),
                egui::Align2::CENTER_CENTER,
                "no wgpu renderer",
                egui::FontId::proportional(16.0),
                egui::Color32::LIGHT_RED,
            );
        }

        // Decorations: axes, labels, bars' captions, free bars, frames, cursors' markers.
        let mut picture = Picture::default();
        let time_cursor = links
            .time_events
            .map(|e| axis_time_of_events(&t.trace, self.axis, e));
        // Free bars: at the time cursor, else at the right edge of the view.
        let free_at = links.time_events.unwrap_or_else(|| {
            events_at(&t.trace, self.axis, (cam.t0 + cam.t_span).max(0.0) as u64)
        });
        decorate(
            &mut picture,
            &DecorateInputs {
                layout: &layout,
                binned: &binned,
                scene,
                trace: &t.trace,
                cam: &cam,
                axis: self.axis,
                color_by: self.color_by,
                occupancy: self.occupancy,
                free_at_events: free_at,
                time_cursor,
                focus_bin: self.focus_bin,
                pinned: self.pinned.and_then(|i| binned.position_of(i)),
                highlighted: self.selection.is_some(),
            },
        );
        if render {
            shapes_paint::paint(
                ui,
                ShapesCallback {
                    key: self.key.get() | (1 << 62),
                    version: self.frame,
                    shapes: Arc::new(picture.shapes.iter().map(|s| s.gpu()).collect()),
                    view: memscape_render::shapes::ShapesView::IDENTITY,
                    rect: full,
                },
            );
        }
        labels::paint(&ui.painter_at(full), full.min, &picture.labels);

        // Hover: the GPU pick's answer for this pointer position.
        if let (Some(p), Some(a)) = (pick, answer)
            && a.tag.bin == p.bin
            && a.tag.pos.distance(p.pos) < 6.0
            && a.tag.data_gen == self.data_gen
        {
            let bin_label = binned.bins.get(p.bin).map(|b| b.label.clone());
            match a.position.and_then(|q| binned.block_at(q)) {
                Some(i) => {
                    response.on_hover_ui_at_pointer(|ui| {
                        if binned.by != BinBy::None
                            && let Some(l) = &bin_label
                        {
                            ui.weak(format!("bin {l}"));
                        }
                        draw::block_details(ui, &t.trace, i);
                    });
                }
                None => {
                    let m = maps[p.bin];
                    let u = f64::from((p.pos.x - m.left()) / m.width());
                    let v = f64::from((m.bottom() - p.pos.y) / m.height());
                    let (time, y) = cam.at(u, v);
                    let extent = binned.bins.get(p.bin).map_or(1, |b| b.collapsed_extent);
                    let when = match self.axis {
                        TimeAxis::Events => format!("event {time:.0}"),
                        TimeAxis::Wall => format!("{:.3} ms", time / 1e6),
                    };
                    let text = match binned.uncollapse(p.bin, (y.max(0.0) * extent as f64) as u64) {
                        Some(address) => format!("free · {address:#x} · {when}"),
                        None => format!("collapsed gap · {when}"),
                    };
                    response.on_hover_text_at_pointer(text);
                }
            }
        }
    }
}

/// The look of the maps in a frame.
#[derive(Debug, Clone, Copy, PartialEq)]
struct MapStyle {
    alpha: f32,
    cushion: CushionKind,
    cushion_strength: f32,
    color_mode: ColorMode,
}

impl MapStyle {
    fn apply(&self, view: &mut AllocMapView) {
        view.alpha = self.alpha;
        view.cushion = self.cushion;
        view.cushion_strength = self.cushion_strength;
        view.color_mode = self.color_mode;
    }
}

/// Everything the GPU callbacks of one pane need this frame (shared by all of them).
struct FrameInputs {
    data_gen: u64,
    axis: TimeAxis,
    blocks: Arc<Vec<AllocBlockGpu>>,
    times: Arc<Vec<BlockTimeGpu>>,
    color_version: u64,
    selection: Option<(u64, Arc<SelectionBits>)>,
    bar: Option<Arc<BarBlocks>>,
    bar_key: u64,
    /// A GPU pick to request (the cell's callback records it).
    pick: Option<PickTag>,
    answers: Arc<Mutex<Option<PickAnswer>>>,
    frame: u64,
    cursors: Vec<CushionCursor>,
    cursor_style: CursorStyle,
}

enum Draw {
    Map {
        slot: Slot,
        camera: Camera,
        extent: u64,
        range: std::ops::Range<usize>,
        style: MapStyle,
        cursors: bool,
    },
    Bar {
        slot: Slot,
        camera: Camera,
        variant: OccupancyVariant,
        /// `None`: the stack of all bins.
        bin: Option<usize>,
        style: MapStyle,
    },
}

/// A hash of a view and the other things an accumulation depends on.
fn frame_key(view: &AllocMapView, parts: &[u64], tag: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (
        view.time_origin,
        view.time_origin_frac.to_bits(),
        view.addr_origin,
        view.addr_origin_frac.to_bits(),
        view.pixels_per_time.to_bits(),
        view.pixels_per_byte.to_bits(),
        view.alpha.to_bits(),
        view.cushion_strength.to_bits(),
    )
        .hash(&mut h);
    (
        format!("{:?}{:?}", view.cushion, view.color_mode),
        view.background_linear.map(f32::to_bits),
        parts,
        tag,
    )
        .hash(&mut h);
    h.finish()
}

struct MapCallback {
    key: u64,
    rect: egui::Rect,
    what: Draw,
    inputs: Arc<FrameInputs>,
    drawn: Arc<AtomicBool>,
}

impl MapCallback {
    /// Uploads what changed since the pane's last frame (the first callback of a frame does it,
    /// the others find it done) and collects finished picks.
    fn sync(&self, device: &wgpu::Device, queue: &wgpu::Queue, gpu: &mut AllocMapGpu) {
        let i = &self.inputs;
        let AllocMapGpu {
            pipelines,
            cursors,
            panes,
            ..
        } = gpu;
        let pane = panes.entry(self.key).or_insert_with(|| PaneGpu {
            data: None,
            data_key: (0, TimeAxis::Events, 0),
            selection_version: 0,
            bar: None,
            bar_key: 0,
            frames: HashMap::new(),
            bar_frames: HashMap::new(),
            prepared: HashMap::new(),
            cursors: CursorOverlay::new(device, cursors),
            cursors_frame: 0,
            picker: AllocMapPicker::new(device, pipelines, 3),
            asked: HashMap::new(),
            polled_frame: 0,
        });
        let key = (i.data_gen, i.axis, i.color_version);
        if pane.data_key != key || pane.data.is_none() {
            match &pane.data {
                Some(data)
                    if pane.data_key.0 == i.data_gen && data.block_count == i.blocks.len() =>
                {
                    if pane.data_key.1 != i.axis {
                        data.replace_times(queue, &i.times);
                    }
                    if pane.data_key.2 != i.color_version {
                        data.replace_blocks(queue, &i.blocks);
                    }
                }
                _ => {
                    pane.data = Some(AllocMapData::upload(device, pipelines, &i.blocks, &i.times));
                    pane.selection_version = 0;
                    pane.asked.clear();
                }
            }
            pane.data_key = key;
        }
        if let (Some(data), Some((version, bits))) = (&pane.data, &i.selection)
            && pane.selection_version != *version
        {
            data.set_selection(queue, bits.words());
            pane.selection_version = *version;
        }
        if let Some(bar) = &i.bar
            && (pane.bar_key != i.bar_key || pane.bar.is_none())
        {
            pane.bar = Some(OccupancyBarData::upload(device, pipelines, bar));
            pane.bar_key = i.bar_key;
        }
        if pane.polled_frame != i.frame {
            pane.polled_frame = i.frame;
            for result in pane.picker.poll(device) {
                let Some(tag) = pane.asked.remove(&result.request) else {
                    continue;
                };
                let position = result.nearest().map(|h| h.block as usize);
                if let Ok(mut a) = i.answers.lock() {
                    *a = Some(PickAnswer { tag, position });
                }
            }
        }
    }
}

impl egui_wgpu::CallbackTrait for MapCallback {
    fn prepare(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        screen: &egui_wgpu::ScreenDescriptor,
        encoder: &mut wgpu::CommandEncoder,
        resources: &mut egui_wgpu::CallbackResources,
    ) -> Vec<wgpu::CommandBuffer> {
        let Some(gpu) = resources.get_mut::<AllocMapGpu>() else {
            return Vec::new();
        };
        self.sync(device, queue, gpu);
        let AllocMapGpu {
            pipelines,
            cursors,
            target_format,
            panes,
        } = gpu;
        let Some(pane) = panes.get_mut(&self.key) else {
            return Vec::new();
        };
        let Some(data) = &pane.data else {
            return Vec::new();
        };
        let vp = egui::epaint::ViewportInPixels::from_points(
            &self.rect,
            screen.pixels_per_point,
            screen.size_in_pixels,
        );
        let size = [vp.width_px.max(1) as u32, vp.height_px.max(1) as u32];
        let origin = [vp.left_px as f32, vp.top_px as f32];
        let i = &self.inputs;
        match &self.what {
            Draw::Map {
                slot,
                camera,
                extent,
                range,
                style,
                cursors: with_cursors,
            } => {
                let mut view = camera.view(*extent, [size[0] as f32, size[1] as f32]);
                style.apply(&mut view);
                let options = DrawOptions {
                    range: Some(range.clone()),
                    selection: if i.selection.is_some() {
                        SelectionStyle::DIM
                    } else {
                        SelectionStyle::Off
                    },
                    ..Default::default()
                };
                let key = frame_key(
                    &view,
                    &[
                        i.data_gen,
                        i.color_version,
                        u64::from(i.axis == TimeAxis::Wall),
                        i.selection.as_ref().map_or(0, |s| s.0),
                        range.start as u64,
                        range.end as u64,
                        u64::from(size[0]) << 32 | u64::from(size[1]),
                        u64::from(origin[0].to_bits()) << 32 | u64::from(origin[1].to_bits()),
                    ],
                    "map",
                );
                let frame = pane
                    .frames
                    .entry(*slot)
                    .or_insert_with(|| AllocMapFrame::new(device, pipelines));
                if pane.prepared.get(&(*slot, false)) != Some(&key) {
                    frame.prepare_with(
                        device,
                        queue,
                        encoder,
                        pipelines,
                        data,
                        &view,
                        size,
                        origin,
                        *target_format,
                        &options,
                    );
                    pane.prepared.insert((*slot, false), key);
                }
                if *with_cursors && pane.cursors_frame != i.frame {
                    pane.cursors_frame = i.frame;
                    pane.cursors.prepare(
                        device,
                        queue,
                        cursors,
                        &i.cursors,
                        &TimeMapping::from(&view),
                        &i.cursor_style,
                        size[0],
                        *target_format,
                    );
                }
                if let (Slot::Cell(k), Some(tag)) = (slot, i.pick)
                    && tag.bin == *k
                {
                    let ppp = screen.pixels_per_point;
                    let local = (tag.pos - self.rect.min) * ppp;
                    let cursor = [local.x.max(0.0) as u32, local.y.max(0.0) as u32];
                    if let Some(request) = pane.picker.request(
                        queue,
                        encoder,
                        pipelines,
                        data,
                        &view,
                        size,
                        cursor,
                        Some(range.clone()),
                    ) {
                        pane.asked.insert(request, tag);
                    }
                }
                self.drawn.store(true, Ordering::Release);
            }
            Draw::Bar {
                slot,
                camera,
                variant,
                bin,
                style,
            } => {
                let Some(bar) = &pane.bar else {
                    return Vec::new();
                };
                let mut map_view = camera.view(1, [size[0] as f32, size[1] as f32]);
                style.apply(&mut map_view);
                let view = OccupancyBarView::from_map(&map_view, *variant);
                let key = frame_key(
                    &map_view,
                    &[
                        i.bar_key,
                        bin.map_or(u64::MAX, |b| b as u64),
                        u64::from(size[0]) << 32 | u64::from(size[1]),
                        u64::from(origin[0].to_bits()) << 32 | u64::from(origin[1].to_bits()),
                    ],
                    variant_key(*variant),
                );
                let frame = pane
                    .bar_frames
                    .entry(*slot)
                    .or_insert_with(|| OccupancyBarFrame::new(device, pipelines));
                if pane.prepared.get(&(*slot, true)) != Some(&key) {
                    frame.prepare(
                        device,
                        queue,
                        encoder,
                        pipelines,
                        bar,
                        &view,
                        *bin,
                        size,
                        origin,
                        *target_format,
                    );
                    pane.prepared.insert((*slot, true), key);
                }
            }
        }
        Vec::new()
    }

    fn paint(
        &self,
        _info: egui::PaintCallbackInfo,
        pass: &mut wgpu::RenderPass<'static>,
        resources: &egui_wgpu::CallbackResources,
    ) {
        let Some(gpu) = resources.get::<AllocMapGpu>() else {
            return;
        };
        let Some(pane) = gpu.panes.get(&self.key) else {
            return;
        };
        match &self.what {
            Draw::Map { slot, cursors, .. } => {
                if let Some(frame) = pane.frames.get(slot) {
                    frame.resolve(pass, &gpu.pipelines);
                    if *cursors {
                        pane.cursors.draw(pass, &gpu.cursors);
                    }
                }
            }
            Draw::Bar { slot, .. } => {
                if pane.bar.is_some()
                    && let Some(frame) = pane.bar_frames.get(slot)
                {
                    frame.resolve(pass, &gpu.pipelines);
                }
            }
        }
    }
}
