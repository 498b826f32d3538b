//! The heap-tree pane on a live recording: each newer snapshot is grouped by a pane of its own
//! off screen (its worker thread) while this one stays on screen, and swapped in once its tree
//! at the chosen time can be drawn. A pane at the peak stays at the peak (the new one), one at
//! the end at the end; one moved elsewhere stays at the same event.

use std::sync::Arc;

use memscape_views::Dataset;

use super::{HeapTreePane, Request};
use crate::panes::LiveStep;

impl HeapTreePane {
    pub(super) fn prepare_next(&mut self, dataset: Arc<Dataset>, ctx: &egui::Context) {
        if self.next.is_some() {
            // One at a time: the newest waits until the one being prepared is shown.
            self.queued = Some(dataset);
            return;
        }
        // The grouping continues from this snapshot's (the first snapshot's pane starts one),
        // taken by the new pane's worker (this one's may still be copying it there).
        let live = super::worker::LiveCarry {
            from: self.live_carry.clone(),
            to: Arc::new(std::sync::Mutex::new(None)),
        };
        let mut next = HeapTreePane::with_carry(
            dataset,
            ctx,
            self.settings.clone(),
            self.show_suppressed,
            Some(live),
        );
        next.grouping = self.grouping;
        self.next = Some(Box::new(next));
    }

    /// Whether a newer snapshot is being prepared while this pane is shown (see
    /// `View::preparing_live`).
    pub(super) fn preparing(&self, ctx: &egui::Context) -> bool {
        (self.next.is_some() || self.queued.is_some())
            && ctx.cumulative_pass_nr() <= self.last_ui + 1
    }

    /// Moves the prepared snapshot on until its tree can be drawn; swaps it in then when `swap`
    /// (see `View::live_step`).
    pub(super) fn advance_live(&mut self, ctx: &egui::Context, swap: bool) -> LiveStep {
        let Some(mut next) = self.next.take() else {
            return LiveStep::Idle;
        };
        let had_timeline = next.timeline.is_some();
        next.drain();
        let next = self.next.insert(next);
        if next.error.is_none() {
            let Some(timeline) = next.timeline.clone() else {
                return LiveStep::Preparing;
            };
            if !had_timeline {
                let point = self.live_point(&timeline);
                if let Some(next) = self.next.as_mut() {
                    next.point = point;
                }
            }
            let Some(next) = self.next.as_mut() else {
                return LiveStep::Idle;
            };
            if next.sizes_at(next.point).is_none() {
                return LiveStep::Preparing;
            }
        }
        if !swap {
            return LiveStep::Ready;
        }
        let Some(mut next) = self.next.take() else {
            return LiveStep::Idle;
        };
        next.playing = self.playing;
        tracing::info!(
            target: "memscape::live",
            events = next.dataset.alloc_trace().map_or(0, |t| t.trace.meta.events),
            "heap tree shows a newer snapshot"
        );
        let queued = self.queued.take();
        let highlighted = self.highlighted.take();
        // The key carries over: the egui ids salted with it (panels, menus) stay the same, so
        // egui neither lays the pane out again nor repaints for widgets it has not seen, and
        // the GPU upload replaces only what changed.
        std::mem::swap(&mut next.key, &mut self.key);
        *self = *next;
        self.fresh_layout = true;
        self.highlight_again(highlighted);
        if let Some(d) = queued {
            self.prepare_next(d, ctx);
        }
        LiveStep::Swapped
    }

    /// A group this pane highlighted in the previous snapshot is highlighted again in this one
    /// (its blocks asked of the worker: the new ones with it), while the dataset's highlight
    /// is still that one (carried over by `memscape_views::live::carry_links`; the user may
    /// have highlighted something else since).
    fn highlight_again(&mut self, highlighted: Option<(Vec<String>, String)>) {
        let Some((names, label)) = highlighted else {
            return;
        };
        let state = self.dataset.links.get();
        if state.highlight.is_none() || state.highlight_label != label {
            return;
        }
        let Some(timeline) = &self.timeline else {
            return;
        };
        let trie = &timeline.trie;
        let mut node = 0u32;
        for name in &names {
            match trie.children(node).iter().find(|&&c| trie.name(c) == name) {
                Some(&c) => node = c,
                None => return,
            }
        }
        if node != 0 {
            let _ = self.worker.requests.try_send(Request::Blocks(node));
            self.highlighted = Some((names, label));
        }
    }

    /// Where a newer timeline opens: the peak or the end when this pane is there, else the
    /// point nearest the event shown now.
    fn live_point(&self, new: &memscape_heap::HeapTimeline) -> usize {
        let last = new.points.len().saturating_sub(1);
        let Some(old) = &self.timeline else {
            return new.peak_point.min(last);
        };
        // The peak first: where a pane opens, and where opening the finished file opens.
        if self.point == old.peak_point {
            return new.peak_point.min(last);
        }
        if self.point >= old.points.len().saturating_sub(1) {
            return last;
        }
        let events = old.points.get(self.point).map_or(0, |p| p.index);
        new.points
            .iter()
            .enumerate()
            .min_by_key(|(_, p)| p.index.abs_diff(events))
            .map_or(last, |(i, _)| i)
    }
}
