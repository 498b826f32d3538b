//! Headless pictures for `memscape render`: a view's shapes through the GPU shape pipeline, then
//! its labels through egui's own text renderer (egui-wgpu into the same offscreen texture), so a
//! PNG shows exactly what the GUI shows.

use memscape_render::shapes::{self, Shape, ShapesPipelines, ShapesView};
use memscape_render::{GpuContext, OffscreenTarget, RgbaImage};

use crate::views::labels::{self, Label};

/// Draws `shapes` then `labels` (both in pixels from the top left) over `background`.
pub fn render_picture(
    ctx: &GpuContext,
    shape_list: &[Shape],
    label_list: &[Label],
    width: u32,
    height: u32,
    background: [u8; 4],
) -> anyhow::Result<RgbaImage> {
    let target = OffscreenTarget::new(ctx, width, height)?;
    let mut pipelines = ShapesPipelines::new(&ctx.device)?;
    let gpu: Vec<_> = shape_list.iter().map(Shape::gpu).collect();
    shapes::draw_into(
        ctx,
        &mut pipelines,
        &gpu,
        &ShapesView::IDENTITY,
        &target,
        Some(background),
    )?;
    if !label_list.is_empty() {
        paint_labels(ctx, &target, label_list);
    }
    Ok(target.read(ctx)?)
}

/// Paints labels into `target` with egui (one headless frame at one pixel per point).
pub fn paint_labels(ctx: &GpuContext, target: &OffscreenTarget, label_list: &[Label]) {
    let egui_ctx = egui::Context::default();
    let screen = egui::Rect::from_min_size(
        egui::Pos2::ZERO,
        egui::vec2(target.width as f32, target.height as f32),
    );
    let input = egui::RawInput {
        screen_rect: Some(screen),
        ..Default::default()
    };
    // Fonts are loaded on the first frame: run one empty frame first (its font atlas is
    // uploaded below with the second frame's changes).
    let mut first = egui_ctx.run_ui(input.clone(), |_| {});
    let mut output = egui_ctx.run_ui(input, |ui| {
        let painter = ui.ctx().layer_painter(egui::LayerId::background());
        labels::paint(&painter, egui::Pos2::ZERO, label_list);
    });
    let primitives = egui_ctx.tessellate(output.shapes, 1.0);
    let mut renderer = egui_wgpu::Renderer::new(
        &ctx.device,
        memscape_render::offscreen::OFFSCREEN_FORMAT,
        egui_wgpu::RendererOptions::default(),
    );
    let mut deltas_in_order = std::mem::take(&mut first.textures_delta.set)
        .into_iter()
        .chain(std::mem::take(&mut output.textures_delta.set))
        .collect::<Vec<_>>();
    first.textures_delta.clear();
    output.textures_delta.clear();
    for (id, deltas) in &mut deltas_in_order {
        for delta in deltas {
            renderer.update_texture(&ctx.device, &ctx.queue, *id, delta);
        }
    }
    let screen_desc = egui_wgpu::ScreenDescriptor {
        size_in_pixels: [target.width, target.height],
        pixels_per_point: 1.0,
    };
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("headless labels"),
        });
    let extra = renderer.update_buffers(
        &ctx.device,
        &ctx.queue,
        &mut encoder,
        &primitives,
        &screen_desc,
    );
    {
        let mut pass = encoder
            .begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("headless labels"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &target.view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Load,
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: None,
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            })
            .forget_lifetime();
        renderer.render(&mut pass, &primitives, &screen_desc);
    }
    ctx.queue
        .submit(extra.into_iter().chain(std::iter::once(encoder.finish())));
}
