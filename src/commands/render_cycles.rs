//! `memscape render --view spiral|circular|barcode|projection`.

use anyhow::Context as _;
use memscape_cycles::records::{parse_ip_range, parse_load_base, parse_record_range};
use memscape_cycles::symbolize::LoadBase;
use memscape_render::polar_morph::{
    PolarMorphData, PolarMorphPipelines, PolarMorphView, draw_into,
};
use memscape_render::{GpuContext, OffscreenTarget, RgbaImage};

use crate::cli::{CycleColorArg, CycleRenderArgs, CycleSelectArgs, ViewKindArg};
use crate::data::{Dataset, DatasetContent};
use crate::views::cycles::draw::{self, BACKGROUND, ColorBy, Layout};
use crate::views::cycles::model;

/// The analysis options of `--binary/--function/--file/--range/…` (`cycles` and `render`);
/// `top` parameterizations are computed.
pub fn options(
    select: &CycleSelectArgs,
    top: usize,
) -> anyhow::Result<memscape_cycles::CyclesOptions> {
    Ok(memscape_cycles::CyclesOptions {
        binary: select.binary.clone(),
        load_base: match &select.load_base {
            Some(text) => LoadBase::Given(parse_load_base(text)?),
            None => LoadBase::Detect,
        },
        filter: memscape_cycles::RecordFilter {
            functions: select.function.clone(),
            files: select.source_files.clone(),
            ip_range: select.ip_range.as_deref().map(parse_ip_range).transpose()?,
            record_range: select
                .range
                .as_deref()
                .map(parse_record_range)
                .transpose()?,
            sample: select.sample.max(1),
        },
        window: select.window,
        threshold: select.threshold,
        top,
        detail: if select.full {
            memscape_cycles::Detail::Full
        } else if let Some(count) = select.landmarks {
            anyhow::ensure!(count >= 2, "--landmarks {count}: expected at least 2");
            memscape_cycles::Detail::Landmarks(count)
        } else {
            anyhow::ensure!(
                select.max_windows >= 2,
                "--max-windows {}: expected at least 2",
                select.max_windows
            );
            memscape_cycles::Detail::Auto {
                max_points: select.max_windows,
                seconds: select.time_budget,
            }
        },
        ..memscape_cycles::CyclesOptions::default()
    })
}

/// What the level of detail means, for the output of `cycles` and `render`.
pub fn detail_note(lod: &memscape_cycles::LevelOfDetail) -> String {
    format!(
        "level of detail: {} landmark windows of {} unique ({}; maxmin by Levenshtein distance, \
         every window within {} edit(s) of its landmark): the H1 barcode is within bottleneck \
         distance {} of the full analysis's; --full analyses every window",
        lod.landmarks,
        lod.unique_windows,
        match lod.reason.as_str() {
            "budget" => "more than --max-windows",
            "time" => "the full analysis passed --time-budget",
            _ => "--landmarks",
        },
        lod.covering_radius,
        lod.bottleneck_bound
    )
}

pub fn color_by(arg: CycleColorArg) -> ColorBy {
    match arg {
        CycleColorArg::Line => ColorBy::Line,
        CycleColorArg::Function => ColorBy::Function,
        CycleColorArg::File => ColorBy::File,
        CycleColorArg::Time => ColorBy::Time,
        CycleColorArg::Address => ColorBy::Address,
    }
}

