//! A view's picture as data, what every view's `compose` returns: a background, GPU layers
//! (allocation maps, occupancy bars, polar morphs, shapes in world units with their camera),
//! shapes in points and labels, all in points from the picture's top left.
//!
//! One picture, three painters: the GUI paints it into a pane through [`crate::gpu`] (one egui
//! paint callback; uploads kept per pane), `memscape render`, tours and `present` into an image
//! through [`crate::headless`], and an SVG export can walk the same layers (shapes and labels as
//! elements, GPU layers as embedded images). Layers draw in order, then `shapes`, then `labels`.

use std::ops::Range;
use std::sync::Arc;

use memscape_render::alloc_map::{
    AllocBlockGpu, AllocMapView, BarBlocks, BlockTimeGpu, ColorMode, CursorStyle, CushionCursor,
    CushionKind, OccupancyVariant, SelectionBits,
};
use memscape_render::polar_morph::{PolarArcGpu, PolarMorphView, PolarPointGpu};
use memscape_render::shapes::{Shape, ShapesView};

use crate::label::Label;

#[derive(Default)]
pub struct Picture {
    /// The size it was composed for, in points.
    pub size: egui::Vec2,
    /// Fills the whole picture first (sRGB); None: whatever is behind (a pane's own fill).
    pub background: Option<[u8; 4]>,
    /// GPU layers, drawn in order under `shapes`.
    pub layers: Vec<Layer>,
    /// Shapes in points, over the layers.
    pub shapes: Vec<Shape>,
    /// Text over everything.
    pub labels: Vec<Label>,
    /// What computed the numbers drawn, when not memscape's own in-memory analyses (the query
    /// engine): the SVG's `<desc>`, so that an exported picture keeps it.
    pub provenance: Option<String>,
}

impl Picture {
    /// An empty picture of `size` points on `background`.
    pub fn new(size: egui::Vec2, background: [u8; 4]) -> Self {
        Self {
            size,
            background: Some(background),
            ..Self::default()
        }
    }

    /// Adds `other`'s layers, shapes and labels over this picture's.
    pub fn extend(&mut self, other: Picture) {
        self.layers.extend(other.layers);
        self.shapes.extend(other.shapes);
        self.labels.extend(other.labels);
    }

    /// The picture's rectangle in its own points.
    pub fn rect(&self) -> egui::Rect {
        egui::Rect::from_min_size(egui::Pos2::ZERO, self.size)
    }

    /// Everything moved by `d` points (a picture placed inside a larger one); layer slots
    /// get `slot_bits` XOR-ed in so that two pictures' layers keep apart when combined.
    pub fn translate(&mut self, d: egui::Vec2, slot_bits: u32) {
        use memscape_render::shapes::Geometry;
        let move_point = |p: &mut [f32; 2]| {
            p[0] += d.x;
            p[1] += d.y;
        };
        for layer in &mut self.layers {
            match layer {
                Layer::Shapes(s) => {
                    s.slot ^= slot_bits;
                    s.view.offset[0] += d.x;
                    s.view.offset[1] += d.y;
                }
                Layer::Map(m) => {
                    m.slot ^= slot_bits;
                    m.rect = m.rect.translate(d);
                }
                Layer::Bar(b) => {
                    b.slot ^= slot_bits;
                    b.rect = b.rect.translate(d);
                }
                Layer::Morph(m) => {
                    m.slot ^= slot_bits;
                    m.rect = m.rect.translate(d);
                }
            }
        }
        for shape in &mut self.shapes {
            match &mut shape.geometry {
                Geometry::Rect { min, max, .. } => {
                    move_point(min);
                    move_point(max);
                }
                Geometry::PixelRect { center, .. }
                | Geometry::Disc { center, .. }
                | Geometry::PixelDisc { center, .. }
                | Geometry::Sector { center, .. } => move_point(center),
                Geometry::Segment { a, b, .. } => {
                    move_point(a);
                    move_point(b);
                }
            }
        }
        for label in &mut self.labels {
            label.pos += d;
        }
    }
}

/// A GPU layer of a picture.
pub enum Layer {
    /// Shapes in world units seen through a camera (the graph: pan and zoom move only the
    /// camera, the shapes stay uploaded).
    Shapes(ShapeLayer),
    /// One allocation-map view (a bin's cell, the context view).
    Map(MapLayer),
    /// One occupancy bar (a bin's, or the stack of all bins).
    Bar(BarLayer),
    /// Points and arcs morphing between two parameterizations (the cycle views).
    Morph(MorphLayer),
}

