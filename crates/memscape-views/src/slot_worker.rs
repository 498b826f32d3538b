//! One worker thread serving the layers (slots) of a pane, each slot with a one-request mailbox
//! in which the newest request wins: what the GUI's level-of-detail refiner (`lod_refine`) and
//! its CPU sums (`sums_worker`) share. The paint bridge asks for a job and draws the slot's
//! newest finished result, whatever it was of, until the one asked lands; nothing on the UI
//! thread waits for the worker.
//!
//! A request whose key is the one asked last, or the one already finished, starts nothing. A new
//! key replaces the request not yet started and cancels the one running for that slot (jobs that
//! cannot stop early finish and are shown until the newer one lands, as a continuous pan then
//! refines at the worker's pace). A finished result replaces the slot's last one only when it is
//! newer and the last one is not already of the key asked. The worker asks egui for a repaint
//! when a result lands.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Cancellation and progress of the running job (the CPU sums' control, which their loops
/// read; other jobs may ignore it).
pub use memscape_render::alloc_map::cpu_reference::SumsControl as JobControl;

/// Work for a [`SlotWorker`].
pub trait SlotJob: Send + 'static {
    /// What the result depends on: equal keys, equal results.
    type Key: PartialEq + Clone + Send + Sync + std::fmt::Debug + 'static;
    type Output: Send + Sync + 'static;
    fn key(&self) -> Self::Key;
    /// Units of work, for [`SlotWorker::progress`] (blocks summed, say).
    fn units(&self) -> usize;
    /// The result; `None` once cancelled through `control`.
    fn run(&self, control: &JobControl) -> Option<Self::Output>;
}

/// A finished result of one slot: for which request (`generation`, `key`); its fields are the
/// job's output's (through `Deref`).
#[derive(Debug)]
pub struct Finished<K, O> {
    pub generation: u64,
    pub key: K,
    pub output: O,
}

impl<K, O> std::ops::Deref for Finished<K, O> {
    type Target = O;
    fn deref(&self) -> &O {
        &self.output
    }
}

type Done<J> = Arc<Finished<<J as SlotJob>::Key, <J as SlotJob>::Output>>;

struct Slot<J: SlotJob> {
    /// The newest key asked, with its generation.
    wanted: Option<(u64, J::Key)>,
    /// Asked and not yet taken by the worker.
    job: Option<J>,
    done: Option<Done<J>>,
}

impl<J: SlotJob> Default for Slot<J> {
    fn default() -> Self {
        Self {
            wanted: None,
            job: None,
            done: None,
        }
    }
}

/// Whether the slot's newest result is not yet of the key asked last.
fn slot_pending<J: SlotJob>(sl: &Slot<J>) -> bool {
    match (&sl.wanted, &sl.done) {
        (Some((_, k)), Some(d)) => d.key != *k,
        (Some(_), None) => true,
        _ => false,
    }
}

/// The job being run: its slot, units and control.
struct Running<S> {
    slot: S,
    units: usize,
    control: Arc<JobControl>,
}

struct State<S, J: SlotJob> {
    generation: u64,
    slots: HashMap<S, Slot<J>>,
    running: Option<Running<S>>,
    /// Jobs finished (not cancelled) since the worker started.
    finished: u64,
    /// The worker starts nothing before this instant (tests: [`SlotWorker::hold`]).
    held_until: Option<Instant>,
    /// Wake the window only when no job waits (see [`SlotWorker::waking_once_drained`]).
    wake_once_drained: bool,
    /// Times the worker woke the window (or would have, without a context).
    wakes: u64,
    quit: bool,
}

struct Shared<S, J: SlotJob> {
    state: Mutex<State<S, J>>,
    wake: Condvar,
    ctx: Option<egui::Context>,
}

impl<S, J: SlotJob> Shared<S, J> {
    fn lock(&self) -> Option<MutexGuard<'_, State<S, J>>> {
        self.state.lock().ok()
    }
}

/// The worker (see the module's documentation); dropping it stops the worker after cancelling
/// the running job.
pub struct SlotWorker<S, J: SlotJob> {
    shared: Arc<Shared<S, J>>,
}

impl<S, J: SlotJob> Drop for SlotWorker<S, J> {
    fn drop(&mut self) {
        if let Some(mut s) = self.shared.lock() {
            s.quit = true;
            if let Some(r) = &s.running {
                r.control.cancel.store(true, Ordering::Relaxed);
            }
        }
        self.shared.wake.notify_all();
    }
}

