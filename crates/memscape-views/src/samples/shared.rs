//! What every samples view of one dataset shares: the samples mapped onto the topology with the
//! histogram index (built once, re-binned when the user changes the number of bins), **the**
//! linked selection, and caches of the window-score
//! strips and cluster trees. Hung on the dataset's [`crate::links::Links`] as shared state of
//! its own type, created by the first samples pane that asks ([`SamplesShared::of`]).
//!
//! Two named worker threads do the work, so the UI thread only reads results:
//! * `samples-link N` maps the samples and builds the index, then recomputes the linked views
//!   whenever the selection's version moved. Wake-ups travel through a bounded channel of
//!   capacity 1; the worker always reads the *latest* selection, so a drag that changes the
//!   brush every frame costs one recomputation per finished one, never a backlog.
//! * `samples-analysis N` computes window-score strips and cluster trees on request (bounded
//!   job channel); results are cached per parameters, and trees per (metric, depth,
//!   attribute, window, step).
//!
//! A dataset with a query engine attached (`query.rs`: a Parquet samples dataset) has the
//! index, offender rows, every selection's numbers and the strips computed by the engine in
//! those same workers, the cluster trees too (a cluster picked is a span the engine states);
//! a third, `samples-glyph N` (`glyph_query.rs`), asks it for a hovered cluster's glyph when
//! the tree keeps no per-segment totals.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use crossbeam_channel::{Receiver, Sender, TrySendError};
use memscape_samples::metrics::{ClusterParams, ClusterTree, Metric, WindowScore, cluster_tree};
use memscape_samples::{
    Aggregate, ClusterSpan, LinkedIndex, LinkedResult, Mapping, Offender, OffenderKey, Samples,
    SelectionSpec, top_offenders,
};
use memscape_topology::{ResourceKind, Topology};

use super::glyph_query::GlyphQueries;
use super::query::query_of;
use crate::dataset::{Dataset, DatasetContent};
use crate::error::Result;

/// Asks the GUI for a new frame when a worker has finished something.
pub type Repaint = Arc<dyn Fn() + Send + Sync>;

/// Bins of each quantitative histogram axis, until the user chooses another number.
pub const QUANTITATIVE_BINS: usize = 32;
/// The numbers of bins the user may choose from.
pub const BIN_RANGE: std::ops::RangeInclusive<usize> = 4..=256;
/// Entries of the offender charts.
pub const TOP_OFFENDERS: usize = 20;

/// Built once per dataset on the worker.
pub struct Base {
    pub topology: Topology,
    pub mapping: Mapping,
    pub index: LinkedIndex,
    /// The offender charts' rows (whole data) and each row's code (index into
    /// `Samples::source_lines` / `symbols`), for the selected part of each bar.
    pub lines: Vec<Offender>,
    pub line_codes: Vec<u32>,
    pub symbols: Vec<Offender>,
    pub symbol_codes: Vec<u32>,
}

impl Base {
    /// The same mapping and offender rows with every quantitative axis cut into `bins` bins.
    pub fn rebinned(&self, samples: &Samples, bins: usize) -> Base {
        Base {
            topology: self.topology.clone(),
            mapping: self.mapping.clone(),
            index: LinkedIndex::new(samples, bins),
            lines: self.lines.clone(),
            line_codes: self.line_codes.clone(),
            symbols: self.symbols.clone(),
            symbol_codes: self.symbol_codes.clone(),
        }
    }

    /// Each offender row's code among the samples' `labels` (`NONE` where it is not one): what
    /// a click on the row selects.
    pub fn offender_codes(rows: &[memscape_samples::Offender], labels: &[String]) -> Vec<u32> {
        rows.iter()
            .map(|r| {
                labels
                    .iter()
                    .position(|l| *l == r.name)
                    .map_or(memscape_samples::NONE, |c| c as u32)
            })
            .collect()
    }

    /// Builds the mapping, index and offender rows of `samples` (the worker's first job; also
    /// what `memscape render` uses).
    pub fn build(
        samples: &Samples,
        samples_path: &std::path::Path,
        hardware: Option<&std::path::Path>,
    ) -> Result<Base> {
        let (topology, mapping, _) = super::mapping::map_samples(samples, samples_path, hardware)?;
        let index = LinkedIndex::new(samples, QUANTITATIVE_BINS);
        let rows = |key: OffenderKey, labels: &[String]| {
            let rows = top_offenders(samples, key, None, TOP_OFFENDERS);
            let codes = Self::offender_codes(&rows, labels);
            (rows, codes)
        };
        let (lines, line_codes) = rows(OffenderKey::SourceLine, &samples.source_lines);
        let (symbols, symbol_codes) = rows(OffenderKey::Symbol, &samples.symbols);
        Ok(Base {
            topology,
            mapping,
            index,
            lines,
            line_codes,
            symbols,
            symbol_codes,
        })
    }

