//! Allocation sites that name the caller, not the wrapper.
//!
//! The innermost frame of an allocation is rarely what a user means by "who allocated this":
//! it is `operator new`, `std::vector::_M_realloc_insert`, `xmalloc`, `g_malloc`,
//! `PyMem_Malloc`, `alloc::raw_vec::finish_grow` or a project's own allocation wrapper. The
//! **effective site** of a call-stack node is the first frame, walking outwards from the
//! allocation, that is not a wrapper; the wrappers passed on the way stay known, so that a view
//! can say `lookup_name ← xmalloc`.
//!
//! A frame is a wrapper when
//! * its function matches the built-in list ([`BUILTIN_WRAPPERS`]: the C allocator and string
//!   duplication, `operator new`, the C++ standard library's own frames whether in libstdc++ or
//!   instantiated in the program, the xmalloc family, GLib, CPython, Rust's `alloc`, jemalloc,
//!   mimalloc, tcmalloc, and libraries' own allocators such as OpenSSL's `CRYPTO_malloc` or
//!   SQLite's `sqlite3Malloc`), or it lies in the C++ runtime's libraries;
//! * it is an unnamed frame of the C runtime or the recorder (allocator plumbing);
//! * the user named it (`--wrapper REGEX`, matched against the demangled function name, or
//!   `module+0xoffset` for an unnamed frame);
//! * it is **detected**: most bytes of the trace pass through it (directly, or through a chain
//!   of frames of its module that each have a single caller), and from many distinct callers
//!   ([`detect`] explains the rule). A stripped library's own allocator (sqlite's
//!   `sqlite3MemMalloc`, unnamed) is found this way.
//!
//! When every frame of a stack is a wrapper, the site is the innermost named frame.

use std::collections::HashMap;
use std::sync::OnceLock;

use regex::{Regex, RegexSet};

use crate::model::{FLAG_MMAP, Trace};

/// The built-in wrapper patterns: (what they cover, regex on the qualified function name, i.e.
/// without return type and parameters).
pub const BUILTIN_WRAPPERS: &[(&str, &str)] = &[
    (
        "C allocator",
        r"^(__libc_|__GI___libc_|__GI_)?(malloc|calloc|realloc|reallocarray|free|aligned_alloc|memalign|posix_memalign|valloc|pvalloc|_int_malloc|_int_realloc|_int_memalign|_mid_memalign|sysmalloc|tcache_init|malloc_hook_ini|realloc_hook_ini)$",
    ),
    (
        "C string duplication",
        r"^(__GI_)?(__)?(strdup|strndup|wcsdup|asprintf|vasprintf|__vasprintf_internal)$",
    ),
    ("C++ operator new", r"^operator new"),
    (
        "C++ standard library",
        r"^(std::|__gnu_cxx::|__cxxabiv1::|__cxa_allocate_(dependent_)?exception$)",
    ),
    (
        "xmalloc family",
        r"^(xmalloc|xcalloc|xrealloc|xreallocarray|xstrdup|xstrndup|xmemdup|xmemdup0|xzalloc|xnmalloc|xnrealloc|x2realloc|x2nrealloc|xcharalloc|ximalloc|xizalloc|xicalloc|xirealloc|xireallocarray|ximemdup|ximemdup0|xasprintf|xvasprintf|emalloc|ecalloc|erealloc|estrdup|_obstack_newchunk|_obstack_begin|_obstack_begin_1)$",
    ),
    (
        "GLib",
        r"^g_(malloc|malloc0|realloc|try_malloc|try_malloc0|try_realloc|malloc_n|malloc0_n|realloc_n|try_malloc_n|try_malloc0_n|try_realloc_n|memdup|memdup2|strdup|strndup|strdupv|strdup_printf|strdup_vprintf|strconcat|strjoin|strjoinv|strsplit|slice_alloc|slice_alloc0|slice_copy|aligned_alloc|aligned_alloc0)$|^g_(string|array|ptr_array|byte_array|hash_table|slist|list|queue|slice)_",
    ),
    (
        "CPython allocators",
        r"^(_?PyMem_|_?PyObject_(Malloc|Calloc|Realloc|New|NewVar|Init|InitVar|GC_New|GC_NewVar|GC_Resize|GC_Malloc|GC_Calloc|MallocWithType)|_PyObject_GC_|pymalloc_|PyType_GenericAlloc$|_PyType_AllocNoTrack$|gc_alloc$)",
    ),
    (
        "Rust allocation",
        r"^(__rust_(alloc|alloc_zeroed|realloc)$|__rdl_(alloc|alloc_zeroed|realloc)$|__rg_(alloc|alloc_zeroed|realloc)$|alloc::|<alloc::|hashbrown::|<hashbrown::)",
    ),
    (
        "libraries' own allocators: OpenSSL, SQLite, Redis, Lua, APR, nginx, Ruby, Tcl, FFmpeg, PHP",
        r"^(CRYPTO_(malloc|zalloc|realloc|clear_realloc|aligned_alloc|strdup|strndup|memdup|secure_malloc|secure_zalloc)|sqlite3(_malloc|_malloc64|_realloc|_realloc64|Malloc|MallocZero|Realloc|MemMalloc|MemRealloc|DbMallocRaw|DbMallocRawNN|DbMallocZero|DbRealloc|DbReallocOrFree|DbStrDup|DbStrNDup|DbSpanDup)|z(malloc|calloc|realloc|strdup|trymalloc|trycalloc|tryrealloc)(_usable)?|luaM_(malloc_|realloc_|growaux_|shrinkvector_)|l_alloc|apr_(palloc|pcalloc|pstrdup|pstrndup|pmemdup)|ngx_(alloc|calloc|palloc|pnalloc|pcalloc|pmemalign)|ruby_x(malloc|malloc2|calloc|realloc|realloc2)|objspace_x(malloc|calloc|realloc)0?|Tcl_(Alloc|AttemptAlloc|Realloc|AttemptRealloc)|TclpAlloc|TclpRealloc|av_(malloc|mallocz|calloc|realloc|realloc_f|fast_realloc|strdup|memdup)|_e(malloc|calloc|realloc|strdup|strndup)|_safe_emalloc|__zend_malloc)$",
    ),
    (
        "memscape.h pool reports",
        r"^memscape_(pool_allocated|pool_freed|declare_pool|shim_pool_(declare|alloc|free))$",
    ),
    (
        "jemalloc, mimalloc, tcmalloc",
        r"^(je_|__je_|mi_|_mi_|tc_|tcmalloc::|TCMalloc|(do_)?(mallocx|rallocx|xallocx|nallocx|sdallocx)$)",
    ),
];

