//! The heap-evolution pane: sunburst, icicle or small multiples of the heap tree at a time
//! point, with drill-down, time travel (slider, steps, play) over a heap-size curve, animated
//! transitions, hover facts and the leak-suspect list.
//!
//! A worker thread per pane owns the group index (it borrows the dataset) and answers requests
//! for the sizes at a time point through bounded channels; the UI thread never walks blocks.

use std::collections::HashMap;
use std::f32::consts::{FRAC_PI_2, TAU};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TryRecvError};
use egui::{Align2, Color32, Pos2, Rect, Sense};
use memscape_heap::{
    GroupKey, HeapTimeline, IcicleRect, Layout, Metric, Sizes, SunburstSegment, TimePoint, icicle,
    sunburst,
};
use memscape_render::shapes::ShapesView;

use super::draw::{self, Picture};
use super::model::{self, HeapSettings};
use crate::data::Dataset;
use crate::views::labels;
use crate::views::shapes_paint::{self, ShapesCallback};
use crate::views::{View, ViewContext};

const TRANSITION: Duration = Duration::from_millis(450);
const PLAY_STEP: Duration = Duration::from_millis(600);
const SMALL_MULTIPLES: usize = 5;
/// Sizes kept per pane (each is two u64 per group).
const SIZES_CACHE: usize = 48;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chart {
    Sunburst,
    Icicle,
    Timeline,
}

/// Grouping presets offered in the menu (any list works on the CLI).
const GROUPINGS: &[(&str, &[GroupKey])] = &[
    ("call site", &[GroupKey::Site]),
    ("thread › call site", &[GroupKey::Thread, GroupKey::Site]),
    ("call path", &[GroupKey::Path]),
    ("module › call site", &[GroupKey::Module, GroupKey::Site]),
    ("size class › call site", &[GroupKey::Size, GroupKey::Site]),
    ("thread › size class", &[GroupKey::Thread, GroupKey::Size]),
];

