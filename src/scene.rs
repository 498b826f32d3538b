//! Datasets turned into what the renderer draws; shared by the GUI and `memscape render`, so
//! that both show exactly the same picture.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use memscape_render::alloc_map::occupancy::{BarBlocks, OccupancySteps};
use memscape_render::alloc_map::{AllocBlockGpu, BlockTimeGpu, ColorMode};
use memscape_trace::Trace;

/// Which attribute colours the blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ColorBy {
    Thread,
    Site,
    Size,
    Lifetime,
    Waste,
    /// Time since allocation, seen from the time cursor (the trace's end without one).
    Age,
    /// The block's bin (its address region when the map is not binned).
    Bin,
}

impl ColorBy {
    pub const ALL: [ColorBy; 7] = [
        ColorBy::Thread,
        ColorBy::Site,
        ColorBy::Size,
        ColorBy::Lifetime,
        ColorBy::Age,
        ColorBy::Waste,
        ColorBy::Bin,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ColorBy::Thread => "thread",
            ColorBy::Site => "allocating call site",
            ColorBy::Size => "size (log)",
            ColorBy::Lifetime => "lifetime (log)",
            ColorBy::Waste => "waste (usable − requested)",
            ColorBy::Age => "age at the time cursor",
            ColorBy::Bin => "bin",
        }
    }

    /// The name on the command line and in tour files.
    pub fn key(self) -> &'static str {
        match self {
            ColorBy::Thread => "thread",
            ColorBy::Site => "site",
            ColorBy::Size => "size",
            ColorBy::Lifetime => "lifetime",
            ColorBy::Waste => "waste",
            ColorBy::Age => "age",
            ColorBy::Bin => "bin",
        }
    }

    /// Thread when there are several, otherwise the allocating call site.
    pub fn default_for(trace: &Trace) -> Self {
        if trace.threads.len() > 1 {
            ColorBy::Thread
        } else {
            ColorBy::Site
        }
    }

    pub fn mode(self) -> ColorMode {
        match self {
            ColorBy::Thread | ColorBy::Site | ColorBy::Bin => ColorMode::Categorical,
            _ => ColorMode::Quantitative,
        }
    }
}

/// 64 categorical colours (sRGB) chosen greedily for the largest smallest CIELAB distance
/// (Glasbey's method) among colours readable on the map's near-black background: any two of the
/// first 32 differ by ΔE76 ≥ 29, any two of all 64 by ≥ 20 (a test checks it). The first eight
/// are the renderer's palette. Classes beyond 64 wrap around.
pub const PALETTE: [[u8; 3]; 64] = [
    [0x4e, 0x79, 0xa7],
    [0xf2, 0x8e, 0x2b],
    [0xe1, 0x57, 0x59],
    [0x76, 0xb7, 0xb2],
    [0x59, 0xa1, 0x4f],
    [0xed, 0xc9, 0x48],
    [0xb0, 0x7a, 0xa1],
    [0xff, 0x9d, 0xa7],
    [0x88, 0x11, 0xff],
    [0x00, 0xff, 0x00],
    [0xff, 0x00, 0xbb],
    [0x11, 0x66, 0xee],
    [0xff, 0x00, 0x00],
    [0xbb, 0xee, 0x00],
    [0x99, 0x77, 0x44],
    [0xdd, 0x88, 0xff],
    [0x00, 0xee, 0x77],
    [0x00, 0xee, 0xcc],
    [0xdd, 0xdd, 0xaa],
    [0xff, 0x00, 0x77],
    [0xaa, 0x33, 0x88],
    [0xff, 0x00, 0xff],
    [0xbb, 0xcc, 0xff],
    [0x00, 0x99, 0xff],
    [0x99, 0x33, 0xcc],
    [0x33, 0xaa, 0x00],
    [0x00, 0xcc, 0xff],
    [0xaa, 0xee, 0x77],
    [0x77, 0x66, 0xbb],
    [0x88, 0x99, 0x00],
    [0xbb, 0x33, 0x00],
    [0x44, 0x77, 0x55],
    [0xff, 0xbb, 0xff],
    [0xff, 0xbb, 0x88],
    [0xff, 0x00, 0x44],
    [0x99, 0x55, 0x55],
    [0xff, 0x77, 0xbb],
    [0x99, 0x55, 0x00],
    [0x99, 0xee, 0xaa],
    [0xff, 0x66, 0x00],
    [0x66, 0x55, 0xff],
    [0x77, 0xee, 0x33],
    [0x11, 0xaa, 0x88],
    [0xee, 0x55, 0xee],
    [0xaa, 0x88, 0x11],
    [0x00, 0xee, 0xff],
    [0x66, 0x77, 0x22],
    [0xbb, 0x33, 0x66],
    [0xcc, 0x77, 0x55],
    [0xee, 0xdd, 0x00],
    [0x00, 0x77, 0x88],
    [0xaa, 0xbb, 0x66],
    [0x00, 0x77, 0x00],
    [0xaa, 0xaa, 0xff],
    [0x00, 0xcc, 0x88],
    [0xdd, 0x00, 0x88],
    [0x99, 0x88, 0xff],
    [0xcc, 0xdd, 0x55],
    [0x88, 0xee, 0xdd],
    [0xff, 0x66, 0x44],
    [0xbb, 0x22, 0xaa],
    [0x00, 0x66, 0xbb],
    [0xff, 0xbb, 0x00],
    [0x66, 0xaa, 0xee],
];

