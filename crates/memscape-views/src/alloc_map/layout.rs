//! Where everything of the allocation map's picture goes in a pane of a given size: the bin
//! cells with their occupancy and free bars, the stacked bar of all bins, the context view.

use super::camera::{BinLayout, cell_rects};

/// Which parts of the pane are drawn besides the maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Panels {
    /// An occupancy bar under each bin (and the stacked bar of all bins when binned).
    pub occupancy: bool,
    /// The context view at the right.
    pub context: bool,
    /// Axes, bin labels, free bars and the legend. Without them (and without the other panels)
    /// the maps fill the pane and pixels map linearly onto the camera's window.
    pub decorations: bool,
}

impl Panels {
    /// The panels `settings` ask for (decorations unless only the main map).
    pub fn of(settings: &super::settings::AllocMapSettings) -> Self {
        use super::settings::Panel;
        Self {
            occupancy: settings.has(Panel::Occupancy),
            context: settings.has(Panel::Context),
            decorations: !settings.only_main(),
        }
    }
}

/// One bin's cell: its map, occupancy bar and free bar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellLayout {
    pub map: egui::Rect,
    pub bar: Option<egui::Rect>,
    pub free: Option<egui::Rect>,
}

/// Where everything goes in a pane of a given size.
#[derive(Debug, Clone, PartialEq)]
pub struct PaneLayout {
    pub cells: Vec<CellLayout>,
    /// The stacked occupancy bar of all bins (binned maps with occupancy only).
    pub stacked: Option<egui::Rect>,
    pub context: Option<egui::Rect>,
}

pub const CONTEXT_WIDTH: f32 = 96.0;
pub const STACKED_HEIGHT: f32 = 22.0;
pub const FREE_WIDTH: f32 = 6.0;
const GAP: f32 = 4.0;

/// The layout of a pane of `size` points showing `bins` bins.
pub fn pane_layout(size: egui::Vec2, bins: usize, layout: BinLayout, panels: Panels) -> PaneLayout {
    let mut area = egui::Rect::from_min_size(egui::Pos2::ZERO, size);
    let context = (panels.context && size.x > 3.0 * CONTEXT_WIDTH).then(|| {
        let r = egui::Rect::from_min_max(
            egui::pos2(area.right() - CONTEXT_WIDTH, area.top()),
            area.max,
        );
        area.max.x -= CONTEXT_WIDTH + GAP;
        r
    });
    let stacked = (panels.occupancy && bins > 1 && size.y > 6.0 * STACKED_HEIGHT).then(|| {
        let r = egui::Rect::from_min_max(
            egui::pos2(area.left(), area.bottom() - STACKED_HEIGHT),
            area.max,
        );
        area.max.y -= STACKED_HEIGHT + GAP;
        r
    });
    let cells = cell_rects(area, bins, layout)
        .into_iter()
        .map(|mut cell| {
            let bar = panels.occupancy.then(|| {
                let h = (cell.height() * 0.2).clamp(4.0, 16.0);
                let r =
                    egui::Rect::from_min_max(egui::pos2(cell.left(), cell.bottom() - h), cell.max);
                cell.max.y -= h + 2.0;
                r
            });
            let free = (panels.decorations && cell.width() > 8.0 * FREE_WIDTH).then(|| {
                let r = egui::Rect::from_min_max(
                    egui::pos2(cell.right() - FREE_WIDTH, cell.top()),
                    cell.max,
                );
                cell.max.x -= FREE_WIDTH + 2.0;
                r
            });
            CellLayout {
                map: cell,
                bar,
                free,
            }
        })
        .collect();
    PaneLayout {
        cells,
        stacked,
        context,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn main_panel_alone_is_the_whole_picture() {
        let size = egui::vec2(640.0, 400.0);
        let none = Panels {
            occupancy: false,
            context: false,
            decorations: false,
        };
        let l = pane_layout(size, 1, BinLayout::Address, none);
        assert_eq!(l.cells.len(), 1);
        assert_eq!(
            l.cells[0].map,
            egui::Rect::from_min_size(egui::Pos2::ZERO, size)
        );
        assert!(l.cells[0].bar.is_none() && l.cells[0].free.is_none());
        assert!(l.stacked.is_none() && l.context.is_none());
    }

    #[test]
    fn panels_take_their_room_without_overlapping() {
        let size = egui::vec2(900.0, 600.0);
        let all = Panels {
            occupancy: true,
            context: true,
            decorations: true,
        };
        for layout in [BinLayout::Address, BinLayout::Time] {
            let l = pane_layout(size, 7, layout, all);
            let ctx = l.context.expect("a context view");
            let stacked = l.stacked.expect("a stacked bar for several bins");
            assert_eq!(ctx.right(), size.x);
            let mut parts = vec![ctx, stacked];
            for c in &l.cells {
                let bar = c.bar.expect("a bar per cell");
                let free = c.free.expect("a free bar per cell");
                assert!(bar.top() >= c.map.bottom() && free.left() >= c.map.right());
                parts.extend([c.map, bar, free]);
            }
            for (i, a) in parts.iter().enumerate() {
                assert!(a.min.x >= 0.0 && a.max.x <= size.x && a.max.y <= size.y);
                for b in &parts[..i] {
                    assert!(a.intersect(*b).area() <= 0.0, "{layout:?}: {a:?} and {b:?}");
                }
            }
        }
        // One bin: no stacked bar.
        assert!(pane_layout(size, 1, BinLayout::Time, all).stacked.is_none());
    }
}
