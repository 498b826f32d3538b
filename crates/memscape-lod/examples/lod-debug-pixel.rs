//! Explains one pixel of the full view: exact blocks vs the index's cells.
use memscape_lod::resolve::accumulate_cells;
use memscape_lod::source::{Coloring, blocks_from_trace};
use memscape_lod::synth::{SynthParams, trace};
use memscape_lod::{BuildParams, LodBuilder, LodIndex, LodView, PixelSums, SourceId, exact};

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|s| s.parse().ok())
        .collect();
    let (events, px, py) = (args[0], args[1] as usize, args[2] as usize);
    let t = trace(SynthParams::new(events, 11));
    let (blocks, axis) = blocks_from_trace(&t, Coloring::Thread);
    let te = t.meta.events.max(1);
    let dir = std::env::temp_dir().join("lod-dbg-scratch");
    let path = std::env::temp_dir().join("lod-dbg.lod");
    let mut b = LodBuilder::new(
        &dir,
        te + 1,
        axis.extent,
        blocks.len() as u64,
        &BuildParams::default(),
    )
    .expect("b");
    for blk in &blocks {
        b.push(blk).expect("push");
    }
    b.finish(&path, SourceId::default(), axis.clone(), "thread")
        .expect("finish");
    let idx = LodIndex::open(&path).expect("open");
    let (w, h) = (640u32, 360u32);
    let mut v = LodView::fit(0, te, 0, axis.extent, w, h);
    v.alpha = 0.1;
    let [pw, ph] = v.pixel_size();
    let li = idx.level_for([pw, ph]).expect("level");
    let l = &idx.levels[li];
    let [tau, sig] = l.cell_size();
    println!("pixel {pw:.1} x {ph:.1}; level tau {tau} sig {sig}");
    let one = |bs: &[memscape_lod::LodBlock]| {
        let mut s = PixelSums::new(w, h);
        exact::accumulate(&v, bs, &mut s);
        let i = py * w as usize + px;
        (s.acc[i][3], s.cov[i])
    };
    let small: Vec<_> = blocks
        .iter()
        .filter(|b| (b.width() as f64) < tau && (b.size as f64) < sig)
        .copied()
        .collect();
    let large: Vec<_> = blocks
        .iter()
        .filter(|b| !((b.width() as f64) < tau && (b.size as f64) < sig))
        .copied()
        .collect();
    println!("exact small {:?} large {:?}", one(&small), one(&large));
    let mut s = PixelSums::new(w, h);
    accumulate_cells(&idx, li, &v, &mut s);
    let i = py * w as usize + px;
    println!("cells {:?}", (s.acc[i][3], s.cov[i]));
    // The small blocks near the pixel's rows.
    let [ty0, ty1] = [
        v.plane_at(0.0, py as f64 + 1.0)[1],
        v.plane_at(0.0, py as f64)[1],
    ];
    let [tx0, tx1] = [
        v.plane_at(px as f64, 0.0)[0],
        v.plane_at(px as f64 + 1.0, 0.0)[0],
    ];
    println!("pixel rows addr [{ty0:.0}, {ty1:.0}) time [{tx0:.0}, {tx1:.0})");
    let mut near: Vec<_> = small
        .iter()
        .filter(|b| {
            (b.t1 as f64) > tx0
                && (b.t0 as f64) < tx1
                && ((b.y + b.size) as f64) > ty0 - 2.0 * sig
                && (b.y as f64) < ty1 + 2.0 * sig
        })
        .collect();
    near.sort_by_key(|b| b.y);
    println!(
        "{} small blocks near; y range {:?}",
        near.len(),
        near.first()
            .map(|b| b.y)
            .zip(near.last().map(|b| b.y + b.size))
    );
    let kx0 = (tx0 / tau).floor() as u64;
    let kx1 = (tx1 / tau).floor() as u64;
    let ky0 = ((ty0 - sig) / sig).floor() as u64;
    let ky1 = ((ty1 + sig) / sig).floor() as u64;
    for (kx, c) in l.cells_in([kx0, kx1], [ky0, ky1]) {
        println!(
            "cell ({kx}, {}) addr [{:.0}, {:.0}) n {} bbox y [{:.3}, {:.3}] mean_h {:.4} mean_w {:.3}",
            c.ky,
            c.ky as f64 * sig,
            (c.ky + 1) as f64 * sig,
            c.n,
            memscape_lod::format::CellRec::bbox_at(c.bbox[2]),
            memscape_lod::format::CellRec::bbox_at(c.bbox[3]),
            c.mean_h,
            c.mean_w
        );
    }
    let inside: Vec<_> = small
        .iter()
        .filter(|b| {
            (b.t1 as f64) > tx0
                && (b.t0 as f64) < tx1
                && ((b.y + b.size) as f64) > ty0
                && (b.y as f64) < ty1
        })
        .collect();
    println!("{} small blocks meet the pixel", inside.len());
    let in_cell: Vec<_> = small
        .iter()
        .filter(|b| {
            let cx = b.t0 as f64 + b.width() as f64 / 2.0;
            let cy = b.y as f64 + b.size as f64 / 2.0;
            (cx / tau).floor() as u64 == 502 && (cy / sig).floor() as u64 == 510
        })
        .collect();
    println!("{} small blocks anchored in (502, 510):", in_cell.len());
    for b in in_cell.iter().take(8) {
        let g = v.block_geometry_px(b);
        println!(
            "  t [{}, {}) y [{}, {}) px x {:.2} w {:.4} yb {:.2} h {:.5}",
            b.t0,
            b.t1,
            b.y,
            b.y + b.size,
            g[0],
            g[2],
            g[1],
            g[3]
        );
    }
    let _ = std::fs::remove_file(&path);
}
// (appended) nothing
