//! From a parsed trace to the records an analysis uses: symbolization, filters, sampling and
//! the symbol each record contributes to the window strings.

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

use crate::error::CyclesError;
use crate::symbolize::{LoadBase, Symbolizer};
use crate::trace::{AccessKind, ReferenceTrace};

/// One record as reported (the JSON keys of `memscape cycles`' `records`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TraceRecord {
    /// Index among the accesses of the whole trace (before filters).
    pub index: usize,
    pub address: u64,
    pub kind: AccessKind,
    pub ip: u64,
    pub function: Option<String>,
    pub file: Option<String>,
    pub line: Option<u32>,
    /// Bytes accessed (0 if unknown); not part of the JSON.
    #[serde(skip)]
    pub size: u32,
    /// The inline chain of the instruction; not part of the JSON, used by the function filter.
    #[serde(skip)]
    pub frames: Vec<String>,
}

/// Which records an analysis keeps. Filters apply in this order: function / file / ip range
/// (need symbolization for the first two), then the record range on the original indices, then
/// sampling every `sample`-th of what is left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordFilter {
    /// Keep records whose instruction belongs to one of these functions (any frame of the
    /// inline chain, exact name or the name before a `(` of a demangled signature).
    pub functions: Vec<String>,
    /// Keep records whose source file ends with one of these (a basename or a path suffix).
    pub files: Vec<String>,
    pub ip_range: Option<Range<u64>>,
    /// Original record indices `A..B`.
    pub record_range: Option<Range<usize>>,
    /// Keep every k-th record (1 keeps all).
    pub sample: usize,
}

impl Default for RecordFilter {
    fn default() -> Self {
        Self {
            functions: Vec::new(),
            files: Vec::new(),
            ip_range: None,
            record_range: None,
            sample: 1,
        }
    }
}

/// Parses `A..B`, `A..` or `..B` (decimal indices, B exclusive) as given to `--range`.
pub fn parse_record_range(text: &str) -> Result<Range<usize>, CyclesError> {
    let bad = || {
        CyclesError::InvalidParameter(format!(
            "record range {text:?}: expected A..B with decimal indices, A < B"
        ))
    };
    let (a, b) = text.split_once("..").ok_or_else(bad)?;
    let start = if a.trim().is_empty() {
        0
    } else {
        a.trim().parse().map_err(|_| bad())?
    };
    let end = if b.trim().is_empty() {
        usize::MAX
    } else {
        b.trim().parse().map_err(|_| bad())?
    };
    if start >= end {
        return Err(bad());
    }
    Ok(start..end)
}

/// Parses `LO..HI` or `LO-HI` (hex with or without `0x`, HI exclusive) as given to `--ip-range`.
pub fn parse_ip_range(text: &str) -> Result<Range<u64>, CyclesError> {
    let bad = || {
        CyclesError::InvalidParameter(format!(
            "ip range {text:?}: expected LO..HI in hex (e.g. 0x401000..0x402000), LO < HI"
        ))
    };
    let (a, b) = text
        .split_once("..")
        .or_else(|| text.split_once('-'))
        .ok_or_else(bad)?;
    let lo = crate::trace::parse_hex(a.trim().as_bytes()).ok_or_else(bad)?;
    let hi = crate::trace::parse_hex(b.trim().as_bytes()).ok_or_else(bad)?;
    if lo >= hi {
        return Err(bad());
    }
    Ok(lo..hi)
}

/// Parses a load base as given to `--load-base` (hex, `0x` optional).
pub fn parse_load_base(text: &str) -> Result<u64, CyclesError> {
    crate::trace::parse_hex(text.trim().as_bytes()).ok_or_else(|| {
        CyclesError::InvalidParameter(format!("load base {text:?}: expected a hex address"))
    })
}

fn function_matches(wanted: &str, frames: &[String]) -> bool {
    frames.iter().any(|f| {
        f == wanted
            || f.strip_prefix(wanted)
                .is_some_and(|rest| rest.starts_with('(') || rest.starts_with('<'))
    })
}

