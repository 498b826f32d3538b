//! The bar above a file's panes when the file changed on disk, is reloading, or its reload
//! failed; with the buttons that act on it (reload, follow growth). Nothing is drawn for a file
//! that is as it was loaded.

use super::files::{DiskChange, FileId, OpenFile, Status};

/// What a click in a bar asks of the shell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileRequest {
    Reload(FileId),
    Follow(FileId, bool),
}

const WARN: egui::Color32 = egui::Color32::from_rgb(255, 190, 90);
const ERROR: egui::Color32 = egui::Color32::from_rgb(255, 120, 110);

/// Draws `file`'s bar (if it needs one) at the top of `ui`.
pub fn show(ui: &mut egui::Ui, file: &OpenFile, requests: &mut Vec<FileRequest>) {
    let failed = matches!(file.status, Status::Failed(_));
    let reloading = file.is_reloading();
    if file.change.is_none() && file.reload_error.is_none() && !reloading && !failed {
        if file.follows > 0 && file.follow {
            ui.horizontal(|ui| {
                ui.weak(format!(
                    "following the file as it grows ({} reload{})",
                    file.follows,
                    if file.follows == 1 { "" } else { "s" }
                ));
                if ui.small_button("stop following").clicked() {
                    requests.push(FileRequest::Follow(file.id, false));
                }
            });
        }
        return;
    }
    egui::Frame::new()
        .fill(ui.visuals().extreme_bg_color)
        .inner_margin(egui::Margin::symmetric(6, 3))
        .show(ui, |ui| {
            ui.horizontal_wrapped(|ui| {
                if reloading {
                    ui.spinner();
                    ui.label("reloading…");
                }
                if let Some(change) = &file.change {
                    let what = change.describe();
                    let tail = match (change, failed) {
                        (_, true) => "",
                        (DiskChange::Grew { .. }, false) if file.follow => "",
                        (DiskChange::Vanished(_), false) => "; the view shows the data as loaded",
                        _ => " since it was loaded; the view shows the data as loaded",
                    };
                    ui.colored_label(WARN, format!("⟳ {what}{tail}"));
                }
                if let Some(e) = &file.reload_error {
                    ui.colored_label(
                        ERROR,
                        format!(
                            "⚠ reloading failed: {e}; the view shows the last data that loaded"
                        ),
                    );
                }
                if !reloading {
                    let label = if failed { "Retry" } else { "Reload" };
                    if ui.button(label).clicked() {
                        requests.push(FileRequest::Reload(file.id));
                    }
                    let grew = matches!(file.change, Some(DiskChange::Grew { .. }));
                    if grew && !file.follow && ui.button("Follow").clicked() {
                        requests.push(FileRequest::Follow(file.id, true));
                    }
                }
            });
        });
}
