//! The linked selection of one samples dataset: every samples view (radial topology, top
//! offenders, parallel and single histograms, the selection panel) shows the same selected
//! subset, recomputed from a [`SelectionSpec`] by [`recompute`].
//!
//! The selection is the **intersection** of
//! * one brush per histogram axis: a value range `[lo, hi]` on a quantitative attribute, or a
//!   set of bins (values) on a qualitative one, and
//! * optionally a *picked* set of samples (an offender bar, a cluster marker), itself built
//!   with [`Bitset::union`] / [`Bitset::intersection`] when the user adds to it.
//!
//! (Offenders are ranked as [`crate::top_offenders`] ranks them.)
//!
//! Everything after the spec is linear: [`LinkedIndex`] stores, once per dataset, the bin of
//! every sample on every axis, so a new selection costs one pass per brush to build the
//! bitset, then one pass over the selected samples adding into the per-route totals (the
//! topology), the per-axis bin counts (the histograms), the per-line and per-symbol totals
//! (the offenders) and the summary.

use std::sync::Arc;

use memscape_topology::{ResourceKind, Topology};

use crate::analysis::{Bin, EqualWidth, Histogram, Offender, SelectionSummary, histogram};
use crate::mapping::{Aggregate, Mapping};
use crate::metrics::{LevelIndex, Metric, WindowScore, WindowTotals, window_scores};
use crate::table::{AttrKind, ColumnData, NONE};
use crate::{Bitset, Samples, SamplesError};

/// One histogram axis: an attribute's bins over the whole data and the bin of each sample.
#[derive(Debug, Clone)]
pub struct AxisIndex {
    /// The attribute's name.
    pub attribute: String,
    /// Index of the attribute in `Samples::columns`.
    pub column: usize,
    pub kind: AttrKind,
    /// Bins of the whole data (`count` = `selected` = all samples in the bin): quantitative
    /// attributes in equal-width bins over their range, qualitative ones one bin per value in
    /// order of first appearance (see [`histogram`]).
    pub bins: Vec<Bin>,
    /// Samples whose value is unknown.
    pub unknown: u64,
    /// Bin of each sample (its largest value when unknown), in the narrowest integer type:
    /// the histograms' overlay reads every selected sample's bin on every axis, so this is
    /// the memory traffic of a recomputation.
    bin_of: BinColumn,
}

/// Selection words with at least this many members are counted branch-free over all 64
/// samples; sparser ones member by member.
const DENSE: u32 = 20;

/// Per-sample bins, one byte each for axes of at most 255 bins.
#[derive(Debug, Clone)]
enum BinColumn {
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
}

impl BinColumn {
    /// Packs `bins` (NONE = unknown) for an axis of `count` bins.
    fn pack(bins: Vec<u32>, count: usize) -> BinColumn {
        if count < u8::MAX as usize {
            BinColumn::U8(
                bins.iter()
                    .map(|&b| b.min(u32::from(u8::MAX)) as u8)
                    .collect(),
            )
        } else if count < u16::MAX as usize {
            BinColumn::U16(
                bins.iter()
                    .map(|&b| b.min(u32::from(u16::MAX)) as u16)
                    .collect(),
            )
        } else {
            BinColumn::U32(bins)
        }
    }

    /// Bin of sample `i`; values ≥ the axis' bin count mean unknown.
    #[inline]
    fn get(&self, i: usize) -> usize {
        match self {
            BinColumn::U8(v) => v.get(i).map_or(usize::MAX, |&b| usize::from(b)),
            BinColumn::U16(v) => v.get(i).map_or(usize::MAX, |&b| usize::from(b)),
            BinColumn::U32(v) => v.get(i).map_or(usize::MAX, |&b| b as usize),
        }
    }

