//! The bar above a file's panes when the file changed on disk, is reloading, or its reload
//! failed; with the buttons that act on it (reload, follow growth). Nothing is drawn for a file
//! that is as it was loaded.

use super::Pane;
use super::files::{DiskChange, FileId, OpenFile, OpenFiles, Status};

/// What a click in a bar asks of the shell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileRequest {
    Reload(FileId),
    Follow(FileId, bool),
}

const WARN: egui::Color32 = egui::Color32::from_rgb(255, 190, 90);
const ERROR: egui::Color32 = egui::Color32::from_rgb(255, 120, 110);

/// Draws the bars of the files `pane` shows at its top: its file's, and for a difference pane
/// each compared file's, named A and B (`--diff`'s files have no panes of their own: this is
/// where their changes on disk, reloads and failed reloads show).
pub(super) fn show_for(
    ui: &mut egui::Ui,
    pane: &Pane,
    files: &OpenFiles,
    requests: &mut Vec<FileRequest>,
) {
    if let Some(file) = pane.file.and_then(|id| files.get(id)) {
        show(ui, file, None, requests);
    }
    for (letter, id) in ["A", "B"]
        .into_iter()
        .zip(pane.compare.into_iter().flatten())
    {
        if let Some(file) = files.get(id) {
            show(ui, file, Some(letter), requests);
        }
    }
}

/// Draws `file`'s bar (if it needs one) at the top of `ui`; `letter` names the file (A or B)
/// in a difference pane.
pub fn show(
    ui: &mut egui::Ui,
    file: &OpenFile,
    letter: Option<&str>,
    requests: &mut Vec<FileRequest>,
) {
    // A and B by their file names (the tab says which runs are compared).
    let named = |text: String| match letter {
        Some(l) => {
            let path = std::path::Path::new(&file.name);
            let short = path
                .file_name()
                .map_or(file.name.clone(), |n| n.to_string_lossy().into_owned());
            format!("{l} ({short}): {text}")
        }
        None => text,
    };
    let failed = matches!(file.status, Status::Failed(_));
    let reloading = file.is_reloading();
    if file.change.is_none() && file.reload_error.is_none() && !reloading && !failed {
        if file.follows > 0 && file.follow {
            ui.horizontal(|ui| {
                ui.weak(named(format!(
                    "following the file as it grows ({} reload{})",
                    file.follows,
                    if file.follows == 1 { "" } else { "s" }
                )));
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
                    crate::panes::spinner(ui);
                    ui.label(named("reloading…".into()));
                }
                if let Some(change) = &file.change {
                    let what = change.describe();
                    let tail = match (change, failed) {
                        (_, true) => "",
                        (DiskChange::Grew { .. }, false) if file.follow => "",
                        (DiskChange::Vanished(_), false) => "; the view shows the data as loaded",
                        _ => " since it was loaded; the view shows the data as loaded",
                    };
                    ui.colored_label(WARN, named(format!("⟳ {what}{tail}")));
                }
                if let Some(e) = &file.reload_error {
                    ui.colored_label(
                        ERROR,
                        named(format!(
                            "⚠ reloading failed: {e}; the view shows the last data that loaded"
                        )),
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
