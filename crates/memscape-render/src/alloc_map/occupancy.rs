//! The occupancy bar (Moreta & Telea): per time column, the fraction of a bin's bytes in use,
//! blue (empty) → red (full), in the paper's variants, and stacked bars of several bins.
//!
//! The bar is an allocation map of its own: each inter-event interval of a bin's occupancy step
//! function is a full-height "block" whose quantitative value is the occupancy fraction in that
//! interval. Exact box coverage, Eq. 1 and the cushions then come from the same pipeline, and so
//! does the CPU reference. Idle gaps (intervals at least `gap_min_px` wide at the current zoom)
//! are decided per frame in the vertex shader, so zooming changes only the uniform.
//!
//! Stacked bars: bin `k` is a horizontal band of the bar (bin 0 at the top) whose height is
//! proportional to its weight (by default its capacity); one bin alone fills the bar. Each bin's
//! intervals are one contiguous range of the upload, so one upload serves both.
//!
//! GPU memory: 40 bytes per interval (as a block of the map), i.e. per event of the bin.

use std::ops::Range;

use super::{
    AllocBlockGpu, AllocMapData, AllocMapFrame, AllocMapPipelines, AllocMapView, BlockTimeGpu,
    ColorMode, CushionKind, DrawOptions, GapRule,
};
use crate::offscreen::OFFSCREEN_FORMAT;
use crate::{GpuContext, OffscreenTarget, RenderError, RgbaImage};

mod continued;

pub use continued::{BarContinued, ContinuedBar, GrowingBar};

/// Height of the whole bar in "address" units of its allocation map: bands are cut from it.
pub const BAR_UNITS: u64 = 1 << 20;

/// The colour field of every bar interval. A bar is drawn in quantitative mode (each interval's
/// `attr`, the occupancy fraction, is summed and the ramp applied to the resolved value), which
/// never reads a block's own colour: making it from the ramp cost three `powf`s an interval, at
/// every capacity change of a live recording's bar for all of its millions of intervals.
pub const BAR_BLOCK_COLOR: [u8; 4] = [0, 0, 0, 255];

/// One bin's occupancy over time as a step function (what `memscape_trace::metrics::BinSeries`
/// holds): after the event at `times[i]` the bin has `bytes[i]` bytes in use.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OccupancySteps {
    /// Start of the trace on the active time axis; the bin is empty until its first event.
    pub start: u64,
    /// End of the trace (exclusive); the last state lasts until here.
    pub end: u64,
    /// Event times, non-decreasing (a time going backwards counts as equal to the previous).
    pub times: Vec<u64>,
    /// Bytes in use right after each event (as many as `times`; extra entries are ignored).
    pub bytes: Vec<u64>,
    /// Bytes that count as full (the bin's extent). 0: any use is full.
    pub capacity: u64,
}

impl OccupancySteps {
    /// The occupancy fraction for `bytes` in use, in [0, 1].
    pub fn fraction(&self, bytes: u64) -> f32 {
        if self.capacity == 0 {
            return if bytes == 0 { 0.0 } else { 1.0 };
        }
        (bytes as f64 / self.capacity as f64).clamp(0.0, 1.0) as f32
    }

    /// The inter-event intervals `(t0, t1, fraction)`, t1 > t0, in time order: from `start` to
    /// the first event (empty), between consecutive events, and from the last event to `end`.
    /// Events at the same time collapse into their last state.
    pub fn intervals(&self) -> Vec<(u64, u64, f32)> {
        self.intervals_iter().collect()
    }

