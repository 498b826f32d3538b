//! Property filters: ordered rules, saved as named profiles in TOML, applied to a graph into a
//! [`ViewGraph`] (what is drawn: which nodes and edges remain, their colors, which are shown
//! semi-transparent, what was merged where). Declarative, no scripting.
//!
//! ```toml
//! name = "hotspot"
//! description = "…"
//! [[rule]]
//! action = "color"          # remove | color | hide | merge | split | remove_edges
//! target = "node"           # node (default) | edge; remove_edges always targets edges
//! property = "category"     # property whose value is matched
//! regex = "^control$"       # Rust regex syntax
//! color = "#f2caca"         # color: #rrggbb or #rrggbbaa
//! direction = "predecessor" # merge: predecessor (default, input 0 first) | successor
//! orphans = true            # remove: also remove the nodes left without uses (IGV's
//!                           # removeIncludingOrphans), repeatedly; default false
//! enabled = true            # default true; the UI toggles it
//! ```
//!
//! Edges expose pseudo-properties `type`, `label`, `from`, `to` (node ids), `from_index`,
//! `to_index`, `self` (`true` for a self-loop) besides their DOT attributes. A node lacking the
//! property never matches.

use std::path::{Path, PathBuf};

use regex::Regex;

use crate::GraphError;
use crate::model::{Edge, Graph};

/// What a rule does to what it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Remove,
    Color,
    /// Keep but draw semi-transparent.
    Hide,
    /// Fold the node into a neighbour (its edges move to the neighbour).
    Merge,
    /// Remove the node and show it in each of its uses instead (IGV's split filter: a constant
    /// appears as a line `slot: label` in every node that uses it).
    Split,
    /// Remove the edges whose property matches (by default their `type`).
    RemoveEdges,
}

impl Action {
    /// Every action, in the order an editor lists them.
    pub const ALL: [Action; 6] = [
        Action::Color,
        Action::Hide,
        Action::Remove,
        Action::Merge,
        Action::Split,
        Action::RemoveEdges,
    ];

    /// The name used in profile files.
    pub fn name(self) -> &'static str {
        match self {
            Action::Remove => "remove",
            Action::Color => "color",
            Action::Hide => "hide",
            Action::Merge => "merge",
            Action::Split => "split",
            Action::RemoveEdges => "remove_edges",
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    #[default]
    Node,
    Edge,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MergeDirection {
    #[default]
    Predecessor,
    Successor,
}

fn yes() -> bool {
    true
}

fn type_property() -> String {
    "type".to_owned()
}

/// One rule of a profile.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Rule {
    pub action: Action,
    #[serde(default)]
    pub target: Target,
    #[serde(default = "type_property")]
    pub property: String,
    pub regex: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    #[serde(default)]
    pub direction: MergeDirection,
    /// `remove` only: also remove the nodes that had uses and have none left, repeatedly.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub orphans: bool,
    #[serde(default = "yes")]
    pub enabled: bool,
}

/// A named, ordered rule set.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Profile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default, rename = "rule")]
    pub rules: Vec<Rule>,
}

/// The profiles shipped with memscape, by name.
pub const SHIPPED_PROFILES: [(&str, &str); 4] = [
    ("hotspot", include_str!("../profiles/hotspot.toml")),
    ("llvm-cfg", include_str!("../profiles/llvm-cfg.toml")),
    ("graal", include_str!("../profiles/graal.toml")),
    ("graal-cfg", include_str!("../profiles/graal-cfg.toml")),
];

impl Profile {
    /// Parses a profile from TOML; `source` names it in errors.
    pub fn from_toml(text: &str, source: &str) -> Result<Self, GraphError> {
        let profile: Profile = toml::from_str(text).map_err(|e| GraphError::Profile {
            profile: source.to_owned(),
            message: e.to_string(),
        })?;
        profile.compile()?;
        Ok(profile)
    }

    /// Writes the profile as TOML (the UI saves edited profiles with this).
    pub fn to_toml(&self) -> Result<String, GraphError> {
        toml::to_string_pretty(self).map_err(|e| GraphError::Profile {
            profile: self.name.clone(),
            message: e.to_string(),
        })
    }

