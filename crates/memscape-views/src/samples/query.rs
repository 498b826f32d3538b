//! The samples views' numbers computed elsewhere than from the samples in memory: the query
//! engine over a Parquet samples dataset (`memscape_engine`, attached by a `memscape` built
//! with it, as [`crate::dataset::HeapQuery`] is for the heap views). The samples worker
//! (`shared.rs`) asks it for the axes' bins and offender rows, for every selection's numbers
//! and for the strips, off the UI thread; what it cannot state (a cluster picked) is computed
//! from the samples.

use std::sync::Arc;

use memscape_samples::metrics::WindowScore;
use memscape_samples::{Aggregate, ClusterParams, ClusterSpan, ClusterTree};
use memscape_samples::{LinkedResult, SelectionSpec};

use super::shared::{Base, StripKey};
use crate::dataset::Dataset;

/// The samples views' numbers from a query engine: the same [`Base`] and [`LinkedResult`]
/// the samples give (`Base::build`, `memscape_samples::recompute`), so that the views draw one
/// picture whatever computed them.
pub trait SamplesQuery: Send + Sync {
    /// The topology (`hardware`, else the dataset's default), the axes with quantitative ones
    /// in `bins` bins and the offender rows of the whole data. Its mapping is the samples' own
    /// (`Mapping::new`): what a selection the query cannot state is computed with.
    fn base(
        &self,
        dataset: &Dataset,
        hardware: Option<&std::path::Path>,
        bins: usize,
    ) -> Result<Base, String>;

    /// Every view's numbers for `spec` on `base`; None when `spec` holds what the query cannot
    /// state (samples picked by a cluster marker): those are computed from the samples.
    fn recompute(&self, base: &Base, spec: &SelectionSpec) -> Option<Result<LinkedResult, String>>;

    /// The cluster tree `params` asks for over every sample (None: not offered, the tree is
    /// built from the samples).
    fn cluster_tree(
        &self,
        _base: &Base,
        _params: &ClusterParams,
    ) -> Option<Result<ClusterTree, String>> {
        None
    }

    /// The per-resource totals of the samples in a cluster's `span` (its glyph), for a tree
    /// that keeps no per-segment totals (None: not offered).
    fn cluster_glyph(
        &self,
        _base: &Base,
        _span: &ClusterSpan,
    ) -> Option<Result<Aggregate, String>> {
        None
    }

    /// The window-score strip `key` asks for, over every sample.
    fn strip(&self, base: &Base, key: &StripKey) -> Result<Vec<WindowScore>, String>;

    /// What computes it, for the panes' lines ("Embedded", a Ballista scheduler).
    fn engine(&self) -> String;
}

/// The query a dataset's samples views draw from, hung on its links (`Links::shared`) by the
/// loader before the dataset is shared; None for samples read in memory.
pub struct SamplesQuerySlot(pub Option<Arc<dyn SamplesQuery>>);

/// Makes the samples views of `dataset` draw from `query` (before any samples pane opens).
pub fn attach(dataset: &Dataset, query: Arc<dyn SamplesQuery>) {
    let slot = Arc::new(SamplesQuerySlot(Some(query)));
    let _ = dataset.links.shared(|| slot);
}

/// The query `dataset`'s samples views draw from, if any.
pub fn query_of(dataset: &Dataset) -> Option<Arc<dyn SamplesQuery>> {
    dataset
        .links
        .shared(|| Arc::new(SamplesQuerySlot(None)))
        .0
        .clone()
}
