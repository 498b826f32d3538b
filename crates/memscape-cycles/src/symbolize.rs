//! Source attribution of instruction addresses with addr2line/gimli against the traced binary.
//!
//! A non-PIE executable is mapped at its link addresses, so an instruction address is looked up
//! directly. A PIE (ELF `ET_DYN`) is mapped at a load base chosen at run time (valgrind uses
//! 0x108000 on amd64, a normal run 0x5555_5555_4000 without ASLR); we subtract that base. The
//! base is detected from the trace: the first instruction the program runs is its entry point
//! `_start`, so `ip - e_entry` for some traced ip that is page-aligned is a candidate, and the
//! candidate under which most traced instructions fall into `.text` wins.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use object::{Object, ObjectSection};

use crate::error::CyclesError;

/// Function, file and line of one instruction address.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SourceInfo {
    /// The function containing the address: the outermost frame of an inline chain, i.e. the
    /// function that owns the machine code (what `--function` normally names).
    pub function: Option<String>,
    /// Every function of the inline chain, innermost first (a `--function` filter matches any).
    pub frames: Vec<String>,
    pub file: Option<String>,
    pub line: Option<u32>,
}

/// How the load base of a PIE is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LoadBase {
    /// Detect it from the trace's instruction addresses (no effect for non-PIE binaries).
    #[default]
    Detect,
    /// The address the binary's first `PT_LOAD` (virtual address 0 for a PIE) was mapped at.
    Given(u64),
}

/// Page size used to align load bases.
const PAGE: u64 = 0x1000;

/// Load bases tried when the entry point is not in the trace (a trimmed trace).
const KNOWN_PIE_BASES: [u64; 3] = [0x10_8000, 0x5555_5555_4000, 0x40_0000];

/// Looks up instruction addresses in one binary, caching per address.
pub struct Symbolizer {
    path: PathBuf,
    loader: addr2line::Loader,
    /// Subtracted from every trace address before the lookup (0 for non-PIE binaries).
    pub load_base: u64,
    /// Whether the binary is position independent.
    pub pie: bool,
    /// `.text` at link addresses.
    pub text: Range<u64>,
    cache: HashMap<u64, Option<Rc<SourceInfo>>>,
}

impl std::fmt::Debug for Symbolizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Symbolizer")
            .field("path", &self.path)
            .field("load_base", &self.load_base)
            .field("pie", &self.pie)
            .finish_non_exhaustive()
    }
}

impl Symbolizer {
    /// Opens `binary` and settles its load base; `instruction_addresses` (sorted) are the
    /// trace's instruction addresses, used for detection.
    pub fn open(
        binary: &Path,
        load_base: LoadBase,
        instruction_addresses: &[u64],
    ) -> Result<Self, CyclesError> {
        let fail = |message: String| CyclesError::Binary {
            path: binary.to_owned(),
            message,
        };
        let data = std::fs::read(binary).map_err(|e| fail(format!("cannot read: {e}")))?;
        let file = object::File::parse(&*data)
            .map_err(|e| fail(format!("not an object file addr2line can read: {e}")))?;
        let pie = file.kind() == object::ObjectKind::Dynamic;
        let entry = file.entry();
        let text = file
            .section_by_name(".text")
            .map(|s| s.address()..s.address().saturating_add(s.size()))
            .ok_or_else(|| fail("no .text section".to_owned()))?;
        drop(file);
        let loader = addr2line::Loader::new(binary)
            .map_err(|e| fail(format!("cannot load debug information: {e}")))?;
        let base = match (pie, load_base) {
            (_, LoadBase::Given(base)) => base,
            (false, LoadBase::Detect) => 0,
            (true, LoadBase::Detect) => detect_load_base(entry, &text, instruction_addresses)
                .ok_or_else(|| {
                    fail(format!(
                        "position-independent executable and no traced instruction falls into its \
                         .text ({:#x}..{:#x}) under any plausible load base; give the load base \
                         explicitly (--load-base)",
                        text.start, text.end
                    ))
                })?,
        };
        let covered = instructions_in(&shift(&text, base), instruction_addresses);
        if covered == 0 {
            tracing::warn!(
                "no traced instruction lies in {}'s .text at load base {base:#x}",
                binary.display()
            );
        }
        tracing::info!(
            "symbolizing against {} (pie: {pie}, load base {base:#x}, {covered} traced instructions in .text)",
            binary.display()
        );
        Ok(Self {
            path: binary.to_owned(),
            loader,
            load_base: base,
            pie,
            text,
            cache: HashMap::new(),
        })
    }

