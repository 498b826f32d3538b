//! Headless rendering of the allocation map into images (`memscape render`, tests, benches).

use super::{AllocMapData, AllocMapFrame, AllocMapPipelines, AllocMapView, DrawOptions};
use crate::offscreen::OFFSCREEN_FORMAT;
use crate::{GpuContext, OffscreenTarget, RenderError, RgbaImage};

/// One cell of a grid of views sharing one target: where it lies and what it shows.
#[derive(Debug, Clone, PartialEq)]
pub struct GridCell {
    /// `[x, y, width, height]` in the target's pixels.
    pub rect: [u32; 4],
    pub view: AllocMapView,
    pub options: DrawOptions,
}

/// Renders several views of one upload (the bins grid: each cell a bin's block range with its
/// own view) into one image of `width`×`height` cleared to `clear` (sRGB bytes), each cell
/// through its own frame, resolved with the viewport set to the cell. Cells must lie inside the
/// image.
pub fn render_grid_offscreen(
    ctx: &GpuContext,
    pipelines: &mut AllocMapPipelines,
    data: &AllocMapData,
    cells: &[GridCell],
    width: u32,
    height: u32,
    clear: [u8; 4],
) -> Result<RgbaImage, RenderError> {
    let target = OffscreenTarget::new(ctx, width, height)?;
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("AllocMap::grid_offscreen"),
        });
    let mut frames = Vec::with_capacity(cells.len());
    for cell in cells {
        let [x, y, w, h] = cell.rect;
        if w == 0 || h == 0 || x.saturating_add(w) > width || y.saturating_add(h) > height {
            return Err(RenderError::BadRect {
                rect: cell.rect,
                width,
                height,
            });
        }
        let mut frame = AllocMapFrame::new(&ctx.device, pipelines);
        frame.prepare_with(
            &ctx.device,
            &ctx.queue,
            &mut encoder,
            pipelines,
            data,
            &cell.view,
            [w, h],
            [x as f32, y as f32],
            OFFSCREEN_FORMAT,
            &cell.options,
        );
        frames.push(frame);
    }
    {
        let mut pass = target.begin_pass(&mut encoder, "AllocMap::grid_resolve", Some(clear));
        for (cell, frame) in cells.iter().zip(&frames) {
            let [x, y, w, h] = cell.rect;
            pass.set_viewport(x as f32, y as f32, w as f32, h as f32, 0.0, 1.0);
            frame.resolve(&mut pass, pipelines);
        }
    }
    ctx.queue.submit([encoder.finish()]);
    target.read(ctx)
}

/// Renders the allocation map headless into an image (what `memscape render` and the tests use).
pub fn render_offscreen(
    ctx: &GpuContext,
    pipelines: &mut AllocMapPipelines,
    data: &AllocMapData,
    view: &AllocMapView,
    width: u32,
    height: u32,
) -> Result<RgbaImage, RenderError> {
    render_offscreen_with(
        ctx,
        pipelines,
        data,
        view,
        width,
        height,
        &DrawOptions::default(),
    )
}

/// [`render_offscreen`] of a block range and/or with the selection applied.
pub fn render_offscreen_with(
    ctx: &GpuContext,
    pipelines: &mut AllocMapPipelines,
    data: &AllocMapData,
    view: &AllocMapView,
    width: u32,
    height: u32,
    options: &DrawOptions,
) -> Result<RgbaImage, RenderError> {
    let target = OffscreenTarget::new(ctx, width, height)?;
    let mut frame = AllocMapFrame::new(&ctx.device, pipelines);
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("AllocMap::offscreen"),
        });
    frame.prepare_with(
        &ctx.device,
        &ctx.queue,
        &mut encoder,
        pipelines,
        data,
        view,
        [width, height],
        [0.0, 0.0],
        OFFSCREEN_FORMAT,
        options,
    );
    frame.resolve_to(&mut encoder, &target.view, pipelines);
    ctx.queue.submit([encoder.finish()]);
    target.read(ctx)
}
