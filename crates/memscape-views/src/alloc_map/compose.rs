//! The allocation map's picture, composed in one place for the GUI pane and headless rendering:
//! one map layer per bin cell (with cushion cursors), the occupancy bars, the context view in
//! its own style, and the decorations around them.

use std::collections::HashMap;
use std::sync::Arc;

use memscape_render::alloc_map::occupancy::BarBlocks;
use memscape_render::alloc_map::{AllocBlockGpu, BarPart, CursorStyle, CushionCursor, CushionKind};
use memscape_trace::Trace;

use super::bar_integral::BarIntegral;
use super::bins::{BinBy, BinnedScene};
use super::camera::{Camera, events_at};
use super::colors::{Classes, ColorBy, SharedClasses};
use super::decorate::{DecorateInputs, decorate};
use super::layout::{Panels, binned_pane_layout};
use super::live_bar::LiveBar;
use super::scene::{AllocScene, TimeAxis};
use super::settings::{AllocMapSettings, Panel};
use super::stacked::stacked_window;
use crate::dataset::{AllocTraceData, Dataset};
use crate::error::{Context as _, Result};
use crate::label::Label;
use crate::picture::{
    BarLayer, CursorsOverlay, Layer, MapData, MapLayer, MapStyle, MapWindow, Picture,
};

/// Background of the allocation map's picture around the plots (sRGB).
pub const BACKGROUND: [u8; 4] = [27, 27, 30, 255];

/// Width of the cushion cursors in points.
pub const CURSOR_WIDTH: f32 = 15.0;

/// Colour of the cushion cursors.
pub const CURSOR_COLOR: [u8; 4] = [255, 250, 235, 255];

/// Slot of the context view's map layer (the cells have their bin's index).
pub const CONTEXT_SLOT: u32 = u32::MAX;
/// Slot of the stacked occupancy bar (the cells' bars have their bin's index).
pub const STACKED_SLOT: u32 = u32::MAX;

/// What a binning, colouring and time axis of the map is made of: the blocks sorted by bin and
/// coloured, and the occupancy bars.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wanted {
    pub by: BinBy,
    pub axis: TimeAxis,
    pub color_by: ColorBy,
    /// Events from which age is seen (only for [`ColorBy::Age`]; else 0).
    pub age_at: u64,
    /// The bins' waste and fragmentation curves (the `curves` panel).
    pub curves: bool,
    /// The unbinned bar on the event axis from its running integral ([`BarIntegral`]: a big
    /// trace's flat bar) instead of its intervals; other bars are built as without it.
    pub bar_integral: bool,
}

/// The blocks and bars of a [`Wanted`].
pub struct Built {
    pub wanted: Wanted,
    pub binned: Arc<BinnedScene>,
    pub blocks: Arc<Vec<AllocBlockGpu>>,
    /// The occupancy bars (when asked for); with `bar_integral`, one interval per bin (what
    /// the bands and a variant other than flat need while the intervals are not built).
    pub bar: Option<Arc<BarBlocks>>,
    /// The unbinned bar's running integral ([`Wanted::bar_integral`]), which draws the flat bar.
    pub bar_integral: Option<Arc<BarIntegral>>,
    /// Each bin's waste and fragmentation curves (when asked for).
    pub curves: Option<Arc<Vec<memscape_trace::pools::GroupCurves>>>,
    /// A live recording's unbinned bar, for the next snapshot's builder to continue
    /// ([`MapBuilder::following`]).
    pub live_bar: Option<Arc<LiveBar>>,
}

/// Builds binnings, colours and bars, keeping each binning and its bars for the next request
/// (the GUI's worker thread owns one; headless rendering makes one per picture).
#[derive(Default)]
pub struct MapBuilder {
    binned: HashMap<BinBy, Arc<BinnedScene>>,
    bars: HashMap<(BinBy, TimeAxis), Arc<BarBlocks>>,
    curves: HashMap<BinBy, Arc<Vec<memscape_trace::pools::GroupCurves>>>,
    /// The unbinned bar on the event axis as its integral, with its one-interval stand-in.
    integral: Option<(Arc<BarBlocks>, Arc<BarIntegral>)>,
    /// On a live recording's snapshot: the unbinned bar continued from the previous
    /// snapshot's (its merged rows and intervals kept), the last one made.
    live: Option<LiveBars>,
}

