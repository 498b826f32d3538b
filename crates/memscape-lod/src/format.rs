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
    /// Where the blocks' centres lie jointly: bit `8·j + i` is set when some centre lies in
    /// the x eighth `i` and the y eighth `j` of the cell. The profiles are per axis: where a
    /// pixel corner cuts the cell, their product would give colour to a pixel that no block
    /// reaches (at α = 0.1 a sliver weighs 0.63 of a block); the mask tells which pixels the
    /// blocks reach together.
    pub mask: u64,
    /// Blocks summarised.
    pub n: f32,
    /// Buckets of the cell.
    pub buckets: u16,
    /// Bounding box of the blocks' extents (x lo, x hi, y lo, y hi; y from the low address),
    /// rounded outwards, as 16-bit codes `c` of `c · 2/65535 − 0.5` cells (blocks centred in
    /// the cell and smaller than it lie within [−0.5, 1.5]): the high bytes here, the low bytes
    /// in `bbox_fine`. At low α a sliver of coverage weighs much (0.01^0.1 = 0.63): an edge
    /// rounded by 1/128 of a cell past a pixel boundary coloured the empty neighbour.
    pub bbox: [u8; 4],
    /// Where the centres lie inside the two fullest slices of `profile_y` (ties: the lower
    /// slice first; `CellRec::spot_slices`): a profile of the slice's [`SPOT_QUARTERS`]
    /// quarters, 2 bits each (quarter `i` at bits `2i..2i + 2`, counts scaled so that the
    /// largest is 3 and any occupied quarter at least 1), 0 where unknown (centres uniform
    /// over the slice). Allocators reuse an address over and over: a slice's blocks often sit
    /// at one or two points of it, and where a pixel edge cuts the slice, spreading them over
    /// all of it put most of a 640×140 view's misses at α 0.1 on the wrong side of the edge
    /// (issue 25, wave 23). Format 4 kept their mean instead, spread over the widest range
    /// about it inside the slice: 140 misses of that view's 89,600 pixels where the quarters
    /// leave 119 (wave 24; a slice's blocks often sit at two points of it). Cells of few
    /// blocks: 0.
    pub spot_y: [u8; 2],
    /// Mean width and height of the blocks, in cell units.
    pub mean_w: f32,
    pub mean_h: f32,
    /// Where the blocks' centres lie along each axis: counts in [`PROFILE_BINS`] equal slices
    /// of the cell (x from the low time, y from the low address), scaled so that the largest
    /// is 255 and any occupied slice is at least 1. Allocators reuse a few addresses over and
    /// over: a cell's blocks are rarely spread evenly. A cell of at most [`FEW_BLOCKS`]
    /// blocks holds their centres here instead ([`CellRec::few`]): block `i`'s x as a u16
    /// (little-endian, 1/65535 of a cell) at bytes `2i..2i + 2` of `profile_x` when there are
    /// at most [`FEW_BLOCKS_FINE`], else as a u8 (1/255) at byte `i`; its y in `profile_y` (where a pixel edge cuts such a cell, which blocks lie on which side decides
    /// the colour at low α).
    pub profile_x: [u8; PROFILE_BINS],
    pub profile_y: [u8; PROFILE_BINS],
    /// Low bytes of the bounding box codes.
    pub bbox_fine: [u8; 4],
    /// Where along x the centres of each quarter of the two slices `spot_y` describes lie:
    /// byte `SPOT_QUARTERS · k + i` has bit `e` set when a centre of quarter `i` of spot slice
    /// `k` lies in the x eighth `e` of the cell (0 where `spot_y` is unknown). Allocators reuse
    /// a few addresses over and over, each at its own times: where a pixel row edge cuts a
    /// spot slice, the profiles and the 8×8 `mask` cannot tell which of the slice's lines of
    /// reused addresses lie in which pixel column, and at α 0.1 the line on the wrong side of
    /// the edge coloured 89 of the 119 misses of `tests/faithful.rs`'s 640×140 view (issue 25,
    /// wave 28).
    pub spot_x: [u8; 2 * SPOT_QUARTERS],
    /// Where the centres of the fullest quarter of each slice `spot_y` describes lie
    /// (`CellRec::spot_quarter`: the lowest quarter whose 2-bit count is 3), as two lines: for
    /// spot slice `k`, word `k` holds the step of [`SPOT_LINE_STEPS`] of the quarter holding
    /// the lowest centre (bits 0..10), the one holding the highest (bits 10..20) and the
    /// share of the quarter's centres given to the upper line, × 4095 (bits 20..32: the share
    /// that keeps their mean); [`CellRec::SPOT_LINES_UNKNOWN`] (low step above the high one)
    /// where not known: the centres spread over the quarter. Allocators reuse an address over
    /// and over: a quarter's centres are mostly one or two lines of blocks at one address
    /// each, exact here to 1/65,536 of the cell (one line: both steps its own, the share 0).
    /// Where a pixel row edge passes within a quarter (1/64 of the cell) of such a line,
    /// spreading it over the quarter put half of it on the wrong side of the edge, and at
    /// α 0.5 that gave 213 of the 298 misses of the 50 M-event trace's whole view at 640×360
    /// (issue 25, wave 31).
    pub spot_lines: [u32; 2],
}

