//! DHAT's JSON (`valgrind --tool=dhat`, `dhat.out.<pid>`; and the `dhat` crate for Rust,
//! `dhat-heap.json`), file version 2:
//!
//! ```text
//! { "dhatFileVersion": 2, "mode": "heap" | "rust-heap" | "copy" | "ad-hoc",
//!   "bklt": <block lifetimes recorded>, "bkacc": <block accesses recorded>,
//!   "tu": "instrs" | "µs", "cmd": …, "pid": …, "te": <end time>, "tg": <time of global max>,
//!   "pps": [ { "tb": total bytes, "tbk": total blocks, "tl": total lifetimes,
//!              "mb"/"mbk": max live bytes/blocks, "gb"/"gbk": at the global max,
//!              "eb"/"ebk": at the end, "rb"/"wb": bytes read/written, "acc": […],
//!              "fs": [frame-table indices, allocation point first] } … ],
//!   "ftbl": [ "[root]", "0x109156: never_read (t.c:4)", "0x48417B4: malloc (in /lib/….so)", … ] }
//! ```
//!
//! Each program point is one sample; its values are the sample types below (those the mode
//! records): `total_bytes`/`total_blocks`, `at_gmax_*`, `at_end_*`, `max_*`, `reads_bytes`,
//! `writes_bytes`, `lifetime` (summed block lifetimes in the file's time unit) and
//! `never_read_bytes`/`never_read_blocks` (the totals of points whose blocks were never read:
//! DHAT's "allocated but never read"). The allocator's frames (`malloc`, `operator new`, …)
//! are pruned as in pprof's heap profiles.

use memscape_io::{Location as At, Warnings};
use serde::Deserialize;

use super::{Frame, Frames, ProfileError, ProfileFormat, Sample, StackProfile, heap_text, prune};

#[derive(Deserialize)]
struct DhatFile {
    #[serde(rename = "dhatFileVersion")]
    version: u32,
    #[serde(default)]
    bklt: bool,
    #[serde(default)]
    bkacc: bool,
    #[serde(default)]
    tu: String,
    #[serde(default)]
    cmd: String,
    pps: Vec<ProgramPoint>,
    ftbl: Vec<String>,
}

#[derive(Deserialize)]
struct ProgramPoint {
    tb: u64,
    tbk: u64,
    tl: Option<u64>,
    mb: Option<u64>,
    mbk: Option<u64>,
    gb: Option<u64>,
    gbk: Option<u64>,
    eb: Option<u64>,
    ebk: Option<u64>,
    rb: Option<u64>,
    wb: Option<u64>,
    fs: Vec<usize>,
}

/// The DHAT versions this reader knows.
const VERSIONS: std::ops::RangeInclusive<u32> = 1..=2;

/// `0x109156: never_read (t.c:4)`, `0x48417B4: malloc (in /lib/x.so)`, `[root]`.
fn parse_frame(text: &str) -> Frame {
    let (address, rest) = match text.split_once(": ") {
        Some((a, r)) if a.starts_with("0x") => (
            u64::from_str_radix(a.trim_start_matches("0x"), 16).unwrap_or(0),
            r,
        ),
        _ => (0, text),
    };
    let (function, place) = match rest.strip_suffix(')').and_then(|r| r.rsplit_once(" (")) {
        Some((f, p)) => (f, p),
        None => (rest, ""),
    };
    let mut frame = Frame {
        function: if function == "???" {
            String::new()
        } else {
            function.to_owned()
        },
        address,
        ..Frame::default()
    };
    if let Some(module) = place.strip_prefix("in ") {
        frame.module = module.to_owned();
    } else if !place.is_empty() {
        // `file:line` or `file:line:column` (dhat-rs).
        let mut parts = place.splitn(2, ':');
        frame.file = parts.next().unwrap_or("").to_owned();
    }
    if !frame.function.is_empty() {
        // One node per function: the address and module only tell unnamed frames apart.
        frame.address = 0;
        frame.module.clear();
    }
    frame
}

