//! Running the program and waiting for every process that carries the recorder.
//!
//! The launcher makes itself a child subreaper (`PR_SET_CHILD_SUBREAPER`): a descendant
//! orphaned by its parent (a daemon's double fork) becomes the launcher's child instead of
//! init's, so the launcher can reap it and learn how it ended. A process *carries the
//! recorder* while its memory maps one of the `.msr` files in the private raw directory (the
//! shim writes through a `MAP_SHARED` mapping of it): the recording ends when the launched
//! program has exited and no process maps a file of this recording any more, or on
//! SIGINT/SIGTERM (Ctrl-C), which keeps everything written so far.
//!
//! Only the launcher's own child and the recorded processes' pids are ever waited for (by
//! pid, never `waitpid(-1)`), so a host process running other children (a test harness) keeps
//! its own.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Child, Command};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rustix::process::{Pid, WaitOptions, WaitStatus};

/// How one process ended, as its reaper saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reaped {
    /// Exit code, or `None` when killed by a signal.
    pub(crate) code: Option<i32>,
    pub(crate) signal: Option<i32>,
    /// CLOCK_MONOTONIC ns when it was reaped.
    pub(crate) at_ns: u64,
}

/// What the launcher saw.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// How the launched program ended (`None`: still running after an interrupt).
    pub(crate) root: Option<Reaped>,
    /// Every process the launcher reaped (the launched one and adopted orphans), by pid.
    pub(crate) reaped: HashMap<u32, Reaped>,
    /// Ctrl-C or SIGTERM ended the recording.
    pub(crate) interrupted: bool,
    /// Processes still carrying the recorder when the recording ended (interrupt).
    pub(crate) still_running: Vec<u32>,
}

/// CLOCK_MONOTONIC now, in ns (the shim's clock).
pub(crate) fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    (t.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(t.tv_nsec as u64)
}

fn reaped_of(status: WaitStatus) -> Reaped {
    Reaped {
        code: status.exit_status(),
        signal: status.terminating_signal(),
        at_ns: monotonic_ns(),
    }
}

/// Signal flags set by SIGINT / SIGTERM while a recording runs (handlers, not `SIG_IGN`, so
/// the program's own dispositions are reset to default by its `exec`).
struct Interrupts {
    flag: Arc<AtomicBool>,
    ids: Vec<signal_hook::SigId>,
}

impl Interrupts {
    fn install() -> Self {
        let flag = Arc::new(AtomicBool::new(false));
        let ids = [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM]
            .iter()
            .filter_map(|&sig| signal_hook::flag::register(sig, Arc::clone(&flag)).ok())
            .collect();
        Self { flag, ids }
    }

    fn raised(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }
}

