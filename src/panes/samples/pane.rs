//! The histograms pane: parallel histograms (drag on an axis to brush a range; brushes on
//! several axes combine with "and"; click an axis to clear its brush; double-click to open it
//! as the single histogram; drag a title to move its axis; the "axes" menu hides and orders
//! them) or the
//! single-attribute histogram, the selection panel, the window-score strips and the cluster
//! markers (hover: the cluster's topology glyph; click: select its samples everywhere; shift:
//! add them). Brushes and picks go to the dataset's linked selection, so the topology and the
//! offenders follow.

use std::sync::Arc;

use egui::{Color32, Pos2, Sense};
use memscape_samples::metrics::{ClusterParams, ClusterTree, Metric, WindowScore};
use memscape_samples::{
    AttrKind, AxisBrush, Brush, LinkedIndex, LinkedResult, Picked, SelectionSpec,
};
use memscape_topology::ResourceKind;
use memscape_views::gpu::PaneKey;
use memscape_views::samples::compose::{HistogramInputs, cluster_aggregate, histogram_picture};
use memscape_views::samples::histograms::{Layout, span_text};
use memscape_views::samples::histograms_draw::{self as draw, Drawn, Scale};
use memscape_views::samples::settings::{SamplesChart, SamplesSettings};
use memscape_views::samples::shared::{
    SamplesShared, StripKey, cluster_attributes, default_axes, samples_of,
};
use memscape_views::tour::{Step, tour_file_of};
use memscape_views::{Dataset, ViewSettings};

use crate::panes::{View, ViewContext};

/// Height of the parallel view's axis titles (a drag there moves the axis).
const TITLE_ZONE: f32 = 36.0;

/// Cluster markers on or off, and along which axis.
struct ClusterUi {
    enabled: bool,
    axis: Option<usize>,
}

pub struct HistogramsPane {
    dataset: Arc<Dataset>,
    shared: Arc<SamplesShared>,
    key: PaneKey,
    /// The bars, strips' windows, cluster metric, depth, window, step and K (the layout, the
    /// cluster axis and the selection are written into them when a tour step is recorded).
    settings: SamplesSettings,
    layout: Option<Layout>,
    /// Axis order of the parallel layout (including hidden ones) and which are shown.
    order: Vec<usize>,
    shown: Vec<bool>,
    /// Strips shown (their windows: `settings.strips`).
    strips_on: bool,
    clusters: ClusterUi,
    /// A brush being dragged: the axis and where the drag started along it.
    drag: Option<(usize, f32)>,
    /// An axis being moved by its title (parallel layout).
    moving: Option<usize>,
    /// Geometry of the last frame (hit testing), and where its picture's origin was.
    last: Option<Drawn>,
    last_origin: Pos2,
    /// The hovered marker's glyph values (cluster index, aggregate) for the current tree.
    glyph: Option<(usize, Arc<memscape_samples::Aggregate>)>,
    glyph_tree: Option<usize>,
    /// The last frame's hovered glyph was being asked of the query engine (its tree keeps no
    /// per-segment totals), or the error it gave: said in the next frame's status line.
    glyph_query: Option<Result<(), String>>,
    ready: bool,
}

impl HistogramsPane {
    pub fn new(dataset: Arc<Dataset>, ctx: &egui::Context) -> Self {
        let shared = SamplesShared::of(&dataset, &crate::panes::repaint_of(ctx));
        Self {
            dataset,
            shared,
            key: PaneKey::new(),
            settings: SamplesSettings {
                chart: SamplesChart::Histograms,
                strips: 24,
                cluster_metric: memscape_views::samples::settings::ScoreMetric(Metric::Imbalance),
                cluster_depth: memscape_views::samples::settings::Depth(ResourceKind::Pu),
                ..SamplesSettings::default()
            },
            layout: None,
            order: Vec::new(),
            shown: Vec::new(),
            strips_on: true,
            clusters: ClusterUi {
                enabled: true,
                axis: None,
            },
            drag: None,
            moving: None,
            last: None,
            last_origin: Pos2::ZERO,
            glyph: None,
            glyph_tree: None,
            glyph_query: None,
            ready: false,
        }
    }