/// Modules whose every frame is the C++ runtime or a malloc replacement (wrappers, named or not).
const WRAPPER_MODULES: [&str; 8] = [
    "libstdc++.so",
    "libc++.so",
    "libc++abi.so",
    "libjemalloc.so",
    "libmimalloc.so",
    "libtcmalloc",
    "libmemscape_recorder",
    "libheaptrack",
];

/// Modules whose unnamed frames are allocator plumbing (named ones, `fopen`, `pthread_create`,
/// say what allocated and stay sites unless a pattern names them).
const PLUMBING_MODULES: [&str; 3] = ["libc.so", "ld-linux", "libc.musl"];

/// Detection: a frame (or a single-caller chain of frames of one module) is a wrapper when at
/// least this share of all heap bytes passes through it…
pub const DETECT_MIN_SHARE: f64 = 0.5;
/// …from at least this many distinct callers, each bringing at least [`DETECT_CALLER_SHARE`]
/// of its bytes.
pub const DETECT_MIN_CALLERS: usize = 4;
pub const DETECT_CALLER_SHARE: f64 = 0.01;
/// A caller carrying this share of a frame's bytes makes it a single-caller link of a chain.
const CHAIN_SHARE: f64 = 0.9;
const DETECT_ROUNDS: usize = 6;
const CHAIN_LIMIT: usize = 8;

/// How call sites are chosen.
#[derive(Debug, Clone)]
pub struct SiteOptions {
    /// Skip the built-in wrappers and allocator plumbing.
    pub builtin: bool,
    /// The user's patterns (`--wrapper REGEX`).
    pub user: Vec<Regex>,
    /// Detect wrappers from the trace.
    pub detect: bool,
}

impl Default for SiteOptions {
    fn default() -> Self {
        Self {
            builtin: true,
            user: Vec::new(),
            detect: true,
        }
    }
}

