//! Memory-access sample aggregations over the `samples` table of a samples dataset: totals per
//! resource of a topology, the histogram of any attribute under a selection, top offenders,
//! and the windowed latency/imbalance scores that clustering uses.
//!
//! The engine groups every selected row by the few keys that decide a sample's path through
//! the topology (cpu, memory level, data node) — and by histogram bin or window where asked;
//! those small results are then placed on the topology by `memscape-samples`' own mapping, so
//! the answer is the native one by construction of the same rules.

use arrow_schema::DataType;
use datafusion::common::ScalarValue;
use datafusion::functions_aggregate::expr_fn::{count, max, min, sum};
use datafusion::prelude::{DataFrame, Expr, cast, ident, lit, when};
use memscape_parquet::samples::{SamplesMeta, level_of, samples_meta};
use memscape_samples::metrics::LevelIndex;
use memscape_samples::{
    Aggregate, AttrKind, Bin, EqualWidth, Histogram, Mapping, Metric, NONE, Offender, OffenderKey,
    PickGroups, PickTerm, RangeSpec, RouteKey, SelectionSummary, WindowScore, WindowTotals,
    rank_offenders,
};
use memscape_topology::{ResourceKind, Topology};

use crate::rows::{f64s, i64s, strs, u64s};
use crate::{Dataset, Engine, EngineError, Result};

