//! `memscape info` and `memscape convert` as library functions.

use std::fmt;
use std::path::Path;

use memscape_io::WarningKind;

use crate::bins::{BinBy, Bins, SizeClasses};
use crate::model::Trace;
use crate::regions::{DEFAULT_GAP_THRESHOLD, Region, find_regions};
use crate::sites::{DetectedWrapper, LineKey, SiteOptions, Sites};
use crate::{LoadError, load_with_progress, msc};

/// What `info` computes beyond the counts.
#[derive(Debug, Clone)]
pub struct InfoOptions {
    pub gap_threshold: u64,
    pub bins: BinBy,
    pub top_call_sites: usize,
    /// Rows of the allocation site × free site table.
    pub site_pairs: usize,
    /// Points per pool / bin curve.
    pub curve_samples: usize,
    /// How call sites see through allocation wrappers.
    pub sites: SiteOptions,
}

impl Default for InfoOptions {
    fn default() -> Self {
        Self {
            gap_threshold: DEFAULT_GAP_THRESHOLD,
            bins: BinBy::SizeClass(SizeClasses::PowerOfTwo),
            top_call_sites: 10,
            site_pairs: 20,
            curve_samples: 64,
            sites: SiteOptions::default(),
        }
    }
}

/// A call site's share of the peak.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CallSiteReport {
    /// Node in the call-stack tree: the effective site (the first frame outside allocation
    /// wrappers, [`crate::sites`]).
    pub site: u32,
    /// [`LineKey::digest`] of the site: what the allocation map colours blocks by.
    pub key: u32,
    /// Bytes of its blocks live at the peak.
    pub peak_bytes: u64,
    pub peak_blocks: u64,
    /// The site, symbolized when possible, and the wrapper it called (`lookup_name (f.c:42) ←
    /// xmalloc`).
    pub location: String,
    /// The wrappers its blocks came through, innermost first (of its largest stack).
    pub wrappers: Vec<String>,
    /// Frames from the site outwards (at most 16).
    pub stack: Vec<String>,
}

/// A bin in the report.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BinReport {
    pub label: String,
    pub blocks: u64,
    /// Requested bytes of all its blocks.
    pub bytes_allocated: u64,
    /// The most requested bytes of its blocks live at once (as `peak_live_bytes` counts).
    pub peak_bytes: u64,
}

/// The result of `memscape info`; field names are the JSON keys.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct InfoReport {
    pub format: &'static str,
    pub source: String,
    pub command_line: String,
    pub has_addresses: bool,
    pub events: u64,
    /// Allocations, counted as valgrind memcheck counts them (a realloc of a live block is one
    /// alloc and one free).
    pub allocs: u64,
    pub frees: u64,
    pub reallocs: u64,
    pub blocks: u64,
    pub unknown_frees: u64,
    /// Frees in forked children of blocks inherited from the parent (every process's sum).
    pub inherited_frees: u64,
    pub double_frees: u64,
    /// Total number of warnings of all kinds.
    pub warnings: u64,
    pub warning_kinds: Vec<WarningKind>,
    pub time_span_ns: u64,
    /// Heap blocks only (malloc and friends, pools): anonymous mappings are counted apart.
    pub peak_live_bytes: u64,
    pub peak_time_ns: u64,
    pub peak_event: u64,
    pub end_live_bytes: u64,
    pub never_freed: u64,
    /// Anonymous mappings recorded (`mmap` outside the allocator's own), and the most bytes
    /// of them mapped at once: a program that manages its memory in mappings (CPython's
    /// arenas, Go, JVMs) has most of its memory there, not in the heap figures.
    pub mmaps: u64,
    pub mapped_peak_bytes: u64,
    pub regions: Vec<Region>,
    pub bins: Vec<BinReport>,
    pub top_call_sites: Vec<CallSiteReport>,
    /// Every process image (one for single-process inputs).
    pub processes: Vec<crate::summary::ProcessInfo>,
    /// Allocation site × free site (recordings with free sites), largest bytes first.
    pub free_sites: Vec<crate::summary::SitePair>,
    /// Frees from another thread than the allocating one, per thread pair.
    pub cross_thread_frees: Vec<crate::summary::ThreadPair>,
    /// Pools a custom allocator declared (`memscape.h`): occupancy, waste and external
    /// fragmentation over time.
    pub pools: Vec<crate::pools::PoolReport>,
    /// The same curves for the bins above (span: the addresses each bin's blocks cover).
    pub bin_curves: Vec<crate::pools::GroupCurves>,
    /// Allocation wrappers detected in this trace (most bytes, many callers).
    pub detected_wrappers: Vec<DetectedWrapper>,
}

