//! Hardware topology for memscape's samples views: a tree
//! machine → NUMA node → L3 → L2 → L1 → core → processing unit (PU), with sizes and OS indices.
//!
//! Sources:
//! * the running machine, through hwloc ([`Topology::from_running_machine`], via `hwlocality`);
//! * an hwloc XML file as `lstopo` writes it, formats v1 (hwloc 1.x), v2 (`version="2.0"`) and
//!   the hwloc 3 format (`version="3.0"`), parsed by our own reader ([`hwloc_xml`]);
//! * MemAxes' `hardware.xml` ([`memaxes_xml`]).
//!
//! Every source is first flattened into [`RawObject`]s (kind, OS index, size, set of PUs) and the
//! tree is then rebuilt by PU-set containment ([`Topology::from_raw`]). That one construction is
//! why hwloc v1 (NUMA nodes are parents of packages), v2/v3 (NUMA nodes are memory children of a
//! package or group) and MemAxes' nesting all come out as the same shape.
//!
//! What is kept and what is not (see the README for the reasoning):
//! * levels kept: NUMA node, L3, L2, L1 data/unified cache, core, PU; a machine root on top;
//! * Package, Die, Group, L4/L5, instruction caches, memory-side caches, I/O and Misc objects are
//!   *flattened*: they do not appear, their kept descendants attach to the nearest kept object
//!   that contains their PUs. The number of Group objects flattened is reported
//!   ([`Topology::groups_flattened`]) so a user can see that the machine had them;
//! * a level absent from the source is simply absent (MemAxes' hardware.xml has no cores; an
//!   AMD machine without L3 has none); paths then skip it;
//! * if the source has no NUMA node at all (hwloc v1 files of single-node machines), one NUMA
//!   node spanning all PUs is added, with the machine's memory as its size, because the
//!   samples mapping needs a "local RAM" resource.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub mod hwloc_xml;
pub mod live;
pub mod memaxes_xml;
pub mod report;

pub use report::{TopologyReport, render_tree, topology_report};

/// Index of a node in [`Topology::nodes`]; the root is 0 and ids follow a depth-first preorder.
pub type NodeId = u32;

/// The kinds of resources memscape shows, outermost first.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum ResourceKind {
    Machine,
    Numa,
    L3,
    L2,
    L1,
    Core,
    Pu,
}

impl ResourceKind {
    /// All kinds, outermost first.
    pub const ALL: [ResourceKind; 7] = [
        ResourceKind::Machine,
        ResourceKind::Numa,
        ResourceKind::L3,
        ResourceKind::L2,
        ResourceKind::L1,
        ResourceKind::Core,
        ResourceKind::Pu,
    ];

    /// The lowercase name used in JSON (`"numa"`, `"l3"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ResourceKind::Machine => "machine",
            ResourceKind::Numa => "numa",
            ResourceKind::L3 => "l3",
            ResourceKind::L2 => "l2",
            ResourceKind::L1 => "l1",
            ResourceKind::Core => "core",
            ResourceKind::Pu => "pu",
        }
    }

    /// Parses `machine`, `numa`, `l3`, `l2`, `l1`, `core`, `pu` (case-insensitive; `cpu` and
    /// `processor` are accepted for `pu`).
    pub fn parse(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "machine" => Some(ResourceKind::Machine),
            "numa" | "numanode" | "node" => Some(ResourceKind::Numa),
            "l3" => Some(ResourceKind::L3),
            "l2" => Some(ResourceKind::L2),
            "l1" => Some(ResourceKind::L1),
            "core" => Some(ResourceKind::Core),
            "pu" | "cpu" | "processor" => Some(ResourceKind::Pu),
            _ => None,
        }
    }
}

impl std::fmt::Display for ResourceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One resource in the tree.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Node {
    pub id: NodeId,
    pub kind: ResourceKind,
    /// Distance from the root (machine = 0).
    pub depth: u32,
    pub parent: Option<NodeId>,
    pub children: Vec<NodeId>,
    /// The OS index (hwloc `os_index`, MemAxes `id`): the cpu number for PUs, the node number
    /// for NUMA nodes. Caches usually have none.
    pub os_index: Option<u32>,
    /// Bytes of memory (NUMA node, machine) or cache capacity.
    pub size_bytes: Option<u64>,
    /// OS indices of the PUs below this node, ascending.
    pub pus: Vec<u32>,
}

