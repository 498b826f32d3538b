//! heaptrack's two text formats.
//!
//! **Raw** (`heaptrack -r`, what `libheaptrack` writes before `heaptrack_interpret`): one event per
//! line, numbers in hexadecimal without prefix.
//!
//! | line | meaning |
//! |---|---|
//! | `v <heaptrack version> <file version>` | file version ≥ 3: strings are `<hex length> <bytes>` |
//! | `x <string>` | executable path |
//! | `X <rest of line>` | command line |
//! | `I <page size> <physical pages>` | system info |
//! | `m <string> <load address> (<vaddr> <memsize>)*` | module mapping; `m -` clears, `m x` is the executable |
//! | `t <ip> <parent trace>` | call-stack node; the n-th `t` line is trace n (0 is the root) |
//! | `+ <size> <trace> <pointer>` | allocation |
//! | `- <pointer>` | free (realloc is written as `-` then `+`) |
//! | `c <ms since start>` | time tick (every 10 ms) |
//! | `R <rss pages>`, `A`, `S …`, `# …` | ignored |
//!
//! **Processed** (`heaptrack_interpret`'s output, the default `heaptrack.*.gz`): no addresses.
//!
//! | line | meaning |
//! |---|---|
//! | `s <string>` | interned string, numbered from 1 |
//! | `i <ip> <module> [<function> [<file> <line> (<function> <file> <line>)*]]` | instruction pointer, numbered from 1; fields are string numbers |
//! | `t <ip number> <parent trace>` | call-stack node, numbered from 1 |
//! | `a <size> <trace>` | allocation info, numbered from 0 |
//! | `+ <allocation info>` / `- <allocation info>` | allocation / free of one block with that info |
//! | `v`, `X`, `I`, `c`, `R`, `A`, `#` | as in raw |
//!
//! A processed `-` names an allocation info, not a block: heaptrack treats blocks with the same
//! info as interchangeable, and so do we (the most recent live one is freed).

use std::collections::HashMap;

use crate::builder::TraceBuilder;
use crate::model::{Frame, Module, Trace, TraceFormat, USABLE_UNKNOWN};
use crate::text::{Fields, LineParser, hex_until, lossy, strip_eol};
use crate::warn;

const NS_PER_MS: u64 = 1_000_000;

/// Parser for heaptrack raw files.
pub(crate) struct RawParser {
    b: TraceBuilder,
    sized_strings: bool,
    exe: String,
    /// Traces (`t` lines) seen so far; trace n is call-tree node n.
    traces: u64,
}

impl RawParser {
    pub(crate) fn new(source: &str) -> Self {
        Self {
            b: TraceBuilder::with_ticks(source),
            sized_strings: false,
            exe: String::new(),
            traces: 0,
        }
    }

    pub(crate) fn finish(mut self) -> Trace {
        resolve_modules(&mut self.b);
        self.b.finish(TraceFormat::HeaptrackRaw, true)
    }

    fn text(&mut self, bytes: &[u8], line: u64) -> String {
        let (s, replaced) = lossy(bytes);
        let s = s.into_owned();
        if replaced {
            self.b.warn(warn::NON_UTF8, line);
        }
        s
    }

    fn on_alloc(&mut self, number: u64, size: u64, trace: u64, ptr: u64) {
        let site = u32::try_from(trace)
            .ok()
            .filter(|&t| u64::from(t) <= self.traces)
            .unwrap_or_else(|| {
                self.b.warn(warn::BAD_REFERENCE, number);
                0
            });
        self.b.alloc(number, 0, ptr, size, USABLE_UNKNOWN, 0, site);
    }

    /// The common lines in their canonical spelling (`+ size trace pointer\n`, `- pointer\n`:
    /// single spaces, 1–16 hex digits, nothing after the last field), parsed in one pass
    /// without splitting the line first. Returns the length of the line with its `\n`, or
    /// `None` for anything else, which then goes through [`RawParser::parse`] (with the same
    /// result for the lines accepted here).
    #[inline]
    fn fast_line(&mut self, number: u64, line: &[u8]) -> Option<usize> {
        match line {
            [b'+', b' ', ..] => {
                let (size, at) = hex_until(line, 2, b' ')?;
                let (trace, at) = hex_until(line, at, b' ')?;
                let (ptr, at) = hex_until(line, at, b'\n')?;
                self.on_alloc(number, size, trace, ptr);
                Some(at)
            }
            [b'-', b' ', ..] => {
                let (ptr, at) = hex_until(line, 2, b'\n')?;
                self.b.free(number, 0, ptr);
                Some(at)
            }
            _ => None,
        }
    }

