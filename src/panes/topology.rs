//! The samples pane: the radial topology coloured by cycles or samples (per level) with links
//! by transfers, beside the top offenders per source line and per data symbol, and the source
//! pane of the top (or clicked) line. Everything shows the dataset's linked selection
//! (`views::samples::shared`): the topology's colours and values are the selection's, each
//! offender bar shows its selected part over the whole; clicking a bar selects its samples
//! everywhere (shift: add to the picked samples, ctrl: keep only those also in it).

use std::sync::Arc;

use egui::{Color32, Pos2, Rect, Sense};
use memscape_samples::{OffenderKey, Picked, SelectionSpec};
use memscape_topology::Topology;
use memscape_views::gpu::PaneKey;
use memscape_views::samples::compose::{
    bare_area, bare_topology_picture, topology_pane_areas, topology_pane_picture,
};
use memscape_views::samples::settings::{SamplesChart, SamplesSettings};
use memscape_views::samples::shared::{SamplesShared, samples_of};
use memscape_views::samples::topology_draw::{self as draw, Measure};
use memscape_views::tour::{Step, tour_file_of};
use memscape_views::{Dataset, DatasetContent, Picture, ViewSettings};

use crate::panes::samples::source::SourceView;
use crate::panes::{View, ViewContext};

enum Content {
    /// A topology file alone.
    Bare(Box<Topology>),
    Samples(Arc<SamplesShared>),
    Unsupported,
}

pub struct TopologyPane {
    dataset: Arc<Dataset>,
    key: PaneKey,
    content: Content,
    measure: Measure,
    /// The source line the user clicked last (shown in the source pane), if any.
    clicked_line: Option<String>,
    source: Option<SourceView>,
    show_source: bool,
    ready: bool,
}

impl TopologyPane {
    pub fn new(dataset: Arc<Dataset>, ctx: &egui::Context) -> Self {
        let content = match &dataset.content {
            DatasetContent::Topology(t) => Content::Bare(t.clone()),
            DatasetContent::Samples(_) => {
                Content::Samples(SamplesShared::of(&dataset, &crate::panes::repaint_of(ctx)))
            }
            _ => Content::Unsupported,
        };
        Self {
            dataset,
            key: PaneKey::new(),
            content,
            measure: Measure::Cycles,
            clicked_line: None,
            source: None,
            show_source: true,
            ready: false,
        }
    }

    fn paint(&self, ui: &egui::Ui, rect: Rect, picture: Picture) {
        memscape_views::gpu::paint(ui, &self.key, rect, picture);
    }
}

/// The resource under `p` (pane-local) in the radial drawn inside `area`.
fn hovered_resource(topology: &Topology, area: Rect, p: Pos2) -> Option<u32> {
    let c = area.center();
    let radius = 0.5 * area.width().min(area.height()) - 6.0;
    let depth = topology.nodes().iter().map(|n| n.depth).max().unwrap_or(0);
    let ring = radius / (depth as f32 + 1.0);
    let d = p - c;
    let level = (d.length() / ring).floor() as u32;
    let angle = (d.y.atan2(d.x) + std::f32::consts::FRAC_PI_2).rem_euclid(std::f32::consts::TAU);
    // The leaves in depth-first order; walk up from the one under the angle to the level.
    let mut order = Vec::new();
    fn walk(t: &Topology, id: u32, out: &mut Vec<u32>) {
        if let Some(n) = t.node(id) {
            if n.children.is_empty() {
                out.push(id);
            }
            for &c in &n.children {
                walk(t, c, out);
            }
        }
    }
    walk(topology, topology.root().id, &mut order);
    let leaf = (angle / std::f32::consts::TAU * order.len() as f32) as usize;
    let mut id = *order.get(leaf)?;
    while topology.node(id)?.depth > level {
        id = topology.node(id)?.parent?;
    }
    (topology.node(id)?.depth == level).then_some(id)
}

impl View for TopologyPane {
    fn title(&self) -> String {
        format!("Topology — {}", self.dataset.name)
    }

