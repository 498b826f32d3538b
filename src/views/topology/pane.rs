//! The samples pane: the radial topology coloured by cycles or samples (per level) with links
//! by transfers, beside the top offenders per source line and per data symbol. Samples are
//! mapped onto the topology (the hardware.xml beside them, else this machine) on a worker
//! thread.

use std::sync::Arc;

use crossbeam_channel::{Receiver, TryRecvError};
use egui::{Color32, Pos2, Rect, Sense};
use memscape_samples::{Aggregate, SamplesReport};
use memscape_topology::Topology;

use super::draw::{self, Measure, NodeValues};
use crate::data::{Dataset, DatasetContent};
use crate::views::labels;
use crate::views::picture::Picture;
use crate::views::shapes_paint::{self, ShapesCallback};
use crate::views::{View, ViewContext};

struct Mapped {
    topology: Topology,
    aggregate: Option<Aggregate>,
    report: Option<SamplesReport>,
}

pub struct TopologyPane {
    dataset: Arc<Dataset>,
    key: u64,
    job: Option<Receiver<Result<Arc<Mapped>, String>>>,
    mapped: Option<Arc<Mapped>>,
    error: Option<String>,
    measure: Measure,
    version: u64,
    /// What the uploaded shapes were built for (measure, hovered node, pane size).
    built_for: Option<(Measure, Option<u32>, [u32; 2])>,
}

impl TopologyPane {
    pub fn new(dataset: Arc<Dataset>, ctx: &egui::Context) -> Self {
        let (tx, rx) = crossbeam_channel::bounded(1);
        let worker_dataset = dataset.clone();
        let ctx = ctx.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("topology {}", dataset.name))
            .spawn(move || {
                let outcome = (|| match &worker_dataset.content {
                    DatasetContent::Topology(t) => Ok(Arc::new(Mapped {
                        topology: (**t).clone(),
                        aggregate: None,
                        report: None,
                    })),
                    DatasetContent::Samples(samples) => {
                        let path = std::path::Path::new(&worker_dataset.name);
                        let (topology, mapping, report) = super::map_samples(samples, path, None)
                            .map_err(|e| format!("{e:#}"))?;
                        let aggregate = mapping.aggregate(samples, None);
                        Ok(Arc::new(Mapped {
                            topology,
                            aggregate: Some(aggregate),
                            report: Some(report),
                        }))
                    }
                    _ => Err("needs samples or a topology".to_owned()),
                })();
                let _ = tx.send(outcome);
                ctx.request_repaint();
            });
        let mut pane = Self {
            dataset,
            key: crate::views::next_pane_key(),
            job: None,
            mapped: None,
            error: None,
            measure: Measure::Cycles,
            version: 0,
            built_for: None,
        };
        match spawned {
            Ok(_) => pane.job = Some(rx),
            Err(e) => pane.error = Some(format!("could not start the mapping thread: {e}")),
        }
        pane
    }
}

impl View for TopologyPane {
    fn title(&self) -> String {
        format!("Topology — {}", self.dataset.name)
    }

    fn tour_step(&self) -> Option<crate::tour::StepSpec> {
        Some(crate::tour::StepSpec {
            file: Some(crate::views::tour_file_of(&self.dataset)),
            view: Some("topology".to_owned()),
            measure: Some(
                match self.measure {
                    Measure::Samples => "samples",
                    Measure::Cycles => "cycles",
                }
                .to_owned(),
            ),
            ..Default::default()
        })
    }

    fn is_ready(&self) -> bool {
        self.mapped.is_some() || self.error.is_some()
    }

