//! Pictures drawn offscreen into images, for `memscape render`, tours, `present` and the view
//! tests: the picture's GPU layers through `memscape-render`'s pipelines, its shapes through the
//! shape pipeline, then its labels through egui's own text renderer (egui-wgpu into the same
//! texture), so that an image shows exactly what the GUI shows.

use memscape_render::alloc_map::{
    AllocMapData, AllocMapFrame, AllocMapPipelines, CursorOverlay, CursorPipelines, DrawOptions,
    OccupancyBarData, OccupancyBarFrame, OccupancyBarView, SelectionStyle, TimeMapping,
};
use memscape_render::offscreen::OFFSCREEN_FORMAT;
use memscape_render::polar_morph::{PolarMorphData, PolarMorphPipelines};
use memscape_render::shapes::{self, Shape, ShapesPipelines, ShapesView};
use memscape_render::stats::PassQueries;
use memscape_render::{FrameStats, GpuContext, OffscreenTarget, RgbaImage, StatsRecorder};

use crate::error::Result;
use crate::label::{self, Label};
use crate::picture::{BarLayer, Layer, MapLayer, Picture};

/// A picture's size in whole pixels (one pixel per point), at least 1×1.
pub fn picture_pixels(picture: &Picture) -> (u32, u32) {
    (
        (picture.size.x.round().max(1.0)) as u32,
        (picture.size.y.round().max(1.0)) as u32,
    )
}

/// Draws `picture` into a new image of its size, one pixel per point.
pub fn render_picture(ctx: &GpuContext, picture: &Picture) -> Result<RgbaImage> {
    let (width, height) = picture_pixels(picture);
    let target = OffscreenTarget::new(ctx, width, height)?;
    draw_picture(ctx, picture, &target)?;
    Ok(target.read(ctx)?)
}

/// What drawing one picture cost on the GPU and how its map layers were drawn.
#[derive(Debug, Clone)]
pub struct PictureStats {
    pub frame: FrameStats,
    /// The map layers drawn from a level-of-detail index, by scope (`layer 0 map`, …).
    pub lod: Vec<crate::stats::LodReport>,
}

/// [`render_picture`], also measuring it: each GPU pass's time (timestamp queries, where the
/// device has them: see [`memscape_render::stats`]), each allocation map's path and blocks and
/// each level-of-detail draw, scoped by layer (`layer 0 map`, …).
pub fn render_picture_with_stats(
    ctx: &GpuContext,
    picture: &Picture,
) -> Result<(RgbaImage, PictureStats)> {
    let (width, height) = picture_pixels(picture);
    let target = OffscreenTarget::new(ctx, width, height)?;
    let stats = StatsRecorder::new(&ctx.device, &ctx.queue);
    let lod = draw_layers(ctx, picture, &target, Some(&stats))?;
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("headless::stats"),
        });
    stats.resolve(&mut encoder);
    ctx.queue.submit([encoder.finish()]);
    let frame = stats.finish_blocking(&ctx.device);
    Ok((target.read(ctx)?, PictureStats { frame, lod }))
}

/// Draws `picture` into `target` (cleared to its background first, when it has one).
pub fn draw_picture(ctx: &GpuContext, picture: &Picture, target: &OffscreenTarget) -> Result<()> {
    draw_layers(ctx, picture, target, None).map(|_| ())
}

/// [`draw_picture`], the passes reporting to `stats` when given; returns what each layer drawn
/// from a level-of-detail index drew.
fn draw_layers(
    ctx: &GpuContext,
    picture: &Picture,
    target: &OffscreenTarget,
    stats: Option<&StatsRecorder>,
) -> Result<Vec<crate::stats::LodReport>> {
    if let Some(background) = picture.background {
        target.clear(ctx, background);
    }
    let mut layers = LayerDrawer {
        maps: MapDrawer {
            stats: stats.cloned(),
            ..MapDrawer::default()
        },
    };
    let mut lod = Vec::new();
    for (i, layer) in picture.layers.iter().enumerate() {
        let scope = format!("layer {i} {}", layer_kind(layer));
        if let Some(stats) = stats {
            stats.set_scope(scope.clone());
        }
        layers.draw(ctx, target, layer)?;
        if let (Some(drawn), Layer::Map(m)) = (layers.maps.lod_drawn.take(), layer)
            && let Some(trace) = &m.data.lod
        {
            lod.push(crate::stats::LodReport::of(scope, drawn, trace));
        }
    }
    if !picture.shapes.is_empty() {
        draw_shapes(ctx, target, &picture.shapes, &ShapesView::IDENTITY)?;
    }
    if !picture.labels.is_empty() {
        paint_labels(ctx, target, &picture.labels);
    }
    Ok(lod)
}

/// Draws a picture's GPU layers one at a time into offscreen targets, the pipelines made once
/// and the allocation map's blocks uploaded once per data they share (the SVG export draws each
/// layer alone into its own image).
#[derive(Default)]
pub struct LayerDrawer {
    maps: MapDrawer,
}