/// Computes the report of a loaded trace.
pub fn info(trace: &Trace, options: &InfoOptions) -> InfoReport {
    // The columns the report reads (not the times, usable sizes or threads), decoded together
    // when the trace came lazily from an `.msc` file.
    use crate::model::BlockColumn as C;
    let mut columns = vec![
        C::Address,
        C::Size,
        C::RequestedSize,
        C::AllocEvent,
        C::FreeEvent,
        C::Flags,
        C::Site,
        C::FreeSite,
        C::UsableSize,
        C::Pool,
    ];
    if matches!(options.bins, BinBy::Thread) {
        columns.push(C::Thread);
    }
    trace.blocks.prefetch(&columns);
    let regions = find_regions(trace, options.gap_threshold).regions;
    let binned = Bins::new(trace, options.bins.clone());
    let bin_curves = crate::pools::bin_curves(trace, &binned, options.curve_samples);
    let bins = binned
        .bins
        .into_iter()
        .map(|b| BinReport {
            label: b.label,
            blocks: b.blocks,
            bytes_allocated: b.bytes_allocated,
            peak_bytes: b.peak_bytes,
        })
        .collect();
    let sites = Sites::new(trace, &options.sites);
    let m = &trace.meta;
    InfoReport {
        format: m.format.name(),
        source: m.source.clone(),
        command_line: m.command_line.clone(),
        has_addresses: m.has_addresses,
        events: m.events,
        allocs: m.allocs,
        frees: m.frees,
        reallocs: m.reallocs,
        blocks: trace.blocks.len() as u64,
        unknown_frees: m.unknown_frees,
        inherited_frees: m.inherited_frees,
        double_frees: m.double_frees,
        warnings: trace.warnings.total(),
        warning_kinds: trace.warnings.kinds().to_vec(),
        time_span_ns: m.end_time_ns,
        peak_live_bytes: m.peak_live_bytes,
        peak_time_ns: m.peak_time_ns,
        peak_event: m.peak_event,
        end_live_bytes: m.end_live_bytes,
        never_freed: trace.never_freed(),
        mmaps: m.mmaps,
        mapped_peak_bytes: mapped_peak_bytes(trace),
        regions,
        bins,
        processes: crate::summary::processes(trace),
        free_sites: crate::summary::site_pairs_with(trace, &sites, options.site_pairs),
        cross_thread_frees: crate::summary::cross_thread_frees(trace),
        pools: crate::pools::pool_reports(trace, options.curve_samples),
        bin_curves,
        top_call_sites: top_call_sites_with(trace, &sites, options.top_call_sites),
        detected_wrappers: sites.detected().to_vec(),
    }
}

/// The most bytes of anonymous mappings live at once, in event order.
fn mapped_peak_bytes(trace: &Trace) -> u64 {
    if trace.meta.mmaps == 0 {
        return 0;
    }
    let flags = trace.blocks.flags.as_slice();
    let group: Vec<u32> = flags
        .iter()
        .map(|&f| u32::from(f & crate::model::FLAG_MMAP == 0))
        .collect();
    crate::regions::peak_per_group(trace, &group, 1)
        .first()
        .copied()
        .unwrap_or(0)
}

