//! Debug: the cells of the level that draw into pixel (X, Y) of the whole view of a generated
//! trace, with their boxes, profiles and weights there. `lod-pixel EVENTS W H ALPHA X Y`
mod common;

use memscape_lod::LodView;
use memscape_lod::resolve::{AxisCell, profile_weights};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: f64| common::arg(&a, i, d);
    let (events, w, h, alpha, x, y) = (
        arg(0, 1.5e6) as u64,
        arg(1, 320.0) as u32,
        arg(2, 180.0) as u32,
        arg(3, 0.1),
        arg(4, 0.0) as i64,
        arg(5, 0.0) as i64,
    );
    let common::Indexed {
        index, dir: _dir, ..
    } = common::indexed_synth(events)?;
    let v = LodView::fit(0, index.meta.extent_t, 0, index.meta.axis.extent, w, h);
    let li = index.level_for(v.pixel_size()).ok_or("no level")?;
    let level = &index.levels[li];
    let [tau, sig] = level.cell_size();
    let [pw, ph] = v.pixel_size();
    let (rx, ry) = (tau / pw, sig / ph);
    println!("level {li}: cell {rx:.3} x {ry:.3} px");
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    level.cells_in([0, u64::MAX / 2], [0, u64::MAX / 2], |kx, cell| {
        let cx0 = (kx as f64 * tau) / pw;
        let cy_bottom = f64::from(h) - (cell.ky as f64 * sig) / ph;
        if (cx0 - x as f64).abs() > 3.0 || (cy_bottom - y as f64).abs() > 3.0 {
            return;
        }
        profile_weights(
            &AxisCell {
                origin: cx0,
                scale: rx,
                bbox: [cell.bbox_at(0), cell.bbox_at(1)],
                profile: &cell.profile_x,
                extent: f64::from(cell.mean_w) * rx,
                spots: [memscape_lod::format::SpotSlice::NONE; 2],
                split_spots: false,
            },
            alpha,
            i64::from(w),
            &mut xs,
        );
        profile_weights(
            &AxisCell {
                origin: cy_bottom,
                scale: -ry,
                bbox: [cell.bbox_at(2), cell.bbox_at(3)],
                profile: &cell.profile_y,
                extent: f64::from(cell.mean_h) * ry,
                spots: cell.spots_y(),
                split_spots: false,
            },
            alpha,
            i64::from(h),
            &mut ys,
        );
        let gx = xs.iter().find(|p| p.0 == x);
        let gy = ys.iter().find(|p| p.0 == y);
        if let (Some(gx), Some(gy)) = (gx, gy) {
            println!(
                "cell ({kx},{}) n {} x0 {cx0:.3} ybot {cy_bottom:.3} bbox x [{:.4},{:.4}] y [{:.4},{:.4}] mean {:.4}x{:.4} px {:?} py {:?} gx {gx:?} gy {gy:?} ys {ys:?}",
                cell.ky,
                cell.n,
                cell.bbox_at(0),
                cell.bbox_at(1),
                cell.bbox_at(2),
                cell.bbox_at(3),
                cell.mean_w,
                cell.mean_h,
                cell.profile_x,
                cell.profile_y
            );
        }
    });
    Ok(())
}
