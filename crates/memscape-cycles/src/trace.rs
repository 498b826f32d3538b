//! Reference-trace importers: valgrind lackey, Pin's pinatrace and a plain CSV.
//!
//! All three produce the same [`ReferenceTrace`]: one [`Access`] per data access with the address
//! of the instruction that made it. Lines that are not accesses are skipped and counted; lines
//! that look like accesses but do not parse are counted warnings naming their line number.

use std::collections::HashSet;
use std::path::Path;

use memscape_io::{Location, Warnings, numbered_lines, read_input};

use crate::error::CyclesError;

/// What a data access did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AccessKind {
    Load,
    Store,
    /// A read-modify-write (lackey's `M`).
    Modify,
}

impl AccessKind {
    /// Parses the kind names accepted in the CSV format (case-insensitive).
    pub fn from_name(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "l" | "r" | "load" | "read" => Some(Self::Load),
            "s" | "w" | "store" | "write" => Some(Self::Store),
            "m" | "modify" | "rw" => Some(Self::Modify),
            _ => None,
        }
    }
}

/// The trace formats this crate reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceFormat {
    /// `valgrind --tool=lackey --trace-mem=yes`.
    Lackey,
    /// Pin's `pinatrace` example tool: `ip: R|W addr`.
    Pinatrace,
    /// `ip,address,kind,size`.
    Csv,
}

/// One data access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    /// Position among the accesses of the whole trace (0-based), before any filter.
    pub index: usize,
    pub address: u64,
    pub kind: AccessKind,
    /// Bytes accessed; 0 where the format does not say (pinatrace).
    pub size: u32,
    /// Address of the instruction that made the access (lackey: the preceding `I` line).
    pub ip: u64,
}

/// A parsed reference trace.
#[derive(Debug, Clone)]
pub struct ReferenceTrace {
    pub format: TraceFormat,
    pub accesses: Vec<Access>,
    /// Every distinct instruction address seen, sorted (lackey: all `I` lines, including those
    /// without data accesses; other formats: the accesses' ips). Used to detect a PIE load base.
    pub instruction_addresses: Vec<u64>,
    /// Lines skipped or not understood, counted per kind.
    pub warnings: Warnings,
}

/// Reads a trace file (plain, zstd or gzip), detecting the format unless it is given.
pub fn read_trace(path: &Path, format: Option<TraceFormat>) -> Result<ReferenceTrace, CyclesError> {
    let bytes = read_input(path)?;
    parse_trace(&path.display().to_string(), &bytes, format)
}

/// Guesses the format from the first lines that decide it.
pub fn detect_format(bytes: &[u8]) -> Option<TraceFormat> {
    for (_, line) in numbered_lines(bytes).take(1000) {
        if line.starts_with(b"I  ")
            || line.starts_with(b" L ")
            || line.starts_with(b" S ")
            || line.starts_with(b" M ")
        {
            return Some(TraceFormat::Lackey);
        }
        if parse_pinatrace_line(line).is_some() {
            return Some(TraceFormat::Pinatrace);
        }
        let lower = line.to_ascii_lowercase();
        if lower.starts_with(b"ip,") || parse_csv_line(line).is_ok() {
            return Some(TraceFormat::Csv);
        }
    }
    None
}

/// Parses a trace held in memory. `name` is only used in errors and warnings.
pub fn parse_trace(
    name: &str,
    bytes: &[u8],
    format: Option<TraceFormat>,
) -> Result<ReferenceTrace, CyclesError> {
    let format = match format.or_else(|| detect_format(bytes)) {
        Some(f) => f,
        None => {
            return Err(CyclesError::UnknownTraceFormat {
                path: name.to_owned(),
            });
        }
    };
    let mut warnings = Warnings::new();
    let mut accesses = Vec::new();
    let mut ips: HashSet<u64> = HashSet::new();
    match format {
        TraceFormat::Lackey => parse_lackey(name, bytes, &mut accesses, &mut ips, &mut warnings),
        TraceFormat::Pinatrace => {
            parse_pinatrace(name, bytes, &mut accesses, &mut ips, &mut warnings);
        }
        TraceFormat::Csv => parse_csv(name, bytes, &mut accesses, &mut ips, &mut warnings),
    }
    if accesses.is_empty() {
        return Err(CyclesError::EmptyTrace {
            path: name.to_owned(),
            skipped: warnings.total(),
        });
    }
    let mut instruction_addresses: Vec<u64> = ips.into_iter().collect();
    instruction_addresses.sort_unstable();
    tracing::debug!(
        accesses = accesses.len(),
        warnings = warnings.total(),
        "parsed {format:?} trace {name}"
    );
    Ok(ReferenceTrace {
        format,
        accesses,
        instruction_addresses,
        warnings,
    })
}

/// Hex number with or without `0x`, at most 16 digits.
pub(crate) fn parse_hex(text: &[u8]) -> Option<u64> {
    let digits = text
        .strip_prefix(b"0x")
        .or_else(|| text.strip_prefix(b"0X"))
        .unwrap_or(text);
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    let mut value = 0u64;
    for &b in digits {
        let d = (b as char).to_digit(16)?;
        value = (value << 4) | u64::from(d);
    }
    Some(value)
}

