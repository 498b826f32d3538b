//! The allocation map (Moreta & Telea): the GPU view of `memscape_render::alloc_map` inside
//! egui, with zoom/pan, live α and cushion controls, colour modes, axes and hover details.
//!
//! * `model`: what is drawn, computed from the dataset (time conversions, colours, highlight);
//! * `draw`: the picture around the GPU map (axes, legend, occupancy bar, block details);
//! * `pane`: the egui pane, its camera and interaction, and the GPU callback.

pub mod draw;
pub mod model;
pub mod pane;

pub use pane::{AllocMapGpu, AllocMapPane};
