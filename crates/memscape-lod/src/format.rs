//! The index's records as stored on disk (plain old data, little-endian, 8-byte aligned), so
//! that a mapped index file is used in place.

use bytemuck::{Pod, Zeroable};

/// One cell of a level: the blocks small at the level whose centre lies in it, summarised.
/// Cells of a level are sorted by (column, row); a column's cells are `cells[first..next)`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct CellRec {
    /// Row (address cell index).
    pub ky: u64,
    /// First bucket of the cell in the level's bucket array.
    pub bucket_first: u64,
    /// Blocks summarised.
    pub n: f32,
    /// Buckets of the cell.
    pub buckets: u16,
    /// Bounding box of the blocks' centres in the cell, in 1/255 of the cell (x lo, x hi,
    /// y lo, y hi; y from the low address), rounded outwards.
    pub bbox: [u8; 4],
    pub _pad: u16,
    /// Mean width and height of the blocks, in cell units.
    pub mean_w: f32,
    pub mean_h: f32,
    pub _pad2: u32,
}
const _: () = assert!(std::mem::size_of::<CellRec>() == 40);

/// The blocks of a cell whose area (in cell areas) lies in `[2^b, 2^(b+1))`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct BucketRec {
    pub b: i16,
    pub _pad: i16,
    /// Count.
    pub n: f32,
    /// Σ area (cell units).
    pub area: f32,
    /// Σ area² / (Σ area)² · n − 1: the squared coefficient of variation of the areas.
    pub cv2: f32,
    /// Σ colour (linear RGB) and Σ attribute.
    pub rgb: [f32; 3],
    pub attr: f32,
}
const _: () = assert!(std::mem::size_of::<BucketRec>() == 32);

/// Where a column's cells start.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct ColumnRec {
    pub kx: u64,
    pub first_cell: u64,
}
const _: () = assert!(std::mem::size_of::<ColumnRec>() == 16);

/// Where a section of the file lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Section {
    pub offset: u64,
    pub len: u64,
}

/// A level as the header describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LevelDesc {
    /// Cells are 2^log_tau time units by 2^log_sig bytes.
    pub log_tau: u8,
    pub log_sig: u8,
    /// Blocks summarised in the level (small at it).
    pub blocks: u64,
    pub columns: Section,
    pub cells: Section,
    pub buckets: Section,
}

/// Blocks of one size class, copied, sorted by start: lifetimes in `[2^c, 2^(c+1))`, sizes in
/// `[2^d, 2^(d+1))`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClassDesc {
    pub c: u8,
    pub d: u8,
    pub blocks: Section,
}