/// Decimal number that fits in a `u64`.
pub(crate) fn parse_dec(text: &[u8]) -> Option<u64> {
    if text.is_empty() || text.len() > 20 {
        return None;
    }
    let mut value = 0u64;
    for &b in text {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(value)
}

/// `0x`-prefixed hex or plain decimal (the CSV convention).
fn parse_number(text: &[u8]) -> Option<u64> {
    if text.starts_with(b"0x") || text.starts_with(b"0X") {
        parse_hex(text)
    } else {
        parse_dec(text)
    }
}

/// `addr,size` as lackey prints it: hex address without prefix, decimal size.
fn parse_addr_size(text: &[u8]) -> Option<(u64, u32)> {
    let comma = text.iter().position(|&b| b == b',')?;
    let address = parse_hex(&text[..comma])?;
    let size = u32::try_from(parse_dec(&text[comma + 1..])?).ok()?;
    Some((address, size))
}

const LACKEY_EXPECTED: &str =
    "malformed lackey access: expected `I  hexaddr,size` or ` L|S|M hexaddr,size`";

fn parse_lackey(
    name: &str,
    bytes: &[u8],
    accesses: &mut Vec<Access>,
    ips: &mut HashSet<u64>,
    warnings: &mut Warnings,
) {
    let mut current_ip: Option<u64> = None;
    for (number, line) in numbered_lines(bytes) {
        let at = || Location::line(name, number);
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix(b"I  ") {
            match parse_addr_size(rest) {
                Some((ip, _)) => {
                    current_ip = Some(ip);
                    ips.insert(ip);
                }
                None => {
                    // The accesses that follow belong to an instruction we could not read.
                    current_ip = None;
                    warnings.add("malformed_line", LACKEY_EXPECTED, at());
                }
            }
            continue;
        }
        let kind = match line.get(..3) {
            Some(b" L ") => Some(AccessKind::Load),
            Some(b" S ") => Some(AccessKind::Store),
            Some(b" M ") => Some(AccessKind::Modify),
            _ => None,
        };
        if let Some(kind) = kind {
            match parse_addr_size(&line[3..]) {
                Some((address, size)) => {
                    let ip = current_ip.unwrap_or_else(|| {
                        warnings.add(
                            "access_without_instruction",
                            "data access without a preceding `I` line (ip set to 0)",
                            at(),
                        );
                        0
                    });
                    accesses.push(Access {
                        index: accesses.len(),
                        address,
                        kind,
                        size,
                        ip,
                    });
                }
                None => warnings.add("malformed_line", LACKEY_EXPECTED, at()),
            }
            continue;
        }
        if line.starts_with(b"==") || line.starts_with(b"--") || line.starts_with(b"**") {
            warnings.add("valgrind_message", "valgrind message line skipped", at());
        } else {
            warnings.add(
                "other_line",
                "line that is not a lackey record skipped (program output?)",
                at(),
            );
        }
    }
}

/// `0x4005d6: W 0x7ffd8d1c` with an optional trailing decimal size.
fn parse_pinatrace_line(line: &[u8]) -> Option<(u64, AccessKind, u64, u32)> {
    let text = std::str::from_utf8(line).ok()?;
    let (ip, rest) = text.split_once(':')?;
    let ip = parse_hex(ip.trim().as_bytes())?;
    let mut fields = rest.split_whitespace();
    let kind = match fields.next()? {
        "R" | "r" => AccessKind::Load,
        "W" | "w" => AccessKind::Store,
        _ => return None,
    };
    let address = parse_hex(fields.next()?.as_bytes())?;
    let size = match fields.next() {
        Some(s) => u32::try_from(parse_dec(s.as_bytes())?).ok()?,
        None => 0,
    };
    if fields.next().is_some() {
        return None;
    }
    Some((ip, kind, address, size))
}

fn parse_pinatrace(
    name: &str,
    bytes: &[u8],
    accesses: &mut Vec<Access>,
    ips: &mut HashSet<u64>,
    warnings: &mut Warnings,
) {
    for (number, line) in numbered_lines(bytes) {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if line.starts_with(b"#") {
            // `#eof` and comments.
            continue;
        }
        match parse_pinatrace_line(line) {
            Some((ip, kind, address, size)) => {
                ips.insert(ip);
                accesses.push(Access {
                    index: accesses.len(),
                    address,
                    kind,
                    size,
                    ip,
                });
            }
            None => warnings.add(
                "malformed_line",
                "malformed pinatrace line: expected `0xIP: R|W 0xADDR`",
                Location::line(name, number),
            ),
        }
    }
}

/// `ip,address,kind,size` in one line, for format detection.
fn parse_csv_line(line: &[u8]) -> Result<(u64, u64, AccessKind, u32), &'static str> {
    let mut record = memscape_io::ByteRecord::new();
    match memscape_io::csv_reader(line).read_byte_record(&mut record) {
        Ok(true) => parse_csv_record(&record),
        _ => Err("expected 4 comma-separated fields `ip,address,kind,size`"),
    }
}

