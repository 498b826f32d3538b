//! Heap profiles as samples over call stacks: pprof's `profile.proto` (Go's `runtime/pprof`,
//! jemalloc and tcmalloc through pprof), the legacy text heap profiles of gperftools, jemalloc
//! and Go, and DHAT's JSON. Several profiles of one program become the time points of one
//! [`StackProfile`]; [`ProfileHeap`] turns it into heap trees over time like massif's.
//!
//! A profile has named sample types (`inuse_space`/bytes, `alloc_objects`/count, DHAT's
//! `total_bytes`, `reads_bytes`, …). A [`Measure`] pairs a bytes-like type with its count
//! (`inuse` = `inuse_space` + `inuse_objects`): the tree's `bytes` and `objects` at a time point
//! are that measure's two values, so every heap view, the pruning and the leak suspects work on
//! any measure.

pub mod dhat;
pub mod heap_text;
pub mod pprof;
pub mod proto;

use std::collections::HashMap;
use std::path::Path;

use memscape_io::Warnings;

use crate::evolution::{HeapTimeline, SizesSource, TimePoint};
use crate::suspects::GrowthAccumulator;
use crate::trie::{GroupTrie, Label, Sizes};
use crate::view::{Metric, StableOrder};

/// Largest decompressed profile accepted (profiles are small; a bigger one is a bomb).
pub const MAX_PROFILE_BYTES: u64 = 1 << 30;

/// Which importer read a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProfileFormat {
    /// `profile.proto` (gzipped or not).
    Pprof,
    /// `heap profile: …` / `heap_v2/…` text (gperftools, jemalloc, Go `debug=1`).
    HeapText,
    /// valgrind `--tool=dhat` / dhat-rs JSON.
    Dhat,
}

impl ProfileFormat {
    pub fn name(self) -> &'static str {
        match self {
            ProfileFormat::Pprof => "pprof",
            ProfileFormat::HeapText => "legacy heap profile",
            ProfileFormat::Dhat => "DHAT",
        }
    }

    /// Recognises a profile by its content (decompressed).
    pub fn sniff(content: &[u8]) -> Option<Self> {
        let head = &content[..content.len().min(512)];
        let text = String::from_utf8_lossy(head);
        let trimmed = text.trim_start();
        if trimmed.starts_with("heap profile:") || trimmed.starts_with("heap_v2/") {
            return Some(ProfileFormat::HeapText);
        }
        if trimmed.starts_with('{') && text.contains("\"dhatFileVersion\"") {
            return Some(ProfileFormat::Dhat);
        }
        pprof::looks_like_profile(content).then_some(ProfileFormat::Pprof)
    }
}

/// A sample type: what a value counts and in which unit (`inuse_space`, `bytes`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SampleType {
    pub name: String,
    pub unit: String,
}

/// A frame of a call stack. Frames are interned: equal frames have one index.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Frame {
    /// Empty when the profile has no symbol for it.
    pub function: String,
    pub file: String,
    /// 0 when unknown.
    pub line: u32,
    /// The binary (mapping) the frame is in.
    pub module: String,
    /// The instruction address, for frames without a function.
    pub address: u64,
}

impl Frame {
    /// The name shown in heap trees: the function (with its file's name and the line when
    /// known), else the address in its module.
    pub fn display_name(&self) -> String {
        if self.function.is_empty() {
            return if self.module.is_empty() {
                format!("{:#x}", self.address)
            } else {
                format!("{:#x} (in {})", self.address, file_name(&self.module))
            };
        }
        match (self.file.is_empty(), self.line) {
            (false, 0) => format!("{} ({})", self.function, file_name(&self.file)),
            (false, line) => format!("{} ({}:{line})", self.function, file_name(&self.file)),
            (true, _) => self.function.clone(),
        }
    }
}

/// The last component of a path.
pub(crate) fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Interned frames.
#[derive(Debug, Clone, Default)]
pub struct Frames {
    pub list: Vec<Frame>,
    index: HashMap<Frame, u32>,
}

impl Frames {
    pub fn intern(&mut self, frame: Frame) -> u32 {
        if let Some(&i) = self.index.get(&frame) {
            return i;
        }
        let i = self.list.len() as u32;
        self.index.insert(frame.clone(), i);
        self.list.push(frame);
        i
    }
}

/// One stack with one value per sample type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    /// Frame indices, the allocating frame first (pprof's order).
    pub stack: Vec<u32>,
    pub values: Vec<u64>,
}

/// One profile (one time point).
#[derive(Debug, Clone)]
pub struct ProfileSnapshot {
    /// The file it came from.
    pub source: String,
    /// When it was taken (pprof `time_nanos`), if the profile says.
    pub time_ns: Option<i64>,
    pub samples: Vec<Sample>,
}

