//! GPU faults turned into messages: wgpu's default handler for an error outside any error
//! scope panics (`wgpu error: …`), and a lost device makes every later call fail. This module
//! installs a device-lost callback and an uncaptured-error handler that record instead
//! ([`GpuHealth::watch`]), and runs each pane's uploads inside out-of-memory and validation
//! error scopes ([`scoped`]): a pane whose picture does not fit the GPU shows why (and can be
//! retried) while the other panes keep drawing.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What the GPU refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuFault {
    OutOfMemory(String),
    Validation(String),
    Internal(String),
}

impl GpuFault {
    fn of(e: &wgpu::Error) -> Self {
        match e {
            wgpu::Error::OutOfMemory { .. } => GpuFault::OutOfMemory(e.to_string()),
            wgpu::Error::Validation { description, .. } => {
                GpuFault::Validation(description.trim().to_owned())
            }
            wgpu::Error::Internal { description, .. } => {
                GpuFault::Internal(description.trim().to_owned())
            }
        }
    }

    /// One sentence for the user: what happened and what to try.
    pub fn message(&self) -> String {
        match self {
            GpuFault::OutOfMemory(_) => "the GPU ran out of memory for this view: close other \
                views, make the window smaller, or zoom out so that fewer blocks are drawn"
                .to_owned(),
            GpuFault::Validation(d) => format!(
                "the GPU refused this view's data ({}): it may exceed the device's limits",
                first_line(d)
            ),
            GpuFault::Internal(d) => format!("the GPU driver failed ({})", first_line(d)),
        }
    }
}

fn first_line(s: &str) -> &str {
    s.lines().find(|l| !l.trim().is_empty()).unwrap_or(s).trim()
}

/// Runs `f` (GPU work on `device`, on this thread) inside out-of-memory and validation error
/// scopes; returns its result and the first error the scopes caught.
pub fn scoped<T>(device: &wgpu::Device, f: impl FnOnce() -> T) -> (T, Option<GpuFault>) {
    let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let internal = device.push_error_scope(wgpu::ErrorFilter::Internal);
    let out = f();
    // Popped in reverse order. On native backends the futures are ready at once.
    let errors = [internal.pop(), validation.pop(), oom.pop()].map(ready);
    let fault = errors.iter().flatten().next().map(GpuFault::of);
    (out, fault)
}

/// The value of a future that is ready at once (wgpu's error scopes on native backends),
/// None when it is not.
fn ready<F: std::future::Future<Output = Option<wgpu::Error>>>(f: F) -> Option<wgpu::Error> {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match f.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(e) => e,
        std::task::Poll::Pending => None,
    }
}

/// How many uncaptured errors are kept (the latest).
const KEPT_ERRORS: usize = 8;

/// What went wrong with one device, shared by its callbacks, the GPU registry and the UI.
#[derive(Default)]
pub struct GpuHealth {
    lost: Mutex<Option<String>>,
    errors: Mutex<Vec<String>>,
    failed_panes: Mutex<HashMap<u64, String>>,
}

impl GpuHealth {
    /// Installs `device`'s device-lost callback and uncaptured-error handler, recording into
    /// the returned value (and the log) instead of panicking.
    pub fn watch(device: &wgpu::Device) -> Arc<Self> {
        let health = Arc::new(Self::default());
        let h = Arc::downgrade(&health);
        device.set_device_lost_callback(move |reason, message| {
            let why = match reason {
                wgpu::DeviceLostReason::Destroyed => "destroyed".to_owned(),
                wgpu::DeviceLostReason::Unknown if message.trim().is_empty() => {
                    "reason unknown".to_owned()
                }
                wgpu::DeviceLostReason::Unknown => first_line(&message).to_owned(),
            };
            tracing::error!("the GPU device was lost: {why}");
            if let Some(h) = h.upgrade()
                && let Ok(mut lost) = h.lost.lock()
            {
                lost.get_or_insert(why);
            }
        });
        let h = Arc::downgrade(&health);
        device.on_uncaptured_error(Arc::new(move |e| {
            let text = GpuFault::of(&e).message();
            tracing::error!("wgpu: {e}");
            if let Some(h) = h.upgrade()
                && let Ok(mut errors) = h.errors.lock()
            {
                if errors.len() == KEPT_ERRORS {
                    errors.remove(0);
                }
                errors.push(text);
            }
        }));
        health
    }

    /// Why the device was lost, once it was.
    pub fn lost(&self) -> Option<String> {
        self.lost.lock().ok().and_then(|l| l.clone())
    }

    /// Errors no scope caught, latest last (taken: each is reported once).
    pub fn take_errors(&self) -> Vec<String> {
        self.errors
            .lock()
            .map(|mut e| std::mem::take(&mut *e))
            .unwrap_or_default()
    }

    /// Why pane `key` does not draw, if it failed.
    pub fn pane_failure(&self, key: u64) -> Option<String> {
        self.failed_panes
            .lock()
            .ok()
            .and_then(|f| f.get(&key).cloned())
    }

    pub fn fail_pane(&self, key: u64, message: String) {
        if let Ok(mut f) = self.failed_panes.lock() {
            f.insert(key, message);
        }
    }

    /// Lets pane `key` try again.
    pub fn retry_pane(&self, key: u64) {
        if let Ok(mut f) = self.failed_panes.lock() {
            f.remove(&key);
        }
    }

    /// The user-facing text for a lost device: what happened and what to do.
    pub fn lost_message(why: &str) -> String {
        format!(
            "the GPU device was lost ({why}): the views cannot draw any more. Your files are not \
             affected: restart memscape; if it happens again, use software rendering \
             (MEMSCAPE_ADAPTER=cpu memscape view …)"
        )
    }
}

/// Where the UI finds the health of egui's device (set by the shell at start).
fn health_id() -> egui::Id {
    egui::Id::unique("memscape-gpu-health")
}

/// Makes `health` reachable from the panes' painting through `ctx`.
pub fn attach(ctx: &egui::Context, health: Arc<GpuHealth>) {
    ctx.data_mut(|d| d.insert_temp(health_id(), health));
}

/// The health attached to `ctx`, if any.
pub fn of(ctx: &egui::Context) -> Option<Arc<GpuHealth>> {
    ctx.data(|d| d.get_temp::<Arc<GpuHealth>>(health_id()))
}
