//! Function symbols with their sizes (ELF `st_size`), for naming addresses without DWARF.
//!
//! A stripped library keeps only its dynamic symbols: the exported functions. An address inside
//! an internal (static) function lies past the end of the nearest exported symbol before it,
//! and naming it after that symbol is wrong (`pthread_condattr_setpshared` for an address in
//! libc's thread-stack allocator). An address is named only when it lies inside a symbol's
//! `[address, address + size)`; otherwise the frame keeps module + offset.

use object::{Object, ObjectSymbol, SymbolKind};

#[derive(Debug, Clone)]
struct Entry {
    start: u64,
    end: u64,
    name: String,
    global: bool,
}

/// Sized function symbols of one or more symbol tables (the binary's `.dynsym` and `.symtab`,
/// and those of its debug file).
#[derive(Debug, Clone, Default)]
pub struct SizedSymbols {
    /// Sorted by start.
    entries: Vec<Entry>,
    /// `max_end[i]`: the largest end among entries `0..=i` (bounds the backward scan).
    max_end: Vec<u64>,
}

impl SizedSymbols {
    /// Adds the defined, sized function symbols of `object` (both tables).
    pub fn add(&mut self, object: &object::File<'_>) {
        for symbol in object.symbols().chain(object.dynamic_symbols()) {
            if symbol.kind() != SymbolKind::Text || !symbol.is_definition() || symbol.size() == 0 {
                continue;
            }
            let Ok(name) = symbol.name() else { continue };
            if name.is_empty() {
                continue;
            }
            let start = symbol.address();
            self.entries.push(Entry {
                start,
                end: start.saturating_add(symbol.size()),
                name: name.to_owned(),
                global: symbol.is_global() || symbol.is_weak(),
            });
        }
        self.entries
            .sort_by(|a, b| a.start.cmp(&b.start).then(a.end.cmp(&b.end)));
        self.entries
            .dedup_by(|a, b| a.start == b.start && a.end == b.end && a.name == b.name);
        let mut max = 0;
        self.max_end = self
            .entries
            .iter()
            .map(|e| {
                max = max.max(e.end);
                max
            })
            .collect();
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The (mangled) name of the function symbol that contains `address`: the innermost when
    /// several do; among aliases of one range a global name without leading underscores.
    pub fn lookup(&self, address: u64) -> Option<&str> {
        let upto = self.entries.partition_point(|e| e.start <= address);
        let mut best: Option<&Entry> = None;
        for i in (0..upto).rev() {
            if self.max_end[i] <= address {
                break;
            }
            let e = &self.entries[i];
            if address >= e.end {
                continue;
            }
            best = match best {
                None => Some(e),
                Some(b) if better(e, b) => Some(e),
                keep => keep,
            };
        }
        best.map(|e| e.name.as_str())
    }

    /// Whether some symbol starts at or before `address` but none contains it (the case that
    /// used to produce a wrong name).
    pub fn is_past_a_symbol(&self, address: u64) -> bool {
        self.lookup(address).is_none() && self.entries.first().is_some_and(|e| e.start <= address)
    }
}

fn better(a: &Entry, b: &Entry) -> bool {
    let underscores = |e: &Entry| e.name.bytes().take_while(|&c| c == b'_').count();
    (a.end - a.start, !a.global, underscores(a), a.name.len())
        < (b.end - b.start, !b.global, underscores(b), b.name.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(entries: &[(u64, u64, &str, bool)]) -> SizedSymbols {
        let entries: Vec<Entry> = entries
            .iter()
            .map(|&(start, size, name, global)| Entry {
                start,
                end: start + size,
                name: name.to_owned(),
                global,
            })
            .collect();
        let mut max = 0;
        let max_end = entries
            .iter()
            .map(|e| {
                max = max.max(e.end);
                max
            })
            .collect();
        SizedSymbols { entries, max_end }
    }

    #[test]
    fn only_inside_a_symbol() {
        let s = table(&[(0x100, 0x20, "a", true), (0x200, 0x10, "b", true)]);
        assert_eq!(s.lookup(0x100), Some("a"));
        assert_eq!(s.lookup(0x11f), Some("a"));
        assert_eq!(s.lookup(0x120), None);
        assert_eq!(s.lookup(0x1ff), None);
        assert!(s.is_past_a_symbol(0x1ff));
        assert!(!s.is_past_a_symbol(0x50));
        assert_eq!(s.lookup(0x205), Some("b"));
        assert_eq!(s.lookup(0x210), None);
    }

    #[test]
    fn nested_and_aliases() {
        // A big function containing a small local one; two aliases of one range.
        let s = table(&[
            (0x100, 0x1000, "outer", true),
            (0x180, 0x10, "inner", false),
            (0x2000, 0x40, "__libc_malloc", true),
            (0x2000, 0x40, "malloc", true),
        ]);
        assert_eq!(s.lookup(0x185), Some("inner"));
        assert_eq!(s.lookup(0x190), Some("outer"));
        assert_eq!(s.lookup(0x2010), Some("malloc"));
    }
}