/// An object of some source before the tree is rebuilt: what it is, its OS index and size, and
/// which PUs (by OS index) it covers. PUs have `pus == [os_index]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawObject {
    pub kind: ResourceKind,
    pub os_index: Option<u32>,
    pub size_bytes: Option<u64>,
    /// PU OS indices covered; need not be sorted.
    pub pus: Vec<u32>,
}

/// Where a topology came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceFormat {
    RunningMachine,
    HwlocXmlV1,
    HwlocXmlV2,
    HwlocXmlV3,
    MemaxesHardwareXml,
}

/// Errors building or reading a topology.
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    #[error(transparent)]
    Input(#[from] memscape_io::InputError),
    #[error("{at}: malformed XML: {message}")]
    Xml {
        at: memscape_io::Location,
        message: String,
    },
    #[error("{at}: {message}")]
    Invalid {
        at: memscape_io::Location,
        message: String,
    },
    #[error("{file}: not a topology: expected an hwloc <topology> or a MemAxes <Hardware> root")]
    UnknownFormat { file: String },
    #[error("{file}: the topology has no processing unit")]
    NoProcessingUnit { file: String },
    #[error("{file}: processing unit {os_index} appears twice")]
    DuplicatePu { file: String, os_index: u32 },
    #[error("hwloc: {0}")]
    Hwloc(String),
}

/// The hardware tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    nodes: Vec<Node>,
    pu_by_os: HashMap<u32, NodeId>,
    source: String,
    format: SourceFormat,
    groups_flattened: u32,
}

impl Topology {
    /// Rebuilds the tree from flattened objects by PU-set containment.
    ///
    /// Objects are placed level by level (NUMA, L3, L2, L1, core, PU); each goes under the deepest
    /// already placed node whose PU set contains its own, so the order of the input does not
    /// matter except for the order of siblings, which keeps the input order. An object with no
    /// PU (a CPU-less NUMA node) goes under the machine. `machine_memory` sizes the machine root
    /// (and the implied NUMA node when the source has none).
    pub fn from_raw(
        raw: Vec<RawObject>,
        machine_memory: Option<u64>,
        source: impl Into<String>,
        format: SourceFormat,
        groups_flattened: u32,
    ) -> Result<Self, TopologyError> {
        let source = source.into();
        let mut by_kind: Vec<Vec<RawObject>> = vec![Vec::new(); ResourceKind::ALL.len()];
        for mut object in raw {
            object.pus.sort_unstable();
            object.pus.dedup();
            by_kind[object.kind as usize].push(object);
        }
        // The set of PUs is defined by the PU objects; other objects' sets are clipped to it
        // (hwloc cpusets may name disallowed or offline PUs that have no PU object).
        let mut all_pus: Vec<u32> = Vec::new();
        for pu in &mut by_kind[ResourceKind::Pu as usize] {
            let os = match (pu.os_index, pu.pus.as_slice()) {
                (Some(os), _) => os,
                (None, [only]) => *only,
                _ => {
                    return Err(TopologyError::Invalid {
                        at: memscape_io::Location {
                            file: source.clone(),
                            line: None,
                            offset: None,
                        },
                        message: "a processing unit has neither an OS index nor a one-PU set"
                            .into(),
                    });
                }
            };
            pu.os_index = Some(os);
            pu.pus = vec![os];
            all_pus.push(os);
        }
        if all_pus.is_empty() {
            return Err(TopologyError::NoProcessingUnit { file: source });
        }
        all_pus.sort_unstable();
        for pair in all_pus.windows(2) {
            if pair[0] == pair[1] {
                return Err(TopologyError::DuplicatePu {
                    file: source,
                    os_index: pair[0],
                });
            }
        }
        if by_kind[ResourceKind::Numa as usize].is_empty() {
            by_kind[ResourceKind::Numa as usize].push(RawObject {
                kind: ResourceKind::Numa,
                os_index: Some(0),
                size_bytes: machine_memory,
                pus: all_pus.clone(),
            });
        }
        let machine_size = machine_memory.or_else(|| {
            let sizes: Vec<u64> = by_kind[ResourceKind::Numa as usize]
                .iter()
                .filter_map(|n| n.size_bytes)
                .collect();
            (!sizes.is_empty()).then(|| sizes.iter().fold(0u64, |a, &b| a.saturating_add(b)))
        });

        // Build with temporary ids, then renumber in preorder so ids are stable and readable.
        let mut nodes: Vec<Node> = vec![Node {
            id: 0,
            kind: ResourceKind::Machine,
            depth: 0,
            parent: None,
            children: Vec::new(),
            os_index: Some(0),
            size_bytes: machine_size,
            pus: all_pus.clone(),
        }];
        // For every PU, the deepest placed node that contains it.
        let mut deepest: HashMap<u32, usize> = all_pus.iter().map(|&p| (p, 0usize)).collect();
        // Placed by containment: larger PU sets first, the kind order breaking ties (a NUMA
        // node and an L3 over the same PUs: the NUMA node above). So a NUMA node smaller than
        // the cache that holds it (hwloc v1 nests NUMA nodes inside an L3 shared by two nodes;
        // in hwloc 2 terms they are memory children of that L3 or of a group under it) becomes
        // that cache's child and the parent of its own cores, rather than a childless child of
        // the machine.
        let mut ordered: Vec<(ResourceKind, RawObject)> = Vec::new();
        for kind in &ResourceKind::ALL[1..] {
            for mut object in std::mem::take(&mut by_kind[*kind as usize]) {
                object.pus.retain(|p| deepest.contains_key(p));
                ordered.push((*kind, object));
            }
        }
        ordered.sort_by(|(ka, a), (kb, b)| b.pus.len().cmp(&a.pus.len()).then(ka.cmp(kb)));
        {
            for (kind, object) in ordered {
                let kind = &kind;
                let pus = object.pus;
                if pus.is_empty() && *kind != ResourceKind::Numa {
                    // A cache or core without any PU we know: nothing can ever be mapped there.
                    tracing::debug!(?kind, "skipping an object without processing units");
                    continue;
                }
                let mut parent = pus
                    .first()
                    .and_then(|p| deepest.get(p).copied())
                    .unwrap_or(0);
                while parent != 0 && !is_subset(&pus, &nodes[parent].pus) {
                    parent = nodes[parent].parent.map_or(0, |p| p as usize);
                }
                let id = nodes.len();
                let depth = nodes[parent].depth + 1;
                nodes.push(Node {
                    id: id as NodeId,
                    kind: *kind,
                    depth,
                    parent: Some(parent as NodeId),
                    children: Vec::new(),
                    os_index: object.os_index,
                    size_bytes: object.size_bytes,
                    pus: pus.clone(),
                });
                nodes[parent].children.push(id as NodeId);
                for p in &pus {
                    deepest.insert(*p, id);
                }
            }
        }
        let nodes = renumber_preorder(nodes);
        let pu_by_os = nodes
            .iter()
            .filter(|n| n.kind == ResourceKind::Pu)
            .filter_map(|n| n.os_index.map(|os| (os, n.id)))
            .collect();
        Ok(Topology {
            nodes,
            pu_by_os,
            source,
            format,
            groups_flattened,
        })
    }

