//! The cycle pane: spiral, circular, barcode and MDS-projection views of a reference trace,
//! with a morph between two parameterizations driven by a scrubber or played forward and back,
//! click and lasso selection with the source pane. The analysis runs on a named worker thread
//! (results cached per parameter set); the pictures are `memscape_views::cycles::compose`'s, the
//! morph's records uploaded once per colouring and only t sent per frame.

mod controls;
mod source_pane;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use egui::{Align2, Color32, Pos2, Rect, Sense};
use memscape_render::shapes::Shape;
use memscape_views::cycles::compose::{
    PolarModel, barcode_picture, chart_area, polar_picture, projection_picture,
};
use memscape_views::cycles::contours;
use memscape_views::cycles::draw::{self, BACKGROUND};
use memscape_views::cycles::settings::{CycleAnalysisSettings, CycleSettings, Mode};
use memscape_views::cycles::worker::{Analysed, Failure, Job};
use memscape_views::gpu::PaneKey;
use memscape_views::tour::{Step, tour_file_of};
use memscape_views::{Dataset, ViewSettings};

use crate::panes::{View, ViewContext};
use controls::AnalysisText;

/// What density contours were made for: model version, eased t (its bits), size in pixels.
type ContoursFor = (u64, u32, [u32; 2]);

/// One full morph takes this long when playing.
const MORPH_DURATION: Duration = Duration::from_millis(2500);

/// Parameterizations the GUI's analysis computes.
const TOP: usize = 5;

/// A change of the analysis settings starts the analysis after this long without another.
const SETTLE: Duration = Duration::from_millis(500);

/// What the morph instances were made for: the analysis, mode, parameterizations, colouring
/// and selection.
type ModelKey = (
    usize,
    Mode,
    usize,
    Option<usize>,
    memscape_views::cycles::draw::ColorBy,
    Vec<String>,
    u64,
);

pub struct CyclesPane {
    dataset: Arc<Dataset>,
    key: PaneKey,
    settings: CycleSettings,
    text: AnalysisText,
    /// The source pane's file and its lines (read once per file, not every frame).
    source_text: Option<(String, Option<Vec<String>>)>,
    /// The analysis running and its cache key.
    running: Option<(Job, String)>,
    /// The analysis settings last started, and when the settings first differed from them.
    requested: (CycleAnalysisSettings, Option<Instant>),
    /// The last analysis was cancelled (the pane says so until the next starts).
    cancelled: bool,
    /// "Colour by line, functions collapsed" is chosen (with none checked it is colour by line).
    collapse_mode: bool,
    /// The functions of the shown analysis with their record counts (the checklist's), and
    /// the analysis they were counted for.
    functions: Option<(usize, Vec<(String, usize)>)>,
    /// The checklist's search text.
    function_search: String,
    cache: HashMap<String, Arc<Analysed>>,
    result: Option<Arc<Analysed>>,
    error: Option<String>,
    /// The direction the morph plays in (0: stopped).
    playing: f32,
    last_frame: Instant,
    /// The spiral's or circle's records and what they were made for.
    model: Option<(ModelKey, PolarModel)>,
    model_version: u64,
    /// The selection: an anchor record (the clicked one, or the first lassoed) and a mask of
    /// the selected records (the clicked record's source line, or the lassoed records).
    selection: Option<(usize, Vec<bool>)>,
    /// Bumped whenever `selection` changes.
    selection_version: u64,
    /// The lasso being drawn (pane points).
    lasso: Vec<Pos2>,
    /// The density contours and what they were made for.
    contours: Option<(ContoursFor, Vec<Shape>)>,
    /// Scroll the source pane to the selected line on the next frame (once per click).
    scroll_source: bool,
    drawn: bool,
}

impl CyclesPane {
    pub fn new(dataset: Arc<Dataset>, ctx: &egui::Context) -> Self {
        let mut settings = CycleSettings {
            morph_to: Some(1),
            ..CycleSettings::default()
        };
        // The embedded demo trace is analysed in the function whose loops are worth looking at
        // (and symbolized against the binary it traced: `model::analyze`); other traces in
        // their first records (whole-process traces are slow).
        match memscape_views::demo::of_dataset_name(&dataset.name) {
            Some(d) if !d.cycle_functions.is_empty() => {
                settings.analysis.functions =
                    d.cycle_functions.iter().map(|f| (*f).to_owned()).collect();
            }
            _ => settings.analysis.range = Some("0..1200".to_owned()),
        }
        let mut pane = Self {
            dataset,
            key: PaneKey::new(),
            text: AnalysisText::of(&settings.analysis),
            settings,
            source_text: None,
            running: None,
            requested: (CycleAnalysisSettings::default(), None),
            cancelled: false,
            collapse_mode: false,
            functions: None,
            function_search: String::new(),
            cache: HashMap::new(),
            result: None,
            error: None,
            playing: 0.0,
            last_frame: Instant::now(),
            model: None,
            model_version: 0,
            selection: None,
            selection_version: 0,
            lasso: Vec::new(),
            contours: None,
            scroll_source: false,
            drawn: false,
        };
        pane.start(ctx);
        pane
    }

