//! Memory-access samples on the hardware topology (MemAxes): importers for MemAxes and Mitos
//! CSV and `perf script` text, a columnar table of typed attributes, the mapping of samples onto
//! a [`memscape_topology::Topology`], selections, histograms, top offenders, and issue 9's
//! latency/imbalance metrics with neighbor-constrained clustering.
//!
//! Entry points: [`load_samples`], [`Mapping::new`], [`Mapping::aggregate`],
//! [`select_range`], [`histogram`], [`top_offenders`], [`metrics::subset_score`],
//! [`metrics::window_scores`], [`metrics::cluster_tree`], [`report::Session`],
//! [`discover::find_datasets`] (a directory's datasets, MemAxes' layout first), and the linked
//! selection of the views: [`linked::LinkedIndex`], [`linked::recompute`].

pub mod analysis;
pub mod clustering;
pub mod datasource;
pub mod discover;
pub mod import;
pub mod linked;
pub mod mapping;
pub mod metrics;
pub mod report;
pub mod selection;
pub mod table;

pub use analysis::{
    Bin, EqualWidth, Histogram, Offender, OffenderKey, SelectionSummary, histogram, rank_offenders,
    select_offender, summarize, top_offenders,
};
pub use clustering::{ClusterParams, ClusterReport, ClusterSpan, ClusterTree, WindowPlan};
pub use datasource::{DataSourceRadix, MemLevel};
pub use discover::{SamplesDataset, find_datasets, pair_files};
pub use import::{ImportOptions, load_samples, parse_samples};
pub use linked::{
    AxisBrush, AxisIndex, Brush, LinkedIndex, LinkedResult, PickGroups, PickTerm, Picked,
    SelectionSpec, recompute,
};
pub use mapping::{Aggregate, Mapping, Route, RouteKey};
pub use metrics::{Metric, WindowScore, WindowTotals};
pub use report::{SamplesReport, Session, samples_report};
pub use selection::{Bitset, RangeSpec, select_all_ranges, select_range};
pub use table::{AttrKind, Column, ColumnData, NONE, SampleFormat, Samples};

use memscape_topology::ResourceKind;

/// Errors of this crate. Row-level problems are warnings (see `Samples::warnings`), not errors.
#[derive(Debug, thiserror::Error)]
pub enum SamplesError {
    #[error(transparent)]
    Input(#[from] memscape_io::InputError),
    #[error(transparent)]
    Topology(#[from] memscape_topology::TopologyError),
    #[error("{at}: {message}")]
    Format {
        at: memscape_io::Location,
        message: String,
    },
    #[error("no attribute named {name:?}; available: {available}")]
    UnknownAttribute { name: String, available: String },
    #[error("bad selection {spec:?}: {why}")]
    BadSelection { spec: String, why: String },
    #[error("the topology {topology} has no {kind} level")]
    MissingLevel {
        kind: ResourceKind,
        topology: String,
    },
    #[error("window {window} and step {step}: expected 0 < step ≤ window")]
    BadClusterParams { window: usize, step: usize },
}
