//! The filter-profile editor of the graph pane: the rules of a working copy listed in the order
//! they apply, each with its checkbox, up/down/delete buttons, action, target, property, regex,
//! colour and merge direction; a new rule; a new profile from a shipped or saved one; saving as
//! TOML into the user's profile directory ([`memscape_views::graph::profiles::user_profiles_dir`]). A regex or
//! colour that does not parse is named under its rule; the other rules still apply. The pane
//! re-lays out (on its worker thread) once the rules have been left alone for
//! [`ProfileEditor::DEBOUNCE`].

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use egui::Color32;
use memscape_graph::filter::{
    Action, MergeDirection, Profile, Rule, Target, format_color, parse_color,
};

use memscape_views::graph::profiles::{self, ProfileSource, UserProfile};

/// An edited profile and what the editor knows about it.
#[derive(Debug, Clone)]
pub struct ProfileEditor {
    /// The working copy.
    pub profile: Profile,
    pub source: ProfileSource,
    /// The profile as last loaded or saved (to tell unsaved changes).
    pub saved: Profile,
    /// When the rules last changed and the pane has not yet been told.
    pub changed_at: Option<Instant>,
    /// The outcome of the last save or load: a message or an error.
    pub status: Option<Result<String, String>>,
    /// The rules' problems and the rules they were found for (regexes are compiled only when
    /// the rules change, not every frame).
    problems: Option<(Vec<Rule>, Vec<Option<String>>)>,
}

/// What the pane should do after a frame of the editor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorEvent {
    None,
    Close,
    /// Saved to this file (the pane lists its user profiles again).
    Saved(PathBuf),
}

impl ProfileEditor {
    /// Rules left alone this long are applied.
    pub const DEBOUNCE: Duration = Duration::from_millis(300);

    pub fn new(profile: Profile, source: ProfileSource) -> Self {
        Self {
            saved: profile.clone(),
            profile,
            source,
            changed_at: None,
            status: None,
            problems: None,
        }
    }

    /// Why each rule cannot be applied ([`Profile::problems`]), cached per rule set.
    pub fn problems(&mut self) -> Vec<Option<String>> {
        match &self.problems {
            Some((rules, problems)) if *rules == self.profile.rules => problems.clone(),
            _ => {
                let problems = self.profile.problems();
                self.problems = Some((self.profile.rules.clone(), problems.clone()));
                problems
            }
        }
    }

    /// A new, unsaved profile starting from `base` (a shipped or saved profile, or none).
    pub fn new_from(base: Option<&Profile>) -> Self {
        let profile = match base {
            Some(b) => Profile {
                name: format!("{}-custom", b.name),
                description: b.description.clone(),
                rules: b.rules.clone(),
            },
            None => Profile {
                name: "my-profile".to_owned(),
                description: String::new(),
                rules: Vec::new(),
            },
        };
        let mut editor = Self::new(profile, ProfileSource::New);
        editor.changed_at = Some(Instant::now());
        editor
    }

    pub fn is_dirty(&self) -> bool {
        self.profile != self.saved || self.source == ProfileSource::New
    }

    fn touch(&mut self) {
        self.changed_at = Some(Instant::now());
    }

    /// Moves rule `i` one place up (`up`) or down; out-of-range moves do nothing.
    pub fn move_rule(&mut self, i: usize, up: bool) {
        let j = if up { i.checked_sub(1) } else { Some(i + 1) };
        if let Some(j) = j
            && i < self.profile.rules.len()
            && j < self.profile.rules.len()
        {
            self.profile.rules.swap(i, j);
            self.touch();
        }
    }

    pub fn delete_rule(&mut self, i: usize) {
        if i < self.profile.rules.len() {
            self.profile.rules.remove(i);
            self.touch();
        }
    }

    pub fn add_rule(&mut self, action: Action) {
        self.profile.rules.push(Rule::new(action));
        self.touch();
    }

    /// The profile the pane should lay out with: the enabled rules that parse.
    pub fn applicable(&self) -> Profile {
        self.profile.applicable()
    }

