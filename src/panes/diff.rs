//! The difference pane: two datasets compared (`memscape view --diff A B`, View ▸ Compare two
//! runs).
//! Interaction only: the chart, time point, grouping and metric are the view's settings
//! (`memscape_views::diff::DiffSettings`); a named worker thread computes the comparison (or
//! composes the stacked allocation maps) and the pane paints `memscape_views::diff`'s picture.

use std::sync::Arc;

use crossbeam_channel::{Receiver, bounded};
use memscape_heap::diff::{DiffReport, Status};
use memscape_heap::{GroupKey, Metric};
use memscape_views::alloc_map::AllocMapSettings;
use memscape_views::diff::compose::{MapRun, StackedMaps, hover, tree_picture};
use memscape_views::diff::{DiffChart, DiffSettings};
use memscape_views::gpu::{self, PaneKey};
use memscape_views::heap_tree::HeapTreeSettings;
use memscape_views::heap_tree::settings::{GroupKeys, HeapMetric};
use memscape_views::{Dataset, Picture};

use super::{View, ViewContext};

/// What the worker answers.
enum Reply {
    Report(Result<Box<DiffReport>, String>),
    Maps(Result<Box<StackedMaps>, String>),
}

/// The stacked maps as painted: each cell with its own GPU key, the frame over them.
struct PaneMaps {
    cells: Vec<(egui::Rect, Arc<Picture>)>,
    frame: Arc<Picture>,
    runs: Vec<MapRun>,
}

pub struct DiffPane {
    a: Arc<Dataset>,
    b: Arc<Dataset>,
    settings: DiffSettings,
    report: Option<Result<Box<DiffReport>, String>>,
    maps: Option<Result<PaneMaps, String>>,
    /// What the report and the maps were asked with.
    report_of: Option<HeapTreeSettings>,
    maps_of: Option<(AllocMapSettings, egui::Vec2)>,
    replies: Option<Receiver<Reply>>,
    /// The tree picture and A's map, B's map, the maps' frame: one GPU key each.
    keys: [PaneKey; 3],
    ctx: egui::Context,
}

impl DiffPane {
    pub fn new(a: Arc<Dataset>, b: Arc<Dataset>, ctx: &egui::Context) -> Self {
        Self {
            a,
            b,
            // Each run at its peak, as the heap-tree pane opens (a run's end often holds little).
            settings: DiffSettings {
                heap: HeapTreeSettings {
                    peak: true,
                    ..HeapTreeSettings::default()
                },
                ..DiffSettings::default()
            },
            report: None,
            maps: None,
            report_of: None,
            maps_of: None,
            replies: None,
            keys: [PaneKey::new(), PaneKey::new(), PaneKey::new()],
            ctx: ctx.clone(),
        }
    }

    /// Asks the worker for what the chart needs (the comparison, or the maps at this size),
    /// unless it has it or a request is out.
    fn request(&mut self, size: egui::Vec2) {
        if self.busy() {
            return;
        }
        let maps = self.settings.chart == DiffChart::Maps;
        let current = if maps {
            // Maps are composed again only when the size changed by more than a few points.
            self.maps_of
                .as_ref()
                .is_some_and(|(m, at)| *m == self.settings.map && (*at - size).length() < 24.0)
        } else {
            self.report_of.as_ref() == Some(&self.settings.heap)
        };
        if current {
            return;
        }
        let (tx, rx) = bounded(1);
        let (a, b, settings, ctx) = (
            self.a.clone(),
            self.b.clone(),
            self.settings.clone(),
            self.ctx.clone(),
        );
        let spawned = std::thread::Builder::new()
            .name("memscape-diff".into())
            .spawn(move || {
                let reply = if maps {
                    Reply::Maps(
                        memscape_views::diff::compose::maps(&a, &b, &settings.map, size)
                            .map(Box::new)
                            .map_err(|e| format!("{e:#}")),
                    )
                } else {
                    Reply::Report(
                        memscape_views::diff::report(&a, &b, &settings.heap)
                            .map(Box::new)
                            .map_err(|e| format!("{e:#}")),
                    )
                };
                let _ = tx.send(reply);
                ctx.request_repaint();
            });
        match spawned {
            Ok(_) => {
                self.replies = Some(rx);
                if maps {
                    self.maps_of = Some((self.settings.map.clone(), size));
                } else {
                    self.report_of = Some(self.settings.heap.clone());
                }
            }
            Err(e) => self.report = Some(Err(format!("cannot start the comparison: {e}"))),
        }
    }

    fn poll(&mut self) {
        let Some(rx) = &self.replies else { return };
        if let Ok(reply) = rx.try_recv() {
            match reply {
                Reply::Report(r) => self.report = Some(r),
                Reply::Maps(m) => {
                    self.maps = Some(m.map(|m| PaneMaps {
                        cells: m.cells.into_iter().map(|(r, p)| (r, Arc::new(p))).collect(),
                        frame: Arc::new(m.frame),
                        runs: m.runs,
                    }));
                }
            }
            self.replies = None;
        }
    }

    fn busy(&self) -> bool {
        self.replies.is_some()
    }

