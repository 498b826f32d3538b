//! The allocation-map scene's per-block arrays (collapsed positions, both time axes' lifetimes,
//! colours), made whole or, for a live recording's snapshot in the same live frame as the last,
//! continued from the last snapshot's (issue 18 part 4): a consuming follower keeps every block
//! at its index and a block's position depends only on its address and the frame, so only the
//! blocks added since are laid out and coloured, and those still live at the last snapshot
//! (their free side is what a snapshot changes) patched. The ended blocks' freeing sites' bytes
//! (the legend's top free sites) are kept the same way.

use std::collections::HashMap;
use std::sync::Arc;

use memscape_render::alloc_map::{AllocBlockGpu, BlockTimeGpu};
use memscape_trace::Trace;
use memscape_trace::model::FLAG_NEVER_FREED;
use memscape_trace::regions::Regions;

use super::colors::ColorBy;
use super::scene::RegionLayout;

/// A snapshot's block arrays, kept for the next snapshot to continue
/// ([`super::scene::SceneCarry::blocks`]).
#[derive(Debug)]
pub struct BlockArrays {
    /// Shared with the snapshot's scene (copied when continued while the views still hold it).
    pub(super) blocks: Arc<Vec<AllocBlockGpu>>,
    pub(super) times_events: Arc<Vec<BlockTimeGpu>>,
    pub(super) times_wall: Arc<Vec<BlockTimeGpu>>,
    /// The live frame's layout ([`super::live_frame::LiveFrame::layout`]) of the positions.
    pub(super) layout: u64,
    /// The colouring and detected wrappers' digest of the colours, when they stay once a block
    /// has ended ([`colors_stay`]); else `None` (every block coloured again).
    pub(super) colors: Option<(ColorBy, u64)>,
    /// The blocks not ended at that snapshot (ascending): their lifetimes and free side may
    /// have changed since.
    pub(super) open: Vec<u32>,
    /// Requested bytes per freeing call site (raw node) of the blocks ended by that snapshot.
    pub(super) free_site_bytes: HashMap<u32, u64>,
    /// The largest block size of that snapshot, and the longest lifetime (in events) of its
    /// ended blocks: the next snapshot's maxima look only at the blocks added or still open.
    pub(super) extremes: Extremes,
    /// The arrays of the snapshot before, when that snapshot's were copied (the views held
    /// them), with what this snapshot changed in them: once the views let go of them, the next
    /// snapshot takes them and copies in only those changes instead of every block.
    pub(super) spare: Option<Spare>,
    /// How this snapshot had the last one's values ([`Reuse`]).
    pub(super) reuse: Reuse,
}

impl BlockArrays {
    /// How this snapshot's arrays had the last snapshot's values: taken, made from the
    /// arrays two snapshots back, or copied whole ([`Reuse::None`]: laid out whole).
    pub fn reuse(&self) -> Reuse {
        self.reuse
    }
}

/// The block arrays of the snapshot before the last (two back), kept for their storage
/// ([`BlockArrays::spare`]): the last snapshot's arrays are these but for the blocks open in
/// them (`changed`), patched, and the blocks appended after them (from `len` on). The colours
/// are only that alike when the last snapshot coloured just those blocks (`colors_alike`);
/// else its colour array is copied whole.
#[derive(Debug)]
pub(super) struct Spare {
    blocks: Arc<Vec<AllocBlockGpu>>,
    times_events: Arc<Vec<BlockTimeGpu>>,
    times_wall: Arc<Vec<BlockTimeGpu>>,
    /// The blocks they hold (the last snapshot's from here on are appended).
    len: usize,
    /// The blocks open in them (ascending), patched by the last snapshot.
    changed: Vec<u32>,
    /// Whether the last snapshot coloured only `changed` and the appended blocks.
    pub(super) colors_alike: bool,
}