    /// The selected (samples, cycles) of each offender row of `key` under `result`.
    pub fn selected_rows(&self, result: &LinkedResult, key: OffenderKey) -> Vec<(u64, u64)> {
        let (codes, totals) = match key {
            OffenderKey::SourceLine => (&self.line_codes, &result.line_totals),
            OffenderKey::Symbol => (&self.symbol_codes, &result.symbol_totals),
        };
        codes
            .iter()
            .map(|&c| totals.get(c as usize).copied().unwrap_or((0, 0)))
            .collect()
    }
}

/// Parameters of one window-score strip.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StripKey {
    pub axis: usize,
    pub windows: usize,
    pub metric: Metric,
    pub kind: ResourceKind,
}

#[derive(Debug, Clone, PartialEq)]
enum Job {
    Strip(StripKey),
    Cluster(ClusterParams),
}

/// A finished computation or why it failed.
pub type Outcome<T> = Result<Arc<T>, String>;

#[derive(Default)]
struct State {
    spec: SelectionSpec,
    /// Bumped on every change of `spec`.
    version: u64,
    /// The latest result and the spec version it was computed for.
    result: Option<(Arc<LinkedResult>, u64)>,
    /// The query engine that computed `result` (None: the samples in memory).
    computed_by: Option<String>,
    /// Set when `result` was computed from a bounded read of the samples (a selection the
    /// engine cannot state on a dataset opened without every sample): how much was read.
    from_head: Option<crate::dataset::SamplesExtent>,
    strips: Vec<(StripKey, Outcome<Vec<WindowScore>>)>,
    trees: Vec<(ClusterParams, Outcome<ClusterTree>)>,
    pending: Vec<Job>,
}

pub struct SamplesShared {
    /// None while the worker builds it; replaced when the samples are re-binned.
    base: Mutex<Option<Result<Arc<Base>, String>>>,
    /// The number of bins of quantitative axes the views asked for.
    bins: AtomicUsize,
    state: Mutex<State>,
    wake: Sender<()>,
    jobs: Sender<Job>,
    /// The query engine the numbers come from (`query.rs`), when the dataset has one.
    engine: Option<String>,
    /// With an engine: hovered clusters' glyphs asked of it (`glyph_query.rs`), for trees
    /// that keep no per-segment totals.
    glyphs: Option<GlyphQueries>,
}

impl std::fmt::Debug for SamplesShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SamplesShared")
            .field("ready", &self.base().is_some())
            .finish_non_exhaustive()
    }
}

/// The samples of a dataset, if it holds samples.
pub fn samples_of(dataset: &Dataset) -> Option<&Samples> {
    match &dataset.content {
        DatasetContent::Samples(s) => Some(s),
        _ => None,
    }
}

impl SamplesShared {
    /// The shared state of `dataset`'s samples views (created, with its workers, on first use;
    /// `repaint` wakes the GUI when they have finished something).
    pub fn of(dataset: &Arc<Dataset>, repaint: &Repaint) -> Arc<SamplesShared> {
        // Asked before: `Links::shared` makes the state under its lock.
        let engine = query_of(dataset).map(|q| q.engine());
        dataset
            .links
            .shared(|| Self::start(dataset, repaint, engine))
    }

    fn start(
        dataset: &Arc<Dataset>,
        repaint: &Repaint,
        engine: Option<String>,
    ) -> Arc<SamplesShared> {
        let (wake, wake_rx) = crossbeam_channel::bounded(1);
        let (jobs, jobs_rx) = crossbeam_channel::bounded(16);
        let (glyphs, glyphs_rx) = match engine {
            Some(_) => {
                let (queries, rx) = GlyphQueries::new();
                (Some(queries), Some(rx))
            }
            None => (None, None),
        };
        let shared = Arc::new(SamplesShared {
            base: Mutex::new(None),
            bins: AtomicUsize::new(QUANTITATIVE_BINS),
            state: Mutex::new(State::default()),
            wake,
            jobs,
            engine,
            glyphs,
        });
        let weak_data = Arc::downgrade(dataset);
        let weak_shared = Arc::downgrade(&shared);
        let ctx = repaint.clone();
        static WORKERS: AtomicUsize = AtomicUsize::new(1);
        let number = WORKERS.fetch_add(1, Ordering::Relaxed);
        if let Some(rx) = glyphs_rx {
            let (data, me, ctx) = (weak_data.clone(), weak_shared.clone(), ctx.clone());
            let spawned = std::thread::Builder::new()
                .name(format!("samples-glyph {number}"))
                .spawn(move || super::glyph_query::worker(data, me, rx, ctx));
            if let Err(e) = spawned {
                tracing::error!("could not start the samples glyph worker: {e}");
            }
        }
        let name = format!("samples-link {number}");
        let spawned = std::thread::Builder::new()
            .name(name)
            .spawn(move || link_worker(weak_data, weak_shared, wake_rx, jobs_rx, ctx));
        if let Err(e) = spawned {
            shared.set_base(Err(format!("could not start the samples worker: {e}")));
        }
        shared
    }