pub fn render(
    ctx: &GpuContext,
    dataset: &Dataset,
    view: ViewKindArg,
    args: &CycleRenderArgs,
    width: u32,
    height: u32,
) -> anyhow::Result<RgbaImage> {
    let DatasetContent::RefTrace(trace) = &dataset.content else {
        anyhow::bail!(
            "{}: the cycle views need a memory reference trace (valgrind lackey, pinatrace or CSV)",
            dataset.name
        );
    };
    let top = 3
        .max(args.param + 1)
        .max(args.morph_to.map_or(0, |m| m + 1));
    let options = options(&args.select, top)?;
    let analysis = cached_analysis(&dataset.name, trace, &options, args.max_records)?;
    let selection = match args.select_record {
        None => None,
        Some(n) => {
            let records = analysis.report.records.len();
            anyhow::ensure!(
                n < records,
                "--select-record {n}: the analysis kept {records} record(s) (numbered from 0)"
            );
            Some(draw::same_line_mask(&analysis, n))
        }
    };
    let count = analysis.report.parameterizations.len();
    let check = |k: usize, flag: &str| {
        anyhow::ensure!(
            k < count,
            "{flag} {k}: the analysis found {count} parameterization(s) (numbered from 0)"
        );
        Ok(())
    };
    let full = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(width as f32, height as f32));
    match view {
        ViewKindArg::Barcode => {
            let selected: Vec<usize> = (0..count).collect();
            let pic = draw::barcode(&analysis, full.shrink(8.0), &selected);
            crate::headless::render_picture(
                ctx,
                &pic.shapes,
                &pic.labels,
                width,
                height,
                BACKGROUND,
            )
        }
        ViewKindArg::Projection => {
            check(args.param, "--param")?;
            let embedding = memscape_cycles::window_projection(&analysis.report.records, &options)?;
            let pic = draw::projection(
                &analysis,
                &embedding,
                args.param,
                full.shrink(8.0),
                selection.as_deref(),
            );
            crate::headless::render_picture(
                ctx,
                &pic.shapes,
                &pic.labels,
                width,
                height,
                BACKGROUND,
            )
        }
        _ => {
            check(args.param, "--param")?;
            let to = args.morph_to.unwrap_or(args.param);
            check(to, "--morph-to")?;
            let layout = if view == ViewKindArg::Circular {
                Layout::Circular
            } else {
                Layout::Spiral
            };
            let by = color_by(args.cycle_color);
            let (mut colors, legend) = if args.collapse_function.is_empty() {
                draw::record_colors(&analysis, by)
            } else {
                anyhow::ensure!(
                    by == ColorBy::Line,
                    "--collapse-function needs --cycle-color line"
                );
                draw::line_colors_collapsed(
                    &analysis,
                    &memscape_cycles::CollapsedFunctions(args.collapse_function.clone()),
                )
            };
            if let Some(mask) = &selection {
                for (c, on) in colors.iter_mut().zip(mask) {
                    if !on {
                        *c = draw::UNSELECTED;
                    }
                }
            }
            let (points, arcs, outer) =
                draw::polar_instances(&analysis, layout, args.param, to, &colors);
            let target = OffscreenTarget::new(ctx, width, height)?;
            let legend_pic = draw::legend(&legend, full, legend_title(by));
            target.clear(ctx, BACKGROUND);
            let mut pipelines = PolarMorphPipelines::new(&ctx.device)?;
            let mut data = PolarMorphData::new(&ctx.device, &pipelines, &points, &arcs)?;
            let mut morph_view = PolarMorphView::centered(width as f32, height as f32, outer);
            morph_view.t = crate::views::heap_tree::draw::ease(args.t);
            morph_view.point_radius_px = point_radius(points.len());
            morph_view.arc_subdivisions = PolarMorphView::arc_pieces_for(points.len());
            let mut overlay = Vec::new();
            if args.contours {
                use memscape_render::polar_morph::cpu_reference::{angle_at, polar_px};
                let positions: Vec<[f32; 2]> = points
                    .iter()
                    .map(|p| {
                        polar_px(
                            &morph_view,
                            p.r,
                            angle_at(p.theta_a, p.theta_b, morph_view.t),
                        )
                    })
                    .collect();
                overlay = crate::views::cycles::contours::contour_shapes(
                    &positions,
                    [width as f32, height as f32],
                );
            }
            overlay.extend(legend_pic.shapes.iter().cloned());
            let shapes: Vec<_> = overlay.iter().map(|s| s.gpu()).collect();
            draw_into(ctx, &mut pipelines, &mut data, &morph_view, &target, None);
            let mut shape_pipelines = memscape_render::shapes::ShapesPipelines::new(&ctx.device)?;
            memscape_render::shapes::draw_into(
                ctx,
                &mut shape_pipelines,
                &shapes,
                &memscape_render::shapes::ShapesView::IDENTITY,
                &target,
                None,
            )?;
            let mut labels = legend_pic.labels;
            labels.push(crate::views::labels::Label::new(
                egui::pos2(width as f32 - 8.0, 8.0),
                caption(&analysis, layout, args.param, to, args.t),
                11.0,
                egui::Color32::from_gray(200),
                egui::Align2::RIGHT_TOP,
            ));
            crate::headless::paint_labels(ctx, &target, &labels);
            Ok(target.read(ctx)?)
        }
    }
    .with_context(|| format!("rendering the {view:?} view of {}", dataset.name))
}

/// Analyses already made in this process, by dataset and options: a tour renders many frames
/// of one analysis.
fn cached_analysis(
    name: &str,
    trace: &memscape_cycles::ReferenceTrace,
    options: &memscape_cycles::CyclesOptions,
    max_records: Option<usize>,
) -> anyhow::Result<std::sync::Arc<model::CycleAnalysis>> {
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
    if let Some(lod) = &analysis.report.level_of_detail {
        eprintln!("{name}: {}", detail_note(lod));
    }
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

pub fn legend_title(by: ColorBy) -> &'static str {
    match by {
        ColorBy::Line => "source line",
        ColorBy::Function => "function",
        ColorBy::File => "file",
        ColorBy::Time => "time",
        ColorBy::Address => "address",
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
