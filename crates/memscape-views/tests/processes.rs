//! Processes of a multi-process recording in the views, composed in-process: the allocation
//! map bins and colours by process by default (each process on its own address axis, though
//! both use the same addresses), a colour key names them, and `process` selects some.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memscape_trace::process::Process;
use memscape_trace::{Frame, Trace, TraceBuilder, TraceFormat};
use memscape_views::dataset::{AllocTraceData, Dataset, DatasetContent};
use memscape_views::picture::Layer;
use memscape_views::{Picture, ViewKind};

mod common;
use common::settings;

/// A shell (pid 100, `sh`) and its child (pid 101, `child`, two threads) allocating at the
/// same addresses: 8 blocks of 256 B in the shell; in the child 40 blocks of 1 KiB from
/// `child_main` and 20 of 4 KiB from `child_cache`, half of them freed.
pub fn two_processes() -> Trace {
    let mut b = TraceBuilder::with_event_times("two.msc");
    let site = |b: &mut TraceBuilder, ip, name: &str| {
        let function = b.strings.intern(name);
        b.call_tree.child(
            0,
            Frame {
                ip,
                function,
                ..Frame::default()
            },
        )
    };
    let sh_site = site(&mut b, 0x10, "sh_main");
    let main_site = site(&mut b, 0x20, "child_main");
    let cache_site = site(&mut b, 0x30, "child_cache");
    let sh = b.process(Process {
        pid: 100,
        parent_pid: 1,
        command_line: "sh -c ./child".into(),
        executable: "/bin/sh".into(),
        ..Process::default()
    });
    let child = b.process(Process {
        pid: 101,
        parent_pid: 100,
        command_line: "./child".into(),
        executable: "/tmp/child".into(),
        ..Process::default()
    });
    let mut line = 0u64;
    let mut next = || {
        line += 1;
        line
    };
    b.set_process(sh);
    let t_sh = b.thread("sh");
    for k in 0..8u64 {
        let l = next();
        b.alloc(l, l * 10, 0x1000 + k * 256, 256, 256, t_sh, sh_site);
    }
    b.set_process(child);
    let (t_main, t_cache) = (b.thread("main"), b.thread("cache"));
    for k in 0..40u64 {
        let l = next();
        b.alloc(l, l * 10, 0x1000 + k * 1024, 1000, 1024, t_main, main_site);
    }
    for k in 0..20u64 {
        let l = next();
        b.alloc(
            l,
            l * 10,
            0x20_0000 + k * 4096,
            4096,
            4096,
            t_cache,
            cache_site,
        );
    }
    for k in (0..40u64).step_by(2) {
        let l = next();
        b.free(l, l * 10, 0x1000 + k * 1024);
    }
    b.finish(TraceFormat::Msc, true)
}

pub fn dataset(trace: Trace) -> Dataset {
    Dataset {
        name: "two.msc".into(),
        content: DatasetContent::AllocTrace(Box::new(AllocTraceData::new(trace))),
        links: Default::default(),
    }
}

fn compose(d: &Dataset, kind: ViewKind, fields: &str) -> Picture {
    settings(kind, fields)
        .compose(d, egui::vec2(900.0, 600.0))
        .unwrap_or_else(|e| panic!("{fields}: {}", common::chain(&e)))
}

fn maps(p: &Picture) -> Vec<(u64, usize)> {
    p.layers
        .iter()
        .filter_map(|l| match l {
            Layer::Map(m) if m.slot != u32::MAX => Some((m.extent, m.range.len())),
            _ => None,
        })
        .collect()
}

fn texts(p: &Picture) -> Vec<String> {
    p.labels.iter().map(|l| l.text.clone()).collect()
}

