//! A generator of realistic allocation traces of any length, for benchmarks and tests of the
//! level of detail: heap-like address reuse (exact-fit free lists over a bump pointer per arena,
//! one arena per thread, large blocks in a mapping area), call sites with their own sizes and
//! power-law (Pareto) lifetimes, a few leaking sites, idle pauses, and isolated 1-byte blocks in
//! a sparse region (the blocks Eq. 1's bias must keep visible). Deterministic for a seed;
//! memory grows with the live set only, so a billion events stream through in bounded memory.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SynthParams {
    /// Events (allocations plus frees) to emit; blocks still live at the end are never freed.
    pub events: u64,
    pub threads: u32,
    pub sites: u32,
    pub seed: u64,
    /// Isolated 1-byte blocks spread evenly over the trace, in a region of their own.
    pub isolated: u32,
}

impl SynthParams {
    pub fn new(events: u64, seed: u64) -> Self {
        Self {
            events,
            threads: 8,
            sites: 96,
            seed,
            isolated: 16,
        }
    }
}

/// One event of a generated trace (event index = position in the stream).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SynthEvent {
    Alloc {
        /// Index of the block (allocation order).
        block: u64,
        time_ns: u64,
        address: u64,
        requested: u64,
        usable: u64,
        thread: u32,
        /// Call-site number, 1..=sites.
        site: u32,
    },
    Free {
        block: u64,
        time_ns: u64,
        address: u64,
        /// The block's usable and requested sizes.
        usable: u64,
        requested: u64,
    },
}

/// Start of the main (brk) heap, of the thread arenas, of the mapping area and of the sparse
/// region of isolated blocks.
pub const MAIN_HEAP: u64 = 0x5555_5600_0000;
pub const ARENAS: u64 = 0x7e00_0000_0000;
pub const ARENA_SPACING: u64 = 1 << 34;
pub const MAPPINGS: u64 = 0x7ff0_0000_0000;
pub const ISOLATED: u64 = 0x6000_0000_0000;
/// Isolated blocks lie this far apart: less than the 1 MiB gap that splits address regions, so
/// they share one sparse region.
pub const ISOLATED_SPACING: u64 = 512 << 10;
/// Requests from this size on are served by mappings (as glibc's `M_MMAP_THRESHOLD`).
pub const MMAP_THRESHOLD: u64 = 128 << 10;

/// A small, fast deterministic generator (SplitMix64 seeding a xorshift64*).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Self((z ^ (z >> 31)) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in (0, 1].
    pub fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next_u64() % n }
    }

    /// Log-uniform in [lo, hi].
    pub fn log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        (lo.ln() + (hi.ln() - lo.ln()) * self.unit()).exp()
    }
}

#[derive(Debug, Clone)]
struct Site {
    /// Typical requested size and its spread (log2 units).
    size: f64,
    size_spread: f64,
    /// Pareto lifetime: scale (events) and shape.
    life_scale: f64,
    life_shape: f64,
    /// Probability that an allocation is never freed.
    leak: f64,
    thread: u32,
}

#[derive(Debug, Default, Clone)]
struct Arena {
    top: u64,
    free: HashMap<u64, Vec<u64>>,
}

impl Arena {
    fn take(&mut self, usable: u64) -> u64 {
        if let Some(a) = self.free.get_mut(&usable).and_then(Vec::pop) {
            return a;
        }
        let a = self.top;
        self.top += usable;
        a
    }

    fn give(&mut self, address: u64, usable: u64) {
        self.free.entry(usable).or_default().push(address);
    }
}

/// A pending free: when it is due, which block, where, and which arena gets the space back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Pending {
    due: u64,
    block: u64,
    address: u64,
    usable: u64,
    requested: u64,
    arena: u32,
}

