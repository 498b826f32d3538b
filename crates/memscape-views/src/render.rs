//! Headless entry points: a file (or an embedded demo name) loaded for drawing, and any view of
//! it drawn into an image through its `compose` ([`crate::view::ViewSettings::compose`]).

use std::path::Path;

use memscape_render::{GpuContext, RgbaImage};

use crate::dataset::{Dataset, LoadSource};
use crate::error::{Context as _, Result};
use crate::view::ViewSettings;

/// Loads a file for rendering: a path, or an embedded demo file by name (`demo`, `demo:sort`,
/// … see [`crate::demo::FILES`]).
pub fn load(file: &Path) -> Result<Dataset> {
    let name = file.to_string_lossy();
    let source = if name == "demo" || name.starts_with("demo:") {
        crate::demo::by_name(&name)
            .with_context(|| {
                format!(
                    "{name}: no such embedded demo file (there are {})",
                    crate::demo::names()
                )
            })?
            .source()
    } else {
        LoadSource::File(file.to_path_buf())
    };
    let dataset = crate::dataset::load(&source, &|_, _| {})?;
    // What tests of the level-of-detail paths assert is never said (the whole file read).
    tracing::debug!("{}: read whole", dataset.name);
    Ok(dataset)
}

/// The view `settings` describe of `dataset`, `width`×`height` pixels.
pub fn image(
    ctx: &GpuContext,
    dataset: &Dataset,
    settings: &ViewSettings,
    width: u32,
    height: u32,
) -> Result<RgbaImage> {
    let picture = settings.compose(dataset, egui::vec2(width as f32, height as f32))?;
    crate::headless::render_picture(ctx, &picture)
}

/// What drawing one view cost: wall times of its composition and its drawing (GPU work waited
/// for, readback included), the GPU's own statistics and the map layers drawn from a
/// level-of-detail index.
#[derive(Debug, Clone)]
pub struct RenderStats {
    pub compose: std::time::Duration,
    pub draw: std::time::Duration,
    pub frame: memscape_render::FrameStats,
    pub lod: Vec<crate::stats::LodReport>,
}

/// [`image`], measured (see [`crate::headless::render_picture_with_stats`]). GPU times need a
/// context made by [`gpu_context_timed`].
pub fn image_with_stats(
    ctx: &GpuContext,
    dataset: &Dataset,
    settings: &ViewSettings,
    width: u32,
    height: u32,
) -> Result<(RgbaImage, RenderStats)> {
    let start = std::time::Instant::now();
    let picture = settings.compose(dataset, egui::vec2(width as f32, height as f32))?;
    picture_with_stats(ctx, &picture, start.elapsed())
}

/// `picture` (composed in `compose`) drawn and measured, as [`image_with_stats`] does: what
/// `memscape render --stats` times whichever way the picture was composed.
pub fn picture_with_stats(
    ctx: &GpuContext,
    picture: &crate::picture::Picture,
    compose: std::time::Duration,
) -> Result<(RgbaImage, RenderStats)> {
    let start = std::time::Instant::now();
    let (image, stats) = crate::headless::render_picture_with_stats(ctx, picture)?;
    let draw = start.elapsed();
    Ok((
        image,
        RenderStats {
            compose,
            draw,
            frame: stats.frame,
            lod: stats.lod,
        },
    ))
}

/// [`gpu_context`] with timestamp queries enabled where the adapter has them.
pub fn gpu_context_timed(choice: memscape_render::AdapterChoice) -> Result<GpuContext> {
    let ctx = GpuContext::new_with_features(
        memscape_render::AdapterChoice::from_env_or(choice),
        wgpu::Features::TIMESTAMP_QUERY,
    )?;
    tracing::info!("rendering on {}", ctx.adapter_name());
    Ok(ctx)
}

/// The view `settings` describe of `dataset` as an SVG document of `width`×`height` points
/// (shapes and text as vectors, allocation maps and other GPU-only layers as embedded images).
pub fn svg(
    ctx: &GpuContext,
    dataset: &Dataset,
    settings: &ViewSettings,
    width: u32,
    height: u32,
) -> Result<String> {
    let picture = settings.compose(dataset, egui::vec2(width as f32, height as f32))?;
    crate::svg::picture_svg(ctx, &picture)
}

/// The headless GPU `choice` names (MEMSCAPE_ADAPTER overrides it).
pub fn gpu_context(choice: memscape_render::AdapterChoice) -> Result<GpuContext> {
    let ctx = GpuContext::new(memscape_render::AdapterChoice::from_env_or(choice))?;
    tracing::info!("rendering on {}", ctx.adapter_name());
    Ok(ctx)
}
