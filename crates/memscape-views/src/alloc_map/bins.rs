//! The allocation map split into bins (address region, size class, thread): blocks sorted by bin
//! for one upload with a draw range per bin, each bin on its own collapsed address axis, its
//! occupancy step functions and bars, and picking by a scan where no GPU answers.

use std::ops::Range;
use std::sync::Arc;

use memscape_render::alloc_map::occupancy::{BarBlocks, OccupancySteps};
use memscape_render::alloc_map::{AllocBlockGpu, BlockTimeGpu};
use memscape_trace::Trace;

use super::camera::{BinLayout, Camera};
use super::scene::{AllocScene, REGION_GAP, RegionLayout, TimeAxis};

/// How the map is split into bins, one sub-view each.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum BinBy {
    /// One view of every block over all regions.
    #[default]
    None,
    /// One bin per used address region.
    Region,
    /// One bin per power-of-two class of the requested size.
    Size,
    Thread,
    /// One bin per process, each on its own address axis (the default when several processes
    /// of a recording have events).
    Process,
    /// One bin per pool a custom allocator declared (`memscape.h`), each on the pool's
    /// address range, and one for the heap outside them (the default when pools are declared).
    Pool,
}

impl BinBy {
    pub const ALL: [BinBy; 6] = [
        BinBy::None,
        BinBy::Region,
        BinBy::Size,
        BinBy::Thread,
        BinBy::Process,
        BinBy::Pool,
    ];

    /// The binning of a trace without one asked for: by process when several have events, by
    /// pool when a custom allocator declared pools.
    pub fn default_for(trace: &Trace) -> Self {
        if memscape_trace::process::several_with_events(trace) {
            BinBy::Process
        } else if !trace.pools.is_empty() {
            BinBy::Pool
        } else {
            BinBy::None
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            BinBy::None => "no bins",
            BinBy::Region => "bins: address region",
            BinBy::Size => "bins: size class (2^k)",
            BinBy::Thread => "bins: thread",
            BinBy::Process => "bins: process",
            BinBy::Pool => "bins: pool",
        }
    }
}

/// One bin: its blocks' range in the bin-sorted upload and its own collapsed address axis (its
/// used ranges, split where gaps exceed [`REGION_GAP`], concatenated with thin separators).
#[derive(Debug, Clone)]
pub struct BinInfo {
    pub label: String,
    /// Positions of its blocks in [`BinnedScene::blocks`].
    pub range: Range<usize>,
    pub regions: Vec<RegionLayout>,
    pub collapsed_extent: u64,
    /// Bytes of its used ranges: "full" for its occupancy, what its free bar measures against.
    pub capacity: u64,
    /// The most bytes live at once: requested bytes as `info` counts them, or for region bins
    /// (and the unbinned map) their regions' extents, what the occupancy bars draw.
    pub peak_bytes: u64,
    /// Its step functions in [`BinnedScene::metrics`] (several for the unbinned view: one per
    /// region).
    pub series: Vec<usize>,
    /// The bin's own time span when it has one (a process's life): in the grid its cell spans
    /// that instead of the whole run ([`BinnedScene::cell_window`]).
    pub own_time: Option<OwnTime>,
}

/// A bin's own time span on each time axis: `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnTime {
    pub events: (u64, u64),
    pub wall_ns: (u64, u64),
}

