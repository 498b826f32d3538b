//! Frame statistics filled by the pipelines: GPU time per pass from timestamp queries (where the
//! device has `Features::TIMESTAMP_QUERY`) and the path each allocation-map draw took with its
//! block count and size. Knows nothing of who shows them: the GUI's overlay, `memscape render
//! --stats` and `memscape bench` read the same [`FrameStats`].
//!
//! A [`StatsRecorder`] is a cheap, cloneable handle. Pipelines that hold one (see
//! `AllocMapPipelines::set_stats`) ask it for each pass's timestamp writes
//! ([`StatsRecorder::pass`]) and report each map draw ([`StatsRecorder::map_drawn`]). The owner
//! of the command encoder then resolves the queries ([`StatsRecorder::resolve`]) and, after the
//! submit, reads them: blocking ([`StatsRecorder::finish_blocking`], headless) or a frame or two
//! later without waiting ([`StatsRecorder::poll`], the GUI).
//!
//! Timestamps are written at the beginning and end of each pass (`timestamp_writes` of the pass
//! descriptor): that needs only `TIMESTAMP_QUERY`, not `TIMESTAMP_QUERY_INSIDE_ENCODERS` or
//! `TIMESTAMP_QUERY_INSIDE_PASSES` (wgpu 30). Work drawn inside another owner's pass (egui's,
//! in the GUI) is not timed.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use crate::alloc_map::AccumPath;

/// Timestamp queries one recorder can hold per frame (two per pass).
const QUERY_CAPACITY: u32 = 256;

/// The GPU time of one pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassTiming {
    /// Who drew it (`map 0`, `pane 3 · map 1`, …), as the caller set with
    /// [`StatsRecorder::set_scope`].
    pub scope: String,
    /// Which pass (`alloc_map accumulate (raster)`, `alloc_map dense blocks`, …).
    pub pass: String,
    /// Nanoseconds between the pass's beginning and end timestamps; `None` when the device
    /// has no timestamp queries (or they ran out this frame).
    pub gpu_ns: Option<u64>,
}

/// One allocation-map draw: the path its accumulation took, its blocks and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapDrawStats {
    /// Raster, dense (never `Auto`); the level-of-detail path is drawn on the CPU
    /// (memscape-lod) and reported by its callers.
    pub path: AccumPath,
    /// Blocks in the draw (its range of the upload).
    pub blocks: usize,
    /// The view's size in pixels.
    pub size: [u32; 2],
}

/// Whether GPU times can be measured on a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuTimingSupport {
    /// Per pass, from the passes' timestamp writes.
    Passes,
    /// The adapter has no `TIMESTAMP_QUERY`.
    Unavailable,
}

impl GpuTimingSupport {
    pub fn of(device: &wgpu::Device) -> Self {
        if device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            Self::Passes
        } else {
            Self::Unavailable
        }
    }

    /// What the overlay and reports say when times cannot be measured.
    pub const UNAVAILABLE_NOTE: &'static str = "GPU timing unavailable on this adapter";
}

/// What one frame (or, in the GUI, the latest draw of each pass) cost on the GPU and how each
/// allocation map was drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameStats {
    pub timing: GpuTimingSupport,
    pub passes: Vec<PassTiming>,
    /// Per scope, its latest map draw.
    pub maps: Vec<(String, MapDrawStats)>,
}

impl FrameStats {
    /// The sum of the passes' GPU times, when every pass was timed.
    pub fn gpu_total_ns(&self) -> Option<u64> {
        if self.passes.is_empty() {
            return None;
        }
        self.passes.iter().map(|p| p.gpu_ns).sum()
    }

    /// Each timed pass's GPU time by its name (whatever the scope; a pass drawn twice counts
    /// its sum), in the order first drawn.
    pub fn pass_totals_ns(&self) -> Vec<(String, u64)> {
        let mut totals: Vec<(String, u64)> = Vec::new();
        for p in &self.passes {
            let Some(ns) = p.gpu_ns else { continue };
            match totals.iter_mut().find(|(name, _)| *name == p.pass) {
                Some((_, t)) => *t += ns,
                None => totals.push((p.pass.clone(), ns)),
            }
        }
        totals
    }
}