/// Class `index` of a categorical colouring (threads, bins), sRGB with alpha 255.
pub fn categorical(index: u32) -> [u8; 4] {
    let [r, g, b] = PALETTE[index as usize % PALETTE.len()];
    [r, g, b, 255]
}

/// The colour of a call site: a hash of its id into the categorical palette, so that a site keeps
/// its colour whatever else is loaded.
pub fn site_color(site: u32) -> [u8; 4] {
    categorical(site.wrapping_mul(2_654_435_761) >> 26)
}

/// Legend labels of call sites: the allocating function (unnamed frames of the C/C++ runtime
/// skipped, module directories dropped) and, where two sites would read the same, the caller at
/// the depth where this site's chain of callers stops matching any other's (up to 6 frames up);
/// labels that still coincide (stacks alike that far) are numbered.
pub fn site_labels(trace: &memscape_trace::Trace, sites: &[u32]) -> Vec<(u32, String)> {
    const UP: usize = 6;
    let short = |node: u32| {
        crate::views::heap_tree::draw::short_name(&trace.describe_frame(node)).to_owned()
    };
    // Each site's chain of frame names from the allocating frame outwards.
    let chains: Vec<Vec<String>> = sites
        .iter()
        .map(|&s| {
            let mut node = memscape_heap::trace_tree::allocation_site(trace, s);
            let mut chain = Vec::new();
            while node != 0 && chain.len() <= UP {
                chain.push(short(node));
                node = trace
                    .call_tree
                    .parent
                    .get(node as usize)
                    .copied()
                    .unwrap_or(0);
            }
            chain
        })
        .collect();
    let labels: Vec<(u32, String)> = sites
        .iter()
        .enumerate()
        .map(|(i, &site)| {
            let mine = &chains[i];
            let first = mine.first().cloned().unwrap_or_else(|| "?".into());
            let twins: Vec<&Vec<String>> = chains
                .iter()
                .enumerate()
                .filter(|(j, c)| *j != i && c.first() == mine.first())
                .map(|(_, c)| c)
                .collect();
            // Twins in the same function at other lines read apart by their line; others by
            // the first depth at which this chain differs from every twin.
            let line = site_line(trace, sites[i]);
            let other_lines = chains.iter().enumerate().any(|(j, c)| {
                j != i && c.first() == mine.first() && site_line(trace, sites[j]) != line
            });
            // The shortest chain of callers no twin shares: with many twins, a single depth
            // at which this chain differs from all of them at once often does not exist.
            // Twins with the very same chain cannot be told apart here (they are numbered).
            let parting = (1..mine.len()).find(|&k| {
                twins
                    .iter()
                    .filter(|t| **t != mine)
                    .all(|t| t.get(1..=k) != mine.get(1..=k))
            });
            let label = match (&line, parting) {
                (Some(line), _) if other_lines => format!("{first} ({line})"),
                (_, Some(k)) if !twins.is_empty() => format!("{first} (from {})", mine[k]),
                _ => first,
            };
            (site, label)
        })
        .collect();
    number_repeats(labels)
}

