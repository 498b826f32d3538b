//! What linked views share about one dataset: a time cursor (in events of the trace) and a set
//! of highlighted blocks. A view writes it when the user chooses a time or selects a group and
//! reads it every frame, reacting when a version number moved. Views that share more (the
//! samples views' one selection and background analyses) keep it here too, as state of their
//! own type ([`Links::shared`]), so that this module knows no view.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, Default)]
pub struct LinkState {
    /// The chosen time as a number of events applied.
    pub time_events: Option<u64>,
    pub time_version: u64,
    /// Whether the user chose the time (`set_time`), not a view placing its default
    /// (`set_default_time`): a live recording's next snapshot keeps only a chosen time.
    pub time_chosen: bool,
    /// Indices of highlighted blocks (sorted), and what they are.
    pub highlight: Option<Arc<Vec<u32>>>,
    pub highlight_label: String,
    pub highlight_version: u64,
    /// A block the user picked (the heap tree shows its group).
    pub picked_block: Option<u32>,
    pub picked_version: u64,
}

/// State that views of one kind share per dataset, by its type.
type SharedStates = HashMap<TypeId, Arc<dyn Any + Send + Sync>>;

#[derive(Default)]
pub struct Links {
    state: Mutex<LinkState>,
    shared: Mutex<SharedStates>,
    /// The topology file a dataset of samples maps onto (opened with it, or chosen in the
    /// GUI), with a version bumped on every change; None: the samples' own default.
    topology: Mutex<(Option<std::path::PathBuf>, u64)>,
}

impl std::fmt::Debug for Links {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Links")
            .field("state", &self.get())
            .finish_non_exhaustive()
    }
}

impl Links {
    /// The state of type `T` that the views of this dataset share, made by `create` on first use
    /// (e.g. the samples views' selection and workers: `samples::shared`).
    pub fn shared<T: Any + Send + Sync>(&self, create: impl FnOnce() -> Arc<T>) -> Arc<T> {
        let mut shared = match self.shared.lock() {
            Ok(s) => s,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(existing) = shared.get(&TypeId::of::<T>())
            && let Ok(t) = existing.clone().downcast::<T>()
        {
            return t;
        }
        let made = create();
        shared.insert(TypeId::of::<T>(), made.clone());
        made
    }

    /// Pairs the dataset with a topology file (None: back to the default); returns the new
    /// version.
    pub fn set_topology(&self, path: Option<std::path::PathBuf>) -> u64 {
        let mut t = match self.topology.lock() {
            Ok(t) => t,
            Err(poisoned) => poisoned.into_inner(),
        };
        if t.0 != path {
            t.0 = path;
            t.1 += 1;
        }
        t.1
    }

    /// The topology file the dataset is paired with, and the pairing's version.
    pub fn topology(&self) -> (Option<std::path::PathBuf>, u64) {
        match self.topology.lock() {
            Ok(t) => t.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    pub fn get(&self) -> LinkState {
        self.state.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Sets the time cursor the user chose; returns the new version.
    pub fn set_time(&self, events: u64) -> u64 {
        self.put_time(events, true)
    }

    /// Sets the time cursor where a view puts it by itself (the heap tree's peak when it
    /// opens); returns the new version.
    pub fn set_default_time(&self, events: u64) -> u64 {
        self.put_time(events, false)
    }

    fn put_time(&self, events: u64, chosen: bool) -> u64 {
        match self.state.lock() {
            Ok(mut s) => {
                if s.time_events != Some(events) {
                    s.time_events = Some(events);
                    s.time_version += 1;
                }
                s.time_chosen = chosen;
                s.time_version
            }
            Err(_) => 0,
        }
    }

    pub fn pick_block(&self, block: u32) {
        if let Ok(mut s) = self.state.lock() {
            s.picked_block = Some(block);
            s.picked_version += 1;
        }
    }

    pub fn set_highlight(&self, mut blocks: Vec<u32>, label: String) {
        blocks.sort_unstable();
        if let Ok(mut s) = self.state.lock() {
            s.highlight = Some(Arc::new(blocks));
            s.highlight_label = label;
            s.highlight_version += 1;
        }
    }

    pub fn clear_highlight(&self) {
        if let Ok(mut s) = self.state.lock()
            && s.highlight.is_some()
        {
            s.highlight = None;
            s.highlight_label.clear();
            s.highlight_version += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_move_only_on_change() {
        let links = Links::default();
        assert_eq!(links.get().time_version, 0);
        let v1 = links.set_time(10);
        assert_eq!(links.set_time(10), v1, "same time: no new version");
        let v2 = links.set_time(11);
        assert!(v2 > v1);
        links.set_highlight(vec![5, 1, 3], "f".into());
        let s = links.get();
        assert_eq!(
            s.highlight.as_deref().map(Vec::as_slice),
            Some(&[1, 3, 5][..])
        );
        assert_eq!(s.highlight_version, 1);
        links.clear_highlight();
        links.clear_highlight();
        assert_eq!(
            links.get().highlight_version,
            2,
            "clearing twice counts once"
        );
        // Shared state is made once per type.
        let a = links.shared(|| Arc::new(7u32));
        let b = links.shared(|| Arc::new(8u32));
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(*links.shared(|| Arc::new(String::from("s"))), "s");
    }
}
