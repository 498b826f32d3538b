//! pprof's `profile.proto` (github.com/google/pprof/proto/profile.proto), decoded by hand:
//!
//! ```text
//! Profile  1 sample_type: ValueType*   2 sample: Sample*     3 mapping: Mapping*
//!          4 location: Location*       5 function: Function* 6 string_table: string*
//!          7 drop_frames: int64 (string) 8 keep_frames         9 time_nanos  10 duration_nanos
//!          11 period_type: ValueType   12 period              13 comment*   14 default_sample_type
//! ValueType 1 type (string)  2 unit (string)
//! Sample    1 location_id: uint64* (leaf first)  2 value: int64*  3 label: Label*
//! Mapping   1 id  2 memory_start  3 memory_limit  4 file_offset  5 filename (string)  …
//! Location  1 id  2 mapping_id  3 address  4 line: Line* (innermost inlined call first)
//! Line      1 function_id  2 line
//! Function  1 id  2 name (string)  3 system_name  4 filename (string)  5 start_line
//! ```
//!
//! Strings are indices into `string_table` (index 0 is ""). Unknown fields are skipped. Frames
//! are functions (pprof's default granularity: the lines of one function merge), or addresses
//! in their mapping when a location has no symbol. `drop_frames` (a regex on function names)
//! prunes stacks as pprof does (see [`super::prune`]). Negative values (diff profiles) count as 0 with a warning.

use std::collections::HashMap;

use memscape_io::{Location as At, Warnings};

use super::proto::{Reader, Value, WireError, Writer, push_varints};
use super::{
    Frame, Frames, ProfileError, ProfileFormat, ProfileSnapshot, Sample, SampleType, StackProfile,
    prune,
};

/// A cheap check that `content` is a profile.proto message: it walks the top-level fields and
/// requires a string table, a sample type, and nothing but the fields `profile.proto` defines.
pub fn looks_like_profile(content: &[u8]) -> bool {
    let mut r = Reader::new(content, 0);
    let (mut strings, mut types) = (false, false);
    loop {
        match r.next_field() {
            Ok(Some((field, value))) => {
                if !(1..=14).contains(&field) {
                    return false;
                }
                let len_field = matches!(field, 1..=6 | 11);
                if len_field != value.bytes().is_some() && field != 13 {
                    return false;
                }
                strings |= field == 6;
                types |= field == 1;
            }
            Ok(None) => return strings && types,
            Err(_) => return false,
        }
    }
}

struct Raw<'a> {
    strings: Vec<String>,
    sample_types: Vec<(i64, i64)>,
    samples: Vec<(&'a [u8], usize)>,
    mappings: HashMap<u64, String>,
    locations: HashMap<u64, RawLocation>,
    functions: HashMap<u64, (i64, i64)>,
    drop_frames: i64,
    keep_frames: i64,
    time_nanos: i64,
    default_sample_type: i64,
}

struct RawLocation {
    mapping: u64,
    address: u64,
    /// (function id, line), innermost first.
    lines: Vec<(u64, i64)>,
}

fn wire(name: &str, e: WireError) -> ProfileError {
    ProfileError::Malformed {
        at: At::offset(name, e.offset as u64),
        message: format!("not a valid profile.proto: {}", e.message),
    }
}

fn message_fields<'a>(
    bytes: &'a [u8],
    at: usize,
    mut each: impl FnMut(u32, Value<'a>) -> Result<(), WireError>,
) -> Result<(), WireError> {
    let mut r = Reader::new(bytes, at);
    while let Some((field, value)) = r.next_field()? {
        each(field, value)?;
    }
    Ok(())
}

