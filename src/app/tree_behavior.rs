//! How the docking tree (egui_tiles) draws panes: each pane's file bar and view, its tab's
//! export menu, and what happened in it this frame (clicks, file requests, overflow).

use super::files::OpenFiles;
use super::{Pane, export, file_bar};
use crate::panes::ViewContext;
use file_bar::FileRequest;

pub(super) struct TreeBehavior<'a> {
    pub(super) cx: ViewContext<'a>,
    pub(super) files: &'a OpenFiles,
    /// The pane the user clicked in this frame, if any.
    pub(super) clicked: Option<egui_tiles::TileId>,
    /// Clicks in the panes' file bars.
    pub(super) requests: Vec<FileRequest>,
    /// "Export view as SVG/PNG…" chosen in a tab's context menu this frame.
    pub(super) export: Option<(egui_tiles::TileId, export::ExportFormat)>,
    /// Panes whose content reached past their edge this frame (there it is clipped).
    pub(super) overflows: Vec<String>,
}

impl egui_tiles::Behavior<Pane> for TreeBehavior<'_> {
    fn tab_title_for_pane(&mut self, pane: &Pane) -> egui::WidgetText {
        pane.view.title().into()
    }

    fn on_tab_button(
        &mut self,
        tiles: &mut egui_tiles::Tiles<Pane>,
        tile_id: egui_tiles::TileId,
        button_response: egui::Response,
    ) -> egui::Response {
        let exportable = matches!(tiles.get(tile_id), Some(egui_tiles::Tile::Pane(p)) if p.view.picture().is_some());
        if exportable {
            button_response.context_menu(|ui| {
                for (label, format) in [
                    ("Export view as SVG…", export::ExportFormat::Svg),
                    ("Export view as PNG…", export::ExportFormat::Png),
                ] {
                    if ui.button(label).clicked() {
                        self.export = Some((tile_id, format));
                        ui.close();
                    }
                }
            });
        }
        button_response
    }

    fn pane_ui(
        &mut self,
        ui: &mut egui::Ui,
        tile_id: egui_tiles::TileId,
        pane: &mut Pane,
    ) -> egui_tiles::UiResponse {
        let allotted = ui.max_rect();
        file_bar::show_for(ui, pane, self.files, &mut self.requests);
        pane.view.ui(ui, &self.cx);
        if let Some(overflow) =
            crate::panes::overflow(|| pane.view.title(), allotted, ui.min_rect())
        {
            self.overflows.push(overflow);
        }
        if ui.ui_contains_pointer() && ui.input(|i| i.pointer.any_pressed()) {
            self.clicked = Some(tile_id);
        }
        egui_tiles::UiResponse::None
    }

    fn is_tab_closable(
        &self,
        _tiles: &egui_tiles::Tiles<Pane>,
        _tile_id: egui_tiles::TileId,
    ) -> bool {
        true
    }

    fn simplification_options(&self) -> egui_tiles::SimplificationOptions {
        egui_tiles::SimplificationOptions {
            all_panes_must_have_tabs: true,
            ..Default::default()
        }
    }
}