    /// A shipped profile by name (`hotspot`, `llvm-cfg`, `graal`, `graal-cfg`).
    pub fn shipped(name: &str) -> Option<Profile> {
        SHIPPED_PROFILES
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(n, text)| Profile::from_toml(text, n).ok())
    }

    /// Reads a profile TOML file.
    pub fn load(path: &Path) -> Result<Self, GraphError> {
        let text = std::fs::read_to_string(path).map_err(|source| {
            GraphError::Input(memscape_io::InputError::Io {
                path: path.to_owned(),
                source,
            })
        })?;
        Self::from_toml(&text, &path.display().to_string())
    }

    /// Writes the profile as TOML to `path`, creating its directory.
    pub fn save(&self, path: &Path) -> Result<(), GraphError> {
        let text = self.to_toml()?;
        let fail = |e: std::io::Error| GraphError::Invalid {
            file: path.display().to_string(),
            message: format!("cannot write the profile: {e}"),
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(fail)?;
        }
        std::fs::write(path, text).map_err(fail)
    }

    /// The file name a user profile of this name is saved under: `NAME.toml`, with anything
    /// but letters, digits, `-`, `_` and `.` replaced by `_` (never empty, never hidden).
    pub fn file_name(&self) -> String {
        let mut stem: String = self
            .name
            .trim()
            .chars()
            .map(|c| {
                if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if stem.is_empty() || stem.starts_with('.') {
            stem.insert_str(0, "profile");
        }
        format!("{stem}.toml")
    }

    /// Why each rule cannot be applied (a regex or color that does not parse), by rule index;
    /// `None` for usable rules. Disabled rules are checked too, so that an editor can show
    /// their problems before they are switched on.
    pub fn problems(&self) -> Vec<Option<String>> {
        self.rules
            .iter()
            .map(|rule| compile_rule(rule).err())
            .collect()
    }

    /// The profile without its enabled rules that cannot be applied (see [`Profile::problems`]),
    /// so that an editor can apply the rest while one rule is being typed.
    pub fn applicable(&self) -> Profile {
        Profile {
            rules: self
                .rules
                .iter()
                .filter(|r| !r.enabled || compile_rule(r).is_ok())
                .cloned()
                .collect(),
            ..self.clone()
        }
    }

    fn compile(&self) -> Result<Vec<Option<CompiledRule>>, GraphError> {
        self.rules
            .iter()
            .enumerate()
            .map(|(i, rule)| {
                if !rule.enabled {
                    return Ok(None);
                }
                compile_rule(rule)
                    .map(Some)
                    .map_err(|message| GraphError::Profile {
                        profile: self.name.clone(),
                        message: format!("rule {}: {message}", i + 1),
                    })
            })
            .collect()
    }
}

impl Rule {
    /// A new enabled rule matching nothing yet; colour rules start grey.
    pub fn new(action: Action) -> Self {
        Rule {
            action,
            target: Target::Node,
            property: if action == Action::RemoveEdges {
                type_property()
            } else {
                "name".to_owned()
            },
            regex: String::new(),
            color: (action == Action::Color).then(|| "#dcdcdc".to_owned()),
            direction: MergeDirection::Predecessor,
            orphans: false,
            enabled: true,
        }
    }
}

/// Longest pattern a user may give (a rule, a search): far above any real one.
pub const MAX_PATTERN_CHARS: usize = 4096;
/// Compiled program and lazy-DFA caps of a user regex: `a{1000}{1000}` is refused with
/// "exceeds size limit" instead of compiling for seconds into hundreds of megabytes.
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;
pub const REGEX_DFA_LIMIT: usize = 8 << 20;

/// A regex from user input (filter rules, search), with explicit limits on its length, its
/// compiled size, its lazy DFA and its nesting.
pub fn user_regex(pattern: &str) -> Result<Regex, String> {
    if pattern.chars().count() > MAX_PATTERN_CHARS {
        return Err(format!(
            "the pattern is longer than {MAX_PATTERN_CHARS} characters"
        ));
    }
    regex::RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_DFA_LIMIT)
        .nest_limit(64)
        .build()
        .map_err(|e| e.to_string())
}

