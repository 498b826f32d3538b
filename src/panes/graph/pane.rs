//! The graph pane: one snapshot of an IGV/DOT document, laid out in the background, with pan
//! (drag), zoom (wheel, about the pointer), fit (double click on the background), a snapshot
//! slider, filter profiles, differences from the previous snapshot (optionally only the
//! changes), blocks as boxes, node search, IGV's set of fully shown nodes (double click a node:
//! show it with its neighbours; double click a neighbour to add it, a member to remove it), a
//! properties panel for the selected node with the method's bytecodes and inlining tree, a
//! satellite overview whose frame can be dragged, and the filter-profile editor
//! ([`super::profile_editor`]; user profiles saved as TOML beside the shipped ones).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use crossbeam_channel::{Receiver, TryRecvError};
use egui::{Color32, Pos2, Rect, Sense};
use memscape_graph::filter::Profile;
use memscape_graph::navigate::{self, NodeQuery};
use memscape_render::shapes::ShapesView;
use memscape_views::gpu::PaneKey;
use memscape_views::graph::compose::graph_picture;
use memscape_views::graph::draw;
use memscape_views::graph::model::{self, LaidOut, ShowOptions};
use memscape_views::graph::profiles::{self, ProfileSource, UserProfile};
use memscape_views::graph::settings::GraphSettings;
use memscape_views::tour::{Step, tour_file_of};
use memscape_views::{Dataset, DatasetContent, ViewSettings};

use super::profile_editor::{EditorEvent, ProfileEditor};
use crate::panes::{View, ViewContext};

type Job = (Receiver<Result<Arc<LaidOut>, String>>, Instant);

/// Everything a layout depends on.
type Want = (usize, Option<Arc<Profile>>, ShowOptions);

pub struct GraphPane {
    dataset: Arc<Dataset>,
    key: PaneKey,
    /// The snapshot, changes only, blocks and the overview, as `memscape render` names them
    /// (the profile, the difference and the shown set are the richer state below).
    settings: GraphSettings,
    /// The filter applied (its rules that parse) and where it came from; None: no filter.
    profile: Option<(Arc<Profile>, ProfileSource)>,
    /// The profile editor, when open.
    editor: Option<ProfileEditor>,
    /// The user's saved profiles (read when the pane opens and after each save).
    user_profiles: Vec<UserProfile>,
    diff: bool,
    /// IGV's set S of fully shown node ids (None: every node).
    focus: Option<BTreeSet<String>>,
    job: Option<Job>,
    /// What `laid` was made for.
    laid_for: Option<Want>,
    laid: Option<Arc<LaidOut>>,
    error: Option<String>,
    /// World → points inside the pane; None: fit on the next frame.
    camera: Option<ShapesView>,
    /// The pane size the camera was fitted to, while the user has not moved it since: the
    /// fit follows the pane when it is resized (or moved to another cell of the grid).
    fitted_to: Option<[f32; 2]>,
    /// A new set of nodes (double-click expand or remove, "show all") was asked for: when its
    /// layout arrives the camera glides to fit it.
    refit_pending: bool,
    /// The glide to the fit: the camera it started from and when.
    fit_from: Option<(ShapesView, Instant)>,
    /// The layout shown before the current one, and when the move from it started.
    previous: Option<Arc<LaidOut>>,
    transition_start: Instant,
    search: String,
    /// Matches of `search` in `laid` (sorted node indices), or the query's error.
    matches: Result<Vec<usize>, String>,
    matches_for: Option<(String, usize)>,
    /// Which match "next" went to last.
    match_cursor: usize,
    /// The selected node's id (properties panel).
    selected: Option<String>,
    /// Size of the drawing area last frame (for centring on a match).
    last_size: [f32; 2],
}

impl GraphPane {
    pub fn new(dataset: Arc<Dataset>) -> Self {
        Self {
            dataset,
            key: PaneKey::new(),
            settings: GraphSettings {
                satellite: true,
                ..GraphSettings::default()
            },
            profile: None,
            editor: None,
            user_profiles: profiles::user_profiles(),
            diff: false,
            focus: None,
            job: None,
            laid_for: None,
            laid: None,
            error: None,
            camera: None,
            fitted_to: None,
            refit_pending: false,
            fit_from: None,
            previous: None,
            transition_start: Instant::now(),
            search: String::new(),
            matches: Ok(Vec::new()),
            matches_for: None,
            match_cursor: 0,
            selected: None,
            last_size: [1.0, 1.0],
        }
    }

