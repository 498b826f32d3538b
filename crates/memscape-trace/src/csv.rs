//! CSV allocation traces, for any tool that can print its events.
//!
//! The first line is a header naming the columns, in any order:
//!
//! | column | required | content |
//! |---|---|---|
//! | `time` | yes | integer nanoseconds since the start (non-decreasing) |
//! | `op` | yes | `alloc`, `free` or `realloc` (case-insensitive) |
//! | `address` | yes | `0x`-prefixed hexadecimal or decimal; for `realloc` the new address |
//! | `size` | for `alloc`/`realloc` | decimal bytes requested; ignored for `free` |
//! | `thread` | no | any string |
//! | `site` | no | any string naming the call site |
//! | `old_address` | for `realloc` | the block being reallocated (`0` or empty: a plain alloc) |
//! | `usable_size` | no | decimal bytes actually reserved by the allocator |
//!
//! Read through [`memscape_io::csv_reader`]: RFC 4180 quoting (`""` inside quotes is a quote,
//! a quoted field may hold commas and newlines), lines starting with `#` skipped; fields are
//! trimmed of ASCII spaces. Other columns are ignored. `free` of address 0 is `free(NULL)` and is skipped.

use std::collections::HashMap;
use std::io::Read;

use memscape_io::ByteRecord;

use crate::builder::TraceBuilder;
use crate::model::{Frame, Trace, TraceFormat, USABLE_UNKNOWN};
use crate::text::{lossy, parse_dec, parse_hex};
use crate::warn;

#[derive(Debug, Default, Clone, Copy)]
struct Columns {
    time: Option<usize>,
    op: Option<usize>,
    address: Option<usize>,
    size: Option<usize>,
    thread: Option<usize>,
    site: Option<usize>,
    old_address: Option<usize>,
    usable_size: Option<usize>,
}

/// The header of a CSV allocation trace: names the columns `time`, `op` and `address`
/// (case-insensitive, in any order, quoted or not).
pub(crate) fn sniff(head: &[u8]) -> bool {
    let mut reader = memscape_io::csv_reader(head);
    let mut record = ByteRecord::new();
    while let Ok(true) = reader.read_byte_record(&mut record) {
        if is_blank(&record) {
            continue;
        }
        let c = header(&record);
        return c.time.is_some() && c.op.is_some() && c.address.is_some();
    }
    false
}

fn is_blank(record: &ByteRecord) -> bool {
    record.iter().all(|f| f.trim_ascii().is_empty())
}

fn header(record: &ByteRecord) -> Columns {
    let mut c = Columns::default();
    for (i, name) in record.iter().enumerate() {
        let slot = match name.trim_ascii().to_ascii_lowercase().as_slice() {
            b"time" => &mut c.time,
            b"op" => &mut c.op,
            b"address" => &mut c.address,
            b"size" => &mut c.size,
            b"thread" => &mut c.thread,
            b"site" => &mut c.site,
            b"old_address" => &mut c.old_address,
            b"usable_size" => &mut c.usable_size,
            _ => continue,
        };
        if slot.is_none() {
            *slot = Some(i);
        }
    }
    c
}

struct CsvParser {
    b: TraceBuilder,
    sites: HashMap<String, u32>,
}

/// Reads a CSV trace from `input` (already decompressed; streamed, never held whole). A read
/// error (a cut compressed stream) ends the input like a truncation: what came before stays.
/// `ends_with_newline`: whether the input is known to end with a line break (`None` when
/// streamed); a last row without one that does not parse is counted as truncated.
pub(crate) fn parse(source: &str, input: impl Read, ends_with_newline: Option<bool>) -> Trace {
    let mut p = CsvParser {
        b: TraceBuilder::with_event_times(source),
        sites: HashMap::new(),
    };
    let mut reader = memscape_io::csv_reader(input);
    let mut record = ByteRecord::new();
    let mut columns: Option<Columns> = None;
    let mut last_line = 0u64;
    let mut last_failed = false;
    loop {
        match reader.read_byte_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                tracing::warn!(
                    "{source}: the stream is cut or corrupt ({e}); what came before is loaded"
                );
                p.b.warn(warn::TRUNCATED, last_line + 1);
                break;
            }
        }
        let line = record.position().map_or(last_line + 1, |pos| pos.line());
        last_line = line;
        last_failed = false;
        if is_blank(&record) {
            continue;
        }
        if record.iter().any(|f| std::str::from_utf8(f).is_err()) {
            p.b.warn(warn::NON_UTF8, line);
        }
        let Some(c) = columns else {
            columns = Some(header(&record));
            continue;
        };
        if p.row(line, c, &record).is_none() {
            p.b.warn(warn::MALFORMED_LINE, line);
            last_failed = true;
        }
    }
    if last_failed && ends_with_newline == Some(false) {
        p.b.warn(warn::TRUNCATED, last_line);
    }
    p.b.finish(TraceFormat::Csv, true)
}