fn compile_rule(rule: &Rule) -> Result<CompiledRule, String> {
    let regex = user_regex(&rule.regex)?;
    let color = match (&rule.action, &rule.color) {
        (Action::Color, None) => {
            return Err("a color rule needs `color = \"#rrggbb\"`".into());
        }
        (_, Some(c)) => {
            Some(parse_color(c).ok_or_else(|| format!("color {c:?} is not #rrggbb or #rrggbbaa"))?)
        }
        (_, None) => None,
    };
    Ok(CompiledRule {
        rule: rule.clone(),
        regex,
        color,
    })
}

/// The profiles saved in `dir` (`*.toml`, sorted by file name), each parsed or with the reason
/// it could not be. A missing directory holds none.
pub fn load_profile_dir(dir: &Path) -> Vec<(PathBuf, Result<Profile, GraphError>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml") && p.is_file())
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let profile = Profile::load(&p);
            (p, profile)
        })
        .collect()
}

/// `#rrggbb`, or `#rrggbbaa` when not opaque (what [`parse_color`] reads).
pub fn format_color(c: [u8; 4]) -> String {
    if c[3] == 255 {
        format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
    } else {
        format!("#{:02x}{:02x}{:02x}{:02x}", c[0], c[1], c[2], c[3])
    }
}

/// Parses `#rrggbb` or `#rrggbbaa`.
pub fn parse_color(text: &str) -> Option<[u8; 4]> {
    let hex = text.trim().strip_prefix('#')?;
    if !(hex.len() == 6 || hex.len() == 8) || !hex.is_ascii() {
        return None;
    }
    let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
    Some([
        byte(0)?,
        byte(2)?,
        byte(4)?,
        if hex.len() == 8 { byte(6)? } else { 255 },
    ])
}

struct CompiledRule {
    rule: Rule,
    regex: Regex,
    color: Option<[u8; 4]>,
}

/// How one node of the view is drawn.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct NodeStyle {
    pub color: Option<[u8; 4]>,
    /// Drawn semi-transparent.
    pub hidden: bool,
    /// Ids of nodes merged into this one.
    pub merged: Vec<String>,
    /// Ids of split nodes shown in this one (one line each in its label).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub split: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct EdgeStyle {
    pub color: Option<[u8; 4]>,
    pub hidden: bool,
}

/// A graph after filtering, with per-node and per-edge style; `source_node[i]` is the index in
/// the input graph of view node `i`.
#[derive(Debug, Clone)]
pub struct ViewGraph {
    pub graph: Graph,
    pub nodes: Vec<NodeStyle>,
    pub edges: Vec<EdgeStyle>,
    pub source_node: Vec<usize>,
}

/// The value of a property of an edge, pseudo-properties included.
pub fn edge_property(graph: &Graph, edge: &Edge, name: &str) -> Option<String> {
    match name {
        "type" => Some(edge.kind.clone()),
        "label" => Some(edge.label.clone()),
        "from" => graph.nodes.get(edge.from).map(|n| n.id.clone()),
        "to" => graph.nodes.get(edge.to).map(|n| n.id.clone()),
        "from_index" => Some(edge.from_index.to_string()),
        "to_index" => Some(edge.to_index.to_string()),
        "self" => Some((edge.from == edge.to).to_string()),
        other => edge.properties.get(other).map(str::to_owned),
    }
}

/// Applies the enabled rules of `profile`, in order, to `graph`.
pub fn apply_profile(graph: &Graph, profile: &Profile) -> Result<ViewGraph, GraphError> {
    let rules = profile.compile()?;
    let mut view = ViewGraph {
        graph: graph.clone(),
        nodes: vec![NodeStyle::default(); graph.nodes.len()],
        edges: vec![EdgeStyle::default(); graph.edges.len()],
        source_node: (0..graph.nodes.len()).collect(),
    };
    for rule in rules.iter().flatten() {
        apply_rule(&mut view, rule);
    }
    Ok(view)
}

