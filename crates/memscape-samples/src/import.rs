//! Importers: MemAxes CSV, Mitos CSV and `perf script` text from `perf mem record`.
//!
//! Common rules: `??` (or an empty field) is an unknown value; a row with the wrong number of
//! fields, an unparsable number or no latency is skipped and counted as a warning with its
//! line number (`memscape_io::Warnings`); columns the importer does not know become state
//! variables, numeric (quantitative) when every known value is an integer or a number,
//! categorical (qualitative) otherwise.

use std::path::Path;

use memscape_io::{Location, Warnings, numbered_lines};

use crate::datasource::{DataSourceRadix, MemLevel};
use crate::table::{AttrKind, Column, ColumnData, Interner, NONE, SampleFormat, Samples};
use crate::{Bitset, SamplesError};

/// Import options.
#[derive(Debug, Clone, Copy, Default)]
pub struct ImportOptions {
    /// How to read MemAxes' `dataSource`; see [`DataSourceRadix`].
    pub data_source_radix: DataSourceRadix,
}

/// Reads a samples file (any supported format, compressed or not), detected from its content.
pub fn load_samples(path: &Path, options: ImportOptions) -> Result<Samples, SamplesError> {
    let bytes = memscape_io::read_input(path)?;
    parse_samples(&bytes, &path.display().to_string(), options)
}