/// Call sites ranked by the bytes of their blocks live at the peak (what heaptrack_print calls
/// "peak contributions"), past allocation wrappers (default [`SiteOptions`]), one per
/// [`LineKey`] (function, line and the wrapper it called) whatever the stacks above it.
pub fn top_call_sites(trace: &Trace, limit: usize) -> Vec<CallSiteReport> {
    top_call_sites_with(trace, &Sites::new(trace, &SiteOptions::default()), limit)
}

/// [`top_call_sites`] with resolved sites.
pub fn top_call_sites_with(trace: &Trace, sites: &Sites, limit: usize) -> Vec<CallSiteReport> {
    if trace.meta.peak_live_bytes == 0 || limit == 0 {
        return Vec::new();
    }
    let b = &trace.blocks;
    let peak = trace.meta.peak_event;
    // Bytes and blocks per raw stack, then per site at line granularity (as the heap tree's
    // `line` key groups), each shown through its largest stack.
    let mut by_raw: std::collections::HashMap<u32, (u64, u64)> = std::collections::HashMap::new();
    let (alloc, free) = (b.alloc_event.as_slice(), b.free_event.as_slice());
    let (site, requested) = (b.site.as_slice(), b.requested_size.as_slice());
    let flags = b.flags.as_slice();
    for i in 0..b.len() {
        // Heap blocks only, as the peak counts them (not anonymous mappings).
        if alloc[i] <= peak && free[i] > peak && flags[i] & crate::model::FLAG_MMAP == 0 {
            let e = by_raw.entry(site[i]).or_default();
            e.0 = e.0.saturating_add(requested[i]);
            e.1 += 1;
        }
    }
    let mut by_line: std::collections::HashMap<LineKey, (u64, u64, u64, u32)> =
        std::collections::HashMap::new();
    for (&raw, &(bytes, blocks)) in &by_raw {
        let e = by_line
            .entry(sites.line_key(trace, raw))
            .or_insert((0, 0, 0, raw));
        e.0 = e.0.saturating_add(bytes);
        e.1 += blocks;
        if (bytes, std::cmp::Reverse(raw)) > (e.2, std::cmp::Reverse(e.3)) {
            e.2 = bytes;
            e.3 = raw;
        }
    }
    let mut ranked: Vec<(u64, u64, u32, LineKey)> = by_line
        .into_iter()
        .map(|(key, (bytes, blocks, _, raw))| (bytes, blocks, raw, key))
        .collect();
    ranked.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.3.cmp(&b.3)));
    ranked.truncate(limit);
    ranked
        .into_iter()
        .map(|(peak_bytes, peak_blocks, raw, key)| {
            let site = sites.site(raw);
            CallSiteReport {
                site,
                key: key.digest(),
                peak_bytes,
                peak_blocks,
                location: sites.label(trace, raw),
                wrappers: sites
                    .wrappers(trace, raw)
                    .into_iter()
                    .map(|n| crate::sites::short_function(trace, n))
                    .collect(),
                stack: trace
                    .call_tree
                    .stack(site)
                    .into_iter()
                    .take(16)
                    .map(|n| trace.describe_frame(n))
                    .collect(),
            }
        })
        .collect()
}

fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    // The unit is chosen on the value as printed (two decimals): 1,048,575 B is "1.00 MiB",
    // not "1024.00 KiB".
    while (v * 100.0).round() / 100.0 >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.2} {} ({n} B)", UNITS[u])
    }
}

/// A duration in the unit that shows it: a span of 0.4 ms read "0.000 s".
fn duration(ns: u64) -> String {
    let ns_f = ns as f64;
    match ns {
        1_000_000_000.. => format!("{:.3} s", ns_f / 1e9),
        1_000_000.. => format!("{:.3} ms", ns_f / 1e6),
        1_000.. => format!("{:.3} µs", ns_f / 1e3),
        _ => format!("{ns} ns"),
    }
}