/// Profiles of one program with the same sample types, in time order.
#[derive(Debug, Clone)]
pub struct StackProfile {
    pub source: String,
    pub format: ProfileFormat,
    pub sample_types: Vec<SampleType>,
    /// The sample type shown by default (pprof's `default_sample_type`, else the last).
    pub default_type: usize,
    pub frames: Frames,
    pub snapshots: Vec<ProfileSnapshot>,
    pub warnings: Warnings,
}

/// Why profiles could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error(transparent)]
    Input(#[from] memscape_io::InputError),
    /// Malformed content: the file, where (byte offset or line), and what was expected.
    #[error("{at}: {message}")]
    Malformed {
        at: memscape_io::Location,
        message: String,
    },
    #[error("{source_name}: {message}")]
    Unusable {
        source_name: String,
        message: String,
    },
}

/// A bytes-like sample type and the count that goes with it: what a heap tree shows.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Measure {
    /// `inuse`, `alloc`, `total`, `reads`, … (the sample types' common prefix).
    pub name: String,
    /// Index of the sample type shown as `bytes`.
    pub bytes: usize,
    /// Index of the sample type shown as `objects`, if any.
    pub objects: Option<usize>,
    /// The unit of `bytes` (`bytes`, or e.g. `instrs` for a lifetime measure).
    pub unit: String,
}

fn is_count(unit: &str) -> bool {
    matches!(unit, "count" | "objects" | "blocks")
}

/// The prefix before the last `_` (`inuse_space` → `inuse`), or the whole name.
fn prefix(name: &str) -> &str {
    name.rsplit_once('_').map_or(name, |(p, _)| p)
}

impl StackProfile {
    /// One profile of `samples` over `frames`, read from `name`; `types` are (name, unit).
    pub(crate) fn single(
        name: &str,
        format: ProfileFormat,
        types: &[(&str, &str)],
        default_type: usize,
        frames: Frames,
        samples: Vec<Sample>,
        warnings: Warnings,
    ) -> Self {
        StackProfile {
            source: name.to_owned(),
            format,
            sample_types: types
                .iter()
                .map(|(n, u)| SampleType {
                    name: (*n).to_owned(),
                    unit: (*u).to_owned(),
                })
                .collect(),
            default_type,
            frames,
            snapshots: vec![ProfileSnapshot {
                source: name.to_owned(),
                time_ns: None,
                samples,
            }],
            warnings,
        }
    }

    /// The measures of this profile: each non-count sample type, paired with the count type of
    /// the same prefix; count types without a partner stand alone.
    pub fn measures(&self) -> Vec<Measure> {
        let mut out = Vec::new();
        let mut paired = vec![false; self.sample_types.len()];
        for (i, t) in self.sample_types.iter().enumerate() {
            if is_count(&t.unit) {
                continue;
            }
            let objects = self
                .sample_types
                .iter()
                .position(|c| is_count(&c.unit) && prefix(&c.name) == prefix(&t.name));
            if let Some(o) = objects {
                paired[o] = true;
            }
            // `inuse_space` + `inuse_objects` → `inuse`; `reads_bytes` alone → `reads`.
            let suffix = t.name.rsplit_once('_').map(|(_, s)| s);
            let by_prefix = objects.is_some() || matches!(suffix, Some("bytes" | "space"));
            out.push(Measure {
                name: if by_prefix {
                    prefix(&t.name).to_owned()
                } else {
                    t.name.clone()
                },
                bytes: i,
                objects,
                unit: t.unit.clone(),
            });
        }
        for (i, t) in self.sample_types.iter().enumerate() {
            if is_count(&t.unit) && !paired[i] {
                out.push(Measure {
                    name: t.name.clone(),
                    bytes: i,
                    objects: Some(i),
                    unit: t.unit.clone(),
                });
            }
        }
        out
    }