    fn parallel_axes(&self) -> Vec<usize> {
        self.order
            .iter()
            .copied()
            .filter(|&a| self.shown.get(a).copied().unwrap_or(false))
            .collect()
    }

    fn controls(&mut self, ui: &mut egui::Ui, index: &LinkedIndex, kinds: &[ResourceKind]) {
        let name = |a: usize| {
            index
                .axes
                .get(a)
                .map_or_else(String::new, |x| x.attribute.clone())
        };
        ui.horizontal_wrapped(|ui| {
            let single = matches!(self.layout, Some(Layout::Single(_)));
            if ui.selectable_label(!single, "parallel").clicked() {
                self.layout = Some(Layout::Parallel(self.parallel_axes()));
            }
            let current = match self.layout {
                Some(Layout::Single(a)) => a,
                _ => self.clusters.axis.unwrap_or(0),
            };
            if ui.selectable_label(single, "single").clicked() {
                self.layout = Some(Layout::Single(current));
            }
            if matches!(self.layout, Some(Layout::Single(_))) {
                let mut a = current;
                egui::ComboBox::from_id_salt(("hist-attr", self.key.get()))
                    .selected_text(name(a))
                    .show_ui(ui, |ui| {
                        for k in 0..index.axes.len() {
                            ui.selectable_value(&mut a, k, name(k));
                        }
                    });
                self.layout = Some(Layout::Single(a));
            } else {
                ui.menu_button("axes…", |ui| {
                    let mut swap = None;
                    for (pos, &a) in self.order.iter().enumerate() {
                        ui.horizontal(|ui| {
                            if let Some(s) = self.shown.get_mut(a) {
                                ui.checkbox(s, name(a));
                            }
                            if ui.small_button("▲").clicked() && pos > 0 {
                                swap = Some((pos, pos - 1));
                            }
                            if ui.small_button("▼").clicked() && pos + 1 < self.order.len() {
                                swap = Some((pos, pos + 1));
                            }
                        });
                    }
                    if let Some((x, y)) = swap {
                        self.order.swap(x, y);
                    }
                });
                self.layout = Some(Layout::Parallel(self.parallel_axes()));
            }
            ui.separator();
            let mut bins = self.shared.bins();
            let changed = ui
                .add(
                    egui::DragValue::new(&mut bins)
                        .range(memscape_views::samples::shared::BIN_RANGE)
                        .suffix(" bins"),
                )
                .on_hover_text("bins of every quantitative axis, in every samples view")
                .changed();
            if changed {
                self.shared.set_bins(bins);
            }
            ui.label("bars");
            ui.selectable_value(&mut self.settings.bars, Scale::Linear, "linear");
            ui.selectable_value(&mut self.settings.bars, Scale::Log, "log");
            ui.separator();
            ui.checkbox(&mut self.strips_on, "strips")
                .on_hover_text("the metric per window along every axis");
            ui.add(
                egui::DragValue::new(&mut self.settings.strips)
                    .range(2..=200)
                    .prefix("N "),
            );
            egui::ComboBox::from_id_salt(("hist-metric", self.key.get()))
                .selected_text(match self.settings.cluster_metric.0 {
                    Metric::Latency => "latency",
                    Metric::Imbalance => "imbalance",
                })
                .show_ui(ui, |ui| {
                    ui.selectable_value(
                        &mut self.settings.cluster_metric.0,
                        Metric::Latency,
                        "latency L_d",
                    );
                    ui.selectable_value(
                        &mut self.settings.cluster_metric.0,
                        Metric::Imbalance,
                        "imbalance I_d",
                    );
                });
            egui::ComboBox::from_id_salt(("hist-depth", self.key.get()))
                .selected_text(self.settings.cluster_depth.0.as_str())
                .show_ui(ui, |ui| {
                    for &k in kinds {
                        ui.selectable_value(&mut self.settings.cluster_depth.0, k, k.as_str());
                    }
                });
            ui.separator();
            ui.checkbox(&mut self.clusters.enabled, "clusters along");
            let candidates = cluster_attributes(index);
            let mut along = self
                .clusters
                .axis
                .or_else(|| candidates.first().copied())
                .unwrap_or(0);
            egui::ComboBox::from_id_salt(("hist-cluster", self.key.get()))
                .selected_text(name(along))
                .show_ui(ui, |ui| {
                    for &k in &candidates {
                        ui.selectable_value(&mut along, k, name(k));
                    }
                });
            self.clusters.axis = Some(along);
            ui.add(
                egui::DragValue::new(&mut self.settings.cluster_window)
                    .range(2..=1_000_000)
                    .prefix("w "),
            )
            .on_hover_text("samples per window");
            self.settings.cluster_step = self
                .settings
                .cluster_step
                .clamp(1, self.settings.cluster_window);
            ui.add(
                egui::DragValue::new(&mut self.settings.cluster_step)
                    .range(1..=self.settings.cluster_window)
                    .prefix("Δ "),
            )
            .on_hover_text("samples between window starts");
            ui.add(
                egui::DragValue::new(&mut self.settings.clusters)
                    .range(1..=64)
                    .prefix("K "),
            )
            .on_hover_text("tree level: the cut into K clusters");
        });
    }