/// The largest block size and the longest lifetime of the ended blocks laid out so far
/// (exact: the sizes and an ended block's events never change in a live trace).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Extremes {
    pub max_size: u64,
    pub max_ended_lifetime: u64,
}

impl Extremes {
    /// The scene's `max_size` and `max_lifetime` (at least 2; the whole trace's maxima): the
    /// open blocks' lifetimes, which grow with the trace, taken now.
    pub fn scene_maxima(&self, trace: &Trace, open: &[u32]) -> (u64, u64) {
        let lifetime = lifetimes(trace);
        let open_lifetime = open
            .iter()
            .map(|&i| lifetime(i as usize))
            .max()
            .unwrap_or(0);
        (
            self.max_size.max(2),
            self.max_ended_lifetime.max(open_lifetime).max(2),
        )
    }
}

/// A block's lifetime in events, by index (the columns' slices taken once: a column's
/// indexing derefs it each time).
fn lifetimes(trace: &Trace) -> impl Fn(usize) -> u64 + '_ {
    let alloc = trace.blocks.alloc_event.as_slice();
    let free = trace.blocks.free_event.as_slice();
    move |i| free[i].saturating_sub(alloc[i])
}

/// The arrays of one snapshot, before colouring ([`continue_or_lay_out`]).
pub(super) struct LaidOut {
    pub blocks: Vec<AllocBlockGpu>,
    pub times_events: Vec<BlockTimeGpu>,
    pub times_wall: Vec<BlockTimeGpu>,
    /// Blocks whose colour must be computed: `None` every block; else these (ascending), the
    /// others' colours kept from the last snapshot when it was coloured by `kept_colors`.
    pub recolor: Option<Vec<u32>>,
    pub kept_colors: Option<(ColorBy, u64)>,
    pub open: Vec<u32>,
    pub free_site_bytes: HashMap<u32, u64>,
    pub extremes: Extremes,
    /// Whether the last snapshot's arrays were continued.
    pub continued: bool,
    /// The last snapshot's arrays when they were copied (see [`BlockArrays::spare`]; its
    /// `colors_alike` is set once the colouring is known).
    pub spare: Option<Spare>,
    /// How the last snapshot's arrays were had: taken, made from the spare's, or copied.
    pub reuse: Reuse,
}

/// How a continued snapshot had the last snapshot's values in arrays of its own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Reuse {
    /// Not continued (laid out whole).
    #[default]
    None,
    /// Nothing else held the last snapshot's arrays: taken as they are.
    Taken,
    /// The views held them: the arrays of the snapshot before them, with the blocks that
    /// changed since copied in (`Spare`).
    FromSpare,
    /// The views held them and no spare was free: copied whole.
    Copied,
}

/// Whether a block's colour by `color_by` stays once it has ended (with the same detected
/// allocation wrappers): the colourings whose sums a live map accumulates too. Ramps that
/// grow with the trace (size, lifetime, age) and region indices (bin) recolour old blocks.
pub fn colors_stay(color_by: ColorBy) -> bool {
    matches!(
        color_by,
        ColorBy::Thread
            | ColorBy::Site
            | ColorBy::Process
            | ColorBy::FreeSite
            | ColorBy::CrossThread
    )
}

