//! Navigating a large graph as IGV does: search nodes by a regular expression on their
//! properties, show a set S of nodes fully with their neighbours semi-transparent (and nothing
//! else), and cut a filtered view down to such a set.

use std::collections::HashSet;

use regex::Regex;

use crate::GraphError;
use crate::filter::ViewGraph;
use crate::model::{Graph, Node};

/// A node search: `regex` against the id and every property value, or `property=regex`
/// against one property (`id=` for the id).
#[derive(Debug, Clone)]
pub struct NodeQuery {
    property: Option<String>,
    regex: Regex,
}

impl NodeQuery {
    pub fn parse(text: &str) -> Result<Self, GraphError> {
        let err = |message: String| GraphError::Search {
            query: text.to_owned(),
            message,
        };
        // `name=...` only when the left side looks like a property name, so that a regex with
        // `=` in it (e.g. `a==b`) still searches everything.
        let (property, pattern) = match text.split_once('=') {
            Some((p, rest))
                if !p.is_empty()
                    && p.chars()
                        .all(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '.') =>
            {
                (Some(p.to_owned()), rest)
            }
            _ => (None, text),
        };
        let regex = crate::filter::user_regex(pattern).map_err(err)?;
        Ok(Self { property, regex })
    }

    pub fn matches(&self, node: &Node) -> bool {
        match self.property.as_deref() {
            Some("id") => self.regex.is_match(&node.id),
            Some(p) => node
                .properties
                .get(p)
                .is_some_and(|v| self.regex.is_match(v)),
            None => {
                self.regex.is_match(&node.id)
                    || node.properties.iter().any(|(_, v)| self.regex.is_match(v))
            }
        }
    }
}

/// Indices of the nodes of `graph` that match `query`, in node order.
pub fn search(graph: &Graph, query: &NodeQuery) -> Vec<usize> {
    graph
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| query.matches(n))
        .map(|(i, _)| i)
        .collect()
}

/// How a node shows when a set S of nodes is fully shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visibility {
    /// In S.
    Full,
    /// Not in S but adjacent to a member (either direction): drawn semi-transparent.
    Neighbor,
    Hidden,
}

/// Visibility of every node of `graph` for the fully shown node ids `shown` (ids absent from
/// the graph are ignored: the set survives stepping through snapshots).
pub fn neighbourhood(graph: &Graph, shown: &HashSet<String>) -> Vec<Visibility> {
    let mut out: Vec<Visibility> = graph
        .nodes
        .iter()
        .map(|n| {
            if shown.contains(&n.id) {
                Visibility::Full
            } else {
                Visibility::Hidden
            }
        })
        .collect();
    for e in &graph.edges {
        let (a, b) = (e.from, e.to);
        let (Some(&va), Some(&vb)) = (out.get(a), out.get(b)) else {
            continue;
        };
        if va == Visibility::Full && vb == Visibility::Hidden {
            out[b] = Visibility::Neighbor;
        } else if vb == Visibility::Full && va == Visibility::Hidden {
            out[a] = Visibility::Neighbor;
        }
    }
    out
}

/// `view` cut down to the nodes with `keep[i]`: node styles, merged ids and the map back to
/// the input follow; an edge stays when both its ends stay. Also returns, for each kept edge,
/// its index in `view` (to carry per-edge data such as difference colours along).
pub fn restrict(view: &ViewGraph, keep: &[bool]) -> (ViewGraph, Vec<usize>) {
    let mut graph = view.graph.clone();
    // The edges `retain_nodes` keeps, in its order (both ends kept).
    let kept_edges: Vec<usize> = (0..view.graph.edges.len())
        .filter(|&i| {
            let e = &view.graph.edges[i];
            keep.get(e.from).copied().unwrap_or(false) && keep.get(e.to).copied().unwrap_or(false)
        })
        .collect();
    graph.retain_nodes(|i, _| keep.get(i).copied().unwrap_or(false));
    let nodes = view
        .nodes
        .iter()
        .enumerate()
        .filter(|(i, _)| keep.get(*i).copied().unwrap_or(false))
        .map(|(_, s)| s.clone())
        .collect();
    let source_node = view
        .source_node
        .iter()
        .enumerate()
        .filter(|(i, _)| keep.get(*i).copied().unwrap_or(false))
        .map(|(_, &s)| s)
        .collect();
    let edges = kept_edges
        .iter()
        .filter_map(|&i| view.edges.get(i).cloned())
        .collect();
    (
        ViewGraph {
            graph,
            nodes,
            edges,
            source_node,
        },
        kept_edges,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::{Profile, apply_profile};
    use crate::model::Properties;

    /// a → b → c → d, e alone; every node has `name` = its id upper-cased, b is `kind=phi`.
    fn chain() -> Graph {
        let mut g = Graph::new("chain");
        for id in ["a", "b", "c", "d", "e"] {
            let mut p = Properties::new();
            p.set("name", id.to_uppercase());
            if id == "b" {
                p.set("kind", "Phi");
            }
            g.upsert_node(id, p);
        }
        for (x, y) in [(0, 1), (1, 2), (2, 3)] {
            g.add_edge(x, y);
        }
        g
    }

    #[test]
    fn search_by_any_property_or_one() {
        let g = chain();
        let q = NodeQuery::parse("^[BC]$").unwrap();
        assert_eq!(search(&g, &q), [1, 2]);
        assert_eq!(search(&g, &NodeQuery::parse("kind=Phi").unwrap()), [1]);
        assert_eq!(search(&g, &NodeQuery::parse("id=^e").unwrap()), [4]);
        // A property nobody has matches nothing; `=` inside a regex is a plain search.
        assert!(search(&g, &NodeQuery::parse("missing=.").unwrap()).is_empty());
        assert!(search(&g, &NodeQuery::parse("a==b").unwrap()).is_empty());
        let bad = NodeQuery::parse("name=(").unwrap_err().to_string();
        assert!(bad.contains("name=("), "{bad}");
    }

    #[test]
    fn neighbours_are_one_edge_away_in_either_direction() {
        let g = chain();
        let shown: HashSet<String> = ["b".to_owned(), "zz".to_owned()].into();
        use Visibility::*;
        assert_eq!(
            neighbourhood(&g, &shown),
            [Neighbor, Full, Neighbor, Hidden, Hidden]
        );
        assert!(
            neighbourhood(&g, &HashSet::new())
                .iter()
                .all(|v| *v == Hidden)
        );
    }

    #[test]
    fn restrict_keeps_styles_and_edges_between_kept_nodes() {
        let g = chain();
        let mut view = apply_profile(
            &g,
            &Profile {
                name: "none".into(),
                description: String::new(),
                rules: Vec::new(),
            },
        )
        .unwrap();
        view.nodes[2].hidden = true;
        view.edges[1].color = Some([1, 2, 3, 4]);
        let (cut, edges) = restrict(&view, &[false, true, true, true, false]);
        let ids: Vec<&str> = cut.graph.nodes.iter().map(|n| n.id.as_str()).collect();
        assert_eq!(ids, ["b", "c", "d"]);
        assert_eq!(cut.source_node, [1, 2, 3]);
        assert!(cut.nodes[1].hidden && !cut.nodes[0].hidden);
        assert_eq!(edges, [1, 2]);
        assert_eq!(cut.edges.len(), cut.graph.edges.len());
        assert_eq!(cut.edges[0].color, Some([1, 2, 3, 4]));
        assert_eq!((cut.graph.edges[0].from, cut.graph.edges[0].to), (0, 1));
        assert_eq!(cut.graph.node_index("d"), Some(2));
    }
}