    /// [`Self::intervals`] one at a time, without a list of them; at most
    /// [`Self::intervals_bound`].
    pub fn intervals_iter(&self) -> impl Iterator<Item = (u64, u64, f32)> + '_ {
        self.interval_bytes_iter()
            .map(|(t0, t1, bytes)| (t0, t1, self.fraction(bytes)))
    }

    /// [`Self::intervals_iter`] with each interval's bytes in use instead of its fraction.
    pub fn interval_bytes_iter(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        let n = self.times.len().min(self.bytes.len());
        // Events after the end (bad input) collapse onto it.
        let end = self.end.max(self.start);
        let mut t = self.start;
        let mut value = 0u64;
        let mut i = 0;
        std::iter::from_fn(move || {
            while i < n {
                let ti = self.times[i].max(t).min(end);
                let interval = (ti > t).then_some((t, ti, value));
                t = ti;
                value = self.bytes[i];
                i += 1;
                if interval.is_some() {
                    return interval;
                }
            }
            if end > t {
                let last = (t, end, value);
                t = end;
                return Some(last);
            }
            None
        })
    }

    /// The most intervals [`Self::intervals_iter`] yields.
    pub fn intervals_bound(&self) -> usize {
        self.times.len().min(self.bytes.len()) + 1
    }

    /// The most bytes of any row (0 without rows).
    fn max_bytes(&self) -> u64 {
        let n = self.times.len().min(self.bytes.len());
        self.bytes[..n].iter().copied().max().unwrap_or(0)
    }
}

/// What a bar's intervals carry as their quantitative attribute (`AllocBlockGpu::attr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BarValues {
    /// The occupancy fraction of this capacity itself (stacked bars; one bin whose capacity is
    /// 0 or below some row's bytes, where the fraction clamps).
    Fractions(u64),
    /// The bytes over this power of two, at least the capacity and every row's bytes: the
    /// fraction is the attribute times reference / capacity, applied where the bar is drawn
    /// ([`BarBlocks::value_scale`]), so that a live bar whose capacity grows keeps its
    /// intervals as they are until the capacity passes the reference.
    OverReference(u64),
}

impl Default for BarValues {
    fn default() -> Self {
        Self::Fractions(0)
    }
}

impl BarValues {
    /// One bin's form, its rows' bytes at most `max_bytes`.
    fn of(steps: &OccupancySteps, max_bytes: u64) -> Self {
        match steps.capacity.checked_next_power_of_two() {
            Some(reference) if steps.capacity > 0 && max_bytes <= steps.capacity => {
                Self::OverReference(reference)
            }
            _ => Self::Fractions(steps.capacity),
        }
    }

    fn attr(self, bytes: u64) -> f32 {
        match self {
            Self::Fractions(capacity) => OccupancySteps {
                capacity,
                ..Default::default()
            }
            .fraction(bytes),
            // Over a power of two: the f64 bytes scaled exactly, then rounded once.
            Self::OverReference(reference) => (bytes as f64 / reference as f64) as f32,
        }
    }

    /// [`BarBlocks::value_scale`] at `capacity`.
    fn scale(self, capacity: u64) -> f32 {
        match self {
            Self::Fractions(_) => 1.0,
            Self::OverReference(reference) => (reference as f64 / capacity.max(1) as f64) as f32,
        }
    }
}

/// The paper's occupancy bar variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OccupancyVariant {
    /// The time-weighted mean occupancy of each column.
    #[default]
    Flat,
    /// As [`Self::Flat`], with idle gaps (no event for at least `gap_min_px` pixels) black.
    BlackGaps,
    /// Idle gaps drawn as cushions (plateau or parabolic), busy stretches flat.
    GapCushions(CushionKind),
    /// Every inter-event interval a cushion, drawn with the biased anti-aliasing (the view's
    /// α): where events are sparse the cushions show one by one, so activity density shows as
    /// cushion density.
    EventCushions(CushionKind),
}

impl OccupancyVariant {
    /// Every variant, in the order a menu would list them.
    pub const ALL: [OccupancyVariant; 6] = [
        OccupancyVariant::Flat,
        OccupancyVariant::BlackGaps,
        OccupancyVariant::GapCushions(CushionKind::Plateau),
        OccupancyVariant::GapCushions(CushionKind::Parabolic),
        OccupancyVariant::EventCushions(CushionKind::Plateau),
        OccupancyVariant::EventCushions(CushionKind::Parabolic),
    ];

