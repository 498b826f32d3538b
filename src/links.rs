//! What linked views share about one dataset: a time cursor (in events of the trace) and a set
//! of highlighted blocks. A view writes it when the user chooses a time or selects a group and
//! reads it every frame, reacting when a version number moved.

use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, Default)]
pub struct LinkState {
    /// The chosen time as a number of events applied.
    pub time_events: Option<u64>,
    pub time_version: u64,
    /// Indices of highlighted blocks (sorted), and what they are.
    pub highlight: Option<Arc<Vec<u32>>>,
    pub highlight_label: String,
    pub highlight_version: u64,
    /// A block the user picked (the heap tree shows its group).
    pub picked_block: Option<u32>,
    pub picked_version: u64,
}

#[derive(Debug, Default)]
pub struct Links {
    state: Mutex<LinkState>,
    /// The samples views' shared selection and analyses (samples datasets only; created by the
    /// first samples view, see `views::samples::shared`).
    pub samples: std::sync::OnceLock<Arc<crate::views::samples::shared::SamplesShared>>,
}

impl Links {
    pub fn get(&self) -> LinkState {
        self.state.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Sets the time cursor; returns the new version.
    pub fn set_time(&self, events: u64) -> u64 {
        match self.state.lock() {
            Ok(mut s) => {
                if s.time_events != Some(events) {
                    s.time_events = Some(events);
                    s.time_version += 1;
                }
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
    }
}