impl PartialEq for SiteOptions {
    fn eq(&self, other: &Self) -> bool {
        self.builtin == other.builtin
            && self.detect == other.detect
            && self.user.len() == other.user.len()
            && self
                .user
                .iter()
                .zip(&other.user)
                .all(|(a, b)| a.as_str() == b.as_str())
    }
}

impl SiteOptions {
    /// The defaults plus the user's patterns (`--wrapper`), compiled.
    pub fn with_patterns<S: AsRef<str>>(patterns: &[S]) -> Result<Self, regex::Error> {
        Ok(Self {
            user: patterns
                .iter()
                .map(|p| Regex::new(p.as_ref()))
                .collect::<Result<_, _>>()?,
            ..Self::default()
        })
    }

    /// The innermost frame is the site (no wrapper skipped).
    pub fn innermost() -> Self {
        Self {
            builtin: false,
            user: Vec::new(),
            detect: false,
        }
    }
}

/// Why a frame is a wrapper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WrapperKind {
    /// Not a wrapper.
    None,
    /// An unnamed frame of the C runtime or the recorder: never shown in a chain.
    Plumbing,
    Builtin,
    User,
    Detected,
}

/// A call site at line granularity ([`Sites::line_key`]): blocks with equal keys are one site
/// in `info`, the heap tree's `line` key and the allocation map's colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct LineKey {
    /// [`frame_identity`] of the site.
    pub frame: u64,
    /// String ids of the file and the line (0 when unknown).
    pub file: u32,
    pub line: u32,
    /// [`frame_identity`] of the wrapper the site called (0: none).
    pub wrapper: u64,
}

impl LineKey {
    /// A 32-bit digest (a colour key that does not depend on the order sites are met in).
    pub fn digest(&self) -> u32 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for v in [
            self.frame,
            u64::from(self.file),
            u64::from(self.line),
            self.wrapper,
        ] {
            h = (h ^ v).wrapping_mul(0x0000_0100_0000_01b3);
            h ^= h >> 29;
        }
        (h ^ (h >> 32)) as u32
    }
}

/// A wrapper found by [`detect`], for `info`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DetectedWrapper {
    /// The frames of the chain, innermost first (`sqlite3MemMalloc`, `sqlite3Malloc`, or
    /// `libsqlite3.so.0+0xa7503` when unnamed).
    pub frames: Vec<String>,
    /// Bytes allocated through it, and their share of all heap bytes.
    pub bytes: u64,
    pub share: f64,
    /// Distinct callers bringing at least 1 % of its bytes each.
    pub callers: usize,
}

/// The effective site of every call-tree node of one trace.
#[derive(Debug, Clone, Default)]
pub struct Sites {
    /// Per node: its effective site.
    site: Vec<u32>,
    /// Per node: why its frame is a wrapper.
    kind: Vec<WrapperKind>,
    detected: Vec<DetectedWrapper>,
    /// The rules' classification before detection, for a longer call tree's [`Sites::continued`].
    rules: SiteRules,
}

/// The patterns' and modules' classification of a call tree's frames (what [`Sites::new`] does
/// before detection), with the verdict per function and module met so far. A live recording's
/// next snapshot has the same call tree and more nodes, whose frames and parents never change:
/// [`Sites::continued`] classifies only the nodes added since (detection, which depends on every
/// node's bytes, is done again).
#[derive(Debug, Clone, Default)]
pub struct SiteRules {
    options: SiteOptions,
    kind: Vec<WrapperKind>,
    /// The last node classified (frame's function and module, parent): a cheap check that a
    /// later call tree extends this one.
    last: Option<(u32, u32, u32)>,
    by_function: HashMap<u32, WrapperKind>,
    by_module: HashMap<(u32, bool), WrapperKind>,
    /// Wrapper detection's rounds on the call tree classified, continued by the next snapshot.
    detection: Option<Box<detection::DetectionCarry>>,
}

impl SiteRules {
    fn new(options: &SiteOptions) -> Self {
        Self {
            options: options.clone(),
            kind: vec![WrapperKind::None],
            ..Self::default()
        }
    }

    /// Call-tree nodes classified.
    pub fn nodes(&self) -> usize {
        self.kind.len()
    }

    /// Wrapper detection's rounds whose sums the snapshot that made these rules continued from
    /// the one before (None where it did not detect).
    pub fn detection_rounds_continued(&self) -> Option<usize> {
        self.detection.as_ref().map(|d| d.continued)
    }

