//! Symbolization of call-stack frames from the binaries a trace names, when they exist on this
//! machine: DWARF (the binary's own, or a separate debug file found by build id,
//! `.gnu_debuglink` or, when the user asks for it, debuginfod: [`crate::debuginfo`]) through
//! addr2line, else the symbol tables with their sizes ([`crate::symtab`]). Missing or
//! unreadable binaries are skipped, and so are addresses that no symbol contains: those frames
//! keep module + offset.
//!
//! A frame's function is the outermost function of its inline chain (the one that owns the
//! machine code) and its file and line are the place in that function: the line of the call
//! that was inlined, not a line of an inlined `std::` header, so that `function (file:line)`
//! always names a line of that function.

use std::collections::HashMap;
use std::path::Path;

use crate::debuginfo::{DebugSearch, FoundBy, has_dwarf};
use crate::model::{CallTree, Strings, Trace};
use crate::symtab::SizedSymbols;

/// What [`symbolize`] achieved.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SymbolizeReport {
    /// Call-tree nodes that had a module and no function (what was to be symbolized).
    pub nodes: u64,
    /// Addresses looked up in a module's symbols (nodes of one address share a lookup).
    pub lookups: u64,
    pub modules_opened: u64,
    pub modules_missing: u64,
    /// Modules whose DWARF came from a separate debug file (build id, debuglink, debuginfod).
    pub separate_debug_files: u64,
    pub frames_resolved: u64,
    pub frames_unresolved: u64,
    /// Frames left as module + offset because their address lies past the end of the nearest
    /// symbol (a stripped library's internal function).
    pub frames_outside_symbols: u64,
    /// Each opened module and where its debug information came from (`None`: symbol tables
    /// only).
    pub debug_info: Vec<ModuleDebugInfo>,
}

/// Where a module's names came from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ModuleDebugInfo {
    pub module: String,
    /// The file the DWARF was read from.
    pub debug_file: Option<String>,
    pub found_by: Option<FoundBy>,
}

/// One module's symbol sources.
struct ModuleSymbols {
    dwarf: Option<addr2line::Loader>,
    symbols: SizedSymbols,
    /// Demangled names by raw name: many frames share a function, and demangling C++ names
    /// is most of the cost of symbolizing a large trace.
    demangled: HashMap<String, String>,
}

impl ModuleSymbols {
    fn open(path: &Path, search: &DebugSearch) -> Result<(Self, ModuleDebugInfo), String> {
        let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
        let map = memscape_map::Mapping::new(&file).map_err(|e| e.to_string())?;
        let object = object::File::parse(map.bytes()).map_err(|e| e.to_string())?;
        let mut symbols = SizedSymbols::default();
        symbols.add(&object);
        let (dwarf_path, found_by) = if has_dwarf(&object) {
            (Some(path.to_path_buf()), Some(FoundBy::Embedded))
        } else {
            match search.find(path, &object) {
                Some((p, by)) => (Some(p), Some(by)),
                None => (None, None),
            }
        };
        // A separate debug file also carries the full symbol table (`.symtab`).
        if let Some(debug) = dwarf_path.as_deref().filter(|p| *p != path)
            && let Ok(f) = std::fs::File::open(debug)
            && let Ok(m) = memscape_map::Mapping::new(&f)
            && let Ok(o) = object::File::parse(m.bytes())
        {
            symbols.add(&o);
        }
        let dwarf = dwarf_path.as_deref().and_then(|p| {
            let sup = supplementary_file(p, search);
            let loaded = match &sup {
                Some(s) => addr2line::Loader::new_with_sup(p, Some(s)),
                None => addr2line::Loader::new(p),
            };
            loaded
                .map_err(|e| tracing::debug!("cannot read DWARF of {}: {e}", p.display()))
                .ok()
        });
        let info = ModuleDebugInfo {
            module: path.display().to_string(),
            debug_file: dwarf
                .as_ref()
                .and(dwarf_path.map(|p| p.display().to_string())),
            found_by: dwarf.as_ref().and(found_by),
        };
        Ok((
            Self {
                dwarf,
                symbols,
                demangled: HashMap::new(),
            },
            info,
        ))
    }

