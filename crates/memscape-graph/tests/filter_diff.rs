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

/// Node ids of a filtered view, in order.
fn view_ids(view: &memscape_graph::filter::ViewGraph) -> Vec<String> {
    view.graph.nodes.iter().map(|n| n.id.clone()).collect()
}

#[test]
fn every_rule_kind_round_trips_through_a_saved_toml_file() {
    use memscape_graph::filter::{Action, MergeDirection, Rule, Target, load_profile_dir};
    let mut rules = Vec::new();
    for action in Action::ALL {
        for target in [Target::Node, Target::Edge] {
            let mut rule = Rule::new(action);
            rule.target = target;
            rule.property = format!("p-{}", action.name());
            rule.regex = r#"^a"b\d+$"#.to_owned();
            rule.enabled = target == Target::Node;
            if action == Action::Merge {
                rule.direction = MergeDirection::Successor;
            }
            if action == Action::Hide {
                rule.color = Some("#10203040".to_owned());
            }
            rules.push(rule);
        }
    }
    let profile = Profile {
        name: "mine / v2".to_owned(),
        description: "every kind of rule, \"quoted\"".to_owned(),
        rules,
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profiles").join(profile.file_name());
    assert_eq!(path.file_name().unwrap(), "mine___v2.toml");
    profile.save(&path).unwrap();
    // A broken file beside it is listed with its error, not dropped silently.
    std::fs::write(dir.path().join("profiles/broken.toml"), "name = [").unwrap();
    let listed = load_profile_dir(&dir.path().join("profiles"));
    assert_eq!(listed.len(), 2);
    assert!(listed[0].0.ends_with("broken.toml") && listed[0].1.is_err());
    assert_eq!(listed[1].1.as_ref().unwrap(), &profile);
    assert_eq!(Profile::load(&path).unwrap(), profile);
    assert!(load_profile_dir(&dir.path().join("missing")).is_empty());
}

#[test]
fn rule_order_decides_the_outcome() {
    let imported = igv::load_igv(&common::test_data("igv_difference.xml")).unwrap();
    let g = imported.document.snapshots()[0];
    let rule = |body: &str| format!("[[rule]]\n{body}\n");
    let red = rule("action = \"color\"\nproperty = \"name\"\nregex = \".\"\ncolor = \"#ff0000\"");
    let blue =
        rule("action = \"color\"\nproperty = \"name\"\nregex = \"^Proj$\"\ncolor = \"#0000ff\"");
    let merge = rule("action = \"merge\"\nproperty = \"name\"\nregex = \"^Proj$\"");
    let remove = rule("action = \"remove\"\nproperty = \"name\"\nregex = \"^Proj$\"");
    let profile = |rules: &[&String]| {
        let text = format!(
            "name = \"order\"\n{}",
            rules.iter().map(|s| s.as_str()).collect::<String>()
        );
        Profile::from_toml(&text, "order.toml").unwrap()
    };
    let proj = g
        .nodes
        .iter()
        .position(|n| n.properties.get("name") == Some("Proj"))
        .unwrap();
    let proj_id = g.nodes[proj].id.clone();
    let color_of = |view: &memscape_graph::filter::ViewGraph, id: &str| {
        let i = view.graph.node_index(id).unwrap();
        view.nodes[i].color
    };
    // The later colour wins.
    let v = apply_profile(g, &profile(&[&red, &blue])).unwrap();
    assert_eq!(color_of(&v, &proj_id), parse_color("#0000ff"));
    let v = apply_profile(g, &profile(&[&blue, &red])).unwrap();
    assert_eq!(color_of(&v, &proj_id), parse_color("#ff0000"));
    // Merge first: the projection is folded into its input, and a later remove finds nothing.
    let merged = apply_profile(g, &profile(&[&merge, &remove])).unwrap();
    assert!(merged.graph.node_index(&proj_id).is_none());
    assert!(merged.nodes.iter().any(|s| s.merged.contains(&proj_id)));
    // Remove first: the projection and its edges are gone, nothing is merged.
    let removed = apply_profile(g, &profile(&[&remove, &merge])).unwrap();
    assert!(removed.nodes.iter().all(|s| s.merged.is_empty()));
    assert_eq!(view_ids(&removed), view_ids(&merged));
    assert!(
        removed.graph.edges.len() < merged.graph.edges.len(),
        "merging keeps the projection's uses as edges of its input, removing drops them"
    );
}

#[test]
fn an_editor_applies_the_valid_rules_and_names_the_broken_ones() {
    let imported = igv::load_igv(&common::test_data("igv_difference.xml")).unwrap();
    let g = imported.document.snapshots()[0];
    let text = r##"
name = "typing"
[[rule]]
action = "remove"
property = "name"
regex = "^(Proj"
[[rule]]
action = "color"
property = "name"
regex = "."
color = "#00ff00"
[[rule]]
action = "color"
property = "name"
regex = "."
color = "green"
enabled = false
"##;
    // The whole profile does not parse (a half-typed regex) ...
    let e = Profile::from_toml(text, "typing.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("rule 1"), "{e}");
    let profile: Profile = toml::from_str(text).unwrap();
    // ... but each rule's problem is known, and the rest applies.
    let problems = profile.problems();
    assert!(problems[0].as_deref().unwrap().contains("regex") || problems[0].is_some());
    assert!(problems[1].is_none());
    assert!(problems[2].as_deref().unwrap().contains("green"));
    let usable = profile.applicable();
    assert_eq!(usable.rules.len(), 2, "the broken enabled rule is left out");
    let view = apply_profile(g, &usable).unwrap();
    assert_eq!(view.graph.nodes.len(), g.nodes.len(), "nothing removed");
    assert!(view.nodes.iter().all(|s| s.color == parse_color("#00ff00")));
}

/// User regexes have explicit limits: a pattern whose program would be huge
/// (`(a{1000}){1000}`), one nested too deep or one longer than 4096 characters is refused
/// with a message, the profile still loads and its other rules still apply.
#[test]
fn user_regexes_are_size_limited() {
    use memscape_graph::filter::user_regex;
    let start = std::time::Instant::now();
    let huge = user_regex("(a{1000}){1000}").unwrap_err();
    assert!(huge.contains("size limit"), "{huge}");
    assert!(user_regex(&"(".repeat(200)).is_err());
    let long = user_regex(&"a".repeat(5000)).unwrap_err();
    assert!(long.contains("4096"), "{long}");
    assert!(
        start.elapsed().as_secs() < 5,
        "refusing took {:?}",
        start.elapsed()
    );
    let text = "name = \"limits\"\n\
        [[rule]]\naction = \"hide\"\nproperty = \"name\"\nregex = \"(x{1000}){1000}\"\n\
        [[rule]]\naction = \"color\"\nproperty = \"name\"\nregex = \"Phi\"\ncolor = \"#ff0000\"\n";
    // A profile file with such a rule is refused naming the rule; the editor's view of the
    // same rules (problems) marks that rule alone.
    let err = Profile::from_toml(text, "limits.toml")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("rule 1") && err.contains("size limit"),
        "{err}"
    );
    let mut profile = Profile::shipped("hotspot").unwrap();
    profile.rules[0].regex = "(x{1000}){1000}".into();
    let problems = profile.problems();
    assert!(
        problems[0]
            .as_deref()
            .is_some_and(|p| p.contains("size limit")),
        "{problems:?}"
    );
    assert!(problems[1..].iter().all(Option::is_none));
    assert_eq!(profile.applicable().rules.len(), profile.rules.len() - 1);
}