    fn parse(&mut self, number: u64, line: &[u8]) -> Option<()> {
        let (&mode, rest) = line.split_first()?;
        if !rest.is_empty() && rest[0] != b' ' {
            return None;
        }
        let mut f = Fields::new(rest);
        match mode {
            b'+' => {
                let size = f.hex()?;
                let trace = f.hex()?;
                let ptr = f.hex()?;
                self.on_alloc(number, size, trace, ptr);
            }
            b'-' => {
                let ptr = f.hex()?;
                self.b.free(number, 0, ptr);
            }
            b't' => {
                let ip = f.hex()?;
                let parent = f.hex()?;
                self.traces += 1;
                let parent = match u32::try_from(parent) {
                    Ok(p) if u64::from(p) < self.traces => p,
                    _ => {
                        self.b.warn(warn::BAD_REFERENCE, number);
                        0
                    }
                };
                self.b.call_tree.push_raw(
                    parent,
                    Frame {
                        ip,
                        ..Frame::default()
                    },
                );
            }
            b'c' => {
                let ms = f.hex()?;
                self.b.tick(ms.saturating_mul(NS_PER_MS), number);
            }
            b'm' => {
                let path = f.string(self.sized_strings)?;
                if path == b"-" {
                    return Some(());
                }
                let path = if path == b"x" {
                    self.exe.clone()
                } else {
                    self.text(path, number)
                };
                let base = f.hex()?;
                while let Some(vaddr) = f.hex() {
                    let size = f.hex()?;
                    let start = base.saturating_add(vaddr);
                    self.b.modules.push(Module {
                        path: path.clone(),
                        base,
                        start,
                        end: start.saturating_add(size),
                    });
                }
                if !f.is_empty() {
                    return None;
                }
            }
            b'v' => {
                let _heaptrack_version = f.hex()?;
                let file_version = f.hex()?;
                self.sized_strings = file_version >= 3;
            }
            b'x' => {
                let path = f.string(self.sized_strings)?;
                self.exe = self.text(path, number);
            }
            b'X' => {
                let cmd = f.rest();
                self.b.command_line = self.text(cmd, number);
            }
            b'I' => {
                self.b.page_size = f.hex()?;
            }
            b'R' | b'A' | b'S' | b'#' => {}
            _ => return None,
        }
        Some(())
    }
}

impl LineParser for RawParser {
    fn lines(&mut self, first: u64, data: &[u8]) -> u64 {
        let mut number = first;
        let mut rest = data;
        while !rest.is_empty() {
            let len = match self.fast_line(number, rest) {
                Some(len) => len,
                None => {
                    let len = rest
                        .iter()
                        .position(|&b| b == b'\n')
                        .map_or(rest.len(), |i| i + 1);
                    self.line(number, strip_eol(&rest[..len]));
                    len
                }
            };
            rest = &rest[len..];
            number += 1;
        }
        number - first
    }

    fn line(&mut self, number: u64, line: &[u8]) {
        if line.is_empty() {
            return;
        }
        if self.parse(number, line).is_none() {
            let kind = if std::str::from_utf8(line).is_err() {
                warn::NON_UTF8
            } else {
                warn::MALFORMED_LINE
            };
            self.b.warn(kind, number);
        }
    }

    fn truncated(&mut self, number: u64, _partial: &[u8]) {
        // heaptrack ends every line with '\n': a partial last line may have lost digits, so it
        // is not trusted.
        self.b.warn(warn::TRUNCATED, number);
    }
}

/// Fills in module and module offset of every frame from the recorded mappings.
fn resolve_modules(b: &mut TraceBuilder) {
    let mut ranges: Vec<(u64, u64, usize)> = b
        .modules
        .iter()
        .enumerate()
        .map(|(i, m)| (m.start, m.end, i))
        .collect();
    ranges.sort_unstable();
    let mut module_ids = HashMap::new();
    for n in 1..b.call_tree.frames.len() {
        let ip = b.call_tree.frames[n].ip;
        let k = ranges.partition_point(|&(start, _, _)| start <= ip);
        if k == 0 {
            continue;
        }
        let (_, end, i) = ranges[k - 1];
        if ip >= end {
            continue;
        }
        let module = &b.modules[i];
        let id = *module_ids
            .entry(i)
            .or_insert_with(|| b.strings.intern(&module.path));
        let frame = &mut b.call_tree.frames[n];
        frame.module = id;
        frame.module_offset = ip - module.base;
    }
}

/// Parser for heaptrack processed files.
pub(crate) struct ProcessedParser {
    b: TraceBuilder,
    sized_strings: bool,
    /// File string number - 1 → our string id.
    strings: Vec<u32>,
    /// File ip number - 1 → frame.
    ips: Vec<Frame>,
    /// Allocation infos: (size, trace).
    infos: Vec<(u64, u32)>,
    /// Live blocks per allocation info, most recent last.
    live: HashMap<u64, Vec<u32>>,
}

