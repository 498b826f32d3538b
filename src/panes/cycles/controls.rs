//! The cycle pane's controls: the analysis (records, window, sampling, ε, binary, functions),
//! and the view (mode, colouring, the two parameterizations, the morph's scrubber and player,
//! density contours).

use std::time::Duration;

use memscape_views::cycles::draw::ColorBy;
use memscape_views::cycles::settings::Mode;

use super::CyclesPane;

/// The analysis fields as the user types them, parsed into the settings on "Analyse".
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct AnalysisText {
    pub range: String,
    pub threshold: String,
    pub functions: String,
    pub binary: String,
}

impl AnalysisText {
    /// The text of the analysis settings.
    pub fn of(settings: &memscape_views::cycles::settings::CycleAnalysisSettings) -> Self {
        Self {
            range: settings.range.clone().unwrap_or_default(),
            threshold: settings
                .threshold
                .map(|t| t.to_string())
                .unwrap_or_default(),
            functions: settings.functions.join(", "),
            binary: settings
                .binary
                .as_ref()
                .map(|b| b.display().to_string())
                .unwrap_or_default(),
        }
    }

    /// Writes the text into `settings`, or says what does not parse.
    pub fn apply(
        &self,
        settings: &mut memscape_views::cycles::settings::CycleAnalysisSettings,
    ) -> Result<(), String> {
        settings.threshold = if self.threshold.trim().is_empty() {
            None
        } else {
            Some(
                self.threshold
                    .trim()
                    .parse::<f32>()
                    .map_err(|_| format!("threshold: not a number: {:?}", self.threshold))?,
            )
        };
        let range = self.range.trim();
        settings.range = (!range.is_empty()).then(|| range.to_owned());
        settings.functions = self
            .functions
            .split(',')
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect();
        let binary = self.binary.trim();
        settings.binary = (!binary.is_empty()).then(|| binary.into());
        Ok(())
    }
}

impl CyclesPane {
    pub(super) fn settings_ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal_wrapped(|ui| {
            ui.label("records");
            ui.add(egui::TextEdit::singleline(&mut self.text.range).desired_width(90.0))
                .on_hover_text("A..B: record indices (empty: all; whole-process traces are slow)");
            let analysis = &mut self.settings.analysis;
            ui.add(
                egui::DragValue::new(&mut analysis.window)
                    .range(1..=200)
                    .prefix("window "),
            );
            ui.add(
                egui::DragValue::new(&mut analysis.sample)
                    .range(1..=1000)
                    .prefix("every "),
            );
            // The level of detail: landmark windows above this many, or when the persistence
            // runs past the time budget; "full" analyses every window.
            ui.add_enabled(
                !analysis.full,
                egui::DragValue::new(&mut analysis.max_windows)
                    .range(10..=1_000_000)
                    .prefix("max windows "),
            )
            .on_hover_text("above this many unique windows, analyse that many landmark windows");
            ui.add_enabled(
                !analysis.full,
                egui::DragValue::new(&mut analysis.time_budget)
                    .range(0..=3600)
                    .prefix("budget ")
                    .suffix(" s"),
            )
            .on_hover_text("seconds before the analysis takes landmarks instead (0: no limit)");
            ui.checkbox(&mut analysis.full, "full")
                .on_hover_text("every window, no level of detail (slow on long traces)");
            ui.label("ε max");
            ui.add(egui::TextEdit::singleline(&mut self.text.threshold).desired_width(50.0))
                .on_hover_text("Rips threshold (empty: the enclosing radius)");
            ui.label("binary");
            ui.add(egui::TextEdit::singleline(&mut self.text.binary).desired_width(140.0))
                .on_hover_text("the traced executable: source lines and the function filter");
            ui.label("functions");
            ui.add(egui::TextEdit::singleline(&mut self.text.functions).desired_width(120.0))
                .on_hover_text("comma-separated; needs the binary");
            let busy = self.running.is_some();
            if ui
                .add_enabled(!busy, egui::Button::new("Analyse"))
                .clicked()
            {
                let ctx = ui.ctx().clone();
                self.start(&ctx);
            }
            if let Some((_, started, _)) = &self.running {
                ui.spinner();
                ui.label(format!(
                    "analysing… {:.0} s",
                    started.elapsed().as_secs_f32()
                ));
                ui.ctx().request_repaint_after(Duration::from_millis(250));
            }
        });
    }

    pub(super) fn view_ui(&mut self, ui: &mut egui::Ui, count: usize) {
        let key = self.key.get();
        let s = &mut self.settings;
        ui.horizontal_wrapped(|ui| {
            ui.selectable_value(&mut s.mode, Mode::Spiral, "Spiral");
            ui.selectable_value(&mut s.mode, Mode::Circular, "Circular");
            ui.selectable_value(&mut s.mode, Mode::Barcode, "Barcode");
            ui.selectable_value(&mut s.mode, Mode::Projection, "Projection");
            ui.separator();
            egui::ComboBox::from_id_salt(("cycle-color", key))
                .selected_text(format!("colour: {}", s.cycle_color.title()))
                .show_ui(ui, |ui| {
                    for by in ColorBy::ALL {
                        ui.selectable_value(&mut s.cycle_color, by, by.title());
                    }
                });
            ui.separator();
            let param_combo = |ui: &mut egui::Ui, id: &str, value: &mut usize| {
                egui::ComboBox::from_id_salt((id, key))
                    .selected_text(format!("θ{}", *value))
                    .width(50.0)
                    .show_ui(ui, |ui| {
                        for k in 0..count {
                            ui.selectable_value(value, k, format!("θ{k}"));
                        }
                    });
            };
            ui.label("from");
            param_combo(ui, "from", &mut s.param);
            ui.label("to");
            let mut to = s.morph_to.unwrap_or(s.param);
            param_combo(ui, "to", &mut to);
            s.morph_to = Some(to);
            if ui
                .button("<<")
                .on_hover_text("play back to the first")
                .clicked()
            {
                self.playing = -1.0;
            }
            if ui
                .button(if self.playing == 0.0 { "play" } else { "stop" })
                .clicked()
            {
                self.playing = if self.playing == 0.0 {
                    if s.t >= 1.0 { -1.0 } else { 1.0 }
                } else {
                    0.0
                };
            }
            if ui
                .button(">>")
                .on_hover_text("play forward to the second")
                .clicked()
            {
                self.playing = 1.0;
            }
            let mut t = s.t;
            ui.add(egui::Slider::new(&mut t, 0.0..=1.0).text("t"));
            if t != s.t {
                s.t = t;
                self.playing = 0.0;
            }
            if matches!(s.mode, Mode::Spiral | Mode::Circular) {
                ui.checkbox(&mut s.contours, "density contours")
                    .on_hover_text("isocontours of the density of the drawn points");
                ui.weak("drag: lasso select · click: a source line");
            }
        });
    }
}