impl OwnTime {
    /// The span of the blocks `members` (trace indices) of process `p`: from its first
    /// allocation to its end (the last event when its end was not seen), or to its blocks'
    /// last free where the process gives no end (an import without process times). Blocks a
    /// process never freed are ended at the end of the recording; its cell ends with it.
    pub fn of_process(
        trace: &Trace,
        members: &[u32],
        p: Option<&memscape_trace::process::Process>,
    ) -> Option<Self> {
        use super::camera::events_at;
        let b = &trace.blocks;
        let first = *members.first()? as usize;
        let (mut lo_w, mut lo_e) = (b.alloc_time_ns[first], b.alloc_event[first]);
        let (mut hi_w, mut hi_e) = (0u64, 0u64);
        for &i in members {
            let i = i as usize;
            lo_w = lo_w.min(b.alloc_time_ns[i]);
            lo_e = lo_e.min(b.alloc_event[i]);
            hi_w = hi_w.max(b.free_time_ns[i]);
            hi_e = hi_e.max(b.free_event[i]);
        }
        if let Some(p) = p.filter(|p| p.end_ns > lo_w) {
            // Its own events up to its end: the frees then, the allocations (a block it never
            // freed is ended at the end of the recording, after the process).
            hi_w = p.end_ns;
            hi_e = events_at(trace, TimeAxis::Wall, p.end_ns);
            for &i in members {
                let i = i as usize;
                let last = if b.free_time_ns[i] <= p.end_ns {
                    b.free_event[i]
                } else {
                    b.alloc_event[i]
                };
                hi_e = hi_e.max(last.saturating_add(1));
            }
        }
        Some(Self {
            events: (lo_e, hi_e.max(lo_e.saturating_add(1))),
            wall_ns: (lo_w, hi_w.max(lo_w.saturating_add(1))),
        })
    }

    pub fn on(&self, axis: TimeAxis) -> (u64, u64) {
        match axis {
            TimeAxis::Events => self.events,
            TimeAxis::Wall => self.wall_ns,
        }
    }
}

/// The map split into bins: blocks sorted by bin (one upload, one draw range per bin), each bin
/// with its own collapsed address axis, and per-bin step functions for occupancy and activity.
pub struct BinnedScene {
    pub by: BinBy,
    pub bins: Vec<BinInfo>,
    /// Trace block index at each position (`None`: the identity, the unbinned map).
    pub order: Option<Arc<Vec<u32>>>,
    /// Position of each trace block (`None`: the identity).
    pub position: Option<Vec<u32>>,
    /// Bin of each trace block.
    pub block_bin: Arc<Vec<u32>>,
    /// Blocks at their bin-local collapsed addresses, in position order (colours unset).
    pub blocks: Arc<Vec<AllocBlockGpu>>,
    pub times_events: Arc<Vec<BlockTimeGpu>>,
    pub times_wall: Arc<Vec<BlockTimeGpu>>,
    pub metrics: Arc<memscape_trace::metrics::BinMetrics>,
}

impl BinnedScene {
    /// No bins and no blocks (a trace without addresses).
    pub fn empty() -> Self {
        Self {
            by: BinBy::None,
            bins: Vec::new(),
            order: None,
            position: None,
            block_bin: Arc::default(),
            blocks: Arc::default(),
            times_events: Arc::default(),
            times_wall: Arc::default(),
            metrics: Arc::new(memscape_trace::metrics::BinMetrics {
                series: Vec::new(),
                extents: Vec::new(),
                has_gaps: false,
            }),
        }
    }

    /// The unbinned map as a single bin: shares the scene's buffers.
    pub fn unbinned(scene: &AllocScene) -> Self {
        let n = scene.blocks.len();
        Self {
            by: BinBy::None,
            bins: vec![BinInfo {
                label: String::from("all blocks"),
                range: 0..n,
                regions: scene.regions.clone(),
                collapsed_extent: scene.collapsed_extent,
                capacity: scene.region_capacity,
                peak_bytes: scene
                    .region_metrics
                    .series
                    .iter()
                    .map(|s| s.occupancy.iter().copied().max().unwrap_or(0))
                    .sum(),
                series: (0..scene.region_metrics.series.len()).collect(),
                own_time: None,
            }],
            order: None,
            position: None,
            block_bin: Arc::new(scene.block_region.clone()),
            blocks: scene.blocks.clone(),
            times_events: scene.times_events.clone(),
            times_wall: scene.times_wall.clone(),
            metrics: scene.region_metrics.clone(),
        }
    }

