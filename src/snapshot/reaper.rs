//! Returns idle snapshot buffers to the system: one background thread, running only while
//! idle buffers exist, calls the sweep it is given every half second. The sweep (the snapshot's
//! buffer pools, see `snapshot::sweep_idle_buffers`) frees what has been idle long enough and
//! says how many idle bytes remain; the thread stops when none remain. The reaper knows nothing
//! of the pools, so the pools can start it without a loop between them.

use crate::sync::{AtomicBool, Ordering};
use std::time::Duration;

static RUNNING: AtomicBool = AtomicBool::new(false);
static CLOSED: AtomicBool = AtomicBool::new(false);

/// One sweep: frees the buffers idle long enough, returns the idle bytes that remain.
pub(super) type Sweep = fn() -> u64;

fn run(sweep: Sweep) {
    loop {
        std::thread::sleep(Duration::from_millis(500));
        if CLOSED.load(Ordering::Acquire) {
            RUNNING.store(false, Ordering::Release);
            return;
        }
        if sweep() == 0 {
            RUNNING.store(false, Ordering::Release);
            // A buffer given back since the check saw the thread running: keep going for it.
            if sweep() == 0 || RUNNING.swap(true, Ordering::AcqRel) {
                return;
            }
        }
    }
}

/// Starts the thread, sweeping with `sweep`, unless it runs (or the runtime is shutting down).
pub(super) fn ensure_running(sweep: Sweep) {
    if CLOSED.load(Ordering::Acquire) || RUNNING.swap(true, Ordering::AcqRel) {
        return;
    }
    if std::thread::Builder::new()
        .name("kreplay-idle".into())
        .spawn(move || run(sweep))
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