#[test]
fn a_multi_process_map_bins_and_colours_by_process_each_on_its_own_axis() {
    let d = dataset(two_processes());
    // Default: one cell per process, the largest peak first, each its own address axis (the
    // shell's 8 × 256 B, not the child's span over the same addresses).
    let p = compose(&d, ViewKind::AllocMap, "panels = \"main\"");
    assert_eq!(
        maps(&p),
        [(maps(&p)[0].0, 60), (8 * 256, 8)],
        "{:?}",
        maps(&p)
    );
    assert!(maps(&p)[0].0 >= 40 * 1024 + 20 * 4096);
    // The colour key names the processes; the cells are labelled by process.
    let p = compose(&d, ViewKind::AllocMap, "panels = \"main,occupancy\"");
    let t = texts(&p);
    for want in ["100 sh", "101 child"] {
        assert!(t.iter().any(|l| l.contains(want)), "{want} not in {t:?}");
    }
    assert!(
        t.iter().any(|l| l.contains("process")),
        "no colour key title in {t:?}"
    );
    // The map unbinned, if asked for: one axis.
    let p = compose(&d, ViewKind::AllocMap, "panels = \"main\"\nbins = \"none\"");
    assert_eq!(maps(&p).len(), 1);
    // Processes selected by pid, by pids, by name.
    for (select, cells) in [
        ("101", vec![60]),
        ("100,101", vec![60, 8]),
        ("^sh$", vec![8]),
    ] {
        let p = compose(
            &d,
            ViewKind::AllocMap,
            &format!("panels = \"main\"\nprocess = \"{select}\""),
        );
        let blocks: Vec<usize> = maps(&p).iter().map(|m| m.1).collect();
        assert_eq!(blocks, cells, "{select}");
    }
    let err = settings(ViewKind::AllocMap, "process = \"nginx\"")
        .compose(&d, egui::vec2(900.0, 600.0))
        .err()
        .unwrap();
    let message = common::chain(&err);
    assert!(
        message.contains("100 sh") && message.contains("101 child"),
        "{message}"
    );
}

/// A script's shell (pid 300, the whole run, one small block) and the interpreter it ran
/// (pid 301, from 1.9 µs to 4 µs, 1 MiB at its peak, one block never freed), 11 events.
fn a_shell_and_its_interpreter() -> Trace {
    let mut b = TraceBuilder::with_event_times("script.msc");
    let function = b.strings.intern("main");
    let site = b.call_tree.child(
        0,
        Frame {
            ip: 0x10,
            function,
            ..Frame::default()
        },
    );
    let shell = b.process(Process {
        pid: 300,
        parent_pid: 1,
        command_line: "sh ./work.sh".into(),
        start_ns: 0,
        end_ns: 10_000,
        ..Process::default()
    });
    let interpreter = b.process(Process {
        pid: 301,
        parent_pid: 300,
        command_line: "python3 work.py".into(),
        start_ns: 1_900,
        end_ns: 4_000,
        ..Process::default()
    });
    b.set_process(shell);
    let t = b.thread("sh");
    b.alloc(1, 100, 0x1000, 64, 64, t, site);
    b.alloc(2, 200, 0x1040, 64, 64, t, site);
    b.free(3, 300, 0x1000);
    b.set_process(interpreter);
    let t = b.thread("python3");
    for k in 0..4u64 {
        b.alloc(
            4 + k,
            2_000 + 100 * k,
            0x10_0000 + (k << 18),
            1 << 18,
            1 << 18,
            t,
            site,
        );
    }
    for k in 0..3u64 {
        b.free(8 + k, 2_500 + 100 * k, 0x10_0000 + (k << 18));
    }
    b.set_process(shell);
    b.free(11, 9_000, 0x1040);
    b.finish(TraceFormat::Msc, true)
}