impl<S, J> SlotWorker<S, J>
where
    S: Copy + Eq + Hash + Send + std::fmt::Debug + 'static,
    J: SlotJob,
{
    /// Starts the worker thread `name`; `ctx` is asked to repaint when a result lands.
    pub fn new(name: &str, ctx: Option<egui::Context>) -> Option<Self> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                generation: 0,
                slots: HashMap::new(),
                running: None,
                finished: 0,
                held_until: None,
                wake_once_drained: false,
                wakes: 0,
                quit: false,
            }),
            wake: Condvar::new(),
            ctx,
        });
        let worker = shared.clone();
        let spawned = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || serve(&worker));
        match spawned {
            Ok(_) => Some(Self { shared }),
            Err(e) => {
                tracing::error!("{name} thread: {e}");
                None
            }
        }
    }

    /// Asks for `job` in `slot` (nothing when its key is the one asked last or the one
    /// finished) and returns the slot's newest finished result, of whatever key. Never waits.
    pub fn want(&self, slot: S, job: J) -> Option<Done<J>> {
        let key = job.key();
        let mut s = self.shared.lock()?;
        let next = s.generation + 1;
        let sl = s.slots.entry(slot).or_default();
        let done = sl.done.clone();
        if sl.wanted.as_ref().is_some_and(|(_, k)| *k == key) {
            return done;
        }
        let finished = done.as_ref().is_some_and(|d| d.key == key);
        sl.wanted = Some((next, key));
        sl.job = (!finished).then_some(job);
        s.generation = next;
        // The job running for this slot is of a key passed over.
        if let Some(r) = &s.running
            && r.slot == slot
        {
            r.control.cancel.store(true, Ordering::Relaxed);
        }
        drop(s);
        self.shared.wake.notify_all();
        done
    }

    /// The newest finished result of `slot` (asking nothing).
    pub fn latest(&self, slot: S) -> Option<Done<J>> {
        self.shared.lock()?.slots.get(&slot)?.done.clone()
    }

    /// Whether some slot's newest result is not yet of the key asked last.
    pub fn pending(&self) -> bool {
        self.shared
            .lock()
            .is_some_and(|s| s.slots.values().any(slot_pending))
    }

    /// Every slot's newest result, and whether none is pending ([`Self::pending`]), read
    /// together: a pane that swaps in its layers' results only when none is pending shows no
    /// layer of a newer request beside one of an older.
    pub fn latest_all(&self) -> (bool, HashMap<S, Done<J>>) {
        let Some(s) = self.shared.lock() else {
            return (false, HashMap::new());
        };
        let latest = s
            .slots
            .iter()
            .filter_map(|(slot, sl)| Some((*slot, sl.done.clone()?)))
            .collect();
        (!s.slots.values().any(slot_pending), latest)
    }

    /// The running job's units done and in all, when one runs.
    pub fn progress(&self) -> Option<(usize, usize)> {
        let s = self.shared.lock()?;
        let r = s.running.as_ref()?;
        Some((r.control.done.load(Ordering::Relaxed).min(r.units), r.units))
    }

    /// Jobs finished since the worker started (cancelled ones are not counted).
    pub fn finished(&self) -> u64 {
        self.shared.lock().map_or(0, |s| s.finished)
    }

    /// Times the worker woke the window, counted with [`Self::finished`].
    pub fn wakes(&self) -> u64 {
        self.shared.lock().map_or(0, |s| s.wakes)
    }

    /// The window woken only when a job lands and none waits to start: the layers asked for in
    /// one frame land in one frame (on a software rasterizer each is a whole-window redraw; a
    /// live map's two layers were two frames per snapshot). A waiting job wakes it when it lands.
    pub fn waking_once_drained(self) -> Self {
        if let Some(mut s) = self.shared.lock() {
            s.wake_once_drained = true;
        }
        self
    }

    /// Keeps the worker from starting a job for at most `d` (or until [`Self::release`]): what
    /// tests use to show that frames do not wait for it.
    pub fn hold(&self, d: Duration) {
        if let Some(mut s) = self.shared.lock() {
            s.held_until = Some(Instant::now() + d);
        }
    }

    /// Ends a [`Self::hold`].
    pub fn release(&self) {
        if let Some(mut s) = self.shared.lock() {
            s.held_until = None;
        }
        self.shared.wake.notify_all();
    }
}