    fn selection_panel(
        &mut self,
        ui: &mut egui::Ui,
        index: &LinkedIndex,
        result: &LinkedResult,
        spec: &SelectionSpec,
    ) {
        ui.horizontal_wrapped(|ui| {
            let [what, count, latency] = draw::panel_lines(&result.summary, &spec.describe(index));
            ui.strong(what);
            ui.label(count);
            ui.label(latency);
            if !spec.is_everything() {
                for b in &spec.brushes {
                    let name = index.axes.get(b.axis).map_or("?", |a| a.attribute.as_str());
                    if ui.small_button(format!("× {name}")).clicked() {
                        self.shared.update(|s| s.clear_brush(b.axis));
                    }
                }
                if spec.picked.is_some() && ui.small_button("× picked").clicked() {
                    self.shared.update(|s| s.picked = None);
                }
                if ui.button("clear all").clicked() {
                    self.shared.update(|s| *s = SelectionSpec::default());
                }
            }
        });
    }
}

impl View for HistogramsPane {
    fn title(&self) -> String {
        format!("Histograms — {}", self.dataset.name)
    }

    fn picture(&self) -> Option<std::sync::Arc<memscape_views::Picture>> {
        self.key.last_picture()
    }

    fn tour_step(&self) -> Option<Step> {
        let mut settings = self.settings.clone();
        if !self.strips_on {
            settings.strips = 0;
        }
        self.shared.selection_into(&mut settings);
        if let Some(Ok(base)) = self.shared.base() {
            let name = |a: usize| base.index.axes.get(a).map(|x| x.attribute.clone());
            match &self.layout {
                Some(Layout::Single(a)) => {
                    settings.chart = SamplesChart::Histogram;
                    settings.histogram_attribute = name(*a);
                }
                _ => {
                    settings.axes = self.parallel_axes().into_iter().filter_map(name).collect();
                }
            }
            settings.cluster_attribute = self
                .clusters
                .axis
                .filter(|_| self.clusters.enabled)
                .and_then(name);
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
        let dataset = self.dataset.clone();
        let Some(samples) = samples_of(&dataset) else {
            ui.colored_label(Color32::LIGHT_RED, "needs memory-access samples");
            self.ready = true;
            return;
        };
        super::topology_menu(ui, &dataset, &self.shared, cx.topologies);
        let Some(base) = super::base_or_status(
            &self.shared,
            ui,
            match self.shared.engine() {
                Some(_) => "querying the engine for the bins of every attribute…",
                None => "mapping samples and binning every attribute…",
            },
            &mut self.ready,
        ) else {
            return;
        };
        let index = &base.index;
        if self.order.is_empty() {
            self.order = (0..index.axes.len()).collect();
            self.shown = vec![false; index.axes.len()];
            for a in default_axes(index) {
                self.shown[a] = true;
            }
            self.clusters.axis = index
                .axis("time")
                .filter(|&a| index.axes[a].kind == AttrKind::Quantitative)
                .or_else(|| cluster_attributes(index).first().copied());
            if !base
                .topology
                .nodes_of_kind(self.settings.cluster_depth.0)
                .any(|_| true)
            {
                self.settings.cluster_depth.0 = base
                    .topology
                    .kind_counts()
                    .last()
                    .map_or(self.settings.cluster_depth.0, |k| k.0);
            }
        }
        let Some((result, result_version)) = self.shared.result() else {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("computing the selection…");
            });
            return;
        };
        // Just re-binned: the selection's per-bin counts are being redone for the new bins.
        let same_bins = result.selected_bins.len() == index.axes.len()
            && result
                .selected_bins
                .iter()
                .zip(&index.axes)
                .all(|(s, a)| s.len() == a.bins.len());
        if !same_bins {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(format!("binning into {} bins…", self.shared.bins()));
            });
            ui.ctx().request_repaint();
            return;
        }
        let (spec, version) = self.shared.spec();
        let kinds: Vec<ResourceKind> = base
            .topology
            .kind_counts()
            .into_iter()
            .map(|(k, _)| k)
            .filter(|k| *k != ResourceKind::Machine)
            .collect();
        self.controls(ui, index, &kinds);
        self.selection_panel(ui, index, &result, &spec);
        let layout = self
            .layout
            .clone()
            .unwrap_or_else(|| Layout::Parallel(self.parallel_axes()));
        // Strips of the shown axes and the cluster tree, from the background worker.
        let shown = layout.axes();
        let mut waiting = false;
        let mut strips: Vec<(usize, Arc<Vec<WindowScore>>)> = Vec::new();
        let mut problems: Vec<String> = Vec::new();
        if self.strips_on {
            for &a in &shown {
                let key = StripKey {
                    axis: a,
                    windows: self.settings.strips,
                    metric: self.settings.cluster_metric.0,
                    kind: self.settings.cluster_depth.0,
                };
                match self.shared.strip(&key) {
                    Some(Ok(s)) => strips.push((a, s)),
                    Some(Err(e)) => problems.push(e),
                    None => waiting = true,
                }
            }
        }
        let mut tree: Option<Arc<ClusterTree>> = None;
        if self.clusters.enabled
            && let Some(a) = self.clusters.axis
            && let Some(axis) = index.axes.get(a)
        {
            let params = ClusterParams {
                attribute: axis.attribute.clone(),
                metric: self.settings.cluster_metric.0,
                kind: self.settings.cluster_depth.0,
                window: self.settings.cluster_window,
                step: self.settings.cluster_step,
            };
            match self.shared.tree(&params) {
                Some(Ok(t)) => tree = Some(t),
                Some(Err(e)) => problems.push(e),
                None => waiting = true,
            }
        }
        // A dataset's numbers come from the query engine: said above the picture (its
        // corners hold axes and bars) and in its provenance.
        let engine = self.shared.computed_by();
        let from_head = self.shared.computed_from_head();
        // The status row is always there, one line high, so that the picture neither moves
        // when a recomputation starts nor differs in size between a file and a dataset.
        ui.horizontal(|ui| {
            ui.allocate_space(egui::vec2(0.0, ui.spacing().interact_size.y));
            if waiting || result_version != version {
                ui.spinner();
                ui.label("computing in the background…");
            }
            match &self.glyph_query {
                Some(Ok(())) => {
                    ui.spinner();
                    ui.label("querying the hovered cluster's glyph…");
                }
                Some(Err(e)) => {
                    ui.colored_label(Color32::LIGHT_RED, format!("cluster glyph: {e}"));
                }
                None => {}
            }
            if let Some(engine) = &engine {
                ui.weak(format!("computed by the query engine ({engine})"));
            }
            if let Some(e) = from_head {
                ui.colored_label(Color32::YELLOW, super::head_note(e));
            }
            for p in problems.iter().take(1) {
                ui.colored_label(Color32::LIGHT_RED, p);
            }
        });
        let (rect, response) = ui.allocate_exact_size(ui.available_size(), Sense::click_and_drag());
        let pointer = response.hover_pos().map(|p| p - rect.min.to_vec2());
        let hovered_marker = pointer
            .and_then(|p| self.last.as_ref().and_then(|d| d.marker_at(p)))
            .filter(|m| Some(m.axis) == self.clusters.axis);
        // The hovered cluster's glyph values (kept while the tree and the cluster stay).
        let tree_id = tree.as_ref().map(|t| Arc::as_ptr(t) as usize);
        if self.glyph_tree != tree_id {
            self.glyph = None;
            self.glyph_tree = tree_id;
        }
        let asked_before = self.glyph_query.take();
        if let (Some(m), Some(t)) = (hovered_marker, &tree)
            && self.glyph.as_ref().is_none_or(|(c, _)| *c != m.cluster)
        {
            self.glyph = cluster_aggregate(samples, &base, t, self.settings.clusters, m.cluster)
                .map(|agg| (m.cluster, Arc::new(agg)));
            // An engine's tree past its budget of per-segment totals: the glyph is a query of
            // the cluster's span, answered off the UI thread and shown when it lands.
            if self.glyph.is_none()
                && t.keyed.is_none()
                && t.order.is_empty()
                && let Some(node) = t.cut(self.settings.clusters).get(m.cluster).copied()
            {
                match self.shared.glyph(&t.span(node)) {
                    Some(Ok(agg)) => self.glyph = Some((m.cluster, agg)),
                    Some(Err(e)) => self.glyph_query = Some(Err(e)),
                    None => self.glyph_query = Some(Ok(())),
                }
            }
        }
        if asked_before.is_some() != self.glyph_query.is_some() {
            // The status line above shows it from the next frame on.
            ui.ctx().request_repaint();
        }
        let glyph = hovered_marker
            .and_then(|m| self.glyph.as_ref().filter(|(c, _)| *c == m.cluster))
            .map(|(c, agg)| (*c, agg.as_ref()));
        let (mut picture, drawn) = histogram_picture(
            &base,
            &spec,
            &result,
            &HistogramInputs {
                layout: &layout,
                scale: self.settings.bars,
                strips: &strips,
                tree: tree
                    .as_ref()
                    .map(|t| (self.clusters.axis.unwrap_or(0), t.as_ref())),
                clusters: self.settings.clusters,
                glyph,
                legend: &[],
            },
            rect.size(),
            false,
        );
        if let Some(engine) = &engine {
            memscape_views::picture::engine_provenance(&mut picture, engine);
        }
        memscape_views::gpu::paint(ui, &self.key, rect, picture);
        let _ = cx;
        // Interaction, against this frame's geometry.
        let local_of = |p: Pos2| p - rect.min.to_vec2();
        // Where the button went down (drags start a few pixels later).
        let press = ui.input(|i| i.pointer.press_origin());
        if response.drag_started()
            && let Some(p) = press.or(response.interact_pointer_pos()).map(local_of)
            && let Some(g) = drawn.axis_at(p)
        {
            // A drag from an axis' title moves the axis; anywhere else on it, it brushes.
            if matches!(layout, Layout::Parallel(_)) && p.y < g.area.top() + TITLE_ZONE {
                self.moving = Some(g.axis);
            } else {
                self.drag = Some((g.axis, g.along_of(p)));
            }
        }
        if let Some(moving) = self.moving
            && let Some(p) = response.interact_pointer_pos()
        {
            let x = p.x.clamp(rect.left(), rect.right());
            ui.painter().vline(
                x,
                rect.y_range(),
                egui::Stroke::new(2.0, Color32::from_rgb(243, 168, 58)),
            );
            if response.drag_stopped()
                && let Some(target) = drawn
                    .axes
                    .iter()
                    .find(|g| g.area.x_range().contains(local_of(p).x))
                    .map(|g| g.axis)
                && target != moving
                && let Some(to) = self.order.iter().position(|&a| a == target)
            {
                self.order.retain(|&a| a != moving);
                let to = to.min(self.order.len());
                self.order.insert(to, moving);
                self.layout = Some(Layout::Parallel(self.parallel_axes()));
            }
        }
        if let Some((axis, a0)) = self.drag
            && let Some(g) = drawn.axes.iter().find(|g| g.axis == axis)
            && let Some(p) = response.interact_pointer_pos().map(local_of)
        {
            let a1 = g.along_of(p);
            if (a1 - a0).abs() > 2.0 {
                let mut brush = g.brush_between(a0, a1);
                // Integer attributes: the integers inside the range (same samples, tidy bounds).
                if let Brush::Range { lo, hi } = &mut brush
                    && index.axes.get(axis).is_some_and(|a| {
                        matches!(
                            samples.columns.get(a.column).map(|c| &c.data),
                            Some(memscape_samples::ColumnData::U64(_))
                        )
                    })
                {
                    *lo = lo.ceil();
                    *hi = hi.floor().max(*lo);
                }
                self.shared
                    .update(|s| s.set_brush(AxisBrush { axis, brush }));
            }
        }
        if response.drag_stopped() {
            self.drag = None;
            self.moving = None;
        }
        if response.double_clicked()
            && let Some(p) = response.interact_pointer_pos().map(local_of)
            && let Some(g) = drawn.axis_at(p)
            && matches!(layout, Layout::Parallel(_))
        {
            self.layout = Some(Layout::Single(g.axis));
        } else if response.clicked()
            && let Some(p) = response.interact_pointer_pos().map(local_of)
        {
            if let (Some(m), Some(t)) = (drawn.marker_at(p), &tree) {
                if let Some(node) = t.cut(self.settings.clusters).get(m.cluster).copied() {
                    let label = format!(
                        "cluster {}",
                        span_text(&t.params.attribute, node.range[0], node.range[1])
                    );
                    let add = ui.input(|i| i.modifiers.shift);
                    match Picked::cluster(samples, t, node, label) {
                        Ok(these) => self.shared.update(|s| {
                            s.picked = Some(match (&s.picked, add) {
                                (Some(old), true) => {
                                    let label = format!("({} or {})", old.label, these.label);
                                    old.or(&these, label)
                                }
                                _ => these,
                            });
                        }),
                        Err(e) => tracing::error!("picking a cluster: {e}"),
                    }
                }
            } else if let Some(g) = drawn.axis_at(p) {
                let axis = g.axis;
                self.shared.update(|s| s.clear_brush(axis));
            }
        }
        if hovered_marker.is_none()
            && self.drag.is_none()
            && self.moving.is_none()
            && let Some(p) = pointer
            && let Some(g) = drawn.axis_at(p)
            && let Some(axis) = index.axes.get(g.axis)
        {
            let sel = (!result.everything)
                .then(|| result.selected_bins.get(g.axis).map(Vec::as_slice))
                .flatten();
            response.on_hover_text_at_pointer(format!(
                "{}\ndrag: select a range · click: clear it · double-click: single histogram · drag the title: move the axis",
                g.describe_at(p, axis, sel)
            ));
        }
        self.last = Some(drawn);
        self.last_origin = rect.min;
        self.ready = result_version == version && !waiting;
    }
}

#[cfg(all(test, feature = "engine"))]
impl HistogramsPane {
    /// Where the last frame drew each cluster marker, in the window (tests hover them).
    pub fn marker_centres(&self) -> Vec<Pos2> {
        self.last.as_ref().map_or_else(Vec::new, |d| {
            d.markers
                .iter()
                .map(|m| m.center + self.last_origin.to_vec2())
                .collect()
        })
    }
}
