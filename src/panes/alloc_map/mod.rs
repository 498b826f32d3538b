//! The allocation-map pane (Moreta & Telea): its settings and camera (animated zoom, pan,
//! keyboard), controls, GPU picking, cushion cursors and the context view. The picture is
//! `memscape_views::alloc_map::compose::picture`'s, painted through the one GPU bridge; the bins,
//! colours and occupancy bars come from the pane's worker thread.

mod controls;
mod details;
mod free_sites;
mod interaction;
mod live;
mod lod;
mod processes;
mod worker;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crossbeam_channel::TrySendError;
use memscape_render::alloc_map::{AllocBlockGpu, BarBlocks};
use memscape_views::alloc_map::AllocMapSettings;
use memscape_views::alloc_map::bins::{BinBy, BinnedScene};
use memscape_views::alloc_map::camera::{Camera, axis_time_of_events, events_at, selection_bits};
use memscape_views::alloc_map::colors::ColorBy;
use memscape_views::alloc_map::compose::{MapBuilder, MapInputs, Wanted, picture};
use memscape_views::alloc_map::layout::binned_pane_layout;
use memscape_views::alloc_map::scene::TimeAxis;
use memscape_views::gpu::{PaintOptions, PaneKey, PickAnswers, PickRequest, paint_picture};
use memscape_views::picture::{Layer, MapData};
use memscape_views::tour::{Step, tour_file_of};
use memscape_views::values::U64Range;
use memscape_views::{Dataset, ViewSettings};

use crate::panes::{View, ViewContext};
use interaction::Areas;

/// What a pick request was for: the answer applies while the pointer and camera stay put.
#[derive(Debug, Clone, Copy, PartialEq)]
struct PickTag {
    bin: usize,
    pos: egui::Pos2,
    camera: Camera,
    data_gen: u64,
}

/// A GPU pick's answer: the upload position of the block under the pointer, if any.
#[derive(Debug, Clone, Copy, PartialEq)]
struct PickAnswer {
    tag: PickTag,
    position: Option<usize>,
}

pub struct AllocMapPane {
    key: PaneKey,
    dataset: Arc<Dataset>,
    /// What is shown, as `memscape render` and tours name it (the ranges are the camera's,
    /// written when a tour step is recorded).
    settings: AllocMapSettings,
    /// The shown binning, its coloured blocks and bars, and what they were made for.
    binned: Arc<BinnedScene>,
    blocks: Arc<Vec<AllocBlockGpu>>,
    bar: Option<Arc<BarBlocks>>,
    curves: Option<Arc<Vec<memscape_trace::pools::GroupCurves>>>,
    /// A big trace's unbinned bar as its running integral (`Wanted::bar_integral`).
    bar_integral: Option<Arc<memscape_views::alloc_map::bar_integral::BarIntegral>>,
    /// A live recording's unbinned bar, which the next snapshot's pane continues.
    live_bar: Option<Arc<memscape_views::alloc_map::live_bar::LiveBar>>,
    shown: Wanted,
    /// What the GPU draws from (rebuilt when the blocks, times or selection change).
    data: Option<Arc<MapData>>,
    /// Bumped whenever `binned` changes (picks of another binning do not apply).
    data_gen: u64,
    worker: Option<worker::Worker>,
    requested: Option<Wanted>,
    /// The camera shown and the one it moves to (animated zoom).
    camera: Option<Camera>,
    target: Option<Camera>,
    drawn: Arc<AtomicBool>,
    /// The pane left the map no room in the last frame: nothing to draw, so nothing to wait
    /// for (a screenshot of a small window would otherwise wait forever).
    no_room: bool,
    /// The dataset's highlight version the selection bits were made for.
    seen_highlight: u64,
    selection: Option<Arc<memscape_render::alloc_map::SelectionBits>>,
    /// Plain clicks drop cursors instead of pinning blocks.
    cursor_mode: bool,
    pinned: Option<usize>,
    /// Picks asked (by tag) and the GPU's answers.
    picks: HashMap<u64, PickTag>,
    next_pick: u64,
    answers: PickAnswers,
    answer: Option<PickAnswer>,
    /// The bin the context view shows (the last one hovered).
    focus_bin: usize,
    /// Wheel movement over the stacked bar not yet turned into whole bins.
    stacked_wheel: f32,
    box_start: Option<egui::Pos2>,
    context_drag: Option<(egui::Pos2, Camera)>,
    /// The processes shown (the `process` setting applied to the dataset opened).
    filter: processes::ProcessFilterState,
    /// A live recording's newer snapshot, prepared off screen until its bins are built.
    next: Option<Box<AllocMapPane>>,
    /// The newest snapshot, waiting for `next` to be shown.
    queued: Option<Arc<Dataset>>,
    /// The egui pass in which the pane was last drawn (a pane not shown does not hold a live
    /// recording back).
    last_ui: u64,
    /// The "who frees what" panel at the right.
    free_sites: free_sites::FreeSitesPanel,
    /// A big trace's level-of-detail index, opened on its own thread.
    lod: Option<lod::LodOpener>,
    /// Its frames, computed off the UI thread once it is open (the paint bridge asks).
    refiner: Option<Arc<memscape_views::lod_refine::LodRefiner>>,
    /// The index drawn, and a newer one drawn once its first pictures are there.
    switch: lod::IndexSwitch,
    /// Eq. 1's sums of big layers on a software rasterizer, computed off the UI thread (the
    /// paint bridge asks; started with the first frame).
    sums: Option<Arc<memscape_views::sums_worker::SumsWorker>>,
    /// The window the worker wakes when it replies (set by the first frame).
    waker: Arc<std::sync::OnceLock<egui::Context>>,
    /// Follows a live recording (a snapshot after the first): on a software rasterizer every
    /// layer is summed on the CPU (`PaintOptions::cpu_sums_always`), see `live.rs`.
    live: bool,
}

