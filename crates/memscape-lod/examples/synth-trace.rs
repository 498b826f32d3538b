//! Writes a generated trace as a mappable `.msc`, streaming (benches/scale/gen.sh).
//!
//! `synth-trace OUT.msc EVENTS [SEED]`
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(out), Some(events)) = (args.next(), args.next()) else {
        eprintln!("usage: synth-trace OUT.msc EVENTS [SEED]");
        std::process::exit(2);
    };
    let events: u64 = events.replace('_', "").parse()?;
    let seed: u64 = args.next().map_or(Ok(1), |s| s.parse())?;
    let start = std::time::Instant::now();
    let mut last = -1i64;
    let meta = memscape_lod::synth::write_mappable(
        memscape_lod::synth::SynthParams::new(events, seed),
        std::path::Path::new(&out),
        &mut |f| {
            let pct = (f * 100.0) as i64;
            if pct / 10 != last / 10 {
                last = pct;
                eprintln!("{pct:3} % {:.1?}", start.elapsed());
            }
        },
    )?;
    eprintln!(
        "{out}: {} events, {} blocks, peak {} B live, written in {:.1?}",
        meta.events,
        meta.allocs,
        meta.peak_live_bytes,
        start.elapsed()
    );
    Ok(())
}
