//! The heap pane's controls: chart, grouping and metric, depth, the drill-down breadcrumb, the
//! time bar over the heap-size curve, and the leak suspects.

use std::time::Instant;

use egui::{Color32, Pos2, Sense};
use memscape_heap::{GroupKey, HeapTimeline, Metric};
use memscape_views::heap_tree::draw;
use memscape_views::heap_tree::model;
use memscape_views::heap_tree::settings::{Chart, GroupKeys, HeapMetric};

use super::{GROUPINGS, HeapTreePane};

impl HeapTreePane {
    pub(super) fn controls(&mut self, ui: &mut egui::Ui) {
        ui.horizontal_wrapped(|ui| {
            let chart = &mut self.settings.chart;
            ui.selectable_value(chart, Chart::Sunburst, "Sunburst");
            ui.selectable_value(chart, Chart::Icicle, "Icicle");
            ui.selectable_value(chart, Chart::Timeline, "Timeline");
            ui.separator();
            let is_trace = self.dataset.alloc_trace().is_some();
            let before = (self.grouping, self.settings.metric);
            if is_trace {
                egui::ComboBox::from_id_salt(("grouping", self.key.get()))
                    .selected_text(GROUPINGS[self.grouping].0)
                    .show_ui(ui, |ui| {
                        for (i, (name, _)) in GROUPINGS.iter().enumerate() {
                            ui.selectable_value(&mut self.grouping, i, *name);
                        }
                    });
                let metric = &mut self.settings.metric;
                ui.selectable_value(metric, HeapMetric(Metric::Bytes), "bytes");
                ui.selectable_value(metric, HeapMetric(Metric::Objects), "objects");
            }
            let measure_before = self.settings.measure.clone();
            self.measure_choice(ui);
            let process_before = self.settings.process.clone();
            self.process_choice(ui);
            if before != (self.grouping, self.settings.metric)
                || process_before != self.settings.process
                || measure_before != self.settings.measure
            {
                self.settings.group = GroupKeys(GROUPINGS[self.grouping].1.to_vec());
                self.restart(ui.ctx());
            }
            ui.separator();
            crate::panes::wrap_before_slider(ui, 50.0);
            ui.add(egui::Slider::new(&mut self.settings.depth, 1..=6).text("levels"));
        });
        // Breadcrumb of the drill-down path.
        if let Some(timeline) = &self.timeline {
            let mut pop_to = None;
            // A recording's root is its whole command line: each step shortened, in full on hover.
            let crumb = |ui: &mut egui::Ui, name: &str| {
                ui.link(crumb_text(draw::short_name(name)))
                    .on_hover_text(name)
                    .clicked()
            };
            ui.horizontal_wrapped(|ui| {
                if crumb(ui, timeline.trie.name(0)) {
                    pop_to = Some(0);
                }
                for (i, &node) in self.roots.iter().enumerate() {
                    ui.label(">");
                    if crumb(ui, timeline.trie.name(node)) {
                        pop_to = Some(i + 1);
                    }
                }
            });
            if let Some(n) = pop_to {
                self.roots.truncate(n);
            }
        }
    }

    /// Profiles with several measures (pprof's inuse and alloc space, DHAT's total, reads,
    /// never read, …): which one the tree shows.
    fn measure_choice(&mut self, ui: &mut egui::Ui) {
        let memscape_views::DatasetContent::HeapProfile(profile) = &self.dataset.content else {
            return;
        };
        let measures = profile.measures();
        if measures.len() < 2 {
            return;
        }
        let current = profile
            .measure(self.settings.measure.as_deref())
            .map(|m| m.name)
            .unwrap_or_default();
        egui::ComboBox::from_id_salt(("measure", self.key.get()))
            .selected_text(format!("measure: {current}"))
            .show_ui(ui, |ui| {
                for m in &measures {
                    let label = format!("{} ({})", m.name, m.unit);
                    if ui.selectable_label(m.name == current, label).clicked() {
                        self.settings.measure = Some(m.name.clone());
                    }
                }
            });
    }

