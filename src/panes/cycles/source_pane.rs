//! The cycle pane's source pane: the selected records' source lines, and the anchor record's
//! file with every selected line of it highlighted.

use egui::Color32;
use memscape_views::cycles::model::CycleAnalysis;

/// The source pane of a selection: how many records on which source lines, and the anchor
/// record's file with every selected line of it highlighted (scrolled to the anchor's line),
/// when the file is readable here. Returns true when the user clears it.
pub(super) fn source_pane(
    ui: &mut egui::Ui,
    analysis: &CycleAnalysis,
    record: usize,
    mask: &[bool],
    scroll: bool,
    source_text: &mut Option<(String, Option<Vec<String>>)>,
) -> bool {
    let mut clear = false;
    let records = &analysis.report.records;
    // Selected records per (file, line), most first.
    let mut lines: std::collections::BTreeMap<(Option<&str>, Option<u32>), usize> =
        std::collections::BTreeMap::new();
    for (r, _) in records.iter().zip(mask).filter(|(_, m)| **m) {
        *lines.entry((r.file.as_deref(), r.line)).or_default() += 1;
    }
    let selected: usize = lines.values().sum();
    ui.horizontal(|ui| {
        ui.strong(format!(
            "{selected} records selected on {} source line(s)",
            lines.len()
        ));
        if ui.button("clear").clicked() {
            clear = true;
        }
    });
    let mut ranked: Vec<_> = lines.iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(a.1));
    if ranked.len() > 1 {
        for ((file, line), n) in ranked.iter().take(8) {
            let place = match (file, line) {
                (Some(f), Some(l)) => format!("{f}:{l}"),
                _ => "no source line".to_owned(),
            };
            ui.label(format!("{n:>6}  {place}"));
        }
    }
    let Some(r) = records.get(record) else {
        return clear;
    };
    let (Some(file), Some(line)) = (r.file.as_deref(), r.line) else {
        ui.label(format!(
            "instruction {:#x}: no source line (give the traced binary to symbolize)",
            r.ip
        ));
        return clear;
    };
    ui.label(format!(
        "{}  {file}:{line}",
        r.function.as_deref().unwrap_or("??")
    ));
    let marked: std::collections::HashSet<u32> = lines
        .keys()
        .filter(|(f, _)| *f == Some(file))
        .filter_map(|(_, l)| *l)
        .collect();
    if source_text.as_ref().is_none_or(|(f, _)| f != file) {
        let lines = memscape_views::source_file::read_lines(std::path::Path::new(file));
        *source_text = Some((file.to_owned(), lines));
    }
    let Some((_, Some(text))) = source_text.as_ref() else {
        ui.label("(the source file is not readable here)");
        return clear;
    };
    egui::ScrollArea::both().show(ui, |ui| {
        for (i, l) in text.iter().enumerate() {
            let n = i as u32 + 1;
            let row = egui::RichText::new(format!("{n:>5}  {l}")).monospace();
            let response = if marked.contains(&n) {
                let bg = if n == line {
                    Color32::from_rgb(110, 85, 20)
                } else {
                    Color32::from_rgb(70, 56, 20)
                };
                ui.label(row.background_color(bg).color(Color32::WHITE))
            } else {
                ui.label(row.color(Color32::from_gray(170)))
            };
            if n == line && scroll {
                response.scroll_to_me(Some(egui::Align::Center));
            }
        }
    });
    clear
}