/// Slices of a cell's profiles.
pub const PROFILE_BINS: usize = 16;

/// A spot slice of a cell's address profile (`CellRec::spots_y`): which slice of
/// `profile_y` and its parts: each quarter, or each of the two lines its fullest quarter's
/// centres are given to (`CellRec::spot_lines`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpotSlice {
    /// `usize::MAX`: none.
    pub slice: usize,
    /// The first `parts` are used, by quarter.
    pub parts: [SpotPart; SPOT_QUARTERS + 1],
    pub len: usize,
}

/// Part of a spot slice (`SpotSlice`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpotPart {
    /// The quarter it lies in.
    pub quarter: usize,
    /// Its share of the slice's centres.
    pub share: f64,
    /// The range (cell units, low and high) they are spread over.
    pub range: [f64; 2],
}

impl SpotSlice {
    /// No spot slice.
    pub const NONE: SpotSlice = SpotSlice {
        slice: usize::MAX,
        parts: [SpotPart {
            quarter: 0,
            share: 0.0,
            range: [0.0; 2],
        }; SPOT_QUARTERS + 1],
        len: 0,
    };

    /// The parts in use.
    #[inline]
    pub fn parts(&self) -> &[SpotPart] {
        &self.parts[..self.len.min(SPOT_QUARTERS + 1)]
    }
}

/// Parts of a slice of `profile_y` whose centres `CellRec::spot_y` counts.
pub const SPOT_QUARTERS: usize = 4;

/// Steps of a quarter of a slice in which `CellRec::spot_lines` places its lines (2^-16 of a
/// cell: exact in f32 and f64, so that both builders' steps agree wherever a centre is).
pub const SPOT_LINE_STEPS: u32 = 1024;

/// `x.floor()` (`spot_lines_of`'s steps; centres lie in [0, 1]).
fn ffloor(x: f64) -> f64 {
    let t = x as i64 as f64;
    if t > x { t - 1.0 } else { t }
}

const _: () = assert!(std::mem::size_of::<CellRec>() == 96);

/// Cells of at most this many blocks keep their centres (`CellRec::profile_x`): to 1/65535
/// of a cell up to [`FEW_BLOCKS_FINE`] blocks, to 1/255 beyond.
pub const FEW_BLOCKS: usize = 16;
pub const FEW_BLOCKS_FINE: usize = 8;

/// Slices of a cell's joint mask along each axis (`CellRec::mask`).
pub const MASK_BINS: usize = 8;

/// Octaves of area per bucket.
pub const BUCKET_OCTAVES: i32 = 2;

/// The bucket of an area (cell units): `floor(log2(area) / BUCKET_OCTAVES)`.
#[inline]
pub fn bucket_of(area: f64) -> i16 {
    (area.log2() / f64::from(BUCKET_OCTAVES))
        .floor()
        .clamp(-127.0, 127.0) as i16
}

/// The blocks of a cell whose area (in cell areas) lies in
/// `[2^(BUCKET_OCTAVES·b), 2^(BUCKET_OCTAVES·(b+1)))`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct BucketRec {
    /// How many.
    pub n: f32,
    pub b: i8,
    /// Squared coefficient of variation of the areas (Σa²·n/(Σa)² − 1) × 255 (it is below
    /// 1/8 inside one octave).
    pub cv2: u8,
    /// Mean area: 2^(BUCKET_OCTAVES·b) · (1 + (2^BUCKET_OCTAVES − 1) · mean_frac / 65536).
    pub mean_frac: u16,
    /// Mean colour (linear RGB) and mean attribute, × 65535.
    pub rgb: [u16; 3],
    pub attr: u16,
}
const _: () = assert!(std::mem::size_of::<BucketRec>() == 16);

