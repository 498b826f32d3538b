//! Samples on the topology: each sample's path from its cpu to the resource that served it.
//!
//! Rules (documented in the README):
//! * served at L1 or the line fill buffer → the path ends at the cpu's L1; L2 → its L2; L3 → its
//!   L3; L3 miss and local RAM → its NUMA node. When the topology lacks the level (no L3 on the
//!   machine) the path ends at the nearest enclosing resource that exists.
//! * remote RAM and remote cache → the other NUMA node, through the machine root: the path is
//!   the tree path PU → … → local NUMA node → machine → remote NUMA node. "The other" is the
//!   node named by the sample's data-node attribute when it differs from the cpu's, else the
//!   only other NUMA node when there are two; with more and no hint the path ends at the
//!   machine root.
//! * unknown / I/O / uncached data sources, and the remote case on a one-node machine: the
//!   path is the PU alone.
//! * every resource on the path accrues the sample's latency and a count; every link (tree
//!   edge) on it one transfer. Samples whose cpu is not in the topology are not mapped and are
//!   counted as a warning.
//!
//! Paths depend only on (cpu, level, data node), so each sample stores the index of its
//! *route*; aggregating a selection is one pass over the selection adding into per-route
//! totals, then one pass over the (few) routes: linear in the selection.

use std::collections::HashMap;

use memscape_io::Warnings;
use memscape_topology::{NodeId, ResourceKind, Topology};

use crate::datasource::MemLevel;
use crate::table::NONE;
use crate::{Bitset, Samples};

/// What decides a sample's route: (cpu, memory level, data node).
pub type RouteKey = (u32, MemLevel, u32);

/// A distinct path through the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// Resources on the path, the PU first, the serving resource last.
    pub nodes: Vec<NodeId>,
    /// Links on the path, each named by its child node (the link child → parent).
    pub links: Vec<NodeId>,
    /// The samples' data source names no memory level (Mitos' `data_src` 2: a load with no
    /// level bits): the route is the PU alone, and [`Aggregate::level_unknown`] says so.
    pub level_unknown: bool,
}

/// Samples mapped onto a topology.
#[derive(Debug, Clone)]
pub struct Mapping {
    pub routes: Vec<Route>,
    /// Route of each sample, [`NONE`] when the sample could not be placed.
    pub route_of: Vec<u32>,
    /// Problems found while mapping (cpus missing from the topology).
    pub warnings: Warnings,
    node_count: usize,
}

/// Per-resource and per-link totals of a set of samples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aggregate {
    /// Samples through each node, by [`NodeId`].
    pub samples: Vec<u64>,
    /// Latency cycles through each node.
    pub cycles: Vec<u64>,
    /// Transfers over the link from each node to its parent (0 for the root).
    pub transfers: Vec<u64>,
    /// Of `samples`, those whose level is unknown (counted on their PU only, where they were
    /// taken; not served by any resource we can name). Non-zero at PUs only.
    pub level_unknown: Vec<u64>,
}

impl Mapping {
    /// Maps every sample of `samples` onto `topology`.
    pub fn new(samples: &Samples, topology: &Topology) -> Mapping {
        let mut mapping = Self::build(samples.len(), topology, |i| {
            (samples.cpu[i], samples.level[i], samples.data_node[i])
        });
        for (i, &r) in mapping.route_of.iter().enumerate() {
            if r == NONE {
                mapping.warnings.add(
                    "cpu_not_in_topology",
                    "sample's cpu is unknown or not a processing unit of the topology; not mapped",
                    samples.location(i),
                );
            }
        }
        mapping
    }

    /// Maps distinct route keys (the query engine's groups of samples) onto `topology`:
    /// `route_of[k]` is key `k`'s route. Keys that cannot be placed get [`NONE`]; no warnings.
    pub fn for_keys(keys: &[RouteKey], topology: &Topology) -> Mapping {
        Self::build(keys.len(), topology, |k| keys[k])
    }

    fn build(n: usize, topology: &Topology, key_of: impl Fn(usize) -> RouteKey) -> Mapping {
        let mut routes: Vec<Route> = Vec::new();
        let mut route_ids: HashMap<RouteKey, u32> = HashMap::new();
        let mut route_of = Vec::with_capacity(n);
        let numa: Vec<NodeId> = topology
            .nodes_of_kind(ResourceKind::Numa)
            .map(|n| n.id)
            .collect();
        for i in 0..n {
            let key = key_of(i);
            let (cpu, level, data_node) = key;
            if let Some(&r) = route_ids.get(&key) {
                route_of.push(r);
                continue;
            }
            let route = (cpu != NONE)
                .then(|| topology.pu(cpu))
                .flatten()
                .map(|pu| route_for(topology, &numa, pu, level, data_node));
            let id = match route {
                Some(route) => {
                    let id = routes.len() as u32;
                    routes.push(route);
                    id
                }
                None => NONE,
            };
            route_ids.insert(key, id);
            route_of.push(id);
        }
        Mapping {
            routes,
            route_of,
            warnings: Warnings::new(),
            node_count: topology.nodes().len(),
        }
    }

    /// Totals over items given as (samples, cycles) each, item `i` on route `route_of[i]`
    /// (a mapping [`Mapping::for_keys`] made, with the engine's totals per key).
    pub fn aggregate_totals(&self, totals: &[(u64, u64)]) -> Aggregate {
        let mut per_route = vec![(0u64, 0u64); self.routes.len()];
        for (&r, &(count, cycles)) in self.route_of.iter().zip(totals) {
            if r != NONE {
                let slot = &mut per_route[r as usize];
                slot.0 += count;
                slot.1 = slot.1.saturating_add(cycles);
            }
        }
        self.expand(&per_route)
    }

