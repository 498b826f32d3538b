//! Debug: the misses (pixels over 8/255) of `tests/faithful.rs`'s short views at α 0.1 with
//! cushions (the generated trace of EVENTS events, views WIDTH wide whose cells are about
//! 0.71 px tall), against every block: per miss the exact and the level's Σf^α and coverage,
//! then the misses per row and per column. `lod-short [EVENTS [WIDTH [LIST]]]`
mod common;

use memscape_lod::eq1::Cushion;
use memscape_lod::resolve::accumulate;
use memscape_lod::trace_source::{TraceBlocks, lod_block};
use memscape_lod::{LodView, PixelSums, exact};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let events = common::arg(&a, 0, 1.5e6) as u64;
    let width = common::arg(&a, 1, 640.0) as u32;
    let list = common::arg(&a, 2, 40.0) as usize;
    let common::Indexed {
        file,
        index,
        dir: _dir,
    } = common::indexed_synth(events)?;
    let axis = &index.meta.axis;
    let cols = file.columns();
    let all: Vec<_> = (0..cols.len())
        .map(|i| lod_block(&cols, axis, &common::thread_color, i))
        .collect();
    let source = TraceBlocks {
        columns: cols,
        axis,
        color: &common::thread_color,
        index: &index,
    };
    let (te, ye) = (index.meta.extent_t, axis.extent);
    for l in &index.levels {
        let [tau, sig] = l.cell_size();
        let pixel = [tau, sig / 0.71];
        let h = (ye as f64 / pixel[1]).round() as u32;
        if !(100..270).contains(&h) {
            continue;
        }
        let t0 = te / 3;
        let tw = f64::from(width) * pixel[0];
        let mut v = LodView::fit(
            t0,
            t0 + tw as u64,
            0,
            (f64::from(h) * pixel[1]) as u64,
            width,
            h,
        );
        v.alpha = 0.1;
        v.cushion = Cushion::Parabolic;
        let mut sums = PixelSums::new(v.width, v.height);
        let st = accumulate(&index, &source, &v, &mut sums);
        let Some(li) = st.level else { continue };
        let mut want_sums = PixelSums::new(v.width, v.height);
        exact::accumulate(&v, &all, &mut want_sums);
        let (want, got) = (want_sums.resolve(&v), sums.resolve(&v));
        let w = v.width as usize;
        let mut misses = Vec::new();
        for (i, (p, q)) in want.iter().zip(&got).enumerate() {
            let d = (0..3).map(|k| p[k].abs_diff(q[k])).max().unwrap_or(0);
            if d > 8 {
                misses.push((i % w, i / w, d));
            }
        }
        let [pw, ph] = v.pixel_size();
        let t_origin = v.time_origin as f64;
        println!(
            "level {li}: {}×{}, cells {:.3} × {:.3} px, {} misses ({:.4} % within)",
            v.width,
            v.height,
            tau / pw,
            sig / ph,
            misses.len(),
            100.0 - misses.len() as f64 * 100.0 / want.len() as f64
        );
        let (mut over, mut under) = (0, 0);
        for &(x, y, d) in &misses {
            let i = y * w + x;
            let (fe, fg) = (want_sums.acc[i][3], sums.acc[i][3]);
            if fg > fe {
                over += 1;
            } else {
                under += 1;
            }
            if list > 0 && (over + under) <= list {
                println!(
                    "  ({x},{y}) d {d}: Σf^α exact {fe:.4} level {fg:.4}; cov exact {:.3e} level {:.3e}; want {:?} got {:?}",
                    want_sums.cov[i], sums.cov[i], want[i], got[i]
                );
            }
        }
        println!("  level's Σf^α above the exact one: {over}, below: {under}");
        let mut rows = std::collections::BTreeMap::<usize, usize>::new();
        for &(_, y, _) in &misses {
            *rows.entry(y).or_default() += 1;
        }
        let mut rows: Vec<_> = rows.into_iter().collect();
        rows.sort_by_key(|r| std::cmp::Reverse(r.1));
        println!("  rows (row, misses): {:?}", &rows[..rows.len().min(12)]);
        // Where inside the pixel the cell edges fall, along x: the column edge's offset.
        let mut frac_x = [0usize; 10];
        for &(x, _, _) in &misses {
            let edge = ((t_origin + x as f64 * pw) / tau).fract();
            frac_x[((edge * 10.0) as usize).min(9)] += 1;
        }
        println!("  the pixel's left edge inside its cell (tenths): {frac_x:?}");
        if let Some((px, py)) = std::env::var("LOD_SHORT_PIXEL").ok().and_then(|s| {
            let (x, y) = s.split_once(',')?;
            Some((x.parse::<u64>().ok()?, y.parse::<u64>().ok()?))
        }) {
            detail(&index.levels[li], &v, &all, [px, py]);
        }
    }
    Ok(())
}

/// The cells of `level` in pixel column `px` around row `py`, and the blocks whose centres lie
/// in that column and those rows, in cell units.
fn detail(
    level: &memscape_lod::index::Level,
    v: &LodView,
    all: &[memscape_lod::LodBlock],
    [px, py]: [u64; 2],
) {
    let [tau, sig] = level.cell_size();
    let [pw, ph] = v.pixel_size();
    let t_lo = v.time_origin as f64 + px as f64 * pw;
    let h = f64::from(v.height);
    // Row py covers addresses [(h − py − 1)·ph, (h − py)·ph) above the origin.
    let a_lo = v.addr_origin as f64 + (h - py as f64 - 2.0) * ph;
    let a_hi = v.addr_origin as f64 + (h - py as f64 + 1.0) * ph;
    println!(
        "  pixel ({px},{py}): time [{t_lo:.0}, {:.0}), rows {}..={} are addresses [{a_lo:.0}, {a_hi:.0}); row {py}'s lower edge at cell y {:.4}",
        t_lo + pw,
        py - 1,
        py + 1,
        (v.addr_origin as f64 + (h - py as f64 - 1.0) * ph) / sig
    );
    let kx = [(t_lo / tau) as u64, ((t_lo + pw) / tau) as u64];
    let ky = [(a_lo / sig) as u64, (a_hi / sig) as u64 + 1];
    level.cells_in(kx, ky, |kx, c| {
        println!(
            "    cell ({kx},{}) n {} mean {:.4}x{:.4} bbox y [{:.4},{:.4}] x [{:.4},{:.4}] py {:?} px {:?} spots {:?} mask {:016x}",
            c.ky,
            c.n,
            c.mean_w,
            c.mean_h,
            c.bbox_at(2),
            c.bbox_at(3),
            c.bbox_at(0),
            c.bbox_at(1),
            c.profile_y,
            c.profile_x,
            c.spots_y(),
            c.mask
        );
    });
    let mut lines = std::collections::BTreeMap::<u64, (usize, f64, f64)>::new();
    for b in all {
        let ct = (b.t0 as f64 + b.t1 as f64) / 2.0;
        let cy = b.y as f64 + b.size as f64 / 2.0;
        if ct >= t_lo && ct < t_lo + pw && cy >= a_lo && cy < a_hi {
            let e = lines.entry(b.y).or_default();
            e.0 += 1;
            e.1 = cy / sig;
            e.2 += (b.t1 - b.t0) as f64 / pw;
        }
    }
    for (y, (n, cy, w)) in lines {
        println!("    blocks at address {y}: {n}, centre at cell y {cy:.4}, widths Σ {w:.3} px");
    }
}
