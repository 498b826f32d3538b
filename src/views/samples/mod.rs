//! The samples views beside the radial topology (`views::topology`): parallel histograms and
//! the single-attribute histogram with brushing, the selection panel, window-score strips and
//! cluster markers with their topology glyphs (MemAxes, issues 8 and 9), the source pane of the
//! top offenders, and the state all samples views of a dataset share (`shared`: one linked
//! selection, background analyses).

pub mod draw;
pub mod pane;
pub mod shared;
pub mod source;