/// One row `ip,address,kind,size`; numbers `0x`-hex or decimal.
fn parse_csv_record(
    record: &memscape_io::ByteRecord,
) -> Result<(u64, u64, AccessKind, u32), &'static str> {
    if record.len() != 4 {
        return Err("expected 4 comma-separated fields `ip,address,kind,size`");
    }
    let field = |i: usize| record.get(i).unwrap_or(b"").trim_ascii();
    let ip = parse_number(field(0)).ok_or("ip is not a number (0x-hex or decimal)")?;
    let address = parse_number(field(1)).ok_or("address is not a number (0x-hex or decimal)")?;
    let kind = std::str::from_utf8(field(2))
        .ok()
        .and_then(AccessKind::from_name)
        .ok_or("kind is not one of load/store/modify (L/S/M, R/W)")?;
    let size = parse_number(field(3))
        .and_then(|s| u32::try_from(s).ok())
        .ok_or("size is not a 32-bit number")?;
    Ok((ip, address, kind, size))
}

/// Every row through the one CSV reader (`memscape_io::csv_reader`: RFC 4180 quoting, `#`
/// comments, blank lines skipped).
fn parse_csv(
    name: &str,
    bytes: &[u8],
    accesses: &mut Vec<Access>,
    ips: &mut HashSet<u64>,
    warnings: &mut Warnings,
) {
    let mut seen_content = false;
    let mut reader = memscape_io::csv_reader(bytes);
    let mut record = memscape_io::ByteRecord::new();
    while let Ok(true) = reader.read_byte_record(&mut record) {
        if record.iter().all(|f| f.trim_ascii().is_empty()) {
            continue;
        }
        let number = record.position().map_or(0, |p| p.line());
        let first = !seen_content;
        seen_content = true;
        match parse_csv_record(&record) {
            Ok((ip, address, kind, size)) => {
                ips.insert(ip);
                accesses.push(Access {
                    index: accesses.len(),
                    address,
                    kind,
                    size,
                    ip,
                });
            }
            Err(_)
                if first
                    && record.get(0).is_some_and(|f| {
                        f.trim_ascii().to_ascii_lowercase().starts_with(b"ip")
                    }) =>
            {
                // The header row.
            }
            Err(why) => warnings.add(
                "malformed_line",
                format!("malformed CSV line: {why}"),
                Location::line(name, number),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lackey_lines_are_attributed_to_the_preceding_instruction() {
        let text = b"==123== Lackey, an example Valgrind tool\nI  04001100,3\n S 1ffefffd78,8\nI  04001103,5\n L 04022e10,8\n M 0401f3a8,4\nhello from the program\n L 0401f3a8,8x\n";
        let trace = parse_trace("t", text, None).unwrap();
        assert_eq!(trace.format, TraceFormat::Lackey);
        assert_eq!(trace.accesses.len(), 3);
        assert_eq!(trace.accesses[0].ip, 0x0400_1100);
        assert_eq!(trace.accesses[0].kind, AccessKind::Store);
        assert_eq!(trace.accesses[0].address, 0x1f_feff_fd78);
        assert_eq!(trace.accesses[2].kind, AccessKind::Modify);
        assert_eq!(trace.accesses[2].size, 4);
        assert_eq!(trace.instruction_addresses, vec![0x0400_1100, 0x0400_1103]);
        assert_eq!(trace.warnings.count("valgrind_message"), 1);
        assert_eq!(trace.warnings.count("other_line"), 1);
        assert_eq!(trace.warnings.count("malformed_line"), 1);
        assert_eq!(trace.warnings.kinds()[2].first[0], Location::line("t", 8));
    }

    #[test]
    fn pinatrace_and_csv() {
        let pin = b"0x4005d6: W 0x7ffd8d1c\n0x4005da: R 0x601040\n#eof\n";
        let trace = parse_trace("p", pin, None).unwrap();
        assert_eq!(trace.format, TraceFormat::Pinatrace);
        assert_eq!(trace.accesses.len(), 2);
        assert_eq!(trace.accesses[1].kind, AccessKind::Load);
        assert_eq!(trace.accesses[1].address, 0x60_1040);

        let csv = b"ip,address,kind,size\n0x10,0x20,load,8\n17,32,S,4\n0x10,zz,load,8\n";
        let trace = parse_trace("c", csv, None).unwrap();
        assert_eq!(trace.format, TraceFormat::Csv);
        assert_eq!(trace.accesses.len(), 2);
        assert_eq!(trace.accesses[1].ip, 17);
        assert_eq!(trace.accesses[1].kind, AccessKind::Store);
        assert_eq!(trace.warnings.count("malformed_line"), 1);
    }

    #[test]
    fn garbage_is_an_error_naming_the_file() {
        let err = parse_trace("junk.txt", b"\x00\x01\x02 nothing", None).unwrap_err();
        assert!(err.to_string().contains("junk.txt"), "{err}");
        let err = parse_trace(
            "empty.lackey",
            b"==1== only messages\n",
            Some(TraceFormat::Lackey),
        )
        .unwrap_err();
        assert!(err.to_string().contains("no memory accesses"), "{err}");
    }
}