    /// Maps the samples onto `topology` (a file; None: their default) from now on: the
    /// worker rebuilds the mapping, strips and cluster trees.
    pub fn pair_with(&self, dataset: &Dataset, topology: Option<std::path::PathBuf>) {
        let before = dataset.links.topology().1;
        if dataset.links.set_topology(topology) != before {
            if let Ok(mut b) = self.base.lock() {
                *b = None;
            }
            let _ = self.wake.try_send(());
        }
    }

    /// The mapped samples and index: None while the worker builds them.
    pub fn base(&self) -> Option<Result<Arc<Base>, String>> {
        self.base.lock().ok().and_then(|b| b.clone())
    }

    /// The current selection and bins as settings (`select`, `select_line`, `select_symbol`,
    /// `histogram_bins`).
    pub fn selection_into(&self, settings: &mut super::settings::SamplesSettings) {
        if let Some(Ok(base)) = self.base() {
            let (spec, _) = self.spec();
            let (ranges, line, symbol) = selection_step_fields(&spec, &base.index);
            settings.select = ranges;
            settings.select_line = line;
            settings.select_symbol = symbol;
        }
        let bins = self.bins();
        settings.histogram_bins = (bins != QUANTITATIVE_BINS).then_some(bins);
    }

    fn set_base(&self, base: Result<Arc<Base>, String>) {
        if let Ok(mut b) = self.base.lock() {
            *b = Some(base);
        }
    }

    /// The number of bins of quantitative axes (asked for; the index follows in the background).
    pub fn bins(&self) -> usize {
        self.bins.load(Ordering::Relaxed)
    }

    /// Re-bins every quantitative axis into `bins` bins (clamped to [`BIN_RANGE`]) for every
    /// samples view of the dataset; the selection, given as value ranges, is kept.
    pub fn set_bins(&self, bins: usize) {
        let bins = bins.clamp(*BIN_RANGE.start(), *BIN_RANGE.end());
        if self.bins.swap(bins, Ordering::Relaxed) != bins {
            let _ = self.wake.try_send(());
        }
    }

    /// The selection as the user built it, and its version.
    pub fn spec(&self) -> (SelectionSpec, u64) {
        self.state
            .lock()
            .map(|s| (s.spec.clone(), s.version))
            .unwrap_or_default()
    }

    /// Changes the selection (every samples view follows) and wakes the worker.
    pub fn update(&self, f: impl FnOnce(&mut SelectionSpec)) {
        if let Ok(mut s) = self.state.lock() {
            let before = s.spec.clone();
            f(&mut s.spec);
            if s.spec != before {
                s.version += 1;
            }
        }
        // Full means a wake-up is already pending: the worker reads the latest spec anyway.
        let _ = self.wake.try_send(());
    }

    /// The query engine the views' numbers come from (`query.rs`), None for samples in memory.
    pub fn engine(&self) -> Option<&str> {
        self.engine.as_deref()
    }

    /// The query engine that computed the latest linked result (None: the samples in memory,
    /// as for a cluster picked).
    pub fn computed_by(&self) -> Option<String> {
        self.state.lock().ok().and_then(|s| s.computed_by.clone())
    }

    /// Set when the latest linked result was computed from the first samples of a dataset
    /// read in part (the engine could not state the selection): how many of how many.
    pub fn computed_from_head(&self) -> Option<crate::dataset::SamplesExtent> {
        self.state.lock().ok().and_then(|s| s.from_head)
    }

    /// The latest linked result and the selection version it reflects (it may lag the current
    /// version by the recomputation under way).
    pub fn result(&self) -> Option<(Arc<LinkedResult>, u64)> {
        self.state.lock().ok().and_then(|s| s.result.clone())
    }

    /// A window-score strip: Some when computed (or failed), None while pending (requested).
    pub fn strip(&self, key: &StripKey) -> Option<Outcome<Vec<WindowScore>>> {
        self.cached_or_request(|s| &s.strips, key, || Job::Strip(key.clone()))
    }

