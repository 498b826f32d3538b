//! The graph pane (the Ideal Graph Visualizer's views) and its filter-profile editor.

pub mod pane;
pub mod profile_editor;

pub use pane::GraphPane;