fn node_matches(view: &ViewGraph, rule: &CompiledRule) -> Vec<bool> {
    view.graph
        .nodes
        .iter()
        .map(|n| {
            n.properties
                .get(&rule.rule.property)
                .is_some_and(|v| rule.regex.is_match(v))
        })
        .collect()
}

fn edge_matches(view: &ViewGraph, rule: &CompiledRule) -> Vec<bool> {
    view.graph
        .edges
        .iter()
        .map(|e| {
            edge_property(&view.graph, e, &rule.rule.property)
                .is_some_and(|v| rule.regex.is_match(&v))
        })
        .collect()
}

fn apply_rule(view: &mut ViewGraph, rule: &CompiledRule) {
    let on_edges = rule.rule.action == Action::RemoveEdges || rule.rule.target == Target::Edge;
    if on_edges {
        let matched = edge_matches(view, rule);
        match rule.rule.action {
            Action::Remove | Action::RemoveEdges | Action::Merge | Action::Split => {
                let mut m = matched.iter();
                view.graph
                    .edges
                    .retain(|_| !m.next().copied().unwrap_or(false));
                let mut m = matched.iter();
                view.edges.retain(|_| !m.next().copied().unwrap_or(false));
            }
            Action::Color => {
                for (style, _) in view.edges.iter_mut().zip(&matched).filter(|(_, m)| **m) {
                    style.color = rule.color;
                }
            }
            Action::Hide => {
                for (style, _) in view.edges.iter_mut().zip(&matched).filter(|(_, m)| **m) {
                    style.hidden = true;
                }
            }
        }
        return;
    }
    let matched = node_matches(view, rule);
    match rule.rule.action {
        Action::Color => {
            for (style, _) in view.nodes.iter_mut().zip(&matched).filter(|(_, m)| **m) {
                style.color = rule.color;
            }
        }
        Action::Hide => {
            for (style, _) in view.nodes.iter_mut().zip(&matched).filter(|(_, m)| **m) {
                style.hidden = true;
            }
        }
        Action::Remove | Action::RemoveEdges => {
            let keep: Vec<bool> = matched.iter().map(|m| !m).collect();
            if rule.rule.orphans {
                remove_with_orphans(view, keep);
            } else {
                remove_nodes(view, &keep);
            }
        }
        Action::Merge => merge_nodes(view, &matched, rule.rule.direction),
        Action::Split => split_nodes(view, &matched),
    }
}

/// Removes the nodes not kept, then the nodes that had uses (outgoing edges) and have none
/// left, until none is left without its uses.
fn remove_with_orphans(view: &mut ViewGraph, mut keep: Vec<bool>) {
    let n = view.graph.nodes.len();
    let mut uses = vec![0usize; n];
    for e in &view.graph.edges {
        if e.from != e.to {
            uses[e.from] += 1;
        }
    }
    let mut queue: Vec<usize> = (0..n).filter(|&v| !keep[v]).collect();
    let mut inputs_of: Vec<Vec<usize>> = vec![Vec::new(); n];
    for e in &view.graph.edges {
        if e.from != e.to {
            inputs_of[e.to].push(e.from);
        }
    }
    // Removing a node takes one use from each of its inputs.
    while let Some(v) = queue.pop() {
        for &input in &inputs_of[v] {
            uses[input] -= 1;
            if uses[input] == 0 && keep[input] {
                keep[input] = false;
                queue.push(input);
            }
        }
    }
    remove_nodes(view, &keep);
}

/// Removes the matched nodes and adds a line `slot: label` to each node that used one (the
/// slot is the edge's label, else its input index).
fn split_nodes(view: &mut ViewGraph, matched: &[bool]) {
    let mut lines: Vec<Vec<String>> = vec![Vec::new(); view.graph.nodes.len()];
    for e in &view.graph.edges {
        if !matched[e.from] || matched[e.to] {
            continue;
        }
        let slot = if e.label.is_empty() {
            format!("#{}", e.to_index)
        } else {
            e.label.clone()
        };
        let source = &view.graph.nodes[e.from];
        lines[e.to].push(format!("{slot}: {}", source.label()));
        view.nodes[e.to].split.push(source.id.clone());
    }
    for (node, lines) in view.graph.nodes.iter_mut().zip(&lines) {
        if !lines.is_empty() {
            let text = format!("{}\n{}", node.label(), lines.join("\n"));
            node.properties.set("text", text);
        }
    }
    let keep: Vec<bool> = matched.iter().map(|m| !m).collect();
    remove_nodes(view, &keep);
}

