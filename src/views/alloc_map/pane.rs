//! The allocation-map pane: camera, zoom and pan, controls, and the GPU paint callback.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use memscape_render::alloc_map::{
    AllocBlockGpu, AllocMapData, AllocMapFrame, AllocMapPipelines, AllocMapView, CushionKind,
};

use super::draw::{block_details, draw_axes, draw_legend, draw_occupancy};
use super::model::{OccupancyCache, axis_time_of_events, events_at, highlighted_blocks};
use crate::data::Dataset;
use crate::scene::{ColorBy, TimeAxis};
use crate::views::{View, ViewContext};

/// GPU resources of every allocation-map pane, kept in egui-wgpu's callback resources.
pub struct AllocMapGpu {
    pipelines: AllocMapPipelines,
    /// The format of egui's render target, which the resolve pass writes.
    target_format: wgpu::TextureFormat,
    /// Per pane: the uploaded data and what it was uploaded for.
    panes: HashMap<u64, PaneGpu>,
}

struct PaneGpu {
    data: AllocMapData,
    axis: TimeAxis,
    color_version: u64,
    frame: AllocMapFrame,
}

impl AllocMapGpu {
    pub fn new(
        device: &wgpu::Device,
        target_format: wgpu::TextureFormat,
    ) -> Result<Self, memscape_render::RenderError> {
        Ok(Self {
            pipelines: AllocMapPipelines::new(device)?,
            target_format,
            panes: HashMap::new(),
        })
    }
}

static NEXT_PANE: AtomicU64 = AtomicU64::new(1);

/// Camera in f64 data units: exact for integers below 2^53 (104 days of nanoseconds, 8 PiB of
/// collapsed addresses) and split into integer origin + fraction for the GPU.
#[derive(Debug, Clone, Copy)]
pub struct Camera {
    pub t_left: f64,
    pub y_bottom: f64,
    pub time_per_px: f64,
    pub bytes_per_px: f64,
}

pub struct AllocMapPane {
    key: u64,
    dataset: Arc<Dataset>,
    blocks: Arc<Vec<AllocBlockGpu>>,
    color_version: u64,
    color_by: ColorBy,
    axis: TimeAxis,
    alpha: f32,
    cushion: CushionKind,
    cushion_strength: f32,
    camera: Option<Camera>,
    drawn: Arc<AtomicBool>,
    occupancy: OccupancyStyle,
    occupancy_cache: OccupancyCache,
    /// The dataset's highlight version the blocks were coloured for, and whether a highlight
    /// is shown (then colours are categorical: others dimmed).
    seen_highlight: u64,
    highlighting: bool,
    /// The map's rectangle at the last frame (a tour step records the camera's ranges).
    last_rect: Option<egui::Rect>,
    /// Where a shift-drag box zoom started.
    box_start: Option<egui::Pos2>,
}

/// The occupancy bar's variants (Moreta & Telea): plain colour per column, or with columns where
/// nothing happened drawn black so that pauses in activity stand out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OccupancyStyle {
    Hidden,
    Flat,
    BlackIdleGaps,
}

/// Height of the occupancy bar in points.
const OCCUPANCY_HEIGHT: f32 = 18.0;

impl AllocMapPane {
    pub fn new(dataset: Arc<Dataset>) -> Self {
        let scene = dataset.alloc_trace().and_then(|t| t.scene.as_ref());
        let blocks = scene.map_or_else(Default::default, |s| s.blocks.clone());
        let color_by = scene.map_or(ColorBy::Thread, |s| s.color_by);
        Self {
            key: NEXT_PANE.fetch_add(1, Ordering::Relaxed),
            dataset,
            blocks,
            color_version: 0,
            color_by,
            axis: TimeAxis::Events,
            alpha: 0.5,
            cushion: CushionKind::Parabolic,
            cushion_strength: 1.0,
            camera: None,
            seen_highlight: 0,
            highlighting: false,
            last_rect: None,
            box_start: None,
            drawn: Arc::new(AtomicBool::new(false)),
            occupancy: OccupancyStyle::Flat,
            occupancy_cache: OccupancyCache::default(),
        }
    }

