//! Sampled memory accesses on the hardware topology (MemAxes): the radial topology, the top
//! offenders, parallel and single histograms with the linked selection, window-score strips,
//! cluster markers and their topology glyphs.
//!
//! * `mapping`: samples mapped onto a topology; `shared`: what every samples view of a dataset
//!   shares (the mapping and index, the one selection, background analyses); `query`: those
//!   numbers from a query engine, `glyph_query`: a hovered cluster's glyph asked of it;
//! * `topology_draw`, `histograms_draw`, `histograms`: the drawings as shapes and labels;
//!   `source`: where an offender's source file is;
//! * `settings`, `compose`: what the user chooses and the pictures, for the panes and headless.

pub mod compose;
pub mod glyph_query;
pub mod histograms;
pub mod histograms_draw;
pub mod mapping;
pub mod query;
pub mod settings;
pub mod shared;
pub mod source;
pub mod topology_draw;

pub use compose::compose;
pub use settings::SamplesSettings;

use crate::dataset::{Dataset, DatasetContent};

/// Whether `dataset` can be shown on the topology (samples, or a topology alone).
pub fn accepts_topology(dataset: &Dataset) -> Result<(), &'static str> {
    match &dataset.content {
        DatasetContent::Samples(_) | DatasetContent::Topology(_) => Ok(()),
        _ => Err("needs memory-access samples or a topology"),
    }
}

/// Whether `dataset` holds samples (the histograms).
pub fn accepts_samples(dataset: &Dataset) -> Result<(), &'static str> {
    match &dataset.content {
        DatasetContent::Samples(_) => Ok(()),
        _ => Err("needs memory-access samples"),
    }
}
