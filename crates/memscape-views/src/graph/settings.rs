//! The graph view's settings: the snapshot, the filter profile, differences, blocks, search,
//! IGV's shown set, the zoom and the satellite. The pane edits them, `memscape render` takes
//! them as options, a tour step holds them.

use crate::values::SnapshotPair;

/// Graph-view settings.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(default)]
pub struct GraphSettings {
    /// Which snapshot (from 0, in document order). On the command line this is `--snapshot`,
    /// which the heap views share (massif snapshots).
    #[cfg_attr(feature = "clap", arg(skip))]
    pub snapshot: usize,
    /// Graph view: a shipped filter profile (hotspot, llvm-cfg) or a profile TOML file.
    #[cfg_attr(feature = "clap", arg(long))]
    pub profile: Option<String>,
    /// Graph view: colour the differences from this snapshot (added, removed, changed).
    #[cfg_attr(feature = "clap", arg(long))]
    pub diff_from: Option<usize>,
    /// Graph view: snapshot B coloured by its differences from snapshot A (`A..B`, indices
    /// from 0; B may be below A).
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "A..B", conflicts_with_all = ["diff_from", "snapshot"])
    )]
    pub diff: Option<SnapshotPair>,
    /// Graph view, with a difference: only the changed nodes (and the ends of changed edges).
    #[cfg_attr(feature = "clap", arg(long))]
    pub changes_only: bool,
    /// Graph view: lay out the blocks (CFG basic blocks, DOT clusters) as boxes.
    #[cfg_attr(feature = "clap", arg(long))]
    pub blocks: bool,
    /// Graph view: outline the nodes matching `[property=]regex`; with --zoom, centre on the
    /// first.
    #[cfg_attr(feature = "clap", arg(long, value_name = "[PROPERTY=]REGEX"))]
    pub search: Option<String>,
    /// Graph view: show only the nodes matching `[property=]regex` fully, their neighbours
    /// semi-transparent, nothing else (IGV's extraction).
    #[cfg_attr(feature = "clap", arg(long, value_name = "[PROPERTY=]REGEX"))]
    pub focus: Option<String>,
    /// Graph view: magnification over the fitted picture (about the centre, or the first
    /// --search match).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 1.0))]
    #[serde(with = "crate::values::short_f32")]
    pub zoom: f32,
    /// Graph view: draw the satellite (overview) inset with the visible part framed.
    #[cfg_attr(feature = "clap", arg(long))]
    pub satellite: bool,
}

impl Default for GraphSettings {
    fn default() -> Self {
        Self {
            snapshot: 0,
            profile: None,
            diff_from: None,
            diff: None,
            changes_only: false,
            blocks: false,
            search: None,
            focus: None,
            zoom: 1.0,
            satellite: false,
        }
    }
}

impl GraphSettings {
    /// The snapshot shown and the one it is compared with.
    pub fn snapshots(&self) -> (usize, Option<usize>) {
        match self.diff {
            Some(pair) => (pair.to, Some(pair.from)),
            None => (self.snapshot, self.diff_from),
        }
    }
}