    /// The machine this process runs on, discovered by hwloc.
    pub fn from_running_machine() -> Result<Self, TopologyError> {
        live::running_machine()
    }

    /// Reads a topology file: an hwloc XML (any version) or a MemAxes hardware.xml, told apart
    /// by the root element; compressed files are accepted (see `memscape_io::read_input`).
    pub fn from_file(path: &Path) -> Result<Self, TopologyError> {
        let bytes = memscape_io::read_input(path)?;
        Self::from_bytes(&bytes, &path.display().to_string())
    }

    /// Parses a topology from memory; `file` names it in errors.
    pub fn from_bytes(bytes: &[u8], file: &str) -> Result<Self, TopologyError> {
        match sniff_root(bytes) {
            Some(Root::Hwloc) => hwloc_xml::parse(bytes, file),
            Some(Root::Memaxes) => memaxes_xml::parse(bytes, file),
            None => Err(TopologyError::UnknownFormat {
                file: file.to_owned(),
            }),
        }
    }

    /// `memscape topology [FILE]`: the file if given, else the running machine.
    pub fn load(path: Option<&Path>) -> Result<Self, TopologyError> {
        match path {
            Some(p) => Self::from_file(p),
            None => Self::from_running_machine(),
        }
    }

    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub fn node(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id as usize)
    }

    pub fn root(&self) -> &Node {
        &self.nodes[0]
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    pub fn format(&self) -> SourceFormat {
        self.format
    }

    /// How many hwloc Group objects were flattened away (see the crate docs).
    pub fn groups_flattened(&self) -> u32 {
        self.groups_flattened
    }

    /// The PU node of an OS cpu number.
    pub fn pu(&self, os_index: u32) -> Option<NodeId> {
        self.pu_by_os.get(&os_index).copied()
    }

    /// Nodes of one kind in preorder.
    pub fn nodes_of_kind(&self, kind: ResourceKind) -> impl Iterator<Item = &Node> + '_ {
        self.nodes.iter().filter(move |n| n.kind == kind)
    }

    /// How many nodes of each kind, outermost first, kinds with zero nodes left out.
    pub fn kind_counts(&self) -> Vec<(ResourceKind, usize)> {
        ResourceKind::ALL
            .iter()
            .map(|&k| (k, self.nodes_of_kind(k).count()))
            .filter(|&(_, c)| c > 0)
            .collect()
    }

    /// The nearest node of `kind` at or above `id`.
    pub fn ancestor_of_kind(&self, id: NodeId, kind: ResourceKind) -> Option<NodeId> {
        let mut current = Some(id);
        while let Some(c) = current {
            let node = self.node(c)?;
            if node.kind == kind {
                return Some(c);
            }
            current = node.parent;
        }
        None
    }

    /// The path from `from` up to the root, `from` first.
    pub fn path_to_root(&self, from: NodeId) -> Vec<NodeId> {
        let mut path = Vec::new();
        let mut current = Some(from);
        while let Some(c) = current {
            let Some(node) = self.node(c) else { break };
            path.push(c);
            current = node.parent;
        }
        path
    }

    /// The path through the tree from `from` to `to` (both included): up from `from` to the
    /// lowest common ancestor, then down to `to`.
    pub fn tree_path(&self, from: NodeId, to: NodeId) -> Vec<NodeId> {
        let up = self.path_to_root(from);
        let down = self.path_to_root(to);
        let Some(lca_pos_up) = up.iter().position(|n| down.contains(n)) else {
            return up;
        };
        let lca = up[lca_pos_up];
        let lca_pos_down = down.iter().position(|&n| n == lca).unwrap_or(down.len());
        let mut path: Vec<NodeId> = up[..=lca_pos_up].to_vec();
        path.extend(down[..lca_pos_down].iter().rev());
        path
    }
}

