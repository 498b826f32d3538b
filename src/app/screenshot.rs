//! The GUI self-test hook: `memscape view … --screenshot out.png` waits until every file is
//! loaded and every view has drawn a full frame, saves the window as PNG and closes. With
//! `MEMSCAPE_EXPORT_VIEWS=DIR` it also writes every visible pane's picture into DIR as SVG, as
//! "Export view as SVG…" writes it (`tests/gui_smoke.rs` checks them).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Shared with `main`, which turns it into the exit code after the window closes.
pub type Outcome = Arc<Mutex<Option<Result<PathBuf, String>>>>;

pub struct ScreenshotJob {
    path: PathBuf,
    deadline: Instant,
    /// How often the window is woken to check readiness (slower while a live recording runs:
    /// the readiness cannot come before its end, and each frame costs a whole redraw).
    pub poll: Duration,
    ready_frames: u32,
    requested: bool,
    /// The request whose image is awaited: bumped by a frame that is not ready after the
    /// request, so that the image of a frame that started over is dropped.
    request: Arc<AtomicU64>,
    pub outcome: Outcome,
    /// Where to export every pane's picture once ready (`MEMSCAPE_EXPORT_VIEWS`), until done.
    export_dir: Option<PathBuf>,
    /// Where the pictures went for the request awaited (exported again if it is dropped).
    exported: Option<PathBuf>,
    /// The visible panes not drawn yet, named if the wait times out.
    pub waiting_for: Vec<String>,
}

/// Ready frames in a row before the screenshot is asked for. The image is of the frame after
/// the request, which must be ready too (else the image is dropped and the count starts over):
/// two ready frames in a row, the second captured, so that GPU views have uploaded and drawn
/// and egui's layout has settled. (Each frame of the window costs ≈ 0.1 s of CPU on a software
/// rasterizer.)
const SETTLE_FRAMES: u32 = 1;

impl ScreenshotJob {
    pub fn new(path: PathBuf, timeout: Duration, outcome: Outcome) -> Self {
        Self {
            path,
            deadline: Instant::now() + timeout,
            poll: Duration::from_millis(50),
            ready_frames: 0,
            requested: false,
            request: Arc::new(AtomicU64::new(0)),
            outcome,
            export_dir: std::env::var_os("MEMSCAPE_EXPORT_VIEWS").map(PathBuf::from),
            exported: None,
            waiting_for: Vec::new(),
        }
    }

    fn finish(&self, ctx: &egui::Context, result: Result<PathBuf, String>) {
        if let Ok(mut slot) = self.outcome.lock() {
            slot.get_or_insert(result);
        }
        ctx.send_viewport_cmd(egui::ViewportCommand::Close);
    }

    /// Where to export every pane's picture now (`MEMSCAPE_EXPORT_VIEWS`), once per request
    /// of the screenshot.
    pub fn take_export(&mut self) -> Option<PathBuf> {
        if !self.requested {
            return None;
        }
        let dir = self.export_dir.take()?;
        self.exported = Some(dir.clone());
        Some(dir)
    }

    /// Called once per frame. `ready` is true when loads are done and views are drawn;
    /// `fatal` carries a load error that makes the screenshot pointless (nothing loaded);
    /// `failure` one shown in its pane beside files that loaded, or a pane drawn past its edge,
    /// with where the screenshot shows it: the screenshot is taken, and the self-test still
    /// fails with that error.
    pub fn update(
        &mut self,
        ctx: &egui::Context,
        ready: bool,
        fatal: Option<String>,
        failure: Option<(String, &'static str)>,
    ) {
        if let Some(f) = fatal {
            self.finish(ctx, Err(f));
            return;
        }
        if Instant::now() > self.deadline {
            let mut message = String::from("timed out waiting for the data to load and draw");
            if !self.waiting_for.is_empty() {
                message += &format!(" (not drawn yet: {})", self.waiting_for.join(", "));
            }
            self.finish(ctx, Err(message));
            return;
        }
        ctx.request_repaint_after(self.poll);
        if self.requested {
            if !ready {
                // The frame to be captured started over: its image is not the window's.
                self.request.fetch_add(1, Ordering::AcqRel);
                self.requested = false;
                self.ready_frames = 0;
                if let Some(dir) = self.exported.take() {
                    self.export_dir = Some(dir);
                }
            }
            return;
        }
        if !ready {
            // Settled means ready in consecutive frames (a view may start over, e.g. on a
            // layout change).
            self.ready_frames = 0;
            return;
        }
        self.ready_frames += 1;
        tracing::debug!("ready frame {}", self.ready_frames);
        if self.ready_frames < SETTLE_FRAMES {
            // The settling frames follow at once (the poll may be paced).
            memscape_views::wake(ctx);
            return;
        }
        self.requested = true;
        let path = self.path.clone();
        let outcome = self.outcome.clone();
        let ctx2 = ctx.clone();
        let request = self.request.clone();
        let asked = request.load(Ordering::Acquire);
        ctx.request_screenshot(move |image| {
            if request.load(Ordering::Acquire) != asked {
                // A frame in between was not ready: the next request takes the image.
                memscape_views::wake(&ctx2);
                return;
            }
            let result = save(&path, &image).and_then(|()| match &failure {
                None => Ok(path.clone()),
                Some((f, shown)) => Err(format!(
                    "{f} (the screenshot {} shows it{shown})",
                    path.display()
                )),
            });
            if let Ok(mut slot) = outcome.lock() {
                slot.get_or_insert(result);
            }
            ctx2.send_viewport_cmd(egui::ViewportCommand::Close);
            memscape_views::wake(&ctx2);
        });
    }
}

fn save(path: &std::path::Path, image: &egui::ColorImage) -> Result<(), String> {
    let [w, h] = image.size;
    let pixels: Vec<u8> = image.pixels.iter().flat_map(|c| c.to_array()).collect();
    let img = memscape_render::RgbaImage {
        width: w as u32,
        height: h as u32,
        pixels,
    };
    img.save_png(path).map_err(|e| e.to_string())
}
