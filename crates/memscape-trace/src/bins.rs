//! Bins: a user-selected partition of the blocks (by address region, by size class, by thread),
//! each later shown as its own sub-view.

use crate::model::{FLAG_MMAP, Trace};
use crate::regions::{Regions, find_regions, peak_per_group_of};

/// Size classes for [`BinBy::SizeClass`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SizeClasses {
    /// `[2^k, 2^(k+1))` (and a class for size 0).
    PowerOfTwo,
    /// Classes `[0, b0)`, `[b0, b1)`, …, `[b_last, ∞)` for the given boundaries (sorted and
    /// deduplicated before use).
    Boundaries(Vec<u64>),
}

/// How blocks are partitioned into bins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BinBy {
    /// One bin per used address region (regions split at gaps above the threshold).
    Region {
        gap_threshold: u64,
    },
    SizeClass(SizeClasses),
    Thread,
    /// One bin per process image (each its own address space).
    Process,
    /// One bin per pool a custom allocator declared (`memscape.h`), then one for every other
    /// block (the heap the pools fall back on).
    Pool,
}

/// The label of the bin of the blocks outside every pool.
pub const HEAP_BIN_LABEL: &str = "heap (outside the pools)";

/// One bin.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Bin {
    pub label: String,
    pub blocks: u64,
    /// Sum of the requested sizes of all its blocks.
    pub bytes_allocated: u64,
    /// The most bytes live at once: requested heap bytes (anonymous mappings apart), or for
    /// region bins their regions' peak (address extents).
    pub peak_bytes: u64,
    /// The bin's address extent: lowest block start, highest block end.
    pub extent_start: u64,
    pub extent_end: u64,
}

/// A partition of a trace's blocks.
#[derive(Debug, Clone)]
pub struct Bins {
    pub by: BinBy,
    pub bins: Vec<Bin>,
    /// Bin index of each block.
    pub block_bin: Vec<u32>,
}

fn pow2_class(size: u64) -> u32 {
    if size == 0 {
        0
    } else {
        64 - size.leading_zeros()
    }
}

/// The title of power-of-two size class `class` (sizes with `class` significant bits). Below
/// 1 KiB, the closed range in exact bytes (`512–1023 B`); from 1 KiB up, the half-open class
/// [2^(class−1), 2^class) in binary units (`64–128 KiB` holds 65,536 to 131,071 bytes; a
/// 17-digit byte count did not fit a bin's title), the upper end's unit written only when it
/// differs (`512 KiB–1 MiB`).
fn pow2_label(class: u32) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    // 2^exponent as a whole number of its largest binary unit: (value, unit).
    let in_unit = |exponent: u32| {
        let unit = (exponent / 10).min(UNITS.len() as u32 - 1);
        (1u64 << (exponent - 10 * unit), UNITS[unit as usize])
    };
    match class {
        0 => String::from("0 B"),
        1 => String::from("1 B"),
        c if c <= 10 => {
            let lo = 1u64 << (c - 1);
            let hi = (1u64 << c) - 1;
            format!("{lo}–{hi} B")
        }
        c => {
            let (lo, lo_unit) = in_unit(c - 1);
            let (hi, hi_unit) = in_unit(c);
            if lo_unit == hi_unit {
                format!("{lo}–{hi} {hi_unit}")
            } else {
                format!("{lo} {lo_unit}–{hi} {hi_unit}")
            }
        }
    }
}

/// The labels and block bins of region bins.
fn region_bins(
    trace: &Trace,
    regions: &[crate::regions::Region],
    block_region: Vec<u32>,
) -> (Vec<String>, Vec<u32>) {
    if regions.is_empty() {
        (
            vec![String::from("all blocks")],
            vec![0; trace.blocks.len()],
        )
    } else {
        let labels = regions
            .iter()
            .map(|r| format!("{:#x}–{:#x}", r.start, r.end))
            .collect();
        (labels, block_region)
    }
}

impl Bins {
    /// [`Bins::new`] by region of `regions`, found already on `trace` with `gap_threshold`
    /// (no second search, no second sweep for the peaks).
    pub fn of_regions(trace: &Trace, regions: &Regions, gap_threshold: u64) -> Self {
        let (labels, block_bin) =
            region_bins(trace, &regions.regions, regions.block_region.clone());
        let peaks = regions.regions.iter().map(|r| r.peak_bytes).collect();
        Self::with_partition(
            trace,
            BinBy::Region { gap_threshold },
            labels,
            block_bin,
            Some(peaks),
        )
    }

