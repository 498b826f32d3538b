//! Legacy text heap profiles, as gperftools' heap profiler, jemalloc (`prof:true`) and Go
//! (`pprof.Lookup("heap").WriteTo(w, 1)`) write them and `pprof`/`jeprof` read them:
//!
//! ```text
//! heap profile: <inuse objs>: <inuse bytes> [<alloc objs>: <alloc bytes>] @ heapprofile|heap/<2·rate>|heap_v2/<rate>
//! <inuse objs>: <inuse bytes> [<alloc objs>: <alloc bytes>] @ 0x… 0x…     (one line per stack)
//! #<TAB>0x4b3c0e<TAB>main.leak+0x2e<TAB>/src/main.go:14                  (Go: symbols, tab-separated)
//!
//! heap_v2/<rate>                                                  (jemalloc)
//!   t*: <inuse objs>: <inuse bytes> [<alloc objs>: <alloc bytes>]    (totals)
//! @ 0x… 0x…
//!   t*: …                                                            (this stack, all threads)
//!   t<n>: …                                                          (per thread: not used)
//!
//! MAPPED_LIBRARIES:   (or --- Memory map: ---)
//! <start>-<end> <perms> <offset> <dev> <inode> <path>                 (/proc/self/maps)
//! ```
//!
//! As pprof: addresses are return addresses (one is subtracted to land on the call); sampled
//! profiles (rate > 1) are unsampled by `1 / (1 − e^(−size/rate))` with `size` the average
//! object size of the stack; the allocator's own frames (`malloc`, `operator new`, tcmalloc and
//! jemalloc internals, frames in `libjemalloc`/`libtcmalloc`) are pruned. Frames are named from
//! Go's `#` lines, else from the binaries of the memory map when they exist on this machine
//! (DWARF and symbol tables), else they are addresses in their binary.

use std::collections::HashMap;
use std::path::Path;

use memscape_io::{Location as At, Warnings, numbered_lines};

use super::{Frame, Frames, ProfileError, ProfileFormat, Sample, StackProfile, prune};

/// pprof's `allocRxStr` for legacy heap profiles: allocator entry points and internals (and
/// Rust's global-allocator plumbing, for dhat-rs).
pub(super) const ALLOCATOR_FRAMES: &str = r"calloc|cfree|malloc|free|memalign|do_memalign|(__)?posix_memalign|pvalloc|valloc|realloc|aligned_alloc|tcmalloc::.*|tc_calloc|tc_cfree|tc_malloc|tc_free|tc_memalign|tc_posix_memalign|tc_pvalloc|tc_valloc|tc_realloc|tc_new|tc_delete|tc_newarray|tc_deletearray|tc_new_nothrow|tc_newarray_nothrow|je_.*|runtime\..*|BaseArena::.*|(::)?do_malloc_no_errno|(::)?do_malloc_pages|(::)?do_malloc|DoSampledAllocation|MallocedMemBlock::MallocedMemBlock|_M_allocate|__builtin_(vec_)?delete|__builtin_(vec_)?new|__gnu_cxx::new_allocator::allocate|__libc_malloc|__malloc_alloc_template::allocate|allocate|cpp_alloc|operator new(\[\])?|simple_alloc::allocate|alloc::alloc::.*|alloc::raw_vec::.*|__rust_alloc|__rust_alloc_zeroed|__rust_realloc|__rdl_.*";

/// Go runtime frames kept in the middle of stacks (pprof's `allocSkipRxStr`).
const KEEP_FRAMES: &str = r"runtime\.panic|runtime\.reflectcall|runtime\.call[0-9]*";

/// The four values of a record: in-use objects and bytes, allocated objects and bytes.
type Record = [u64; 4];

/// One mapping of the memory map.
struct Mapping {
    start: u64,
    end: u64,
    offset: u64,
    path: String,
}

fn malformed(name: &str, line: u64, message: impl Into<String>) -> ProfileError {
    ProfileError::Malformed {
        at: At::line(name, line),
        message: message.into(),
    }
}

