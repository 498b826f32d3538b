//! Where the level of detail differs from the exact picture on the whole view of a generated
//! trace: the worst pixels with both colours and the exact blocks covering them.
//!
//! `lod-diff EVENTS W H ALPHA`
mod common;

use memscape_lod::resolve::accumulate;
use memscape_lod::trace_source::{TraceBlocks, lod_block};
use memscape_lod::{LodBlock, LodView, PixelSums, exact};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: f64| common::arg(&a, i, d);
    let (events, w, h, alpha) = (
        arg(0, 1.5e6) as u64,
        arg(1, 320.0) as u32,
        arg(2, 180.0) as u32,
        arg(3, 0.1) as f32,
    );
    let common::Indexed {
        file,
        index,
        dir: _dir,
    } = common::indexed_synth(events)?;
    let color = common::thread_color;
    let axis = index.meta.axis.clone();
    let cols = file.columns();
    let all: Vec<LodBlock> = (0..cols.len())
        .map(|i| lod_block(&cols, &axis, &color, i))
        .collect();
    let source = TraceBlocks {
        columns: file.columns(),
        axis: &axis,
        color: &color,
        index: &index,
    };
    let mut v = LodView::fit(0, index.meta.extent_t, 0, axis.extent, w, h);
    v.alpha = alpha;
    let ex = exact::render_fast(&v, &all);
    let mut sums = PixelSums::new(w, h);
    let st = accumulate(&index, &source, &v, &mut sums);
    let lod = sums.resolve(&v);
    println!(
        "level {:?} {:?}",
        st.level,
        st.level.map(|l| index.levels[l].desc)
    );
    let mut bad: Vec<(u8, usize)> = ex
        .iter()
        .zip(&lod)
        .enumerate()
        .map(|(i, (p, q))| ((0..3).map(|k| p[k].abs_diff(q[k])).max().unwrap_or(0), i))
        .filter(|(d, _)| *d > 8)
        .collect();
    bad.sort_unstable();
    bad.reverse();
    println!("{} pixels over 8", bad.len());
    let mut hist = std::collections::BTreeMap::new();
    for (_, i) in &bad {
        *hist.entry(i / w as usize).or_insert(0) += 1;
    }
    println!("rows (y from bottom): {hist:?}");
    for &(d, i) in bad.iter().take(30) {
        let (x, y) = (i % w as usize, i / w as usize);
        let n = all
            .iter()
            .filter(|b| {
                let g = v.block_geometry_px(b);
                memscape_lod::eq1::box_coverage(g, [x as f32, y as f32]) > 0.0
            })
            .count();
        if n <= 2 {
            for b in all.iter().filter(|b| {
                let g = v.block_geometry_px(b);
                memscape_lod::eq1::box_coverage(g, [x as f32, y as f32]) > 0.0
            }) {
                println!(
                    "  block t {}..{} y {} size {} geometry {:?}",
                    b.t0,
                    b.t1,
                    b.y,
                    b.size,
                    v.block_geometry_px(b)
                );
            }
        }
        let count = |dx: i64, dy: i64| {
            all.iter()
                .filter(|b| {
                    let g = v.block_geometry_px(b);
                    memscape_lod::eq1::box_coverage(
                        g,
                        [(x as i64 + dx) as f32, (y as i64 + dy) as f32],
                    ) > 0.0
                })
                .count()
        };
        let sides = [count(-1, 0), count(1, 0), count(0, -1), count(0, 1)];
        let diag = [count(-1, -1), count(1, -1), count(-1, 1), count(1, 1)];
        println!(
            "({x},{y}) d {d} exact {:?} lod {:?} blocks {n} sides {sides:?} diagonals {diag:?}",
            &ex[i][..3],
            &lod[i][..3]
        );
    }
    Ok(())
}
