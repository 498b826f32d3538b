//! Debug: the misses (pixels over 8/255) of one view of a trace file drawn from each level
//! against every block (the views and settings of `tests/scale.rs`: α 0.1 and 0.5 with
//! cushions, 1 without), so that a level choice or an index change can be judged at 50 M
//! events without the whole test: per level its cells in pixels, mean error, misses and the
//! resolve's CPU; for the level the index picks, the misses with the exact and the level's
//! Σf^α and coverage, per row and column.
//!
//! `lod-misses TRACE [W H [VIEW [ALPHA [LIST]]]]`, VIEW `whole`, `time` (the third eighth of
//! the run, `[te/3, te/3 + te/8)`) or `addr` (`[ye/5, ye/5 + ye/8)`); the index beside the
//! trace, coloured by thread (`lod-build` makes it). `LOD_MISSES_LEVELS=all` also tries every
//! level whose cells are at most a pixel (default: the picked one and up to 4 finer ones of
//! at most 4× its cells); `LOD_MISSES_PIXEL=X,Y` prints the cells of that pixel.
use memscape_lod::eq1::Cushion;
use memscape_lod::resolve::accumulate_at;
use memscape_lod::source::palette_color;
use memscape_lod::trace_source::{TraceBlocks, TraceFile, lod_block};
use memscape_lod::{LodBlock, LodView, PixelSums};

mod common;
use common::cpu_seconds;

