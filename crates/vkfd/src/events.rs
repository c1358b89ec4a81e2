//! Events: the driver's signalled flags that ROCR's interrupt signals sleep on.
//!
//! Each event owns a mailbox slot (`EventData.HWData2`): ROCR copies its address into the
//! `amd_signal_t` it pairs with the event, and the command processor writes the event id there
//! before it "raises the interrupt" ([`interrupt`]), which sets the event. Auto-reset events are
//! consumed by the wait that sees them; manual-reset ones stay set until reset. Memory events
//! (`HSA_EVENTTYPE_MEMORY`) carry the fault data of a GPU page fault ([`memory_fault`]).
//!
//! One mutex and one condition variable serve all events. A wait sleeps at most
//! [`MAX_SLEEP`] at a time and then reports a timeout: ROCR re-checks its signal's value after
//! every wait, so this only bounds how late a store the thunk never saw (a device-side signal
//! store) is noticed.

use crate::error::{Error, Result};
use crate::ffi::*;
use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Longest sleep of one wait before it reports a timeout.
pub(crate) const MAX_SLEEP: Duration = Duration::from_millis(20);
/// Mailbox slots (and the largest event id + 1).
const SLOTS: usize = 4096;

struct Event {
    /// The `HsaEvent` handed to the runtime (owned here).
    public: *mut HsaEvent,
    manual_reset: bool,
    signalled: bool,
    kind: u32,
}

// SAFETY: `public` is owned by the table and only touched under its lock.
unsafe impl Send for Event {}

#[derive(Default)]
struct Table {
    events: HashMap<u32, Event>,
    next_id: u32,
}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);
static CHANGED: Condvar = Condvar::new();

/// The mailbox slots, one per event id (host memory the command processor writes).
fn mailbox() -> &'static [AtomicU64] {
    static SLOTS_MEM: std::sync::OnceLock<Box<[AtomicU64]>> = std::sync::OnceLock::new();
    SLOTS_MEM.get_or_init(|| (0..SLOTS).map(|_| AtomicU64::new(0)).collect())
}

/// Whether `address..+8` is a mailbox slot.
pub(crate) fn is_mailbox(address: u64) -> bool {
    let base = mailbox().as_ptr() as u64;
    address >= base && address < base + (SLOTS as u64) * 8 && (address - base).is_multiple_of(8)
}

/// Whether `address..+len` lies inside the mailbox slots: memory a kernel may write, as the
/// GPU writes an event's mailbox when device code signals an interrupt signal (the hostcall
/// doorbell of device `printf`). The slots live as long as the process.
pub(crate) fn mailbox_contains(address: u64, len: u64) -> bool {
    let base = mailbox().as_ptr() as u64;
    let end = base + (SLOTS as u64) * 8;
    address >= base && address.checked_add(len).is_some_and(|e| e <= end)
}

/// Creates an event and returns the `HsaEvent` the runtime keeps.
pub(crate) fn create(kind: u32, manual_reset: bool, signalled: bool) -> Result<*mut HsaEvent> {
    let mut guard = TABLE.lock();
    let t = guard.get_or_insert_with(Table::default);
    let id = (0..SLOTS as u32)
        .map(|i| (t.next_id + i) % SLOTS as u32)
        .find(|id| *id != 0 && !t.events.contains_key(id))
        .ok_or_else(|| Error::NoMemory(format!("all {SLOTS} events are in use")))?;
    t.next_id = id + 1;
    let mut e = Box::new(HsaEvent {
        EventId: id,
        ..Default::default()
    });
    e.EventData.EventType = kind;
    e.EventData.HWData1 = u64::from(id);
    e.EventData.HWData2 = (&mailbox()[id as usize]) as *const AtomicU64 as u64;
    e.EventData.HWData3 = id;
    let public = Box::into_raw(e);
    t.events.insert(
        id,
        Event {
            public,
            manual_reset,
            signalled,
            kind,
        },
    );
    Ok(public)
}

/// The id of an event the runtime hands back.
fn id_of(event: *const HsaEvent) -> Result<u32> {
    if event.is_null() {
        return Err(Error::InvalidParameter("NULL event"));
    }
    // SAFETY: a non-NULL `HsaEvent` the runtime got from `create`; checked against the table
    // by the caller.
    Ok(unsafe { (*event).EventId })
}

