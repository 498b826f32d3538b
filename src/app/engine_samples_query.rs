//! The GUI's samples panes on a Parquet samples dataset drawn from the query engine
//! (`--features engine`): the histograms' bins of every attribute, the offender rows, each
//! selection's per-resource totals, marked bins, offender parts and panel, and the strips are
//! the engine's (`memscape_views::samples::query::SamplesQuery`, asked by the samples workers
//! off the UI thread). Selections of quantitative ranges, qualitative values and offender bars
//! are stated to the engine (`memscape_engine::samples::Selection`), and so are clusters
//! picked (each a span of the (value, row) order); the cluster trees are the engine's
//! (`Engine::cluster_tree`: segment totals by route key, placed and merged by
//! memscape-samples), their glyphs summed from those totals — or, for a tree past the
//! engine's budget of them (`keyed_entries_max`), each asked of the engine as the pointer
//! hovers it (`Engine::cluster_aggregate`, on the `samples-glyph` thread). What the engine cannot state is
//! computed from the samples read in memory, with the mapping `Mapping::new` gives them: on a
//! dataset opened by the GUI, its first samples only (`dataset::load_samples_head`), which the
//! panes then say.

use std::path::Path;

use memscape_views::Dataset;

/// Makes the samples panes of `dataset`, loaded from the Parquet samples dataset `dir`, draw
/// from the engine `spec` names (without the engine they draw from the samples read in full).
pub fn attach(dataset: &Dataset, dir: &Path, spec: &str) -> anyhow::Result<()> {
    attach_with(dataset, dir, spec, keyed_entries_max()?)
}

/// [`attach`] with the cluster trees' budget of per-segment totals (`keyed_entries`; None:
/// the engine's default, `memscape_engine::clusters::KEYED_ENTRIES_MAX`), past which each
/// hovered cluster's glyph is a query of its own.
pub fn attach_with(
    dataset: &Dataset,
    dir: &Path,
    spec: &str,
    keyed_entries: Option<usize>,
) -> anyhow::Result<()> {
    use anyhow::Context as _;
    use memscape_engine::{Engine, EngineSpec};
    let spec = EngineSpec::parse(spec)?;
    let mut engine = match spec {
        // Beside the window: plans bounded, spilling past it (a cluster tree sorts every
        // sample by value).
        EngineSpec::Embedded => Engine::embedded_bounded(0, memory_limit()?),
        _ => Engine::connect(&spec),
    }
    .with_context(|| format!("--engine {spec:?}"))?;
    if let Some(entries) = keyed_entries {
        engine = engine.with_keyed_entries_max(entries);
    }
    let opened = engine.open(dir)?;
    memscape_views::samples::query::attach(
        dataset,
        std::sync::Arc::new(engine_query::EngineSamples {
            engine,
            dataset: opened,
        }),
    );
    Ok(())
}

/// What the GUI's embedded engine may hold before its plans spill to temporary files:
/// `MEMSCAPE_ENGINE_MEMORY` (MiB), else 4 GiB (a cluster tree's sort of 25 M samples fits;
/// at 1 GiB its spilled merge runs out, BENCHMARKS.md "The GUI on a samples dataset without
/// reading it").
pub(super) fn memory_limit() -> anyhow::Result<usize> {
    const DEFAULT_MIB: usize = 4096;
    let mib = match std::env::var("MEMSCAPE_ENGINE_MEMORY") {
        Ok(v) => v.parse().map_err(|e| {
            anyhow::anyhow!("MEMSCAPE_ENGINE_MEMORY={v:?}: not a number of MiB: {e}")
        })?,
        Err(_) => DEFAULT_MIB,
    };
    Ok(mib << 20)
}