    fn controls(&mut self, ui: &mut egui::Ui) {
        ui.horizontal_wrapped(|ui| {
            egui::ComboBox::from_id_salt("diff-chart")
                .selected_text(self.settings.chart.label())
                .show_ui(ui, |ui| {
                    for c in DiffChart::ALL {
                        ui.selectable_value(&mut self.settings.chart, c, c.label());
                    }
                });
            if self.settings.chart != DiffChart::Maps {
                let heap = &mut self.settings.heap;
                ui.separator();
                ui.label("time");
                ui.selectable_value(&mut heap.peak, false, "end")
                    .on_hover_text(
                        "each run at its end (massif: its peak snapshot; profiles: the last)",
                    );
                ui.selectable_value(&mut heap.peak, true, "peak")
                    .on_hover_text("each run at its own heap peak");
                ui.separator();
                let current = heap.group.0.first().copied().unwrap_or(GroupKey::Site);
                egui::ComboBox::from_id_salt("diff-group")
                    .selected_text(format!("by {}", current.name()))
                    .show_ui(ui, |ui| {
                        for key in [
                            GroupKey::Site,
                            GroupKey::Function,
                            GroupKey::Path,
                            GroupKey::Callers,
                            GroupKey::Module,
                            GroupKey::Thread,
                            GroupKey::Process,
                        ] {
                            if ui.selectable_label(current == key, key.name()).clicked() {
                                heap.group = GroupKeys(vec![key]);
                            }
                        }
                    });
                for (metric, name) in [(Metric::Bytes, "bytes"), (Metric::Objects, "blocks")] {
                    ui.selectable_value(&mut heap.metric, HeapMetric(metric), name);
                }
                crate::panes::wrap_before_slider(ui, 50.0);
                ui.add(egui::Slider::new(&mut heap.depth, 1..=8).text("levels"));
            }
            ui.separator();
            if ui
                .button("swap A and B")
                .on_hover_text("compare B with A instead")
                .clicked()
            {
                std::mem::swap(&mut self.a, &mut self.b);
                self.report_of = None;
                self.maps_of = None;
                self.report = None;
                self.maps = None;
            }
            if self.busy() {
                ui.spinner();
            }
        });
    }

    /// The largest changes, under the picture.
    fn table(report: &DiffReport, ui: &mut egui::Ui) {
        egui::CollapsingHeader::new(format!(
            "largest changes ({} grown, {} shrunk, {} new, {} gone)",
            report.totals.grown, report.totals.shrunk, report.totals.new, report.totals.gone
        ))
        .id_salt("diff-table")
        .show(ui, |ui| {
            egui::ScrollArea::vertical()
                .max_height(160.0)
                .show(ui, |ui| {
                    egui::Grid::new("diff-grid").striped(true).show(ui, |ui| {
                        for h in [
                            "status", "A bytes", "B bytes", "change", "A blocks", "B blocks",
                            "site",
                        ] {
                            ui.strong(h);
                        }
                        ui.end_row();
                        for s in report
                            .sites
                            .iter()
                            .filter(|s| s.status != Status::Same)
                            .take(50)
                        {
                            ui.label(s.status.name());
                            ui.monospace(s.bytes_a.to_string());
                            ui.monospace(s.bytes_b.to_string());
                            ui.monospace(format!("{:+}", s.bytes_change));
                            ui.monospace(s.objects_a.to_string());
                            ui.monospace(s.objects_b.to_string());
                            ui.label(s.path.join(" → "));
                            ui.end_row();
                        }
                    });
                });
        });
    }
}

impl View for DiffPane {
    fn title(&self) -> String {
        format!("{} vs {}", self.a.name, self.b.name)
    }

    fn ui(&mut self, ui: &mut egui::Ui, _cx: &ViewContext<'_>) {
        self.poll();
        self.controls(ui);
        let table_room = if self.settings.chart == DiffChart::Maps {
            0.0
        } else {
            30.0
        };
        let avail = ui.available_size() - egui::vec2(0.0, table_room);
        let size = egui::vec2(avail.x.max(200.0), avail.y.max(160.0));
        self.request(size);
        let (rect, response) = ui.allocate_exact_size(size, egui::Sense::hover());
        // Where the pointer is in the picture's points.
        let pointer = response.hover_pos().map(|p| p - rect.min.to_vec2());
        if self.settings.chart == DiffChart::Maps {
            match &self.maps {
                Some(Ok(maps)) => {
                    for (k, (cell, picture)) in maps.cells.iter().enumerate() {
                        let at = cell.translate(rect.min.to_vec2());
                        gpu::paint_picture(
                            ui,
                            &self.keys[k.min(1)],
                            at,
                            picture.clone(),
                            gpu::PaintOptions::default(),
                        );
                    }
                    gpu::paint_picture(
                        ui,
                        &self.keys[2],
                        rect,
                        maps.frame.clone(),
                        gpu::PaintOptions::default(),
                    );
                    if let Some(text) = pointer.and_then(|p| MapRun::hover_text(&maps.runs, p)) {
                        response.on_hover_ui_at_pointer(|ui| {
                            ui.label(text);
                        });
                    }
                }
                Some(Err(e)) => {
                    ui.put(
                        rect,
                        egui::Label::new(egui::RichText::new(e).color(egui::Color32::LIGHT_RED)),
                    );
                }
                None => {
                    ui.put(rect, egui::Spinner::new());
                }
            }
            return;
        }
        match &self.report {
            Some(Ok(report)) => {
                let (chart, depth) = (self.settings.chart, self.settings.heap.depth);
                gpu::paint(
                    ui,
                    &self.keys[0],
                    rect,
                    tree_picture(report, chart, depth, size),
                );
                if let Some(h) = pointer.and_then(|p| hover(report, chart, depth, size, p)) {
                    response.on_hover_ui_at_pointer(|ui| {
                        ui.label(h.text());
                    });
                }
                Self::table(report, ui);
            }
            Some(Err(e)) => {
                ui.put(
                    rect,
                    egui::Label::new(egui::RichText::new(e).color(egui::Color32::LIGHT_RED)),
                );
            }
            None => {
                ui.put(rect, egui::Spinner::new());
            }
        }
    }

    fn is_ready(&self) -> bool {
        !self.busy()
            && match self.settings.chart {
                DiffChart::Maps => self.maps.is_some(),
                _ => self.report.is_some(),
            }
    }
}
