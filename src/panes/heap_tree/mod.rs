//! The heap-evolution pane: sunburst, icicle or small multiples of the heap tree at a time
//! point, with drill-down, time travel (slider, steps, play) over a heap-size curve, animated
//! transitions, hover facts and the leak-suspect list.
//!
//! A worker thread per pane owns the group index (it borrows the dataset) and answers requests
//! for the sizes at a time point through bounded channels; the UI thread never walks blocks.

mod controls;
mod first_part;
mod live;
mod worker;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::TryRecvError;
use egui::{Color32, Sense};
use memscape_heap::{GroupKey, HeapTimeline, Sizes, TimePoint};
use memscape_views::gpu::PaneKey;
use memscape_views::heap_tree::compose::{Shown, chart_area, timeline_picture, tree_picture};
use memscape_views::heap_tree::draw;
use memscape_views::heap_tree::model::Grouping;
use memscape_views::heap_tree::settings::{Chart, HeapTreeSettings};
use memscape_views::tour::{Step, tour_file_of};
use memscape_views::{Dataset, ViewSettings};

use crate::panes::{View, ViewContext};
use worker::{LiveCarry, Reply, Request, Worker, spawn_worker};

const TRANSITION: Duration = Duration::from_millis(450);
const PLAY_STEP: Duration = Duration::from_millis(600);
const SMALL_MULTIPLES: usize = 5;
/// Sizes kept per pane (each is two u64 per group).
const SIZES_CACHE: usize = 48;

/// Grouping presets offered in the menu (any list works on the CLI).
/// The grouping menu. `line` groups name the function, file and line that hold the bytes (as
/// `info` reports them); `function` merges a function's lines (no line named).
const GROUPINGS: &[(&str, &[GroupKey])] = &[
    ("line (function, file:line)", &[GroupKey::Site]),
    ("function (lines merged)", &[GroupKey::Function]),
    ("thread › line", &[GroupKey::Thread, GroupKey::Site]),
    ("thread › function", &[GroupKey::Thread, GroupKey::Function]),
    ("call path (top-down)", &[GroupKey::Path]),
    ("callers (bottom-up)", &[GroupKey::Callers]),
    ("module › line", &[GroupKey::Module, GroupKey::Site]),
    ("size class › line", &[GroupKey::Size, GroupKey::Site]),
    ("thread › size class", &[GroupKey::Thread, GroupKey::Size]),
    ("process › line", &[GroupKey::Process, GroupKey::Site]),
];

/// (point, exact events, root, chart, depth, kept group) of the shown tree.
type ShownKey = (usize, Option<u64>, u32, Chart, usize, Option<u32>);

/// An exact time off the slider's points.
struct Exact {
    anchor: usize,
    events: u64,
    /// Filled in by the worker.
    state: Option<(TimePoint, Arc<Sizes>)>,
}

pub struct HeapTreePane {
    dataset: Arc<Dataset>,
    key: PaneKey,
    /// What is shown: chart, grouping, metric, depth (the time point and root are exported
    /// from `point` and `roots` when a tour step is recorded).
    settings: HeapTreeSettings,
    grouping: usize,
    /// The leak panel's switch: show the blocks the runtime keeps until exit among suspects.
    show_suppressed: bool,
    worker: Worker,
    timeline: Option<Arc<HeapTimeline>>,
    error: Option<String>,
    sizes: HashMap<usize, Arc<Sizes>>,
    requested: HashMap<usize, Instant>,
    /// Drill-down path of trie nodes (the last is the shown root; empty: the whole heap).
    roots: Vec<u32>,
    point: usize,
    playing: bool,
    last_step: Instant,
    /// What is on screen now and what it morphs from.
    current: Option<Shown>,
    previous: Option<Shown>,
    transition_start: Instant,
    /// What `current` was built for, to notice when it must be rebuilt.
    current_key: Option<ShownKey>,
    /// A time set from the allocation map that falls between the slider's points: shown exactly
    /// until the user moves the slider away from `anchor` (the nearest point).
    exact: Option<Exact>,
    highlight_group: Option<u32>,
    drawn_once: bool,
    /// Versions of the dataset's time cursor seen and published by this pane.
    seen_time: u64,
    published_point: Option<usize>,
    seen_pick: u64,
    /// Time points the user put on the timeline (empty: five evenly spaced).
    timeline_points: Vec<usize>,
    /// A live recording's newer snapshot, grouped off screen until its tree can be drawn.
    next: Option<Box<HeapTreePane>>,
    /// The newest snapshot, waiting for `next` to be shown.
    queued: Option<Arc<Dataset>>,
    /// The egui pass in which the pane was last drawn (a pane not shown does not hold a live
    /// recording back).
    last_ui: u64,
    /// The group whose blocks this pane highlighted (names from the root down, and the
    /// highlight's label): on a live recording, highlighted again in each newer snapshot,
    /// with its new blocks, while the highlight is still this one (`live.rs`).
    highlighted: Option<(Vec<String>, String)>,
    /// A live recording's snapshot pane: where its worker leaves its grouping for the next
    /// snapshot's pane (`live.rs`); None for a file.
    live_carry: Option<Arc<std::sync::Mutex<Option<memscape_heap::HeapCarry>>>>,
    /// Swapped in from a live recording's newer snapshot: its side panel's stored width is
    /// dropped at the next frame.
    fresh_layout: bool,
    /// A first part's curve from the index was drawn (and logged) once.
    index_curve_logged: bool,
}