/// The block arrays of `trace` on the collapsed axis of `layout` (colourless where computed),
/// continuing `previous` when it was laid out in the same live frame `layout_number` and
/// `trace` holds its blocks at the same indices; else made whole.
pub(super) fn continue_or_lay_out(
    trace: &Trace,
    regions: &Regions,
    layout: &[RegionLayout],
    layout_number: Option<u64>,
    previous: Option<BlockArrays>,
) -> LaidOut {
    let b = &trace.blocks;
    let n = b.len();
    let previous = previous.filter(|p| Some(p.layout) == layout_number && holds(trace, p));
    let Some(p) = previous else {
        let mut out = LaidOut {
            blocks: Vec::with_capacity(n),
            times_events: Vec::with_capacity(n),
            times_wall: Vec::with_capacity(n),
            recolor: None,
            kept_colors: None,
            open: Vec::new(),
            free_site_bytes: HashMap::new(),
            extremes: Extremes::default(),
            continued: false,
            spare: None,
            reuse: Reuse::None,
        };
        append(trace, regions, layout, 0..n, &mut out);
        return out;
    };
    let from = p.blocks.len();
    let (spare_blocks, spare_events, spare_wall, spare_len, changed) = match p.spare {
        Some(Spare {
            blocks,
            times_events,
            times_wall,
            len,
            changed,
            colors_alike,
        }) => (
            colors_alike.then_some(blocks),
            Some(times_events),
            Some(times_wall),
            len,
            changed,
        ),
        None => (None, None, None, 0, Vec::new()),
    };
    let mut reuse = Reuse::Taken;
    let (blocks, kept_blocks) = continued_vec(
        p.blocks,
        spare_blocks.map(|a| SpareArray::new(a, spare_len, &changed)),
        n,
        &mut reuse,
    );
    let (times_events, kept_events) = continued_vec(
        p.times_events,
        spare_events.map(|a| SpareArray::new(a, spare_len, &changed)),
        n,
        &mut reuse,
    );
    let (times_wall, kept_wall) = continued_vec(
        p.times_wall,
        spare_wall.map(|a| SpareArray::new(a, spare_len, &changed)),
        n,
        &mut reuse,
    );
    // The last snapshot's arrays, still held by the views, are the next snapshot's spare.
    let spare = match (kept_blocks, kept_events, kept_wall) {
        (Some(blocks), Some(times_events), Some(times_wall)) => Some(Spare {
            blocks,
            times_events,
            times_wall,
            len: from,
            changed: p.open.clone(),
            colors_alike: false,
        }),
        _ => None,
    };
    let mut out = LaidOut {
        blocks,
        times_events,
        times_wall,
        recolor: None,
        kept_colors: p.colors,
        open: Vec::with_capacity(p.open.len() + (n - from)),
        free_site_bytes: p.free_site_bytes,
        extremes: p.extremes,
        continued: true,
        spare,
        reuse,
    };
    // The blocks live at the last snapshot: their free side again (the position stays).
    let flags = b.flags.as_slice();
    let lifetime = lifetimes(trace);
    for &i in &p.open {
        let k = i as usize;
        out.times_events[k] = BlockTimeGpu::new(b.alloc_event[k], b.free_event[k]);
        out.times_wall[k] = BlockTimeGpu::new(b.alloc_time_ns[k], b.free_time_ns[k]);
        if flags[k] & FLAG_NEVER_FREED != 0 {
            out.open.push(i);
        } else {
            add_free_site(&mut out.free_site_bytes, trace, k);
            out.extremes.max_ended_lifetime = out.extremes.max_ended_lifetime.max(lifetime(k));
        }
    }
    let mut recolor = p.open;
    append(trace, regions, layout, from..n, &mut out);
    recolor.extend(from as u32..n as u32);
    out.recolor = Some(recolor);
    out
}

/// Whether `trace` holds `previous`'s blocks at their indices: each block is its allocation
/// event, which a merge numbers once (a follower that renumbered blocks fails this).
fn holds(trace: &Trace, previous: &BlockArrays) -> bool {
    let alloc = trace.blocks.alloc_event.as_slice();
    let times = previous.times_events.as_slice();
    times.len() <= alloc.len()
        && times
            .iter()
            .zip(alloc)
            .all(|(t, &a)| t.start == memscape_render::u64_split::split(a))
}

/// One of a [`Spare`]'s arrays, with the length it holds and the indices below it that the
/// last snapshot changed.
struct SpareArray<'a, T> {
    array: Arc<Vec<T>>,
    len: usize,
    changed: &'a [u32],
}

impl<'a, T> SpareArray<'a, T> {
    fn new(array: Arc<Vec<T>>, len: usize, changed: &'a [u32]) -> Self {
        Self {
            array,
            len,
            changed,
        }
    }
}