fn decode(content: &[u8]) -> Result<Raw<'_>, WireError> {
    let mut raw = Raw {
        strings: Vec::new(),
        sample_types: Vec::new(),
        samples: Vec::new(),
        mappings: HashMap::new(),
        locations: HashMap::new(),
        functions: HashMap::new(),
        drop_frames: 0,
        keep_frames: 0,
        time_nanos: 0,
        default_sample_type: 0,
    };
    let mut mapping_names: Vec<(u64, i64)> = Vec::new();
    message_fields(content, 0, |field, value| {
        match (field, value.bytes()) {
            (1, Some((b, at))) => {
                let (mut t, mut u) = (0, 0);
                message_fields(b, at, |f, v| {
                    match f {
                        1 => t = v.as_i64(),
                        2 => u = v.as_i64(),
                        _ => {}
                    }
                    Ok(())
                })?;
                raw.sample_types.push((t, u));
            }
            (2, Some(sample)) => raw.samples.push(sample),
            (3, Some((b, at))) => {
                let (mut id, mut file) = (0, 0);
                message_fields(b, at, |f, v| {
                    match f {
                        1 => id = v.as_u64(),
                        5 => file = v.as_i64(),
                        _ => {}
                    }
                    Ok(())
                })?;
                mapping_names.push((id, file));
            }
            (4, Some((b, at))) => {
                let mut id = 0;
                let mut loc = RawLocation {
                    mapping: 0,
                    address: 0,
                    lines: Vec::new(),
                };
                message_fields(b, at, |f, v| {
                    match (f, v.bytes()) {
                        (1, _) => id = v.as_u64(),
                        (2, _) => loc.mapping = v.as_u64(),
                        (3, _) => loc.address = v.as_u64(),
                        (4, Some((lb, lat))) => {
                            let (mut function, mut line) = (0, 0);
                            message_fields(lb, lat, |f, v| {
                                match f {
                                    1 => function = v.as_u64(),
                                    2 => line = v.as_i64(),
                                    _ => {}
                                }
                                Ok(())
                            })?;
                            loc.lines.push((function, line));
                        }
                        _ => {}
                    }
                    Ok(())
                })?;
                raw.locations.insert(id, loc);
            }
            (5, Some((b, at))) => {
                let (mut id, mut name, mut file) = (0, 0, 0);
                message_fields(b, at, |f, v| {
                    match f {
                        1 => id = v.as_u64(),
                        2 => name = v.as_i64(),
                        4 => file = v.as_i64(),
                        _ => {}
                    }
                    Ok(())
                })?;
                raw.functions.insert(id, (name, file));
            }
            (6, Some((b, _))) => raw.strings.push(String::from_utf8_lossy(b).into_owned()),
            (7, None) => raw.drop_frames = value.as_i64(),
            (8, None) => raw.keep_frames = value.as_i64(),
            (9, None) => raw.time_nanos = value.as_i64(),
            (14, None) => raw.default_sample_type = value.as_i64(),
            _ => {}
        }
        Ok(())
    })?;
    for (id, file) in mapping_names {
        let name = raw.string(file).to_owned();
        raw.mappings.insert(id, name);
    }
    Ok(raw)
}

impl Raw<'_> {
    fn string(&self, index: i64) -> &str {
        usize::try_from(index)
            .ok()
            .and_then(|i| self.strings.get(i))
            .map_or("", String::as_str)
    }
}

/// Parses a decompressed `profile.proto`.
pub fn parse(name: &str, content: &[u8]) -> Result<StackProfile, ProfileError> {
    let raw = decode(content).map_err(|e| wire(name, e))?;
    let mut warnings = Warnings::new();
    let at = || At::offset(name, 0);
    let sample_types: Vec<SampleType> = raw
        .sample_types
        .iter()
        .map(|&(t, u)| SampleType {
            name: raw.string(t).to_owned(),
            unit: raw.string(u).to_owned(),
        })
        .collect();
    if sample_types.is_empty() {
        return Err(ProfileError::Unusable {
            source_name: name.to_owned(),
            message: "the profile declares no sample type".to_owned(),
        });
    }
    let default_name = raw.string(raw.default_sample_type);
    let default_type = sample_types
        .iter()
        .position(|t| !default_name.is_empty() && t.name == default_name)
        .unwrap_or(sample_types.len() - 1);
    let regex = |index: i64, what: &str, warnings: &mut Warnings| {
        let text = raw.string(index);
        if text.is_empty() {
            return None;
        }
        match regex::Regex::new(&format!("^(?:{text})$")) {
            Ok(r) => Some(r),
            Err(e) => {
                warnings.add("bad_regex", format!("{what} {text:?}: {e}"), at());
                None
            }
        }
    };
    let drop = regex(raw.drop_frames, "drop_frames", &mut warnings);
    let keep = regex(raw.keep_frames, "keep_frames", &mut warnings);

    let mut frames = Frames::default();
    // Each location's frames (innermost inlined first), with their function names for
    // drop_frames.
    let mut location_frames: HashMap<u64, Vec<(u32, String)>> = HashMap::new();
    for (&id, loc) in &raw.locations {
        let module = raw.mappings.get(&loc.mapping).cloned().unwrap_or_default();
        let mut list = Vec::new();
        for &(function, _line) in &loc.lines {
            let (fname, file) = raw.functions.get(&function).copied().unwrap_or((0, 0));
            let function = raw.string(fname).to_owned();
            if function.is_empty() {
                continue;
            }
            let frame = Frame {
                function: function.clone(),
                file: raw.string(file).to_owned(),
                ..Frame::default()
            };
            list.push((frames.intern(frame), function));
        }
        if list.is_empty() {
            let frame = Frame {
                module,
                address: loc.address,
                ..Frame::default()
            };
            list.push((frames.intern(frame), String::new()));
        }
        location_frames.insert(id, list);
    }

    let mut samples = Vec::with_capacity(raw.samples.len());
    let (mut ids, mut values) = (Vec::new(), Vec::new());
    for &(bytes, offset) in &raw.samples {
        ids.clear();
        values.clear();
        message_fields(bytes, offset, |f, v| match f {
            1 => push_varints(&v, &mut ids),
            2 => push_varints(&v, &mut values),
            _ => Ok(()),
        })
        .map_err(|e| wire(name, e))?;
        let mut stack: Vec<(u32, &str)> = Vec::with_capacity(ids.len());
        for id in &ids {
            match location_frames.get(id) {
                Some(list) => stack.extend(list.iter().map(|(f, n)| (*f, n.as_str()))),
                None => warnings.add(
                    "unknown_location",
                    format!("a sample refers to location {id}, which the profile does not define"),
                    At::offset(name, offset as u64),
                ),
            }
        }
        if let Some(drop) = &drop {
            prune(&mut stack, drop, keep.as_ref());
        }
        let mut sample_values = vec![0u64; sample_types.len()];
        for (slot, &v) in sample_values.iter_mut().zip(&values) {
            let v = v as i64;
            if v < 0 {
                warnings.add(
                    "negative_value",
                    format!("a sample value {v} (a difference profile?) is counted as 0"),
                    At::offset(name, offset as u64),
                );
            }
            *slot = v.max(0) as u64;
        }
        if values.len() != sample_types.len() {
            warnings.add(
                "value_count",
                format!(
                    "a sample has {} values for {} sample types",
                    values.len(),
                    sample_types.len()
                ),
                At::offset(name, offset as u64),
            );
        }
        samples.push(Sample {
            stack: stack.into_iter().map(|(f, _)| f).collect(),
            values: sample_values,
        });
    }
    Ok(StackProfile {
        source: name.to_owned(),
        format: ProfileFormat::Pprof,
        sample_types,
        default_type,
        frames,
        snapshots: vec![ProfileSnapshot {
            source: name.to_owned(),
            time_ns: (raw.time_nanos != 0).then_some(raw.time_nanos),
            samples,
        }],
        warnings,
    })
}