/// Parses samples from memory; `file` names the input in errors and warnings.
pub fn parse_samples(
    bytes: &[u8],
    file: &str,
    options: ImportOptions,
) -> Result<Samples, SamplesError> {
    let first = numbered_lines(bytes)
        .find(|(_, l)| !l.iter().all(u8::is_ascii_whitespace))
        .map(|(_, l)| String::from_utf8_lossy(l).into_owned())
        .ok_or_else(|| SamplesError::Format {
            at: Location::line(file, 1),
            message: "empty input: expected a CSV header or perf script lines".into(),
        })?;
    let header: Vec<&str> = first
        .split(',')
        .map(|name| name.trim().trim_matches('"'))
        .collect();
    if header.contains(&"dataSource") {
        parse_csv(bytes, file, CsvDialect::Memaxes, options)
    } else if header.contains(&"data_src") {
        parse_csv(bytes, file, CsvDialect::Mitos, options)
    } else if numbered_lines(bytes)
        .map(|(_, l)| String::from_utf8_lossy(l))
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .is_some_and(|l| looks_like_perf_script(&l))
    {
        parse_perf_script(bytes, file)
    } else {
        Err(SamplesError::Format {
            at: Location::line(file, 1),
            message: format!(
                "unrecognised samples file: expected a MemAxes CSV header (with `dataSource`), \
                 a Mitos CSV header (with `data_src`) or `perf script` output; the input starts \
                 with {}",
                memscape_io::quote_start(bytes)
            ),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CsvDialect {
    Memaxes,
    Mitos,
}

/// How a column's text is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ColType {
    /// Hexadecimal integer (MemAxes `time`), with or without `0x`.
    Hex,
    /// Decimal integer, `0x…` accepted.
    Dec,
    /// Free text, interned.
    Text,
    /// Decided after reading everything (state variables, MemAxes `dataSource`).
    Deferred,
}

fn column_type(dialect: CsvDialect, name: &str) -> (ColType, AttrKind) {
    use AttrKind::{Qualitative as Ql, Quantitative as Qn};
    use ColType::*;
    match (dialect, name) {
        (_, "variable" | "source") => (Text, Ql),
        (_, "line" | "cpu") => (Dec, Ql),
        (_, "latency") => (Dec, Qn),
        (CsvDialect::Memaxes, "time") => (Hex, Qn),
        (CsvDialect::Memaxes, "dataSource") => (Deferred, Ql),
        (CsvDialect::Memaxes, "node" | "map3D") => (Dec, Ql),
        (CsvDialect::Memaxes, "iter" | "index") => (Dec, Qn),
        (CsvDialect::Mitos, "data_src" | "pid" | "tid" | "ip") => (Dec, Ql),
        (CsvDialect::Mitos, "time" | "addr" | "bytes" | "buffer_size") => (Dec, Qn),
        (CsvDialect::Mitos, "dims") => (Dec, Ql),
        (CsvDialect::Mitos, "instruction") => (Text, Ql),
        _ => (Deferred, Qn),
    }
}

enum Builder {
    Int {
        values: Vec<u64>,
        unknown: Bitset,
        hex: bool,
    },
    Text {
        interner: Interner,
        codes: Vec<u32>,
        unknown: Bitset,
    },
    /// Fields kept as text until every row is read: one arena, each field ending at its
    /// `ends` entry (the previous entry is its start).
    Raw { text: String, ends: Vec<usize> },
}

/// The fields of a [`Builder::Raw`] column.
fn raw_fields<'t>(text: &'t str, ends: &[usize]) -> Vec<&'t str> {
    let mut start = 0;
    ends.iter()
        .map(|&end| {
            let field = text.get(start..end).unwrap_or("");
            start = end;
            field
        })
        .collect()
}

fn is_unknown(field: &str) -> bool {
    field.is_empty() || field == "??"
}

fn parse_int(field: &str, hex: bool) -> Option<u64> {
    if let Some(h) = field
        .strip_prefix("0x")
        .or_else(|| field.strip_prefix("0X"))
    {
        return u64::from_str_radix(h, 16).ok();
    }
    if hex {
        u64::from_str_radix(field, 16).ok()
    } else {
        field.parse::<u64>().ok()
    }
}

/// A parsed field waiting for the whole row to be accepted.
enum Cell {
    Int(u64),
    Unknown,
    /// Text: the field's index in the row.
    Field(usize),
}

fn parse_csv(
    bytes: &[u8],
    file: &str,
    dialect: CsvDialect,
    options: ImportOptions,
) -> Result<Samples, SamplesError> {
    // Every row through the one CSV reader: RFC 4180 quoting, so that a C++ symbol quoted
    // as CSV does it (`"std::map<int, double>"`) is one field.
    let mut reader = memscape_io::csv_reader(bytes);
    let mut record = memscape_io::ByteRecord::new();
    let line_of = |record: &memscape_io::ByteRecord| record.position().map_or(1, |p| p.line());
    let header_line = loop {
        match reader.read_byte_record(&mut record) {
            Ok(true) if record.iter().all(|f| f.trim_ascii().is_empty()) => continue,
            Ok(true) => break line_of(&record),
            _ => {
                return Err(SamplesError::Format {
                    at: Location::line(file, 1),
                    message: "missing header".into(),
                });
            }
        }
    };
    let names: Vec<String> = record
        .iter()
        .map(|f| std::str::from_utf8(f.trim_ascii()).map(str::to_owned))
        .collect::<Result<_, _>>()
        .map_err(|_| SamplesError::Format {
            at: Location::line(file, header_line),
            message: "header is not UTF-8".into(),
        })?;
    let mut seen = std::collections::HashSet::new();
    for n in &names {
        if n.is_empty() || !seen.insert(n.as_str()) {
            return Err(SamplesError::Format {
                at: Location::line(file, header_line),
                message: format!("header column {n:?} is empty or repeated"),
            });
        }
    }
    let latency_col =
        names
            .iter()
            .position(|n| n == "latency")
            .ok_or_else(|| SamplesError::Format {
                at: Location::line(file, header_line),
                message: "header has no `latency` column".into(),
            })?;
    let types: Vec<(ColType, AttrKind)> = names.iter().map(|n| column_type(dialect, n)).collect();
    let mut builders: Vec<Builder> = types
        .iter()
        .map(|(t, _)| match t {
            ColType::Hex | ColType::Dec => Builder::Int {
                values: Vec::new(),
                unknown: Bitset::new(0),
                hex: *t == ColType::Hex,
            },
            ColType::Text => Builder::Text {
                interner: Interner::default(),
                codes: Vec::new(),
                unknown: Bitset::new(0),
            },
            ColType::Deferred => Builder::Raw {
                text: String::new(),
                ends: Vec::new(),
            },
        })
        .collect();
    let mut warnings = Warnings::new();
    let mut rows = 0usize;
    let mut row_lines: Vec<u64> = Vec::new();
    // Reused across rows; a text cell is the index of its field in `row`.
    let mut row = memscape_io::StringRecord::new();
    let mut cells: Vec<Cell> = Vec::with_capacity(names.len());
    'rows: loop {
        match reader.read_record(&mut row) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                let line_no = e.position().map_or(0, |p| p.line());
                if matches!(e.kind(), memscape_io::CsvErrorKind::Utf8 { .. }) {
                    warnings.add(
                        "non_utf8_row",
                        "row is not UTF-8; skipped",
                        Location::line(file, line_no),
                    );
                    continue;
                }
                // Otherwise only I/O can fail (the reader is flexible).
                warnings.add(
                    "read_error",
                    format!("the input could not be read past here ({e})"),
                    Location::line(file, row_lines.last().map_or(header_line, |l| l + 1)),
                );
                break;
            }
        }
        let line_no = row.position().map_or(1, |p| p.line());
        let at = || Location::line(file, line_no);
        if row.iter().all(|f| f.trim().is_empty()) {
            continue;
        }
        if row.len() != names.len() {
            warnings.add(
                "wrong_field_count",
                format!(
                    "row does not have the header's {} comma-separated fields; skipped",
                    names.len()
                ),
                at(),
            );
            continue;
        }
        cells.clear();
        for (c, field) in row.iter().enumerate() {
            let field = field.trim();
            let cell = if is_unknown(field) {
                Cell::Unknown
            } else {
                match (&builders[c], types[c].0) {
                    (Builder::Int { hex, .. }, _) => match parse_int(field, *hex) {
                        Some(v) => Cell::Int(v),
                        None => {
                            warnings.add(
                                "bad_number",
                                "a field is not the integer its column holds; row skipped",
                                at(),
                            );
                            continue 'rows;
                        }
                    },
                    _ => Cell::Field(c),
                }
            };
            cells.push(cell);
        }
        if matches!(cells[latency_col], Cell::Unknown) {
            warnings.add("unknown_latency", "row has no latency; skipped", at());
            continue;
        }
        let text_of = |c: usize| row.get(c).unwrap_or("").trim();
        for (builder, cell) in builders.iter_mut().zip(cells.drain(..)) {
            match (builder, cell) {
                (Builder::Int { values, .. }, Cell::Int(v)) => values.push(v),
                (
                    Builder::Int {
                        values, unknown, ..
                    },
                    _,
                ) => {
                    unknown.set(values.len());
                    values.push(0);
                }
                (
                    Builder::Text {
                        interner, codes, ..
                    },
                    Cell::Field(c),
                ) => {
                    codes.push(interner.code(text_of(c)));
                }
                (Builder::Text { codes, unknown, .. }, _) => {
                    unknown.set(codes.len());
                    codes.push(NONE);
                }
                (Builder::Raw { text, ends }, Cell::Field(c)) => {
                    text.push_str(text_of(c));
                    ends.push(text.len());
                }
                (Builder::Raw { text, ends }, _) => ends.push(text.len()),
            }
        }
        rows += 1;
        row_lines.push(line_no);
    }

    let format = match dialect {
        CsvDialect::Memaxes => SampleFormat::MemaxesCsv,
        CsvDialect::Mitos => SampleFormat::MitosCsv,
    };
    let mut columns: Vec<Column> = Vec::with_capacity(names.len() + 1);
    let mut level: Vec<MemLevel> = vec![MemLevel::Unknown; rows];
    for ((name, builder), (_, kind)) in names.iter().zip(builders).zip(&types) {
        let column = match builder {
            Builder::Int {
                values, unknown, ..
            } => Column {
                name: name.clone(),
                kind: *kind,
                data: ColumnData::U64(values),
                unknown: pad(unknown, rows),
            },
            Builder::Text {
                interner,
                codes,
                unknown,
            } => Column {
                name: name.clone(),
                kind: *kind,
                data: ColumnData::Category {
                    codes,
                    labels: interner.labels,
                },
                unknown: pad(unknown, rows),
            },
            Builder::Raw { text, ends }
                if dialect == CsvDialect::Memaxes && name == "dataSource" =>
            {
                let values = raw_fields(&text, &ends);
                let radix = match options.data_source_radix {
                    DataSourceRadix::Auto => {
                        if values.iter().any(|v| {
                            v.starts_with("0x")
                                || v.bytes().any(|b| matches!(b, b'a'..=b'f' | b'A'..=b'F'))
                        }) {
                            DataSourceRadix::Hex
                        } else {
                            DataSourceRadix::Decimal
                        }
                    }
                    r => r,
                };
                let mut parsed = Vec::with_capacity(rows);
                let mut unknown = Bitset::new(rows);
                for (i, v) in values.iter().enumerate() {
                    let value = if is_unknown(v) {
                        None
                    } else {
                        let r = parse_int(v, radix == DataSourceRadix::Hex);
                        if r.is_none() {
                            warnings.add(
                                "bad_data_source",
                                "dataSource is not a number; level unknown",
                                Location::line(file, row_lines[i]),
                            );
                        }
                        r
                    };
                    match value {
                        Some(code) => {
                            level[i] = MemLevel::from_intel_load_latency(code);
                            parsed.push(code);
                        }
                        None => {
                            unknown.set(i);
                            parsed.push(0);
                        }
                    }
                }
                Column {
                    name: name.clone(),
                    kind: AttrKind::Qualitative,
                    data: ColumnData::U64(parsed),
                    unknown,
                }
            }
            Builder::Raw { text, ends } => state_variable(name, &raw_fields(&text, &ends), rows),
        };
        if dialect == CsvDialect::Mitos
            && name == "data_src"
            && let ColumnData::U64(v) = &column.data
        {
            for (i, &code) in v.iter().enumerate() {
                if !column.unknown.get(i) {
                    level[i] = MemLevel::from_perf_data_src(code);
                }
            }
        }
        columns.push(column);
    }
    finish(format, columns, level, warnings, rows, file, row_lines)
}

