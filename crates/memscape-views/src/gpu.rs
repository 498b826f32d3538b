//! The one GPU bridge between pictures and egui: a pane paints its [`Picture`] with
//! [`paint_picture`], which adds one egui-wgpu paint callback over `memscape-render`'s pipelines;
//! the uploads and per-view targets live in one [`GpuRegistry`] in egui-wgpu's callback
//! resources, keyed by the pane's [`PaneKey`].
//!
//! What is uploaded is kept until it changes: a shape layer's instances until its shapes differ,
//! the allocation map's blocks until the blocks, times or selection `Arc`s are other ones (a new
//! colouring replaces only the colours, another time axis only the times), a morph's records
//! until its `Arc` changes; an allocation-map view is accumulated again only when what it shows
//! changed (hover and animation elsewhere cost only its resolve). Panning and zooming a shape
//! layer rewrite its uniform only.
//!
//! A pane owns its key; dropping the pane releases it, and [`GpuRegistry::release_closed`] (run
//! at the start of each frame) frees everything kept under it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use memscape_render::alloc_map::{
    AllocMapData, AllocMapFrame, AllocMapPicker, AllocMapPipelines, AllocMapView, BarBlocks,
    CursorOverlay, CursorPipelines, DrawOptions, OccupancyBarData, OccupancyBarFrame,
    OccupancyBarView, OccupancyVariant, SelectionStyle, TimeMapping,
};
use memscape_render::polar_morph::{PolarMorphData, PolarMorphPipelines};
use memscape_render::shapes::{ShapeBatch, ShapeGpu, ShapesPipelines, ShapesView};
use memscape_render::{FrameStats, StatsRecorder};

use crate::gpu_health::{GpuFault, GpuHealth};
use crate::picture::{BarLayer, Layer, MapData, MapLayer, MorphData, MorphLayer, Picture};

/// The paint callback: what a pane's picture uploads and accumulates before egui's pass, and
/// what it draws in it.
mod callback;
/// Map layers drawn from a level-of-detail index (on the spot, or by the GUI's worker).
mod lod;
/// Map and bar layers whose CPU sums the pane's worker computes (`sums_worker`).
mod sums;

use crate::sums_worker::{bar_slot, map_slot};

/// Keys of panes dropped since the app last asked.
static RELEASED: Mutex<Vec<u64>> = Mutex::new(Vec::new());

/// A process-wide unique key for a pane's GPU resources, held by the pane. When the pane is
/// dropped (its tile closed) the key is released and the registry frees everything kept under
/// it. Not `Clone`: one owner per key. It also remembers the picture last painted under it,
/// which "Export view as SVG/PNG…" writes.
pub struct PaneKey(u64, Mutex<Option<Arc<Picture>>>);

impl std::fmt::Debug for PaneKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("PaneKey").field(&self.0).finish()
    }
}

impl PaneKey {
    pub fn new() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Self(NEXT.fetch_add(1, Ordering::Relaxed), Mutex::new(None))
    }

    pub fn get(&self) -> u64 {
        self.0
    }

    /// The picture last painted under this key (what the pane shows).
    pub fn last_picture(&self) -> Option<Arc<Picture>> {
        self.1.lock().ok().and_then(|p| p.clone())
    }

    fn remember(&self, picture: &Arc<Picture>) {
        if let Ok(mut p) = self.1.lock() {
            *p = Some(picture.clone());
        }
    }
}

impl Default for PaneKey {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for PaneKey {
    fn drop(&mut self) {
        if let Ok(mut released) = RELEASED.lock() {
            released.push(self.0);
        }
    }
}

/// The keys of panes dropped since the last call.
pub fn take_released_pane_keys() -> Vec<u64> {
    RELEASED
        .lock()
        .map(|mut r| std::mem::take(&mut *r))
        .unwrap_or_default()
}

/// A pick of the allocation map under the pointer: which map layer, where (pane points), and a
/// tag the answer comes back with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PickRequest {
    pub slot: u32,
    pub point: egui::Pos2,
    pub tag: u64,
}

