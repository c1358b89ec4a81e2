//! Bounded waits of the replay window: the per-pass handler drain and the agent-wide drain.
//!
//! Each wait has a bound (`KREPLAY_DRAIN_TIMEOUT_MS`, default 60000, read by [`crate::client::config`]) and, on expiry, a fatal
//! message naming the agent, the queue and what is still in flight, then an abort.

use crate::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Polls `done` every `interval` until it is true or `bound` passed. Returns false on expiry.
/// `done` is called without any lock held by this function.
pub fn poll_until(bound: Duration, interval: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + bound;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return done();
        }
        std::thread::sleep(interval);
    }
}

/// One pass's completion, set by the runtime's async handler and waited on by the replaying
/// thread.
#[derive(Debug, Default)]
pub struct Completion {
    state: Mutex<Option<(u64, u64)>>,
    cv: Condvar,
}

impl Completion {
    /// Not completed.
    pub fn new() -> Self {
        Self::default()
    }

    /// Marks completion with the pass's device times (called by the handler).
    pub fn complete(&self, times: (u64, u64)) {
        *self.state.lock() = Some(times);
        self.cv.notify_all();
    }

    /// Waits up to `bound`; `None` on expiry.
    pub fn wait(&self, bound: Duration) -> Option<(u64, u64)> {
        let deadline = Instant::now() + bound;
        let mut s = self.state.lock();
        while s.is_none() {
            if self.cv.wait_until(&mut s, deadline).timed_out() {
                break;
            }
        }
        *s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::Arc;

    #[test]
    fn poll_until_sees_progress_and_expires() {
        let mut n = 0;
        assert!(poll_until(Duration::from_secs(5), Duration::from_millis(1), || {
            n += 1;
            n == 3
        }));
        assert_eq!(n, 3);
        assert!(!poll_until(Duration::from_millis(5), Duration::from_millis(1), || false));
    }

    #[test]
    fn completion_wakes_the_waiter_and_expires_when_stuck() {
        let c = Arc::new(Completion::new());
        let c2 = c.clone();
        let t = std::thread::spawn(move || c2.complete((5, 9)));
        assert_eq!(c.wait(Duration::from_secs(30)), Some((5, 9)));
        t.join().unwrap();
        assert_eq!(Completion::new().wait(Duration::from_millis(5)), None);
    }
}
