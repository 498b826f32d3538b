//! The graph pane: one snapshot of an IGV/DOT document, laid out in the background, with pan
//! (drag), zoom (wheel, about the pointer), fit (double click), a snapshot slider, filter
//! profiles, differences from the previous snapshot and node properties on hover.

use std::sync::Arc;
use std::time::Instant;

use crossbeam_channel::{Receiver, TryRecvError};
use egui::{Color32, Pos2, Rect, Sense};
use memscape_render::shapes::ShapesView;

use super::draw;
use super::model::{self, LaidOut};
use crate::data::{Dataset, DatasetContent};
use crate::views::labels;
use crate::views::shapes_paint::{self, ShapesCallback};
use crate::views::{View, ViewContext};

type Job = (Receiver<Result<Arc<LaidOut>, String>>, Instant);

pub struct GraphPane {
    dataset: Arc<Dataset>,
    key: u64,
    snapshot: usize,
    profile: Option<&'static str>,
    diff: bool,
    job: Option<Job>,
    /// What `laid` was made for.
    laid_for: Option<(usize, Option<&'static str>, bool)>,
    laid: Option<Arc<LaidOut>>,
    error: Option<String>,
    /// World → points inside the pane; None: fit on the next frame.
    camera: Option<ShapesView>,
    version: u64,
    shapes: Arc<Vec<memscape_render::shapes::ShapeGpu>>,
    shapes_for: Option<(usize, Option<usize>)>,
    /// The layout shown before the current one, and when the move from it started.
    previous: Option<Arc<LaidOut>>,
    transition_start: Instant,
}

impl GraphPane {
    pub fn new(dataset: Arc<Dataset>) -> Self {
        Self {
            dataset,
            key: crate::views::next_pane_key(),
            snapshot: 0,
            profile: None,
            diff: false,
            job: None,
            laid_for: None,
            laid: None,
            error: None,
            camera: None,
            version: 0,
            shapes: Arc::new(Vec::new()),
            shapes_for: None,
            previous: None,
            transition_start: Instant::now(),
        }
    }

    fn snapshot_count(&self) -> usize {
        match &self.dataset.content {
            DatasetContent::Graphs(g) => g.document.snapshots().len(),
            _ => 0,
        }
    }

    fn start(&mut self, ctx: &egui::Context) {
        let want = (self.snapshot, self.profile, self.diff);
        if self.laid_for == Some(want) || self.job.is_some() {
            return;
        }
        let (tx, rx) = crossbeam_channel::bounded(1);
        let dataset = self.dataset.clone();
        let ctx = ctx.clone();
        let previous = self.laid.as_ref().map(|l| {
            memscape_graph::layout::PreviousPositions::from_layout(&l.view_graph.graph, &l.layout)
        });
        let spawned = std::thread::Builder::new()
            .name(format!("graph layout {}", dataset.name))
            .spawn(move || {
                let outcome = (|| {
                    let DatasetContent::Graphs(g) = &dataset.content else {
                        return Err("not a graph document".to_owned());
                    };
                    let profile = want.1.and_then(memscape_graph::filter::Profile::shipped);
                    let diff_from = (want.2 && want.0 > 0).then(|| want.0 - 1);
                    model::lay_out_near(
                        &g.document,
                        want.0,
                        profile.as_ref(),
                        diff_from,
                        previous.as_ref(),
                    )
                    .map(Arc::new)
                    .map_err(|e| format!("{e:#}"))
                })();
                let _ = tx.send(outcome);
                ctx.request_repaint();
            });
        match spawned {
            Ok(_) => {
                self.job = Some((rx, Instant::now()));
                self.laid_for = Some(want);
            }
            Err(e) => self.error = Some(format!("could not start the layout thread: {e}")),
        }
    }

    fn poll(&mut self) {
        let Some((rx, _)) = &self.job else {
            return;
        };
        match rx.try_recv() {
            Ok(Ok(laid)) => {
                let keep_camera = self.laid.is_some();
                self.previous = self.laid.take();
                self.transition_start = Instant::now();
                self.laid = Some(laid);
                self.shapes_for = None;
                if !keep_camera {
                    self.camera = None;
                }
                self.error = None;
                self.job = None;
            }
            Ok(Err(e)) => {
                self.error = Some(e);
                self.job = None;
            }
            Err(TryRecvError::Empty) => {}
            Err(TryRecvError::Disconnected) => self.job = None,
        }
    }
}

impl View for GraphPane {
    fn title(&self) -> String {
        format!("Graph — {}", self.dataset.name)
    }

    fn tour_step(&self) -> Option<crate::tour::StepSpec> {
        Some(crate::tour::StepSpec {
            file: Some(crate::views::tour_file_of(&self.dataset)),
            view: Some("graph".to_owned()),
            snapshot: Some(self.snapshot as u64),
            profile: self.profile.map(str::to_owned),
            diff_from: (self.diff && self.snapshot > 0).then(|| self.snapshot - 1),
            ..Default::default()
        })
    }

    fn is_ready(&self) -> bool {
        self.laid.is_some() || self.error.is_some()
    }