fn color(t: u32, _s: u32, _z: u64, _l: u64) -> (u32, f32) {
    (palette_color(t), 0.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = std::path::PathBuf::from(
        args.first()
            .ok_or("usage: lod-misses TRACE [W H [VIEW [ALPHA [LIST]]]]")?,
    );
    let num = |i: usize, d: f64| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let (w, h) = (num(1, 320.0) as u32, num(2, 180.0) as u32);
    let which = args.get(3).map_or("whole", String::as_str);
    let alpha = num(4, 0.1) as f32;
    let list = num(5, 30.0) as usize;
    let file = TraceFile::open(&path)?;
    let cols = file.columns();
    let n = cols.len();
    let out = memscape_lod::sidecar::index_path(&path, "thread");
    let index = memscape_lod::sidecar::open_current(
        &out,
        &path,
        file.trace.meta.events,
        n as u64,
        "thread",
    )
    .ok_or("no current index beside the trace (run lod-build)")?;
    let axis = index.meta.axis.clone();
    let (te, ye) = (index.meta.extent_t, axis.extent);
    let (t0, t1, a0, a1) = match which {
        "time" => (te / 3, te / 3 + te / 8, 0, ye),
        "addr" => (0, te, ye / 5, ye / 5 + ye / 8),
        _ => (0, te, 0, ye),
    };
    let mut v = LodView::fit(t0, t1, a0, a1, w, h);
    v.alpha = alpha;
    v.cushion = if alpha < 1.0 {
        Cushion::Parabolic
    } else {
        Cushion::None
    };
    let all: Vec<LodBlock> = (0..n).map(|i| lod_block(&cols, &axis, &color, i)).collect();
    let mut want_sums = PixelSums::new(w, h);
    memscape_lod::exact::accumulate(&v, &all, &mut want_sums);
    let want = want_sums.resolve(&v);
    let source = TraceBlocks {
        columns: file.columns(),
        axis: &axis,
        color: &color,
        index: &index,
    };
    let picked = index
        .level_for_view(&v)
        .ok_or("the view is drawn exactly")?;
    let [pw, ph] = v.pixel_size();
    let px = |li: usize| {
        let [tau, sig] = index.levels[li].cell_size();
        [tau / pw, sig / ph]
    };
    let every = std::env::var("LOD_MISSES_LEVELS").is_ok_and(|s| s == "all");
    let picked_cells = px(picked)[0] * px(picked)[1];
    let mut levels: Vec<usize> = (0..index.levels.len())
        .filter(|&li| {
            let [x, y] = px(li);
            li == picked
                || (x <= 1.0 + 1e-9 && y <= 1.0 + 1e-9 && (every || x * y >= picked_cells / 4.1))
        })
        .collect();
    // The picked level first, then the others from the largest cells down.
    levels.sort_by(|a, b| {
        (*b == picked)
            .cmp(&(*a == picked))
            .then((px(*b)[0] * px(*b)[1]).total_cmp(&(px(*a)[0] * px(*a)[1])))
    });
    println!(
        "{} {w}×{h} α {alpha}: [{t0},{t1})×[{a0},{a1}), {n} blocks; level {picked} picked",
        path.display()
    );
    for &li in &levels {
        let c0 = cpu_seconds();
        let mut sums = PixelSums::new(w, h);
        let st = accumulate_at(&index, &source, &v, Some(li), &mut sums);
        let got = sums.resolve(&v);
        let cpu = cpu_seconds() - c0;
        let mut misses = Vec::new();
        let mut total = 0u64;
        for (i, (p, q)) in want.iter().zip(&got).enumerate() {
            let d = (0..3).map(|k| p[k].abs_diff(q[k])).max().unwrap_or(0);
            total += (0..3).map(|k| u64::from(p[k].abs_diff(q[k]))).sum::<u64>();
            if d > 8 {
                misses.push((i % w as usize, i / w as usize, d));
            }
        }
        let d = index.levels[li].desc;
        let [cx, cy] = px(li);
        println!(
            "level {li} (2^{}×2^{}, cells {cx:.3} × {cy:.3} px, {} cells, {} exact blocks): mean {:.3}/255, {} misses ({:.3} % within), resolve {cpu:.2} CPU-s",
            d.log_tau,
            d.log_sig,
            st.cells,
            st.exact_blocks,
            total as f64 / (want.len() * 3) as f64,
            misses.len(),
            100.0 - misses.len() as f64 * 100.0 / want.len() as f64
        );
        if li != picked {
            continue;
        }
        let (mut over, mut under) = (0, 0);
        for (k, &(x, y, dd)) in misses.iter().enumerate() {
            let i = y * w as usize + x;
            let (fe, fg) = (want_sums.acc[i][3], sums.acc[i][3]);
            if fg > fe {
                over += 1;
            } else {
                under += 1;
            }
            if k < list {
                println!(
                    "  ({x},{y}) d {dd}: Σf^α exact {fe:.4} level {fg:.4}; cov exact {:.3e} level {:.3e}; want {:?} got {:?}",
                    want_sums.cov[i], sums.cov[i], want[i], got[i]
                );
            }
        }
        println!("  level's Σf^α above the exact one: {over}, below: {under}");
        let mut rows = std::collections::BTreeMap::<usize, usize>::new();
        let mut columns = std::collections::BTreeMap::<usize, usize>::new();
        for &(x, y, _) in &misses {
            *rows.entry(y).or_default() += 1;
            *columns.entry(x).or_default() += 1;
        }
        let mut rows: Vec<_> = rows.into_iter().collect();
        rows.sort_by_key(|r| std::cmp::Reverse(r.1));
        let mut columns: Vec<_> = columns.into_iter().collect();
        columns.sort_by_key(|r| std::cmp::Reverse(r.1));
        println!("  rows (row, misses): {:?}", &rows[..rows.len().min(12)]);
        println!(
            "  columns (column, misses): {:?}",
            &columns[..columns.len().min(12)]
        );
        if let Some((qx, qy)) = std::env::var("LOD_MISSES_PIXEL").ok().and_then(|s| {
            let (x, y) = s.split_once(',')?;
            Some((x.parse::<u64>().ok()?, y.parse::<u64>().ok()?))
        }) {
            let i = qy as usize * w as usize + qx as usize;
            if let (Some(e), Some(g)) = (want_sums.acc.get(i), sums.acc.get(i)) {
                println!("  pixel ({qx},{qy}): exact sums {e:?}, level {g:?}");
            }
            pixel_cells(&index.levels[li], &v, &all, [qx, qy]);
        }
    }
    Ok(())
}

/// The cells of `level` in pixel column `px` around row `py`, and the blocks whose centres
/// lie in that column and those rows, in cell units.
fn pixel_cells(
    level: &memscape_lod::index::Level,
    v: &LodView,
    all: &[LodBlock],
    [px, py]: [u64; 2],
) {
    let [tau, sig] = level.cell_size();
    let [pw, ph] = v.pixel_size();
    let t_lo = v.time_origin as f64 + px as f64 * pw;
    let h = f64::from(v.height);
    let a_lo = v.addr_origin as f64 + (h - py as f64 - 2.0) * ph;
    let a_hi = v.addr_origin as f64 + (h - py as f64 + 1.0) * ph;
    println!(
        "  pixel ({px},{py}): time [{t_lo:.0}, {:.0}) = cell x [{:.4}, {:.4}); rows {}..={} are addresses [{a_lo:.0}, {a_hi:.0}); row {py} is cell y [{:.4}, {:.4})",
        t_lo + pw,
        t_lo / tau,
        (t_lo + pw) / tau,
        py.saturating_sub(1),
        py + 1,
        (v.addr_origin as f64 + (h - py as f64 - 1.0) * ph) / sig,
        (v.addr_origin as f64 + (h - py as f64) * ph) / sig,
    );
    let kx = [(t_lo / tau) as u64, ((t_lo + pw) / tau) as u64];
    let ky = [(a_lo / sig) as u64, (a_hi / sig) as u64 + 1];
    level.cells_in(kx, ky, |kx, c| {
        println!(
            "    cell ({kx},{}) n {} mean {:.4}x{:.4} bbox x [{:.4},{:.4}] y [{:.4},{:.4}] px {:?} py {:?} spots {:?} spot_x {:?} mask {:016x} buckets {}",
            c.ky,
            c.n,
            c.mean_w,
            c.mean_h,
            c.bbox_at(0),
            c.bbox_at(1),
            c.bbox_at(2),
            c.bbox_at(3),
            c.profile_x,
            c.profile_y,
            c.spots_y(),
            c.spot_x,
            c.mask,
            c.buckets
        );
    });
    let mut lines = std::collections::BTreeMap::<u64, (usize, f64, f64, f64)>::new();
    for b in all {
        let ct = (b.t0 as f64 + b.t1 as f64) / 2.0;
        let cy = b.y as f64 + b.size as f64 / 2.0;
        if ct >= t_lo && ct < t_lo + pw && cy >= a_lo && cy < a_hi {
            let e = lines.entry(b.y).or_default();
            e.0 += 1;
            e.1 = cy / sig;
            e.2 += (b.t1 - b.t0) as f64 / pw;
            e.3 = e.3.max(b.size as f64 / ph);
        }
    }
    for (y, (n, cy, w, hmax)) in lines {
        println!(
            "    blocks at address {y}: {n}, centre at cell y {cy:.4}, widths Σ {w:.3} px, tallest {hmax:.4} px"
        );
    }
}