    /// The measure named `name` (a measure or sample type name), or the default one.
    pub fn measure(&self, name: Option<&str>) -> Result<Measure, ProfileError> {
        let measures = self.measures();
        let found = match name {
            Some(n) => measures.iter().find(|m| {
                m.name == n
                    || self.sample_types[m.bytes].name == n
                    || m.objects.is_some_and(|o| self.sample_types[o].name == n)
            }),
            None => measures
                .iter()
                .find(|m| m.bytes == self.default_type || m.objects == Some(self.default_type))
                .or_else(|| measures.first()),
        };
        found.cloned().ok_or_else(|| ProfileError::Unusable {
            source_name: self.source.clone(),
            message: format!(
                "no measure {:?}; this profile has: {}",
                name.unwrap_or(""),
                measures
                    .iter()
                    .map(|m| m.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })
    }

    /// The time unit of the snapshots: `ns` when every one has a time, else their order.
    pub fn time_unit(&self) -> &'static str {
        if self.snapshots.iter().all(|s| s.time_ns.is_some()) {
            "ns"
        } else {
            "profile"
        }
    }

    /// The time of snapshot `i` in [`StackProfile::time_unit`]: ns since the first snapshot,
    /// or the index.
    pub fn time_of(&self, i: usize) -> u64 {
        let first = self.snapshots.first().and_then(|s| s.time_ns);
        match (
            self.time_unit(),
            self.snapshots.get(i).and_then(|s| s.time_ns),
            first,
        ) {
            ("ns", Some(t), Some(f)) => t.saturating_sub(f).max(0) as u64,
            _ => i as u64,
        }
    }

    /// Appends the snapshots of `other` (same sample types required), re-interning its frames.
    pub fn append(&mut self, other: StackProfile) -> Result<(), ProfileError> {
        let names = |p: &StackProfile| -> Vec<String> {
            p.sample_types.iter().map(|t| t.name.clone()).collect()
        };
        if names(self) != names(&other) {
            return Err(ProfileError::Unusable {
                source_name: other.source.clone(),
                message: format!(
                    "its sample types {:?} differ from {:?} of {}: profiles taken over time must be of one kind",
                    names(&other),
                    names(self),
                    self.source
                ),
            });
        }
        let map: Vec<u32> = other
            .frames
            .list
            .into_iter()
            .map(|f| self.frames.intern(f))
            .collect();
        for mut snapshot in other.snapshots {
            for sample in &mut snapshot.samples {
                for f in &mut sample.stack {
                    *f = map.get(*f as usize).copied().unwrap_or(0);
                }
            }
            self.snapshots.push(snapshot);
        }
        self.warnings.merge(other.warnings);
        Ok(())
    }
}

/// pprof's pruning: scanning from the root, the first frame matching `drop` (and not `keep`)
/// after a frame that does not match is removed with every frame it called; matching frames
/// before the first non-matching one (a runtime's entry point) stay; unnamed frames count as
/// neither. Function names are matched up to their first `(`.
pub fn prune(stack: &mut Vec<(u32, &str)>, drop: &regex::Regex, keep: Option<&regex::Regex>) {
    let matches = |name: &str| {
        let name = match name.find('(') {
            Some(i) if i > 0 => &name[..i],
            _ => name,
        };
        !name.is_empty() && drop.is_match(name) && !keep.is_some_and(|k| k.is_match(name))
    };
    let mut found_user = false;
    for i in (0..stack.len()).rev() {
        if stack[i].1.is_empty() {
            // An unnamed frame (a thread's entry point without symbols) is no user frame.
            continue;
        }
        if !matches(stack[i].1) {
            found_user = true;
        } else if found_user {
            stack.drain(..=i);
            return;
        }
    }
}

/// Reads one profile file of any supported format (decompressed first, size-capped).
pub fn read_profile(path: &Path) -> Result<StackProfile, ProfileError> {
    let raw = std::fs::read(path).map_err(|source| memscape_io::InputError::Io {
        path: path.to_owned(),
        source,
    })?;
    let name = path.display().to_string();
    let bytes = memscape_io::decompress(path, raw, MAX_PROFILE_BYTES)?;
    parse_profile(&name, &bytes)
}

/// Parses decompressed profile content; `name` names it in messages.
pub fn parse_profile(name: &str, bytes: &[u8]) -> Result<StackProfile, ProfileError> {
    match ProfileFormat::sniff(bytes) {
        Some(ProfileFormat::HeapText) => heap_text::parse(name, bytes),
        Some(ProfileFormat::Dhat) => dhat::parse(name, bytes),
        Some(ProfileFormat::Pprof) => pprof::parse(name, bytes),
        None => Err(ProfileError::Unusable {
            source_name: name.to_owned(),
            message: "not a heap profile: expected pprof's profile.proto (gzipped or not), a text heap profile (`heap profile:` or `heap_v2/`), or DHAT JSON (`dhatFileVersion`)".to_owned(),
        }),
    }
}

/// Reads several profiles of one program as one profile over time, ordered by their time when
/// every one has it (pprof `time_nanos`), else in the order given.
pub fn load_profiles(paths: &[&Path]) -> Result<StackProfile, ProfileError> {
    let mut profiles = paths
        .iter()
        .map(|p| read_profile(p))
        .collect::<Result<Vec<_>, _>>()?;
    if profiles
        .iter()
        .all(|p| p.snapshots.iter().all(|s| s.time_ns.is_some()))
    {
        profiles.sort_by_key(|p| p.snapshots.first().and_then(|s| s.time_ns));
    }
    let mut iter = profiles.into_iter();
    let Some(mut first) = iter.next() else {
        return Err(ProfileError::Unusable {
            source_name: String::new(),
            message: "no profile given".to_owned(),
        });
    };
    for p in iter {
        first.append(p)?;
    }
    if paths.len() > 1 {
        first.source = format!("{} (+{} more)", first.source, paths.len() - 1);
    }
    Ok(first)
}

/// A profile as heap trees over time: the allocating frame at the first level below the root,
/// its callers below it (massif's orientation), one time point per snapshot.
pub struct ProfileHeap {
    trie: GroupTrie,
    /// Per snapshot: (trie leaf, bytes, objects) of each sample.
    points: Vec<Vec<(u32, u64, u64)>>,
    pub measure: Measure,
}

impl ProfileHeap {
    pub fn new(profile: &StackProfile, measure: Measure) -> Self {
        let mut trie = GroupTrie::new("(all allocations)");
        let mut points = Vec::with_capacity(profile.snapshots.len());
        for snapshot in &profile.snapshots {
            let mut own = Vec::with_capacity(snapshot.samples.len());
            for sample in &snapshot.samples {
                let bytes = sample.values.get(measure.bytes).copied().unwrap_or(0);
                let objects = measure
                    .objects
                    .and_then(|o| sample.values.get(o).copied())
                    .unwrap_or(0);
                if bytes == 0 && objects == 0 {
                    continue;
                }
                let mut node = 0;
                for &f in &sample.stack {
                    node = trie.child(
                        node,
                        Label {
                            kind: 1,
                            value: u64::from(f),
                        },
                        || {
                            profile
                                .frames
                                .list
                                .get(f as usize)
                                .map_or_else(String::new, Frame::display_name)
                        },
                    );
                }
                own.push((node, bytes, objects));
            }
            points.push(own);
        }
        Self {
            trie,
            points,
            measure,
        }
    }

