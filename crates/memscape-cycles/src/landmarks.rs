//! A level of detail that keeps cycles: landmark windows chosen by their distance structure.
//!
//! Farthest-point (maxmin) sampling of the unique windows under the Levenshtein distance: the
//! first landmark is the first window, each next one the window farthest from the landmarks
//! so far (ties: the first). Every window keeps its nearest landmark. The covering radius r
//! (the largest distance of a window to its nearest landmark) bounds the error of the
//! landmarks' barcode: the windows and their landmarks are in correspondence with distortion
//! at most 2r, so the Rips barcodes are within bottleneck distance 2r (Chazal, de Silva,
//! Oudot, "Persistence stability for geometric complexes", 2014). Sampling every k-th record
//! instead changes the windows themselves (a loop of period k becomes a constant) and loses
//! the cycles.
//!
//! Cost: one Levenshtein row per landmark, restricted to the windows sharing a symbol with it
//! (the others are at distance w, which no nearest distance exceeds).

use rayon::prelude::*;

use crate::error::CyclesError;
use crate::levenshtein::{Windows, levenshtein, symbol_postings};
use crate::progress::{Control, Phase};

/// Landmarks of the unique windows of a [`Windows`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Landmarks {
    /// Unique-window indices of the landmarks, in the order they were chosen.
    pub chosen: Vec<u32>,
    /// For every unique window, the position in `chosen` of its nearest landmark.
    pub nearest: Vec<u32>,
    /// For every unique window, its distance to that landmark.
    pub distance: Vec<u8>,
    /// The largest of `distance`: the Hausdorff distance between landmarks and windows.
    pub covering_radius: u32,
    /// For each landmark after the first, its distance to those chosen before it: the
    /// covering radius of the landmarks before it (`[0]` is `u8::MAX`).
    pub insertion_distance: Vec<u8>,
}

impl Landmarks {
    /// The fewest first landmarks that already reach the final covering radius (more of them
    /// refine the assignment of windows but do not lower the stated bound).
    pub fn fewest_with_same_radius(&self) -> usize {
        self.insertion_distance
            .iter()
            .position(|&d| u32::from(d) <= self.covering_radius)
            .unwrap_or(self.chosen.len())
            .max(1)
    }

    /// The bound `2 r` on the bottleneck distance between the landmarks' barcode and the
    /// barcode of all windows (any dimension).
    pub fn bottleneck_bound(&self) -> u32 {
        2 * self.covering_radius
    }

    /// The landmark windows as a [`Windows`] of their own (each occurring once).
    pub fn windows(&self, all: &Windows) -> Windows {
        let mut unique = Vec::with_capacity(self.chosen.len() * all.width);
        for &u in &self.chosen {
            unique.extend_from_slice(all.unique_window(u as usize));
        }
        Windows {
            width: all.width,
            unique,
            window_to_unique: (0..self.chosen.len() as u32).collect(),
        }
    }
}