impl fmt::Display for InfoReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "file:            {}", self.source)?;
        writeln!(f, "format:          {}", self.format)?;
        if !self.command_line.is_empty() {
            writeln!(
                f,
                "command line:    {}",
                crate::process::one_line(&self.command_line)
            )?;
        }
        if !self.has_addresses {
            writeln!(f, "addresses:       none in this format (no address axis)")?;
        }
        writeln!(f, "events:          {}", self.events)?;
        writeln!(f, "allocs:          {}", self.allocs)?;
        writeln!(f, "frees:           {}", self.frees)?;
        writeln!(f, "reallocs:        {}", self.reallocs)?;
        writeln!(f, "blocks:          {}", self.blocks)?;
        writeln!(f, "unknown frees:   {}", self.unknown_frees)?;
        if self.inherited_frees > 0 {
            writeln!(
                f,
                "inherited frees: {} (forked children freeing their copy of the parent's blocks)",
                self.inherited_frees
            )?;
        }
        writeln!(f, "double frees:    {}", self.double_frees)?;
        writeln!(f, "warnings:        {}", self.warnings)?;
        for k in &self.warning_kinds {
            let places: Vec<String> = k.first.iter().map(ToString::to_string).collect();
            writeln!(
                f,
                "  {} × {} (first at {})",
                k.count,
                k.message,
                places.join(", ")
            )?;
        }
        writeln!(f, "time span:       {}", duration(self.time_span_ns))?;
        writeln!(
            f,
            "peak live:       {} at {} (event {})",
            bytes(self.peak_live_bytes),
            duration(self.peak_time_ns),
            self.peak_event
        )?;
        writeln!(f, "live at end:     {}", bytes(self.end_live_bytes))?;
        if self.mmaps > 0 {
            let plural = if self.mmaps == 1 { "" } else { "s" };
            writeln!(
                f,
                "mappings:        {} anonymous mapping{plural}, at most {} mapped at once (not in the heap figures above)",
                self.mmaps,
                bytes(self.mapped_peak_bytes)
            )?;
        }
        let plural = if self.never_freed == 1 { "" } else { "s" };
        writeln!(f, "never freed:     {} block{plural}", self.never_freed)?;
        let with_events = self.processes.iter().filter(|p| p.events > 0).count();
        if with_events > 1 {
            // Regions are found on one address axis: processes' address spaces overlap there
            // (a forked child's heap lies where its parent's did).
            writeln!(
                f,
                "regions:         {} (the addresses of {with_events} processes on one axis; --process PID for one process's)",
                self.regions.len()
            )?;
        } else {
            writeln!(f, "regions:         {}", self.regions.len())?;
        }
        for r in self.regions.iter().take(20) {
            writeln!(
                f,
                "  {:#018x}–{:#018x}  {:>10} blocks  peak {}",
                r.start,
                r.end,
                r.blocks,
                bytes(r.peak_bytes)
            )?;
        }
        if self.regions.len() > 20 {
            writeln!(f, "  … {} more", self.regions.len() - 20)?;
        }
        writeln!(f, "bins:            {}", self.bins.len())?;
        for b in &self.bins {
            writeln!(
                f,
                "  {:<28} {:>10} blocks  peak {}",
                b.label,
                b.blocks,
                bytes(b.peak_bytes)
            )?;
        }
        for w in &self.detected_wrappers {
            writeln!(
                f,
                "allocation wrapper detected: {} ({:.0} % of heap bytes, {} callers)",
                w.frames
                    .iter()
                    .rev()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join(" ← "),
                w.share * 100.0,
                w.callers
            )?;
        }
        writeln!(f, "top call sites by bytes live at the peak:")?;
        // Columns as wide as their widest entry: "586.80 KiB (600880 B)" above "504 B".
        let sizes: Vec<String> = self
            .top_call_sites
            .iter()
            .map(|s| bytes(s.peak_bytes))
            .collect();
        let size_width = sizes.iter().map(|t| t.chars().count()).max().unwrap_or(0);
        let count_width = self
            .top_call_sites
            .iter()
            .map(|s| s.peak_blocks.to_string().len())
            .max()
            .unwrap_or(0);
        for (s, size) in self.top_call_sites.iter().zip(&sizes) {
            let plural = if s.peak_blocks == 1 { " " } else { "s" };
            writeln!(
                f,
                "  {size:>size_width$}  {:>count_width$} block{plural}  {}",
                s.peak_blocks, s.location
            )?;
        }
        self.fmt_processes_and_frees(f)
    }
}