/// Parses DHAT JSON.
pub fn parse(name: &str, bytes: &[u8]) -> Result<StackProfile, ProfileError> {
    let file: DhatFile = serde_json::from_slice(bytes).map_err(|e| ProfileError::Malformed {
        at: At::line(name, e.line() as u64),
        message: format!("not DHAT JSON: {e}"),
    })?;
    let mut warnings = Warnings::new();
    if !VERSIONS.contains(&file.version) {
        warnings.add(
            "unknown_version",
            format!(
                "dhatFileVersion {} (this reader knows {}–{}); read as version 2",
                file.version,
                VERSIONS.start(),
                VERSIONS.end()
            ),
            At::line(name, 1),
        );
    }
    let lifetimes = file.bklt;
    let accesses = file.bkacc;
    let mut types: Vec<(&str, &str)> = vec![("total_bytes", "bytes"), ("total_blocks", "count")];
    if lifetimes {
        types.extend([
            ("at_gmax_bytes", "bytes"),
            ("at_gmax_blocks", "count"),
            ("at_end_bytes", "bytes"),
            ("at_end_blocks", "count"),
            ("max_bytes", "bytes"),
            ("max_blocks", "count"),
        ]);
    }
    if accesses {
        types.extend([
            ("reads_bytes", "bytes"),
            ("writes_bytes", "bytes"),
            ("never_read_bytes", "bytes"),
            ("never_read_blocks", "count"),
        ]);
    }
    let time_unit = if file.tu.is_empty() {
        "instrs"
    } else {
        &file.tu
    };
    if lifetimes {
        types.push(("lifetime", time_unit));
    }

    let mut frames = Frames::default();
    let table: Vec<(u32, String)> = file
        .ftbl
        .iter()
        .map(|t| {
            let frame = parse_frame(t);
            let name = frame.function.clone();
            (frames.intern(frame), name)
        })
        .collect();
    let drop = regex::Regex::new(&format!("^(?:{})$", heap_text::ALLOCATOR_FRAMES)).ok();
    let mut samples = Vec::with_capacity(file.pps.len());
    for (i, pp) in file.pps.iter().enumerate() {
        let mut stack: Vec<(u32, &str)> = Vec::with_capacity(pp.fs.len());
        for &f in &pp.fs {
            match table.get(f) {
                Some((frame, name)) => stack.push((*frame, name.as_str())),
                None => warnings.add(
                    "unknown_frame",
                    format!(
                        "program point {i} names frame {f}; the frame table has {}",
                        table.len()
                    ),
                    At::line(name, 1),
                ),
            }
        }
        if let Some(drop) = &drop {
            prune(&mut stack, drop, None);
        }
        let v = |x: Option<u64>| x.unwrap_or(0);
        let mut values = vec![pp.tb, pp.tbk];
        if lifetimes {
            values.extend([
                v(pp.gb),
                v(pp.gbk),
                v(pp.eb),
                v(pp.ebk),
                v(pp.mb),
                v(pp.mbk),
            ]);
        }
        if accesses {
            let never_read = pp.rb == Some(0);
            values.extend([
                v(pp.rb),
                v(pp.wb),
                if never_read { pp.tb } else { 0 },
                if never_read { pp.tbk } else { 0 },
            ]);
        }
        if lifetimes {
            values.push(v(pp.tl));
        }
        samples.push(Sample {
            stack: stack.into_iter().map(|(f, _)| f).collect(),
            values,
        });
    }
    let mut profile = StackProfile::single(
        name,
        ProfileFormat::Dhat,
        &types,
        0,
        frames,
        samples,
        warnings,
    );
    if !file.cmd.is_empty() {
        profile.source = format!("{name} ({})", file.cmd);
    }
    Ok(profile)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_as_valgrind_and_dhat_rs_write_them() {
        let f = parse_frame("0x109156: never_read (t.c:4)");
        assert_eq!(
            (f.function.as_str(), f.file.as_str()),
            ("never_read", "t.c")
        );
        let f = parse_frame("0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_dhat.so)");
        assert_eq!(f.function, "malloc");
        let f = parse_frame("0x4001: ??? (in /lib/libx.so)");
        assert_eq!((f.address, f.module.as_str()), (0x4001, "/lib/libx.so"));
        let f = parse_frame("0x55b1: alloc::vec::Vec<T>::push (src/vec.rs:1823:13)");
        assert_eq!(
            (f.function.as_str(), f.file.as_str()),
            ("alloc::vec::Vec<T>::push", "src/vec.rs")
        );
    }
}