    pub fn trie(&self) -> &GroupTrie {
        &self.trie
    }

    pub fn len(&self) -> usize {
        self.points.len()
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// Subtree sums of the measure at time point `point`.
    pub fn sizes(&self, point: usize) -> Option<Sizes> {
        let own = self.points.get(point)?;
        let mut sizes = Sizes::zeros(self.trie.len());
        for &(node, bytes, objects) in own {
            let n = node as usize;
            sizes.bytes[n] = sizes.bytes[n].saturating_add(bytes);
            sizes.objects[n] = sizes.objects[n].saturating_add(objects);
        }
        sizes.accumulate(&self.trie);
        Some(sizes)
    }
}

/// Sizes of a [`ProfileHeap`] at its points.
pub struct ProfileSizes {
    heap: ProfileHeap,
}

impl SizesSource for ProfileSizes {
    fn sizes_at_point(&mut self, point: usize) -> Option<Sizes> {
        self.heap.sizes(point)
    }
}

/// The timeline of a profile for one measure: a point per snapshot; the stable order from the
/// last snapshot, then the largest.
pub fn profile_timeline(
    profile: &StackProfile,
    measure: Measure,
    metric: Metric,
) -> (HeapTimeline, ProfileSizes) {
    let heap = ProfileHeap::new(profile, measure);
    let mut acc = GrowthAccumulator::default();
    let mut points = Vec::with_capacity(heap.len());
    let mut all = Vec::with_capacity(heap.len());
    for i in 0..heap.len() {
        let sizes = heap.sizes(i).unwrap_or_default();
        let time = profile.time_of(i);
        acc.add(time as f64, &sizes);
        points.push(TimePoint {
            time,
            total_bytes: sizes.bytes(0),
            index: i as u64,
        });
        all.push(sizes);
    }
    let largest = all.iter().max_by_key(|s| s.bytes(0));
    let empty = Sizes::default();
    let order = StableOrder::new(heap.trie(), all.last().unwrap_or(&empty), largest, metric);
    let series = points.iter().map(|p| (p.time, p.total_bytes)).collect();
    let timeline = crate::evolution::finish(
        HeapTimeline {
            source: profile.source.clone(),
            trie: heap.trie().clone(),
            order,
            metric,
            points,
            series,
            time_unit: profile.time_unit().to_owned(),
            suspects: Vec::new(),
            growth: Vec::new(),
            peak_point: 0,
            suppressed: Default::default(),
        },
        &acc,
        // Profiles have no blocks to suppress: every group may be a suspect.
        &acc,
    );
    (timeline, ProfileSizes { heap })
}
