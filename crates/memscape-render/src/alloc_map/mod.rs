//! The allocation map (Moreta & Telea): every block a rectangle in time × address, drawn with
//! exact box-filter coverage, the biased anti-aliasing of their Eq. 1, and cushion shading.
//!
//! Three pieces, so that several views can share one upload:
//! * [`AllocMapPipelines`]: pipelines and layouts, one per device;
//! * [`AllocMapData`]: a dataset's blocks in storage buffers, split into chunks below the
//!   device's binding limit, uploaded once;
//! * [`AllocMapFrame`]: one view's uniform and accumulation targets. Zoom and pan change only the
//!   uniform.

pub mod accumulated;
pub mod cpu_reference;
pub mod cursors;
mod data;
pub mod dense;
pub mod dense_work;
mod frame;
pub mod gpu;
pub mod lod_cells;
pub mod occupancy;
mod offscreen;
pub mod pick;
mod pipelines;
mod selection;
pub mod synthetic;

use std::ops::Range;

use crate::color::needs_shader_srgb_encode;
use crate::offscreen::OFFSCREEN_FORMAT;
pub use accumulated::{AccumulatedSums, AccumulatedUpdate, ContinuedRowSums, RowSumsUpdate};
pub use cursors::{CursorOverlay, CursorPipelines, CursorStyle, CushionCursor, TimeMapping};
pub use data::AllocMapData;
pub use dense::AccumPath;
pub use frame::AllocMapFrame;
pub use gpu::{AllocBlockGpu, AllocMapViewGpu, BlockTimeGpu, ChunkInfoGpu};
pub use lod_cells::{LodBlocksUpload, LodCellsCache, LodCellsError, LodCellsInput, LodCellsStats};
pub use occupancy::{
    BarBlocks, BarContinued, BarPart, BarSumsJob, ContinuedBar, GrowingBar, OccupancyBarData,
    OccupancyBarFrame, OccupancyBarView, OccupancySteps, OccupancyVariant,
};
pub use offscreen::{GridCell, render_grid_offscreen, render_offscreen, render_offscreen_with};
pub use pick::{AllocMapPicker, PickHit, PickResult};
pub use pipelines::AllocMapPipelines;
pub use selection::SelectionBits;

/// How blocks are shaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CushionKind {
    None,
    /// Parabolic profile: strong structure, dark borders, bright centre.
    #[default]
    Parabolic,
    /// Flat top with bevelled edges.
    Plateau,
}

impl CushionKind {
    /// memscape-eq1's name for it.
    pub fn eq1(self) -> memscape_eq1::Cushion {
        match self {
            CushionKind::None => memscape_eq1::Cushion::None,
            CushionKind::Parabolic => memscape_eq1::Cushion::Parabolic,
            CushionKind::Plateau => memscape_eq1::Cushion::Plateau,
        }
    }

    pub(crate) fn gpu(self) -> u32 {
        match self {
            CushionKind::None => 0,
            CushionKind::Parabolic => 1,
            CushionKind::Plateau => 2,
        }
    }
}

/// Whether colours (categorical attributes) or attribute values (quantitative) are averaged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ColorMode {
    /// Each block carries a colour; Eq. 1 averages colours weighted by f^α.
    #[default]
    Categorical,
    /// Each block carries a value in [0, 1]; Eq. 1 averages values, then the blue → red ramp.
    Quantitative,
}

/// How a view applies the dataset's selection bits (see [`AllocMapData::set_selection`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum SelectionStyle {
    /// The bits are ignored: every block in its own colour.
    #[default]
    Off,
    /// Blocks whose bit is clear are drawn in `color` (sRGB bytes), mixed with their own colour
    /// by `1 − amount` (`amount` 1: only the dim colour). Selected blocks keep their colour; in
    /// [`ColorMode::Quantitative`] every block is first coloured through the blue → red ramp and
    /// the colours are averaged (Eq. 1's categorical form), as the dim colour is no value.
    DimUnselected { color: [u8; 3], amount: f32 },
}

