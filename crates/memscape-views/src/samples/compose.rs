//! The samples views' pictures (radial topology, top offenders, parallel and single
//! histograms with strips, cluster markers and glyphs), composed in one place for the panes and
//! headless rendering.

use std::sync::Arc;

use memscape_samples::metrics::{ClusterParams, ClusterTree, WindowScore, cluster_tree};
use memscape_samples::{
    Aggregate, AxisBrush, LinkedIndex, LinkedResult, OffenderKey, Picked, RangeSpec, Samples,
    SelectionSpec,
};
use memscape_topology::Topology;

use super::histograms::{HistogramSpec, Layout, MarkerSet, glyph_title, histograms, marks_of};
use super::histograms_draw::{self as hdraw, Drawn};
use super::settings::{SamplesChart, SamplesSettings};
use super::shared::{BIN_RANGE, Base, TOP_OFFENDERS, default_axes};
use super::topology_draw::{self as draw, BACKGROUND, Measure, NodeValues};
use crate::dataset::{Dataset, DatasetContent};
use crate::error::{Context as _, Result};
use crate::label::Label;
use crate::picture::Picture;

/// The linked selection the arguments describe.
pub fn selection_spec(
    samples: &Samples,
    base: &Base,
    args: &SamplesSettings,
) -> Result<SelectionSpec> {
    let mut spec = SelectionSpec::default();
    for text in &args.select {
        let range = RangeSpec::parse(text).context("--select")?;
        spec.set_brush(AxisBrush::from_range(&base.index, &range).context("--select")?);
    }
    let mut pick = |key: OffenderKey, name: &str, what: &str| -> Result<()> {
        let labels = match key {
            OffenderKey::SourceLine => &samples.source_lines,
            OffenderKey::Symbol => &samples.symbols,
        };
        crate::ensure!(
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
        let label = format!("{what} {name}");
        let these = Picked::offender(samples, key, name, label.clone());
        spec.picked = Some(match spec.picked.take() {
            Some(old) => old.and(&these, format!("{} and {label}", old.label)),
            None => these,
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

fn full_rect(size: egui::Vec2) -> egui::Rect {
    egui::Rect::from_min_size(egui::Pos2::ZERO, size)
}

fn values(agg: &Aggregate) -> NodeValues<'_> {
    NodeValues {
        level_unknown: &agg.level_unknown,
        samples: &agg.samples,
        cycles: &agg.cycles,
        transfers: &agg.transfers,
    }
}

/// A topology file alone, as a radial picture.
pub fn bare_topology_picture(
    topology: &Topology,
    measure: Measure,
    hovered: Option<u32>,
    size: egui::Vec2,
) -> Picture {
    let mut picture = draw::radial(topology, None, measure, bare_area(size), hovered);
    picture.size = size;
    picture.background = Some(BACKGROUND);
    picture
}

/// Where a bare topology's radial lies.
pub fn bare_area(size: egui::Vec2) -> egui::Rect {
    full_rect(size).shrink(8.0)
}

/// The samples of `dataset` mapped, binned as `settings` say, with the selection and its
/// linked result.
pub fn linked(
    dataset: &Dataset,
    samples: &Samples,
    settings: &SamplesSettings,
) -> Result<(Base, SelectionSpec, LinkedResult)> {
    let base = Base::build(
        samples,
        std::path::Path::new(&dataset.name),
        settings.hardware.as_deref(),
    )
    .with_context(|| format!("{}: mapping the samples onto the hardware", dataset.name))?;
    let base = match settings.histogram_bins {
        None => base,
        Some(n) => {
            crate::ensure!(
                BIN_RANGE.contains(&n),
                "--histogram-bins {n}: expected {} to {}",
                BIN_RANGE.start(),
                BIN_RANGE.end()
            );
            base.rebinned(samples, n)
        }
    };
    let spec = selection_spec(samples, &base, settings)?;
    let result =
        memscape_samples::recompute(samples, &base.mapping, &base.index, &spec, TOP_OFFENDERS);
    Ok((base, spec, result))
}

/// The samples view of `dataset` as `settings` say, at `size` points.
pub fn compose(dataset: &Dataset, settings: &SamplesSettings, size: egui::Vec2) -> Result<Picture> {
    match &dataset.content {
        DatasetContent::Topology(topology) => {
            crate::ensure!(
                settings.chart == SamplesChart::Topology,
                "{}: a topology alone has no offenders or histograms; give the samples file",
                dataset.name
            );
            Ok(bare_topology_picture(
                topology,
                settings.measure,
                None,
                size,
            ))
        }
        DatasetContent::Samples(samples) => {
            let (base, spec, result) = linked(dataset, samples, settings)?;
            match settings.chart {
                SamplesChart::Offenders => Ok(offenders_picture(&base, &result, size)),
                SamplesChart::Histograms | SamplesChart::Histogram => {
                    histograms_view(samples, &base, &spec, &result, settings, size)
                }
                SamplesChart::Topology => Ok(radial_picture(
                    samples,
                    &base,
                    &spec,
                    &result,
                    settings.measure,
                    size,
                )),
            }
        }
        _ => crate::bail!(
            "{}: the samples views need samples (MemAxes/Mitos CSV, perf script) or a topology (hwloc XML)",
            dataset.name
        ),
    }
}

/// The radial topology of the selection with its header lines (what, on which topology, and
/// the selection).
pub fn radial_picture(
    samples: &Samples,
    base: &Base,
    spec: &SelectionSpec,
    result: &LinkedResult,
    measure: Measure,
    size: egui::Vec2,
) -> Picture {
    let selection = (!result.everything).then(|| SelectionLine {
        what: spec.describe(&base.index),
        samples: result.summary.samples,
        share: result.summary.share,
    });
    radial_picture_of(
        &base.topology,
        &result.aggregate,
        samples.len() as u64,
        selection.as_ref(),
        measure,
        size,
    )
}

/// A selection as the samples views' headers state it.
#[derive(Debug, Clone, PartialEq)]
pub struct SelectionLine {
    /// `SelectionSpec::describe`'s words.
    pub what: String,
    /// Selected samples and their share of all.
    pub samples: u64,
    pub share: f64,
}

/// [`radial_picture`] of totals computed elsewhere (the query engine over a Parquet samples
/// dataset): `aggregate` of the selection on `topology`, out of `total` samples.
pub fn radial_picture_of(
    topology: &Topology,
    aggregate: &Aggregate,
    total: u64,
    selection: Option<&SelectionLine>,
    measure: Measure,
    size: egui::Vec2,
) -> Picture {
    let full = full_rect(size);
    // Room for the header's line, and a second one when there is a selection.
    let area = if selection.is_none() {
        egui::Rect::from_min_max(
            full.min + egui::vec2(8.0, 26.0),
            full.max - egui::vec2(8.0, 8.0),
        )
    } else {
        egui::Rect::from_min_max(
            full.min + egui::vec2(8.0, 40.0),
            full.max - egui::vec2(8.0, 8.0),
        )
    };
    let mut pic = draw::radial(topology, Some(&values(aggregate)), measure, area, None);
    pic.size = size;
    pic.background = Some(BACKGROUND);
    // With a selection, what it is on a line of its own.
    let what = match selection {
        None => format!("{total} samples"),
        Some(sel) => {
            pic.labels.push(Label::new(
                egui::pos2(8.0, 24.0),
                format!("selection: {} ({:.1} %)", sel.what, sel.share * 100.0),
                12.0,
                egui::Color32::from_rgb(243, 168, 58),
                egui::Align2::LEFT_TOP,
            ));
            format!("{} of {total} samples", sel.samples)
        }
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
            measure.name()
        ),
        12.0,
        egui::Color32::from_gray(210),
        egui::Align2::LEFT_TOP,
    ));
    pic
}

/// The offender charts of the selection, side by side: per source line, per data symbol.
pub fn offenders_picture(base: &Base, result: &LinkedResult, size: egui::Vec2) -> Picture {
    let mut pic = Picture::new(size, BACKGROUND);
    pic.extend(offender_charts(base, result, offender_rects(size), ""));
    pic
}

/// Where [`offenders_picture`]'s two charts lie: the left and right halves.
fn offender_rects(size: egui::Vec2) -> [egui::Rect; 2] {
    let full = full_rect(size);
    let half = full.width() * 0.5;
    [
        egui::Rect::from_min_size(full.min, egui::vec2(half, full.height())).shrink(8.0),
        egui::Rect::from_min_size(
            full.min + egui::vec2(half, 0.0),
            egui::vec2(half, full.height()),
        )
        .shrink(8.0),
    ]
}

/// The rows of the two offender charts (the whole data's top lines and symbols) and, under a
/// selection, the selected (samples, cycles) of each row.
#[derive(Debug, Clone, Copy)]
pub struct OffenderRows<'a> {
    pub lines: &'a [memscape_samples::Offender],
    pub lines_selected: Option<&'a [(u64, u64)]>,
    pub symbols: &'a [memscape_samples::Offender],
    pub symbols_selected: Option<&'a [(u64, u64)]>,
}

/// [`offenders_picture`] of rows computed elsewhere (the query engine).
pub fn offenders_picture_of(rows: OffenderRows<'_>, size: egui::Vec2) -> Picture {
    let mut pic = Picture::new(size, BACKGROUND);
    pic.extend(offender_charts_of(rows, offender_rects(size), ""));
    pic
}

/// The two offender charts (lines, symbols) in `rects`, each bar's selected part over the
/// whole; `hint` follows their titles.
pub fn offender_charts(
    base: &Base,
    result: &LinkedResult,
    rects: [egui::Rect; 2],
    hint: &str,
) -> Picture {
    let selected = |key| (!result.everything).then(|| base.selected_rows(result, key));
    offender_charts_of(
        OffenderRows {
            lines: &base.lines,
            lines_selected: selected(OffenderKey::SourceLine).as_deref(),
            symbols: &base.symbols,
            symbols_selected: selected(OffenderKey::Symbol).as_deref(),
        },
        rects,
        hint,
    )
}

/// Each chart with the legend of its colours under it (one place for `render`, the pane and
/// SVG export).
fn offender_charts_of(rows: OffenderRows<'_>, rects: [egui::Rect; 2], hint: &str) -> Picture {
    let mut pic = Picture::default();
    for (what, rows, selected, rect) in [
        ("source line", rows.lines, rows.lines_selected, rects[0]),
        ("data symbol", rows.symbols, rows.symbols_selected, rects[1]),
    ] {
        pic.extend(draw::offenders(
            &format!("total latency per {what}{hint}"),
            rows,
            selected,
            rect,
        ));
        pic.extend(draw::offender_legend(rows, selected.is_some(), rect));
    }
    pic
}

/// The topology pane's picture: the radial topology of the selection on the left (`hovered`
/// outlined) and, when there is room, the offender charts stacked on the right. Returns the
/// radial's area and the charts' rectangles for hit testing.
pub fn topology_pane_picture(
    base: &Base,
    result: &LinkedResult,
    measure: Measure,
    hovered: Option<u32>,
    size: egui::Vec2,
) -> (Picture, egui::Rect, Option<[egui::Rect; 2]>) {
    let local = full_rect(size);
    let areas = topology_pane_areas(size);
    let mut picture = draw::radial(
        &base.topology,
        Some(&values(&result.aggregate)),
        measure,
        areas.0,
        hovered,
    );
    picture.size = size;
    picture.background = Some(BACKGROUND);
    if let Some(charts) = areas.1 {
        picture.extend(offender_charts(base, result, charts, " (click: select)"));
    }
    let _ = local;
    (picture, areas.0, areas.1)
}

/// The topology pane's radial area and, when wide enough, its two chart rectangles.
pub fn topology_pane_areas(size: egui::Vec2) -> (egui::Rect, Option<[egui::Rect; 2]>) {
    let local = full_rect(size);
    let with_offenders = size.x > 600.0;
    let radial_area = if with_offenders {
        egui::Rect::from_min_size(local.min, egui::vec2(local.width() * 0.55, local.height()))
    } else {
        local
    }
    .shrink(8.0);
    let charts = with_offenders.then(|| {
        let x = local.width() * 0.55;
        let w = local.width() - x;
        [
            egui::Rect::from_min_size(egui::pos2(x, 0.0), egui::vec2(w, local.height() * 0.5))
                .shrink(6.0),
            egui::Rect::from_min_size(
                egui::pos2(x, local.height() * 0.5),
                egui::vec2(w, local.height() * 0.5),
            )
            .shrink(6.0),
        ]
    });
    (radial_area, charts)
}

/// Everything the histograms picture shows besides the selection: the layout, the strips, the
/// cluster tree cut into `clusters`, and the expanded glyph (cluster index and its aggregate).
pub struct HistogramInputs<'a> {
    pub layout: &'a Layout,
    pub scale: hdraw::Scale,
    pub strips: &'a [(usize, Arc<Vec<WindowScore>>)],
    /// The cluster tree and the axis of its markers.
    pub tree: Option<(usize, &'a ClusterTree)>,
    pub clusters: usize,
    pub glyph: Option<(usize, &'a Aggregate)>,
    /// Lines at the top right saying what the strips and markers are (headless).
    pub legend: &'a [String],
}

impl<'a> HistogramInputs<'a> {
    /// What `render` shows: the settings' bar scale and cluster count, the markers of `tree`
    /// and the expanded `glyph` as [`cluster_markers`] and [`cluster_glyph`] made them.
    pub fn headless(
        settings: &SamplesSettings,
        layout: &'a Layout,
        strips: &'a [(usize, Arc<Vec<WindowScore>>)],
        tree: &'a Option<(usize, ClusterTree)>,
        glyph: &'a Option<(usize, Aggregate)>,
        legend: &'a [String],
    ) -> Self {
        Self {
            layout,
            scale: settings.bars,
            strips,
            tree: tree.as_ref().map(|(a, t)| (*a, t)),
            clusters: settings.clusters,
            glyph: glyph.as_ref().map(|(i, agg)| (*i, agg)),
            legend,
        }
    }
}

/// Where the histograms lie: under the selection panel and legend (`header`), else the whole
/// picture.
pub fn histogram_area(size: egui::Vec2, header: bool) -> egui::Rect {
    let full = full_rect(size);
    if header {
        egui::Rect::from_min_max(
            full.min + egui::vec2(6.0, 58.0),
            full.max - egui::vec2(6.0, 6.0),
        )
    } else {
        full.shrink(6.0)
    }
}

/// Width of the column that holds an expanded cluster glyph beside the histograms.
const GLYPH_COLUMN: f32 = 240.0;

/// The histograms' area and, with cluster markers in a wide enough area, the column at its
/// right where a marker's glyph is drawn (so that the glyph never covers an axis).
pub fn glyph_column(area: egui::Rect, markers: bool) -> (egui::Rect, Option<egui::Rect>) {
    if !markers || area.width() < 3.0 * GLYPH_COLUMN {
        return (area, None);
    }
    let column = egui::Rect::from_min_max(
        egui::pos2(area.right() - GLYPH_COLUMN, area.top()),
        area.max,
    );
    let rest = egui::Rect::from_min_max(area.min, egui::pos2(column.left() - 8.0, area.bottom()));
    (rest, Some(column))
}

/// The histograms of the selection with strips, markers and the expanded glyph; with `header`
/// the selection panel and the legend above them (the pane shows those as widgets). Returns the
/// geometry too, for the pane's hit testing.
pub fn histogram_picture(
    base: &Base,
    spec: &SelectionSpec,
    result: &LinkedResult,
    inputs: &HistogramInputs<'_>,
    size: egui::Vec2,
    header: bool,
) -> (Picture, Drawn) {
    histogram_picture_of(
        &base.index,
        &base.topology,
        spec,
        result,
        inputs,
        size,
        header,
    )
}

/// [`histogram_picture`] of bins counted elsewhere (the query engine over a Parquet samples
/// dataset): `index`'s axes and `result`'s selected bins and summary, glyphs on `topology`.
pub fn histogram_picture_of(
    index: &LinkedIndex,
    topology: &Topology,
    spec: &SelectionSpec,
    result: &LinkedResult,
    inputs: &HistogramInputs<'_>,
    size: egui::Vec2,
    header: bool,
) -> (Picture, Drawn) {
    let (area, glyph_column) = glyph_column(histogram_area(size, header), inputs.tree.is_some());
    let marker_set = inputs.tree.map(|(axis, t)| MarkerSet {
        axis,
        marks: marks_of(t, inputs.clusters),
    });
    let hs = HistogramSpec {
        layout: inputs.layout,
        scale: inputs.scale,
        strips: inputs.strips,
        markers: marker_set.as_ref(),
        hovered_marker: inputs.glyph.map(|(i, _)| i),
    };
    let mut drawn = histograms(index, result, spec, &hs, area);
    let mut pic = if header {
        hdraw::panel(
            &result.summary,
            &spec.describe(index),
            egui::pos2(10.0, 8.0),
        )
    } else {
        Picture::default()
    };
    pic.size = size;
    pic.background = Some(BACKGROUND);
    for (k, line) in inputs.legend.iter().enumerate() {
        pic.labels.push(Label::new(
            egui::pos2(size.x - 10.0, 8.0 + 16.0 * k as f32),
            line,
            11.0,
            egui::Color32::from_gray(170),
            egui::Align2::RIGHT_TOP,
        ));
    }
    if let (Some((i, agg)), Some((_, t)), Some(set)) = (inputs.glyph, inputs.tree, &marker_set)
        && let (Some(mark), Some(m)) = (
            set.marks.get(i),
            drawn.markers.iter().find(|m| m.cluster == i).cloned(),
        )
    {
        // In its own column when there is one (beside the histograms, at the marker's
        // height), else next to the marker.
        let (anchor, bounds) = match glyph_column {
            Some(c) => (egui::pos2(c.left() - 14.0, m.center.y), c),
            None => (m.center, area),
        };
        let glyph = hdraw::glyph(
            topology,
            &values(agg),
            &glyph_title(t, mark),
            anchor,
            bounds,
        );
        // Histogram labels under the glyph's box would show through it.
        if let Some(first) = glyph.shapes.first()
            && let memscape_render::shapes::Geometry::Rect { min, max, .. } = first.geometry
        {
            let r =
                egui::Rect::from_min_max(egui::pos2(min[0], min[1]), egui::pos2(max[0], max[1]));
            drawn.picture.labels.retain(|l| !r.contains(l.pos));
        }
        drawn.picture.extend(glyph);
    }
    pic.extend(std::mem::take(&mut drawn.picture));
    (pic, drawn)
}

/// The aggregate of cluster `i` of `tree` cut into `clusters` (a glyph's values).
pub fn cluster_aggregate(
    samples: &Samples,
    base: &Base,
    tree: &ClusterTree,
    clusters: usize,
    i: usize,
) -> Option<Aggregate> {
    let node = tree.cut(clusters).get(i).copied()?;
    if tree.keyed.is_some() {
        return tree.aggregate(node, &base.topology);
    }
    // An engine's tree past its budget of keyed totals has neither: no glyph.
    if tree.order.is_empty() {
        return None;
    }
    Some(base.mapping.aggregate_order(
        samples,
        &tree.order,
        node.positions[0] as usize..node.positions[1] as usize,
    ))
}

/// `memscape render --view histograms|histogram`: axes, strips and the cluster tree computed
/// here, as the settings say.
fn histograms_view(
    samples: &Samples,
    base: &Base,
    spec: &SelectionSpec,
    result: &LinkedResult,
    settings: &SamplesSettings,
    size: egui::Vec2,
) -> Result<Picture> {
    let index = &base.index;
    let layout = histogram_layout(index, settings)?;
    let shown = layout.axes();
    let (metric, kind) = (settings.cluster_metric, settings.cluster_depth.0);
    let mut legend: Vec<String> = Vec::new();
    let mut strips = Vec::new();
    if settings.strips > 0 {
        for &a in &shown {
            let s = memscape_samples::linked::axis_scores(
                samples,
                &base.topology,
                &base.mapping,
                index,
                a,
                settings.strips,
                metric.0,
                kind,
            )?;
            strips.push((a, Arc::new(s)));
        }
        legend.push(strips_legend(settings));
    }
    let tree = cluster_markers(index, &shown, settings, &mut legend, |params| {
        Ok(cluster_tree(
            samples,
            &base.topology,
            &base.mapping,
            params,
            None,
        )?)
    })?;
    let glyph = cluster_glyph(settings, &tree, |t, i| {
        cluster_aggregate(samples, base, t, settings.clusters, i)
    })?;
    let inputs = HistogramInputs::headless(settings, &layout, &strips, &tree, &glyph, &legend);
    headless_histograms(&base.index, &base.topology, spec, result, &inputs, size)
}

/// The histograms picture `render` draws, from the samples or from a query engine alike: with
/// its header, and an error when `--glyph` names a cluster that has no marker in the cut.
pub fn headless_histograms(
    index: &LinkedIndex,
    topology: &Topology,
    spec: &SelectionSpec,
    result: &LinkedResult,
    inputs: &HistogramInputs<'_>,
    size: egui::Vec2,
) -> Result<Picture> {
    let (picture, drawn) = histogram_picture_of(index, topology, spec, result, inputs, size, true);
    if let Some((i, _)) = inputs.glyph {
        crate::ensure!(
            drawn.markers.iter().any(|m| m.cluster == i),
            "--glyph {i}: the cut has no such marker"
        );
    }
    Ok(picture)
}

/// The cluster tree the settings ask for along one of the `shown` axes (`--cluster-attribute`),
/// built by `build` (from the samples, or by a query engine), its legend line pushed on
/// `legend`: what the markers are drawn from.
pub fn cluster_markers(
    index: &LinkedIndex,
    shown: &[usize],
    settings: &SamplesSettings,
    legend: &mut Vec<String>,
    build: impl FnOnce(ClusterParams) -> Result<ClusterTree>,
) -> Result<Option<(usize, ClusterTree)>> {
    let Some(attr) = &settings.cluster_attribute else {
        crate::ensure!(
            settings.glyph.is_none(),
            "--glyph needs --cluster-attribute"
        );
        return Ok(None);
    };
    let a = axis_named(index, attr, "--cluster-attribute")?;
    crate::ensure!(
        shown.contains(&a),
        "--cluster-attribute {attr}: the axis is not shown (see --axes / --histogram-attribute)"
    );
    let (metric, kind) = (settings.cluster_metric, settings.cluster_depth.0);
    let t = build(ClusterParams {
        attribute: index.axes[a].attribute.clone(),
        metric: metric.0,
        kind,
        window: settings.cluster_window,
        step: settings.cluster_step,
    })?;
    legend.push(format!(
        "markers: {} clusters along {attr} by {kind} {metric} (w {}, Δ {}; {} windows)",
        t.cut(settings.clusters).len(),
        settings.cluster_window,
        settings.cluster_step,
        t.leaves
    ));
    Ok(Some((a, t)))
}

/// The glyph `--glyph` asks for: cluster i's per-resource totals (`aggregate(tree, i)`).
pub fn cluster_glyph(
    settings: &SamplesSettings,
    tree: &Option<(usize, ClusterTree)>,
    aggregate: impl FnOnce(&ClusterTree, usize) -> Option<Aggregate>,
) -> Result<Option<(usize, Aggregate)>> {
    let (Some(i), Some((_, t))) = (settings.glyph, tree) else {
        return Ok(None);
    };
    let cut = t.cut(settings.clusters).len();
    let agg = aggregate(t, i)
        .with_context(|| format!("--glyph {i}: the cut has {cut} clusters (0-based)"))?;
    Ok(Some((i, agg)))
}

/// The axis of attribute `name`, or an error naming `flag` and the attributes there are.
fn axis_named(index: &LinkedIndex, name: &str, flag: &str) -> Result<usize> {
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
}

/// The axes `settings` ask the histograms view to show: one attribute (`--view histogram`),
/// `--axes`, or every axis with more than one non-empty bin.
pub fn histogram_layout(index: &LinkedIndex, settings: &SamplesSettings) -> Result<Layout> {
    Ok(if settings.chart == SamplesChart::Histogram {
        let name = settings
            .histogram_attribute
            .as_deref()
            .or(settings.cluster_attribute.as_deref())
            .unwrap_or("latency");
        Layout::Single(axis_named(index, name, "--histogram-attribute")?)
    } else if settings.axes.is_empty() {
        Layout::Parallel(default_axes(index))
    } else {
        Layout::Parallel(
            settings
                .axes
                .iter()
                .map(|a| axis_named(index, a, "--axes"))
                .collect::<Result<_>>()?,
        )
    })
}

/// The legend line of the strips `settings` ask for.
pub fn strips_legend(settings: &SamplesSettings) -> String {
    format!(
        "strips: {} {} per window ({} windows; blue low, red high per axis)",
        settings.cluster_depth.0, settings.cluster_metric, settings.strips
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use memscape_render::shapes::Geometry;

    fn rows(n: u64) -> Vec<memscape_samples::Offender> {
        (0..n)
            .map(|i| memscape_samples::Offender {
                name: format!("f.c:{i}"),
                samples: 100 - i,
                cycles: 1_000_000 / (i + 1),
            })
            .collect()
    }

    /// The offender bars are coloured (by latency, or whole/selected): each chart says what
    /// the colours mean under its last bar, inside its half of the picture.
    #[test]
    fn offender_charts_carry_the_legend_of_their_colours() {
        let rows = rows(20);
        let selection: Vec<(u64, u64)> = rows.iter().map(|r| (1, r.cycles / 2)).collect();
        for selected in [None, Some(selection.as_slice())] {
            let size = egui::vec2(960.0, 420.0);
            let pic = offenders_picture_of(
                OffenderRows {
                    lines: &rows,
                    lines_selected: selected,
                    symbols: &rows,
                    symbols_selected: selected,
                },
                size,
            );
            let caption = if selected.is_some() {
                "selected samples' part"
            } else {
                "bar colour: total latency"
            };
            let captions: Vec<&Label> = pic.labels.iter().filter(|l| l.text == caption).collect();
            assert_eq!(captions.len(), 2, "one legend per chart");
            // Under every bar, inside the picture.
            let bars_bottom = pic
                .shapes
                .iter()
                .filter_map(|s| match &s.geometry {
                    Geometry::Rect { max, .. } if max[1] < captions[0].pos.y => Some(max[1]),
                    _ => None,
                })
                .fold(0.0f32, f32::max);
            let rows_bottom = (0..rows.len())
                .map_while(|i| draw::offender_row(i, rows.len(), offender_rects(size)[0]))
                .last()
                .unwrap()
                .bottom();
            assert!(bars_bottom <= rows_bottom && captions[0].pos.y > rows_bottom);
            assert!(captions.iter().all(|l| l.pos.y + 30.0 < size.y));
            if selected.is_none() {
                // The ramp's ticks are in cycles, from 0.
                assert!(
                    pic.labels.iter().any(|l| l.text.ends_with(" cyc")),
                    "ramp ticks: {:?}",
                    pic.labels.iter().map(|l| &l.text).collect::<Vec<_>>()
                );
            } else {
                assert!(pic.labels.iter().any(|l| l.text == "whole (all samples)"));
            }
        }
    }
}