/// A live snapshot's builder's unbinned bar: the previous snapshot's until one is made.
struct LiveBars {
    last: Option<Arc<LiveBar>>,
}

impl MapBuilder {
    /// The builder of a live recording's snapshot following the one `previous` was made on
    /// (None: the first, or one not continued): its unbinned bar continues `previous`.
    pub fn following(previous: Option<Arc<LiveBar>>) -> Self {
        Self {
            live: Some(LiveBars { last: previous }),
            ..Self::default()
        }
    }

    /// The unbinned bar on `axis`, continued from the last live bar (None unless following a
    /// live recording and unbinned).
    fn live_bar(
        &mut self,
        binned: &BinnedScene,
        scene: &AllocScene,
        axis: TimeAxis,
    ) -> Option<Arc<BarBlocks>> {
        let live = self.live.as_mut()?;
        let started = std::time::Instant::now();
        let from = live.last.as_deref();
        let (bar, continued) = LiveBar::build(
            binned,
            axis,
            scene.time_extent(axis),
            scene.events_extent,
            from.filter(|f| f.axis() == axis),
        )?;
        tracing::debug!(
            target: "memscape::live",
            rows_continued = continued.steps,
            intervals_continued = ?continued.intervals,
            arrays_reused = continued.arrays_reused,
            intervals = bar.bar().blocks.len(),
            ms = started.elapsed().as_secs_f64() * 1e3,
            "allocation map worker: live bar"
        );
        let blocks = bar.bar().clone();
        live.last = Some(Arc::new(bar));
        Some(blocks)
    }

    /// The unbinned bar on the event axis as its integral, and a stand-in of one interval
    /// per bin (its bands: what the layout and the stacked bar's scroll read).
    fn integral(
        &mut self,
        binned: &BinnedScene,
        scene: &AllocScene,
    ) -> (Arc<BarBlocks>, Arc<BarIntegral>) {
        self.integral
            .get_or_insert_with(|| {
                let end = scene.bar_time_extent(TimeAxis::Events);
                let steps: Vec<_> = (0..binned.bins.len())
                    .map(|k| memscape_render::alloc_map::occupancy::OccupancySteps {
                        start: 0,
                        end,
                        capacity: binned.bins[k].capacity,
                        ..Default::default()
                    })
                    .collect();
                let info = &binned.bins[0];
                (
                    Arc::new(BarBlocks::build(&steps, &[1.0])),
                    Arc::new(BarIntegral::build(
                        binned.metrics.clone(),
                        &info.series,
                        end,
                        info.capacity,
                    )),
                )
            })
            .clone()
    }

    /// The blocks of `wanted`, and its bars `with_bars`.
    pub fn build(
        &mut self,
        trace: &Trace,
        scene: &AllocScene,
        wanted: Wanted,
        with_bars: bool,
    ) -> Built {
        let binned = self
            .binned
            .entry(wanted.by)
            .or_insert_with(|| Arc::new(BinnedScene::build(trace, scene, wanted.by)))
            .clone();
        let bar_integral = (with_bars
            && wanted.bar_integral
            && wanted.by == BinBy::None
            && wanted.axis == TimeAxis::Events
            && binned.bins.len() == 1
            && self.live.is_none())
        .then(|| self.integral(&binned, scene));
        let bar = with_bars.then(|| {
            if let Some((bar, _)) = &bar_integral {
                return bar.clone();
            }
            if let Some(bar) = self.bars.get(&(wanted.by, wanted.axis)) {
                return bar.clone();
            }
            let bar = self
                .live_bar(&binned, scene, wanted.axis)
                .unwrap_or_else(|| {
                    Arc::new(binned.bar_blocks(wanted.axis, scene.bar_time_extent(wanted.axis)))
                });
            self.bars.insert((wanted.by, wanted.axis), bar.clone());
            bar
        });
        let age_at = if wanted.color_by == ColorBy::Age {
            wanted.age_at
        } else {
            scene.events_extent
        };
        let curves = wanted.curves.then(|| {
            self.curves
                .entry(wanted.by)
                .or_insert_with(|| Arc::new(super::curves::bin_curves(trace, &binned)))
                .clone()
        });
        // The unbinned map in the scene's own colouring is the scene's blocks (coloured when
        // it was made): shared, not coloured again (a live snapshot's pane would otherwise
        // resolve every block's site a second time).
        let blocks =
            if wanted.by == BinBy::None
                && binned.position.is_none()
                && Arc::ptr_eq(&binned.blocks, &scene.blocks)
                && wanted.color_by == scene.color_by
                && age_at == scene.events_extent
            {
                scene.blocks.clone()
            } else {
                let colors = scene.block_colors(trace, wanted.color_by, &binned.block_bin, age_at);
                // Blocks already coloured so stay the same `Arc`: no second copy, and nothing
                // drawn from them is computed again.
                let unchanged =
                    binned.blocks.iter().enumerate().all(|(p, b)| {
                        binned.block_at(p).and_then(|i| colors.get(i)).is_none_or(
                            |&(color, attr)| b.color == color && b.attr.to_bits() == attr.to_bits(),
                        )
                    });
                if unchanged {
                    binned.blocks.clone()
                } else {
                    Arc::new(binned.colored(&colors))
                }
            };
        Built {
            wanted,
            binned,
            blocks,
            bar,
            bar_integral: bar_integral.map(|(_, integral)| integral),
            curves,
            live_bar: self.live.as_ref().and_then(|l| l.last.clone()),
        }
    }
}

