//! The samples' cluster tree (MemAxes' guided clustering of sliding windows) from the engine,
//! without ordering the samples: the samples at the segment bounds of the (value, ms_row) order
//! are found by bucket counts (`ranks`), then one streamed pass places every sample in its
//! segment by those bounds and sums it by resource slot (and by route key, for a cluster's
//! glyph, within a budget), keeping each segment's last sample (the windows' last ends);
//! `memscape-samples` builds the tree from those segment totals with the native code
//! (`clustering::tree_from_segments`), so the tree equals `cluster_tree`'s on the same samples.

use std::cmp::Ordering;
use std::collections::HashMap;

use arrow_array::Array as _;
use arrow_array::cast::AsArray as _;
use arrow_schema::DataType;
use datafusion::prelude::{cast, ident};
use memscape_samples::clustering::{KeyedSegments, WindowPlan, tree_from_segments};
use memscape_samples::metrics::LevelIndex;
use memscape_samples::{
    Aggregate, ClusterParams, ClusterSpan, ClusterTree, Mapping, NONE, PickTerm, RouteKey,
};
use memscape_topology::Topology;

use crate::ranks::{OrderKey, keys_at};
use crate::rows::{f64s, u64s};
use crate::samples::{Selection, attribute, number, route_key, route_keys};
use crate::{Dataset, Engine, EngineError, Result};

