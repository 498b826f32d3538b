//! The samples views of a Parquet samples dataset drawn from the query engine (`--features
//! engine`): the radial topology's per-resource totals (`Engine::resource_totals`), the
//! selection's count (`Engine::sample_count`) and the offender charts' rows
//! (`Engine::top_offenders`, the whole data's and the selection's) are the engine's, drawn by
//! memscape-views' `radial_picture_of` and `offenders_picture_of`; the parallel and single
//! histograms' bins of every attribute with the selection marked (`Engine::histogram`), the
//! selection panel (`Engine::selection_summary`) and the window-score strips
//! (`Engine::axis_scores`), the cluster markers (`Engine::cluster_tree`) and a cluster's
//! glyph (summed from the tree's segment totals) are drawn by `headless_histograms`: the
//! pictures the samples in memory give, without reading the samples here. Selections of
//! ranges of quantitative attributes (`--select ATTR=LO..HI`, one per attribute); picked
//! offenders and qualitative ranges are drawn from the samples read in full (the views'
//! linked index).

use std::path::Path;

use memscape_views::picture::Picture;
use memscape_views::samples::SamplesSettings;

/// Whether `path` is a Parquet samples dataset.
pub fn is_samples_dataset(path: &Path) -> bool {
    path.is_dir()
        && memscape_parquet::dataset_kind(path) == Some(memscape_parquet::DatasetKind::Samples)
}

/// The picture `settings` ask of the samples dataset `dir`, from the engine `spec` names, and
/// a line saying what computed it; `None` for what the engine does not draw (see the module).
#[cfg(feature = "engine")]
pub fn picture(
    dir: &Path,
    spec: &str,
    settings: &SamplesSettings,
    size: egui::Vec2,
) -> anyhow::Result<Option<(Picture, String)>> {
    use anyhow::Context as _;
    use memscape_engine::{Engine, EngineSpec};
    use memscape_samples::linked::short;
    use memscape_samples::{OffenderKey, RangeSpec};
    use memscape_views::samples::compose::{
        OffenderRows, SelectionLine, offenders_picture_of, radial_picture_of,
    };
    use memscape_views::samples::settings::SamplesChart;
    use memscape_views::samples::shared::TOP_OFFENDERS;
    if settings.select_line.is_some() || settings.select_symbol.is_some() {
        return Ok(None);
    }
    let start = std::time::Instant::now();
    let spec = EngineSpec::parse(spec)?;
    let mut engine = Engine::connect(&spec).with_context(|| format!("--engine {spec:?}"))?;
    if let Some(entries) = super::engine_samples_query::keyed_entries_max()? {
        engine = engine.with_keyed_entries_max(entries);
    }
    let dataset = engine.open(dir)?;
    // The selection, as the views state it (`SelectionSpec::describe`: brushes in order).
    let mut ranges: Vec<RangeSpec> = Vec::new();
    let mut words = Vec::new();
    for text in &settings.select {
        let range = RangeSpec::parse(text).context("--select")?;
        let (name, quantitative) =
            engine.quantitative_attribute(&dataset, None, &range.attribute)?;
        // A second range on one attribute replaces the first in the views' selection.
        if !quantitative || ranges.iter().any(|r| r.attribute == name) {
            return Ok(None);
        }
        words.push(format!(
            "{name} in [{}, {}]",
            short(range.lo.unwrap_or(f64::NEG_INFINITY)),
            short(range.hi.unwrap_or(f64::INFINITY))
        ));
        ranges.push(RangeSpec {
            attribute: name,
            ..range
        });
    }
    let total = engine.sample_count(&dataset, None, &[])?;
    let selection = if ranges.is_empty() {
        None
    } else {
        let n = engine.sample_count(&dataset, None, &ranges)?;
        Some(SelectionLine {
            what: words.join(" and "),
            samples: n,
            share: if total == 0 {
                0.0
            } else {
                n as f64 / total as f64
            },
        })
    };
    let picture = match settings.chart {
        SamplesChart::Histograms | SamplesChart::Histogram => {
            let bins = settings
                .histogram_bins
                .unwrap_or(memscape_views::samples::shared::QUANTITATIVE_BINS);
            // Out of range: the native path says so.
            if !memscape_views::samples::shared::BIN_RANGE.contains(&bins) {
                return Ok(None);
            }
            histograms_picture(&engine, &dataset, dir, settings, &ranges, bins, size)?
        }
        SamplesChart::Topology => {
            let hardware = settings
                .hardware
                .clone()
                .or_else(|| memscape_samples::report::default_hardware(dir));
            let topology = memscape_topology::Topology::load(hardware.as_deref())?;
            let aggregate = engine.resource_totals(&dataset, None, &topology, &ranges)?;
            radial_picture_of(
                &topology,
                &aggregate,
                total,
                selection.as_ref(),
                settings.measure,
                size,
            )
        }
        _ => {
            let rows = |key| engine.top_offenders(&dataset, None, key, &[], TOP_OFFENDERS);
            let (lines, symbols) = (rows(OffenderKey::SourceLine)?, rows(OffenderKey::Symbol)?);
            // Under a selection, each row's selected part (rows the selection misses: none).
            let selected = |key, rows: &[memscape_samples::Offender]| -> anyhow::Result<_> {
                if ranges.is_empty() {
                    return Ok(None);
                }
                let all = engine.top_offenders(&dataset, None, key, &ranges, usize::MAX)?;
                let by_name: std::collections::HashMap<&str, (u64, u64)> = all
                    .iter()
                    .map(|o| (o.name.as_str(), (o.samples, o.cycles)))
                    .collect();
                Ok(Some(
                    rows.iter()
                        .map(|r| by_name.get(r.name.as_str()).copied().unwrap_or((0, 0)))
                        .collect::<Vec<_>>(),
                ))
            };
            let lines_selected = selected(OffenderKey::SourceLine, &lines)?;
            let symbols_selected = selected(OffenderKey::Symbol, &symbols)?;
            offenders_picture_of(
                OffenderRows {
                    lines: &lines,
                    lines_selected: lines_selected.as_deref(),
                    symbols: &symbols,
                    symbols_selected: symbols_selected.as_deref(),
                },
                size,
            )
        }
    };
    let how = format!(
        "samples {} computed by {:?} in {:.2} s",
        match settings.chart {
            SamplesChart::Topology => "per resource",
            SamplesChart::Offenders => "per source line and data symbol",
            _ if settings.cluster_attribute.is_some() => "per histogram bin, window and cluster",
            _ if settings.strips > 0 => "per histogram bin and window",
            _ => "per histogram bin",
        },
        engine.spec(),
        start.elapsed().as_secs_f64()
    );
    Ok(Some((picture, how)))
}

