//! The allocation map (Moreta & Telea): every malloc/free block a rectangle in time × address.
//!
//! * `scene`: a trace laid out once per dataset (collapsed address axis, both time axes);
//!   `scene_blocks`: its per-block arrays, continued from snapshot to snapshot when live;
//! * `bins`: the map split into bins, each on its own axis; `colors`: what colours the blocks;
//! * `camera`: the window over the plane, its zoom, pan and animation, the grid of cells;
//! * `layout`, `decorate`: where the cells, bars and context view go, and the shapes and labels
//!   around the maps;
//! * `settings`: what the user chooses; `compose`: the picture, for the pane and headless;
//! * `live_bar`: the unbinned bar of a live recording, continued from snapshot to snapshot;
//!   `live_frame`: a live recording's map frame, with room to grow;
//! * `lod`: big traces drawn from their level-of-detail index (where the draw path is chosen);
//!   (`crate::lod_refine` is the GUI's worker that computes those frames off the UI thread.)

pub mod bar_integral;
pub mod bins;
pub mod camera;
pub mod colors;
pub mod compose;
pub mod curves;
pub mod decorate;
pub mod free_sites;
pub mod layout;
pub mod live_bar;
pub mod live_frame;
pub mod lod;
pub mod scene;
pub mod scene_blocks;
pub mod settings;
pub mod stacked;

pub use compose::compose;
pub use settings::AllocMapSettings;

use crate::dataset::{Dataset, DatasetContent};

/// Whether `dataset` has an allocation map, and if not why.
pub fn accepts(dataset: &Dataset) -> Result<(), &'static str> {
    match &dataset.content {
        DatasetContent::AllocTrace(t) if t.trace.has_addresses() => Ok(()),
        DatasetContent::AllocTrace(_) => {
            Err("this trace has no addresses (heaptrack's processed format): use heaptrack --raw")
        }
        _ => Err("needs an allocation trace"),
    }
}