/// Shapes in world units and the world → points transform of the picture.
pub struct ShapeLayer {
    /// Stable within the picture: the GUI keeps the layer's upload under it.
    pub slot: u32,
    pub view: ShapesView,
    pub shapes: Vec<Shape>,
}

/// A window over the allocation map's time × address plane: a time range (units of the time
/// axis) and an address range as fractions of each bin's own collapsed axis (0 = its lowest used
/// byte, 1 = its top), so that one window drives every bin cell. f64 keeps integers exact below
/// 2^53 and fractions of a 2^40-byte axis to 2^-13 bytes. (The allocation map's camera: its
/// interaction lives in `alloc_map::camera`.)
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MapWindow {
    pub t0: f64,
    pub t_span: f64,
    pub y0: f64,
    pub y_span: f64,
}

impl MapWindow {
    /// The renderer's view of this window for a bin whose collapsed axis is `extent` bytes long,
    /// drawn into `size_px` pixels.
    pub fn view(&self, extent: u64, size_px: [f32; 2]) -> AllocMapView {
        let y_bottom = self.y0 * extent as f64;
        let bytes = (self.y_span * extent as f64).max(1e-9);
        let mut v = AllocMapView::fit(0, 1, 0, 1, 1, 1);
        v.time_origin = self.t0.floor() as i64 as u64;
        v.time_origin_frac = (self.t0 - self.t0.floor()) as f32;
        v.addr_origin = y_bottom.floor() as i64 as u64;
        v.addr_origin_frac = (y_bottom - y_bottom.floor()) as f32;
        v.pixels_per_time = (f64::from(size_px[0]) / self.t_span) as f32;
        v.pixels_per_byte = (f64::from(size_px[1]) / bytes) as f32;
        v
    }
}

/// How maps and bars shade their blocks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MapStyle {
    pub alpha: f32,
    pub cushion: CushionKind,
    pub cushion_strength: f32,
    pub color_mode: ColorMode,
}

impl MapStyle {
    pub fn apply(&self, view: &mut AllocMapView) {
        view.alpha = self.alpha;
        view.cushion = self.cushion;
        view.cushion_strength = self.cushion_strength;
        view.color_mode = self.color_mode;
    }
}

/// The blocks every map layer of a picture draws from (one upload, sorted by bin), and the
/// selection bits that dim the others.
pub struct MapData {
    pub blocks: Arc<Vec<AllocBlockGpu>>,
    pub times: Arc<Vec<BlockTimeGpu>>,
    pub selection: Option<Arc<SelectionBits>>,
    /// A big trace's level-of-detail index: the layers draw from it (`alloc_map::lod`), and
    /// `blocks`/`times` are empty.
    pub lod: Option<Arc<memscape_lod::LodTrace>>,
    /// The GUI's worker for `lod`'s frames (`lod_refine`): the paint bridge draws
    /// the newest picture it finished, stretched to the view, instead of computing the sums on
    /// the UI thread. `None` (headless pictures): the sums are computed on the spot.
    pub refiner: Option<Arc<crate::lod_refine::LodRefiner>>,
    /// A live recording's snapshot in its frame: the sums worker keeps the sums of the blocks
    /// that ended and adds only what changed; `None`: every block summed for each view.
    pub accumulate: Option<Accumulate>,
}

/// How a live snapshot's map layers accumulate their sums ([`MapData::accumulate`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Accumulate {
    /// What the ended blocks' positions and colours depend on
    /// (`AllocScene::accumulation_key`): the kept sums start again when it changes.
    pub key: u64,
    /// The snapshot's end on the time axis shown: blocks ending there are live.
    pub open_from: u64,
}

/// One allocation-map view.
pub struct MapLayer {
    /// Stable within the picture: the GUI keeps the view's accumulation targets under it.
    pub slot: u32,
    /// Where it lies, in the picture's points.
    pub rect: egui::Rect,
    pub data: Arc<MapData>,
    pub window: MapWindow,
    /// Bytes of the bin's collapsed address axis.
    pub extent: u64,
    /// The blocks of the upload this view draws (a bin's range).
    pub range: Range<usize>,
    pub style: MapStyle,
    /// Cushion cursors over the map after it is drawn.
    pub cursors: Option<CursorsOverlay>,
}

