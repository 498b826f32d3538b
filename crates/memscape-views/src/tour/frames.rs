//! A tour's frames: each step's picture composed from its settings and drawn headless, the
//! transitions between steps (interpolated, graph layouts blended, or cross-faded), captions
//! over the frames. `memscape render-tour` writes them; `memscape present` shows them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use memscape_render::{GpuContext, RgbaImage};

use super::format::{Step, frames_of};
use super::interpolate::{interpolate, interpolate_on, same_picture};
use crate::dataset::Dataset;
use crate::error::{Context as _, Result};
use crate::graph::compose::{GraphScene, picture_between, scene};
use crate::view::ViewSettings;

/// Draws steps into images, keeping each file loaded once.
pub struct Renderer {
    ctx: GpuContext,
    datasets: HashMap<String, Dataset>,
    base_dir: PathBuf,
    pub width: u32,
    pub height: u32,
}

impl Renderer {
    pub fn new(ctx: GpuContext, base_dir: &Path, width: u32, height: u32) -> Self {
        Self {
            ctx,
            datasets: HashMap::new(),
            base_dir: base_dir.to_path_buf(),
            width,
            height,
        }
    }

    fn size(&self) -> egui::Vec2 {
        egui::vec2(self.width as f32, self.height as f32)
    }

    fn dataset(&mut self, file: &str) -> Result<&Dataset> {
        if !self.datasets.contains_key(file) {
            let path = if file.starts_with("demo") || Path::new(file).is_absolute() {
                PathBuf::from(file)
            } else {
                self.base_dir.join(file)
            };
            let d = crate::render::load(&path)?;
            self.datasets.insert(file.to_owned(), d);
        }
        self.datasets.get(file).context("internal: dataset cache")
    }

    /// The picture of one step, caption included.
    pub fn render(&mut self, step: &Step) -> Result<RgbaImage> {
        let size = self.size();
        let dataset = self.dataset(&step.file)?;
        let picture = step.settings.compose(dataset, size)?;
        let image = crate::headless::render_picture(&self.ctx, &picture)?;
        self.caption(&image, step.caption.as_deref())
    }

    /// The picture of one step as an SVG document (`render-tour --svg`): its view as
    /// [`crate::svg`] writes it, its caption as text on a dark band at the bottom (plain: the
    /// `**bold**` and `` `code` `` runs lose their styling, not their text).
    pub fn step_svg(&mut self, step: &Step) -> Result<String> {
        let size = self.size();
        let dataset = self.dataset(&step.file)?;
        let picture = step.settings.compose(dataset, size)?;
        let caption = step.caption.as_deref().map(|c| caption_picture(size, c));
        crate::svg::picture_svg_with_overlay(&self.ctx, &picture, caption.as_ref())
    }

    /// The scenes of two steps of the same graph file (another snapshot, profile or
    /// difference), each exactly as its own frame draws it, for a transition in which nodes
    /// glide.
    pub fn graph_scenes(&mut self, a: &Step, b: &Step) -> Result<(GraphScene, GraphScene)> {
        crate::ensure!(
            a.file == b.file,
            "internal: a graph transition between two files"
        );
        let size = self.size();
        let (ViewSettings::Graph(x), ViewSettings::Graph(y)) = (&a.settings, &b.settings) else {
            crate::bail!("internal: a graph transition between other views");
        };
        let dataset = self.dataset(&b.file)?;
        Ok((scene(dataset, x, size)?, scene(dataset, y, size)?))
    }

    /// The frame `u` (eased) of the way between two graph scenes, without caption.
    pub fn graph_between(&self, scenes: &(GraphScene, GraphScene), u: f32) -> Result<RgbaImage> {
        let picture = picture_between(&scenes.0, &scenes.1, u);
        crate::headless::render_picture(&self.ctx, &picture)
    }

    /// [`interpolate_on`] the address axis of the steps' dataset (collapsed regions for an
    /// allocation trace with addresses).
    pub fn interpolate(&mut self, a: &Step, b: &Step, u: f32) -> Result<Step> {
        let dataset = self.dataset(&b.file)?;
        let scene = dataset.alloc_trace().and_then(|t| t.scene.as_ref());
        Ok(match scene {
            Some(scene) => interpolate_on(a, b, u, scene),
            None => interpolate(a, b, u),
        })
    }