/// `label #2`, `label #3` … for the second and later sites whose labels are still the same.
fn number_repeats(labels: Vec<(u32, String)>) -> Vec<(u32, String)> {
    let mut total: HashMap<String, usize> = HashMap::new();
    for (_, l) in &labels {
        *total.entry(l.clone()).or_default() += 1;
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    labels
        .into_iter()
        .map(|(site, l)| {
            if total.get(&l).copied().unwrap_or(0) < 2 {
                return (site, l);
            }
            let n = seen.entry(l.clone()).or_default();
            *n += 1;
            let label = if *n == 1 { l } else { format!("{l} #{n}") };
            (site, label)
        })
        .collect()
}

/// `file:line` (file name without directories) of a site's allocating frame, when known.
fn site_line(trace: &memscape_trace::Trace, site: u32) -> Option<String> {
    let node = memscape_heap::trace_tree::allocation_site(trace, site);
    let text = trace.describe_frame(node);
    // "function (dir/file.c:12)"
    let inner = text.rsplit_once(" (")?.1.strip_suffix(')')?;
    let (file, line) = inner.rsplit_once(':')?;
    line.parse::<u32>().ok()?;
    let file = file.rsplit('/').next().unwrap_or(file);
    Some(format!("{file}:{line}"))
}

/// The time axis of the map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeAxis {
    /// Event index: spreads dense bursts.
    Events,
    /// Wall-clock nanoseconds: shows pauses.
    Wall,
}

/// One used address range and where it starts on the collapsed axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegionLayout {
    pub start: u64,
    pub end: u64,
    pub collapsed_start: u64,
}

/// The allocation map's input: one GPU block per trace block (same index), both time axes.
pub struct AllocScene {
    /// Occupancy, activity and free gaps per address region over time (step functions from
    /// memscape-trace), for the occupancy bar.
    pub region_metrics: Arc<memscape_trace::metrics::BinMetrics>,
    /// Bytes of address space the regions span: the denominator of "full".
    pub region_capacity: u64,
    /// Shared with the views, which keep this `Arc` until they recolour.
    pub blocks: Arc<Vec<AllocBlockGpu>>,
    pub times_events: Arc<Vec<BlockTimeGpu>>,
    pub times_wall: Arc<Vec<BlockTimeGpu>>,
    pub regions: Vec<RegionLayout>,
    /// Region index of each block (trace order).
    pub block_region: Vec<u32>,
    /// Total height of the collapsed address axis in bytes (regions plus separators).
    pub collapsed_extent: u64,
    pub events_extent: u64,
    pub wall_extent: u64,
    pub color_by: ColorBy,
    /// The call sites with the most bytes live at the peak ([`memscape_trace::sites::LineKey`]
    /// digest, the colour key of their blocks; description), for the legend.
    pub top_sites: Vec<(u32, String)>,
}

/// Gap that splits the address space into regions.
pub const REGION_GAP: u64 = memscape_trace::regions::DEFAULT_GAP_THRESHOLD;