    /// A cluster tree: Some when built (or failed), None while pending (requested).
    pub fn tree(&self, params: &ClusterParams) -> Option<Outcome<ClusterTree>> {
        self.cached_or_request(|s| &s.trees, params, || Job::Cluster(params.clone()))
    }

    /// The glyph of a cluster's `span` asked of the query engine (for a tree without
    /// per-segment totals): Some when answered (or failed), None while asked.
    pub fn glyph(&self, span: &ClusterSpan) -> Option<Outcome<Aggregate>> {
        match &self.glyphs {
            Some(g) => g.get(span),
            None => Some(Err(String::from("no query engine to ask a glyph of"))),
        }
    }

    /// Whether a glyph query is running or waiting.
    pub fn glyph_pending(&self) -> bool {
        self.glyphs.as_ref().is_some_and(GlyphQueries::pending)
    }

    pub(super) fn glyph_queries(&self) -> Option<&GlyphQueries> {
        self.glyphs.as_ref()
    }

    /// The cached outcome for `key` in the cache `cache` picks, else the job asked for.
    fn cached_or_request<K: PartialEq, T>(
        &self,
        cache: impl Fn(&State) -> &Vec<(K, Outcome<T>)>,
        key: &K,
        job: impl FnOnce() -> Job,
    ) -> Option<Outcome<T>> {
        let found = self.state.lock().ok().and_then(|s| {
            cache(&s)
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
        });
        if found.is_none() {
            self.request(job());
        }
        found
    }

    fn request(&self, job: Job) {
        let Ok(mut s) = self.state.lock() else {
            return;
        };
        if s.pending.contains(&job) {
            return;
        }
        match self.jobs.try_send(job.clone()) {
            Ok(()) => s.pending.push(job),
            // Full: asked again next frame. Disconnected: the worker is gone (its error shows).
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {}
        }
    }
}