/// Up to `count` maxmin landmarks of the unique windows of `windows` (fewer when every window
/// is a landmark or at distance 0 of one). `alphabet` bounds the symbol ids.
pub fn maxmin_landmarks(
    windows: &Windows,
    alphabet: usize,
    count: usize,
    control: &Control,
) -> Result<Landmarks, CyclesError> {
    let n = windows.unique_count();
    let w = windows.width;
    if n == 0 || count == 0 {
        return Err(CyclesError::InvalidParameter(
            "landmarks of an empty set of windows".into(),
        ));
    }
    let count = count.min(n);
    let postings = symbol_postings(windows, alphabet);
    // Distance to the nearest landmark so far: w for everything not yet reached (two windows
    // are never farther apart than w).
    let mut distance = vec![u8::try_from(w).unwrap_or(u8::MAX); n];
    let mut nearest = vec![0u32; n];
    let mut chosen: Vec<u32> = Vec::with_capacity(count);
    let mut stamp = vec![u32::MAX; n];
    let mut candidates: Vec<u32> = Vec::new();
    let mut next = 0usize;
    let mut insertion_distance = vec![u8::MAX];
    control.begin(Phase::Landmarks, count as u64)?;
    while chosen.len() < count {
        control.check()?;
        let landmark = next;
        let k = chosen.len() as u32;
        chosen.push(landmark as u32);
        distance[landmark] = 0;
        nearest[landmark] = k;
        // The windows sharing a symbol with the landmark (each once).
        candidates.clear();
        for &s in windows.unique_window(landmark) {
            for &j in &postings[s as usize] {
                if stamp[j as usize] != k {
                    stamp[j as usize] = k;
                    candidates.push(j);
                }
            }
        }
        let pattern = windows.unique_window(landmark);
        let closer: Vec<(u32, u8)> = candidates
            .par_iter()
            .with_min_len(512)
            .filter_map(|&j| {
                let current = distance[j as usize];
                if current == 0 {
                    return None;
                }
                let d = levenshtein(pattern, windows.unique_window(j as usize)) as u8;
                (d < current).then_some((j, d))
            })
            .collect();
        for (j, d) in closer {
            distance[j as usize] = d;
            nearest[j as usize] = k;
        }
        // The farthest window (the first of the farthest).
        let (far, &far_distance) = distance
            .iter()
            .enumerate()
            .rev()
            .max_by_key(|&(_, d)| *d)
            .unwrap_or((0, &0));
        control.report(Phase::Landmarks, chosen.len() as u64, count as u64);
        if far_distance == 0 {
            break;
        }
        if chosen.len() < count {
            insertion_distance.push(far_distance);
        }
        next = far;
    }
    let covering_radius = u32::from(distance.iter().copied().max().unwrap_or(0));
    Ok(Landmarks {
        chosen,
        nearest,
        distance,
        covering_radius,
        insertion_distance,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::levenshtein::{levenshtein_dp, make_windows};

    #[test]
    fn landmarks_cover_every_window_within_the_radius() {
        // A loop of period 7 with a drifting address: many distinct windows on a circle.
        let symbols: Vec<u32> = (0..400u32).map(|k| (k % 7) + 10 * ((k / 50) % 3)).collect();
        let windows = make_windows(&symbols, 5).unwrap();
        let n = windows.unique_count();
        for count in [1, 3, 8, n, n + 10] {
            let l = maxmin_landmarks(&windows, 40, count, &Control::new()).unwrap();
            assert!(l.chosen.len() <= count.min(n));
            assert_eq!(l.chosen[0], 0);
            let mut sorted = l.chosen.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), l.chosen.len(), "a landmark chosen twice");
            for u in 0..n {
                let landmark = l.chosen[l.nearest[u] as usize] as usize;
                let d = levenshtein_dp(windows.unique_window(u), windows.unique_window(landmark));
                assert_eq!(d, usize::from(l.distance[u]));
                // Nearest indeed.
                let best = l
                    .chosen
                    .iter()
                    .map(|&c| {
                        levenshtein_dp(windows.unique_window(u), windows.unique_window(c as usize))
                    })
                    .min()
                    .unwrap();
                assert_eq!(d, best);
                assert!(d as u32 <= l.covering_radius);
            }
            if count >= n {
                assert_eq!(l.covering_radius, 0);
            }
        }
        // The first landmarks of a larger set are the smaller set; the radius history says
        // how far each one was from those before it.
        let big = maxmin_landmarks(&windows, 40, 10, &Control::new()).unwrap();
        let small = maxmin_landmarks(&windows, 40, 6, &Control::new()).unwrap();
        assert_eq!(&big.chosen[..small.chosen.len()], &small.chosen[..]);
        assert_eq!(u32::from(big.insertion_distance[6]), small.covering_radius);
        let k = big.fewest_with_same_radius();
        let trimmed = maxmin_landmarks(&windows, 40, k, &Control::new()).unwrap();
        assert_eq!(trimmed.covering_radius, big.covering_radius);
        // Radii do not grow with more landmarks.
        let radii: Vec<u32> = (1..12)
            .map(|c| {
                maxmin_landmarks(&windows, 40, c, &Control::new())
                    .unwrap()
                    .covering_radius
            })
            .collect();
        assert!(radii.windows(2).all(|p| p[1] <= p[0]), "{radii:?}");
    }
}