/// The attribute `name` of the dataset (exact name first, then case-insensitive, as
/// `Samples::column` finds it): its stored name and kind.
pub(crate) fn attribute(meta: &SamplesMeta, name: &str) -> Result<(String, AttrKind, String)> {
    let found = meta
        .attributes
        .iter()
        .find(|a| a.name == name)
        .or_else(|| {
            meta.attributes
                .iter()
                .find(|a| a.name.eq_ignore_ascii_case(name))
        })
        .ok_or_else(|| {
            EngineError::Samples(memscape_samples::SamplesError::UnknownAttribute {
                name: name.to_owned(),
                available: meta
                    .attributes
                    .iter()
                    .map(|a| a.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
        })?;
    let kind = if found.kind == "qualitative" {
        AttrKind::Qualitative
    } else {
        AttrKind::Quantitative
    };
    Ok((found.name.clone(), kind, found.ty.clone()))
}

pub(crate) fn f64_lit(v: f64) -> Expr {
    lit(ScalarValue::Float64(Some(v)))
}

/// The attribute as a number (`Column::value`): integers and reals as f64.
pub(crate) fn number(name: &str) -> Expr {
    cast(ident(name), DataType::Float64)
}

/// A selection of samples as the samples views build it: every range of `ranges` holds, every
/// attribute of `values` has one of its values, and, when there are `offenders`, the sample
/// is in one of their groups.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selection {
    /// Ranges of numeric attributes (inclusive).
    pub ranges: Vec<RangeSpec>,
    /// A qualitative attribute and its values kept, as [`Engine::histogram`] labels its bins.
    pub values: Vec<(String, Vec<String>)>,
    /// Picked offender bars and clusters: any group, each of whose terms the sample meets.
    pub picked: Option<PickGroups>,
}

impl Selection {
    /// The selection of these ranges alone.
    pub fn of_ranges(ranges: &[RangeSpec]) -> Self {
        Selection {
            ranges: ranges.to_vec(),
            ..Selection::default()
        }
    }

    /// Whether it selects every sample.
    pub fn is_everything(&self) -> bool {
        self.ranges.is_empty() && self.values.is_empty() && self.picked.is_none()
    }
}

/// The column of an offender key.
fn offender_column(key: OffenderKey) -> &'static str {
    match key {
        OffenderKey::SourceLine => "ms_source_line",
        OffenderKey::Symbol => "ms_symbol",
    }
}

/// One sample selected by `selection` (unknown values are not selected).
fn selection_where(meta: &SamplesMeta, selection: &Selection) -> Result<Expr> {
    let mut expr = selection_expr(meta, &selection.ranges)?;
    for (attribute_name, labels) in &selection.values {
        let (name, _, ty) = attribute(meta, attribute_name)?;
        let list: Vec<Expr> = match ty.as_str() {
            "u64" => labels
                .iter()
                .filter_map(|l| l.parse::<u64>().ok())
                .map(|v| lit(ScalarValue::UInt64(Some(v))))
                .collect(),
            "f64" => labels
                .iter()
                .filter_map(|l| l.parse::<f64>().ok())
                .map(f64_lit)
                .collect(),
            _ => labels.iter().map(|l| lit(l.as_str())).collect(),
        };
        let column = if ty == "u64" {
            cast(ident(&name), DataType::UInt64)
        } else {
            ident(&name)
        };
        expr = expr.and(if list.is_empty() {
            lit(false)
        } else {
            column.in_list(list, false)
        });
    }
    if let Some(groups) = &selection.picked {
        let mut any = lit(false);
        for group in groups {
            let mut all = lit(true);
            for term in group {
                all = all.and(pick_term(meta, term)?);
            }
            any = any.or(all);
        }
        expr = expr.and(any);
    }
    Ok(expr)
}

/// One sample meets a picked term: has the offender's line or symbol, or lies in the cluster's
/// span of the (value, ms_row) order (SQL's float comparison: as `total_cmp` but for −0 = 0).
fn pick_term(meta: &SamplesMeta, term: &PickTerm) -> Result<Expr> {
    Ok(match term {
        PickTerm::Offender(key, name) => ident(offender_column(*key)).eq(lit(name.as_str())),
        PickTerm::Cluster(span) => {
            let (name, _, ty) = attribute(meta, &span.attribute)?;
            if ty == "string" {
                return Err(EngineError::Invalid(format!(
                    "a cluster along {name:?}: the engine orders numeric attributes only"
                )));
            }
            let (v, row) = (number(&name), ident("ms_row"));
            let row_lit = |r: u32| lit(ScalarValue::UInt64(Some(u64::from(r))));
            let ((a, ra), (b, rb)) = (span.first, span.last);
            let after_first = v
                .clone()
                .gt(f64_lit(a))
                .or(v.clone().eq(f64_lit(a)).and(row.clone().gt_eq(row_lit(ra))));
            let before_last = v
                .clone()
                .lt(f64_lit(b))
                .or(v.clone().eq(f64_lit(b)).and(row.lt_eq(row_lit(rb))));
            v.is_not_null().and(after_first).and(before_last)
        }
    })
}

/// One sample selected: every range holds (inclusive; unknown values are not selected).
fn selection_expr(meta: &SamplesMeta, selection: &[RangeSpec]) -> Result<Expr> {
    let mut expr = lit(true);
    for spec in selection {
        let (name, _, ty) = attribute(meta, &spec.attribute)?;
        if ty == "string" {
            return Err(EngineError::Invalid(format!(
                "--select {}: the engine selects ranges of numeric attributes only",
                spec.attribute
            )));
        }
        let v = number(&name);
        let mut range = v.clone().is_not_null();
        if let Some(lo) = spec.lo {
            range = range.and(v.clone().gt_eq(f64_lit(lo)));
        }
        if let Some(hi) = spec.hi {
            range = range.and(v.lt_eq(f64_lit(hi)));
        }
        expr = expr.and(range);
    }
    Ok(expr)
}

/// `1` for a selected row, else `0` (a CASE so that nulls count as unselected).
fn selected_flag(selection: Expr) -> Result<Expr> {
    Ok(when(selection, lit(1i64)).otherwise(lit(0i64))?)
}

/// Per (cpu, level, data node) key: samples and cycles, from a grouped result.
struct KeyTotals {
    keys: Vec<RouteKey>,
    totals: Vec<(u64, u64)>,
    /// Extra group value of each key (bucket), when grouped by one.
    extra: Vec<i64>,
}

/// An attribute over every sample of a host: rows, rows with a value, and (min, max) of those.
pub(crate) struct ValueRange {
    pub(crate) n: u64,
    pub(crate) known: u64,
    pub(crate) range: Option<(f64, f64)>,
}

impl Engine {
    pub(crate) fn samples_frame(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
    ) -> Result<(DataFrame, SamplesMeta)> {
        let host = dataset.host(host)?;
        let meta = samples_meta(&dataset.dir, &dataset.manifest, &host)?;
        let df = self
            .table("samples")?
            .filter(ident("host").eq(lit(host.as_str())))?;
        Ok((df, meta))
    }

    /// Groups the selected rows by route key (and by `extra` when given).
    fn key_totals(&self, df: DataFrame, extra: Option<Expr>) -> Result<KeyTotals> {
        let mut group = vec![ident("ms_cpu"), ident("ms_level"), ident("ms_data_node")];
        if let Some(e) = extra {
            group.push(e.alias("extra"));
        }
        let df = df.aggregate(
            group,
            vec![
                count(lit(1u8)).alias("n"),
                sum(ident("ms_latency")).alias("cycles"),
            ],
        )?;
        let mut keys = Vec::new();
        let mut totals = Vec::new();
        let mut extras = Vec::new();
        self.for_each_batch(df, |batch| {
            keys.extend(route_keys(batch)?);
            totals.extend(key_sums(batch)?);
            if batch.column_by_name("extra").is_some() {
                extras.extend(i64s(batch, "extra")?.into_iter().map(|e| e.unwrap_or(0)));
            } else {
                extras.resize(extras.len() + batch.num_rows(), 0);
            }
            Ok(())
        })?;
        Ok(KeyTotals {
            keys,
            totals,
            extra: extras,
        })
    }

    /// Samples, cycles and transfers per resource and link of `topology` over the selected
    /// samples of host `host` (what the topology view draws).
    pub fn resource_totals(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        topology: &Topology,
        selection: &[RangeSpec],
    ) -> Result<Aggregate> {
        self.resource_totals_where(dataset, host, topology, &Selection::of_ranges(selection))
    }

    /// [`Engine::resource_totals`] of any [`Selection`].
    pub fn resource_totals_where(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        topology: &Topology,
        selection: &Selection,
    ) -> Result<Aggregate> {
        let (df, meta) = self.samples_frame(dataset, host)?;
        let df = df.filter(selection_where(&meta, selection)?)?;
        let kt = self.key_totals(df, None)?;
        Ok(Mapping::for_keys(&kt.keys, topology).aggregate_totals(&kt.totals))
    }

    /// Samples of host `host` in the selection (all of them with none).
    pub fn sample_count(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        selection: &[RangeSpec],
    ) -> Result<u64> {
        let (df, meta) = self.samples_frame(dataset, host)?;
        let df = df
            .filter(selection_expr(&meta, selection)?)?
            .aggregate(vec![], vec![count(lit(1u8)).alias("n")])?;
        let mut n = 0;
        for batch in self.collect(df)? {
            n += u64s(&batch, "n")?.into_iter().flatten().sum::<u64>();
        }
        Ok(n)
    }

    /// The stored name and whether it is a quantitative numeric attribute, of the attribute
    /// `name` of host `host` (found as the views find it: exactly, then ignoring case).
    pub fn quantitative_attribute(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        name: &str,
    ) -> Result<(String, bool)> {
        let host = dataset.host(host)?;
        let meta = samples_meta(&dataset.dir, &dataset.manifest, &host)?;
        let (stored, kind, ty) = attribute(&meta, name)?;
        Ok((stored, kind == AttrKind::Quantitative && ty != "string"))
    }

    /// Known-value count, total count and range of an attribute over every sample of a host.
    pub(crate) fn value_range(
        &self,
        df: DataFrame,
        name: &str,
        numeric: bool,
    ) -> Result<ValueRange> {
        let mut aggregates = vec![
            count(lit(1u8)).alias("n"),
            count(ident(name)).alias("known"),
        ];
        if numeric {
            aggregates.push(min(number(name)).alias("lo"));
            aggregates.push(max(number(name)).alias("hi"));
        }
        let df = df.aggregate(vec![], aggregates)?;
        let (mut n, mut known, mut range) = (0, 0, None);
        for batch in self.collect(df)? {
            if batch.num_rows() == 0 {
                continue;
            }
            n = u64s(&batch, "n")?[0].unwrap_or(0);
            known = u64s(&batch, "known")?[0].unwrap_or(0);
            if numeric
                && let (Some(lo), Some(hi)) = (f64s(&batch, "lo")?[0], f64s(&batch, "hi")?[0])
            {
                range = Some((lo, hi));
            }
        }
        Ok(ValueRange { n, known, range })
    }

    /// The histogram of `attribute` with the selected samples marked, equal to
    /// `memscape_samples::histogram` on the same samples.
    pub fn histogram(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        attribute_name: &str,
        bins: usize,
        selection: &[RangeSpec],
    ) -> Result<Histogram> {
        let selection = Selection::of_ranges(selection);
        self.histogram_where(dataset, host, attribute_name, bins, &selection)
    }

    /// [`Engine::histogram`] with any [`Selection`] marked.
    pub fn histogram_where(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        attribute_name: &str,
        bins: usize,
        selection: &Selection,
    ) -> Result<Histogram> {
        let (df, meta) = self.samples_frame(dataset, host)?;
        let (name, kind, ty) = attribute(&meta, attribute_name)?;
        let sel = selected_flag(selection_where(&meta, selection)?)?;
        let ValueRange { n, known, range } = self.value_range(df.clone(), &name, ty != "string")?;
        let unknown = n - known.min(n);
        let mut out = Vec::new();
        match kind {
            AttrKind::Quantitative => {
                let Some((lo, hi)) = range else {
                    return Ok(Histogram {
                        attribute: name,
                        kind,
                        bins: out,
                        unknown: n,
                    });
                };
                let edges = EqualWidth::new(lo, hi, bins);
                out = edges.empty_bins();
                let bucket = bucket_expr(&name, &edges);
                let df = df.filter(ident(&name).is_not_null())?.aggregate(
                    vec![bucket.alias("bucket")],
                    vec![count(lit(1u8)).alias("n"), sum(sel).alias("selected")],
                )?;
                for batch in self.collect(df)? {
                    let (b, c, s) = (
                        i64s(&batch, "bucket")?,
                        u64s(&batch, "n")?,
                        i64s(&batch, "selected")?,
                    );
                    for r in 0..batch.num_rows() {
                        let b = (b[r].unwrap_or(0).max(0) as usize).min(edges.count - 1);
                        out[b].count += c[r].unwrap_or(0);
                        out[b].selected += s[r].unwrap_or(0).max(0) as u64;
                    }
                }
            }
            AttrKind::Qualitative => {
                let df = df.filter(ident(&name).is_not_null())?.aggregate(
                    vec![ident(&name)],
                    vec![
                        count(lit(1u8)).alias("n"),
                        sum(sel).alias("selected"),
                        min(ident("ms_row")).alias("first"),
                    ],
                )?;
                let mut rows: Vec<(u64, Bin)> = Vec::new();
                for batch in self.collect(df)? {
                    let c = u64s(&batch, "n")?;
                    let s = i64s(&batch, "selected")?;
                    let first = u64s(&batch, "first")?;
                    let values: Vec<(f64, String)> = match ty.as_str() {
                        "u64" => u64s(&batch, &name)?
                            .into_iter()
                            .map(|v| v.map_or((0.0, String::new()), |v| (v as f64, v.to_string())))
                            .collect(),
                        "f64" => f64s(&batch, &name)?
                            .into_iter()
                            .map(|v| v.map_or((0.0, String::new()), |v| (v, v.to_string())))
                            .collect(),
                        _ => strs(&batch, &name)?
                            .into_iter()
                            .map(|v| (0.0, v.unwrap_or_default()))
                            .collect(),
                    };
                    for (r, (value, label)) in values.into_iter().enumerate() {
                        rows.push((
                            first[r].unwrap_or(u64::MAX),
                            Bin {
                                lo: value,
                                hi: value,
                                label: Some(label),
                                count: c[r].unwrap_or(0),
                                selected: s[r].unwrap_or(0).max(0) as u64,
                            },
                        ));
                    }
                }
                // Order of first appearance; categories are numbered in that order.
                rows.sort_by_key(|r| r.0);
                out = rows.into_iter().map(|r| r.1).collect();
                if ty == "string" {
                    for (code, bin) in out.iter_mut().enumerate() {
                        bin.lo = code as f64;
                        bin.hi = code as f64;
                    }
                }
            }
        }
        Ok(Histogram {
            attribute: name,
            kind,
            bins: out,
            unknown,
        })
    }

    /// Total latency per source line or data symbol over the selection, ranked as
    /// `memscape_samples::top_offenders` ranks them.
    pub fn top_offenders(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        key: OffenderKey,
        selection: &[RangeSpec],
        limit: usize,
    ) -> Result<Vec<Offender>> {
        let selection = Selection::of_ranges(selection);
        self.top_offenders_where(dataset, host, key, &selection, limit)
    }

    /// [`Engine::top_offenders`] over any [`Selection`].
    pub fn top_offenders_where(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        key: OffenderKey,
        selection: &Selection,
        limit: usize,
    ) -> Result<Vec<Offender>> {
        let (df, meta) = self.samples_frame(dataset, host)?;
        let column = offender_column(key);
        let df = df
            .filter(selection_where(&meta, selection)?.and(ident(column).is_not_null()))?
            .aggregate(
                vec![ident(column)],
                vec![
                    count(lit(1u8)).alias("n"),
                    sum(ident("ms_latency")).alias("cycles"),
                ],
            )?;
        let mut out = Vec::new();
        for batch in self.collect(df)? {
            let (names, n, cycles) = (
                strs(&batch, column)?,
                u64s(&batch, "n")?,
                u64s(&batch, "cycles")?,
            );
            for r in 0..batch.num_rows() {
                out.push(Offender {
                    name: names[r].clone().unwrap_or_default(),
                    samples: n[r].unwrap_or(0),
                    cycles: cycles[r].unwrap_or(0),
                });
            }
        }
        Ok(rank_offenders(out, limit))
    }

    /// The names of the attributes of host `host`, in the dataset's order (the samples'
    /// columns: the histograms' axes).
    pub fn attributes(&self, dataset: &Dataset, host: Option<&str>) -> Result<Vec<String>> {
        let host = dataset.host(host)?;
        let meta = samples_meta(&dataset.dir, &dataset.manifest, &host)?;
        Ok(meta.attributes.into_iter().map(|a| a.name).collect())
    }

    /// The selection panel's numbers: selected samples, their cycles and mean latency, and
    /// their share of every sample of host `host` (`memscape_samples::summarize`).
    pub fn selection_summary(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        selection: &Selection,
    ) -> Result<SelectionSummary> {
        let (df, meta) = self.samples_frame(dataset, host)?;
        let flag = selected_flag(selection_where(&meta, selection)?)?;
        let cycles = when(
            selection_where(&meta, selection)?,
            cast(ident("ms_latency"), DataType::UInt64),
        )
        .otherwise(lit(ScalarValue::UInt64(Some(0))))?;
        let df = df.aggregate(
            vec![],
            vec![
                count(lit(1u8)).alias("n"),
                sum(flag).alias("selected"),
                sum(cycles).alias("cycles"),
            ],
        )?;
        let (mut total, mut samples, mut cycles) = (0u64, 0u64, 0u64);
        for batch in self.collect(df)? {
            total += u64s(&batch, "n")?.into_iter().flatten().sum::<u64>();
            samples += i64s(&batch, "selected")?
                .into_iter()
                .flatten()
                .map(|v| v.max(0) as u64)
                .sum::<u64>();
            cycles = u64s(&batch, "cycles")?
                .into_iter()
                .flatten()
                .fold(cycles, u64::saturating_add);
        }
        Ok(SelectionSummary {
            samples,
            cycles,
            mean_latency: (samples > 0).then(|| cycles as f64 / samples as f64),
            share: if total == 0 {
                0.0
            } else {
                samples as f64 / total as f64
            },
        })
    }

    /// The window-score strip of one histogram axis over every sample, equal to
    /// `memscape_samples::linked::axis_scores`: a quantitative attribute in `windows`
    /// equal-width windows ([`Engine::window_scores`]), a qualitative one a window per value,
    /// in the order of its histogram's bins (`bins`, [`Engine::histogram`]'s).
    #[allow(clippy::too_many_arguments)]
    pub fn axis_scores(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        topology: &Topology,
        bins: &Histogram,
        windows: usize,
        metric: Metric,
        kind: ResourceKind,
    ) -> Result<Vec<WindowScore>> {
        if bins.kind == AttrKind::Quantitative {
            return self.window_scores(
                dataset,
                host,
                topology,
                &bins.attribute,
                windows,
                metric,
                kind,
                &[],
            );
        }
        if bins.bins.is_empty() {
            return Ok(Vec::new());
        }
        let (df, meta) = self.samples_frame(dataset, host)?;
        let (name, _, ty) = attribute(&meta, &bins.attribute)?;
        let slot: std::collections::HashMap<&str, usize> = bins
            .bins
            .iter()
            .enumerate()
            .map(|(b, bin)| (bin.label.as_deref().unwrap_or(""), b))
            .collect();
        let df = df.filter(ident(&name).is_not_null())?.aggregate(
            vec![
                ident("ms_cpu"),
                ident("ms_level"),
                ident("ms_data_node"),
                ident(&name),
            ],
            vec![
                count(lit(1u8)).alias("n"),
                sum(ident("ms_latency")).alias("cycles"),
            ],
        )?;
        let (mut keys, mut totals, mut windows_of) = (Vec::new(), Vec::new(), Vec::new());
        self.for_each_batch(df, |batch| {
            let (row_keys, sums) = (route_keys(batch)?, key_sums(batch)?);
            let labels = value_labels(batch, &name, &ty)?;
            for r in 0..batch.num_rows() {
                // A value the histogram did not bin (none: both group the same rows) is left out.
                let Some(&w) = slot.get(labels[r].as_str()) else {
                    continue;
                };
                keys.push(row_keys[r]);
                totals.push(sums[r]);
                windows_of.push(w);
            }
            Ok(())
        })?;
        let mapping = Mapping::for_keys(&keys, topology);
        let level = LevelIndex::new(topology, &mapping, kind)?;
        let mut acc = WindowTotals::new(&level, bins.bins.len());
        for (k, &(n, c)) in totals.iter().enumerate() {
            acc.add(windows_of[k], mapping.route_of[k], n, c);
        }
        Ok(acc.scores(metric, |b| [bins.bins[b].lo, bins.bins[b].hi]))
    }

    /// `L_d` or `I_d` of the selected samples in each of `windows` equal-width windows along
    /// `attribute`, equal to `memscape_samples::metrics::window_scores`.
    #[allow(clippy::too_many_arguments)]
    pub fn window_scores(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        topology: &Topology,
        attribute_name: &str,
        windows: usize,
        metric: Metric,
        kind: ResourceKind,
        selection: &[RangeSpec],
    ) -> Result<Vec<WindowScore>> {
        let (df, meta) = self.samples_frame(dataset, host)?;
        let (name, _, ty) = attribute(&meta, attribute_name)?;
        if ty == "string" {
            return Err(EngineError::Invalid(format!(
                "window scores along {name:?}: the engine runs them along numeric attributes"
            )));
        }
        let range = self.value_range(df.clone(), &name, true)?.range;
        let Some((lo, hi)) = range else {
            return Ok(Vec::new());
        };
        let edges = EqualWidth::new(lo, hi, windows);
        let bucket = bucket_expr(&name, &edges);
        let df = df.filter(selection_expr(&meta, selection)?.and(ident(&name).is_not_null()))?;
        let kt = self.key_totals(df, Some(bucket))?;
        let mapping = Mapping::for_keys(&kt.keys, topology);
        let level = LevelIndex::new(topology, &mapping, kind)?;
        let mut totals = WindowTotals::new(&level, edges.count);
        for (k, &(n, c)) in kt.totals.iter().enumerate() {
            let w = kt.extra[k].max(0) as usize;
            totals.add(w, mapping.route_of[k], n, c);
        }
        Ok(totals.scores(metric, |w| edges.window(w)))
    }
}

/// The route key of a grouped row: its cpu, memory level and data node.
pub(crate) fn route_key(
    cpu: Option<u64>,
    level: Option<&str>,
    node: Option<u64>,
) -> Result<RouteKey> {
    let to_u32 = |v: Option<u64>| v.and_then(|v| u32::try_from(v).ok()).unwrap_or(NONE);
    let label = level.unwrap_or("Unknown");
    let level = level_of(label)
        .ok_or_else(|| EngineError::Invalid(format!("ms_level {label:?} is no memory level")))?;
    Ok((to_u32(cpu), level, to_u32(node)))
}

/// The route key of each row of a batch grouped by (or holding) `ms_cpu`, `ms_level` and
/// `ms_data_node`.
pub(crate) fn route_keys(batch: &arrow_array::RecordBatch) -> Result<Vec<RouteKey>> {
    let (cpu, level, node) = (
        u64s(batch, "ms_cpu")?,
        strs(batch, "ms_level")?,
        u64s(batch, "ms_data_node")?,
    );
    (0..batch.num_rows())
        .map(|r| route_key(cpu[r], level[r].as_deref(), node[r]))
        .collect()
}

/// Each row's (samples, cycles) of a batch grouped with `n` and `cycles`.
fn key_sums(batch: &arrow_array::RecordBatch) -> Result<Vec<(u64, u64)>> {
    let (n, cycles) = (u64s(batch, "n")?, u64s(batch, "cycles")?);
    Ok(n.into_iter()
        .zip(cycles)
        .map(|(n, c)| (n.unwrap_or(0), c.unwrap_or(0)))
        .collect())
}

/// A qualitative value as [`Engine::histogram`] labels its bin.
fn value_labels(batch: &arrow_array::RecordBatch, name: &str, ty: &str) -> Result<Vec<String>> {
    Ok(match ty {
        "u64" => u64s(batch, name)?
            .into_iter()
            .map(|v| v.map_or_else(String::new, |v| v.to_string()))
            .collect(),
        "f64" => f64s(batch, name)?
            .into_iter()
            .map(|v| v.map_or_else(String::new, |v| v.to_string()))
            .collect(),
        _ => strs(batch, name)?
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect(),
    })
}

/// `⌊(v − lo) / width⌋` of an attribute as Int64, with `edges`' exact f64 literals (the
/// native [`EqualWidth::index`] before its clamp to the last bin).
fn bucket_expr(name: &str, edges: &EqualWidth) -> Expr {
    cast(
        (number(name) - f64_lit(edges.lo)) / f64_lit(edges.width),
        DataType::Int64,
    )
}
