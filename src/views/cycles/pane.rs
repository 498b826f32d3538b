//! The cycle pane: spiral, circular, barcode and MDS-projection views of a reference trace,
//! with a morph between two parameterizations driven by a scrubber or played forward and back.
//! The analysis runs on a named worker thread (results cached per parameter set); the morph
//! uploads records once and sends only t per frame.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, TryRecvError};
use egui::{Align2, Color32, Pos2, Rect, Sense};
use memscape_cycles::CyclesOptions;
use memscape_render::polar_morph::{
    PolarArcGpu, PolarMorphData, PolarMorphPipelines, PolarMorphView, PolarPointGpu, cpu_reference,
};

use super::contours;
use super::draw::{self, BACKGROUND, ColorBy, Layout};
use super::model::{self, CycleAnalysis};
use crate::data::{Dataset, DatasetContent};
use crate::views::labels;
use crate::views::shapes_paint::{self, ShapesCallback};
use crate::views::{View, ViewContext};

/// One full morph takes this long when playing.
const MORPH_DURATION: Duration = Duration::from_millis(2500);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Spiral,
    Circular,
    Barcode,
    Projection,
}

struct Result_ {
    analysis: CycleAnalysis,
    projection: Option<Vec<[f64; 2]>>,
}

type Outcome = Result<Arc<Result_>, String>;

/// Text fields of the analysis settings, parsed when the user presses "Analyse".
#[derive(Debug, Clone, PartialEq)]
struct SettingsText {
    range: String,
    max_records: Option<usize>,
    window: usize,
    sample: usize,
    threshold: String,
    functions: String,
    binary: String,
}

impl Default for SettingsText {
    fn default() -> Self {
        Self {
            range: "0..1200".into(),
            max_records: None,
            window: 10,
            sample: 1,
            threshold: String::new(),
            functions: String::new(),
            binary: String::new(),
        }
    }
}

impl SettingsText {
    fn options(&self) -> Result<CyclesOptions, String> {
        use memscape_cycles::records::parse_record_range;
        let range = if self.range.trim().is_empty() {
            None
        } else {
            Some(parse_record_range(self.range.trim()).map_err(|e| e.to_string())?)
        };
        let threshold = if self.threshold.trim().is_empty() {
            None
        } else {
            Some(
                self.threshold
                    .trim()
                    .parse::<f32>()
                    .map_err(|_| format!("threshold: not a number: {:?}", self.threshold))?,
            )
        };
        let functions: Vec<String> = self
            .functions
            .split(',')
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect();
        let binary = (!self.binary.trim().is_empty()).then(|| self.binary.trim().into());
        Ok(CyclesOptions {
            binary,
            filter: memscape_cycles::RecordFilter {
                functions,
                record_range: range,
                sample: self.sample.max(1),
                ..memscape_cycles::RecordFilter::default()
            },
            window: self.window.max(1),
            threshold,
            top: 5,
            ..CyclesOptions::default()
        })
    }
}

/// Per device: the morph pipelines and each pane's uploaded records.
pub struct PolarMorphGpu {
    pipelines: PolarMorphPipelines,
    target_format: wgpu::TextureFormat,
    panes: HashMap<u64, (PolarMorphData, u64)>,
}

impl PolarMorphGpu {
    pub fn new(
        device: &wgpu::Device,
        target_format: wgpu::TextureFormat,
    ) -> Result<Self, memscape_render::RenderError> {
        let mut pipelines = PolarMorphPipelines::new(device)?;
        pipelines.ensure_format(device, target_format);
        Ok(Self {
            pipelines,
            target_format,
            panes: HashMap::new(),
        })
    }

    /// Frees the records uploaded for closed panes.
    pub fn release(&mut self, released: &[u64]) {
        crate::views::forget_released(&mut self.panes, released);
    }
}

