//! From a cell's and a bucket's sums to their stored records: the one quantisation of the
//! index, used by the native builder and by memscape-engine (which sums the same blocks with
//! DataFusion), so that both write the same codes for the same sums.

use crate::format::{
    BUCKET_OCTAVES, BucketRec, CellRec, FEW_BLOCKS, FEW_BLOCKS_FINE, PROFILE_BINS, SPOT_QUARTERS,
};

/// What a builder has summed over the blocks of one cell, before quantisation.
#[derive(Debug, Clone, Copy)]
pub struct CellSums<'a> {
    /// Row (address cell index).
    pub ky: u64,
    /// First bucket of the cell in the level's bucket array.
    pub bucket_first: u64,
    /// Buckets of the cell.
    pub buckets: u16,
    /// Blocks summarised.
    pub n: f64,
    /// Bounding box of the blocks' extents in cell units (x, y), low and high corners.
    pub lo: [f32; 2],
    pub hi: [f32; 2],
    /// Σ width and Σ height of the blocks, in cell units.
    pub sw: f64,
    pub sh: f64,
    /// Centres per slice along x and y.
    pub px: &'a [f32; PROFILE_BINS],
    pub py: &'a [f32; PROFILE_BINS],
    /// Centres per quarter of each slice along y (`CellRec::spot_y`); `None` where not
    /// counted (the slices' centres taken as uniform).
    pub py_quarters: Option<&'a [[f32; SPOT_QUARTERS]; PROFILE_BINS]>,
    /// The x eighths holding centres of each quarter of each slice along y (bit `e`: eighth
    /// `e`; `CellRec::spot_x`); `None` where not known.
    pub py_quarters_x: Option<&'a [[u8; SPOT_QUARTERS]; PROFILE_BINS]>,
    /// The least, the greatest and the sum of the centres' y (cell units) of each quarter of
    /// each slice along y holding one (`CellRec::spot_lines`); `None` where not known.
    pub py_quarters_lines: Option<&'a [[[f64; 3]; SPOT_QUARTERS]; PROFILE_BINS]>,
    /// `CellRec::mask`.
    pub mask: u64,
    /// The centres (x, y in cell units), in the order they are stored, when the cell has at
    /// most [`FEW_BLOCKS`] blocks (the first `n` are used).
    pub few: &'a [[f32; 2]],
}

/// What a builder has summed over the blocks of one area bucket of a cell.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BucketSums {
    /// Blocks.
    pub n: f64,
    /// Σ area and Σ area² (cell areas).
    pub a: f64,
    pub a2: f64,
    /// Σ colour channels (0..1 each).
    pub rgb: [f64; 3],
    /// Σ attribute (0..1).
    pub attr: f64,
}

impl CellRec {
    /// The record of a cell's sums.
    pub fn encode(s: &CellSums<'_>) -> CellRec {
        let codes = [
            CellRec::bbox_code(s.lo[0], false),
            CellRec::bbox_code(s.hi[0], true),
            CellRec::bbox_code(s.lo[1], false),
            CellRec::bbox_code(s.hi[1], true),
        ];
        let profile = |p: &[f32; PROFILE_BINS]| -> [u8; PROFILE_BINS] {
            let max = p.iter().copied().fold(0.0f32, f32::max).max(1e-30);
            p.map(|v| {
                if v > 0.0 {
                    ((v / max * 255.0).round() as u8).max(1)
                } else {
                    0
                }
            })
        };
        let (mut profile_x, mut profile_y) = (profile(s.px), profile(s.py));
        let mut spot_y = [0u8; 2];
        let mut spot_x = [0u8; 2 * SPOT_QUARTERS];
        let mut spot_lines = CellRec::SPOT_LINES_UNKNOWN;
        if let Some(quarters) = s.py_quarters {
            let spots = CellRec::spot_slices(&profile_y);
            for (k, (slot, j)) in spot_y.iter_mut().zip(spots).enumerate() {
                let Some(q) = quarters.get(j) else { continue };
                let max = q.iter().copied().fold(0.0f32, f32::max);
                if max <= 0.0 {
                    continue;
                }
                if let Some(eighths) = s.py_quarters_x.and_then(|x| x.get(j)) {
                    spot_x[SPOT_QUARTERS * k..SPOT_QUARTERS * (k + 1)].copy_from_slice(eighths);
                }
                for (i, &v) in q.iter().enumerate() {
                    let code = if v > 0.0 {
                        ((v / max * 3.0).round() as u8).max(1)
                    } else {
                        0
                    };
                    *slot |= code << (2 * i);
                }
                // The fullest quarter's centres, by the codes the resolve reads.
                let fullest = CellRec::spot_quarter(*slot);
                if let (Some(lines), Some(i)) =
                    (s.py_quarters_lines.and_then(|m| m.get(j)), fullest)
                {
                    let [lo, hi, sum] = lines[i];
                    let mean = sum / f64::from(q[i]);
                    spot_lines[k] = CellRec::spot_lines_of(j, i, lo, hi, mean);
                }
            }
        }
        if s.n <= FEW_BLOCKS as f64 {
            spot_y = [0; 2];
            spot_x = [0; 2 * SPOT_QUARTERS];
            spot_lines = CellRec::SPOT_LINES_UNKNOWN;
            profile_x = [0; PROFILE_BINS];
            profile_y = [0; PROFILE_BINS];
            let fine = s.n <= FEW_BLOCKS_FINE as f64;
            for (i, u) in s.few.iter().take(s.n as usize).enumerate() {
                if fine {
                    let code = |v: f32| {
                        ((f64::from(v) * 65535.0).round().clamp(0.0, 65535.0) as u16).to_le_bytes()
                    };
                    profile_x[2 * i..2 * i + 2].copy_from_slice(&code(u[0]));
                    profile_y[2 * i..2 * i + 2].copy_from_slice(&code(u[1]));
                } else {
                    let code = |v: f32| (f64::from(v) * 255.0).round().clamp(0.0, 255.0) as u8;
                    profile_x[i] = code(u[0]);
                    profile_y[i] = code(u[1]);
                }
            }
        }
        CellRec {
            ky: s.ky,
            bucket_first: s.bucket_first,
            n: s.n as f32,
            buckets: s.buckets,
            bbox: codes.map(|v| v.to_be_bytes()[0]),
            mask: s.mask,
            spot_y,
            mean_w: (s.sw / s.n) as f32,
            mean_h: (s.sh / s.n) as f32,
            profile_x,
            profile_y,
            bbox_fine: codes.map(|v| v.to_be_bytes()[1]),
            spot_x,
            spot_lines,
        }
    }
}

