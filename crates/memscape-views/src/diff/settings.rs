//! The difference view's settings: which chart, the heap trees' time point and grouping (the
//! heap tree's own settings, applied to both runs) and the allocation maps' settings.

use crate::alloc_map::AllocMapSettings;
use crate::heap_tree::HeapTreeSettings;
use crate::view::ViewKind;

/// What the difference view draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DiffChart {
    /// One sunburst of both runs: sized by the larger side, coloured by the change.
    #[default]
    Sunburst,
    /// The same as an icicle.
    Icicle,
    /// A's and B's sunbursts side by side, each sized by its own run, coloured by the change.
    SideBySide,
    /// The two allocation maps one above the other, time normalized to each run's length.
    Maps,
}

impl DiffChart {
    pub const ALL: [DiffChart; 4] = [
        DiffChart::Sunburst,
        DiffChart::Icicle,
        DiffChart::SideBySide,
        DiffChart::Maps,
    ];

    /// `memscape render --diff A B --view V`: sunburst and icicle are the difference charts,
    /// timeline the two trees side by side, alloc the maps.
    pub fn of_view(kind: ViewKind) -> Option<DiffChart> {
        match kind {
            ViewKind::Sunburst => Some(DiffChart::Sunburst),
            ViewKind::Icicle => Some(DiffChart::Icicle),
            ViewKind::Timeline => Some(DiffChart::SideBySide),
            ViewKind::AllocMap => Some(DiffChart::Maps),
            _ => None,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            DiffChart::Sunburst => "difference sunburst",
            DiffChart::Icicle => "difference icicle",
            DiffChart::SideBySide => "side by side",
            DiffChart::Maps => "allocation maps",
        }
    }
}

/// Settings of the difference view.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DiffSettings {
    pub chart: DiffChart,
    /// Time point (`at`, `snapshot`, `peak`: each run's own), grouping, metric and depth.
    pub heap: HeapTreeSettings,
    /// The maps' settings (colouring, time axis, α, cushions), applied to both runs.
    pub map: AllocMapSettings,
}
