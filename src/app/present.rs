//! `memscape present`: a tour played full screen. A named worker thread renders each step's
//! frames (transition + end state, captions included) with the headless renderer, the same code
//! as `memscape render-tour`; the window shows them at the tour's frame rate.
//!
//! Keys: → or space next step, ← previous, Home first, P pause/resume, 1–9 jump to a step,
//! F5 full screen on/off, Esc leaves full screen, then quits. `--keys` presses keys for a
//! scripted run and `--screenshot` saves the window at its end (the automated test).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use memscape_views::tour::{self, Step};

/// A step's frames: the transition from the previous step (empty for a jump) then the end
/// state as the last frame.
struct StepFrames {
    step: usize,
    frames: Vec<egui::ColorImage>,
}

fn to_color_image(image: &memscape_render::RgbaImage) -> egui::ColorImage {
    egui::ColorImage::from_rgba_unmultiplied(
        [image.width as usize, image.height as usize],
        &image.pixels,
    )
}

/// Requests (step, with its transition) to the renderer thread, and its answers.
type Worker = (Sender<(usize, bool)>, Receiver<Result<StepFrames, String>>);

fn spawn_worker(
    states: Vec<Step>,
    base: PathBuf,
    fps: f32,
    size: (u32, u32),
    ctx: egui::Context,
) -> Worker {
    let (req_tx, req_rx) = crossbeam_channel::bounded::<(usize, bool)>(4);
    let (rep_tx, rep_rx) = crossbeam_channel::bounded(2);
    let spawned = std::thread::Builder::new()
        .name("present-render".into())
        .spawn(move || {
            let gpu =
                match memscape_views::render::gpu_context(memscape_render::AdapterChoice::Auto) {
                    Ok(g) => g,
                    Err(e) => {
                        let _ = rep_tx.send(Err(format!("{e:#}")));
                        return;
                    }
                };
            let mut renderer = tour::Renderer::new(gpu, &base, size.0, size.1);
            while let Ok((step, with_transition)) = req_rx.recv() {
                let outcome = (|| -> anyhow::Result<StepFrames> {
                    let state = states
                        .get(step)
                        .ok_or_else(|| anyhow::anyhow!("no step {step}"))?;
                    let mut frames = Vec::new();
                    if with_transition && step > 0 {
                        // Only this step's transition: a two-step tour from the previous state.
                        let pair = [states[step - 1].clone(), state.clone()];
                        let mut first = true;
                        tour::render_frames(&mut renderer, &pair, fps, &mut |_, i, image| {
                            // Skip the previous step's hold frames; keep the transition.
                            if i == 1 {
                                frames.push(to_color_image(image));
                            } else if first {
                                first = false;
                            }
                            Ok(())
                        })?;
                    } else {
                        frames.push(to_color_image(&renderer.render(state)?));
                    }
                    Ok(StepFrames { step, frames })
                })();
                if rep_tx.send(outcome.map_err(|e| format!("{e:#}"))).is_err() {
                    return;
                }
                ctx.request_repaint();
            }
        });
    if let Err(e) = spawned {
        tracing::error!("could not start the presentation renderer: {e}");
    }
    (req_tx, rep_rx)
}

struct PresentApp {
    states: Vec<Step>,
    base: PathBuf,
    fps: f32,
    worker: Option<Worker>,
    step: usize,
    frames: Vec<egui::TextureHandle>,
    frame: usize,
    frame_started: Instant,
    paused: bool,
    waiting: bool,
    error: Option<String>,
    fullscreen: bool,
    /// Keys still to press for a scripted run, and the screenshot that ends it.
    script: VecDeque<egui::Key>,
    screenshot: Option<super::screenshot::ScreenshotJob>,
}

/// How `memscape present` runs.
pub struct PresentOptions {
    pub fps: f32,
    pub fullscreen: bool,
    /// Pressed one at a time, each once the step shown has finished its transition.
    pub keys: Vec<egui::Key>,
    /// Saved after the scripted keys, once the step shown has finished its transition.
    pub screenshot: Option<(PathBuf, Duration)>,
}

