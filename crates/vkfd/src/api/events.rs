//! Events: creation, set/reset/query, single and multiple waits.

use super::ensure_open;
use crate::boundary::{guard, input, out, slice};
use crate::error::Error;
use crate::ffi::*;

/// Creates an event; `*event` receives it.
///
/// # Safety
///
/// `desc` is NULL or readable; `event` is NULL or writable.
pub unsafe extern "C" fn hsaKmtCreateEvent(
    desc: *mut HsaEventDescriptor,
    manual_reset: bool,
    is_signaled: bool,
    event: *mut *mut HsaEvent,
) -> HSAKMT_STATUS {
    guard("hsaKmtCreateEvent", || {
        ensure_open()?;
        // SAFETY: the caller's promise.
        let d = unsafe { input(desc, "event descriptor") }?;
        // SAFETY: the caller's promise.
        let slot = unsafe { out(event, "event out-pointer") }?;
        let kind = d.EventType;
        if kind >= HSA_EVENTTYPE_MAXID {
            return Err(Error::InvalidParameter("event type"));
        }
        *slot = crate::events::create(kind, manual_reset, is_signaled)?;
        Ok(())
    })
}

/// Destroys an event.
pub extern "C" fn hsaKmtDestroyEvent(event: *mut HsaEvent) -> HSAKMT_STATUS {
    guard("hsaKmtDestroyEvent", || crate::events::destroy(event))
}

/// Sets an event (and wakes the command processors).
pub extern "C" fn hsaKmtSetEvent(event: *mut HsaEvent) -> HSAKMT_STATUS {
    guard("hsaKmtSetEvent", || {
        crate::events::set(event)?;
        crate::cp::wake_all();
        Ok(())
    })
}

/// Resets an event.
pub extern "C" fn hsaKmtResetEvent(event: *mut HsaEvent) -> HSAKMT_STATUS {
    guard("hsaKmtResetEvent", || crate::events::reset(event))
}

/// `SUCCESS` when the event is set, `WAIT_TIMEOUT` when not.
pub extern "C" fn hsaKmtQueryEventState(event: *mut HsaEvent) -> HSAKMT_STATUS {
    guard("hsaKmtQueryEventState", || {
        if crate::events::query(event)? {
            Ok(())
        } else {
            Err(Error::Timeout)
        }
    })
}

/// Waits for one event.
pub extern "C" fn hsaKmtWaitOnEvent(
    event: *mut HsaEvent,
    milliseconds: HSAuint32,
) -> HSAKMT_STATUS {
    guard("hsaKmtWaitOnEvent", || {
        crate::cp::wake_all();
        crate::events::wait(&[event.cast_const()], true, milliseconds)
    })
}

/// Waits for all or any of `n` events.
///
/// # Safety
///
/// `events` is NULL or readable for `n` elements.
pub unsafe extern "C" fn hsaKmtWaitOnMultipleEvents(
    events: *mut *mut HsaEvent,
    n: HSAuint32,
    wait_on_all: bool,
    milliseconds: HSAuint32,
) -> HSAKMT_STATUS {
    guard("hsaKmtWaitOnMultipleEvents", || {
        crate::cp::wake_all();
        // SAFETY: the caller's promise.
        let list = unsafe { slice(events.cast_const(), n as usize, "event list") }?;
        let list: Vec<*const HsaEvent> = list.iter().map(|e| e.cast_const()).collect();
        crate::events::wait(&list, wait_on_all, milliseconds)
    })
}
