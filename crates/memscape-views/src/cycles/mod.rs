//! Cycle views (Choudhury et al.): barcode, circular and spiral plots of a reference trace's
//! circle-valued parameterizations, morphing between two of them, and the MDS baseline.
//!
//! * `model`: the analysis of a trace's records; `draw`: colours, instances, barcode,
//!   projection and legend; `contours`: the density isocontours and the lasso's test;
//! * `settings`, `compose`: what the user chooses and the picture, for the pane and headless;
//! * `worker`: the analysis on its own thread, with progress and cancel (the pane's).

pub mod compose;
pub mod contours;
pub mod draw;
pub mod model;
pub mod settings;
pub mod worker;

pub use compose::compose;
pub use settings::CycleSettings;

use crate::dataset::{Dataset, DatasetContent};

/// Whether `dataset` is a reference trace, and if not why.
pub fn accepts(dataset: &Dataset) -> Result<(), &'static str> {
    match &dataset.content {
        DatasetContent::RefTrace(_) => Ok(()),
        _ => Err("needs a memory reference trace (lackey, pinatrace, CSV)"),
    }
}
