//! Dependence graphs (the Ideal Graph Visualizer): a snapshot filtered by a profile, laid out in
//! layers, compared with another snapshot, with blocks as boxes, search and IGV's shown set.
//!
//! * `model`: a snapshot laid out; `draw`: nodes, edges and blocks as shapes and labels, the
//!   satellite inset, the blend of two drawings; `profiles`: the user's saved filter profiles;
//! * `settings`, `compose`: what the user chooses and the picture, for the pane and headless.

pub mod compose;
pub mod draw;
pub mod model;
pub mod profiles;
pub mod settings;

pub use compose::compose;
pub use settings::GraphSettings;

use crate::dataset::{Dataset, DatasetContent};

/// Whether `dataset` holds graphs, and if not why.
pub fn accepts(dataset: &Dataset) -> Result<(), &'static str> {
    match &dataset.content {
        DatasetContent::Graphs(_) => Ok(()),
        _ => Err("needs IGV XML or Graphviz DOT graphs"),
    }
}
