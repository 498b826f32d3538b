//! Colours of the allocation map's blocks: what colours them (a setting), the categorical
//! palette, call-site colours and the legend's labels of call sites.

use std::collections::HashMap;

use memscape_render::alloc_map::ColorMode;
use memscape_trace::Trace;

/// Which attribute colours the blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum ColorBy {
    Thread,
    Site,
    Size,
    Lifetime,
    Waste,
    /// Time since allocation, seen from the time cursor (the trace's end without one).
    Age,
    /// The block's bin (its address region when the map is not binned).
    Bin,
    /// The process that allocated the block.
    Process,
    /// The call site that freed the block (grey: not freed, or no free stack recorded).
    FreeSite,
    /// Freed by another thread than the one that allocated it (red), by the same (blue), not
    /// freed or not known (grey).
    CrossThread,
}

/// Colour of blocks without the attribute a colouring shows (not freed, no stack).
pub const UNKNOWN_COLOR: [u8; 4] = [96, 98, 106, 255];
/// Blocks freed by another thread than the allocating one.
pub const CROSS_THREAD_COLOR: [u8; 4] = [0xff, 0x3b, 0x30, 255];
/// Blocks freed by the allocating thread.
pub const SAME_THREAD_COLOR: [u8; 4] = [0x3a, 0x6e, 0xa5, 255];

impl ColorBy {
    pub const ALL: [ColorBy; 10] = [
        ColorBy::Process,
        ColorBy::Thread,
        ColorBy::FreeSite,
        ColorBy::CrossThread,
        ColorBy::Site,
        ColorBy::Size,
        ColorBy::Lifetime,
        ColorBy::Age,
        ColorBy::Waste,
        ColorBy::Bin,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ColorBy::Thread => "thread",
            ColorBy::Site => "allocating call site",
            ColorBy::Size => "size (log)",
            ColorBy::Lifetime => "lifetime (log)",
            ColorBy::Waste => "waste (usable − requested)",
            ColorBy::Age => "age at the time cursor",
            ColorBy::Bin => "bin",
            ColorBy::Process => "process",
            ColorBy::FreeSite => "freeing call site",
            ColorBy::CrossThread => "freed by another thread",
        }
    }

    /// The name on the command line and in tour files.
    pub fn key(self) -> &'static str {
        match self {
            ColorBy::Thread => "thread",
            ColorBy::Site => "site",
            ColorBy::Size => "size",
            ColorBy::Lifetime => "lifetime",
            ColorBy::Waste => "waste",
            ColorBy::Age => "age",
            ColorBy::Bin => "bin",
            ColorBy::Process => "process",
            ColorBy::FreeSite => "free-site",
            ColorBy::CrossThread => "cross-thread",
        }
    }

    /// Process when several have events, else thread when there are several, otherwise the
    /// allocating call site.
    pub fn default_for(trace: &Trace) -> Self {
        if memscape_trace::process::several_with_events(trace) {
            ColorBy::Process
        } else if trace.threads.len() > 1 {
            ColorBy::Thread
        } else {
            ColorBy::Site
        }
    }

    pub fn mode(self) -> ColorMode {
        match self {
            ColorBy::Thread
            | ColorBy::Site
            | ColorBy::Bin
            | ColorBy::Process
            | ColorBy::FreeSite
            | ColorBy::CrossThread => ColorMode::Categorical,
            _ => ColorMode::Quantitative,
        }
    }
}