/// The process grid: the interpreter (the larger peak) leads it, in the larger cell, and each
/// cell spans its own process's life (on either time axis); the time layout keeps one axis.
#[test]
fn process_cells_lead_with_the_largest_sized_by_it_on_their_own_time() {
    let d = dataset(a_shell_and_its_interpreter());
    let cells = |fields: &str| -> Vec<(egui::Rect, f64, f64, usize)> {
        compose(&d, ViewKind::AllocMap, fields)
            .layers
            .iter()
            .filter_map(|l| match l {
                Layer::Map(m) if m.slot != u32::MAX => {
                    Some((m.rect, m.window.t0, m.window.t_span, m.range.len()))
                }
                _ => None,
            })
            .collect()
    };
    for (axis, interpreter_span, shell_span) in [
        // The interpreter's first allocation (event 3) to its last free (event 9); the
        // shell's first allocation to its last free (event 10, the last); on the wall clock
        // from the first allocation to the process's end.
        ("events", (3.0, 10.0), (0.0, 11.0)),
        ("wall", (2_000.0, 4_000.0), (100.0, 10_000.0)),
    ] {
        let c = cells(&format!("panels = \"main\"\ntime = \"{axis}\""));
        assert_eq!(c.len(), 2, "{axis}");
        let (interp, shell) = (c[0], c[1]);
        assert_eq!((interp.3, shell.3), (4, 2), "{axis}: the interpreter first");
        assert!(
            interp.0.area() > 2.0 * shell.0.area(),
            "{axis}: the larger peak gets the larger cell: {:?} vs {:?}",
            interp.0,
            shell.0
        );
        let span = |c: (egui::Rect, f64, f64, usize)| (c.1, c.1 + c.2);
        assert_eq!(
            span(interp),
            interpreter_span,
            "{axis}: the interpreter's life"
        );
        assert_eq!(span(shell), shell_span, "{axis}: the shell's");
        // Stacked in the time layout: one time axis for both.
        let c = cells(&format!(
            "panels = \"main\"\ntime = \"{axis}\"\nlayout = \"time\""
        ));
        assert_eq!((c[0].1, c[0].2), (c[1].1, c[1].2), "{axis}: time layout");
    }
    // The titles say whose life each cell spans.
    let p = compose(
        &d,
        ViewKind::AllocMap,
        "panels = \"main,occupancy\"\ntime = \"wall\"",
    );
    let t = texts(&p);
    assert!(
        t.iter()
            .any(|l| l.contains("301 python3") && l.contains("2.0–4.0 µs")),
        "{t:?}"
    );
}

/// Looked at: the picture of the two processes, with the occupancy bars and the colour key.
#[test]
fn a_multi_process_map_draws() {
    let d = dataset(two_processes());
    let image = common::draw(
        &d,
        ViewKind::AllocMap,
        "panels = \"main,occupancy,context\"",
        900,
        600,
    );
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("processes");
    std::fs::create_dir_all(&dir).unwrap();
    image.save_png(&dir.join("two_processes.png")).unwrap();
}

#[test]
fn a_multi_process_heap_tree_starts_at_the_largest_peak_and_groups_by_process() {
    let d = dataset(two_processes());
    let has = |p: &Picture, s: &str| texts(p).iter().any(|l| l.contains(s));
    // Default: the child's heap (the largest peak), not the shell's.
    let p = compose(&d, ViewKind::Sunburst, "peak = true");
    assert!(
        has(&p, "child_main") && has(&p, "child_cache"),
        "{:?}",
        texts(&p)
    );
    assert!(!has(&p, "sh_main"), "{:?}", texts(&p));
    // Process as a grouping key: both processes, each its own wedge.
    let p = compose(&d, ViewKind::Icicle, "group = \"process,site\"\nat = 90");
    for want in ["100 sh", "101 child", "sh_main", "child_main"] {
        assert!(has(&p, want), "{want} not in {:?}", texts(&p));
    }
    // One chosen.
    let p = compose(&d, ViewKind::Sunburst, "process = \"100\"\nat = 90");
    assert!(
        has(&p, "sh_main") && !has(&p, "child_main"),
        "{:?}",
        texts(&p)
    );
}

