//! Dependence graphs (the Ideal Graph Visualizer's views): filtered, laid out in layers,
//! snapshot differences coloured.

pub mod draw;
pub mod model;
pub mod pane;
pub mod profile_editor;
pub mod profiles;
