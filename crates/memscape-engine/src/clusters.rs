//! The samples' cluster tree (MemAxes' guided clustering of sliding windows) from the engine:
//! the samples are numbered in (value, ms_row) order by a window function, grouped into pieces
//! of positions that each lie in one segment between window boundaries and by route key, and
//! the window ends' values and rows are read back; `memscape-samples` places the keys on the
//! topology and builds the tree from those segment totals with the native code
//! (`clustering::tree_from_segments`), so the tree equals `cluster_tree`'s on the same samples.

use std::collections::HashMap;

use datafusion::functions_aggregate::expr_fn::{count, min, sum};
use datafusion::functions_window::expr_fn::row_number;
use datafusion::logical_expr::ExprFunctionExt as _;
use datafusion::prelude::{DataFrame, Expr, col, ident, lit};
use datafusion::scalar::ScalarValue;
use memscape_samples::clustering::{KeyedSegments, WindowPlan, tree_from_segments};
use memscape_samples::metrics::LevelIndex;
use memscape_samples::{ClusterParams, ClusterTree, Mapping, NONE, RouteKey};
use memscape_topology::Topology;

use crate::rows::{f64s, strs, u64s};
use crate::samples::{attribute, number, route_key};
use crate::{Dataset, Engine, EngineError, Result};

fn u64_lit(v: usize) -> Expr {
    lit(ScalarValue::UInt64(Some(v as u64)))
}

impl Engine {
    /// The cluster tree of host `host`'s samples along `params.attribute` (a numeric one),
    /// equal to `memscape_samples::metrics::cluster_tree` over every sample but for its
    /// `order` (left empty: a cluster's samples are its span, its glyph the tree's `keyed`
    /// segment totals, `ClusterTree::aggregate`).
    pub fn cluster_tree(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        topology: &Topology,
        params: ClusterParams,
    ) -> Result<ClusterTree> {
        params.check()?;
        let (df, meta) = self.samples_frame(dataset, host)?;
        let (name, _, ty) = attribute(&meta, &params.attribute)?;
        if ty == "string" {
            return Err(EngineError::Invalid(format!(
                "a cluster tree along {name:?}: the engine orders numeric attributes only"
            )));
        }
        let known = self.value_range(df.clone(), &name, true)?.known;
        let n =
            usize::try_from(known).map_err(|_| EngineError::Invalid(format!("{known} samples")))?;
        let plan = WindowPlan::new(n, params.window, params.step);
        let positioned = positioned(df, &name)?;
        let keyed = self.segment_totals(positioned.clone(), &plan)?;
        let ends = self.window_ends(positioned, &plan)?;
        let mapping = Mapping::for_keys(&keyed.keys, topology);
        let level = LevelIndex::new(topology, &mapping, params.kind)?;
        let m = level.resources.len();
        let mut per_segment = vec![(0u64, 0u64); plan.segments() * m];
        for (s, totals) in keyed.totals.iter().enumerate() {
            for &(key, samples, cycles) in totals {
                let route = mapping.route_of[key as usize];
                if route == NONE {
                    continue;
                }
                for &slot in &level.route_slots[route as usize] {
                    let cell = &mut per_segment[s * m + slot as usize];
                    cell.0 += samples;
                    cell.1 = cell.1.saturating_add(cycles);
                }
            }
        }
        // Every end position was read back (`window_ends` checks).
        let end_at = |p: usize| ends.get(&p).copied().unwrap_or((f64::NAN, NONE));
        Ok(tree_from_segments(
            params,
            &plan,
            m,
            &per_segment,
            end_at,
            Some(keyed),
        ))
    }

