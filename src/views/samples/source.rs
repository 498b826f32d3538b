//! The source pane of the top offenders: the file of a `file:line` offender, found relative to
//! the samples file (MemAxes ships `lulesh/samples.out` beside `LULESH_OMP.cc`, older layouts
//! put sources in `src/` one level up), shown with the line highlighted and scrolled into view.

use std::path::{Path, PathBuf};

use egui::Color32;

/// Splits `file:line` (the offender names of `top_lines`).
pub fn split_source_line(name: &str) -> Option<(&str, u32)> {
    let (file, line) = name.rsplit_once(':')?;
    let line = line.trim().parse().ok()?;
    (!file.is_empty()).then_some((file, line))
}

/// Where `file` (as the samples name it) is readable: as given when absolute, else beside the
/// samples file, in `src/` beside it, one directory up or in `src/` there, then relative to
/// the working directory; a path from another machine is also tried by its file name alone.
pub fn resolve(samples_file: &Path, file: &str) -> Option<PathBuf> {
    let given = Path::new(file);
    if given.is_absolute() && given.is_file() {
        return Some(given.to_path_buf());
    }
    let dir = samples_file.parent().unwrap_or(Path::new("."));
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let bases = [
        dir.to_path_buf(),
        dir.join("src"),
        dir.join(".."),
        dir.join("../src"),
        PathBuf::from("."),
    ];
    let mut names = vec![given.to_path_buf()];
    if let Some(name) = given.file_name()
        && Path::new(name) != given
    {
        names.push(PathBuf::from(name));
    }
    for name in &names {
        if name.is_absolute() {
            continue;
        }
        for base in &bases {
            let p = base.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// A source file loaded for the pane (read once, not per frame).
pub struct SourceView {
    /// The offender's `file:line`.
    pub name: String,
    pub path: Option<PathBuf>,
    pub line: u32,
    lines: Vec<String>,
    /// Other lines of the same file to mark (other offenders in it).
    pub marked: Vec<u32>,
    scroll: bool,
}

impl SourceView {
    /// Opens the source of offender `name` (`file:line`) relative to `samples_file`.
    pub fn open(samples_file: &Path, name: &str, marked: Vec<u32>) -> Option<SourceView> {
        let (file, line) = split_source_line(name)?;
        let path = resolve(samples_file, file);
        let lines = path
            .as_deref()
            .and_then(crate::views::source_file::read_lines)
            .unwrap_or_default();
        Some(SourceView {
            name: name.to_owned(),
            path,
            line,
            lines,
            marked,
            scroll: true,
        })
    }

    pub fn is_readable(&self) -> bool {
        !self.lines.is_empty()
    }

    /// The pane: the file with `line` highlighted (scrolled to it once after opening) and the
    /// other marked lines tinted.
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            ui.strong(&self.name);
            if let Some(p) = &self.path {
                ui.weak(p.display().to_string());
            }
        });
        if !self.is_readable() {
            ui.label(
                "(the source file is not readable here: looked beside the samples file, in src/, \
                 one directory up and in the working directory)",
            );
            return;
        }
        let row_height = ui.text_style_height(&egui::TextStyle::Monospace);
        let mut area = egui::ScrollArea::both().auto_shrink([false, false]);
        if std::mem::take(&mut self.scroll) {
            let target = (self.line.saturating_sub(1) as f32)
                * (row_height + ui.spacing().item_spacing.y)
                - 0.4 * ui.available_height();
            area = area.vertical_scroll_offset(target.max(0.0));
        }
        let (line, marked) = (self.line, &self.marked);
        area.show_rows(ui, row_height, self.lines.len(), |ui, rows| {
            for i in rows {
                let n = i as u32 + 1;
                let text = egui::RichText::new(format!("{n:>5}  {}", self.lines[i])).monospace();
                // One row per line, never wrapped (the rows' height is fixed for show_rows).
                let text = if n == line {
                    text.background_color(Color32::from_rgb(120, 86, 20))
                        .color(Color32::WHITE)
                } else if marked.contains(&n) {
                    text.background_color(Color32::from_rgb(62, 50, 24))
                        .color(Color32::from_gray(230))
                } else {
                    text.color(Color32::from_gray(165))
                };
                ui.add(egui::Label::new(text).extend());
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_lines_split_at_the_last_colon() {
        assert_eq!(
            split_source_line("LULESH_OMP.cc:2035"),
            Some(("LULESH_OMP.cc", 2035))
        );
        assert_eq!(split_source_line("C:/x/a.c:7"), Some(("C:/x/a.c", 7)));
        assert_eq!(split_source_line("a.c"), None);
        assert_eq!(split_source_line(":3"), None);
        assert_eq!(split_source_line("a.c:x"), None);
    }

    #[test]
    fn lulesh_source_resolves_beside_the_samples() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/memaxes/lulesh");
        let samples = dir.join("samples.out");
        let found = resolve(&samples, "LULESH_OMP.cc").expect("LULESH_OMP.cc beside samples.out");
        assert!(found.ends_with("LULESH_OMP.cc"));
        // A path from the machine that recorded the samples: found by its file name.
        assert!(resolve(&samples, "/g/g90/user/lulesh/LULESH_OMP.cc").is_some());
        assert!(resolve(&samples, "no_such_file.cc").is_none());
        let view = SourceView::open(&samples, "LULESH_OMP.cc:2035", vec![2056]).unwrap();
        assert!(view.is_readable());
        assert_eq!(view.line, 2035);
        assert!(view.lines.len() > 2035, "the whole file is read");
    }
}
