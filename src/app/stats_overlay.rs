//! The frame-statistics overlay (F3, View ▸ Frame statistics): frame interval and CPU time per
//! frame (rolling mean and p99), the GPU time of each pane's passes and the path each
//! allocation map took, in a small panel at the top right. What it shows is composed by
//! `memscape_views::stats::overlay_picture`; the GPU numbers come from the registry's
//! `memscape_render::StatsRecorder`.

use std::time::Instant;

use memscape_views::gpu::{GpuRegistry, PaneKey};
use memscape_views::stats::{FrameTimes, OverlayInput};

/// The key that toggles the overlay.
pub const KEY: egui::Key = egui::Key::F3;
pub const KEY_NAME: &str = "F3";

/// Frames the rolling statistics cover.
const WINDOW: usize = 240;

pub struct StatsOverlay {
    pub shown: bool,
    key: PaneKey,
    last_frame: Option<Instant>,
    frame: FrameTimes,
    cpu: FrameTimes,
}

impl StatsOverlay {
    pub fn new(shown: bool) -> Self {
        Self {
            shown,
            key: PaneKey::new(),
            last_frame: None,
            frame: FrameTimes::new(WINDOW),
            cpu: FrameTimes::new(WINDOW),
        }
    }

    /// Counts a frame: the time since the last one, and the CPU time eframe measured for the
    /// last frame's UI work (`cpu_usage`).
    pub fn frame_started(&mut self, cpu_usage_s: Option<f32>) {
        let now = Instant::now();
        if let Some(last) = self.last_frame {
            self.frame.push((now - last).as_secs_f64() * 1e3);
        }
        self.last_frame = Some(now);
        if let Some(cpu) = cpu_usage_s {
            self.cpu.push(f64::from(cpu) * 1e3);
        }
    }

    /// Draws the overlay over everything when it is shown (and keeps frames coming, so that
    /// the frame times are those of a running UI).
    pub fn show(&self, ctx: &egui::Context, render_state: Option<&egui_wgpu::RenderState>) {
        if !self.shown {
            return;
        }
        let gpu = render_state.and_then(GpuRegistry::frame_stats_of);
        let adapter = render_state.map_or("no wgpu renderer".to_owned(), |rs| {
            let info = rs.adapter.get_info();
            format!(
                "{} · {:?} · {} {}",
                info.name, info.backend, info.driver, info.driver_info
            )
        });
        let picture = memscape_views::stats::overlay_picture(&OverlayInput {
            frame: &self.frame,
            cpu: &self.cpu,
            gpu: gpu.as_ref(),
            adapter: &adapter,
            key: KEY_NAME,
        });
        egui::Area::new(egui::Id::unique("memscape-frame-statistics"))
            .order(egui::Order::Foreground)
            .anchor(egui::Align2::RIGHT_TOP, egui::vec2(-8.0, 32.0))
            .interactable(false)
            .show(ctx, |ui| {
                let (rect, _) = ui.allocate_exact_size(picture.size, egui::Sense::hover());
                memscape_views::gpu::paint(ui, &self.key, rect, picture);
            });
        ctx.request_repaint_after(std::time::Duration::from_millis(250));
    }
}