/// Removes the nodes with `keep[i] == false`, their edges and their styles.
fn remove_nodes(view: &mut ViewGraph, keep: &[bool]) {
    let edge_keep: Vec<bool> = view
        .graph
        .edges
        .iter()
        .map(|e| keep[e.from] && keep[e.to])
        .collect();
    let mut k = edge_keep.iter();
    view.edges.retain(|_| k.next().copied().unwrap_or(false));
    let mut k = keep.iter();
    view.nodes.retain(|_| k.next().copied().unwrap_or(false));
    let mut k = keep.iter();
    view.source_node
        .retain(|_| k.next().copied().unwrap_or(false));
    view.graph.retain_nodes(|i, _| keep[i]);
}

fn merge_nodes(view: &mut ViewGraph, matched: &[bool], direction: MergeDirection) {
    let n = view.graph.nodes.len();
    // The neighbour each matched node folds into: the predecessor on the lowest input slot, or
    // the successor on the lowest output slot.
    let mut into: Vec<Option<usize>> = vec![None; n];
    let mut best_slot = vec![u32::MAX; n];
    for edge in &view.graph.edges {
        let (node, neighbour, slot) = match direction {
            MergeDirection::Predecessor => (edge.to, edge.from, edge.to_index),
            MergeDirection::Successor => (edge.from, edge.to, edge.from_index),
        };
        if !matched[node] || node == neighbour {
            continue;
        }
        if into[node].is_none() || slot < best_slot[node] {
            into[node] = Some(neighbour);
            best_slot[node] = slot;
        }
    }
    // Follow chains of merges (a projection of a projection) to a node that stays.
    let resolve = |mut v: usize| -> usize {
        for _ in 0..n {
            match into[v] {
                Some(w) => v = w,
                None => return v,
            }
        }
        v
    };
    let target: Vec<usize> = (0..n).map(resolve).collect();
    for v in 0..n {
        if target[v] != v && into[v].is_some() {
            let id = view.graph.nodes[v].id.clone();
            let t = target[v];
            if t != v {
                view.nodes[t].merged.push(id);
            }
        }
    }
    let mut keep_edge = Vec::with_capacity(view.graph.edges.len());
    for edge in &mut view.graph.edges {
        let (f, t) = (target[edge.from], target[edge.to]);
        let folded = f != edge.from || t != edge.to;
        edge.from = f;
        edge.to = t;
        // An edge between a node and what was merged into it disappears.
        keep_edge.push(!(folded && f == t));
    }
    let mut k = keep_edge.iter();
    view.graph
        .edges
        .retain(|_| k.next().copied().unwrap_or(false));
    let mut k = keep_edge.iter();
    view.edges.retain(|_| k.next().copied().unwrap_or(false));
    let keep: Vec<bool> = (0..n).map(|v| target[v] == v).collect();
    remove_nodes(view, &keep);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_profiles_parse() {
        for (name, _) in SHIPPED_PROFILES {
            let p = Profile::shipped(name);
            assert!(p.is_some(), "{name}");
            assert!(!p.unwrap().rules.is_empty());
        }
    }

    #[test]
    fn bad_regex_and_color_are_errors_naming_the_rule() {
        let bad = "name='x'\n[[rule]]\naction='color'\nproperty='a'\nregex='('\ncolor='#ffffff'\n";
        let e = Profile::from_toml(bad, "x.toml").unwrap_err().to_string();
        assert!(e.contains("rule 1"), "{e}");
        let bad = "name='x'\n[[rule]]\naction='color'\nproperty='a'\nregex='a'\ncolor='red'\n";
        assert!(Profile::from_toml(bad, "x.toml").is_err());
        assert_eq!(parse_color("#0a0b0c"), Some([10, 11, 12, 255]));
    }
}
