//! `memscape topology [FILE] [--json]`: a serde report and a text tree.

use std::fmt::Write as _;

use crate::{NodeId, ResourceKind, SourceFormat, Topology};

/// JSON of `memscape topology --json`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TopologyReport {
    pub source: String,
    pub format: SourceFormat,
    /// Node count per kind, outermost first.
    pub levels: Vec<LevelCount>,
    /// hwloc Group objects that were flattened (not shown as levels).
    pub groups_flattened: u32,
    /// Every node in preorder (ids are indices into this list).
    pub nodes: Vec<NodeReport>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct LevelCount {
    pub kind: ResourceKind,
    pub count: usize,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct NodeReport {
    pub id: NodeId,
    pub kind: ResourceKind,
    pub depth: u32,
    pub parent: Option<NodeId>,
    pub os_index: Option<u32>,
    pub size_bytes: Option<u64>,
    /// OS indices of the PUs under this node.
    pub pus: Vec<u32>,
}

/// Builds the report of `memscape topology --json`.
pub fn topology_report(topology: &Topology) -> TopologyReport {
    TopologyReport {
        source: topology.source().to_owned(),
        format: topology.format(),
        levels: topology
            .kind_counts()
            .into_iter()
            .map(|(kind, count)| LevelCount { kind, count })
            .collect(),
        groups_flattened: topology.groups_flattened(),
        nodes: topology
            .nodes()
            .iter()
            .map(|n| NodeReport {
                id: n.id,
                kind: n.kind,
                depth: n.depth,
                parent: n.parent,
                os_index: n.os_index,
                size_bytes: n.size_bytes,
                pus: n.pus.clone(),
            })
            .collect(),
    }
}

/// Human-readable sizes: `32 KiB`, `20 MiB`, `31.9 GiB`.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    // The unit is chosen on the value as printed (one decimal): no "1024.0 KiB".
    while (value * 10.0).round() / 10.0 >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if (value * 10.0).round() / 10.0 == value.round() {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

fn label(topology: &Topology, id: NodeId) -> String {
    let Some(n) = topology.node(id) else {
        return String::new();
    };
    let name = match n.kind {
        ResourceKind::Machine => "Machine".to_string(),
        ResourceKind::Numa => format!("NUMANode P#{}", n.os_index.unwrap_or(0)),
        ResourceKind::L3 | ResourceKind::L2 | ResourceKind::L1 => {
            n.kind.as_str().to_ascii_uppercase()
        }
        ResourceKind::Core => match n.os_index {
            Some(os) => format!("Core P#{os}"),
            None => "Core".to_string(),
        },
        ResourceKind::Pu => format!("PU P#{}", n.os_index.unwrap_or(0)),
    };
    match n.size_bytes {
        Some(size) => format!("{name} ({})", human_size(size)),
        None => name,
    }
}

/// The tree as indented text, one node per line, like `lstopo --no-io`, with chains of single
/// children joined by ` + ` so large machines stay readable.
pub fn render_tree(topology: &Topology) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({:?}{})",
        topology.source(),
        topology.format(),
        if topology.groups_flattened() > 0 {
            format!(", {} hwloc groups flattened", topology.groups_flattened())
        } else {
            String::new()
        }
    );
    let mut stack: Vec<(NodeId, usize)> = vec![(0, 0)];
    while let Some((id, indent)) = stack.pop() {
        let mut line = label(topology, id);
        let mut current = id;
        while let Some(n) = topology.node(current) {
            if n.children.len() != 1 {
                break;
            }
            current = n.children[0];
            line.push_str(" + ");
            line.push_str(&label(topology, current));
        }
        let _ = writeln!(out, "{}{line}", "  ".repeat(indent));
        if let Some(n) = topology.node(current) {
            for &c in n.children.iter().rev() {
                stack.push((c, indent + 1));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::human_size;

    #[test]
    fn a_size_that_rounds_up_to_the_next_unit_is_written_in_it() {
        assert_eq!(human_size(32 * 1024), "32 KiB");
        assert_eq!(human_size(1_048_575), "1 MiB");
        assert_eq!(human_size(2_096_000), "2 MiB");
        assert_eq!(human_size(1536), "1.5 KiB");
    }
}