/// `a: b [c: d]` → the four numbers.
fn parse_counts(text: &str) -> Option<Record> {
    let (inuse, rest) = text.split_once('[')?;
    let alloc = rest.split_once(']')?.0;
    let pair = |s: &str| -> Option<(u64, u64)> {
        let (a, b) = s.split_once(':')?;
        Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
    };
    let (io, ib) = pair(inuse)?;
    let (ao, ab) = pair(alloc)?;
    Some([io, ib, ao, ab])
}

fn parse_addresses(text: &str) -> Option<Vec<u64>> {
    text.split_whitespace()
        .map(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok())
        .collect()
}

/// pprof's `scaleHeapSample`: the expected unsampled (count, size).
fn unsample(count: u64, size: u64, rate: u64) -> (u64, u64) {
    if count == 0 || size == 0 {
        return (0, 0);
    }
    if rate <= 1 {
        return (count, size);
    }
    let average = size as f64 / count as f64;
    let scale = 1.0 / (1.0 - (-average / rate as f64).exp());
    ((count as f64 * scale) as u64, (size as f64 * scale) as u64)
}

fn is_map_sentinel(line: &str) -> bool {
    line.contains("MAPPED_LIBRARIES:") || line.contains("--- Memory map:")
}

/// Parses a legacy text heap profile.
pub fn parse(name: &str, bytes: &[u8]) -> Result<StackProfile, ProfileError> {
    let mut warnings = Warnings::new();
    let mut lines = numbered_lines(bytes)
        .map(|(n, l)| (n, String::from_utf8_lossy(l).trim_end().to_owned()))
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((header_line, header)) = lines.next() else {
        return Err(malformed(name, 1, "empty heap profile"));
    };
    let (threaded, rate) = if let Some(rest) = header.strip_prefix("heap_v2/") {
        (true, rest.trim().parse::<u64>().unwrap_or(0))
    } else if let Some(rest) = header.strip_prefix("heap profile:") {
        let kind = rest.rsplit_once('@').map_or("", |(_, k)| k.trim());
        let (kind, n) = kind.split_once('/').unwrap_or((kind, ""));
        let n: u64 = n.trim().parse().unwrap_or(0);
        let rate = match kind {
            "heapprofile" => 1,
            "heap" => n / 2,
            "heap_v2" | "heapz_v2" => n,
            other => {
                return Err(malformed(
                    name,
                    header_line,
                    format!(
                        "unknown heap profile kind {other:?} (expected heapprofile, heap/N or heap_v2/N)"
                    ),
                ));
            }
        };
        (false, rate)
    } else {
        return Err(malformed(
            name,
            header_line,
            "expected `heap profile: …` or `heap_v2/…`",
        ));
    };

    // Records: (stack of return addresses, values).
    let mut records: Vec<(Vec<u64>, Record)> = Vec::new();
    let mut symbols: HashMap<u64, (String, String, u32)> = HashMap::new();
    let mut mappings = Vec::new();
    let mut stack: Option<Vec<u64>> = None;
    let mut in_map = false;
    for (n, line) in lines {
        let text = line.trim();
        if in_map {
            if let Some(m) = parse_mapping(text) {
                mappings.push(m);
            }
            continue;
        }
        if is_map_sentinel(text) {
            in_map = true;
            continue;
        }
        if let Some(comment) = text.strip_prefix('#') {
            if let Some((addr, symbol)) = parse_go_symbol(comment) {
                symbols.insert(addr, symbol);
            }
            continue;
        }
        if threaded {
            if let Some(addrs) = text.strip_prefix('@') {
                match parse_addresses(addrs) {
                    Some(a) => stack = Some(a),
                    None => warnings.add(
                        "malformed_line",
                        "a stack with something else than hexadecimal addresses",
                        At::line(name, n),
                    ),
                }
            } else if let Some(counts) = text.strip_prefix("t*:") {
                // Before the first stack: the profile's totals.
                if let (Some(stack), Some(values)) = (stack.take(), parse_counts(counts)) {
                    records.push((stack, values));
                }
            } else if !text.starts_with('t') {
                warnings.add("malformed_line", format!("{text:?}"), At::line(name, n));
            }
            continue;
        }
        let parsed = text
            .split_once('@')
            .and_then(|(counts, addrs)| Some((parse_counts(counts)?, parse_addresses(addrs)?)));
        match parsed {
            Some((values, addrs)) => records.push((addrs, values)),
            None => warnings.add(
                "malformed_line",
                format!("expected `objects: bytes [objects: bytes] @ addresses`, found {text:?}"),
                At::line(name, n),
            ),
        }
    }
    if records.is_empty() && warnings.count("malformed_line") > 0 {
        return Err(malformed(name, header_line, "no record could be read"));
    }

    let frames_of = resolve_frames(&records, &symbols, &mappings);
    let drop = regex::Regex::new(&format!("^(?:{ALLOCATOR_FRAMES})$")).ok();
    let keep = regex::Regex::new(&format!("^(?:{KEEP_FRAMES})$")).ok();
    let mut frames = Frames::default();
    let mut samples = Vec::with_capacity(records.len());
    for (addrs, [io, ib, ao, ab]) in &records {
        let mut stack: Vec<(u32, &str)> = Vec::with_capacity(addrs.len());
        for a in addrs {
            if let Some((frame, match_name)) = frames_of.get(a) {
                stack.push((frames.intern(frame.clone()), match_name.as_str()));
            }
        }
        if let Some(drop) = &drop {
            prune(&mut stack, drop, keep.as_ref());
        }
        let (io, ib) = unsample(*io, *ib, rate);
        let (ao, ab) = unsample(*ao, *ab, rate);
        samples.push(Sample {
            stack: stack.into_iter().map(|(f, _)| f).collect(),
            values: vec![ao, ab, io, ib],
        });
    }
    let types = [
        ("alloc_objects", "count"),
        ("alloc_space", "bytes"),
        ("inuse_objects", "count"),
        ("inuse_space", "bytes"),
    ];
    Ok(StackProfile::single(
        name,
        ProfileFormat::HeapText,
        &types,
        3,
        frames,
        samples,
        warnings,
    ))
}

