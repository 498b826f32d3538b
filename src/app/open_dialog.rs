//! A small file browser in egui (the ecosystem's dialog crates lag behind egui's version):
//! a path field, the directory's entries, double-click to open.

use std::path::{Path, PathBuf};

pub struct OpenDialog {
    pub open: bool,
    dir: PathBuf,
    typed: String,
    entries: Vec<(String, bool)>,
    error: Option<String>,
}

impl OpenDialog {
    pub fn new() -> Self {
        let dir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let mut d = Self {
            open: false,
            typed: dir.display().to_string(),
            dir,
            entries: Vec::new(),
            error: None,
        };
        d.refresh();
        d
    }

    fn refresh(&mut self) {
        self.entries.clear();
        self.error = None;
        match std::fs::read_dir(&self.dir) {
            Ok(iter) => {
                for e in iter.flatten() {
                    let name = e.file_name().to_string_lossy().into_owned();
                    if name.starts_with('.') {
                        continue;
                    }
                    let is_dir = e.file_type().map(|t| t.is_dir()).unwrap_or(false);
                    self.entries.push((name, is_dir));
                }
                self.entries.sort_by(|a, b| {
                    b.1.cmp(&a.1)
                        .then_with(|| a.0.to_lowercase().cmp(&b.0.to_lowercase()))
                });
            }
            Err(e) => self.error = Some(format!("{}: {e}", self.dir.display())),
        }
    }

    fn go(&mut self, dir: &Path) {
        self.dir = dir.to_owned();
        self.typed = dir.display().to_string();
        self.refresh();
    }

    /// Shows the dialog; returns a file the user chose.
    pub fn show(&mut self, ctx: &egui::Context) -> Option<PathBuf> {
        if !self.open {
            return None;
        }
        let mut chosen = None;
        let mut open = self.open;
        egui::Window::new("Open file")
            .open(&mut open)
            .default_size([560.0, 420.0])
            .collapsible(false)
            .show(ctx, |ui| {
                ui.horizontal(|ui| {
                    if ui.button("⬆").on_hover_text("parent directory").clicked()
                        && let Some(parent) = self.dir.parent().map(Path::to_path_buf)
                    {
                        self.go(&parent);
                    }
                    let field = ui.add(
                        egui::TextEdit::singleline(&mut self.typed).desired_width(f32::INFINITY),
                    );
                    if field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                        let p = PathBuf::from(self.typed.trim());
                        if p.is_dir() {
                            self.go(&p);
                        } else {
                            chosen = Some(p);
                        }
                    }
                });
                if let Some(e) = &self.error {
                    ui.colored_label(egui::Color32::LIGHT_RED, e);
                }
                ui.separator();
                let mut go_into = None;
                egui::ScrollArea::vertical()
                    .auto_shrink([false, false])
                    .show(ui, |ui| {
                        for (name, is_dir) in &self.entries {
                            let label = if *is_dir {
                                format!("📁 {name}")
                            } else {
                                format!("📄 {name}")
                            };
                            let r = ui.selectable_label(false, label);
                            if r.double_clicked() || (*is_dir && r.clicked()) {
                                let p = self.dir.join(name);
                                if *is_dir {
                                    go_into = Some(p);
                                } else {
                                    chosen = Some(p);
                                }
                            } else if r.clicked() {
                                self.typed = self.dir.join(name).display().to_string();
                            }
                        }
                    });
                if let Some(p) = go_into {
                    self.go(&p);
                }
            });
        self.open = open && chosen.is_none();
        chosen
    }
}
