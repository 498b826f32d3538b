//! The report behind `memscape heaptree FILE [--at TIME | --snapshot N | --peak]
//! [--group thread,site,size,path,module] [--metric bytes|objects] [--depth D] [--json]`.

use std::path::Path;

use memscape_trace::{LoadError, Trace};

use crate::massif::{self, MassifError, MassifFile};
use crate::massif_tree::MassifHeap;
use crate::profile::{self, ProfileError, ProfileFormat, ProfileHeap, StackProfile};
use crate::suppress::Suppressed;
use crate::suspects::{LeakSuspect, trace_leak_suspects};
use crate::trace_tree::{GroupKey, HeapOptions, TraceHeap};
use crate::view::{HeapNode, Metric, PruneOptions, StableOrder, build_view};

/// Which time point.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeSelect {
    /// Traces: the trace end. Massif: the peak snapshot (massif's most detailed tree).
    #[default]
    Default,
    /// `--at TIME`: traces: wall time in ns (event count when the trace has no wall time);
    /// massif: the last detailed snapshot whose time (in its `time_unit`) is at most TIME.
    At(u64),
    /// Traces: after this many events.
    AtEvent(u64),
    /// `--snapshot N`: massif snapshot `N` (must carry a tree).
    Snapshot(u64),
    /// `--peak`: the heap peak.
    Peak,
}

/// Options of `heaptree`.
#[derive(Debug, Clone, PartialEq)]
pub struct HeapTreeOptions {
    pub select: TimeSelect,
    /// Grouping for traces (ignored for massif, whose tree is the allocation-site tree).
    pub group: Vec<GroupKey>,
    pub prune: PruneOptions,
    /// Profiles (pprof, DHAT, text heap profiles): the measure shown (`inuse`, `alloc`,
    /// `total`, `reads`, …, or a sample type name); `None`: the profile's default.
    pub measure: Option<String>,
    /// Call sites past wrappers and leak suppressions (traces).
    pub heap: HeapOptions,
}

impl Default for HeapTreeOptions {
    fn default() -> Self {
        Self {
            select: TimeSelect::Default,
            group: vec![GroupKey::Site],
            prune: PruneOptions::default(),
            measure: None,
            heap: HeapOptions::default(),
        }
    }
}

/// The JSON of `heaptree --leaks`: groups (leaves of the grouping) that grew over the trace,
/// most suspect first, and what the suppressions left out.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LeakReport {
    /// The grouping's keys.
    pub group: Vec<GroupKey>,
    /// Number of time points the growth was measured over.
    pub points: usize,
    /// `ns`, `events`, or massif's time unit: the unit of the slopes.
    pub time_unit: String,
    pub suspects: Vec<LeakSuspect>,
    pub suppressed: Suppressed,
}

/// Time points of a leak ranking.
pub const LEAK_POINTS: usize = 32;

/// Leak suspects of an allocation trace, massif file or profiles (massif and profiles: no
/// suppressions: they have no blocks).
pub fn leaks_input(input: &HeapInput, options: &HeapTreeOptions) -> LeakReport {
    match input {
        HeapInput::Trace(trace) => {
            let mut heap = TraceHeap::with_options(trace, &options.group, &options.heap);
            let points = if trace.meta.has_wall_time {
                heap.even_points_in_time(LEAK_POINTS)
            } else {
                heap.even_points(LEAK_POINTS)
            };
            let suspects = trace_leak_suspects(&mut heap, &points, None);
            LeakReport {
                group: options.group.clone(),
                points: points.len(),
                time_unit: String::from(if trace.meta.has_wall_time {
                    "ns"
                } else {
                    "events"
                }),
                suspects,
                suppressed: heap.suppressed().clone(),
            }
        }
        HeapInput::Massif(file) => {
            let heap = MassifHeap::new(file);
            LeakReport {
                group: Vec::new(),
                points: heap.len(),
                time_unit: file.time_unit.clone(),
                suspects: crate::suspects::massif_leak_suspects(file, &heap, None),
                suppressed: Suppressed::default(),
            }
        }
        HeapInput::Profile(profile) => {
            // The measure asked for, else the profile's default; profiles have no blocks to
            // suppress.
            let suspects = profile
                .measure(options.measure.as_deref())
                .or_else(|_| profile.measure(None))
                .map(|m| {
                    profile::profile_timeline(profile, m, options.prune.metric)
                        .0
                        .suspects
                })
                .unwrap_or_default();
            LeakReport {
                group: Vec::new(),
                points: profile.snapshots.len(),
                time_unit: profile.time_unit().to_owned(),
                suspects,
                suppressed: Suppressed::default(),
            }
        }
    }
}

