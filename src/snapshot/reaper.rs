//! Returns idle snapshot buffers to the system: one background thread, running only while
//! idle buffers exist, frees those idle for [`super::IDLE_RETURN`].

use crate::sync::{AtomicBool, Ordering};
use std::time::Duration;

static RUNNING: AtomicBool = AtomicBool::new(false);
static CLOSED: AtomicBool = AtomicBool::new(false);

fn idle_bytes() -> u64 {
    super::host::idle_host_bytes() + super::device::idle_device_bytes()
}

fn run() {
    loop {
        std::thread::sleep(Duration::from_millis(500));
        if CLOSED.load(Ordering::Acquire) {
            RUNNING.store(false, Ordering::Release);
            return;
        }
        super::release_idle_host_buffers(super::IDLE_RETURN);
        super::release_idle_device_buffers(super::IDLE_RETURN);
        if idle_bytes() == 0 {
            RUNNING.store(false, Ordering::Release);
            // A buffer given back since the check saw the thread running: keep going for it.
            if idle_bytes() == 0 || RUNNING.swap(true, Ordering::AcqRel) {
                return;
            }
        }
    }
}

/// Starts the thread unless it runs (or the runtime is shutting down).
pub(super) fn ensure_running() {
    if CLOSED.load(Ordering::Acquire) || RUNNING.swap(true, Ordering::AcqRel) {
        return;
    }
    if std::thread::Builder::new()
        .name("kreplay-idle".into())
        .spawn(run)
        .is_err()
    {
        RUNNING.store(false, Ordering::Release);
    }
}

/// No more background frees.
pub(super) fn close() {
    CLOSED.store(true, Ordering::Release);
}

/// Background frees allowed again (a new runtime instance started).
pub(super) fn reopen() {
    CLOSED.store(false, Ordering::Release);
}