    fn document(&self) -> Option<&memscape_graph::model::Document> {
        match &self.dataset.content {
            DatasetContent::Graphs(g) => Some(&g.document),
            _ => None,
        }
    }

    fn snapshot_count(&self) -> usize {
        self.document().map_or(0, |d| d.snapshots().len())
    }

    fn want(&self) -> Want {
        (
            self.settings.snapshot,
            self.profile.as_ref().map(|(p, _)| p.clone()),
            ShowOptions {
                diff_from: (self.diff && self.settings.snapshot > 0)
                    .then(|| self.settings.snapshot - 1),
                changes_only: self.settings.changes_only,
                blocks: self.settings.blocks,
                focus: self.focus.clone(),
            },
        )
    }

    fn start(&mut self, ctx: &egui::Context) {
        let want = self.want();
        if self.laid_for.as_ref() == Some(&want) || self.job.is_some() {
            return;
        }
        let (tx, rx) = crossbeam_channel::bounded(1);
        let dataset = self.dataset.clone();
        let ctx = ctx.clone();
        let previous = self.laid.as_ref().map(|l| {
            memscape_graph::layout::PreviousPositions::from_layout(&l.view_graph.graph, &l.layout)
        });
        let job_want = want.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("graph layout {}", dataset.name))
            .spawn(move || {
                let outcome = (|| {
                    let DatasetContent::Graphs(g) = &dataset.content else {
                        return Err("not a graph document".to_owned());
                    };
                    model::lay_out_near(
                        &g.document,
                        job_want.0,
                        job_want.1.as_deref(),
                        &job_want.2,
                        previous.as_ref(),
                    )
                    .map(Arc::new)
                    .map_err(|e| format!("{e:#}"))
                })();
                let _ = tx.send(outcome);
                ctx.request_repaint();
            });
        match spawned {
            Ok(_) => {
                // A different set of nodes (focus, changes, blocks) gets a fresh fit; stepping
                // through snapshots keeps the camera.
                // Editing a profile's rules keeps the camera; choosing another profile refits.
                let name = |w: &Want| w.1.as_ref().map(|p| p.name.clone());
                let refit = self.laid_for.as_ref().is_some_and(|old| {
                    name(old) != name(&want)
                        || old.2.focus != want.2.focus
                        || old.2.blocks != want.2.blocks
                        || old.2.changes_only != want.2.changes_only
                });
                if refit {
                    // Glide from the camera of the old set when the new layout arrives.
                    self.refit_pending = true;
                }
                self.job = Some((rx, Instant::now()));
                self.laid_for = Some(want);
            }
            Err(e) => self.error = Some(format!("could not start the layout thread: {e}")),
        }
    }

    fn poll(&mut self) {
        let Some((rx, _)) = &self.job else {
            return;
        };
        match rx.try_recv() {
            Ok(Ok(laid)) => {
                let keep_camera = self.laid.is_some() && self.camera.is_some();
                if std::mem::take(&mut self.refit_pending)
                    && let Some(c) = self.camera
                {
                    self.fit_from = Some((c, Instant::now()));
                }
                self.previous = self.laid.take();
                self.transition_start = Instant::now();
                self.laid = Some(laid);
                self.matches_for = None;
                if !keep_camera {
                    self.camera = None;
                }
                self.error = None;
                self.job = None;
            }
            Ok(Err(e)) => {
                self.error = Some(e);
                self.job = None;
            }
            Err(TryRecvError::Empty) => {}
            Err(TryRecvError::Disconnected) => self.job = None,
        }
    }

    /// Recomputes the search matches when the query or the layout changed.
    fn update_matches(&mut self, laid: &LaidOut) {
        let key = (self.search.clone(), laid as *const LaidOut as usize);
        if self.matches_for.as_ref() == Some(&key) {
            return;
        }
        self.matches = if self.search.trim().is_empty() {
            Ok(Vec::new())
        } else {
            NodeQuery::parse(self.search.trim())
                .map(|q| navigate::search(&laid.view_graph.graph, &q))
                .map_err(|e| e.to_string())
        };
        self.matches_for = Some(key);
        self.match_cursor = 0;
    }

    /// Double click on node `i`: IGV's expansion of the set of fully shown nodes.
    fn toggle_focus(&mut self, laid: &LaidOut, i: usize) {
        let Some(node) = laid.view_graph.graph.nodes.get(i) else {
            return;
        };
        let id = node.id.clone();
        match &mut self.focus {
            None => self.focus = Some(BTreeSet::from([id])),
            Some(set) => {
                if !set.remove(&id) {
                    set.insert(id);
                } else if set.is_empty() {
                    self.focus = None;
                }
            }
        }
    }

    fn toolbar(&mut self, ui: &mut egui::Ui, count: usize) {
        ui.horizontal_wrapped(|ui| {
            if count > 1 {
                ui.add(
                    egui::Slider::new(&mut self.settings.snapshot, 0..=count - 1).text("snapshot"),
                );
                ui.checkbox(&mut self.diff, "differences from the previous");
                if self.diff {
                    ui.checkbox(&mut self.settings.changes_only, "only changes");
                }
            }
            self.profile_menu(ui);
            let has_blocks = self
                .document()
                .and_then(|d| {
                    d.snapshots()
                        .get(self.settings.snapshot)
                        .map(|g| !g.blocks.is_empty())
                })
                .unwrap_or(false);
            ui.add_enabled(
                has_blocks,
                egui::Checkbox::new(&mut self.settings.blocks, "blocks"),
            )
            .on_hover_text("lay out the basic blocks (DOT clusters) as boxes");
            ui.checkbox(&mut self.settings.satellite, "overview");
            if ui.button("fit").clicked() {
                self.camera = None;
            }
        });
        ui.horizontal_wrapped(|ui| {
            let edit = ui.add(
                egui::TextEdit::singleline(&mut self.search)
                    .hint_text("search: regex, or property=regex")
                    .desired_width(220.0),
            );
            let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            match self.matches.clone() {
                Ok(m) if !self.search.trim().is_empty() => {
                    ui.label(format!("{} matches", m.len()));
                    if (ui.button("next").clicked() || enter) && !m.is_empty() {
                        self.match_cursor = (self.match_cursor + 1) % m.len();
                        self.go_to_match();
                    }
                    if ui
                        .button("show only these")
                        .on_hover_text("the matches fully, their neighbours semi-transparent")
                        .clicked()
                        && !m.is_empty()
                        && let Some(laid) = &self.laid
                    {
                        let ids = m
                            .iter()
                            .filter_map(|&i| laid.view_graph.graph.nodes.get(i))
                            .map(|n| n.id.clone())
                            .collect();
                        self.focus = Some(ids);
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    ui.colored_label(Color32::LIGHT_RED, e);
                }
            }
            if self.focus.is_some() && ui.button("show all").clicked() {
                self.focus = None;
            }
            if let Some((_, started)) = &self.job {
                ui.spinner();
                ui.label(format!(
                    "laying out… {:.1} s",
                    started.elapsed().as_secs_f32()
                ));
            }
            if let Some(l) = &self.laid {
                let shown = l.view_graph.graph.nodes.len();
                let nodes = if shown == l.total_nodes {
                    format!("{shown} nodes")
                } else {
                    format!("{shown} of {} nodes", l.total_nodes)
                };
                ui.label(format!(
                    "{} · {nodes} · {} edges · {} crossings",
                    l.title,
                    l.view_graph.graph.edges.len(),
                    l.layout.crossings
                ));
            }
        });
    }

    /// The profile chooser (none, shipped, the user's) and the editor's toggle.
    fn profile_menu(&mut self, ui: &mut egui::Ui) {
        let current = match (&self.editor, &self.profile) {
            (Some(e), _) if e.is_dirty() => format!("{}*", e.profile.name),
            (_, Some((p, _))) => p.name.clone(),
            (_, None) => "none".to_owned(),
        };
        let mut chosen: Option<Option<(Profile, ProfileSource)>> = None;
        egui::ComboBox::from_id_salt(("graph-profile", self.key.get()))
            .selected_text(format!("filter: {current}"))
            .show_ui(ui, |ui| {
                if ui
                    .selectable_label(self.profile.is_none(), "none")
                    .clicked()
                {
                    chosen = Some(None);
                }
                for (name, _) in memscape_graph::filter::SHIPPED_PROFILES {
                    let on =
                        matches!(&self.profile, Some((_, ProfileSource::Shipped(n))) if *n == name);
                    if ui.selectable_label(on, name).clicked()
                        && let Some(p) = Profile::shipped(name)
                    {
                        chosen = Some(Some((p, ProfileSource::Shipped(name))));
                    }
                }
                if !self.user_profiles.is_empty() {
                    ui.separator();
                    ui.weak("saved");
                }
                for u in &self.user_profiles {
                    let on =
                        matches!(&self.profile, Some((_, ProfileSource::User(p))) if *p == u.path);
                    match &u.profile {
                        Ok(p) => {
                            if ui
                                .selectable_label(on, u.title())
                                .on_hover_text(u.path.display().to_string())
                                .clicked()
                            {
                                chosen =
                                    Some(Some((p.clone(), ProfileSource::User(u.path.clone()))));
                            }
                        }
                        Err(e) => {
                            ui.add_enabled(false, egui::Button::new(u.title()))
                                .on_disabled_hover_text(e);
                        }
                    }
                }
            });
        if let Some(choice) = chosen {
            match &choice {
                Some((p, source)) => {
                    // The editor follows the chosen profile.
                    if self.editor.is_some() {
                        self.editor = Some(ProfileEditor::new(p.clone(), source.clone()));
                    }
                    self.profile = Some((Arc::new(p.applicable()), source.clone()));
                }
                None => self.profile = None,
            }
        }
        let open = self.editor.is_some();
        if ui
            .add(egui::Button::new("edit rules").selected(open))
            .on_hover_text("edit the filter's rules; save them as your own profile")
            .clicked()
        {
            self.editor = if open {
                None
            } else {
                Some(match &self.profile {
                    Some((_, ProfileSource::Shipped(name))) => {
                        ProfileEditor::new_from(Profile::shipped(name).as_ref())
                    }
                    Some((p, source)) => {
                        // The full profile (disabled or broken rules included) from its file.
                        let full = match source {
                            ProfileSource::User(path) => Profile::load(path).ok(),
                            _ => None,
                        };
                        ProfileEditor::new(full.unwrap_or_else(|| (**p).clone()), source.clone())
                    }
                    None => ProfileEditor::new_from(None),
                })
            };
        }
    }

    /// The editor panel, and applying its rules once they settle.
    fn editor_panel(&mut self, ui: &mut egui::Ui) {
        let Some(editor) = &mut self.editor else {
            return;
        };
        let mut event = EditorEvent::None;
        egui::Panel::left(("graph-profile-editor", self.key.get()))
            .default_size(360.0)
            .show(ui, |ui| {
                event = editor.ui(ui, &self.user_profiles);
            });
        match editor.settled(Instant::now()) {
            Ok(true) => {
                self.profile = Some((Arc::new(editor.applicable()), editor.source.clone()));
            }
            Ok(false) => {}
            Err(wait) => ui.ctx().request_repaint_after(wait),
        }
        match event {
            EditorEvent::None => {}
            EditorEvent::Close => self.editor = None,
            EditorEvent::Saved(_) => {
                self.user_profiles = profiles::user_profiles();
                if let Some(e) = &self.editor {
                    self.profile = Some((Arc::new(e.applicable()), e.source.clone()));
                }
            }
        }
    }

    /// Centres the camera on the current match and selects it.
    fn go_to_match(&mut self) {
        let (Some(laid), Ok(m)) = (&self.laid, &self.matches) else {
            return;
        };
        let Some(&i) = m.get(self.match_cursor) else {
            return;
        };
        self.selected = laid.view_graph.graph.nodes.get(i).map(|n| n.id.clone());
        if let (Some(b), Some(cam)) = (laid.layout.nodes.get(i), &mut self.camera) {
            let c = b.center();
            // Read at least at 1:1 when jumping to a match.
            let scale = cam.scale[0].max(1.0);
            cam.scale = [scale, scale];
            cam.offset = [
                self.last_size[0] / 2.0 - c[0] as f32 * scale,
                self.last_size[1] / 2.0 - c[1] as f32 * scale,
            ];
        }
    }

    /// The properties panel: the selected node, and the method of its snapshot's group.
    fn properties(&mut self, ui: &mut egui::Ui, laid: &LaidOut) {
        egui::ScrollArea::vertical().show(ui, |ui| {
            let node = self.selected.as_ref().and_then(|id| {
                laid.view_graph
                    .graph
                    .node_index(id)
                    .map(|i| (i, &laid.view_graph.graph.nodes[i]))
            });
            match node {
                Some((i, n)) => {
                    ui.strong(format!("node {}", n.id));
                    egui::Grid::new(("graph-props", self.key.get()))
                        .striped(true)
                        .show(ui, |ui| {
                            for (k, v) in n.properties.iter() {
                                ui.label(k);
                                ui.label(v);
                                ui.end_row();
                            }
                        });
                    if let Some(style) = laid.view_graph.nodes.get(i)
                        && !style.merged.is_empty()
                    {
                        ui.label(format!("merged: {}", style.merged.join(", ")));
                    }
                    let blocks: Vec<&str> = laid
                        .view_graph
                        .graph
                        .blocks
                        .iter()
                        .filter(|b| b.nodes.contains(&i))
                        .map(|b| b.name.as_str())
                        .collect();
                    if !blocks.is_empty() {
                        ui.label(format!("block: {}", blocks.join(" › ")));
                    }
                    let g = &laid.view_graph.graph;
                    let ins = g.edges.iter().filter(|e| e.to == i).count();
                    let outs = g.edges.iter().filter(|e| e.from == i).count();
                    ui.label(format!("{ins} inputs · {outs} uses"));
                    if ui.button("show with its neighbours").clicked() {
                        self.focus = Some(BTreeSet::from([n.id.clone()]));
                    }
                }
                None => {
                    ui.weak("click a node to see its properties");
                }
            }
            if let Some(method) = self
                .document()
                .and_then(|d| method_of(d, self.settings.snapshot))
            {
                ui.separator();
                method_tree(ui, method, 0);
            }
        });
    }
}

