//! Prototype evaluation: LOD vs exact on a generated trace.
use memscape_lod::eq1::ColorMode;
use memscape_lod::exact;
use memscape_lod::mip::Mip;
use memscape_lod::source::{Coloring, blocks_from_trace};
use memscape_lod::synth::{SynthParams, trace};
use memscape_lod::view::LodView;

fn stats(a: &[[u8; 4]], b: &[[u8; 4]]) -> (f64, f64, u8) {
    let mut sum = 0u64;
    let mut over = 0usize;
    let mut max = 0u8;
    for (p, q) in a.iter().zip(b) {
        let mut m = 0u8;
        for k in 0..3 {
            let d = p[k].abs_diff(q[k]);
            sum += u64::from(d);
            m = m.max(d);
        }
        max = max.max(m);
        if m > 8 {
            over += 1;
        }
    }
    (
        sum as f64 / (a.len() * 3) as f64,
        over as f64 / a.len() as f64 * 100.0,
        max,
    )
}

fn ppm(path: &str, w: u32, h: u32, px: &[[u8; 4]]) {
    let mut out = format!("P6\n{w} {h}\n255\n").into_bytes();
    for p in px {
        out.extend_from_slice(&p[..3]);
    }
    let _ = std::fs::write(path, out);
}

fn main() {
    let events: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000_000);
    let t = trace(SynthParams::new(events, 11));
    let (blocks, axis) = blocks_from_trace(&t, Coloring::Thread);
    println!("blocks {} extent_y {}", blocks.len(), axis.extent);
    let te = t.meta.events.max(1);
    let start = std::time::Instant::now();
    let mip = Mip::build(blocks.clone(), te + 1, axis.extent, 16);
    println!("build {:?}", start.elapsed());
    for (k, l) in mip.levels.iter().enumerate() {
        let nb: usize = l.values().map(|c| c.buckets.len()).sum();
        println!("level {k}: {} cells, {nb} buckets", l.len());
    }
    let (w, h) = (640u32, 360u32);
    let ye = axis.extent;
    // The main heap: the first region.
    let r0 = axis.regions[0];
    let (h0, h1) = (r0.collapsed_start, r0.collapsed_start + (r0.end - r0.start));
    let hs = h1 - h0;
    println!("main heap {} bytes of {}", hs, ye);
    let views = [
        ("full", 0, te, 0, ye),
        ("heap", 0, te, h0, h1),
        ("heap_t4", te / 3, te / 3 + te / 4, h0, h1),
        (
            "heap_iso4",
            te / 3,
            te / 3 + te / 4,
            h0 + hs / 3,
            h0 + hs / 3 + hs / 4,
        ),
        (
            "heap_iso16",
            te / 3,
            te / 3 + te / 16,
            h0 + hs / 3,
            h0 + hs / 3 + hs / 16,
        ),
        ("heap_a16", 0, te, h0 + hs / 3, h0 + hs / 3 + hs / 16),
        ("heap_t16", te / 3, te / 3 + te / 16, h0, h1),
    ];
    for &(name, t0, t1, a0, a1) in &views {
        for alpha in [0.1f32, 0.5, 1.0] {
            for mode in [ColorMode::Categorical] {
                let mut v = LodView::fit(t0, t1, a0, a1, w, h);
                v.alpha = alpha;
                v.color_mode = mode;
                let s = std::time::Instant::now();
                let ex = exact::render(&v, &blocks);
                let te_ = s.elapsed();
                let s = std::time::Instant::now();
                let (lod, cells, nx) = mip.render(&v);
                let tl = s.elapsed();
                let (mean, pct, max) = stats(&ex, &lod);
                if std::env::var("WORST").is_ok() && alpha < 0.2 {
                    let mut es = memscape_lod::sums::PixelSums::new(w, h);
                    exact::accumulate(&v, &blocks, &mut es);
                    let mut ls = memscape_lod::sums::PixelSums::new(w, h);
                    mip.accumulate(&v, &mut ls);
                    let mut idx: Vec<usize> = (0..ex.len()).collect();
                    idx.sort_by_key(|&i| {
                        std::cmp::Reverse(
                            (0..3)
                                .map(|k| ex[i][k].abs_diff(lod[i][k]))
                                .max()
                                .unwrap_or(0),
                        )
                    });
                    for &i in idx.iter().take(6) {
                        println!(
                            "  px ({}, {}) exact {:?} F={:.4} S={:.5} | lod {:?} F={:.4} S={:.5}",
                            i % w as usize,
                            i / w as usize,
                            &ex[i][..3],
                            es.acc[i][3],
                            es.cov[i],
                            &lod[i][..3],
                            ls.acc[i][3],
                            ls.cov[i]
                        );
                    }
                }
                if std::env::var("DUMP").is_ok() {
                    ppm(
                        &format!("/tmp/lod_{name}_{alpha}_exact.ppm")
                            .replace('/', "_")
                            .replacen("_tmp_", "/tmp/", 1),
                        w,
                        h,
                        &ex,
                    );
                    ppm(
                        &format!("/tmp/lod_{name}_{alpha}_lod.ppm")
                            .replace('/', "_")
                            .replacen("_tmp_", "/tmp/", 1),
                        w,
                        h,
                        &lod,
                    );
                    let diff: Vec<[u8; 4]> = ex
                        .iter()
                        .zip(&lod)
                        .map(|(a, b)| {
                            let d = (0..3).map(|k| a[k].abs_diff(b[k])).max().unwrap_or(0);
                            let v = (u32::from(d) * 16).min(255) as u8;
                            [v, v, v, 255]
                        })
                        .collect();
                    ppm(
                        &format!("/tmp/lod_{name}_{alpha}_diff.ppm")
                            .replace('/', "_")
                            .replacen("_tmp_", "/tmp/", 1),
                        w,
                        h,
                        &diff,
                    );
                }
                println!(
                    "{name:7} a={alpha:4} level={:?} cells={cells} exact_blocks={nx} mean={mean:.3} >8: {pct:.3}% max={max} t_exact={te_:?} t_lod={tl:?}",
                    mip.level_for(&v)
                );
            }
        }
    }
}
