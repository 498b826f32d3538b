//! A big `.msc`'s first blocks as a dataset of their own: what the GUI's window shows while the
//! whole trace is read and laid out (issue 25). Only for a trace whose map draws from a current
//! level-of-detail index beside it: the map is drawn from that index over the whole trace at
//! once, its scene laid out on the index's address axis, and every pane that needs the blocks
//! says how many of them were read ([`crate::dataset::trace_extent`]), as a Parquet dataset
//! read in part does. The loader then reads the whole trace and its panes are shown again.

use std::path::Path;

use crate::alloc_map::lod::{LOD_COLORINGS, wants_lod};
use crate::dataset::{AllocTraceData, Dataset, DatasetContent, TraceExtent};
use crate::error::Result;
use memscape_trace::{BlockColumns, Trace};

/// The blocks of a big `.msc` in its first dataset by default (`MEMSCAPE_TRACE_HEAD` sets
/// another count): few enough that their scene is laid out in a fraction of a second.
pub const MSC_HEAD: usize = 250_000;

/// `path`'s first `limit` blocks (its first allocated) with their count, the map's scene laid
/// out on the address axis of the current level-of-detail index beside it; `None` when the
/// trace is not a mapped `.msc` of more than `limit` blocks whose map draws from such an index
/// (then the whole trace is what to read).
pub fn load_msc_head(
    path: &Path,
    limit: usize,
    progress: &dyn Fn(f32, &str),
) -> Result<Option<Dataset>> {
    if !crate::dataset::starts_as_msc(path) || !wants_lod(path) {
        return Ok(None);
    }
    let trace = memscape_trace::read_msc(path)?;
    let total = trace.blocks.len();
    // A file read into memory whole costs its read: nothing is gained by a first part.
    if total <= limit || !trace.has_addresses() || !trace.blocks.address.is_mapped() {
        return Ok(None);
    }
    let events = trace.meta.events;
    let Some(index) = memscape_lod::sidecar::index_locations(path, LOD_COLORINGS)
        .iter()
        .find_map(|p| {
            memscape_lod::sidecar::open_current(p, path, events, total as u64, LOD_COLORINGS)
        })
    else {
        return Ok(None);
    };
    let ranges: Vec<(u64, u64)> = index
        .meta
        .axis
        .regions
        .iter()
        .map(|r| (r.start, r.end))
        .collect();
    let curve = IndexHeapCurve::of_index(&index);
    drop(index);
    progress(-1.0, "laying out the first blocks");
    let head = head_of(&trace, limit);
    drop(trace);
    let extent = TraceExtent {
        read: head.blocks.len(),
        total: total as u64,
    };
    let mut data = AllocTraceData::on_ranges(head, &ranges);
    if let Some(scene) = data.scene.as_mut() {
        scene.known_until_last_allocation(&data.trace);
    }
    data.path = Some(path.to_owned());
    let dataset = Dataset {
        name: path.display().to_string(),
        content: DatasetContent::AllocTrace(Box::new(data)),
        links: Default::default(),
    };
    crate::dataset::set_trace_extent(&dataset, extent);
    if let Some(curve) = curve {
        let slot = std::sync::Arc::new(IndexHeapCurveSlot(Some(std::sync::Arc::new(curve))));
        let _ = dataset.links.shared(|| slot);
    }
    tracing::debug!(
        target: "memscape::load",
        read = extent.read,
        total = extent.total,
        "first blocks laid out on the index's axis"
    );
    Ok(Some(dataset))
}

/// The most bins of the index's heap-size curve a first part carries: the finest of the index's
/// levels with at most this many (a pane is narrower; 2048 bins are 48 KB).
pub const HEAD_CURVE_BINS: usize = 2048;

/// The whole trace's heap-size curve as its level-of-detail index holds it (issue 25): the live
/// bytes of every block (the map's blocks: their `size`, mappings included) over the trace's
/// events, bin `k` covering events `[k · 2^log_bin, (k + 1) · 2^log_bin)` with its lowest,
/// highest and last value — what the heap tree pane of a first part draws while the whole
/// trace is read, read from the index without passing over the blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexHeapCurve {
    pub log_bin: u8,
    /// The index's time extent (the trace's events + 1).
    pub extent_t: u64,
    pub bins: Vec<memscape_lod::curve::CurveBin>,
}

