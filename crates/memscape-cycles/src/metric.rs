//! Finite metric spaces as compressed lower-triangular distance matrices, and their readers.
//!
//! Layout (Ripser's): the entry for vertices `i > j` is at `i(i-1)/2 + j`, which is also the
//! index of the edge `{i, j}` in the combinatorial number system.

use std::path::Path;

use memscape_io::{Location, numbered_lines, read_input};
use rayon::prelude::*;

use crate::error::CyclesError;

/// The most entries a distance matrix may have (a 92,682-point matrix); keeps a point cloud of
/// absurd size from asking for more memory than any machine has.
pub const MAX_ENTRIES: usize = 1 << 32;

/// A finite metric space the Rips engine can read.
pub trait DistanceMatrix: Sync {
    /// Number of points.
    fn size(&self) -> usize;
    /// The distance of the edge with combinatorial index `index` (`i(i-1)/2 + j`, `i > j`).
    fn edge_length(&self, index: usize) -> f32;
    /// Distance between two points.
    fn distance(&self, i: usize, j: usize) -> f32 {
        use std::cmp::Ordering;
        match i.cmp(&j) {
            Ordering::Equal => 0.0,
            Ordering::Greater => self.edge_length(i * (i - 1) / 2 + j),
            Ordering::Less => self.edge_length(j * (j - 1) / 2 + i),
        }
    }
    /// If every distance is one of the integers `0..=max`, that `max`: lets the engine order
    /// edges by bucketing instead of materializing and sorting them.
    fn integer_levels(&self) -> Option<u32> {
        None
    }
}

/// Number of entries of the strict lower triangle of an `n × n` matrix, checked.
pub fn triangle_entries(n: usize) -> Result<usize, CyclesError> {
    let entries = n
        .checked_mul(n.saturating_sub(1))
        .map(|x| x / 2)
        .filter(|&e| e <= MAX_ENTRIES)
        .ok_or_else(|| {
            CyclesError::TooLarge(format!(
                "{n} points need more than {MAX_ENTRIES} pairwise distances"
            ))
        })?;
    Ok(entries)
}

/// A dense metric with `f32` distances (Ripser's `value_t`).
#[derive(Debug, Clone, PartialEq)]
pub struct LowerDistanceMatrix {
    n: usize,
    entries: Vec<f32>,
}

impl LowerDistanceMatrix {
    /// From the strict lower triangle in row order; the entry count must be triangular.
    pub fn from_lower_triangle(entries: Vec<f32>) -> Option<Self> {
        let n = points_for_entries(entries.len())?;
        Some(Self { n, entries })
    }

    /// Euclidean distances of a point cloud (computed in `f64`, stored as `f32`).
    pub fn from_points(points: &[Vec<f64>]) -> Result<Self, CyclesError> {
        let n = points.len();
        let total = triangle_entries(n)?;
        let mut entries = vec![0f32; total];
        let rows = split_rows(&mut entries, n);
        rows.into_par_iter().enumerate().for_each(|(i, row)| {
            for (j, slot) in row.iter_mut().enumerate() {
                let d2: f64 = points[i]
                    .iter()
                    .zip(&points[j])
                    .map(|(a, b)| (a - b) * (a - b))
                    .sum();
                *slot = d2.sqrt() as f32;
            }
        });
        Ok(Self { n, entries })
    }

    pub fn entries(&self) -> &[f32] {
        &self.entries
    }
}

impl DistanceMatrix for LowerDistanceMatrix {
    fn size(&self) -> usize {
        self.n
    }
    fn edge_length(&self, index: usize) -> f32 {
        self.entries[index]
    }
}

/// A dense metric with small integer distances (Levenshtein distances of windows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ByteDistanceMatrix {
    n: usize,
    entries: Vec<u8>,
    max: u8,
}

