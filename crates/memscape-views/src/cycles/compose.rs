//! The cycle views' pictures (spiral and circular with their morph, barcode, MDS projection),
//! composed in one place for the GUI pane and headless rendering.

use std::sync::Arc;

use memscape_render::polar_morph::PolarMorphView;
use memscape_render::polar_morph::cpu_reference::{angle_at, polar_px};
use memscape_render::shapes::Shape;

use super::draw::{self, BACKGROUND, Layout, Legend};
use super::model::{self, CycleAnalysis};
use super::settings::{CycleSettings, Mode};
use crate::dataset::{Dataset, DatasetContent};
use crate::error::{Context as _, Result};
use crate::label::Label;
use crate::picture::{Layer, MorphData, MorphLayer, Picture};

/// The records of a spiral or circular view as morph instances, with their legend: made once
/// per analysis, parameterizations, colouring and selection (the pane keeps it across frames).
pub struct PolarModel {
    pub data: Arc<MorphData>,
    pub legend: Legend,
    /// The outermost radius of the layout.
    pub outer: f32,
}

/// The layout of a spiral or circular mode.
pub fn layout_of(mode: Mode) -> Layout {
    match mode {
        Mode::Circular => Layout::Circular,
        _ => Layout::Spiral,
    }
}

impl PolarModel {
    /// `settings`' records coloured (records outside `selection` dimmed), morphing from
    /// `--param` to `--morph-to`.
    pub fn build(
        analysis: &CycleAnalysis,
        settings: &CycleSettings,
        selection: Option<&[bool]>,
    ) -> Self {
        let (mut colors, legend) = if settings.collapse_function.is_empty()
            || settings.cycle_color != draw::ColorBy::Line
        {
            draw::record_colors(analysis, settings.cycle_color)
        } else {
            draw::line_colors_collapsed(
                analysis,
                &memscape_cycles::CollapsedFunctions(settings.collapse_function.clone()),
            )
        };
        if let Some(mask) = selection {
            for (c, on) in colors.iter_mut().zip(mask) {
                if !on {
                    *c = draw::UNSELECTED;
                }
            }
        }
        let to = settings.morph_to.unwrap_or(settings.param);
        let (points, arcs, outer) = draw::polar_instances(
            analysis,
            layout_of(settings.mode),
            settings.param,
            to,
            &colors,
        );
        Self {
            data: Arc::new(MorphData { points, arcs }),
            legend,
            outer,
        }
    }

    /// The morph's view in a picture of `size` points at the settings' (eased) t: centred in
    /// the plot's area (beside the legend, under the caption; [`polar_areas`]).
    pub fn view(&self, settings: &CycleSettings, size: egui::Vec2) -> PolarMorphView {
        let n = self.data.points.len();
        let (plot, _) = polar_areas(&self.legend, settings.cycle_color.title(), size);
        let mut view = PolarMorphView::centered(plot.width(), plot.height(), self.outer);
        view.center_px = [plot.center().x, plot.center().y];
        view.t = crate::picture::ease(settings.t);
        view.point_radius_px = point_radius(n);
        view.arc_subdivisions = PolarMorphView::arc_pieces_for(n);
        view
    }

    /// Where each record is drawn under `view`, in points.
    pub fn positions(&self, view: &PolarMorphView) -> Vec<[f32; 2]> {
        self.data
            .points
            .iter()
            .map(|p| polar_px(view, p.r, angle_at(p.theta_a, p.theta_b, view.t)))
            .collect()
    }

    /// The isocontours of the density of the drawn points.
    pub fn contours(&self, view: &PolarMorphView, size: egui::Vec2) -> Vec<Shape> {
        super::contours::contour_shapes(&self.positions(view), [size.x, size.y])
    }
}

/// Height of the caption's band at the top of the spiral and circular views.
const CAPTION_HEIGHT: f32 = 24.0;

