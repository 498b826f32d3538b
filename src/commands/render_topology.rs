//! `memscape render --view topology|offenders|histograms|histogram`: the samples views with the
//! linked selection of `--select`, `--select-line`, `--select-symbol`, and the histograms'
//! window-score strips and cluster markers (with one glyph expanded by `--glyph`), drawn by the
//! GUI's picture code.

use std::sync::Arc;

use anyhow::Context as _;
use memscape_render::{GpuContext, RgbaImage};
use memscape_samples::metrics::{ClusterParams, Metric, cluster_tree};
use memscape_samples::{
    AxisBrush, LinkedResult, OffenderKey, Picked, RangeSpec, Samples, SelectionSpec,
    select_offender,
};
use memscape_topology::ResourceKind;

use crate::cli::{BarScaleArg, SamplesRenderArgs, ViewKindArg};
use crate::data::{Dataset, DatasetContent};
use crate::views::labels::Label;
use crate::views::picture::Picture;
use crate::views::samples::draw::{self as hdraw, Scale};
use crate::views::samples::pane::{
    HistogramSpec, Layout, MarkerSet, glyph_title, histograms, marks_of,
};
use crate::views::samples::shared::{Base, TOP_OFFENDERS, default_axes};
use crate::views::topology::draw::{self, BACKGROUND, Measure, NodeValues};

/// The linked selection the arguments describe.
pub fn selection_spec(
    samples: &Samples,
    base: &Base,
    args: &SamplesRenderArgs,
) -> anyhow::Result<SelectionSpec> {
    let mut spec = SelectionSpec::default();
    for text in &args.select {
        let range = RangeSpec::parse(text).context("--select")?;
        spec.set_brush(AxisBrush::from_range(&base.index, &range).context("--select")?);
    }
    let mut pick = |key: OffenderKey, name: &str, what: &str| -> anyhow::Result<()> {
        let labels = match key {
            OffenderKey::SourceLine => &samples.source_lines,
            OffenderKey::Symbol => &samples.symbols,
        };
        anyhow::ensure!(
            labels.iter().any(|l| l == name),
            "--select-{what}: no {what} {name:?} in {} (e.g. {})",
            samples.file,
            labels
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        );
        let these = select_offender(samples, key, name);
        let label = format!("{what} {name}");
        spec.picked = Some(match spec.picked.take() {
            Some(old) => Picked {
                label: format!("{} and {label}", old.label),
                samples: Arc::new(old.samples.intersection(&these)),
            },
            None => Picked {
                label,
                samples: Arc::new(these),
            },
        });
        Ok(())
    };
    if let Some(line) = &args.select_line {
        pick(OffenderKey::SourceLine, line, "line")?;
    }
    if let Some(symbol) = &args.select_symbol {
        pick(OffenderKey::Symbol, symbol, "symbol")?;
    }
    Ok(spec)
}

fn metric_and_depth(args: &SamplesRenderArgs) -> anyhow::Result<(Metric, ResourceKind)> {
    let metric = Metric::parse(&args.cluster_metric).with_context(|| {
        format!(
            "--cluster-metric: expected latency or imbalance, got {:?}",
            args.cluster_metric
        )
    })?;
    let kind = ResourceKind::parse(&args.cluster_depth).with_context(|| {
        format!(
            "--cluster-depth: expected numa, l3, l2, l1, core or pu, got {:?}",
            args.cluster_depth
        )
    })?;
    Ok((metric, kind))
}

fn metric_name(m: Metric) -> &'static str {
    match m {
        Metric::Latency => "latency",
        Metric::Imbalance => "imbalance",
    }
}

fn full_rect(args: &crate::cli::RenderArgs) -> egui::Rect {
    egui::Rect::from_min_size(
        egui::Pos2::ZERO,
        egui::vec2(args.width as f32, args.height as f32),
    )
}