fn link_worker(
    dataset: Weak<Dataset>,
    shared: Weak<SamplesShared>,
    wake: Receiver<()>,
    jobs: Receiver<Job>,
    ctx: Repaint,
) {
    let query = dataset.upgrade().and_then(|d| query_of(&d));
    // The topology the samples map onto: the one they are paired with, else their default.
    let build = |dataset: &Weak<Dataset>, bins: usize| -> (Result<Arc<Base>, String>, u64) {
        let Some(dataset) = dataset.upgrade() else {
            return (Err("the dataset was closed".into()), 0);
        };
        let (hardware, version) = dataset.links.topology();
        let Some(samples) = samples_of(&dataset) else {
            return (Err("the dataset holds no samples".into()), version);
        };
        let base = match &query {
            Some(q) => q.base(&dataset, hardware.as_deref(), bins),
            None => Base::build(
                samples,
                std::path::Path::new(&dataset.name),
                hardware.as_deref(),
            )
            .map_err(|e| format!("{e:#}")),
        };
        (base.map(Arc::new), version)
    };
    let bins_now =
        |shared: &Weak<SamplesShared>| shared.upgrade().map_or(QUANTITATIVE_BINS, |s| s.bins());
    let (mut built, mut paired_version) = build(&dataset, bins_now(&shared));
    let base = loop {
        let Some(me) = shared.upgrade() else {
            return;
        };
        me.set_base(built.clone());
        drop(me);
        ctx();
        if let Ok(base) = built {
            break base;
        }
        // Failed (e.g. samples that do not fit this machine): wait for another pairing.
        loop {
            if wake.recv().is_err() {
                return;
            }
            match dataset.upgrade() {
                None => return,
                Some(d) if d.links.topology().1 != paired_version => break,
                Some(_) => {}
            }
        }
        (built, paired_version) = build(&dataset, bins_now(&shared));
    };
    // The analysis worker: strips and cluster trees.
    let analysis_base = base.clone();
    let (analysis_data, analysis_shared, analysis_ctx) =
        (dataset.clone(), shared.clone(), ctx.clone());
    let spawned = std::thread::Builder::new()
        .name("samples-analysis".to_owned())
        .spawn(move || {
            analysis_worker(
                analysis_data,
                analysis_shared,
                analysis_base,
                jobs,
                analysis_ctx,
            )
        });
    if let Err(e) = spawned {
        tracing::error!("could not start the samples analysis worker: {e}");
    }
    let mut done_version = None;
    let mut base = base;
    // With a query: the samples' index, built when a selection is computed from the samples.
    let mut native_index: Option<LinkedIndex> = None;
    loop {
        let (Some(data), Some(me)) = (dataset.upgrade(), shared.upgrade()) else {
            return;
        };
        let Some(samples) = samples_of(&data) else {
            return;
        };
        if data.links.topology().1 != paired_version {
            // Paired with another topology: everything placed on it is redone.
            let (rebuilt, version) = build(&dataset, me.bins());
            paired_version = version;
            if let Ok(mut s) = me.state.lock() {
                s.strips.clear();
                s.trees.clear();
                s.result = None;
            }
            if let Some(g) = me.glyph_queries() {
                g.clear();
            }
            me.set_base(rebuilt.clone());
            match rebuilt {
                Ok(b) => base = b,
                Err(_) => {
                    ctx();
                    drop((data, me));
                    if wake.recv().is_err() {
                        return;
                    }
                    continue;
                }
            }
            done_version = None;
        }
        let bins = me.bins();
        if base.index.quantitative_bins != bins {
            // Strips and cluster trees do not depend on the quantitative bins: only the index
            // and the selection's per-bin counts are redone.
            let started = std::time::Instant::now();
            let rebinned = match &query {
                Some(q) => q.base(&data, data.links.topology().0.as_deref(), bins),
                None => Ok(base.rebinned(samples, bins)),
            };
            match rebinned {
                Ok(b) => base = Arc::new(b),
                Err(e) => {
                    me.set_base(Err(e));
                    ctx();
                    drop((data, me));
                    if wake.recv().is_err() {
                        return;
                    }
                    continue;
                }
            }
            native_index = None;
            me.set_base(Ok(base.clone()));
            tracing::debug!(
                "samples re-binned into {bins} bins in {:.1} ms",
                started.elapsed().as_secs_f64() * 1e3
            );
            done_version = None;
        }
        let (spec, version) = me.spec();
        if done_version != Some(version) {
            let from_query = match query.as_ref().map(|q| (q, q.recompute(&base, &spec))) {
                Some((q, Some(Ok(result)))) => Some((result, q.engine())),
                Some((q, Some(Err(e)))) => {
                    tracing::error!(
                        "the selection on {}: {e}; computed from the samples",
                        q.engine()
                    );
                    None
                }
                _ => None,
            };
            let computed_by = from_query.as_ref().map(|(_, e)| e.clone());
            let from_head = crate::dataset::samples_extent(&data)
                .filter(|e| from_query.is_none() && !e.is_whole());
            let result = match from_query {
                Some((result, _)) => result,
                // The samples' own index: a query's axes know no sample's bin.
                None if query.is_some() => {
                    let index = native_index.get_or_insert_with(|| {
                        LinkedIndex::new(samples, base.index.quantitative_bins)
                    });
                    memscape_samples::recompute(samples, &base.mapping, index, &spec, TOP_OFFENDERS)
                }
                None => memscape_samples::recompute(
                    samples,
                    &base.mapping,
                    &base.index,
                    &spec,
                    TOP_OFFENDERS,
                ),
            };
            if let Ok(mut s) = me.state.lock() {
                s.result = Some((Arc::new(result), version));
                s.computed_by = computed_by;
                s.from_head = from_head;
            }
            done_version = Some(version);
            ctx();
        }
        drop((data, me));
        if wake.recv().is_err() {
            return;
        }
    }
}

fn analysis_worker(
    dataset: Weak<Dataset>,
    shared: Weak<SamplesShared>,
    base: Arc<Base>,
    jobs: Receiver<Job>,
    ctx: Repaint,
) {
    while let Ok(job) = jobs.recv() {
        let (Some(data), Some(me)) = (dataset.upgrade(), shared.upgrade()) else {
            return;
        };
        // The base of now (a re-pairing with another topology replaces it).
        let base = match me.base() {
            Some(Ok(current)) => current,
            _ => base.clone(),
        };
        let Some(samples) = samples_of(&data) else {
            return;
        };
        let started = std::time::Instant::now();
        match &job {
            Job::Strip(key) => {
                let out = match query_of(&data) {
                    Some(q) => q.strip(&base, key),
                    None => memscape_samples::linked::axis_scores(
                        samples,
                        &base.topology,
                        &base.mapping,
                        &base.index,
                        key.axis,
                        key.windows,
                        key.metric,
                        key.kind,
                    )
                    .map_err(|e| e.to_string()),
                }
                .map(Arc::new);
                if let Ok(mut s) = me.state.lock() {
                    s.strips.push((key.clone(), out));
                    s.pending.retain(|j| j != &job);
                }
            }
            Job::Cluster(params) => {
                let from_query = query_of(&data).and_then(|q| q.cluster_tree(&base, params));
                let out = match from_query {
                    Some(tree) => tree,
                    None => {
                        cluster_tree(samples, &base.topology, &base.mapping, params.clone(), None)
                            .map_err(|e| e.to_string())
                    }
                }
                .map(Arc::new);
                tracing::debug!(
                    "cluster tree {params:?}: {:.0} ms",
                    started.elapsed().as_secs_f64() * 1e3
                );
                if let Ok(mut s) = me.state.lock() {
                    s.trees.push((params.clone(), out));
                    s.pending.retain(|j| j != &job);
                }
            }
        }
        ctx();
    }
}