/// The features memscape asks for when it wants GPU times (those the adapter has).
pub fn timing_features(adapter: &wgpu::Adapter) -> wgpu::Features {
    adapter.features() & wgpu::Features::TIMESTAMP_QUERY
}

/// Where the readback of a frame's queries stands (GUI; headless reads at once).
const IDLE: u8 = 0;
/// Resolved and copied into the readback buffer in an encoder not yet known to be submitted.
const COPIED: u8 = 1;
/// `map_async` asked; waiting for the callback.
const MAPPING: u8 = 2;
/// Mapped: the values can be read.
const MAPPED: u8 = 3;

struct Queries {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
    period_ns: f64,
    /// Queries written this frame.
    used: u32,
    /// Each pass's (scope, pass, first query) of the frame being read back.
    in_flight: Vec<(String, String, u32)>,
    state: Arc<AtomicU8>,
}

struct State {
    queries: Option<Queries>,
    scope: String,
    /// Passes recorded since the last resolve: (scope, pass, first query or `None`).
    pending: Vec<(String, String, Option<u32>)>,
    /// The latest timing of each (scope, pass).
    latest: BTreeMap<(String, String), Option<u64>>,
    /// Order in which (scope, pass) pairs were first seen.
    order: Vec<(String, String)>,
    maps: BTreeMap<String, MapDrawStats>,
    timing: GpuTimingSupport,
}

/// Collects [`FrameStats`] from the pipelines that hold it. Clones share one collection.
#[derive(Clone)]
pub struct StatsRecorder(Arc<Mutex<State>>);

impl std::fmt::Debug for StatsRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StatsRecorder")
    }
}

/// The timestamp writes of one pass (nothing when GPU times are not measured).
pub struct PassQueries {
    writes: Option<(wgpu::QuerySet, u32)>,
}

impl PassQueries {
    pub fn render(&self) -> Option<wgpu::RenderPassTimestampWrites<'_>> {
        self.writes
            .as_ref()
            .map(|(set, first)| wgpu::RenderPassTimestampWrites {
                query_set: set,
                beginning_of_pass_write_index: Some(*first),
                end_of_pass_write_index: Some(first + 1),
            })
    }

    pub fn compute(&self) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        self.writes
            .as_ref()
            .map(|(set, first)| wgpu::ComputePassTimestampWrites {
                query_set: set,
                beginning_of_pass_write_index: Some(*first),
                end_of_pass_write_index: Some(first + 1),
            })
    }

    /// No timestamps (a pass of a pipeline without a recorder).
    pub fn none() -> Self {
        Self { writes: None }
    }
}