/// `<start>-<end> <perms> <offset> <dev> <inode> <path>`; mappings without a path are skipped.
fn parse_mapping(line: &str) -> Option<Mapping> {
    let mut fields = line.split_whitespace();
    let (start, end) = fields.next()?.split_once('-')?;
    let _perms = fields.next()?;
    let offset = fields.next()?;
    let _dev = fields.next()?;
    let _inode = fields.next()?;
    let path: Vec<&str> = fields.collect();
    if path.is_empty() || !path[0].starts_with('/') {
        return None;
    }
    Some(Mapping {
        start: u64::from_str_radix(start, 16).ok()?,
        end: u64::from_str_radix(end, 16).ok()?,
        offset: u64::from_str_radix(offset, 16).ok()?,
        path: path.join(" "),
    })
}

/// Go's `#\t0x4b3c0e\tmain.leak+0x2e\t\t/src/main.go:14`.
fn parse_go_symbol(comment: &str) -> Option<(u64, (String, String, u32))> {
    let mut fields = comment.split('\t').filter(|f| !f.is_empty());
    let addr = u64::from_str_radix(fields.next()?.trim().trim_start_matches("0x"), 16).ok()?;
    let function = fields.next()?.trim();
    let function = function.rsplit_once("+0x").map_or(function, |(f, _)| f);
    let location = fields.next().unwrap_or("").trim();
    let (file, line) = location
        .rsplit_once(':')
        .and_then(|(f, l)| Some((f.to_owned(), l.parse().ok()?)))
        .unwrap_or_else(|| (location.to_owned(), 0));
    Some((addr, (function.to_owned(), file, line)))
}