impl SelectionStyle {
    /// The app's highlight look: unselected blocks a dark grey.
    pub const DIM: SelectionStyle = SelectionStyle::DimUnselected {
        color: [70, 72, 80],
        amount: 1.0,
    };
}

/// What one draw of an [`AllocMapData`] shows besides the view: a subset of the blocks and how
/// the selection is applied. `Default` draws every block, selection off.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DrawOptions {
    /// The blocks `[start, end)` of the upload (indices as uploaded; clipped to the upload).
    /// For the bins grid the app uploads blocks sorted by bin, so each bin is one range.
    /// `None`: all blocks.
    pub range: Option<Range<usize>>,
    pub selection: SelectionStyle,
    /// Raster or dense accumulation ([`AccumPath::Auto`]: chosen per draw). Both draw the same
    /// picture (the CPU reference's).
    pub path: AccumPath,
}

impl DrawOptions {
    /// The blocks `range` only.
    pub fn range(range: Range<usize>) -> Self {
        Self {
            range: Some(range),
            ..Self::default()
        }
    }
}

/// What happens to blocks at least `min_px` wide: the occupancy bar's idle gaps (its blocks are
/// inter-event intervals). The main map uses [`GapRule::None`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) enum GapRule {
    #[default]
    None,
    /// Not drawn: the background shows.
    Hide { min_px: f32 },
    /// Only these get the view's cushion; narrower blocks are flat.
    CushionOnly { min_px: f32 },
}

impl GapRule {
    pub(crate) fn gpu(self) -> (u32, f32) {
        match self {
            GapRule::None => (0, f32::INFINITY),
            GapRule::Hide { min_px } => (1, min_px),
            GapRule::CushionOnly { min_px } => (2, min_px),
        }
    }
}

/// The cushions' light: from the upper left, slightly towards the viewer (normalised).
pub use memscape_eq1::default_light;

/// What part of the (time, collapsed address) plane is shown, and how.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AllocMapView {
    /// Integer part of the time at the left edge.
    pub time_origin: u64,
    /// Fractional part of the time at the left edge, in [0, 1).
    pub time_origin_frac: f32,
    /// Integer part of the collapsed address at the bottom edge.
    pub addr_origin: u64,
    pub addr_origin_frac: f32,
    pub pixels_per_time: f32,
    pub pixels_per_byte: f32,
    /// The bias α of Eq. 1 (> 0; low values emphasise few, thin blocks).
    pub alpha: f32,
    pub cushion: CushionKind,
    pub cushion_strength: f32,
    pub color_mode: ColorMode,
    /// c_B, the colour of free memory, linear RGB.
    pub background_linear: [f32; 3],
}

impl AllocMapView {
    /// A view showing `[t0, t1) × [a0, a1)` in a target of `width`×`height` pixels (memscape-eq1's
    /// `MapView::fit`, with the renderer's defaults).
    pub fn fit(t0: u64, t1: u64, a0: u64, a1: u64, width: u32, height: u32) -> Self {
        Self::from_eq1(&memscape_eq1::MapView::fit(t0, t1, a0, a1, width, height))
    }

    /// The same view in memscape-eq1's terms, drawn into `size` pixels: what the CPU reference
    /// and memscape-lod compute with.
    pub fn eq1(&self, size: [u32; 2]) -> memscape_eq1::MapView {
        memscape_eq1::MapView {
            time_origin: self.time_origin,
            time_origin_frac: self.time_origin_frac,
            addr_origin: self.addr_origin,
            addr_origin_frac: self.addr_origin_frac,
            pixels_per_time: self.pixels_per_time,
            pixels_per_byte: self.pixels_per_byte,
            width: size[0],
            height: size[1],
            alpha: self.alpha,
            cushion: self.cushion.eq1(),
            cushion_strength: self.cushion_strength,
            color_mode: match self.color_mode {
                ColorMode::Categorical => memscape_eq1::ColorMode::Categorical,
                ColorMode::Quantitative => memscape_eq1::ColorMode::Quantitative,
            },
            background_linear: self.background_linear,
        }
    }

