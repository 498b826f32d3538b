//! Every process image of a recording into one trace: processes ordered by start, events
//! merged by CLOCK_MONOTONIC time (each image keeping its own sequence order), each process
//! its own address space, threads and call stacks of their process, the process table with
//! how each image ended.

use std::collections::HashMap;

use memscape_trace::model::Module;
use memscape_trace::{Trace, TraceBuilder};

use crate::launch::Reaped;
use crate::raw::RawProcess;
use crate::stream::{Converter, Feed, Header};
use crate::{ProcessReport, UnrecordedProgram};

/// One process image's file: the pid's `n`-th image (0: the first; exec makes the next;
/// `merge` renumbers them by start time).
pub(crate) struct Image {
    pub(crate) raw: RawProcess,
    pub(crate) n: u32,
}

/// What the launcher knows beyond the files.
#[derive(Default)]
pub(crate) struct Endings {
    /// Processes the launcher reaped.
    pub(crate) reaped: HashMap<u32, Reaped>,
    /// Processes still running when the recording ended.
    pub(crate) still_running: Vec<u32>,
}

/// Module mappings of one image (union of its maps snapshots; later ones win).
pub(crate) struct Mapping {
    pub(crate) start: u64,
    pub(crate) end: u64,
    /// Address of file offset 0 (what addr2line offsets are relative to).
    pub(crate) bias: u64,
    pub(crate) module: u32,
}

/// Reads an image's maps snapshots into `builder` (modules) and returns its mappings.
/// `complete`: the snapshots are whole (else a last line without its newline, still being
/// written, is left for later).
pub(crate) fn mappings_of(
    builder: &mut TraceBuilder,
    maps: &[String],
    elf_types: &mut HashMap<String, bool>,
    complete: bool,
) -> Vec<Mapping> {
    let mut mappings: Vec<Mapping> = Vec::new();
    for snapshot in maps {
        let snapshot = match snapshot.rfind('\n') {
            _ if complete => snapshot.as_str(),
            Some(end) => &snapshot[..end],
            None => "",
        };
        let mut lowest: HashMap<&str, (u64, u64)> = HashMap::new();
        for line in snapshot.lines() {
            let Some(m) = parse_maps_line(line) else {
                continue;
            };
            let e = lowest.entry(m.3).or_insert((m.0, m.2));
            if m.0 < e.0 {
                *e = (m.0, m.2);
            }
        }
        for line in snapshot.lines() {
            let Some((start, end, _, path)) = parse_maps_line(line) else {
                continue;
            };
            let (low, low_off) = lowest.get(path).copied().unwrap_or((start, 0));
            let is_exec_type = *elf_types
                .entry(path.to_owned())
                .or_insert_with(|| is_et_exec(path));
            let bias = if is_exec_type {
                0
            } else {
                low.saturating_sub(low_off)
            };
            let module = builder.strings.intern(path);
            mappings.retain(|m| m.end <= start || m.start >= end);
            mappings.push(Mapping {
                start,
                end,
                bias,
                module,
            });
            if !builder
                .modules
                .iter()
                .any(|m| m.path == path && m.start == start)
            {
                builder.modules.push(Module {
                    path: path.to_owned(),
                    base: bias,
                    start,
                    end,
                });
            }
        }
    }
    mappings.sort_by_key(|m| m.start);
    mappings
}

/// Merges the images into one trace (see `stream.rs`: the same merge, fed whole images).
/// Returns it with one report per image, in the trace's process order.
pub(crate) fn merge(
    source: &str,
    images: Vec<Image>,
    launcher: &Endings,
) -> (Trace, Vec<ProcessReport>, Vec<UnrecordedProgram>) {
    let mut converter = Converter::new(source, None);
    let headers = images
        .iter()
        .map(|i| Header {
            // Times are CLOCK_MONOTONIC ns already (`RawReader::finish`).
            tsc_clock: false,
            ..Header::of(&i.raw, i.n)
        })
        .collect();
    let index = converter.add_images(headers);
    let now = std::time::Instant::now();
    for (image, i) in images.into_iter().zip(index) {
        let raw = image.raw;
        let feed = Feed {
            events: raw.events,
            stacks: raw.stacks,
            clock_pairs: Vec::new(),
            maps: Some(raw.maps),
            thread_names: raw.thread_names,
            pool_names: raw.pool_names,
            unrecorded: Some(raw.unrecorded),
        };
        converter.feed(i, feed, now, true, false);
    }
    converter.finish(launcher)
}

/// `start-end perms offset dev inode path` → (start, end, offset, path) for file mappings.
fn parse_maps_line(line: &str) -> Option<(u64, u64, u64, &str)> {
    let mut fields = line.splitn(6, ' ');
    let range = fields.next()?;
    let _perms = fields.next()?;
    let offset = u64::from_str_radix(fields.next()?, 16).ok()?;
    let _dev = fields.next()?;
    let _inode = fields.next()?;
    let path = fields.next()?.trim_start();
    if !path.starts_with('/') {
        return None;
    }
    let (s, e) = range.split_once('-')?;
    Some((
        u64::from_str_radix(s, 16).ok()?,
        u64::from_str_radix(e, 16).ok()?,
        offset,
        path,
    ))
}

/// Whether the ELF file is a fixed-address executable (ET_EXEC): its addresses are absolute.
/// Only regular files are opened: a mapping's path comes from the raw recording, and opening a
/// FIFO there would block, a device never end.
pub(crate) fn is_et_exec(path: &str) -> bool {
    use std::io::Read;
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut head = [0u8; 18];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| {
            head.starts_with(b"\x7fELF") && u16::from_le_bytes([head[16], head[17]]) == 2
        })
}

#[cfg(test)]
mod tests {
    use super::is_et_exec;

    #[test]
    fn only_regular_files_are_read_for_their_elf_type() {
        let dir = std::env::temp_dir().join(format!("memscape-et-exec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // Opening the FIFO for reading would block with no writer: it must not be opened.
        assert!(!is_et_exec(fifo.to_str().unwrap()));
        assert!(!is_et_exec("/dev/zero"));
        assert!(!is_et_exec(dir.to_str().unwrap()));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