    /// Splits `trace` into bins. Linear in the blocks plus a sort of each bin's address ranges;
    /// the size and thread partitions also sweep the events once for their step functions. Run
    /// it off the UI thread.
    pub fn build(trace: &Trace, scene: &AllocScene, by: BinBy) -> Self {
        use memscape_trace::bins::{Bins, SizeClasses};
        let started = std::time::Instant::now();
        #[allow(clippy::type_complexity)]
        let (labels, block_bin, metrics, series, peaks): (
            Vec<String>,
            Vec<u32>,
            _,
            Vec<Vec<usize>>,
            Option<Vec<u64>>,
        ) = match by {
            BinBy::None => return Self::unbinned(scene),
            BinBy::Region => {
                let labels = scene
                    .regions
                    .iter()
                    .map(|r| format!("{:#x}–{:#x}", r.start, r.end))
                    .collect();
                let series = (0..scene.regions.len()).map(|k| vec![k]).collect();
                (
                    labels,
                    scene.block_region.clone(),
                    scene.region_metrics.clone(),
                    series,
                    None,
                )
            }
            BinBy::Size | BinBy::Thread | BinBy::Process | BinBy::Pool => {
                let bins = Bins::new(
                    trace,
                    match by {
                        BinBy::Size => {
                            memscape_trace::bins::BinBy::SizeClass(SizeClasses::PowerOfTwo)
                        }
                        BinBy::Thread => memscape_trace::bins::BinBy::Thread,
                        BinBy::Pool => memscape_trace::bins::BinBy::Pool,
                        _ => memscape_trace::bins::BinBy::Process,
                    },
                );
                // The bars read the occupancy only: no free gaps (see the scene's sweep).
                let (metrics, _) =
                    memscape_trace::metrics::BinMetrics::continued_occupancy(trace, &bins, None);
                let metrics = Arc::new(metrics);
                if by == BinBy::Process {
                    let (labels, block_bin, series, peaks) = largest_processes_first(bins);
                    (labels, block_bin, metrics, series, Some(peaks))
                } else {
                    let labels = bins.bins.iter().map(|b| b.label.clone()).collect();
                    let series = (0..bins.bins.len()).map(|k| vec![k]).collect();
                    let peaks = bins.bins.iter().map(|b| b.peak_bytes).collect();
                    (labels, bins.block_bin, metrics, series, Some(peaks))
                }
            }
        };
        let built = Self::from_partition(
            trace,
            scene,
            by,
            Partition {
                labels,
                block_bin,
                metrics,
                series,
                peaks,
            },
        );
        let mut built = built;
        if by == BinBy::Process
            && let Some(order) = built.order.clone()
        {
            // Each process cell on its process's own life (series k is process k).
            for bin in &mut built.bins {
                let process = bin.series.first().and_then(|&k| trace.processes.get(k));
                let members = order.get(bin.range.clone()).unwrap_or_default();
                bin.own_time = OwnTime::of_process(trace, members, process);
            }
        }
        tracing::info!(
            "bins by {by:?}: {} bins of {} blocks in {:.0} ms",
            built.bins.len(),
            built.blocks.len(),
            started.elapsed().as_secs_f64() * 1e3
        );
        built
    }