enum Reply {
    Timeline(Box<HeapTimeline>),
    Sizes(usize, Arc<Sizes>),
    /// A group's blocks, for the linked allocation map.
    Blocks(u32, Vec<u32>),
    /// The group of a block picked in the allocation map.
    GroupOf(u32),
    /// The exact state after some events (a time chosen in the allocation map).
    Exact(TimePoint, Arc<Sizes>),
    Failed(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Request {
    Sizes(usize),
    Blocks(u32),
    GroupOf(u32),
    /// The state after this many events, off the slider's points.
    SizesAtEvents(u64),
}

struct Worker {
    requests: Sender<Request>,
    replies: Receiver<Reply>,
}

fn spawn_worker(dataset: Arc<Dataset>, settings: HeapSettings, ctx: egui::Context) -> Worker {
    let (req_tx, req_rx) = crossbeam_channel::bounded::<Request>(64);
    let (rep_tx, rep_rx) = crossbeam_channel::bounded::<Reply>(64);
    let name = format!("heap-tree {}", dataset.name);
    let spawned = std::thread::Builder::new().name(name).spawn(move || {
        let (timeline, mut sizes) = match model::timeline(&dataset, &settings) {
            Ok(x) => x,
            Err(e) => {
                let _ = rep_tx.send(Reply::Failed(format!("{e:#}")));
                ctx.request_repaint();
                return;
            }
        };
        if rep_tx.send(Reply::Timeline(Box::new(timeline))).is_err() {
            return;
        }
        ctx.request_repaint();
        // Requests arrive in bursts (scrubbing): answer the newest first.
        while let Ok(first) = req_rx.recv() {
            let mut wanted = vec![first];
            while let Ok(r) = req_rx.try_recv() {
                wanted.push(r);
            }
            wanted.reverse();
            wanted.dedup();
            for request in wanted {
                let reply = match request {
                    Request::Sizes(p) => sizes
                        .sizes_at_point(p)
                        .map(|s| Reply::Sizes(p, Arc::new(s))),
                    Request::Blocks(g) => sizes.blocks_in_group(g).map(|b| Reply::Blocks(g, b)),
                    Request::GroupOf(b) => sizes.group_of_block(b).map(Reply::GroupOf),
                    Request::SizesAtEvents(e) => sizes
                        .sizes_at_events(e)
                        .map(|(p, s)| Reply::Exact(p, Arc::new(s))),
                };
                if let Some(reply) = reply
                    && rep_tx.send(reply).is_err()
                {
                    return;
                }
            }
            ctx.request_repaint();
        }
    });
    if let Err(e) = spawned {
        tracing::error!("could not start the heap-tree worker: {e}");
    }
    Worker {
        requests: req_tx,
        replies: rep_rx,
    }
}

enum Shown {
    Sunburst(Layout<SunburstSegment>),
    Icicle(Layout<IcicleRect>),
}

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
    key: crate::views::PaneKey,
    settings: HeapSettings,
    grouping: usize,
    worker: Worker,
    timeline: Option<Arc<HeapTimeline>>,
    error: Option<String>,
    sizes: HashMap<usize, Arc<Sizes>>,
    requested: HashMap<usize, Instant>,
    chart: Chart,
    depth: usize,
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
    version: u64,
    shapes: Arc<Vec<memscape_render::shapes::ShapeGpu>>,
    drawn_once: bool,
    /// Versions of the dataset's time cursor seen and published by this pane.
    seen_time: u64,
    published_point: Option<usize>,
    seen_pick: u64,
    /// Time points the user put on the timeline (empty: five evenly spaced).
    timeline_points: Vec<usize>,
}

impl HeapTreePane {
    pub fn new(dataset: Arc<Dataset>, ctx: &egui::Context) -> Self {
        let settings = HeapSettings::default();
        let worker = spawn_worker(dataset.clone(), settings.clone(), ctx.clone());
        Self {
            key: crate::views::PaneKey::new(),
            dataset,
            settings,
            grouping: 0,
            worker,
            timeline: None,
            error: None,
            sizes: HashMap::new(),
            requested: HashMap::new(),
            chart: Chart::Sunburst,
            depth: 2,
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
            version: 0,
            shapes: Arc::new(Vec::new()),
            drawn_once: false,
            seen_time: 0,
            published_point: None,
            seen_pick: 0,
            timeline_points: Vec::new(),
        }
    }

