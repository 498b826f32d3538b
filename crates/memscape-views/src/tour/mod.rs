//! Presentation tours: a list of steps, each a view of a file with its typed settings and an
//! optional caption, reached by an eased transition.
//!
//! * `format`: the TOML file, inheritance between steps, steps recorded from the GUI;
//! * `interpolate`: what glides between two steps and what cross-fades;
//! * `frames`: the frame loop, drawing each frame from its settings headless.

pub mod format;
pub mod frames;
pub mod interpolate;

pub use format::{
    DEMO_TOUR, Easing, Step, append_step, frame_count, frames_of, parse, step_text, tour_file_of,
};
pub use frames::{Renderer, crossfade, render_frames};
pub use interpolate::{AddressAxis, interpolate, interpolate_on, same_picture};

#[cfg(test)]
mod tests;
