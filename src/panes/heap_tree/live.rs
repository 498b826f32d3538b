//! The heap-tree pane on a live recording: each newer snapshot is grouped by a pane of its own
//! off screen (its worker thread) while this one stays on screen, and swapped in once its tree
//! at the chosen time can be drawn. A pane at the peak stays at the peak (the new one), one at
//! the end at the end; one moved elsewhere stays at the same event.

use std::sync::Arc;

use memscape_views::Dataset;

use super::HeapTreePane;

impl HeapTreePane {
    pub(super) fn prepare_next(&mut self, dataset: Arc<Dataset>, ctx: &egui::Context) {
        if self.next.is_some() {
            // One at a time: the newest waits until the one being prepared is shown.
            self.queued = Some(dataset);
            return;
        }
        let mut next =
            HeapTreePane::with_settings(dataset, ctx, self.settings.clone(), self.show_suppressed);
        next.grouping = self.grouping;
        self.next = Some(Box::new(next));
    }

    /// Moves the prepared snapshot on; swaps it in when its tree is ready. Returns whether one
    /// is still being prepared.
    pub(super) fn advance_live(&mut self, ctx: &egui::Context) -> bool {
        let Some(mut next) = self.next.take() else {
            return false;
        };
        let had_timeline = next.timeline.is_some();
        next.drain();
        let next = self.next.insert(next);
        if next.error.is_none() {
            let Some(timeline) = next.timeline.clone() else {
                return true;
            };
            if !had_timeline {
                let point = self.live_point(&timeline);
                if let Some(next) = self.next.as_mut() {
                    next.point = point;
                }
            }
            let Some(next) = self.next.as_mut() else {
                return false;
            };
            if next.sizes_at(next.point).is_none() {
                return true;
            }
        }
        let Some(mut next) = self.next.take() else {
            return false;
        };
        next.playing = self.playing;
        tracing::info!(
            target: "memscape::live",
            events = next.dataset.alloc_trace().map_or(0, |t| t.trace.meta.events),
            "heap tree shows a newer snapshot"
        );
        let queued = self.queued.take();
        *self = *next;
        if let Some(d) = queued {
            self.prepare_next(d, ctx);
        }
        false
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
