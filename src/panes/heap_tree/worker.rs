//! The heap pane's worker thread: it owns the group index of the dataset (which borrows it) and
//! answers requests for the sizes at a time point, a group's blocks and a block's group through
//! bounded channels; the UI thread never walks blocks.

use std::sync::{Arc, Mutex};

use crossbeam_channel::{Receiver, Sender};
use memscape_heap::{HeapCarry, HeapTimeline, Sizes, SizesSource, TimePoint};
use memscape_views::Dataset;
use memscape_views::heap_tree::model::{self, Grouping};

pub enum Reply {
    Timeline(Box<HeapTimeline>),
    Sizes(usize, Arc<Sizes>),
    /// A group's blocks, for the linked allocation map.
    Blocks(u32, Vec<u32>),
    /// The group of a block picked in the allocation map.
    GroupOf(u32),
    /// The exact state after some events (a time chosen in the allocation map).
    Exact(TimePoint, Arc<Sizes>),
    Failed(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    Sizes(usize),
    Blocks(u32),
    GroupOf(u32),
    /// The state after this many events, off the slider's points.
    SizesAtEvents(u64),
}

pub struct Worker {
    pub requests: Sender<Request>,
    pub replies: Receiver<Reply>,
}

/// Where a live recording's snapshot pane takes the previous snapshot's grouping from, and
/// where it leaves its own for the next (`memscape_heap::TraceHeap::continued`: the work per
/// snapshot is then its new blocks, not every block from the first). The worker locks its `to`
/// from before its grouping until its copy of the grouping is left there, after its first
/// replies (the copy, 25–75 ms on cc1plus, no longer delays the tree); the next pane's worker
/// takes `from` on its own thread, waiting for that copy if need be.
pub struct LiveCarry {
    pub from: Option<Arc<Mutex<Option<HeapCarry>>>>,
    pub to: Arc<Mutex<Option<HeapCarry>>>,
}

/// The worker of `dataset` grouped as `settings` say, on the processes `process` selects (or
/// the heap tree's default: the largest-peak process of a multi-process recording); a live
/// recording's grouping continued as `live` says.
pub fn spawn_worker(
    dataset: Arc<Dataset>,
    settings: Grouping,
    process: Option<String>,
    ctx: egui::Context,
    live: Option<LiveCarry>,
) -> Worker {
    let (req_tx, req_rx) = crossbeam_channel::bounded::<Request>(64);
    let (rep_tx, rep_rx) = crossbeam_channel::bounded::<Reply>(64);
    let name = format!("heap-tree {}", dataset.name);
    let spawned = std::thread::Builder::new().name(name).spawn(move || {
        // Block numbers of a restricted trace map to the dataset's (the linked views').
        let by_process = settings.keys.contains(&memscape_heap::GroupKey::Process);
        let restricted =
            memscape_views::processes::heap_selection(&dataset, process.as_deref(), by_process)
                .and_then(|keep| {
                    keep.map(|keep| {
                        let rows = dataset.alloc_trace().map_or_else(Vec::new, |t| {
                            memscape_views::processes::kept_rows(&t.trace, &keep)
                        });
                        Ok((
                            memscape_views::processes::restrict_to(&dataset, &keep)?,
                            rows,
                        ))
                    })
                    .transpose()
                });
        let (only, rows) = match restricted {
            Ok(Some((d, rows))) => (Some(d), Some(rows)),
            Ok(None) => (None, None),
            Err(e) => {
                let _ = rep_tx.send(Reply::Failed(format!("{e:#}")));
                memscape_views::wake(&ctx);
                return;
            }
        };
        let shown: &Dataset = only.as_ref().unwrap_or(&dataset);
        let started = std::time::Instant::now();
        let mut carried = None;
        // Held until the grouping is copied there (below, after the first replies).
        let to = live
            .as_ref()
            .filter(|_| only.is_none())
            .map(|l| l.to.clone());
        let mut carry_slot = to.as_ref().and_then(|to| to.lock().ok());
        let grouped = match live {
            Some(live) if only.is_none() => {
                let from = live
                    .from
                    .and_then(|slot| slot.lock().ok().and_then(|mut s| s.take()));
                carried = Some(from.as_ref().map_or(0, HeapCarry::blocks));
                match model::timeline_continued(shown, &settings, from) {
                    Some((timeline, sizes)) => {
                        Ok((timeline, Box::new(sizes) as Box<dyn SizesSource>))
                    }
                    None => model::timeline(shown, &settings),
                }
            }
            _ => model::timeline(shown, &settings),
        };
        tracing::debug!(
            target: "memscape::live",
            blocks = shown.alloc_trace().map_or(0, |t| t.trace.blocks.len()),
            continued_from = carried,
            ms = started.elapsed().as_secs_f64() * 1e3,
            "heap tree worker: timeline grouped"
        );
        let (timeline, mut sizes) = match grouped {
            Ok(x) => x,
            Err(e) => {
                let _ = rep_tx.send(Reply::Failed(format!("{e:#}")));
                memscape_views::wake(&ctx);
                return;
            }
        };
        // Where a pane opens (and where a live pane at the peak stays): its sizes follow the
        // timeline unasked, one handshake (one frame) fewer before the tree is drawn.
        let peak = timeline
            .peak_point
            .min(timeline.points.len().saturating_sub(1));
        if rep_tx.send(Reply::Timeline(Box::new(timeline))).is_err() {
            return;
        }
        if let Some(s) = sizes.sizes_at_point(peak)
            && rep_tx.send(Reply::Sizes(peak, Arc::new(s))).is_err()
        {
            return;
        }
        memscape_views::wake(&ctx);
        // The grouping for the next snapshot's pane, once this one's tree can be drawn.
        if let Some(mut slot) = carry_slot.take() {
            let copy = std::time::Instant::now();
            *slot = sizes.carry();
            drop(slot);
            tracing::debug!(
                target: "memscape::live",
                ms = copy.elapsed().as_secs_f64() * 1e3,
                "heap tree worker: carry copied"
            );
        }
        // Requests arrive in bursts (scrubbing): answer the newest first.
        while let Ok(first) = req_rx.recv() {
            let mut wanted = vec![first];
            while let Ok(r) = req_rx.try_recv() {
                wanted.push(r);
            }
            wanted.reverse();
            wanted.dedup();
            for request in wanted {
                let reply = match request {
                    Request::Sizes(p) => sizes
                        .sizes_at_point(p)
                        .map(|s| Reply::Sizes(p, Arc::new(s))),
                    Request::Blocks(g) => sizes.blocks_in_group(g).map(|b| {
                        let b = match &rows {
                            Some(rows) => b
                                .iter()
                                .filter_map(|&i| rows.get(i as usize))
                                .copied()
                                .collect(),
                            None => b,
                        };
                        Reply::Blocks(g, b)
                    }),
                    Request::GroupOf(b) => match &rows {
                        Some(rows) => rows
                            .binary_search(&b)
                            .ok()
                            .and_then(|k| sizes.group_of_block(k as u32)),
                        None => sizes.group_of_block(b),
                    }
                    .map(Reply::GroupOf),
                    Request::SizesAtEvents(e) => sizes
                        .sizes_at_events(e)
                        .map(|(p, s)| Reply::Exact(p, Arc::new(s))),
                };
                if let Some(reply) = reply
                    && rep_tx.send(reply).is_err()
                {
                    return;
                }
            }
            memscape_views::wake(&ctx);
        }
    });
    if let Err(e) = spawned {
        tracing::error!("could not start the heap-tree worker: {e}");
    }
    Worker {
        requests: req_tx,
        replies: rep_rx,
    }
}