/// The worker: the oldest asked slot's newest job, one at a time, until the worker is dropped.
fn serve<S, J>(shared: &Shared<S, J>)
where
    S: Copy + Eq + Hash + std::fmt::Debug,
    J: SlotJob,
{
    loop {
        let Some(mut s) = shared.lock() else {
            return;
        };
        let (slot, generation, key, job, control) = loop {
            if s.quit {
                return;
            }
            let now = Instant::now();
            match s.held_until {
                Some(t) if t > now => {
                    let Ok((g, _)) = shared.wake.wait_timeout(s, t - now) else {
                        return;
                    };
                    s = g;
                    continue;
                }
                _ => s.held_until = None,
            }
            let next = s
                .slots
                .iter()
                .filter(|(_, sl)| sl.job.is_some())
                .filter_map(|(k, sl)| sl.wanted.as_ref().map(|(g, key)| (*g, key.clone(), *k)))
                .min_by_key(|(g, _, _)| *g);
            if let Some((g, key, slot)) = next
                && let Some(job) = s.slots.get_mut(&slot).and_then(|sl| sl.job.take())
            {
                let control = Arc::new(JobControl::default());
                s.running = Some(Running {
                    slot,
                    units: job.units(),
                    control: control.clone(),
                });
                break (slot, g, key, job, control);
            }
            let Ok(g) = shared.wake.wait(s) else {
                return;
            };
            s = g;
        };
        drop(s);
        let started = Instant::now();
        let output = job.run(&control);
        let Some(mut s) = shared.lock() else {
            return;
        };
        s.running = None;
        let Some(output) = output else {
            tracing::debug!("slot {slot:?}: cancelled after {:?}", started.elapsed());
            continue;
        };
        tracing::debug!(
            "slot {slot:?}: {} units in {:?}",
            job.units(),
            started.elapsed()
        );
        s.finished += 1;
        let sl = s.slots.entry(slot).or_default();
        // A result of a key passed over never replaces one of the key asked last.
        let current = match (&sl.done, &sl.wanted) {
            (Some(d), Some((_, k))) => d.key == *k,
            _ => false,
        };
        if !current && sl.done.as_ref().is_none_or(|d| d.generation < generation) {
            sl.done = Some(Arc::new(Finished {
                generation,
                key,
                output,
            }));
        }
        let waiting = s.slots.values().any(|sl| sl.job.is_some());
        let wake = !(s.wake_once_drained && waiting);
        s.wakes += u64::from(wake);
        drop(s);
        if wake && let Some(ctx) = &shared.ctx {
            crate::wake(ctx);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    /// A job that runs until its gate lets it go, never stopping early.
    struct Gated {
        key: u32,
        gate: Arc<Mutex<mpsc::Receiver<()>>>,
        gated: bool,
    }

    impl SlotJob for Gated {
        type Key = u32;
        type Output = u32;
        fn key(&self) -> u32 {
            self.key
        }
        fn units(&self) -> usize {
            1
        }
        fn run(&self, _control: &JobControl) -> Option<u32> {
            if self.gated
                && let Ok(rx) = self.gate.lock()
            {
                let _ = rx.recv_timeout(Duration::from_secs(20));
            }
            Some(self.key * 10)
        }
    }

    fn wait_until(what: &str, f: impl Fn() -> bool) {
        crate::testing::wait_for(what, Duration::from_secs(20), || f().then_some(()))
    }

    /// A worker, the sender that lets gated jobs go, and a maker of jobs (`key`, `gated`).
    fn gated_worker() -> (
        SlotWorker<u8, Gated>,
        mpsc::Sender<()>,
        impl Fn(u32, bool) -> Gated,
    ) {
        let (tx, rx) = mpsc::channel();
        let gate = Arc::new(Mutex::new(rx));
        let job = move |key, gated| Gated {
            key,
            gate: gate.clone(),
            gated,
        };
        let worker = SlotWorker::new("test-slot-worker", None).unwrap();
        (worker, tx, job)
    }

    #[test]
    fn a_result_of_a_key_passed_over_never_replaces_the_one_asked_again() {
        let (worker, tx, job) = gated_worker();
        assert!(worker.want(0, job(1, false)).is_none());
        wait_until("key 1", || worker.latest(0).is_some_and(|d| d.key == 1));
        // Key 2 starts and cannot stop; key 1 is asked again meanwhile: it is finished, so
        // nothing is computed and nothing is pending.
        worker.want(0, job(2, true));
        wait_until("key 2 to start", || worker.progress().is_some());
        let shown = worker.want(0, job(1, false));
        assert_eq!(shown.map(|d| d.key), Some(1));
        assert!(!worker.pending(), "key 1 is the one asked and finished");
        tx.send(()).unwrap();
        wait_until("key 2 to land", || worker.finished() == 2);
        let latest = worker.latest(0).unwrap();
        assert_eq!((latest.key, latest.output), (1, 10), "key 2 replaced key 1");
        assert!(!worker.pending());
    }

    #[test]
    fn the_newest_request_wins_and_each_key_is_computed_once() {
        let (worker, tx, job) = gated_worker();
        worker.want(0, job(1, true));
        wait_until("key 1 to start", || worker.progress().is_some());
        // Asked while 1 runs: 2 is passed over by 3 before it starts.
        worker.want(0, job(2, false));
        worker.want(0, job(3, false));
        worker.want(0, job(3, false));
        assert!(worker.pending());
        tx.send(()).unwrap();
        wait_until("key 3", || worker.latest(0).is_some_and(|d| d.key == 3));
        assert_eq!(worker.finished(), 2, "1 (not cancellable) and 3, never 2");
        assert!(!worker.pending());
    }

    /// Two layers asked for in one frame wake the window once, when the second lands.
    #[test]
    fn a_worker_waking_once_drained_wakes_once_for_jobs_asked_together() {
        let (_tx, rx) = mpsc::channel::<()>();
        let gate = Arc::new(Mutex::new(rx));
        let job = |key| Gated {
            key,
            gate: gate.clone(),
            gated: false,
        };
        for (drained, wakes) in [(true, 1), (false, 2)] {
            let mut worker = SlotWorker::new("test-slot-worker", None).unwrap();
            if drained {
                worker = worker.waking_once_drained();
            }
            worker.hold(Duration::from_secs(20));
            worker.want(0, job(1));
            worker.want(1, job(2));
            worker.release();
            wait_until("both jobs", || worker.finished() == 2);
            assert_eq!(worker.wakes(), wakes, "drained: {drained}");
        }
    }
}
