//! The allocation-map pane's process filter: a checklist of the recording's processes that
//! edits the `process` setting (pids, as `memscape render --process` takes them), and the
//! pane rebuilt on the selected processes, off the UI thread.

use std::sync::Arc;

use crossbeam_channel::Receiver;
use memscape_trace::process::ProcessFilter;
use memscape_views::Dataset;

use super::AllocMapPane;

/// The dataset the pane was opened on and the selection applied to it.
pub struct ProcessFilterState {
    pub source: Arc<Dataset>,
    pub applied: Option<String>,
    pending: Option<(Option<String>, Receiver<memscape_views::Result<Dataset>>)>,
}

impl ProcessFilterState {
    pub fn new(source: Arc<Dataset>) -> Self {
        Self {
            source,
            applied: None,
            pending: None,
        }
    }
}

impl AllocMapPane {
    /// The checklist (only for recordings with several processes).
    pub(super) fn process_checklist(&mut self, ui: &mut egui::Ui) {
        let source = self.filter.source.clone();
        let Some(t) = source.alloc_trace() else {
            return;
        };
        let processes = &t.trace.processes;
        if processes.len() < 2 {
            return;
        }
        let mut keep: Vec<bool> = match &self.settings.process {
            None => vec![true; processes.len()],
            Some(text) => ProcessFilter::parse(text)
                .map(|f| f.select(&t.trace))
                .unwrap_or_else(|_| vec![true; processes.len()]),
        };
        let shown = keep.iter().filter(|k| **k).count();
        let before = keep.clone();
        ui.menu_button(format!("processes: {shown} of {}", processes.len()), |ui| {
            egui::ScrollArea::vertical()
                .max_height(360.0)
                .show(ui, |ui| {
                    for (i, p) in processes.iter().enumerate() {
                        let label = format!(
                            "{} · {} events · peak {} B",
                            memscape_views::processes::label(&t.trace, i as u32),
                            p.events,
                            p.peak_live_bytes
                        );
                        ui.checkbox(&mut keep[i], label)
                            .on_hover_text(&p.command_line);
                    }
                });
            if ui.button("all").clicked() {
                keep.iter_mut().for_each(|k| *k = true);
            }
        })
        .response
        .on_hover_text("which processes the map shows (each process has its own address axis)");
        if keep != before && keep.contains(&true) {
            self.settings.process = if keep.iter().all(|k| *k) {
                None
            } else {
                let mut pids: Vec<String> = processes
                    .iter()
                    .zip(&keep)
                    .filter(|(_, k)| **k)
                    .map(|(p, _)| p.pid.to_string())
                    .collect();
                pids.dedup();
                Some(pids.join(","))
            };
        }
    }

    /// Starts restricting the source to the wanted processes when the setting changed; swaps
    /// in the restricted dataset when it is ready. Returns whether the pane was rebuilt.
    pub(super) fn apply_process_filter(&mut self) -> bool {
        let wanted = self.settings.process.clone();
        if let Some((asked, rx)) = &self.filter.pending {
            let asked = asked.clone();
            match rx.try_recv() {
                Ok(Ok(dataset)) => {
                    self.filter.pending = None;
                    self.rebuild_on(Arc::new(dataset), asked);
                    return true;
                }
                Ok(Err(e)) => {
                    tracing::error!("process filter: {e}");
                    self.filter.pending = None;
                    self.settings.process = self.filter.applied.clone();
                }
                Err(crossbeam_channel::TryRecvError::Empty) => {}
                Err(crossbeam_channel::TryRecvError::Disconnected) => self.filter.pending = None,
            }
            return false;
        }
        if wanted == self.filter.applied {
            return false;
        }
        let Some(select) = wanted.clone() else {
            let source = self.filter.source.clone();
            self.rebuild_on(source, None);
            return true;
        };
        let (tx, rx) = crossbeam_channel::bounded(1);
        let source = self.filter.source.clone();
        let spawned = std::thread::Builder::new()
            .name("memscape-processes".into())
            .spawn(move || {
                let _ = tx.send(memscape_views::processes::restrict(&source, &select));
            });
        match spawned {
            Ok(_) => self.filter.pending = Some((wanted, rx)),
            Err(e) => tracing::error!("process filter thread: {e}"),
        }
        false
    }

    fn rebuild_on(&mut self, dataset: Arc<Dataset>, applied: Option<String>) {
        let mut fresh = AllocMapPane::new(dataset);
        fresh.settings = self.settings.clone();
        fresh.settings.process = applied.clone();
        std::mem::swap(&mut fresh.filter.source, &mut self.filter.source);
        fresh.filter.applied = applied;
        *self = fresh;
    }

    /// Whether a restricted dataset is being built.
    pub(super) fn filtering(&self) -> bool {
        self.filter.pending.is_some()
    }
}