/// The attributes a cluster tree can run along (quantitative ones).
pub fn cluster_attributes(index: &LinkedIndex) -> Vec<usize> {
    index
        .axes
        .iter()
        .enumerate()
        .filter(|(_, a)| a.kind == memscape_samples::AttrKind::Quantitative)
        .map(|(i, _)| i)
        .collect()
}

/// The axes shown at first, in file order: every attribute with more than one value (MemAxes'
/// files carry constant columns such as `iter`).
pub fn default_axes(index: &LinkedIndex) -> Vec<usize> {
    (0..index.axes.len())
        .filter(|&i| index.axes[i].bins.iter().filter(|b| b.count > 0).count() > 1)
        .collect()
}

/// The selection as tour-step fields (`memscape render --select ATTR=LO..HI …`,
/// `--select-line`, `--select-symbol`): value ranges of quantitative brushes, the value span of
/// a qualitative brush whose values are contiguous, and a picked source line or symbol. What
/// has no such form (a union of picks, a cluster, scattered values) is left out.
pub fn selection_step_fields(
    spec: &SelectionSpec,
    index: &memscape_samples::LinkedIndex,
) -> (Vec<String>, Option<String>, Option<String>) {
    use memscape_samples::Brush;
    let mut ranges = Vec::new();
    for b in &spec.brushes {
        let Some(axis) = index.axes.get(b.axis) else {
            continue;
        };
        let span = match &b.brush {
            Brush::Range { lo, hi } => Some((*lo, *hi)),
            Brush::Bins(set) => {
                // Contiguous in value: no unselected bin between the lowest and highest.
                let values: Vec<f64> = set
                    .iter()
                    .filter_map(|&k| axis.bins.get(k as usize).map(|bin| bin.lo))
                    .collect();
                let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let inside = axis
                    .bins
                    .iter()
                    .filter(|bin| bin.lo >= lo && bin.lo <= hi)
                    .count();
                (!values.is_empty() && inside == values.len()).then_some((lo, hi))
            }
        };
        if let Some((lo, hi)) = span {
            let show = |v: f64| {
                if v.is_finite() {
                    format!("{v}")
                } else {
                    String::new()
                }
            };
            ranges.push(format!("{}={}..{}", axis.attribute, show(lo), show(hi)));
        }
    }
    let (mut line, mut symbol) = (None, None);
    if let Some(picked) = &spec.picked {
        if let Some(name) = picked.label.strip_prefix("line ") {
            line = Some(name.to_owned());
        } else if let Some(name) = picked.label.strip_prefix("symbol ") {
            symbol = Some(name.to_owned());
        }
    }
    (ranges, line, symbol)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use memscape_samples::{AxisBrush, Brush};

    use super::*;

    fn wait<T>(what: &str, f: impl FnMut() -> Option<T>) -> T {
        crate::testing::wait_for(what, Duration::from_secs(60), f)
    }

    #[test]
    fn views_share_one_selection_recomputed_in_the_background() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/data/memaxes/lulesh/samples.out");
        let dataset = Arc::new(
            crate::dataset::load(&crate::dataset::LoadSource::File(path), &|_, _| {})
                .expect("LULESH samples"),
        );
        let ctx: Repaint = Arc::new(|| {});
        let shared = SamplesShared::of(&dataset, &ctx);
        assert!(
            Arc::ptr_eq(&shared, &SamplesShared::of(&dataset, &ctx)),
            "a second view gets the same state"
        );
        let base = wait("the mapping", || shared.base()).expect("mapped");
        let samples = samples_of(&dataset).expect("samples");
        let lat = base.index.axis("latency").expect("latency");
        // A drag: many updates in a row; the worker must end on the last one.
        for hi in 30..90 {
            shared.update(|s| {
                s.set_brush(AxisBrush {
                    axis: lat,
                    brush: Brush::Range {
                        lo: 0.0,
                        hi: f64::from(hi),
                    },
                })
            });
        }
        let (spec, version) = shared.spec();
        let result = wait("the last selection", || {
            shared
                .result()
                .filter(|(_, v)| *v == version)
                .map(|(r, _)| r)
        });
        let direct =
            memscape_samples::recompute(samples, &base.mapping, &base.index, &spec, TOP_OFFENDERS);
        assert_eq!(result.selection, direct.selection);
        assert_eq!(result.aggregate, direct.aggregate);
        assert_eq!(result.selected_bins, direct.selected_bins);
        assert!(spec.describe(&base.index).contains("latency in [0, 89]"));
        // Unchanged specs do not bump the version.
        let before = shared.spec().1;
        shared.update(|_| {});
        assert_eq!(shared.spec().1, before);
        // Strips and cluster trees arrive from the analysis worker and are cached.
        let key = StripKey {
            axis: lat,
            windows: 12,
            metric: Metric::Imbalance,
            kind: ResourceKind::L2,
        };
        let strip = wait("a strip", || shared.strip(&key)).expect("strip");
        assert_eq!(strip.len(), 12);
        let again = shared.strip(&key).expect("cached").expect("strip");
        assert!(Arc::ptr_eq(&strip, &again));
        let params = ClusterParams {
            attribute: "time".into(),
            metric: Metric::Imbalance,
            kind: ResourceKind::L2,
            window: 1000,
            step: 250,
        };
        let tree = wait("a cluster tree", || shared.tree(&params)).expect("tree");
        let direct = cluster_tree(samples, &base.topology, &base.mapping, params, None)
            .expect("direct tree");
        assert_eq!(tree.nodes, direct.nodes);
        // Bad parameters come back as an error, not a hang.
        let bad = ClusterParams {
            attribute: "nope".into(),
            metric: Metric::Latency,
            kind: ResourceKind::L2,
            window: 10,
            step: 5,
        };
        assert!(wait("an error", || shared.tree(&bad)).is_err());
    }

    /// What the GUI's "topology:" menu drives: pairing the samples with another open topology
    /// file remaps them onto it (strips redone on it), a file that is no topology is an error
    /// the next pairing recovers from, and "default" goes back to the hardware.xml beside them.
    #[test]
    fn pairing_with_another_topology_remaps_the_samples_and_back() {
        let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
        let path = data.join("memaxes/lulesh/samples.out");
        let dataset = Arc::new(
            crate::dataset::load(&crate::dataset::LoadSource::File(path.clone()), &|_, _| {})
                .expect("LULESH samples"),
        );
        let ctx: Repaint = Arc::new(|| {});
        let shared = SamplesShared::of(&dataset, &ctx);
        let pus = |b: &Base| b.topology.nodes_of_kind(ResourceKind::Pu).count();
        let mapped_on = |n: usize| {
            let shared = &shared;
            move || shared.base().and_then(Result::ok).filter(|b| pus(b) == n)
        };
        // The default: MemAxes' hardware.xml beside the samples (32 cpus).
        let own = wait("the default mapping", mapped_on(32));
        assert_eq!(dataset.links.topology(), (None, 0));
        let key = StripKey {
            axis: own.index.axis("latency").expect("latency"),
            windows: 8,
            metric: Metric::Imbalance,
            kind: ResourceKind::L2,
        };
        let strip_on_own = wait("a strip", || shared.strip(&key)).expect("strip");
        // Another topology file: the samples map onto it, strips are redone.
        let big = data.join("hwloc/192em64t-12gr2n8c2t.xml");
        shared.pair_with(&dataset, Some(big.clone()));
        assert_eq!(dataset.links.topology(), (Some(big.clone()), 1));
        let big_pus = Topology::load(Some(&big))
            .expect("hwloc XML")
            .nodes_of_kind(ResourceKind::Pu)
            .count();
        assert_eq!(
            big_pus, 384,
            "12 groups × 2 NUMA nodes × 8 cores × 2 threads"
        );
        let remapped = wait("the mapping on the chosen file", mapped_on(big_pus));
        let (_, report) = super::super::mapping::map_samples(
            samples_of(&dataset).expect("samples"),
            &path,
            Some(&big),
        )
        .map(|(t, _, r)| (t, r))
        .expect("direct mapping");
        let direct: u64 = report.resources.iter().map(|r| r.samples).sum();
        let shown: u64 = remapped
            .mapping
            .aggregate(samples_of(&dataset).expect("samples"), None)
            .samples
            .iter()
            .sum();
        assert_eq!(shown, direct, "the samples as mapped onto the chosen file");
        let strip_on_big =
            wait("a strip on the new topology", || shared.strip(&key)).expect("strip");
        assert!(
            !Arc::ptr_eq(&strip_on_own, &strip_on_big),
            "the cached strip was redone"
        );
        // Choosing the same file again changes nothing.
        shared.pair_with(&dataset, Some(big.clone()));
        assert_eq!(dataset.links.topology().1, 1);
        // A file that is no topology: the error shows, and a later pairing recovers.
        shared.pair_with(&dataset, Some(path.clone()));
        let error = wait("the pairing's error", || {
            shared.base().and_then(Result::err)
        });
        assert!(error.contains("samples.out"), "{error}");
        shared.pair_with(&dataset, Some(data.join("hwloc/24em64t-2n6c2t-pci.xml")));
        wait("the mapping on 24 PUs", mapped_on(24));
        // Back to the default.
        shared.pair_with(&dataset, None);
        assert_eq!(dataset.links.topology(), (None, 4));
        wait("the default mapping again", mapped_on(32));
    }

    #[test]
    fn rebinning_redoes_the_index_and_the_selection_counts_keeping_the_selection() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/data/memaxes/lulesh/samples.out");
        let dataset = Arc::new(
            crate::dataset::load(&crate::dataset::LoadSource::File(path), &|_, _| {})
                .expect("LULESH samples"),
        );
        let ctx: Repaint = Arc::new(|| {});
        let shared = SamplesShared::of(&dataset, &ctx);
        let base = wait("the mapping", || shared.base()).expect("mapped");
        let samples = samples_of(&dataset).expect("samples");
        let lat = base.index.axis("latency").expect("latency");
        assert_eq!(base.index.axes[lat].bins.len(), QUANTITATIVE_BINS);
        shared.update(|s| {
            s.set_brush(AxisBrush {
                axis: lat,
                brush: Brush::Range { lo: 0.0, hi: 60.0 },
            })
        });
        let before = wait("the selection", || {
            let v = shared.spec().1;
            shared.result().filter(|(_, rv)| *rv == v).map(|(r, _)| r)
        });
        shared.set_bins(8);
        let rebinned = wait("8 bins", || {
            shared
                .base()
                .and_then(Result::ok)
                .filter(|b| b.index.axes[lat].bins.len() == 8)
        });
        let after = wait("the counts in 8 bins", || {
            shared
                .result()
                .map(|(r, _)| r)
                .filter(|r| r.selected_bins[lat].len() == 8)
        });
        // The same samples stay selected; their counts are those of the new bins.
        assert_eq!(after.selection, before.selection);
        let (spec, _) = shared.spec();
        let direct = memscape_samples::recompute(
            samples,
            &rebinned.mapping,
            &rebinned.index,
            &spec,
            TOP_OFFENDERS,
        );
        assert_eq!(after.selected_bins, direct.selected_bins);
        assert_eq!(
            after.selected_bins[lat].iter().sum::<u64>(),
            before.selected_bins[lat].iter().sum::<u64>()
        );
        // Out of range asks are clamped.
        shared.set_bins(1);
        assert_eq!(shared.bins(), *BIN_RANGE.start());
    }

    #[test]
    fn a_selection_becomes_tour_fields_and_back() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/data/memaxes/lulesh/samples.out");
        let samples = memscape_samples::load_samples(&path, Default::default()).unwrap();
        let base = Base::build(&samples, &path, None).unwrap();
        let line = samples.source_lines[0].clone();
        let args =
            |select: Vec<String>, line: Option<String>| super::super::settings::SamplesSettings {
                select,
                select_line: line,
                ..Default::default()
            };
        // A quantitative range, contiguous qualitative values, a picked line.
        let given = args(
            vec!["latency=100..400".into(), "cpu=2..5".into()],
            Some(line.clone()),
        );
        let spec = super::super::compose::selection_spec(&samples, &base, &given).unwrap();
        let (ranges, picked_line, symbol) = selection_step_fields(&spec, &base.index);
        assert_eq!(picked_line.as_deref(), Some(line.as_str()));
        assert_eq!(symbol, None);
        assert_eq!(ranges.len(), 2, "{ranges:?}");
        let again =
            super::super::compose::selection_spec(&samples, &base, &args(ranges, picked_line))
                .unwrap();
        assert_eq!(again.brushes, spec.brushes);
        assert_eq!(
            again.picked.as_ref().map(|p| &p.samples),
            spec.picked.as_ref().map(|p| &p.samples)
        );
        // Scattered qualitative values have no range form and are left out.
        let mut scattered = spec.clone();
        let cpu = base.index.axis("cpu").unwrap();
        scattered.set_brush(AxisBrush {
            axis: cpu,
            brush: Brush::Bins(vec![0, 2]),
        });
        let (ranges, _, _) = selection_step_fields(&scattered, &base.index);
        assert!(ranges.iter().all(|r| !r.starts_with("cpu=")), "{ranges:?}");
    }
}
