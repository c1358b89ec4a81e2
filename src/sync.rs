//! Every lock and atomic the tool uses, in one place.
//!
//! The gate and inventory protocols only use the names re-exported here, so they can be swapped
//! for model-checking implementations without touching the protocol code.

pub use parking_lot::{ArcRwLockReadGuard, ArcRwLockWriteGuard, Condvar, Mutex, RawRwLock, RwLock};
pub use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
pub use std::sync::{Arc, LazyLock, OnceLock};

/// A flag that lets an action happen once per process (warn-once messages).
#[derive(Debug, Default)]
pub struct OnceFlag(AtomicBool);

impl OnceFlag {
    /// A flag that has not fired yet.
    pub const fn new() -> Self {
        Self(AtomicBool::new(false))
    }

    /// True exactly once: for the first caller.
    pub fn first(&self) -> bool {
        !self.0.load(Ordering::Relaxed) && !self.0.swap(true, Ordering::AcqRel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn once_flag_fires_once_across_threads() {
        let flag = Arc::new(OnceFlag::new());
        let fired: u32 = (0..8)
            .map(|_| {
                let f = flag.clone();
                std::thread::spawn(move || (0..100).filter(|_| f.first()).count() as u32)
            })
            .map(|h| h.join().unwrap())
            .sum();
        assert_eq!(fired, 1);
    }
}