    /// Which process's heap a multi-process recording shows: the largest peak's by default,
    /// one chosen, or all of them grouped by process.
    fn process_choice(&mut self, ui: &mut egui::Ui) {
        let Some(t) = self.dataset.alloc_trace() else {
            return;
        };
        let trace = &t.trace;
        if !memscape_views::processes::several(trace) {
            return;
        }
        let by_process = GROUPINGS[self.grouping].1.contains(&GroupKey::Process);
        let selected = match (&self.settings.process, by_process) {
            (_, true) => "all processes".to_owned(),
            (None, false) => "largest peak".to_owned(),
            (Some(p), false) => format!("process {p}"),
        };
        egui::ComboBox::from_id_salt(("process", self.key.get()))
            .selected_text(selected)
            .show_ui(ui, |ui| {
                if ui
                    .selectable_label(
                        !by_process && self.settings.process.is_none(),
                        "largest peak",
                    )
                    .clicked()
                {
                    self.settings.process = None;
                    if by_process {
                        self.grouping = 0;
                    }
                }
                if ui
                    .selectable_label(by_process, "all, grouped by process")
                    .clicked()
                {
                    self.settings.process = None;
                    self.grouping = GROUPINGS
                        .iter()
                        .position(|(_, keys)| keys.contains(&GroupKey::Process))
                        .unwrap_or(0);
                }
                for (i, p) in trace.processes.iter().enumerate() {
                    let pid = p.pid.to_string();
                    let on = !by_process && self.settings.process.as_deref() == Some(&pid);
                    let label = format!(
                        "{} · peak {} B",
                        memscape_views::processes::label(trace, i as u32),
                        p.peak_live_bytes
                    );
                    if ui.selectable_label(on, label).clicked() {
                        self.settings.process = Some(pid);
                        if by_process {
                            self.grouping = 0;
                        }
                    }
                }
            })
            .response
            .on_hover_text("whose heap: each process has its own");
    }