    /// Whether the debounce time has passed since the last change; clears the change. Returns
    /// the time left otherwise.
    pub fn settled(&mut self, now: Instant) -> Result<bool, Duration> {
        match self.changed_at {
            None => Ok(false),
            Some(t) => {
                let waited = now.saturating_duration_since(t);
                if waited >= Self::DEBOUNCE {
                    self.changed_at = None;
                    Ok(true)
                } else {
                    Err(Self::DEBOUNCE - waited)
                }
            }
        }
    }

    /// Saves the working copy as `dir/NAME.toml`. Shipped names are refused (a user profile
    /// would shadow the shipped one for `--profile NAME`).
    pub fn save_to(&mut self, dir: &Path) -> Result<PathBuf, String> {
        let name = self.profile.name.trim().to_owned();
        if name.is_empty() {
            return Err("give the profile a name first".to_owned());
        }
        if profiles::is_shipped(&name) {
            return Err(format!(
                "{name} is a shipped profile: save under another name"
            ));
        }
        if let Some((i, p)) = self
            .profile
            .problems()
            .into_iter()
            .enumerate()
            .find_map(|(i, p)| p.filter(|_| self.profile.rules[i].enabled).map(|p| (i, p)))
        {
            return Err(format!(
                "rule {} cannot be saved switched on: {}",
                i + 1,
                first_lines(&p, 1)
            ));
        }
        self.profile.name = name;
        let path = dir.join(self.profile.file_name());
        self.profile.save(&path).map_err(|e| e.to_string())?;
        self.saved = self.profile.clone();
        self.source = ProfileSource::User(path.clone());
        Ok(path)
    }

    /// The editor panel. `user` are the saved profiles offered as starting points.
    pub fn ui(&mut self, ui: &mut egui::Ui, user: &[UserProfile]) -> EditorEvent {
        let mut event = EditorEvent::None;
        ui.horizontal(|ui| {
            ui.heading("Filter profile");
            if ui.small_button("close").clicked() {
                event = EditorEvent::Close;
            }
        });
        egui::Grid::new("profile-editor-head")
            .num_columns(2)
            .show(ui, |ui| {
                ui.label("name");
                ui.add(egui::TextEdit::singleline(&mut self.profile.name).desired_width(180.0));
                ui.end_row();
                ui.label("about");
                ui.add(
                    egui::TextEdit::singleline(&mut self.profile.description).desired_width(180.0),
                );
                ui.end_row();
            });
        let dir = profiles::user_profiles_dir();
        ui.horizontal_wrapped(|ui| {
            let save = ui
                .add_enabled(
                    dir.is_some() && self.is_dirty(),
                    egui::Button::new(if self.is_dirty() { "save" } else { "saved" }),
                )
                .on_hover_text(match &dir {
                    Some(d) => format!("as TOML in {}", d.display()),
                    None => "no configuration directory (set XDG_CONFIG_HOME or HOME)".into(),
                });
            if save.clicked()
                && let Some(d) = &dir
            {
                match self.save_to(d) {
                    Ok(path) => {
                        self.status = Some(Ok(format!("saved {}", path.display())));
                        event = EditorEvent::Saved(path);
                    }
                    Err(e) => self.status = Some(Err(e)),
                }
            }
            if ui
                .add_enabled(self.profile != self.saved, egui::Button::new("revert"))
                .clicked()
            {
                self.profile = self.saved.clone();
                self.touch();
            }
            let mut base: Option<Profile> = None;
            let mut chosen = false;
            egui::ComboBox::from_id_salt("profile-editor-new-from")
                .selected_text("new from…")
                .show_ui(ui, |ui| {
                    if ui.selectable_label(false, "empty").clicked() {
                        chosen = true;
                    }
                    for (name, _) in memscape_graph::filter::SHIPPED_PROFILES {
                        if ui.selectable_label(false, name).clicked() {
                            base = Profile::shipped(name);
                            chosen = true;
                        }
                    }
                    for u in user {
                        if let Ok(p) = &u.profile
                            && ui.selectable_label(false, &p.name).clicked()
                        {
                            base = Some(p.clone());
                            chosen = true;
                        }
                    }
                });
            if chosen {
                *self = Self::new_from(base.as_ref());
            }
        });
        match &self.status {
            Some(Ok(m)) => {
                ui.weak(m);
            }
            Some(Err(e)) => {
                ui.colored_label(Color32::LIGHT_RED, e);
            }
            None => {}
        }
        ui.separator();
        ui.weak("rules apply from top to bottom");
        let problems = self.problems();
        let mut changed = false;
        let mut op: Option<(usize, RuleOp)> = None;
        egui::ScrollArea::vertical()
            .auto_shrink([false, true])
            .show(ui, |ui| {
                let count = self.profile.rules.len();
                for (i, rule) in self.profile.rules.iter_mut().enumerate() {
                    egui::Frame::group(ui.style()).show(ui, |ui| {
                        ui.set_width(ui.available_width());
                        let (c, o) =
                            rule_ui(ui, i, count, rule, problems.get(i).cloned().flatten());
                        changed |= c;
                        if let Some(o) = o {
                            op = Some((i, o));
                        }
                    });
                }
                ui.horizontal(|ui| {
                    ui.menu_button("+ rule", |ui| {
                        for action in Action::ALL {
                            if ui.button(action_label(action)).clicked() {
                                op = Some((usize::MAX, RuleOp::Add(action)));
                                ui.close();
                            }
                        }
                    });
                });
            });
        match op {
            Some((i, RuleOp::Up)) => self.move_rule(i, true),
            Some((i, RuleOp::Down)) => self.move_rule(i, false),
            Some((i, RuleOp::Delete)) => self.delete_rule(i),
            Some((_, RuleOp::Add(action))) => self.add_rule(action),
            None => {}
        }
        if changed {
            self.touch();
        }
        event
    }
}