    /// `image` with `caption` drawn over it (unchanged without one).
    pub fn caption(&self, image: &RgbaImage, caption: Option<&str>) -> Result<RgbaImage> {
        match caption {
            Some(text) => crate::headless::caption_over(&self.ctx, image, text),
            None => Ok(image.clone()),
        }
    }
}

/// Frames of the whole tour: for each step, its transition (none for the first) then its hold.
/// Calls `emit` with (frame index, step index, image).
pub fn render_frames(
    renderer: &mut Renderer,
    steps: &[Step],
    fps: f32,
    emit: &mut dyn FnMut(usize, usize, &RgbaImage) -> Result<()>,
) -> Result<usize> {
    let mut frame = 0usize;
    for (i, step) in steps.iter().enumerate() {
        let end = renderer.render(step)?;
        if i > 0 {
            let prev = &steps[i - 1];
            let n = frames_of(step.duration.unwrap_or(1.0), fps);
            let easing = step.easing.unwrap_or_default();
            // Cross-fade endpoints are rendered once.
            let start = if same_picture(prev, step) {
                None
            } else {
                Some(renderer.render(prev)?)
            };
            // Two states of one graph: the layouts are blended, not the images.
            let graph = match (&start, &step.settings) {
                (None, ViewSettings::Graph(_)) => Some(renderer.graph_scenes(prev, step)?),
                _ => None,
            };
            for k in 1..=n {
                let u = easing.apply(k as f32 / n as f32);
                let image = match &start {
                    None => {
                        if k == n {
                            end.clone()
                        } else {
                            let plain = match &graph {
                                Some(scenes) => renderer.graph_between(scenes, u)?,
                                None => {
                                    let mut s = renderer.interpolate(prev, step, u)?;
                                    s.caption = None;
                                    renderer.render(&s)?
                                }
                            };
                            // Captions cross-fade rather than switch.
                            let from = renderer.caption(&plain, prev.caption.as_deref())?;
                            let to = renderer.caption(&plain, step.caption.as_deref())?;
                            crossfade(&from, &to, u)
                        }
                    }
                    Some(a) => crossfade(a, &end, u),
                };
                emit(frame, i, &image)?;
                frame += 1;
            }
        }
        for _ in 0..frames_of(step.hold.unwrap_or(2.0), fps).max(1) {
            emit(frame, i, &end)?;
            frame += 1;
        }
    }
    Ok(frame)
}

/// `caption` at the bottom of a picture of `size` as `headless::paint_caption` places it (one
/// line, its width estimated): a rounded dark band and centred light text.
fn caption_picture(size: egui::Vec2, caption: &str) -> crate::picture::Picture {
    use memscape_render::shapes::{Geometry, Shape};
    let mut picture = crate::picture::Picture {
        size,
        ..Default::default()
    };
    let text: String = crate::headless::caption_runs(caption)
        .into_iter()
        .map(|(run, _, _)| run)
        .collect();
    let screen = picture.rect();
    let size = (screen.height() / 32.0).clamp(14.0, 34.0);
    let width = crate::label::approx_width(&text, size).min(screen.width() * 0.8);
    let bottom = screen.bottom() - size * 1.2;
    let center = screen.center().x;
    let height = size * 1.2;
    picture.shapes.push(Shape::new(
        Geometry::Rect {
            min: [center - 0.5 * width - size, bottom - height - size * 0.6],
            max: [center + 0.5 * width + size, bottom + size * 0.6],
            corner_px: size * 0.4,
        },
        [10, 11, 16, 215],
    ));
    picture.labels.push(crate::label::Label::new(
        egui::pos2(center, bottom - 0.5 * height),
        text,
        size,
        egui::Color32::from_rgb(210, 213, 222),
        egui::Align2::CENTER_CENTER,
    ));
    picture
}

/// Pixelwise blend of two images of the same size.
pub fn crossfade(a: &RgbaImage, b: &RgbaImage, u: f32) -> RgbaImage {
    let mut out = b.clone();
    if a.width != b.width || a.height != b.height {
        return out;
    }
    for (o, (x, y)) in out.pixels.iter_mut().zip(a.pixels.iter().zip(&b.pixels)) {
        *o = (f32::from(*x) + (f32::from(*y) - f32::from(*x)) * u).round() as u8;
    }
    out
}
