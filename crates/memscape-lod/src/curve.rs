//! The heap-size curve in the index (issue 25): live bytes over time, kept per bin of
//! 2^`log_bin` time units as the bin's minimum, maximum and value at its end, with coarser
//! levels each halving the one below, so that the curve of any window at any width is read in
//! work bounded by the width, never by the events.
//!
//! Built in the index's one pass over the blocks (by increasing start): frees wait in a heap
//! ordered by time until the next allocation passes them, so events are applied in time order
//! while only the live blocks are held. The finest level has at most 2^[`FINEST_LOG_BINS`]
//! bins (6 MB): of one event each up to that many events.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::LodError;
use crate::format::Section;

/// The finest level has at most 2^this bins.
pub const FINEST_LOG_BINS: u32 = 18;

/// One bin of the curve: live bytes at its lowest, highest and at its end (the start of the
/// next bin), over `[k · 2^log_bin, (k + 1) · 2^log_bin)`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct CurveBin {
    pub min: u64,
    pub max: u64,
    pub end: u64,
}

impl CurveBin {
    fn flat(v: u64) -> Self {
        Self {
            min: v,
            max: v,
            end: v,
        }
    }

    /// This bin followed by `next` (the envelope of both, `next`'s end).
    pub fn then(self, next: CurveBin) -> Self {
        Self {
            min: self.min.min(next.min),
            max: self.max.max(next.max),
            end: next.end,
        }
    }
}

/// A level of the curve as the index's header describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CurveLevelDesc {
    pub log_bin: u8,
    /// [`CurveBin`] records.
    pub bins: Section,
}

/// The curve being built (blocks by increasing start).
pub struct CurveBuilder {
    log_bin: u32,
    bins: Vec<CurveBin>,
    /// Bins before this one are complete.
    at: usize,
    live: u64,
    frees: BinaryHeap<Reverse<(u64, u64)>>,
}

impl CurveBuilder {
    /// A curve over `[0, extent_t)`.
    pub fn new(extent_t: u64) -> Self {
        let log_t = 64 - extent_t.max(1).saturating_sub(1).leading_zeros();
        let log_bin = log_t.saturating_sub(FINEST_LOG_BINS);
        let n = extent_t.max(1).div_ceil(1 << log_bin) as usize;
        Self {
            log_bin,
            bins: vec![CurveBin::default(); n],
            at: 0,
            live: 0,
            frees: BinaryHeap::new(),
        }
    }

    /// Applies `delta` (signed bytes) at time `t`.
    fn apply(&mut self, t: u64, grow: bool, bytes: u64) {
        let b = ((t >> self.log_bin) as usize).min(self.bins.len().saturating_sub(1));
        // Bins passed without events hold the live bytes as they were.
        while self.at < b {
            self.at += 1;
            if let Some(bin) = self.bins.get_mut(self.at) {
                *bin = CurveBin::flat(self.live);
            }
        }
        self.live = if grow {
            self.live.saturating_add(bytes)
        } else {
            self.live.saturating_sub(bytes)
        };
        if let Some(bin) = self.bins.get_mut(self.at) {
            bin.min = bin.min.min(self.live);
            bin.max = bin.max.max(self.live);
            bin.end = self.live;
        }
    }

    /// Adds a block of `size` bytes live over `[t0, t1)` (never freed when `t1` is past the
    /// end of the curve).
    pub fn push(&mut self, t0: u64, t1: u64, size: u64) {
        while let Some(&Reverse((t, s))) = self.frees.peek() {
            if t > t0 {
                break;
            }
            self.frees.pop();
            self.apply(t, false, s);
        }
        self.apply(t0, true, size);
        if (t1 >> self.log_bin) < self.bins.len() as u64 {
            self.frees.push(Reverse((t1, size)));
        }
    }

    /// Applies the remaining frees and writes the levels (finest first) into files in `dir`;
    /// returns each level's `log_bin`, file and bin count.
    pub fn finish(mut self, dir: &Path) -> Result<Vec<(u8, PathBuf, u64)>, LodError> {
        while let Some(Reverse((t, s))) = self.frees.pop() {
            self.apply(t, false, s);
        }
        let end = self.bins.len().saturating_sub(1);
        let live = self.live;
        while self.at < end {
            self.at += 1;
            self.bins[self.at] = CurveBin::flat(live);
        }
        let mut out = Vec::new();
        let mut level = self.bins;
        let mut log_bin = self.log_bin;
        loop {
            let p = dir.join(format!("curve_{log_bin}"));
            let mut f = std::io::BufWriter::new(
                std::fs::File::create(&p).map_err(|e| LodError::io(&p, e))?,
            );
            f.write_all(bytemuck::cast_slice(&level))
                .map_err(|e| LodError::io(&p, e))?;
            f.flush().map_err(|e| LodError::io(&p, e))?;
            out.push((log_bin as u8, p, level.len() as u64));
            if level.len() <= 1 {
                return Ok(out);
            }
            level = level
                .chunks(2)
                .map(|c| c.iter().copied().reduce(CurveBin::then).unwrap_or_default())
                .collect();
            log_bin += 1;
        }
    }
}

