//! Frame statistics for users: the reports `memscape render --stats` and `memscape bench`
//! print (serializable), rolling CPU frame times, and the GUI's statistics overlay composed as
//! a [`Picture`] (so that a test can draw it headless). The GPU side of the numbers is
//! `memscape_render::stats` (timestamp queries per pass, the path of each map draw).

use std::collections::VecDeque;

use memscape_render::alloc_map::AccumPath;
use memscape_render::shapes::{Geometry, Shape};
use memscape_render::{FrameStats, GpuContext, GpuTimingSupport};
use serde::Serialize;

use crate::label::{self, Label};
use crate::picture::Picture;

/// The device a figure was measured on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AdapterReport {
    pub name: String,
    /// `Vulkan`, `Gl`, `Metal`, `Dx12`.
    pub backend: String,
    /// `Cpu` (a software rasterizer such as lavapipe), `DiscreteGpu`, `IntegratedGpu`, …
    pub device_type: String,
    pub driver: String,
    pub driver_info: String,
    /// Whether GPU times per pass can be measured (`TIMESTAMP_QUERY` enabled on the device).
    pub timestamp_queries: bool,
}

impl AdapterReport {
    pub fn of(ctx: &GpuContext) -> Self {
        Self::from_info(&ctx.adapter.get_info(), &ctx.device)
    }

    pub fn from_info(info: &wgpu::AdapterInfo, device: &wgpu::Device) -> Self {
        Self {
            name: info.name.clone(),
            backend: format!("{:?}", info.backend),
            device_type: format!("{:?}", info.device_type),
            driver: info.driver.clone(),
            driver_info: info.driver_info.clone(),
            timestamp_queries: GpuTimingSupport::of(device) == GpuTimingSupport::Passes,
        }
    }

    /// One line: `llvmpipe (LLVM 15.0.6, 256 bits) · Vulkan · Cpu · llvmpipe Mesa 22.3.6`.
    pub fn line(&self) -> String {
        let driver = [self.driver.as_str(), self.driver_info.as_str()]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(" ");
        format!(
            "{} · {} · {} · {}",
            self.name, self.backend, self.device_type, driver
        )
    }
}

/// The name of an accumulation path in reports: `raster`, `dense` (`auto` never: a draw
/// reports the path it took).
pub fn path_name(path: AccumPath) -> &'static str {
    match path {
        AccumPath::Auto => "auto",
        AccumPath::Raster => "raster",
        AccumPath::Dense => "dense",
    }
}

/// One pass's GPU time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PassReport {
    pub scope: String,
    pub pass: String,
    /// `null` when the adapter has no timestamp queries.
    pub gpu_ns: Option<u64>,
}

/// One allocation-map draw by the exact GPU pipeline (a map drawn from a level-of-detail index
/// is in [`LodReport`]s; its exact blocks, when the pipeline draws them, here too).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MapReport {
    pub scope: String,
    /// `raster` or `dense`.
    pub path: String,
    pub blocks: usize,
    pub width: u32,
    pub height: u32,
}

/// What the GPU reported of one frame, for JSON.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuReport {
    /// `timestamp queries per pass`, or [`GpuTimingSupport::UNAVAILABLE_NOTE`].
    pub gpu_timing: String,
    /// The sum of the passes' times, when every pass was timed.
    pub gpu_total_ns: Option<u64>,
    pub passes: Vec<PassReport>,
    pub maps: Vec<MapReport>,
}

impl GpuReport {
    pub fn of(stats: &FrameStats) -> Self {
        Self {
            gpu_timing: timing_note(stats.timing).to_owned(),
            gpu_total_ns: stats.gpu_total_ns(),
            passes: stats
                .passes
                .iter()
                .map(|p| PassReport {
                    scope: p.scope.clone(),
                    pass: p.pass.clone(),
                    gpu_ns: p.gpu_ns,
                })
                .collect(),
            maps: stats
                .maps
                .iter()
                .map(|(scope, m)| MapReport {
                    scope: scope.clone(),
                    path: path_name(m.path).to_owned(),
                    blocks: m.blocks,
                    width: m.size[0],
                    height: m.size[1],
                })
                .collect(),
        }
    }
}