/// Why a heap tree could not be made.
#[derive(Debug, thiserror::Error)]
pub enum HeapError {
    #[error(transparent)]
    Massif(#[from] MassifError),
    #[error(transparent)]
    Trace(#[from] LoadError),
    #[error(transparent)]
    Input(#[from] memscape_io::InputError),
    #[error(transparent)]
    Profile(#[from] ProfileError),
    #[error(
        "{source_name}: snapshot {requested} has no heap tree (heap_tree=empty or no such snapshot); snapshots with trees: {available:?}"
    )]
    NoTree {
        source_name: String,
        requested: u64,
        available: Vec<u64>,
    },
    #[error("{source_name}: {what}")]
    Unsupported { source_name: String, what: String },
    #[error(
        "{path}: not a heap profile: expected a valgrind massif file (first line `desc:`), a heaptrack file (first line `v <version> <file version>`), a CSV header with `time,op,address`, an .msc file, a pprof profile.proto, a text heap profile (`heap profile:`, `heap_v2/`) or DHAT JSON; the input starts with {start}"
    )]
    NotHeapInput { path: String, start: String },
}

/// The JSON of `heaptree`: the pruned tree's root (`name, bytes, objects, children`) plus the
/// time point and the heap's total.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HeapTreeReport {
    /// Massif: the snapshot's `time=`; traces: ns since start (events if no wall time).
    pub time: u64,
    /// `i`, `ms`, `B` (massif), `ns` or `events` (traces).
    pub time_unit: String,
    /// Live heap bytes at that time (the unpruned root; for massif `mem_heap_B`).
    pub total_bytes: u64,
    /// Massif snapshot number (profiles: the profile's index), or the trace's event count at
    /// the time point.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events: Option<u64>,
    pub metric: Metric,
    /// Profiles: the measure shown (`bytes` and `objects` are its two values).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measure: Option<profile::Measure>,
    #[serde(flatten)]
    pub tree: HeapNode,
}

/// Input of the heap-tree views, loaded by content.
pub enum HeapInput {
    Massif(MassifFile),
    Trace(Box<Trace>),
    /// pprof, text heap profiles, DHAT: one or several profiles over time.
    Profile(Box<StackProfile>),
}

/// The profiles of a directory (every file a profile format recognises, by name) as one
/// profile over time: what a program writing `heap.0.pb.gz`, `heap.1.pb.gz`, … leaves.
pub fn profiles_in_dir(dir: &Path) -> Result<StackProfile, HeapError> {
    let entries = std::fs::read_dir(dir).map_err(|source| memscape_io::InputError::Io {
        path: dir.to_owned(),
        source,
    })?;
    let mut paths: Vec<std::path::PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter(|p| {
            std::fs::read(p)
                .ok()
                .and_then(|raw| memscape_io::decompress(p, raw, profile::MAX_PROFILE_BYTES).ok())
                .is_some_and(|b| ProfileFormat::sniff(&b).is_some())
        })
        .collect();
    // heap.2 before heap.10: numbers in names compare as numbers.
    paths.sort_by_key(|p| natural_key(&p.display().to_string()));
    if paths.is_empty() {
        return Err(HeapError::Unsupported {
            source_name: dir.display().to_string(),
            what: "the directory holds no heap profile (pprof, text heap profile, DHAT)".into(),
        });
    }
    let refs: Vec<&Path> = paths.iter().map(|p| p.as_path()).collect();
    Ok(profile::load_profiles(&refs)?)
}

