//! Builds (or reuses) the index beside a trace and reports its size and time.
//!
//! `lod-build TRACE [--force] [--cells-per-block X] [--scale-cells-per-block X]
//! [--scale-from-cells X] [--lines A,B,…] [--thin-lines A,B,…]` (`BuildParams`'
//! `max_cells_per_block`, `scale_cells_per_block`, `scale_from_cells`, `lines` and
//! `thin_lines`, to try other levels; the index is then rebuilt; `--thin-lines ''`: none;
//! wave 32 measured the thin budget at 50 M and 100 M events with `--scale-from-cells 2097152`).
use std::sync::atomic::AtomicBool;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::path::PathBuf::from(std::env::args().nth(1).ok_or("usage: lod-build TRACE")?);
    let args: Vec<String> = std::env::args().collect();
    let mut params = memscape_lod::BuildParams::default();
    if let Some(i) = args.iter().position(|a| a == "--cells-per-block") {
        params.max_cells_per_block = args
            .get(i + 1)
            .ok_or("--cells-per-block needs a number")?
            .parse()?;
    }
    if let Some(i) = args.iter().position(|a| a == "--scale-cells-per-block") {
        params.scale_cells_per_block = args
            .get(i + 1)
            .ok_or("--scale-cells-per-block needs a number")?
            .parse()?;
    }
    if let Some(i) = args.iter().position(|a| a == "--scale-from-cells") {
        params.scale_from_cells = args
            .get(i + 1)
            .ok_or("--scale-from-cells needs a number")?
            .parse()?;
    }
    if let Some(i) = args.iter().position(|a| a == "--thin-lines") {
        params.thin_lines = args
            .get(i + 1)
            .ok_or("--thin-lines needs a list such as -6,2 (or '')")?
            .split(',')
            .filter(|v| !v.is_empty())
            .map(str::parse)
            .collect::<Result<_, _>>()?;
    }
    if let Some(i) = args.iter().position(|a| a == "--lines") {
        params.lines = args
            .get(i + 1)
            .ok_or("--lines needs a list such as -8,-6,0,2")?
            .split(',')
            .map(str::parse)
            .collect::<Result<_, _>>()?;
    }
    let force = args.iter().any(|a| {
        [
            "--force",
            "--cells-per-block",
            "--scale-cells-per-block",
            "--scale-from-cells",
            "--lines",
            "--thin-lines",
        ]
        .contains(&a.as_str())
    });
    let start = std::time::Instant::now();
    let file = memscape_lod::trace_source::TraceFile::open(&path)?;
    eprintln!(
        "opened in {:.2?} (mapped: {})",
        start.elapsed(),
        file.is_mapped()
    );
    let out = memscape_lod::sidecar::index_path(&path, "thread");
    let n = file.columns().len() as u64;
    if !force
        && memscape_lod::sidecar::open_current(&out, &path, file.trace.meta.events, n, "thread")
            .is_some()
    {
        eprintln!("index current: {}", out.display());
        return Ok(());
    }
    let color =
        |t: u32, _s: u32, _z: u64, _l: u64| (memscape_lod::source::palette_color(t), 0.0f32);
    let mut last = (0u8, -1i64);
    let meta = memscape_lod::sidecar::build(
        &file,
        &path,
        &out,
        memscape_lod::sidecar::Coloring {
            name: "thread",
            color: &color,
        },
        &params,
        &mut |pass, f| {
            let pct = (f * 100.0) as i64;
            if (pass, pct / 10) != (last.0, last.1 / 10) {
                last = (pass, pct);
                eprintln!("pass {pass}: {pct:3} % {:.1?}", start.elapsed());
            }
        },
        &AtomicBool::new(false),
    )?;
    let len = std::fs::metadata(&out)?.len();
    let copied: u64 = meta.classes.iter().map(|c| c.blocks.len / 40).sum();
    eprintln!(
        "{}: {} levels, {:.1} MB = {:.1} B/block, {} blocks copied ({:.1} %), built in {:.1?}",
        out.display(),
        meta.levels.len(),
        len as f64 / 1e6,
        len as f64 / n.max(1) as f64,
        copied,
        copied as f64 / n.max(1) as f64 * 100.0,
        start.elapsed()
    );
    Ok(())
}