impl InfoReport {
    fn fmt_processes_and_frees(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.processes.len() > 1 || self.processes.iter().any(|p| p.pid != 0) {
            writeln!(f, "processes:       {}", self.processes.len())?;
            for p in &self.processes {
                writeln!(
                    f,
                    "  pid {:>7} ← {:<7} {:>9} events {:>9} allocs {:>9} frees  peak {:<24} {:<10} {}",
                    p.pid,
                    p.parent_pid,
                    p.events,
                    p.allocs,
                    p.frees,
                    bytes(p.peak_live_bytes),
                    p.end.to_string(),
                    crate::process::one_line(&p.command_line)
                )?;
            }
        }
        if !self.free_sites.is_empty() {
            writeln!(f, "allocation site → free site (largest bytes first):")?;
            for s in &self.free_sites {
                writeln!(
                    f,
                    "  {:>12}  {:>8} blocks  median life {}  {} → {}",
                    bytes(s.bytes),
                    s.blocks,
                    duration(s.median_lifetime_ns),
                    s.alloc_location,
                    s.free_location
                )?;
            }
        }
        if !self.pools.is_empty() {
            writeln!(f, "pools:           {}", self.pools.len())?;
            for p in &self.pools {
                let c = &p.curves;
                writeln!(
                    f,
                    "  {:<20} pid {:<7} {:>9} blocks of {:>6} B  peak occupancy {:>5.1} %  peak waste {}  peak fragmentation {:.2}",
                    p.name,
                    p.pid,
                    c.blocks,
                    p.block_size,
                    100.0 * c.peak_occupancy,
                    bytes(c.peak_waste_bytes),
                    c.peak_fragmentation
                )?;
            }
        }
        if !self.cross_thread_frees.is_empty() {
            writeln!(f, "frees by another thread than the allocating one:")?;
            for t in &self.cross_thread_frees {
                writeln!(
                    f,
                    "  {:>9} frees  {:>12}  {} → {}",
                    t.frees,
                    bytes(t.bytes),
                    t.alloc_thread_name,
                    t.free_thread_name
                )?;
            }
        }
        Ok(())
    }
}

/// Stages of [`convert`], reported with the stage's progress (0..=1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConvertStage {
    Reading,
    Writing,
}

/// What [`convert`] did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ConvertReport {
    pub input: String,
    pub output: String,
    pub input_format: &'static str,
    pub blocks: u64,
    pub events: u64,
    pub warnings: u64,
    pub output_bytes: u64,
}

/// Converts any supported trace to `.msc`, reporting progress (for the CLI's progress bar).
pub fn convert(
    input: &Path,
    output: &Path,
    progress: impl FnMut(ConvertStage, f32) + 'static,
) -> Result<ConvertReport, LoadError> {
    convert_with(input, output, &msc::MscOptions::default(), progress)
}

