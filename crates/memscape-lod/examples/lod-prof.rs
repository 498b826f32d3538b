//! One resolve of the whole view of a trace, repeated (for perf). `LOD_PROF_ALPHA=0.1`
//! draws at that α with parabolic cushions (else the view's defaults); each resolve prints an
//! FNV-1a hash of its sums' bits, to check that a change keeps them bit-identical.
//! `LOD_PROF_SIZE=320x180` draws frames of that size (default 1920×1080).
use memscape_lod::resolve::accumulate;
use memscape_lod::source::palette_color;
use memscape_lod::trace_source::{TraceBlocks, TraceFile};
use memscape_lod::{LodView, PixelSums};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = std::path::PathBuf::from(&args[0]);
    let reps: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(3);
    let zoom: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let file = TraceFile::open(&path)?;
    let index = memscape_lod::LodIndex::open(&memscape_lod::sidecar::index_path(&path, "thread"))?;
    let color = |t: u32, _s: u32, _z: u64, _l: u64| (palette_color(t), 0.0f32);
    let axis = index.meta.axis.clone();
    let source = TraceBlocks {
        columns: file.columns(),
        axis: &axis,
        color: &color,
        index: &index,
    };
    let te = file.trace.meta.events;
    let ye = axis.extent;
    let [w, h] = std::env::var("LOD_PROF_SIZE")
        .ok()
        .and_then(|s| {
            let (w, h) = s.split_once('x')?;
            Some([w.parse::<u32>().ok()?, h.parse::<u32>().ok()?])
        })
        .unwrap_or([1920, 1080]);
    let mut v = LodView::fit(
        te / 2 - te / zoom / 2,
        te / 2 + te / zoom / 2,
        ye / 2 - ye / zoom / 2,
        ye / 2 + ye / zoom / 2,
        w,
        h,
    );
    if let Some(alpha) = std::env::var("LOD_PROF_ALPHA")
        .ok()
        .and_then(|s| s.parse::<f32>().ok())
    {
        v.alpha = alpha;
        v.cushion = memscape_eq1::Cushion::Parabolic;
    }
    let cpu = || {
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
        let rest = stat.rsplit(')').next().unwrap_or("").to_owned();
        // utime and stime (fields 14 and 15) are the 12th and 13th after the name, whose first
        // (the state) is not a number: keep every field, or they shift.
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        (ticks(11) + ticks(12)) / 100.0
    };
    for _ in 0..reps {
        let c0 = cpu();
        let s = std::time::Instant::now();
        let mut sums = PixelSums::new(w, h);
        let st = accumulate(&index, &source, &v, &mut sums);
        let img = sums.resolve(&v);
        let hash = sums
            .acc
            .iter()
            .flatten()
            .chain(&sums.cov)
            .fold(0xcbf2_9ce4_8422_2325u64, |h, x| {
                (h ^ u64::from(x.to_bits())).wrapping_mul(0x0100_0000_01b3)
            });
        eprintln!(
            "wall {:.2?} cpu {:.2} s {:?} {} sums {hash:016x}",
            s.elapsed(),
            cpu() - c0,
            st,
            img.len()
        );
    }
    // The heap-size curve of the same time window at the frame's width, from the index.
    let s = std::time::Instant::now();
    let curve = index.heap_curve([te / 2 - te / zoom / 2, te / 2 + te / zoom / 2], 1920);
    eprintln!(
        "heap-size curve, 1920 columns: {:.2?}, peak in view {} B",
        s.elapsed(),
        curve.iter().map(|c| c.max).max().unwrap_or(0)
    );
    Ok(())
}
