//! The allocation-map pane's "who frees what" panel at its right: the allocation site × free
//! site table and the frees across threads (`memscape_views::alloc_map::free_sites`, computed
//! on a thread of its own when the panel first opens), sortable by any column; selecting a row
//! highlights its blocks in the map (and every view linked to the dataset).

use std::sync::Arc;

use crossbeam_channel::Receiver;
use memscape_views::alloc_map::free_sites::{self, FreeSiteTable, SortBy};

use super::AllocMapPane;

/// The panel's state.
pub struct FreeSitesPanel {
    pub open: bool,
    table: Option<FreeSiteTable>,
    pending: Option<Receiver<FreeSiteTable>>,
    /// Blocks of the row clicked, being collected: (label, blocks).
    highlight: Option<Receiver<(String, Vec<u32>)>>,
    sort: SortBy,
    ascending: bool,
    /// The selected row: a site pair (alloc, free) or a thread pair.
    selected: Option<Selected>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Selected {
    Sites(u32, u32),
    Threads(u32, u32),
}

impl Default for FreeSitesPanel {
    fn default() -> Self {
        Self {
            open: false,
            table: None,
            pending: None,
            highlight: None,
            sort: SortBy::Bytes,
            ascending: false,
            selected: None,
        }
    }
}

fn spawn<T: Send + 'static>(
    name: &str,
    work: impl FnOnce() -> T + Send + 'static,
) -> Option<Receiver<T>> {
    let (tx, rx) = crossbeam_channel::bounded(1);
    match std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let _ = tx.send(work());
        }) {
        Ok(_) => Some(rx),
        Err(e) => {
            tracing::error!("{name} thread: {e}");
            None
        }
    }
}

