//! The GUI's default cluster tree (along `time`, imbalance at the PUs, windows of 1000 every
//! 250) of a samples dataset from the embedded engine with the GUI's memory bound: how long it
//! takes and what it holds, alone (BENCHMARKS.md, "Cluster trees without a sort"); then, for a
//! tree past the budget of per-segment totals, how long each hovered glyph's query takes
//! (`Engine::cluster_aggregate`) for the 8 clusters of the GUI's default cut (BENCHMARKS.md,
//! "Hover glyphs at any sample count").
//! Usage: cluster-bench DATASET HARDWARE.xml MEMORY_MIB

use std::path::Path;
use std::time::Instant;

use memscape_engine::Engine;
use memscape_samples::ClusterParams;
use memscape_samples::metrics::Metric;
use memscape_topology::{ResourceKind, Topology};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, dataset, hardware, mib] = args.as_slice() else {
        return Err("usage: cluster-bench DATASET HARDWARE.xml MEMORY_MIB".into());
    };
    let engine = Engine::embedded_bounded(0, mib.parse::<usize>()? << 20)?;
    let ds = engine.open(Path::new(dataset))?;
    let topology = Topology::load(Some(Path::new(hardware)))?;
    let params = ClusterParams {
        attribute: String::from("time"),
        metric: Metric::Imbalance,
        kind: ResourceKind::Pu,
        window: 1000,
        step: 250,
    };
    let start = Instant::now();
    let tree = engine.cluster_tree(&ds, None, &topology, params)?;
    let root = tree.nodes.last().map(|n| (n.samples, n.metric));
    println!(
        "cluster tree: {} windows, {} nodes, root {root:?}, glyph totals kept: {}, {:.1} s",
        tree.leaves,
        tree.nodes.len(),
        tree.keyed.is_some(),
        start.elapsed().as_secs_f64()
    );
    if tree.keyed.is_none() {
        for (i, node) in tree.cut(8).into_iter().enumerate() {
            let start = Instant::now();
            let glyph = engine.cluster_aggregate(&ds, None, &topology, &tree.span(node))?;
            let summed: u64 = glyph.samples.iter().sum();
            println!(
                "glyph {i}: {} samples, {summed} over the PUs' routes, {:.2} s",
                node.samples,
                start.elapsed().as_secs_f64()
            );
        }
    }
    Ok(())
}
