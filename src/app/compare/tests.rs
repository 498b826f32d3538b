//! Compared files in the whole shell (`MemscapeApp` driven frame by frame without a window or a
//! GPU, with the real loader and watcher): a file of `--diff A B` truncated, rewritten or
//! deleted while open shows its bar (named A or B) with Reload in the difference pane, and a
//! reload compares the new data; a load of the pair that fails cancels the comparison and
//! leaves the other file, and the app, working.

use std::path::Path;
use std::time::{Duration, Instant};

use super::super::files::{DiskChange, Status};
use super::super::*;

const HEADER: &str = "time,op,address,size\n";

/// `n` allocations of `size` bytes (times from `from`), none freed.
fn allocations(from: u64, n: u64, size: u64) -> String {
    (from..from + n)
        .map(|i| format!("{i},alloc,{:#x},{size}\n", 0x1000 + i * 64))
        .collect()
}

struct Shell {
    ctx: egui::Context,
    app: MemscapeApp,
    frame: eframe::Frame,
    /// Where the next frame's pointer events go.
    input: Vec<egui::Event>,
}

impl Shell {
    fn new(sources: Vec<LoadSource>, compare: bool) -> Self {
        let ctx = egui::Context::default();
        let cc = eframe::CreationContext::_new_kittest(ctx.clone());
        let startup = Startup {
            compare,
            ..Default::default()
        };
        let app = MemscapeApp::new(&cc, sources, None, startup);
        Self {
            ctx,
            app,
            frame: eframe::Frame::_new_kittest(),
            input: Vec::new(),
        }
    }

    /// Runs one frame; returns every text it drew, with where.
    fn frame(&mut self) -> Vec<(String, egui::Rect)> {
        let input = egui::RawInput {
            screen_rect: Some(egui::Rect::from_min_size(
                egui::Pos2::ZERO,
                egui::vec2(1200.0, 800.0),
            )),
            events: std::mem::take(&mut self.input),
            ..Default::default()
        };
        let (app, frame) = (&mut self.app, &mut self.frame);
        let mut output = self.ctx.run_ui(input, |ui| eframe::App::ui(app, ui, frame));
        // No painter applies the texture updates (egui asks that they be handled).
        output.textures_delta.clear();
        let mut texts = Vec::new();
        for clipped in &output.shapes {
            texts_of(&clipped.shape, &mut texts);
        }
        texts
    }

