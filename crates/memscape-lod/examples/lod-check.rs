//! The level of detail against the exact picture on a trace file (benches/scale): views from the
//! whole trace down to single blocks, α = 0.1 / 0.5 / 1, errors in sRGB levels, the CPU time of
//! each resolve, and whether the isolated 1-byte blocks stay visible at α = 0.1 at every zoom.
//!
//! `lod-check TRACE [WIDTH HEIGHT]` (builds the index beside the trace if it is missing;
//! `LOD_CHECK_VIEWS=time/4` checks only the views whose names contain one of a comma list)
use std::sync::atomic::AtomicBool;

use memscape_lod::resolve::accumulate;
use memscape_lod::source::palette_color;
use memscape_lod::trace_source::{TraceBlocks, TraceFile, lod_block};
use memscape_lod::{LodBlock, LodView, PixelSums, exact};

mod common;
use common::cpu_seconds;

fn stats(a: &[[u8; 4]], b: &[[u8; 4]]) -> (f64, f64, u8) {
    let (mut sum, mut over, mut max) = (0u64, 0usize, 0u8);
    for (p, q) in a.iter().zip(b) {
        let m = (0..3).map(|k| p[k].abs_diff(q[k])).max().unwrap_or(0);
        sum += (0..3).map(|k| u64::from(p[k].abs_diff(q[k]))).sum::<u64>();
        max = max.max(m);
        over += usize::from(m > 8);
    }
    (
        sum as f64 / (a.len() * 3) as f64,
        over as f64 / a.len() as f64 * 100.0,
        max,
    )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = std::path::PathBuf::from(args.first().ok_or("usage: lod-check TRACE [W H]")?);
    let w: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1920);
    let h: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1080);
    let file = TraceFile::open(&path)?;
    let cols = file.columns();
    let n = cols.len();
    let color = |t: u32, _s: u32, _z: u64, _l: u64| (palette_color(t), 0.0f32);
    let out = memscape_lod::sidecar::index_path(&path, "thread");
    let events = file.trace.meta.events;
    let index = match memscape_lod::sidecar::open_current(&out, &path, events, n as u64, "thread") {
        Some(i) => i,
        None => {
            let s = std::time::Instant::now();
            memscape_lod::sidecar::build(
                &file,
                &path,
                &out,
                memscape_lod::sidecar::Coloring {
                    name: "thread",
                    color: &color,
                },
                &memscape_lod::BuildParams::default(),
                &mut |_, _| {},
                &AtomicBool::new(false),
            )?;
            eprintln!("index built in {:.1?}", s.elapsed());
            memscape_lod::LodIndex::open(&out)?
        }
    };
    let axis = index.meta.axis.clone();
    eprintln!(
        "{} blocks, index {:.1} MB",
        n,
        index.file_len() as f64 / 1e6
    );
    let all: Vec<LodBlock> = (0..n).map(|i| lod_block(&cols, &axis, &color, i)).collect();
    let source = TraceBlocks {
        columns: file.columns(),
        axis: &axis,
        color: &color,
        index: &index,
    };
    let te = events.max(1);
    let ye = axis.extent;
    // The busiest region: the one with the most blocks.
    let mut per_region = vec![0u64; axis.regions.len()];
    for i in 0..n {
        if let Some(k) = axis
            .regions
            .iter()
            .position(|r| cols.address[i] >= r.start && cols.address[i] < r.end)
        {
            per_region[k] += 1;
        }
        if i > 200_000 {
            break;
        }
    }
    let busiest = per_region
        .iter()
        .enumerate()
        .max_by_key(|(_, c)| **c)
        .map_or(0, |(k, _)| k);
    let r = axis.regions[busiest];
    let (h0, h1) = (r.collapsed_start, r.collapsed_start + (r.end - r.start));
    let (tc, yc) = (te / 2, (h0 + h1) / 2);
    let mut views: Vec<(String, u64, u64, u64, u64)> = vec![(String::from("whole"), 0, te, 0, ye)];
    for z in [4u64, 16, 64, 256] {
        views.push((
            format!("iso/{z}"),
            tc - te / z / 2,
            tc + te / z / 2,
            yc.saturating_sub(ye / z / 2),
            yc + ye / z / 2,
        ));
    }
    for z in [4u64, 16, 64] {
        views.push((format!("time/{z}"), tc - te / z / 2, tc + te / z / 2, 0, ye));
    }
    views.push((String::from("heap"), 0, te, h0, h1));
    for z in [4u64, 16] {
        let hs = h1 - h0;
        views.push((
            format!("heap-addr/{z}"),
            0,
            te,
            yc - hs / z / 2,
            yc + hs / z / 2,
        ));
    }
    println!(
        "| view | α | level | cells | exact blocks | mean error | pixels > 8/255 | max | LOD CPU s |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    // `LOD_CHECK_VIEWS=time/4,whole`: only the views whose names contain one of these.
    let only = std::env::var("LOD_CHECK_VIEWS").ok();
    let wanted = |name: &str| {
        only.as_deref()
            .is_none_or(|list| list.split(',').any(|part| name.contains(part)))
    };
    for (name, t0, t1, a0, a1) in views.iter().filter(|v| wanted(&v.0)) {
        for alpha in [0.1f32, 0.5, 1.0] {
            let mut v = LodView::fit(*t0, *t1, *a0, *a1, w, h);
            v.alpha = alpha;
            let ex = exact::render_fast(&v, &all);
            let c0 = cpu_seconds();
            let mut sums = PixelSums::new(w, h);
            let st = accumulate(&index, &source, &v, &mut sums);
            let lod = sums.resolve(&v);
            let cpu = cpu_seconds() - c0;
            let (mean, pct, max) = stats(&ex, &lod);
            let level = st.level.map_or(String::from("exact"), |l| {
                let d = index.levels[l].desc;
                format!("2^{}×2^{}", d.log_tau, d.log_sig)
            });
            println!(
                "| {name} | {alpha} | {level} | {} | {} | {mean:.3} | {pct:.3} % | {max} | {cpu:.2} |",
                st.cells, st.exact_blocks
            );
        }
    }
    // Isolated 1-byte blocks: visible at α = 0.1 at every zoom.
    let isolated: Vec<&LodBlock> = all.iter().filter(|b| b.size == 1).collect();
    let mut checked = 0;
    let mut invisible = 0;
    for b in isolated.iter().take(4) {
        let mut zoom = 1u64;
        loop {
            let (tw, yw) = ((te / zoom).max(64), (ye / zoom).max(64));
            let t0 = b.t0.saturating_sub(tw / 3);
            let a0 = b.y.saturating_sub(yw / 3);
            let mut v = LodView::fit(t0, t0 + tw, a0, a0 + yw, w, h);
            v.alpha = 0.1;
            let mut sums = PixelSums::new(w, h);
            accumulate(&index, &source, &v, &mut sums);
            let img = sums.resolve(&v);
            let bg = PixelSums::new(1, 1).resolve(&v)[0];
            let g = v.block_geometry_px(b);
            let (px, py) = (
                g[0].max(0.0) as usize,
                (g[1] - g[3] / 2.0).max(0.0) as usize,
            );
            let seen = (py.saturating_sub(1)..=py + 1).any(|y| {
                (px.saturating_sub(1)..=px + 1).any(|x| {
                    img.get(y * w as usize + x)
                        .is_some_and(|p| (0..3).any(|k| p[k].abs_diff(bg[k]) >= 8))
                })
            });
            checked += 1;
            if !seen {
                invisible += 1;
                println!(
                    "isolated block at t {} y {} invisible at zoom {zoom}",
                    b.t0, b.y
                );
            }
            if tw <= 64 && yw <= 64 {
                break;
            }
            zoom *= 4;
        }
    }
    println!(
        "isolated 1-byte blocks: {checked} views, {invisible} without the block visible (α = 0.1)"
    );
    Ok(())
}
