//! Criterion benchmark of the layered layout on synthetic CFG-like graphs and on the IGV example.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use memscape_graph::layout::{LayoutOptions, layout_sized};

/// A structured, CFG-like graph: nested loops and diamonds, deterministic.
/// Node sizes and edges.
type SizedGraph = (Vec<(f64, f64)>, Vec<(usize, usize)>);

fn cfg_like(blocks: usize) -> SizedGraph {
    let mut edges = Vec::new();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for v in 0..blocks.saturating_sub(1) {
        edges.push((v, v + 1));
        let r = next();
        if r % 3 == 0 && v + 2 < blocks {
            edges.push((v, v + 2 + (r as usize >> 8) % 6.min(blocks - v - 2)));
        }
        if r % 7 == 0 && v > 4 {
            edges.push((v, v - 1 - (r as usize >> 12) % 4));
        }
    }
    (vec![(80.0, 40.0); blocks], edges)
}

fn bench(c: &mut Criterion) {
    let options = LayoutOptions::default();
    for blocks in [200usize, 1000, 3000] {
        let (sizes, edges) = cfg_like(blocks);
        c.bench_function(&format!("layout_cfg_like_{blocks}"), |b| {
            b.iter(|| {
                layout_sized(
                    black_box(&sizes),
                    black_box(&edges),
                    &options,
                    None,
                    &mut |_| {},
                )
            })
        });
    }
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/igv/example.xml");
    if let Ok(imported) = memscape_graph::igv::load_igv(&example)
        && let Some(graph) = imported.document.snapshots().first().copied()
    {
        let graph = graph.clone();
        c.bench_function("layout_igv_example", |b| {
            b.iter(|| {
                memscape_graph::layout::layout_graph(black_box(&graph), &options, None, &mut |_| {})
            })
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
