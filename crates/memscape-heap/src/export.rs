//! Any heap tree at a time point, handed to the tools people already use: pprof's
//! `profile.proto` (gzipped; `go tool pprof`, Pyroscope, speedscope read it) and collapsed
//! stacks (`outermost;…;innermost value` per line: inferno, FlameGraph, speedscope).
//!
//! The tree is the one `memscape heaptree` shows, before pruning, at the same time point and
//! with the same grouping: every trie node with a value of its own becomes one sample whose
//! stack is its path. Allocation traces grouped by `path` give real call stacks; grouped by
//! `site`, one-frame stacks; massif and profiles, their call trees.

use std::io::Write as _;

use crate::massif_tree::MassifHeap;
use crate::profile::pprof::{EncodeInput, encode};
use crate::profile::{Frame, Frames, ProfileHeap, Sample, SampleType};
use crate::report::{
    HeapError, HeapInput, HeapTreeOptions, massif_point, profile_point, trace_point,
};
use crate::trace_tree::TraceHeap;
use crate::trie::{GroupTrie, Sizes};

/// The formats `memscape export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// gzipped `profile.proto`.
    Pprof,
    /// `a;b;c 123` lines.
    Collapsed,
}

impl ExportFormat {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "pprof" => Some(ExportFormat::Pprof),
            "collapsed" | "folded" => Some(ExportFormat::Collapsed),
            _ => None,
        }
    }
}

/// A heap tree at one time point, unpruned.
pub struct HeapAt {
    pub trie: GroupTrie,
    pub sizes: Sizes,
    /// The trie runs from the allocating frame to its callers (massif, profiles): stacks are
    /// the paths reversed. Otherwise (trace groupings) the first key is the outermost.
    pub callers_below: bool,
    /// Names of the two values: (count type, bytes type), as pprof sample types.
    pub sample_types: [SampleType; 2],
    /// When: ns since the epoch if known (pprof `time_nanos`), else 0.
    pub time_nanos: i64,
}

fn types(objects: &str, bytes: &str, unit: &str) -> [SampleType; 2] {
    [
        SampleType {
            name: objects.to_owned(),
            unit: "count".to_owned(),
        },
        SampleType {
            name: bytes.to_owned(),
            unit: unit.to_owned(),
        },
    ]
}

/// The heap of `input` at the time point and grouping of `options` (as `heaptree`).
pub fn heap_at(input: &HeapInput, options: &HeapTreeOptions) -> Result<HeapAt, HeapError> {
    match input {
        HeapInput::Trace(trace) => {
            let mut heap = TraceHeap::with_options(trace, &options.group, &options.heap);
            let applied = trace_point(trace, &heap, options.select)?;
            Ok(HeapAt {
                sizes: heap.sizes_at(applied),
                trie: heap.trie().clone(),
                callers_below: false,
                sample_types: types("inuse_objects", "inuse_space", "bytes"),
                time_nanos: 0,
            })
        }
        HeapInput::Massif(file) => {
            let heap = MassifHeap::new(file);
            let (snapshot, point) = massif_point(file, &heap, options.select)?;
            let sizes = heap.sizes(point).ok_or_else(|| HeapError::NoTree {
                source_name: file.source.clone(),
                requested: file.snapshots.get(snapshot).map_or(0, |s| s.number),
                available: Vec::new(),
            })?;
            Ok(HeapAt {
                trie: heap.trie().clone(),
                sizes,
                callers_below: true,
                sample_types: types("objects", "inuse_space", "bytes"),
                time_nanos: 0,
            })
        }
        HeapInput::Profile(profile) => {
            let measure = profile.measure(options.measure.as_deref())?;
            let name = |i: Option<usize>, fallback: &str| {
                i.and_then(|i| profile.sample_types.get(i))
                    .map_or_else(|| fallback.to_owned(), |t| t.name.clone())
            };
            let objects = name(measure.objects.filter(|&o| o != measure.bytes), "objects");
            let bytes = name(Some(measure.bytes), "space");
            let unit = measure.unit.clone();
            let heap = ProfileHeap::new(profile, measure);
            let point = profile_point(profile, &heap, options.select)?;
            Ok(HeapAt {
                trie: heap.trie().clone(),
                sizes: heap.sizes(point).unwrap_or_default(),
                callers_below: true,
                sample_types: types(&objects, &bytes, &unit),
                time_nanos: profile
                    .snapshots
                    .get(point)
                    .and_then(|s| s.time_ns)
                    .unwrap_or(0),
            })
        }
    }
}