/// Everything the picture is made of besides the settings: the binning and its coloured blocks,
/// the camera, and what the pane adds (time cursor, focus, pinned block).
pub struct MapInputs<'a> {
    pub trace: &'a Trace,
    pub scene: &'a AllocScene,
    pub binned: &'a BinnedScene,
    /// The blocks of `binned`, coloured, on the settings' time axis, with the selection.
    pub data: Arc<MapData>,
    pub bars: Option<Arc<BarBlocks>>,
    /// The unbinned bar's running integral, which draws it in the flat variant
    /// ([`Built::bar_integral`]).
    pub bar_integral: Option<Arc<BarIntegral>>,
    /// Each bin's waste and fragmentation curves (the `curves` panel).
    pub curves: Option<Arc<Vec<memscape_trace::pools::GroupCurves>>>,
    pub camera: Camera,
    /// The colouring shown (the settings' or the dataset's default).
    pub color_by: ColorBy,
    /// The linked time cursor, on the time axis.
    pub time_cursor: Option<u64>,
    /// Free bars show the state after this many events.
    pub free_at_events: u64,
    /// The bin the context view shows.
    pub focus_bin: usize,
    /// The pinned block's upload position.
    pub pinned: Option<usize>,
    /// Events from which [`ColorBy::Age`] is seen (the time cursor, else the trace's end).
    pub age_at: u64,
    /// The palette classes the blocks were coloured with (the legend's too).
    pub classes: &'a Classes,
}