/// Answers of picks: (tag, upload position of the block under the pointer, if any).
pub type PickAnswers = Arc<Mutex<Vec<(u64, Option<usize>)>>>;

/// What a pane asks of the GPU besides drawing its picture.
#[derive(Clone, Default)]
pub struct PaintOptions {
    /// Pick the block under a point of a map layer; the answer arrives in `answers` a frame or
    /// two later.
    pub pick: Option<PickRequest>,
    pub answers: Option<PickAnswers>,
    /// Set once the picture has been prepared on the GPU (the screenshot waits for it).
    pub drawn: Option<Arc<AtomicBool>>,
    /// The pane's worker for map and bar layers summed on the CPU (`sums_worker`): their sums
    /// are asked of it and its newest are drawn, stretched to the view. `None`: summed on the
    /// spot (headless pictures).
    pub sums: Option<Arc<crate::sums_worker::SumsWorker>>,
    /// On a software rasterizer, every map and bar layer summed on the CPU (by `sums`), not
    /// only big ones: a live recording's pane, where each new snapshot lengthens the time
    /// axis, so that lavapipe would accumulate every block again for each one (0.7–2.5 s a
    /// frame at 12–130 k blocks; BENCHMARKS.md, "Live view cadence").
    pub cpu_sums_always: bool,
}

/// Whether a layer of `blocks` blocks (or intervals) takes its sums from the CPU:
/// [`memscape_render::alloc_map::dense::prefers_cpu_sums`], or any layer on a software
/// rasterizer when `always` (see [`PaintOptions::cpu_sums_always`]), unless
/// `MEMSCAPE_ALLOC_MAP_PATH` names a GPU path.
fn takes_cpu_sums(device: &wgpu::Device, blocks: usize, always: bool) -> bool {
    memscape_render::alloc_map::dense::prefers_cpu_sums(device, blocks)
        || (always
            && memscape_render::context::is_software(device)
            && !matches!(
                std::env::var("MEMSCAPE_ALLOC_MAP_PATH").as_deref(),
                Ok("dense" | "raster")
            ))
}

/// Paints `picture` into `rect` of `ui`: its background and GPU layers and shapes through one
/// paint callback (when egui renders with wgpu), its labels with egui.
pub fn paint_picture(
    ui: &egui::Ui,
    key: &PaneKey,
    rect: egui::Rect,
    picture: Arc<Picture>,
    options: PaintOptions,
) {
    key.remember(&picture);
    // A lost device or a pane the GPU refused: the reason instead of the picture.
    if let Some(health) = crate::gpu_health::of(ui.ctx()) {
        if let Some(why) = health.lost() {
            paint_fault(ui, key, rect, &GpuHealth::lost_message(&why), false);
            return;
        }
        if let Some(message) = health.pane_failure(key.get()) {
            if paint_fault(ui, key, rect, &message, true) {
                health.retry_pane(key.get());
                ui.ctx().request_repaint();
            }
            return;
        }
    }
    let labels_painter = ui.painter_at(rect);
    let origin = rect.min;
    let labels = (!picture.labels.is_empty()).then(|| picture.clone());
    ui.painter().add(egui_wgpu::Callback::new_paint_callback(
        rect,
        PictureCallback {
            key: key.get(),
            rect,
            picture,
            options,
        },
    ));
    if let Some(p) = labels {
        crate::label::paint(&labels_painter, origin, &p.labels);
    }
}