    fn controls(&mut self, ui: &mut egui::Ui) {
        if self.dataset.alloc_trace().is_none() {
            return;
        }
        ui.horizontal_wrapped(|ui| {
            ui.label("α");
            ui.add(egui::Slider::new(&mut self.alpha, 0.05..=2.0).logarithmic(true))
                .on_hover_text("bias of the anti-aliasing: low α shows few, thin blocks strongly");
            ui.separator();
            egui::ComboBox::from_id_salt(("cushion", self.key))
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
            let before = self.axis;
            ui.selectable_value(&mut self.axis, TimeAxis::Events, "event index");
            ui.selectable_value(&mut self.axis, TimeAxis::Wall, "wall time");
            if before != self.axis {
                self.camera = None;
            }
            ui.separator();
            let mut color_by = self.color_by;
            egui::ComboBox::from_id_salt(("color", self.key))
                .selected_text(format!("colour: {}", color_by.name()))
                .show_ui(ui, |ui| {
                    for c in ColorBy::ALL {
                        ui.selectable_value(&mut color_by, c, c.name());
                    }
                });
            if color_by != self.color_by {
                self.color_by = color_by;
                // Recolour (and re-apply any highlight) on the next frame.
                self.seen_highlight = u64::MAX;
            }
            egui::ComboBox::from_id_salt(("occupancy", self.key))
                .selected_text(match self.occupancy {
                    OccupancyStyle::Hidden => "no occupancy bar",
                    OccupancyStyle::Flat => "occupancy",
                    OccupancyStyle::BlackIdleGaps => "occupancy + idle gaps",
                })
                .show_ui(ui, |ui| {
                    ui.selectable_value(&mut self.occupancy, OccupancyStyle::Flat, "occupancy");
                    ui.selectable_value(
                        &mut self.occupancy,
                        OccupancyStyle::BlackIdleGaps,
                        "occupancy + idle gaps",
                    )
                    .on_hover_text("columns without any allocation or free drawn black");
                    ui.selectable_value(
                        &mut self.occupancy,
                        OccupancyStyle::Hidden,
                        "no occupancy bar",
                    );
                });
            if ui.button("reset view").clicked() {
                self.camera = None;
            }
        });
    }
}

impl View for AllocMapPane {
    fn title(&self) -> String {
        format!("Allocation map · {}", self.dataset.name)
    }