#[derive(Debug, Clone, Copy)]
enum RuleOp {
    Up,
    Down,
    Delete,
    Add(Action),
}

fn action_label(action: Action) -> &'static str {
    match action {
        Action::Color => "color",
        Action::Hide => "hide (semi-transparent)",
        Action::Remove => "remove",
        Action::Merge => "merge into neighbour",
        Action::Split => "split into its uses",
        Action::RemoveEdges => "remove edges",
    }
}

/// One rule's rows; returns whether it changed and a list operation asked for.
fn rule_ui(
    ui: &mut egui::Ui,
    i: usize,
    count: usize,
    rule: &mut Rule,
    problem: Option<String>,
) -> (bool, Option<RuleOp>) {
    let mut changed = false;
    let mut op = None;
    ui.horizontal(|ui| {
        changed |= ui
            .checkbox(&mut rule.enabled, format!("{}", i + 1))
            .on_hover_text("apply this rule")
            .changed();
        egui::ComboBox::from_id_salt(("rule-action", i))
            .selected_text(action_label(rule.action))
            .width(150.0)
            .show_ui(ui, |ui| {
                for action in Action::ALL {
                    changed |= ui
                        .selectable_value(&mut rule.action, action, action_label(action))
                        .changed();
                }
            });
        if rule.action == Action::Color && rule.color.is_none() {
            rule.color = Some("#dcdcdc".to_owned());
            changed = true;
        }
        if ui
            .add_enabled(
                i > 0,
                egui::Button::new(egui::RichText::new("↑").monospace()).small(),
            )
            .on_hover_text("apply earlier")
            .clicked()
        {
            op = Some(RuleOp::Up);
        }
        if ui
            .add_enabled(
                i + 1 < count,
                egui::Button::new(egui::RichText::new("↓").monospace()).small(),
            )
            .on_hover_text("apply later")
            .clicked()
        {
            op = Some(RuleOp::Down);
        }
        if ui
            .small_button("×")
            .on_hover_text("delete the rule")
            .clicked()
        {
            op = Some(RuleOp::Delete);
        }
    });
    ui.horizontal(|ui| {
        if rule.action == Action::RemoveEdges {
            ui.label("edges");
        } else {
            egui::ComboBox::from_id_salt(("rule-target", i))
                .selected_text(match rule.target {
                    Target::Node => "nodes",
                    Target::Edge => "edges",
                })
                .width(60.0)
                .show_ui(ui, |ui| {
                    changed |= ui
                        .selectable_value(&mut rule.target, Target::Node, "nodes")
                        .changed();
                    changed |= ui
                        .selectable_value(&mut rule.target, Target::Edge, "edges")
                        .changed();
                });
        }
        ui.label("whose");
        changed |= ui
            .add(
                egui::TextEdit::singleline(&mut rule.property)
                    .hint_text("property")
                    .desired_width(80.0),
            )
            .on_hover_text(
                "node property (name, category, text…); edges: type, label, from, to, \
                 from_index, to_index, self",
            )
            .changed();
        ui.label("~");
        changed |= ui
            .add(
                egui::TextEdit::singleline(&mut rule.regex)
                    .hint_text("regex")
                    .code_editor()
                    .desired_width(ui.available_width().max(60.0)),
            )
            .changed();
    });
    match rule.action {
        Action::Color => {
            ui.horizontal(|ui| {
                ui.label("colour");
                let text = rule.color.clone().unwrap_or_default();
                if let Some(c) = parse_color(&text) {
                    let mut color = Color32::from_rgba_unmultiplied(c[0], c[1], c[2], c[3]);
                    if egui::widgets::color_picker::color_edit_button_srgba(
                        ui,
                        &mut color,
                        egui::widgets::color_picker::Alpha::OnlyBlend,
                    )
                    .changed()
                    {
                        set_color(rule, color.to_srgba_unmultiplied());
                        changed = true;
                    }
                }
                let mut hex = text;
                if ui
                    .add(egui::TextEdit::singleline(&mut hex).desired_width(80.0))
                    .changed()
                {
                    rule.color = Some(hex);
                    changed = true;
                }
            });
        }
        Action::Merge => {
            ui.horizontal(|ui| {
                ui.label("into its");
                changed |= ui
                    .radio_value(
                        &mut rule.direction,
                        MergeDirection::Predecessor,
                        "input (lowest slot)",
                    )
                    .changed();
                changed |= ui
                    .radio_value(&mut rule.direction, MergeDirection::Successor, "use")
                    .changed();
            });
        }
        _ => {}
    }
    if let Some(p) = problem {
        let text = if rule.enabled {
            format!("not applied: {p}")
        } else {
            p
        };
        // Monospace: regex errors point at the problem with a caret under the pattern.
        ui.label(
            egui::RichText::new(first_lines(&text, 4))
                .monospace()
                .size(11.0)
                .color(Color32::LIGHT_RED),
        );
    }
    (changed, op)
}