/// The generator: an iterator over [`SynthEvent`]s.
#[derive(Debug)]
pub struct Synth {
    params: SynthParams,
    rng: Rng,
    sites: Vec<Site>,
    /// Cumulative Zipf weights of the sites.
    site_cdf: Vec<f64>,
    /// One per thread, then the mapping area, then the isolated region.
    arenas: Vec<Arena>,
    pending: BinaryHeap<Reverse<Pending>>,
    event: u64,
    time_ns: u64,
    next_block: u64,
    next_isolated: u32,
}

impl Synth {
    pub fn new(params: SynthParams) -> Self {
        let mut rng = Rng::new(params.seed);
        let threads = params.threads.max(1);
        let n_sites = params.sites.max(1);
        let sites: Vec<Site> = (0..n_sites)
            .map(|k| {
                let large = rng.unit() < 0.015;
                let long_lived = k >= 20 && rng.unit() < 0.06;
                let size = if large {
                    rng.log_uniform(8192.0, 2.0 * 1024.0 * 1024.0).log2()
                } else {
                    rng.log_uniform(8.0, 2048.0).log2()
                };
                Site {
                    size,
                    size_spread: if rng.unit() < 0.5 {
                        0.0
                    } else {
                        rng.unit() * 2.0
                    },
                    // Most sites make temporaries; one in ten of the less busy ones keeps its blocks for long
                    // (caches, tables): what real traces show (sqlite3: 0.7 % of the blocks
                    // outlive a column of the whole-trace view).
                    life_scale: if long_lived {
                        rng.log_uniform(2_000.0, 2_000_000.0)
                    } else {
                        rng.log_uniform(1.0, 64.0)
                    },
                    life_shape: if long_lived {
                        0.6 + rng.unit() * 0.8
                    } else {
                        1.2 + rng.unit() * 0.8
                    },
                    leak: if k % 37 == 5 { 2e-3 } else { 0.0 },
                    thread: if rng.unit() < 0.4 {
                        0
                    } else {
                        rng.below(u64::from(threads)) as u32
                    },
                }
            })
            .collect();
        let mut acc = 0.0;
        let site_cdf = (0..n_sites)
            .map(|k| {
                acc += 1.0 / f64::from(k + 1).powf(1.1);
                acc
            })
            .collect();
        let mut arenas: Vec<Arena> = (0..threads)
            .map(|t| {
                let base = if t == 0 {
                    MAIN_HEAP
                } else {
                    ARENAS + u64::from(t) * ARENA_SPACING
                };
                Arena {
                    top: base,
                    free: HashMap::new(),
                }
            })
            .collect();
        for base in [MAPPINGS, ISOLATED] {
            arenas.push(Arena {
                top: base,
                free: HashMap::new(),
            });
        }
        Self {
            params,
            rng,
            sites,
            site_cdf,
            arenas,
            pending: BinaryHeap::new(),
            event: 0,
            time_ns: 0,
            next_block: 0,
            next_isolated: 0,
        }
    }

    pub fn params(&self) -> &SynthParams {
        &self.params
    }

    /// Blocks still live (freed later, or never).
    pub fn pending_frees(&self) -> usize {
        self.pending.len()
    }

    fn advance_clock(&mut self) {
        // ~40 ns between events, with an idle pause of 1–20 ms about every 4 M events.
        self.time_ns += 1 + (-(self.rng.unit().ln()) * 40.0) as u64;
        if self.rng.below(4_000_000) == 0 {
            self.time_ns += 1_000_000 + self.rng.below(19_000_000);
        }
    }

    fn pick_site(&mut self) -> usize {
        let total = self.site_cdf.last().copied().unwrap_or(1.0);
        let u = self.rng.unit() * total;
        self.site_cdf
            .partition_point(|&c| c < u)
            .min(self.sites.len() - 1)
    }

