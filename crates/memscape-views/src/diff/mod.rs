//! Two runs compared: heap trees side by side and as one difference sunburst or icicle
//! (grown, shrunk, new, gone, coloured by the change on a diverging ramp), and allocation maps
//! one above the other on a shared normalized time axis. The comparison itself is
//! `memscape_heap::diff`; `compose` draws it for the GUI's difference pane and
//! `memscape render --compare A B`.

pub mod compose;
pub mod settings;

pub use compose::{compose, report};
pub use settings::{DiffChart, DiffSettings};