impl CsvParser {
    fn site(&mut self, name: &str) -> u32 {
        if name.is_empty() {
            return 0;
        }
        if let Some(&s) = self.sites.get(name) {
            return s;
        }
        let function = self.b.strings.intern(name);
        let node = self.b.call_tree.push_raw(
            0,
            Frame {
                function,
                ..Frame::default()
            },
        );
        self.sites.insert(name.to_owned(), node);
        node
    }

    fn row(&mut self, number: u64, c: Columns, record: &ByteRecord) -> Option<()> {
        let get = |i: Option<usize>| i.and_then(|i| record.get(i)).map(<[u8]>::trim_ascii);
        let time = parse_dec(get(c.time)?)?;
        let op = get(c.op)?;
        let address = parse_address(get(c.address).unwrap_or(b""))?;
        let size = match get(c.size) {
            Some(s) if !s.is_empty() => Some(parse_dec(s)?),
            _ => None,
        };
        let usable = match get(c.usable_size) {
            Some(s) if !s.is_empty() => parse_dec(s)?,
            _ => USABLE_UNKNOWN,
        };
        let old = match get(c.old_address) {
            Some(s) => parse_address(s)?,
            None => 0,
        };
        let text = |i| lossy(get(i).unwrap_or(b"")).0;
        if op.eq_ignore_ascii_case(b"alloc") || op.eq_ignore_ascii_case(b"malloc") {
            let size = size?;
            let thread = self.b.thread(&text(c.thread));
            let site = self.site(&text(c.site));
            self.b
                .alloc(number, time, address, size, usable, thread, site);
        } else if op.eq_ignore_ascii_case(b"free") {
            if address != 0 {
                self.b.free(number, time, address);
            }
        } else if op.eq_ignore_ascii_case(b"realloc") {
            let size = size?;
            let thread = self.b.thread(&text(c.thread));
            let site = self.site(&text(c.site));
            self.b
                .realloc(number, time, old, address, size, usable, thread, site);
        } else {
            return None;
        }
        Some(())
    }
}

/// `0x` hexadecimal or decimal; empty means 0 (null).
fn parse_address(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return Some(0);
    }
    match s.strip_prefix(b"0x").or_else(|| s.strip_prefix(b"0X")) {
        Some(hex) => parse_hex(hex),
        None => parse_dec(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Trace {
        parse("t.csv", text.as_bytes(), Some(text.ends_with('\n')))
    }

    #[test]
    fn quoted_fields_hold_commas_quotes_and_newlines() {
        let t = load(
            "time,op,address,size,thread,site\n\
             1,alloc,0x10,8,main,\"std::map<int, double>::insert\"\n\
             2,alloc,0x20,8,\"worker, 2\",\"say \"\"hi\"\"\"\n\
             3,alloc,0x30,8,main,\"two\nlines\"\n\
             4,free,0x10,,,\n",
        );
        assert!(t.warnings.is_empty(), "{}", t.warnings);
        assert_eq!(t.meta.allocs, 3);
        let names: Vec<&str> = (0..t.strings.len() as u32)
            .map(|i| t.strings.get(i))
            .collect();
        for want in [
            "std::map<int, double>::insert",
            "say \"hi\"",
            "two\nlines",
            "worker, 2",
        ] {
            assert!(names.contains(&want), "{want:?} not in {names:?}");
        }
    }

    #[test]
    fn line_numbers_count_embedded_newlines() {
        let t = load("time,op,address,size,site\n1,alloc,0x10,8,\"a\nb\"\nbad,alloc,0x20,8,x\n");
        let first = &t.warnings.kinds()[0].first[0];
        assert_eq!(first.line, Some(4), "{first}");
    }

    #[test]
    fn addresses_hex_or_decimal() {
        assert_eq!(parse_address(b"0x10"), Some(16));
        assert_eq!(parse_address(b"16"), Some(16));
        assert_eq!(parse_address(b""), Some(0));
        assert_eq!(parse_address(b"0xzz"), None);
    }
}