impl AllocScene {
    pub fn build(trace: &Trace, color_by: ColorBy) -> Self {
        let regions = memscape_trace::regions::find_regions(trace, REGION_GAP);
        let used = regions.axis_len();
        // Collapsed gaps stay visible as thin separators: 1 % of the used bytes, at least 64 B.
        let separator = (used / 100).max(64);
        let layout: Vec<RegionLayout> = regions
            .regions
            .iter()
            .enumerate()
            .map(|(k, r)| RegionLayout {
                start: r.start,
                end: r.end,
                collapsed_start: r
                    .axis_start
                    .saturating_add(separator.saturating_mul(k as u64)),
            })
            .collect();
        let collapsed_extent = layout
            .last()
            .map_or(1, |r| r.collapsed_start.saturating_add(r.end - r.start))
            .max(1);
        let b = &trace.blocks;
        let n = b.len();
        let events_extent = trace.meta.events.max(1);
        let wall_extent = trace.meta.end_time_ns.max(1);
        let mut blocks = Vec::with_capacity(n);
        let mut times_events = Vec::with_capacity(n);
        let mut times_wall = Vec::with_capacity(n);
        for i in 0..n {
            let y = regions
                .block_region
                .get(i)
                .and_then(|&k| layout.get(k as usize))
                .map_or(0, |r| {
                    r.collapsed_start + b.address[i].saturating_sub(r.start)
                });
            blocks.push(AllocBlockGpu::new(y, b.size[i].max(1), [0; 4], 0.0));
            times_events.push(BlockTimeGpu::new(b.alloc_event[i], b.free_event[i]));
            times_wall.push(BlockTimeGpu::new(b.alloc_time_ns[i], b.free_time_ns[i]));
        }
        let region_bins = memscape_trace::bins::Bins::new(
            trace,
            memscape_trace::bins::BinBy::Region {
                gap_threshold: REGION_GAP,
            },
        );
        let region_capacity = region_bins
            .bins
            .iter()
            .map(|b| b.extent_end.saturating_sub(b.extent_start))
            .sum::<u64>()
            .max(1);
        let region_metrics = Arc::new(memscape_trace::metrics::BinMetrics::compute(
            trace,
            &region_bins,
        ));
        // Legend entries keyed like the blocks' colours: by site at line granularity, past
        // allocation wrappers (memscape_trace::sites).
        let top = memscape_trace::info::top_call_sites(trace, 8);
        let nodes: Vec<u32> = top.iter().map(|s| s.site).collect();
        let top_sites = site_labels(trace, &nodes)
            .into_iter()
            .zip(&top)
            .map(|((_, label), s)| (s.key, label))
            .collect();
        let mut scene = Self {
            top_sites,
            region_metrics,
            region_capacity,
            blocks: Arc::new(blocks),
            times_events: Arc::new(times_events),
            times_wall: Arc::new(times_wall),
            regions: layout,
            block_region: regions.block_region,
            collapsed_extent,
            events_extent,
            wall_extent,
            color_by,
        };
        scene.recolor(trace, color_by);
        scene
    }

    pub fn time_extent(&self, axis: TimeAxis) -> u64 {
        match axis {
            TimeAxis::Events => self.events_extent,
            TimeAxis::Wall => self.wall_extent,
        }
    }

    /// Recomputes colours and attributes for a new colouring.
    pub fn recolor(&mut self, trace: &Trace, color_by: ColorBy) {
        self.blocks = Arc::new(self.colored_blocks(trace, color_by));
        self.color_by = color_by;
    }

    /// A copy of the blocks coloured by `color_by` (age at the trace's end, bins = regions).
    pub fn colored_blocks(&self, trace: &Trace, color_by: ColorBy) -> Vec<AllocBlockGpu> {
        let colors = self.block_colors(trace, color_by, &self.block_region, self.events_extent);
        let mut blocks = self.blocks.as_ref().clone();
        for (block, (color, attr)) in blocks.iter_mut().zip(colors) {
            block.color = color;
            block.attr = attr;
        }
        blocks
    }