/// What a pane on `dataset` shows before the user changes anything: the GUI's panels, the
/// dataset's default bins and colours, the pools' curves when it declares pools.
fn default_settings(dataset: &Dataset, color_by: ColorBy) -> AllocMapSettings {
    let bins = dataset
        .alloc_trace()
        .map_or(BinBy::None, |t| BinBy::default_for(&t.trace));
    let mut settings = AllocMapSettings {
        color: Some(color_by),
        bins: Some(bins),
        ..AllocMapSettings::gui()
    };
    // An allocator's own pools: their waste and fragmentation under each bin.
    if dataset
        .alloc_trace()
        .is_some_and(|t| !t.trace.pools.is_empty())
    {
        settings.set(memscape_views::alloc_map::settings::Panel::Curves, true);
    }
    settings
}

impl AllocMapPane {
    pub fn new(dataset: Arc<Dataset>) -> Self {
        Self::with_builder(dataset, MapBuilder::default())
    }

    /// A pane on `dataset` whose worker builds with `builder`.
    fn with_builder(dataset: Arc<Dataset>, builder: MapBuilder) -> Self {
        let scene = dataset.alloc_trace().and_then(|t| t.scene.as_ref());
        let color_by = scene.map_or(ColorBy::Thread, |s| s.color_by);
        let (binned, blocks) = match scene {
            Some(s) => (Arc::new(BinnedScene::unbinned(s)), s.blocks.clone()),
            None => (Arc::new(BinnedScene::empty()), Arc::default()),
        };
        let shown = Wanted {
            by: BinBy::None,
            axis: TimeAxis::Events,
            color_by,
            age_at: 0,
            curves: false,
            bar_integral: false,
        };
        let waker = Arc::new(std::sync::OnceLock::new());
        let worker =
            scene.and_then(|_| worker::spawn_worker(dataset.clone(), waker.clone(), builder));
        let settings = default_settings(&dataset, color_by);
        // A Parquet trace dataset's index is the query engine's; a big trace's, beside it.
        let lod = scene.and_then(|_| {
            lod::LodOpener::start_query(&dataset, None)
                .or_else(|| lod::LodOpener::start(&dataset, None))
        });
        Self {
            filter: processes::ProcessFilterState::new(dataset.clone()),
            key: PaneKey::new(),
            dataset,
            settings,
            binned,
            blocks,
            bar: None,
            curves: None,
            bar_integral: None,
            live_bar: None,
            shown,
            data: None,
            data_gen: 1,
            worker,
            requested: None,
            camera: None,
            target: None,
            drawn: Arc::new(AtomicBool::new(false)),
            no_room: false,
            seen_highlight: 0,
            selection: None,
            cursor_mode: false,
            pinned: None,
            picks: HashMap::new(),
            next_pick: 1,
            answers: Arc::new(Mutex::new(Vec::new())),
            answer: None,
            focus_bin: 0,
            stacked_wheel: 0.0,
            box_start: None,
            context_drag: None,
            next: None,
            queued: None,
            last_ui: 0,
            free_sites: Default::default(),
            lod,
            refiner: None,
            switch: lod::IndexSwitch::default(),
            sums: None,
            waker,
            live: false,
        }
    }

