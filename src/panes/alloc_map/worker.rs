//! The allocation-map pane's worker thread (`memscape-allocmap`): bins, colours and occupancy
//! bars for the wanted state, off the UI thread, through `compose::MapBuilder` (which keeps
//! each binning for the next request). The UI sends the wanted state through a bounded channel
//! and takes finished results from another; it never touches every block.

use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};
use memscape_views::Dataset;
use memscape_views::alloc_map::compose::{Built, MapBuilder, Wanted};

/// Requests to the worker and its results.
pub type Worker = (Sender<Wanted>, Receiver<Built>);

/// Starts the worker for `dataset` with `builder` (a live snapshot's continues the previous
/// snapshot's bar); it wakes `waker`'s window (once set) with each result.
pub fn spawn_worker(
    dataset: Arc<Dataset>,
    waker: Arc<std::sync::OnceLock<egui::Context>>,
    mut builder: MapBuilder,
) -> Option<Worker> {
    let (tx_job, rx_job) = crossbeam_channel::bounded::<Wanted>(4);
    let (tx_done, rx_done) = crossbeam_channel::bounded::<Built>(2);
    let spawned = std::thread::Builder::new()
        .name("memscape-allocmap".into())
        .spawn(move || {
            let Some(t) = dataset.alloc_trace() else {
                return;
            };
            let Some(scene) = t.scene.as_ref() else {
                return;
            };
            while let Ok(mut wanted) = rx_job.recv() {
                // Only the latest wish matters.
                while let Ok(w) = rx_job.try_recv() {
                    wanted = w;
                }
                let started = std::time::Instant::now();
                let built = builder.build(&t.trace, scene, wanted, true);
                tracing::debug!(
                    target: "memscape::live",
                    blocks = t.trace.blocks.len(),
                    by = ?wanted.by,
                    ms = started.elapsed().as_secs_f64() * 1e3,
                    "allocation map worker: bins, colours and bars built"
                );
                if tx_done.send(built).is_err() {
                    return;
                }
                if let Some(ctx) = waker.get() {
                    memscape_views::wake(ctx);
                }
            }
        });
    match spawned {
        Ok(_) => Some((tx_job, rx_done)),
        Err(e) => {
            tracing::error!("allocation map worker thread: {e}");
            None
        }
    }
}