    fn picture(&self) -> Option<std::sync::Arc<memscape_views::Picture>> {
        self.key.last_picture()
    }

    fn tour_step(&self) -> Option<Step> {
        let mut settings = SamplesSettings {
            chart: SamplesChart::Topology,
            measure: self.measure,
            ..SamplesSettings::default()
        };
        // The linked selection colours the topology too.
        if let Content::Samples(shared) = &self.content {
            shared.selection_into(&mut settings);
        }
        Some(Step::new(
            tour_file_of(&self.dataset),
            ViewSettings::Samples(settings),
        ))
    }

    fn is_ready(&self) -> bool {
        self.ready
    }

    fn ui(&mut self, ui: &mut egui::Ui, cx: &ViewContext<'_>) {
        let shared = match &self.content {
            Content::Unsupported => {
                ui.colored_label(Color32::LIGHT_RED, "needs samples or a topology");
                self.ready = true;
                return;
            }
            Content::Bare(topology) => {
                let topology = topology.clone();
                ui.label(format!("topology: {}", topology.source()));
                let (rect, response) = ui.allocate_exact_size(ui.available_size(), Sense::hover());
                let area = bare_area(rect.size());
                let hovered = response
                    .hover_pos()
                    .and_then(|pos| hovered_resource(&topology, area, pos - rect.min.to_vec2()));
                let picture = bare_topology_picture(&topology, self.measure, hovered, rect.size());
                self.paint(ui, rect, picture);
                if let Some(id) = hovered {
                    response.on_hover_text_at_pointer(draw::resource_name(&topology, id));
                }
                self.ready = true;
                return;
            }
            Content::Samples(shared) => shared.clone(),
        };
        let dataset = self.dataset.clone();
        let Some(samples) = samples_of(&dataset) else {
            return;
        };
        crate::panes::samples::topology_menu(ui, &dataset, &shared, cx.topologies);
        let Some(base) = crate::panes::samples::base_or_status(
            &shared,
            ui,
            match shared.engine() {
                Some(_) => "querying the engine for the samples per resource…",
                None => "mapping samples onto the topology…",
            },
            &mut self.ready,
        ) else {
            return;
        };
        let Some((result, result_version)) = shared.result() else {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("aggregating…");
            });
            return;
        };
        let (spec, version) = shared.spec();
        ui.horizontal_wrapped(|ui| {
            ui.label("colour by");
            ui.selectable_value(&mut self.measure, Measure::Cycles, "cycles");
            ui.selectable_value(&mut self.measure, Measure::Samples, "samples");
            ui.separator();
            ui.checkbox(&mut self.show_source, "source");
            ui.separator();
            let s = &result.summary;
            if result.everything {
                ui.label(format!("all {} samples", s.samples));
            } else {
                ui.label(format!(
                    "selection: {} — {} samples ({:.1} %)",
                    spec.describe(&base.index),
                    s.samples,
                    s.share * 100.0
                ));
                if ui.button("clear").clicked() {
                    shared.update(|s| *s = SelectionSpec::default());
                    self.clicked_line = None;
                }
            }
            if result_version != version {
                ui.spinner();
            }
            ui.weak(format!("topology: {}", base.topology.source()));
            if let Some(engine) = shared.computed_by() {
                ui.weak(format!("· computed by the query engine ({engine})"));
            }
            if let Some(e) = shared.computed_from_head() {
                ui.colored_label(egui::Color32::YELLOW, crate::panes::samples::head_note(e));
            }
        });
        // The source pane: the clicked line, else the selection's top line.
        let target = self
            .clicked_line
            .clone()
            .or_else(|| result.top_lines.first().map(|o| o.name.clone()));
        if self.source.as_ref().map(|s| &s.name) != target.as_ref() {
            self.source = target.and_then(|name| {
                let file = memscape_samples_file(&name);
                let marked = result
                    .top_lines
                    .iter()
                    .filter_map(|o| memscape_views::samples::source::split_source_line(&o.name))
                    .filter(|(f, _)| Some(*f) == file)
                    .map(|(_, l)| l)
                    .collect();
                SourceView::open(std::path::Path::new(&self.dataset.name), &name, marked)
            });
        }
        if self.show_source
            && let Some(source) = &mut self.source
        {
            egui::Panel::bottom(("samples-source", self.key.get()))
                .resizable(true)
                .default_size(ui.available_height() * 0.35)
                .show(ui, |ui| source.ui(ui));
        }
        let (rect, response) = ui.allocate_exact_size(ui.available_size(), Sense::click());
        let (radial_area, charts) = topology_pane_areas(rect.size());
        let agg = &result.aggregate;
        let pointer = response.hover_pos().map(|p| p - rect.min.to_vec2());
        // The disc inside the area (its per-level legend beside or under it).
        let disc =
            memscape_views::samples::topology_draw::radial_areas(&base.topology, true, radial_area)
                .0;
        let hovered = pointer.and_then(|p| hovered_resource(&base.topology, disc, p));
        let (mut picture, _, _) =
            topology_pane_picture(&base, &result, self.measure, hovered, rect.size());
        // Said in the header line above (the picture's corners hold the charts).
        if let Some(engine) = shared.computed_by() {
            memscape_views::picture::engine_provenance(&mut picture, &engine);
        }
        self.paint(ui, rect, picture);
        // Clicks on offender bars.
        let offender_at = |p: Pos2| -> Option<(OffenderKey, usize)> {
            let charts = charts?;
            for (key, chart, n) in [
                (OffenderKey::SourceLine, charts[0], base.lines.len()),
                (OffenderKey::Symbol, charts[1], base.symbols.len()),
            ] {
                for i in 0..n {
                    if draw::offender_row(i, n, chart).is_some_and(|r| r.contains(p)) {
                        return Some((key, i));
                    }
                }
            }
            None
        };
        if response.clicked()
            && let Some(p) = response
                .interact_pointer_pos()
                .map(|p| p - rect.min.to_vec2())
            && let Some((key, i)) = offender_at(p)
        {
            let (name, kind) = match key {
                OffenderKey::SourceLine => (&base.lines[i].name, "line"),
                OffenderKey::Symbol => (&base.symbols[i].name, "symbol"),
            };
            let label = format!("{kind} {name}");
            // By name: a query engine selects the bar's samples by it too.
            let these = Picked::offender(samples, key, name, label.clone());
            let modifiers = ui.input(|i| i.modifiers);
            shared.update(|s| {
                s.picked = Some(match (&s.picked, modifiers.shift, modifiers.command) {
                    (Some(old), true, _) => old.or(&these, format!("({} or {label})", old.label)),
                    (Some(old), _, true) => old.and(&these, format!("({} and {label})", old.label)),
                    _ => these,
                });
            });
            if key == OffenderKey::SourceLine {
                self.clicked_line = Some(name.clone());
            }
        }
        if let Some(id) = hovered {
            let name = draw::resource_name(&base.topology, id);
            let get = |v: &[u64]| v.get(id as usize).copied().unwrap_or(0);
            let scope = if result.everything {
                "all samples"
            } else {
                "selection"
            };
            let text = format!(
                "{name} ({scope})\n{} samples · {} cycles · {} transfers to the parent",
                get(&agg.samples),
                get(&agg.cycles),
                get(&agg.transfers)
            );
            response.on_hover_text_at_pointer(text);
        } else if let Some((key, i)) = pointer.and_then(offender_at) {
            let row = match key {
                OffenderKey::SourceLine => &base.lines[i],
                OffenderKey::Symbol => &base.symbols[i],
            };
            response.on_hover_text_at_pointer(format!(
                "{}\n{} samples · {} cycles in all\nclick: select · shift: add · ctrl: intersect",
                row.name, row.samples, row.cycles
            ));
        }
        self.ready = result_version == version;
    }
}

fn memscape_samples_file(name: &str) -> Option<&str> {
    memscape_views::samples::source::split_source_line(name).map(|(f, _)| f)
}
