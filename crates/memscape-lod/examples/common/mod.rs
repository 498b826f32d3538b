//! The preamble the debugging examples share: a generated trace of `events` events with its
//! index (coloured by thread) built in a temporary directory.
// Each example uses a part of it.
#![allow(dead_code)]

use std::sync::atomic::AtomicBool;

use memscape_lod::LodIndex;
use memscape_lod::source::palette_color;
use memscape_lod::synth::{SynthParams, trace};
use memscape_lod::trace_source::TraceFile;

/// This process's CPU time (user + system) in seconds, from /proc/self/stat.
pub fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// Colour by thread, as the generated index is built.
pub fn thread_color(t: u32, _s: u32, _z: u64, _l: u64) -> (u32, f32) {
    (palette_color(t), 0.0)
}

/// A generated trace, its index and the directory that holds the index (bind it to keep it).
pub struct Indexed {
    pub file: TraceFile,
    pub index: LodIndex,
    pub dir: tempfile::TempDir,
}

/// The command line's numbers: argument `i`, or `default` when missing or unreadable.
pub fn arg(args: &[String], i: usize, default: f64) -> f64 {
    args.get(i).and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// Generates a trace of `events` events (seed 11) and builds its index.
pub fn indexed_synth(events: u64) -> Result<Indexed, Box<dyn std::error::Error>> {
    let file = TraceFile::from_trace(trace(SynthParams::new(events, 11)));
    let dir = tempfile::tempdir()?;
    let tp = dir.path().join("t");
    std::fs::write(&tp, b"x")?;
    let out = dir.path().join("t.lod");
    memscape_lod::sidecar::build(
        &file,
        &tp,
        &out,
        memscape_lod::sidecar::Coloring {
            name: "thread",
            color: &thread_color,
        },
        &Default::default(),
        &mut |_, _| {},
        &AtomicBool::new(false),
    )?;
    let index = LodIndex::open(&out)?;
    Ok(Indexed { file, index, dir })
}
