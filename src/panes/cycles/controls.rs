//! The cycle pane's controls: the analysis (records, window, sampling, ε, binary, functions),
//! and the view (mode, colouring, the two parameterizations, the morph's scrubber and player,
//! density contours).

use std::time::Duration;

use memscape_views::cycles::draw::ColorBy;
use memscape_views::cycles::settings::{CycleSettings, Mode};

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
            // Enter in a text field analyses, as the Analyse button does.
            let mut enter = false;
            let mut submitted = |r: egui::Response| {
                enter |= r.lost_focus() && r.ctx.input(|i| i.key_pressed(egui::Key::Enter));
                r
            };
            ui.label("records");
            submitted(ui.add(egui::TextEdit::singleline(&mut self.text.range).desired_width(90.0)))
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
            submitted(
                ui.add(egui::TextEdit::singleline(&mut self.text.threshold).desired_width(50.0)),
            )
            .on_hover_text("Rips threshold (empty: the enclosing radius)");
            ui.label("binary");
            submitted(
                ui.add(egui::TextEdit::singleline(&mut self.text.binary).desired_width(140.0)),
            )
            .on_hover_text("the traced executable: source lines and the function filter");
            ui.label("functions");
            submitted(
                ui.add(egui::TextEdit::singleline(&mut self.text.functions).desired_width(120.0)),
            )
            .on_hover_text("comma-separated; needs the binary");
            let analyse = ui
                .button("Analyse")
                .on_hover_text("run the analysis of these settings (cancels the one running)");
            if analyse.clicked() || enter {
                let ctx = ui.ctx().clone();
                self.start(&ctx);
            }
            self.progress_ui(ui);
        });
    }

    /// The running analysis's stage and progress with a Cancel button, or that it was
    /// cancelled.
    fn progress_ui(&mut self, ui: &mut egui::Ui) {
        if let Some((job, _)) = &self.running {
            let p = job.progress();
            ui.add(
                egui::ProgressBar::new(p.fraction)
                    .desired_width(160.0)
                    .text(format!(
                        "{} · {:.0} s",
                        p.stage,
                        job.elapsed().as_secs_f32()
                    )),
            )
            .on_hover_text("the cycle analysis runs in the background; the views stay usable");
            if ui
                .button("Cancel")
                .on_hover_text("stop the analysis (Analyse runs it again)")
                .clicked()
            {
                self.cancel();
            }
            ui.ctx().request_repaint_after(Duration::from_millis(250));
        } else if self.cancelled {
            ui.weak("analysis cancelled");
        }
    }

    /// `functions`: the trace's functions with their record counts, most records first.
    pub(super) fn view_ui(
        &mut self,
        ui: &mut egui::Ui,
        count: usize,
        functions: &[(String, usize)],
    ) {
        let key = self.key.get();
        let s = &mut self.settings;
        ui.horizontal_wrapped(|ui| {
            ui.selectable_value(&mut s.mode, Mode::Spiral, "Spiral");
            ui.selectable_value(&mut s.mode, Mode::Circular, "Circular");
            ui.selectable_value(&mut s.mode, Mode::Barcode, "Barcode");
            ui.selectable_value(&mut s.mode, Mode::Projection, "Projection");
            ui.separator();
            let mut choice = if self.collapse_mode {
                ColorChoice::LineCollapsed
            } else {
                ColorChoice::By(s.cycle_color)
            };
            egui::ComboBox::from_id_salt(("cycle-color", key))
                .selected_text(format!("colour: {}", choice.title()))
                .show_ui(ui, |ui| {
                    for by in ColorBy::ALL {
                        ui.selectable_value(&mut choice, ColorChoice::By(by), by.title());
                        if by == ColorBy::Line {
                            ui.selectable_value(
                                &mut choice,
                                ColorChoice::LineCollapsed,
                                ColorChoice::LineCollapsed.title(),
                            )
                            .on_hover_text(
                                "each line its colour, but the lines of the chosen functions \
                                 share one colour per function",
                            );
                        }
                    }
                });
            choose_color(s, &mut self.collapse_mode, choice, functions);
            if self.collapse_mode {
                collapsed_checklist(ui, s, functions, &mut self.function_search);
            }
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
            crate::panes::wrap_before_slider(ui, 20.0);
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

/// The colour menu's entries: a colouring, or colour by line with functions collapsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ColorChoice {
    By(ColorBy),
    LineCollapsed,
}

impl ColorChoice {
    fn title(self) -> &'static str {
        match self {
            Self::By(by) => by.title(),
            Self::LineCollapsed => "line, functions collapsed",
        }
    }
}

/// Applies the colour menu's `choice` to the settings. Entering "functions collapsed" with no
/// function chosen collapses every function but the one with the most records (whose lines
/// then stand apart, as in the paper's figures); leaving it clears the functions (the setting
/// only means something with colour by line).
pub(super) fn choose_color(
    s: &mut CycleSettings,
    collapse_mode: &mut bool,
    choice: ColorChoice,
    functions: &[(String, usize)],
) {
    match choice {
        ColorChoice::By(by) => {
            if *collapse_mode || by != s.cycle_color {
                s.collapse_function.clear();
            }
            s.cycle_color = by;
            *collapse_mode = false;
        }
        ColorChoice::LineCollapsed => {
            s.cycle_color = ColorBy::Line;
            if !*collapse_mode && s.collapse_function.is_empty() {
                s.collapse_function = match functions.first() {
                    Some((top, _)) if functions.len() > 1 => {
                        vec!["*".to_owned(), format!("!{top}")]
                    }
                    _ => vec!["*".to_owned()],
                };
            }
            *collapse_mode = true;
        }
    }
}

/// Functions past this many get a search field above the checklist.
const SEARCH_ABOVE: usize = 10;

/// The checklist of functions whose lines share one colour, with their record counts (a
/// search field when it is long; "all" and "none").
fn collapsed_checklist(
    ui: &mut egui::Ui,
    s: &mut CycleSettings,
    functions: &[(String, usize)],
    search: &mut String,
) {
    let names: Vec<String> = functions.iter().map(|(f, _)| f.clone()).collect();
    let mut checked = s.collapsed_checklist(&names);
    let before = checked.clone();
    let shown = checked.iter().filter(|c| **c).count();
    ui.menu_button(
        format!("collapsed: {shown} of {} functions", names.len()),
        |ui| {
            if names.len() > SEARCH_ABOVE {
                ui.add(
                    egui::TextEdit::singleline(search)
                        .hint_text("search functions")
                        .desired_width(220.0),
                );
            }
            ui.horizontal(|ui| {
                if ui.button("all").clicked() {
                    checked.iter_mut().for_each(|c| *c = true);
                }
                if ui.button("none").clicked() {
                    checked.iter_mut().for_each(|c| *c = false);
                }
            });
            let needle = search.trim().to_lowercase();
            egui::ScrollArea::vertical()
                .max_height(360.0)
                .show(ui, |ui| {
                    for (i, (name, records)) in functions.iter().enumerate() {
                        if !needle.is_empty() && !name.to_lowercase().contains(&needle) {
                            continue;
                        }
                        ui.checkbox(&mut checked[i], format!("{name}  ({records} records)"));
                    }
                });
        },
    )
    .response
    .on_hover_text("checked functions are drawn in one colour each, the others line by line");
    if checked != before {
        s.set_collapsed(&names, &checked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn functions() -> Vec<(String, usize)> {
        [("sort", 900), ("swap", 200), ("main", 10)]
            .iter()
            .map(|(f, n)| ((*f).to_owned(), *n))
            .collect()
    }

    /// The colour menu edits the typed settings `memscape render --collapse-function` takes:
    /// "functions collapsed" keeps the busiest function's lines apart, another colouring
    /// clears the list (the setting needs colour by line), line by line again is plain.
    #[test]
    fn the_colour_menu_edits_the_collapse_setting() {
        let functions = functions();
        let mut s = CycleSettings::default();
        let mut collapsing = false;
        choose_color(
            &mut s,
            &mut collapsing,
            ColorChoice::LineCollapsed,
            &functions,
        );
        assert!(collapsing);
        assert_eq!(s.cycle_color, ColorBy::Line);
        assert_eq!(s.collapse_function, ["*", "!sort"]);
        let names: Vec<String> = functions.iter().map(|f| f.0.clone()).collect();
        assert_eq!(s.collapsed_checklist(&names), [false, true, true]);
        // Checking sort too: every function collapsed.
        s.set_collapsed(&names, &[true, true, true]);
        assert_eq!(s.collapse_function, ["*"]);
        // Choosing it again keeps the user's choice.
        choose_color(
            &mut s,
            &mut collapsing,
            ColorChoice::LineCollapsed,
            &functions,
        );
        assert_eq!(s.collapse_function, ["*"]);
        choose_color(
            &mut s,
            &mut collapsing,
            ColorChoice::By(ColorBy::Function),
            &functions,
        );
        assert!(!collapsing && s.collapse_function.is_empty());
        assert_eq!(s.cycle_color, ColorBy::Function);
        choose_color(
            &mut s,
            &mut collapsing,
            ColorChoice::By(ColorBy::Line),
            &functions,
        );
        assert!(!collapsing && s.collapse_function.is_empty());
    }
}
