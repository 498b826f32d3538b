//! An allocation trace laid out for the allocation map, once per dataset on the loader thread:
//! one GPU block per trace block on the collapsed address axis (used regions concatenated with
//! thin separators), both time axes, the regions' occupancy step functions and the legend's top
//! call sites. Shared by the GUI and headless rendering, so that both show the same picture.

use std::collections::HashMap;
use std::sync::Arc;

use memscape_render::alloc_map::{AllocBlockGpu, BlockTimeGpu};
use memscape_trace::Trace;
use memscape_trace::bins::Bins;
use memscape_trace::metrics::BinMetrics;
use memscape_trace::regions::{Regions, RegionsCarry};

pub use super::colors::ColorBy;
use super::colors::{Classes, site_color, site_labels};
use super::live_frame::LiveFrame;
use super::scene_blocks::BlockArrays;
pub use super::scene_blocks::colors_stay;
use crate::ramp::ColorRamp;

/// The time axis of the map.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum TimeAxis {
    /// Event index: spreads dense bursts.
    #[default]
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
    /// Occupancy and activity per address region over time (step functions from
    /// memscape-trace, swept without the free gaps: `BinMetrics::continued_occupancy`), for
    /// the occupancy bar.
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
    /// The largest block's size and the longest lifetime (events): the ends of the size and
    /// lifetime ramps.
    pub max_size: u64,
    pub max_lifetime: u64,
    /// The call sites with the most bytes live at the peak ([`memscape_trace::sites::LineKey`]
    /// digest, the colour key of their blocks; description), for the legend.
    pub top_sites: Vec<(u32, String)>,
    /// The same for freeing call sites (empty without free stacks).
    pub top_free_sites: Vec<(u32, String)>,
    /// A live recording's snapshot: the map's frame, with room to grow (`live_frame`); the
    /// regions above lie in its slots.
    pub live_frame: Option<LiveFrame>,
    /// A digest of the allocation wrappers detected: a block's call site past them, and so its
    /// colour by site, changes with them.
    pub wrappers_digest: u64,
    /// A scene of a trace's first blocks only (a dataset read in part): the event index and
    /// wall time just after its last allocation read. Before them every block allocated is in
    /// the scene, so its occupancy is the whole trace's; after them it is not known, and the
    /// occupancy bars end there ([`Self::bar_time_extent`]).
    pub known_until: Option<[u64; 2]>,
}

/// What a live recording's scene hands the next snapshot's ([`AllocScene::live`]).
#[derive(Debug, Default)]
pub struct SceneCarry {
    /// The regions' occupancy sweep (only the events since are swept next).
    pub sweep: Option<memscape_trace::metrics::MetricsSweep>,
    /// The call-site rules' classification of the call tree (only new nodes classified next).
    pub site_rules: Option<memscape_trace::sites::SiteRules>,
    /// The live map's frame (kept while it holds the recording).
    pub frame: Option<LiveFrame>,
    /// The block arrays (continued while the frame stays: only new blocks laid out).
    pub blocks: Option<super::scene_blocks::BlockArrays>,
    /// The address regions, their blocks and peaks (only new blocks placed, new events swept).
    pub regions: Option<memscape_trace::regions::RegionsCarry>,
}

/// Gap that splits the address space into regions.
pub const REGION_GAP: u64 = memscape_trace::regions::DEFAULT_GAP_THRESHOLD;

/// The scene's regions and their bins: on `ranges` when given; else the trace's own, continuing
/// `carry` when given (a live snapshot's, returned for the next), else found whole.
fn regions_and_bins(
    trace: &Trace,
    carry: Option<Option<RegionsCarry>>,
    ranges: Option<&[(u64, u64)]>,
) -> (Regions, Bins, Option<RegionsCarry>) {
    use memscape_trace::regions::{find_regions, regions_continued, regions_on};
    let whole = |regions: Regions| {
        let bins = Bins::of_regions(trace, &regions, REGION_GAP);
        (regions, bins, None)
    };
    match (ranges, carry) {
        (Some(ranges), _) => whole(regions_on(trace, ranges)),
        (None, Some(carry)) => {
            let (regions, bins, carry) = regions_continued(trace, REGION_GAP, carry);
            (regions, bins, Some(carry))
        }
        (None, None) => whole(find_regions(trace, REGION_GAP)),
    }
}

impl AllocScene {
    pub fn build(trace: &Trace, color_by: ColorBy) -> Self {
        Self::continued(trace, color_by, None).0
    }