impl LayerDrawer {
    /// Draws `layer` into `target` (over what is there), where the picture places it.
    pub fn draw(
        &mut self,
        ctx: &GpuContext,
        target: &OffscreenTarget,
        layer: &Layer,
    ) -> Result<()> {
        match layer {
            Layer::Shapes(s) => draw_shapes(ctx, target, &s.shapes, &s.view)?,
            Layer::Map(m) => self.maps.map(ctx, target, m)?,
            Layer::Bar(b) => self.maps.bar(ctx, target, b)?,
            Layer::Morph(m) => {
                let mut pipelines = PolarMorphPipelines::new(&ctx.device)?;
                let mut data =
                    PolarMorphData::new(&ctx.device, &pipelines, &m.data.points, &m.data.arcs)?;
                let mut view = m.view;
                view.center_px = [
                    view.center_px[0] + m.rect.min.x,
                    view.center_px[1] + m.rect.min.y,
                ];
                let queries = self
                    .maps
                    .stats
                    .as_ref()
                    .map_or_else(PassQueries::none, |s| s.pass("polar_morph"));
                memscape_render::polar_morph::draw_into_timed(
                    ctx,
                    &mut pipelines,
                    &mut data,
                    &view,
                    target,
                    None,
                    &queries,
                );
            }
        }
        Ok(())
    }
}

fn layer_kind(layer: &Layer) -> &'static str {
    match layer {
        Layer::Shapes(_) => "shapes",
        Layer::Map(_) => "map",
        Layer::Bar(_) => "bar",
        Layer::Morph(_) => "morph",
    }
}

fn draw_shapes(
    ctx: &GpuContext,
    target: &OffscreenTarget,
    list: &[Shape],
    view: &ShapesView,
) -> Result<()> {
    let mut pipelines = ShapesPipelines::new(&ctx.device)?;
    let gpu: Vec<_> = list.iter().map(Shape::gpu).collect();
    shapes::draw_into(ctx, &mut pipelines, &gpu, view, target, None)?;
    Ok(())
}

/// A rectangle in points as whole pixels `[x, y, w, h]` (1 pixel per point), at least 1×1.
pub fn pixel_rect(r: egui::Rect) -> [u32; 4] {
    let x0 = r.left().round().max(0.0) as u32;
    let y0 = r.top().round().max(0.0) as u32;
    let x1 = (r.right().round().max(0.0) as u32).max(x0 + 1);
    let y1 = (r.bottom().round().max(0.0) as u32).max(y0 + 1);
    [x0, y0, x1 - x0, y1 - y0]
}

/// The allocation-map layers of one picture: pipelines made once, the blocks uploaded once per
/// data they share.
#[derive(Default)]
struct MapDrawer {
    pipelines: Option<AllocMapPipelines>,
    cursors: Option<CursorPipelines>,
    /// The upload and the data it was made from (compared by pointer).
    data: Option<(*const crate::picture::MapData, AllocMapData)>,
    /// The level-of-detail cells uploaded for the GPU resolve (`alloc_map::lod`).
    lod_cells: memscape_render::alloc_map::LodCellsCache,
    bars: Option<(
        *const memscape_render::alloc_map::BarBlocks,
        OccupancyBarData,
    )>,
    stats: Option<StatsRecorder>,
    /// What the last map layer drawn from a level-of-detail index drew.
    lod_drawn: Option<crate::alloc_map::lod::LodDrawn>,
}

impl MapDrawer {
    fn pipelines(&mut self, ctx: &GpuContext) -> Result<&mut AllocMapPipelines> {
        if self.pipelines.is_none() {
            let mut pipelines = AllocMapPipelines::new(&ctx.device)?;
            pipelines.set_stats(self.stats.clone());
            self.pipelines = Some(pipelines);
        }
        self.pipelines
            .as_mut()
            .ok_or_else(|| crate::error::ViewError::msg("internal: allocation map pipelines"))
    }