/// Segment totals by route key kept for glyphs up to this many (segment, key) entries (≈ 40 B
/// each while summed), unless the engine says otherwise (`Engine::with_keyed_entries_max`):
/// 100 M LULESH samples in windows of 1000 every 250 have ≈ 65 M (400,000 segments × 162
/// keys), whose glyphs would cost more than the tree; their glyphs are then each a query when
/// hovered ([`Engine::cluster_aggregate`]).
pub const KEYED_ENTRIES_MAX: usize = 4 << 20;

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
        let range = self.value_range(df.clone(), &name, true)?;
        let n = usize::try_from(range.known)
            .map_err(|_| EngineError::Invalid(format!("{} samples", range.known)))?;
        let plan = WindowPlan::new(n, params.window, params.step);
        let known = df.filter(ident(&name).is_not_null())?;
        let keys = self.route_keys(&known)?;
        let mapping = Mapping::for_keys(&keys, topology);
        let level = LevelIndex::new(topology, &mapping, params.kind)?;
        let m = level.resources.len();
        let segments = plan.segments();
        let Some((lo, hi)) = range.range.filter(|_| segments > 0) else {
            return Ok(tree_from_segments(
                params,
                &plan,
                m,
                &[],
                |_| (0.0, 0),
                None,
            ));
        };
        let pairs = known
            .clone()
            .select(vec![number(&name).alias("ms_value"), ident("ms_row")])?;
        let starts: Vec<u64> = plan.bounds[..segments].iter().map(|&b| b as u64).collect();
        let firsts = keys_at(self, &pairs, n as u64, (lo, hi), &starts)?;
        let rows = known.select(vec![
            number(&name).alias("ms_value"),
            ident("ms_row"),
            ident("ms_cpu"),
            cast(ident("ms_level"), DataType::Utf8).alias("ms_level"),
            ident("ms_data_node"),
            ident("ms_latency"),
        ])?;
        let sums = self.segment_sums(rows, &firsts, &keys, &mapping, &level)?;
        let end_at = |p: usize| {
            let k = match plan.bounds.binary_search(&p) {
                Ok(b) if b < segments => firsts[b],
                _ => sums.last[plan.segment_of(p)],
            };
            (k.value, u32::try_from(k.row).unwrap_or(NONE))
        };
        let keyed = sums.keyed.map(|totals| KeyedSegments {
            keys,
            bounds: plan.bounds.clone(),
            totals,
        });
        Ok(tree_from_segments(
            params,
            &plan,
            m,
            &sums.per_slot,
            end_at,
            keyed,
        ))
    }

    /// The per-resource totals of the samples of host `host` in `span` of the (value, row)
    /// order: a cluster's glyph asked of the engine, for a tree without `keyed` totals (past
    /// [`Engine::keyed_entries_max`]); equal to `ClusterTree::aggregate` of a tree with them.
    pub fn cluster_aggregate(
        &self,
        dataset: &Dataset,
        host: Option<&str>,
        topology: &Topology,
        span: &ClusterSpan,
    ) -> Result<Aggregate> {
        let selection = Selection {
            picked: Some(vec![vec![PickTerm::Cluster(span.clone())]]),
            ..Selection::default()
        };
        self.resource_totals_where(dataset, host, topology, &selection)
    }

    /// The distinct route keys of `samples`.
    fn route_keys(&self, samples: &datafusion::prelude::DataFrame) -> Result<Vec<RouteKey>> {
        let df = samples.clone().aggregate(
            vec![ident("ms_cpu"), ident("ms_level"), ident("ms_data_node")],
            vec![],
        )?;
        let mut keys = Vec::new();
        self.for_each_batch(df, |batch| {
            keys.extend(route_keys(batch)?);
            Ok(())
        })?;
        keys.sort_unstable();
        keys.dedup();
        Ok(keys)
    }

    /// One pass over `rows` (value, row, route key, latency): each sample's segment is the
    /// last of `firsts` (each segment's first sample) at or before it in the order.
    fn segment_sums(
        &self,
        rows: datafusion::prelude::DataFrame,
        firsts: &[OrderKey],
        keys: &[RouteKey],
        mapping: &Mapping,
        level: &LevelIndex,
    ) -> Result<SegmentSums> {
        let (segments, m) = (firsts.len(), level.resources.len());
        let key_of: HashMap<RouteKey, u32> = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| (k, i as u32))
            .collect();
        let mut per_slot = vec![(0u64, 0u64); segments * m];
        let mut last = firsts.to_vec();
        let mut keyed: Option<HashMap<(u32, u32), (u64, u64)>> = Some(HashMap::new());
        self.for_each_batch(rows, |batch| {
            let (value, row) = (f64s(batch, "ms_value")?, u64s(batch, "ms_row")?);
            let (cpu, node) = (u64s(batch, "ms_cpu")?, u64s(batch, "ms_data_node")?);
            let latency = u64s(batch, "ms_latency")?;
            let level_col = batch
                .column_by_name("ms_level")
                .and_then(|c| c.as_string_opt::<i32>())
                .ok_or_else(|| EngineError::Invalid(String::from("ms_level is no text")))?;
            for r in 0..batch.num_rows() {
                let (Some(value), Some(row)) = (value[r], row[r]) else {
                    continue;
                };
                let k = OrderKey { value, row };
                let s = firsts
                    .partition_point(|f| f.order(&k) != Ordering::Greater)
                    .saturating_sub(1);
                if k.order(&last[s]) == Ordering::Greater {
                    last[s] = k;
                }
                let label = (!level_col.is_null(r)).then(|| level_col.value(r));
                let key = route_key(cpu[r], label, node[r])?;
                let Some(&key) = key_of.get(&key) else {
                    return Err(EngineError::Invalid(format!(
                        "route key {key:?} not grouped"
                    )));
                };
                let cycles = latency[r].unwrap_or(0);
                let route = mapping.route_of[key as usize];
                if route != NONE {
                    for &slot in &level.route_slots[route as usize] {
                        let cell = &mut per_slot[s * m + slot as usize];
                        cell.0 += 1;
                        cell.1 = cell.1.saturating_add(cycles);
                    }
                }
                if let Some(map) = keyed.as_mut() {
                    let cell = map.entry((s as u32, key)).or_insert((0, 0));
                    cell.0 += 1;
                    cell.1 = cell.1.saturating_add(cycles);
                    if map.len() > self.keyed_entries_max {
                        tracing::info!(
                            "cluster tree: more than {} (segment, route key) totals; each \
                             cluster's glyph is a query when asked",
                            self.keyed_entries_max
                        );
                        keyed = None;
                    }
                }
            }
            Ok(())
        })?;
        let keyed = keyed.map(|map| {
            let mut totals: Vec<Vec<(u32, u64, u64)>> = vec![Vec::new(); segments];
            for ((s, key), (n, cycles)) in map {
                totals[s as usize].push((key, n, cycles));
            }
            for t in &mut totals {
                t.sort_unstable();
            }
            totals
        });
        Ok(SegmentSums {
            per_slot,
            last,
            keyed,
        })
    }
}

/// What one pass over the samples sums.
struct SegmentSums {
    /// `per_slot[s * m + r]`: segment s's (samples, cycles) at resource slot r.
    per_slot: Vec<(u64, u64)>,
    /// Each segment's last sample.
    last: Vec<OrderKey>,
    /// Each segment's (key, samples, cycles), unless past [`Engine::keyed_entries_max`].
    keyed: Option<Vec<Vec<(u32, u64, u64)>>>,
}