    /// Starts the analysis of the current settings (the text fields applied), cancelling the
    /// one running; a cached result is shown at once.
    fn start(&mut self, ctx: &egui::Context) {
        // A job dropped here is cancelled (its thread stops within about 100 ms).
        self.running = None;
        self.cancelled = false;
        let applied = self.text.apply(&mut self.settings.analysis);
        // What was asked for, even if it does not parse: not asked again until it changes.
        self.requested = (self.settings.analysis.clone(), None);
        if let Err(e) = applied {
            self.error = Some(e);
            return;
        }
        let options = match self.settings.analysis.options(TOP) {
            Ok(o) => o,
            Err(e) => {
                self.error = Some(format!("{:#}", anyhow::Error::from(e)));
                return;
            }
        };
        let max_records = self.settings.max_records;
        let cache_key = format!("{options:?} {max_records:?}");
        if let Some(hit) = self.cache.get(&cache_key) {
            self.result = Some(hit.clone());
            self.error = None;
            self.model = None;
            return;
        }
        let repaint = ctx.clone();
        match Job::spawn(self.dataset.clone(), options, max_records, move || {
            repaint.request_repaint()
        }) {
            Ok(job) => self.running = Some((job, cache_key)),
            Err(e) => self.error = Some(format!("could not start the analysis thread: {e}")),
        }
    }

    /// Stops the running analysis; the pane keeps what it showed, and "Analyse" runs it again.
    fn cancel(&mut self) {
        if let Some((job, _)) = self.running.take() {
            job.cancel();
            self.cancelled = true;
        }
    }

    /// Starts the analysis again when its typed settings (window, sampling, level of detail)
    /// changed and then stayed unchanged for a moment (a drag does not start one per step).
    fn restart_on_change(&mut self, ctx: &egui::Context) {
        let (applied, changed_at) = &mut self.requested;
        if self.settings.analysis == *applied {
            *changed_at = None;
            return;
        }
        let since = *changed_at.get_or_insert_with(Instant::now);
        if since.elapsed() >= SETTLE {
            self.start(ctx);
        } else {
            ctx.request_repaint_after(SETTLE);
        }
    }

    fn poll(&mut self) {
        let Some((job, key)) = &self.running else {
            return;
        };
        match job.poll() {
            Some(Ok(result)) => {
                self.cache.insert(key.clone(), result.clone());
                let count = result.analysis.report.parameterizations.len();
                let s = &mut self.settings;
                s.param = s.param.min(count.saturating_sub(1));
                s.morph_to = Some(if count > 1 {
                    s.morph_to.unwrap_or(1).min(count - 1)
                } else {
                    0
                });
                self.result = Some(result);
                self.error = None;
                self.running = None;
                self.model = None;
            }
            Some(Err(Failure::Cancelled)) => {
                self.cancelled = true;
                self.running = None;
            }
            Some(Err(Failure::Error(e))) => {
                self.error = Some(e);
                self.running = None;
            }
            None => {}
        }
    }

    /// The morph instances of the current settings and selection (made again only when those
    /// change).
    fn polar_model(&mut self, result: &Arc<Analysed>) {
        let key = (
            Arc::as_ptr(result) as usize,
            self.settings.mode,
            self.settings.param,
            self.settings.morph_to,
            self.settings.cycle_color,
            self.settings.collapse_function.clone(),
            self.selection_version,
        );
        if self.model.as_ref().is_none_or(|(k, _)| *k != key) {
            let mask = self.selection.as_ref().map(|(_, m)| m.as_slice());
            let model = PolarModel::build(&result.analysis, &self.settings, mask);
            self.model = Some((key, model));
            self.model_version = self.model_version.wrapping_add(1);
        }
    }

    fn paint(
        &mut self,
        ui: &egui::Ui,
        cx: &ViewContext<'_>,
        rect: Rect,
        picture: memscape_views::Picture,
    ) {
        memscape_views::gpu::paint(ui, &self.key, rect, picture);
        self.drawn |= cx.render_state.is_some();
    }