    pub(super) fn time_bar(&mut self, ui: &mut egui::Ui, timeline: &HeapTimeline) {
        let last = timeline.points.len().saturating_sub(1);
        ui.horizontal_wrapped(|ui| {
            if ui.button("|<").on_hover_text("first time point").clicked() {
                self.point = 0;
            }
            if ui.button("<").on_hover_text("step back").clicked() {
                self.point = self.point.saturating_sub(1);
            }
            let play = if self.playing { "pause" } else { "play" };
            if ui.button(play).on_hover_text("play / pause").clicked() {
                self.playing = !self.playing;
                if self.playing && self.point >= last {
                    self.point = 0;
                }
                self.last_step = Instant::now();
            }
            if ui.button(">").on_hover_text("step forward").clicked() {
                self.point = (self.point + 1).min(last);
            }
            if ui.button(">|").on_hover_text("last time point").clicked() {
                self.point = last;
            }
            if ui.button("peak").clicked() {
                self.point = timeline.peak_point;
            }
            if ui
                .button("+ timeline")
                .on_hover_text("add this time point to the Timeline's small multiples")
                .clicked()
                && !self.timeline_points.contains(&self.point)
            {
                self.timeline_points.push(self.point);
                self.timeline_points.sort_unstable();
            }
            if !self.timeline_points.is_empty()
                && ui
                    .button("clear timeline")
                    .on_hover_text("back to five evenly spaced time points")
                    .clicked()
            {
                self.timeline_points.clear();
            }
            let p = &self.shown_point(timeline);
            ui.label(format!(
                "{}   {} live",
                model::time_text(timeline, p.time),
                draw::human_bytes(p.total_bytes)
            ));
        });
        // The heap-size curve with the current time marked; click or drag to move in time.
        let (rect, response) = ui.allocate_exact_size(
            egui::vec2(ui.available_width(), 56.0),
            Sense::click_and_drag(),
        );
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 2.0, Color32::from_gray(24));
        let t0 = timeline.points.first().map_or(0, |p| p.time) as f64;
        let t1 = timeline.points.last().map_or(1, |p| p.time).max(1) as f64;
        let span = (t1 - t0).max(1.0);
        let max_b = timeline
            .series
            .iter()
            .map(|s| s.1)
            .max()
            .unwrap_or(1)
            .max(1) as f64;
        let x_of = |t: f64| rect.left() + ((t - t0) / span) as f32 * rect.width();
        let pts: Vec<Pos2> = timeline
            .series
            .iter()
            .map(|&(t, b)| {
                Pos2::new(
                    x_of(t as f64),
                    rect.bottom() - 3.0 - (b as f64 / max_b) as f32 * (rect.height() - 8.0),
                )
            })
            .collect();
        if pts.len() >= 2 {
            painter.add(egui::Shape::line(
                pts,
                egui::Stroke::new(1.5, Color32::from_rgb(110, 170, 230)),
            ));
        }
        for (i, p) in timeline.points.iter().enumerate() {
            if i % (timeline.points.len() / 60).max(1) == 0 {
                let x = x_of(p.time as f64);
                painter.line_segment(
                    [
                        Pos2::new(x, rect.bottom() - 3.0),
                        Pos2::new(x, rect.bottom()),
                    ],
                    egui::Stroke::new(1.0, Color32::from_gray(90)),
                );
            }
        }
        // The time points put on the timeline, as small markers on the curve's top edge.
        for &p in &self.timeline_points {
            if let Some(tp) = timeline.points.get(p) {
                let x = x_of(tp.time as f64);
                painter.circle_filled(
                    Pos2::new(x, rect.top() + 4.0),
                    3.5,
                    Color32::from_rgb(120, 200, 140),
                );
            }
        }
        let cur = x_of(self.shown_point(timeline).time as f64);
        painter.line_segment(
            [Pos2::new(cur, rect.top()), Pos2::new(cur, rect.bottom())],
            egui::Stroke::new(2.0, Color32::from_rgb(250, 200, 80)),
        );
        if let Some(pos) = response.interact_pointer_pos() {
            let t = t0 + f64::from((pos.x - rect.left()) / rect.width()) * span;
            self.point = timeline
                .points
                .iter()
                .enumerate()
                .min_by(|a, b| {
                    (a.1.time as f64 - t)
                        .abs()
                        .total_cmp(&(b.1.time as f64 - t).abs())
                })
                .map_or(0, |(i, _)| i);
            self.playing = false;
        }
        let mut point = self.point;
        ui.add(
            egui::Slider::new(&mut point, 0..=last)
                .show_value(false)
                .text("time point"),
        );
        if point != self.point {
            self.point = point;
            self.playing = false;
        }
    }

    pub(super) fn suspects(&mut self, ui: &mut egui::Ui, timeline: &HeapTimeline) {
        ui.heading("Leak suspects");
        ui.label(
            egui::RichText::new("groups that grew and kept what they grew, steepest first")
                .small()
                .weak(),
        );
        // The runtime's own never-freed blocks (glibc's thread control blocks, the loader's,
        // the C++ runtime's) are left out by default, as heaptrack and LeakSanitizer do.
        let sup = &timeline.suppressed;
        if sup.applied || self.show_suppressed {
            let text = if sup.applied {
                format!(
                    "suppressed: {} blocks ({})",
                    sup.blocks,
                    draw::human_bytes(sup.bytes)
                )
            } else {
                "suppressions off".to_owned()
            };
            let mut show = self.show_suppressed;
            ui.horizontal(|ui| {
                ui.label(egui::RichText::new(text).small());
                ui.checkbox(&mut show, "show").on_hover_text(
                    "blocks the C library, the dynamic loader and the C++ runtime keep \
                         until exit (thread control blocks, dlopen, locale, stdio buffers): \
                         no leak of the program, left out of the suspects by default",
                );
            })
            .response
            .on_hover_text(
                sup.by_rule
                    .iter()
                    .map(|r| format!("{}: {} blocks", r.rule, r.blocks))
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
            if show != self.show_suppressed {
                self.show_suppressed = show;
                self.restart(ui.ctx());
            }
        }
        // What a group gained over the run reads better than a slope per nanosecond or per
        // instruction.
        egui::ScrollArea::vertical().show(ui, |ui| {
            for s in timeline.suspects.iter().take(25) {
                let text = format!(
                    "{}\n  +{} over the run, {} at the end",
                    draw::short_name_at(&s.name),
                    draw::human_bytes(s.end_bytes.saturating_sub(s.start_bytes)),
                    draw::human_bytes(s.end_bytes)
                );
                let r = ui.selectable_label(self.highlight_group == Some(s.group), text);
                if r.clicked() {
                    // Drill so that the suspect is a child of the shown root.
                    let path = timeline.trie.path_to_root(s.group);
                    let path = path[1..path.len().saturating_sub(1).max(1)].to_vec();
                    self.roots = path;
                    self.highlight_group = Some(s.group);
                }
                r.on_hover_text(s.path.join(" › "));
            }
        });
    }
}

/// A breadcrumb step of at most [`CRUMB_CHARS`] characters, cut with an ellipsis.
fn crumb_text(name: &str) -> String {
    match name.char_indices().nth(CRUMB_CHARS) {
        Some((cut, _)) => format!("{}…", &name[..cut]),
        None => name.to_owned(),
    }
}

/// Long enough for a qualified C++ function, short enough for a pane's width.
const CRUMB_CHARS: usize = 48;