    /// Each block's packed colour and attribute (trace order) for `color_by`: `block_bin` gives
    /// the bin of each block for [`ColorBy::Bin`], `age_at` the time (in events) from which
    /// [`ColorBy::Age`] looks (blocks allocated later are age 0).
    pub fn block_colors(
        &self,
        trace: &Trace,
        color_by: ColorBy,
        block_bin: &[u32],
        age_at: u64,
    ) -> Vec<(u32, f32)> {
        let b = &trace.blocks;
        let log_norm = |v: u64, max: u64| -> f32 {
            let lm = ((max.max(2)) as f64).log2();
            ((v.max(1) as f64).log2() / lm).clamp(0.0, 1.0) as f32
        };
        let max_size = b.size.iter().copied().max().unwrap_or(1);
        let max_life = (0..b.len())
            .map(|i| b.free_event[i].saturating_sub(b.alloc_event[i]))
            .max()
            .unwrap_or(1);
        let age_at = age_at.max(1);
        let pack = memscape_render::color::pack_rgba8;
        // Sites at line granularity past allocation wrappers, one digest per stack.
        let site_key = if color_by == ColorBy::Site {
            let sites = memscape_trace::sites::Sites::new(
                trace,
                &memscape_trace::sites::SiteOptions::default(),
            );
            let mut keys: HashMap<u32, u32> = HashMap::new();
            b.site
                .iter()
                .map(|&s| {
                    *keys
                        .entry(s)
                        .or_insert_with(|| sites.line_key(trace, s).digest())
                })
                .collect()
        } else {
            Vec::new()
        };
        (0..b.len())
            .map(|i| match color_by {
                ColorBy::Thread => (pack(categorical(b.thread[i])), 0.0),
                ColorBy::Site => (pack(site_color(site_key[i])), 0.0),
                ColorBy::Bin => (
                    pack(categorical(block_bin.get(i).copied().unwrap_or(0))),
                    0.0,
                ),
                ColorBy::Size => (0, log_norm(b.size[i], max_size)),
                ColorBy::Lifetime => (
                    0,
                    log_norm(b.free_event[i].saturating_sub(b.alloc_event[i]), max_life),
                ),
                ColorBy::Waste => {
                    let usable = b.usable_size[i];
                    let requested = b.requested_size[i];
                    let waste = if usable > 0 && usable >= requested {
                        (usable - requested) as f32 / usable as f32
                    } else {
                        0.0
                    };
                    (0, waste)
                }
                ColorBy::Age => (
                    0,
                    (age_at.saturating_sub(b.alloc_event[i]) as f64 / age_at as f64) as f32,
                ),
            })
            .collect()
    }

    /// The collapsed position of a real address, if it lies inside a region.
    pub fn collapse(&self, address: u64) -> Option<u64> {
        let i = self
            .regions
            .partition_point(|r| r.start <= address)
            .checked_sub(1)?;
        let r = &self.regions[i];
        (address < r.end).then(|| r.collapsed_start + (address - r.start))
    }

    /// The region index and real address at a collapsed address, if it falls inside a region.
    pub fn uncollapse(&self, y: u64) -> Option<(usize, u64)> {
        let i = self
            .regions
            .partition_point(|r| r.collapsed_start <= y)
            .checked_sub(1)?;
        let r = &self.regions[i];
        let offset = y - r.collapsed_start;
        (offset < r.end - r.start).then_some((i, r.start + offset))
    }
}

/// How the map is split into bins, one sub-view each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BinBy {
    /// One view of every block over all regions.
    #[default]
    None,
    /// One bin per used address region.
    Region,
    /// One bin per power-of-two class of the requested size.
    Size,
    Thread,
}

impl BinBy {
    pub const ALL: [BinBy; 4] = [BinBy::None, BinBy::Region, BinBy::Size, BinBy::Thread];

