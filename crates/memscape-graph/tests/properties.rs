//! Property tests: mutated real inputs never panic or hang; random graphs lay out soundly.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;

use memscape_graph::dot::parse_dot_sequence;
use memscape_graph::igv::parse_igv;
use memscape_graph::layout::{LayoutOptions, layout_sized};
use proptest::prelude::*;

fn example_xml() -> Vec<u8> {
    std::fs::read(common::shared_data("igv/example.xml")).unwrap()
}

const DOT_SAMPLE: &str = "strict digraph \"CFG\" {\n label=\"x\";\n node [shape=record];\n Node0x1 [label=\"{entry:\\l  br i1 %c, label %a, label %b\\l|{<s0>T|<s1>F}}\"];\n Node0x1:s0 -> Node0x2; Node0x1:s1 -> Node0x3 [color=red];\n subgraph cluster_0 { Node0x2 [label=\"{a:\\l ret\\l}\"]; }\n { Node0x3 } -> { Node0x2 Node0x4 } // c\n /* d */ Node0x4 [label=<<b>x</b>>];\n}\n";

/// Byte-level mutations: overwrite, insert, delete, truncate.
fn mutate(base: &[u8], edits: &[(usize, u8, u8)], cut: Option<usize>) -> Vec<u8> {
    let mut v = base.to_vec();
    for &(at, op, byte) in edits {
        if v.is_empty() {
            break;
        }
        let i = at % v.len();
        match op % 3 {
            0 => v[i] = byte,
            1 => v.insert(i, byte),
            _ => {
                v.remove(i);
            }
        }
    }
    if let Some(c) = cut {
        let c = c % (v.len() + 1);
        v.truncate(c);
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn mutated_igv_never_panics(edits in prop::collection::vec((any::<usize>(), any::<u8>(), prop::sample::select(b"<>/=\"' &;!?[]-x0\n".to_vec())), 0..8), cut in prop::option::of(any::<usize>())) {
        let data = mutate(&example_xml(), &edits, cut);
        let _ = parse_igv(&data, "mutated.xml");
    }

    #[test]
    fn mutated_dot_never_panics(edits in prop::collection::vec((any::<usize>(), any::<u8>(), prop::sample::select(b"{}[];,=:-><\"\\/*#+ ax0\n".to_vec())), 0..8), cut in prop::option::of(any::<usize>())) {
        let data = mutate(DOT_SAMPLE.as_bytes(), &edits, cut);
        if let Ok(imported) = parse_dot_sequence(&[("m.dot", &data)]) {
            // Whatever parsed also lays out.
            for g in imported.document.snapshots() {
                let _ = memscape_graph::layout::layout_graph(g, &LayoutOptions::default(), None, &mut |_| {});
            }
        }
    }

    #[test]
    fn random_graphs_lay_out_soundly(n in 1usize..40, raw in prop::collection::vec((0usize..40, 0usize..40), 0..120)) {
        let edges: Vec<(usize, usize)> = raw.into_iter().map(|(a, b)| (a % n, b % n)).collect();
        let sizes: Vec<(f64, f64)> = (0..n).map(|i| (20.0 + (i % 5) as f64 * 10.0, 20.0)).collect();
        let layout = layout_sized(&sizes, &edges, &LayoutOptions::default(), None, &mut |_| {});
        prop_assert_eq!(layout.edges.len(), edges.len());
        for (r, &(a, b)) in layout.edges.iter().zip(&edges) {
            if a != b {
                prop_assert_ne!(layout.layer_of[a], layout.layer_of[b]);
                prop_assert_eq!(r.reversed, layout.layer_of[a] > layout.layer_of[b]);
            }
        }
        for a in 0..n {
            for b in a + 1..n {
                if layout.layer_of[a] == layout.layer_of[b] {
                    let (p, q) = (layout.nodes[a], layout.nodes[b]);
                    prop_assert!(p.x + p.w <= q.x + 1e-6 || q.x + q.w <= p.x + 1e-6);
                }
            }
        }
    }
}
