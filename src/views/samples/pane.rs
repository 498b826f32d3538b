//! The histograms pane: parallel histograms (drag on an axis to brush a range; brushes on
//! several axes combine with "and"; click an axis to clear its brush; double-click to open it
//! as the single histogram; drag a title to move its axis; the "axes" menu hides and orders
//! them) or the
//! single-attribute histogram, the selection panel, the window-score strips and the cluster
//! markers (hover: the cluster's topology glyph; click: select its samples everywhere; shift:
//! add them). Brushes and picks go to the dataset's linked selection, so the topology and the
//! offenders follow.

use std::sync::Arc;

use egui::{Color32, Pos2, Rect, Sense};
use memscape_samples::metrics::{ClusterParams, ClusterTree, Metric, WindowScore};
use memscape_samples::{
    AttrKind, AxisBrush, Brush, LinkedIndex, LinkedResult, Picked, SelectionSpec,
};
use memscape_topology::ResourceKind;

use super::draw::{self, AxisInput, ClusterMark, Drawn, Scale};
use super::shared::{SamplesShared, StripKey, cluster_attributes, default_axes, samples_of};
use crate::data::Dataset;
use crate::views::labels;
use crate::views::shapes_paint::{self, ShapesCallback};
use crate::views::topology::draw::NodeValues;
use crate::views::{View, ViewContext};

/// Parallel or single.
#[derive(Debug, Clone, PartialEq)]
pub enum Layout {
    /// These axes, in this order.
    Parallel(Vec<usize>),
    Single(usize),
}

/// Cluster markers along one axis.
pub struct MarkerSet {
    pub axis: usize,
    pub marks: Vec<ClusterMark>,
}

/// What a histograms picture shows besides the data: shared by the pane and `memscape render`.
pub struct HistogramSpec<'a> {
    pub layout: &'a Layout,
    pub scale: Scale,
    /// Window-score strips by axis.
    pub strips: &'a [(usize, Arc<Vec<WindowScore>>)],
    pub markers: Option<&'a MarkerSet>,
    pub hovered_marker: Option<usize>,
}

/// The histograms of `result` (the linked selection `spec`) inside `rect`.
pub fn histograms(
    index: &LinkedIndex,
    result: &LinkedResult,
    spec: &SelectionSpec,
    hs: &HistogramSpec<'_>,
    rect: Rect,
) -> Drawn {
    let input = |a: usize| -> Option<AxisInput<'_>> {
        let axis = index.axes.get(a)?;
        let markers = hs.markers.filter(|m| m.axis == a);
        Some(AxisInput {
            index: a,
            axis,
            selected: (!result.everything)
                .then(|| result.selected_bins.get(a).map(Vec::as_slice))
                .flatten(),
            brush: spec.brush(a),
            strip: hs
                .strips
                .iter()
                .find(|(s, _)| *s == a)
                .map(|(_, v)| v.as_slice()),
            markers: markers.map(|m| m.marks.as_slice()),
            hovered_marker: markers.and(hs.hovered_marker),
        })
    };
    match hs.layout {
        Layout::Parallel(axes) => {
            let inputs: Vec<AxisInput<'_>> = axes.iter().filter_map(|&a| input(a)).collect();
            draw::parallel(&inputs, rect, hs.scale)
        }
        Layout::Single(a) => match input(*a) {
            Some(i) => draw::single(&i, rect, hs.scale),
            None => Drawn::default(),
        },
    }
}

/// The markers of a tree cut into `k` clusters.
pub fn marks_of(tree: &ClusterTree, k: usize) -> Vec<ClusterMark> {
    tree.cut(k)
        .into_iter()
        .map(|n| ClusterMark {
            range: n.range,
            samples: n.samples,
            metric: n.metric,
        })
        .collect()
}

/// `attribute lo … hi`, the end as an offset from the start for long values (time stamps).
pub fn span_text(attribute: &str, lo: f64, hi: f64) -> String {
    let short = memscape_samples::linked::short;
    let end = if lo != 0.0 && (hi - lo).abs() < 1e-3 * lo.abs() {
        format!("+{}", short(hi - lo))
    } else {
        short(hi)
    };
    format!("{attribute} {} … {end}", short(lo))
}

/// A glyph's title (two lines): the cluster's range, then its size and score.
pub fn glyph_title(tree: &ClusterTree, mark: &ClusterMark) -> String {
    format!(
        "{}\n{} samples · {} {} {:.3}",
        span_text(&tree.params.attribute, mark.range[0], mark.range[1]),
        mark.samples,
        tree.params.kind,
        match tree.params.metric {
            Metric::Latency => "latency",
            Metric::Imbalance => "imbalance",
        },
        mark.metric
    )
}

/// Height of the parallel view's axis titles (a drag there moves the axis).
const TITLE_ZONE: f32 = 36.0;

struct ClusterUi {
    enabled: bool,
    axis: Option<usize>,
    window: usize,
    step: usize,
    clusters: usize,
}

