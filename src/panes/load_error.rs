//! The pane of a file that failed to load: the error as the command line prints it (the file,
//! the line or offset, what was expected, the cause once), in its own tab, so that the other
//! files' panes and the window keep working. Retrying is the shell's bar above the pane.

use super::{View, ViewContext};

pub struct LoadErrorPane {
    name: String,
    message: String,
}

impl LoadErrorPane {
    pub fn new(name: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            message: message.into(),
        }
    }
}

impl View for LoadErrorPane {
    fn title(&self) -> String {
        let file = std::path::Path::new(&self.name)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.name.clone());
        format!("{file} (failed)")
    }

    fn ui(&mut self, ui: &mut egui::Ui, _cx: &ViewContext<'_>) {
        egui::ScrollArea::vertical()
            .auto_shrink([false, false])
            .show(ui, |ui| {
                ui.add_space(8.0);
                ui.heading(format!("Cannot open {}", self.name));
                ui.add_space(6.0);
                ui.add(
                    egui::Label::new(
                        egui::RichText::new(&self.message)
                            .monospace()
                            .color(egui::Color32::from_rgb(255, 120, 110)),
                    )
                    .wrap()
                    .selectable(true),
                );
                ui.add_space(10.0);
                ui.weak(
                    "The other files stay open. Fix the file and press Retry; a file that grows \
                     (a trace still being written) is retried by itself.",
                );
            });
    }
}
