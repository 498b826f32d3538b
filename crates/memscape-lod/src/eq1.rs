//! Eq. 1, the cushions and the colour ramp: memscape-eq1's, the same code memscape-render's CPU
//! reference runs (re-exported here so that the crate's paths stay `memscape_lod::eq1::…`).

pub use memscape_eq1::*;