    fn from_partition(trace: &Trace, scene: &AllocScene, by: BinBy, part: Partition) -> Self {
        let Partition {
            labels,
            block_bin,
            metrics,
            series,
            peaks,
        } = part;
        let b = &trace.blocks;
        let n = b.len().min(block_bin.len());
        let nbins = labels.len().max(1);
        // Regions are split at REGION_GAP already; size classes and threads share the heap's
        // regions with each other, so their own axes drop every gap above a page.
        let gap = if by == BinBy::Region {
            REGION_GAP
        } else {
            BIN_GAP
        };
        let bin_of = |i: usize| (block_bin[i] as usize).min(nbins - 1);
        // Counting sort by bin, stable in trace order.
        let mut starts = vec![0usize; nbins + 1];
        for i in 0..n {
            starts[bin_of(i) + 1] += 1;
        }
        for k in 0..nbins {
            starts[k + 1] += starts[k];
        }
        let mut next = starts.clone();
        let mut order = vec![0u32; n];
        let mut position = vec![0u32; n];
        for (i, slot) in position.iter_mut().enumerate() {
            let k = bin_of(i);
            order[next[k]] = i as u32;
            *slot = next[k] as u32;
            next[k] += 1;
        }
        let mut bins = Vec::with_capacity(nbins);
        let mut blocks = Vec::with_capacity(n);
        for (k, label) in labels.into_iter().enumerate() {
            let range = starts[k]..starts[k + 1];
            let members = &order[range.clone()];
            let (regions, extent) = collapse_ranges(
                members
                    .iter()
                    .map(|&i| (b.address[i as usize], b.size[i as usize].max(1))),
                gap,
            );
            for &i in members {
                let i = i as usize;
                let a = b.address[i];
                let y = regions
                    .partition_point(|r| r.start <= a)
                    .checked_sub(1)
                    .map_or(0, |r| {
                        regions[r].collapsed_start + a.saturating_sub(regions[r].start)
                    });
                blocks.push(AllocBlockGpu::new(y, b.size[i].max(1), [0; 4], 0.0));
            }
            let capacity = regions.iter().map(|r| r.end - r.start).sum::<u64>().max(1);
            let peak_bytes = match peaks.as_ref().and_then(|p| p.get(k)) {
                Some(&p) => p,
                None => series.get(k).map_or(0, |s| {
                    s.iter()
                        .filter_map(|&j| metrics.series.get(j))
                        .map(|s| s.occupancy.iter().copied().max().unwrap_or(0))
                        .sum()
                }),
            };
            bins.push(BinInfo {
                label,
                range,
                regions,
                collapsed_extent: extent,
                capacity,
                peak_bytes,
                series: series.get(k).cloned().unwrap_or_default(),
                own_time: None,
            });
        }
        let permute = |t: &[BlockTimeGpu]| -> Arc<Vec<BlockTimeGpu>> {
            Arc::new(order.iter().map(|&i| t[i as usize]).collect())
        };
        Self {
            by,
            bins,
            times_events: permute(&scene.times_events),
            times_wall: permute(&scene.times_wall),
            order: Some(Arc::new(order)),
            position: Some(position),
            block_bin: Arc::new(block_bin),
            blocks: Arc::new(blocks),
            metrics,
        }
    }

    pub fn times(&self, axis: TimeAxis) -> &Arc<Vec<BlockTimeGpu>> {
        match axis {
            TimeAxis::Events => &self.times_events,
            TimeAxis::Wall => &self.times_wall,
        }
    }

    /// The bin the context view shows first: the one with the most blocks, or by process the
    /// one with the largest peak — the process the heap tree opens on, so that the linked
    /// views start on the same process.
    pub fn largest_bin(&self) -> usize {
        let by_peak = self.by == BinBy::Process;
        (0..self.bins.len())
            .max_by_key(|&k| {
                let bin = &self.bins[k];
                let peak = if by_peak { bin.peak_bytes } else { 0 };
                (peak, bin.range.len(), usize::MAX - k)
            })
            .unwrap_or(0)
    }

    /// The weights of the grid's cells when they are not equal: process bins (largest first)
    /// by their peaks, so that the process that holds the memory gets the room to show it.
    pub fn cell_weights(&self) -> Option<Vec<f64>> {
        (self.by == BinBy::Process && self.bins.len() > 1)
            .then(|| self.bins.iter().map(|b| b.peak_bytes as f64).collect())
    }

    /// The window cell `k` shows of the shared camera `cam` (on a time axis of `t_extent`): the
    /// camera itself, or in the grid for a bin with its own time span the same part of that
    /// span (a shell's short-lived children and the long compiler they launch each fill their
    /// cell; zoom and pan apply to every cell alike). The time layout keeps one time axis.
    pub fn cell_window(
        &self,
        k: usize,
        cam: &Camera,
        axis: TimeAxis,
        t_extent: u64,
        layout: BinLayout,
    ) -> Camera {
        let own = (layout == BinLayout::Address && self.bins.len() > 1)
            .then(|| self.bins.get(k).and_then(|b| b.own_time))
            .flatten();
        match own {
            Some(own) => {
                let (start, end) = own.on(axis);
                let scale = end.saturating_sub(start).max(1) as f64 / t_extent.max(1) as f64;
                Camera {
                    t0: start as f64 + cam.t0 * scale,
                    t_span: cam.t_span * scale,
                    ..*cam
                }
            }
            None => *cam,
        }
    }