/// The allocation map of `inputs` as `settings` say, in a picture of `size` points.
pub fn picture(settings: &AllocMapSettings, inputs: &MapInputs<'_>, size: egui::Vec2) -> Picture {
    let binned = inputs.binned;
    let panels = Panels::of(settings);
    let layout = binned_pane_layout(size, binned, settings.layout, panels);
    let style = MapStyle {
        alpha: settings.alpha,
        cushion: settings.cushion.kind(),
        cushion_strength: settings.relief,
        color_mode: inputs.color_by.mode(),
    };
    let cursors = (!settings.cursors.is_empty()).then(|| CursorsOverlay {
        cursors: settings
            .cursors
            .iter()
            .map(|&t| CushionCursor::new(t, CURSOR_COLOR))
            .collect(),
        style: CursorStyle {
            width_px: CURSOR_WIDTH,
            opacity: settings.cursor_opacity.clamp(0.0, 1.0),
            ..CursorStyle::default()
        },
    });
    let mut picture = Picture::new(size, BACKGROUND);
    let map = |slot: u32, rect: egui::Rect, bin: usize, window: MapWindow, style: MapStyle| {
        let info = binned.bins.get(bin);
        MapLayer {
            slot,
            rect,
            data: inputs.data.clone(),
            window,
            extent: info.map_or(1, |b| b.collapsed_extent),
            range: info.map_or(0..0, |b| b.range.clone()),
            style,
            cursors: None,
        }
    };
    let t_extent = inputs.scene.frame_time_end(settings.time);
    // Each cell's part of the camera: process cells span their own process's life.
    let windows = binned.cell_windows(&inputs.camera, settings.time, t_extent, settings.layout);
    let window_of = |k: usize| windows.get(k).copied().unwrap_or(inputs.camera);
    for (k, cell) in layout.cells.iter().enumerate() {
        let mut layer = map(k as u32, cell.map, k, window_of(k), style);
        layer.cursors = cursors.as_ref().map(|c| CursorsOverlay {
            cursors: c.cursors.clone(),
            style: c.style,
        });
        picture.layers.push(Layer::Map(layer));
    }
    if let Some(rect) = layout.context {
        // The whole trace, flat and lighter: the overview, not the detail.
        let context_style = MapStyle {
            alpha: style.alpha.min(0.5),
            cushion: CushionKind::None,
            ..style
        };
        let bin = inputs.focus_bin.min(binned.bins.len().saturating_sub(1));
        picture.layers.push(Layer::Map(map(
            CONTEXT_SLOT,
            rect,
            bin,
            binned.cell_window(
                bin,
                &Camera::fit(t_extent),
                settings.time,
                t_extent,
                settings.layout,
            ),
            context_style,
        )));
    }
    // The bins the stacked bar shows (a slice of the stack when they do not all fit).
    let stacked = match (layout.stacked, &inputs.bars) {
        (Some(rect), Some(bars)) if panels.occupancy => Some(stacked_window(
            &bars.bands,
            settings.stacked_from.saturating_sub(1) as usize,
            rect.height(),
            layout.stacked_full_height,
        )),
        _ => None,
    };
    if let (true, Some(bars)) = (panels.occupancy, &inputs.bars) {
        let variant = settings.occupancy.variant();
        let mut bar_rects: Vec<(u32, egui::Rect, Option<usize>)> = layout
            .cells
            .iter()
            .enumerate()
            .filter_map(|(k, c)| Some((k as u32, c.bar?, Some(k))))
            .collect();
        if let Some(rect) = layout.stacked {
            bar_rects.push((STACKED_SLOT, rect, None));
        }
        for (slot, rect, bin) in bar_rects {
            let stack_slice = match (bin, &stacked) {
                (None, Some(w)) => match w.part {
                    BarPart::Slice(lo, hi) => Some((lo, hi)),
                    _ => None,
                },
                _ => None,
            };
            picture.layers.push(Layer::Bar(BarLayer {
                slot,
                rect,
                bars: bars.clone(),
                integral: bin.and(inputs.bar_integral.clone()),
                window: bin.map_or(inputs.camera, window_of),
                style,
                variant,
                bin,
                stack_slice,
            }));
        }
    }
    if let (true, Some(curves)) = (panels.curves, &inputs.curves) {
        for (k, (cell, c)) in layout.cells.iter().zip(curves.iter()).enumerate() {
            if let Some(strip) = cell.curves {
                super::curves::draw(&mut picture, strip, c, &window_of(k), settings.time);
            }
        }
    }
    if inputs.data.lod.is_none() {
        let mut maps: Vec<(egui::Rect, MapWindow)> = layout
            .cells
            .iter()
            .enumerate()
            .map(|(k, c)| (c.map, window_of(k)))
            .collect();
        if let Some(rect) = layout.context {
            let bin = inputs.focus_bin.min(binned.bins.len().saturating_sub(1));
            let whole = Camera::fit(t_extent);
            maps.push((
                rect,
                binned.cell_window(bin, &whole, settings.time, t_extent, settings.layout),
            ));
        }
        mark_unread(&mut picture, inputs.scene, settings.time, &maps);
    }
    if panels.decorations {
        decorate(
            &mut picture,
            &DecorateInputs {
                layout: &layout,
                binned,
                scene: inputs.scene,
                trace: inputs.trace,
                cam: &inputs.camera,
                windows: &windows,
                axis: settings.time,
                color_by: inputs.color_by,
                ramp: inputs.scene.color_ramp(inputs.color_by, inputs.age_at),
                occupancy: panels.occupancy.then_some(settings.occupancy),
                free_at_events: inputs.free_at_events,
                time_cursor: inputs.time_cursor,
                focus_bin: inputs.focus_bin,
                pinned: inputs.pinned,
                highlighted: inputs.data.selection.is_some(),
                stacked: stacked.as_ref(),
                classes: inputs.classes,
            },
        );
    }
    picture
}