    fn map(&mut self, ctx: &GpuContext, target: &OffscreenTarget, m: &MapLayer) -> Result<()> {
        let data_ptr = std::sync::Arc::as_ptr(&m.data);
        self.pipelines(ctx)?;
        let Some(pipelines) = self.pipelines.as_mut() else {
            return Ok(());
        };
        let r = pixel_rect(m.rect);
        let mut view = m.window.view(m.extent, [r[2] as f32, r[3] as f32]);
        m.style.apply(&mut view);
        let mut encoder = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("headless::map"),
            });
        let mut frame = AllocMapFrame::new(&ctx.device, pipelines);
        // A big trace's layer draws from its level-of-detail index (`alloc_map::lod`: the
        // exact GPU pipeline for few blocks in view, else the index's sums); the upload it
        // may make lives until the commands are submitted.
        let _lod_upload = if let Some(lod) = &m.data.lod {
            let (upload, drawn) = crate::alloc_map::lod::prepare(
                crate::alloc_map::lod::ExactOnGpu::of(&ctx.device),
                &mut crate::alloc_map::lod::LodFrameTarget {
                    device: &ctx.device,
                    queue: &ctx.queue,
                    encoder: &mut encoder,
                    pipelines,
                    frame: &mut frame,
                    origin: [r[0] as f32, r[1] as f32],
                    target_format: OFFSCREEN_FORMAT,
                },
                crate::alloc_map::lod::cells_on_gpu(&ctx.device).then_some(&mut self.lod_cells),
                lod,
                &view,
                [r[2], r[3]],
            );
            self.lod_drawn = Some(drawn);
            upload
        } else {
            if self.data.as_ref().is_none_or(|(p, _)| *p != data_ptr) {
                let data =
                    AllocMapData::upload(&ctx.device, pipelines, &m.data.blocks, &m.data.times);
                if let Some(bits) = &m.data.selection {
                    data.set_selection(&ctx.queue, bits.words());
                }
                self.data = Some((data_ptr, data));
            }
            let Some((_, data)) = &self.data else {
                return Ok(());
            };
            frame.prepare_with(
                &ctx.device,
                &ctx.queue,
                &mut encoder,
                pipelines,
                data,
                &view,
                [r[2], r[3]],
                [r[0] as f32, r[1] as f32],
                OFFSCREEN_FORMAT,
                &DrawOptions {
                    range: Some(m.range.clone()),
                    selection: if m.data.selection.is_some() {
                        SelectionStyle::DIM
                    } else {
                        SelectionStyle::Off
                    },
                    ..DrawOptions::default()
                },
            );
            None
        };
        let overlay = match &m.cursors {
            Some(c) if !c.cursors.is_empty() => {
                if self.cursors.is_none() {
                    self.cursors = Some(CursorPipelines::new(&ctx.device)?);
                }
                self.cursors.as_mut().map(|cursor_pipelines| {
                    let mut overlay = CursorOverlay::new(&ctx.device, cursor_pipelines);
                    overlay.prepare(
                        &ctx.device,
                        &ctx.queue,
                        cursor_pipelines,
                        &c.cursors,
                        &TimeMapping::from(&view),
                        &c.style,
                        r[2],
                        OFFSCREEN_FORMAT,
                    );
                    overlay
                })
            }
            _ => None,
        };
        {
            let queries = pipelines
                .stats()
                .map_or_else(PassQueries::none, |s| s.pass("alloc_map resolve"));
            let mut pass =
                target.begin_timed_pass(&mut encoder, "headless::map resolve", None, &queries);
            pass.set_viewport(r[0] as f32, r[1] as f32, r[2] as f32, r[3] as f32, 0.0, 1.0);
            frame.resolve(&mut pass, pipelines);
            if let (Some(overlay), Some(cursor_pipelines)) = (&overlay, &self.cursors) {
                overlay.draw(&mut pass, cursor_pipelines);
            }
        }
        ctx.queue.submit([encoder.finish()]);
        Ok(())
    }

    fn bar(&mut self, ctx: &GpuContext, target: &OffscreenTarget, b: &BarLayer) -> Result<()> {
        let bars_ptr = std::sync::Arc::as_ptr(&b.bars);
        self.pipelines(ctx)?;
        let Some(pipelines) = self.pipelines.as_mut() else {
            return Ok(());
        };
        if self.bars.as_ref().is_none_or(|(p, _)| *p != bars_ptr) {
            let data = OccupancyBarData::upload(&ctx.device, pipelines, &b.bars);
            self.bars = Some((bars_ptr, data));
        }
        let Some((_, data)) = &self.bars else {
            return Ok(());
        };
        let r = pixel_rect(b.rect);
        let mut map_view = b.window.view(1, [r[2] as f32, r[3] as f32]);
        b.style.apply(&mut map_view);
        let view = OccupancyBarView::from_map(&map_view, b.variant);
        let mut encoder = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("headless::bar"),
            });
        let mut frame = OccupancyBarFrame::new(&ctx.device, pipelines);
        frame.prepare(
            &ctx.device,
            &ctx.queue,
            &mut encoder,
            pipelines,
            data,
            &view,
            b.part(),
            [r[2], r[3]],
            [r[0] as f32, r[1] as f32],
            OFFSCREEN_FORMAT,
        );
        {
            let queries = pipelines
                .stats()
                .map_or_else(PassQueries::none, |s| s.pass("occupancy resolve"));
            let mut pass =
                target.begin_timed_pass(&mut encoder, "headless::bar resolve", None, &queries);
            pass.set_viewport(r[0] as f32, r[1] as f32, r[2] as f32, r[3] as f32, 0.0, 1.0);
            frame.resolve(&mut pass, pipelines);
        }
        ctx.queue.submit([encoder.finish()]);
        Ok(())
    }
}

/// Paints labels into `target` with egui (one headless frame at one pixel per point).
pub fn paint_labels(ctx: &GpuContext, target: &OffscreenTarget, label_list: &[Label]) {
    paint_egui(ctx, target, &|painter| {
        label::paint(painter, egui::Pos2::ZERO, label_list);
    });
}

/// `image` with a presentation caption drawn over its bottom (see [`paint_caption`]).
pub fn caption_over(ctx: &GpuContext, image: &RgbaImage, caption: &str) -> Result<RgbaImage> {
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
    crate::fonts::install(&egui_ctx);
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
