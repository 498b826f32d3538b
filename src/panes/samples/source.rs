//! The source pane of the top offenders: the file of a `file:line` offender, found relative to
//! the samples file (MemAxes ships `lulesh/samples.out` beside `LULESH_OMP.cc`, older layouts
//! put sources in `src/` one level up), shown with the line highlighted and scrolled into view.

use std::path::{Path, PathBuf};

use egui::Color32;
use memscape_views::samples::source::{resolve, split_source_line};

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
            .and_then(memscape_views::source_file::read_lines)
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
    fn lulesh_source_resolves_beside_the_samples() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/memaxes/lulesh");
        let samples = dir.join("samples.out");
        let view = SourceView::open(&samples, "LULESH_OMP.cc:2035", vec![2056]).unwrap();
        assert!(view.is_readable());
        assert_eq!(view.line, 2035);
        assert!(view.lines.len() > 2035, "the whole file is read");
    }
}