fn pad(mut unknown: Bitset, rows: usize) -> Bitset {
    if unknown.universe() < rows {
        unknown = unknown.union(&Bitset::new(rows));
    }
    unknown
}

/// Types an unknown column from its values.
fn state_variable(name: &str, values: &[&str], rows: usize) -> Column {
    let mut unknown = Bitset::new(rows);
    for (i, v) in values.iter().enumerate() {
        if is_unknown(v) {
            unknown.set(i);
        }
    }
    let known = || values.iter().filter(|v| !is_unknown(v));
    if known().all(|v| parse_int(v, false).is_some()) {
        let data = values
            .iter()
            .map(|v| parse_int(v, false).unwrap_or(0))
            .collect();
        return Column {
            name: name.to_owned(),
            kind: AttrKind::Quantitative,
            data: ColumnData::U64(data),
            unknown,
        };
    }
    if known().all(|v| v.parse::<f64>().is_ok_and(f64::is_finite)) {
        let data = values
            .iter()
            .map(|v| v.parse::<f64>().unwrap_or(0.0))
            .collect();
        return Column {
            name: name.to_owned(),
            kind: AttrKind::Quantitative,
            data: ColumnData::F64(data),
            unknown,
        };
    }
    let mut interner = Interner::default();
    let codes = values
        .iter()
        .map(|v| {
            if is_unknown(v) {
                NONE
            } else {
                interner.code(v)
            }
        })
        .collect();
    Column {
        name: name.to_owned(),
        kind: AttrKind::Qualitative,
        data: ColumnData::Category {
            codes,
            labels: interner.labels,
        },
        unknown,
    }
}

