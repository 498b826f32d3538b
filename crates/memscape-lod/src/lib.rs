//! Level of detail for memscape's allocation map: an index of a trace's blocks, built once in
//! one streaming pass and stored beside the trace, from which a view's Eq. 1 sums are resolved
//! for any α in time proportional to its pixels rather than to the blocks of the trace.
//!
//! See the README for the structure (lines of levels of cells with area histograms, block
//! copies by size class), the error it makes and how it is measured.

pub mod build;
pub mod curve;
pub mod encode;
pub mod eq1;
pub mod format;
pub mod gpu_plan;
pub mod index;
pub mod msc_stream;
pub mod open;
pub mod resolve;
pub mod sidecar;
pub mod source;
pub mod summary;
pub mod synth;
pub mod trace_source;

/// Exact accumulation: memscape-eq1's (the loop memscape-render's CPU reference runs).
pub mod exact {
    pub use memscape_eq1::accumulate::*;
}
/// Per-pixel sums and their resolve: memscape-eq1's.
pub mod sums {
    pub use memscape_eq1::sums::*;
}
/// Views and blocks: memscape-eq1's `MapView` and `MapBlock` under the names this crate has
/// always used.
pub mod view {
    pub use memscape_eq1::view::{MapBlock as LodBlock, MapView as LodView, offset_to_f32};
}

use std::path::Path;

pub use build::{BuildParams, LodBuilder};
pub use format::{ClassDesc, LevelDesc};
pub use index::LodIndex;
pub use open::{FramePath, LodTrace};
pub use sums::PixelSums;
pub use view::{LodBlock, LodView};

/// First bytes of an index file.
pub const MAGIC: &[u8; 8] = b"MSCLOD\0\0";
/// Format version of index files (2: threads coloured from the 64-colour palette, 16-bit
/// bounding boxes; 3: cells' joint masks of eighths, centres of cells of few blocks, 80-byte
/// cells, the heap-size curve; 4: the mean centre in the two fullest slices of a cell's
/// address profile, `CellRec::spot_y`, in what was padding; 5: there, the quarters of those
/// slices instead; 6: 88-byte cells, `CellRec::spot_x`: the x eighths of those quarters; 7:
/// 96-byte cells, `CellRec::spot_lines`: each spot slice's fullest quarter as two lines, at
/// its least and its greatest centre; 8: the records of 7, a big trace's grids at most a
/// tenth of a cell a block and every other line's a quarter of that, `BuildParams::max_cells`).
pub const VERSION: u32 = 8;

/// Errors of building and reading an index.
#[derive(Debug, thiserror::Error)]
pub enum LodError {
    /// The I/O error is part of the message (not a `source`: reports that print the chain
    /// would say it twice).
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("level-of-detail index: {0}")]
    Format(String),
    #[error(
        "blocks must come by increasing start time (block {block} starts earlier than the one before)"
    )]
    Unsorted { block: u64 },
}

impl LodError {
    pub fn io(path: &Path, error: std::io::Error) -> Self {
        Self::Io {
            path: path.display().to_string(),
            error,
        }
    }
}

/// What an index was built from, to tell whether it still belongs to its trace.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SourceId {
    pub path: String,
    pub len: u64,
    pub modified_ns: u64,
    pub events: u64,
    pub blocks: u64,
}

impl SourceId {
    /// The identity of the file at `path` now (size and modification time) with its counts.
    pub fn of_file(path: &Path, events: u64, blocks: u64) -> Self {
        let md = std::fs::metadata(path).ok();
        Self {
            path: path.display().to_string(),
            len: md.as_ref().map_or(0, |m| m.len()),
            modified_ns: md
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as u64),
            events,
            blocks,
        }
    }
}

/// The index's header: extents, levels, classes, where the trace came from.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct IndexMeta {
    pub extent_t: u64,
    pub extent_y: u64,
    pub log_t: u8,
    pub log_y: u8,
    pub blocks: u64,
    pub params: BuildParams,
    pub levels: Vec<LevelDesc>,
    pub classes: Vec<ClassDesc>,
    pub source: SourceId,
    pub axis: source::AddressAxis,
    pub coloring: String,
    /// Blocks with a lifetime of at least 2^copy_min_c time units or a size of at least
    /// 2^copy_min_d bytes are copied into the index (every block large at some level is).
    pub copy_min_c: u8,
    pub copy_min_d: u8,
    /// The heap-size curve's levels, finest first (`curve.rs`).
    #[serde(default)]
    pub curve: Vec<curve::CurveLevelDesc>,
}