impl AllocMapPane {
    /// The panel (when open) at the right of the pane.
    pub(super) fn free_sites_panel(&mut self, ui: &mut egui::Ui) {
        if !self.free_sites.open {
            return;
        }
        let dataset = self.dataset.clone();
        let panel = &mut self.free_sites;
        if panel.table.is_none() && panel.pending.is_none() {
            let d = dataset.clone();
            panel.pending = spawn("memscape-free-sites", move || {
                let mut table = d
                    .alloc_trace()
                    .map(|t| FreeSiteTable::compute(&t.trace))
                    .unwrap_or_default();
                table.sort(SortBy::Bytes, false);
                table
            });
        }
        if let Some(rx) = &panel.pending
            && let Ok(table) = rx.try_recv()
        {
            panel.table = Some(table);
            panel.pending = None;
        }
        if let Some(rx) = &panel.highlight
            && let Ok((label, blocks)) = rx.try_recv()
        {
            dataset.links.set_highlight(blocks, label);
            panel.highlight = None;
        }
        if panel.pending.is_some() || panel.highlight.is_some() {
            ui.ctx()
                .request_repaint_after(crate::panes::paced(std::time::Duration::from_millis(50)));
        }
        egui::Panel::right(("free-sites", self.key.get()))
            .default_size(420.0)
            .resizable(true)
            .show(ui, |ui| {
                ui.strong("Who frees what");
                if let Some(extent) =
                    memscape_views::dataset::trace_extent(&dataset).filter(|e| !e.is_whole())
                {
                    // A big trace's first blocks, shown while the whole is read.
                    ui.weak(format!(
                        "the first {} of {} blocks: the whole trace is being read…",
                        extent.read, extent.total
                    ));
                }
                let Some(table) = &mut panel.table else {
                    ui.horizontal(|ui| {
                        crate::panes::spinner(ui);
                        ui.weak("pairing allocation and free sites…");
                    });
                    return;
                };
                if table.pairs.is_empty() {
                    ui.weak("no free sites in this trace (memscape record keeps them)");
                }
                let mut clicked = None;
                egui::ScrollArea::vertical()
                    .id_salt("free-site-rows")
                    .max_height(ui.available_height() * 0.7)
                    .show(ui, |ui| {
                        egui::Grid::new("free-site-table")
                            .striped(true)
                            .num_columns(5)
                            .show(ui, |ui| {
                                for by in SortBy::ALL {
                                    let arrow = match (panel.sort == by, panel.ascending) {
                                        (true, true) => " ⏶",
                                        (true, false) => " ⏷",
                                        _ => "",
                                    };
                                    if ui
                                        .selectable_label(
                                            panel.sort == by,
                                            format!("{}{arrow}", by.header()),
                                        )
                                        .clicked()
                                    {
                                        panel.ascending = panel.sort == by && !panel.ascending;
                                        panel.sort = by;
                                        table.sort(by, panel.ascending);
                                    }
                                }
                                ui.end_row();
                                for r in &table.pairs {
                                    let me = Selected::Sites(r.alloc_site, r.free_site);
                                    let on = panel.selected == Some(me);
                                    let a = ui.selectable_label(on, short(&r.alloc_location));
                                    let f = ui.selectable_label(on, short(&r.free_location));
                                    ui.label(r.blocks.to_string());
                                    ui.label(memscape_views::alloc_map::decorate::bytes(r.bytes));
                                    ui.label(free_sites::lifetime(r.median_lifetime_ns));
                                    ui.end_row();
                                    let a = a.on_hover_text(&r.alloc_location);
                                    let f = f.on_hover_text(&r.free_location);
                                    if a.clicked() || f.clicked() {
                                        clicked = Some((
                                            me,
                                            format!(
                                                "{} → {}",
                                                short(&r.alloc_location),
                                                short(&r.free_location)
                                            ),
                                        ));
                                    }
                                }
                            });
                    });
                ui.separator();
                ui.strong("Frees from another thread");
                if table.threads.is_empty() {
                    ui.weak("none: every block was freed by the thread that allocated it");
                }
                egui::Grid::new("cross-thread-table")
                    .striped(true)
                    .num_columns(4)
                    .show(ui, |ui| {
                        for h in ["allocated by", "freed by", "frees", "bytes"] {
                            ui.weak(h);
                        }
                        ui.end_row();
                        for t in &table.threads {
                            let me = Selected::Threads(t.alloc_thread, t.free_thread);
                            let on = panel.selected == Some(me);
                            let name = |n: &str, i: u32| {
                                if n.is_empty() {
                                    format!("thread {i}")
                                } else {
                                    n.to_owned()
                                }
                            };
                            let a =
                                ui.selectable_label(on, name(&t.alloc_thread_name, t.alloc_thread));
                            let f =
                                ui.selectable_label(on, name(&t.free_thread_name, t.free_thread));
                            ui.label(t.frees.to_string());
                            ui.label(memscape_views::alloc_map::decorate::bytes(t.bytes));
                            ui.end_row();
                            if a.clicked() || f.clicked() {
                                clicked = Some((
                                    me,
                                    format!(
                                        "allocated by {} freed by {}",
                                        name(&t.alloc_thread_name, t.alloc_thread),
                                        name(&t.free_thread_name, t.free_thread)
                                    ),
                                ));
                            }
                        }
                    });
                if let Some((me, label)) = clicked {
                    if panel.selected == Some(me) {
                        panel.selected = None;
                        dataset.links.clear_highlight();
                    } else {
                        panel.selected = Some(me);
                        let d: Arc<memscape_views::Dataset> = dataset.clone();
                        panel.highlight = spawn("memscape-free-site-blocks", move || {
                            let blocks = d.alloc_trace().map_or_else(Vec::new, |t| match me {
                                Selected::Sites(a, f) => {
                                    memscape_trace::summary::site_pair_blocks(&t.trace, a, f)
                                }
                                Selected::Threads(a, f) => {
                                    memscape_trace::summary::thread_pair_blocks(&t.trace, a, f)
                                }
                            });
                            (label, blocks)
                        });
                    }
                }
            });
    }
}

/// A site's first line, shortened for the table (the whole text on hover).
fn short(location: &str) -> String {
    let first = location.lines().next().unwrap_or("");
    match first.char_indices().nth(48) {
        Some((i, _)) => format!("{}…", &first[..i]),
        None => first.to_owned(),
    }
}