    /// The node whose frame and parent `last` checks.
    fn last_of(trace: &Trace, node: usize) -> Option<(u32, u32, u32)> {
        let f = trace.call_tree.frames.get(node)?;
        Some((f.function, f.module, *trace.call_tree.parent.get(node)?))
    }

    /// Whether `trace`'s call tree extends the one classified, under the same options.
    fn fits(&self, trace: &Trace, options: &SiteOptions) -> bool {
        let n = self.kind.len();
        self.options == *options
            && n >= 1
            && n <= trace.call_tree.len()
            && self.last == n.checked_sub(1).and_then(|i| Self::last_of(trace, i))
    }

    /// Classifies the nodes of `trace` not classified yet.
    fn extend(&mut self, trace: &Trace) {
        let n = trace.call_tree.len();
        let from = self.kind.len().clamp(1, n.max(1));
        self.kind.resize(n, WrapperKind::None);
        let options = &self.options;
        for node in from..n {
            let f = trace.call_tree.frames[node];
            let mut kind = if f.function != 0 {
                *self.by_function.entry(f.function).or_insert_with(|| {
                    let name = trace.strings.get(f.function);
                    if options.builtin && is_builtin_wrapper(name) {
                        WrapperKind::Builtin
                    } else if options
                        .user
                        .iter()
                        .any(|r| r.is_match(name) || r.is_match(qualified_name(name)))
                    {
                        WrapperKind::User
                    } else {
                        WrapperKind::None
                    }
                })
            } else {
                WrapperKind::None
            };
            if kind == WrapperKind::None && options.builtin {
                let named = f.function != 0;
                kind = *self
                    .by_module
                    .entry((f.module, named))
                    .or_insert_with(|| module_kind(trace.strings.get(f.module), named));
            }
            if kind == WrapperKind::None
                && f.function == 0
                && !options.user.is_empty()
                && options
                    .user
                    .iter()
                    .any(|r| r.is_match(&unnamed_text(trace, node as u32)))
            {
                kind = WrapperKind::User;
            }
            self.kind[node] = kind;
        }
        self.last = n.checked_sub(1).and_then(|i| Self::last_of(trace, i));
    }
}

/// Identity of a frame for merging: its function (string id), else its instruction address.
pub fn frame_identity(trace: &Trace, node: u32) -> u64 {
    match trace.call_tree.frames.get(node as usize) {
        None => 0,
        Some(_) if node == 0 => 0,
        Some(f) if f.function != 0 => u64::from(f.function),
        Some(f) => f.ip | (1 << 63),
    }
}

fn parent_of(trace: &Trace, node: u32) -> u32 {
    let p = trace
        .call_tree
        .parent
        .get(node as usize)
        .copied()
        .unwrap_or(0);
    // Parents have smaller ids; anything else (a corrupt file) ends the walk.
    if p < node { p } else { 0 }
}

fn builtin_set() -> &'static RegexSet {
    static SET: OnceLock<RegexSet> = OnceLock::new();
    SET.get_or_init(|| {
        RegexSet::new(BUILTIN_WRAPPERS.iter().map(|(_, re)| *re)).unwrap_or_else(|e| {
            tracing::error!("built-in wrapper patterns: {e}");
            RegexSet::empty()
        })
    })
}

/// Whether a demangled function name is a built-in wrapper.
pub fn is_builtin_wrapper(function: &str) -> bool {
    builtin_set().is_match(qualified_name(function))
}

impl Sites {
    /// Classifies every frame of `trace` and resolves every node's effective site.
    pub fn new(trace: &Trace, options: &SiteOptions) -> Self {
        let mut sites = Self::classified(trace, options, None, true);
        if options.detect {
            detect(trace, &mut sites);
        }
        sites
    }