/// The allocation trace with addresses of `dataset`, or why it has no allocation map.
pub fn trace_of(dataset: &Dataset) -> Result<(&AllocTraceData, &AllocScene)> {
    let t = dataset.alloc_trace().with_context(|| {
        format!(
            "{}: the allocation map needs an allocation trace",
            dataset.name
        )
    })?;
    let scene = t.scene.as_ref().with_context(|| {
        format!(
            "{}: this trace has no addresses, so it has no allocation map",
            dataset.name
        )
    })?;
    Ok((t, scene))
}

fn scene_trace(dataset: &Dataset) -> Result<&Trace> {
    Ok(&trace_of(dataset)?.0.trace)
}

/// The camera of the settings' ranges (the whole trace where they are unset).
pub fn camera_of(
    dataset: &Dataset,
    scene: &AllocScene,
    settings: &AllocMapSettings,
) -> Result<Camera> {
    let t_extent = scene.time_extent(settings.time);
    let (t0, t1) = match settings.range_time {
        Some(r) => {
            crate::ensure!(r.start < r.end, "--range-time {r}: START must be below END");
            (r.start, r.end)
        }
        None => (0, t_extent),
    };
    match settings.range_addr {
        None => Ok(Camera::of_ranges(t0, t1, 0, 1, 1)),
        Some(_) if settings.bins_for(scene_trace(dataset)?) != BinBy::None => crate::bail!(
            "--range-addr applies to the map without --bins (each bin has its own address axis)"
        ),
        Some(r) => {
            crate::ensure!(r.start < r.end, "--range-addr {r}: START must be below END");
            let collapse = |a: u64| {
                scene.collapse(a).with_context(|| {
                    format!(
                        "--range-addr: {a:#x} is not inside a used region of {}",
                        dataset.name
                    )
                })
            };
            let (y0, y1) = (collapse(r.start)?, collapse(r.end - 1)? + 1);
            Ok(Camera::of_ranges(
                t0,
                t1,
                y0,
                y1.max(y0 + 1),
                scene.collapsed_extent,
            ))
        }
    }
}

/// The allocation map of `dataset` as `settings` say, at `size` points (headless: everything
/// built at once).
pub fn compose(
    dataset: &Dataset,
    settings: &AllocMapSettings,
    size: egui::Vec2,
) -> Result<Picture> {
    compose_with(dataset, settings, size, None)
}

/// The names of `dataset`'s categories that pick colours under `settings` (threads, processes,
/// bins; see [`super::colors::category_names`]), for classes shared with another map.
pub fn category_names(
    dataset: &Dataset,
    settings: &AllocMapSettings,
) -> Result<Option<Vec<String>>> {
    let only;
    let dataset = match &settings.process {
        Some(select) => {
            only = crate::processes::restrict(dataset, select)?;
            &only
        }
        None => dataset,
    };
    let (t, scene) = trace_of(dataset)?;
    let color_by = settings.color.unwrap_or(scene.color_by);
    // Only colouring by bin needs the binning.
    let binned = (color_by == ColorBy::Bin)
        .then(|| BinnedScene::build(&t.trace, scene, settings.bins_for(&t.trace)));
    Ok(super::colors::category_names(
        &t.trace,
        binned.as_ref(),
        color_by,
    ))
}

