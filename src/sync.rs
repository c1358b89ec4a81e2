//! Every lock and atomic the tool uses, in one place.
//!
//! The gate and inventory protocols only use the names re-exported here, so they can be swapped
//! for model-checking implementations without touching the protocol code.

pub use parking_lot::{Condvar, Mutex, RwLock, RwLockReadGuard};
pub use std::sync::atomic::{
    AtomicBool, AtomicPtr, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence,
};
pub use std::sync::{Arc, LazyLock, OnceLock};

/// The replay-gate protocol's per-agent lock and in-flight counter: `parking_lot` and `std`
/// normally, `loom` under `--cfg loom` (the model test `tests/loom_gate.rs`). Loom values may
/// only be created inside a loom model, so process-wide statics never use these names.
pub mod protocol {
    #[cfg(loom)]
    pub use loom::sync::atomic::AtomicU64;
    #[cfg(not(loom))]
    pub use std::sync::atomic::AtomicU64;

    /// An agent's reader/writer lock.
    #[cfg(not(loom))]
    pub type GateLock = std::sync::Arc<parking_lot::RwLock<()>>;
    /// Held by an ordinary submit (reader side).
    #[cfg(not(loom))]
    pub type ReadGuard = parking_lot::ArcRwLockReadGuard<parking_lot::RawRwLock, ()>;
    /// Held by a replay window (writer side).
    #[cfg(not(loom))]
    pub type WriteGuard = parking_lot::ArcRwLockWriteGuard<parking_lot::RawRwLock, ()>;

    /// A new, unlocked agent lock.
    #[cfg(not(loom))]
    pub fn new_gate_lock() -> GateLock {
        GateLock::default()
    }

    /// Takes the reader side; the guard keeps the lock alive.
    #[cfg(not(loom))]
    pub fn read(lock: &GateLock) -> ReadGuard {
        lock.read_arc()
    }

    /// Takes the writer side; the guard keeps the lock alive.
    #[cfg(not(loom))]
    pub fn write(lock: &GateLock) -> WriteGuard {
        lock.write_arc()
    }

    /// Takes the reader side, giving up after `bound`.
    #[cfg(not(loom))]
    pub fn read_for(lock: &GateLock, bound: std::time::Duration) -> Option<ReadGuard> {
        lock.try_read_arc_for(bound)
    }

    /// Takes the writer side, giving up after `bound`.
    #[cfg(not(loom))]
    pub fn write_for(lock: &GateLock, bound: std::time::Duration) -> Option<WriteGuard> {
        lock.try_write_arc_for(bound)
    }

    /// An agent's reader/writer lock.
    #[cfg(loom)]
    pub type GateLock = loom::sync::Arc<loom::sync::RwLock<()>>;

    /// Held by an ordinary submit (reader side); keeps the lock alive.
    #[cfg(loom)]
    pub struct ReadGuard {
        // Declared first: dropped before the lock it borrows.
        _guard: loom::sync::RwLockReadGuard<'static, ()>,
        _lock: GateLock,
    }

    /// Held by a replay window (writer side); keeps the lock alive.
    #[cfg(loom)]
    pub struct WriteGuard {
        // Declared first: dropped before the lock it borrows.
        _guard: loom::sync::RwLockWriteGuard<'static, ()>,
        _lock: GateLock,
    }

    /// A new, unlocked agent lock.
    #[cfg(loom)]
    pub fn new_gate_lock() -> GateLock {
        GateLock::new(loom::sync::RwLock::new(()))
    }

    /// Takes the reader side; the guard keeps the lock alive.
    #[cfg(loom)]
    pub fn read(lock: &GateLock) -> ReadGuard {
        let lock = lock.clone();
        let guard = lock.read().unwrap_or_else(|e| e.into_inner());
        // SAFETY: the guard borrows the lock inside the `Arc` that the returned struct owns; the
        // lock does not move (it is behind the `Arc`) and is dropped after the guard.
        let guard = unsafe {
            std::mem::transmute::<
                loom::sync::RwLockReadGuard<'_, ()>,
                loom::sync::RwLockReadGuard<'static, ()>,
            >(guard)
        };
        ReadGuard {
            _guard: guard,
            _lock: lock,
        }
    }

    /// Takes the writer side; the guard keeps the lock alive.
    #[cfg(loom)]
    pub fn write(lock: &GateLock) -> WriteGuard {
        let lock = lock.clone();
        let guard = lock.write().unwrap_or_else(|e| e.into_inner());
        // SAFETY: as in `read`.
        let guard = unsafe {
            std::mem::transmute::<
                loom::sync::RwLockWriteGuard<'_, ()>,
                loom::sync::RwLockWriteGuard<'static, ()>,
            >(guard)
        };
        WriteGuard {
            _guard: guard,
            _lock: lock,
        }
    }
    /// Takes the reader side (loom models have no clock: waits without a bound).
    #[cfg(loom)]
    pub fn read_for(lock: &GateLock, _bound: std::time::Duration) -> Option<ReadGuard> {
        Some(read(lock))
    }

    /// Takes the writer side (loom models have no clock: waits without a bound).
    #[cfg(loom)]
    pub fn write_for(lock: &GateLock, _bound: std::time::Duration) -> Option<WriteGuard> {
        Some(write(lock))
    }
}

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