    fn alloc(&mut self) -> SynthEvent {
        let block = self.next_block;
        self.next_block += 1;
        let event = self.event;
        // Isolated 1-byte blocks at evenly spaced times.
        let isolated = u64::from(self.params.isolated);
        if isolated > 0 && self.next_isolated < self.params.isolated {
            let due_at =
                (u64::from(self.next_isolated) * 2 + 1) * self.params.events / (2 * isolated);
            if event >= due_at {
                let k = self.next_isolated;
                self.next_isolated += 1;
                let address = ISOLATED + u64::from(k) * ISOLATED_SPACING;
                let arena = self.arenas.len() as u32 - 1;
                let life = 200 + self.rng.below(2000);
                self.pending.push(Reverse(Pending {
                    due: event + life,
                    block,
                    address,
                    usable: 1,
                    requested: 1,
                    arena,
                }));
                return SynthEvent::Alloc {
                    block,
                    time_ns: self.time_ns,
                    address,
                    requested: 1,
                    usable: 1,
                    thread: 0,
                    site: self.sites.len() as u32,
                };
            }
        }
        let s = self.pick_site();
        let site = self.sites[s].clone();
        let jitter = (self.rng.unit() * 2.0 - 1.0) * site.size_spread;
        let requested = (2f64.powf(site.size + jitter).round() as u64).max(1);
        let (usable, arena) = if requested >= MMAP_THRESHOLD {
            (
                (requested + 16).next_power_of_two().max(MMAP_THRESHOLD),
                self.params.threads.max(1),
            )
        } else if requested <= 4096 {
            ((requested + 8).next_multiple_of(16).max(32), {
                let other = self.rng.unit() < 0.1;
                if other {
                    self.rng.below(u64::from(self.params.threads.max(1))) as u32
                } else {
                    site.thread
                }
            })
        } else {
            ((requested + 8).next_multiple_of(512), site.thread)
        };
        let address = self.arenas[arena as usize].take(usable);
        let leaked = site.leak > 0.0 && self.rng.unit() < site.leak;
        if !leaked {
            let life = site.life_scale * self.rng.unit().powf(-1.0 / site.life_shape);
            let life = life.min(1e15) as u64 + 1;
            self.pending.push(Reverse(Pending {
                due: event.saturating_add(life),
                block,
                address,
                usable,
                requested,
                arena,
            }));
        }
        let thread = if arena < self.params.threads.max(1) {
            arena
        } else {
            site.thread
        };
        SynthEvent::Alloc {
            block,
            time_ns: self.time_ns,
            address,
            requested,
            usable,
            thread,
            site: s as u32 + 1,
        }
    }
}

impl Iterator for Synth {
    type Item = SynthEvent;

    fn next(&mut self) -> Option<SynthEvent> {
        if self.event >= self.params.events {
            return None;
        }
        self.advance_clock();
        let due = self
            .pending
            .peek()
            .is_some_and(|Reverse(p)| p.due <= self.event);
        let out = if due {
            let Reverse(p) = self.pending.pop()?;
            if p.usable > 1 {
                self.arenas[p.arena as usize].give(p.address, p.usable);
            }
            SynthEvent::Free {
                block: p.block,
                time_ns: self.time_ns,
                address: p.address,
                usable: p.usable,
                requested: p.requested,
            }
        } else {
            self.alloc()
        };
        self.event += 1;
        Some(out)
    }
}

/// Names of the generated call sites (site `k` is `synth_site_k`; the last one allocates the
/// isolated blocks).
pub fn site_name(site: u32, sites: u32) -> String {
    if site == sites + 1 {
        String::from("isolated_byte")
    } else {
        format!("synth_site_{site}")
    }
}