    /// [`AllocScene::build`] of a live recording's snapshot, continuing the regions' occupancy
    /// sweep of the previous snapshot (`from`: only the events since are swept; see
    /// [`memscape_trace::metrics::BinMetrics::continued`]). Returns the sweep for the next one.
    pub fn continued(
        trace: &Trace,
        color_by: ColorBy,
        from: Option<memscape_trace::metrics::MetricsSweep>,
    ) -> (Self, memscape_trace::metrics::MetricsSweep) {
        let (scene, sweep, _, _, _) =
            Self::laid_out(trace, color_by, from, None, None, None, None, None);
        (scene, sweep)
    }

    /// [`AllocScene::build`] on the address regions `ranges` (sorted `[start, end)`) found
    /// elsewhere: a part of a trace (a dataset's first blocks) laid out on the whole trace's
    /// axis, as a query engine's level-of-detail index of the whole lays its cells out.
    pub fn on_ranges(trace: &Trace, color_by: ColorBy, ranges: &[(u64, u64)]) -> Self {
        Self::laid_out(trace, color_by, None, None, None, None, None, Some(ranges)).0
    }

    /// [`AllocScene::continued`] also continuing the call-site rules' classification of the
    /// previous snapshot's call tree (`carry.site_rules`: only the nodes added since are
    /// classified, [`memscape_trace::sites::Sites::continued`]) and, when `following` a live
    /// recording, its map frame (`carry.frame`, [`LiveFrame::next`]: the regions placed in its
    /// slots). Returns what the next snapshot continues.
    pub fn live(
        trace: &Trace,
        color_by: ColorBy,
        carry: SceneCarry,
        following: bool,
    ) -> (Self, SceneCarry) {
        let frame = following.then_some(carry.frame);
        let (scene, sweep, site_rules, blocks, regions) = Self::laid_out(
            trace,
            color_by,
            carry.sweep,
            carry.site_rules,
            frame,
            carry.blocks,
            Some(carry.regions),
            None,
        );
        let carry = SceneCarry {
            sweep: Some(sweep),
            site_rules: Some(site_rules),
            frame: scene.live_frame.clone(),
            blocks: following.then_some(blocks),
            regions,
        };
        (scene, carry)
    }