    /// [`Self::cell_window`] of every bin.
    pub fn cell_windows(
        &self,
        cam: &Camera,
        axis: TimeAxis,
        t_extent: u64,
        layout: BinLayout,
    ) -> Vec<Camera> {
        (0..self.bins.len().max(1))
            .map(|k| self.cell_window(k, cam, axis, t_extent, layout))
            .collect()
    }

    /// The trace block at upload position `p`.
    pub fn block_at(&self, p: usize) -> Option<usize> {
        match &self.order {
            None => (p < self.blocks.len()).then_some(p),
            Some(o) => o.get(p).map(|&i| i as usize),
        }
    }

    /// The upload position of trace block `i`.
    pub fn position_of(&self, i: usize) -> Option<usize> {
        match &self.position {
            None => (i < self.blocks.len()).then_some(i),
            Some(p) => p.get(i).map(|&q| q as usize),
        }
    }

    /// The bin holding upload position `p`.
    pub fn bin_at(&self, p: usize) -> Option<usize> {
        let k = self.bins.partition_point(|b| b.range.end <= p);
        (k < self.bins.len() && self.bins[k].range.contains(&p)).then_some(k)
    }

    /// The blocks in upload order with `colors` (trace order, from [`AllocScene::block_colors`]).
    pub fn colored(&self, colors: &[(u32, f32)]) -> Vec<AllocBlockGpu> {
        let mut blocks = self.blocks.as_ref().clone();
        for (p, block) in blocks.iter_mut().enumerate() {
            if let Some(&(color, attr)) = self.block_at(p).and_then(|i| colors.get(i)) {
                block.color = color;
                block.attr = attr;
            }
        }
        blocks
    }

    /// Bytes in use in bin `bin` right after `events` events.
    pub fn occupancy_at(&self, bin: usize, events: u64) -> u64 {
        let Some(info) = self.bins.get(bin) else {
            return 0;
        };
        info.series
            .iter()
            .filter_map(|&j| self.metrics.series.get(j))
            .map(|s| {
                let k = s.event.partition_point(|&e| e < events);
                k.checked_sub(1).map_or(0, |k| s.occupancy[k])
            })
            .sum()
    }

    /// Bin `bin`'s occupancy over time as the renderer's step function (its series merged in
    /// event order when it has several, as the unbinned map has one per region).
    pub fn steps(&self, bin: usize, axis: TimeAxis, end: u64) -> OccupancySteps {
        let mut out = OccupancySteps {
            start: 0,
            end,
            times: Vec::new(),
            bytes: Vec::new(),
            capacity: self.bins.get(bin).map_or(1, |b| b.capacity),
        };
        let Some(info) = self.bins.get(bin) else {
            return out;
        };
        let series: Vec<&memscape_trace::metrics::BinSeries> = info
            .series
            .iter()
            .filter_map(|&j| self.metrics.series.get(j))
            .collect();
        let key = |s: &memscape_trace::metrics::BinSeries, i: usize| match axis {
            TimeAxis::Events => s.event[i],
            TimeAxis::Wall => s.time_ns[i],
        };
        if let [s] = series.as_slice() {
            out.times = (0..s.len()).map(|i| key(s, i)).collect();
            out.bytes = s.occupancy.to_vec();
            return out;
        }
        // (event, series, row) of every row, in event order; a running sum of each series' state.
        let rows = merged_rows(&series);
        let mut state = vec![0u64; series.len()];
        let mut total = 0u64;
        out.times.reserve(rows.len());
        out.bytes.reserve(rows.len());
        for (_, j, i) in rows {
            let (s, i) = (series[j as usize], i as usize);
            total = total - state[j as usize] + s.occupancy[i];
            state[j as usize] = s.occupancy[i];
            out.times.push(key(s, i));
            out.bytes.push(total);
        }
        out
    }

