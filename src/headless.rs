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
    paint_egui(ctx, target, &|painter| {
        labels::paint(painter, egui::Pos2::ZERO, label_list);
    });
}

/// `image` with a presentation caption drawn over its bottom (see [`paint_caption`]).
pub fn caption_over(
    ctx: &GpuContext,
    image: &RgbaImage,
    caption: &str,
) -> anyhow::Result<RgbaImage> {
    let target = OffscreenTarget::new(ctx, image.width, image.height)?;
    target.clear(ctx, [0, 0, 0, 0]);
    let screen = egui::Rect::from_min_size(
        egui::Pos2::ZERO,
        egui::vec2(image.width as f32, image.height as f32),
    );
    paint_egui(ctx, &target, &|painter| {
        paint_caption(painter, screen, caption)
    });
    let overlay = target.read(ctx)?;
    let mut out = image.clone();
    for (o, c) in out
        .pixels
        .chunks_exact_mut(4)
        .zip(overlay.pixels.chunks_exact(4))
    {
        let a = f32::from(c[3]) / 255.0;
        for k in 0..3 {
            o[k] = (f32::from(c[k]) * a + f32::from(o[k]) * (1.0 - a)).round() as u8;
        }
        o[3] = o[3].max(c[3]);
    }
    Ok(out)
}

/// Splits markdown-light text into (text, bold, code) runs: `**bold**` and `` `code` ``.
pub fn caption_runs(text: &str) -> Vec<(String, bool, bool)> {
    let mut runs = Vec::new();
    let mut current = String::new();
    let (mut bold, mut code) = (false, false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '`' {
            if !current.is_empty() {
                runs.push((std::mem::take(&mut current), bold, code));
            }
            code = !code;
        } else if c == '*' && !code && chars.peek() == Some(&'*') {
            chars.next();
            if !current.is_empty() {
                runs.push((std::mem::take(&mut current), bold, code));
            }
            bold = !bold;
        } else {
            current.push(c);
        }
    }
    if !current.is_empty() {
        runs.push((current, bold, code));
    }
    runs
}

/// A caption centred near the bottom of `screen` on a dark rounded band: regular text light
/// grey, **bold** white and larger, `code` monospace on a darker background.
pub fn paint_caption(painter: &egui::Painter, screen: egui::Rect, caption: &str) {
    use egui::text::{LayoutJob, TextFormat};
    let size = (screen.height() / 32.0).clamp(14.0, 34.0);
    let mut job = LayoutJob::default();
    for (text, bold, code) in caption_runs(caption) {
        let format = if code {
            TextFormat {
                font_id: egui::FontId::monospace(size * 0.92),
                color: egui::Color32::from_rgb(255, 214, 140),
                background: egui::Color32::from_rgb(40, 42, 52),
                ..Default::default()
            }
        } else if bold {
            TextFormat {
                font_id: egui::FontId::proportional(size * 1.08),
                color: egui::Color32::WHITE,
                ..Default::default()
            }
        } else {
            TextFormat {
                font_id: egui::FontId::proportional(size),
                color: egui::Color32::from_rgb(210, 213, 222),
                ..Default::default()
            }
        };
        job.append(&text, 0.0, format);
    }
    job.wrap.max_width = screen.width() * 0.8;
    job.halign = egui::Align::Center;
    let galley = painter.layout_job(job);
    let size2 = galley.size();
    let center_x = screen.center().x;
    let bottom = screen.bottom() - size * 1.2;
    let band = egui::Rect::from_min_max(
        egui::pos2(
            center_x - size2.x * 0.5 - size,
            bottom - size2.y - size * 0.6,
        ),
        egui::pos2(center_x + size2.x * 0.5 + size, bottom + size * 0.6),
    );
    painter.rect_filled(
        band,
        size * 0.4,
        egui::Color32::from_rgba_unmultiplied(10, 11, 16, 215),
    );
    painter.galley(
        egui::pos2(center_x, bottom - size2.y),
        galley,
        egui::Color32::WHITE,
    );
}

/// Runs one headless egui frame whose background layer `paint` draws on, into `target`.
pub fn paint_egui(ctx: &GpuContext, target: &OffscreenTarget, paint: &dyn Fn(&egui::Painter)) {
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
        paint(&painter);
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
        let mut pass = target
            .begin_pass(&mut encoder, "headless labels", None)
            .forget_lifetime();
        renderer.render(&mut pass, &primitives, &screen_desc);
    }
    ctx.queue
        .submit(extra.into_iter().chain(std::iter::once(encoder.finish())));
}
