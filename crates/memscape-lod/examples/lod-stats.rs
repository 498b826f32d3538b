//! Prints the levels of an index: cell size, blocks, cells, buckets, bytes.
const CELL_BYTES: u64 = std::mem::size_of::<memscape_lod::format::CellRec>() as u64;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::path::PathBuf::from(std::env::args().nth(1).ok_or("usage: lod-stats INDEX")?);
    let idx = memscape_lod::LodIndex::open(&path)?;
    let m = &idx.meta;
    println!(
        "extent t {} y {} (2^{} × 2^{}), {} blocks",
        m.extent_t, m.extent_y, m.log_t, m.log_y, m.blocks
    );
    let mut total = 0u64;
    for l in &m.levels {
        let bytes = l.cells.len + l.buckets.len + l.columns.len;
        total += bytes;
        let a = (i32::from(m.log_t) - i32::from(l.log_tau))
            - (i32::from(m.log_y) - i32::from(l.log_sig));
        println!(
            "a={a:3} tau 2^{:2} sig 2^{:2}: {:>10} blocks {:>9} cells {:>10} buckets ({:.1} per cell, {:.2} cells/block) {:>7.1} MB",
            l.log_tau,
            l.log_sig,
            l.blocks,
            l.cells.len / CELL_BYTES,
            l.buckets.len / 16,
            (l.buckets.len / 16) as f64 / (l.cells.len / CELL_BYTES).max(1) as f64,
            (l.cells.len / CELL_BYTES) as f64 / l.blocks.max(1) as f64,
            bytes as f64 / 1e6
        );
    }
    let copies: u64 = m.classes.iter().map(|c| c.blocks.len).sum();
    println!(
        "levels {:.1} MB, copies {:.1} MB",
        total as f64 / 1e6,
        copies as f64 / 1e6
    );
    Ok(())
}