/// [`compose`], threads, processes and bins coloured by the classes `shared` gives their names
/// (the difference view's maps: one colour per name in both).
pub fn compose_with(
    dataset: &Dataset,
    settings: &AllocMapSettings,
    size: egui::Vec2,
    shared: Option<&SharedClasses>,
) -> Result<Picture> {
    if let Some(select) = &settings.process {
        let only = crate::processes::restrict(dataset, select)?;
        let settings = AllocMapSettings {
            process: None,
            ..settings.clone()
        };
        return compose_with(&only, &settings, size, shared);
    }
    let (t, scene) = trace_of(dataset)?;
    let camera = camera_of(dataset, scene, settings)?;
    let color_by = settings.color.unwrap_or(scene.color_by);
    let built = MapBuilder::default().build(
        &t.trace,
        scene,
        Wanted {
            by: settings.bins_for(&t.trace),
            axis: settings.time,
            color_by,
            age_at: scene.events_extent,
            curves: settings.has(Panel::Curves),
            // Headless pictures keep the exact bar (their goldens).
            bar_integral: false,
        },
        settings.has(Panel::Occupancy),
    );
    let binned = &built.binned;
    let classes = shared
        .zip(super::colors::category_names(
            &t.trace,
            Some(binned),
            color_by,
        ))
        .map_or_else(Classes::default, |(s, names)| s.classes(&names));
    let blocks = if classes == Classes::default() {
        built.blocks.clone()
    } else {
        let colors = scene.block_colors_in(
            &t.trace,
            color_by,
            &binned.block_bin,
            scene.events_extent,
            &classes,
        );
        Arc::new(binned.colored(&colors))
    };
    let t1 = (camera.t0 + camera.t_span).max(0.0) as u64;
    Ok(picture(
        settings,
        &MapInputs {
            trace: &t.trace,
            scene,
            binned,
            data: Arc::new(MapData {
                blocks,
                times: binned.times(settings.time).clone(),
                selection: None,
                // A big trace's map layers draw from its level-of-detail index (tours,
                // `present` and headless pictures alike).
                lod: t
                    .path
                    .as_deref()
                    .filter(|_| super::lod::unsupported_map(settings, &t.trace).is_none())
                    .and_then(super::lod::shared),
                refiner: None,
                accumulate: None,
            }),
            bars: built.bar.clone(),
            bar_integral: built.bar_integral.clone(),
            curves: built.curves.clone(),
            camera,
            color_by,
            time_cursor: None,
            free_at_events: events_at(&t.trace, settings.time, t1),
            focus_bin: binned.largest_bin(),
            pinned: None,
            age_at: scene.events_extent,
            classes: &classes,
        },
        size,
    ))
}

/// Veils the part of each map (`maps`: its rectangle and window) after the last allocation
/// read of a scene read in part (`AllocScene::known_until`: a dataset opened with its first
/// blocks only), with a line at its start and, where there is room, what comes: until the
/// query engine's index (every block) draws the map, the blocks after it are not known.
fn mark_unread(
    picture: &mut Picture,
    scene: &AllocScene,
    axis: TimeAxis,
    maps: &[(egui::Rect, MapWindow)],
) {
    use memscape_render::shapes::{Geometry, Shape};
    let Some(known) = scene.known_until else {
        return;
    };
    let until = match axis {
        TimeAxis::Events => known[0],
        TimeAxis::Wall => known[1],
    } as f64;
    for (rect, window) in maps {
        let u = (until - window.t0) / window.t_span.max(f64::MIN_POSITIVE);
        if u >= 1.0 {
            continue;
        }
        let x = rect.left() + (u.max(0.0) as f32) * rect.width();
        picture.shapes.push(Shape::new(
            Geometry::Rect {
                min: [x, rect.top()],
                max: [rect.right(), rect.bottom()],
                corner_px: 0.0,
            },
            UNREAD_VEIL,
        ));
        if u > 0.0 {
            picture.shapes.push(Shape::new(
                Geometry::Segment {
                    a: [x, rect.top()],
                    b: [x, rect.bottom()],
                    width_px: 1.5,
                },
                UNREAD_EDGE,
            ));
        }
        let room = rect.right() - x;
        if room > 160.0 && rect.height() > 40.0 {
            let text = if room > 330.0 {
                "not read yet: the query engine's map of every block replaces this"
            } else {
                "not read yet"
            };
            picture.labels.push(Label::new(
                egui::pos2((x + rect.right()) / 2.0, rect.center().y),
                text,
                12.0,
                egui::Color32::from_rgb(200, 204, 214),
                egui::Align2::CENTER_CENTER,
            ));
        }
    }
}

/// Over the blocks not read: a grey veil and its edge.
const UNREAD_VEIL: [u8; 4] = [120, 124, 136, 70];
const UNREAD_EDGE: [u8; 4] = [200, 204, 214, 200];
