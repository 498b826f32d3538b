//! The paint callback of a pane's picture: [`GpuRegistry::prepare`] uploads what changed and
//! records the accumulations the picture needs before egui's render pass; `paint` draws the
//! resolved layers in it.

use memscape_render::shapes::{Geometry, Shape};

use super::*;

impl GpuRegistry {
    /// Uploads what changed of `pane`'s picture and records the accumulations it needs (the
    /// paint callback's `prepare`).
    pub fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        screen: &egui_wgpu::ScreenDescriptor,
        encoder: &mut wgpu::CommandEncoder,
        pane_picture: &PanePicture<'_>,
    ) {
        let reg = self;
        let this = pane_picture;
        // The readback of an earlier frame's timestamps moves on (its encoder was submitted).
        if let Some(stats) = &reg.stats {
            stats.poll(device);
        }
        let mut pane = reg.panes.remove(&this.key).unwrap_or_default();
        if let Some(worker) = &this.options.sums {
            pane.sums_shown.begin_frame(worker);
        }
        // Picks asked in earlier frames.
        if let Some(picker) = &mut pane.picker {
            for result in picker.poll(device) {
                let Some(tag) = pane.asked.remove(&result.request) else {
                    continue;
                };
                let position = result.nearest().map(|h| h.block as usize);
                if let Some(answers) = &this.options.answers
                    && let Ok(mut a) = answers.lock()
                {
                    a.push((tag, position));
                }
            }
        }
        let mut gpu = Gpu {
            device,
            queue,
            screen,
            encoder,
        };
        let background = this
            .picture
            .background
            .map_or_else(Vec::new, |[r, g, b, _]| {
                let size = this.rect.size();
                let rect = Geometry::Rect {
                    min: [0.0, 0.0],
                    max: [size.x, size.y],
                    corner_px: 0.0,
                };
                vec![Shape::new(rect, [r, g, b, 255]).gpu()]
            });
        let mut slot = pane.background.take();
        if upload_shapes(device, queue, &reg.shapes, &mut slot, background).is_some()
            && let Some(upload) = &mut slot
        {
            let (size, view) = pixel_view(&ShapesView::IDENTITY, this.rect, screen);
            upload.batch.set_view(queue, &view, size, reg.target_format);
        }
        pane.background = slot;
        for layer in &this.picture.layers {
            match layer {
                Layer::Shapes(s) => {
                    let mut slot = pane.shape_layers.remove(&s.slot);
                    let shapes = s.shapes.iter().map(|x| x.gpu()).collect();
                    if upload_shapes(device, queue, &reg.shapes, &mut slot, shapes).is_some()
                        && let Some(upload) = &mut slot
                    {
                        let (size, view) = pixel_view(&s.view, this.rect, screen);
                        upload.batch.set_view(queue, &view, size, reg.target_format);
                    }
                    if let Some(upload) = slot {
                        pane.shape_layers.insert(s.slot, upload);
                    }
                }
                Layer::Map(m) => this.prepare_map(&mut gpu, reg, &mut pane, m),
                Layer::Bar(b) => this.prepare_bar(&mut gpu, reg, &mut pane, b),
                Layer::Morph(m) => this.prepare_morph(&gpu, reg, &mut pane, m),
            }
        }
        let shapes = this.picture.shapes.iter().map(|x| x.gpu()).collect();
        let mut overlay = pane.overlay.take();
        if upload_shapes(device, queue, &reg.shapes, &mut overlay, shapes).is_some()
            && let Some(upload) = &mut overlay
        {
            let (size, view) = pixel_view(&ShapesView::IDENTITY, this.rect, screen);
            upload.batch.set_view(queue, &view, size, reg.target_format);
        }
        pane.overlay = overlay;
        reg.panes.insert(this.key, pane);
        if let Some(drawn) = &this.options.drawn {
            drawn.store(true, Ordering::Release);
        }
    }

    /// Draws `pane`'s prepared picture into `pass` (the paint callback's `paint`): each layer
    /// with the viewport of its rectangle, the pane's for the shapes.
    pub fn paint(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        screen: &egui_wgpu::ScreenDescriptor,
        pane_picture: &PanePicture<'_>,
    ) {
        let this = pane_picture;
        let Some(pane) = self.panes.get(&this.key) else {
            return;
        };
        let set_rect = |pass: &mut wgpu::RenderPass<'_>, r: egui::Rect| {
            let (size, origin) = viewport(r, screen);
            pass.set_viewport(
                origin[0],
                origin[1],
                size[0] as f32,
                size[1] as f32,
                0.0,
                1.0,
            );
        };
        if let Some(upload) = &pane.background {
            set_rect(pass, this.rect);
            upload.batch.paint(&self.shapes, pass);
        }
        for layer in &this.picture.layers {
            match layer {
                Layer::Shapes(s) => {
                    if let Some(upload) = pane.shape_layers.get(&s.slot) {
                        set_rect(pass, this.rect);
                        upload.batch.paint(&self.shapes, pass);
                    }
                }
                Layer::Map(m) => {
                    if let Some((frame, _)) = pane.frames.get(&m.slot) {
                        set_rect(pass, this.abs(m.rect));
                        frame.resolve(pass, &self.maps);
                        if m.cursors.is_some()
                            && let Some(overlay) = pane.cursors.get(&m.slot)
                        {
                            overlay.draw(pass, &self.cursors);
                        }
                    }
                }
                Layer::Bar(b) => {
                    if let Some((frame, _)) = pane.bar_frames.get(&b.slot) {
                        set_rect(pass, this.abs(b.rect));
                        frame.resolve(pass, &self.maps);
                    }
                }
                Layer::Morph(m) => {
                    if let Some((_, data)) = pane.morphs.get(&m.slot) {
                        set_rect(pass, this.rect);
                        data.paint(&self.morph, pass);
                    }
                }
            }
        }
        if let Some(upload) = &pane.overlay {
            set_rect(pass, this.rect);
            upload.batch.paint(&self.shapes, pass);
        }
    }
}

