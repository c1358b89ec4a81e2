//! Queue errors seen by the tool: the application's queue error callback is wrapped, so that a
//! replay window waiting for a pass on a queue that failed ends at once (instead of waiting for
//! a completion that never comes) and the application's callback still runs, with its own data.
//! The tool's own queues (the device-side chunk hasher) get the same callback, without an
//! application callback behind it.

use crate::diagnostics::panic_boundary;
use crate::sync::{AtomicPtr, AtomicU32, Ordering};
use hsa_abi::ffi::{hsa_queue_t, hsa_status_t};
use hsa_abi::modern::hsa_queue_error_callback as ErrorCallback;
use std::ffi::c_void;

/// The error state of one queue and the application's callback.
#[derive(Debug)]
pub struct QueueFault {
    /// First error status reported on the queue; 0 while none.
    status: AtomicU32,
    /// The application's queue (what its callback is given).
    queue: AtomicPtr<hsa_queue_t>,
    callback: ErrorCallback,
    data: usize,
}

impl QueueFault {
    /// The state of a queue whose application passed `callback` with `data`.
    pub fn new(callback: ErrorCallback, data: *mut c_void) -> Self {
        Self {
            status: AtomicU32::new(0),
            queue: AtomicPtr::new(std::ptr::null_mut()),
            callback,
            data: data as usize,
        }
    }

    /// Notes the application's queue, once created.
    pub fn created(&self, queue: *mut hsa_queue_t) {
        self.queue.store(queue, Ordering::Release);
    }

    /// The first error reported on the queue, if any.
    pub fn status(&self) -> Option<hsa_status_t> {
        match self.status.load(Ordering::Acquire) {
            0 => None,
            s => Some(s),
        }
    }

    /// Records `status` (the first one is kept).
    pub fn report(&self, status: hsa_status_t) {
        let _ = self
            .status
            .compare_exchange(0, status.max(1), Ordering::AcqRel, Ordering::Acquire);
    }
}

/// The callback the tool gives the runtime for a queue: records the error, then calls the
/// application's callback with its own data and its own queue.
///
/// # Safety
/// `data` is a `QueueFault` the tool handed to the runtime with the queue, alive until the
/// queue is destroyed.
pub unsafe extern "C" fn on_queue_error(
    status: hsa_status_t,
    queue: *mut hsa_queue_t,
    data: *mut c_void,
) {
    if data.is_null() {
        return;
    }
    // SAFETY: caller contract.
    let fault = unsafe { &*data.cast::<QueueFault>() };
    panic_boundary(
        "the recording of a queue error",
        || {
            fault.report(status);
            tracing::debug!("queue error {status:#x} reported on queue {queue:p}");
        },
        || (),
    );
    let Some(callback) = fault.callback else {
        return;
    };
    let mine = fault.queue.load(Ordering::Acquire);
    let theirs = if mine.is_null() { queue } else { mine };
    // SAFETY: the application's callback with the data it gave for this queue.
    unsafe { callback(status, theirs, fault.data as *mut c_void) };
}

#[cfg(test)]
mod tests {
    use super::*;

    static mut SEEN: (u32, usize, usize) = (0, 0, 0);

    unsafe extern "C" fn app(status: hsa_status_t, q: *mut hsa_queue_t, data: *mut c_void) {
        // SAFETY: single-threaded test.
        unsafe { SEEN = (status, q as usize, data as usize) };
    }

    #[test]
    fn the_first_error_is_kept_and_the_applications_callback_gets_its_queue_and_data() {
        let f = QueueFault::new(Some(app), 0x77 as *mut c_void);
        assert_eq!(f.status(), None);
        f.created(0x1000 as *mut hsa_queue_t);
        // SAFETY: `f` outlives the calls.
        unsafe { on_queue_error(0x100d, 0x2000 as *mut _, (&raw const f).cast_mut().cast()) };
        // SAFETY: as above.
        unsafe { on_queue_error(0x1016, 0x2000 as *mut _, (&raw const f).cast_mut().cast()) };
        assert_eq!(f.status(), Some(0x100d));
        // SAFETY: single-threaded test; the callbacks returned.
        assert_eq!(unsafe { SEEN }, (0x1016, 0x1000, 0x77));
    }
}