    /// A short name for menus and file names.
    pub fn name(self) -> &'static str {
        match self {
            OccupancyVariant::Flat => "flat",
            OccupancyVariant::BlackGaps => "black gaps",
            OccupancyVariant::GapCushions(CushionKind::Parabolic) => "parabolic gap cushions",
            OccupancyVariant::GapCushions(_) => "plateau gap cushions",
            OccupancyVariant::EventCushions(CushionKind::Parabolic) => "parabolic event cushions",
            OccupancyVariant::EventCushions(_) => "plateau event cushions",
        }
    }
}

/// How a bar is drawn: the time mapping (the map's, see [`Self::from_map`]) and the variant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OccupancyBarView {
    pub time_origin: u64,
    pub time_origin_frac: f32,
    pub pixels_per_time: f32,
    pub variant: OccupancyVariant,
    /// α of Eq. 1 for [`OccupancyVariant::EventCushions`]; the other variants use 1 (plain
    /// area-weighted means).
    pub alpha: f32,
    /// Intervals at least this wide (pixels) are idle gaps. The paper: "a few pixels".
    pub gap_min_px: f32,
    pub cushion_strength: f32,
    /// Colour before the trace starts and after it ends, linear RGB ([`OccupancyVariant::
    /// BlackGaps`] uses black).
    pub background_linear: [f32; 3],
}

impl OccupancyBarView {
    /// A bar over `[t0, t1)` in `width` pixels.
    pub fn fit(t0: u64, t1: u64, width: u32, variant: OccupancyVariant) -> Self {
        let span = t1.saturating_sub(t0).max(1) as f64;
        Self {
            time_origin: t0,
            time_origin_frac: 0.0,
            pixels_per_time: (f64::from(width) / span) as f32,
            variant,
            alpha: 0.5,
            gap_min_px: 4.0,
            cushion_strength: 1.0,
            background_linear: [0.012, 0.014, 0.02],
        }
    }

    /// A bar under (or over) `map`: the same time mapping and α.
    pub fn from_map(map: &AllocMapView, variant: OccupancyVariant) -> Self {
        Self {
            time_origin: map.time_origin,
            time_origin_frac: map.time_origin_frac,
            pixels_per_time: map.pixels_per_time,
            variant,
            alpha: map.alpha,
            gap_min_px: 4.0,
            cushion_strength: map.cushion_strength,
            background_linear: map.background_linear,
        }
    }

    /// The allocation-map view drawing band `[lo, hi)` of the bar into `height` pixels.
    pub(crate) fn map_view(&self, band: (u64, u64), height: u32) -> AllocMapView {
        let (cushion, alpha, background) = match self.variant {
            OccupancyVariant::Flat => (CushionKind::None, 1.0, self.background_linear),
            OccupancyVariant::BlackGaps => (CushionKind::None, 1.0, [0.0; 3]),
            OccupancyVariant::GapCushions(k) => (k, 1.0, self.background_linear),
            OccupancyVariant::EventCushions(k) => (k, self.alpha, self.background_linear),
        };
        AllocMapView {
            time_origin: self.time_origin,
            time_origin_frac: self.time_origin_frac,
            addr_origin: band.0,
            addr_origin_frac: 0.0,
            pixels_per_time: self.pixels_per_time,
            pixels_per_byte: (f64::from(height.max(1))
                / band.1.saturating_sub(band.0).max(1) as f64) as f32,
            alpha,
            cushion,
            cushion_strength: self.cushion_strength,
            color_mode: ColorMode::Quantitative,
            background_linear: background,
        }
    }

