//! memscape's views: everything between the data model and a window or an image.
//!
//! * **Data**: [`dataset`] (any supported file loaded, its format detected from content),
//!   [`links`] (what views of one dataset share: time cursor, highlight, per-kind state),
//!   [`demo`] (the embedded demo files), [`discover`] (the datasets of a directory).
//! * **Pictures**: [`picture`] (a view's picture as data: background, GPU layers, shapes,
//!   labels), [`label`] (text placed by geometry code), [`gpu`] (the one bridge that paints a
//!   picture in an egui pane, uploads kept per pane), [`headless`] (a picture drawn into an
//!   image), [`svg`] (a picture as an SVG document: shapes and text as vectors, GPU layers as
//!   embedded images).
//! * **Views**: one module per view ([`alloc_map`], [`heap_tree`], [`cycles`], [`graph`],
//!   [`samples`]), each with its model, its typed settings and one `compose` that the GUI
//!   panes, `memscape render`, tours and `present` all call; [`view`] names the views and holds
//!   any view's settings as one value; [`diff`] compares two datasets (difference charts of
//!   their heap trees, their allocation maps stacked).
//! * **Tours**: [`tour`] (the file format, interpolation between steps, the frame loop).
//! * **Frame statistics**: [`stats`] (the reports of `memscape render --stats`, rolling frame
//!   times, the GUI's statistics overlay as a picture), [`bench`] (`memscape bench`: the
//!   standard frames on the user's GPU).
//!
//! The crate knows no window shell and no command line: eframe, egui_tiles and clap stay in the
//! binary (the optional `clap` feature only derives clap's traits on the settings so that
//! `memscape render` takes them as options; a test checks the default build's dependencies).

pub mod alloc_map;
pub mod bench;
pub mod cycles;
pub mod dataset;
pub mod demo;
pub mod diff;
pub mod discover;
pub mod error;
pub mod fonts;
pub mod gpu;
pub mod gpu_health;
pub mod graph;
pub mod headless;
pub mod heap_tree;
pub mod label;
pub mod links;
pub mod live;
pub mod lod_refine;
pub mod msc_head;
pub mod picture;
pub mod processes;
pub mod ramp;
pub mod render;
pub mod samples;
pub mod slot_worker;
pub mod source_file;
pub mod stats;
pub mod sums_worker;
pub mod svg;
#[doc(hidden)]
pub mod testing;
pub mod tour;
pub mod values;
pub mod view;

pub use dataset::{Dataset, DatasetContent, LoadSource};
pub use error::{Result, ViewError};
pub use picture::Picture;
pub use view::{ViewKind, ViewSettings};

/// How soon a [`wake`] repaints: not zero, so that egui does not double the frame.
pub const WAKE_DELAY: std::time::Duration = std::time::Duration::from_millis(1);

/// Wakes the window for one frame, for news it has not drawn yet (a worker's result, a load's
/// progress). egui turns an immediate request (`request_repaint`) into two frames, to settle
/// frame-delayed responses; for news one frame is enough (a view that needs one more after it
/// asks for it), and on a software rasterizer each frame of the window costs 50–100 ms of CPU.
/// A request with a delay, however short, is one frame.
pub fn wake(ctx: &egui::Context) {
    ctx.request_repaint_after(WAKE_DELAY);
}

#[cfg(test)]
mod test_data {
    /// The embedded demo's allocation trace, loaded.
    #[allow(clippy::expect_used)]
    pub fn demo() -> crate::dataset::Dataset {
        let demo = crate::demo::by_name("demo").expect("the demo");
        crate::dataset::load(&demo.source(), &|_, _| {}).expect("the demo loads")
    }
}
