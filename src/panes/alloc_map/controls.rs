//! The allocation-map pane's controls: α, cushion and relief, the time axis, the colouring,
//! bins and their layout, the occupancy bar, the context view, cursor mode and fit. Each edits
//! the pane's settings.

use memscape_views::alloc_map::bins::BinBy;
use memscape_views::alloc_map::camera::{BinLayout, Camera};
use memscape_views::alloc_map::colors::ColorBy;
use memscape_views::alloc_map::scene::TimeAxis;
use memscape_views::alloc_map::settings::{Cushion, Occupancy, Panel};

use super::AllocMapPane;

impl AllocMapPane {
    pub(super) fn controls(&mut self, ui: &mut egui::Ui) {
        let key = self.key.get();
        let s = &mut self.settings;
        ui.horizontal_wrapped(|ui| {
            ui.label("α");
            ui.add(egui::Slider::new(&mut s.alpha, 0.05..=2.0).logarithmic(true))
                .on_hover_text("bias of the anti-aliasing: low α shows few, thin blocks strongly");
            egui::ComboBox::from_id_salt(("cushion", key))
                .selected_text(format!("{:?} cushion", s.cushion))
                .show_ui(ui, |ui| {
                    for k in Cushion::ALL {
                        ui.selectable_value(&mut s.cushion, k, format!("{k:?}"));
                    }
                });
            crate::panes::wrap_before_slider(ui, 50.0);
            ui.add(egui::Slider::new(&mut s.relief, 0.0..=3.0).text("relief"));
            ui.separator();
            ui.selectable_value(&mut s.time, TimeAxis::Events, "event index");
            ui.selectable_value(&mut s.time, TimeAxis::Wall, "wall time");
            ui.separator();
            let mut color = s.color.unwrap_or(ColorBy::Thread);
            egui::ComboBox::from_id_salt(("color", key))
                .selected_text(format!("colour: {}", color.name()))
                .show_ui(ui, |ui| {
                    for c in ColorBy::ALL {
                        ui.selectable_value(&mut color, c, c.name());
                    }
                });
            s.color = Some(color);
        });
        let mut fit = false;
        ui.horizontal_wrapped(|ui| {
            let before = s.bins.unwrap_or(BinBy::None);
            let mut bins = before;
            egui::ComboBox::from_id_salt(("bins", key))
                .selected_text(bins.name())
                .show_ui(ui, |ui| {
                    for b in BinBy::ALL {
                        ui.selectable_value(&mut bins, b, b.name());
                    }
                })
                .response
                .on_hover_text("one view per bin, each with its own collapsed address axis");
            s.bins = Some(bins);
            if before != bins {
                self.target = Some(self.camera.map_or_else(
                    || Camera::fit(1),
                    |c| Camera {
                        y0: 0.0,
                        y_span: 1.0,
                        ..c
                    },
                ));
            }
            if bins != BinBy::None {
                ui.selectable_value(&mut s.layout, BinLayout::Address, "address-aligned")
                    .on_hover_text(
                        "bins side by side, each bin's address axis scaled to the same height: \
                         relative occupancy compares",
                    );
                ui.selectable_value(&mut s.layout, BinLayout::Time, "time-aligned")
                    .on_hover_text("bins stacked on one time axis: activity compares");
            }
            ui.separator();
            let mut bar = s.has(Panel::Occupancy).then_some(s.occupancy);
            egui::ComboBox::from_id_salt(("occupancy", key))
                .selected_text(bar.map_or("no occupancy bar", Occupancy::label))
                .show_ui(ui, |ui| {
                    for v in Occupancy::ALL {
                        ui.selectable_value(&mut bar, Some(v), v.label());
                    }
                    ui.selectable_value(&mut bar, None, "no occupancy bar");
                })
                .response
                .on_hover_text(
                    "per time column, the bin's bytes in use (blue empty → red full); idle gaps \
                     are stretches without an allocation or free at least 4 pixels wide",
                );
            s.set(Panel::Occupancy, bar.is_some());
            if let Some(v) = bar {
                s.occupancy = v;
                if let Some(why) = v.same_as_flat_on(s.time) {
                    ui.weak("ⓘ as flat on event time").on_hover_text(why);
                }
            }
            let mut context = s.has(Panel::Context);
            ui.checkbox(&mut context, "context")
                .on_hover_text("the whole map in miniature; drag its red frame to scroll");
            s.set(Panel::Context, context);
            let mut curves = s.has(Panel::Curves);
            ui.checkbox(&mut curves, "waste · fragmentation").on_hover_text(
                "under each bin over time: external fragmentation (orange area: 1 − largest free                  gap ÷ free bytes inside the bin's span) and waste (violet line: bytes allocated                  beyond the request ÷ live bytes)",
            );
            s.set(Panel::Curves, curves);
            ui.toggle_value(&mut self.free_sites.open, "who frees what")
                .on_hover_text(
                    "allocation site × free site (blocks, bytes, median lifetime) and frees \
                     across threads; click a row to highlight its blocks",
                );
            ui.separator();
            ui.toggle_value(&mut self.cursor_mode, "cursor mode")
                .on_hover_text(
                    "click: pin the block under the pointer (alt-click drops a cushion cursor). \
                 In cursor mode (key C) a click drops a cushion cursor and alt-click pins. \
                 Clicking a cursor again removes it.",
                );
            if !s.cursors.is_empty() {
                ui.spacing_mut().slider_width = 60.0;
                crate::panes::wrap_before_slider(ui, 60.0);
                ui.add(egui::Slider::new(&mut s.cursor_opacity, 0.0..=1.0).text("cursors"))
                    .on_hover_text("opacity of the cushion cursors");
                if ui.small_button("clear cursors").clicked() {
                    s.cursors.clear();
                }
            }
            fit = ui
                .button("fit")
                .on_hover_text("Home, or double-click")
                .clicked();
        });
        ui.horizontal_wrapped(|ui| self.process_checklist(ui));
        if fit {
            self.fit();
        }
    }
}