/// A frame (and the name pruning matches) for every return address of the records.
fn resolve_frames(
    records: &[(Vec<u64>, Record)],
    symbols: &HashMap<u64, (String, String, u32)>,
    mappings: &[Mapping],
) -> HashMap<u64, (Frame, String)> {
    let mut addresses: Vec<u64> = records
        .iter()
        .flat_map(|(a, _)| a.iter().copied())
        .collect();
    addresses.sort_unstable();
    addresses.dedup();
    let mut out = HashMap::with_capacity(addresses.len());
    let mut symbolizers: HashMap<usize, Option<Symbolizer>> = HashMap::new();
    for &ret in &addresses {
        let call = ret.saturating_sub(1);
        let mapping = mappings
            .iter()
            .position(|m| (m.start..m.end).contains(&call));
        let module = mapping.map_or("", |m| mappings[m].path.as_str());
        let symbol = symbols.get(&call).cloned().or_else(|| {
            let m = mapping?;
            let s = symbolizers
                .entry(m)
                .or_insert_with(|| Symbolizer::open(&mappings[m]));
            s.as_ref()?.lookup(call)
        });
        let (frame, match_name) = match symbol {
            Some((function, file, _line)) => {
                let frame = Frame {
                    function: function.clone(),
                    file,
                    ..Frame::default()
                };
                (frame, function)
            }
            None => {
                let frame = Frame {
                    module: module.to_owned(),
                    address: call,
                    ..Frame::default()
                };
                // An allocator library's unnamed frames are pruned like its named ones.
                let lib = super::file_name(module);
                let name = if lib.contains("jemalloc") || lib.contains("tcmalloc") {
                    "malloc"
                } else {
                    ""
                };
                (frame, name.to_owned())
            }
        };
        out.insert(ret, (frame, match_name));
    }
    out
}

/// Symbols of one mapped binary, when it exists here.
struct Symbolizer {
    loader: addr2line::Loader,
    /// Subtracted from a runtime address to get the address in the file (0 for non-PIE
    /// executables, which are mapped at their link address).
    bias: u64,
}

impl Symbolizer {
    fn open(mapping: &Mapping) -> Option<Self> {
        let path = Path::new(&mapping.path);
        let data = std::fs::read(path).ok()?;
        let kind = object::File::parse(data.as_slice()).ok().map(|f| {
            use object::Object as _;
            f.kind()
        });
        let bias = if kind == Some(object::ObjectKind::Executable) {
            0
        } else {
            mapping.start.wrapping_sub(mapping.offset)
        };
        let loader = addr2line::Loader::new(path).ok()?;
        Some(Self { loader, bias })
    }

    fn lookup(&self, address: u64) -> Option<(String, String, u32)> {
        let probe = address.wrapping_sub(self.bias);
        let mut function = None;
        if let Ok(mut frames) = self.loader.find_frames(probe) {
            // The last frame of an inlined chain is the function the address is in.
            while let Ok(Some(f)) = frames.next() {
                if let Some(name) = f
                    .function
                    .and_then(|n| n.demangle().ok().map(|d| d.into_owned()))
                {
                    function = Some(name);
                }
            }
        }
        let function = function.or_else(|| {
            self.loader
                .find_symbol(probe)
                .map(|s| addr2line::demangle_auto(s.into(), None).into_owned())
        })?;
        let (file, line) = self
            .loader
            .find_location(probe)
            .ok()
            .flatten()
            .map(|l| (l.file.unwrap_or("").to_owned(), l.line.unwrap_or(0)))
            .unwrap_or_default();
        Some((function, file, line))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn records_and_unsampling_follow_pprof() {
        assert_eq!(parse_counts(" 3: 12 [ 4: 16]"), Some([3, 12, 4, 16]));
        assert_eq!(unsample(2, 100, 1), (2, 100));
        // One 512 KiB object sampled at rate 512 KiB: scale 1 / (1 − e⁻¹).
        let (c, s) = unsample(1, 524_288, 524_288);
        assert_eq!((c, s), (1, 829_411));
        let go = "\t0x4b3c0e\tmain.leak+0x2e\t\t/tmp/main.go:14";
        assert_eq!(
            parse_go_symbol(go),
            Some((0x4b3c0e, ("main.leak".into(), "/tmp/main.go".into(), 14)))
        );
    }

    #[test]
    fn malformed_headers_name_their_line() {
        let e = parse("x.heap", b"\nheap profile: 1: 2 [3: 4] @ cpu/5\n").unwrap_err();
        assert!(e.to_string().starts_with("x.heap:2:"), "{e}");
    }
}