/// Fills the typed core fields from the columns and appends the derived `level` column.
fn finish(
    format: SampleFormat,
    mut columns: Vec<Column>,
    level: Vec<MemLevel>,
    warnings: Warnings,
    rows: usize,
    file: &str,
    row_line: Vec<u64>,
) -> Result<Samples, SamplesError> {
    let ints = |columns: &[Column], name: &str| -> Option<(Vec<u64>, Bitset)> {
        columns
            .iter()
            .find(|c| c.name == name)
            .and_then(|c| match &c.data {
                ColumnData::U64(v) => Some((v.clone(), c.unknown.clone())),
                _ => None,
            })
    };
    let latency = ints(&columns, "latency")
        .or_else(|| ints(&columns, "weight"))
        .map(|(v, _)| v)
        .unwrap_or_else(|| vec![0; rows]);
    let cpu = ints(&columns, "cpu")
        .map(|(v, unknown)| {
            v.iter()
                .enumerate()
                .map(|(i, &c)| {
                    if unknown.get(i) {
                        NONE
                    } else {
                        u32::try_from(c).unwrap_or(NONE)
                    }
                })
                .collect()
        })
        .unwrap_or_else(|| vec![NONE; rows]);
    let data_node = ints(&columns, "node")
        .map(|(v, unknown)| {
            v.iter()
                .enumerate()
                .map(|(i, &c)| {
                    if unknown.get(i) {
                        NONE
                    } else {
                        u32::try_from(c).unwrap_or(NONE)
                    }
                })
                .collect()
        })
        .unwrap_or_else(|| vec![NONE; rows]);
    let category = |columns: &[Column], name: &str| -> Option<(Vec<u32>, Vec<String>)> {
        columns
            .iter()
            .find(|c| c.name == name)
            .and_then(|c| match &c.data {
                ColumnData::Category { codes, labels } => Some((codes.clone(), labels.clone())),
                _ => None,
            })
    };
    let (symbol, symbols) = category(&columns, "variable")
        .or_else(|| category(&columns, "sym"))
        .unwrap_or_else(|| (vec![NONE; rows], Vec::new()));
    // Source lines: `file:line`, unknown when the file is unknown.
    let mut lines_interner = Interner::default();
    let mut source_line = vec![NONE; rows];
    if let Some((files, file_labels)) = category(&columns, "source") {
        let line_numbers = ints(&columns, "line");
        for i in 0..rows {
            let code = files[i];
            if code == NONE {
                continue;
            }
            let Some(file) = file_labels.get(code as usize) else {
                continue;
            };
            let label = match &line_numbers {
                Some((v, unknown)) if !unknown.get(i) => format!("{file}:{}", v[i]),
                _ => format!("{file}:?"),
            };
            source_line[i] = lines_interner.code(&label);
        }
    }
    let level_codes: Vec<u32> = {
        let mut interner = Interner::default();
        let codes: Vec<u32> = level.iter().map(|l| interner.code(l.label())).collect();
        columns.push(Column {
            name: "level".into(),
            kind: AttrKind::Qualitative,
            data: ColumnData::Category {
                codes: codes.clone(),
                labels: interner.labels,
            },
            unknown: Bitset::new(rows),
        });
        codes
    };
    debug_assert_eq!(level_codes.len(), rows);
    tracing::debug!(rows, warnings = warnings.total(), "samples imported");
    Ok(Samples {
        format,
        latency,
        cpu,
        level,
        data_node,
        symbol,
        symbols,
        source_line,
        source_lines: lines_interner.labels,
        columns,
        warnings,
        file: file.to_owned(),
        row_line,
    })
}

