//! Two open files compared in a difference pane (`memscape view --diff A B`, View ▸ Compare
//! two runs) and samples files paired with the topology file they map onto.
//!
//! A difference pane belongs to no file (it has no file bar); it remembers its two files, so a
//! reload of either compares the new data again (a failed reload keeps the last data, as every
//! view does). Files given to `--diff` open no views of their own; if one fails to load, its
//! error pane shows why and the other opens its own views instead.

use std::path::PathBuf;
use std::sync::Arc;

use memscape_views::{Dataset, DatasetContent};

use super::files::FileId;
use super::{MemscapeApp, Pane};
use crate::panes::View;

/// What `memscape view` asks of the shell besides the files.
#[derive(Debug, Default)]
pub struct Startup {
    /// Compare the first two files in one difference pane (`--diff A B`).
    pub compare: bool,
    /// Samples files and the topology file each is to map onto.
    pub pairs: Vec<(PathBuf, PathBuf)>,
    /// Start with the frame-statistics overlay shown (`--frame-stats`).
    pub frame_stats: bool,
    /// Recordings to follow while they run (`record --live`, `view --live`).
    pub live: Vec<memscape_views::live::LiveReceiver>,
}

impl MemscapeApp {
    /// Whether file `id`, just opened, is one of `--diff`'s two (it then opens no panes of its
    /// own); opens the difference pane when both are in.
    pub(super) fn take_for_compare(&mut self, ctx: &egui::Context, id: FileId) -> bool {
        let Some(ids) = self.compare else {
            return false;
        };
        if !ids.contains(&id) {
            return false;
        }
        let loaded = ids.map(|i| self.files.get(i).is_some_and(|f| f.dataset.is_some()));
        if loaded == [true, true] {
            self.compare = None;
            self.add_compare(ctx, ids);
        }
        true
    }

    /// File `id` failed to load: if `--diff` waited for it, there is nothing to compare and
    /// the other file shows its own views (now, or when it is in).
    pub(super) fn cancel_compare(&mut self, ctx: &egui::Context, id: FileId) {
        let Some(ids) = self.compare else {
            return;
        };
        if !ids.contains(&id) {
            return;
        }
        self.compare = None;
        for other in ids.into_iter().filter(|o| *o != id) {
            self.show_data(ctx, other, true);
        }
    }

    /// Whether file `id` is compared in a difference pane or waits for one.
    pub(super) fn is_compared(&self, id: FileId) -> bool {
        self.compare.is_some_and(|ids| ids.contains(&id))
            || self.tree.tiles.iter().any(|(_, t)| {
                matches!(t, egui_tiles::Tile::Pane(p) if p.compare.is_some_and(|c| c.contains(&id)))
            })
    }

    /// The difference view of files `ids` (A, B), when both have data.
    fn diff_view(&self, ctx: &egui::Context, ids: [FileId; 2]) -> Option<Box<dyn View>> {
        let [a, b] = ids.map(|i| self.files.get(i).and_then(|f| f.dataset.clone()));
        Some(Box::new(crate::panes::diff::DiffPane::new(a?, b?, ctx)))
    }

    /// A difference pane of files `ids` (A, B), after the other panes.
    pub(super) fn add_compare(&mut self, ctx: &egui::Context, ids: [FileId; 2]) {
        if let Some(view) = self.diff_view(ctx, ids) {
            let pane = Pane {
                view,
                file: None,
                kind: None,
                compare: Some(ids),
            };
            self.insert_pane(pane, u64::MAX);
        }
    }

    /// File `id` was reloaded: the difference panes that compare it compare its new data.
    pub(super) fn refresh_compares(&mut self, ctx: &egui::Context, id: FileId) {
        let tiles: Vec<(egui_tiles::TileId, [FileId; 2])> = self
            .tree
            .tiles
            .iter()
            .filter_map(|(tile, t)| match t {
                egui_tiles::Tile::Pane(p) => p.compare.map(|c| (*tile, c)),
                _ => None,
            })
            .filter(|(_, c)| c.contains(&id))
            .collect();
        for (tile, ids) in tiles {
            let view = self.diff_view(ctx, ids);
            if let (Some(view), Some(egui_tiles::Tile::Pane(pane))) =
                (view, self.tree.tiles.get_mut(tile))
            {
                pane.view = view;
            }
        }
    }

    /// Pairs a loaded samples dataset with its topology file (it maps onto it from the
    /// start); true for a topology file that samples are paired with: it opens no panes of
    /// its own, the samples' views show it.
    pub(super) fn pair(&self, dataset: &Arc<Dataset>) -> bool {
        let path = PathBuf::from(&dataset.name);
        match &dataset.content {
            DatasetContent::Samples(_) => {
                if let Some((_, hw)) = self.pairs.iter().find(|(s, _)| *s == path) {
                    dataset.links.set_topology(Some(hw.clone()));
                }
                false
            }
            DatasetContent::Topology(_) => self.pairs.iter().any(|(_, h)| *h == path),
            _ => false,
        }
    }

    /// View ▸ Compare two runs: A ▸ B, over the open files that have a heap.
    pub(super) fn compare_menu(&mut self, ui: &mut egui::Ui) {
        let heaps: Vec<(FileId, Arc<Dataset>)> = self
            .files
            .files
            .iter()
            .filter_map(|f| Some((f.id, f.dataset.clone()?)))
            .filter(|(_, d)| memscape_views::heap_tree::accepts(d).is_ok())
            .collect();
        ui.separator();
        if heaps.len() < 2 {
            ui.add_enabled(false, egui::Button::new("Compare two runs"))
                .on_disabled_hover_text(
                    "open two allocation traces, massif files or heap profiles first",
                );
            return;
        }
        ui.menu_button("Compare two runs", |ui| {
            for (a, da) in &heaps {
                ui.menu_button(format!("A: {}", da.name), |ui| {
                    for (b, db) in heaps.iter().filter(|(b, _)| b != a) {
                        if ui.button(format!("B: {}", db.name)).clicked() {
                            self.add_compare(ui.ctx(), [*a, *b]);
                            ui.close();
                        }
                    }
                });
            }
        });
    }
}

#[cfg(test)]
mod tests;