/// 64 categorical colours (sRGB) chosen greedily for the largest smallest CIELAB distance
/// (Glasbey's method) among colours readable on the map's near-black background: any two of the
/// first 32 differ by ΔE76 ≥ 29, any two of all 64 by ≥ 20 (a test checks it). The first eight
/// are the renderer's palette. Classes beyond 64 wrap around.
pub const PALETTE: [[u8; 3]; 64] = [
    [0x4e, 0x79, 0xa7],
    [0xf2, 0x8e, 0x2b],
    [0xe1, 0x57, 0x59],
    [0x76, 0xb7, 0xb2],
    [0x59, 0xa1, 0x4f],
    [0xed, 0xc9, 0x48],
    [0xb0, 0x7a, 0xa1],
    [0xff, 0x9d, 0xa7],
    [0x88, 0x11, 0xff],
    [0x00, 0xff, 0x00],
    [0xff, 0x00, 0xbb],
    [0x11, 0x66, 0xee],
    [0xff, 0x00, 0x00],
    [0xbb, 0xee, 0x00],
    [0x99, 0x77, 0x44],
    [0xdd, 0x88, 0xff],
    [0x00, 0xee, 0x77],
    [0x00, 0xee, 0xcc],
    [0xdd, 0xdd, 0xaa],
    [0xff, 0x00, 0x77],
    [0xaa, 0x33, 0x88],
    [0xff, 0x00, 0xff],
    [0xbb, 0xcc, 0xff],
    [0x00, 0x99, 0xff],
    [0x99, 0x33, 0xcc],
    [0x33, 0xaa, 0x00],
    [0x00, 0xcc, 0xff],
    [0xaa, 0xee, 0x77],
    [0x77, 0x66, 0xbb],
    [0x88, 0x99, 0x00],
    [0xbb, 0x33, 0x00],
    [0x44, 0x77, 0x55],
    [0xff, 0xbb, 0xff],
    [0xff, 0xbb, 0x88],
    [0xff, 0x00, 0x44],
    [0x99, 0x55, 0x55],
    [0xff, 0x77, 0xbb],
    [0x99, 0x55, 0x00],
    [0x99, 0xee, 0xaa],
    [0xff, 0x66, 0x00],
    [0x66, 0x55, 0xff],
    [0x77, 0xee, 0x33],
    [0x11, 0xaa, 0x88],
    [0xee, 0x55, 0xee],
    [0xaa, 0x88, 0x11],
    [0x00, 0xee, 0xff],
    [0x66, 0x77, 0x22],
    [0xbb, 0x33, 0x66],
    [0xcc, 0x77, 0x55],
    [0xee, 0xdd, 0x00],
    [0x00, 0x77, 0x88],
    [0xaa, 0xbb, 0x66],
    [0x00, 0x77, 0x00],
    [0xaa, 0xaa, 0xff],
    [0x00, 0xcc, 0x88],
    [0xdd, 0x00, 0x88],
    [0x99, 0x88, 0xff],
    [0xcc, 0xdd, 0x55],
    [0x88, 0xee, 0xdd],
    [0xff, 0x66, 0x44],
    [0xbb, 0x22, 0xaa],
    [0x00, 0x66, 0xbb],
    [0xff, 0xbb, 0x00],
    [0x66, 0xaa, 0xee],
];

/// Class `index` of a categorical colouring (threads, bins), sRGB with alpha 255.
pub fn categorical(index: u32) -> [u8; 4] {
    let [r, g, b] = PALETTE[index as usize % PALETTE.len()];
    [r, g, b, 255]
}

/// The palette class of each category of one trace's colouring (thread, process or bin index
/// → class): empty for the identity, as one map alone is coloured. Two maps compared side by
/// side get theirs from one [`SharedClasses`], so a category of the same name has one colour.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Classes(pub Vec<u32>);

impl Classes {
    /// Every category its own index (one map alone).
    pub fn identity() -> &'static Classes {
        static IDENTITY: Classes = Classes(Vec::new());
        &IDENTITY
    }

    /// The class of category `index`.
    pub fn of(&self, index: u32) -> u32 {
        self.0.get(index as usize).copied().unwrap_or(index)
    }

    /// The colour of category `index`.
    pub fn color(&self, index: u32) -> [u8; 4] {
        categorical(self.of(index))
    }
}

/// One assignment of palette classes to category names across several traces (the difference
/// view's two maps): the first trace's categories keep their own indices (its map looks as it
/// does alone), a later trace's category takes the class of the same name, and names the first
/// lacks get the classes after it. Repeated names (several `worker` threads) pair up in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SharedClasses {
    classes: HashMap<(String, usize), u32>,
}