    fn color_by(&self) -> ColorBy {
        self.settings.color.unwrap_or(self.shown.color_by)
    }

    fn wanted(&self, time_events: Option<u64>, events_extent: u64) -> Wanted {
        let color_by = self.color_by();
        Wanted {
            by: self.settings.bins.unwrap_or(BinBy::None),
            axis: self.settings.time,
            color_by,
            age_at: if color_by == ColorBy::Age {
                time_events.unwrap_or(events_extent)
            } else {
                0
            },
            curves: self
                .settings
                .has(memscape_views::alloc_map::settings::Panel::Curves),
            // A big trace's (one drawn from an index) flat bar: from its running integral.
            bar_integral: self.lod.is_some()
                && self.settings.occupancy == memscape_views::alloc_map::settings::Occupancy::Flat,
        }
    }

    /// Sends the wanted state to the worker when it changed; takes finished results.
    fn sync_worker(&mut self, wanted: Wanted) {
        let Some((tx, rx)) = self.worker.clone() else {
            return;
        };
        if self.requested != Some(wanted) {
            match tx.try_send(wanted) {
                Ok(()) => self.requested = Some(wanted),
                Err(TrySendError::Full(_)) => {}
                Err(TrySendError::Disconnected(_)) => {
                    tracing::error!("allocation map worker stopped");
                    self.worker = None;
                }
            }
        }
        while let Ok(built) = rx.try_recv() {
            if !Arc::ptr_eq(&built.binned, &self.binned) {
                self.binned = built.binned;
                self.data_gen += 1;
                self.seen_highlight = u64::MAX;
                self.pinned = None;
                self.focus_bin = self.binned.largest_bin();
                self.answer = None;
            }
            self.blocks = built.blocks;
            self.bar = built.bar;
            self.curves = built.curves;
            self.bar_integral = built.bar_integral;
            if built.live_bar.is_some() {
                self.live_bar = built.live_bar;
            }
            self.shown = built.wanted;
            self.data = None;
            // Not ready before the new bins and bars are drawn: their sums are asked for when
            // they are drawn, and the pane counts as ready again once those land.
            self.drawn.store(false, Ordering::Release);
        }
    }

    fn busy(&self) -> bool {
        self.worker.is_some() && (self.requested != Some(self.shown) || self.bar.is_none())
    }

    fn fit(&mut self) {
        if let Some(scene) = self.dataset.alloc_trace().and_then(|t| t.scene.as_ref()) {
            self.target = Some(Camera::fit(scene.frame_time_end(self.settings.time)));
        }
    }

    /// Keeps the same stretch of the trace on screen, and the cursors where they were, on the
    /// other time axis.
    fn change_axis(&mut self, trace: &memscape_trace::Trace, from: TimeAxis) {
        let to = self.settings.time;
        let conv = |v: f64| {
            let e = events_at(trace, from, v.max(0.0) as u64);
            axis_time_of_events(trace, to, e) as f64
        };
        if let Some(c) = self.camera {
            let (a, b) = (conv(c.t0), conv(c.t0 + c.t_span));
            let cam = Camera {
                t0: a,
                t_span: (b - a).max(1.0),
                ..c
            };
            self.camera = Some(cam);
            self.target = Some(cam);
        }
        for cursor in &mut self.settings.cursors {
            *cursor = conv(*cursor as f64) as u64;
        }
    }

    /// The GPU's answers to earlier picks; the latest is kept.
    fn take_answers(&mut self) {
        let answers: Vec<(u64, Option<usize>)> = self
            .answers
            .lock()
            .map(|mut a| std::mem::take(&mut *a))
            .unwrap_or_default();
        for (tag, position) in answers {
            if let Some(tag) = self.picks.remove(&tag) {
                self.answer = Some(PickAnswer { tag, position });
            }
        }
    }