/// The curve of `[t0, t1)` in `columns` columns from `levels` (finest first, each with its
/// `log_bin`): each column the envelope of the bins it touches, from the coarsest level whose
/// bins are no wider than a column. Empty when there are no levels.
pub fn read(levels: &[(u8, &[CurveBin])], t: [u64; 2], columns: usize) -> Vec<CurveBin> {
    let [t0, t1] = t;
    let columns = columns.max(1);
    let span = t1.saturating_sub(t0).max(1);
    let width = span / columns as u64;
    let Some(&(log_bin, bins)) = levels
        .iter()
        .rev()
        .find(|(l, _)| (1u64 << l) <= width.max(1))
        .or(levels.first())
    else {
        return Vec::new();
    };
    if bins.is_empty() {
        return Vec::new();
    }
    let last = bins.len() - 1;
    (0..columns)
        .map(|c| {
            let a = t0 + (span as u128 * c as u128 / columns as u128) as u64;
            let b = t0 + (span as u128 * (c as u128 + 1) / columns as u128) as u64;
            let first = ((a >> log_bin) as usize).min(last);
            let end = ((b.saturating_sub(1).max(a) >> log_bin) as usize).min(last);
            bins[first..=end.max(first)]
                .iter()
                .copied()
                .reduce(CurveBin::then)
                .unwrap_or_default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Live bytes after each event, brute force: `(time, +/- size)` sorted.
    fn brute(blocks: &[(u64, u64, u64)], extent: u64) -> Vec<u64> {
        let mut delta = vec![0i64; extent as usize + 1];
        for &(t0, t1, s) in blocks {
            delta[t0 as usize] += s as i64;
            if t1 < extent {
                delta[t1 as usize] -= s as i64;
            }
        }
        let mut live = 0i64;
        delta
            .iter()
            .take(extent as usize)
            .map(|d| {
                live += d;
                live as u64
            })
            .collect()
    }

    #[test]
    fn the_curve_is_the_live_bytes_after_each_event_and_its_levels_their_envelopes() {
        // Allocations and frees interleaved, some never freed (past the end).
        let mut blocks = Vec::new();
        let mut t = 0u64;
        let mut seed = 7u64;
        while t < 5000 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Allocations at even times, frees at odd ones: one event per time unit at most.
            let life = 1 + 2 * ((seed >> 33) % 150);
            let size = 1 + (seed >> 20) % 4096;
            blocks.push((t, t + life, size));
            t += 2 * (1 + (seed >> 50) % 3);
        }
        let extent = t + 100;
        let mut b = CurveBuilder::new(extent);
        for &(t0, t1, s) in &blocks {
            b.push(t0, t1, s);
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let files = b.finish(dir.path()).expect("finish");
        let levels: Vec<(u8, Vec<CurveBin>)> = files
            .iter()
            .map(|(l, p, _)| {
                let bytes = std::fs::read(p).expect("read");
                let bins = bytes
                    .chunks_exact(std::mem::size_of::<CurveBin>())
                    .map(bytemuck::pod_read_unaligned)
                    .collect();
                (*l, bins)
            })
            .collect();
        let want = brute(&blocks, extent);
        assert_eq!(levels[0].0, 0);
        assert_eq!(levels[0].1.len() as u64, extent);
        for (i, bin) in levels[0].1.iter().enumerate() {
            // One event a bin: the live bytes before it and after it.
            let before = if i > 0 { want[i - 1] } else { 0 };
            assert_eq!(bin.end, want[i], "bin {i}");
            assert_eq!(
                (bin.min, bin.max),
                (before.min(want[i]), before.max(want[i]))
            );
        }
        let views: Vec<(u8, &[CurveBin])> =
            levels.iter().map(|(l, v)| (*l, v.as_slice())).collect();
        for (t0, t1, cols) in [
            (0, extent, 37),
            (1000, 1500, 50),
            (1234, 1240, 6),
            (0, extent, 1),
        ] {
            let curve = read(&views, [t0, t1], cols);
            assert_eq!(curve.len(), cols);
            for (c, bin) in curve.iter().enumerate() {
                let a = t0 + (t1 - t0) * c as u64 / cols as u64;
                let b = t0 + (t1 - t0) * (c as u64 + 1) / cols as u64;
                // What the live bytes are over the column: as it starts, then after each
                // event in it.
                let exact = &want[a.saturating_sub(1) as usize..b as usize];
                let (lo, hi) = (exact.iter().min().unwrap(), exact.iter().max().unwrap());
                // The envelope holds the column's exact one, and is exact where bins are one
                // event.
                assert!(bin.min <= *lo && bin.max >= *hi, "{t0}..{t1} col {c}");
                if a > 0 && t1 - t0 <= cols as u64 {
                    assert_eq!((bin.min, bin.max), (*lo, *hi));
                }
            }
        }
    }
}
