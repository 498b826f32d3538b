#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;

use memscape_graph::crossings::{count_plain_crossings, parse_dot_plain};
use memscape_graph::dot::parse_dot;
use memscape_graph::layout::{Layout, LayoutOptions, PreviousPositions, Progress, layout_graph};
use memscape_graph::report::layout_report;
use memscape_graph::{Graph, igv};
use memscape_io::Warnings;

fn example() -> Graph {
    let imported = igv::load_igv(&common::shared_data("igv/example.xml")).unwrap();
    imported.document.snapshots()[0].clone()
}

/// Geometric invariants every layout must satisfy.
fn check_layout(graph: &Graph, layout: &Layout) {
    assert_eq!(layout.nodes.len(), graph.nodes.len());
    // Same layer ⇒ same center y; boxes in one layer never overlap.
    let mut by_layer: Vec<Vec<usize>> = vec![Vec::new(); layout.layers];
    for (v, &l) in layout.layer_of.iter().enumerate() {
        by_layer[l as usize].push(v);
    }
    for members in &by_layer {
        let mut boxes: Vec<_> = members.iter().map(|&v| layout.nodes[v]).collect();
        boxes.sort_by(|a, b| a.x.total_cmp(&b.x));
        for pair in boxes.windows(2) {
            assert!(
                pair[0].x + pair[0].w <= pair[1].x + 1e-6,
                "overlap {pair:?}"
            );
            let (c0, c1) = (pair[0].center()[1], pair[1].center()[1]);
            assert!((c0 - c1).abs() < 1e-6);
        }
    }
    for (route, edge) in layout.edges.iter().zip(&graph.edges) {
        assert_eq!((route.from, route.to), (edge.from, edge.to));
        if route.cut {
            continue;
        }
        let (s, t) = (layout.nodes[edge.from], layout.nodes[edge.to]);
        let first = route.points[0];
        let last = *route.points.last().unwrap();
        // Every edge leaves the bottom of its source and enters the top of its target.
        assert!((first[1] - (s.y + s.h)).abs() < 1e-6, "{route:?}");
        assert!((last[1] - t.y).abs() < 1e-6, "{route:?}");
        if route.reversed {
            assert!(layout.layer_of[edge.from] > layout.layer_of[edge.to]);
        } else {
            assert!(layout.layer_of[edge.from] < layout.layer_of[edge.to]);
        }
    }
}

#[test]
fn example_graph_layout_is_sound() {
    let g = example();
    let mut phases = Vec::new();
    let layout = layout_graph(&g, &LayoutOptions::default(), None, &mut |p: Progress| {
        phases.push(p)
    });
    check_layout(&g, &layout);
    assert!(layout.layers >= 5);
    // Progress runs from 0 to 1 without going back.
    assert_eq!(phases.first().unwrap().fraction, 0.0);
    assert_eq!(phases.last().unwrap().fraction, 1.0);
    assert!(phases.windows(2).all(|w| w[0].fraction <= w[1].fraction));
}

#[test]
fn report_has_the_cli_json_keys() {
    let g = example();
    let report = layout_report(&g, &LayoutOptions::default(), None, &mut |_| {});
    let json = serde_json::to_value(&report).unwrap();
    for key in ["nodes", "edges", "crossings", "layers", "layout_ms"] {
        assert!(json.get(key).is_some(), "missing {key}");
    }
    let node = &json["nodes"][0];
    for key in ["id", "x", "y", "w", "h"] {
        assert!(node.get(key).is_some(), "node missing {key}");
    }
    assert_eq!(json["nodes"].as_array().unwrap().len(), 56);
    assert_eq!(json["edges"].as_array().unwrap().len(), 121);
}