/// The cluster trees' budget of per-segment glyph totals, `MEMSCAPE_ENGINE_GLYPH_ENTRIES`
/// (read once, when a dataset is opened or drawn; None: the engine's default): lowered, it
/// shows on a small dataset what 25 M samples and more do, each glyph a query when hovered.
pub fn keyed_entries_max() -> anyhow::Result<Option<usize>> {
    match std::env::var("MEMSCAPE_ENGINE_GLYPH_ENTRIES") {
        Ok(v) => v.parse().map(Some).map_err(|e| {
            anyhow::anyhow!("MEMSCAPE_ENGINE_GLYPH_ENTRIES={v:?}: not a number of entries: {e}")
        }),
        Err(_) => Ok(None),
    }
}

mod engine_query {
    use anyhow::Context as _;
    use memscape_engine::samples::Selection;
    use memscape_samples::metrics::WindowScore;
    use memscape_samples::{
        Aggregate, AxisIndex, Bitset, Brush, ClusterParams, ClusterSpan, ClusterTree, Histogram,
        LinkedIndex, LinkedResult, Mapping, NONE, Offender, OffenderKey, RangeSpec, SelectionSpec,
    };
    use memscape_views::Dataset;
    use memscape_views::samples::query::SamplesQuery;
    use memscape_views::samples::shared::{Base, StripKey, TOP_OFFENDERS, samples_of};

    /// The ranked offender rows of a selection and the selected (samples, cycles) by code.
    type OffenderParts = (Vec<Offender>, Vec<(u64, u64)>);

    pub struct EngineSamples {
        pub engine: memscape_engine::Engine,
        pub dataset: memscape_engine::Dataset,
    }

    impl EngineSamples {
        /// `spec` as the engine states it; None for a pick without terms.
        fn selection(&self, base: &Base, spec: &SelectionSpec) -> Option<Selection> {
            let mut selection = Selection::default();
            for brush in &spec.brushes {
                let axis = base.index.axes.get(brush.axis)?;
                match &brush.brush {
                    // On a text attribute the engine refuses it: computed from the samples.
                    Brush::Range { lo, hi } => {
                        selection.ranges.push(RangeSpec {
                            attribute: axis.attribute.clone(),
                            lo: lo.is_finite().then_some(*lo),
                            hi: hi.is_finite().then_some(*hi),
                        });
                    }
                    Brush::Bins(bins) => {
                        let labels = bins
                            .iter()
                            .filter_map(|&b| axis.bins.get(b as usize)?.label.clone())
                            .collect();
                        selection.values.push((axis.attribute.clone(), labels));
                    }
                }
            }
            if let Some(picked) = &spec.picked {
                selection.picked = Some(picked.terms.clone()?);
            }
            Some(selection)
        }

        /// Every row of `key` over `selection`, ranked, and each of `rows`' part of it by code
        /// (`codes`: the rows' codes in the samples' labels, as `Base::selected_rows` reads).
        fn offender_parts(
            &self,
            key: OffenderKey,
            selection: &Selection,
            rows: &[Offender],
            codes: &[u32],
        ) -> anyhow::Result<OffenderParts> {
            let all =
                self.engine
                    .top_offenders_where(&self.dataset, None, key, selection, usize::MAX)?;
            let by_name: std::collections::HashMap<&str, (u64, u64)> = all
                .iter()
                .map(|o| (o.name.as_str(), (o.samples, o.cycles)))
                .collect();
            let slots = codes
                .iter()
                .filter(|&&c| c != NONE)
                .map(|&c| c as usize + 1)
                .max()
                .unwrap_or(0);
            let mut totals = vec![(0, 0); slots];
            for (row, &code) in rows.iter().zip(codes) {
                if let Some(t) = totals.get_mut(code as usize) {
                    *t = by_name.get(row.name.as_str()).copied().unwrap_or((0, 0));
                }
            }
            let mut top = all;
            top.truncate(TOP_OFFENDERS);
            Ok((top, totals))
        }