    fn tour_step(&self) -> Option<crate::tour::StepSpec> {
        let scene = self.dataset.alloc_trace()?.scene.as_ref()?;
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
            color: Some(
                match self.color_by {
                    ColorBy::Thread => "thread",
                    ColorBy::Site => "site",
                    ColorBy::Size => "size",
                    ColorBy::Lifetime => "lifetime",
                    ColorBy::Waste => "waste",
                    ColorBy::Age => "age",
                }
                .to_owned(),
            ),
            time: Some(
                match self.axis {
                    TimeAxis::Events => "events",
                    TimeAxis::Wall => "wall",
                }
                .to_owned(),
            ),
            ..Default::default()
        };
        if let (Some(cam), Some(rect)) = (&self.camera, self.last_rect) {
            let t0 = cam.t_left.max(0.0) as u64;
            let t1 = (cam.t_left + f64::from(rect.width()) * cam.time_per_px).max(1.0) as u64;
            step.range_time = Some([t0, t1.max(t0 + 1)]);
            let y0 = cam.y_bottom.max(0.0) as u64;
            let y1 = (cam.y_bottom + f64::from(rect.height()) * cam.bytes_per_px) as u64;
            let y1 = y1.min(scene.collapsed_extent.saturating_sub(1));
            // Addresses must lie in used regions; a camera edge in a gap keeps all regions.
            if let (Some((_, a0)), Some((_, a1))) = (scene.uncollapse(y0), scene.uncollapse(y1))
                && a1 > a0
            {
                step.range_addr = Some([a0, a1 + 1]);
            }
        }
        Some(step)
    }

    fn is_ready(&self) -> bool {
        self.drawn.load(Ordering::Acquire)
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
        self.controls(ui);
        let links = self.dataset.links.get();
        if links.highlight_version != self.seen_highlight {
            self.seen_highlight = links.highlight_version;
            self.blocks = Arc::new(highlighted_blocks(
                scene,
                &t.trace,
                self.color_by,
                links.highlight.as_deref().map(Vec::as_slice),
            ));
            self.highlighting = links.highlight.is_some();
            self.color_version += 1;
        }
        if let Some(h) = &links.highlight {
            ui.horizontal(|ui| {
                ui.label(format!(
                    "highlighted: {} ({} blocks)",
                    links.highlight_label,
                    h.len()
                ));
                if ui.button("clear").clicked() {
                    self.dataset.links.clear_highlight();
                }
            });
        }
        let (full_rect, response) =
            ui.allocate_exact_size(ui.available_size(), egui::Sense::click_and_drag());
        let (rect, occupancy_rect) = if self.occupancy == OccupancyStyle::Hidden {
            (full_rect, None)
        } else {
            let split = full_rect.bottom() - OCCUPANCY_HEIGHT - 2.0;
            (
                egui::Rect::from_min_max(full_rect.min, egui::pos2(full_rect.right(), split)),
                Some(egui::Rect::from_min_max(
                    egui::pos2(full_rect.left(), split + 2.0),
                    full_rect.max,
                )),
            )
        };
        if rect.width() < 2.0 || rect.height() < 2.0 {
            return;
        }
        self.last_rect = Some(rect);
        let extent_t = scene.time_extent(self.axis) as f64;
        let extent_y = scene.collapsed_extent as f64;
        let cam = self.camera.get_or_insert(Camera {
            t_left: 0.0,
            y_bottom: 0.0,
            time_per_px: extent_t / f64::from(rect.width()),
            bytes_per_px: extent_y / f64::from(rect.height()),
        });

        // Zoom around the pointer (shift: time only, ctrl: addresses only); drag to pan.
        if let Some(pos) = response.hover_pos() {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            if scroll != 0.0 {
                let factor = (-f64::from(scroll) * 0.002).exp();
                let (shift, ctrl) = ui.input(|i| (i.modifiers.shift, i.modifiers.command));
                let px = f64::from(pos.x - rect.left());
                let py = f64::from(rect.bottom() - pos.y);
                if !ctrl {
                    let t_at = cam.t_left + px * cam.time_per_px;
                    cam.time_per_px = (cam.time_per_px * factor).max(1e-3);
                    cam.t_left = t_at - px * cam.time_per_px;
                }
                if !shift {
                    let y_at = cam.y_bottom + py * cam.bytes_per_px;
                    cam.bytes_per_px = (cam.bytes_per_px * factor).max(1e-3);
                    cam.y_bottom = y_at - py * cam.bytes_per_px;
                }
            }
        }
        // Shift-drag draws a box and zooms to it on release; a plain drag pans.
        let shift = ui.input(|i| i.modifiers.shift);
        if response.drag_started() && shift {
            self.box_start = response.interact_pointer_pos();
        }
        if let Some(start) = self.box_start {
            if let Some(now) = ui.input(|i| i.pointer.latest_pos()) {
                let r = egui::Rect::from_two_pos(start, now).intersect(rect);
                ui.painter().rect_stroke(
                    r,
                    0.0,
                    egui::Stroke::new(1.5, egui::Color32::from_rgb(250, 200, 80)),
                    egui::StrokeKind::Inside,
                );
                if response.drag_stopped() {
                    if r.width() > 4.0 && r.height() > 4.0 {
                        let t0 = cam.t_left + f64::from(r.left() - rect.left()) * cam.time_per_px;
                        let y0 =
                            cam.y_bottom + f64::from(rect.bottom() - r.bottom()) * cam.bytes_per_px;
                        cam.time_per_px *= f64::from(r.width() / rect.width());
                        cam.bytes_per_px *= f64::from(r.height() / rect.height());
                        cam.time_per_px = cam.time_per_px.max(1e-3);
                        cam.bytes_per_px = cam.bytes_per_px.max(1e-3);
                        cam.t_left = t0;
                        cam.y_bottom = y0;
                    }
                    self.box_start = None;
                }
            } else {
                self.box_start = None;
            }
        } else if response.dragged() {
            let d = response.drag_delta();
            cam.t_left -= f64::from(d.x) * cam.time_per_px;
            cam.y_bottom += f64::from(d.y) * cam.bytes_per_px;
        }
        if response.double_clicked() {
            self.camera = None;
            ui.ctx().request_repaint();
            return;
        }
        // A click (not a drag) chooses the time for the linked views.
        if response.clicked()
            && let Some(pos) = response.interact_pointer_pos()
        {
            let time = cam.t_left + f64::from(pos.x - rect.left()) * cam.time_per_px;
            let events = events_at(&t.trace, self.axis, time.max(0.0) as u64);
            self.dataset.links.set_time(events);
            // A block under the pointer is picked too: the heap tree shows its group.
            let y = cam.y_bottom + f64::from(rect.bottom() - pos.y) * cam.bytes_per_px;
            if time >= 0.0
                && y >= 0.0
                && let Some(i) = scene.pick(self.axis, time as u64, y as u64)
                && let Ok(i) = u32::try_from(i)
            {
                self.dataset.links.pick_block(i);
            }
        }
        let cam = *cam;
        let ppp = ui.ctx().pixels_per_point();
        let view = AllocMapView {
            time_origin: (cam.t_left.floor() as i64) as u64,
            time_origin_frac: (cam.t_left - cam.t_left.floor()) as f32,
            addr_origin: (cam.y_bottom.floor() as i64) as u64,
            addr_origin_frac: (cam.y_bottom - cam.y_bottom.floor()) as f32,
            pixels_per_time: (f64::from(ppp) / cam.time_per_px) as f32,
            pixels_per_byte: (f64::from(ppp) / cam.bytes_per_px) as f32,
            alpha: self.alpha,
            cushion: self.cushion,
            cushion_strength: self.cushion_strength,
            color_mode: if self.highlighting {
                memscape_render::alloc_map::ColorMode::Categorical
            } else {
                self.color_by.mode()
            },
            background_linear: [0.012, 0.014, 0.02],
        };

        if cx.render_state.is_some() {
            ui.painter().add(egui_wgpu::Callback::new_paint_callback(
                rect,
                AllocMapCallback {
                    key: self.key,
                    rect,
                    view,
                    axis: self.axis,
                    blocks: self.blocks.clone(),
                    dataset: self.dataset.clone(),
                    color_version: self.color_version,
                    drawn: self.drawn.clone(),
                },
            ));
        } else {
            ui.painter().text(
                rect.center(),
                egui::Align2::CENTER_CENTER,
                "no wgpu renderer",
                egui::FontId::proportional(16.0),
                egui::Color32::LIGHT_RED,
            );
        }
        draw_axes(ui, rect, &cam, scene, self.axis);
        if let Some(events) = links.time_events {
            let time = axis_time_of_events(&t.trace, self.axis, events) as f64;
            let x = rect.left() + ((time - cam.t_left) / cam.time_per_px) as f32;
            if x >= rect.left() && x <= rect.right() {
                ui.painter().line_segment(
                    [egui::pos2(x, rect.top()), egui::pos2(x, rect.bottom())],
                    egui::Stroke::new(1.5, egui::Color32::from_rgb(250, 200, 80)),
                );
            }
        }
        draw_legend(ui, rect, scene, &t.trace, self.color_by);
        if let Some(bar) = occupancy_rect {
            draw_occupancy(
                ui,
                bar,
                &cam,
                scene,
                self.axis,
                self.occupancy,
                &mut self.occupancy_cache,
            );
        }

        if let Some(pos) = response.hover_pos() {
            let time = cam.t_left + f64::from(pos.x - rect.left()) * cam.time_per_px;
            let y = cam.y_bottom + f64::from(rect.bottom() - pos.y) * cam.bytes_per_px;
            if time >= 0.0 && y >= 0.0 {
                if let Some(i) = scene.pick(self.axis, time as u64, y as u64) {
                    response.on_hover_ui_at_pointer(|ui| block_details(ui, &t.trace, i));
                } else if let Some((region, address)) = scene.uncollapse(y as u64) {
                    let when = match self.axis {
                        TimeAxis::Events => format!("event {time:.0}"),
                        TimeAxis::Wall => format!("{:.3} ms", time / 1e6),
                    };
                    response.on_hover_text_at_pointer(format!(
                        "free · {address:#x} (region {region}) · {when}"
                    ));
                }
            }
        }
    }
}