    /// Runs frames until `done` holds (panics after 30 s); returns the last frame's texts.
    fn until(
        &mut self,
        what: &str,
        done: impl Fn(&MemscapeApp, &[(String, egui::Rect)]) -> bool,
    ) -> Vec<(String, egui::Rect)> {
        let start = Instant::now();
        loop {
            let texts = self.frame();
            if done(&self.app, &texts) {
                return texts;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "{what}: not after 30 s; the last frame drew {:?}",
                texts.iter().map(|t| &t.0).collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Clicks the button labelled `label` (as a user would: press and release over it).
    fn click(&mut self, texts: &[(String, egui::Rect)], label: &str) {
        let (_, rect) = texts
            .iter()
            .find(|(t, _)| t == label)
            .unwrap_or_else(|| panic!("no {label} button in {texts:?}"));
        let pos = rect.center();
        self.input.push(egui::Event::PointerMoved(pos));
        self.frame();
        for pressed in [true, false] {
            self.input.push(egui::Event::PointerButton {
                pos,
                button: egui::PointerButton::Primary,
                pressed,
                modifiers: Default::default(),
            });
            self.frame();
        }
    }

    /// The panes: (file, compared files).
    fn panes(&self) -> Vec<(Option<FileId>, Option<[FileId; 2]>)> {
        self.app
            .tree
            .tiles
            .iter()
            .filter_map(|(_, t)| match t {
                egui_tiles::Tile::Pane(p) => Some((p.file, p.compare)),
                _ => None,
            })
            .collect()
    }

    /// The difference pane's view, by address (a new one after a reload).
    fn diff_view(&self) -> Option<usize> {
        self.app.tree.tiles.iter().find_map(|(_, t)| match t {
            egui_tiles::Tile::Pane(p) if p.compare.is_some() => {
                Some(&*p.view as *const dyn View as *const () as usize)
            }
            _ => None,
        })
    }
}

fn texts_of(shape: &egui::Shape, out: &mut Vec<(String, egui::Rect)>) {
    match shape {
        egui::Shape::Text(t) => out.push((
            t.galley.text().to_owned(),
            t.galley.rect.translate(t.pos.to_vec2()),
        )),
        egui::Shape::Vec(shapes) => shapes.iter().for_each(|s| texts_of(s, out)),
        _ => {}
    }
}

fn drew(texts: &[(String, egui::Rect)], part: &str) -> bool {
    texts.iter().any(|(t, _)| t.contains(part))
}

fn blocks(app: &MemscapeApp, id: FileId) -> usize {
    match app
        .files
        .get(id)
        .and_then(|f| f.dataset.as_deref())
        .map(|d| &d.content)
    {
        Some(memscape_views::DatasetContent::AllocTrace(t)) => t.trace.blocks.len(),
        _ => 0,
    }
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write");
}

#[test]
fn a_compared_file_changed_on_disk_shows_its_bar_and_reloads_into_the_comparison() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = (dir.path().join("a.csv"), dir.path().join("b.csv"));
    write(&a, &format!("{HEADER}{}", allocations(1, 40, 16)));
    write(&b, &format!("{HEADER}{}", allocations(1, 30, 48)));
    let mut shell = Shell::new(
        vec![LoadSource::File(a.clone()), LoadSource::File(b.clone())],
        true,
    );
    let (ia, ib) = (1, 2);
    shell.until("the difference pane", |app, _| {
        app.tree
            .tiles
            .iter()
            .any(|(_, t)| matches!(t, egui_tiles::Tile::Pane(p) if p.compare == Some([ia, ib])))
    });
    // `--diff`'s files open no panes of their own: the difference pane is the only one.
    assert_eq!(shell.panes(), [(None, Some([ia, ib]))]);
    let compared = shell.diff_view();

    // A truncated in the middle of a line: A's bar in the difference pane, the data as loaded.
    let len = std::fs::metadata(&a).expect("stat").len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&a)
        .expect("open")
        .set_len(len / 2 + 3)
        .expect("truncate");
    let texts = shell.until("A's bar", |_, t| {
        drew(t, "A (a.csv): ") && drew(t, "truncated")
    });
    assert!(
        drew(&texts, "a.csv): ⟳ the file was truncated"),
        "{texts:?}"
    );
    assert!(!drew(&texts, "B (b.csv): "), "B did not change: {texts:?}");
    assert_eq!(blocks(&shell.app, ia), 40, "no reload without asking");
    // Reload (the bar's button): A's new data, compared again in a new difference view.
    shell.click(&texts, "Reload");
    shell.until("A reloaded", |app, _| {
        blocks(app, ia) < 40 && !app.files.get(ia).is_some_and(|f| f.is_reloading())
    });
    let now = blocks(&shell.app, ia);
    assert!(now > 0);
    assert_ne!(
        shell.diff_view(),
        compared,
        "the comparison of the new data"
    );
    // The difference pane compares A's new data: its legend gives A's new heap.
    let legend = format!("a.csv · {} B", now * 16);
    let texts = shell.until("A's new data compared", |_, t| {
        !drew(t, "A (a.csv): ") && drew(t, &legend)
    });
    assert_eq!(shell.panes().len(), 1, "{texts:?}");

    // B rewritten in place with as many bytes: B's bar.
    let mut text = std::fs::read_to_string(&b).expect("read");
    text = text.replace(",48\n", ",47\n");
    std::thread::sleep(Duration::from_millis(20));
    write(&b, &text);
    shell.until("B's bar", |_, t| {
        drew(t, "B (b.csv): ") && drew(t, "b.csv): ⟳ the file was rewritten on disk")
    });

    // A deleted: its bar says so; a reload fails, says why, and the comparison stays.
    std::fs::remove_file(&a).expect("remove");
    let texts = shell.until("A's bar", |_, t| {
        drew(t, "A (a.csv): ") && drew(t, "cannot be read")
    });
    let before = shell.diff_view();
    let buttons = texts.iter().filter(|(t, _)| t == "Reload").count();
    assert_eq!(buttons, 2, "A's and B's bars: {texts:?}");
    // A's bar is above B's.
    let first = texts
        .iter()
        .filter(|(t, _)| t == "Reload")
        .min_by(|x, y| x.1.top().total_cmp(&y.1.top()))
        .cloned()
        .into_iter()
        .collect::<Vec<_>>();
    shell.click(&first, "Reload");
    let texts = shell.until("A's reload failed", |_, t| drew(t, "reloading failed"));
    assert!(drew(&texts, "A (a.csv): ⚠ reloading failed"), "{texts:?}");
    let file = shell.app.files.get(ia).expect("open");
    assert_eq!(file.status, Status::Loaded);
    assert!(matches!(file.change, None | Some(DiskChange::Vanished(_))));
    assert_eq!(shell.diff_view(), before, "the last comparison stays");
    assert_eq!(shell.panes(), [(None, Some([ia, ib]))]);
}

#[test]
fn a_failed_load_of_a_compared_pair_cancels_the_comparison_and_the_app_goes_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = (dir.path().join("a.csv"), dir.path().join("b.csv"));
    write(&a, &format!("{HEADER}{}", allocations(1, 40, 16)));
    // B's writer has not written anything yet.
    write(&b, "");
    let mut shell = Shell::new(
        vec![LoadSource::File(a.clone()), LoadSource::File(b.clone())],
        true,
    );
    let (ia, ib) = (1, 2);
    let texts = shell.until("B's error pane and A's views", |app, _| {
        let panes = app.tree.tiles.iter().filter_map(|(_, t)| match t {
            egui_tiles::Tile::Pane(p) => p.file,
            _ => None,
        });
        let files: Vec<FileId> = panes.collect();
        files.contains(&ia) && files.contains(&ib)
    });
    assert!(shell.app.compare.is_none(), "nothing left to compare");
    assert!(
        shell.panes().iter().all(|(_, c)| c.is_none()),
        "no difference pane"
    );
    assert!(matches!(
        shell.app.files.get(ib).map(|f| &f.status),
        Some(Status::Failed(e)) if e.contains("b.csv") && e.contains("empty")
    ));
    assert!(
        drew(&texts, "1 file(s) loaded, 1 failed (see their panes)"),
        "{texts:?}"
    );
    let a_panes = shell.panes().iter().filter(|(f, _)| *f == Some(ia)).count();
    assert!(a_panes >= 2, "A shows its own views: {:?}", shell.panes());