/// Draws `message` over `rect`; with `retry`, a click on it asks to try again (returned).
fn paint_fault(ui: &egui::Ui, key: &PaneKey, rect: egui::Rect, message: &str, retry: bool) -> bool {
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 0.0, ui.visuals().extreme_bg_color);
    let text = if retry {
        format!("⚠ {message}\n\nOther views keep drawing. Click here to try again.")
    } else {
        format!("⚠ {message}")
    };
    let galley = painter.layout(
        text,
        egui::FontId::proportional(14.0),
        egui::Color32::from_rgb(255, 120, 110),
        (rect.width() - 32.0).max(64.0),
    );
    let at = rect.center() - galley.size() / 2.0;
    painter.galley(at, galley, egui::Color32::WHITE);
    retry
        && ui
            .interact(
                rect,
                egui::Id::unique(("gpu-fault", key.get())),
                egui::Sense::click(),
            )
            .clicked()
}

/// [`paint_picture`] with nothing else asked of the GPU.
pub fn paint(ui: &egui::Ui, key: &PaneKey, rect: egui::Rect, picture: Picture) {
    paint_picture(ui, key, rect, Arc::new(picture), PaintOptions::default());
}

/// GPU resources of every pane on one device, in egui-wgpu's callback resources.
pub struct GpuRegistry {
    shapes: ShapesPipelines,
    morph: PolarMorphPipelines,
    maps: AllocMapPipelines,
    cursors: CursorPipelines,
    /// The format of egui's render target.
    target_format: wgpu::TextureFormat,
    panes: HashMap<u64, PaneGpu>,
    /// Frame statistics: GPU time of each pane's passes, the path of each map (see
    /// [`Self::enable_stats`]).
    stats: Option<StatsRecorder>,
    /// The device's lost state and the panes it refused.
    health: Arc<GpuHealth>,
}

impl GpuRegistry {
    pub fn new(
        device: &wgpu::Device,
        target_format: wgpu::TextureFormat,
    ) -> Result<Self, memscape_render::RenderError> {
        let mut shapes = ShapesPipelines::new(device)?;
        shapes.ensure_format(device, target_format);
        let mut morph = PolarMorphPipelines::new(device)?;
        morph.ensure_format(device, target_format);
        Ok(Self {
            shapes,
            morph,
            maps: AllocMapPipelines::new(device)?,
            cursors: CursorPipelines::new(device)?,
            target_format,
            panes: HashMap::new(),
            stats: None,
            health: GpuHealth::watch(device),
        })
    }

    /// Collects frame statistics from now on: each map and bar accumulation's GPU time
    /// (timestamp queries, where the device has them) and path, scoped `pane K · map S`. The
    /// overlay reads them with [`Self::frame_stats`]. Drawing inside egui's render pass (the
    /// resolves, shapes and morphs) is not timed.
    pub fn enable_stats(&mut self, device: &wgpu::Device, queue: &wgpu::Queue) {
        let stats = StatsRecorder::new(device, queue);
        self.maps.set_stats(Some(stats.clone()));
        self.stats = Some(stats);
    }

    /// The latest GPU time of each pass and the latest path of each map, when collected.
    pub fn frame_stats(&self) -> Option<FrameStats> {
        self.stats.as_ref().map(StatsRecorder::snapshot)
    }

    /// [`Self::frame_stats`] of the registry in egui-wgpu's callback resources.
    pub fn frame_stats_of(render_state: &egui_wgpu::RenderState) -> Option<FrameStats> {
        render_state
            .renderer
            .read()
            .callback_resources
            .get::<GpuRegistry>()
            .and_then(GpuRegistry::frame_stats)
    }

    /// Puts the registry into egui-wgpu's callback resources, collecting frame statistics;
    /// returns the device's health (lost, errors no scope caught) for the shell to show.
    pub fn install(
        render_state: &egui_wgpu::RenderState,
    ) -> Result<Arc<GpuHealth>, memscape_render::RenderError> {
        let mut registry = Self::new(&render_state.device, render_state.target_format)?;
        registry.enable_stats(&render_state.device, &render_state.queue);
        let health = registry.health.clone();
        render_state
            .renderer
            .write()
            .callback_resources
            .insert(registry);
        Ok(health)
    }

    /// The device's health, as [`GpuHealth::watch`] records it.
    pub fn health(&self) -> Arc<GpuHealth> {
        self.health.clone()
    }