    /// [`Sites::new`] on a call tree that extends the one `rules` classified (a live
    /// recording's next snapshot, [`Sites::take_rules`] of the last one's sites): only the nodes
    /// added since are classified, and detection continues the last one's rounds while their
    /// verdicts stand (`sites/detection.rs`: the bytes of the blocks added since). Equal to
    /// [`Sites::new`]; `rules` of other options or of a call tree this one does not extend are
    /// not used.
    pub fn continued(trace: &Trace, options: &SiteOptions, rules: Option<SiteRules>) -> Self {
        // Detection resolves the sites itself.
        let detecting = options.detect && trace.blocks.is_consistent();
        let mut sites = Self::classified(trace, options, rules, !detecting);
        let carry = sites.rules.detection.take();
        if detecting {
            let (own, blocks) = detection::own_from_blocks(trace, carry.as_deref());
            let carry = detection::detect_continued(trace, &mut sites, own, Some(blocks), carry);
            sites.rules.detection = Some(carry);
        }
        sites
    }

    /// The rules' classification and, when `resolve` (continued detection resolves them
    /// itself), the sites it gives, without detection.
    fn classified(
        trace: &Trace,
        options: &SiteOptions,
        rules: Option<SiteRules>,
        resolve: bool,
    ) -> Self {
        let mut rules = rules
            .filter(|r| r.fits(trace, options))
            .unwrap_or_else(|| SiteRules::new(options));
        rules.extend(trace);
        let mut kind = rules.kind.clone();
        kind.truncate(trace.call_tree.len());
        let mut sites = Self {
            site: Vec::new(),
            kind,
            detected: Vec::new(),
            rules,
        };
        if resolve {
            sites.resolve(trace);
        }
        sites
    }

    /// A copy of these sites for the next snapshot to continue, wrapper detection's state
    /// moved into it rather than copied (these sites keep their sites and kinds).
    pub fn handed_on(&mut self) -> Self {
        let detection = self.rules.detection.take();
        let mut copy = self.clone();
        copy.rules.detection = detection;
        copy
    }

    /// The classification these sites were resolved from, for the next snapshot's
    /// [`Sites::continued`] (these sites keep their sites and kinds).
    pub fn take_rules(&mut self) -> SiteRules {
        std::mem::take(&mut self.rules)
    }

    /// [`Sites::new`] with wrapper detection from `own`, the heap bytes ever allocated at each
    /// call-tree node, in place of the trace's blocks ([`detect_from_bytes`]).
    pub fn with_node_bytes(trace: &Trace, options: &SiteOptions, own: Vec<u64>) -> Self {
        let mut sites = Self::classified(trace, options, None, true);
        if options.detect {
            detect_from_bytes(trace, &mut sites, own);
        }
        sites
    }

    /// [`Sites::with_node_bytes`] continuing `rules` as [`Sites::continued`] does (detection's
    /// rounds continued from the bytes that grew).
    pub fn with_node_bytes_continued(
        trace: &Trace,
        options: &SiteOptions,
        own: Vec<u64>,
        rules: Option<SiteRules>,
    ) -> Self {
        let mut sites = Self::classified(trace, options, rules, !options.detect);
        let carry = sites.rules.detection.take();
        if options.detect {
            let carry = detection::detect_continued(trace, &mut sites, own, None, carry);
            sites.rules.detection = Some(carry);
        }
        sites
    }

    /// Recomputes `site` from `kind` (parents before children: ids grow downwards).
    fn resolve(&mut self, trace: &Trace) {
        const NONE: u32 = u32::MAX;
        // The innermost named frame (unnamed plumbing skipped): the site when all are wrappers.
        let (mut named, mut site) = (Vec::new(), Vec::new());
        let kind = &self.kind;
        detection::resolve_from(
            trace,
            |node| kind.get(node).copied().unwrap_or(WrapperKind::None),
            1,
            &mut site,
            Some(&mut named),
        );
        let n = site.len();
        for node in 1..n {
            if site[node] == NONE {
                site[node] = named[node];
            }
        }
        self.site = site;
    }

    /// The effective site of call-tree node `node` (itself when it is no wrapper; 0 for 0).
    pub fn site(&self, node: u32) -> u32 {
        self.site.get(node as usize).copied().unwrap_or(node)
    }

    /// Why `node`'s frame is a wrapper ([`WrapperKind::None`] when it is not).
    pub fn kind(&self, node: u32) -> WrapperKind {
        self.kind
            .get(node as usize)
            .copied()
            .unwrap_or(WrapperKind::None)
    }

    pub fn is_wrapper(&self, node: u32) -> bool {
        self.kind(node) != WrapperKind::None
    }