    /// Where this frame's map layers come from, from one reading of the index's state: the
    /// opening thread may finish at any moment, and two readings in one frame (blocks not yet
    /// drawn from the index, then no longer waiting for it) had the sums worker sum every block
    /// for that frame (the flaky `gui_map_of_a_big_trace_with_its_index_present_…` of wave 15).
    fn map_source(&mut self) -> lod::MapSource {
        let Some(opener) = &self.lod else {
            return lod::MapSource::Blocks;
        };
        if !self.index_draws() {
            return lod::MapSource::Blocks;
        }
        let state = opener.state();
        match state {
            Some(lod::LodState::Ready(index)) => {
                let waits = opener.queried() && crate::panes::software_rasterizer();
                let (shown, refiner) = self.switch.pick(&index, waits);
                self.refiner = refiner.or(self.refiner.take());
                shown.map_or(lod::MapSource::Blocks, lod::MapSource::Index)
            }
            state if opener.awaited_in(state.as_ref()) => lod::MapSource::AwaitIndex,
            _ => lod::MapSource::Blocks,
        }
    }

    /// Whether the settings shown are what the index holds: the map draws from it once open.
    fn index_draws(&self) -> bool {
        let Some(t) = self.dataset.alloc_trace() else {
            return false;
        };
        let shown_matches = self.shown.by == BinBy::None
            && self.shown.color_by == ColorBy::Thread
            && self.shown.axis == TimeAxis::Events;
        shown_matches
            && self.selection.is_none()
            && memscape_views::alloc_map::lod::unsupported_map(&self.settings, &t.trace).is_none()
    }

    /// Whether the map shows a picture of an earlier view (stretched to this one) while the
    /// level-of-detail worker computes the current one.
    pub fn refining(&self) -> bool {
        self.refiner.as_ref().is_some_and(|r| r.refining())
            && self.data.as_ref().is_some_and(|d| d.refiner.is_some())
    }

    /// Whether a layer shows sums of an earlier view (stretched to this one) while the sums
    /// worker computes the current one.
    pub fn summing(&self) -> bool {
        self.sums.as_ref().is_some_and(|s| s.pending())
    }

    /// The blocks, times and selection the GPU draws from (the same `Arc` while none changed).
    fn map_data(
        &mut self,
        ctx: &egui::Context,
        lod: Option<Arc<memscape_lod::LodTrace>>,
    ) -> Arc<MapData> {
        let times = self.binned.times(self.shown.axis).clone();
        // One worker per open index, kept while the index is shown.
        if let Some(l) = &lod
            && self
                .refiner
                .as_ref()
                .is_none_or(|r| !Arc::ptr_eq(r.lod(), l))
        {
            self.refiner =
                memscape_views::lod_refine::LodRefiner::new(l.clone(), Some(ctx.clone()));
        }
        let refiner = lod.as_ref().and(self.refiner.clone());
        let stale = self.data.as_ref().is_none_or(|d| {
            !Arc::ptr_eq(&d.blocks, &self.blocks)
                || !Arc::ptr_eq(&d.times, &times)
                || d.selection.as_ref().map(Arc::as_ptr) != self.selection.as_ref().map(Arc::as_ptr)
                || d.lod.as_ref().map(Arc::as_ptr) != lod.as_ref().map(Arc::as_ptr)
                || d.refiner.as_ref().map(Arc::as_ptr) != refiner.as_ref().map(Arc::as_ptr)
        });
        if stale {
            // A live snapshot's unbinned map keeps the sums of its ended blocks (the bins
            // reorder the blocks at each snapshot).
            let accumulate = self
                .dataset
                .alloc_trace()
                .and_then(|t| t.scene.as_ref())
                .filter(|_| self.live && self.shown.by == BinBy::None)
                .and_then(|s| {
                    Some(memscape_views::picture::Accumulate {
                        key: s.accumulation_key(self.shown.color_by)?,
                        open_from: s.time_extent(self.shown.axis),
                    })
                });
            self.data = Some(Arc::new(MapData {
                blocks: self.blocks.clone(),
                times,
                selection: self.selection.clone(),
                lod,
                refiner,
                accumulate,
            }));
        }
        self.data.clone().unwrap_or_else(|| {
            Arc::new(MapData {
                blocks: Arc::default(),
                times: Arc::default(),
                selection: None,
                lod: None,
                refiner: None,
                accumulate: None,
            })
        })
    }
}