impl StatsRecorder {
    /// A recorder for `device`: GPU times where it has `TIMESTAMP_QUERY`, paths and block
    /// counts everywhere.
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Self {
        let timing = GpuTimingSupport::of(device);
        let queries = (timing == GpuTimingSupport::Passes).then(|| {
            let bytes = u64::from(QUERY_CAPACITY) * 8;
            Queries {
                set: device.create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("StatsRecorder::timestamps"),
                    ty: wgpu::QueryType::Timestamp,
                    count: QUERY_CAPACITY,
                }),
                resolve: device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("StatsRecorder::resolve"),
                    size: bytes,
                    usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                }),
                readback: device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("StatsRecorder::readback"),
                    size: bytes,
                    usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
                    mapped_at_creation: false,
                }),
                period_ns: f64::from(queue.get_timestamp_period()),
                used: 0,
                in_flight: Vec::new(),
                state: Arc::new(AtomicU8::new(IDLE)),
            }
        });
        Self(Arc::new(Mutex::new(State {
            queries,
            scope: String::new(),
            pending: Vec::new(),
            latest: BTreeMap::new(),
            order: Vec::new(),
            maps: BTreeMap::new(),
            timing,
        })))
    }

    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> Option<R> {
        self.0.lock().ok().map(|mut s| f(&mut s))
    }

    pub fn timing(&self) -> GpuTimingSupport {
        self.with(|s| s.timing)
            .unwrap_or(GpuTimingSupport::Unavailable)
    }

    /// Names who draws the following passes and maps (`map 0`, `pane 3 · map 1`).
    pub fn set_scope(&self, scope: impl Into<String>) {
        let scope = scope.into();
        self.with(|s| s.scope = scope);
    }

    /// The timestamp writes for a pass named `pass` of the current scope. Without timestamp
    /// queries the pass is still listed (its time `None`); while the GUI waits for the last
    /// frame's readback, passes are not timed and keep their latest time.
    pub fn pass(&self, pass: &str) -> PassQueries {
        self.with(|s| {
            let scope = s.scope.clone();
            match &mut s.queries {
                None => {
                    s.pending.push((scope, pass.to_owned(), None));
                    PassQueries::none()
                }
                Some(q) => {
                    if q.state.load(Ordering::Acquire) != IDLE || q.used + 2 > QUERY_CAPACITY {
                        // Listed, untimed (an earlier time of the pass is kept).
                        s.pending.push((scope, pass.to_owned(), None));
                        return PassQueries::none();
                    }
                    let first = q.used;
                    q.used += 2;
                    s.pending.push((scope, pass.to_owned(), Some(first)));
                    PassQueries {
                        writes: Some((q.set.clone(), first)),
                    }
                }
            }
        })
        .unwrap_or_else(PassQueries::none)
    }

    /// Reports an allocation-map draw of the current scope.
    pub fn map_drawn(&self, stats: MapDrawStats) {
        self.with(|s| {
            let scope = s.scope.clone();
            s.maps.insert(scope, stats);
        });
    }

    /// Forgets the passes and maps of scopes for which `gone` holds (closed panes).
    pub fn forget(&self, gone: impl Fn(&str) -> bool) {
        self.with(|s| {
            s.maps.retain(|k, _| !gone(k));
            s.latest.retain(|(k, _), _| !gone(k));
            s.order.retain(|(k, _)| !gone(k));
        });
    }

    /// Records the resolve of this frame's queries into `encoder` (after every timed pass).
    /// Passes without timestamps are settled at once.
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        self.with(|s| {
            let pending = std::mem::take(&mut s.pending);
            let mut timed = Vec::new();
            for (scope, pass, first) in pending {
                match first {
                    Some(first) => timed.push((scope, pass, first)),
                    None => settle(s, scope, pass, None),
                }
            }
            let Some(q) = &mut s.queries else {
                return;
            };
            if q.used == 0 || q.state.load(Ordering::Acquire) != IDLE {
                return;
            }
            encoder.resolve_query_set(&q.set, 0..q.used, &q.resolve, 0);
            encoder.copy_buffer_to_buffer(&q.resolve, 0, &q.readback, 0, u64::from(q.used) * 8);
            q.in_flight = timed;
            q.state.store(COPIED, Ordering::Release);
        });
    }

    /// Headless: after the encoder with [`Self::resolve`] was submitted, waits for the
    /// timestamps and returns the frame's statistics; the recorder starts afresh.
    pub fn finish_blocking(&self, device: &wgpu::Device) -> FrameStats {
        self.poll(device);
        let _ = device.poll(wgpu::PollType::wait_indefinitely());
        self.poll(device);
        let stats = self.snapshot();
        self.with(|s| {
            s.latest.clear();
            s.order.clear();
            s.maps.clear();
        });
        stats
    }

    /// GUI: moves the readback one step on without waiting (call once a frame, before
    /// recording: the encoder of the last [`Self::resolve`] has been submitted by then), and
    /// takes the times once they are there.
    pub fn poll(&self, device: &wgpu::Device) {
        self.with(|s| {
            let Some(q) = &mut s.queries else {
                return;
            };
            match q.state.load(Ordering::Acquire) {
                COPIED => {
                    q.state.store(MAPPING, Ordering::Release);
                    let state = q.state.clone();
                    let bytes = u64::from(q.used) * 8;
                    q.readback
                        .slice(..bytes)
                        .map_async(wgpu::MapMode::Read, move |r| {
                            state.store(if r.is_ok() { MAPPED } else { IDLE }, Ordering::Release);
                        });
                }
                MAPPED => {
                    let bytes = u64::from(q.used) * 8;
                    let ticks: Vec<u64> = {
                        let view = q.readback.slice(..bytes).get_mapped_range();
                        match view {
                            Ok(view) => view
                                .chunks_exact(8)
                                .map(|c| {
                                    let mut b = [0u8; 8];
                                    b.copy_from_slice(c);
                                    u64::from_le_bytes(b)
                                })
                                .collect(),
                            Err(_) => Vec::new(),
                        }
                    };
                    q.readback.unmap();
                    let period = q.period_ns;
                    let in_flight = std::mem::take(&mut q.in_flight);
                    q.used = 0;
                    q.state.store(IDLE, Ordering::Release);
                    for (scope, pass, first) in in_flight {
                        let i = first as usize;
                        let ns = match (ticks.get(i), ticks.get(i + 1)) {
                            (Some(&a), Some(&b)) if b >= a => {
                                Some(((b - a) as f64 * period).round() as u64)
                            }
                            _ => None,
                        };
                        settle(s, scope, pass, ns);
                    }
                }
                MAPPING => {
                    let _ = device.poll(wgpu::PollType::Poll);
                }
                _ => {}
            }
        });
    }

    /// The latest time of each pass and the latest draw of each map.
    pub fn snapshot(&self) -> FrameStats {
        self.with(|s| FrameStats {
            timing: s.timing,
            passes: s
                .order
                .iter()
                .map(|key| PassTiming {
                    scope: key.0.clone(),
                    pass: key.1.clone(),
                    gpu_ns: s.latest.get(key).copied().flatten(),
                })
                .collect(),
            maps: s.maps.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        })
        .unwrap_or(FrameStats {
            timing: GpuTimingSupport::Unavailable,
            passes: Vec::new(),
            maps: Vec::new(),
        })
    }
}