        fn linked(
            &self,
            base: &Base,
            spec: &SelectionSpec,
            selection: &Selection,
        ) -> anyhow::Result<LinkedResult> {
            let everything = spec.is_everything();
            let (engine, dataset) = (&self.engine, &self.dataset);
            let aggregate =
                engine.resource_totals_where(dataset, None, &base.topology, selection)?;
            let selected_bins = if everything {
                base.index
                    .axes
                    .iter()
                    .map(|a| a.bins.iter().map(|b| b.count).collect())
                    .collect()
            } else {
                let mut bins = Vec::new();
                for axis in &base.index.axes {
                    let h = engine.histogram_where(
                        dataset,
                        None,
                        &axis.attribute,
                        base.index.quantitative_bins,
                        selection,
                    )?;
                    bins.push(h.bins.iter().map(|b| b.selected).collect());
                }
                bins
            };
            let (top_lines, line_totals) = self.offender_parts(
                OffenderKey::SourceLine,
                selection,
                &base.lines,
                &base.line_codes,
            )?;
            let (top_symbols, symbol_totals) = self.offender_parts(
                OffenderKey::Symbol,
                selection,
                &base.symbols,
                &base.symbol_codes,
            )?;
            let summary = engine.selection_summary(dataset, None, selection)?;
            Ok(LinkedResult {
                // The views read the selection's numbers, never its members, from a query.
                selection: Bitset::new(0),
                everything,
                aggregate,
                selected_bins,
                top_lines,
                top_symbols,
                line_totals,
                symbol_totals,
                summary,
            })
        }
    }

    /// Each offender row's code: its label's among the samples read, else one past them (a
    /// bounded read need not hold every line or symbol), distinct per row, so that each row's
    /// selected part (`offender_parts`) has a slot.
    fn row_codes(rows: &[Offender], labels: &[String]) -> Vec<u32> {
        let mut next = labels.len() as u32;
        Base::offender_codes(rows, labels)
            .into_iter()
            .map(|code| {
                if code != NONE {
                    return code;
                }
                next += 1;
                next - 1
            })
            .collect()
    }

    impl SamplesQuery for EngineSamples {
        fn base(
            &self,
            dataset: &Dataset,
            hardware: Option<&std::path::Path>,
            bins: usize,
        ) -> Result<Base, String> {
            let build = || -> anyhow::Result<Base> {
                let samples = samples_of(dataset).context("the dataset holds no samples")?;
                let hardware = hardware.map(std::path::Path::to_path_buf).or_else(|| {
                    memscape_samples::report::default_hardware(std::path::Path::new(&dataset.name))
                });
                let topology = memscape_topology::Topology::load(hardware.as_deref())?;
                let mapping = Mapping::new(samples, &topology);
                let everything = Selection::default();
                let mut axes = Vec::new();
                for (column, name) in self
                    .engine
                    .attributes(&self.dataset, None)?
                    .iter()
                    .enumerate()
                {
                    let h = self.engine.histogram_where(
                        &self.dataset,
                        None,
                        name,
                        bins,
                        &everything,
                    )?;
                    axes.push(AxisIndex::of_histogram(h, column));
                }
                // A bounded read holds the first samples only: the index counts them all.
                let count = memscape_views::dataset::samples_extent(dataset)
                    .map_or(samples.len(), |e| {
                        usize::try_from(e.total).unwrap_or(usize::MAX)
                    });
                let index = LinkedIndex::of_axes(axes, bins, count);
                let rows = |key, labels: &[String]| -> anyhow::Result<(Vec<Offender>, Vec<u32>)> {
                    let rows = self.engine.top_offenders_where(
                        &self.dataset,
                        None,
                        key,
                        &everything,
                        TOP_OFFENDERS,
                    )?;
                    let codes = row_codes(&rows, labels);
                    Ok((rows, codes))
                };
                let (lines, line_codes) = rows(OffenderKey::SourceLine, &samples.source_lines)?;
                let (symbols, symbol_codes) = rows(OffenderKey::Symbol, &samples.symbols)?;
                Ok(Base {
                    topology,
                    mapping,
                    index,
                    lines,
                    line_codes,
                    symbols,
                    symbol_codes,
                })
            };
            build().map_err(|e| format!("{e:#}"))
        }