/// One allocation-map layer drawn from a big trace's level-of-detail index
/// (`alloc_map::lod::prepare`'s choice, the one every headless and GUI draw makes).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LodReport {
    pub scope: String,
    /// `level`: the index's cells of `level`; `exact`: the blocks in view, found through the
    /// index.
    pub path: String,
    /// Where the sums were made: `gpu` (the exact pipeline, or the level's cells resolved on
    /// the GPU) or `cpu` (memscape-lod's sums, resolved on the GPU).
    pub summed_on: String,
    /// The level drawn (its index in the file), `null` for exact blocks.
    pub level: Option<usize>,
    /// The level's cell: 2^`level_log2_events` events × 2^`level_log2_bytes` bytes.
    pub level_log2_events: Option<u8>,
    pub level_log2_bytes: Option<u8>,
    pub cells: u64,
    pub exact_blocks: u64,
    /// [`crate::alloc_map::lod::LodDrawn`]'s line, as `memscape bench` shows it.
    pub drawn: String,
}

impl LodReport {
    pub fn of(
        scope: impl Into<String>,
        drawn: crate::alloc_map::lod::LodDrawn,
        lod: &memscape_lod::LodTrace,
    ) -> Self {
        use crate::alloc_map::lod::LodDrawn;
        let (level, cells, exact_blocks, summed_on) = match drawn {
            LodDrawn::ExactBlocks(n) => (None, 0, n as u64, "gpu"),
            LodDrawn::Sums {
                level,
                cells,
                exact_blocks,
            } => (level, cells, exact_blocks, "cpu"),
            LodDrawn::GpuCells {
                level,
                cells,
                exact_blocks,
            } => (Some(level), cells, exact_blocks, "gpu"),
        };
        let desc = level.and_then(|l| lod.index.levels.get(l)).map(|l| l.desc);
        Self {
            scope: scope.into(),
            path: String::from(if level.is_some() { "level" } else { "exact" }),
            summed_on: summed_on.to_owned(),
            level,
            level_log2_events: desc.map(|d| d.log_tau),
            level_log2_bytes: desc.map(|d| d.log_sig),
            cells,
            exact_blocks,
            drawn: drawn.to_string(),
        }
    }
}

pub fn timing_note(timing: GpuTimingSupport) -> &'static str {
    match timing {
        GpuTimingSupport::Passes => "timestamp queries per pass",
        GpuTimingSupport::Unavailable => GpuTimingSupport::UNAVAILABLE_NOTE,
    }
}

/// `memscape render --stats`: one view drawn headless, measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RenderStatsReport {
    pub file: String,
    pub view: String,
    /// The image written.
    pub out: String,
    pub width: u32,
    pub height: u32,
    pub adapter: AdapterReport,
    /// Wall milliseconds: composing the picture (CPU), drawing it (GPU work waited for and
    /// read back), and both.
    pub wall_ms: WallMs,
    #[serde(flatten)]
    pub gpu: GpuReport,
    /// The map layers drawn from a level-of-detail index (empty when the trace was read whole).
    pub lod: Vec<LodReport>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WallMs {
    /// Reading the trace, or opening its level-of-detail index (not in `total`).
    pub open: f64,
    pub compose: f64,
    pub draw: f64,
    pub total: f64,
}

/// The `p`-th percentile (0–100, nearest rank) of `values`; `None` when empty.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len()) - 1).copied()
}

/// The last frames' durations in milliseconds, a rolling window.
#[derive(Debug, Clone)]
pub struct FrameTimes {
    samples: VecDeque<f64>,
    capacity: usize,
}

impl FrameTimes {
    pub fn new(capacity: usize) -> Self {
        Self {
            samples: VecDeque::with_capacity(capacity),
            capacity: capacity.max(1),
        }
    }

    pub fn push(&mut self, ms: f64) {
        if self.samples.len() == self.capacity {
            self.samples.pop_front();
        }
        self.samples.push_back(ms);
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    pub fn mean(&self) -> Option<f64> {
        (!self.samples.is_empty())
            .then(|| self.samples.iter().sum::<f64>() / self.samples.len() as f64)
    }

    pub fn p99(&self) -> Option<f64> {
        let v: Vec<f64> = self.samples.iter().copied().collect();
        percentile(&v, 99.0)
    }
}

/// What the GUI's statistics overlay shows.
pub struct OverlayInput<'a> {
    /// Time between frames.
    pub frame: &'a FrameTimes,
    /// CPU time of each frame's UI work (eframe's `cpu_usage`).
    pub cpu: &'a FrameTimes,
    /// The GPU's latest time of each pass and path of each map.
    pub gpu: Option<&'a FrameStats>,
    /// The adapter's line.
    pub adapter: &'a str,
    /// The key that toggles the overlay (shown in its title).
    pub key: &'a str,
}

const OVERLAY_TEXT: f32 = 12.0;
const OVERLAY_LINE: f32 = 15.0;
const OVERLAY_PAD: f32 = 8.0;
/// Passes listed at most (the latest draws; the rest counted).
const OVERLAY_MAX_PASSES: usize = 12;

fn ms(v: Option<f64>) -> String {
    v.map_or("–".to_owned(), |v| format!("{v:.1} ms"))
}

