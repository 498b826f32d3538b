//! Symbolization of call-stack frames from the binaries a trace names, when they exist on this
//! machine (DWARF line tables and symbol tables through addr2line). Missing or unreadable
//! binaries are skipped: frames then keep module + offset.

use std::collections::HashMap;
use std::path::Path;

use crate::model::Trace;

/// What [`symbolize`] achieved.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SymbolizeReport {
    pub modules_opened: u64,
    pub modules_missing: u64,
    pub frames_resolved: u64,
    pub frames_unresolved: u64,
}

/// Resolves function, file and line of every frame that has a module but no function yet.
pub fn symbolize(trace: &mut Trace) -> SymbolizeReport {
    let mut report = SymbolizeReport::default();
    let mut loaders: HashMap<u32, Option<addr2line::Loader>> = HashMap::new();
    for n in 1..trace.call_tree.frames.len() {
        let frame = trace.call_tree.frames[n];
        if frame.module == 0 || frame.function != 0 {
            continue;
        }
        let loader = loaders.entry(frame.module).or_insert_with(|| {
            let path = trace.strings.get(frame.module);
            if path.is_empty() || !Path::new(path).is_file() {
                report.modules_missing += 1;
                return None;
            }
            match addr2line::Loader::new(path) {
                Ok(l) => {
                    report.modules_opened += 1;
                    Some(l)
                }
                Err(e) => {
                    tracing::debug!("cannot read symbols of {path}: {e}");
                    report.modules_missing += 1;
                    None
                }
            }
        });
        let Some(loader) = loader else {
            report.frames_unresolved += 1;
            continue;
        };
        // heaptrack records return addresses; the call instruction is one byte earlier.
        let probe = frame.module_offset.saturating_sub(1);
        let function = loader
            .find_frames(probe)
            .ok()
            .and_then(|mut frames| {
                let mut last = None;
                // The last frame of an inlined chain is the real (outermost) function.
                while let Ok(Some(f)) = frames.next() {
                    if let Some(func) = f
                        .function
                        .and_then(|n| n.demangle().ok().map(|d| d.into_owned()))
                    {
                        last = Some(func);
                    }
                }
                last
            })
            .or_else(|| {
                loader
                    .find_symbol(probe)
                    .map(|s| addr2line::demangle_auto(s.into(), None).into_owned())
            });
        let location = loader.find_location(probe).ok().flatten();
        let (file, line) = location
            .map(|l| (l.file.map(str::to_owned), l.line))
            .unwrap_or((None, None));
        match function {
            Some(function) => {
                let function = trace.strings.intern(&function);
                let file = file.map_or(0, |f| trace.strings.intern(&f));
                let f = &mut trace.call_tree.frames[n];
                f.function = function;
                f.file = file;
                f.line = line.unwrap_or(0);
                report.frames_resolved += 1;
            }
            None => report.frames_unresolved += 1,
        }
    }
    report
}
