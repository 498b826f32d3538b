//! The allocation-map pane on a live recording: each newer snapshot becomes a pane of its own,
//! prepared off screen (process filter, bins and bars on its worker thread) while this one
//! stays on screen, then swapped in with the user's settings and camera. A camera that showed
//! everything shows everything of the new snapshot; one zoomed or panned into the past stays
//! where it was (event numbers and times of the past do not change as the recording grows).

use std::sync::Arc;

use memscape_views::Dataset;
use memscape_views::alloc_map::camera::Camera;

use super::{AllocMapPane, MapBuilder};
use crate::panes::LiveStep;

impl AllocMapPane {
    /// Starts preparing `dataset` (a newer snapshot of this pane's recording); an older one
    /// still being prepared is dropped.
    pub(super) fn prepare_next(&mut self, dataset: Arc<Dataset>) {
        if self.next.is_some() {
            // One at a time: the newest waits until the one being prepared is shown (a pane
            // slower than the snapshots still moves on).
            self.queued = Some(dataset);
            return;
        }
        // A snapshot's bar continues this one's; the finished file's is made whole, as
        // opening it makes it.
        let mut next = if dataset.alloc_trace().is_some_and(|t| t.path.is_none()) {
            AllocMapPane::with_builder(dataset, MapBuilder::following(self.live_bar.clone()))
        } else {
            AllocMapPane::new(dataset)
        };
        // What the user chose carries over; what was only the old snapshot's default becomes
        // the new one's (bins by process once a second process appears, pools' curves once
        // pools are declared), so that the last snapshot shows what opening the file shows.
        let old_color = self
            .dataset
            .alloc_trace()
            .and_then(|t| t.scene.as_ref())
            .map_or(self.shown.color_by, |s| s.color_by);
        let old_default = super::default_settings(&self.dataset, old_color);
        let mut settings = self.settings.clone();
        if settings.bins == old_default.bins {
            settings.bins = next.settings.bins;
        }
        if settings.color == old_default.color {
            settings.color = next.settings.color;
        }
        if settings.panels == old_default.panels {
            settings.panels.clone_from(&next.settings.panels);
        }
        next.settings = settings;
        next.cursor_mode = self.cursor_mode;
        next.free_sites.open = self.free_sites.open;
        next.live = true;
        // Its worker wakes the window when the bins are ready (the pane is not drawn before).
        if let Some(ctx) = self.waker.get() {
            let _ = next.waker.set(ctx.clone());
        }
        self.next = Some(Box::new(next));
    }

    /// Whether a newer snapshot is being prepared while this pane is shown (see
    /// `View::preparing_live`).
    /// A snapshot swapped in counts as prepared once its sums are drawn: on a software
    /// rasterizer they come from the CPU worker (the first frames show the last snapshot's,
    /// stretched to the new time axis), and the next snapshot waits for them.
    pub(super) fn preparing(&self, ctx: &egui::Context) -> bool {
        let sums_pending = self.live && self.sums.as_ref().is_some_and(|s| s.pending());
        (self.next.is_some() || self.queued.is_some() || sums_pending)
            && ctx.cumulative_pass_nr() <= self.last_ui + 1
    }

    /// Moves the prepared snapshot on until its process filter and bins are ready; swaps it in
    /// then when `swap` (see `View::live_step`).
    pub(super) fn advance_live(&mut self, swap: bool) -> LiveStep {
        let Some(next) = self.next.as_mut() else {
            return LiveStep::Idle;
        };
        next.apply_process_filter();
        if next.filtering() {
            return LiveStep::Preparing;
        }
        let Some(events_extent) = next
            .dataset
            .alloc_trace()
            .and_then(|t| t.scene.as_ref())
            .map(|s| s.events_extent)
        else {
            // Nothing to draw yet: keep the pane as it is.
            self.next = None;
            return LiveStep::Idle;
        };
        let wanted = next.wanted(None, events_extent);
        next.sync_worker(wanted);
        if next.busy() {
            return LiveStep::Preparing;
        }
        if !swap {
            return LiveStep::Ready;
        }
        let Some(mut next) = self.next.take() else {
            return LiveStep::Idle;
        };
        let axis = self.settings.time;
        let old_extent = self
            .dataset
            .alloc_trace()
            .and_then(|t| t.scene.as_ref())
            .map(|s| s.frame_time_end(axis));
        let showing_all = match (self.target, old_extent) {
            (None, _) | (_, None) => true,
            (Some(target), Some(extent)) => target == Camera::fit(extent),
        };
        if !showing_all {
            next.camera = self.camera;
            next.target = self.target;
        }
        tracing::info!(
            target: "memscape::live",
            events = events_extent,
            "allocation map shows a newer snapshot"
        );
        // The GPU resources and the CPU sums carry over: the new snapshot's first frame
        // replaces only what changed in the upload, and shows the last sums (stretched) until
        // its own are summed, rather than an empty map.
        std::mem::swap(&mut next.key, &mut self.key);
        if next.sums.is_none() {
            next.sums = self.sums.take();
        }
        let queued = self.queued.take();
        *self = *next;
        if let Some(d) = queued {
            self.prepare_next(d);
        }
        LiveStep::Swapped
    }
}