// ------------------------------------------------------------------------------------------
// perf script

fn looks_like_perf_script(line: &str) -> bool {
    parse_perf_line(line).is_some()
}

/// One parsed `perf script` sample line.
#[derive(Debug, Clone, PartialEq)]
struct PerfLine<'a> {
    comm: &'a str,
    tid: u64,
    cpu: u64,
    time: f64,
    event: &'a str,
    addr: Option<u64>,
    data_src: Option<u64>,
    level_text: &'a str,
    weight: u64,
    ip: Option<u64>,
    sym: &'a str,
    dso: &'a str,
}

/// Parses one line of `perf script -F comm,tid,cpu,time,event,addr,data_src,weight,ip,sym,dso`
/// (the default field set of `perf mem report`'s raw dump is the same set):
///
/// ```text
/// COMM TID [CPU] SECONDS: [PERIOD] EVENT: ADDR DATA_SRC_HEX |OP …|LVL …|…| WEIGHT [more numbers] IP SYM[+OFF] (DSO)
/// ```
///
/// The comm may contain spaces (everything before the last number before `[CPU]`); the
/// decoded data source text runs from the first `|` to the weight (the first all-digit word
/// after the last `|`).
fn parse_perf_line(line: &str) -> Option<PerfLine<'_>> {
    let open = line.find(" [")?;
    let close = open + line[open..].find("] ")?;
    let cpu: u64 = line[open + 2..close].trim().parse().ok()?;
    let head = line[..open].trim_end();
    let (comm, tid_text) = head.rsplit_once(char::is_whitespace)?;
    // `pid/tid` when both were asked for.
    let tid: u64 = tid_text.rsplit('/').next()?.parse().ok()?;
    let rest = line[close + 1..].trim_start();
    let (time_text, rest) = rest.split_once(':')?;
    let time: f64 = time_text.trim().parse().ok()?;
    let first_bar = rest.find('|')?;
    let last_bar = rest.rfind('|')?;
    // The decoded text's last field has no closing bar (`|LCK No|BLK  N/A   34 …`): it runs up
    // to the first all-digit word after the last bar, the weight.
    let tail = &rest[last_bar + 1..];
    let mut weight_at = None;
    let mut scan = 0;
    for word in tail.split_whitespace() {
        let pos = scan + tail[scan..].find(word).unwrap_or(0);
        if word.bytes().all(|b| b.is_ascii_digit()) {
            weight_at = Some(last_bar + 1 + pos);
            break;
        }
        scan = pos + word.len();
    }
    let weight_at = weight_at?;
    let level_text = rest[first_bar..weight_at].trim_end();
    let before: Vec<&str> = rest[..first_bar].split_whitespace().collect();
    // before = [PERIOD] EVENT: ADDR DATA_SRC
    let event_pos = before.iter().position(|t| t.ends_with(':'))?;
    let event = before[event_pos].trim_end_matches(':');
    let hex = |t: &&str| u64::from_str_radix(t.trim_start_matches("0x"), 16).ok();
    let addr = before.get(event_pos + 1).and_then(hex);
    let data_src = before.get(event_pos + 2).and_then(hex);
    let after = rest[weight_at..].trim();
    let (after, dso) = match (after.rfind(" ("), after.ends_with(')')) {
        (Some(p), true) => (&after[..p], after[p + 2..after.len() - 1].trim()),
        _ => (after, ""),
    };
    let words: Vec<&str> = after.split_whitespace().collect();
    let weight: u64 = words.first()?.parse().ok()?;
    // After the weight: optional extra weights (decimal), the ip (hex), then the symbol. The
    // symbol is the first word that is not made of hex digits; the ip is the word before it.
    let is_hex = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_hexdigit());
    let sym_index = words.iter().skip(1).position(|w| !is_hex(w)).map(|p| p + 1);
    let ip_index = match sym_index {
        Some(s) if s >= 2 => Some(s - 1),
        Some(_) => None,
        None if words.len() >= 2 => Some(words.len() - 1),
        None => None,
    };
    let ip = ip_index.and_then(|i| u64::from_str_radix(words[i], 16).ok());
    let sym = match sym_index {
        Some(s) => {
            let pos = after.find(words[s]).unwrap_or(after.len());
            after[pos..].trim()
        }
        None => "",
    };
    Some(PerfLine {
        comm: comm.trim(),
        tid,
        cpu,
        time,
        event,
        addr,
        data_src,
        level_text,
        weight,
        ip,
        sym,
        dso,
    })
}

