//! Heap trees over time (AntTracks): sunburst, icicle and small multiples of the live heap at
//! time points, grouped by thread, call site, path, module or size class.
//!
//! * `model`: the timeline of group sizes of a dataset (trace or massif) and the tree shown;
//! * `draw`: rings and rectangles as shapes, animated between two trees;
//! * `settings`, `compose`: what the user chooses and the picture, for the pane and headless.

pub mod compose;
pub mod draw;
pub mod model;
pub mod settings;

pub use compose::compose;
pub use model::accepts;
pub use settings::HeapTreeSettings;