    pub(crate) fn gap_rule(&self) -> GapRule {
        match self.variant {
            OccupancyVariant::BlackGaps => GapRule::Hide {
                min_px: self.gap_min_px,
            },
            OccupancyVariant::GapCushions(_) => GapRule::CushionOnly {
                min_px: self.gap_min_px,
            },
            _ => GapRule::None,
        }
    }
}

/// One bin's band of the bar: its intervals in the upload and its `[lo, hi)` in bar units.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BarBand {
    pub range: Range<usize>,
    pub lo: u64,
    pub hi: u64,
}

/// The bar's intervals as allocation-map blocks, and each bin's band.
#[derive(Debug, Clone)]
pub struct BarBlocks {
    pub blocks: Vec<AllocBlockGpu>,
    pub times: Vec<BlockTimeGpu>,
    pub bands: Vec<BarBand>,
    /// An interval's occupancy fraction is its `attr` times this, applied where the bar is
    /// drawn (the resolve's uniform, the CPU sums' resolve alike). 1 for stacked bars, whose
    /// attributes are the fractions; a one bin bar's are its bytes over a power of two at
    /// least its capacity, and this that power over the capacity, so that a live recording's
    /// bar, whose capacity grows with each snapshot, keeps its earlier intervals unchanged.
    pub value_scale: f32,
    /// A live recording's bar ([`ContinuedBar`]): which of its intervals later bars keep, so
    /// that their sums go on from this one's. `None`: a bar made whole.
    pub growing: Option<GrowingBar>,
}

/// Equal intervals, bands and scale: a bar's lineage says where it came from, not what it is
/// (a live bar equals the bar of the same rows made whole).
impl PartialEq for BarBlocks {
    fn eq(&self, other: &Self) -> bool {
        self.blocks == other.blocks
            && self.times == other.times
            && self.bands == other.bands
            && self.value_scale == other.value_scale
    }
}

impl Default for BarBlocks {
    fn default() -> Self {
        Self {
            blocks: Vec::new(),
            times: Vec::new(),
            bands: Vec::new(),
            value_scale: 1.0,
            growing: None,
        }
    }
}

impl BarBlocks {
    /// Bins stacked with band heights proportional to `weights` (one per bin; missing, negative
    /// or non-finite weights count as 0; all zero: equal bands), bin 0 at the top.
    pub fn build(bins: &[OccupancySteps], weights: &[f64]) -> Self {
        let w: Vec<f64> = (0..bins.len())
            .map(|k| {
                weights
                    .get(k)
                    .copied()
                    .filter(|v| v.is_finite() && *v > 0.0)
                    .unwrap_or(0.0)
            })
            .collect();
        let total: f64 = w.iter().sum();
        let share = |k: usize| {
            if total > 0.0 {
                w[k] / total
            } else {
                1.0 / bins.len().max(1) as f64
            }
        };
        let mut out = BarBlocks::default();
        let bound: usize = bins.iter().map(OccupancySteps::intervals_bound).sum();
        out.blocks.reserve_exact(bound);
        out.times.reserve_exact(bound);
        let mut cumulative = 0.0f64;
        let mut top = BAR_UNITS;
        for (k, bin) in bins.iter().enumerate() {
            cumulative += share(k);
            let bottom = if k + 1 == bins.len() {
                0
            } else {
                BAR_UNITS - ((cumulative * BAR_UNITS as f64).round() as u64).min(BAR_UNITS)
            };
            let (lo, hi) = (bottom.min(top), top);
            let start = out.blocks.len();
            let values = if bins.len() == 1 {
                BarValues::of(bin, bin.max_bytes())
            } else {
                BarValues::Fractions(bin.capacity)
            };
            out.value_scale = values.scale(bin.capacity);
            if hi > lo {
                for (t0, t1, bytes) in bin.interval_bytes_iter() {
                    out.blocks.push(AllocBlockGpu::new(
                        lo,
                        hi - lo,
                        BAR_BLOCK_COLOR,
                        values.attr(bytes),
                    ));
                    out.times.push(BlockTimeGpu::new(t0, t1));
                }
            }
            out.bands.push(BarBand {
                range: start..out.blocks.len(),
                lo,
                hi,
            });
            top = lo;
        }
        out
    }