impl ProcessedParser {
    pub(crate) fn new(source: &str) -> Self {
        Self {
            b: TraceBuilder::with_ticks(source).without_addresses(),
            sized_strings: false,
            strings: Vec::new(),
            ips: Vec::new(),
            infos: Vec::new(),
            live: HashMap::new(),
        }
    }

    pub(crate) fn finish(self) -> Trace {
        self.b.finish(TraceFormat::HeaptrackProcessed, false)
    }

    fn string_ref(&mut self, n: u64, line: u64) -> u32 {
        if n == 0 {
            return 0;
        }
        match usize::try_from(n - 1)
            .ok()
            .and_then(|i| self.strings.get(i))
        {
            Some(&id) => id,
            None => {
                self.b.warn(warn::BAD_REFERENCE, line);
                0
            }
        }
    }

    fn parse(&mut self, number: u64, line: &[u8]) -> Option<()> {
        let (&mode, rest) = line.split_first()?;
        if !rest.is_empty() && rest[0] != b' ' {
            return None;
        }
        let mut f = Fields::new(rest);
        match mode {
            b'+' => {
                let info = f.hex()?;
                let Some(&(size, trace)) =
                    usize::try_from(info).ok().and_then(|i| self.infos.get(i))
                else {
                    self.b.warn(warn::BAD_REFERENCE, number);
                    return Some(());
                };
                // No addresses: every block sits at 0 and the model says `has_addresses: false`.
                if let Some(block) = self.b.alloc(number, 0, 0, size, USABLE_UNKNOWN, 0, trace) {
                    self.live.entry(info).or_default().push(block);
                }
            }
            b'-' => {
                let info = f.hex()?;
                match self.live.get_mut(&info).and_then(Vec::pop) {
                    Some(block) => self.b.free_block(number, block),
                    None => self.b.unmatched_free(number),
                }
            }
            b'a' => {
                let size = f.hex()?;
                let trace = f.hex()?;
                let trace = match u32::try_from(trace) {
                    Ok(t) if (t as usize) < self.b.call_tree.len() => t,
                    _ => {
                        self.b.warn(warn::BAD_REFERENCE, number);
                        0
                    }
                };
                self.infos.push((size, trace));
            }
            b't' => {
                let ip = f.hex()?;
                let parent = f.hex()?;
                let frame = match usize::try_from(ip).ok().and_then(|i| i.checked_sub(1)) {
                    Some(i) if i < self.ips.len() => self.ips[i],
                    _ => {
                        self.b.warn(warn::BAD_REFERENCE, number);
                        Frame::default()
                    }
                };
                let parent = match u32::try_from(parent) {
                    Ok(p) if (p as usize) < self.b.call_tree.len() => p,
                    _ => {
                        self.b.warn(warn::BAD_REFERENCE, number);
                        0
                    }
                };
                self.b.call_tree.push_raw(parent, frame);
            }
            b'i' => {
                let ip = f.hex()?;
                let module = f.hex()?;
                let module = self.string_ref(module, number);
                let mut frame = Frame {
                    ip,
                    module,
                    ..Frame::default()
                };
                if let Some(function) = f.hex() {
                    frame.function = self.string_ref(function, number);
                    if let Some(file) = f.hex() {
                        frame.file = self.string_ref(file, number);
                        frame.line = u32::try_from(f.hex()?).unwrap_or(u32::MAX);
                        // Inlined frames (function file line)* follow; the model keeps the
                        // outermost frame only.
                    }
                }
                self.ips.push(frame);
            }
            b's' => {
                let s = f.string(self.sized_strings)?;
                let (text, replaced) = lossy(s);
                let id = self.b.strings.intern(&text);
                if replaced {
                    self.b.warn(warn::NON_UTF8, number);
                }
                self.strings.push(id);
            }
            b'c' => {
                let ms = f.hex()?;
                self.b.tick(ms.saturating_mul(NS_PER_MS), number);
            }
            b'v' => {
                let _heaptrack_version = f.hex()?;
                let file_version = f.hex()?;
                self.sized_strings = file_version >= 3;
            }
            b'X' => {
                let (cmd, replaced) = lossy(f.rest());
                self.b.command_line = cmd.into_owned();
                if replaced {
                    self.b.warn(warn::NON_UTF8, number);
                }
            }
            b'I' => {
                self.b.page_size = f.hex()?;
            }
            b'R' | b'A' | b'S' | b'#' => {}
            _ => return None,
        }
        Some(())
    }
}