/// The histograms (parallel or single) of the dataset from the engine's bins of every
/// attribute (`Engine::histogram`, `bins` bins, the selection `ranges` marked), its selection
/// panel (`Engine::selection_summary`) and its strips (`Engine::axis_scores`), drawn by
/// memscape-views' `headless_histograms` as the samples in memory draw them.
#[cfg(feature = "engine")]
fn histograms_picture(
    engine: &memscape_engine::Engine,
    dataset: &memscape_engine::Dataset,
    dir: &Path,
    settings: &SamplesSettings,
    ranges: &[memscape_samples::RangeSpec],
    bins: usize,
    size: egui::Vec2,
) -> anyhow::Result<Picture> {
    use std::sync::Arc;

    use anyhow::Context as _;
    use memscape_samples::{
        AxisBrush, AxisIndex, Bitset, LinkedIndex, LinkedResult, SelectionSpec,
    };
    use memscape_views::samples::compose::{
        HistogramInputs, cluster_glyph, cluster_markers, headless_histograms, histogram_layout,
        strips_legend,
    };
    let mut axes = Vec::new();
    let mut histograms = Vec::new();
    for (column, name) in engine.attributes(dataset, None)?.iter().enumerate() {
        let h = engine.histogram(dataset, None, name, bins, ranges)?;
        axes.push(AxisIndex::of_histogram(h.clone(), column));
        histograms.push(h);
    }
    let summary = engine.selection_summary(
        dataset,
        None,
        &memscape_engine::samples::Selection::of_ranges(ranges),
    )?;
    let total = engine.sample_count(dataset, None, &[])? as usize;
    let index = LinkedIndex::of_axes(axes, bins, total);
    let mut spec = SelectionSpec::default();
    for range in ranges {
        spec.set_brush(AxisBrush::from_range(&index, range).context("--select")?);
    }
    let empty = memscape_samples::Aggregate {
        samples: Vec::new(),
        cycles: Vec::new(),
        transfers: Vec::new(),
        level_unknown: Vec::new(),
    };
    let result = LinkedResult {
        selection: Bitset::new(0),
        everything: spec.is_everything(),
        aggregate: empty,
        selected_bins: histograms
            .iter()
            .map(|h| h.bins.iter().map(|b| b.selected).collect())
            .collect(),
        top_lines: Vec::new(),
        top_symbols: Vec::new(),
        line_totals: Vec::new(),
        symbol_totals: Vec::new(),
        summary,
    };
    let layout = histogram_layout(&index, settings)?;
    let shown = layout.axes();
    let hardware = settings
        .hardware
        .clone()
        .or_else(|| memscape_samples::report::default_hardware(dir));
    let topology = memscape_topology::Topology::load(hardware.as_deref())?;
    let mut strips = Vec::new();
    let mut legend = Vec::new();
    if settings.strips > 0 {
        for &a in &shown {
            let scores = engine.axis_scores(
                dataset,
                None,
                &topology,
                &histograms[a],
                settings.strips,
                settings.cluster_metric.0,
                settings.cluster_depth.0,
            )?;
            strips.push((a, Arc::new(scores)));
        }
        legend.push(strips_legend(settings));
    }
    let tree = cluster_markers(&index, &shown, settings, &mut legend, |params| {
        engine
            .cluster_tree(dataset, None, &topology, params)
            .map_err(|e| memscape_views::error::ViewError::from(e.to_string()))
    })?;
    // Past the engine's budget of per-segment totals the tree has none: the glyph is a query.
    let glyph = cluster_glyph(settings, &tree, |t, i| {
        let node = t.cut(settings.clusters).get(i).copied()?;
        t.aggregate(node, &topology).or_else(|| {
            engine
                .cluster_aggregate(dataset, None, &topology, &t.span(node))
                .map_err(|e| tracing::error!("--glyph {i}: {e}"))
                .ok()
        })
    })?;
    let inputs = HistogramInputs::headless(settings, &layout, &strips, &tree, &glyph, &legend);
    Ok(headless_histograms(
        &index, &topology, &spec, &result, &inputs, size,
    )?)
}

/// Without the engine, a samples dataset's views are drawn from its samples, read in full.
#[cfg(not(feature = "engine"))]
pub fn picture(
    _dir: &Path,
    _spec: &str,
    _settings: &SamplesSettings,
    _size: egui::Vec2,
) -> anyhow::Result<Option<(Picture, String)>> {
    Ok(None)
}