impl Drop for Interrupts {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// Spawns `command` and waits as described in the module documentation.
pub(crate) fn run(mut command: Command, raw_dir: &Path) -> std::io::Result<(Outcome, Child)> {
    // Orphaned descendants become ours, so that daemons are reaped here (Linux ≥ 3.4; where
    // it fails, orphans go to init and are still waited for through their mappings).
    if let Err(e) = rustix::process::set_child_subreaper(Some(rustix::process::getpid())) {
        tracing::debug!("PR_SET_CHILD_SUBREAPER failed ({e}): orphans are not reaped here");
    }
    let interrupts = Interrupts::install();
    let mut child = command.spawn()?;
    let root_pid = child.id();
    let mut outcome = Outcome::default();
    let marker = raw_dir.as_os_str().to_string_lossy().into_owned();
    let me = std::process::id();
    let mut interrupted_at: Option<Instant> = None;
    let mut idle_scans = 0;
    let mut pause = Duration::from_millis(1);
    loop {
        if outcome.root.is_none()
            && let Some(status) = child.try_wait()?
        {
            let r = Reaped {
                code: status.code(),
                signal: std::os::unix::process::ExitStatusExt::signal(&status),
                at_ns: monotonic_ns(),
            };
            outcome.root = Some(r);
            outcome.reaped.insert(root_pid, r);
        }
        let raised = interrupts.raised();
        // While the launched program runs, who carries the recorder matters only to a Ctrl-C:
        // zombies are reaped, but the maps of every recorded process (one line per 1 MiB chunk
        // of its file: hundreds) are not read 50 times a second.
        let full = outcome.root.is_some() || raised;
        let carriers = scan_carriers(raw_dir, &marker, (me, root_pid), &mut outcome.reaped, full);
        if raised && interrupted_at.is_none() {
            interrupted_at = Some(Instant::now());
            outcome.interrupted = true;
            // What a terminal's Ctrl-C does: SIGINT to the launched program and to every
            // recorded process of the launcher's process group (a `kill -INT` sent to memscape
            // alone reached none of them; daemons, in sessions of their own, are left alone).
            let group = rustix::process::getpgrp();
            let mut targets = carriers.clone();
            if outcome.root.is_none() {
                targets.push(root_pid);
            }
            for pid in targets {
                let in_group = pid == root_pid
                    || proc_state(pid).is_some_and(|s| s.2 == group.as_raw_pid() as u32);
                if in_group && let Some(pid) = Pid::from_raw(pid as i32) {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
                }
            }
        }
        if let Some(at) = interrupted_at
            && (outcome.root.is_some() || at.elapsed() > Duration::from_secs(2))
        {
            outcome.still_running = carriers;
            break;
        }
        if outcome.root.is_some() && carriers.is_empty() {
            // Twice in a row, a few ms apart: a child forked just before its parent exited
            // opens its file within microseconds.
            idle_scans += 1;
            if idle_scans >= 2 {
                break;
            }
            pause = Duration::from_millis(5);
        } else {
            idle_scans = 0;
        }
        std::thread::sleep(pause);
        // Short programs end within a few ms; long ones are polled 50 times a second.
        pause = (pause * 2).min(Duration::from_millis(20));
    }
    Ok((outcome, child))
}

/// The pids of processes that still map a file of this recording; reaps those of them that
/// are zombies adopted by this process (not the launched child `root`, which `run` waits for
/// through its `Child`: reaped here, its `try_wait` would fail with ECHILD). Not `full`: only
/// reaps, finds no carrier.
fn scan_carriers(
    raw_dir: &Path,
    marker: &str,
    (me, root): (u32, u32),
    reaped: &mut HashMap<u32, Reaped>,
    full: bool,
) -> Vec<u32> {
    let mut pids: Vec<u32> = std::fs::read_dir(raw_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| crate::parse_raw_name(&e.path()).map(|(pid, _)| pid))
        .collect();
    pids.sort_unstable();
    pids.dedup();
    let mut carriers = Vec::new();
    for pid in pids {
        if reaped.contains_key(&pid) {
            continue;
        }
        let Some((state, ppid, _)) = proc_state(pid) else {
            continue; // gone (reaped by its own parent)
        };
        if state == 'Z' {
            if ppid == me
                && pid != root
                && let Some(p) = Pid::from_raw(pid as i32)
                && let Ok(Some((_, status))) =
                    rustix::process::waitpid(Some(p), WaitOptions::NOHANG)
            {
                reaped.insert(pid, reaped_of(status));
            }
            continue;
        }
        if !full {
            continue;
        }
        let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
        if maps.contains(marker) {
            carriers.push(pid);
        }
    }
    // A process forked a moment ago may not have opened its file yet (on a busy machine its
    // first run can come many milliseconds later): descendants whose environment names this
    // recording carry it too.
    if !full {
        return carriers;
    }
    let wanted = format!("MEMSCAPE_RECORD_DIR={marker}\0");
    for pid in descendants(me) {
        if carriers.contains(&pid) || reaped.contains_key(&pid) {
            continue;
        }
        if proc_state(pid).is_some_and(|s| s.0 != 'Z')
            && std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.windows(wanted.len()).any(|w| w == wanted.as_bytes()))
            && std::fs::read_to_string(format!("/proc/{pid}/maps"))
                .is_ok_and(|maps| maps.contains(crate::SHIM_NAME))
        {
            carriers.push(pid);
        }
    }
    carriers
}

/// Every descendant of `pid` (through `/proc/PID/task/TID/children`).
fn descendants(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        for task in std::fs::read_dir(format!("/proc/{p}/task"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for child in children
                .split_whitespace()
                .filter_map(|c| c.parse::<u32>().ok())
            {
                if !out.contains(&child) && out.len() < 100_000 {
                    out.push(child);
                    todo.push(child);
                }
            }
        }
    }
    out
}

/// (state letter, parent pid, process group) from `/proc/PID/stat`.
fn proc_state(pid: u32) -> Option<(char, u32, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces or parentheses itself.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, ppid, pgrp))
}
