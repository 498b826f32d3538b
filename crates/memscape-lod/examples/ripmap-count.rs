//! Counts nonempty cells of every (time level, address level) pair of a rip-map.
use memscape_lod::source::{Coloring, blocks_from_trace};
use memscape_lod::synth::{SynthParams, trace};
use std::collections::HashSet;

fn main() {
    let events: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(4_000_000);
    let t = trace(SynthParams::new(events, 11));
    let (blocks, axis) = blocks_from_trace(&t, Coloring::Thread);
    let lt = 64 - (t.meta.events.max(2) - 1).leading_zeros() as i32;
    let ly = 64 - (axis.extent.max(2) - 1).leading_zeros() as i32;
    println!("blocks {} log_t {lt} log_y {ly}", blocks.len());
    let mut total = 0usize;
    let mut kept = 0usize;
    let mut kept_levels = 0usize;
    let d0 = ly - lt;
    for kt in 0..=lt {
        let mut line = String::new();
        for ky in 0..=ly {
            let tau = 1u64 << (lt - kt);
            let sig = 1u64 << (ly - ky);
            let mut set = HashSet::new();
            let mut inc = 0usize;
            for b in &blocks {
                if b.width() >= tau || b.size >= sig {
                    continue;
                }
                inc += 1;
                set.insert(((b.t0 + b.width() / 2) / tau, (b.y + b.size / 2) / sig));
            }
            total += set.len();
            let m: usize = std::env::var("M")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(2);
            let step: i32 = std::env::var("STEP")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(1);
            if kt <= ky - d0 + 1 && inc >= m * set.len() && !set.is_empty() && (ky - kt) % step == 0
            {
                kept += set.len();
                kept_levels += 1;
            }
            line += &format!("{:>7}", set.len());
        }
        println!("kt {kt:2}: {line}");
    }
    println!(
        "total {total} = {:.2} per block",
        total as f64 / blocks.len() as f64
    );
    println!(
        "kept {kept} cells in {kept_levels} levels = {:.2} per block",
        kept as f64 / blocks.len() as f64
    );
}