fn parse_perf_script(bytes: &[u8], file: &str) -> Result<Samples, SamplesError> {
    let mut warnings = Warnings::new();
    let mut comm = (Interner::default(), Vec::new());
    let mut event = (Interner::default(), Vec::new());
    let mut sym = (Interner::default(), Vec::new());
    let mut dso = (Interner::default(), Vec::new());
    let mut tid = Vec::new();
    let mut cpu = Vec::new();
    let mut time = Vec::new();
    let mut addr = Vec::new();
    let mut addr_unknown = Bitset::new(0);
    let mut data_src = Vec::new();
    let mut data_src_unknown = Bitset::new(0);
    let mut weight = Vec::new();
    let mut ip = Vec::new();
    let mut ip_unknown = Bitset::new(0);
    let mut sym_unknown = Bitset::new(0);
    let mut level = Vec::new();
    let mut row_lines: Vec<u64> = Vec::new();
    for (line_no, raw) in numbered_lines(bytes) {
        let Ok(text) = std::str::from_utf8(raw) else {
            warnings.add(
                "non_utf8_row",
                "line is not UTF-8; skipped",
                Location::line(file, line_no),
            );
            continue;
        };
        if text.trim().is_empty() || text.trim_start().starts_with('#') {
            continue;
        }
        let Some(p) = parse_perf_line(text) else {
            warnings.add(
                "bad_perf_line",
                "line is not `COMM TID [CPU] TIME: EVENT: ADDR DATA_SRC |…| WEIGHT IP SYM (DSO)`; skipped",
                Location::line(file, line_no),
            );
            continue;
        };
        let i = tid.len();
        row_lines.push(line_no);
        comm.1.push(comm.0.code(p.comm));
        event.1.push(event.0.code(p.event));
        if p.sym.is_empty() || p.sym == "[unknown]" {
            sym_unknown.set(i);
            sym.1.push(NONE);
        } else {
            // `main+0x14` → symbol `main`: offsets would split one variable into many.
            let name = p.sym.split('+').next().unwrap_or(p.sym);
            sym.1.push(sym.0.code(name));
        }
        dso.1.push(dso.0.code(p.dso));
        tid.push(p.tid);
        cpu.push(p.cpu);
        time.push(p.time);
        match p.addr {
            Some(a) => addr.push(a),
            None => {
                addr_unknown.set(i);
                addr.push(0);
            }
        }
        // perf prints 0 when the record carries no data source: fall back to its text.
        match p.data_src.filter(|&d| d != 0) {
            Some(d) => {
                data_src.push(d);
                level.push(MemLevel::from_perf_data_src(d));
            }
            None => {
                data_src_unknown.set(i);
                data_src.push(0);
                level.push(MemLevel::from_perf_text(p.level_text));
            }
        }
        weight.push(p.weight);
        match p.ip {
            Some(v) => ip.push(v),
            None => {
                ip_unknown.set(i);
                ip.push(0);
            }
        }
    }
    let rows = tid.len();
    if rows == 0 {
        return Err(SamplesError::Format {
            at: Location::line(file, 1),
            message: "no perf script sample line could be read".into(),
        });
    }
    let cat = |name: &str, (interner, codes): (Interner, Vec<u32>), unknown: Bitset| Column {
        name: name.into(),
        kind: AttrKind::Qualitative,
        data: ColumnData::Category {
            codes,
            labels: interner.labels,
        },
        unknown: pad(unknown, rows),
    };
    let int = |name: &str, kind: AttrKind, values: Vec<u64>, unknown: Bitset| Column {
        name: name.into(),
        kind,
        data: ColumnData::U64(values),
        unknown: pad(unknown, rows),
    };
    use AttrKind::{Qualitative as Ql, Quantitative as Qn};
    let columns = vec![
        cat("comm", comm, Bitset::new(rows)),
        int("tid", Ql, tid, Bitset::new(rows)),
        int("cpu", Ql, cpu.clone(), Bitset::new(rows)),
        Column {
            name: "time".into(),
            kind: Qn,
            data: ColumnData::F64(time),
            unknown: Bitset::new(rows),
        },
        cat("event", event, Bitset::new(rows)),
        int("addr", Qn, addr, addr_unknown),
        int("data_src", Ql, data_src, data_src_unknown),
        int("latency", Qn, weight, Bitset::new(rows)),
        int("ip", Ql, ip, ip_unknown),
        cat("sym", sym, sym_unknown),
        cat("dso", dso, Bitset::new(rows)),
    ];
    finish(
        SampleFormat::PerfScript,
        columns,
        level,
        warnings,
        rows,
        file,
        row_lines,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_line_variants() {
        let l = "            lulesh 4242 [003] 12345.678901:      30 cpu/mem-loads,ldlat=30/P:     7ffd0a1b2c30         68100142 |OP LOAD|LVL L1 hit|SNP None|TLB L1 or L2 hit|LCK No|BLK  N/A        34 401a2b CalcForce+0x2b (/home/u/lulesh)";
        let p = parse_perf_line(l).unwrap();
        assert_eq!(p.comm, "lulesh");
        assert_eq!((p.tid, p.cpu, p.weight), (4242, 3, 34));
        assert_eq!(p.event, "cpu/mem-loads,ldlat=30/P");
        assert_eq!(p.addr, Some(0x7ffd0a1b2c30));
        assert_eq!(p.data_src, Some(0x68100142));
        assert_eq!(p.ip, Some(0x401a2b));
        assert_eq!(p.sym, "CalcForce+0x2b");
        assert_eq!(p.dso, "/home/u/lulesh");
        // comm with a space, pid/tid, extra weights
        let l2 = "my prog 17/18 [000] 1.5: cpu/mem-loads/P: 1000 0 |OP LOAD|LVL N/A|SNP N/A| 120 0 0 ffffffff81001234 [unknown] ([kernel.kallsyms])";
        let p = parse_perf_line(l2).unwrap();
        assert_eq!(p.comm, "my prog");
        assert_eq!((p.tid, p.cpu, p.weight), (18, 0, 120));
        assert_eq!(p.ip, Some(0xffffffff81001234));
        assert_eq!(p.sym, "[unknown]");
        assert!(parse_perf_line("not a perf line").is_none());
    }
}