        fn recompute(
            &self,
            base: &Base,
            spec: &SelectionSpec,
        ) -> Option<Result<LinkedResult, String>> {
            let selection = self.selection(base, spec)?;
            Some(
                self.linked(base, spec, &selection)
                    .map_err(|e| format!("{e:#}")),
            )
        }

        fn cluster_tree(
            &self,
            base: &Base,
            params: &ClusterParams,
        ) -> Option<Result<ClusterTree, String>> {
            Some(
                self.engine
                    .cluster_tree(&self.dataset, None, &base.topology, params.clone())
                    .map_err(|e| e.to_string()),
            )
        }

        fn cluster_glyph(
            &self,
            base: &Base,
            span: &ClusterSpan,
        ) -> Option<Result<Aggregate, String>> {
            Some(
                self.engine
                    .cluster_aggregate(&self.dataset, None, &base.topology, span)
                    .map_err(|e| e.to_string()),
            )
        }

        fn strip(&self, base: &Base, key: &StripKey) -> Result<Vec<WindowScore>, String> {
            let axis = base
                .index
                .axes
                .get(key.axis)
                .ok_or_else(|| format!("no axis {}", key.axis))?;
            let bins = Histogram {
                attribute: axis.attribute.clone(),
                kind: axis.kind,
                bins: axis.bins.clone(),
                unknown: axis.unknown,
            };
            self.engine
                .axis_scores(
                    &self.dataset,
                    None,
                    &base.topology,
                    &bins,
                    key.windows,
                    key.metric,
                    key.kind,
                )
                .map_err(|e| e.to_string())
        }

        fn engine(&self) -> String {
            format!("{:?}", self.engine.spec())
        }
    }
}

