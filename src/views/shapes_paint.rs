//! Draws a view's [`Shape`] list inside an egui pane through the renderer's shape pipeline.
//! Shapes are in points relative to the pane's top left; each pane keeps its own batch on the
//! GPU, re-uploaded only when the pane's shape `version` changes (camera moves touch only the
//! uniform).

use std::collections::HashMap;
use std::sync::Arc;

use memscape_render::shapes::{ShapeBatch, ShapeGpu, ShapesPipelines, ShapesView};

/// Per device, in egui-wgpu's callback resources.
pub struct ShapesGpu {
    pipelines: ShapesPipelines,
    target_format: wgpu::TextureFormat,
    batches: HashMap<u64, (ShapeBatch, u64)>,
}

impl ShapesGpu {
    pub fn new(
        device: &wgpu::Device,
        target_format: wgpu::TextureFormat,
    ) -> Result<Self, memscape_render::RenderError> {
        let mut pipelines = ShapesPipelines::new(device)?;
        pipelines.ensure_format(device, target_format);
        Ok(Self {
            pipelines,
            target_format,
            batches: HashMap::new(),
        })
    }

    /// Frees the batches of closed panes.
    pub fn release(&mut self, released: &[u64]) {
        crate::views::forget_released(&mut self.batches, released);
    }
}

/// One pane's shapes for this frame.
pub struct ShapesCallback {
    /// Identifies the pane (its batch survives between frames).
    pub key: u64,
    /// Bumped by the pane whenever `shapes` changes.
    pub version: u64,
    pub shapes: Arc<Vec<ShapeGpu>>,
    /// World → points transform of the pane (scaled to pixels here).
    pub view: ShapesView,
    pub rect: egui::Rect,
}

/// Where a pane's pixels land in a paint callback: egui sets the viewport to `rect` clamped to
/// the screen, so pane-local pixel `p` is at `p + shift` in viewport pixels. Returns the
/// viewport size in pixels, `shift` and the pixels per point.
pub fn pane_viewport(
    rect: &egui::Rect,
    screen: &egui_wgpu::ScreenDescriptor,
) -> ([f32; 2], [f32; 2], f32) {
    let ppp = screen.pixels_per_point;
    let vp = egui::epaint::ViewportInPixels::from_points(rect, ppp, screen.size_in_pixels);
    (
        [vp.width_px.max(1) as f32, vp.height_px.max(1) as f32],
        [
            rect.min.x * ppp - vp.left_px as f32,
            rect.min.y * ppp - vp.top_px as f32,
        ],
        ppp,
    )
}

/// Adds the paint callback for `shapes` covering `rect`.
pub fn paint(ui: &egui::Ui, callback: ShapesCallback) {
    let rect = callback.rect;
    ui.painter()
        .add(egui_wgpu::Callback::new_paint_callback(rect, callback));
}

impl egui_wgpu::CallbackTrait for ShapesCallback {
    fn prepare(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        screen: &egui_wgpu::ScreenDescriptor,
        _encoder: &mut wgpu::CommandEncoder,
        resources: &mut egui_wgpu::CallbackResources,
    ) -> Vec<wgpu::CommandBuffer> {
        let Some(gpu) = resources.get_mut::<ShapesGpu>() else {
            return Vec::new();
        };
        let ShapesGpu {
            pipelines,
            target_format,
            batches,
        } = gpu;
        let (batch, version) = batches
            .entry(self.key)
            .or_insert_with(|| (ShapeBatch::new(device, pipelines), u64::MAX));
        if *version != self.version {
            if let Err(e) = batch.set_shapes(device, queue, &self.shapes) {
                tracing::error!("shapes of pane {}: {e}", self.key);
            }
            *version = self.version;
        }
        let (size, shift, ppp) = pane_viewport(&self.rect, screen);
        let view = ShapesView {
            scale: [self.view.scale[0] * ppp, self.view.scale[1] * ppp],
            offset: [
                self.view.offset[0] * ppp + shift[0],
                self.view.offset[1] * ppp + shift[1],
            ],
        };
        batch.set_view(queue, &view, size, *target_format);
        Vec::new()
    }

    fn paint(
        &self,
        _info: egui::PaintCallbackInfo,
        pass: &mut wgpu::RenderPass<'static>,
        resources: &egui_wgpu::CallbackResources,
    ) {
        if let Some(gpu) = resources.get::<ShapesGpu>()
            && let Some((batch, _)) = gpu.batches.get(&self.key)
        {
            batch.paint(&gpu.pipelines, pass);
        }
    }
}