    /// Totals over the selected samples (all samples with `None`), in time linear in the
    /// selection plus the number of routes.
    pub fn aggregate(&self, samples: &Samples, selection: Option<&Bitset>) -> Aggregate {
        let mut per_route = vec![(0u64, 0u64); self.routes.len()];
        let mut add = |i: usize| {
            let r = self.route_of[i];
            if r != NONE {
                let slot = &mut per_route[r as usize];
                slot.0 += 1;
                slot.1 = slot.1.saturating_add(samples.latency[i]);
            }
        };
        match selection {
            Some(sel) => sel
                .iter()
                .filter(|&i| i < self.route_of.len())
                .for_each(&mut add),
            None => (0..self.route_of.len()).for_each(&mut add),
        }
        self.expand(&per_route)
    }

    /// Totals over the samples at positions `order[range]` (used by windows and clusters).
    pub fn aggregate_order(
        &self,
        samples: &Samples,
        order: &[u32],
        range: std::ops::Range<usize>,
    ) -> Aggregate {
        let mut per_route = vec![(0u64, 0u64); self.routes.len()];
        for &i in &order[range] {
            let r = self.route_of[i as usize];
            if r != NONE {
                let slot = &mut per_route[r as usize];
                slot.0 += 1;
                slot.1 = slot.1.saturating_add(samples.latency[i as usize]);
            }
        }
        self.expand(&per_route)
    }

    /// Per-route (count, cycles) → per-node and per-link totals.
    pub fn expand(&self, per_route: &[(u64, u64)]) -> Aggregate {
        let mut agg = Aggregate {
            samples: vec![0; self.node_count],
            cycles: vec![0; self.node_count],
            transfers: vec![0; self.node_count],
            level_unknown: vec![0; self.node_count],
        };
        for (route, &(count, cycles)) in self.routes.iter().zip(per_route) {
            if count == 0 {
                continue;
            }
            for &n in &route.nodes {
                agg.samples[n as usize] += count;
                agg.cycles[n as usize] = agg.cycles[n as usize].saturating_add(cycles);
            }
            for &l in &route.links {
                agg.transfers[l as usize] += count;
            }
            if route.level_unknown
                && let Some(&pu) = route.nodes.first()
            {
                agg.level_unknown[pu as usize] += count;
            }
        }
        agg
    }

    pub fn node_count(&self) -> usize {
        self.node_count
    }
}

/// Where a level is served, as the kind of resource (None: nowhere beyond the PU; Some(Numa)
/// with `remote`: the other node).
fn target(level: MemLevel) -> Option<(ResourceKind, bool)> {
    match level {
        MemLevel::L1 | MemLevel::Lfb => Some((ResourceKind::L1, false)),
        MemLevel::L2 => Some((ResourceKind::L2, false)),
        MemLevel::L3 => Some((ResourceKind::L3, false)),
        MemLevel::L3Miss | MemLevel::LocalRam => Some((ResourceKind::Numa, false)),
        MemLevel::RemoteRam | MemLevel::RemoteCache => Some((ResourceKind::Numa, true)),
        MemLevel::Io | MemLevel::Uncached | MemLevel::Unknown => None,
    }
}

fn route_for(
    topology: &Topology,
    numa: &[NodeId],
    pu: NodeId,
    level: MemLevel,
    data_node: u32,
) -> Route {
    let up = topology.path_to_root(pu);
    let kind_of = |n: NodeId| topology.node(n).map(|x| x.kind);
    let Some((kind, remote)) = target(level) else {
        return Route {
            nodes: vec![pu],
            links: Vec::new(),
            level_unknown: level == MemLevel::Unknown,
        };
    };
    // Nearest ancestor whose kind is `kind` or, if that level is missing, the first one above
    // it. (Not the first ancestor "at or above" in kind order alone: a NUMA node may sit below
    // the L3 it shares with another node, as hwloc v1 files nest them.)
    let end_pos = up
        .iter()
        .position(|&n| kind_of(n) == Some(kind))
        .or_else(|| {
            up.iter()
                .position(|&n| kind_of(n).is_some_and(|k| k <= kind))
        })
        .unwrap_or(up.len().saturating_sub(1));
    if !remote {
        let nodes = up[..=end_pos].to_vec();
        let links = nodes[..nodes.len() - 1].to_vec();
        return Route {
            nodes,
            links,
            level_unknown: false,
        };
    }
    let local = topology.ancestor_of_kind(pu, ResourceKind::Numa);
    let hinted = numa
        .iter()
        .copied()
        .find(|&n| topology.node(n).and_then(|x| x.os_index) == Some(data_node))
        .filter(|&n| Some(n) != local);
    let other = hinted.or_else(|| {
        let others: Vec<NodeId> = numa.iter().copied().filter(|&n| Some(n) != local).collect();
        (others.len() == 1 && numa.len() == 2).then(|| others[0])
    });
    match other {
        Some(remote_node) => {
            let nodes = topology.tree_path(pu, remote_node);
            // Every consecutive pair is a tree edge; name it by its child.
            let links = nodes
                .windows(2)
                .map(|w| {
                    if topology.node(w[0]).and_then(|n| n.parent) == Some(w[1]) {
                        w[0]
                    } else {
                        w[1]
                    }
                })
                .collect();
            Route {
                nodes,
                links,
                level_unknown: false,
            }
        }
        None if numa.len() > 2 => {
            let nodes = up.clone();
            let links = nodes[..nodes.len() - 1].to_vec();
            Route {
                nodes,
                links,
                level_unknown: false,
            }
        }
        None => Route {
            nodes: vec![pu],
            links: Vec::new(),
            level_unknown: false,
        },
    }
}