    /// The scene, continuing `from` and `site_rules`; in a live frame continuing `frame`'s
    /// when given (`Some(None)`: the first), and `blocks` when laid out in the same frame; on
    /// the regions `ranges` when given, else the trace's own, continuing `regions` when given
    /// (a live snapshot's: `Some(None)` the first).
    #[allow(clippy::too_many_arguments)]
    fn laid_out(
        trace: &Trace,
        color_by: ColorBy,
        from: Option<memscape_trace::metrics::MetricsSweep>,
        site_rules: Option<memscape_trace::sites::SiteRules>,
        frame: Option<Option<LiveFrame>>,
        blocks: Option<BlockArrays>,
        regions: Option<Option<RegionsCarry>>,
        ranges: Option<&[(u64, u64)]>,
    ) -> (
        Self,
        memscape_trace::metrics::MetricsSweep,
        memscape_trace::sites::SiteRules,
        BlockArrays,
        Option<RegionsCarry>,
    ) {
        let started = std::time::Instant::now();
        let mut phases: Vec<(&str, f64)> = Vec::new();
        let mut phase = |name: &'static str| {
            phases.push((name, started.elapsed().as_secs_f64() * 1e3));
        };
        let (regions, region_bins, regions_carry) = regions_and_bins(trace, regions, ranges);
        phase("regions");
        let used = regions.axis_len();
        // Collapsed gaps stay visible as thin separators: 1 % of the used bytes, at least 64 B.
        let separator = (used / 100).max(64);
        let mut layout: Vec<RegionLayout> = regions
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
        let mut collapsed_extent = layout
            .last()
            .map_or(1, |r| r.collapsed_start.saturating_add(r.end - r.start))
            .max(1);
        let live_frame = frame.map(|previous| {
            LiveFrame::next(
                previous.as_ref(),
                &regions,
                trace.meta.events.max(1),
                trace.meta.end_time_ns.max(1),
            )
        });
        if let Some(f) = &live_frame {
            for r in &mut layout {
                r.collapsed_start = f.collapsed_start(r.start).unwrap_or(r.collapsed_start);
            }
            collapsed_extent = f.collapsed_extent;
        }
        // The regions' occupancy sweep runs on its own thread beside the blocks, sites and
        // colours, which do not need it: the scene is ready when the slower of the two is.
        // Without the free gaps (ordered maps of live blocks and gaps per event, most of the
        // sweep's cost): the bars read only the occupancy, and the curves are `pools`'.
        // On given ranges (a dataset read in part: the whole dataset's regions) the capacity is
        // theirs, not the span of the blocks read, so that the bar's fractions are the whole
        // trace's while every block allocated is in the scene.
        let region_capacity = match ranges {
            Some(ranges) => ranges
                .iter()
                .map(|&(start, end)| end.saturating_sub(start))
                .sum::<u64>(),
            None => region_bins
                .bins
                .iter()
                .map(|b| b.extent_end.saturating_sub(b.extent_start))
                .sum::<u64>(),
        }
        .max(1);
        // Taken by the sweep's thread, or by this one when no thread can be started.
        let from = std::sync::Mutex::new(Some(from));
        let take_from = || from.lock().ok().and_then(|mut f| f.take()).flatten();
        let (scene, sweep, site_rules, kept, reuse) = std::thread::scope(|scope| {
            let sweep_thread = std::thread::Builder::new()
                .name("memscape-sweep".into())
                .spawn_scoped(scope, || {
                    BinMetrics::continued_occupancy(trace, &region_bins, take_from())
                });
            let laid = super::scene_blocks::continue_or_lay_out(
                trace,
                &regions,
                &layout,
                live_frame.as_ref().map(|f| f.layout),
                blocks,
            );
            phase(if laid.continued {
                "blocks continued"
            } else {
                "blocks"
            });
            let reuse = laid.reuse;
            // Legend entries keyed like the blocks' colours: by site at line granularity, past
            // allocation wrappers (memscape_trace::sites).
            // One resolution of sites past wrappers (detection sweeps every block and node) for the
            // legend, the free sites and the colours.
            let mut sites = memscape_trace::sites::Sites::continued(
                trace,
                &memscape_trace::sites::SiteOptions::default(),
                site_rules,
            );
            let wrappers_digest = {
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                for d in sites.detected() {
                    d.frames.hash(&mut h);
                }
                h.finish()
            };
            let top = memscape_trace::info::top_call_sites_with(trace, &sites, 8);
            let nodes: Vec<u32> = top.iter().map(|s| s.site).collect();
            let top_sites = site_labels(trace, &nodes)
                .into_iter()
                .zip(&top)
                .map(|((_, label), s)| (s.key, label))
                .collect();
            phase("top sites");
            // Continued with the block arrays (the whole trace's maxima, from the blocks
            // added or still open since the last snapshot).
            let (max_size, max_lifetime) = laid.extremes.scene_maxima(trace, &laid.open);
            // The sweep's metrics come in below; nothing before reads them.
            let placeholder = BinMetrics {
                series: Vec::new(),
                extents: Vec::new(),
                has_gaps: false,
            };
            let mut scene = Self {
                max_size,
                max_lifetime,
                top_sites,
                top_free_sites: Self::top_free_sites(trace, &sites, &laid.free_site_bytes, 8),
                region_metrics: Arc::new(placeholder),
                region_capacity,
                // Coloured below.
                blocks: Arc::new(Vec::new()),
                times_events: Arc::new(laid.times_events),
                times_wall: Arc::new(laid.times_wall),
                regions: layout,
                block_region: regions.block_region,
                collapsed_extent,
                events_extent: trace.meta.events.max(1),
                wall_extent: trace.meta.end_time_ns.max(1),
                color_by,
                live_frame,
                wrappers_digest,
                known_until: None,
            };
            phase("top free sites");
            let mut blocks = laid.blocks;
            // Only the new and the then live blocks when the rest kept their colours.
            let colors = colors_stay(color_by).then_some((color_by, wrappers_digest));
            let recolor = laid
                .recolor
                .filter(|_| colors.is_some() && laid.kept_colors == colors);
            match &recolor {
                Some(listed) => {
                    let colored = scene.block_colors_of(
                        trace,
                        color_by,
                        Some(&sites),
                        listed.iter().map(|&i| i as usize),
                    );
                    for (i, (color, attr)) in colored {
                        blocks[i].color = color;
                        blocks[i].attr = attr;
                    }
                }
                None => {
                    let colored = scene.block_colors_with(
                        trace,
                        color_by,
                        &scene.block_region,
                        scene.events_extent,
                        Classes::identity(),
                        Some(&sites),
                    );
                    for (block, (color, attr)) in blocks.iter_mut().zip(colored) {
                        block.color = color;
                        block.attr = attr;
                    }
                }
            }
            scene.blocks = Arc::new(blocks);
            // The last snapshot's arrays (when copied) differ from this one's colours at
            // the blocks coloured here only when just those were.
            let mut spare = laid.spare;
            if let Some(spare) = &mut spare {
                spare.colors_alike = recolor.is_some();
            }
            let kept = BlockArrays {
                blocks: scene.blocks.clone(),
                times_events: scene.times_events.clone(),
                times_wall: scene.times_wall.clone(),
                layout: scene.live_frame.as_ref().map_or(u64::MAX, |f| f.layout),
                colors,
                open: laid.open,
                free_site_bytes: laid.free_site_bytes,
                extremes: laid.extremes,
                spare,
                reuse: laid.reuse,
            };
            phase(if recolor.is_some() {
                "colours continued"
            } else {
                "colours"
            });
            let (region_metrics, sweep) = match sweep_thread {
                Ok(handle) => handle
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e)),
                // No thread to be had: the sweep here.
                Err(_) => BinMetrics::continued_occupancy(trace, &region_bins, take_from()),
            };
            scene.region_metrics = Arc::new(region_metrics);
            phase("region metrics");
            (scene, sweep, sites.take_rules(), kept, reuse)
        });
        // Each phase's end, in ms from the start (what a live snapshot's scene costs).
        tracing::debug!(
            target: "memscape::scene",
            blocks = trace.blocks.len(),
            swept_from = sweep.started_at(),
            ?reuse,
            ?phases,
            "allocation-map scene"
        );
        (scene, sweep, site_rules, kept, regions_carry)
    }

    /// The occupancy sweep and the regions of [`AllocScene::live`] alone, continuing
    /// `carry`'s on `trace` (a live recording's trace between two snapshots shown: the next
    /// scene then sweeps and places only what came after).
    pub fn sweep_ahead(trace: &Trace, carry: &mut SceneCarry) {
        let (_, bins, regions) = regions_and_bins(trace, Some(carry.regions.take()), None);
        carry.regions = regions;
        carry.sweep = Some(BinMetrics::continued_occupancy(trace, &bins, carry.sweep.take()).1);
    }

    /// The end of the map's time axis when it shows everything: the recording's frame, with
    /// room to grow, on a live snapshot (`live_frame`); else the trace's end.
    pub fn frame_time_end(&self, axis: TimeAxis) -> u64 {
        self.live_frame
            .as_ref()
            .map_or_else(|| self.time_extent(axis), |f| f.time_end(axis))
    }

    /// On a live snapshot coloured so that a block keeps its colour once freed: what the
    /// positions and colours of its ended blocks depend on, equal from one snapshot to the next
    /// while they stay (the key of the map's accumulated sums,
    /// `memscape_render::alloc_map::AccumulatedSums`). `None`: sum every block each time.
    pub fn accumulation_key(&self, color_by: ColorBy) -> Option<u64> {
        let frame = self.live_frame.as_ref()?;
        colors_stay(color_by)
            .then_some((frame.layout << 8 | color_by as u64) ^ self.wrappers_digest)
    }

    pub fn time_extent(&self, axis: TimeAxis) -> u64 {
        match axis {
            TimeAxis::Events => self.events_extent,
            TimeAxis::Wall => self.wall_extent,
        }
    }

    /// Where the occupancy bars on `axis` end: the time extent, or before it where the scene
    /// holds a trace's first blocks only ([`Self::known_until`]).
    pub fn bar_time_extent(&self, axis: TimeAxis) -> u64 {
        let extent = self.time_extent(axis);
        match (self.known_until, axis) {
            (Some([events, _]), TimeAxis::Events) => extent.min(events.max(1)),
            (Some([_, wall]), TimeAxis::Wall) => extent.min(wall.max(1)),
            (None, _) => extent,
        }
    }

    /// Marks the scene as one of `trace`'s first blocks only (a dataset read in part, of
    /// which `trace` holds the first allocated blocks): its occupancy bars end after the last
    /// allocation read ([`Self::known_until`]).
    pub fn known_until_last_allocation(&mut self, trace: &Trace) {
        let b = &trace.blocks;
        let events = b.alloc_event.iter().copied().max().map_or(0, |e| e + 1);
        let wall = b.alloc_time_ns.iter().copied().max().map_or(0, |t| t + 1);
        self.known_until = Some([events, wall]);
    }

    /// Recomputes colours and attributes for a new colouring.
    pub fn recolor(&mut self, trace: &Trace, color_by: ColorBy) {
        self.blocks = Arc::new(self.colored_blocks(trace, color_by));
        self.color_by = color_by;
    }

    /// A copy of the blocks coloured by `color_by` (age at the trace's end, bins = regions).
    pub fn colored_blocks(&self, trace: &Trace, color_by: ColorBy) -> Vec<AllocBlockGpu> {
        self.colored_blocks_with(trace, color_by, None)
    }

    /// [`Self::colored_blocks`] with the sites past wrappers resolved already (of `trace`).
    fn colored_blocks_with(
        &self,
        trace: &Trace,
        color_by: ColorBy,
        sites: Option<&memscape_trace::sites::Sites>,
    ) -> Vec<AllocBlockGpu> {
        let colors = self.block_colors_with(
            trace,
            color_by,
            &self.block_region,
            self.events_extent,
            Classes::identity(),
            sites,
        );
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
        self.block_colors_in(trace, color_by, block_bin, age_at, Classes::identity())
    }

    /// [`Self::block_colors`] with threads, processes and bins coloured by their `classes`
    /// (shared with another map).
    pub fn block_colors_in(
        &self,
        trace: &Trace,
        color_by: ColorBy,
        block_bin: &[u32],
        age_at: u64,
        classes: &Classes,
    ) -> Vec<(u32, f32)> {
        self.block_colors_with(trace, color_by, block_bin, age_at, classes, None)
    }

    /// [`Self::block_colors_in`] with the sites past wrappers resolved already (of `trace`).
    fn block_colors_with(
        &self,
        trace: &Trace,
        color_by: ColorBy,
        block_bin: &[u32],
        age_at: u64,
        classes: &Classes,
        sites: Option<&memscape_trace::sites::Sites>,
    ) -> Vec<(u32, f32)> {
        let mut colors = Vec::with_capacity(trace.blocks.len());
        self.each_block_color(
            trace,
            color_by,
            (block_bin, age_at, classes, sites),
            0..trace.blocks.len(),
            |_, c| colors.push(c),
        );
        colors
    }

    /// The colours of the blocks `indices` only (a live snapshot's new and then live blocks,
    /// the others' kept), as (block, (colour, attribute)), with regions as bins and age at the
    /// trace's end as [`Self::colored_blocks`] colours them.
    fn block_colors_of(
        &self,
        trace: &Trace,
        color_by: ColorBy,
        sites: Option<&memscape_trace::sites::Sites>,
        indices: impl Iterator<Item = usize>,
    ) -> Vec<(usize, (u32, f32))> {
        let mut colors = Vec::with_capacity(indices.size_hint().0);
        let by = (
            self.block_region.as_slice(),
            self.events_extent,
            Classes::identity(),
            sites,
        );
        self.each_block_color(trace, color_by, by, indices, |i, c| colors.push((i, c)));
        colors
    }

    /// Hands `sink` each block of `indices` with its packed colour and attribute; `by` is what
    /// [`Self::block_colors_with`] takes besides the colouring.
    fn each_block_color(
        &self,
        trace: &Trace,
        color_by: ColorBy,
        by: (&[u32], u64, &Classes, Option<&memscape_trace::sites::Sites>),
        indices: impl IntoIterator<Item = usize>,
        mut sink: impl FnMut(usize, (u32, f32)),
    ) {
        let (block_bin, age_at, classes, sites) = by;
        let b = &trace.blocks;
        // The same scales as the legend's ramps (`color_ramp`).
        let size_ramp = self.color_ramp(ColorBy::Size, age_at);
        let life_ramp = self.color_ramp(ColorBy::Lifetime, age_at);
        let log_norm =
            |v: u64, r: &Option<ColorRamp>| r.as_ref().map_or(0.0, |r| r.position(v as f64));
        let age_at = age_at.max(1);
        let pack = memscape_render::color::pack_rgba8;
        // Sites at line granularity past allocation wrappers, one digest per distinct node.
        let resolved;
        let sites = match (color_by, sites) {
            (ColorBy::Site | ColorBy::FreeSite, None) => {
                resolved = memscape_trace::sites::Sites::new(
                    trace,
                    &memscape_trace::sites::SiteOptions::default(),
                );
                Some(&resolved)
            }
            (_, sites) => sites,
        };
        let mut keys: HashMap<u32, u32> = HashMap::new();
        let mut site_key = |node: u32| -> u32 {
            *keys
                .entry(node)
                .or_insert_with(|| sites.map_or(0, |s| s.line_key(trace, node).digest()))
        };
        for i in indices {
            let color = match color_by {
                ColorBy::Thread => (pack(classes.color(b.thread[i])), 0.0),
                ColorBy::Process => (pack(classes.color(b.process[i])), 0.0),
                ColorBy::FreeSite => match b.free_site[i] {
                    0 => (pack(super::colors::UNKNOWN_COLOR), 0.0),
                    s => (pack(site_color(site_key(s))), 0.0),
                },
                ColorBy::CrossThread => (
                    pack(match b.free_thread[i] {
                        memscape_trace::model::NO_FREE_THREAD => super::colors::UNKNOWN_COLOR,
                        t if t - 1 == b.thread[i] => super::colors::SAME_THREAD_COLOR,
                        _ => super::colors::CROSS_THREAD_COLOR,
                    }),
                    0.0,
                ),
                ColorBy::Site => (pack(site_color(site_key(b.site[i]))), 0.0),
                ColorBy::Bin => (
                    pack(classes.color(block_bin.get(i).copied().unwrap_or(0))),
                    0.0,
                ),
                ColorBy::Size => (0, log_norm(b.size[i], &size_ramp)),
                ColorBy::Lifetime => (
                    0,
                    log_norm(b.free_event[i].saturating_sub(b.alloc_event[i]), &life_ramp),
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
            };
            sink(i, color);
        }
    }

    /// The scale of a quantitative colouring, for its legend and its colours: size and lifetime
    /// logarithmic from 1 to the largest, waste 0..100 % of the usable size, age linear from 0
    /// to `age_at` events (the time cursor or the trace's end). None for categorical colourings.
    pub fn color_ramp(&self, color_by: ColorBy, age_at: u64) -> Option<ColorRamp> {
        use crate::ramp::{Scale, Unit};
        match color_by {
            ColorBy::Size => Some(ColorRamp::new(
                1.0,
                self.max_size as f64,
                Scale::Log,
                Unit::Bytes,
            )),
            ColorBy::Lifetime => Some(ColorRamp::new(
                1.0,
                self.max_lifetime as f64,
                Scale::Log,
                Unit::Count("events"),
            )),
            ColorBy::Waste => Some(ColorRamp::new(0.0, 100.0, Scale::Linear, Unit::Percent)),
            ColorBy::Age => Some(ColorRamp::new(
                0.0,
                age_at.max(1) as f64,
                Scale::Linear,
                Unit::Count("events"),
            )),
            ColorBy::Thread
            | ColorBy::Site
            | ColorBy::Bin
            | ColorBy::Process
            | ColorBy::FreeSite
            | ColorBy::CrossThread => None,
        }
    }

    /// The freeing call sites of the most bytes (colour key, label), for the legend, from the
    /// requested bytes of the ended blocks per freeing site (`bytes`); empty when the trace
    /// has no free stacks.
    fn top_free_sites(
        trace: &Trace,
        sites: &memscape_trace::sites::Sites,
        bytes: &HashMap<u32, u64>,
        n: usize,
    ) -> Vec<(u32, String)> {
        let mut top: Vec<(u32, u64)> = bytes.iter().map(|(&s, &b)| (s, b)).collect();
        top.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        top.truncate(n);
        let nodes: Vec<u32> = top.iter().map(|t| t.0).collect();
        let keys = site_keys(trace, Some(sites), &nodes);
        site_labels(trace, &nodes)
            .into_iter()
            .zip(keys)
            .map(|((_, label), key)| (key, label))
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

/// Colour keys of the call-site nodes in `column`: each site at line granularity past allocation
/// wrappers (memscape_trace::sites, resolved here unless `sites` are given), as a digest,
/// computed once per distinct node.
fn site_keys(
    trace: &Trace,
    sites: Option<&memscape_trace::sites::Sites>,
    column: &[u32],
) -> Vec<u32> {
    let resolved;
    let sites = match sites {
        Some(s) => s,
        None => {
            resolved = memscape_trace::sites::Sites::new(
                trace,
                &memscape_trace::sites::SiteOptions::default(),
            );
            &resolved
        }
    };
    let mut keys: HashMap<u32, u32> = HashMap::new();
    column
        .iter()
        .map(|&s| {
            *keys
                .entry(s)
                .or_insert_with(|| sites.line_key(trace, s).digest())
        })
        .collect()
}
