//! Datasets turned into what the renderer draws; shared by the GUI and `memscape render`, so
//! that both show exactly the same picture.

use memscape_render::alloc_map::{AllocBlockGpu, BlockTimeGpu, ColorMode};
use memscape_render::color::categorical;
use memscape_trace::Trace;

/// Which attribute colours the blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorBy {
    Thread,
    Site,
    Size,
    Lifetime,
    Waste,
    Age,
}

impl ColorBy {
    pub const ALL: [ColorBy; 6] = [
        ColorBy::Thread,
        ColorBy::Site,
        ColorBy::Size,
        ColorBy::Lifetime,
        ColorBy::Waste,
        ColorBy::Age,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ColorBy::Thread => "thread",
            ColorBy::Site => "allocating call site",
            ColorBy::Size => "size (log)",
            ColorBy::Lifetime => "lifetime (log)",
            ColorBy::Waste => "waste (usable − requested)",
            ColorBy::Age => "allocation time",
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
            ColorBy::Thread | ColorBy::Site => ColorMode::Categorical,
            _ => ColorMode::Quantitative,
        }
    }
}

/// The colour of a call site: a hash of its id into the categorical palette, so that a site keeps
/// its colour whatever else is loaded.
pub fn site_color(site: u32) -> [u8; 4] {
    categorical(site.wrapping_mul(2_654_435_761) >> 28)
}

/// Legend labels of call sites: the allocating function (unnamed frames of the C/C++ runtime
/// skipped, module directories dropped) and, where two sites would read the same, the nearest
/// caller up their stacks at which they part (up to 6 frames up).
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
    sites
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
            // The first depth at which this chain differs from every twin.
            let parting = (1..mine.len()).find(|&k| twins.iter().all(|t| t.get(k) != mine.get(k)));
            let label = match parting {
                Some(k) if !twins.is_empty() => format!("{first} (from {})", mine[k]),
                _ => first,
            };
            (site, label)
        })
        .collect()
}

/// The time axis of the map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    pub region_metrics: memscape_trace::metrics::BinMetrics,
    /// Bytes of address space the regions span: the denominator of "full".
    pub region_capacity: u64,
    /// Shared with the views, which keep this `Arc` until they recolour.
    pub blocks: std::sync::Arc<Vec<AllocBlockGpu>>,
    pub times_events: Vec<BlockTimeGpu>,
    pub times_wall: Vec<BlockTimeGpu>,
    pub regions: Vec<RegionLayout>,
    /// Total height of the collapsed address axis in bytes (regions plus separators).
    pub collapsed_extent: u64,
    pub events_extent: u64,
    pub wall_extent: u64,
    pub color_by: ColorBy,
    /// The call sites with the most bytes live at the peak (id, description), for the legend.
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
        let region_metrics = memscape_trace::metrics::BinMetrics::compute(trace, &region_bins);
        let top_sites = site_labels(
            trace,
            &memscape_trace::info::top_call_sites(trace, 8)
                .into_iter()
                .map(|s| s.site)
                .collect::<Vec<_>>(),
        );
        let mut scene = Self {
            top_sites,
            region_metrics,
            region_capacity,
            blocks: std::sync::Arc::new(blocks),
            times_events,
            times_wall,
            regions: layout,
            collapsed_extent,
            events_extent,
            wall_extent,
            color_by,
        };
        scene.recolor(trace, color_by);
        scene
    }

    pub fn times(&self, axis: TimeAxis) -> &[BlockTimeGpu] {
        match axis {
            TimeAxis::Events => &self.times_events,
            TimeAxis::Wall => &self.times_wall,
        }
    }

    pub fn time_extent(&self, axis: TimeAxis) -> u64 {
        match axis {
            TimeAxis::Events => self.events_extent,
            TimeAxis::Wall => self.wall_extent,
        }
    }

    /// Recomputes colours and attributes for a new colouring.
    pub fn recolor(&mut self, trace: &Trace, color_by: ColorBy) {
        self.blocks = std::sync::Arc::new(self.colored_blocks(trace, color_by));
        self.color_by = color_by;
    }

    /// A copy of the blocks coloured by `color_by`.
    pub fn colored_blocks(&self, trace: &Trace, color_by: ColorBy) -> Vec<AllocBlockGpu> {
        let mut blocks = self.blocks.as_ref().clone();
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
        for (i, block) in blocks.iter_mut().enumerate() {
            let (color, attr) = match color_by {
                ColorBy::Thread => (categorical(b.thread[i]), 0.0),
                ColorBy::Site => (site_color(b.site[i]), 0.0),
                ColorBy::Size => ([0; 4], log_norm(b.size[i], max_size)),
                ColorBy::Lifetime => (
                    [0; 4],
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
                    ([0; 4], waste)
                }
                ColorBy::Age => (
                    [0; 4],
                    (b.alloc_event[i] as f64 / self.events_extent as f64) as f32,
                ),
            };
            block.color = memscape_render::color::pack_rgba8(color);
            block.attr = attr;
        }
        blocks
    }

    /// The occupancy bar: for each of `columns` equal buckets of `[t0, t1)`, the highest fraction
    /// of the regions' bytes in use inside the bucket, and whether anything happened in it.
    pub fn occupancy(&self, axis: TimeAxis, t0: u64, t1: u64, columns: usize) -> Vec<(f32, bool)> {
        let metric_axis = match axis {
            TimeAxis::Events => memscape_trace::metrics::TimeAxis::EventIndex,
            TimeAxis::Wall => memscape_trace::metrics::TimeAxis::WallNs,
        };
        let mut used = vec![0u64; columns];
        let mut active = vec![false; columns];
        for bin in 0..self.regions.len() {
            let s = self
                .region_metrics
                .sample(bin, metric_axis, t0, t1, columns);
            for (k, (&bytes, &events)) in s
                .occupancy_max
                .iter()
                .zip(&s.events)
                .enumerate()
                .take(columns)
            {
                used[k] = used[k].saturating_add(bytes);
                active[k] |= events > 0;
            }
        }
        used.iter()
            .zip(active)
            .map(|(&u, a)| {
                (
                    (u as f64 / self.region_capacity as f64).clamp(0.0, 1.0) as f32,
                    a,
                )
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

    /// Index of the block under (time, collapsed address), if any. Linear in the block count.
    pub fn pick(&self, axis: TimeAxis, t: u64, y: u64) -> Option<usize> {
        let times = self.times(axis);
        self.blocks.iter().zip(times).position(|(b, tm)| {
            let join = |v: [u32; 2]| u64::from(v[0]) | (u64::from(v[1]) << 32);
            let (y0, size) = (join(b.addr), join(b.size));
            let (t0, t1) = (join(tm.start), join(tm.end));
            (t0..t1).contains(&t) && (y0..y0.saturating_add(size)).contains(&y)
        })
    }
}