impl ByteDistanceMatrix {
    /// From the strict lower triangle in row order; the entry count must be triangular.
    pub fn from_lower_triangle(entries: Vec<u8>) -> Option<Self> {
        let n = points_for_entries(entries.len())?;
        let max = entries.par_iter().copied().max().unwrap_or(0);
        Some(Self { n, entries, max })
    }

    pub fn entries(&self) -> &[u8] {
        &self.entries
    }

    /// The same metric with `f32` entries.
    pub fn to_f32(&self) -> LowerDistanceMatrix {
        LowerDistanceMatrix {
            n: self.n,
            entries: self.entries.iter().map(|&d| f32::from(d)).collect(),
        }
    }
}

impl DistanceMatrix for ByteDistanceMatrix {
    fn size(&self) -> usize {
        self.n
    }
    fn edge_length(&self, index: usize) -> f32 {
        f32::from(self.entries[index])
    }
    fn integer_levels(&self) -> Option<u32> {
        Some(u32::from(self.max))
    }
}

/// `n` with `n(n-1)/2 == entries`, if there is one.
fn points_for_entries(entries: usize) -> Option<usize> {
    let estimate = ((1.0 + (1.0 + 8.0 * entries as f64).sqrt()) / 2.0).round() as usize;
    (estimate.saturating_sub(1)..=estimate + 1)
        .find(|&n| n >= 1 && n.checked_mul(n - 1).map(|x| x / 2) == Some(entries))
}

/// Splits a lower-triangle buffer into its rows (row `i` has `i` entries).
pub(crate) fn split_rows<T>(mut entries: &mut [T], n: usize) -> Vec<&mut [T]> {
    let mut rows = Vec::with_capacity(n);
    for i in 0..n {
        let len = i.min(entries.len());
        let (row, rest) = std::mem::take(&mut entries).split_at_mut(len);
        rows.push(row);
        entries = rest;
    }
    rows
}

/// The distance-matrix formats of `memscape persistence` (Ripser's names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MatrixFormat {
    /// Strict lower triangle, row by row (Ripser's default input).
    #[default]
    LowerDistance,
    /// Full square matrix, one row per line (the lower triangle is used).
    Distance,
    /// One point per line, coordinates; Euclidean distances.
    PointCloud,
}

impl MatrixFormat {
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "lower-distance" => Some(Self::LowerDistance),
            "distance" => Some(Self::Distance),
            "point-cloud" => Some(Self::PointCloud),
            _ => None,
        }
    }
}

/// Reads a distance matrix or point cloud file (plain, zstd or gzip).
pub fn read_matrix(path: &Path, format: MatrixFormat) -> Result<LowerDistanceMatrix, CyclesError> {
    let bytes = read_input(path)?;
    parse_matrix(&path.display().to_string(), &bytes, format)
}

/// The numbers of each line: separated by commas and/or whitespace.
fn line_numbers(name: &str, number: u64, line: &[u8]) -> Result<Vec<f64>, CyclesError> {
    let at = || Location::line(name, number);
    let text = std::str::from_utf8(line).map_err(|_| CyclesError::Parse {
        at: at(),
        message: "line is not UTF-8 text; expected numbers separated by commas or spaces".into(),
    })?;
    text.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
        .map(|t| {
            t.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| CyclesError::Parse {
                    at: at(),
                    message: format!("{t:?} is not a finite number"),
                })
        })
        .collect()
}

fn check_distance(name: &str, number: u64, value: f64) -> Result<f32, CyclesError> {
    if value < 0.0 {
        return Err(CyclesError::Parse {
            at: Location::line(name, number),
            message: format!("negative distance {value}; expected distances >= 0"),
        });
    }
    // `+ 0.0` turns -0 into +0: the engine orders diameters by their bits.
    Ok(value as f32 + 0.0)
}