impl SharedClasses {
    /// Classes for the categories named in `traces` (each trace's names by index).
    pub fn new(traces: &[Vec<String>]) -> Self {
        let mut shared = SharedClasses::default();
        for names in traces {
            for key in Self::keys(names) {
                let next = shared.classes.len() as u32;
                shared.classes.entry(key).or_insert(next);
            }
        }
        shared
    }

    /// Each name with its ordinal among the equal names before it.
    fn keys(names: &[String]) -> Vec<(String, usize)> {
        let mut seen: HashMap<&str, usize> = HashMap::new();
        names
            .iter()
            .map(|n| {
                let k = seen.entry(n.as_str()).or_default();
                *k += 1;
                (n.clone(), *k - 1)
            })
            .collect()
    }

    /// The classes of one trace's categories, `names` by index.
    pub fn classes(&self, names: &[String]) -> Classes {
        Classes(
            Self::keys(names)
                .into_iter()
                .enumerate()
                .map(|(i, key)| self.classes.get(&key).copied().unwrap_or(i as u32))
                .collect(),
        )
    }
}

/// The names of the categories whose index picks the colour of `color_by` in `trace` (threads,
/// processes by their program, bins): None where colours do not come from an index (call sites
/// are coloured by a digest of their function and line, the same in every trace; values by
/// their ramp; address regions, which no two runs share).
pub fn category_names(
    trace: &Trace,
    bins: Option<&super::bins::BinnedScene>,
    color_by: ColorBy,
) -> Option<Vec<String>> {
    match color_by {
        ColorBy::Thread => Some(
            (0..trace.threads.len() as u32)
                .map(|t| without_tid(trace.thread_name(t)).to_owned())
                .collect(),
        ),
        ColorBy::Process => Some(
            trace
                .processes
                .iter()
                .map(|p| p.name().to_owned())
                .collect(),
        ),
        ColorBy::Bin => bins
            .filter(|b| b.by != super::bins::BinBy::None)
            .map(|b| b.bins.iter().map(|b| b.label.clone()).collect()),
        _ => None,
    }
}

/// A thread's name without the id the recorder adds (`worker (4242)`, `tid 4242`), which no
/// two runs share: `worker`, `tid`.
fn without_tid(name: &str) -> &str {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(open) = name.rfind(" (")
        && name.ends_with(')')
        && digits(&name[open + 2..name.len() - 1])
    {
        return &name[..open];
    }
    match name.strip_prefix("tid ") {
        Some(tid) if digits(tid) => "tid",
        _ => name,
    }
}

/// The colour of a call site: a hash of its id into the categorical palette, so that a site keeps
/// its colour whatever else is loaded.
pub fn site_color(site: u32) -> [u8; 4] {
    categorical(site.wrapping_mul(2_654_435_761) >> 26)
}

/// Legend labels of call sites: the allocating function (unnamed frames of the C/C++ runtime
/// skipped, module directories dropped) and, where two sites would read the same, the caller at
/// the depth where this site's chain of callers stops matching any other's (up to 6 frames up);
/// labels that still coincide (stacks alike that far) are numbered.
pub fn site_labels(trace: &memscape_trace::Trace, sites: &[u32]) -> Vec<(u32, String)> {
    const UP: usize = 6;
    let short =
        |node: u32| crate::heap_tree::draw::short_name(&trace.describe_frame(node)).to_owned();
    // Each site's chain of frame names from the allocating frame outwards.
    let chains: Vec<Vec<String>> = sites
        .iter()
        .map(|&s| {
            let mut node = memscape_heap::trace_tree::allocation_site(trace, s);
            let mut chain = Vec::new();
            while node != 0 && chain.len() <= UP {
                chain.push(short(node));
                node = trace
                    .call_tree
                    .parent
                    .get(node as usize)
                    .copied()
                    .unwrap_or(0);
            }
            chain
        })
        .collect();
    let labels: Vec<(u32, String)> = sites
        .iter()
        .enumerate()
        .map(|(i, &site)| {
            let mine = &chains[i];
            let first = mine.first().cloned().unwrap_or_else(|| "?".into());
            let twins: Vec<&Vec<String>> = chains
                .iter()
                .enumerate()
                .filter(|(j, c)| *j != i && c.first() == mine.first())
                .map(|(_, c)| c)
                .collect();
            // Twins in the same function at other lines read apart by their line; others by
            // the first depth at which this chain differs from every twin.
            let line = site_line(trace, sites[i]);
            let other_lines = chains.iter().enumerate().any(|(j, c)| {
                j != i && c.first() == mine.first() && site_line(trace, sites[j]) != line
            });
            // The shortest chain of callers no twin shares: with many twins, a single depth
            // at which this chain differs from all of them at once often does not exist.
            // Twins with the very same chain cannot be told apart here (they are numbered).
            let parting = (1..mine.len()).find(|&k| {
                twins
                    .iter()
                    .filter(|t| **t != mine)
                    .all(|t| t.get(1..=k) != mine.get(1..=k))
            });
            let label = match (&line, parting) {
                (Some(line), _) if other_lines => format!("{first} ({line})"),
                (_, Some(k)) if !twins.is_empty() => format!("{first} (from {})", mine[k]),
                _ => first,
            };
            (site, label)
        })
        .collect();
    number_repeats(labels)
}

