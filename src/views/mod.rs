//! The view registry. Each capability is a view type that says which data it needs; the shell
//! offers, for every loaded dataset, the views that fit it.
//!
//! Adding a view: write `views/<name>.rs` with a type implementing [`View`], add a variant to
//! [`ViewKind`] with its name, `accepts` rule and constructor. The shell needs no other change.

pub mod alloc_map;
pub mod cycles;
pub mod graph;
pub mod heap_tree;
pub mod labels;
pub mod picture;
pub mod samples;
pub mod shapes_paint;
pub mod source_file;
pub mod summary;
pub mod topology;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::data::{Dataset, DatasetContent};

/// The bits a pane may set on its key to name further GPU resources of its own (a context
/// view, a legend batch): `key ^ (1 << 62)` still belongs to `key`.
const SUB_KEY_BITS: u64 = 0xF << 60;

/// Keys of panes dropped since the app last asked (see [`take_released_pane_keys`]).
static RELEASED: std::sync::Mutex<Vec<u64>> = std::sync::Mutex::new(Vec::new());

/// A process-wide unique key for a pane's GPU resources, held by the pane. When the pane is
/// dropped (its tile closed) the key is released, and the app frees every GPU buffer kept
/// under it or one of its sub-keys at the end of the frame. Not `Clone`: one owner per key.
#[derive(Debug)]
pub struct PaneKey(u64);

impl PaneKey {
    pub fn new() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Self(NEXT.fetch_add(1, Ordering::Relaxed))
    }

    pub fn get(&self) -> u64 {
        self.0
    }
}

impl Default for PaneKey {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for PaneKey {
    fn drop(&mut self) {
        if let Ok(mut released) = RELEASED.lock() {
            released.push(self.0);
        }
    }
}

/// The keys of panes dropped since the last call.
pub fn take_released_pane_keys() -> Vec<u64> {
    RELEASED
        .lock()
        .map(|mut r| std::mem::take(&mut *r))
        .unwrap_or_default()
}

/// Drops the entries of `map` kept for a released pane (under its key or a sub-key).
pub fn forget_released<V>(map: &mut std::collections::HashMap<u64, V>, released: &[u64]) {
    if !released.is_empty() {
        map.retain(|key, _| !released.contains(&(key & !SUB_KEY_BITS)));
    }
}

/// What every view gets each frame besides its own state.
pub struct ViewContext<'a> {
    /// The GPU device egui renders with (None when eframe runs without wgpu).
    pub render_state: Option<&'a egui_wgpu::RenderState>,
}

pub trait View {
    /// Tab title.
    fn title(&self) -> String;
    /// Draws the view into `ui`, which fills its pane.
    fn ui(&mut self, ui: &mut egui::Ui, cx: &ViewContext<'_>);
    /// True once the view has everything it needs on screen (data uploaded, first frame drawn):
    /// the screenshot self-test waits for it.
    fn is_ready(&self) -> bool {
        true
    }
    /// The pane's current state as a presentation-tour step ("Record tour step"), when the view
    /// can be rendered headless.
    fn tour_step(&self) -> Option<crate::tour::StepSpec> {
        None
    }
}

/// How a dataset is named in a tour file: `demo` / `demo:<key>` for an embedded demo file,
/// else the file's absolute path.
pub fn tour_file_of(dataset: &Dataset) -> String {
    let name = dataset.name.as_str();
    match crate::demo::of_dataset_name(name) {
        Some(demo) => demo.tour_name(),
        None => std::fs::canonicalize(name)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| name.to_owned()),
    }
}

/// The kinds of view memscape offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewKind {
    Summary,
    AllocMap,
    HeapTree,
    Cycles,
    Graph,
    Topology,
    Histograms,
}