#[cfg(all(test, feature = "engine"))]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use std::sync::Arc;
    use std::time::Duration;

    use memscape_samples::metrics::{Metric, cluster_tree};
    use memscape_samples::{ClusterParams, Mapping, Picked};
    use memscape_topology::ResourceKind;
    use memscape_views::dataset::{Dataset, LoadSource, load};
    use memscape_views::samples::shared::{Repaint, SamplesShared, samples_of};

    fn wait<T>(what: &str, f: impl FnMut() -> Option<T>) -> T {
        memscape_views::testing::wait_for(what, Duration::from_secs(120), f)
    }

    /// The shared LULESH samples written into `dir` as a Parquet dataset of four windows, loaded
    /// as the GUI loads it and the embedded engine attached (`keyed_entries`: its budget of
    /// per-segment totals, None for the default).
    fn lulesh_dataset(dir: &std::path::Path, keyed_entries: Option<usize>) -> Dataset {
        let lulesh =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/memaxes/lulesh");
        let samples =
            memscape_samples::load_samples(&lulesh.join("samples.out"), Default::default())
                .unwrap();
        std::fs::copy(lulesh.join("hardware.xml"), dir.join("hardware.xml")).unwrap();
        let data = dir.join("lulesh");
        let options = memscape_parquet::samples::SamplesWriteOptions {
            host: String::from("rank0"),
            windows: 4,
        };
        memscape_parquet::write_samples(&samples, &data, &options).unwrap();
        let dataset = load(&LoadSource::File(data.clone()), &|_, _| {}).unwrap();
        super::attach_with(&dataset, &data, "embedded", keyed_entries).unwrap();
        dataset
    }

    /// The GUI's samples workers on a Parquet LULESH dataset with the engine attached: the
    /// cluster tree is the engine's (segment totals, no sample order), equal node for node to
    /// memscape-samples' tree of the samples; a cluster marker clicked (and shift-clicked with
    /// a second) is stated to the engine, whose numbers equal the native ones of those samples;
    /// the hovered cluster's glyph from the engine's totals equals the samples' sum.
    #[test]
    fn the_guis_cluster_trees_picks_and_glyphs_come_from_the_engine() {
        let dir = tempfile::tempdir().unwrap();
        let dataset = lulesh_dataset(dir.path(), None);
        let dataset = Arc::new(dataset);
        let ctx: Repaint = Arc::new(|| {});
        let shared = SamplesShared::of(&dataset, &ctx);
        let base = wait("the engine's base", || shared.base()).unwrap();
        let params = ClusterParams {
            attribute: String::from("time"),
            metric: Metric::Imbalance,
            kind: ResourceKind::L2,
            window: 1000,
            step: 250,
        };
        let tree = wait("the cluster tree", || shared.tree(&params)).unwrap();
        let own = samples_of(&dataset).unwrap();
        let mapping = Mapping::new(own, &base.topology);
        let native = cluster_tree(own, &base.topology, &mapping, params, None).unwrap();
        assert!(
            tree.keyed.is_some() && tree.order.is_empty(),
            "not the engine's tree"
        );
        assert_eq!(tree.nodes, native.nodes);
        let cut = tree.cut(6);
        let glyph = memscape_views::samples::compose::cluster_aggregate(own, &base, &tree, 6, 3);
        let range = cut[3].positions[0] as usize..cut[3].positions[1] as usize;
        assert_eq!(
            glyph,
            Some(mapping.aggregate_order(own, &native.order, range))
        );
        let first = Picked::cluster(own, &tree, cut[1], String::from("one")).unwrap();
        let second = Picked::cluster(own, &tree, cut[4], String::from("two")).unwrap();
        let both = first.or(&second, String::from("both"));
        let want = native.selection(cut[1], own.len());
        assert_eq!(
            *both.samples,
            want.union(&native.selection(cut[4], own.len()))
        );
        shared.update(|s| s.picked = Some(both));
        let version = shared.spec().1;
        let result = wait("the picked clusters", || {
            shared
                .result()
                .filter(|(_, v)| *v == version)
                .map(|(r, _)| r)
        });
        assert_eq!(shared.computed_by().as_deref(), Some("Embedded"));
        let (spec, _) = shared.spec();
        let index = memscape_samples::LinkedIndex::new(own, base.index.quantitative_bins);
        let direct = memscape_samples::recompute(own, &mapping, &index, &spec, 20);
        assert!(direct.summary.samples > 1000);
        assert_eq!(result.aggregate, direct.aggregate);
        assert_eq!(result.summary, direct.summary);
        assert_eq!(result.selected_bins, direct.selected_bins);
        assert_eq!(result.top_lines, direct.top_lines);
    }

    /// Past the engine's budget of per-segment totals (lowered to 100 through
    /// `attach_with`'s typed setting; 4 Mi by default, crossed at 25 M samples) the GUI's
    /// cluster tree keeps none, so a hovered cluster's glyph is asked of the engine on the
    /// `samples-glyph` thread: pending first, then equal to the samples' sum for every cluster
    /// of a cut, the last span asked replacing ones not yet started.
    #[test]
    fn hovered_glyphs_past_the_keyed_budget_are_answered_by_the_engine() {
        let dir = tempfile::tempdir().unwrap();
        let dataset = lulesh_dataset(dir.path(), Some(100));
        let dataset = Arc::new(dataset);
        let ctx: Repaint = Arc::new(|| {});
        let shared = SamplesShared::of(&dataset, &ctx);
        let base = wait("the engine's base", || shared.base()).unwrap();
        let params = ClusterParams {
            attribute: String::from("time"),
            metric: Metric::Imbalance,
            kind: ResourceKind::L2,
            window: 1000,
            step: 250,
        };
        let tree = wait("the cluster tree", || shared.tree(&params)).unwrap();
        assert!(
            tree.keyed.is_none() && tree.order.is_empty(),
            "an engine's tree within its budget"
        );
        let own = samples_of(&dataset).unwrap();
        assert_eq!(
            memscape_views::samples::compose::cluster_aggregate(own, &base, &tree, 6, 3),
            None,
            "a glyph without asking the engine"
        );
        let mapping = Mapping::new(own, &base.topology);
        let native = cluster_tree(own, &base.topology, &mapping, params, None).unwrap();
        assert_eq!(tree.nodes, native.nodes);
        let cut = tree.cut(6);
        // Every cluster hovered in turn, faster than the engine answers: the newest wins.
        for node in &cut {
            let _ = shared.glyph(&tree.span(node));
        }
        for node in &cut {
            let span = tree.span(node);
            let glyph = wait("a hovered cluster's glyph", || shared.glyph(&span)).unwrap();
            let range = node.positions[0] as usize..node.positions[1] as usize;
            let want = mapping.aggregate_order(own, &native.order, range);
            assert!(want.samples.iter().sum::<u64>() > 0);
            assert_eq!(*glyph, want);
        }
        assert!(!shared.glyph_pending());
    }

    /// The histograms pane itself, driven frame by frame without a window: on a dataset whose
    /// engine tree keeps no per-segment totals (budget lowered to 100), the pointer resting on
    /// a cluster marker gets that cluster's glyph (its title: the cluster's samples and
    /// score) once the engine answers, off the UI thread, each marker in turn; before, such a
    /// tree's markers had no glyph.
    #[test]
    fn the_histograms_pane_shows_a_hovered_glyph_past_the_keyed_budget() {
        use crate::panes::{View as _, ViewContext};
        let dir = tempfile::tempdir().unwrap();
        let dataset = lulesh_dataset(dir.path(), Some(100));
        let dataset = Arc::new(dataset);
        let ctx = egui::Context::default();
        let mut pane = HistogramsPane::new(dataset, &ctx);
        let cx = ViewContext {
            render_state: None,
            topologies: &[],
        };
        use crate::panes::samples::pane::HistogramsPane;
        let frame = |pane: &mut HistogramsPane, events: Vec<egui::Event>| -> Vec<String> {
            let input = egui::RawInput {
                screen_rect: Some(egui::Rect::from_min_size(
                    egui::Pos2::ZERO,
                    egui::vec2(1400.0, 900.0),
                )),
                events,
                ..Default::default()
            };
            let mut out = ctx.run_ui(input, |ui| pane.ui(ui, &cx));
            out.textures_delta.clear();
            fn texts(shape: &egui::Shape, out: &mut Vec<String>) {
                match shape {
                    egui::Shape::Text(t) => out.push(t.galley.text().to_owned()),
                    egui::Shape::Vec(v) => v.iter().for_each(|s| texts(s, out)),
                    _ => {}
                }
            }
            let mut found = Vec::new();
            for c in &out.shapes {
                texts(&c.shape, &mut found);
            }
            found
        };
        let is_glyph_title = |t: &String| t.contains(" samples · ") && t.contains("imbalance");
        let start = std::time::Instant::now();
        let mut markers = Vec::new();
        while markers.is_empty() {
            assert!(start.elapsed() < Duration::from_secs(120), "no markers");
            let drawn = frame(&mut pane, Vec::new());
            assert!(!drawn.iter().any(is_glyph_title), "a glyph without a hover");
            markers = pane.marker_centres();
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(markers.len() >= 3, "{markers:?}");
        let mut titles = Vec::new();
        for &at in &markers[..3] {
            let start = std::time::Instant::now();
            let mut events = vec![egui::Event::PointerMoved(at)];
            let title = loop {
                assert!(
                    start.elapsed() < Duration::from_secs(60),
                    "no glyph for the marker at {at:?}"
                );
                let drawn = frame(&mut pane, std::mem::take(&mut events));
                if let Some(t) = drawn.into_iter().find(is_glyph_title) {
                    break t;
                }
                std::thread::sleep(Duration::from_millis(20));
            };
            titles.push(title);
        }
        titles.dedup();
        assert_eq!(titles.len(), 3, "one glyph per marker: {titles:?}");
    }
}