    fn restart(&mut self, ctx: &egui::Context) {
        self.worker = spawn_worker(self.dataset.clone(), self.settings.clone(), ctx.clone());
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
                        .map(|t| draw::short_name(t.trie.name(group)).to_owned())
                        .unwrap_or_default();
                    self.dataset.links.set_highlight(blocks, name);
                }
                Ok(Reply::GroupOf(group)) => {
                    // Drill so that the picked block's group is a child of the shown root, and
                    // outline it.
                    if let Some(t) = &self.timeline {
                        let path = t.trie.path_to_root(group);
                        self.roots = path[1..path.len().saturating_sub(1).max(1)].to_vec();
                        // Keep the tree shallow enough to show the group.
                        self.depth = self.depth.max(1);
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
        let tree = model::tree(
            timeline,
            sizes,
            self.root(),
            self.depth,
            self.highlight_group,
        );
        match self.chart {
            Chart::Icicle => Shown::Icicle(icicle(&tree, timeline.metric, self.depth)),
            _ => Shown::Sunburst(sunburst(&tree, timeline.metric, self.depth)),
        }
    }

    fn transition_t(&self) -> f32 {
        (self.transition_start.elapsed().as_secs_f32() / TRANSITION.as_secs_f32()).min(1.0)
    }

    fn controls(&mut self, ui: &mut egui::Ui) {
        ui.horizontal_wrapped(|ui| {
            ui.selectable_value(&mut self.chart, Chart::Sunburst, "Sunburst");
            ui.selectable_value(&mut self.chart, Chart::Icicle, "Icicle");
            ui.selectable_value(&mut self.chart, Chart::Timeline, "Timeline");
            ui.separator();
            let is_trace = self.dataset.alloc_trace().is_some();
            let before = (self.grouping, self.settings.metric);
            if is_trace {
                egui::ComboBox::from_id_salt(("grouping", self.key.get()))
                    .selected_text(GROUPINGS[self.grouping].0)
                    .show_ui(ui, |ui| {
                        for (i, (name, _)) in GROUPINGS.iter().enumerate() {
                            ui.selectable_value(&mut self.grouping, i, *name);
                        }
                    });
                ui.selectable_value(&mut self.settings.metric, Metric::Bytes, "bytes");
                ui.selectable_value(&mut self.settings.metric, Metric::Objects, "objects");
            }
            if before != (self.grouping, self.settings.metric) {
                self.settings.keys = GROUPINGS[self.grouping].1.to_vec();
                self.restart(ui.ctx());
            }
            ui.separator();
            ui.add(egui::Slider::new(&mut self.depth, 1..=6).text("levels"));
        });
        // Breadcrumb of the drill-down path.
        if let Some(timeline) = &self.timeline {
            let mut pop_to = None;
            ui.horizontal_wrapped(|ui| {
                if ui.link(draw::short_name(timeline.trie.name(0))).clicked() {
                    pop_to = Some(0);
                }
                for (i, &node) in self.roots.iter().enumerate() {
                    ui.label(">");
                    if ui
                        .link(draw::short_name(timeline.trie.name(node)))
                        .clicked()
                    {
                        pop_to = Some(i + 1);
                    }
                }
            });
            if let Some(n) = pop_to {
                self.roots.truncate(n);
            }
        }
    }

    fn time_bar(&mut self, ui: &mut egui::Ui, timeline: &HeapTimeline) {
        let last = timeline.points.len().saturating_sub(1);
        ui.horizontal(|ui| {
            if ui.button("|<").on_hover_text("first time point").clicked() {
                self.point = 0;
            }
            if ui.button("<").on_hover_text("step back").clicked() {
                self.point = self.point.saturating_sub(1);
            }
            let play = if self.playing { "pause" } else { "play" };
            if ui.button(play).on_hover_text("play / pause").clicked() {
                self.playing = !self.playing;
                if self.playing && self.point >= last {
                    self.point = 0;
                }
                self.last_step = Instant::now();
            }
            if ui.button(">").on_hover_text("step forward").clicked() {
                self.point = (self.point + 1).min(last);
            }
            if ui.button(">|").on_hover_text("last time point").clicked() {
                self.point = last;
            }
            if ui.button("peak").clicked() {
                self.point = timeline.peak_point;
            }
            if ui
                .button("+ timeline")
                .on_hover_text("add this time point to the Timeline's small multiples")
                .clicked()
                && !self.timeline_points.contains(&self.point)
            {
                self.timeline_points.push(self.point);
                self.timeline_points.sort_unstable();
            }
            if !self.timeline_points.is_empty()
                && ui
                    .button("clear timeline")
                    .on_hover_text("back to five evenly spaced time points")
                    .clicked()
            {
                self.timeline_points.clear();
            }
            let p = &self.shown_point(timeline);
            ui.label(format!(
                "{}   {} live",
                model::time_text(timeline, p.time),
                draw::human_bytes(p.total_bytes)
            ));
        });
        // The heap-size curve with the current time marked; click or drag to move in time.
        let (rect, response) = ui.allocate_exact_size(
            egui::vec2(ui.available_width(), 56.0),
            Sense::click_and_drag(),
        );
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 2.0, Color32::from_gray(24));
        let t0 = timeline.points.first().map_or(0, |p| p.time) as f64;
        let t1 = timeline.points.last().map_or(1, |p| p.time).max(1) as f64;
        let span = (t1 - t0).max(1.0);
        let max_b = timeline
            .series
            .iter()
            .map(|s| s.1)
            .max()
            .unwrap_or(1)
            .max(1) as f64;
        let x_of = |t: f64| rect.left() + ((t - t0) / span) as f32 * rect.width();
        let pts: Vec<Pos2> = timeline
            .series
            .iter()
            .map(|&(t, b)| {
                Pos2::new(
                    x_of(t as f64),
                    rect.bottom() - 3.0 - (b as f64 / max_b) as f32 * (rect.height() - 8.0),
                )
            })
            .collect();
        if pts.len() >= 2 {
            painter.add(egui::Shape::line(
                pts,
                egui::Stroke::new(1.5, Color32::from_rgb(110, 170, 230)),
            ));
        }
        for (i, p) in timeline.points.iter().enumerate() {
            if i % (timeline.points.len() / 60).max(1) == 0 {
                let x = x_of(p.time as f64);
                painter.line_segment(
                    [
                        Pos2::new(x, rect.bottom() - 3.0),
                        Pos2::new(x, rect.bottom()),
                    ],
                    egui::Stroke::new(1.0, Color32::from_gray(90)),
                );
            }
        }
        // The time points put on the timeline, as small markers on the curve's top edge.
        for &p in &self.timeline_points {
            if let Some(tp) = timeline.points.get(p) {
                let x = x_of(tp.time as f64);
                painter.circle_filled(
                    Pos2::new(x, rect.top() + 4.0),
                    3.5,
                    Color32::from_rgb(120, 200, 140),
                );
            }
        }
        let cur = x_of(self.shown_point(timeline).time as f64);
        painter.line_segment(
            [Pos2::new(cur, rect.top()), Pos2::new(cur, rect.bottom())],
            egui::Stroke::new(2.0, Color32::from_rgb(250, 200, 80)),
        );
        if let Some(pos) = response.interact_pointer_pos() {
            let t = t0 + f64::from((pos.x - rect.left()) / rect.width()) * span;
            self.point = timeline
                .points
                .iter()
                .enumerate()
                .min_by(|a, b| {
                    (a.1.time as f64 - t)
                        .abs()
                        .total_cmp(&(b.1.time as f64 - t).abs())
                })
                .map_or(0, |(i, _)| i);
            self.playing = false;
        }
        let mut point = self.point;
        ui.add(
            egui::Slider::new(&mut point, 0..=last)
                .show_value(false)
                .text("time point"),
        );
        if point != self.point {
            self.point = point;
            self.playing = false;
        }
    }