    /// The occupancy bars of every bin, stacked by capacity (one upload for the per-bin bars and
    /// the stacked bar).
    pub fn bar_blocks(&self, axis: TimeAxis, end: u64) -> BarBlocks {
        let steps: Vec<OccupancySteps> = (0..self.bins.len())
            .map(|k| self.steps(k, axis, end))
            .collect();
        // Half of the stacked bar by capacity, half shared equally: a small bin keeps a band
        // tall enough to read (at least half of `layout::STACKED_PER_BIN`).
        let total = steps
            .iter()
            .map(|s| s.capacity as f64)
            .sum::<f64>()
            .max(1.0);
        let n = steps.len().max(1) as f64;
        let weights: Vec<f64> = steps
            .iter()
            .map(|s| 0.5 * s.capacity as f64 / total + 0.5 / n)
            .collect();
        BarBlocks::build(&steps, &weights)
    }

    /// The block under (time, bin-local collapsed address) in bin `bin`, by a linear scan of the
    /// bin's blocks: the fallback where no GPU pick answers (no GPU, headless clicks).
    pub fn pick(&self, bin: usize, axis: TimeAxis, t: u64, y: u64) -> Option<usize> {
        let range = self.bins.get(bin)?.range.clone();
        let times = self.times(axis);
        let join = |v: [u32; 2]| u64::from(v[0]) | (u64::from(v[1]) << 32);
        range.clone().rev().find(|&p| {
            let (b, tm) = (&self.blocks[p], &times[p]);
            let (y0, size) = (join(b.addr), join(b.size));
            (join(tm.start)..join(tm.end)).contains(&t)
                && (y0..y0.saturating_add(size)).contains(&y)
        })
    }

    /// The real address at bin-local collapsed address `y` of bin `bin`.
    pub fn uncollapse(&self, bin: usize, y: u64) -> Option<u64> {
        let regions = &self.bins.get(bin)?.regions;
        let r = &regions[regions
            .partition_point(|r| r.collapsed_start <= y)
            .checked_sub(1)?];
        let offset = y - r.collapsed_start;
        (offset < r.end - r.start).then_some(r.start + offset)
    }
}

/// Gaps wider than this split a size-class or thread bin's own address axis.
pub const BIN_GAP: u64 = 4096;

/// A partition of the blocks into bins, as [`BinnedScene::from_partition`] lays it out.
struct Partition {
    labels: Vec<String>,
    block_bin: Vec<u32>,
    metrics: Arc<memscape_trace::metrics::BinMetrics>,
    /// Each bin's step functions in `metrics`.
    series: Vec<Vec<usize>>,
    /// Each bin's peak in requested bytes, as `info` counts it (`None`: the occupancy's peak,
    /// address extents, as region bins count it).
    peaks: Option<Vec<u64>>,
}

/// Process bins with blocks, the largest peak first (then the most blocks, then the recording's
/// order): a run through a shell or a version-manager shim has dozens of tiny processes around
/// the one the user cares about, and that one now leads the grid (and gets the largest cell,
/// `cell_weights`) instead of sitting wherever its pid falls. Processes without blocks get no
/// cell. Returns the labels, each block's bin, each bin's series in the metrics (indexed by
/// the recording's process order) and its peak in requested bytes.
#[allow(clippy::type_complexity)]
fn largest_processes_first(
    bins: memscape_trace::bins::Bins,
) -> (Vec<String>, Vec<u32>, Vec<Vec<usize>>, Vec<u64>) {
    let peak = |k: usize| bins.bins[k].peak_bytes;
    let mut kept: Vec<usize> = (0..bins.bins.len())
        .filter(|&k| bins.bins[k].blocks > 0)
        .collect();
    if kept.is_empty() {
        kept.push(0);
    }
    kept.sort_by_key(|&k| (std::cmp::Reverse((peak(k), bins.bins[k].blocks)), k));
    let mut new_index = vec![0u32; bins.bins.len().max(1)];
    for (j, &k) in kept.iter().enumerate() {
        new_index[k] = j as u32;
    }
    let block_bin = bins
        .block_bin
        .iter()
        .map(|&k| new_index.get(k as usize).copied().unwrap_or(0))
        .collect();
    let labels = kept
        .iter()
        .map(|&k| {
            bins.bins
                .get(k)
                .map_or_else(String::new, |b| b.label.clone())
        })
        .collect();
    let series = kept.iter().map(|&k| vec![k]).collect();
    let peaks = kept
        .iter()
        .map(|&k| bins.bins.get(k).map_or(0, |b| b.peak_bytes))
        .collect();
    (labels, block_bin, series, peaks)
}