impl View for AllocMapPane {
    fn title(&self) -> String {
        format!("Allocation map · {}", self.dataset.name)
    }

    fn picture(&self) -> Option<std::sync::Arc<memscape_views::Picture>> {
        self.key.last_picture()
    }

    fn tour_step(&self) -> Option<Step> {
        let scene = self.dataset.alloc_trace()?.scene.as_ref()?;
        let mut settings = self.settings.clone();
        if let Some(cam) = &self.camera {
            let t0 = cam.t0.max(0.0) as u64;
            let t1 = (cam.t0 + cam.t_span).max(1.0) as u64;
            settings.range_time = Some(U64Range::new(t0, t1.max(t0 + 1)));
            settings.range_addr = None;
            if settings.bins.unwrap_or(BinBy::None) == BinBy::None {
                let e = scene.collapsed_extent as f64;
                let y0 = (cam.y0 * e).max(0.0) as u64;
                let y1 = (((cam.y0 + cam.y_span) * e) as u64)
                    .min(scene.collapsed_extent.saturating_sub(1));
                // Addresses must lie in used regions; a camera edge in a gap keeps all regions.
                if let (Some((_, a0)), Some((_, a1))) = (scene.uncollapse(y0), scene.uncollapse(y1))
                    && a1 > a0
                {
                    settings.range_addr = Some(U64Range::new(a0, a1 + 1));
                }
            }
        }
        Some(Step::new(
            tour_file_of(&self.dataset),
            ViewSettings::AllocMap(settings),
        ))
    }

    fn is_ready(&self) -> bool {
        (self.drawn.load(Ordering::Acquire) || self.no_room)
            && !self.busy()
            && !self.lod.as_ref().is_some_and(|l| {
                matches!(
                    l.state(),
                    Some(lod::LodState::Opening { .. } | lod::LodState::Querying(_))
                )
            })
            && self.next.is_none()
            && self.queued.is_none()
            && !self.refining()
            && !self.summing()
            && !self.switch.switching()
    }

    fn follow(&mut self, dataset: Arc<Dataset>, _ctx: &egui::Context) {
        self.prepare_next(dataset);
    }

    fn preparing_live(&self, ctx: &egui::Context) -> bool {
        self.preparing(ctx)
    }

    fn live_step(&mut self, _ctx: &egui::Context, swap: bool) -> crate::panes::LiveStep {
        self.advance_live(swap)
    }

