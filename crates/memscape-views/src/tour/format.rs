//! The tour file: a TOML list of steps, each a view of a file with its settings (the view's
//! typed settings, written as the step's own fields) and an optional caption, reached by an
//! eased transition. Unset fields keep the previous step's value; another file or view starts
//! afresh.
//!
//! ```toml
//! [[step]]
//! file = "demo"                 # a path, `demo` (kvstore) or `demo:sort` (lackey)
//! view = "alloc-map"            # any `memscape render --view` value
//! caption = "The **whole** heap"
//! alpha = 0.5                   # the view's settings, named as `memscape render`'s options
//!
//! [[step]]
//! duration = 1.5                # seconds of transition into this step
//! hold = 2.0                    # seconds shown after it (render-tour)
//! easing = "smooth"             # or "linear"
//! range_time = [40000, 80000]   # allocation map camera: time and address ranges
//! ```
//!
//! Tours written before the settings were typed read the same: their fields are the settings'
//! names, and fields that were text then (`panels = "main,occupancy"`) still read as text.

use std::path::Path;

use crate::error::{Context as _, Result, ViewError};
use crate::view::{ViewKind, ViewSettings};

/// How a transition eases in and out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Easing {
    Linear,
    #[default]
    Smooth,
}

impl Easing {
    pub fn apply(self, u: f32) -> f32 {
        let u = u.clamp(0.0, 1.0);
        match self {
            Easing::Linear => u,
            Easing::Smooth => crate::picture::ease(u),
        }
    }
}

/// One step with every setting resolved (inherited from the steps before it).
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// As the tour names it: a path (relative to the tour file) or a demo name.
    pub file: String,
    pub settings: ViewSettings,
    pub caption: Option<String>,
    /// Seconds of the transition into this step (1 when unset).
    pub duration: Option<f32>,
    /// Seconds shown after it (2 when unset).
    pub hold: Option<f32>,
    pub easing: Option<Easing>,
}

impl Step {
    /// A step showing `settings` of `file`, with no caption and the default timing.
    pub fn new(file: impl Into<String>, settings: ViewSettings) -> Self {
        Self {
            file: file.into(),
            settings,
            caption: None,
            duration: None,
            hold: None,
            easing: None,
        }
    }

    pub fn kind(&self) -> ViewKind {
        self.settings.kind()
    }
}

/// A step as resolved so far: the file, the view and the view's fields.
#[derive(Default)]
struct Current {
    file: Option<String>,
    view: Option<ViewKind>,
    fields: toml::Table,
}

/// The longest transition or hold of a step, in seconds.
pub const MAX_STEP_SECONDS: f64 = 3600.0;

/// The fields of a step that are not settings of its view.
const STEP_FIELDS: [&str; 6] = ["file", "view", "caption", "duration", "hold", "easing"];

/// The demo tour, over the embedded demo files.
pub const DEMO_TOUR: &str = include_str!("../../../../assets/demo/tour.toml");

/// Parses a tour; `source` names it in errors. Resolves inheritance: each step starts from the
/// previous step's state (the first from nothing) and must end with a file and a view.
pub fn parse(text: &str, source: &str) -> Result<Vec<Step>> {
    let file: toml::Table = toml::from_str(text)
        .map_err(|e| ViewError::caused(format!("{source}: not a valid tour file"), e))?;
    if let Some(key) = file.keys().find(|k| *k != "step") {
        crate::bail!("{source}: unknown table or key `{key}` (a tour is a list of [[step]])");
    }
    let steps = match file.get("step") {
        Some(toml::Value::Array(steps)) if !steps.is_empty() => steps,
        _ => crate::bail!("{source}: the tour has no [[step]]"),
    };
    let mut states = Vec::with_capacity(steps.len());
    let mut current = Current::default();
    for (i, step) in steps.iter().enumerate() {
        let at = || format!("{source}: step {}", i + 1);
        let toml::Value::Table(step) = step else {
            crate::bail!("{}: not a table", at());
        };
        states.push(resolve(&mut current, step).with_context(at)?);
    }
    Ok(states)
}