    /// Function (demangled), file and line of a return address's call instruction.
    fn resolve(&mut self, probe: u64) -> Option<(String, Option<String>, Option<u32>)> {
        let demangled = &mut self.demangled;
        let mut demangle = |raw: &str, language: Option<gimli::DwLang>| {
            if let Some(d) = demangled.get(raw) {
                return d.clone();
            }
            let d = addr2line::demangle_auto(raw.into(), language).into_owned();
            demangled.insert(raw.to_owned(), d.clone());
            d
        };
        if let Some(dwarf) = &self.dwarf
            && let Ok(mut frames) = dwarf.find_frames(probe)
        {
            // Innermost first; the last is the function that owns the code, and its location
            // is the line in that function.
            let mut last = None;
            while let Ok(Some(f)) = frames.next() {
                let name = f.function.as_ref().and_then(|n| {
                    let raw = n.raw_name().ok()?;
                    Some(demangle(&raw, n.language))
                });
                let location = f
                    .location
                    .map(|l| (l.file.map(str::to_owned), l.line))
                    .unwrap_or((None, None));
                last = Some((name, location));
            }
            if let Some((Some(name), (file, line))) = last {
                return Some((name, file, line));
            }
        }
        let name = demangle(self.symbols.lookup(probe)?, None);
        let (file, line) = self
            .dwarf
            .as_ref()
            .and_then(|d| d.find_location(probe).ok().flatten())
            .map(|l| (l.file.map(str::to_owned), l.line))
            .unwrap_or((None, None));
        Some((name, file, line))
    }
}

/// `.gnu_debugaltlink` (dwz's shared DWARF) of a debug file: the named path, else by build id.
fn supplementary_file(debug: &Path, search: &DebugSearch) -> Option<std::path::PathBuf> {
    use object::Object;
    let file = std::fs::File::open(debug).ok()?;
    let map = memscape_map::Mapping::new(&file).ok()?;
    let object = object::File::parse(map.bytes()).ok()?;
    let (name, build_id) = object.gnu_debugaltlink().ok()??;
    let name = Path::new(std::str::from_utf8(name).ok()?);
    let named = if name.is_absolute() {
        name.to_path_buf()
    } else {
        debug.parent()?.join(name)
    };
    if named.is_file() {
        return Some(named);
    }
    let hex: String = build_id.iter().map(|b| format!("{b:02x}")).collect();
    (hex.len() > 2)
        .then(|| {
            search.roots.iter().map(move |r| {
                r.join(".build-id")
                    .join(&hex[..2])
                    .join(format!("{}.debug", &hex[2..]))
            })
        })
        .into_iter()
        .flatten()
        .find(|p| p.is_file())
}

/// Resolves function, file and line of every frame that has a module but no function yet,
/// looking for separate debug files as gdb does ([`DebugSearch::from_env`]).
pub fn symbolize(trace: &mut Trace) -> SymbolizeReport {
    symbolize_with(trace, &DebugSearch::from_env())
}

/// [`symbolize`] with an explicit debug-file search.
pub fn symbolize_with(trace: &mut Trace, search: &DebugSearch) -> SymbolizeReport {
    symbolize_nodes(
        &mut trace.call_tree,
        &mut trace.strings,
        1,
        search,
        &mut HashMap::new(),
        &mut ResolvedMap::default(),
    )
}

/// Symbolization of successive traces of one recording (a live view's snapshots): each
/// module's symbols are read once, not once per trace; and, through
/// [`Symbolizer::symbolize_new`], each call-tree node of a growing tree once.
#[derive(Default)]
pub struct Symbolizer {
    search: DebugSearch,
    /// By module path.
    modules: HashMap<String, Option<ModuleSymbols>>,
    /// [`Symbolizer::symbolize_new`]'s state: the nodes of the growing call tree looked at so
    /// far, and each (module string id, offset) resolved in it.
    nodes_done: usize,
    resolved: ResolvedMap,
}

/// (module string id, module offset) → (function, file, line) as interned; Err: whether the
/// address lies past its nearest symbol.
type ResolvedMap = HashMap<
    (u32, u64),
    Result<(u32, u32, u32), bool>,
    std::hash::BuildHasherDefault<crate::builder::PointerHasher>,
>;

impl Symbolizer {
    /// Looking for separate debug files as [`symbolize`] does.
    pub fn new() -> Self {
        Self {
            search: DebugSearch::from_env(),
            ..Self::default()
        }
    }

