//! Heap evolution for memscape (the CPU half of the heap-tree views).
//!
//! * [`massif`]: valgrind massif importer (`massif.out.*`), every snapshot, every tree line.
//! * [`trie`]: the group tree shared by every time point ([`trie::GroupTrie`]) and the sizes of
//!   its nodes at one time point ([`trie::Sizes`]).
//! * [`trace_tree`]: heap trees over time from `memscape-trace` allocation traces, grouped by an
//!   ordered list of keys, with an index that builds a new time point incrementally.
//! * [`massif_tree`]: the same model over massif snapshots.
//! * [`view`]: pruning ("keep the largest until 90 %, at most 9, the rest is Other"), stable
//!   sibling order, drill-down helpers.
//! * [`evolution`]: time points, heap-size curve, order and suspects of an input, computed once,
//!   and a source of group sizes at any point (what the GUI's heap view runs on).
//! * [`layout`]: sunburst and icicle geometry as plain data for the renderer.
//! * [`suspects`]: leak suspects ranked by growth.
//! * [`suppress`]: default suppressions of the C library's and the loader's never-freed blocks.
//! * [`report`]: the serde report behind `memscape heaptree`.
//! * [`profile`]: pprof (`profile.proto`), legacy text heap profiles (gperftools, jemalloc, Go)
//!   and DHAT JSON as stack profiles over time, heap trees per measure.
//! * [`export`]: any heap tree at a time point as pprof or collapsed stacks.
//! * [`diff`]: two runs compared: their heap trees matched node by node, grown, shrunk, new
//!   and gone groups, totals (`memscape diff`, the difference views).

pub mod diff;
pub mod evolution;
pub mod export;
pub mod grouped;
pub mod layout;
pub mod massif;
pub mod massif_tree;
pub mod profile;
pub mod report;
pub mod suppress;
pub mod suspects;
pub mod synthetic;
pub mod trace_tree;
pub mod trie;
pub mod view;

pub use evolution::{
    HeapTimeline, MassifSizes, SizesSource, TimePoint, TraceSizes, massif_timeline, trace_timeline,
    trace_timeline_continued, trace_timeline_with,
};
pub use grouped::{GroupTotal, GroupedInput, GroupedPoint, GroupedSizes, grouped_timeline};
pub use layout::{HoverInfo, IcicleRect, Layout, SunburstSegment, hover, icicle, sunburst};
pub use massif::{
    CurvePoint, HeapCurveReport, MassifError, MassifFile, MassifLabel, MassifNode, MassifTree,
    Snapshot, TreeKind, parse_massif, read_massif,
};
pub use massif_tree::MassifHeap;
pub use profile::{
    Measure, ProfileError, ProfileFormat, ProfileHeap, StackProfile, load_profiles,
    profile_timeline, read_profile,
};
pub use report::{
    HeapError, HeapInput, HeapTreeOptions, HeapTreeReport, TimeSelect, heaptree_file,
    heaptree_massif, heaptree_profile, heaptree_trace, load_heap_input, timeline_massif,
    timeline_trace,
};
pub use suppress::{Suppressed, Suppressions};
pub use suspects::{LeakSuspect, leak_suspects, massif_leak_suspects, trace_leak_suspects};
pub use trace_tree::{BlockGroup, GroupKey, HeapCarry, HeapOptions, TraceHeap};
pub use trie::{GroupTrie, Sizes};
pub use view::{HeapNode, Metric, PruneOptions, StableOrder, build_view, build_view_keeping};