/// A trace builder holding the generated trace's threads and call sites (one node per site
/// under `main`), and the site nodes.
fn header_builder(params: &SynthParams) -> (memscape_trace::TraceBuilder, Vec<u32>, Vec<u32>) {
    use memscape_trace::Frame;
    use memscape_trace::TraceBuilder;
    let mut b = TraceBuilder::with_event_times("synth");
    let threads: Vec<u32> = (0..params.threads.max(1))
        .map(|t| b.thread(&format!("thread-{t}")))
        .collect();
    let n_sites = params.sites.max(1);
    let main_fn = b.strings.intern("main");
    let main = b.call_tree.child(
        0,
        Frame {
            ip: 0x1000,
            function: main_fn,
            ..Frame::default()
        },
    );
    let nodes: Vec<u32> = (1..=n_sites + 1)
        .map(|s| {
            let f = b.strings.intern(&site_name(s, n_sites));
            b.call_tree.child(
                main,
                Frame {
                    ip: 0x2000 + u64::from(s) * 16,
                    function: f,
                    ..Frame::default()
                },
            )
        })
        .collect();
    b.command_line = format!(
        "memscape-lod synth --events {} --seed {} --threads {} --sites {}",
        params.events, params.seed, params.threads, params.sites
    );
    (b, threads, nodes)
}