    /// [`symbolize`], with the symbols of the modules read for earlier traces.
    pub fn symbolize(&mut self, trace: &mut Trace) -> SymbolizeReport {
        let mut resolved = ResolvedMap::default();
        symbolize_nodes(
            &mut trace.call_tree,
            &mut trace.strings,
            1,
            &self.search,
            &mut self.modules,
            &mut resolved,
        )
    }

    /// Symbolizes the nodes of `call_tree` added since the last call: successive states of
    /// one append-only call tree and string table (a live recording's merge, see
    /// `TraceBuilder`), whose earlier nodes keep their names. Addresses resolved for earlier
    /// nodes are not looked up again. The report counts this call's nodes and lookups.
    pub fn symbolize_new(
        &mut self,
        call_tree: &mut CallTree,
        strings: &mut Strings,
    ) -> SymbolizeReport {
        let from = self.nodes_done.max(1);
        self.nodes_done = call_tree.len();
        symbolize_nodes(
            call_tree,
            strings,
            from,
            &self.search,
            &mut self.modules,
            &mut self.resolved,
        )
    }

    /// Nodes [`Symbolizer::symbolize_new`] has looked at so far.
    pub fn nodes_done(&self) -> usize {
        self.nodes_done
    }
}

/// Resolves the nodes from `from` on of `call_tree` that have a module but no function yet,
/// interning names in `strings`; `resolved` keeps each address's result (for these `strings`).
fn symbolize_nodes(
    call_tree: &mut CallTree,
    strings: &mut Strings,
    from: usize,
    search: &DebugSearch,
    modules: &mut HashMap<String, Option<ModuleSymbols>>,
    resolved: &mut ResolvedMap,
) -> SymbolizeReport {
    let mut report = SymbolizeReport::default();
    // Call-tree nodes of one return address (reached through different callers) resolve
    // alike: each (module, offset) once.
    for n in from..call_tree.frames.len() {
        let frame = call_tree.frames[n];
        if frame.module == 0 || frame.function != 0 {
            continue;
        }
        report.nodes += 1;
        if let Some(&r) = resolved.get(&(frame.module, frame.module_offset)) {
            match r {
                Ok((function, file, line)) => {
                    let f = &mut call_tree.frames[n];
                    f.function = function;
                    f.file = file;
                    f.line = line;
                    report.frames_resolved += 1;
                }
                Err(outside) => {
                    report.frames_outside_symbols += u64::from(outside);
                    report.frames_unresolved += 1;
                }
            }
            continue;
        }
        report.lookups += 1;
        let path = strings.get(frame.module);
        if !modules.contains_key(path) {
            let opened = if path.is_empty() || !Path::new(path).is_file() {
                report.modules_missing += 1;
                None
            } else {
                match ModuleSymbols::open(Path::new(path), search) {
                    Ok((m, info)) => {
                        report.modules_opened += 1;
                        if matches!(
                            info.found_by,
                            Some(FoundBy::BuildId | FoundBy::Debuglink | FoundBy::Debuginfod)
                        ) {
                            report.separate_debug_files += 1;
                        }
                        report.debug_info.push(info);
                        Some(m)
                    }
                    Err(e) => {
                        tracing::debug!("cannot read symbols of {path}: {e}");
                        report.modules_missing += 1;
                        None
                    }
                }
            };
            modules.insert(path.to_owned(), opened);
        }
        let module = modules.get_mut(strings.get(frame.module));
        let Some(Some(module)) = module else {
            resolved.insert((frame.module, frame.module_offset), Err(false));
            report.frames_unresolved += 1;
            continue;
        };
        // Recorded addresses are return addresses; the call instruction is one byte earlier.
        let probe = frame.module_offset.saturating_sub(1);
        match module.resolve(probe) {
            Some((function, file, line)) => {
                let function = strings.intern(&function);
                let file = file.map_or(0, |f| strings.intern(&f));
                let line = line.unwrap_or(0);
                let f = &mut call_tree.frames[n];
                f.function = function;
                f.file = file;
                f.line = line;
                resolved.insert(
                    (frame.module, frame.module_offset),
                    Ok((function, file, line)),
                );
                report.frames_resolved += 1;
            }
            None => {
                let outside = module.symbols.is_past_a_symbol(probe);
                report.frames_outside_symbols += u64::from(outside);
                resolved.insert((frame.module, frame.module_offset), Err(outside));
                report.frames_unresolved += 1;
            }
        }
    }
    report
}