/// The values of a shared array with room for `n`: taken when nothing else holds it; else
/// (the views show the last snapshot's meanwhile) made from `spare`, the array two snapshots
/// back, when nothing holds that one (its values but at the indices `changed` and from `len`
/// on are `shared`'s), else copied. A `shared` still held is returned beside (the next
/// snapshot's spare); `reuse` is lowered to the worst way taken.
fn continued_vec<T: Clone>(
    shared: Arc<Vec<T>>,
    spare: Option<SpareArray<'_, T>>,
    n: usize,
    reuse: &mut Reuse,
) -> (Vec<T>, Option<Arc<Vec<T>>>) {
    let shared = match Arc::try_unwrap(shared) {
        Ok(mut v) => {
            v.reserve(n.saturating_sub(v.len()));
            return (v, None);
        }
        Err(shared) => shared,
    };
    let from_spare = spare.and_then(
        |SpareArray {
             array,
             len,
             changed,
         }| {
            let v = Arc::try_unwrap(array).ok()?;
            let fits = v.len() == len && len <= shared.len();
            let fits = fits && changed.last().is_none_or(|&i| (i as usize) < len);
            fits.then_some((v, changed))
        },
    );
    let v = match from_spare {
        Some((mut v, changed)) => {
            for &i in changed {
                let i = i as usize;
                v[i] = shared[i].clone();
            }
            v.reserve(n.max(shared.len()) - v.len());
            v.extend_from_slice(&shared[v.len()..]);
            if *reuse == Reuse::Taken {
                *reuse = Reuse::FromSpare;
            }
            v
        }
        None => {
            let mut v = Vec::with_capacity(n.max(shared.len()));
            v.extend_from_slice(&shared);
            *reuse = Reuse::Copied;
            v
        }
    };
    (v, Some(shared))
}

/// Lays out blocks `range` (colourless) after those in `out`, noting the live ones and the
/// ended ones' freeing sites.
fn append(
    trace: &Trace,
    regions: &Regions,
    layout: &[RegionLayout],
    range: std::ops::Range<usize>,
    out: &mut LaidOut,
) {
    let b = &trace.blocks;
    // Each column's slice taken once (a column's indexing derefs it each time).
    let flags = b.flags.as_slice();
    let (address, size) = (b.address.as_slice(), b.size.as_slice());
    let (alloc_event, free_event) = (b.alloc_event.as_slice(), b.free_event.as_slice());
    let (alloc_time, free_time) = (b.alloc_time_ns.as_slice(), b.free_time_ns.as_slice());
    for i in range {
        let y = regions
            .block_region
            .get(i)
            .and_then(|&k| layout.get(k as usize))
            .map_or(0, |r| {
                r.collapsed_start + address[i].saturating_sub(r.start)
            });
        out.blocks
            .push(AllocBlockGpu::new(y, size[i].max(1), [0; 4], 0.0));
        out.times_events
            .push(BlockTimeGpu::new(alloc_event[i], free_event[i]));
        out.times_wall
            .push(BlockTimeGpu::new(alloc_time[i], free_time[i]));
        out.extremes.max_size = out.extremes.max_size.max(size[i]);
        if flags[i] & FLAG_NEVER_FREED != 0 {
            out.open.push(i as u32);
        } else {
            add_free_site(&mut out.free_site_bytes, trace, i);
            let lifetime = free_event[i].saturating_sub(alloc_event[i]);
            out.extremes.max_ended_lifetime = out.extremes.max_ended_lifetime.max(lifetime);
        }
    }
}

fn add_free_site(bytes: &mut HashMap<u32, u64>, trace: &Trace, i: usize) {
    let b = &trace.blocks;
    if b.free_site[i] != 0 {
        *bytes.entry(b.free_site[i]).or_default() += b.requested_size[i];
    }
}