    /// Bins stacked with band heights proportional to their capacities.
    pub fn by_capacity(bins: &[OccupancySteps]) -> Self {
        let weights: Vec<f64> = bins.iter().map(|b| b.capacity as f64).collect();
        Self::build(bins, &weights)
    }

    /// The band and block range that `part` draws.
    pub fn shown(&self, part: impl Into<BarPart>) -> ((u64, u64), Range<usize>) {
        shown(&self.bands, self.blocks.len(), part.into())
    }
}

/// Eq. 1's sums that draw a bar on the CPU ([`OccupancyBarFrame::cpu_sums_view`]): the
/// blocks `range` of the bar in `view`, or, when every row is alike, `row` (the same bar one
/// pixel tall) summed once and repeated.
#[derive(Debug, Clone, PartialEq)]
pub struct BarSumsJob {
    pub view: AllocMapView,
    pub range: Range<usize>,
    pub row: Option<AllocMapView>,
}

impl BarSumsJob {
    /// The sums at `size` (`None` once cancelled through `control`).
    pub fn sums(
        &self,
        blocks: &[AllocBlockGpu],
        times: &[BlockTimeGpu],
        size: [u32; 2],
        threads: usize,
        control: &super::cpu_reference::SumsControl,
    ) -> Option<memscape_eq1::PixelSums> {
        use super::cpu_reference::exact_sums_controlled;
        let range = Some(self.range.clone());
        let Some(row_view) = &self.row else {
            return exact_sums_controlled(&self.view, size, blocks, times, range, threads, control);
        };
        let [w, h] = [size[0].max(1), size[1].max(1)];
        let row = exact_sums_controlled(row_view, [w, 1], blocks, times, range, threads, control)?;
        Some(rows_repeated(&row, h))
    }
}

/// The sums of a bar `height` rows tall whose rows all have the sums `row` (one row).
pub(crate) fn rows_repeated(row: &memscape_eq1::PixelSums, height: u32) -> memscape_eq1::PixelSums {
    let w = row.width.max(1);
    let mut out = memscape_eq1::PixelSums::new(w, height.max(1));
    for (acc, cov) in out
        .acc
        .chunks_exact_mut(w as usize)
        .zip(out.cov.chunks_exact_mut(w as usize))
    {
        acc.copy_from_slice(&row.acc);
        cov.copy_from_slice(&row.cov);
    }
    out
}

/// Which part of a bar (or stack of bars) a frame draws, filling its rectangle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BarPart {
    /// Bin k's band alone.
    Bin(usize),
    /// The whole stack.
    Stack,
    /// Bar units `[lo, hi)` of the stack: a stacked bar scrolled through bins that do not fit.
    Slice(u64, u64),
}

/// `Some(k)`: bin k's band; `None`: the stack.
impl From<Option<usize>> for BarPart {
    fn from(bin: Option<usize>) -> Self {
        bin.map_or(Self::Stack, Self::Bin)
    }
}

fn shown(bands: &[BarBand], blocks: usize, part: BarPart) -> ((u64, u64), Range<usize>) {
    match part {
        BarPart::Bin(k) => match bands.get(k) {
            Some(b) => ((b.lo, b.hi), b.range.clone()),
            None => ((0, BAR_UNITS), 0..0),
        },
        BarPart::Stack => ((0, BAR_UNITS), 0..blocks),
        BarPart::Slice(lo, hi) => {
            let (lo, hi) = (lo.min(BAR_UNITS), hi.clamp(lo.min(BAR_UNITS), BAR_UNITS));
            // Bands lie top (bin 0, high units) to bottom: those meeting [lo, hi) are a run.
            let meets = |b: &&BarBand| b.lo < hi && b.hi > lo;
            let range = match (bands.iter().find(meets), bands.iter().rfind(meets)) {
                (Some(first), Some(last)) => first.range.start..last.range.end,
                _ => 0..0,
            };
            ((lo, hi), range)
        }
    }
}