/// The map's context view starts on the process the heap tree opens on (the largest peak), not
/// on the one with the most blocks: a shell of 50 small blocks beside a child with two large.
#[test]
fn a_multi_process_maps_context_starts_at_the_largest_peak() {
    use memscape_views::alloc_map::bins::{BinBy, BinnedScene};
    let mut b = TraceBuilder::with_event_times("peak.msc");
    let site = b.call_tree.child(
        0,
        Frame {
            ip: 0x10,
            ..Frame::default()
        },
    );
    let process = |b: &mut TraceBuilder, pid, exe: &str| {
        b.process(Process {
            pid,
            parent_pid: 1,
            command_line: exe.into(),
            executable: exe.into(),
            ..Process::default()
        })
    };
    let (many, large) = (
        process(&mut b, 200, "/bin/many"),
        process(&mut b, 201, "/bin/large"),
    );
    let mut line = 0u64;
    b.set_process(many);
    let t = b.thread("many");
    for k in 0..50u64 {
        line += 1;
        b.alloc(line, line * 10, 0x1000 + k * 16, 16, 16, t, site);
    }
    b.set_process(large);
    let t = b.thread("large");
    for k in 0..2u64 {
        line += 1;
        b.alloc(
            line,
            line * 10,
            0x10_0000 + (k << 20),
            1 << 20,
            1 << 20,
            t,
            site,
        );
    }
    let trace = b.finish(TraceFormat::Msc, true);
    let keep = vec![true; trace.processes.len()];
    let peak = memscape_trace::process::largest_peak(&trace, &keep).unwrap();
    assert_eq!(trace.processes[peak].pid, 201);
    let d = dataset(trace);
    let t = d.alloc_trace().unwrap();
    let binned = BinnedScene::build(&t.trace, t.scene.as_ref().unwrap(), BinBy::Process);
    let most_blocks = (0..binned.bins.len())
        .max_by_key(|&k| binned.bins[k].range.len())
        .unwrap();
    assert!(
        binned.bins[most_blocks].label.contains("200"),
        "{}",
        binned.bins[most_blocks].label
    );
    let focus = &binned.bins[binned.largest_bin()].label;
    assert!(focus.contains("201"), "the context starts on {focus}");
}

/// One thread allocates 12 blocks; `free_here` frees 4 of them on that thread, `free_there`
/// 4 on another thread; 4 stay live.
fn freed_at_two_sites() -> Trace {
    let mut b = TraceBuilder::with_event_times("frees.msc");
    let site = |b: &mut TraceBuilder, ip, name: &str| {
        let function = b.strings.intern(name);
        b.call_tree.child(
            0,
            Frame {
                ip,
                function,
                ..Frame::default()
            },
        )
    };
    let alloc_site = site(&mut b, 0x10, "make_item");
    let (here, there) = (
        site(&mut b, 0x20, "free_here"),
        site(&mut b, 0x30, "free_there"),
    );
    let (main, worker) = (b.thread("main"), b.thread("worker"));
    for k in 0..12u64 {
        b.alloc(k + 1, k * 10, 0x1000 + k * 64, 64, 64, main, alloc_site);
    }
    for k in 0..8u64 {
        let (thread, site) = if k < 4 { (main, here) } else { (worker, there) };
        b.free_from(20 + k, 200 + k * 10, 0x1000 + k * 64, thread, site);
    }
    b.finish(TraceFormat::Msc, true)
}

#[test]
fn blocks_colour_by_freeing_site_and_cross_thread_frees_stand_out() {
    let d = dataset(freed_at_two_sites());
    let p = compose(
        &d,
        ViewKind::AllocMap,
        "panels = \"main,occupancy\"\ncolor = \"free-site\"",
    );
    let t = texts(&p);
    for want in ["freed in free_here", "freed in free_there", "not freed"] {
        assert!(t.iter().any(|l| l.contains(want)), "{want} not in {t:?}");
    }
    // Blocks freed at the two sites differ in colour; live blocks are grey.
    let colors = |p: &Picture| -> Vec<u32> {
        let Some(Layer::Map(m)) = p.layers.first() else {
            panic!("no map layer")
        };
        m.data.blocks.iter().map(|b| b.color).collect()
    };
    let c = colors(&p);
    assert!(c[0] == c[3] && c[4] == c[7] && c[0] != c[4] && c[8] != c[0] && c[8] != c[4]);
    let p = compose(
        &d,
        ViewKind::AllocMap,
        "panels = \"main,occupancy\"\ncolor = \"cross-thread\"",
    );
    assert!(
        texts(&p)
            .iter()
            .any(|l| l.contains("freed by another thread"))
    );
    let c = colors(&p);
    assert!(c[0] == c[3] && c[4] == c[7] && c[0] != c[4] && c[8] != c[4]);
}