/// A key of `--keys`: right, left, space, home, p, f5, esc or a digit 1–9.
pub fn parse_key(name: &str) -> anyhow::Result<egui::Key> {
    let key = match name.trim().to_ascii_lowercase().as_str() {
        "right" => egui::Key::ArrowRight,
        "left" => egui::Key::ArrowLeft,
        "space" => egui::Key::Space,
        "home" => egui::Key::Home,
        "p" => egui::Key::P,
        "f5" => egui::Key::F5,
        "esc" | "escape" => egui::Key::Escape,
        digit => match digit.parse::<usize>() {
            Ok(n @ 1..=9) => DIGITS[n - 1],
            _ => anyhow::bail!(
                "--keys: {name:?} is not a key (right, left, space, home, p, f5, esc, 1-9)"
            ),
        },
    };
    Ok(key)
}

const DIGITS: [egui::Key; 9] = [
    egui::Key::Num1,
    egui::Key::Num2,
    egui::Key::Num3,
    egui::Key::Num4,
    egui::Key::Num5,
    egui::Key::Num6,
    egui::Key::Num7,
    egui::Key::Num8,
    egui::Key::Num9,
];

impl PresentApp {
    /// What a key does (from the keyboard or the script).
    fn press(&mut self, key: egui::Key, ctx: &egui::Context) {
        let last = self.states.len().saturating_sub(1);
        match key {
            egui::Key::ArrowRight | egui::Key::Space if self.step < last => {
                self.step += 1;
                self.waiting = false;
            }
            egui::Key::ArrowLeft if self.step > 0 => {
                self.step -= 1;
                self.waiting = false;
            }
            egui::Key::Home => {
                self.step = 0;
                self.waiting = false;
            }
            egui::Key::P => self.paused = !self.paused,
            egui::Key::F5 => self.fullscreen = !self.fullscreen,
            egui::Key::Escape => {
                if self.fullscreen {
                    self.fullscreen = false;
                } else {
                    ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                }
            }
            _ => {
                if let Some(n) = DIGITS.iter().position(|d| *d == key)
                    && n <= last
                {
                    self.step = n;
                    self.waiting = false;
                }
            }
        }
    }

    /// Whether the step wanted is the one shown, at the end of its transition.
    fn settled(&self) -> bool {
        let want = format!("present-{}-0", self.step);
        !self.waiting
            && self.frames.first().is_some_and(|t| t.name() == want)
            && self.frame + 1 >= self.frames.len()
    }
    fn go(&mut self, step: usize, with_transition: bool) {
        let step = step.min(self.states.len().saturating_sub(1));
        if let Some((tx, _)) = &self.worker
            && tx.try_send((step, with_transition)).is_ok()
        {
            self.waiting = true;
            self.step = step;
        }
    }
}