fn is_subset(small: &[u32], big: &[u32]) -> bool {
    small.iter().all(|p| big.binary_search(p).is_ok())
}

fn renumber_preorder(nodes: Vec<Node>) -> Vec<Node> {
    let mut order: Vec<usize> = Vec::with_capacity(nodes.len());
    let mut stack = vec![0usize];
    while let Some(n) = stack.pop() {
        order.push(n);
        for &c in nodes[n].children.iter().rev() {
            stack.push(c as usize);
        }
    }
    let mut new_id = vec![0 as NodeId; nodes.len()];
    for (new, &old) in order.iter().enumerate() {
        new_id[old] = new as NodeId;
    }
    order
        .iter()
        .map(|&old| {
            let n = &nodes[old];
            Node {
                id: new_id[old],
                kind: n.kind,
                depth: n.depth,
                parent: n.parent.map(|p| new_id[p as usize]),
                children: n.children.iter().map(|&c| new_id[c as usize]).collect(),
                os_index: n.os_index,
                size_bytes: n.size_bytes,
                pus: n.pus.clone(),
            }
        })
        .collect()
}

enum Root {
    Hwloc,
    Memaxes,
}

/// Finds the first element name, skipping the XML declaration, comments and the doctype.
fn sniff_root(bytes: &[u8]) -> Option<Root> {
    let mut rest = bytes;
    loop {
        let start = rest.iter().position(|&b| b == b'<')?;
        rest = &rest[start + 1..];
        match rest.first() {
            Some(b'?') | Some(b'!') => continue,
            _ => {
                let end = rest
                    .iter()
                    .position(|&b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b'-'))
                    .unwrap_or(rest.len());
                return match &rest[..end] {
                    b"topology" => Some(Root::Hwloc),
                    b"Hardware" => Some(Root::Memaxes),
                    _ => None,
                };
            }
        }
    }
}

/// Byte offset → 1-based line, for error locations.
pub(crate) fn location_at(bytes: &[u8], file: &str, offset: u64) -> memscape_io::Location {
    let mut end = (offset as usize).min(bytes.len());
    // Positions taken before an element point just after the previous one: skip the
    // whitespace so the line is the element's own.
    while end < bytes.len() && bytes[end].is_ascii_whitespace() {
        end += 1;
    }
    let line = bytes[..end].iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    memscape_io::Location::line(file, line)
}