/// Sets a rule's colour (what the colour button does).
pub fn set_color(rule: &mut Rule, color: [u8; 4]) {
    rule.color = Some(format_color(color));
}

/// At most `n` lines of `text` (regex errors draw a caret diagram over several lines).
fn first_lines(text: &str, n: usize) -> String {
    text.lines().take(n).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use memscape_graph::filter::apply_profile;

    fn example() -> memscape_graph::model::Graph {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("crates/memscape-graph/tests/data/igv_difference.xml");
        memscape_graph::load_graphs(&[path.as_path()])
            .unwrap()
            .document
            .snapshots()[0]
            .clone()
    }

    /// Editing in the UI state, saving as TOML and loading the file gives the same profile,
    /// with the same effect on a graph.
    #[test]
    fn edited_profile_round_trips_through_toml() {
        let mut editor = ProfileEditor::new_from(Profile::shipped("hotspot").as_ref());
        assert_eq!(editor.profile.name, "hotspot-custom");
        assert!(editor.is_dirty());
        let n = editor.profile.rules.len();
        // Switch the disabled "hide data" rule on, move it first, recolour control nodes,
        // delete the merge of projections, add a rule removing edges.
        let hide = editor
            .profile
            .rules
            .iter()
            .position(|r| r.action == Action::Hide)
            .unwrap();
        editor.profile.rules[hide].enabled = true;
        for k in (1..=hide).rev() {
            editor.move_rule(k, true);
        }
        assert_eq!(editor.profile.rules[0].action, Action::Hide);
        editor.move_rule(0, true); // already first: nothing
        assert_eq!(editor.profile.rules[0].action, Action::Hide);
        set_color(&mut editor.profile.rules[1], [1, 2, 3, 128]);
        let merge = editor
            .profile
            .rules
            .iter()
            .position(|r| r.action == Action::Merge)
            .unwrap();
        editor.delete_rule(merge);
        editor.add_rule(Action::RemoveEdges);
        let last = editor.profile.rules.len() - 1;
        editor.profile.rules[last].regex = "^data$".to_owned();
        assert_eq!(editor.profile.rules.len(), n);
        assert!(editor.profile.problems().iter().all(Option::is_none));

        let dir = tempfile::tempdir().unwrap();
        let path = editor.save_to(dir.path()).unwrap();
        assert_eq!(path, dir.path().join("hotspot-custom.toml"));
        assert_eq!(editor.source, ProfileSource::User(path.clone()));
        assert!(!editor.is_dirty());
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("color = \"#01020380\""), "{text}");
        let loaded = Profile::load(&path).unwrap();
        assert_eq!(loaded, editor.profile);
        assert_eq!(
            profiles::find_user_profile_in(dir.path(), "hotspot-custom"),
            Some(path)
        );

        // Same effect as the editor's state: data nodes hidden, no merges, no data edges.
        let g = example();
        let a = apply_profile(&g, &editor.applicable()).unwrap();
        let b = apply_profile(&g, &loaded).unwrap();
        assert_eq!(a.nodes, b.nodes);
        assert_eq!(a.graph.edges.len(), b.graph.edges.len());
        assert!(a.nodes.iter().all(|s| s.merged.is_empty()));
        assert!(a.graph.edges.iter().all(|e| e.kind != "data"));
    }

    #[test]
    fn shipped_names_are_not_overwritten_and_broken_rules_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let mut editor = ProfileEditor::new(
            Profile::shipped("hotspot").unwrap(),
            ProfileSource::Shipped("hotspot"),
        );
        assert!(editor.save_to(dir.path()).unwrap_err().contains("shipped"));
        editor.profile.name = "  ".to_owned();
        assert!(editor.save_to(dir.path()).is_err());
        // A half-typed regex: the rule is named, the others still apply, nothing panics.
        editor.profile.name = "typing".to_owned();
        assert!(editor.problems().iter().all(Option::is_none));
        editor.profile.rules[0].regex = "^(contr".to_owned();
        assert!(
            editor.problems()[0].is_some(),
            "the cache follows the rules"
        );
        editor.profile.rules[1].color = Some("#12".to_owned());
        let problems = editor.profile.problems();
        assert!(problems[0].is_some() && problems[1].is_some());
        let usable = editor.applicable();
        assert_eq!(usable.rules.len(), editor.profile.rules.len() - 2);
        apply_profile(&example(), &usable).unwrap();
        // Saving a broken rule switched on is refused (the file would not load); switched
        // off, it is kept as typed.
        let e = editor.save_to(dir.path()).unwrap_err();
        assert!(e.contains("rule 1"), "{e}");
        editor.profile.rules[0].enabled = false;
        editor.profile.rules[1].enabled = false;
        let path = editor.save_to(dir.path()).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("^(contr"));
        assert_eq!(Profile::load(&path).unwrap(), editor.profile);
    }

    #[test]
    fn changes_settle_after_the_debounce() {
        let mut editor =
            ProfileEditor::new(Profile::shipped("llvm-cfg").unwrap(), ProfileSource::New);
        let t0 = Instant::now();
        assert_eq!(editor.settled(t0), Ok(false), "nothing changed");
        editor.add_rule(Action::Hide);
        let changed = editor.changed_at.unwrap();
        assert!(
            editor
                .settled(changed + Duration::from_millis(100))
                .is_err()
        );
        assert_eq!(editor.settled(changed + ProfileEditor::DEBOUNCE), Ok(true));
        assert_eq!(
            editor.settled(changed + Duration::from_secs(5)),
            Ok(false),
            "once"
        );
    }
}