    /// The wrappers between `node` and its site, innermost first (plumbing left out).
    pub fn wrappers(&self, trace: &Trace, node: u32) -> Vec<u32> {
        let site = self.site(node);
        let mut out = Vec::new();
        let mut n = node;
        while n != 0 && n != site && out.len() < trace.call_tree.len() {
            if !matches!(self.kind(n), WrapperKind::None | WrapperKind::Plumbing) {
                out.push(n);
            }
            n = parent_of(trace, n);
        }
        out
    }

    /// The wrapper the site called (the outermost of [`Sites::wrappers`]), if any.
    pub fn called_wrapper(&self, trace: &Trace, node: u32) -> Option<u32> {
        self.wrappers(trace, node).last().copied()
    }

    /// The identity of `node`'s site at line granularity (the `line` key): the site's function
    /// (or address when unnamed), file, line, and the wrapper it called.
    pub fn line_key(&self, trace: &Trace, node: u32) -> LineKey {
        let site = self.site(node);
        let f = trace
            .call_tree
            .frames
            .get(site as usize)
            .copied()
            .unwrap_or_default();
        LineKey {
            frame: frame_identity(trace, site),
            file: f.file,
            line: f.line,
            wrapper: self
                .called_wrapper(trace, node)
                .map_or(0, |w| frame_identity(trace, w)),
        }
    }

    /// The detected wrappers, largest first.
    pub fn detected(&self) -> &[DetectedWrapper] {
        &self.detected
    }

    /// `site (file:line) ← wrapper`: the site as `info` reports it and the wrapper it called.
    pub fn label(&self, trace: &Trace, node: u32) -> String {
        let site = self.site(node);
        let text = frame_text(trace, site);
        match self.called_wrapper(trace, node) {
            Some(w) => format!("{text} ← {}", short_function(trace, w)),
            None => text,
        }
    }

    /// The site's function alone (no line), with the wrapper it called.
    pub fn function_label(&self, trace: &Trace, node: u32) -> String {
        let site = self.site(node);
        let text = short_function(trace, site);
        match self.called_wrapper(trace, node) {
            Some(w) => format!("{text} ← {}", short_function(trace, w)),
            None => text,
        }
    }
}

/// Wrapper detection, in rounds. Each round takes the effective sites (after the rules and the
/// wrappers found so far) that hold at least [`DETECT_MIN_SHARE`] of all heap bytes, largest
/// first. From such a frame it climbs while one caller brings ≥ 90 % of the bytes and lies in
/// the same module (the wrapper's own internals: `sqlite3MemMalloc` ← `sqlite3Malloc`); if the
/// top of that chain has at least [`DETECT_MIN_CALLERS`] callers bringing ≥ 1 % each, the whole
/// chain is a wrapper. A function that allocates most of the heap from one or two places
/// (`main`, a worker) is no wrapper: it has few callers.
pub fn detect(trace: &Trace, sites: &mut Sites) {
    let n = trace.call_tree.len();
    let mut own = vec![0u64; n];
    let b = &trace.blocks;
    if !b.is_consistent() {
        return;
    }
    let (site, size, flags) = (
        b.site.as_slice(),
        b.requested_size.as_slice(),
        b.flags.as_slice(),
    );
    for i in 0..b.len() {
        if flags[i] & FLAG_MMAP == 0
            && let Some(slot) = own.get_mut(site[i] as usize)
        {
            *slot = slot.saturating_add(size[i]);
        }
    }
    detect_from_bytes(trace, sites, own);
}