    fn suspects(&mut self, ui: &mut egui::Ui, timeline: &HeapTimeline) {
        ui.heading("Leak suspects");
        ui.label(
            egui::RichText::new("groups that grew and kept what they grew, steepest first")
                .small()
                .weak(),
        );
        // What a group gained over the run reads better than a slope per nanosecond or per
        // instruction.
        egui::ScrollArea::vertical().show(ui, |ui| {
            for s in timeline.suspects.iter().take(25) {
                let text = format!(
                    "{}\n  +{} over the run, {} at the end",
                    draw::short_name(&s.name),
                    draw::human_bytes(s.end_bytes.saturating_sub(s.start_bytes)),
                    draw::human_bytes(s.end_bytes)
                );
                let r = ui.selectable_label(self.highlight_group == Some(s.group), text);
                if r.clicked() {
                    // Drill so that the suspect is a child of the shown root.
                    let path = timeline.trie.path_to_root(s.group);
                    let path = path[1..path.len().saturating_sub(1).max(1)].to_vec();
                    self.roots = path;
                    self.highlight_group = Some(s.group);
                }
                r.on_hover_text(s.path.join(" › "));
            }
        });
    }
}

impl View for HeapTreePane {
    fn title(&self) -> String {
        format!("Heap tree — {}", self.dataset.name)
    }