    /// [`Self::prepare`] inside out-of-memory, validation and internal error scopes, into a
    /// command buffer of its own (egui's paint callbacks return theirs, submitted before
    /// egui's): a pane whose uploads fail loses its GPU resources, its commands are dropped
    /// (egui's frame and the other panes draw), and it is marked failed (its message replaces
    /// its picture until retried). Nothing is prepared on a lost device or for a failed pane
    /// (`Ok(None)`).
    pub fn prepare_guarded(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        screen: &egui_wgpu::ScreenDescriptor,
        pane_picture: &PanePicture<'_>,
    ) -> Result<Option<wgpu::CommandBuffer>, GpuFault> {
        let key = pane_picture.key;
        if self.health.lost().is_some() || self.health.pane_failure(key).is_some() {
            return Ok(None);
        }
        let (commands, fault) = crate::gpu_health::scoped(device, || {
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("memscape pane"),
            });
            self.prepare(device, queue, screen, &mut encoder, pane_picture);
            encoder.finish()
        });
        match fault {
            None => Ok(Some(commands)),
            Some(f) => {
                tracing::error!("pane {key}: {f:?}");
                self.panes.remove(&key);
                self.health.fail_pane(key, f.message());
                Err(f)
            }
        }
    }

    /// Frees the GPU resources of panes closed in an earlier frame. Run it at the start of a
    /// frame: by then the frame in which a pane closed has been painted, so none of its paint
    /// callbacks can bring the resources back.
    pub fn release_closed(render_state: &egui_wgpu::RenderState) {
        let released = take_released_pane_keys();
        if released.is_empty() {
            return;
        }
        tracing::debug!(
            "freeing the GPU resources of {} closed pane(s)",
            released.len()
        );
        let mut renderer = render_state.renderer.write();
        if let Some(registry) = renderer.callback_resources.get_mut::<GpuRegistry>() {
            registry.release(&released);
        }
    }

    /// Frees what the panes `released` kept.
    pub fn release(&mut self, released: &[u64]) {
        self.panes.retain(|key, _| !released.contains(key));
        if let Some(stats) = &self.stats {
            let scopes: Vec<String> = released.iter().map(|k| format!("pane {k} ·")).collect();
            stats.forget(|scope| scopes.iter().any(|s| scope.starts_with(s.as_str())));
        }
    }

    /// Panes with resources (tests).
    pub fn pane_count(&self) -> usize {
        self.panes.len()
    }
}

/// A shape list on the GPU and what it holds.
struct ShapeUpload {
    batch: ShapeBatch,
    shapes: Vec<ShapeGpu>,
}

/// The blocks of a pane's map layers on the GPU and the data they came from.
struct MapUpload {
    data: AllocMapData,
    source: Arc<MapData>,
    /// Bumped on every change of the upload (views accumulate again).
    version: u64,
}

/// One pane's uploads and per-view targets.
#[derive(Default)]
struct PaneGpu {
    /// The picture's background, drawn by the shapes pipeline rather than as an egui rectangle
    /// (on a software rasterizer egui's textured fill costs several times as much per pixel).
    background: Option<ShapeUpload>,
    shape_layers: HashMap<u32, ShapeUpload>,
    overlay: Option<ShapeUpload>,
    morphs: HashMap<u32, (Arc<MorphData>, PolarMorphData)>,
    map: Option<MapUpload>,
    frames: HashMap<u32, (AllocMapFrame, u64)>,
    /// The bars' blocks, their upload (made when the GPU draws them) and a version.
    bars: Option<(Arc<BarBlocks>, Option<OccupancyBarData>, u64)>,
    bar_frames: HashMap<u32, (OccupancyBarFrame, u64)>,
    cursors: HashMap<u32, CursorOverlay>,
    picker: Option<AllocMapPicker>,
    asked: HashMap<u64, u64>,
    /// The exact blocks in view of map layers drawn from a level-of-detail index.
    lod_uploads: HashMap<u32, Option<AllocMapData>>,
    /// The same, of the worker's newest picture (`lod_refine`), with its generation.
    refined_uploads: HashMap<u32, (u64, Option<AllocMapData>)>,
    /// The level-of-detail cells uploaded for the GPU resolve of each map layer.
    lod_cells: HashMap<u32, memscape_render::alloc_map::LodCellsCache>,
    /// The CPU-summed layers' sums, swapped in together (`sums::SumsShown`).
    sums_shown: sums::SumsShown,
}