impl IndexHeapCurve {
    /// The finest level of `index`'s curve with at most [`HEAD_CURVE_BINS`] bins, copied;
    /// None when the index has no curve.
    pub fn of_index(index: &memscape_lod::LodIndex) -> Option<Self> {
        let (log_bin, bins) = index
            .curve
            .iter()
            .find(|(_, bins)| bins.len() <= HEAD_CURVE_BINS)
            .or(index.curve.last())?;
        Some(Self {
            log_bin: *log_bin,
            extent_t: index.meta.extent_t,
            bins: bins.to_vec(),
        })
    }

    /// The events bin `k` covers.
    pub fn bin_events(&self, k: usize) -> [u64; 2] {
        let w = 1u64 << self.log_bin;
        let a = (k as u64).saturating_mul(w);
        [a, a.saturating_add(w).min(self.extent_t)]
    }

    /// The first bin holding the peak and the peak's bytes.
    pub fn peak(&self) -> (usize, u64) {
        self.bins
            .iter()
            .enumerate()
            .fold(
                (0, 0),
                |(at, peak), (k, b)| {
                    if b.max > peak { (k, b.max) } else { (at, peak) }
                },
            )
    }
}

/// Hung on the links of a first part whose index holds a heap-size curve.
struct IndexHeapCurveSlot(Option<std::sync::Arc<IndexHeapCurve>>);

/// The whole trace's heap-size curve from its index, on a big `.msc`'s first part
/// ([`load_msc_head`]); None on any other dataset.
pub fn index_heap_curve(dataset: &Dataset) -> Option<std::sync::Arc<IndexHeapCurve>> {
    dataset
        .links
        .shared(|| std::sync::Arc::new(IndexHeapCurveSlot(None)))
        .0
        .clone()
}