/// The method of the group that holds snapshot `snapshot` (in [`Document::snapshots`] order).
fn method_of(
    doc: &memscape_graph::model::Document,
    snapshot: usize,
) -> Option<&memscape_graph::model::Method> {
    fn walk<'a>(
        group: &'a memscape_graph::model::Group,
        left: &mut usize,
        inherited: Option<&'a memscape_graph::model::Method>,
    ) -> Option<Option<&'a memscape_graph::model::Method>> {
        let method = group.method.as_ref().or(inherited);
        if *left < group.graphs.len() {
            return Some(method);
        }
        *left -= group.graphs.len();
        group.groups.iter().find_map(|g| walk(g, left, method))
    }
    let mut left = snapshot;
    doc.groups
        .iter()
        .find_map(|g| walk(g, &mut left, None))
        .flatten()
}

/// A method with its bytecodes and the methods inlined into it, as collapsing sections.
fn method_tree(ui: &mut egui::Ui, method: &memscape_graph::model::Method, depth: usize) {
    let title = if method.short_name.is_empty() {
        method.name.clone()
    } else {
        method.short_name.clone()
    };
    let title = match method.bci {
        Some(bci) => format!("{title}  (bci {bci})"),
        None => title,
    };
    egui::CollapsingHeader::new(title)
        .id_salt(("method", depth, method.name.as_str(), method.bci))
        .default_open(depth == 0)
        .show(ui, |ui| {
            if !method.name.is_empty() && method.name != method.short_name {
                ui.weak(&method.name);
            }
            if let Some(code) = &method.bytecodes {
                egui::CollapsingHeader::new("bytecodes")
                    .id_salt(("bytecodes", depth, method.name.as_str(), method.bci))
                    .show(ui, |ui| {
                        ui.add(egui::Label::new(
                            egui::RichText::new(code.trim()).monospace().size(11.0),
                        ));
                    });
            }
            if !method.inlined.is_empty() {
                ui.label(format!("inlined ({}):", method.inlined.len()));
                for m in &method.inlined {
                    method_tree(ui, m, depth + 1);
                }
            }
        });
}