/// Applies one step's table to `current` and returns the resolved step.
fn resolve(current: &mut Current, step: &toml::Table) -> Result<Step> {
    let text = |key: &str| -> Result<Option<String>> {
        match step.get(key) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => crate::bail!("`{key}` must be text, not {}", other.type_str()),
        }
    };
    let seconds = |key: &str| -> Result<Option<f32>> {
        let v = match step.get(key) {
            None => return Ok(None),
            Some(toml::Value::Float(v)) => *v,
            Some(toml::Value::Integer(v)) => *v as f64,
            Some(other) => crate::bail!("`{key}` must be seconds, not {}", other.type_str()),
        };
        // Frames are counted from these: an hour per step is plenty, and keeps the count of a
        // whole tour far from overflowing.
        if !(0.0..=MAX_STEP_SECONDS).contains(&v) {
            crate::bail!("`{key}` must be seconds from 0 to {MAX_STEP_SECONDS}, not {v}");
        }
        Ok(Some(v as f32))
    };
    let view = match step.get("view") {
        None => None,
        Some(v) => Some(ViewKind::deserialize(v.clone()).map_err(|_| {
            ViewError::msg(format!(
                "view {v}: not a view (see `memscape render --help`)"
            ))
        })?),
    };
    let file = text("file")?;
    // Settings of no view at all are typos; settings of another view are mistakes too.
    let kind = view.or(current.view);
    for key in step.keys().filter(|k| !STEP_FIELDS.contains(&k.as_str())) {
        let known = |k: ViewKind| ViewSettings::field_names(k).iter().any(|f| f == key);
        match kind {
            Some(kind) if !known(kind) => {
                if ViewKind::ALL.iter().any(|&k| known(k)) {
                    crate::bail!("`{key}` is not a setting of the {} view", kind.name());
                }
                crate::bail!("unknown field `{key}`");
            }
            None if !ViewKind::ALL.iter().any(|&k| known(k)) => {
                crate::bail!("unknown field `{key}`");
            }
            _ => {}
        }
    }
    let file_changed = file.is_some() && file != current.file;
    let view_changed = view.is_some() && view != current.view;
    if file_changed || view_changed {
        // A different picture: its settings start afresh.
        current.fields.clear();
    }
    if let Some(f) = file {
        current.file = Some(f);
    }
    if let Some(v) = view {
        current.view = Some(v);
    }
    let (Some(file), Some(kind)) = (current.file.clone(), current.view) else {
        crate::bail!("no file or view (the first step must name both)");
    };
    let given: toml::Table = step
        .iter()
        .filter(|(k, _)| !STEP_FIELDS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    inherit(kind, &mut current.fields, &given);
    current.fields.extend(given);
    let settings = ViewSettings::from_table(kind, current.fields.clone())?;
    let easing = match step.get("easing") {
        None => None,
        Some(v) => Some(Easing::deserialize(v.clone()).map_err(|_| {
            ViewError::msg(format!("easing {v}: expected \"smooth\" or \"linear\""))
        })?),
    };
    Ok(Step {
        file,
        settings,
        caption: text("caption")?,
        duration: seconds("duration")?,
        hold: seconds("hold")?,
        easing,
    })
}

use serde::Deserialize as _;

/// What a step does not inherit because of what it sets.
fn inherit(kind: ViewKind, fields: &mut toml::Table, step: &toml::Table) {
    match ViewSettings::default_for(kind) {
        ViewSettings::HeapTree(_) => {
            // `at`, `peak` and `snapshot` each choose the time point: a step that sets one of
            // them does not inherit the others.
            let peak = step.get("peak").and_then(toml::Value::as_bool) == Some(true);
            if step.contains_key("at") || peak || step.contains_key("snapshot") {
                for key in ["at", "peak", "snapshot"] {
                    fields.remove(key);
                }
            }
        }
        // Each bin has its own address axis: a step that bins the map does not inherit an
        // address range.
        ViewSettings::AllocMap(_)
            if step
                .get("bins")
                .and_then(toml::Value::as_str)
                .is_some_and(|b| b != "none") =>
        {
            fields.remove("range_addr");
        }
        _ => {}
    }
}

/// The step as a `[[step]]` table: its file, view, caption and timing, then every setting.
pub fn step_text(step: &Step) -> Result<String> {
    #[derive(serde::Serialize)]
    struct Out<'a> {
        file: &'a str,
        view: ViewKind,
        #[serde(skip_serializing_if = "Option::is_none")]
        caption: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        duration: Option<f32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        hold: Option<f32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        easing: Option<Easing>,
        #[serde(flatten)]
        settings: &'a ViewSettings,
    }
    #[derive(serde::Serialize)]
    struct One<'a> {
        step: [Out<'a>; 1],
    }
    let out = Out {
        file: &step.file,
        view: step.kind(),
        caption: step.caption.as_deref(),
        duration: step.duration,
        hold: step.hold,
        easing: step.easing,
        settings: &step.settings,
    };
    toml::to_string(&One { step: [out] }).map_err(|e| {
        ViewError::msg(format!(
            "internal: a tour step that does not serialize: {e}"
        ))
    })
}

/// Appends `step` to the tour file at `path` (created if missing) as a `[[step]]` table.
pub fn append_step(path: &Path, step: &Step) -> Result<()> {
    let text = step_text(step)?;
    use std::io::Write as _;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("{}: cannot open the tour for appending", path.display()))?;
    writeln!(file, "\n{}", text.trim_end())
        .with_context(|| format!("{}: cannot write the tour", path.display()))?;
    Ok(())
}

/// How a dataset is named in a tour file: `demo` / `demo:<key>` for an embedded demo file,
/// else the file's absolute path.
pub fn tour_file_of(dataset: &crate::dataset::Dataset) -> String {
    let name = dataset.name.as_str();
    match crate::demo::of_dataset_name(name) {
        Some(demo) => demo.tour_name(),
        None => std::fs::canonicalize(name)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| name.to_owned()),
    }
}

/// Frames for `seconds` at `fps` (at least one).
pub fn frames_of(seconds: f32, fps: f32) -> usize {
    ((seconds.max(0.0) * fps).round() as usize).max(1)
}

/// Total frames a tour renders to.
pub fn frame_count(states: &[Step], fps: f32) -> usize {
    states
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let transition = if i > 0 {
                frames_of(s.duration.unwrap_or(1.0), fps)
            } else {
                0
            };
            transition.saturating_add(frames_of(s.hold.unwrap_or(2.0), fps).max(1))
        })
        .fold(0, usize::saturating_add)
}