fn with_event<R>(event: *const HsaEvent, f: impl FnOnce(&mut Event) -> R) -> Result<R> {
    let id = id_of(event)?;
    let mut guard = TABLE.lock();
    match guard.as_mut().and_then(|t| t.events.get_mut(&id)) {
        Some(e) if std::ptr::eq(e.public, event) => Ok(f(e)),
        _ => Err(Error::InvalidHandle(format!("event {id}"))),
    }
}

/// Destroys an event.
pub(crate) fn destroy(event: *mut HsaEvent) -> Result<()> {
    let id = id_of(event)?;
    let mut guard = TABLE.lock();
    let t = guard
        .as_mut()
        .ok_or(Error::InvalidHandle(format!("event {id}")))?;
    match t.events.get(&id) {
        Some(e) if std::ptr::eq(e.public, event) => {}
        _ => return Err(Error::InvalidHandle(format!("event {id}"))),
    }
    let e = t.events.remove(&id).expect("checked above");
    // SAFETY: allocated by `create` with Box::into_raw and removed from the table.
    drop(unsafe { Box::from_raw(e.public) });
    Ok(())
}

/// Sets an event (`hsaKmtSetEvent`).
pub(crate) fn set(event: *const HsaEvent) -> Result<()> {
    with_event(event, |e| e.signalled = true)?;
    CHANGED.notify_all();
    Ok(())
}

/// Resets an event.
pub(crate) fn reset(event: *const HsaEvent) -> Result<()> {
    with_event(event, |e| e.signalled = false)
}

/// Whether an event is set.
pub(crate) fn query(event: *const HsaEvent) -> Result<bool> {
    with_event(event, |e| e.signalled)
}

/// The command processor's interrupt for event `id` (from a completion's mailbox).
pub(crate) fn interrupt(id: u32) {
    if let Some(e) = TABLE.lock().as_mut().and_then(|t| t.events.get_mut(&id)) {
        e.signalled = true;
    }
    CHANGED.notify_all();
}

/// Raises a GPU page fault: every memory event gets the fault data and is set.
pub(crate) fn memory_fault(node: u32, address: u64) -> bool {
    let mut any = false;
    if let Some(t) = TABLE.lock().as_mut() {
        for e in t
            .events
            .values_mut()
            .filter(|e| e.kind == HSA_EVENTTYPE_MEMORY)
        {
            // SAFETY: the event's `HsaEvent`, owned by the table, under its lock.
            let data = unsafe { &mut (*e.public).EventData };
            let mut fault = HsaMemoryAccessFault {
                NodeId: node,
                VirtualAddress: address,
                Flags: HSA_EVENTID_MEMORY_FATAL_PROCESS,
                ..Default::default()
            };
            fault.Failure.set_NotPresent(1);
            data.EventData.MemoryAccessFault = fault;
            e.signalled = true;
            any = true;
        }
    }
    CHANGED.notify_all();
    any
}

/// Waits until all (or any) of the events are set, consuming auto-reset ones; `timeout_ms`
/// `u32::MAX` is infinite. Returns early with [`Error::Timeout`] after [`MAX_SLEEP`].
pub(crate) fn wait(events: &[*const HsaEvent], all: bool, timeout_ms: u32) -> Result<()> {
    let ids: Vec<u32> = events.iter().map(|e| id_of(*e)).collect::<Result<_>>()?;
    let limit = if timeout_ms == u32::MAX {
        MAX_SLEEP
    } else {
        Duration::from_millis(u64::from(timeout_ms)).min(MAX_SLEEP)
    };
    let deadline = Instant::now() + limit;
    let mut guard = TABLE.lock();
    loop {
        let t = guard.get_or_insert_with(Table::default);
        let set: Vec<bool> = ids
            .iter()
            .map(|id| t.events.get(id).is_some_and(|e| e.signalled))
            .collect();
        if ids.iter().any(|id| !t.events.contains_key(id)) {
            return Err(Error::InvalidHandle("an event of the wait".into()));
        }
        let done = if all {
            set.iter().all(|s| *s)
        } else {
            set.iter().any(|s| *s)
        };
        if done {
            for (id, s) in ids.iter().zip(&set) {
                if let Some(e) = t.events.get_mut(id).filter(|e| *s && !e.manual_reset) {
                    e.signalled = false;
                }
            }
            return Ok(());
        }
        if CHANGED.wait_until(&mut guard, deadline).timed_out() {
            return Err(Error::Timeout);
        }
    }
}

