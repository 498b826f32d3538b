//! What the pointer and keys do to the allocation map: drag the context view's frame, zoom
//! about the pointer (shift: time only, ctrl: addresses only), +/− and arrows, Home, a
//! shift-drag box to zoom into, plain drag to pan, double-click to fit, and clicks that pin a
//! block (and set the linked time) or drop and remove cushion cursors.

use memscape_trace::Trace;
use memscape_views::alloc_map::bins::BinnedScene;
use memscape_views::alloc_map::camera::{Camera, axis_time_of_events, events_at};
use memscape_views::alloc_map::compose::CURSOR_WIDTH;
use memscape_views::alloc_map::decorate::context_frame_rect;

use super::AllocMapPane;

/// The map cells and context view of this frame, in screen points.
pub(super) struct Areas<'a> {
    pub maps: &'a [egui::Rect],
    pub context: Option<egui::Rect>,
    pub hovered_cell: Option<usize>,
    pub t_extent: u64,
}

impl AllocMapPane {
    /// The wheel over the stacked occupancy bar (or its bin names) scrolls through the bins
    /// when they do not all fit: one bin per notch, the `stacked_from` setting.
    pub(super) fn scroll_stacked(
        &mut self,
        ui: &egui::Ui,
        response: &egui::Response,
        over: egui::Rect,
        height: f32,
        full_height: f32,
    ) {
        let Some(bars) = &self.bar else {
            return;
        };
        if !response.hover_pos().is_some_and(|p| over.contains(p)) {
            return;
        }
        let window = memscape_views::alloc_map::stacked::stacked_window(
            &bars.bands,
            self.settings.stacked_from.saturating_sub(1) as usize,
            height,
            full_height,
        );
        if !window.scrolls() {
            return;
        }
        self.stacked_wheel += ui.input(|i| i.smooth_scroll_delta.y);
        let step = memscape_views::alloc_map::layout::STACKED_PER_BIN;
        let bins = (self.stacked_wheel / step).trunc();
        if bins != 0.0 {
            self.stacked_wheel -= bins * step;
            // Wheel down (negative delta) shows the next bins.
            let now =
                (self.settings.stacked_from.saturating_sub(1) as usize).min(window.last_first);
            let first = (now as i64 - bins as i64).clamp(0, window.last_first as i64);
            self.settings.stacked_from = first as u32 + 1;
        }
        response.clone().on_hover_text(format!(
            "{}: the wheel scrolls through the bins",
            window.caption()
        ));
    }