    /// Each segment's (samples, cycles) by route key: rows grouped by route key and by piece
    /// (`WindowPlan::piece` positions, split at the aligned last window), each piece's first
    /// position naming its segment.
    fn segment_totals(&self, positioned: DataFrame, plan: &WindowPlan) -> Result<KeyedSegments> {
        let piece = col("ms_pos") / u64_lit(plan.piece());
        let tail = match plan.aligned_start() {
            Some(s) => col("ms_pos").gt_eq(u64_lit(s)),
            None => lit(false),
        };
        let df = positioned.aggregate(
            vec![
                ident("ms_cpu"),
                ident("ms_level"),
                ident("ms_data_node"),
                piece.alias("piece"),
                tail.alias("tail"),
            ],
            vec![
                count(lit(1u8)).alias("n"),
                sum(ident("ms_latency")).alias("cycles"),
                min(col("ms_pos")).alias("first"),
            ],
        )?;
        let mut keys: Vec<RouteKey> = Vec::new();
        let mut key_of: HashMap<RouteKey, u32> = HashMap::new();
        let mut per_segment: Vec<HashMap<u32, (u64, u64)>> = vec![HashMap::new(); plan.segments()];
        for batch in self.collect(df)? {
            let cpu = u64s(&batch, "ms_cpu")?;
            let level = strs(&batch, "ms_level")?;
            let node = u64s(&batch, "ms_data_node")?;
            let n = u64s(&batch, "n")?;
            let cycles = u64s(&batch, "cycles")?;
            let first = u64s(&batch, "first")?;
            for r in 0..batch.num_rows() {
                let key = route_key(cpu[r], level[r].as_deref(), node[r])?;
                let k = *key_of.entry(key).or_insert_with(|| {
                    keys.push(key);
                    (keys.len() - 1) as u32
                });
                let p = first[r].unwrap_or(0) as usize;
                let Some(segment) = per_segment.get_mut(plan.segment_of(p)) else {
                    continue;
                };
                let cell = segment.entry(k).or_insert((0, 0));
                cell.0 += n[r].unwrap_or(0);
                cell.1 = cell.1.saturating_add(cycles[r].unwrap_or(0));
            }
        }
        let totals = per_segment
            .into_iter()
            .map(|segment| {
                let mut rows: Vec<(u32, u64, u64)> =
                    segment.into_iter().map(|(k, (n, c))| (k, n, c)).collect();
                rows.sort_unstable();
                rows
            })
            .collect();
        Ok(KeyedSegments {
            keys,
            bounds: plan.bounds.clone(),
            totals,
        })
    }

    /// The (value, ms_row) at each window's first and last position.
    fn window_ends(
        &self,
        positioned: DataFrame,
        plan: &WindowPlan,
    ) -> Result<HashMap<usize, (f64, u32)>> {
        let ends = plan.ends();
        let mut out = HashMap::with_capacity(ends.len());
        if ends.is_empty() {
            return Ok(out);
        }
        let list = ends.iter().map(|&p| u64_lit(p)).collect();
        let df = positioned
            .filter(col("ms_pos").in_list(list, false))?
            .select(vec![col("ms_pos"), col("ms_value"), ident("ms_row")])?;
        for batch in self.collect(df)? {
            let (pos, value, row) = (
                u64s(&batch, "ms_pos")?,
                f64s(&batch, "ms_value")?,
                u64s(&batch, "ms_row")?,
            );
            for r in 0..batch.num_rows() {
                let (Some(p), Some(v), Some(i)) = (pos[r], value[r], row[r]) else {
                    continue;
                };
                let i = u32::try_from(i)
                    .map_err(|_| EngineError::Invalid(format!("ms_row {i} past u32")))?;
                out.insert(p as usize, (v, i));
            }
        }
        if out.len() != ends.len() {
            return Err(EngineError::Invalid(format!(
                "{} of {} window ends read back",
                out.len(),
                ends.len()
            )));
        }
        Ok(out)
    }
}

/// The samples with a value of `name`, numbered from 0 in (value, ms_row) order (`ms_pos`),
/// the value as f64 (`ms_value`) beside the route key and latency.
fn positioned(df: DataFrame, name: &str) -> Result<DataFrame> {
    let order = vec![
        number(name).sort(true, false),
        ident("ms_row").sort(true, false),
    ];
    let pos = row_number().order_by(order).build()? - u64_lit(1);
    Ok(df.filter(ident(name).is_not_null())?.select(vec![
        ident("ms_cpu"),
        ident("ms_level"),
        ident("ms_data_node"),
        ident("ms_latency"),
        ident("ms_row"),
        number(name).alias("ms_value"),
        pos.alias("ms_pos"),
    ])?)
}