#[test]
fn long_edges_can_be_cut_to_stubs() {
    let g = example();
    let options = LayoutOptions {
        cut_edges_longer_than: Some(2),
        ..LayoutOptions::default()
    };
    let full = layout_graph(&g, &LayoutOptions::default(), None, &mut |_| {});
    let cut = layout_graph(&g, &options, None, &mut |_| {});
    check_layout(&g, &cut);
    let stubs = cut.edges.iter().filter(|r| r.cut && r.from != r.to).count();
    let long = g
        .edges
        .iter()
        .filter(|e| full.layer_of[e.from].abs_diff(full.layer_of[e.to]) > 2)
        .count();
    assert!(stubs > 0 && long > 0);
    for r in cut.edges.iter().filter(|r| r.cut && r.from != r.to) {
        assert_eq!(r.points.len(), 4);
    }
}

#[test]
fn stable_layout_keeps_the_order_of_unchanged_nodes() {
    let imported = igv::load_igv(&common::test_data("igv_difference.xml")).unwrap();
    let snaps = imported.document.snapshots();
    let (a, b) = (snaps[0], snaps[1]);
    let options = LayoutOptions::default();
    let first = layout_graph(a, &options, None, &mut |_| {});
    let previous = PreviousPositions::from_layout(a, &first);
    let second = layout_graph(b, &options, Some(&previous), &mut |_| {});
    check_layout(b, &second);
    for (i, ni) in b.nodes.iter().enumerate() {
        for (j, nj) in b.nodes.iter().enumerate() {
            let (Some(pi), Some(pj)) = (previous.x_of.get(&ni.id), previous.x_of.get(&nj.id))
            else {
                continue;
            };
            if i != j && second.layer_of[i] == second.layer_of[j] && pi < pj {
                assert!(
                    second.nodes[i].x < second.nodes[j].x,
                    "{} / {}",
                    ni.id,
                    nj.id
                );
            }
        }
    }
}

#[test]
fn crossings_stay_close_to_graphviz_on_real_llvm_cfgs() {
    let dir = tempfile::tempdir().unwrap();
    let cfgs = common::llvm_cfgs(common::SAMPLE_C, "-O1", dir.path());
    let (mut ours, mut theirs) = (0u64, 0u64);
    for (func, bytes) in &cfgs {
        let mut w = Warnings::new();
        let g = &parse_dot(bytes, func, &mut w).unwrap()[0];
        let layout = layout_graph(g, &LayoutOptions::default(), None, &mut |_| {});
        check_layout(g, &layout);
        let plain = parse_dot_plain(&common::dot_plain(bytes)).unwrap();
        ours += layout.crossings;
        theirs += count_plain_crossings(&plain).0;
    }
    assert!(
        ours <= theirs + theirs / 10 + 2,
        "memscape {ours} crossings, dot {theirs}"
    );
}

#[test]
fn crossing_counter_reads_known_graphviz_drawings() {
    // K(2,2) between two ranks crosses at most once, and a drawing of it by dot has 0 or 1;
    // a chain never crosses.
    let plain = parse_dot_plain(&common::dot_plain(
        b"digraph { a -> c; a -> d; b -> c; b -> d }",
    ))
    .unwrap();
    let (c, layers) = count_plain_crossings(&plain);
    assert_eq!(layers, 2);
    assert!(c <= 1);
    // Forced order: rank=same with ordering=out makes dot keep a, b and c, d as written;
    // edges a→d and b→c must then cross exactly once.
    let forced = b"digraph { ordering=out; a -> d; b -> c; {rank=same; a -> b [style=invis]} {rank=same; c -> d [style=invis]} }";
    let plain = parse_dot_plain(&common::dot_plain(forced)).unwrap();
    let xs: std::collections::HashMap<&str, f64> = plain
        .names
        .iter()
        .map(String::as_str)
        .zip(plain.nodes.iter().map(|n| n.x))
        .collect();
    let expected = u64::from((xs["a"] < xs["b"]) != (xs["d"] < xs["c"]));
    let (c, _) = count_plain_crossings(&plain);
    // Invisible flat edges are within one layer and ignored by the counter.
    assert_eq!(c, expected);
}