impl MapLayer {
    /// The view the paint bridge asks an index's worker (`lod_refine`) for when it draws this
    /// layer at `pixels_per_point` (`gpu/lod.rs`; its viewport rounds the rectangle's edges, so
    /// this may be a pixel off: the worker's picture is then drawn stretched until that view's
    /// lands): what a pane asks of an index's worker before it draws from the index, so that
    /// the switch shows no empty map.
    pub fn lod_view(&self, pixels_per_point: f32) -> memscape_lod::LodView {
        let size = [
            (self.rect.width() * pixels_per_point).round().max(1.0) as u32,
            (self.rect.height() * pixels_per_point).round().max(1.0) as u32,
        ];
        let mut view = self
            .window
            .view(self.extent, [size[0] as f32, size[1] as f32]);
        self.style.apply(&mut view);
        view.eq1(size)
    }
}

/// Cushion cursors of a map layer.
pub struct CursorsOverlay {
    pub cursors: Vec<CushionCursor>,
    pub style: CursorStyle,
}

/// One occupancy bar.
pub struct BarLayer {
    pub slot: u32,
    pub rect: egui::Rect,
    pub bars: Arc<BarBlocks>,
    /// A big trace's unbinned bar as its running integral: drawn from it in the flat variant
    /// (`alloc_map::bar_integral`), from `bars` else.
    pub integral: Option<Arc<crate::alloc_map::bar_integral::BarIntegral>>,
    pub window: MapWindow,
    pub style: MapStyle,
    pub variant: OccupancyVariant,
    /// The bin's bar; None: the stack of all bins.
    pub bin: Option<usize>,
    /// The stack's bar units `[lo, hi)` shown, when the stack does not fit and scrolls
    /// (`alloc_map::stacked`); None: the whole stack.
    pub stack_slice: Option<(u64, u64)>,
}

impl BarLayer {
    /// What the renderer draws: a bin's band, the stack or a slice of it.
    pub fn part(&self) -> memscape_render::alloc_map::BarPart {
        use memscape_render::alloc_map::BarPart;
        match (self.bin, self.stack_slice) {
            (Some(k), _) => BarPart::Bin(k),
            (None, Some((lo, hi))) => BarPart::Slice(lo, hi),
            (None, None) => BarPart::Stack,
        }
    }
}

/// Records and arcs that morph between two parameterizations.
pub struct MorphData {
    pub points: Vec<PolarPointGpu>,
    pub arcs: Vec<PolarArcGpu>,
}

pub struct MorphLayer {
    pub slot: u32,
    pub rect: egui::Rect,
    /// Uploaded once per value of the `Arc` (the GUI compares pointers).
    pub data: Arc<MorphData>,
    /// In points, relative to `rect`.
    pub view: PolarMorphView,
}

/// Dark or light text, whichever reads on `fill` (sRGB bytes).
pub fn text_on(fill: [u8; 4]) -> egui::Color32 {
    let luma = 0.299 * f32::from(fill[0]) + 0.587 * f32::from(fill[1]) + 0.114 * f32::from(fill[2]);
    if luma > 150.0 {
        egui::Color32::from_rgb(20, 22, 28)
    } else {
        egui::Color32::from_rgb(235, 236, 240)
    }
}

/// Smooth ease in and out of `t` in [0, 1] (transitions, morphs, tours).
pub fn ease(t: f32) -> f32 {
    let t = t.clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// 4 320 676 562 → "4.32G" (counts in labels; the prefix on the number, as the colour ramps
/// write it: "307.1k cyc" beside a legend's "200k cyc").
pub fn si(v: u64) -> String {
    let f = v as f64;
    if f >= 1e9 {
        format!("{:.2}G", f / 1e9)
    } else if f >= 1e6 {
        format!("{:.2}M", f / 1e6)
    } else if f >= 1e3 {
        format!("{:.1}k", f / 1e3)
    } else {
        v.to_string()
    }
}

/// Marks `picture` as drawn from the query engine `engine` (a line at its bottom right, and
/// its provenance): the user sees what computed the numbers, and the GUI's self-test which
/// panes did.
pub fn engine_note(picture: &mut Picture, engine: &str) {
    let size = picture.size;
    let line = engine_provenance(picture, engine);
    picture.labels.push(Label::new(
        egui::pos2(size.x - 6.0, size.y - 4.0),
        line,
        10.0,
        egui::Color32::from_gray(150),
        egui::Align2::RIGHT_BOTTOM,
    ));
}

/// Sets `picture`'s provenance to the query engine `engine` without a line in the picture
/// (views whose every corner holds data say it in their pane's status line), and returns it.
pub fn engine_provenance(picture: &mut Picture, engine: &str) -> String {
    let line = format!("computed by the query engine ({engine})");
    picture.provenance = Some(line.clone());
    line
}