/// [`detect`] from the heap bytes ever allocated at each call-tree node (`own[node]`, as
/// [`detect`] sums them from the blocks): for callers that have sums but no blocks (a query
/// engine over a Parquet dataset).
pub fn detect_from_bytes(trace: &Trace, sites: &mut Sites, mut own: Vec<u64>) {
    own.resize(trace.call_tree.len(), 0);
    let total: u64 = own.iter().fold(0u64, |a, &x| a.saturating_add(x));
    if total == 0 {
        return;
    }
    let mut rejected: Vec<u64> = Vec::new();
    for _ in 0..DETECT_ROUNDS {
        // Bytes per identity of the effective site, and which nodes carry them.
        let mut by_identity: HashMap<u64, u64> = HashMap::new();
        let mut at: HashMap<u32, u64> = HashMap::new();
        for (node, &bytes) in own.iter().enumerate() {
            if bytes == 0 || node == 0 {
                continue;
            }
            let s = sites.site(node as u32);
            if s == 0 {
                continue;
            }
            let slot = at.entry(s).or_default();
            *slot = slot.saturating_add(bytes);
            let slot = by_identity.entry(frame_identity(trace, s)).or_default();
            *slot = slot.saturating_add(bytes);
        }
        let mut candidates: Vec<(u64, u64)> = by_identity
            .into_iter()
            .filter(|&(id, bytes)| {
                bytes as f64 >= DETECT_MIN_SHARE * total as f64 && !rejected.contains(&id)
            })
            .collect();
        candidates.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let Some(&(identity, bytes)) = candidates.first() else {
            break;
        };
        // Nodes of the candidate with their bytes.
        let mut level: Vec<(u32, u64)> = at
            .iter()
            .filter(|&(&s, _)| frame_identity(trace, s) == identity)
            .map(|(&s, &b)| (s, b))
            .collect();
        level.sort_unstable();
        let (chain, callers) = detection::chain_of(trace, level, bytes, total);
        if callers < DETECT_MIN_CALLERS {
            rejected.push(identity);
            continue;
        }
        // Every node of the chain's frames, wherever it occurs, is the wrapper.
        let ids: std::collections::HashSet<u64> = chain
            .iter()
            .flatten()
            .map(|&(node, _)| frame_identity(trace, node))
            .collect();
        for (m, k) in sites.kind.iter_mut().enumerate().skip(1) {
            if *k == WrapperKind::None && ids.contains(&frame_identity(trace, m as u32)) {
                *k = WrapperKind::Detected;
            }
        }
        let frames = chain
            .iter()
            .filter_map(|links| links.first())
            .map(|&(node, _)| short_function(trace, node))
            .collect();
        sites.detected.push(DetectedWrapper {
            frames,
            bytes,
            share: bytes as f64 / total as f64,
            callers,
        });
        sites.resolve(trace);
    }
}

/// The effective site of `node` by the built-in rules alone (no detection, no user patterns),
/// computed for one node without classifying the whole tree (hover, legends).
pub fn builtin_site(trace: &Trace, node: u32) -> u32 {
    let classify = |n: u32| {
        let Some(f) = trace.call_tree.frames.get(n as usize) else {
            return WrapperKind::None;
        };
        if f.function != 0 && is_builtin_wrapper(trace.strings.get(f.function)) {
            WrapperKind::Builtin
        } else {
            module_kind(trace.strings.get(f.module), f.function != 0)
        }
    };
    let mut named = None;
    let mut n = node;
    let mut steps = 0;
    while n != 0 && steps < trace.call_tree.len() {
        let k = classify(n);
        if k == WrapperKind::None {
            return n;
        }
        if k != WrapperKind::Plumbing && named.is_none() {
            named = Some(n);
        }
        n = parent_of(trace, n);
        steps += 1;
    }
    named.unwrap_or(node)
}

/// What a frame of `module` is by its module alone: every frame of the C++ runtime and of
/// malloc replacements is a wrapper (plumbing when unnamed); unnamed frames of the C runtime
/// are plumbing.
fn module_kind(module: &str, named: bool) -> WrapperKind {
    if WRAPPER_MODULES.iter().any(|w| module.contains(w)) {
        if named {
            WrapperKind::Builtin
        } else {
            WrapperKind::Plumbing
        }
    } else if !named && PLUMBING_MODULES.iter().any(|w| module.contains(w)) {
        WrapperKind::Plumbing
    } else {
        WrapperKind::None
    }
}

/// The file name of a module path.
fn module_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `libc.so.6+0x1234` (or the address) for a frame without a function.
fn unnamed_text(trace: &Trace, node: u32) -> String {
    let Some(f) = trace.call_tree.frames.get(node as usize) else {
        return String::from("?");
    };
    match trace.strings.get(f.module) {
        "" => format!("{:#x}", f.ip),
        m => f.in_module(module_name(m)),
    }
}

