//! The panes the shell offers (as rerun's `default_views.rs`): each kind says which datasets it
//! shows (the view's own rule in `memscape_views`) and makes its pane; the shell needs no other
//! change for a new one.

use std::sync::Arc;

use memscape_views::Dataset;

use crate::panes::{self, View};

/// The kinds of pane memscape offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaneKind {
    Summary,
    AllocMap,
    HeapTree,
    Cycles,
    Graph,
    Topology,
    Histograms,
}

impl PaneKind {
    pub const ALL: &'static [PaneKind] = &[
        PaneKind::AllocMap,
        PaneKind::HeapTree,
        PaneKind::Cycles,
        PaneKind::Graph,
        PaneKind::Topology,
        PaneKind::Histograms,
        PaneKind::Summary,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PaneKind::Summary => "Summary",
            PaneKind::AllocMap => "Allocation map",
            PaneKind::HeapTree => "Heap tree",
            PaneKind::Cycles => "Cycles",
            PaneKind::Graph => "Graph",
            PaneKind::Topology => "Topology",
            PaneKind::Histograms => "Histograms",
        }
    }

    /// Whether this pane can show `dataset`, and if not, why (shown in the menu).
    pub fn accepts(self, dataset: &Dataset) -> Result<(), &'static str> {
        use memscape_views::{alloc_map, cycles, graph, heap_tree, samples};
        match self {
            PaneKind::Summary => Ok(()),
            PaneKind::AllocMap => alloc_map::accepts(dataset),
            PaneKind::HeapTree => heap_tree::accepts(dataset),
            PaneKind::Cycles => cycles::accepts(dataset),
            PaneKind::Graph => graph::accepts(dataset),
            PaneKind::Topology => samples::accepts_topology(dataset),
            PaneKind::Histograms => samples::accepts_samples(dataset),
        }
    }

    pub fn create(self, dataset: Arc<Dataset>, ctx: &egui::Context) -> Box<dyn View> {
        match self {
            PaneKind::HeapTree => Box::new(panes::heap_tree::HeapTreePane::new(dataset, ctx)),
            PaneKind::Cycles => Box::new(panes::cycles::CyclesPane::new(dataset, ctx)),
            PaneKind::Graph => Box::new(panes::graph::GraphPane::new(dataset)),
            PaneKind::Topology => Box::new(panes::topology::TopologyPane::new(dataset, ctx)),
            PaneKind::Histograms => Box::new(panes::samples::HistogramsPane::new(dataset, ctx)),
            PaneKind::Summary => Box::new(panes::summary::SummaryView::new(dataset)),
            PaneKind::AllocMap => Box::new(panes::alloc_map::AllocMapPane::new(dataset)),
        }
    }

    /// The panes opened by default for a freshly loaded dataset.
    pub fn defaults_for(dataset: &Dataset) -> Vec<PaneKind> {
        let mut kinds: Vec<PaneKind> = Self::ALL
            .iter()
            .copied()
            .filter(|k| *k != PaneKind::Summary && k.accepts(dataset).is_ok())
            .collect();
        if kinds.is_empty() {
            kinds.push(PaneKind::Summary);
        }
        kinds
    }
}