struct MorphCallback {
    key: u64,
    version: u64,
    points: Arc<Vec<PolarPointGpu>>,
    arcs: Arc<Vec<PolarArcGpu>>,
    view: PolarMorphView,
    rect: Rect,
}

impl egui_wgpu::CallbackTrait for MorphCallback {
    fn prepare(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        screen: &egui_wgpu::ScreenDescriptor,
        _encoder: &mut wgpu::CommandEncoder,
        resources: &mut egui_wgpu::CallbackResources,
    ) -> Vec<wgpu::CommandBuffer> {
        let Some(gpu) = resources.get_mut::<PolarMorphGpu>() else {
            return Vec::new();
        };
        let PolarMorphGpu {
            pipelines,
            target_format,
            panes,
        } = gpu;
        let stale = panes.get(&self.key).is_none_or(|(_, v)| *v != self.version);
        if stale {
            match PolarMorphData::new(device, pipelines, &self.points, &self.arcs) {
                Ok(data) => {
                    panes.insert(self.key, (data, self.version));
                }
                Err(e) => {
                    tracing::error!("cycle view upload: {e}");
                    return Vec::new();
                }
            }
        }
        let (size, shift, ppp) = crate::views::shapes_paint::pane_viewport(&self.rect, screen);
        let mut view = self.view;
        view.center_px = [
            view.center_px[0] * ppp + shift[0],
            view.center_px[1] * ppp + shift[1],
        ];
        view.radius_px *= ppp;
        view.point_radius_px *= ppp;
        view.arc_width_px *= ppp;
        if let Some((data, _)) = panes.get_mut(&self.key) {
            data.set_view(queue, &view, size, *target_format);
        }
        Vec::new()
    }

    fn paint(
        &self,
        _info: egui::PaintCallbackInfo,
        pass: &mut wgpu::RenderPass<'static>,
        resources: &egui_wgpu::CallbackResources,
    ) {
        if let Some(gpu) = resources.get::<PolarMorphGpu>()
            && let Some((data, _)) = gpu.panes.get(&self.key)
        {
            data.paint(&gpu.pipelines, pass);
        }
    }
}

pub struct CyclesPane {
    dataset: Arc<Dataset>,
    key: crate::views::PaneKey,
    settings: SettingsText,
    /// The source pane's file and its lines (read once per file, not every frame).
    source_text: Option<(String, Option<Vec<String>>)>,
    running: Option<(Receiver<Outcome>, Instant, String)>,
    cache: HashMap<String, Arc<Result_>>,
    result: Option<Arc<Result_>>,
    error: Option<String>,
    mode: Mode,
    color_by: ColorBy,
    from: usize,
    to: usize,
    /// Morph position before easing, and the direction it plays in (0: stopped).
    t: f32,
    playing: f32,
    last_frame: Instant,
    /// Inputs of the uploaded instances, to notice when they must be rebuilt.
    built_for: Option<(usize, Mode, usize, usize, ColorBy, u64)>,
    /// The selection: an anchor record (the clicked one, or the first lassoed) and a mask of
    /// the selected records (the clicked record's source line, or the lassoed records).
    selection: Option<(usize, Vec<bool>)>,
    /// Bumped whenever `selection` changes.
    selection_version: u64,
    /// The lasso being drawn (pane points).
    lasso: Vec<Pos2>,
    /// Draw the isocontour summary of the point density over the spiral/circular view.
    contours: bool,
    contour_version: u64,
    contour_shapes: Arc<Vec<memscape_render::shapes::ShapeGpu>>,
    /// (instances version, eased t bits, pane size bits) of `contour_shapes`.
    contours_for: Option<(u64, u32, [u32; 2])>,
    /// Scroll the source pane to the selected line on the next frame (once per click).
    scroll_source: bool,
    version: u64,
    points: Arc<Vec<PolarPointGpu>>,
    arcs: Arc<Vec<PolarArcGpu>>,
    legend: Vec<(String, [u8; 4])>,
    outer: f32,
    shapes_version: u64,
    chart_shapes: Arc<Vec<memscape_render::shapes::ShapeGpu>>,
    drawn: bool,
}

