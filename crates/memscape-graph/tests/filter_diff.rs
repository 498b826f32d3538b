#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;

use memscape_graph::diff::{Change, diff, difference_graph};
use memscape_graph::filter::{Profile, apply_profile, parse_color};
use memscape_graph::igv;

#[test]
fn hotspot_profile_colors_by_category_on_the_example() {
    let imported = igv::load_igv(&common::shared_data("igv/example.xml")).unwrap();
    let g = imported.document.snapshots()[0];
    let profile = Profile::shipped("hotspot").unwrap();
    let view = apply_profile(g, &profile).unwrap();
    let expected = [
        ("control", "#f2caca"),
        ("memory", "#c6e9c6"),
        ("data", "#c8d8f4"),
        ("mixed", "#f9e2b8"),
        ("other", "#dcdcdc"),
    ];
    let mut colored = 0;
    for (node, style) in view.graph.nodes.iter().zip(&view.nodes) {
        let category = node.properties.get("category").unwrap();
        let want = expected
            .iter()
            .find(|(c, _)| *c == category)
            .map(|(_, hex)| parse_color(hex).unwrap());
        assert_eq!(style.color, want, "node {} ({category})", node.id);
        colored += usize::from(style.color.is_some());
    }
    assert!(colored > 40);
    // Proj nodes were merged into their input; their edges moved there.
    let projs = g
        .nodes
        .iter()
        .filter(|n| n.properties.get("name") == Some("Proj"))
        .count();
    assert!(projs > 0);
    assert_eq!(view.graph.nodes.len(), g.nodes.len() - projs);
    let merged: usize = view.nodes.iter().map(|s| s.merged.len()).sum();
    assert_eq!(merged, projs);
    assert!(
        view.graph
            .nodes
            .iter()
            .all(|n| n.properties.get("name") != Some("Proj"))
    );
    assert_eq!(view.source_node.len(), view.graph.nodes.len());
}

#[test]
fn rules_apply_in_order_and_can_be_disabled() {
    let imported = igv::load_igv(&common::test_data("igv_difference.xml")).unwrap();
    let g = imported.document.snapshots()[0];
    let toml = r##"
name = "test"
[[rule]]
action = "remove"
property = "name"
regex = "^AddI$"
[[rule]]
action = "hide"
property = "category"
regex = "data"
[[rule]]
action = "remove_edges"
regex = "^control$"
[[rule]]
action = "color"
property = "name"
regex = "."
color = "#010203"
enabled = false
[[rule]]
action = "merge"
property = "name"
regex = "^Proj$"
direction = "successor"
"##;
    let profile = Profile::from_toml(toml, "test.toml").unwrap();
    let view = apply_profile(g, &profile).unwrap();
    let ids: Vec<&str> = view.graph.nodes.iter().map(|n| n.id.as_str()).collect();
    // Proj (3) stays: the edge rule before the merge removed its control edges, so it has no
    // successor left to merge into. Order matters.
    assert_eq!(ids, vec!["1", "2", "3", "5"]);
    assert!(view.nodes[1].hidden && !view.nodes[0].hidden);
    assert!(view.nodes.iter().all(|s| s.color.is_none()));
    assert!(view.graph.edges.iter().all(|e| e.kind != "control"));
    // Round trip through TOML keeps the rules.
    let again = Profile::from_toml(&profile.to_toml().unwrap(), "again").unwrap();
    assert_eq!(again, profile);
}

#[test]
fn difference_between_snapshots() {
    let imported = igv::load_igv(&common::test_data("igv_difference.xml")).unwrap();
    let snaps = imported.document.snapshots();
    let d = diff(snaps[0], snaps[1]);
    assert_eq!(d.added_nodes, vec!["6"]);
    assert_eq!(d.removed_nodes, vec!["4"]);
    assert_eq!(d.changed_nodes, vec!["2"]);
    assert_eq!(d.added_edges.len(), 1);
    assert_eq!(d.removed_edges.len(), 3);
    assert!(diff(snaps[1], snaps[1]).is_empty());

    let view = difference_graph(snaps[0], snaps[1], false);
    assert_eq!(view.graph.nodes.len(), 6);
    assert_eq!(
        view.node_changes
            .iter()
            .filter(|c| **c == Change::Removed)
            .count(),
        1
    );
    assert_eq!(
        view.edge_changes
            .iter()
            .filter(|c| **c == Change::Removed)
            .count(),
        3
    );
    let only = difference_graph(snaps[0], snaps[1], true);
    assert!(only.node_changes.len() < view.node_changes.len());
    assert!(only.edge_changes.iter().all(|c| *c != Change::Unchanged));
    assert_eq!(only.graph.nodes.len(), only.node_changes.len());
    assert_eq!(only.graph.edges.len(), only.edge_changes.len());
}
