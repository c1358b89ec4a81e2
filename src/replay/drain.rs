//! Bounds of the replay window's waits.
//!
//! The queue drain and the agent-wide drain share a short bound (`KREPLAY_DRAIN_DECLINE_MS`,
//! default 1000): on expiry the window declines the replay and the dispatch runs once, normally.
//! Only a pass that never completes hits the fatal bound (`KREPLAY_DRAIN_TIMEOUT_MS`, default
//! 60000, read by [`crate::settings`]): a message naming the dispatch, the agent and the
//! queue, then an abort. Teardown waits for the tool's completion handlers with the fatal bound
//! and warns on expiry.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_until_sees_progress_and_expires() {
        let mut n = 0;
        assert!(poll_until(
            Duration::from_secs(24 * 3600),
            Duration::from_millis(1),
            || {
                n += 1;
                n == 3
            }
        ));
        assert_eq!(n, 3);
        assert!(!poll_until(
            Duration::from_millis(5),
            Duration::from_millis(1),
            || false
        ));
    }
}