/// A bar's (or a stack of bars') intervals on the GPU, uploaded once per dataset and bin choice.
pub struct OccupancyBarData {
    map: AllocMapData,
    bands: Vec<BarBand>,
    blocks: usize,
    value_scale: f32,
}

impl OccupancyBarData {
    /// Uploads `bar` (see [`BarBlocks::build`] / [`BarBlocks::by_capacity`]).
    pub fn upload(device: &wgpu::Device, pipelines: &AllocMapPipelines, bar: &BarBlocks) -> Self {
        Self {
            map: AllocMapData::upload(device, pipelines, &bar.blocks, &bar.times),
            bands: bar.bands.clone(),
            blocks: bar.blocks.len(),
            value_scale: bar.value_scale,
        }
    }

    pub fn bin_count(&self) -> usize {
        self.bands.len()
    }

    /// Intervals uploaded (each costs 40 bytes of GPU memory).
    pub fn interval_count(&self) -> usize {
        self.blocks
    }

    /// Bar units of bin `k`'s band, `[lo, hi)` (the whole bar is `[0, BAR_UNITS)`).
    pub fn band(&self, k: usize) -> Option<(u64, u64)> {
        self.bands.get(k).map(|b| (b.lo, b.hi))
    }

    fn shown(&self, part: BarPart) -> ((u64, u64), Range<usize>) {
        shown(&self.bands, self.blocks, part)
    }
}

/// One bar on screen: its uniform and accumulation targets (an allocation-map frame).
pub struct OccupancyBarFrame {
    frame: AllocMapFrame,
}

impl OccupancyBarFrame {
    pub fn new(device: &wgpu::Device, pipelines: &AllocMapPipelines) -> Self {
        Self {
            frame: AllocMapFrame::new(device, pipelines),
        }
    }