impl HeapTreePane {
    pub fn new(dataset: Arc<Dataset>, ctx: &egui::Context) -> Self {
        Self::with_settings(dataset, ctx, HeapTreeSettings::default(), false)
    }

    /// A pane showing `dataset` as `settings` say (the leak panel's switch `show_suppressed`).
    fn with_settings(
        dataset: Arc<Dataset>,
        ctx: &egui::Context,
        settings: HeapTreeSettings,
        show_suppressed: bool,
    ) -> Self {
        Self::with_carry(dataset, ctx, settings, show_suppressed, None)
    }

    /// [`HeapTreePane::with_settings`]; with `live` (a live recording's snapshot after the
    /// first), the grouping continued from the previous snapshot's.
    fn with_carry(
        dataset: Arc<Dataset>,
        ctx: &egui::Context,
        settings: HeapTreeSettings,
        show_suppressed: bool,
        live: Option<LiveCarry>,
    ) -> Self {
        let live_carry = live.as_ref().map(|l| l.to.clone());
        let worker = spawn_worker(
            dataset.clone(),
            Grouping {
                suppressions: !show_suppressed,
                ..Grouping::of(&settings)
            },
            settings.process.clone(),
            ctx.clone(),
            live,
        );
        Self {
            key: PaneKey::new(),
            dataset,
            settings,
            grouping: 0,
            show_suppressed,
            worker,
            timeline: None,
            error: None,
            sizes: HashMap::new(),
            requested: HashMap::new(),
            roots: Vec::new(),
            point: 0,
            playing: false,
            last_step: Instant::now(),
            current: None,
            previous: None,
            transition_start: Instant::now(),
            current_key: None,
            highlight_group: None,
            exact: None,
            drawn_once: false,
            seen_time: 0,
            published_point: None,
            seen_pick: 0,
            timeline_points: Vec::new(),
            next: None,
            queued: None,
            last_ui: 0,
            highlighted: None,
            live_carry,
            fresh_layout: false,
            index_curve_logged: false,
        }
    }

    /// The grouping the worker builds: the settings', with the leak panel's switch.
    fn grouping(&self) -> Grouping {
        Grouping {
            suppressions: !self.show_suppressed,
            ..Grouping::of(&self.settings)
        }
    }

    fn restart(&mut self, ctx: &egui::Context) {
        // A live pane regrouped (other settings) carries its new grouping on.
        // A new slot: the old worker may still hold (and fill) the old one.
        let live = self.live_carry.as_mut().map(|to| {
            *to = Arc::new(std::sync::Mutex::new(None));
            LiveCarry {
                from: None,
                to: to.clone(),
            }
        });
        self.worker = spawn_worker(
            self.dataset.clone(),
            self.grouping(),
            self.settings.process.clone(),
            ctx.clone(),
            live,
        );
        self.timeline = None;
        self.error = None;
        self.sizes.clear();
        self.requested.clear();
        self.roots.clear();
        self.current = None;
        self.previous = None;
        self.current_key = None;
        self.highlight_group = None;
    }