    fn ui(&mut self, ui: &mut egui::Ui, cx: &ViewContext<'_>) {
        if let Some(rx) = &self.job {
            match rx.try_recv() {
                Ok(Ok(m)) => {
                    self.mapped = Some(m);
                    self.job = None;
                }
                Ok(Err(e)) => {
                    self.error = Some(e);
                    self.job = None;
                }
                Err(TryRecvError::Empty) => {
                    ui.horizontal(|ui| {
                        ui.spinner();
                        ui.label("mapping samples onto the topology…");
                    });
                }
                Err(TryRecvError::Disconnected) => self.job = None,
            }
        }
        if let Some(e) = &self.error {
            ui.colored_label(Color32::LIGHT_RED, e);
        }
        let Some(mapped) = self.mapped.clone() else {
            return;
        };
        ui.horizontal(|ui| {
            ui.label("colour by");
            ui.selectable_value(&mut self.measure, Measure::Cycles, "cycles");
            ui.selectable_value(&mut self.measure, Measure::Samples, "samples");
            ui.label(format!("topology: {}", mapped.topology.source()));
        });
        let (rect, response) = ui.allocate_exact_size(ui.available_size(), Sense::hover());
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
        let with_offenders = mapped.report.is_some() && rect.width() > 700.0;
        let radial_rect = if with_offenders {
            Rect::from_min_size(local.min, egui::vec2(local.width() * 0.55, local.height()))
        } else {
            local
        };
        let values = mapped.aggregate.as_ref().map(|a| NodeValues {
            samples: &a.samples,
            cycles: &a.cycles,
            transfers: &a.transfers,
        });
        // Hover: the resource under the pointer, by polar position.
        let hovered = response.hover_pos().and_then(|pos| {
            let p = pos - rect.min.to_vec2();
            let area = radial_rect.shrink(8.0);
            let c = area.center();
            let radius = 0.5 * area.width().min(area.height()) - 6.0;
            let depth = mapped
                .topology
                .nodes()
                .iter()
                .map(|n| n.depth)
                .max()
                .unwrap_or(0);
            let ring = radius / (depth as f32 + 1.0);
            let d = p - c;
            let level = (d.length() / ring).floor() as u32;
            let angle =
                (d.y.atan2(d.x) + std::f32::consts::FRAC_PI_2).rem_euclid(std::f32::consts::TAU);
            let leaves: Vec<&memscape_topology::Node> = mapped
                .topology
                .nodes()
                .iter()
                .filter(|n| n.children.is_empty())
                .collect();
            let leaf = (angle / std::f32::consts::TAU * leaves.len() as f32) as usize;
            // The leaves in tree order are the depth-first order; walk up to the level.
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
            walk(&mapped.topology, mapped.topology.root().id, &mut order);
            let mut id = *order.get(leaf)?;
            while mapped.topology.node(id)?.depth > level {
                id = mapped.topology.node(id)?.parent?;
            }
            (mapped.topology.node(id)?.depth == level).then_some(id)
        });
        let mut picture: Picture = draw::radial(
            &mapped.topology,
            values.as_ref(),
            self.measure,
            radial_rect.shrink(8.0),
            hovered,
        );
        if let (true, Some(report)) = (with_offenders, &mapped.report) {
            let x = local.width() * 0.55;
            let w = local.width() - x;
            picture.extend(draw::offenders(
                "total latency per source line",
                &report.top_lines,
                Rect::from_min_size(Pos2::new(x, 0.0), egui::vec2(w, local.height() * 0.5))
                    .shrink(6.0),
            ));
            picture.extend(draw::offenders(
                "total latency per data symbol",
                &report.top_symbols,
                Rect::from_min_size(
                    Pos2::new(x, local.height() * 0.5),
                    egui::vec2(w, local.height() * 0.5),
                )
                .shrink(6.0),
            ));
        }
        let inputs = (
            self.measure,
            hovered,
            [rect.width() as u32, rect.height() as u32],
        );
        if self.built_for != Some(inputs) {
            self.version = self.version.wrapping_add(1);
            self.built_for = Some(inputs);
        }
        if cx.render_state.is_some() {
            shapes_paint::paint(
                ui,
                ShapesCallback {
                    key: self.key,
                    version: self.version,
                    shapes: Arc::new(picture.shapes.iter().map(|s| s.gpu()).collect()),
                    view: memscape_render::shapes::ShapesView::IDENTITY,
                    rect,
                },
            );
        }
        labels::paint(&ui.painter_at(rect), rect.min, &picture.labels);
        if let Some(id) = hovered {
            let name = draw::resource_name(&mapped.topology, id);
            let text = match &mapped.aggregate {
                Some(a) => format!(
                    "{name}\n{} samples · {} cycles · {} transfers to the parent",
                    a.samples.get(id as usize).copied().unwrap_or(0),
                    a.cycles.get(id as usize).copied().unwrap_or(0),
                    a.transfers.get(id as usize).copied().unwrap_or(0)
                ),
                None => name,
            };
            response.on_hover_ui_at_pointer(|ui| {
                ui.label(text);
            });
        }
    }
}
