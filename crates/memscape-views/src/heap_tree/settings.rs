//! The heap tree's settings (sunburst, icicle, timeline): the pane edits them, `memscape render`
//! takes them as options, a tour step holds them. Defaults are `memscape render`'s.

use std::fmt;
use std::str::FromStr;

use memscape_heap::{GroupKey, Metric};

/// Heap-tree settings.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(default)]
pub struct HeapTreeSettings {
    /// Which chart (the view: `--view sunburst|icicle|timeline`).
    #[cfg_attr(feature = "clap", arg(skip))]
    #[serde(skip)]
    pub chart: Chart,
    /// Time point: wall ns for traces (events when they have no wall time), massif's time unit.
    #[cfg_attr(feature = "clap", arg(long, conflicts_with_all = ["snapshot", "peak"]))]
    pub at: Option<u64>,
    /// Massif snapshot number; for graphs, the snapshot's index (from 0).
    #[cfg_attr(feature = "clap", arg(long, conflicts_with = "peak"))]
    pub snapshot: Option<u64>,
    /// The heap peak.
    #[cfg_attr(feature = "clap", arg(long))]
    pub peak: bool,
    /// Grouping keys for traces, outermost first: thread,site,size,path,module.
    #[cfg_attr(feature = "clap", arg(long, default_value = "site"))]
    pub group: GroupKeys,
    /// Node size: bytes or objects.
    #[cfg_attr(feature = "clap", arg(long, default_value = "bytes"))]
    pub metric: HeapMetric,
    /// Levels below the root.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 2))]
    pub depth: usize,
    /// Drill down: show the subtree of the first group whose name contains this text.
    #[cfg_attr(feature = "clap", arg(long))]
    pub root: Option<String>,
    /// Timeline: number of time points side by side (evenly spaced).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 4))]
    pub points: usize,
    /// Timeline: these times instead (comma-separated, in the input's time unit: ns or events
    /// for traces, massif's time unit). Traces show the exact state at each time; massif the
    /// detailed snapshot at or before it (massif has no tree in between).
    #[cfg_attr(feature = "clap", arg(long, value_delimiter = ','))]
    pub times: Vec<u64>,
    /// Profiles (pprof, DHAT, heap profiles): what the tree measures (inuse, alloc, total,
    /// reads, never_read, …, or a sample type name); default: the profile's own default.
    #[cfg_attr(
        feature = "clap",
        arg(long = "heap-measure", id = "heap_measure", value_name = "MEASURE")
    )]
    pub measure: Option<String>,
    /// Only these processes of a multi-process recording (`memscape render` sets it from the
    /// allocation map's `--process`); default: the process with the largest peak.
    #[cfg_attr(feature = "clap", arg(skip))]
    pub process: Option<String>,
}

impl Default for HeapTreeSettings {
    fn default() -> Self {
        Self {
            chart: Chart::Sunburst,
            at: None,
            snapshot: None,
            peak: false,
            group: GroupKeys(vec![GroupKey::Site]),
            metric: HeapMetric(Metric::Bytes),
            depth: 2,
            root: None,
            points: 4,
            times: Vec::new(),
            measure: None,
            process: None,
        }
    }
}

/// How the heap tree is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Chart {
    /// Root in the centre, levels as rings.
    #[default]
    Sunburst,
    /// Hierarchy left to right.
    Icicle,
    /// Sunbursts at several time points side by side, one stable layout.
    Timeline,
}

/// Grouping keys, outermost first (`thread,site`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupKeys(pub Vec<GroupKey>);

impl FromStr for GroupKeys {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        GroupKey::parse_list(s).map(GroupKeys)
    }
}

impl fmt::Display for GroupKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.0.iter().map(|k| k.name()).collect();
        f.write_str(&names.join(","))
    }
}

crate::text_setting!(GroupKeys);

/// What a node's size counts: bytes or objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeapMetric(pub Metric);

impl FromStr for HeapMetric {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Metric::parse(s)
            .map(HeapMetric)
            .ok_or_else(|| format!("expected bytes or objects, got {s:?}"))
    }
}

impl fmt::Display for HeapMetric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.0 {
            Metric::Bytes => "bytes",
            Metric::Objects => "objects",
        })
    }
}

crate::text_setting!(HeapMetric);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groupings_and_metrics_read_and_write_as_text() {
        let s: HeapTreeSettings =
            toml::from_str("group = \"thread,site\"\nmetric = \"objects\"\npeak = true").unwrap();
        assert_eq!(s.group.0, [GroupKey::Thread, GroupKey::Site]);
        assert_eq!(s.metric, HeapMetric(Metric::Objects));
        assert!(s.peak);
        // Written with the keys' own names, read back the same.
        let text = toml::to_string(&s).unwrap();
        assert!(text.contains(&format!("group = \"{}\"", s.group)), "{text}");
        let back: HeapTreeSettings = toml::from_str(&text).unwrap();
        assert_eq!(back.group, s.group);
        assert!(toml::from_str::<HeapTreeSettings>("metric = \"pages\"").is_err());
    }
}