/// Where the records and the legend of a spiral or circular view lie in a picture of `size`:
/// the legend in a column at the left as wide as its longest entry (at most 40 % of the
/// picture), the caption in a band across the top, the records in the rest. The records'
/// outermost radius fits the plot, so no record is drawn under the legend or the caption.
pub fn polar_areas(legend: &Legend, title: &str, size: egui::Vec2) -> (egui::Rect, egui::Rect) {
    let widest = legend
        .iter()
        .map(|(name, _)| crate::label::approx_width(name, 10.5) + 16.0)
        .fold(crate::label::approx_width(title, 11.0), f32::max);
    let width = (widest + 20.0).min(0.4 * size.x);
    let legend_rect =
        egui::Rect::from_min_max(egui::pos2(0.0, CAPTION_HEIGHT), egui::pos2(width, size.y));
    let plot = egui::Rect::from_min_max(egui::pos2(width, CAPTION_HEIGHT), size.to_pos2());
    (plot, legend_rect)
}

/// The spiral or circular view: the morphing records, the density contours (`contours`, made by
/// [`PolarModel::contours`] when the settings ask for them), the legend and the caption.
pub fn polar_picture(
    analysis: &CycleAnalysis,
    model: &PolarModel,
    settings: &CycleSettings,
    contours: &[Shape],
    size: egui::Vec2,
) -> Picture {
    let full = egui::Rect::from_min_size(egui::Pos2::ZERO, size);
    let mut picture = Picture::new(size, BACKGROUND);
    picture.layers.push(Layer::Morph(MorphLayer {
        slot: 0,
        rect: full,
        data: model.data.clone(),
        view: model.view(settings, size),
    }));
    picture.shapes.extend(contours.iter().copied());
    let (_, legend_rect) = polar_areas(&model.legend, settings.cycle_color.title(), size);
    picture.extend(draw::legend(
        &model.legend,
        legend_rect,
        settings.cycle_color.title(),
    ));
    let to = settings.morph_to.unwrap_or(settings.param);
    picture.labels.push(Label::new(
        egui::pos2(size.x - 8.0, 8.0),
        caption(
            analysis,
            layout_of(settings.mode),
            settings.param,
            to,
            settings.t,
        ),
        11.0,
        egui::Color32::from_gray(200),
        egui::Align2::RIGHT_TOP,
    ));
    picture
}

/// The barcode.
pub fn barcode_picture(analysis: &CycleAnalysis, size: egui::Vec2) -> Picture {
    let count = analysis.report.parameterizations.len();
    let selected: Vec<usize> = (0..count).collect();
    let mut picture = draw::barcode(analysis, chart_area(size), &selected);
    picture.size = size;
    picture.background = Some(BACKGROUND);
    picture
}

/// The MDS projection of the windows, coloured by θ of `--param`.
pub fn projection_picture(
    analysis: &CycleAnalysis,
    embedding: &[[f64; 2]],
    settings: &CycleSettings,
    selection: Option<&[bool]>,
    size: egui::Vec2,
) -> Picture {
    let mut picture = draw::projection(
        analysis,
        embedding,
        settings.param,
        chart_area(size),
        selection,
    );
    picture.size = size;
    picture.background = Some(BACKGROUND);
    picture
}

/// Where the barcode and the projection lie in a picture of `size` points.
pub fn chart_area(size: egui::Vec2) -> egui::Rect {
    egui::Rect::from_min_size(egui::Pos2::ZERO, size).shrink(8.0)
}

/// The reference trace of `dataset`, or why it has no cycle views.
pub fn trace_of(dataset: &Dataset) -> Result<&memscape_cycles::ReferenceTrace> {
    match &dataset.content {
        DatasetContent::RefTrace(trace) => Ok(trace),
        _ => crate::bail!(
            "{}: the cycle views need a memory reference trace (valgrind lackey, pinatrace or CSV)",
            dataset.name
        ),
    }
}