/// A sort key that orders digit runs by value.
fn natural_key(text: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let split = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let (word, tail) = rest.split_at(split);
        let digits = tail
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(tail.len());
        let (number, tail) = tail.split_at(digits);
        out.push((word.to_owned(), number.parse().unwrap_or(0)));
        rest = tail;
    }
    out
}

/// Loads a heap-tree input by content: memscape-trace's formats (heaptrack raw/processed, CSV,
/// .msc; streamed, never held whole, then symbolized from the binaries they name when those
/// exist on this machine) first, and massif when the trace loader finds none of its formats
/// (massif's `desc:` header matches none of them).
pub fn load_heap_input(path: &Path) -> Result<HeapInput, HeapError> {
    if path.is_dir() {
        return Ok(HeapInput::Profile(Box::new(profiles_in_dir(path)?)));
    }
    match memscape_trace::load(path) {
        Ok(mut trace) => {
            // heaptrack's raw files carry addresses only: name the frames from the binaries
            // when they exist here, so that call sites read as functions.
            let symbols = memscape_trace::symbolize::symbolize(&mut trace);
            tracing::debug!("{}: {symbols:?}", path.display());
            Ok(HeapInput::Trace(Box::new(trace)))
        }
        Err(LoadError::NotATrace { path: name, start }) => {
            let bytes = memscape_io::read_input(path)?;
            if ProfileFormat::sniff(&bytes).is_some() {
                let profile = profile::parse_profile(&name, &bytes)?;
                for w in profile.warnings.kinds() {
                    tracing::warn!("{name}: {} × {}", w.count, w.message);
                }
                return Ok(HeapInput::Profile(Box::new(profile)));
            }
            if !massif::sniff(&bytes) {
                return Err(HeapError::NotHeapInput { path: name, start });
            }
            let file = massif::parse_massif(&name, &bytes)?;
            for w in file.warnings.kinds() {
                tracing::warn!("{name}: {} × {}", w.count, w.message);
            }
            Ok(HeapInput::Massif(file))
        }
        Err(e) => Err(e.into()),
    }
}

/// `heaptree` on a file (format detected by content, see [`load_heap_input`]).
pub fn heaptree_file(path: &Path, options: &HeapTreeOptions) -> Result<HeapTreeReport, HeapError> {
    match load_heap_input(path)? {
        HeapInput::Massif(file) => heaptree_massif(&file, options),
        HeapInput::Trace(trace) => heaptree_trace(&trace, options),
        HeapInput::Profile(profile) => heaptree_profile(&profile, options),
    }
}

/// `heaptree` on profiles: the tree of `options.measure` at the selected profile (default:
/// the last; `--peak`: the largest; `--snapshot N`: the N-th; `--at T`: the last at or before
/// T, in ns since the first when the profiles carry their time, else profile numbers).
pub fn heaptree_profile(
    profile: &StackProfile,
    options: &HeapTreeOptions,
) -> Result<HeapTreeReport, HeapError> {
    let measure = profile.measure(options.measure.as_deref())?;
    let heap = ProfileHeap::new(profile, measure.clone());
    let point = profile_point(profile, &heap, options.select)?;
    let sizes = heap.sizes(point).unwrap_or_default();
    let last = heap.sizes(heap.len().saturating_sub(1)).unwrap_or_default();
    let order = StableOrder::new(heap.trie(), &last, Some(&sizes), options.prune.metric);
    let tree = build_view(heap.trie(), &sizes, &order, 0, &options.prune);
    Ok(HeapTreeReport {
        time: profile.time_of(point),
        time_unit: profile.time_unit().to_owned(),
        total_bytes: sizes.bytes(0),
        snapshot: Some(point as u64),
        events: None,
        metric: options.prune.metric,
        measure: Some(measure),
        tree,
    })
}

