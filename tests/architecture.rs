//! The binary's layering, measured on its source: which file imports which (every
//! `crate::…`, `super::…` and child-module path in `src/`), the import circles (strongly
//! connected components of that graph), and the rules of ARCHITECTURE.md:
//!
//! * no import circle spans more than one module of `src/` (`main`, `cli`, `commands`, `app`,
//!   `panes`): files of one module may use each other, modules only downwards;
//! * only `main` imports `commands`; nothing but `main` and `commands` imports `app`; `panes`
//!   imports neither, nor does `cli`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `src/` and its module path (`src/app/loader.rs` → `app::loader`,
/// `src/app/mod.rs` → `app`, `src/main.rs` → the crate root).
fn modules(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap();
            let mut parts: Vec<String> = rel
                .iter()
                .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
                .collect();
            if parts.last().is_some_and(|l| l == "mod" || l == "main") {
                parts.pop();
            }
            out.insert(parts, path);
        }
    }
    out
}

/// The module paths `text` refers to: `crate::a::b`, `super::…::a`, `self::a`, and paths
/// starting with a child module it declares (`mod worker;` … `worker::spawn`).
fn references(me: &[String], text: &str) -> Vec<Vec<String>> {
    // Comments say nothing about imports.
    let code: String = text
        .lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let children: BTreeSet<String> = code
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l
                .strip_prefix("pub mod ")
                .or_else(|| l.strip_prefix("mod "))?;
            Some(rest.trim_end_matches(';').trim().to_owned())
        })
        .collect();
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let bytes: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        // The start of a path: not preceded by an identifier character or `::`.
        let starts = i == 0 || !(is_ident(bytes[i - 1]) || bytes[i - 1] == ':');
        if !starts || !is_ident(bytes[i]) {
            i += 1;
            continue;
        }
        let mut segments = Vec::new();
        let mut j = i;
        loop {
            let s = j;
            while j < bytes.len() && is_ident(bytes[j]) {
                j += 1;
            }
            segments.push(bytes[s..j].iter().collect::<String>());
            if j + 2 < bytes.len()
                && bytes[j] == ':'
                && bytes[j + 1] == ':'
                && is_ident(bytes[j + 2])
            {
                j += 2;
            } else {
                break;
            }
        }
        i = j.max(i + 1);
        if segments.len() < 2 && !children.contains(&segments[0]) {
            continue;
        }
        let mut base: Vec<String> = match segments[0].as_str() {
            "crate" => {
                segments.remove(0);
                Vec::new()
            }
            "super" => {
                let mut base = me.to_vec();
                while segments.first().is_some_and(|s| s == "super") {
                    segments.remove(0);
                    base.pop();
                }
                base
            }
            "self" => {
                segments.remove(0);
                me.to_vec()
            }
            first if children.contains(first) => me.to_vec(),
            _ => continue,
        };
        base.extend(segments);
        out.push(base);
    }
    out
}

struct Graph {
    files: Vec<Vec<String>>,
    edges: BTreeSet<(usize, usize)>,
}

fn graph(src: &Path) -> Graph {
    let modules = modules(src);
    let files: Vec<Vec<String>> = modules.keys().cloned().collect();
    let index: BTreeMap<&Vec<String>, usize> =
        files.iter().enumerate().map(|(i, f)| (f, i)).collect();
    let mut edges = BTreeSet::new();
    for (i, me) in files.iter().enumerate() {
        let text = std::fs::read_to_string(&modules[me]).unwrap();
        for path in references(me, &text) {
            // The longest prefix that is a file: the module the path points into.
            let target = (0..=path.len())
                .rev()
                .find_map(|n| index.get(&path[..n].to_vec()).copied());
            if let Some(t) = target
                && t != i
                // A module declaring its children is no import.
                && !(files[t].len() == me.len() + 1 && files[t].starts_with(me) && path.len() == files[t].len())
            {
                edges.insert((i, t));
            }
        }
    }
    Graph { files, edges }
}

