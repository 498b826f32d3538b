//! Where everything of the allocation map's picture goes in a pane of a given size: the bin
//! cells with their occupancy and free bars, the stacked bar of all bins, the context view.

use super::camera::{BinLayout, cell_rects, weighted_cell_rects};
use super::stacked::TRACK_WIDTH;

/// Which parts of the pane are drawn besides the maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Panels {
    /// An occupancy bar under each bin (and the stacked bar of all bins when binned).
    pub occupancy: bool,
    /// The context view at the right.
    pub context: bool,
    /// A strip of waste and fragmentation curves under each bin.
    pub curves: bool,
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
            curves: settings.has(Panel::Curves),
            decorations: !settings.only_main(),
        }
    }
}

/// One bin's cell: its title strip, map, occupancy bar and free bar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellLayout {
    /// The bin's name: a strip above its map (grid cells tall enough), or in the time layout
    /// the cell's slice of the names' column left of the maps; else the name sits on the map.
    pub title: Option<egui::Rect>,
    pub map: egui::Rect,
    /// Its occupancy bar, under the map and on the map's time axis (same left and right).
    pub bar: Option<egui::Rect>,
    pub free: Option<egui::Rect>,
    /// Its waste and fragmentation curves, under the bar (on the map's time axis too).
    pub curves: Option<egui::Rect>,
}

impl CellLayout {
    /// Whether the title lies in the names' column beside the map rather than above it.
    pub fn title_beside(&self) -> bool {
        self.title.is_some_and(|t| t.right() <= self.map.left())
    }
}

/// Where everything goes in a pane of a given size.
#[derive(Debug, Clone, PartialEq)]
pub struct PaneLayout {
    pub cells: Vec<CellLayout>,
    /// The stacked occupancy bar of all bins (binned maps with occupancy only), at least
    /// [`STACKED_PER_BIN`] points per bin (up to a quarter of the pane). In the time layout it
    /// spans the maps' time axis exactly (the names' column is left of both).
    pub stacked: Option<egui::Rect>,
    /// The time axis under the stacked bar (its ticks' labels, beside the bar, not over it).
    pub stacked_axis: Option<egui::Rect>,
    /// The bins' names, left of the stacked bar (with decorations).
    pub stacked_labels: Option<egui::Rect>,
    /// The scroll track right of the stacked bar, in the free bars' column (with decorations;
    /// drawn when the bar scrolls).
    pub stacked_track: Option<egui::Rect>,
    /// Height of the whole stack (every bin at least half of [`STACKED_PER_BIN`]): more than
    /// the bar's when the bar scrolls (`stacked::stacked_window`).
    pub stacked_full_height: f32,
    pub context: Option<egui::Rect>,
    /// The colour legend's band above the maps (with decorations, in pictures big enough).
    pub legend: Option<egui::Rect>,
}

/// Height of the legend's band: a title and three rows of swatches, or a ramp with ticks; in
/// pictures under 300 points tall one row ([`LEGEND_COMPACT`]).
pub const LEGEND_HEIGHT: f32 = 48.0;
pub const LEGEND_COMPACT: f32 = 30.0;
/// Height of a grid cell's title strip.
pub const TITLE_HEIGHT: f32 = 15.0;
pub const CONTEXT_WIDTH: f32 = 96.0;
pub const STACKED_HEIGHT: f32 = 22.0;
/// Height of the stacked bar per bin: bands get at least half of it (`BinnedScene::bar_blocks`);
/// past a quarter of the pane the bar scrolls (`stacked::stacked_window`).
pub const STACKED_PER_BIN: f32 = 20.0;
/// Width of the bins' names left of the stacked bar (and, in the time layout, of the maps).
pub const LABELS_WIDTH: f32 = 84.0;
/// Height of the time axis under the stacked bar.
pub const AXIS_HEIGHT: f32 = 15.0;
pub const FREE_WIDTH: f32 = 6.0;
const GAP: f32 = 4.0;
/// Gap between a map and its free bar.
const FREE_GAP: f32 = 2.0;

/// The layout of a pane of `size` points showing `bins` bins in equal cells.
pub fn pane_layout(size: egui::Vec2, bins: usize, layout: BinLayout, panels: Panels) -> PaneLayout {
    pane_layout_weighted(size, bins, None, layout, panels)
}

/// The layout of a pane of `size` points showing `binned`'s bins: the one the picture, the
/// pane's picking and the tours share (process cells sized by their peaks).
pub fn binned_pane_layout(
    size: egui::Vec2,
    binned: &super::bins::BinnedScene,
    layout: BinLayout,
    panels: Panels,
) -> PaneLayout {
    let weights = binned.cell_weights();
    pane_layout_weighted(
        size,
        binned.bins.len().max(1),
        weights.as_deref(),
        layout,
        panels,
    )
}