    fn tour_step(&self) -> Option<crate::tour::StepSpec> {
        let timeline = self.timeline.as_ref()?;
        let point = &self.shown_point(timeline);
        let massif = self.dataset.alloc_trace().is_none();
        Some(crate::tour::StepSpec {
            file: Some(crate::views::tour_file_of(&self.dataset)),
            view: Some(
                match self.chart {
                    Chart::Sunburst => "sunburst",
                    Chart::Icicle => "icicle",
                    Chart::Timeline => "timeline",
                }
                .to_owned(),
            ),
            at: (!massif).then_some(point.time),
            snapshot: massif.then_some(point.index),
            group: Some(
                self.settings
                    .keys
                    .iter()
                    .map(|k| k.name())
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            metric: Some(
                match self.settings.metric {
                    Metric::Bytes => "bytes",
                    Metric::Objects => "objects",
                }
                .to_owned(),
            ),
            depth: Some(self.depth),
            root: self.roots.last().map(|&r| timeline.trie.name(r).to_owned()),
            ..Default::default()
        })
    }

    fn is_ready(&self) -> bool {
        self.drawn_once || self.error.is_some()
    }

    fn ui(&mut self, ui: &mut egui::Ui, cx: &ViewContext<'_>) {
        self.drain();
        self.controls(ui);
        if let Some(e) = &self.error {
            ui.colored_label(Color32::LIGHT_RED, e);
            return;
        }
        let Some(timeline) = self.timeline.clone() else {
            ui.horizontal(|ui| {
                ui.spinner();
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
                self.seen_time = self
                    .dataset
                    .links
                    .set_time(timeline.points[self.point].index);
                self.published_point = Some(self.point);
            }
        }
        egui::Panel::bottom(("heap-time", self.key.get()))
            .resizable(false)
            .show(ui, |ui| self.time_bar(ui, &timeline));
        egui::Panel::right(("heap-suspects", self.key.get()))
            .default_size(230.0)
            .show(ui, |ui| self.suspects(ui, &timeline));
        let (rect, response) = ui.allocate_exact_size(ui.available_size(), Sense::click());
        let local = Rect::from_min_size(Pos2::ZERO, rect.size());
        let mut picture = Picture::default();
        let mut hovered_text = None;

        if self.chart == Chart::Timeline {
            let picks: Vec<usize> = if self.timeline_points.is_empty() {
                let n = SMALL_MULTIPLES.min(timeline.points.len());
                (0..n)
                    .map(|i| if n == 1 { last } else { i * last / (n - 1) })
                    .collect()
            } else {
                self.timeline_points.iter().map(|&p| p.min(last)).collect()
            };
            let n = picks.len().max(1);
            let cell_w = rect.width() / n as f32;
            let mut all_ready = true;
            for (i, &p) in picks.iter().enumerate() {
                let Some(s) = self.sizes_at(p) else {
                    all_ready = false;
                    continue;
                };
                let tree =
                    model::tree(&timeline, &s, self.root(), self.depth, self.highlight_group);
                let layout = sunburst(&tree, timeline.metric, self.depth);
                let cell = Rect::from_min_size(
                    Pos2::new(i as f32 * cell_w, 0.0),
                    egui::vec2(cell_w, rect.height() - 28.0),
                );
                picture.extend(draw::sunburst(
                    &layout,
                    None,
                    1.0,
                    cell.shrink(6.0),
                    &timeline.order,
                    None,
                ));
                let point = &timeline.points[p];
                picture.labels.push(labels::Label::new(
                    Pos2::new(cell.center().x, rect.height() - 14.0),
                    format!(
                        "{} · {}",
                        model::time_text(&timeline, point.time),
                        draw::human_bytes(point.total_bytes)
                    ),
                    12.0,
                    Color32::from_gray(210),
                    Align2::CENTER_CENTER,
                ));
            }
            if !all_ready {
                ui.ctx().request_repaint_after(Duration::from_millis(30));
            }
            self.current_key = None;
        } else {
            let exact = self.exact.as_ref().map(|x| (x.events, x.state.clone()));
            let key = (
                self.point,
                exact.as_ref().map(|x| x.0),
                self.root(),
                self.chart,
                self.depth,
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
            }
            // Prefetch the neighbours so that stepping and playing are instant.
            let _ = self.sizes_at((self.point + 1).min(last));
            let _ = self.sizes_at(self.point.saturating_sub(1));
            let t = self.transition_t();
            if t < 1.0 {
                ui.ctx().request_repaint();
            }
            let highlight_node = |nodes: &[memscape_heap::layout::LayoutNode]| {
                self.highlight_group.and_then(|g| {
                    nodes
                        .iter()
                        .position(|n| n.group == Some(g))
                        .map(|i| i as u32)
                })
            };
            let hover = response.hover_pos().map(|p| p - rect.min.to_vec2());
            let mut hit = None;
            match (&self.current, &self.previous) {
                (Some(Shown::Sunburst(cur)), prev) => {
                    let from = match prev {
                        Some(Shown::Sunburst(p)) if t < 1.0 => Some(p),
                        _ => None,
                    };
                    let area = local.shrink(8.0);
                    picture = draw::sunburst(
                        cur,
                        from,
                        t,
                        area,
                        &timeline.order,
                        highlight_node(&cur.nodes),
                    );
                    if let Some(p) = hover {
                        let radius = 0.5 * area.width().min(area.height()) - 4.0;
                        let d = p - area.center();
                        let angle = (d.y.atan2(d.x) + FRAC_PI_2).rem_euclid(TAU);
                        hit = memscape_heap::layout::sunburst_hit(
                            cur,
                            f64::from(angle),
                            f64::from(d.length() / radius.max(1.0)),
                        )
                        .map(|n| {
                            (
                                n,
                                memscape_heap::hover(
                                    cur,
                                    n,
                                    timeline.metric,
                                    self.shown_point(&timeline).total_bytes,
                                ),
                                cur.nodes.get(n as usize).cloned(),
                            )
                        });
                    }
                }
                (Some(Shown::Icicle(cur)), prev) => {
                    let from = match prev {
                        Some(Shown::Icicle(p)) if t < 1.0 => Some(p),
                        _ => None,
                    };
                    let area = local.shrink(4.0);
                    picture = draw::icicle(
                        cur,
                        from,
                        t,
                        area,
                        &timeline.order,
                        highlight_node(&cur.nodes),
                    );
                    if let Some(p) = hover {
                        let x = f64::from((p.x - area.left()) / area.width());
                        let y = f64::from((p.y - area.top()) / area.height());
                        hit = cur
                            .shapes
                            .iter()
                            .find(|s| x >= s.x0 && x < s.x1 && y >= s.y0 && y < s.y1)
                            .map(|s| {
                                (
                                    s.node,
                                    memscape_heap::hover(
                                        cur,
                                        s.node,
                                        timeline.metric,
                                        self.shown_point(&timeline).total_bytes,
                                    ),
                                    cur.nodes.get(s.node as usize).cloned(),
                                )
                            });
                    }
                }
                (None, _) => {}
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
                hovered_text = Some(format!(
                    "{}\n{}  ·  {} objects\n{:.1} % of parent  ·  {:.1} % of heap\ngrowth {}{} {unit}\nclick: drill down · right click: highlight its blocks in the map",
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
                } else if let Some(g) = node.group
                    && !timeline.trie.children(g).is_empty()
                {
                    // The path from the current root down to the clicked node.
                    let path = timeline.trie.path_to_root(g);
                    let from = path
                        .iter()
                        .position(|&n| n == self.root())
                        .map_or(0, |i| i + 1);
                    self.roots.extend(path[from..].iter().copied());
                }
            }
        }

        let ppp_view = ShapesView::IDENTITY;
        // Upload only when the picture changed (animations, new time points, hover).
        let shapes: Vec<_> = picture.shapes.iter().map(|s| s.gpu()).collect();
        if *self.shapes != shapes {
            self.version = self.version.wrapping_add(1);
            self.shapes = Arc::new(shapes);
        }
        ui.painter().rect_filled(
            rect,
            0.0,
            Color32::from_rgba_unmultiplied(
                draw::BACKGROUND[0],
                draw::BACKGROUND[1],
                draw::BACKGROUND[2],
                255,
            ),
        );
        if cx.render_state.is_some() {
            shapes_paint::paint(
                ui,
                ShapesCallback {
                    key: self.key.get(),
                    version: self.version,
                    shapes: self.shapes.clone(),
                    view: ppp_view,
                    rect,
                },
            );
            self.drawn_once |= !self.shapes.is_empty();
        }
        labels::paint(&ui.painter_at(rect), rect.min, &picture.labels);
        if let Some(text) = hovered_text {
            response.on_hover_ui_at_pointer(|ui| {
                ui.label(text);
            });
        }
    }
}
