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
//! Fields may be double-quoted (`""` inside quotes is a quote). Other columns are ignored.
//! `free` of address 0 is `free(NULL)` and is skipped.

use std::collections::HashMap;

use crate::builder::TraceBuilder;
use crate::model::{Frame, Trace, TraceFormat, USABLE_UNKNOWN};
use crate::text::{LineParser, lossy, parse_dec, parse_hex};
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

pub(crate) struct CsvParser {
    b: TraceBuilder,
    columns: Option<Columns>,
    sites: HashMap<String, u32>,
    fields: Vec<String>,
}

/// The header of a CSV allocation trace: lower-cased names, split on commas.
pub(crate) fn sniff(head: &[u8]) -> bool {
    let first = memscape_io::numbered_lines(head)
        .map(|(_, l)| l)
        .find(|l| !l.is_empty());
    let Some(first) = first else { return false };
    let Ok(text) = std::str::from_utf8(first) else {
        return false;
    };
    let names: Vec<String> = text
        .split(',')
        .map(|s| s.trim().trim_matches('"').to_ascii_lowercase())
        .collect();
    ["time", "op", "address"]
        .iter()
        .all(|n| names.iter().any(|h| h == n))
}

impl CsvParser {
    pub(crate) fn new(source: &str) -> Self {
        Self {
            b: TraceBuilder::with_event_times(source),
            columns: None,
            sites: HashMap::new(),
            fields: Vec::new(),
        }
    }

    pub(crate) fn finish(self) -> Trace {
        self.b.finish(TraceFormat::Csv, true)
    }

    fn header(&mut self, line: &str) -> Columns {
        let mut c = Columns::default();
        for (i, name) in line.split(',').enumerate() {
            let name = name.trim().trim_matches('"').to_ascii_lowercase();
            let slot = match name.as_str() {
                "time" => &mut c.time,
                "op" => &mut c.op,
                "address" => &mut c.address,
                "size" => &mut c.size,
                "thread" => &mut c.thread,
                "site" => &mut c.site,
                "old_address" => &mut c.old_address,
                "usable_size" => &mut c.usable_size,
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(i);
            }
        }
        c
    }

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

    fn row(&mut self, number: u64, c: Columns) -> Option<()> {
        let get = |i: Option<usize>| i.and_then(|i| self.fields.get(i)).map(|s| s.trim());
        let time = parse_dec(get(c.time)?.as_bytes())?;
        let op = get(c.op)?.to_ascii_lowercase();
        let address = parse_address(get(c.address).unwrap_or(""))?;
        let size = match get(c.size) {
            Some(s) if !s.is_empty() => Some(parse_dec(s.as_bytes())?),
            _ => None,
        };
        let usable = match get(c.usable_size) {
            Some(s) if !s.is_empty() => parse_dec(s.as_bytes())?,
            _ => USABLE_UNKNOWN,
        };
        let thread_name = get(c.thread).unwrap_or("").to_owned();
        let site_name = get(c.site).unwrap_or("").to_owned();
        let old = match get(c.old_address) {
            Some(s) => parse_address(s)?,
            None => 0,
        };
        match op.as_str() {
            "alloc" | "malloc" => {
                let size = size?;
                let thread = self.b.thread(&thread_name);
                let site = self.site(&site_name);
                self.b
                    .alloc(number, time, address, size, usable, thread, site);
            }
            "free" => {
                if address != 0 {
                    self.b.free(number, time, address);
                }
            }
            "realloc" => {
                let size = size?;
                let thread = self.b.thread(&thread_name);
                let site = self.site(&site_name);
                self.b
                    .realloc(number, time, old, address, size, usable, thread, site);
            }
            _ => return None,
        }
        Some(())
    }
}

/// `0x` hexadecimal or decimal; empty means 0 (null).
fn parse_address(s: &str) -> Option<u64> {
    let s = s.trim();
    if s.is_empty() {
        return Some(0);
    }
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => parse_hex(hex.as_bytes()),
        None => parse_dec(s.as_bytes()),
    }
}

/// Splits one CSV line into `out`, honouring double quotes. Returns false on an unterminated
/// quote.
fn split_csv(line: &str, out: &mut Vec<String>) -> bool {
    out.clear();
    let mut field = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    while let Some(ch) = chars.next() {
        match (quoted, ch) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (false, '"') if field.trim().is_empty() => {
                field.clear();
                quoted = true;
            }
            (false, ',') => out.push(std::mem::take(&mut field)),
            (_, ch) => field.push(ch),
        }
    }
    out.push(field);
    !quoted
}

impl LineParser for CsvParser {
    fn line(&mut self, number: u64, line: &[u8]) {
        let (text, replaced) = lossy(line);
        if replaced {
            self.b.warn(warn::NON_UTF8, number);
        }
        if text.trim().is_empty() || text.starts_with('#') {
            return;
        }
        let Some(columns) = self.columns else {
            let c = self.header(&text);
            self.columns = Some(c);
            return;
        };
        let mut fields = std::mem::take(&mut self.fields);
        let ok = split_csv(&text, &mut fields);
        self.fields = fields;
        if !ok || self.row(number, columns).is_none() {
            self.b.warn(warn::MALFORMED_LINE, number);
        }
    }

    fn truncated(&mut self, number: u64, partial: &[u8]) {
        // A missing final newline is common in hand-written CSV: accept the line if it is
        // complete, and only count it as truncated if it does not parse.
        let before = self.b.warnings.count(warn::MALFORMED_LINE);
        self.line(number, partial);
        if self.b.warnings.count(warn::MALFORMED_LINE) > before {
            self.b.warn(warn::TRUNCATED, number);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_handles_quotes() {
        let mut out = Vec::new();
        assert!(split_csv(r#"1,"a,b",c"#, &mut out));
        assert_eq!(out, vec!["1", "a,b", "c"]);
        assert!(split_csv(r#""say ""hi""",x"#, &mut out));
        assert_eq!(out, vec![r#"say "hi""#, "x"]);
        assert!(!split_csv(r#""open"#, &mut out));
    }

    #[test]
    fn addresses_hex_or_decimal() {
        assert_eq!(parse_address("0x10"), Some(16));
        assert_eq!(parse_address("16"), Some(16));
        assert_eq!(parse_address(""), Some(0));
        assert_eq!(parse_address("0xzz"), None);
    }
}