    /// The spiral or circular view: picture, click and lasso selection, hover.
    fn polar_ui(
        &mut self,
        ui: &egui::Ui,
        cx: &ViewContext<'_>,
        rect: Rect,
        response: &egui::Response,
        result: &Arc<Analysed>,
    ) {
        let analysis = &result.analysis;
        self.polar_model(result);
        let Some((_, model)) = &self.model else {
            return;
        };
        let size = rect.size();
        let view = model.view(&self.settings, size);
        let contours = if self.settings.contours {
            let key = (
                self.model_version,
                view.t.to_bits(),
                [size.x.to_bits(), size.y.to_bits()],
            );
            if self.contours.as_ref().is_none_or(|(k, _)| *k != key) {
                self.contours = Some((key, model.contours(&view, size)));
            }
            self.contours
                .as_ref()
                .map_or(&[][..], |(_, c)| c.as_slice())
        } else {
            &[]
        };
        let picture = polar_picture(analysis, model, &self.settings, contours, size);
        let positions = model.positions(&view);
        self.paint(ui, cx, rect, picture);
        let nearest = |p: Pos2| {
            positions
                .iter()
                .enumerate()
                .map(|(i, q)| (i, (q[0] - p.x).powi(2) + (q[1] - p.y).powi(2)))
                .min_by(|a, b| a.1.total_cmp(&b.1))
        };
        let local = |p: Pos2| p - rect.min.to_vec2();
        // Click: select the records on the clicked record's source line (or clear).
        if response.clicked()
            && let Some(pos) = response.interact_pointer_pos()
        {
            self.selection = match nearest(local(pos)) {
                Some((i, d2)) if d2 < 64.0 => Some((i, draw::same_line_mask(analysis, i))),
                _ => None,
            };
            self.selection_version += 1;
            self.scroll_source = self.selection.is_some();
        }
        // Drag: a lasso; the records inside it (at the current t) become the selection.
        if response.drag_started() {
            self.lasso.clear();
        }
        if response.dragged()
            && let Some(pos) = response.interact_pointer_pos()
        {
            let p = local(pos);
            if self.lasso.last().is_none_or(|l| l.distance(p) > 3.0) {
                self.lasso.push(p);
            }
        }
        if response.drag_stopped() {
            let poly: Vec<[f32; 2]> = self.lasso.iter().map(|p| [p.x, p.y]).collect();
            self.lasso.clear();
            if poly.len() >= 3 {
                let mask: Vec<bool> = positions
                    .iter()
                    .map(|&q| contours::inside(&poly, q))
                    .collect();
                self.selection = mask.iter().position(|&m| m).map(|first| (first, mask));
                self.selection_version += 1;
                self.scroll_source = self.selection.is_some();
            }
        }
        if self.lasso.len() >= 2 {
            let mut pts: Vec<Pos2> = self.lasso.iter().map(|p| *p + rect.min.to_vec2()).collect();
            pts.push(pts[0]);
            ui.painter_at(rect).add(egui::Shape::line(
                pts,
                egui::Stroke::new(1.5, Color32::from_rgb(250, 220, 120)),
            ));
        }
        // Hover: the nearest record at the current t.
        if let Some(pos) = response.hover_pos()
            && let Some((i, d2)) = nearest(local(pos))
            && d2 < 64.0
            && let (Some(r), Some(pt)) = (
                analysis.report.records.get(i),
                self.model.as_ref().and_then(|(_, m)| m.data.points.get(i)),
            )
        {
            let theta = memscape_render::polar_morph::cpu_reference::angle_at(
                pt.theta_a, pt.theta_b, view.t,
            );
            let source = match (&r.function, &r.file, r.line) {
                (Some(f), Some(file), Some(line)) => format!("{f} {file}:{line}"),
                (Some(f), _, _) => f.clone(),
                _ => "??".into(),
            };
            response.clone().on_hover_ui_at_pointer(|ui| {
                ui.label(format!(
                    "record {} (trace index {})\naddress {:#x} · {:?}\nip {:#x} · {source}\nθ = {:.3} turn",
                    i,
                    r.index,
                    r.address,
                    r.kind,
                    r.ip,
                    theta.rem_euclid(std::f32::consts::TAU) / std::f32::consts::TAU
                ));
            });
        }
    }
}

impl View for CyclesPane {
    fn title(&self) -> String {
        format!("Cycles — {}", self.dataset.name)
    }

    fn picture(&self) -> Option<std::sync::Arc<memscape_views::Picture>> {
        self.key.last_picture()
    }