/// What [`encode`] writes: sample types and samples over named frames.
pub struct EncodeInput<'a> {
    pub sample_types: &'a [SampleType],
    pub default_type: usize,
    pub frames: &'a [Frame],
    /// Stacks leaf first (frame indices) with one value per sample type.
    pub samples: &'a [Sample],
    pub time_nanos: i64,
}

/// Encodes a profile.proto message (not compressed): one function and one location per frame.
pub fn encode(input: &EncodeInput<'_>) -> Vec<u8> {
    let mut strings: Vec<String> = vec![String::new()];
    let mut string_index: HashMap<String, i64> = HashMap::from([(String::new(), 0)]);
    let mut intern = |s: &str| -> i64 {
        if let Some(&i) = string_index.get(s) {
            return i;
        }
        let i = strings.len() as i64;
        strings.push(s.to_owned());
        string_index.insert(s.to_owned(), i);
        i
    };
    let mut out = Writer::default();
    for t in input.sample_types {
        let mut vt = Writer::default();
        vt.int(1, intern(&t.name));
        vt.int(2, intern(&t.unit));
        out.message(1, &vt);
    }
    for s in input.samples {
        let mut m = Writer::default();
        m.packed(1, s.stack.iter().map(|&f| u64::from(f) + 1));
        m.packed(2, s.values.iter().copied());
        out.message(2, &m);
    }
    // Mappings: one per module named by a frame.
    let mut modules: Vec<&str> = input
        .frames
        .iter()
        .map(|f| f.module.as_str())
        .filter(|m| !m.is_empty())
        .collect();
    modules.sort_unstable();
    modules.dedup();
    for (i, m) in modules.iter().enumerate() {
        let mut w = Writer::default();
        w.varint(1, i as u64 + 1);
        w.int(5, intern(m));
        out.message(3, &w);
    }
    for (i, f) in input.frames.iter().enumerate() {
        let id = i as u64 + 1;
        let mut loc = Writer::default();
        loc.varint(1, id);
        if let Ok(m) = modules.binary_search(&f.module.as_str()) {
            loc.varint(2, m as u64 + 1);
        }
        loc.varint(3, f.address);
        let function = if f.function.is_empty() {
            f.display_name()
        } else {
            f.function.clone()
        };
        let mut line = Writer::default();
        line.varint(1, id);
        line.int(2, i64::from(f.line));
        loc.message(4, &line);
        out.message(4, &loc);
        let mut func = Writer::default();
        func.varint(1, id);
        let name = intern(&function);
        func.int(2, name);
        func.int(3, name);
        func.int(4, intern(&f.file));
        out.message(5, &func);
    }
    out.int(9, input.time_nanos);
    let default = input
        .sample_types
        .get(input.default_type)
        .map_or(0, |t| intern(&t.name));
    out.int(14, default);
    for s in &strings {
        out.bytes(6, s.as_bytes());
    }
    out.buf
}