/// The cycle view of `dataset` as `settings` say, at `size` points.
pub fn compose(dataset: &Dataset, settings: &CycleSettings, size: egui::Vec2) -> Result<Picture> {
    crate::ensure!(
        settings.collapse_function.is_empty() || settings.cycle_color == draw::ColorBy::Line,
        "--collapse-function needs --cycle-color line"
    );
    let (analysis, options) = analysis_of(dataset, settings)?;
    let selection = match settings.select_record {
        None => None,
        Some(n) => {
            let records = analysis.report.records.len();
            crate::ensure!(
                n < records,
                "--select-record {n}: the analysis kept {records} record(s) (numbered from 0)"
            );
            Some(draw::same_line_mask(&analysis, n))
        }
    };
    let count = analysis.report.parameterizations.len();
    let check = |k: usize, flag: &str| {
        crate::ensure!(
            k < count,
            "{flag} {k}: the analysis found {count} parameterization(s) (numbered from 0)"
        );
        Ok(())
    };
    let view = settings.mode;
    (|| -> Result<Picture> {
        match view {
            Mode::Barcode => Ok(barcode_picture(&analysis, size)),
            Mode::Projection => {
                check(settings.param, "--param")?;
                let embedding =
                    memscape_cycles::window_projection(&analysis.report.records, &options)?;
                Ok(projection_picture(
                    &analysis,
                    &embedding,
                    settings,
                    selection.as_deref(),
                    size,
                ))
            }
            Mode::Spiral | Mode::Circular => {
                check(settings.param, "--param")?;
                check(settings.morph_to.unwrap_or(settings.param), "--morph-to")?;
                let model = PolarModel::build(&analysis, settings, selection.as_deref());
                let contours = if settings.contours {
                    model.contours(&model.view(settings, size), size)
                } else {
                    Vec::new()
                };
                Ok(polar_picture(&analysis, &model, settings, &contours, size))
            }
        }
    })()
    .with_context(|| format!("rendering the {view:?} view of {}", dataset.name))
}

/// The analysis `settings` ask for of `dataset` (made once per process and options), with its
/// options.
pub fn analysis_of(
    dataset: &Dataset,
    settings: &CycleSettings,
) -> Result<(Arc<CycleAnalysis>, memscape_cycles::CyclesOptions)> {
    let trace = trace_of(dataset)?;
    let options = settings.analysis.options(settings.top())?;
    let analysis = cached_analysis(&dataset.name, trace, &options, settings.max_records)?;
    Ok((analysis, options))
}

/// Analyses already made in this process, by dataset and options: a tour renders many frames
/// of one analysis.
fn cached_analysis(
    name: &str,
    trace: &memscape_cycles::ReferenceTrace,
    options: &memscape_cycles::CyclesOptions,
    max_records: Option<usize>,
) -> Result<std::sync::Arc<model::CycleAnalysis>> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    type Cache = Mutex<HashMap<String, Arc<model::CycleAnalysis>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let key = format!("{name}\u{0}{options:?}\u{0}{max_records:?}");
    let cache = CACHE.get_or_init(Default::default);
    if let Some(hit) = cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
        return Ok(hit);
    }
    let analysis = Arc::new(model::analyze(name, trace, options, max_records)?);
    if let Ok(mut c) = cache.lock() {
        c.insert(key, analysis.clone());
    }
    Ok(analysis)
}

/// Smaller points when there are many records, so that the spiral's turns stay apart.
pub fn point_radius(records: usize) -> f32 {
    match records {
        0..=2000 => 2.6,
        2001..=20_000 => 1.8,
        _ => 1.2,
    }
}

pub fn caption(
    analysis: &model::CycleAnalysis,
    layout: Layout,
    from: usize,
    to: usize,
    t: f32,
) -> String {
    let name = match layout {
        Layout::Spiral => "spiral",
        Layout::Circular => "circular",
    };
    let p = |k: usize| {
        analysis
            .report
            .parameterizations
            .get(k)
            .map_or_else(String::new, |p| {
                format!(
                    "[{:.1}, {}) persistence {}",
                    p.birth,
                    p.death
                        .map_or_else(|| "inf".to_owned(), |d| format!("{d:.1}")),
                    p.persistence
                        .map_or_else(|| "inf".to_owned(), |x| format!("{x:.1}"))
                )
            })
    };
    let detail = analysis
        .report
        .level_of_detail
        .as_ref()
        .map_or_else(String::new, |l| {
            format!(
                " · {} landmarks (barcode within {} of the full)",
                l.landmarks, l.bottleneck_bound
            )
        });
    if from == to {
        format!(
            "{name} · {} records{detail} · parameterization {from} {}",
            analysis.report.records.len(),
            p(from)
        )
    } else {
        format!(
            "{name} · {} records{detail} · morph {from} to {to} at t = {t:.2}",
            analysis.report.records.len()
        )
    }
}