    fn drain(&mut self) {
        loop {
            match self.worker.replies.try_recv() {
                Ok(Reply::Timeline(t)) => {
                    // Open at the peak, as heaptrack does: the fullest tree; the leak suspects
                    // beside it and `>|` tell the end of the run.
                    self.point = t.peak_point.min(t.points.len().saturating_sub(1));
                    self.timeline = Some(Arc::from(t));
                }
                Ok(Reply::Sizes(p, s)) => {
                    self.requested.remove(&p);
                    if self.sizes.len() >= SIZES_CACHE {
                        // Drop the entry farthest from the current point.
                        let point = self.point;
                        if let Some(far) =
                            self.sizes.keys().copied().max_by_key(|k| k.abs_diff(point))
                        {
                            self.sizes.remove(&far);
                        }
                    }
                    self.sizes.insert(p, s);
                }
                Ok(Reply::Blocks(group, blocks)) => {
                    let name = self
                        .timeline
                        .as_ref()
                        .map(|t| draw::short_name_at(t.trie.name(group)))
                        .unwrap_or_default();
                    self.highlighted = self.timeline.as_ref().map(|t| {
                        let path = t.trie.path_to_root(group);
                        let names = path[1..].iter().map(|&n| t.trie.name(n).to_owned());
                        (names.collect(), name.clone())
                    });
                    self.dataset.links.set_highlight(blocks, name);
                }
                Ok(Reply::GroupOf(group)) => {
                    // Drill so that the picked block's group is a child of the shown root, and
                    // outline it.
                    if let Some(t) = &self.timeline {
                        let path = t.trie.path_to_root(group);
                        self.roots = path[1..path.len().saturating_sub(1).max(1)].to_vec();
                        // Keep the tree shallow enough to show the group.
                        self.settings.depth = self.settings.depth.max(1);
                        self.highlight_group = Some(group);
                    }
                }
                Ok(Reply::Exact(point, sizes)) => {
                    if let Some(x) = &mut self.exact
                        && x.events == point.index
                    {
                        x.state = Some((point, sizes));
                    }
                }
                Ok(Reply::Failed(e)) => self.error = Some(e),
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
            }
        }
    }

    fn sizes_at(&mut self, point: usize) -> Option<Arc<Sizes>> {
        if let Some(s) = self.sizes.get(&point) {
            return Some(s.clone());
        }
        let stale = self
            .requested
            .get(&point)
            .is_none_or(|t| t.elapsed() > Duration::from_secs(5));
        if stale && self.worker.requests.try_send(Request::Sizes(point)).is_ok() {
            self.requested.insert(point, Instant::now());
        }
        None
    }

    /// The time point on screen: the exact one set from the allocation map, or the slider's.
    fn shown_point(&self, timeline: &HeapTimeline) -> TimePoint {
        if let Some(Exact {
            state: Some((p, _)),
            ..
        }) = &self.exact
        {
            return p.clone();
        }
        let last = timeline.points.len().saturating_sub(1);
        timeline.points[self.point.min(last)].clone()
    }

    fn root(&self) -> u32 {
        self.roots.last().copied().unwrap_or(0)
    }

    fn build(&self, timeline: &HeapTimeline, sizes: &Sizes) -> Shown {
        Shown::build(
            self.settings.chart,
            timeline,
            sizes,
            self.root(),
            self.settings.depth,
            self.highlight_group,
        )
    }

    fn transition_t(&self) -> f32 {
        (self.transition_start.elapsed().as_secs_f32() / TRANSITION.as_secs_f32()).min(1.0)
    }
}

impl View for HeapTreePane {
    fn title(&self) -> String {
        format!("Heap tree — {}", self.dataset.name)
    }

    fn picture(&self) -> Option<std::sync::Arc<memscape_views::Picture>> {
        self.key.last_picture()
    }

    fn tour_step(&self) -> Option<Step> {
        let timeline = self.timeline.as_ref()?;
        let point = &self.shown_point(timeline);
        let massif = self.dataset.alloc_trace().is_none();
        let settings = HeapTreeSettings {
            at: (!massif).then_some(point.time),
            snapshot: massif.then_some(point.index),
            peak: false,
            root: self.roots.last().map(|&r| timeline.trie.name(r).to_owned()),
            ..self.settings.clone()
        };
        Some(Step::new(
            tour_file_of(&self.dataset),
            ViewSettings::HeapTree(settings),
        ))
    }

    fn is_ready(&self) -> bool {
        (self.drawn_once || self.error.is_some()) && self.next.is_none() && self.queued.is_none()
    }