/// A generated trace as an in-memory [`memscape_trace::Trace`] (small sizes: tests).
pub fn trace(params: SynthParams) -> memscape_trace::Trace {
    use memscape_trace::TraceFormat;
    let (mut b, threads, nodes) = header_builder(&params);
    for (line, e) in Synth::new(params).enumerate() {
        let line = line as u64 + 1;
        match e {
            SynthEvent::Alloc {
                time_ns,
                address,
                requested,
                usable,
                thread,
                site,
                ..
            } => {
                let t = threads[thread as usize % threads.len()];
                let node = nodes[(site as usize - 1).min(nodes.len() - 1)];
                b.alloc(line, time_ns, address, requested, usable, t, node);
            }
            SynthEvent::Free {
                time_ns, address, ..
            } => {
                b.free(line, time_ns, address);
            }
        }
    }
    b.finish(TraceFormat::Csv, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_consistent() {
        let p = SynthParams::new(200_000, 7);
        let a: Vec<SynthEvent> = Synth::new(p).collect();
        let b: Vec<SynthEvent> = Synth::new(p).collect();
        assert_eq!(a, b);
        assert_eq!(a.len(), 200_000);
        // Live blocks never overlap: the allocator model hands out disjoint addresses.
        let mut live: HashMap<u64, (u64, u64)> = HashMap::new();
        let mut by_addr = std::collections::BTreeMap::new();
        for e in &a {
            match *e {
                SynthEvent::Alloc {
                    block,
                    address,
                    usable,
                    ..
                } => {
                    if let Some((&start, &end)) = by_addr.range(..address + usable).next_back() {
                        assert!(end <= address || start >= address + usable, "overlap");
                    }
                    by_addr.insert(address, address + usable);
                    live.insert(block, (address, usable));
                }
                SynthEvent::Free { block, address, .. } => {
                    let (a, _) = live.remove(&block).expect("freed once");
                    assert_eq!(a, address);
                    by_addr.remove(&address);
                }
            }
        }
    }

    #[test]
    fn trace_has_reuse_threads_leaks_and_isolated_bytes() {
        let t = trace(SynthParams::new(300_000, 3));
        assert_eq!(t.meta.events, 300_000);
        assert!(t.warnings.kinds().is_empty(), "{:?}", t.warnings.kinds());
        let b = &t.blocks;
        let distinct: std::collections::HashSet<u64> = b.address.iter().copied().collect();
        assert!(distinct.len() * 3 < b.len(), "addresses are reused");
        let ones = (0..b.len()).filter(|&i| b.requested_size[i] == 1).count();
        assert_eq!(ones, 16);
        assert!(t.never_freed() > 0);
        let threads: std::collections::HashSet<u32> = b.thread.iter().copied().collect();
        assert!(threads.len() >= 4);
    }
}

/// Writes a generated trace to `path` as a mappable `.msc`, streaming (memory: the live set
/// and a window of recent blocks). `progress` gets the fraction of events generated.
pub fn write_mappable(
    params: SynthParams,
    path: &std::path::Path,
    progress: &mut dyn FnMut(f64),
) -> Result<memscape_trace::TraceMeta, crate::LodError> {
    use memscape_trace::TraceFormat;
    let (b, threads, nodes) = header_builder(&params);
    let mut w = crate::msc_stream::MappableWriter::create(path, params.events)?;
    let (mut allocs, mut frees) = (0u64, 0u64);
    let (mut live, mut peak, mut peak_event, mut peak_time) = (0u64, 0u64, 0u64, 0u64);
    let mut end_time = 0u64;
    let step = (params.events / 100).max(1);
    for (event, e) in Synth::new(params).enumerate() {
        let event = event as u64;
        match e {
            SynthEvent::Alloc {
                time_ns,
                address,
                requested,
                usable,
                thread,
                site,
                ..
            } => {
                let t = threads[thread as usize % threads.len()];
                let node = nodes[(site as usize - 1).min(nodes.len() - 1)];
                w.alloc(event, time_ns, address, usable, requested, usable, t, node)?;
                allocs += 1;
                live += requested;
                if live > peak {
                    (peak, peak_event, peak_time) = (live, event, time_ns);
                }
                end_time = time_ns;
            }
            SynthEvent::Free {
                block,
                time_ns,
                requested,
                ..
            } => {
                w.free(block, event, time_ns);
                frees += 1;
                live = live.saturating_sub(requested);
                end_time = time_ns;
            }
        }
        if event.is_multiple_of(step) {
            progress(event as f64 / params.events as f64);
        }
    }
    let mut header = b.finish(TraceFormat::Msc, true);
    let m = &mut header.meta;
    m.source = path.display().to_string();
    m.has_wall_time = true;
    m.events = allocs + frees;
    m.allocs = allocs;
    m.frees = frees;
    m.end_time_ns = end_time;
    m.peak_live_bytes = peak;
    m.peak_event = peak_event;
    m.peak_time_ns = peak_time;
    m.end_live_bytes = live;
    m.page_size = 4096;
    w.finish(&header)?;
    progress(1.0);
    Ok(header.meta)
}

#[cfg(test)]
mod writer_tests {
    use super::*;

    #[test]
    fn the_streamed_mappable_file_is_the_in_memory_trace() {
        let p = SynthParams::new(120_000, 21);
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("s.msc");
        write_mappable(p, &path, &mut |_| {}).expect("write");
        let got = memscape_trace::load(&path).expect("load");
        let want = trace(p);
        assert!(
            got.warnings.kinds().is_empty(),
            "{:?}",
            got.warnings.kinds()
        );
        assert_eq!(got.blocks.len(), want.blocks.len());
        let (g, w) = (&got.blocks, &want.blocks);
        assert_eq!(&g.address[..], &w.address[..]);
        assert_eq!(&g.size[..], &w.size[..]);
        assert_eq!(&g.requested_size[..], &w.requested_size[..]);
        assert_eq!(&g.alloc_event[..], &w.alloc_event[..]);
        assert_eq!(&g.free_event[..], &w.free_event[..]);
        assert_eq!(&g.alloc_time_ns[..], &w.alloc_time_ns[..]);
        assert_eq!(&g.free_time_ns[..], &w.free_time_ns[..]);
        assert_eq!(&g.thread[..], &w.thread[..]);
        assert_eq!(&g.site[..], &w.site[..]);
        assert_eq!(&g.flags[..], &w.flags[..]);
        let (gm, wm) = (&got.meta, &want.meta);
        assert_eq!(
            (
                gm.events,
                gm.allocs,
                gm.frees,
                gm.peak_live_bytes,
                gm.peak_event,
                gm.end_live_bytes
            ),
            (
                wm.events,
                wm.allocs,
                wm.frees,
                wm.peak_live_bytes,
                wm.peak_event,
                wm.end_live_bytes
            )
        );
        assert_eq!(got.call_tree.len(), want.call_tree.len());
        assert!(
            crate::trace_source::TraceFile::open(&path)
                .expect("open")
                .is_mapped()
        );
    }
}