impl BucketRec {
    /// The record of bucket `b`'s sums (`b` is clamped to ±127: areas below 2^-127 of a cell
    /// share the lowest bucket).
    pub fn encode(b: i16, s: &BucketSums) -> BucketRec {
        let n = s.n.max(1e-30);
        let cv2 = if s.a > 0.0 {
            (s.n * s.a2 / (s.a * s.a) - 1.0).max(0.0)
        } else {
            0.0
        };
        let b8 = b.clamp(-127, 127) as i8;
        let base = 2f64.powi(BUCKET_OCTAVES * i32::from(b8));
        let width = f64::from((1 << BUCKET_OCTAVES) - 1);
        let frac = ((s.a / n / base - 1.0) / width * 65536.0)
            .round()
            .clamp(0.0, 65535.0) as u16;
        let unit = |v: f64| (v / n * 65535.0).round().clamp(0.0, 65535.0) as u16;
        BucketRec {
            n: s.n as f32,
            b: b8,
            cv2: (cv2 * 255.0).round().clamp(0.0, 255.0) as u8,
            mean_frac: frac,
            rgb: s.rgb.map(unit),
            attr: unit(s.attr),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_few_blocks_keep_their_centres_and_many_keep_profiles() {
        let px = [0.0f32; PROFILE_BINS];
        let few = [[0.25f32, 0.5], [1.0, 0.0]];
        let mut s = CellSums {
            ky: 7,
            bucket_first: 3,
            buckets: 1,
            n: 2.0,
            lo: [-0.5, 0.0],
            hi: [1.5, 1.0],
            sw: 1.0,
            sh: 0.5,
            px: &px,
            py: &px,
            py_quarters: None,
            py_quarters_x: None,
            py_quarters_lines: None,
            mask: 1,
            few: &few,
        };
        let rec = CellRec::encode(&s);
        assert_eq!((rec.ky, rec.bucket_first, rec.n), (7, 3, 2.0));
        assert_eq!((rec.mean_w, rec.mean_h), (0.5, 0.25));
        // Two blocks: u16 centres, little-endian.
        assert_eq!(&rec.profile_x[..4], &[0x00, 0x40, 0xff, 0xff]);
        assert_eq!(&rec.profile_y[..4], &[0x00, 0x80, 0, 0]);
        let mut many = [0.0f32; PROFILE_BINS];
        many[0] = 100.0;
        many[5] = 1.0;
        s.n = 101.0;
        s.px = &many;
        let rec = CellRec::encode(&s);
        assert_eq!(
            (rec.profile_x[0], rec.profile_x[5], rec.profile_x[6]),
            (255, 3, 0)
        );
    }

    #[test]
    fn a_bucket_stores_its_mean_area_within_its_octaves() {
        // Two blocks of area 4 and 8 cells in bucket 1 ([4, 16)): mean 6 = 4 · (1 + 0.5·3/3).
        let s = BucketSums {
            n: 2.0,
            a: 12.0,
            a2: 80.0,
            rgb: [2.0, 0.0, 1.0],
            attr: 0.0,
        };
        let rec = BucketRec::encode(1, &s);
        assert_eq!(rec.b, 1);
        assert_eq!(
            rec.mean_frac,
            ((6.0f64 / 4.0 - 1.0) / 3.0 * 65536.0).round() as u16
        );
        // cv² = n·Σa²/(Σa)² − 1 = 160/144 − 1.
        assert_eq!(rec.cv2, ((160.0f64 / 144.0 - 1.0) * 255.0).round() as u8);
        assert_eq!(rec.rgb, [65535, 0, 32768]);
        assert_eq!(BucketRec::encode(400, &s).b, 127);
    }
}