    /// Adds one to `counts[bin]` for every sample in `selection` with a known bin.
    fn count_into(&self, selection: &Bitset, counts: &mut [u64]) {
        fn run<T: Copy + Into<u64>>(bins: &[T], selection: &Bitset, counts: &mut [u64]) {
            for (wi, &word) in selection.words().iter().enumerate() {
                if word == 0 {
                    continue;
                }
                let base = wi * 64;
                let Some(chunk) = bins.get(base..(base + 64).min(bins.len())) else {
                    continue;
                };
                if word.count_ones() >= DENSE {
                    // Dense word: every sample of the chunk, adding its bit (no branch on it).
                    for (j, &b) in chunk.iter().enumerate() {
                        if let Some(c) = counts.get_mut(b.into() as usize) {
                            *c += (word >> j) & 1;
                        }
                    }
                    continue;
                }
                let mut w = word;
                while w != 0 {
                    let j = w.trailing_zeros() as usize;
                    w &= w - 1;
                    if let Some(c) = chunk
                        .get(j)
                        .and_then(|&b| counts.get_mut(b.into() as usize))
                    {
                        *c += 1;
                    }
                }
            }
        }
        match self {
            BinColumn::U8(v) => run(v, selection, counts),
            BinColumn::U16(v) => run(v, selection, counts),
            BinColumn::U32(v) => run(v, selection, counts),
        }
    }
}

impl AxisIndex {
    /// The bin sample `i` falls in (None: unknown value).
    pub fn bin_of(&self, i: usize) -> Option<usize> {
        Some(self.bin_of.get(i)).filter(|&b| b < self.bins.len())
    }

    /// `[lo, hi]` of the whole data on a quantitative axis (None when every value is unknown).
    pub fn value_range(&self) -> Option<(f64, f64)> {
        Some((self.bins.first()?.lo, self.bins.last()?.hi))
    }

    /// An axis of bins counted elsewhere (the query engine's histogram of the whole data) for
    /// drawing only: it knows no sample's bin, so brushes on it select nothing here.
    pub fn of_histogram(histogram: Histogram, column: usize) -> AxisIndex {
        let bins = histogram
            .bins
            .into_iter()
            .map(|bin| Bin {
                selected: bin.count,
                ..bin
            })
            .collect();
        AxisIndex {
            attribute: histogram.attribute,
            column,
            kind: histogram.kind,
            bins,
            unknown: histogram.unknown,
            bin_of: BinColumn::U8(Vec::new()),
        }
    }
}

/// Per-dataset index of every attribute for the histograms and the brushes.
#[derive(Debug, Clone)]
pub struct LinkedIndex {
    pub axes: Vec<AxisIndex>,
    /// Bins of each quantitative axis.
    pub quantitative_bins: usize,
    len: usize,
}

impl LinkedIndex {
    /// Bins every attribute of `samples` (quantitative ones into `quantitative_bins` bins):
    /// one pass per attribute.
    pub fn new(samples: &Samples, quantitative_bins: usize) -> Self {
        let quantitative_bins = quantitative_bins.max(1);
        let axes = samples
            .columns
            .iter()
            .enumerate()
            .filter_map(|(ci, column)| {
                let h = histogram(samples, &column.name, quantitative_bins, None).ok()?;
                let n = column.len();
                let bin_of: Vec<u32> = match column.kind {
                    AttrKind::Quantitative => {
                        // The same edges as `histogram`, so counts agree exactly.
                        let edges = EqualWidth::of_column(column, quantitative_bins);
                        (0..n)
                            .map(|i| match (column.value(i), &edges) {
                                (Some(v), Some(edges)) => edges.index(v) as u32,
                                _ => NONE,
                            })
                            .collect()
                    }
                    AttrKind::Qualitative => {
                        let slot: std::collections::HashMap<u64, u32> = h
                            .bins
                            .iter()
                            .enumerate()
                            .map(|(b, bin)| (bin.lo.to_bits(), b as u32))
                            .collect();
                        (0..n)
                            .map(|i| {
                                column
                                    .value(i)
                                    .and_then(|v| slot.get(&v.to_bits()).copied())
                                    .unwrap_or(NONE)
                            })
                            .collect()
                    }
                };
                let bin_count = h.bins.len();
                Some(AxisIndex {
                    attribute: column.name.clone(),
                    column: ci,
                    kind: column.kind,
                    bins: h.bins,
                    unknown: h.unknown,
                    bin_of: BinColumn::pack(bin_of, bin_count),
                })
            })
            .collect();
        LinkedIndex {
            axes,
            quantitative_bins,
            len: samples.len(),
        }
    }

