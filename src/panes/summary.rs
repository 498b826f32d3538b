//! A text summary of any dataset: what was loaded, its counts and its warnings.

use std::sync::Arc;

use super::{View, ViewContext};
use memscape_views::Dataset;

pub struct SummaryView {
    dataset: Arc<Dataset>,
    /// Computed once: some summaries walk every block or render a whole topology tree.
    summary: String,
    warnings: String,
}

impl SummaryView {
    pub fn new(dataset: Arc<Dataset>) -> Self {
        let summary = dataset.summary_text();
        let warnings = dataset.warnings_text();
        Self {
            dataset,
            summary,
            warnings,
        }
    }
}

impl View for SummaryView {
    fn title(&self) -> String {
        format!("Summary · {}", self.dataset.name)
    }

    fn ui(&mut self, ui: &mut egui::Ui, _cx: &ViewContext<'_>) {
        egui::ScrollArea::vertical()
            .auto_shrink([false, false])
            .show(ui, |ui| {
                ui.heading(&self.dataset.name);
                ui.label(format!("format: {}", self.dataset.format_name()));
                ui.add_space(6.0);
                ui.monospace(&self.summary);
                let warnings = &self.warnings;
                if !warnings.is_empty() {
                    ui.add_space(6.0);
                    ui.colored_label(egui::Color32::from_rgb(240, 190, 80), "warnings");
                    ui.monospace(warnings);
                }
            });
    }
}