    fn ui(&mut self, ui: &mut egui::Ui, cx: &ViewContext<'_>) {
        self.poll();
        let count = self.snapshot_count();
        ui.horizontal_wrapped(|ui| {
            if count > 1 {
                ui.add(egui::Slider::new(&mut self.snapshot, 0..=count - 1).text("snapshot"));
                ui.checkbox(&mut self.diff, "differences from the previous");
            }
            egui::ComboBox::from_id_salt(("graph-profile", self.key))
                .selected_text(format!("filter: {}", self.profile.unwrap_or("none")))
                .show_ui(ui, |ui| {
                    ui.selectable_value(&mut self.profile, None, "none");
                    for (name, _) in memscape_graph::filter::SHIPPED_PROFILES {
                        ui.selectable_value(&mut self.profile, Some(name), name);
                    }
                });
            if ui.button("fit").clicked() {
                self.camera = None;
            }
            if let Some((_, started)) = &self.job {
                ui.spinner();
                ui.label(format!(
                    "laying out… {:.1} s",
                    started.elapsed().as_secs_f32()
                ));
            }
            if let Some(l) = &self.laid {
                ui.label(format!(
                    "{} · {} nodes · {} edges · {} crossings",
                    l.title,
                    l.view_graph.graph.nodes.len(),
                    l.view_graph.graph.edges.len(),
                    l.layout.crossings
                ));
            }
        });
        self.start(ui.ctx());
        if let Some(e) = &self.error {
            ui.colored_label(Color32::LIGHT_RED, e);
        }
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
        let Some(laid) = self.laid.clone() else {
            return;
        };
        let mut camera = self.camera.unwrap_or_else(|| {
            ShapesView::fit(
                [0.0, 0.0],
                [
                    laid.layout.width.max(1.0) as f32,
                    laid.layout.height.max(1.0) as f32,
                ],
                rect.width(),
                rect.height(),
                16.0,
                true,
            )
        });
        if response.dragged() {
            let d = response.drag_delta();
            camera.offset[0] += d.x;
            camera.offset[1] += d.y;
        }
        if response.double_clicked() {
            self.camera = None;
            ui.ctx().request_repaint();
        }
        if let Some(pos) = response.hover_pos() {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            if scroll != 0.0 {
                let factor = (scroll * 0.004).exp();
                let p = pos - rect.min.to_vec2();
                let world = camera.to_world([p.x, p.y]);
                camera.scale = [camera.scale[0] * factor, camera.scale[1] * factor];
                let now = camera.to_pixels(world);
                camera.offset[0] += p.x - now[0];
                camera.offset[1] += p.y - now[1];
            }
        }
        if !response.double_clicked() {
            self.camera = Some(camera);
        }
        // Hover: the node under the pointer.
        let hovered = response.hover_pos().and_then(|pos| {
            let p = pos - rect.min.to_vec2();
            let w = camera.to_world([p.x, p.y]);
            laid.layout.nodes.iter().position(|n| {
                f64::from(w[0]) >= n.x
                    && f64::from(w[0]) <= n.x + n.w
                    && f64::from(w[1]) >= n.y
                    && f64::from(w[1]) <= n.y + n.h
            })
        });
        let identity = Arc::as_ptr(&laid) as usize;
        let t = (self.transition_start.elapsed().as_secs_f32() / 0.45).min(1.0);
        let moving = t < 1.0 && self.previous.is_some();
        if moving {
            ui.ctx().request_repaint();
        }
        if moving || self.shapes_for != Some((identity, hovered)) {
            // While moving between snapshots, nodes glide from their old boxes (matched by id).
            let layout = match (&self.previous, moving) {
                (Some(prev), true) => draw::interpolated_layout(prev, &laid, t),
                _ => laid.layout.clone(),
            };
            let shapes = draw::shapes(
                &laid.view_graph,
                &layout,
                &laid.node_colors,
                &laid.edge_colors,
                hovered,
            );
            self.shapes = Arc::new(shapes.iter().map(|s| s.gpu()).collect());
            self.version = self.version.wrapping_add(1);
            self.shapes_for = if moving {
                None
            } else {
                Some((identity, hovered))
            };
        }
        if cx.render_state.is_some() {
            shapes_paint::paint(
                ui,
                ShapesCallback {
                    key: self.key,
                    version: self.version,
                    shapes: self.shapes.clone(),
                    view: camera,
                    rect,
                },
            );
        }
        let local = Rect::from_min_size(Pos2::ZERO, rect.size());
        let text = draw::labels(
            &laid.view_graph,
            &laid.layout,
            &camera,
            local,
            &laid.node_colors,
        );
        labels::paint(&ui.painter_at(rect), rect.min, &text);
        if let Some(i) = hovered
            && let Some(node) = laid.view_graph.graph.nodes.get(i)
        {
            let mut lines = vec![format!("id {}", node.id)];
            lines.extend(
                node.properties
                    .iter()
                    .take(24)
                    .map(|(k, v)| format!("{k} = {v}")),
            );
            if let Some(style) = laid.view_graph.nodes.get(i)
                && !style.merged.is_empty()
            {
                lines.push(format!("merged: {}", style.merged.join(", ")));
            }
            response.on_hover_ui_at_pointer(|ui| {
                ui.label(lines.join("\n"));
            });
        }
    }
}