impl eframe::App for PresentApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let ctx = ui.ctx().clone();
        if self.worker.is_none() {
            // Frames at the window's size in pixels (the first frame knows it).
            let size = ctx.content_rect().size() * ctx.pixels_per_point();
            let size = ((size.x as u32).max(320), (size.y as u32).max(240));
            self.worker = Some(spawn_worker(
                self.states.clone(),
                self.base.clone(),
                self.fps,
                size,
                ctx.clone(),
            ));
            self.go(0, false);
        }
        if let Some((_, rx)) = &self.worker
            && let Ok(reply) = rx.try_recv()
        {
            self.waiting = false;
            match reply {
                Ok(frames) if frames.step == self.step => {
                    self.frames = frames
                        .frames
                        .into_iter()
                        .enumerate()
                        .map(|(i, img)| {
                            ctx.load_texture(
                                format!("present-{}-{i}", frames.step),
                                img,
                                Default::default(),
                            )
                        })
                        .collect();
                    self.frame = 0;
                    self.frame_started = Instant::now();
                }
                Ok(_) => {}
                Err(e) => self.error = Some(e),
            }
        }
        let pressed: Vec<egui::Key> = ctx.input(|i| {
            i.events
                .iter()
                .filter_map(|e| match e {
                    egui::Event::Key {
                        key, pressed: true, ..
                    } => Some(*key),
                    _ => None,
                })
                .collect()
        });
        for key in pressed {
            self.press(key, &ctx);
        }
        // A scripted run presses its next key once the step shown has settled, and ends with
        // the screenshot.
        if self.settled()
            && let Some(key) = self.script.pop_front()
        {
            self.press(key, &ctx);
        }
        let settled = self.settled() && self.script.is_empty();
        let failure = self.error.clone();
        if let Some(job) = &mut self.screenshot {
            job.update(&ctx, settled, failure, None);
        }
        ctx.send_viewport_cmd(egui::ViewportCommand::Fullscreen(self.fullscreen));
        // A step change (not yet requested) asks the worker for its frames.
        let shown = self.frames.first().map(|t| t.name());
        let want = format!("present-{}-0", self.step);
        if !self.waiting && shown.as_deref() != Some(want.as_str()) {
            let forward = shown
                .as_deref()
                .and_then(|n| n.split('-').nth(1))
                .and_then(|s| s.parse::<usize>().ok())
                .is_some_and(|s| s + 1 == self.step);
            self.go(self.step, forward);
        }
        // Advance through the transition frames.
        let per_frame = Duration::from_secs_f32(1.0 / self.fps.max(1.0));
        if !self.paused
            && self.frame + 1 < self.frames.len()
            && self.frame_started.elapsed() >= per_frame
        {
            self.frame += 1;
            self.frame_started = Instant::now();
        }
        if self.frame + 1 < self.frames.len() || self.waiting {
            ctx.request_repaint_after(per_frame / 2);
        }
        egui::CentralPanel::default()
            .frame(egui::Frame::NONE.fill(egui::Color32::BLACK))
            .show(ui, |ui| {
                let rect = ui.max_rect();
                if let Some(tex) = self.frames.get(self.frame) {
                    let size = tex.size_vec2();
                    let scale = (rect.width() / size.x).min(rect.height() / size.y);
                    let shown = egui::Rect::from_center_size(rect.center(), size * scale);
                    ui.painter().image(
                        tex.id(),
                        shown,
                        egui::Rect::from_min_max(egui::pos2(0.0, 0.0), egui::pos2(1.0, 1.0)),
                        egui::Color32::WHITE,
                    );
                }
                if let Some(e) = &self.error {
                    ui.painter().text(
                        rect.center(),
                        egui::Align2::CENTER_CENTER,
                        e,
                        egui::FontId::proportional(20.0),
                        egui::Color32::LIGHT_RED,
                    );
                } else if self.frames.is_empty() {
                    ui.painter().text(
                        rect.center(),
                        egui::Align2::CENTER_CENTER,
                        "rendering…",
                        egui::FontId::proportional(24.0),
                        egui::Color32::GRAY,
                    );
                }
                ui.painter().text(
                    rect.right_bottom() + egui::vec2(-12.0, -8.0),
                    egui::Align2::RIGHT_BOTTOM,
                    format!(
                        "{}/{}{}",
                        self.step + 1,
                        self.states.len(),
                        if self.paused { " · paused" } else { "" }
                    ),
                    egui::FontId::proportional(13.0),
                    egui::Color32::from_gray(120),
                );
            });
    }
}

/// Plays the tour in a window; with a screenshot, returns how it went once the window closed.
pub fn run(
    states: Vec<Step>,
    base: PathBuf,
    options: PresentOptions,
) -> anyhow::Result<Option<Result<PathBuf, String>>> {
    let PresentOptions {
        fps,
        fullscreen,
        keys,
        screenshot,
    } = options;
    let outcome: super::screenshot::Outcome = Default::default();
    let job = screenshot.map(|(path, timeout)| {
        super::screenshot::ScreenshotJob::new(path, timeout, outcome.clone())
    });
    let options = eframe::NativeOptions {
        renderer: eframe::Renderer::Wgpu,
        viewport: egui::ViewportBuilder::default()
            .with_title("memscape — presentation")
            .with_inner_size([1280.0, 720.0])
            .with_fullscreen(fullscreen),
        wgpu_options: super::wgpu_configuration(),
        ..Default::default()
    };
    eframe::run_native(
        "memscape-present",
        options,
        Box::new(move |_cc| {
            Ok(Box::new(PresentApp {
                states,
                base,
                fps,
                worker: None,
                step: 0,
                frames: Vec::new(),
                frame: 0,
                frame_started: Instant::now(),
                paused: false,
                waiting: false,
                error: None,
                fullscreen,
                script: keys.into(),
                screenshot: job,
            }))
        }),
    )
    .map_err(|e| anyhow::anyhow!("cannot open the window: {e}"))?;
    let result = outcome.lock().ok().and_then(|mut slot| slot.take());
    Ok(result)
}