/// Blocks as boxes: every node inside its innermost block's box, sibling boxes apart, one route
/// per edge, edges between blocks from the bottom of their source to the top of their target.
#[test]
fn clustered_layout_keeps_blocks_together() {
    use memscape_graph::layout::layout_graph_clustered;
    let text = r#"digraph cfg {
        subgraph cluster_entry { label="entry"; a; b; a -> b; }
        subgraph cluster_loop { label="loop";
            c; d; e; c -> d; d -> e; e -> c;
            subgraph cluster_body { label="body"; f; g; f -> g; }
            d -> f; g -> e;
        }
        subgraph cluster_exit { label="exit"; h; }
        loose;
        b -> c; e -> h; a -> h; h -> loose; loose -> loose;
    }"#;
    let mut warnings = Warnings::default();
    let graph = parse_dot(text.as_bytes(), "clusters.dot", &mut warnings)
        .unwrap()
        .into_iter()
        .next()
        .unwrap();
    assert_eq!(graph.blocks.len(), 4);
    let (layout, boxes) = layout_graph_clustered(&graph, &LayoutOptions::default(), &mut |_| {});
    assert_eq!(layout.nodes.len(), graph.nodes.len());
    assert_eq!(layout.edges.len(), graph.edges.len());
    let idx = |id: &str| graph.node_index(id).unwrap();
    let block = |name: &str| graph.blocks.iter().position(|b| b.name == name).unwrap();
    // Innermost blocks get boxes: entry, loop (c, d, e), body (f, g), exit.
    assert_eq!(boxes.len(), 4);
    let box_of = |b: usize| boxes.iter().find(|c| c.block == b).copied().unwrap();
    for (name, members) in [
        ("cluster_entry", &["a", "b"][..]),
        ("cluster_loop", &["c", "d", "e"][..]),
        ("cluster_body", &["f", "g"][..]),
        ("cluster_exit", &["h"][..]),
    ] {
        let c = box_of(block(name));
        for m in members {
            let n = layout.nodes[idx(m)];
            assert!(
                n.x >= c.x - 1e-6
                    && n.y >= c.y - 1e-6
                    && n.x + n.w <= c.x + c.w + 1e-6
                    && n.y + n.h <= c.y + c.h + 1e-6,
                "{m} {n:?} outside {name} {c:?}"
            );
        }
    }
    // Boxes never overlap each other, nor nodes outside them.
    for (i, p) in boxes.iter().enumerate() {
        for q in &boxes[i + 1..] {
            let apart = p.x + p.w <= q.x + 1e-6
                || q.x + q.w <= p.x + 1e-6
                || p.y + p.h <= q.y + 1e-6
                || q.y + q.h <= p.y + 1e-6;
            assert!(apart, "{p:?} overlaps {q:?}");
        }
    }
    let loose = layout.nodes[idx("loose")];
    for c in &boxes {
        assert!(
            loose.x + loose.w <= c.x
                || c.x + c.w <= loose.x
                || loose.y + loose.h <= c.y
                || c.y + c.h <= loose.y,
            "the node in no block lies inside {c:?}"
        );
    }
    // b -> c crosses blocks: it leaves the bottom of b and enters the top of c.
    let e = graph
        .edges
        .iter()
        .position(|e| e.from == idx("b") && e.to == idx("c"))
        .unwrap();
    let route = &layout.edges[e];
    let (nb, nc) = (layout.nodes[idx("b")], layout.nodes[idx("c")]);
    assert_eq!(route.points.first().unwrap()[1], nb.y + nb.h);
    assert_eq!(route.points.last().unwrap()[1], nc.y);
    // The entry block sits above the loop, the loop above the exit.
    let (be, bl, bx) = (
        box_of(block("cluster_entry")),
        box_of(block("cluster_loop")),
        box_of(block("cluster_exit")),
    );
    assert!(be.y + be.h <= bl.y && bl.y + bl.h <= bx.y);
    // A graph without blocks lays out exactly as before.
    let plain = example();
    let (same, none) = layout_graph_clustered(&plain, &LayoutOptions::default(), &mut |_| {});
    assert!(none.is_empty());
    assert_eq!(
        same,
        layout_graph(&plain, &LayoutOptions::default(), None, &mut |_| {})
    );
}

