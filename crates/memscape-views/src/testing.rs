//! Helpers for tests of the views' background workers (this crate's, its integration tests' and
//! the binary's). Not part of the views' API.

use std::time::{Duration, Instant};

/// Polls `f` every few milliseconds until it gives a value; panics naming `what` after
/// `timeout` (workers run beside other tests on a loaded 2-core machine: be generous).
pub fn wait_for<T>(what: &str, timeout: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}