/// Symbolizes (when a binary is given) and filters the accesses of a trace.
pub fn select_records(
    trace: &ReferenceTrace,
    binary: Option<&Path>,
    load_base: LoadBase,
    filter: &RecordFilter,
) -> Result<Vec<TraceRecord>, CyclesError> {
    if filter.sample == 0 {
        return Err(CyclesError::InvalidParameter(
            "--sample must be at least 1".to_owned(),
        ));
    }
    if binary.is_none() && !(filter.functions.is_empty() && filter.files.is_empty()) {
        return Err(CyclesError::InvalidParameter(
            "--function and --file need the traced binary (--binary) to symbolize".to_owned(),
        ));
    }
    let mut symbolizer = match binary {
        Some(path) => Some(Symbolizer::open(
            path,
            load_base,
            &trace.instruction_addresses,
        )?),
        None => None,
    };
    let mut kept = Vec::new();
    for access in &trace.accesses {
        if let Some(range) = &filter.record_range
            && !range.contains(&access.index)
        {
            continue;
        }
        if let Some(range) = &filter.ip_range
            && !range.contains(&access.ip)
        {
            continue;
        }
        let info = symbolizer.as_mut().and_then(|s| s.lookup(access.ip));
        if !filter.functions.is_empty() {
            let frames = info.as_ref().map_or(&[][..], |i| &i.frames[..]);
            if !filter.functions.iter().any(|f| function_matches(f, frames)) {
                continue;
            }
        }
        if !filter.files.is_empty() {
            let file = info.as_ref().and_then(|i| i.file.as_deref()).unwrap_or("");
            if !filter.files.iter().any(|f| file.ends_with(f.as_str())) {
                continue;
            }
        }
        kept.push(TraceRecord {
            index: access.index,
            address: access.address,
            kind: access.kind,
            ip: access.ip,
            function: info.as_ref().and_then(|i| i.function.clone()),
            file: info.as_ref().and_then(|i| i.file.clone()),
            line: info.as_ref().and_then(|i| i.line),
            size: access.size,
            frames: info.as_ref().map(|i| i.frames.clone()).unwrap_or_default(),
        });
    }
    if filter.sample > 1 {
        kept = kept.into_iter().step_by(filter.sample).collect();
    }
    Ok(kept)
}

/// What a record contributes to a window string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SymbolMode {
    /// The data address (the paper's choice).
    #[default]
    Address,
    /// The address divided by a cache-line size in bytes (a power of two, usually 64).
    CacheLine(u64),
    /// The address together with the access kind (a load and a store differ).
    AddressKind,
}

/// Interns the records' symbols as dense ids `0..alphabet`; returns the ids and the alphabet
/// size.
pub fn record_symbols(
    records: &[TraceRecord],
    mode: SymbolMode,
) -> Result<(Vec<u32>, usize), CyclesError> {
    if let SymbolMode::CacheLine(bytes) = mode
        && (bytes == 0 || !bytes.is_power_of_two())
    {
        return Err(CyclesError::InvalidParameter(format!(
            "cache line size {bytes} is not a power of two"
        )));
    }
    let mut ids: HashMap<(u64, u8), u32> = HashMap::new();
    let mut symbols = Vec::with_capacity(records.len());
    for r in records {
        let key = match mode {
            SymbolMode::Address => (r.address, 0),
            SymbolMode::CacheLine(bytes) => (r.address / bytes, 0),
            SymbolMode::AddressKind => (r.address, r.kind as u8),
        };
        let next = u32::try_from(ids.len())
            .map_err(|_| CyclesError::TooLarge("more than 2^32 distinct symbols".to_owned()))?;
        symbols.push(*ids.entry(key).or_insert(next));
    }
    Ok((symbols, ids.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_and_reject_nonsense() {
        assert_eq!(parse_record_range("10..20").unwrap(), 10..20);
        assert_eq!(parse_record_range("10..").unwrap(), 10..usize::MAX);
        assert!(parse_record_range("20..10").is_err());
        assert!(parse_record_range("x..10").is_err());
        assert_eq!(parse_ip_range("0x10..0x20").unwrap(), 0x10..0x20);
        assert_eq!(parse_ip_range("10-20").unwrap(), 0x10..0x20);
        assert!(parse_ip_range("0x20..0x10").is_err());
    }

    #[test]
    fn function_names_match_with_or_without_signature() {
        let frames = vec!["bubble_sort(int*, int)".to_owned()];
        assert!(function_matches("bubble_sort", &frames));
        assert!(!function_matches("bubble", &frames));
        assert!(function_matches("bubble_sort(int*, int)", &frames));
    }
}