struct PictureCallback {
    key: u64,
    rect: egui::Rect,
    picture: Arc<Picture>,
    options: PaintOptions,
}

/// One pane's picture in a frame: where it lies on the screen (points) and what it asks.
pub struct PanePicture<'a> {
    pub key: u64,
    pub rect: egui::Rect,
    pub picture: &'a Picture,
    pub options: &'a PaintOptions,
}

/// Where `rect` (absolute points) lands in pixels: size, top-left corner (clamped to the
/// screen, as egui sets viewports).
fn viewport(rect: egui::Rect, screen: &egui_wgpu::ScreenDescriptor) -> ([u32; 2], [f32; 2]) {
    let vp = egui::epaint::ViewportInPixels::from_points(
        &rect,
        screen.pixels_per_point,
        screen.size_in_pixels,
    );
    (
        [vp.width_px.max(1) as u32, vp.height_px.max(1) as u32],
        [vp.left_px as f32, vp.top_px as f32],
    )
}

/// `view` (world → pane points) as world → pixels of the pane's viewport: scaled by the
/// pixels per point and shifted where the pane is clipped by the screen's edge.
fn pixel_view(
    view: &ShapesView,
    pane: egui::Rect,
    screen: &egui_wgpu::ScreenDescriptor,
) -> ([f32; 2], ShapesView) {
    let ppp = screen.pixels_per_point;
    let (size, origin) = viewport(pane, screen);
    let shift = [pane.min.x * ppp - origin[0], pane.min.y * ppp - origin[1]];
    (
        [size[0] as f32, size[1] as f32],
        ShapesView {
            scale: [view.scale[0] * ppp, view.scale[1] * ppp],
            offset: [
                view.offset[0] * ppp + shift[0],
                view.offset[1] * ppp + shift[1],
            ],
        },
    )
}

/// A layer's name in the frame statistics: `map 2`, `map context`, `bar stacked`.
fn slot_name(kind: &str, slot: u32) -> String {
    match (kind, slot) {
        ("map", crate::alloc_map::compose::CONTEXT_SLOT) => "map context".to_owned(),
        ("bar", crate::alloc_map::compose::STACKED_SLOT) => "bar stacked".to_owned(),
        _ => format!("{kind} {slot}"),
    }
}

/// A hash of a view and the other things an accumulation depends on.
fn frame_key(view: &AllocMapView, parts: &[u64]) -> u64 {
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
    )
        .hash(&mut h);
    h.finish()
}

fn upload_shapes(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    pipelines: &ShapesPipelines,
    slot: &mut Option<ShapeUpload>,
    shapes: Vec<ShapeGpu>,
) -> Option<()> {
    let upload = slot.get_or_insert_with(|| ShapeUpload {
        batch: ShapeBatch::new(device, pipelines),
        shapes: Vec::new(),
    });
    if upload.shapes != shapes || upload.batch.is_empty() != shapes.is_empty() {
        if let Err(e) = upload.batch.set_shapes(device, queue, &shapes) {
            tracing::error!("shapes: {e}");
            return None;
        }
        upload.shapes = shapes;
    }
    Some(())
}

struct Gpu<'a> {
    device: &'a wgpu::Device,
    queue: &'a wgpu::Queue,
    screen: &'a egui_wgpu::ScreenDescriptor,
    encoder: &'a mut wgpu::CommandEncoder,
}