impl View for GraphPane {
    fn title(&self) -> String {
        format!("Graph — {}", self.dataset.name)
    }

    fn picture(&self) -> Option<std::sync::Arc<memscape_views::Picture>> {
        self.key.last_picture()
    }

    fn tour_step(&self) -> Option<Step> {
        let settings = GraphSettings {
            profile: self.profile.as_ref().map(|(p, source)| match source {
                ProfileSource::Shipped(name) => (*name).to_owned(),
                ProfileSource::User(path) => path.display().to_string(),
                ProfileSource::New => p.name.clone(),
            }),
            diff_from: (self.diff && self.settings.snapshot > 0)
                .then(|| self.settings.snapshot - 1),
            ..self.settings.clone()
        };
        Some(Step::new(
            tour_file_of(&self.dataset),
            ViewSettings::Graph(settings),
        ))
    }

    fn is_ready(&self) -> bool {
        self.laid.is_some() || self.error.is_some()
    }

    fn ui(&mut self, ui: &mut egui::Ui, _cx: &ViewContext<'_>) {
        self.poll();
        let count = self.snapshot_count();
        self.toolbar(ui, count);
        self.editor_panel(ui);
        self.start(ui.ctx());
        if let Some(e) = &self.error {
            ui.colored_label(Color32::LIGHT_RED, e);
        }
        let Some(laid) = self.laid.clone() else {
            return;
        };
        self.update_matches(&laid);
        egui::Panel::right(("graph-properties", self.key.get()))
            .default_size(260.0)
            .show(ui, |ui| self.properties(ui, &laid));
        let (rect, response) = ui.allocate_exact_size(ui.available_size(), Sense::click_and_drag());
        self.last_size = [rect.width(), rect.height()];
        let fitted = || draw::fit_view(&laid.layout, rect.width(), rect.height(), 16.0);
        let size = [rect.width(), rect.height()];
        let mut camera = match self.camera {
            Some(c) if self.fitted_to.is_none_or(|s| s == size) => c,
            _ => {
                self.fitted_to = Some(size);
                fitted()
            }
        };
        // Gliding to the fit of a new set of nodes.
        if let Some((from, started)) = self.fit_from {
            let t = started.elapsed().as_secs_f32() / 0.4;
            camera =
                memscape_views::graph::compose::camera_between(&from, &fitted(), t, rect.size());
            if t >= 1.0 {
                self.fit_from = None;
                self.fitted_to = Some(size);
            } else {
                ui.ctx().request_repaint();
            }
        }
        // The satellite inset, bottom right; dragging in it moves the camera.
        let satellite_area = self.settings.satellite.then(|| {
            let side = (rect.width().min(rect.height()) * 0.25).clamp(90.0, 260.0);
            Rect::from_min_size(
                Pos2::new(rect.right() - side - 10.0, rect.bottom() - side - 10.0),
                egui::vec2(side, side),
            )
        });
        let in_satellite = |p: Pos2| satellite_area.is_some_and(|a| a.contains(p));
        let press = response.interact_pointer_pos();
        if let (Some(area), Some(p)) = (satellite_area, press)
            && in_satellite(p)
        {
            // Centre the main view on the world point under the pointer.
            // The inset's own fit (`draw::satellite_view`'s), not the main view's capped one.
            let fit = draw::fit_size(
                [laid.layout.width, laid.layout.height],
                area.width(),
                area.height(),
                6.0,
            );
            let world = fit.to_world([p.x - area.min.x, p.y - area.min.y]);
            camera.offset = [
                rect.width() / 2.0 - world[0] * camera.scale[0],
                rect.height() / 2.0 - world[1] * camera.scale[1],
            ];
            self.fitted_to = None;
            self.fit_from = None;
        } else if response.dragged() {
            let d = response.drag_delta();
            camera.offset[0] += d.x;
            camera.offset[1] += d.y;
            self.fitted_to = None;
            self.fit_from = None;
        }
        if let Some(pos) = response.hover_pos()
            && !in_satellite(pos)
        {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            if scroll != 0.0 {
                let factor = (scroll * 0.004).exp();
                let p = pos - rect.min.to_vec2();
                let world = camera.to_world([p.x, p.y]);
                camera.scale = [camera.scale[0] * factor, camera.scale[1] * factor];
                let now = camera.to_pixels(world);
                camera.offset[0] += p.x - now[0];
                camera.offset[1] += p.y - now[1];
                self.fitted_to = None;
                self.fit_from = None;
            }
        }
        // The node under the pointer.
        let node_at = |pos: Pos2, camera: &ShapesView| {
            if in_satellite(pos) {
                return None;
            }
            let p = pos - rect.min.to_vec2();
            let w = camera.to_world([p.x, p.y]);
            laid.layout.nodes.iter().position(|n| {
                f64::from(w[0]) >= n.x
                    && f64::from(w[0]) <= n.x + n.w
                    && f64::from(w[1]) >= n.y
                    && f64::from(w[1]) <= n.y + n.h
            })
        };
        let hovered = response.hover_pos().and_then(|p| node_at(p, &camera));
        if response.double_clicked() {
            match response
                .interact_pointer_pos()
                .and_then(|p| node_at(p, &camera))
            {
                Some(i) => self.toggle_focus(&laid, i),
                None if !press.is_some_and(in_satellite) => {
                    camera = fitted();
                    self.fitted_to = Some(size);
                }
                None => {}
            }
        } else if response.clicked() {
            self.selected = response
                .interact_pointer_pos()
                .and_then(|p| node_at(p, &camera))
                .and_then(|i| laid.view_graph.graph.nodes.get(i))
                .map(|n| n.id.clone());
        }
        self.camera = Some(camera);
        let selected = self
            .selected
            .as_ref()
            .and_then(|id| laid.view_graph.graph.node_index(id));
        let marks = draw::Marks {
            hovered,
            selected,
            matches: self.matches.clone().unwrap_or_default(),
        };
        let t = (self.transition_start.elapsed().as_secs_f32() / 0.45).min(1.0);
        let moving = t < 1.0 && self.previous.is_some();
        if moving {
            ui.ctx().request_repaint();
        }
        // While moving between layouts (snapshots, profiles, differences), nodes glide from
        // their old boxes (matched by id), removed ones fade out and new ones fade in.
        let drawing = match (&self.previous, moving) {
            (Some(prev), true) => draw::between(
                &draw::drawing(prev, &prev.layout, &draw::Marks::default()),
                &draw::drawing(&laid, &laid.layout, &marks),
                memscape_views::picture::ease(t),
            ),
            _ => draw::drawing(&laid, &laid.layout, &marks),
        };
        let picture = graph_picture(
            &drawing,
            &camera,
            rect.size(),
            satellite_area.map(|a| a.translate(-rect.min.to_vec2())),
            None,
            false,
        );
        memscape_views::gpu::paint(ui, &self.key, rect, picture);
        if let Some(i) = hovered
            && let Some(node) = laid.view_graph.graph.nodes.get(i)
        {
            let mut lines = vec![format!("id {}", node.id)];
            lines.extend(
                node.properties
                    .iter()
                    .take(24)
                    .map(|(k, v)| format!("{k} = {v}")),
            );
            if let Some(style) = laid.view_graph.nodes.get(i)
                && !style.merged.is_empty()
            {
                lines.push(format!("merged: {}", style.merged.join(", ")));
            }
            lines.push("click: properties · double click: show with neighbours".to_owned());
            response.on_hover_ui_at_pointer(|ui| {
                ui.label(lines.join("\n"));
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memscape_graph::model::{Document, Graph, Group, Method};

    #[test]
    fn a_snapshot_finds_the_method_of_its_group_or_the_enclosing_one() {
        let method = |name: &str| Method {
            name: name.to_owned(),
            ..Default::default()
        };
        let doc = Document {
            groups: vec![
                Group {
                    method: Some(method("outer")),
                    graphs: vec![Graph::new("0"), Graph::new("1")],
                    groups: vec![
                        Group {
                            graphs: vec![Graph::new("2")],
                            ..Default::default()
                        },
                        Group {
                            method: Some(method("inner")),
                            graphs: vec![Graph::new("3")],
                            ..Default::default()
                        },
                    ],
                    ..Default::default()
                },
                Group {
                    graphs: vec![Graph::new("4")],
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let name = |s| method_of(&doc, s).map(|m| m.name.as_str());
        assert_eq!(name(0), Some("outer"));
        assert_eq!(name(1), Some("outer"));
        assert_eq!(name(2), Some("outer"), "inherited from the enclosing group");
        assert_eq!(name(3), Some("inner"));
        assert_eq!(name(4), None);
        assert_eq!(name(5), None);
        assert_eq!(
            doc.snapshots()[3].name,
            "3",
            "same order as Document::snapshots"
        );
    }
}