impl CyclesPane {
    pub fn new(dataset: Arc<Dataset>, ctx: &egui::Context) -> Self {
        // The embedded demo trace is analysed in the function whose loops are worth looking at
        // (and symbolized against the binary it traced: `model::analyze`).
        let functions = crate::demo::of_dataset_name(&dataset.name)
            .map(|d| d.cycle_functions.join(", "))
            .filter(|f| !f.is_empty());
        let mut pane = Self {
            dataset,
            key: crate::views::PaneKey::new(),
            settings: match functions {
                Some(functions) => SettingsText {
                    functions,
                    range: String::new(),
                    ..SettingsText::default()
                },
                None => SettingsText::default(),
            },
            source_text: None,
            running: None,
            cache: HashMap::new(),
            result: None,
            error: None,
            mode: Mode::Spiral,
            color_by: ColorBy::Line,
            from: 0,
            to: 1,
            t: 0.0,
            playing: 0.0,
            last_frame: Instant::now(),
            built_for: None,
            selection: None,
            selection_version: 0,
            lasso: Vec::new(),
            contours: false,
            contour_version: 0,
            contour_shapes: Arc::new(Vec::new()),
            contours_for: None,
            scroll_source: false,
            version: 0,
            points: Arc::new(Vec::new()),
            arcs: Arc::new(Vec::new()),
            legend: Vec::new(),
            outer: 1.0,
            shapes_version: 0,
            chart_shapes: Arc::new(Vec::new()),
            drawn: false,
        };
        pane.start(ctx);
        pane
    }

