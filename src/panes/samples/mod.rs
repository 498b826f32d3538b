//! The samples panes beside the radial topology (`super::topology`): parallel histograms and
//! the single-attribute histogram with brushing, the selection panel, window-score strips and
//! cluster markers with their topology glyphs, and the source pane of the top offenders. What
//! every samples view of a dataset shares is `memscape_views::samples::shared`.

pub mod pane;
pub mod source;

use std::sync::Arc;

use memscape_views::Dataset;
use memscape_views::samples::shared::{Base, SamplesShared};

pub use pane::HistogramsPane;

/// The base for a pane's frame; while it is built a spinner with `waiting`, on failure the
/// error (and `*ready` set: there is nothing more to wait for) and None.
pub fn base_or_status(
    shared: &SamplesShared,
    ui: &mut egui::Ui,
    waiting: &str,
    ready: &mut bool,
) -> Option<Arc<Base>> {
    match shared.base() {
        None => {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(waiting);
            });
            None
        }
        Some(Err(e)) => {
            ui.colored_label(egui::Color32::LIGHT_RED, e);
            *ready = true;
            None
        }
        Some(Ok(base)) => Some(base),
    }
}

/// The "topology:" menu of a samples pane: pair the samples with any open topology file, or
/// go back to their default (the hardware.xml beside them, else this machine).
pub fn topology_menu(
    ui: &mut egui::Ui,
    dataset: &Dataset,
    shared: &SamplesShared,
    topologies: &[Arc<Dataset>],
) {
    let (paired, _) = dataset.links.topology();
    let current = paired.as_ref().map_or_else(
        || "default".to_owned(),
        |p| {
            p.file_name().map_or_else(
                || p.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            )
        },
    );
    ui.menu_button(format!("topology: {current}"), |ui| {
        if ui
            .selectable_label(
                paired.is_none(),
                "default: hardware.xml beside the samples, else this machine",
            )
            .clicked()
        {
            shared.pair_with(dataset, None);
            ui.close();
        }
        let files: Vec<std::path::PathBuf> = topologies
            .iter()
            .map(|t| std::path::PathBuf::from(&t.name))
            .filter(|p| p.is_file())
            .collect();
        if files.is_empty() {
            ui.weak("open a topology file (hwloc XML, hardware.xml) to pair with it");
        }
        for path in files {
            let chosen = paired.as_ref() == Some(&path);
            if ui
                .selectable_label(chosen, path.display().to_string())
                .clicked()
            {
                shared.pair_with(dataset, Some(path));
                ui.close();
            }
        }
    });
}
