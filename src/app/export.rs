//! "Export view as SVG/PNG…": the picture a pane last painted, written as `memscape render`
//! writes it (`memscape_views::svg` or the headless painter), on a worker thread with egui's own
//! GPU device, so the window stays responsive while an allocation map is drawn.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use memscape_render::GpuContext;
use memscape_views::Picture;

/// What the export writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Svg,
    Png,
}

impl ExportFormat {
    fn extension(self) -> &'static str {
        match self {
            ExportFormat::Svg => "svg",
            ExportFormat::Png => "png",
        }
    }
}

/// The export window: which picture, where to, and the last export's outcome.
pub struct ExportDialog {
    picture: Option<(String, Arc<Picture>)>,
    path: String,
    format: ExportFormat,
    /// Set by the worker when it finishes: the message for the status bar.
    done: Arc<Mutex<Option<String>>>,
    busy: bool,
}

impl ExportDialog {
    pub fn new() -> Self {
        Self {
            picture: None,
            path: String::new(),
            format: ExportFormat::Svg,
            done: Arc::new(Mutex::new(None)),
            busy: false,
        }
    }

    /// Opens the window for `picture` of the pane titled `title`.
    pub fn open(&mut self, title: &str, picture: Arc<Picture>, format: ExportFormat) {
        self.format = format;
        let stem = file_stem(title);
        let dir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        self.path = dir
            .join(format!("memscape-{stem}.{}", format.extension()))
            .display()
            .to_string();
        self.picture = Some((title.to_owned(), picture));
    }

    /// Shows the window while a picture waits; returns the status-bar message of a finished
    /// export.
    pub fn show(
        &mut self,
        ctx: &egui::Context,
        render_state: Option<&egui_wgpu::RenderState>,
    ) -> Option<String> {
        let finished = self.done.lock().ok().and_then(|mut d| d.take());
        if finished.is_some() {
            self.busy = false;
        }
        let mut close = false;
        let mut start = false;
        if let Some((title, picture)) = &self.picture {
            egui::Window::new("Export view")
                .collapsible(false)
                .resizable(false)
                .show(ctx, |ui| {
                    ui.label(format!(
                        "{title}: {:.0} × {:.0} points",
                        picture.size.x, picture.size.y
                    ));
                    ui.horizontal(|ui| {
                        let before = self.format;
                        ui.radio_value(&mut self.format, ExportFormat::Svg, "SVG")
                            .on_hover_text("shapes and text as vectors, the allocation map and other GPU layers as embedded images");
                        ui.radio_value(&mut self.format, ExportFormat::Png, "PNG");
                        if before != self.format {
                            let p = PathBuf::from(&self.path).with_extension(self.format.extension());
                            self.path = p.display().to_string();
                        }
                    });
                    ui.add(egui::TextEdit::singleline(&mut self.path).desired_width(420.0));
                    ui.horizontal(|ui| {
                        if ui
                            .add_enabled(!self.busy, egui::Button::new("Export"))
                            .clicked()
                        {
                            start = true;
                        }
                        if ui.button("Cancel").clicked() {
                            close = true;
                        }
                        if self.busy {
                            ui.spinner();
                        }
                    });
                });
        }
        if start && let Some((_, picture)) = &self.picture {
            match render_state {
                Some(rs) => {
                    self.busy = true;
                    spawn_export(
                        ctx.clone(),
                        rs,
                        picture.clone(),
                        PathBuf::from(self.path.trim()),
                        self.format,
                        self.done.clone(),
                    );
                    close = true;
                }
                None => return Some("export needs the wgpu renderer".to_owned()),
            }
        }
        if close {
            self.picture = None;
        }
        finished
    }
}

/// Writes every `(title, picture)` as SVG into `dir` (`NN-title.svg`), on this thread: the
/// screenshot self-test's `MEMSCAPE_EXPORT_VIEWS`.
pub fn export_all(
    render_state: Option<&egui_wgpu::RenderState>,
    pictures: Vec<(String, Arc<Picture>)>,
    dir: &std::path::Path,
) -> anyhow::Result<()> {
    let rs = render_state.ok_or_else(|| anyhow::anyhow!("export needs the wgpu renderer"))?;
    std::fs::create_dir_all(dir)?;
    let gpu = gpu_of(rs);
    for (k, (title, picture)) in pictures.iter().enumerate() {
        let path = dir.join(format!("{k:02}-{}.svg", file_stem(title)));
        write(&gpu, picture, &path, ExportFormat::Svg)?;
    }
    Ok(())
}

/// egui's device as a `GpuContext` for the headless painters.
fn gpu_of(rs: &egui_wgpu::RenderState) -> GpuContext {
    GpuContext {
        instance: rs.instance.clone(),
        adapter: rs.adapter.clone(),
        device: rs.device.clone(),
        queue: rs.queue.clone(),
        features: memscape_render::context::RendererFeatures::of(&rs.device),
    }
}

/// A pane title as a file name: letters and digits, runs of anything else as one `-`.
fn file_stem(title: &str) -> String {
    title
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { '-' })
        .collect::<String>()
        .split('-')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// Writes `picture` to `path` on a thread of its own; the outcome lands in `done`.
fn spawn_export(
    ctx: egui::Context,
    rs: &egui_wgpu::RenderState,
    picture: Arc<Picture>,
    path: PathBuf,
    format: ExportFormat,
    done: Arc<Mutex<Option<String>>>,
) {
    let gpu = gpu_of(rs);
    let spawned = std::thread::Builder::new()
        .name("memscape-export".into())
        .spawn(move || {
            let message = match write(&gpu, &picture, &path, format) {
                Ok(()) => format!("exported {}", path.display()),
                Err(e) => format!("export failed: {e:#}"),
            };
            if let Ok(mut d) = done.lock() {
                *d = Some(message);
            }
            ctx.request_repaint();
        });
    if let Err(e) = spawned {
        tracing::error!("export thread: {e}");
    }
}

/// `picture` written to `path` as `format`.
pub fn write(
    gpu: &GpuContext,
    picture: &Picture,
    path: &std::path::Path,
    format: ExportFormat,
) -> anyhow::Result<()> {
    use anyhow::Context as _;
    match format {
        ExportFormat::Svg => {
            let svg = memscape_views::svg::picture_svg(gpu, picture)?;
            std::fs::write(path, svg).with_context(|| format!("writing {}", path.display()))?;
        }
        ExportFormat::Png => {
            memscape_views::headless::render_picture(gpu, picture)?.save_png(path)?;
        }
    }
    Ok(())
}
