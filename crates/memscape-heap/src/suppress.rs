//! Default leak suppressions: blocks the C library, the dynamic loader and the C++ runtime
//! keep until the process exits on purpose (thread control blocks and static TLS of
//! `pthread_create`, `dlopen`'s link maps, locale, character-set and time-zone data, stdio
//! buffers, name-service modules, exit handlers, the C++ runtime's emergency exception pool).
//! valgrind frees them only through glibc's `__libc_freeres`; heaptrack and LeakSanitizer ship
//! suppressions for them. Such a block is no leak of the program, so leak suspects leave it out
//! and say how many they left out.
//!
//! A rule matches a frame of the block's **allocation prefix**: the frames from the allocation
//! outwards while they belong to the runtime's own modules (libc, ld.so, libstdc++, libgcc,
//! libm, the recorder). A block whose stack never reaches a frame of the program at all (the
//! loader running library constructors before `main`) is suppressed too. So `dlopen`'s own
//! bookkeeping is suppressed, but a leak in a plugin's code run under `dlopen` is not: the
//! plugin's frame ends the prefix first.

use std::collections::HashMap;

use memscape_trace::Trace;
use memscape_trace::model::{FLAG_MMAP, FLAG_NEVER_FREED};
use memscape_trace::sites::qualified_name;
use regex::Regex;

/// The default rules: (what they cover, regex on the qualified function name).
pub const DEFAULT_SUPPRESSIONS: &[(&str, &str)] = &[
    (
        "thread control blocks and static TLS (pthread_create)",
        r"pthread_create|^allocate_stack$|^_dl_allocate_tls|^allocate_dtv|tls_get_addr|^_dl_update_slotinfo$|^_dl_resize_dtv$|^update_get_addr$",
    ),
    (
        "dynamic loader (dlopen, dlerror)",
        r"^_dl_|^dl_open_worker|^dl_main$|dlopen|dlmopen|dlerror|^_dlerror_run$|^__libc_dl|^_dl_catch",
    ),
    (
        "locale, character sets and time zones",
        r"setlocale|^newlocale$|^__newlocale$|^_nl_|^__gconv|^iconv_open$|tzset|tzfile|^textdomain$|^bindtextdomain$|^__dcigettext$|^__libc_init_secure$",
    ),
    (
        "stdio buffers",
        r"^_IO_file_doallocate$|^__GI__IO_file_doallocate$|^_IO_doallocbuf$|^_IO_wfile_doallocate$",
    ),
    ("name service modules", r"^__nss_|^nss_|^_nss_"),
    (
        "exit handlers",
        r"^__new_exitfn$|^__cxa_atexit$|^__internal_atexit$|^__cxa_thread_atexit_impl$|^atexit$",
    ),
];

/// Name of the rule for blocks with no frame of the program.
pub const RUNTIME_ONLY: &str = "runtime start-up (no frame of the program)";

/// Modules whose frames are the runtime's, not the program's.
const RUNTIME_MODULES: [&str; 12] = [
    "libc.so",
    "ld-linux",
    "libc.musl",
    "libpthread.so",
    "libdl.so",
    "libm.so",
    "libstdc++.so",
    "libc++.so",
    "libc++abi.so",
    "libgcc_s.so",
    "libmemscape_recorder",
    "libheaptrack",
];

/// Compiled suppression rules.
#[derive(Debug, Clone)]
pub struct Suppressions {
    rules: Vec<(String, Regex)>,
    /// Whether blocks with no frame of the program are suppressed.
    runtime_only: bool,
}

impl PartialEq for Suppressions {
    fn eq(&self, other: &Self) -> bool {
        self.runtime_only == other.runtime_only
            && self.rules.len() == other.rules.len()
            && self
                .rules
                .iter()
                .zip(&other.rules)
                .all(|(a, b)| a.0 == b.0 && a.1.as_str() == b.1.as_str())
    }
}

impl Default for Suppressions {
    fn default() -> Self {
        Self::builtin()
    }
}

impl Suppressions {
    /// The default rules ([`DEFAULT_SUPPRESSIONS`] and [`RUNTIME_ONLY`]).
    pub fn builtin() -> Self {
        Self {
            rules: DEFAULT_SUPPRESSIONS
                .iter()
                .filter_map(|(name, re)| Some(((*name).to_owned(), Regex::new(re).ok()?)))
                .collect(),
            runtime_only: true,
        }
    }

    /// No rule: every block counts.
    pub fn none() -> Self {
        Self {
            rules: Vec::new(),
            runtime_only: false,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty() && !self.runtime_only
    }

    /// Names of the rules, in the order [`Suppressions::rule_of`] numbers them.
    pub fn rule_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.rules.iter().map(|(n, _)| n.clone()).collect();
        names.push(RUNTIME_ONLY.to_owned());
        names
    }