    pub fn name(self) -> &'static str {
        match self {
            BinBy::None => "no bins",
            BinBy::Region => "bins: address region",
            BinBy::Size => "bins: size class (2^k)",
            BinBy::Thread => "bins: thread",
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
    pub peak_bytes: u64,
    /// Its step functions in [`BinnedScene::metrics`] (several for the unbinned view: one per
    /// region).
    pub series: Vec<usize>,
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
        let (labels, block_bin, metrics, series): (Vec<String>, Vec<u32>, _, Vec<Vec<usize>>) =
            match by {
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
                    )
                }
                BinBy::Size | BinBy::Thread => {
                    let bins = Bins::new(
                        trace,
                        if by == BinBy::Size {
                            memscape_trace::bins::BinBy::SizeClass(SizeClasses::PowerOfTwo)
                        } else {
                            memscape_trace::bins::BinBy::Thread
                        },
                    );
                    let metrics =
                        Arc::new(memscape_trace::metrics::BinMetrics::compute(trace, &bins));
                    let labels = bins.bins.iter().map(|b| b.label.clone()).collect();
                    let series = (0..bins.bins.len()).map(|k| vec![k]).collect();
                    (labels, bins.block_bin, metrics, series)
                }
            };
        let built = Self::from_partition(trace, scene, by, labels, block_bin, metrics, series);
        tracing::info!(
            "bins by {by:?}: {} bins of {} blocks in {:.0} ms",
            built.bins.len(),
            built.blocks.len(),
            started.elapsed().as_secs_f64() * 1e3
        );
        built
    }

    fn from_partition(
        trace: &Trace,
        scene: &AllocScene,
        by: BinBy,
        labels: Vec<String>,
        block_bin: Vec<u32>,
        metrics: Arc<memscape_trace::metrics::BinMetrics>,
        series: Vec<Vec<usize>>,
    ) -> Self {
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
            let peak_bytes = series.get(k).map_or(0, |s| {
                s.iter()
                    .filter_map(|&j| metrics.series.get(j))
                    .map(|s| s.occupancy.iter().copied().max().unwrap_or(0))
                    .sum()
            });
            bins.push(BinInfo {
                label,
                range,
                regions,
                collapsed_extent: extent,
                capacity,
                peak_bytes,
                series: series.get(k).cloned().unwrap_or_default(),
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

    /// The bin with the most blocks (what the context view shows first).
    pub fn largest_bin(&self) -> usize {
        (0..self.bins.len())
            .max_by_key(|&k| (self.bins[k].range.len(), usize::MAX - k))
            .unwrap_or(0)
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
            out.bytes = s.occupancy.clone();
            return out;
        }
        // (event, series, row) of every row, in event order; a running sum of each series' state.
        let mut rows: Vec<(u64, u32, u32)> = series
            .iter()
            .enumerate()
            .flat_map(|(j, s)| (0..s.len()).map(move |i| (s.event[i], j as u32, i as u32)))
            .collect();
        rows.sort_unstable();
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
        BarBlocks::by_capacity(&steps)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn demo() -> crate::data::Dataset {
        let source = crate::demo::sources().into_iter().next().unwrap();
        crate::data::load(&source, &|_, _| {}).unwrap()
    }

    /// CIELAB of an sRGB colour (D65).
    fn lab(c: [u8; 3]) -> [f64; 3] {
        let lin = |v: u8| {
            let v = f64::from(v) / 255.0;
            if v <= 0.04045 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        let (r, g, b) = (lin(c[0]), lin(c[1]), lin(c[2]));
        let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
        let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
        let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
        let f = |t: f64| {
            if t > 0.008856 {
                t.cbrt()
            } else {
                7.787 * t + 16.0 / 116.0
            }
        };
        let (fx, fy, fz) = (f(x), f(y), f(z));
        [116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)]
    }

    fn delta_e(a: [u8; 3], b: [u8; 3]) -> f64 {
        let (a, b) = (lab(a), lab(b));
        ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
    }

    #[test]
    fn categorical_palette_stays_distinguishable_with_dozens_of_classes() {
        let min_among = |n: usize| {
            let mut m = f64::INFINITY;
            for (i, &a) in PALETTE.iter().enumerate().take(n) {
                for &b in &PALETTE[..i] {
                    m = m.min(delta_e(a, b));
                }
            }
            m
        };
        assert!(min_among(32) >= 29.0, "32 classes: ΔE {}", min_among(32));
        assert!(min_among(64) >= 20.0, "64 classes: ΔE {}", min_among(64));
        // Every colour reads on the map's background and differs from the highlight's dim grey.
        for c in PALETTE {
            assert!(delta_e(c, [3, 4, 5]) > 40.0, "{c:?} vs background");
            assert!(delta_e(c, [70, 72, 80]) > 20.0, "{c:?} vs dim grey");
        }
        // Sites hash over the whole palette.
        let used: std::collections::HashSet<[u8; 4]> = (0..2000).map(site_color).collect();
        assert!(used.len() > 48, "{} site colours", used.len());
    }

    #[test]
    fn legend_labels_of_look_alike_sites_differ() {
        // The demo allocates in cache_insert and audit_log at two lines each.
        let d = demo();
        let t = d.alloc_trace().unwrap();
        let labels = &t.scene.as_ref().unwrap().top_sites;
        assert!(labels.len() >= 6, "{labels:?}");
        let mut seen = std::collections::HashSet::new();
        for (_, label) in labels {
            assert!(seen.insert(label.clone()), "{label} twice in {labels:?}");
        }
        assert!(
            labels
                .iter()
                .any(|(_, l)| l == "cache_insert (kvstore.c:84)"),
            "{labels:?}"
        );
    }

    /// Sites that all allocate in one wrapper and whose callers agree at different depths
    /// (x←p, x←q, y←p; as sqlite3's allocations through sqlite3MemMalloc): no single depth
    /// tells every pair apart, the shortest unshared chain does; identical chains are numbered.
    #[test]
    fn legend_labels_part_where_each_chain_becomes_unique() {
        use memscape_trace::model::Frame;
        let mut b = memscape_trace::TraceBuilder::with_event_times("twins");
        let thread = b.thread("main");
        let frame = |b: &mut memscape_trace::TraceBuilder, parent: u32, name: &str, ip| {
            let function = b.strings.intern(name);
            b.call_tree.child(
                parent,
                Frame {
                    ip,
                    function,
                    ..Frame::default()
                },
            )
        };
        // Stacks from the outermost caller in: main → p|q → x|y → wrapper.
        let main = frame(&mut b, 0, "main", 1);
        let p = frame(&mut b, main, "p", 2);
        let q = frame(&mut b, main, "q", 3);
        let xp = frame(&mut b, p, "x", 4);
        let xq = frame(&mut b, q, "x", 5);
        let yp = frame(&mut b, p, "y", 6);
        let w1 = frame(&mut b, xp, "wrapper", 7);
        let w2 = frame(&mut b, xq, "wrapper", 8);
        let w3 = frame(&mut b, yp, "wrapper", 9);
        // Two distinct nodes with the same chain (a different ip inside x).
        let xp2 = frame(&mut b, p, "x", 10);
        let w4 = frame(&mut b, xp2, "wrapper", 11);
        let sites = [w1, w2, w3, w4];
        for (i, &site) in sites.iter().enumerate() {
            b.alloc(
                i as u64,
                i as u64,
                0x1000 + 64 * i as u64,
                32,
                0,
                thread,
                site,
            );
        }
        let trace = b.finish(memscape_trace::TraceFormat::Csv, true);
        let labels: Vec<String> = site_labels(&trace, &sites)
            .into_iter()
            .map(|(_, l)| l)
            .collect();
        assert_eq!(
            labels,
            [
                "wrapper (from p)",
                "wrapper (from q)",
                "wrapper (from y)",
                "wrapper (from p) #2"
            ]
        );
    }

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