    /// Writes the uniform and records the accumulation of the bar: the stack of every bin
    /// (`None`), bin `k`'s band alone (`Some(k)`) or a slice of the stack ([`BarPart`]),
    /// filling `size`. `resolve_origin_px` is where
    /// the bar's top-left corner lies in the final target (as for [`AllocMapFrame::prepare`]).
    #[allow(clippy::too_many_arguments)]
    pub fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        pipelines: &mut AllocMapPipelines,
        data: &OccupancyBarData,
        view: &OccupancyBarView,
        part: impl Into<BarPart>,
        size: [u32; 2],
        resolve_origin_px: [f32; 2],
        target_format: wgpu::TextureFormat,
    ) {
        let (band, range) = data.shown(part.into());
        self.frame.prepare_inner(
            device,
            queue,
            encoder,
            pipelines,
            &data.map,
            &view.map_view(band, size[1]),
            size,
            resolve_origin_px,
            target_format,
            &DrawOptions::range(range),
            view.gap_rule(),
            data.value_scale,
        );
    }

    /// [`Self::prepare`] with Eq. 1's sums computed on the CPU from `bar` (what `data` was
    /// uploaded from) and written into the frame's targets: a software rasterizer's way to draw
    /// a bar of millions of intervals ([`super::dense::prefers_cpu_sums`]). Returns false, with
    /// nothing prepared, for the variants whose idle gaps change blocks per frame
    /// ([`OccupancyVariant::BlackGaps`], [`OccupancyVariant::GapCushions`]): the GPU draws those.
    #[allow(clippy::too_many_arguments)]
    pub fn prepare_cpu(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        pipelines: &mut AllocMapPipelines,
        bar: &BarBlocks,
        view: &OccupancyBarView,
        part: impl Into<BarPart>,
        size: [u32; 2],
        resolve_origin_px: [f32; 2],
        target_format: wgpu::TextureFormat,
        threads: usize,
    ) -> bool {
        let Some(job) = Self::cpu_sums_view(bar, view, part, size) else {
            return false;
        };
        let never = super::cpu_reference::SumsControl::default();
        let Some(sums) = job.sums(&bar.blocks, &bar.times, size, threads, &never) else {
            return false;
        };
        self.prepare_sums(
            device,
            queue,
            pipelines,
            &job.view,
            size,
            resolve_origin_px,
            target_format,
            &sums,
            bar.value_scale,
        );
        true
    }

    /// What to sum on the CPU (over `bar`'s blocks) to draw `part` of the bar at `size`: what
    /// [`Self::prepare_cpu`] sums, and a worker may sum for [`Self::prepare_sums`]. `None` for
    /// the variants whose idle gaps change blocks per frame ([`OccupancyVariant::BlackGaps`],
    /// [`OccupancyVariant::GapCushions`]).
    pub fn cpu_sums_view(
        bar: &BarBlocks,
        view: &OccupancyBarView,
        part: impl Into<BarPart>,
        size: [u32; 2],
    ) -> Option<BarSumsJob> {
        if view.gap_rule() != GapRule::None {
            return None;
        }
        let part = part.into();
        let (band, range) = bar.shown(part);
        let map_view = view.map_view(band, size[1]);
        // One bin's band without cushions: every interval spans the band, so every row of the
        // bar has the same sums: one row is summed and repeated.
        let row = (matches!(part, BarPart::Bin(_)) && map_view.cushion == CushionKind::None)
            .then(|| view.map_view(band, 1));
        Some(BarSumsJob {
            view: map_view,
            range,
            row,
        })
    }

    /// Writes Eq. 1's sums of `map_view` (a [`BarSumsJob`]'s `view`) into the frame's
    /// targets, resolved like any bar: `value_scale` is the summed bar's
    /// ([`BarBlocks::value_scale`]).
    #[allow(clippy::too_many_arguments)]
    pub fn prepare_sums(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        pipelines: &mut AllocMapPipelines,
        map_view: &AllocMapView,
        size: [u32; 2],
        resolve_origin_px: [f32; 2],
        target_format: wgpu::TextureFormat,
        sums: &memscape_eq1::PixelSums,
        value_scale: f32,
    ) {
        self.frame.prepare_sums_scaled(
            device,
            queue,
            pipelines,
            map_view,
            size,
            resolve_origin_px,
            target_format,
            &sums.acc,
            &sums.cov,
            value_scale,
        );
    }

    /// Draws the bar into the whole of `target` (headless pictures, tests).
    pub fn resolve_to(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        target: &wgpu::TextureView,
        pipelines: &AllocMapPipelines,
    ) {
        self.frame.resolve_to(encoder, target, pipelines);
    }

    /// Draws the bar into `pass`, whose viewport the caller has set to the bar's rectangle.
    pub fn resolve(&self, pass: &mut wgpu::RenderPass<'_>, pipelines: &AllocMapPipelines) {
        self.frame.resolve(pass, pipelines);
    }
}

/// Renders a bar headless (tests, `memscape render`).
pub fn render_occupancy_offscreen(
    ctx: &GpuContext,
    pipelines: &mut AllocMapPipelines,
    data: &OccupancyBarData,
    view: &OccupancyBarView,
    part: impl Into<BarPart>,
    width: u32,
    height: u32,
) -> Result<RgbaImage, RenderError> {
    let target = OffscreenTarget::new(ctx, width, height)?;
    let mut frame = OccupancyBarFrame::new(&ctx.device, pipelines);
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("OccupancyBar::offscreen"),
        });
    frame.prepare(
        &ctx.device,
        &ctx.queue,
        &mut encoder,
        pipelines,
        data,
        view,
        part,
        [width, height],
        [0.0, 0.0],
        OFFSCREEN_FORMAT,
    );
    frame
        .frame
        .resolve_to(&mut encoder, &target.view, pipelines);
    ctx.queue.submit([encoder.finish()]);
    target.read(ctx)
}