impl PictureCallback {
    fn pane_picture(&self) -> PanePicture<'_> {
        PanePicture {
            key: self.key,
            rect: self.rect,
            picture: &self.picture,
            options: &self.options,
        }
    }
}

impl egui_wgpu::CallbackTrait for PictureCallback {
    fn prepare(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        screen: &egui_wgpu::ScreenDescriptor,
        _encoder: &mut wgpu::CommandEncoder,
        resources: &mut egui_wgpu::CallbackResources,
    ) -> Vec<wgpu::CommandBuffer> {
        match resources.get_mut::<GpuRegistry>() {
            Some(reg) => match reg.prepare_guarded(device, queue, screen, &self.pane_picture()) {
                Ok(commands) => commands.into_iter().collect(),
                Err(_) => Vec::new(),
            },
            None => Vec::new(),
        }
    }

    fn finish_prepare(
        &self,
        _device: &wgpu::Device,
        _queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        resources: &mut egui_wgpu::CallbackResources,
    ) -> Vec<wgpu::CommandBuffer> {
        // After every pane's prepare: this frame's timestamps resolved (the first callback
        // does it; the others find nothing left).
        if let Some(reg) = resources.get::<GpuRegistry>()
            && let Some(stats) = &reg.stats
        {
            stats.resolve(encoder);
        }
        Vec::new()
    }

    fn paint(
        &self,
        info: egui::PaintCallbackInfo,
        pass: &mut wgpu::RenderPass<'static>,
        resources: &egui_wgpu::CallbackResources,
    ) {
        if let Some(reg) = resources.get::<GpuRegistry>() {
            let screen = egui_wgpu::ScreenDescriptor {
                size_in_pixels: info.screen_size_px,
                pixels_per_point: info.pixels_per_point,
            };
            reg.paint(pass, &screen, &self.pane_picture());
        }
    }
}