/// The time point of a profile that `select` names.
pub fn profile_point(
    profile: &StackProfile,
    heap: &ProfileHeap,
    select: TimeSelect,
) -> Result<usize, HeapError> {
    let count = heap.len();
    let missing = |what: String| HeapError::Unsupported {
        source_name: profile.source.clone(),
        what,
    };
    match select {
        TimeSelect::Default => count
            .checked_sub(1)
            .ok_or_else(|| missing("no profile".into())),
        TimeSelect::Peak => (0..count)
            .max_by_key(|&i| heap.sizes(i).map_or(0, |s| s.bytes(0)))
            .ok_or_else(|| missing("no profile".into())),
        TimeSelect::Snapshot(n) => {
            usize::try_from(n)
                .ok()
                .filter(|&n| n < count)
                .ok_or_else(|| {
                    missing(format!(
                        "--snapshot {n}: there are {count} profiles (0–{})",
                        count.saturating_sub(1)
                    ))
                })
        }
        TimeSelect::At(t) | TimeSelect::AtEvent(t) => (0..count)
            .rev()
            .find(|&i| profile.time_of(i) <= t)
            .ok_or_else(|| missing(format!("--at {t}: no profile at or before it"))),
    }
}

/// `heaptree` on a parsed massif file.
pub fn heaptree_massif(
    file: &MassifFile,
    options: &HeapTreeOptions,
) -> Result<HeapTreeReport, HeapError> {
    let mut reports = timeline_massif(file, options, &[options.select])?;
    reports.pop().ok_or_else(|| HeapError::NoTree {
        source_name: file.source.clone(),
        requested: 0,
        available: Vec::new(),
    })
}

/// Several massif time points with one stable sibling order (the timeline's small multiples).
pub fn timeline_massif(
    file: &MassifFile,
    options: &HeapTreeOptions,
    selects: &[TimeSelect],
) -> Result<Vec<HeapTreeReport>, HeapError> {
    if options.prune.metric == Metric::Objects {
        return Err(HeapError::Unsupported {
            source_name: file.source.clone(),
            what: String::from(
                "massif records bytes per allocation site but no object counts: use --metric bytes",
            ),
        });
    }
    let heap = MassifHeap::new(file);
    let available: Vec<u64> = heap
        .snapshot_indices()
        .iter()
        .filter_map(|&i| file.snapshots.get(i).map(|s| s.number))
        .collect();
    let no_tree = |requested: u64| HeapError::NoTree {
        source_name: file.source.clone(),
        requested,
        available: available.clone(),
    };
    let last = heap.sizes(heap.len().saturating_sub(1)).unwrap_or_default();
    let peak = file
        .marked_peak()
        .and_then(|p| heap.point_of_snapshot(p))
        .and_then(|p| heap.sizes(p));
    let order = StableOrder::new(heap.trie(), &last, peak.as_ref(), options.prune.metric);
    let mut reports = Vec::with_capacity(selects.len());
    for &select in selects {
        let (snapshot_index, point) = massif_point(file, &heap, select)?;
        let snapshot = &file.snapshots[snapshot_index];
        let sizes = heap.sizes(point).ok_or_else(|| no_tree(snapshot.number))?;
        let tree = build_view(heap.trie(), &sizes, &order, 0, &options.prune);
        reports.push(HeapTreeReport {
            time: snapshot.time,
            time_unit: file.time_unit.clone(),
            total_bytes: snapshot.mem_heap_b,
            snapshot: Some(snapshot.number),
            events: None,
            metric: options.prune.metric,
            measure: None,
            tree,
        });
    }
    Ok(reports)
}