/// Network simplex (the default) and the longest-path layering both give sound layouts; the
/// default's edges are never longer in total, and strictly shorter on a call graph whose
/// callers sit high above their callees under longest path.
#[test]
fn network_simplex_layers_are_never_longer_than_longest_path() {
    use memscape_graph::layout::Layering;
    let span = |g: &Graph, l: &Layout| -> u64 {
        g.edges
            .iter()
            .filter(|e| e.from != e.to)
            .map(|e| u64::from(l.layer_of[e.from].abs_diff(l.layer_of[e.to])))
            .sum()
    };
    let longest = LayoutOptions {
        layering: Layering::LongestPath,
        ..LayoutOptions::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let mut graphs = vec![example()];
    for (func, bytes) in common::llvm_cfgs(common::SAMPLE_C, "-O1", dir.path()) {
        let mut w = Warnings::new();
        graphs.push(parse_dot(&bytes, &func, &mut w).unwrap().remove(0));
    }
    // A caller pair beside a deep chain, both calling its last function: longest path and its
    // one-node-at-a-time balancing leave the pair at the top (y has one edge in and one out,
    // so it never moves, and holds x up); network simplex moves the pair down together.
    let text = "digraph { a -> b -> c -> d -> e -> f; x -> y; x -> f; y -> f; }";
    let mut w = Warnings::new();
    graphs.push(
        parse_dot(text.as_bytes(), "calls.dot", &mut w)
            .unwrap()
            .remove(0),
    );
    let mut strictly_shorter = 0;
    for g in &graphs {
        let ns = layout_graph(g, &LayoutOptions::default(), None, &mut |_| {});
        let lp = layout_graph(g, &longest, None, &mut |_| {});
        check_layout(g, &ns);
        check_layout(g, &lp);
        assert!(span(g, &ns) <= span(g, &lp), "{}", g.name);
        strictly_shorter += usize::from(span(g, &ns) < span(g, &lp));
    }
    assert!(strictly_shorter >= 1);
}

#[test]
fn layout_json_names_nodes_by_their_input_ids() {
    // LLVM CFGs name nodes by address (`Node0x…`): memscape matches them by label across
    // snapshots, but the JSON gives the DOT id, the label and that key separately.
    let dir = tempfile::tempdir().unwrap();
    let cfgs = common::llvm_cfgs(common::SAMPLE_C, "-O1", dir.path());
    let (func, bytes) = cfgs.iter().find(|(f, _)| f == "classify").unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    let imported = memscape_graph::dot::parse_dot_sequence(&[(func, bytes)]).unwrap();
    let g = imported.document.snapshots()[0];
    let json = serde_json::to_value(layout_report(
        g,
        &LayoutOptions::default(),
        None,
        &mut |_| {},
    ))
    .unwrap();
    let nodes = json["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), g.nodes.len());
    for node in nodes {
        let id = node["id"].as_str().unwrap();
        assert!(id.starts_with("Node0x"), "{node}");
        assert!(
            text.contains(&format!("\t{id} [")),
            "{id} is a node of the DOT file"
        );
        let label = node["label"].as_str().unwrap();
        assert!(label.contains(':'), "{label}");
        assert_eq!(
            node["key"].as_str(),
            Some(memscape_graph::dot::label_key(label).as_str())
        );
    }
    assert!(nodes.iter().any(|n| n["key"] == "entry"));
    for edge in json["edges"].as_array().unwrap() {
        let (from, to) = (edge["from"].as_str().unwrap(), edge["to"].as_str().unwrap());
        assert!(
            text.lines()
                .any(|l| l.trim_start().starts_with(from) && l.contains(&format!("-> {to}"))),
            "edge {from} -> {to} is in the DOT file"
        );
    }

    // IGV ids are already the input's ids: no separate key; the label is the node's name.
    let igv = example();
    let json = serde_json::to_value(layout_report(
        &igv,
        &LayoutOptions::default(),
        None,
        &mut |_| {},
    ))
    .unwrap();
    let first = &json["nodes"][0];
    assert_eq!(first["id"], igv.nodes[0].id.as_str());
    assert_eq!(first["label"], igv.nodes[0].label());
    assert!(first.get("key").is_none());
}