impl CellRec {
    /// Bounding box edge `k` (x lo, x hi, y lo, y hi) in cell units.
    #[inline]
    /// The centres of a cell of at most [`FEW_BLOCKS`] blocks (cell units), else `None`.
    pub fn few(&self) -> Option<impl Iterator<Item = [f64; 2]> + '_> {
        let n = self.n.round();
        if !(n >= 1.0 && n <= FEW_BLOCKS as f32) {
            return None;
        }
        let fine = n <= FEW_BLOCKS_FINE as f32;
        let at = move |p: &[u8; PROFILE_BINS], i: usize| {
            if fine {
                f64::from(u16::from_le_bytes([p[2 * i], p[2 * i + 1]])) / 65535.0
            } else {
                f64::from(p[i]) / 255.0
            }
        };
        Some((0..n as usize).map(move |i| [at(&self.profile_x, i), at(&self.profile_y, i)]))
    }

    /// The two fullest occupied slices of a profile, the fuller first (ties: the lower slice),
    /// `usize::MAX` where fewer are occupied: the slices `spot_y` describes.
    pub fn spot_slices(profile: &[u8; PROFILE_BINS]) -> [usize; 2] {
        let mut best = [usize::MAX; 2];
        for j in 0..PROFILE_BINS {
            if profile[j] == 0 {
                continue;
            }
            let fuller = |k: usize| k == usize::MAX || profile[j] > profile[k];
            if fuller(best[0]) {
                best = [j, best[0]];
            } else if fuller(best[1]) {
                best[1] = j;
            }
        }
        best
    }

    /// The slices of `profile_y` whose quarters `spot_y` counts, with their parts: each
    /// quarter's share of the slice's centres spread over it, the fullest one's as its two
    /// lines (`spot_lines`) where known (slice `usize::MAX` where none).
    #[inline]
    pub fn spots_y(&self) -> [SpotSlice; 2] {
        const SPOT_BINS: f64 = (PROFILE_BINS * SPOT_QUARTERS) as f64;
        let slices = Self::spot_slices(&self.profile_y);
        std::array::from_fn(|k| match (slices[k], self.spot_y[k]) {
            (j, c) if j != usize::MAX && c > 0 => {
                let codes: [u8; SPOT_QUARTERS] = std::array::from_fn(|i| (c >> (2 * i)) & 3);
                let total: f64 = codes.iter().map(|&v| f64::from(v)).sum();
                let mut out = SpotSlice {
                    slice: j,
                    ..SpotSlice::NONE
                };
                let fullest = Self::spot_quarter(c);
                for (i, &code) in codes.iter().enumerate() {
                    let share = f64::from(code) / total;
                    let q = (j * SPOT_QUARTERS + i) as f64;
                    let (s0, s1) = (q / SPOT_BINS, (q + 1.0) / SPOT_BINS);
                    let mut push = |share: f64, range: [f64; 2]| {
                        if let Some(p) = out.parts.get_mut(out.len) {
                            *p = SpotPart {
                                quarter: i,
                                share,
                                range,
                            };
                            out.len += 1;
                        }
                    };
                    match Self::spot_line_parts(self.spot_lines[k]) {
                        Some((lo, hi, upper)) if fullest == Some(i) => {
                            // Powers of two: exact.
                            let step = (s1 - s0) / f64::from(SPOT_LINE_STEPS);
                            let at =
                                |v: u32| [s0 + f64::from(v) * step, s0 + f64::from(v + 1) * step];
                            if lo == hi {
                                push(share, at(lo));
                            } else {
                                push(share * (1.0 - upper), at(lo));
                                push(share * upper, at(hi));
                            }
                        }
                        _ => push(share, [s0, s1]),
                    }
                }
                out
            }
            _ => SpotSlice::NONE,
        })
    }

    /// `spot_lines` where nothing is known: each spot slice's fullest quarter spread evenly.
    pub const SPOT_LINES_UNKNOWN: [u32; 2] = [SPOT_LINE_STEPS - 1; 2];

    /// The quarter of a spot slice whose centres `spot_lines` places, from the slice's 2-bit
    /// counts (`spot_y`'s byte): the lowest one of count 3 (the counts are scaled so that the
    /// largest is 3), `None` where the code is 0 (unknown).
    #[inline]
    pub fn spot_quarter(code: u8) -> Option<usize> {
        (0..SPOT_QUARTERS).find(|&i| (code >> (2 * i)) & 3 == 3)
    }

    /// A word of `spot_lines`: the lower and the upper line's steps and the upper one's
    /// share, `None` where unknown.
    #[inline]
    pub fn spot_line_parts(word: u32) -> Option<(u32, u32, f64)> {
        let (lo, hi) = (word & 0x3ff, (word >> 10) & 0x3ff);
        (lo <= hi).then(|| (lo, hi, f64::from(word >> 20) / 4095.0))
    }

    /// The word of `spot_lines` for quarter `i` of slice `j` whose centres (cell units) lie
    /// from `lo` to `hi`, `mean` on average.
    pub fn spot_lines_of(j: usize, i: usize, lo: f64, hi: f64, mean: f64) -> u32 {
        let steps = (PROFILE_BINS * SPOT_QUARTERS) as f64 * f64::from(SPOT_LINE_STEPS);
        let first = (j * SPOT_QUARTERS + i) as f64 * f64::from(SPOT_LINE_STEPS);
        let top = f64::from(SPOT_LINE_STEPS - 1);
        let step = |v: f64| (ffloor(v * steps) - first).clamp(0.0, top) as u32;
        let (a, b) = (step(lo).min(step(hi)), step(lo).max(step(hi)));
        // The share that keeps the centres' mean with the lines at their steps' middles (a
        // step or more apart: the share moves little with the centres' rounding).
        let middle = |v: u32| (first + f64::from(v) + 0.5) / steps;
        let upper = if a < b {
            ((mean - middle(a)) / (middle(b) - middle(a))).clamp(0.0, 1.0)
        } else {
            0.0
        };
        a | (b << 10) | (((upper * 4095.0).round() as u32) << 20)
    }

    /// The x eighths (bit `e`: eighth `e`) holding centres of quarter `i` of the spot slice
    /// `k` (`spots_y()[k]`); 0 where unknown.
    #[inline]
    pub fn spot_x_eighths(&self, k: usize, i: usize) -> u8 {
        self.spot_x.get(SPOT_QUARTERS * k + i).copied().unwrap_or(0)
    }

    pub fn bbox_at(&self, k: usize) -> f64 {
        let code = u16::from_be_bytes([self.bbox[k], self.bbox_fine[k]]);
        f64::from(code) * 2.0 / 65535.0 - 0.5
    }

    /// The 16-bit code of a bounding box edge `v` (cell units), rounded up or down.
    pub fn bbox_code(v: f32, up: bool) -> u16 {
        let s = ((f64::from(v) + 0.5) / 2.0).clamp(0.0, 1.0) * 65535.0;
        (if up { s.ceil() } else { s.floor() }) as u16
    }
}

