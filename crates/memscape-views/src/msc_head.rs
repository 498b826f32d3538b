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
    tracing::debug!(
        target: "memscape::load",
        read = extent.read,
        total = extent.total,
        "first blocks laid out on the index's axis"
    );
    Ok(Some(dataset))
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