    fn tour_step(&self) -> Option<Step> {
        let result = self.result.as_ref()?;
        // A click's selection (a whole source line) has a headless form; a lasso does not.
        let select_record = self.selection.as_ref().and_then(|(record, mask)| {
            (*mask == draw::same_line_mask(&result.analysis, *record)).then_some(*record)
        });
        Some(Step::new(
            tour_file_of(&self.dataset),
            ViewSettings::Cycles(CycleSettings {
                select_record,
                ..self.settings.clone()
            }),
        ))
    }

    fn is_ready(&self) -> bool {
        self.drawn || self.error.is_some()
    }

    fn ui(&mut self, ui: &mut egui::Ui, cx: &ViewContext<'_>) {
        self.poll();
        self.settings_ui(ui);
        let ctx = ui.ctx().clone();
        self.restart_on_change(&ctx);
        if let Some(e) = &self.error {
            ui.colored_label(Color32::LIGHT_RED, e);
        }
        let Some(result) = self.result.clone() else {
            return;
        };
        let analysis = &result.analysis;
        let count = analysis.report.parameterizations.len();
        let id = Arc::as_ptr(&result) as usize;
        if self.functions.as_ref().is_none_or(|(k, _)| *k != id) {
            self.functions = Some((id, analysis.tables.functions_by_count()));
        }
        let functions = self.functions.take();
        self.view_ui(ui, count, functions.as_ref().map_or(&[][..], |(_, f)| f));
        self.functions = functions;
        // Advance the morph.
        let dt = self.last_frame.elapsed().as_secs_f32();
        self.last_frame = Instant::now();
        if self.playing != 0.0 {
            let t = &mut self.settings.t;
            *t = (*t + self.playing * dt / MORPH_DURATION.as_secs_f32()).clamp(0.0, 1.0);
            if *t <= 0.0 || *t >= 1.0 {
                self.playing = 0.0;
            }
            ui.ctx().request_repaint();
        }
        if let Some((record, mask)) = &self.selection {
            let record = *record;
            let mut clear = false;
            let scroll = std::mem::take(&mut self.scroll_source);
            let source_text = &mut self.source_text;
            egui::Panel::right(("cycle-source", self.key.get()))
                .default_size(360.0)
                .show(ui, |ui| {
                    clear =
                        source_pane::source_pane(ui, analysis, record, mask, scroll, source_text);
                });
            if clear {
                self.selection = None;
                self.selection_version += 1;
            }
        }
        let (rect, response) = ui.allocate_exact_size(ui.available_size(), Sense::click_and_drag());
        if count == 0 {
            ui.painter().rect_filled(
                rect,
                0.0,
                Color32::from_rgb(BACKGROUND[0], BACKGROUND[1], BACKGROUND[2]),
            );
            ui.painter().text(
                rect.center(),
                Align2::CENTER_CENTER,
                "no H1 class: no cycle to parameterize in this range",
                egui::FontId::proportional(14.0),
                Color32::LIGHT_GRAY,
            );
            return;
        }
        let size = rect.size();
        match self.settings.mode {
            Mode::Barcode => {
                self.paint(ui, cx, rect, barcode_picture(analysis, size));
                if let Some(pos) = response.hover_pos() {
                    let rows = draw::barcode_rows(analysis, chart_area(size));
                    let y = pos.y - rect.min.y;
                    let rank = ((y - rows.top) / rows.row).floor();
                    if rank >= 0.0
                        && let Some(&(birth, death)) = rows.bars.get(rank as usize)
                        && (rank as usize) < rows.shown
                    {
                        let rank = rank as usize;
                        let parameterized = if rank < count {
                            format!("\nparameterization θ{rank}")
                        } else {
                            String::new()
                        };
                        response.on_hover_text_at_pointer(format!(
                            "rank {rank}\nbirth {birth:.2}\ndeath {}\npersistence {}{parameterized}",
                            death.map_or_else(|| "never (alive at the threshold)".to_owned(), |d| format!("{d:.2}")),
                            death.map_or_else(|| "infinite".to_owned(), |d| format!("{:.2}", d - birth)),
                        ));
                    }
                }
            }
            Mode::Projection => {
                let picture = match &result.projection {
                    Some(embedding) => projection_picture(
                        analysis,
                        embedding,
                        &self.settings,
                        self.selection.as_ref().map(|(_, m)| m.as_slice()),
                        size,
                    ),
                    None => memscape_views::Picture::new(size, BACKGROUND),
                };
                self.paint(ui, cx, rect, picture);
            }
            Mode::Spiral | Mode::Circular => self.polar_ui(ui, cx, rect, &response, &result),
        }
    }
}