/// Every trie node with a value of its own: (node, own objects, own bytes). Own = the node's
/// subtree minus its children's subtrees.
fn own_values(heap: &HeapAt) -> Vec<(u32, u64, u64)> {
    let mut out = Vec::new();
    for n in 0..heap.trie.len() as u32 {
        let children = heap.trie.children(n);
        let sum = |f: &dyn Fn(u32) -> u64| children.iter().map(|&c| f(c)).sum::<u64>();
        let bytes = heap
            .sizes
            .bytes(n)
            .saturating_sub(sum(&|c| heap.sizes.bytes(c)));
        let objects = heap
            .sizes
            .objects(n)
            .saturating_sub(sum(&|c| heap.sizes.objects(c)));
        if bytes > 0 || objects > 0 {
            out.push((n, objects, bytes));
        }
    }
    out
}

/// The path of a node as stack frames, outermost first.
fn stack_of(heap: &HeapAt, node: u32) -> Vec<u32> {
    let mut path = heap.trie.path_to_root(node);
    path.remove(0); // the root
    if path.is_empty() {
        path.push(0);
    }
    if heap.callers_below {
        path.reverse();
    }
    path
}

/// Collapsed stacks: `outermost;…;innermost value` per stack with a value of its own, `value`
/// being bytes (or objects with `objects`). `;` in names becomes `:` (the separator).
pub fn collapsed(heap: &HeapAt, objects: bool) -> String {
    let mut out = String::new();
    for (node, own_objects, own_bytes) in own_values(heap) {
        let value = if objects { own_objects } else { own_bytes };
        if value == 0 {
            continue;
        }
        let names: Vec<String> = stack_of(heap, node)
            .into_iter()
            .map(|n| heap.trie.name(n).replace(';', ":").replace('\n', " "))
            .collect();
        out.push_str(&names.join(";"));
        out.push(' ');
        out.push_str(&value.to_string());
        out.push('\n');
    }
    out
}

/// A frame from a tree node's name: `function (file:line)`, `function (in module)`,
/// `0xADDR (in module)` or a plain name.
fn frame_of_name(name: &str) -> Frame {
    let (head, place) = match name.strip_suffix(')').and_then(|n| n.rsplit_once(" (")) {
        Some((h, p)) => (h, p),
        None => (name, ""),
    };
    let mut frame = Frame::default();
    if let Some(hex) = head.strip_prefix("0x")
        && let Ok(address) = u64::from_str_radix(hex, 16)
    {
        frame.address = address;
    } else {
        frame.function = head.to_owned();
    }
    if let Some(module) = place.strip_prefix("in ") {
        frame.module = module.to_owned();
    } else if let Some((file, line)) = place.rsplit_once(':')
        && let Ok(line) = line.parse()
    {
        frame.file = file.to_owned();
        frame.line = line;
    } else if !place.is_empty() {
        frame.file = place.to_owned();
    }
    if frame.function.is_empty() && frame.address == 0 {
        frame.function = name.to_owned();
    }
    frame
}

/// A gzipped `profile.proto` of the heap: sample types (count, bytes) as in
/// [`HeapAt::sample_types`], one location and function per distinct node name.
pub fn pprof(heap: &HeapAt) -> Vec<u8> {
    let mut frames = Frames::default();
    let mut frame_of_node = vec![u32::MAX; heap.trie.len()];
    let mut samples = Vec::new();
    for (node, objects, bytes) in own_values(heap) {
        let mut stack: Vec<u32> = stack_of(heap, node)
            .into_iter()
            .map(|n| {
                let slot = &mut frame_of_node[n as usize];
                if *slot == u32::MAX {
                    *slot = frames.intern(frame_of_name(heap.trie.name(n)));
                }
                *slot
            })
            .collect();
        stack.reverse(); // pprof: leaf first
        samples.push(Sample {
            stack,
            values: vec![objects, bytes],
        });
    }
    let bytes = encode(&EncodeInput {
        sample_types: &heap.sample_types,
        default_type: 1,
        frames: &frames.list,
        samples: &samples,
        time_nanos: heap.time_nanos,
    });
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing into a Vec cannot fail.
    let _ = gz.write_all(&bytes);
    gz.finish().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_frames() {
        let f = frame_of_name("main (t.c:6)");
        assert_eq!(
            (f.function.as_str(), f.file.as_str(), f.line),
            ("main", "t.c", 6)
        );
        let f = frame_of_name("0x4011 (in /bin/x)");
        assert_eq!((f.address, f.module.as_str()), (0x4011, "/bin/x"));
        let f = frame_of_name("513 B – 1 KiB");
        assert_eq!(f.function, "513 B – 1 KiB");
        let f = frame_of_name("main.leak (main.go)");
        assert_eq!(
            (f.function.as_str(), f.file.as_str()),
            ("main.leak", "main.go")
        );
    }
}