    fn follow(&mut self, dataset: Arc<Dataset>, ctx: &egui::Context) {
        self.prepare_next(dataset, ctx);
    }

    fn preparing_live(&self, ctx: &egui::Context) -> bool {
        self.preparing(ctx)
    }

    fn live_step(&mut self, ctx: &egui::Context, swap: bool) -> crate::panes::LiveStep {
        self.advance_live(ctx, swap)
    }

    fn ui(&mut self, ui: &mut egui::Ui, cx: &ViewContext<'_>) {
        self.last_ui = ui.ctx().cumulative_pass_nr();
        // A snapshot being prepared moves on and is swapped in by the shell (`live_step`).
        if self.next.is_some() {
            // The worker wakes the window when it replies; this is only a fallback (each
            // frame is a whole-window redraw).
            ui.ctx()
                .request_repaint_after(crate::panes::fallback(Duration::from_millis(250)));
        }
        self.drain();
        self.controls(ui);
        if let Some(e) = &self.error {
            ui.colored_label(Color32::LIGHT_RED, e);
            return;
        }
        // A big trace's first blocks, shown while the whole is read: the tree groups every
        // block, so it says how far the read is rather than drawing a part as if whole, beside
        // the whole run's heap-size curve from the index.
        if let Some(extent) =
            memscape_views::dataset::trace_extent(&self.dataset).filter(|e| !e.is_whole())
            && self
                .dataset
                .alloc_trace()
                .is_some_and(|t| t.heap_query.is_none())
        {
            let curve = memscape_views::msc_head::index_heap_curve(&self.dataset);
            first_part::show(ui, extent, curve.as_deref(), &mut self.index_curve_logged);
            return;
        }
        let Some(timeline) = self.timeline.clone() else {
            ui.horizontal(|ui| {
                crate::panes::spinner(ui);
                ui.label("grouping the heap…");
            });
            return;
        };
        if timeline.points.is_empty() {
            ui.label("no time points");
            return;
        }
        let last = timeline.points.len() - 1;
        if self.playing && self.last_step.elapsed() >= PLAY_STEP {
            self.last_step = Instant::now();
            if self.point < last {
                self.point += 1;
            } else {
                self.playing = false;
            }
        }
        self.point = self.point.min(last);
        if self.exact.as_ref().is_some_and(|x| x.anchor != self.point) {
            self.exact = None;
        }
        // Linked time: a time chosen in another view (the allocation map) moves the tree there;
        // a time chosen here moves the others' cursor. Traces only: massif has no events.
        if self.dataset.alloc_trace().is_some() {
            let links = self.dataset.links.get();
            if links.picked_version != self.seen_pick {
                self.seen_pick = links.picked_version;
                if let Some(b) = links.picked_block {
                    let _ = self.worker.requests.try_send(Request::GroupOf(b));
                }
            }
            if links.time_version != self.seen_time {
                self.seen_time = links.time_version;
                if let Some(events) = links.time_events
                    && self
                        .published_point
                        .is_none_or(|p| timeline.points[p].index != events)
                {
                    self.point = timeline
                        .points
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, p)| p.index.abs_diff(events))
                        .map_or(self.point, |(i, _)| i);
                    self.published_point = Some(self.point);
                    // Between points: the tree shows the exact state, not the nearest point's.
                    if timeline.points[self.point].index != events
                        && self
                            .worker
                            .requests
                            .try_send(Request::SizesAtEvents(events))
                            .is_ok()
                    {
                        self.exact = Some(Exact {
                            anchor: self.point,
                            events,
                            state: None,
                        });
                    }
                }
            } else if self.published_point != Some(self.point) {
                let links = &self.dataset.links;
                let events = timeline.points[self.point].index;
                // The first point shown is the pane's default, later ones the user's choice.
                self.seen_time = match self.published_point {
                    None => links.set_default_time(events),
                    Some(_) => links.set_time(events),
                };
                self.published_point = Some(self.point);
            }
        }
        // Unfilled: what is behind them is the window's clear colour, the panels' own (a fill
        // costs a software rasterizer CPU every frame).
        let panel = egui::Frame::side_top_panel(ui.style()).fill(Color32::TRANSPARENT);
        egui::Panel::bottom(("heap-time", self.key.get()))
            .frame(panel)
            .resizable(false)
            .show(ui, |ui| self.time_bar(ui, &timeline));
        let suspects = ("heap-suspects", self.key.get());
        if std::mem::take(&mut self.fresh_layout) {
            // A panel keeps the width its content once needed: a swapped-in snapshot lays it
            // out afresh (same id, so no new widgets for egui), as the file opened does.
            let id = ui.scope_id().with_salt(egui::IdSalt::new(suspects));
            ui.ctx().data_mut(|d| d.remove::<egui::PanelState>(id));
        }
        egui::Panel::right(suspects)
            .frame(panel)
            .default_size(230.0)
            .show(ui, |ui| self.suspects(ui, &timeline));
        let (rect, response) = ui.allocate_exact_size(ui.available_size(), Sense::click());
        let size = rect.size();
        let mut picture = None;
        let mut hovered_text = None;

        if self.settings.chart == Chart::Timeline {
            let picks: Vec<usize> = if self.timeline_points.is_empty() {
                let n = SMALL_MULTIPLES.min(timeline.points.len());
                (0..n)
                    .map(|i| if n == 1 { last } else { i * last / (n - 1) })
                    .collect()
            } else {
                self.timeline_points.iter().map(|&p| p.min(last)).collect()
            };
            let cells: Vec<(TimePoint, Arc<Sizes>)> = picks
                .iter()
                .filter_map(|&p| Some((timeline.points[p].clone(), self.sizes_at(p)?)))
                .collect();
            if cells.len() == picks.len() {
                let cells: Vec<(TimePoint, &Sizes)> =
                    cells.iter().map(|(p, s)| (p.clone(), s.as_ref())).collect();
                picture = Some(timeline_picture(
                    &timeline,
                    &cells,
                    self.root(),
                    self.settings.depth,
                    size,
                ));
            } else {
                ui.ctx().request_repaint_after(Duration::from_millis(30));
            }
            self.current_key = None;
        } else {
            let exact = self.exact.as_ref().map(|x| (x.events, x.state.clone()));
            let key = (
                self.point,
                exact.as_ref().map(|x| x.0),
                self.root(),
                self.settings.chart,
                self.settings.depth,
                self.highlight_group,
            );
            let sizes = match exact {
                Some((_, state)) => state.map(|s| s.1),
                None => self.sizes_at(self.point),
            };
            if self.current_key != Some(key)
                && let Some(s) = sizes
            {
                let next = self.build(&timeline, &s);
                let same_chart = matches!(
                    (&self.current, &next),
                    (Some(Shown::Sunburst(_)), Shown::Sunburst(_))
                        | (Some(Shown::Icicle(_)), Shown::Icicle(_))
                );
                self.previous = if same_chart {
                    self.current.take()
                } else {
                    None
                };
                self.current = Some(next);
                self.current_key = Some(key);
                self.transition_start = Instant::now();
                if self.previous.is_none() && crate::panes::software_rasterizer() {
                    // Nothing to morph from: the chart grows in on a GPU; on a software
                    // rasterizer, where each frame is a whole-window redraw of ≈ 0.1–0.2 s
                    // of CPU, it is drawn at once.
                    if let Some(t) = self.transition_start.checked_sub(TRANSITION) {
                        self.transition_start = t;
                    }
                }
            }
            // Prefetch the neighbours so that stepping and playing are instant; not on a live
            // snapshot on a software rasterizer, where their replies would wake a whole-window
            // frame per snapshot that shows nothing new.
            if self.live_carry.is_none() || !crate::panes::software_rasterizer() {
                let _ = self.sizes_at((self.point + 1).min(last));
                let _ = self.sizes_at(self.point.saturating_sub(1));
            }
            let t = self.transition_t();
            if t < 1.0 {
                ui.ctx().request_repaint();
            }
            let hover = response.hover_pos().map(|p| p - rect.min.to_vec2());
            let area = chart_area(size);
            let mut hit = None;
            if let Some(current) = &self.current {
                let highlight = self.highlight_group.and_then(|g| {
                    current
                        .nodes()
                        .iter()
                        .position(|n| n.group == Some(g))
                        .map(|i| i as u32)
                });
                picture = Some(tree_picture(
                    current,
                    self.previous.as_ref(),
                    t,
                    &timeline,
                    highlight,
                    size,
                ));
                let total = self.shown_point(&timeline).total_bytes;
                hit = hover.and_then(|p| match current {
                    Shown::Sunburst(cur) => draw::sunburst_node_at(cur, area, p).map(|n| {
                        (
                            n,
                            memscape_heap::hover(cur, n, timeline.metric, total),
                            cur.nodes.get(n as usize).cloned(),
                        )
                    }),
                    Shown::Icicle(cur) => draw::icicle_node_at(cur, area, p).map(|n| {
                        (
                            n,
                            memscape_heap::hover(cur, n, timeline.metric, total),
                            cur.nodes.get(n as usize).cloned(),
                        )
                    }),
                });
            }
            if let Some((_, Some(info), Some(node))) = &hit {
                let growth = node
                    .group
                    .and_then(|g| timeline.growth.get(g as usize))
                    .copied()
                    .unwrap_or(0.0);
                let span = match (timeline.points.first(), timeline.points.last()) {
                    (Some(a), Some(b)) => b.time.saturating_sub(a.time) as f64,
                    _ => 0.0,
                };
                let growth = growth * span;
                let unit = "over the run";
                // Blocks to highlight exist only for a trace whose blocks give the heap (not
                // massif, profiles, or a dataset's heap from the query engine).
                let picks = if self
                    .dataset
                    .alloc_trace()
                    .is_some_and(|t| t.heap_query.is_none())
                {
                    " · right click: highlight its blocks in the map"
                } else {
                    ""
                };
                hovered_text = Some(format!(
                    "{}\n{}  ·  {} objects\n{:.1} % of parent  ·  {:.1} % of heap\ngrowth {}{} {unit}\nclick: drill down{picks}",
                    info.name,
                    draw::human_bytes(info.bytes),
                    info.objects,
                    info.share_of_parent * 100.0,
                    info.share_of_total * 100.0,
                    if growth < 0.0 { "−" } else { "+" },
                    draw::human_bytes(growth.abs() as u64),
                ));
            }
            if response.secondary_clicked()
                && let Some((_, _, Some(node))) = &hit
            {
                // Right click: highlight this group's blocks in the allocation map.
                match node.group {
                    Some(g) if self.dataset.alloc_trace().is_some() => {
                        let _ = self.worker.requests.try_send(Request::Blocks(g));
                    }
                    _ => self.dataset.links.clear_highlight(),
                }
            }
            if response.clicked()
                && let Some((_, _, Some(node))) = &hit
            {
                if node.depth == 0 {
                    self.roots.pop();
                } else if let Some(g) = node.group {
                    // Step in: the path from the current root down to the clicked node (a
                    // leaf at the drill-down depth too).
                    let path =
                        memscape_views::heap_tree::model::step_in(&timeline.trie, self.root(), g);
                    self.roots.extend(path);
                }
            }
        }

        if let Some(mut picture) = picture {
            // A dataset's heap from the query engine: said in the picture.
            if let Some(query) = self
                .dataset
                .alloc_trace()
                .and_then(|t| t.heap_query.as_ref())
            {
                memscape_views::picture::engine_note(&mut picture, &query.engine());
            }
            let drawn = !picture.shapes.is_empty();
            if cx.render_state.is_some() {
                self.drawn_once |= drawn;
            }
            memscape_views::gpu::paint(ui, &self.key, rect, picture);
        } else {
            ui.painter().rect_filled(
                rect,
                0.0,
                Color32::from_rgb(
                    draw::BACKGROUND[0],
                    draw::BACKGROUND[1],
                    draw::BACKGROUND[2],
                ),
            );
        }
        if let Some(text) = hovered_text {
            response.on_hover_ui_at_pointer(|ui| {
                ui.label(text);
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The menu offers both site keys (a line's bytes never shown under another line's label)
    /// and both call-path directions, each grouping once.
    #[test]
    fn the_grouping_menu_offers_line_function_and_both_path_directions() {
        let offered = |key: GroupKey| GROUPINGS.iter().any(|(_, keys)| keys == &[key]);
        for key in [
            GroupKey::Site,
            GroupKey::Function,
            GroupKey::Path,
            GroupKey::Callers,
        ] {
            assert!(offered(key), "{key:?} alone is not in the menu");
        }
        for (i, (name, keys)) in GROUPINGS.iter().enumerate() {
            assert!(
                GROUPINGS[..i].iter().all(|(n, k)| n != name && k != keys),
                "{name} twice"
            );
        }
        assert_eq!(
            GROUPINGS[0].1,
            &[GroupKey::Site],
            "the default groups by line"
        );
    }
}
