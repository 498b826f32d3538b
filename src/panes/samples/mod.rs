//! The samples panes beside the radial topology (`super::topology`): parallel histograms and
//! the single-attribute histogram with brushing, the selection panel, window-score strips and
//! cluster markers with their topology glyphs, and the source pane of the top offenders. What
//! every samples view of a dataset shares is `memscape_views::samples::shared`.

pub mod pane;
pub mod source;

use std::sync::Arc;

use memscape_views::Dataset;
use memscape_views::samples::shared::{Base, SamplesShared};

pub use pane::HistogramsPane;

/// What a selection computed from a bounded read says: the engine could not state it, so its
/// numbers count the first samples read only.
pub fn head_note(extent: memscape_views::dataset::SamplesExtent) -> String {
    format!(
        "selection computed from the first {} of {} samples (the query engine cannot state it)",
        extent.read, extent.total
    )
}

/// The base for a pane's frame; while it is built a spinner with `waiting`, on failure the
/// error (and `*ready` set: there is nothing more to wait for) and None.
pub fn base_or_status(
    shared: &SamplesShared,
    ui: &mut egui::Ui,
    waiting: &str,
    ready: &mut bool,
) -> Option<Arc<Base>> {
    match shared.base() {
        None => {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(waiting);
            });
            None
        }
        Some(Err(e)) => {
            ui.colored_label(egui::Color32::LIGHT_RED, e);
            *ready = true;
            None
        }
        Some(Ok(base)) => Some(base),
    }
}

/// The "topology:" menu of a samples pane: pair the samples with any open topology file, or
/// go back to their default (the hardware.xml beside them, else this machine).
pub fn topology_menu(
    ui: &mut egui::Ui,
    dataset: &Dataset,
    shared: &SamplesShared,
    topologies: &[Arc<Dataset>],
) {
    let (paired, _) = dataset.links.topology();
    let current = paired.as_ref().map_or_else(
        || "default".to_owned(),
        |p| {
            p.file_name().map_or_else(
                || p.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            )
        },
    );
    ui.menu_button(format!("topology: {current}"), |ui| {
        if ui
            .selectable_label(
                paired.is_none(),
                "default: hardware.xml beside the samples, else this machine",
            )
            .clicked()
        {
            shared.pair_with(dataset, None);
            ui.close();
        }
        let files: Vec<std::path::PathBuf> = topologies
            .iter()
            .map(|t| std::path::PathBuf::from(&t.name))
            .filter(|p| p.is_file())
            .collect();
        if files.is_empty() {
            ui.weak("open a topology file (hwloc XML, hardware.xml) to pair with it");
        }
        for path in files {
            let chosen = paired.as_ref() == Some(&path);
            if ui
                .selectable_label(chosen, path.display().to_string())
                .clicked()
            {
                shared.pair_with(dataset, Some(path));
                ui.close();
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::sync::Arc;

    use memscape_views::samples::shared::{Repaint, SamplesShared};
    use memscape_views::{Dataset, LoadSource};

    fn load(path: &Path) -> Arc<Dataset> {
        let dataset = memscape_views::dataset::load(&LoadSource::File(path.to_owned()), &|_, _| {});
        Arc::new(dataset.unwrap_or_else(|e| panic!("{}: {e}", path.display())))
    }

    /// Drives egui as the window does, without one: frames of input events in, shapes out.
    struct Driver {
        ctx: egui::Context,
        shapes: Vec<egui::epaint::ClippedShape>,
    }

    impl Driver {
        fn frame(&mut self, events: Vec<egui::Event>, ui_fn: &mut dyn FnMut(&mut egui::Ui)) {
            let input = egui::RawInput {
                screen_rect: Some(egui::Rect::from_min_size(
                    egui::Pos2::ZERO,
                    egui::vec2(900.0, 600.0),
                )),
                events,
                ..Default::default()
            };
            let mut out = self.ctx.run_ui(input, |ui| ui_fn(ui));
            out.textures_delta.clear();
            self.shapes = out.shapes;
        }

        /// Where the last frame drew a text containing `needle`.
        fn text_at(&self, needle: &str) -> Option<egui::Pos2> {
            fn find(shape: &egui::Shape, needle: &str) -> Option<egui::Pos2> {
                match shape {
                    egui::Shape::Text(t) if t.galley.text().contains(needle) => {
                        Some(t.galley.rect.translate(t.pos.to_vec2()).center())
                    }
                    egui::Shape::Vec(v) => v.iter().find_map(|s| find(s, needle)),
                    _ => None,
                }
            }
            self.shapes.iter().find_map(|c| find(&c.shape, needle))
        }

        /// A click on the text `needle` (press and release in two frames), then a frame.
        fn click(&mut self, needle: &str, ui_fn: &mut dyn FnMut(&mut egui::Ui)) {
            let pos = self
                .text_at(needle)
                .unwrap_or_else(|| panic!("no {needle:?} in the frame"));
            let button = |pressed| egui::Event::PointerButton {
                pos,
                button: egui::PointerButton::Primary,
                pressed,
                modifiers: egui::Modifiers::NONE,
            };
            self.frame(vec![egui::Event::PointerMoved(pos), button(true)], ui_fn);
            self.frame(vec![button(false)], ui_fn);
            self.frame(Vec::new(), ui_fn);
        }
    }

    /// The "topology:" menu as the samples panes show it: opened by a click, it lists the open
    /// topology files; choosing one pairs the samples with it (the button then names it),
    /// "default" goes back.
    #[test]
    fn the_topology_menu_pairs_the_samples_with_a_chosen_file() {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
        let samples = load(&data.join("memaxes/lulesh/samples.out"));
        let hwloc: PathBuf = data.join("hwloc/24em64t-2n6c2t-pci.xml");
        let topologies = vec![load(&hwloc)];
        let repaint: Repaint = Arc::new(|| {});
        let shared = SamplesShared::of(&samples, &repaint);
        let mut ui_fn =
            |ui: &mut egui::Ui| super::topology_menu(ui, &samples, &shared, &topologies);
        let mut gui = Driver {
            ctx: egui::Context::default(),
            shapes: Vec::new(),
        };
        gui.frame(Vec::new(), &mut ui_fn);
        assert!(gui.text_at("topology: default").is_some());
        assert!(gui.text_at("24em64t").is_none(), "the menu starts closed");
        gui.click("topology: default", &mut ui_fn);
        gui.click("24em64t-2n6c2t-pci.xml", &mut ui_fn);
        assert_eq!(samples.links.topology(), (Some(hwloc.clone()), 1));
        assert!(
            gui.text_at("topology: 24em64t-2n6c2t-pci.xml").is_some(),
            "the button names the chosen file"
        );
        assert!(
            gui.text_at("default: hardware.xml").is_none(),
            "the menu closed"
        );
        gui.click("topology: 24em64t", &mut ui_fn);
        gui.click("default: hardware.xml", &mut ui_fn);
        assert_eq!(samples.links.topology(), (None, 2));
        assert!(gui.text_at("topology: default").is_some());
    }
}