/// Parses a matrix held in memory; `name` is used in errors.
pub fn parse_matrix(
    name: &str,
    bytes: &[u8],
    format: MatrixFormat,
) -> Result<LowerDistanceMatrix, CyclesError> {
    match format {
        MatrixFormat::LowerDistance => {
            let mut entries = Vec::new();
            for (number, line) in numbered_lines(bytes) {
                for v in line_numbers(name, number, line)? {
                    entries.push(check_distance(name, number, v)?);
                }
            }
            let count = entries.len();
            LowerDistanceMatrix::from_lower_triangle(entries).ok_or_else(|| CyclesError::Parse {
                at: Location::line(name, 1),
                message: format!(
                    "{count} entries is not a triangular number n(n-1)/2; expected the strict \
                     lower triangle of a distance matrix"
                ),
            })
        }
        MatrixFormat::Distance => {
            let mut rows: Vec<(u64, Vec<f64>)> = Vec::new();
            for (number, line) in numbered_lines(bytes) {
                let row = line_numbers(name, number, line)?;
                if !row.is_empty() {
                    rows.push((number, row));
                }
            }
            let n = rows.len();
            let total = triangle_entries(n)?;
            let mut entries = Vec::with_capacity(total);
            for (i, (number, row)) in rows.iter().enumerate() {
                if row.len() != n {
                    return Err(CyclesError::Parse {
                        at: Location::line(name, *number),
                        message: format!(
                            "row {} has {} entries; expected {n} (a square matrix)",
                            i + 1,
                            row.len()
                        ),
                    });
                }
                for &v in &row[..i] {
                    entries.push(check_distance(name, *number, v)?);
                }
            }
            if n == 0 {
                return Err(CyclesError::Parse {
                    at: Location::line(name, 1),
                    message: "no rows; expected a square distance matrix".into(),
                });
            }
            Ok(LowerDistanceMatrix { n, entries })
        }
        MatrixFormat::PointCloud => {
            let mut points: Vec<Vec<f64>> = Vec::new();
            for (number, line) in numbered_lines(bytes) {
                let p = line_numbers(name, number, line)?;
                if p.is_empty() {
                    continue;
                }
                if let Some(first) = points.first()
                    && first.len() != p.len()
                {
                    return Err(CyclesError::Parse {
                        at: Location::line(name, number),
                        message: format!(
                            "point with {} coordinates; expected {} like the first point",
                            p.len(),
                            first.len()
                        ),
                    });
                }
                points.push(p);
            }
            if points.is_empty() {
                return Err(CyclesError::Parse {
                    at: Location::line(name, 1),
                    message: "no points; expected one point per line".into(),
                });
            }
            LowerDistanceMatrix::from_points(&points)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lower_distance_with_commas_whitespace_and_an_empty_first_row() {
        let m = parse_matrix("m", b"\n1,\n2, 3\n4 5 6\n", MatrixFormat::LowerDistance).unwrap();
        assert_eq!(m.size(), 4);
        assert_eq!(m.distance(2, 1), 3.0);
        assert_eq!(m.distance(1, 2), 3.0);
        assert_eq!(m.distance(3, 0), 4.0);
        let err = parse_matrix("m", b"1,2\n", MatrixFormat::LowerDistance).unwrap_err();
        assert!(err.to_string().contains("triangular"), "{err}");
        let err = parse_matrix("m", b"1\nx\n", MatrixFormat::LowerDistance).unwrap_err();
        assert!(err.to_string().starts_with("m:2:"), "{err}");
    }

    #[test]
    fn full_matrix_and_points() {
        let m = parse_matrix("d", b"0 1 2\n1 0 3\n2 3 0\n", MatrixFormat::Distance).unwrap();
        assert_eq!(m.entries(), &[1.0, 2.0, 3.0]);
        let err = parse_matrix("d", b"0 1\n1 0 3\n", MatrixFormat::Distance).unwrap_err();
        assert!(err.to_string().starts_with("d:2:"), "{err}");
        let p = parse_matrix("p", b"0 0\n3 4\n", MatrixFormat::PointCloud).unwrap();
        assert_eq!(p.distance(0, 1), 5.0);
        assert!(parse_matrix("p", b"0 0\n3\n", MatrixFormat::PointCloud).is_err());
    }
}
