//! Lays out graph files and prints one line of figures per graph, for the peer benchmark
//! (`benches/graph/bench.sh`) until the `memscape layout` CLI wires the same functions.
//!
//! ```text
//! graph_layout [--repeat N] [--json] FILE…      lay out every graph of every file
//! graph_layout --plain FILE…                    count crossings of `dot -Tplain` output
//! ```
//! `MEMSCAPE_LAYERING=longest_path` lays out with the layering used before network simplex.
//! Output (tab separated): file, nodes, edges, layers, crossings, milliseconds (best of N).

use std::path::Path;
use std::time::Instant;

use memscape_graph::crossings::{count_plain_crossings, parse_dot_plain};
use memscape_graph::layout::LayoutOptions;
use memscape_graph::report::layout_report;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // RUST_LOG=memscape_graph=debug shows the layered graph's size and the crossings found.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut repeat = 1usize;
    let mut json = false;
    let mut plain = false;
    let mut files = Vec::new();
    while !args.is_empty() {
        let a = args.remove(0);
        match a.as_str() {
            "--repeat" if !args.is_empty() => repeat = args.remove(0).parse().unwrap_or(1),
            "--json" => json = true,
            "--plain" => plain = true,
            _ => files.push(a),
        }
    }
    for file in &files {
        if plain {
            let text = std::fs::read_to_string(file)?;
            let layout = parse_dot_plain(&text)?;
            let (crossings, layers) = count_plain_crossings(&layout);
            println!(
                "{file}\t{}\t{}\t{layers}\t{crossings}\t-",
                layout.nodes.len(),
                layout.edges.len()
            );
            continue;
        }
        let imported = memscape_graph::load_graphs(&[Path::new(file)])?;
        for graph in imported.document.snapshots() {
            let mut options = LayoutOptions::default();
            // MEMSCAPE_LAYERING=longest_path compares with the layering before network simplex.
            if let Ok(l) = std::env::var("MEMSCAPE_LAYERING") {
                options.layering = match l.as_str() {
                    "longest_path" => memscape_graph::layout::Layering::LongestPath,
                    _ => memscape_graph::layout::Layering::NetworkSimplex,
                };
            }
            if let Some(s) = std::env::var("MEMSCAPE_SWEEPS")
                .ok()
                .and_then(|s| s.parse().ok())
            {
                options.max_sweeps = s;
                options.patience = s;
            }
            let mut best = f64::INFINITY;
            let mut report = None;
            for _ in 0..repeat.max(1) {
                let start = Instant::now();
                let phase_start = Instant::now();
                let mut last = ("start", 0.0f64);
                let r = layout_report(graph, &options, None, &mut |p| {
                    let t = phase_start.elapsed().as_secs_f64() * 1e3;
                    if p.phase != last.0 {
                        tracing::debug!(phase = last.0, ms = t - last.1, "phase done");
                        last = (p.phase, t);
                    }
                });
                best = best.min(start.elapsed().as_secs_f64() * 1e3);
                report = Some(r);
            }
            if let Some(r) = report {
                if json {
                    println!("{}", serde_json::to_string(&r)?);
                } else {
                    println!(
                        "{file}\t{}\t{}\t{}\t{}\t{best:.2}",
                        graph.nodes.len(),
                        graph.edges.len(),
                        r.layers,
                        r.crossings
                    );
                }
            }
        }
    }
    Ok(())
}
