//! Heap evolution (AntTracks): heap trees over time as sunburst and icicle.

pub mod draw;
pub mod model;
pub mod pane;