pub struct HistogramsPane {
    dataset: Arc<Dataset>,
    shared: Arc<SamplesShared>,
    key: crate::views::PaneKey,
    layout: Option<Layout>,
    /// Axis order of the parallel layout (including hidden ones) and which are shown.
    order: Vec<usize>,
    shown: Vec<bool>,
    scale: Scale,
    strips: bool,
    windows: usize,
    metric: Metric,
    kind: ResourceKind,
    clusters: ClusterUi,
    /// A brush being dragged: the axis and where the drag started along it.
    drag: Option<(usize, f32)>,
    /// An axis being moved by its title (parallel layout).
    moving: Option<usize>,
    /// Geometry of the last frame (hit testing).
    last: Option<Drawn>,
    last_shapes: Vec<memscape_render::shapes::Shape>,
    version: u64,
    /// The hovered marker's glyph values (cluster index, aggregate) for the current tree.
    glyph: Option<(usize, Arc<memscape_samples::Aggregate>)>,
    glyph_tree: Option<usize>,
    ready: bool,
}

impl HistogramsPane {
    pub fn new(dataset: Arc<Dataset>, ctx: &egui::Context) -> Self {
        let shared = SamplesShared::of(&dataset, ctx);
        Self {
            dataset,
            shared,
            key: crate::views::PaneKey::new(),
            layout: None,
            order: Vec::new(),
            shown: Vec::new(),
            scale: Scale::Linear,
            strips: true,
            windows: 24,
            metric: Metric::Imbalance,
            kind: ResourceKind::Pu,
            clusters: ClusterUi {
                enabled: true,
                axis: None,
                window: 1000,
                step: 250,
                clusters: 8,
            },
            drag: None,
            moving: None,
            last: None,
            last_shapes: Vec::new(),
            version: 0,
            glyph: None,
            glyph_tree: None,
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
                        .range(super::shared::BIN_RANGE)
                        .suffix(" bins"),
                )
                .on_hover_text("bins of every quantitative axis, in every samples view")
                .changed();
            if changed {
                self.shared.set_bins(bins);
            }
            ui.label("bars");
            ui.selectable_value(&mut self.scale, Scale::Linear, "linear");
            ui.selectable_value(&mut self.scale, Scale::Log, "log");
            ui.separator();
            ui.checkbox(&mut self.strips, "strips")
                .on_hover_text("the metric per window along every axis");
            ui.add(
                egui::DragValue::new(&mut self.windows)
                    .range(2..=200)
                    .prefix("N "),
            );
            egui::ComboBox::from_id_salt(("hist-metric", self.key.get()))
                .selected_text(match self.metric {
                    Metric::Latency => "latency",
                    Metric::Imbalance => "imbalance",
                })
                .show_ui(ui, |ui| {
                    ui.selectable_value(&mut self.metric, Metric::Latency, "latency L_d");
                    ui.selectable_value(&mut self.metric, Metric::Imbalance, "imbalance I_d");
                });
            egui::ComboBox::from_id_salt(("hist-depth", self.key.get()))
                .selected_text(self.kind.as_str())
                .show_ui(ui, |ui| {
                    for &k in kinds {
                        ui.selectable_value(&mut self.kind, k, k.as_str());
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
                egui::DragValue::new(&mut self.clusters.window)
                    .range(2..=1_000_000)
                    .prefix("w "),
            )
            .on_hover_text("samples per window");
            self.clusters.step = self.clusters.step.clamp(1, self.clusters.window);
            ui.add(
                egui::DragValue::new(&mut self.clusters.step)
                    .range(1..=self.clusters.window)
                    .prefix("Δ "),
            )
            .on_hover_text("samples between window starts");
            ui.add(
                egui::DragValue::new(&mut self.clusters.clusters)
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

    fn tour_step(&self) -> Option<crate::tour::StepSpec> {
        let mut step = crate::tour::StepSpec {
            file: Some(crate::views::tour_file_of(&self.dataset)),
            view: Some("histograms".to_owned()),
            ..Default::default()
        };
        self.shared.selection_into_step(&mut step);
        let bins = self.shared.bins();
        step.histogram_bins = (bins != super::shared::QUANTITATIVE_BINS).then_some(bins);
        Some(step)
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
        let Some(base) = self.shared.base_or_status(
            ui,
            "mapping samples and binning every attribute…",
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
            if !base.topology.nodes_of_kind(self.kind).any(|_| true) {
                self.kind = base
                    .topology
                    .kind_counts()
                    .last()
                    .map_or(self.kind, |k| k.0);
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
        let shown: Vec<usize> = match &layout {
            Layout::Parallel(a) => a.clone(),
            Layout::Single(a) => vec![*a],
        };
        let mut waiting = false;
        let mut strips: Vec<(usize, Arc<Vec<WindowScore>>)> = Vec::new();
        let mut problems: Vec<String> = Vec::new();
        if self.strips {
            for &a in &shown {
                let key = StripKey {
                    axis: a,
                    windows: self.windows,
                    metric: self.metric,
                    kind: self.kind,
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
                metric: self.metric,
                kind: self.kind,
                window: self.clusters.window,
                step: self.clusters.step,
            };
            match self.shared.tree(&params) {
                Some(Ok(t)) => tree = Some(t),
                Some(Err(e)) => problems.push(e),
                None => waiting = true,
            }
        }
        if waiting || result_version != version || !problems.is_empty() {
            ui.horizontal(|ui| {
                if waiting || result_version != version {
                    ui.spinner();
                    ui.label("computing in the background…");
                }
                for p in problems.iter().take(1) {
                    ui.colored_label(Color32::LIGHT_RED, p);
                }
            });
        }
        let marker_set = tree.as_ref().map(|t| MarkerSet {
            axis: self.clusters.axis.unwrap_or(0),
            marks: marks_of(t, self.clusters.clusters),
        });
        let (rect, response) = ui.allocate_exact_size(ui.available_size(), Sense::click_and_drag());
        ui.painter().rect_filled(
            rect,
            0.0,
            Color32::from_rgb(
                draw::BACKGROUND[0],
                draw::BACKGROUND[1],
                draw::BACKGROUND[2],
            ),
        );
        let local = Rect::from_min_size(Pos2::ZERO, rect.size());
        let pointer = response.hover_pos().map(|p| p - rect.min.to_vec2());
        let hovered_marker = pointer
            .and_then(|p| self.last.as_ref().and_then(|d| d.marker_at(p)))
            .filter(|m| Some(m.axis) == self.clusters.axis);
        let hs = HistogramSpec {
            layout: &layout,
            scale: self.scale,
            strips: &strips,
            markers: marker_set.as_ref(),
            hovered_marker: hovered_marker.map(|m| m.cluster),
        };
        let mut drawn = histograms(index, &result, &spec, &hs, local.shrink(6.0));
        // The hovered cluster's glyph.
        let tree_id = tree.as_ref().map(|t| Arc::as_ptr(t) as usize);
        if self.glyph_tree != tree_id {
            self.glyph = None;
            self.glyph_tree = tree_id;
        }
        if let (Some(m), Some(t), Some(set)) = (hovered_marker, &tree, &marker_set)
            && let Some(node) = t.cut(self.clusters.clusters).get(m.cluster).copied()
            && let Some(mark) = set.marks.get(m.cluster)
        {
            let agg = match &self.glyph {
                Some((c, agg)) if *c == m.cluster => agg.clone(),
                _ => {
                    let range = node.positions[0] as usize..node.positions[1] as usize;
                    let agg = Arc::new(base.mapping.aggregate_order(samples, &t.order, range));
                    self.glyph = Some((m.cluster, agg.clone()));
                    agg
                }
            };
            let values = NodeValues {
                samples: &agg.samples,
                cycles: &agg.cycles,
                transfers: &agg.transfers,
            };
            let glyph = draw::glyph(
                &base.topology,
                &values,
                &glyph_title(t, mark),
                m.center,
                local,
            );
            // Histogram labels under the glyph's box would show through it.
            if let Some(first) = glyph.shapes.first()
                && let memscape_render::shapes::Geometry::Rect { min, max, .. } = first.geometry
            {
                let r = Rect::from_min_max(Pos2::new(min[0], min[1]), Pos2::new(max[0], max[1]));
                drawn.picture.labels.retain(|l| !r.contains(l.pos));
            }
            drawn.picture.extend(glyph);
        }
        if self.last_shapes != drawn.picture.shapes {
            self.version = self.version.wrapping_add(1);
            self.last_shapes = drawn.picture.shapes.clone();
        }
        if cx.render_state.is_some() {
            shapes_paint::paint(
                ui,
                ShapesCallback {
                    key: self.key.get(),
                    version: self.version,
                    shapes: Arc::new(drawn.picture.shapes.iter().map(|s| s.gpu()).collect()),
                    view: memscape_render::shapes::ShapesView::IDENTITY,
                    rect,
                },
            );
        }
        labels::paint(&ui.painter_at(rect), rect.min, &drawn.picture.labels);
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
                if let Some(node) = t.cut(self.clusters.clusters).get(m.cluster).copied() {
                    let these = t.selection(node, samples.len());
                    let label = format!(
                        "cluster {}",
                        span_text(&t.params.attribute, node.range[0], node.range[1])
                    );
                    let add = ui.input(|i| i.modifiers.shift);
                    self.shared.update(|s| {
                        s.picked = Some(match (&s.picked, add) {
                            (Some(old), true) => Picked {
                                label: format!("({} or {label})", old.label),
                                samples: Arc::new(old.samples.union(&these)),
                            },
                            _ => Picked {
                                label,
                                samples: Arc::new(these),
                            },
                        });
                    });
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
        self.ready = result_version == version && !waiting;
    }
}