struct AllocMapCallback {
    key: u64,
    rect: egui::Rect,
    view: AllocMapView,
    axis: TimeAxis,
    blocks: Arc<Vec<AllocBlockGpu>>,
    dataset: Arc<Dataset>,
    color_version: u64,
    drawn: Arc<AtomicBool>,
}

impl egui_wgpu::CallbackTrait for AllocMapCallback {
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
        let Some(scene) = self.dataset.alloc_trace().and_then(|t| t.scene.as_ref()) else {
            return Vec::new();
        };
        let times = scene.times(self.axis);
        let AllocMapGpu {
            pipelines,
            target_format,
            panes,
        } = gpu;
        let pane = panes.entry(self.key).or_insert_with(|| PaneGpu {
            data: AllocMapData::upload(device, pipelines, &self.blocks, times),
            axis: self.axis,
            color_version: self.color_version,
            frame: AllocMapFrame::new(device, pipelines),
        });
        if pane.axis != self.axis {
            pane.data.replace_times(queue, times);
            pane.axis = self.axis;
        }
        if pane.color_version != self.color_version {
            pane.data.replace_blocks(queue, &self.blocks);
            pane.color_version = self.color_version;
        }
        let vp = egui::epaint::ViewportInPixels::from_points(
            &self.rect,
            screen.pixels_per_point,
            screen.size_in_pixels,
        );
        let size = [vp.width_px.max(1) as u32, vp.height_px.max(1) as u32];
        pane.frame.prepare(
            device,
            queue,
            encoder,
            pipelines,
            &pane.data,
            &self.view,
            size,
            [vp.left_px as f32, vp.top_px as f32],
            *target_format,
        );
        self.drawn.store(true, Ordering::Release);
        Vec::new()
    }

    fn paint(
        &self,
        _info: egui::PaintCallbackInfo,
        pass: &mut wgpu::RenderPass<'static>,
        resources: &egui_wgpu::CallbackResources,
    ) {
        if let Some(gpu) = resources.get::<AllocMapGpu>()
            && let Some(pane) = gpu.panes.get(&self.key)
        {
            pane.frame.resolve(pass, &gpu.pipelines);
        }
    }
}
