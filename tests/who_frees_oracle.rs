//! The who-frees-what panel (allocation-map pane) checked against an independent oracle: a C
//! program (`tests/fixtures/who_frees.c`) that counts its own allocations and frees per
//! (allocating function, freeing function) and per (allocating thread, freeing thread), run
//! through `sh -c` under `memscape record` as a user runs it. The panel's tables
//! (`FreeSiteTable::compute` over the recorded `.msc`) must hold exactly the program's counts,
//! blocks and bytes, with no other row for its functions or threads; never-freed blocks are in
//! no row.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::memscape_recording as memscape;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use memscape_views::alloc_map::free_sites::FreeSiteTable;

/// (from, to) → (blocks, bytes).
type Counts = BTreeMap<(String, String), (u64, u64)>;

/// The program's own counts: `site` or `thread` lines.
fn oracle(text: &str, kind: &str) -> Counts {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 5 && f[0] == kind).then(|| {
                (
                    (f[1].to_owned(), f[2].to_owned()),
                    (f[3].parse().unwrap(), f[4].parse().unwrap()),
                )
            })
        })
        .collect()
}

/// The function of `names` that `location` (a frame as the panel shows it) is in.
fn function<'a>(location: &str, names: &[&'a str]) -> Option<&'a str> {
    names.iter().copied().find(|n| {
        location
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|word| word == *n)
    })
}

#[test]
fn who_frees_what_holds_the_programs_own_counts() {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("who_frees");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/who_frees.c");
    let status = Command::new("gcc")
        .args(["-O0", "-g", "-fno-omit-frame-pointer", "-pthread", "-o"])
        .arg(&exe)
        .arg(&source)
        .status()
        .expect("gcc (make test installs it)");
    assert!(status.success());
    let msc = dir.path().join("run.msc");
    let counts = dir.path().join("counts.txt");
    let out = memscape()
        .arg("record")
        .arg("-o")
        .arg(&msc)
        .args(["--", "sh", "-c", "\"$0\" \"$1\""])
        .arg(&exe)
        .arg(&counts)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&counts).unwrap();
    let (sites, threads) = (oracle(&text, "site"), oracle(&text, "thread"));
    assert_eq!(sites.len(), 6, "{text}");

    let trace = memscape_trace::read_msc(&msc).unwrap();
    let table = FreeSiteTable::compute(&trace);

    // Allocation site × free site: rows are call stacks (make_a runs in two threads, so it is
    // two sites); summed per (maker, dropper) they are the program's counts.
    let makers = ["make_a", "make_b", "make_c"];
    let droppers = ["drop_x", "drop_y", "drop_z"];
    let mut seen = Counts::new();
    for row in &table.pairs {
        let (made, dropped) = (
            function(&row.alloc_location, &makers),
            function(&row.free_location, &droppers),
        );
        match (made, dropped) {
            (Some(m), Some(d)) => {
                let e = seen.entry((m.into(), d.into())).or_default();
                e.0 += row.blocks;
                e.1 += row.bytes;
                assert!(row.median_lifetime_ns > 0, "{row:?}");
            }
            // The shell's and libc's own blocks are neither made nor dropped by the program.
            (None, None) => {}
            _ => panic!("a row half in the program's functions: {row:#?}"),
        }
    }
    assert_eq!(
        seen, sites,
        "the panel's site rows against the program's counts"
    );

    // Frees across threads: the program's pairs of different threads, nothing else (the shell
    // frees nothing across threads).
    let cross: Counts = threads.into_iter().filter(|((a, f), _)| a != f).collect();
    assert_eq!(cross.len(), 3);
    // Threads are named as the program named them, with their thread id: `o-w1 (2097)`.
    let thread = |name: &str| {
        let (base, tid) = name.rsplit_once(" (").unwrap_or_else(|| panic!("{name}"));
        assert!(tid.trim_end_matches(')').parse::<u32>().is_ok(), "{name}");
        base.to_owned()
    };
    let mut seen = Counts::new();
    for row in &table.threads {
        let e = seen
            .entry((
                thread(&row.alloc_thread_name),
                thread(&row.free_thread_name),
            ))
            .or_default();
        e.0 += row.frees;
        e.1 += row.bytes;
    }
    assert_eq!(
        seen, cross,
        "the panel's thread rows against the program's counts"
    );
    // One row per pair of threads, most frees first.
    assert_eq!(table.threads.len(), cross.len());
    assert!(table.threads.windows(2).all(|w| w[0].frees >= w[1].frees));

    // A row's blocks, as the panel highlights them: as many as the row counts.
    for row in &table.pairs {
        let blocks =
            memscape_trace::summary::site_pair_blocks(&trace, row.alloc_site, row.free_site);
        assert_eq!(blocks.len() as u64, row.blocks, "{row:?}");
    }
    for row in &table.threads {
        let blocks =
            memscape_trace::summary::thread_pair_blocks(&trace, row.alloc_thread, row.free_thread);
        assert_eq!(blocks.len() as u64, row.frees, "{row:?}");
    }
}