impl ViewKind {
    pub const ALL: &'static [ViewKind] = &[
        ViewKind::AllocMap,
        ViewKind::HeapTree,
        ViewKind::Cycles,
        ViewKind::Graph,
        ViewKind::Topology,
        ViewKind::Histograms,
        ViewKind::Summary,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ViewKind::Summary => "Summary",
            ViewKind::AllocMap => "Allocation map",
            ViewKind::HeapTree => "Heap tree",
            ViewKind::Cycles => "Cycles",
            ViewKind::Graph => "Graph",
            ViewKind::Topology => "Topology",
            ViewKind::Histograms => "Histograms",
        }
    }

    /// Whether this view can show `dataset`, and if not, why (shown in the menu).
    pub fn accepts(self, dataset: &Dataset) -> Result<(), &'static str> {
        match (self, &dataset.content) {
            (ViewKind::Summary, _) => Ok(()),
            (ViewKind::AllocMap, DatasetContent::AllocTrace(t)) => {
                if t.trace.has_addresses() {
                    Ok(())
                } else {
                    Err(
                        "this trace has no addresses (heaptrack's processed format): use heaptrack --raw",
                    )
                }
            }
            (ViewKind::AllocMap, _) => Err("needs an allocation trace"),
            (ViewKind::HeapTree, _) => heap_tree::model::accepts(dataset),
            (ViewKind::Cycles, DatasetContent::RefTrace(_)) => Ok(()),
            (ViewKind::Cycles, _) => Err("needs a memory reference trace (lackey, pinatrace, CSV)"),
            (ViewKind::Graph, DatasetContent::Graphs(_)) => Ok(()),
            (ViewKind::Graph, _) => Err("needs IGV XML or Graphviz DOT graphs"),
            (ViewKind::Topology, DatasetContent::Samples(_) | DatasetContent::Topology(_)) => {
                Ok(())
            }
            (ViewKind::Topology, _) => Err("needs memory-access samples or a topology"),
            (ViewKind::Histograms, DatasetContent::Samples(_)) => Ok(()),
            (ViewKind::Histograms, _) => Err("needs memory-access samples"),
        }
    }

    pub fn create(self, dataset: Arc<Dataset>, ctx: &egui::Context) -> Box<dyn View> {
        match self {
            ViewKind::HeapTree => Box::new(heap_tree::pane::HeapTreePane::new(dataset, ctx)),
            ViewKind::Cycles => Box::new(cycles::pane::CyclesPane::new(dataset, ctx)),
            ViewKind::Graph => Box::new(graph::pane::GraphPane::new(dataset)),
            ViewKind::Topology => Box::new(topology::pane::TopologyPane::new(dataset, ctx)),
            ViewKind::Histograms => Box::new(samples::pane::HistogramsPane::new(dataset, ctx)),
            ViewKind::Summary => Box::new(summary::SummaryView::new(dataset)),
            ViewKind::AllocMap => Box::new(alloc_map::AllocMapPane::new(dataset)),
        }
    }

    /// The views opened by default for a freshly loaded dataset.
    pub fn defaults_for(dataset: &Dataset) -> Vec<ViewKind> {
        let mut kinds: Vec<ViewKind> = Self::ALL
            .iter()
            .copied()
            .filter(|k| *k != ViewKind::Summary && k.accepts(dataset).is_ok())
            .collect();
        if kinds.is_empty() {
            kinds.push(ViewKind::Summary);
        }
        kinds
    }
}

#[cfg(test)]
mod pane_key_tests {
    use super::*;

    #[test]
    fn a_dropped_pane_releases_its_key_and_sub_keys() {
        let kept = PaneKey::new();
        let closed = PaneKey::new();
        let (k, c) = (kept.get(), closed.get());
        let mut map: std::collections::HashMap<u64, &str> = [
            (k, "kept"),
            (k ^ (1 << 62), "kept context"),
            (c, "closed"),
            (c ^ (1 << 62), "closed context"),
            (c ^ (1 << 61), "closed legend"),
        ]
        .into();
        drop(closed);
        // Other tests may release keys concurrently: only ours matter.
        let released = take_released_pane_keys();
        assert!(released.contains(&c));
        assert!(!released.contains(&k));
        forget_released(&mut map, &released);
        let mut left: Vec<_> = map.into_values().collect();
        left.sort();
        assert_eq!(left, ["kept", "kept context"]);
    }
}