impl BucketRec {
    /// Mean area (cell units).
    #[inline]
    pub fn mean_area(&self) -> f64 {
        let width = f64::from((1 << BUCKET_OCTAVES) - 1);
        2f64.powi(BUCKET_OCTAVES * i32::from(self.b))
            * (1.0 + width * f64::from(self.mean_frac) / 65536.0)
    }

    #[inline]
    pub fn cv2(&self) -> f64 {
        f64::from(self.cv2) / 255.0
    }

    /// Mean colour, linear RGB.
    #[inline]
    pub fn color(&self) -> [f64; 3] {
        self.rgb.map(|c| f64::from(c) / 65535.0)
    }

    #[inline]
    pub fn attr(&self) -> f64 {
        f64::from(self.attr) / 65535.0
    }
}

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

/// Blocks of one size class, sorted by start: lifetimes in `[2^c, 2^(c+1))`, sizes in
/// `[2^d, 2^(d+1))`. Long-lived classes (the many blocks that outlive a pixel column of wide
/// views) are copied whole ([`crate::LodBlock`]s); the others, large only at fine address
/// levels, are kept as block numbers of the trace (u64) and read from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClassDesc {
    pub c: u8,
    pub d: u8,
    /// Copied blocks, or block numbers.
    pub copied: bool,
    pub blocks: Section,
}