    /// Source attribution of a traced instruction address, `None` outside the binary's code.
    pub fn lookup(&mut self, ip: u64) -> Option<Rc<SourceInfo>> {
        if let Some(hit) = self.cache.get(&ip) {
            return hit.clone();
        }
        let info = self.resolve(ip).map(Rc::new);
        self.cache.insert(ip, info.clone());
        info
    }

    fn resolve(&self, ip: u64) -> Option<SourceInfo> {
        let probe = ip.checked_sub(self.load_base)?;
        if !self.text.contains(&probe) {
            // PLT stubs and other sections are not "the program's code" for our purposes.
            return None;
        }
        let mut info = SourceInfo::default();
        if let Ok(mut frames) = self.loader.find_frames(probe) {
            while let Ok(Some(frame)) = frames.next() {
                if let Some(name) = frame.function.as_ref().and_then(|f| f.demangle().ok()) {
                    info.frames.push(name.into_owned());
                }
                if info.file.is_none()
                    && let Some(loc) = frame.location.as_ref()
                {
                    info.file = loc.file.map(|f| self.source_path(f));
                    info.line = loc.line;
                }
            }
        }
        info.function = info.frames.last().cloned().or_else(|| {
            self.loader
                .find_symbol(probe)
                .map(|name| addr2line::demangle_auto(name.into(), None).into_owned())
        });
        if info.frames.is_empty()
            && let Some(f) = &info.function
        {
            info.frames.push(f.clone());
        }
        Some(info)
    }
}

impl Symbolizer {
    /// A source path as the debug information names it; a relative one (a binary built with
    /// `-fdebug-prefix-map=DIR=.`, or in its source directory) is resolved against the binary's
    /// directory when the file is there, so that legends and source panes can read it.
    fn source_path(&self, file: &str) -> String {
        let relative = Path::new(file);
        if relative.is_absolute() {
            return file.to_owned();
        }
        let beside = self
            .path
            .parent()
            .map(|dir| dir.join(relative.strip_prefix(".").unwrap_or(relative)));
        match beside {
            Some(p) if p.is_file() => p.to_string_lossy().into_owned(),
            _ => file.to_owned(),
        }
    }
}

fn shift(range: &Range<u64>, base: u64) -> Range<u64> {
    range.start.saturating_add(base)..range.end.saturating_add(base)
}

/// How many of the sorted addresses fall into `range`.
fn instructions_in(range: &Range<u64>, sorted: &[u64]) -> usize {
    let lo = sorted.partition_point(|&a| a < range.start);
    let hi = sorted.partition_point(|&a| a < range.end);
    hi.saturating_sub(lo)
}

/// Detects the load base of a PIE from the traced instruction addresses (sorted): candidates
/// are page-aligned `ip - entry` and a few customary bases; the one that puts the most traced
/// instructions into `.text` wins. `None` when no candidate covers any instruction.
pub fn detect_load_base(entry: u64, text: &Range<u64>, sorted_ips: &[u64]) -> Option<u64> {
    let mut best: Option<(usize, u64)> = None;
    let mut consider = |base: u64| {
        let score = instructions_in(&shift(text, base), sorted_ips);
        if score > 0 && best.is_none_or(|(s, b)| score > s || (score == s && base < b)) {
            best = Some((score, base));
        }
    };
    for &ip in sorted_ips {
        if let Some(base) = ip.checked_sub(entry)
            && base % PAGE == 0
        {
            consider(base);
        }
    }
    for base in KNOWN_PIE_BASES {
        consider(base);
    }
    best.map(|(_, base)| base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_base_prefers_the_base_covering_most_instructions() {
        let text = 0x1040..0x1400;
        let entry = 0x1060;
        // Loader code far away, program code at base 0x108000; one stray ip also congruent.
        let mut ips = vec![0x4001060, 0x4020000, 0x109060, 0x109070, 0x109100, 0x109200];
        ips.sort_unstable();
        assert_eq!(detect_load_base(entry, &text, &ips), Some(0x108000));
        assert_eq!(detect_load_base(entry, &text, &[0x10]), None);
    }
}