    // The writer catches up: B is retried by itself, loads and opens its own views in place
    // of its error pane.
    write(&b, &format!("{HEADER}{}", allocations(1, 30, 48)));
    shell.until("B's views", |app, _| {
        app.files.get(ib).is_some_and(|f| f.status == Status::Loaded)
            && app.tree.tiles.iter().any(|(_, t)| {
                matches!(t, egui_tiles::Tile::Pane(p) if p.file == Some(ib) && p.kind.is_some())
            })
    });
    assert_eq!(blocks(&shell.app, ib), 30);
    let b_panes = shell.panes().iter().filter(|(f, _)| *f == Some(ib)).count();
    assert_eq!(b_panes, a_panes, "B shows the same default views as A");
    // And the two can be compared now (View ▸ Compare two runs ▸ A ▸ B).
    let ctx = shell.ctx.clone();
    shell.app.add_compare(&ctx, [ia, ib]);
    shell.frame();
    assert!(shell.panes().contains(&(None, Some([ia, ib]))));
}

#[test]
fn both_files_of_a_pair_failing_show_two_error_panes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = (dir.path().join("a.csv"), dir.path().join("b.csv"));
    write(&a, "not a trace\n");
    write(&b, "");
    let mut shell = Shell::new(
        vec![LoadSource::File(a.clone()), LoadSource::File(b.clone())],
        true,
    );
    let texts = shell.until("two error panes", |app, _| {
        [1, 2].iter().all(|&id| {
            app.tree.tiles.iter().any(
                |(_, t)| matches!(t, egui_tiles::Tile::Pane(p) if p.file == Some(id) && p.kind.is_none()),
            )
        })
    });
    assert!(shell.app.compare.is_none());
    assert_eq!(shell.panes().len(), 2, "{texts:?}");
    // A file opened afterwards opens its views as usual.
    let c = dir.path().join("c.csv");
    write(&c, &format!("{HEADER}{}", allocations(1, 5, 8)));
    let ctx = shell.ctx.clone();
    let ic = shell.app.open(&ctx, LoadSource::File(c));
    shell.until("C's views", |app, _| {
        app.tree.tiles.iter().any(
            |(_, t)| matches!(t, egui_tiles::Tile::Pane(p) if p.file == Some(ic) && p.kind.is_some()),
        )
    });
}

/// The first frame that shows a file's views lays them out at their final widths: two panes
/// side by side, each half of the window. (Emptying the grid to re-add its children in order
/// left holes that egui_tiles laid out as cells for one frame: three columns, the map a third
/// of the window wide, so that a big trace's map was first summed at the wrong width.)
#[test]
fn a_files_first_frame_lays_its_views_out_at_their_final_widths() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.csv");
    write(&path, &format!("{HEADER}{}", allocations(0, 50, 32)));
    let mut shell = Shell::new(vec![LoadSource::File(path)], false);
    let texts = shell.until("the file's views", |_, texts| {
        drew(texts, "Allocation map") && drew(texts, "Heap tree")
    });
    let left = |part: &str| {
        texts
            .iter()
            .find(|(t, _)| t.contains(part))
            .map(|(_, r)| r.left())
            .unwrap_or_else(|| panic!("no {part} in {texts:?}"))
    };
    let (map, heap) = (left("Allocation map"), left("Heap tree"));
    // The window is 1200 points wide: the map's tab at the left edge, the heap tree's at the
    // middle (with holes they stood at a third and two thirds).
    assert!(map < 100.0, "the map's tab starts at {map}");
    assert!(
        (560.0..700.0).contains(&heap),
        "the heap tree's tab starts at {heap}, not at the middle of 1200 points"
    );
}