/// Address ranges `(start, size)` merged into used ranges (gaps above `gap` split them) and laid
/// out on a collapsed axis with separators between them: 1 % of the used bytes (at least 64 B)
/// for a few ranges, less for many, so that separators never take more than 5 % of the axis.
/// Returns the layout and the axis length.
pub fn collapse_ranges(
    ranges: impl Iterator<Item = (u64, u64)>,
    gap: u64,
) -> (Vec<RegionLayout>, u64) {
    let mut spans: Vec<(u64, u64)> = ranges.map(|(a, s)| (a, a.saturating_add(s))).collect();
    spans.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for (a, e) in spans {
        match merged.last_mut() {
            Some(last) if a <= last.1.saturating_add(gap) => last.1 = last.1.max(e),
            _ => merged.push((a, e)),
        }
    }
    let used: u64 = merged.iter().map(|(a, e)| e - a).sum();
    let separator = (used / 100)
        .max(64)
        .min(used / (20 * merged.len() as u64).max(1));
    let mut axis = 0u64;
    let layout: Vec<RegionLayout> = merged
        .iter()
        .enumerate()
        .map(|(k, &(start, end))| {
            if k > 0 {
                axis = axis.saturating_add(separator);
            }
            let r = RegionLayout {
                start,
                end,
                collapsed_start: axis,
            };
            axis = axis.saturating_add(end - start);
            r
        })
        .collect();
    (layout, axis.max(1))
}