pub fn render(
    ctx: &GpuContext,
    dataset: &Dataset,
    args: &crate::cli::RenderArgs,
) -> anyhow::Result<RgbaImage> {
    let measure = match args.measure.as_str() {
        "samples" => Measure::Samples,
        "cycles" => Measure::Cycles,
        other => anyhow::bail!("--measure: expected samples or cycles, got {other:?}"),
    };
    let full = full_rect(args);
    let picture = match &dataset.content {
        DatasetContent::Topology(topology) => {
            anyhow::ensure!(
                args.view == ViewKindArg::Topology,
                "{}: a topology alone has no offenders or histograms; give the samples file",
                dataset.name
            );
            draw::radial(topology, None, measure, full.shrink(8.0), None)
        }
        DatasetContent::Samples(samples) => {
            let base = Base::build(
                samples,
                std::path::Path::new(&dataset.name),
                args.hardware.as_deref(),
            )
            .with_context(|| format!("{}: mapping the samples onto the hardware", dataset.name))?;
            let base = match args.samples.histogram_bins {
                None => base,
                Some(n) => {
                    let range = crate::views::samples::shared::BIN_RANGE;
                    anyhow::ensure!(
                        range.contains(&n),
                        "--histogram-bins {n}: expected {} to {}",
                        range.start(),
                        range.end()
                    );
                    base.rebinned(samples, n)
                }
            };
            let spec = selection_spec(samples, &base, &args.samples)?;
            let result = memscape_samples::recompute(
                samples,
                &base.mapping,
                &base.index,
                &spec,
                TOP_OFFENDERS,
            );
            match args.view {
                ViewKindArg::Offenders => offenders(&base, &result, full),
                ViewKindArg::Histograms | ViewKindArg::Histogram => {
                    histogram_picture(samples, &base, &spec, &result, args)?
                }
                _ => {
                    let agg = &result.aggregate;
                    let values = NodeValues {
                        samples: &agg.samples,
                        cycles: &agg.cycles,
                        transfers: &agg.transfers,
                    };
                    // Room for the header's two lines when there is a selection.
                    let area = if result.everything {
                        full.shrink(8.0)
                    } else {
                        egui::Rect::from_min_max(
                            full.min + egui::vec2(8.0, 40.0),
                            full.max - egui::vec2(8.0, 8.0),
                        )
                    };
                    let mut pic = draw::radial(&base.topology, Some(&values), measure, area, None);
                    let topology = &base.topology;
                    // With a selection, what it is on a line of its own.
                    let what = if result.everything {
                        format!("{} samples", samples.len())
                    } else {
                        pic.labels.push(Label::new(
                            egui::pos2(8.0, 24.0),
                            format!(
                                "selection: {} ({:.1} %)",
                                spec.describe(&base.index),
                                result.summary.share * 100.0
                            ),
                            12.0,
                            egui::Color32::from_rgb(243, 168, 58),
                            egui::Align2::LEFT_TOP,
                        ));
                        format!("{} of {} samples", result.summary.samples, samples.len())
                    };
                    pic.labels.push(Label::new(
                        egui::pos2(8.0, 8.0),
                        format!(
                            "{what} on {} · colour: {} per level (blue low, red high) · links: transfers",
                            std::path::Path::new(topology.source())
                                .file_name()
                                .map_or_else(
                                    || topology.source().to_owned(),
                                    |n| n.to_string_lossy().into_owned()
                                ),
                            args.measure
                        ),
                        12.0,
                        egui::Color32::from_gray(210),
                        egui::Align2::LEFT_TOP,
                    ));
                    pic
                }
            }
        }
        _ => anyhow::bail!(
            "{}: the samples views need samples (MemAxes/Mitos CSV, perf script) or a topology (hwloc XML)",
            dataset.name
        ),
    };
    crate::headless::render_picture(
        ctx,
        &picture.shapes,
        &picture.labels,
        args.width,
        args.height,
        BACKGROUND,
    )
}

fn offenders(base: &Base, result: &LinkedResult, full: egui::Rect) -> Picture {
    let half = full.width() * 0.5;
    let selected = |key| (!result.everything).then(|| base.selected_rows(result, key));
    let lines = selected(OffenderKey::SourceLine);
    let symbols = selected(OffenderKey::Symbol);
    let mut pic = draw::offenders(
        "total latency per source line",
        &base.lines,
        lines.as_deref(),
        egui::Rect::from_min_size(full.min, egui::vec2(half, full.height())).shrink(8.0),
    );
    pic.extend(draw::offenders(
        "total latency per data symbol",
        &base.symbols,
        symbols.as_deref(),
        egui::Rect::from_min_size(
            full.min + egui::vec2(half, 0.0),
            egui::vec2(half, full.height()),
        )
        .shrink(8.0),
    ));
    pic
}