    /// Moves `cam` (now) and `target` (where it animates to) as the user asks.
    pub(super) fn interact(
        &mut self,
        ui: &egui::Ui,
        response: &egui::Response,
        areas: &Areas<'_>,
        cam: &mut Camera,
        target: &mut Camera,
    ) {
        let t_extent = areas.t_extent;
        if let Some(ctx_rect) = areas.context {
            self.context_view(ui, ctx_rect, t_extent, cam, target);
        }
        let maps = areas.maps;
        let pointer = response.hover_pos();
        // Zoom around the pointer (shift: time only, ctrl: addresses only); animated.
        if let (Some(pos), Some(k)) = (pointer, areas.hovered_cell) {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            if scroll != 0.0 {
                let factor = (-f64::from(scroll) * 0.002).exp();
                let (shift, ctrl) = ui.input(|i| (i.modifiers.shift, i.modifiers.command));
                let m = maps[k];
                let u = f64::from((pos.x - m.left()) / m.width());
                let v = f64::from((m.bottom() - pos.y) / m.height());
                target.zoom(
                    if ctrl { 1.0 } else { factor },
                    if shift { 1.0 } else { factor },
                    u,
                    v,
                );
            }
        }
        // Keyboard while the pointer is over the pane: +/− zoom, arrows pan, Home fits, C
        // toggles cursor mode.
        if response.hovered() {
            let (plus, minus, left, right, up, down, home, c) = ui.input(|i| {
                (
                    i.key_pressed(egui::Key::Plus) || i.key_pressed(egui::Key::Equals),
                    i.key_pressed(egui::Key::Minus),
                    i.key_pressed(egui::Key::ArrowLeft),
                    i.key_pressed(egui::Key::ArrowRight),
                    i.key_pressed(egui::Key::ArrowUp),
                    i.key_pressed(egui::Key::ArrowDown),
                    i.key_pressed(egui::Key::Home),
                    i.key_pressed(egui::Key::C),
                )
            });
            if plus {
                target.zoom(0.6, 0.6, 0.5, 0.5);
            }
            if minus {
                target.zoom(1.0 / 0.6, 1.0 / 0.6, 0.5, 0.5);
            }
            let dx = f64::from(u8::from(right)) - f64::from(u8::from(left));
            let dy = f64::from(u8::from(up)) - f64::from(u8::from(down));
            if dx != 0.0 || dy != 0.0 {
                target.pan(0.2 * dx, 0.2 * dy);
            }
            if home {
                *target = Camera::fit(t_extent);
            }
            if c {
                self.cursor_mode = !self.cursor_mode;
            }
        }
        // Shift-drag draws a box and zooms to it on release; a plain drag pans at once.
        let shift = ui.input(|i| i.modifiers.shift);
        if response.drag_started() && shift && self.context_drag.is_none() {
            self.box_start = response.interact_pointer_pos();
        }
        if let Some(start) = self.box_start {
            let k = maps.iter().position(|m| m.contains(start));
            match (ui.input(|i| i.pointer.latest_pos()), k) {
                (Some(now), Some(k)) => {
                    let m = maps[k];
                    let r = egui::Rect::from_two_pos(start, now).intersect(m);
                    ui.painter().rect_stroke(
                        r,
                        0.0,
                        egui::Stroke::new(1.5, egui::Color32::from_rgb(250, 200, 80)),
                        egui::StrokeKind::Inside,
                    );
                    if response.drag_stopped() {
                        if r.width() > 4.0 && r.height() > 4.0 {
                            let u0 = f64::from((r.left() - m.left()) / m.width());
                            let v0 = f64::from((m.bottom() - r.bottom()) / m.height());
                            let (t0, y0) = cam.at(u0, v0);
                            *target = Camera {
                                t0,
                                y0,
                                t_span: cam.t_span * f64::from(r.width() / m.width()),
                                y_span: cam.y_span * f64::from(r.height() / m.height()),
                            };
                        }
                        self.box_start = None;
                    }
                }
                _ => self.box_start = None,
            }
        } else if response.dragged()
            && self.context_drag.is_none()
            && let Some(m) = areas.hovered_cell.or(Some(0)).and_then(|k| maps.get(k))
        {
            let d = response.drag_delta();
            let du = -f64::from(d.x / m.width());
            let dv = f64::from(d.y / m.height());
            cam.pan(du, dv);
            target.pan(du, dv);
        }
        if response.double_clicked() {
            *target = Camera::fit(t_extent);
        }
    }

