//! memscape's GPU renderer.
//!
//! Every view's pipelines live here, written against plain wgpu; nothing in this crate knows egui
//! or the application. The same pipelines draw into egui's render pass (through the app's paint
//! callbacks) and into offscreen textures for `memscape render` and the golden-image tests.
//!
//! Each GPU computation has a CPU twin in the same module (`cpu_reference`), and tests hold the
//! two together on Mesa's lavapipe with a stated tolerance.

pub mod alloc_map;
pub mod binding;
pub mod color;
pub mod context;
pub mod error;
pub mod golden;
pub mod image;
pub mod offscreen;
mod overlay;
pub mod polar_morph;
pub mod shader;
pub mod shapes;
pub mod stats;
pub mod u64_split;

pub use context::{AdapterChoice, GpuContext};
pub use error::RenderError;
pub use image::RgbaImage;
pub use offscreen::OffscreenTarget;
pub use stats::{FrameStats, GpuTimingSupport, MapDrawStats, PassTiming, StatsRecorder};