/// Destroys every event (the device is closed).
pub(crate) fn clear() {
    if let Some(t) = TABLE.lock().take() {
        for e in t.events.into_values() {
            // SAFETY: allocated by `create`; the table is gone.
            drop(unsafe { Box::from_raw(e.public) });
        }
    }
}

/// Writes `id` to a mailbox and raises its interrupt, as a completion does.
pub(crate) fn post(mailbox_address: u64, id: u32) {
    if is_mailbox(mailbox_address) {
        let base = mailbox().as_ptr() as u64;
        mailbox()[((mailbox_address - base) / 8) as usize].store(u64::from(id), Ordering::Release);
    } else if crate::vm::contains(mailbox_address, 8) {
        // SAFETY: an aligned word of thunk memory.
        unsafe { AtomicU64::from_ptr(mailbox_address as *mut u64) }
            .store(u64::from(id), Ordering::Release);
    }
    interrupt(id);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(manual: bool) -> *mut HsaEvent {
        create(HSA_EVENTTYPE_SIGNAL, manual, false).unwrap()
    }

    #[test]
    fn auto_reset_events_are_consumed_by_the_wait_that_sees_them() {
        let e = event(false);
        assert!(matches!(wait(&[e], true, 0), Err(Error::Timeout)));
        set(e).unwrap();
        assert!(query(e).unwrap());
        wait(&[e], true, 1000).unwrap();
        assert!(!query(e).unwrap(), "consumed");
        assert!(matches!(wait(&[e], true, 1), Err(Error::Timeout)));
        destroy(e).unwrap();
        assert!(matches!(query(e), Err(Error::InvalidHandle(_))));
    }

    #[test]
    fn manual_reset_events_stay_set_until_reset() {
        let e = event(true);
        set(e).unwrap();
        wait(&[e], true, 0).unwrap();
        wait(&[e], true, 0).unwrap();
        reset(e).unwrap();
        assert!(matches!(wait(&[e], true, 0), Err(Error::Timeout)));
        destroy(e).unwrap();
    }

    #[test]
    fn waits_on_several_events_for_any_or_all() {
        let (a, b) = (event(false), event(false));
        set(b).unwrap();
        wait(&[a, b], false, 1000).unwrap();
        assert!(!query(b).unwrap(), "the set one was consumed");
        set(a).unwrap();
        assert!(matches!(wait(&[a, b], true, 5), Err(Error::Timeout)));
        set(b).unwrap();
        wait(&[a, b], true, 1000).unwrap();
        destroy(a).unwrap();
        destroy(b).unwrap();
    }

    #[test]
    fn an_interrupt_through_the_mailbox_wakes_a_waiter() {
        let e = event(false);
        // SAFETY: an event of the table.
        let (id, mailbox) = unsafe { ((*e).EventId, (*e).EventData.HWData2) };
        assert!(is_mailbox(mailbox));
        let address = e as usize;
        let waiter = std::thread::spawn(move || {
            let e = address as *const HsaEvent;
            // A wait sleeps at most `MAX_SLEEP`: wait again until the interrupt arrives.
            while wait(&[e], true, u32::MAX).is_err() {}
        });
        std::thread::sleep(Duration::from_millis(5));
        post(mailbox, id);
        waiter.join().expect("the waiter saw the interrupt");
        // SAFETY: the mailbox slot is host memory of the table.
        assert_eq!(unsafe { *(mailbox as *const u64) }, u64::from(id));
        destroy(e).unwrap();
    }

    #[test]
    fn a_page_fault_fills_the_memory_events() {
        let m = create(HSA_EVENTTYPE_MEMORY, true, false).unwrap();
        assert!(memory_fault(1, 0x100));
        wait(&[m], true, 0).unwrap();
        // SAFETY: the event's public data, read after the fault was recorded.
        let f = unsafe { (*m).EventData.EventData.MemoryAccessFault };
        assert_eq!((f.NodeId, f.VirtualAddress), (1, 0x100));
        destroy(m).unwrap();
    }
}