/// [`pane_layout`] with the grid's cells sized by `weights` (one a bin, largest first:
/// [`weighted_cell_rects`]) when given, of the right length and the layout is the grid
/// (`BinnedScene::cell_weights`: process bins).
pub fn pane_layout_weighted(
    size: egui::Vec2,
    bins: usize,
    weights: Option<&[f64]>,
    layout: BinLayout,
    panels: Panels,
) -> PaneLayout {
    let mut area = egui::Rect::from_min_size(egui::Pos2::ZERO, size);
    let context = (panels.context && size.x > 3.0 * CONTEXT_WIDTH).then(|| {
        let r = egui::Rect::from_min_max(
            egui::pos2(area.right() - CONTEXT_WIDTH, area.top()),
            area.max,
        );
        area.max.x -= CONTEXT_WIDTH + GAP;
        r
    });
    // The stacked bar's rows: every bin at its minimum, up to a quarter of the pane (then it
    // scrolls). Its columns follow the maps' (below).
    let full_height = (bins as f32 * STACKED_PER_BIN).max(STACKED_HEIGHT);
    let labelled = panels.decorations && area.width() > 4.0 * LABELS_WIDTH;
    let stacked_rows = (panels.occupancy && bins > 1 && size.y > 6.0 * STACKED_HEIGHT).then(|| {
        let height = full_height.min(0.25 * size.y).max(STACKED_HEIGHT);
        let axis = if panels.decorations { AXIS_HEIGHT } else { 0.0 };
        let rows = (area.bottom() - axis - height, area.bottom() - axis);
        area.max.y -= height + axis + GAP;
        rows
    });
    let legend = (panels.decorations && size.y >= 120.0 && area.width() >= 240.0).then(|| {
        let h = if size.y >= 300.0 {
            LEGEND_HEIGHT
        } else {
            LEGEND_COMPACT
        };
        let r = egui::Rect::from_min_size(area.min, egui::vec2(area.width(), h));
        area.min.y += h + GAP;
        r
    });
    // In the time layout the bins' names stand in a column left of the maps and of the stacked
    // bar, so that the maps' and the bar's time axes span the same x range.
    let names_column = labelled && bins > 1 && layout == BinLayout::Time;
    let mut cells_area = area;
    if names_column {
        cells_area.min.x += LABELS_WIDTH;
    }
    let titled = panels.decorations && bins > 1 && layout == BinLayout::Address;
    let rects = match weights {
        Some(w) if w.len() == bins && bins > 1 && layout == BinLayout::Address => {
            weighted_cell_rects(cells_area, w)
        }
        _ => cell_rects(cells_area, bins, layout),
    };
    let cells: Vec<CellLayout> = rects
        .into_iter()
        .map(|mut cell| {
            let beside = names_column.then(|| {
                egui::Rect::from_min_max(
                    egui::pos2(cell.left() - LABELS_WIDTH, cell.top()),
                    egui::pos2(cell.left() - GAP, cell.bottom()),
                )
            });
            let above = (titled && cell.height() >= 4.0 * TITLE_HEIGHT).then(|| {
                let r = egui::Rect::from_min_size(cell.min, egui::vec2(cell.width(), TITLE_HEIGHT));
                cell.min.y += TITLE_HEIGHT;
                r
            });
            // The free bar's column first: the bar and curves under the map keep its x range.
            let free_x = (panels.decorations && cell.width() > 8.0 * FREE_WIDTH).then(|| {
                cell.max.x -= FREE_WIDTH + FREE_GAP;
                cell.right() + FREE_GAP
            });
            let curves = (panels.curves && cell.height() >= 60.0).then(|| {
                let h = (cell.height() * 0.22).clamp(12.0, 40.0);
                let r =
                    egui::Rect::from_min_max(egui::pos2(cell.left(), cell.bottom() - h), cell.max);
                cell.max.y -= h + 2.0;
                r
            });
            let bar = panels.occupancy.then(|| {
                let h = (cell.height() * 0.2).clamp(4.0, 16.0);
                let r =
                    egui::Rect::from_min_max(egui::pos2(cell.left(), cell.bottom() - h), cell.max);
                cell.max.y -= h + 2.0;
                r
            });
            let free = free_x.map(|x| {
                egui::Rect::from_min_max(
                    egui::pos2(x, cell.top()),
                    egui::pos2(x + FREE_WIDTH, cell.bottom()),
                )
            });
            CellLayout {
                title: beside.or(above),
                map: cell,
                bar,
                free,
                curves,
            }
        })
        .collect();
    // The stacked bar: on the maps' time axis in the time layout; across the pane right of
    // its names in the grid (whose columns each have their own time axis), leaving the free
    // bars' column at the right for its scroll track.
    let stacked = stacked_rows.map(|(top, bottom)| {
        let (left, right) = match cells.first() {
            Some(c) if layout == BinLayout::Time => (c.map.left(), c.map.right()),
            _ => (
                area.left() + if labelled { LABELS_WIDTH } else { 0.0 },
                area.right()
                    - if panels.decorations {
                        FREE_WIDTH + FREE_GAP
                    } else {
                        0.0
                    },
            ),
        };
        egui::Rect::from_min_max(egui::pos2(left, top), egui::pos2(right, bottom))
    });
    let stacked_labels = stacked.filter(|_| labelled).map(|bar| {
        egui::Rect::from_min_max(
            egui::pos2(bar.left() - LABELS_WIDTH, bar.top()),
            egui::pos2(bar.left() - GAP, bar.bottom() + AXIS_HEIGHT),
        )
    });
    let stacked_axis = stacked.filter(|_| panels.decorations).map(|bar| {
        egui::Rect::from_min_max(
            egui::pos2(bar.left(), bar.bottom()),
            egui::pos2(bar.right(), bar.bottom() + AXIS_HEIGHT),
        )
    });
    let stacked_track = stacked
        .filter(|bar| panels.decorations && bar.right() + FREE_GAP + TRACK_WIDTH <= area.right())
        .map(|bar| {
            egui::Rect::from_min_max(
                egui::pos2(bar.right() + FREE_GAP, bar.top()),
                egui::pos2(bar.right() + FREE_GAP + TRACK_WIDTH, bar.bottom()),
            )
        });
    PaneLayout {
        cells,
        stacked,
        stacked_axis,
        stacked_labels,
        stacked_track,
        stacked_full_height: full_height,
        context,
        legend,
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
            curves: false,
            decorations: false,
        };
        let l = pane_layout(size, 1, BinLayout::Address, none);
        assert_eq!(l.cells.len(), 1);
        assert_eq!(
            l.cells[0].map,
            egui::Rect::from_min_size(egui::Pos2::ZERO, size)
        );
        assert!(l.cells[0].bar.is_none() && l.cells[0].free.is_none());
        assert!(l.stacked.is_none() && l.context.is_none() && l.legend.is_none());
    }

    #[test]
    fn panels_take_their_room_without_overlapping() {
        let size = egui::vec2(900.0, 600.0);
        let all = Panels {
            occupancy: true,
            context: true,
            curves: true,
            decorations: true,
        };
        for layout in [BinLayout::Address, BinLayout::Time] {
            let l = pane_layout(size, 7, layout, all);
            let ctx = l.context.expect("a context view");
            let stacked = l.stacked.expect("a stacked bar for several bins");
            assert_eq!(ctx.right(), size.x);
            let legend = l.legend.expect("a legend band");
            let axis = l.stacked_axis.expect("a time axis under the stacked bar");
            let labels = l.stacked_labels.expect("bin names beside the stacked bar");
            assert!(stacked.height() >= 7.0 * STACKED_PER_BIN, "{stacked:?}");
            assert_eq!(l.stacked_full_height, stacked.height(), "seven bins fit");
            let track = l.stacked_track.expect("room for the scroll track");
            let mut parts = vec![ctx, stacked, legend, axis, labels, track];
            if layout == BinLayout::Time {
                // One time axis: the names' column left of the maps and the bar alike.
                for c in &l.cells {
                    let spans = [Some(c.map), c.bar, c.curves];
                    for r in spans.into_iter().flatten() {
                        assert_eq!((r.left(), r.right()), (stacked.left(), stacked.right()));
                    }
                    assert!(c.title_beside(), "{c:?}");
                    parts.push(c.title.expect("a name beside the map"));
                }
            }
            for c in &l.cells {
                if layout == BinLayout::Address {
                    let title = c.title.expect("grid cells have title strips");
                    assert!(title.bottom() <= c.map.top());
                    parts.push(title);
                }
                let bar = c.bar.expect("a bar per cell");
                let free = c.free.expect("a free bar per cell");
                assert!(bar.top() >= c.map.bottom() && free.left() >= c.map.right());
                parts.extend([c.map, bar, free]);
                if let Some(curves) = c.curves {
                    assert!(curves.top() >= bar.bottom());
                    parts.push(curves);
                }
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
        // Forty bins: the bar takes a quarter of the pane and scrolls through the stack.
        let l = pane_layout(size, 40, BinLayout::Time, all);
        let stacked = l.stacked.expect("a stacked bar");
        assert_eq!(stacked.height(), 0.25 * size.y);
        assert_eq!(l.stacked_full_height, 40.0 * STACKED_PER_BIN);
    }
}