    fn ui(&mut self, ui: &mut egui::Ui, cx: &ViewContext<'_>) {
        self.last_ui = ui.ctx().cumulative_pass_nr();
        // A snapshot being prepared moves on and is swapped in by the shell (`live_step`).
        if self.next.is_some() {
            // Its worker wakes the window when done; this is a fallback (not more often: each
            // frame is a whole-window redraw, which on a software rasterizer takes the CPU
            // the preparation needs).
            ui.ctx().request_repaint_after(crate::panes::fallback(
                std::time::Duration::from_millis(100),
            ));
        }
        if self.apply_process_filter() || self.filtering() {
            ui.ctx()
                .request_repaint_after(std::time::Duration::from_millis(50));
        }
        let dataset = self.dataset.clone();
        if let Some(l) = &self.lod
            && ((self.drawn.load(Ordering::Acquire) && !self.busy() && !self.summing())
                || self.no_room)
        {
            l.first_frame_drawn();
        }
        let Some((t, scene)) = dataset
            .alloc_trace()
            .and_then(|t| Some((t, t.scene.as_ref()?)))
        else {
            ui.label("This trace has no addresses: the allocation map needs heaptrack --raw, CSV or memscape's own format.");
            return;
        };
        // Controls that overflow their row must not widen the map past the pane.
        let width = ui.available_width();
        tracing::trace!(
            target: "memscape::frames",
            pass = ui.ctx().cumulative_pass_nr(),
            "allocation map pane {:?}",
            ui.available_size()
        );
        let axis_before = self.settings.time;
        self.controls(ui);
        if axis_before != self.settings.time {
            self.change_axis(&t.trace, axis_before);
        }
        let links = self.dataset.links.get();
        let wanted = self.wanted(links.time_events, scene.events_extent);
        let _ = self.waker.set(ui.ctx().clone());
        self.sync_worker(wanted);
        if self.busy() {
            // The worker wakes the window when it replies; this only animates the spinner.
            ui.ctx()
                .request_repaint_after(crate::panes::paced(std::time::Duration::from_millis(50)));
        }
        self.take_answers();
        // The linked highlight becomes selection bits (others dimmed on the GPU).
        if links.highlight_version != self.seen_highlight {
            self.seen_highlight = links.highlight_version;
            self.selection = links
                .highlight
                .as_ref()
                .map(|h| Arc::new(selection_bits(&self.binned, h)));
        }
        ui.horizontal(|ui| {
            // As tall empty as with a spinner: the map below keeps its size (and its sums) when
            // a status comes or goes.
            ui.set_min_height(ui.spacing().interact_size.y);
            if let Some(h) = &links.highlight {
                ui.label(format!(
                    "highlighted: {} ({} blocks)",
                    links.highlight_label,
                    h.len()
                ));
                if ui.button("clear").clicked() {
                    self.dataset.links.clear_highlight();
                }
            }
            if let Some(i) = self.pinned {
                ui.label(format!(
                    "pinned: {:#x} ({} B)",
                    t.trace.blocks.address[i], t.trace.blocks.size[i]
                ))
                .on_hover_ui(|ui| details::block_details(ui, &t.trace, i));
                if ui.small_button("unpin").clicked() {
                    self.pinned = None;
                }
            }
            if self.busy() {
                crate::panes::spinner(ui);
                ui.weak("building bins…");
            }
            if self.filtering() {
                crate::panes::spinner(ui);
                ui.weak("selecting processes…");
            }
            if let Some((busy, line)) = self.lod.as_ref().and_then(lod::LodOpener::status) {
                if busy {
                    crate::panes::spinner(ui);
                    ui.ctx().request_repaint_after(crate::panes::paced(
                        std::time::Duration::from_millis(100),
                    ));
                }
                ui.weak(line);
                // An index is there but these settings are not what it holds: say so, or the
                // line above reads as if the map were drawn from it.
                if self.lod.as_ref().and_then(lod::LodOpener::ready).is_some()
                    && !self.index_draws()
                {
                    let why = self
                        .dataset
                        .alloc_trace()
                        .and_then(|t| {
                            memscape_views::alloc_map::lod::unsupported_map(
                                &self.settings,
                                &t.trace,
                            )
                        })
                        .or_else(|| {
                            self.selection
                                .is_some()
                                .then(|| String::from("a selection"))
                        });
                    if let Some(why) = why {
                        ui.weak("· map from the blocks")
                            .on_hover_text(format!("not drawn from the index: {why}"));
                    }
                }
            }
            if self.refining() {
                crate::panes::spinner(ui);
                ui.weak("refining the level of detail…");
            }
            if let Some(sums) = &self.sums
                && sums.pending()
            {
                crate::panes::spinner(ui);
                match sums.progress() {
                    Some((done, all)) if all > 0 => ui.weak(format!(
                        "summing {:.1} M blocks… {:.0} %",
                        all as f64 / 1e6,
                        done as f64 * 100.0 / all as f64
                    )),
                    _ => ui.weak("summing…"),
                };
            }
        });
        // A dataset read in part: what draws from the blocks read, on a line of its own
        // (wrapped: the status row above does not wrap).
        if let Some(bound) = self.lod.as_ref().and_then(lod::LodOpener::bound) {
            ui.add(egui::Label::new(egui::RichText::new(bound).weak()).wrap());
        }

        self.free_sites_panel(ui);
        let width = width.min(ui.available_width());
        let (full, response) = ui.allocate_exact_size(
            egui::vec2(width, ui.available_height()),
            egui::Sense::click_and_drag(),
        );
        self.no_room = full.width() < 40.0 || full.height() < 40.0;
        if self.no_room {
            response.on_hover_text("no room for the map: enlarge the pane");
            return;
        }
        let binned = self.binned.clone();
        // The shown binning is the worker's latest; the settings may already ask for another.
        let mut shown_settings = self.settings.clone();
        shown_settings.bins = Some(binned.by);
        shown_settings.time = self.shown.axis;
        let layout = binned_pane_layout(
            full.size(),
            &binned,
            shown_settings.layout,
            memscape_views::alloc_map::layout::Panels::of(&shown_settings),
        );
        let origin = full.min.to_vec2();
        let maps: Vec<egui::Rect> = layout
            .cells
            .iter()
            .map(|c| c.map.translate(origin))
            .collect();
        let t_extent = scene.frame_time_end(self.shown.axis);
        let mut cam = self.camera.unwrap_or_else(|| Camera::fit(t_extent));
        let mut target = self.target.unwrap_or(cam);
        let pointer = response.hover_pos();
        let hovered_cell = pointer.and_then(|p| maps.iter().position(|m| m.contains(p)));
        if let Some(k) = hovered_cell {
            self.focus_bin = k;
        }
        let areas = Areas {
            maps: &maps,
            context: layout.context.map(|r| r.translate(origin)),
            hovered_cell,
            t_extent,
        };
        self.interact(ui, &response, &areas, &mut cam, &mut target);
        if let Some(bar) = layout.stacked {
            let labels = layout.stacked_labels.unwrap_or(bar);
            let track = layout.stacked_track.unwrap_or(bar);
            let over = bar.union(labels).union(track).translate(origin);
            self.scroll_stacked(
                ui,
                &response,
                over,
                bar.height(),
                layout.stacked_full_height,
            );
        }
        self.click(ui, &response, &t.trace, &binned, &areas, &cam);
        // Animate towards the target.
        if cam != target {
            let dt = f64::from(ui.input(|i| i.stable_dt).min(0.1));
            let k = 1.0 - (-dt / 0.07).exp();
            cam.approach(&target, k.max(0.05));
            ui.ctx().request_repaint();
        }
        self.camera = Some(cam);
        self.target = Some(target);

        // The picture, and a pick of the block under the pointer.
        let axis = self.shown.axis;
        let free_at = links
            .time_events
            .unwrap_or_else(|| events_at(&t.trace, axis, (cam.t0 + cam.t_span).max(0.0) as u64));
        let source = self.map_source();
        tracing::debug!(
            target: "memscape::map_path",
            pass = ui.ctx().cumulative_pass_nr(),
            source = source.name(),
            "allocation map layers"
        );
        let data = self.map_data(ui.ctx(), source.index());
        // Big layers are summed on the CPU only on a software rasterizer
        // (`prefers_cpu_sums`); elsewhere the worker would idle (with
        // `MEMSCAPE_ALLOC_MAP_PATH=cpu` on a GPU the bridge sums on the spot instead).
        if self.sums.is_none() && crate::panes::software_rasterizer() {
            self.sums = memscape_views::sums_worker::SumsWorker::new(
                Some(ui.ctx().clone()),
                std::thread::available_parallelism().map_or(1, |n| n.get()),
            );
        }

        // Drawn from the query engine's index: said in the picture's provenance.
        let engine = t
            .lod_query
            .as_ref()
            .filter(|_| data.lod.is_some())
            .map(|q| q.engine());
        let mut picture = picture(
            &shown_settings,
            &MapInputs {
                trace: &t.trace,
                scene,
                binned: &binned,
                data,
                bars: self.bar.clone(),
                bar_integral: self.bar_integral.clone(),
                curves: self.curves.clone(),
                camera: cam,
                color_by: self.shown.color_by,
                time_cursor: links
                    .time_events
                    .map(|e| axis_time_of_events(&t.trace, axis, e)),
                free_at_events: free_at,
                focus_bin: self.focus_bin,
                pinned: self.pinned.and_then(|i| binned.position_of(i)),
                age_at: links.time_events.unwrap_or(scene.events_extent),
                classes: memscape_views::alloc_map::colors::Classes::identity(),
            },
            full.size(),
        );
        if let Some(engine) = engine {
            // Every corner of the map holds data: the line is the pane's status (`lod.rs`).
            memscape_views::picture::engine_provenance(&mut picture, &engine);
        }
        if matches!(source, lod::MapSource::AwaitIndex) {
            // The index opens within a second or so (the status line's paced repaints see
            // it); its frames replace these layers.
            picture.layers.retain(|l| !matches!(l, Layer::Map(_)));
        }
        self.switch
            .ask(&picture, ui.ctx().pixels_per_point(), ui.ctx());
        let asking = pointer.zip(hovered_cell).map(|(pos, k)| PickTag {
            bin: k,
            pos,
            camera: cam,
            data_gen: self.data_gen,
        });
        let answered = asking.is_some_and(|p| self.answer.is_some_and(|a| a.tag == p));
        let pick = asking.filter(|_| !answered).map(|tag| {
            let id = self.next_pick;
            self.next_pick += 1;
            self.picks.insert(id, tag);
            // Only recent asks matter.
            self.picks.retain(|&k, _| k + 64 > id);
            PickRequest {
                slot: tag.bin as u32,
                point: tag.pos - full.min.to_vec2(),
                tag: id,
            }
        });
        if pick.is_some() {
            ui.ctx().request_repaint();
        }
        if cx.render_state.is_none() {
            ui.painter().text(
                full.center(),
                egui::Align2::CENTER_CENTER,
                "no wgpu renderer",
                egui::FontId::proportional(16.0),
                egui::Color32::LIGHT_RED,
            );
        }
        let has_maps = picture.layers.iter().any(|l| matches!(l, Layer::Map(_)));
        // A live pane's map layers are its sums worker's (`cpu_sums_always`): their landing
        // wakes the frame that finds the pane ready, and a wake here was one more lavapipe
        // frame of the window per snapshot, before any sums were there.
        let sums_wake = self.live && self.sums.is_some();
        if has_maps && !self.drawn.load(Ordering::Acquire) && !sums_wake {
            // The frame after the first drawn one finds the pane ready.
            memscape_views::wake(ui.ctx());
        }
        paint_picture(
            ui,
            &self.key,
            full,
            Arc::new(picture),
            PaintOptions {
                pick,
                answers: Some(self.answers.clone()),
                drawn: has_maps.then(|| self.drawn.clone()),
                sums: self.sums.clone(),
                cpu_sums_always: self.live,
            },
        );
        let windows = binned.cell_windows(&cam, axis, t_extent, shown_settings.layout);
        self.hover(&response, &t.trace, &binned, &maps, asking, &windows);
    }
}

