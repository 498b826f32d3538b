//! The window's menu bar (File, View, Help) and its status bar (loading progress, errors,
//! the adapter in use).

use std::sync::Arc;

use memscape_views::{Dataset, LoadSource};

use super::files::{FileId, Status};
use super::registry::PaneKind;
use super::{MemscapeApp, TOUR_FILE, export, stats_overlay};

impl MemscapeApp {
    pub(super) fn menu(&mut self, ctx: &egui::Context, ui: &mut egui::Ui) {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                if ui.button("Open…").clicked() {
                    self.open_dialog.open = true;
                    ui.close();
                }
                if ui.button("Open the demo").clicked() {
                    for s in memscape_views::demo::sources() {
                        self.open(ctx, s);
                    }
                    ui.close();
                }
                ui.menu_button("Recent", |ui| {
                    if self.recent.is_empty() {
                        ui.label("nothing yet");
                    }
                    for p in self.recent.clone() {
                        if ui.button(p.display().to_string()).clicked() {
                            self.open(ctx, LoadSource::File(p));
                            ui.close();
                        }
                    }
                });
                ui.separator();
                if ui.button("Quit").clicked() {
                    ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                }
            });
            ui.menu_button("View", |ui| {
                if ui.button("Presentation mode (F5)").clicked() {
                    let ctx = ui.ctx().clone();
                    self.set_presenting(&ctx, true);
                    ui.close();
                }
                ui.checkbox(
                    &mut self.stats_overlay.shown,
                    format!("Frame statistics ({})", stats_overlay::KEY_NAME),
                )
                .on_hover_text(
                    "frame and CPU times, GPU time per pass, the path each allocation map took",
                );
                if ui
                    .button("Record tour step")
                    .on_hover_text(format!(
                        "append the state of the last clicked view to {TOUR_FILE} (memscape present / render-tour)"
                    ))
                    .clicked()
                {
                    self.record_tour_step();
                    ui.close();
                }
                for (label, format) in [
                    ("Export view as SVG…", export::ExportFormat::Svg),
                    ("Export view as PNG…", export::ExportFormat::Png),
                ] {
                    if ui
                        .button(label)
                        .on_hover_text("the last clicked view as it is drawn now (also: right-click its tab)")
                        .clicked()
                    {
                        self.export_view(None, format);
                        ui.close();
                    }
                }
                ui.separator();
                let loaded: Vec<(FileId, Arc<Dataset>)> = self
                    .files
                    .files
                    .iter()
                    .filter_map(|f| f.dataset.clone().map(|d| (f.id, d)))
                    .collect();
                if loaded.is_empty() {
                    ui.label("open a file first");
                }
                for (file, d) in loaded {
                    ui.menu_button(&d.name, |ui| {
                        for kind in PaneKind::ALL {
                            match kind.accepts(&d) {
                                Ok(()) => {
                                    if ui.button(kind.name()).clicked() {
                                        self.add_view(ui.ctx(), *kind, d.clone(), file, u64::MAX);
                                        ui.close();
                                    }
                                }
                                Err(why) => {
                                    ui.add_enabled(false, egui::Button::new(kind.name()))
                                        .on_disabled_hover_text(why);
                                }
                            }
                        }
                    });
                }
                self.compare_menu(ui);
            });
            ui.menu_button("Help", |ui| {
                ui.label("Scroll: zoom (shift: time only, ctrl: addresses only)");
                ui.label("Drag: pan · double-click: reset the view");
                ui.label("Drop files on the window to open them");
                ui.label(format!(
                    "{}: frame statistics · F5: presentation mode",
                    stats_overlay::KEY_NAME
                ));
            });
        });
    }

    pub(super) fn status_bar(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            for p in &self.files.loader.pending {
                crate::panes::spinner(ui);
                if p.fraction >= 0.0 {
                    ui.add(
                        egui::ProgressBar::new(p.fraction)
                            .desired_width(120.0)
                            .show_percentage(),
                    );
                }
                ui.label(format!("{}: {}", p.name, p.message));
                ui.separator();
            }
            if let Some(n) = &self.notice {
                ui.label(n);
                ui.separator();
            }
            self.live_status(ui);
            if self.files.loader.is_idle() {
                let failed = self
                    .files
                    .files
                    .iter()
                    .filter(|f| matches!(f.status, Status::Failed(_)))
                    .count();
                let loaded = self.files.files.len() - failed;
                ui.label(if failed > 0 {
                    format!("{loaded} file(s) loaded, {failed} failed (see their panes)")
                } else {
                    format!("{loaded} file(s) loaded")
                });
            }
            if let Some(rs) = &self.render_state {
                let info = rs.adapter.get_info();
                ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                    ui.weak(format!("{} · {:?}", info.name, info.backend));
                });
            }
        });
        let mut dismiss = None;
        for (i, e) in self.errors.iter().enumerate() {
            ui.horizontal(|ui| {
                ui.colored_label(egui::Color32::from_rgb(255, 120, 110), format!("⚠ {e}"));
                if ui.small_button("dismiss").clicked() {
                    dismiss = Some(i);
                }
            });
        }
        if let Some(i) = dismiss {
            self.errors.remove(i);
        }
    }
}