/// Where the shared test data lives, for tests and benches: `$MEMSCAPE_DATA` or
/// `<workspace>/../shared/data`.
pub fn shared_data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("MEMSCAPE_DATA") {
        return PathBuf::from(dir);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pu(os: u32) -> RawObject {
        RawObject {
            kind: ResourceKind::Pu,
            os_index: Some(os),
            size_bytes: None,
            pus: vec![os],
        }
    }

    fn obj(kind: ResourceKind, pus: &[u32]) -> RawObject {
        RawObject {
            kind,
            os_index: None,
            size_bytes: None,
            pus: pus.to_vec(),
        }
    }

    #[test]
    fn containment_builds_the_tree_regardless_of_input_order() {
        let raw = vec![
            pu(3),
            obj(ResourceKind::L2, &[2, 3]),
            pu(0),
            obj(ResourceKind::Numa, &[0, 1, 2, 3]),
            obj(ResourceKind::L2, &[0, 1]),
            pu(1),
            pu(2),
        ];
        let t = Topology::from_raw(raw, None, "t", SourceFormat::RunningMachine, 0).unwrap();
        assert_eq!(t.nodes().len(), 1 + 1 + 2 + 4);
        let numa = t.nodes_of_kind(ResourceKind::Numa).next().unwrap();
        assert_eq!(numa.depth, 1);
        for p in 0..4 {
            let id = t.pu(p).unwrap();
            let l2 = t.ancestor_of_kind(id, ResourceKind::L2).unwrap();
            assert!(t.node(l2).unwrap().pus.contains(&p));
            assert_eq!(t.node(id).unwrap().depth, 3);
        }
        // preorder ids: every child id is larger than its parent's
        for n in t.nodes() {
            for &c in &n.children {
                assert!(c > n.id);
                assert_eq!(t.node(c).unwrap().parent, Some(n.id));
            }
        }
    }

    #[test]
    fn missing_numa_is_implied_and_duplicates_rejected() {
        let t = Topology::from_raw(
            vec![pu(0), pu(1)],
            Some(1024),
            "t",
            SourceFormat::HwlocXmlV1,
            0,
        )
        .unwrap();
        let numa: Vec<_> = t.nodes_of_kind(ResourceKind::Numa).collect();
        assert_eq!(numa.len(), 1);
        assert_eq!(numa[0].size_bytes, Some(1024));
        assert!(matches!(
            Topology::from_raw(vec![pu(0), pu(0)], None, "t", SourceFormat::HwlocXmlV1, 0),
            Err(TopologyError::DuplicatePu { os_index: 0, .. })
        ));
        assert!(matches!(
            Topology::from_raw(vec![], None, "t", SourceFormat::HwlocXmlV1, 0),
            Err(TopologyError::NoProcessingUnit { .. })
        ));
    }

    #[test]
    fn numa_nodes_smaller_than_an_l3_go_under_it() {
        // An L3 shared by two NUMA nodes (hwloc v1 nests the nodes inside it): the nodes are
        // children of the L3 and keep their PUs (they were childless children of the machine).
        let raw = vec![
            obj(ResourceKind::Numa, &[0]),
            obj(ResourceKind::Numa, &[1]),
            obj(ResourceKind::L3, &[0, 1]),
            pu(0),
            pu(1),
        ];
        let t = Topology::from_raw(raw, None, "t", SourceFormat::RunningMachine, 0).unwrap();
        let l3 = t.nodes_of_kind(ResourceKind::L3).next().unwrap();
        assert_eq!(l3.parent, Some(0));
        for numa in t.nodes_of_kind(ResourceKind::Numa) {
            assert_eq!(numa.parent, Some(l3.id));
            assert_eq!(numa.children.len(), 1);
        }
        let pu1 = t.node(t.pu(1).unwrap()).unwrap();
        assert_eq!(
            t.node(pu1.parent.unwrap()).unwrap().kind,
            ResourceKind::Numa,
            "PUs follow the deepest container"
        );
    }

    #[test]
    fn tree_path_goes_through_the_common_ancestor() {
        let raw = vec![
            obj(ResourceKind::Numa, &[0]),
            obj(ResourceKind::Numa, &[1]),
            pu(0),
            pu(1),
        ];
        let t = Topology::from_raw(raw, None, "t", SourceFormat::RunningMachine, 0).unwrap();
        let p0 = t.pu(0).unwrap();
        let n1 = t
            .ancestor_of_kind(t.pu(1).unwrap(), ResourceKind::Numa)
            .unwrap();
        let path = t.tree_path(p0, n1);
        let kinds: Vec<_> = path.iter().map(|&n| t.node(n).unwrap().kind).collect();
        assert_eq!(
            kinds,
            vec![
                ResourceKind::Pu,
                ResourceKind::Numa,
                ResourceKind::Machine,
                ResourceKind::Numa
            ]
        );
    }
}
