//! Cycle views (Choudhury et al.): barcode, circular and spiral plots of a reference trace's
//! circle-valued parameterizations, morphing between two of them, and the MDS baseline.

pub mod contours;
pub mod draw;
pub mod model;
pub mod pane;
