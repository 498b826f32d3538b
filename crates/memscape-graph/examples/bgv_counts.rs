//! Prints one line per graph of BGV files, in the format of `scripts/bgv-counts.rb` (seafoam's
//! reading), so that the two readers can be compared with `diff`:
//! `cargo run -p memscape-graph --example bgv_counts -- FILE.bgv.gz…`

use memscape_graph::bgv::{SUCCESSOR_KIND, load_bgv};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    for path in std::env::args().skip(1) {
        let path = std::path::Path::new(&path);
        let imported = load_bgv(path)?;
        let file = path.display();
        if !imported.warnings.is_empty() {
            eprint!("{}", imported.warnings);
        }
        for (index, graph) in imported.document.snapshots().iter().enumerate() {
            let successors = graph
                .edges
                .iter()
                .filter(|e| e.kind == SUCCESSOR_KIND)
                .count();
            println!(
                "{file}\t{index}\t{}\t{}\t{}\t{}\t{}\t{}",
                graph.properties.get("dump_id").unwrap_or("-1"),
                graph.nodes.len(),
                graph.edges.len() - successors,
                successors,
                graph.blocks.len(),
                graph.name.split_whitespace().collect::<Vec<_>>().join(" ")
            );
        }
    }
    Ok(())
}
