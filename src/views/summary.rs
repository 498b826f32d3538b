//! A text summary of any dataset: what was loaded, its counts and its warnings.

use std::sync::Arc;

use super::{View, ViewContext};
use crate::data::Dataset;

pub struct SummaryView {
    dataset: Arc<Dataset>,
}

impl SummaryView {
    pub fn new(dataset: Arc<Dataset>) -> Self {
        Self { dataset }
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
                ui.monospace(self.dataset.summary_text());
                let warnings = self.dataset.warnings_text();
                if !warnings.is_empty() {
                    ui.add_space(6.0);
                    ui.colored_label(egui::Color32::from_rgb(240, 190, 80), "warnings");
                    ui.monospace(warnings);
                }
            });
    }
}