/// A frame as `info` reports it: `function (file:line)`, `function (module)`, or
/// `module+0xoffset` with the module's file name.
pub fn frame_text(trace: &Trace, node: u32) -> String {
    let Some(f) = trace.call_tree.frames.get(node as usize) else {
        return String::from("?");
    };
    if node == 0 {
        return String::from("<no call stack>");
    }
    let function = trace.strings.get(f.function);
    if function.is_empty() {
        return unnamed_text(trace, node);
    }
    match (trace.strings.get(f.file), trace.strings.get(f.module)) {
        ("", "") => function.to_owned(),
        ("", m) => format!("{function} ({})", module_name(m)),
        (file, _) => format!("{function} ({file}:{})", f.line),
    }
}

/// A frame's function as the trace names it (demangled, in full), or `module+0xoffset`.
pub fn function_text(trace: &Trace, node: u32) -> String {
    match trace.call_tree.frames.get(node as usize) {
        Some(f) if node != 0 && f.function != 0 => trace.strings.get(f.function).to_owned(),
        Some(_) if node != 0 => unnamed_text(trace, node),
        _ => String::from("<no call stack>"),
    }
}

/// A frame's function for display: without return type, parameters, template arguments and
/// inline namespaces (`std::vector::_M_realloc_insert`, `operator new`); `module+0xoffset`
/// when unnamed.
pub fn short_function(trace: &Trace, node: u32) -> String {
    match trace.call_tree.frames.get(node as usize) {
        Some(f) if node != 0 && f.function != 0 => plain_name(trace.strings.get(f.function)),
        Some(_) if node != 0 => unnamed_text(trace, node),
        _ => String::from("<no call stack>"),
    }
}

/// A function's name without its return type, parameter list and trailing qualifiers:
/// `void std::vector<int>::push_back(int const&)` → `std::vector<int>::push_back`.
pub fn qualified_name(demangled: &str) -> &str {
    let mut s = demangled.trim();
    // ` [clone .cold]`, ` [abi:cxx11]`-style suffixes.
    while let Some(stripped) = s.strip_suffix(']') {
        match stripped.rfind(" [").or_else(|| stripped.rfind('[')) {
            Some(open) if open > 0 => s = stripped[..open].trim_end(),
            _ => break,
        }
    }
    for qualifier in [" const", " volatile", " &&", " &", " noexcept"] {
        while let Some(stripped) = s.strip_suffix(qualifier) {
            s = stripped.trim_end();
        }
    }
    // The parameter list: the balanced (…) that ends the name.
    if s.ends_with(')') {
        let mut depth = 0i32;
        for (i, c) in s.char_indices().rev() {
            match c {
                ')' => depth += 1,
                '(' => {
                    depth -= 1;
                    if depth == 0 {
                        if i > 0 {
                            s = &s[..i];
                        }
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    // The return type: text before the last space outside brackets, unless that space belongs
    // to `operator new`, `operator delete` or a conversion operator.
    let bytes = s.as_bytes();
    let mut depth = 0i32;
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(b"operator")
            && (i == 0 || !is_ident(bytes[i - 1]))
            && !bytes.get(i + 8).copied().is_some_and(is_ident)
        {
            break;
        }
        match bytes[i] {
            b'<' | b'(' | b'[' | b'{' => depth += 1,
            b'>' | b')' | b']' | b'}' => depth -= 1,
            b' ' if depth == 0 => start = i + 1,
            _ => {}
        }
        i += 1;
    }
    &s[start..]
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// [`qualified_name`] without template arguments, inline namespaces and Rust hashes:
/// `std::__cxx11::basic_string<char>::_M_create` → `std::basic_string::_M_create`.
pub fn plain_name(demangled: &str) -> String {
    let q = qualified_name(demangled);
    if q.starts_with('<') {
        // Rust's `<T as Trait>::method` has no meaningful name without its brackets.
        return strip_rust_hash(q).to_owned();
    }
    let mut out = String::with_capacity(q.len());
    let mut depth = 0i32;
    let mut in_operator = false;
    for (i, c) in q.char_indices() {
        if q[i..].starts_with("operator") && (i == 0 || !is_ident(q.as_bytes()[i - 1])) {
            in_operator = true;
        }
        match c {
            '<' if !in_operator => depth += 1,
            '>' if !in_operator && depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    let out = out.replace("::__cxx11", "").replace("::__1", "");
    strip_rust_hash(&out).to_owned()
}

fn strip_rust_hash(s: &str) -> &str {
    match s.rsplit_once("::h") {
        Some((head, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            head
        }
        _ => s,
    }
}

mod detection;
#[cfg(test)]
mod tests;