/// `label #2`, `label #3` … for the second and later sites whose labels are still the same.
fn number_repeats(labels: Vec<(u32, String)>) -> Vec<(u32, String)> {
    let mut total: HashMap<String, usize> = HashMap::new();
    for (_, l) in &labels {
        *total.entry(l.clone()).or_default() += 1;
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    labels
        .into_iter()
        .map(|(site, l)| {
            if total.get(&l).copied().unwrap_or(0) < 2 {
                return (site, l);
            }
            let n = seen.entry(l.clone()).or_default();
            *n += 1;
            let label = if *n == 1 { l } else { format!("{l} #{n}") };
            (site, label)
        })
        .collect()
}

/// `file:line` (file name without directories) of a site's allocating frame, when known.
fn site_line(trace: &memscape_trace::Trace, site: u32) -> Option<String> {
    let node = memscape_heap::trace_tree::allocation_site(trace, site);
    let text = trace.describe_frame(node);
    // "function (dir/file.c:12)"
    let inner = text.rsplit_once(" (")?.1.strip_suffix(')')?;
    let (file, line) = inner.rsplit_once(':')?;
    line.parse::<u32>().ok()?;
    let file = file.rsplit('/').next().unwrap_or(file);
    Some(format!("{file}:{line}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first run keeps its own classes; the second takes them by name, repeated names in
    /// order, and names the first lacks get classes of their own after the first's.
    #[test]
    fn shared_classes_follow_names_across_runs() {
        let names = |n: &[&str]| n.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let a = names(&["main", "worker", "worker", "io"]);
        let b = names(&["main", "io", "worker", "gc", "worker", "worker"]);
        let shared = SharedClasses::new(&[a.clone(), b.clone()]);
        assert_eq!(shared.classes(&a).0, [0, 1, 2, 3]);
        assert_eq!(shared.classes(&b).0, [0, 3, 1, 4, 2, 5]);
        assert_eq!(shared.classes(&b).color(1), categorical(3));
        assert_eq!(without_tid("worker-1 (21926)"), "worker-1");
        assert_eq!(without_tid("tid 77"), "tid");
        assert_eq!(without_tid("pool (main)"), "pool (main)");
        // Alone: the identity.
        assert_eq!(Classes::identity().of(7), 7);
    }
    use crate::test_data::demo;

    /// CIELAB of an sRGB colour (D65).
    fn lab(c: [u8; 3]) -> [f64; 3] {
        let lin = |v: u8| {
            let v = f64::from(v) / 255.0;
            if v <= 0.04045 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        let (r, g, b) = (lin(c[0]), lin(c[1]), lin(c[2]));
        let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
        let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
        let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
        let f = |t: f64| {
            if t > 0.008856 {
                t.cbrt()
            } else {
                7.787 * t + 16.0 / 116.0
            }
        };
        let (fx, fy, fz) = (f(x), f(y), f(z));
        [116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)]
    }

    fn delta_e(a: [u8; 3], b: [u8; 3]) -> f64 {
        let (a, b) = (lab(a), lab(b));
        ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
    }

    #[test]
    fn categorical_palette_stays_distinguishable_with_dozens_of_classes() {
        let min_among = |n: usize| {
            let mut m = f64::INFINITY;
            for (i, &a) in PALETTE.iter().enumerate().take(n) {
                for &b in &PALETTE[..i] {
                    m = m.min(delta_e(a, b));
                }
            }
            m
        };
        assert!(min_among(32) >= 29.0, "32 classes: ΔE {}", min_among(32));
        assert!(min_among(64) >= 20.0, "64 classes: ΔE {}", min_among(64));
        // Every colour reads on the map's background and differs from the highlight's dim grey.
        for c in PALETTE {
            assert!(delta_e(c, [3, 4, 5]) > 40.0, "{c:?} vs background");
            assert!(delta_e(c, [70, 72, 80]) > 20.0, "{c:?} vs dim grey");
        }
        // Sites hash over the whole palette.
        let used: std::collections::HashSet<[u8; 4]> = (0..2000).map(site_color).collect();
        assert!(used.len() > 48, "{} site colours", used.len());
    }

    #[test]
    fn legend_labels_of_look_alike_sites_differ() {
        // The demo allocates in cache_insert and audit_log at two lines each.
        let d = demo();
        let t = d.alloc_trace().unwrap();
        let labels = &t.scene.as_ref().unwrap().top_sites;
        assert!(labels.len() >= 6, "{labels:?}");
        let mut seen = std::collections::HashSet::new();
        for (_, label) in labels {
            assert!(seen.insert(label.clone()), "{label} twice in {labels:?}");
        }
        assert!(
            labels
                .iter()
                .any(|(_, l)| l == "cache_insert (kvstore.c:84)"),
            "{labels:?}"
        );
    }

    /// Sites that all allocate in one wrapper and whose callers agree at different depths
    /// (x←p, x←q, y←p; as sqlite3's allocations through sqlite3MemMalloc): no single depth
    /// tells every pair apart, the shortest unshared chain does; identical chains are numbered.
    #[test]
    fn legend_labels_part_where_each_chain_becomes_unique() {
        use memscape_trace::model::Frame;
        let mut b = memscape_trace::TraceBuilder::with_event_times("twins");
        let thread = b.thread("main");
        let frame = |b: &mut memscape_trace::TraceBuilder, parent: u32, name: &str, ip| {
            let function = b.strings.intern(name);
            b.call_tree.child(
                parent,
                Frame {
                    ip,
                    function,
                    ..Frame::default()
                },
            )
        };
        // Stacks from the outermost caller in: main → p|q → x|y → wrapper.
        let main = frame(&mut b, 0, "main", 1);
        let p = frame(&mut b, main, "p", 2);
        let q = frame(&mut b, main, "q", 3);
        let xp = frame(&mut b, p, "x", 4);
        let xq = frame(&mut b, q, "x", 5);
        let yp = frame(&mut b, p, "y", 6);
        let w1 = frame(&mut b, xp, "wrapper", 7);
        let w2 = frame(&mut b, xq, "wrapper", 8);
        let w3 = frame(&mut b, yp, "wrapper", 9);
        // Two distinct nodes with the same chain (a different ip inside x).
        let xp2 = frame(&mut b, p, "x", 10);
        let w4 = frame(&mut b, xp2, "wrapper", 11);
        let sites = [w1, w2, w3, w4];
        for (i, &site) in sites.iter().enumerate() {
            b.alloc(
                i as u64,
                i as u64,
                0x1000 + 64 * i as u64,
                32,
                0,
                thread,
                site,
            );
        }
        let trace = b.finish(memscape_trace::TraceFormat::Csv, true);
        let labels: Vec<String> = site_labels(&trace, &sites)
            .into_iter()
            .map(|(_, l)| l)
            .collect();
        assert_eq!(
            labels,
            [
                "wrapper (from p)",
                "wrapper (from q)",
                "wrapper (from y)",
                "wrapper (from p) #2"
            ]
        );
    }
}
