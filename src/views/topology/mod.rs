//! Memory-access samples on the hardware topology (MemAxes): radial topology and top offenders.

pub mod draw;
pub mod pane;