    /// The rule (index into [`Suppressions::rule_names`]) that suppresses blocks allocated at
    /// call-tree node `site`, if any.
    pub fn rule_of(&self, trace: &Trace, site: u32) -> Option<usize> {
        if self.is_empty() || site == 0 {
            return None;
        }
        let mut modules: HashMap<u32, bool> = HashMap::new();
        let mut node = site;
        let mut steps = 0;
        while node != 0 && steps < trace.call_tree.len() {
            let f = trace.call_tree.frames.get(node as usize)?;
            let runtime = *modules.entry(f.module).or_insert_with(|| {
                let m = trace.strings.get(f.module);
                !m.is_empty() && RUNTIME_MODULES.iter().any(|r| m.contains(r))
            });
            // Names are matched in the runtime's modules (and where the trace names none), so
            // that a program function called `plugin_dlopen` is not taken for the loader.
            let name = trace.strings.get(f.function);
            if !name.is_empty() && (runtime || trace.strings.get(f.module).is_empty()) {
                let q = qualified_name(name);
                if let Some(i) = self.rules.iter().position(|(_, r)| r.is_match(q)) {
                    return Some(i);
                }
            }
            if !runtime {
                return None;
            }
            let parent = trace
                .call_tree
                .parent
                .get(node as usize)
                .copied()
                .unwrap_or(0);
            node = if parent < node { parent } else { 0 };
            steps += 1;
        }
        self.runtime_only.then_some(self.rules.len())
    }
}

/// What the suppressions left out of the leak suspects.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Suppressed {
    /// Whether suppressions were applied (false: `--no-suppressions`).
    pub applied: bool,
    /// Blocks never freed that a rule matched, and their bytes.
    pub blocks: u64,
    pub bytes: u64,
    /// Per rule that matched: (rule, blocks, bytes).
    pub by_rule: Vec<SuppressedRule>,
}

/// One rule's share of [`Suppressed`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SuppressedRule {
    pub rule: String,
    pub blocks: u64,
    pub bytes: u64,
}

/// The blocks of `trace` that `suppressions` match (heap blocks only, in block order) and the
/// summary of those never freed.
pub fn suppressed_blocks(trace: &Trace, suppressions: &Suppressions) -> (Vec<u32>, Suppressed) {
    let summary = Suppressed {
        applied: !suppressions.is_empty(),
        ..Suppressed::default()
    };
    if suppressions.is_empty() || !trace.blocks.is_consistent() {
        return (Vec::new(), summary);
    }
    let mut cache: HashMap<u32, Option<usize>> = HashMap::new();
    let b = &trace.blocks;
    let mut blocks = Vec::new();
    let mut never_freed = Vec::new();
    for i in 0..b.len() {
        if b.flags[i] & FLAG_MMAP != 0 {
            continue;
        }
        let site = b.site[i];
        let rule = *cache
            .entry(site)
            .or_insert_with(|| suppressions.rule_of(trace, site));
        let Some(rule) = rule else { continue };
        if let Ok(i32) = u32::try_from(i) {
            blocks.push(i32);
            if b.flags[i] & FLAG_NEVER_FREED != 0 {
                never_freed.push((i32, rule));
            }
        }
    }
    (blocks, summarize(trace, suppressions, &never_freed))
}

/// The summary of the suppressed blocks never freed, `(block, rule)` (suppressions applied).
pub(crate) fn summarize(
    trace: &Trace,
    suppressions: &Suppressions,
    never_freed: &[(u32, usize)],
) -> Suppressed {
    let names = suppressions.rule_names();
    let mut per_rule = vec![(0u64, 0u64); names.len()];
    let mut summary = Suppressed {
        applied: true,
        ..Suppressed::default()
    };
    for &(block, rule) in never_freed {
        let bytes = trace.blocks.requested_size[block as usize];
        summary.blocks += 1;
        summary.bytes = summary.bytes.saturating_add(bytes);
        if let Some(r) = per_rule.get_mut(rule) {
            r.0 += 1;
            r.1 = r.1.saturating_add(bytes);
        }
    }
    summary.by_rule = rules_that_matched(names, per_rule);
    summary
}

/// Each rule's (blocks, bytes), those that matched any.
pub(crate) fn rules_that_matched(
    names: Vec<String>,
    per_rule: Vec<(u64, u64)>,
) -> Vec<SuppressedRule> {
    names
        .into_iter()
        .zip(per_rule)
        .filter(|(_, (n, _))| *n > 0)
        .map(|(rule, (blocks, bytes))| SuppressedRule {
            rule,
            blocks,
            bytes,
        })
        .collect()
}