/// `(event, series, row)` of every row of `series`, sorted: the series' own event orders merged
/// (each is in event order), else sorted whole.
fn merged_rows(series: &[&memscape_trace::metrics::BinSeries]) -> Vec<(u64, u32, u32)> {
    use std::cmp::Reverse;
    let total: usize = series.iter().map(|s| s.len()).sum();
    let mut rows = Vec::with_capacity(total);
    let ordered = series
        .iter()
        .all(|s| s.event.windows(2).all(|w| w[0] <= w[1]));
    if !ordered {
        rows.extend(
            series
                .iter()
                .enumerate()
                .flat_map(|(j, s)| (0..s.len()).map(move |i| (s.event[i], j as u32, i as u32))),
        );
        rows.sort_unstable();
        return rows;
    }
    let mut heads: std::collections::BinaryHeap<Reverse<(u64, u32, u32)>> = series
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.is_empty())
        .map(|(j, s)| Reverse((s.event[0], j as u32, 0)))
        .collect();
    while let Some(Reverse(row)) = heads.pop() {
        rows.push(row);
        let (j, i) = (row.1 as usize, row.2 as usize + 1);
        if i < series[j].len() {
            heads.push(Reverse((series[j].event[i], row.1, i as u32)));
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::super::colors::{ColorBy, categorical};
    use super::*;
    use crate::test_data::demo;

    #[test]
    fn collapse_keeps_order_and_drops_gaps() {
        let (layout, extent) = collapse_ranges(
            [(1000, 10), (0, 100), (50, 100), (1 << 30, 8)].into_iter(),
            4096,
        );
        assert_eq!(layout.len(), 2, "{layout:?}");
        assert_eq!((layout[0].start, layout[0].end), (0, 1010));
        assert_eq!((layout[1].start, layout[1].end), (1 << 30, (1 << 30) + 8));
        assert!(layout[1].collapsed_start >= 1010, "after the first range");
        assert_eq!(extent, layout[1].collapsed_start + 8);
        // Separators stay a small part of the axis even with many ranges.
        let many = (0..1000u64).map(|k| (k * 1_000_000, 16));
        let (layout, extent) = collapse_ranges(many, 4096);
        assert_eq!(layout.len(), 1000);
        assert!(extent <= 16_000 * 21 / 20, "extent {extent}");
    }

    #[test]
    fn bins_partition_every_block_onto_its_own_axis() {
        let d = demo();
        let t = d.alloc_trace().unwrap();
        let scene = t.scene.as_ref().unwrap();
        let b = &t.trace.blocks;
        for by in [BinBy::None, BinBy::Region, BinBy::Size, BinBy::Thread] {
            let binned = BinnedScene::build(&t.trace, scene, by);
            assert_eq!(binned.blocks.len(), b.len(), "{by:?}");
            let mut seen = vec![false; b.len()];
            for (k, bin) in binned.bins.iter().enumerate() {
                for p in bin.range.clone() {
                    let i = binned.block_at(p).unwrap();
                    assert!(!seen[i], "{by:?}: block {i} twice");
                    seen[i] = true;
                    assert_eq!(binned.position_of(i), Some(p));
                    assert_eq!(binned.bin_at(p), Some(k));
                    // Unbinned, "colour by bin" colours by address region.
                    let expected = if by == BinBy::None {
                        scene.block_region[i] as usize
                    } else {
                        k
                    };
                    assert_eq!(binned.block_bin[i] as usize, expected, "{by:?}");
                    // The block lies inside its bin's axis, at its own address.
                    let join = |v: [u32; 2]| u64::from(v[0]) | (u64::from(v[1]) << 32);
                    let y = join(binned.blocks[p].addr);
                    assert!(y + b.size[i].max(1) <= bin.collapsed_extent, "{by:?} {i}");
                    assert_eq!(binned.uncollapse(k, y), Some(b.address[i]), "{by:?} {i}");
                    assert_eq!(binned.times_events[p], scene.times_events[i]);
                }
            }
            assert!(seen.iter().all(|&s| s), "{by:?}: every block in a bin");
            // Occupancy at the end equals the bytes still live in each bin.
            let end = t.trace.meta.events;
            let total: u64 = (0..binned.bins.len())
                .map(|k| binned.occupancy_at(k, end))
                .sum();
            let live: u64 = (0..b.len())
                .filter(|&i| b.free_event[i] >= end)
                .map(|i| b.size[i])
                .sum();
            assert_eq!(total, live, "{by:?}");
            // The step function of each bin ends where the bin ends.
            for k in 0..binned.bins.len() {
                let steps = binned.steps(k, TimeAxis::Events, end);
                assert_eq!(
                    steps.bytes.last().copied().unwrap_or(0),
                    binned.occupancy_at(k, end)
                );
                assert!(steps.times.windows(2).all(|w| w[0] <= w[1]));
            }
        }
        let size = BinnedScene::build(&t.trace, scene, BinBy::Size);
        assert!(size.bins.len() > 5, "the demo has many size classes");
    }

    #[test]
    fn colours_follow_bins_and_age() {
        let d = demo();
        let t = d.alloc_trace().unwrap();
        let scene = t.scene.as_ref().unwrap();
        let binned = BinnedScene::build(&t.trace, scene, BinBy::Size);
        let colors = scene.block_colors(&t.trace, ColorBy::Bin, &binned.block_bin, 1);
        for (i, &(c, _)) in colors.iter().enumerate().step_by(97) {
            let k = binned.block_bin[i];
            assert_eq!(c, memscape_render::color::pack_rgba8(categorical(k)));
        }
        let b = &t.trace.blocks;
        let at = t.trace.meta.events / 2;
        let age = scene.block_colors(&t.trace, ColorBy::Age, &binned.block_bin, at);
        for i in (0..b.len()).step_by(101) {
            let expect = at.saturating_sub(b.alloc_event[i]) as f32 / at as f32;
            assert!((age[i].1 - expect).abs() < 1e-6, "block {i}");
        }
        // Uploaded colours sit at each block's position.
        let blocks = binned.colored(&colors);
        for p in (0..blocks.len()).step_by(89) {
            let i = binned.block_at(p).unwrap();
            assert_eq!(blocks[p].color, colors[i].0);
        }
    }
}