    fn start(&mut self, ctx: &egui::Context) {
        let options = match self.settings.options() {
            Ok(o) => o,
            Err(e) => {
                self.error = Some(e);
                return;
            }
        };
        let max_records = self.settings.max_records;
        let cache_key = format!("{options:?} {max_records:?}");
        if let Some(hit) = self.cache.get(&cache_key) {
            self.result = Some(hit.clone());
            self.error = None;
            self.built_for = None;
            return;
        }
        let (tx, rx) = crossbeam_channel::bounded(1);
        let dataset = self.dataset.clone();
        let ctx = ctx.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("cycles {}", dataset.name))
            .spawn(move || {
                let outcome = (|| {
                    let DatasetContent::RefTrace(trace) = &dataset.content else {
                        return Err("not a reference trace".to_owned());
                    };
                    let analysis = model::analyze(&dataset.name, trace, &options, max_records)
                        .map_err(|e| format!("{e:#}"))?;
                    // The MDS baseline is cheap next to the persistence; compute it now so
                    // that switching views is instant.
                    let projection =
                        memscape_cycles::window_projection(&analysis.report.records, &options).ok();
                    Ok(Arc::new(Result_ {
                        analysis,
                        projection,
                    }))
                })();
                let _ = tx.send(outcome);
                ctx.request_repaint();
            });
        match spawned {
            Ok(_) => self.running = Some((rx, Instant::now(), cache_key)),
            Err(e) => self.error = Some(format!("could not start the analysis thread: {e}")),
        }
    }

    fn poll(&mut self) {
        let Some((rx, _, key)) = &self.running else {
            return;
        };
        match rx.try_recv() {
            Ok(Ok(result)) => {
                self.cache.insert(key.clone(), result.clone());
                let count = result.analysis.report.parameterizations.len();
                self.from = self.from.min(count.saturating_sub(1));
                self.to = if count > 1 { self.to.min(count - 1) } else { 0 };
                self.result = Some(result);
                self.error = None;
                self.running = None;
                self.built_for = None;
            }
            Ok(Err(e)) => {
                self.error = Some(e);
                self.running = None;
            }
            Err(TryRecvError::Empty) => {}
            Err(TryRecvError::Disconnected) => {
                self.error = Some("the analysis thread stopped".into());
                self.running = None;
            }
        }
    }

    fn settings_ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal_wrapped(|ui| {
            ui.label("records");
            ui.add(egui::TextEdit::singleline(&mut self.settings.range).desired_width(90.0))
                .on_hover_text("A..B: record indices (empty: all; whole-process traces are slow)");
            ui.add(
                egui::DragValue::new(&mut self.settings.window)
                    .range(1..=200)
                    .prefix("window "),
            );
            ui.add(
                egui::DragValue::new(&mut self.settings.sample)
                    .range(1..=1000)
                    .prefix("every "),
            );
            ui.label("ε max");
            ui.add(egui::TextEdit::singleline(&mut self.settings.threshold).desired_width(50.0))
                .on_hover_text("Rips threshold (empty: the enclosing radius)");
            ui.label("binary");
            ui.add(egui::TextEdit::singleline(&mut self.settings.binary).desired_width(140.0))
                .on_hover_text("the traced executable: source lines and the function filter");
            ui.label("functions");
            ui.add(egui::TextEdit::singleline(&mut self.settings.functions).desired_width(120.0))
                .on_hover_text("comma-separated; needs the binary");
            let busy = self.running.is_some();
            if ui
                .add_enabled(!busy, egui::Button::new("Analyse"))
                .clicked()
            {
                let ctx = ui.ctx().clone();
                self.start(&ctx);
            }
            if let Some((_, started, _)) = &self.running {
                ui.spinner();
                ui.label(format!(
                    "analysing… {:.0} s",
                    started.elapsed().as_secs_f32()
                ));
                ui.ctx().request_repaint_after(Duration::from_millis(250));
            }
        });
    }

    fn view_ui(&mut self, ui: &mut egui::Ui, count: usize) {
        ui.horizontal_wrapped(|ui| {
            ui.selectable_value(&mut self.mode, Mode::Spiral, "Spiral");
            ui.selectable_value(&mut self.mode, Mode::Circular, "Circular");
            ui.selectable_value(&mut self.mode, Mode::Barcode, "Barcode");
            ui.selectable_value(&mut self.mode, Mode::Projection, "Projection");
            ui.separator();
            egui::ComboBox::from_id_salt(("cycle-color", self.key.get()))
                .selected_text(format!(
                    "colour: {}",
                    crate::commands::cycle_legend_title(self.color_by)
                ))
                .show_ui(ui, |ui| {
                    for (by, name) in [
                        (ColorBy::Line, "source line"),
                        (ColorBy::Function, "function"),
                        (ColorBy::File, "file"),
                        (ColorBy::Time, "time"),
                        (ColorBy::Address, "address"),
                    ] {
                        ui.selectable_value(&mut self.color_by, by, name);
                    }
                });
            ui.separator();
            let param_combo = |ui: &mut egui::Ui, id: &str, value: &mut usize| {
                egui::ComboBox::from_id_salt((id, self.key.get()))
                    .selected_text(format!("θ{}", *value))
                    .width(50.0)
                    .show_ui(ui, |ui| {
                        for k in 0..count {
                            ui.selectable_value(value, k, format!("θ{k}"));
                        }
                    });
            };
            ui.label("from");
            param_combo(ui, "from", &mut self.from);
            ui.label("to");
            param_combo(ui, "to", &mut self.to);
            if ui
                .button("<<")
                .on_hover_text("play back to the first")
                .clicked()
            {
                self.playing = -1.0;
            }
            if ui
                .button(if self.playing == 0.0 { "play" } else { "stop" })
                .clicked()
            {
                self.playing = if self.playing == 0.0 {
                    if self.t >= 1.0 { -1.0 } else { 1.0 }
                } else {
                    0.0
                };
            }
            if ui
                .button(">>")
                .on_hover_text("play forward to the second")
                .clicked()
            {
                self.playing = 1.0;
            }
            let mut t = self.t;
            ui.add(egui::Slider::new(&mut t, 0.0..=1.0).text("t"));
            if t != self.t {
                self.t = t;
                self.playing = 0.0;
            }
            if matches!(self.mode, Mode::Spiral | Mode::Circular) {
                ui.checkbox(&mut self.contours, "density contours")
                    .on_hover_text("isocontours of the density of the drawn points");
                ui.weak("drag: lasso select · click: a source line");
            }
        });
    }
}