/// The overlay's lines: (text, is a heading).
pub fn overlay_lines(input: &OverlayInput<'_>) -> Vec<(String, bool)> {
    let mut lines = vec![(format!("frame statistics ({})", input.key), true)];
    lines.push((
        format!(
            "frame interval {} mean · {} p99 ({} frames)",
            ms(input.frame.mean()),
            ms(input.frame.p99()),
            input.frame.len()
        ),
        false,
    ));
    lines.push((
        format!(
            "CPU per frame {} mean · {} p99",
            ms(input.cpu.mean()),
            ms(input.cpu.p99())
        ),
        false,
    ));
    match input.gpu {
        None => lines.push(("GPU: no wgpu renderer".to_owned(), false)),
        Some(stats) => {
            if stats.timing == GpuTimingSupport::Unavailable {
                lines.push((GpuTimingSupport::UNAVAILABLE_NOTE.to_owned(), false));
            }
            if !stats.passes.is_empty() && stats.timing == GpuTimingSupport::Passes {
                lines.push(("GPU per pass (latest draw)".to_owned(), true));
                let mut passes: Vec<&memscape_render::PassTiming> = stats.passes.iter().collect();
                passes.reverse();
                for p in passes.iter().take(OVERLAY_MAX_PASSES) {
                    let t = p.gpu_ns.map_or("not timed".to_owned(), |ns| {
                        format!("{:.2} ms", ns as f64 / 1e6)
                    });
                    lines.push((format!("{} · {}: {t}", p.scope, p.pass), false));
                }
                if passes.len() > OVERLAY_MAX_PASSES {
                    lines.push((
                        format!("… {} more", passes.len() - OVERLAY_MAX_PASSES),
                        false,
                    ));
                }
            }
            if !stats.maps.is_empty() {
                lines.push(("allocation maps (path, blocks, size)".to_owned(), true));
                for (scope, m) in stats.maps.iter().take(OVERLAY_MAX_PASSES) {
                    lines.push((
                        format!(
                            "{scope}: {}, {} blocks, {}×{}",
                            path_name(m.path),
                            group_digits(m.blocks as u64),
                            m.size[0],
                            m.size[1]
                        ),
                        false,
                    ));
                }
            }
        }
    }
    lines.push((input.adapter.to_owned(), false));
    lines
}

/// `1234567` → `1,234,567`.
pub fn group_digits(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The overlay as a picture: a translucent dark panel sized to its lines, the lines over it.
pub fn overlay_picture(input: &OverlayInput<'_>) -> Picture {
    let lines = overlay_lines(input);
    let width = lines
        .iter()
        .map(|(t, _)| label::approx_width(t, OVERLAY_TEXT))
        .fold(0.0f32, f32::max)
        + 2.0 * OVERLAY_PAD;
    let height = lines.len() as f32 * OVERLAY_LINE + 2.0 * OVERLAY_PAD;
    let mut picture = Picture {
        size: egui::vec2(width, height),
        ..Picture::default()
    };
    picture.shapes.push(
        Shape::new(
            Geometry::Rect {
                min: [0.0, 0.0],
                max: [width, height],
                corner_px: 6.0,
            },
            [16, 18, 24, 225],
        )
        .with_border([90, 96, 110, 255], 1.0),
    );
    for (i, (text, heading)) in lines.into_iter().enumerate() {
        let color = if heading {
            egui::Color32::from_rgb(250, 214, 120)
        } else {
            egui::Color32::from_rgb(222, 226, 234)
        };
        picture.labels.push(Label::new(
            egui::pos2(OVERLAY_PAD, OVERLAY_PAD + i as f32 * OVERLAY_LINE),
            text,
            OVERLAY_TEXT,
            color,
            egui::Align2::LEFT_TOP,
        ));
    }
    picture
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), Some(50.0));
        assert_eq!(percentile(&v, 99.0), Some(99.0));
        assert_eq!(percentile(&v, 100.0), Some(100.0));
        assert_eq!(percentile(&[3.0], 99.0), Some(3.0));
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn frame_times_roll() {
        let mut t = FrameTimes::new(3);
        for v in [100.0, 1.0, 2.0, 3.0] {
            t.push(v);
        }
        assert_eq!(t.len(), 3);
        assert_eq!(t.mean(), Some(2.0));
        assert_eq!(t.p99(), Some(3.0));
    }

    #[test]
    fn digits_are_grouped() {
        assert_eq!(group_digits(0), "0");
        assert_eq!(group_digits(999), "999");
        assert_eq!(group_digits(1000), "1,000");
        assert_eq!(group_digits(10_000_000), "10,000,000");
    }
}