impl LineParser for ProcessedParser {
    fn line(&mut self, number: u64, line: &[u8]) {
        if line.is_empty() {
            return;
        }
        if self.parse(number, line).is_none() {
            let kind = if std::str::from_utf8(line).is_err() {
                warn::NON_UTF8
            } else {
                warn::MALFORMED_LINE
            };
            self.b.warn(kind, number);
        }
    }

    fn truncated(&mut self, number: u64, _partial: &[u8]) {
        self.b.warn(warn::TRUNCATED, number);
    }
}

/// Which heaptrack format a file is, from its first lines; `None` if it is not heaptrack.
pub(crate) fn sniff(head: &[u8]) -> Option<TraceFormat> {
    let mut lines = memscape_io::numbered_lines(head).map(|(_, l)| l);
    let first = lines.find(|l| !l.is_empty())?;
    let mut f = Fields::new(first.strip_prefix(b"v ")?);
    f.hex()?;
    f.hex()?;
    for line in lines {
        match line.first() {
            Some(b'x' | b'm') => return Some(TraceFormat::HeaptrackRaw),
            Some(b's' | b'i' | b'a') => return Some(TraceFormat::HeaptrackProcessed),
            Some(b'+') => {
                // Raw allocations have three fields, processed ones one.
                let fields = line.split(|&b| b == b' ').filter(|t| !t.is_empty()).count();
                return Some(if fields >= 4 {
                    TraceFormat::HeaptrackRaw
                } else {
                    TraceFormat::HeaptrackProcessed
                });
            }
            _ => {}
        }
    }
    Some(TraceFormat::HeaptrackRaw)
}

/// Whether a raw `+` line parses (used by tests).
#[cfg(test)]
pub(crate) fn parse_alloc_fields(line: &[u8]) -> Option<(u64, u64, u64)> {
    let mut f = Fields::new(line.strip_prefix(b"+ ")?);
    Some((f.hex()?, f.hex()?, f.hex()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::parse_hex;

    #[test]
    fn sniff_tells_raw_from_processed() {
        assert_eq!(
            sniff(b"v 10400 3\nx 3 abc\n"),
            Some(TraceFormat::HeaptrackRaw)
        );
        assert_eq!(
            sniff(b"v 10000 2\nX ./david\ns foo\n"),
            Some(TraceFormat::HeaptrackProcessed)
        );
        assert_eq!(sniff(b"time,op,address\n"), None);
        assert_eq!(parse_alloc_fields(b"+ 10 1 7f00"), Some((16, 1, 0x7f00)));
        assert_eq!(parse_hex(b"7f00"), Some(0x7f00));
    }

    fn summary(t: &Trace) -> String {
        let b = &t.blocks;
        format!(
            "{:?}\n{:?} {:?} {:?} {:?} {:?} {:?} {:?}\n{}",
            t.meta,
            b.address,
            b.size,
            b.alloc_event,
            b.free_event,
            b.alloc_time_ns,
            b.site,
            b.flags,
            t.warnings
        )
    }

    proptest::proptest! {
        /// The fused fast path of `lines` loads what the general per-line parser loads, on
        /// canonical lines and on every variant it must leave to the general parser.
        #[test]
        fn fast_path_equals_general_parser(
            picks in proptest::collection::vec((0usize..16, 0u64..6), 1..80),
        ) {
            let mut text = String::from("v 10400 3\nx 3 abc\nt 1000 0\nt 2000 1\nc 0\n");
            for (kind, p) in picks {
                let ptr = 0x1000 + 0x40 * p;
                text.push_str(&match kind {
                    0..=4 => format!("+ {:x} {} {ptr:x}\n", 8 + p, p % 3),
                    5..=8 => format!("- {ptr:x}\n"),
                    9 => format!("+  10 1 {ptr:x}\n"),
                    10 => format!("+ 10\t1 {ptr:x}\r\n"),
                    11 => format!("- {ptr:x} trailing\n"),
                    12 => format!("+ 10 1 {ptr:x}0000000000000000\n"),
                    13 => format!("-{ptr:x}\n"),
                    14 => format!("c {:x}\n", 10 * p),
                    _ => format!("+ 10 9 {ptr:X}\n"),
                });
            }
            let mut fast = RawParser::new("t.raw");
            crate::text::feed_bytes(&mut fast, text.as_bytes());
            let mut general = RawParser::new("t.raw");
            for (number, line) in memscape_io::numbered_lines(text.as_bytes()) {
                general.line(number, line);
            }
            proptest::prop_assert_eq!(summary(&fast.finish()), summary(&general.finish()));
        }
    }
}