    /// A memscape-eq1 view as the renderer's (its size is the target's).
    pub fn from_eq1(v: &memscape_eq1::MapView) -> Self {
        Self {
            time_origin: v.time_origin,
            time_origin_frac: v.time_origin_frac,
            addr_origin: v.addr_origin,
            addr_origin_frac: v.addr_origin_frac,
            pixels_per_time: v.pixels_per_time,
            pixels_per_byte: v.pixels_per_byte,
            alpha: v.alpha,
            cushion: match v.cushion {
                memscape_eq1::Cushion::None => CushionKind::None,
                memscape_eq1::Cushion::Parabolic => CushionKind::Parabolic,
                memscape_eq1::Cushion::Plateau => CushionKind::Plateau,
            },
            cushion_strength: v.cushion_strength,
            color_mode: match v.color_mode {
                memscape_eq1::ColorMode::Categorical => ColorMode::Categorical,
                memscape_eq1::ColorMode::Quantitative => ColorMode::Quantitative,
            },
            background_linear: v.background_linear,
        }
    }

    /// Light from the upper left, slightly towards the viewer.
    pub fn light(&self) -> [f32; 3] {
        default_light()
    }

    /// The uniform for passes that produce no colour (picking).
    pub(crate) fn gpu_plain(&self, size: [u32; 2]) -> AllocMapViewGpu {
        self.gpu(
            size,
            [0.0, 0.0],
            OFFSCREEN_FORMAT,
            SelectionStyle::Off,
            GapRule::None,
            0..u32::MAX as usize,
            1.0,
        )
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn gpu(
        &self,
        size: [u32; 2],
        resolve_origin_px: [f32; 2],
        target: wgpu::TextureFormat,
        selection: SelectionStyle,
        gaps: GapRule,
        range: Range<usize>,
        value_scale: f32,
    ) -> AllocMapViewGpu {
        let l = self.light();
        let (gap_mode, gap_min_px) = gaps.gpu();
        let (selection_mode, dim_amount, dim_color) = match selection {
            SelectionStyle::Off => (0, 0.0, [0.0; 4]),
            SelectionStyle::DimUnselected { color, amount } => {
                let c = color.map(|b| crate::color::srgb_to_linear(f32::from(b) / 255.0));
                let mode = match self.color_mode {
                    ColorMode::Categorical => 1,
                    ColorMode::Quantitative => 2,
                };
                (mode, amount.clamp(0.0, 1.0), [c[0], c[1], c[2], 1.0])
            }
        };
        AllocMapViewGpu {
            origin_time: crate::u64_split::split(self.time_origin),
            origin_addr: crate::u64_split::split(self.addr_origin),
            origin_frac: [self.time_origin_frac, self.addr_origin_frac],
            scale: [self.pixels_per_time, self.pixels_per_byte],
            viewport_px: [size[0] as f32, size[1] as f32],
            resolve_origin_px,
            alpha: self.alpha.max(1e-3),
            cushion_kind: self.cushion.gpu(),
            cushion_strength: self.cushion_strength,
            color_mode: match (self.color_mode, selection_mode) {
                (ColorMode::Quantitative, 0) => 1,
                _ => 0,
            },
            background: [
                self.background_linear[0],
                self.background_linear[1],
                self.background_linear[2],
                1.0,
            ],
            light: [l[0], l[1], l[2], 0.0],
            output_srgb_encode: u32::from(needs_shader_srgb_encode(target)),
            selection_mode,
            dim_amount,
            gap_mode,
            dim_color,
            gap_min_px,
            range_start: range.start.min(u32::MAX as usize) as u32,
            range_end: range.end.min(u32::MAX as usize) as u32,
            value_scale,
        }
    }
}
