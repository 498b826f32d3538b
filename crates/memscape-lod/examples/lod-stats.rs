//! Prints the levels of an index: cell size, blocks, cells, buckets, bytes; then where the
//! bytes are: per line of levels, per depth from each line's finest level, cells by how many
//! blocks they hold, and how many cells leave each field at its "empty/unknown" value.
//!
//! `lod-stats INDEX [--fields]` (`--fields` reads every cell: the index is paged in).
use std::collections::BTreeMap;

use memscape_lod::format::{CellRec, FEW_BLOCKS, SPOT_QUARTERS};

const CELL_BYTES: u64 = std::mem::size_of::<CellRec>() as u64;

fn mb(b: u64) -> f64 {
    b as f64 / 1e6
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::path::PathBuf::from(std::env::args().nth(1).ok_or("usage: lod-stats INDEX")?);
    let fields = std::env::args().any(|a| a == "--fields");
    let idx = memscape_lod::LodIndex::open(&path)?;
    let m = &idx.meta;
    println!(
        "extent t {} y {} (2^{} × 2^{}), {} blocks",
        m.extent_t, m.extent_y, m.log_t, m.log_y, m.blocks
    );
    let anisotropy = |l: &memscape_lod::format::LevelDesc| {
        (i32::from(m.log_t) - i32::from(l.log_tau)) - (i32::from(m.log_y) - i32::from(l.log_sig))
    };
    let mut total = 0u64;
    let (mut all_cells, mut all_buckets, mut all_cols) = (0u64, 0u64, 0u64);
    // Per line: [cells bytes, buckets bytes, columns bytes, levels]; finest level's depth.
    let mut per_line: BTreeMap<i32, [u64; 4]> = BTreeMap::new();
    let mut finest: BTreeMap<i32, i32> = BTreeMap::new();
    for l in &m.levels {
        let bytes = l.cells.len + l.buckets.len + l.columns.len;
        total += bytes;
        all_cells += l.cells.len;
        all_buckets += l.buckets.len;
        all_cols += l.columns.len;
        let a = anisotropy(l);
        let e = per_line.entry(a).or_default();
        e[0] += l.cells.len;
        e[1] += l.buckets.len;
        e[2] += l.columns.len;
        e[3] += 1;
        let depth = i32::from(m.log_t) - i32::from(l.log_tau);
        let f = finest.entry(a).or_insert(depth);
        *f = (*f).max(depth);
        println!(
            "a={a:3} tau 2^{:2} sig 2^{:2}: {:>10} blocks {:>9} cells {:>10} buckets ({:.1} per cell, {:.2} cells/block) {:>7.1} MB",
            l.log_tau,
            l.log_sig,
            l.blocks,
            l.cells.len / CELL_BYTES,
            l.buckets.len / 16,
            (l.buckets.len / 16) as f64 / (l.cells.len / CELL_BYTES).max(1) as f64,
            (l.cells.len / CELL_BYTES) as f64 / l.blocks.max(1) as f64,
            mb(bytes)
        );
    }
    let copies: u64 = m.classes.iter().map(|c| c.blocks.len).sum();
    let copied: u64 = m
        .classes
        .iter()
        .filter(|c| c.copied)
        .map(|c| c.blocks.len)
        .sum();
    let per_block = |b: u64| b as f64 / m.blocks.max(1) as f64;
    println!(
        "levels {:.1} MB, copies {:.1} MB (copied blocks {:.1} MB, listed numbers {:.1} MB)",
        mb(total),
        mb(copies),
        mb(copied),
        mb(copies - copied)
    );
    println!(
        "per block: cells {:.2} B, buckets {:.2} B, columns {:.2} B, classes {:.2} B; all {:.2} B",
        per_block(all_cells),
        per_block(all_buckets),
        per_block(all_cols),
        per_block(copies),
        per_block(total + copies)
    );
    println!("per line (a: levels, cells / buckets / columns MB, B a block):");
    for (a, [c, b, k, n]) in &per_line {
        println!(
            "  a={a:3}: {n:2} levels {:>8.1} / {:>7.1} / {:>5.1} MB  {:>5.2} B a block",
            mb(*c),
            mb(*b),
            mb(*k),
            per_block(c + b + k)
        );
    }
    // Per depth from each line's finest level (0: the finest).
    let mut per_depth: BTreeMap<i32, u64> = BTreeMap::new();
    for l in &m.levels {
        let a = anisotropy(l);
        let depth = i32::from(m.log_t) - i32::from(l.log_tau);
        *per_depth.entry(finest[&a] - depth).or_default() +=
            l.cells.len + l.buckets.len + l.columns.len;
    }
    println!("per depth from each line's finest level:");
    for (d, b) in per_depth.iter().take(6) {
        println!(
            "  finest-{d}: {:>8.1} MB {:>5.2} B a block",
            mb(*b),
            per_block(*b)
        );
    }
    if !fields {
        return Ok(());
    }
    // Cells by blocks held (1, 2, 3–4, 5–8, 9–16, 17–64, 65–256, more) and the fields left at
    // their empty/unknown value.
    let bounds = [1.0f32, 2.0, 4.0, 8.0, 16.0, 64.0, 256.0, f32::INFINITY];
    let mut hist = [0u64; 8];
    let mut hist_buckets = [0u64; 8];
    let (mut spot_y0, mut spot_x0, mut lines_unknown, mut mask_bits) = (0u64, 0u64, 0u64, 0u64);
    let (mut one_bucket, mut n) = (0u64, 0u64);
    let mut buckets_hist: BTreeMap<u16, u64> = BTreeMap::new();
    for level in &idx.levels {
        for c in level.cells.iter() {
            n += 1;
            let i = bounds.iter().position(|&b| c.n <= b).unwrap_or(7);
            hist[i] += 1;
            hist_buckets[i] += u64::from(c.buckets);
            spot_y0 += u64::from(c.spot_y == [0; 2]);
            spot_x0 += u64::from(c.spot_x == [0; 2 * SPOT_QUARTERS]);
            lines_unknown += u64::from(c.spot_lines == CellRec::SPOT_LINES_UNKNOWN);
            mask_bits += u64::from(c.mask.count_ones());
            one_bucket += u64::from(c.buckets == 1);
            *buckets_hist.entry(c.buckets.min(8)).or_default() += 1;
        }
    }
    let pct = |v: u64| 100.0 * v as f64 / n.max(1) as f64;
    println!("cells {n}: by blocks held (≤ 1, 2, 3–4, 5–8, 9–16, 17–64, 65–256, more):");
    for (i, (h, hb)) in hist.iter().zip(&hist_buckets).enumerate() {
        println!(
            "  ≤ {:>4}: {:>10} cells ({:5.1} %), {:.2} buckets a cell",
            bounds[i],
            h,
            pct(*h),
            *hb as f64 / (*h).max(1) as f64
        );
    }
    println!(
        "few-block cells (n ≤ {FEW_BLOCKS}: centres kept, no spots): {:.1} %",
        pct(hist[..5].iter().sum())
    );
    println!(
        "spot_y empty {:.1} %, spot_x empty {:.1} %, spot_lines unknown {:.1} %, one bucket {:.1} %, mask bits {:.2} a cell",
        pct(spot_y0),
        pct(spot_x0),
        pct(lines_unknown),
        pct(one_bucket),
        mask_bits as f64 / n.max(1) as f64
    );
    println!("buckets a cell (8: 8 or more): {buckets_hist:?}");
    Ok(())
}
