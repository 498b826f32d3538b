//! A text summary of any dataset: what was loaded, its counts and its warnings.

use std::sync::Arc;

use super::{View, ViewContext};
use memscape_views::Dataset;

pub struct SummaryView {
    dataset: Arc<Dataset>,
    /// Computed once: some summaries walk every block or render a whole topology tree.
    summary: String,
    warnings: String,
    /// A live recording's newer snapshot, summarized on a thread of its own, and the newest
    /// one waiting for it (older ones are skipped).
    next: Option<crossbeam_channel::Receiver<SummaryView>>,
    queued: Option<Arc<Dataset>>,
}

impl SummaryView {
    pub fn new(dataset: Arc<Dataset>) -> Self {
        let summary = dataset.summary_text();
        let warnings = dataset.warnings_text();
        Self {
            dataset,
            summary,
            warnings,
            next: None,
            queued: None,
        }
    }

    /// Summarizes `dataset` off the UI thread; `ui` swaps it in when done.
    fn prepare(&mut self, dataset: Arc<Dataset>, ctx: &egui::Context) {
        if self.next.is_some() {
            self.queued = Some(dataset);
            return;
        }
        let (tx, rx) = crossbeam_channel::bounded(1);
        let ctx = ctx.clone();
        let spawned = std::thread::Builder::new()
            .name("memscape-summary".into())
            .spawn(move || {
                let _ = tx.send(SummaryView::new(dataset));
                ctx.request_repaint();
            });
        if spawned.is_ok() {
            self.next = Some(rx);
        }
    }
}

impl View for SummaryView {
    fn title(&self) -> String {
        format!("Summary · {}", self.dataset.name)
    }

    /// A live recording's newer snapshot (or its finished file): summarized again.
    fn follow(&mut self, dataset: Arc<Dataset>, ctx: &egui::Context) {
        self.prepare(dataset, ctx);
    }

    fn ui(&mut self, ui: &mut egui::Ui, _cx: &ViewContext<'_>) {
        match self.next.as_ref().map(|rx| rx.try_recv()) {
            Some(Ok(next)) => {
                let queued = self.queued.take();
                *self = next;
                if let Some(d) = queued {
                    self.prepare(d, ui.ctx());
                }
            }
            Some(Err(crossbeam_channel::TryRecvError::Disconnected)) => self.next = None,
            _ => {}
        }
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