/// [`convert`] with `.msc` writer options (e.g. a time resolution).
pub fn convert_with(
    input: &Path,
    output: &Path,
    options: &msc::MscOptions,
    progress: impl FnMut(ConvertStage, f32) + 'static,
) -> Result<ConvertReport, LoadError> {
    let progress = std::rc::Rc::new(std::cell::RefCell::new(progress));
    let reading = std::rc::Rc::clone(&progress);
    let trace = load_with_progress(
        input,
        Box::new(move |p| (reading.borrow_mut())(ConvertStage::Reading, p)),
    )?;
    let bytes = msc::to_msc_bytes_with(&trace, options, &mut |p| {
        (progress.borrow_mut())(ConvertStage::Writing, p)
    })
    .map_err(|source| LoadError::Io {
        path: output.display().to_string(),
        source,
    })?;
    crate::write_synced(output, &bytes).map_err(|source| LoadError::Io {
        path: output.display().to_string(),
        source,
    })?;
    Ok(ConvertReport {
        input: input.display().to_string(),
        output: output.display().to_string(),
        input_format: trace.meta.format.name(),
        blocks: trace.blocks.len() as u64,
        events: trace.meta.events,
        warnings: trace.warnings.total(),
        output_bytes: bytes.len() as u64,
    })
}

#[cfg(test)]
mod bytes_tests {
    use super::bytes;

    #[test]
    fn a_size_that_rounds_up_to_the_next_unit_is_written_in_it() {
        assert_eq!(bytes(1_048_575), "1.00 MiB (1048575 B)");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(1536), "1.50 KiB (1536 B)");
    }
}

#[cfg(test)]
mod duration_tests {
    use super::duration;

    #[test]
    fn durations_are_written_in_the_unit_that_shows_them() {
        assert_eq!(duration(0), "0 ns");
        assert_eq!(duration(999), "999 ns");
        assert_eq!(duration(412_345), "412.345 µs");
        assert_eq!(duration(3_141_592), "3.142 ms");
        assert_eq!(duration(3_141_592_653), "3.142 s");
    }
}

#[cfg(test)]
mod mapping_tests {
    use super::{InfoOptions, info};
    use crate::builder::TraceBuilder;
    use crate::model::{TraceFormat, USABLE_UNKNOWN};

    /// Mappings are reported apart from the heap, with the most of them mapped at once: a
    /// program whose memory lives in mappings (CPython's arenas) must not read as small.
    #[test]
    fn mappings_are_reported_beside_the_heap_with_their_own_peak() {
        let mut b = TraceBuilder::with_event_times("t");
        b.alloc(1, 10, 0x1000, 100, USABLE_UNKNOWN, 0, 0);
        b.mmap(2, 11, 0x10_0000, 1 << 20, 0, 0);
        b.mmap(3, 12, 0x20_0000, 1 << 20, 0, 0);
        b.munmap(4, 13, 0x10_0000, 1 << 20);
        b.mmap(5, 14, 0x30_0000, 1 << 20, 0, 0);
        b.free(6, 15, 0x1000);
        let trace = b.finish(TraceFormat::Csv, true);
        let report = info(&trace, &InfoOptions::default());
        assert_eq!(report.peak_live_bytes, 100);
        assert_eq!(report.mmaps, 3);
        assert_eq!(report.mapped_peak_bytes, 2 << 20);
        let text = report.to_string();
        assert!(
            text.contains("mappings:        3 anonymous mappings, at most 2.00 MiB"),
            "{text}"
        );
    }

    /// A bin's peak counts what its blocks asked for, as the heap's peak and the bin's bytes
    /// do, not the allocator's rounding (1-byte requests of 24 usable bytes each).
    #[test]
    fn bin_peaks_count_requested_bytes() {
        let mut b = TraceBuilder::with_event_times("t");
        for i in 0..4u64 {
            b.alloc(i + 1, 10 + i, 0x1000 + 32 * i, 1, 24, 0, 0);
        }
        let trace = b.finish(TraceFormat::Csv, true);
        let report = info(&trace, &InfoOptions::default());
        let one = report.bins.iter().find(|b| b.label == "1 B").unwrap();
        assert_eq!((one.blocks, one.bytes_allocated, one.peak_bytes), (4, 4, 4));
        assert_eq!(report.peak_live_bytes, 4);
    }
}
