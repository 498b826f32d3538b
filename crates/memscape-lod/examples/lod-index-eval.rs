//! Builds the index of a generated trace and compares views with the exact picture.
use memscape_lod::eq1::ColorMode;
use memscape_lod::resolve::accumulate;
use memscape_lod::source::{Coloring, blocks_from_trace};
use memscape_lod::synth::{SynthParams, trace};
use memscape_lod::{BuildParams, LodBuilder, LodIndex, LodView, PixelSums, SourceId, exact};

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

fn main() {
    let events: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000_000);
    let (w, h): (u32, u32) = (
        std::env::args()
            .nth(2)
            .and_then(|s| s.parse().ok())
            .unwrap_or(640),
        std::env::args()
            .nth(3)
            .and_then(|s| s.parse().ok())
            .unwrap_or(360),
    );
    let t = trace(SynthParams::new(events, 11));
    let (blocks, axis) = blocks_from_trace(&t, Coloring::Thread);
    let te = t.meta.events.max(1);
    let dir = std::env::temp_dir().join("lod-eval-scratch");
    let path = std::env::temp_dir().join("lod-eval.lod");
    let start = std::time::Instant::now();
    let mut b = LodBuilder::new(&dir, te + 1, axis.extent, blocks.len() as u64, &{
        let mut p = BuildParams::default();
        if let Some(v) = std::env::var("CPB").ok().and_then(|s| s.parse().ok()) {
            p.max_cells_per_block = v;
        }
        if let Ok(l) = std::env::var("LINES") {
            p.lines = l.split(',').filter_map(|s| s.parse().ok()).collect();
        }
        p
    })
    .expect("builder");
    for (i, blk) in blocks.iter().enumerate() {
        b.push(i as u64, blk).expect("push");
    }
    let meta = b
        .finish(&path, SourceId::default(), axis.clone(), "thread")
        .expect("finish");
    println!("blocks {} build {:?}", blocks.len(), start.elapsed());
    let idx = LodIndex::open(&path).expect("open");
    let file = idx.file_len();
    let class_blocks: u64 = meta.classes.iter().map(|c| c.blocks.len / 40).sum();
    println!(
        "index {} bytes = {:.1} B/block; levels {}; copied blocks {} ({:.1}%)",
        file,
        file as f64 / blocks.len() as f64,
        meta.levels.len(),
        class_blocks,
        class_blocks as f64 / blocks.len() as f64 * 100.0
    );
    if std::env::var("LEVELS").is_ok() {
        for l in &meta.levels {
            println!(
                "  tau 2^{} sig 2^{} blocks {} cells {} buckets {}",
                l.log_tau,
                l.log_sig,
                l.blocks,
                l.cells.len / 72,
                l.buckets.len / 32
            );
        }
    }
    let ye = axis.extent;
    let r0 = axis.regions[0];
    let (h0, h1) = (r0.collapsed_start, r0.collapsed_start + (r0.end - r0.start));
    let hs = h1 - h0;
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
        ("full_t8", te / 2, te / 2 + te / 8, 0, ye),
    ];
    for &(name, t0, t1, a0, a1) in &views {
        for alpha in [0.1f32, 0.5, 1.0] {
            let mut v = LodView::fit(t0, t1, a0, a1, w, h);
            v.alpha = alpha;
            v.color_mode = ColorMode::Categorical;
            let s = std::time::Instant::now();
            let ex = exact::render(&v, &blocks);
            let t_ex = s.elapsed();
            let s = std::time::Instant::now();
            let mut sums = PixelSums::new(w, h);
            let st = accumulate(&idx, &blocks[..], &v, &mut sums);
            let lod = sums.resolve(&v);
            let t_lod = s.elapsed();
            let (mean, pct, max) = stats(&ex, &lod);
            if std::env::var("WORST").is_ok() && st.level.is_some() {
                let mut es = PixelSums::new(w, h);
                exact::accumulate(&v, &blocks, &mut es);
                let mut idx: Vec<usize> = (0..ex.len()).collect();
                idx.sort_by_key(|&i| {
                    std::cmp::Reverse(
                        (0..3)
                            .map(|k| ex[i][k].abs_diff(lod[i][k]))
                            .max()
                            .unwrap_or(0),
                    )
                });
                for &i in idx.iter().take(8) {
                    println!(
                        "  px ({}, {}) exact {:?} F={:.4} S={:.5} | lod {:?} F={:.4} S={:.5}",
                        i % w as usize,
                        i / w as usize,
                        &ex[i][..3],
                        es.acc[i][3],
                        es.cov[i],
                        &lod[i][..3],
                        sums.acc[i][3],
                        sums.cov[i]
                    );
                }
            }
            if std::env::var("DUMP").is_ok() && st.level.is_some() {
                let ppm = |tag: &str, px: &[[u8; 4]]| {
                    let mut out = format!("P6\n{w} {h}\n255\n").into_bytes();
                    for p in px {
                        out.extend_from_slice(&p[..3]);
                    }
                    let _ = std::fs::write(format!("/tmp/lodx_{name}_{alpha}_{tag}.ppm"), out);
                };
                ppm("exact", &ex);
                ppm("lod", &lod);
                let diff: Vec<[u8; 4]> = ex
                    .iter()
                    .zip(&lod)
                    .map(|(a, b)| {
                        let d = (0..3)
                            .map(|k| i32::from(a[k]) - i32::from(b[k]))
                            .max_by_key(|d| d.abs())
                            .unwrap_or(0);
                        let v = (d.abs() * 16).min(255) as u8;
                        if d > 0 {
                            [v, 0, 0, 255]
                        } else {
                            [0, v, 0, 255]
                        }
                    })
                    .collect();
                ppm("diff", &diff);
            }
            println!(
                "{name:10} a={alpha:4} level={:?} cells={} exact={} mean={mean:.3} >8={pct:.3}% max={max} t_exact={t_ex:.2?} t_lod={t_lod:.2?}",
                st.level
                    .map(|l| (idx.levels[l].desc.log_tau, idx.levels[l].desc.log_sig)),
                st.cells,
                st.exact_blocks
            );
        }
    }
    let _ = std::fs::remove_file(&path);
}
