#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Temporary: bitset spans of the level graphs under vertex orders.
use std::path::Path;

use memscape_cycles::levenshtein::{make_windows, window_distances};
use memscape_cycles::records::{SymbolMode, parse_record_range, record_symbols, select_records};
use memscape_cycles::symbolize::LoadBase;
use memscape_cycles::{DistanceMatrix, RecordFilter, read_trace};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let trace = read_trace(Path::new(&args[1]), None).unwrap();
    let filter = RecordFilter {
        record_range: Some(parse_record_range(&args[2]).unwrap()),
        ..RecordFilter::default()
    };
    let level: f32 = args[3].parse().unwrap();
    let records = select_records(&trace, None, LoadBase::Detect, &filter).unwrap();
    let (symbols, alphabet) = record_symbols(&records, SymbolMode::Address).unwrap();
    let windows = make_windows(&symbols, 10).unwrap();
    let dist = window_distances(&windows, alphabet).unwrap();
    let n = dist.size();
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); n];
    for i in 0..n {
        for j in 0..i {
            if dist.distance(i, j) <= level {
                adj[i].push(j as u32);
                adj[j].push(i as u32);
            }
        }
    }
    {
        let nonisolated = adj.iter().filter(|a| !a.is_empty()).count();
        let maxdeg = adj.iter().map(Vec::len).max().unwrap_or(0);
        let mut degs: Vec<usize> = adj.iter().map(Vec::len).collect();
        degs.sort_unstable();
        println!(
            "level {level}: non-isolated {nonisolated} of {n}, max degree {maxdeg}, median {} p90 {}",
            degs[n / 2],
            degs[n * 9 / 10]
        );
    }
    {
        let mut comp = vec![usize::MAX; n];
        let mut sizes = Vec::new();
        for s in 0..n {
            if comp[s] != usize::MAX {
                continue;
            }
            let id = sizes.len();
            comp[s] = id;
            let mut stack = vec![s];
            let mut size = 0;
            while let Some(v) = stack.pop() {
                size += 1;
                for &x in &adj[v] {
                    if comp[x as usize] == usize::MAX {
                        comp[x as usize] = id;
                        stack.push(x as usize);
                    }
                }
            }
            sizes.push(size);
        }
        sizes.sort_unstable_by(|a, b| b.cmp(a));
        println!(
            "components {} largest {:?}",
            sizes.len(),
            &sizes[..sizes.len().min(12)]
        );
        if args.len() > 4 {
            return;
        }
    }
    let edges: usize = adj.iter().map(Vec::len).sum::<usize>() / 2;
    let span = |pos: &[u32]| -> (f64, f64) {
        // mean over edges of the word span of the AND of the two rows (bounded by the rows'
        // own spans), and mean row span.
        let row_span: Vec<(u32, u32)> = (0..n)
            .map(|v| {
                let lo = adj[v].iter().map(|&x| pos[x as usize]).min().unwrap_or(0) / 64;
                let hi = adj[v].iter().map(|&x| pos[x as usize]).max().unwrap_or(0) / 64;
                (lo, hi)
            })
            .collect();
        let mut total = 0f64;
        let mut count = 0f64;
        for u in 0..n {
            for &v in &adj[u] {
                if (v as usize) < u {
                    let (a, b) = (row_span[u], row_span[v as usize]);
                    let lo = a.0.max(b.0);
                    let hi = a.1.min(b.1);
                    total += if hi >= lo {
                        f64::from(hi - lo + 1)
                    } else {
                        0.0
                    };
                    count += 1.0;
                }
            }
        }
        let rows = row_span
            .iter()
            .map(|&(lo, hi)| f64::from(hi - lo + 1))
            .sum::<f64>()
            / n as f64;
        (total / count.max(1.0), rows)
    };
    let identity: Vec<u32> = (0..n as u32).collect();
    println!(
        "n {n} edges {edges} words {} identity: edge span {:?}",
        n.div_ceil(64),
        span(&identity)
    );
    // Reverse Cuthill–McKee.
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    let mut by_degree: Vec<usize> = (0..n).collect();
    by_degree.sort_by_key(|&v| adj[v].len());
    for &s in &by_degree {
        if seen[s] {
            continue;
        }
        seen[s] = true;
        let start = order.len();
        order.push(s);
        let mut k = start;
        while k < order.len() {
            let v = order[k];
            k += 1;
            let mut next: Vec<usize> = adj[v]
                .iter()
                .map(|&x| x as usize)
                .filter(|&x| !seen[x])
                .collect();
            next.sort_by_key(|&x| adj[x].len());
            for x in next {
                seen[x] = true;
                order.push(x);
            }
        }
    }
    order.reverse();
    let mut pos = vec![0u32; n];
    for (p, &v) in order.iter().enumerate() {
        pos[v] = p as u32;
    }
    println!("rcm: edge span {:?}", span(&pos));
}