/// Records a pass's time; an untimed run keeps the pass's earlier time.
fn settle(s: &mut State, scope: String, pass: String, ns: Option<u64>) {
    let key = (scope, pass);
    match s.latest.get(&key) {
        None => {
            s.order.push(key.clone());
            s.latest.insert(key, ns);
        }
        Some(_) if ns.is_some() => {
            s.latest.insert(key, ns);
        }
        Some(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_total_needs_every_pass_timed() {
        let pass = |ns| PassTiming {
            scope: "map 0".into(),
            pass: "p".into(),
            gpu_ns: ns,
        };
        let mut stats = FrameStats {
            timing: GpuTimingSupport::Passes,
            passes: vec![pass(Some(5)), pass(Some(7))],
            maps: Vec::new(),
        };
        assert_eq!(stats.gpu_total_ns(), Some(12));
        stats.passes.push(pass(None));
        assert_eq!(stats.gpu_total_ns(), None);
        stats.passes.clear();
        assert_eq!(stats.gpu_total_ns(), None);
    }

    #[test]
    fn pass_totals_sum_a_pass_drawn_twice_in_the_order_first_drawn() {
        let pass = |name: &str, ns| PassTiming {
            scope: "bench".into(),
            pass: name.into(),
            gpu_ns: ns,
        };
        let stats = FrameStats {
            timing: GpuTimingSupport::Passes,
            passes: vec![
                pass("scan", Some(5)),
                pass("resolve", Some(2)),
                pass("scan", Some(7)),
                pass("cells", None),
            ],
            maps: Vec::new(),
        };
        assert_eq!(
            stats.pass_totals_ns(),
            vec![("scan".to_owned(), 12), ("resolve".to_owned(), 2)]
        );
    }
}
