//! CPU time read from `/proc` for this crate's cost examples (each includes this file with
//! `#[path]`): the machine is shared, so wall time would measure the other work too.

/// CPU milliseconds (user and system; 10 ms ticks) from a `/proc/…/stat` file:
/// `/proc/self/stat` for the whole process, `/proc/thread-self/stat` for the calling thread.
/// 0 where it cannot be read.
pub fn cpu_ms(stat_file: &str) -> f64 {
    let stat = std::fs::read_to_string(stat_file).unwrap_or_default();
    // Fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<f64> = after
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|v| v.parse().ok())
        .collect();
    f.iter().sum::<f64>() * 10.0
}