    /// The index of `len` samples whose axes were binned elsewhere ([`AxisIndex::of_histogram`]).
    pub fn of_axes(axes: Vec<AxisIndex>, quantitative_bins: usize, len: usize) -> Self {
        LinkedIndex {
            axes,
            quantitative_bins: quantitative_bins.max(1),
            len,
        }
    }

    /// The axis of the attribute called `name` (exact, then case-insensitive).
    pub fn axis(&self, name: &str) -> Option<usize> {
        self.axes
            .iter()
            .position(|a| a.attribute == name)
            .or_else(|| {
                self.axes
                    .iter()
                    .position(|a| a.attribute.eq_ignore_ascii_case(name))
            })
    }

    /// Number of samples indexed.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// What a brush on one axis keeps.
#[derive(Debug, Clone, PartialEq)]
pub enum Brush {
    /// Values in `[lo, hi]` (quantitative axes).
    Range { lo: f64, hi: f64 },
    /// Samples in these bins (qualitative axes: the values, by bin index).
    Bins(Vec<u32>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct AxisBrush {
    /// Index into [`LinkedIndex::axes`].
    pub axis: usize,
    pub brush: Brush,
}

impl AxisBrush {
    /// Whether bin `b` of the axis lies (partly) inside the brush (for drawing it).
    pub fn covers_bin(&self, axis: &AxisIndex, b: usize) -> bool {
        match &self.brush {
            Brush::Range { lo, hi } => axis
                .bins
                .get(b)
                .is_some_and(|bin| bin.hi >= *lo && bin.lo <= *hi),
            Brush::Bins(set) => set.contains(&(b as u32)),
        }
    }

    /// `ATTR=LO..HI` as a brush: a value range on a quantitative axis; on a qualitative one
    /// the bins whose value (category code for strings) lies in the range.
    pub fn from_range(index: &LinkedIndex, spec: &crate::RangeSpec) -> Result<Self, SamplesError> {
        let axis = index
            .axis(&spec.attribute)
            .ok_or_else(|| SamplesError::UnknownAttribute {
                name: spec.attribute.clone(),
                available: index
                    .axes
                    .iter()
                    .map(|a| a.attribute.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        let lo = spec.lo.unwrap_or(f64::NEG_INFINITY);
        let hi = spec.hi.unwrap_or(f64::INFINITY);
        let a = &index.axes[axis];
        let brush = match a.kind {
            AttrKind::Quantitative => Brush::Range { lo, hi },
            AttrKind::Qualitative => Brush::Bins(
                a.bins
                    .iter()
                    .enumerate()
                    .filter(|(_, bin)| bin.lo >= lo && bin.lo <= hi)
                    .map(|(b, _)| b as u32)
                    .collect(),
            ),
        };
        Ok(AxisBrush { axis, brush })
    }
}

/// Samples picked by a click (an offender bar, a cluster marker), with what they are.
#[derive(Debug, Clone, PartialEq)]
pub struct Picked {
    pub label: String,
    pub samples: Arc<Bitset>,
    /// What was picked, stated without the samples (what a query engine selects): any group,
    /// each of whose terms the sample meets; None when a pick had no such form.
    pub terms: Option<PickGroups>,
}

/// One thing picked, as a condition on a sample.
#[derive(Debug, Clone, PartialEq)]
pub enum PickTerm {
    /// The sample's source line or data symbol is this one (an offender bar).
    Offender(crate::OffenderKey, String),
    /// The sample lies in this cluster (a cluster marker).
    Cluster(crate::clustering::ClusterSpan),
}

/// Things picked: any group, each of whose terms a sample meets.
pub type PickGroups = Vec<Vec<PickTerm>>;

impl Picked {
    /// The samples of the offender bar `name` of `key`.
    pub fn offender(
        samples: &Samples,
        key: crate::OffenderKey,
        name: &str,
        label: String,
    ) -> Picked {
        Picked {
            label,
            samples: Arc::new(crate::select_offender(samples, key, name)),
            terms: Some(vec![vec![PickTerm::Offender(key, name.to_owned())]]),
        }
    }

    /// The samples of the cluster `node` of `tree` (from its order, else from its span).
    pub fn cluster(
        samples: &Samples,
        tree: &crate::ClusterTree,
        node: &crate::clustering::ClusterNode,
        label: String,
    ) -> Result<Picked, crate::SamplesError> {
        let span = tree.span(node);
        let bits = if tree.order.is_empty() {
            crate::clustering::select_span(samples, &span)?
        } else {
            tree.selection(node, samples.len())
        };
        Ok(Picked {
            label,
            samples: Arc::new(bits),
            terms: Some(vec![vec![PickTerm::Cluster(span)]]),
        })
    }

    /// Samples of either pick, labelled `label`.
    pub fn or(&self, other: &Picked, label: String) -> Picked {
        let terms = match (&self.terms, &other.terms) {
            (Some(a), Some(b)) => Some(a.iter().chain(b).cloned().collect()),
            _ => None,
        };
        Picked {
            label,
            samples: Arc::new(self.samples.union(&other.samples)),
            terms,
        }
    }

    /// Samples of both picks, labelled `label`.
    pub fn and(&self, other: &Picked, label: String) -> Picked {
        let terms = match (&self.terms, &other.terms) {
            (Some(a), Some(b)) => Some(
                a.iter()
                    .flat_map(|x| b.iter().map(move |y| x.iter().chain(y).cloned().collect()))
                    .collect(),
            ),
            _ => None,
        };
        Picked {
            label,
            samples: Arc::new(self.samples.intersection(&other.samples)),
            terms,
        }
    }
}

/// The linked selection as the user built it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SelectionSpec {
    /// At most one per axis (setting a brush replaces the axis' previous one).
    pub brushes: Vec<AxisBrush>,
    pub picked: Option<Picked>,
}

impl SelectionSpec {
    /// True when nothing restricts the selection (every sample selected).
    pub fn is_everything(&self) -> bool {
        self.brushes.is_empty() && self.picked.is_none()
    }

    /// Sets (or replaces) the brush of `brush.axis`.
    pub fn set_brush(&mut self, brush: AxisBrush) {
        self.brushes.retain(|b| b.axis != brush.axis);
        self.brushes.push(brush);
    }

    pub fn clear_brush(&mut self, axis: usize) {
        self.brushes.retain(|b| b.axis != axis);
    }

    pub fn brush(&self, axis: usize) -> Option<&AxisBrush> {
        self.brushes.iter().find(|b| b.axis == axis)
    }

    /// A short description ("latency in [100, 200] and line LULESH_OMP.cc:2035"; plain words:
    /// the labels' font has no set symbols).
    pub fn describe(&self, index: &LinkedIndex) -> String {
        let mut parts: Vec<String> = self
            .brushes
            .iter()
            .filter_map(|b| {
                let a = index.axes.get(b.axis)?;
                Some(match &b.brush {
                    Brush::Range { lo, hi } => {
                        format!("{} in [{}, {}]", a.attribute, short(*lo), short(*hi))
                    }
                    Brush::Bins(set) => {
                        let names: Vec<String> = set
                            .iter()
                            .take(4)
                            .filter_map(|&s| a.bins.get(s as usize))
                            .map(|bin| bin.label.clone().unwrap_or_else(|| short(bin.lo)))
                            .collect();
                        let more = if set.len() > 4 { ", …" } else { "" };
                        format!("{} in {{{}{more}}}", a.attribute, names.join(", "))
                    }
                })
            })
            .collect();
        if let Some(p) = &self.picked {
            parts.push(p.label.clone());
        }
        if parts.is_empty() {
            "all samples".to_owned()
        } else {
            parts.join(" and ")
        }
    }
}

/// A number for labels: integers as such (below 10^16, where f64 is still exact), others with
/// 4 significant digits.
pub fn short(v: f64) -> String {
    if !v.is_finite() {
        return if v > 0.0 { "∞" } else { "−∞" }.to_owned();
    }
    if v.fract() == 0.0 && v.abs() < 1e16 {
        format!("{}", v as i64)
    } else if v.abs() >= 1e4 || v.abs() < 1e-3 {
        format!("{v:.3e}")
    } else {
        format!("{v:.4}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_owned()
    }
}

/// Everything the samples views draw for one selection.
#[derive(Debug, Clone)]
pub struct LinkedResult {
    /// The selected samples.
    pub selection: Bitset,
    /// True when the spec restricts nothing (views then draw no overlay).
    pub everything: bool,
    /// Per-resource and per-link totals of the selection (the radial topology).
    pub aggregate: Aggregate,
    /// Selected samples per bin, per axis (the histograms' overlay).
    pub selected_bins: Vec<Vec<u64>>,
    pub top_lines: Vec<Offender>,
    pub top_symbols: Vec<Offender>,
    /// (samples, cycles) of the selection per source line and per data symbol, by code (index
    /// into `Samples::source_lines` / `symbols`): the selected part of each offender bar.
    pub line_totals: Vec<(u64, u64)>,
    pub symbol_totals: Vec<(u64, u64)>,
    /// The selection panel.
    pub summary: SelectionSummary,
}

/// Samples whose value on `axis` passes `brush`: one pass over the column, a word at a time.
pub fn brush_bits(samples: &Samples, index: &LinkedIndex, brush: &AxisBrush) -> Bitset {
    let n = samples.len();
    let Some(axis) = index.axes.get(brush.axis) else {
        return Bitset::new(n);
    };
    let Some(column) = samples.columns.get(axis.column) else {
        return Bitset::new(n);
    };
    let mut bits = match &brush.brush {
        Brush::Range { lo, hi } => {
            let (lo, hi) = (*lo, *hi);
            match &column.data {
                ColumnData::U64(v) => Bitset::from_fn(n, |i| {
                    v.get(i)
                        .is_some_and(|&x| (x as f64) >= lo && (x as f64) <= hi)
                }),
                ColumnData::F64(v) => {
                    Bitset::from_fn(n, |i| v.get(i).is_some_and(|&x| x >= lo && x <= hi))
                }
                ColumnData::Category { codes, .. } => Bitset::from_fn(n, |i| {
                    codes
                        .get(i)
                        .is_some_and(|&c| f64::from(c) >= lo && f64::from(c) <= hi)
                }),
            }
        }
        Brush::Bins(set) => {
            let mut keep = vec![false; axis.bins.len()];
            for &b in set {
                if let Some(k) = keep.get_mut(b as usize) {
                    *k = true;
                }
            }
            Bitset::from_fn(n, |i| {
                keep.get(axis.bin_of.get(i)).copied().unwrap_or(false)
            })
        }
    };
    // Unknown values never match.
    let known = column.unknown.complement();
    bits.intersect_with(&known);
    bits
}

/// The selection of `spec` (all samples when it restricts nothing).
pub fn selection_of(samples: &Samples, index: &LinkedIndex, spec: &SelectionSpec) -> Bitset {
    let mut selection = match &spec.picked {
        Some(p) => {
            let mut s = (*p.samples).clone();
            s.intersect_with(&Bitset::full(samples.len()));
            s
        }
        None => Bitset::full(samples.len()),
    };
    for brush in &spec.brushes {
        selection.intersect_with(&brush_bits(samples, index, brush));
    }
    selection
}

/// Recomputes every linked view's numbers for `spec`: linear in the samples for the bitset,
/// then one pass over the selected samples for the topology, the offenders and the panel, and
/// one per axis for the histograms' overlay (on a second thread, beside the first pass).
pub fn recompute(
    samples: &Samples,
    mapping: &Mapping,
    index: &LinkedIndex,
    spec: &SelectionSpec,
    top: usize,
) -> LinkedResult {
    let selection = selection_of(samples, index, spec);
    let everything = spec.is_everything();
    let histograms = || -> Vec<Vec<u64>> {
        if everything {
            return index
                .axes
                .iter()
                .map(|a| a.bins.iter().map(|b| b.count).collect())
                .collect();
        }
        index
            .axes
            .iter()
            .map(|a| {
                let mut counts = vec![0u64; a.bins.len()];
                a.bin_of.count_into(&selection, &mut counts);
                counts
            })
            .collect()
    };
    let totals = || {
        let mut per_route = vec![(0u64, 0u64); mapping.routes.len()];
        let mut line_totals = vec![(0u64, 0u64); samples.source_lines.len()];
        let mut symbol_totals = vec![(0u64, 0u64); samples.symbols.len()];
        let (mut count, mut cycles) = (0u64, 0u64);
        // Sample i with weight `bit` (0 or 1): dense words add every sample times its bit.
        let mut visit = |i: usize, bit: u64| {
            let Some(&latency) = samples.latency.get(i) else {
                return;
            };
            let latency = latency * bit;
            count += bit;
            cycles = cycles.saturating_add(latency);
            let add = |t: &mut (u64, u64)| {
                t.0 += bit;
                t.1 = t.1.saturating_add(latency);
            };
            if let Some(t) = mapping
                .route_of
                .get(i)
                .and_then(|&r| per_route.get_mut(r as usize))
            {
                add(t);
            }
            if let Some(t) = samples
                .source_line
                .get(i)
                .and_then(|&c| line_totals.get_mut(c as usize))
            {
                add(t);
            }
            if let Some(t) = samples
                .symbol
                .get(i)
                .and_then(|&c| symbol_totals.get_mut(c as usize))
            {
                add(t);
            }
        };
        for (wi, &word) in selection.words().iter().enumerate() {
            let base = wi * 64;
            if word.count_ones() >= DENSE {
                for j in 0..64 {
                    visit(base + j, (word >> j) & 1);
                }
            } else {
                let mut w = word;
                while w != 0 {
                    let j = w.trailing_zeros() as usize;
                    w &= w - 1;
                    visit(base + j, 1);
                }
            }
        }
        let summary = SelectionSummary {
            samples: count,
            cycles,
            mean_latency: (count > 0).then(|| cycles as f64 / count as f64),
            share: if samples.is_empty() {
                0.0
            } else {
                count as f64 / samples.len() as f64
            },
        };
        (
            mapping.expand(&per_route),
            line_totals,
            symbol_totals,
            summary,
        )
    };
    let two_cores = std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
    let (selected_bins, (aggregate, line_totals, symbol_totals, summary)) = if two_cores {
        std::thread::scope(|scope| {
            let bins = scope.spawn(histograms);
            let t = totals();
            // A panic in the histogram thread is a bug; recount here rather than fail.
            (bins.join().unwrap_or_else(|_| histograms()), t)
        })
    } else {
        (histograms(), totals())
    };
    LinkedResult {
        top_lines: crate::analysis::ranked_offenders(&line_totals, &samples.source_lines, top),
        top_symbols: crate::analysis::ranked_offenders(&symbol_totals, &samples.symbols, top),
        line_totals,
        symbol_totals,
        aggregate,
        selected_bins,
        summary,
        selection,
        everything,
    }
}

/// The metric per window along one axis (the coloured strip): a quantitative axis cut into
/// `windows` equal-width windows over its range (exactly [`window_scores`]); a qualitative axis
/// one window per value (bin), in the axis' order.
#[allow(clippy::too_many_arguments)]
pub fn axis_scores(
    samples: &Samples,
    topology: &Topology,
    mapping: &Mapping,
    index: &LinkedIndex,
    axis: usize,
    windows: usize,
    metric: Metric,
    kind: ResourceKind,
) -> Result<Vec<WindowScore>, SamplesError> {
    let a = index
        .axes
        .get(axis)
        .ok_or_else(|| SamplesError::UnknownAttribute {
            name: format!("axis {axis}"),
            available: format!("{} axes", index.axes.len()),
        })?;
    match a.kind {
        AttrKind::Quantitative => window_scores(
            samples,
            topology,
            mapping,
            &a.attribute,
            windows,
            metric,
            kind,
            None,
        ),
        AttrKind::Qualitative => {
            let level = LevelIndex::new(topology, mapping, kind)?;
            let bins = a.bins.len();
            if bins == 0 {
                return Ok(Vec::new());
            }
            let mut totals = WindowTotals::new(&level, bins);
            for i in 0..samples.len() {
                let b = a.bin_of.get(i);
                if b < bins {
                    totals.add(b, mapping.route_of[i], 1, samples.latency[i]);
                }
            }
            Ok(totals.scores(metric, |b| [a.bins[b].lo, a.bins[b].hi]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_for_labels() {
        assert_eq!(short(12.0), "12");
        assert_eq!(short(0.5), "0.5");
        assert_eq!(short(2.71234), "2.7123");
        assert_eq!(short(123456.7), "1.235e5");
        assert_eq!(short(f64::INFINITY), "∞");
    }
}