/// The CPU twin of [`render_occupancy_offscreen`].
pub fn render_occupancy_cpu(
    bar: &BarBlocks,
    view: &OccupancyBarView,
    part: impl Into<BarPart>,
    width: u32,
    height: u32,
) -> RgbaImage {
    let (band, range) = bar.shown(part);
    super::cpu_reference::render_inner(
        &view.map_view(band, height),
        width,
        height,
        &bar.blocks,
        &bar.times,
        &DrawOptions::range(range),
        &[],
        view.gap_rule(),
        bar.value_scale,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_follow_the_step_function() {
        let s = OccupancySteps {
            start: 0,
            end: 100,
            times: vec![10, 10, 30, 25, 60],
            bytes: vec![50, 80, 20, 40, 100],
            capacity: 100,
        };
        // 10 twice: the last state (80) holds; 25 after 30 counts as 30.
        assert_eq!(
            s.intervals(),
            vec![(0, 10, 0.0), (10, 30, 0.8), (30, 60, 0.4), (60, 100, 1.0)]
        );
        let empty = OccupancySteps {
            start: 5,
            end: 9,
            ..Default::default()
        };
        assert_eq!(empty.intervals(), vec![(5, 9, 0.0)]);
        let full = OccupancySteps {
            capacity: 0,
            ..Default::default()
        };
        assert_eq!((full.fraction(0), full.fraction(1)), (0.0, 1.0));
        // More times than bytes: the extra times are ignored.
        let short = OccupancySteps {
            start: 0,
            end: 10,
            times: vec![2, 4, 6],
            bytes: vec![1],
            capacity: 2,
        };
        assert_eq!(short.intervals(), vec![(0, 2, 0.0), (2, 10, 0.5)]);
        // Events past the end are cut at the end; an end before the start draws nothing.
        let late = OccupancySteps {
            start: 0,
            end: 10,
            times: vec![5, 20],
            bytes: vec![1, 2],
            capacity: 2,
        };
        assert_eq!(late.intervals(), vec![(0, 5, 0.0), (5, 10, 0.5)]);
        let backwards = OccupancySteps {
            start: 10,
            end: 5,
            times: vec![7],
            bytes: vec![1],
            capacity: 2,
        };
        assert!(backwards.intervals().is_empty());
    }

    #[test]
    fn stacked_bands_tile_the_bar_top_down_by_weight() {
        let bin = |cap| OccupancySteps {
            start: 0,
            end: 10,
            times: vec![1],
            bytes: vec![1],
            capacity: cap,
        };
        let bar = BarBlocks::by_capacity(&[bin(1), bin(3), bin(0)]);
        assert_eq!(bar.bands[0].hi, BAR_UNITS);
        assert_eq!(bar.bands[0].lo, BAR_UNITS - BAR_UNITS / 4);
        assert_eq!(bar.bands[1].lo, 0);
        assert_eq!((bar.bands[2].lo, bar.bands[2].hi), (0, 0));
        assert!(bar.bands[2].range.is_empty());
        assert_eq!(bar.blocks.len(), 4);
        for b in &bar.bands {
            for i in b.range.clone() {
                let lo = u64::from(bar.blocks[i].addr[0]);
                assert_eq!(lo, b.lo);
            }
        }
        // All weights zero: equal bands.
        let eq = BarBlocks::build(&[bin(1), bin(1)], &[0.0, f64::NAN]);
        assert_eq!(eq.bands[0].lo, BAR_UNITS / 2);
        // A bin that does not exist shows nothing.
        assert_eq!(bar.shown(Some(7)).1, 0..0);
    }
}