/// Strongly connected components (Tarjan), as lists of file indices.
fn components(n: usize, edges: &BTreeSet<(usize, usize)>) -> Vec<Vec<usize>> {
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in edges {
        next[a].push(b);
    }
    struct State {
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        counter: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(v: usize, next: &[Vec<usize>], s: &mut State) {
        s.index[v] = Some(s.counter);
        s.low[v] = s.counter;
        s.counter += 1;
        s.stack.push(v);
        s.on[v] = true;
        for &w in &next[v] {
            match s.index[w] {
                None => {
                    visit(w, next, s);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on[w] => s.low[v] = s.low[v].min(iw),
                _ => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut c = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on[w] = false;
                c.push(w);
                if w == v {
                    break;
                }
            }
            s.out.push(c);
        }
    }
    let mut s = State {
        index: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        counter: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(v, &next, &mut s);
        }
    }
    s.out
}

/// The top-level module of a file (`main` for the crate root).
fn top(file: &[String]) -> String {
    file.first().cloned().unwrap_or_else(|| "main".to_owned())
}

fn name(file: &[String]) -> String {
    if file.is_empty() {
        "main".to_owned()
    } else {
        file.join("::")
    }
}

#[test]
fn no_import_circle_spans_two_modules_and_nothing_imports_back() {
    // Another tree can be measured (e.g. an old checkout's src/) by naming it here.
    let src = std::env::var_os("MEMSCAPE_ARCHITECTURE_SRC")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let g = graph(&src);
    // The measurement ARCHITECTURE.md quotes: files, imports, and the largest circle.
    let comps = components(g.files.len(), &g.edges);
    let largest = comps.iter().map(Vec::len).max().unwrap_or(0);
    let spanning = comps
        .iter()
        .filter(|c| {
            c.iter()
                .map(|&f| top(&g.files[f]))
                .collect::<BTreeSet<_>>()
                .len()
                > 1
        })
        .count();
    eprintln!(
        "{}: {} files, {} imports between files, {} import circles (largest: {largest} files), \
         {spanning} spanning several modules",
        src.display(),
        g.files.len(),
        g.edges.len(),
        comps.iter().filter(|c| c.len() > 1).count()
    );
    assert!(
        g.files.len() > 20 && g.edges.len() > 20,
        "the parser sees the code"
    );
    for c in &comps {
        let tops: BTreeSet<String> = c.iter().map(|&f| top(&g.files[f])).collect();
        assert!(
            tops.len() == 1,
            "an import circle spans the modules {tops:?}: {:?}",
            c.iter().map(|&f| name(&g.files[f])).collect::<Vec<_>>()
        );
    }
    for &(a, b) in &g.edges {
        let (from, to) = (top(&g.files[a]), top(&g.files[b]));
        let what = format!("{} imports {}", name(&g.files[a]), name(&g.files[b]));
        if to == "commands" {
            assert!(
                from == "main" || from == "commands",
                "only main imports commands: {what}"
            );
        }
        if to == "app" {
            assert!(
                ["main", "commands", "app"].contains(&from.as_str()),
                "only main and commands import app: {what}"
            );
        }
        if from == "panes" || from == "cli" {
            assert!(
                to != "app" && to != "commands" && to != "main",
                "{from} imports upwards: {what}"
            );
        }
    }
}

/// The checker finds circles: a made-up tree whose panes import the app back.
#[test]
fn the_checker_sees_a_circle_across_modules() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("app")).unwrap();
    std::fs::create_dir_all(src.join("panes")).unwrap();
    std::fs::write(src.join("main.rs"), "mod app;\nmod panes;\n").unwrap();
    std::fs::write(src.join("app/mod.rs"), "use crate::panes::Pane;\n").unwrap();
    std::fs::write(
        src.join("panes/mod.rs"),
        "// crate::app in a comment is no import\npub struct Pane;\nfn f() { crate::app::run(); }\n",
    )
    .unwrap();
    let g = graph(src);
    let comps = components(g.files.len(), &g.edges);
    let spanning: Vec<_> = comps
        .iter()
        .filter(|c| {
            c.iter()
                .map(|&f| top(&g.files[f]))
                .collect::<BTreeSet<_>>()
                .len()
                > 1
        })
        .collect();
    assert_eq!(spanning.len(), 1, "{comps:?} {:?}", g.edges);
}

/// The views crate keeps the same discipline: its modules (dataset, picture, gpu, each view,
/// tour, …) import each other only one way.
#[test]
fn no_import_circle_spans_two_modules_of_the_views_crate() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/memscape-views/src");
    let g = graph(&src);
    assert!(
        g.files.len() > 30 && g.edges.len() > 50,
        "the parser sees the code"
    );
    for c in components(g.files.len(), &g.edges) {
        let tops: BTreeSet<String> = c.iter().map(|&f| top(&g.files[f])).collect();
        assert!(
            tops.len() == 1,
            "an import circle spans the modules {tops:?}: {:?}",
            c.iter().map(|&f| name(&g.files[f])).collect::<Vec<_>>()
        );
    }
}