/// The events applied at the time point `select` names in a trace (`--snapshot` is an error).
pub fn trace_point(
    trace: &Trace,
    heap: &TraceHeap<'_>,
    select: TimeSelect,
) -> Result<u64, HeapError> {
    let events = heap.events();
    Ok(match select {
        TimeSelect::Default => events,
        TimeSelect::At(t) if trace.meta.has_wall_time => heap.events_at_time(t),
        TimeSelect::At(t) | TimeSelect::AtEvent(t) => t.min(events),
        TimeSelect::Peak => heap.peak_point(),
        TimeSelect::Snapshot(_) => {
            return Err(HeapError::Unsupported {
                source_name: trace.meta.source.clone(),
                what: String::from(
                    "--snapshot applies to massif files and profiles; use --at TIME or --peak for allocation traces",
                ),
            });
        }
    })
}

/// The snapshot (index into the file's snapshots) and time point that `select` names in a
/// massif file: default and `--peak` the marked peak (else the last tree), `--snapshot N`,
/// `--at T` the last tree at or before T.
pub fn massif_point(
    file: &MassifFile,
    heap: &MassifHeap,
    select: TimeSelect,
) -> Result<(usize, usize), HeapError> {
    let points = heap.snapshot_indices();
    let snapshot = match select {
        TimeSelect::Default | TimeSelect::Peak => {
            file.marked_peak().or_else(|| points.last().copied())
        }
        TimeSelect::Snapshot(n) => file.snapshots.iter().position(|s| s.number == n),
        TimeSelect::At(t) | TimeSelect::AtEvent(t) => points
            .iter()
            .rev()
            .copied()
            .find(|&i| file.snapshots.get(i).is_some_and(|s| s.time <= t)),
    };
    snapshot
        .and_then(|s| Some((s, heap.point_of_snapshot(s)?)))
        .ok_or_else(|| HeapError::NoTree {
            source_name: file.source.clone(),
            requested: match select {
                TimeSelect::Snapshot(n) => n,
                _ => 0,
            },
            available: points
                .iter()
                .filter_map(|&i| file.snapshots.get(i).map(|s| s.number))
                .collect(),
        })
}

/// `heaptree` on a loaded trace. The stable order is taken from the trace end.
pub fn heaptree_trace(
    trace: &Trace,
    options: &HeapTreeOptions,
) -> Result<HeapTreeReport, HeapError> {
    let mut reports = timeline_trace(trace, options, &[options.select])?;
    reports.pop().ok_or_else(|| HeapError::Unsupported {
        source_name: trace.meta.source.clone(),
        what: String::from("no time point"),
    })
}

/// Several trace time points with one stable sibling order (taken from the trace end, then the
/// peak): the timeline's small multiples, or the frames of an animation.
pub fn timeline_trace(
    trace: &Trace,
    options: &HeapTreeOptions,
    selects: &[TimeSelect],
) -> Result<Vec<HeapTreeReport>, HeapError> {
    let mut heap = TraceHeap::with_options(trace, &options.group, &options.heap);
    let events = heap.events();
    let last = heap.sizes_at(events);
    let peak = heap.sizes_at(heap.peak_point());
    let order = StableOrder::new(heap.trie(), &last, Some(&peak), options.prune.metric);
    let mut reports = Vec::with_capacity(selects.len());
    for &select in selects {
        let applied = trace_point(trace, &heap, select)?;
        let sizes = heap.sizes_at(applied);
        let tree = build_view(heap.trie(), &sizes, &order, 0, &options.prune);
        let (time, time_unit) = if trace.meta.has_wall_time {
            (heap.time_of(applied), "ns")
        } else {
            (applied, "events")
        };
        reports.push(HeapTreeReport {
            time,
            time_unit: time_unit.to_owned(),
            total_bytes: sizes.bytes(0),
            snapshot: None,
            events: Some(applied),
            metric: options.prune.metric,
            measure: None,
            tree,
        });
    }
    Ok(reports)
}