impl View for CyclesPane {
    fn title(&self) -> String {
        format!("Cycles — {}", self.dataset.name)
    }

    fn tour_step(&self) -> Option<crate::tour::StepSpec> {
        self.result.as_ref()?;
        Some(crate::tour::StepSpec {
            file: Some(crate::views::tour_file_of(&self.dataset)),
            view: Some(
                match self.mode {
                    Mode::Spiral => "spiral",
                    Mode::Circular => "circular",
                    Mode::Barcode => "barcode",
                    Mode::Projection => "projection",
                }
                .to_owned(),
            ),
            range: (!self.settings.range.trim().is_empty()).then(|| self.settings.range.clone()),
            param: Some(self.from),
            morph_to: Some(self.to),
            t: Some(self.t),
            cycle_color: Some(
                match self.color_by {
                    ColorBy::Line => "line",
                    ColorBy::Function => "function",
                    ColorBy::File => "file",
                    ColorBy::Time => "time",
                    ColorBy::Address => "address",
                }
                .to_owned(),
            ),
            window: Some(self.settings.window),
            sample: Some(self.settings.sample),
            threshold: self.settings.threshold.trim().parse().ok(),
            binary: (!self.settings.binary.trim().is_empty())
                .then(|| self.settings.binary.trim().to_owned()),
            functions: {
                let list: Vec<String> = self
                    .settings
                    .functions
                    .split(',')
                    .map(|f| f.trim().to_owned())
                    .filter(|f| !f.is_empty())
                    .collect();
                (!list.is_empty()).then_some(list)
            },
            // A click's selection (a whole source line) has a headless form; a lasso does not.
            select_record: self.result.as_ref().and_then(|r| {
                let (record, mask) = self.selection.as_ref()?;
                (*mask == draw::same_line_mask(&r.analysis, *record)).then_some(*record)
            }),
            ..Default::default()
        })
    }

    fn is_ready(&self) -> bool {
        self.drawn || self.error.is_some()
    }

