//! Fraction of blocks living longer than a pixel column of a 1920-wide full view.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::path::PathBuf::from(std::env::args().nth(1).ok_or("usage: lifetimes TRACE")?);
    let f = memscape_lod::trace_source::TraceFile::open(&path)?;
    let c = f.columns();
    let t = f.trace.meta.events.max(1);
    for cols in [1920u64, 1920 * 4, 1920 * 16, 1920 * 64] {
        let pw = t / cols;
        let long = (0..c.len())
            .filter(|&i| c.free_event[i] - c.alloc_event[i] >= pw)
            .count();
        println!(
            "{cols} columns (pw {pw} events): {long} of {} blocks ({:.2} %) live ≥ a column",
            c.len(),
            long as f64 / c.len() as f64 * 100.0
        );
    }
    Ok(())
}