/// `trace` with its first `n` blocks only (everything else shared or cloned: the call tree,
/// strings, processes and the whole trace's metadata, so that times and events are the
/// whole trace's).
pub fn head_of(trace: &Trace, n: usize) -> Trace {
    let n = n.min(trace.blocks.len());
    let b = &trace.blocks;
    let blocks = BlockColumns {
        address: b.address.as_slice()[..n].to_vec().into(),
        size: b.size.as_slice()[..n].to_vec().into(),
        requested_size: b.requested_size.as_slice()[..n].to_vec().into(),
        usable_size: b.usable_size.as_slice()[..n].to_vec().into(),
        alloc_time_ns: b.alloc_time_ns.as_slice()[..n].to_vec().into(),
        free_time_ns: b.free_time_ns.as_slice()[..n].to_vec().into(),
        alloc_event: b.alloc_event.as_slice()[..n].to_vec().into(),
        free_event: b.free_event.as_slice()[..n].to_vec().into(),
        thread: b.thread.as_slice()[..n].to_vec().into(),
        site: b.site.as_slice()[..n].to_vec().into(),
        flags: b.flags.as_slice()[..n].to_vec().into(),
        process: b.process.as_slice()[..n].to_vec().into(),
        free_site: b.free_site.as_slice()[..n].to_vec().into(),
        free_thread: b.free_thread.as_slice()[..n].to_vec().into(),
        pool: b.pool.as_slice()[..n].to_vec().into(),
    };
    let mut head = trace.clone();
    head.blocks = blocks;
    head
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A generated trace with its index built beside it, in a directory of its own.
    fn indexed_trace(events: u64) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.msc");
        memscape_lod::synth::write_mappable(
            memscape_lod::synth::SynthParams::new(events, 7),
            &path,
            &mut |_| {},
        )
        .expect("synth");
        memscape_lod::LodTrace::open(
            &path,
            LOD_COLORINGS,
            false,
            &mut |_, _| {},
            &std::sync::atomic::AtomicBool::new(false),
        )
        .expect("index");
        (dir, path)
    }

    #[test]
    fn a_big_msc_with_its_index_opens_with_its_first_blocks_on_the_index_axis() {
        let (_dir, path) = indexed_trace(40_000);
        let whole = memscape_trace::read_msc(&path).expect("read");
        let d = load_msc_head(&path, 1_000, &|_, _| {})
            .expect("load")
            .expect("a first part");
        let extent = crate::dataset::trace_extent(&d).expect("read in part");
        assert_eq!(extent.read, 1_000);
        assert_eq!(extent.total, whole.blocks.len() as u64);
        let t = d.alloc_trace().expect("trace");
        assert_eq!(t.trace.blocks.len(), 1_000);
        assert_eq!(
            t.trace.blocks.alloc_event.as_slice(),
            &whole.blocks.alloc_event.as_slice()[..1_000]
        );
        assert_eq!(t.trace.meta.events, whole.meta.events);
        // The scene on the whole trace's regions, as the index lays its cells out.
        let scene = t.scene.as_ref().expect("scene");
        let full = crate::alloc_map::scene::AllocScene::build(
            &whole,
            crate::alloc_map::scene::ColorBy::default_for(&whole),
        );
        assert_eq!(scene.collapsed_extent, full.collapsed_extent);
        assert_eq!(scene.regions.len(), full.regions.len());
        assert!(scene.known_until.is_some());
    }

    /// The first part's heap-size curve, read from the index, is the whole trace's: each bin's
    /// lowest, highest and last live bytes, computed here from every block of the whole trace
    /// event by event, equal bin for bin at the index's resolution.
    #[test]
    fn a_first_parts_heap_curve_from_the_index_is_the_whole_traces_at_its_resolution() {
        let (_dir, path) = indexed_trace(40_000);
        let whole = memscape_trace::read_msc(&path).expect("read");
        let d = load_msc_head(&path, 1_000, &|_, _| {})
            .expect("load")
            .expect("a first part");
        let curve = index_heap_curve(&d).expect("the index's curve on the first part");
        assert!(curve.log_bin >= 1, "bins of several events");
        assert!(curve.bins.len() <= HEAD_CURVE_BINS && curve.bins.len() > 100);
        // Live bytes after each event of the whole trace: +size at the allocation, −size at the
        // free (blocks never freed stay to the end, as the map draws them).
        let extent = curve.extent_t;
        assert_eq!(extent, whole.meta.events + 1);
        let mut delta = vec![0i128; extent as usize];
        let b = &whole.blocks;
        for i in 0..b.len() {
            delta[b.alloc_event[i] as usize] += i128::from(b.size[i]);
            let freed = b.flags[i] & memscape_trace::model::FLAG_NEVER_FREED == 0;
            if freed && b.free_event[i] < extent {
                delta[b.free_event[i] as usize] -= i128::from(b.size[i]);
            }
        }
        let mut live = 0i128;
        let after: Vec<u64> = delta
            .iter()
            .map(|d| {
                live += d;
                u64::try_from(live).expect("never below zero")
            })
            .collect();
        assert_eq!(curve.bins.len() as u64, extent.div_ceil(1 << curve.log_bin));
        for (k, bin) in curve.bins.iter().enumerate() {
            let [a, e] = curve.bin_events(k);
            let start = if a == 0 { 0 } else { after[a as usize - 1] };
            let inside = &after[a as usize..e as usize];
            let want = memscape_lod::curve::CurveBin {
                min: inside.iter().copied().fold(start, u64::min),
                max: inside.iter().copied().fold(start, u64::max),
                end: inside.last().copied().unwrap_or(start),
            };
            assert_eq!(*bin, want, "bin {k} (events {a}..{e})");
        }
        let (at, peak) = curve.peak();
        let brute_peak = after.iter().copied().max().expect("events");
        assert_eq!(peak, brute_peak);
        let first_peak_event = after.iter().position(|&v| v == brute_peak).expect("peak");
        assert_eq!(at, first_peak_event >> curve.log_bin);
        // A dataset read whole carries none.
        let whole_d = crate::dataset::load(&crate::dataset::LoadSource::File(path), &|_, _| {})
            .expect("whole dataset");
        assert!(index_heap_curve(&whole_d).is_none());
    }

    #[test]
    fn no_first_part_without_a_current_index_or_of_a_small_trace() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.msc");
        memscape_lod::synth::write_mappable(
            memscape_lod::synth::SynthParams::new(40_000, 7),
            &path,
            &mut |_| {},
        )
        .expect("synth");
        // No index beside it (and none in the cache directory for this new file).
        assert!(
            load_msc_head(&path, 1_000, &|_, _| {})
                .expect("load")
                .is_none()
        );
        let (_dir, indexed) = indexed_trace(40_000);
        assert!(
            load_msc_head(&indexed, 1_000_000, &|_, _| {})
                .expect("load")
                .is_none()
        );
    }
}