impl PanePicture<'_> {
    fn abs(&self, r: egui::Rect) -> egui::Rect {
        r.translate(self.rect.min.to_vec2())
    }

    fn prepare_map(
        &self,
        gpu: &mut Gpu<'_>,
        reg: &mut GpuRegistry,
        pane: &mut PaneGpu,
        m: &MapLayer,
    ) {
        let (device, queue) = (gpu.device, gpu.queue);
        if let Some(lod) = &m.data.lod {
            self.prepare_lod_map(gpu, reg, pane, m, lod);
            return;
        }
        let dim = m.data.selection.is_some();
        let cpu_sums = !dim && takes_cpu_sums(device, m.range.len(), self.options.cpu_sums_always);
        let picking = self.options.pick.is_some_and(|p| p.slot == m.slot);
        // Sums from the CPU draw without the upload: it is made for the first pick only (on a
        // software rasterizer its copy of every block is host memory, 40 B a block).
        let needs_upload = !cpu_sums
            || picking
            || pane
                .map
                .as_ref()
                .is_some_and(|u| Arc::ptr_eq(&u.source, &m.data));
        if !needs_upload {
            // An upload of older data is not kept up to date; the next pick makes a new one.
            pane.map = None;
        }
        // The upload: replaced only in the parts that changed.
        match &mut pane.map {
            _ if !needs_upload => {}
            Some(u) if Arc::ptr_eq(&u.source, &m.data) => {}
            Some(u) if u.data.block_count == m.data.blocks.len() => {
                if !Arc::ptr_eq(&u.source.times, &m.data.times) {
                    u.data.replace_times(queue, &m.data.times);
                }
                if !Arc::ptr_eq(&u.source.blocks, &m.data.blocks) {
                    u.data.replace_blocks(queue, &m.data.blocks);
                }
                if let Some(bits) = &m.data.selection
                    && u.source
                        .selection
                        .as_ref()
                        .is_none_or(|s| !Arc::ptr_eq(s, bits))
                {
                    u.data.set_selection(queue, bits.words());
                }
                u.source = m.data.clone();
                u.version += 1;
            }
            _ => {
                let data = AllocMapData::upload(device, &reg.maps, &m.data.blocks, &m.data.times);
                if let Some(bits) = &m.data.selection {
                    data.set_selection(queue, bits.words());
                }
                let version = pane.map.as_ref().map_or(0, |u| u.version + 1);
                pane.map = Some(MapUpload {
                    data,
                    source: m.data.clone(),
                    version,
                });
                pane.asked.clear();
            }
        }
        let upload = pane.map.as_ref();
        if upload.is_none() && !cpu_sums {
            return;
        }
        let (size, origin) = viewport(self.abs(m.rect), gpu.screen);
        let mut view = m.window.view(m.extent, [size[0] as f32, size[1] as f32]);
        m.style.apply(&mut view);
        let key = frame_key(
            &view,
            &[
                upload.map_or(Arc::as_ptr(&m.data) as u64, |u| u.version),
                u64::from(dim),
                m.range.start as u64,
                m.range.end as u64,
                u64::from(size[0]) << 32 | u64::from(size[1]),
                u64::from(origin[0].to_bits()) << 32 | u64::from(origin[1].to_bits()),
            ],
        );
        let (frame, prepared) = pane
            .frames
            .entry(m.slot)
            .or_insert_with(|| (AllocMapFrame::new(device, &reg.maps), 0));
        if cpu_sums {
            // Many blocks on a software rasterizer: Eq. 1's sums from the CPU (in the GUI the
            // pane's worker's), resolved on the GPU like any frame (the blocks are uploaded
            // for picking only).
            let job = crate::sums_worker::SumsJob {
                source: crate::sums_worker::SumsSource::Map {
                    blocks: m.data.blocks.clone(),
                    times: m.data.times.clone(),
                },
                range: m.range.clone(),
                view,
                size,
                row: None,
                accumulate: m.data.accumulate,
            };
            let worker = self.options.sums.as_deref();
            let shown = &pane.sums_shown;
            sums::prepare_cpu(worker, shown, map_slot(m.slot), job, key, prepared, |s| {
                frame.prepare_sums(
                    device,
                    queue,
                    &mut reg.maps,
                    &view,
                    size,
                    origin,
                    reg.target_format,
                    &s.acc,
                    &s.cov,
                );
            });
        } else if let Some(upload) = upload
            && *prepared != key
        {
            if let Some(stats) = &reg.stats {
                stats.set_scope(format!("pane {} · {}", self.key, slot_name("map", m.slot)));
            }
            frame.prepare_with(
                device,
                queue,
                gpu.encoder,
                &mut reg.maps,
                &upload.data,
                &view,
                size,
                origin,
                reg.target_format,
                &DrawOptions {
                    range: Some(m.range.clone()),
                    selection: if dim {
                        SelectionStyle::DIM
                    } else {
                        SelectionStyle::Off
                    },
                    ..Default::default()
                },
            );
            *prepared = key;
        }
        if let Some(c) = &m.cursors {
            let overlay = pane
                .cursors
                .entry(m.slot)
                .or_insert_with(|| CursorOverlay::new(device, &reg.cursors));
            overlay.prepare(
                device,
                queue,
                &mut reg.cursors,
                &c.cursors,
                &TimeMapping::from(&view),
                &c.style,
                size[0],
                reg.target_format,
            );
        } else {
            pane.cursors.remove(&m.slot);
        }
        if let Some(pick) = self.options.pick.filter(|p| p.slot == m.slot)
            && let Some(upload) = upload
        {
            let ppp = gpu.screen.pixels_per_point;
            let local = (pick.point - m.rect.min) * ppp;
            let cursor = [local.x.max(0.0) as u32, local.y.max(0.0) as u32];
            let picker = pane
                .picker
                .get_or_insert_with(|| AllocMapPicker::new(device, &reg.maps, 3));
            if let Some(request) = picker.request(
                queue,
                gpu.encoder,
                &reg.maps,
                &upload.data,
                &view,
                size,
                cursor,
                Some(m.range.clone()),
            ) {
                pane.asked.insert(request, pick.tag);
            }
        }
    }

    fn prepare_bar(
        &self,
        gpu: &mut Gpu<'_>,
        reg: &mut GpuRegistry,
        pane: &mut PaneGpu,
        b: &BarLayer,
    ) {
        let (device, queue) = (gpu.device, gpu.queue);
        if pane
            .bars
            .as_ref()
            .is_none_or(|(source, _, _)| !Arc::ptr_eq(source, &b.bars))
        {
            let version = pane.bars.as_ref().map_or(0, |(_, _, v)| v + 1);
            pane.bars = Some((b.bars.clone(), None, version));
        }
        let Some((_, upload, version)) = &mut pane.bars else {
            return;
        };
        let (size, origin) = viewport(self.abs(b.rect), gpu.screen);
        let mut map_view = b.window.view(1, [size[0] as f32, size[1] as f32]);
        b.style.apply(&mut map_view);
        let view = OccupancyBarView::from_map(&map_view, b.variant);
        let key = frame_key(
            &map_view,
            &[
                *version,
                {
                    use std::hash::{Hash, Hasher};
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    b.part().hash(&mut h);
                    h.finish()
                },
                u64::from(size[0]) << 32 | u64::from(size[1]),
                u64::from(origin[0].to_bits()) << 32 | u64::from(origin[1].to_bits()),
                // The variant, as its debug text's hash.
                {
                    use std::hash::{Hash, Hasher};
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    format!("{:?}", b.variant).hash(&mut h);
                    h.finish()
                },
            ],
        );
        let (frame, prepared) = pane
            .bar_frames
            .entry(b.slot)
            .or_insert_with(|| (OccupancyBarFrame::new(device, &reg.maps), 0));
        // A big trace's flat bar from its running integral: a few searches per column.
        if let Some(integral) = &b.integral
            && b.variant == OccupancyVariant::Flat
            && let Some(job) = OccupancyBarFrame::cpu_sums_view(&b.bars, &view, b.part(), size)
        {
            if *prepared != key {
                let sums = integral.sums(&job.view.eq1([size[0].max(1), size[1].max(1)]));
                let format = reg.target_format;
                frame.prepare_sums(
                    device,
                    queue,
                    &mut reg.maps,
                    &job.view,
                    size,
                    origin,
                    format,
                    &sums,
                    // The running integral's sums are fractions already.
                    1.0,
                );
                *prepared = key;
            }
            return;
        }
        // A bar of millions of intervals on a software rasterizer: its sums from the CPU (the
        // pane's worker's, when it has one), and no upload.
        let intervals = b.bars.blocks.len();
        let cpu = takes_cpu_sums(device, intervals, self.options.cpu_sums_always)
            .then(|| OccupancyBarFrame::cpu_sums_view(&b.bars, &view, b.part(), size))
            .flatten();
        if let Some(job) = cpu {
            let map_view = job.view;
            let job = crate::sums_worker::SumsJob {
                source: crate::sums_worker::SumsSource::Bar(b.bars.clone()),
                range: job.range,
                view: job.view,
                size,
                row: job.row,
                accumulate: None,
            };
            let worker = self.options.sums.as_deref();
            let shown = &pane.sums_shown;
            sums::prepare_cpu(worker, shown, bar_slot(b.slot), job, key, prepared, |s| {
                frame.prepare_sums(
                    device,
                    queue,
                    &mut reg.maps,
                    &map_view,
                    size,
                    origin,
                    reg.target_format,
                    s,
                    b.bars.value_scale,
                );
            });
            return;
        }
        if *prepared == key {
            return;
        }
        if let Some(stats) = &reg.stats {
            stats.set_scope(format!("pane {} · {}", self.key, slot_name("bar", b.slot)));
        }
        let data =
            upload.get_or_insert_with(|| OccupancyBarData::upload(device, &reg.maps, &b.bars));
        frame.prepare(
            device,
            queue,
            gpu.encoder,
            &mut reg.maps,
            data,
            &view,
            b.part(),
            size,
            origin,
            reg.target_format,
        );
        *prepared = key;
    }

    fn prepare_morph(&self, gpu: &Gpu<'_>, reg: &GpuRegistry, pane: &mut PaneGpu, m: &MorphLayer) {
        let stale = pane
            .morphs
            .get(&m.slot)
            .is_none_or(|(source, _)| !Arc::ptr_eq(source, &m.data));
        if stale {
            match PolarMorphData::new(gpu.device, &reg.morph, &m.data.points, &m.data.arcs) {
                Ok(data) => {
                    pane.morphs.insert(m.slot, (m.data.clone(), data));
                }
                Err(e) => {
                    tracing::error!("cycle view upload: {e}");
                    return;
                }
            }
        }
        let ppp = gpu.screen.pixels_per_point;
        let (size, shifted) = pixel_view(
            &ShapesView {
                scale: [1.0, 1.0],
                offset: [m.rect.min.x, m.rect.min.y],
            },
            self.rect,
            gpu.screen,
        );
        let mut view = m.view;
        view.center_px = [
            view.center_px[0] * ppp + shifted.offset[0],
            view.center_px[1] * ppp + shifted.offset[1],
        ];
        view.radius_px *= ppp;
        view.point_radius_px *= ppp;
        view.arc_width_px *= ppp;
        if let Some((_, data)) = pane.morphs.get_mut(&m.slot) {
            data.set_view(gpu.queue, &view, size, reg.target_format);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_pane_releases_its_key() {
        let kept = PaneKey::new();
        let closed = PaneKey::new();
        let (k, c) = (kept.get(), closed.get());
        drop(closed);
        // Other tests may release keys concurrently: only ours matter.
        let released = take_released_pane_keys();
        assert!(released.contains(&c));
        assert!(!released.contains(&k));
    }
}