fn histogram_picture(
    samples: &Samples,
    base: &Base,
    spec: &SelectionSpec,
    result: &LinkedResult,
    args: &crate::cli::RenderArgs,
) -> anyhow::Result<Picture> {
    let sargs = &args.samples;
    let index = &base.index;
    let axis_of = |name: &str, flag: &str| {
        index.axis(name).with_context(|| {
            format!(
                "{flag}: no attribute {name:?}; available: {}",
                index
                    .axes
                    .iter()
                    .map(|a| a.attribute.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    };
    let layout = if args.view == ViewKindArg::Histogram {
        let name = sargs
            .histogram_attribute
            .as_deref()
            .or(sargs.cluster_attribute.as_deref())
            .unwrap_or("latency");
        Layout::Single(axis_of(name, "--histogram-attribute")?)
    } else if sargs.axes.is_empty() {
        Layout::Parallel(default_axes(index))
    } else {
        Layout::Parallel(
            sargs
                .axes
                .iter()
                .map(|a| axis_of(a, "--axes"))
                .collect::<anyhow::Result<_>>()?,
        )
    };
    let shown: Vec<usize> = match &layout {
        Layout::Parallel(a) => a.clone(),
        Layout::Single(a) => vec![*a],
    };
    let (metric, kind) = metric_and_depth(sargs)?;
    let mut legend: Vec<String> = Vec::new();
    let mut strips = Vec::new();
    if sargs.strips > 0 {
        for &a in &shown {
            let s = memscape_samples::linked::axis_scores(
                samples,
                &base.topology,
                &base.mapping,
                index,
                a,
                sargs.strips,
                metric,
                kind,
            )?;
            strips.push((a, Arc::new(s)));
        }
        legend.push(format!(
            "strips: {kind} {} per window ({} windows; blue low, red high per axis)",
            metric_name(metric),
            sargs.strips
        ));
    }
    let mut tree = None;
    if let Some(attr) = &sargs.cluster_attribute {
        let a = axis_of(attr, "--cluster-attribute")?;
        anyhow::ensure!(
            shown.contains(&a),
            "--cluster-attribute {attr}: the axis is not shown (see --axes / --histogram-attribute)"
        );
        let t = cluster_tree(
            samples,
            &base.topology,
            &base.mapping,
            ClusterParams {
                attribute: index.axes[a].attribute.clone(),
                metric,
                kind,
                window: sargs.cluster_window,
                step: sargs.cluster_step,
            },
            None,
        )?;
        legend.push(format!(
            "markers: {} clusters along {attr} by {kind} {} (w {}, Δ {}; {} windows)",
            t.cut(sargs.clusters).len(),
            metric_name(metric),
            sargs.cluster_window,
            sargs.cluster_step,
            t.leaves
        ));
        tree = Some((a, t));
    } else if sargs.glyph.is_some() {
        anyhow::bail!("--glyph needs --cluster-attribute");
    }
    let marker_set = tree.as_ref().map(|(a, t)| MarkerSet {
        axis: *a,
        marks: marks_of(t, sargs.clusters),
    });
    let hs = HistogramSpec {
        layout: &layout,
        scale: match sargs.bars {
            BarScaleArg::Linear => Scale::Linear,
            BarScaleArg::Log => Scale::Log,
        },
        strips: &strips,
        markers: marker_set.as_ref(),
        hovered_marker: sargs.glyph,
    };
    let full = full_rect(args);
    let top = 58.0;
    let area = egui::Rect::from_min_max(
        full.min + egui::vec2(6.0, top),
        full.max - egui::vec2(6.0, 6.0),
    );
    let mut drawn = histograms(index, result, spec, &hs, area);
    let mut pic = hdraw::panel(
        &result.summary,
        &spec.describe(index),
        egui::pos2(10.0, 8.0),
    );
    for (k, line) in legend.iter().enumerate() {
        pic.labels.push(Label::new(
            egui::pos2(full.right() - 10.0, 8.0 + 16.0 * k as f32),
            line,
            11.0,
            egui::Color32::from_gray(170),
            egui::Align2::RIGHT_TOP,
        ));
    }
    if let (Some(i), Some((_, t)), Some(set)) = (sargs.glyph, &tree, &marker_set) {
        let cut = t.cut(sargs.clusters);
        let (Some(node), Some(mark), Some(m)) = (
            cut.get(i),
            set.marks.get(i),
            drawn.markers.iter().find(|m| m.cluster == i),
        ) else {
            anyhow::bail!("--glyph {i}: the cut has {} clusters (0-based)", cut.len());
        };
        let agg = base.mapping.aggregate_order(
            samples,
            &t.order,
            node.positions[0] as usize..node.positions[1] as usize,
        );
        let values = NodeValues {
            samples: &agg.samples,
            cycles: &agg.cycles,
            transfers: &agg.transfers,
        };
        let glyph = hdraw::glyph(
            &base.topology,
            &values,
            &glyph_title(t, mark),
            m.center,
            area,
        );
        if let Some(first) = glyph.shapes.first()
            && let memscape_render::shapes::Geometry::Rect { min, max, .. } = first.geometry
        {
            let r =
                egui::Rect::from_min_max(egui::pos2(min[0], min[1]), egui::pos2(max[0], max[1]));
            drawn.picture.labels.retain(|l| !r.contains(l.pos));
        }
        drawn.picture.extend(glyph);
    }
    pic.extend(drawn.picture);
    Ok(pic)
}