    /// The context view: drag the frame (or click elsewhere to centre it there).
    fn context_view(
        &mut self,
        ui: &egui::Ui,
        ctx_rect: egui::Rect,
        t_extent: u64,
        cam: &mut Camera,
        target: &mut Camera,
    ) {
        let ctx_resp = ui.interact(
            ctx_rect,
            ui.make_persistent_id(("alloc-map-context", self.key.get())),
            egui::Sense::click_and_drag(),
        );
        let to_cam = |pos: egui::Pos2| {
            (
                f64::from((pos.x - ctx_rect.left()) / ctx_rect.width()) * t_extent as f64,
                f64::from((ctx_rect.bottom() - pos.y) / ctx_rect.height()),
            )
        };
        if ctx_resp.drag_started()
            && let Some(p) = ctx_resp.interact_pointer_pos()
        {
            let frame = context_frame_rect(ctx_rect, cam, t_extent);
            if !frame.expand(3.0).contains(p) {
                let (tc, yc) = to_cam(p);
                cam.t0 = tc - 0.5 * cam.t_span;
                cam.y0 = yc - 0.5 * cam.y_span;
            }
            self.context_drag = Some((p, *cam));
        }
        // Follow the pointer while dragging, and to where it was released (slow frames may
        // not have seen its last moves).
        if let (Some((start, start_cam)), Some(p)) = (
            self.context_drag,
            ctx_resp
                .interact_pointer_pos()
                .or_else(|| ui.input(|i| i.pointer.latest_pos())),
        ) && (ctx_resp.dragged() || ctx_resp.drag_stopped())
        {
            let (t1, y1) = to_cam(p);
            let (t0, y0) = to_cam(start);
            cam.t0 = start_cam.t0 + (t1 - t0);
            cam.y0 = start_cam.y0 + (y1 - y0);
            *target = *cam;
        }
        if ctx_resp.drag_stopped() {
            self.context_drag = None;
        }
        if ctx_resp.clicked()
            && let Some(p) = ctx_resp.interact_pointer_pos()
        {
            let (tc, yc) = to_cam(p);
            target.t0 = tc - 0.5 * target.t_span;
            target.y0 = yc - 0.5 * target.y_span;
        }
        ctx_resp.on_hover_text("the whole map; drag the red frame to scroll");
    }

    /// A click: pin the block under the pointer and set the linked time, or drop/remove a
    /// cushion cursor (cursor mode, or alt-click).
    pub(super) fn click(
        &mut self,
        ui: &egui::Ui,
        response: &egui::Response,
        trace: &Trace,
        binned: &BinnedScene,
        areas: &Areas<'_>,
        cam: &Camera,
    ) {
        let (Some(pos), Some(k)) = (response.interact_pointer_pos(), areas.hovered_cell) else {
            return;
        };
        if !response.clicked() {
            return;
        }
        let axis = self.settings.time;
        let alt = ui.input(|i| i.modifiers.alt);
        let m = areas.maps[k];
        let u = f64::from((pos.x - m.left()) / m.width());
        let v = f64::from((m.bottom() - pos.y) / m.height());
        // The cell's own part of the camera (a process cell spans its process's life).
        let cam = &binned.cell_window(k, cam, axis, areas.t_extent, self.settings.layout);
        let (time, y) = cam.at(u, v);
        if self.cursor_mode != alt {
            // Remove a cursor within half its width, else drop one (on the time axis, at the
            // event applied there, as a tour step stores it).
            let cursors = &mut self.settings.cursors;
            let near = cursors.iter().position(|&ct| {
                let x = m.left() + ((ct as f64 - cam.t0) / cam.t_span) as f32 * m.width();
                (x - pos.x).abs() <= 0.5 * CURSOR_WIDTH
            });
            match near {
                Some(i) => {
                    cursors.remove(i);
                }
                None => {
                    let events = events_at(trace, axis, time.max(0.0) as u64);
                    cursors.push(axis_time_of_events(trace, axis, events));
                }
            }
            return;
        }
        self.dataset
            .links
            .set_time(events_at(trace, axis, time.max(0.0) as u64));
        let gpu = self
            .answer
            .filter(|a| {
                a.tag.bin == k && a.tag.pos.distance(pos) < 2.0 && a.tag.data_gen == self.data_gen
            })
            .map(|a| a.position);
        // The CPU scan of the bin's blocks only where the GPU has not answered.
        let position = gpu.unwrap_or_else(|| {
            let extent = binned.bins.get(k).map_or(1, |b| b.collapsed_extent);
            (time >= 0.0 && y >= 0.0)
                .then(|| binned.pick(k, axis, time as u64, (y * extent as f64) as u64))
                .flatten()
        });
        self.pinned = position.and_then(|p| binned.block_at(p));
        if let Some(i) = self.pinned.and_then(|i| u32::try_from(i).ok()) {
            self.dataset.links.pick_block(i);
        }
    }
}