    pub fn new(trace: &Trace, by: BinBy) -> Self {
        let b = &trace.blocks;
        let (labels, block_bin): (Vec<String>, Vec<u32>) = match &by {
            BinBy::Region { gap_threshold } => {
                let Regions {
                    regions,
                    block_region,
                } = find_regions(trace, *gap_threshold);
                region_bins(trace, &regions, block_region)
            }
            BinBy::SizeClass(SizeClasses::PowerOfTwo) => {
                // Classes 0..=64; only the ones in use become bins.
                let mut present = [false; 65];
                for &s in &b.requested_size {
                    present[pow2_class(s) as usize] = true;
                }
                let mut index = [0u32; 65];
                let mut labels = Vec::new();
                for (class, _) in present.iter().enumerate().filter(|(_, p)| **p) {
                    index[class] = labels.len() as u32;
                    labels.push(pow2_label(class as u32));
                }
                let block_bin = b
                    .requested_size
                    .iter()
                    .map(|&s| index[pow2_class(s) as usize])
                    .collect();
                (labels, block_bin)
            }
            BinBy::SizeClass(SizeClasses::Boundaries(bounds)) => {
                let mut bounds = bounds.clone();
                bounds.sort_unstable();
                bounds.dedup();
                let mut labels = Vec::with_capacity(bounds.len() + 1);
                let mut lo = 0u64;
                for &hi in &bounds {
                    labels.push(format!("{lo}–{} B", hi.saturating_sub(1)));
                    lo = hi;
                }
                labels.push(format!("≥ {lo} B"));
                let block_bin = b
                    .requested_size
                    .iter()
                    .map(|&s| bounds.partition_point(|&x| x <= s) as u32)
                    .collect();
                (labels, block_bin)
            }
            BinBy::Thread => {
                let n = trace.threads.len().max(1);
                let labels = (0..n)
                    .map(|t| {
                        let name = trace.thread_name(t as u32);
                        if name.is_empty() {
                            format!("thread {t}")
                        } else {
                            name.to_owned()
                        }
                    })
                    .collect();
                (
                    labels,
                    b.thread.iter().map(|&t| t.min(n as u32 - 1)).collect(),
                )
            }
            BinBy::Process => {
                let n = trace.processes.len().max(1);
                let labels = (0..n)
                    .map(|p| match trace.processes.get(p) {
                        Some(p) if p.pid != 0 => format!("{} {}", p.pid, p.name()),
                        Some(p) if !p.name().is_empty() => p.name().to_owned(),
                        _ => format!("process {p}"),
                    })
                    .collect();
                (
                    labels,
                    b.process.iter().map(|&p| p.min(n as u32 - 1)).collect(),
                )
            }
            BinBy::Pool => {
                let heap = trace.pools.len() as u32;
                let mut labels: Vec<String> = trace
                    .pools
                    .iter()
                    .map(|p| format!("{} ({} B blocks)", p.name, p.block_size))
                    .collect();
                labels.push(HEAP_BIN_LABEL.to_owned());
                let block_bin = (0..b.len())
                    .map(|i| match b.pool[i] {
                        p if p > 0 && p <= heap && b.flags[i] & crate::model::FLAG_POOL != 0 => {
                            p - 1
                        }
                        _ => heap,
                    })
                    .collect();
                (labels, block_bin)
            }
        };
        Self::with_partition(trace, by, labels, block_bin, None)
    }

    /// The bins of a partition: counts, bytes and extents from the blocks; peaks given (the
    /// regions') or by a sweep of the requested bytes.
    fn with_partition(
        trace: &Trace,
        by: BinBy,
        labels: Vec<String>,
        block_bin: Vec<u32>,
        peaks: Option<Vec<u64>>,
    ) -> Self {
        let b = &trace.blocks;
        let mut bins: Vec<Bin> = labels
            .into_iter()
            .map(|label| Bin {
                label,
                blocks: 0,
                bytes_allocated: 0,
                peak_bytes: 0,
                extent_start: u64::MAX,
                extent_end: 0,
            })
            .collect();
        let (requested, address, size) = (
            b.requested_size.as_slice(),
            b.address.as_slice(),
            b.size.as_slice(),
        );
        for (i, &bin) in block_bin.iter().enumerate() {
            if let Some(bin) = bins.get_mut(bin as usize) {
                bin.blocks += 1;
                bin.bytes_allocated = bin.bytes_allocated.saturating_add(requested[i]);
                bin.extent_start = bin.extent_start.min(address[i]);
                bin.extent_end = bin.extent_end.max(address[i].saturating_add(size[i]));
            }
        }
        for bin in &mut bins {
            if bin.blocks == 0 {
                bin.extent_start = 0;
            }
        }
        // Partitions' peaks in requested heap bytes, as the heap's own peak and
        // `bytes_allocated` count them (a bin of 1-byte requests of 24 usable bytes peaked at
        // 24× its bytes; anonymous mappings are counted apart, as `info` does: a Python
        // process's 26 MiB of arenas beside a 3.5 MiB heap); region bins keep their regions'
        // peaks, which count address extents.
        let peaks = peaks.filter(|p| p.len() == bins.len()).unwrap_or_else(|| {
            let mapped = |i: usize| b.flags.get(i).is_some_and(|f| f & FLAG_MMAP != 0);
            if (0..b.len()).any(mapped) {
                let heap: Vec<u64> = (0..requested.len())
                    .map(|i| if mapped(i) { 0 } else { requested[i] })
                    .collect();
                peak_per_group_of(trace, &block_bin, bins.len(), &heap)
            } else {
                peak_per_group_of(trace, &block_bin, bins.len(), requested)
            }
        });
        for (bin, p) in bins.iter_mut().zip(peaks) {
            bin.peak_bytes = p;
        }
        Bins {
            by,
            bins,
            block_bin,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_of_two_classes() {
        assert_eq!(pow2_class(0), 0);
        assert_eq!(pow2_class(1), 1);
        assert_eq!(pow2_class(2), 2);
        assert_eq!(pow2_class(3), 2);
        assert_eq!(pow2_class(4), 3);
        assert_eq!(pow2_label(1), "1 B");
        assert_eq!(pow2_label(3), "4–7 B");
        assert_eq!(pow2_class(u64::MAX), 64);
        // From 1 KiB, half-open classes in binary units.
        assert_eq!(pow2_label(10), "512–1023 B");
        assert_eq!(pow2_label(11), "1–2 KiB");
        assert_eq!(pow2_class(65_536), 17);
        assert_eq!(pow2_class(131_071), 17);
        assert_eq!(pow2_label(17), "64–128 KiB");
        assert_eq!(pow2_label(20), "512 KiB–1 MiB");
        assert_eq!(pow2_label(21), "1–2 MiB");
        assert_eq!(pow2_label(64), "8–16 EiB");
        assert_eq!(pow2_label(63), "4–8 EiB");
    }
}