impl AllocMapPane {
    /// Hover: the GPU pick's answer for this pointer position.
    fn hover(
        &self,
        response: &egui::Response,
        trace: &memscape_trace::Trace,
        binned: &BinnedScene,
        maps: &[egui::Rect],
        asking: Option<PickTag>,
        windows: &[Camera],
    ) {
        let (Some(p), Some(a)) = (asking, self.answer) else {
            return;
        };
        if a.tag.bin != p.bin || a.tag.pos.distance(p.pos) >= 6.0 || a.tag.data_gen != self.data_gen
        {
            return;
        }
        let bin_label = binned.bins.get(p.bin).map(|b| b.label.clone());
        match a.position.and_then(|q| binned.block_at(q)) {
            Some(i) => {
                response.clone().on_hover_ui_at_pointer(|ui| {
                    if binned.by != BinBy::None
                        && let Some(l) = &bin_label
                    {
                        ui.weak(format!("bin {l}"));
                    }
                    details::block_details(ui, trace, i);
                });
            }
            None => {
                let (Some(&m), Some(cam)) = (maps.get(p.bin), windows.get(p.bin)) else {
                    return;
                };
                let u = f64::from((p.pos.x - m.left()) / m.width());
                let v = f64::from((m.bottom() - p.pos.y) / m.height());
                let (time, y) = cam.at(u, v);
                let extent = binned.bins.get(p.bin).map_or(1, |b| b.collapsed_extent);
                let when = match self.shown.axis {
                    TimeAxis::Events => format!("event {time:.0}"),
                    TimeAxis::Wall => format!("{:.3} ms", time / 1e6),
                };
                let text = match binned.uncollapse(p.bin, (y.max(0.0) * extent as f64) as u64) {
                    Some(address) => format!("free · {address:#x} · {when}"),
                    None => format!("collapsed gap · {when}"),
                };
                response.clone().on_hover_text_at_pointer(text);
            }
        }
    }
}