    fn ui(&mut self, ui: &mut egui::Ui, cx: &ViewContext<'_>) {
        self.poll();
        self.settings_ui(ui);
        if let Some(e) = &self.error {
            ui.colored_label(Color32::LIGHT_RED, e);
        }
        let Some(result) = self.result.clone() else {
            return;
        };
        let analysis = &result.analysis;
        let count = analysis.report.parameterizations.len();
        self.view_ui(ui, count);
        // Advance the morph.
        let dt = self.last_frame.elapsed().as_secs_f32();
        self.last_frame = Instant::now();
        if self.playing != 0.0 {
            self.t = (self.t + self.playing * dt / MORPH_DURATION.as_secs_f32()).clamp(0.0, 1.0);
            if self.t <= 0.0 || self.t >= 1.0 {
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
                    clear = source_pane(ui, analysis, record, mask, scroll, source_text);
                });
            if clear {
                self.selection = None;
                self.selection_version += 1;
            }
        }
        let (rect, response) = ui.allocate_exact_size(ui.available_size(), Sense::click_and_drag());
        ui.painter().rect_filled(
            rect,
            0.0,
            Color32::from_rgb(BACKGROUND[0], BACKGROUND[1], BACKGROUND[2]),
        );
        if count == 0 {
            ui.painter().text(
                rect.center(),
                Align2::CENTER_CENTER,
                "no H1 class: no cycle to parameterize in this range",
                egui::FontId::proportional(14.0),
                Color32::LIGHT_GRAY,
            );
            return;
        }
        let local = Rect::from_min_size(Pos2::ZERO, rect.size());
        match self.mode {
            Mode::Barcode | Mode::Projection => {
                let picture = if self.mode == Mode::Barcode {
                    let selected: Vec<usize> = (0..count).collect();
                    draw::barcode(analysis, local.shrink(8.0), &selected)
                } else if let Some(embedding) = &result.projection {
                    draw::projection(
                        analysis,
                        embedding,
                        self.from,
                        local.shrink(8.0),
                        self.selection.as_ref().map(|(_, m)| m.as_slice()),
                    )
                } else {
                    crate::views::picture::Picture::default()
                };
                let shapes: Vec<_> = picture.shapes.iter().map(|s| s.gpu()).collect();
                if *self.chart_shapes != shapes {
                    self.shapes_version = self.shapes_version.wrapping_add(1);
                    self.chart_shapes = Arc::new(shapes);
                }
                if cx.render_state.is_some() {
                    shapes_paint::paint(
                        ui,
                        ShapesCallback {
                            key: self.key.get() ^ (1 << 62),
                            version: self.shapes_version,
                            shapes: self.chart_shapes.clone(),
                            view: memscape_render::shapes::ShapesView::IDENTITY,
                            rect,
                        },
                    );
                    self.drawn = true;
                }
                labels::paint(&ui.painter_at(rect), rect.min, &picture.labels);
                if self.mode == Mode::Barcode
                    && let Some(pos) = response.hover_pos()
                {
                    let rows = draw::barcode_rows(analysis, local.shrink(8.0));
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
            Mode::Spiral | Mode::Circular => {
                let layout = if self.mode == Mode::Spiral {
                    Layout::Spiral
                } else {
                    Layout::Circular
                };
                let identity = Arc::as_ptr(&result) as usize;
                let inputs = (
                    identity,
                    self.mode,
                    self.from,
                    self.to,
                    self.color_by,
                    self.selection_version,
                );
                if self.built_for != Some(inputs) {
                    let (mut colors, legend) = draw::record_colors(analysis, self.color_by);
                    if let Some((_, mask)) = &self.selection {
                        for (c, on) in colors.iter_mut().zip(mask) {
                            if !on {
                                *c = draw::UNSELECTED;
                            }
                        }
                    }
                    let (points, arcs, outer) =
                        draw::polar_instances(analysis, layout, self.from, self.to, &colors);
                    self.points = Arc::new(points);
                    self.arcs = Arc::new(arcs);
                    self.legend = legend;
                    self.outer = outer;
                    self.version = self.version.wrapping_add(1);
                    self.built_for = Some(inputs);
                }
                let mut view = PolarMorphView::centered(rect.width(), rect.height(), self.outer);
                view.t = crate::views::heap_tree::draw::ease(self.t);
                view.point_radius_px = crate::commands::cycle_point_radius(self.points.len());
                view.arc_subdivisions = PolarMorphView::arc_pieces_for(self.points.len());
                if cx.render_state.is_some() {
                    ui.painter().add(egui_wgpu::Callback::new_paint_callback(
                        rect,
                        MorphCallback {
                            key: self.key.get(),
                            version: self.version,
                            points: self.points.clone(),
                            arcs: self.arcs.clone(),
                            view,
                            rect,
                        },
                    ));
                    self.drawn = true;
                }
                if self.contours {
                    let key = (
                        self.version,
                        view.t.to_bits(),
                        [rect.width().to_bits(), rect.height().to_bits()],
                    );
                    if self.contours_for != Some(key) {
                        let positions: Vec<[f32; 2]> = self
                            .points
                            .iter()
                            .map(|pt| {
                                let theta = cpu_reference::angle_at(pt.theta_a, pt.theta_b, view.t);
                                cpu_reference::polar_px(&view, pt.r, theta)
                            })
                            .collect();
                        let shapes =
                            contours::contour_shapes(&positions, [rect.width(), rect.height()]);
                        self.contour_shapes = Arc::new(shapes.iter().map(|s| s.gpu()).collect());
                        self.contour_version = self.contour_version.wrapping_add(1);
                        self.contours_for = Some(key);
                    }
                    if cx.render_state.is_some() {
                        shapes_paint::paint(
                            ui,
                            ShapesCallback {
                                key: self.key.get() ^ (1 << 61),
                                version: self.contour_version,
                                shapes: self.contour_shapes.clone(),
                                view: memscape_render::shapes::ShapesView::IDENTITY,
                                rect,
                            },
                        );
                    }
                }
                let legend = draw::legend(
                    &self.legend,
                    local,
                    crate::commands::cycle_legend_title(self.color_by),
                );
                // Legend swatches are few: paint them with egui directly.
                for s in &legend.shapes {
                    if let memscape_render::shapes::Geometry::Rect { min, max, .. } = s.geometry {
                        ui.painter().rect_filled(
                            Rect::from_min_max(
                                rect.min + egui::vec2(min[0], min[1]),
                                rect.min + egui::vec2(max[0], max[1]),
                            ),
                            2.0,
                            Color32::from_rgba_unmultiplied(
                                s.fill[0], s.fill[1], s.fill[2], s.fill[3],
                            ),
                        );
                    }
                }
                labels::paint(&ui.painter_at(rect), rect.min, &legend.labels);
                // Click: select the records on the clicked record's source line (or clear).
                if response.clicked()
                    && let Some(pos) = response.interact_pointer_pos()
                {
                    let p = pos - rect.min.to_vec2();
                    let nearest = self
                        .points
                        .iter()
                        .enumerate()
                        .map(|(i, pt)| {
                            let theta = cpu_reference::angle_at(pt.theta_a, pt.theta_b, view.t);
                            let q = cpu_reference::polar_px(&view, pt.r, theta);
                            (i, (q[0] - p.x).powi(2) + (q[1] - p.y).powi(2))
                        })
                        .min_by(|a, b| a.1.total_cmp(&b.1));
                    self.selection = match nearest {
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
                    let p = pos - rect.min.to_vec2();
                    if self.lasso.last().is_none_or(|l| l.distance(p) > 3.0) {
                        self.lasso.push(p);
                    }
                }
                if response.drag_stopped() {
                    let poly: Vec<[f32; 2]> = self.lasso.iter().map(|p| [p.x, p.y]).collect();
                    self.lasso.clear();
                    if poly.len() >= 3 {
                        let mask: Vec<bool> = self
                            .points
                            .iter()
                            .map(|pt| {
                                let theta = cpu_reference::angle_at(pt.theta_a, pt.theta_b, view.t);
                                contours::inside(&poly, cpu_reference::polar_px(&view, pt.r, theta))
                            })
                            .collect();
                        self.selection = mask.iter().position(|&m| m).map(|first| (first, mask));
                        self.selection_version += 1;
                        self.scroll_source = self.selection.is_some();
                    }
                }
                if self.lasso.len() >= 2 {
                    let mut pts: Vec<Pos2> =
                        self.lasso.iter().map(|p| *p + rect.min.to_vec2()).collect();
                    pts.push(pts[0]);
                    ui.painter_at(rect).add(egui::Shape::line(
                        pts,
                        egui::Stroke::new(1.5, Color32::from_rgb(250, 220, 120)),
                    ));
                }
                // Hover: the nearest record at the current t.
                if let Some(pos) = response.hover_pos() {
                    let p = pos - rect.min.to_vec2();
                    let nearest = self
                        .points
                        .iter()
                        .enumerate()
                        .map(|(i, pt)| {
                            let theta = cpu_reference::angle_at(pt.theta_a, pt.theta_b, view.t);
                            let q = cpu_reference::polar_px(&view, pt.r, theta);
                            (i, (q[0] - p.x).powi(2) + (q[1] - p.y).powi(2), theta)
                        })
                        .min_by(|a, b| a.1.total_cmp(&b.1));
                    if let Some((i, d2, theta)) = nearest
                        && d2 < 64.0
                        && let Some(r) = analysis.report.records.get(i)
                    {
                        let source = match (&r.function, &r.file, r.line) {
                            (Some(f), Some(file), Some(line)) => format!("{f} {file}:{line}"),
                            (Some(f), _, _) => f.clone(),
                            _ => "??".into(),
                        };
                        response.on_hover_ui_at_pointer(|ui| {
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
        }
    }
}

/// The source pane of a selection: how many records on which source lines, and the anchor
/// record's file with every selected line of it highlighted (scrolled to the anchor's line),
/// when the file is readable here. Returns true when the user clears it.
fn source_pane(
    ui: &mut egui::Ui,
    analysis: &CycleAnalysis,
    record: usize,
    mask: &[bool],
    scroll: bool,
    source_text: &mut Option<(String, Option<Vec<String>>)>,
) -> bool {
    let mut clear = false;
    let records = &analysis.report.records;
    // Selected records per (file, line), most first.
    let mut lines: std::collections::BTreeMap<(Option<&str>, Option<u32>), usize> =
        std::collections::BTreeMap::new();
    for (r, _) in records.iter().zip(mask).filter(|(_, m)| **m) {
        *lines.entry((r.file.as_deref(), r.line)).or_default() += 1;
    }
    let selected: usize = lines.values().sum();
    ui.horizontal(|ui| {
        ui.strong(format!(
            "{selected} records selected on {} source line(s)",
            lines.len()
        ));
        if ui.button("clear").clicked() {
            clear = true;
        }
    });
    let mut ranked: Vec<_> = lines.iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(a.1));
    if ranked.len() > 1 {
        for ((file, line), n) in ranked.iter().take(8) {
            let place = match (file, line) {
                (Some(f), Some(l)) => format!("{f}:{l}"),
                _ => "no source line".to_owned(),
            };
            ui.label(format!("{n:>6}  {place}"));
        }
    }
    let Some(r) = records.get(record) else {
        return clear;
    };
    let (Some(file), Some(line)) = (r.file.as_deref(), r.line) else {
        ui.label(format!(
            "instruction {:#x}: no source line (give the traced binary to symbolize)",
            r.ip
        ));
        return clear;
    };
    ui.label(format!(
        "{}  {file}:{line}",
        r.function.as_deref().unwrap_or("??")
    ));
    let marked: std::collections::HashSet<u32> = lines
        .keys()
        .filter(|(f, _)| *f == Some(file))
        .filter_map(|(_, l)| *l)
        .collect();
    if source_text.as_ref().is_none_or(|(f, _)| f != file) {
        let lines = crate::views::source_file::read_lines(std::path::Path::new(file));
        *source_text = Some((file.to_owned(), lines));
    }
    let Some((_, Some(text))) = source_text.as_ref() else {
        ui.label("(the source file is not readable here)");
        return clear;
    };
    egui::ScrollArea::both().show(ui, |ui| {
        for (i, l) in text.iter().enumerate() {
            let n = i as u32 + 1;
            let row = egui::RichText::new(format!("{n:>5}  {l}")).monospace();
            let response = if marked.contains(&n) {
                let bg = if n == line {
                    Color32::from_rgb(110, 85, 20)
                } else {
                    Color32::from_rgb(70, 56, 20)
                };
                ui.label(row.background_color(bg).color(Color32::WHITE))
            } else {
                ui.label(row.color(Color32::from_gray(170)))
            };
            if n == line && scroll {
                response.scroll_to_me(Some(egui::Align::Center));
            }
        }
    });
    clear
}
