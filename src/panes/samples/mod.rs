//! The samples panes beside the radial topology (`super::topology`): parallel histograms and
//! the single-attribute histogram with brushing, the selection panel, window-score strips and
//! cluster markers with their topology glyphs, and the source pane of the top offenders. What
//! every samples view of a dataset shares is `memscape_views::samples::shared`.

pub mod pane;
pub mod source;

use std::sync::Arc;

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
