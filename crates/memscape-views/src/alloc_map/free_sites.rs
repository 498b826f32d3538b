//! Who frees what, beside the allocation map: the allocation site × free site table (blocks,
//! bytes, median lifetime) and the frees across threads per pair of threads, as `info --json`
//! reports them (`free_sites`, `cross_thread_frees`: one computation, in memscape-trace's
//! `summary`), sortable, and the blocks of a row for the linked highlight.

use memscape_trace::Trace;
use memscape_trace::summary::{SitePair, ThreadPair};

/// Rows of the site table (the largest by bytes; `info` reports 20 by default).
pub const ROWS: usize = 500;

/// A column the site table sorts by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortBy {
    AllocSite,
    FreeSite,
    Blocks,
    Bytes,
    Lifetime,
}

impl SortBy {
    pub const ALL: [SortBy; 5] = [
        SortBy::AllocSite,
        SortBy::FreeSite,
        SortBy::Blocks,
        SortBy::Bytes,
        SortBy::Lifetime,
    ];

    pub fn header(self) -> &'static str {
        match self {
            SortBy::AllocSite => "allocated at",
            SortBy::FreeSite => "freed at",
            SortBy::Blocks => "blocks",
            SortBy::Bytes => "bytes",
            SortBy::Lifetime => "median lifetime",
        }
    }
}

/// The two tables of a trace.
#[derive(Debug, Clone, Default)]
pub struct FreeSiteTable {
    pub pairs: Vec<SitePair>,
    pub threads: Vec<ThreadPair>,
}

impl FreeSiteTable {
    /// Walks every block once (twice: sites, threads): off the UI thread.
    pub fn compute(trace: &Trace) -> Self {
        Self {
            pairs: memscape_trace::summary::site_pairs(trace, ROWS),
            threads: memscape_trace::summary::cross_thread_frees(trace),
        }
    }

    /// Sorts the site rows by `by`, `ascending` or not; ties by bytes (largest first), then
    /// by sites.
    pub fn sort(&mut self, by: SortBy, ascending: bool) {
        self.pairs.sort_by(|a, b| {
            let o = match by {
                SortBy::AllocSite => a.alloc_location.cmp(&b.alloc_location),
                SortBy::FreeSite => a.free_location.cmp(&b.free_location),
                SortBy::Blocks => a.blocks.cmp(&b.blocks),
                SortBy::Bytes => a.bytes.cmp(&b.bytes),
                SortBy::Lifetime => a.median_lifetime_ns.cmp(&b.median_lifetime_ns),
            };
            let o = if ascending { o } else { o.reverse() };
            o.then(b.bytes.cmp(&a.bytes))
                .then((a.alloc_site, a.free_site).cmp(&(b.alloc_site, b.free_site)))
        });
    }
}

/// A lifetime in the unit that suits it.
pub fn lifetime(ns: u64) -> String {
    match ns {
        0..1_000 => format!("{ns} ns"),
        1_000..1_000_000 => format!("{:.1} µs", ns as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} ms", ns as f64 / 1e6),
        _ => format!("{:.2} s", ns as f64 / 1e9),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(alloc: &str, free: &str, blocks: u64, bytes: u64, life: u64) -> SitePair {
        SitePair {
            alloc_site: blocks as u32,
            free_site: bytes as u32,
            alloc_location: alloc.into(),
            free_location: free.into(),
            blocks,
            bytes,
            median_lifetime_ns: life,
        }
    }

    #[test]
    fn rows_sort_by_each_column_both_ways() {
        let mut t = FreeSiteTable {
            pairs: vec![
                row("b", "x", 3, 10, 500),
                row("a", "z", 1, 30, 100),
                row("c", "y", 2, 20, 900),
            ],
            threads: Vec::new(),
        };
        let order = |t: &FreeSiteTable| -> String {
            t.pairs.iter().map(|r| r.alloc_location.as_str()).collect()
        };
        t.sort(SortBy::Bytes, false);
        assert_eq!(order(&t), "acb");
        t.sort(SortBy::Blocks, false);
        assert_eq!(order(&t), "bca");
        t.sort(SortBy::Lifetime, true);
        assert_eq!(order(&t), "abc");
        t.sort(SortBy::AllocSite, true);
        assert_eq!(order(&t), "abc");
        t.sort(SortBy::FreeSite, false);
        assert_eq!(order(&t), "acb");
        assert_eq!(lifetime(1_500_000), "1.5 ms");
    }
}
